"""The step model's facade: :class:`StepSimulation`, the per-operation API of
:class:`wheelspec.reference.simulation.Simulation` over the step-model timer and purgatory.

Its constructor checks and op-id lookup are the shared driver's (:mod:`wheelspec.spec.simulation`);
its requests are generators a scheduler interleaves, so each keeps its own body and checks its
arguments with the :mod:`wheelspec.spec.limits` calls that
:class:`wheelspec.spec.simulation.SimulationDriver` makes for the engines that run one request at a
time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.limits import (
    MAX_ID,
    check_delay,
    check_flag,
    check_key,
    check_keys,
    check_range,
    check_time,
)
from wheelspec.spec.profiles import KAFKA, MOCK_SIZE_QUEUE, behaviour
from wheelspec.spec.simulation import check_config, find_op

from ..clock import ManualClock
from ..scheduler import Ctx, Step, ThreadBody
from .mock_timer import MockTimer
from .operation import Op
from .purgatory import Purgatory
from .system_timer import Timer
from .task import Task, task_cancel


class StepSimulation:
    """The per-operation API of :class:`wheelspec.reference.simulation.Simulation`, each method a
    generator ``method(ctx, ...)`` to be run by a :class:`wheelspec.reference.scheduler.Scheduler`
    or :func:`wheelspec.reference.scheduler.drain`.

    ``executor``: ``"inline"`` (sequential runs, same events as the reference) or ``"thread"``
    (concurrent runs: add :meth:`executor_body` as a daemon thread).  ``shards``: watcher-list
    shards (Kafka: 512).  ``mutants``: names from :data:`wheelspec.reference.mutants.MUTANTS`.
    ``profile``: ``kafka`` (SystemTimer) or ``strict-gt`` (Kafka's test MockTimer, which has no
    executor: tasks run on the calling thread; ``mock_size`` is its size rule).
    """

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0, purge_interval: int = 1000,
                 *, shards: int = 512, executor: str = "inline", mutants: Iterable[str] = (),
                 profile: str = KAFKA, mock_size: str = MOCK_SIZE_QUEUE, try_complete_events: bool = False) -> None:
        from ..mutants import MUTANTS  # the catalogue; names are checked here

        self.mutants = frozenset(mutants)
        unknown = self.mutants - set(MUTANTS)
        if unknown:
            raise ValueError(f"unknown mutant {sorted(unknown)[0]!r} (known: {', '.join(MUTANTS)})")
        if executor not in ("inline", "thread"):
            raise ValueError(f"executor must be 'inline' or 'thread', got {executor!r}")
        check_range("shards", shards, 1, 4096)
        config = check_config("the step model", tick_ms, wheel_size, start_ms, purge_interval, profile, mock_size,
                              try_complete_events)
        self.profile = config.profile
        #: emit each tryComplete call as a TryComplete event (as the readable reference does)
        self.try_complete_events = config.try_complete_events
        self.clock = ManualClock(config.start_ms)
        self.tick_ms = config.tick_ms
        #: events in order, and the same stamped with (step, thread id) for concurrent runs
        self.events: list[ev.Event] = []
        self.stamped: list[tuple[int, int, ev.Event]] = []
        self.scheduler: Any = None  # set by whoever runs threads, for stamps
        # Any: a Timer (kafka) or a MockTimer (strict-gt); the concurrency checks
        # (reference.interleave) build kafka simulations and use the Timer's own attributes.
        self.timer: Any
        self.ptimer: Any
        if behaviour(config.profile).kafka_class == "MockTimer":
            self.timer = MockTimer(self, "timer", self.emit, config.mock_size)
            self.ptimer = MockTimer(self, "ptimer", None, config.mock_size)
        else:
            wheel = (config.tick_ms, config.wheel_size, config.start_ms)
            self.timer = Timer(self, "timer", *wheel, self.emit, "inline", self.mutants)
            self.ptimer = Timer(self, "ptimer", *wheel, None, executor, self.mutants)
        self.purgatory = Purgatory(self, self.ptimer, config.purge_interval, shards)
        self.tasks: dict[int, Task] = {}
        self.ops: dict[int, Op] = {}
        #: op id -> step at which the purgatory's timer handed it to the executor (concurrent runs)
        self.handed_over: dict[int, int] = {}

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        s = self.scheduler
        self.stamped.append((s.clock if s is not None else len(self.stamped),
                             s.current if s is not None and s.current is not None else 0, event))

    def note_completed(self, op: Op) -> None:
        """Remember when (step) and on which thread ``op``'s completed flag was won."""
        s = self.scheduler
        op.completed_at = (s.clock, s.current) if s is not None else (len(self.stamped), 0)

    def declare_op(self, op_id: int, delay_ms: int, completable: bool = False) -> Op:
        """Create an operation before any thread runs (a request object exists before it is handed
        to the purgatory), so that threads can refer to it in any order."""
        op = self.ops[op_id] = Op(self, check_range("op id", op_id, 0, MAX_ID), check_delay(delay_ms),
                                  check_flag("completable", completable))
        return op

    def executor_body(self) -> Callable[[Ctx], ThreadBody]:
        assert self.scheduler is not None, "set .scheduler before asking for the executor"
        return self.ptimer.executor_body(self.scheduler.users_done)

    # -- timer -------------------------------------------------------------------------------------
    def add(self, ctx: Ctx, task_id: int, delay_ms: int) -> ThreadBody:
        task_id = check_range("task id", task_id, 0, MAX_ID)
        delay_ms = check_delay(delay_ms)
        task = self.tasks.get(task_id)
        if task is None:
            task = self.tasks[task_id] = Task(task_id, delay_ms)
        elif isinstance(self.timer, MockTimer):
            # Kafka's TimerTask.delayMs is final: a caller re-schedules by cancelling the task and
            # adding a new one (the readable reference does so for every timer).  Under SystemTimer
            # re-adding the same task is indistinguishable from that, so the wheel's interleavings
            # keep Kafka's setTimerTaskEntry path.
            yield from task_cancel(ctx, task)
            task = self.tasks[task_id] = Task(task_id, delay_ms)
        else:
            task.delay_ms = delay_ms
        exp = yield from self.timer.add(ctx, task)
        self.emit(ev.Add(self.now, task_id, delay_ms, exp))
        return exp

    def cancel(self, ctx: Ctx, task_id: int) -> ThreadBody:
        task = self.tasks.get(check_range("task id", task_id, 0, MAX_ID))
        if task is None:
            # Kafka's TimerTask.cancel() on a task never added: no entry, nothing happens.
            yield Step(f"t{task_id}.cancel: no entry")
            self.emit(ev.Cancel(self.now, task_id, False))
            return False
        entry = task.entry
        pending = yield from task_cancel(ctx, task)
        if isinstance(self.timer, MockTimer):
            # MockTimer entries are in no bucket, so the unlink finds nothing: the task was pending
            # iff its current entry is still queued (as the readable reference reports).
            pending = self.timer.holds(entry)
        self.emit(ev.Cancel(self.now, task_id, pending))
        return pending

    def advance_to(self, ctx: Ctx, time_ms: int) -> ThreadBody:
        yield Step(f"clock := {time_ms}")
        self.clock.set(check_time("time", time_ms))
        yield from self.timer.advance_clock(ctx)
        yield from self.purgatory.advance_clock(ctx)
        self.emit(ev.Advance(self.now))

    def size(self, ctx: Ctx) -> ThreadBody:
        yield Step("timer.size")
        n = self.timer.counter
        self.emit(ev.Observe(self.now, "size", n))
        return n

    # -- purgatory -----------------------------------------------------------------------------------
    def watch(self, ctx: Ctx, op_id: int, delay_ms: int, keys: Any, completable: bool = False,
              completes_on_retry: bool = False) -> ThreadBody:
        op_id = check_range("op id", op_id, 0, MAX_ID)
        keys = check_keys(keys)
        completable = check_flag("completable", completable)
        completes_on_retry = check_flag("completes_on_retry", completes_on_retry)
        op = self.ops.get(op_id)
        if op is None:
            op = self.declare_op(op_id, delay_ms, completable)
        elif op.watched:
            raise ValueError(f"watch: op id {op_id} was used already (an operation is watched once)")
        else:
            op.delay_ms = check_delay(delay_ms)
            op.completable = op.completable or completable
        op.watched, op.keys = True, keys
        op.completes_on_retry = completes_on_retry
        result = yield from self.purgatory.try_complete_else_watch(ctx, op, keys)
        self.emit(ev.TryCompleteElseWatch(self.now, op_id, op.delay_ms, keys, result))
        return result

    def resubmit(self, ctx: Ctx, op_id: int, keys: Any) -> ThreadBody:
        """``tryCompleteElseWatch`` of an operation watched before, whatever its state."""
        op = find_op(self.ops, "resubmit", op_id)
        keys = check_keys(keys)
        if not op.watched:
            raise KeyError(f"resubmit: unknown op id {op_id}")  # declared, never handed to the purgatory
        result = yield from self.purgatory.try_complete_else_watch(ctx, op, keys)
        self.emit(ev.Resubmit(self.now, op_id, keys, result))
        return result


    def set_completable(self, ctx: Ctx, op_id: int, value: bool = True) -> ThreadBody:
        value = check_flag("value", value)
        op = find_op(self.ops, "set_completable", op_id)
        yield Step(f"{op.label}.completable := {value}")
        op.completable = value
        self.emit(ev.SetCompletable(self.now, op_id, value))

    def check_and_complete(self, ctx: Ctx, key: Any) -> ThreadBody:
        n = yield from self.purgatory.check_and_complete(ctx, check_key(key))
        self.emit(ev.CheckAndComplete(self.now, key, n))
        return n

    def cancel_for_key(self, ctx: Ctx, key: Any) -> ThreadBody:
        cancelled = yield from self.purgatory.cancel_for_key(ctx, check_key(key))
        ids = tuple(op.task_id for op in cancelled)
        self.emit(ev.CancelForKey(self.now, key, ids))
        return list(ids)

    def force_complete(self, ctx: Ctx, op_id: int) -> ThreadBody:
        result = yield from find_op(self.ops, "force_complete", op_id).force_complete(ctx, "force")
        self.emit(ev.ForceComplete(self.now, op_id, result))
        return result

    def watched(self, ctx: Ctx) -> ThreadBody:
        yield Step("purgatory.watched")
        n = self.purgatory.watched()
        self.emit(ev.Observe(self.now, "watched", n))
        return n

    def num_delayed(self, ctx: Ctx) -> ThreadBody:
        yield Step("purgatory.numDelayed")
        n = self.ptimer.counter
        self.emit(ev.Observe(self.now, "num_delayed", n))
        return n

    def apply(self, ctx: Ctx, op: ops.Op) -> ThreadBody:
        """Execute one operation record (a generator returning what the method returns)."""
        return (yield from ops.invoke(self, op, ctx))
