"""A virtual-time driver: executes the operations of :mod:`wheelspec.spec.ops` on the reference
and records the events of :mod:`wheelspec.spec.events`.

This is the per-operation API shape every implementation of wheelspec offers (the optimized
engine has a class of the same shape), so tests and adapters can drive either.  One simulation
owns a manual clock, a timer for plain tasks, and a purgatory with a timer of its own; both
timers follow the chosen profile:

* ``kafka``     -- :class:`SystemTimer` (tick, wheel size as given);
* ``strict-gt`` -- Kafka's test :class:`MockTimer` (tick and wheel size unused).

``executor_order`` (:data:`wheelspec.spec.profiles.EXECUTOR_ORDERS`) picks one outcome of the
executor race: Kafka's purgatory timer hands expired operations to its executor thread and the
reaper runs the purge check right after, so the expirations of an advance complete before
(``expire-before-purge``, the default) or after (``purge-before-expire``) the purge check.  The
purgatory's SystemTimer here defers its executor, and :meth:`Simulation.advance_to` runs it at the
chosen point; :meth:`Simulation.set_purge_point` puts the next advance's purge check after any
number of its expirations (the judge uses it to follow an implementation that declares
``either``).  MockTimer runs due tasks inline, so under strict-gt only the default exists.

Events the timer or purgatory cause (``Fire``, ``Complete``, ``Expire``, ``Purge``) are recorded
as they happen; then the request's own result event (``Add``, ``Cancel``, ``Advance``, ...).
"""

from __future__ import annotations

from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.history import History
from wheelspec.spec.limits import (
    MAX_ID,
    check_delay,
    check_flag,
    check_key,
    check_keys,
    check_range,
    check_tick,
    check_time,
    check_wheel_size,
)
from wheelspec.spec.profiles import (
    EXPIRE_BEFORE_PURGE,
    KAFKA,
    MOCK_SIZE_QUEUE,
    STRICT_GT,
    behaviour,
    check_engine_executor_order,
    check_mock_size_rule,
    check_purge_point,
    purge_point_of,
)

from .clock import ManualClock
from .mock_timer import MockTimer
from .operation import MockDelayedOperation
from .purgatory import DelayedOperationPurgatory, Key
from .system_timer import SystemTimer
from .task import TimerTask

#: the profiles the reference models, each by the Kafka class whose contract it is
PROFILES = (KAFKA, STRICT_GT)


