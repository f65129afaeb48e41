"""The wheel's per-task induction (spec/wheel_induction.py): every obligation has its expected
result, each breaks under its mutation, the invariant is satisfiable in a reachable state with tasks
at three levels, and the step the lemmas encode is the reference's (Hypothesis schedules replayed
through both, states compared after every step)."""

from __future__ import annotations

import dataclasses

import pytest
import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wheelspec.reference.clock import ManualClock
from wheelspec.reference.system_timer import SystemTimer
from wheelspec.reference.task import TimerTask
from wheelspec.reference.wheel import TimingWheel
from wheelspec.spec import properties
from wheelspec.spec.lemmas import KAFKA, Rules
from wheelspec.spec.wheel_induction import LEMMAS, advanced_clocks, task_invariant, witness

# Each obligation proven and broken by its mutation: tests/test_proof_status.py, for every group.


def test_every_obligation_has_a_mutation_and_names_registered_properties():
    assert all(lm.mutation for lm in LEMMAS if lm.expect == "proven")
    for lm in LEMMAS:
        assert all(properties.is_registered(p, properties.HISTORY) for p in lm.proves), lm.name
    proven = {p for lm in LEMMAS if lm.expect == "proven" for p in lm.proves}
    assert proven == {"no-early-fire", "fire-once", "no-lost-task"}


def _holds(formula: z3.BoolRef) -> bool:
    return z3.is_true(z3.simplify(formula))


