"""Every command's ``--json`` report is one envelope that validates against the shipped schema.

Each documented example of each command (the ``describe(...)`` examples of its ``configure_*``)
runs with ``--json -`` in a scratch directory, made small by flags appended to it (fewer
schedules, sizes, runs), with the user's placeholders (``mytimer.adapter:factory``, ``cmd:./mytimer``,
saved files) replaced by real ones; its stdout must validate against
``conformance/cli/report.schema.json`` (draft 2020-12) and say the exit code the command returned.
Only examples needing Spark are skipped, each with its reason.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import jsonschema
import pytest

from wheelspec.conformance.cli import build_parser, main
from wheelspec.conformance.cli.output import SCHEMA_FILE, schema
from wheelspec.conformance.cli.vocabulary import subcommands
from wheelspec.envelope import REPORT_FORMAT, envelope

ROOT = Path(__file__).resolve().parents[1]

#: flags appended to every example of a command so that it runs in seconds (a store option given
#: again takes the last value; --impl appended to a command without one restricts it)
SMALL: dict[str, list[str]] = {
    "check": ["--schedules", "5", "--workers", "1"],
    "replay": [],
    "prove": ["--only", "placement", "--no-bmc"],
    "bench": ["--sizes", "1e3", "--repeat", "1", "--no-jit", "--curve-rounds", "0", "--impl", "heapq"],
    "realtime": ["--runs", "1", "--tasks", "10"],
    "matrix": ["--impl", "reference", "--schedules", "5", "--rt-runs", "1", "--rt-tasks", "10"],
    "linearize": ["--threads", "2", "--ops", "30"],
    "races": ["--mutant", "no-second-try", "--examples", "40", "--clean", "3"],
    "analyze": [],
    "campaign": ["--schedules", "10", "--chunk", "5", "--workers", "1"],
}
#: the examples' placeholders for the user's own timer -> what stands in for it here
STAND_INS = {"cmd:java -jar mytimer.jar": "reference-subprocess", "cmd:./mytimer": "reference-subprocess"}
#: commands that write no JSON report (they print a page, write a kit, print a path)
NO_REPORT = {"docs", "init-adapter", "spark-entry"}
ADAPTER = "from wheelspec.conformance.adapters.engines import reference_adapter\n\n\ndef factory():\n" \
          "    return reference_adapter()\n"


def _examples() -> list[tuple[str, str]]:
    found = []
    for name, sub in subcommands(build_parser()).items():
        for example in sub.get_default("_examples") or []:
            if example.startswith("wheelspec ") and name not in NO_REPORT:
                found.append((name, example))
    return found


EXAMPLES = _examples()


def _argv(name: str, example: str) -> list[str]:
    """The example as argv: stand-ins, its --json replaced by --json -, small flags appended."""
    words = [STAND_INS.get(w, w) for w in shlex.split(example)[1:]]
    if "--json" in words:
        i = words.index("--json")
        del words[i:i + 2]
    if name == "analyze" and "--synthetic" in words:
        words[words.index("--synthetic") + 1] = "1000"
    return [*words, *SMALL[name], "--json", "-"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The files the examples name: a user's adapter package, scenario folders, a saved
    counterexample, a recorded history, a trace folder and a saved real-time schedule."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mytimer").mkdir()
    (tmp_path / "mytimer" / "__init__.py").write_text("")
    (tmp_path / "mytimer" / "adapter.py").write_text(ADAPTER)
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = sorted((ROOT / "conformance" / "scenarios" / "timer").glob("*.json"))
    for folder, files in (("my-scenarios", corpus[:2]), ("more", corpus[2:3])):
        (tmp_path / folder).mkdir()
        for f in files:
            shutil.copy(f, tmp_path / folder / f.name)
    saved = json.loads(corpus[0].read_text())
    saved["origin"] = {"impl_spec": "optimized"}
    (tmp_path / "wheelspec-out" / "optimized").mkdir(parents=True)
    (tmp_path / "wheelspec-out" / "optimized" / "timer-17.json").write_text(json.dumps(saved))
    shutil.copy(corpus[0], tmp_path / "my-scenario.json")
    assert main(["linearize", "--impl", "reference", "--threads", "2", "--ops", "20",
                 "--write", "history=history.jsonl", "-q"]) == 0
    assert main(["analyze", "--synthetic", "1000", "--write", "trace=traces/synthetic.parquet", "-q"]) == 0
    from wheelspec.conformance.realtime.schedule import generate

    generate(3, tasks=10).save(tmp_path / "wheelspec-out" / "realtime" / "netty-realtime-3.json")
    return tmp_path


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[e for _, e in EXAMPLES])
def test_every_documented_example_validates(name: str, example: str, workspace: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    if "spark" in example:
        pytest.skip(f"NEEDS SPARK (a Spark session or cluster): {example!r} is not run here")
    if "netty" in example or (name == "realtime" and "--impl" not in example):
        if shutil.which("java") is None:
            pytest.skip(f"NEEDS JAVA and libnetty-java: {example!r} is not run here")
    capsys.readouterr()
    code = main(_argv(name, example))
    out = capsys.readouterr().out
    doc = json.loads(out)
    jsonschema.Draft202012Validator(schema()).validate(doc)
    assert doc["command"] == name and doc["exit_code"] == code and doc["ok"] is (code == 0)
    assert doc["format"] == REPORT_FORMAT and doc["interrupted"] is None


def test_every_report_command_has_an_example_run() -> None:
    """No command with --json escapes the run above: the commands without a report are named."""
    with_json = {n for n, sub in subcommands(build_parser()).items()
                 if any("--json" in a.option_strings for a in sub._actions)}
    assert with_json == set(SMALL) == {n for n, _ in EXAMPLES}
    assert set(subcommands(build_parser())) == with_json | NO_REPORT


def test_schema_is_draft_2020_12_and_refuses_a_bad_report() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    good = envelope("races", {"seed": 0, "mutants": []}, exit_code=0)
    validator = jsonschema.Draft202012Validator(schema())
    validator.validate(good)
    for bad in ({**good, "ok": False},                      # ok disagrees with exit_code
                {k: v for k, v in good.items() if k != "wheelspec"},
                {**good, "interrupted": False},             # not null, not the signal object
                {k: v for k, v in good.items() if k != "mutants"}):   # the body's stable key
        assert not validator.is_valid(bad), bad


def test_not_run_implementation_has_no_empty_name() -> None:
    from wheelspec.conformance.check.report import ImplReport

    doc = envelope("check", {"protocol": 1, "impls": ["x"], "scenarios": 0, "schedules_per_kind": 0,
                             "first_seed": 0, "kinds": [], "max_failures_per_kind": 1, "accept": [],
                             "implementations": [ImplReport("x", started=False).to_dict()]}, exit_code=0)
    assert doc["implementations"][0]["name"] is None
    jsonschema.Draft202012Validator(schema()).validate(doc)
    doc["implementations"][0]["name"] = ""
    assert not jsonschema.Draft202012Validator(schema()).is_valid(doc)


def test_envelope_refuses_a_body_that_shadows_it() -> None:
    with pytest.raises(ValueError, match="ok"):
        envelope("races", {"ok": True}, exit_code=0)


def test_docs_schema_prints_the_shipped_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(SCHEMA_FILE.read_text())
