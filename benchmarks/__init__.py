"""Benchmarks for wheelspec (installed as ``wheelspec.benchmarks``; driven by ``wheelspec bench``).

========================  =====================================================================
module                    what it is
========================  =====================================================================
:mod:`.workloads`         the workloads of docs/BENCHMARKS.md, generated from a seed as numpy arrays:
                          (a) insert, (b) insert then cancel all, (c) insert then fire (1 ms
                          steps, one jump), (d) Kafka's ``TestPurgatoryPerformance`` schedule
:mod:`.heap_timer`        baseline: a plain ``heapq`` timer with lazy cancellation
:mod:`.sched_timer`       baseline: the standard library's ``sched`` on a virtual clock
:mod:`.heap_purgatory`    baseline: a plain-Python purgatory (dict of watch lists + heapq timer)
:mod:`.drivers`           one adapter per implementation that runs a workload's phases
:mod:`.measure`           timing, bytes per pending timer, JIT compile time, machine facts
:mod:`.report`            the rich table, Markdown, JSON and the optional plot
:mod:`.power`             the conformance runner's power against broken timers (docs/POWER.md)
========================  =====================================================================

Nothing here is imported by ``wheelspec`` itself; the command-line entry point is
:mod:`wheelspec.conformance.cli.bench`.
"""
