"""The application timer (``wheelspec.optimized.WheelTimer``) against the reference, in lockstep.

A Hypothesis state machine draws wheel parameters (tick 1-49, wheel size 2-8, a start time, a
small id capacity so the tables grow, a stage limit of 1-6 so flushes fall in random places), then
drives ``wheelspec.reference.Simulation`` (kafka profile) and a ``WheelTimer`` with the same
operations: ``schedule`` and ``call_later`` (delays due at once, short of a tick, across level
boundaries, huge), ``cancel`` of any handle ever returned (pending, fired, cancelled, stale: its
id recycled by a newer timer), ``advance_to`` / ``pop_due`` by small, wheel-sized and large
steps, explicit flushes, ``len`` and ``next_deadline``.  Every cancel must answer as the
reference's; every advance must deliver the reference's fires since the previous advance (those
inside ``add``, due at once, then those of the advance) in the same order; after a schedule the
handle is pending iff the reference did not fire the task inside ``add``; ``len`` is the
reference's ``size()``; ``next_deadline`` is the reference delay queue's head (or ``now`` when
fires are waiting to be delivered).  Half the runs use debug mode (the engine's public batch calls,
checked kernels and invariants after every call), half the fast flush (the kernels directly).

Other tests: stale handles, callbacks with arguments, a raising callback, ``run_due`` on a given
clock, argument errors, and the thread-safe variant under several threads.
"""

from __future__ import annotations

import random
import sys
import threading
import weakref
from typing import Any

import pytest
from conftest import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule

from wheelspec import reference
from wheelspec.optimized import LockedWheelTimer, PyWheelTimer, TimerCall, WheelTimer, app_stage
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, MAX_TIME_MS, RangeError


def fires_since(sim: reference.Simulation, start: int) -> list[int]:
    return [e.task for e in sim.history.events[start:] if e.kind == "fire"]


class AppLockstep(RuleBasedStateMachine):
    handles = Bundle("handles")
    #: the timer under test: on the C staging core (when built), or its Python twin (below)
    timer_class: type = WheelTimer

    @initialize(tick=st.sampled_from([1, 1, 2, 3, 10, 49]), wheel=st.integers(2, 8), start=st.integers(0, 120),
                capacity=st.integers(1, 4), stage_limit=st.integers(1, 6), debug=st.booleans())
    def setup(self, tick: int, wheel: int, start: int, capacity: int, stage_limit: int, debug: bool) -> None:
        self.tick, self.wheel = tick, wheel
        self.ref = reference.Simulation(tick, wheel, start)
        # debug: the engine's public batch calls and checked kernels; otherwise the fast flush
        self.app = self.timer_class(tick, wheel, start, capacity=capacity, stage_limit=stage_limit, debug=debug)
        self.next_id = 0
        self.waiting: list[int] = []  # reference fires (inside add) the app delivers at the next advance
        self.calls: set[int] = set()  # ids scheduled with call_later
        self.ran: list[int] = []      # callbacks run, in order

    @rule(target=handles, data=st.data(), use_call=st.booleans())
    def schedule(self, data: st.DataObject, use_call: bool) -> tuple[int, int]:
        t, w = self.tick, self.wheel
        delay = data.draw(st.one_of(
            st.integers(-3, 3 * t),
            st.integers(0, t * w * 3),
            st.integers(0, t * w**3 * 2),
            st.builds(lambda k, d: t * w**k + d, st.integers(0, 4), st.integers(-1, 1)),
            st.sampled_from([-MAX_DELAY_MS, MAX_DELAY_MS - 1]),
        ), label="delay")
        rid = self.next_id
        self.next_id += 1
        mark = len(self.ref.history)
        self.ref.add(rid, delay)
        fired_now = fires_since(self.ref, mark)
        if use_call:
            self.calls.add(rid)
            h = self.app.call_later(delay, self.ran.append, rid)
        else:
            h = self.app.schedule(delay, rid)
        self.waiting += fired_now
        assert self.app.is_pending(h) == (rid not in fired_now)
        return h, rid

    @rule(hr=handles)
    def cancel(self, hr: tuple[int, int]) -> None:
        h, rid = hr
        assert self.app.cancel(h) == self.ref.cancel(rid)
        assert not self.app.is_pending(h)

    @rule(step=st.one_of(st.just(0), st.integers(0, 60), st.integers(0, 3000), st.integers(0, 400_000)),
          pop=st.booleans())
    def advance(self, step: int, pop: bool) -> None:
        t = min(self.ref.now + step, MAX_TIME_MS)
        mark = len(self.ref.history)
        self.ref.advance_to(t)
        expected = self.waiting + fires_since(self.ref, mark)
        self.waiting = []
        if pop:
            got = self.app.pop_due(t)
            assert [p.args[0] if isinstance(p, TimerCall) else p for p in got] == expected
        else:
            self.ran.clear()
            got = self.app.advance_to(t)
            assert got == [x for x in expected if x not in self.calls]
            assert self.ran == [x for x in expected if x in self.calls]
        assert self.app.now == t

    @rule()
    def flush(self) -> None:
        self.app.flush()

    @rule()
    def next_deadline(self) -> None:
        got = self.app.next_deadline()
        if self.waiting:
            assert got == self.app.now
        else:
            head = self.ref.timer.delay_queue.peek()
            assert got == (None if head is None else head.get_expiration())

    @rule()
    def same_size(self) -> None:
        # A rule, not an invariant: len flushes, and an invariant would flush after every step,
        # leaving no stage with more than one operation in it.
        assert len(self.app) == self.ref.size()

    def teardown(self) -> None:
        if hasattr(self, "ref"):
            assert len(self.app) == self.ref.size()


