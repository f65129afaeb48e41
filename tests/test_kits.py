"""The adapter kits (``wheelspec init-adapter``, ``conformance/kits/``) and protocol transcripts
(``--log-protocol``).

For each of the five languages, from an empty directory: ``wheelspec init-adapter`` writes the
kit, its printed build line builds the toy timer, the built adapter answers wheelspec's range
boundaries as the spec says, and its printed check line passes.  The kit tests need the language's
toolchain (``bash .ci/system-deps`` installs it) and fail, never skip, when it is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.cli.init_adapter import KITS, LIBRARY_KITS, commands, kit_files
from wheelspec.spec import limits

ROOT = Path(__file__).resolve().parents[1]
KITS_DIR = ROOT / "conformance" / "kits"
#: the tool each kit's build needs (the ``external`` marker's name for it)
TOOLS = {"java": "java", "javascript": "node", "rust": "cargo", "go": "go", "cpp": "g++"}
SCENARIO = ROOT / "conformance" / "scenarios" / "timer" / "tick-boundaries.json"


def _env() -> dict[str, str]:
    """The environment of the printed lines: the ``wheelspec`` console script of this Python first."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _init(lang: str, cwd: Path, target: str = "adapter") -> tuple[str, str]:
    """Run ``wheelspec init-adapter`` as a user would; return its printed build and check lines."""
    proc = subprocess.run([sys.executable, "-m", "wheelspec", "init-adapter", "--lang", lang, target], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(":  ", 1) for line in proc.stdout.splitlines() if line.startswith(("build:", "check:")))
    return lines["build"], lines["check"]



def built_toy(lang: str, tmp_path: Path, old: str, new: str) -> str:
    """The kit written by ``wheelspec init-adapter``, the line ``old`` of its toy (the file the
    user fills in) replaced by ``new``, built: the command line that runs it (relative to
    ``tmp_path``).  Fails, never skips, without the language's toolchain."""
    tool = KITS[lang].tool
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: the {lang} kit's test needs it (bash .ci/system-deps)")
    build, _ = _init(lang, tmp_path)
    toy = tmp_path / "adapter" / KITS[lang].fill_in
    text = toy.read_text()
    assert text.count(old) == 1, f"{toy} no longer holds {old!r}"
    toy.write_text(text.replace(old, new))
    built = subprocess.run(["bash", "-c", build], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                           env=_env())
    assert built.returncode == 0, f"{build}\n{built.stdout}\n{built.stderr}"
    return commands(lang, "adapter")[1]


def checked_toy(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                schedules: int) -> tuple[int, dict]:
    """``wheelspec check`` of a built kit (its run line ``run``, relative to ``tmp_path``) on
    ``schedules`` timer schedules: the exit code and the implementation's JSON report."""
    report = tmp_path / "report.json"
    monkeypatch.chdir(tmp_path)  # the run line names the kit's directory relative to it
    rc = main(["check", "--impl", f"cmd:{run}", "--kinds", "timer", "--schedules", str(schedules),
               "--out", str(tmp_path / "out"), "--json", str(report)])
    capsys.readouterr()
    return rc, json.loads(report.read_text())["implementations"][0]

def _session(argv: list[str], cwd: Path, requests: list[dict]) -> tuple[list[dict], int]:
    """Send ``requests`` (ids added) to an adapter, leaving its stdin open: its answers and the exit
    code it chose after the last request (``bye``: it must exit by itself)."""
    text = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(requests))
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(text)
        proc.stdin.flush()
        code = proc.wait(timeout=20)
        answers = [json.loads(line) for line in proc.stdout.read().splitlines()]
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return answers, code


def _outcome(answer: dict) -> str:
    return "ok" if answer.get("ok") is True else answer["error"]["type"]


