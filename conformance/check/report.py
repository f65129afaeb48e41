"""What a check found, for people (a rich summary) and for CI (JSON, JUnit XML).

An :class:`ImplReport` collects one implementation's results: its scenario results, its
campaign outcomes and throughput, or the adapter error that stopped it.  It is filled one verdict
at a time and every count (terminal, JSON, JUnit) is computed from what it holds, so the three
agree whatever stopped the run: the end, an adapter crash, ``--max-failures`` or a signal (the
report is then marked ``incomplete``; implementations never started are ``not run``).  Files are
written atomically (:func:`~wheelspec.conformance.interrupt.atomic_write_text`), and all text
an adapter supplied passes through :func:`~wheelspec.spec.show.printable` on its way out.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from rich.markup import escape

from wheelspec.conformance.check.campaign import CampaignStats, SeedOutcome, smallest
from wheelspec.conformance.check.corpus import ScenarioResult
from wheelspec.conformance.check.judge import TRY_COMPLETE_PROPERTY
from wheelspec.spec import show


@dataclasses.dataclass
class ImplReport:
    impl: str  # the --impl text
    name: str = ""
    capabilities: dict[str, Any] = dataclasses.field(default_factory=dict)
    scenarios: list[ScenarioResult] = dataclasses.field(default_factory=list)
    campaign: list[SeedOutcome] = dataclasses.field(default_factory=list)
    seconds: float = 0.0  # wall time of the campaign so far (the rates' denominator)
    counterexamples: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None  # adapter error (exit 2) or "unavailable: ..."
    #: a bug in wheelspec stopped this implementation's check (``error`` says it; exit 3): what
    #: was judged before it stands, and no verdict is given for the rest
    bug: bool = False
    trace: str | None = None  # the Parquet trace of the campaign's histories (--write traces=DIR)
    started: bool = True  # False: the run was interrupted before this implementation's turn
    incomplete: bool = False  # the run was interrupted while checking this implementation
    #: campaign kinds cut short: {"kind", "reason" ("max-failures" | "interrupted" | "error"),
    #: "after_seed" (the last seed judged, None if none), "schedules" (judged), "planned"}
    stopped: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    #: properties whose failures are known, documented deviations (``--accept``): reported as
    #: accepted (listed and counted), not failing the implementation
    accept: tuple[str, ...] = ()

    @property
    def stats(self) -> CampaignStats:
        """Counts of the campaign outcomes held (never a separate tally that could disagree);
        ``failed``: the schedules failing a property not accepted."""
        outs = self.campaign
        return CampaignStats(len(outs), sum(o.ops for o in outs), self.seconds, len(self.failed_seeds))

    @property
    def failed_scenarios(self) -> list[ScenarioResult]:
        """The scenarios failing a property not accepted."""
        return [r for r in self.scenarios if r.status == "fail" and not _all_accepted(r.failures, self.accept)]

    @property
    def failed_seeds(self) -> list[SeedOutcome]:
        """The campaign schedules failing a property not accepted."""
        return [o for o in self.campaign if o.failing(self.accept)]

    @property
    def accepted_seeds(self) -> list[SeedOutcome]:
        """The campaign schedules failing accepted properties only."""
        return [o for o in self.campaign if not o.ok and not o.failing(self.accept)]

    @property
    def accepted_scenarios(self) -> list[ScenarioResult]:
        """The scenarios failing accepted properties only."""
        return [r for r in self.scenarios if r.status == "fail" and _all_accepted(r.failures, self.accept)]

    @property
    def failing_properties(self) -> list[dict[str, Any]]:
        """Every property the run found failing, failures grouped by property: how many campaign
        schedules and scenarios fail it, whether it is accepted, and the smallest counterexample
        kept for it (its file once saved: ``path``), unaccepted properties first, each group in
        the registry's order (``spec/properties.py``)."""
        from wheelspec.spec import properties

        seeds = Counter(p for o in self.campaign for p in o.all_props)
        failed = [r for r in self.scenarios if r.status == "fail"]
        scen = Counter(p for r in failed for p in dict.fromkeys(f.prop for f in r.failures))
        best = smallest(self.campaign)
        order = properties.reported_by(properties.RUN)
        out = []
        for prop in sorted(set(seeds) | set(scen),
                           key=lambda p: (p in self.accept, order.index(p) if p in order else len(order), p)):
            cx = best.get(prop)
            out.append({"prop": prop, "accepted": prop in self.accept, "schedules": seeds[prop],
                        "scenarios": scen[prop],
                        "scenario_names": [r.name for r in self.scenarios if r.status == "fail"
                                           and any(f.prop == prop for f in r.failures)][:5],
                        "counterexample": None if cx is None else cx.path,
                        "counterexample_ops": None if cx is None else len(cx.ops),
                        "seed": None if cx is None else (cx.origin or {}).get("seed"),
                        "kind": None if cx is None else (cx.origin or {}).get("kind"),
                        "description": None if cx is None else cx.description})
        return out

    @property
    def status(self) -> str:
        """``error``, ``fail`` (a verdict found, even in an interrupted run), ``not run``,
        ``incomplete`` (interrupted with no failure so far) or ``pass``."""
        if self.error is not None:
            return "error"
        if self.failed_scenarios or self.failed_seeds:
            return "fail"
        if not self.started:
            return "not run"
        return "incomplete" if self.incomplete else "pass"

    @property
    def not_judged(self) -> list[str]:
        """What the adapter declared it cannot observe (``capabilities.unobservable``), and the
        ``tryComplete`` call pattern of a purgatory that does not report its calls (protocol 2's
        ``reports_try_complete``; :func:`.judge.not_judged`): shown as "not judged" in every
        report, never counted as a pass."""
        out = [str(x) for x in self.capabilities.get("unobservable", [])]
        if (self.capabilities.get("purgatory") and not self.capabilities.get("reports_try_complete")
                and TRY_COMPLETE_PROPERTY not in out):
            out.append(TRY_COMPLETE_PROPERTY)
        return out

    @property
    def verdicts(self) -> dict[str, str]:
        """The claimed profile and the range contract, each ``pass`` / ``fail`` (``ranges``: also
        ``not judged`` for an implementation declaring ``ranges: unbounded``): a timer that accepts
        any delay reads ``strict: pass, ranges: fail``.  Without a failure, a run that did not
        finish reads ``incomplete`` (or ``not run``), never ``pass``.  A contract whose failures
        are all of accepted properties (``--accept``) reads ``accepted``.  A campaign schedule
        counts with every property it was found to fail (:attr:`.SeedOutcome.all_props`: its own
        run's, whichever one its counterexample keeps)."""
        props = [p for o in self.campaign for p in o.all_props]  # ranges judged apart already
        for s in [r for r in self.scenarios if r.status == "fail"]:
            # A scenario runs as written: what follows an accepted out-of-range request is its
            # consequence (a cancel then finds the task), charged to ranges.
            cut = min((f.step for f in s.failures if f.prop == "ranges" and f.step is not None), default=None)
            props += [f.prop for f in s.failures if cut is None or f.prop == "ranges" or (f.step or 0) < cut]
        # No failure found is a pass only for a run that finished: an interrupted, broken or
        # never started one says so instead.
        unfailed = ("pass" if self.started and not self.incomplete and self.error is None
                    else "not run" if not self.started else "incomplete")

        def verdict(found: list[str]) -> str:
            # accepted: only accepted properties failed (--accept), in a run that finished
            if any(p not in self.accept for p in found):
                return "fail"
            return "accepted" if found and unfailed == "pass" else unfailed

        out = {str(self.capabilities.get("profile", "profile")): verdict([p for p in props if p != "ranges"])}
        out["ranges"] = ("not judged" if self.capabilities.get("ranges") == "unbounded"
                         else verdict([p for p in props if p == "ranges"]))
        return out

    @property
    def coverage(self) -> dict[str, int]:
        """How often the campaign exercised each semantic situation (:mod:`.coverage`)."""
        from wheelspec.conformance.check.coverage import total

        return total(o.coverage for o in self.campaign)

    def to_dict(self) -> dict[str, Any]:
        sps, ops = self.stats.rate()
        return {
            # null until the adapter's hello names the implementation (a run that never started it)
            "spec": self.impl, "name": self.name or None, "status": self.status, "error": self.error,
            "incomplete": self.incomplete or not self.started, "stopped": self.stopped,
            "verdicts": self.verdicts, "coverage": self.coverage,
            "capabilities": self.capabilities, "not_judged": self.not_judged,
            "scenarios": [r.to_dict() for r in self.scenarios],
            "campaign": {"schedules": self.stats.schedules, "ops": self.stats.ops,
                         "seconds": round(self.stats.seconds, 3), "schedules_per_s": round(sps, 1),
                         "ops_per_s": round(ops, 1), "failed": self.stats.failed,
                         "accepted": len(self.accepted_seeds),
                         "failures": [o.to_dict() for o in self.failed_seeds]},
            "accept": list(self.accept), "properties": self.failing_properties,
            "counterexamples": self.counterexamples,
            **({"trace": self.trace} if self.trace is not None else {}),
        }


