"""``wheelspec prove``: run every lemma and bounded check, print a table, exit 0 only if all hold.

Every lemma of every group of :data:`wheelspec.spec.proof_status.GROUPS` (the arithmetic, the
wheel's induction for every configuration, the purgatory's proof) must be *proven*, every hazard
lemma must yield its expected *counterexample*, the wheel's invariant must be satisfiable at three
levels (``wi-witness``), and each transition-system configuration of :mod:`wheelspec.spec.bmc`
must pass the bounded search and the induction.  ``--mutations`` additionally runs every lemma
under the rule mutation that targets it and requires a counterexample (the proofs are not
vacuous).  After the results, a table gives every registry property's proof status.

This module is imported for every ``wheelspec`` invocation (the CLI builds all subparsers), so Z3
is imported only inside :func:`run_prove`.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.cli.args import QUIET_HELP, add_verbosity, describe, seconds, writable_file
from wheelspec.spec.errors import UserError


def configure_prove(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", metavar="NAME", action="append", default=[],
                        help="run only the lemma or check with this name (repeatable)")
    parser.add_argument("--mutations", action="store_true",
                        help="also break each lemma's rule and require a counterexample")
    parser.add_argument("--no-bmc", action="store_true", help="skip the transition-system checks")
    parser.add_argument("--solver-seconds", type=seconds, default=20.0, metavar="SECONDS",
                        help="Z3's budget per query, in seconds (default 20)")
    add_verbosity(parser, "print every counterexample and trace, not only unexpected ones", QUIET_HELP)
    parser.add_argument("--json", type=writable_file, metavar="FILE",
                        help="write every result as JSON (- for stdout; the table then goes to stderr)")
    describe(parser, [
        ("wheelspec prove", "every lemma and bounded check (a few minutes)"),
        ("wheelspec prove --mutations", "also break each lemma's rule and require a counterexample"),
        ("wheelspec prove --only placement --solver-seconds 60 --json -",
         "one lemma or check (a wrong name lists them) with a longer solver budget; JSON on stdout"),
    ], ["0    every lemma proven, every hazard lemma's counterexample found, every bounded check passed",
        "1    an unexpected result (printed with its counterexample or trace)"])


def run_prove(args: argparse.Namespace) -> int:
    from rich.table import Table

    from wheelspec.spec import bmc, lemmas, proof_status  # imports z3

    if args.solver_seconds < 0.001:
        raise UserError(f"--solver-seconds must be >= 0.001 second, got {args.solver_seconds}")
    known = {lm.name for lm in proof_status.all_lemmas()} | set(_witnesses()) \
        | {f"bmc-{c.tick}x{c.wheel_size}x{c.levels}" for c in bmc.CONFIGS} \
        | {f"induction-{c.tick}x{c.wheel_size}x{c.levels}" for c in bmc.CONFIGS}
    for name in args.only:
        if name not in known:
            raise UserError(f"--only {name!r}: no such lemma or check (known: {', '.join(sorted(known))})")

    def wanted(name: str) -> bool:
        return not args.only or name in args.only

    from wheelspec.conformance.cli.output import console as make_console
    from wheelspec.conformance.cli.output import human_to_stderr, write_json
    from wheelspec.envelope import envelope

    # Piped output (CI logs) gets a wide table instead of rich's 80-column default; no emoji.
    console = make_console(stderr=human_to_stderr(args.json))
    records: list[dict[str, Any]] = []
    table = Table(title="wheelspec prove: lemmas and bounded checks (Z3 " + _z3_version() + ")")
    table.add_column("name")
    table.add_column("statement", overflow="fold")
    table.add_column("result")
    table.add_column("expected")
    table.add_column("seconds", justify="right")
    details: list[str] = []
    failures = 0
    t0 = time.perf_counter()
    ms = max(1, round(args.solver_seconds * 1000))

    def row(name: str, statement: str, result: str, expected: str, seconds: float, extra: list[str]) -> None:
        nonlocal failures
        ok = result == expected
        failures += not ok
        records.append({"name": name.strip(), "statement": statement, "result": result, "expected": expected,
                        "ok": ok, "seconds": round(seconds, 3), "details": extra})
        style = "green" if ok else "bold red"
        table.add_row(name, statement, f"[{style}]{result}[/{style}]", expected, f"{seconds:.2f}")
        if extra and (args.verbose or not ok):
            details.append(f"{name} ({result}):")
            details.extend("    " + x for x in extra)

    # Every group: the arithmetic (with arith: the kernels' reciprocal division), the wheel's
    # induction, the purgatory's proof -- each with the mutations its lemmas name.
    for lm, mutations in ((lm, muts) for _, group, muts in proof_status.GROUPS for lm in group):
        if not wanted(lm.name):
            continue
        o = lemmas.run_lemma(lm, timeout_ms=ms)
        row(o.name, o.statement, o.result, o.expected, o.seconds,
            [o.describe_counterexample()] if o.counterexample else ([o.reason] if o.reason else []))
        if args.mutations and lm.mutation:
            rules, what = mutations[lm.mutation]
            m = lemmas.run_lemma(lm, rules, timeout_ms=ms)
            row(f"  {lm.name} / {lm.mutation}", f"mutated: {what}", m.result, "counterexample", m.seconds,
                [m.describe_counterexample()] if m.counterexample else ([m.reason] if m.reason else []))
            if m.result == "counterexample" and not args.verbose:
                # The witness that the proof is not vacuous, printed under --mutations even without -v.
                details.append(f"{lm.name} / {lm.mutation} (counterexample): {m.describe_counterexample()}")
    for name, (statement, find) in _witnesses().items():
        if not wanted(name):
            continue
        # Non-vacuous: the inductive invariant holds in a reachable, non-trivial state.
        w0 = time.perf_counter()
        found, model = find()
        text = ", ".join(f"{k}={v}" for k, v in model.items())
        row(name, statement, found, "sat", time.perf_counter() - w0, [text] if text else [])
        if text and not args.verbose:
            details.append(f"{name} (sat): {text}")
    if not args.no_bmc:
        for cfg in bmc.CONFIGS:
            tag = f"{cfg.tick}x{cfg.wheel_size}x{cfg.levels}"
            if wanted(f"bmc-{tag}"):
                c = bmc.bmc(cfg, bmc.BMC_DEPTH, timeout_ms=ms * 3)
                row(c.name, c.statement, c.result, c.expected, c.seconds, c.trace or ([c.reason] if c.reason else []))
            if wanted(f"induction-{tag}"):
                c = bmc.k_induction(cfg, timeout_ms=ms * 3)
                row(c.name, c.statement, c.result, c.expected, c.seconds, c.trace or ([c.reason] if c.reason else []))
    console.print(table)
    status = _status_table(console)
    for line in details:
        console.print(line, markup=False, highlight=False)
    total = time.perf_counter() - t0
    verdict = "all hold" if not failures else f"{failures} unexpected result(s)"
    console.print(f"{verdict}; {total:.1f} s in total", markup=False, highlight=False)
    if args.json:
        write_json(args.json, envelope("prove", {"z3": _z3_version(), "results": records,
                                                 "seconds": round(total, 3), "properties": status},
                                       exit_code=0 if not failures else 1))
    return 0 if not failures else 1


def _witnesses() -> dict[str, tuple[str, Callable[[], tuple[str, dict[str, int]]]]]:
    """The witness rows, name -> (statement, search): each inductive invariant of the wheel and the
    purgatory satisfied in a reachable non-trivial state (the proofs are not vacuous)."""
    from wheelspec.spec import purgatory_proof, wheel_induction

    rows: dict[str, tuple[str, Callable[[], tuple[str, dict[str, int]]]]] = {
        "wi-witness": ("Inv(T) satisfiable for tasks at levels 0, 1, 2 of one drained wheel state",
                       wheel_induction.witness)}
    for lemma in purgatory_proof.TARGETS:
        statement = f"{lemma}'s invariant holds in a non-trivial state reached by at most 8 Kafka steps"
        rows[f"{lemma}-witness"] = (statement, functools.partial(purgatory_proof.witness, lemma))
    return rows


def _status_table(console: Any) -> list[dict[str, Any]]:
    """Print every registry property's proof status (spec/proof_status.py); return it as records."""
    from rich.table import Table

    from wheelspec.spec import proof_status

    table = Table(title="wheelspec prove: proof status of every registry property")
    for col in ("property", "judge", "status", "by"):
        table.add_column(col, overflow="fold")
    records = []
    for s in proof_status.statuses():
        table.add_row(s.prop, s.judge, s.status, s.evidence())
        records.append({"property": s.prop, "judge": s.judge, "status": s.status, "lemmas": list(s.lemmas),
                        "bounded": list(s.bounded), "limits": list(s.limits)})
    console.print(table)
    return records


def _z3_version() -> str:
    import z3

    v: Any = z3.get_version_string()
    return str(v)
