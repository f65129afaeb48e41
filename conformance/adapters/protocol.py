"""Adapter protocol, versions 1 and 2: the wire format between the runner and an implementation
under test.

The full description, written for someone implementing an adapter in another language, is
``docs/guides/PROTOCOL.md``; this module is its executable form, shared by the runner
(:mod:`.subprocess_adapter`), the server side (:mod:`.serve`) and the in-process adapters.

One JSON object per line in each direction.  The runner sends requests, the adapter answers each
with exactly one response carrying the same ``id``:

* ``{"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]}`` -> ``{"id": 0, "ok": true,
  "protocol": V, "name": ..., "capabilities": {...}}``: the runner offers the versions it speaks
  (``protocol`` stays 1 for adapters that know only version 1 and read that field), the adapter
  answers with the one it uses (:func:`negotiate`);
* ``{"id": n, "type": "reset", "config": {...}}`` -> ``{"id": n, "ok": true}`` (a fresh, empty
  timer / purgatory whose virtual clock reads ``start_ms``)
* ``{"id": n, "type": "op", "op": {<a wheelspec.spec.ops record>}}`` -> ``{"id": n, "ok": true,
  "now": T, "events": [<Fire/Complete/Expire/Purge records caused by the request>], "result": R}``
* ``{"id": n, "type": "bye"}`` -> ``{"id": n, "ok": true}``, then the adapter exits 0.

Version 2 adds (:data:`V2_OPS`, ``docs/guides/PROTOCOL.md`` "Protocol version 2"): the ``resubmit``
request (``tryCompleteElseWatch`` of an existing operation); the capability
``reports_try_complete``, under which the adapter reports each ``tryComplete`` call as a
``try_complete`` event; and a ``cancel`` of a task never added, answered with result false
(Kafka's no-op) where version 1 refuses it ``unknown-id``.

An operation the adapter refuses is answered ``{"id": n, "ok": false, "error": {"type": T,
"message": M}}`` with ``T`` one of :data:`ERROR_TYPES`.  The runner turns the response into the
request's events: the caused events as sent, then the request's own result event (built from the
operation, ``now`` and ``result``), which is the ordering rule of :mod:`wheelspec.spec.events`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from wheelspec.spec import events as ev
from wheelspec.spec import limits, ops, properties
from wheelspec.spec.errors import ProtocolError, UserError
from wheelspec.spec.profiles import (
    EXPIRE_BEFORE_PURGE,
    KAFKA,
    PROFILE_NAMES,
    Granularity,
    behaviour,
    check_executor_order,
    check_granularity,
)
from wheelspec.spec.show import clip, json_short  # (importable from here too: adapters quote values with it)

#: every protocol version this runner speaks, oldest first
PROTOCOL_VERSIONS = (1, 2)
#: the newest of them (what wheelspec's own engines speak)
PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]
#: what a hello request's ``protocol`` field says: the version an adapter that knows only version
#: 1 reads and answers (``protocols`` lists every version offered)
BASE_VERSION = PROTOCOL_VERSIONS[0]
#: operations only version 2 sends
V2_OPS: tuple[type, ...] = (ops.Resubmit,)
#: the caused event kinds only an adapter declaring ``reports_try_complete`` (version 2) reports
TRY_COMPLETE_KIND = ev.TryComplete.kind

#: error types an adapter may answer with (``docs/guides/PROTOCOL.md``, "Errors")
ERROR_TYPES = ("range", "type", "unknown-id", "invalid", "unsupported", "internal")

#: the string values of ``capabilities.ranges``: judged on wheelspec's ranges, or declared to
#: accept any value (an object declares a narrower range instead: :class:`DeclaredRanges`)
RANGES = ("bounded", "unbounded")

#: wheelspec's ranges (``spec/limits.py``), the widest a declaration may give, by the keys of a
#: ``capabilities.ranges`` object: a delay (of an add, or a watch's timeout) and a clock reading
KAFKA_RANGES: dict[str, tuple[int, int]] = {"delay": (limits.MIN_DELAY_MS, limits.MAX_DELAY_MS),
                                            "time": (0, limits.MAX_TIME_MS)}
#: what reports call each key of a declared range
RANGE_WORDS = {"delay": "delays", "time": "clock readings"}


@dataclasses.dataclass(frozen=True)
class DeclaredRanges:
    """``capabilities.ranges`` given as an object, ``{"delay": [lo, hi], "time": [lo, hi]}``: the
    delays (of ``add``, and a watch's timeout) and the clock readings (``start_ms``, ``advance``
    targets) the implementation accepts, inclusive, each inside wheelspec's range (a key left out
    keeps wheelspec's).  Otherwise it is judged as ``bounded``; the requests outside the declared
    range but inside wheelspec's are not sent by the campaign, their refusal in a scenario is not
    a finding, and the declaration itself, if narrower than wheelspec's (Kafka's usable) range,
    is one ``ranges`` finding per report (``docs/guides/PROTOCOL.md``, section 4.4)."""

    delay: tuple[int, int] = KAFKA_RANGES["delay"]
    time: tuple[int, int] = KAFKA_RANGES["time"]

    def to_dict(self) -> dict[str, list[int]]:
        """The wire's object (both keys)."""
        return {"delay": list(self.delay), "time": list(self.time)}

    def narrower(self) -> tuple[str, ...]:
        """The keys whose declared range is narrower than wheelspec's."""
        return tuple(k for k in KAFKA_RANGES if getattr(self, k) != KAFKA_RANGES[k])

    def describe(self, keys: tuple[str, ...] | None = None) -> str:
        """``keys`` (default: the narrower ones) in words: ``delays [1, 4095] and clock readings [0, 99]``."""
        keys = self.narrower() if keys is None else keys
        return " and ".join(f"{RANGE_WORDS[k]} [{getattr(self, k)[0]}, {getattr(self, k)[1]}]" for k in keys)

    def admits(self, key: str, value: int) -> bool:
        """Is ``value`` inside the declared range of ``key`` (``delay`` or ``time``)?"""
        lo, hi = getattr(self, key)
        return lo <= value <= hi

    def clamp(self, key: str, value: int) -> int:
        """``value`` moved into the declared range of ``key``."""
        lo, hi = getattr(self, key)
        return min(max(value, lo), hi)

    @classmethod
    def parse(cls, value: Any, where: str = "capabilities.ranges") -> DeclaredRanges:
        """An object ``{"delay": [lo, hi], "time": [lo, hi]}`` (either key may be left out) read
        and checked; a malformed one raises :class:`ProtocolError` naming the field."""
        if isinstance(value, DeclaredRanges):
            return value
        if not isinstance(value, dict) or not value:
            raise ProtocolError(f"{where} must be one of {', '.join(RANGES)} or an object "
                                f"{{\"delay\": [lo, hi], \"time\": [lo, hi]}}, got {json_short(value)}")
        extra = sorted(set(value) - set(KAFKA_RANGES), key=str)
        if extra:
            raise ProtocolError(f"{where}: unknown key {json_short(extra[0])} (known: {', '.join(KAFKA_RANGES)})")
        out: dict[str, tuple[int, int]] = {}
        for key, pair in value.items():
            lo, hi = KAFKA_RANGES[key]
            ok = (isinstance(pair, list | tuple) and len(pair) == 2
                  and all(type(x) is int for x in pair) and lo <= pair[0] <= pair[1] <= hi)
            if not ok:
                raise ProtocolError(f"{where}.{key} must be [lo, hi], integers with {lo} <= lo <= hi <= {hi}, "
                                    f"got {json_short(pair)}")
            out[key] = (pair[0], pair[1])
        return cls(**out)


