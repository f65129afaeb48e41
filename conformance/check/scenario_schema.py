"""The schema of scenario files: one validator per record kind, each error one line.

A scenario file (:mod:`.corpus` describes the format) holds four kinds of record, each checked
here before anything runs, so that a malformed file is a load error naming the file and the field
(``f.json: steps[3].expect.fired: must be a list of task ids, got "1"``), never a traceback and
never a verdict on the implementation under test:

================== =================================================================================
record             what is checked
================== =================================================================================
the document       UTF-8, JSON without ``NaN``/``Infinity``, no duplicate keys, nested at most
                   :data:`MAX_DEPTH` deep
the top level      the keys of :data:`TOP_KEYS`, their JSON types; ``name`` non-empty
``config``         :data:`~wheelspec.conformance.adapters.protocol.CONFIG_KEYS`, each in the range
                   :mod:`wheelspec.spec.limits` accepts (a scenario's configuration is not a test
                   of refusals: ``tick_ms: 0`` cannot run)
each step          an operation record of :mod:`wheelspec.spec.ops` (kind, fields, types), every
                   integer within 64 bits (the wire's Java ``long``).  Values outside wheelspec's
                   ranges are allowed: scenarios test that an implementation refuses them
``expect``         the keys of the judge, each value of the type the operation's result has
                   (:data:`wheelspec.spec.results.RESULTS`): ``result`` of an ``add`` is an int,
                   of a ``cancel`` a bool, ...; ``fired`` a list of ids; ``completed`` a list of
                   ``[op, via]`` pairs; ``error`` an error type of the protocol or ``true``
================== =================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.protocol import CONFIG_KEYS, ERROR_TYPES, PROTOCOL_VERSIONS
from wheelspec.conformance.check.judge import EXPECT_KEYS
from wheelspec.spec import limits, ops, results
from wheelspec.spec.errors import RangeError, RecordError, UserError
from wheelspec.spec.events import VIAS
from wheelspec.spec.profiles import EXECUTOR_ORDERS, PROFILE_NAMES
from wheelspec.spec.show import json_short

FORMAT_VERSION = 1
TOP_KEYS = ("wheelspec_scenario", "name", "description", "source", "config", "expect_profiles",
            "expect_executor_orders", "expect_protocols", "steps", "origin")
#: JSON nesting deeper than this is refused: no scenario needs it, and deep structures make
#: recursive code (printing, comparing) fail far from the file
MAX_DEPTH = 32
#: integers travel to adapters as JSON numbers read into a Java ``long`` / int64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: config key -> the range check of :mod:`wheelspec.spec.limits`
CONFIG_RANGES: dict[str, Callable[[object], int]] = {
    "tick_ms": limits.check_tick,
    "wheel_size": limits.check_wheel_size,
    "start_ms": lambda v: limits.check_time("start_ms", v),
    "purge_interval": limits.check_purge_interval,
}
assert set(CONFIG_RANGES) == set(CONFIG_KEYS), "every configuration key has a range"


class SchemaError(UserError):
    """A record does not fit its schema; the message names the source and the field."""


def _fail(where: str, field: str, problem: str) -> SchemaError:
    return SchemaError(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")


# ------------------------------------------------------------------ the document ----------------
def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (iterative: any depth is measured)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_json(data: bytes, where: str, *, line: int | None = None) -> Any:
    """One JSON document from raw bytes: UTF-8, strict JSON, at most :data:`MAX_DEPTH` deep.
    Errors name ``where`` and the line (``line``: the document is that line of a JSON-lines file)."""
    def at(n: int | None) -> str:
        return f"{where}:{n}" if n is not None else where

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        n = line if line is not None else data.count(b"\n", 0, e.start) + 1
        raise SchemaError(f"{at(n)}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        n = line if line is not None else e.lineno
        raise SchemaError(f"{at(n)}: not valid JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise SchemaError(f"{at(line)}: not accepted: JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # a duplicate key, NaN / Infinity, an integer of over 4300 digits
        raise SchemaError(f"{at(line)}: not valid JSON ({str(e).splitlines()[0][:200]})") from None
    if depth(value) > MAX_DEPTH:
        raise SchemaError(f"{at(line)}: not accepted: JSON nested deeper than {MAX_DEPTH} levels")
    return value


# ------------------------------------------------------------------ value types -----------------
def is_int(v: Any) -> bool:
    """A JSON integer (a bool is not one) within 64 bits."""
    return isinstance(v, int) and not isinstance(v, bool) and INT64_MIN <= v <= INT64_MAX


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and all(is_int(x) for x in v)


def _tries(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and is_int(p[0]) and isinstance(p[1], bool)
                                       for p in v)


def _pairs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and is_int(p[0]) and p[1] in VIAS
                                       for p in v)


#: result kind of :mod:`wheelspec.spec.results` -> (test, what the message says it must be)
RESULT_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    results.INT: (is_int, "an integer"),
    results.BOOL: (lambda v: isinstance(v, bool), "true or false"),
    results.NONE: (lambda v: v is None, "null (the operation returns nothing)"),
    results.IDS: (_int_list, "a list of operation ids"),
}

#: expect key -> (test, what it must be); ``result`` depends on the operation (:data:`RESULT_TYPES`)
EXPECT_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "error": (lambda v: v is True or v in ERROR_TYPES, f"true or one of {', '.join(ERROR_TYPES)}"),
    "fired": (_int_list, "a list of task ids"),
    "fired_set": (_int_list, "a list of task ids"),
    "completed": (_pairs, f"a list of [op, via] pairs (via one of {', '.join(VIAS)})"),
    "expired": (_int_list, "a list of operation ids"),
    "purged": (lambda v: v is None or is_int(v), "an integer, or null for no purge"),
    "now": (is_int, "an integer"),
    "tried": (_tries, "a list of [op, result] pairs (the request's tryComplete calls, result true or false)"),
}
assert set(EXPECT_TYPES) | {"result"} == set(EXPECT_KEYS)


# ------------------------------------------------------------------ records ---------------------
def check_config(d: Any, where: str) -> dict[str, int]:
    """The ``config`` object: known keys, each an integer in its range."""
    if not isinstance(d, dict):
        raise _fail(where, "config", f"must be an object, got {json_short(d)}")
    for k, v in d.items():
        if k not in CONFIG_RANGES:
            raise _fail(where, "config", f"unknown key {k!r} (known: {', '.join(CONFIG_KEYS)})")
        try:
            CONFIG_RANGES[k](v)
        except (TypeError, RangeError) as e:
            raise _fail(where, f"config.{k}", f"{e} (got {json_short(v)})") from None
    return d


def check_op(d: Any, where: str, field: str) -> ops.Op:
    """One step's operation record: decoded by :func:`wheelspec.spec.ops.op_from_dict` (kind,
    fields, types), then every integer checked to fit 64 bits."""
    try:
        op = ops.op_from_dict(d)
    except RecordError as e:
        raise _fail(where, field, str(e)) from None
    for name, v in op.to_dict().items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, int) and not isinstance(x, bool) and not is_int(x):
                raise _fail(where, f"{field}.{name}", f"{json_short(x)} does not fit a 64-bit integer")
    return op


def check_expect(e: Any, op: ops.Op, where: str, field: str) -> None:
    """A step's ``expect``: per profile (``{"kafka": {...}, ...}``) or one object, each key typed
    as the judge compares it with the response to ``op``."""
    if not isinstance(e, dict):
        raise _fail(where, field, f"must be an object, got {json_short(e)}")
    if e and set(e) <= set(PROFILE_NAMES):
        for p, sub in e.items():
            check_expect(sub, op, where, f"{field}.{p}")
        return
    for key, v in e.items():
        if key not in EXPECT_KEYS:
            raise _fail(where, field, f"unknown key {key!r} (known: {', '.join(EXPECT_KEYS)}, or profile names)")
        if key == "result":
            kind = results.rule(op).type
            test, what = RESULT_TYPES[kind]
            what = f"{what} (the result of {op.kind!r})"
        else:
            test, what = EXPECT_TYPES[key]
        if not test(v):
            raise _fail(where, f"{field}.{key}", f"must be {what}, got {json_short(v)}")
    if "error" in e and len(e) > 1:
        other = sorted(set(e) - {"error"})[0]
        raise _fail(where, field, f"\"error\" cannot be combined with {other!r} (a refused request has no "
                                  f"{other})")


def check_profiles(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not v:
        raise _fail(where, "expect_profiles", f"must be a non-empty list of profile names, got {json_short(v)}")
    for p in v:
        if p not in PROFILE_NAMES:
            shown = repr(p) if isinstance(p, str) else json_short(p)
            raise _fail(where, "expect_profiles", f"unknown profile {shown} (known: {', '.join(PROFILE_NAMES)})")
    return tuple(v)


def check_executor_orders(v: Any, where: str) -> tuple[str, ...]:
    """``expect_executor_orders``: the declared executor orders the expectations hold for
    (:data:`~wheelspec.spec.profiles.EXECUTOR_ORDERS`; default: every one)."""
    if not isinstance(v, list) or not v:
        raise _fail(where, "expect_executor_orders",
                    f"must be a non-empty list of executor orders, got {json_short(v)}")
    for o in v:
        if o not in EXECUTOR_ORDERS:
            shown = repr(o) if isinstance(o, str) else json_short(o)
            raise _fail(where, "expect_executor_orders",
                        f"unknown executor order {shown} (known: {', '.join(EXECUTOR_ORDERS)})")
    return tuple(v)


def check_protocols(v: Any, where: str) -> tuple[int, ...]:
    """``expect_protocols``: the protocol versions the expectations hold for (an adapter speaking
    another one is judged by its profile and the oracle only; default: every version)."""
    if not isinstance(v, list) or not v or any(isinstance(x, bool) or x not in PROTOCOL_VERSIONS for x in v):
        raise _fail(where, "expect_protocols", f"must be a non-empty list of protocol versions "
                                               f"({', '.join(map(str, PROTOCOL_VERSIONS))}), got {json_short(v)}")
    return tuple(v)


def check_top(d: Any, where: str) -> None:
    """The top-level object: version, known keys and the types of the free-text keys."""
    if not isinstance(d, dict):
        raise _fail(where, "", f"a scenario must be a JSON object, got {json_short(d, 40)}")
    if d.get("wheelspec_scenario") != FORMAT_VERSION or isinstance(d.get("wheelspec_scenario"), bool):
        raise _fail(where, "", f"\"wheelspec_scenario\" must be {FORMAT_VERSION} (the format version), "
                               f"got {json_short(d.get('wheelspec_scenario'))}")
    for k in d:
        if k not in TOP_KEYS:
            raise _fail(where, "", f"unknown key {k!r} (known: {', '.join(TOP_KEYS)})")
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(where, "", "\"name\" must be a non-empty string")
    for k in ("description", "source"):
        if k in d and not isinstance(d[k], str):
            raise _fail(where, k, f"must be a string, got {json_short(d[k])}")
    if d.get("origin") is not None and not isinstance(d["origin"], dict):
        raise _fail(where, "origin", f"must be an object, got {json_short(d['origin'])}")
    if not isinstance(d.get("steps"), list):
        raise _fail(where, "", "\"steps\" must be a list of operations")
