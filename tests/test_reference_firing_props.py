"""The firing rule, checked against a trivially correct oracle (a sorted list of (exp, seq)).

Random programs of add / cancel / advance / size run on the reference :class:`Simulation` over
tick 1-50, wheel size 2-64, delays up to 10^9 ms (and <= 0) and advance steps from 0 to long idle
jumps of 10^9 ms.  After every step the structure invariants of ``reference/invariants.py`` are
checked.  What the oracle pins (SEMANTICS.md, "Firing rule", "Ordering", "Size", "Profiles"):

kafka profile (SystemTimer), with ``w(exp) = floor(exp / tick) * tick``:
  * a task fires inside ``add`` iff ``exp < currentTime + tick`` of the (possibly stale) base
    wheel, and then ``w(exp) <= now``;
  * ``advance_to(t)`` fires exactly the pending tasks with ``w(exp) <= t``, each once, at ``now=t``;
  * within one advance, fires come in nondecreasing ``w(exp)``; two tasks placed directly into
    the same level-0 window fire in the order they were added;
  * ``cancel`` returns whether the task was pending; ``size()`` is the number of pending tasks.
strict-gt profile (MockTimer): delay <= 0 runs inside add without an entry; ``advance_to(t)``
  runs every queued entry with ``exp < t`` in expiration order unless superseded or cancelled
  (ties in the JDK heap's order: tests/test_reference_mock_timer.py); a re-add, delay <= 0 ones
  included, supersedes the earlier entry; ``size()`` counts queued entries, superseded and
  cancelled ones included.
"""

from __future__ import annotations

import bisect

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.reference import Simulation
from wheelspec.reference.invariants import check_mock_timer, check_system_timer
from wheelspec.spec.limits import MAX_TIME_MS
from wheelspec.spec.profiles import profile

N_TASKS = 10


def _ops(delays: st.SearchStrategy[int], steps: st.SearchStrategy[int]) -> st.SearchStrategy[list[tuple]]:
    op = st.one_of(
        st.tuples(st.just("add"), st.integers(0, N_TASKS - 1), delays),
        st.tuples(st.just("add"), st.integers(0, N_TASKS - 1), delays),
        st.tuples(st.just("cancel"), st.integers(0, N_TASKS - 1)),
        st.tuples(st.just("advance"), steps),
        st.tuples(st.just("advance"), steps),
        st.tuples(st.just("size"),),
    )
    return st.lists(op, min_size=10, max_size=80)


@st.composite
def kafka_cases(draw, ticks=st.integers(1, 50),  # hypothesis strategies are immutable values
                sizes=st.integers(2, 64)) -> tuple[int, int, int, list]:  # likewise
    """(tick, size, start, program).  Besides plain random delays and steps, some land exactly on
    window boundaries (k * tick + {-1, 0, 1}): that is where an off-by-one in the due test or the
    bucket arithmetic shows."""
    tick, size = draw(ticks), draw(sizes)
    start = draw(st.one_of(st.just(0), st.integers(0, 10**6), st.integers(0, 10**4).map(lambda k: k * tick)))
    aligned = st.builds(lambda k, r: k * tick + r, st.integers(0, 2 * size), st.sampled_from([-1, 0, 0, 1]))
    delays = st.one_of(
        st.integers(-200, 0),        # already expired / due now
        st.integers(1, 300),         # inside the base wheel or just past it
        aligned,                     # on a window boundary
        st.integers(0, 100_000),     # a few levels up
        st.integers(0, 10**9),       # far levels
    )
    steps = st.one_of(
        st.integers(0, 60),          # small steps, often inside one tick
        aligned.map(lambda d: max(d, 0)),
        st.integers(0, 5_000),
        st.integers(0, 10**9),       # long idle jumps
    )
    return tick, size, start, draw(_ops(delays, steps))


# small delays and steps from the same range make now == exp frequent: strict-gt's edge
strict_programs = _ops(st.one_of(st.integers(-200, 0), st.integers(1, 20), st.integers(1, 300), st.integers(0, 10**9)),
                       st.one_of(st.integers(0, 20), st.integers(0, 60), st.integers(0, 5_000), st.integers(0, 10**9)))


def new_events(sim: Simulation, mark: int) -> list:
    return list(sim.history.events[mark:])


