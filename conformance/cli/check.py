"""``wheelspec check`` and ``wheelspec replay``: the conformance runner's commands.

Light on purpose: :mod:`wheelspec.conformance.cli` imports this module for every ``wheelspec``
invocation, so every import beyond argparse happens inside ``run_check`` / ``run_replay``.

``wheelspec check`` with no arguments runs the shipped scenario corpus and a seeded campaign
(timer and purgatory schedules) against our implementations: the reference in-process and behind
the adapter protocol in a subprocess, and the optimized engine.  Exit codes: 0 everything passed, 1 an
implementation violated its claimed semantics, 2 usage, configuration or adapter errors, 130 / 143
interrupted by SIGINT / SIGTERM.  Whatever stops a run, the reports (terminal, ``--json``,
``--junit-xml``) hold every verdict reached before it, for every implementation: the one being
checked is marked incomplete, those not reached "not run", and a campaign kind cut short (by its
``--max-failures`` budget, an adapter error or the signal) is listed with where and why.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from wheelspec.conformance.check.defaults import DEFAULT_IMPLS, DEFAULT_SCHEDULES, ORACLE_CHOICES, ORACLE_HELP
from wheelspec.conformance.cli.args import (
    QUIET_HELP,
    Once,
    accepted_property,
    add_verbosity,
    add_write,
    comma_list,
    count,
    describe,
    non_negative,
    seconds,
    seed,
    writable_dir,
    writable_file,
)

if TYPE_CHECKING:  # only for annotations: this module imports nothing heavy at load time
    from wheelspec.conformance.adapters.protocol import Capabilities, Config
    from wheelspec.conformance.check.corpus import Scenario
    from wheelspec.conformance.check.session import CheckOptions



def configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", action="append", metavar="IMPL",
                   help="implementation to check (repeatable): reference, reference-subprocess, reference-mock, "
                        "optimized, optimized-subprocess, package.module:factory, or cmd:COMMAND (a subprocess "
                        f"speaking the adapter protocol, docs/guides/PROTOCOL.md); default: {', '.join(DEFAULT_IMPLS)}")
    p.add_argument("--scenarios", action="append", metavar="DIR",
                   help="scenario directory (repeatable: the directories add up; default: the shipped corpus)")
    p.add_argument("--no-corpus", action="store_true", help="skip the scenario corpus")
    p.add_argument("--schedules", type=non_negative, default=DEFAULT_SCHEDULES, metavar="N",
                   help=f"random schedules per campaign kind (default {DEFAULT_SCHEDULES}; 0 = no campaign)")
    p.add_argument("--seed", type=seed, default=0, metavar="SEED",
                   help="first seed (seeds SEED .. SEED+N-1; default 0)")
    p.add_argument("--kinds", type=comma_list(), default="timer,purgatory", metavar="KINDS",
                   help="campaign kinds, comma separated (default timer,purgatory; purgatory only if offered)")
    p.add_argument("--out", type=writable_dir, default="wheelspec-out", metavar="DIR",
                   help="where shrunk counterexamples are saved (default ./wheelspec-out)")
    p.add_argument("--json", type=writable_file, metavar="FILE", help="write a JSON report (- for stdout)")
    p.add_argument("--junit-xml", type=writable_file, metavar="FILE", help="write a JUnit XML report (- for stdout)")
    add_write(p, {"traces": ("trace_out", writable_dir,
                             "record every campaign schedule's history as a Parquet trace, one file per "
                             "implementation: PATH/<impl>.parquet (docs/guides/TRACE_FORMAT.md; `wheelspec "
                             "analyze PATH` reads it)")})
    p.add_argument("--timeout", type=seconds, default=10.0, metavar="SECONDS",
                   help="per-request timeout for subprocess adapters (default 10)")
    p.add_argument("--start-timeout", type=seconds, default=30.0, metavar="SECONDS",
                   help="handshake timeout for subprocess adapters (default 30)")
    p.add_argument("--max-failures", type=count, default=20, metavar="N",
                   help="failure budget per campaign kind: a kind stops after N failing seeds (each is "
                        "shrunk) and the report says so; the other kinds keep theirs (N >= 1; default 20). "
                        "A seed failing only --accept'ed properties spends none")
    p.add_argument("--accept", action="append", type=accepted_property, metavar="PROP",
                   help="a property whose failures are a known, documented deviation (repeatable): its "
                        "failures are listed and counted as accepted, and the exit code and verdicts depend "
                        "on the other properties only (an unknown name is refused; the names: spec/properties.py)")
    p.add_argument("--ranges", choices=("bounded", "unbounded"), metavar="MODE",
                   help="bounded or unbounded: unbounded means the implementation accepts any value by "
                        "design; leave out-of-range requests out of its schedules and report property ranges "
                        "as not judged (default: what its capabilities declare, else bounded)")
    p.add_argument("--log-protocol", type=writable_file, metavar="FILE",
                   help="write every request to and response from subprocess adapters (cmd:..., *-subprocess) to FILE, "
                        "with timestamps and directions (docs/guides/KITS.md)")
    p.add_argument("--workers", type=workers, default=1, metavar="N",
                   help="judge the campaign's seeds on N processes, each with its own adapter ('auto': one per "
                        "core; default 1). The reports are the same as with one: outcomes in seed order, the "
                        "failure budget stopping a kind at the same seed")
    p.add_argument("--oracle", choices=ORACLE_CHOICES, default="compiled", metavar="ORACLE",
                   help=ORACLE_HELP)
    add_verbosity(p, "list every failure", QUIET_HELP)
    describe(p, [
        ("wheelspec check", "the shipped corpus and 400 schedules per kind against our implementations"),
        ("wheelspec check --impl mytimer.adapter:factory --schedules 1000",
         "your timer (a Python factory returning an adapter, docs/guides/ADAPTERS.md)"),
        ("wheelspec check --impl 'cmd:java -jar mytimer.jar' --json report.json --junit-xml report.xml",
         "a timer in another language speaking the adapter protocol (docs/guides/PROTOCOL.md); reports for CI"),
        ("wheelspec check --impl 'cmd:./mytimer' --schedules 20000 --workers auto",
         "a longer campaign, its seeds judged on every core"),
        ("wheelspec check --impl optimized --scenarios my-scenarios/ --scenarios more/ --json -",
         "two scenario directories; the JSON report on stdout"),
        ("wheelspec check --impl mytimer.adapter:factory --accept well-formed",
         "judge the rest when a deviation is known and documented (its failures listed as accepted)"),
    ], ["0    every implementation satisfied the profile it claims (apart from --accept'ed properties)",
        "1    an implementation violated its claimed semantics (counterexamples saved under --out; "
        "each failing property is listed with its smallest counterexample)"])


def configure_replay(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a scenario file (for example a saved counterexample)")
    p.add_argument("--impl", default=None, metavar="IMPL", action=Once,
                   help="implementation (as for check; default: the one a saved counterexample records, "
                        "origin.impl_spec; a file that records none, such as a corpus scenario, needs --impl, "
                        "and --impl reference judges any file against the reference)")
    p.add_argument("--json", type=writable_file, metavar="FILE", help="write a JSON report (- for stdout)")
    p.add_argument("--junit-xml", type=writable_file, metavar="FILE", help="write a JUnit XML report (- for stdout)")
    p.add_argument("--timeout", type=seconds, default=10.0, metavar="SECONDS",
                   help="per-request timeout for subprocess adapters (default 10)")
    p.add_argument("--start-timeout", type=seconds, default=30.0, metavar="SECONDS",
                   help="handshake timeout for subprocess adapters (default 30)")
    p.add_argument("--log-protocol", type=writable_file, metavar="FILE",
                   help="write every request to and response from subprocess adapters (cmd:..., *-subprocess) to FILE, "
                        "with timestamps and directions (docs/guides/KITS.md)")
    add_verbosity(p, "print every step (a scenario longer than 200 steps shows only the steps around each "
                     "finding)", QUIET_HELP)
    describe(p, [
        ("wheelspec replay wheelspec-out/optimized/timer-17.json",
         "replay a saved counterexample step by step, with the findings, on the implementation it failed on"),
        ("wheelspec replay wheelspec-out/optimized/timer-17.json --impl reference",
         "the same file judged against the reference"),
        ("wheelspec replay my-scenario.json --impl mytimer.adapter:factory --json -", "the verdict as JSON on stdout"),
    ], ["0    the scenario's expectations hold", "1    a finding (a violated property or expectation)",
        "2    also: no --impl and the file records no implementation, or the one it records cannot be rebuilt"])


def workers(text: str) -> int:
    """``--workers``: an integer >= 1, or ``auto`` for the number of cores this process may use."""
    if text.strip().lower() == "auto":
        import os

        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    return count(text)


workers.__name__ = "integer >= 1 or auto"


def _console(args: argparse.Namespace):
    from wheelspec.conformance.cli.output import console, human_to_stderr

    # emoji=False: an --impl text such as `mytimer.adapter:factory:` or a scenario name is text,
    # never an emoji code.  Markup is escaped (or turned off) where user or adapter text is printed.
    # With a report on stdout (--json -), the terminal output goes to stderr.
    return console(stderr=human_to_stderr(args.json, args.junit_xml))


def _one_stdout_report(args: argparse.Namespace) -> None:
    from wheelspec.spec.errors import UserError

    if args.json == "-" and args.junit_xml == "-":
        raise UserError("--json - and --junit-xml - both ask for stdout: give one of them a FILE")


def _load_scenarios(dirs: list[str] | None) -> list:
    """The scenarios of every ``--scenarios`` directory (the shipped corpus if none), names unique
    across them (a name identifies a scenario in the reports)."""
    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.spec.errors import UserError

    out: list = []
    where: dict[str, str | None] = {}
    todo: list[str | None] = list(dirs) if dirs else [None]   # None: the shipped corpus
    for d in todo:
        for sc in load_corpus(d):
            if sc.name in where:
                raise UserError(f"{sc.path}: scenario name {sc.name!r} is also used by {where[sc.name]}")
            where[sc.name] = sc.path
            out.append(sc)
    return out


def _kinds(text: str) -> list[str]:
    from wheelspec.conformance.check.generate import KINDS
    from wheelspec.spec.errors import UserError

    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UserError(f"--kinds: unknown campaign kind {bad[0]!r} (known: {', '.join(KINDS)})")
    return kinds


def check_options(args: argparse.Namespace) -> CheckOptions:
    """How ``wheelspec check``'s parsed ``args`` ask each implementation to be checked."""
    from wheelspec.conformance.check.session import CheckOptions

    return CheckOptions(schedules=args.schedules, seed=args.seed, max_failures=args.max_failures,
                        timeout=args.timeout, start_timeout=args.start_timeout, ranges=args.ranges,
                        accept=tuple(dict.fromkeys(args.accept or ())), workers=args.workers,
                        trace_out=args.trace_out, out=args.out)


