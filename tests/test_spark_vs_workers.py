"""benchmarks/spark_vs_workers.py: the comparison of two campaigns' verdicts (the campaigns
themselves, one on Spark, are run by hand: the script's docstring and docs/results/SPARK_SPEED.md)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wheelspec.benchmarks.spark_vs_workers import ROW_FIELDS, differences, verdict_rows

REPORT = {"ok": False, "exit_code": 1, "impl": "x", "kinds": ["timer"], "schedules": 2, "schedules_run": 2,
          "failed": 1, "ops_run": 30, "failure_classes": [{"property": "fires-on-time", "count": 1}],
          "seconds": 1.0, "out": "/a"}


def _rows(tmp: Path, name: str, passed: list[bool]) -> list[tuple]:
    d = tmp / name / "verdicts" / "timer"
    d.mkdir(parents=True)
    n = len(passed)
    table = pa.table({"run": [f"x/timer/{i}" for i in range(n)], "impl": ["x"] * n, "kind": ["timer"] * n,
                      "seed": list(range(n)), "property": ["all"] * n, "passed": passed,
                      "violations": [0 if p else 1 for p in passed], "message": ["" if p else "late" for p in passed],
                      "counterexample": [None] * n, "ops": [15] * n, "shape": [None] * n})
    pq.write_table(table, d / "range-000000000000-000000000002.parquet")
    return verdict_rows(tmp / name)


def test_the_same_verdicts_differ_in_nothing_though_times_and_folders_do(tmp_path):
    a = _rows(tmp_path, "a", [True, False])
    b = _rows(tmp_path, "b", [True, False])
    assert len(a) == 2 and len(a[0]) == len(ROW_FIELDS)
    assert differences(REPORT, {**REPORT, "seconds": 9.0, "out": "/b"}, a, b) == []


def test_a_moved_verdict_is_named_in_the_report_fields_and_the_rows(tmp_path):
    a = _rows(tmp_path, "a", [True, False])
    b = _rows(tmp_path, "b", [True, True])
    diff = differences(REPORT, {**REPORT, "failed": 0, "ok": True}, a, b)
    assert "report field ok: false against true" in diff
    assert "report field failed: 1 against 0" in diff
    assert any(d.startswith("only in the first: ('x/timer/1'") for d in diff), diff
    assert any(d.startswith("only in the second: ('x/timer/1'") for d in diff), diff
