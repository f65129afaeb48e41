"""A declared range (``capabilities.ranges`` as an object, docs/guides/PROTOCOL.md section 4.4): how it is
read and refused, how the campaign keeps a schedule inside it, and, end to end, that a toy wheel
accepting delays 1..4095 only (tests/fixtures/narrow_wheel.py) gets one ``ranges`` finding and
passes everything else when it declares its range, still fails when it has a real bug, and drowns
in ``refused-valid`` findings when it does not declare it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import Capabilities, Config, DeclaredRanges
from wheelspec.conformance.check.corpus import DECLARED_RANGES, load_corpus, run_scenario
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.judge import declared_out
from wheelspec.conformance.check.narrow import narrow, narrow_config, out_of_range
from wheelspec.conformance.cli import main
from wheelspec.spec import limits, ops
from wheelspec.spec.errors import ProtocolError, UserError

ROOT = Path(__file__).resolve().parents[1]
TOY = "tests.fixtures.narrow_wheel"
KAFKA_DELAYS = f"[{limits.MIN_DELAY_MS}, {limits.MAX_DELAY_MS}]"


@pytest.fixture(autouse=True)
def _fixtures_importable(monkeypatch):
    # `--impl tests.fixtures.narrow_wheel:...` imports from the project root, whatever the cwd.
    monkeypatch.syspath_prepend(str(ROOT))


# ------------------------------------------------------------------ the declaration ------------
def test_wire_object_is_read_and_written_back_with_both_keys():
    caps = Capabilities.from_dict({"ranges": {"delay": [1, 4095]}})
    assert caps.declared_ranges() == DeclaredRanges(delay=(1, 4095))
    assert caps.to_dict()["ranges"] == {"delay": [1, 4095], "time": [0, limits.MAX_TIME_MS]}
    assert Capabilities.from_dict(caps.to_dict()) == caps
    # the string forms are as they were
    assert Capabilities.from_dict({"ranges": "unbounded"}).ranges == "unbounded"
    assert Capabilities.from_dict({}).declared_ranges() is None


@pytest.mark.parametrize("value, says", [
    ({}, "must be one of bounded, unbounded or an object"),
    ("wide", "must be one of bounded, unbounded or an object"),
    ({"delays": [1, 2]}, 'unknown key "delays" (known: delay, time)'),
    ({"delay": [5, 1]}, "capabilities.ranges.delay must be [lo, hi]"),
    ({"delay": [1, True]}, "capabilities.ranges.delay must be [lo, hi]"),
    ({"delay": [1]}, "capabilities.ranges.delay must be [lo, hi]"),
    ({"delay": [0, limits.MAX_DELAY_MS + 1]}, f"{limits.MIN_DELAY_MS} <= lo <= hi <= {limits.MAX_DELAY_MS}"),
    ({"time": [-1, 5]}, f"0 <= lo <= hi <= {limits.MAX_TIME_MS}"),
])
def test_a_malformed_declaration_is_one_line_naming_the_field(value, says):
    with pytest.raises(ProtocolError) as e:
        Capabilities.from_dict({"ranges": value})
    assert says in str(e.value) and "\n" not in str(e.value)


def test_in_process_adapters_declare_it_as_a_dict():
    caps = Capabilities(ranges={"delay": (1, 4095), "time": (0, 2**32 - 1)})
    assert caps.declared_ranges() == DeclaredRanges((1, 4095), (0, 2**32 - 1))
    hash(caps)  # still a value: capabilities key caches
    with pytest.raises(UserError, match="capabilities.ranges.delay must be"):
        Capabilities(ranges={"delay": (9, 1)})


def test_library_base_declares_its_class_attribute():
    class Narrow(LibraryTimerAdapter):
        ranges = {"delay": (1, 4095)}

    assert Narrow().hello().capabilities.declared_ranges() == DeclaredRanges(delay=(1, 4095))
    assert LibraryTimerAdapter().hello().capabilities.ranges == "bounded"


# ------------------------------------------------------------------ the campaign ---------------
NARROW = Capabilities(timer=True, protocol=2, ranges={"delay": (1, 4095), "time": (1000, 2**32 - 1)})


def test_narrow_clamps_into_the_declared_range_and_keeps_the_rest():
    schedule = [ops.AddTask(0, 0), ops.AddTask(1, -7), ops.AddTask(2, 10_000), ops.AddTask(3, 5),
                ops.AdvanceTo(5), ops.AdvanceTo(2**33), ops.Size(), ops.CancelTask(2),
                ops.AddTask(4, limits.MAX_DELAY_MS + 1), ops.AdvanceTo(limits.MAX_TIME_MS + 1)]
    assert narrow(schedule, NARROW) == [
        ops.AddTask(0, 1), ops.AddTask(1, 1), ops.AddTask(2, 4095), ops.AddTask(3, 5),
        ops.AdvanceTo(1000), ops.AdvanceTo(2**32 - 1), ops.Size(), ops.CancelTask(2),
        # outside wheelspec's ranges: sent as drawn, to be refused (property ranges)
        ops.AddTask(4, limits.MAX_DELAY_MS + 1), ops.AdvanceTo(limits.MAX_TIME_MS + 1)]
    assert narrow_config(Config(1, 20, 7, 1000), NARROW).start_ms == 1000
    assert narrow_config(Config(1, 20, 2**40, 1000), NARROW).start_ms == 2**32 - 1
    # nothing declared: nothing moved
    assert narrow(schedule, Capabilities(timer=True, protocol=2)) == schedule


def test_every_generated_schedule_stays_inside_the_declared_range():
    for kind in ("timer", "purgatory"):
        caps = NARROW if kind == "timer" else Capabilities(timer=True, purgatory=True, protocol=2,
                                                           ranges=NARROW.ranges)
        for seed in range(150):
            cfg, schedule = generate(kind, seed)
            assert 1000 <= narrow_config(cfg, caps).start_ms <= 2**32 - 1
            narrowed = narrow(schedule, caps)
            assert len(narrowed) == len(narrow(schedule, Capabilities(timer=True, purgatory=True, protocol=2)))
            assert not any(declared_out(op, caps) for op in narrowed), (kind, seed)
            times = [op.time for op in narrowed if isinstance(op, ops.AdvanceTo) and not out_of_range(op)]
            assert times == sorted(times)  # advance targets stay in order


# ------------------------------------------------------------------ end to end ----------------
def check(tmp_path: Path, factory: str, *extra: str) -> tuple[int, dict]:
    report = tmp_path / f"{factory}.json"
    code = main(["check", "--impl", f"{TOY}:{factory}", "--kinds", "timer", "--out", str(tmp_path / "out"),
                 "--json", str(report), *extra])
    return code, json.loads(report.read_text())["implementations"][0]


def findings(rep: dict) -> list[dict]:
    return ([f for s in rep["scenarios"] for f in s["failures"]]
            + [f for o in rep["campaign"]["failures"] for f in o["failures"]])


@pytest.mark.slow
def test_declared_toy_wheel_gets_one_ranges_finding_and_passes_the_rest(tmp_path):
    code, rep = check(tmp_path, "factory", "--schedules", "300")
    assert code == 1
    assert rep["capabilities"]["ranges"] == {"delay": [1, 4095], "time": [0, limits.MAX_TIME_MS]}
    [only] = findings(rep)
    assert only["prop"] == "ranges"
    assert f"declares delays [1, 4095]; Kafka's range (spec/limits.py) is delays {KAFKA_DELAYS}" in only["message"]
    assert rep["verdicts"] == {"kafka": "pass", "ranges": "fail"}
    assert rep["campaign"]["schedules"] == 300 and rep["campaign"]["failed"] == 0
    status = Counter(s["status"] for s in rep["scenarios"] if s["name"] != DECLARED_RANGES)
    assert status["fail"] == 0 and status["pass"] > 20
    # the corpus scenarios whose requests it refuses are judged without them, not left out
    assert sum("outside the declared range" in s["note"] for s in rep["scenarios"]) >= 5
    assert all(s["note"].startswith("needs a purgatory") for s in rep["scenarios"] if s["status"] == "n/a")


@pytest.mark.slow
def test_a_planted_order_bug_is_still_found(tmp_path):
    code, rep = check(tmp_path, "reversed_ties", "--schedules", "100")
    assert code == 1
    props = Counter(f["prop"] for f in findings(rep))
    assert props["ranges"] == 1
    assert rep["campaign"]["failed"] > 0 and set(props) - {"ranges"}
    assert rep["verdicts"]["kafka"] == "fail"


@pytest.mark.slow
def test_the_same_toy_without_the_declaration_drowns_in_refused_valid(tmp_path):
    code, rep = check(tmp_path, "undeclared", "--schedules", "100", "--max-failures", "100")
    assert code == 1
    props = Counter(f["prop"] for f in findings(rep))
    assert props["ranges"] == 0
    assert props["refused-valid"] >= 20 and rep["campaign"]["failed"] >= 20


def _scenario(make, name: str):
    [sc] = [s for s in load_corpus() if s.name == name]
    adapter = make()
    return run_scenario(adapter, adapter.hello().capabilities, sc)


def test_a_scenario_judges_its_refused_requests_as_changing_nothing():
    from tests.fixtures.narrow_wheel import factory, loses_on_refusal, reversed_ties

    # delays 0 and -5 refused: no finding (the declaration's one finding covers them)
    res = _scenario(factory, "timer/delay-zero-and-negative")
    assert res.status == "pass" and "2 of its requests are outside the declared range" in res.note
    # the rest is judged as usual: an order bug shows on a scenario holding a refused request
    name = "timer/equal-expiration-buckets-heap-order"
    assert _scenario(factory, name).status == "pass"
    res = _scenario(reversed_ties, name)
    assert "outside the declared range" in res.note
    assert res.status == "fail" and {f.prop for f in res.failures} == {"oracle"}
    # a refusal must change nothing: a re-add refused outside the range that drops the pending
    # entry is found (the reference runs the scenario without the refused re-add)
    name = "kafka/mock-timer-readd-nonpositive-delay"
    assert _scenario(factory, name).status == "pass"
    res = _scenario(loses_on_refusal, name)
    assert res.status == "fail" and "no-lost-task" in {f.prop for f in res.failures}
    assert "refused-valid" not in {f.prop for f in res.failures}


def test_matrix_row_shows_the_declared_range():
    from wheelspec.conformance.matrix.rows import virtual_row

    row = virtual_row(f"{TOY}:factory", schedules=10, cx_dir=None, progress=lambda _: None)
    assert row.cells["huge delay"] == "FAIL" and row.notes["huge delay"] == "declares delays [1, 4095]"
    assert [c for c, v in row.cells.items() if v == "FAIL"] == ["huge delay"]
    assert len(row.failures) == 1 and "[ranges] declares delays [1, 4095]" in row.failures[0]


def test_python_api_reports_the_declaration_once(tmp_path):
    from wheelspec.conformance.api import check_impl

    result = check_impl(f"{TOY}:factory", schedules=20, kinds=["timer"], corpus=False, regressions=None,
                        out=tmp_path)
    failed = [o for o in result.outcomes if o.status == "fail"]
    assert [o.unit for o in failed] == ["declared-ranges"] and not result.ok
    assert [f.prop for f in failed[0].findings] == ["ranges"]
    assert "declares delays [1, 4095]" in failed[0].text
    # nothing declared, nothing reported
    plain = check_impl("reference", schedules=0, corpus=False, regressions=None, out=tmp_path)
    assert plain.ok and not plain.outcomes
