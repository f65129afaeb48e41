"""``wheelspec campaign``: seed ranges as Spark tasks give the same verdicts as a local process
pool whatever the chunking; completed ranges are skipped on rerun; failure classes aggregate the
shrunk counterexamples by (property, shape) identically on Spark and locally; with a failure
budget, Spark runs the ranges in jobs and stops a kind between them."""

from __future__ import annotations

import json

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.traces import spark_campaign
from wheelspec.conformance.traces.spark_campaign import (
    Budget,
    collect_verdicts,
    execute,
    failure_classes,
    failure_classes_spark,
    pending_tasks,
    run_tasks,
)

pytestmark = [pytest.mark.external("spark"), pytest.mark.slow]  # a Spark session

BROKEN = "tests.fixtures.broken:fires_twice"


def _verdicts(out, chunk, n):
    return collect_verdicts(out, ["timer"], 0, n, chunk).to_pylist()


# Spark's start-up and first jobs take 20-120 s on a loaded 2-core machine: a longer limit, not a skip.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spark_and_local_campaigns_agree_whatever_the_partitioning(spark, tmp_path):
    n = 8
    tasks, skipped = pending_tasks(BROKEN, ["timer"], 0, n, 4, tmp_path / "spark")
    assert skipped == 0 and len(tasks) == 2
    done = execute(tasks, engine="spark", spark=spark)
    assert sorted((d["lo"], d["hi"]) for d in done) == [(0, 4), (4, 8)]
    tasks_local, _ = pending_tasks(BROKEN, ["timer"], 0, n, 3, tmp_path / "local")
    execute(tasks_local, engine="local", workers=2)
    on_spark, on_local = _verdicts(tmp_path / "spark", 4, n), _verdicts(tmp_path / "local", 3, n)
    assert on_spark == on_local
    assert sorted({v["seed"] for v in on_spark}) == list(range(n))
    failed = [v for v in on_spark if not v["passed"]]
    assert failed and all(v["counterexample"] and v["shape"] for v in failed)
    cx = json.loads((tmp_path / "spark" / failed[0]["counterexample"]).read_text())
    assert cx["origin"]["seed"] == failed[0]["seed"]
    classes = failure_classes(collect_verdicts(tmp_path / "spark", ["timer"], 0, n, 4))
    assert classes == failure_classes_spark(spark, tmp_path / "spark", ["timer"], 0, n, 4)
    assert any(c["property"] == "fire-once" for c in classes)
    # resumable: every range is done, nothing is pending
    assert pending_tasks(BROKEN, ["timer"], 0, n, 4, tmp_path / "spark") == ([], 2)


def test_campaign_cli_resumes_and_reports(tmp_path, capsys):
    args = ["campaign", "--impl", "reference", "--kinds", "timer,purgatory", "--schedules", "12", "--chunk", "4",
            "--engine", "local", "--workers", "2", "--out", str(tmp_path), "--json", "-"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["schedules"] == 24 and first["failed"] == 0 and first["ranges_run"] == 6
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["ranges_run"] == 0 and again["ranges_skipped"] == 6 and again["schedules"] == 24
    with pytest.raises(SystemExit) as e:
        main(["campaign", "--kinds", "wheel", "--out", str(tmp_path)])
    assert e.value.code == 2 and "unknown value 'wheel'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spark_campaign_stops_a_kind_at_its_failure_budget_between_jobs(spark, tmp_path, monkeypatch):
    # one range per Spark task per job: 8 ranges a job on local[2], the budget checked between jobs
    monkeypatch.setattr(spark_campaign, "RANGES_PER_TASK_PER_WAVE", 1)
    tasks, _ = pending_tasks(BROKEN, ["timer"], 0, 120, 5, tmp_path)
    outcome = run_tasks(tasks, engine="spark", spark=spark, budget=Budget(3))
    assert outcome.interrupted is None
    slices = spark.sparkContext.defaultParallelism * spark_campaign.TASKS_PER_CORE
    assert len(outcome.done) == slices and len(outcome.not_run) == 24 - slices
    assert sum(d["failed"] for d in outcome.done) >= 3
    # the ranges not run have no file, and the done ones are the lowest seeds
    files = sorted(p.name for p in (tmp_path / "verdicts" / "timer").glob("*.parquet"))
    assert files == sorted(f"range-{lo:012d}-{lo + 5:012d}.parquet" for lo in range(0, 5 * slices, 5))
