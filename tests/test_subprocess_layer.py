"""The subprocess layer survives any child: deadlines on writes, the process group killed, a linear
line reader with a size limit, stderr read in large chunks with its first and last lines kept and
cleaned, and malformed responses reported as protocol violations naming the request and the field
(never a verdict on the implementation).  None of these tests measures time: each checks counts,
messages or process states, with generous deadlines only against hanging forever."""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.adapters.answers import _plain_response, decode_response, validated_response
from wheelspec.conformance.adapters.lines import check_shape, parse_line
from wheelspec.conformance.adapters.protocol import (
    Capabilities,
    Config,
    ProtocolError,
    clean_text,
)
from wheelspec.conformance.adapters.subprocess_adapter import (
    CHUNK,
    AdapterError,
    LivenessError,
    SubprocessAdapter,
)
from wheelspec.conformance.cli import main
from wheelspec.spec import ops

HELLO = ('{"id":0,"ok":true,"protocol":1,"name":"scripted","capabilities":'
         '{"profile":"strict","configurable":["start_ms"]}}')


def _child(tmp_path: Path, body: str, name: str = "child.py") -> list[str]:
    """A child that answers the hello (after ``before_hello()``, then runs ``after_hello()``),
    then ``on_request(req)`` for every later request (its return value, if any, is written as the answer line)."""
    script = tmp_path / name
    script.write_text(textwrap.dedent("""
        import json, os, subprocess, sys, time
        out = sys.stdout.buffer
        def before_hello():
            pass
        def on_request(req):
            return None
        def after_hello():
            pass
    """) + textwrap.dedent(body) + textwrap.dedent(f"""
        before_hello()
        sys.stdin.readline()
        out.write({HELLO!r}.encode() + b"\\n"); out.flush()
        after_hello()
        for line in sys.stdin:
            req = json.loads(line)
            if req["type"] == "bye":
                break
            if req["type"] == "reset":
                out.write(json.dumps({{"id": req["id"], "ok": True}}).encode() + b"\\n"); out.flush()
                continue
            ans = on_request(req)
            if ans is not None:
                out.write(ans if isinstance(ans, bytes) else ans.encode()); out.flush()
    """))
    return [sys.executable, str(script)]


