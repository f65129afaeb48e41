"""``wheelspec analyze`` against the protocol's ranges: times near 2^63 are well-formed findings
reported with their true values (no report shows a 64-bit wrap), a reference history at the
edges of the ranges passes, and every numeric option refuses a bad value in one line, exit 2."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trace_analyze import checker_props, found, run_info
from test_trace_roundtrip import run_reference

from wheelspec.conformance.cli import build_parser, main
from wheelspec.conformance.traces.analyze import analyze
from wheelspec.conformance.traces.format import history_to_table
from wheelspec.conformance.traces.local import analyze_table
from wheelspec.conformance.traces.rules import (
    MAX_LATENESS_MS,
    MAX_ROWS,
    MAX_SYNTHETIC_ROWS,
    MIN_SYNTHETIC_ROWS,
)
from wheelspec.spec import ops
from wheelspec.spec.errors import UserError
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_TIME_MS, MIN_DELAY_MS

LONG_MAX = 2**63 - 1


def wrap64(v: int) -> int:
    """``v`` as a Java ``long`` (or numpy int64) sum holds it."""
    return (v + 2**63) % 2**64 - 2**63


def past_the_ranges() -> tuple[pa.Table, set[int]]:
    """Runs a recorder with Java ``long`` arithmetic writes for values past the protocol's ranges,
    and the wrapped value it stored (which no report may show)."""
    t = LONG_MAX - 5                                  # the watch of the report: time 2^63-6, timeout 100
    rows = [
        # run 1-watch: a watch whose deadline now + timeout wrapped in the recorder
        ("1-watch", 0, "watch", t, 1, 100, wrap64(t + 100), ['"a"'], False),
        ("1-watch", 1, "advance", t, None, None, None, None, None),
        # run 2-add: an add with a delay past MAX_DELAY_MS (its deadline fits: 2^63-1) and its fire
        ("2-add", 0, "add", 0, 7, LONG_MAX, LONG_MAX, None, None),
        ("2-add", 1, "fire", LONG_MAX, 7, LONG_MAX, LONG_MAX, None, None),
        ("2-add", 2, "advance", LONG_MAX, None, None, None, None, None),
        # run 3-fire: an add with the smallest long delay, its fire 2^64 - 1 ms late, the clock back to -2^63
        ("3-fire", 0, "add", 0, 3, -2**63, -2**63, None, None),
        ("3-fire", 1, "fire", LONG_MAX, 3, None, -2**63, None, None),
        ("3-fire", 2, "advance", -2**63, None, None, None, None, None),
    ]
    cols = ("run", "seq", "kind", "time", "id", "delay", "deadline", "keys", "flag")
    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)},
                     schema=pa.schema([("run", pa.string()), ("seq", pa.int64()), ("kind", pa.string()),
                                       ("time", pa.int64()), ("id", pa.int64()), ("delay", pa.int64()),
                                       ("deadline", pa.int64()), ("keys", pa.list_(pa.string())),
                                       ("flag", pa.bool_())]))
    return table, {wrap64(t + 100)}


def test_values_past_the_ranges_are_well_formed_findings_with_their_true_numbers(tmp_path, capsys):
    table, wrapped = past_the_ranges()
    trace = tmp_path / "t.parquet"
    pq.write_table(table, trace)
    out = tmp_path / "report"
    assert main(["analyze", str(trace), "--out", str(out), "--json", str(tmp_path / "r.json"),
                 "--lateness-ms", "10"]) == 1
    terminal = capsys.readouterr().out
    result = json.loads((tmp_path / "r.json").read_text())
    wf = result["properties"]["well-formed"]
    why = {(r["run"], r["seq"]): r["why"] for r in wf["rows"]}
    assert wf["violations"] == 8 == len(why)                  # every row breaks a range
    t = LONG_MAX - 5
    assert why[("1-watch", 0)].startswith(f"time {t} is outside the protocol's clock range [0, {MAX_TIME_MS}]")
    assert f"deadline {t + 100} (time + delay; the trace holds it wrapped to 64 bits)" in why[("1-watch", 0)]
    (w0,) = [r for r in wf["rows"] if (r["run"], r["seq"]) == ("1-watch", 0)]
    assert w0["deadline"] == t + 100 and w0["time"] == t      # the true sum, past int64
    assert why[("2-add", 0)] == (f"delay {LONG_MAX} is outside the protocol's delay range [{MIN_DELAY_MS}, "
                             f"{MAX_DELAY_MS}] (spec/limits.py MIN_DELAY_MS, MAX_DELAY_MS); deadline {LONG_MAX} is "
                             f"outside [{MIN_DELAY_MS}, {MAX_TIME_MS + MAX_DELAY_MS}], the expirations time + delay "
                             "can reach inside the protocol's ranges")
    assert f"the clock went back from {LONG_MAX} to {-2**63}" in why[("3-fire", 2)]
    # the late fire is judged with its exact lateness (2^64 - 1 > 10; wrapped, -1 would pass), but
    # no lateness statistic includes a fire outside the ranges
    late = result["properties"]["late-fire"]
    assert late["violations"] == 1 and late["rows"][0]["run"] == "3-fire"
    assert result["lateness"] == [] and result["lateness_histogram"] == {}
    page = (out / "report.html").read_text()
    analysis = (out / "analysis.json").read_text()
    for report in (terminal, json.dumps(result), page, analysis):
        numbers = {int(x) for x in re.findall(r"-?\d+", report)}
        assert not numbers & wrapped
        assert str(t + 100) in report and "outside the protocol" in report


def test_well_formed_rows_say_what_is_wrong():
    """Each well-formed rule names itself, with the checker's wording and numbers."""
    rows = {"run": ["r"] * 6, "seq": [0, 1, 2, 3, 4, 5],
            "kind": ["add", "advance", "advance", "complete", "watch", "watch"],
            "time": [5, 9, 8, 8, 8, 8], "id": [1, None, None, 5, 4, 4], "delay": [3, None, None, None, 2, 2],
            "deadline": [9, None, None, None, 10, 10], "label": [None, None, None, "magic", None, None],
            "keys": [None, None, None, None, ['"k"'], ['"k"']], "flag": [None, None, None, None, False, False]}
    res = analyze_table(pa.table(rows))
    why = {r["seq"]: r["why"] for r in res["properties"]["well-formed"]["rows"]}
    assert why == {0: "deadline 9 is not time + delay = 8",
                   2: "the clock went back from 9 to 8",
                   3: "complete has unknown via 'magic' (expected one of try, check, expire, force); "
                      "op 5 was not watched before this row",
                   5: "op 4 is watched twice"}
    assert all(r["why"] is None for p, v in res["properties"].items() if p != "well-formed" for r in v["rows"])


