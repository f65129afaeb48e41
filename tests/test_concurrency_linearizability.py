"""Linearizability checking, and real threads on the facades."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_concurrency_properties import scenarios

from wheelspec.conformance.cli import main
from wheelspec.conformance.concurrency.hammer import Locked, check_event_properties, hammer
from wheelspec.conformance.concurrency.history_file import dumps, loads
from wheelspec.conformance.concurrency.linearizability import Operation, check
from wheelspec.conformance.concurrency.models import KV, WHEELSPEC, from_step_model
from wheelspec.reference import Simulation
from wheelspec.reference.interleave import run_scenario, schedules
from wheelspec.reference.mutants import scenario_for
from wheelspec.reference.scheduler import segment_chooser
from wheelspec.spec import ops


# ------------------------------------------------------------------------------ the checker itself
def test_register_examples() -> None:
    ok = [Operation(0, ("put", "x", "1"), 0, None, 5), Operation(1, ("get", "x"), 1, "1", 2),
          Operation(2, ("get", "x"), 1, "", 3)]
    assert check(KV, ok).ok
    stale = [Operation(0, ("put", "x", "1"), 0, None, 1), Operation(1, ("get", "x"), 2, "", 3)]
    res = check(KV, stale)
    assert not res.ok and len(res.windows) == 1
    # the window starts after the quiescent point that follows the put: the get alone, from "1"
    assert [o.input for o in res.windows[0].ops] == [("get", "x")] and res.windows[0].start_states == ["1"]


def test_window_keeps_calls_that_explain_earlier_ones() -> None:
    """Regression (found by the ci profile): a get explained only by a put invoked *after* it
    must not be blamed; the window must contain the impossible read."""
    h = [Operation(0, ("get", "x"), 0, "1", 5), Operation(1, ("put", "x", "1"), 1, None, 6),
         Operation(2, ("get", "x"), 2, "zzz", 3)]
    res = check(KV, h)
    assert not res.ok
    window = res.windows[0].ops
    assert any(o.output == "zzz" for o in window)
    assert all(o.ret is None for o in window if o.output != "zzz")  # the others were still running


def _register_history(rng: random.Random, n: int, keys: int, clients: int = 4) -> list[Operation]:
    """A history of an atomic register store: each call takes effect at a random point inside its
    interval, so the result is linearizable by construction."""
    points = []
    for i in range(n):
        call = rng.random() * n
        dur = rng.random() * 3
        points.append((call + rng.random() * dur, call, call + dur, i % clients))
    store: dict[str, str] = {}
    out = []
    for _at, call, ret, client in sorted(points):
        key = f"k{rng.randrange(keys)}"
        if rng.random() < 0.5:
            v = str(rng.randrange(1000))
            store[key] = v
            out.append(Operation(client, ("put", key, v), call, None, ret))
        else:
            out.append(Operation(client, ("get", key), call, store.get(key, ""), ret))
    return out


@settings(max_examples=examples(60, 200))
@given(seed=st.integers(0, 2**32 - 1))
def test_register_histories_linearizable_and_a_planted_stale_read_is_not(seed: int) -> None:
    rng = random.Random(seed)
    h = _register_history(rng, 200, 5)
    assert check(KV, h).ok
    gets = [i for i, o in enumerate(h) if o.input[0] == "get"]
    if gets:
        i = rng.choice(gets)
        h[i] = dataclasses.replace(h[i], output="never-written")
        res = check(KV, h)
        assert not res.ok
        assert any(o.output == "never-written" for w in res.windows for o in w.ops)


def test_register_throughput_figure() -> None:
    """Prints the checker's speed on a 10 000-call register history over 100 keys."""
    h = _register_history(random.Random(1), 10_000, 100)
    res = check(KV, h)
    assert res.ok
    print(f"\nKV register: {res.summary()}")


