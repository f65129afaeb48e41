"""Named firing rules: when may a task fire, and by when must it have fired.

A *profile* is the contract an implementation claims.  Fires are judged against the clock
reading ``now`` at which the timer handed the task over, and completeness is judged at every
``Advance(now)`` event (the end of an ``advanceClock`` that saw the clock at ``now``).

========== =================================== ======================================= ============
name       may fire when (earliest)            must have fired by the end of advance t  delay <= 0
========== =================================== ======================================= ============
kafka      now >= floor(exp / tick) * tick      floor(exp / tick) * tick <= t           as any task
strict     now >= exp                           exp <= t                                as any task
strict-gt  now > exp                            exp < t                                 inside add
========== =================================== ======================================= ============

``kafka`` is Kafka's SystemTimer: a bucket is due at its window start, so with tick > 1 a task
runs up to tick - 1 ms before its expiration (SEMANTICS.md, "Firing rule").  ``strict`` is what
``sched``, Twisted's ``Clock``, Netty and Jane Street's ``timing_wheel`` promise.  ``strict-gt`` is
Kafka's test ``MockTimer``: a task fires only once ``now > exp``, but ``add`` runs a task with delay
<= 0 synchronously.  An optional ``lateness_ms`` bound (real-time mode) limits ``now - exp``, and
``executor_order`` (:data:`EXECUTOR_ORDERS`) says where a purgatory's purge may fall among the
expirations of its advance (the executor race of SystemTimer's executor thread).

A *declared granularity* (:class:`Granularity`, an implementation's ``lateness_ms`` /
``earliness_ms`` capabilities) widens a timer task's window for a coarse timer that is not
Kafka's wheel (a hierarchical wheel whose smallest bucket is a second, a wheel that rounds
deadlines down to a 10 ms grid): :meth:`Profile.fire_window` is the one place that rule lives.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .limits import MAX_DELAY_MS

#: The profile names, in the order reports list them.  The only place a name is spelled out:
#: everything else asks a :class:`Profile` how it behaves.
KAFKA, STRICT, STRICT_GT = "kafka", "strict", "strict-gt"
PROFILE_NAMES = (KAFKA, STRICT, STRICT_GT)


@dataclasses.dataclass(frozen=True)
class Behaviour:
    """What a profile's rule does, as facts the checker, the engines and the reports ask about."""

    #: the firing window is a bucket of ``tick`` ms (Kafka's SystemTimer): with tick > 1 a task may
    #: fire before its expiration, and the tick and wheel size are the implementation's parameters
    uses_tick: bool
    #: a fire needs ``now > exp`` (MockTimer); otherwise ``now >= earliest``
    needs_strictly_after: bool
    #: ``add`` with delay <= 0 runs the task synchronously, inside the add, with no entry (MockTimer)
    fires_inside_add: bool
    #: ``size`` counts every entry still queued, cancelled and superseded ones included (MockTimer);
    #: otherwise it counts pending tasks (SystemTimer's counter)
    size_counts_superseded: bool
    #: the Kafka class whose contract the profile is (None: not a Kafka class)
    kafka_class: str | None
    #: how the profile's firing rule reads, for people
    rule: str
    #: tasks due at the same moment run in the order they were added: a SystemTimer bucket is a
    #: ``TimerTaskList`` appended to and flushed from its head, and ``sched``, Twisted's ``Clock``
    #: and Netty break ties first in, first out.  False: Kafka's MockTimer, a JDK ``PriorityQueue``
    #: ordered by expiration only, runs ties in its heap's order (siftUp/siftDown, not FIFO; the
    #: reference reproduces it), which a judge need not require of an implementation
    fifo_ties: bool
    #: due tasks are handed to an executor thread (Kafka's SystemTimer: ``taskExecutor.submit``), so
    #: a purgatory's purge check, made by the reaper right after ``advanceClock``, races the
    #: expirations it handed over (:data:`EXECUTOR_ORDERS`).  False: MockTimer runs each due task
    #: inline, inside ``advanceClock``, so its expirations always come before the purge check
    executor_race: bool = True


