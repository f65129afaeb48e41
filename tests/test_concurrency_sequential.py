"""The step model run alone agrees with the reference, event for event."""

from __future__ import annotations

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.reference import Simulation
from wheelspec.reference.scheduler import Ctx, drain
from wheelspec.reference.steps import StepSimulation
from wheelspec.spec import ops


@st.composite
def programs(draw):
    """A valid sequential program over a few tasks, operations and keys (ids used once per watch)."""
    n = draw(st.integers(1, 40))
    out: list[ops.Op] = []
    now, next_op, added = 0, 0, set()
    keys = st.sampled_from(["a", "b", "c", 7])
    for _ in range(n):
        kind = draw(st.sampled_from(["add", "add", "cancel", "advance", "advance", "size", "watch", "watch",
                                     "set", "check", "check", "cancel_key", "force", "watched", "delayed"]))
        if kind == "add":
            t = draw(st.integers(0, 5))
            out.append(ops.AddTask(t, draw(st.integers(-3, 90))))
            added.add(t)
        elif kind == "cancel" and added:
            out.append(ops.CancelTask(draw(st.sampled_from(sorted(added)))))
        elif kind == "advance":
            now += draw(st.integers(0, 40))
            out.append(ops.AdvanceTo(now))
        elif kind == "size":
            out.append(ops.Size())
        elif kind == "watch":
            ks = tuple(draw(st.lists(keys, min_size=1, max_size=3)))
            out.append(ops.Watch(next_op, draw(st.integers(-2, 90)), ks, draw(st.booleans())))
            next_op += 1
        elif kind == "set" and next_op:
            out.append(ops.SetCompletable(draw(st.integers(0, next_op - 1)), draw(st.booleans())))
        elif kind == "check":
            out.append(ops.CheckAndComplete(draw(keys)))
        elif kind == "cancel_key":
            out.append(ops.CancelForKey(draw(keys)))
        elif kind == "force" and next_op:
            out.append(ops.ForceComplete(draw(st.integers(0, next_op - 1))))
        elif kind == "watched":
            out.append(ops.Watched())
        elif kind == "delayed":
            out.append(ops.NumDelayed())
    return out


@pytest.mark.slow
@settings(max_examples=examples(150, 600))
@given(program=programs(), tick=st.sampled_from([1, 1, 3, 10]), wheel=st.sampled_from([2, 3, 4, 20]),
       purge=st.sampled_from([0, 1, 3, 1000]))
def test_single_threaded_step_model_matches_reference(program, tick, wheel, purge) -> None:
    ref = Simulation(tick, wheel, 0, purge)
    model = StepSimulation(tick, wheel, 0, purge, executor="inline")
    ctx = Ctx(0, "main")
    for op in program:
        expected = ref.apply(op)
        got = drain(model.apply(ctx, op), ctx)
        assert got == expected, f"{op}: reference returned {expected!r}, step model {got!r}"
        assert ctx.held == [], f"{op}: the step model leaked locks {ctx.held}"
    assert model.events == list(ref.history.events)
    assert model.timer.counter == ref.timer.size() and model.ptimer.counter == ref.purgatory.num_delayed()


def _agrees(program, tick=1, wheel=4, purge=0) -> bool:
    ref = Simulation(tick, wheel, 0, purge)
    model = StepSimulation(tick, wheel, 0, purge, executor="inline")
    ctx = Ctx(0, "main")
    for op in program:
        ref.apply(op)
        drain(model.apply(ctx, op), ctx)
    return model.events == list(ref.history.events)


def test_sequential_agreement_catches_a_planted_difference(monkeypatch) -> None:
    """Mutation check: make the step model's purgatory forget to remove emptied keys and count
    the empty lists; the same comparison must then fail on a program that empties a key."""
    from wheelspec.reference import steps

    program = [ops.Watch(0, 5, ("a",)), ops.ForceComplete(0), ops.CheckAndComplete("a"), ops.Watched()]
    assert _agrees(program)

    def no_removal(self, ctx, w):
        yield from ()

    monkeypatch.setattr(steps.Purgatory, "remove_key_if_empty", no_removal)
    monkeypatch.setattr(steps.Purgatory, "watched",
                        lambda self: sum(len(w.ops) + (not w.ops) for m in self.maps for w in m.values()))
    assert not _agrees(program)
