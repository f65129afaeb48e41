"""Seeded campaigns: deterministic schedules, the reference passes, shrinking is minimal and
deterministic, the oracle and profile judgements are live (mutations are caught)."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import examples
from fixtures.broken import SizeRefuser

from wheelspec.conformance.adapters import reference_adapter, resolve
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Response
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.generate import KINDS, generate
from wheelspec.conformance.check.judge import judge, oracle_failures
from wheelspec.conformance.check.oracle import oracle_mode
from wheelspec.conformance.check.runner import run_ops
from wheelspec.spec import events as ev
from wheelspec.spec import ops

#: sha256 over seeds 0..199 of each kind: same seed, same schedule, on any machine. If the
#: generator changes on purpose, bump that kind's version in GENERATORS and its digest here.
GOLDEN = {
    "timer": "37987297e04f27c434cd14c857fcf78720e91e0e37b3001901958f7d3b5d5394",
    "purgatory": "d0a782fc673f73b8e12e8b273f7f1adfe5ba51fead3d1e6ab98c868b30876fd3",
}


def test_schedules_are_a_pure_function_of_kind_and_seed():
    for kind in KINDS:
        h = hashlib.sha256()
        for seed in range(200):
            cfg, s = generate(kind, seed)
            h.update(json.dumps([cfg.to_dict(), [o.to_dict() for o in s]], sort_keys=True).encode())
        assert h.hexdigest() == GOLDEN[kind], kind


def test_schedules_cover_what_they_claim():
    seen: set[str] = set()
    ticks, wheels, delays = set(), set(), []
    for seed in range(300):
        cfg, s = generate("purgatory", seed)
        ticks.add(cfg.tick_ms)
        wheels.add(cfg.wheel_size)
        for op in s:
            seen.add(op.kind)
            if isinstance(op, ops.AddTask):
                delays.append((op.delay, cfg.tick_ms))
    assert seen == {c.kind for c in (*ops.TIMER_OPS, *ops.PURGATORY_OPS)}
    assert {1, 10, 50} <= ticks and {2, 20} <= wheels
    assert any(d <= 0 for d, _ in delays)
    assert any(t > 1 and d % t == t - 1 for d, t in delays)  # k*tick - 1


def test_reference_passes_campaigns_in_process():
    a = reference_adapter()
    caps = a.hello().capabilities
    n = examples(100, 600)
    for kind in KINDS:
        outs = run_seed_range(a, caps, kind, range(n))
        assert [o.seed for o in outs if not o.ok] == []


@pytest.mark.parametrize("spec", ["reference-mock", "reference-subprocess", "optimized"])
def test_our_other_engines_pass_campaigns(spec):
    n = examples(40, 300)
    a = resolve(spec)()
    caps = a.hello().capabilities
    try:
        for kind in KINDS:
            bad = [(o.seed, o.failures[0].message) for o in run_seed_range(a, caps, kind, range(n)) if not o.ok]
            assert bad == [], spec
    finally:
        a.close()


def test_oracle_exact_mode_catches_a_reordered_fire():
    """Mutation of a run: swap two fires of one advance. Profile rules allow it (same tick), the
    exact oracle does not; the multiset oracle does."""
    caps = reference_adapter().hello().capabilities
    schedule = [ops.AddTask(1, 5), ops.AddTask(2, 5), ops.AdvanceTo(5)]
    run = run_ops(reference_adapter(), Config(), schedule)
    fires = run.steps[2].response.events
    assert [e.task for e in fires] == [1, 2]
    oracle = run_ops(reference_adapter(), Config(), schedule)
    run.steps[2].response = Response(5, list(reversed(fires)), None)
    assert oracle_mode(caps) == "exact"
    assert [f.prop for f in oracle_failures(run, oracle, "exact")] == ["oracle"]
    assert oracle_failures(run, oracle, "multiset") == []


def test_judge_flags_a_refused_valid_request_and_an_accepted_invalid_one():
    caps = Capabilities(profile="strict", configurable=("start_ms",))
    r = SizeRefuser(reference_adapter())
    f1 = judge(run_ops(r, Config(), [ops.AddTask(1, 1), ops.Size()]), caps)
    assert [f.prop for f in f1] == ["refused-valid"] and f1[0].step == 1
    f2 = judge(run_ops(r, Config(), [ops.AddTask(1, 2**40 + 5)]), caps)
    assert [f.prop for f in f2] == ["ranges"]  # out of range: the range contract's own property
    f3 = judge(run_ops(r, Config(), [ops.CancelTask(9)]), caps)
    assert [f.prop for f in f3] == ["accepted-invalid"]  # a cancel of a task never added


def test_the_oracle_cache_never_judges_a_schedule_with_the_run_of_one_only_equal_in_python():
    """``AddTask(task=True)`` == ``AddTask(task=1)`` in Python (and their hashes agree), but the
    reference refuses a bool id: a schedule judged after the other must get its own oracle run."""
    adapter = reference_adapter()
    caps = adapter.hello().capabilities
    config = Config(1, 20, 0, 1000)
    ints = [ops.AddTask(task=1, delay=5), ops.Watch(op=2, delay=5, keys=(1,), completable=False),
            ops.AdvanceTo(time=10)]
    bools = [ops.AddTask(task=True, delay=5), ops.Watch(op=2, delay=5, keys=(True,), completable=False),
             ops.AdvanceTo(time=10)]
    for first, second in ((ints, bools), (bools, ints)):
        assert judge(run_ops(adapter, config, first), caps) == []
        run = run_ops(adapter, config, second)
        assert judge(run, caps) == [], [s.response for s in run.steps]


def test_profile_judgement_catches_a_planted_early_fire_without_the_oracle():
    caps = Capabilities(profile="strict", configurable=("start_ms",))  # oracle: refusals only

    class Early:
        def __init__(self):
            self.inner = reference_adapter()

        def reset(self, config):
            self.inner.reset(Config(tick_ms=10, start_ms=config.start_ms))  # a kafka wheel, tick 10

        def request(self, op):
            return self.inner.request(op)

    failures = judge(run_ops(Early(), Config(), [ops.AddTask(1, 15), ops.AdvanceTo(10)]), caps)
    assert [f.prop for f in failures] == ["no-early-fire"]
    assert "fired at 10" in failures[0].message


def test_in_process_adapter_that_raises_is_judged_not_crashed():
    class Raiser:
        def reset(self, config):
            pass

        def request(self, op):
            raise ZeroDivisionError("oops")

    caps = Capabilities(profile="strict", configurable=("start_ms",))
    failures = judge(run_ops(Raiser(), Config(), [ops.AddTask(1, 1)]), caps)
    assert failures[0].prop == "refused-valid" and "ZeroDivisionError" in failures[0].message


def test_events_of_a_refused_request_are_not_recorded():
    run = run_ops(reference_adapter(), Config(), [ops.AddTask(1, 0), ops.AddTask(2, 2**41), ops.Size()])
    assert [type(e) for e in run.history] == [ev.Fire, ev.Add, ev.Observe]
    assert run.event_step == [0, 0, 2]


from hypothesis import given, settings  # noqa: E402 - the property-based section's imports
from hypothesis import strategies as st  # noqa: E402 - likewise


@settings(max_examples=examples(40, 300))
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**63 - 1))
def test_reference_passes_any_seed_hypothesis_explores(kind, seed):
    """Beyond the fixed seed ranges of `wheelspec check`, Hypothesis explores the whole seed space
    (and would shrink a failing seed toward 0; the schedule itself is shrunk by conformance/check/shrink.py)."""
    a = reference_adapter()
    out = run_seed_range(a, a.hello().capabilities, kind, [seed], shrink=False)[0]
    assert out.ok, (seed, out.failures[:1])
