"""The optimized engine under the per-operation API: the same constructor, methods, return values
and recorded events as :class:`wheelspec.reference.Simulation` (profiles ``kafka`` and
``strict-gt``).

The argument checks, the id registries, the executor race's purge point and the recording of each
request's result event are the shared driver's (:class:`wheelspec.spec.simulation.SimulationDriver`,
which the reference uses too); this module is the engine.  One simulation owns an
:class:`~.timer.ArrayTimer` for plain tasks and an :class:`~.purgatory.ArrayPurgatory` (with a timer
of its own), exactly as the reference owns a ``SystemTimer`` and a ``DelayedOperationPurgatory``;
under ``strict-gt`` both timers are :class:`~.mock_timer.ArrayMockTimer` (Kafka's test
``MockTimer``), as in the reference.  Task and operation ids may be any int in ``[0, MAX_ID]``
(:data:`wheelspec.spec.limits.MAX_ID`): they are mapped to dense rows, in order of first use, so
the engine's arrays stay as large as the number of distinct ids, not as the largest id.

This class pays a Python call per operation (about a microsecond or more); for throughput use the
batch APIs of :class:`~.timer.ArrayTimer` and :class:`~.purgatory.ArrayPurgatory` directly.
It is not thread-safe; :class:`~.threadsafe.LockedSimulation` is.
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec import events as ev
from wheelspec.spec.profiles import EXPIRE_BEFORE_PURGE, KAFKA, MOCK_SIZE_QUEUE, behaviour
from wheelspec.spec.simulation import SimulationDriver

from . import layout as L
from .mock_timer import ArrayMockTimer
from .purgatory import ArrayPurgatory, Key
from .purgatory_kernels import VIA_EXPIRE, VIAS
from .timer import ArrayTimer


class _IdMap:
    """External ids (any int in [0, MAX_ID]) <-> dense rows, in order of first use.  ``rows`` is
    the driver's registry (``tasks`` or ``ops``); ``ext`` maps a row back to its id."""

    __slots__ = ("rows", "ext", "n")

    def __init__(self, rows: dict[int, int]) -> None:
        self.rows = rows
        self.ext = np.zeros(64, np.int64)
        self.n = 0

    def new(self, x: int) -> int:
        row = self.rows[x] = self.n
        if row >= self.ext.shape[0]:
            self.ext = L.grow_rows(self.ext, row + 1, 0)
        self.ext[row] = x
        self.n += 1
        return row


class Simulation(SimulationDriver[int, int]):
    """Drop-in for :class:`wheelspec.reference.Simulation` backed by the array engine; a task or
    an operation is a dense row of the engine's arrays."""

    ENGINE = "the optimized engine"
    timer: ArrayTimer | ArrayMockTimer
    purgatory: ArrayPurgatory

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0,
                 purge_interval: int = 1000, profile: str = KAFKA, debug: bool | None = None,
                 mock_size: str = MOCK_SIZE_QUEUE, try_complete_events: bool = False,
                 executor_order: str = EXPIRE_BEFORE_PURGE) -> None:
        super().__init__(tick_ms, wheel_size, start_ms, purge_interval, profile, mock_size, executor_order,
                         try_complete_events)
        start_ms, purge_interval = self.config.start_ms, self.config.purge_interval
        tick_ms, wheel_size = self.tick_ms, self.wheel_size
        if behaviour(self.profile).kafka_class == "MockTimer":
            self.timer = ArrayMockTimer(start_ms, capacity=64, size_rule=self.mock_size, debug=debug)
            ptimer = ArrayMockTimer(start_ms, capacity=64, size_rule=self.mock_size, debug=debug)
            self.purgatory = ArrayPurgatory(tick_ms, wheel_size, start_ms, purge_interval, debug=debug, timer=ptimer)
        else:
            self.timer = ArrayTimer(tick_ms, wheel_size, start_ms, capacity=64, debug=debug)
            self.purgatory = ArrayPurgatory(tick_ms, wheel_size, start_ms, purge_interval, capacity=64, debug=debug)
        self._tasks = _IdMap(self.tasks)
        self._ops = _IdMap(self.ops)

    @property
    def now(self) -> int:
        return self.timer.now

    # -- timer ------------------------------------------------------------------------------------
    def _add(self, task_id: int, delay_ms: int) -> int:
        row = self.tasks.get(task_id)
        if row is None:
            row = self._tasks.new(task_id)
            if row >= self.timer.capacity:
                self.timer.reserve(row + 1)
        exp, fired, fired_exps = self.timer.add(row, delay_ms)
        self._fires(fired, fired_exps)
        return exp

    def _cancel(self, task: int) -> bool:
        return self.timer.cancel(task)

    def _advance(self, time_ms: int, purge_point: int | None) -> None:
        fired, fired_exps = self.timer.advance_to(time_ms)
        self._fires(fired, fired_exps)
        (rows, vias), report = self.purgatory.advance_to(time_ms, purge_point)
        if report is None:
            self._completions((rows, vias))
        else:
            self._completions((rows[:report.after], vias[:report.after]))
            self.history(ev.Purge(time_ms, report.estimated, report.delayed, report.purged))
            self._completions((rows[report.after:], vias[report.after:]))

    # -- purgatory ----------------------------------------------------------------------------------
    def _watch(self, op_id: int, delay_ms: int, keys: tuple[Key, ...], completable: bool,
               completes_on_retry: bool) -> bool:
        row = self._ops.new(op_id)
        kids = [[self.purgatory.key_id(k) for k in keys]]
        results, completions = self.purgatory.watch_many([row], [delay_ms], kids, [completable],
                                                         completes_on_retry=[completes_on_retry])
        if self.try_complete_events:
            plan = [True] if completable else [False, completes_on_retry]
            self._tried([(row, r) for r in plan], completions)
        else:
            self._completions(completions)
        return bool(results[0])

    def _resubmit(self, op: int, keys: tuple[Key, ...]) -> bool:
        kids = [self.purgatory.key_id(k) for k in keys]
        plan = self.purgatory.planned_tries(op) if self.try_complete_events else None
        result, completions = self.purgatory.resubmit(op, kids)
        if plan is not None:
            self._tried([(op, r) for r in plan], completions)
        else:
            self._completions(completions)
        return result

    def _set_completable(self, op: int, value: bool) -> None:
        self.purgatory.set_completable_many([op], value)

    def _check_and_complete(self, key: Key) -> int:
        kid = self.purgatory._keys.get(key)
        if kid is None:
            return 0
        plan = self.purgatory.planned_check(kid) if self.try_complete_events else None
        counts, completions = self.purgatory.check_many([kid])
        if plan is not None:
            self._tried(plan, completions)
        else:
            self._completions(completions)
        return int(counts[0])

    def _cancel_for_key(self, key: Key) -> list[int]:
        kid = self.purgatory._keys.get(key)
        if kid is None:
            return []
        return [int(x) for x in self._ops.ext[self.purgatory.cancel_for_key(kid)]]

    def _force_complete(self, op: int) -> bool:
        won, completions = self.purgatory.force_complete_many([op])
        self._completions(completions)
        return bool(won[0])

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
