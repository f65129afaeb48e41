"""``DelayQueue`` of buckets, over the JDK ``PriorityQueue`` of :mod:`.priority_queue`.

Buckets are compared by expiration only.  When two queued buckets share an expiration (buckets of
different levels can: level 0's window [60, 61) and level 1's [60, 80) both start at 60), the
order in which they are polled is decided by the heap's shape, not by arrival.  Kafka's fire order
across such buckets is therefore that of ``java.util.PriorityQueue``; :mod:`.priority_queue`
reproduces its ``siftUp`` and ``siftDown`` exactly, which makes our fire order Kafka's and gives
the optimized engine an order it can match (SEMANTICS.md, "Ordering").

``poll()`` returns the head only if it is due: its delay ``expiration - now`` is <= 0.
``poll(timeout_ms)`` may wait for that on a real clock; on a manual clock it never waits.
"""

from __future__ import annotations

import threading
from typing import Generic, Protocol, TypeVar

from .clock import Clock
from .priority_queue import JdkPriorityQueue


class Delayed(Protocol):
    """What the queue needs of a bucket: the reference's :class:`~.bucket.TimerTaskList`, or the
    step model's :class:`~wheelspec.reference.steps.bucket.Bucket`."""

    def get_expiration(self) -> int: ...


B = TypeVar("B", bound=Delayed)


class DelayQueue(Generic[B]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._queue: JdkPriorityQueue[B] = JdkPriorityQueue(_expiration)
        self._cond = threading.Condition()

    @property
    def _heap(self) -> list[B]:
        """The heap array (slot 0 the head), for invariant checks and white-box tests."""
        return self._queue.array

    def __len__(self) -> int:
        return len(self._queue)

    def offer(self, bucket: B) -> None:
        with self._cond:
            self._queue.offer(bucket)
            self._cond.notify_all()  # a new head may be due earlier than what a poller waits for

    def peek(self) -> B | None:
        return self._queue.peek()

    def poll(self, timeout_ms: int = 0) -> B | None:
        with self._cond:
            deadline = self._clock.now_ms() + max(timeout_ms, 0)
            while True:
                head = self.peek()
                now = self._clock.now_ms()
                if head is not None and head.get_expiration() - now <= 0:
                    return self._queue.poll()
                # A manual clock does not move while we wait, so nothing more can become due.
                if not self._clock.realtime or now >= deadline:
                    return None
                until = deadline if head is None else min(deadline, head.get_expiration())
                self._clock.wait(self._cond, until - now)

    def expirations(self) -> list[int]:
        """The heap array's expirations, in array order (for tests and invariant checks)."""
        return self._queue.keys()


def _expiration(bucket: Delayed) -> int:
    return bucket.get_expiration()
