"""The benchmark harness measures what it says: every implementation runs the same workload and
fires the same tasks, a wrong result fails its cell instead of producing a figure, the outputs
carry the figures of the run, and bad arguments are refused with one line and exit code 2.

Correctness only: no assertion here is about speed.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

import numpy as np
import pytest

from wheelspec.benchmarks import measure, report, suite
from wheelspec.benchmarks.drivers import HeapDriver, TimerConfig, VerificationError, array_bytes
from wheelspec.benchmarks.heap_timer import HeapTimer
from wheelspec.benchmarks.registry import DRIVERS
from wheelspec.benchmarks.workloads import PurgatoryParams, purgatory_workload, timer_workload
from wheelspec.conformance.cli import main

CFG = TimerConfig()
TIMER_IMPLS = ["reference", "optimized", "optimized-op", "optimized-batch", "heapq", "sched"]


def _fired_by_time(impl: str, wl, prep, returned) -> dict[int, list[int]]:
    """Tasks fired at each advance, as sorted lists, whatever way the implementation reports them."""
    out: dict[int, list[int]] = defaultdict(list)
    history = getattr(prep.state, "history", None)
    if history is not None:  # reference / optimized Simulation: Fire events stamped with `now`
        for e in history:
            if e.kind == "fire":
                out[e.now].append(e.task)
    else:
        for t, r in zip(wl.advance_times.tolist(), returned):
            ids = r[0] if isinstance(r, tuple) else r  # optimized-op returns (ids, exps)
            out[t].extend(np.asarray(ids).tolist())
    return {t: sorted(v) for t, v in out.items() if v}


@pytest.mark.parametrize("name", ["fire-steps", "fire-jump"])
def test_every_implementation_fires_the_same_tasks_at_the_same_advances(name: str) -> None:
    wl = timer_workload(name, 1500, seed=4)
    seen = {}
    for impl in TIMER_IMPLS:
        driver = DRIVERS[impl]()
        assert driver.available() is None, f"{impl}: {driver.available()}"
        prep = driver.prepare(wl, CFG)
        returned = prep.timed()
        prep.verify(returned)
        seen[impl] = _fired_by_time(impl, wl, prep, returned)
    expected = seen["reference"]
    assert sum(len(v) for v in expected.values()) == wl.n
    for impl, got in seen.items():
        assert got == expected, f"{impl} fired differently from the reference"


@pytest.mark.parametrize("impl", TIMER_IMPLS)
@pytest.mark.parametrize("name", ["insert", "cancel"])
def test_insert_and_cancel_runs_verify(impl: str, name: str) -> None:
    driver = DRIVERS[impl]()
    prep = driver.prepare(timer_workload(name, 700, seed=2), CFG)
    prep.verify(prep.timed())


@pytest.mark.slow
@pytest.mark.parametrize("impl", TIMER_IMPLS)
def test_steady_window_runs_verify_and_leave_n_pending(impl: str) -> None:
    n = 800
    # two warm-up windows take every path of the sixteen the benchmark runs (sched re-heaps on
    # every cancel: sixteen windows cost it 20 s)
    wl = timer_workload("steady", n, seed=3, warm_windows=2)
    prep = DRIVERS[impl]().prepare(wl, CFG)
    assert prep.warm is not None
    prep.warm()
    assert prep.state.size() == n  # the warm-up leaves the occupancy at n
    prep.verify(prep.timed())
    assert prep.state.size() == n


class _CancelMissesWindow(HeapTimer):
    """A seeded bug: a cancel of a task added after the first 800 finds nothing."""

    def cancel(self, task_id: int) -> bool:
        return False if task_id >= 800 else super().cancel(task_id)


class _CountingTimer(HeapTimer):
    def __init__(self) -> None:
        super().__init__()
        self.adds = self.cancels = 0

    def add(self, task_id: int, delay_ms: int) -> int:
        self.adds += 1
        return super().add(task_id, delay_ms)

    def cancel(self, task_id: int) -> bool:
        self.cancels += 1
        return super().cancel(task_id)


@pytest.mark.parametrize("k", [0, 1, 3])
def test_steady_warm_up_runs_every_window(k: int) -> None:
    from wheelspec.benchmarks.workloads import STEADY_WINDOW

    driver = HeapDriver()
    driver.new_timer = lambda cfg, n: _CountingTimer()  # type: ignore[method-assign]  # a test double
    prep = driver.prepare(timer_workload("steady", 300, seed=3, warm_windows=k), CFG)
    timer = prep.state
    assert (timer.adds, timer.cancels) == (300, 0)
    assert prep.warm is not None
    prep.warm()
    assert (timer.adds, timer.cancels) == (300 + k * STEADY_WINDOW, k * STEADY_WINDOW)
    prep.verify(prep.timed())


def test_warmup_curve_script_prints_its_table(capsys) -> None:
    from wheelspec.benchmarks import warmup

    assert warmup.main(["--sizes", "300", "--windows", "0,2", "--impls", "optimized-batch,heapq", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "k=0" in out and "k=2" in out and "optimized-batch" in out and "heapq" in out
    assert warmup.main(["--impls", "nope"]) == 2
    assert "unknown implementation 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--windows"):
        warmup.main(["--windows", "x"])


def test_steady_window_fails_a_timer_whose_cancel_misses() -> None:
    driver = HeapDriver()
    driver.new_timer = lambda cfg, n: _CancelMissesWindow()  # type: ignore[method-assign]  # a broken timer
    prep = driver.prepare(timer_workload("steady", 800, seed=3), CFG)
    with pytest.raises(VerificationError, match="cancels found no pending task"):
        prep.verify(prep.timed())
    prep = driver.prepare(timer_workload("steady", 800, seed=3), CFG)
    assert prep.warm is not None
    with pytest.raises(VerificationError, match="warm-up cancels found no pending task"):
        prep.warm()


@pytest.mark.parametrize("impl", ["reference", "optimized", "optimized-batch", "heapq"])
def test_purgatory_runs_complete_every_request_once(impl: str) -> None:
    p = PurgatoryParams(rate=3000.0, pct50=5.0, pct75=80.0, timeout=300, purge_interval=20)
    wl = purgatory_workload(1200, seed=9, params=p)
    assert wl.expected_expirations > 0
    prep = DRIVERS[impl]().prepare(wl, CFG)
    prep.verify(prep.timed())


class _DropsOne(HeapTimer):
    """A seeded bug: loses the last task of every non-empty advance."""

    def advance_to(self, time_ms: int) -> list[int]:
        return super().advance_to(time_ms)[:-1]


class _CancelsNothing(HeapTimer):
    def cancel(self, task_id: int) -> bool:
        return True


@pytest.mark.parametrize("bug,name", [(_DropsOne, "fire-jump"), (_DropsOne, "fire-steps"),
                                      (_CancelsNothing, "cancel")])
def test_a_wrong_implementation_fails_verification(bug: type, name: str) -> None:
    driver = HeapDriver()
    driver.new_timer = lambda cfg, n: bug()  # type: ignore[method-assign]  # a broken timer
    prep = driver.prepare(timer_workload(name, 300), CFG)
    with pytest.raises(VerificationError):
        prep.verify(prep.timed())


def test_a_failed_cell_is_reported_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HeapDriver, "new_timer", lambda self, cfg, n: _DropsOne())
    opts = suite.Options(sizes=[200], workloads=["fire-jump"], impls=["heapq", "sched"], caps={},
                         repeat=1, jit=False)
    res = suite.run(opts, ["test"])
    heap, sched = res.cell("fire-jump", 200, "heapq"), res.cell("fire-jump", 200, "sched")
    assert heap is not None and heap.status == "failed" and heap.ops_per_s is None
    assert "VerificationError" in heap.note
    assert sched is not None and sched.status == "ok" and sched.vs_heapq is None
    assert report.failed(res.cells) == [heap]


@pytest.mark.slow
def test_caps_and_the_time_budget_skip_cells_and_say_why() -> None:
    opts = suite.Options(sizes=[100, 400, 1600], workloads=["insert", "cancel"], impls=["heapq", "sched"],
                         caps={"heapq": 400}, repeat=1, budget_s=1e-9, jit=False)
    res = suite.run(opts, ["test"])
    capped = res.cell("insert", 1600, "heapq")
    assert capped is not None and capped.status == "skipped" and "cap" in capped.note
    # the smallest size always runs; the next is predicted from it and skipped under a tiny budget
    first, second = res.cell("cancel", 100, "sched"), res.cell("cancel", 400, "sched")
    assert first is not None and first.status == "ok"
    assert second is not None and second.status == "skipped" and "predicted" in second.note


@pytest.mark.slow
def test_curve_rounds_interleave_extra_runs_of_the_steady_cells_only() -> None:
    sizes = [200, 400]
    opts = suite.Options(sizes=sizes, workloads=["insert", "steady"], impls=["optimized-batch", "heapq"],
                         caps={}, repeat=1, jit=False, curve_rounds=2)
    order: list[str] = []
    res = suite.run(opts, ["test"], progress=order.append)
    for n in sizes:
        for impl in ("optimized-batch", "heapq"):
            steady, insert = res.cell("steady", n, impl), res.cell("insert", n, impl)
            assert steady is not None and steady.status == "ok"
            assert len(steady.runs_s) == 3 and steady.interleaved == 2
            assert steady.best_s == min(steady.runs_s)
            assert insert is not None and len(insert.runs_s) == 1 and insert.interleaved == 0
    # round-robin: each round visits every size before the next round starts
    rounds = [line for line in order if "interleaved round" in line]
    assert len(rounds) == 2 * len(sizes) * 2
    assert [("n=200" in line) for line in rounds] == [True, True, False, False] * 2
    assert "best of 3 (2 interleaved)" in report.markdown(res)
    assert "2 interleaved rounds over the sizes of steady" in report.markdown(res)
    none = suite.run(dataclasses.replace(opts, workloads=["steady"], curve_rounds=0), ["test"])
    assert all(len(c.runs_s) == 1 and c.interleaved == 0 for c in none.cells)


@pytest.mark.slow
def test_ratios_compare_the_same_row() -> None:
    opts = suite.Options(sizes=[300], workloads=["insert"], impls=["reference", "heapq"], caps={},
                         repeat=1, jit=False)
    res = suite.run(opts, ["test"])
    ref, heap = res.cell("insert", 300, "reference"), res.cell("insert", 300, "heapq")
    assert ref is not None and heap is not None and ref.ops_per_s and heap.ops_per_s
    assert heap.vs_heapq == pytest.approx(1.0) and ref.vs_reference == pytest.approx(1.0)
    assert heap.vs_reference == pytest.approx(heap.ops_per_s / ref.ops_per_s)
    assert ref.vs_heapq == pytest.approx(ref.ops_per_s / heap.ops_per_s)


def test_bytes_per_pending_timer() -> None:
    wl = timer_workload("insert", 5000)
    heap = measure.bytes_per_pending(HeapDriver(), wl, CFG)
    # a heap tuple (64 B) + its expiration and sequence ints + a dict slot: well over 64, under 400
    assert 64 < heap < 400
    batch = measure.bytes_per_pending(DRIVERS["optimized-batch"](), wl, CFG)
    assert 0 < batch < heap


def test_array_bytes_counts_each_buffer_once() -> None:
    class Holder:
        def __init__(self) -> None:
            self.a = np.zeros(100, np.int64)
            self.view = self.a[10:20]
            self.nested = {"b": [np.zeros(10, np.int32)], "again": self.a}
            self.name = "x"

    assert array_bytes(Holder()) == 800 + 40


@pytest.mark.slow
def test_cli_writes_json_markdown_and_plot_with_the_printed_figures(tmp_path, capsys) -> None:
    j, md, png = tmp_path / "b.json", tmp_path / "b.md", tmp_path / "b.png"
    rc = main(["bench", "--sizes", "300,10^3", "--workloads", "insert,fire-jump", "--impl", "reference",
               "--impl", "optimized-batch", "--impl", "heapq", "--impl", "sched", "--repeat", "1", "--no-jit",
               "--json", str(j), "--write", "markdown=" + str(md), "--write", "plot=" + str(png)])
    assert rc == 0
    out = capsys.readouterr().out
    data = json.loads(j.read_text())
    cells = data["cells"]
    assert len(cells) == 2 * 2 * 4
    assert all(c["status"] == "ok" and c["ops_per_s"] > 0 for c in cells)
    text = md.read_text()
    for c in cells:  # every figure of the JSON appears, formatted, in the Markdown and on screen
        row = (f"| {c['workload']} | {report.pow10(c['n'])} | {c['impl']} | {report.si(c['ops_per_s'])} "
               f"| {c['ns_per_op']:.1f} |")
        assert row in text
        assert f"{c['ns_per_op']:.1f}" in out
    assert "nproc" in text and "load average" in text and "numba" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv,needle", [
    (["--sizes", "abc"], "--sizes"),
    (["--sizes", "0"], "--sizes"),
    (["--impl", "nope"], "--impl"),
    (["--workloads", "insert,x"], "--workloads"),
    (["--cap", "heapq"], "--cap"),
    (["--cap", "heapq=lots"], "--cap"),
    (["--rate", "-5"], "rate"),
    (["--pct50", "50", "--pct75", "10"], "percentiles"),
    (["--tick", "0"], "tick"),
    (["--repeat", "0"], "--repeat"),
    (["--budget", "0"], "--budget"),
    (["--json", "/nonexistent-dir/x.json"], "cannot write"),
])
def test_bad_arguments_exit_2_with_one_line(argv: list[str], needle: str, capsys) -> None:
    try:  # refused by the argument parser (SystemExit) or by the command
        rc = main(["bench", "--impl", "heapq", "--sizes", "100", "--no-jit"] + argv)
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err


@pytest.mark.slow
def test_jit_probe_reports_cold_and_warm_times() -> None:
    res = measure.jit_times(timeout_s=300)
    assert "error" not in res, res.get("error")
    for phase in ("cold", "warm"):
        r = res[phase]
        assert r["import_and_first_op_s"] > 0 and r["process_wall_s"] >= r["import_and_first_op_s"]
        assert r["first_batch_s"] > 0


@pytest.mark.parametrize("name", ["insert", "cancel", "fire-steps", "fire-jump", "steady", "purgatory"])
def test_the_untimed_warm_run_calls_every_kernel_the_timed_runs_call(name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel first called inside a timed run is compiled (or loaded from numba's cache) inside
    it: an insert cell at 10^3 once measured 3.2 s that way, when the warm run's batch was
    too small to take the engine's large-batch kernel."""
    from numba.core.registry import CPUDispatcher

    from wheelspec.optimized import purgatory_kernels, timer_kernels
    called: set[str] = set()
    for module in (timer_kernels, purgatory_kernels):
        for attr, fn in list(vars(module).items()):
            if isinstance(fn, CPUDispatcher):
                def recording(*args, _fn=fn, _name=f"{module.__name__}.{attr}"):
                    called.add(_name)
                    return _fn(*args)
                monkeypatch.setattr(module, attr, recording)
    opts = suite.Options(sizes=[2000], workloads=[name], impls=["optimized-batch"], caps={})
    driver = DRIVERS["optimized-batch"]()
    suite._warm(driver, name, opts)
    warmed = set(called)
    called.clear()
    prep = driver.prepare(suite.workload(name, 2000, opts.seed, opts.purgatory), opts.timer)
    if prep.warm is not None:
        prep.warm()
    prep.verify(prep.timed())
    assert called, "the recorder saw no kernel call: it no longer wraps what the engine calls"
    assert called <= warmed, f"called first inside the timed run: {sorted(called - warmed)}"
