"""``SystemTimer``: the timer Kafka's purgatories use, and its reaper.

State: a base :class:`TimingWheel` (``tick_ms``, ``wheel_size``, started at the clock's reading),
the :class:`DelayQueue` every level enqueues its buckets into, the shared task counter, and an
executor that runs due tasks.

* ``add(task)``: ``exp = task.delay_ms + now``; a new entry replaces the task's old one; if the
  wheel refuses it and it is not cancelled, it is handed to the executor *now* (``Fire``).
* ``advance_clock(timeout_ms)``: poll one due bucket (waiting up to ``timeout_ms`` on a real
  clock); if there is one, then under the write lock and for that bucket and every further bucket
  that is due: move the wheels' clocks to the bucket's expiration and flush it, re-adding every
  entry (each either lands in a lower level or is due and fires).  Returns whether a bucket was
  polled.
* ``size()``: entries linked in buckets (Kafka's ``taskCounter``): a fired or cancelled task
  leaves it at once.

Kafka guards ``add`` with the read lock and the flush loop with the write lock of one
``ReentrantReadWriteLock``; this model takes one reentrant lock for both (sequential histories are
the same; the interleavings are studied step by step elsewhere).  Kafka's executor is one thread;
here it runs the task inline by default (``Fire`` is recorded when the task is handed over, which
is the same moment), or on one worker thread with ``executor="thread"``, or, with
``executor="deferred"``, only when the driver says so (:meth:`SystemTimer.run_deferred`, in hand-over
order): how a virtual-time driver lets the executor thread run after the purgatory's purge check
(the executor race, SEMANTICS.md "Purge").
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Protocol

from wheelspec.spec.events import Event, Fire
from wheelspec.spec.limits import check_tick, check_time, check_wheel_size

from .bucket import TaskCounter, TimerTaskList
from .clock import Clock, SystemClock
from .delay_queue import DelayQueue
from .task import TimerTask, TimerTaskEntry
from .wheel import TimingWheel

Listener = Callable[[Event], None]


class SystemTimer:
    def __init__(self, tick_ms: int = 1, wheel_size: int = 20, start_ms: int | None = None,
                 clock: Clock | None = None, listener: Listener | None = None,
                 executor: str = "inline", name: str = "timer") -> None:
        tick_ms = check_tick(tick_ms)
        wheel_size = check_wheel_size(wheel_size)
        if executor not in ("inline", "thread", "deferred"):
            raise ValueError(f"executor must be 'inline', 'thread' or 'deferred', got {executor!r}")
        self.name = name
        self.clock: Clock = clock if clock is not None else SystemClock()
        start = self.clock.now_ms() if start_ms is None else check_time("start_ms", start_ms)
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.delay_queue: DelayQueue[TimerTaskList] = DelayQueue(self.clock)
        self.task_counter = TaskCounter()
        self.timing_wheel = TimingWheel(tick_ms, wheel_size, start, self.task_counter, self.delay_queue)
        self._lock = threading.RLock()
        self._listener = listener
        self._work: queue.SimpleQueue[TimerTask | None] | None = None
        self._worker: threading.Thread | None = None
        #: executor="deferred": tasks handed over and not yet run, in hand-over order
        self._deferred: list[TimerTask] | None = [] if executor == "deferred" else None
        if executor == "thread":
            self._work = queue.SimpleQueue()
            self._worker = threading.Thread(target=self._run_worker, name=f"executor-{name}", daemon=True)
            self._worker.start()

    # -- Timer interface ------------------------------------------------------------------------
    def add(self, task: TimerTask) -> int:
        """Schedule ``task`` at ``now + task.delay_ms``; returns that expiration."""
        with self._lock:
            exp = task.delay_ms + self.clock.now_ms()
            self._add_entry(TimerTaskEntry(task, exp))
            return exp

    def advance_clock(self, timeout_ms: int = 0) -> bool:
        bucket = self.delay_queue.poll(timeout_ms)
        if bucket is None:
            return False
        with self._lock:
            while bucket is not None:
                self.timing_wheel.advance_clock(bucket.get_expiration())
                bucket.flush(self._add_entry)
                bucket = self.delay_queue.poll()
        return True

    def size(self) -> int:
        return self.task_counter.value

    def run_deferred(self, limit: int | None = None) -> int:
        """``executor="deferred"``: run up to ``limit`` (all if None) of the tasks handed over and
        not yet run, in hand-over order (Kafka's executor is one thread); returns how many ran."""
        pending = self._deferred
        if pending is None:
            return 0
        n = len(pending) if limit is None else max(0, min(limit, len(pending)))
        batch, pending[:] = pending[:n], pending[n:]
        for task in batch:
            task.run()
        return n

    def close(self) -> None:
        if self._work is not None and self._worker is not None:
            self._work.put(None)
            self._worker.join()
            self._work = None

    # -- internals ------------------------------------------------------------------------------
    def _add_entry(self, entry: TimerTaskEntry) -> None:
        if not self.timing_wheel.add(entry):
            # Refused: cancelled (drop it) or due (run it).  The cancelled() check is the only
            # guard against running a task whose cancel raced this flush; see SEMANTICS.md.
            if not entry.cancelled():
                self._submit(entry)

    def _submit(self, entry: TimerTaskEntry) -> None:
        task = entry.timer_task
        assert task is not None
        if self._listener is not None:
            self._listener(Fire(self.clock.now_ms(), task.task_id if task.task_id is not None else -1,
                                entry.expiration_ms))
        if self._work is not None:
            self._work.put(task)
        elif self._deferred is not None:
            self._deferred.append(task)
        else:
            task.run()

    def _run_worker(self) -> None:
        assert self._work is not None
        while (task := self._work.get()) is not None:
            task.run()


class Advancing(Protocol):
    """What a :class:`Reaper` drives: a timer or a purgatory."""

    def advance_clock(self, timeout_ms: int, /) -> object: ...


class Reaper:
    """Kafka's expiration reaper: a thread that calls ``advance_clock(200)`` until shut down.
    ``target`` is a timer or a purgatory (anything with ``advance_clock``)."""

    def __init__(self, target: Advancing, poll_ms: int = 200, name: str = "reaper") -> None:
        self._target = target
        self._poll_ms = poll_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._target.advance_clock(self._poll_ms)

    def shutdown(self) -> None:
        self._stop.set()
        self._thread.join()
