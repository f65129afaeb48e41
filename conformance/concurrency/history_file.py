"""Concurrent histories as files (JSON lines, one call each: client, input, invocation and response
times, output), read by ``wheelspec linearize HISTORY``.

The schema of a record (:func:`record_from_dict`): ``client`` an integer >= 0; ``call`` a finite
number, ``ret`` a finite number not before it or null (the call never returned); ``input`` an
operation record of :mod:`wheelspec.spec.ops` or a pseudo-call ``{"kind": "fire", "task",
"exp"}`` / ``{"kind": "expire", "op"}``; ``output`` typed by the input's kind
(:data:`OUTPUTS`) or null.  Every integer fits 64 bits.  A bad line is one error naming the
file, the line and the field."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from wheelspec.conformance.check.scenario_schema import INT64_MIN, is_int, parse_json
from wheelspec.conformance.concurrency.linearizability import Operation
from wheelspec.spec import ops
from wheelspec.spec.errors import RecordError, UserError
from wheelspec.spec.sequential_spec import ExpireCall, FireCall
from wheelspec.spec.show import json_short


def _encode_input(i: Any) -> dict[str, Any]:
    if isinstance(i, FireCall):
        return {"kind": "fire", "task": i.task, "exp": i.exp}
    if isinstance(i, ExpireCall):
        return {"kind": "expire", "op": i.op}
    return i.to_dict()


def dumps(history: Sequence[Operation]) -> str:
    """JSON lines: ``{"client", "call", "ret", "input": <operation record>, "output"}`` per call;
    inputs are :mod:`wheelspec.spec.ops` records or ``{"kind": "fire", "task", "exp"}`` /
    ``{"kind": "expire", "op"}``; a check's / cancelForKey's output is the list of operation ids it
    completed / returned."""
    rows = []
    for o in history:
        out = list(o.output) if isinstance(o.output, (tuple, list, set, frozenset)) else o.output
        rows.append(json.dumps({"client": o.client, "call": o.call, "ret": o.ret,
                                "input": _encode_input(o.input), "output": out}, separators=(",", ":")))
    return "".join(r + "\n" for r in rows)


def _int(v: Any, field: str, lo: int = INT64_MIN) -> int:
    if not is_int(v) or v < lo:
        raise ValueError(f"{field}: must be an integer{' >= 0' if lo == 0 else ''} within 64 bits, got {json_short(v)}")
    return v


def _time(v: Any, field: str) -> float:
    """A call's invocation or response time: any finite JSON number (steps, counters, ns)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        raise ValueError(f"{field}: must be a finite number, got {json_short(v)}")
    if isinstance(v, int) and not is_int(v):
        raise ValueError(f"{field}: {json_short(v)} does not fit a 64-bit integer")
    return v


def _decode_input(d: Any) -> Any:
    """The ``input`` of a record: an operation record or a fire / expire pseudo-call."""
    if isinstance(d, dict) and isinstance(d.get("kind"), str) and d["kind"] in PSEUDO_CALLS:
        fields = PSEUDO_CALLS[d["kind"]]
        extra = sorted(set(d) - {"kind", *fields})
        if extra:
            raise ValueError(f"input: unknown field {extra[0]!r} of a {d['kind']!r} call (fields: {', '.join(fields)})")
        for f in fields:
            if f not in d:
                raise ValueError(f"input: a {d['kind']!r} call needs field {f!r}")
        if d["kind"] == "fire":
            return FireCall(_int(d["task"], "input.task", 0), _int(d["exp"], "input.exp"))
        return ExpireCall(_int(d["op"], "input.op", 0))
    try:
        op = ops.op_from_dict(d)
    except RecordError as e:
        raise ValueError(f"input: {e}") from None
    for name, v in op.to_dict().items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, int) and not isinstance(x, bool):
                _int(x, f"input.{name}")
    return op


#: operation kind -> the outputs a call of it may have recorded: (test, what it must be).  Null
#: always fits: a call that never returned has no output.
OUTPUTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "add": (is_int, "the expiration, an integer"),
    "cancel": (lambda v: isinstance(v, bool), "true or false"),
    "watch": (lambda v: isinstance(v, bool), "true or false"),
    "force_complete": (lambda v: isinstance(v, bool), "true or false"),
    "check": (lambda v: isinstance(v, list) and all(is_int(x) for x in v), "a list of operation ids"),
    "cancel_for_key": (lambda v: isinstance(v, list) and all(is_int(x) for x in v), "a list of operation ids"),
    "size": (is_int, "an integer"),
    "watched": (is_int, "an integer"),
    "num_delayed": (is_int, "an integer"),
}
#: pseudo-calls of :mod:`.models` and their fields
PSEUDO_CALLS = {"fire": ("task", "exp"), "expire": ("op",)}
RECORD_KEYS = ("client", "call", "ret", "input", "output")


def record_from_dict(d: Any) -> Operation:
    """One history record, checked field by field (``ValueError`` naming the field)."""
    if not isinstance(d, dict):
        raise ValueError(f"a record must be a JSON object, got {json_short(d, 40)}")
    for k in RECORD_KEYS[:4]:
        if k not in d:
            raise ValueError(f"missing field {k!r} (fields: {', '.join(RECORD_KEYS)})")
    extra = sorted(set(d) - set(RECORD_KEYS))
    if extra:
        raise ValueError(f"unknown field {extra[0]!r} (fields: {', '.join(RECORD_KEYS)})")
    client = _int(d["client"], "client", 0)
    call = _time(d["call"], "call")
    ret = None if d["ret"] is None else _time(d["ret"], "ret")
    if ret is not None and ret < call:
        raise ValueError(f"ret: the response ({json_short(ret)}) comes before the invocation ({json_short(call)})")
    inp = _decode_input(d["input"])
    out = d.get("output")
    kind = d["input"]["kind"]
    if out is not None:
        test, what = OUTPUTS.get(kind, (lambda v: False, "null (the call returns nothing)"))
        if not test(out):
            raise ValueError(f"output: a {kind!r} call's output must be {what} or null, got {json_short(out)}")
    return Operation(client, inp, call, tuple(out) if isinstance(out, list) else out, ret)


def loads(text: str | bytes, source: str = "<history>") -> list[Operation]:
    """The records of a history file (JSON lines); a malformed line is a one-line
    :class:`UserError` naming ``source``, the line and the field."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    out = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        d = parse_json(line, source, line=n)
        try:
            out.append(record_from_dict(d))
        except ValueError as e:
            raise UserError(f"{source}:{n}: {e}") from None
    return out


def load(path: str | Path) -> list[Operation]:
    """A history file from disk (see :func:`loads`)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read history file {p}: {e.strerror or e}") from None
    return loads(data, str(p))
