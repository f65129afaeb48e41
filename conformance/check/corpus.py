"""Scenarios as data: named, versioned files of operations with optional expected outcomes.

A scenario file (``*.json``, format version :data:`FORMAT_VERSION`) is one JSON object::

    {
      "wheelspec_scenario": 1,
      "name": "timer/tick-boundary-k-tick-minus-1",
      "description": "what it pins, in one or two sentences",
      "source": "Kafka TimingWheelTest ... | edge case | campaign counterexample",
      "config": {"tick_ms": 10, "wheel_size": 20, "start_ms": 0, "purge_interval": 1000},
      "expect_profiles": ["kafka", "strict"],
      "steps": [
        {"kind": "add", "task": 1, "delay": 9},
        {"kind": "advance", "time": 9, "expect": {"fired": [1]}}
      ]
    }

Each step is an operation record of :mod:`wheelspec.spec.ops` plus an optional ``expect``
object, checked on the response to that operation:

``result``     the request's result (``add``: the expiration; ``cancel``: pending; ``size``...)
``error``      the request must be refused with this error type (``"range"``...), or ``true``
``fired``      task ids fired during the request, in order; ``fired_set``: in any order
``completed``  ``[[op, via], ...]`` completions during the request, in order
``expired``    op ids whose ``onExpiration`` ran during the request
``purged``     the ``purged`` count of the request's Purge event, or ``null`` for "no purge"
``now``        the clock reading after the request

Expectations hold for the profiles in ``expect_profiles`` (default: every profile); a step may
instead give ``{"kafka": {...}, "strict-gt": {...}}`` to pin each profile separately.  A ``kafka``
expectation is checked only if the implementation runs the scenario's tick.  Every run is also
judged by the claimed profile and the oracle (:mod:`.judge`), expectations or not.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.check.judge import EXPECT_KEYS, claimed_profile, judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.spec import ops
from wheelspec.spec.errors import UserError
from wheelspec.spec.findings import Finding
from wheelspec.spec.profiles import PROFILE_NAMES, behaviour

FORMAT_VERSION = 1
TOP_KEYS = ("wheelspec_scenario", "name", "description", "source", "config", "expect_profiles", "steps", "origin")


@dataclasses.dataclass
class Scenario:
    name: str
    config: Config
    ops: list[ops.Op]
    expects: list[dict[str, Any] | None]
    description: str = ""
    source: str = ""
    expect_profiles: tuple[str, ...] = PROFILE_NAMES
    origin: dict[str, Any] | None = None
    path: str | None = None

    def needs(self) -> set[str]:
        need = set()
        for op in self.ops:
            if isinstance(op, ops.PURGATORY_OPS):
                need.add("purgatory")
            elif not isinstance(op, ops.AdvanceTo):
                need.add("timer")
        return need

    def expectations_for(self, caps: Capabilities) -> tuple[list[dict[str, Any] | None], str | None]:
        """The expectations that apply to an implementation, and why none apply (if so)."""
        prof = caps.profile
        eff = caps.effective(self.config)
        out: list[dict[str, Any] | None] = []
        for e in self.expects:
            if e and set(e) <= set(PROFILE_NAMES):
                e = e.get(prof)
            elif e and prof not in self.expect_profiles:
                e = None
            out.append(e)
        tick_rule = prof in PROFILE_NAMES and behaviour(prof).uses_tick  # a kafka expectation needs its tick
        if tick_rule and eff.tick_ms != self.config.tick_ms and any(out):
            return [None] * len(out), (f"expectations are for tick {self.config.tick_ms}, "
                                       f"the implementation runs tick {eff.tick_ms}")
        return out, None

    def to_dict(self) -> dict[str, Any]:
        steps = []
        for op, e in zip(self.ops, self.expects):
            d = op.to_dict()
            if e:
                d["expect"] = e
            steps.append(d)
        out: dict[str, Any] = {"wheelspec_scenario": FORMAT_VERSION, "name": self.name}
        if self.description:
            out["description"] = self.description
        if self.source:
            out["source"] = self.source
        out["config"] = self.config.to_dict()
        if tuple(self.expect_profiles) != PROFILE_NAMES:
            out["expect_profiles"] = list(self.expect_profiles)
        if self.origin:
            out["origin"] = self.origin
        out["steps"] = steps
        return out

    def dumps(self) -> str:
        """One step per line: readable in a diff, still a single JSON document."""
        d = self.to_dict()
        steps = d.pop("steps")
        head = json.dumps(d, indent=1)[:-2]
        body = ",\n".join("  " + json.dumps(s, separators=(", ", ": ")) for s in steps)
        return head + ',\n "steps": [\n' + body + "\n ]\n}\n"

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.dumps())
        return p


def scenario_from_dict(d: Any, where: str) -> Scenario:
    if not isinstance(d, dict):
        raise UserError(f"{where}: a scenario must be a JSON object")
    if d.get("wheelspec_scenario") != FORMAT_VERSION:
        raise UserError(f"{where}: \"wheelspec_scenario\" must be {FORMAT_VERSION} (the format version), "
                        f"got {d.get('wheelspec_scenario')!r}")
    extra = set(d) - set(TOP_KEYS)
    if extra:
        raise UserError(f"{where}: unknown key {sorted(extra)[0]!r} (known: {', '.join(TOP_KEYS)})")
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise UserError(f"{where}: \"name\" must be a non-empty string")
    try:
        config = Config.from_dict(d.get("config", {}), "config")
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None
    profiles = tuple(d.get("expect_profiles", PROFILE_NAMES))
    bad = [p for p in profiles if p not in PROFILE_NAMES]
    if bad:
        raise UserError(f"{where}: expect_profiles: unknown profile {bad[0]!r} (known: {', '.join(PROFILE_NAMES)})")
    steps = d.get("steps")
    if not isinstance(steps, list):
        raise UserError(f"{where}: \"steps\" must be a list of operations")
    the_ops, expects = [], []
    for i, s in enumerate(steps):
        if not isinstance(s, dict):
            raise UserError(f"{where}: steps[{i}] must be an object")
        s = dict(s)
        expect = s.pop("expect", None)
        try:
            the_ops.append(ops.op_from_dict(s))
        except ValueError as exc:
            raise UserError(f"{where}: steps[{i}]: {exc}") from None
        if expect is not None:
            _check_expect(expect, f"{where}: steps[{i}].expect")
        expects.append(expect)
    return Scenario(name, config, the_ops, expects, d.get("description", ""), d.get("source", ""), profiles,
                    d.get("origin"), where)


def _check_expect(e: Any, where: str) -> None:
    if not isinstance(e, dict):
        raise UserError(f"{where} must be an object")
    if e and set(e) <= set(PROFILE_NAMES):
        for p, sub in e.items():
            _check_expect(sub, f"{where}.{p}")
        return
    bad = set(e) - set(EXPECT_KEYS)
    if bad:
        raise UserError(f"{where}: unknown key {sorted(bad)[0]!r} (known: {', '.join(EXPECT_KEYS)}, or profile names)")


def load(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise UserError(f"cannot read scenario {p}: {e.strerror or e}") from None
    try:
        d = json.loads(text)
    except ValueError as e:
        raise UserError(f"{p}: not valid JSON ({e})") from None
    return scenario_from_dict(d, str(p))


def corpus_dir() -> Path:
    """Where the shipped corpus lives (``conformance/scenarios/`` in the package)."""
    return Path(str(resources.files("wheelspec.conformance") / "scenarios"))


def load_corpus(directory: str | Path | None = None) -> list[Scenario]:
    root = Path(directory) if directory is not None else corpus_dir()
    if not root.is_dir():
        raise UserError(f"scenario directory {root} does not exist")
    files = sorted(root.rglob("*.json"))
    if not files:
        raise UserError(f"scenario directory {root} holds no *.json scenario files")
    out = [load(f) for f in files]
    names: dict[str, str | None] = {}
    for s in out:
        if s.name in names:
            raise UserError(f"{s.path}: scenario name {s.name!r} is also used by {names[s.name]}")
        names[s.name] = s.path
    return out


# --------------------------------------------------------------------- running ------------------
@dataclasses.dataclass
class ScenarioResult:
    name: str
    status: str  # pass | fail | n/a
    failures: list[Finding]
    ops: int
    note: str = ""
    seconds: float = 0.0
    run: Any = dataclasses.field(default=None, repr=False)  # the Run (not serialised)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "ops": self.ops, "note": self.note,
                "seconds": round(self.seconds, 4), "failures": [f.to_dict() for f in self.failures]}


def run_scenario(adapter: Any, caps: Capabilities, sc: Scenario) -> ScenarioResult:
    import time

    t0 = time.perf_counter()
    missing = sc.needs() - {k for k in ("timer", "purgatory") if getattr(caps, k)}
    if missing:
        return ScenarioResult(sc.name, "n/a", [], 0, f"needs a {' and a '.join(sorted(missing))}, "
                                                   f"which the implementation does not offer")
    expects, note = sc.expectations_for(caps)
    run = run_ops(adapter, sc.config, sc.ops)
    failures = judge(run, caps, expects=expects)
    prof = claimed_profile(caps, sc.config)
    if note is None and not any(expects):
        note = f"judged by profile {prof.name} and the oracle only"
    return ScenarioResult(sc.name, "fail" if failures else "pass", failures, len(sc.ops), note or "",
                          time.perf_counter() - t0, run)