def _in_time(fn: Any, seconds: float = 60) -> Any:
    """Run ``fn`` in a thread; a runner that blocks forever fails here instead of hanging the suite."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(fn).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


def _dead(pid: int) -> bool:
    """Is ``pid`` gone (or a zombie)?  Waits a little: SIGKILL is delivered asynchronously."""
    for _ in range(200):
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie waiting for its (container) init to reap it is dead too
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


# ----------------------------------------------------------------- deadlines and processes ------
@pytest.mark.slow
def test_a_child_that_stops_reading_stdin_is_a_timeout_not_a_hung_runner(tmp_path):
    a = SubprocessAdapter(_child(tmp_path, """
        def after_hello():
            time.sleep(600)  # never reads its stdin again
    """), timeout=1)
    a.hello()
    big = {"type": "blob", "data": "x" * (8 << 20)}  # far more than a pipe holds

    def call():
        with pytest.raises(LivenessError) as e:
            a.call(big, 1)
        return e.value

    err = _in_time(call)
    a.close()
    assert err.reason == "timeout" and "stopped reading its stdin" in str(err)
    assert "request #1" in str(err)


def test_a_grandchild_holding_stdout_does_not_hide_the_exit_code_and_is_killed(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    argv = _child(tmp_path, f"""
        def before_hello():
            g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # inherits stdout
            open({str(pidfile)!r}, "w").write(str(g.pid))
        def on_request(req):
            print("child: giving up", file=sys.stderr, flush=True)
            os._exit(5)
    """)
    a = SubprocessAdapter(argv, timeout=30)
    a.hello()
    gpid = int(pidfile.read_text())
    assert not _gone(gpid)
    with pytest.raises(LivenessError) as e:
        _in_time(lambda: a.call({"type": "op"}, 30))
    assert e.value.reason == "exit"
    assert "exited with code 5" in str(e.value) and "no response" not in str(e.value)
    assert "child: giving up" in str(e.value)
    assert _dead(gpid)


def test_close_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    a = SubprocessAdapter(_child(tmp_path, f"""
        def before_hello():
            g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            open({str(pidfile)!r}, "w").write(str(g.pid))
    """), timeout=5)
    a.hello()
    gpid = int(pidfile.read_text())
    assert not _gone(gpid)
    a.close()
    assert _dead(gpid)


# ----------------------------------------------------------------- the line reader ---------------
def test_a_50_mb_line_is_refused_at_the_limit_after_one_pass(tmp_path):
    a = SubprocessAdapter(_child(tmp_path, """
        def on_request(req):
            return b'{"id":1,"pad":"' + b"x" * (50 << 20) + b'"}\\n'
    """), timeout=60)
    a.hello()
    with pytest.raises(AdapterError) as e:
        _in_time(lambda: a.call({"type": "blob"}, 60))
    a.close()
    assert not isinstance(e.value, LivenessError)
    assert "request #1 \"blob\": sent a line longer than the limit of 16 MiB" in str(e.value)
    # each byte searched for the newline once: linear, however the pipe splits the line
    assert a.scanned <= (16 << 20) + CHUNK


def test_a_20_mb_line_is_read_in_one_pass(tmp_path):
    n = 20 << 20
    a = SubprocessAdapter(_child(tmp_path, f"""
        def on_request(req):
            return b'{{"id":1,"ok":true,"pad":"' + b"x" * {n} + b'"}}\\n'
    """), timeout=60, max_line=32 << 20)
    a.hello()
    scanned_before = a.scanned
    msg = _in_time(lambda: a.call({"type": "blob"}, 60))
    a.close()
    assert len(msg["pad"]) == n
    assert a.scanned - scanned_before <= n + 100


def test_20_mb_of_stderr_before_the_answer_is_read_in_large_chunks_first_and_last_lines_kept(tmp_path):
    lines = 200_000  # 100 bytes each
    a = SubprocessAdapter(_child(tmp_path, f"""
        def before_hello():
            for i in range({lines}):
                sys.stderr.write(f"log line {{i:08d}} " + "y" * 81 + "\\n")
            sys.stderr.flush()
        def on_request(req):
            os._exit(2)
    """), timeout=30, start_timeout=60)
    assert _in_time(a.hello).name == "scripted"
    with pytest.raises(LivenessError) as e:
        a.call({"type": "op"}, 30)
    log = a.stderr
    assert log.lines == lines
    assert log.head[0].startswith("log line 00000000") and log.tail[-1].startswith(f"log line {lines - 1:08d}")
    assert log.reads <= 20 * (lines * 100) // 4096  # chunks, not bytes
    msg = str(e.value)
    assert "log line 00000000" in msg and f"log line {lines - 1:08d}" in msg and "more lines" in msg


def test_ansi_and_nul_in_stderr_are_stripped_from_messages(tmp_path):
    a = SubprocessAdapter(_child(tmp_path, r"""
        def on_request(req):
            sys.stderr.write("\x1b[31mFATAL\x1b[0m boom\x00here\x07 \x1b]0;title\x07done\n")
            sys.stderr.flush()
            os._exit(4)
    """), timeout=30)
    a.hello()
    with pytest.raises(LivenessError) as e:
        a.call({"type": "op"}, 30)
    msg = str(e.value)
    assert "FATAL boom here" in msg and "done" in msg
    assert not any(ord(c) < 32 for c in msg)
    el = ET.Element("error", message=msg)
    el.text = msg
    ET.fromstring(ET.tostring(el))  # valid XML


# ----------------------------------------------------------------- malformed responses -----------
@pytest.mark.parametrize("answer, field", [
    ('{"id":%d,"ok":true,"now":0,"events":' + "[" * 100_000 + "]" * 100_000 + ',"result":null}', "nested"),
    ('{"id":%d,"ok":true,"now":0,"events":[{"kind":["fire"],"now":0,"task":1,"exp":0}],"result":null}',
     "events[0]: unknown event kind ['fire']"),
    ('{"id":%d,"ok":true,"now":0,"events":[{"kind":{"a":1},"now":0}],"result":null}', "events[0]: unknown event kind"),
    ('{"id":%d,"ok":true,"now":0,"events":[{"kind":5,"now":0}],"result":null}', "events[0]: unknown event kind 5"),
    ('{"id":%d,"ok":true,"now":99999999999999999999999,"events":[],"result":null}', "outside signed 64 bits"),
    ('{"id":%d,"ok":true,"now":NaN,"events":[],"result":null}', "not JSON"),
], ids=["deep", "list-kind", "dict-kind", "int-kind", "huge-now", "nan"])
def test_malformed_responses_are_protocol_errors_naming_request_and_field(tmp_path, answer, field):
    a = SubprocessAdapter(_child(tmp_path, f"""
        def on_request(req):
            return ({answer!r} % req["id"]) + "\\n"

    """), timeout=30)
    a.hello()
    a.reset(Config())
    with pytest.raises(AdapterError) as e:
        a.request(ops.AdvanceTo(3))
    a.close()
    assert not isinstance(e.value, LivenessError)
    assert 'request #2 {"kind":"advance","time":3}' in str(e.value) and field in str(e.value)


def test_check_reports_a_deep_response_as_a_protocol_error_not_a_verdict(tmp_path, capsys):
    deep = '{"id":%d,"ok":true,"now":0,"events":' + "[" * 100_000 + "]" * 100_000 + ',"result":null}'
    argv = _child(tmp_path, f"""
        def on_request(req):
            return ({deep!r} % req["id"]) + "\\n"
    """)
    code = main(["check", "--no-corpus", "--schedules", "3", "--kinds", "timer", "--timeout", "30",
                 "--impl", "cmd:" + " ".join(argv), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2
    text = captured.out + captured.err
    assert "nested" in text and "refused-valid" not in text and "flaky" not in text
    assert "Traceback" not in captured.err


# ----------------------------------------------------------------- fuzzing the decoder -----------
def _valid_answers() -> list[tuple[ops.Op, dict[str, Any]]]:
    """Real answers of the reference to a schedule touching every op kind and event kind."""
    ad = reference_adapter()
    ad.reset(Config(tick_ms=1, wheel_size=20, start_ms=0, purge_interval=0))
    sched = [ops.AddTask(1, 5), ops.AddTask(2, -1), ops.CancelTask(1), ops.Size(), ops.AdvanceTo(6),
             ops.Watch(0, 3, ("a", 1), False), ops.Watch(1, 50, ("a",), True), ops.SetCompletable(0, True),
             ops.Watch(2, 2, ("b",), False), ops.CheckAndComplete("a"), ops.AdvanceTo(20), ops.CancelForKey("a"),
             ops.Watch(3, 9, ("c",), False), ops.ForceComplete(3), ops.Watched(), ops.NumDelayed(),
             ops.AddTask(3, 2**41)]
    out = [(op, ad.request(op).to_wire(7)) for op in sched]
    ad.close()
    return out


VALID = _valid_answers()
JSON_LEAF = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63 - 2, max_value=2**70)
             | st.floats(allow_nan=False) | st.text(max_size=8)
             | st.sampled_from(["\x1b[31m", "\x00", "\ud800", "fire", "expire", "range", "try"]))
JSON = st.recursive(JSON_LEAF, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                    max_leaves=8)


def _paths(v: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, path + (i,))
    return out


def _set(v: Any, path: tuple, new: Any, delete: bool) -> Any:
    if not path:
        return new
    v = json.loads(json.dumps(v))
    cur = v
    for k in path[:-1]:
        cur = cur[k]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = new
    return v


@st.composite
def _mutated(draw: Any) -> tuple[ops.Op, bytes]:
    op, msg = draw(st.sampled_from(VALID))
    how = draw(st.sampled_from(["replace", "replace", "delete", "add", "deep", "bytes", "none"]))
    if how in ("replace", "delete"):
        path = draw(st.sampled_from(_paths(msg)))
        if path and path != ("id",):
            msg = _set(msg, path, draw(JSON), how == "delete")
    elif how == "add":
        msg = {**msg, draw(st.text(max_size=6)): draw(JSON)}
    raw = json.dumps(msg, separators=(",", ":")).encode()
    if how == "deep":
        n = draw(st.sampled_from([20, 1_000, 100_000]))
        raw = raw[:-1] + b',"result":' + b"[" * n + b"]" * n + b"}"
    elif how == "bytes":
        i = draw(st.integers(0, len(raw)))
        raw = raw[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"1e999", b"}"])) + raw[i:]
    return op, raw


@pytest.mark.slow
@settings(max_examples=examples(300, 2000))
@given(_mutated())
def test_fuzz_malformed_responses_decode_correctly_or_name_the_field(case):
    op, raw = case
    try:
        msg = parse_line(raw)
        resp = decode_response(msg, op)
    except ProtocolError as e:
        field = getattr(e, "field", "")
        assert field, e
        root = field.split(".")[0].split("[")[0]
        assert root in str(e) or field == "line", (field, str(e))
        assert not any(ord(c) < 32 for c in str(e))
        return
    # a correct decode: exactly what the message says
    if msg["ok"]:
        assert resp.error is None and resp.now == msg["now"]
        assert [e.to_dict() for e in resp.events] == msg.get("events", [])
        assert resp.result == msg.get("result")
    else:
        assert resp.error == (msg["error"]["type"], clean_text(msg["error"].get("message", ""), 500))


@settings(max_examples=examples(300, 2000))
@given(_mutated(), st.booleans())
def test_the_plain_reader_answers_as_the_validating_decoder(case, tries):
    """decode_response reads a plain answer without the field-by-field checks; whatever it reads so
    must be exactly the validating decoder's Response, never one that decoder refuses."""
    op, raw = case
    try:
        msg = parse_line(raw)
    except ProtocolError:
        return
    plain = _plain_response(msg, op)
    caps = Capabilities(purgatory=True, protocol=2, reports_try_complete=tries)
    if plain is not None:
        assert validated_response(msg, op, caps) == plain


