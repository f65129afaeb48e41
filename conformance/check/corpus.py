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
instead give ``{"kafka": {...}, "strict-gt": {...}}`` to pin each profile separately.
``expect_executor_orders`` (default: every order) limits them to implementations declaring one of
those executor orders (``capabilities.executor_order``: which outcome of the executor race they
show, :data:`wheelspec.spec.profiles.EXECUTOR_ORDERS`); ``expect_protocols`` (default: every
version) to implementations speaking one of those protocol versions (a cancel of a task never
added is refused under version 1 and answered false under version 2).  A scenario holding an
operation of protocol version 2 only (``resubmit``) is not applicable to a version-1 adapter.  A ``kafka``
expectation is checked only if the implementation runs the scenario's tick.  Every run is also
judged by the claimed profile and the oracle (:mod:`.judge`), expectations or not.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path
from typing import Any

from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSIONS, V2_OPS, Capabilities, Config
from wheelspec.conformance.check import scenario_schema
from wheelspec.conformance.check.judge import (
    claimed_profile,
    declared_range_finding,
    declared_refusals,
    granularity_note,
    judge,
)
from wheelspec.conformance.check.narrow import out_of_range
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.check.scenario_schema import FORMAT_VERSION
from wheelspec.conformance.check.scenario_schema import TOP_KEYS as TOP_KEYS  # the format's keys, importable here
from wheelspec.conformance.check.shrink import liveness_finding
from wheelspec.spec import ops
from wheelspec.spec.errors import UserError
from wheelspec.spec.findings import Finding
from wheelspec.spec.profiles import EXECUTOR_ORDERS, PROFILE_NAMES, behaviour
from wheelspec.spec.show import json_short

#: the key of a scenario's ``origin`` holding the exact ``--impl`` text of the implementation a
#: saved counterexample failed on (``origin.impl`` is the folder name made from it, not rebuildable)
IMPL_SPEC = "impl_spec"


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
    expect_executor_orders: tuple[str, ...] = EXECUTOR_ORDERS
    expect_protocols: tuple[int, ...] = PROTOCOL_VERSIONS

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
        if caps.executor_order not in self.expect_executor_orders:
            return [None] * len(self.expects), (f"expectations are for executor order "
                                                f"{' or '.join(self.expect_executor_orders)}, the implementation "
                                                f"declares {caps.executor_order}")
        if caps.protocol not in self.expect_protocols:
            return [None] * len(self.expects), (f"expectations are for protocol "
                                                f"{' or '.join(map(str, self.expect_protocols))}, the implementation "
                                                f"speaks {caps.protocol}")
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
        # a declared granularity: judge() leaves the expectations of when tasks fire unjudged
        return out, (granularity_note(caps) if any(out) else None)

    def recorded_impl(self) -> str | None:
        """The exact ``--impl`` text of the implementation this scenario was saved from (its
        ``origin.impl_spec``, :meth:`for_impl`), which ``wheelspec replay`` rebuilds when no
        ``--impl`` is given; None for a scenario that records none (the shipped corpus, a file
        written by hand, a counterexample that keeps only the folder name ``origin.impl``)."""
        impl = (self.origin or {}).get(IMPL_SPEC)
        if impl is None:
            return None
        if not isinstance(impl, str) or not impl.strip():
            raise UserError(f"{self.path}: origin.{IMPL_SPEC} must be a non-empty string (an --impl value), "
                            f"got {json_short(impl, 40)}")
        return impl

    def for_impl(self, impl: str) -> Scenario:
        """This scenario recording ``impl``, the exact ``--impl`` text of the implementation it is
        saved from, in ``origin.impl_spec`` (what :meth:`recorded_impl` reads back)."""
        return dataclasses.replace(self, origin={**(self.origin or {}), IMPL_SPEC: impl})

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
        if tuple(self.expect_executor_orders) != EXECUTOR_ORDERS:
            out["expect_executor_orders"] = list(self.expect_executor_orders)
        if tuple(self.expect_protocols) != PROTOCOL_VERSIONS:
            out["expect_protocols"] = list(self.expect_protocols)
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
    """A scenario from its JSON object, checked record by record against the schema of
    :mod:`.scenario_schema`; a malformed file is a :class:`UserError` naming ``where`` and the field."""
    scenario_schema.check_top(d, where)
    config = Config(**scenario_schema.check_config(d.get("config", {}), where))
    profiles = scenario_schema.check_profiles(d["expect_profiles"], where) if "expect_profiles" in d else PROFILE_NAMES
    the_ops, expects = [], []
    for i, s in enumerate(d["steps"]):
        if not isinstance(s, dict):
            raise UserError(f"{where}: steps[{i}]: must be an object, got {json_short(s, 40)}")
        s = dict(s)
        expect = s.pop("expect", None)
        op = scenario_schema.check_op(s, where, f"steps[{i}]")
        if expect is not None:
            _check_expect(expect, op, where, f"steps[{i}].expect")
        the_ops.append(op)
        expects.append(expect)
    orders = (scenario_schema.check_executor_orders(d["expect_executor_orders"], where)
              if "expect_executor_orders" in d else EXECUTOR_ORDERS)
    protocols = (scenario_schema.check_protocols(d["expect_protocols"], where)
                 if "expect_protocols" in d else PROTOCOL_VERSIONS)
    return Scenario(d["name"], config, the_ops, expects, d.get("description", ""), d.get("source", ""), profiles,
                    d.get("origin"), where, orders, protocols)


