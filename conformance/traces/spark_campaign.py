"""Distributed random campaigns: seed ranges as Spark tasks (or local processes), verdicts and
shrunk counterexamples to Parquet, failure classes aggregated on the driver.

The unit of work is :func:`run_range`: one seed range of one campaign kind against one
implementation, calling the runner's :func:`~.campaign.run_seed_range` (generation, judging and
shrinking are the runner's; this module only distributes them).  Each range writes its own
verdict file ``verdicts/<kind>/range-<lo>-<hi>.parquet`` atomically (write, then rename), so:

* **resumable**: a rerun skips every range whose file exists -- sound because the output folder's
  manifest (:mod:`.campaign_store`) proves the files judged the same implementation with the same
  generators and parameters;
* **deterministic whatever the partitioning**: a seed's verdict is a pure function of
  (implementation, kind, seed) -- the schedule generator and the shrinker are deterministic -- and
  every summary is computed from the verdict rows sorted by seed, so ``--chunk`` and the number of
  workers change nothing but the speed.

Engines: ``spark`` (``sparkContext.parallelize(ranges).map(run_range)``: a few Spark tasks per
core, each running several ranges, Python workers on every core of ``local[*]`` or of a cluster;
the output directory must then be on a file system every executor sees) and ``local`` (a
``multiprocessing`` pool fed one range at a time).

:func:`run_tasks` applies the failure budget per kind (:class:`Budget`) and survives an
interruption: it stops the workers and returns what finished, every finished range being on disk.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wheelspec.conformance.traces.campaign_store import CX_DIR, TRACE_DIR, VERDICT_DIR, range_name
from wheelspec.spec.show import impl_dirname

#: Spark tasks per core of a campaign job (dynamic balance vs per-task overhead)
TASKS_PER_CORE = 4
#: with a failure budget, Spark runs the ranges in jobs ("waves") of this many ranges per Spark
#: task, checking the budget between jobs (a running job cannot be told to stop scheduling)
RANGES_PER_TASK_PER_WAVE = 4

__all__ = ["Budget", "CX_DIR", "RunOutcome", "TASKS_PER_CORE", "VERDICT_DIR", "collect_verdicts", "execute",
           "failed_seeds_done", "failure_classes", "failure_classes_spark", "pending_tasks", "range_file",
           "run_range", "run_tasks", "split"]


def range_file(out: str | Path, kind: str, lo: int, hi: int) -> Path:
    return Path(out) / VERDICT_DIR / kind / range_name(lo, hi)


def split(start: int, count: int, chunk: int) -> list[tuple[int, int]]:
    """Seed ranges [lo, hi) of at most ``chunk`` seeds covering [start, start + count)."""
    return [(lo, min(lo + chunk, start + count)) for lo in range(start, start + count, chunk)]


def _tmp(target: Path) -> Path:
    """The temporary a file is written to before its atomic rename (a name the store owns)."""
    return target.with_name(f"{target.name}.tmp{os.getpid()}")


def run_range(task: dict[str, Any]) -> dict[str, Any]:
    """Run, judge and (on failure) shrink the schedules of one seed range; write its verdicts.
    ``task``: impl, kind, lo, hi, out, shrink (bool), trace (bool, or a directory).  Pure in its results; every
    file it writes appears complete or not at all (written, then renamed), the verdict file last."""
    import pyarrow.parquet as pq

    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.check import compiled_oracle
    from wheelspec.conformance.check.campaign import run_seed_range
    from wheelspec.conformance.traces.format import TraceWriter, verdicts_table

    impl, kind, lo, hi, out = task["impl"], task["kind"], task["lo"], task["hi"], Path(task["out"])
    t0 = time.perf_counter()
    adapter = resolve(impl)()
    try:
        caps = adapter.hello().capabilities
        tw = None
        on_run = None
        # task["trace"]: True for OUT/traces, or the directory of `--write traces=DIR` (a str)
        trace_root = Path(task["trace"]) if isinstance(task.get("trace"), str) else out / TRACE_DIR
        trace_target = trace_root / kind / range_name(lo, hi)
        if task.get("trace"):
            tw = TraceWriter(_tmp(trace_target))

            def on_run(seed: int, cfg: Any, result: Any) -> None:
                # Each schedule's own run, recorded as it is judged (not executed a second time).
                tw.add_schedule(result.history, impl=impl, kind=kind, seed=seed, config=caps.effective(cfg),
                                profile=caps.profile,
                                wheel=caps.wheel_size is not None or "wheel_size" in caps.configurable)
        compiled_oracle.expect(kind, hi - lo)
        try:
            outcomes = run_seed_range(adapter, caps, kind, range(lo, hi), shrink=task.get("shrink", True),
                                      impl_name=impl_dirname(impl), on_run=on_run)
        finally:
            if tw is not None:
                tw.close()
        if tw is not None:
            os.replace(tw.path, trace_target)
        rows = []
        for o in outcomes:
            run = f"{impl}/{kind}/{o.seed}"
            if o.ok:
                rows.append(dict(run=run, impl=impl, kind=kind, seed=o.seed, property="all", passed=True,
                                 violations=0, message="", counterexample=None, ops=o.ops, shape=None))
                continue
            cx_path, shape, cx_prop = None, None, None
            if o.counterexample is not None:
                p = out / CX_DIR / impl_dirname(impl) / f"{kind}-{o.seed}.json"
                p.parent.mkdir(parents=True, exist_ok=True)
                tmp = _tmp(p)
                tmp.write_text(o.counterexample.for_impl(impl).dumps())  # `wheelspec replay FILE` rebuilds impl
                os.replace(tmp, p)
                cx_path = str(p.relative_to(out))
                shape = ",".join(op.kind for op in o.counterexample.ops)
                cx_prop = (o.counterexample.origin or {}).get("prop")
            by_prop: dict[str, list[Any]] = {}
            for f in o.failures:
                by_prop.setdefault(f.prop, []).append(f)
            for prop, fs in sorted(by_prop.items()):
                rows.append(dict(run=run, impl=impl, kind=kind, seed=o.seed, property=prop, passed=False,
                                 violations=len(fs), message=fs[0].message, counterexample=cx_path, ops=o.ops,
                                 shape=f"{cx_prop}:{shape}" if shape is not None else None))
    finally:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()
    table = verdicts_table(rows)
    target = range_file(out, kind, lo, hi)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp(target)
    pq.write_table(table, tmp)
    os.replace(tmp, target)          # atomic: a range file exists only when complete
    return {"kind": kind, "lo": lo, "hi": hi, "schedules": len(outcomes), "ops": sum(o.ops for o in outcomes),
            "failed": sum(not o.ok for o in outcomes), "seconds": time.perf_counter() - t0, "pid": os.getpid()}


def pending_tasks(impl: str, kinds: Iterable[str], start: int, count: int, chunk: int, out: str | Path,
                  shrink: bool = True, trace: bool | str = False) -> tuple[list[dict[str, Any]], int]:
    """Tasks for every range not yet done, and how many were skipped (resume)."""
    tasks, skipped = [], 0
    for kind in kinds:
        for lo, hi in split(start, count, chunk):
            if range_file(out, kind, lo, hi).exists():
                skipped += 1
                continue
            tasks.append({"impl": impl, "kind": kind, "lo": lo, "hi": hi, "out": str(out), "shrink": shrink,
                          "trace": trace})
    return tasks, skipped


def failed_seeds_done(out: str | Path, kinds: Iterable[str], start: int, count: int, chunk: int) -> dict[str, int]:
    """Failing seeds per kind in the ranges already done (what a resumed budget starts from)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    failed = {}
    for kind in kinds:
        n = 0
        for lo, hi in split(start, count, chunk):
            p = range_file(out, kind, lo, hi)
            if p.exists():
                t = pq.read_table(p, columns=["seed", "passed"])
                n += len(pc.unique(t.filter(pc.invert(t.column("passed"))).column("seed")))
        failed[kind] = n
    return failed


