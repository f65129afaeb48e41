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

from wheelspec.conformance.cli.args import (
    count,
    describe,
    non_negative,
    writable_dir,
    writable_file,
)
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
from wheelspec.conformance.matrix.files import DEFAULT_OUT
from wheelspec.conformance.matrix.rows import UNAVAILABLE, is_users_row
from wheelspec.conformance.optional import available, install_hint
from wheelspec.spec.errors import UserError


def configure_matrix(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", action="append", metavar="IMPL",
                   help=f"a row (repeatable): one of {', '.join(VIRTUAL + REALTIME)}, or any implementation "
                        f"`wheelspec check --impl` takes (package.module:factory, cmd:COMMAND), judged as a "
                        f"virtual-time row (default: every built-in row)")
    p.add_argument("--schedules", type=non_negative, default=300, metavar="N",
                   help="timer campaign schedules per virtual implementation (default 300)")
    p.add_argument("--rt-runs", type=non_negative, default=3, metavar="N",
                   help="real-time schedules per real-time implementation (default 3)")
    p.add_argument("--rt-tasks", type=count, default=150, metavar="N",
                   help="tasks per real-time schedule (default 150)")
    p.add_argument("--slack", type=non_negative, default=250, metavar="MS",
                   help="real-time late-bound allowance, in ms (default 250)")
    p.add_argument("--out", type=writable_dir, default=DEFAULT_OUT, metavar="DIR",
                   help="where MATRIX.md (its generated part), matrix.html, matrix.json, matrix-lateness.png and "
                        f"counterexamples/ go (default ./{DEFAULT_OUT}). Only files the matrix wrote (they carry a "
                        "marker) are replaced; any other file in the way is refused")
    p.add_argument("--counterexamples", type=writable_dir, default=None, metavar="DIR",
                   help="where failures are saved (default OUT/counterexamples)")
    p.add_argument("--log-protocol", type=writable_file, metavar="FILE",
                   help="write every request to and response from subprocess adapters (cmd:..., *-subprocess) to FILE, "
                        "with timestamps and directions (docs/guides/KITS.md)")
    p.add_argument("--no-files", action="store_true", help="print the table only: write no file under --out")
    p.add_argument("--json", type=writable_file, metavar="FILE",
                   help="also write the matrix (as OUT/matrix.json) to FILE; - for stdout (the table then "
                        "goes to stderr)")
    describe(p, [
        ("wheelspec matrix",
         f"every built-in row; ./{DEFAULT_OUT}/MATRIX.md, matrix.html, matrix.json (about 60 s on 2 cores)"),
        ("wheelspec matrix --out docs/results",
         "the same into docs/results/ (how wheelspec's own docs/results/MATRIX.md is made, from the repository "
         "root)"),
        ("wheelspec matrix --impl reference --impl stdlib-sched --schedules 50 --no-files",
         "two rows, the table only"),
        ("wheelspec matrix --impl mytimer.adapter:factory --no-files --json -",
         "your timer as a row next to nothing else; the row as JSON on stdout"),
    ], ["0    the matrix was made; our own engines and your own --impl rows (package.module:factory, "
        "cmd:COMMAND) pass",
        "1    one of them fails a property or its claimed profile (the other built-in rows failing is what "
        "the matrix reports, not an error)"])