def declare_ranges(value: Any) -> str | DeclaredRanges:
    """An in-process adapter's ``ranges`` (``bounded``, ``unbounded``, a :class:`DeclaredRanges` or
    the dict it parses) as :class:`Capabilities` holds it; a malformed one is the user's
    configuration error, one line (:class:`UserError`)."""
    if isinstance(value, DeclaredRanges) or (isinstance(value, str) and value in RANGES):
        return value
    try:
        return DeclaredRanges.parse(value)
    except ProtocolError as e:
        raise UserError(str(e)) from None


#: the capabilities declaring a granularity (:meth:`Capabilities.granularity`)
GRANULARITY_KEYS = ("lateness_ms", "earliness_ms")

#: configuration keys of a ``reset`` request
CONFIG_KEYS = ("tick_ms", "wheel_size", "start_ms", "purge_interval")


@dataclasses.dataclass(frozen=True)
class Config:
    """What a ``reset`` asks for. A wheel adopts ``tick_ms`` / ``wheel_size`` if it lists them as
    configurable; every virtual-time adapter adopts ``start_ms``; a purgatory ``purge_interval``."""

    tick_ms: int = 1
    wheel_size: int = 20
    start_ms: int = 0
    purge_interval: int = 1000

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any, where: str = "config") -> Config:
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be an object, got {type(d).__name__}")
        extra = set(d) - set(CONFIG_KEYS)
        if extra:
            raise ValueError(f"{where}: unknown key {sorted(extra)[0]!r} (known: {', '.join(CONFIG_KEYS)})")
        for k, v in d.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{where}: {k} must be an integer, got {v!r}")
        return cls(**d)


