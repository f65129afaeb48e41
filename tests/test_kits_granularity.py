"""Every adapter kit declares a granularity (docs/guides/KITS.md, "A coarse timer: a declared
granularity"): the toy timer of each kit, made to declare 7 ms of lateness and 3 ms of earliness
the way the kit's README says, answers the hello with them, and its `wheelspec check` judges it
against them (the toy heap timer is exact, so it passes, judged with the refusals-only oracle).

Like tests/test_kits.py, each test needs its language's toolchain and fails, never skips, without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_kits import TOOLS, _session, built_toy, checked_toy

from wheelspec.conformance.cli.init_adapter import KITS

#: per kit: the line of its toy (the file the user fills in) that declares no granularity, and the
#: same line declaring lateness 7 and earliness 3 as the kit's README shows
DECLARE = {
    "java": ('new WheelspecAdapter.Info("java-toy-heap-timer", "0.1", "strict")',
             'new WheelspecAdapter.Info("java-toy-heap-timer", "0.1", "strict").withGranularity(7, 3)'),
    "javascript": ('configurable: ["start_ms"] },', 'configurable: ["start_ms"], lateness_ms: 7, earliness_ms: 3 },'),
    "rust": ("        lateness_ms: 0,\n        earliness_ms: 0,", "        lateness_ms: 7,\n        earliness_ms: 3,"),
    "go": ('Configurable: []string{"start_ms"}},',
           'Configurable: []string{"start_ms"}, LatenessMs: 7, EarlinessMs: 3},'),
    "cpp": ("    // info.lateness_ms = 1024;", "    info.lateness_ms = 7; info.earliness_ms = 3;"),
}


def _built(lang: str, tmp_path: Path) -> str:
    """The kit's toy made to declare the granularity, built: the command line that runs it."""
    return built_toy(lang, tmp_path, *DECLARE[lang])


@pytest.mark.slow
@pytest.mark.parametrize("lang", [pytest.param(lang, marks=pytest.mark.external(TOOLS[lang])) for lang in sorted(KITS)])
def test_kit_declares_a_granularity_and_is_judged_against_it(tmp_path: Path, capsys, monkeypatch, lang: str) -> None:
    run = _built(lang, tmp_path)
    answers, code = _session(["bash", "-c", f"exec {run}"], tmp_path,
                             [{"type": "hello", "protocol": 1, "protocols": [1, 2]}, {"type": "bye"}])
    caps = answers[0]["capabilities"]
    assert code == 0 and (caps["lateness_ms"], caps["earliness_ms"]) == (7, 3)

    rc, rep = checked_toy(run, tmp_path, monkeypatch, capsys, 40)
    assert rc == 0 and rep["status"] == "pass", rep
    assert (rep["capabilities"]["lateness_ms"], rep["capabilities"]["earliness_ms"]) == (7, 3)