def _write_reports(args: argparse.Namespace, reports: list, meta: dict, stop=None, *, final: bool = True) -> None:
    """The --json and --junit-xml reports; a report to stdout (``-``) is written only when ``final``
    (a file is rewritten with the partial results after each implementation)."""
    from wheelspec.conformance.check.report import write_json, write_junit
    from wheelspec.conformance.interrupt import deferred

    # Both files or neither reflect a state: a signal waits until the pair is written.
    with deferred():
        if args.json and (final or args.json != "-"):
            write_json(args.json, reports, meta, stop)
        if args.junit_xml and (final or args.junit_xml != "-"):
            write_junit(args.junit_xml, reports, stop)


def run_check(args: argparse.Namespace) -> int:
    import sys

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from wheelspec.conformance.check.report import ImplReport, exit_code, print_summary
    from wheelspec.conformance.check.session import check_one
    from wheelspec.conformance.interrupt import as_interrupted
    from wheelspec.spec.errors import Bug, UserError
    from wheelspec.spec.show import printable

    if args.schedules < 0:
        raise UserError(f"--schedules must be >= 0, got {args.schedules}")
    if args.max_failures < 1:
        raise UserError(f"--max-failures must be >= 1 (failing schedules per campaign kind before that kind "
                        f"stops), got {args.max_failures}")
    _one_stdout_report(args)
    from wheelspec.conformance.check import compiled_oracle

    compiled_oracle.use(args.oracle)  # the environment carries it to --workers' processes
    impls = args.impl or list(DEFAULT_IMPLS)
    kinds = _kinds(args.kinds)
    scenarios = [] if args.no_corpus else _load_scenarios(args.scenarios)
    console = _console(args)
    # Every implementation has its report from the start: one the run never reached says "not run".
    opts = check_options(args)
    reports = [ImplReport(impl, started=False, accept=opts.accept) for impl in impls]
    meta = {"command": "check", "impls": impls, "scenarios": len(scenarios), "schedules_per_kind": args.schedules,
            "first_seed": args.seed, "kinds": kinds, "max_failures_per_kind": args.max_failures,
            "accept": list(opts.accept)}
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=True, disable=not console.is_terminal)
    stop = None
    try:
        with progress:
            for rep in reports:
                try:
                    check_one(rep.impl, opts, scenarios, kinds, rep=rep, progress=progress)
                except Bug as e:  # the reports must not read as a verdict on what it cut short
                    rep.bug, rep.incomplete = True, True
                    rep.error = f"a bug in wheelspec stopped this check (not a verdict): {printable(str(e))}"
                    raise
                # Partial results first: a run killed outright (SIGKILL) still leaves these.
                _write_reports(args, reports, meta, final=False)
    except KeyboardInterrupt as e:  # SIGINT, or SIGTERM through conformance.interrupt
        stop = as_interrupted(e)
    finally:
        _write_reports(args, reports, meta, stop)
    # An adapter error is said once, on stderr (the table marks its implementation ERROR).
    print_summary(console, reports, verbose=args.verbose, stop=stop, errors=False)
    for r in reports:
        if r.error is not None:
            print(f"wheelspec check: error: {printable(r.error)}", file=sys.stderr)
    if stop is not None:
        raise stop  # main() says "interrupted by SIG..." and exits 128 + signal
    return exit_code(reports)


