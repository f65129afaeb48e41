"""Ranges and bad input (SEMANTICS.md, "Ranges").

wheelspec refuses what it cannot honour: every public entry point of the reference raises a clear
exception naming the argument.  The Kafka hazards outside the range are shown on an emulation of
Kafka's ``TimingWheel.add`` in Java ``long`` arithmetic (wrapping multiply and add, truncating
division): they are why the range exists.
"""

from __future__ import annotations

import pytest

from wheelspec.reference import (
    DelayedOperationPurgatory,
    ManualClock,
    MockDelayedOperation,
    Simulation,
    SystemTimer,
    TimerTask,
)
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_TIME_MS, MAX_WHEEL_SIZE, RangeError


@pytest.mark.parametrize("make, name", [
    (lambda: Simulation(tick_ms=-1), "tick_ms"),
    (lambda: Simulation(tick_ms=0), "tick_ms"),
    (lambda: Simulation(tick_ms=-1, profile="strict-gt"), "tick_ms"),
    (lambda: Simulation(wheel_size=1), "wheel_size"),
    (lambda: Simulation(wheel_size=MAX_WHEEL_SIZE + 1), "wheel_size"),
    (lambda: Simulation(start_ms=-1), "start_ms"),
    (lambda: Simulation(purge_interval=-1), "purge_interval"),
    (lambda: SystemTimer(tick_ms=-5, clock=ManualClock()), "tick_ms"),
    (lambda: SystemTimer(wheel_size=1, clock=ManualClock()), "wheel_size"),
    (lambda: TimerTask(MAX_DELAY_MS + 1), "delay_ms"),
    (lambda: TimerTask(-MAX_DELAY_MS - 1), "delay_ms"),
    (lambda: Simulation().add(1, 2**63 - 1), "delay_ms"),  # Kafka: wraps and runs at once
    (lambda: Simulation().add(1, 5 * 10**18), "delay_ms"),  # Kafka: reaper livelock
    (lambda: Simulation().add(-1, 5), "task id"),
    (lambda: Simulation().watch(1, MAX_DELAY_MS + 1, ["k"]), "delay_ms"),
    (lambda: Simulation().advance_to(MAX_TIME_MS + 1), "time"),
])
def test_out_of_range_input_names_the_argument(make, name):
    with pytest.raises(RangeError, match=name):
        make()


@pytest.mark.parametrize("make, name", [
    (lambda: Simulation(tick_ms=1.5), "tick_ms"),
    (lambda: Simulation(tick_ms=True), "tick_ms"),
    (lambda: Simulation().add(1, "10"), "delay_ms"),
    (lambda: Simulation().watch(1, 10, [1.5]), "watch key"),
    (lambda: Simulation().watch(1, 10, [b"k"]), "watch key"),
    (lambda: Simulation().watch(1, 10, [None]), "watch key"),
    (lambda: Simulation().watch(1, 10, "abc"), "watch_keys"),
    (lambda: Simulation().check_and_complete(("a",)), "watch key"),
    (lambda: Simulation().cancel_for_key(2.0), "watch key"),
])
def test_wrong_types_name_the_argument(make, name):
    with pytest.raises(TypeError, match=name):
        make()


def test_empty_keys_are_refused():
    with pytest.raises(ValueError, match="watch_keys must not be empty"):
        Simulation().watch(1, 10, [])
    p = DelayedOperationPurgatory(SystemTimer(clock=ManualClock()), 0)
    with pytest.raises(ValueError, match="watch_keys"):
        p.try_complete_else_watch(MockDelayedOperation(10, 1, ManualClock()), [])


def test_time_never_goes_back():
    sim = Simulation(start_ms=100)
    sim.advance_to(200)
    with pytest.raises(ValueError, match="time_ms=150 is before"):
        sim.advance_to(150)
    assert sim.now == 200


def test_unknown_ids_and_reused_op_ids():
    sim = Simulation()
    assert sim.cancel(3) is False  # a task never added: Kafka's cancel is a no-op
    with pytest.raises(KeyError, match="unknown op id 4"):
        sim.force_complete(4)
    sim.watch(1, 10, ["k"])
    with pytest.raises(ValueError, match="op id 1 was used already"):
        sim.watch(1, 10, ["k"])


