"""Baseline: the standard library's ``sched.scheduler`` driven by a virtual clock.

``sched`` is what the standard library offers for "run this later".  Its queue is a ``heapq`` of
``Event`` named tuples ordered by ``(time, priority, sequence)``, so it fires at ``time <= now``
with first-in-first-out ties (the ``strict`` profile).  Here its ``timefunc`` reads a virtual
clock and its ``delayfunc`` does nothing, so ``run(blocking=False)`` executes exactly the events
due at the current virtual time and returns.

Its ``cancel`` is ``list.remove`` followed by ``heapify``: O(n) per call, so cancelling all of n
timers is O(n^2).  The benchmark therefore caps ``sched`` on the cancel workload far below the
other sizes, and says so.
"""

from __future__ import annotations

import sched


class SchedTimer:
    """``sched.scheduler`` on a virtual clock, with the per-operation API of :class:`HeapTimer`."""

    def __init__(self, start_ms: int = 0) -> None:
        self.now = start_ms
        self._s = sched.scheduler(timefunc=self._time, delayfunc=self._no_delay)
        self._events: dict[int, sched.Event] = {}
        self._fired: list[int] = []

    def _time(self) -> int:
        return self.now

    @staticmethod
    def _no_delay(_seconds: float) -> None:
        # Virtual time: nothing to wait for (sched also calls this with 0 after every event).
        return None

    def _fire(self, task_id: int) -> None:
        del self._events[task_id]
        self._fired.append(task_id)

    def add(self, task_id: int, delay_ms: int) -> int:
        """Schedule (or re-schedule: the old event is cancelled first) ``task_id``."""
        old = self._events.get(task_id)
        if old is not None:
            self._s.cancel(old)
        exp = self.now + delay_ms
        self._events[task_id] = self._s.enterabs(exp, 0, self._fire, (task_id,))
        return exp

    def cancel(self, task_id: int) -> bool:
        """Cancel ``task_id`` (O(n) in ``sched``); True iff it was pending."""
        ev = self._events.pop(task_id, None)
        if ev is None:
            return False
        self._s.cancel(ev)
        return True

    def advance_to(self, time_ms: int) -> list[int]:
        """Move the virtual clock and run every due event; returns the fired task ids in order."""
        if time_ms < self.now:
            raise ValueError(f"time_ms={time_ms} is before the clock's current time {self.now}")
        self.now = time_ms
        self._s.run(blocking=False)
        fired, self._fired = self._fired, []
        return fired

    def size(self) -> int:
        return len(self._events)
