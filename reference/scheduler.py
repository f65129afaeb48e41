"""A deterministic scheduler for cooperative threads, with the locks Kafka's timer and purgatory use.

Kafka's concurrency bugs (lost wakeups, deadlocks, a cancel racing a bucket flush) live between the
atomic steps of a few methods.  Real threads find them by luck; this module runs *simulated*
threads whose every atomic step is a ``yield``, and lets a *schedule* -- plain data -- decide which
thread takes the next step.  A schedule that exposes a bug replays it exactly, and Hypothesis can
draw and shrink it.

A simulated thread is a generator.  It yields *requests*:

* :class:`Step` -- "my next atomic step is <label>"; always enabled;
* :class:`Acquire` -- "my next step takes <lock>"; enabled only while the lock is available to this
  thread (a blocked thread cannot step); the scheduler grants the lock when it picks the thread;
* :class:`WaitUntil` -- "my next step needs <predicate>" (the executor waiting for work).

Releasing a lock never blocks, so a thread releases inline (``lock.release(tid)``).

Locks model the JVM's: :class:`SimLock` is a reentrant monitor (``synchronized``, ``ReentrantLock``)
with ``try_acquire`` for ``tryLock``; :class:`SimRWLock` is ``ReentrantReadWriteLock`` (a reader
cannot upgrade; a writer may also read).

A run stops when every thread has finished, or when no unfinished thread is enabled: a *deadlock*,
reported with each thread's position and the locks it holds; an exception raised inside a thread
is a *crash* (the JVM's NullPointerException in KAFKA-2226 is one).

Schedules: :func:`segment_chooser` reads ``(thread, steps)`` pairs (few preemptions, what Hypothesis
draws); :func:`list_chooser` reads a list of ints (``choice % number_of_enabled_threads`` picks
among the enabled threads, lowest id first; when the list runs out the lowest enabled thread runs),
which is what Hypothesis draws and shrinks.  :func:`pct_chooser` is PCT (Burckhardt et al.,
"A randomized scheduler with probabilistic guarantees of finding bugs", ASPLOS 2010): random thread
priorities, ``depth - 1`` random priority-change points, always run the highest-priority enabled
thread.  Every choice made is recorded, so any run -- PCT included -- can be replayed by
:func:`list_chooser` from ``run.choices``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Generator, Sequence
from typing import Any

# ----------------------------------------------------------------------------------- requests


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """The thread's next atomic step, always enabled."""

    label: str


@dataclasses.dataclass(frozen=True, slots=True)
class Acquire:
    """The thread's next step takes ``lock`` (``mode`` ``x``: exclusive, ``r``/``w``: read/write)."""

    lock: SimLock | SimRWLock
    mode: str
    label: str


@dataclasses.dataclass(frozen=True, slots=True)
class WaitUntil:
    """The thread's next step needs ``predicate()`` to hold (a condition wait)."""

    predicate: Callable[[], bool]
    label: str


Request = Step | Acquire | WaitUntil
#: A simulated thread: a generator yielding requests, returning its result.
ThreadBody = Generator[Request, None, Any]


class SimLock:
    """A reentrant monitor: Java's ``synchronized`` / ``ReentrantLock``."""

    __slots__ = ("name", "owner", "count")

    def __init__(self, name: str) -> None:
        self.name = name
        self.owner: int | None = None
        self.count = 0

    def available(self, tid: int, mode: str = "x") -> bool:
        return self.owner is None or self.owner == tid

    def grant(self, tid: int, mode: str = "x") -> None:
        assert self.available(tid), f"{self.name}: granted while held by T{self.owner}"
        self.owner = tid
        self.count += 1

    def try_acquire(self, tid: int) -> bool:
        """``tryLock()``: take the lock if it is available, never wait."""
        if not self.available(tid):
            return False
        self.grant(tid)
        return True

    def release(self, tid: int, mode: str = "x") -> None:
        assert self.owner == tid, f"{self.name}: released by T{tid} but held by T{self.owner}"
        self.count -= 1
        if self.count == 0:
            self.owner = None

    def holders(self) -> list[tuple[int, str]]:
        return [] if self.owner is None else [(self.owner, "x")]

    def __repr__(self) -> str:
        return f"SimLock({self.name})"


class SimRWLock:
    """``ReentrantReadWriteLock``: many readers or one writer; the writer may read as well, a
    reader may not upgrade (its write request waits for every reader to leave, itself included:
    that is a deadlock, as on the JVM)."""

    __slots__ = ("name", "readers", "writer", "wcount")

    def __init__(self, name: str) -> None:
        self.name = name
        self.readers: dict[int, int] = {}
        self.writer: int | None = None
        self.wcount = 0

    def available(self, tid: int, mode: str) -> bool:
        if mode == "r":
            return self.writer is None or self.writer == tid
        return (self.writer is None or self.writer == tid) and not self.readers

    def grant(self, tid: int, mode: str) -> None:
        assert self.available(tid, mode), f"{self.name}: {mode} granted while unavailable"
        if mode == "r":
            self.readers[tid] = self.readers.get(tid, 0) + 1
        else:
            self.writer = tid
            self.wcount += 1

    def release(self, tid: int, mode: str) -> None:
        if mode == "r":
            n = self.readers[tid] - 1
            if n:
                self.readers[tid] = n
            else:
                del self.readers[tid]
        else:
            assert self.writer == tid
            self.wcount -= 1
            if self.wcount == 0:
                self.writer = None

    def holders(self) -> list[tuple[int, str]]:
        out = [(t, "r") for t in self.readers]
        if self.writer is not None:
            out.append((self.writer, "w"))
        return out

    def __repr__(self) -> str:
        return f"SimRWLock({self.name})"


