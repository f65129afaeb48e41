"""Baseline: a plain ``heapq`` timer, the textbook way to write a timer in Python.

Not a timing wheel and not Kafka: a binary heap of ``(expiration, sequence, task_id)`` tuples with
lazy cancellation.  ``cancel`` only forgets the task's live sequence number; the dead tuple stays
in the heap and is skipped when it reaches the top (removing it at once would cost O(n), as
``sched.cancel`` shows).  Re-adding a task supersedes its old tuple the same way.

Firing rule: ``advance_to(t)`` fires every live task with ``exp <= t``, in ``(exp, sequence)``
order (first in, first out among equal expirations).  That is the ``strict`` profile; with tick
1 ms Kafka's rule (``floor(exp / tick) * tick <= now``) is the same, so on tick-1 workloads this
timer fires the same tasks at the same advances as the reference.  Cost: O(log n) per add and per
fire, where the wheel's is O(1); the benchmark shows the difference as a curve.
"""

from __future__ import annotations

import heapq


class HeapTimer:
    """A ``heapq`` timer on a virtual clock. Per-operation API: ``add``, ``cancel``,
    ``advance_to`` (returns the fired task ids), ``size``."""

    __slots__ = ("now", "_heap", "_live", "_seq")

    def __init__(self, start_ms: int = 0) -> None:
        self.now = start_ms
        self._heap: list[tuple[int, int, int]] = []
        # task id -> sequence number of its live tuple; a popped tuple whose sequence differs is
        # a cancelled or superseded entry.
        self._live: dict[int, int] = {}
        self._seq = 0

    def add(self, task_id: int, delay_ms: int) -> int:
        """Schedule (or re-schedule) ``task_id`` at ``now + delay_ms``; returns the expiration."""
        exp = self.now + delay_ms
        self._seq += 1
        self._live[task_id] = self._seq
        heapq.heappush(self._heap, (exp, self._seq, task_id))
        return exp

    def cancel(self, task_id: int) -> bool:
        """Forget ``task_id``; True iff it was pending."""
        return self._live.pop(task_id, None) is not None

    def advance_to(self, time_ms: int) -> list[int]:
        """Move the clock to ``time_ms`` and fire every live task with ``exp <= time_ms``."""
        if time_ms < self.now:
            raise ValueError(f"time_ms={time_ms} is before the clock's current time {self.now}")
        self.now = time_ms
        heap, live, fired = self._heap, self._live, []
        pop = heapq.heappop
        while heap and heap[0][0] <= time_ms:
            _, seq, task_id = pop(heap)
            if live.get(task_id) == seq:
                del live[task_id]
                fired.append(task_id)
        return fired

    def size(self) -> int:
        """Pending tasks (dead tuples still in the heap are not counted)."""
        return len(self._live)
