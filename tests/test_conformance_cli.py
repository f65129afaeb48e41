"""`wheelspec check` / `wheelspec replay`: exit codes, reports, user errors (the pytest plugin:
tests/test_pytest_plugin.py)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from wheelspec.conformance.check.corpus import corpus_dir
from wheelspec.conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_check_reference_passes_with_json_and_junit(tmp_path, capsys):
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["check", "--impl", "reference", "--schedules", "30", "--json", str(j), "--junit-xml", str(x),
                 "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS" in out and "schedules/s" in out and "ops/s" in out
    doc = json.loads(j.read_text())
    impl = doc["implementations"][0]
    assert doc["exit_code"] == 0 and impl["status"] == "pass"
    assert impl["campaign"]["schedules"] == 60 and impl["campaign"]["ops"] > 0
    assert impl["campaign"]["schedules_per_s"] > 0
    assert len(impl["scenarios"]) == len(list(corpus_dir().rglob("*.json")))
    suites = ET.parse(x).getroot()
    cases = suites.findall(".//testcase")
    assert len(cases) == len(impl["scenarios"]) + 2 and not suites.findall(".//failure")


def test_check_broken_exits_1_and_saves_replayable_counterexamples(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["check", "--impl", "tests.fixtures.broken:fires_early", "--no-corpus", "--schedules", "20",
                 "--kinds", "timer", "--max-failures", "2", "--json", str(j), "--junit-xml", str(x),
                 "--out", str(tmp_path / ("a-long-directory-name-" * 6) / "out")])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL" in out and "no-early-fire" in out
    impl = json.loads(j.read_text())["implementations"][0]
    # two failing seeds, each shrunk toward its most specific property; a property a seed fails
    # beside it (the oracle's disagreement) gets a counterexample of its own (grouped by property)
    assert impl["status"] == "fail" and len(impl["campaign"]["failures"]) == 2
    kept = [json.loads(Path(p).read_text())["origin"]["prop"] for p in impl["counterexamples"]]
    assert set(kept) == {"no-early-fire", "oracle"} and len(kept) >= 2
    # The replay command is printed whole on one line (however long its path), so it can be
    # copied and run; the output once wrapped it with hard newlines.
    lines = out.splitlines()
    for cx_path in impl["counterexamples"]:
        command = f"wheelspec replay {cx_path} --impl tests.fixtures.broken:fires_early"
        assert any(line.endswith(command) for line in lines), command
    assert ET.parse(x).getroot().findall(".//failure")
    cx = impl["counterexamples"][0]
    assert main(["replay", cx, "--impl", "tests.fixtures.broken:fires_early"]) == 1
    assert main(["replay", cx, "--impl", "reference"]) == 0


@pytest.mark.parametrize("argv, words", [
    (["check", "--impl", "no_such_module_x:factory"], "cannot import module 'no_such_module_x'"),
    (["check", "--impl", "bogus"], "not a built-in"),
    (["check", "--kinds", "timer,wheel"], "unknown campaign kind 'wheel'"),
    (["check", "--schedules", "-1"], "--schedules: must be an integer >= 0"),
    (["check", "--scenarios", "/nonexistent/dir"], "does not exist"),
    (["replay", "/nonexistent/file.json"], "cannot read scenario /nonexistent/file.json"),
])
def test_user_errors_are_one_line_exit_2(argv, words, capsys):
    try:  # refused by the argument parser (SystemExit) or by the command
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    assert words in err
    assert "Traceback" not in err


def test_replay_of_a_malformed_file_names_the_file_and_step(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"wheelspec_scenario": 1, "name": "b", "steps": [{"kind": "add", "task": 1}]}))
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: steps[0]: operation 'add': missing field 'delay'" in err


@pytest.mark.slow
def test_a_real_time_adapter_is_refused_clearly(tmp_path, capsys):
    script = tmp_path / "rt.py"
    script.write_text("import sys, json\n"
                      "for line in sys.stdin:\n"
                      "    r = json.loads(line)\n"
                      "    print(json.dumps({'id': r['id'], 'ok': True, 'protocol': 1, 'name': 'rt',"
                      " 'capabilities': {'time': 'real'}}), flush=True)\n")
    assert main(["check", "--impl", f"cmd:{sys.executable} {script}", "--no-corpus", "--schedules", "1"]) == 2
    err = capsys.readouterr().err
    assert 'capabilities.time is "real"' in err and "wheelspec realtime" in err


def test_a_command_tunes_the_collector_and_leaves_the_process_as_it_was(tmp_path: Path) -> None:
    """``main`` runs a command with the collector's thresholds of :mod:`.collector` and gives the
    caller's back afterwards, also when the command fails."""
    import gc

    from wheelspec.conformance.check import collector

    before = gc.get_threshold()
    assert before != collector.THRESHOLDS
    seen: list[tuple[int, ...]] = []
    with pytest.raises(RuntimeError), collector.tuned():
        seen.append(gc.get_threshold())
        raise RuntimeError("a command that fails")
    assert seen == [collector.THRESHOLDS] and gc.get_threshold() == before
    assert main(["check", "--impl", "reference", "--no-corpus", "--schedules", "1", "-q", "--out", str(tmp_path)]) == 0
    assert gc.get_threshold() == before
