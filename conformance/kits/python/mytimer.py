"""A toy timer and its wheelspec adapter: replace ``ToyTimer`` with your own timer.

The adapter is built on wheelspec's library base (``LibraryTimerAdapter``, the public API of
``wheelspec.conformance.adapters.api``; docs/guides/PYTHON_ADAPTERS.md): it translates wheelspec's
task ids into your timer's handles, and every value wheelspec judges (an add's expiration, a
cancel's answer, each fire, the clock, the pending count) is read from the timer.

As shipped, the toy is a correct binary-heap timer claiming the ``strict`` profile (a task runs once
the clock reaches its expiration, never before; ties run in insertion order), so

    wheelspec check --impl mytimer:adapter

run in this directory passes.  Keep the adapter's hooks; make each call into your timer.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from wheelspec.conformance.adapters.api import STRICT, LibraryTimerAdapter


# ------------------------------------------------------------- the toy timer: replace it with yours ----
class ToyHandle:
    """One scheduled call: its expiration (ms), its callback, and whether it is still pending."""

    def __init__(self, when: int, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.pending = True


class ToyTimer:
    """A virtual-clock timer: calls run in expiration order, ties first in, first out."""

    def __init__(self, now: int) -> None:
        self.now = now
        self._heap: list[tuple[int, int, ToyHandle]] = []
        self._seq = itertools.count()  # insertion order breaks ties between equal expirations
        self._pending = 0

    def call_later(self, delay: int, callback: Callable[[], None]) -> ToyHandle:
        """Run ``callback`` once the clock reaches ``now + delay``."""
        handle = ToyHandle(self.now + delay, callback)
        heapq.heappush(self._heap, (handle.when, next(self._seq), handle))
        self._pending += 1
        return handle

    def cancel(self, handle: ToyHandle) -> bool:
        """True iff the call was still pending (it will not run); False if it ran or was cancelled."""
        if not handle.pending:
            return False
        handle.pending = False
        self._pending -= 1
        return True

    def advance(self, to: int) -> None:
        """Move the clock to ``to`` and run every pending call whose expiration has come."""
        self.now = to
        while self._heap and self._heap[0][0] <= to:
            _, _, handle = heapq.heappop(self._heap)
            if handle.pending:
                handle.pending = False
                self._pending -= 1
                handle.callback()

    def size(self) -> int:
        """The number of pending calls."""
        return self._pending


# ------------------------------------------------------------- the adapter: one call per hook ---------
class MyTimerAdapter(LibraryTimerAdapter):
    """ToyTimer under wheelspec: each hook is one call into the timer and returns what it says."""

    name = "toy-heap-timer"
    version = "0.1"
    profile = STRICT        # the firing rules the timer claims (STRICT, KAFKA or STRICT_GT)
    ranges = "unbounded"    # the toy accepts any delay: wheelspec sends it no out-of-range request

    def start_library(self, start_ms: int) -> None:
        self.timer = ToyTimer(start_ms)  # a fresh timer at every reset

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> ToyHandle:
        return self.timer.call_later(delay, callback)

    def deadline_of(self, handle: ToyHandle) -> int:
        return handle.when

    def unschedule(self, handle: ToyHandle) -> bool:
        return self.timer.cancel(handle)

    def advance_clock(self, time: int) -> None:
        self.timer.advance(time)

    def read_clock(self) -> int:
        return self.timer.now

    def count_pending(self) -> int:
        return self.timer.size()


def adapter() -> MyTimerAdapter:
    """The factory ``--impl mytimer:adapter`` names."""
    return MyTimerAdapter()
