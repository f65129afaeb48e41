"""``ArrayMockTimer``: Kafka's test ``MockTimer`` (the strict-gt profile) on arrays.

Same semantics as :class:`wheelspec.reference.MockTimer` driven by
:class:`wheelspec.reference.Simulation`, event for event: a queue ordered on expiration with the
JDK ``PriorityQueue``'s tie order; ``advance_to(t)`` runs every current entry with ``t > exp``;
an add with delay <= 0 runs at once with no entry; a re-add first cancels the task (Kafka's
``TimerTask.delayMs`` is final: a caller cancels the old task and adds a new one); ``size()``
follows the size rule (:data:`wheelspec.spec.profiles.MOCK_SIZE_RULES`).  Tasks are dense ids
``0 <= id < capacity``.  The kernels are in :mod:`.mock_timer_kernels`.

It offers what :class:`~.simulation.Simulation` and :class:`~.purgatory.ArrayPurgatory` use of
:class:`~.timer.ArrayTimer` -- ``add``, ``cancel``, ``advance_to``, ``size``, ``is_scheduled``,
``reserve``, ``now``, ``capacity``, and the purgatory's ``S``/``live``/``_add``/``_take_out`` --
so the purgatory runs over it unchanged (its kernels clear an operation's bit and decrement
``S[COUNT]``, which is what a cancel of a MockTimer task does here).

Validation happens here before any compiled code runs (ids, delays, times, as ArrayTimer checks
them).  Debug mode (``debug=True`` or ``WHEELSPEC_DEBUG=1``) checks :func:`check_mock_timer` after
every call.
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec.errors import InvariantError
from wheelspec.spec.limits import MAX_DELAY_MS, MIN_DELAY_MS, check_range, check_time
from wheelspec.spec.profiles import MOCK_SIZE_QUEUE, check_mock_size_rule

from . import layout as L
from . import mock_timer_kernels as MK
from .debug import debug_flag


class ArrayMockTimer:
    """Kafka ``MockTimer`` (manual clock) on a JDK-ordered array heap."""

    def __init__(self, start_ms: int = 0, capacity: int = 1024, size_rule: str = MOCK_SIZE_QUEUE,
                 debug: bool | None = None) -> None:
        self._now = check_time("start_ms", start_ms)
        capacity = check_range("capacity", capacity, 1, L.MAX_CAPACITY)
        self.size_rule = check_mock_size_rule(size_rule)
        self.debug = debug_flag(debug)
        self.S = np.zeros(MK.S_LEN, np.int64)
        self.live = np.zeros(L.live_words(capacity), np.uint64)
        self.cur = np.full(capacity, -1, np.int64)
        self.hexp = np.zeros(64, np.int64)
        self.hrow = np.zeros(64, np.int64)
        self.htok = np.zeros(64, np.int64)
        self.out = np.zeros((2, 64), np.int64)
        self._one_id = np.zeros(1, np.int64)
        self._one_exp = np.zeros(1, np.int64)

    # -- clock and capacity ---------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self._now

    @property
    def capacity(self) -> int:
        return int(self.cur.shape[0])

    def reserve(self, capacity: int) -> None:
        """Make room for task ids ``< capacity``."""
        capacity = check_range("capacity", capacity, 1, L.MAX_CAPACITY)
        if capacity > self.cur.shape[0]:
            self.cur = L.grow_rows(self.cur, min(max(capacity, 2 * self.cur.shape[0]), L.MAX_CAPACITY), -1)
            self.live = L.grow_rows(self.live, L.live_words(self.cur.shape[0]), 0)

    def size(self) -> int:
        """``MockTimer.size()``: the queue's length (rule ``queue``), or its current entries (``live``)."""
        if self.size_rule == MOCK_SIZE_QUEUE:
            return int(self.S[MK.M_HEAPN])
        return int(self.S[L.COUNT])

    # -- per-operation API ------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Schedule one task; returns ``(exp, fired_ids, fired_exps)`` (fired: delay <= 0)."""
        t = check_range("task id", task_id, 0, self.capacity - 1)
        d = check_range("delay_ms", delay_ms, MIN_DELAY_MS, MAX_DELAY_MS)
        exp = d + self._now
        self._one_id[0] = t
        self._one_exp[0] = exp
        self._add(self._one_id, self._one_exp, 0)
        fired = self._take_out()
        return exp, fired[0], fired[1]

    def cancel(self, task_id: int) -> bool:
        t = check_range("task id", task_id, 0, self.capacity - 1)
        r = bool(MK.cancel_one(self.S, self.live, t))
        self._after()
        return r

    def advance_to(self, time_ms: int) -> tuple[np.ndarray, np.ndarray]:
        t = check_time("time", time_ms)
        if t < self._now:
            raise ValueError(f"time={t} is before the clock's current time {self._now}: time never goes back")
        self._now = t
        self._room_out(int(self.S[MK.M_HEAPN]))
        MK.advance(self.S, self.live, self.cur, self.hexp, self.hrow, self.htok, self.out, t)
        self._after()
        return self._take_out()

    def is_scheduled(self, task_id: int) -> bool:
        """Whether task ``task_id``'s current entry is queued and not cancelled."""
        t = check_range("task id", task_id, 0, self.capacity - 1)
        return bool((int(self.live[t >> 6]) >> (t & 63)) & 1)

    def entries(self) -> list[tuple[int, int, bool]]:
        """The queue's heap array as ``(expiration, task, current)``, slot 0 the head."""
        n = int(self.S[MK.M_HEAPN])
        return [(int(e), int(r), self.is_scheduled(int(r)) and int(self.cur[r]) == int(k))
                for e, r, k in zip(self.hexp[:n], self.hrow[:n], self.htok[:n])]

    # -- what the purgatory uses ------------------------------------------------------------------
    def _add(self, ids: np.ndarray, vals: np.ndarray, base: int) -> None:
        """Add ``(ids[i], vals[i] + base)`` in order (``base``: 0 for expirations, ``now`` for delays)."""
        n = ids.shape[0]
        need = int(self.S[MK.M_HEAPN]) + n
        if need > self.hexp.shape[0]:
            self.hexp = L.grow_rows(self.hexp, need, 0)
            self.hrow = L.grow_rows(self.hrow, need, 0)
            self.htok = L.grow_rows(self.htok, need, 0)
        self._room_out(n)
        MK.add_range(self.S, self.live, self.cur, self.hexp, self.hrow, self.htok, self.out, ids, vals, base,
                     self._now)
        self._after()

    def _take_out(self) -> tuple[np.ndarray, np.ndarray]:
        n = int(self.S[MK.M_NOUT])
        self.S[MK.M_NOUT] = 0
        return self.out[0, :n].copy(), self.out[1, :n].copy()

    def _room_out(self, n: int) -> None:
        need = int(self.S[MK.M_NOUT]) + n
        if need > self.out.shape[1]:
            out = np.zeros((2, max(need, 2 * self.out.shape[1])), np.int64)
            out[:, : self.out.shape[1]] = self.out
            self.out = out

    def _after(self) -> None:
        if self.debug:
            check_mock_timer(self)