BEHAVIOURS: dict[str, Behaviour] = {
    KAFKA: Behaviour(uses_tick=True, needs_strictly_after=False, fires_inside_add=False,
                     size_counts_superseded=False, kafka_class="SystemTimer", rule="now >= floor(exp/{tick})*{tick}",
                     fifo_ties=True),
    STRICT: Behaviour(uses_tick=False, needs_strictly_after=False, fires_inside_add=False,
                      size_counts_superseded=False, kafka_class=None, rule="now >= exp", fifo_ties=True),
    STRICT_GT: Behaviour(uses_tick=False, needs_strictly_after=True, fires_inside_add=True,
                         size_counts_superseded=True, kafka_class="MockTimer",
                         rule="now > exp (delay <= 0 runs inside add)", fifo_ties=False,
                         executor_race=False),
}
assert tuple(BEHAVIOURS) == PROFILE_NAMES


#: ``MockTimer.size()`` differs between Kafka versions; the strict-gt profile pins the first.
#:
#: * ``"queue"``: ``taskQueue.size()``, which counts cancelled and superseded entries until an
#:   advance dequeues them: Kafka's Scala ``MockTimer`` (``def size: Int = taskQueue.size``) and
#:   its Java port in ``server-common`` (``return taskQueue.size();``, apache/kafka commits
#:   bd1f02b2bec, 2023, through 1eb7644349c, 2024-10; Kafka 3.6 to 3.9).  The strict-gt profile.
#: * ``"live"``: cancelled entries removed before counting (a later revision): the number of
#:   queued entries whose task still points at them, i.e. the pending tasks.  A named variant
#:   (``Simulation(mock_size="live")`` in the engines); the history checker judges ``"queue"``.
MOCK_SIZE_QUEUE, MOCK_SIZE_LIVE = "queue", "live"
MOCK_SIZE_RULES = (MOCK_SIZE_QUEUE, MOCK_SIZE_LIVE)


def check_mock_size_rule(rule: object) -> str:
    """A MockTimer size rule by name; raises ``ValueError`` naming the known rules."""
    if rule not in MOCK_SIZE_RULES:
        raise ValueError(f"unknown MockTimer size rule {rule!r} (known: {', '.join(MOCK_SIZE_RULES)})")
    return str(rule)


#: The executor race (Kafka's ``DelayedOperationPurgatory.advanceClock``): the reaper thread calls
#: ``timeoutTimer.advanceClock``, which hands each expired operation to the timer's executor thread
#: (``SystemTimer.taskExecutor``, one thread, tasks run in hand-over order), then at once checks
#: ``estimatedTotalOperations - numDelayed > purgeInterval`` and purges completed operations from
#: the watch lists.  The executor may complete the handed-over operations before that check, after
#: it, or part before and part after, so ``purged``, ``watched()`` and ``cancelForKey``'s result
#: legitimately differ.  An implementation declares which orders it may show:
#:
#: * ``"expire-before-purge"`` (the default, and the reference's default): every expiration of an
#:   advance (``Complete(via=expire)``, ``Expire``) comes before its ``Purge``;
#: * ``"purge-before-expire"``: the ``Purge`` comes before every expiration of its advance;
#: * ``"either"``: the ``Purge`` may come before, between or after them (the race itself).
#:
#: ``numDelayed`` is the timer's count, which drops when an entry is handed over, so the purge's
#: trigger and its ``delayed`` are the same in every order.
EXPIRE_BEFORE_PURGE, PURGE_BEFORE_EXPIRE, EITHER_ORDER = "expire-before-purge", "purge-before-expire", "either"
EXECUTOR_ORDERS = (EXPIRE_BEFORE_PURGE, PURGE_BEFORE_EXPIRE, EITHER_ORDER)


def check_executor_order(order: object, profile_name: str | None = None) -> str:
    """An executor order by name; raises ``ValueError`` naming the known orders, or, for a profile
    without an executor (MockTimer runs due tasks inline), any order but the default."""
    if order not in EXECUTOR_ORDERS:
        raise ValueError(f"unknown executor order {order!r} (known: {', '.join(EXECUTOR_ORDERS)})")
    if profile_name is not None and order != EXPIRE_BEFORE_PURGE and not behaviour(profile_name).executor_race:
        raise ValueError(f"executor order {order!r} is impossible under profile {profile_name!r}: its timer "
                         f"({behaviour(profile_name).kafka_class}) runs expired operations inline, before the "
                         f"purge check (only {EXPIRE_BEFORE_PURGE!r})")
    return str(order)


def check_engine_executor_order(order: object, profile_name: str) -> str:
    """The executor order an engine shows in a run (:func:`check_executor_order`): one outcome, so
    not ``either``, which is a judge's notion (the engine's ``set_purge_point`` picks one per
    advance instead)."""
    order = check_executor_order(order, profile_name)
    if order == EITHER_ORDER:
        raise ValueError("executor_order 'either' is not one outcome: give 'expire-before-purge' or "
                         "'purge-before-expire' (set_purge_point chooses per advance)")
    return order


