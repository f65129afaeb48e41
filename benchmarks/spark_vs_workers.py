"""When does the cluster pay?  ``wheelspec campaign`` on Spark against a local process pool, same seeds.

Runs the same campaign twice, as a user would type it: ``--engine spark --master local[2]`` and
``--engine local --workers 2`` (the same ``--impl``, ``--kinds``, ``--schedules``, ``--seed`` and
``--chunk``; no failure budget, so both judge every seed whatever fails), then

* checks that the verdicts are the same: the JSON reports' verdict fields (:data:`VERDICT_FIELDS`)
  and every schedule's verdict rows in the Parquet files under ``--out`` (run, property, passed,
  violations, message, operations);
* prints the throughput of each, from the campaign's own clock (``ops_per_s`` of the report: seed
  ranges judged, without the Spark session's start) and from the wall clock of the whole command
  (with the JVM's start, which a short campaign on Spark pays in full).

    python -m wheelspec.benchmarks.spark_vs_workers --impl reference --schedules 2000
    python -m wheelspec.benchmarks.spark_vs_workers --impl "cmd:java -cp /tmp/jk/build ToyTimer" --json out.json

Exit 0 when the verdicts agree, 1 when they differ (what differs is printed), 2 when a campaign
could not run.  ``docs/results/SPARK_SPEED.md`` ("Spark against --workers") holds a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: the fields of a campaign's JSON report that are its verdict (the rest are times and paths)
VERDICT_FIELDS = ("ok", "exit_code", "impl", "kinds", "schedules", "schedules_run", "failed", "ops_run",
                  "failure_classes")
#: the columns of a verdict row compared (``wheelspec.verdicts`` Parquet files)
ROW_FIELDS = ("run", "kind", "seed", "property", "passed", "violations", "message", "ops")


def campaign(engine_args: list[str], args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One ``wheelspec campaign`` command in a fresh process; its JSON report, with the wall clock."""
    report = out.with_suffix(".json")
    cmd = [sys.executable, "-m", "wheelspec", "campaign", "--impl", args.impl, "--kinds", args.kinds,
           "--schedules", str(args.schedules), "--chunk", str(args.chunk), "--max-failures", "none",
           "--out", str(out), "--fresh", "--json", str(report), *engine_args]
    if args.seed:
        cmd += ["--seed", str(args.seed)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1) or not report.exists():
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"spark_vs_workers: {' '.join(engine_args)} failed (exit {p.returncode}): {last}")
    rep = json.loads(report.read_text())
    rep["wall"] = wall
    return rep


def verdict_rows(out: Path) -> list[tuple[Any, ...]]:
    """Every verdict row under ``out``/verdicts, the compared columns only, in a fixed order."""
    import pyarrow.parquet as pq

    rows: list[tuple[Any, ...]] = []
    for f in sorted((out / "verdicts").rglob("*.parquet")):
        t = pq.read_table(f, columns=list(ROW_FIELDS))
        rows.extend(tuple(r[c] for c in ROW_FIELDS) for r in t.to_pylist())
    return sorted(rows, key=repr)


def differences(a: dict[str, Any], b: dict[str, Any], rows_a: list[tuple[Any, ...]],
                rows_b: list[tuple[Any, ...]]) -> list[str]:
    """What differs between two campaigns' verdicts, one line each (empty: the same verdicts)."""
    out = [f"report field {k}: {json.dumps(a.get(k))} against {json.dumps(b.get(k))}"
           for k in VERDICT_FIELDS if a.get(k) != b.get(k)]
    if len(rows_a) != len(rows_b):
        out.append(f"verdict rows: {len(rows_a)} against {len(rows_b)}")
    only_a, only_b = set(rows_a) - set(rows_b), set(rows_b) - set(rows_a)
    out += [f"only in the first: {r}" for r in sorted(only_a, key=repr)[:10]]
    out += [f"only in the second: {r}" for r in sorted(only_b, key=repr)[:10]]
    return out


def line(name: str, rep: dict[str, Any]) -> str:
    """One row of the table: ops/s on the campaign's clock and on the wall clock."""
    ops = rep.get("ops_run") or 0
    return (f"| {name} | {rep['schedules_run']} | {ops} | {rep['seconds']:.1f} | {rep.get('ops_per_s') or 0:,.0f} "
            f"| {rep['wall']:.1f} | {ops / rep['wall']:,.0f} |").replace(",", " ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", default="reference", help="implementation, as for `wheelspec campaign --impl`")
    ap.add_argument("--kinds", default="timer,purgatory", help="campaign kinds (default timer,purgatory)")
    ap.add_argument("--schedules", type=int, default=2000, help="schedules per kind (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--chunk", type=int, default=100, help="seeds per range / Spark task (default 100)")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--workers", type=int, default=2, help="processes of the local pool (default 2)")
    ap.add_argument("--out", default="wheelspec-spark-vs-workers", help="folder of both campaigns' outputs")
    ap.add_argument("--timeout", type=float, default=7200, help="seconds each campaign may take (default 7200)")
    ap.add_argument("--json", metavar="FILE", help="also write both reports and the comparison as JSON")
    args = ap.parse_args(argv)
    base = Path(args.out)
    base.mkdir(parents=True, exist_ok=True)
    runs = {f"spark {args.master}": (["--engine", "spark", "--master", args.master], base / "spark"),
            f"local --workers {args.workers}": (["--engine", "local", "--workers", str(args.workers)], base / "local")}
    print(f"spark_vs_workers: {args.impl}, {args.schedules} schedules per kind ({args.kinds}) from seed "
          f"{args.seed}, chunk {args.chunk}; python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    reps = {name: campaign(engine, args, out) for name, (engine, out) in runs.items()}
    (a, (_, out_a)), (b, (_, out_b)) = runs.items()
    diff = differences(reps[a], reps[b], verdict_rows(out_a), verdict_rows(out_b))
    print("| engine | schedules | ops | campaign s | ops/s (campaign) | wall s | ops/s (wall) |")
    print("|---|---|---|---|---|---|---|")
    for name, rep in reps.items():
        print(line(name, rep))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("verdicts: the same" if not diff else "verdicts DIFFER:\n  " + "\n  ".join(diff))
    if args.json:
        Path(args.json).write_text(json.dumps({"reports": reps, "differences": diff}, indent=1))
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