def check_mock_timer(timer: ArrayMockTimer) -> None:
    """The structure of an :class:`ArrayMockTimer`: a heap on expiration; ``S[COUNT]`` is the
    number of live bits; each live task's current entry is queued; no bit beyond the task table."""

    def fail(what: str) -> None:
        raise InvariantError(f"optimized MockTimer invariant broken: {what}")

    n = int(timer.S[MK.M_HEAPN])
    hexp, hrow, htok = timer.hexp[:n], timer.hrow[:n], timer.htok[:n]
    for i in range(1, n):
        if hexp[(i - 1) >> 1] > hexp[i]:
            fail(f"heap order at slot {i}")
    bits = np.unpackbits(timer.live.view(np.uint8), bitorder="little").astype(bool)
    if bits[timer.capacity:].any():
        fail("a liveness bit is set beyond the task table")
    live = np.flatnonzero(bits[: timer.capacity])
    if live.shape[0] != timer.S[L.COUNT]:
        fail(f"S[COUNT]={int(timer.S[L.COUNT])} but {live.shape[0]} bits are set")
    current = {(int(r), int(k)) for r, k in zip(hrow, htok)}
    for t in live.tolist():
        if (t, int(timer.cur[t])) not in current:
            fail(f"task {t} is live but its current entry is not queued")
    if n and int(htok.max()) >= timer.S[MK.M_TOKEN]:
        fail("a queued token was never handed out")
