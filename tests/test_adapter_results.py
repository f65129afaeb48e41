"""Every value the runner judges comes from the implementation under test, never from an
adapter's bookkeeping; what an adapter cannot observe is declared and reported "not judged".

Each test plants a lie in the *library* an adapter wraps (a monkeypatched method, or a user's
timer written on the library base) and checks the campaign or the corpus catches it, or that the
property is reported "not judged" where the adapter declares it unobservable."""

from __future__ import annotations

import asyncio
import heapq
import json
import sched
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from wheelspec.conformance.adapters.asyncio_loop import adapter as asyncio_adapter
from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.adapters.stdlib_sched import adapter as sched_adapter
from wheelspec.conformance.adapters.twisted_clock import adapter as twisted_adapter
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import load_corpus, run_scenario
from wheelspec.conformance.check.judge import judge, owned_steps
from wheelspec.conformance.check.report import ImplReport, write_json, write_junit
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.matrix.rows import not_judged_columns
from wheelspec.spec import ops
from wheelspec.spec.errors import ProtocolError

FACTORIES = {"sched": sched_adapter, "twisted": twisted_adapter, "asyncio": asyncio_adapter}
SEEDS = range(120)
# A lying size fails seeds 1, 2 and 4 already; each failing seed pays the Z3 confirmation of its
# failures (about 0.3 s), so a planted lie is judged on a short range.
LIE_SEEDS = range(12)


def _campaign_props(adapter, seeds: range = SEEDS) -> set[str]:
    caps = adapter.hello().capabilities
    try:
        outs = run_seed_range(adapter, caps, "timer", seeds, shrink=False)
    finally:
        adapter.close()
    # "ranges" is the range contract, judged on its own: these libraries accept any delay
    return {f.prop for o in outs for f in o.failures} - {"ranges"}


def _scenario(name: str):
    return next(s for s in load_corpus() if s.name == name)


# ------------------------------------------------------------------ planted lies ------------------
def _lie_cancel(lib: str, mp: pytest.MonkeyPatch) -> None:
    """The library's cancel answers "it was pending" for a call that already ran."""
    if lib == "sched":
        real = sched.scheduler.cancel

        def cancel(self, event):  # never raises ValueError: "cancelled" even after it ran
            try:
                real(self, event)
            except ValueError:
                pass

        mp.setattr(sched.scheduler, "cancel", cancel)
    elif lib == "twisted":
        from twisted.internet import base

        real_tw = base.DelayedCall.cancel

        def cancel_tw(self):  # never raises AlreadyCalled
            if not self.called:
                real_tw(self)

        mp.setattr(base.DelayedCall, "cancel", cancel_tw)
    else:
        real_run = asyncio.TimerHandle._run

        def run(self):  # the handle still claims to be in the loop's heap after it ran
            real_run(self)
            self._scheduled = True

        mp.setattr(asyncio.TimerHandle, "_run", run)


def _lie_size(lib: str, mp: pytest.MonkeyPatch) -> None:
    """The library's count of pending calls is one too many."""
    if lib == "sched":
        real = sched.scheduler.queue
        mp.setattr(sched.scheduler, "queue", property(lambda self: real.fget(self) + [None]))
    elif lib == "twisted":
        from twisted.internet import task

        real_tw = task.Clock.getDelayedCalls
        mp.setattr(task.Clock, "getDelayedCalls", lambda self: list(real_tw(self)) + [None])
    else:  # asyncio: cancelled handles still in the heap count as live
        mp.setattr(asyncio.TimerHandle, "cancelled", lambda self: False)


@pytest.mark.parametrize("lib", FACTORIES)
def test_a_library_whose_cancel_lies_after_firing_is_caught(lib, monkeypatch):
    _lie_cancel(lib, monkeypatch)
    assert "cancel-result" in _campaign_props(FACTORIES[lib]())
    a = FACTORIES[lib]()
    try:
        r = run_scenario(a, a.hello().capabilities, _scenario("timer/cancel-before-at-after-firing"))
    finally:
        a.close()
    assert r.status == "fail" and "cancel-result" in {f.prop for f in r.failures}, r.failures