def _replay_impl(given: str | None, sc: Scenario, path: str) -> tuple[str, bool]:
    """The implementation ``wheelspec replay`` judges and whether the file recorded it: ``--impl``
    if given, else the exact ``--impl`` text a saved counterexample records (``origin.impl_spec``).
    A file that records none is a one-line :class:`UserError`: replaying it on some default
    implementation would give a verdict about an implementation the user did not name."""
    from wheelspec.spec.errors import UserError

    if given is not None:
        return given, False
    impl = sc.recorded_impl()
    if impl is not None:
        return impl, True
    folder = (sc.origin or {}).get("impl")
    if isinstance(folder, str) and folder:
        raise UserError(f"{path} records only the folder name {folder!r} of its implementation, not the --impl "
                        f"text that rebuilds it: give --impl")
    raise UserError(f"{path} records no implementation: give --impl (--impl reference judges it against the "
                    f"reference)")


def _open_impl(impl: str, recorded: bool, args: argparse.Namespace) -> tuple[Any, Any]:
    """An adapter of ``impl`` and its hello.  An implementation recorded in the file that cannot be
    rebuilt (a module that does not import, a command that does not start or answer) is a
    one-line :class:`UserError` naming the file and the recorded ``--impl`` text."""
    from wheelspec.conformance.adapters import resolve
    from wheelspec.spec.errors import UserError

    adapter = None
    try:
        adapter = resolve(impl, timeout=args.timeout, start_timeout=args.start_timeout)()
        return adapter, adapter.hello()
    except BaseException as e:
        if adapter is not None:
            adapter.close()
        if recorded and isinstance(e, UserError):
            raise UserError(f"{args.file}: cannot rebuild the implementation it records (--impl {impl!r}): {e}; "
                            f"give --impl") from None
        raise


