"""Step model of ``SystemTimer`` (readable form: :mod:`wheelspec.reference.system_timer`).

``add`` holds the read lock of the timer's ``ReentrantReadWriteLock`` (``timer.rw`` or
``ptimer.rw``), ``advanceClock``'s flush loop the write lock.  The delay queue is the reference's
:class:`~wheelspec.reference.delay_queue.DelayQueue`; each ``offer`` and ``poll`` is one step.
Due tasks run inline or go to Kafka's single executor thread.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from wheelspec.spec import events as ev

from ..delay_queue import DelayQueue
from ..scheduler import Ctx, SimRWLock, Step, ThreadBody, WaitUntil
from .bucket import Bucket
from .task import Entry, Task, new_entry
from .wheel import Wheel

if TYPE_CHECKING:
    from .operation import Op
    from .simulation import StepSimulation


class Timer:
    """``SystemTimer``: ``add`` under the read lock, the flush loop under the write lock.

    ``executor="inline"`` runs a due task where it is handed over (sequential runs: the same
    events as the reference); ``"thread"`` queues it for :meth:`executor_body`, Kafka's
    single executor thread."""

    def __init__(self, sim: StepSimulation, name: str, tick_ms: int, wheel_size: int, start_ms: int,
                 listener: Callable[[ev.Event], None] | None, executor: str, mutants: frozenset[str]) -> None:
        self.sim = sim
        self.name = name
        self.prefix = "B" if name == "timer" else "P"
        self.mutants = mutants
        self.clock = sim.clock
        self.counter = 0  # taskCounter
        self.queue: DelayQueue[Bucket] = DelayQueue(sim.clock)
        self.rw = SimRWLock(f"{name}.rw")
        self.wheel = Wheel(self, tick_ms, wheel_size, start_ms, 0)
        self.listener = listener
        self.executor = executor
        self.work: collections.deque[Task] = collections.deque()

    def add(self, ctx: Ctx, task: Task) -> ThreadBody:
        yield from ctx.acquire(self.rw, "r", label=f"{self.name}.add {task.label}: readLock")
        exp = task.delay_ms + self.clock.now_ms()
        task.exp = exp  # remembered for the expiration property (onExpiration never early)
        entry = yield from new_entry(ctx, task, exp)
        yield from self.add_entry(ctx, entry)
        ctx.release(self.rw, "r")
        return exp

    def add_entry(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        if not (yield from self.wheel.add(ctx, entry)):
            yield Step(f"{self.name}: {entry.task.label if entry.task else '?'} due; cancelled? else submit")
            # The cancelled() test is the only guard against running a task whose cancel raced
            # this flush (the documented race window).
            if not entry.cancelled():
                yield from self.submit(ctx, entry)

    def submit(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        task = entry.task
        assert task is not None
        if self.listener is not None:
            self.listener(ev.Fire(self.clock.now_ms(), task.task_id, entry.exp))
        elif self.sim.scheduler is not None:
            # The purgatory's timer reports no events (as in the reference); remember the hand-over
            # step so that a history can say from when an expiry may take effect.
            self.sim.handed_over[task.task_id] = self.sim.scheduler.clock
        if self.executor == "thread":
            self.work.append(task)
        elif task.is_op:
            yield from cast("Op", task).run(ctx)  # is_op is set by Op alone

    def advance_clock(self, ctx: Ctx) -> ThreadBody:
        yield Step(f"{self.name}: poll the delay queue")
        bucket = self.queue.poll(0)
        if bucket is None:
            return False
        yield from ctx.acquire(self.rw, "w", label=f"{self.name}.advanceClock: writeLock")
        while bucket is not None:
            self.wheel.advance_clock(bucket.get_expiration())
            yield from bucket.flush(ctx, self.add_entry)
            yield Step(f"{self.name}: poll again")
            bucket = self.queue.poll(0)
        ctx.release(self.rw, "w")
        return True

    def executor_body(self, users_done: Callable[[], bool]) -> Callable[[Ctx], ThreadBody]:
        """Kafka's ``taskExecutor``: one thread running handed-over tasks in order."""

        def body(ctx: Ctx) -> ThreadBody:
            while True:
                yield WaitUntil(lambda: bool(self.work) or users_done(), f"{self.name} executor: take a task")
                if not self.work:
                    return None
                task = self.work.popleft()
                if task.is_op:
                    yield from cast("Op", task).run(ctx)  # is_op is set by Op alone

        return body

    # -- inspection ------------------------------------------------------------------------------
    def linked_entries(self) -> list[Entry]:
        return [e for w in self.wheel.levels() for b in w.buckets for e in b.entries()]

