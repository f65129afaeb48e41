"""The reference, decomposed into atomic steps at Kafka's lock and CAS granularity.

The readable reference (:mod:`.system_timer`, :mod:`.purgatory`, ...) says *what* Kafka's classes
compute; this module says *how they interleave*.  It models the same classes -- ``TimerTaskEntry``,
``TimerTaskList``, ``TimingWheel``, ``SystemTimer``, ``DelayedOperation``,
``DelayedOperationPurgatory`` -- with every public method written as a generator that yields before
each atomic step (see :mod:`.scheduler`).  The locks are Kafka's:

==================================  ===========================================================
lock (name in timelines)            Kafka
==================================  ===========================================================
``timer.rw`` / ``ptimer.rw``        ``SystemTimer``'s ``ReentrantReadWriteLock`` (add: read,
                                    advanceClock's flush loop: write)
``B<level>.<slot>``                 ``synchronized (TimerTaskList)``: a bucket's monitor
``e(t<id>)``                        ``synchronized (TimerTaskEntry)``
``t<id>`` / ``op<id>``              ``synchronized (TimerTask)`` (``cancel``, ``setTimerTaskEntry``)
``op<id>.lock``                     ``DelayedOperation.lock`` (``safeTryComplete[OrElse]``)
``shard<i>``                        ``WatcherList.watchersLock``
==================================  ===========================================================

The ``completed`` flag is a compare-and-set (one step); counters (``taskCounter``,
``estimatedTotalOperations``) are atomics; a watch list (``ConcurrentLinkedQueue``) is lock-free:
appends and removals are single steps and a walk sees one element per step, including elements
appended after the walk began (a weakly consistent iterator).  The delay queue is the reference's
:class:`~.delay_queue.DelayQueue` (the JDK's heap, so fire order is Kafka's); each ``offer`` and
``poll`` is one step (``DelayQueue`` has its own internal lock).

Run alone (:func:`.scheduler.drain`, ``executor="inline"``) the model produces exactly the events of
:class:`.simulation.Simulation` (tested).  Run concurrently, due operations go to an executor
thread, as in Kafka: running them inline on the reaper would deadlock (the reaper holds a bucket
monitor while an operation's ``cancel`` wants it; Kafka avoided that with its executor).

``mutants`` reintroduces known races, one flag each (see :mod:`.mutants`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import Any

from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.limits import (check_delay, check_key, check_keys, check_purge_interval, check_range,
                                   check_tick, check_time, check_wheel_size)

from .clock import ManualClock
from .delay_queue import DelayQueue
from .purgatory import shard_of
from .scheduler import Ctx, SimLock, SimRWLock, Step, ThreadBody, WaitUntil

MAX_ID = 2**31 - 1


# ------------------------------------------------------------------------------- tasks, entries


class Task:
    """``TimerTask``: its current entry, guarded by the task's monitor."""

    is_op = False

    def __init__(self, task_id: int, delay_ms: int) -> None:
        self.task_id = task_id
        self.delay_ms = delay_ms
        self.entry: Entry | None = None
        self.exp: int | None = None
        self.monitor = SimLock(f"t{task_id}")

    @property
    def label(self) -> str:
        return f"t{self.task_id}"


class Entry:
    """``TimerTaskEntry``: a node of a bucket's list."""

    __slots__ = ("task", "exp", "list", "next", "prev", "monitor")

    def __init__(self, task: Task | None, exp: int) -> None:
        self.task = task
        self.exp = exp
        self.list: Bucket | None = None
        self.next: Entry | None = None
        self.prev: Entry | None = None
        self.monitor = SimLock(f"e({task.label})" if task is not None else "root")

    def cancelled(self) -> bool:
        # A lock-free read of the task's current entry, as in Kafka.
        return self.task is None or self.task.entry is not self


