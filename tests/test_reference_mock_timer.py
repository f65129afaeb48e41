"""Kafka's test MockTimer: the strict-gt profile (SEMANTICS.md, "Profiles")."""

from __future__ import annotations

from wheelspec.reference import ManualClock, MockTimer, Simulation, TimerTask
from wheelspec.reference.invariants import check_mock_timer


def fires(sim: Simulation) -> list[tuple[int, int, int]]:
    return [(e.task, e.now, e.exp) for e in sim.history.of_kind("fire")]


def test_fires_only_when_now_is_past_exp():
    sim = Simulation(profile="strict-gt")
    sim.add(1, 10)
    sim.advance_to(10)
    assert fires(sim) == []  # now == exp is not enough
    sim.advance_to(11)
    assert fires(sim) == [(1, 11, 10)]


def test_nonpositive_delay_runs_inside_add_and_leaves_the_earlier_entry_scheduled():
    sim = Simulation(profile="strict-gt")
    sim.add(1, 10)
    sim.add(1, 0)  # runs now, creates no entry: the delay-10 entry is still the task's entry
    assert [e.kind for e in sim.history] == ["add", "fire", "add"]
    assert sim.size() == 1
    sim.advance_to(11)
    assert fires(sim) == [(1, 0, 0), (1, 11, 10)]  # the task ran twice


def test_size_counts_superseded_and_cancelled_entries_until_they_are_dequeued():
    sim = Simulation(profile="strict-gt")
    sim.add(1, 10)
    sim.add(1, 20)  # supersedes: the old entry stays queued but will not run
    sim.add(2, 30)
    assert sim.cancel(2) is True
    assert sim.cancel(2) is False
    assert sim.size() == 3
    sim.advance_to(25)
    assert fires(sim) == [(1, 25, 20)]
    assert sim.size() == 1  # the cancelled entry of task 2 (exp 30) is still counted
    sim.advance_to(31)
    assert fires(sim) == [(1, 25, 20)] and sim.size() == 0


def test_equal_expirations_run_first_in_first_out():
    clock = ManualClock(0)
    out: list[int] = []
    timer = MockTimer(clock)
    for i in [5, 3, 9, 1]:
        timer.add(TimerTask(7, i, action=lambda i=i: out.append(i)))
    check_mock_timer(timer)
    assert timer.advance_clock(8) is True  # Kafka's MockTimer.advanceClock sleeps the clock
    assert out == [5, 3, 9, 1] and clock.now_ms() == 8
    assert timer.advance_clock(0) is False


def test_expiration_order_across_different_delays():
    sim = Simulation(profile="strict-gt")
    for task, delay in [(1, 30), (2, 10), (3, 20), (4, 10)]:
        sim.add(task, delay)
    sim.advance_to(100)
    assert [t for t, _, _ in fires(sim)] == [2, 4, 3, 1]
