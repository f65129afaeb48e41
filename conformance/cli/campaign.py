"""``wheelspec campaign``: a random campaign split into seed ranges and run on Spark
(``--engine spark``) or on a local process pool (``--engine local``), with verdicts and shrunk
counterexamples written to Parquet / JSON under ``--out``, deterministic, and resumable only
by the campaign that wrote them (``OUT/campaign.json``,
:mod:`wheelspec.conformance.traces.campaign_store`), with a failure budget per kind
(``--max-failures``) (:mod:`wheelspec.conformance.traces.spark_campaign`).  Interrupted (Ctrl-C,
SIGTERM), it keeps every finished range, prints the summary of what is done and exits with the
interrupted code.
``--write traces=DIR`` also records every schedule's history as a Parquet trace (docs/guides/TRACE_FORMAT.md)
for ``wheelspec analyze``.

Imported for every ``wheelspec`` invocation: heavy imports stay inside :func:`run_campaign`.
"""

from __future__ import annotations

import argparse
import sys
import time

from wheelspec.conformance.check.defaults import ORACLE_CHOICES, ORACLE_HELP
from wheelspec.conformance.cli.args import (
    STDOUT,
    Once,
    add_write,
    comma_list,
    count,
    describe,
    seed,
    writable_dir,
    writable_file,
)
from wheelspec.conformance.traces.spark_session import conf_item
from wheelspec.spec.errors import UserError

KINDS = ("timer", "purgatory")
#: failing schedules per kind after which a kind's remaining seed ranges are not started
DEFAULT_MAX_FAILURES = 20


def _max_failures(text: str) -> int | None:
    """``--max-failures``: an integer >= 1, or ``none`` for no budget."""
    if text.strip().lower() == "none":
        return None
    return count(text)


def configure_campaign(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", default="reference", metavar="IMPL", action=Once,
                   help="implementation, as for `wheelspec check --impl` (default reference)")
    p.add_argument("--kinds", default="timer,purgatory", type=comma_list(KINDS), metavar="KINDS",
                   help="campaign kinds, comma list of timer,purgatory")
    p.add_argument("--schedules", type=count, default=1000, metavar="N", help="schedules per kind (default 1000)")
    p.add_argument("--seed", type=seed, default=0, metavar="SEED", help="first seed (default 0)")
    p.add_argument("--chunk", type=count, default=100, metavar="N",
                   help="seeds per range, i.e. per Spark task (default 100)")
    p.add_argument("--engine", choices=("spark", "local"), default="local", metavar="ENGINE",
                   help="spark: one Spark task per seed range; local: a multiprocessing pool (default local)")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master URL (default: embedded local[*])")
    p.add_argument("--conf", type=conf_item, action="append", default=[], metavar="KEY=VALUE",
                   help="with --engine spark: a Spark setting for the session, as spark-submit --conf (repeatable)")
    p.add_argument("--workers", type=count, default=None, metavar="N",
                   help="--engine local: processes, >= 1 (default: all cores)")
    p.add_argument("--out", default=None, type=writable_dir, metavar="DIR",
                   help="output directory (verdicts, counterexamples, traces, and campaign.json recording what "
                   "was judged); default wheelspec-campaign/<impl>, <impl> being --impl made a folder name. "
                   "A rerun with the same --out resumes: it skips the seed ranges already done, and refuses "
                   "if the implementation, wheelspec, the generators, --kinds, --chunk, --no-shrink or "
                   "--write traces=DIR differ")
    p.add_argument("--fresh", action="store_true",
                   help="start over: delete the files this tool wrote in --out (never any other file)")
    p.add_argument("--max-failures", default=DEFAULT_MAX_FAILURES, type=_max_failures, metavar="N",
                   help="failure budget per kind: once N schedules of a kind have failed (each is shrunk), no "
                   "further seed range of that kind is started; ranges already running finish. 'none': no "
                   f"budget (default {DEFAULT_MAX_FAILURES})")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink failing schedules")
    p.add_argument("--oracle", choices=ORACLE_CHOICES, default="compiled", metavar="ORACLE", help=ORACLE_HELP)
    add_write(p, {"traces": ("trace_out", writable_dir,
                             "every schedule's history as a Parquet trace under PATH, one file per kind and seed "
                             "range (docs/guides/TRACE_FORMAT.md; `wheelspec analyze PATH` reads them)")})
    p.add_argument("--json", type=writable_file, metavar="FILE",
                   help="write the summary as JSON to FILE (- for stdout, instead of the text)")
    describe(p, [
        ("wheelspec campaign --impl optimized --schedules 100000 --out campaign/",
         "a local process pool; rerun the same command to resume after an interruption"),
        ("wheelspec campaign --engine spark --master spark://HOST:7077 --impl optimized --schedules 10000000 "
         "--out /shared/campaign/", "one Spark task per seed range (docs/guides/SPARK.md)"),
        ("wheelspec campaign --impl reference --schedules 200 --write traces=traces/ --json -",
         "also record every history for `wheelspec analyze traces/`; the summary as JSON on stdout"),
    ], ["0    every schedule passed", "1    a schedule failed (failure classes listed; verdicts under --out)"])


