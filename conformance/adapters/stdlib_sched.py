"""Adapter: the standard library's ``sched.scheduler`` under a virtual clock.

``sched.scheduler(timefunc, delayfunc)`` reads time only through ``timefunc``; the adapter hands
it the virtual clock (integer milliseconds), so times are exact.  ``enter(delay, 0, f)`` queues an
event at ``timefunc() + delay`` in a heap ordered by ``(time, priority, sequence)``: ties run
first in, first out.  ``run(blocking=False)`` runs every event with ``time <= timefunc()`` and
returns, which is the ``strict`` profile (fire when ``now >= exp``).  ``cancel`` removes the event
from the queue, so ``len(queue)`` is the number of live schedules.

Use: ``wheelspec check --impl wheelspec.conformance.adapters.stdlib_sched:adapter``.
"""

from __future__ import annotations

import platform
import sched
from typing import Any

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.spec.profiles import STRICT


class SchedAdapter(LibraryTimerAdapter):
    """``sched.scheduler`` with ``timefunc`` = the adapter's virtual clock (ms)."""

    name = "stdlib-sched"
    version = f"Python {platform.python_version()}"
    profile = STRICT

    def _start(self, start_ms: int) -> None:
        # delayfunc is never called with blocking=False; make any call loud rather than sleep
        self._s = sched.scheduler(lambda: self.now, _no_sleep)

    def _schedule(self, task: int, delay: int, exp: int) -> Any:
        return self._s.enter(delay, 0, lambda: self._fired(task, exp, self.now))

    def _unschedule(self, handle: Any) -> None:
        self._s.cancel(handle)

    def _advance(self, time: int) -> None:
        self.now = time
        self._s.run(blocking=False)

    def _size(self) -> int:
        return len(self._s.queue)


def _no_sleep(seconds: float) -> None:
    if seconds > 0:
        raise RuntimeError(f"sched asked to sleep {seconds} under a virtual clock")


def adapter() -> SchedAdapter:
    """Factory for ``--impl wheelspec.conformance.adapters.stdlib_sched:adapter``."""
    return SchedAdapter()
