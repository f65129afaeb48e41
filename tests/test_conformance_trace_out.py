"""``wheelspec check --write traces=DIR`` records every campaign schedule's history as a Parquet
trace that ``wheelspec analyze`` reads: a correct implementation's trace holds
every property, a broken one's shows its bug in the set-based analysis too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.traces.format import read_trace, table_to_histories
from wheelspec.spec.show import impl_dirname

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def test_check_writes_one_trace_per_implementation_and_analyze_accepts_it(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    rep = tmp_path / "report.json"
    assert main(["check", "--impl", "reference", "--impl", "optimized", "--no-corpus", "--schedules", "6",
                 "--write", "traces=" + str(out), "--json", str(rep)]) == 0
    for impl in ("reference", "optimized"):
        path = out / f"{impl_dirname(impl)}.parquet"
        hist = table_to_histories(read_trace([path]), str(path))
        assert sorted(hist) == sorted(f"{impl}/{k}/{s}" for k in ("timer", "purgatory") for s in range(6))
        assert all(len(h.events) > 0 for h in hist.values())
    # the same schedules, the same events: reference and engine traces agree row for row
    a = pq.read_table(out / f"{impl_dirname('reference')}.parquet").drop_columns(["run", "impl"])
    b = pq.read_table(out / f"{impl_dirname('optimized')}.parquet").drop_columns(["run", "impl"])
    assert a.equals(b)
    assert json.loads(rep.read_text())["implementations"][0]["trace"].endswith(f"{impl_dirname('reference')}.parquet")
    assert main(["analyze", str(out), "--engine", "local"]) == 0


@pytest.mark.slow
def test_a_broken_timer_trace_fails_the_analysis(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    rc = main(["check", "--impl", "tests.fixtures.broken:fires_twice", "--no-corpus", "--kinds", "timer",
               "--schedules", "30", "--write", "traces=" + str(out), "--out", str(tmp_path / "cx")])
    assert rc == 1
    (trace,) = out.glob("*.parquet")
    assert main(["analyze", str(trace), "--engine", "local"]) == 1


def test_campaign_trace_out_records_each_schedule_once_as_check_does(tmp_path: Path) -> None:
    """``wheelspec campaign --write traces=DIR`` and ``wheelspec check --write traces=DIR`` record the same
    schedules' runs identically (both through ``TraceWriter.add_schedule`` from the run judged)."""
    camp = tmp_path / "campaign"
    assert main(["campaign", "--impl", "reference", "--kinds", "timer,purgatory", "--schedules", "6", "--chunk", "3",
                 "--engine", "local", "--workers", "1", "--out", str(camp),
                 "--write", "traces=" + str(camp / "traces")]) == 0
    assert main(["check", "--impl", "reference", "--no-corpus", "--schedules", "6",
                 "--write", "traces=" + str(tmp_path / "check")]) == 0
    sort = [("run", "ascending"), ("seq", "ascending")]
    a = read_trace([camp / "traces"]).sort_by(sort)
    b = read_trace([tmp_path / "check" / f"{impl_dirname('reference')}.parquet"]).sort_by(sort)
    assert a.num_rows == b.num_rows > 0
    assert a.equals(b)
