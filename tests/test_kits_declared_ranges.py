"""Every adapter kit declares a narrower range (docs/guides/KITS.md, "A timer with a narrower range"): the
toy timer of each kit, made to declare delays 1..4095 and clock readings 0..2^32-1 the way the
kit's README says, answers the hello with that range, refuses outside it before the timer is
called, and its `wheelspec check` shows the declaration as one ``ranges`` finding and nothing else.

Like tests/test_kits.py, each test needs its language's toolchain and fails, never skips, without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_kits import TOOLS, _outcome, _session, built_toy, checked_toy

from wheelspec.conformance.cli.init_adapter import KITS
from wheelspec.spec import limits

CLOCK_HI = 2**32 - 1
#: per kit: the line of its toy (the file the user fills in) that declares nothing, and the same
#: line declaring delays 1..4095 and clock readings 0..2^32-1 as the kit's README shows
DECLARE = {
    "java": ('new WheelspecAdapter.Info("java-toy-heap-timer", "0.1", "strict")',
             'new WheelspecAdapter.Info("java-toy-heap-timer", "0.1", "strict")'
             f".withRanges(new WheelspecAdapter.Ranges(1, 4095, 0, {CLOCK_HI}L))"),
    "javascript": ('configurable: ["start_ms"] },',
                   f'configurable: ["start_ms"], ranges: {{ delay: [1, 4095], time: [0, {CLOCK_HI}] }} }},'),
    "rust": ("        ranges: None,",
             f"        ranges: Some(wheelspec_adapter::Ranges {{ delay: (1, 4095), time: (0, {CLOCK_HI}) }}),"),
    "go": ('Configurable: []string{"start_ms"}},',
           f'Configurable: []string{{"start_ms"}}, Ranges: &Ranges{{Delay: [2]int64{{1, 4095}}, '
           f'Time: [2]int64{{0, {CLOCK_HI}}}}}}},'),
    "cpp": ("    // info.ranges = wheelspec::Ranges{{1, 4095}};",
            f"    info.ranges = wheelspec::Ranges{{{{1, 4095}}, {{0, {CLOCK_HI}}}}};"),
}


def _built(lang: str, tmp_path: Path) -> str:
    """The kit's toy made to declare the range, built: the command line that runs it."""
    return built_toy(lang, tmp_path, *DECLARE[lang])


@pytest.mark.slow
@pytest.mark.parametrize("lang", [pytest.param(lang, marks=pytest.mark.external(TOOLS[lang])) for lang in sorted(KITS)])
def test_kit_declares_a_narrower_range_and_is_reported_once(tmp_path: Path, capsys, monkeypatch,
                                                             lang: str) -> None:
    run = _built(lang, tmp_path)
    argv = ["bash", "-c", f"exec {run}"]

    def op(kind: str, **fields: object) -> dict:
        return {"type": "op", "op": {"kind": kind, **fields}}

    session = [({"type": "hello", "protocol": 1, "protocols": [1, 2]}, "ok"),
               ({"type": "reset", "config": {"start_ms": 0}}, "ok"),
               (op("add", task=1, delay=0), "range"), (op("add", task=1, delay=4096), "range"),
               (op("add", task=1, delay=limits.MAX_DELAY_MS + 1), "range"),
               (op("add", task=1, delay=4095), "ok"), (op("add", task=2, delay=1), "ok"),
               (op("advance", time=CLOCK_HI + 1), "range"), (op("advance", time=CLOCK_HI), "ok"),
               ({"type": "bye"}, "ok")]
    answers, code = _session(argv, tmp_path, [r for r, _ in session])
    assert [_outcome(a) for a in answers] == [want for _, want in session] and code == 0
    assert answers[0]["capabilities"]["ranges"] == {"delay": [1, 4095], "time": [0, CLOCK_HI]}
    assert [e["task"] for e in answers[8]["events"]] == [2, 1]  # refused requests changed nothing

    rc, rep = checked_toy(run, tmp_path, monkeypatch, capsys, 100)
    found = ([f for s in rep["scenarios"] for f in s["failures"]]
             + [f for o in rep["campaign"]["failures"] for f in o["failures"]])
    assert rc == 1 and [f["prop"] for f in found] == ["ranges"], found
    assert f"declares delays [1, 4095] and clock readings [0, {CLOCK_HI}]" in found[0]["message"]
    assert rep["verdicts"] == {"strict": "pass", "ranges": "fail"}
