"""A declared granularity (capabilities ``lateness_ms`` / ``earliness_ms``): a coarse timer is
judged against the window it declares (property ``granularity``, reported once per history), the
rest as usual; without a declaration every verdict is the profile's own.

The acceptance fixtures are in ``tests/fixtures/coarse_wheel.py``: a wheel of 1024 ms buckets
declaring 1024 ms of lateness, the same wheel firing 1 ms past it, and a timer rounding deadlines
down to a 10 ms grid declaring 9 ms (and 8 ms) of earliness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import coarse_wheel

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import Scenario, load_corpus, run_scenario
from wheelspec.conformance.check.judge import claimed_profile, within_granularity
from wheelspec.conformance.check.oracle import oracle_mode
from wheelspec.conformance.cli import main
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.checker import check_history
from wheelspec.spec.errors import ProtocolError, UserError
from wheelspec.spec.profiles import PROFILE_NAMES, Granularity, profile

ROOT = Path(__file__).resolve().parents[1]
A, F, V, C, O = ev.Add, ev.Fire, ev.Advance, ev.Cancel, ev.Observe

#: schedules per campaign in these tests: the acceptance command's count
SCHEDULES = 300


# ------------------------------------------------------------------ the rule's one home ---------
@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_without_a_declaration_the_window_is_the_profiles_own(name):
    p = profile(name, tick=10)
    for exp in (-25, -1, 0, 1, 9, 10, 11, 1019, 1024):
        for added in (exp - 30, exp, exp + 7):
            lo, hi = p.fire_window(exp, added)
            assert lo == hi == p.earliest(exp)
            assert all(p.must_have_fired(exp, t) == (hi <= t) for t in range(exp - 12, exp + 12))


def test_a_declared_window_widens_the_profiles_own():
    g = Granularity(lateness_ms=1024, earliness_ms=9)
    assert profile("strict", granularity=g).fire_window(100, 0) == (91, 1124)
    assert profile("strict-gt", granularity=g).fire_window(100, 0) == (92, 1125)  # MockTimer: exp + 1
    assert profile("kafka", 10, granularity=g).fire_window(105, 0) == (91, 1124)  # the tick window's start
    # a delay <= 0 is due at the next advance: its lateness counts from its add, not from exp
    assert profile("strict", granularity=g).fire_window(-50, 100) == (-59, 1124)


def test_a_bad_declared_granularity_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"lateness_ms must be an integer in \[0, 1099511627775\].*-1"):
        profile("strict", granularity=Granularity(lateness_ms=-1))


# ------------------------------------------------------------------ the history checker --------
LATE = profile("strict", granularity=Granularity(lateness_ms=10))
EARLY = profile("strict", granularity=Granularity(earliness_ms=3))


def props(history, p):
    return [v.prop for v in check_history(history, p).violations]


def test_a_fire_inside_the_declared_lateness_passes_and_past_it_fails_granularity_alone():
    assert props([A(0, 1, 5, 5), V(14), F(15, 1, 5), V(15)], LATE) == []
    assert props([A(0, 1, 5, 5), V(15), F(16, 1, 5), V(16)], LATE) == ["granularity"]
    # the same histories without the declaration: the late fire is a lost task
    assert props([A(0, 1, 5, 5), V(14), F(15, 1, 5), V(15)], profile("strict")) == ["no-lost-task"]


def test_granularity_is_reported_once_per_history_counting_the_rest():
    h = [A(0, 1, 5, 5), A(0, 2, 6, 6), A(0, 3, 7, 7), V(20), F(21, 1, 5), F(21, 2, 6), F(21, 3, 7), V(21)]
    (v,) = check_history(h, LATE).violations
    assert v.prop == "granularity" and "task 1 (exp 5" in v.message and "(2 more outside" in v.message
    assert len(check_history(h, profile("strict")).violations) == 3  # one no-lost-task per task


def test_a_task_never_fired_past_its_declared_window_fails_granularity():
    assert props([A(0, 1, 5, 5), V(15), C(15, 1, True)], LATE) == ["granularity"]


def test_the_lateness_of_a_nonpositive_delay_counts_from_its_add():
    # added at 100 with exp 50: due at the next advance, at most 10 ms late
    assert props([V(100), A(100, 1, -50, 50), V(109), F(110, 1, 50), V(110)], LATE) == []
    assert props([V(100), A(100, 1, -50, 50), V(110), F(111, 1, 50), V(111)], LATE) == ["granularity"]


def test_a_declared_earliness_allows_early_fires_inside_it_only():
    assert props([A(0, 1, 5, 5), F(2, 1, 5), V(2)], EARLY) == []
    assert props([A(0, 1, 5, 5), F(1, 1, 5), V(1)], EARLY) == ["granularity"]
    # a lateness alone leaves the lower bound to no-early-fire, as usual
    assert props([A(0, 1, 5, 5), F(2, 1, 5), V(2)], LATE) == ["no-early-fire"]
    # an earliness alone leaves the upper bound to no-lost-task, as usual
    assert props([A(0, 1, 5, 5), V(5)], EARLY) == ["no-lost-task"]


def test_z3_agrees_on_passing_histories_inside_a_declared_window():
    g = profile("strict", granularity=Granularity(10, 3))
    h = [A(0, 1, 5, 5), A(0, 2, 9, 9), F(6, 2, 9), F(6, 1, 5), V(6), A(6, 3, 1, 7), V(16), F(17, 3, 7), V(17)]
    verdict = check_history(h, g, z3=True)
    assert verdict.ok, verdict.explain(h)
    bad = check_history([A(0, 1, 5, 5), F(1, 1, 5), A(1, 2, 4, 5), F(1, 2, 5), V(1)], g, z3=True)
    # the second early fire is counted in the one finding, and Z3's full re-judging agrees
    assert [v.prop for v in bad.violations] == ["granularity"] and "(1 more" in bad.violations[0].message
    assert any(n.startswith("z3: granularity confirmed") for n in bad.z3_notes), bad.z3_notes


# ------------------------------------------------------------------ capabilities --------------
def test_capabilities_declare_a_granularity_and_refuse_a_bad_one_in_one_line():
    caps = Capabilities.from_dict({"profile": "strict", "lateness_ms": 1024, "earliness_ms": 9})
    assert caps.granularity() == Granularity(1024, 9)
    assert Capabilities.from_dict(caps.to_dict()) == caps
    assert "lateness_ms" not in Capabilities().to_dict() and "earliness_ms" not in Capabilities().to_dict()
    for bad, words in (({"lateness_ms": -1}, "capabilities.lateness_ms must be an integer"),
                       ({"earliness_ms": "9"}, "capabilities.earliness_ms must be an integer"),
                       ({"lateness_ms": True}, "capabilities.lateness_ms"),
                       ({"lateness_ms": 2**40}, "[0, 1099511627775]"),
                       ({"time": "real", "lateness_ms": 5}, "virtual-time granularity")):
        with pytest.raises(ProtocolError) as e:
            Capabilities.from_dict(bad)
        assert words in str(e.value) and "\n" not in str(e.value)


def test_a_python_adapter_declares_it_as_class_attributes():
    caps = coarse_wheel.factory().hello().capabilities
    assert (caps.lateness_ms, caps.earliness_ms) == (1024, 0)
    assert claimed_profile(caps, Config()).granularity == Granularity(1024, 0)

    class Bad(coarse_wheel.CoarseWheel):
        lateness_ms = -5

    with pytest.raises(UserError, match=r"^capabilities.lateness_ms must be an integer .*-5$"):
        Bad().hello()


def test_the_oracle_compares_only_refusals_under_a_declared_granularity():
    wheel = Capabilities(profile="kafka", tick_ms=1, wheel_size=20)
    assert oracle_mode(wheel) == "exact"
    assert oracle_mode(Capabilities(profile="kafka", tick_ms=1, wheel_size=20, lateness_ms=5)) == "refusals"
    assert oracle_mode(Capabilities(profile="strict-gt", earliness_ms=1)) == "refusals"


# ------------------------------------------------------------------ scenarios ------------------
def test_scenario_expectations_of_when_tasks_fire_are_left_to_the_checker():
    operations = [ops.AddTask(1, 5), ops.AdvanceTo(5), ops.CancelTask(1), ops.Size(), ops.AdvanceTo(6)]
    expects = [{"result": 5}, {"fired": [1], "now": 5}, {"result": False}, {"result": 0},
               {"fired_set": [], "now": 6}]
    assert within_granularity(operations, expects) == [{"result": 5}, {"now": 5}, None, None, {"now": 6}]


def _scenario(steps):
    operations = [s[0] for s in steps]
    return Scenario("test/granularity", Config(), operations, [s[1] for s in steps])


def test_a_scenario_with_exact_fire_times_passes_a_wheel_late_inside_its_bound_and_fails_past_it():
    # exp 1024 is on a bucket's start: the wheel fires it at 2048, its declared bound, the late
    # variant at 2049; the scenario pins Kafka's exact fire at 1024
    sc = _scenario([(ops.AddTask(1, 1024), {"result": 1024}), (ops.AdvanceTo(1024), {"fired": [1]}),
                    (ops.AdvanceTo(2048), {"now": 2048}), (ops.Size(), {"result": 0})])
    for make, want in ((coarse_wheel.factory, set()), (coarse_wheel.late_factory, {"granularity"}),
                       (coarse_wheel.undeclared_factory, {"no-lost-task", "expected"})):
        adapter = make()
        caps = adapter.hello().capabilities
        r = run_scenario(adapter, caps, sc)
        assert {f.prop for f in r.failures} == want, (make, r.failures)
        assert ("declared granularity" in r.note) == bool(caps.granularity())
    # refusals, the clock and an add's expiration are still compared
    wrong = _scenario([(ops.AddTask(1, 1024), {"result": 1000}), (ops.AdvanceTo(7), {"now": 8})])
    adapter = coarse_wheel.factory()
    r = run_scenario(adapter, adapter.hello().capabilities, wrong)
    assert [f.prop for f in r.failures] == ["expected", "expected"]


# ------------------------------------------------------------------ the acceptance fixtures -----
def failing_props(make):
    """Every property any campaign schedule or corpus scenario fails, unshrunk, for ``make``."""
    adapter = make()
    caps = adapter.hello().capabilities
    out: set[str] = set()
    failing = 0
    for o in run_seed_range(adapter, caps, "timer", range(SCHEDULES), shrink=False):
        out |= {f.prop for f in o.failures}
        failing += not o.ok
    for sc in load_corpus():
        r = run_scenario(adapter, caps, sc)
        out |= {f.prop for f in r.failures}
        failing += r.status == "fail"
    adapter.close()
    return out, failing


@pytest.mark.parametrize("make,want", [
    (coarse_wheel.factory, set()),
    (coarse_wheel.late_factory, {"granularity"}),       # 1 ms past its declared lateness
    (coarse_wheel.grid_factory, set()),
    (coarse_wheel.tight_grid_factory, {"granularity"}),  # 1 ms short of the earliness it shows
], ids=["coarse", "coarse-1ms-late", "grid", "grid-1ms-early"])
def test_a_coarse_timer_is_judged_against_its_declared_granularity_alone(make, want):
    got, failing = failing_props(make)
    assert got == want
    assert bool(failing) == bool(want)


def test_without_the_declaration_the_coarse_wheel_fails_as_before():
    adapter = coarse_wheel.undeclared_factory()
    caps = adapter.hello().capabilities
    outcomes = run_seed_range(adapter, caps, "timer", range(40), shrink=False)
    assert {f.prop for o in outcomes for f in o.failures} >= {"no-lost-task"}
    assert "granularity" not in {f.prop for o in outcomes for f in o.failures}


def test_wheelspec_check_passes_the_coarse_wheel_declaring_its_lateness(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # `--impl tests.fixtures...` imports from the project root
    out = tmp_path / "report.json"
    code = main(["check", "--impl", "tests.fixtures.coarse_wheel:factory", "--schedules", str(SCHEDULES),
                 "--out", str(tmp_path / "cx"), "--json", str(out)])
    capsys.readouterr()
    (impl,) = json.loads(out.read_text())["implementations"]
    assert code == 0 and impl["status"] == "pass"
    assert impl["capabilities"]["lateness_ms"] == 1024
