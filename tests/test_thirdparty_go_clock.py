"""The ``go-clock-mock`` peer: github.com/benbjohnson/clock's ``Mock`` behind the Go adapter kit
(``conformance/adapters/thirdparty/go_clock/``), built from Debian's packaged library.

What the matrix says of it, pinned on small scenarios: timers of positive delay run never early,
in deadline order, and ``Timer.Stop`` answers exactly; a timer due in the past (delay <= 0) moves
the Mock's clock *back* to its deadline while it fires (``Mock.runNextTimer`` sets ``now`` to each
timer's ``Next()``), which the history checker reports as ``well-formed``.  The tests need Go and
the Debian package (``bash .ci/system-deps`` installs both) and fail, never skip, without them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main

pytestmark = [pytest.mark.external("go"), pytest.mark.timeout(300)]


def _scenario(tmp_path: Path, name: str, steps: list[dict], expect: list[dict | None] | None = None) -> Path:
    doc = {"wheelspec_scenario": 1, "name": f"test/{name}", "description": name,
           "config": {"tick_ms": 1, "wheel_size": 20, "start_ms": 0, "purge_interval": 1000},
           "steps": [dict(s, expect=e) if e is not None else s
                     for s, e in zip(steps, expect or [None] * len(steps))]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def test_builds_and_passes_positive_delays_with_its_own_cancel_and_order(tmp_path: Path, capsys) -> None:
    steps = [{"kind": "add", "task": 1, "delay": 10}, {"kind": "add", "task": 2, "delay": 10},
             {"kind": "add", "task": 3, "delay": 5}, {"kind": "cancel", "task": 2},
             {"kind": "cancel", "task": 2}, {"kind": "advance", "time": 9}, {"kind": "size"},
             {"kind": "advance", "time": 10}]
    expect = [None, None, None, {"result": True}, {"result": False}, {"fired": [3]}, {"result": 1},
              {"fired": [1]}]
    code = main(["replay", str(_scenario(tmp_path, "positive", steps, expect)), "--impl", "go-clock-mock"])
    out = capsys.readouterr().out
    assert code == 0, out


def test_a_timer_due_in_the_past_moves_the_mock_clock_back(tmp_path: Path, capsys) -> None:
    steps = [{"kind": "advance", "time": 5}, {"kind": "add", "task": 0, "delay": -1},
             {"kind": "advance", "time": 5}]
    code = main(["replay", str(_scenario(tmp_path, "negative", steps)), "--impl", "go-clock-mock"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "well-formed" in out and "the clock went back from 5 to 4" in out


@pytest.mark.slow
def test_a_small_campaign_fails_only_on_the_clock_going_back(tmp_path: Path, capsys) -> None:
    report = tmp_path / "check.json"
    code = main(["check", "--impl", "go-clock-mock", "--schedules", "60", "--max-failures", "1000",
                 "--no-corpus", "--out", str(tmp_path / "out"), "--json", str(report)])
    capsys.readouterr()
    assert code == 1
    camp = json.loads(report.read_text())["implementations"][0]["campaign"]
    props = {f["prop"] for run in camp["failures"] for f in run["failures"]}
    messages = [f["message"] for run in camp["failures"] for f in run["failures"]]
    assert props == {"well-formed"} and all(m.startswith("the clock went back") for m in messages)
    assert 0 < camp["failed"] < 60
