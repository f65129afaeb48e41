"""Spark as its users submit it: ``spark-submit "$(wheelspec spark-entry)" analyze|campaign ...``
with PySpark's own ``bin/spark-submit``, the submit's master and ``--conf`` honoured, and the
commands' ``--conf KEY=VALUE`` passed to the session (docs/guides/SPARK.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main, spark_submit
from wheelspec.conformance.traces.spark_session import conf_item


def _spark_submit() -> Path:
    try:
        import pyspark
    except ImportError:
        pytest.fail("PySpark is not installed: pip install -e '.[test]' (the 'spark' extra)")
    path = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if not path.is_file():
        pytest.fail(f"PySpark's spark-submit is missing ({path}): reinstall pyspark")
    return path


def _trace(tmp_path: Path) -> Path:
    from wheelspec.conformance.traces.format import write_trace
    from wheelspec.conformance.traces.synth import synthetic_trace

    table, planted = synthetic_trace(3000, seed=3, plant_early=True)
    assert planted
    return write_trace(table, tmp_path / "trace.parquet")


def _submit(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    cmd = [str(_spark_submit()), "--master", "local[2]", "--driver-memory", "1g",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
           "--conf", "spark.driver.bindAddress=127.0.0.1", spark_submit.__file__, *argv]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


# ------------------------------------------------------------------ quick: the entry and --conf -----
def test_conf_items_are_key_value():
    assert conf_item("spark.executor.memory=8g") == ("spark.executor.memory", "8g")
    assert conf_item("spark.driver.extraJavaOptions=-Da=b -Dc=d") == ("spark.driver.extraJavaOptions",
                                                                       "-Da=b -Dc=d")
    assert conf_item("spark.x=") == ("spark.x", "")
    for bad in ("spark.x", "=1", "a key=1"):
        with pytest.raises(Exception, match="must be KEY=VALUE"):
            conf_item(bad)


@pytest.mark.parametrize("command", ["analyze", "campaign"])
def test_conf_needs_the_spark_engine(command, tmp_path, capsys):
    extra = ["--synthetic", "10"] if command == "analyze" else ["--schedules", "1"]
    assert main([command, *extra, "--engine", "local", "--conf", "spark.x=1", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == (f"wheelspec {command}: error: --conf sets Spark configuration: "
                                               f"it needs --engine spark")
    assert not (tmp_path / "o").exists()


def test_the_entry_refuses_what_the_submit_decides(capsys):
    assert spark_submit.main([]) == 2
    assert "give a command after this file: analyze or campaign (got nothing)" in capsys.readouterr().err
    assert spark_submit.main(["check"]) == 2
    assert "(got 'check')" in capsys.readouterr().err
    assert spark_submit.main(["analyze", "--master", "spark://h:7077", "t.parquet"]) == 2
    assert "--master is spark-submit's under spark-submit" in capsys.readouterr().err
    assert spark_submit.main(["--path"]) == 0
    assert capsys.readouterr().out.strip() == spark_submit.__file__


def test_spark_entry_prints_the_entry_file(capsys):
    assert main(["spark-entry"]) == 0
    assert Path(capsys.readouterr().out.strip()) == Path(spark_submit.__file__)


# ------------------------------------------------------------------ Spark ----------------------------
@pytest.mark.slow
@pytest.mark.external("spark")
@pytest.mark.timeout(300)
def test_conf_reaches_a_running_session(spark, tmp_path, capsys):
    from wheelspec.conformance.traces.analyze import analyze

    trace = _trace(tmp_path)
    result = analyze([str(trace)], engine="spark", spark=None, conf={"spark.sql.shuffle.partitions": "3"})
    assert result["spark"]["conf"] == {"spark.sql.shuffle.partitions": "3"}
    assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    spark.conf.set("spark.sql.shuffle.partitions", "2")   # the shared session as conftest made it


@pytest.mark.slow
@pytest.mark.external("spark")
@pytest.mark.timeout(300)
def test_spark_submit_runs_analyze_with_the_submits_master_and_conf(tmp_path):
    from wheelspec.conformance.traces.analyze import analyze

    trace = _trace(tmp_path)
    p = _submit(tmp_path, "analyze", str(trace), "--conf", "spark.sql.shuffle.partitions=3", "--json", "-")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 1, p.stderr[-3000:]   # the planted early fire: the command's own exit code
    result = json.loads(p.stdout)
    assert result["engine"] == "spark"
    assert result["spark"] == {"master": "local[2]", "submitted": True,
                               "conf": {"spark.sql.shuffle.partitions": "3"}}
    expected = analyze([str(trace)], engine="local")   # the same verdicts as in one process
    assert {k: v["violations"] for k, v in result["properties"].items()} == \
        {k: v["violations"] for k, v in expected["properties"].items()}
    assert result["properties"]["no-early-fire"]["violations"] >= 1
    # Spark's log held at WARN (spark.log.level): of the context's ~45 start-up INFO lines, the 3
    # printed before the setting takes effect remain
    assert _info_lines(p.stderr) <= 5, p.stderr[-3000:]


def _info_lines(stderr: str) -> int:
    return sum(1 for line in stderr.splitlines() if " INFO " in line)


@pytest.mark.slow
@pytest.mark.external("spark")
@pytest.mark.timeout(300)
def test_spark_submit_with_v_keeps_sparks_own_log(tmp_path):
    p = _submit(tmp_path, "analyze", "-v", str(_trace(tmp_path)))
    assert p.returncode == 1, p.stderr[-3000:]
    assert _info_lines(p.stderr) > 20, p.stderr[-3000:]


@pytest.mark.parametrize(("argv", "quiet"), [(["analyze", "t"], True), (["analyze", "-v", "t"], False),
                                             (["campaign", "--verbose"], False), (["analyze", "-vv", "t"], False)])
def test_the_entry_holds_sparks_log_at_warn_unless_v(argv, quiet, monkeypatch):
    from wheelspec.conformance.traces import spark_session

    monkeypatch.setattr("wheelspec.conformance.cli.main", lambda args: 0)
    monkeypatch.setattr(spark_session, "_quiet_submit", not quiet)
    assert spark_submit.main(argv) == 0
    assert spark_session._quiet_submit is quiet


@pytest.mark.slow
@pytest.mark.external("spark")
@pytest.mark.timeout(300)
def test_spark_submit_runs_a_campaign(tmp_path):
    p = _submit(tmp_path, "campaign", "--kinds", "timer", "--schedules", "4", "--chunk", "2", "--out", "camp",
                "--conf", "spark.task.maxFailures=2", "--json", "-")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    assert summary["schedules"] == 4 and summary["engine"] == "spark" and summary["failed"] == 0
    assert summary["spark"] == {"master": "local[2]", "submitted": True, "conf": {"spark.task.maxFailures": "2"}}
    assert len(list((tmp_path / "camp" / "verdicts" / "timer").glob("range-*.parquet"))) == 2
