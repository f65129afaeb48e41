"""How the figures are measured: wall time of a prepared run, bytes per pending timer, the JIT's
compile time in a fresh process, and the facts about the machine a report must state.

* **Time**: ``time.perf_counter_ns`` around the prepared run's ``timed()`` only; each run gets a
  freshly prepared structure; the best of up to ``repeat`` runs is reported (the least disturbed
  by the other processes on a shared machine), and all runs are kept in the JSON.  The cyclic
  garbage collector stays on (users run with it) but ``gc.collect()`` runs before each run; a
  workload with a warm-up (``steady``) runs it between the collection and the clock.
* **Bytes per pending timer**: Python structures -- ``tracemalloc``'s current traced size after
  inserting ``n`` tasks into a structure built before tracing started, with any event log dropped,
  divided by ``n`` (the caller's id and delay ints are not counted).  The engine -- the summed
  ``nbytes`` of every numpy array it holds after the insert (allocated capacity, growth slack
  included), divided by ``n``.
* **JIT**: a subprocess imports the engine and runs its first operations with ``NUMBA_CACHE_DIR``
  pointing at a fresh directory (cold: everything compiles), then a second subprocess does the
  same with that directory now filled (warm: the cache loads).
"""

from __future__ import annotations

import datetime
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from .drivers import Driver, Prepared, TimerConfig
from .workloads import PurgatoryWorkload, TimerWorkload


def time_run(prepare: Callable[[], Prepared], repeat: int, budget_s: float) -> list[float]:
    """Seconds of each timed run (each on a freshly prepared structure, each verified).  Stops
    repeating once the runs so far took ``budget_s`` in total."""
    times: list[float] = []
    spent = 0.0
    for _ in range(max(1, repeat)):
        prep = prepare()
        gc.collect()
        if prep.warm is not None:
            prep.warm()  # after the collection, which leaves the caches cold (see workloads.py)
        t0 = time.perf_counter_ns()
        result = prep.timed()
        t1 = time.perf_counter_ns()
        prep.verify(result)
        del prep, result
        seconds = (t1 - t0) / 1e9
        times.append(seconds)
        spent += seconds
        if spent >= budget_s:
            break
    return times


def bytes_per_pending(driver: Driver, wl: TimerWorkload, cfg: TimerConfig) -> float:
    """Bytes per pending timer after inserting ``wl.n`` tasks (``wl`` is an insert workload)."""
    prep = driver.prepare(wl, cfg)
    if driver.memory == "arrays":
        prep.timed()
        return driver.pending_bytes(prep.state) / wl.n
    gc.collect()
    tracemalloc.start()
    try:
        prep.timed()
        driver.drop_log(prep.state)
        gc.collect()
        used, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    prep.verify(None)
    return used / wl.n


# -- JIT compile time in fresh processes ----------------------------------------------------------
#: Run in a fresh interpreter: import the engine, run its first per-operation steps and (if the
#: batch API exists) its first batch steps; print the phase times as JSON.
JIT_PROBE = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
from wheelspec.benchmarks.drivers import TimerConfig
from wheelspec.benchmarks.registry import DRIVERS
from wheelspec.benchmarks.workloads import timer_workload
t2 = time.perf_counter()
import wheelspec.optimized as opt
t3 = time.perf_counter()
out = {"numpy_import_s": t1 - t0, "engine_import_s": t3 - t2}
sim = opt.Simulation(tick_ms=1, wheel_size=20)
sim.add(1, 5)
sim.advance_to(10)
t4 = time.perf_counter()
out["first_op_s"] = t4 - t3
batch = DRIVERS["optimized-batch"]()
if batch.available() is None:
    cfg = TimerConfig()
    for name in ("insert", "cancel", "fire-jump"):
        prep = batch.prepare(timer_workload(name, 8), cfg)
        prep.verify(prep.timed())
    out["first_batch_s"] = time.perf_counter() - t4
print("JIT_PROBE " + json.dumps(out))
"""


def jit_times(timeout_s: float = 600.0) -> dict[str, Any]:
    """Cold and warm import + first-operation times of the engine, each in a fresh process."""
    cache = tempfile.mkdtemp(prefix="wheelspec-bench-numba-")
    try:
        res: dict[str, Any] = {}
        for phase in ("cold", "warm"):
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", JIT_PROBE], env=env, capture_output=True,
                                  text=True, timeout=timeout_s)
            wall = time.perf_counter() - t0
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("JIT_PROBE ")), None)
            if proc.returncode != 0 or line is None:
                err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                return {"error": f"JIT probe ({phase}) failed: {err}"}
            r = json.loads(line[len("JIT_PROBE "):])
            r["process_wall_s"] = wall
            r["import_and_first_op_s"] = r["engine_import_s"] + r["first_op_s"]
            res[phase] = r
        return res
    finally:
        shutil.rmtree(cache, ignore_errors=True)


# -- the machine -----------------------------------------------------------------------------------
def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unavailable"


def _version(module: str) -> str:
    try:
        from importlib.metadata import version
        return version(module)
    except Exception:  # noqa: BLE001 - any failure means "not installed" for a report
        return "not installed"


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def machine_facts() -> dict[str, Any]:
    """What a benchmark report must say about where it ran."""
    lscpu = _run(["lscpu"]).splitlines()
    return {
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "nproc": _run(["nproc"]),
        "lscpu_head": lscpu[:10],
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": _version("numpy"),
        "numba": _version("numba"),
        "uptime_before": _run(["uptime"]),
        "git": git_state(),
    }


def git_state() -> str:
    """The commit the code under test came from, and whether the engine's files differ from it
    (several people commit to one working tree; a figure must say what it measured)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = _run(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    if not head or head == "unavailable":
        return "not a git checkout"
    dirty = _run(["git", "-C", root, "status", "--short", "--untracked-files=no", "--",
                  "optimized", "reference", "benchmarks", "spec"])
    return head + ("" if not dirty else "; uncommitted changes: " + ", ".join(
        line.split()[-1] for line in dirty.splitlines()))


def describe(wl: TimerWorkload | PurgatoryWorkload) -> str:
    """One line on what a workload's ops/s counts."""
    return {
        "insert": "adds/s (delays uniform in [1, 30000] ms)",
        "cancel": "cancels/s of all pending tasks, shuffled order",
        "fire-steps": "fires/s advancing 1 ms at a time to 2000 (delays in [1, 2000])",
        "fire-jump": "fires/s in one advance to 2000 (delays in [1, 2000])",
        "purgatory": "requests/s of Kafka's purgatory benchmark in virtual time",
    }[wl.name]
