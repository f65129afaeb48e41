"""The native peers as bench drivers: each cell runs in a subprocess of the peer's own language.

A native driver cannot hand the harness a Python callable to time: the operations run in a JVM or
a Rust binary.  So :meth:`NativeDriver.measure` replaces :func:`~wheelspec.benchmarks.measure.time_run`
for these cells: it writes the workload's arrays to a file (:mod:`.protocol`), runs the built driver
(:mod:`.build`) once per cell, and reads back the seconds of each timed run, the per-operation
latency percentiles and what the figure measures.  Inside the subprocess the rules are the harness's:
a fresh structure per run, only the operations timed, untimed warm-up runs of the same workload
first (the JVM's JIT compiles the loops the timed runs execute; the Rust binary is a release
build and gets one warm-up run for its allocator and page faults), up to ``repeat`` runs (fewer once
``budget_s`` seconds were spent), and every run verified after its clock stops.

Peers:

* ``netty``            -- Netty's ``HashedWheelTimer`` (Debian's libnetty-java), 1 ms tick, 512 buckets;
* ``jdk-stpe``         -- the JDK's ``ScheduledThreadPoolExecutor``, one thread, remove on cancel;
* ``jdk-delayqueue``   -- the JDK's ``DelayQueue`` on a virtual clock (``getDelay`` reads a field);
* ``tokio-delayqueue`` -- tokio-util's ``DelayQueue`` on tokio's paused clock (``tokio::time::advance``).

Netty and the executor fire on the real clock only; what their fire cells measure is in
``java/RealTimePeer.java`` and docs/guides/BENCH.md ("Native peers").
"""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from wheelspec.spec.errors import WheelspecError

from ..drivers import Driver, Prepared, TimerConfig, Unavailable, VerificationError
from ..workloads import TIMER_WORKLOADS, PurgatoryWorkload, TimerWorkload
from . import build, protocol

#: Individual operations timed at most per latency run (every k-th operation beyond this).
MAX_SAMPLES = 1_000_000
#: A cell's subprocess is stopped after this long (its cell is then reported as skipped; the suite's
#: --budget prediction from the previous size normally skips such a cell before it starts).
CELL_TIMEOUT_S = 3600.0


class NotApplicable(WheelspecError):
    """The peer cannot express this workload; the message says why (shown as "n/a (why)")."""


class TooSlow(WheelspecError):
    """The cell's subprocess ran over :data:`CELL_TIMEOUT_S` (its cell is reported as skipped)."""


@dataclasses.dataclass
class NativeResult:
    """One cell as the peer's driver reported it."""

    runs_s: list[float]
    ops: int
    wall_per_run_s: float
    metric: str
    version: str
    warm_runs: int
    latency: dict[str, Any] | None


