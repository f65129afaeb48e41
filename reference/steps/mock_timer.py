"""Step model of Kafka's test ``MockTimer`` (readable form: :mod:`wheelspec.reference.mock_timer`).

``synchronized (taskQueue)`` is the lock ``timer.taskQueue`` / ``ptimer.taskQueue``; ``add`` creates
and queues an entry under it (the entry's constructor takes the task's monitor to become its
entry), and ``advanceClock`` takes it once per dequeued entry, running the entry (if not
cancelled) after releasing it.  MockTimer has no executor: a task runs on the thread that calls
``add`` (delay <= 0) or ``advanceClock``.  The queue is the JDK ``PriorityQueue`` of
:mod:`wheelspec.reference.priority_queue` (ties in the heap's order); each ``offer`` and ``poll``
happens under the lock, in one step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from wheelspec.spec import events as ev
from wheelspec.spec.profiles import MOCK_SIZE_QUEUE

from ..priority_queue import JdkPriorityQueue
from ..scheduler import Ctx, SimLock, Step, ThreadBody
from .task import Entry, Task, new_entry

if TYPE_CHECKING:
    from .operation import Op
    from .simulation import StepSimulation


def _expiration(entry: Entry) -> int:
    return entry.exp


class MockTimer:
    """``MockTimer``: one lock around the queue; tasks run on the caller's thread."""

    def __init__(self, sim: StepSimulation, name: str, listener: Callable[[ev.Event], None] | None,
                 size_rule: str) -> None:
        self.sim = sim
        self.name = name
        self.clock = sim.clock
        self.listener = listener
        self.size_rule = size_rule
        self.queue: JdkPriorityQueue[Entry] = JdkPriorityQueue(_expiration)
        self.queued: set[Entry] = set()  # to answer whether a cancel hit a queued entry
        self.lock = SimLock(f"{name}.taskQueue")

    @property
    def counter(self) -> int:
        """``MockTimer.size()`` under the size rule (the step simulation reads it as SystemTimer's
        ``taskCounter``)."""
        if self.size_rule == MOCK_SIZE_QUEUE:
            return len(self.queue)
        return sum(1 for e in self.queue.array if not e.cancelled())

    def holds(self, entry: Entry | None) -> bool:
        return entry is not None and entry in self.queued

    def add(self, ctx: Ctx, task: Task) -> ThreadBody:
        exp = task.delay_ms + self.clock.now_ms()
        task.exp = exp  # remembered for the expiration property (onExpiration never early)
        if task.delay_ms <= 0:
            yield Step(f"{self.name}.add {task.label}: delay <= 0, run it now")
            yield from self.run(ctx, task, exp)
            return exp
        yield from ctx.acquire(self.lock, label=f"{self.name}.add {task.label}: lock taskQueue")
        entry = yield from new_entry(ctx, task, exp)
        self.queue.offer(entry)
        self.queued.add(entry)
        ctx.release(self.lock)
        return exp

    def advance_clock(self, ctx: Ctx) -> ThreadBody:
        now = self.clock.now_ms()
        executed = False
        while True:
            yield from ctx.acquire(self.lock, label=f"{self.name}.advanceClock: lock taskQueue")
            head = self.queue.peek()
            if head is None or not now > head.exp:
                ctx.release(self.lock)
                return executed
            self.queue.poll()
            self.queued.discard(head)
            ctx.release(self.lock)
            yield Step(f"{self.name}: dequeued {head.task.label if head.task else '?'}; cancelled? else run")
            if not head.cancelled():
                assert head.task is not None
                yield from self.run(ctx, head.task, head.exp)
                executed = True

    def run(self, ctx: Ctx, task: Task, exp: int) -> ThreadBody:
        if self.listener is not None:
            self.listener(ev.Fire(self.clock.now_ms(), task.task_id, exp))
        elif self.sim.scheduler is not None:
            self.sim.handed_over[task.task_id] = self.sim.scheduler.clock
        if task.is_op:
            yield from cast("Op", task).run(ctx)  # is_op is set by Op alone

    def executor_body(self, users_done: Callable[[], bool]) -> Callable[[Ctx], ThreadBody]:
        """MockTimer has no executor thread: a body with nothing to do."""

        def body(ctx: Ctx) -> ThreadBody:
            yield Step(f"{self.name}: no executor")

        return body
