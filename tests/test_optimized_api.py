"""The optimized engine's edges: bad input refused before compiled code (with the offending position
named, and nothing changed), the debug invariants catching corrupted state, the lock facade
linearizing concurrent calls, and a package import that does not load numba."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from wheelspec import reference
from wheelspec.optimized import ArrayPurgatory, ArrayTimer, LockedSimulation, Simulation, check_timer
from wheelspec.optimized import layout as L
from wheelspec.spec import events as ev
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_TIME_MS, MIN_DELAY_MS, RangeError


# -- bad input -------------------------------------------------------------------------------------
def loaded_timer() -> ArrayTimer:
    t = ArrayTimer(1, 8, 0, capacity=10)
    t.add_many(np.arange(5), np.array([3, 30, 300, 3000, 30000]))
    return t


def snapshot(t: ArrayTimer) -> list[np.ndarray]:
    return [a.copy() for a in (t.S, t.lv, t.bk, t.heap, t.tk, t.pid, t.pexp, t.cnext)]


@pytest.mark.parametrize("call, error, words", [
    (lambda t: t.add_many([1, 2, 10], [1, 1, 1]), RangeError, "ids[2]=10"),
    (lambda t: t.add_many([1, -1], [1, 1]), RangeError, "ids[1]=-1"),
    (lambda t: t.add_many([1, 2], [1, MAX_DELAY_MS + 1]), RangeError, f"delays[1]={MAX_DELAY_MS + 1}"),
    (lambda t: t.add_many([1, 2], [-MAX_DELAY_MS - 1, 1]), RangeError, "delays[0]"),
    (lambda t: t.add_many([1, 2, 3], [1, 1]), ValueError, "differ in length"),
    (lambda t: t.add_many([1.0, 2.0], [1, 1]), TypeError, "ids must hold integers"),
    (lambda t: t.add_many([[1, 2]], [[1, 1]]), ValueError, "1-d"),
    (lambda t: t.add_many(np.array([2**64 - 1], np.uint64), [1]), RangeError, "does not fit int64"),
    (lambda t: t.cancel_many([0, 11]), RangeError, "ids[1]=11"),
    (lambda t: t.add(10, 1), RangeError, "task id=10"),
    (lambda t: t.add(1, True), TypeError, "delay_ms"),
    (lambda t: t.cancel(-1), RangeError, "task id=-1"),
    (lambda t: t.advance_to(MAX_TIME_MS + 1), RangeError, "time="),
    (lambda t: (t.advance_to(50), t.advance_to(49)), ValueError, "never goes back"),
])
def test_timer_refuses_bad_input_and_changes_nothing(call, error, words) -> None:
    t = loaded_timer()
    t.advance_to(10)
    before = snapshot(t)
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        call(t)
    after = snapshot(t)
    if words != "never goes back":  # that case advanced legitimately first
        assert all(np.array_equal(a, b) for a, b in zip(before, after))
    check_timer(t)


I64 = np.iinfo(np.int64)


@pytest.mark.parametrize("value", [I64.min, I64.min + 5, -MAX_DELAY_MS - 1, -MAX_DELAY_MS, -1, 0, 1,
                                   MAX_DELAY_MS, MAX_DELAY_MS + 1, I64.max - 5, I64.max])
def test_range_checks_are_exact_at_the_int64_extremes(value: int) -> None:
    """The kernels' range checks test one unsigned difference per element (branch-free, then an
    exact pass): that must accept exactly the documented range, also where the difference
    wraps around int64."""
    from wheelspec.optimized import timer_kernels as K

    inside = MIN_DELAY_MS <= value <= MAX_DELAY_MS
    delays = np.array([5, value, 7], np.int64)
    assert K.validate_adds(np.arange(3), delays, 3, MIN_DELAY_MS, MAX_DELAY_MS) == (-1 if inside else 4)
    assert K.first_outside(delays, MIN_DELAY_MS, MAX_DELAY_MS) == (-1 if inside else 1)
    id_ok = 0 <= value < 10
    assert K.validate_adds(np.array([0, value], np.int64), np.ones(2, np.int64), 10, MIN_DELAY_MS,
                           MAX_DELAY_MS) == (-1 if id_ok else 1)


def test_constructor_ranges() -> None:
    with pytest.raises(RangeError, match="tick_ms"):
        ArrayTimer(0, 8)
    with pytest.raises(RangeError, match="wheel_size"):
        ArrayTimer(1, 1)
    with pytest.raises(RangeError, match="capacity"):
        ArrayTimer(1, 8, capacity=0)
    with pytest.raises(RangeError, match="purge_interval"):
        ArrayPurgatory(purge_interval=-1)


def test_purgatory_refuses_bad_input() -> None:
    p = ArrayPurgatory(1, 8, 0, 10, capacity=4)
    k = [p.key_id("a"), p.key_id("b")]
    p.watch_many([0], [10], [[k[0]]])
    with pytest.raises(ValueError, match="watched already"):
        p.watch_many([0], [10], [[k[0]]])
    with pytest.raises(ValueError, match="same operation id twice"):
        p.watch_many([1, 1], [10, 10], [[k[0]], [k[1]]])
    with pytest.raises(RangeError, match="key_ids"):
        p.watch_many([1], [10], [[5]])
    with pytest.raises(ValueError, match="empty"):
        p.watch_many([1], [10], [[]])
    with pytest.raises(ValueError, match="differ in length"):
        p.watch_many([1, 2], [10], [[k[0]], [k[0]]])
    with pytest.raises(RangeError, match="delays"):
        p.watch_many([1], [MAX_DELAY_MS + 1], [[k[0]]])
    with pytest.raises(KeyError, match="unknown op id 3"):
        p.force_complete_many([3])
    with pytest.raises(RangeError, match="key_ids"):
        p.check_many([2])
    with pytest.raises(RangeError, match="key id"):
        p.cancel_for_key(7)
    assert p.watched() == 1 and p.num_delayed() == 1  # nothing above changed anything


@pytest.mark.parametrize("call", [
    lambda s: s.add(-1, 5), lambda s: s.add(2**31, 5), lambda s: s.add(1, MAX_DELAY_MS + 1),
    lambda s: s.add(1, 1.5), lambda s: s.cancel(-1), lambda s: s.advance_to(-1),
    lambda s: s.watch(1, 5, []), lambda s: s.watch(1, 5, [1.5]), lambda s: s.watch(1, 5, "ab"),
    lambda s: s.watch(-1, 5, ["a"]), lambda s: s.watch(1, MAX_DELAY_MS + 1, ["a"]),
    lambda s: (s.watch(1, 5, ["a"]), s.watch(1, 5, ["a"])), lambda s: s.force_complete(42),
    lambda s: s.set_completable(42), lambda s: s.check_and_complete(True),
])
def test_simulation_raises_what_the_reference_raises(call) -> None:
    kinds = []
    for sim in (reference.Simulation(tick_ms=2, wheel_size=4), Simulation(tick_ms=2, wheel_size=4)):
        with pytest.raises(Exception) as info:
            call(sim)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]


def test_profiles() -> None:
    assert Simulation(profile="strict-gt").profile == "strict-gt"  # MockTimer: optimized.mock_timer
    for name in ("strict", "bogus"):  # strict is no Kafka class: neither engine models it
        with pytest.raises(ValueError, match="profile"):
            Simulation(profile=name)


# -- debug invariants ------------------------------------------------------------------------------
def busy_timer() -> ArrayTimer:
    t = ArrayTimer(1, 4, 0, capacity=200, debug=True)
    rng = np.random.default_rng(7)
    t.add_many(np.arange(200), rng.integers(1, 500, 200))
    t.cancel_many(np.arange(0, 200, 7))
    t.advance_to(20)
    return t


def _first_live_slot(t: ArrayTimer) -> int:
    """The first slot holding a pending task (a cancelled task's slot keeps its id until the
    flush, so a slot holding an id is not enough)."""
    return next(s for s in np.flatnonzero(t.pid >= 0).tolist() if t.is_scheduled(int(t.pid[s])))


def _flip_bit(t: ArrayTimer, task: int) -> None:
    t.live[task >> 6] ^= np.uint64(1) << np.uint64(task & 63)


def _stale_copy(t: ArrayTimer) -> None:
    """A pending task's id in a second slot, as an older entry that was not tombstoned."""
    live = [s for s in np.flatnonzero(t.pid >= 0).tolist() if t.is_scheduled(int(t.pid[s]))]
    t.pid[live[1]] = t.pid[live[0]]


