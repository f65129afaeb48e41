"""Kafka's test ``MockTimer``: the *strict-gt* profile, a different contract from SystemTimer.

* ``add(task)``: a task with ``delay_ms <= 0`` runs synchronously inside ``add`` and gets no entry
  (so an earlier entry of the same task stays scheduled and will run too); otherwise an entry
  ``(now + delay, task)`` goes into a priority queue.
* ``advance_clock(timeout_ms)``: the manual clock moves forward by ``timeout_ms`` (Kafka's
  ``time.sleep``), then every entry with ``now > exp`` (strictly) is dequeued, in expiration order,
  and run unless cancelled.
* ``size()``: the length of the queue, which still counts cancelled and superseded entries.

Kafka's queue is a Scala ``PriorityQueue`` ordered by expiration only, so its order among equal
expirations is unspecified; this model breaks ties first-in-first-out (SEMANTICS.md).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable

from wheelspec.spec.events import Event, Fire

from .clock import ManualClock
from .task import TimerTask, TimerTaskEntry


class MockTimer:
    def __init__(self, clock: ManualClock | None = None, listener: Callable[[Event], None] | None = None) -> None:
        self.clock = clock if clock is not None else ManualClock()
        self._listener = listener
        self._queue: list[tuple[int, int, TimerTaskEntry]] = []
        # The entries still in the queue, so that a cancel can report whether it hit a queued
        # entry (Kafka's entries here are never linked in a bucket, so TimerTask.cancel cannot tell).
        self._queued: set[TimerTaskEntry] = set()
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def add(self, task: TimerTask) -> int:
        now = self.clock.now_ms()
        exp = task.delay_ms + now
        if task.delay_ms <= 0:
            self._fire(task, exp)
        else:
            with self._lock:
                entry = TimerTaskEntry(task, exp)
                heapq.heappush(self._queue, (exp, next(self._seq), entry))
                self._queued.add(entry)
        return exp

    def advance_clock(self, timeout_ms: int = 0) -> bool:
        self.clock.advance(max(timeout_ms, 0))
        now = self.clock.now_ms()
        executed = False
        while True:
            with self._lock:
                if not self._queue or not now > self._queue[0][0]:
                    break
                _, _, entry = heapq.heappop(self._queue)
                self._queued.discard(entry)
            if not entry.cancelled():
                assert entry.timer_task is not None
                self._fire(entry.timer_task, entry.expiration_ms)
                executed = True
        return executed

    def holds(self, entry: TimerTaskEntry | None) -> bool:
        """Is ``entry`` still in the queue (not yet dequeued by an advance)?"""
        return entry is not None and entry in self._queued

    def size(self) -> int:
        return len(self._queue)

    def close(self) -> None:
        pass

    def _fire(self, task: TimerTask, exp: int) -> None:
        if self._listener is not None:
            self._listener(Fire(self.clock.now_ms(), task.task_id if task.task_id is not None else -1, exp))
        task.run()