def boundary_session() -> list[tuple[dict, str]]:
    """Requests at wheelspec's range limits and one past them, each with the outcome the protocol
    prescribes (docs/guides/PROTOCOL.md, sections 2.2, 3 and 4.4), and what a timer-only adapter answers
    for the rest.  Built from spec/limits.py, the single source of the limits."""
    d, t, i = limits.MAX_DELAY_MS, limits.MAX_TIME_MS, limits.MAX_ID
    reset = {"tick_ms": 10, "wheel_size": 20, "start_ms": 5, "purge_interval": 1000}

    def op(kind: str, **fields: object) -> dict:
        return {"type": "op", "op": {"kind": kind, **fields}}

    return [
        ({"type": "hello", "protocol": 1}, "ok"),
        ({"type": "reset", "config": reset}, "ok"),
        (op("add", task=i, delay=d), "ok"),
        (op("add", task=i + 1, delay=1), "range"),
        (op("add", task=-1, delay=1), "range"),
        (op("add", task=1, delay=d + 1), "range"),
        (op("add", task=2, delay=-d), "ok"),
        (op("add", task=3, delay=-d - 1), "range"),
        (op("cancel", task=3), "unknown-id"),
        (op("cancel", task=i + 1), "range"),
        (op("advance", time=4), "invalid"),
        (op("advance", time=t + 1), "range"),
        (op("size"), "ok"),
        (op("advance", time=t), "ok"),
        (op("cancel", task=2), "ok"),
        (op("watch", op=1, delay=5, keys=["a"], completable=False), "unsupported"),
        (op("no_such_op"), "invalid"),
        ({"type": "reset", "config": {**reset, "tick_ms": 0}}, "invalid"),
        ({"type": "reset", "config": {**reset, "start_ms": t + 1}}, "invalid"),
        ({"type": "reset", "config": {**reset, "colour": 1}}, "invalid"),
        ({"type": "reset", "config": reset}, "ok"),
        (op("cancel", task=i), "unknown-id"),   # task ids start fresh after a reset
        ({"type": "bye"}, "ok"),
    ]


def _check_boundaries(argv: list[str], cwd: Path, lang: str) -> None:
    session = boundary_session()
    answers, code = _session(argv, cwd, [r for r, _ in session])
    assert len(answers) == len(session), answers
    got = [(r, _outcome(a)) for (r, _), a in zip(session, answers)]
    assert got == session
    assert [a["id"] for a in answers] == list(range(len(session)))
    hello = answers[0]
    assert hello["protocol"] == 1 and hello["name"] == f"{lang}-toy-heap-timer"
    assert hello["capabilities"]["profile"] == "strict" and hello["capabilities"]["configurable"] == ["start_ms"]
    at = {n: answers[n] for n, (r, _) in enumerate(session) if r["type"] == "op" and answers[n]["ok"]}
    assert at[2]["result"] == 5 + limits.MAX_DELAY_MS   # exp = now + delay, the clock at start_ms
    assert at[6]["result"] == 5 - limits.MAX_DELAY_MS
    assert at[12]["result"] == 2                        # size
    assert at[13]["now"] == limits.MAX_TIME_MS
    # both tasks were due by then: the earlier expiration first
    assert [(e["task"], e["exp"]) for e in at[13]["events"]] == [
        (2, 5 - limits.MAX_DELAY_MS), (limits.MAX_ID, 5 + limits.MAX_DELAY_MS)]
    assert at[14]["result"] is False                    # task 2 fired already
    assert code == 0, "the adapter must exit 0 after bye"