class Ctx:
    """What a simulated thread knows about itself: its id, and helpers to take locks."""

    __slots__ = ("tid", "name", "held")

    def __init__(self, tid: int, name: str) -> None:
        self.tid = tid
        self.name = name
        self.held: list[tuple[SimLock | SimRWLock, str]] = []

    def acquire(self, lock: SimLock | SimRWLock, mode: str = "x", label: str = "") -> ThreadBody:
        yield Acquire(lock, mode, label or f"lock {lock.name}{'' if mode == 'x' else '.' + mode}")
        self.held.append((lock, mode))

    def try_acquire(self, lock: SimLock) -> bool:
        """``tryLock()`` inside the current step: take it if free, never wait."""
        if lock.try_acquire(self.tid):
            self.held.append((lock, "x"))
            return True
        return False

    def release(self, lock: SimLock | SimRWLock, mode: str = "x") -> None:
        lock.release(self.tid, mode)
        self.held.remove((lock, mode))

    def step(self, label: str) -> ThreadBody:
        yield Step(label)


# ----------------------------------------------------------------------------------- choosers

#: ``chooser(step_index, enabled_thread_ids, current_thread_or_None) -> chosen thread id``
Chooser = Callable[[int, list[int], "int | None"], int]


def list_chooser(choices: Sequence[int]) -> Chooser:
    """Replay / Hypothesis schedule: at step k pick ``enabled[choices[k] % len(enabled)]``; past
    the end of the list, the lowest enabled thread (so shrinking towards 0 means "run in order")."""

    def choose(k: int, enabled: list[int], current: int | None) -> int:
        if k < len(choices):
            return enabled[choices[k] % len(enabled)]
        return enabled[0]

    return choose


def segment_chooser(segments: Sequence[tuple[int, int]]) -> Chooser:
    """Context-bounded schedule, the form Hypothesis searches best: ``(thread, n)`` pairs mean "run
    thread ``thread`` for up to n steps while it is enabled"; a disabled
    thread ends its segment early.  After the last segment nobody is preempted: the current thread
    runs on while enabled, else the lowest enabled one.  Most races need two or three preemptions,
    so a short list expresses them and shrinks to one a person can read."""
    state = {"i": 0, "left": segments[0][1] if segments else 0}

    def choose(k: int, enabled: list[int], current: int | None) -> int:
        while state["i"] < len(segments):
            t, _ = segments[state["i"]]
            if state["left"] > 0 and t in enabled:
                state["left"] -= 1
                return t
            state["i"] += 1
            state["left"] = segments[state["i"]][1] if state["i"] < len(segments) else 0
        return current if current in enabled else enabled[0]

    return choose


def pct_chooser(seed: int, n_threads: int, depth: int = 3, max_steps: int = 200) -> Chooser:
    """PCT: distinct random priorities; at ``depth - 1`` random steps the running thread's priority
    drops below every initial one.  Finds any bug of depth ``d`` with probability at least
    ``1 / (n * k**(d-1))`` per run (n threads, k steps)."""
    rng = random.Random(seed)
    prio = {t: p for t, p in zip(range(n_threads), rng.sample(range(depth, depth + n_threads), n_threads))}
    changes = {rng.randrange(max_steps): i for i in range(depth - 1)}

    def choose(k: int, enabled: list[int], current: int | None) -> int:
        best = max(enabled, key=lambda t: prio.get(t, 0))
        if k in changes:
            prio[best] = changes[k]
            best = max(enabled, key=lambda t: prio.get(t, 0))
        return best

    return choose


# ----------------------------------------------------------------------------------- running


@dataclasses.dataclass
class Blocked:
    """One thread's position when a run deadlocked."""

    thread: str
    waiting_for: str
    holds: list[str]


