"""The public Python adapter API: everything needed to put a Python timer or purgatory under
``wheelspec check``, ``replay`` and ``matrix``, from this one module.

    from wheelspec.conformance.adapters.api import LibraryTimerAdapter, STRICT

Guides: ``docs/PYTHON_ADAPTERS.md`` (a timer, with a complete example) and
``docs/PYTHON_PURGATORY_ADAPTERS.md`` (a purgatory).  The wire protocol these objects mirror is
``docs/PROTOCOL.md``; an adapter in another language speaks it over stdin/stdout instead.

================================ ===============================================================
names                            what for
================================ ===============================================================
:class:`Adapter`                 the interface the runner drives: ``hello``, ``reset``,
                                 ``request``, ``close``
:class:`LibraryTimerAdapter`     the base for a callback timer (the user's timer supplies every
                                 judged value through seven hooks)
:class:`SimulationAdapter`       wraps an engine shaped like ``wheelspec.reference.Simulation``
                                 (``apply(op)``, ``history``, ``now``): timers and purgatories
:class:`Hello`,                  the handshake: name, version, and what the implementation
:class:`Capabilities`            offers and claims (profile, ranges, unobservable properties)
:class:`Config`                  what a ``reset`` asks for
:class:`Response`                one answered request: events, result, clock, or an error
``ops``, ``events``              the requests (:mod:`wheelspec.spec.ops`) and the events an
                                 adapter reports (:mod:`wheelspec.spec.events`)
:func:`refused`, :func:`error_of` error answers: a refusal by type, an exception mapped to one
:func:`range_refusal`, ``MAX_*``  wheelspec's ranges (:mod:`wheelspec.spec.limits`)
``KAFKA``, ``STRICT``, ...        the firing profiles an implementation may claim
:func:`unobservable_names`       every name ``Capabilities.unobservable`` accepts
================================ ===============================================================
"""

from __future__ import annotations

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, Adapter, SimulationAdapter, error_of
from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import (
    ERROR_TYPES,
    OWNED_INPUTS,
    PROTOCOL_VERSION,
    RANGES,
    Capabilities,
    Config,
    Hello,
    Response,
)
from wheelspec.spec import events, ops, properties
from wheelspec.spec.errors import AdapterError, RangeError
from wheelspec.spec.limits import (
    MAX_DELAY_MS,
    MAX_ID,
    MAX_PURGE_INTERVAL,
    MAX_TICK_MS,
    MAX_TIME_MS,
    MAX_WHEEL_SIZE,
    MIN_DELAY_MS,
    MIN_WHEEL_SIZE,
    check_delay,
    check_key,
    check_range,
    check_time,
)
from wheelspec.spec.profiles import EXECUTOR_ORDERS, KAFKA, PROFILE_NAMES, STRICT, STRICT_GT

__all__ = [
    "ALL_CONFIGURABLE", "ERROR_TYPES", "EXECUTOR_ORDERS", "KAFKA", "MAX_DELAY_MS", "MAX_ID", "MAX_PURGE_INTERVAL",
    "MAX_TICK_MS", "MAX_TIME_MS", "MAX_WHEEL_SIZE", "MIN_DELAY_MS", "MIN_WHEEL_SIZE", "OWNED_INPUTS",
    "PROFILE_NAMES", "PROTOCOL_VERSION", "RANGES", "STRICT", "STRICT_GT", "Adapter", "AdapterError", "Capabilities",
    "Config", "Hello", "LibraryTimerAdapter", "RangeError", "Response", "SimulationAdapter", "check_delay",
    "check_key", "check_range", "check_time", "error_of", "events", "ops", "range_refusal", "refused",
    "request_ranges", "unobservable_names",
]


def refused(error_type: str, message: str, now: int = 0) -> Response:
    """The answer to a request the implementation refuses: ``error_type`` is one of
    :data:`ERROR_TYPES` (``range``, ``type``, ``unknown-id``, ``invalid``, ``unsupported``,
    ``internal``; ``docs/PROTOCOL.md`` section 3), ``now`` the clock, which a refusal leaves as it
    was."""
    if error_type not in ERROR_TYPES:
        raise ValueError(f"error type {error_type!r} is not one of {', '.join(ERROR_TYPES)}")
    return Response(now, error=(error_type, message))


def request_ranges(op: ops.Op) -> None:
    """Raise :class:`RangeError` naming the field if ``op`` is outside wheelspec's ranges
    (``docs/PROTOCOL.md`` section 4.4: delays, clock readings, task and operation ids, integer
    watch keys); return quietly otherwise."""
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
        request_ranges(op)
    except RangeError as e:
        return refused("range", str(e), now)
    return None


def unobservable_names() -> tuple[str, ...]:
    """Every name ``Capabilities.unobservable`` accepts: the inputs an adapter may own
    (:data:`OWNED_INPUTS`) and the properties the conformance judge reports
    (``spec/properties.py``)."""
    return OWNED_INPUTS + properties.reported_by(properties.RUN)
