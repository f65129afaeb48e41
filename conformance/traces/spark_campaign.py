"""Distributed random campaigns: seed ranges as Spark tasks (or local processes), verdicts and
shrunk counterexamples to Parquet, failure classes aggregated on the driver.

The unit of work is :func:`run_range`: one seed range of one campaign kind against one
implementation, calling the runner's :func:`~.campaign.run_seed_range` (generation, judging and
shrinking are the runner's; this module only distributes them).  Each range writes its own
verdict file ``verdicts/<kind>/range-<lo>-<hi>.parquet`` atomically (write, then rename), so:

* **resumable**: a rerun skips every range whose file exists;
* **deterministic whatever the partitioning**: a seed's verdict is a pure function of
  (implementation, kind, seed) -- the schedule generator and the shrinker are deterministic -- and
  every summary is computed from the verdict rows sorted by seed, so ``--chunk`` and the number of
  workers change nothing but the speed.

Engines: ``spark`` (``sparkContext.parallelize(ranges).map(run_range)``: a few Spark tasks per
core, each running several ranges, Python workers on every core of ``local[*]`` or of a cluster;
the output directory must then be on a file system every executor sees) and ``local`` (a
``multiprocessing`` pool).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

VERDICT_DIR = "verdicts"
#: Spark tasks per core of the campaign job (dynamic balance vs per-task overhead)
TASKS_PER_CORE = 4
CX_DIR = "counterexamples"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "impl"


def range_file(out: str | Path, kind: str, lo: int, hi: int) -> Path:
    return Path(out) / VERDICT_DIR / kind / f"range-{lo:012d}-{hi:012d}.parquet"


def split(start: int, count: int, chunk: int) -> list[tuple[int, int]]:
    """Seed ranges [lo, hi) of at most ``chunk`` seeds covering [start, start + count)."""
    return [(lo, min(lo + chunk, start + count)) for lo in range(start, start + count, chunk)]


def run_range(task: dict[str, Any]) -> dict[str, Any]:
    """Run, judge and (on failure) shrink the schedules of one seed range; write its verdicts.
    ``task``: impl, kind, lo, hi, out, shrink (bool), trace (bool).  Pure in its results."""
    import pyarrow.parquet as pq

    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.check.campaign import run_seed_range
    from wheelspec.conformance.traces.format import TraceWriter, verdicts_table

    impl, kind, lo, hi, out = task["impl"], task["kind"], task["lo"], task["hi"], Path(task["out"])
    t0 = time.perf_counter()
    adapter = resolve(impl)()
    try:
        caps = adapter.hello().capabilities
        tw = None
        on_run = None
        if task.get("trace"):
            tw = TraceWriter(out / "traces" / kind / f"range-{lo:012d}-{hi:012d}.parquet")

            def on_run(seed: int, cfg: Any, result: Any) -> None:
                # Each schedule's own run, recorded as it is judged (not executed a second time).
                tw.add_schedule(result.history, impl=impl, kind=kind, seed=seed, config=cfg, profile=caps.profile)
        try:
            outcomes = run_seed_range(adapter, caps, kind, range(lo, hi), shrink=task.get("shrink", True),
                                      impl_name=_safe(impl), on_run=on_run)
        finally:
            if tw is not None:
                tw.close()
        rows = []
        for o in outcomes:
            run = f"{impl}/{kind}/{o.seed}"
            if o.ok:
                rows.append(dict(run=run, impl=impl, kind=kind, seed=o.seed, property="all", passed=True,
                                 violations=0, message="", counterexample=None, ops=o.ops, shape=None))
                continue
            cx_path, shape, cx_prop = None, None, None
            if o.counterexample is not None:
                p = out / CX_DIR / _safe(impl) / f"{kind}-{o.seed}.json"
                o.counterexample.save(p)
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
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    pq.write_table(table, tmp)
    os.replace(tmp, target)          # atomic: a range file exists only when complete
    return {"kind": kind, "lo": lo, "hi": hi, "schedules": len(outcomes), "ops": sum(o.ops for o in outcomes),
            "failed": sum(not o.ok for o in outcomes), "seconds": time.perf_counter() - t0, "pid": os.getpid()}


def pending_tasks(impl: str, kinds: Iterable[str], start: int, count: int, chunk: int, out: str | Path,
                  shrink: bool = True, trace: bool = False) -> tuple[list[dict[str, Any]], int]:
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


def execute(tasks: list[dict[str, Any]], *, engine: str, workers: int | None = None, spark: Any = None,
            master: str | None = None) -> list[dict[str, Any]]:
    """Run the tasks on Spark (one task per range) or on a local process pool."""
    if not tasks:
        return []
    if engine == "spark":
        from wheelspec.conformance.traces.spark_session import get_session

        spark = spark or get_session(master, app="wheelspec-campaign")
        sc = spark.sparkContext
        # A few Spark tasks per core, each running several ranges in one Python worker: every Spark
        # task costs the JVM about 50 ms of CPU and a scheduling round trip, which on a small machine
        # competes with the workers (one task per 100-seed range cost local[2] ~15% of its time).
        # Ranges stay the unit of output and of resume; kinds are interleaved so every slice gets
        # a similar mix of cheap and costly schedules.
        order = sorted(tasks, key=lambda t: (t["lo"], t["kind"]))
        slices = min(len(order), max(1, sc.defaultParallelism) * TASKS_PER_CORE)
        return sc.parallelize(order, slices).map(run_range).collect()
    if engine == "local":
        import multiprocessing as mp

        n = workers or os.cpu_count() or 1
        if n == 1:
            return [run_range(t) for t in tasks]
        with mp.get_context("fork").Pool(n) as pool:
            return pool.map(run_range, tasks, chunksize=1)
    raise ValueError(f"engine must be spark or local, got {engine!r}")


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