AppLockstep.TestCase.settings = settings(max_examples=examples(150, 400), stateful_step_count=60)
test_app_lockstep = pytest.mark.slow(AppLockstep.TestCase)


class AppLockstepPython(AppLockstep):
    timer_class = PyWheelTimer


AppLockstepPython.TestCase.settings = settings(max_examples=examples(100, 300), stateful_step_count=60)
test_app_lockstep_python_core = pytest.mark.slow(AppLockstepPython.TestCase)


@pytest.fixture(params=[WheelTimer, PyWheelTimer], ids=["c-core", "python-core"])
def Timer(request: pytest.FixtureRequest) -> type:
    return request.param  # type: ignore[no-any-return]


@pytest.mark.external("g++")
def test_the_c_core_is_built() -> None:
    """``pip install`` compiles optimized/_apphot.c when a C compiler is there (CI has one): the
    timer must run on it, or the C path is what the other tests here leave untested."""
    assert app_stage.BACKEND == "c" and WheelTimer().backend == "c", \
        "the C extension wheelspec.optimized._apphot is not built: install a C compiler and reinstall"
    assert PyWheelTimer().backend == "python"


def test_stale_handle_does_not_cancel_the_new_timer(Timer: type) -> None:
    t = Timer(capacity=1, stage_limit=1)
    old = t.schedule(5, "old")
    assert t.cancel(old)
    t.flush()  # the id returns to the pool
    new = t.schedule(5, "new")
    assert (new ^ old) & MAX_ID == 0         # the same id, recycled ...
    assert new != old                        # ... under a new handle
    assert not t.cancel(old)
    assert t.is_pending(new) and len(t) == 1
    assert t.advance_to(5) == ["new"]
    assert not t.cancel(new) and not t.cancel(old)


class _Payload:
    """A payload whose finaliser may call back into the timer (``on_free``)."""

    def __init__(self, on_free: Any = None) -> None:
        self.on_free = on_free

    def __del__(self) -> None:
        if self.on_free is not None:
            self.on_free()


