"""The campaign's schedule generator: a seeded random schedule of operations per ``(kind, seed)``.

Determinism: a schedule is a pure function of ``(kind, seed)``.  Its generator is a
``random.Random`` (:class:`~.draws.Draws`: the same values, drawn faster) seeded with the string
``"<version>:<kind>:<seed>"``, the version being the kind's entry in :data:`GENERATORS` (Python
seeds from a string through SHA-512, identically on every platform and Python 3 version), and
the generator uses only ``randrange`` / ``choice`` / ``random`` / ``sample`` on it -- so the same
seed gives the same schedule on any machine.
Changing what a kind's generator draws means bumping its version (the table in
``docs/guides/CAMPAIGN.md`` lists what each version draws); a saved counterexample holds its operations
and names its generator version in ``origin``, so it replays under any version.

How a schedule is drawn (``docs/guides/CAMPAIGN.md``, "Generation", says why each part is there):

* **a length class**: most schedules are short (2-16 operations), some medium (17-60), a few
  Kafka-sized (120-280): bugs that need many cascades, bucket reuses or adds into one window
  only show in long histories, and short ones keep the default run fast and shrink well;
* **swarm testing**: each schedule enables a random subset of *moves* (operation kinds and
  composite patterns) and of *delay* and *advance regions*, with random weights, so that some
  schedules do only a few things, many times (a schedule that never cancels lets re-adds pile up;
  one without advances lets adds pile into the same buckets);
* **moves** (timer): a plain add (a fresh task, or a re-add of a scheduled, fired or cancelled
  one), a cancel, an advance, ``size``; a *burst* of adds into one window of some level; an
  *idle jump* far ahead followed by short delays (the lazy, stale clock); a *cascade* (a task at
  level 1-4, then advances stepping down the levels); *bucket reuse* (the same bucket index of a
  level used again one wheel revolution later); a *touch* of a cascaded task (cancel or re-add of
  a task added far ahead, once the clock is near it); a *tie* (buckets of two adjacent levels
  that start at the same millisecond, among other queued buckets: the delay queue's heap order);
  a *mix* (one level-0 window filled by every route before it fires: tasks cascaded down into it,
  tasks added into it directly, tasks re-added into it while scheduled elsewhere);
* **moves** (purgatory): watches on 1-3 of a few keys (long schedules use fewer keys, so each key
  sees many operations), ``set_completable``, ``check`` (mostly of keys with watchers),
  ``cancel_for_key``, ``force_complete``, ``watched`` / ``num_delayed``, advances, the timer
  moves, and a *crowd*: many operations watching one key, some completed from outside or made
  completable, then checks of that key (a long watcher list with completed entries in it); a
  *resubmit* (``tryCompleteElseWatch`` again) of an operation in each state: watched, completed
  (forced, or made completable so the resubmit's own try completes it), expired, cancelled for a
  key, often followed by what shows its effect (``num_delayed`` / ``watched``, a check, an
  advance past the re-timed deadline); a cancel of a task id never added (Kafka's no-op);
* **out-of-range requests** (:data:`OUT_OF_RANGE_SHARE` of the schedules): one or two requests
  beyond ``spec/limits.py`` (a delay past the largest, a clock reading past the last, a negative
  or too large id), so a missing range check fails property ``ranges`` without the corpus.  An
  implementation declaring ``ranges: unbounded`` gets its schedules without them, and one
  declaring a narrower range (``ranges`` as an object) gets every other delay and advance target
  clamped into it, its clock starting inside it (:func:`.narrow.narrow`, :func:`.narrow.narrow_config`).

Resubmits and cancels of never-added tasks are protocol version 2: :func:`.narrow.narrow` leaves them out
of a version-1 implementation's schedules (they are drawn in the purgatory kind only, whose
generator version is :data:`PURGATORY_GENERATOR`; the timer kind never draws them).  The *mix*
move is drawn by the timer kind only (its generator version is :data:`GENERATOR`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.check.draws import Draws
from wheelspec.spec import limits, ops

KINDS = ("timer", "purgatory")
#: the timer kind's generator: v3's moves plus the *mix* move (one window filled by every route)
GENERATOR = "wheelspec-campaign-v5"
#: the purgatory kind's generator: v3's moves plus resubmits and cancels of never-added tasks
PURGATORY_GENERATOR = "wheelspec-campaign-v4"
#: The generator version of each kind (a schedule is a pure function of version, kind and seed;
#: ``docs/guides/CAMPAIGN.md`` lists what each version draws).
GENERATORS = {"timer": GENERATOR, "purgatory": PURGATORY_GENERATOR}
#: every generator version there has been, oldest first: a saved counterexample names the one it
#: was drawn by (its ``origin``) and replays under any
GENERATOR_VERSIONS = tuple(f"wheelspec-campaign-v{i}" for i in range(1, 6))

#: length classes: (name, share of schedules, fewest operations, most operations); shares add up
#: to 1 (a schedule ends with the move that reaches its length, plus a final draining advance)
LENGTHS = (("short", 0.76, 2, 16), ("medium", 0.20, 17, 60), ("long", 0.04, 120, 280))
#: share of schedules that carry out-of-range requests (property ``ranges``)
OUT_OF_RANGE_SHARE = 0.025
#: timer moves, each enabled in a schedule with this probability (``add`` and ``advance`` always)
TIMER_MOVES = {"add": 1.0, "advance": 1.0, "cancel": 0.6, "readd": 0.5, "size": 0.45, "burst": 0.4,
               "idle": 0.35, "cascade": 0.5, "reuse": 0.4, "touch": 0.45, "tie": 0.45, "mix": 0.5}
#: purgatory moves (beside the timer ones), each enabled with this probability (``watch`` and
#: ``advance`` always)
PURGATORY_MOVES = {"watch": 1.0, "advance": 1.0, "set_completable": 0.8, "check": 0.9, "cancel_for_key": 0.5,
                   "force_complete": 0.6, "observe": 0.6, "timer": 0.5, "crowd": 0.5, "resubmit": 0.6,
                   "cancel_unknown": 0.3}
#: the states a resubmitted operation is brought into first (``_Schedule.resubmit``)
RESUBMIT_STATES = ("any", "watched", "completed", "completable", "expired", "cancelled")
#: delay regions: where wheels go wrong (module doc); each enabled with probability 0.6, one at least
DELAY_REGIONS = ("tiny", "tick-boundary", "level-boundary", "nonpositive", "far", "window-edge")
#: advance regions, likewise
ADVANCE_REGIONS = ("zero", "tick", "window", "boundary", "far", "next-due")


def _rng(kind: str, seed: int) -> random.Random:
    # Draws: random.Random's values, drawn faster (conformance/check/draws.py)
    return Draws(f"{GENERATORS[kind]}:{kind}:{seed}")


def length_class(kind: str, seed: int) -> str:
    """The length class of ``(kind, seed)``'s schedule (the first draw of its generator)."""
    return _length(_rng(kind, seed))[0]