def run_replay(args: argparse.Namespace) -> int:
    from wheelspec.conformance.check.corpus import load, run_scenario
    from wheelspec.conformance.check.judge import claimed_profile
    from wheelspec.conformance.check.report import ImplReport, exit_code
    from wheelspec.conformance.interrupt import as_interrupted
    from wheelspec.spec.errors import Bug, UserError
    from wheelspec.spec.show import printable

    _one_stdout_report(args)
    from wheelspec.conformance.check import compiled_oracle

    compiled_oracle.use("reference")  # a replay is judged by the reference itself
    console = _console(args)
    rep = ImplReport(args.impl or "", incomplete=True)  # until the scenario's verdict is in
    meta = {"command": "replay", "file": args.file}
    stop = sc = adapter = None
    try:
        loaded = load(args.file)
        # A file that does not load, or names no implementation, is a usage error, not a report.
        impl, recorded = _replay_impl(args.impl, loaded, args.file)
        sc, rep.impl = loaded, impl
        meta.update(impl=impl, impl_from="file" if recorded else "--impl")
        adapter, hello = _open_impl(impl, recorded, args)
        rep.name, rep.capabilities = hello.name, hello.capabilities.to_dict()
        res = run_scenario(adapter, hello.capabilities, sc)
        rep.scenarios.append(res)
        rep.incomplete = False
        prof = claimed_profile(hello.capabilities, sc.config)
    except UserError as e:  # an adapter error, or an --impl that does not resolve
        rep.error, rep.incomplete = str(e), False
        raise
    except Bug as e:  # the report must not read as a verdict
        rep.bug, rep.error = True, f"a bug in wheelspec stopped this replay (not a verdict): {printable(str(e))}"
        raise
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        raise stop from None
    finally:
        if adapter is not None:
            adapter.close()
        if sc is not None or stop is not None:
            _write_reports(args, [rep], meta, stop)
    _print_replay(console, sc, res, hello.name, prof.describe(), full=args.verbose,
                  impl=impl, recorded=recorded, caps=hello.capabilities)
    return exit_code([rep])


