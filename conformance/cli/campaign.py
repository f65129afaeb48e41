"""``wheelspec campaign``: a random campaign split into seed ranges and run on Spark
(``--engine spark``) or on a local process pool (``--engine local``), with verdicts and shrunk
counterexamples written to Parquet / JSON under ``--out``, resumable and deterministic
(:mod:`.spark_campaign`).  ``--trace-out`` also records every schedule's history as a Parquet
trace (docs/TRACE_FORMAT.md) for ``wheelspec analyze``.

Imported for every ``wheelspec`` invocation: heavy imports stay inside :func:`run_campaign`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from wheelspec.spec.errors import UserError

KINDS = ("timer", "purgatory")


def configure_campaign(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", default="reference",
                   help="implementation, as for `wheelspec check --impl` (default reference)")
    p.add_argument("--kinds", default="timer,purgatory", help="campaign kinds, comma list of timer,purgatory")
    p.add_argument("--seeds", type=int, default=1000, help="schedules per kind (default 1000)")
    p.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--chunk", type=int, default=100, help="seeds per range, i.e. per Spark task (default 100)")
    p.add_argument("--engine", choices=("spark", "local"), default="local",
                   help="spark: one Spark task per seed range; local: a multiprocessing pool")
    p.add_argument("--master", default=None, help="Spark master URL (default: embedded local[*])")
    p.add_argument("--workers", type=int, default=None, help="--engine local: processes (default: all cores)")
    p.add_argument("--out", default="wheelspec-campaign", help="output directory (verdicts, counterexamples, traces)")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink failing schedules")
    p.add_argument("--trace-out", action="store_true", help="also write every schedule's history as a Parquet trace "
                   "under OUT/traces")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def run_campaign(args: argparse.Namespace) -> int:
    from wheelspec.conformance.traces.spark_campaign import (
        collect_verdicts,
        execute,
        failure_classes,
        failure_classes_spark,
        pending_tasks,
    )

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            raise UserError(f"--kinds: unknown kind {k!r} (known: {', '.join(KINDS)})")
    if args.seeds < 1 or args.chunk < 1 or args.start < 0:
        raise UserError(f"--seeds and --chunk must be >= 1 and --start >= 0 "
                        f"(got {args.seeds}, {args.chunk}, {args.start})")
    from wheelspec.conformance.adapters import resolve

    adapter = resolve(args.impl)()   # fail early, in the driver, with a one-line error
    caps = adapter.hello().capabilities
    getattr(adapter, "close", lambda: None)()
    if not caps.purgatory:
        kinds = [k for k in kinds if k != "purgatory"]
    tasks, skipped = pending_tasks(args.impl, kinds, args.start, args.seeds, args.chunk, args.out,
                                   shrink=not args.no_shrink, trace=args.trace_out)
    spark = None
    if args.engine == "spark":
        from wheelspec.conformance.traces.spark_session import get_session

        spark = get_session(args.master, app="wheelspec-campaign")
    t0 = time.perf_counter()
    done = execute(tasks, engine=args.engine, workers=args.workers, spark=spark)
    seconds = time.perf_counter() - t0
    verdicts = collect_verdicts(args.out, kinds, args.start, args.seeds, args.chunk)
    classes = (failure_classes_spark(spark, args.out, kinds, args.start, args.seeds, args.chunk) if spark is not None
               else failure_classes(verdicts))
    seeds_seen = {(k, s) for k, s in zip(verdicts.column("kind").to_pylist(), verdicts.column("seed").to_pylist())}
    failed = {(k, s) for k, s, ok in zip(verdicts.column("kind").to_pylist(), verdicts.column("seed").to_pylist(),
                                         verdicts.column("passed").to_pylist()) if not ok}
    ran = sum(d["schedules"] for d in done)
    ops = sum(d["ops"] for d in done)
    summary = {"impl": args.impl, "kinds": kinds, "engine": args.engine, "schedules": len(seeds_seen),
               "failed": len(failed), "ranges_run": len(done), "ranges_skipped": skipped,
               "schedules_run": ran, "ops_run": ops, "seconds": round(seconds, 3),
               "schedules_per_s": round(ran / seconds, 1) if seconds > 0 and ran else None,
               "ops_per_s": round(ops / seconds, 1) if seconds > 0 and ops else None,
               "failure_classes": classes, "out": str(args.out)}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{args.impl}: {summary['schedules']} schedules ({', '.join(kinds)}), {summary['failed']} failed; "
              f"ran {len(done)} ranges ({skipped} done before) in {seconds:.1f} s on {args.engine}"
              + (f": {summary['schedules_per_s']} schedules/s, {summary['ops_per_s']} ops/s" if ran else ""))
        for c in classes[:20]:
            print(f"  {c['count']:6} x {c['property']:22} shape {c['shape']}  (first seed {c['first_seed']})")
        print(f"verdicts: {args.out}/verdicts/*/*.parquet", file=sys.stderr)
    return 1 if failed else 0
