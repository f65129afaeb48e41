"""The operations of the semantics, as data.

A scenario, a random campaign and the adapter protocol are all sequences of these records.
Each maps onto one public call of Kafka's timer or purgatory (named in its docstring); the
virtual clock is moved only by :class:`AdvanceTo`.  Task ids and operation ids are
non-negative ints (array friendly); watch keys are str or int.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ._records import Record, decode, fields_of, registry

Key = str | int


@dataclasses.dataclass(frozen=True, slots=True)
class AddTask(Record):
    """``Timer.add(task)`` for a task whose ``delayMs`` is ``delay``. Re-adding a scheduled id
    replaces its entry (Kafka: ``TimerTask.setTimerTaskEntry`` removes the old one)."""

    kind = "add"
    task: int
    delay: int


@dataclasses.dataclass(frozen=True, slots=True)
class CancelTask(Record):
    """``TimerTask.cancel()``.  A task id never added is a task with no entry: a no-op whose
    result is false (SEMANTICS.md, "Cancel")."""

    kind = "cancel"
    task: int


@dataclasses.dataclass(frozen=True, slots=True)
class AdvanceTo(Record):
    """Move the virtual clock to ``time`` (never backwards), then ``advanceClock`` until no bucket
    is due: the timer's and, if there is one, the purgatory's (which then applies its purge rule)."""

    kind = "advance"
    time: int


@dataclasses.dataclass(frozen=True, slots=True)
class Size(Record):
    """``Timer.size()``."""

    kind = "size"


@dataclasses.dataclass(frozen=True, slots=True)
class Watch(Record):
    """``DelayedOperationPurgatory.tryCompleteElseWatch(op, keys)`` for a new operation with
    timeout ``delay`` whose ``tryComplete`` succeeds iff it is completable (Kafka's test
    MockDelayedOperation).

    ``completes_on_retry``: the operation's condition is false when ``tryComplete`` first looks
    and true from then on: the satisfying event arrives while the operation is being watched
    (the window of Kafka's lost-wakeup bugs, KAFKA-1952).  Kafka's second ``tryComplete``, made
    after watching every key, completes it inside the call, which then returns true.  This is how
    a one-request-at-a-time history expresses that race."""

    kind = "watch"
    op: int
    delay: int
    keys: tuple[Key, ...]
    completable: bool = False
    completes_on_retry: bool = dataclasses.field(default=False, metadata={"omit_default": True})


@dataclasses.dataclass(frozen=True, slots=True)
class Resubmit(Record):
    """``DelayedOperationPurgatory.tryCompleteElseWatch(op, keys)`` again, for an operation that
    an earlier :class:`Watch` made, in whatever state it is now (watched, completed, expired,
    cancelled for a key).  Kafka does not refuse it; what follows is SEMANTICS.md, "Resubmit":
    the two ``tryComplete`` calls as for a new operation; a completed operation is not watched
    again (current Kafka) and not re-timed, but still counted in ``estimated``; an uncompleted
    one is appended to the keys' lists again and re-timed from now with its own timeout (its
    ``delayMs`` is final), the new timer entry replacing the old."""

    kind = "resubmit"
    op: int
    keys: tuple[Key, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class SetCompletable(Record):
    """Make ``op``'s ``tryComplete`` succeed (or fail) from now on; completes nothing by itself."""

    kind = "set_completable"
    op: int
    value: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class CheckAndComplete(Record):
    """``DelayedOperationPurgatory.checkAndComplete(key)``."""

    kind = "check"
    key: Key


@dataclasses.dataclass(frozen=True, slots=True)
class CancelForKey(Record):
    """``DelayedOperationPurgatory.cancelForKey(key)``."""

    kind = "cancel_for_key"
    key: Key


@dataclasses.dataclass(frozen=True, slots=True)
class ForceComplete(Record):
    """``DelayedOperation.forceComplete()`` called from outside the purgatory."""

    kind = "force_complete"
    op: int


@dataclasses.dataclass(frozen=True, slots=True)
class Watched(Record):
    """``DelayedOperationPurgatory.watched()``."""

    kind = "watched"


@dataclasses.dataclass(frozen=True, slots=True)
class NumDelayed(Record):
    """``DelayedOperationPurgatory.numDelayed()``."""

    kind = "num_delayed"


Op = (
    AddTask | CancelTask | AdvanceTo | Size | Watch | SetCompletable | CheckAndComplete
    | CancelForKey | ForceComplete | Watched | NumDelayed | Resubmit
)
TIMER_OPS = (AddTask, CancelTask, AdvanceTo, Size)
PURGATORY_OPS = (Watch, SetCompletable, CheckAndComplete, CancelForKey, ForceComplete, Watched, NumDelayed,
                 Resubmit)
OPS: dict[str, type[Op]] = registry(*TIMER_OPS, *PURGATORY_OPS)


def op_from_dict(d: Any) -> Op:
    return decode(OPS, d, "operation")


#: Each operation record names one method of the per-operation API that every implementation
#: offers (``reference.Simulation``, ``optimized.Simulation``, the step model); the record's
#: fields are that method's arguments, in order.
METHODS: dict[type, str] = {
    AddTask: "add", CancelTask: "cancel", AdvanceTo: "advance_to", Size: "size",
    Watch: "watch", SetCompletable: "set_completable", CheckAndComplete: "check_and_complete",
    CancelForKey: "cancel_for_key", ForceComplete: "force_complete", Watched: "watched",
    NumDelayed: "num_delayed", Resubmit: "resubmit",
}


def invoke(target: Any, op: Op, *leading: Any) -> Any:
    """Call the method of ``target`` that ``op`` names, with ``leading`` arguments (for example a
    thread context) before the record's fields; returns what the method returns."""
    t = type(op)
    method = METHODS.get(t)
    if method is None:
        raise TypeError(f"not an operation: {op!r}")
    names = fields_of(t).names
    return getattr(target, method)(*leading, *[getattr(op, n) for n in names])

