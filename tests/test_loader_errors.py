"""Every loader is total: scenario files, history files, traces and command-line arguments that are
malformed end in one line naming the file, the line / row / step and the field, exit code 2 --
never a traceback, and never a verdict on the implementation (a badly typed ``expect`` is the
file's fault, not the timer's).  One test per class of malformation; the fuzz tests
(``test_fuzz_loaders.py``) search the space around them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wheelspec.conformance.adapters import resolve
from wheelspec.conformance.check.corpus import corpus_dir, load, run_scenario, scenario_from_dict
from wheelspec.conformance.cli import main
from wheelspec.conformance.concurrency.history_file import loads
from wheelspec.conformance.traces.format import history_rows, rows_to_table
from wheelspec.conformance.traces.local import analyze_table
from wheelspec.spec import events as ev
from wheelspec.spec.checker import check_history
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import profile

INT64_MAX = 2**63 - 1


def _scenario(steps: list, **top) -> dict:
    return {"wheelspec_scenario": 1, "name": "t", "config": {"tick_ms": 1, "wheel_size": 20}, "steps": steps,
            **top}


def _run_main(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:   # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])


# ------------------------------------------------------------------ scenario files --------------
@pytest.mark.parametrize("data, words", [
    (b'{"wheelspec_scenario": 1, "name": "\xff"}', ["bad.json:1", "not UTF-8"]),
    (b"[" * 100_000 + b"]" * 100_000, ["nested deeper"]),
    (b'{"wheelspec_scenario": 1, "name": "t", "steps": [], "name": "u"}', ["duplicate key 'name'"]),
    (b'{"wheelspec_scenario": 1, "name": "t", "steps": [{"kind": "advance", "time": NaN}]}', ["NaN"]),
    (b'{"wheelspec_scenario": 1,\n "name": "t",\n "steps": [}', ["bad.json:3", "not valid JSON"]),
])
def test_unreadable_scenario_files_are_one_line_errors(tmp_path, capsys, data, words):
    f = tmp_path / "bad.json"
    f.write_bytes(data)
    with pytest.raises(UserError) as e:
        load(f)
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
    code, _, err = _run_main(["replay", str(f)], capsys)
    _one_line_error(code, err, *words)


@pytest.mark.parametrize("patch, words", [
    ({"config": {"tick_ms": 0}}, "config.tick_ms: tick_ms=0 is outside the allowed range"),
    ({"config": {"wheel_size": 1}}, "config.wheel_size"),
    ({"config": {"start_ms": -1}}, "config.start_ms"),
    ({"config": {"purge_interval": True}}, "config.purge_interval"),
    ({"config": 5}, "config: must be an object"),
    ({"expect_profiles": 5}, "expect_profiles: must be a non-empty list"),
    ({"expect_profiles": [["kafka"]]}, "expect_profiles: unknown profile"),
    ({"description": ["x"]}, "description: must be a string"),
    ({"origin": "x"}, "origin: must be an object"),
    ({"steps": [{"kind": ["add"], "task": 1, "delay": 1}]}, "steps[0]: unknown operation kind"),
    ({"steps": [{"kind": "add", "task": 2**64, "delay": 1}]}, "steps[0].task: 18446744073709551616 does not fit"),
    ({"steps": [7]}, "steps[0]: must be an object"),
])
def test_malformed_scenario_records_name_the_field(patch, words):
    with pytest.raises(UserError) as e:
        scenario_from_dict({**_scenario([]), **patch}, "f.json")
    msg = str(e.value)
    assert msg.startswith("f.json: ") and words in msg and "\n" not in msg, msg


#: (step, expect) pairs whose expectation is of the wrong type for the operation: each was loaded and
#: then reported as a FAIL of the implementation (or passed unnoticed); each is the file's error
BAD_EXPECTS = [
    ({"kind": "size"}, {"result": "0"}),
    ({"kind": "size"}, {"result": True}),           # True == 1 in Python: a "pass" on a size of 1
    ({"kind": "cancel", "task": 1}, {"result": 0}),  # 0 == False
    ({"kind": "advance", "time": 5}, {"result": 5}),
    ({"kind": "cancel_for_key", "key": "a"}, {"result": [True]}),
    ({"kind": "advance", "time": 5}, {"fired": "1"}),
    ({"kind": "advance", "time": 5}, {"fired": [1.0]}),
    ({"kind": "advance", "time": 5}, {"fired_set": [[1]]}),
    ({"kind": "advance", "time": 5}, {"completed": [[1]]}),
    ({"kind": "advance", "time": 5}, {"completed": [[1, "bogus"]]}),
    ({"kind": "advance", "time": 5}, {"expired": "x"}),
    ({"kind": "advance", "time": 5}, {"purged": "x"}),
    ({"kind": "advance", "time": 5}, {"now": None}),
    ({"kind": "advance", "time": 5}, {"error": 5}),
    ({"kind": "advance", "time": 5}, {"error": "nope"}),
    ({"kind": "advance", "time": 5}, {"error": True, "now": 5}),
    ({"kind": "advance", "time": 5}, {"kafka": {"now": "5"}}),
]


@pytest.mark.parametrize("step, expect", BAD_EXPECTS)
def test_badly_typed_expectations_are_load_errors_not_failures(tmp_path, capsys, step, expect):
    d = _scenario([{"kind": "add", "task": 1, "delay": 5}, {**step, "expect": expect}])
    with pytest.raises(UserError) as e:
        scenario_from_dict(d, "f.json")
    assert "steps[1].expect" in str(e.value), str(e.value)
    f = tmp_path / "s.json"
    f.write_text(json.dumps(d))
    code, out, err = _run_main(["replay", str(f)], capsys)
    _one_line_error(code, err, "steps[1].expect")
    assert "FAIL" not in out


def test_every_shipped_scenario_fits_the_schema():
    files = sorted(corpus_dir().rglob("*.json"))
    assert len(files) > 30
    for f in files:
        load(f)


def test_a_well_typed_wrong_expectation_is_still_a_failure_of_the_implementation():
    d = _scenario([{"kind": "add", "task": 1, "delay": 5}, {"kind": "size", "expect": {"result": 7}}])
    adapter = resolve("reference")()
    res = run_scenario(adapter, adapter.hello().capabilities, scenario_from_dict(d, "f.json"))
    assert res.status == "fail" and [f.prop for f in res.failures] == ["expected"]


# ------------------------------------------------------------------ history files ---------------
GOOD = {"client": 0, "call": 0, "ret": 1, "input": {"kind": "add", "task": 1, "delay": 5}, "output": 5}


@pytest.mark.parametrize("line, words", [
    (json.dumps({**GOOD, "call": "0"}), ":1: call: must be a finite number"),
    (json.dumps({**GOOD, "call": None}), ":1: call: must be a finite number"),
    (json.dumps({**GOOD, "ret": None, "call": 1}).replace('"call": 1', '"call": Infinity'), "Infinity"),
    (json.dumps({**GOOD, "ret": -1}), ":1: ret: the response"),
    (json.dumps({**GOOD, "client": True}), ":1: client"),
    (json.dumps({**GOOD, "output": "5"}), ":1: output: a 'add' call's output"),
    (json.dumps({**GOOD, "input": {"kind": "check", "key": "a"}, "output": [{}]}), ":1: output"),
    (json.dumps({**GOOD, "input": {"kind": "fire", "task": "1", "exp": 5}}), ":1: input.task"),
    (json.dumps({**GOOD, "input": {"kind": "fire", "task": 1}}), ":1: input: a 'fire' call needs field 'exp'"),
    (json.dumps({**GOOD, "input": {"kind": ["add"]}}), ":1: input: unknown operation kind"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "input"}), ":1: missing field 'input'"),
    (json.dumps([GOOD]), ":1: a record must be a JSON object"),
])
def test_malformed_history_files_are_one_line_errors(tmp_path, capsys, line, words):
    f = tmp_path / "h.jsonl"
    f.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    words = words.replace(":1:", ":2:")
    code, _, err = _run_main(["linearize", str(f)], capsys)
    _one_line_error(code, err, "h.jsonl", words)


def test_a_history_file_that_is_not_utf8_names_its_line(tmp_path, capsys):
    f = tmp_path / "h.jsonl"
    f.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    code, _, err = _run_main(["linearize", str(f)], capsys)
    _one_line_error(code, err, "h.jsonl:2", "not UTF-8")


@pytest.mark.slow
def test_linearize_stops_at_its_time_limit_with_an_undecided_verdict(tmp_path, capsys):
    """300 overlapping adds of one task: 2^300 orders.  The search stops at the wall-clock limit
    and says so; it is neither a pass nor a violation."""
    rows = [{"client": i, "call": 0, "ret": 1000, "input": {"kind": "add", "task": 1, "delay": i + 1},
             "output": i + 1} for i in range(300)]
    rows.append({"client": 0, "call": 1001, "ret": 1002, "input": {"kind": "cancel", "task": 1}, "output": False})
    f = tmp_path / "h.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t0 = time.monotonic()
    code, out, err = _run_main(["linearize", str(f), "--time-limit", "1"], capsys)
    assert time.monotonic() - t0 < 30
    assert code == 2 and out.startswith("undecided: budget exhausted") and "time limit of 1 s" in out, (out, err)
    code, out, _ = _run_main(["linearize", str(f), "--max-states", "1000"], capsys)
    assert code == 2 and out.startswith("undecided: budget exhausted") and "state budget" in out


def test_loads_accepts_what_dumps_writes():
    from wheelspec.conformance.concurrency.history_file import dumps

    h = loads(json.dumps(GOOD) + "\n")
    assert loads(dumps(h)) == h


# ------------------------------------------------------------------ traces ----------------------
def _fire_trace(tmp_path: Path, **cols) -> Path:
    base = {"run": ["r", "r", "r"], "seq": [0, 1, 2], "kind": ["add", "advance", "fire"], "time": [0, 5, 5]}
    f = tmp_path / "t.parquet"
    pq.write_table(pa.table({**base, **cols}), f)
    return f


@pytest.mark.parametrize("cols, words", [
    ({}, "row 0, run 'r' seq 0: a 'add' row needs column 'id', which the trace does not have"),
    ({"id": [1, None, 1], "delay": [5, None, 5], "deadline": [5, None, None]},
     "row 2, run 'r' seq 2: a 'fire' row needs column 'deadline', which is null"),
    ({"id": [1, None, None], "delay": [5, None, None], "deadline": [5, None, 5]},
     "row 2, run 'r' seq 2: a 'fire' row needs column 'id', which is null"),
    ({"id": [1, None, 1], "delay": [5, None, None], "deadline": [5, None, 5], "seq": ["0", "1", "two"]},
     "column 'seq' has type string"),
    ({"id": [1, None, 1], "delay": [5, None, None], "deadline": [5.0, None, 5.5]}, "column 'deadline'"),
    ({"id": [1, None, 1], "delay": [5, None, None], "deadline": [5, None, 5], "wheel_size": [1, 1, 1]},
     "column 'wheel_size' has a value 1 < 2"),
    ({"id": [1, None, 1], "delay": [5, None, None], "deadline": [5, None, 5], "kind": ["add", "warp", "fire"]},
     "row 1, run 'r' seq 1: column 'kind' has an unknown value 'warp'"),
])
def test_malformed_traces_are_refused_naming_file_row_and_column(tmp_path, capsys, cols, words):
    f = _fire_trace(tmp_path, **cols)
    code, out, err = _run_main(["analyze", str(f)], capsys)
    _one_line_error(code, err, "t.parquet", words)
    assert "ok" not in out


def test_a_fire_without_id_and_deadline_columns_is_not_all_ok(tmp_path, capsys):
    base = {"run": ["r", "r"], "seq": [0, 1], "kind": ["advance", "fire"], "time": [5, 5]}
    pq.write_table(pa.table(base), tmp_path / "t.parquet")
    code, out, err = _run_main(["analyze", str(tmp_path / "t.parquet")], capsys)
    _one_line_error(code, err, "a 'fire' row needs column")


def _judge(events: list, prof: str) -> tuple[set[str], set[str]]:
    """(properties the trace analysis finds, properties the history checker finds)."""
    res = analyze_table(rows_to_table(history_rows(events, run="r", profile=prof)))
    got = {p for p, v in res["properties"].items() if v["violations"]}
    want = {v.prop for v in check_history(events, profile(prof)).violations} & set(res["properties"])
    return got, want


def test_a_fire_of_a_task_never_added_is_its_own_property():
    got, want = _judge([ev.Add(0, 1, 5, 5), ev.Fire(5, 1, 5), ev.Fire(5, 2, 5), ev.Advance(5)], "strict")
    assert got == want == {"fire-unknown-task"}


def test_a_fire_at_the_largest_deadline_is_early_under_strict_gt():
    """exp + 1 of a deadline 2^63-1 is 2^63, not -2^63: the fire at 5 is early; the deadline itself
    is outside the protocol's ranges, which is a well-formed finding of its own."""
    events = [ev.Add(0, 1, INT64_MAX, INT64_MAX), ev.Fire(5, 1, INT64_MAX), ev.Advance(5)]
    got, want = _judge(events, "strict-gt")
    assert "no-early-fire" in got and got == want | {"well-formed"}


