"""Semantic coverage: the probe counts each situation when a schedule reaches it (and not when it
does not), the default run reaches every situation of the module's list often enough, and every
report (terminal, JSON, JUnit) carries the counts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.check import coverage
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.defaults import DEFAULT_SCHEDULES
from wheelspec.conformance.check.generate import KINDS
from wheelspec.conformance.check.oracle import oracle_run
from wheelspec.conformance.check.report import ImplReport, print_summary, write_json, write_junit
from wheelspec.spec import ops


def _counts(cfg: Config, schedule: list[ops.Op]) -> dict[str, int]:
    caps = reference_adapter().hello().capabilities
    probe = coverage.Probe()
    oracle_run(caps, cfg, schedule, probe)
    return dict(probe.counts)


# Each case: a schedule that reaches the situation, and a near twin that does not.
A, C, Adv, W = ops.AddTask, ops.CancelTask, ops.AdvanceTo, ops.Watch
CASES = {
    # tick 1, wheel 2: level 1 holds [2k, 2k+2), level 2 [4k, 4k+4)
    "cascade-level-1": (Config(1, 2), [A(1, 3), Adv(3)], [A(1, 1), Adv(3)]),
    "cascade-level-2": (Config(1, 2), [A(1, 5), Adv(5)], [A(1, 3), Adv(5)]),
    "cascade-level-3+": (Config(1, 2), [A(1, 9), Adv(9)], [A(1, 5), Adv(9)]),
    # SEMANTICS.md, Ordering, O4: level 0 [60, 61) and level 1 [60, 80) at tick 1, wheel 20 (task 3
    # moves the lazy clock to 41 first, so that 60 fits level 0)
    "tie-across-levels": (Config(1, 20, 0), [A(1, 75), A(3, 41), Adv(41), A(2, 19), Adv(60)],
                          [A(1, 75), A(3, 41), Adv(41), A(2, 18), Adv(60)]),
    # tick 10: 17 then 15 in one window run 17 first
    "fire-order-not-by-exp": (Config(10, 20), [A(1, 17), A(2, 15), Adv(10)], [A(1, 15), A(2, 17), Adv(10)]),
    "early-fire-in-window": (Config(10, 20), [A(1, 17), Adv(10)], [A(1, 10), Adv(10)]),
    # tick 1, wheel 4: task 1 waits at level 1 ([8, 12)), task 2 at level 2; the advance to 8
    # cascades 1 into level-0 window 9, task 3 goes there directly, task 2 is re-added there.  The
    # twin adds a fresh task 4 instead of re-adding 2: two routes only.
    "mixed-route-bucket": (Config(1, 4), [A(1, 9), A(2, 20), Adv(8), A(3, 1), A(2, 1), Adv(9)],
                           [A(1, 9), A(2, 20), Adv(8), A(3, 1), A(4, 1), Adv(9)]),
    # SEMANTICS.md, Placement: an idle advance leaves c_0 at 0; delay 0 at 1000 is not due at add
    "due-at-add-stale-clock": (Config(1, 20), [Adv(1000), A(1, 0)], [A(2, 1000), Adv(1000), A(1, 0)]),
    "zero-advance-fires": (Config(1, 20), [Adv(1000), A(1, 0), Adv(1000)], [Adv(1000), A(1, 0), Adv(1001)]),
    "readd-while-scheduled": (Config(), [A(1, 5), A(1, 6)], [A(1, 5), Adv(5), A(1, 6)]),
    "readd-after-fire": (Config(), [A(1, 5), Adv(5), A(1, 6)], [A(1, 5), A(1, 6)]),
    "readd-after-cancel": (Config(), [A(1, 5), C(1), A(1, 6)], [A(1, 5), A(1, 6)]),
    "cancel-after-fire": (Config(), [A(1, 5), Adv(5), C(1)], [A(1, 5), C(1)]),
    "cancel-racing-flush": (Config(1, 20), [Adv(1000), A(1, 0), C(1)], [A(1, 5), C(1)]),
    "cancel-cascaded": (Config(1, 2), [A(1, 9), Adv(8), C(1)], [A(1, 9), C(1)]),
    "purge": (Config(1, 20, 0, 0), [W(0, 10, ("a",)), ops.ForceComplete(0), Adv(1)],
              [W(0, 10, ("a",)), Adv(1)]),
    "cancel-for-key-other-keys": (Config(), [W(0, 10, ("a", "b")), ops.CancelForKey("a")],
                                  [W(0, 10, ("a",)), ops.CancelForKey("a")]),
}


def test_a_route_is_the_one_that_linked_the_entry_into_the_bucket():
    """Re-adding the cascaded task into its own window makes its entry a re-added one: the window
    then holds a direct and a re-added entry, not a cascaded one."""
    cfg, hit, _ = CASES["mixed-route-bucket"]
    readd_the_cascaded = [*hit[:4], A(1, 1), Adv(9)]
    counts = _counts(cfg, readd_the_cascaded)
    assert counts.get("readd-cascaded") == 1 and counts.get("mixed-route-bucket", 0) == 0, counts


@pytest.mark.parametrize("name", sorted(CASES))
def test_probe_counts_a_situation_when_reached_and_not_otherwise(name):
    assert name in coverage.NAMES
    cfg, hit, miss = CASES[name]
    assert _counts(cfg, hit).get(name, 0) >= 1, _counts(cfg, hit)
    assert _counts(cfg, miss).get(name, 0) == 0, _counts(cfg, miss)


def test_every_situation_is_defined_once_with_its_section():
    assert len(set(coverage.NAMES)) == len(coverage.SITUATIONS)
    text = open("spec/SEMANTICS.md").read()
    for s in coverage.SITUATIONS:
        assert s.summary and f"## {s.section}" in text, s


@pytest.fixture(scope="module")
def default_outcomes():
    """The default `wheelspec check` campaign (seeds 0..399 of each kind) on the reference."""
    a = reference_adapter()
    caps = a.hello().capabilities
    return [o for kind in KINDS for o in run_seed_range(a, caps, kind, range(DEFAULT_SCHEDULES), shrink=False)]


def test_the_default_run_covers_every_situation(default_outcomes):
    totals = coverage.total(o.coverage for o in default_outcomes)
    low = {n: c for n, c in totals.items() if c < coverage.MIN_DEFAULT}
    assert set(totals) == set(coverage.NAMES) and low == {}, low


def test_reports_carry_the_coverage(default_outcomes, tmp_path):
    rep = ImplReport("reference", "reference", reference_adapter().hello().capabilities.to_dict(),
                     campaign=default_outcomes[:60])
    write_json(tmp_path / "r.json", [rep], {"command": "check"})
    doc = json.loads((tmp_path / "r.json").read_text())["implementations"][0]
    assert list(doc["coverage"]) == list(coverage.NAMES)
    assert doc["coverage"] == coverage.total(o.coverage for o in default_outcomes[:60])
    assert doc["verdicts"] == {"kafka": "pass", "ranges": "pass"}
    write_junit(tmp_path / "r.xml", [rep])
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "r.xml").iter("property")}
    assert all(props[f"coverage.{n}"] == str(doc["coverage"][n]) for n in coverage.NAMES)
    assert props["verdict.ranges"] == "pass"
    console = Console(record=True, width=200)
    print_summary(console, [rep])
    text = console.export_text()
    assert "kafka: pass, ranges: pass; coverage: " in text
