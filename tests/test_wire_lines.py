"""The protocol's lines as bytes (docs/guides/PROTOCOL.md, "Transport"): orjson reads and writes
them, the standard library is the reference of what a line may hold and how an error is worded.

* :func:`parse_line` accepts exactly the lines the standard parser accepts, with the same value,
  and refuses the others with the standard path's one-line message;
* :func:`encode_line` writes the bytes ``json.dumps(msg, separators=(",", ":"))`` writes, so
  adapters in other languages read what they always read;
* a pipelined window goes out in one write, both ways: the runner's requests (a spy on
  ``os.write`` to the child's stdin) and the served engine's answers (a spy on its stdout)."""

from __future__ import annotations

import io
import json
import os
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wheelspec.conformance.adapters import lines
from wheelspec.conformance.adapters.engines import reference_adapter, serve_command
from wheelspec.conformance.adapters.lines import encode_line, parse_line
from wheelspec.conformance.adapters.protocol import Config, ProtocolError
from wheelspec.conformance.adapters.serve import HOLD_S, serve
from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from wheelspec.conformance.check.generate import generate
from wheelspec.spec import ops

#: lines orjson refuses or reads otherwise than the standard parser: each must get the standard
#: path's verdict and words
MALFORMED = [
    b'{"id":1,"ok":true,"now":NaN}', b'{"id":1,"ok":true,"now":Infinity}', b'\xef\xbb\xbf{"id":1}',
    b'{"id":1,"ok":true,"now":5} trailing', b'{"id":1,"now":"\xff"}', b'{"id":1,"now":"\xed\xa0\x80"}',
    b'{"id":1,"now":"\\ud800"}', b'{"id":1,"now":"\\udc00x"}', b'[' * 2000 + b']' * 2000,
    b'[' * 17 + b']' * 17, b'{"id":1,"now":18446744073709551616}', b'{"id":1,"now":-9223372036854775809}',
    b'{"id":1,"now":99999999999999999999999}', b'{"id":1,"now":18446744073709551615}', b'{"id":1,"ok":tru}', b'',
    b'{"id":1,"now":"\x01"}', b'\x0c{}', b'00', b'[1,]', b'[' * 513 + b']' * 513,
]


def test_a_line_nested_ten_million_deep_is_one_error_not_a_crash():
    # orjson would crash the process on it (its parser recurses without a limit)
    with pytest.raises(ProtocolError, match="nested too deep to parse"):
        parse_line(b'[' * 10_000_000 + b']' * 10_000_000)

#: well-formed lines (one is accepted only by a path that reads 19-digit integers right)
WELL_FORMED = [
    b'{"id":3,"ok":true,"now":12,"events":[{"kind":"fire","now":12,"task":1}],"result":true}',
    b'{"id":1,"now":9223372036854775807,"m":-9223372036854775808}', b'{"id":1,"now":1e400}',
    b'{"id":1,"ok":true,"now":1,"events":[' + b'{"kind":"fire","now":1,"task":1},' * 600 + b'[]]}',
    b'{"id":1,"s":"\\ud83d\\ude00 \xc3\xa9 \\u00e9 \\/"}', b' {"id":1,"a":[1.5,-0,-0.0,1E3]}\t',
    b'{"id":1,"a":' + b'[' * 15 + b']' * 15 + b'}', b'{"a":1,"a":2}',
]


def _strict(raw: bytes) -> object:
    try:
        return ("value", lines._parse_strict(raw, "response"))
    except ProtocolError as e:
        return ("error", str(e), getattr(e, "field", None))


@pytest.mark.parametrize("raw", MALFORMED + WELL_FORMED, ids=lambda r: repr(r[:30]))
def test_parse_line_gives_the_standard_parsers_verdict_value_and_words(raw):
    try:
        got: object = ("value", parse_line(raw))
    except ProtocolError as e:
        got = ("error", str(e), getattr(e, "field", None))
        assert "\n" not in str(e) and str(e).strip(), str(e)
    want = _strict(raw)
    assert repr(got) == repr(want)  # (repr: -0.0 and 0.0 compare equal)
    if raw in MALFORMED:
        assert got[0] == "error", f"{raw[:60]!r} was accepted: {got}"
    else:
        assert got[0] == "value"


def test_an_integer_beyond_64_bits_is_refused_though_orjson_reads_it_as_a_float():
    # (the case that makes parse_line leave 19-digit lines to the standard parser)
    with pytest.raises(ProtocolError, match="outside signed 64 bits"):
        parse_line(b'{"id":1,"ok":true,"now":18446744073709551616}')


MESSAGES = [
    {"id": 1, "type": "bye"}, {"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]},
    {"id": 4, "ok": False, "error": {"type": "invalid", "message": "caf\u00e9 \u2603 \ud83d\ude00"}},
    {"id": 5, "ok": True, "now": 2**63 - 1, "events": [], "result": [1, 2, -(2**63)]},
    {"id": 6, "big": 2**70, "k": None, "b": [True, False]}, {"id": 7, "s": "quote\" back\\ tab\t nl\n \x00 \x7f"},
    {"id": 8, "f": [0.1, 1e16, 1.5e-7, -0.0, 2.0**70, 1e-320], "s": "e1 1e5"},
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: str(m["id"]))
def test_encode_line_writes_the_bytes_of_the_standard_compact_encoder(msg):
    assert encode_line(msg) == (json.dumps(msg, separators=(",", ":")) + "\n").encode()


_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70)
    | st.text(alphabet=st.sampled_from("09eE+-.\x7f\u00e9 \"\\"), max_size=6) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10)


