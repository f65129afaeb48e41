"""Semantic coverage: which situations of ``spec/SEMANTICS.md`` a campaign exercised, and how often.

A random campaign is only as good as the states it reaches.  This module counts, per schedule,
the *situations* the semantics singles out (each defined in one line in :data:`SITUATIONS`, with
the section of SEMANTICS.md that names it).  They are counted on the **reference** run the judge
makes anyway (the oracle, :func:`~.oracle.oracle_run`): a :class:`Probe` wraps the reference
adapter and reads the reference's internal state around each request (wheel levels, bucket
windows, the base clock, the purgatory's estimate), which a black-box history does not show.  So
the counts say what the *schedules* exercise, measured on Kafka's classes, whatever the
implementation under test; for an implementation judged against the reference at tick 1 (the
``refusals`` and ``multiset`` oracle modes) they are that run's.

Counting is conservative: a situation is counted only when the reference's state shows it for
certain (for example, a cascade is counted for a bucket already queued when the advance starts,
not for one filled and flushed inside the same advance).

The report (terminal, JSON, JUnit ``<properties>``) sums the per-schedule counts
(:func:`total`); ``tests/test_coverage.py`` asserts that the default ``wheelspec check`` run covers
every situation at least :data:`MIN_DEFAULT` times.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from wheelspec.conformance.adapters.protocol import Config, Response
from wheelspec.spec import events as ev
from wheelspec.spec import ops


@dataclasses.dataclass(frozen=True)
class Situation:
    name: str
    #: the SEMANTICS.md section that names it
    section: str
    #: what is counted, in one line
    summary: str


#: every situation counted, in report order
SITUATIONS: tuple[Situation, ...] = (
    # -- timer: placement and the lazy clock --
    Situation("nonpositive-delay", "Placement", "an add with delay <= 0 is accepted"),
    Situation("due-at-add-stale-clock", "Placement",
              "an add whose window has started (W(exp) <= now) is not due for the stale base clock "
              "(exp >= c_0 + u): it waits in a bucket for the next advance"),
    Situation("stale-placement-overflow", "Clock",
              "an add with a delay shorter than the base interval lands in an overflow wheel because "
              "the base clock is stale"),
    Situation("zero-advance-fires", "Placement", "an advance to the current clock reading fires a task"),
    Situation("idle-jump", "Clock",
              "an advance by more than the level-1 interval (tick * n^2) while tasks are pending"),
    # -- firing and cascades --
    Situation("early-fire-in-window", "Firing rule",
              "a task fires before its expiration, inside its tick window (tick > 1)"),
    Situation("cascade-level-1", "Firing rule",
              "an advance flushes a non-empty level-1 bucket, re-adding its entries lower or firing them"),
    Situation("cascade-level-2", "Firing rule", "as cascade-level-1, from a level-2 bucket"),
    Situation("cascade-level-3+", "Firing rule", "as cascade-level-1, from a bucket of level 3 or higher"),
    # -- buckets and ordering --
    Situation("bucket-reuse-level-0", "Buckets",
              "a level-0 bucket is queued for a new window after an earlier window of it was queued"),
    Situation("bucket-reuse-overflow", "Buckets", "as bucket-reuse-level-0, for a bucket of an overflow wheel"),
    Situation("tie-across-levels", "Ordering",
              "an advance flushes buckets of different levels with one expiration (PriorityQueue order, O4)"),
    Situation("fire-order-not-by-exp", "Ordering",
              "one advance fires two tasks of one window out of expiration order (insertion order, O2)"),
    Situation("mixed-route-bucket", "Ordering",
              "a level-0 bucket fires holding entries linked by all three routes: added directly, cascaded "
              "down from an overflow wheel, and re-added (an add that superseded a pending entry) (O2, O3)"),
    # -- cancel and re-add --
    Situation("readd-while-scheduled", "Cancel", "a task is added again while its schedule is pending"),
    Situation("readd-after-fire", "Cancel", "a task is added again after it fired"),
    Situation("readd-after-cancel", "Cancel", "a task is added again after it was cancelled"),
    Situation("readd-cascaded", "Cancel", "a pending task that has cascaded down from an overflow wheel is re-added"),
    Situation("cancel-cascaded", "Cancel", "a pending task that has cascaded down from an overflow wheel is cancelled"),
    Situation("cancel-after-fire", "Cancel", "a cancel of a task that has fired finds nothing (pending = false)"),
    Situation("cancel-racing-flush", "Cancel",
              "a cancel removes a task whose window has started but whose bucket no advance has flushed yet "
              "(the sequential form of a cancel racing a flush)"),
    # -- purgatory --
    Situation("watch-completes-first-try", "Purgatory", "tryCompleteElseWatch completes at its first try"),
    Situation("completes-on-retry", "Purgatory",
              "the second tryComplete completes an operation that became completable while being watched"),
    Situation("expiry-inside-watch", "Purgatory",
              "a watch's timeout expires the operation inside the timer's add, before tryCompleteElseWatch returns"),
    Situation("expire-at-advance", "Purgatory", "an operation expires at an advance (Complete via expire, Expire)"),
    Situation("check-completes", "Purgatory", "checkAndComplete completes at least one operation"),
    Situation("completed-still-watched", "Purge",
              "checkAndComplete completes an operation that stays listed under its other keys until a purge"),
    Situation("cancel-for-key-other-keys", "Purgatory",
              "cancelForKey returns an operation that also watches other keys"),
    Situation("completed-after-cancel-for-key", "Purgatory",
              "an operation returned by cancelForKey is completed later (through another key or forceComplete)"),
    Situation("force-complete-wins", "Purgatory", "an outside forceComplete completes the operation (true)"),
    Situation("force-complete-loses", "Purgatory", "forceComplete of a completed operation returns false"),
    Situation("purge", "Purge", "the purge rule fires (estimated - numDelayed > purgeInterval)"),
    Situation("purge-boundary", "Purge",
              "after an advance estimated - numDelayed equals purgeInterval (>= 1): no purge (the rule is strict)"),
)

NAMES: tuple[str, ...] = tuple(s.name for s in SITUATIONS)

#: how often the default ``wheelspec check`` run must exercise each situation
MIN_DEFAULT = 10


def total(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of per-schedule counts, every situation listed (0 if never seen), in report order."""
    acc: Counter[str] = Counter()
    for c in counts:
        acc.update(c)
    return {n: acc[n] for n in NAMES}


