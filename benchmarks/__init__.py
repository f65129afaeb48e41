"""Benchmarks for wheelspec (installed as ``wheelspec.benchmarks``; driven by ``wheelspec bench``).

========================  =====================================================================
module                    what it is
========================  =====================================================================
:mod:`.workloads`         the workloads of docs/guides/BENCH.md, generated from a seed as numpy arrays:
                          (a) insert, (b) insert then cancel all, (c) insert then fire (1 ms
                          steps, one jump), (d) Kafka's ``TestPurgatoryPerformance`` schedule
:mod:`.heap_timer`        baseline: a plain ``heapq`` timer with lazy cancellation
:mod:`.sched_timer`       baseline: the standard library's ``sched`` on a virtual clock
:mod:`.heap_purgatory`    baseline: a plain-Python purgatory (dict of watch lists + heapq timer)
:mod:`.drivers`           one adapter per implementation that runs a workload's phases
:mod:`.registry`          every implementation by name: those drivers and the native peers
:mod:`.measure`           timing, bytes per pending timer, JIT compile time, machine facts
:mod:`.report`            the rich table, Markdown, JSON and the optional plot
:mod:`.buildcache`        building shipped sources (the native peers, third-party adapters) once
                          into a cache directory
:mod:`.warmup`            workload (e)'s cost against the length of its warm-up (``python -m``)
========================  =====================================================================

These modules import only :mod:`wheelspec.spec`, :mod:`wheelspec.reference`,
:mod:`wheelspec.optimized` and the root package; the command-line entry point that drives them
is :mod:`wheelspec.conformance.cli.bench`.  The conformance runner's own measurements (its power,
its speed) are :mod:`wheelspec.conformance.measure`.
"""
