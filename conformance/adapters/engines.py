"""wheelspec's own engines (the reference, its MockTimer profile, the optimized engine) as adapters,
in-process and as the command line that serves them over the subprocess protocol.

They speak protocol version 2 and report every ``tryComplete`` call (``reports_try_complete``),
unless asked for less: the judge's oracle speaks the version of the implementation it is compared
with and reports the calls only if that one does.
"""

from __future__ import annotations

import sys
from typing import Any

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, SimulationAdapter
from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSION, Capabilities
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import EXPIRE_BEFORE_PURGE, KAFKA, behaviour


def reference_adapter(profile: str = KAFKA, executor_order: str = EXPIRE_BEFORE_PURGE, *,
                      protocol: int = PROTOCOL_VERSION, reports_try_complete: bool = True) -> SimulationAdapter:
    """The reference model (Kafka's SystemTimer and purgatory; ``strict-gt``: Kafka's MockTimer).
    ``executor_order``: the outcome of the executor race it shows (``spec.profiles.EXECUTOR_ORDERS``,
    one of the two concrete orders).  ``protocol``: the version it speaks; ``reports_try_complete``
    (version 2 only): it reports each ``tryComplete`` call."""
    from wheelspec import __version__
    from wheelspec.reference import Simulation

    def factory(**cfg: Any) -> Any:  # the config's ints (tick_ms, wheel_size, start_ms, purge_interval)
        return Simulation(profile=profile, executor_order=executor_order, **cfg)

    # The SystemTimer model is plain "reference"; a profile without a tick (MockTimer) ignores the
    # tick and wheel size, so it cannot be configured with them.
    uses_tick = behaviour(profile).uses_tick
    name = "reference" if uses_tick else f"reference-{profile}"
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=profile,
                        configurable=ALL_CONFIGURABLE if uses_tick else ("start_ms", "purge_interval"),
                        executor_order=executor_order, protocol=protocol,
                        reports_try_complete=reports_try_complete and protocol >= 2)
    return _ours(SimulationAdapter(factory, name, caps, __version__))


def optimized_adapter(executor_order: str = EXPIRE_BEFORE_PURGE) -> SimulationAdapter:
    """The numba engine (``wheelspec.optimized.Simulation``); raises UserError if unavailable.
    ``executor_order``: the outcome of the executor race it shows, as for :func:`reference_adapter`."""
    from wheelspec import __version__

    try:
        from wheelspec.optimized import Simulation
    except ImportError as e:
        raise UserError(f"implementation 'optimized' is unavailable: wheelspec.optimized.Simulation "
                        f"cannot be imported ({e})") from None

    def factory(**cfg: Any) -> Any:  # the config's ints, and try_complete_events from the adapter
        return Simulation(executor_order=executor_order, **cfg)

    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=KAFKA, configurable=ALL_CONFIGURABLE,
                        executor_order=executor_order, protocol=PROTOCOL_VERSION, reports_try_complete=True)
    return _ours(SimulationAdapter(factory, "optimized", caps, __version__))


def _ours(adapter: SimulationAdapter) -> SimulationAdapter:
    # Their answers are built from their own histories, and tests/ hold the engines to the
    # protocol: the runner skips the per-answer check it makes of other in-process adapters.
    adapter.trusted_answers = True
    return adapter


def serve_command(engine: str) -> list[str]:
    """The command line that serves one of our engines over the protocol (version 2 when offered)."""
    return [sys.executable, "-m", "wheelspec.conformance.adapters.serve", engine]