def test_a_watch_near_the_largest_time_is_not_lost():
    """time + delay of a watch at 2^63-6 with delay 100 is past every clock reading: nothing is lost."""
    t = INT64_MAX - 5
    rows = [dict(run="r", seq=0, kind="watch", time=t, id=1, delay=100, keys=['"a"'], flag=False, profile="strict"),
            dict(run="r", seq=1, kind="advance", time=INT64_MAX, profile="strict")]
    res = analyze_table(rows_to_table(rows))
    assert res["properties"]["no-lost-operation"]["violations"] == 0
    # the times are outside the protocol's clock range: said, with their true values
    whys = [r["why"] for r in res["properties"]["well-formed"]["rows"]]
    assert whys and all(f"time {t}" in w or f"time {INT64_MAX}" in w for w in whys), whys


def test_a_fire_beyond_the_ranges_is_reported_with_its_true_values():
    """A fire at 2^63-1 of a deadline -2^62: both outside the protocol's ranges, reported as they
    are (no int64 wrap) and left out of the lateness statistics, which hold in-range fires only."""
    rows = [dict(run="r", seq=0, kind="fire", time=INT64_MAX, id=1, deadline=-(2**62), profile="strict")]
    res = analyze_table(rows_to_table(rows))
    (row,) = res["properties"]["well-formed"]["rows"]
    assert (row["time"], row["deadline"]) == (INT64_MAX, -(2**62)) and str(INT64_MAX) in row["why"]
    assert res["lateness"] == []