@pytest.mark.slow
@pytest.mark.parametrize("lib", FACTORIES)
def test_a_library_whose_size_lies_is_caught(lib, monkeypatch):
    _lie_size(lib, monkeypatch)
    assert "size" in _campaign_props(FACTORIES[lib](), LIE_SEEDS)


@pytest.mark.parametrize("lib", FACTORIES)
def test_the_honest_libraries_pass_the_same_campaign(lib):
    assert _campaign_props(FACTORIES[lib]()) == set()


# ------------------------------------------------------------------ a user's timer on the base ----
class ToyTimer:
    """A user's heap timer with its own clock: ``cancel`` returns whether the entry was pending,
    unless ``lie`` makes it answer true after the task ran (the bug a bookkeeping base hid)."""

    def __init__(self, now: int, lie: bool = False) -> None:
        self.now, self.lie = now, lie
        self.heap: list[tuple[int, int, list]] = []
        self.seq = 0

    def schedule(self, delay: int, fn) -> list:
        entry = [self.now + delay, fn, "pending"]
        heapq.heappush(self.heap, (entry[0], self.seq, entry))
        self.seq += 1
        return entry

    def cancel(self, entry: list) -> bool:
        was = entry[2] == "pending"
        if was:
            entry[2] = "cancelled"
        return was or (self.lie and entry[2] == "ran")

    def advance(self, t: int) -> None:
        self.now = t
        while self.heap and self.heap[0][0] <= t:
            _, _, entry = heapq.heappop(self.heap)
            if entry[2] == "pending":
                entry[2] = "ran"
                entry[1]()

    def size(self) -> int:
        return sum(e[2] == "pending" for _, _, e in self.heap)


class ToyAdapter(LibraryTimerAdapter):
    name = "toy"
    lie = False

    def start_library(self, start_ms):
        self.t = ToyTimer(start_ms, self.lie)

    def schedule(self, task, delay, callback):
        return self.t.schedule(delay, callback)

    def deadline_of(self, handle):
        return handle[0]

    def unschedule(self, handle):
        return self.t.cancel(handle)

    def advance_clock(self, time):
        self.t.advance(time)

    def read_clock(self):
        return self.t.now

    def count_pending(self):
        return self.t.size()


class LyingToy(ToyAdapter):
    lie = True


class CountlessToy(ToyAdapter):
    """A timer with no count of pending calls: the base declares ``size`` unobservable."""

    count_pending = LibraryTimerAdapter.count_pending


class WrongSizeDeclared(ToyAdapter):
    """Counts wrongly but declares size unobservable: not judged, never a failure or a pass."""

    unobservable = ("size",)

    def count_pending(self):
        return self.t.size() + 1


class OldStyleUnschedule(ToyAdapter):
    """``unschedule`` that returns nothing (the library's answer dropped)."""

    def unschedule(self, handle):
        self.t.cancel(handle)


def test_a_user_timer_whose_cancel_lies_is_caught_and_the_honest_one_passes():
    assert _campaign_props(ToyAdapter()) == set()
    assert "cancel-result" in _campaign_props(LyingToy())


def test_a_timer_without_a_count_declares_size_not_judged(tmp_path):
    a = CountlessToy()
    caps = a.hello().capabilities
    assert "size" in caps.unobservable and Capabilities.from_dict(caps.to_dict()) == caps
    a.reset(Config())
    assert a.request(ops.Size()).error[0] == "unsupported"
    assert _campaign_props(CountlessToy()) == set()  # size requests are not judged, nothing refused
    r = run_scenario(a, caps, _scenario("protocol/refusals-timer"))
    assert r.status == "pass", r.failures
    # the reports say "not judged": JSON, JUnit (skipped) and the matrix's columns
    rep = ImplReport("toy", "toy", caps.to_dict(), [r])
    write_json(tmp_path / "r.json", [rep], {"command": "check"})
    assert "size" in json.loads((tmp_path / "r.json").read_text())["implementations"][0]["not_judged"]
    write_junit(tmp_path / "r.xml", [rep])
    skipped = {tc.get("name") for tc in ET.parse(tmp_path / "r.xml").iter("testcase")
               if tc.find("skipped") is not None and tc.get("classname", "").endswith("not-judged")}
    assert "size" in skipped
    assert not_judged_columns(("cancel-result",)) == {"cancel respected": ["cancel-result"]}


