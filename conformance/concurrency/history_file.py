"""Concurrent histories as files (JSON lines, one call each: client, input, invocation and response
times, output), read by ``wheelspec linearize HISTORY``; a bad line is one error naming it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from wheelspec.conformance.concurrency.linearizability import Operation
from wheelspec.conformance.concurrency.models import ExpireCall, FireCall
from wheelspec.spec import ops


def _encode_input(i: Any) -> dict[str, Any]:
    if isinstance(i, FireCall):
        return {"kind": "fire", "task": i.task, "exp": i.exp}
    if isinstance(i, ExpireCall):
        return {"kind": "expire", "op": i.op}
    return i.to_dict()


def _decode_input(d: Any) -> Any:
    if isinstance(d, dict) and d.get("kind") == "fire":
        return FireCall(int(d["task"]), int(d["exp"]))
    if isinstance(d, dict) and d.get("kind") == "expire":
        return ExpireCall(int(d["op"]))
    return ops.op_from_dict(d)


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


def loads(text: str, source: str = "<history>") -> list[Operation]:
    from wheelspec.spec.errors import UserError

    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(Operation(int(d["client"]), _decode_input(d["input"]), d["call"],
                                 tuple(d["output"]) if isinstance(d.get("output"), list) else d.get("output"),
                                 d.get("ret")))
        except (ValueError, KeyError, TypeError) as e:
            raise UserError(f"{source}:{n}: not a history record ({type(e).__name__}: {e})") from None
    return out
