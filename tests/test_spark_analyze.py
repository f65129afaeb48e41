"""``wheelspec analyze --engine spark`` returns exactly the local engine's JSON (which the
trace tests check against the history checker): one dataset mixing reference histories, broken
(mutated) ones, a synthetic trace with planted early and double fires, and a third-party file
with only some columns.  The Spark engine is four Spark jobs per analysis."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_trace_analyze import _fixed_schedule, checker_props, mutate, run_info
from test_trace_roundtrip import run_reference

from wheelspec.conformance.traces.analyze import analyze
from wheelspec.conformance.traces.format import history_rows, read_trace, rows_to_table, write_trace
from wheelspec.conformance.traces.local import analyze_table
from wheelspec.conformance.traces.spark import analyze_dataframe, load
from wheelspec.conformance.traces.synth import synthetic_trace
from wheelspec.spec.errors import UserError

pytestmark = [pytest.mark.external("spark"), pytest.mark.slow]  # a Spark session


# Spark's start-up and first jobs take 20-120 s on a loaded 2-core machine: a longer limit, not a skip.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spark_engine_gives_the_local_engines_json(spark, tmp_path):
    rnd = random.Random(8)
    rows, want = [], set()
    for i in range(30):
        cfg, ops = _fixed_schedule(100 + i)
        events = run_reference(cfg, ops).events
        if i % 2:
            events = mutate(events, rnd)
        want |= checker_props(events, cfg)
        rows += history_rows(events, **run_info(cfg, f"ref-{i:02d}", impl=f"impl-{i % 3}"))
    write_trace(rows_to_table(rows), tmp_path / "ds" / "reference.parquet")
    synth, planted = synthetic_trace(9000, runs=3, seed=4, plant_early=True, plant_double=True)
    write_trace(synth, tmp_path / "ds" / "synthetic.parquet")
    renamed = pa.array(["b-" + r for r in synth.column("run").to_pylist()])   # the same runs twice
    write_trace(synth.set_column(synth.schema.get_field_index("run"), "run", renamed),
                tmp_path / "ds" / "synth-b.parquet")
    pq.write_table(pa.table({"run": ["third"] * 4, "seq": [0, 1, 2, 3], "kind": ["add", "advance", "fire", "advance"],
                             "time": [0, 5, 12, 12], "id": [1, None, 1, None], "delay": [10, None, None, None],
                             "deadline": [10, None, 10, None]}), tmp_path / "ds" / "third.parquet")
    local = analyze([str(tmp_path / "ds")], engine="local")
    remote = analyze([str(tmp_path / "ds")], engine="spark", spark=spark)
    for r in (local, remote):
        assert r.pop("engine") and r.pop("seconds") >= 0
    assert remote == local
    got = {p for p, v in local["properties"].items() if v["violations"]}
    assert got == want | {"no-early-fire", "fire-once"}          # the mutations' and the planted ones
    assert len(want) >= 3                                       # the dataset is not trivially clean
    rows_early = local["properties"]["no-early-fire"]["rows"]
    assert any(r["run"] == planted[0].run and r["id"] == planted[0].task and r["time"] == planted[0].time
               for r in rows_early)
    # the third-party run: a fire 2 ms late, lateness known, level unknown (no wheel size)
    assert any(g["impl"] == "" and g["level"] is None and g["max"] == 2 for g in local["lateness"])
    # The per-partition results add up whatever the partitioning: 5 partitions of whole runs
    # (some runs of a property in different partitions), and the first-rows lists are cut after
    # the merge (max_rows=1 keeps the globally first row, not each partition's).
    few = analyze_table(read_trace([str(tmp_path / "ds")]), max_rows=1)
    df = load(spark, [str(tmp_path / "ds")])
    assert analyze_dataframe(spark, df, max_rows=1, partitions=5) == few
    assert few["properties"]["no-early-fire"]["violations"] == 2
    assert [r["run"] for r in few["properties"]["no-early-fire"]["rows"]] == ["b-" + planted[0].run]


def test_spark_engine_rejects_bad_input_in_one_line(spark, tmp_path):
    """The Spark engine validates in its first aggregation, before any executor runs the judge:
    an unknown kind or profile is a one-line user error naming the column and the value."""
    base = {"run": ["r"] * 2, "seq": [0, 1], "kind": ["add", "advance"], "time": [0, 1]}
    for col, bad, value in (("kind", ["add", "bogus"], "bogus"), ("profile", ["kafka", "lax"], "lax")):
        pq.write_table(pa.table({**base, col: bad}), tmp_path / f"{col}.parquet")
        with pytest.raises(UserError, match=f"'{col}' has an unknown value '{value}'"):
            analyze([str(tmp_path / f"{col}.parquet")], engine="spark", spark=spark)


def _corrupt(good: bytes, how: str) -> bytes:
    """``good`` (a Parquet file) cut short, or with bytes of its first data page overwritten (the
    footer intact: Spark reads the schema and fails in the middle of the job)."""
    if how == "truncated":
        return good[: len(good) // 2] + b"x" * 100 + good[-8:]
    import io

    start = pq.ParquetFile(io.BytesIO(good)).metadata.row_group(0).column(0).data_page_offset
    return good[: start + 20] + b"\xab" * 40 + good[start + 60:]


@pytest.mark.parametrize("how", ["truncated", "corrupt page"])
def test_an_unreadable_file_is_one_line_naming_it_not_a_java_stack(spark, tmp_path, how):
    good = tmp_path / "good.parquet"
    cfg, ops = _fixed_schedule(30)
    write_trace(rows_to_table(history_rows(run_reference(cfg, ops).events, **run_info(cfg, "r"))), good)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(_corrupt(good.read_bytes(), how))
    with pytest.raises(UserError) as caught:
        analyze([str(tmp_path)], engine="spark", spark=spark)
    message = str(caught.value)
    assert message.startswith("could not read the trace with Spark:") and str(bad) in message
    assert "\n" not in message and " at org." not in message
    # the local engine names the same file
    with pytest.raises(UserError, match="bad.parquet: not a readable Parquet file"):
        analyze([str(tmp_path)], engine="local")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_values_past_the_ranges_give_the_local_engines_verdicts_and_messages(spark, tmp_path):
    """Times near 2^63, a deadline a recorder wrapped and a reference history at the edges of the
    ranges: the same well-formed reasons, true numbers (a deadline past int64) and lateness."""
    from test_trace_analyze_ranges import edge_history, past_the_ranges

    table, wrapped = past_the_ranges()
    (tmp_path / "ds").mkdir()
    pq.write_table(table, tmp_path / "ds" / "past.parquet")
    write_trace(edge_history(), tmp_path / "ds" / "edge.parquet")
    local = analyze([str(tmp_path / "ds")], engine="local", lateness_ms=10)
    remote = analyze([str(tmp_path / "ds")], engine="spark", spark=spark, lateness_ms=10)
    for r in (local, remote):
        assert r.pop("engine") and r.pop("seconds") >= 0
    assert remote == local
    assert local["properties"]["well-formed"]["violations"] == 8
    assert any(r["deadline"] == 2**63 + 94 for r in local["properties"]["well-formed"]["rows"])
    assert not wrapped & {r["deadline"] for v in local["properties"].values() for r in v["rows"]}
    assert [(g["count"], g["max"]) for g in local["lateness"]] == [(2, 2**40 - 1)]