#: inputs an adapter may own instead of the implementation (a library without task ids, a clock
#: the adapter sets): the adapter's refusals of them are not judged (``Capabilities.unobservable``)
OWNED_INPUTS = ("task-ids", "clock")

#: the most requests an adapter may declare it takes in flight (capability ``pipeline``)
MAX_PIPELINE = 1024


def observable_name(name: str) -> bool:
    """Can ``name`` be declared unobservable: a registered property or an owned input?"""
    return name in OWNED_INPUTS or properties.is_registered(name)


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What the adapter said about itself in its hello response."""

    timer: bool = True
    purgatory: bool = False
    time: str = "virtual"
    profile: str = KAFKA
    tick_ms: int | None = None
    wheel_size: int | None = None
    configurable: tuple[str, ...] = ()
    #: what the adapter cannot read from the implementation (registered property names, or
    #: :data:`OWNED_INPUTS`): reported "not judged", never as pass or fail (``docs/guides/ADAPTERS.md``)
    unobservable: tuple[str, ...] = ()
    #: ``bounded``: judged on wheelspec's ranges (an out-of-range request must be refused: property
    #: ``ranges``); ``unbounded``: accepts any value by design, so out-of-range requests are left
    #: out of its campaign schedules and ``ranges`` is not judged; a :class:`DeclaredRanges` (or
    #: the dict it parses): bounded, accepting only the delays and clock readings declared
    #: (``docs/guides/PROTOCOL.md``, section 4.4)
    ranges: str | DeclaredRanges = "bounded"
    #: which orders of an advance's purge and its expirations the implementation may show (the
    #: executor race: :data:`wheelspec.spec.profiles.EXECUTOR_ORDERS`; ``docs/guides/PROTOCOL.md``)
    executor_order: str = EXPIRE_BEFORE_PURGE
    #: protocol 2: the adapter reports every ``tryComplete`` call as a ``try_complete`` event, so
    #: the call pattern (property ``try-complete-calls``) is judged; otherwise it is not judged
    reports_try_complete: bool = False
    #: protocol 2: how many requests the runner may send before reading the first answer (1: one
    #: at a time).  An adapter declaring N > 1 reads its requests in order and answers each in
    #: order however many wait unread (``docs/guides/PROTOCOL.md``, pipelining)
    pipeline: int = 1
    #: a declared granularity (virtual time; :class:`wheelspec.spec.profiles.Granularity`): a task
    #: may fire up to ``lateness_ms`` after the moment its profile says it must have fired by, and
    #: up to ``earliness_ms`` before its profile's earliest time (a timer that rounds deadlines
    #: down); judged as property ``granularity`` (``docs/guides/PROTOCOL.md``, section 2.1).  0: none
    lateness_ms: int = 0
    earliness_ms: int = 0
    #: the protocol version the adapter speaks (its hello's ``protocol``, not a key of the wire's
    #: capabilities object): version 1 is sent no :data:`V2_OPS` and no cancel of a task never added
    protocol: int = BASE_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The wire's ``capabilities`` object (without :attr:`protocol`, which the hello carries)."""
        d = dataclasses.asdict(self)
        d["configurable"] = list(self.configurable)
        d["unobservable"] = list(self.unobservable)
        if isinstance(self.ranges, DeclaredRanges):
            d["ranges"] = self.ranges.to_dict()
        del d["protocol"]
        if self.executor_order == EXPIRE_BEFORE_PURGE:
            del d["executor_order"]  # the default: v1 hellos (and campaign identities) stay as they were
        if not self.reports_try_complete:
            del d["reports_try_complete"]  # likewise
        if self.pipeline == 1:
            del d["pipeline"]  # likewise
        for k in GRANULARITY_KEYS:
            if not d[k]:
                del d[k]  # likewise
        return d

    @classmethod
    def from_dict(cls, d: Any, protocol: int = BASE_VERSION) -> Capabilities:
        """The capabilities object of a hello response that said ``protocol``."""
        if not isinstance(d, dict):
            raise ProtocolError(f"capabilities must be an object, got {json_short(d)}")
        known = {f.name for f in dataclasses.fields(cls)} - {"protocol"}
        extra = set(d) - known
        if extra:
            raise ProtocolError(f"capabilities: unknown key {sorted(extra)[0]!r} (known: {', '.join(sorted(known))})")
        out: dict[str, Any] = {}
        out["protocol"] = protocol
        for k in ("timer", "purgatory", "reports_try_complete"):
            if k in d:
                if not isinstance(d[k], bool):
                    raise ProtocolError(f"capabilities.{k} must be true or false, got {json_short(d[k])}")
                out[k] = d[k]
        if "time" in d:
            if d["time"] not in ("virtual", "real"):
                raise ProtocolError(f"capabilities.time must be \"virtual\" or \"real\", got {json_short(d['time'])}")
            out["time"] = d["time"]
        if "profile" in d:
            if d["profile"] not in PROFILE_NAMES:
                raise ProtocolError(f"capabilities.profile must be one of {', '.join(PROFILE_NAMES)}, "
                                    f"got {json_short(d['profile'])}")
            out["profile"] = d["profile"]
        for k in ("tick_ms", "wheel_size"):
            if d.get(k) is not None:
                v = d[k]
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ProtocolError(f"capabilities.{k} must be a positive integer or null, got {json_short(v)}")
                out[k] = v
        if "configurable" in d:
            c = d["configurable"]
            if not isinstance(c, list) or any(x not in CONFIG_KEYS for x in c):
                raise ProtocolError(f"capabilities.configurable must be a list of {', '.join(CONFIG_KEYS)}, "
                                    f"got {json_short(c)}")
            out["configurable"] = tuple(c)
        if "unobservable" in d:
            u = d["unobservable"]
            if not isinstance(u, list) or any(not isinstance(x, str) or not observable_name(x) for x in u):
                raise ProtocolError("capabilities.unobservable must be a list of property names "
                                    f"(docs/guides/ADAPTERS.md) or {', '.join(OWNED_INPUTS)}, got {json_short(u)}")
            out["unobservable"] = tuple(u)
        if "ranges" in d:
            out["ranges"] = d["ranges"] if d["ranges"] in RANGES else DeclaredRanges.parse(d["ranges"])
        if "executor_order" in d:
            try:
                out["executor_order"] = check_executor_order(d["executor_order"], out.get("profile", KAFKA))
            except ValueError as e:
                raise ProtocolError(f"capabilities.executor_order: {e}") from None
        if "pipeline" in d:
            v = d["pipeline"]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_PIPELINE:
                raise ProtocolError(f"capabilities.pipeline must be an integer in [1, {MAX_PIPELINE}], "
                                    f"got {json_short(v)}")
            out["pipeline"] = v
        for k in GRANULARITY_KEYS:
            if k in d:
                try:
                    out[k] = check_granularity(f"capabilities.{k}", d[k])
                except ValueError as e:
                    raise ProtocolError(str(e)) from None
        if out.get("time") == "real" and any(out.get(k) for k in GRANULARITY_KEYS):
            raise ProtocolError("capabilities.lateness_ms / earliness_ms declare a virtual-time granularity; a "
                                "real-time timer is judged against wheelspec realtime's resolution and --slack")
        caps = cls(**out)
        if not caps.timer and not caps.purgatory:
            raise ProtocolError("capabilities: an adapter must offer a timer, a purgatory or both")
        if caps.pipeline > 1 and protocol < 2:
            raise ProtocolError(f"capabilities.pipeline needs protocol 2; the hello says protocol {protocol}")
        if caps.reports_try_complete and protocol < 2:
            raise ProtocolError("capabilities.reports_try_complete needs protocol 2; "
                                f"the hello says protocol {protocol}")
        return caps

    def __post_init__(self) -> None:
        # An in-process adapter may give its declared range as a dict: read and checked here
        object.__setattr__(self, "ranges", declare_ranges(self.ranges))
        # likewise a declared granularity (an adapter class's lateness_ms / earliness_ms)
        for k in GRANULARITY_KEYS:
            try:
                check_granularity(f"capabilities.{k}", getattr(self, k))
            except ValueError as e:
                raise UserError(str(e)) from None

    def granularity(self) -> Granularity:
        """The declared granularity (``lateness_ms``, ``earliness_ms``) as the checker's profile
        takes it; falsy when none is declared."""
        return Granularity(self.lateness_ms, self.earliness_ms)

    def declared_ranges(self) -> DeclaredRanges | None:
        """The declared range (``ranges`` given as an object), None for ``bounded`` / ``unbounded``."""
        return self.ranges if isinstance(self.ranges, DeclaredRanges) else None

    def effective(self, config: Config) -> Config:
        """The configuration the adapter runs after ``reset(config)``: what it cannot configure
        stays at its declared value."""
        tick = config.tick_ms if "tick_ms" in self.configurable else (self.tick_ms or config.tick_ms)
        wheel = config.wheel_size if "wheel_size" in self.configurable else (self.wheel_size or config.wheel_size)
        return Config(tick, wheel, config.start_ms, config.purge_interval)

    def is_wheel(self) -> bool:
        """A Kafka-faithful wheel: claims a tick-window profile (Kafka's SystemTimer) with a tick and
        wheel size (fixed or configurable)."""
        has_tick = self.tick_ms is not None or "tick_ms" in self.configurable
        has_wheel = self.wheel_size is not None or "wheel_size" in self.configurable
        return self.profile in PROFILE_NAMES and behaviour(self.profile).uses_tick and has_tick and has_wheel

    def supports(self, op: ops.Op) -> bool:
        """Is ``op`` sent to this implementation at all: an operation of what it offers, and of
        its protocol version (a version-1 adapter is never sent :data:`V2_OPS`)."""
        if isinstance(op, V2_OPS) and self.protocol < 2:
            return False
        if isinstance(op, ops.PURGATORY_OPS):
            return self.purgatory
        if isinstance(op, ops.AdvanceTo):
            return True
        return self.timer


