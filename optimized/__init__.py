"""The optimized engine: Kafka's timer package and purgatory on numba-compiled arrays, with the
same semantics as :mod:`wheelspec.reference`, event for event.

==============================  ===================================================================
module                          what it is
==============================  ===================================================================
:mod:`.layout`                  the array layout (slots, columns), allocation and growth
:mod:`.timer_kernels`           compiled timer kernels: place, flush/cascade, JDK heap, cancel
:mod:`.timer`                   ``ArrayTimer``: SystemTimer on arrays; batch + per-op API
:mod:`.purgatory_kernels`       compiled purgatory kernels: watch lists, check, purge, cancelForKey
:mod:`.purgatory`               ``ArrayPurgatory``: DelayedOperationPurgatory on arrays
:mod:`.simulation`              ``Simulation``: the reference's per-operation API and events
:mod:`.threadsafe`              ``LockedSimulation``, ``LockedTimer``: one lock around each call
:mod:`.app_timer`               ``WheelTimer``: the application timer (call_later, cancel by handle)
:mod:`.app_stage`               its staging core: ``PyStage``, and ``CStage`` from ``_apphot.c``
:mod:`.invariants`              the structural invariants the debug mode checks after every call
:mod:`.debug`                   whether the debug mode is on (``debug=True`` or ``WHEELSPEC_DEBUG``)
:mod:`.kernelbuild`             one kernel source, two builds: fast, and checked (the debug mode's)
==============================  ===================================================================

Importing this package is cheap (numba is loaded on first use of an engine class), so that code
which only names the engine (adapters, the command line's help) does not pay for the compiler.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "ArrayTimer": ".timer",
    "ArrayPurgatory": ".purgatory",
    "PurgeReport": ".purgatory",
    "Simulation": ".simulation",
    "LockedSimulation": ".threadsafe",
    "LockedTimer": ".threadsafe",
    "WheelTimer": ".app_timer",
    "LockedWheelTimer": ".app_timer",
    "PyWheelTimer": ".app_timer",
    "TimerCall": ".app_timer",
    "check_timer": ".invariants",
    "check_purgatory": ".invariants",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wheelspec.optimized' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
