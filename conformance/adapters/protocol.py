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
from wheelspec.spec import ops
from wheelspec.spec.errors import ProtocolError
from wheelspec.spec.profiles import PROFILE_NAMES

PROTOCOL_VERSION = 1

#: error types an adapter may answer with (``docs/PROTOCOL.md``, "Errors")
ERROR_TYPES = ("range", "type", "unknown-id", "invalid", "unsupported", "internal")

#: the event kinds an adapter reports as caused by a request (the result event is built here)
CAUSED_KINDS = ("fire", "complete", "expire", "purge")

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
    def from_dict(cls, d: Any, where: str = "config") -> "Config":
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
    profile: str = "kafka"
    tick_ms: int | None = None
    wheel_size: int | None = None
    configurable: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["configurable"] = list(self.configurable)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> "Capabilities":
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
        """A Kafka-faithful wheel: claims kafka with a tick and wheel size (fixed or configurable)."""
        has_tick = self.tick_ms is not None or "tick_ms" in self.configurable
        has_wheel = self.wheel_size is not None or "wheel_size" in self.configurable
        return self.profile == "kafka" and has_tick and has_wheel

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


def json_short(v: Any, limit: int = 120) -> str:
    """A value quoted for a one-line error message."""
    import json

    try:
        s = json.dumps(v, separators=(",", ":"))
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."


# ----------------------------------------------------------------------- results --------------
def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_result(op: ops.Op, result: Any) -> Any:
    """Validate the ``result`` field for ``op``; returns it normalised (lists -> tuples)."""
    match op:
        case ops.AddTask() | ops.Size() | ops.CheckAndComplete() | ops.Watched() | ops.NumDelayed():
            if not _int(result):
                raise ProtocolError(f"result of {op.kind!r} must be an integer, got {json_short(result)}")
        case ops.CancelTask() | ops.Watch() | ops.ForceComplete():
            if not isinstance(result, bool):
                raise ProtocolError(f"result of {op.kind!r} must be true or false, got {json_short(result)}")
        case ops.AdvanceTo() | ops.SetCompletable():
            if result is not None:
                raise ProtocolError(f"result of {op.kind!r} must be null, got {json_short(result)}")
        case ops.CancelForKey():
            if not isinstance(result, list | tuple) or not all(_int(x) for x in result):
                raise ProtocolError(f"result of 'cancel_for_key' must be a list of op ids, got {json_short(result)}")
            return list(result)
    return result


def result_event(op: ops.Op, now: int, result: Any) -> ev.Event:
    """The request's own result event (last in its events), from the operation and its result."""
    match op:
        case ops.AddTask(task, delay):
            return ev.Add(now, task, delay, result)
        case ops.CancelTask(task):
            return ev.Cancel(now, task, result)
        case ops.AdvanceTo():
            return ev.Advance(now)
        case ops.Size():
            return ev.Observe(now, "size", result)
        case ops.Watch(op_id, delay, keys, _):
            return ev.TryCompleteElseWatch(now, op_id, delay, tuple(keys), result)
        case ops.SetCompletable(op_id, value):
            return ev.SetCompletable(now, op_id, value)
        case ops.CheckAndComplete(key):
            return ev.CheckAndComplete(now, key, result)
        case ops.CancelForKey(key):
            return ev.CancelForKey(now, key, tuple(result))
        case ops.ForceComplete(op_id):
            return ev.ForceComplete(now, op_id, result)
        case ops.Watched():
            return ev.Observe(now, "watched", result)
        case ops.NumDelayed():
            return ev.Observe(now, "num_delayed", result)
    raise TypeError(f"not an operation: {op!r}")


def result_of_event(e: ev.Event) -> Any:
    """The wire ``result`` for a result event (inverse of :func:`result_event`)."""
    match e:
        case ev.Add():
            return e.exp
        case ev.Cancel():
            return e.pending
        case ev.Observe():
            return e.value
        case ev.TryCompleteElseWatch():
            return e.result
        case ev.CheckAndComplete():
            return e.completed
        case ev.CancelForKey():
            return list(e.ops)
        case ev.ForceComplete():
            return e.result
    return None


def decode_response(msg: Any, op: ops.Op) -> Response:
    """Decode an op response (already JSON-parsed, id already checked); raises ProtocolError."""
    if not isinstance(msg.get("ok"), bool):
        raise ProtocolError(f"response has no boolean \"ok\": {json_short(msg)}")
    if not msg["ok"]:
        err = msg.get("error")
        if not isinstance(err, dict) or err.get("type") not in ERROR_TYPES or not isinstance(err.get("message", ""), str):
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