@dataclasses.dataclass
class Run:
    """What one scheduled run did: every step taken (thread id, label), the choices that picked
    them (replayable with :func:`list_chooser`), results, and how it ended."""

    names: list[str]
    steps: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    choices: list[int] = dataclasses.field(default_factory=list)
    results: dict[int, Any] = dataclasses.field(default_factory=dict)
    deadlock: list[Blocked] | None = None
    crash: tuple[int, str, str] | None = None  # (thread id, position, exception)
    exhausted: bool = False  # stopped by max_steps (a livelock or a very long run)

    @property
    def ok(self) -> bool:
        return self.deadlock is None and self.crash is None and not self.exhausted

    def problems(self) -> list[str]:
        out = []
        if self.deadlock is not None:
            out.append("deadlock: " + "; ".join(
                f"{b.thread} waits for {b.waiting_for} holding [{', '.join(b.holds)}]" for b in self.deadlock))
        if self.crash is not None:
            tid, pos, exc = self.crash
            out.append(f"crash: {self.names[tid]} at '{pos}': {exc}")
        if self.exhausted:
            out.append(f"no progress within {len(self.steps)} steps")
        return out

    def timeline(self, width: int = 34, notes: dict[int, list[str]] | None = None) -> str:
        """The run as a per-thread timeline: one row per step, one column per thread; ``notes``
        maps a step index to remarks printed beside it (calls returning, events)."""
        cols = self.names
        head = "step  " + " | ".join(f"{c[:width]:<{width}}" for c in cols)
        lines = [head, "-" * len(head)]
        for i, (tid, label) in enumerate(self.steps):
            cells = [(label[:width] if t == tid else "") for t in range(len(cols))]
            row = f"{i:>4}  " + " | ".join(f"{c:<{width}}" for c in cells)
            if notes and i in notes:
                row += "   # " + "; ".join(notes[i])
            lines.append(row.rstrip())
        lines.extend("  ** " + p for p in self.problems())
        return "\n".join(lines)


class Scheduler:
    """Runs named simulated threads under a chooser, one atomic step at a time.

    ``bodies`` are ``(name, make)`` pairs; ``make(ctx)`` returns the thread's generator.  Threads
    marked ``daemon`` (the timer's executor) do not keep a run alive: the run ends when every other
    thread has finished and no daemon is enabled.
    """

    def __init__(self, bodies: Sequence[tuple[str, Callable[[Ctx], ThreadBody]]],
                 daemons: Sequence[str] = ()) -> None:
        self.ctxs = [Ctx(i, name) for i, (name, _) in enumerate(bodies)]
        self.gens = [make(ctx) for ctx, (_, make) in zip(self.ctxs, bodies)]
        self.daemon = [name in daemons for name, _ in bodies]
        self.pending: list[Request | None] = [Step("start") for _ in bodies]
        self.done = [False] * len(bodies)
        #: the global step counter: the "time" of a concurrent history
        self.clock = 0
        self.current: int | None = None

    def _enabled(self, t: int) -> bool:
        if self.done[t]:
            return False
        req = self.pending[t]
        if isinstance(req, Acquire):
            return req.lock.available(t, req.mode)
        if isinstance(req, WaitUntil):
            return bool(req.predicate())
        return True

    def users_done(self) -> bool:
        """Have all non-daemon threads finished? (The executor uses this to know when to stop.)"""
        return all(d or dm for d, dm in zip(self.done, self.daemon))

    def run(self, chooser: Chooser, max_steps: int = 5000) -> Run:
        run = Run([c.name for c in self.ctxs])
        while True:
            enabled = [t for t in range(len(self.gens)) if self._enabled(t)]
            if not enabled:
                if not self.users_done():
                    run.deadlock = [self._position(t) for t in range(len(self.gens)) if not self.done[t]]
                return run
            if len(run.steps) >= max_steps:
                run.exhausted = True
                return run
            t = chooser(self.clock, enabled, self.current)
            if t not in enabled:
                raise ValueError(f"chooser picked T{t}, which is not enabled (enabled: {enabled})")
            run.choices.append(enabled.index(t))
            req = self.pending[t]
            assert req is not None
            if isinstance(req, Acquire):
                req.lock.grant(t, req.mode)
            run.steps.append((t, req.label))
            self.current = t
            try:
                self.pending[t] = next(self.gens[t])
            except StopIteration as stop:
                self.done[t] = True
                self.pending[t] = None
                run.results[t] = stop.value
            except Exception as e:  # noqa: BLE001 - a crash inside the model (an NPE in Kafka): stop, report
                run.crash = (t, req.label, f"{type(e).__name__}: {e}")
                self.clock += 1
                return run
            self.clock += 1

    def _position(self, t: int) -> Blocked:
        req = self.pending[t]
        what = req.label if req is not None else "?"
        if isinstance(req, Acquire):
            owners = ", ".join(f"T{o}.{m}" for o, m in req.lock.holders())
            what = f"{req.label} (held by {owners})"
        holds = [f"{lk.name}{'' if m == 'x' else '.' + m}" for lk, m in self.ctxs[t].held]
        return Blocked(self.ctxs[t].name, what, holds)


def drain(body: ThreadBody, ctx: Ctx | None = None) -> Any:
    """Run one generator to completion alone (sequential use of the step model).  Every lock it
    asks for must be free, since nobody else runs."""
    ctx = ctx if ctx is not None else Ctx(0, "main")
    try:
        req = next(body)
        while True:
            if isinstance(req, Acquire):
                if not req.lock.available(ctx.tid, req.mode):
                    raise RuntimeError(f"sequential run blocked on {req.lock.name}: a lock was leaked")
                req.lock.grant(ctx.tid, req.mode)
            elif isinstance(req, WaitUntil) and not req.predicate():
                raise RuntimeError(f"sequential run waits forever at '{req.label}'")
            req = body.send(None)
    except StopIteration as stop:
        return stop.value