def _all_accepted(failures: list[Any], accept: tuple[str, ...]) -> bool:
    """Are ``failures`` (one or more) all of accepted properties (``--accept``)?"""
    return bool(failures) and all(f.prop in accept for f in failures)


def exit_code(reports: list[ImplReport], stop: Any = None) -> int:
    """The command's exit code: ``stop``'s (an :class:`~wheelspec.conformance.interrupt.Interrupted`:
    128 + signal) if the run was interrupted, else 3 for a bug in wheelspec, 2 for an error, 1 for
    a failure, 0."""
    if stop is not None:
        return int(stop.exit_code)
    if any(r.bug for r in reports):
        return 3
    if any(r.status == "error" for r in reports):
        return 2
    return 1 if any(r.status == "fail" for r in reports) else 0


def write_json(path: str | Path, reports: list[ImplReport], meta: dict[str, Any], stop: Any = None) -> None:
    """The JSON report in the commands' envelope (:func:`~wheelspec.envelope.envelope`,
    ``meta["command"]`` names the command); ``stop`` (the interruption, if any) gives
    ``"interrupted"`` and the exit code."""
    from wheelspec.envelope import envelope

    body = {k: v for k, v in meta.items() if k != "command"}
    doc = envelope(str(meta["command"]), {"protocol": 1, **body, "implementations": [r.to_dict() for r in reports]},
                   exit_code=exit_code(reports, stop), stop=stop)
    _write(path, json.dumps(doc, indent=1) + "\n")


