"""``ArrayTimer``: Kafka's ``SystemTimer`` on arrays, with a batch API and a per-operation API.

Same semantics as :class:`wheelspec.reference.SystemTimer` on a manual clock (tick, wheel size,
lazy per-level clocks, overflow levels on demand, the bucket-reuse rule, the JDK heap's order
across buckets of equal expiration, re-add replaces, cancel reports whether it unlinked a live
entry), event for event.  Tasks are dense ids ``0 <= id < capacity``; a task *is* its entry.

Batch API (numpy in, numpy out; one compiled call per batch):

* ``add_many(ids, delays) -> (fired_ids, fired_exps)``: schedule each task at ``now + delay``, in
  order (a repeated id is re-added: its earlier entry is replaced); returns the tasks that were due
  at once (``delay <= 0``, or a stale wheel clock) in the order the timer ran them.
* ``cancel_many(ids) -> bool array``: whether each cancel found its task pending (and unlinked
  it: the task's liveness bit is cleared, and its bucket's flush skips the slot).
* ``advance_to(t) -> (fired_ids, fired_exps)``: move the clock to ``t`` and drain every due
  bucket; every task fired at clock reading ``t``, in Kafka's order.

Per-operation API: ``add(id, delay) -> (exp, fired_ids, fired_exps)``, ``cancel(id) -> bool``,
``is_scheduled(id) -> bool``, ``size()``, ``now``.

Validation happens here, in Python, before any compiled code runs and before any state changes (a
refused call leaves the timer exactly as it was): ids outside ``[0, capacity)`` (negative ids
included: they would index another id's bit), delays outside
:data:`wheelspec.spec.limits.MIN_DELAY_MS` .. ``MAX_DELAY_MS``, times outside ``[now,
MAX_TIME_MS]``, non-integer arrays, bools given as ids (``True`` is not task 1) and length
mismatches raise a one-line error naming the argument and the first offending position.  That is
what keeps the kernels in bounds.  docs/design/ENGINE.md ("API validation") lists the rules.

Debug mode (``debug=True`` or the environment variable ``WHEELSPEC_DEBUG=1``) runs the checked
build of the kernels (:func:`.timer_kernels.checked_kernels`: hot-path assertions with the state
they saw, raised as :class:`~wheelspec.spec.errors.InvariantError`) and checks every structural
invariant (:mod:`.invariants`) after each call.
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec.errors import InvariantError
from wheelspec.spec.limits import (
    MAX_DELAY_MS,
    MIN_DELAY_MS,
    RangeError,
    check_range,
    check_tick,
    check_time,
    check_wheel_size,
)

from . import layout as L
from . import timer_kernels as K
from .debug import debug_flag

#: Batches of at least this many adds take the two-pass kernel (``add_batch``); smaller ones, and
#: every per-operation add, the fused loop (``add_range``), whose set-up costs less.
BATCH_MIN = L.CHUNK + 1


#: Python's and numpy's bools: numpy turns ``[1, True]`` into an int array, so a list is searched
#: for them before conversion.
_BOOL_TYPES = frozenset((bool, np.bool_))


def as_int_array(name: str, values: object) -> np.ndarray:
    """``values`` as a 1-d int64 array; refuses floats, bools (a bool array, or a bool anywhere in
    a list or tuple: ``True`` is not the id 1) and other non-integer data."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of integers, got an array of shape {a.shape}")
    if a.size == 0:
        return np.zeros(0, np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    # numpy converted the elements in C; collecting their types with map and set stays in C too
    # (no Python-level loop), and costs less than the conversion.
    if isinstance(values, (list, tuple)) and not _BOOL_TYPES.isdisjoint(set(map(type, values))):
        i = next(i for i, v in enumerate(values) if type(v) in _BOOL_TYPES)
        raise TypeError(f"{name}[{i}]={values[i]!r} is a bool, not an integer id")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and int(a.max()) > 2**63 - 1:
        raise RangeError(f"{name}[{int(np.argmax(a))}]={int(a.max())} does not fit int64")
    return np.ascontiguousarray(a, dtype=np.int64)


def check_bounds(name: str, a: np.ndarray, lo: int, hi: int) -> None:
    """Raise naming the first element of ``a`` (int64, 1-d) outside ``[lo, hi]``.  One compiled,
    read-only pass: numpy's min and max cost more than the work for small batches."""
    if a.size:
        i = int(K.first_outside(a, lo, hi))
        if i >= 0:
            raise RangeError(f"{name}[{i}]={int(a[i])} is outside the allowed range [{lo}, {hi}]")


class ArrayTimer:
    """Kafka ``SystemTimer`` (manual clock) on the arrays of :mod:`.layout`."""

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 capacity: int = 1024, debug: bool | None = None) -> None:
        tick_ms = check_tick(tick_ms)
        wheel_size = check_wheel_size(wheel_size)
        start_ms = check_time("start_ms", start_ms)
        capacity = check_range("capacity", capacity, 1, L.MAX_CAPACITY)
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.debug = debug_flag(debug)
        #: The kernels this timer runs: the fast build (the module itself, so that its attributes
        #: are looked up at each call), or in debug mode the checked build.
        self._K = K.checked_kernels() if self.debug else K
        self._now = start_ms
        arrays = L.new_timer_arrays(tick_ms, wheel_size, start_ms, capacity,
                                    chunks=64)
        self.S: np.ndarray = arrays["S"]
        self.lv: np.ndarray = arrays["lv"]
        self.bk: np.ndarray = arrays["bk"]
        self.heap: np.ndarray = arrays["heap"]
        self.tk: np.ndarray = arrays["tk"]
        self.live: np.ndarray = arrays["live"]
        self.pid: np.ndarray = arrays["pid"]
        self.pexp: np.ndarray = arrays["pexp"]
        self.cnext: np.ndarray = arrays["cnext"]
        self.out = np.empty((2, 64), np.int64)     # fired ids (row 0) and expirations (row 1)
        self.sids = np.empty(L.CHUNK, np.int64)     # flush scratch: the live entries of one chunk
        self.sexps = np.empty(L.CHUNK, np.int64)
        self.scr = np.empty(K.scratch_size(int(self.S[L.MAXLEV]), wheel_size), np.int64)  # add_batch's
        self._one_id = np.zeros(1, np.int64)       # per-operation add without allocating
        self._one_exp = np.zeros(1, np.int64)

    # -- clock and capacity ---------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self._now

    @property
    def capacity(self) -> int:
        return int(self.tk.shape[0])

    def reserve(self, capacity: int, pending: int = 0) -> None:
        """Make room for task ids ``< capacity`` (the only way the task table grows) and, if
        ``pending`` is given, for that many pending tasks without growing the chunk pool.

        The pool otherwise grows by half its size when it runs out: amortised O(1) per add, but
        each growth copies the whole pool at once (at 10^7 pending, tens of milliseconds).  A
        caller who knows its occupancy reserves it up front, as with a vector's reserve."""
        capacity = check_range("capacity", capacity, 1, L.MAX_CAPACITY)
        pending = check_range("pending", pending, 0, L.MAX_CAPACITY)
        if capacity > self.tk.shape[0]:
            self.tk = L.grow_rows(self.tk, min(max(capacity, 2 * self.tk.shape[0]), L.MAX_CAPACITY), -1)
            self.live = L.grow_rows(self.live, L.live_words(self.tk.shape[0]), 0)
        if pending:
            # Full chunks for every pending entry, plus a partly filled tail chunk per bucket.
            want = pending // L.CHUNK + int(self.S[L.MAXLEV]) * self.wheel_size
            if self.cnext.shape[0] < want:
                self.pid, self.pexp, self.cnext = L.grow_chunks(self.S, self.pid, self.pexp, self.cnext,
                                                                want - self.cnext.shape[0])

    def size(self) -> int:
        """Kafka's ``taskCounter``: live entries in buckets."""
        return int(self.S[L.COUNT])

    def levels(self) -> int:
        """Wheel levels created so far (1 + overflow wheels)."""
        return int(self.S[L.NLEV])

    # -- batch API --------------------------------------------------------------------------------
    def add_many(self, ids: object, delays: object) -> tuple[np.ndarray, np.ndarray]:
        ids_a = as_int_array("ids", ids)
        d = as_int_array("delays", delays)
        if d.shape[0] != ids_a.shape[0]:
            raise ValueError(f"ids and delays differ in length: {ids_a.shape[0]} != {d.shape[0]}")
        # One compiled pass checks every id and delay and computes the expirations; it touches
        # nothing but these arrays, and the timer's kernels run only if it found nothing wrong.
        bad = int(K.validate_adds(ids_a, d, self.tk.shape[0], MIN_DELAY_MS, MAX_DELAY_MS))
        if bad >= 0:
            n = ids_a.shape[0]
            if bad < n:
                raise RangeError(f"ids[{bad}]={int(ids_a[bad])} is outside the allowed range "
                                 f"[0, {self.tk.shape[0] - 1}]")
            raise RangeError(f"delays[{bad - n}]={int(d[bad - n])} is outside the allowed range "
                             f"[{MIN_DELAY_MS}, {MAX_DELAY_MS}]")
        self._add(ids_a, d, self._now)  # expirations are delays + now, computed in the kernel
        return self._take_out()

    def cancel_many(self, ids: object) -> np.ndarray:
        ids_a = self._ids("ids", ids)
        res = np.empty(ids_a.shape[0], np.int8)
        if self.debug:
            self._check_cancels(ids_a)
        self._K.cancel_range(self.S, self.live, ids_a, res)
        self._after()
        return res.astype(bool)

    def advance_to(self, time_ms: int) -> tuple[np.ndarray, np.ndarray]:
        t = self._check_advance(time_ms)
        self._now = t
        self._advance(t)
        return self._take_out()

    # -- per-operation API ------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Schedule one task; returns ``(exp, fired_ids, fired_exps)`` (fired: due at once)."""
        t = check_range("task id", task_id, 0, self.tk.shape[0] - 1)
        d = check_range("delay_ms", delay_ms, MIN_DELAY_MS, MAX_DELAY_MS)
        exp = d + self._now
        self._one_id[0] = t
        self._one_exp[0] = exp
        self._add(self._one_id, self._one_exp, 0)
        fired = self._take_out()
        return exp, fired[0], fired[1]

    def cancel(self, task_id: int) -> bool:
        t = check_range("task id", task_id, 0, self.tk.shape[0] - 1)
        if self.debug:
            self._one_id[0] = t
            self._check_cancels(self._one_id)
        r = bool(self._K.cancel_one(self.S, self.live, t))
        self._after()
        return r

    def is_scheduled(self, task_id: int) -> bool:
        """Whether task ``task_id`` is pending (its liveness bit).  The id is checked like
        ``add``'s: a negative id would read another id's bit (``live[-1]``)."""
        t = check_range("task id", task_id, 0, self.tk.shape[0] - 1)
        return bool((int(self.live[t >> 6]) >> (t & 63)) & 1)

    def nbytes(self) -> int:
        """Bytes held by the timer's arrays (task table, chunk pool, buckets, heap, levels, buffers)."""
        return sum(int(a.nbytes) for a in (self.S, self.lv, self.bk, self.heap, self.tk, self.live, self.pid, self.pexp,
                                             self.cnext, self.out, self.sids, self.sexps, self.scr))

    # -- internals --------------------------------------------------------------------------------
    def _ids(self, name: str, ids: object) -> np.ndarray:
        a = as_int_array(name, ids)
        check_bounds(name, a, 0, self.tk.shape[0] - 1)
        return a

    def _check_advance(self, time_ms: int) -> int:
        t = check_time("time", time_ms)
        if t < self._now:
            raise ValueError(f"time={t} is before the clock's current time {self._now}: time never goes back")
        return t

    def _add(self, ids: np.ndarray, exps: np.ndarray, base: int) -> None:
        """Add ``(ids[i], exps[i] + base)`` in order (``base``: 0 for expirations, ``now`` for delays)."""
        i = 0
        n = ids.shape[0]
        if n > L.CHUNK:
            # A large batch: reserve what it will most likely use (its entries in full chunks,
            # plus a partly filled chunk per bucket it may touch) in one step, rather than
            # growing repeatedly; the kernel still stops and asks if that was not enough.
            # (Only the levels that exist, plus one: a level is created by an add far ahead.)
            want = n // L.CHUNK + min(n, (int(self.S[L.NLEV]) + 1) * self.wheel_size)
            if self.S[L.NFREE] < want:
                self.pid, self.pexp, self.cnext = L.grow_chunks(self.S, self.pid, self.pexp, self.cnext,
                                                                want - int(self.S[L.NFREE]))
        kernels = self._K
        while True:
            if n >= BATCH_MIN:
                i = kernels.add_batch(self.S, self.lv, self.bk, self.heap, self.tk, self.live, self.pid, self.pexp,
                                      self.cnext, self.out, ids, exps, base, i, self.scr)
            else:
                i = kernels.add_range(self.S, self.lv, self.bk, self.heap, self.tk, self.live, self.pid, self.pexp,
                                      self.cnext, self.out, ids, exps, base, i)
            self._check_error()
            if i >= n:
                break
            # Ran out of chunks or output rows: grow whichever is short and resume at i.
            # Both grow by doubling: a batch of n adds needs far fewer than n chunks or rows.
            if self.S[L.NFREE] == 0:
                self.pid, self.pexp, self.cnext = L.grow_chunks(self.S, self.pid, self.pexp, self.cnext, 1)
            if self.out.shape[1] == self.S[L.NOUT]:
                self.out = L.grow_out(self.out, int(self.S[L.NOUT]) + 1)
        self._after()

    def _advance(self, now: int) -> None:
        kernels = self._K
        while True:
            status = kernels.advance(self.S, self.lv, self.bk, self.heap, self.tk, self.live, self.pid, self.pexp,
                                     self.cnext, self.out, self.sids, self.sexps, self.scr, now)
            self._check_error()
            if status == L.DONE:
                break
            need = int(self.S[L.NEED])
            if status == L.NEED_CHUNKS:
                self.pid, self.pexp, self.cnext = L.grow_chunks(self.S, self.pid, self.pexp, self.cnext, need)
            elif status == L.NEED_OUT:
                self.out = L.grow_out(self.out, int(self.S[L.NOUT]) + need)
        self._after()

    def _take_out(self) -> tuple[np.ndarray, np.ndarray]:
        n = int(self.S[L.NOUT])
        self.S[L.NOUT] = 0
        if n == 0:
            return _EMPTY, _EMPTY
        if n >= _HAND_OVER:
            # A large result: hand the buffer itself to the caller (its rows are contiguous) and
            # start a fresh one, rather than copying megabytes.
            out, self.out = self.out, np.empty((2, 64), np.int64)
            return out[0, :n], out[1, :n]
        return self.out[0, :n].copy(), self.out[1, :n].copy()

    def _check_error(self) -> None:
        if self.S[L.ERROR]:
            if self.S[L.ERROR] == L.ERR_CHECK:
                raise InvariantError(K.describe_check(self.S))
            raise RuntimeError(f"optimized timer: internal invariant broken (error code {int(self.S[L.ERROR])})")

    def _check_cancels(self, ids: np.ndarray) -> None:
        """Debug mode, before a cancel: each pending task's entry is where its location says."""
        self._K.check_cancels(self.S, self.live, self.tk, self.pid, ids)
        self._check_error()

    def _after(self) -> None:
        # S[NEED] only carries a stopped kernel's request to the loop that grew the buffer; clear
        # it, so that the arrays between two calls depend on the operations alone, not on which
        # API (or batch size) made them and where a buffer ran out on the way.
        self.S[L.NEED] = 0
        if self.debug:
            self._check_error()  # a cancel's failed check (the add and advance loops check their own)
            from .invariants import check_timer
            check_timer(self)


#: Results of at least this many fired tasks are returned as the output buffer itself.
_HAND_OVER = 4096

_EMPTY = np.zeros(0, np.int64)
_EMPTY.setflags(write=False)