def run_campaign(args: argparse.Namespace) -> int:
    from wheelspec.conformance.interrupt import deferred
    from wheelspec.conformance.traces.campaign_store import default_out, identity, open_out
    from wheelspec.conformance.traces.spark_campaign import (
        Budget,
        collect_verdicts,
        failed_seeds_done,
        failure_classes,
        failure_classes_spark,
        pending_tasks,
        range_file,
        run_tasks,
    )

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not kinds:
        raise UserError(f"--kinds: no kind given (got {args.kinds!r}; known: {', '.join(KINDS)})")
    for k in kinds:
        if k not in KINDS:
            raise UserError(f"--kinds: unknown kind {k!r} (known: {', '.join(KINDS)})")
    kinds = list(dict.fromkeys(kinds))
    if args.schedules < 1 or args.chunk < 1 or args.seed < 0:
        raise UserError(f"--schedules and --chunk must be >= 1 and --seed >= 0 "
                        f"(got {args.schedules}, {args.chunk}, {args.seed})")
    from wheelspec.conformance.check import compiled_oracle

    compiled_oracle.use(args.oracle)  # the environment carries it to the worker processes
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be >= 1 (got {args.workers})")
    if args.conf and args.engine != "spark":
        raise UserError("--conf sets Spark configuration: it needs --engine spark")
    limit = args.max_failures
    from wheelspec.conformance.adapters import resolve

    adapter = resolve(args.impl)()   # fail early, in the driver, with a one-line error
    try:
        hello = adapter.hello()
    finally:
        getattr(adapter, "close", lambda: None)()
    if not hello.capabilities.purgatory:
        kinds = [k for k in kinds if k != "purgatory"]
        if not kinds:
            raise UserError(f"--impl {args.impl}: has no purgatory (hello capabilities), and --kinds asks only "
                            f"for purgatory")
    out_arg = args.out if args.out is not None else default_out(args.impl)
    trace = _trace_target(args.trace_out, out_arg)
    ident = identity(args.impl, hello, kinds, shrink=not args.no_shrink, trace=trace, chunk=args.chunk)
    out, resumed = open_out(out_arg, ident, fresh=args.fresh)
    tasks, skipped = pending_tasks(args.impl, kinds, args.seed, args.schedules, args.chunk, out,
                                   shrink=not args.no_shrink, trace=trace)
    budget = Budget(limit, failed_seeds_done(out, kinds, args.seed, args.schedules, args.chunk) if limit else {})
    spark = None
    if args.engine == "spark" and tasks:
        from wheelspec.conformance.traces.spark_session import get_session

        spark = get_session(args.master, app="wheelspec-campaign", extra=dict(args.conf))
    t0 = time.perf_counter()
    outcome = run_tasks(tasks, engine=args.engine, workers=args.workers, spark=spark, budget=budget)
    seconds = time.perf_counter() - t0
    done = outcome.done
    # Ranges this run finished, read from disk: on Spark an interrupted job's finished tasks
    # return nothing to the driver, but their files are complete.
    ranges_run = sum(range_file(out, t["kind"], t["lo"], t["hi"]).exists() for t in tasks)
    verdicts = collect_verdicts(out, kinds, args.seed, args.schedules, args.chunk)
    interrupted = outcome.interrupted is not None
    # After an interruption, no new Spark job: the summary comes from the files, in this process.
    classes = (failure_classes_spark(spark, out, kinds, args.seed, args.schedules, args.chunk)
               if spark is not None and not interrupted else failure_classes(verdicts))
    seeds_seen = {(k, s) for k, s in zip(verdicts.column("kind").to_pylist(), verdicts.column("seed").to_pylist())}
    failed = {(k, s) for k, s, ok in zip(verdicts.column("kind").to_pylist(), verdicts.column("seed").to_pylist(),
                                         verdicts.column("passed").to_pylist()) if not ok}
    stopped = {}
    for kind in kinds:
        cut = [t for t in outcome.not_run if t["kind"] == kind]
        if cut:
            stopped[kind] = {"reason": "max-failures", "failed": sum(1 for k, _ in failed if k == kind),
                             "max_failures": limit, "ranges_not_run": len(cut),
                             "seeds_not_run": sum(t["hi"] - t["lo"] for t in cut)}
    ran = sum(d["schedules"] for d in done)
    ops = sum(d["ops"] for d in done)
    summary = {"impl": args.impl, "kinds": kinds, "engine": args.engine, "schedules": len(seeds_seen),
               "failed": len(failed), "ranges_run": ranges_run, "ranges_skipped": skipped,
               "ranges_pending": len(tasks) - ranges_run - len(outcome.not_run),
               "resumed": resumed, "max_failures": limit, "stopped_early": stopped,
               "schedules_run": ran, "ops_run": ops, "seconds": round(seconds, 3),
               "schedules_per_s": round(ran / seconds, 1) if seconds > 0 and ran else None,
               "ops_per_s": round(ops / seconds, 1) if seconds > 0 and ops else None,
               "failure_classes": classes, "out": str(out)}
    if spark is not None:
        from wheelspec.conformance.traces.spark_session import session_info

        summary["spark"] = session_info(spark, dict(args.conf))   # the master, and what --conf set
    resume_hint = (f"rerun the same command (same --out {out}) to run the remaining ranges; "
                   f"the {skipped + ranges_run} ranges done are kept")
    with deferred():   # a second Ctrl-C (or the SIGTERM after it) waits for the summary
        if args.json:
            from wheelspec.conformance.cli.output import write_json
            from wheelspec.conformance.interrupt import Interrupted
            from wheelspec.envelope import envelope

            # the signal (an Interrupted) or a plain KeyboardInterrupt, which counts as SIGINT
            stop = outcome.interrupted if interrupted else None
            if stop is not None and not isinstance(stop, Interrupted):
                stop = Interrupted()
            code = stop.exit_code if stop is not None else (1 if failed else 0)
            write_json(args.json, envelope("campaign", summary, exit_code=code, stop=stop))
        if args.json != STDOUT:
            print(f"{args.impl}: {summary['schedules']} schedules ({', '.join(kinds)}), {summary['failed']} failed; "
                  f"ran {ranges_run} ranges ({skipped} done before) in {seconds:.1f} s on {args.engine}"
                  + (f": {summary['schedules_per_s']} schedules/s, {summary['ops_per_s']} ops/s" if ran else ""))
            for c in classes[:20]:
                print(f"  {c['count']:6} x {c['property']:22} shape {c['shape']}  (first seed {c['first_seed']})")
            for kind, st in stopped.items():
                print(f"{kind}: stopped early: {st['failed']} failed schedules reached --max-failures {limit} (per "
                      f"kind); {st['ranges_not_run']} ranges ({st['seeds_not_run']} seeds) not run: raise "
                      f"--max-failures and rerun with the same --out to run them")
            if interrupted:
                print(f"interrupted: {summary['ranges_pending']} ranges not finished; {resume_hint}")
            print(f"verdicts: {out}/verdicts/*/*.parquet", file=sys.stderr)
    if interrupted:
        assert outcome.interrupted is not None
        raise outcome.interrupted   # the command's interrupted exit code (main), after the summary
    return 1 if failed else 0


def _trace_target(trace_out: str | None, out: str) -> bool | str:
    """What the seed-range tasks are told about traces: False (none), True (OUT/traces, the
    campaign's own folder, which ``--fresh`` also clears), or another directory as an absolute path
    (workers may run in another directory)."""
    from pathlib import Path

    from wheelspec.conformance.traces.campaign_store import TRACE_DIR

    if trace_out is None:
        return False
    target = Path(trace_out).resolve()
    return True if target == (Path(out) / TRACE_DIR).resolve() else str(target)
