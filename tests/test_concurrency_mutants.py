"""Known races, reintroduced as mutants, are found by the deterministic simulation.

For each mutant: Hypothesis searches schedules of the mutant's scenario, must find a violation
within a bounded number of examples, shrinks it, and the shrunk schedule must replay to the same
violation; the correct model must pass that schedule and a few hundred others of the same scenario.
Run with ``-s`` to see each shrunk interleaving as a per-thread timeline and the examples it took.
"""

from __future__ import annotations

import random

import pytest
from conftest import examples

from wheelspec.conformance.concurrency.linearizability import check
from wheelspec.conformance.concurrency.models import WHEELSPEC, from_step_model
from wheelspec.reference.interleave import hunt, replay, run_scenario
from wheelspec.reference.mutants import MUTANTS, scenario_for
from wheelspec.reference.scheduler import list_chooser, pct_chooser, segment_chooser

#: the bound on examples-to-detection each mutant must meet (measured: see docs/design/CONCURRENCY.md)
BOUND = 1000
#: the calls in the smallest non-linearizable window of each race's history
WINDOWS = {"no-second-try": ["CheckAndComplete", "SetCompletable", "Watch"],
           "trylock-check": ["CheckAndComplete", "SetCompletable", "Watch"],
           "unguarded-completed": ["ForceComplete", "Watch"], "watch-outside-shard-lock": ["CheckAndComplete"],
           "remove-wrong-list": None, "check-holds-shard-lock": None}
EXPECTED = {"no-second-try": "lost-wakeup", "trylock-check": "lost-wakeup", "unguarded-completed": "exactly-once",
            "remove-wrong-list": "crash", "watch-outside-shard-lock": "lost-wakeup",
            "check-holds-shard-lock": "deadlock"}


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_found_shrunk_and_replayable(mutant: str) -> None:
    scenario = scenario_for(mutant)
    found = hunt(scenario, [mutant], max_examples=BOUND, seed=7)
    assert found is not None, f"{mutant}: no violation in {BOUND} examples"
    print(f"\n=== {mutant}: found after {found.examples} examples; shrunk schedule {found.schedule}")
    print(found.outcome.report())
    assert any(v.prop == EXPECTED[mutant] for v in found.outcome.violations), found.outcome.violations
    # the recorded choices replay the same run exactly
    again = replay(scenario, found.outcome.run.choices, [mutant])
    assert again.violations == found.outcome.violations and again.run.steps == found.outcome.run.steps
    # the correct model passes the very same schedule
    assert run_scenario(scenario, segment_chooser(found.schedule)).ok
    # the linearizability checker finds the semantic races on its own, with a small window (the
    # crash and the deadlock leave no complete history: the scheduler reports those)
    o = found.outcome
    res = check(WHEELSPEC, from_step_model(o.calls, o.sim.stamped, o.sim.handed_over))
    if WINDOWS[mutant] is None:
        assert res.ok
    else:
        assert not res.ok
        print(res.windows[0].render(WHEELSPEC))
        got = sorted(type(x.input).__name__.replace("Projected", "CheckAndComplete") for x in res.windows[0].ops)
        assert got == WINDOWS[mutant]


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_correct_model_passes_the_mutant_scenarios(mutant: str) -> None:
    scenario = scenario_for(mutant)
    rng = random.Random(mutant)
    for _ in range(examples(150, 600)):
        choices = [rng.randrange(4) for _ in range(rng.randrange(20, 150))]
        out = run_scenario(scenario, list_chooser(choices))
        assert out.ok, out.report()


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_pct_schedules_find_every_mutant(mutant: str) -> None:
    """PCT (random priorities, two priority-change points in the first 30 steps) finds each race
    too; the number of PCT runs it took is printed."""
    scenario = scenario_for(mutant)
    n = len(scenario.threads) + 1  # the executor is a thread too
    hit = next((seed for seed in range(1000)
                if not run_scenario(scenario, pct_chooser(seed, n, depth=3, max_steps=30), [mutant]).ok), None)
    assert hit is not None, f"PCT did not find {mutant} in 1000 runs"
    print(f"\nPCT found {mutant} after {hit + 1} runs")


@pytest.mark.slow
def test_deadlock_report_names_each_thread_position() -> None:
    scenario = scenario_for("check-holds-shard-lock")
    found = hunt(scenario, ["check-holds-shard-lock"], max_examples=BOUND, seed=1)
    assert found is not None and found.outcome.run.deadlock is not None
    text = found.outcome.report()
    assert "T0 waits for" in text and "T1 waits for" in text and "holding [op1.lock]" in text


def test_races_command(capsys) -> None:
    from wheelspec.conformance.cli import main

    assert main(["races", "--mutant", "unguarded-completed", "--clean", "20"]) == 0
    out = capsys.readouterr().out
    assert "unguarded-completed" in out and "found after" in out and "VIOLATION exactly-once" in out
    assert "replay: wheelspec.reference.interleave.replay(" in out
    assert main(["races", "--mutant", "no-such-race"]) == 2
    assert "no-such-race" in capsys.readouterr().err
