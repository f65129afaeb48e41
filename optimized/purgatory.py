"""``ArrayPurgatory``: Kafka's ``DelayedOperationPurgatory`` on arrays, over its own
:class:`~.timer.ArrayTimer` (the operations' timeouts; an operation id is its timer task id).

Operations are dense ids ``0 <= op < capacity`` (each watched at most once), whose ``tryComplete``
succeeds iff their *completable* flag is set (Kafka's test ``MockDelayedOperation``).  Watch keys
are dense key ids handed out by :meth:`key_id` (a dict from any ``str``/``int`` key; the compiled
code only sees the ids).

Every call returns, besides its own result, the completions it caused as ``(ops, vias)`` arrays in
the order the callbacks ran (``vias`` index :data:`~.purgatory_kernels.VIAS`: try, check, expire,
force); an ``expire`` completion is followed by ``onExpiration`` (wheelspec's ``Expire`` event).

Batch API: ``watch_many``, ``set_completable_many``, ``check_many``, ``force_complete_many``,
``cancel_for_key``, ``advance_to``; queries ``watched()``, ``num_delayed()``, ``estimated``.

Every call validates all its arguments before it changes anything: a batch with a bad element
anywhere (an id out of range, a bool where an id goes, a flag that is not a bool, a length that
differs) raises a one-line error and leaves the purgatory and its timer exactly as they were
(docs/design/ENGINE.md, "API validation").

Debug mode (``debug=True`` or ``WHEELSPEC_DEBUG=1``) runs the checked builds of the purgatory's and
its timer's kernels (a failed check raises :class:`~wheelspec.spec.errors.InvariantError` with the
state it saw) and checks every structural invariant after each call.
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec.errors import InvariantError
from wheelspec.spec.limits import MAX_DELAY_MS, MIN_DELAY_MS, RangeError, check_key, check_purge_interval, check_range
from wheelspec.spec.profiles import KAFKA, check_purge_point

from . import layout as L
from . import purgatory_kernels as PK
from .debug import debug_flag
from .mock_timer import ArrayMockTimer
from .timer import ArrayTimer, as_int_array, check_bounds

Key = str | int


class PurgeReport:
    """What one purge did: Kafka's ``estimated`` before it, ``numDelayed`` (the new estimate)
    and the number of completed entries dropped from watch lists; ``after``: how many of its
    advance's completions the executor had run when the purge check came (the rest came after it)."""

    __slots__ = ("estimated", "delayed", "purged", "after")

    def __init__(self, estimated: int, delayed: int, purged: int, after: int = 0) -> None:
        self.estimated, self.delayed, self.purged, self.after = estimated, delayed, purged, after

    def __repr__(self) -> str:
        return (f"PurgeReport(estimated={self.estimated}, delayed={self.delayed}, purged={self.purged}, "
                f"after={self.after})")