CORRUPTIONS = {
    "size counter": lambda t: t.S.__setitem__(L.COUNT, t.S[L.COUNT] + 1),
    "bucket window": lambda t: t.bk.__setitem__((int(t.heap[0]), L.B_EXP), t.bk[int(t.heap[0]), L.B_EXP] + 1),
    "heap order": lambda t: t.heap.__setitem__(slice(0, 2), t.heap[1::-1].copy()),
    "bucket queued twice": lambda t: (t.heap.__setitem__(int(t.S[L.HEAPN]), t.heap[0]),
                                      t.S.__setitem__(L.HEAPN, t.S[L.HEAPN] + 1)),
    "live slot dropped": lambda t: t.pid.__setitem__(_first_live_slot(t), -1),
    "task location": lambda t: t.tk.__setitem__(int(t.pid[_first_live_slot(t)]), -1),
    "liveness bit cleared": lambda t: _flip_bit(t, int(t.pid[_first_live_slot(t)])),
    "liveness bit of an unscheduled task": lambda t: _flip_bit(t, next(
        x for x in range(t.capacity) if not t.is_scheduled(x))),
    "older entry not tombstoned": _stale_copy,
    "slot expiration": lambda t: t.pexp.__setitem__(_first_live_slot(t), 10**9),
    "level clock": lambda t: t.lv.__setitem__((1, L.LV_CUR), t.lv[1, L.LV_CUR] + 1),
    "free list": lambda t: t.S.__setitem__(L.NFREE, t.S[L.NFREE] - 1),
}