#: a reference run at the edges of the ranges: the largest time, the largest and smallest delays
EDGE = dict(tick_ms=7, wheel_size=2, profile="kafka", purge_interval=1000, start_ms=MAX_TIME_MS - 10)


def edge_events() -> list:
    return run_reference(EDGE, [ops.AddTask(1, MAX_DELAY_MS), ops.AddTask(2, MIN_DELAY_MS),
                                ops.Watch(0, MAX_DELAY_MS, ("k",), False), ops.Watch(1, MIN_DELAY_MS, ("k",), False),
                                ops.AddTask(3, 4), ops.AdvanceTo(MAX_TIME_MS)]).events


def edge_history() -> pa.Table:
    return history_to_table(edge_events(), **run_info(EDGE, "edge"))


def test_a_reference_history_at_the_edges_of_the_ranges_passes():
    """Every sum of the run is exact and in range: the checker and the analysis find nothing."""
    assert checker_props(edge_events(), EDGE) == set()
    table = edge_history()
    res = analyze_table(table, lateness_ms=MAX_LATENESS_MS)
    assert found(res) == set()
    # task 2 runs inside its add, MAX_DELAY_MS late; task 3 (exp MAX_TIME_MS - 6) at MAX_TIME_MS
    (g,) = res["lateness"]
    assert (g["count"], g["min"], g["max"]) == (2, 6, MAX_DELAY_MS)
    late = analyze_table(table, lateness_ms=MAX_DELAY_MS - 1)["properties"]["late-fire"]
    assert late["violations"] == 1 and late["rows"][0]["id"] == 2


