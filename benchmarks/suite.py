"""One benchmark run: every (workload, size, implementation) cell, measured side by side.

The order is workload, then size (ascending), then implementation, so that the implementations
of one row run one after the other under the same machine load, and so that a cell can be
skipped when the previous size of the same (workload, implementation) predicts that one run of it,
preparation included, would exceed the time budget (cost is taken as linear in n, except
``sched``'s cancel, which is quadratic: its ``cancel`` is ``list.remove`` + ``heapify``).

The ``steady`` workload (e) is a curve: its point is how one operation's cost changes with n, so
its cells are compared *across* sizes.  A slow spell of this shared machine lasting a few seconds
can take all the runs of one cell (they run back to back) and none of its neighbours', which
bends the curve by up to 1.7x (measured: two full runs of one commit, 10^5 at 23.0-24.1 ns/op in
one and 12.1-13.8 in the other, with ``heapq``'s cell slow in the same way).  So after the
workload's regular sweep, ``curve_rounds`` more rounds each give every cheap cell (one run at
most :data:`CURVE_RUN_MAX_S`) one more run, round-robin over sizes and implementations, and the
best of all of a cell's runs is reported as for any cell.  Eight rounds by default: in a full run
at 58db500, with two, the machine's slow spells still took every run of the engine's 10^5 and
10^6 cells (19.0-22.1 and 18.3-23.5 ns/op, against 12.1-14.1 in runs of (e) alone an hour
earlier); a round costs about 20 s.

Native peers (Netty, the JDK's executor and DelayQueue, tokio-util's DelayQueue;
:mod:`.native`) take part in the same sweep, but each of their cells is one subprocess that warms
up, times, samples per-operation latencies and verifies by itself (``_measure_native``); they get
no interleaved rounds, and their real-clock fire runs have a floor (the longest delay) that the
skip prediction does not scale.

A cell's figure is reported only if its run verified (see :mod:`.drivers`).  Ratios compare
implementations measured at the *same* workload and n in this run, never across runs or sizes.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import os
import time
from collections.abc import Callable
from typing import Any, cast

from . import measure
from .drivers import Driver, TimerConfig, Unavailable
from .registry import DRIVERS
from .workloads import PurgatoryParams, TimerWorkload, workload

#: Cost exponent in n of one run, for the skip prediction.
QUADRATIC = {("sched", "cancel"), ("jdk-delayqueue", "cancel")}  # list.remove; PriorityQueue.remove(Object)

#: Workloads whose cells form a curve across sizes, measured with interleaved extra rounds.
INTERLEAVED_WORKLOADS = ("steady",)
#: A curve cell gets the extra rounds only if one run of it, preparation included, took at most
#: this long (the per-operation implementations at 10^6 and ``sched`` take 7-30 s per run).
CURVE_RUN_MAX_S = 5.0


@dataclasses.dataclass
class Options:
    sizes: list[int]
    workloads: list[str]
    impls: list[str]
    caps: dict[str, int]
    repeat: int = 3
    repeat_budget_s: float = 3.0
    budget_s: float = 180.0
    mem_max: int = 100_000
    seed: int = 0
    timer: TimerConfig = dataclasses.field(default_factory=TimerConfig)
    purgatory: PurgatoryParams = dataclasses.field(default_factory=PurgatoryParams)
    jit: bool = True
    curve_rounds: int = 8
    native_build_dir: str | None = None  # where native peers are built (None: the user's cache)


@dataclasses.dataclass
class Cell:
    workload: str
    n: int
    impl: str
    status: str                      # ok | skipped | unavailable | n/a | failed
    note: str = ""
    runs_s: list[float] = dataclasses.field(default_factory=list)
    wall_per_run_s: float | None = None
    ops: int = 0
    bytes_per_pending: float | None = None
    memory_method: str | None = None
    vs_reference: float | None = None
    vs_heapq: float | None = None
    interleaved: int = 0             # runs of runs_s from the interleaved rounds (curve workloads)
    vs_engine: float | None = None   # against optimized-batch, same workload and n
    # Native peers (benchmarks/native/): what the seconds measure, the peer's version, untimed
    # warm-up runs, and per-operation latency percentiles from a run timing single operations.
    metric: str | None = None
    version: str | None = None
    warm_runs: int = 0
    p50_ns: float | None = None
    p99_ns: float | None = None
    p999_ns: float | None = None
    latency_method: str | None = None

    @property
    def best_s(self) -> float | None:
        return min(self.runs_s) if self.runs_s else None

    @property
    def ops_per_s(self) -> float | None:
        b = self.best_s
        return self.ops / b if b else None

    @property
    def ns_per_op(self) -> float | None:
        b = self.best_s
        return b * 1e9 / self.ops if b else None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.update(best_s=self.best_s, ops_per_s=self.ops_per_s, ns_per_op=self.ns_per_op)
        return d


@dataclasses.dataclass
class Results:
    options: Options
    machine: dict[str, Any]
    cells: list[Cell]
    jit: dict[str, Any] | None
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    load_max_1min: float
    argv: list[str]

    def cell(self, workload: str, n: int, impl: str) -> Cell | None:
        for c in self.cells:
            if (c.workload, c.n, c.impl) == (workload, n, impl):
                return c
        return None

    def to_dict(self) -> dict[str, Any]:
        o = dataclasses.asdict(self.options)
        return {
            "command": " ".join(self.argv),
            "options": o,
            "machine": self.machine,
            "load_average_before": self.load_before,
            "load_average_after": self.load_after,
            "load_average_1min_max_during": self.load_max_1min,
            "jit": self.jit,
            "cells": [c.to_dict() for c in self.cells],
        }


Progress = Callable[[str], None]


#: Size of the untimed instance :func:`_warm` runs: large enough that every kernel the timed runs
#: call is compiled by it (the engine adds batches of 65 or more in another kernel than smaller
#: ones: ``wheelspec.optimized.timer.BATCH_MIN``).
WARM_N = 256
#: The purgatory's warm instance times out after this many ms instead of the workload's timeout,
#: so that some of its requests expire (with Kafka's 30 s and a median latency of 10 ms, about
#: one request in 2500 does) and the expiry path is compiled too.
WARM_PURGATORY_TIMEOUT_MS = 20


def _warm(driver: Driver, name: str, opts: Options) -> None:
    """Runs a small instance untimed: compiles the engine's kernels for this workload, and loads
    every module, so the first timed run measures the steady state."""
    params = dataclasses.replace(opts.purgatory, timeout=WARM_PURGATORY_TIMEOUT_MS)
    wl = workload(name, WARM_N, opts.seed, params)
    prep = driver.prepare(wl, opts.timer)
    if prep.warm is not None:
        prep.warm()
    prep.verify(prep.timed())


def run(opts: Options, argv: list[str], progress: Progress = lambda s: None) -> Results:
    machine = measure.machine_facts()
    load_before = measure.load_average()
    load_max = load_before[0]
    drivers = {name: _make_driver(name, opts) for name in opts.impls}
    for d in drivers.values():
        if getattr(d, "native", False):
            progress(f"native peer {d.name}: building its driver on first use (cached) ...")
            d.available()
    cells: list[Cell] = []
    last: dict[tuple[str, str], tuple[int, float]] = {}  # (impl, workload) -> (n, best seconds)
    warmed: set[tuple[str, str]] = set()
    fixed: dict[tuple[str, str], float] = {}  # (impl, workload) -> seconds of a run that n does not change
    for wname in opts.workloads:
        curve: dict[int, Any] = {}  # n -> workload, kept for the interleaved rounds
        for n in sorted(opts.sizes):
            wl = None
            for iname, driver in drivers.items():
                cell = Cell(wname, n, iname, "ok")
                cells.append(cell)
                why = driver.available()
                if why is not None:
                    cell.status, cell.note = "unavailable", why
                    continue
                if wname not in driver.workloads:
                    cell.status, cell.note = "unavailable", f"{iname} has no {wname} workload"
                    continue
                cap = opts.caps.get(iname)
                if cap is not None and n > cap:
                    cell.status, cell.note = "skipped", f"n > cap {cap:.0e} for {iname} (--cap)"
                    continue
                prev = last.get((iname, wname))
                if prev is not None:
                    p = 2 if (iname, wname) in QUADRATIC else 1
                    # A real-clock peer's run has a floor that does not grow with n (its fire runs
                    # last the workload's longest delay): only the part above it is scaled.
                    floor = fixed.get((iname, wname), 0.0)
                    predicted = floor + (prev[1] - floor) * (n / prev[0]) ** p
                    if predicted > opts.budget_s:
                        cell.status = "skipped"
                        cell.note = f"one run predicted to take {predicted:.0f} s > --budget {opts.budget_s:.0f} s"
                        continue
                if wl is None:
                    wl = workload(wname, n, opts.seed, opts.purgatory)
                if getattr(driver, "native", False):
                    progress(f"{wname:>10} n={n:<9} {iname:<16} ... (in its own process)")
                    _measure_native(cell, driver, wl, opts)
                    if cell.status == "ok" and cell.wall_per_run_s is not None:
                        last[(iname, wname)] = (n, cell.wall_per_run_s)
                        fixed[(iname, wname)] = min(cell.wall_per_run_s, getattr(driver, "last_floor_s", 0.0))
                    gc.collect()
                    load_max = max(load_max, os.getloadavg()[0])
                    continue
                try:
                    if (iname, wname) not in warmed:
                        _warm(driver, wname, opts)
                        warmed.add((iname, wname))
                    progress(f"{wname:>10} n={n:<9} {iname:<16} ...")
                    t0 = time.perf_counter()
                    # partial, not a lambda: the loop's current driver and workload are bound now.
                    cell.runs_s = measure.time_run(functools.partial(driver.prepare, wl, opts.timer),
                                                   opts.repeat, opts.repeat_budget_s)
                    # Wall time of one run *with* its untimed preparation (building the structure,
                    # the inserts a cancel or fire run needs): what the next size will cost us.
                    cell.wall_per_run_s = (time.perf_counter() - t0) / len(cell.runs_s)
                    cell.ops = wl.ops
                    last[(iname, wname)] = (n, cell.wall_per_run_s)
                    if wname in INTERLEAVED_WORKLOADS and opts.curve_rounds > 0:
                        curve[n] = wl
                    if wname == "insert":
                        if driver.memory == "arrays" or n <= opts.mem_max:
                            insert_wl = cast(TimerWorkload, wl)  # the insert workload is a timer workload
                            cell.bytes_per_pending = measure.bytes_per_pending(driver, insert_wl, opts.timer)
                            cell.memory_method = ("numpy nbytes" if driver.memory == "arrays" else "tracemalloc")
                except Unavailable as e:
                    cell.status, cell.note = "unavailable", str(e)
                except Exception as e:  # noqa: BLE001 - an implementation that raises fails its cell
                    _fail(cell, e)
                gc.collect()
                load_max = max(load_max, os.getloadavg()[0])
            del wl
            gc.collect()
        if curve:
            load_max = max(load_max, _curve_rounds(wname, curve, drivers, cells, opts, progress))
            curve.clear()
            gc.collect()
    _ratios(cells)
    jit = None
    if opts.jit and "optimized" in drivers and drivers["optimized"].available() is None:
        progress("JIT compile time: cold and warm, in fresh processes ...")
        jit = measure.jit_times()
    load_after = measure.load_average()
    machine["uptime_after"] = measure._run(["uptime"])
    return Results(opts, machine, cells, jit, load_before, load_after, max(load_max, load_after[0]), argv)


#: The column native peers (and every implementation) are compared with in ``vs engine``.
ENGINE = "optimized-batch"


def _make_driver(name: str, opts: Options) -> Driver:
    cls = DRIVERS[name]
    if getattr(cls, "native", False):
        return cls(build_dir=opts.native_build_dir)  # type: ignore[call-arg]
    return cls()


def _measure_native(cell: Cell, driver: Any, wl: Any, opts: Options) -> None:
    """One native peer's cell: the peer's driver runs it in a subprocess (warm-up, timed runs,
    a latency run, verification: benchmarks/native/drivers.py) and reports its figures."""
    from .native.drivers import NotApplicable, TooSlow

    try:
        r = driver.measure(wl, opts.timer, opts.repeat, opts.repeat_budget_s)
    except NotApplicable as e:
        cell.status, cell.note = "n/a", str(e)
        return
    except TooSlow as e:
        cell.status, cell.note = "skipped", str(e)
        return
    except Unavailable as e:
        cell.status, cell.note = "unavailable", str(e)
        return
    except Exception as e:  # noqa: BLE001 - a peer that fails or crashes fails its cell, as any other
        _fail(cell, e)
        return
    cell.runs_s, cell.ops, cell.wall_per_run_s = r.runs_s, r.ops, r.wall_per_run_s
    cell.metric, cell.version, cell.warm_runs = r.metric, r.version, r.warm_runs
    if r.latency:
        cell.p50_ns, cell.p99_ns, cell.p999_ns = (float(r.latency[k]) for k in ("p50_ns", "p99_ns", "p999_ns"))
        cell.latency_method = (f"{r.latency['method']}; {r.latency['samples']} samples; "
                               f"clock floor {r.latency['clock_floor_ns']} ns")


def _fail(cell: Cell, e: Exception) -> None:
    """Mark ``cell`` failed by ``e``.  A wrong result (VerificationError) or an exception inside
    the implementation is a finding, not a harness crash: the cell says what happened (the first
    line of the message), keeps no figure, and the other cells run."""
    first = str(e).splitlines()[0] if str(e) else ""
    cell.status, cell.note = "failed", f"{type(e).__name__}: {first}"
    cell.runs_s = []
    cell.bytes_per_pending = None


def _curve_rounds(wname: str, curve: dict[int, Any], drivers: dict[str, Driver], cells: list[Cell],
                  opts: Options, progress: Progress) -> float:
    """``opts.curve_rounds`` rounds over the sizes of a curve workload, one more run per cheap ok
    cell in each (see the module docstring).  Returns the highest 1-minute load seen."""
    load_max = 0.0
    by = {(c.n, c.impl): c for c in cells if c.workload == wname}
    for r in range(opts.curve_rounds):
        for n in sorted(curve):
            wl = curve[n]
            for iname, driver in drivers.items():
                cell = by.get((n, iname))
                if cell is None or cell.status != "ok" or (cell.wall_per_run_s or 0.0) > CURVE_RUN_MAX_S:
                    continue
                if getattr(driver, "native", False):
                    continue  # a run is a process (and a JIT warm-up): one sweep only
                progress(f"{wname:>10} n={n:<9} {iname:<16} ... (interleaved round {r + 1}/{opts.curve_rounds})")
                try:
                    cell.runs_s += measure.time_run(functools.partial(driver.prepare, wl, opts.timer), 1, 0.0)
                    cell.interleaved += 1
                except Exception as e:  # noqa: BLE001 - same rule as the regular sweep
                    _fail(cell, e)
                gc.collect()
                load_max = max(load_max, os.getloadavg()[0])
    return load_max


def _ratios(cells: list[Cell]) -> None:
    by = {(c.workload, c.n, c.impl): c for c in cells}
    for c in cells:
        mine = c.ops_per_s
        if mine is None:
            continue
        for base, attr in (("reference", "vs_reference"), ("heapq", "vs_heapq"), (ENGINE, "vs_engine")):
            b = by.get((c.workload, c.n, base))
            if b is not None and b.ops_per_s:
                setattr(c, attr, mine / b.ops_per_s)


def default_caps() -> dict[str, int]:
    """Sizes above which the per-operation implementations are not run unless told (``--cap``).
    They cost 5-30 us per operation in Python calls (and the reference about 500 bytes per timer),
    so 10^7 would take minutes per cell and gigabytes; sched's cancel, quadratic, is also held back
    by the time budget.  heapq and the batch API run every size."""
    return {"reference": 1_000_000, "optimized": 1_000_000, "optimized-op": 1_000_000, "sched": 1_000_000}

