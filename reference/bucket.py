"""``TimerTaskList``: one bucket of a timing wheel.

A circular doubly linked list with a sentinel ``root``, plus the bucket's *expiration*: the start
of the time window the bucket currently stands for, or -1 when it holds no window.  The delay queue
orders buckets by that expiration.

The bucket-reuse rule (SEMANTICS.md, "Buckets"): ``set_expiration`` returns whether the value
changed, and the wheel enqueues the bucket only then.  A bucket therefore sits in the delay queue
at most once: it is enqueued when it takes a new window, polled when that window is due, and
``flush`` resets its expiration to -1 so the next window counts as a change again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from .task import TimerTaskEntry


class TaskCounter:
    """Kafka's shared ``AtomicInteger taskCounter``: entries linked in any bucket of one timer."""

    __slots__ = ("value", "_lock")

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def add(self, delta: int) -> None:
        with self._lock:
            self.value += delta


class TimerTaskList:
    def __init__(self, task_counter: TaskCounter) -> None:
        self._counter = task_counter
        self._root = TimerTaskEntry(None, -1)
        self._root.next = self._root
        self._root.prev = self._root
        self._expiration = -1
        self._lock = threading.RLock()  # Kafka: synchronized (this); reentrant for flush -> remove

    # -- expiration -------------------------------------------------------------------------
    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the window start; return True iff it changed (then the caller must enqueue)."""
        with self._lock:
            old, self._expiration = self._expiration, expiration_ms
            return old != expiration_ms

    def get_expiration(self) -> int:
        return self._expiration

    # -- membership -------------------------------------------------------------------------
    def add(self, entry: TimerTaskEntry) -> None:
        """Link ``entry`` at the tail.  An entry lives in at most one bucket, so it is first
        removed from wherever it is; the retry covers a concurrent move between the two steps."""
        done = False
        while not done:
            entry.remove()
            with self._lock, entry.lock:
                if entry.list is None:
                    tail = self._root.prev
                    assert tail is not None
                    entry.next = self._root
                    entry.prev = tail
                    entry.list = self
                    tail.next = entry
                    self._root.prev = entry
                    self._counter.add(1)
                    done = True

    def remove(self, entry: TimerTaskEntry) -> bool:
        with self._lock, entry.lock:
            if entry.list is not self:
                return False
            assert entry.next is not None and entry.prev is not None
            entry.next.prev = entry.prev
            entry.prev.next = entry.next
            entry.next = None
            entry.prev = None
            entry.list = None
            self._counter.add(-1)
            return True

    def flush(self, f: Callable[[TimerTaskEntry], None]) -> None:
        """Unlink every entry, in insertion order, handing each to ``f`` (the timer re-adds it:
        it cascades to a lower level or is due), then forget the window."""
        with self._lock:
            head = self._root.next
            while head is not self._root:
                assert head is not None
                self.remove(head)
                f(head)
                head = self._root.next
            self._expiration = -1

    def entries(self) -> Iterator[TimerTaskEntry]:
        with self._lock:
            out = []
            e = self._root.next
            while e is not self._root:
                assert e is not None
                out.append(e)
                e = e.next
        return iter(out)

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())

    def __repr__(self) -> str:
        return f"TimerTaskList(expiration={self._expiration}, entries={len(self)})"