def test_a_cancelled_payload_is_released_by_the_flush(Timer: type) -> None:
    """The timer holds a cancelled payload until the flush (the cancel's cache miss moves into
    the flush's prefetched pass), then holds nothing: not after a fire, not after a cancel."""
    t = Timer()
    p, q = _Payload(), _Payload()
    wp, wq = weakref.ref(p), weakref.ref(q)
    hp, _ = t.schedule(5, p), t.schedule(7, q)
    del p, q
    assert t.cancel(hp)
    assert wp() is not None  # still referenced: staged
    t.flush()
    assert wp() is None
    fired = t.advance_to(10)
    assert [x is wq() for x in fired] == [True]
    del fired
    assert wq() is None and len(t) == 0


def test_a_finaliser_that_cancels_during_the_release(Timer: type) -> None:
    """A payload's ``__del__`` runs inside the flush's release and cancels another timer: that
    cancel takes effect and its payload is released by the next flush."""
    t = Timer()
    other = _Payload()
    w_other = weakref.ref(other)
    h_other = t.schedule(50, other)
    del other
    seen: list[bool] = []
    h = t.schedule(5, _Payload(lambda: seen.append(t.cancel(h_other))))
    assert t.cancel(h)
    t.flush()
    assert seen == [True] and not t.is_pending(h_other)
    assert w_other() is not None  # cancelled during the release: waits for the next flush
    assert len(t) == 0            # (len flushes)
    assert w_other() is None
    assert t.advance_to(100) == []


def test_callbacks_run_with_their_arguments_in_order(Timer: type) -> None:
    t = Timer()
    log: list[tuple] = []
    t.call_later(3, lambda *a: log.append(a), "b", 2)
    t.call_later(1, lambda *a: log.append(a), "a", 1)
    h = t.call_later(2, log.append, ("never",))
    t.schedule(2, "payload")
    assert t.cancel(h)
    assert t.advance_to(10) == ["payload"]
    assert log == [("a", 1), ("b", 2)]


def test_a_raising_callback_leaves_the_rest_due(Timer: type) -> None:
    t = Timer()
    log: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    t.call_later(1, log.append, "first")
    t.call_later(2, boom)
    t.call_later(3, log.append, "third")
    t.schedule(4, "payload")
    with pytest.raises(RuntimeError):
        t.advance_to(10)
    assert log == ["first"]
    assert t.next_deadline() == 10  # still due
    assert t.advance_to(10) == ["payload"]
    assert log == ["first", "third"]


def test_run_due_follows_the_given_clock(Timer: type) -> None:
    now = [100.0]
    t = Timer(start_ms=50, clock=lambda: now[0])
    t.schedule(10, "a")
    t.schedule(30, "b")
    assert t.run_due() == [] and t.now == 50
    now[0] += 0.0105  # 10.5 ms later
    assert t.run_due() == ["a"] and t.now == 60
    assert t.advance_to(200) == ["b"]  # a virtual advance past the system clock ...
    t.schedule(5, "c")
    assert t.run_due() == [] and t.now == 200  # ... which run_due never takes back
    now[0] += 0.2
    assert t.run_due() == ["c"] and t.now == 260


def test_due_at_once_is_not_pending_and_comes_first(Timer: type) -> None:
    t = Timer(tick_ms=10, start_ms=35)
    h1 = t.schedule(1, "later")      # 36 < 30 + 10: due at once with tick 10
    h2 = t.schedule(0, "now")
    h3 = t.schedule(6, "bucket 40")  # 41: the next tick's bucket
    assert not t.is_pending(h1) and not t.is_pending(h2) and t.is_pending(h3)
    assert not t.cancel(h1) and len(t) == 1
    assert t.advance_to(35) == ["later", "now"]
    assert t.advance_to(40) == ["bucket 40"]


@pytest.mark.parametrize("bad, exc", [(1.0, TypeError), (True, TypeError), ("5", TypeError),
                                      (MAX_DELAY_MS + 1, RangeError), (-MAX_DELAY_MS - 1, RangeError)])
