"""One command-line grammar across every ``wheelspec`` subcommand (docs/guides/CLI.md).

``--json FILE`` with ``-`` for stdout wherever a JSON report exists, ``--out DIR``,
``--write traces=DIR``, ``--schedules N``, repeatable ``--impl``, repeatable and additive
``--scenarios``, durations in seconds, examples and exit codes in every ``--help``, an error said
once, no emoji codes, no 80-column wrapping on a pipe.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.check.corpus import corpus_dir
from wheelspec.conformance.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]
#: a corpus scenario every implementation runs (timer only)
SCENARIO = next(p for p in sorted(corpus_dir().rglob("*.json")) if "purgatory" not in p.read_text())


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``main(argv)`` in-process: (exit code, stdout, stderr); a usage error's SystemExit is its code."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # `--json -` must never create a file named "-": every test runs in its own directory
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))


# ------------------------------------------------------------------ --json - --------------------
def _json_argv(tmp: Path) -> dict[str, list[str]]:
    """Per command with a JSON report: a cheap invocation (seconds) with ``--json -``."""
    return {
        "check": ["check", "--impl", "reference", "--no-corpus", "--schedules", "2", "--kinds", "timer",
                  "--out", str(tmp / "cx")],
        "replay": ["replay", str(SCENARIO), "--impl", "reference"],
        "analyze": ["analyze", "--synthetic", "300", "--write", "trace=" + str(tmp / "t.parquet")],
        "campaign": ["campaign", "--impl", "reference", "--kinds", "timer", "--schedules", "4", "--chunk", "4",
                     "--engine", "local", "--workers", "1", "--out", str(tmp / "camp")],
        "matrix": ["matrix", "--impl", "reference", "--schedules", "1", "--no-files"],
        "linearize": ["linearize", "--impl", "reference", "--threads", "2", "--ops", "20"],
        "races": ["races", "--mutant", "no-second-try", "--examples", "200", "--clean", "2", "--quiet"],
        "bench": ["bench", "--impl", "heapq", "--sizes", "100", "--workloads", "insert", "--repeat", "1",
                  "--curve-rounds", "0", "--no-jit"],
        "prove": ["prove", "--only", "placement", "--no-bmc"],
        "realtime": ["realtime", "--impl", "asyncio-live", "--runs", "1", "--tasks", "20",
                     "--out", str(tmp / "rt")],
    }


def test_every_command_with_a_json_report_is_listed_here():
    have_json = {name for name in COMMANDS
                 if any("--json" in a.option_strings for a in _subparser(name)._actions)}
    assert have_json == set(_json_argv(Path("."))), have_json


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(_json_argv(Path("."))))
def test_json_dash_prints_one_json_document_on_stdout(command, tmp_path, capsys):
    code, out, err = run(_json_argv(tmp_path)[command] + ["--json", "-"], capsys)
    # realtime judges a wall clock: a loaded machine may make it late (exit 1), still a report
    assert code in ((0, 1) if command == "realtime" else (0,)), err
    json.loads(out)   # the whole of stdout is one JSON document: the text went to stderr
    assert "Traceback" not in err
    assert not (tmp_path / "-").exists()


def test_two_reports_on_stdout_are_refused(capsys):
    code, out, err = run(["check", "--impl", "reference", "--no-corpus", "--schedules", "1", "--json", "-",
                          "--junit-xml", "-"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "stdout" in err


def test_json_file_is_written_and_the_text_stays_on_stdout(tmp_path, capsys):
    code, out, _ = run(["analyze", "--synthetic", "300", "--write", "trace=" + str(tmp_path / "t.parquet"),
                        "--json", str(tmp_path / "r.json")], capsys)
    assert code == 0 and "rows" in out and not out.lstrip().startswith("{")
    assert json.loads((tmp_path / "r.json").read_text())["ok"] is True


def test_analyze_json_never_overwrites_a_trace(tmp_path, capsys):
    trace = tmp_path / "t.parquet"
    assert run(["analyze", "--synthetic", "300", "--write", "trace=" + str(trace)], capsys)[0] == 0
    before = trace.read_bytes()
    code, _, err = run(["analyze", "--json", str(trace)], capsys)   # a trace typed after the flag
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--json -" in err
    assert trace.read_bytes() == before


# ------------------------------------------------------------------ lists -----------------------
def test_repeated_scenarios_add_up(tmp_path, capsys):
    files = [p for p in sorted(corpus_dir().rglob("*.json")) if "purgatory" not in p.read_text()][:2]
    for i, f in enumerate(files):
        (tmp_path / f"s{i}").mkdir()
        shutil.copy(f, tmp_path / f"s{i}" / f.name)
    code, out, err = run(["check", "--impl", "reference", "--schedules", "0", "--scenarios", str(tmp_path / "s0"),
                          "--scenarios", str(tmp_path / "s1"), "--json", "-"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    assert rep["scenarios"] == 2
    assert len(rep["implementations"][0]["scenarios"]) == 2


def test_the_same_scenario_in_two_directories_is_refused(tmp_path, capsys):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(SCENARIO, tmp_path / d / SCENARIO.name)
    code, out, err = run(["check", "--impl", "reference", "--schedules", "0", "--scenarios", str(tmp_path / "a"),
                          "--scenarios", str(tmp_path / "b")], capsys)
    assert code == 2 and "is also used by" in err and len(err.strip().splitlines()) == 1


def test_matrix_takes_repeated_impl_and_any_check_spec(tmp_path, capsys):
    spec = "wheelspec.conformance.adapters:optimized_adapter"
    code, out, err = run(["matrix", "--impl", "reference", "--impl", spec, "--schedules", "1", "--no-files",
                          "--json", "-"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [r["name"] for r in doc["rows"]] == ["reference", spec]
    assert f"--impl reference --impl {spec}" in doc["meta"]["command"]


def test_matrix_refuses_an_unknown_impl_before_any_work(tmp_path, capsys):
    code, out, err = run(["matrix", "--impl", "nope", "--out", str(tmp_path / "docs")], capsys)
    assert code == 2 and "unknown implementation 'nope'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "docs").exists()


def test_a_single_impl_command_refuses_two(capsys):
    code, _, err = run(["replay", str(SCENARIO), "--impl", "reference", "--impl", "optimized"], capsys)
    assert code == 2 and "given twice" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ seconds ---------------------
def test_bench_request_timeout_is_in_ms():
    from wheelspec.conformance.cli.bench import options_from_args

    args = build_parser().parse_args(["bench", "--request-timeout-ms", "2500"])
    assert options_from_args(args).purgatory.timeout == 2500   # the workload's ms


def test_prove_solver_seconds_takes_fractions_of_a_second():
    assert build_parser().parse_args(["prove", "--solver-seconds", "0.5"]).solver_seconds == 0.5


# ------------------------------------------------------------------ --help ----------------------
def _subparser(name: str):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[name]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_has_examples_and_exit_codes(command, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args([command, "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "Examples:" in text and "Exit codes:" in text, text
    examples = text.split("Examples:")[1].split("Exit codes:")[0]
    assert f"wheelspec {command}" in examples
    codes = text.split("Exit codes:")[1]
    assert "  0 " in codes and "  2 " in codes
    assert "[FILE]" not in text and "[DIR]" not in text   # a value-taking option shows its value


def test_campaign_trace_out_dir(tmp_path, capsys):
    code, _, err = run(["campaign", "--impl", "reference", "--kinds", "timer", "--schedules", "4", "--chunk", "4",
                        "--engine", "local", "--workers", "1", "--out", str(tmp_path / "c"),
                        "--write", "traces=" + str(tmp_path / "tr"), "--json", str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    assert list((tmp_path / "tr" / "timer").glob("*.parquet"))
    assert not (tmp_path / "c" / "traces").exists()
    # a resume with the traces elsewhere is another campaign: refused, naming --write traces=DIR
    code, _, err = run(["campaign", "--impl", "reference", "--kinds", "timer", "--schedules", "4", "--chunk", "4",
                        "--engine", "local", "--workers", "1", "--out", str(tmp_path / "c"),
                        "--write", "traces=" + str(tmp_path / "tr2")], capsys)
    assert code == 2 and "--write traces=DIR" in err


# ------------------------------------------------------------------ printing --------------------
def test_an_adapter_error_is_said_once_on_stderr(capsys):
    code, out, err = run(["check", "--impl", "nope", "--no-corpus", "--schedules", "1"], capsys)
    assert code == 2
    assert err.count("not a built-in") == 1 and "not a built-in" not in out
    assert "ERROR" in out   # the summary still marks it


def test_impl_names_are_never_emoji(capsys):
    impl = "mytimer.adapter:factory:"
    code, out, err = run(["check", "--impl", impl, "--no-corpus", "--schedules", "1"], capsys)
    assert code == 2 and impl in out and impl in err
    assert "\N{FACTORY}" not in out + err


def test_matrix_and_realtime_tables_print_names_as_text():
    from wheelspec.conformance.cli.matrix import print_table
    from wheelspec.conformance.cli.realtime import print_report
    from wheelspec.conformance.matrix import COLUMNS, Row
    from wheelspec.conformance.realtime.run import RtReport

    name = "mytimer.adapter:factory:"
    buf = io.StringIO()
    print_table([Row(name, "1", "virtual", "kafka", {c: "pass" for c in COLUMNS}, {}, ["kafka"], [], [])], buf)
    print_report(RtReport(name, "1.0", "kafka", 1, [], []), buf)
    assert name in buf.getvalue() and "\N{FACTORY}" not in buf.getvalue()


def test_realtime_output_is_not_wrapped_at_80_columns_on_a_pipe():
    from wheelspec.conformance.cli.realtime import print_report
    from wheelspec.conformance.realtime.run import RtReport

    cx = "wheelspec-out/realtime/" + "a-long-directory-name/" * 4 + "netty-realtime-3.json"
    buf = io.StringIO()   # not a terminal, as a pipe
    print_report(RtReport("netty-hashedwheeltimer-with-a-long-name", "4.1.100.Final", "kafka", 1, [], [cx]), buf,
                 impl="netty")
    lines = buf.getvalue().splitlines()
    assert any(len(x) > 80 for x in lines)
    # the replay command, whole on one line and ready to paste
    assert any(f"wheelspec realtime --impl netty --schedule {cx})" in x for x in lines)
    assert lines[0].startswith("netty-hashedwheeltimer-with-a-long-name (4.1.100.Final)") and "fires" in lines[0]


def test_a_real_pipe_gets_plain_unwrapped_text(tmp_path):
    # a real process whose stdout is a pipe: no escape codes, the check summary not cut at 80 columns
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    p = subprocess.run([sys.executable, "-m", "wheelspec", "check", "--impl", "reference", "--no-corpus",
                        "--schedules", "1", "--kinds", "timer"], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path, env={**env, "TERM": "xterm-256color"})
    assert p.returncode == 0, p.stderr
    assert "\x1b[" not in p.stdout
    assert any(len(x) > 80 for x in p.stdout.splitlines())


def test_python_dash_m_wheelspec_is_the_command():
    out = subprocess.run([sys.executable, "-m", "wheelspec", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("wheelspec "), out
