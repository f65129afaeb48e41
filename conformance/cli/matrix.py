"""``wheelspec matrix``: build the conformance matrix (:mod:`wheelspec.conformance.matrix`) and write
it to the terminal, Markdown, HTML and JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from typing import Any

from wheelspec.conformance.cli.args import comma_list, count, non_negative, writable_dir
from wheelspec.conformance.matrix import (
    COLUMNS,
    REALTIME,
    VIRTUAL,
    Row,
    html_page,
    markdown,
    realtime_row,
    update_markdown,
    versions,
    virtual_row,
    write_plot,
)
from wheelspec.spec.errors import UserError


def configure_matrix(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impls", type=comma_list(), default=",".join(VIRTUAL + REALTIME), metavar="A,B",
                   help=f"implementations (default all: {', '.join(VIRTUAL + REALTIME)})")
    p.add_argument("--schedules", type=non_negative, default=300, metavar="N",
                   help="timer campaign schedules per virtual implementation (default 300)")
    p.add_argument("--rt-runs", type=non_negative, default=3, metavar="N",
                   help="real-time schedules per real-time implementation (default 3)")
    p.add_argument("--rt-tasks", type=count, default=150, metavar="N",
                   help="tasks per real-time schedule (default 150)")
    p.add_argument("--slack", type=non_negative, default=250, metavar="MS",
                   help="real-time late-bound allowance (default 250)")
    p.add_argument("--out", type=writable_dir, default="docs", metavar="DIR",
                   help="where MATRIX.md (its generated part) goes; matrix.html, matrix.json, matrix-lateness.png "
                        "and counterexamples/ go to OUT/results (default docs)")
    p.add_argument("--counterexamples", type=writable_dir, default=None, metavar="DIR",
                   help="where failures are saved (default OUT/results/counterexamples)")
    p.add_argument("--no-files", action="store_true", help="print the table only")


def run_matrix(args: argparse.Namespace) -> int:
    """Exit 0 when the matrix was made and our own engines satisfy the profiles they claim; 1 when
    one of ours does not (third-party timers failing properties is what the matrix reports, not an
    error of the command); 2 when an implementation could not be run (missing Java or Netty...)."""
    names = [n.strip() for n in args.impls.split(",") if n.strip()]
    for n in names:
        if n not in VIRTUAL + REALTIME:
            raise UserError(f"--impls: unknown implementation {n!r} (known: {', '.join(VIRTUAL + REALTIME)})")
    for opt in ("schedules", "rt_runs", "rt_tasks"):
        if getattr(args, opt) < 1:
            raise UserError(f"--{opt.replace('_', '-')} must be >= 1, got {getattr(args, opt)}")
    out = Path(args.out)
    results = out / "results"  # generated files, apart from the hand-written pages
    cx_dir = None if args.no_files else Path(args.counterexamples or results / "counterexamples")
    if cx_dir is not None and cx_dir.exists():  # a fresh set: stale counterexamples would mislead
        import shutil
        shutil.rmtree(cx_dir)
    t0 = time.perf_counter()
    rows = []

    def say(m: str) -> None:
        print(f"  {m}", file=sys.stderr)

    for n in names:
        if n in VIRTUAL:
            rows.append(virtual_row(n, schedules=args.schedules, cx_dir=cx_dir, progress=say))
        else:
            say(f"{n}: real-time runs")
            rows.append(realtime_row(n, runs=args.rt_runs, tasks=args.rt_tasks, slack_ms=args.slack, cx_dir=cx_dir))
    cmd = ("wheelspec matrix" + (f" --schedules {args.schedules}" if args.schedules != 300 else "")
           + (f" --impls {args.impls}" if args.impls != ",".join(VIRTUAL + REALTIME) else ""))
    meta = {"versions": versions(), "command": cmd, "seconds": time.perf_counter() - t0,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}
    print_table(rows)
    if not args.no_files:
        results.mkdir(parents=True, exist_ok=True)
        plot = "matrix-lateness.png" if write_plot(rows, results / "matrix-lateness.png") else None
        (results / "matrix.html").write_text(html_page(rows, meta, plot))
        (results / "matrix.json").write_text(json.dumps({"meta": meta, "columns": list(COLUMNS),
                                                         "rows": [r.to_dict() for r in rows]}, indent=1) + "\n")
        update_markdown(out / "MATRIX.md", markdown(rows, meta))
        print(f"wrote {out / 'MATRIX.md'}, {results / 'matrix.html'}, {results / 'matrix.json'}"
              + (f", {results / plot}" if plot else ""))
    errors = [r for r in rows if any(v == "error" for v in r.cells.values())]
    if errors:
        for r in errors:
            print(f"wheelspec matrix: {r.name}: {r.failures[0]}", file=sys.stderr)
        return 2
    ours = ("reference", "reference-mock", "optimized")
    ok = all(r.claimed in r.satisfies and "FAIL" not in r.cells.values() for r in rows if r.name in ours)
    return 0 if ok else 1


def print_table(rows: list[Row], file: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="wheelspec conformance matrix")
    for c in ("implementation", "mode", "claims", *COLUMNS, "satisfies"):
        t.add_column(c, overflow="fold")
    style = {"pass": "green", "FAIL": "bold red"}
    for r in rows:
        cells = []
        for c in COLUMNS:
            v = r.cells.get(c, "n/a")
            note = r.notes.get(c)
            cells.append(f"[{style.get(v, 'dim')}]{v}[/]" + (f"\n{note}" if note else ""))
        t.add_row(r.name, r.mode, r.claimed, *cells, ", ".join(r.satisfies) or "none")
    Console(file=file or sys.stdout, width=200).print(t)
