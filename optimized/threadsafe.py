"""Thread-safe facades: one lock around every call.

Why a lock and not a single-owner command queue: every operation is a short, bounded compiled call
(or a few), and a history must record each call's events contiguously and in the order the calls
took effect.  A lock gives exactly that linearization (the lock order is the history order) with
~0.1 us of overhead, while a command queue adds two thread hand-offs (tens of microseconds) per
call and a second thread to shut down.  Kafka's ``SystemTimer`` likewise serializes ``add`` and the
flush with one read-write lock; the kernels are not written for concurrent mutation, so readers
take the same lock (a plain ``threading.Lock``: nothing here calls back into the facade, so
reentrancy is not needed).  The compiled kernels release the GIL (``nogil=True``), so threads
that are *not* in the timer keep running while a large batch executes.

A facade adds no checks of its own: each call goes to the wrapped object, which validates every
argument before it changes anything, so a refused call raises the same error as without the
facade, leaves the state as it was, and releases the lock (``with``).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from wheelspec.spec import ops
from wheelspec.spec.history import History

from .simulation import Simulation
from .timer import ArrayTimer


def _locked(cls: type, methods: tuple[str, ...]) -> type:
    """Build a facade class whose listed methods run under ``self._lock``."""

    def make(name: str) -> Any:
        target = getattr(cls, name)

        @functools.wraps(target)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return getattr(self._inner, name)(*args, **kwargs)

        return method

    ns: dict[str, Any] = {name: make(name) for name in methods}
    return type(f"Locked{cls.__name__}", (), ns)


#: every request of the per-operation API (one per operation record), and the driver's other calls
_SIM_METHODS = (*ops.METHODS.values(), "apply", "set_purge_point", "close")
_TIMER_METHODS = ("add", "cancel", "add_many", "cancel_many", "advance_to", "size", "reserve", "levels",
                  "is_scheduled")


class LockedSimulation(_locked(Simulation, _SIM_METHODS)):  # type: ignore[misc]  # a base built at run time
    """:class:`~.simulation.Simulation` with every call under one lock.  ``history`` is the inner
    simulation's; read it when no call is in flight (or under ``lock``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        self._inner = Simulation(*args, **kwargs)

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    @property
    def history(self) -> History:
        return self._inner.history

    @property
    def now(self) -> int:
        with self._lock:
            return self._inner.now


class LockedTimer(_locked(ArrayTimer, _TIMER_METHODS)):  # type: ignore[misc]  # a base built at run time
    """:class:`~.timer.ArrayTimer` with every call under one lock."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        self._inner = ArrayTimer(*args, **kwargs)

    @property
    def now(self) -> int:
        with self._lock:
            return self._inner.now
