"""The scenario corpus: well-formed, covering the issue's list, and passed by our implementations
(reference in-process and over the adapter protocol, its MockTimer profile, the optimized engine) and by
the JavaScript heap timer (through the subprocess path, judged by the strict profile)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import resolve
from wheelspec.conformance.check.corpus import corpus_dir, load, load_corpus, run_scenario, scenario_from_dict
from wheelspec.spec.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = load_corpus()
NODE = shutil.which("node")


def test_corpus_names_match_paths_and_cover_the_issue_list():
    names = {sc.name for sc in CORPUS}
    for sc in CORPUS:
        assert Path(sc.path).relative_to(corpus_dir()).with_suffix("").as_posix() == sc.name
    wanted = ["timer/tick-boundaries", "timer/delay-zero-and-negative", "timer/largest-delay-and-one-past",
              "timer/readd-while-scheduled", "timer/cancel-before-at-after-firing", "timer/many-levels-wheel-2",
              "timer/long-idle-then-short-delay", "timer/same-tick-insertion-order",
              "purgatory/purge-threshold-at-and-past", "purgatory/multi-key-completed-through-one-key",
              "kafka/purgatory-cancel-for-key", "kafka/timer-task-expiration", "kafka/purgatory-request-purge"]
    assert not [w for w in wanted if w not in names]


def test_every_scenario_pins_something_for_some_profile():
    for sc in CORPUS:
        assert any(sc.expects), sc.name


def _run_all(spec: str):
    adapter = resolve(spec)()
    caps = adapter.hello().capabilities
    try:
        return [run_scenario(adapter, caps, sc) for sc in CORPUS]
    finally:
        adapter.close()


@pytest.mark.parametrize("spec", ["reference", "reference-subprocess", "reference-mock", "optimized"])
def test_our_implementations_pass_the_whole_corpus(spec):
    results = _run_all(spec)
    bad = [(r.name, [f.message for f in r.failures]) for r in results if r.status != "pass"]
    assert not bad


def test_expectations_are_checked_not_skipped_for_the_reference():
    """A kafka-profile run at the scenario's tick applies every kafka expectation."""
    results = _run_all("reference")
    assert not [r.name for r in results if "judged by profile" in r.note
                and any(e for e in load(Path(corpus_dir()) / f"{r.name}.json").expects)
                and r.name != "kafka/mock-timer-size-counts-cancelled"]


@pytest.mark.slow
@pytest.mark.external("node")
def test_js_heap_timer_passes_through_the_subprocess_path():
    if NODE is None:
        pytest.fail("node is not installed: the JavaScript adapter fixture needs it "
                    "(bash .ci/system-deps, or apt-get install nodejs)")
    results = _run_all(f"cmd:{NODE} {ROOT / 'docs' / 'examples' / 'heap_timer.js'}")
    assert not [(r.name, r.failures) for r in results if r.status == "fail"]
    passed = [r.name for r in results if r.status == "pass"]
    na = [r for r in results if r.status == "n/a"]
    assert len(passed) >= 15
    assert na and all("purgatory" in r.note for r in na)  # timer-only: purgatory scenarios n/a, said loudly


def test_a_wrong_expectation_is_reported(tmp_path):
    d = json.loads((corpus_dir() / "timer" / "tick-boundaries.json").read_text())
    d["steps"][7]["expect"]["kafka"]["fired"] = [5, 1, 6]  # the true order is 1, 5, 6 (insertion order)
    sc = scenario_from_dict(d, "mutated")
    adapter = resolve("reference")()
    res = run_scenario(adapter, adapter.hello().capabilities, sc)
    assert res.status == "fail"
    assert [f.prop for f in res.failures] == ["expected"]
    assert "expected fired [5,1,6], got [1,5,6]" in res.failures[0].message


@pytest.mark.parametrize("patch, words", [
    ({"wheelspec_scenario": 2}, "format version"),
    ({"name": ""}, "\"name\" must be a non-empty string"),
    ({"steps": [{"kind": "warp"}]}, "steps[0]: unknown operation kind 'warp'"),
    ({"steps": [{"kind": "size", "expect": {"rezult": 1}}]}, "unknown key 'rezult'"),
    ({"config": {"tick": 3}}, "unknown key 'tick'"),
    ({"expect_profiles": ["lenient"]}, "unknown profile 'lenient'"),
    ({"colour": 1}, "unknown key 'colour'"),
])
def test_bad_scenario_files_are_refused_naming_file_and_field(patch, words):
    d = {"wheelspec_scenario": 1, "name": "x", "steps": [], **patch}
    with pytest.raises(UserError) as e:
        scenario_from_dict(d, "some/file.json")
    assert str(e.value).startswith("some/file.json")
    assert words in str(e.value)