def test_the_plain_reader_reads_the_common_answers():
    """The answers the reference gives (every op kind, fires, completions, expirations, purges)
    are plain but for a refusal and the answers holding a try_complete event (allowed by the
    capabilities only): the plain reader is not dead code."""
    def expected_plain(msg: dict[str, Any]) -> bool:
        return msg["ok"] and all(e["kind"] != "try_complete" for e in msg["events"])

    plain = [op for op, msg in VALID if _plain_response(msg, op) is not None]
    assert plain == [op for op, msg in VALID if expected_plain(msg)] and len(plain) >= 8
    for op, msg in VALID:
        if _plain_response(msg, op) is not None:
            assert _plain_response(msg, op) == validated_response(msg, op)


# Values check_shape refuses, among ordinary ones: integers past 64 bits, lone surrogates (escaped
# in the line), nesting past the limit.
_EDGY = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**64), 2**64) | st.sampled_from([2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**18, 10**19])
    | st.text(max_size=4) | st.sampled_from(["\ud800", "\udfff", "a\udbffb", "\ud83d\ude00", "\\ud800"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=examples(300, 3000))
@given(_EDGY, st.integers(0, 20))
def test_parse_line_refuses_exactly_what_the_full_shape_walk_refuses(value, depth):
    """parse_line walks a line's value only when its text could be misshapen; the verdict (and the
    field named) must be the full walk's, whichever way the line went."""
    for _ in range(depth):
        value = [value]
    raw = json.dumps(value).encode()  # ensure_ascii: a surrogate travels as an escape
    want: str | None = None
    try:
        check_shape(json.loads(raw))
    except ProtocolError as e:
        want = str(e)
    try:
        parse_line(raw)
        got = None
    except ProtocolError as e:
        got = str(e)
    assert got == want