def _length(r: random.Random) -> tuple[str, int]:
    c = r.random()
    for name, share, lo, hi in LENGTHS:
        if c < share:
            return name, r.randrange(lo, hi + 1)
        c -= share
    name, _, lo, hi = LENGTHS[-1]
    return name, r.randrange(lo, hi + 1)


def _subset(r: random.Random, names: Iterable[str], p: float) -> tuple[str, ...]:
    names = tuple(names)
    chosen = tuple(n for n in names if r.random() < p)
    return chosen or (r.choice(names),)


class _Schedule:
    """The state a schedule is drawn against: the configuration, the generator's own view of the
    clock and of the tasks (which it tracks approximately: it needs only plausible targets), and
    the operations drawn so far."""

    def __init__(self, r: random.Random, kind: str) -> None:
        self.r = r
        self.kind = kind
        self.length, self.target = _length(r)
        long = self.length != "short"
        self.tick = r.choice((1, 1, 1, 2, 3, 5, 10, 10, 20, 50))
        # Small wheels make deep hierarchies with short delays: long schedules favour them.
        self.wheel = r.choice((2, 3, 4, 5, 8, 20) if not long else (2, 2, 3, 3, 4, 5, 8, 20))
        self.start = r.choice((0, 0, r.randrange(0, 1000), r.randrange(0, 10**9)))
        self.purge = r.choice((0, 1, 2, 3, 5, 1000))
        self.now = self.start
        self.out: list[ops.Op] = []
        self.pending: dict[int, int] = {}   # task -> expiration (approximately: fires are inferred)
        self.known: list[int] = []          # every task id added (in range)
        self.gone: list[int] = []           # tasks added, then fired or cancelled
        self.far: set[int] = set()          # tasks added at least one level-0 interval ahead
        self.pool = r.randrange(1, 7) if not long else r.randrange(4, 41)
        self.next_task = 0
        # swarm: the moves and regions this schedule uses, with random weights
        table = TIMER_MOVES if kind == "timer" else PURGATORY_MOVES
        enabled = [m for m, p in table.items() if r.random() < p]
        self.moves = enabled
        self.weights = [r.random() + 0.15 for _ in enabled]
        self.delays = _subset(r, DELAY_REGIONS, 0.6)
        self.advances = _subset(r, ADVANCE_REGIONS, 0.6)
        # purgatory state
        n_keys = r.randrange(1, 5) if not long else r.choice((1, 2, 2, 3, 4))
        self.keys: tuple[Any, ...] = ("a", "b", "c", 1)[:n_keys]
        self.watched: list[int] = []
        self.watchers: Counter[Any] = Counter()
        self.next_op = 0
        self.op_keys: dict[int, tuple[Any, ...]] = {}  # op -> the keys of its watch

    # ------------------------------------------------------------------ values -----------------
    def level_tick(self, level: int) -> int:
        return self.tick * self.wheel**level

    def delay(self, region: str | None = None) -> int:
        r, tick, wheel = self.r, self.tick, self.wheel
        region = region or r.choice(self.delays)
        if region == "tiny":
            return r.randrange(0, 3 * tick + 2)
        if region == "tick-boundary":
            return r.randrange(1, 2 * wheel + 2) * tick + r.choice((-1, 0, 1))
        if region == "level-boundary":  # tick * wheel^level, +-1, or anywhere inside that level
            u = self.level_tick(r.randrange(1, 5))
            return u + r.choice((-1, 0, 1, r.randrange(0, u)))
        if region == "nonpositive":
            return -r.randrange(0, 2 * tick + 1) if r.random() < 0.8 else -r.randrange(0, 10 * tick * wheel)
        if region == "far":
            return r.randrange(0, self.level_tick(r.choice((3, 3, 4))) + 1)
        # window-edge: an expiration on an absolute window edge of some level (the bucket index
        # is exp div tick, so edges relative to the stale clock and to now differ)
        u = self.level_tick(r.randrange(0, 3))
        return (self.now // u + r.randrange(1, 2 * wheel + 1)) * u + r.choice((-1, 0, 1)) - self.now

    def advance_target(self, region: str | None = None) -> int:
        r, tick, wheel, now = self.r, self.tick, self.wheel, self.now
        region = region or r.choice(self.advances)
        if region == "zero":
            return now
        if region == "tick":
            return now + r.randrange(1, 2 * tick + 1)
        if region == "window":
            return now + r.randrange(1, tick * wheel + 1)
        if region == "boundary":
            u = self.level_tick(r.randrange(0, 3))
            return max(now, (now // u + r.randrange(1, 2 * wheel)) * u + r.choice((-1, 0, 0, 1)))
        if region == "far":
            return now + r.randrange(1, self.level_tick(3) + 1)
        # next-due: just before, at or just after the earliest pending expiration (or its window)
        if not self.pending:
            return now + r.randrange(1, 2 * tick + 1)
        exp = min(self.pending.values())
        t = r.choice((exp - 1, exp, exp + 1, (exp // tick) * tick, (exp // tick) * tick - 1))
        return max(now, t)

    # ------------------------------------------------------------------ ops --------------------
    def emit(self, op: ops.Op) -> None:
        self.out.append(op)

    def advance(self, t: int) -> None:
        t = min(max(t, self.now), limits.MAX_TIME_MS)
        self.now = t
        for task, exp in list(self.pending.items()):
            if exp <= t:  # fired by now under every profile but strict-gt (a close enough view)
                del self.pending[task]
                self.gone.append(task)
        self.emit(ops.AdvanceTo(t))

    def add(self, task: int, delay: int) -> None:
        delay = max(limits.MIN_DELAY_MS, min(limits.MAX_DELAY_MS, delay))
        if task not in self.pending and task not in self.known:
            self.known.append(task)
        self.pending[task] = self.now + delay
        if delay >= self.tick * self.wheel:
            self.far.add(task)
        else:
            self.far.discard(task)
        self.emit(ops.AddTask(task, delay))

    def fresh_task(self) -> int:
        t = self.next_task
        self.next_task += 1
        return t

    def pick_task(self) -> int:
        """A task id for a plain add: a re-add (if enabled) or an id from the pool."""
        r = self.r
        if "readd" in self.moves and self.known and r.random() < 0.5:
            group = r.choice((list(self.pending), self.gone, self.known))
            if group:
                return r.choice(group)
        if self.next_task < self.pool or not self.known:
            return self.fresh_task()
        return r.choice(self.known)

    # ------------------------------------------------------------------ timer moves ------------
    def timer_move(self, move: str) -> None:
        r = self.r
        if move in ("add", "readd"):
            self.add(self.pick_task(), self.delay())
        elif move == "cancel":
            if self.known:
                group = list(self.pending) if self.pending and r.random() < 0.7 else self.known
                task = r.choice(group)
                self.pending.pop(task, None)
                self.gone.append(task)
                self.emit(ops.CancelTask(task))
        elif move == "advance":
            self.advance(self.advance_target())
        elif move == "size":
            self.emit(ops.Size())
        elif move == "burst":
            self.burst()
        elif move == "idle":
            self.advance(self.now + r.randrange(self.level_tick(2), self.level_tick(4) + 1))
            for _ in range(r.randrange(1, 4)):  # short delays under the stale clock
                self.add(self.pick_task(), r.choice((0, -r.randrange(0, 3 * self.tick + 1),
                                                     r.randrange(1, 2 * self.tick * self.wheel + 1))))
        elif move == "cascade":
            level = r.randrange(1, 5)
            self.add(self.pick_task() if r.random() < 0.5 else self.fresh_task(),
                     self.level_tick(level) + r.randrange(0, self.level_tick(level)))
            for _ in range(r.randrange(1, 4)):  # step down: each advance lands a level lower
                level = max(0, level - 1)
                self.advance(self.now + self.level_tick(level) + r.choice((-1, 0, 1, r.randrange(0, self.tick + 1))))
        elif move == "reuse":
            level = r.randrange(0, 4)
            u = self.level_tick(level)
            d = r.randrange(1, self.wheel) * u + r.randrange(0, u)
            task = self.pick_task()
            self.add(task, d)
            self.advance(self.now + u * self.wheel)  # one revolution of that level: same index again
            self.add(self.fresh_task() if r.random() < 0.5 else task, d)
        elif move == "tie":
            self.tie()
        elif move == "mix":
            self.mix()
        elif move == "touch":
            cascaded = [t for t in self.far if t in self.pending]
            if not cascaded:
                self.timer_move("cascade")
                return
            task = r.choice(cascaded)
            if r.random() < 0.5:  # bring the clock near it first: it has cascaded down by then
                exp = self.pending[task]
                self.advance(max(self.now, exp - r.randrange(1, 2 * self.tick * self.wheel + 1)))
            if task in self.pending and r.random() < 0.5:
                self.pending.pop(task)
                self.gone.append(task)
                self.emit(ops.CancelTask(task))
            elif task in self.known:
                self.add(task, self.delay())

    def burst(self) -> None:
        """Many adds into one window (of level 0 or higher): the bucket's queue bookkeeping."""
        r = self.r
        level = r.choice((0, 0, 1, 2))
        u = self.level_tick(level)
        first = max(1, self.delay(r.choice(("tick-boundary", "level-boundary", "far"))))
        window = ((self.now + first) // u) * u
        n = r.randrange(4, 12 if self.length == "short" else 30)
        for _ in range(min(n, max(2, self.target - len(self.out)))):
            task = self.fresh_task() if r.random() < 0.7 or not self.known else r.choice(self.known)
            self.add(task, window + r.randrange(0, u) - self.now)
            if r.random() < 0.1:  # the clock creeps forward, not reaching the window
                self.advance(min(window - 1, self.now + r.randrange(0, self.tick + 1)))
        if r.random() < 0.5:  # the task count after many links into one bucket
            self.emit(ops.Size())

    def tie(self) -> None:
        """Buckets of levels k and k+1 that start at one millisecond ``w2`` (SEMANTICS.md,
        Ordering, O4): task B goes to level k+1 first (``w2`` is two level-(k+1) windows ahead, out
        of level k's reach); a filler due just before ``w2`` moves level k's clock next to it; then
        task A lands in level k's window ``[w2, w2 + tick_k)``.  Other buckets due earlier make the
        delay queue's heap deep enough for its order to differ from first in, first out; the last
        advance hands the two over together."""
        r = self.r
        k = r.randrange(0, 3)
        lo, hi = self.level_tick(k), self.level_tick(k + 1)
        w2 = (self.now // hi + 2) * hi
        b, a = (self.fresh_task() for _ in range(2))
        self.add(b, w2 + r.randrange(0, lo) - self.now)
        fillers = [w2 - lo - self.now] + [r.randrange(1, w2 - self.now) for _ in range(r.randrange(1, 6))]
        fillers += [r.randrange(w2 - self.now, self.level_tick(k + 2) * 2) for _ in range(r.randrange(0, 4))]
        r.shuffle(fillers)
        for d in fillers:
            self.add(self.fresh_task(), d)
        self.advance(w2 - lo + r.randrange(0, lo))
        self.add(a, w2 + r.randrange(0, lo) - self.now)
        for _ in range(r.randrange(0, 6)):  # buckets due before w2, queued after A and B
            self.add(self.fresh_task(), r.randrange(1, w2 - self.now + 1))
        self.advance(w2 + r.randrange(0, 2 * lo))

    def mix(self) -> None:
        """One level-0 window ``W = [w, w + tick)`` filled by every route before it fires
        (SEMANTICS.md, Ordering, O2-O3: a bucket runs its entries in the order they were linked,
        whatever linked them): entries *cascaded* down from an overflow wheel, entries added
        *directly* into level 0, and entries *re-added* into W while scheduled elsewhere (far
        ahead, cascaded into another window, or in W already); then an advance fires W.

        The lazy clock decides where an add lands, so the move sets it.  ``w`` lies in the
        level-1 window ``[s1, s1 + u1)``, two or more of them ahead and not at its first tick: a
        task added for W now is at least ``u1`` ahead of any base clock, so it goes to an overflow
        wheel.  An advance into ``[s1, w)`` flushes the buckets holding it (their windows start
        at or before ``s1``): it cascades into W, and the base clock stops in ``[s1, w)``, where W
        is inside level 0's span, so later adds for W link into it directly.  Two times in three
        (when the wheel has room) a pacer first puts the base clock in ``[w - u1 + tick, s1)``: a
        fresh task added for a later tick window than now's, then an advance to exactly its
        expiration, which flushes its buckets down to its own window and so moves every clock
        there; then direct and re-added entries are linked before the cascaded ones arrive."""
        r, tick = self.r, self.tick
        u1 = self.level_tick(1)
        s1 = (self.now // u1 + r.randrange(2, 2 * self.wheel + 1)) * u1
        w = s1 + r.randrange(1, self.wheel) * tick  # not the first tick: that one is due at the cascade
        cascaded = [self.fresh_task() for _ in range(r.randrange(1, 4))]
        routes = ["direct"] * r.randrange(1, 3)
        routes += [r.choice(("far", "cascading", "in-w")) for _ in range(r.randrange(1, 3))]
        r.shuffle(routes)
        # the tasks to re-add are scheduled now, beyond W: far ahead, or in W's level-1 window after
        # W if it has room (they cascade into another level-0 bucket before their re-add)
        far = (w + tick, w + tick + self.level_tick(2))
        elsewhere = {"far": far, "cascading": (w + tick, s1 + u1) if w + tick < s1 + u1 else far}
        first = [(t, w, w + tick) for t in cascaded]
        first += [(self.fresh_task(), *elsewhere[x]) for x in routes if x in elsewhere]
        readds = [t for t, lo, _ in first if lo > w]
        r.shuffle(first)
        for task, lo, hi in first:
            self.add(task, r.randrange(lo, hi) - self.now)
        early = 0
        lo, hi = max((self.now // tick + 1) * tick, w - u1 + tick), s1 - tick
        if lo <= hi and r.random() < 0.65:  # the pacer: the base clock to [lo, hi], before s1
            pace = lo + r.randrange(0, (hi - lo) // tick + 1) * tick + r.randrange(0, tick)
            self.add(self.fresh_task(), pace - self.now)
            self.advance(pace)
            early = r.randrange(1, len(routes) + 1)
            if routes[0] == "in-w":  # W holds nothing to re-add yet
                routes.append(routes.pop(0))
        in_w: dict[int, str] = {}  # the tasks linked in W -> the route that linked them
        for i, route in enumerate(routes + [""]):
            if i == early:
                self.advance(s1 + r.randrange(0, w - s1))  # the cascade into W; W stays queued
                in_w.update(dict.fromkeys(cascaded, "cascaded"))
            if not route:
                break
            if route == "direct":
                task = self.fresh_task()
            elif readds and route != "in-w":
                task = readds.pop(0)
            elif in_w:  # mostly one whose route another entry of W keeps
                keeps = [t for t, x in in_w.items() if x == "re-added" or list(in_w.values()).count(x) > 1]
                task = r.choice(keeps if keeps and r.random() < 0.75 else list(in_w))
            else:
                task = readds.pop(0) if readds else self.fresh_task()
            readd = task in self.pending
            in_w.pop(task, None)
            self.add(task, w + r.randrange(0, tick) - self.now)
            in_w[task] = "re-added" if readd else "direct"
        self.advance(w + r.choice((0, r.randrange(0, tick), r.randrange(0, 2 * u1))))

    # ------------------------------------------------------------------ purgatory moves --------
    def watch(self, keys: tuple[Any, ...], completable: bool = False, retry: bool = False,
              delay: int | None = None) -> int:
        op = self.next_op
        self.emit(ops.Watch(op, self.delay() if delay is None else delay, keys, completable, retry))
        self.watched.append(op)
        self.op_keys[op] = keys
        self.watchers.update(keys)
        self.next_op += 1
        return op

    def crowd(self) -> None:
        """Many operations on one key (some also on others), some completed from outside or made
        completable, then checks of the key: long watcher lists holding completed entries."""
        r = self.r
        key = r.choice(self.keys)
        others = [k for k in self.keys if k != key]
        crowd = [self.watch((key, *r.sample(others, r.choice((0, 0, 1, 2)) if len(others) >= 2 else 0)))
                 for _ in range(r.randrange(4, 10 if self.length == "short" else 16))]
        for op in crowd:
            c = r.random()
            if c < 0.25:
                self.emit(ops.ForceComplete(op))
            elif c < 0.6:
                self.emit(ops.SetCompletable(op, True))
        for _ in range(r.randrange(1, 3)):
            self.emit(ops.CheckAndComplete(key))
        if r.random() < 0.6:
            self.emit(r.choice((ops.Watched(), ops.NumDelayed(), ops.NumDelayed())))

    def some_keys(self) -> tuple[Any, ...]:
        return tuple(self.r.sample(self.keys, self.r.randrange(1, min(3, len(self.keys)) + 1)))

    def resubmit(self) -> None:
        """``tryCompleteElseWatch`` of an operation watched before, in a state drawn from
        :data:`RESUBMIT_STATES` (SEMANTICS.md, "Resubmit"), then often what shows the effect: the
        counters, a check of its keys, an advance past its re-timed deadline."""
        r = self.r
        state = r.choice(RESUBMIT_STATES)
        if state == "expired" or not self.watched:
            # a short timeout, run out: the resubmit finds the operation expired
            timeout = r.randrange(-self.tick, 3 * self.tick + 2)
            op = self.watch(self.some_keys(), delay=timeout)
            self.advance(self.now + max(0, timeout) + r.randrange(self.tick, 2 * self.tick * self.wheel + 1))
        else:
            op = r.choice(self.watched)
        if state == "completed":
            self.emit(ops.ForceComplete(op))
        elif state == "completable":
            self.emit(ops.SetCompletable(op, True))
        elif state == "cancelled":
            key = r.choice(self.op_keys.get(op, self.keys))
            self.watchers[key] = 0
            self.emit(ops.CancelForKey(key))
        keys = self.op_keys.get(op, self.keys[:1]) if r.random() < 0.4 else self.some_keys()
        self.watchers.update(keys)
        self.emit(ops.Resubmit(op, keys))
        c = r.random()
        if c < 0.35:
            self.emit(r.choice((ops.NumDelayed(), ops.Watched())))
        elif c < 0.55:
            self.emit(ops.CheckAndComplete(r.choice(keys)))
        elif c < 0.7:
            self.advance(self.advance_target())

    def cancel_unknown(self) -> None:
        """``TimerTask.cancel()`` of a task no add named (Kafka: a no-op, false)."""
        r = self.r
        task = r.choice((self.next_task + r.randrange(0, 3), r.randrange(1000, 1100)))
        if task in self.known:
            task = max(self.known) + 1 + r.randrange(0, 3)
        self.emit(ops.CancelTask(task))

    def purgatory_move(self, move: str) -> None:
        r = self.r
        if move == "crowd":
            self.crowd()
        elif move == "resubmit":
            self.resubmit()
        elif move == "cancel_unknown":
            self.cancel_unknown()
        elif move == "timer":
            self.timer_move(r.choice(("add", "cancel", "advance", "size", "cascade")))
        elif move == "watch" or (not self.watched and move not in ("advance", "observe")):
            k = r.randrange(1, min(3, len(self.keys)) + 1)
            completable = r.random() < 0.2
            # One in ten of the others becomes completable while it is being watched.
            self.watch(tuple(r.sample(self.keys, k)), completable, not completable and r.random() < 0.1)
        elif move == "set_completable":
            self.emit(ops.SetCompletable(r.choice(self.watched), r.random() < 0.85))
        elif move == "check":
            busy = [k for k in self.keys if self.watchers[k]]
            self.emit(ops.CheckAndComplete(r.choice(busy) if busy and r.random() < 0.8 else r.choice(self.keys)))
        elif move == "cancel_for_key":
            key = r.choice(self.keys)
            self.watchers[key] = 0
            self.emit(ops.CancelForKey(key))
        elif move == "force_complete":
            self.emit(ops.ForceComplete(r.choice(self.watched)))
            if r.random() < 0.3:  # a completed operation's timer entry must be gone
                self.emit(ops.NumDelayed())
        elif move == "advance":
            self.advance(self.advance_target())
        else:
            self.emit(r.choice((ops.Watched(), ops.NumDelayed())))

    # ------------------------------------------------------------------ out of range -----------
    def out_of_range_op(self) -> ops.Op:
        """A request beyond ``spec/limits.py``; refused, it changes nothing, so the generator's
        view of the state stays as it is."""
        r = self.r
        big = r.choice((1, r.randrange(1, 1000), r.randrange(1, limits.MAX_DELAY_MS)))
        choices = ["delay", "delay", "time", "id"]
        if self.kind == "purgatory":
            choices += ["watch", "watch"]
        what = r.choice(choices)
        if what == "delay":
            task = r.choice(self.known) if self.known and r.random() < 0.5 else r.randrange(0, self.pool + 1)
            return ops.AddTask(task, r.choice((limits.MAX_DELAY_MS + big, limits.MIN_DELAY_MS - big)))
        if what == "time":
            return ops.AdvanceTo(limits.MAX_TIME_MS + big)
        if what == "id":
            return ops.AddTask(r.choice((-big, limits.MAX_ID + big)), self.delay())
        keys = (r.choice(self.keys),)
        if r.random() < 0.5:
            return ops.Watch(r.choice((-big, limits.MAX_ID + big)), self.delay(), keys)
        return ops.Watch(self.next_op + 1000, limits.MAX_DELAY_MS + big, keys)

    # ------------------------------------------------------------------ the schedule -----------
    def draw(self) -> tuple[Config, list[ops.Op]]:
        r = self.r
        cfg = Config(self.tick, self.wheel, self.start, self.purge)
        bad_at: list[int] = []
        if r.random() < OUT_OF_RANGE_SHARE:
            bad_at = sorted(r.randrange(0, self.target) for _ in range(r.randrange(1, 3)))
        move_fn = self.timer_move if self.kind == "timer" else self.purgatory_move
        while len(self.out) < self.target:
            while bad_at and bad_at[0] <= len(self.out):
                bad_at.pop(0)
                self.emit(self.out_of_range_op())
            move_fn(r.choices(self.moves, self.weights)[0])
        if not any(isinstance(op, ops.AdvanceTo) for op in self.out[-1:]):
            self.advance(self.now + self.tick * self.wheel**2)  # drain: lost tasks show at an advance
        return cfg, self.out


def generate(kind: str, seed: int) -> tuple[Config, list[ops.Op]]:
    """The schedule for ``(kind, seed)``: a configuration and a list of operations."""
    if kind not in KINDS:
        raise ValueError(f"campaign kind must be one of {KINDS}, got {kind!r}")
    ahead = _AHEAD.pop((kind, seed), None)
    return ahead if ahead is not None else _Schedule(_rng(kind, seed), kind).draw()


def generate_ahead(kind: str, seed: int) -> None:
    """Generate ``(kind, seed)``'s schedule now, for the next :func:`generate` call that asks for
    it: a campaign generates the next seed's schedule while a pipelined adapter computes the
    current one (``campaign.run_seed_range``).  A schedule depends on its kind and seed alone, so
    it is the same whenever it is drawn; one is held at a time, and handed out once."""
    _AHEAD.clear()
    _AHEAD[(kind, seed)] = _Schedule(_rng(kind, seed), kind).draw()


#: the schedule :func:`generate_ahead` drew, until :func:`generate` hands it out
_AHEAD: dict[tuple[str, int], tuple[Config, list[ops.Op]]] = {}


def swarm(kind: str, seed: int) -> dict[str, tuple[str, ...]]:
    """What ``(kind, seed)``'s schedule enabled: its moves, delay regions and advance regions."""
    s = _Schedule(_rng(kind, seed), kind)
    return {"moves": tuple(s.moves), "delays": s.delays, "advances": s.advances}
