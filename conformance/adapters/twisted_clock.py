"""Adapter: Twisted's ``twisted.internet.task.Clock`` (the deterministic reactor clock of
Twisted's own tests), ``callLater`` / ``DelayedCall.cancel`` / ``advance``.

``Clock`` keeps its calls in a list sorted (stably) by time; ``advance(amount)`` adds ``amount``
to the clock and then pops and runs calls while ``call.getTime() <= seconds()``: the ``strict``
profile with first-in-first-out ties.  The unit is whatever the caller uses: the adapter passes
milliseconds, so every value up to 2^53 is an exact float.  ``getDelayedCalls()`` lists pending
calls (a cancelled call leaves the list at once), which is the size.  ``DelayedCall.cancel``
raises ``AlreadyCalled`` / ``AlreadyCancelled`` for a call no longer pending: the adapter reports
that as the cancel's ``false``; an add's expiration is the call's ``getTime()``.

Twisted is imported when an adapter is made, so a missing install is one clear error naming the
'thirdparty' extra (:mod:`wheelspec.conformance.optional`).
Use: ``wheelspec check --impl wheelspec.conformance.adapters.twisted_clock:adapter``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.spec.profiles import STRICT


class TwistedClockAdapter(LibraryTimerAdapter):
    """``twisted.internet.task.Clock`` driven in milliseconds."""

    name = "twisted-clock"
    profile = STRICT

    def __init__(self) -> None:
        super().__init__()
        from wheelspec.conformance.optional import require

        twisted = require("twisted", "thirdparty", "the Twisted Clock adapter")
        self._task = require("twisted.internet.task", "thirdparty", "the Twisted Clock adapter")
        self._error = require("twisted.internet.error", "thirdparty", "the Twisted Clock adapter")
        self.version = f"Twisted {twisted.__version__}"

    def start_library(self, start_ms: int) -> None:
        self._tclock = self._task.Clock()
        self._tclock.rightNow = float(start_ms)

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        return self._tclock.callLater(delay, callback)

    def deadline_of(self, handle: Any) -> int:
        return round(handle.getTime())

    def unschedule(self, handle: Any) -> bool:
        # DelayedCall.cancel raises AlreadyCalled / AlreadyCancelled for a call no longer
        # pending: that is Twisted's answer "false"
        try:
            handle.cancel()
        except (self._error.AlreadyCalled, self._error.AlreadyCancelled):
            return False
        return True

    def advance_clock(self, time: int) -> None:
        self._tclock.advance(time - self._tclock.seconds())

    def read_clock(self) -> int:
        return round(self._tclock.seconds())

    def count_pending(self) -> int:
        return len(self._tclock.getDelayedCalls())


def adapter() -> TwistedClockAdapter:
    """Factory for ``--impl wheelspec.conformance.adapters.twisted_clock:adapter``."""
    return TwistedClockAdapter()
