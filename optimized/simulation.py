"""The per-operation API of the optimized engine: the same constructor, methods, return values and
recorded events as :class:`wheelspec.reference.Simulation` (profiles ``kafka`` and ``strict-gt``).

One simulation owns a manual clock, an :class:`~.timer.ArrayTimer` for plain tasks and an
:class:`~.purgatory.ArrayPurgatory` (with a timer of its own), exactly as the reference owns a
``SystemTimer`` and a ``DelayedOperationPurgatory``; under ``strict-gt`` both timers are
:class:`~.mock_timer.ArrayMockTimer` (Kafka's test ``MockTimer``), as in the reference.  Task and
operation ids may be any int in ``[0, MAX_ID]`` (:data:`wheelspec.spec.limits.MAX_ID`): they are
mapped to dense rows by a dict here, so the engine's arrays stay as large as the number of
distinct ids, not as the largest id.

Ids and flags are checked as the reference checks them, before any lookup or change: an id is an
int in ``[0, MAX_ID]`` (a bool is not: ``True`` would find id 1 in the dict), a flag a bool.

``executor_order`` and :meth:`Simulation.set_purge_point` pick an outcome of Kafka's executor race
as in the reference (SEMANTICS.md, "The executor race"): the purgatory runs the first ``k`` of an
advance's expirations, then its purge check, then the rest, and the history records them in that
order.

This class pays a Python call per operation (about a microsecond or more); for throughput use the
batch APIs of :class:`~.timer.ArrayTimer` and :class:`~.purgatory.ArrayPurgatory` directly.
It is not thread-safe; :class:`~.threadsafe.LockedSimulation` is.
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.history import History
from wheelspec.spec.limits import (
    MAX_ID,
    check_delay,
    check_flag,
    check_key,
    check_keys,
    check_range,
    check_tick,
    check_time,
    check_wheel_size,
)
from wheelspec.spec.profiles import (
    EXPIRE_BEFORE_PURGE,
    KAFKA,
    MOCK_SIZE_QUEUE,
    PROFILE_NAMES,
    STRICT_GT,
    behaviour,
    check_engine_executor_order,
    check_mock_size_rule,
    check_purge_point,
    purge_point_of,
)

from . import layout as L
from .mock_timer import ArrayMockTimer
from .purgatory import ArrayPurgatory, Key
from .purgatory_kernels import VIA_EXPIRE, VIAS
from .timer import ArrayTimer

#: the profiles the engine implements, each by the Kafka class whose contract it is
PROFILES = (KAFKA, STRICT_GT)


class _IdMap:
    """External ids (any int in [0, MAX_ID]) <-> dense rows, in order of first use."""

    __slots__ = ("rows", "ext", "n")

    def __init__(self) -> None:
        self.rows: dict[int, int] = {}
        self.ext = np.zeros(64, np.int64)
        self.n = 0

    def get(self, x: int) -> int | None:
        return self.rows.get(x)

    def new(self, x: int) -> int:
        row = self.rows[x] = self.n
        if row >= self.ext.shape[0]:
            self.ext = L.grow_rows(self.ext, row + 1, 0)
        self.ext[row] = x
        self.n += 1
        return row


class Simulation:
    """Drop-in for :class:`wheelspec.reference.Simulation` backed by the array engine."""

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 purge_interval: int = 1000, profile: str = KAFKA, debug: bool | None = None,
                 mock_size: str = MOCK_SIZE_QUEUE, try_complete_events: bool = False,
                 executor_order: str = EXPIRE_BEFORE_PURGE) -> None:
        if profile not in PROFILES and profile in PROFILE_NAMES and behaviour(profile).kafka_class is not None:
            # another Kafka class's contract: the reference models it
            raise NotImplementedError(f"the optimized engine implements profiles {PROFILES} only; "
                                      f"use wheelspec.reference.Simulation for {profile!r} "
                                      f"({behaviour(profile).kafka_class})")
        if profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES} for the optimized engine, got {profile!r}")
        self.profile = profile
        #: the executor race's outcome, as in the reference (SEMANTICS.md; ``set_purge_point``)
        self.executor_order = check_engine_executor_order(executor_order, profile)
        self._purge_point: int | None = None
        # Validated for every profile, as the reference does (MockTimer ignores them).
        self.tick_ms = check_tick(tick_ms)
        self.wheel_size = check_wheel_size(wheel_size)
        self.mock_size = check_mock_size_rule(mock_size)
        #: record each tryComplete call as a TryComplete event, as the reference does (computed
        #: here from the state before each call; the batch kernels are not involved)
        self.try_complete_events = check_flag("try_complete_events", try_complete_events)
        self.history = History()
        self.timer: ArrayTimer | ArrayMockTimer
        if behaviour(profile).kafka_class == "MockTimer":
            self.timer = ArrayMockTimer(start_ms, capacity=64, size_rule=mock_size, debug=debug)
            ptimer = ArrayMockTimer(start_ms, capacity=64, size_rule=mock_size, debug=debug)
            self.purgatory = ArrayPurgatory(tick_ms, wheel_size, start_ms, purge_interval, debug=debug, timer=ptimer)
        else:
            self.timer = ArrayTimer(tick_ms, wheel_size, start_ms, capacity=64, debug=debug)
            self.purgatory = ArrayPurgatory(tick_ms, wheel_size, start_ms, purge_interval, capacity=64, debug=debug)
        self._tasks = _IdMap()
        self._ops = _IdMap()

    def set_purge_point(self, expirations_before: int | None) -> None:
        """The next advance runs its purge check after the first ``expirations_before`` expirations
        of the purgatory's timer (None: as ``executor_order`` says), as the reference's method."""
        self._purge_point = check_purge_point(expirations_before, self.profile)

    @property
    def now(self) -> int:
        return self.timer.now

    # -- timer ------------------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> int:
        """Schedule (or re-schedule) task ``task_id``; returns its expiration."""
        task_id = check_range("task id", task_id, 0, MAX_ID)
        delay_ms = check_delay(delay_ms)
        row = self._tasks.get(task_id)
        if row is None:
            row = self._tasks.new(task_id)
            if row >= self.timer.capacity:
                self.timer.reserve(row + 1)
        exp, fired, fired_exps = self.timer.add(row, delay_ms)
        self._fires(fired, fired_exps)
        self.history(ev.Add(self.now, task_id, delay_ms, exp))
        return exp

    def cancel(self, task_id: int) -> bool:
        task_id = check_range("task id", task_id, 0, MAX_ID)
        row = self._tasks.get(task_id)
        if row is None:
            # Kafka's TimerTask.cancel() on a task never added: no entry, nothing happens.
            self.history(ev.Cancel(self.now, task_id, False))
            return False
        pending = self.timer.cancel(row)
        self.history(ev.Cancel(self.now, task_id, pending))
        return pending

    def advance_to(self, time_ms: int) -> None:
        t = check_time("time", time_ms)
        if t < self.now:
            raise ValueError(f"time_ms={t} is before the clock's current time {self.now}: time never goes back")
        fired, fired_exps = self.timer.advance_to(t)
        self._fires(fired, fired_exps)
        point, self._purge_point = purge_point_of(self.executor_order, self._purge_point), None
        if not behaviour(self.profile).executor_race:
            point = None  # MockTimer runs expired operations inline, before the check
        (rows, vias), report = self.purgatory.advance_to(t, point)
        if report is None:
            self._completions((rows, vias))
        else:
            self._completions((rows[:report.after], vias[:report.after]))
            self.history(ev.Purge(t, report.estimated, report.delayed, report.purged))
            self._completions((rows[report.after:], vias[report.after:]))
        self.history(ev.Advance(t))

    def size(self) -> int:
        n = self.timer.size()
        self.history(ev.Observe(self.now, "size", n))
        return n

    # -- purgatory ----------------------------------------------------------------------------------
    def watch(self, op_id: int, delay_ms: int, keys: list[Key] | tuple[Key, ...], completable: bool = False,
              completes_on_retry: bool = False) -> bool:
        op_id = check_range("op id", op_id, 0, MAX_ID)
        if self._ops.get(op_id) is not None:
            raise ValueError(f"watch: op id {op_id} was used already (an operation is watched once)")
        keys = check_keys(keys)
        delay_ms = check_delay(delay_ms)
        completable = check_flag("completable", completable)
        completes_on_retry = check_flag("completes_on_retry", completes_on_retry)
        row = self._ops.new(op_id)
        kids = [[self.purgatory.key_id(k) for k in keys]]
        results, completions = self.purgatory.watch_many([row], [delay_ms], kids, [completable],
                                                         completes_on_retry=[completes_on_retry])
        if self.try_complete_events:
            plan = [True] if completable else [False, completes_on_retry]
            self._tried([(row, r) for r in plan], completions)
        else:
            self._completions(completions)
        result = bool(results[0])
        self.history(ev.TryCompleteElseWatch(self.now, op_id, delay_ms, keys, result))
        return result

    def resubmit(self, op_id: int, keys: list[Key] | tuple[Key, ...]) -> bool:
        """``tryCompleteElseWatch`` of operation ``op_id`` again, whatever its state (as the
        reference's ``resubmit``; SEMANTICS.md, "Resubmit")."""
        row = self._op("resubmit", op_id)
        keys = check_keys(keys)
        kids = [self.purgatory.key_id(k) for k in keys]
        plan = self.purgatory.planned_tries(row) if self.try_complete_events else None
        result, completions = self.purgatory.resubmit(row, kids)
        if plan is not None:
            self._tried([(row, r) for r in plan], completions)
        else:
            self._completions(completions)
        self.history(ev.Resubmit(self.now, op_id, keys, result))
        return result

    def _op(self, what: str, op_id: int) -> int:
        row = self._ops.get(check_range("op id", op_id, 0, MAX_ID))
        if row is None:
            raise KeyError(f"{what}: unknown op id {op_id}")
        return row

    def set_completable(self, op_id: int, value: bool = True) -> None:
        value = check_flag("value", value)
        row = self._op("set_completable", op_id)
        self.purgatory.set_completable_many([row], value)
        self.history(ev.SetCompletable(self.now, op_id, value))

    def check_and_complete(self, key: Key) -> int:
        check_key(key)
        kid = self.purgatory._keys.get(key)
        n = 0
        if kid is not None:
            plan = self.purgatory.planned_check(kid) if self.try_complete_events else None
            counts, completions = self.purgatory.check_many([kid])
            if plan is not None:
                self._tried(plan, completions)
            else:
                self._completions(completions)
            n = int(counts[0])
        self.history(ev.CheckAndComplete(self.now, key, n))
        return n

    def cancel_for_key(self, key: Key) -> list[int]:
        check_key(key)
        kid = self.purgatory._keys.get(key)
        cancelled: list[int] = []
        if kid is not None:
            cancelled = [int(x) for x in self._ops.ext[self.purgatory.cancel_for_key(kid)]]
        self.history(ev.CancelForKey(self.now, key, tuple(cancelled)))
        return cancelled

    def force_complete(self, op_id: int) -> bool:
        row = self._op("force_complete", op_id)
        won, completions = self.purgatory.force_complete_many([row])
        self._completions(completions)
        result = bool(won[0])
        self.history(ev.ForceComplete(self.now, op_id, result))
        return result

    def watched(self) -> int:
        n = self.purgatory.watched()
        self.history(ev.Observe(self.now, "watched", n))
        return n

    def num_delayed(self) -> int:
        n = self.purgatory.num_delayed()
        self.history(ev.Observe(self.now, "num_delayed", n))
        return n

    # -- events -------------------------------------------------------------------------------------
    def _fires(self, rows: np.ndarray, exps: np.ndarray) -> None:
        if rows.shape[0]:
            now = self.now
            ext = self._tasks.ext[rows]
            for task, exp in zip(ext.tolist(), exps.tolist()):
                self.history(ev.Fire(now, task, exp))

    def _completions(self, completions: tuple[np.ndarray, np.ndarray]) -> None:
        rows, vias = completions
        if rows.shape[0]:
            now = self.now
            for op, via in zip(self._ops.ext[rows].tolist(), vias.tolist()):
                self.history(ev.Complete(now, op, VIAS[via]))
                if via == VIA_EXPIRE:
                    self.history(ev.Expire(now, op))  # onExpiration runs after onComplete

    def _tried(self, plan: list[tuple[int, bool]], completions: tuple[np.ndarray, np.ndarray]) -> None:
        """Events of a request whose ``tryComplete`` calls are ``plan`` ((row, result) in call
        order): each winning call's ``Complete`` (the next of ``completions``), then its
        ``TryComplete``; the completions left over (a timeout run inside the call) follow."""
        rows, vias = completions
        k = 0
        now = self.now
        for row, won in plan:
            op = int(self._ops.ext[row])
            if won:
                if k >= rows.shape[0] or int(rows[k]) != row:
                    raise AssertionError(f"op {op}: the kernel's completions {rows.tolist()} do not match the "
                                         "planned tryComplete calls")
                self.history(ev.Complete(now, op, VIAS[int(vias[k])]))
                k += 1
            self.history(ev.TryComplete(now, op, won))
        self._completions((rows[k:], vias[k:]))

    # -- data-driven ------------------------------------------------------------------------------
    def apply(self, op: ops.Op) -> object:
        """Execute one operation record; returns what the matching method returns."""
        return ops.invoke(self, op)

    def close(self) -> None:
        """Nothing to release (no threads); kept for the reference's shape."""
