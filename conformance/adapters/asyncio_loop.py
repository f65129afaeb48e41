"""Adapter: ``asyncio`` event-loop timers (``loop.call_later`` / ``TimerHandle.cancel``) under a
virtual loop clock.

The loop is a ``SelectorEventLoop`` whose ``time()`` returns the adapter's virtual clock in
**seconds** (asyncio's unit): a task added with delay ``d`` ms is ``call_later(d / 1000)``.
``advance_to(t)`` sets the clock to ``t / 1000`` and runs exactly one loop iteration (``stop()``
then ``run_forever()``): the selector is polled with timeout 0, never sleeping.

What asyncio promises, read from ``BaseEventLoop._run_once``: a timer is ready when
``when < time() + loop._clock_resolution``, so a callback may run up to one clock resolution
*before* its time.  On Linux ``time.get_clock_info('monotonic').resolution`` is 1e-9 s, far below
a millisecond: with integer-millisecond delays nothing runs early (profile ``strict``).  On
Windows the monotonic clock's resolution is 15.625 ms; :func:`adapter_coarse` sets the loop's
``_clock_resolution`` to that value on this machine to show the consequence (callbacks up to
15 ms early), which the matrix reports as a failure of the ``strict`` early bound.

Two more things the matrix measures rather than assumes: timers live in a binary heap compared by
``when`` only, so equal deadlines are *not* run first-in-first-out; and the clock is a float in
seconds: once a reading is so large that ``time() + _clock_resolution == time()`` (above 2^23 s,
about 97 days, for 1e-9 s) a timer due exactly now is not ready in that iteration.  In a real
loop the clock moves on and the timer runs a spin later; under a virtual clock it is a lost fire,
which the corpus's clock-range scenario exposes.  The
adapter's size counts the handles in ``loop._scheduled`` that are not cancelled (asyncio removes
cancelled handles lazily and has no public count); a cancel's result is read from asyncio's state
of the handle (:func:`cancel_pending`), an add's expiration from ``TimerHandle.when()``, the clock
from ``loop.time()``.

Use: ``wheelspec check --impl wheelspec.conformance.adapters.asyncio_loop:adapter``.
"""

from __future__ import annotations

import asyncio
import platform
import time as _time
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.spec.profiles import STRICT

#: the monotonic clock resolution Windows reports (1/64 s), used by :func:`adapter_coarse`
WINDOWS_RESOLUTION_S = 0.015625


class _VirtualLoop(asyncio.SelectorEventLoop):
    """A selector loop whose clock is set by the adapter, in seconds."""

    vt = 0.0
    # Set by asyncio.BaseEventLoop.__init__ but private, so absent from typeshed: declared here
    # (annotations only, nothing at runtime) for the adapter, which reads or sets them.
    _clock_resolution: float
    _scheduled: list[asyncio.TimerHandle]

    def time(self) -> float:  # asyncio reads every deadline through this method
        return self.vt


class AsyncioAdapter(LibraryTimerAdapter):
    """``asyncio`` timers on a virtual loop clock; ``resolution`` overrides ``_clock_resolution``."""

    profile = STRICT

    def __init__(self, resolution: float | None = None) -> None:
        super().__init__()
        self._resolution = resolution
        res = resolution if resolution is not None else _time.get_clock_info("monotonic").resolution
        self.name = "asyncio" if resolution is None else f"asyncio-res-{res * 1000:g}ms"
        self.version = f"Python {platform.python_version()} (clock resolution {res:g} s)"

    def start_library(self, start_ms: int) -> None:
        self._loop = _VirtualLoop()
        self._loop.vt = start_ms / 1000
        if self._resolution is not None:
            self._loop._clock_resolution = self._resolution

    def stop_library(self) -> None:
        self._loop.close()

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        return self._loop.call_later(delay / 1000, callback)

    def deadline_of(self, handle: Any) -> int:
        return round(handle.when() * 1000)

    def unschedule(self, handle: Any) -> bool:
        return cancel_pending(self._loop, handle)

    def advance_clock(self, time: int) -> None:
        loop = self._loop
        loop.vt = time / 1000
        # stop() before run_forever(): exactly one iteration (documented asyncio behaviour): the
        # selector is polled with timeout 0 and every timer asyncio considers ready now runs
        loop.stop()
        loop.run_forever()

    def read_clock(self) -> int:
        return round(self._loop.time() * 1000)

    def count_pending(self) -> int:
        # asyncio keeps cancelled handles in its heap until they reach the head (its own
        # _timer_cancelled_count is only a clean-up heuristic): count the live ones
        return sum(not h.cancelled() for h in self._loop._scheduled)


def cancel_pending(loop: asyncio.AbstractEventLoop, handle: asyncio.TimerHandle) -> bool:
    """Cancel ``handle``; return whether asyncio still held it to run.  ``TimerHandle.cancel``
    returns nothing, so the answer is read from asyncio's state before cancelling: a handle is
    pending while it is not cancelled and sits in the loop's timer heap (``handle._scheduled``,
    cleared when ``_run_once`` pops it) or in the ready queue (``loop._ready``, popped but not run)."""
    pending = not handle.cancelled() and (bool(getattr(handle, "_scheduled", False))
                                          or handle in getattr(loop, "_ready", ()))
    handle.cancel()
    return pending


def adapter() -> AsyncioAdapter:
    """Factory for ``--impl wheelspec.conformance.adapters.asyncio_loop:adapter`` (this platform)."""
    return AsyncioAdapter()


def adapter_coarse() -> AsyncioAdapter:
    """asyncio with Windows' clock resolution (15.625 ms) set on the loop: runs callbacks early."""
    return AsyncioAdapter(WINDOWS_RESOLUTION_S)