def check_purge_point(expirations_before: object, profile_name: str, name: str = "expirations_before") -> int | None:
    """The argument of an engine's ``set_purge_point``: how many of the next advance's expirations
    the executor runs before the purge check (None: as the engine's executor order says).  A
    non-negative int, and under a profile without an executor race only None or 0."""
    if expirations_before is not None and (isinstance(expirations_before, bool)
                                           or not isinstance(expirations_before, int) or expirations_before < 0):
        raise ValueError(f"{name} must be a non-negative int or None, got {expirations_before!r}")
    if expirations_before not in (None, 0) and not behaviour(profile_name).executor_race:
        check_executor_order(EITHER_ORDER, profile_name)  # raises: MockTimer has no executor race
    return expirations_before


def purge_point_of(order: str, expirations_before: int | None) -> int | None:
    """How many of an advance's expirations an engine runs before its purge check: the point a
    ``set_purge_point`` gave, else the one ``order`` implies (None: all of them)."""
    if expirations_before is not None:
        return expirations_before
    return None if order == EXPIRE_BEFORE_PURGE else 0


def purge_allowed_after(order: str, expirations_before: int, expirations_after: int) -> bool:
    """May a ``Purge`` come with ``expirations_before`` of its advance's expirations before it and
    ``expirations_after`` after it, under executor order ``order``?"""
    if order == EXPIRE_BEFORE_PURGE:
        return expirations_after == 0
    if order == PURGE_BEFORE_EXPIRE:
        return expirations_before == 0
    return True


def earliest_time(exp: Any, tick: Any, uses_tick: Any, strictly_after: Any) -> Any:
    """The smallest clock reading at which a task with expiration ``exp`` may fire: with a tick
    window (kafka: Kafka's ``TimingWheel`` fires a whole bucket when its window starts), the start
    ``exp - exp mod tick`` of exp's window; else ``exp``, plus one where the profile needs strictly
    after (MockTimer).  :meth:`Profile.earliest` for one task; written in arithmetic only, so that
    every argument may be a numpy array (the trace analysis evaluates it over whole columns, a
    profile's ``uses_tick`` / ``needs_strictly_after`` per row)."""
    return exp - (exp % tick) * uses_tick + strictly_after * (1 - uses_tick)


@dataclasses.dataclass(frozen=True)
class Granularity:
    """A timer's declared granularity (capabilities ``lateness_ms`` / ``earliness_ms``), judged as
    property ``granularity``.  A coarse timer is not Kafka's wheel: a bucket of a hierarchical
    wheel fires when the clock passes its end (up to a bucket late), a wheel that rounds deadlines
    down to its grid fires up to a grid step early.  Both are documented limits, not bugs, so the
    implementation declares them and is judged against them.  Zero in both: no granularity (the
    profile's own window, every verdict as without a declaration)."""

    #: a task may still fire this many ms after the moment its profile says it must have fired by
    lateness_ms: int = 0
    #: a task may fire this many ms before its profile's earliest time (a timer that rounds down)
    earliness_ms: int = 0

    def __bool__(self) -> bool:
        return bool(self.lateness_ms or self.earliness_ms)

    def describe(self) -> str:
        """``late by at most 1024 ms, early by at most 9 ms`` (the parts declared)."""
        parts = ([f"late by at most {self.lateness_ms} ms"] if self.lateness_ms else []) + (
            [f"early by at most {self.earliness_ms} ms"] if self.earliness_ms else [])
        return ", ".join(parts) or "no declared granularity"


#: no declared granularity: the profile's own window
NO_GRANULARITY = Granularity()


