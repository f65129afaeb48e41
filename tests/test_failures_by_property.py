"""Failures grouped by property, ``--accept``, and a timeout that does not recur.

* A timer with two independent bugs (tests/fixtures/two_bugs.py: ``size`` wrong in about a third
  of the timer schedules, ``refused-valid`` in about 2%, and ranked after ``size``, so a schedule
  failing both is shrunk toward ``size``): both properties are listed in every report, each with
  its own shrunk counterexample that fails that property on a replay.
* ``--accept size`` makes the exit code depend on the rare property alone.
* A request that times out on the first run only is property ``responds``, saying what each run
  did (tests/fixtures/hang_once_adapter.py).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_check_workers import _same_reports

from wheelspec.conformance.check.campaign import PER_PROPERTY, PropertyShrinks, run_seed_range
from wheelspec.conformance.check.corpus import load, run_scenario
from wheelspec.conformance.cli import main
from wheelspec.spec.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
IMPL = "tests.fixtures.two_bugs:both"


def _seeds(n: int) -> tuple[list[int], list[int]]:
    """Among timer seeds 0..n-1: those whose schedule asks ``size`` (the frequent bug fails them)
    and those with an add the rare bug refuses (read off the generator, not hard-coded)."""
    from tests.fixtures.two_bugs import RARE_DELAYS
    from wheelspec.conformance.check.generate import generate
    from wheelspec.spec import ops

    schedules = [generate("timer", s)[1] for s in range(n)]
    size = [s for s, sch in enumerate(schedules) if any(isinstance(op, ops.Size) for op in sch)]
    rare = [s for s, sch in enumerate(schedules)
            if any(isinstance(op, ops.AddTask) and op.delay in RARE_DELAYS for op in sch)]
    return size, rare


@pytest.fixture(scope="module")
def seeds() -> tuple[int, list[int], list[int]]:
    """``(n, size, rare)``: seeds 0..n-1 end with the first seed failing both bugs (the rare one
    hidden behind the frequent one), ``size`` and ``rare`` the seeds among them failing each."""
    size, rare = _seeds(400)
    both = next(s for s in rare if s in size)
    n = both + 1
    return n, [s for s in size if s < n], [s for s in rare if s < n]


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # tests.fixtures.two_bugs is importable from the repository root
    sys.path.insert(0, str(ROOT))
    yield
    sys.path.remove(str(ROOT))


def _check(tmp_path: Path, *argv: str) -> tuple[int, dict, ET.Element]:
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["check", "--impl", IMPL, "--no-corpus", "--kinds", "timer", *argv, "--json", str(j),
                 "--junit-xml", str(x), "--out", str(tmp_path / "out")])
    (impl,) = json.loads(j.read_text())["implementations"]
    return code, impl, ET.parse(x).getroot()


def _fails_its_property(path: str, prop: str) -> bool:
    from tests.fixtures.two_bugs import both

    adapter = both()
    res = run_scenario(adapter, adapter.hello().capabilities, load(path))
    return any(f.prop == prop for f in res.failures)


def test_a_rare_property_behind_a_frequent_one_gets_its_own_counterexample(tmp_path, at_root, capsys, seeds):
    n, size, rare = seeds
    code, impl, junit = _check(tmp_path, "--schedules", str(n))
    out = capsys.readouterr().out
    assert code == 1
    props = {fp["prop"]: fp for fp in impl["properties"]}
    assert list(props) == ["size", "refused-valid"]
    assert props["size"]["schedules"] == len(size) and props["refused-valid"]["schedules"] == len(rare)
    # The last seed fails both; its own counterexample keeps size, the frequent one.
    (last,) = [o for o in impl["campaign"]["failures"] if o["seed"] == n - 1]
    assert set(last["props"]) == {"size", "refused-valid"} and last["counterexample"]["origin"]["prop"] == "size"
    for prop, fp in props.items():
        assert fp["counterexample"] and not fp["accepted"]
        assert _fails_its_property(fp["counterexample"], prop)
        assert json.loads(Path(fp["counterexample"]).read_text())["origin"]["prop"] == prop
        assert f"{prop}: {fp['schedules']} campaign schedules fail it" in out
    if rare == [n - 1]:  # only a seed failing both fails it: its counterexample is an extra shrink
        assert props["refused-valid"]["counterexample"].endswith(f"timer-{n - 1}-refused-valid.json")
    assert props["refused-valid"]["counterexample"] in impl["counterexamples"]
    cases = {tc.get("name"): tc for tc in junit.iter("testcase") if tc.get("classname", "").endswith(".property")}
    assert set(cases) == {"size", "refused-valid"}
    for prop, tc in cases.items():
        failure = tc.find("failure")
        assert failure is not None and failure.get("type") == prop
        assert props[prop]["counterexample"] in failure.get("message", "")


@pytest.mark.slow
def test_accepting_the_frequent_property_leaves_the_exit_code_to_the_rare_one(tmp_path, at_root, capsys, seeds):
    n, size, rare = seeds
    code, impl, junit = _check(tmp_path / "a", "--schedules", str(n), "--accept", "size")
    assert code == 1  # the rare seeds fail refused-valid
    props = {fp["prop"]: fp for fp in impl["properties"]}
    assert props["size"]["accepted"] and not props["refused-valid"]["accepted"]
    assert props["size"]["schedules"] == len(size) and props["size"]["counterexample"]  # shown and counted
    assert impl["campaign"]["failed"] == len(rare)
    assert impl["campaign"]["accepted"] == len(set(size) - set(rare))
    assert [o["seed"] for o in impl["campaign"]["failures"]] == rare
    # Without the rare seeds, the same implementation passes with its deviation accepted.
    first = rare[0]
    code, impl, junit = _check(tmp_path / "b", "--schedules", str(first), "--accept", "size")
    out = capsys.readouterr().out
    assert code == 0 and impl["status"] == "pass"
    assert impl["verdicts"] == {"strict": "accepted", "ranges": "pass"}
    assert [(fp["prop"], fp["accepted"]) for fp in impl["properties"]] == [("size", True)]
    assert f"accepted size: {sum(s < first for s in size)} campaign schedules fail it" in out
    (case,) = [tc for tc in junit.iter("testcase") if tc.get("classname", "").endswith(".property")]
    assert case.find("failure") is None and "accepted" in (case.findtext("system-out") or "")
    # The same seeds without --accept: the verdict it accepted is a failure.
    code, impl, _ = _check(tmp_path / "c", "--schedules", str(first))
    assert code == 1 and impl["verdicts"]["strict"] == "fail"


@pytest.mark.parametrize("value", ["nope", "Size", ""])
def test_an_unknown_accepted_property_is_one_line_and_exit_2(value, capsys):
    try:
        code = main(["check", "--impl", "reference", "--no-corpus", "--schedules", "1", "--accept", value])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--accept" in err and "unknown property" in err and "Traceback" not in err


def test_each_property_is_shrunk_a_bounded_number_of_times(at_root):
    from tests.fixtures.two_bugs import add_only

    adapter = add_only()
    caps = adapter.hello().capabilities
    outs = run_seed_range(adapter, caps, "timer", _seeds(400)[1][:3], shrink=False)
    assert [o.props for o in outs] == [("refused-valid",)] * 3
    shrinks = PropertyShrinks(adapter, caps, impl_name="two")
    made = [len(shrinks.add(o)) for o in outs]
    assert made == [1] * PER_PROPERTY + [0] * (3 - PER_PROPERTY)
    for o in outs[:PER_PROPERTY]:
        (cx,) = o.more
        assert cx.origin["prop"] == "refused-valid" and len(cx.ops) == 1
        assert any(f.prop == "refused-valid" for f in run_scenario(adapter, caps, cx).failures)


@pytest.mark.slow
def test_two_workers_group_failures_as_one(tmp_path, at_root, seeds):
    n, _, _ = seeds
    one, two, out1, out2 = _same_reports(tmp_path, "--impl", IMPL, "--no-corpus", "--kinds", "timer",
                                         "--schedules", str(n))
    (impl,) = two["implementations"]
    assert [fp["prop"] for fp in impl["properties"]] == ["size", "refused-valid"]
    files = sorted(str(p.relative_to(out2)) for p in out2.rglob("*.json"))
    assert files == sorted(str(p.relative_to(out1)) for p in out1.rglob("*.json"))
    assert any(f.endswith("-refused-valid.json") for f in files)


def test_the_library_accepts_a_property(tmp_path, at_root, seeds):
    from wheelspec.conformance.api import check_impl

    n, _, rare = seeds
    args = {"seed": 0, "kinds": ["timer"], "corpus": False, "regressions": None, "out": tmp_path}
    assert not check_impl(IMPL, schedules=rare[0], **args).ok
    res = check_impl(IMPL, schedules=rare[0], **args, accept=["size"])
    assert res.ok and "accepted" in res.outcomes[0].properties
    assert not check_impl(IMPL, schedules=n, **args, accept=["size"]).ok  # a rare seed: refused-valid
    with pytest.raises(UserError, match="unknown property 'nope'"):
        check_impl(IMPL, **args, accept=["nope"])


HANG_ONCE = ROOT / "tests" / "fixtures" / "hang_once_adapter.py"


@pytest.mark.slow
def test_a_timeout_that_does_not_recur_is_responds_saying_what_each_run_did(tmp_path):
    marker = tmp_path / "stalled"
    impl = f"cmd:{sys.executable} {HANG_ONCE} {marker}"
    j = tmp_path / "r.json"
    code = main(["check", "--impl", impl, "--no-corpus", "--kinds", "timer", "--schedules", "12", "--timeout", "1",
                 "--json", str(j), "--out", str(tmp_path / "out")])
    assert code == 1 and marker.exists()
    (rep,) = json.loads(j.read_text())["implementations"]
    (failed,) = rep["campaign"]["failures"]
    (finding,) = failed["failures"]
    assert finding["prop"] == "responds" and [fp["prop"] for fp in rep["properties"]] == ["responds"]
    msg = finding["message"]
    assert msg.startswith("the timeout did not recur: first run: op ")
    assert "no response within 1 s" in msg
    assert "rerun on a fresh adapter (1 s per request): answered every request" in msg
    assert "flaky" not in msg and "no-lost-task" not in msg


class _StallsOnRerun:
    """The size bug of tests/fixtures/two_bugs.py on its first run; every later run stops answering
    at its first request (as a subprocess adapter timing out under load does)."""

    def __init__(self) -> None:
        from tests.fixtures.two_bugs import size_only

        self.inner, self.runs = size_only(), 0

    def hello(self):
        return self.inner.hello()

    def reset(self, config) -> None:
        self.runs += 1
        self.inner.reset(config)

    def request(self, op):
        from wheelspec.conformance.adapters.subprocess_adapter import LivenessError

        if self.runs > 1:
            raise LivenessError("stalled", problem="no response within 2 s", reason="timeout", request={})
        return self.inner.request(op)

    def close(self) -> None:
        self.inner.close()


def test_a_failure_whose_rerun_times_out_keeps_its_findings_and_says_what_the_rerun_did(at_root, seeds):
    adapter = _StallsOnRerun()
    (o,) = run_seed_range(adapter, adapter.hello().capabilities, "timer", [seeds[1][0]])
    assert o.props == ("size",) and o.failures[0].prop == "size"
    assert o.failures[0].step is not None  # the first run's finding, located in its schedule
    msg = o.failures[0].message
    assert "not shrunk: a rerun of the schedule did not finish: op 0 " in msg and "no response within 2 s" in msg
    assert "flaky" not in msg
    assert o.counterexample is not None and len(o.counterexample.ops) == o.ops  # the whole schedule


@pytest.mark.slow
def test_a_scenario_failing_only_accepted_properties_is_accepted(tmp_path, at_root):
    impl = "tests.fixtures.two_bugs:size_only"
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    argv = ["check", "--impl", impl, "--schedules", "0", "--json", str(j), "--junit-xml", str(x),
            "--out", str(tmp_path / "out")]
    # A scenario expecting a size fails `expected` too: accepting size alone does not pass it.
    assert main([*argv, "--accept", "size"]) == 1
    (rep,) = json.loads(j.read_text())["implementations"]
    props = {fp["prop"]: fp for fp in rep["properties"]}
    assert props["size"]["accepted"] and props["size"]["scenarios"] > 0
    assert not props["expected"]["accepted"] and props["expected"]["scenarios"] > 0
    assert main([*argv, "--accept", "size", "--accept", "expected"]) == 0
    (rep,) = json.loads(j.read_text())["implementations"]
    assert rep["status"] == "pass" and rep["verdicts"]["strict"] == "accepted"
    failed = [s for s in rep["scenarios"] if s["status"] == "fail"]
    assert failed and all({f["prop"] for f in s["failures"]} <= {"size", "expected"} for s in failed)
    junit = {tc.get("name"): tc for tc in ET.parse(x).getroot().iter("testcase")}
    for s in failed:  # shown as accepted, not as failures
        assert junit[s["name"]].find("failure") is None
        assert "accepted" in (junit[s["name"]].findtext("system-out") or "")
