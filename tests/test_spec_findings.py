"""One finding type, one property registry, one formatter: every judge reports
:class:`~wheelspec.spec.findings.Finding` s whose property names the registry
(:mod:`wheelspec.spec.properties`) holds; findings round-trip through JSON with the keys reports
and saved files have always had; the old names still resolve."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixtures.broken import SizeRefuser

from wheelspec.spec import events as ev
from wheelspec.spec import ops, properties, show
from wheelspec.spec.findings import EVENTS, NOWHERE, STEP, Finding
from wheelspec.spec.profiles import profile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _assert_registered(found: set[str], judge: str) -> None:
    missing = sorted(p for p in found if not properties.is_registered(p, judge))
    assert not missing, f"the {judge} judge reported unregistered properties {missing}"


# ------------------------------------------------------------------ every judge, planted failures --
def test_history_checker_reports_only_registered_properties_and_all_of_them():
    from test_spec_checker import CASES

    from wheelspec.spec.checker import PROPERTIES, check_history

    found: set[str] = set()
    for _name, prof, _good, bad, _prop, _words in CASES:
        verdict = check_history(bad, prof)
        assert all(isinstance(v, Finding) and v.location == EVENTS for v in verdict.violations)
        found |= {v.prop for v in verdict.violations}
    _assert_registered(found, properties.HISTORY)
    assert found == set(PROPERTIES) == set(properties.names(properties.HISTORY))


@pytest.mark.slow
def test_conformance_judge_reports_only_registered_properties():
    from fixtures import broken

    from wheelspec.conformance.adapters import reference_adapter
    from wheelspec.conformance.adapters.protocol import Capabilities, Config
    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.conformance.check.judge import judge, primary
    from wheelspec.conformance.check.runner import run_ops

    found: set[str] = set()
    corpus = load_corpus()
    for _name, factory in sorted(broken.FACTORIES.items()):
        adapter = factory()
        caps = adapter.hello().capabilities
        for sc in corpus:
            expects, _ = sc.expectations_for(caps)
            failures = judge(run_ops(adapter, sc.config, sc.ops), caps, expects=expects)
            assert all(f.location == STEP for f in failures)
            found |= {f.prop for f in failures}
            if failures:
                assert primary(failures) in failures

    caps = Capabilities(profile="strict", configurable=("start_ms",))
    r = SizeRefuser(reference_adapter())
    for schedule in ([ops.AddTask(1, 1), ops.Size()], [ops.AddTask(1, 2**40 + 5)], [ops.CancelTask(9)]):
        found |= {f.prop for f in judge(run_ops(r, Config(), schedule), caps)}
    _assert_registered(found, properties.RUN)
    # expected, refused-valid, accepted-invalid, oracle, ranges; ``responds`` (a hang or crash) is
    # reported around the judge, by the corpus and the campaign: tests/test_liveness.py
    assert set(properties.names(properties.RUN)) - {"responds"} <= found



def _rt_clean():
    from wheelspec.conformance import realtime as rt

    s = rt.RtSchedule("t", [{"at": 0, "kind": "add", "task": 1, "delay": 10},
                            {"at": 0, "kind": "add", "task": 2, "delay": 10},
                            {"at": 1, "kind": "add", "task": 3, "delay": 50},
                            {"at": 2, "kind": "add", "task": 4, "delay": 2**40 - 1},
                            {"at": 5, "kind": "cancel", "task": 3}, {"at": 6, "kind": "add", "task": 5, "delay": 0},
                            {"at": 60, "kind": "cancel", "task": 4}], 200)
    out = rt.RtOutcome([0, 10, 1000, 2000, 5000, 6000, 60000], [None, None, None, None, True, None, True],
                       [(5, 4, 6300), (1, 0, 10500), (2, 1, 10600)])
    return s, out


def test_realtime_judge_reports_only_registered_properties_and_all_of_them():
    from wheelspec.conformance import realtime as rt

    plants = [lambda o: o.fires.__setitem__(1, (1, 0, 9900)), lambda o: o.fires.append((1, 0, 11000)),
              lambda o: o.fires.pop(1), lambda o: o.fires.append((3, 2, 51000)), lambda o: o.fires.reverse(),
              lambda o: o.fires.append((4, 3, 70000)), lambda o: o.fires.__setitem__(1, (1, 0, 400000)),
              lambda o: o.fires.__setitem__(0, (5, 4, 5000)), lambda o: o.fires.append((9, 0, 100))]
    found: set[str] = set()
    for plant in plants:
        s, out = _rt_clean()
        plant(out)
        v = rt.judge_outcome(s, out)
        assert v.failures and all(f.location == NOWHERE for f in v.failures)
        found |= {f.prop for f in v.failures}
    _assert_registered(found, properties.REALTIME)
    assert found == set(rt.PROPS) == set(properties.names(properties.REALTIME))
    # the report's JSON keeps its keys
    s, out = _rt_clean()
    out.fires.pop(1)
    rep = rt.RtReport("x", "1", "strict", 1, [rt.judge_outcome(s, out)], [])
    assert rt.report_dict(rep)["runs"][0]["failures"][0].keys() == {"prop", "message"}


@pytest.mark.slow
def test_concurrent_judges_report_only_registered_properties():
    from wheelspec.conformance.concurrency.hammer import check_event_properties
    from wheelspec.reference.concurrent_scenario import ConcurrentScenario
    from wheelspec.reference.interleave import check_quiescent, hunt, run_scenario
    from wheelspec.reference.mutants import MUTANTS, scenario_for
    from wheelspec.reference.scheduler import list_chooser

    found: set[str] = set()
    for name in sorted(MUTANTS):
        d = hunt(scenario_for(name), [name], max_examples=1000, seed=0)
        assert d is not None, name
        found |= {v.prop for v in d.outcome.violations}
    # the step budget runs out
    sc = ConcurrentScenario("budget", threads=((ops.AddTask(1, 5), ops.CancelTask(1)),), tasks=(1,))
    out = run_scenario(sc, list_chooser([]), max_steps=2)
    assert [v.prop for v in out.violations] == ["no-progress"]
    found |= {v.prop for v in out.violations}
    # a leaked timer entry at quiescence
    sc = ConcurrentScenario("q", threads=((ops.Watch(1, 5, ("a",)), ops.ForceComplete(1)),), declare=((1, 5),))
    out = run_scenario(sc, list_chooser([]))
    assert out.ok, out.report()
    out.sim.ops[1].completed = False
    found |= {v.prop for v in check_quiescent(out.sim, out.calls)}
    # the hammer's event properties: twice completed, expired without the timer, expired early
    log = [ev.TryCompleteElseWatch(0, 1, 10, ("a",), False), ev.Complete(1, 1, "check"), ev.Complete(2, 1, "force"),
           ev.Expire(3, 1)]
    hammered = check_event_properties(log)
    assert [f.prop for f in hammered] == ["expiration", "expiration", "exactly-once"]
    assert show.finding_line(hammered[2]) == "exactly-once: onComplete(op1) ran 2 times (via check, force)"
    found |= {f.prop for f in hammered}
    _assert_registered(found, properties.CONCURRENT)
    assert {"exactly-once", "lost-wakeup", "crash", "deadlock", "no-progress", "expiration"} <= found


def test_trace_analysis_judges_the_registered_subset():
    from wheelspec.conformance.traces import rules

    assert tuple(rules.PROPERTIES) == properties.reported_by(properties.TRACE)
    assert set(rules.NOT_JUDGED) == set(properties.NOT_JUDGED_BY_TRACE)


def test_registry_entries_are_complete():
    for p in properties.PROPERTIES:
        assert p.summary and p.source and "\n" not in p.summary, p
        assert properties.get(p.name, p.judge) is p
    with pytest.raises(KeyError):
        properties.get("exactly-once", properties.HISTORY)
    assert properties.get("no-early-fire", properties.RUN).judge == properties.HISTORY
    # the same name, two judges: two properties
    assert properties.get("exactly-once", properties.REALTIME) != properties.get("exactly-once", properties.CONCURRENT)


# ------------------------------------------------------------------ JSON -------------------------
@pytest.mark.parametrize("finding,keys", [
    (Finding.at_step("oracle", 3, "op 3 differs"), ["prop", "step", "message"]),
    (Finding.at_step("refused-valid", None, "flaky"), ["prop", "step", "message"]),
    (Finding("late", "fired 300 ms late"), ["prop", "message"]),
    (Finding.in_history("fire-once", (2, 0, 5), "twice"), ["prop", "indices", "message"]),
])
def test_finding_json_round_trips_with_the_old_keys(finding, keys):
    import json

    d = finding.to_dict()
    assert list(d) == keys
    assert Finding.from_dict(json.loads(json.dumps(d))) == finding


def test_a_judged_run_serialises_as_before():
    from wheelspec.conformance.adapters import reference_adapter
    from wheelspec.conformance.adapters.protocol import Capabilities, Config
    from wheelspec.conformance.check.judge import expectation_failures
    from wheelspec.conformance.check.runner import run_ops

    run = run_ops(reference_adapter(), Config(), [ops.AddTask(1, 5), ops.AdvanceTo(5)])
    f = expectation_failures(run, [None, {"fired": [2]}])
    assert [x.to_dict() for x in f] == [{"prop": "expected", "step": 1,
                                         "message": "op 1 advance(time=5): expected fired [2], got [1]"}]
    assert Capabilities(profile="strict").profile == "strict"


def test_finding_rejects_an_unknown_location():
    with pytest.raises(ValueError):
        Finding("x", "y", location="somewhere")
    with pytest.raises(ValueError):
        Finding.from_dict({"prop": "x"})


# ------------------------------------------------------------------ aliases and the formatter ----
def test_old_names_resolve():
    from wheelspec.conformance.adapters import protocol
    from wheelspec.conformance.check import judge
    from wheelspec.conformance.matrix import rows as matrix
    from wheelspec.conformance.traces import local
    from wheelspec.reference import interleave
    from wheelspec.spec import checker

    v = Finding.in_history("size", [3, 1], "m")  # how checker_z3 builds one
    assert v == Finding.in_history("size", (3, 1), "m") and isinstance(v, Finding)
    for gone in ((checker, "Violation"), (judge, "Failure"), (interleave, "Scenario"),
                 (interleave, "check_history"), (local, "judge")):
        assert not hasattr(*gone), gone  # one name for one thing
    assert protocol.json_short is show.json_short
    assert judge.RUNNER_PROPS == properties.names(properties.RUN)
    # the matrix's columns are the registry's aliases, each naming properties that exist
    assert matrix.COLUMNS == properties.column_names()
    assert matrix.PROP_COLUMN == properties.columns_by_property(properties.HISTORY, properties.RUN)
    for c in properties.MATRIX_COLUMNS:
        assert all(properties.is_registered(n, j) for j, n in c.shows), c
    # the real-time names are declared aliases of the history properties they restate
    assert properties.get("early", properties.REALTIME).same_as == ("no-early-fire",)


def test_formatter_reads_records_one_way():
    o = ops.Watch(1, 5, ("a",))
    e = ev.Complete(3, 1, "check")
    assert show.op(o) == 'watch(op=1, delay=5, keys=["a"], completable=false)'
    assert show.step(4, o) == "op 4 " + show.op(o)
    assert show.event(e) == 'complete(now=3, op=1, via="check")'
    assert show.op_call(o) == "watch(1, 5, ('a',), False)"
    assert show.event_note(e) == "<complete op=1 via=check>"
    f = Finding.at_step("oracle", 2, "m")
    assert (show.finding(f), show.finding_at_step(f), show.finding_line(f)) == ("[oracle] m", "[oracle] step 2: m",
                                                                                "oracle: m")
    assert show.profile("kafka", 10) == "kafka tick 10" and show.profile("strict", 10) == "strict"
    assert show.profile("?", 10) == "?"
    assert profile("kafka", 10).uses_tick
