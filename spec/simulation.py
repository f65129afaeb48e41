"""The virtual-time simulation driver: the part of the per-operation API (:mod:`.api`) that does not
depend on the engine.

Three engines offer that API: the reference (Kafka's classes), the optimized engine (numba arrays)
and the step model (generators a scheduler interleaves).  What they share lives here once:

* :func:`check_config`: the constructor checks (the profile an engine models, ``tickMs``,
  ``wheelSize``, ``MockTime``'s start, ``purgeInterval``, the MockTimer size rule, the
  ``try_complete_events`` flag), and :func:`find_op`, the lookup of an operation id, for all three;
* :class:`SimulationDriver`: for the two engines that run one request at a time (the reference
  and the optimized engine), each request's argument checks, the id registries, the executor
  race's purge point, the dispatch of an operation record (:func:`.ops.invoke`) and the recording
  of the request's result event into a :class:`.history.History` after the events the engine
  caused.  An engine subclasses it and supplies the ``_``-prefixed hooks (the engine proper: what
  Kafka's timer and purgatory do with the checked arguments), ``now``, ``timer`` (``Timer.size()``)
  and ``purgatory`` (``watched()``, ``numDelayed()``).

The step model's requests are generators that yield between steps, so it keeps its own methods;
it uses :func:`check_config`, :func:`find_op` and the same :mod:`.limits` checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import ClassVar, Generic, Protocol, TypeVar

from . import events as ev
from . import ops
from .history import History
from .limits import (
    MAX_ID,
    check_delay,
    check_flag,
    check_key,
    check_keys,
    check_purge_interval,
    check_range,
    check_tick,
    check_time,
    check_wheel_size,
)
from .ops import Key
from .profiles import (
    PROFILE_NAMES,
    behaviour,
    check_engine_executor_order,
    check_mock_size_rule,
    check_purge_point,
    purge_point_of,
)

#: the profiles an engine models, each by the Kafka class whose contract it is (``kafka``:
#: SystemTimer, ``strict-gt``: the test MockTimer); ``strict`` has no Kafka class to model
ENGINE_PROFILES: tuple[str, ...] = tuple(p for p in PROFILE_NAMES if behaviour(p).kafka_class is not None)

#: the engine's handle of a task (a ``TimerTask``, an array row) and of an operation
TaskT = TypeVar("TaskT")
OpT = TypeVar("OpT")


@dataclasses.dataclass(frozen=True, slots=True)
class SimulationConfig:
    """The checked constructor parameters every engine shares (:data:`.api.CONSTRUCTOR` and the
    profile's)."""

    tick_ms: int
    wheel_size: int
    start_ms: int
    purge_interval: int
    profile: str
    #: MockTimer's size rule (:data:`.profiles.MOCK_SIZE_RULES`; only a MockTimer profile uses it)
    mock_size: str
    #: record each ``tryComplete`` call as a ``TryComplete`` event (off: histories without them)
    try_complete_events: bool


def check_config(engine: str, tick_ms: object, wheel_size: object, start_ms: object, purge_interval: object,
                 profile: object, mock_size: object, try_complete_events: object) -> SimulationConfig:
    """Check an engine's constructor parameters, in this order: the profile (one of
    :data:`ENGINE_PROFILES`; ``engine`` names the engine in the message), then the rest.  The tick
    and wheel size are checked under every profile: MockTimer ignores them, but a bad value is
    still a bug.  Raises ``ValueError`` for an unknown profile or size rule, ``RangeError`` for a
    number out of range and ``TypeError`` for a non-integer or a flag that is not a bool."""
    if profile not in ENGINE_PROFILES:
        raise ValueError(f"profile must be one of {ENGINE_PROFILES} for {engine}, got {profile!r}")
    return SimulationConfig(
        tick_ms=check_tick(tick_ms), wheel_size=check_wheel_size(wheel_size),
        start_ms=check_time("start_ms", start_ms), purge_interval=check_purge_interval(purge_interval),
        profile=str(profile), mock_size=check_mock_size_rule(mock_size),
        try_complete_events=check_flag("try_complete_events", try_complete_events))


def find_op(registry: Mapping[int, OpT], what: str, op_id: object) -> OpT:
    """The operation ``op_id`` names in ``registry``, for request ``what``: the id is checked before
    the lookup (``True == 1`` would find op 1); raises ``KeyError`` for an op id never watched."""
    op = registry.get(check_range("op id", op_id, 0, MAX_ID))
    if op is None:
        raise KeyError(f"{what}: unknown op id {op_id}")
    return op


class SizedTimer(Protocol):
    """What the driver asks of an engine's timer: Kafka's ``Timer.size()``."""

    def size(self) -> int: ...


class CountingPurgatory(Protocol):
    """What the driver asks of an engine's purgatory: ``watched()`` and ``numDelayed()``."""

    def watched(self) -> int: ...

    def num_delayed(self) -> int: ...


class SimulationDriver(Generic[TaskT, OpT]):
    """The per-operation API (:class:`.api.RecordingSimulation`) over one engine that runs each
    request to its end before the next: every public method checks its arguments (before anything
    changes, so a refused request records nothing), asks the engine, records the request's result
    event after the events the engine recorded while it ran, and returns the result.

    ``executor_order`` (:data:`.profiles.EXECUTOR_ORDERS`) picks one outcome of Kafka's executor
    race (SEMANTICS.md, "The executor race"): the expirations of an advance complete before
    (``expire-before-purge``) or after (``purge-before-expire``) the reaper's purge check;
    :meth:`set_purge_point` puts the next advance's purge check after any number of them.
    """

    #: the engine's name in error messages ("the reference", ...)
    ENGINE: ClassVar[str]
    timer: SizedTimer
    purgatory: CountingPurgatory

    def __init__(self, tick_ms: int, wheel_size: int, start_ms: int, purge_interval: int, profile: str,
                 mock_size: str, executor_order: str, try_complete_events: bool) -> None:
        #: the checked constructor parameters (:func:`check_config`), for the engine to build on
        self.config = config = check_config(self.ENGINE, tick_ms, wheel_size, start_ms, purge_interval, profile,
                                            mock_size, try_complete_events)
        self.profile = config.profile
        #: the executor race's outcome; ``either`` is a judge's notion, not an engine's
        self.executor_order = check_engine_executor_order(executor_order, config.profile)
        #: False under MockTimer, which runs expired operations inline, before the purge check
        self._executor_race = behaviour(config.profile).executor_race
        self._purge_point: int | None = None
        self.tick_ms = config.tick_ms
        self.wheel_size = config.wheel_size
        self.mock_size = config.mock_size
        self.try_complete_events = config.try_complete_events
        #: every event recorded so far, in order
        self.history = History()
        #: the engine's handle of every task id and operation id a request has named
        self.tasks: dict[int, TaskT] = {}
        self.ops: dict[int, OpT] = {}

    def set_purge_point(self, expirations_before: int | None) -> None:
        """The next advance runs its purge check after the first ``expirations_before`` expirations
        it hands to the executor (None: as ``executor_order`` says).  Applies to one advance."""
        self._purge_point = check_purge_point(expirations_before, self.profile)

    @property
    def now(self) -> int:
        """The virtual clock's reading in ms (``MockTime``); the engine's."""
        raise NotImplementedError

    # -- timer ------------------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> int:
        """Schedule (or re-schedule) task ``task_id``; returns its expiration."""
        task_id = check_range("task id", task_id, 0, MAX_ID)
        delay_ms = check_delay(delay_ms)
        exp = self._add(task_id, delay_ms)
        self.history(ev.Add(self.now, task_id, delay_ms, exp))
        return exp

    def cancel(self, task_id: int) -> bool:
        # Checked before the lookup: True == 1 would find task 1.
        task_id = check_range("task id", task_id, 0, MAX_ID)
        task = self.tasks.get(task_id)
        # Kafka's TimerTask.cancel() on a task never added: it has no entry, nothing happens.
        pending = False if task is None else self._cancel(task)
        self.history(ev.Cancel(self.now, task_id, pending))
        return pending

    def advance_to(self, time_ms: int) -> None:
        t = check_time("time", time_ms)
        if t < self.now:
            raise ValueError(f"time_ms={t} is before the clock's current time {self.now}: time never goes back")
        point, self._purge_point = purge_point_of(self.executor_order, self._purge_point), None
        self._advance(t, point if self._executor_race else None)
        self.history(ev.Advance(t))

    def size(self) -> int:
        n = self.timer.size()
        self.history(ev.Observe(self.now, "size", n))
        return n

    # -- purgatory ----------------------------------------------------------------------------------
    def watch(self, op_id: int, delay_ms: int, keys: Sequence[Key], completable: bool = False,
              completes_on_retry: bool = False) -> bool:
        op_id = check_range("op id", op_id, 0, MAX_ID)
        if op_id in self.ops:
            raise ValueError(f"watch: op id {op_id} was used already (an operation is watched once)")
        checked = check_keys(keys)
        delay_ms = check_delay(delay_ms)
        completable = check_flag("completable", completable)
        completes_on_retry = check_flag("completes_on_retry", completes_on_retry)
        result = self._watch(op_id, delay_ms, checked, completable, completes_on_retry)
        self.history(ev.TryCompleteElseWatch(self.now, op_id, delay_ms, checked, result))
        return result

    def resubmit(self, op_id: int, keys: Sequence[Key]) -> bool:
        """``tryCompleteElseWatch`` of operation ``op_id`` again, whatever its state (SEMANTICS.md,
        "Resubmit"): Kafka's purgatory takes the operation object as it is."""
        op = find_op(self.ops, "resubmit", op_id)
        checked = check_keys(keys)
        result = self._resubmit(op, checked)
        self.history(ev.Resubmit(self.now, op_id, checked, result))
        return result


    def set_completable(self, op_id: int, value: bool = True) -> None:
        value = check_flag("value", value)
        self._set_completable(find_op(self.ops, "set_completable", op_id), value)
        self.history(ev.SetCompletable(self.now, op_id, value))

    def check_and_complete(self, key: Key) -> int:
        n = self._check_and_complete(check_key(key))
        self.history(ev.CheckAndComplete(self.now, key, n))
        return n

    def cancel_for_key(self, key: Key) -> list[int]:
        cancelled = self._cancel_for_key(check_key(key))
        self.history(ev.CancelForKey(self.now, key, tuple(cancelled)))
        return cancelled

    def force_complete(self, op_id: int) -> bool:
        result = self._force_complete(find_op(self.ops, "force_complete", op_id))
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

    # -- data-driven ------------------------------------------------------------------------------
    def apply(self, op: ops.Op) -> object:
        """Execute one operation record; returns what the matching method returns."""
        return ops.invoke(self, op)

    def close(self) -> None:
        """Release the engine's threads and executors (Kafka's ``Timer.close()``); none here."""

    # -- the engine: called with checked arguments; each records the events its work causes -------
    def _add(self, task_id: int, delay_ms: int) -> int:
        """``Timer.add`` of a new task ``task_id`` (a re-add replaces the task's entry) and record
        ``tasks[task_id]``; returns the expiration."""
        raise NotImplementedError

    def _cancel(self, task: TaskT) -> bool:
        """``TimerTask.cancel()``; returns True iff the task was pending."""
        raise NotImplementedError

    def _advance(self, time_ms: int, purge_point: int | None) -> None:
        """Set the clock to ``time_ms`` (never earlier than :attr:`now`) and advance the timer, then
        the purgatory, whose purge check runs after its first ``purge_point`` expirations (None:
        after all)."""
        raise NotImplementedError

    def _watch(self, op_id: int, delay_ms: int, keys: tuple[Key, ...], completable: bool,
               completes_on_retry: bool) -> bool:
        """``tryCompleteElseWatch`` of a new operation, recorded as ``ops[op_id]``; returns True iff
        it completed inside the call."""
        raise NotImplementedError

    def _resubmit(self, op: OpT, keys: tuple[Key, ...]) -> bool:
        raise NotImplementedError

    def _set_completable(self, op: OpT, value: bool) -> None:
        raise NotImplementedError

    def _check_and_complete(self, key: Key) -> int:
        raise NotImplementedError

    def _cancel_for_key(self, key: Key) -> list[int]:
        """``cancelForKey``: returns the ids of the operations removed, in watch order."""
        raise NotImplementedError

    def _force_complete(self, op: OpT) -> bool:
        raise NotImplementedError