#: Above this many steps `wheelspec replay` prints only the steps around each finding (a
#: 300 000-step table takes minutes to draw and no one reads it); ``-v`` prints them all.
FULL_TABLE_STEPS = 200
#: Steps shown on each side of a finding (and at each end of a run without findings) in a long replay.
CONTEXT_STEPS = 5


def _shown_steps(n: int, finding_steps: set[int], full: bool) -> list[int]:
    """The step indices a replay table shows: all, or those within CONTEXT_STEPS of a finding
    (the first and last CONTEXT_STEPS * 2 if there is none)."""
    if full or n <= FULL_TABLE_STEPS:
        return list(range(n))
    anchors = sorted(s for s in finding_steps if 0 <= s < n) or [0, n - 1]
    keep: set[int] = set()
    for a in anchors:
        keep.update(range(max(0, a - CONTEXT_STEPS), min(n, a + CONTEXT_STEPS + 1)))
    if anchors == [0, n - 1]:
        keep.update(range(min(n, 2 * CONTEXT_STEPS)))
        keep.update(range(max(0, n - 2 * CONTEXT_STEPS), n))
    return sorted(keep)


def config_line(config: Config, caps: Capabilities | None) -> str:
    """The replay header's configuration: what the implementation runs (``caps.effective``), so a
    fixed ``tick_ms`` / ``wheel_size`` it declares shows instead of the file's, which is named too."""
    eff = caps.effective(config) if caps is not None else config
    line = f"config {eff.to_dict()}"
    fixed = [k for k in ("tick_ms", "wheel_size") if getattr(eff, k) != getattr(config, k)]
    if fixed:
        line += (f" ({' and '.join(fixed)} as the implementation declares; the file asks "
                 f"{', '.join(f'{k}={getattr(config, k)}' for k in fixed)})")
    return line


def _print_replay(console, sc, res, name: str, prof: str, *, full: bool = False, impl: str = "",
                  recorded: bool = False, caps: Capabilities | None = None) -> None:
    """The replay's table and verdict line; the verdict names ``impl``, the ``--impl`` text of the
    implementation judged (``recorded``: the one the file records, no ``--impl`` given)."""
    from rich.table import Table

    from wheelspec.conformance.check.report import markup_safe
    from wheelspec.spec import show

    def out(text: str) -> None:
        console.print(show.printable(text), markup=False)

    out(f"{sc.name} on {name} ({prof})")
    out(config_line(sc.config, caps))
    t = Table()
    t.add_column("#", justify="right")
    t.add_column("operation")
    t.add_column("response (events, result)")
    t.add_column("findings")
    by_step: dict[int | None, list[str]] = {}
    for f in res.failures:
        by_step.setdefault(f.step, []).append(show.printable(show.finding(f)))
    steps = res.run.steps if res.run is not None else []
    n = len(sc.ops)
    shown = _shown_steps(n, {s for s in by_step if s is not None}, full)
    prev = -1
    for i in shown:
        if i > prev + 1:
            t.add_row("", f"... {i - prev - 1} steps not shown ...", "", "")
        resp = show.printable(show.response(steps[i].response)) if i < len(steps) else ""
        t.add_row(str(i), show.printable(show.op(sc.ops[i])), resp, "\n".join(by_step.get(i, [])))
        prev = i
    if n and prev < n - 1:
        t.add_row("", f"... {n - 1 - prev} steps not shown ...", "", "")
    console.print(t, markup=False)
    if len(shown) < n:
        out(f"{len(shown)} of {n} steps shown (those within {CONTEXT_STEPS} steps of a finding, or the first "
            f"and last); rerun with -v to print every step, or with --json FILE to get them all in JSON")
    for m in by_step.get(None, []):
        out(m)
    colour = {"pass": "green", "fail": "red", "n/a": "yellow"}[res.status]
    notes = "; ".join(filter(None, ("the implementation the file records" if recorded else "", res.note)))
    console.print(f"[{colour}]{res.status.upper()}[/] "
                  + markup_safe(show.printable(f"{sc.name} on {impl or name}" + (f" ({notes})" if notes else ""))))