def check_granularity(name: str, value: object) -> int:
    """A declared ``lateness_ms`` / ``earliness_ms`` (``name``): an int in [0, MAX_DELAY_MS];
    raises ``ValueError`` saying what is wrong in one line."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DELAY_MS:
        raise ValueError(f"{name} must be an integer in [0, {MAX_DELAY_MS}] (ms), got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str
    #: the tick the window rule uses (only a profile that ``uses_tick`` looks at it)
    tick: int = 1
    #: if set, a fire with ``now - exp > lateness_ms`` is a violation (real-time mode)
    lateness_ms: int | None = None
    #: which orders of a purge and the expirations of its advance the implementation may show
    #: (:data:`EXECUTOR_ORDERS`)
    executor_order: str = EXPIRE_BEFORE_PURGE
    #: the implementation's declared granularity (:class:`Granularity`): widens a timer task's
    #: window (:meth:`fire_window`); operation deadlines keep the profile's own window
    granularity: Granularity = NO_GRANULARITY

    @property
    def behaviour(self) -> Behaviour:
        return BEHAVIOURS[self.name]

    @property
    def uses_tick(self) -> bool:
        """Is the firing window a bucket of ``tick`` ms (Kafka's SystemTimer)?"""
        return self.behaviour.uses_tick

    @property
    def max_early_ms(self) -> int:
        """How far before its expiration a task may fire under this profile (with this tick):
        ``tick - 1`` ms for a tick window (a bucket is due at its start), else 0."""
        return self.tick - 1 if self.behaviour.uses_tick else 0

    @property
    def may_fire_early(self) -> bool:
        """Can a task fire before its expiration under this profile (with this tick)?"""
        return self.max_early_ms > 0

    @property
    def fires_inside_add(self) -> bool:
        """Does ``add`` with delay <= 0 run the task inside the add, with no entry (MockTimer)?"""
        return self.behaviour.fires_inside_add

    @property
    def size_counts_superseded(self) -> bool:
        """Does ``size`` count cancelled and superseded entries still queued (MockTimer)?"""
        return self.behaviour.size_counts_superseded

    @property
    def fifo_ties(self) -> bool:
        """Do tasks due at the same moment run in the order they were added (not MockTimer)?"""
        return self.behaviour.fifo_ties

    def earliest(self, exp: int) -> int:
        """The smallest clock reading at which a task with expiration ``exp`` may fire."""
        return earliest_time(exp, self.tick, self.behaviour.uses_tick, self.behaviour.needs_strictly_after)

    def may_fire(self, exp: int, now: int, delay: int | None = None, in_add: bool = False) -> bool:
        """Is a fire at ``now`` allowed? ``in_add``: the fire happened inside ``add``."""
        if in_add and delay is not None and delay <= 0 and self.fires_inside_add:
            return True
        return now >= self.earliest(exp)

    def must_have_fired(self, exp: int, now: int) -> bool:
        """After an advance that saw the clock at ``now``, must a pending task have fired?"""
        return self.earliest(exp) <= now

    def fire_window(self, exp: int, added_at: int) -> tuple[int, int]:
        """The window ``(lo, hi)`` of a timer task with expiration ``exp`` added at ``added_at``
        under this profile and its declared :attr:`granularity`: it may fire at ``now >= lo``, and
        must have fired by the end of an advance to ``t >= hi``.

        ``lo`` is :meth:`earliest` minus the declared earliness.  ``hi`` is the moment the profile
        says it must have fired by (:meth:`earliest`, and never before its own add: a delay <= 0 is
        due at the next advance) plus the declared lateness.  Without a declared lateness ``hi`` is
        :meth:`earliest` itself, exactly :meth:`must_have_fired`'s rule."""
        g = self.granularity
        earliest = self.earliest(exp)
        hi = max(earliest, added_at) + g.lateness_ms if g.lateness_ms else earliest
        return earliest - g.earliness_ms, hi

    def describe(self) -> str:
        rule = self.behaviour.rule.format(tick=self.tick)
        late = f", late by at most {self.lateness_ms} ms" if self.lateness_ms is not None else ""
        declared = f", declared {self.granularity.describe()}" if self.granularity else ""
        return f"{self.name}: fire when {rule}{late}{declared}"


def profile(name: str, tick: int = 1, lateness_ms: int | None = None,
            executor_order: str = EXPIRE_BEFORE_PURGE, granularity: Granularity = NO_GRANULARITY) -> Profile:
    """Look a profile up by name; raises ``ValueError`` naming the known profiles (or an executor
    order the profile cannot show: :func:`check_executor_order`, or a bad declared granularity)."""
    behaviour(name)  # refuses an unknown name
    if tick < 1:
        raise ValueError(f"profile tick must be >= 1, got {tick}")
    check_granularity("lateness_ms", granularity.lateness_ms)
    check_granularity("earliness_ms", granularity.earliness_ms)
    return Profile(name, tick, lateness_ms, check_executor_order(executor_order, name), granularity)


def behaviour(name: str) -> Behaviour:
    """The behaviour of a profile by name (for code that holds a name, such as a ``hello``)."""
    if name not in BEHAVIOURS:
        raise ValueError(f"unknown profile {name!r} (known: {', '.join(PROFILE_NAMES)})")
    return BEHAVIOURS[name]
