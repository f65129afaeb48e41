"""``java.util.PriorityQueue`` with a comparator on one ``long`` key, step for step.

Both of Kafka's timers keep a JDK ``PriorityQueue`` compared on an expiration only:
``SystemTimer``'s ``DelayQueue`` of buckets (``TimerTaskList.compareTo``) and the test
``MockTimer``'s queue of entries (``Comparator.comparingLong(entry -> entry.expirationMs)``).
Among equal keys the order in which ``poll`` hands elements out is decided by the heap's shape,
not by arrival, so it is **not** first-in-first-out.  This module is the one home of that order
(SEMANTICS.md, "Ordering"): the delay queue (:mod:`.delay_queue`) and the MockTimer
(:mod:`.mock_timer`) both use it, and the optimized engine's kernels reproduce it.

The algorithm is OpenJDK's (``offer``: ``siftUp`` from the new last slot; ``poll``: take slot 0,
move the last element to the root and ``siftDown``), with the comparisons written out:

* ``siftUp`` stops as soon as the new key is ``>=`` its parent's (``compare(x, e) >= 0``);
* ``siftDown`` picks the left child unless the right one is strictly smaller
  (``compare(c, right) > 0``) and stops when the key is ``<=`` that child's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

E = TypeVar("E")


def sift_up(es: list[E], k: int, x: E, key: Callable[[E], int]) -> None:
    """``PriorityQueue.siftUpUsingComparator(k, x, es, cmp)``: ``es[k]`` is a free slot (``k ==
    len(es) - 1`` after an append); move parents down until ``x`` fits."""
    kx = key(x)
    while k > 0:
        parent = (k - 1) >> 1
        e = es[parent]
        if kx >= key(e):  # cmp.compare(x, e) >= 0: stop (an equal key stays below its parent)
            break
        es[k] = e
        k = parent
    es[k] = x


def sift_down(es: list[E], k: int, x: E, n: int, key: Callable[[E], int]) -> None:
    """``PriorityQueue.siftDownUsingComparator(k, x, es, n, cmp)``: place ``x`` at slot ``k`` of
    the heap ``es[:n]``, moving the smaller child up while it is strictly smaller than ``x``."""
    kx = key(x)
    half = n >> 1
    while k < half:
        child = 2 * k + 1
        c = es[child]
        right = child + 1
        if right < n and key(c) > key(es[right]):  # compare(c, right) > 0: the right child
            child = right
            c = es[child]
        if kx <= key(c):  # compare(x, c) <= 0: stop (an equal key stays above its child)
            break
        es[k] = c
        k = child
    es[k] = x


class JdkPriorityQueue(Generic[E]):
    """An unbounded ``PriorityQueue`` ordered by ``key`` (ties: the JDK heap's order).

    Not thread-safe, as the JDK class: its owners hold their own lock (``DelayQueue``'s, or
    ``synchronized (taskQueue)`` in MockTimer)."""

    __slots__ = ("_key", "array")

    def __init__(self, key: Callable[[E], int]) -> None:
        self._key = key
        #: the heap array, slot 0 the head (``PriorityQueue.queue[:size]``)
        self.array: list[E] = []

    def __len__(self) -> int:
        return len(self.array)

    def offer(self, x: E) -> None:
        es = self.array
        es.append(x)
        sift_up(es, len(es) - 1, x, self._key)

    def peek(self) -> E | None:
        return self.array[0] if self.array else None

    def poll(self) -> E | None:
        """Remove and return the head (None when empty)."""
        es = self.array
        if not es:
            return None
        result = es[0]
        last = es.pop()
        if es:
            sift_down(es, 0, last, len(es), self._key)
        return result

    def keys(self) -> list[int]:
        """The keys in heap-array order (for tests and invariant checks)."""
        return [self._key(x) for x in self.array]
