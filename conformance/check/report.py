"""What a check found, for people (a rich summary) and for CI (JSON, JUnit XML).

An :class:`ImplReport` collects one implementation's results: its scenario results, its
campaign outcomes and throughput, or the adapter error that stopped it.  Reports are written
from whatever has been collected so far, so an adapter crash still leaves the results before it
on disk.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from rich.markup import escape

from wheelspec.conformance.check.campaign import CampaignStats, SeedOutcome
from wheelspec.conformance.check.corpus import ScenarioResult
from wheelspec.spec import show


@dataclasses.dataclass
class ImplReport:
    spec: str
    name: str = ""
    capabilities: dict[str, Any] = dataclasses.field(default_factory=dict)
    scenarios: list[ScenarioResult] = dataclasses.field(default_factory=list)
    campaign: list[SeedOutcome] = dataclasses.field(default_factory=list)
    stats: CampaignStats = dataclasses.field(default_factory=CampaignStats)
    counterexamples: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None  # adapter error (exit 2) or "unavailable: ..."
    trace: str | None = None  # the Parquet trace of the campaign's histories (--trace-out)

    @property
    def failed_scenarios(self) -> list[ScenarioResult]:
        return [r for r in self.scenarios if r.status == "fail"]

    @property
    def failed_seeds(self) -> list[SeedOutcome]:
        return [o for o in self.campaign if not o.ok]

    @property
    def status(self) -> str:
        if self.error is not None:
            return "error"
        return "fail" if self.failed_scenarios or self.failed_seeds else "pass"

    def to_dict(self) -> dict[str, Any]:
        sps, ops = self.stats.rate()
        return {
            "spec": self.spec, "name": self.name, "status": self.status, "error": self.error,
            "capabilities": self.capabilities,
            "scenarios": [r.to_dict() for r in self.scenarios],
            "campaign": {"schedules": self.stats.schedules, "ops": self.stats.ops,
                         "seconds": round(self.stats.seconds, 3), "schedules_per_s": round(sps, 1),
                         "ops_per_s": round(ops, 1), "failed": self.stats.failed,
                         "failures": [o.to_dict() for o in self.failed_seeds]},
            "counterexamples": self.counterexamples,
            **({"trace": self.trace} if self.trace is not None else {}),
        }


def exit_code(reports: list[ImplReport]) -> int:
    if any(r.status == "error" for r in reports):
        return 2
    return 1 if any(r.status == "fail" for r in reports) else 0


def write_json(path: str | Path, reports: list[ImplReport], meta: dict[str, Any]) -> None:
    from wheelspec import __version__

    doc = {"wheelspec": __version__, "protocol": 1, **meta, "exit_code": exit_code(reports),
           "implementations": [r.to_dict() for r in reports]}
    _write(path, json.dumps(doc, indent=1) + "\n")


def _write(path: str | Path, text: str) -> None:
    from wheelspec.spec.errors import UserError

    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    except OSError as e:
        raise UserError(f"cannot write report {p}: {e.strerror or e}") from None


def write_junit(path: str | Path, reports: list[ImplReport]) -> None:
    suites = ET.Element("testsuites", name="wheelspec check")
    for r in reports:
        cases: list[ET.Element] = []
        for s in r.scenarios:
            tc = ET.Element("testcase", classname=f"wheelspec.{r.spec}.scenario", name=s.name, time=f"{s.seconds:.4f}")
            if s.status == "fail":
                f = ET.SubElement(tc, "failure", message=s.failures[0].message[:300], type=s.failures[0].prop)
                f.text = "\n".join(show.finding_at_step(x) for x in s.failures)
            elif s.status == "n/a":
                ET.SubElement(tc, "skipped", message=s.note)
            cases.append(tc)
        kinds = sorted({o.kind for o in r.campaign})
        for kind in kinds:
            outs = [o for o in r.campaign if o.kind == kind]
            bad = [o for o in outs if not o.ok]
            tc = ET.Element("testcase", classname=f"wheelspec.{r.spec}.campaign",
                            name=f"{kind} seeds {outs[0].seed}..{outs[-1].seed} ({len(outs)} schedules)")
            if bad:
                f = ET.SubElement(tc, "failure", message=f"{len(bad)} of {len(outs)} schedules failed",
                                  type=bad[0].failures[0].prop)
                f.text = "\n".join(f"seed {o.seed}: {show.finding(o.failures[0])}" for o in bad)
            cases.append(tc)
        if r.error is not None:
            tc = ET.Element("testcase", classname=f"wheelspec.{r.spec}", name="adapter")
            ET.SubElement(tc, "error", message=r.error[:300]).text = r.error
            cases.append(tc)
        suite = ET.SubElement(suites, "testsuite", name=f"wheelspec.{r.spec}", tests=str(len(cases)),
                              failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                              errors=str(sum(1 for c in cases if c.find("error") is not None)),
                              skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.extend(cases)
    _write(path, ET.tostring(suites, encoding="unicode", xml_declaration=True))


def print_summary(console: Any, reports: list[ImplReport], *, verbose: bool = False) -> None:
    from rich.table import Table

    t = Table(title="wheelspec check", title_justify="left")
    for col in ("implementation", "profile", "scenarios pass/fail/n-a", "campaign schedules (failed)",
                "ops", "schedules/s", "ops/s", "verdict"):
        t.add_column(col, justify="right" if col in ("ops", "schedules/s", "ops/s") else "left")
    for r in reports:
        caps = r.capabilities
        prof = show.profile(caps.get("profile", "?"), caps.get("tick_ms"))
        n = {k: sum(1 for s in r.scenarios if s.status == k) for k in ("pass", "fail", "n/a")}
        sps, ops = r.stats.rate()
        colour = {"pass": "green", "fail": "red", "error": "red"}[r.status]
        verdict = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[r.status]
        label = f"{r.name or r.spec}" + (f" ({r.spec})" if r.name and r.name != r.spec else "")
        t.add_row(escape(label), prof,
                  f"{n['pass']}/{n['fail']}/{n['n/a']}", f"{r.stats.schedules} ({r.stats.failed})",
                  f"{r.stats.ops}", f"{sps:,.0f}" if r.stats.schedules else "-",
                  f"{ops:,.0f}" if r.stats.schedules else "-", f"[{colour}]{verdict}[/]")
    console.print(t)
    for r in reports:
        if r.error is not None:
            console.print(f"[red]{escape(r.spec)}: {escape(r.error)}[/]", highlight=False)
        for s in r.failed_scenarios:
            console.print(f"[red]FAIL[/] {escape(r.spec)} scenario {escape(s.name)}", highlight=False)
            for f in s.failures[: None if verbose else 3]:
                console.print(f"     {show.finding(f)}", highlight=False, markup=False)
        for o in r.failed_seeds[: None if verbose else 5]:
            f = o.failures[0]
            size = len(o.counterexample.ops) if o.counterexample else o.ops
            console.print(f"[red]FAIL[/] {escape(r.spec)} {o.kind} seed {o.seed} ({o.ops} ops, shrunk to {size})",
                          highlight=False)
            console.print(f"     {show.finding(f)}", highlight=False, markup=False)
        if len(r.failed_seeds) > 5 and not verbose:
            console.print(f"     ... and {len(r.failed_seeds) - 5} more failing seeds (--verbose or --json)")
        for p in r.counterexamples[:5]:
            # soft_wrap: a command wrapped with hard newlines cannot be copied and run.
            console.print(f"     counterexample: {p}   replay: wheelspec replay {p} --impl {r.spec}",
                          highlight=False, markup=False, soft_wrap=True)
        if r.status == "pass":
            na = [s for s in r.scenarios if s.status == "n/a"]
            if na:
                console.print(f"{r.spec}: {len(na)} scenarios not applicable ({na[0].note})", highlight=False)