def test_bad_delays_are_refused(Timer: type, bad: object, exc: type) -> None:
    t = Timer()
    with pytest.raises(exc, match="delay_ms"):
        t.schedule(bad, "x")  # type: ignore[arg-type]
    assert len(t) == 0


def test_bad_calls_are_refused(Timer: type) -> None:
    t = Timer(start_ms=10)
    with pytest.raises(ValueError, match="before the timer's clock"):
        t.advance_to(9)
    with pytest.raises(TypeError):
        t.cancel("handle")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        t.call_later(1, "not callable")  # type: ignore[arg-type]
    assert not t.cancel(0) and not t.cancel(-1) and not t.cancel(True)


def test_threads_lose_and_double_fire_nothing() -> None:
    """Four threads schedule and cancel on one LockedWheelTimer while two others advance it (one
    by advance_to, one by run_due on a shared clock); every timer whose cancel returned True never
    runs, every other runs exactly once."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        clock = [0.0]
        t = LockedWheelTimer(capacity=4, stage_limit=16, clock=lambda: clock[0])
        ran: list[tuple[int, int]] = []
        cancelled: set[tuple[int, int]] = set()
        stop = threading.Event()

        def worker(w: int) -> None:
            rnd = random.Random(w)
            mine: list[tuple[int, tuple[int, int]]] = []
            for k in range(400):
                key = (w, k)
                mine.append((t.call_later(rnd.randint(0, 40), ran.append, key), key))
                if rnd.random() < 0.4:
                    h, hk = mine[rnd.randrange(len(mine))]
                    if t.cancel(h):
                        cancelled.add(hk)

        def advancer() -> None:
            while not stop.is_set():
                try:
                    t.advance_to(t.now + 1)
                except ValueError:  # run_due moved the clock past the reading: read it again
                    pass

        def runner() -> None:
            while not stop.is_set():
                clock[0] += 0.002
                t.run_due()

        workers = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        others = [threading.Thread(target=advancer), threading.Thread(target=runner)]
        for th in workers + others:
            th.start()
        for th in workers:
            th.join()
        stop.set()
        for th in others:
            th.join()
        t.advance_to(t.now + 100)
    finally:
        sys.setswitchinterval(old)
    assert len(ran) == len(set(ran)), "a timer ran twice"
    assert not cancelled & set(ran), "a cancelled timer ran"
    assert set(ran) | cancelled == {(w, k) for w in range(4) for k in range(400)}, "a timer was lost"
    assert len(t) == 0


@pytest.mark.parametrize("name", ["insert", "cancel", "fire-steps", "fire-jump", "steady"])
def test_the_bench_driver_runs_and_verifies(name: str) -> None:
    from wheelspec.benchmarks.drivers import TimerConfig
    from wheelspec.benchmarks.registry import DRIVERS
    from wheelspec.benchmarks.workloads import timer_workload

    wl = timer_workload(name, 300, warm_windows=1)
    prep = DRIVERS["app-timer"]().prepare(wl, TimerConfig())
    if prep.warm is not None:
        prep.warm()
    prep.verify(prep.timed())


def test_the_bench_driver_refuses_a_wrong_run() -> None:
    from wheelspec.benchmarks.drivers import TimerConfig, VerificationError
    from wheelspec.benchmarks.registry import DRIVERS
    from wheelspec.benchmarks.workloads import timer_workload

    prep = DRIVERS["app-timer"]().prepare(timer_workload("cancel", 300), TimerConfig())
    result = prep.timed()
    prep.state.schedule(5, "left pending")
    with pytest.raises(VerificationError, match="after cancelling all"):
        prep.verify(result)
    prep = DRIVERS["app-timer"]().prepare(timer_workload("fire-jump", 300), TimerConfig())
    returned = prep.timed()
    returned[0].pop()  # a fire lost
    with pytest.raises(VerificationError, match="fired 299 tasks"):
        prep.verify(returned)
