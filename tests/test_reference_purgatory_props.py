"""The purgatory, checked against a plain model of DelayedOperationPurgatory (SEMANTICS.md, "Purgatory",
"Purge").

Random programs of watch / set_completable / check / cancel_for_key / force_complete / advance /
watched / num_delayed run on the reference :class:`Simulation`; a model made of Python lists
(one FIFO per key, a flag per operation, an ``estimated`` counter) predicts every return value,
every callback event and every ``Purge``.  What is pinned:

* every operation completes at most once (one ``Complete``), an ``Expire`` only right after a
  ``Complete`` with via=expire, never after another completion;
* tryCompleteElseWatch: completable -> True, not watched, not timed; otherwise watched on every
  key (duplicates too), ``estimated += 1`` once, added to the timer, result False;
* checkAndComplete walks the key's list in watch order, drops completed operations, completes the
  completable ones (returns how many), and removes the key once its list is empty;
* cancelForKey returns the key's list (completed ones included), cancels their timer entries,
  runs no callback, and leaves the operations in their other keys' lists;
* expiry: each advance expires exactly the timed operations whose bucket window is due, then the
  purge rule: ``estimated - numDelayed > purgeInterval`` -> ``estimated := numDelayed`` and drop
  completed operations from every list;
* ``watched`` and ``numDelayed`` after every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.reference import Simulation
from wheelspec.reference.invariants import check_system_timer
from wheelspec.spec.profiles import profile

KEYS = ["a", "b", "c", 1, 2]

keys = st.lists(st.sampled_from(KEYS), min_size=1, max_size=4)
op_ref = st.integers(0, 30)
step = st.one_of(
    st.tuples(st.just("watch"), st.one_of(st.integers(-5, 0), st.integers(1, 60), st.integers(1, 5000)),
              keys, st.booleans()),
    st.tuples(st.just("watch"), st.integers(1, 60), keys, st.just(False)),
    st.tuples(st.just("set_completable"), op_ref, st.booleans()),
    st.tuples(st.just("check"), st.sampled_from(KEYS)),
    st.tuples(st.just("check"), st.sampled_from(KEYS)),
    st.tuples(st.just("cancel_for_key"), st.sampled_from(KEYS)),
    st.tuples(st.just("force_complete"), op_ref),
    st.tuples(st.just("advance"), st.one_of(st.integers(0, 30), st.integers(0, 10_000))),
    st.tuples(st.just("observe"),),
)
programs = st.lists(step, min_size=5, max_size=60)


@dataclass
class Model:
    tick: int
    purge_interval: int
    lists: dict = field(default_factory=dict)  # key -> [op ids] in watch order
    completable: dict = field(default_factory=dict)
    completed: dict = field(default_factory=dict)  # op -> via
    timed: dict = field(default_factory=dict)  # op -> exp, while its timer entry is linked
    estimated: int = 0

    def drop_completed(self, key) -> int:
        before = len(self.lists[key])
        self.lists[key] = [o for o in self.lists[key] if o not in self.completed]
        n = before - len(self.lists[key])
        if not self.lists[key]:
            del self.lists[key]
        return n

    def watched(self) -> int:
        return sum(len(v) for v in self.lists.values())


def run(tick: int, purge_interval: int, program: list[tuple]) -> None:
    sim = Simulation(tick_ms=tick, wheel_size=8, purge_interval=purge_interval)
    prof = profile("kafka", tick)
    m = Model(tick, purge_interval)
    n_ops = 0
    for st_ in program:
        mark = len(sim.history)
        kind = st_[0]
        if kind == "watch":
            _, delay, ks, completable = st_
            op = n_ops
            n_ops += 1
            cur0 = sim.purgatory.timer.timing_wheel.current_time  # type: ignore[attr-defined]  # a SystemTimer here
            result = sim.watch(op, delay, ks, completable)
            evs = sim.history.events[mark:]
            m.completable[op] = completable
            if completable:
                assert result is True
                m.completed[op] = "try"
                assert [(e.kind, getattr(e, "via", None)) for e in evs] == [("complete", "try"), ("watch", None)]
            else:
                assert result is False
                for k in ks:
                    m.lists.setdefault(k, []).append(op)
                m.estimated += 1
                exp = sim.now + delay
                if exp < cur0 + tick:  # due against the purgatory timer's stale clock: expires in add
                    m.completed[op] = "expire"
                    assert [e.kind for e in evs] == ["complete", "expire", "watch"], evs
                    assert prof.may_fire(exp, sim.now)
                else:
                    m.timed[op] = exp
                    assert [e.kind for e in evs] == ["watch"], evs
        elif kind == "set_completable":
            if n_ops == 0:
                continue
            op, value = st_[1] % n_ops, st_[2]
            sim.set_completable(op, value)
            m.completable[op] = value
        elif kind == "check":
            key = st_[1]
            got = sim.check_and_complete(key)
            expected = []
            if key in m.lists:
                kept = []
                for o in m.lists[key]:
                    if o in m.completed:
                        continue
                    if m.completable[o]:
                        m.completed[o] = "check"
                        m.timed.pop(o, None)
                        expected.append(o)
                        continue
                    kept.append(o)
                m.lists[key] = kept
                if not kept:
                    del m.lists[key]
            assert got == len(expected)
            evs = sim.history.events[mark:]
            assert [(e.op, e.via) for e in evs[:-1]] == [(o, "check") for o in expected], evs
        elif kind == "cancel_for_key":
            key = st_[1]
            got = sim.cancel_for_key(key)
            expected = m.lists.pop(key, [])
            assert got == expected
            for o in expected:
                m.timed.pop(o, None)
            assert len(sim.history) == mark + 1  # no callback
        elif kind == "force_complete":
            if n_ops == 0:
                continue
            op = st_[1] % n_ops
            result = sim.force_complete(op)
            assert result is (op not in m.completed)
            if result:
                m.completed[op] = "force"
                m.timed.pop(op, None)
        elif kind == "advance":
            t = sim.now + st_[1]
            sim.advance_to(t)
            evs = sim.history.events[mark:]
            due = {o for o, exp in m.timed.items() if prof.must_have_fired(exp, t)}
            got = [e for e in evs if e.kind in ("complete", "expire")]
            # pairs: Complete(via=expire) immediately followed by Expire of the same op
            assert len(got) == 2 * len(due), evs
            for c, x in zip(got[::2], got[1::2]):
                assert (c.kind, c.via, x.kind, x.op) == ("complete", "expire", "expire", c.op), evs
            assert {c.op for c in got[::2]} == due
            for o in due:
                m.completed[o] = "expire"
                del m.timed[o]
            purges = [e for e in evs if e.kind == "purge"]
            if m.estimated - len(m.timed) > m.purge_interval:
                before = m.estimated
                m.estimated = len(m.timed)
                purged = sum(m.drop_completed(k) for k in list(m.lists))
                assert [(p.estimated, p.delayed, p.purged) for p in purges] == [(before, len(m.timed), purged)]
            else:
                assert purges == [], purges
            assert evs[-1].kind == "advance"
        else:
            assert sim.watched() == m.watched()
            assert sim.num_delayed() == len(m.timed)
        # after every step
        assert sim.purgatory.estimated == m.estimated
        assert sim.purgatory.watched() == m.watched()
        assert sim.purgatory.num_delayed() == len(m.timed)
        check_system_timer(sim.purgatory.timer)  # type: ignore[arg-type]  # a SystemTimer here
    # exactly once, and Expire only after its own Complete
    completes = [e.op for e in sim.history.of_kind("complete")]
    assert len(completes) == len(set(completes)) == len(m.completed)
    assert {e.op: e.via for e in sim.history.of_kind("complete")} == m.completed
    for e in sim.history.of_kind("expire"):
        assert m.completed[e.op] == "expire"


@pytest.mark.slow
@settings(max_examples=examples(200, 600))
@given(st.sampled_from([1, 1, 7]), st.sampled_from([0, 0, 1, 2, 5, 1000]), programs)
def test_purgatory_matches_the_model(tick, purge_interval, program):
    run(tick, purge_interval, program)


@settings(max_examples=examples(100, 400))
@given(programs)
def test_purgatory_strict_gt_completes_each_operation_once(program):
    """Under Kafka's MockTimer the same purgatory completes every operation at most once and an
    operation expires only when ``now > exp`` (delay <= 0: inside tryCompleteElseWatch)."""
    sim = Simulation(profile="strict-gt", purge_interval=0)
    n_ops = 0
    exps: dict[int, int] = {}
    for st_ in program:
        kind = st_[0]
        if kind == "watch":
            sim.watch(n_ops, st_[1], st_[2], st_[3])
            exps[n_ops] = sim.now + st_[1]
            n_ops += 1
        elif kind == "set_completable" and n_ops:
            sim.set_completable(st_[1] % n_ops, st_[2])
        elif kind == "check":
            sim.check_and_complete(st_[1])
        elif kind == "cancel_for_key":
            sim.cancel_for_key(st_[1])
        elif kind == "force_complete" and n_ops:
            sim.force_complete(st_[1] % n_ops)
        elif kind == "advance":
            sim.advance_to(sim.now + st_[1])
    completes = [e.op for e in sim.history.of_kind("complete")]
    assert len(completes) == len(set(completes))
    for e in sim.history.of_kind("complete"):
        if e.via == "expire":
            assert e.now > exps[e.op] or sim.ops[e.op].delay_ms <= 0
