"""``WheelTimer``: an application timer (``schedule`` / ``call_later`` / ``cancel`` / ``advance_to``)
over the engine's batch kernels, with Kafka's ``SystemTimer`` semantics event for event.

What an application calls, one operation at a time -- Netty's ``newTimeout`` / ``Timeout.cancel``,
asyncio's ``call_later`` / ``TimerHandle.cancel``, Kafka's ``Timer.add`` / ``TimerTask.cancel`` --
on :class:`~.timer.ArrayTimer`, without a compiled call (numba's dispatch and the argument checks:
about 3 us) per operation.  docs/design/APP_TIMER.md is the user guide; this docstring is the design.

**Staging.**  ``schedule`` and ``cancel`` do not call the engine.  A schedule pops a free id from
a list, makes the handle and appends the delay to an ``array('q')`` and the payload to a list; a
cancel checks the handle and appends its id to another ``array('q')``.  The buffers go to the
engine in one ``add_many`` and one ``cancel_many`` (a *flush*) before anything that needs the
engine's state: an advance of the clock, ``len``, ``next_deadline``, running out of staged ids
(``stage_limit``), an explicit ``flush()``.  A flush is invisible: the timer behaves exactly as
if each operation had reached the engine when it was called, because of three rules:

* **Adds, then cancels.**  The ids of a stage's adds are distinct, and a cancelled id is not
  handed out again before the flush (it waits in the cancel buffer, then returns to the pool).  So
  a staged cancel hits a task added in an earlier stage (it commutes with every add of the stage,
  which are other ids) or one added earlier in this stage (it must follow that add, and does).
  The adds keep their order, which is the order of a bucket's entries.
* **A cancelled staged add still reaches the engine.**  Dropping it from the buffer would be
  cheaper and wrong: Kafka's add gives the task's bucket its expiration and queues the bucket, and
  a cancel does not undo that; the empty bucket still moves the wheels' clocks when it is polled,
  which decides what later adds find due at once (with ``tick > 1``) and where they go.
* **Due at once is decided when scheduled.**  Kafka runs a task inside ``add`` when its expiration
  is below level 0's clock plus the tick (``TimingWheel.add``: delays <= 0, and with ``tick > 1``
  a delay short of the current tick's end).  Level 0's clock moves only when the clock advances,
  so the threshold is known between advances (``_due_below``): such a timer never reaches the
  engine, is not pending from the start (``cancel`` says False, ``len`` does not count it) and is
  delivered first by the next advance, in scheduling order, as Kafka's executor receives it.

**Ids without bookkeeping.**  Free ids wait in ``_pool`` (an ``array('q')``).  A stage takes up
to ``stage_limit`` of them at once as a numpy array ``_src`` and a Python list ``_hot`` of the same
ids reversed, which ``schedule`` pops: so the staged adds' ids are ``_src[_flushed:taken]``, and
no per-operation record of them is kept.  When ``_hot`` runs out, the stage is flushed and a new
one taken (the pool grows by doubling the id space when it is short).

**Handles** are ints: ``generation * 2**31 + 2 * id``, the generation counting every timer the
``WheelTimer`` made, so a handle names one timer for ever (equal handles are the same timer).
``_tab`` (one list) holds at row ``2 * id`` the handle of the id's pending timer, or -1, and at
``2 * id + 1`` its payload: a handle is pending iff it equals its row, so a stale handle (its timer
fired or was cancelled, its id perhaps running a newer timer) cancels nothing, and a cancel finds
the handle and the payload it drops in one cache line.  Why ints and not handle objects: an int is
not tracked by Python's cyclic garbage collector, and millions of live handle objects made every
full collection walk them (a slotted handle object measured 1.2-4.9 us per schedule at 10^5
pending with the collector on, 0.3 us with it off); a tuple ``(id, generation)`` is untracked only
after a collection sees it, and cost more per cancel than the int.

**Costs.**  A schedule is a type test, two compares, a ``list.pop``, an int addition, two list
stores and an append; a cancel is a mask, a list read, a compare, two list stores and an append;
the engine then works in batches (docs/design/ENGINE.md).  A fire costs the engine's fire plus one Python
loop step that closes its row and takes its payload.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from wheelspec.spec.errors import InvariantError
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, MIN_DELAY_MS, RangeError, check_range, check_time

from . import layout as L
from . import timer_kernels as K
from .app_stage import PyStage, Stage
from .timer import ArrayTimer

_MAX_DELAY = MAX_DELAY_MS
#: Ids a WheelTimer hands out: ``2 * id`` stays below ``app_stage.MASK``, the row of the handle -1
#: (so no int that is not a handle can match the -1 of a closed row).
MAX_TIMERS = MAX_ID >> 2

# The staging core WheelTimer is built on: the C extension's when it is built (app_stage.Stage).
# For the type checker it is the Python twin, which has the same methods; the timer's logic is a
# mixin (no instance layout of its own) placed before the core, so that it runs on either.
if TYPE_CHECKING:
    _Core = PyStage
    _LogicBase = PyStage
else:
    _Core = Stage
    _LogicBase = object

#: Staged adds per stage: ids taken from the pool at once, so at most this many schedules between
#: two flushes.  A flush of 8192 adds costs the engine a few ns per add (docs/design/ENGINE.md), and the
#: buffers (about 130 KB) stay in the core's L2 cache.
STAGE_LIMIT = 8192
#: A stage takes at least this many ids (fewer only from a pool that cannot grow): otherwise a
#: nearly full id space would flush every few schedules.
_MIN_STAGE = 64


class TimerCall:
    """A callback and its arguments: the payload ``call_later`` schedules.  ``advance_to`` and
    ``run_due`` call it when its timer is due; ``pop_due`` hands it over uncalled (call it)."""

    __slots__ = ("callback", "args")

    def __init__(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.callback = callback
        self.args = args

    def __call__(self) -> Any:
        return self.callback(*self.args)

    def __repr__(self) -> str:
        return f"TimerCall({self.callback!r}, {self.args!r})"


#: the attributes of a WheelTimer beside its staging core's
_SLOTS = ("_eng", "_tick", "_now", "_pool", "_ready", "_limit", "_clock", "_origin_s", "_origin_ms", "_debug")


class _WheelTimerLogic(_LogicBase):
    """Kafka's ``SystemTimer`` as an application timer: schedule, cancel by handle, advance.

    ``WheelTimer(tick_ms=1, wheel_size=20, start_ms=0)`` is Kafka's default wheel.  The clock
    ``now`` starts at ``start_ms`` and moves only by :meth:`advance_to` (a virtual clock) or
    :meth:`run_due` (the system's monotonic clock: ``start_ms`` plus the ms elapsed since the
    timer was made).  Delays count from ``now``.

    A timer of expiration ``e = now + delay`` is *due* at the first advance to a time
    ``t >= e // tick * tick``: Kafka's rule, the bucket it ends in expires at the start of its
    tick, so with ``tick > 1`` it can fire up to ``tick - 1`` ms before ``e``, never after the first
    advance past ``e``.  An advance delivers what became due in Kafka's order (by bucket
    expiration, then insertion order within a bucket, cascades included).

    ``schedule(delay_ms, payload=None) -> handle``: schedule ``payload`` to be due ``delay_ms``
    (an int in ``[MIN_DELAY_MS, MAX_DELAY_MS]``) after ``now``.  A delay Kafka finds due at once
    (<= 0; with ``tick > 1`` short of the current tick's end) makes a timer that is not pending
    and is delivered by the next advance.
    ``cancel(handle) -> bool``: True iff the timer was pending (Kafka's ``TimerTask.cancel``
    unlinking a live entry); False once it fired or was cancelled, and for an int that is not a
    handle of this timer.  ``is_pending(handle)``: neither fired nor cancelled.
    (These three are the staging core's methods: :mod:`.app_stage`.)

    ``capacity``: pending timers made room for up front (ids and the engine's chunk pool); the
    tables grow by doubling beyond it.
    ``stage_limit``: schedules buffered between two flushes to the engine (module docstring).
    ``clock``: seconds for :meth:`run_due` (default ``time.monotonic``).  ``debug``: the engine's
    checked kernels and invariant checks after every engine call (``WHEELSPEC_DEBUG=1`` too).

    Not thread-safe: use :class:`LockedWheelTimer` from several threads.
    """

    if TYPE_CHECKING:
        __slots__ = _SLOTS  # the concrete classes below declare them (a mixin has no layout of its own)
    else:
        __slots__ = ()
    #: the staging core class this timer runs on (its ``schedule`` is called past the fast path)
    _CORE: ClassVar[type[PyStage]] = PyStage
    _eng: ArrayTimer
    _tick: int
    _now: int
    _pool: array[int]
    _ready: list[Any]
    _limit: int
    _clock: Callable[[], float]
    _origin_s: float
    _origin_ms: int
    _debug: bool

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0, *, capacity: int = 1024,
                 stage_limit: int = STAGE_LIMIT, clock: Callable[[], float] = time.monotonic,
                 debug: bool | None = None) -> None:
        capacity = check_range("capacity", capacity, 1, MAX_TIMERS)
        limit = check_range("stage_limit", stage_limit, 1, MAX_TIMERS)
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds, got {type(clock).__name__}")
        self._CORE.__init__(self, capacity, limit, _MAX_DELAY)
        self._limit = limit
        self._eng = ArrayTimer(tick_ms, wheel_size, start_ms, capacity, debug)
        self._eng.reserve(capacity, pending=capacity)  # the chunk pool too: no growth up to capacity
        self._debug = self._eng.debug
        self._tick = self._eng.tick_ms
        self._now = self._eng.now
        self._set_due_below()
        self._pool = array("q", range(capacity - 1, -1, -1))  # free ids outside the stage (taken from the end)
        self._ready: list[Any] = []  # due, not delivered: due at once, or left by a raising callback
        self._clock = clock
        self._origin_s = clock()
        self._origin_ms = self._now

    def call_later(self, delay_ms: int, callback: Callable[..., Any], *args: Any) -> int:
        """Schedule ``callback(*args)`` to run ``delay_ms`` after ``now`` (by :meth:`advance_to` or
        :meth:`run_due`); returns the handle."""
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {type(callback).__name__}")
        return self.schedule(delay_ms, TimerCall(callback, args))

    # -- the clock ------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        """The timer's clock (ms): ``start_ms``, then the time of the last advance."""
        return self._now

    @property
    def tick_ms(self) -> int:
        return self._tick

    @property
    def wheel_size(self) -> int:
        return self._eng.wheel_size

    @property
    def backend(self) -> str:
        """Which staging core runs ``schedule`` and ``cancel``: "c" (the extension) or "python"."""
        return "python" if isinstance(self, PyStage) else "c"

    def clock_ms(self) -> int:
        """The system clock as :meth:`run_due` reads it: ``start_ms`` plus the whole ms elapsed on
        ``clock`` since the timer was made, and never below ``now``."""
        return max(self._now, self._origin_ms + int((self._clock() - self._origin_s) * 1000))

    def pop_due(self, now_ms: int) -> list[Any]:
        """Move the clock to ``now_ms`` (>= ``now``) and return the payloads of every timer that
        became due, in Kafka's order, running nothing (a ``call_later`` timer's payload is its
        :class:`TimerCall`)."""
        return self._collect(now_ms)

    def advance_to(self, now_ms: int) -> list[Any]:
        """Move the clock to ``now_ms`` (>= ``now``) and deliver every timer that became due, in
        Kafka's order: a ``call_later`` timer's callback runs here, and the payloads of
        ``schedule`` timers are returned in order.  If a callback raises, the exception propagates
        and the timers after it (with the payloads not yet returned) stay due: the next advance
        delivers them first."""
        return self._run(self._collect(now_ms))

    def run_due(self) -> list[Any]:
        """:meth:`advance_to` the system clock's reading (:meth:`clock_ms`)."""
        return self._run(self._collect(None))

    def next_deadline(self) -> int | None:
        """When an advance next has work: ``now`` if timers are due already, else the expiration of
        the delay queue's first bucket (Kafka's ``DelayQueue`` head), else None (nothing
        scheduled).  No timer fires at an advance to an earlier time; the bucket may hold only
        cancelled timers, or timers that cascade to a lower wheel, and may be earlier than ``now``
        (a bucket a late add landed in: the next advance flushes it)."""
        if self._ready:
            return self._now
        self._flush()
        eng = self._eng
        if eng.S[L.HEAPN] == 0:
            return None
        return int(eng.bk[eng.heap[0], L.B_EXP])

    def __len__(self) -> int:
        """Pending timers (Kafka's ``SystemTimer.size``)."""
        self._flush()
        return self._eng.size()

    def flush(self) -> None:
        """Apply the staged operations to the engine now.  Never needed for correctness (whatever
        reads the engine flushes first); it lets a caller choose when the cost is paid."""
        self._flush()

    def reserve(self, pending: int) -> None:
        """Make room for ``pending`` pending timers (ids and the engine's chunk pool) up front."""
        pending = check_range("pending", pending, 1, MAX_TIMERS)
        want = min(pending + self._limit, MAX_TIMERS)
        if want > self._counts()[0]:
            self._grow(want)
        self._eng.reserve(self._counts()[0], pending=pending)

    def nbytes(self) -> int:
        """Bytes of the timer's tables: the engine's arrays, the staging core's tables and the id
        pool (not the handle and payload objects, which the caller holds too)."""
        return self._eng.nbytes() + self._stage_nbytes() + self._pool.itemsize * len(self._pool)

    # -- internals ------------------------------------------------------------------------------
    def _schedule_slow(self, delay_ms: object, payload: Any) -> int:
        """``schedule`` off the core's fast path: a delay that is not an exact int, out of range or
        due at once, or a stage with no free id left."""
        d = int(check_range("delay_ms", delay_ms, MIN_DELAY_MS, MAX_DELAY_MS))
        if d < self._due_below:
            return self._due_at_once(payload)
        self._restage()
        # The core's schedule itself (a LockedWheelTimer holds its lock already): an exact int in
        # range and a fresh stage, so the fast path takes it.
        return self._CORE.schedule(self, d, payload)

    def _due_at_once(self, payload: Any) -> int:
        # Kafka hands the task to its executor inside add; the wheel never holds it.  Its handle is
        # a new generation on row 0, which the table never holds: never pending.
        self._ready.append(payload)
        return self._new_generation()

    def _set_due_below(self) -> None:
        # Kafka's TimingWheel.add: due iff expiration < level 0's current_time + tick, that is
        # now + delay < that; level 0's clock moves only at an advance.
        self._due_below = int(self._eng.lv[0, L.LV_CUR]) + self._tick - self._now

    def _restage(self) -> None:
        """The stage ran out of ids: flush it and take the next ids from the pool."""
        self._flush()
        if len(self._pool) < min(self._limit, _MIN_STAGE):
            self._grow(2 * self._counts()[0])  # twice the ids
        k = min(self._limit, len(self._pool))
        # Sorted: the engine's task table is then written in address order.
        src = np.sort(np.frombuffer(self._pool, np.int64)[-k:])
        del self._pool[-k:]
        self._load_stage(src)

    def _grow(self, capacity: int) -> None:
        old = self._counts()[0]
        capacity = min(max(capacity, old + 1), MAX_TIMERS)
        if capacity <= old:
            raise RangeError(f"WheelTimer: more than {MAX_TIMERS} timers pending or staged")
        self._eng.reserve(capacity)  # (the engine may make room for more ids than asked)
        self._grow_rows(capacity)
        # New ids below the free ones, so the ids already free are used first.
        self._pool[:0] = array("q", range(capacity - 1, old - 1, -1))

    def _flush(self) -> None:
        """Apply the staged adds, then the staged cancels (module docstring: why in that order)."""
        _, _, nadd, ncan = self._counts()
        eng = self._eng
        if nadd:
            ids_b, delays_b = self._take_adds()
            ids = np.frombuffer(ids_b, np.int64)
            delays = np.frombuffer(delays_b, np.int64)
            if self._debug:
                fired, _ = eng.add_many(ids, delays)  # the public path: validation, checked kernels
            else:
                # Every id and delay was checked when staged: skip add_many's validation pass and
                # go to its kernel loop (which still grows the pool and checks the error slot).
                eng._add(ids, delays, eng.now)
                fired = eng._take_out()[0]
            if fired.size:
                raise InvariantError(f"WheelTimer: {fired.size} staged timers were due at once "
                                     f"(first id {int(fired[0])}): the due-at-once threshold is stale")
        if ncan:
            ids = np.frombuffer(self._take_cancels(), np.int64)
            if self._debug:
                found = eng.cancel_many(ids)
                if not found.all():
                    raise InvariantError(f"WheelTimer: a staged cancel found id {int(ids[np.argmin(found)])} "
                                         "not pending")
            else:  # ids of pending timers, checked when staged: cancel_many's kernel without its checks
                K.cancel_range(eng.S, eng.live, ids, np.empty(ids.shape[0], np.int8))
            self._pool.frombytes(ids.tobytes())
            # Last, with the tables right: dropping a payload may run its finaliser.
            self._release()

    def _collect(self, now_ms: int | None) -> list[Any]:
        """Advance to ``now_ms`` (None: the system clock) and take what is due, in order."""
        t = self.clock_ms() if now_ms is None else check_time("now_ms", now_ms)
        if t < self._now:
            raise ValueError(f"now_ms={t} is before the timer's clock {self._now}: time never goes back")
        self._flush()
        ids, _ = self._eng.advance_to(t)
        self._now = t
        self._set_due_below()
        due, self._ready = self._ready, []
        if ids.shape[0]:
            ids64 = np.ascontiguousarray(ids, np.int64)
            due.extend(self._close(ids64))  # fired: their rows close, their payloads come out in order
            self._pool.frombytes(ids64.tobytes())
        return due

    def _run(self, due: list[Any]) -> list[Any]:
        """Call the :class:`TimerCall` payloads in order; return the others."""
        out: list[Any] = []
        k = 0
        try:
            for p in due:
                k += 1
                if p.__class__ is TimerCall:
                    p.callback(*p.args)
                else:
                    out.append(p)
        except BaseException:
            self._requeue(out + due[k:])
            raise
        return out

    def _requeue(self, rest: list[Any]) -> None:
        self._ready[:0] = rest


class WheelTimer(_WheelTimerLogic, _Core):
    __doc__ = _WheelTimerLogic.__doc__
    __slots__ = _SLOTS
    _CORE = _Core


class PyWheelTimer(_WheelTimerLogic, PyStage):
    """:class:`WheelTimer` on the Python staging core whether or not the C one is built: the same
    timer, slower per ``schedule`` and ``cancel`` (for comparisons and the lockstep tests)."""

    __slots__ = _SLOTS
    _CORE = PyStage


class LockedWheelTimer(WheelTimer):
    """:class:`WheelTimer` for several threads: one ``threading.Lock`` around every operation on
    the timer's state (the lock order is the order the operations take effect, as Kafka's
    ``SystemTimer`` serialises ``add`` and the flush with its lock).  Callbacks run outside the
    lock, in the thread that advances, so a callback may schedule or cancel timers."""

    __slots__ = ("_lock",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        super().__init__(*args, **kwargs)

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    def schedule(self, delay_ms: int, payload: Any = None) -> int:
        with self._lock:
            return WheelTimer.schedule(self, delay_ms, payload)

    def cancel(self, handle: int) -> bool:
        with self._lock:
            return WheelTimer.cancel(self, handle)

    def next_deadline(self) -> int | None:
        with self._lock:
            return WheelTimer.next_deadline(self)

    def __len__(self) -> int:
        with self._lock:
            return WheelTimer.__len__(self)

    def flush(self) -> None:
        with self._lock:
            WheelTimer.flush(self)

    def reserve(self, pending: int) -> None:
        with self._lock:
            WheelTimer.reserve(self, pending)

    def _collect(self, now_ms: int | None) -> list[Any]:
        with self._lock:
            return WheelTimer._collect(self, now_ms)

    def _requeue(self, rest: list[Any]) -> None:
        with self._lock:
            WheelTimer._requeue(self, rest)