def new_entry(ctx: Ctx, task: Task, exp: int) -> ThreadBody:
    """``new TimerTaskEntry(task, exp)``: the constructor calls ``task.setTimerTaskEntry(this)``,
    which (under the task's monitor) unlinks the task's previous entry first."""
    entry = Entry(task, exp)
    yield from ctx.acquire(task.monitor, label=f"new entry {task.label}: lock {task.label}")
    old = task.entry
    if old is not None and old is not entry:
        yield from entry_remove(ctx, old)
    task.entry = entry
    ctx.release(task.monitor)
    return entry


def entry_remove(ctx: Ctx, entry: Entry) -> ThreadBody:
    """``TimerTaskEntry.remove``: read ``list``, ask that bucket to remove us, and re-read: a flush
    can move the entry between the read and the bucket's lock, and then nothing was removed."""
    removed = False
    current = entry.list
    while current is not None:
        removed = (yield from current.remove(ctx, entry)) or removed
        current = entry.list
    return removed


def task_cancel(ctx: Ctx, task: Task) -> ThreadBody:
    """``TimerTask.cancel``: under the task's monitor, unlink the current entry and forget it.
    Returns whether a linked entry was removed (as the reference reports)."""
    yield from ctx.acquire(task.monitor, label=f"cancel {task.label}: lock {task.label}")
    removed = False
    if task.entry is not None:
        removed = yield from entry_remove(ctx, task.entry)
    task.entry = None
    ctx.release(task.monitor)
    return removed


# ------------------------------------------------------------------------------- buckets