# ------------------------------------------------------------------------------ the step model
@settings(max_examples=examples(80, 300))
@given(data=st.data())
def test_step_model_histories_are_linearizable(data) -> None:
    scenario = data.draw(scenarios())
    out = run_scenario(scenario, segment_chooser(data.draw(schedules(len(scenario.threads), 8, 10))))
    assert out.ok
    res = check(WHEELSPEC, from_step_model(out.calls, out.sim.stamped, out.sim.handed_over))
    assert res.ok, "\n".join(w.render(WHEELSPEC) for w in res.windows) + "\n" + out.report()


# ------------------------------------------------------------------------------ real threads
@pytest.mark.parametrize("engine", ["optimized", "reference"])
def test_real_threads_on_the_facades_are_linearizable(engine: str) -> None:
    if engine == "optimized":
        from wheelspec.optimized import LockedSimulation

        def make():
            return LockedSimulation(1, 20, 0, 50)
    else:
        def make():
            return Locked(Simulation(1, 20, 0, 50))
    rec = hammer(make, threads=4, ops_per_thread=examples(500, 2500), keys=20, seed=5)
    kinds = {type(o.input).__name__ for o in rec.history}
    assert {"ExpireCall", "FireCall", "CheckAndComplete", "Watch", "CancelTask"} <= kinds, kinds
    assert check_event_properties(rec.events) == []
    res = check(WHEELSPEC, rec.history)
    assert res.ok, "\n".join(w.render(WHEELSPEC) for w in res.windows[:3])
    print(f"\n{engine}: {res.summary()}")


def _plant_lost_wakeup(history: list[Operation]) -> tuple[list[Operation], int]:
    """Remove one operation from the output of the check that completed it, where the operation
    was made completable before that check began: the black-box symptom of a lost wakeup."""
    sets = {}
    for o in history:
        if isinstance(o.input, ops.SetCompletable):
            sets.setdefault(o.input.op, o.ret)
    for i, o in enumerate(history):
        if isinstance(o.input, ops.CheckAndComplete) and o.output:
            for op_id in o.output:
                if sets.get(op_id, float("inf")) < o.call:
                    out = tuple(x for x in o.output if x != op_id)
                    return history[:i] + [dataclasses.replace(o, output=out)] + history[i + 1:], op_id
    raise AssertionError("no check completed an operation made completable before it")


@pytest.mark.slow
def test_real_thread_history_10k_over_100_keys_and_a_planted_lost_wakeup(tmp_path) -> None:
    """The acceptance figure (printed): 10 000 calls from 4 threads + a reaper, 100 keys."""
    from wheelspec.optimized import LockedSimulation

    rec = hammer(lambda: LockedSimulation(1, 20, 0, 1000), threads=4, ops_per_thread=2500, keys=100, seed=11)
    calls = sum(1 for o in rec.history if not type(o.input).__name__.endswith("Call"))
    t0 = time.perf_counter()
    res = check(WHEELSPEC, rec.history)
    print(f"\n{calls} calls (+{len(rec.history) - calls} fire/expire pseudo-calls): {res.summary()} "
          f"[{time.perf_counter() - t0:.2f} s wall]")
    assert calls >= 10_000 and res.ok
    planted, op_id = _plant_lost_wakeup(rec.history)
    bad = check(WHEELSPEC, planted)
    assert not bad.ok and bad.windows[0].partition == f"op {op_id}"
    print(bad.windows[0].render(WHEELSPEC))
    window = bad.windows[0].ops
    # at most the calls on that operation overlapping the planted check (4 workers and a reaper)
    assert len(window) <= 6
    assert any(type(o.input).__name__ == "Projected" and o.output is False for o in window)
    # the same through the command: a history file, exit 1, the window printed
    f = tmp_path / "planted.jsonl"
    f.write_text(dumps(planted))
    assert loads(f.read_text()) == planted
    assert main(["linearize", str(f)]) == 1