# ------------------------------------------------------------------ options ---------------------
#: every numeric option of analyze and its range (documented in --help)
RANGES = {"--lateness-ms": (0, MAX_LATENESS_MS), "--max-rows": (0, MAX_ROWS),
          "--synthetic": (MIN_SYNTHETIC_ROWS, MAX_SYNTHETIC_ROWS), "--seed": (0, LONG_MAX)}
PARSER = build_parser()


def parse(argv: list[str]) -> tuple[int, object, str]:
    """(exit code, parsed namespace or None, stderr) of parsing ``analyze ARGV``."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            return 0, PARSER.parse_args(["analyze", *argv]), err.getvalue()
        except SystemExit as e:
            return int(e.code or 0), None, err.getvalue()


def near(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers anywhere, and close to either end of [lo, hi]."""
    return st.one_of(st.integers(-2**70, 2**70), st.integers(lo - 3, lo + 3), st.integers(hi - 3, hi + 3))


@settings(max_examples=examples(300, 2000))
@given(st.sampled_from(sorted(RANGES)).flatmap(lambda o: st.tuples(st.just(o), near(*RANGES[o]))),
       st.sampled_from(["{}", " {} ", "{}.0", "{}e0", "+{}"]))
def test_numeric_options_take_their_range_and_refuse_the_rest_in_one_line(option_value, form):
    option, value = option_value
    lo, hi = RANGES[option]
    text = form.format(value)
    code, args, err = parse([option, text])
    if lo <= value <= hi and form in ("{}", " {} ", "+{}"):
        assert code == 0, err
        assert getattr(args, option[2:].replace("-", "_")) == value
    else:
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert f"argument {option}:" in err


@pytest.mark.parametrize(("size", "ok"), [("4g", True), ("512m", True), ("512", True), ("1T", True),
                                          ("524288k", True), ("511m", False), ("1g ", True), ("0", False),
                                          ("-4g", False), ("4x", False), ("4.5g", False), ("g", False),
                                          ("4 g", False), ("", False), ("9" * 40, False)])
def test_driver_memory_is_a_spark_size_of_at_least_512m(size, ok):
    code, args, err = parse(["--driver-memory", size])
    if ok:
        assert code == 0 and args.driver_memory == size
    else:
        assert code == 2 and "argument --driver-memory:" in err and len(err.strip().splitlines()) == 1


def test_a_negative_lateness_bound_is_refused_not_judged(tmp_path, capsys):
    """The report's case: --lateness-ms -5 judged a valid trace FAIL."""
    trace = tmp_path / "ok.parquet"
    pq.write_table(pa.table({"run": ["n"] * 4, "seq": [0, 1, 2, 3], "kind": ["add", "advance", "fire", "advance"],
                             "time": [0, 5, 12, 12], "id": [1, None, 1, None], "delay": [10, None, None, None],
                             "deadline": [10, None, 10, None]}), trace)
    with pytest.raises(SystemExit) as e:
        main(["analyze", str(trace), "--lateness-ms", "-5"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1
    assert "argument --lateness-ms: must be an integer in [0, " in err and "'-5'" in err
    assert main(["analyze", str(trace), "--lateness-ms", "2"]) == 0      # the fire is 2 ms late
    assert main(["analyze", str(trace), "--lateness-ms", "1"]) == 1
    capsys.readouterr()
    # the library refuses the same values, before reading a trace
    for kw in ({"lateness_ms": -5}, {"lateness_ms": MAX_LATENESS_MS + 1}, {"max_rows": -1}, {"lateness_ms": True},
               {"max_rows": MAX_ROWS + 1}):
        with pytest.raises(UserError, match="must be an integer in"):
            analyze([str(tmp_path / "never-read.parquet")], **kw)


def test_the_synthetic_generator_refuses_sizes_outside_its_ranges():
    from wheelspec.conformance.traces.synth import synthetic_trace

    for kw in ({"rows": MIN_SYNTHETIC_ROWS - 1}, {"rows": MAX_SYNTHETIC_ROWS + 1}, {"rows": 100, "runs": 0},
               {"rows": 100, "runs": 101}):
        with pytest.raises(ValueError, match="must be in"):
            synthetic_trace(**kw)
    assert synthetic_trace(MIN_SYNTHETIC_ROWS, runs=1)[0].num_rows > 0
