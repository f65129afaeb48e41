"""``wheelspec check`` and ``wheelspec replay``: the conformance runner's commands.

Light on purpose: :mod:`.cli` imports this module for every ``wheelspec`` invocation, so every
import beyond argparse happens inside ``run_check`` / ``run_replay``.

``wheelspec check`` with no arguments runs the shipped scenario corpus and a seeded campaign
(timer and purgatory schedules) against our implementations: the reference in-process and behind
protocol v1 in a subprocess, and the optimized engine.  Exit codes: 0 everything passed, 1 an
implementation violated its claimed semantics, 2 usage, configuration or adapter errors (the
reports written so far are kept).
"""

from __future__ import annotations

import argparse

DEFAULT_IMPLS = ("reference", "reference-subprocess", "optimized")
DEFAULT_SCHEDULES = 400


def configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", action="append", metavar="IMPL",
                   help="implementation to check (repeatable): reference, reference-subprocess, reference-mock, "
                        "optimized, optimized-subprocess, package.module:factory, or cmd:COMMAND (a subprocess "
                        f"speaking protocol v1, docs/PROTOCOL.md); default: {', '.join(DEFAULT_IMPLS)}")
    p.add_argument("--scenarios", metavar="DIR", help="scenario directory (default: the shipped corpus)")
    p.add_argument("--no-corpus", action="store_true", help="skip the scenario corpus")
    p.add_argument("--schedules", type=int, default=DEFAULT_SCHEDULES, metavar="N",
                   help=f"random schedules per campaign kind (default {DEFAULT_SCHEDULES}; 0 = no campaign)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="first seed (seeds S .. S+N-1; default 0)")
    p.add_argument("--kinds", default="timer,purgatory",
                   help="campaign kinds, comma separated (default timer,purgatory; purgatory only if offered)")
    p.add_argument("--out", default="wheelspec-out", metavar="DIR",
                   help="where shrunk counterexamples are saved (default ./wheelspec-out)")
    p.add_argument("--json", metavar="FILE", help="write a JSON report")
    p.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    p.add_argument("--trace-out", metavar="DIR",
                   help="also record every campaign schedule's history as a Parquet trace, one file per "
                        "implementation: DIR/<impl>.parquet (docs/TRACE_FORMAT.md; `wheelspec analyze DIR` reads it)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="per-request timeout for subprocess adapters (default 10)")
    p.add_argument("--start-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="handshake timeout for subprocess adapters (default 30)")
    p.add_argument("--max-failures", type=int, default=20, metavar="N",
                   help="stop a campaign after N failing seeds (each is shrunk; default 20)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failure")


def configure_replay(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a scenario file (for example a saved counterexample)")
    p.add_argument("--impl", default="reference", metavar="IMPL",
                   help="implementation (as for check; default reference)")
    p.add_argument("--json", metavar="FILE", help="write a JSON report")
    p.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")
    p.add_argument("--start-timeout", type=float, default=30.0, metavar="SECONDS")


def _console():
    from rich.console import Console

    c = Console(highlight=False)
    if not c.is_terminal:  # CI logs: wide enough that the summary table is not truncated
        c = Console(highlight=False, width=160)
    return c


def _kinds(text: str) -> list[str]:
    from wheelspec.conformance.check.campaign import KINDS
    from wheelspec.spec.errors import UserError

    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UserError(f"--kinds: unknown campaign kind {bad[0]!r} (known: {', '.join(KINDS)})")
    return kinds


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def check_impl(spec: str, args: argparse.Namespace, scenarios: list, kinds: list[str], progress=None,
               out_dir=None):
    """Run corpus and campaign against one implementation; returns its ImplReport (never raises
    for adapter errors: they are recorded in the report)."""
    from pathlib import Path

    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.adapters.subprocess_adapter import AdapterError
    from wheelspec.conformance.check.campaign import CampaignStats, run_seed_range
    from wheelspec.conformance.check.corpus import run_scenario
    from wheelspec.conformance.check.report import ImplReport
    from wheelspec.spec.errors import UserError

    rep = ImplReport(spec)
    tw = None
    try:
        factory = resolve(spec, timeout=args.timeout, start_timeout=args.start_timeout)
        adapter = factory()
    except UserError as e:
        rep.error = str(e)
        return rep
    task = None
    try:
        hello = adapter.hello()
        caps = hello.capabilities
        rep.name, rep.capabilities = hello.name, caps.to_dict()
        if caps.time != "virtual":
            raise UserError(f"{hello.name}: capabilities.time is \"real\": `wheelspec check` drives virtual "
                            f"time only; check a real-time adapter with `wheelspec realtime --impl ...` "
                            f"(docs/ADAPTERS.md, rt_run)")
        kinds_here = [k for k in kinds if k != "purgatory" or caps.purgatory]
        if not caps.timer:
            kinds_here = [k for k in kinds_here if k == "purgatory"]
        total = len(scenarios) + args.schedules * len(kinds_here)
        if progress is not None:
            task = progress.add_task(f"{spec}", total=total)
        for sc in scenarios:
            rep.scenarios.append(run_scenario(adapter, caps, sc))
            if progress is not None:
                progress.advance(task)
        import time

        if getattr(args, "trace_out", None):
            from wheelspec.conformance.traces.format import TraceWriter

            tw = TraceWriter(Path(args.trace_out) / f"{_safe(spec)}.parquet")
        t0 = time.perf_counter()
        failed = 0

        def on_seed(o):
            nonlocal failed
            if progress is not None:
                progress.advance(task)
            if not o.ok:
                failed += 1
                if o.counterexample is not None:
                    p = Path(out_dir) / _safe(spec) / f"{o.kind}-{o.seed}.json"
                    o.counterexample.save(p)
                    rep.counterexamples.append(str(p))

        for kind in kinds_here:
            seeds = range(args.seed, args.seed + args.schedules)

            def on_run(seed, cfg, result, kind=kind, tw=tw):
                assert tw is not None  # passed only when a trace is being written
                tw.add_schedule(result.history, impl=spec, kind=kind, seed=seed, config=cfg, profile=caps.profile)

            for seed in seeds:
                if failed >= args.max_failures:
                    break
                rep.campaign += run_seed_range(adapter, caps, kind, [seed], impl_name=_safe(spec), on_seed=on_seed,
                                               on_run=on_run if tw is not None else None)
        outs = rep.campaign
        rep.stats = CampaignStats(len(outs), sum(o.ops for o in outs), time.perf_counter() - t0,
                                  sum(not o.ok for o in outs))
    except AdapterError as e:
        rep.error = str(e)
    except UserError as e:
        rep.error = str(e)
    finally:
        if tw is not None:
            # Written whatever happened: the histories recorded so far are the user's.
            rep.trace = str(tw.close())
        try:
            adapter.close()
        except Exception:  # noqa: BLE001 - closing a broken adapter must not hide the finding
            pass
        if progress is not None and task is not None:
            progress.remove_task(task)
    return rep


def run_check(args: argparse.Namespace) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.conformance.check.report import (
        exit_code,
        print_summary,
        write_json,
        write_junit,
    )
    from wheelspec.spec.errors import UserError

    if args.schedules < 0:
        raise UserError(f"--schedules must be >= 0, got {args.schedules}")
    impls = args.impl or list(DEFAULT_IMPLS)
    kinds = _kinds(args.kinds)
    scenarios = [] if args.no_corpus else load_corpus(args.scenarios)
    console = _console()
    reports = []
    meta = {"command": "check", "impls": impls, "scenarios": len(scenarios), "schedules_per_kind": args.schedules,
            "first_seed": args.seed, "kinds": kinds}
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=True, disable=not console.is_terminal)
    try:
        with progress:
            for spec in impls:
                reports.append(check_impl(spec, args, scenarios, kinds, progress, args.out))
                # Partial results first: an interrupted or failing run still leaves its reports.
                if args.json:
                    write_json(args.json, reports, meta)
                if args.junit_xml:
                    write_junit(args.junit_xml, reports)
    finally:
        if args.json:
            write_json(args.json, reports, meta)
        if args.junit_xml:
            write_junit(args.junit_xml, reports)
    print_summary(console, reports, verbose=args.verbose)
    code = exit_code(reports)
    for r in reports:
        if r.error is not None:
            import sys

            print(f"wheelspec check: error: {r.error}", file=sys.stderr)
    return code


def run_replay(args: argparse.Namespace) -> int:
    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.adapters.subprocess_adapter import AdapterError
    from wheelspec.conformance.check.corpus import load, run_scenario
    from wheelspec.conformance.check.judge import claimed_profile
    from wheelspec.conformance.check.report import (
        ImplReport,
        exit_code,
        write_json,
        write_junit,
    )

    sc = load(args.file)
    console = _console()
    rep = ImplReport(args.impl)
    adapter = resolve(args.impl, timeout=args.timeout, start_timeout=args.start_timeout)()
    try:
        hello = adapter.hello()
        rep.name, rep.capabilities = hello.name, hello.capabilities.to_dict()
        res = run_scenario(adapter, hello.capabilities, sc)
        rep.scenarios.append(res)
        prof = claimed_profile(hello.capabilities, sc.config)
    except AdapterError as e:
        rep.error = str(e)
        raise
    finally:
        adapter.close()
        if args.json:
            write_json(args.json, [rep], {"command": "replay", "file": args.file})
        if args.junit_xml:
            write_junit(args.junit_xml, [rep])
    _print_replay(console, sc, res, hello.name, prof.describe())
    return exit_code([rep])


def _print_replay(console, sc, res, name: str, prof: str) -> None:
    from rich.table import Table

    from wheelspec.spec import show

    console.print(f"{sc.name} on {name} ({prof})", markup=False)
    console.print(f"config {sc.config.to_dict()}", markup=False)
    t = Table()
    t.add_column("#", justify="right")
    t.add_column("operation")
    t.add_column("response (events, result)")
    t.add_column("findings")
    by_step: dict[int | None, list[str]] = {}
    for f in res.failures:
        by_step.setdefault(f.step, []).append(show.finding(f))
    steps = res.run.steps if res.run is not None else []
    for i, op in enumerate(sc.ops):
        resp = show.response(steps[i].response) if i < len(steps) else ""
        t.add_row(str(i), show.op(op), resp, "\n".join(by_step.get(i, [])))
    console.print(t, markup=False)
    for m in by_step.get(None, []):
        console.print(m, markup=False)
    colour = {"pass": "green", "fail": "red", "n/a": "yellow"}[res.status]
    console.print(f"[{colour}]{res.status.upper()}[/] {sc.name}" + (f" ({res.note})" if res.note else ""))
