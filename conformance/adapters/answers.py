"""An operation's answer read and held to the protocol's rules (``docs/guides/PROTOCOL.md``,
"Responses"): :func:`decode_response` reads a response line's object into a
:class:`~.protocol.Response`, :func:`check_answer` holds an in-process adapter's answer to the
same rules, :func:`check_result` checks a ``result`` against the kind of value its operation
returns, and :func:`result_event` / :func:`result_of_event` map a result to its result event and
back.

Every answer a run judges passes :func:`decode_response`, so it is the runner's hottest code after
the oracle.  Most answers are plain (``ok``, an integer ``now``, caused events whose fields are
exactly their integers, the result of the right kind): :func:`_plain_response` reads those with a
few type tests, and hands everything else to the validating decoder, which gives the same
:class:`~.protocol.Response` for a plain answer and words the error of any other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.protocol import (
    ERROR_TYPES,
    TRY_COMPLETE_KIND,
    Capabilities,
    Response,
    clean_text,
    plain_int,
    protocol_error,
)
from wheelspec.spec import events as ev
from wheelspec.spec import ops, results
from wheelspec.spec._records import fields_of
from wheelspec.spec.errors import ProtocolError
from wheelspec.spec.events import CAUSED_KINDS
from wheelspec.spec.show import json_short


def check_result(op: ops.Op, result: Any) -> Any:
    """Validate the wire ``result`` field for ``op`` against the kind of value the operation returns
    (:data:`wheelspec.spec.results.RESULTS`); returns it normalised (a list of ids stays a list)."""
    kind = results.rule(op).type
    if kind == results.INT and not plain_int(result):
        raise ProtocolError(f"result of {op.kind!r} must be an integer, got {json_short(result)}")
    if kind == results.BOOL and not isinstance(result, bool):
        raise ProtocolError(f"result of {op.kind!r} must be true or false, got {json_short(result)}")
    if kind == results.NONE and result is not None:
        raise ProtocolError(f"result of {op.kind!r} must be null, got {json_short(result)}")
    if kind == results.IDS:
        if not isinstance(result, list | tuple) or not all(plain_int(x) for x in result):
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


def check_answer(resp: Any, op: ops.Op, caps: Capabilities | None = None) -> Response:
    """An in-process adapter's answer to ``op`` held to the rules of a response on the wire: it is
    written in its wire form and read back by :func:`decode_response`, so the two kinds of adapter
    meet one set of rules, in one place.  A :class:`Response` whose fields are of the wrong kind (a
    string for ``now``, a dict among the events, an error that is not a ``(type, message)`` pair)
    raises :class:`ProtocolError` naming the field, before any of it reaches the judge."""
    if not isinstance(resp, Response):
        raise protocol_error("response", f"the answer must be a Response, got {clean_text(type(resp).__name__)}")
    if resp.error is not None:
        err = resp.error
        if not isinstance(err, tuple) or len(err) != 2:
            raise protocol_error("error", f"error must be a (type, message) pair, got {json_short(err)}")
        wire: dict[str, Any] = {"ok": False, "error": {"type": err[0], "message": err[1]}}
    else:
        if not isinstance(resp.events, list | tuple):
            raise protocol_error("events", f"events must be a list, got {json_short(resp.events)}")
        events = []
        for i, e in enumerate(resp.events):
            if not isinstance(e, ev.Event):
                raise protocol_error(f"events[{i}]", f"events[{i}] must be an event ({', '.join(CAUSED_KINDS)}), "
                                                     f"got {clean_text(type(e).__name__)}")
            events.append(e.to_dict())
        wire = {"ok": True, "now": resp.now, "events": events, "result": resp.result}
    try:
        return decode_response(wire, op, caps)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a value no JSON could hold (its str() failing, ...)
        raise protocol_error("response", f"the answer cannot be read: {type(exc).__name__}") from None


#: the fields of a successful op response
_RESPONSE_FIELDS = frozenset({"id", "ok", "now", "events", "result"})


def decode_response(msg: Any, op: ops.Op, caps: Capabilities | None = None) -> Response:
    """Decode an op response (already parsed by :func:`.lines.parse_line`, id already checked).
    ``caps``: the adapter's; a ``try_complete`` event is allowed only if it declared
    ``reports_try_complete`` (None: allowed).

    Total: any malformed value raises :class:`ProtocolError` naming the field
    (:func:`protocol_error`), never another exception and never a verdict."""
    plain = _plain_response(msg, op)
    return plain if plain is not None else validated_response(msg, op, caps)


def validated_response(msg: Any, op: ops.Op, caps: Capabilities | None = None) -> Response:
    """:func:`decode_response` by the protocol's rules, field by field: the decoder of every
    answer that is not plain, and the reference the plain reader is tested against."""
    if not isinstance(msg, dict):
        raise protocol_error("response", f"response must be a JSON object, got {json_short(msg)}")
    if not isinstance(msg.get("ok"), bool):
        raise protocol_error("ok", f"response has no boolean \"ok\": {json_short(msg)}")
    if not msg["ok"]:
        err = msg.get("error")
        if (not isinstance(err, dict) or not isinstance(err.get("type"), str) or err["type"] not in ERROR_TYPES
                or not isinstance(err.get("message", ""), str)):
            raise protocol_error("error", f"error response needs \"error\": {{\"type\": one of "
                                          f"{', '.join(ERROR_TYPES)}, \"message\": string}}, got {json_short(msg)}")
        return Response(error=(err["type"], clean_text(err.get("message", ""), 500)))
    if not _RESPONSE_FIELDS.issuperset(msg):
        name = sorted(set(msg) - _RESPONSE_FIELDS)[0]
        raise protocol_error(repr(name), f"response has unknown field {name!r}: {json_short(msg)}")

    now: Any = msg.get("now")
    if not plain_int(now):
        raise protocol_error("now", f"response needs an integer \"now\", got {json_short(now)}")
    raw = msg.get("events", [])
    if not isinstance(raw, list):
        raise protocol_error("events", f"\"events\" must be a list, got {json_short(raw)}")
    events: list[ev.Event] = []
    for i, d in enumerate(raw):
        where = f"events[{i}]"
        if not isinstance(d, dict):
            raise protocol_error(where, f"{where} must be an event object, got {json_short(d)}")
        kind = d.get("kind")
        if not isinstance(kind, str) or kind not in CAUSED_KINDS:
            known = isinstance(kind, str) and kind in ev.EVENTS
            what = (f"kind {kind!r} is not a caused event" if known
                    else f"unknown event kind {clean_text(repr(kind), 60)}")
            allowed = ", ".join(CAUSED_KINDS)
            raise protocol_error(f"{where}.kind", f"{where}: {what} (field \"kind\"; allowed: {allowed}; "
                                                  "the result event is built by the runner)")
        if kind == TRY_COMPLETE_KIND and caps is not None and not caps.reports_try_complete:
            raise protocol_error(f"{where}.kind", f"{where}: a {kind!r} event comes only from an adapter whose hello "
                                                  "declared capabilities.reports_try_complete (protocol 2)")
        try:
            e = ev.event_from_dict(d)
        except ValueError as exc:
            raise protocol_error(where, f"{where}: {clean_text(str(exc), 300)}") from None
        if isinstance(e, ev.Complete) and e.via not in ev.VIAS:
            raise protocol_error(f"{where}.via", f"{where}.via must be one of {', '.join(ev.VIAS)}, "
                                                 f"got {json_short(e.via, 60)}")
        events.append(e)
    try:
        result = check_result(op, msg.get("result"))
    except ProtocolError as exc:
        raise protocol_error("result", str(exc)) from None
    return Response(now, events, result)


#: the caused events :func:`_plain_response` reads itself, by kind: the class, its fields with the
#: exact type each must have, and the size of a dict holding them all and ``kind``.  A
#: ``try_complete`` event is left to the validating decoder (it depends on the capabilities), and
#: so is any field with a default (a dict may leave it out) or of another type.
_PLAIN_EVENTS: dict[str, tuple[Callable[..., ev.Event], tuple[tuple[str, type], ...], int]] = {}
for _cls in ev.CAUSED:
    _fields = fields_of(_cls).fields
    if _cls.kind != TRY_COMPLETE_KIND and all(f.type in ("int", "str") and f.default is dataclasses.MISSING
                                              for f in _fields):
        _PLAIN_EVENTS[_cls.kind] = (_cls, tuple((f.name, int if f.type == "int" else str) for f in _fields),
                                    len(_fields) + 1)
#: the exact type of a plain result, by operation class (None: the result must be null; list: ids)
_PLAIN_RESULTS: dict[type, type | None] = {
    cls: {results.INT: int, results.BOOL: bool, results.NONE: None, results.IDS: list}[rule.type]
    for cls, rule in results.RESULTS.items()}


def _plain_response(msg: Any, op: ops.Op) -> Response | None:
    """:func:`decode_response`'s answer to a plain response (module doc), or None for any other,
    which the validating decoder reads.  Accepts only what the validating decoder accepts and
    builds the same :class:`~.protocol.Response` from it: exact ``int``, ``bool``, ``str`` and
    ``list`` types (as JSON parses them), every field of an event present and no other."""
    if type(msg) is not dict or msg.get("ok") is not True or not _RESPONSE_FIELDS.issuperset(msg):
        return None
    now = msg.get("now")
    raw = msg.get("events", [])
    if type(now) is not int or type(raw) is not list:
        return None
    events: list[ev.Event] = []
    for d in raw:
        if type(d) is not dict:
            return None
        tag = d.get("kind")
        plain = _PLAIN_EVENTS.get(tag) if type(tag) is str else None
        if plain is None or len(d) != plain[2]:
            return None
        values = []
        for name, want in plain[1]:
            v = d.get(name)
            if type(v) is not want:
                return None
            values.append(v)
        e = plain[0](*values)
        if type(e) is ev.Complete and e.via not in ev.VIAS:
            return None
        events.append(e)
    if type(op) not in _PLAIN_RESULTS:
        return None  # not an operation: the validating decoder says so
    result: Any = msg.get("result")
    kind = _PLAIN_RESULTS[type(op)]
    if kind is None:
        if result is not None:
            return None
    elif type(result) is not kind:
        return None
    elif kind is list:
        ids: list[Any] = msg["result"]
        for x in ids:
            if type(x) is not int:
                return None
        result = list(ids)
    return Response(now, events, result)