@example(6.103515625e-05)  # orjson writes 0.00006103515625, with no exponent
@example(1e16)
@given(_ANY_JSON)
def test_encode_line_writes_the_standard_bytes_for_any_value(value):
    """The folded-bytes checks of encode_line send every line orjson would write otherwise (a float,
    DEL, non-ASCII text, an integer past 64 bits) to the standard encoder."""
    msg = {"id": 1, "v": value}
    assert encode_line(msg) == (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def test_every_generated_request_is_encoded_as_before():
    for kind in ("timer", "purgatory"):
        for seed in range(30):
            cfg, schedule = generate(kind, seed)
            reqs = [{"id": 1, "type": "reset", "config": cfg.to_dict()}]
            reqs += [{"id": i + 2, "type": "op", "op": op.to_dict()} for i, op in enumerate(schedule)]
            for r in reqs:
                assert encode_line(r) == (json.dumps(r, separators=(",", ":")) + "\n").encode()


class _SpyText(io.StringIO):
    """A text stream counting its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, s: str) -> int:
        self.writes.append(s)
        return super().write(s)


def test_serve_answers_a_window_that_arrived_together_with_one_write():
    op_lines = [{"id": i + 2, "type": "op", "op": ops.AddTask(i, 5 + i).to_dict()} for i in range(10)]
    reqs = [{"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]},
            {"id": 1, "type": "reset", "config": Config().to_dict()}, *op_lines, {"id": 12, "type": "bye"}]
    out = _SpyText()
    serve(reference_adapter(), io.StringIO("".join(json.dumps(r) + "\n" for r in reqs)), out)
    assert len(out.writes) == 1, f"{len(out.writes)} writes for one window"
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == list(range(13)) and all(a["ok"] for a in answers)


class _Slow:
    """The reference, taking ``pause`` seconds per operation."""

    def __init__(self, pause: float) -> None:
        self.inner, self.pause = reference_adapter(), pause

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def request(self, op: ops.Op) -> object:
        time.sleep(self.pause)
        return self.inner.request(op)


def test_serve_holds_no_answer_back_long_for_the_rest_of_its_window():
    op_lines = [{"id": i + 2, "type": "op", "op": ops.AddTask(i, 5 + i).to_dict()} for i in range(5)]
    reqs = [{"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]},
            {"id": 1, "type": "reset", "config": Config().to_dict()}, *op_lines]
    out = _SpyText()
    serve(_Slow(2 * HOLD_S), io.StringIO("".join(json.dumps(r) + "\n" for r in reqs)), out)
    assert len(out.writes) >= 5, out.writes  # each slow answer went out as soon as it was held too long
    assert [json.loads(x)["id"] for x in out.getvalue().splitlines()] == list(range(7))


def test_serve_answers_a_malformed_request_line_with_one_invalid_error_quoting_it():
    out = io.StringIO()
    serve(reference_adapter(), io.StringIO('{"id":0,"type":"hello","protocol":1}\nnot json at all\n'), out)
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert answers[1] == {"id": None, "ok": False,
                          "error": {"type": "invalid", "message": "bad request line 'not json at all'"}}


def test_the_runner_writes_a_pipelined_window_in_one_write(monkeypatch):
    adapter = SubprocessAdapter(serve_command("reference"))
    try:
        assert adapter.pipeline > 20
        cfg, _ = generate("timer", 0)
        schedule = [ops.AddTask(i, 10 + i) for i in range(20)]
        fd = adapter._proc.stdin.fileno()  # (started by the hello above)
        writes: list[bytes] = []
        real_write = os.write

        def spy(f: int, data: bytes) -> int:
            if f == fd:
                writes.append(bytes(data))
            return real_write(f, data)

        monkeypatch.setattr(os, "write", spy)
        adapter.submit(cfg, schedule)
        monkeypatch.setattr(os, "write", real_write)
        assert len(writes) == 1 and writes[0].count(b"\n") == 21, [w.count(b"\n") for w in writes]
        adapter.receive_reset()
        answers = [adapter.receive() for _ in schedule]
        assert all(a.error is None for a in answers)
    finally:
        adapter.close()


def _served(*reqs: dict) -> list[dict]:
    lines = [{"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]},
             {"id": 1, "type": "reset", "config": Config().to_dict()}, *reqs]
    out = io.StringIO()
    serve(reference_adapter(), io.StringIO("".join(json.dumps(r) + "\n" for r in lines)), out)
    return [json.loads(x) for x in out.getvalue().splitlines()][2:]


def test_serve_reads_requests_orjson_would_read_otherwise_as_json_loads_does():
    # an integer past 64 bits (orjson: a float) is the engine's range refusal, not a malformed request
    big = {"id": 2, "type": "op", "op": {"kind": "add", "task": 1, "delay": 10**20}}
    # a lone surrogate escape (orjson refuses the line) reaches the engine as the key it is (which
    # refuses it: not UTF-8), not "bad request line" with id null
    lone = {"id": 3, "type": "op", "op": ops.Watch(7, 10, ("\ud800",)).to_dict()}
    answers = _served(big, lone)
    assert answers[0]["id"] == 2 and answers[0]["error"]["type"] == "range", answers[0]
    assert answers[1]["id"] == 3 and "surrogates not allowed" in answers[1]["error"]["message"], answers[1]