def run_matrix(args: argparse.Namespace) -> int:
    """Exit 0 when the matrix was made and our own engines and the user's own ``--impl`` rows
    (:func:`~wheelspec.conformance.matrix.rows.is_users_row`) pass: no FAIL cell, the claimed
    profile satisfied; 1 when one of them does not (the other built-in rows failing properties is
    what the matrix reports, not an error of the command); 2 when an implementation could not be
    run (missing Java or Netty...)."""
    names = list(dict.fromkeys(args.impl or VIRTUAL + REALTIME))
    for n in names:
        if n not in VIRTUAL + REALTIME:  # another implementation spec: refused now, not after the other rows
            from wheelspec.conformance.adapters import resolve

            try:
                resolve(n)
            except UserError as e:
                raise UserError(f"--impl: unknown implementation {n!r}: not a matrix row "
                                f"({', '.join(VIRTUAL + REALTIME)}), and {e}") from None
    for opt in ("schedules", "rt_runs", "rt_tasks"):
        if getattr(args, opt) < 1:
            raise UserError(f"--{opt.replace('_', '-')} must be >= 1, got {getattr(args, opt)}")
    from wheelspec.conformance.matrix import files

    out = Path(args.out)
    cx_dir = None if args.no_files else Path(args.counterexamples or out / "counterexamples")
    if not args.no_files:
        # refused before any work: a file in the way that the matrix did not write (files.claim)
        for target in (out / "MATRIX.md", out / "matrix.html", out / "matrix.json", out / "matrix-lateness.png"):
            files.claim(target)
    if cx_dir is not None:  # a fresh set: the last run's counterexamples would mislead; only those go
        files.clear_generated(cx_dir)
    t0 = time.perf_counter()
    rows = []

    def say(m: str) -> None:
        print(f"  {m}", file=sys.stderr)

    for n in names:
        if n not in REALTIME:
            rows.append(virtual_row(n, schedules=args.schedules, cx_dir=cx_dir, progress=say))
        else:
            say(f"{n}: real-time runs")
            rows.append(realtime_row(n, runs=args.rt_runs, tasks=args.rt_tasks, slack_ms=args.slack, cx_dir=cx_dir))
    cmd = ("wheelspec matrix" + (f" --schedules {args.schedules}" if args.schedules != 300 else "")
           + ("".join(f" --impl {n}" for n in names) if args.impl else "")
           + (f" --out {args.out}" if args.out != DEFAULT_OUT and not args.no_files else ""))
    meta = {"versions": versions(), "command": cmd, "seconds": time.perf_counter() - t0,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}
    from wheelspec.conformance.cli.output import human_to_stderr
    from wheelspec.conformance.cli.output import write_json as write_json_to
    from wheelspec.envelope import envelope

    doc = envelope("matrix", {"generated_by": files.GENERATED_BY, "meta": meta, "columns": list(COLUMNS),
                              "rows": [r.to_dict() for r in rows]}, exit_code=_exit_code(names, rows))
    print_table(rows, sys.stderr if human_to_stderr(args.json) else None)
    print_failures(rows, sys.stderr if human_to_stderr(args.json) else None)
    if args.json:
        write_json_to(args.json, doc)
    if not args.no_files:
        out.mkdir(parents=True, exist_ok=True)
        plot = left_out = None
        if available("matplotlib"):
            plot = "matrix-lateness.png" if write_plot(rows, files.claim(out / "matrix-lateness.png")) else None
        elif any(r.lateness_ms for r in rows):
            left_out = f"The lateness plot is left out: it needs the 'reports' extra ({install_hint('reports')})."
            print(f"wheelspec matrix: {left_out}", file=sys.stderr)
        if plot is None and files.is_generated(out / "matrix-lateness.png"):
            (out / "matrix-lateness.png").unlink()  # an earlier run's plot, of rows this page lacks
        files.claim(out / "matrix.html").write_text(html_page(rows, meta, plot, left_out))
        files.claim(out / "matrix.json").write_text(json.dumps(doc, indent=1) + "\n")
        update_markdown(out / "MATRIX.md", markdown(rows, meta))
        print(f"wrote {out / 'MATRIX.md'}, {out / 'matrix.html'}, {out / 'matrix.json'}"
              + (f", {out / plot}" if plot else ""), file=sys.stderr if human_to_stderr(args.json) else None)
    for r in rows:
        if r.cells and all(v == UNAVAILABLE for v in r.cells.values()):
            print(f"wheelspec matrix: {r.name}: {r.failures[0]}", file=sys.stderr)
    errors = [r for r in rows if any(v == "error" for v in r.cells.values())]
    if errors:
        for r in errors:
            print(f"wheelspec matrix: {r.name}: {r.failures[0]}", file=sys.stderr)
        return 2
    # Rows that decide the exit code: our engines, and the user's own --impl rows (a CI job adding
    # the matrix for its timer must go red when it fails); the other built-in rows are what the
    # matrix reports.  Rows are in the order of `names` (a real-time row's label may differ).
    ours = ("reference", "reference-mock", "optimized")
    failed = [r for n, r in zip(names, rows) if (n in ours or is_users_row(n)) and not row_passes(r)]
    for r in failed:
        if r.name not in ours:
            bad = [c for c in COLUMNS if r.cells.get(c) == "FAIL"]
            print(f"wheelspec matrix: {r.name}: fails " + (", ".join(bad) if bad else f"its claimed profile "
                                                            f"{r.claimed}") + " (exit 1)", file=sys.stderr)
    return 1 if failed else 0


def _exit_code(names: list[str], rows: list[Row]) -> int:
    """2 if a row met an error, 1 if a row that decides the exit code fails (see the end of
    :func:`run_matrix`), else 0: the report's ``exit_code`` and the command's agree."""
    if any(v == "error" for r in rows for v in r.cells.values()):
        return 2
    ours = ("reference", "reference-mock", "optimized")
    return 1 if any((n in ours or is_users_row(n)) and not row_passes(r) for n, r in zip(names, rows)) else 0


def row_passes(r: Row) -> bool:
    """A row satisfies the profile it claims and has no FAIL cell."""
    return r.claimed in r.satisfies and "FAIL" not in r.cells.values()


def print_failures(rows: list[Row], file: Any = None) -> None:
    """The failures under the table, one line per shape (the grouping of the Markdown and the
    HTML page: :func:`wheelspec.conformance.matrix.render.grouped_failures`)."""
    from wheelspec.conformance.matrix.render import failure_lines

    lines = failure_lines(rows)
    if lines:
        shapes = f"{len(lines)} shape" + ("s" if len(lines) > 1 else "")
        print(f"failures, grouped by shape ({shapes}):", file=file or sys.stdout)
        for line in lines:
            print(f"  {line}", file=file or sys.stdout)


def print_table(rows: list[Row], file: Any = None) -> None:
    from rich.table import Table

    from wheelspec.conformance.cli.output import console

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
    console(file=file or sys.stdout).print(t)  # on a pipe, 200 columns: the whole table
