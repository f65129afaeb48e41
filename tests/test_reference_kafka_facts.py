"""The facts of Kafka's own timer and purgatory tests, re-expressed against the reference model.

Sources (apache/kafka, server-common): ``TimingWheelTest`` (tick 10, size 5, start 1000, on a bare
TimingWheel with a task counter and a delay queue), ``TimerTest`` (``testAlreadyExpiredTask``,
``testTaskExpiration`` on a tick 1 / wheel 3 SystemTimer) and ``DelayedOperationTest``
(``testRequestSatisfaction``, ``testRequestExpiry``, ``testRequestPurge``,
``shouldCancelForKeyReturningCancelledOperations``, ``testSafeTryCompleteOrElse``).  Kafka's
timer tests run on the wall clock; each is here twice where it matters: in virtual time
(deterministic) and on the system clock with a reaper thread (short and tolerant of a loaded
machine: they wait for events, never assert durations other than "not before the timeout").
Also the SEMANTICS.md corner cases the issue names: delay <= 0 with a stale clock, the overflow
wheel's start, cascade order, re-add and cancel racing a flush.
"""

from __future__ import annotations

import threading

import pytest

from wheelspec.reference import (
    DelayedOperationPurgatory,
    DelayQueue,
    ManualClock,
    MockDelayedOperation,
    Simulation,
    SystemClock,
    SystemTimer,
    TimerTask,
    TimerTaskEntry,
    TimingWheel,
)
from wheelspec.reference.bucket import TaskCounter
from wheelspec.reference.invariants import check_system_timer
from wheelspec.reference.system_timer import Reaper
from wheelspec.spec import events as ev

START, TICK, SIZE = 1000, 10, 5


@pytest.fixture
def wheel() -> tuple[TimingWheel, TaskCounter, DelayQueue]:
    counter = TaskCounter()
    queue = DelayQueue(ManualClock(START))
    return TimingWheel(TICK, SIZE, START, counter, queue), counter, queue


def entry(delay: int, exp: int) -> TimerTaskEntry:
    return TimerTaskEntry(TimerTask(delay), exp)


# ------------------------------------------------------------------ TimingWheelTest -------------
def test_wheel_adds_a_valid_task(wheel):
    w, counter, queue = wheel
    assert w.add(entry(20, START + 2 * TICK))  # 1020
    assert len(queue) == 1 and counter.value == 1


def test_wheel_refuses_expired_and_current_tick_tasks(wheel):
    w, counter, queue = wheel
    assert not w.add(entry(-1, START - 1))  # 999: already expired
    assert not w.add(entry(5, START + 5))  # 1005: inside the current tick, due at once
    assert counter.value == 0 and len(queue) == 0


def test_wheel_refuses_a_cancelled_task(wheel):
    w, counter, _ = wheel
    task = TimerTask(20)
    e = TimerTaskEntry(task, START + 20)
    task.cancel()
    assert not w.add(e) and task.is_cancelled and counter.value == 0


def test_wheel_clock_moves_only_by_whole_ticks(wheel):
    w, _, _ = wheel
    w.advance_clock(START + 5)
    assert w.current_time == START
    w.advance_clock(START + TICK)
    assert w.current_time == START + TICK


def test_overflow_wheel_is_created_once_and_follows_the_base_clock(wheel):
    w, _, _ = wheel
    assert w.overflow_wheel is None
    interval = TICK * SIZE
    assert w.add(entry(interval + TICK, START + interval + TICK))  # 1060
    ovf = w.overflow_wheel
    assert ovf is not None and ovf.tick_ms == interval and ovf.wheel_size == SIZE
    assert ovf.current_time == START  # starts at the lower wheel's clock
    assert w.add(entry(interval + TICK + 1, START + interval + TICK + 1))
    assert w.overflow_wheel is ovf
    w.advance_clock(START + interval + 10)  # 1060
    assert w.current_time == 1060 and ovf.current_time == 1050


