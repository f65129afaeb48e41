"""In-process adapters: the Python interface an implementation offers the runner, and the
adapters for wheelspec's own engines.

An :class:`Adapter` is the in-process twin of protocol v1 (``docs/PROTOCOL.md``): ``hello`` is
the handshake, ``reset`` starts a fresh instance, ``request`` executes one operation of
:mod:`wheelspec.spec.ops` and returns the events it caused and its result.  The subprocess
adapter (:mod:`.subprocess_adapter`) implements the same interface over a pipe, so the runner
cannot tell them apart.

Any object with the shape of :class:`wheelspec.reference.Simulation` (``apply(op)``, ``history``,
``now``) becomes an adapter through :class:`SimulationAdapter`; that is how the reference and the
optimized engine are offered, in-process and (through :mod:`.serve`) as subprocesses.

:func:`resolve` turns an ``--impl`` string into an adapter factory.

An in-process adapter runs in the runner's own thread, so nothing can interrupt it if it loops
forever (compiled code especially): the per-request timeout and the crash handling exist only on
the subprocess path.  Check untrusted or experimental implementations through ``cmd:`` (Python ones
with ``python -m wheelspec.conformance.serve package.module:factory``), or under pytest-timeout.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from wheelspec.spec import ops
from wheelspec.spec.limits import RangeError

from .errors import UserError
from .protocol import Capabilities, Config, Hello, Response, result_of_event


@runtime_checkable
class Adapter(Protocol):
    """What the runner needs of an implementation (in-process form of protocol v1)."""

    def hello(self) -> Hello:
        """Name and capabilities (the handshake)."""
        ...

    def reset(self, config: Config) -> None:
        """Discard all state; a fresh, empty instance whose virtual clock reads ``config.start_ms``."""
        ...

    def request(self, op: ops.Op) -> Response:
        """Execute ``op``; return the events it caused (Fire, Complete, Expire, Purge, in order),
        its result and the clock reading after it, or an error (never raise for a refused op)."""
        ...

    def close(self) -> None:
        ...


def error_of(exc: BaseException) -> tuple[str, str]:
    """Map an exception raised by a Python implementation to a protocol error (type, message)."""
    if isinstance(exc, RangeError):
        return "range", str(exc)
    if isinstance(exc, KeyError):
        return "unknown-id", str(exc.args[0]) if exc.args else "unknown id"
    if isinstance(exc, TypeError):
        return "type", str(exc)
    if isinstance(exc, NotImplementedError):
        return "unsupported", str(exc) or "not implemented"
    if isinstance(exc, ValueError):
        return "invalid", str(exc)
    return "internal", f"{type(exc).__name__}: {exc}"


class SimulationAdapter:
    """Adapts a simulation-shaped engine: ``factory(tick_ms=, wheel_size=, start_ms=,
    purge_interval=)`` returns an object with ``apply(op)``, ``history`` (a list-like of events,
    appended as they happen) and ``now``.

    The events a request caused are the history's new entries minus the last one, which is the
    request's own result event (the ordering rule of :mod:`wheelspec.spec.events`)."""

    def __init__(self, factory: Callable[..., Any], name: str, capabilities: Capabilities,
                 version: str = "") -> None:
        self._factory = factory
        self._hello = Hello(name, capabilities, version)
        self._sim: Any = None

    def hello(self) -> Hello:
        return self._hello

    def reset(self, config: Config) -> None:
        self.close()
        cfg = self._hello.capabilities.effective(config)
        self._sim = self._factory(tick_ms=cfg.tick_ms, wheel_size=cfg.wheel_size, start_ms=cfg.start_ms,
                                  purge_interval=cfg.purge_interval)

    def request(self, op: ops.Op) -> Response:
        sim = self._sim
        if sim is None:
            raise RuntimeError("request before reset")
        if not self._hello.capabilities.supports(op):
            return Response(error=("unsupported", f"{op.kind} is not offered by {self._hello.name}"))
        hist = sim.history
        before = len(hist)
        try:
            sim.apply(op)
        except Exception as exc:  # a refused request is an answer, not a crash
            events = getattr(hist, "events", hist)
            del events[before:]  # whatever a refused request logged is not part of the run
            return Response(now=sim.now, error=error_of(exc))
        new = list(hist[before:]) if not hasattr(hist, "events") else hist.events[before:]
        if not new:
            return Response(now=sim.now, error=("internal", f"{op.kind} recorded no result event"))
        return Response(sim.now, list(new[:-1]), result_of_event(new[-1]))

    def close(self) -> None:
        if self._sim is not None:
            close = getattr(self._sim, "close", None)
            if close is not None:
                close()
            self._sim = None


ALL_CONFIGURABLE = ("tick_ms", "wheel_size", "start_ms", "purge_interval")


