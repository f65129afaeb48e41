"""The served reference's options (``python -m wheelspec.conformance.adapters.serve --profile P
--protocol N --executor-order O --no-try-complete ENGINE``, docs/guides/PROTOCOL.md section 10): what the
hello declares, and bad arguments as one line with exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from wheelspec.conformance.adapters.engines import reference_adapter, serve_command
from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.adapters.serve import main, serve
from wheelspec.spec import ops

HELLO = json.dumps({"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]}) + "\n"


def _hello(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    """The hello answer of ``serve ARGV`` to a runner offering versions 1 and 2."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(HELLO))
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out.splitlines()[0])


@pytest.mark.parametrize("argv, protocol, caps", [
    (["reference"], 2, {"profile": "kafka", "reports_try_complete": True, "pipeline": 64}),
    (["--protocol", "1", "reference-mock"], 1,
     {"profile": "strict-gt", "configurable": ["start_ms", "purge_interval"]}),
    (["--profile", "strict", "--protocol", "1", "reference"], 1,
     {"profile": "strict", "tick_ms": 1, "configurable": ["wheel_size", "start_ms", "purge_interval"]}),
    (["--executor-order", "either", "--no-try-complete", "reference"], 2, {"executor_order": "either"}),
    (["--executor-order", "purge-before-expire", "reference"], 2, {"executor_order": "purge-before-expire"}),
])
def test_the_hello_declares_the_options(argv, protocol, caps, monkeypatch, capsys):
    got = _hello(argv, monkeypatch, capsys)
    assert got["protocol"] == protocol
    assert {k: got["capabilities"].get(k) for k in caps} == caps
    if "--no-try-complete" in argv or protocol == 1:
        assert "reports_try_complete" not in got["capabilities"]


@pytest.mark.parametrize("argv, words", [
    ([], "the following arguments are required: engine"),
    (["--protocol", "3", "reference"], "argument --protocol: invalid choice: 3"),
    (["--profile", "lenient", "reference"], "argument --profile: invalid choice: 'lenient'"),
    (["--profile", "strict-gt", "--executor-order", "purge-before-expire", "reference"],
     "executor order 'purge-before-expire' is impossible under profile 'strict-gt'"),
    (["--profile", "kafka", "reference-mock"], "reference-mock claims strict-gt, not --profile kafka"),
    (["--protocol", "1", "optimized"], "--protocol applies to the reference engines only"),
    (["--no-try-complete", "no.such.module:factory"], "--no-try-complete applies to the reference engines only"),
    (["nope"], "unknown engine 'nope'"),
    (["reference", "extra"], "unrecognized arguments: extra"),
])
def test_bad_arguments_are_one_line_and_exit_2(argv, words, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("serve: ") and words in err


def test_bad_arguments_from_the_command_line_exit_2_without_a_traceback():
    p = subprocess.run(serve_command("reference", protocol=1)[:-1] + ["--profile", "strict-gt",
                                                                     "--executor-order", "either", "reference"],
                       input=HELLO, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("serve: executor order 'either' is impossible") and len(p.stderr.splitlines()) == 1


def test_serve_command_spells_the_options():
    assert serve_command("reference", profile="strict", protocol=1, executor_order="either",
                         reports_try_complete=False)[1:] == [
        "-m", "wheelspec.conformance.adapters.serve", "--profile", "strict", "--protocol", "1",
        "--executor-order", "either", "--no-try-complete", "reference"]
    assert serve_command("reference")[1:] == ["-m", "wheelspec.conformance.adapters.serve", "reference"]


def _answers(adapter: object, requests: list[dict]) -> list[dict]:
    out = io.StringIO()
    serve(adapter, io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_strict_reference_runs_tick_1_whatever_the_reset_asks():
    """``strict``: the SystemTimer model fixed at tick 1: a task of delay 19 asked at tick 10 fires
    at 19, not at its bucket's start 10 (which the kafka profile, at tick 10, allows)."""
    a = reference_adapter("strict")
    a.reset(Config(tick_ms=10, wheel_size=20))
    a.request(ops.AddTask(1, 19))
    assert [e.task for e in a.request(ops.AdvanceTo(18)).events] == []
    assert [e.task for e in a.request(ops.AdvanceTo(19)).events] == [1]
    k = reference_adapter("kafka")
    k.reset(Config(tick_ms=10, wheel_size=20))
    k.request(ops.AddTask(1, 19))
    assert [e.task for e in k.request(ops.AdvanceTo(10)).events] == [1]


def test_a_protocol_1_reference_refuses_a_cancel_of_a_task_never_added():
    got = _answers(reference_adapter("strict-gt", protocol=1), [
        {"id": 0, "type": "hello", "protocol": 1, "protocols": [1, 2]},
        {"id": 1, "type": "reset", "config": {}},
        {"id": 2, "type": "op", "op": {"kind": "cancel", "task": 7}}])
    assert got[0]["protocol"] == 1
    assert got[2]["ok"] is False and got[2]["error"]["type"] == "unknown-id"


def test_reference_adapter_refuses_what_it_cannot_play():
    with pytest.raises(ValueError, match="unknown profile 'lenient'"):
        reference_adapter("lenient")
    with pytest.raises(ValueError, match="unknown protocol version 3"):
        reference_adapter(protocol=3)
    with pytest.raises(ValueError, match="impossible under profile 'strict-gt'"):
        reference_adapter("strict-gt", "purge-before-expire")
