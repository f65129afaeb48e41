"""Broken implementations (tests/fixtures/broken.py) are each caught, through the seeded campaign,
with a minimal counterexample that replays."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import resolve
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import load
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.fixtures import broken  # noqa: E402 - needs the sys.path entry above

#: fixture -> (campaign kind, properties that name its symptom, largest shrunk size)
CAUGHT = {
    "fires-early": ("timer", {"no-early-fire"}, 1),
    "fires-cancelled": ("timer", {"no-fire-after-cancel"}, 4),
    "fires-twice": ("timer", {"fire-once"}, 4),
    "drops-readd": ("timer", {"no-lost-task", "size"}, 4),
    "relative-bucket": ("timer", {"no-lost-task", "no-early-fire", "oracle"}, 6),
    "no-requeue": ("timer", {"no-lost-task"}, 6),
    "complete-twice": ("purgatory", {"complete-once"}, 3),
    "no-purge": ("purgatory", {"oracle"}, 8),
    # no second tryComplete: seen only when a watch races its own completion (completes_on_retry)
    "one-try": ("purgatory", {"oracle"}, 1),
}
SEEDS = 400


def _first_failure(name: str, kind: str, props: set[str] | None = None):
    """The first seed whose (shrunk) failure shows one of ``props`` (any failure if None)."""
    adapter = broken.FACTORIES[name]()
    caps = adapter.hello().capabilities
    for seed in range(SEEDS):
        out = run_seed_range(adapter, caps, kind, [seed], impl_name=name)[0]
        if not out.ok and (props is None or out.failures[0].prop in props):
            return adapter, caps, out
    pytest.fail(f"broken fixture {name!r}: none of {SEEDS} {kind} schedules showed {props or 'a failure'}")


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_broken_fixture_is_caught_with_a_minimal_counterexample(name, tmp_path):
    kind, props, largest = CAUGHT[name]
    adapter, caps, out = _first_failure(name, kind, props)
    cx = out.counterexample
    assert cx is not None
    assert out.failures[0].prop in props, out.failures[0]
    assert len(cx.ops) <= largest, cx.ops
    # 1-minimal: without any one of its operations the counterexample no longer fails that way
    prop = out.failures[0].prop
    assert any(f.prop == prop for f in judge(run_ops(adapter, cx.config, cx.ops), caps))
    for i in range(len(cx.ops)):
        smaller = cx.ops[:i] + cx.ops[i + 1:]
        assert not any(f.prop == prop for f in judge(run_ops(adapter, cx.config, smaller), caps)), i
    # saved as a scenario file, it replays: exit 1 on the broken fixture, exit 0 on the reference
    path = cx.save(tmp_path / "cx.json")
    assert load(path).ops == cx.ops
    factory = f"tests.fixtures.broken:{name.replace('-', '_')}"
    assert main(["replay", str(path), "--impl", factory]) == 1
    assert main(["replay", str(path), "--impl", "reference"]) == 0


def test_shrinking_asks_z3_only_about_the_counterexample_it_keeps(monkeypatch):
    """Shrinking judges its candidates by the fast path (Z3 would only move each finding's step to
    its unsat core): one run per candidate without Z3, then the schedule it keeps with Z3's
    confirmation, so the counterexample's findings are those of a fresh judgement of it."""
    from wheelspec.conformance.check import shrink

    calls: list[bool] = []
    real = shrink.judge_schedule

    def spy(*args, minimise=True, **kwargs):
        calls.append(minimise)
        return real(*args, minimise=minimise, **kwargs)

    monkeypatch.setattr(shrink, "judge_schedule", spy)
    adapter, caps, out = _first_failure("no-requeue", "timer", {"no-lost-task"})
    cx = out.counterexample
    assert cx is not None and cx.origin is not None and cx.origin["original_ops"] > len(cx.ops)
    assert len(calls) > 10 and calls[-1] is True and not any(calls[:-1]), calls
    fresh = judge(run_ops(adapter, cx.config, cx.ops), caps)
    assert {f.to_dict()["prop"] for f in fresh} == {f.prop for f in out.failures}
    assert [f.to_dict() for f in out.failures] == [f.to_dict() for f in sorted(
        fresh, key=lambda f: f.prop != out.failures[0].prop)]


@pytest.mark.slow
def test_same_seed_same_counterexample():
    a = _first_failure("no-requeue", "timer")[2]
    b = _first_failure("no-requeue", "timer")[2]
    assert (a.seed, a.counterexample.to_dict()) == (b.seed, b.counterexample.to_dict())


@pytest.mark.slow
def test_broken_fixtures_also_fail_the_corpus():
    """The scenario corpus alone catches the timer bugs that a Kafka test fact exposes."""
    from wheelspec.conformance.check.corpus import load_corpus, run_scenario

    corpus = load_corpus()
    for name in ("fires-early", "fires-cancelled", "fires-twice", "drops-readd", "complete-twice", "no-purge"):
        adapter = broken.FACTORIES[name]()
        caps = adapter.hello().capabilities
        failed = [sc.name for sc in corpus if run_scenario(adapter, caps, sc).status == "fail"]
        assert failed, name


def test_one_try_is_caught_by_the_watch_race_scenario():
    """``tryCompleteElseWatch`` without its second ``tryComplete`` differs from Kafka only when the
    operation becomes completable *between* the first try and the watch.  A sequential history
    expresses that race with ``Watch(completes_on_retry=True)`` (spec/ops.py); the corpus scenario
    built on it catches the fixture: the call returns false, the reference returns true."""
    from wheelspec.conformance.check.corpus import load_corpus, run_scenario

    sc = next(s for s in load_corpus() if s.name == "purgatory/second-try-completes-during-watch")
    adapter = broken.FACTORIES["one-try"]()
    res = run_scenario(adapter, adapter.hello().capabilities, sc)
    assert res.status == "fail"
    assert any(f.step == 0 and "result" in f.message for f in res.failures), res.failures
    ref = resolve("reference")()
    assert run_scenario(ref, ref.hello().capabilities, sc).status == "pass"


def test_one_try_is_not_observable_without_the_race():
    """Without ``completes_on_retry`` the fixture's histories are the reference's, event for
    event: the second try only matters inside the race window.  (The same campaign schedules with
    that flag cleared all pass; with it, they catch the fixture: see CAUGHT.)"""
    import dataclasses

    from wheelspec.conformance.check.generate import generate
    from wheelspec.spec import ops

    adapter = broken.FACTORIES["one-try"]()
    caps = adapter.hello().capabilities
    raced = 0
    for seed in range(150):
        cfg, sched = generate("purgatory", seed)
        raced += sum(isinstance(o, ops.Watch) and o.completes_on_retry for o in sched)
        plain = [dataclasses.replace(o, completes_on_retry=False) if isinstance(o, ops.Watch) else o
                 for o in sched]
        assert not judge(run_ops(adapter, cfg, plain), caps), seed
    assert raced > 0, "the campaign draws no racing watch: the test above would prove nothing"