@pytest.mark.slow
@pytest.mark.parametrize("lang", [pytest.param(lang, marks=pytest.mark.external(TOOLS[lang])) for lang in sorted(KITS)])
def test_init_adapter_build_and_check_lines_pass_from_an_empty_directory(tmp_path: Path, lang: str) -> None:
    tool = KITS[lang].tool
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: the {lang} kit's test needs it (bash .ci/system-deps)")
    build, check = _init(lang, tmp_path)
    built = subprocess.run(["bash", "-c", build], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                           env=_env())
    assert built.returncode == 0, f"{build}\n{built.stdout}\n{built.stderr}"
    assert check.startswith("wheelspec check --impl ")
    _, run, _ = commands(lang, "adapter")
    _check_boundaries(["bash", "-c", f"exec {run}"], tmp_path, lang)
    checked = subprocess.run(["bash", "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                             env=_env())
    assert checked.returncode == 0, f"{check}\n{checked.stdout[-3000:]}\n{checked.stderr[-3000:]}"
    assert re.search(r"toy-heap-timer .*\bstrict\b.*\bPASS\b", checked.stdout), checked.stdout
    assert "ranges: pass" in checked.stdout


#: the kits that speak protocol version 2 (docs/guides/PROTOCOL.md, section 10)
V2_KITS = ("cpp", "go", "java", "javascript", "rust")


def _version_session(offered: list[int]) -> list[dict]:
    """A hello offering ``offered``, then a cancel of a task never added, before and after an add of
    another task (whose own cancels are the timer's answers)."""
    def op(kind: str, **fields: object) -> dict:
        return {"type": "op", "op": {"kind": kind, **fields}}

    return [{"type": "hello", "protocol": 1, "protocols": offered},
            {"type": "reset", "config": {"tick_ms": 1, "wheel_size": 20, "start_ms": 0, "purge_interval": 1000}},
            op("cancel", task=5), op("add", task=1, delay=3), op("cancel", task=5), op("cancel", task=1),
            op("cancel", task=1), op("advance", time=10), op("size"), {"type": "bye"}]


@pytest.mark.slow
@pytest.mark.parametrize("lang", [pytest.param(lang, marks=pytest.mark.external(TOOLS[lang])) for lang in V2_KITS])
def test_kit_negotiates_protocol_2_and_cancels_a_task_never_added_as_kafka_does(tmp_path: Path, lang: str) -> None:
    """Offered 2, the kit answers protocol 2 with ``pipeline`` and a cancel of a task never added is
    ``false`` with no event; offered only 1 it answers protocol 1 without ``pipeline`` and refuses
    that cancel ``unknown-id``.  The requests are written all at once, unread: the pipeline."""
    tool = KITS[lang].tool
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: the {lang} kit's test needs it (bash .ci/system-deps)")
    build, _check = _init(lang, tmp_path)
    built = subprocess.run(["bash", "-c", build], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                           env=_env())
    assert built.returncode == 0, f"{build}\n{built.stdout}\n{built.stderr}"
    _, run, _ = commands(lang, "adapter")
    argv = ["bash", "-c", f"exec {run}"]

    v2, code = _session(argv, tmp_path, _version_session([1, 2]))
    assert code == 0 and [a["id"] for a in v2] == list(range(10))
    assert v2[0]["protocol"] == 2 and v2[0]["capabilities"]["pipeline"] == 64
    assert [(a["result"], a["events"]) for a in v2[2:7]] == [
        (False, []), (3, []), (False, []), (True, []), (False, [])]
    assert v2[7]["events"] == [] and v2[8]["result"] == 0

    v1, code = _session(argv, tmp_path, _version_session([1]))
    assert code == 0 and v1[0]["protocol"] == 1 and "pipeline" not in v1[0]["capabilities"]
    assert [_outcome(a) for a in v1[2:7]] == ["unknown-id", "ok", "unknown-id", "ok", "ok"]
    assert [v1[n]["result"] for n in (3, 5, 6)] == [3, True, False]
    # a hello without "protocols" (a runner that knows only version 1) is answered as version 1
    bare, _ = _session(argv, tmp_path, [{"type": "hello", "protocol": 1}, {"type": "bye"}])
    assert bare[0]["protocol"] == 1


# ------------------------------------------------------------------ init-adapter, without toolchains ----
def test_init_adapter_writes_every_kit_file_and_a_second_run_changes_nothing(tmp_path: Path, capsys) -> None:
    assert main(["init-adapter", "--lang", "go", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    files = kit_files("go")
    assert {p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a").rglob("*") if p.is_file()} == set(files)
    for rel, data in files.items():
        assert (tmp_path / "a" / rel).read_bytes() == data
    assert f"wrote {len(files)} files of the go kit" in out
    build, _run, check = commands("go", str(tmp_path / "a"))
    assert f"build:  {build}\n" in out and f"check:  {check}\n" in out
    assert main(["init-adapter", "--lang", "go", str(tmp_path / "a")]) == 0
    again = capsys.readouterr().out
    assert f"wrote 0 files of the go kit to {tmp_path / 'a'} ({len(files)} already there, unchanged)" in again


def test_init_adapter_never_overwrites_a_file_it_did_not_write(tmp_path: Path, capsys) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "ToyTimer.java").write_text("my own timer\n")
    assert main(["init-adapter", "--lang", "java", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ToyTimer.java already exists with other content; nothing was written" in err
    assert (target / "ToyTimer.java").read_text() == "my own timer\n"
    assert [p.name for p in target.iterdir()] == ["ToyTimer.java"]   # nothing else written either
    (tmp_path / "plain").write_text("x")
    assert main(["init-adapter", "--lang", "cpp", str(tmp_path / "plain")]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert (tmp_path / "plain").read_text() == "x"


def test_the_printed_lines_quote_a_directory_with_spaces() -> None:
    build, run, check = commands("cpp", "my adapters/x")
    assert build == "g++ -std=c++17 -O2 -o 'my adapters/x'/toy-timer 'my adapters/x'/main.cpp"
    assert run == "'my adapters/x'/toy-timer"
    # the check line's --impl value, once the shell has read it, is the run command
    out = subprocess.run(["bash", "-c", f"printf %s {check.removeprefix('wheelspec check --impl ')}"],
                         capture_output=True, text=True, timeout=10).stdout
    assert out == f"cmd:{run}"


def test_every_kit_ships_in_the_wheel_with_a_readme_and_the_file_to_fill_in() -> None:
    """pyproject.toml's package data for wheelspec.conformance covers every file of every kit."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["wheelspec.conformance"]
    assert sorted(p.name for p in KITS_DIR.iterdir() if p.is_dir()) == sorted([*KITS, *LIBRARY_KITS])
    for lang, kit in [*KITS.items(), *LIBRARY_KITS.items()]:
        files = kit_files(lang)
        assert "README.md" in files and kit.fill_in in files, lang
        for rel in files:
            assert any(fnmatch(f"kits/{lang}/{rel}", p) and rel.count("/") == p.count("/") - 2
                       for p in patterns), f"kits/{lang}/{rel} is not package data"


# ------------------------------------------------------------------ --log-protocol -----------------------
def _entries(path: Path) -> list[tuple[float, int, str, str]]:
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        t, n, direction, text = line.split(" ", 3)
        out.append((float(t), int(n.strip("[]")), direction, text))
    return out


def test_log_protocol_holds_hello_reset_and_every_request_and_response_in_order(tmp_path: Path, capsys) -> None:
    log = tmp_path / "transcript.txt"
    code = main(["replay", str(SCENARIO), "--impl", "reference-subprocess", "--log-protocol", str(log)])
    assert code == 0, capsys.readouterr()
    entries = _entries(log)
    assert log.read_text().startswith("# wheelspec protocol transcript, started ")
    times = [e[0] for e in entries]
    assert times == sorted(times)
    assert {e[1] for e in entries} == {1}
    assert entries[0][2] == "!" and entries[0][3].startswith("start pid ")
    assert entries[-1][2:] == ("!", "stopped: exited with code 0")
    wire = [(d, json.loads(text)) for _, _, d, text in entries[1:-1]]
    sent = [m for d, m in wire if d == ">"]
    # The served reference declares a pipeline (protocol 2): requests may run ahead of answers,
    # but every answer comes after its request and the answers keep the requests' order (bye:
    # none read).
    sent_at = {m["id"]: k for k, (d, m) in enumerate(wire) if d == ">"}
    answered = [(k, m) for k, (d, m) in enumerate(wire) if d == "<"]
    assert [m["id"] for _, m in answered] == [m["id"] for m in sent[:-1]]
    assert all(sent_at[m["id"]] < k for k, m in answered)
    assert [m["id"] for m in sent] == list(range(len(sent)))
    assert [m["type"] for m in sent] == ["hello", "reset"] + ["op"] * (len(sent) - 3) + ["bye"]
    steps = json.loads(SCENARIO.read_text())["steps"]
    assert [m["op"] for m in sent[2:-1]] == [{k: v for k, v in s.items() if k != "expect"} for s in steps]
    assert sent[1]["config"] == json.loads(SCENARIO.read_text())["config"]
    answers = [m for d, m in wire if d == "<"]
    assert answers[0]["ok"] and answers[0]["name"]
    assert any(e["kind"] == "fire" for a in answers[2:] for e in a["events"])


def test_log_protocol_on_check_records_a_reset_before_every_schedule(tmp_path: Path, capsys) -> None:
    log = tmp_path / "t.txt"
    code = main(["check", "--impl", "reference-subprocess", "--no-corpus", "--schedules", "3", "--kinds", "timer",
                 "--out", str(tmp_path / "out"), "--log-protocol", str(log)])
    assert code == 0, capsys.readouterr()
    sent = [json.loads(text) for _, _, d, text in _entries(log) if d == ">"]
    assert [m["type"] for m in sent].count("reset") >= 3
    assert sent[0]["type"] == "hello" and sent[1]["type"] == "reset" and sent[-1]["type"] == "bye"
    received = [json.loads(text) for _, _, d, text in _entries(log) if d == "<"]
    assert [m["id"] for m in received] == [m["id"] for m in sent[:-1]]


@pytest.mark.slow
def test_log_protocol_records_what_went_wrong(tmp_path: Path, capsys) -> None:
    log = tmp_path / "t.txt"
    hang = ROOT / "tests" / "fixtures" / "hang_adapter.py"
    scenario = tmp_path / "hang.json"
    scenario.write_text(json.dumps({"wheelspec_scenario": 1, "name": "hang", "steps": [
        {"kind": "add", "task": 1, "delay": 7}, {"kind": "advance", "time": 3}]}))
    main(["replay", str(scenario), "--impl", f"cmd:{sys.executable} {hang}", "--timeout", "1",
          "--log-protocol", str(log)])
    capsys.readouterr()
    notes = [text for _, _, d, text in _entries(log) if d == "!"]
    assert any(n.startswith("no response within 1 s") for n in notes), notes
    assert notes[-1] == "stopped: was killed by signal SIGKILL"


def test_log_protocol_with_in_process_implementations_says_there_was_no_wire(tmp_path: Path, capsys) -> None:
    log = tmp_path / "t.txt"
    assert main(["replay", str(SCENARIO), "--impl", "reference", "--log-protocol", str(log)]) == 0
    capsys.readouterr()
    assert _entries(log) == []
    assert "no subprocess adapter ran" in log.read_text()


def test_log_protocol_is_an_option_of_check_replay_and_matrix_and_needs_a_file(tmp_path: Path, capsys) -> None:
    from wheelspec.conformance.cli import build_parser

    parser = build_parser()
    for argv in (["check"], ["replay", "x.json"], ["matrix"]):
        assert parser.parse_args([*argv, "--log-protocol", "t.txt"]).log_protocol == "t.txt"
    assert main(["replay", str(SCENARIO), "--log-protocol", "-"]) == 2
    assert "--log-protocol needs a FILE" in capsys.readouterr().err


# ---- the real-time parts of the C++ and Rust kits (wheelspec_realtime.hpp / .rs) -------------------
#: the test fixture written with each kit's real-time part: a thread and a min-heap on the wall clock
RT_TOYS = {lang: ROOT / "tests" / "fixtures" / f"rt_toy_timer.{ext}" for lang, ext in (("cpp", "cpp"), ("rust", "rs"))}


def _rt_toy(tmp_path: Path, lang: str, early: bool = False) -> str:
    """The fixture of ``lang`` built against the kit as ``wheelspec init-adapter`` writes it (with
    warnings as errors), firing 5 ms early if ``early``; the binary's path."""
    kit = tmp_path / f"kit-{lang}"
    if not kit.exists():
        _init(lang, tmp_path, kit.name)
    binary = tmp_path / f"rt-{lang}{'-early' if early else ''}"
    if lang == "cpp":
        argv = ["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", str(kit),
                *(["-DFIRE_EARLY_MS=5"] if early else []), "-o", str(binary), str(RT_TOYS[lang])]
    else:  # the fixture is the crate's main.rs, beside the kit's two modules (rustc: no cargo needed)
        shutil.copy(RT_TOYS[lang], kit / "src" / "main.rs")
        argv = ["rustc", "--edition", "2021", "-O", "-D", "warnings", *(["--cfg", "fire_early"] if early else []),
                "-o", str(binary), str(kit / "src" / "main.rs")]
    subprocess.run(argv, check=True, timeout=300)
    return str(binary)


RT_LANGS = [pytest.param(lang, marks=pytest.mark.external(TOOLS[lang])) for lang in sorted(RT_TOYS)]


@pytest.mark.slow
@pytest.mark.parametrize("lang", RT_LANGS)
def test_realtime_part_passes_a_wall_clock_timer_and_catches_an_early_one(tmp_path: Path, capsys, lang: str) -> None:
    good = tmp_path / "good.json"
    assert main(["realtime", "--impl", f"cmd:{_rt_toy(tmp_path, lang)}", "--runs", "1", "--tasks", "120",
                 "--out", str(tmp_path / "cx"), "--json", str(good)]) == 0, capsys.readouterr().out
    text = good.read_text()
    assert f"{lang}-thread-timer" in text and '"fail"' not in text
    bad = tmp_path / "bad.json"
    assert main(["realtime", "--impl", f"cmd:{_rt_toy(tmp_path, lang, early=True)}", "--runs", "1", "--tasks", "120",
                 "--out", str(tmp_path / "cx"), "--json", str(bad)]) == 1
    assert "before its deadline" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("lang", RT_LANGS)
def test_realtime_part_speaks_hello_refusals_and_bye(tmp_path: Path, lang: str) -> None:
    answers, code = _session([_rt_toy(tmp_path, lang)], tmp_path, [
        {"type": "hello", "protocol": 1, "protocols": [1, 2]},
        # every answer below is ~100 ms or more away from a deadline, so it holds on a busy machine
        {"type": "rt_run", "run_ms": 400, "ops": [{"at": 0, "kind": "add", "task": 1, "delay": 200},
                                                {"at": 0, "kind": "add", "task": 1, "delay": 100},
                                                {"at": 1, "kind": "cancel", "task": 7},
                                                {"at": 1, "kind": "size"}]},
        {"type": "rt_run", "run_ms": 5, "ops": "no"},
        {"type": "rt_run", "run_ms": 5, "ops": [{"at": 0, "kind": "advance", "time": 3}]},
        {"type": "op", "op": {"kind": "size"}},
        {"type": "bye"},
    ])
    assert code == 0 and [a["id"] for a in answers] == list(range(6))
    caps = answers[0]["capabilities"]
    assert answers[0]["protocol"] == 2 and caps["time"] == "real" and caps["profile"] == "strict"
    run = answers[1]
    # the re-add cancels the first schedule (true: it was pending), a task never added is false
    assert [o["result"] for o in run["ops"]] == [None, True, False, 1]
    assert [(f["task"], f["seq"]) for f in run["fires"]] == [(1, 1)] and run["unfired"] == 0
    assert all(o["t_us"] >= 0 for o in run["ops"]) and run["fires"][0]["t_us"] >= run["ops"][1]["t_us"] + 100_000
    assert [_outcome(a) for a in answers[2:5]] == ["invalid", "invalid", "invalid"]
    assert "ops must be a list" in answers[2]["error"]["message"]
    assert "unknown kind" in answers[3]["error"]["message"]