@dataclasses.dataclass(frozen=True)
class Hello:
    name: str
    capabilities: Capabilities
    version: str = ""


def hello_request() -> dict[str, Any]:
    """The body of the runner's hello: ``protocol`` is :data:`BASE_VERSION` (what an adapter that
    knows only version 1 reads), ``protocols`` every version offered."""
    return {"type": "hello", "protocol": BASE_VERSION, "protocols": list(PROTOCOL_VERSIONS)}


def offered_versions(request: Any) -> tuple[int, ...]:
    """The versions a hello request offers: its ``protocols`` list, or (a runner that sends none)
    its ``protocol``; ``()`` for a request that offers none recognisably."""
    if not isinstance(request, dict):
        return ()
    offered = request.get("protocols", [request.get("protocol", BASE_VERSION)])
    if not isinstance(offered, list):
        return ()
    return tuple(v for v in offered if plain_int(v))


def negotiate(offered: Any, speaks: int) -> int | None:
    """The version an adapter that speaks versions up to ``speaks`` answers a hello offering
    ``offered`` with: the newest both know, None if there is none."""
    common = [v for v in offered if plain_int(v) and BASE_VERSION <= v <= speaks]
    return max(common) if common else None


def plain_int(v: Any) -> bool:
    """An integer as JSON gives one: an ``int`` that is not a ``bool``."""
    return isinstance(v, int) and not isinstance(v, bool)