class ArrayPurgatory:
    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 purge_interval: int = 1000, capacity: int = 1024, debug: bool | None = None,
                 timer: ArrayMockTimer | None = None) -> None:
        self.purge_interval = check_purge_interval(purge_interval)
        self.debug = debug_flag(debug)
        #: The kernels: the fast build (the module) or, in debug mode, the checked build.
        self._PK = PK.checked_kernels() if self.debug else PK
        #: The timeout timer: a SystemTimer on arrays, or the given MockTimer (strict-gt), whose
        #: ``S[COUNT]`` and liveness bits the kernels use the same way.
        self.timer: ArrayTimer | ArrayMockTimer = (
            timer if timer is not None else ArrayTimer(tick_ms, wheel_size, start_ms, capacity, debug=self.debug))
        capacity = self.timer.capacity
        self.P = np.zeros(PK.P_LEN, np.int64)
        self.opt = np.zeros((capacity, 3), np.int8)
        #: each operation's timeout (Kafka's final ``delayMs``), which a resubmit re-times it with
        self.odelay = np.zeros(capacity, np.int64)
        self.kt = np.full((16, 3), -1, np.int64)
        self.kt[:, PK.K_LEN] = 0
        self.we = np.zeros((0, 2), np.int64)
        self.P[PK.P_WFREE] = -1
        self.lg = np.zeros((64, 2), np.int64)
        self._keys: dict[Key, int] = {}
        self._key_names: list[Key] = []

    # -- ids ------------------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.timer.now

    @property
    def capacity(self) -> int:
        return int(self.opt.shape[0])

    def reserve(self, capacity: int) -> None:
        """Make room for operation ids ``< capacity``."""
        self.timer.reserve(capacity)
        if self.timer.capacity > self.opt.shape[0]:
            self.opt = L.grow_rows(self.opt, self.timer.capacity, 0)
            self.odelay = L.grow_rows(self.odelay, self.timer.capacity, 0)

    def key_id(self, key: Key) -> int:
        """The dense id of a watch key (allocated on first use)."""
        kid = self._keys.get(key)
        if kid is None or (type(key) is not str and type(key) is not int):
            # Not found, or found through a key of another type that compares equal (True == 1,
            # 1.0 == 1): check_key refuses those, rather than answering with key 1's id.
            key = check_key(key)
            kid = self._keys.get(key)
        if kid is None:
            kid = self._keys[key] = len(self._key_names)
            self._key_names.append(key)
            if kid >= self.kt.shape[0]:
                self.kt = L.grow_rows(self.kt, kid + 1, -1)
                self.kt[kid:, PK.K_LEN] = 0
        return kid

    def key_of(self, kid: int) -> Key:
        return self._key_names[check_range("key id", kid, 0, self.num_keys - 1)]

    @property
    def num_keys(self) -> int:
        return len(self._key_names)

    # -- queries --------------------------------------------------------------------------------------
    def watched(self) -> int:
        """Kafka's ``watched()``: the total length of all watch lists (completed operations not
        yet purged included)."""
        return int(self.P[PK.P_WATCHED])

    def num_delayed(self) -> int:
        """Kafka's ``numDelayed()``: the timeout timer's size."""
        return self.timer.size()

    @property
    def estimated(self) -> int:
        return int(self.P[PK.P_EST])

    def is_completed(self, op: int) -> bool:
        """Whether operation ``op`` has completed (a negative id would read another op's row)."""
        return bool(self.opt[check_range("op id", op, 0, self.opt.shape[0] - 1), PK.O_DONE])

    # -- batch API --------------------------------------------------------------------------------------
    def watch_many(self, ops: object, delays: object, key_ids: object,
                   completable: object | None = None,
                   completes_on_retry: object | None = None) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``tryCompleteElseWatch`` for each new operation ``ops[i]`` with timeout ``delays[i]`` on
        the keys of row ``i`` of ``key_ids`` (a 2-d int array, or a sequence of sequences),
        optionally completable at once, or completable from the second ``tryComplete`` on
        (``completes_on_retry``, see :class:`wheelspec.spec.ops.Watch`).  Returns ``(results,
        completions)``: ``results[i]`` is True iff the call itself completed the operation."""
        # Every argument is checked before anything changes (the capacity included): a batch with
        # a bad element anywhere leaves the purgatory as it was.
        ops_a, top = self._new_ops(ops)
        n = ops_a.shape[0]
        d = as_int_array("delays", delays)
        if d.shape[0] != n:
            raise ValueError(f"ops and delays differ in length: {n} != {d.shape[0]}")
        check_bounds("delays", d, MIN_DELAY_MS, MAX_DELAY_MS)
        kstart, kids = self._key_rows(key_ids, n)
        c = None if completable is None else _flags("completable", completable, n)
        r = None if completes_on_retry is None else _flags("completes_on_retry", completes_on_retry, n)
        if top > self.opt.shape[0]:
            self.reserve(top)
        self.odelay[ops_a] = d
        if c is not None:
            self.opt[ops_a, PK.O_COMPLETABLE] = c
        if r is not None:
            # 2: not completable at the first look, completable from then on (a completable op
            # stays 1: its first look succeeds).
            self.opt[ops_a, PK.O_COMPLETABLE] = np.where(r & (self.opt[ops_a, PK.O_COMPLETABLE] == 0),
                                                         PK.RETRY, self.opt[ops_a, PK.O_COMPLETABLE])
        self._room_entries(kids.shape[0])
        self._room_log(ops_a.shape[0])
        tout = np.empty(ops_a.shape[0], np.int64)
        m = self._PK.watch_range(self.P, self.opt, self.kt, self.we, self.lg, ops_a, kstart, kids, tout)
        if self.debug:
            self._check_error()
        results = self.opt[ops_a, PK.O_DONE].astype(bool)
        if m:
            idx = tout[:m]
            fired, _ = self._timer_add(ops_a[idx], d[idx])
            self._expire(fired)
        self._after()
        return results, self._take_log()

    def resubmit(self, op: int, key_ids: object) -> tuple[bool, tuple[np.ndarray, np.ndarray]]:
        """``tryCompleteElseWatch`` of operation ``op``, watched before, in whatever state it is
        (SEMANTICS.md, "Resubmit"), on the key ids ``key_ids``.  Returns ``(result, completions)``.
        A per-operation call (no batch form): the batch kernels stay as they are.

        A completed operation: both tries lose (its ``forceComplete`` finds the flag set), no key
        lists it again (current Kafka skips the keys of a completed operation), ``estimated``
        still counts the call, no timer entry.  Otherwise the steps of a first watch
        (:func:`~.purgatory_kernels.watch_range`, which takes any uncompleted operation); if a try
        completes it, its timer entry is cancelled (``forceComplete``), else it is re-timed from
        now with its own timeout, the new entry replacing the old."""
        ops_a = self._known_ops([op])
        kstart, kids = self._key_rows([key_ids], 1)
        row = int(ops_a[0])
        if self.opt[row, PK.O_DONE]:
            self.P[PK.P_EST] += 1
            self._after()
            return False, self._take_log()
        self._room_entries(kids.shape[0])
        self._room_log(2)
        tout = np.empty(1, np.int64)
        m = self._PK.watch_range(self.P, self.opt, self.kt, self.we, self.lg, ops_a, kstart, kids, tout)
        if self.debug:
            self._check_error()
        result = bool(self.opt[row, PK.O_DONE])
        if result:
            self.timer.cancel(row)
        elif m:
            fired, _ = self._timer_add(ops_a, self.odelay[ops_a])
            self._expire(fired)
        self._after()
        return result, self._take_log()

    def planned_check(self, key_id: int) -> list[tuple[int, bool]]:
        """The ``tryComplete`` calls ``checkAndComplete(key_id)`` is about to make, as ``(op,
        result)`` in walk order: one per listed occurrence of an operation not completed (before
        or earlier in this walk), true iff it is completable.  Reads the lists, changes nothing
        (for :class:`~.simulation.Simulation`'s ``TryComplete`` events; the kernel does the walk)."""
        kid = check_range("key id", key_id, 0, self.num_keys - 1)
        out: list[tuple[int, bool]] = []
        done: set[int] = set()
        e = int(self.kt[kid, PK.K_HEAD])
        for _ in range(int(self.kt[kid, PK.K_LEN])):
            op = int(self.we[e, PK.W_OP])
            e = int(self.we[e, PK.W_NEXT])
            if self.opt[op, PK.O_DONE] or op in done:
                continue
            won = bool(self.opt[op, PK.O_COMPLETABLE])
            out.append((op, won))
            if won:
                done.add(op)
        return out

    def planned_tries(self, op: int) -> list[bool]:
        """The results of the ``tryComplete`` calls ``tryCompleteElseWatch`` of operation ``op`` is
        about to make (``safeTryCompleteOrElse``): a completed op loses both; a completable one
        wins the first; a ``RETRY`` one loses the first and wins the second; any other loses both."""
        row = check_range("op id", op, 0, self.opt.shape[0] - 1)
        c = int(self.opt[row, PK.O_COMPLETABLE])
        if self.opt[row, PK.O_DONE] or c == 0:
            return [False, False]
        return [True] if c == 1 else [False, True]

    def set_completable_many(self, ops: object, values: object = True) -> None:
        """Make ``tryComplete`` of these operations succeed (or fail) from now on.  ``values``: one
        bool for all, or one per operation."""
        ops_a = self._known_ops(ops)
        self.opt[ops_a, PK.O_COMPLETABLE] = _flags("values", values, ops_a.shape[0], one_for_all=True)

    def check_many(self, key_ids: object) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``checkAndComplete`` for each key id in order; returns ``(counts, completions)``."""
        kids = as_int_array("key_ids", key_ids)
        check_bounds("key_ids", kids, 0, self.num_keys - 1)
        counts = np.zeros(kids.shape[0], np.int64)
        self._room_log(self.watched())
        self._PK.check_range(self.P, self.opt, self.kt, self.we, self.lg, self.timer.S, self.timer.live,
                             kids, counts)
        self._after()
        return counts, self._take_log()

    def force_complete_many(self, ops: object) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``forceComplete`` from outside for each op; returns ``(won, completions)``."""
        ops_a = self._known_ops(ops)
        res = np.zeros(ops_a.shape[0], np.int8)
        self._room_log(ops_a.shape[0])
        self._PK.force_range(self.P, self.opt, self.lg, self.timer.S, self.timer.live, ops_a, res)
        self._after()
        return res.astype(bool), self._take_log()

    def cancel_for_key(self, key_id: int) -> np.ndarray:
        """``cancelForKey``: the ids that were listed under the key (watch order, repeats kept)."""
        kid = check_range("key id", key_id, 0, self.num_keys - 1)
        self._room_log(int(self.kt[kid, PK.K_LEN]))
        self._PK.cancel_key(self.P, self.kt, self.we, self.lg, self.timer.S, self.timer.live, kid)
        self._after()
        return self._take_log()[0]

    def advance_to(self, time_ms: int, purge_point: int | None = None
                   ) -> tuple[tuple[np.ndarray, np.ndarray], PurgeReport | None]:
        """The reaper's step on a manual clock at ``time_ms``: the timer hands the due timeouts to
        the executor, which completes each via expire, and the purge rule is applied after the
        first ``purge_point`` of them (None: after all; Kafka's executor race, SEMANTICS.md).
        Returns ``(completions, purge report or None)``; the report's ``after`` says where the
        check came among the completions."""
        purge_point = check_purge_point(purge_point, KAFKA, "purge_point")  # (KAFKA: the rule for ints only)
        fired, _ = self.timer.advance_to(time_ms)
        first = fired if purge_point is None else fired[:purge_point]
        logged = int(self.P[PK.P_NLOG])
        self._expire(first)
        report = None
        if self._PK.purge(self.P, self.opt, self.kt, self.we, self.num_keys, self.timer.size(), self.purge_interval):
            report = PurgeReport(int(self.P[PK.P_BEFORE]), self.timer.size(), int(self.P[PK.P_PURGED]),
                                 int(self.P[PK.P_NLOG]) - logged)
        self._expire(fired[first.shape[0]:])
        self._after()
        return self._take_log(), report

    # -- internals ----------------------------------------------------------------------------------------
    def _timer_add(self, ops: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.timer._add(ops, delays, self.timer.now)
        return self.timer._take_out()

    def _expire(self, fired: np.ndarray) -> None:
        if fired.shape[0]:
            self._room_log(fired.shape[0])
            self._PK.expire_range(self.P, self.opt, self.lg, fired)
            if self.debug:
                self._check_error()

    def _new_ops(self, ops: object) -> tuple[np.ndarray, int]:
        """``ops`` checked as new operations: in range, never watched, no repeats.  Returns them
        and the capacity they need (the largest + 1; 0 for none); growing is the caller's, after
        its other checks, so that a refused batch does not grow the tables either."""
        a = as_int_array("ops", ops)
        top = 0
        if a.size:
            top = int(a.max()) + 1
            if top > L.MAX_CAPACITY or a.min() < 0:
                check_bounds("ops", a, 0, L.MAX_CAPACITY - 1)
            # Ids beyond the table are new: check against a grown copy, which is then dropped
            # (validate_ops marks repeats in the table it is given and clears its marks).
            opt = self.opt if top <= self.opt.shape[0] else L.grow_rows(self.opt, top, 0)
            bad = int(PK.validate_ops(opt, a, 0))
            if bad >= 0:
                op = int(a[bad])
                if opt[op, PK.O_USED]:
                    raise ValueError(f"ops[{bad}]={op} was watched already (an operation is watched once)")
                raise ValueError(f"ops contains the same operation id twice (ops[{bad}]={op})")
        return a, top

    def _known_ops(self, ops: object) -> np.ndarray:
        a = as_int_array("ops", ops)
        bad = int(PK.validate_ops(self.opt, a, 1)) if a.size else -1
        if bad >= 0:
            check_bounds("ops", a, 0, self.opt.shape[0] - 1)
            raise KeyError(f"unknown op id {int(a[bad])} (ops[{bad}] was never watched)")
        return a

    def _key_rows(self, key_ids: object, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Flatten per-operation key rows into (kstart[n+1], kids)."""
        if isinstance(key_ids, np.ndarray) and key_ids.ndim == 2:
            a = as_int_array("key_ids", key_ids.reshape(-1))
            if key_ids.shape[0] != n:
                raise ValueError(f"ops and key_ids differ in length: {n} != {key_ids.shape[0]}")
            if key_ids.shape[1] == 0:
                raise ValueError("key_ids rows must not be empty (Kafka: the watch key list can't be empty)")
            kstart = np.arange(n + 1, dtype=np.int64) * key_ids.shape[1]
        else:
            rows = list(key_ids)  # type: ignore[call-overload]  # any iterable of key rows, not only arrays
            if len(rows) != n:
                raise ValueError(f"ops and key_ids differ in length: {n} != {len(rows)}")
            lens = np.array([len(r) for r in rows], np.int64)
            if lens.size and lens.min() == 0:
                raise ValueError(f"key_ids[{int(np.argmin(lens))}] is empty (Kafka: the watch key list can't be empty)")
            kstart = np.zeros(n + 1, np.int64)
            np.cumsum(lens, out=kstart[1:])
            a = as_int_array("key_ids", [k for r in rows for k in r]) if n else np.zeros(0, np.int64)
        check_bounds("key_ids", a, 0, self.num_keys - 1)
        return kstart, a

    def _room_entries(self, n: int) -> None:
        """The one place watch entries grow: new rows are chained onto the free list."""
        if self.P[PK.P_NWFREE] >= n:
            return
        old = self.we.shape[0]
        new = max(2 * old, old + n - int(self.P[PK.P_NWFREE]), 64)
        we = np.zeros((new, 2), np.int64)
        we[:old] = self.we
        we[old:, PK.W_NEXT] = np.arange(old + 1, new + 1)
        we[new - 1, PK.W_NEXT] = self.P[PK.P_WFREE]
        self.P[PK.P_WFREE] = old
        self.P[PK.P_NWFREE] += new - old
        self.we = we

    def _room_log(self, n: int) -> None:
        need = int(self.P[PK.P_NLOG]) + n
        if need > self.lg.shape[0]:
            self.lg = L.grow_rows(self.lg, need, 0)

    def _take_log(self) -> tuple[np.ndarray, np.ndarray]:
        n = int(self.P[PK.P_NLOG])
        self.P[PK.P_NLOG] = 0
        return self.lg[:n, 0].copy(), self.lg[:n, 1].copy()

    def _check_error(self) -> None:
        if self.P[PK.P_ERROR]:
            raise InvariantError(PK.describe_check(self.P))

    def _after(self) -> None:
        if self.debug:
            self._check_error()  # the kernels not checked where they are called
            from .invariants import check_purgatory
            check_purgatory(self)


def _flags(name: str, values: object, n: int, one_for_all: bool = False) -> np.ndarray:
    """``values`` as ``n`` flags: a bool array (or a list of Python or numpy bools) of length
    ``n``, or with ``one_for_all`` also a single bool.  Strings and numbers are refused (numpy
    would make ``"no"`` true)."""
    v = np.asarray(values)
    if v.dtype.kind != "b":
        raise TypeError(f"{name} must hold bools, got dtype {v.dtype}" if v.ndim else
                        f"{name} must be a bool, got {type(values).__name__} {values!r}")
    if one_for_all and v.ndim == 0:
        return v
    if v.shape != (n,):
        raise ValueError(f"ops and {name} differ in length: {n} != {v.shape[0] if v.ndim == 1 else v.shape}")
    return v


__all__ = ["ArrayPurgatory", "PurgeReport", "RangeError"]