def test_analyze_out_unwritable_is_refused_before_the_analysis(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, err = _run_main(["analyze", "--synthetic", "100", "--out", str(blocker / "dir")], capsys)
    _one_line_error(code, err, "--out", "is a file, not a directory")
    assert out == "" and not list(tmp_path.glob("**/*.parquet"))


@pytest.mark.slow
def test_report_text_is_never_parsed_as_mathtext(tmp_path):
    from wheelspec.conformance.traces.html_report import write_report

    rows = history_rows([ev.Add(0, 1, 5, 5), ev.Advance(5), ev.Fire(5, 1, 5)], run="r", impl="$\\frac{$")
    page = write_report(analyze_table(rows_to_table(rows)), tmp_path)
    assert "$\\frac{$" in page.read_text()


@pytest.mark.slow
@pytest.mark.external("spark")
@pytest.mark.timeout(600)
def test_spark_refuses_a_string_seq_in_one_line(spark, tmp_path):
    from wheelspec.conformance.traces.analyze import analyze

    f = _fire_trace(tmp_path, id=[1, None, 1], delay=[5, None, None], deadline=[5, None, 5], seq=["0", "1", "two"])
    with pytest.raises(UserError) as e:
        analyze([str(f)], engine="spark", spark=spark)
    msg = str(e.value)
    assert "\n" not in msg and "column 'seq' has type string" in msg and "'two'" in msg, msg
    g = _fire_trace(tmp_path, id=[1, None, 1], delay=[5, None, None], deadline=[5, None, None])
    with pytest.raises(UserError, match="a 'fire' row needs column 'deadline', which is null"):
        analyze([str(g)], engine="spark", spark=spark)


# ------------------------------------------------------------------ command-line arguments -------
@pytest.mark.parametrize("argv, words", [
    (["check", "--timeout", "nan"], "argument --timeout: must be a finite number of seconds > 0"),
    (["check", "--timeout", "inf"], "argument --timeout"),
    (["check", "--timeout", "-1"], "argument --timeout"),
    (["check", "--start-timeout", "0"], "argument --start-timeout"),
    (["replay", "x.json", "--timeout", "nan"], "argument --timeout"),
    (["check", "--kinds", ","], "argument --kinds: must be a comma-separated list with no empty item"),
    (["check", "--kinds", ""], "argument --kinds"),
    (["check", "--max-failures", "-1"], "argument --max-failures"),
    (["check", "--schedules", "-5"], "argument --schedules"),
    (["campaign", "--workers", "-3"], "argument --workers: must be an integer >= 1"),
    (["campaign", "--schedules", "0"], "argument --schedules"),
    (["campaign", "--kinds", "timer,,purgatory"], "argument --kinds"),
    (["linearize", "--time-limit", "nan"], "argument --time-limit"),
    (["linearize", "--threads", "0"], "argument --threads"),
    (["analyze", "--max-rows", "-1"], "argument --max-rows"),
    (["analyze", "--synthetic", "300", "--seed", "99999999999999999999999"], "argument --seed"),
    (["realtime", "--runs", "0"], "argument --runs"),
    (["bench", "--rate", "nan"], "argument --rate"),
    (["matrix", "--rt-tasks", "0"], "argument --rt-tasks"),
])
def test_bad_arguments_are_one_line_before_any_work(capsys, argv, words):
    code, out, err = _run_main(argv, capsys)
    _one_line_error(code, err, words)
    assert out == ""


@pytest.mark.parametrize("option", ["--write traces=", "--json", "--junit-xml", "--out"])
def test_unwritable_output_paths_are_refused_before_any_work(tmp_path, capsys, option):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    flag, _, kind = option.partition(" ")   # --write KIND=PATH: the path follows the kind
    code, out, err = _run_main(["check", flag, kind + str(blocker / "sub" / "x"), "--impl", "reference"], capsys)
    _one_line_error(code, err, f"argument {flag}", "is a file, not a directory")
    assert out == ""


def test_a_real_process_prints_one_line_and_exits_2():
    for argv in (["check", "--timeout", "nan"], ["campaign", "--workers", "-3"]):
        p = subprocess.run([sys.executable, "-m", "wheelspec", *argv], capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and p.stdout == "", p
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
