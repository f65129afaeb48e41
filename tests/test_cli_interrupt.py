"""`wheelspec check` stopped by SIGINT (Ctrl-C) or SIGTERM (a CI timeout): the reports hold every
verdict reached before the signal, for every implementation, and the exit code says interrupted.

The runs are real processes (``python -m wheelspec``) signalled mid-campaign; the tests wait for
the child to be busy (CPU time used, or the partial report of a finished implementation) rather
than for a fixed delay, so a loaded machine does not turn them into checks of nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from wheelspec.conformance.interrupt import Interrupted, atomic_write_text, deferred, signals_raise

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals (SIGTERM as an exception)")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc; elsewhere the wall clock stands in)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(tmp_path: Path, *impl_args: str, schedules: int) -> tuple[subprocess.Popen, Path, Path]:
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    argv = [sys.executable, "-m", "wheelspec", "check", *impl_args, "--schedules", str(schedules),
            "--json", str(j), "--junit-xml", str(x), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, j, x


def _junit_schedules(x: Path) -> dict[str, int]:
    """Schedules per implementation as the JUnit file counts them (its campaign testcases)."""
    out: dict[str, int] = {}
    for suite in ET.parse(x).getroot().iter("testsuite"):
        n = 0
        for tc in suite.iter("testcase"):
            if tc.get("classname", "").endswith(".campaign"):
                n += int(tc.get("name", "").rsplit("(", 1)[1].split()[0])
        out[suite.get("name", "").removeprefix("wheelspec.")] = n
    return out


def _finish(proc: subprocess.Popen, sig: int) -> tuple[int, str, str]:
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"wheelspec check did not stop within 60 s of signal {sig}: {err[-2000:]}")
    return proc.returncode, out, err


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_signal_mid_campaign_keeps_every_verdict_in_json_junit_and_terminal(tmp_path, sig, code, name):
    proc, j, x = _start(tmp_path, "--impl", "reference", schedules=100_000)
    deadline = time.monotonic() + 60
    # Busy in the campaign: imports and the corpus take well under 2 s of CPU.
    while _cpu_seconds(proc.pid) < 3.0 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    if sys.platform != "linux":
        time.sleep(4)
    assert proc.poll() is None, proc.communicate()
    rc, out, err = _finish(proc, sig)

    assert rc == code
    doc = json.loads(j.read_text())
    (impl,) = doc["implementations"]
    judged = impl["campaign"]["schedules"]
    assert judged > 0 and impl["incomplete"] is True and impl["status"] == "incomplete"
    assert doc["exit_code"] == code and doc["interrupted"] == {"signal": name, "exit_code": code}
    assert err.strip().splitlines() == [f"wheelspec check: interrupted by {name}"]
    assert impl["stopped"][0]["reason"] == "interrupted" and impl["stopped"][0]["schedules"] == judged
    assert _junit_schedules(x) == {"reference": judged}
    root = ET.parse(x).getroot()
    errors = [e for e in root.iter("error") if e.get("type") == "interrupted"]
    assert len(errors) == 1 and name in errors[0].get("message", "")
    # The terminal summary is printed too, with the same count.
    assert f"{judged} (0)" in out and "INCOMPLETE" in out and f"interrupted by {name}" in out


@pytest.mark.slow
def test_a_signal_during_the_second_implementation_keeps_the_first_whole(tmp_path):
    proc, j, x = _start(tmp_path, "--impl", "reference", "--impl", "reference-subprocess", "--impl", "optimized",
                        "--no-corpus", "--kinds", "timer", schedules=3000)
    deadline = time.monotonic() + 120
    # The partial report appears when the first implementation is done.
    while not j.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert j.exists() and proc.poll() is None, proc.communicate()
    first = json.loads(j.read_text())["implementations"]
    assert first[0]["campaign"]["schedules"] == 3000 and first[1]["status"] == "not run"
    time.sleep(1.0)
    rc, out, err = _finish(proc, signal.SIGINT)

    assert rc == 130, err
    doc = json.loads(j.read_text())
    ref, sub, opt = doc["implementations"]
    assert ref["status"] == "pass" and ref["incomplete"] is False and ref["campaign"]["schedules"] == 3000
    assert sub["incomplete"] is True and sub["status"] == "incomplete"
    assert 0 < sub["campaign"]["schedules"] < 3000
    assert opt["status"] == "not run" and opt["campaign"]["schedules"] == 0
    assert _junit_schedules(x) == {"reference": 3000, "reference-subprocess": sub["campaign"]["schedules"],
                                   "optimized": 0}
    skipped = [s.get("message", "") for s in ET.parse(x).getroot().iter("skipped")]
    assert any("not run" in m for m in skipped)


def test_sigterm_raises_interrupted_and_handlers_are_restored():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as info, signals_raise():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
    assert info.value.signum == signal.SIGTERM and info.value.exit_code == 143
    assert isinstance(info.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_signal_waits_for_a_report_being_written(tmp_path):
    p = tmp_path / "report.json"
    p.write_text("old")
    with pytest.raises(Interrupted), signals_raise():
        with deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            atomic_write_text(p, "new")  # not cut by the signal
        pytest.fail("the deferred signal was not raised after the block")
    assert p.read_text() == "new"
    assert [f.name for f in tmp_path.iterdir()] == ["report.json"]  # no temporary file left