def test_unknown_profile():
    with pytest.raises(ValueError, match="profile"):
        Simulation(profile="netty")


@pytest.mark.slow
def test_extremes_of_the_range_are_honoured():
    """The largest delay at the latest time, on the finest and the coarsest wheels: placed, and fired
    at its bucket window, never early (the int64 bound itself is the Z3 layer's lemma)."""
    for tick, size in [(1, 2), (1, MAX_WHEEL_SIZE), (2**20, 2)]:
        sim = Simulation(tick_ms=tick, wheel_size=size, start_ms=MAX_TIME_MS - MAX_DELAY_MS)
        exp = sim.add(1, MAX_DELAY_MS)
        assert exp == MAX_TIME_MS
        window = exp // tick * tick
        sim.advance_to(window - 1)
        assert sim.history.of_kind("fire") == []
        sim.advance_to(window)
        assert [e.task for e in sim.history.of_kind("fire")] == [1]


# ---------------------------------------------------------- Kafka's hazards, in Java long ------
def _wrap(x: int) -> int:
    x %= 2**64
    return x - 2**64 if x >= 2**63 else x


def _jdiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _kafka_place(delay: int, now: int, tick: int = 1, size: int = 20) -> tuple[str, int, int]:
    """Kafka's SystemTimer.add + TimingWheel.add (overflow wheels created from the current
    clock) in long arithmetic; returns (outcome, level, bucket expiration)."""
    exp = _wrap(delay + now)
    cur = now - now % tick
    for level in range(64):
        interval = _wrap(tick * size)
        if exp < _wrap(cur + tick):
            return "due", level, -1
        if exp < _wrap(cur + interval):
            return "bucket", level, _wrap(_jdiv(exp, tick) * tick)
        tick = interval  # the overflow wheel's tick; its clock = cur rounded down to it
        cur = cur - (cur - _jdiv(cur, tick) * tick)
    raise AssertionError("unreachable")


NOW = 1_700_000_000_000  # an epoch-millisecond reading


def test_kafka_hazard_long_max_wraps_and_runs_at_once():
    assert _wrap((2**63 - 1) + NOW) < 0
    assert _kafka_place(2**63 - 1, NOW) == ("due", 0, -1)


def test_kafka_hazard_5e18_lands_in_a_bucket_with_expiration_zero():
    # tick 1 * 20**k wraps from level 14 on; level 21 has a negative tick and 5e18 / tick == 0
    outcome, level, bucket_exp = _kafka_place(5 * 10**18, NOW)
    assert (outcome, level, bucket_exp) == ("bucket", 21, 0)
    # A bucket due at 0 is polled at once; its flush re-adds the entry into the same bucket,
    # whose expiration changes from -1 back to 0, so it is queued and polled again: the reaper
    # loops forever inside advanceClock with the write lock held.


def test_kafka_hazard_8e18_divides_by_zero():
    # 20**32 == 0 (mod 2**64): the 32nd overflow wheel gets tick 0
    assert _wrap(20**32) == 0
    with pytest.raises(ZeroDivisionError):
        _kafka_place(8 * 10**18, NOW)


def test_the_emulation_agrees_with_the_reference_inside_the_range():
    """The hazards above are not artefacts of the emulation: inside wheelspec's range it places
    exactly as the reference does."""
    for delay in [0, 1, 19, 20, 399, 400, 10**6, 10**9, MAX_DELAY_MS]:
        sim = Simulation(tick_ms=1, wheel_size=20, start_ms=NOW)
        sim.add(1, delay)
        outcome, level, bucket_exp = _kafka_place(delay, NOW)
        entry = sim.tasks[1].timer_task_entry()
        if outcome == "due":
            assert entry is not None and entry.list is None
        else:
            levels = sim.timer.timing_wheel.levels()
            assert entry.list in levels[level].buckets and entry.list.get_expiration() == bucket_exp
