"""``wheelspec analyze TRACES``: judge a trace dataset (:mod:`wheelspec.conformance.traces`) and print
or write the result.

Imported for every ``wheelspec`` invocation: pyarrow, numpy, matplotlib and pyspark are imported
only inside :func:`run_analyze`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wheelspec.conformance.cli.args import (
    STDOUT,
    add_write,
    between,
    describe,
    seed,
    writable_dir,
    writable_file,
)
from wheelspec.conformance.traces.analyze import analyze
from wheelspec.conformance.traces.rules import MAX_LATENESS_MS, MAX_ROWS, MAX_SYNTHETIC_ROWS, MIN_SYNTHETIC_ROWS
from wheelspec.conformance.traces.spark_session import MIN_DRIVER_MIB, conf_item, memory_size
from wheelspec.spec.errors import UserError


def configure_analyze(p: argparse.ArgumentParser) -> None:
    p.add_argument("traces", nargs="*", metavar="TRACE",
                   help="Parquet trace files or directories (docs/guides/TRACE_FORMAT.md)")
    p.add_argument("--engine", choices=("local", "spark"), default="local", metavar="ENGINE",
                   help="local: pyarrow + numpy in this process (no Java); spark: PySpark DataFrame jobs")
    p.add_argument("--master", default=None, metavar="URL",
                   help="Spark master URL, e.g. spark://host:7077 (default: embedded local[*])")
    p.add_argument("--driver-memory", type=memory_size, default="4g", metavar="SIZE",
                   help=f"Spark driver memory: a number with a suffix k, m, g, t (4g, 512m; a bare number is "
                        f"MiB), at least {MIN_DRIVER_MIB}m (default 4g)")
    p.add_argument("--conf", type=conf_item, action="append", default=[], metavar="KEY=VALUE",
                   help="with --engine spark: a Spark setting for the session, as spark-submit --conf (repeatable)")
    p.add_argument("--out", type=writable_dir, metavar="DIR",
                   help="write analysis.json, report.html and PNG plots here (checked writable before the "
                        "analysis; the plots need the 'reports' extra)")
    p.add_argument("--json", type=_json_target, metavar="FILE",
                   help="write the JSON result to FILE (- for stdout, instead of the summary)")
    p.add_argument("--lateness-ms", type=between(0, MAX_LATENESS_MS), default=None, metavar="MS",
                   help=f"also judge late-fire: fire - exp must be <= this many ms, 0 to {MAX_LATENESS_MS} "
                        f"(the largest lateness the protocol's time and delay ranges allow)")
    p.add_argument("--max-rows", type=between(0, MAX_ROWS), default=20, metavar="N",
                   help=f"violating rows reported per property, 0 to {MAX_ROWS} (default 20)")
    p.add_argument("--synthetic", type=between(MIN_SYNTHETIC_ROWS, MAX_SYNTHETIC_ROWS), metavar="N",
                   help=f"analyze a seeded synthetic trace of about N rows instead of TRACE files, "
                        f"{MIN_SYNTHETIC_ROWS} to {MAX_SYNTHETIC_ROWS}")
    p.add_argument("--seed", type=seed, default=0, metavar="SEED", help="seed of --synthetic, 0 to 2^63-1 (default 0)")
    p.add_argument("--plant", default="", metavar="PLANTS",
                   help="with --synthetic: plant violations, comma list of early,double")
    add_write(p, {"trace": ("save_trace", writable_file, "with --synthetic: the trace, as a Parquet file")})
    describe(p, [
        ("wheelspec analyze traces/", "judge every Parquet trace under traces/ (docs/guides/TRACE_FORMAT.md)"),
        ("wheelspec analyze traces/ --out report/", "also write report/report.html, analysis.json and plots"),
        ("wheelspec analyze traces/ --engine spark --master spark://HOST:7077 --json result.json",
         "the same judgement as Spark jobs; the result as JSON"),
        ("wheelspec analyze --synthetic 100000 --plant early --json -", "a seeded synthetic trace; JSON on stdout"),
    ], ["0    every property holds on every run", "1    a violation (the rows are listed)"])


def _json_target(text: str) -> str:
    """``--json FILE``: a writable file that is not a Parquet file or a directory (``analyze --json
    TRACE`` is a trace typed after the flag: it is refused, never overwritten)."""
    if text.endswith(".parquet") or Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a trace, not a JSON file: write --json FILE.json, or --json - "
                                         f"for stdout")
    return writable_file(text)


def run_analyze(args: argparse.Namespace) -> int:
    if args.conf and args.engine != "spark":
        raise UserError("--conf sets Spark configuration: it needs --engine spark")
    paths = list(args.traces)
    if args.synthetic is not None:
        if paths:
            raise UserError("give either TRACE files or --synthetic ROWS, not both")
        from wheelspec.conformance.traces.format import write_trace
        from wheelspec.conformance.traces.synth import synthetic_trace

        plant = {x.strip() for x in args.plant.split(",") if x.strip()}
        unknown = plant - {"early", "double"}
        if unknown:
            raise UserError(f"--plant: unknown violation {sorted(unknown)[0]!r} (known: early, double)")
        try:
            table, planted = synthetic_trace(args.synthetic, seed=args.seed, plant_early="early" in plant,
                                             plant_double="double" in plant)
        except ValueError as e:
            raise UserError(f"--synthetic: {e}") from None
        target = Path(args.save_trace) if args.save_trace else Path(args.out or ".") / "synthetic-trace.parquet"
        write_trace(table, target)
        for p in planted:
            print(f"planted {p.kind} fire: run {p.run} task {p.task} at {p.time} (exp {p.exp})", file=sys.stderr)
        paths = [str(target)]
    if not paths:
        raise UserError("no trace given: pass Parquet files or directories, or --synthetic ROWS")
    result = analyze(paths, engine=args.engine, master=args.master, driver_memory=args.driver_memory,
                     conf=dict(args.conf),
                     lateness_ms=args.lateness_ms, max_rows=args.max_rows)
    from wheelspec.conformance.cli.output import json_text, write_json
    from wheelspec.envelope import envelope

    # the envelope's "format" versions the whole report; the analysis' own keys follow it
    body = {k: v for k, v in result.items() if k not in ("ok", "format")}
    doc = envelope("analyze", body, exit_code=0 if result["ok"] else 1)
    if args.out:
        from wheelspec.conformance.traces.html_report import write_report

        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "analysis.json").write_text(json_text(doc))
            page = write_report(result, out)
        except OSError as e:
            raise UserError(f"--out {out}: cannot write the report ({e.strerror or e})") from None
        from wheelspec.conformance.optional import available

        if available("matplotlib"):
            print(f"wrote {out / 'analysis.json'}, {page} and PNG plots", file=sys.stderr)
        else:
            from wheelspec.conformance.traces.html_report import PLOTS_LEFT_OUT

            print(f"wrote {out / 'analysis.json'} and {page}; {PLOTS_LEFT_OUT}", file=sys.stderr)
    if args.json:
        write_json(args.json, doc)
    if args.json != STDOUT:
        _summary(result)
    return 0 if result["ok"] else 1


def _summary(result: dict[str, Any]) -> None:
    started = f" (+ {result['session_seconds']} s to start Spark)" if "session_seconds" in result else ""
    print(f"{result['rows']} rows, {result['runs']} runs, engine {result['engine']}, {result['seconds']} s{started}")
    for p, v in result["properties"].items():
        if not v.get("judged", True):
            continue
        mark = "ok  " if v["violations"] == 0 else "FAIL"
        print(f"  {mark} {p:22} {v['violations']}")
        for r in v["rows"][:5]:
            why = f": {r['why']}" if r.get("why") else ""
            print(f"         run {r['run']} seq {r['seq']}: {r['kind']} id={r['id']} time={r['time']} "
                  f"deadline={r['deadline']}{why}")
    from wheelspec.conformance.traces.html_report import CLOCKS

    unit = CLOCKS.get(result.get("clock", "unstated"), CLOCKS["unstated"])[1]  # "virtual ms", "ms, wall clock"
    for g in result["lateness"][:12]:
        print(f"  lateness {g['impl'] or '-'} level {g['level']} {g['profile']} ({unit}): {g['count']} fires, "
              f"p50={g['p50']} p99={g['p99']} max={g['max']}, {g['early']} early")
