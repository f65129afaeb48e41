"""Adapter protocol v1: the wire format between the runner and an implementation under test.

The full description, written for someone implementing an adapter in another language, is
``docs/PROTOCOL.md``; this module is its executable form, shared by the runner
(:mod:`.subprocess_adapter`), the server side (:mod:`.serve`) and the in-process adapters.

One JSON object per line in each direction.  The runner sends requests, the adapter answers each
with exactly one response carrying the same ``id``:

* ``{"id": 0, "type": "hello", "protocol": 1}`` -> ``{"id": 0, "ok": true, "protocol": 1,
  "name": ..., "capabilities": {...}}``
* ``{"id": n, "type": "reset", "config": {...}}`` -> ``{"id": n, "ok": true}`` (a fresh, empty
  timer / purgatory whose virtual clock reads ``start_ms``)
* ``{"id": n, "type": "op", "op": {<a wheelspec.spec.ops record>}}`` -> ``{"id": n, "ok": true,
  "now": T, "events": [<Fire/Complete/Expire/Purge records caused by the request>], "result": R}``
* ``{"id": n, "type": "bye"}`` -> ``{"id": n, "ok": true}``, then the adapter exits 0.

An operation the adapter refuses is answered ``{"id": n, "ok": false, "error": {"type": T,
"message": M}}`` with ``T`` one of :data:`ERROR_TYPES`.  The runner turns the response into the
request's events: the caused events as sent, then the request's own result event (built from the
operation, ``now`` and ``result``), which is the ordering rule of :mod:`wheelspec.spec.events`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from wheelspec.spec import events as ev
from wheelspec.spec import ops, results
from wheelspec.spec.errors import ProtocolError
from wheelspec.spec.events import CAUSED_KINDS
from wheelspec.spec.profiles import KAFKA, PROFILE_NAMES, behaviour
from wheelspec.spec.show import json_short  # (importable from here too: adapters quote values with it)

PROTOCOL_VERSION = 1

#: error types an adapter may answer with (``docs/PROTOCOL.md``, "Errors")
ERROR_TYPES = ("range", "type", "unknown-id", "invalid", "unsupported", "internal")

# CAUSED_KINDS (imported above from wheelspec.spec.events, and still importable from here): the
# event kinds an adapter reports as caused by a request; the result event is built here.

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

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["configurable"] = list(self.configurable)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Capabilities:
        if not isinstance(d, dict):
            raise ProtocolError(f"capabilities must be an object, got {json_short(d)}")
        known = {f.name for f in dataclasses.fields(cls)}
        extra = set(d) - known
        if extra:
            raise ProtocolError(f"capabilities: unknown key {sorted(extra)[0]!r} (known: {', '.join(sorted(known))})")
        out: dict[str, Any] = {}
        for k in ("timer", "purgatory"):
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
        caps = cls(**out)
        if not caps.timer and not caps.purgatory:
            raise ProtocolError("capabilities: an adapter must offer a timer, a purgatory or both")
        return caps

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


# ----------------------------------------------------------------------- results --------------
def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_result(op: ops.Op, result: Any) -> Any:
    """Validate the wire ``result`` field for ``op`` against the kind of value the operation returns
    (:data:`wheelspec.spec.results.RESULTS`); returns it normalised (a list of ids stays a list)."""
    kind = results.rule(op).type
    if kind == results.INT and not _int(result):
        raise ProtocolError(f"result of {op.kind!r} must be an integer, got {json_short(result)}")
    if kind == results.BOOL and not isinstance(result, bool):
        raise ProtocolError(f"result of {op.kind!r} must be true or false, got {json_short(result)}")
    if kind == results.NONE and result is not None:
        raise ProtocolError(f"result of {op.kind!r} must be null, got {json_short(result)}")
    if kind == results.IDS:
        if not isinstance(result, list | tuple) or not all(_int(x) for x in result):
            raise ProtocolError(f"result of {op.kind!r} must be a list of op ids, got {json_short(result)}")
        return list(result)
    return result


def result_event(op: ops.Op, now: int, result: Any) -> ev.Event:
    """The request's own result event (last in its events), from the operation and its result
    (the mapping is :func:`wheelspec.spec.results.result_event`)."""
    return results.result_event(op, now, result)


def result_of_event(e: ev.Event) -> Any:
    """The wire ``result`` for a result event (inverse of :func:`result_event`): the value
    :func:`wheelspec.spec.results.result_of_event` reads, a list of ids as a JSON list."""
    v = results.result_of_event(e)
    return list(v) if isinstance(v, tuple) else v


def decode_response(msg: Any, op: ops.Op) -> Response:
    """Decode an op response (already JSON-parsed, id already checked); raises ProtocolError."""
    if not isinstance(msg.get("ok"), bool):
        raise ProtocolError(f"response has no boolean \"ok\": {json_short(msg)}")
    if not msg["ok"]:
        err = msg.get("error")
        if (not isinstance(err, dict) or err.get("type") not in ERROR_TYPES
                or not isinstance(err.get("message", ""), str)):
            raise ProtocolError(f"error response needs \"error\": {{\"type\": one of {', '.join(ERROR_TYPES)}, "
                                f"\"message\": string}}, got {json_short(msg)}")
        return Response(error=(err["type"], err.get("message", "")))
    extra = set(msg) - {"id", "ok", "now", "events", "result"}
    if extra:
        raise ProtocolError(f"response has unknown field {sorted(extra)[0]!r}: {json_short(msg)}")
    now = msg.get("now")
    if not _int(now):
        raise ProtocolError(f"response needs an integer \"now\", got {json_short(now)}")
    raw = msg.get("events", [])
    if not isinstance(raw, list):
        raise ProtocolError(f"\"events\" must be a list, got {json_short(raw)}")
    events: list[ev.Event] = []
    for i, d in enumerate(raw):
        try:
            e = ev.event_from_dict(d)
        except ValueError as exc:
            raise ProtocolError(f"events[{i}]: {exc}") from None
        if e.kind not in CAUSED_KINDS:
            raise ProtocolError(f"events[{i}]: kind {e.kind!r} is not a caused event (allowed: "
                                f"{', '.join(CAUSED_KINDS)}; the result event is built by the runner)")
        events.append(e)
    return Response(now, events, check_result(op, msg.get("result")))