# ----------------------------------------------------------------------- TimerTest --------------
def _timer_test_tasks() -> list[tuple[int, int]]:
    """(id, delay): 5 of delay 0-4, pairs of 10-99, singles of 100-499 (TimerTest.testTaskExpiration)."""
    out = [(i, i) for i in range(5)]
    for i in range(10, 100):
        out += [(i, i), (i, i)]
    out += [(i, i) for i in range(100, 500)]
    return out


def test_already_expired_tasks_run_at_once_virtual():
    sim = Simulation(tick_ms=1, wheel_size=3, start_ms=0)
    sim.advance_to(50)
    for i in range(-5, 0):
        sim.add(i + 5, i)
    sim.advance_to(50)
    fired = {e.task for e in sim.history.of_kind("fire")}
    assert fired == {0, 1, 2, 3, 4}


def test_task_expiration_every_task_fires_exactly_once_virtual():
    clock = ManualClock(0)
    out: list[int] = []
    timer = SystemTimer(1, 3, clock=clock)
    for k, (i, d) in enumerate(_timer_test_tasks()):
        timer.add(TimerTask(d, k, action=lambda i=i: out.append(i)))
        check_system_timer(timer)
    for t in range(0, 501):
        clock.set(t)
        timer.advance_clock(0)
        check_system_timer(timer)
    assert sorted(out) == sorted(i for i, _ in _timer_test_tasks())
    assert timer.size() == 0


def test_task_expiration_real_time_with_reaper():
    """TimerTest on the system clock: a reaper thread drives advance_clock(200)."""
    timer = SystemTimer(1, 3, clock=SystemClock(), executor="thread")
    tasks = _timer_test_tasks()
    out: list[int] = []
    lock = threading.Lock()
    done = threading.Event()

    def run(i: int) -> None:
        with lock:
            out.append(i)
            if len(out) == len(tasks):
                done.set()

    for k, (i, d) in enumerate(tasks):
        timer.add(TimerTask(d, k, action=lambda i=i: run(i)))
    reaper = Reaper(timer)
    reaper.start()
    try:
        assert done.wait(60), f"only {len(out)} of {len(tasks)} tasks ran"
    finally:
        reaper.shutdown()
        timer.close()
    assert sorted(out) == sorted(i for i, _ in tasks)
    assert timer.size() == 0


# ----------------------------------------------------------- SEMANTICS.md corner cases ----------
def test_nonpositive_delay_with_stale_clock_fires_at_the_next_advance_even_by_zero():
    sim = Simulation(tick_ms=1, wheel_size=20, start_ms=0)
    sim.advance_to(1000)  # nothing queued: the wheel's clock stays at 0
    assert sim.timer.timing_wheel.current_time == 0
    sim.add(1, 0)  # exp 1000 is not < 0 + 1: it goes to an overflow bucket that is already due
    assert sim.history.of_kind("fire") == []
    assert sim.size() == 1
    sim.advance_to(1000)  # an advance by zero
    assert [(e.task, e.now, e.exp) for e in sim.history.of_kind("fire")] == [(1, 1000, 1000)]


def test_nonpositive_delay_with_current_clock_fires_inside_add():
    sim = Simulation(tick_ms=1, wheel_size=20, start_ms=0)
    sim.add(9, 1000)
    sim.advance_to(1000)  # polls the bucket: the clock moves to 1000
    sim.add(1, 0)
    assert [type(e).__name__ for e in sim.history[-2:]] == ["Fire", "Add"]  # callbacks first
    assert sim.history[-2].task == 1


def test_overflow_wheel_starts_at_the_lower_wheels_clock_not_at_now():
    sim = Simulation(tick_ms=1, wheel_size=20, start_ms=0)
    sim.advance_to(1000)
    sim.add(1, 5)  # exp 1005 >= 0 + 20: overflow wheels are created from the stale clock 0
    levels = sim.timer.timing_wheel.levels()
    assert len(levels) > 1 and all(w.current_time == 0 for w in levels)
    assert sim.history.of_kind("fire") == []  # not early although the overflow wheel is stale
    check_system_timer(sim.timer)
    sim.advance_to(1004)
    assert sim.history.of_kind("fire") == []
    sim.advance_to(1005)
    assert [e.task for e in sim.history.of_kind("fire")] == [1]