class Bucket:
    """``TimerTaskList``: a circular doubly linked list with a sentinel, and an expiration."""

    def __init__(self, timer: Timer, name: str) -> None:
        self.timer = timer
        self.name = name
        self.root = Entry(None, -1)
        self.root.next = self.root.prev = self.root
        self.expiration = -1
        self.monitor = SimLock(name)

    def get_expiration(self) -> int:  # what the delay queue's heap compares
        return self.expiration

    def set_expiration(self, ctx: Ctx, exp: int) -> ThreadBody:
        """``expiration.getAndSet(exp) != exp`` (an atomic)."""
        yield Step(f"{self.name}.setExpiration({exp})")
        old, self.expiration = self.expiration, exp
        return old != exp

    def add(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        done = False
        while not done:
            yield from entry_remove(ctx, entry)
            yield from ctx.acquire(self.monitor, label=f"{self.name}.add: lock {self.name}")
            yield from ctx.acquire(entry.monitor, label=f"{self.name}.add: lock {entry.monitor.name}, link")
            if entry.list is None:
                tail = self.root.prev
                assert tail is not None
                entry.next, entry.prev, entry.list = self.root, tail, self
                tail.next = entry
                self.root.prev = entry
                self.timer.counter += 1
                done = True
            ctx.release(entry.monitor)
            ctx.release(self.monitor)

    def remove(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        yield from ctx.acquire(self.monitor, label=f"{self.name}.remove: lock {self.name}")
        yield from ctx.acquire(entry.monitor, label=f"{self.name}.remove: lock {entry.monitor.name}, unlink")
        removed = False
        # KAFKA-2226: without the `list is this` test, a remove that lost a race with a flush
        # unlinks an entry that is no longer here (NullPointerException on the JVM).
        if entry.list is self or "remove-wrong-list" in self.timer.mutants:
            nxt, prv = entry.next, entry.prev
            nxt.prev = prv  # type: ignore[union-attr]  # an AttributeError here is the JVM's NPE
            prv.next = nxt  # type: ignore[union-attr]
            entry.next = entry.prev = entry.list = None
            self.timer.counter -= 1
            removed = True
        ctx.release(entry.monitor)
        ctx.release(self.monitor)
        return removed

    def flush(self, ctx: Ctx, f: Callable[[Ctx, Entry], ThreadBody]) -> ThreadBody:
        yield from ctx.acquire(self.monitor, label=f"flush {self.name}: lock {self.name}")
        head = self.root.next
        while head is not self.root:
            assert head is not None
            yield from self.remove(ctx, head)
            yield from f(ctx, head)
            head = self.root.next
        self.expiration = -1
        ctx.release(self.monitor)

    def entries(self) -> list[Entry]:
        out, e = [], self.root.next
        while e is not self.root:
            assert e is not None
            out.append(e)
            e = e.next
        return out


# ------------------------------------------------------------------------------- wheels, timer


class Wheel:
    """``TimingWheel``: placement and the lazy clock (arithmetic as in :mod:`.wheel`)."""

    def __init__(self, timer: Timer, tick_ms: int, size: int, start_ms: int, level: int) -> None:
        self.timer = timer
        self.tick = tick_ms
        self.size = size
        self.interval = tick_ms * size
        self.level = level
        self.buckets = [Bucket(timer, f"{timer.prefix}{level}.{i}") for i in range(size)]
        self.current_time = start_ms - (start_ms % tick_ms)
        self.overflow: Wheel | None = None
        self.monitor = SimLock(f"{timer.prefix}wheel{level}")

    def add(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        exp = entry.exp
        if entry.cancelled():
            return False
        if exp < self.current_time + self.tick:
            return False
        if exp < self.current_time + self.interval:
            vid = exp // self.tick
            bucket = self.buckets[vid % self.size]
            yield from bucket.add(ctx, entry)
            if (yield from bucket.set_expiration(ctx, vid * self.tick)):
                yield Step(f"offer {bucket.name} to the delay queue")
                self.timer.queue.offer(bucket)  # type: ignore[arg-type]
            return True
        if self.overflow is None:
            # addOverflowWheel is synchronized and checks again (another adder may have won).
            yield from ctx.acquire(self.monitor, label=f"add overflow wheel: lock {self.monitor.name}")
            if self.overflow is None:
                self.overflow = Wheel(self.timer, self.interval, self.size, self.current_time, self.level + 1)
            ctx.release(self.monitor)
        return (yield from self.overflow.add(ctx, entry))

    def advance_clock(self, time_ms: int) -> None:
        if time_ms >= self.current_time + self.tick:
            self.current_time = time_ms - (time_ms % self.tick)
            if self.overflow is not None:
                self.overflow.advance_clock(self.current_time)

    def levels(self) -> list[Wheel]:
        out, w = [], self
        while w is not None:
            out.append(w)
            w = w.overflow
        return out


class Timer:
    """``SystemTimer``: ``add`` under the read lock, the flush loop under the write lock.

    ``executor="inline"`` runs a due task where it is handed over (sequential runs: the same
    events as the reference); ``"thread"`` queues it for :meth:`executor_body`, Kafka's
    single executor thread."""

    def __init__(self, sim: StepSimulation, name: str, tick_ms: int, wheel_size: int, start_ms: int,
                 listener: Callable[[ev.Event], None] | None, executor: str, mutants: frozenset[str]) -> None:
        self.sim = sim
        self.name = name
        self.prefix = "B" if name == "timer" else "P"
        self.mutants = mutants
        self.clock = sim.clock
        self.counter = 0  # taskCounter
        self.queue = DelayQueue(sim.clock)
        self.rw = SimRWLock(f"{name}.rw")
        self.wheel = Wheel(self, tick_ms, wheel_size, start_ms, 0)
        self.listener = listener
        self.executor = executor
        self.work: collections.deque[Task] = collections.deque()

    def add(self, ctx: Ctx, task: Task) -> ThreadBody:
        yield from ctx.acquire(self.rw, "r", label=f"{self.name}.add {task.label}: readLock")
        exp = task.delay_ms + self.clock.now_ms()
        task.exp = exp  # remembered for the expiration property (onExpiration never early)
        entry = yield from new_entry(ctx, task, exp)
        yield from self.add_entry(ctx, entry)
        ctx.release(self.rw, "r")
        return exp

    def add_entry(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        if not (yield from self.wheel.add(ctx, entry)):
            yield Step(f"{self.name}: {entry.task.label if entry.task else '?'} due; cancelled? else submit")
            # The cancelled() test is the only guard against running a task whose cancel raced
            # this flush (the documented race window).
            if not entry.cancelled():
                yield from self.submit(ctx, entry)

    def submit(self, ctx: Ctx, entry: Entry) -> ThreadBody:
        task = entry.task
        assert task is not None
        if self.listener is not None:
            self.listener(ev.Fire(self.clock.now_ms(), task.task_id, entry.exp))
        elif self.sim.scheduler is not None:
            # The purgatory's timer reports no events (as in the reference); remember the hand-over
            # step so that a history can say from when an expiry may take effect.
            self.sim.handed_over[task.task_id] = self.sim.scheduler.clock
        if self.executor == "thread":
            self.work.append(task)
        elif task.is_op:
            yield from task.run(ctx)  # type: ignore[attr-defined]

    def advance_clock(self, ctx: Ctx) -> ThreadBody:
        yield Step(f"{self.name}: poll the delay queue")
        bucket = self.queue.poll(0)
        if bucket is None:
            return False
        yield from ctx.acquire(self.rw, "w", label=f"{self.name}.advanceClock: writeLock")
        while bucket is not None:
            self.wheel.advance_clock(bucket.get_expiration())
            yield from bucket.flush(ctx, self.add_entry)  # type: ignore[attr-defined]
            yield Step(f"{self.name}: poll again")
            bucket = self.queue.poll(0)
        ctx.release(self.rw, "w")
        return True

    def executor_body(self, users_done: Callable[[], bool]) -> Callable[[Ctx], ThreadBody]:
        """Kafka's ``taskExecutor``: one thread running handed-over tasks in order."""

        def body(ctx: Ctx) -> ThreadBody:
            while True:
                yield WaitUntil(lambda: bool(self.work) or users_done(), f"{self.name} executor: take a task")
                if not self.work:
                    return None
                task = self.work.popleft()
                if task.is_op:
                    yield from task.run(ctx)  # type: ignore[attr-defined]

        return body

    # -- inspection ------------------------------------------------------------------------------
    def linked_entries(self) -> list[Entry]:
        return [e for w in self.wheel.levels() for b in w.buckets for e in b.entries()]


# ------------------------------------------------------------------------------- operations


class Op(Task):
    """``DelayedOperation`` with the test ``MockDelayedOperation``'s ``tryComplete`` (succeeds iff
    ``completable``).  Two locks: the task monitor it inherits, and its own ``lock``."""

    is_op = True

    def __init__(self, sim: StepSimulation, op_id: int, delay_ms: int, completable: bool = False) -> None:
        super().__init__(op_id, delay_ms)
        self.sim = sim
        self.monitor.name = f"op{op_id}"
        self.lock = SimLock(f"op{op_id}.lock")
        self.completed = False
        self.completable = completable
        self.completes_on_retry = False  # spec.ops.Watch: true from the second look on
        self.keys: tuple[Any, ...] = ()
        self.watched = False
        #: (step, thread id) at which the completed flag was won, for the lost-wakeup property
        self.completed_at: tuple[int, int | None] | None = None

    @property
    def label(self) -> str:
        return f"op{self.task_id}"

    @property
    def mutants(self) -> frozenset[str]:
        return self.sim.mutants

    def force_complete(self, ctx: Ctx, via: str) -> ThreadBody:
        """``if (completed.compareAndSet(false, true)) { cancel(); onComplete(); }``."""
        yield Step(f"{self.label}.forceComplete: CAS completed")
        if "unguarded-completed" in self.mutants:
            # The flag read and written in two steps: two completers can both win.
            seen = self.completed
            yield Step(f"{self.label}.forceComplete: write completed")
            if seen:
                return False
            self.completed = True
        else:
            if self.completed:
                return False
            self.completed = True
        self.sim.note_completed(self)
        yield from task_cancel(ctx, self)
        self.sim.emit(ev.Complete(self.sim.clock.now_ms(), self.task_id, via))
        return True

    def try_complete(self, ctx: Ctx, via: str) -> ThreadBody:
        yield Step(f"{self.label}.tryComplete: read completable")
        if self.completable:
            return (yield from self.force_complete(ctx, via))
        if self.completes_on_retry:
            self.completes_on_retry = False
            self.completable = True  # the satisfying event arrives right after this first look
        return False

    def safe_try_complete_or_else(self, ctx: Ctx, f: Callable[[Ctx], ThreadBody]) -> ThreadBody:
        yield from ctx.acquire(self.lock, label=f"tryCompleteElseWatch: lock {self.lock.name}")
        if (yield from self.try_complete(ctx, "try")):
            yield from self.unlock(ctx)
            return True
        yield from f(ctx)
        if "no-second-try" in self.mutants:
            # KAFKA-1952's window: satisfied after the first try, before the keys were watched.
            yield from self.unlock(ctx)
            return False
        result = yield from self.try_complete(ctx, "try")
        yield from self.unlock(ctx)
        return result

    def unlock(self, ctx: Ctx) -> ThreadBody:
        # The unlock is a step of its own: another thread can act between the holder's last
        # read under the lock and the unlock (the window a tryLock caller loses in).
        yield Step(f"unlock {self.lock.name}")
        ctx.release(self.lock)

    def safe_try_complete(self, ctx: Ctx) -> ThreadBody:
        if "trylock-check" in self.mutants:
            # KAFKA-8334: tryLock avoided a deadlock but skips an operation whose lock is busy.
            yield Step(f"checkAndComplete: tryLock {self.lock.name}")
            if not ctx.try_acquire(self.lock):
                return False
        else:
            yield from ctx.acquire(self.lock, label=f"checkAndComplete: lock {self.lock.name}")
        if self.completed:  # KAFKA-17848: never tryComplete a completed operation
            yield from self.unlock(ctx)
            return False
        result = yield from self.try_complete(ctx, "check")
        yield from self.unlock(ctx)
        return result

    def run(self, ctx: Ctx) -> ThreadBody:
        """The timeout fired (on the executor): complete, and if that won, onExpiration."""
        if (yield from self.force_complete(ctx, "expire")):
            self.sim.emit(ev.Expire(self.sim.clock.now_ms(), self.task_id))


# ------------------------------------------------------------------------------- purgatory


class Watchers:
    """The operations watching one key (``ConcurrentLinkedQueue``), in watch order."""

    def __init__(self, key: Any) -> None:
        self.key = key
        self.ops: dict[int, Op] = {}
        self.seq = 0

    def watch(self, op: Op) -> None:
        self.seq += 1
        self.ops[self.seq] = op

    def next_after(self, cursor: int) -> int | None:
        later = [s for s in self.ops if s > cursor]
        return min(later) if later else None


class Purgatory:
    """``DelayedOperationPurgatory`` over :class:`WatcherList` shards (a lock and a key map each)."""

    def __init__(self, sim: StepSimulation, timer: Timer, purge_interval: int, shards: int) -> None:
        self.sim = sim
        self.timer = timer
        self.purge_interval = purge_interval
        self.shard_locks = [SimLock(f"shard{i}") for i in range(shards)]
        self.maps: list[dict[Any, Watchers]] = [{} for _ in range(shards)]
        self.estimated = 0

    def _shard(self, key: Any) -> int:
        return shard_of(key, len(self.maps))

    @property
    def mutants(self) -> frozenset[str]:
        return self.sim.mutants

    def try_complete_else_watch(self, ctx: Ctx, op: Op, keys: tuple[Any, ...]) -> ThreadBody:
        def watch_all(ctx: Ctx) -> ThreadBody:
            for key in keys:
                if not op.completed:  # current Kafka: stop watching once completed elsewhere
                    yield from self.watch_for_operation(ctx, key, op)
            yield Step(f"{op.label}: estimated += 1")
            self.estimated += 1

        if (yield from op.safe_try_complete_or_else(ctx, watch_all)):
            return True
        yield Step(f"{op.label}: completed? else add to {self.timer.name}")
        if not op.completed:
            yield from self.timer.add(ctx, op)
            yield Step(f"{op.label}: completed meanwhile? then cancel")
            if op.completed:
                yield from task_cancel(ctx, op)
        return False

    def watch_for_operation(self, ctx: Ctx, key: Any, op: Op) -> ThreadBody:
        i = self._shard(key)
        yield from ctx.acquire(self.shard_locks[i], label=f"watch {op.label} on {key!r}: lock shard{i}")
        watchers = self.maps[i].get(key)
        if watchers is None:
            watchers = self.maps[i][key] = Watchers(key)
        if "watch-outside-shard-lock" in self.mutants:
            # The list is looked up under the lock but appended to after it: a concurrent
            # removeKeyIfEmpty can drop the list in between, orphaning the operation.
            ctx.release(self.shard_locks[i])
            yield Step(f"watchers({key!r}).watch({op.label}) outside the lock")
            watchers.watch(op)
        else:
            watchers.watch(op)
            ctx.release(self.shard_locks[i])

    def check_and_complete(self, ctx: Ctx, key: Any) -> ThreadBody:
        i = self._shard(key)
        yield from ctx.acquire(self.shard_locks[i], label=f"checkAndComplete({key!r}): lock shard{i}")
        watchers = self.maps[i].get(key)
        if "check-holds-shard-lock" in self.mutants:
            # KAFKA-3994's shape: walking the list (taking operation locks) under the shard
            # lock, while tryCompleteElseWatch takes the shard lock under an operation lock.
            n = 0 if watchers is None else (yield from self.try_complete_watched(ctx, watchers))
            ctx.release(self.shard_locks[i])
            return n
        ctx.release(self.shard_locks[i])
        if watchers is None:
            return 0
        return (yield from self.try_complete_watched(ctx, watchers))

    def try_complete_watched(self, ctx: Ctx, w: Watchers) -> ThreadBody:
        completed, cursor = 0, 0
        while True:
            yield Step(f"watchers({w.key!r}): next")
            seq = w.next_after(cursor)
            if seq is None:
                break
            cursor = seq
            op = w.ops[seq]
            if op.completed:
                w.ops.pop(seq, None)
            elif (yield from op.safe_try_complete(ctx)):
                w.ops.pop(seq, None)
                completed += 1
        if not w.ops:
            yield from self.remove_key_if_empty(ctx, w)
        return completed

    def remove_key_if_empty(self, ctx: Ctx, w: Watchers) -> ThreadBody:
        i = self._shard(w.key)
        yield from ctx.acquire(self.shard_locks[i], label=f"removeKeyIfEmpty({w.key!r}): lock shard{i}")
        if self.maps[i].get(w.key) is w and not w.ops:
            del self.maps[i][w.key]
        ctx.release(self.shard_locks[i])

    def cancel_for_key(self, ctx: Ctx, key: Any) -> ThreadBody:
        i = self._shard(key)
        yield from ctx.acquire(self.shard_locks[i], label=f"cancelForKey({key!r}): lock shard{i}")
        watchers = self.maps[i].pop(key, None)
        cancelled: list[Op] = []
        if watchers is not None:
            cursor = 0
            while (seq := watchers.next_after(cursor)) is not None:
                cursor = seq
                op = watchers.ops[seq]
                yield from task_cancel(ctx, op)
                watchers.ops.pop(seq, None)
                cancelled.append(op)
        ctx.release(self.shard_locks[i])
        return cancelled

    def watched(self) -> int:
        return sum(len(w.ops) for m in self.maps for w in list(m.values()))

    def advance_clock(self, ctx: Ctx) -> ThreadBody:
        advanced = yield from self.timer.advance_clock(ctx)
        yield Step("purgatory: purge rule")
        if self.estimated - self.timer.counter > self.purge_interval:
            before = self.estimated
            self.estimated = delayed = self.timer.counter
            purged = yield from self.purge_completed(ctx)
            self.sim.emit(ev.Purge(self.clock_now(), before, delayed, purged))
        return advanced

    def purge_completed(self, ctx: Ctx) -> ThreadBody:
        """Drop completed operations from every list (Kafka walks the maps without their locks)."""
        purged = 0
        for m in self.maps:
            if not m:
                continue
            for w in list(m.values()):
                cursor = 0
                while True:
                    yield Step(f"purge watchers({w.key!r}): next")
                    seq = w.next_after(cursor)
                    if seq is None:
                        break
                    cursor = seq
                    if w.ops[seq].completed:
                        w.ops.pop(seq, None)
                        purged += 1
                if not w.ops:
                    yield from self.remove_key_if_empty(ctx, w)
        return purged

    def clock_now(self) -> int:
        return self.sim.clock.now_ms()


# ------------------------------------------------------------------------------- the facade


class StepSimulation:
    """The per-operation API of :class:`.simulation.Simulation`, each method a generator
    ``method(ctx, ...)`` to be run by a :class:`.scheduler.Scheduler` or :func:`.scheduler.drain`.

    ``executor``: ``"inline"`` (sequential runs, same events as the reference) or ``"thread"``
    (concurrent runs: add :meth:`executor_body` as a daemon thread).  ``shards``: watcher-list
    shards (Kafka: 512).  ``mutants``: names from :data:`.mutants.MUTANTS`.
    """

    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int = 0, purge_interval: int = 1000,
                 *, shards: int = 512, executor: str = "inline", mutants: Iterable[str] = ()) -> None:
        from .mutants import MUTANTS  # the catalogue; names are checked here

        self.mutants = frozenset(mutants)
        unknown = self.mutants - set(MUTANTS)
        if unknown:
            raise ValueError(f"unknown mutant {sorted(unknown)[0]!r} (known: {', '.join(MUTANTS)})")
        if executor not in ("inline", "thread"):
            raise ValueError(f"executor must be 'inline' or 'thread', got {executor!r}")
        tick_ms, wheel_size = check_tick(tick_ms), check_wheel_size(wheel_size)
        check_range("shards", shards, 1, 4096)
        self.clock = ManualClock(start_ms)
        self.tick_ms = tick_ms
        #: events in order, and the same stamped with (step, thread id) for concurrent runs
        self.events: list[ev.Event] = []
        self.stamped: list[tuple[int, int, ev.Event]] = []
        self.scheduler: Any = None  # set by whoever runs threads, for stamps
        self.timer = Timer(self, "timer", tick_ms, wheel_size, start_ms, self.emit, "inline", self.mutants)
        self.ptimer = Timer(self, "ptimer", tick_ms, wheel_size, start_ms, None, executor, self.mutants)
        self.purgatory = Purgatory(self, self.ptimer, check_purge_interval(purge_interval), shards)
        self.tasks: dict[int, Task] = {}
        self.ops: dict[int, Op] = {}
        #: op id -> step at which the purgatory's timer handed it to the executor (concurrent runs)
        self.handed_over: dict[int, int] = {}

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        s = self.scheduler
        self.stamped.append((s.clock if s is not None else len(self.stamped),
                             s.current if s is not None and s.current is not None else 0, event))

    def note_completed(self, op: Op) -> None:
        """Remember when (step) and on which thread ``op``'s completed flag was won."""
        s = self.scheduler
        op.completed_at = (s.clock, s.current) if s is not None else (len(self.stamped), 0)

    def declare_op(self, op_id: int, delay_ms: int, completable: bool = False) -> Op:
        """Create an operation before any thread runs (a request object exists before it is handed
        to the purgatory), so that threads can refer to it in any order."""
        op = self.ops[op_id] = Op(self, check_range("op id", op_id, 0, MAX_ID), check_delay(delay_ms), completable)
        return op

    def executor_body(self) -> Callable[[Ctx], ThreadBody]:
        assert self.scheduler is not None, "set .scheduler before asking for the executor"
        return self.ptimer.executor_body(self.scheduler.users_done)

    # -- timer -------------------------------------------------------------------------------------
    def add(self, ctx: Ctx, task_id: int, delay_ms: int) -> ThreadBody:
        task_id = check_range("task id", task_id, 0, MAX_ID)
        delay_ms = check_delay(delay_ms)
        task = self.tasks.get(task_id)
        if task is None:
            task = self.tasks[task_id] = Task(task_id, delay_ms)
        else:
            task.delay_ms = delay_ms
        exp = yield from self.timer.add(ctx, task)
        self.emit(ev.Add(self.now, task_id, delay_ms, exp))
        return exp

    def cancel(self, ctx: Ctx, task_id: int) -> ThreadBody:
        task = self.tasks.get(task_id)
        if task is None:
            raise KeyError(f"cancel: unknown task id {task_id}")
        pending = yield from task_cancel(ctx, task)
        self.emit(ev.Cancel(self.now, task_id, pending))
        return pending

    def advance_to(self, ctx: Ctx, time_ms: int) -> ThreadBody:
        yield Step(f"clock := {time_ms}")
        self.clock.set(check_time("time", time_ms))
        yield from self.timer.advance_clock(ctx)
        yield from self.purgatory.advance_clock(ctx)
        self.emit(ev.Advance(self.now))

    def size(self, ctx: Ctx) -> ThreadBody:
        yield Step("timer.size")
        n = self.timer.counter
        self.emit(ev.Observe(self.now, "size", n))
        return n

    # -- purgatory -----------------------------------------------------------------------------------
    def watch(self, ctx: Ctx, op_id: int, delay_ms: int, keys: Any, completable: bool = False,
              completes_on_retry: bool = False) -> ThreadBody:
        op_id = check_range("op id", op_id, 0, MAX_ID)
        keys = check_keys(keys)
        op = self.ops.get(op_id)
        if op is None:
            op = self.declare_op(op_id, delay_ms, completable)
        elif op.watched:
            raise ValueError(f"watch: op id {op_id} was used already (an operation is watched once)")
        else:
            op.delay_ms = check_delay(delay_ms)
            op.completable = op.completable or completable
        op.watched, op.keys = True, keys
        op.completes_on_retry = bool(completes_on_retry)
        result = yield from self.purgatory.try_complete_else_watch(ctx, op, keys)
        self.emit(ev.TryCompleteElseWatch(self.now, op_id, op.delay_ms, keys, result))
        return result

    def _op(self, what: str, op_id: int) -> Op:
        op = self.ops.get(op_id)
        if op is None:
            raise KeyError(f"{what}: unknown op id {op_id}")
        return op

    def set_completable(self, ctx: Ctx, op_id: int, value: bool = True) -> ThreadBody:
        op = self._op("set_completable", op_id)
        yield Step(f"{op.label}.completable := {bool(value)}")
        op.completable = bool(value)
        self.emit(ev.SetCompletable(self.now, op_id, bool(value)))

    def check_and_complete(self, ctx: Ctx, key: Any) -> ThreadBody:
        n = yield from self.purgatory.check_and_complete(ctx, check_key(key))
        self.emit(ev.CheckAndComplete(self.now, key, n))
        return n

    def cancel_for_key(self, ctx: Ctx, key: Any) -> ThreadBody:
        cancelled = yield from self.purgatory.cancel_for_key(ctx, check_key(key))
        ids = tuple(op.task_id for op in cancelled)
        self.emit(ev.CancelForKey(self.now, key, ids))
        return list(ids)

    def force_complete(self, ctx: Ctx, op_id: int) -> ThreadBody:
        result = yield from self._op("force_complete", op_id).force_complete(ctx, "force")
        self.emit(ev.ForceComplete(self.now, op_id, result))
        return result

    def watched(self, ctx: Ctx) -> ThreadBody:
        yield Step("purgatory.watched")
        n = self.purgatory.watched()
        self.emit(ev.Observe(self.now, "watched", n))
        return n

    def num_delayed(self, ctx: Ctx) -> ThreadBody:
        yield Step("purgatory.numDelayed")
        n = self.ptimer.counter
        self.emit(ev.Observe(self.now, "num_delayed", n))
        return n

    def apply(self, ctx: Ctx, op: ops.Op) -> ThreadBody:
        """Execute one operation record (a generator returning what the method returns)."""
        return (yield from ops.invoke(self, op, ctx))
