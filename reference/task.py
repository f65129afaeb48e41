"""``TimerTask`` (what runs) and ``TimerTaskEntry`` (its place in a bucket).

Kafka separates the two so that re-adding a task is cheap and safe: every ``add`` makes a new
entry, and the task points at its *current* entry only.  An entry whose task points elsewhere is
*cancelled* (``TimerTaskEntry.cancelled()`` is ``timerTask.getTimerTaskEntry() != this``), which is
how a superseded entry, still linked or just flushed, is recognised and never run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from wheelspec.spec.limits import check_delay

if TYPE_CHECKING:
    from .bucket import TimerTaskList


class TimerTask:
    """Kafka ``TimerTask``: a delay and an action.

    Kafka's ``delayMs`` is final; here it is a plain attribute so that a driver can re-add a task
    with a new delay.  The entry mechanics are identical: re-adding creates a new entry and the
    old one is unlinked.
    """

    def __init__(self, delay_ms: int, task_id: int | None = None,
                 action: Callable[[], None] | None = None) -> None:
        self.delay_ms: int = check_delay(delay_ms)
        self.task_id = task_id
        self._action = action
        self._entry: TimerTaskEntry | None = None
        self._lock = threading.RLock()  # Kafka: synchronized (this)

    def run(self) -> None:
        if self._action is not None:
            self._action()

    def cancel(self) -> bool:
        """Unlink the current entry, if any.  Returns whether a linked entry was removed (Kafka
        returns nothing; wheelspec reports it so a history can show what a cancel did)."""
        with self._lock:
            removed = self._entry.remove() if self._entry is not None else False
            self._entry = None
            return removed

    @property
    def is_cancelled(self) -> bool:
        return self._entry is None

    def set_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        with self._lock:
            # If this task is already held by another entry, unlink that one first:
            # a task is scheduled at most once.
            if self._entry is not None and self._entry is not entry:
                self._entry.remove()
            self._entry = entry

    def timer_task_entry(self) -> TimerTaskEntry | None:
        return self._entry


class TimerTaskEntry:
    """Kafka ``TimerTaskEntry``: a node of a bucket's doubly linked list."""

    __slots__ = ("timer_task", "expiration_ms", "list", "next", "prev", "lock")

    def __init__(self, timer_task: TimerTask | None, expiration_ms: int) -> None:
        self.timer_task = timer_task
        self.expiration_ms = expiration_ms
        self.list: TimerTaskList | None = None  # the bucket this entry is linked in, if any
        self.next: TimerTaskEntry | None = None
        self.prev: TimerTaskEntry | None = None
        self.lock = threading.Lock()  # Kafka: synchronized (entry)
        if timer_task is not None:
            timer_task.set_timer_task_entry(self)

    def cancelled(self) -> bool:
        return self.timer_task is None or self.timer_task.timer_task_entry() is not self

    def remove(self) -> bool:
        """Unlink from whatever bucket holds this entry.  The loop matters under concurrency: the
        entry can move to another bucket (a flush re-adds it) between reading ``list`` and
        locking it, and ``TimerTaskList.remove`` then does nothing; so try again."""
        removed = False
        current = self.list
        while current is not None:
            removed = current.remove(self) or removed
            current = self.list
        return removed