@dataclasses.dataclass
class Budget:
    """The failure budget of a campaign, per kind (``--max-failures``).

    Ranges are handed out in seed order; a kind's failures are the failing seeds of its finished
    ranges (those done before a resume included).  Once they reach ``limit``, no further range of
    that kind is started; ranges already running finish and are kept, so a kind may end with more
    than ``limit`` failures.  A range not started has no file: a later run (with a larger limit)
    runs it.  ``limit`` None: no budget."""

    limit: int | None
    failed: dict[str, int] = dataclasses.field(default_factory=dict)

    def spent(self, kind: str) -> bool:
        return self.limit is not None and self.failed.get(kind, 0) >= self.limit

    def record(self, result: dict[str, Any]) -> None:
        self.failed[result["kind"]] = self.failed.get(result["kind"], 0) + int(result["failed"])


@dataclasses.dataclass
class RunOutcome:
    """What :func:`run_tasks` did: the finished ranges' results, the tasks never started because
    their kind's budget was spent, and the interruption that ended the run early, if any."""

    done: list[dict[str, Any]]
    not_run: list[dict[str, Any]]
    interrupted: BaseException | None = None


def _order(tasks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    # Seed order, kinds interleaved: every kind progresses, and a budget stops at its lowest seeds.
    return sorted(tasks, key=lambda t: (t["lo"], t["kind"]))


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group: the driver alone handles it (it stops the pool), so a
    # worker ignores it -- with a handler, not SIG_IGN, which would be inherited by the subprocess
    # adapters it starts.  SIGTERM (how the pool stops workers) keeps its default, whatever handler
    # the driver had when it forked.
    signal.signal(signal.SIGINT, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_tasks(tasks: list[dict[str, Any]], *, engine: str, workers: int | None = None, spark: Any = None,
              master: str | None = None, budget: Budget | None = None) -> RunOutcome:
    """Run the tasks on Spark or a local process pool under ``budget``.  A KeyboardInterrupt
    (Ctrl-C, or the SIGTERM handler's subclass of it) stops the workers; the outcome then holds
    the ranges that finished and the interruption."""
    budget = budget or Budget(None)
    order = _order(tasks)
    done: list[dict[str, Any]] = []
    not_run: list[dict[str, Any]] = []
    try:
        if engine == "spark":
            _run_spark(order, done, not_run, budget, spark, master)
        elif engine == "local":
            n = workers or os.cpu_count() or 1
            if n == 1:
                for t in order:
                    if budget.spent(t["kind"]):
                        not_run.append(t)
                        continue
                    r = run_range(t)
                    done.append(r)
                    budget.record(r)
            else:
                _run_pool(order, done, not_run, budget, n)
        else:
            raise ValueError(f"engine must be spark or local, got {engine!r}")
    except KeyboardInterrupt as e:
        return RunOutcome(done, not_run, e)
    return RunOutcome(done, not_run)


def _run_pool(order: list[dict[str, Any]], done: list[dict[str, Any]], not_run: list[dict[str, Any]],
              budget: Budget, n: int) -> None:
    """At most ``n`` ranges in flight, the next handed out when one finishes, so that a spent
    budget stops its kind within one range per worker."""
    import multiprocessing as mp

    results: queue.SimpleQueue[Any] = queue.SimpleQueue()
    pool = mp.get_context("fork").Pool(n, initializer=_worker_init)
    try:
        pending = list(reversed(order))
        running = 0
        while pending or running:
            while pending and running < n:
                t = pending.pop()
                if budget.spent(t["kind"]):
                    not_run.append(t)
                    continue
                pool.apply_async(run_range, (t,), callback=results.put,
                                 error_callback=lambda e: results.put(_Failed(e)))
                running += 1
            if not running:
                break
            while True:
                try:  # a timed wait, so that Ctrl-C is seen at once
                    r = results.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            running -= 1
            if isinstance(r, _Failed):
                raise r.error
            done.append(r)
            budget.record(r)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


@dataclasses.dataclass
class _Failed:
    error: BaseException


def _run_spark(order: list[dict[str, Any]], done: list[dict[str, Any]], not_run: list[dict[str, Any]],
               budget: Budget, spark: Any, master: str | None) -> None:
    from wheelspec.conformance.traces.spark_session import get_session

    if not order:
        return
    spark = spark or get_session(master, app="wheelspec-campaign")
    sc = spark.sparkContext
    # A few Spark tasks per core, each running several ranges in one Python worker: every Spark
    # task costs the JVM about 50 ms of CPU and a scheduling round trip, which on a small machine
    # competes with the workers (one task per 100-seed range cost local[2] ~15% of its time).
    # Ranges stay the unit of output and of resume; kinds are interleaved so every slice gets
    # a similar mix of cheap and costly schedules.  Without a budget, one job; with one, jobs of a
    # few ranges per task, the budget checked between them.
    slices = max(1, sc.defaultParallelism) * TASKS_PER_CORE
    wave = len(order) if budget.limit is None else slices * RANGES_PER_TASK_PER_WAVE
    rest = order
    while rest:
        now = [t for t in rest[:wave] if not budget.spent(t["kind"])]
        not_run += [t for t in rest[:wave] if budget.spent(t["kind"])]
        rest = rest[wave:]
        if not now:
            continue
        try:
            results = sc.parallelize(now, min(len(now), slices)).map(run_range).collect()
        except KeyboardInterrupt:
            # PySpark cancels the job itself on SIGINT, not on SIGTERM: stop the executors' work.
            sc.cancelAllJobs()
            raise
        for r in results:
            done.append(r)
            budget.record(r)


def execute(tasks: list[dict[str, Any]], *, engine: str, workers: int | None = None, spark: Any = None,
            master: str | None = None) -> list[dict[str, Any]]:
    """Run every task (no budget) on Spark or a local process pool; the results of the ranges."""
    outcome = run_tasks(tasks, engine=engine, workers=workers, spark=spark, master=master)
    if outcome.interrupted is not None:
        raise outcome.interrupted
    return outcome.done


def collect_verdicts(out: str | Path, kinds: Iterable[str], start: int, count: int, chunk: int) -> Any:
    """The verdict rows of the campaign's seed ranges (pyarrow table), sorted by (kind, seed, property)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wheelspec.conformance.traces.format import VERDICT_SCHEMA

    tables = []
    for kind in kinds:
        for lo, hi in split(start, count, chunk):
            p = range_file(out, kind, lo, hi)
            if p.exists():
                tables.append(pq.read_table(p))
    if not tables:
        return VERDICT_SCHEMA.empty_table()
    t = pa.concat_tables(tables, promote_options="default")
    return t.sort_by([("kind", "ascending"), ("seed", "ascending"), ("property", "ascending")])


def failure_classes(verdicts: Any) -> list[dict[str, Any]]:
    """Failures grouped by (property, minimal counterexample shape), largest class first."""
    import pyarrow.compute as pc

    bad = verdicts.filter(pc.invert(verdicts.column("passed")))
    if bad.num_rows == 0:
        return []
    g = bad.group_by(["property", "shape"]).aggregate([("seed", "count"), ("seed", "min")]).to_pylist()
    for d in g:
        d["count"], d["first_seed"] = d.pop("seed_count"), d.pop("seed_min")
    return sorted(g, key=lambda d: (-d["count"], d["property"], d["shape"] or ""))


def failure_classes_spark(spark: Any, out: str | Path, kinds: Iterable[str], start: int, count: int,
                          chunk: int) -> list[dict[str, Any]]:
    """The same aggregation as :func:`failure_classes`, as a Spark job over the verdict files."""
    from pyspark.sql import functions as F

    files = [str(f) for k in kinds for lo, hi in split(start, count, chunk)
             if (f := range_file(out, k, lo, hi)).exists()]
    if not files:
        return []
    df = spark.read.parquet(*files)
    rows = (df.filter(~F.col("passed")).groupBy("property", "shape")
            .agg(F.count("seed").alias("count"), F.min("seed").alias("first_seed")).collect())
    return sorted(({"property": r["property"], "shape": r["shape"], "count": int(r["count"]),
                    "first_seed": int(r["first_seed"])} for r in rows),
                  key=lambda d: (-d["count"], d["property"], d["shape"] or ""))
