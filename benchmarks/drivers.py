"""One adapter ("driver") per implementation: how to run each workload's phases on it.

A driver turns a workload into a *prepared run*: everything that must not be timed (building the
structure, converting inputs to Python ints, inserting the tasks a cancel or fire phase needs)
happens in :meth:`Driver.prepare`, which returns a :class:`Prepared` holding the one callable the
harness times (``timed``) and a ``verify`` that checks, after the clock stops, that the run did
what the workload says (every task fired, every cancel found its task, every request completed
exactly once).  A figure is only reported for a run that verified.

Implementations:

* ``reference``       -- :class:`wheelspec.reference.Simulation` (per-operation API; records a
  history, which is part of what the reference is);
* ``optimized``       -- :class:`wheelspec.optimized.Simulation`, the engine's per-operation API
  (the reference's methods and events);
* ``optimized-op``    -- the engine's ``ArrayTimer`` called once per operation, no event log;
* ``optimized-batch`` -- the engine's batch API (arrays in, arrays out);
* ``heapq``           -- :class:`.heap_timer.HeapTimer` / :class:`.heap_purgatory.HeapPurgatory`;
* ``sched``           -- :class:`.sched_timer.SchedTimer` (timer workloads only);
* ``app-timer``       -- :class:`wheelspec.optimized.WheelTimer`, the application API over the
  engine (``schedule`` / ``cancel`` by handle / ``advance_to``; timer workloads only);
* ``netty``, ``jdk-stpe``, ``jdk-delayqueue``, ``tokio-delayqueue`` -- native peers, each cell run
  in a subprocess of its own language (:mod:`.native`).

Per-operation drivers loop in Python over lists of ints made before the clock starts, calling a
bound method per operation: the same loop for every per-operation implementation.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from wheelspec.spec.errors import WheelspecError

from .heap_purgatory import HeapPurgatory
from .heap_timer import HeapTimer
from .sched_timer import SchedTimer
from .workloads import ARRIVE, PurgatoryWorkload, TimerWorkload


class Unavailable(WheelspecError):
    """The implementation cannot run this workload here (missing module or API); the message
    says why and is shown in the table instead of a figure."""


class VerificationError(WheelspecError, AssertionError):
    """A timed run did not do what the workload says: its figure must not be reported."""


@dataclasses.dataclass
class Prepared:
    """A run ready to be timed: call ``warm()`` (if any) right before the clock starts, then
    ``timed()`` under the clock, then ``verify(result)``.  ``state`` is kept for the memory
    measurement (bytes per pending timer)."""

    timed: Callable[[], Any]
    verify: Callable[[Any], None]
    state: Any
    warm: Callable[[], Any] | None = None


@dataclasses.dataclass(frozen=True)
class TimerConfig:
    """Wheel parameters for every implementation that has them (Kafka's defaults)."""

    tick_ms: int = 1
    wheel_size: int = 20


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise VerificationError(what)


def _check_all_fired(wl: TimerWorkload, fired: np.ndarray | list[int], who: str) -> None:
    got = np.sort(np.asarray(fired, dtype=np.int64))
    _expect(got.shape == wl.ids.shape and bool(np.array_equal(got, np.sort(wl.ids))),
            f"{who}: {wl.name} n={wl.n}: fired {got.size} tasks, expected each of the {wl.n} exactly once")


class Driver:
    """Base class. ``name`` is the column label; ``memory`` says how bytes per pending timer are
    measured: ``"tracemalloc"`` (Python objects) or ``"arrays"`` (the engine's numpy arrays)."""

    name = "?"
    memory = "tracemalloc"
    workloads: tuple[str, ...] = ("insert", "cancel", "fire-steps", "fire-jump", "steady", "purgatory")

    def available(self) -> str | None:
        """None if usable here, else the reason it is not."""
        return None

    def prepare(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        raise NotImplementedError

    def pending_bytes(self, state: Any) -> int:
        """Bytes the engine's arrays hold (only for ``memory == "arrays"``)."""
        raise NotImplementedError

    def drop_log(self, state: Any) -> None:
        """Forget any event log the structure keeps, so a memory figure counts the timer only."""


# ---------------------------------------------------------------------------------------------
# per-operation drivers: reference, optimized per-op, heapq, sched
# ---------------------------------------------------------------------------------------------
class PerOpDriver(Driver):
    """Drives an object with ``add(id, delay)``, ``cancel(id)``, ``advance_to(t)``, ``size()``.

    Subclasses say how to build the timer and how fired tasks are reported (``advance_to``'s
    return value, or ``Fire`` events in a history)."""

    def new_timer(self, cfg: TimerConfig, n: int) -> Any:
        """A fresh timer for a workload of ``n`` tasks."""
        raise NotImplementedError

    def new_purgatory(self, wl: PurgatoryWorkload, cfg: TimerConfig) -> Any:
        raise Unavailable(f"{self.name} has no purgatory")

    def fired_ids(self, timer: Any, returned: list[Any]) -> list[int]:
        """The ids fired during a phase, given what ``advance_to`` returned each time."""
        out: list[int] = []
        for r in returned:
            out.extend(r)
        return out

    def prepare(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        if isinstance(wl, PurgatoryWorkload):
            return self._prepare_purgatory(wl, cfg)
        timer = self.new_timer(cfg, wl.capacity)
        ids = wl.ids.tolist()
        delays = wl.delays.tolist()
        who = self.name
        if wl.name == "insert":
            def timed() -> None:
                add = timer.add
                for i, d in zip(ids, delays):
                    add(i, d)

            def verify(_: Any) -> None:
                _expect(timer.size() == wl.n, f"{who}: insert n={wl.n}: size() is {timer.size()} after {wl.n} adds")
            return Prepared(timed, verify, timer)

        add = timer.add
        for i, d in zip(ids, delays):
            add(i, d)
        if wl.name == "steady":
            return self._prepare_steady(wl, timer)
        if wl.name == "cancel":
            assert wl.cancel_order is not None
            order = wl.cancel_order.tolist()

            def timed() -> None:
                cancel = timer.cancel
                for i in order:
                    cancel(i)

            def verify(_: Any) -> None:
                _expect(timer.size() == 0, f"{who}: cancel n={wl.n}: size() is {timer.size()} after cancelling all")
            return Prepared(timed, verify, timer)

        assert wl.advance_times is not None
        times = wl.advance_times.tolist()

        def timed_fire() -> list[Any]:
            adv = timer.advance_to
            return [adv(t) for t in times]

        def verify_fire(returned: list[Any]) -> None:
            _check_all_fired(wl, self.fired_ids(timer, returned), who)
            _expect(timer.size() == 0, f"{who}: {wl.name} n={wl.n}: size() is {timer.size()} after all fired")
        return Prepared(timed_fire, verify_fire, timer)

    def _prepare_steady(self, wl: TimerWorkload, timer: Any) -> Prepared:
        assert wl.window_ids is not None and wl.window_delays is not None and wl.cancel_order is not None
        assert wl.warm_ids is not None and wl.warm_delays is not None and wl.warm_cancels is not None
        adds = list(zip(wl.window_ids.tolist(), wl.window_delays.tolist()))
        cancels = wl.cancel_order.tolist()
        warm = [(list(zip(i.tolist(), d.tolist())), c.tolist()) for i, d, c in wl.warm_windows()]
        who = self.name

        def window(adds: list[tuple[int, int]], cancels: list[int]) -> int:
            """Run the adds, then the cancels; how many cancels found their task."""
            add, cancel = timer.add, timer.cancel
            for i, d in adds:
                add(i, d)
            found = 0
            for i in cancels:
                if cancel(i):
                    found += 1
            return found

        def warm_up() -> None:
            for warm_adds, warm_cancels in warm:
                missed = len(warm_cancels) - window(warm_adds, warm_cancels)
                _expect(missed == 0, f"{who}: steady n={wl.n}: {missed} warm-up cancels found no pending task")

        def timed() -> int:
            return window(adds, cancels)

        def verify(found: int) -> None:
            _expect(found == len(cancels),
                    f"{who}: steady n={wl.n}: {len(cancels) - found} cancels found no pending task")
            _expect(timer.size() == wl.n, f"{who}: steady n={wl.n}: size() is {timer.size()}, expected {wl.n}")
        return Prepared(timed, verify, timer, warm_up)

    def _prepare_purgatory(self, wl: PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        pg = self.new_purgatory(wl, cfg)
        times = wl.times.tolist()
        kinds = wl.kinds.tolist()
        ops = wl.ops_ids.tolist()
        keys = [tuple(row) for row in wl.keys.tolist()]
        completable = (wl.latency == 0).tolist()
        timeout, end = wl.params.timeout, wl.end

        def timed() -> None:
            watch, force, adv = pg.watch, pg.force_complete, pg.advance_to
            now = -1
            for t, k, op in zip(times, kinds, ops):
                if t != now:
                    adv(t)
                    now = t
                if k == ARRIVE:
                    watch(op, timeout, keys[op], completable[op])
                else:
                    force(op)
            adv(end)

        def verify(_: Any) -> None:
            self.verify_purgatory(pg, wl)
        return Prepared(timed, verify, pg)

    def verify_purgatory(self, pg: Any, wl: PurgatoryWorkload) -> None:
        raise NotImplementedError


class HeapDriver(PerOpDriver):
    name = "heapq"

    def new_timer(self, cfg: TimerConfig, n: int) -> HeapTimer:
        return HeapTimer()

    def new_purgatory(self, wl: PurgatoryWorkload, cfg: TimerConfig) -> HeapPurgatory:
        return HeapPurgatory(wl.params.purge_interval)

    def verify_purgatory(self, pg: HeapPurgatory, wl: PurgatoryWorkload) -> None:
        done = pg.completed_at_watch + pg.force_completed + pg.expired
        _expect(done == wl.n, f"heapq: purgatory n={wl.n}: {done} requests completed, expected {wl.n}")
        _expect(pg.expired == wl.expected_expirations,
                f"heapq: purgatory n={wl.n}: {pg.expired} expired, expected {wl.expected_expirations}")
        _expect(pg.num_delayed() == 0, f"heapq: purgatory n={wl.n}: {pg.num_delayed()} still delayed at the end")


class SchedDriver(PerOpDriver):
    name = "sched"
    workloads = ("insert", "cancel", "fire-steps", "fire-jump", "steady")

    def new_timer(self, cfg: TimerConfig, n: int) -> SchedTimer:
        return SchedTimer()


class SimulationDriver(PerOpDriver):
    """A ``Simulation`` (the per-operation API shared by reference and optimized): fires are the
    ``Fire`` events its history records; the purgatory is the one inside the simulation."""

    module = "?"

    def _cls(self) -> type:
        try:
            mod = importlib.import_module(self.module)
        except ImportError as e:
            raise Unavailable(f"cannot import {self.module}: {e}") from None
        cls = getattr(mod, "Simulation", None)
        if cls is None:
            raise Unavailable(f"{self.module} has no Simulation yet")
        return cls

    def available(self) -> str | None:
        try:
            self._cls()
        except Unavailable as e:
            return str(e)
        return None

    def new_timer(self, cfg: TimerConfig, n: int) -> Any:
        return self._cls()(tick_ms=cfg.tick_ms, wheel_size=cfg.wheel_size)

    def new_purgatory(self, wl: PurgatoryWorkload, cfg: TimerConfig) -> Any:
        return self._cls()(tick_ms=cfg.tick_ms, wheel_size=cfg.wheel_size,
                           purge_interval=wl.params.purge_interval)

    def fired_ids(self, timer: Any, returned: list[Any]) -> list[int]:
        return [e.task for e in timer.history if e.kind == "fire"]

    def drop_log(self, state: Any) -> None:
        events = getattr(getattr(state, "history", None), "events", None)
        if isinstance(events, list):
            events.clear()

    def verify_purgatory(self, sim: Any, wl: PurgatoryWorkload) -> None:
        completes: dict[int, int] = {}
        expired = 0
        for e in sim.history:
            if e.kind == "complete":
                completes[e.op] = completes.get(e.op, 0) + 1
            elif e.kind == "expire":
                expired += 1
        _expect(len(completes) == wl.n and all(c == 1 for c in completes.values()),
                f"{self.name}: purgatory n={wl.n}: {len(completes)} distinct requests completed, "
                f"expected each of {wl.n} once")
        _expect(expired == wl.expected_expirations,
                f"{self.name}: purgatory n={wl.n}: {expired} expired, expected {wl.expected_expirations}")


class ReferenceDriver(SimulationDriver):
    name = "reference"
    module = "wheelspec.reference"


class OptimizedDriver(SimulationDriver):
    """The engine behind the reference's per-operation API (history, id mapping and all): its
    memory is traced like any Python structure, because the id map is a dict."""

    name = "optimized"
    module = "wheelspec.optimized"


class ArrayOpDriver(PerOpDriver):
    """The engine's :class:`~wheelspec.optimized.ArrayTimer` called one operation at a time
    (``add``, ``cancel``, ``advance_to``), with no event log: what the per-operation call into
    compiled code costs without the :class:`Simulation`'s history and id mapping.  (The
    engine's purgatory has batch methods only; its per-operation path is ``optimized``.)"""

    name = "optimized-op"
    memory = "arrays"
    workloads = ("insert", "cancel", "fire-steps", "fire-jump", "steady")

    def available(self) -> str | None:
        return _engine_missing()

    def new_timer(self, cfg: TimerConfig, n: int) -> Any:
        return _array_timer(cfg, n)

    def fired_ids(self, timer: Any, returned: list[Any]) -> list[int]:
        return np.concatenate([r[0] for r in returned]).tolist() if returned else []

    def pending_bytes(self, state: Any) -> int:
        return array_bytes(state)


# ---------------------------------------------------------------------------------------------
# the engine's batch API
# ---------------------------------------------------------------------------------------------
def _engine_missing() -> str | None:
    try:
        opt = importlib.import_module("wheelspec.optimized")
        for name in ("ArrayTimer", "ArrayPurgatory"):
            getattr(opt, name)  # AttributeError if the batch API is missing
    except (ImportError, AttributeError) as e:
        return f"the optimized engine's batch API is not importable: {e}"
    return None


def _array_timer(cfg: TimerConfig, n: int) -> Any:
    # Sized for the workload's ids up front (what a user who knows the id range does); growth is
    # the engine's business and is exercised by the per-op Simulation.
    from wheelspec.optimized import ArrayTimer
    return ArrayTimer(cfg.tick_ms, cfg.wheel_size, 0, capacity=max(1, n))


class BatchDriver(Driver):
    """The optimized engine's batch API: :class:`~wheelspec.optimized.ArrayTimer` ``add_many`` /
    ``cancel_many`` / ``advance_to`` (one call per batch: the whole workload for inserts and
    cancels; one call per advance), and :class:`~wheelspec.optimized.ArrayPurgatory`
    ``advance_to`` / ``watch_many`` / ``force_complete_many`` once per virtual millisecond."""

    name = "optimized-batch"
    memory = "arrays"

    def available(self) -> str | None:
        return _engine_missing()

    def pending_bytes(self, state: Any) -> int:
        return array_bytes(state)

    def prepare(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        if isinstance(wl, PurgatoryWorkload):
            return self._prepare_purgatory(wl, cfg)
        timer = _array_timer(cfg, wl.capacity)
        ids, delays = wl.ids, wl.delays
        who = self.name
        if wl.name == "insert":
            def timed() -> Any:
                return timer.add_many(ids, delays)

            def verify(res: Any) -> None:
                _expect(res is None or res[0].size == 0, f"{who}: insert fired tasks at once")
                _expect(timer.size() == wl.n, f"{who}: insert n={wl.n}: size() is {timer.size()} after {wl.n} adds")
            return Prepared(timed, verify, timer)
        if wl.name == "steady":
            # Room for every task of the run up front (untimed), so the window measures the
            # operations at this occupancy, not a growth of the chunk pool that happens to fall
            # inside it (a growth copies the pool: see ArrayTimer.reserve).
            timer.reserve(wl.capacity, pending=wl.capacity)
        timer.add_many(ids, delays)
        if wl.name == "steady":
            wids, wdelays, cancels = wl.window_ids, wl.window_delays, wl.cancel_order
            warm_windows = wl.warm_windows()

            def warm() -> None:
                for warm_ids, warm_delays, warm_cancels in warm_windows:
                    timer.add_many(warm_ids, warm_delays)
                    missed = int(np.count_nonzero(~timer.cancel_many(warm_cancels)))
                    _expect(missed == 0, f"{who}: steady n={wl.n}: {missed} warm-up cancels found no pending task")

            def timed() -> Any:
                timer.add_many(wids, wdelays)
                return timer.cancel_many(cancels)

            def verify(res: Any) -> None:
                _expect(bool(np.all(res)),
                        f"{who}: steady n={wl.n}: {int(np.count_nonzero(~res))} cancels found no pending task")
                _expect(timer.size() == wl.n, f"{who}: steady n={wl.n}: size() is {timer.size()}, expected {wl.n}")
            return Prepared(timed, verify, timer, warm)
        if wl.name == "cancel":
            order = wl.cancel_order

            def timed() -> Any:
                return timer.cancel_many(order)

            def verify(res: Any) -> None:
                _expect(bool(np.all(res)),
                        f"{who}: cancel n={wl.n}: {int(np.count_nonzero(~res))} cancels found no pending task")
                _expect(timer.size() == 0, f"{who}: cancel n={wl.n}: size() is {timer.size()} after cancelling all")
            return Prepared(timed, verify, timer)
        assert wl.advance_times is not None
        times = wl.advance_times.tolist()

        def timed_fire() -> list[Any]:
            adv = timer.advance_to
            return [adv(t)[0] for t in times]

        def verify_fire(returned: list[Any]) -> None:
            _check_all_fired(wl, np.concatenate(returned), who)
            _expect(timer.size() == 0, f"{who}: {wl.name} n={wl.n}: size() is {timer.size()} after all fired")
        return Prepared(timed_fire, verify_fire, timer)

    def _prepare_purgatory(self, wl: PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        from wheelspec.optimized import ArrayPurgatory
        from wheelspec.optimized.purgatory_kernels import VIA_EXPIRE

        pg = ArrayPurgatory(cfg.tick_ms, cfg.wheel_size, 0, wl.params.purge_interval, capacity=max(1, wl.n))
        kmap = np.array([pg.key_id(k) for k in range(wl.params.key_space)], np.int64)
        key_ids = kmap[wl.keys]
        timeout = wl.params.timeout
        # One segment per (millisecond, kind): the arrivals of a millisecond go in one watch_many,
        # then its completions in one force_complete_many, after one advance_to.
        seg = np.flatnonzero(np.diff(wl.times) | np.diff(wl.kinds)) + 1
        bounds = np.concatenate([[0], seg, [wl.times.size]]).tolist()
        # (time, arrivals?, op ids, then for arrivals: delays, key ids, completable at once)
        plan: list[tuple[int, bool, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]] = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            ops = wl.ops_ids[a:b]
            if wl.kinds[a] == ARRIVE:
                plan.append((int(wl.times[a]), True, ops, np.full(ops.size, timeout, np.int64),
                             key_ids[ops], wl.latency[ops] == 0))
            else:
                plan.append((int(wl.times[a]), False, ops, None, None, None))
        end = wl.end

        def timed() -> list[Any]:
            adv, watch, force = pg.advance_to, pg.watch_many, pg.force_complete_many
            log = []
            now = -1
            for t, arrive, ops, delays, keys, completable in plan:
                if t != now:
                    log.append(adv(t)[0])
                    now = t
                if arrive:
                    log.append(watch(ops, delays, keys, completable)[1])
                else:
                    log.append(force(ops)[1])
            log.append(adv(end)[0])
            return log

        def verify(log: list[Any]) -> None:
            ops = np.concatenate([c[0] for c in log])
            vias = np.concatenate([c[1] for c in log])
            _expect(ops.size == wl.n and np.unique(ops).size == wl.n,
                    f"{self.name}: purgatory n={wl.n}: {np.unique(ops).size} distinct requests completed "
                    f"({ops.size} completions), expected each of {wl.n} once")
            expired = int(np.count_nonzero(vias == VIA_EXPIRE))
            _expect(expired == wl.expected_expirations,
                    f"{self.name}: purgatory n={wl.n}: {expired} expired, expected {wl.expected_expirations}")
            _expect(pg.num_delayed() == 0, f"{self.name}: purgatory n={wl.n}: {pg.num_delayed()} still delayed")
        return Prepared(timed, verify, pg)


# ---------------------------------------------------------------------------------------------
# the application API over the engine
# ---------------------------------------------------------------------------------------------
class AppTimerDriver(Driver):
    """:class:`~wheelspec.optimized.WheelTimer`, the application API, called once per operation as
    an application calls it: ``schedule(delay, payload)`` returns a handle, ``cancel`` takes it,
    ``advance_to`` returns the due payloads (the task ids here).  The caller keeps handles in a
    list indexed by task id (the steady window looks each cancel's handle up there, inside the
    clock; the cancel workload hands them over in cancel order, as heapq's gets its ids).  Every
    timed phase ends with ``flush()``, so the engine's share of the staged operations is inside the
    clock.  The timer is sized for the workload's ids up front, as for ``optimized-batch``."""

    name = "app-timer"
    memory = "arrays"
    workloads = ("insert", "cancel", "fire-steps", "fire-jump", "steady")

    def available(self) -> str | None:
        return _engine_missing()

    def pending_bytes(self, state: Any) -> int:
        return int(state.nbytes())

    def prepare(self, wl: TimerWorkload | PurgatoryWorkload, cfg: TimerConfig) -> Prepared:
        if isinstance(wl, PurgatoryWorkload):
            raise Unavailable("app-timer has no purgatory")
        from wheelspec.optimized import WheelTimer

        timer = WheelTimer(cfg.tick_ms, cfg.wheel_size, 0, capacity=max(1, wl.capacity))
        ids, delays = wl.ids.tolist(), wl.delays.tolist()
        who = self.name
        if wl.name == "insert":
            def timed() -> None:
                schedule = timer.schedule
                for i, d in zip(ids, delays):
                    schedule(d, i)
                timer.flush()

            def verify(_: Any) -> None:
                _expect(len(timer) == wl.n, f"{who}: insert n={wl.n}: len() is {len(timer)} after {wl.n} schedules")
            return Prepared(timed, verify, timer)
        if wl.name == "steady":
            timer.reserve(wl.capacity)  # untimed, as optimized-batch reserves its pool
        handles = [0] * wl.capacity
        schedule = timer.schedule
        for i, d in zip(ids, delays):
            handles[i] = schedule(d, i)
        timer.flush()
        if wl.name == "steady":
            return self._prepare_steady(wl, timer, handles)
        if wl.name == "cancel":
            assert wl.cancel_order is not None
            in_order = [handles[i] for i in wl.cancel_order.tolist()]

            def timed_cancel() -> None:
                cancel = timer.cancel
                for h in in_order:
                    cancel(h)
                timer.flush()

            def verify_cancel(_: Any) -> None:
                # The same check as the per-operation drivers': nothing left pending.
                _expect(len(timer) == 0, f"{who}: cancel n={wl.n}: len() is {len(timer)} after cancelling all")
                _expect(not any(map(timer.is_pending, in_order)), f"{who}: cancel n={wl.n}: a handle is still pending")
            return Prepared(timed_cancel, verify_cancel, timer)
        assert wl.advance_times is not None
        times = wl.advance_times.tolist()

        def timed_fire() -> list[Any]:
            adv = timer.advance_to
            return [adv(t) for t in times]

        def verify_fire(returned: list[Any]) -> None:
            _check_all_fired(wl, [x for r in returned for x in r], who)
            _expect(len(timer) == 0, f"{who}: {wl.name} n={wl.n}: len() is {len(timer)} after all fired")
        return Prepared(timed_fire, verify_fire, timer)

    def _prepare_steady(self, wl: TimerWorkload, timer: Any, handles: list[Any]) -> Prepared:
        assert wl.window_ids is not None and wl.window_delays is not None and wl.cancel_order is not None
        adds = list(zip(wl.window_ids.tolist(), wl.window_delays.tolist()))
        cancels = wl.cancel_order.tolist()
        warm = [(list(zip(i.tolist(), d.tolist())), c.tolist()) for i, d, c in wl.warm_windows()]
        who = self.name

        def window(adds: list[tuple[int, int]], cancels: list[int]) -> int:
            """Run the schedules, then the cancels, then the flush; how many cancels found their timer."""
            schedule, cancel = timer.schedule, timer.cancel
            for i, d in adds:
                handles[i] = schedule(d, i)
            found = 0
            for i in cancels:
                if cancel(handles[i]):
                    found += 1
            timer.flush()
            return found

        def warm_up() -> None:
            for warm_adds, warm_cancels in warm:
                missed = len(warm_cancels) - window(warm_adds, warm_cancels)
                _expect(missed == 0, f"{who}: steady n={wl.n}: {missed} warm-up cancels found no pending timer")

        def timed() -> int:
            return window(adds, cancels)

        def verify(found: int) -> None:
            _expect(found == len(cancels),
                    f"{who}: steady n={wl.n}: {len(cancels) - found} cancels found no pending timer")
            _expect(len(timer) == wl.n, f"{who}: steady n={wl.n}: len() is {len(timer)}, expected {wl.n}")
        return Prepared(timed, verify, timer, warm_up)


def array_bytes(obj: Any, _depth: int = 0, _seen: set[int] | None = None) -> int:
    """Bytes of every distinct numpy buffer reachable from ``obj`` through attributes, lists,
    tuples and dicts (at most 4 levels deep).  Views count their base once.  This is *allocated*
    capacity, slack from growth included: what the process really holds for the structure."""
    seen = _seen if _seen is not None else set()
    if isinstance(obj, np.ndarray):
        base = obj
        while isinstance(base.base, np.ndarray):
            base = base.base
        if id(base) in seen:
            return 0
        seen.add(id(base))
        return int(base.nbytes)
    if _depth >= 4 or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return 0
    if isinstance(obj, dict):
        children: Any = obj.values()
    elif isinstance(obj, (list, tuple)):
        children = obj
    else:
        d = getattr(obj, "__dict__", None)
        slots = [getattr(obj, s) for s in getattr(type(obj), "__slots__", ()) if hasattr(obj, s)]
        children = list(d.values()) if isinstance(d, dict) else []
        children += slots
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    return sum(array_bytes(c, _depth + 1, seen) for c in children)


#: the drivers of implementations that run in this process (:mod:`.registry` adds the native peers)
IN_PROCESS_DRIVERS: dict[str, type[Driver]] = {
    "reference": ReferenceDriver,
    "optimized": OptimizedDriver,
    "optimized-op": ArrayOpDriver,
    "optimized-batch": BatchDriver,
    "heapq": HeapDriver,
    "sched": SchedDriver,
    "app-timer": AppTimerDriver,
}
