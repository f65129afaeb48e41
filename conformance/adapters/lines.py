"""The adapter protocol's lines as bytes (``docs/guides/PROTOCOL.md``, "Transport"): one JSON object
per line, read by :func:`parse_line` and written by :func:`encode_line`, shared by the runner
(:mod:`.subprocess_adapter`) and the server side (:mod:`.serve`).

orjson does the reading and writing; the standard library's ``json`` is the reference of what a
line may hold, of the bytes a line is written as and of the words of every error, and takes over
wherever orjson would read or write otherwise (module functions say where), so an adapter in any
language, and every verdict, sees the same lines either way.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from wheelspec.conformance.adapters.protocol import clean_text, protocol_error
from wheelspec.spec.show import json_short

#: the deepest nesting a message may have: a response is at most 4 deep (response, events, an
#: event; a result list), a hello 3; anything deeper is garbage, refused before it can exhaust the
#: stack of a later ``repr`` or ``json.dumps``
MAX_DEPTH = 16
# Protocol integers are signed 64-bit (docs/guides/PROTOCOL.md, "Transport").
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
#: an unpaired UTF-16 surrogate, which a string read from an escape may hold and text may not
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_shape(value: Any, where: str = "response") -> None:
    """Refuse what no protocol message contains, wherever it is: nesting deeper than
    :data:`MAX_DEPTH`, integers outside signed 64 bits, strings with unpaired surrogates.
    Iterative (a deep value must not exhaust the stack here either).  A first walk without the
    field paths passes a well-shaped message; only a faulty one is walked again to name the field."""
    if _shape_ok(value):
        return
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        v, path, depth = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, float):
            continue
        if isinstance(v, int):
            if not _INT64_MIN <= v <= _INT64_MAX:
                raise protocol_error(path, f"{path} is an integer outside signed 64 bits ({v.bit_length()} bits)")
        elif isinstance(v, str):
            if _SURROGATE.search(v):
                raise protocol_error(path, f"{path} holds an unpaired UTF-16 surrogate (not Unicode text)")
        elif isinstance(v, (list, dict)):
            if depth >= MAX_DEPTH:
                raise protocol_error(path, f"{path} is nested more than {MAX_DEPTH} levels deep")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                if isinstance(v, dict):
                    sub = f"{path}.{k}" if str(k).isidentifier() else f"{path}[{json_short(k, 40)}]"
                else:
                    sub = f"{path}[{k}]"
                stack.append((x, sub, depth + 1))



def _shape_ok(value: Any) -> bool:
    """:func:`check_shape`'s rules, without building the field paths: is ``value`` well shaped?"""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        t = type(v)
        if t is int:
            if not _INT64_MIN <= v <= _INT64_MAX:
                return False
        elif t is str:
            if not v.isascii() and _SURROGATE.search(v):
                return False
        elif t is dict or t is list:
            if depth >= MAX_DEPTH:
                return False
            for x in (v.values() if t is dict else v):
                push((x, depth + 1))
        elif not (v is None or t is bool or t is float):
            return False  # anything else (not from json.loads): let the full walk decide
    return True

#: what :func:`check_shape` could object to in a line's text: a long integer, a surrogate escape
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: a line's bytes with every digit written ``0`` and DEL written as a non-ASCII byte
#: (``line.translate(_FOLD)``, in :func:`encode_line` and :func:`orjson_brackets`): then a run of
#: 19 digits, a digit before a float's point or exponent, and DEL or non-ASCII text are found by
#: plain substring searches and ``isascii``, several times faster than a regular expression on
#: lines this short
_FOLD = bytes.maketrans(b"0123456789\x7f", b"0000000000\x80")
#: the folded form of a run of 19 digits: a line holding one is parsed by the standard library
#: alone (orjson reads an integer beyond 64 bits as a float, which :func:`check_shape` could not see)
_LONG_DIGITS_FOLDED = b"0" * 19
#: the most brackets a line orjson parses may hold: orjson recurses without a limit (a line nested
#: ten million deep crashes the process), the standard parser stops at Python's recursion limit
#: with its own error; every line nested up to this depth gets the same verdict and words either way
_ORJSON_BRACKETS = 512
#: one strict decoder for every line (``json.loads`` with an argument builds a decoder per call)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
#: one compact encoder for the lines orjson does not write as it does (:func:`encode_line`)
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def encode_line(msg: Any) -> bytes:
    """One protocol line, newline included, exactly as ``json.dumps(msg, separators=(",", ":"))``
    writes it: written by orjson, or by the standard encoder where orjson would write other bytes
    (non-ASCII text and DEL, which the standard encoder escapes; a float, which the two write in
    different forms: ``1e+16`` against ``1e16``, ``6.103515625e-05`` against
    ``0.00006103515625``) or refuses (an integer beyond 64 bits, a key that is not a string), so
    an adapter in any language reads the same bytes either way.  No protocol message holds a
    float (a NaN, which none may hold, orjson writes ``null``)."""
    try:
        line = orjson.dumps(msg, option=orjson.OPT_APPEND_NEWLINE)
        # A float is written with a digit before its point or its exponent: with the digits
        # folded to 0, "0." or "0e" (text that looks like one goes to the standard encoder
        # too, which writes text alike).
        folded = line.translate(_FOLD)
        if folded.isascii() and b"0." not in folded and b"0e" not in folded and b"0E" not in folded:
            return line
    except TypeError:
        pass
    return _ENCODER.encode(msg).encode() + b"\n"


