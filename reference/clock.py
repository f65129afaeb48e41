"""Clocks: the system clock for real time, and a manual clock for deterministic runs.

Models Kafka's ``Time`` (``Time.SYSTEM.hiResClockMs()``) and the test ``MockTime``.  The only
thing the timer needs from a clock is a reading in whole milliseconds and a way to wait for a
condition with a timeout (``DelayQueue.poll(timeout)``).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

from wheelspec.spec.limits import check_range, check_time


class Clock(Protocol):
    #: True if time passes by itself (waiting makes sense); False for a manual clock.
    realtime: bool

    def now_ms(self) -> int: ...

    def wait(self, cond: threading.Condition, timeout_ms: int) -> None:
        """Wait on ``cond`` (held by the caller) for at most ``timeout_ms`` of this clock's time."""
        ...


class SystemClock:
    """Monotonic wall time in ms (Kafka's ``hiResClockMs`` is ``System.nanoTime() / 1e6``)."""

    realtime = True

    def __init__(self) -> None:
        self._origin = time.monotonic_ns()

    def now_ms(self) -> int:
        return (time.monotonic_ns() - self._origin) // 1_000_000

    def wait(self, cond: threading.Condition, timeout_ms: int) -> None:
        cond.wait(max(timeout_ms, 0) / 1000.0)


class ManualClock:
    """Virtual time that moves only when the driver moves it (``set`` / ``advance``).

    Waiting on a manual clock never blocks: a ``poll(timeout)`` in virtual time returns at once
    with whatever is due *now*.  This is what makes a virtual run deterministic.
    """

    realtime = False

    def __init__(self, start_ms: int = 0) -> None:
        self._now = check_time("start_ms", start_ms)

    def now_ms(self) -> int:
        return self._now

    def set(self, time_ms: int) -> None:
        t = check_time("time_ms", time_ms)
        if t < self._now:
            raise ValueError(f"time_ms={t} is before the clock's current time {self._now}: time never goes back")
        self._now = t

    def advance(self, delta_ms: int) -> None:
        check_range("delta_ms", delta_ms, 0, 2**62)
        self.set(self._now + delta_ms)

    def wait(self, cond: threading.Condition, timeout_ms: int) -> None:
        return None
