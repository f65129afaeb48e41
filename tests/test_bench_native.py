"""The native peers of ``wheelspec bench`` (benchmarks/native/): each driver builds, runs every timer
workload at N = 1000 with its verification passing, and fails a run that does not do what the
workload says; a missing toolchain gives an "unavailable" row, not a crash or a missing row.
No timed assertions: only that figures exist and runs verify."""

from __future__ import annotations

import dataclasses
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from wheelspec.benchmarks import report, suite
from wheelspec.benchmarks.drivers import TimerConfig, VerificationError
from wheelspec.benchmarks.native import build, protocol
from wheelspec.benchmarks.native.drivers import NATIVE_DRIVERS
from wheelspec.benchmarks.registry import DRIVERS
from wheelspec.benchmarks.workloads import FIRE_MAX_DELAY_MS, TIMER_WORKLOADS, timer_workload

JAVA_PEERS = ["netty", "jdk-stpe", "jdk-delayqueue"]
N = 1000

#: one pytest-xdist worker runs this module, so the peers are built once per test run (the
#: module's build directory is per worker): a Rust build is about 9 s here
pytestmark = pytest.mark.xdist_group("native-peers")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("native-build"))


def _need_java() -> None:
    if shutil.which("java") is None or shutil.which("javac") is None or build.netty_jar() is None:
        pytest.fail("the Java peers need a JDK and Debian's libnetty-java "
                    "(bash .ci/system-deps installs them: apt-get install -y libnetty-java)")


def _need_cargo() -> None:
    if shutil.which("cargo") is None or not (build.cargo_registry() / "").is_dir():
        pytest.fail("the Rust peer needs cargo and Debian's tokio crates "
                    "(bash .ci/system-deps installs them: apt-get install -y librust-tokio-dev librust-tokio-util-dev)")


def _runs_every_workload(peer: str, build_dir: str) -> None:
    driver = NATIVE_DRIVERS[peer](build_dir=build_dir)
    assert driver.available() is None, driver.available()
    for name in TIMER_WORKLOADS:
        wl = timer_workload(name, N)
        res = driver.measure(wl, TimerConfig(), repeat=1, budget_s=1.0)  # raises if a run did not verify
        assert res.ops == wl.ops and len(res.runs_s) == 1 and res.runs_s[0] > 0, (peer, name, res)
        assert res.metric and res.version and res.warm_runs >= 1
        realtime_fire = peer in ("netty", "jdk-stpe") and name.startswith("fire")
        if realtime_fire:
            assert res.latency is None  # fires run on the peer's own thread: no per-call latency
        else:
            assert res.latency is not None and res.latency["samples"] == wl.ops, (peer, name, res.latency)
            assert 0 < res.latency["p50_ns"] <= res.latency["p99_ns"] <= res.latency["p999_ns"]