def _write(path: str | Path, text: str) -> None:
    from wheelspec.conformance.interrupt import atomic_write_text
    from wheelspec.spec.errors import UserError

    if str(path) == "-":  # --json - / --junit-xml -: standard output
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise UserError(f"cannot write report {path}: {e.strerror or e}") from None


def _stopped_note(st: dict[str, Any]) -> str:
    """One line saying why and where a campaign kind stopped early."""
    budget = f"--max-failures {st['max_failures']}" if "max_failures" in st else "--max-failures"
    why = {"max-failures": f"its failure budget was spent ({budget}, per kind)",
           "interrupted": "the run was interrupted", "error": "the adapter failed"}.get(st["reason"], st["reason"])
    where = f"after seed {st['after_seed']}" if st.get("after_seed") is not None else "before its first seed"
    return (f"{st['kind']} campaign stopped {where}: {why}; "
            f"{st['schedules']} of {st['planned']} schedules judged")


def _el(parent: ET.Element | None, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    """An XML element whose attributes and text pass through :func:`~wheelspec.spec.show.printable`
    (ElementTree writes a NUL or an ESC as is, and the file is then not XML)."""
    clean = {k: show.printable(v) for k, v in attrs.items()}
    e = ET.Element(tag, clean) if parent is None else ET.SubElement(parent, tag, clean)
    if text is not None:
        e.text = show.printable(text)
    return e


def write_junit(path: str | Path, reports: list[ImplReport], stop: Any = None) -> None:
    """The JUnit XML report: a testsuite per implementation, a testcase per scenario and per
    campaign kind; an adapter error, an interruption (``stop``) or a kind stopped early says so."""
    suites = ET.Element("testsuites", name="wheelspec check")
    for r in reports:
        cases: list[ET.Element] = []
        for s in r.scenarios:
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}.scenario", name=s.name, time=f"{s.seconds:.4f}")
            if s.status == "fail" and _all_accepted(s.failures, r.accept):
                _el(tc, "system-out", "accepted (--accept): " + "\n".join(show.finding_at_step(x) for x in s.failures))
            elif s.status == "fail":
                _el(tc, "failure", "\n".join(show.finding_at_step(x) for x in s.failures),
                    message=show.clip(s.failures[0].message, 300), type=s.failures[0].prop)
            elif s.status == "n/a":
                _el(tc, "skipped", message=s.note)
            cases.append(tc)
        stopped = {st["kind"]: st for st in r.stopped}
        kinds = sorted({o.kind for o in r.campaign})
        for kind in kinds:
            outs = [o for o in r.campaign if o.kind == kind]
            bad = [o for o in outs if o.failing(r.accept)]
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}.campaign",
                     name=f"{kind} seeds {outs[0].seed}..{outs[-1].seed} ({len(outs)} schedules)")
            note = f"; {_stopped_note(stopped[kind])}" if kind in stopped else ""
            accepted = sum(not o.ok and not o.failing(r.accept) for o in outs)
            if accepted:
                note += f"; {accepted} schedules fail accepted properties only (--accept)"
            if bad:
                _el(tc, "failure", "\n".join(f"seed {o.seed}: {show.finding(o.failures[0])}" for o in bad),
                    message=f"{len(bad)} of {len(outs)} schedules failed{note}", type=bad[0].failures[0].prop)
            elif note:
                _el(tc, "system-out", note[2:])
            cases.append(tc)
        for fp in r.failing_properties:  # failures grouped by property, each with its counterexample
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}.property", name=fp["prop"])
            if fp["accepted"]:
                _el(tc, "system-out", f"accepted (--accept): {_property_line(fp)}")
            else:
                _el(tc, "failure", _property_line(fp), message=show.clip(_property_line(fp), 300), type=fp["prop"])
            cases.append(tc)
        for name in r.not_judged:  # declared unobservable by the adapter: skipped, not passed
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}.not-judged", name=name)
            why = ("capabilities.reports_try_complete is not declared (protocol 2)" if name == TRY_COMPLETE_PROPERTY
                   else "capabilities.unobservable")
            _el(tc, "skipped", message=f"not judged: {name} is not observable through this adapter ({why})")
            cases.append(tc)
        if r.error is not None:
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}", name="adapter")
            _el(tc, "error", r.error, message=show.clip(r.error, 300))
            cases.append(tc)
        if not r.started or r.incomplete:
            # An interrupted run is not a pass: the implementation's last testcase says what was cut.
            why = str(stop) if stop is not None else "stopped before the end"
            tc = _el(None, "testcase", classname=f"wheelspec.{r.impl}", name="run")
            if r.started:
                _el(tc, "error", "\n".join(_stopped_note(st) for st in r.stopped),
                    message=f"{why}: {r.stats.schedules} schedules and {len(r.scenarios)} scenarios judged",
                    type="interrupted")
            else:
                _el(tc, "skipped", message=f"not run: {why} before this implementation's turn")
            cases.append(tc)
        suite = _el(suites, "testsuite", name=f"wheelspec.{r.impl}", tests=str(len(cases)),
                    failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                    errors=str(sum(1 for c in cases if c.find("error") is not None)),
                    skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
        props = _el(suite, "properties")  # the verdict per contract, and the semantic coverage
        for name, verdict in r.verdicts.items():
            _el(props, "property", name=f"verdict.{name}", value=verdict)
        for name, n in (r.coverage.items() if r.campaign else ()):
            _el(props, "property", name=f"coverage.{name}", value=str(n))
        suite.extend(cases)
    _write(path, ET.tostring(suites, encoding="unicode", xml_declaration=True))


def _property_line(fp: dict[str, Any]) -> str:
    """One failing property (:attr:`ImplReport.failing_properties`) in a line: its counts and
    its counterexample."""
    counts = [f"{fp['schedules']} campaign schedules"] if fp["schedules"] else []
    if fp["scenarios"]:
        counts.append(f"{fp['scenarios']} scenarios ({', '.join(fp['scenario_names'])}"
                      + (", ..." if fp["scenarios"] > len(fp["scenario_names"]) else "") + ")")
    line = f"{fp['prop']}: {' and '.join(counts)} fail it"
    if fp["counterexample_ops"] is not None:
        where = fp["counterexample"] or "not saved"
        line += (f"; smallest counterexample: {where} ({fp['counterexample_ops']} ops, "
                 f"{fp['kind']} seed {fp['seed']})")
    elif fp["schedules"]:
        line += "; no counterexample kept"
    return line


def markup_safe(text: str) -> str:
    """Text from a user or an adapter, for a rich markup string: control characters escaped
    (:func:`~wheelspec.spec.show.printable`) and ``[`` escaped so that it is never markup."""
    return escape(show.printable(text))


#: below this console width the summary table is compact: no borders between columns, headers
#: on several lines, and the columns ``ops`` and ``schedules/s`` left to ``--json`` (an 80-column
#: terminal then keeps about 25 columns for the implementation's name)
COMPACT_BELOW = 140
_COLOURS = {"pass": "green", "fail": "red", "error": "red", "incomplete": "yellow", "not run": "yellow"}
#: the columns of the summary table: (header, its compact form or None where the compact table
#: leaves the column out, numeric)
_COLUMNS = (("profile", "profile", False), ("scenarios pass/fail/n-a", "scenarios\npass/fail/\nn-a", False),
            ("campaign schedules (failed)", "schedules\n(failed)", False), ("ops", None, True),
            ("schedules/s", None, True), ("ops/s", "ops/s", True), ("verdict", "verdict", False))


def summary_table(reports: list[ImplReport], width: int) -> Any:
    """The check table, fitting ``width`` columns (:data:`COMPACT_BELOW`): the implementation's
    name and its ``--impl`` text go on two lines and wrap between words, never cut; only a single
    word wider than the whole column (a long ``cmd:`` path) is folded."""
    from rich import box
    from rich.table import Table

    compact = width < COMPACT_BELOW
    t = Table(title="wheelspec check", title_justify="left", box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
              pad_edge=not compact, collapse_padding=compact)
    t.add_column("implementation", overflow="fold", ratio=1)
    for head, short, numeric in _COLUMNS:
        if not compact or short is not None:
            t.add_column((short or head) if compact else head, justify="right" if numeric else "left", no_wrap=numeric,
                         max_width=9 if compact and head == "profile" else None)  # "kafka / tick 10"
    for r in reports:
        caps = r.capabilities
        prof = show.profile(str(caps.get("profile", "?")), caps.get("tick_ms"))
        n = {k: sum(1 for s in r.scenarios if s.status == k) for k in ("pass", "fail", "n/a")}
        st = r.stats
        sps, ops = st.rate()
        cells = {"profile": markup_safe(prof), "scenarios pass/fail/n-a": f"{n['pass']}/{n['fail']}/{n['n/a']}",
                 "campaign schedules (failed)":
                     f"{st.schedules} ({st.failed}" + (f", {len(r.accepted_seeds)} accepted)" if r.accept else ")"),
                 "ops": f"{st.ops}", "schedules/s": f"{sps:,.0f}" if st.schedules else "-",
                 "ops/s": f"{ops:,.0f}" if st.schedules else "-",
                 "verdict": f"[{_COLOURS[r.status]}]{r.status.upper()}[/]"}
        label = markup_safe(r.name or r.impl) + (f"\n({markup_safe(r.impl)})" if r.name and r.name != r.impl else "")
        t.add_row(label, *(cells[head] for head, short, _ in _COLUMNS if not compact or short is not None))
    return t


def print_summary(console: Any, reports: list[ImplReport], *, verbose: bool = False, stop: Any = None,
                  errors: bool = True) -> None:
    """The terminal summary; ``stop`` (the interruption, if any) is said after the table.  Pass a
    console made with ``emoji=False`` (an ``--impl`` text such as ``pkg:fire:`` is not an emoji).
    ``errors=False`` leaves the adapter errors out (a caller that prints them once on stderr)."""
    console.print(summary_table(reports, console.width))
    for r in reports:
        impl = markup_safe(r.impl)
        if r.error is not None and errors:
            console.print(f"[red]{impl}: {markup_safe(r.error)}[/]", highlight=False)
        for stp in r.stopped:
            console.print(f"[yellow]{impl}: {markup_safe(_stopped_note(stp))}[/]", highlight=False)
        for s in r.failed_scenarios:
            console.print(f"[red]FAIL[/] {impl} scenario {markup_safe(s.name)}", highlight=False)
            for f in s.failures[: None if verbose else 3]:
                console.print(f"     {show.printable(show.finding(f))}", highlight=False, markup=False)
        for o in r.failed_seeds[: None if verbose else 5]:
            f = o.failures[0]
            size = len(o.counterexample.ops) if o.counterexample else o.ops
            console.print(f"[red]FAIL[/] {impl} {o.kind} seed {o.seed} ({o.ops} ops, "
                          + (f"shrunk to {size})" if o.counterexample else "not shrunk)"), highlight=False)
            console.print(f"     {show.printable(show.finding(f))}", highlight=False, markup=False)
        if len(r.failed_seeds) > 5 and not verbose:
            console.print(f"     ... and {len(r.failed_seeds) - 5} more failing seeds (--verbose or --json)")
        for p in r.counterexamples[:5]:
            # soft_wrap: a command wrapped with hard newlines cannot be copied and run.
            replay = shlex.join(["wheelspec", "replay", str(p), "--impl", r.impl])  # pasted as it is
            console.print(show.printable(f"     counterexample: {p}   replay: {replay}"),
                          highlight=False, markup=False, soft_wrap=True)
        if r.failing_properties:  # failures grouped by property: a rare one is listed beside a frequent one
            console.print(f"{impl}: failing properties (each with its smallest counterexample):", highlight=False)
            for fp in r.failing_properties:
                tag = "[yellow]accepted[/]" if fp["accepted"] else "[red]FAIL[/]    "
                console.print(f"  {tag} {markup_safe(_property_line(fp))}", highlight=False, soft_wrap=True)
        if r.status in ("pass", "fail"):  # "kafka: pass, ranges: fail"; the coverage of the campaign
            from wheelspec.conformance.check.coverage import summary_line

            line = ", ".join(f"{k}: {v}" for k, v in r.verdicts.items())
            console.print(f"{impl}: {markup_safe(line)}" + (f"; {summary_line(r.coverage)}" if r.campaign else ""),
                          highlight=False)
            if verbose and r.campaign:
                console.print("     " + ", ".join(f"{k} {v}" for k, v in r.coverage.items()), highlight=False)
        if r.not_judged:
            console.print(f"[yellow]{impl}: not judged (the adapter cannot observe them): "
                          f"{markup_safe(', '.join(r.not_judged))}[/]", highlight=False)
        if r.status == "pass":
            na = [s for s in r.scenarios if s.status == "n/a"]
            if na:
                console.print(f"{impl}: {len(na)} scenarios not applicable ({markup_safe(na[0].note)})",
                              highlight=False)
    if stop is not None:
        cut = ", ".join(markup_safe(r.impl) + (" incomplete" if r.started else " not run")
                        for r in reports if r.incomplete or not r.started)
        console.print(f"[yellow]{stop}[/]: the counts above are the verdicts reached before it; "
                      f"{cut or 'every implementation had finished'}", highlight=False)
