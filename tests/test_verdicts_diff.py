"""The before/after comparison of ``wheelspec check`` reports (benchmarks/verdicts.py): what varies
between two trees' runs of one implementation is left out, a moved verdict is printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheelspec.benchmarks import verdicts
from wheelspec.spec.show import impl_dirname


def _report(folder: Path, python: str, status: str = "fail") -> None:
    served = f"cmd:{python} -m wheelspec.conformance.adapters.serve tests.fixtures.broken:fires_early"
    cx = folder / "cx" / impl_dirname(served) / "timer-9.json"
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


def _check_report(folder: Path, status: str, *, envelope: bool) -> None:
    """A ``wheelspec check --json`` report, written in the envelope (``format``, ``command``...)
    or in the shape without it (``wheelspec`` and ``exit_code`` beside the body only)."""
    impl = {"spec": "reference", "name": "reference", "status": status, "seconds": 2.0,
            "verdicts": {"kafka": status}, "campaign": {"failures": []}, "scenarios": []}
    body = {"protocol": 1, "impls": ["reference"], "scenarios": 3, "schedules_per_kind": 150, "first_seed": 0,
            "kinds": ["timer"], "max_failures_per_kind": 20, "accept": [], "implementations": [impl]}
    code = 0 if status == "pass" else 1
    if envelope:
        from wheelspec.envelope import envelope as wrap

        doc = wrap("check", body, exit_code=code)
    else:
        doc = {"wheelspec": "0.0.9", "command": "check", **body, "exit_code": code, "interrupted": None}
    folder.mkdir(parents=True)
    (folder / "reference.json").write_text(json.dumps(doc))


def test_reports_with_and_without_the_envelope_compare_by_their_bodies(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _check_report(tmp_path / "before", "pass", envelope=False)
    _check_report(tmp_path / "after", "pass", envelope=True)
    verdicts.diff(tmp_path / "before", tmp_path / "after", set())
    assert capsys.readouterr().out == "1 of 1 reports identical\n"


def test_a_changed_verdict_across_the_envelope_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check_report(tmp_path / "before", "pass", envelope=False)
    _check_report(tmp_path / "after", "fail", envelope=True)
    verdicts.diff(tmp_path / "before", tmp_path / "after", set())
    out = capsys.readouterr().out
    assert "status pass -> fail, exit 0 -> 1" in out and "verdict kafka: pass -> fail" in out
    assert out.endswith("0 of 1 reports identical\n")


def test_a_changed_body_field_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check_report(tmp_path / "before", "pass", envelope=False)
    _check_report(tmp_path / "after", "pass", envelope=True)
    doc = json.loads((tmp_path / "after" / "reference.json").read_text())
    doc["schedules_per_kind"] = 999
    (tmp_path / "after" / "reference.json").write_text(json.dumps(doc))
    verdicts.diff(tmp_path / "before", tmp_path / "after", set())
    assert "fields that differ: run" in capsys.readouterr().out