def run_kafka(tick: int, size: int, start: int, program: list[tuple]) -> Simulation:
    sim = Simulation(tick_ms=tick, wheel_size=size, start_ms=start)
    prof = profile("kafka", tick)
    pending: dict[int, tuple[int, int, bool]] = {}  # task -> (exp, seq, placed directly at level 0)
    seq = 0
    for step in program:
        mark = len(sim.history)
        if step[0] == "add":
            _, task, delay = step
            base = sim.timer.timing_wheel
            cur0 = base.current_time
            exp = sim.add(task, delay)
            assert exp == sim.now + delay
            evs = new_events(sim, mark)
            pending.pop(task, None)  # a re-add replaces the old entry
            seq += 1
            if exp < cur0 + tick:
                # due against the stale base clock: runs inside add, Fire before Add
                assert [e.kind for e in evs] == ["fire", "add"], evs
                assert evs[0].task == task and evs[0].exp == exp
                assert prof.may_fire(exp, evs[0].now), f"early fire inside add: {evs[0]}"
            else:
                assert [e.kind for e in evs] == ["add"], evs
                pending[task] = (exp, seq, exp < cur0 + base.interval)
        elif step[0] == "cancel":
            task = step[1]
            if task not in sim.tasks:
                continue
            assert sim.cancel(task) is (task in pending)
            pending.pop(task, None)
        elif step[0] == "advance":
            t = min(sim.now + step[1], MAX_TIME_MS)
            sim.advance_to(t)
            evs = new_events(sim, mark)
            assert evs[-1].kind == "advance" and evs[-1].now == t
            fires = evs[:-1]
            assert all(e.kind == "fire" and e.now == t for e in fires), fires
            fired = [e.task for e in fires]
            assert len(set(fired)) == len(fired), f"a task fired twice: {fired}"
            expected = {k for k, (exp, _, _) in pending.items() if prof.must_have_fired(exp, t)}
            assert set(fired) == expected, (
                f"advance_to({t}): fired {sorted(set(fired))}, due {sorted(expected)}; pending {pending}")
            windows = [prof.earliest(pending[k][0]) for k in fired]
            assert windows == sorted(windows), f"fires out of window order: {fires}"
            for e in fires:
                assert e.exp == pending[e.task][0]
            direct = [(prof.earliest(pending[k][0]), pending[k][1]) for k in fired if pending[k][2]]
            for i in range(1, len(direct)):
                if direct[i][0] == direct[i - 1][0]:
                    assert direct[i][1] > direct[i - 1][1], f"same-bucket order broken: {fires}"
            for k in fired:
                del pending[k]
        else:
            assert sim.size() == len(pending)
        check_system_timer(sim.timer)
    assert sim.size() == len(pending)
    return sim


def run_strict_gt(start: int, program: list[tuple]) -> None:
    sim = Simulation(start_ms=start, profile="strict-gt")
    queue: list[tuple[int, int, int]] = []  # sorted (exp, seq, task)
    current: dict[int, int | None] = {}  # task -> seq of its current entry
    seq = 0
    for step in program:
        mark = len(sim.history)
        if step[0] == "add":
            _, task, delay = step
            exp = sim.add(task, delay)
            evs = new_events(sim, mark)
            if delay <= 0:
                # runs synchronously and creates no entry; the earlier entry was cancelled (a Kafka
                # caller re-adds by cancelling the old task: TimerTask.delayMs is final)
                assert [(e.kind, e.task) for e in evs] == [("fire", task), ("add", task)], evs
                current[task] = None
            else:
                assert [e.kind for e in evs] == ["add"], evs
                seq += 1
                bisect.insort(queue, (exp, seq, task))
                current[task] = seq
        elif step[0] == "cancel":
            task = step[1]
            if task not in sim.tasks:
                continue
            cur = current.get(task)
            assert sim.cancel(task) is any(s == cur for _, s, _ in queue)
            current[task] = None
        elif step[0] == "advance":
            t = min(sim.now + step[1], MAX_TIME_MS)
            sim.advance_to(t)
            evs = new_events(sim, mark)
            expected = []
            while queue and queue[0][0] < t:  # strictly: now > exp
                exp, s, task = queue.pop(0)
                if current.get(task) == s:
                    expected.append((task, exp))
            # expiration order; among equal expirations the JDK heap's order, not arrival
            got = [(e.task, e.exp) for e in evs[:-1]]
            assert [x for _, x in got] == sorted(x for _, x in got), evs
            assert sorted(got) == sorted(expected), evs
            assert all(e.now == t for e in evs)
        else:
            assert sim.size() == len(queue)  # superseded and cancelled entries still count
        check_mock_timer(sim.timer)


@pytest.mark.slow
@settings(max_examples=examples(200, 450))
@given(kafka_cases())
def test_kafka_firing_rule_matches_the_oracle(case):
    run_kafka(*case)


@pytest.mark.slow
@settings(max_examples=examples(100, 300))
@given(kafka_cases(ticks=st.integers(1, 5), sizes=st.integers(2, 4)))
def test_kafka_firing_rule_small_wheels_deep_levels(case):
    # tiny wheels: many overflow levels and cascades for modest delays
    run_kafka(*case)


@pytest.mark.slow
@settings(max_examples=examples(100, 300))
@given(st.integers(0, 10**6), strict_programs)
def test_mock_timer_strict_gt_matches_the_oracle(start, program):
    run_strict_gt(start, program)
