"""Run real-time schedules against an adapter and collect the report.

Each seeded schedule runs once; its outcome is judged (:mod:`.judge`), a failing schedule is
saved as a file that ``wheelspec realtime --schedule FILE`` replays, and lateness is *reported*
as a distribution (p50 / p99 / max) rather than asserted tightly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wheelspec.conformance.realtime.adapters import RealtimeAdapter
from wheelspec.conformance.realtime.judge import PROPS, RtVerdict, judge_outcome, percentiles
from wheelspec.conformance.realtime.schedule import DEFAULT_SLACK_MS, RtSchedule


@dataclasses.dataclass
class RtReport:
    name: str
    version: str
    profile: str
    resolution_ms: int
    verdicts: list[RtVerdict]
    counterexamples: list[str]

    @property
    def lateness_us(self) -> list[int]:
        return [x for v in self.verdicts for x in v.lateness_us]

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    def prop_status(self) -> dict[str, str]:
        out = {}
        for p in PROPS:
            n = sum(v.checked[p] for v in self.verdicts)
            bad = sum(f.prop == p for v in self.verdicts for f in v.failures)
            out[p] = "n/a" if n == 0 and not bad else ("fail" if bad else "pass")
        return out


def run_schedules(adapter: RealtimeAdapter, schedules: Sequence[RtSchedule], *, slack_ms: int = DEFAULT_SLACK_MS,
                 out_dir: str | Path | None = None) -> RtReport:
    """Run and judge ``schedules``; each failing one is saved under ``out_dir`` for replay."""
    verdicts, cx = [], []
    for s in schedules:
        out = adapter.run(s)
        v = judge_outcome(s, out, profile=adapter.profile, resolution_ms=adapter.resolution_ms, slack_ms=slack_ms)
        verdicts.append(v)
        if not v.ok and out_dir is not None:
            p = s.save(Path(out_dir) / f"{adapter.name}-{s.name}.json")
            cx.append(str(p))
    return RtReport(adapter.name, adapter.version, adapter.profile, adapter.resolution_ms, verdicts, cx)


def report_dict(rep: RtReport) -> dict[str, Any]:
    return {"name": rep.name, "version": rep.version, "profile": rep.profile, "resolution_ms": rep.resolution_ms,
            "ok": rep.ok, "properties": rep.prop_status(), "lateness_ms": percentiles(rep.lateness_us),
            "nonpositive_fire_after_add_ms": percentiles([x for v in rep.verdicts for x in v.nonpositive_us]),
            "runs": [{"schedule": v.schedule.name, "fires": v.fires, "failures": [f.to_dict() for f in v.failures]}
                     for v in rep.verdicts], "counterexamples": rep.counterexamples}
