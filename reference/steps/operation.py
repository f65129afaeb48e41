"""Step model of ``DelayedOperation`` and the test ``MockDelayedOperation`` (readable form:
:mod:`wheelspec.reference.operation`).

``completed`` is a compare-and-set (one step); ``DelayedOperation.lock`` (``op<id>.lock``) guards
``safeTryComplete`` and ``safeTryCompleteOrElse``; the task monitor (``op<id>``) is inherited from
:class:`~.task.Task`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wheelspec.spec import events as ev

from ..scheduler import Ctx, SimLock, Step, ThreadBody
from .task import Task, task_cancel

if TYPE_CHECKING:
    from .simulation import StepSimulation


class Op(Task):
    """``DelayedOperation`` with the test ``MockDelayedOperation``'s ``tryComplete`` (succeeds iff
    ``completable``).  Two locks: the task monitor it inherits, and its own ``lock``."""

    is_op = True

    def __init__(self, sim: StepSimulation, op_id: int, delay_ms: int, completable: bool = False) -> None:
        super().__init__(op_id, delay_ms)
        self.sim = sim
        self.monitor.name = f"op{op_id}"
        self.lock = SimLock(f"op{op_id}.lock")
        self.completed = False
        self.completable = completable
        self.completes_on_retry = False  # spec.ops.Watch: true from the second look on
        self.keys: tuple[Any, ...] = ()
        self.watched = False
        #: (step, thread id) at which the completed flag was won, for the lost-wakeup property
        self.completed_at: tuple[int, int | None] | None = None

    @property
    def label(self) -> str:
        return f"op{self.task_id}"

    @property
    def mutants(self) -> frozenset[str]:
        return self.sim.mutants

    def force_complete(self, ctx: Ctx, via: str) -> ThreadBody:
        """``if (completed.compareAndSet(false, true)) { cancel(); onComplete(); }``."""
        yield Step(f"{self.label}.forceComplete: CAS completed")
        if "unguarded-completed" in self.mutants:
            # The flag read and written in two steps: two completers can both win.
            seen = self.completed
            yield Step(f"{self.label}.forceComplete: write completed")
            if seen:
                return False
            self.completed = True
        else:
            if self.completed:
                return False
            self.completed = True
        self.sim.note_completed(self)
        yield from task_cancel(ctx, self)
        self.sim.emit(ev.Complete(self.sim.clock.now_ms(), self.task_id, via))
        return True

    def try_complete(self, ctx: Ctx, via: str) -> ThreadBody:
        result = yield from self._condition(ctx, via)
        if self.sim.try_complete_events:
            self.sim.emit(ev.TryComplete(self.sim.clock.now_ms(), self.task_id, result))
        return result

    def _condition(self, ctx: Ctx, via: str) -> ThreadBody:
        yield Step(f"{self.label}.tryComplete: read completable")
        if self.completable:
            return (yield from self.force_complete(ctx, via))
        if self.completes_on_retry:
            self.completes_on_retry = False
            self.completable = True  # the satisfying event arrives right after this first look
        return False

    def safe_try_complete_or_else(self, ctx: Ctx, f: Callable[[Ctx], ThreadBody]) -> ThreadBody:
        yield from ctx.acquire(self.lock, label=f"tryCompleteElseWatch: lock {self.lock.name}")
        if (yield from self.try_complete(ctx, "try")):
            yield from self.unlock(ctx)
            return True
        yield from f(ctx)
        if "no-second-try" in self.mutants:
            # KAFKA-1952's window: satisfied after the first try, before the keys were watched.
            yield from self.unlock(ctx)
            return False
        result = yield from self.try_complete(ctx, "try")
        yield from self.unlock(ctx)
        return result

    def unlock(self, ctx: Ctx) -> ThreadBody:
        # The unlock is a step of its own: another thread can act between the holder's last
        # read under the lock and the unlock (the window a tryLock caller loses in).
        yield Step(f"unlock {self.lock.name}")
        ctx.release(self.lock)

    def safe_try_complete(self, ctx: Ctx) -> ThreadBody:
        if "trylock-check" in self.mutants:
            # KAFKA-8334: tryLock avoided a deadlock but skips an operation whose lock is busy.
            yield Step(f"checkAndComplete: tryLock {self.lock.name}")
            if not ctx.try_acquire(self.lock):
                return False
        else:
            yield from ctx.acquire(self.lock, label=f"checkAndComplete: lock {self.lock.name}")
        if self.completed:  # KAFKA-17848: never tryComplete a completed operation
            yield from self.unlock(ctx)
            return False
        result = yield from self.try_complete(ctx, "check")
        yield from self.unlock(ctx)
        return result

    def run(self, ctx: Ctx) -> ThreadBody:
        """The timeout fired (on the executor): complete, and if that won, onExpiration."""
        if (yield from self.force_complete(ctx, "expire")):
            self.sim.emit(ev.Expire(self.sim.clock.now_ms(), self.task_id))

