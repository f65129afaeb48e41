"""``DelayQueue`` of buckets, over a binary heap that is the JDK's ``PriorityQueue`` step for step.

Buckets are compared by expiration only.  When two queued buckets share an expiration (buckets of
different levels can: level 0's window [60, 61) and level 1's [60, 80) both start at 60), the
order in which they are polled is decided by the heap's shape, not by arrival.  Kafka's fire order
across such buckets is therefore that of ``java.util.PriorityQueue``; reproducing its ``siftUp``
and ``siftDown`` exactly makes our fire order Kafka's, and gives the optimized engine an order it
can match (SEMANTICS.md, "Ordering").

``poll()`` returns the head only if it is due: its delay ``expiration - now`` is <= 0.
``poll(timeout_ms)`` may wait for that on a real clock; on a manual clock it never waits.
"""

from __future__ import annotations

import threading
from typing import Generic, Protocol, TypeVar

from .clock import Clock


class Delayed(Protocol):
    """What the queue needs of a bucket: the reference's :class:`~.bucket.TimerTaskList`, or the
    step model's :class:`~wheelspec.reference.steps.bucket.Bucket`."""

    def get_expiration(self) -> int: ...


B = TypeVar("B", bound=Delayed)


class DelayQueue(Generic[B]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._heap: list[B] = []
        self._cond = threading.Condition()

    def __len__(self) -> int:
        return len(self._heap)

    def offer(self, bucket: B) -> None:
        with self._cond:
            self._sift_up(len(self._heap), bucket)
            self._cond.notify_all()  # a new head may be due earlier than what a poller waits for

    def peek(self) -> B | None:
        return self._heap[0] if self._heap else None

    def poll(self, timeout_ms: int = 0) -> B | None:
        with self._cond:
            deadline = self._clock.now_ms() + max(timeout_ms, 0)
            while True:
                head = self.peek()
                now = self._clock.now_ms()
                if head is not None and head.get_expiration() - now <= 0:
                    return self._poll_head()
                # A manual clock does not move while we wait, so nothing more can become due.
                if not self._clock.realtime or now >= deadline:
                    return None
                until = deadline if head is None else min(deadline, head.get_expiration())
                self._clock.wait(self._cond, until - now)

    # -- java.util.PriorityQueue, Java 17 -----------------------------------------------------
    def _poll_head(self) -> B:
        es = self._heap
        result = es[0]
        last = es.pop()
        if es:
            self._sift_down(0, last)
        return result

    def _sift_up(self, k: int, x: B) -> None:
        es = self._heap
        es.append(x)
        key = x.get_expiration()
        while k > 0:
            parent = (k - 1) >> 1
            e = es[parent]
            if key >= e.get_expiration():  # key.compareTo(e) >= 0: stop
                break
            es[k] = e
            k = parent
        es[k] = x

    def _sift_down(self, k: int, x: B) -> None:
        es = self._heap
        n = len(es)
        key = x.get_expiration()
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = es[child]
            right = child + 1
            if right < n and c.get_expiration() > es[right].get_expiration():
                child = right
                c = es[child]
            if key <= c.get_expiration():  # key.compareTo(c) <= 0: stop
                break
            es[k] = c
            k = child
        es[k] = x

    def expirations(self) -> list[int]:
        """The heap array's expirations, in array order (for tests and invariant checks)."""
        return [b.get_expiration() for b in self._heap]