def test_early_fire_up_to_tick_minus_one_and_same_bucket_insertion_order():
    sim = Simulation(tick_ms=10, wheel_size=8, start_ms=0)
    sim.add(1, 17)
    sim.add(2, 15)
    sim.add(3, 10)
    sim.advance_to(10)  # the bucket [10, 20) is due at 10: all three run, 7 ms early at worst
    assert [(e.task, e.exp) for e in sim.history.of_kind("fire")] == [(1, 17), (2, 15), (3, 10)]


def test_cascaded_entries_run_after_direct_ones_of_the_same_bucket():
    sim = Simulation(tick_ms=1, wheel_size=4, start_ms=0)
    sim.add(1, 9)  # 9 >= 0 + 4: level 1 (tick 4), window [8, 12)
    sim.advance_to(6)  # nothing due; the base clock stays 0
    sim.add(9, 1)  # exp 7 goes to level 1 window [4, 8): due now, polled at the next advance
    sim.advance_to(7)  # base clock 7 (polls [4, 8) at 4 -> cascade 7 to level 0, then level 0 [7])
    sim.add(2, 2)  # exp 9 < 7 + 4: direct into level 0 bucket [9] before the cascade fills it
    sim.advance_to(9)  # [8, 12) cascades task 1 into [9] *after* task 2
    fires = [e.task for e in sim.history.of_kind("fire")]
    assert fires == [9, 2, 1]


def test_readd_replaces_the_old_entry():
    sim = Simulation(tick_ms=1, wheel_size=8, start_ms=0)
    sim.add(1, 5)
    sim.add(1, 50)
    assert sim.size() == 1
    check_system_timer(sim.timer)
    sim.advance_to(49)
    assert sim.history.of_kind("fire") == []
    sim.advance_to(50)
    assert [(e.task, e.exp) for e in sim.history.of_kind("fire")] == [(1, 50)]


def test_cancel_before_and_after_firing():
    sim = Simulation(tick_ms=1, wheel_size=8, start_ms=0)
    sim.add(1, 5)
    sim.add(2, 5)
    assert sim.cancel(1) is True and sim.size() == 1
    assert sim.cancel(1) is False
    sim.advance_to(5)
    assert [e.task for e in sim.history.of_kind("fire")] == [2]
    assert sim.cancel(2) is False and sim.size() == 0


def _flushing_timer() -> tuple[SystemTimer, ManualClock, TimerTask, list[int]]:
    clock = ManualClock(0)
    timer = SystemTimer(1, 8, clock=clock)
    ran: list[int] = []
    task = TimerTask(3, 1, action=lambda: ran.append(1))
    timer.add(task)
    clock.set(3)
    return timer, clock, task, ran


def test_cancel_between_unlink_and_the_check_prevents_the_run():
    """A cancel that lands after flush unlinked the entry and before addTimerTaskEntry's
    cancelled() check: the entry is dropped, the task does not run, size stays 0."""
    timer, _, task, ran = _flushing_timer()
    bucket = timer.delay_queue.poll()
    timer.timing_wheel.advance_clock(bucket.get_expiration())

    def racing_add(e: TimerTaskEntry) -> None:
        assert task.cancel() is False  # already unlinked by flush: nothing to remove
        timer._add_entry(e)  # the flush callback of SystemTimer

    bucket.flush(racing_add)
    assert ran == [] and timer.size() == 0


def test_cancel_after_the_check_does_not_prevent_the_run():
    timer, _, task, ran = _flushing_timer()
    timer.advance_clock(0)
    assert ran == [1]
    assert task.cancel() is False and timer.size() == 0