def _inv(t: int, n: int, level: int, c0: int, cl: int, now: int, e: int, b: int) -> bool:
    """Inv(T) (the lemmas' formula) evaluated on concrete values."""
    m = n**level
    u = m * t
    iv = z3.IntVal
    return _holds(task_invariant(iv(t), iv(n), iv(m), iv(u), iv(c0), iv(c0 // t), iv(cl), iv(cl // u), iv(now),
                                 iv(e), iv(e // u), iv(e % u), iv(b)))


def test_invariant_formula_rejects_a_wrong_state():
    # Non-vacuous on concrete values too: a wrong bucket expiration or a clock past the window fails.
    assert _inv(1, 4, 1, 5, 4, 5, 10, 8)
    assert not _inv(1, 4, 1, 5, 4, 5, 10, 12)  # bucket expiration is not the window's start
    assert not _inv(1, 4, 1, 5, 4, 4, 10, 8)  # base clock ahead of now
    assert not _inv(1, 4, 1, 5, 4, 5, 30, 28)  # window beyond the level's range


def test_witness_is_a_model_of_the_invariant_at_three_levels():
    found, model = witness()
    assert found == "sat", found
    t, n, c0, now = model["tick"], model["wheel_size"], model["currentTime_0"], model["now"]
    for level in range(3):
        e, cl, b = model[f"exp@L{level}"], model[f"currentTime_L{level}"], model[f"bucketExpiration@L{level}"]
        assert _inv(t, n, level, c0, cl, now, e, b)
        assert b > now


# ------------------------------------------------------------------ the bridge -------------------
@dataclasses.dataclass
class _Model:
    """The wheel stepped with the lemmas' formulas (Rules.due/fits/polled, advanced_clocks) evaluated
    on concrete values; per task ("pending", level, index, exp) or ("fired", exp) or ("cancelled",)."""

    t: int
    n: int
    now: int
    rules: Rules = KAFKA

    def __post_init__(self) -> None:
        self.clocks = [self.now - self.now % self.t]
        self.bexp: dict[tuple[int, int], int] = {}
        self.tasks: dict[int, tuple] = {}
        self.order: list[int] = []  # link order (a flush re-adds in it)

    def tick(self, level: int) -> int:
        return self.t * self.n**level

    def place(self, tid: int, e: int) -> None:
        r, iv = self.rules, z3.IntVal
        level = 0
        while True:
            if level == len(self.clocks):  # the overflow wheel, created from the level below
                self.clocks.append(self.clocks[-1] - self.clocks[-1] % self.tick(level))
            u, c = self.tick(level), self.clocks[level]
            if _holds(r.due(iv(e), iv(c), iv(u))):
                assert level == 0, "due above the base level"
                self.tasks[tid] = ("fired", e)
                return
            if _holds(r.fits(iv(e), iv(c), iv(u * self.n))):
                w = e // u
                self.tasks[tid] = ("pending", level, w % self.n, e)
                self.order.append(tid)
                self.bexp[(level, w % self.n)] = w * u
                return
            level += 1

    def add(self, tid: int, delay: int) -> None:
        self.cancel(tid)
        self.place(tid, self.now + delay)

    def cancel(self, tid: int) -> None:
        if self.tasks.get(tid, ("",))[0] == "pending":
            self.tasks[tid] = ("cancelled",)
            self.order.remove(tid)

    def advance(self, now: int) -> None:
        r, iv = self.rules, z3.IntVal
        self.now = now
        while True:
            due = [(x, key) for key, x in self.bexp.items() if _holds(r.polled(iv(x), iv(now)))]
            if not due:
                return
            s, key = min(due)
            c0 = self.clocks[0]
            for level in range(len(self.clocks)):
                u = self.tick(level)
                moved0, moved = advanced_clocks(r, iv(s), iv(self.t), iv(u), iv(c0), iv(self.clocks[level]),
                                                iv(s // self.t), iv(s // u))
                if _holds(moved0 if level == 0 else moved):
                    self.clocks[level] = s // u * u
            flushed = [tid for tid in self.order if self.tasks[tid][:3] == ("pending", *key)]
            self.order = [tid for tid in self.order if tid not in flushed]
            for tid in flushed:
                self.place(tid, self.tasks[tid][3])
            del self.bexp[key]


class _Reference:
    def __init__(self, t: int, n: int, start: int) -> None:
        self.clock = ManualClock(start)
        self.fired: set[int] = set()
        self.timer = SystemTimer(t, n, start, clock=self.clock, listener=self._on)
        self.tasks: dict[int, TimerTask] = {}
        self.exp: dict[int, int] = {}

    def _on(self, event: object) -> None:
        self.fired.add(event.task)  # type: ignore[attr-defined]

    def add(self, tid: int, delay: int) -> None:
        if tid in self.tasks:
            self.tasks[tid].cancel()
        self.fired.discard(tid)
        self.tasks[tid] = TimerTask(delay, tid)
        self.exp[tid] = self.timer.add(self.tasks[tid])

    def cancel(self, tid: int) -> None:
        if tid in self.tasks:
            self.tasks[tid].cancel()

    def advance(self, now: int) -> None:
        self.clock.set(now)
        self.timer.advance_clock(0)

    def levels(self) -> list[TimingWheel]:
        return self.timer.timing_wheel.levels()

    def state(self, tid: int) -> tuple:
        entry = self.tasks[tid].timer_task_entry()
        if entry is not None and entry.list is not None:
            for level, wheel in enumerate(self.levels()):
                for idx, bucket in enumerate(wheel.buckets):
                    if bucket is entry.list:
                        return ("pending", level, idx, entry.expiration_ms)
        return ("fired", self.exp[tid]) if tid in self.fired else ("cancelled",)


def _compare(model: _Model, ref: _Reference, step: object) -> None:
    levels = ref.levels()
    assert [w.current_time for w in levels] == model.clocks, step
    queued = {id(b) for b in ref.timer.delay_queue._heap}
    for level, wheel in enumerate(levels):
        for idx, bucket in enumerate(wheel.buckets):
            assert bucket.get_expiration() == model.bexp.get((level, idx), -1), (step, level, idx)
            assert (id(bucket) in queued) == ((level, idx) in model.bexp), (step, level, idx)
    for tid in ref.tasks:
        state = ref.state(tid)
        assert state == model.tasks[tid], (step, tid)
        if state[0] == "pending":  # Inv(T), the lemmas' formula, holds on the reference's state
            _, level, idx, e = state
            b = levels[level].buckets[idx].get_expiration()
            assert _inv(model.t, model.n, level, levels[0].current_time, levels[level].current_time,
                        ref.clock.now_ms(), e, b), (step, tid)


_OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 4), st.integers(-3, 70)),
    st.tuples(st.just("cancel"), st.integers(0, 4), st.just(0)),
    st.tuples(st.just("advance"), st.just(0), st.integers(0, 90))), max_size=30)


#: cascades through three levels, a re-add, a cancel, a bucket reused for a later window
_CASCADES = [("add", 0, 13), ("add", 1, 6), ("add", 2, 3), ("advance", 0, 2), ("add", 3, 9), ("advance", 0, 2),
             ("cancel", 3, 0), ("add", 1, 11), ("advance", 0, 4), ("advance", 0, 5), ("add", 2, 2),
             ("advance", 0, 9)]


@settings(max_examples=150, deadline=None)
@given(t=st.integers(1, 5), n=st.integers(2, 4), start=st.integers(0, 30), ops=_OPS)
@example(t=1, n=2, start=0, ops=_CASCADES)
@example(t=3, n=3, start=7, ops=[(op, tid, 3 * x) for op, tid, x in _CASCADES])
def test_symbolic_step_replays_the_reference(t, n, start, ops):
    _replay(t, n, start, ops)


def test_the_replay_covers_cascades_at_three_levels():
    levels: set[int] = set()
    cascades = _replay(1, 2, 0, _CASCADES, levels)
    assert levels >= {0, 1, 2} and cascades >= 2, (levels, cascades)


def _replay(t: int, n: int, start: int, ops: list, levels: set[int] | None = None) -> int:
    """Run ``ops`` through the model and the reference, comparing after each; returns how many
    re-adds moved a pending task to a lower level (cascades), and adds the levels seen to ``levels``."""
    cascades = 0
    model, ref = _Model(t, n, start), _Reference(t, n, start)
    for op, tid, x in ops:
        before = {k: ref.state(k) for k in ref.tasks}
        if op == "advance":
            model.advance(model.now + x)
            ref.advance(model.now)
        elif op == "add":
            model.add(tid, x)
            ref.add(tid, x)
        else:
            model.cancel(tid)
            ref.cancel(tid)
        _compare(model, ref, (op, tid, x))
        for k in ref.tasks:
            s = ref.state(k)
            if s[0] == "pending":
                if levels is not None:
                    levels.add(s[1])
                cascades += before.get(k, ("",))[0] == "pending" and before[k][1] > s[1]
        if op == "advance":  # wi-no-lost's conclusion, on the reference
            for k in ref.tasks:
                s = ref.state(k)
                assert s[0] != "pending" or s[3] >= model.now - model.now % t + t, (k, s)
    return cascades


def test_reachable_state_with_tasks_at_three_levels_satisfies_the_invariant():
    ref = _Reference(1, 2, 0)
    for tid, delay in enumerate((1, 3, 7)):
        ref.add(tid, delay)
    ref.advance(0)
    states = [ref.state(tid) for tid in range(3)]
    assert sorted(s[1] for s in states) == [0, 1, 2], states
    levels = ref.levels()
    for s in states:
        _, level, idx, e = s
        assert _inv(1, 2, level, levels[0].current_time, levels[level].current_time, 0, e,
                    levels[level].buckets[idx].get_expiration())


def test_model_under_a_mutation_disagrees_with_the_reference():
    # The bridge can fail: the due test `<=` makes the model fire a task the reference keeps.
    model, ref = _Model(1, 4, 0, Rules(due_strict=False)), _Reference(1, 4, 0)
    model.add(0, 1)
    ref.add(0, 1)
    with pytest.raises(AssertionError):
        _compare(model, ref, "add")
