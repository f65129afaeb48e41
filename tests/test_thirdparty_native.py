"""The third-party peers written in Rust, Java and Go (``conformance/adapters/thirdparty/``,
``native_peers.py``) and the build cache they share (``wheelspec.benchmarks.buildcache``).

Each peer is built as a user's first ``--impl NAME`` builds it, then judged through the CLI on a
small campaign or a short real-time run, and its explained verdicts (docs/guides/ADAPTERS.md, the
matrix's explanations) are pinned on small scenarios sent straight to the adapter:

* ``tokio-delayqueue`` (virtual, strict): tasks of one deadline come out last-in first-out (a
  wheel slot is a stack: ``delay_queue.rs``, ``impl wheel::Stack for Stack<T>``, ``push`` at the
  head); a delay of 0 is "already expired" and comes out at the next advance, even by 0
  (``normalize_deadline``, ``insert_idx``: ``InsertError::Elapsed``); a delay at or past the
  wheel's range, 2^36 - 1 ms from the wheel's last polled time, panics in ``insert_at`` and
  leaves a ghost entry that ``len()`` counts.
* ``jdk-stpe`` (real time): passes every real-time property.
* ``go-timers`` (real time): fails only ``order``: ``time.AfterFunc`` runs each callback in a
  goroutine of its own, and the last goroutine made goes first (``runnext``).

The tests need the toolchains (``bash .ci/system-deps`` installs them) and fail, never skip, when
one is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.benchmarks import buildcache
from wheelspec.conformance.adapters.thirdparty import PEERS, native_peers
from wheelspec.spec.errors import UserError

#: the wheel's range in tokio-util 0.7 (wheel/mod.rs: MAX_DURATION = 2^36 - 1 ms)
TOKIO_MAX_DURATION = (1 << 36) - 1


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: this peer's test needs it (bash .ci/system-deps)")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _wheelspec(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wheelspec", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=_env())


def _session(argv: list[str], requests: list[dict]) -> list[dict]:
    """Send ``requests`` (ids added, a v2 hello first, bye last) all at once; the answers in order."""
    reqs = [{"type": "hello", "protocol": 1, "protocols": [1, 2]},
            {"type": "reset", "config": {"tick_ms": 1, "wheel_size": 20, "start_ms": 0, "purge_interval": 1000}},
            *requests, {"type": "bye"}]
    text = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(reqs))
    proc = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == len(reqs), proc.stderr[-2000:]
    return answers[2:-1]


def op(kind: str, **fields: object) -> dict:
    return {"type": "op", "op": {"kind": kind, **fields}}


# ------------------------------------------------------------------ tokio-delayqueue -------------------
@pytest.fixture(scope="module")
def tokio_argv() -> list[str]:
    _need("cargo")
    return native_peers.tokio_delayqueue()


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_delayqueue_passes_a_strict_campaign_through_the_cli(tokio_argv: list[str], tmp_path: Path) -> None:
    proc = _wheelspec(["check", "--impl", "tokio-delayqueue", "--schedules", "40", "--no-corpus",
                       "--json", str(tmp_path / "r.json")], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "tokio-delayqueue" in proc.stdout and "strict" in proc.stdout and "PASS" in proc.stdout


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_delayqueue_hands_out_one_deadline_last_in_first_out(tokio_argv: list[str]) -> None:
    answers = _session(tokio_argv, [*(op("add", task=t, delay=10) for t in range(1, 9)), op("advance", time=10)])
    assert answers[0]["result"] == 10
    assert [(e["task"], e["now"], e["exp"]) for e in answers[-1]["events"]] == [(t, 10, 10) for t in range(8, 0, -1)]


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_delayqueue_runs_a_delay_of_0_at_the_next_advance_even_by_0(tokio_argv: list[str]) -> None:
    answers = _session(tokio_argv, [op("advance", time=7), op("add", task=1, delay=0), op("size"),
                                    op("advance", time=7), op("size"), op("cancel", task=1), op("cancel", task=9)])
    assert answers[1] == {"id": 3, "ok": True, "now": 7, "events": [], "result": 7}   # nothing inside insert
    assert answers[2]["result"] == 1
    assert answers[3]["events"] == [{"kind": "fire", "now": 7, "task": 1, "exp": 7}]
    assert [a["result"] for a in answers[4:]] == [0, False, False]   # fired; never added (protocol 2)


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_delayqueue_panics_on_a_delay_past_its_wheel_and_keeps_a_ghost_entry(tokio_argv: list[str]) -> None:
    answers = _session(tokio_argv, [op("add", task=1, delay=TOKIO_MAX_DURATION), op("add", task=2,
                                    delay=TOKIO_MAX_DURATION + 1), op("size")])
    assert answers[0]["ok"] is True
    assert answers[1]["error"]["type"] == "internal"          # insert_at: "invalid deadline"
    assert answers[2]["result"] == 2                          # the panicked insert's slab entry is still counted
    # the range is counted from the wheel's last polled time, not from now: after 1000 ms idle a
    # delay 735 ms under the range panics too
    answers = _session(tokio_argv, [op("advance", time=1000), op("add", task=1, delay=TOKIO_MAX_DURATION - 735)])
    assert answers[1]["error"]["type"] == "internal"


# ------------------------------------------------------------------ real time: jdk-stpe, go-timers -----
@pytest.mark.slow
@pytest.mark.external("java")
def test_jdk_stpe_passes_every_real_time_property(tmp_path: Path) -> None:
    _need("javac")
    native_peers.jdk_stpe()
    proc = _wheelspec(["realtime", "--impl", "jdk-stpe", "--runs", "1", "--json", str(tmp_path / "r.json")], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["name"] == "jdk-stpe" and report["ok"] is True
    assert set(report["properties"].values()) == {"pass"}


@pytest.mark.external("go")
def test_go_timers_fail_only_the_order_of_a_burst(tmp_path: Path) -> None:
    native_peers.go_timers()
    # the run ends 370 ms after the burst's deadline: every task fires on a busy machine too
    schedule = {"wheelspec_realtime_schedule": 1, "name": "burst", "seed": 0, "tick_ms": 1, "wheel_size": 512,
                "run_ms": 400, "ops": [{"at": 0, "kind": "add", "task": t, "delay": 30} for t in range(8)]
                + [{"at": 1, "kind": "add", "task": 99, "delay": (1 << 63) - 1}]}
    (tmp_path / "burst.json").write_text(json.dumps(schedule))
    proc = _wheelspec(["realtime", "--impl", "go-timers", "--schedule", str(tmp_path / "burst.json"),
                       "--out", str(tmp_path / "out"), "--json", str(tmp_path / "r.json")], tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    failing = {p for p, v in report["properties"].items() if v not in ("pass", "n/a")}
    assert failing == {"order"}, report["properties"]
    assert report["properties"]["huge-delay"] == "pass"   # 2^63-1 ms: saturated Duration, never fires


# ------------------------------------------------------------------ builders and the cache -------------
def test_the_peers_are_registered_with_their_builders() -> None:
    assert {n: (PEERS[n].mode, PEERS[n].builder) for n in ("tokio-delayqueue", "jdk-stpe", "go-timers")} == {
        "tokio-delayqueue": ("virtual", "native_peers:tokio_delayqueue"),
        "jdk-stpe": ("real-time", "native_peers:jdk_stpe"),
        "go-timers": ("real-time", "native_peers:go_timers")}


def test_missing_crates_name_the_debian_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("cargo") is None:
        monkeypatch.setattr(buildcache.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setenv("WHEELSPEC_CARGO_REGISTRY", str(tmp_path))
    with pytest.raises(UserError, match="apt-get install librust-tokio-dev librust-tokio-util-dev"):
        native_peers.tokio_delayqueue(str(tmp_path / "cache"))


def test_a_missing_toolchain_names_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buildcache.shutil, "which", lambda name: None)
    for build, hint in ((native_peers.tokio_delayqueue, "apt-get install cargo"),
                        (native_peers.jdk_stpe, "apt-get install default-jdk-headless"),
                        (native_peers.go_timers, "apt-get install golang-go")):
        with pytest.raises(UserError, match=hint):
            build(str(tmp_path))


def test_build_once_publishes_complete_builds_only_and_reuses_them(tmp_path: Path) -> None:
    calls: list[Path] = []

    def good(tmp: Path) -> None:
        calls.append(tmp)
        (tmp / "out").write_text("built")

    key = buildcache.content_key({"a.rs": b"fn main() {}"}, "rustc 1")
    assert key != buildcache.content_key({"a.rs": b"fn main() { }"}, "rustc 1")
    assert key != buildcache.content_key({"a.rs": b"fn main() {}"}, "rustc 2")
    final = buildcache.build_once(tmp_path, "x", key, "out", good)
    assert (final / "out").read_text() == "built" and final.name == f"x-{key}"
    assert buildcache.build_once(tmp_path, "x", key, "out", good) == final and len(calls) == 1

    def bad(tmp: Path) -> None:
        (tmp / "half").write_text("half")
        buildcache.run_build([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"], "the build")

    with pytest.raises(UserError, match="the build failed: boom"):
        buildcache.build_once(tmp_path, "y", key, "out", bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"x-{key}"]   # nothing half-built left
    with pytest.raises(UserError, match="frobnicate not found on PATH \\(apt-get install frob\\)"):
        buildcache.require_tool("frobnicate", "apt-get install frob")


def test_cache_root_follows_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert buildcache.cache_root() == tmp_path / "wheelspec" / "adapters"
    assert buildcache.cache_root("native") == tmp_path / "wheelspec" / "native"
    assert buildcache.cache_root("adapters", str(tmp_path / "x")) == tmp_path / "x"


def test_the_peer_sources_ship_in_the_wheel() -> None:
    """pyproject.toml's package data covers every source of the Rust, Java and Go peers."""
    import tomllib
    from fnmatch import fnmatch

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "wheelspec.conformance.adapters.thirdparty" in project["tool"]["setuptools"]["packages"]
    patterns = project["tool"]["setuptools"]["package-data"]["wheelspec.conformance.adapters.thirdparty"]
    here = root / "conformance" / "adapters" / "thirdparty"
    files = [p.relative_to(here).as_posix() for sub in ("rust", "java", "go") for p in (here / sub).rglob("*")
             if p.is_file() and "target" not in p.parts]
    assert files
    for rel in files:
        assert any(fnmatch(rel, p) and rel.count("/") == p.count("/") for p in patterns), f"{rel} is not package data"
