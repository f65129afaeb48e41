"""`wheelspec check`'s three reports (terminal, JSON, JUnit) agree whatever stopped the run; the
failure budget is per campaign kind; adapter text never reaches them as control characters or
markup; `wheelspec replay` of a long scenario prints the steps that matter."""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import user_module

from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.check.corpus import Scenario
from wheelspec.conformance.cli import main
from wheelspec.spec import ops

ROOT = Path(__file__).resolve().parents[1]

#: An in-process adapter: the reference, which raises AdapterError on its N-th reset or request.
#: Its name and error hold a NUL, ANSI colours, rich markup and an emoji code.
CRASHY = textwrap.dedent('''
    import dataclasses
    from wheelspec.conformance.adapters import reference_adapter
    from wheelspec.spec.errors import AdapterError

    NAME = "crashy :thumbs_up: [bold]x[/bold]"
    ERROR = "adapter 'crashy': request #{n}: exited; stderr: \\x1b[31mboom\\x00 here\\x1b[0m \\x07[red]no[/red]"

    class Crashy:
        def __init__(self, after):
            self.inner, self.after, self.n = reference_adapter(), after, 0

        def hello(self):
            return dataclasses.replace(self.inner.hello(), name=NAME)

        def _count(self):
            self.n += 1
            if self.n == self.after:
                raise AdapterError(ERROR.format(n=self.n))

        def reset(self, config):
            self._count()
            self.inner.reset(config)

        def request(self, op):
            self._count()
            return self.inner.request(op)

        def close(self):
            self.inner.close()

    def after_300():
        return Crashy(300)
''')


@pytest.fixture
def crashy(tmp_path, monkeypatch):
    return user_module(tmp_path, monkeypatch, "crashy_adapter", CRASHY) + ":after_300"


def _junit_schedules(x: Path) -> int:
    n = 0
    for tc in ET.parse(x).getroot().iter("testcase"):  # ET.parse also proves the file is XML
        if tc.get("classname", "").endswith(".campaign"):
            n += int(re.search(r"\((\d+) schedules\)", tc.get("name", "")).group(1))
    return n


def _check(tmp_path, *argv):
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["check", *argv, "--json", str(j), "--junit-xml", str(x), "--out", str(tmp_path / "out")])
    return code, json.loads(j.read_text()), x


def test_an_adapter_error_mid_campaign_leaves_the_same_counts_everywhere(tmp_path, crashy, capsys):
    code, doc, x = _check(tmp_path, "--impl", crashy, "--no-corpus", "--schedules", "100", "--kinds", "timer",
                          "--write", "traces=" + str(tmp_path / "trace"))
    out = capsys.readouterr().out
    assert code == 2 and doc["exit_code"] == 2
    (impl,) = doc["implementations"]
    judged = impl["campaign"]["schedules"]
    assert 0 < judged < 100 and impl["status"] == "error"
    assert impl["campaign"]["ops"] > 0 and impl["campaign"]["schedules_per_s"] > 0
    assert _junit_schedules(x) == judged
    assert f"{judged} (0)" in out  # the terminal's "campaign schedules (failed)" cell
    assert impl["stopped"] == [{"kind": "timer", "reason": "error", "after_seed": judged - 1,
                                "schedules": judged, "planned": 100}]
    assert f"timer campaign stopped after seed {judged - 1}: the adapter failed" in out
    import pyarrow.parquet as pq

    runs = pq.read_table(next((tmp_path / "trace").glob("*.parquet")), columns=["run"]).column("run").to_pylist()
    assert len(set(runs)) == judged  # the trace of the same run holds the same schedules


