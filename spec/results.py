"""Which event records the result of which operation, and where in that event the result is.

Every operation of :mod:`.ops` ends with exactly one *result event* of :mod:`.events` (after the
caused events, :data:`.events.CAUSED`).  This module is the one statement of that mapping:

* ``AddTask`` -> ``Add``, field ``exp``: int, the expiration ``now + delay``;
* ``CancelTask`` -> ``Cancel``, field ``pending``: bool, an entry was unlinked;
* ``AdvanceTo`` -> ``Advance``: nothing;
* ``Size`` / ``Watched`` / ``NumDelayed`` -> ``Observe`` (``what`` = the operation's kind), field
  ``value``: int;
* ``Watch`` -> ``TryCompleteElseWatch``, field ``result``: bool, completed inside the call;
* ``Resubmit`` -> ``Resubmit``, field ``result``: bool, completed inside the call;
* ``SetCompletable`` -> ``SetCompletable``: nothing;
* ``CheckAndComplete`` -> ``CheckAndComplete``, field ``completed``: int, operations completed;
* ``CancelForKey`` -> ``CancelForKey``, field ``ops``: ids, the operations removed, in watch order;
* ``ForceComplete`` -> ``ForceComplete``, field ``result``: bool, this call won the completed flag.

The other fields of a result event are the operation's fields of the same name (``task``,
``delay``, ``op``, ``keys``, ``key``, ``value``), the clock reading ``now``, and for ``Observe``
the query's name ``what`` (the operation's ``kind``).  Wire forms (JSON lists, error messages)
belong to the adapter protocol, not here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import events as ev
from . import ops

#: the kinds of result value an operation returns
INT, BOOL, NONE, IDS = "int", "bool", "none", "ids"


@dataclasses.dataclass(frozen=True)
class ResultRule:
    """How one operation's result is recorded."""

    #: the event class that records the result
    event: type[ev.Event]
    #: the field of that event holding the result (None: the operation returns nothing)
    field: str | None
    #: the kind of value: :data:`INT`, :data:`BOOL`, :data:`NONE` or :data:`IDS` (a sequence of ids)
    type: str


#: operation class -> how its result is recorded (the table of the module docstring)
RESULTS: dict[type, ResultRule] = {
    ops.AddTask: ResultRule(ev.Add, "exp", INT),
    ops.CancelTask: ResultRule(ev.Cancel, "pending", BOOL),
    ops.AdvanceTo: ResultRule(ev.Advance, None, NONE),
    ops.Size: ResultRule(ev.Observe, "value", INT),
    ops.Watch: ResultRule(ev.TryCompleteElseWatch, "result", BOOL),
    ops.SetCompletable: ResultRule(ev.SetCompletable, None, NONE),
    ops.CheckAndComplete: ResultRule(ev.CheckAndComplete, "completed", INT),
    ops.CancelForKey: ResultRule(ev.CancelForKey, "ops", IDS),
    ops.ForceComplete: ResultRule(ev.ForceComplete, "result", BOOL),
    ops.Watched: ResultRule(ev.Observe, "value", INT),
    ops.NumDelayed: ResultRule(ev.Observe, "value", INT),
    ops.Resubmit: ResultRule(ev.Resubmit, "result", BOOL),
}
assert set(RESULTS) == set(ops.OPS.values()), "every operation has a result rule"
assert not {r.event for r in RESULTS.values()} & set(ev.CAUSED), "a result event is never a caused one"

#: result event class -> the field holding the result (None: the event records no value)
RESULT_FIELDS: dict[type, str | None] = {r.event: r.field for r in RESULTS.values()}


def rule(op: ops.Op) -> ResultRule:
    """The result rule of ``op``; raises ``TypeError`` for anything that is not an operation."""
    r = RESULTS.get(type(op))
    if r is None:
        raise TypeError(f"not an operation: {op!r}")
    return r


def result_event(op: ops.Op, now: int, result: Any) -> ev.Event:
    """The result event of ``op`` answered at clock reading ``now`` with ``result``."""
    plan = _PLANS.get(type(op))
    if plan is None:
        plan = _plan(op)
    cls, sources, ids = plan
    if ids:
        result = tuple(result)
    return cls(*[now if source == _NOW else result if source == _RESULT else op.kind if source == _KIND
                 else _tupled(getattr(op, name)) for name, source in sources])


def _tupled(v: Any) -> Any:
    return tuple(v) if type(v) is list else v


# Sources of a result event's fields (:func:`result_event`): the clock, the result, the
# operation's kind (Observe: the query's name is the operation's kind), the operation's field of
# the same name.
_NOW, _RESULT, _KIND, _OP = range(4)
#: operation type -> its result event class, (field name, source) for each field of that class in
#: order, and whether the result is a sequence of ids (recorded as a tuple)
_PLANS: dict[type, tuple[Callable[..., ev.Event], tuple[tuple[str, int], ...], bool]] = {}


def _plan(op: ops.Op) -> tuple[Callable[..., ev.Event], tuple[tuple[str, int], ...], bool]:
    """Where each field of ``op``'s result event comes from (once per operation type)."""
    r = rule(op)
    sources = tuple((f.name, _NOW if f.name == "now" else _RESULT if f.name == r.field else _KIND if f.name == "what"
                     else _OP) for f in dataclasses.fields(r.event))
    plan = _PLANS[type(op)] = (r.event, sources, r.type == IDS)
    return plan


def result_of_event(e: ev.Event) -> Any:
    """The result a result event records (None for ``Advance`` / ``SetCompletable``; a tuple of
    ids for ``CancelForKey``).  Raises ``TypeError`` for a caused event, which records no result."""
    if type(e) not in RESULT_FIELDS:
        raise TypeError(f"not a result event: {e!r}")
    field = RESULT_FIELDS[type(e)]
    return None if field is None else getattr(e, field)
