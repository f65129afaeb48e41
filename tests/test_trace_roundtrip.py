"""The trace format: histories -> Arrow/Parquet -> histories is lossless; bad traces are refused
with one line naming the file and column; the synthetic generator obeys the checker and plants
exactly the violations it reports."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.conformance.traces.format import (
    TRACE_SCHEMA,
    TraceWriter,
    history_to_table,
    read_trace,
    table_to_histories,
    write_history,
)
from wheelspec.conformance.traces.synth import synthetic_trace
from wheelspec.reference import Simulation
from wheelspec.spec import ops
from wheelspec.spec.checker import check_history
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import profile

KEYS = ("a", "b", 1, 7)


@st.composite
def schedules(draw, purgatory: bool = True):
    """A config and a valid operation list for the reference (timer and purgatory mixed)."""
    tick = draw(st.sampled_from((1, 1, 3, 10)))
    wheel = draw(st.sampled_from((2, 3, 4, 20)))
    prof = draw(st.sampled_from(("kafka", "kafka", "strict-gt")))
    purge = draw(st.sampled_from((0, 1, 3, 1000)))
    now = draw(st.integers(0, 100))
    added: set[int] = set()
    watched: list[int] = []
    out: list[ops.Op] = []
    for _ in range(draw(st.integers(1, 40))):
        c = draw(st.integers(0, 99 if purgatory else 49))
        if c < 20:
            t = draw(st.integers(0, 5))
            added.add(t)
            out.append(ops.AddTask(t, draw(st.integers(-3, tick * wheel * wheel + 5))))
        elif c < 27 and added:
            out.append(ops.CancelTask(draw(st.sampled_from(sorted(added)))))
        elif c < 45:
            now += draw(st.sampled_from((0, 1, tick, tick * wheel, draw(st.integers(0, 200)))))
            out.append(ops.AdvanceTo(now))
        elif c < 50:
            out.append(ops.Size())
        elif c < 65:
            keys = tuple(draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True)))
            out.append(ops.Watch(len(watched), draw(st.integers(-2, 3 * tick * wheel)), keys, draw(st.booleans())))
            watched.append(len(watched))
        elif c < 75 and watched:
            out.append(ops.SetCompletable(draw(st.sampled_from(watched)), draw(st.booleans())))
        elif c < 85:
            out.append(ops.CheckAndComplete(draw(st.sampled_from(KEYS))))
        elif c < 89:
            out.append(ops.CancelForKey(draw(st.sampled_from(KEYS))))
        elif c < 94 and watched:
            out.append(ops.ForceComplete(draw(st.sampled_from(watched))))
        else:
            out.append(draw(st.sampled_from((ops.Watched(), ops.NumDelayed()))))
    out.append(ops.AdvanceTo(now + tick * wheel**3))
    return dict(tick_ms=tick, wheel_size=wheel, profile=prof, purge_interval=purge, start_ms=0), out


def run_reference(cfg: dict, operations: list[ops.Op]):
    sim = Simulation(tick_ms=cfg["tick_ms"], wheel_size=cfg["wheel_size"], start_ms=cfg["start_ms"],
                     purge_interval=cfg["purge_interval"], profile=cfg["profile"])
    try:
        for op in operations:
            sim.apply(op)
    finally:
        sim.close()
    return sim.history


def run_info(cfg: dict, run: str, impl: str = "reference") -> dict:
    return dict(run=run, impl=impl, profile=cfg["profile"], tick_ms=cfg["tick_ms"], wheel_size=cfg["wheel_size"])


@pytest.mark.slow
@settings(max_examples=examples(60, 300))
@given(schedules())
def test_history_roundtrip_through_parquet(tmp_path_factory, case):
    cfg, operations = case
    h = run_reference(cfg, operations)
    path = tmp_path_factory.mktemp("t") / "one.parquet"
    write_history(h, path, **run_info(cfg, "r1"), seed=5)
    table = read_trace(path)
    assert table.schema.equals(TRACE_SCHEMA, check_metadata=False)
    assert table.num_rows == len(h)
    back = table_to_histories(table)
    assert list(back) == ["r1"]
    assert back["r1"].events == h.events          # same events, same order, same key types
    assert table.column("seed").to_pylist() == [5] * len(h)


def test_many_runs_in_one_file_keep_their_order(tmp_path):
    hs = {}
    path = tmp_path / "many.parquet"
    with TraceWriter(path, flush_rows=7) as w:       # several row groups
        for i, delay in enumerate((0, 5, 17, 40)):
            cfg = dict(tick_ms=1 + i, wheel_size=4, profile="kafka", purge_interval=1, start_ms=0)
            h = run_reference(cfg, [ops.AddTask(1, delay), ops.Watch(0, delay, ("k", 2)), ops.AdvanceTo(3),
                                    ops.CheckAndComplete(2), ops.AdvanceTo(100)])
            hs[f"run-{i}"] = h
            w.add(h, **run_info(cfg, f"run-{i}"))
    assert pq.ParquetFile(path).num_row_groups > 1
    back = table_to_histories(read_trace(tmp_path))   # a directory reads every *.parquet below it
    assert {k: v.events for k, v in back.items()} == {k: v.events for k, v in hs.items()}


def test_fire_rows_carry_their_schedules_delay_and_completions_their_deadline():
    cfg = dict(tick_ms=1, wheel_size=20, profile="kafka", purge_interval=1000, start_ms=0)
    h = run_reference(cfg, [ops.AddTask(3, 25), ops.Watch(9, 4, ("x",)), ops.AdvanceTo(30)])
    t = history_to_table(h, **run_info(cfg, "r"))
    rows = {r["kind"]: r for r in t.to_pylist()}
    assert rows["fire"]["delay"] == 25 and rows["fire"]["deadline"] == 25
    assert rows["complete"]["deadline"] == 4 and rows["expire"]["deadline"] == 4


def test_a_third_party_trace_needs_only_the_required_columns(tmp_path):
    t = pa.table({"run": ["x", "x", "x"], "seq": [0, 1, 2], "kind": ["add", "fire", "advance"],
                  "time": [0, 10, 10], "id": [4, 4, None], "delay": [10, None, None],
                  "deadline": pa.array([10, 10, None], pa.int32())})      # int32 is widened
    pq.write_table(t, tmp_path / "third.parquet")
    table = read_trace(tmp_path / "third.parquet")
    assert table.column_names == TRACE_SCHEMA.names
    h = table_to_histories(table)["x"]
    assert check_history(h, profile("strict")).ok


@pytest.mark.parametrize("table, needle", [
    (pa.table({"run": ["x"], "seq": [0], "kind": ["add"]}), "no column 'time'"),
    (pa.table({"run": ["x"], "seq": [0], "kind": ["add"], "time": ["soon"]}), "column 'time' has type string"),
    (pa.table({"run": ["x"], "seq": [0], "kind": ["add"], "time": pa.array([None], pa.int64())}),
     "column 'time' has 1 null"),
])
def test_bad_traces_are_refused_naming_file_and_column(tmp_path, table, needle):
    pq.write_table(table, tmp_path / "bad.parquet")
    with pytest.raises(UserError, match=needle) as e:
        read_trace(tmp_path / "bad.parquet")
    assert "bad.parquet" in str(e.value) and "\n" not in str(e.value)


def test_rows_with_missing_fields_are_refused_with_run_and_seq(tmp_path):
    t = pa.table({"run": ["x"], "seq": [3], "kind": ["fire"], "time": [1], "id": [1]})
    with pytest.raises(UserError, match=r"run 'x' seq 3: a 'fire' row needs column 'deadline'"):
        table_to_histories(t)
    with pytest.raises(UserError, match="no such trace file"):
        read_trace(tmp_path / "nope.parquet")
    with pytest.raises(UserError, match="not a readable Parquet file"):
        (tmp_path / "junk.parquet").write_text("not parquet")
        read_trace(tmp_path / "junk.parquet")


def _runs_verdicts(table):
    out = {}
    for run, h in table_to_histories(table).items():
        tick = pc.filter(table["tick_ms"], pc.equal(table["run"], run))[0].as_py()
        out[run] = check_history(h, profile("kafka", tick))
    return out


def test_synthetic_trace_is_clean_and_deterministic():
    t1, planted = synthetic_trace(6000, runs=3, seed=11)
    t2, _ = synthetic_trace(6000, runs=3, seed=11)
    assert planted == [] and t1.equals(t2)
    assert not synthetic_trace(6000, runs=3, seed=12)[0].equals(t1)
    kinds = set(t1.column("kind").to_pylist())
    assert kinds == {"add", "fire", "cancel", "advance"}
    for run, verdict in _runs_verdicts(t1).items():
        assert verdict.ok, (run, verdict.violations[:2])


def test_synthetic_trace_plants_exactly_the_reported_violations():
    t, planted = synthetic_trace(8000, runs=4, seed=3, plant_early=True, plant_double=True)
    assert [p.kind for p in planted] == ["early", "double"]
    found = {(run, v.prop) for run, verdict in _runs_verdicts(t).items() for v in verdict.violations}
    assert found == {(planted[0].run, "no-early-fire"), (planted[1].run, "fire-once")}
