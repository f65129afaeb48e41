"""The corpus self-consistency rule: every scenario of ``conformance/scenarios/`` meets its own
expectations on the reference, under every declaration that decides which of them apply.

A scenario's expectations are gated by what an implementation declares (``Scenario.needs`` and
``Scenario.expectations_for`` in :mod:`wheelspec.conformance.check.corpus`): the profile it claims
(``expect_profiles``, per-profile ``expect``), the protocol version it speaks
(``expect_protocols``; ``resubmit`` scenarios need version 2), its executor order
(``expect_executor_orders``) and whether it reports its ``tryComplete`` calls (``tried``).  An
expectation that no implementation of ours ever runs under its own gate can be wrong for years
(a version-1-only expectation never runs against engines speaking version 2), so each declaration
here is the reference *served* over the subprocess protocol
(``python -m wheelspec.conformance.adapters.serve --profile P --protocol N ...``), one process per
declaration reused across the corpus, and every scenario must pass on it.  The reference plays
``kafka`` (Kafka's SystemTimer), ``strict`` (the SystemTimer model at tick 1, where the tick
window is ``now >= exp``) and ``strict-gt`` (Kafka's MockTimer).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterator, Sequence

import pytest

from wheelspec.conformance.adapters.engines import reference_adapter, serve_command
from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSIONS, Capabilities
from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from wheelspec.conformance.check.corpus import (
    Scenario,
    corpus_dir,
    load,
    load_corpus,
    not_applicable,
    run_scenario,
    scenario_from_dict,
)
from wheelspec.conformance.check.judge import TRY_EXPECT_KEYS
from wheelspec.conformance.cli import main
from wheelspec.spec.profiles import EXECUTOR_ORDERS, PROFILE_NAMES, STRICT_GT, check_executor_order

CORPUS = load_corpus()


@dataclasses.dataclass(frozen=True)
class Declaration:
    """What a served reference declares in its hello: one combination of the gates."""

    profile: str
    protocol: int
    executor_order: str
    reports_try_complete: bool

    def __str__(self) -> str:
        tries = "tries" if self.reports_try_complete else "no-tries"
        return f"{self.profile}-v{self.protocol}-{self.executor_order}-{tries}"

    def command(self) -> list[str]:
        return serve_command("reference", profile=self.profile, protocol=self.protocol,
                             executor_order=self.executor_order, reports_try_complete=self.reports_try_complete)

    def capabilities(self) -> Capabilities:
        """The capabilities the served reference declares (the hello must say exactly these)."""
        return reference_adapter(self.profile, self.executor_order, protocol=self.protocol,
                                 reports_try_complete=self.reports_try_complete).hello().capabilities


def _possible(profile: str, order: str) -> bool:
    try:
        check_executor_order(order, profile)
    except ValueError:  # MockTimer runs expirations inline: no executor race to declare
        return False
    return True


def declarations() -> list[Declaration]:
    """Every profile x protocol version x executor order x ``reports_try_complete`` an
    implementation can declare (``reports_try_complete`` needs version 2), from the constants
    that define them: a new profile, version or order is covered the day it exists."""
    return [Declaration(p, v, o, t) for p in PROFILE_NAMES for v in PROTOCOL_VERSIONS for o in EXECUTOR_ORDERS
            if _possible(p, o) for t in ((False, True) if v >= 2 else (False,))]


DECLARATIONS = declarations()


def inconsistencies(adapter: object, caps: Capabilities, scenarios: Sequence[Scenario]) -> list[str]:
    """Every failure of ``scenarios`` on ``adapter`` (the reference), one line each."""
    out = []
    for sc in scenarios:
        res = run_scenario(adapter, caps, sc)
        out += [f"{sc.name} ({sc.path}): {f.message}" for f in res.failures]
        if res.status == "fail" and not res.failures:
            out.append(f"{sc.name}: {res.note}")
    return out


@pytest.fixture(scope="module", params=DECLARATIONS, ids=str)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Declaration, SubprocessAdapter]]:
    """One served reference per declaration, shared by the tests of this module."""
    decl = request.param
    adapter = SubprocessAdapter(decl.command(), label=f"reference {decl}")
    try:
        yield decl, adapter
    finally:
        adapter.close()


def test_the_served_reference_declares_exactly_what_it_was_asked(served):
    decl, adapter = served
    caps = adapter.hello().capabilities
    # (served under version 2, it also declares a pipeline: serve.SERVE_PIPELINE)
    assert dataclasses.replace(caps, pipeline=1) == decl.capabilities()
    assert (caps.profile, caps.protocol, caps.executor_order, caps.reports_try_complete) == (
        decl.profile, decl.protocol, decl.executor_order, decl.reports_try_complete)


@pytest.mark.slow
def test_every_scenario_meets_its_expectations_on_the_reference(served):
    decl, adapter = served
    assert not inconsistencies(adapter, adapter.hello().capabilities, CORPUS)


def _applied(sc: Scenario, caps: Capabilities) -> list[dict | None]:
    """The expectations a run under ``caps`` checks, per step (None: not checked)."""
    if not_applicable(caps, sc) is not None:
        return [None] * len(sc.ops)
    expects, _ = sc.expectations_for(caps)
    return expects


def unreached(scenarios: Sequence[Scenario]) -> list[str]:
    """The expectations no declaration checks: each step's expectation (each profile's, for a
    per-profile one; ``tried`` with a declaration reporting tries) must be checked under at least
    one, or the consistency test cannot vouch for it."""
    caps = [d.capabilities() for d in DECLARATIONS]
    out = []
    for sc in scenarios:
        applied = [(c, _applied(sc, c)) for c in caps]
        for i, e in enumerate(sc.expects):
            if not e:
                continue
            per_profile = set(e) <= set(PROFILE_NAMES)
            for prof in (sorted(e) if per_profile else [None]):
                want = e[prof] if prof is not None else e
                runs = [c for c, a in applied if a[i] and (prof is None or c.profile == prof)]
                where = f"{sc.name} step {i}" + (f" ({prof})" if prof else "")
                if not runs:
                    out.append(where)
                elif any(k in want for k in TRY_EXPECT_KEYS) and not any(c.reports_try_complete for c in runs):
                    out.append(f"{where}: tried")
    return out


def test_every_expectation_is_checked_under_some_declaration():
    assert not unreached(CORPUS)


def test_an_expectation_out_of_every_declarations_reach_is_named():
    base = {"wheelspec_scenario": 1, "name": "x", "steps": [
        {"kind": "watch", "op": 1, "delay": 5, "keys": ["a"], "expect": {"tried": [[1, False], [1, False]]}},
        {"kind": "resubmit", "op": 1, "keys": ["a"], "expect": {"strict-gt": {"result": False}}}]}
    assert unreached([scenario_from_dict(base, "x.json")]) == []
    # a resubmit is sent under version 2 only: a version-1 scenario holding one never runs
    v1 = scenario_from_dict({**base, "expect_protocols": [1]}, "x.json")
    assert unreached([v1]) == ["x step 0", "x step 1 (strict-gt)"]
    # tryComplete calls are reported under version 2 only
    v1 = scenario_from_dict({**base, "steps": base["steps"][:1], "expect_protocols": [1]}, "x.json")
    assert unreached([v1]) == ["x step 0: tried"]


def _old_cancel_never_added_v1() -> Scenario:
    """``protocol/cancel-never-added-v1`` with its size expectation as the corpus once had it: 0
    under every profile, which Kafka's MockTimer (size = queue length) does not meet."""
    d = json.loads((corpus_dir() / "protocol" / "cancel-never-added-v1.json").read_text())
    size_step = next(s for s in d["steps"] if s["kind"] == "size")
    size_step["expect"] = {"result": 0}
    return scenario_from_dict(d, "old/cancel-never-added-v1.json")