def test_linearize_command_exit_codes(tmp_path, capsys) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(dumps([Operation(0, ops.Watch(1, 5, ("a",)), 0, False, 1),
                           Operation(1, ops.SetCompletable(1), 2, None, 3),
                           Operation(1, ops.CheckAndComplete("a"), 4, (1,), 5)]))
    assert main(["linearize", str(good)]) == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"client": 0, "call": 0}\n')
    assert main(["linearize", str(bad)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert main(["linearize", str(tmp_path / "missing.jsonl")]) == 2


# ------------------------------------------------------------------------------ the mutant scenarios on the facades
@pytest.mark.parametrize("engine", ["optimized", "reference"])
def test_facades_pass_the_mutant_scenarios_under_every_kind_of_schedule(engine: str) -> None:
    """The scenarios that expose each race in the step model, run on the facades under the
    deterministic scheduler (per-step, segment and PCT schedules): every history linearizable,
    exactly-once and expiration hold."""
    from wheelspec.conformance.concurrency.hammer import drive
    from wheelspec.reference.mutants import MUTANTS
    from wheelspec.reference.scheduler import list_chooser, pct_chooser

    if engine == "optimized":
        from wheelspec.optimized import LockedSimulation

        def make():
            return LockedSimulation(1, 4, 0, 0)
    else:
        def make():
            return Locked(Simulation(1, 4, 0, 0))
    rng = random.Random(engine)
    runs = 0
    for name in MUTANTS:
        scenario = scenario_for(name)
        n = len(scenario.threads)
        for k in range(examples(15, 60)):
            chooser = [list_chooser([rng.randrange(4) for _ in range(12)]),
                       segment_chooser([(rng.randrange(n), rng.randrange(1, 4)) for _ in range(3)]),
                       pct_chooser(k, n, depth=2, max_steps=8)][k % 3]
            run, history, events = drive(scenario, chooser, make)
            assert run.ok, run.problems()
            res = check(WHEELSPEC, history)
            assert res.ok, "\n".join(w.render(WHEELSPEC) for w in res.windows)
            assert check_event_properties(events) == []
            runs += 1
    print(f"\n{engine}: {runs} scheduled runs of the mutant scenarios, all linearizable")


def test_scheduled_facade_runs_catch_a_purgatory_whose_check_never_completes() -> None:
    """Mutation check for the test above: a reference purgatory whose checkAndComplete does
    nothing is caught on the lost-wakeup scenario."""
    from wheelspec.conformance.concurrency.hammer import drive
    from wheelspec.reference.scheduler import list_chooser

    def make():
        sim = Simulation(1, 4, 0, 0)
        sim.purgatory.check_and_complete = lambda key: 0
        return Locked(sim)

    run, history, _ = drive(scenario_for("no-second-try"), list_chooser([]), make)
    res = check(WHEELSPEC, history)
    assert run.ok and not res.ok
    assert any(isinstance(o.input, type(res.windows[0].ops[0].input)) for o in res.windows[0].ops)
    assert "check('a') completed op 1: False" in res.windows[0].render(WHEELSPEC)


# ------------------------------------------------------------------------------ wheelspec linearize --impl
def lossy_purgatory(**cfg):
    """An implementation whose checkAndComplete never completes anything (used by --impl below)."""
    sim = Simulation(**cfg)
    sim.purgatory.check_and_complete = lambda key: 0
    return sim


def test_linearize_command_drives_clients_against_an_implementation(tmp_path, capsys) -> None:
    saved = tmp_path / "sub.jsonl"
    # several clients taking turns on one protocol-v1 subprocess
    assert main(["linearize", "--impl", "reference-subprocess", "--threads", "3", "--ops", "150",
                 "--key-space", "10", "--write", "history=" + str(saved)]) == 0
    assert len(loads(saved.read_text())) >= 450
    assert main(["linearize", "--impl", "test_concurrency_linearizability:lossy_purgatory", "--threads", "3",
                 "--ops", "300", "--key-space", "5"]) == 1
    assert "NOT linearizable" in capsys.readouterr().out
    assert main(["linearize", "--impl", "reference", str(saved)]) == 2
