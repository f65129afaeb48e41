"""The before/after comparison of ``wheelspec check`` reports (benchmarks/verdicts.py): what varies
between two trees' runs of one implementation is left out, a moved verdict is printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheelspec.benchmarks import verdicts
from wheelspec.spec.show import file_safe


def _report(folder: Path, python: str, status: str = "fail") -> None:
    served = f"cmd:{python} -m wheelspec.conformance.adapters.serve tests.fixtures.broken:fires_early"
    cx = folder / "cx" / file_safe(served) / "timer-9.json"
    impl = {"spec": served, "status": status, "seconds": 1.5, "verdicts": {"timer": status},
            "properties": [{"prop": "no-early-fire", "counterexample": str(cx)}],
            "campaign": {"failures": [{"kind": "timer", "seed": 9, "failures": [{"prop": "no-early-fire"}]}]}}
    folder.mkdir(parents=True)
    (folder / "served.json").write_text(json.dumps({"exit_code": 1, "implementations": [impl]}))


def test_two_interpreters_and_folders_give_identical_reports(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    _report(tmp_path / "before", "/old/venv/bin/python")
    _report(tmp_path / "after", "/usr/local/bin/python3.11")
    verdicts.diff(tmp_path / "before", tmp_path / "after", set())
    assert capsys.readouterr().out == "1 of 1 reports identical\n"


def test_a_moved_verdict_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _report(tmp_path / "before", "/old/venv/bin/python")
    _report(tmp_path / "after", "/old/venv/bin/python", status="pass")
    verdicts.diff(tmp_path / "before", tmp_path / "after", set())
    out = capsys.readouterr().out
    assert "status fail -> pass" in out and "verdict timer: fail -> pass" in out
    assert out.endswith("0 of 1 reports identical\n")