@pytest.mark.slow
def test_a_declared_unobservable_size_is_neither_failed_nor_counted():
    a = WrongSizeDeclared()
    assert _campaign_props(a) == set()
    b = ToyAdapter()
    b.__class__ = type("WrongSizeUndeclared", (ToyAdapter,), {"count_pending": WrongSizeDeclared.count_pending})
    assert "size" in _campaign_props(b, LIE_SEEDS)


def test_unschedule_must_return_the_librarys_answer():
    a = OldStyleUnschedule()
    a.reset(Config())
    a.request(ops.AddTask(1, 5))
    r = a.request(ops.CancelTask(1))
    assert r.error is not None and r.error[0] == "internal" and "unschedule" in r.error[1]
    a.close()


def test_an_unknown_unobservable_name_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="unobservable"):
        Capabilities.from_dict({"unobservable": ["no-such-property"]})


def test_the_adapters_own_refusals_are_not_judged():
    """Task ids and the clock are the library adapter's: their refusals are not judged, either way."""
    sc = _scenario("protocol/refusals-timer")

    class Accepting(ToyAdapter):  # refuses nothing about ids: a judged refusal would fail it
        def request(self, op):
            if isinstance(op, ops.CancelTask) and op.task not in self._entries:
                from wheelspec.conformance.adapters.protocol import Response
                return Response(self.read_clock(), [], False)
            return super().request(op)

    for a in (ToyAdapter(), Accepting()):
        caps = a.hello().capabilities
        run = run_ops(a, sc.config, sc.ops)
        assert owned_steps(run, caps) == {0, 2, 3, 5}
        assert judge(run, caps, expects=sc.expects) == []
        a.close()
    # an engine that owns its ids and clock is judged on them
    from wheelspec.conformance.adapters import reference_adapter
    ref = reference_adapter()
    run = run_ops(ref, sc.config, sc.ops)
    assert owned_steps(run, ref.hello().capabilities) == frozenset()


# ------------------------------------------------------------------ through the protocol ---------
def lying_sched():
    """Factory for the served test: stdlib sched whose cancel never raises (the library lies)."""
    from wheelspec.conformance.adapters.stdlib_sched import SchedAdapter

    class _Lying(SchedAdapter):
        def start_library(self, start_ms):
            super().start_library(start_ms)
            real = self._s.cancel

            def cancel(event):
                try:
                    real(event)
                except ValueError:
                    pass

            self._s.cancel = cancel

    return _Lying()


def test_served_over_the_protocol_the_lie_is_caught_and_the_declaration_crosses():
    from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter

    here = Path(__file__).parent
    argv = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(here)!r}); "
            "from wheelspec.conformance.adapters.serve import main; "
            "raise SystemExit(main(['test_adapter_results:lying_sched']))"]
    a = SubprocessAdapter(argv)
    try:
        caps = a.hello().capabilities
        assert set(caps.unobservable) == {"task-ids", "clock"}
        r = run_scenario(a, caps, _scenario("timer/cancel-before-at-after-firing"))
    finally:
        a.close()
    assert "cancel-result" in {f.prop for f in r.failures}, r.failures


def test_serve_module_runs_a_library_adapter():
    """``python -m ...serve module:factory`` answers hello with the declaration (a subprocess)."""
    req = '{"id":0,"type":"hello","protocol":1}\n{"id":1,"type":"bye"}\n'
    out = subprocess.run([sys.executable, "-m", "wheelspec.conformance.adapters.serve",
                          "wheelspec.conformance.adapters.stdlib_sched:adapter"], input=req, text=True,
                         capture_output=True, timeout=60, check=True).stdout
    hello = json.loads(out.splitlines()[0])
    assert hello["capabilities"]["unobservable"] == ["task-ids", "clock"]


# ------------------------------------------------------------------ real time ---------------------
def _rt_cancel_after_fire():
    """Task 1 fires at 5 ms and is cancelled at 300 ms, task 2 (1 s) at 302 ms.  The 295 ms between
    task 1's deadline and its cancel exceed the judge's slack for a loaded machine (250 ms): a
    timer whose thread is delayed that long is late by the judge's own measure, so the situation
    under test (a cancel after the fire) holds on a busy machine as on an idle one."""
    from wheelspec.conformance import realtime as rt

    return rt.RtSchedule("cancel-after-fire", [{"at": 0, "kind": "add", "task": 1, "delay": 5},
                                               {"at": 0, "kind": "add", "task": 2, "delay": 1000},
                                               {"at": 300, "kind": "cancel", "task": 1},
                                               {"at": 301, "kind": "size"},
                                               {"at": 302, "kind": "cancel", "task": 2}], 360)


