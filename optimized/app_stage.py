"""The staging core of :class:`~.app_timer.WheelTimer`: the per-operation half of ``schedule`` and
``cancel``, and the tables they keep.

Two implementations of one interface: :class:`PyStage` here, which is its readable statement, and
``CStage`` in the C extension ``_apphot`` (``optimized/_apphot.c``), which does the same work in
one C call per operation.  :data:`Stage` is the C one when the extension is built (``pip install``
compiles it when a C compiler is there), else :class:`PyStage`; :data:`BACKEND` says which.
``tests/test_app_timer.py`` runs both in lockstep with the reference model.

The state, per timer id: the handle of the id's pending timer (or -1) and its payload; the stage:
the free ids it may still hand out (``schedule`` takes the last), the staged adds (id and delay,
in call order) and the staged cancels (ids, in call order, and the payloads they took off the
table: the timer drops its references to those in ``_release``, at the end of the flush, where
the C core prefetches them in one pass instead of paying a cache miss inside each ``cancel``).
A handle is ``generation * 2**31 + 2 * id``: :func:`row` recovers the id, and a handle matches
only its own timer, so a stale handle (its timer fired or was cancelled, its id perhaps running a
newer timer) cancels nothing.

``schedule``'s fast path takes an exact int delay in ``[_due_below, max_delay]`` while the stage
has a free id; anything else goes to the owner's ``_schedule_slow(delay, payload)``, which checks
the value, delivers timers due at once, starts a new stage, and calls ``schedule`` again.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from wheelspec.spec.limits import MAX_ID

#: A handle is ``generation * STEP + 2 * id``; ``MASK`` keeps ``2 * id`` (MAX_ID is all ones).
STEP = MAX_ID + 1
MASK = MAX_ID - 1
assert STEP == 1 << MAX_ID.bit_length(), "MAX_ID must be 2**k - 1"


class PyStage:
    """The staging core in Python (the interface and the layout: module docstring).

    ``_tab`` holds, at row ``2 * id``, the handle of the id's pending timer or -1 and, at row
    ``2 * id + 1``, its payload: one list, so that a cancel finds both in one cache line."""

    __slots__ = ("_tab", "_hot", "_sids", "_sdel", "_scan", "_rel", "_seq", "_due_below", "_max_delay")

    def __init__(self, capacity: int, stage_limit: int, max_delay: int) -> None:
        if capacity < 1 or stage_limit < 1:
            raise ValueError("capacity and stage_limit must be >= 1")
        self._tab: list[Any] = [-1, None] * capacity
        self._hot: list[int] = []    # free rows (2 * id) of the stage, the next one last
        self._sids: list[int] = []   # staged adds' rows
        self._sdel: list[int] = []   # staged adds' delays
        self._scan: list[int] = []   # staged cancels' rows
        self._rel: list[Any] = []    # their payloads, released at the end of the flush
        self._seq = 0
        self._due_below = 0
        self._max_delay = max_delay

    # -- the hot path ---------------------------------------------------------------------------
    def schedule(self, delay_ms: int, payload: Any = None) -> int:
        if type(delay_ms) is not int or delay_ms < self._due_below or delay_ms > self._max_delay or not self._hot:
            return self._schedule_slow(delay_ms, payload)  # type: ignore[attr-defined]
        j = self._hot.pop()
        h = self._seq + STEP
        self._seq = h
        h += j
        tab = self._tab
        tab[j] = h
        tab[j + 1] = payload
        self._sids.append(j)
        self._sdel.append(delay_ms)
        return h

    def cancel(self, handle: int) -> bool:
        j = handle & MASK
        tab = self._tab
        try:
            if tab[j] != handle:
                return False
        except IndexError:  # an id this timer never had: not one of its handles
            return False
        tab[j] = -1
        self._rel.append(tab[j + 1])  # kept until the flush's _release, as the C core does
        tab[j + 1] = None
        self._scan.append(j)
        return True

    def is_pending(self, handle: int) -> bool:
        try:
            return bool(self._tab[handle & MASK] == handle)
        except IndexError:
            return False

    # -- between operations ---------------------------------------------------------------------
    def _take_adds(self) -> tuple[bytearray, bytearray]:
        # bytearrays: numpy's frombuffer then gives the writable arrays the engine's kernels take
        out = (bytearray(np.array(self._sids, np.int64) >> 1), bytearray(np.array(self._sdel, np.int64)))
        self._sids.clear()
        self._sdel.clear()
        return out

    def _take_cancels(self) -> bytearray:
        ids = bytearray(np.array(self._scan, np.int64) >> 1)
        self._scan.clear()
        return ids

    def _release(self) -> None:
        # A fresh list first: a payload's finaliser may cancel again, into the next flush's list.
        rel, self._rel = self._rel, []
        rel.clear()

    def _close(self, ids: Any) -> list[Any]:
        tab = self._tab
        out: list[Any] = []
        append = out.append
        for i in np.asarray(ids, np.int64).tolist():
            j = 2 * i
            if tab[j] == -1:
                raise AssertionError(f"WheelTimer: fired id {i} has no pending timer")
            tab[j] = -1
            append(tab[j + 1])
            tab[j + 1] = None
        return out

    def _load_stage(self, ids: Any) -> None:
        if self._hot or self._sids:
            raise AssertionError("WheelTimer: a stage is loaded only when the last one is flushed and empty")
        rows = (np.asarray(ids, np.int64) * 2).tolist()
        if any(self._tab[j] != -1 for j in rows):
            raise AssertionError("WheelTimer: a staged id is not free")
        rows.reverse()
        self._hot = rows

    def _grow_rows(self, capacity: int) -> None:
        old = len(self._tab) >> 1
        if capacity > old:
            self._tab.extend([-1, None] * (capacity - old))

    def _new_generation(self) -> int:
        self._seq += STEP
        return self._seq

    def _counts(self) -> tuple[int, int, int, int]:
        """(rows, free ids left in the stage, staged adds, staged cancels)"""
        return len(self._tab) >> 1, len(self._hot), len(self._sids), len(self._scan)

    def _stage_nbytes(self) -> int:
        return 8 * (len(self._tab) + len(self._hot) + len(self._sids) + len(self._sdel) + len(self._scan)
                    + len(self._rel))


def _c_stage() -> type | None:
    if os.environ.get("WHEELSPEC_PURE_PYTHON"):  # the Python twin on demand (tests, comparisons)
        return None
    try:
        from wheelspec.optimized._apphot import CStage
    except ImportError:
        return None
    return CStage


_C = _c_stage()
#: the staging core WheelTimer uses: the C extension when it is built, else the Python twin
Stage: type = _C if _C is not None else PyStage
#: "c" or "python": which one :data:`Stage` is
BACKEND = "c" if _C is not None else "python"
