"""The independent timer of tests/fixtures/variants passes the runner; each of its broken variants
is real (a witness schedule shows the bug) and is caught by the random campaign.

``docs/results/POWER.md`` (``python -m wheelspec.conformance.measure.power``) measures the same variants at scale.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import resolve
from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import load_corpus, run_scenario
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.cli import main
from wheelspec.spec.errors import UserError
from wheelspec.spec.ops import AddTask as Add
from wheelspec.spec.ops import AdvanceTo as To
from wheelspec.spec.ops import CancelForKey, Size, Watch
from wheelspec.spec.ops import CancelTask as Cancel
from wheelspec.spec.ops import CheckAndComplete as Check
from wheelspec.spec.ops import SetCompletable as Completable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.fixtures import variants  # noqa: E402 - needs the sys.path entry above

NAMES = [v.name for v in variants.VARIANTS]
KIND = {v.name: v.kind for v in variants.VARIANTS}

#: variant -> a schedule on which it fails and the correct timer does not (shrunk campaign
#: counterexamples where the campaign finds one; written by hand for the deepest)
WITNESSES = {
    "wrap-at-nine": (Config(1, 20, 0, 1000), [*(Add(i, 10) for i in range(9)), To(10)]),
    "cascade-drops-fifth": (Config(1, 4, 0, 1000), [*(Add(i, 8) for i in range(5)), To(8)]),
    "requeue-skips-fourth": (Config(50, 4, 0, 0), [To(147), Add(0, 3), To(350), Add(1, 200), Add(0, 0), To(866),
                                                   Add(0, 84), To(950)]),
    "prepend-when-reused": (Config(50, 4, 0, 0), [To(350), Add(0, 800), Add(1, 0), To(866), Add(2, 284), Add(1, 84),
                                                  To(1150)]),
    "mask-index": (Config(1, 20, 0, 3), [To(6833), Add(0, -1), Add(1, 3), To(6833)]),
    "fifo-ties": (Config(50, 8, 0, 5), [Add(0, 400), Add(1, 50), To(377), Add(2, 0), Add(2, 23), To(400)]),
    "last-parent-heap": (Config(5, 2, 0, 5), [Add(0, 5), Add(1, 10), Add(2, 20), To(10)]),
    "readd-leaks-after-cascade": (Config(1, 5, 3, 2), [To(4), Add(0, 4), To(5), Add(0, 0), Size()]),
    "cancel-after-two-cascades": (Config(5, 4, 0, 5), [To(209), Add(0, 16), To(220), Cancel(0)]),
    "count-wraps-at-sixteen": (Config(1, 20, 0, 1000), [*(Add(i, 100) for i in range(16)), Size()]),
    # tick 1, wheel 4: window 9 lies in level 1's [8, 12); the advance to 8 cascades task 1 into it
    "readd-keeps-cascaded-place": (Config(1, 4, 0, 1000), [Add(1, 9), To(8), Add(2, 1), Add(1, 1), To(9)]),
    "readd-jumps-cascaded": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), To(8), Add(2, 1), Add(3, 1), To(9)]),
    # task 4 paces the base clock to 6: tasks 2 (direct) and 3 (re-added) link into window 9 while
    # task 1 still waits at level 1
    "cascade-ahead-when-readd": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), Add(4, 6), To(6), Add(2, 3), Add(3, 3),
                                                         To(8), To(9)]),
    "flush-groups-by-route": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), To(8), Add(2, 1), Add(3, 1), To(9)]),
    "purge-at-threshold": (Config(1, 20, 0, 2), [Watch(0, 0, ("a",)), Watch(1, 0, ("a",)), To(0)]),
    "purge-scans-four": (Config(1, 20, 0, 2), [*(Watch(i, 0, ("a",)) for i in range(5)), To(0)]),
    "check-tries-four": (Config(1, 20, 0, 1000), [*(Watch(i, 100, ("a",)) for i in range(5)), Completable(4),
                                                  Check("a")]),
    "check-drops-stale-list": (Config(50, 4, 0, 3), [Watch(0, 0, ("a",)), Watch(1, 0, ("a",)), Watch(2, 0, ("a",)),
                                                     To(18), Watch(3, 32, ("a",)), Check("a"), To(50)]),
    "cancel-for-key-spares-shared": (Config(10, 5, 12, 5), [Watch(0, 8, ("a", "b")), CancelForKey("a"), To(20)]),
    "force-keeps-timeout": (Config(1, 3, 0, 2), [Watch(0, 1, ("a", "b", "c")), Completable(0), Watch(1, 0, ("b",)),
                                                 Watch(2, 0, ("b",)), Check("a"), To(0)]),
}

#: the variants whose bug needs one bucket filled by several routes (direct, cascaded, re-added):
#: each one's witness with one route taken away (the same window filled without it), which it passes
ROUTE_TWINS = {
    # the re-added task had arrived directly, not by a cascade
    "readd-keeps-cascaded-place": (Config(1, 4, 0, 1000), [Add(1, 9), To(8), Add(2, 1), Add(3, 1), Add(2, 1), To(9)]),
    # no direct entry in the window
    "readd-jumps-cascaded": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), To(8), Add(3, 1), To(9)]),
    # a fresh task where task 3 was re-added
    "cascade-ahead-when-readd": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), Add(4, 6), To(6), Add(2, 3), Add(5, 3),
                                                         To(8), To(9)]),
    "flush-groups-by-route": (Config(1, 4, 0, 1000), [Add(1, 9), Add(3, 20), To(8), Add(2, 1), Add(5, 1), To(9)]),
}

#: the default check's campaign size per kind
CAMPAIGN_SEEDS = 400


def _adapter(name: str):
    return variants.FACTORIES[name]() if name != "correct" else variants.correct_timer()


def test_every_variant_has_a_witness():
    assert sorted(WITNESSES) == sorted(NAMES)
    assert len(NAMES) >= 12


@pytest.mark.slow
def test_correct_timer_passes_the_corpus_and_a_campaign():
    adapter = variants.correct_timer()
    caps = adapter.hello().capabilities
    failed = [sc.name for sc in load_corpus(None) if run_scenario(adapter, caps, sc).status == "fail"]
    assert failed == []
    for kind in ("timer", "purgatory"):
        bad = [o.seed for o in run_seed_range(adapter, caps, kind, range(150), shrink=False) if not o.ok]
        assert bad == [], f"{kind} seeds {bad[:5]} fail on the correct timer"


@pytest.mark.parametrize("name", NAMES)
def test_witness_shows_the_bug(name):
    cfg, schedule = WITNESSES[name]
    good = _adapter("correct")
    caps = good.hello().capabilities
    assert judge(run_ops(good, cfg, schedule), caps) == [], "the correct timer fails the witness"
    bad = _adapter(name)
    assert judge(run_ops(bad, cfg, schedule), caps) != [], f"{name} passes its witness"


@pytest.mark.parametrize("name", sorted(ROUTE_TWINS))
def test_route_variants_need_mixed_routes(name):
    """Each route variant passes its witness with one route taken away: the bug shows only in a
    bucket that mixes routes (what the campaign's *mix* move builds)."""
    assert KIND[name] == "timer"
    cfg, schedule = ROUTE_TWINS[name]
    bad = _adapter(name)
    assert judge(run_ops(bad, cfg, schedule), bad.hello().capabilities) == []
    assert len([v for v in variants.VARIANTS if v.name in ROUTE_TWINS]) >= 4


@pytest.mark.parametrize("name", NAMES)
def test_campaign_catches_the_variant(name):
    """As the default check's campaign: seeds 0 .. CAMPAIGN_SEEDS-1 of each kind, the variant's own
    kind first (a timer bug can show in a purgatory's timeouts too)."""
    adapter = _adapter(name)
    caps = adapter.hello().capabilities
    kinds = sorted(("timer", "purgatory"), key=lambda k: k != KIND[name])
    for kind in kinds:
        for seed in range(CAMPAIGN_SEEDS):
            if not run_seed_range(adapter, caps, kind, [seed], shrink=False)[0].ok:
                return
    pytest.fail(f"{name}: none of {CAMPAIGN_SEEDS} schedules of either kind fails")


@pytest.mark.parametrize("name", ["correct_timer", *(n.replace("-", "_") for n in NAMES)])
def test_factories_resolve_through_impl(name):
    adapter = resolve(f"tests.fixtures.variants:{name}")()
    hello = adapter.hello()
    assert hello.name == "variants-" + ("correct" if name == "correct_timer" else name.replace("_", "-"))
    assert hello.capabilities.is_wheel()  # judged event for event against the reference
    adapter.close()


def test_an_unknown_factory_is_a_user_error():
    with pytest.raises(UserError, match="no callable 'nope'"):
        resolve("tests.fixtures.variants:nope")


@pytest.mark.slow
def test_check_command_passes_the_correct_timer_and_fails_a_variant(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    # the variant fails timer seeds 9 and 17 of the first 20, so 20 schedules show it
    args = ["check", "--no-corpus", "--schedules", "20", "--kinds", "timer", "--out", str(tmp_path)]
    assert main([*args, "--impl", "tests.fixtures.variants:correct_timer"]) == 0
    assert main([*args, "--impl", "tests.fixtures.variants:last_parent_heap"]) == 1


def test_the_variants_import_neither_reference_nor_optimized():
    for path in (ROOT / "tests" / "fixtures" / "variants").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for n in names:
                assert not n.startswith(("wheelspec.reference", "wheelspec.optimized")), f"{path.name} imports {n}"


@pytest.mark.slow
def test_power_script_writes_its_table(tmp_path, monkeypatch):
    from wheelspec.conformance.measure import power

    monkeypatch.chdir(ROOT)
    out = tmp_path / "POWER.md"
    rates = tmp_path / "rates.md"
    assert power.main(["--seeds", "40", "--bases", "0,20", "--schedules", "20", "--no-correct",
                       "--variants", "purge-at-threshold,check-tries-four", "--out", str(out),
                       "--rates", str(rates)]) == 0
    text = out.read_text()
    assert "| purge-at-threshold | purgatory | short | kill | 2/2 |" in text
    assert "worst base" in text
    assert "| check-tries-four | purgatory | long | pass |" in text
    assert "cores, Python" in text and "## Acceptance" in text
    assert "| check-tries-four |" in rates.read_text()


def test_power_table_names_the_variants_that_miss_the_bar():
    from wheelspec.conformance.measure.power import Measure, render

    strong = Measure("strong", "timer", "short", "doc", seeds=100, failing={"timer": list(range(0, 100, 10))},
                     campaign_kill={0: True, 50: True}, base_fails={0: 5, 50: 2})
    weak = Measure("weak", "timer", "long", "doc", seeds=100, failing={"timer": [3]},
                   campaign_kill={0: True, 50: False})
    text = render([strong, weak], command="c", seeds=100, bases=[0, 50], schedules=50, kinds=["timer"], seconds=1)
    assert "Not met by: weak (1/2 bases, best rate 1.00%)." in text
    assert "| strong | timer | short | pass | 2/2 | 2/2 | 10.00% | 4.00% |" in text  # worst base: 2 of 50
    assert "| weak | timer | long | pass | 1/2 | 1/2 | 1.00% | - |" in text  # no per-base counts given
    assert "Met by every variant." in render([strong], command="c", seeds=100, bases=[0, 50], schedules=50,
                                             kinds=["timer"], seconds=1)
