"""The JavaScript peers (``conformance/adapters/thirdparty/node_peers.py``): ``sinon-tick``,
``sinon-jump``, ``timer-wheel`` (virtual time) and ``node-timers`` (real time), each adapter written
with the JavaScript kit.

Each peer is built as a user's first ``--impl`` builds it (``npm install`` of the pinned packages
into a fresh cache directory), checked through the CLI on the corpus and a small campaign, and the
verdicts docs/guides/ADAPTERS.md and docs/results/MATRIX.md explain are pinned on small scenarios: sinon's clamped
delays, ``clock.jump`` moving overdue deadlines, timer-wheel's 1024 ms buckets, its bucket 0 and the
task it loses, Node's 32-bit delay limit.  They need node and npm (``bash .ci/system-deps``) and the
npm registry or npm's cache, and fail, never skip, when node or npm is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from wheelspec.conformance.adapters.thirdparty import PEERS, node_peers
from wheelspec.conformance.cli import main
from wheelspec.spec import limits

pytestmark = pytest.mark.external("node")

#: the properties a history judge reports about *when* tasks fire (the matrix's "satisfies")
FIRING = {"no-early-fire", "no-lost-task", "fire-once", "no-fire-after-cancel", "cancel-result"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Every JavaScript peer built into a fresh cache (as on a user's first use), and the seconds
    the first build took."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: the JavaScript peers need it (bash .ci/system-deps)")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    t0 = time.perf_counter()
    argv = {name: PEERS[name].command() for name in ("sinon-tick", "sinon-jump", "timer-wheel", "node-timers")}
    seconds = time.perf_counter() - t0
    yield {"argv": argv, "seconds": seconds}
    mp.undo()


def _session(argv: list[str], ops: list[dict], start_ms: int = 0) -> list[dict]:
    """hello (offering 1 and 2), reset at ``start_ms``, ``ops``, bye: the answers to the ops."""
    reqs = [{"type": "hello", "protocol": 1, "protocols": [1, 2]},
            {"type": "reset", "config": {"tick_ms": 1, "wheel_size": 20, "start_ms": start_ms, "purge_interval": 1000}},
            *({"type": "op", "op": op} for op in ops), {"type": "bye"}]
    text = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(reqs))
    proc = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == list(range(len(reqs)))
    assert all(a["ok"] for a in answers), answers
    return answers[2:-1]


def _fires(answer: dict) -> list[tuple[int, int, int]]:
    return [(e["task"], e["now"], e["exp"]) for e in answer["events"]]


def _replay(tmp_path: Path, impl: str, steps: list[dict], start_ms: int = 0) -> tuple[int, list[str]]:
    """Replay a scenario through the CLI: its exit code and the properties its findings name."""
    sc = tmp_path / f"{impl}.json"
    config = {"tick_ms": 1, "wheel_size": 20, "start_ms": start_ms, "purge_interval": 1000}
    sc.write_text(json.dumps({"wheelspec_scenario": 1, "name": "pinned", "steps": steps, "config": config}))
    out = tmp_path / f"{impl}-report.json"
    code = main(["replay", str(sc), "--impl", impl, "--json", str(out)])
    report = json.loads(out.read_text())["implementations"][0]
    return code, [f["prop"] for s in report["scenarios"] for f in s["failures"]]


def _check(tmp_path: Path, impl: str, *args: str) -> tuple[int, dict]:
    out = tmp_path / f"{impl}-check.json"
    code = main(["check", "--impl", impl, "--out", str(tmp_path / "cx"), "--json", str(out), *args])
    return code, json.loads(out.read_text())["implementations"][0]


def _props(report: dict) -> set[str]:
    found = {f["prop"] for s in report["scenarios"] for f in s["failures"]}
    return found | {f["prop"] for c in report["campaign"].get("failures", []) for f in c["failures"]}


def add(task: int, delay: int) -> dict:
    return {"kind": "add", "task": task, "delay": delay}


def advance(t: int) -> dict:
    return {"kind": "advance", "time": t}


# ------------------------------------------------------------------ building -------------------------------
def test_each_peer_is_installed_once_with_the_pinned_packages_beside_the_kit(built: dict) -> None:
    argv = built["argv"]
    root = Path(argv["sinon-tick"][1]).parent
    assert {Path(a[1]).parent for a in argv.values()} == {root}
    for pkg, version in (("@sinonjs/fake-timers", "15.5.0"), ("timer-wheel", "1.0.0")):
        assert json.loads((root / "node_modules" / pkg / "package.json").read_text())["version"] == version
    for kit_file in node_peers.KIT_FILES:  # the adapters require the kit's layer from beside them
        assert (root / kit_file).exists()
    t0 = time.perf_counter()
    assert PEERS["timer-wheel"].command() == argv["timer-wheel"]   # reused: no second install
    assert time.perf_counter() - t0 < 5


def test_a_missing_node_is_one_line_naming_what_to_install(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["check", "--impl", "sinon-tick", "--schedules", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "node not found on PATH (install Node.js: apt-get install nodejs)" in err


# ------------------------------------------------------------------ sinon-tick -----------------------------
@pytest.mark.slow
def test_sinon_tick_fires_as_strict_but_clamps_delays_as_setTimeout_does(built: dict, tmp_path: Path) -> None:
    """clock.tick runs each due timer at its own callAt, in deadline order; a negative delay
    becomes 0 and one past 2^31-1 ms becomes 1 (fake-timers' addTimer), so add's expiration is not
    now + delay: the campaign's only findings are those and the range contract."""
    a = _session(built["argv"]["sinon-tick"], [add(1, 10), add(2, 5), advance(120), add(3, -5),
                                               add(4, limits.MAX_DELAY_MS), {"kind": "size"}, advance(121)], 100)
    assert _fires(a[2]) == [(2, 105, 105), (1, 110, 110)]
    assert a[3]["result"] == 120 and a[4]["result"] == 121 and a[5]["result"] == 2
    assert _fires(a[6]) == [(3, 120, 120), (4, 121, 121)]
    code, report = _check(tmp_path, "sinon-tick", "--schedules", "40")
    assert code == 1 and report["verdicts"]["strict"] == "fail" and report["verdicts"]["ranges"] == "fail"
    assert {"well-formed", "ranges"} <= _props(report) <= {"well-formed", "expected", "ranges", "accepted-invalid"}


# ------------------------------------------------------------------ sinon-jump -----------------------------
@pytest.mark.slow
def test_sinon_jump_moves_every_overdue_deadline_to_the_destination(built: dict, tmp_path: Path) -> None:
    """clock.jump first sets each overdue timer's callAt to the destination, then ticks there: the
    two timers run at 20, in the order they were created, and the library's deadline of each is 20,
    which no add produced (fire-once); clock.tick runs the same schedule cleanly."""
    steps = [add(1, 10), add(2, 5), advance(20)]
    a = _session(built["argv"]["sinon-jump"], steps)
    assert [x["result"] for x in a[:2]] == [10, 5]
    assert _fires(a[2]) == [(1, 20, 20), (2, 20, 20)]
    assert _replay(tmp_path, "sinon-tick", steps) == (0, [])
    code, props = _replay(tmp_path, "sinon-jump", steps)
    assert code == 1 and "fire-once" in props
    code, report = _check(tmp_path, "sinon-jump", "--schedules", "20", "--no-corpus")
    assert code == 1 and "fire-once" in _props(report)


# ------------------------------------------------------------------ timer-wheel ----------------------------
def test_timer_wheel_fires_only_when_an_advance_enters_a_new_1024_ms_bucket(built: dict, tmp_path: Path) -> None:
    a = _session(built["argv"]["timer-wheel"], [add(1, 5), advance(5), advance(1023), advance(1024)])
    assert a[0]["result"] == 5 and _fires(a[1]) == [] and _fires(a[2]) == []
    assert _fires(a[3]) == [(1, 1024, 5)]   # late by 1019 ms, never early


def test_timer_wheel_files_a_due_task_in_bucket_0_scanned_once_per_65536_ms(built: dict) -> None:
    a = _session(built["argv"]["timer-wheel"], [advance(5000), add(1, 0), advance(6144), advance(65535),
                                               advance(65536)])
    assert a[1]["result"] == 5000
    assert _fires(a[2]) == [] and _fires(a[3]) == []
    assert _fires(a[4]) == [(1, 65536, 5000)]


def test_timer_wheel_loses_a_task_refiled_into_the_bucket_it_is_scanning(built: dict, tmp_path: Path) -> None:
    """Two tasks in bucket 7 (7168-8191 ms): the advance to 7622 runs task 6 and re-files task 0
    (not due) into the bucket being scanned; unlinking task 6 through its stale links drops task 0
    from the bucket. It never fires, the library still counts it and still cancels it."""
    steps = [add(0, 7878), add(6, 7168), advance(7622), advance(8322), advance(1_000_000), {"kind": "size"},
             {"kind": "cancel", "task": 0}]
    a = _session(built["argv"]["timer-wheel"], steps)
    assert _fires(a[2]) == [(6, 7622, 7168)]
    assert _fires(a[3]) == [] and _fires(a[4]) == []
    assert a[5]["result"] == 1 and a[6]["result"] is True
    assert _replay(tmp_path, "timer-wheel", steps) == (1, ["no-lost-task"])


@pytest.mark.slow
def test_timer_wheel_corpus_and_campaign_find_late_fires_only(built: dict, tmp_path: Path) -> None:
    code, report = _check(tmp_path, "timer-wheel", "--schedules", "30")
    assert code == 1 and report["verdicts"] == {"strict": "fail", "ranges": "not judged"}
    found = _props(report)
    assert "no-lost-task" in found
    # never early, never twice, never after a true cancel: only late (and what lateness implies:
    # a pinned result of a cancel or size taken while a task is overdue)
    assert not found & {"no-early-fire", "fire-once", "no-fire-after-cancel", "well-formed"}


# ------------------------------------------------------------------ node-timers ----------------------------
def test_node_timers_run_a_real_time_schedule_and_turn_huge_delays_into_1_ms(built: dict, tmp_path: Path) -> None:
    out = tmp_path / "rt.json"
    code = main(["realtime", "--impl", "node-timers", "--runs", "1", "--tasks", "40", "--out", str(tmp_path),
                 "--json", str(out)])
    rep = json.loads(out.read_text())
    assert code == 1 and rep["name"] == "node-timers"
    props = rep["properties"]
    assert props["huge-delay"] == "fail"     # setTimeout: a delay past 2^31-1 ms is set to 1
    assert props["exactly-once"] == "pass" and props["cancel"] == "pass" and props["late"] == "pass"