class NativeDriver(Driver):
    """Base of the native peers: ``native`` tells the suite to call :meth:`measure`."""

    native = True
    memory = "none"
    workloads = TIMER_WORKLOADS
    #: ``"java"`` or ``"rust"``: which build the peer's driver comes from.
    toolchain = "?"
    #: Untimed runs of the same workload before the timed ones.
    warm_runs = 2

    def __init__(self, build_dir: str | None = None) -> None:
        self.build_dir = build_dir
        self._built: build.Built | None = None
        self._why: str | None = None
        self.last_floor_s = 0.0  # floor_s() of the last cell measured

    def built(self) -> build.Built:
        """The peer's driver, built on first use (Unavailable if it cannot be)."""
        if self._built is None and self._why is None:
            try:
                self._built = (build.build_java if self.toolchain == "java" else build.build_rust)(self.build_dir)
            except Unavailable as e:
                self._why = str(e)
        if self._built is None:
            raise Unavailable(self._why or "not built")
        return self._built

    def available(self) -> str | None:
        try:
            self.built()
        except Unavailable as e:
            return str(e)
        return None

    def prepare(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        raise Unavailable(f"{self.name} runs in its own process: the suite calls measure(), not prepare()")

    def warm_for(self, workload: str) -> int:
        return self.warm_runs

    def floor_s(self, wl: TimerWorkload) -> float:
        """Seconds of a run that do not grow with N (the suite scales only the rest when it
        predicts the next size's cost)."""
        return 0.0

    def warm_for_n(self, workload: str, n: int) -> int:
        """Warm-up runs for a cell of ``n`` tasks."""
        return self.warm_for(workload)

    def measure(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig, repeat: int,
                budget_s: float, work_dir: str | None = None) -> NativeResult:
        """Run one cell in the peer's driver.  Raises :class:`NotApplicable` (the peer cannot run
        this workload), :class:`Unavailable` (no toolchain), :class:`TooSlow`, :class:`VerificationError`
        (a run did not do what the workload says) or RuntimeError (the driver crashed)."""
        if not isinstance(wl, TimerWorkload):
            raise NotApplicable(f"{self.name} is a timer, not a purgatory")
        built = self.built()
        warm = self.warm_for_n(wl.name, wl.n)
        root = build.cache_dir(self.build_dir) if work_dir is None else Path(work_dir)
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".cell-", dir=root) as tmp:
            path = Path(tmp) / f"{wl.name}-{wl.n}.bin"
            protocol.write_workload(wl, path)
            argv = built.argv + [self.name, wl.name, str(path), str(cfg.tick_ms), str(max(1, repeat)),
                                 repr(float(budget_s)), str(warm), str(MAX_SAMPLES)]
            t0 = time.perf_counter()
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=CELL_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise TooSlow(f"its driver ran over {CELL_TIMEOUT_S:.0f} s and was stopped") from None
            wall = time.perf_counter() - t0
        if p.returncode == protocol.EXIT_VERIFY:
            why = next((ln[len("VERIFY "):] for ln in p.stderr.splitlines() if ln.startswith("VERIFY ")),
                       build.last_lines(p.stderr))
            raise VerificationError(why)
        res = protocol.parse_result(p.stdout)
        if p.returncode != 0 or res is None:
            raise RuntimeError(f"{self.name}: its driver exited {p.returncode}: {build.last_lines(p.stderr, 2)}")
        if res.get("status") == "n/a":
            raise NotApplicable(str(res.get("why", "")))
        runs = [float(x) for x in res["runs_s"]]
        self.last_floor_s = self.floor_s(wl)
        latency = res.get("latency")
        processes = warm + len(runs) + (1 if latency else 0)
        return NativeResult(runs_s=runs, ops=int(res["ops"]), wall_per_run_s=wall / max(1, processes),
                            metric=str(res.get("metric", "")),
                            version=f"{res.get('version', self.name)}; {built.version}",
                            warm_runs=int(res.get("warm_runs", warm)), latency=latency)


class JavaDriver(NativeDriver):
    toolchain = "java"
    #: The JIT compiles a loop after some ten thousand passes; two runs of a small workload are not
    #: that many, so small sizes get more warm-up runs: at least this many tasks in all (at most 20 runs).
    WARM_TASKS = 200_000

    def warm_for_n(self, workload: str, n: int) -> int:
        base = self.warm_for(workload)
        return max(base, min(20, -(-self.WARM_TASKS // max(1, n)))) if base > 1 else base


class RealTimeJavaDriver(JavaDriver):
    """Netty and the executor: their fire runs last at least the longest delay (2 s) of wall time,
    so they get one warm-up run there instead of two."""

    def warm_for(self, workload: str) -> int:
        return 1 if workload.startswith("fire") else self.warm_runs

    def floor_s(self, wl: TimerWorkload) -> float:
        # A fire run waits on the real clock for the longest delay, whatever N is.
        return float(wl.delays.max()) / 1000.0 if wl.name.startswith("fire") and wl.n else 0.0


class NettyDriver(RealTimeJavaDriver):
    name = "netty"

    def available(self) -> str | None:
        why = super().available()
        if why is None and build.netty_jar() is None:
            return ("Debian's libnetty-java is not installed (no /usr/share/java/netty-common.jar): "
                    "apt-get install libnetty-java")
        return why


class StpeDriver(RealTimeJavaDriver):
    name = "jdk-stpe"


class DelayQueueDriver(JavaDriver):
    name = "jdk-delayqueue"


class TokioDriver(NativeDriver):
    name = "tokio-delayqueue"
    toolchain = "rust"
    warm_runs = 1


NATIVE_DRIVERS: dict[str, type[Driver]] = {
    "netty": NettyDriver,
    "jdk-stpe": StpeDriver,
    "jdk-delayqueue": DelayQueueDriver,
    "tokio-delayqueue": TokioDriver,
}