def _broken(name: str) -> object:
    """A workload no honest run can verify: a cancel order naming one task twice (the second cancel
    finds nothing), or fire advances that stop half way (half the tasks never fire)."""
    wl = timer_workload(name, N)
    if name == "cancel":
        order = wl.cancel_order.copy()
        order[1] = order[0]
        return dataclasses.replace(wl, cancel_order=order)
    return dataclasses.replace(wl, advance_times=np.array([FIRE_MAX_DELAY_MS // 2], np.int64))


@pytest.mark.slow
@pytest.mark.external("java")
@pytest.mark.parametrize("peer", JAVA_PEERS)
def test_java_peer_builds_runs_and_verifies(peer: str, build_dir: str) -> None:
    _need_java()
    _runs_every_workload(peer, build_dir)


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_peer_builds_runs_and_verifies(build_dir: str) -> None:
    _need_cargo()
    _runs_every_workload("tokio-delayqueue", build_dir)


@pytest.mark.slow
@pytest.mark.external("java")
@pytest.mark.parametrize("peer", JAVA_PEERS)
def test_java_peer_fails_a_run_that_does_not_verify(peer: str, build_dir: str) -> None:
    _need_java()
    driver = NATIVE_DRIVERS[peer](build_dir=build_dir)
    with pytest.raises(VerificationError):
        driver.measure(_broken("cancel"), TimerConfig(), repeat=1, budget_s=1.0)
    if peer == "jdk-delayqueue":  # a virtual clock: advances are the workload's, so can stop half way
        with pytest.raises(VerificationError, match="fired 5.. tasks, expected 1000"):
            driver.measure(_broken("fire-jump"), TimerConfig(), repeat=1, budget_s=1.0)


@pytest.mark.slow
@pytest.mark.external("cargo")
def test_tokio_peer_fails_a_run_that_does_not_verify(build_dir: str) -> None:
    _need_cargo()
    driver = NATIVE_DRIVERS["tokio-delayqueue"](build_dir=build_dir)
    with pytest.raises(VerificationError, match="fired 5.. tasks, expected 1000"):
        driver.measure(_broken("fire-steps"), TimerConfig(), repeat=1, budget_s=1.0)


@pytest.mark.slow
@pytest.mark.external("java")
def test_native_peers_share_the_table_with_the_engine(build_dir: str) -> None:
    _need_java()
    opts = suite.Options(sizes=[N], workloads=["insert", "purgatory"], impls=["heapq", "jdk-delayqueue"],
                         caps={}, repeat=1, jit=False, native_build_dir=build_dir)
    res = suite.run(opts, ["test"])
    cell = res.cell("insert", N, "jdk-delayqueue")
    assert cell is not None and cell.status == "ok" and cell.vs_heapq is not None and cell.p999_ns is not None
    purg = res.cell("purgatory", N, "jdk-delayqueue")
    assert purg is not None and purg.status == "unavailable"
    md = report.markdown(res)
    assert "| insert | 10^3 | jdk-delayqueue |" in md and "jdk-delayqueue / insert: offer() calls" in md


def test_missing_toolchains_give_unavailable_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No java, javac or cargo on PATH: each native peer's row says why, the other rows run.
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    opts = suite.Options(sizes=[N], workloads=["insert"], impls=["heapq"] + list(NATIVE_DRIVERS),
                         caps={}, repeat=1, jit=False, native_build_dir=str(tmp_path / "cache"))
    res = suite.run(opts, ["test"])
    heap = res.cell("insert", N, "heapq")
    assert heap is not None and heap.status == "ok"
    for peer in NATIVE_DRIVERS:
        cell = res.cell("insert", N, peer)
        assert cell is not None and cell.status == "unavailable", (peer, cell)
        assert ("java and javac not found on PATH" if peer != "tokio-delayqueue"
                else "cargo not found on PATH") in cell.note
    md = report.markdown(res)
    assert "| insert | 10^3 | tokio-delayqueue |" in md and "unavailable: cargo not found on PATH" in md
    assert not list((tmp_path / "cache").glob("*-*"))  # nothing half-built left behind


def test_missing_rust_crates_name_the_debian_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    cargo = fake / "cargo"
    cargo.write_text("#!/bin/sh\necho 'cargo 0.0.0 (fake)'\n")
    cargo.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    monkeypatch.setenv("WHEELSPEC_CARGO_REGISTRY", str(tmp_path / "registry"))
    why = NATIVE_DRIVERS["tokio-delayqueue"](build_dir=str(tmp_path / "cache")).available()
    assert why is not None and "librust-tokio-dev librust-tokio-util-dev" in why and "tokio-util" in why


def test_native_peers_are_bench_implementations() -> None:
    from wheelspec.conformance.cli.bench import IMPLS, NATIVE_IMPLS

    assert set(NATIVE_IMPLS) <= set(IMPLS) and set(NATIVE_IMPLS) == set(NATIVE_DRIVERS)
    assert all(DRIVERS[name] is NATIVE_DRIVERS[name] for name in NATIVE_IMPLS)


@pytest.mark.parametrize("name", TIMER_WORKLOADS)
def test_workload_file_carries_the_python_arrays(name: str, tmp_path: Path) -> None:
    wl = timer_workload(name, 300)
    path = tmp_path / "wl.bin"
    protocol.write_workload(wl, path)
    data = path.read_bytes()
    assert data[:8] == protocol.MAGIC
    (count,) = struct.unpack_from("<i", data, 8)
    at = 12
    for field in protocol.ARRAYS[:count]:
        (length,) = struct.unpack_from("<i", data, at)
        got = np.frombuffer(data, "<i4", length, at + 4)
        at += 4 + 4 * length
        want = getattr(wl, field)
        assert np.array_equal(got, np.zeros(0) if want is None else want), field
    assert at == len(data)


def test_budget_prediction_scales_only_what_grows_with_n(monkeypatch: pytest.MonkeyPatch) -> None:
    # A real-clock peer's fire run waits 2 s whatever N is: from 2.5 s at 10^3, 10^5 costs about
    # 2 + 0.5 * 100 = 52 s, under a 180 s budget; scaling the whole 2.5 s (250 s) would skip it.
    from wheelspec.benchmarks.native.drivers import NativeDriver, NativeResult

    calls: list[int] = []

    class FakeRealClockPeer(NativeDriver):
        name = "fake-real-clock"

        def available(self) -> str | None:
            return None

        def floor_s(self, wl: object) -> float:
            return 2.0

        def measure(self, wl, cfg, repeat, budget_s, work_dir=None):  # type: ignore[no-untyped-def]
            calls.append(wl.n)
            self.last_floor_s = self.floor_s(wl)
            return NativeResult(runs_s=[0.001], ops=wl.ops, wall_per_run_s=2.5, metric="fake", version="fake",
                                warm_runs=1, latency=None)

    monkeypatch.setitem(DRIVERS, FakeRealClockPeer.name, FakeRealClockPeer)
    opts = suite.Options(sizes=[1000, 100_000], workloads=["fire-jump"], impls=[FakeRealClockPeer.name],
                         caps={}, repeat=1, jit=False, budget_s=180.0)
    res = suite.run(opts, ["test"])
    assert calls == [1000, 100_000]
    big = res.cell("fire-jump", 100_000, FakeRealClockPeer.name)
    assert big is not None and big.status == "ok", big


@pytest.mark.slow
@pytest.mark.external("java")
def test_real_time_accounting_allows_a_cancel_racing_a_run_only_where_the_peer_says_so(tmp_path: Path) -> None:
    """``RealTimePeer.accountFor`` on a crafted run whose task 2 was cancelled (cancel returned
    true) and fired: FutureTask allows that (jdk-stpe declares it, and the metric line counts it),
    Netty's single state word does not (the check fails).  The race itself is rare on the real
    clock, so the accounting is driven directly (tests/fixtures/AccountingCheck.java)."""
    _need_java()
    src = Path(protocol.__file__).parent / "java"
    fixture = Path(__file__).parent / "fixtures" / "AccountingCheck.java"
    out = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(out), str(src / "RealTimePeer.java"), str(src / "NativeBench.java"),
                    str(fixture)], check=True, capture_output=True, text=True, timeout=120)
    run = subprocess.run(["java", "-cp", str(out), "AccountingCheck"], check=True, capture_output=True, text=True,
                         timeout=60)
    assert run.stdout.splitlines() == [
        "races=false failed: fake: task 2 was cancelled (cancel returned true) and fired",
        "races=true ok; caller's schedule + cancel calls of the window, the worker running; "
        "1 cancels returned true for a task already running",
    ]
