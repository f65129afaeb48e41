"""The in-process adapter interface: what an implementation offers the runner, and the wrapper
that makes any simulation-shaped engine an adapter.

An :class:`Adapter` is the in-process twin of the adapter protocol (``docs/guides/PROTOCOL.md``): ``hello``
is the handshake (its capabilities' ``protocol`` says which version the adapter speaks: 1 unless it
says otherwise), ``reset`` starts a fresh instance, ``request`` executes one operation of
:mod:`wheelspec.spec.ops` and returns the events it caused and its result.  The subprocess
adapter (:mod:`.subprocess_adapter`) implements the same interface over a pipe, so the runner
cannot tell them apart.

Any object with the shape of :class:`wheelspec.reference.Simulation` (``apply(op)``, ``history``,
``now``) becomes an adapter through :class:`SimulationAdapter`; that is how the reference and the
optimized engine are offered, in-process and (through :mod:`.serve`) as subprocesses.

:func:`.resolve.resolve` turns an ``--impl`` string into an adapter factory; :mod:`.engines`
offers wheelspec's own engines.

An in-process adapter runs in the runner's own thread, so nothing can interrupt it if it loops
forever (compiled code especially): the per-request timeout and the crash handling exist only on
the subprocess path.  Check untrusted or experimental implementations through ``cmd:`` (Python ones
with ``python -m wheelspec.conformance.adapters.serve package.module:factory``), or under pytest-timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from wheelspec.conformance.adapters.answers import result_of_event
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.spec import ops
from wheelspec.spec.limits import MAX_ID, MAX_TICK_MS, MAX_WHEEL_SIZE, MIN_WHEEL_SIZE, RangeError


@runtime_checkable
class Adapter(Protocol):
    """What the runner needs of an implementation (in-process form of the protocol; the version is
    ``hello().capabilities.protocol``)."""

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


def refusal_of(exc: BaseException, now: int = 0) -> Response:
    """The answer to a request whose Python implementation raised ``exc`` instead of answering:
    the refusal :func:`error_of` maps the exception to.  The one mapping for every Python
    implementation, in-process (the runner, :class:`~.library.LibraryTimerAdapter`) and served
    (:mod:`.serve`), so a ``ValueError`` is ``invalid`` on both paths."""
    kind, message = error_of(exc)
    if kind != "internal":  # error_of names the exception's type only for internal errors
        message = f"{type(exc).__name__}: {message}"
    return Response(now, error=(kind, f"raised {message}"))


def saved_config(caps: Capabilities, config: Config) -> Config:
    """``config`` as a saved scenario (a counterexample) records it: the configuration the
    implementation runs (``caps.effective``: its declared fixed ``tick_ms`` / ``wheel_size``
    instead of the drawn ones), except a declared value outside wheelspec's limits, which no
    scenario file could hold: the drawn value stays there."""
    eff = caps.effective(config)
    tick = eff.tick_ms if 1 <= eff.tick_ms <= MAX_TICK_MS else config.tick_ms
    wheel = eff.wheel_size if MIN_WHEEL_SIZE <= eff.wheel_size <= MAX_WHEEL_SIZE else config.wheel_size
    return Config(tick, wheel, config.start_ms, config.purge_interval)


class SimulationAdapter:
    #: True for wheelspec's own engines (set by :mod:`.engines`): the runner does not hold their
    #: answers to the wire's rules one by one (answers.check_answer), as it does for every other
    #: in-process adapter, a user's engine wrapped in this class included
    trusted_answers = False
    """Adapts a simulation-shaped engine: ``factory(tick_ms=, wheel_size=, start_ms=,
    purge_interval=)`` returns an object with ``apply(op)``, ``history`` (a list-like of events,
    appended as they happen) and ``now``.

    The events a request caused are the history's new entries minus the last one, which is the
    request's own result event (the ordering rule of :mod:`wheelspec.spec.events`).

    The protocol version is ``capabilities.protocol``: under version 1 a cancel of a task never
    added is refused ``unknown-id`` here (the engines answer Kafka's no-op, false, which version 2
    passes on); with ``capabilities.reports_try_complete`` the factory is also given
    ``try_complete_events=True`` (the engines then record each ``tryComplete`` call)."""

    def __init__(self, factory: Callable[..., Any], name: str, capabilities: Capabilities,
                 version: str = "") -> None:
        self._factory = factory
        self._hello = Hello(name, capabilities, version)
        self._sim: Any = None
        self._added: set[int] = set()  # task ids an accepted add named since the reset

    def hello(self) -> Hello:
        return self._hello

    def speak(self, version: int) -> None:
        """Speak protocol ``version`` (at most the declared one): the server side of a hello that
        offers only older versions (:mod:`.serve`).  Below 2 the adapter reports no tryComplete
        calls."""
        caps = self._hello.capabilities
        if not 1 <= version <= caps.protocol:
            raise ValueError(f"{self._hello.name} speaks protocol 1 to {caps.protocol}, not {version}")
        import dataclasses

        caps = dataclasses.replace(caps, protocol=version,
                                   reports_try_complete=caps.reports_try_complete and version >= 2)
        self._hello = dataclasses.replace(self._hello, capabilities=caps)

    @property
    def simulation(self) -> Any:
        """The engine instance of the current run (None before the first ``reset``): the judge
        steers the reference through it (``Simulation.set_purge_point``)."""
        return self._sim

    def reset(self, config: Config) -> None:
        self.close()
        cfg = self._hello.capabilities.effective(config)
        self._added = set()
        extra = {"try_complete_events": True} if self._hello.capabilities.reports_try_complete else {}
        self._sim = self._factory(tick_ms=cfg.tick_ms, wheel_size=cfg.wheel_size, start_ms=cfg.start_ms,
                                  purge_interval=cfg.purge_interval, **extra)

    def request(self, op: ops.Op) -> Response:
        sim = self._sim
        if sim is None:
            raise RuntimeError("request before reset")
        if not self._hello.capabilities.supports(op):
            return Response(error=("unsupported", f"{op.kind} is not offered by {self._hello.name}"))
        if (isinstance(op, ops.CancelTask) and self._hello.capabilities.protocol < 2
                and _never_added(op.task, self._added)):
            # Protocol v1 refuses a cancel of a task never added (unknown-id); the engines
            # themselves answer Kafka's no-op, false (SEMANTICS.md, "Cancel"), as version 2 does.
            return Response(now=sim.now, error=("unknown-id", f"cancel: unknown task id {op.task}"))
        hist = sim.history
        before = len(hist)
        try:
            sim.apply(op)
        except Exception as exc:  # noqa: BLE001 - a refused request is an answer, not a crash
            events = getattr(hist, "events", hist)
            del events[before:]  # whatever a refused request logged is not part of the run
            return Response(now=sim.now, error=error_of(exc))
        if isinstance(op, ops.AddTask):
            self._added.add(op.task)
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


def _never_added(task: object, added: set[int]) -> bool:
    """A cancel's task id is an in-range int that no accepted add named (an out-of-range or
    non-int id is the engine's to refuse: range and type errors come first)."""
    return type(task) is int and 0 <= task <= MAX_ID and task not in added


ALL_CONFIGURABLE = ("tick_ms", "wheel_size", "start_ms", "purge_interval")
