"""Adapter: Twisted's ``twisted.internet.task.Clock`` (the deterministic reactor clock of
Twisted's own tests), ``callLater`` / ``DelayedCall.cancel`` / ``advance``.

``Clock`` keeps its calls in a list sorted (stably) by time; ``advance(amount)`` adds ``amount``
to the clock and then pops and runs calls while ``call.getTime() <= seconds()``: the ``strict``
profile with first-in-first-out ties.  The unit is whatever the caller uses: the adapter passes
milliseconds, so every value up to 2^53 is an exact float.  ``getDelayedCalls()`` lists pending
calls (a cancelled call leaves the list at once), which is the size.

Twisted is imported when an adapter is made, so a missing install is one clear error.
Use: ``wheelspec check --impl wheelspec.conformance.adapters.twisted_clock:adapter``.
"""

from __future__ import annotations

from typing import Any

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import STRICT


class TwistedClockAdapter(LibraryTimerAdapter):
    """``twisted.internet.task.Clock`` driven in milliseconds."""

    name = "twisted-clock"
    profile = STRICT

    def __init__(self) -> None:
        super().__init__()
        try:
            import twisted
            from twisted.internet import task
        except ImportError as e:
            raise UserError("the Twisted adapter needs Twisted (pip install twisted, or the test extra): "
                            f"{e}") from None
        self._task = task
        self.version = f"Twisted {twisted.__version__}"

    def _start(self, start_ms: int) -> None:
        self._clock = self._task.Clock()
        self._clock.rightNow = float(start_ms)

    def _schedule(self, task: int, delay: int, exp: int) -> Any:
        return self._clock.callLater(delay, lambda: self._fired(task, exp, int(self._clock.seconds())))

    def _unschedule(self, handle: Any) -> None:
        handle.cancel()

    def _advance(self, time: int) -> None:
        self._clock.advance(time - self._clock.seconds())

    def _size(self) -> int:
        return len(self._clock.getDelayedCalls())


def adapter() -> TwistedClockAdapter:
    """Factory for ``--impl wheelspec.conformance.adapters.twisted_clock:adapter``."""
    return TwistedClockAdapter()
