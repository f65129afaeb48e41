"""The reference engine under the per-operation API: :class:`Simulation` runs the operations of
:mod:`wheelspec.spec.ops` on Kafka's classes and records the events of :mod:`wheelspec.spec.events`.

The argument checks, the id registries and the recording of each request's result event are the
shared driver's (:class:`wheelspec.spec.simulation.SimulationDriver`, which the optimized engine
uses too); this module is the engine.  One simulation owns a manual clock, a timer for plain tasks,
and a purgatory with a timer of its own; both timers follow the chosen profile:

* ``kafka``     -- :class:`SystemTimer` (tick, wheel size as given);
* ``strict-gt`` -- Kafka's test :class:`MockTimer` (tick and wheel size unused).

The executor race (``executor_order``, ``set_purge_point``): Kafka's purgatory timer hands expired
operations to its executor thread and the reaper runs the purge check right after.  The
purgatory's SystemTimer here defers its executor, and :meth:`Simulation._advance` runs it at the
chosen point.  MockTimer runs due tasks inline, so under strict-gt only the default exists.

Events the timer or purgatory cause (``Fire``, ``Complete``, ``Expire``, ``Purge``) are recorded
as they happen, through the listener each class is given; then the request's own result event.
"""

from __future__ import annotations

from wheelspec.spec.profiles import EXPIRE_BEFORE_PURGE, KAFKA, MOCK_SIZE_QUEUE, behaviour
from wheelspec.spec.simulation import SimulationDriver

from .clock import ManualClock
from .mock_timer import MockTimer
from .operation import MockDelayedOperation
from .purgatory import DelayedOperationPurgatory, Key
from .system_timer import SystemTimer
from .task import TimerTask


class Simulation(SimulationDriver[TimerTask, MockDelayedOperation]):
    """Kafka's ``SystemTimer`` (or ``MockTimer``) and ``DelayedOperationPurgatory`` on a manual
    clock, driven one request at a time."""

    ENGINE = "the reference"
    timer: SystemTimer | MockTimer
    purgatory: DelayedOperationPurgatory

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 purge_interval: int = 1000, profile: str = KAFKA, mock_size: str = MOCK_SIZE_QUEUE,
                 executor_order: str = EXPIRE_BEFORE_PURGE, try_complete_events: bool = False) -> None:
        super().__init__(tick_ms, wheel_size, start_ms, purge_interval, profile, mock_size, executor_order,
                         try_complete_events)
        self.clock = ManualClock(self.config.start_ms)
        self.timer = self._new_timer(listener=self.history)
        self.purgatory = DelayedOperationPurgatory(self._new_timer(listener=None, executor="deferred"),
                                                   self.config.purge_interval, name="sim", listener=self.history)

    def _new_timer(self, listener, executor: str = "inline"):
        if behaviour(self.profile).kafka_class == "MockTimer":
            return MockTimer(self.clock, listener=listener, size_rule=self.mock_size)
        return SystemTimer(self.tick_ms, self.wheel_size, clock=self.clock, listener=listener, executor=executor)

    def _run_executor(self, limit: int | None = None) -> None:
        """Let the purgatory timer's executor run ``limit`` (all if None) handed-over tasks."""
        run = getattr(self.purgatory.timer, "run_deferred", None)  # MockTimer runs them inline
        if run is not None:
            run(limit)

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    # -- timer ------------------------------------------------------------------------------------
    def _add(self, task_id: int, delay_ms: int) -> int:
        old = self.tasks.get(task_id)
        if old is not None:
            # Kafka's TimerTask.delayMs is final: a caller re-schedules by cancelling the task and
            # adding a new one.  (SystemTimer: the same as re-adding the task; MockTimer: a delay
            # <= 0 re-add runs the new task inside add and the old entry never runs.)
            old.cancel()
        task = self.tasks[task_id] = TimerTask(delay_ms, task_id)
        return self.timer.add(task)

    def _cancel(self, task: TimerTask) -> bool:
        entry = task.timer_task_entry()
        pending = task.cancel()
        if isinstance(self.timer, MockTimer):
            # MockTimer entries are never linked in a bucket, so TimerTask.cancel always says
            # False; the task was pending iff its current entry is still queued.
            pending = self.timer.holds(entry)
        return pending

    def _advance(self, time_ms: int, purge_point: int | None) -> None:
        self.clock.set(time_ms)
        # One advance_clock drains every due bucket (the poll loop runs until nothing is due).
        self.timer.advance_clock(0)
        # The purgatory's advanceClock, cut where the executor race is: its timer hands expired
        # operations to the executor, the executor runs some of them, the reaper's purge check
        # runs, the executor runs the rest.
        self.purgatory.timer.advance_clock(0)
        self._run_executor(purge_point)
        self.purgatory.purge_check()
        self._run_executor()

    # -- purgatory ----------------------------------------------------------------------------------
    def _watch(self, op_id: int, delay_ms: int, keys: tuple[Key, ...], completable: bool,
               completes_on_retry: bool) -> bool:
        op = self.ops[op_id] = MockDelayedOperation(delay_ms, op_id, self.clock, self.history, completable,
                                                    completes_on_retry, self.try_complete_events)
        result = self.purgatory.try_complete_else_watch(op, keys)
        self._run_executor()  # a timeout <= 0 handed over inside the timer's add
        return result

    def _resubmit(self, op: MockDelayedOperation, keys: tuple[Key, ...]) -> bool:
        result = self.purgatory.try_complete_else_watch(op, keys)
        self._run_executor()  # a re-timed timeout <= 0 (stale wheel clock) handed over inside add
        return result

    def _set_completable(self, op: MockDelayedOperation, value: bool) -> None:
        op.completable = value

    def _check_and_complete(self, key: Key) -> int:
        return self.purgatory.check_and_complete(key)

    def _cancel_for_key(self, key: Key) -> list[int]:
        removed = self.purgatory.cancel_for_key(key)
        return [op.task_id for op in removed]  # type: ignore[misc]  # made with op ids: never None

    def _force_complete(self, op: MockDelayedOperation) -> bool:
        return op.force_complete()

    def close(self) -> None:
        self.timer.close()
        self.purgatory.shutdown()