def _check_expect(e: Any, op: ops.Op, where: str, field: str) -> None:
    """A step's ``expect``, typed by the operation it checks (:func:`.scenario_schema.check_expect`)."""
    scenario_schema.check_expect(e, op, where, field)


def load(path: str | Path) -> Scenario:
    """One scenario file; any malformation (bytes, JSON, schema) is a one-line :class:`UserError`."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read scenario {p}: {e.strerror or e}") from None
    return scenario_from_dict(scenario_schema.parse_json(data, str(p)), str(p))


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


def not_applicable(caps: Capabilities, sc: Scenario) -> str | None:
    """Why ``sc`` does not apply to an implementation declaring ``caps`` at all (None: it applies)."""
    missing = sc.needs() - {k for k in ("timer", "purgatory") if getattr(caps, k)}
    if missing:
        return f"needs a {' and a '.join(sorted(missing))}, which the implementation does not offer"
    if caps.protocol < 2 and any(isinstance(op, V2_OPS) for op in sc.ops):
        return f"needs protocol 2 (resubmit), and the implementation speaks protocol {caps.protocol}"
    if caps.ranges == "unbounded" and any(out_of_range(op) for op in sc.ops):
        return "has requests outside wheelspec's ranges, and the implementation declares ranges unbounded"
    declared = caps.declared_ranges()
    if declared is not None and not declared.admits("time", sc.config.start_ms):
        return (f"starts the clock at {sc.config.start_ms}, outside the clock readings the implementation "
                f"declares ({list(declared.time)})")
    return None


#: the name a report gives the judgement of a declared range (:func:`declared_range_result`)
DECLARED_RANGES = "declared-ranges"


def declared_range_result(caps: Capabilities) -> ScenarioResult | None:
    """The one ``ranges`` finding of an implementation that declares a range narrower than
    wheelspec's (:func:`~.judge.declared_range_finding`), as a failed entry of the report's
    scenarios, judged once per implementation; None if it declares none."""
    finding = declared_range_finding(caps)
    if finding is None:
        return None
    return ScenarioResult(DECLARED_RANGES, "fail", [finding], 0,
                          "the range the implementation declares (capabilities.ranges), judged once")


def run_scenario(adapter: Any, caps: Capabilities, sc: Scenario) -> ScenarioResult:
    import time

    t0 = time.perf_counter()
    why = not_applicable(caps, sc)
    if why is not None:
        return ScenarioResult(sc.name, "n/a", [], 0, why)
    expects, note = sc.expectations_for(caps)
    from wheelspec.conformance.adapters.subprocess_adapter import LivenessError

    try:
        run = run_ops(adapter, sc.config, sc.ops)
    except LivenessError as e:
        # A hang or crash is this scenario's finding (property ``responds``); the adapter starts
        # again on its next request, for the next scenario.
        return ScenarioResult(sc.name, "fail", [liveness_finding(e, sc.ops)], len(sc.ops),
                              "the adapter hung or died", time.perf_counter() - t0, e.run)
    failures = judge(run, caps, expects=expects)
    prof = claimed_profile(caps, sc.config)
    if note is None and not any(expects):
        note = f"judged by profile {prof.name} and the oracle only"
    refused = declared_refusals(run, caps)
    if refused:  # covered by the one ranges finding (judge.declared_oracle)
        note = "; ".join(filter(None, (f"{len(refused)} of its requests are outside the declared range and were "
                                       f"refused: judged as refusals that change nothing, expectations from step "
                                       f"{refused[0]} on not judged", note)))
    return ScenarioResult(sc.name, "fail" if failures else "pass", failures, len(sc.ops), note or "",
                          time.perf_counter() - t0, run)
