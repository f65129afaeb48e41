"""The public Python adapter API: everything needed to put a Python timer or purgatory under
``wheelspec check``, ``replay`` and ``matrix``, from this one module.

    from wheelspec.conformance.adapters.api import LibraryTimerAdapter, STRICT

Guides: ``docs/guides/PYTHON_ADAPTERS.md`` (a timer, with a complete example) and
``docs/guides/PYTHON_PURGATORY_ADAPTERS.md`` (a purgatory).  The wire protocol these objects
mirror is ``docs/guides/PROTOCOL.md``; an adapter in another language speaks it over stdin/stdout
instead.  Everything else stays in its home module (wheelspec's ranges in
:mod:`wheelspec.spec.limits`, the profile names in :mod:`wheelspec.spec.profiles`, the protocol's
constants in :mod:`.protocol`).

================================ ===============================================================
names                            what for
================================ ===============================================================
:class:`Adapter`                 the interface the runner drives: ``hello``, ``reset``,
                                 ``request``, ``close``
:class:`LibraryTimerAdapter`     the base for a callback timer (the user's timer supplies every
                                 judged value through its public extension hooks)
:class:`SimulationAdapter`       wraps an engine shaped like ``wheelspec.reference.Simulation``
                                 (``apply(op)``, ``history``, ``now``): timers and purgatories
:class:`Hello`,                  the handshake: name, version, and what the implementation
:class:`Capabilities`            offers and claims (profile, ranges, unobservable properties)
:class:`Config`                  what a ``reset`` asks for
:class:`Response`                one answered request: events, result, clock, or an error
``ops``, ``events``              the requests (:mod:`wheelspec.spec.ops`) and the events an
                                 adapter reports (:mod:`wheelspec.spec.events`)
:func:`refused`, :func:`error_of` refusals: one by type, an exception mapped to one
:func:`range_refusal`            the ``range`` refusal of a request outside wheelspec's ranges
``KAFKA``, ``STRICT``,           the firing profiles an implementation may claim
``STRICT_GT``
:func:`unobservable_names`       every name ``Capabilities.unobservable`` accepts
================================ ===============================================================
"""

from __future__ import annotations

from wheelspec.conformance.adapters.base import Adapter, SimulationAdapter, error_of
from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import ERROR_TYPES, OWNED_INPUTS, Capabilities, Config, Hello, Response
from wheelspec.spec import events, ops, properties
from wheelspec.spec.errors import RangeError
from wheelspec.spec.limits import MAX_ID, check_delay, check_key, check_range, check_time
from wheelspec.spec.profiles import KAFKA, STRICT, STRICT_GT

__all__ = [
    "KAFKA", "STRICT", "STRICT_GT", "Adapter", "Capabilities", "Config", "Hello", "LibraryTimerAdapter", "Response",
    "SimulationAdapter", "error_of", "events", "ops", "range_refusal", "refused", "unobservable_names",
]


def refused(error_type: str, message: str, now: int = 0) -> Response:
    """The answer to a request the implementation refuses: ``error_type`` is one of
    :data:`~.protocol.ERROR_TYPES` (``range``, ``type``, ``unknown-id``, ``invalid``,
    ``unsupported``, ``internal``; ``docs/guides/PROTOCOL.md`` section 3), ``now`` the clock, which
    a refusal leaves as it was."""
    if error_type not in ERROR_TYPES:
        raise ValueError(f"error type {error_type!r} is not one of {', '.join(ERROR_TYPES)}")
    return Response(now, error=(error_type, message))


def _check_ranges(op: ops.Op) -> None:
    """Raise :class:`RangeError` naming the field if ``op`` is outside wheelspec's ranges
    (``docs/guides/PROTOCOL.md`` section 4.4: delays, clock readings, task and operation ids,
    integer watch keys); return quietly otherwise."""
    if isinstance(op, ops.AddTask | ops.CancelTask):
        check_range("task id", op.task, 0, MAX_ID)
    if isinstance(op, ops.AddTask):
        check_delay(op.delay)
    elif isinstance(op, ops.AdvanceTo):
        check_time("time", op.time)
    elif isinstance(op, ops.Watch | ops.Resubmit | ops.SetCompletable | ops.ForceComplete):
        check_range("op id", op.op, 0, MAX_ID)
    if isinstance(op, ops.Watch):
        check_delay(op.delay)
    if isinstance(op, ops.Watch | ops.Resubmit):
        for k in op.keys:
            if isinstance(k, int) and not isinstance(k, bool):
                check_key(k)
    elif isinstance(op, ops.CheckAndComplete | ops.CancelForKey):
        if isinstance(op.key, int) and not isinstance(op.key, bool):
            check_key(op.key)


def range_refusal(op: ops.Op, now: int = 0) -> Response | None:
    """A ``range`` refusal of ``op`` if it is outside wheelspec's ranges, else None: for an
    implementation that enforces wheelspec's ranges itself (``Capabilities.ranges`` ``bounded``)
    and has no refusal of its own to report."""
    try:
        _check_ranges(op)
    except RangeError as e:
        return refused("range", str(e), now)
    return None


def unobservable_names() -> tuple[str, ...]:
    """Every name ``Capabilities.unobservable`` accepts: the inputs an adapter may own
    (:data:`~.protocol.OWNED_INPUTS`) and the properties the conformance judge reports
    (``spec/properties.py``)."""
    return OWNED_INPUTS + properties.reported_by(properties.RUN)