def test_adapter_text_reaches_junit_and_terminal_without_control_characters_or_markup(tmp_path, crashy, capsys):
    code, doc, x = _check(tmp_path, "--impl", crashy, "--no-corpus", "--schedules", "100", "--kinds", "timer")
    cap = capsys.readouterr()
    assert code == 2
    root = ET.parse(x).getroot()  # a NUL or an ESC in the file would make this raise
    (err,) = root.iter("error")
    for text in (err.get("message", ""), err.text or ""):
        assert "\x00" not in text and "\x1b" not in text and "\x07" not in text
        assert "boom\\x00 here" in text and "[31m" not in text
    raw = x.read_bytes()
    assert b"\x00" not in raw and b"\x1b" not in raw
    for stream in (cap.out, cap.err):
        assert "\x00" not in stream and "\x1b" not in stream and "\x07" not in stream
    # The error is printed once, on stderr (the table shows ERROR); markup and emoji codes from
    # the adapter print as written.
    assert "boom\\x00 here" in cap.err and "boom" not in cap.out
    assert "[red]no[/red]" in cap.err and ":thumbs_up:" in cap.out and "[bold]x[/bold]" in cap.out
    assert "\N{THUMBS UP SIGN}" not in cap.out + cap.err
    # The JSON keeps the adapter's text as it was (JSON escapes it).
    assert "\x00" in doc["implementations"][0]["error"]


def test_the_failure_budget_is_per_kind_and_a_cut_campaign_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, doc, x = _check(tmp_path, "--impl", "tests.fixtures.broken:fires_early", "--no-corpus",
                          "--schedules", "60", "--max-failures", "1")
    out = capsys.readouterr().out
    assert code == 1
    (impl,) = doc["implementations"]
    failed_kinds = sorted(f["kind"] for f in impl["campaign"]["failures"])
    # One failure each: the timer campaign's failure does not use up the purgatory campaign's budget.
    assert failed_kinds == ["purgatory", "timer"]
    assert {st["kind"]: st["reason"] for st in impl["stopped"]} == {"timer": "max-failures",
                                                                     "purgatory": "max-failures"}
    per_kind = {k: sum(1 for o in impl["campaign"]["failures"] if o["kind"] == k) for k in ("timer", "purgatory")}
    for st in impl["stopped"]:
        assert st["after_seed"] == max(f["seed"] for f in impl["campaign"]["failures"] if f["kind"] == st["kind"])
        assert st["schedules"] < st["planned"] == 60 and st["max_failures"] == 1 and per_kind[st["kind"]] == 1
        assert f"{st['kind']} campaign stopped after seed {st['after_seed']}" in out
    assert impl["campaign"]["schedules"] == sum(st["schedules"] for st in impl["stopped"]) == _junit_schedules(x)
    messages = [f.get("message", "") for f in ET.parse(x).getroot().iter("failure")]
    assert sum("stopped after seed" in m and "--max-failures 1" in m for m in messages) == 2


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_failure_budget_below_one_is_refused_in_one_line(value, capsys):
    try:  # refused by the argument parser (SystemExit) or by the command (UserError)
        code = main(["check", "--impl", "reference", "--no-corpus", "--schedules", "5", "--max-failures", value])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--max-failures" in lines[0] and "Traceback" not in err


def _long_scenario(path: Path, n: int) -> Path:
    """``n`` operations: advances one millisecond at a time, with one add of delay 5 in the middle
    (a wheel that fires a tick early fails near that point only)."""
    steps: list[ops.Op] = [ops.AdvanceTo(i + 1) for i in range(n - 1)]
    steps.insert(n // 2, ops.AddTask(1, 5))
    Scenario("long", Config(1, 3, 0, 1000), steps, [None] * n).save(path)
    return path


@pytest.mark.slow
def test_replay_of_a_long_scenario_prints_the_steps_around_the_finding(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    sc = _long_scenario(tmp_path / "long.json", 1000)  # a length at which the early fire shows
    assert main(["replay", str(sc), "--impl", "tests.fixtures.broken:fires_early"]) == 1
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"^│\s+\d+ │", line)]
    assert 0 < len(rows) <= 2 * 5 + 1
    assert "no-early-fire" in out and "steps not shown" in out and "rerun with -v" in out
    assert len(out.splitlines()) < 60
    # Without findings: the first and last steps only.
    assert main(["replay", str(sc), "--impl", "reference"]) == 0
    out = capsys.readouterr().out
    assert len([line for line in out.splitlines() if re.match(r"^│\s+\d+ │", line)]) == 20
    # -v prints every step.
    assert main(["replay", str(sc), "--impl", "reference", "-v"]) == 0
    out = capsys.readouterr().out
    assert len([line for line in out.splitlines() if re.match(r"^│\s+\d+ │", line)]) == 1000


