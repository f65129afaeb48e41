"""Protocol v1: message validation, the Python server, and the page's example sessions."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.adapters.answers import decode_response, result_event
from wheelspec.conformance.adapters.protocol import Capabilities, Config, ProtocolError
from wheelspec.conformance.adapters.serve import serve
from wheelspec.spec import events as ev
from wheelspec.spec import ops

ROOT = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")


def test_capabilities_defaults_and_effective_config():
    caps = Capabilities.from_dict({"profile": "strict", "configurable": ["start_ms"]})
    assert (caps.timer, caps.purgatory, caps.time) == (True, False, "virtual")
    eff = caps.effective(Config(tick_ms=10, wheel_size=5, start_ms=7, purge_interval=3))
    assert (eff.start_ms, eff.purge_interval) == (7, 3)
    assert not caps.is_wheel()
    wheel = Capabilities.from_dict({"profile": "kafka", "tick_ms": 10, "wheel_size": 64})
    assert wheel.is_wheel() and wheel.effective(Config(tick_ms=1)).tick_ms == 10


@pytest.mark.parametrize("bad, words", [
    ({"profile": "lenient"}, "capabilities.profile"),
    ({"time": "sometimes"}, "capabilities.time"),
    ({"timer": False, "purgatory": False}, "timer, a purgatory"),
    ({"tick_ms": 0}, "capabilities.tick_ms"),
    ({"configurable": ["speed"]}, "capabilities.configurable"),
    ({"colour": "blue"}, "unknown key 'colour'"),
])
def test_capabilities_refused_with_a_reason(bad, words):
    with pytest.raises(ProtocolError, match=re.escape(words)):
        Capabilities.from_dict(bad)


@pytest.mark.parametrize("msg, op, words", [
    ({"ok": True, "now": 0, "events": [], "result": "7"}, ops.AddTask(1, 7), "must be an integer"),
    ({"ok": True, "now": 0, "events": [], "result": 1}, ops.CancelTask(1), "true or false"),
    ({"ok": True, "now": 0, "events": [], "result": 0}, ops.AdvanceTo(3), "must be null"),
    ({"ok": True, "events": [], "result": None}, ops.AdvanceTo(3), "integer \"now\""),
    ({"ok": True, "now": 0, "events": [{"kind": "add", "now": 0, "task": 1, "delay": 1, "exp": 1}], "result": 1},
     ops.AddTask(1, 1), "not a caused event"),
    ({"ok": True, "now": 0, "events": [{"kind": "fire", "now": 0}], "result": None}, ops.AdvanceTo(0), "missing field"),
    ({"ok": True, "now": 0, "events": [], "result": None, "extra": 1}, ops.AdvanceTo(0), "unknown field 'extra'"),
    ({"ok": False, "error": {"type": "oops", "message": ""}}, ops.Size(), "error response needs"),
    ({"now": 0}, ops.Size(), "boolean \"ok\""),
])
def test_bad_responses_are_protocol_errors(msg, op, words):
    with pytest.raises(ProtocolError, match=re.escape(words)):
        decode_response({"id": 1, **msg}, op)


def test_error_response_decodes():
    r = decode_response({"id": 1, "ok": False, "error": {"type": "range", "message": "too far"}}, ops.AddTask(1, 2**41))
    assert r.error == ("range", "too far")


def test_result_event_is_built_from_op_and_result():
    assert result_event(ops.AddTask(3, 5), 10, 15) == ev.Add(10, 3, 5, 15)
    assert result_event(ops.CancelForKey("k"), 0, [1, 2]) == ev.CancelForKey(0, "k", (1, 2))
    assert result_event(ops.Watch(1, 5, ("a",)), 0, False) == ev.TryCompleteElseWatch(0, 1, 5, ("a",), False)


def test_serve_answers_every_request_type_in_process():
    reqs = [{"id": 0, "type": "hello", "protocol": 1},
            {"id": 1, "type": "reset", "config": {"tick_ms": 10}},
            {"id": 2, "type": "op", "op": {"kind": "add", "task": 1, "delay": 9}},
            {"id": 3, "type": "op", "op": {"kind": "add", "task": 2, "delay": 2**40}},
            {"id": 4, "type": "op", "op": {"kind": "teleport"}},
            {"id": 5, "type": "dance"},
            {"id": 6, "type": "bye"}]
    out = io.StringIO()
    serve(reference_adapter(), io.StringIO("".join(json.dumps(r) + "\n" for r in reqs)), out)
    got = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [g["id"] for g in got] == [0, 1, 2, 3, 4, 5, 6]
    assert got[0]["protocol"] == 1 and got[0]["capabilities"]["profile"] == "kafka"
    # tick 10: exp 9 is in the window the clock stands in, so Kafka runs it inside add
    assert got[2] == {"id": 2, "ok": True, "now": 0, "events": [{"kind": "fire", "now": 0, "task": 1, "exp": 9}],
                      "result": 9}
    assert got[3]["error"]["type"] == "range"
    assert got[4]["ok"] is False and "teleport" in got[4]["error"]["message"]
    assert got[5]["ok"] is False and got[6] == {"id": 6, "ok": True}


def _sessions():
    text = (ROOT / "docs" / "guides" / "PROTOCOL.md").read_text()
    return re.findall(r"```\n(> .*?)```", text, re.S)


def _replay_session(block: str, argv: list[str], prefix: list[str]) -> None:
    lines = block.strip().split("\n")
    reqs = prefix + [line[2:] for line in lines if line.startswith("> ")]
    want = [json.loads(line[2:]) for line in lines if line.startswith("< ")]
    proc = subprocess.run(argv, input="\n".join(reqs) + "\n", capture_output=True, text=True, timeout=60, cwd=ROOT)
    got = [json.loads(line) for line in proc.stdout.splitlines()][len(prefix):]
    assert len(got) == len(want), proc.stderr
    for g, w in zip(got, want):
        assert g == w


def test_protocol_page_has_two_example_sessions():
    assert len(_sessions()) == 3


@pytest.mark.external("node")
def test_protocol_page_timer_session_is_what_the_js_adapter_says():
    """The full example session on docs/guides/PROTOCOL.md, replayed byte for byte against the JS adapter."""
    if NODE is None:
        pytest.fail("node is not installed: the JavaScript adapter fixture needs it "
                    "(bash .ci/system-deps, or apt-get install nodejs)")
    _replay_session(_sessions()[0], [NODE, "docs/examples/heap_timer.js"], [])


def test_protocol_page_purgatory_session_is_what_the_reference_says():
    prefix = ['{"id":0,"type":"hello","protocol":1}',
              '{"id":1,"type":"reset","config":{"tick_ms":1,"wheel_size":20,"start_ms":0,"purge_interval":1000}}']
    _replay_session(_sessions()[1], [sys.executable, "-m", "wheelspec.conformance.adapters.serve", "reference"], prefix)