class _CancelledAfterCheck(TimerTaskEntry):
    """An entry whose task is cancelled right after the wheel's cancelled() check (the window
    Kafka's TimerTaskEntry.remove comment describes): it gets linked although cancelled."""

    def __init__(self, task: TimerTask, exp: int) -> None:
        super().__init__(task, exp)
        self.checks = 0

    def cancelled(self) -> bool:
        result = super().cancelled()
        self.checks += 1
        if self.checks == 1:
            self.timer_task.cancel()  # type: ignore[union-attr]  # built with a task below
        return result


def test_cancel_racing_a_relink_overcounts_size_until_the_flush_drops_it():
    clock = ManualClock(0)
    timer = SystemTimer(1, 8, clock=clock)
    ran: list[int] = []
    task = TimerTask(5, 1, action=lambda: ran.append(1))
    timer._add_entry(_CancelledAfterCheck(task, 5))  # the flush callback of SystemTimer
    assert task.is_cancelled and timer.size() == 1  # over-counts: a cancelled entry is linked
    check_system_timer(timer, sequential=False)
    with pytest.raises(AssertionError, match="cancelled entry"):
        check_system_timer(timer)
    clock.set(5)
    timer.advance_clock(0)
    assert ran == [] and timer.size() == 0  # the flush drops it, never below zero


# ------------------------------------------------------------- DelayedOperationTest -------------
def _purgatory(purge_interval: int = 0) -> tuple[DelayedOperationPurgatory, ManualClock]:
    clock = ManualClock(0)
    return DelayedOperationPurgatory(SystemTimer(clock=clock), purge_interval), clock


def _op(clock: ManualClock, op_id: int, delay: int = 100000) -> MockDelayedOperation:
    return MockDelayedOperation(delay, op_id, clock)


def test_request_satisfaction():
    p, clock = _purgatory()
    r1, r2 = _op(clock, 1), _op(clock, 2)
    assert p.check_and_complete("test1") == 0
    assert p.try_complete_else_watch(r1, ["test1"]) is False
    assert p.check_and_complete("test1") == 0
    assert p.try_complete_else_watch(r2, ["test2"]) is False
    assert p.check_and_complete("test2") == 0
    r1.completable = True
    assert p.check_and_complete("test1") == 1
    assert p.check_and_complete("test1") == 0
    r2.completable = True
    assert p.check_and_complete("test2") == 1
    assert p.check_and_complete("test2") == 0
    assert (r1.completions, r2.completions, r1.expirations) == (1, 1, 0)


def test_request_expiry_virtual():
    sim = Simulation(tick_ms=1, wheel_size=20)
    sim.watch(1, 20, ["test1"])
    sim.watch(2, 200000, ["test2"])
    sim.advance_to(19)
    assert sim.history.of_kind("expire") == []
    sim.advance_to(20)
    assert [(e.kind, e.op, e.now) for e in sim.history if e.kind in ("complete", "expire")] == \
        [("complete", 1, 20), ("expire", 1, 20)]  # onComplete before onExpiration
    assert sim.history.of_kind("complete")[0].via == "expire"
    assert not sim.ops[2].is_completed


def test_request_expiry_real_time_not_before_the_timeout():
    purgatory = DelayedOperationPurgatory(purge_interval=0, reaper=True)
    clock = purgatory.timer.clock
    expired = threading.Event()

    class Op(MockDelayedOperation):
        def on_expiration(self) -> None:
            super().on_expiration()
            self.fired_at = clock.now_ms()
            expired.set()

    try:
        start = clock.now_ms()
        r1, r2 = Op(20, 1, clock), Op(200000, 2, clock)
        assert purgatory.try_complete_else_watch(r1, ["test1"]) is False
        assert purgatory.try_complete_else_watch(r2, ["test2"]) is False
        assert expired.wait(30), "r1 never expired"
        assert r1.is_completed and not r2.is_completed
        assert r1.fired_at - start >= 20  # tick 1: never before the timeout
    finally:
        purgatory.shutdown()