@dataclasses.dataclass
class Response:
    """One answered operation: the events it caused, its result and the clock after it, or an
    error ``(type, message)``."""

    now: int = 0
    events: list[ev.Event] = dataclasses.field(default_factory=list)
    result: Any = None
    error: tuple[str, str] | None = None

    def to_wire(self, rid: int) -> dict[str, Any]:
        if self.error is not None:
            return {"id": rid, "ok": False, "error": {"type": self.error[0], "message": self.error[1]}}
        return {"id": rid, "ok": True, "now": self.now, "events": [e.to_dict() for e in self.events],
                "result": self.result}


# ----------------------------------------------------------------- text of a message ----------
# (reading and writing whole lines: :mod:`.lines`)
# ANSI escape sequences (CSI ... final byte, OSC ... BEL/ST, two-byte ESC x), then every other
# control character: none may reach a terminal or an XML report (XML 1.0 forbids most of them).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` made safe for one line of a terminal or an XML report: ANSI escape sequences
    removed, tabs and other control characters (NUL, newline, C1), lone surrogates and the XML
    non-characters replaced by a space, shortened to ``limit`` characters at a word boundary
    (:func:`~wheelspec.spec.show.clip`: never inside a number)."""
    text = _CONTROL.sub(" ", _ANSI.sub("", text))
    return text if limit is None else clip(text, limit)


def protocol_error(field: str, problem: str) -> ProtocolError:
    """A :class:`ProtocolError` about ``field`` of a message (``events[2].now``, ``result``...);
    the field is in the message and in the ``field`` attribute."""
    err = ProtocolError(clean_text(problem))

    err.field = field  # type: ignore[attr-defined]  # read by the fuzz tests and the runner
    return err