def test_live_asyncio_cancel_and_size_come_from_asyncio(monkeypatch):
    from wheelspec.conformance import realtime as rt

    s = _rt_cancel_after_fire()
    a = rt.resolve("asyncio-live")
    out = a.run(s)
    assert out.results[2] is False and out.results[3] == 1 and out.results[4] is True
    assert rt.judge_outcome(s, out).ok
    _lie_cancel("asyncio", monkeypatch)
    out = a.run(s)
    assert out.results[2] is True
    assert "cancel" in {f.prop for f in rt.judge_outcome(s, out).failures}


#: a stand-in for Netty's HashedWheelTimer whose Timeout.cancel() answers true after the task ran
#: and whose pendingTimeouts() counts one too many; put before Netty's jar on the class path, the
#: unchanged NettyAdapter.java runs on it (the library itself lies)
LYING_NETTY = r"""
package io.netty.util;
import java.util.*;
import java.util.concurrent.*;
public class HashedWheelTimer implements Timer {
    private final ScheduledThreadPoolExecutor ex;
    private final Set<Timeout> pending = ConcurrentHashMap.newKeySet();
    public HashedWheelTimer(long tick, TimeUnit unit, int wheel) {
        this(Executors.defaultThreadFactory(), tick, unit, wheel);
    }
    public HashedWheelTimer(ThreadFactory tf, long tick, TimeUnit unit, int wheel) {
        ex = new ScheduledThreadPoolExecutor(1, tf);
    }
    public void start() { }
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        final Timer self = this;
        final List<ScheduledFuture<?>> f = new ArrayList<>();
        Timeout t = new Timeout() {
            public Timer timer() { return self; }
            public TimerTask task() { return task; }
            public boolean isExpired() { return f.get(0).isDone() && !f.get(0).isCancelled(); }
            public boolean isCancelled() { return f.get(0).isCancelled(); }
            public boolean cancel() { f.get(0).cancel(false); pending.remove(this); return true; }
        };
        pending.add(t);
        f.add(ex.schedule(() -> { pending.remove(t); try { task.run(t); } catch (Exception e) { } },
                          Math.max(0, Math.min(delay, 1L << 40)), unit));
        return t;
    }
    public Set<Timeout> stop() { ex.shutdownNow(); return new HashSet<>(pending); }
    public long pendingTimeouts() { return pending.size() + 1; }
}
"""


@pytest.mark.slow
@pytest.mark.external("java")
def test_netty_adapter_reports_nettys_answers(tmp_path):
    import shutil

    from wheelspec.conformance import realtime as rt

    jar = Path("/usr/share/java/netty-common.jar")
    if shutil.which("javac") is None or not jar.exists():
        pytest.fail("Java and Debian's libnetty-java are required for the Netty adapter test "
                    "(bash .ci/system-deps installs Netty: apt-get install -y libnetty-java)")
    src = tmp_path / "io" / "netty" / "util" / "HashedWheelTimer.java"
    src.parent.mkdir(parents=True)
    src.write_text(LYING_NETTY)
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-cp", str(jar), "-d", str(classes), str(src)], check=True, timeout=120)
    argv = rt.netty_command()
    s = _rt_cancel_after_fire()
    honest = rt.SubprocessRealtimeAdapter(argv)
    try:
        out = honest.run(s)
    finally:
        honest.close()
    assert out.results[2:] == [False, 1, True] and rt.judge_outcome(s, out).ok
    cp = argv.index("-cp") + 1
    lying = rt.SubprocessRealtimeAdapter(argv[:cp] + [f"{classes}:{argv[cp]}"] + argv[cp + 1:])
    try:
        out = lying.run(s)
    finally:
        lying.close()
    assert out.results[2:] == [True, 2, True]  # Netty's (lying) answers, not the adapter's
    assert "cancel" in {f.prop for f in rt.judge_outcome(s, out).failures}
