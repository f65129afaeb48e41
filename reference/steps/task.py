"""Step model of ``TimerTask`` and ``TimerTaskEntry`` (readable form: :mod:`wheelspec.reference.task`).

A task's current entry is guarded by the task's monitor (``t<id>``); an entry has its own monitor
(``e(t<id>)``).  Creating an entry, removing it from its bucket and cancelling a task are generators
that yield before each atomic step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..scheduler import Ctx, SimLock, ThreadBody

if TYPE_CHECKING:
    from .bucket import Bucket


class Task:
    """``TimerTask``: its current entry, guarded by the task's monitor."""

    is_op = False

    def __init__(self, task_id: int, delay_ms: int) -> None:
        self.task_id = task_id
        self.delay_ms = delay_ms
        self.entry: Entry | None = None
        self.exp: int | None = None
        self.monitor = SimLock(f"t{task_id}")

    @property
    def label(self) -> str:
        return f"t{self.task_id}"


class Entry:
    """``TimerTaskEntry``: a node of a bucket's list."""

    __slots__ = ("task", "exp", "list", "next", "prev", "monitor")

    def __init__(self, task: Task | None, exp: int) -> None:
        self.task = task
        self.exp = exp
        self.list: Bucket | None = None
        self.next: Entry | None = None
        self.prev: Entry | None = None
        self.monitor = SimLock(f"e({task.label})" if task is not None else "root")

    def cancelled(self) -> bool:
        # A lock-free read of the task's current entry, as in Kafka.
        return self.task is None or self.task.entry is not self


def new_entry(ctx: Ctx, task: Task, exp: int) -> ThreadBody:
    """``new TimerTaskEntry(task, exp)``: the constructor calls ``task.setTimerTaskEntry(this)``,
    which (under the task's monitor) unlinks the task's previous entry first."""
    entry = Entry(task, exp)
    yield from ctx.acquire(task.monitor, label=f"new entry {task.label}: lock {task.label}")
    old = task.entry
    if old is not None and old is not entry:
        yield from entry_remove(ctx, old)
    task.entry = entry
    ctx.release(task.monitor)
    return entry


def entry_remove(ctx: Ctx, entry: Entry) -> ThreadBody:
    """``TimerTaskEntry.remove``: read ``list``, ask that bucket to remove us, and re-read: a flush
    can move the entry between the read and the bucket's lock, and then nothing was removed."""
    removed = False
    current = entry.list
    while current is not None:
        removed = (yield from current.remove(ctx, entry)) or removed
        current = entry.list
    return removed


def task_cancel(ctx: Ctx, task: Task) -> ThreadBody:
    """``TimerTask.cancel``: under the task's monitor, unlink the current entry and forget it.
    Returns whether a linked entry was removed (as the reference reports)."""
    yield from ctx.acquire(task.monitor, label=f"cancel {task.label}: lock {task.label}")
    removed = False
    if task.entry is not None:
        removed = yield from entry_remove(ctx, task.entry)
    task.entry = None
    ctx.release(task.monitor)
    return removed

