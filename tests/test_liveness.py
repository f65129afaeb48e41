"""Liveness as a property (``responds``): a hang or a crash mid-run is a finding of the schedule it
happened in, shrunk to a replayable counterexample, and the run goes on; only what stops the
implementation from running at all (it cannot start, its hello or a restart fails) is exit 2.

The fixtures (tests/fixtures/hang_adapter.py, crash_adapter.py) are a correct heap timer that
hangs, or exits with code 3, on an ``advance`` after an ``add`` with delay 7."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.conformance.adapters.subprocess_adapter import AdapterError, LivenessError, SubprocessAdapter
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import Scenario, run_scenario
from wheelspec.conformance.check.runner import RunnerBug, run_ops
from wheelspec.conformance.cli import main
from wheelspec.spec import ops, properties

ROOT = Path(__file__).resolve().parents[1]
HANG = ROOT / "tests" / "fixtures" / "hang_adapter.py"
CRASH = ROOT / "tests" / "fixtures" / "crash_adapter.py"
TRIGGER = [ops.AddTask(1, 7), ops.AdvanceTo(3)]


def test_responds_is_a_registered_property_of_the_run_judge():
    assert properties.is_registered("responds", properties.RUN)


@pytest.mark.slow
@pytest.mark.parametrize("fixture, words", [(HANG, "no response within 1 s"), (CRASH, "exited with code 3")])
def test_hang_or_crash_yields_a_small_replayable_counterexample_and_the_other_verdicts(tmp_path, capsys,
                                                                                       fixture, words):
    impl = f"cmd:{sys.executable} {fixture}"
    report = tmp_path / "r.json"
    # 5 schedules hold two with the pattern (timer seeds 1 and 4); each hang costs its timeout,
    # once per shrinking attempt too
    code = main(["check", "--no-corpus", "--schedules", "5", "--timeout", "1", "--impl", impl,
                 "--out", str(tmp_path / "out"), "--json", str(report)])
    capsys.readouterr()
    assert code == 1  # a finding, not a configuration error
    (rep,) = json.loads(report.read_text())["implementations"]
    assert rep["status"] == "fail" and rep["error"] is None
    assert rep["campaign"]["schedules"] == 5  # every seed judged, after the hangs too
    failed = rep["campaign"]["failures"]
    assert 1 < len(failed) < 5
    assert {o["failures"][0]["prop"] for o in failed} == {"responds"}
    assert all(words in o["failures"][0]["message"] for o in failed)
    # The first lines of stderr are shown (the cause), not only the tail of a stack.
    first = "hang_adapter: looping forever" if fixture == HANG else "crash_adapter: fatal: wrapped expiration"
    assert all(first in o["failures"][0]["message"] for o in failed)
    assert len(rep["counterexamples"]) == len(failed)
    for path in rep["counterexamples"]:
        saved = json.loads(Path(path).read_text())
        assert len(saved["steps"]) <= 8 and saved["origin"]["prop"] == "responds"
    replay_json = tmp_path / "replay.json"
    code = main(["replay", rep["counterexamples"][0], "--impl", impl, "--timeout", "1", "--json", str(replay_json)])
    out = capsys.readouterr().out
    assert code == 1 and "FAIL" in out and "responds" in out
    (again,) = json.loads(replay_json.read_text())["implementations"]
    assert again["scenarios"][0]["failures"][0]["prop"] == "responds"


@pytest.mark.slow
def test_the_failing_schedule_ends_at_the_request_that_hung_and_shrinks_to_the_pattern():
    a = SubprocessAdapter([sys.executable, str(CRASH)], timeout=5)
    try:
        caps = a.hello().capabilities
        # seeds 0..11 include three with the pattern (1, 4 and 11); shrinking keeps just it
        outs = run_seed_range(a, caps, "timer", range(12), impl_name="crash")
    finally:
        a.close()
    bad = [o for o in outs if not o.ok]
    assert bad and len(bad) < len(outs)
    for o in bad:
        cx = o.counterexample
        assert cx is not None and o.failures[0].prop == "responds"
        assert len(cx.ops) == 2 and cx.ops[0] == ops.AddTask(0, 7) and isinstance(cx.ops[1], ops.AdvanceTo)
        assert o.failures[0].step == 1
    assert a.restarts > 0


@pytest.mark.slow
def test_a_corpus_scenario_that_hangs_is_a_finding_and_the_next_scenario_runs(tmp_path):
    a = SubprocessAdapter([sys.executable, str(HANG)], timeout=1)
    try:
        caps = a.hello().capabilities
        hangs = run_scenario(a, caps, Scenario("hangs", Config(), TRIGGER, [None, None]))
        fine = run_scenario(a, caps, Scenario("fine", Config(), [ops.AddTask(1, 5), ops.AdvanceTo(5)], [None, None]))
    finally:
        a.close()
    assert hangs.status == "fail" and [f.prop for f in hangs.failures] == ["responds"]
    assert hangs.failures[0].step == 1 and "no response within 1 s" in hangs.failures[0].message
    assert len(hangs.run.steps) == 1  # the add was answered; the advance was not
    assert fine.status == "pass"


def _flaky_start(tmp_path: Path) -> list[str]:
    """A command that works the first time and cannot start the second time."""
    marker = tmp_path / "started"
    script = tmp_path / "once.py"
    script.write_text(textwrap.dedent(f"""
        import os, runpy, sys
        if os.path.exists({str(marker)!r}):
            print("once: refusing to start again", file=sys.stderr)
            sys.exit(1)
        open({str(marker)!r}, "w").close()
        sys.argv = [{str(CRASH)!r}]
        runpy.run_path({str(CRASH)!r}, run_name="__main__")
    """))
    return [sys.executable, str(script)]


def test_a_restart_that_fails_is_a_configuration_error(tmp_path, capsys):
    a = SubprocessAdapter(_flaky_start(tmp_path), timeout=5)
    try:
        caps = a.hello().capabilities
        with pytest.raises(AdapterError, match="restart failed") as e:
            run_seed_range(a, caps, "timer", range(60))
        assert not isinstance(e.value, LivenessError)
    finally:
        a.close()
    (tmp_path / "started").unlink()
    code = main(["check", "--no-corpus", "--schedules", "60", "--kinds", "timer", "--timeout", "5",
                 "--impl", "cmd:" + " ".join(_flaky_start(tmp_path)), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "restart failed" in capsys.readouterr().err


def test_a_hang_in_the_hello_stays_a_configuration_error():
    a = SubprocessAdapter([sys.executable, "-c", "import time; time.sleep(600)"], start_timeout=1)
    with pytest.raises(AdapterError, match=r"request #0 \"hello\": no response within 1 s") as e:
        a.hello()
    assert not isinstance(e.value, LivenessError)
    a.close()


class _InProcess:
    """An in-process adapter whose own code raises on ``size``."""

    def hello(self) -> Hello:
        return Hello("in-process", Capabilities(profile="strict"))

    def reset(self, config: Config) -> None:
        pass

    def request(self, op: ops.Op) -> Response:
        if isinstance(op, ops.Size):
            raise ZeroDivisionError("the implementation divided by zero")
        return Response(0, [], None)

    def close(self) -> None:
        pass


class _CallsTheJudgeWrongly(_InProcess):
    def request(self, op: ops.Op) -> Response:
        from wheelspec.conformance.check.oracle import oracle_mode

        oracle_mode(None)  # raises inside the runner's own module
        raise AssertionError("unreachable")


class _OutOfProcess(_InProcess):
    out_of_process = True  # its request path is the runner's code: any exception is a runner bug


def test_an_implementations_exception_is_a_finding_but_the_runners_is_a_bug():
    run = run_ops(_InProcess(), Config(), [ops.Size()])
    assert run.steps[0].response.error == ("internal", "raised ZeroDivisionError: the implementation divided by zero")
    with pytest.raises(RunnerBug, match="please report") as e:
        run_ops(_CallsTheJudgeWrongly(), Config(), [ops.Size()])
    assert isinstance(e.value.__cause__, AttributeError)
    with pytest.raises(RunnerBug) as e:
        run_ops(_OutOfProcess(), Config(), [ops.Size()])
    assert isinstance(e.value.__cause__, ZeroDivisionError)