def reference_adapter(profile: str = "kafka") -> SimulationAdapter:
    """The reference model (Kafka's SystemTimer and purgatory; ``strict-gt``: Kafka's MockTimer)."""
    from wheelspec import __version__
    from wheelspec.reference import Simulation

    def factory(**cfg: int) -> Any:
        return Simulation(profile=profile, **cfg)

    name = "reference" if profile == "kafka" else f"reference-{profile}"
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile=profile,
                        configurable=ALL_CONFIGURABLE if profile == "kafka" else ("start_ms", "purge_interval"))
    return SimulationAdapter(factory, name, caps, __version__)


def optimized_adapter() -> SimulationAdapter:
    """The numba engine (``wheelspec.optimized.Simulation``); raises UserError if unavailable."""
    from wheelspec import __version__

    try:
        from wheelspec.optimized import Simulation
    except ImportError as e:
        raise UserError(f"implementation 'optimized' is unavailable: wheelspec.optimized.Simulation "
                        f"cannot be imported ({e})") from None
    caps = Capabilities(timer=True, purgatory=True, time="virtual", profile="kafka", configurable=ALL_CONFIGURABLE)
    return SimulationAdapter(Simulation, "optimized", caps, __version__)


def serve_command(engine: str) -> list[str]:
    """The command line that serves one of our engines over protocol v1."""
    return [sys.executable, "-m", "wheelspec.conformance.serve", engine]


#: built-in implementation names accepted by ``--impl``
BUILTINS: dict[str, str] = {
    "reference": "the reference model, in-process (kafka profile)",
    "reference-subprocess": "the reference model behind protocol v1 in a subprocess",
    "reference-mock": "the reference's MockTimer profile (strict-gt), in-process",
    "optimized": "the numba engine, in-process",
    "optimized-subprocess": "the numba engine behind protocol v1 in a subprocess",
}


def resolve(spec: str, *, timeout: float = 10.0, start_timeout: float = 30.0) -> Callable[[], Adapter]:
    """Turn an ``--impl`` value into a zero-argument factory of adapters.

    * a built-in name (:data:`BUILTINS`);
    * ``cmd:COMMAND ARGS...`` (or any value with a space): a subprocess speaking protocol v1;
    * ``package.module:attr``: ``attr()`` returns an :class:`Adapter`, or a simulation-shaped
      object, in which case ``attr`` is taken as a factory accepting the reset configuration."""
    from .subprocess_adapter import SubprocessAdapter

    spec = spec.strip()
    if spec in ("reference", "reference-mock"):
        profile = "kafka" if spec == "reference" else "strict-gt"
        return lambda: reference_adapter(profile)
    if spec == "optimized":
        optimized_adapter()  # fail now, with the reason, if it cannot load
        return optimized_adapter
    if spec in ("reference-subprocess", "optimized-subprocess"):
        engine = spec.split("-")[0]
        if engine == "optimized":
            optimized_adapter()
        return lambda: SubprocessAdapter(serve_command(engine), timeout=timeout, start_timeout=start_timeout,
                                         label=spec)
    if spec.startswith("cmd:") or " " in spec:
        cmd = spec[4:] if spec.startswith("cmd:") else spec
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            raise UserError(f"--impl {spec!r}: cannot split the command line ({e})") from None
        if not argv:
            raise UserError("--impl cmd: needs a command")
        return lambda: SubprocessAdapter(argv, timeout=timeout, start_timeout=start_timeout)
    if ":" in spec:
        mod_name, _, attr = spec.partition(":")
        if os.getcwd() not in sys.path:  # like `python -m`: modules of the current project import
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_name)
        except ImportError as e:
            raise UserError(f"--impl {spec!r}: cannot import module {mod_name!r} ({e})") from None
        factory = getattr(mod, attr, None)
        if factory is None or not callable(factory):
            raise UserError(f"--impl {spec!r}: module {mod_name!r} has no callable {attr!r}")
        return lambda: adapter_from_factory(factory, spec)
    known = ", ".join(BUILTINS)
    raise UserError(f"--impl {spec!r}: not a built-in ({known}), not module:factory, not cmd:COMMAND")


def adapter_from_factory(factory: Callable[..., Any], label: str) -> Adapter:
    """Call a user factory; accept an Adapter, or wrap a simulation-shaped engine."""
    obj = factory()
    if isinstance(obj, Adapter):
        return obj
    if hasattr(obj, "apply") and hasattr(obj, "history"):
        caps = Capabilities(timer=True, purgatory=True, profile=getattr(obj, "profile", "kafka"),
                            configurable=ALL_CONFIGURABLE)
        if hasattr(obj, "close"):
            obj.close()
        return SimulationAdapter(factory, label, caps)
    raise UserError(f"--impl {label!r}: the factory returned {type(obj).__name__}, which is neither an Adapter "
                    f"(hello/reset/request/close) nor simulation-shaped (apply/history/now)")
