"""The observable events: what a history records and what the checker judges.

Every implementation reports these, in the order they happened, each stamped with ``now`` (the
clock reading when it happened).  A request's result is itself an event (``Add``, ``Cancel``,
``TryCompleteElseWatch``, ``CheckAndComplete``, ...), emitted *after* the events the request
caused, so a history reads as a log: callbacks first, then the return value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ._records import Record, decode, registry
from .ops import Key


# ---------------------------------------------------------------- timer ----------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Add(Record):
    """``add`` returned: ``task`` was given expiration ``exp = now + delay``. If it was due at
    once, its :class:`Fire` precedes this event."""

    kind = "add"
    now: int
    task: int
    delay: int
    exp: int


@dataclasses.dataclass(frozen=True, slots=True)
class Fire(Record):
    """The timer handed ``task`` (expiration ``exp``) to its executor, at clock reading ``now``."""

    kind = "fire"
    now: int
    task: int
    exp: int


@dataclasses.dataclass(frozen=True, slots=True)
class Cancel(Record):
    """``cancel`` returned; ``pending`` is true iff it unlinked a scheduled entry."""

    kind = "cancel"
    now: int
    task: int
    pending: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Advance(Record):
    """The clock was moved to ``now`` and ``advanceClock`` processed every due bucket."""

    kind = "advance"
    now: int


@dataclasses.dataclass(frozen=True, slots=True)
class Observe(Record):
    """A query returned: ``what`` is ``size``, ``watched`` or ``num_delayed``."""

    kind = "observe"
    now: int
    what: str
    value: int


# ------------------------------------------------------------ purgatory ----------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Complete(Record):
    """``onComplete`` ran for ``op``. ``via`` says whose ``forceComplete`` won the completed flag:
    ``try`` (tryCompleteElseWatch, first or second attempt), ``check`` (checkAndComplete),
    ``expire`` (the timer), ``force`` (an outside forceComplete)."""

    kind = "complete"
    now: int
    op: int
    via: str


@dataclasses.dataclass(frozen=True, slots=True)
class Expire(Record):
    """``onExpiration`` ran for ``op`` (always right after its ``Complete`` with via=expire)."""

    kind = "expire"
    now: int
    op: int


@dataclasses.dataclass(frozen=True, slots=True)
class TryCompleteElseWatch(Record):
    """``tryCompleteElseWatch`` returned ``result`` for a new operation with timeout ``delay``."""

    kind = "watch"
    now: int
    op: int
    delay: int
    keys: tuple[Key, ...]
    result: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Resubmit(Record):
    """``tryCompleteElseWatch`` returned ``result`` for an operation watched before
    (:class:`wheelspec.spec.ops.Resubmit`); its timeout is the one its first watch gave."""

    kind = "resubmit"
    now: int
    op: int
    keys: tuple[Key, ...]
    result: bool


@dataclasses.dataclass(frozen=True, slots=True)
class TryComplete(Record):
    """The operation's own ``tryComplete()`` returned ``result`` (true iff it completed the
    operation: its ``Complete`` comes right before this event).  A caused event, reported only by
    an implementation that reports these calls (``Simulation(try_complete_events=True)``; the
    checker's property ``try-complete-calls`` then judges when and how often they happen)."""

    kind = "try_complete"
    now: int
    op: int
    result: bool


@dataclasses.dataclass(frozen=True, slots=True)
class SetCompletable(Record):
    kind = "set_completable"
    now: int
    op: int
    value: bool


@dataclasses.dataclass(frozen=True, slots=True)
class CheckAndComplete(Record):
    """``checkAndComplete(key)`` returned ``completed``."""

    kind = "check"
    now: int
    key: Key
    completed: int


@dataclasses.dataclass(frozen=True, slots=True)
class CancelForKey(Record):
    """``cancelForKey(key)`` returned the operations ``ops`` (in watch order)."""

    kind = "cancel_for_key"
    now: int
    key: Key
    ops: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ForceComplete(Record):
    kind = "force_complete"
    now: int
    op: int
    result: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Purge(Record):
    """The purge rule fired after an advance: ``estimated`` was reset to ``delayed`` and
    ``purged`` completed operations were dropped from watch lists."""

    kind = "purge"
    now: int
    estimated: int
    delayed: int
    purged: int


Event = (
    Add | Fire | Cancel | Advance | Observe | Complete | Expire | TryCompleteElseWatch | SetCompletable
    | CheckAndComplete | CancelForKey | ForceComplete | Purge | Resubmit | TryComplete
)
# New kinds go at the end: codes derived from this order (the Z3 layer's) stay stable.
EVENTS: dict[str, type[Event]] = registry(
    Add, Fire, Cancel, Advance, Observe, Complete, Expire, TryCompleteElseWatch, SetCompletable,
    CheckAndComplete, CancelForKey, ForceComplete, Purge, Resubmit, TryComplete,
)
VIAS = ("try", "check", "expire", "force")

#: The *caused* events: what a request makes happen besides its own result (the timer hands a
#: task over, the purgatory completes, expires or purges, an operation's ``tryComplete`` runs).
#: They precede the request's result
#: event, so the caused events since the previous result are that request's *window*; every other
#: event is a request's result (:mod:`.results` says which).  The only place this set is written.
CAUSED: tuple[type[Event], ...] = (Fire, Complete, Expire, Purge, TryComplete)
#: their ``kind`` tags, for code that sees kinds (the adapter protocol, traces)
CAUSED_KINDS: tuple[str, ...] = tuple(c.kind for c in CAUSED)


def event_from_dict(d: Any) -> Event:
    return decode(EVENTS, d, "event")
