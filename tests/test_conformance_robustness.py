"""Robustness against the implementation under test: hangs, crashes, garbage, truncation, wrong
version, wrong ids, bad events. Each is one line naming the adapter, the request number and the
request.  A protocol violation makes `wheelspec check` exit 2 and keep the results gathered before
it; a hang or crash mid-run is a finding instead (tests/test_liveness.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters.subprocess_adapter import AdapterError, SubprocessAdapter
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
BAD = str(ROOT / "tests" / "fixtures" / "bad_adapter.py")


def _drive(mode: str, n: int = -1) -> str:
    # Generous limits except where the hang itself is under test (a loaded CI machine must not
    # turn a slow but healthy request into a false "no response").
    timeout = 3 if mode == "hang" else 30
    start_timeout = 3 if mode == "hang-start" else 60
    a = SubprocessAdapter([sys.executable, BAD, mode, str(n)], timeout=timeout, start_timeout=start_timeout)
    try:
        a.hello()
        for seed in range(10):  # run_ops: the campaign would turn a hang or crash into a finding
            run_ops(a, *generate("timer", seed))
    except AdapterError as e:
        return str(e)
    finally:
        a.close()
    pytest.fail(f"bad adapter mode {mode!r} was not detected")


@pytest.mark.slow
@pytest.mark.parametrize("mode, n, words", [
    ("hang-start", -1, r"request #0 \"hello\": no response within 3 s"),
    ("wrong-version", -1, r"request #0 \"hello\": speaks protocol version 99, this runner speaks 1"),
    ("crash", 5, r"request #5 \{.*\}: exited with code 3; stderr: bad_adapter: simulated crash, giving up"),
    ("garbage", 5, r"request #5 \{.*\}: sent a line that is not JSON: "
                   r"\"Exception in thread main: java.lang.NullPointerException\""),
    ("truncated", 5, r"request #5 \{.*\}: exited with code 0 after a truncated line \"\{\\\"id\\\":5,"),
    ("hang", 4, r"request #4 \{.*\}: no response within 3 s"),
    ("wrong-id", 3, r"request #3 \{.*\}: answered with id 103, expected 3"),
    ("bad-event", 3, r"request #3 \{.*\}: bad response: events\[0\]: unknown event kind 'explode'"),
])
def test_each_breakage_is_one_line_naming_adapter_request_and_problem(mode, n, words):
    msg = _drive(mode, n)
    assert "\n" not in msg
    assert msg.startswith("adapter '")
    assert "bad_adapter.py" in msg
    assert re.search(words, msg), msg


def test_missing_executable_is_a_clear_error():
    a = SubprocessAdapter(["/nonexistent/adapter-binary"], timeout=1)
    with pytest.raises(AdapterError, match="cannot start '/nonexistent/adapter-binary'"):
        a.hello()


def test_check_exits_2_with_one_line_and_keeps_partial_results(tmp_path, capsys):
    report = tmp_path / "r.json"
    junit = tmp_path / "r.xml"
    code = main(["check", "--impl", "reference", "--impl", f"cmd:{sys.executable} {BAD} garbage 40",
                 "--schedules", "5", "--kinds", "timer", "--json", str(report), "--junit-xml", str(junit),
                 "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert re.match(r"wheelspec check: error: adapter 'reference \(.*bad_adapter.py garbage 40\)': request #40 ",
                    lines[0])
    doc = json.loads(report.read_text())
    assert doc["exit_code"] == 2
    ref, bad = doc["implementations"]
    assert ref["status"] == "pass" and ref["campaign"]["schedules"] == 5
    assert bad["status"] == "error" and "request #40" in bad["error"]
    # the scenarios the broken adapter got through before request 40 are in the report
    assert bad["scenarios"] and all(s["status"] in ("pass", "n/a") for s in bad["scenarios"])
    assert "<error" in junit.read_text()


@pytest.mark.slow
def test_cli_process_prints_no_traceback_for_a_hanging_adapter(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "wheelspec", "check",
                           "--impl", f"cmd:{sys.executable} {BAD} hang-start",
                           "--start-timeout", "2", "--schedules", "0"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "request #0 \"hello\": no response within 2 s" in proc.stderr
