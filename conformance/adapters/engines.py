"""wheelspec's own engines (the reference, its MockTimer and strict profiles, the optimized engine) as
adapters, in-process and as the command line that serves them over the subprocess protocol.

They speak protocol version 2 and report every ``tryComplete`` call (``reports_try_complete``),
unless asked for less: the judge's oracle speaks the version of the implementation it is compared
with and reports the calls only if that one does, and the corpus self-consistency test serves the
reference under every profile, version and declaration (:func:`serve_command`'s options).
"""

from __future__ import annotations

import sys
from typing import Any

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, SimulationAdapter
from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSION, PROTOCOL_VERSIONS, Capabilities
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import EITHER_ORDER, EXPIRE_BEFORE_PURGE, KAFKA, STRICT, behaviour, check_executor_order


def reference_adapter(profile: str = KAFKA, executor_order: str = EXPIRE_BEFORE_PURGE, *,
                      protocol: int = PROTOCOL_VERSION, reports_try_complete: bool = True) -> SimulationAdapter:
    """The reference model (Kafka's SystemTimer and purgatory; ``strict-gt``: Kafka's MockTimer;
    ``strict``: the SystemTimer model fixed at tick 1, where a bucket's window start is the
    expiration itself, so Kafka's firing rule is exactly ``now >= exp``).
    ``executor_order``: the executor race's outcomes it declares (``spec.profiles.EXECUTOR_ORDERS``);
    it shows the declared one, or for ``either`` (the race itself) one allowed outcome,
    expire-before-purge.  ``protocol``: the version it speaks; ``reports_try_complete`` (version 2
    only): it reports each ``tryComplete`` call.  A profile or order the reference cannot play
    raises ``ValueError`` naming it."""
    from wheelspec import __version__
    from wheelspec.reference import Simulation

    behaviour(profile)  # refuses an unknown profile
    check_executor_order(executor_order, profile)
    if protocol not in PROTOCOL_VERSIONS:
        raise ValueError(f"unknown protocol version {protocol!r} (known: {', '.join(map(str, PROTOCOL_VERSIONS))})")
    shown = EXPIRE_BEFORE_PURGE if executor_order == EITHER_ORDER else executor_order
    engine_profile = KAFKA if profile == STRICT else profile

    def factory(**cfg: Any) -> Any:  # the config's ints (tick_ms, wheel_size, start_ms, purge_interval)
        return Simulation(profile=engine_profile, executor_order=shown, **cfg)

    # The SystemTimer model is plain "reference"; a profile without a tick (MockTimer) ignores the
    # tick and wheel size, so it cannot be configured with them; the strict one keeps tick 1.
    uses_tick = behaviour(profile).uses_tick
    name = "reference" if uses_tick else f"reference-{profile}"
    configurable: tuple[str, ...] = ALL_CONFIGURABLE
    if profile == STRICT:
        configurable = ("wheel_size", "start_ms", "purge_interval")
    elif not uses_tick:
        configurable = ("start_ms", "purge_interval")
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=profile,
                        tick_ms=1 if profile == STRICT else None, configurable=configurable,
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


def serve_command(engine: str, *, profile: str | None = None, protocol: int | None = None,
                  executor_order: str | None = None, reports_try_complete: bool = True) -> list[str]:
    """The command line that serves one of our engines over the protocol (version 2 when offered).
    The options (the reference engines only: :func:`reference_adapter`'s arguments) make the
    served reference claim ``profile``, speak at most ``protocol``, declare ``executor_order``,
    and, with ``reports_try_complete=False``, not report its ``tryComplete`` calls."""
    opts: list[str] = []
    if profile is not None:
        opts += ["--profile", profile]
    if protocol is not None:
        opts += ["--protocol", str(protocol)]
    if executor_order is not None:
        opts += ["--executor-order", executor_order]
    if not reports_try_complete:
        opts.append("--no-try-complete")
    return [sys.executable, "-m", "wheelspec.conformance.adapters.serve", *opts, engine]