class Simulation:
    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 purge_interval: int = 1000, profile: str = KAFKA, mock_size: str = MOCK_SIZE_QUEUE,
                 executor_order: str = EXPIRE_BEFORE_PURGE, try_complete_events: bool = False) -> None:
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES} for the reference, got {profile!r}")
        self.profile = profile
        #: the executor race's outcome (module doc); ``either`` is a judge's notion, not an engine's
        self.executor_order = check_engine_executor_order(executor_order, profile)
        self._purge_point: int | None = None
        # Validated for every profile (strict-gt ignores them, but a bad value is still a bug).
        self.tick_ms = check_tick(tick_ms)
        self.wheel_size = check_wheel_size(wheel_size)
        #: MockTimer's size rule (spec.profiles.MOCK_SIZE_RULES; only a MockTimer profile uses it)
        self.mock_size = check_mock_size_rule(mock_size)
        #: record each tryComplete call as a TryComplete event (off: histories without them)
        self.try_complete_events = check_flag("try_complete_events", try_complete_events)
        self.clock = ManualClock(start_ms)
        self.history = History()
        self.timer = self._new_timer(listener=self.history)
        self.purgatory = DelayedOperationPurgatory(self._new_timer(listener=None, executor="deferred"),
                                                   purge_interval, name="sim", listener=self.history)
        self.tasks: dict[int, TimerTask] = {}
        self.ops: dict[int, MockDelayedOperation] = {}

    def _new_timer(self, listener, executor: str = "inline"):
        if behaviour(self.profile).kafka_class == "MockTimer":
            return MockTimer(self.clock, listener=listener, size_rule=self.mock_size)
        return SystemTimer(self.tick_ms, self.wheel_size, clock=self.clock, listener=listener, executor=executor)

    def _run_executor(self, limit: int | None = None) -> None:
        """Let the purgatory timer's executor run ``limit`` (all if None) handed-over tasks."""
        run = getattr(self.purgatory.timer, "run_deferred", None)  # MockTimer runs them inline
        if run is not None:
            run(limit)

    def set_purge_point(self, expirations_before: int | None) -> None:
        """The next advance runs its purge check after the first ``expirations_before`` expirations
        it hands to the executor (None: as ``executor_order`` says).  Applies to one advance."""
        self._purge_point = check_purge_point(expirations_before, self.profile)

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    # -- timer ------------------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> int:
        """Schedule (or re-schedule) task ``task_id``; returns its expiration."""
        task_id = check_range("task id", task_id, 0, MAX_ID)
        delay_ms = check_delay(delay_ms)
        old = self.tasks.get(task_id)
        if old is not None:
            # Kafka's TimerTask.delayMs is final: a caller re-schedules by cancelling the task and
            # adding a new one.  (SystemTimer: the same as re-adding the task; MockTimer: a delay
            # <= 0 re-add runs the new task inside add and the old entry never runs.)
            old.cancel()
        task = self.tasks[task_id] = TimerTask(delay_ms, task_id)
        exp = self.timer.add(task)
        self.history(ev.Add(self.now, task_id, delay_ms, exp))
        return exp

    def cancel(self, task_id: int) -> bool:
        # Checked before the lookup: True == 1 would find task 1.
        task = self.tasks.get(check_range("task id", task_id, 0, MAX_ID))
        if task is None:
            # Kafka's TimerTask.cancel() on a task never added: it has no entry, nothing happens.
            self.history(ev.Cancel(self.now, task_id, False))
            return False
        entry = task.timer_task_entry()
        pending = task.cancel()
        if isinstance(self.timer, MockTimer):
            # MockTimer entries are never linked in a bucket, so TimerTask.cancel always says
            # False; the task was pending iff its current entry is still queued.
            pending = self.timer.holds(entry)
        self.history(ev.Cancel(self.now, task_id, pending))
        return pending

    def advance_to(self, time_ms: int) -> None:
        self.clock.set(check_time("time", time_ms))
        # One advance_clock drains every due bucket (the poll loop runs until nothing is due).
        self.timer.advance_clock(0)
        # The purgatory's advanceClock, cut where the executor race is: its timer hands expired
        # operations to the executor, the executor runs some of them, the reaper's purge check
        # runs, the executor runs the rest.
        point, self._purge_point = purge_point_of(self.executor_order, self._purge_point), None
        self.purgatory.timer.advance_clock(0)
        self._run_executor(point)
        self.purgatory.purge_check()
        self._run_executor()
        self.history(ev.Advance(self.now))

    def size(self) -> int:
        n = self.timer.size()
        self.history(ev.Observe(self.now, "size", n))
        return n

    # -- purgatory ----------------------------------------------------------------------------------
    def watch(self, op_id: int, delay_ms: int, keys: list[Key] | tuple[Key, ...], completable: bool = False,
              completes_on_retry: bool = False) -> bool:
        op_id = check_range("op id", op_id, 0, MAX_ID)
        if op_id in self.ops:
            raise ValueError(f"watch: op id {op_id} was used already (an operation is watched once)")
        keys = check_keys(keys)
        completable = check_flag("completable", completable)
        completes_on_retry = check_flag("completes_on_retry", completes_on_retry)
        op = self.ops[op_id] = MockDelayedOperation(delay_ms, op_id, self.clock, self.history, completable,
                                                    completes_on_retry, self.try_complete_events)
        result = self.purgatory.try_complete_else_watch(op, keys)
        self._run_executor()  # a timeout <= 0 handed over inside the timer's add
        self.history(ev.TryCompleteElseWatch(self.now, op_id, op.delay_ms, keys, result))
        return result

    def resubmit(self, op_id: int, keys: list[Key] | tuple[Key, ...]) -> bool:
        """``tryCompleteElseWatch`` of operation ``op_id`` again, whatever its state (SEMANTICS.md,
        "Resubmit"): Kafka's purgatory takes the operation object as it is."""
        op = self._op("resubmit", op_id)
        keys = check_keys(keys)
        result = self.purgatory.try_complete_else_watch(op, keys)
        self._run_executor()  # a re-timed timeout <= 0 (stale wheel clock) handed over inside add
        self.history(ev.Resubmit(self.now, op_id, keys, result))
        return result

    def _op(self, what: str, op_id: int) -> MockDelayedOperation:
        op = self.ops.get(check_range("op id", op_id, 0, MAX_ID))
        if op is None:
            raise KeyError(f"{what}: unknown op id {op_id}")
        return op

    def set_completable(self, op_id: int, value: bool = True) -> None:
        value = check_flag("value", value)
        self._op("set_completable", op_id).completable = value
        self.history(ev.SetCompletable(self.now, op_id, value))

    def check_and_complete(self, key: Key) -> int:
        n = self.purgatory.check_and_complete(check_key(key))
        self.history(ev.CheckAndComplete(self.now, key, n))
        return n

    def cancel_for_key(self, key: Key) -> list[int]:
        removed = self.purgatory.cancel_for_key(check_key(key))
        cancelled: list[int] = [op.task_id for op in removed]  # type: ignore[misc]  # made with op ids: never None
        self.history(ev.CancelForKey(self.now, key, tuple(cancelled)))
        return cancelled

    def force_complete(self, op_id: int) -> bool:
        result = self._op("force_complete", op_id).force_complete()
        self.history(ev.ForceComplete(self.now, op_id, result))
        return result

    def watched(self) -> int:
        n = self.purgatory.watched()
        self.history(ev.Observe(self.now, "watched", n))
        return n

    def num_delayed(self) -> int:
        n = self.purgatory.num_delayed()
        self.history(ev.Observe(self.now, "num_delayed", n))
        return n

    # -- data-driven ------------------------------------------------------------------------------
    def apply(self, op: ops.Op) -> object:
        """Execute one operation record; returns what the matching method returns."""
        return ops.invoke(self, op)

    def close(self) -> None:
        self.timer.close()
        self.purgatory.shutdown()