def test_the_rule_finds_a_wrong_expectation_only_under_its_gate(served):
    """The old ``cancel-never-added-v1`` fails exactly under strict-gt and protocol 1, the only
    declaration under which its version-1 size expectation meets MockTimer's size rule."""
    decl, adapter = served
    found = inconsistencies(adapter, adapter.hello().capabilities, [_old_cancel_never_added_v1()])
    if decl.profile == STRICT_GT and decl.protocol == 1:
        assert found == ["protocol/cancel-never-added-v1 (old/cancel-never-added-v1.json): "
                         "op 3 size(): expected result 0, got 1"]
    else:
        assert found == []


def test_the_fixed_scenario_pins_mock_timer_size_per_profile():
    sc = load(corpus_dir() / "protocol" / "cancel-never-added-v1.json")
    size = next(e for op, e in zip(sc.ops, sc.expects) if op.kind == "size")
    assert size == {p: {"result": 1 if p == STRICT_GT else 0} for p in PROFILE_NAMES}


def test_a_served_mock_timer_speaking_protocol_1_passes_the_whole_corpus(tmp_path, capsys):
    """``wheelspec check`` of the reference served as Kafka's MockTimer (strict-gt) behind a
    version-1 adapter, corpus only: exit 0, every applicable scenario passes."""
    cmd = shlex.join(serve_command("reference-mock", protocol=1))
    report = tmp_path / "report.json"
    code = main(["check", "--impl", f"cmd:{cmd}", "--schedules", "0", "--json", str(report),
                 "--out", str(tmp_path / "out")])
    capsys.readouterr()
    d = json.loads(report.read_text())
    (impl,) = d["implementations"]
    assert impl["capabilities"]["profile"] == STRICT_GT
    results = {s["name"]: s for s in impl["scenarios"]}
    assert set(results) == {sc.name for sc in CORPUS}
    assert not [n for n, s in results.items() if s["status"] == "fail"]
    # it spoke version 1: the version-1 expectations were checked, the version-2 ones were not
    assert results["protocol/cancel-never-added-v1"] == {**results["protocol/cancel-never-added-v1"],
                                                         "status": "pass", "note": ""}
    assert "the implementation speaks 1" in results["timer/cancel-never-added"]["note"]
    assert [n for n, s in results.items() if s["status"] == "n/a"] == [
        sc.name for sc in CORPUS if sc.name.startswith("purgatory/resubmit-")]
    assert code == 0 and impl["status"] == "pass"
