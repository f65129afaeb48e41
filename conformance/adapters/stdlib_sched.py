"""Adapter: the standard library's ``sched.scheduler`` under a virtual clock.

``sched.scheduler(timefunc, delayfunc)`` reads time only through ``timefunc``; the adapter hands
it the virtual clock (integer milliseconds), so times are exact.  ``enter(delay, 0, f)`` queues an
event at ``timefunc() + delay`` in a heap ordered by ``(time, priority, sequence)``: ties run
first in, first out.  ``run(blocking=False)`` runs every event with ``time <= timefunc()`` and
returns, which is the ``strict`` profile (fire when ``now >= exp``).  ``cancel`` removes the event
from the queue (and raises ``ValueError`` for one no longer there, which the adapter reports as
``false``), so ``len(queue)`` is the number of live schedules.

Use: ``wheelspec check --impl wheelspec.conformance.adapters.stdlib_sched:adapter``.
"""

from __future__ import annotations

import platform
import sched
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.spec.profiles import STRICT


class SchedAdapter(LibraryTimerAdapter):
    """``sched.scheduler`` with ``timefunc`` = the adapter's virtual clock (ms).

    Every judged value is sched's: an add's expiration is the queued event's ``time``; a cancel's
    result is whether ``scheduler.cancel`` accepted the event (it raises ``ValueError`` for an
    event no longer in the queue: already run or already cancelled); the clock is ``timefunc()``;
    the size is ``len(scheduler.queue)``."""

    name = "stdlib-sched"
    version = f"Python {platform.python_version()}"
    profile = STRICT

    def start_library(self, start_ms: int) -> None:
        self._now = start_ms  # the value timefunc returns: the virtual clock sched reads
        # delayfunc is never called with blocking=False; make any call loud rather than sleep
        self._s = sched.scheduler(lambda: self._now, _no_sleep)

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        return self._s.enter(delay, 0, callback)

    def deadline_of(self, handle: Any) -> int:
        return int(handle.time)

    def unschedule(self, handle: Any) -> bool:
        try:
            self._s.cancel(handle)
        except ValueError:  # sched's answer for an event not in its queue: run or cancelled
            return False
        return True

    def advance_clock(self, time: int) -> None:
        self._now = time
        self._s.run(blocking=False)

    def read_clock(self) -> int:
        return int(self._s.timefunc())

    def count_pending(self) -> int:
        return len(self._s.queue)


def _no_sleep(seconds: float) -> None:
    if seconds > 0:
        raise RuntimeError(f"sched asked to sleep {seconds} under a virtual clock")


def adapter() -> SchedAdapter:
    """Factory for ``--impl wheelspec.conformance.adapters.stdlib_sched:adapter``."""
    return SchedAdapter()