def parse_line(raw: bytes | bytearray, where: str = "response") -> Any:
    """Parse one protocol line (without its newline): strict UTF-8, strict JSON (no ``NaN`` or
    ``Infinity``), then :func:`check_shape`.  Every failure is a :class:`ProtocolError` that quotes
    the line; nothing else escapes (a line nested 100 000 deep is one of these errors, not a
    ``RecursionError``).

    orjson parses the line; a line it refuses, one with a run of 19 digits or one with more than
    :data:`_ORJSON_BRACKETS` brackets is parsed by :func:`_parse_strict` (the standard library)
    instead, which accepts or refuses it and words the error.  orjson refuses all the standard
    parser refuses here (bad UTF-8, a byte order mark, ``NaN``, lone surrogates) and accepts no
    line it refuses, so both paths give one verdict, in the same words."""
    data = raw if type(raw) is bytes else bytes(raw)
    brackets = orjson_brackets(data)
    if brackets is not None:
        try:
            msg = orjson.loads(data)
        except orjson.JSONDecodeError:
            return _parse_strict(data, where)
        # (no integer can leave 64 bits, and a surrogate escape orjson accepts is a pair: only the
        # depth is left to check, and only a line with more brackets than MAX_DEPTH can be too deep)
        if brackets > MAX_DEPTH:
            check_shape(msg, where)
        return msg
    return _parse_strict(data, where)


def orjson_brackets(data: bytes) -> int | None:
    """The brackets (``[`` and ``{``) of line ``data`` if orjson reads it as the standard parser
    does (or refuses it where that one does); None if it may not: a line holding a run of 19
    digits (an integer that may leave 64 bits, which orjson reads as a float) or more than
    :data:`_ORJSON_BRACKETS` brackets (orjson recurses without a limit)."""
    brackets = data.count(b"[") + data.count(b"{")
    if brackets > _ORJSON_BRACKETS or _LONG_DIGITS_FOLDED in data.translate(_FOLD):
        return None
    return brackets


def _parse_strict(raw: bytes, where: str) -> Any:
    """:func:`parse_line` by the standard library: the reference of what a line may hold, and the
    wording of every error."""
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError as e:
        quoted = json_short(bytes(raw).decode("utf-8", "replace"))
        raise protocol_error("line", f"sent a line that is not UTF-8 (byte {e.start}): {quoted}") from None
    try:
        if text.startswith("\ufeff"):  # as json.loads says it: the decoder alone would not
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        msg = _DECODER.decode(text)
    except RecursionError:
        raise protocol_error("line", f"sent a line nested too deep to parse: {json_short(text)}") from None
    except ValueError as e:
        raise protocol_error("line", f"sent a line that is not JSON: {json_short(text)} "
                                     f"({clean_text(str(e), 120)})") from None
    # A line with no run of 19 digits (no integer can leave signed 64 bits), no \ud800-\udfff
    # escape (strict UTF-8 holds no surrogate) and at most MAX_DEPTH brackets in all (no nesting
    # can be deeper) is well shaped: the walk is left to the lines that might not be.
    if (_LONG_DIGITS.search(text) or ("\\u" in text and _SURROGATE_ESCAPE.search(text))
            or text.count("[") + text.count("{") > MAX_DEPTH):
        check_shape(msg, where)
    return msg
