"""The baselines are honest timers: on tick-1 programs they fire what the reference fires.

With tick 1 ms Kafka's firing rule (``floor(exp / tick) * tick <= now``) is the strict rule
(``exp <= now``) that ``heapq`` and ``sched`` implement, so after every advance the set of tasks
each baseline fired must equal the reference's ``Fire`` events of that advance (order within an
advance may differ: Kafka orders by bucket, the heaps by expiration).  Delays are >= 1 here:
with a delay <= 0 Kafka may run the task inside ``add`` (a lazy-clock detail the baselines do not
model), which the benchmark workloads never do.
"""

from __future__ import annotations

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.benchmarks.heap_purgatory import HeapPurgatory
from wheelspec.benchmarks.heap_timer import HeapTimer
from wheelspec.benchmarks.sched_timer import SchedTimer
from wheelspec.benchmarks.workloads import ARRIVE, PurgatoryParams, purgatory_workload
from wheelspec.reference import Simulation

step = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 15), st.integers(1, 300)),
    st.tuples(st.just("cancel"), st.integers(0, 15)),
    st.tuples(st.just("advance"), st.integers(0, 120)),
)


def _fired_in(sim: Simulation, since: int) -> list[int]:
    return sorted(e.task for e in sim.history.events[since:] if e.kind == "fire")


@settings(max_examples=examples(150, 600))
@given(st.lists(step, max_size=60), st.sampled_from([HeapTimer, SchedTimer]))
def test_baseline_fires_what_the_reference_fires_at_tick_1(program: list, cls: type) -> None:
    ref = Simulation(tick_ms=1, wheel_size=4)
    base = cls()
    added: set[int] = set()
    for op in program:
        if op[0] == "add":
            _, task, delay = op
            assert base.add(task, delay) == ref.add(task, delay)
            added.add(task)
        elif op[0] == "cancel":
            if op[1] in added:  # the reference refuses ids it never saw
                assert base.cancel(op[1]) == ref.cancel(op[1])
        else:
            t = ref.now + op[1]
            mark = len(ref.history)
            ref.advance_to(t)
            assert sorted(base.advance_to(t)) == _fired_in(ref, mark)
        assert base.size() == ref.timer.size()


def test_baselines_fire_in_expiration_order_first_in_first_out() -> None:
    for cls in (HeapTimer, SchedTimer):
        t = cls()
        t.add(1, 5)
        t.add(2, 3)
        t.add(3, 5)
        t.add(4, 3)
        t.add(2, 7)  # re-add replaces the earlier entry
        assert t.advance_to(4) == [4]
        assert t.advance_to(10) == [1, 3, 2]
        assert t.size() == 0 and t.cancel(1) is False


def _run_schedule(pg, wl) -> list[list[int]]:
    """Drive a purgatory through a workload's schedule; returns the ops expired per advance."""
    keys = [tuple(r) for r in wl.keys.tolist()]
    out = []
    now = -1
    for t, k, op in zip(wl.times.tolist(), wl.kinds.tolist(), wl.ops_ids.tolist()):
        if t != now:
            out.append(pg_advance(pg, t))
            now = t
        if k == ARRIVE:
            pg.watch(op, wl.params.timeout, keys[op], bool(wl.latency[op] == 0))
        else:
            pg.force_complete(op)
    out.append(pg_advance(pg, wl.end))
    return out


def pg_advance(pg, t: int) -> list[int]:
    if isinstance(pg, HeapPurgatory):
        return sorted(pg.advance_to(t))
    mark = len(pg.history)
    pg.advance_to(t)
    return sorted(e.op for e in pg.history.events[mark:] if e.kind == "expire")


def test_heap_purgatory_matches_the_reference_on_kafkas_workload() -> None:
    # Short timeout and a heavy latency tail: many expirations, completions and purges.
    p = PurgatoryParams(rate=2000.0, pct50=5.0, pct75=60.0, timeout=200, purge_interval=50)
    wl = purgatory_workload(3000, seed=11, params=p)
    ref = Simulation(tick_ms=1, wheel_size=20, purge_interval=p.purge_interval)
    heap = HeapPurgatory(p.purge_interval)
    assert _run_schedule(heap, wl) == _run_schedule(ref, wl)
    purges = [e for e in ref.history if e.kind == "purge"]
    assert heap.purges == len(purges) > 0
    assert heap.expired == wl.expected_expirations > 0
    assert heap.watched() == ref.purgatory.watched()
    assert heap.estimated == ref.purgatory.estimated
    assert heap.num_delayed() == ref.purgatory.num_delayed() == 0


def test_heap_purgatory_watch_and_force_complete_results() -> None:
    pg = HeapPurgatory(purge_interval=0)
    assert pg.watch(1, 10, ["a", "b"], completable=True) is True  # completed by its own try
    assert pg.watch(2, 10, ["a", "b"]) is False
    assert pg.watched() == 2 and pg.num_delayed() == 1
    assert pg.force_complete(2) is True and pg.force_complete(2) is False
    assert pg.num_delayed() == 0 and pg.watched() == 2  # completed, still listed until a purge
    pg.advance_to(1)  # estimated 1 - delayed 0 > 0: purge
    assert pg.watched() == 0 and pg.purges == 1