#: The broken fires-early timer, which raises AdapterError on its N-th reset (WHEELSPEC_CRASH_AT).
SHRINK_CRASH = textwrap.dedent('''
    import os
    from tests.fixtures.broken import fires_early
    from wheelspec.spec.errors import AdapterError

    class CrashInShrink:
        def __init__(self):
            self.inner, self.resets = fires_early(), 0

        def hello(self):
            return self.inner.hello()

        def reset(self, config):
            self.resets += 1
            if self.resets == int(os.environ["WHEELSPEC_CRASH_AT"]):
                raise AdapterError("adapter 'crash-in-shrink': request #1: exited with code 3")
            self.inner.reset(config)

        def request(self, op):
            return self.inner.request(op)

        def close(self):
            self.inner.close()
''')


@pytest.mark.slow
def test_a_failure_found_before_the_adapter_dies_while_shrinking_it_is_kept(tmp_path, monkeypatch, capsys):
    from tests.fixtures.broken import fires_early
    from wheelspec.conformance.check.campaign import run_seed_range

    a = fires_early()
    outs = run_seed_range(a, a.hello().capabilities, "timer", range(200), shrink=False)
    first = next(o.seed for o in outs if not o.ok)
    # One reset per schedule: seeds 0..first run, the next reset is the shrinker's first attempt.
    monkeypatch.setenv("WHEELSPEC_CRASH_AT", str(first + 2))
    (tmp_path / "crash_in_shrink.py").write_text(SHRINK_CRASH)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(ROOT)
    code, doc, x = _check(tmp_path, "--impl", "crash_in_shrink:CrashInShrink", "--no-corpus", "--kinds", "timer",
                          "--schedules", "200")
    out = capsys.readouterr().out
    assert code == 2
    (impl,) = doc["implementations"]
    assert impl["campaign"]["schedules"] == first + 1 == _junit_schedules(x)
    (failure,) = impl["campaign"]["failures"]
    assert failure["seed"] == first and "counterexample" not in failure
    assert failure["failures"][0]["prop"] == "no-early-fire"
    assert f"timer seed {first} (" in out and "not shrunk" in out
    assert ET.parse(x).getroot().find(".//failure") is not None


def test_a_run_that_did_not_finish_reports_no_pass_verdict():
    from wheelspec.conformance.check.report import ImplReport

    caps = {"profile": "kafka"}
    assert ImplReport("done", capabilities=caps).verdicts == {"kafka": "pass", "ranges": "pass"}
    assert ImplReport("later", capabilities=caps, started=False).verdicts == {"kafka": "not run",
                                                                               "ranges": "not run"}
    assert ImplReport("cut", capabilities=caps, incomplete=True).verdicts == {"kafka": "incomplete",
                                                                              "ranges": "incomplete"}
    assert ImplReport("broke", capabilities=caps, error="adapter died").verdicts["kafka"] == "incomplete"


@pytest.mark.parametrize("command", ["check", "replay"])
def test_a_bug_in_wheelspec_exits_3_and_its_report_gives_no_verdict(command, tmp_path, monkeypatch, capsys):
    """A bug of wheelspec's while judging (planted: a ``RunnerBug`` from the scenario runner) ends
    the command with exit 3, and its JSON report says ``error`` for the implementation it
    stopped, with the same exit code: never a pass, never a fail."""
    from wheelspec.conformance.check import corpus, session
    from wheelspec.conformance.check.runner import RunnerBug

    def planted(*args, **kwargs):
        raise RunnerBug("planted")

    monkeypatch.setattr(corpus, "run_scenario", planted)
    monkeypatch.setattr(session, "run_scenario", planted)
    report = tmp_path / "r.json"
    if command == "check":
        argv = ["check", "--impl", "reference", "--schedules", "0"]
    else:
        argv = ["replay", str(_long_scenario(tmp_path / "s.json", 10)), "--impl", "reference"]
    assert main([*argv, "--json", str(report), "-q"]) == 3
    assert "RunnerBug: planted" in capsys.readouterr().err
    d = json.loads(report.read_text())
    impl = d["implementations"][0]
    assert (d["exit_code"], d["ok"], impl["status"]) == (3, False, "error")
    assert impl["error"].startswith("a bug in wheelspec stopped this")