def test_request_purge_counts():
    p, clock = _purgatory()
    r1, r2, r3 = _op(clock, 1), _op(clock, 2), _op(clock, 3)
    p.try_complete_else_watch(r1, ["test1"])
    p.try_complete_else_watch(r2, ["test1", "test2"])
    p.try_complete_else_watch(r3, ["test1", "test2", "test3"])
    assert (p.num_delayed(), p.watched()) == (3, 6)
    r2.completable = True
    r2.try_complete()
    assert p.num_delayed() == 2
    r3.completable = True
    r3.try_complete()
    assert p.num_delayed() == 1
    p.check_and_complete("test1")
    assert p.watched() == 4
    p.check_and_complete("test2")
    assert p.watched() == 2
    p.check_and_complete("test3")
    assert p.watched() == 1


def test_cancel_for_key_returns_the_cancelled_operations():
    sim = Simulation()
    sim.watch(1, 10000, ["test1"])
    sim.watch(2, 10000, ["test1"])
    sim.watch(3, 10000, ["test2"])
    assert sim.cancel_for_key("test1") == [1, 2]
    assert (sim.num_delayed(), sim.watched()) == (1, 1)
    assert sim.cancel_for_key("test1") == []
    assert sim.history.of_kind("complete") == []  # cancelForKey runs no callback


def test_cancel_for_key_leaves_the_operation_in_its_other_keys():
    sim = Simulation()
    sim.watch(1, 10000, ["a", "b"])
    assert sim.cancel_for_key("a") == [1]
    assert (sim.num_delayed(), sim.watched()) == (0, 1)
    sim.set_completable(1)
    assert sim.check_and_complete("b") == 1  # still completable through b
    sim.advance_to(20000)
    assert [e.via for e in sim.history.of_kind("complete")] == ["check"]


def test_safe_try_complete_or_else():
    clock = ManualClock(0)
    calls: list[str] = []
    op = _op(clock, 1)
    assert op.safe_try_complete_or_else(lambda: calls.append("watch")) is False and calls == ["watch"]
    op2 = _op(clock, 2)
    op2.completable = True
    assert op2.safe_try_complete_or_else(lambda: calls.append("never")) is True and calls == ["watch"]


def test_second_try_completes_an_operation_that_became_completable_while_being_watched():
    """The second tryComplete closes the window between the first try and watching (a
    checkAndComplete in that window saw no watcher)."""
    sim = Simulation()
    op_box: list[MockDelayedOperation] = []

    class Flips(MockDelayedOperation):
        def try_complete(self) -> bool:
            result = super().try_complete()
            self.completable = True  # the satisfying event arrives right after the first try
            return result

    p = sim.purgatory
    op = Flips(1000, 7, sim.clock, sim.history)
    op_box.append(op)
    assert p.try_complete_else_watch(op, ["k1", "k2"]) is True
    assert op.completions == 1 and op.expirations == 0
    assert p.num_delayed() == 0  # completed: never added to the timer
    assert p.watched() == 2  # but still in both watch lists until checked or purged
    assert p.estimated == 1


def test_force_complete_exactly_once_and_expiry_after_completion_is_silent():
    sim = Simulation()
    sim.watch(1, 50, ["k"])
    assert sim.force_complete(1) is True
    assert sim.force_complete(1) is False
    assert sim.num_delayed() == 0  # force_complete cancels the timer entry
    sim.advance_to(100)
    assert [(e.op, e.via) for e in sim.history.of_kind("complete")] == [(1, "force")]
    assert sim.history.of_kind("expire") == []
    assert sim.check_and_complete("k") == 0 and sim.watched() == 0  # dropped, key removed


def test_purge_rule_resets_estimated_and_drops_completed_ops():
    sim = Simulation(purge_interval=1)
    for i in range(3):
        sim.watch(i, 1000, ["a", "b"])
    sim.force_complete(0)
    sim.advance_to(1)
    assert sim.history.of_kind("purge") == []  # 3 - 2 = 1 is not > 1
    sim.force_complete(1)
    sim.advance_to(2)
    assert sim.history.of_kind("purge") == [ev.Purge(2, 3, 1, 4)]  # op 0 and 1, from a and b
    assert sim.purgatory.estimated == 1 and sim.watched() == 2
