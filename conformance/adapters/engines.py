"""wheelspec's own engines (the reference, its MockTimer profile, the optimized engine) as adapters,
in-process and as the command line that serves them over the subprocess protocol.
"""

from __future__ import annotations

import sys
from typing import Any

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, SimulationAdapter
from wheelspec.conformance.adapters.protocol import Capabilities
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import KAFKA, behaviour


def reference_adapter(profile: str = KAFKA) -> SimulationAdapter:
    """The reference model (Kafka's SystemTimer and purgatory; ``strict-gt``: Kafka's MockTimer)."""
    from wheelspec import __version__
    from wheelspec.reference import Simulation

    def factory(**cfg: Any) -> Any:  # the config's ints (tick_ms, wheel_size, start_ms, purge_interval)
        return Simulation(profile=profile, **cfg)

    # The SystemTimer model is plain "reference"; a profile without a tick (MockTimer) ignores the
    # tick and wheel size, so it cannot be configured with them.
    uses_tick = behaviour(profile).uses_tick
    name = "reference" if uses_tick else f"reference-{profile}"
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=profile,
                        configurable=ALL_CONFIGURABLE if uses_tick else ("start_ms", "purge_interval"))
    return SimulationAdapter(factory, name, caps, __version__)


def optimized_adapter() -> SimulationAdapter:
    """The numba engine (``wheelspec.optimized.Simulation``); raises UserError if unavailable."""
    from wheelspec import __version__

    try:
        from wheelspec.optimized import Simulation
    except ImportError as e:
        raise UserError(f"implementation 'optimized' is unavailable: wheelspec.optimized.Simulation "
                        f"cannot be imported ({e})") from None
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=KAFKA, configurable=ALL_CONFIGURABLE)
    return SimulationAdapter(Simulation, "optimized", caps, __version__)


def serve_command(engine: str) -> list[str]:
    """The command line that serves one of our engines over protocol v1."""
    return [sys.executable, "-m", "wheelspec.conformance.adapters.serve", engine]