def summary_line(totals: Mapping[str, int]) -> str:
    """One line for the terminal: how many situations were seen, and the rarest ones."""
    seen = sum(1 for n in NAMES if totals.get(n, 0) > 0)
    rare = sorted(NAMES, key=lambda n: (totals.get(n, 0), NAMES.index(n)))[:3]
    low = ", ".join(f"{n} {totals.get(n, 0)}" for n in rare)
    return f"coverage: {seen}/{len(NAMES)} situations exercised; rarest: {low}"


# ------------------------------------------------------------------ the probe ------------------
class Probe:
    """Counts the situations of one reference run.  :meth:`wrap` returns the reference adapter as
    :func:`~.runner.run_ops` drives it, with this probe looking at the reference around each
    request; :attr:`counts` holds what it saw."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def wrap(self, adapter: Any) -> _Watching:
        return _Watching(adapter, self)

    # -- state of one run ---------------------------------------------------------------------
    def start(self, sim: Any) -> None:
        self.sim = sim
        self.tick = int(getattr(sim, "tick_ms", 1))
        self.wheel = int(getattr(sim, "wheel_size", 20))
        # Only Kafka's SystemTimer has wheels to look into (MockTimer is a plain priority queue).
        timers = [sim.timer, getattr(getattr(sim, "purgatory", None), "timer", None)]
        self.timers = [t for t in timers if hasattr(t, "timing_wheel")]
        self.window_of: dict[int, int] = {}     # id(bucket) -> the last window it was seen queued for
        self.live: dict[int, int] = {}          # task -> expiration of its pending schedule
        self.fired: set[int] = set()
        self.cancelled: set[int] = set()
        self.cascaded: set[int] = set()         # pending tasks that came down from an overflow wheel
        self.keys_of: dict[int, tuple[Any, ...]] = {}
        self.cancelled_for_key: set[int] = set()
        self._flushing: set[int] = set()
        self._level_of: dict[int, dict[int, int]] = {}  # id(timer) -> id(bucket) -> its level
        # the plain timer's entries -> the route that linked them into level 0 (mixed-route-bucket)
        self._route: dict[int, tuple[Any, str]] = {}
        self._superseding = False               # the add being made replaces a linked entry

    def _levels(self, timer: Any) -> dict[int, int]:
        """id(bucket) -> level, for every bucket of ``timer``'s wheels (refreshed when a level is added)."""
        level_of = self._level_of.setdefault(id(timer), {})
        levels = timer.timing_wheel.levels()
        if len(level_of) != len(levels) * self.wheel:
            for level, wheel in enumerate(levels):
                for b in wheel.buckets:
                    level_of[id(b)] = level
        return level_of

    def _entry(self, task: int) -> Any:
        """The plain timer's current entry of ``task`` if it is linked in a bucket, else None (the
        simulation keeps one Kafka ``TimerTask`` per task id)."""
        t = getattr(self.sim, "tasks", {}).get(task)
        e = t.timer_task_entry() if t is not None else None
        return e if e is not None and e.list is not None else None

    def _note_route(self, task: int) -> None:
        """After an add: the route its entry takes into level 0.  Placed in an overflow wheel, it
        can reach level 0 only by a cascade; placed in level 0, it was re-added if the add
        superseded a linked entry, else added directly."""
        e = self._entry(task)
        if e is not None:
            level = self._levels(self.timers[0]).get(id(e.list), 0)
            self._route[id(e)] = (e, "cascaded" if level else "re-added" if self._superseding else "direct")

    def _routes(self, bucket: Any) -> set[str]:
        """The routes of the entries linked in ``bucket``."""
        out = set()
        for x in bucket.entries():
            seen = self._route.get(id(x))
            if seen is not None and seen[0] is x:
                out.add(seen[1])
        return out

    def _queued(self, timer: Any) -> Iterable[tuple[int, Any, int]]:
        """(level, bucket, window) of every queued bucket of ``timer``: the buckets in its delay
        queue, which between two requests are exactly those holding a window (invariants I1, I5
        of ``reference/invariants.py``); read from the queue, not from every bucket of every level."""
        level_of = self._levels(timer)
        for b in timer.delay_queue._heap:
            yield level_of[id(b)], b, b.get_expiration()

    def before(self, op: ops.Op) -> None:
        if isinstance(op, ops.AddTask) and self.timers:
            self._superseding = self._entry(op.task) is not None
        if not isinstance(op, ops.AdvanceTo):
            return
        t = op.time
        now = self.sim.now
        if t - now > self.tick * self.wheel**2 and self.live:
            self.counts["idle-jump"] += 1
        self._flushing = set()
        for i, timer in enumerate(self.timers):
            due: dict[int, set[int]] = {}
            for level, b, e in self._queued(timer):
                seen = self.window_of.get(id(b))
                if seen is not None and seen != e:
                    self.counts["bucket-reuse-level-0" if level == 0 else "bucket-reuse-overflow"] += 1
                self.window_of[id(b)] = e
                if e > t:
                    continue
                due.setdefault(e, set()).add(level)
                if level == 0 and i == 0 and len(self._routes(b)) == 3:
                    self.counts["mixed-route-bucket"] += 1
                if level >= 1:
                    entries = list(b.entries())
                    if entries:
                        self.counts[f"cascade-level-{level}" if level < 3 else "cascade-level-3+"] += 1
                        if i == 0:  # the plain timer: its tasks are the ones a history names
                            self._flushing.update(x.timer_task.task_id for x in entries if x.timer_task is not None)
            if any(len(levels) > 1 for levels in due.values()):
                self.counts["tie-across-levels"] += 1

    def after(self, op: ops.Op, now_before: int, resp: Response) -> None:
        if resp.error is not None:
            return
        c = self.counts
        events = resp.events
        match op:
            case ops.AddTask(task, delay):
                if delay <= 0:
                    c["nonpositive-delay"] += 1
                if task in self.live:
                    c["readd-while-scheduled"] += 1
                    if task in self.cascaded:
                        c["readd-cascaded"] += 1
                elif task in self.cancelled:
                    c["readd-after-cancel"] += 1
                elif task in self.fired:
                    c["readd-after-fire"] += 1
                exp = resp.result
                self.cascaded.discard(task)
                self.cancelled.discard(task)
                self.fired.discard(task)
                self.live[task] = exp
                if self.timers:
                    self._note_route(task)
                    c0 = self.timers[0].timing_wheel.current_time  # add never moves a clock
                    if (exp // self.tick) * self.tick <= resp.now and exp >= c0 + self.tick:
                        c["due-at-add-stale-clock"] += 1
                    interval = self.tick * self.wheel
                    if delay < interval and exp >= c0 + interval:
                        c["stale-placement-overflow"] += 1
            case ops.CancelTask(task):
                if resp.result:
                    exp = self.live.get(task)
                    if exp is not None and (exp // self.tick) * self.tick <= resp.now:
                        c["cancel-racing-flush"] += 1
                    if task in self.cascaded:
                        c["cancel-cascaded"] += 1
                elif task in self.fired:
                    c["cancel-after-fire"] += 1
                if task in self.live:
                    del self.live[task]
                    self.cancelled.add(task)
                self.cascaded.discard(task)
            case ops.AdvanceTo(t):
                if t == now_before and any(isinstance(e, ev.Fire) for e in events):
                    c["zero-advance-fires"] += 1
                c["expire-at-advance"] += sum(1 for e in events if isinstance(e, ev.Expire))
            case ops.Watch(op_id, _, keys, completable, retry):
                self.keys_of[op_id] = tuple(keys)
                if resp.result and completable:
                    c["watch-completes-first-try"] += 1
                if resp.result and retry and not completable:
                    c["completes-on-retry"] += 1
                if any(isinstance(e, ev.Expire) and e.op == op_id for e in events):
                    c["expiry-inside-watch"] += 1
            case ops.CheckAndComplete(key):
                if resp.result:
                    c["check-completes"] += 1
                for e in events:
                    if isinstance(e, ev.Complete) and e.via == "check" and set(self.keys_of.get(e.op, ())) - {key}:
                        c["completed-still-watched"] += 1
            case ops.CancelForKey(key):
                for o in resp.result or ():
                    if set(self.keys_of.get(o, ())) - {key}:
                        c["cancel-for-key-other-keys"] += 1
                    self.cancelled_for_key.add(o)
            case ops.ForceComplete():
                c["force-complete-wins" if resp.result else "force-complete-loses"] += 1
        self._events(events)
        if isinstance(op, ops.AdvanceTo):
            self.cascaded |= {t for t in self._flushing if t in self.live}
            self._purge_boundary(events)

    def _events(self, events: list[ev.Event]) -> None:
        c = self.counts
        last_in_window: dict[int, int] = {}
        for e in events:
            if isinstance(e, ev.Fire):
                if e.now < e.exp:
                    c["early-fire-in-window"] += 1
                w = (e.exp // self.tick) * self.tick
                if w in last_in_window and last_in_window[w] > e.exp:
                    c["fire-order-not-by-exp"] += 1
                last_in_window[w] = e.exp
                if self.live.get(e.task) == e.exp:
                    del self.live[e.task]
                    self.fired.add(e.task)
                    self.cascaded.discard(e.task)
            elif isinstance(e, ev.Complete):
                if e.op in self.cancelled_for_key and e.via in ("check", "force"):
                    c["completed-after-cancel-for-key"] += 1
                    self.cancelled_for_key.discard(e.op)
            elif isinstance(e, ev.Purge):
                c["purge"] += 1

    def _purge_boundary(self, events: list[ev.Event]) -> None:
        purgatory = getattr(self.sim, "purgatory", None)
        if purgatory is None or any(isinstance(e, ev.Purge) for e in events):
            return
        # An interval of 0 would count every idle advance; the strictness shows from 1 on.
        if purgatory.purge_interval > 0 and purgatory.estimated - purgatory.num_delayed() == purgatory.purge_interval:
            self.counts["purge-boundary"] += 1


class _Watching:
    """The reference adapter with a :class:`Probe` around each request (``reset`` / ``request``
    are what :func:`~.runner.run_ops` drives)."""

    trusted_answers = True  # the reference's own (base.SimulationAdapter)

    def __init__(self, adapter: Any, probe: Probe) -> None:
        self.adapter, self.probe = adapter, probe

    def reset(self, config: Config) -> None:
        self.adapter.reset(config)
        # The reference adapter's simulation (SimulationAdapter keeps it as ``_sim``): the
        # probe reads its internal state, which is the point of measuring on the reference.
        self.probe.start(self.adapter._sim)

    def request(self, op: ops.Op) -> Response:
        now = self.probe.sim.now
        self.probe.before(op)
        resp = self.adapter.request(op)
        self.probe.after(op, now, resp)
        return resp