@pytest.mark.slow
def test_debug_mode_passes_on_a_busy_timer() -> None:
    check_timer(busy_timer())


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_debug_invariants_catch_corruption(name: str) -> None:
    t = busy_timer()
    CORRUPTIONS[name](t)
    with pytest.raises(AssertionError, match="invariant broken"):
        check_timer(t)


def test_debug_mode_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHEELSPEC_DEBUG", "1")
    assert ArrayTimer().debug and ArrayPurgatory().debug
    monkeypatch.setenv("WHEELSPEC_DEBUG", "0")
    assert not ArrayTimer().debug


def test_debug_mode_checks_after_each_call() -> None:
    t = busy_timer()
    t.S[L.COUNT] += 1  # corrupt, then any call must notice
    with pytest.raises(AssertionError, match="invariant broken"):
        t.advance_to(21)


# -- growth ------------------------------------------------------------------------------------------
def test_reserve_pending_makes_room_so_adds_do_not_grow_the_pool() -> None:
    t = ArrayTimer(1, 20, 0, capacity=16, debug=True)
    t.reserve(50_000, pending=50_000)
    pool = t.pid
    t.add_many(np.arange(50_000), np.arange(50_000) % 30_000 + 1)
    assert t.pid is pool, "the chunk pool grew although reserve(pending=...) made room"
    assert t.size() == 50_000 and t.capacity >= 50_000
    with pytest.raises(RangeError, match="pending"):
        t.reserve(10, pending=-1)

def test_locations_are_int32_and_the_pool_stops_at_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tk`` holds slot numbers as int32 (4 bytes per timer): the pool never numbers a slot beyond
    what int32 holds, and says so instead of wrapping a location to a negative slot."""
    t = ArrayTimer(1, 20, 0, capacity=16)
    assert t.tk.dtype == np.int32 and L.MAX_SLOTS <= 2**31 - 1
    # With the limit brought down to the pool's size, growing once more is refused.
    monkeypatch.setattr(L, "MAX_CHUNKS", t.cnext.shape[0])
    with pytest.raises(RangeError, match="int32 locations"):
        L.grow_chunks(t.S, t.pid, t.pexp, t.cnext, 1)
    # Room up to the limit is still given.
    monkeypatch.setattr(L, "MAX_CHUNKS", t.cnext.shape[0] + 1)
    pid, _, cnext = L.grow_chunks(t.S, t.pid, t.pexp, t.cnext, 1)
    assert cnext.shape[0] == L.MAX_CHUNKS and pid.shape[0] == L.MAX_CHUNKS * L.CHUNK



def test_growth_of_pool_output_and_scratch_keeps_the_reference_order() -> None:
    """Thousands of entries in one bucket and one advance: every buffer must grow mid-kernel and
    resume, and the result must still be the reference's."""
    ref = reference.Simulation(tick_ms=1, wheel_size=4)
    t = ArrayTimer(1, 4, 0, capacity=16, debug=False)
    t.reserve(5000)
    ids = np.arange(5000)
    delays = (ids * 7919) % 97 + 3
    t.add_many(ids, delays)
    for i, d in zip(ids.tolist(), delays.tolist()):
        ref.add(i, d)
    fired, exps = t.advance_to(200)
    ref.advance_to(200)
    want = [(e.task, e.exp) for e in ref.history if isinstance(e, ev.Fire)]
    assert list(zip(fired.tolist(), exps.tolist())) == want
    check_timer(t)


# -- thread-safe facade ----------------------------------------------------------------------------
def test_locked_simulation_is_linearized_by_its_lock() -> None:
    """Four threads add, cancel and advance at once; the history (recorded under the lock) must be
    exactly what the reference produces when it replays the requests in that history's order."""
    sim = LockedSimulation(tick_ms=2, wheel_size=4)
    barrier = threading.Barrier(4)

    def worker(w: int) -> None:
        rng = np.random.default_rng(w)
        barrier.wait()
        for _ in range(300):
            task = w * 1000 + int(rng.integers(0, 20))
            r = rng.random()
            if r < 0.6:
                sim.add(task, int(rng.integers(-2, 200)))
            elif r < 0.8:
                try:
                    sim.cancel(task)
                except KeyError:
                    pass
            else:
                with sim.lock:  # read the clock and advance atomically
                    now = sim._inner.now
                    sim._inner.advance_to(now + int(rng.integers(0, 30)))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ref = reference.Simulation(tick_ms=2, wheel_size=4)
    for e in sim.history:
        if isinstance(e, ev.Add):
            ref.add(e.task, e.delay)
        elif isinstance(e, ev.Cancel):
            ref.cancel(e.task)
        elif isinstance(e, ev.Advance):
            ref.advance_to(e.now)
    assert ref.history.events == sim.history.events
    assert sum(isinstance(e, ev.Fire) for e in sim.history) > 100


# -- import cost -------------------------------------------------------------------------------------
def test_importing_the_package_does_not_load_numba() -> None:
    """The ``wheelspec`` command imports ``wheelspec.optimized`` for every invocation."""
    code = "import sys, wheelspec.optimized; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
