"""Kafka's test ``MockTimer``: the *strict-gt* profile, a different contract from SystemTimer.

Modelled on ``org.apache.kafka.server.util.timer.MockTimer`` (server-common test sources, the
Java port of the Scala ``kafka.utils.timer.MockTimer``; read at apache/kafka 1eb7644349c):

* ``add(task)``: ``if (timerTask.delayMs <= 0) timerTask.run();`` -- the task runs synchronously
  inside ``add`` and gets no entry (its existing entry, if any, is left as it is); otherwise
  ``taskQueue.add(new TimerTaskEntry(timerTask, timerTask.delayMs + time.milliseconds()))``: the
  new entry's constructor makes itself the task's entry, so an earlier entry of the same task is
  superseded (it stays queued, and ``cancelled()`` is true for it).
* ``advanceClock(timeoutMs)``: ``time.sleep(timeoutMs)``, then while the head has ``now >
  expirationMs`` (strictly) poll it and run it unless ``cancelled()``.
* ``size()``: ``taskQueue.size()``, which counts cancelled and superseded entries until they are
  dequeued (the pinned rule, :data:`wheelspec.spec.profiles.MOCK_SIZE_QUEUE`); the variant
  :data:`~wheelspec.spec.profiles.MOCK_SIZE_LIVE` counts only entries still current.
* ``cancel`` is ``TimerTask.cancel()``: the task forgets its entry; the entry stays queued (it is
  in no ``TimerTaskList``, so ``remove()`` unlinks nothing) and is dropped unrun when dequeued.

The queue is a ``java.util.PriorityQueue`` compared on ``expirationMs`` only; entries with equal
expirations come out in that heap's order (:mod:`.priority_queue`, the code the delay queue uses),
not first-in-first-out.

Kafka's ``TimerTask.delayMs`` is final, so a caller cannot re-add a task with a new delay: it
cancels the old task and adds a new one.  That is the driver's business
(:meth:`wheelspec.reference.simulation.Simulation.add`); this class takes tasks as Kafka's does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from wheelspec.spec.events import Event, Fire
from wheelspec.spec.profiles import MOCK_SIZE_QUEUE, check_mock_size_rule

from .clock import ManualClock
from .priority_queue import JdkPriorityQueue
from .task import TimerTask, TimerTaskEntry


def _expiration(entry: TimerTaskEntry) -> int:
    return entry.expiration_ms  # Comparator.comparingLong(entry -> entry.expirationMs)


class MockTimer:
    def __init__(self, clock: ManualClock | None = None, listener: Callable[[Event], None] | None = None,
                 size_rule: str = MOCK_SIZE_QUEUE) -> None:
        self.clock = clock if clock is not None else ManualClock()
        self._listener = listener
        self.size_rule = check_mock_size_rule(size_rule)
        self._queue: JdkPriorityQueue[TimerTaskEntry] = JdkPriorityQueue(_expiration)
        # The entries still in the queue, so that a cancel can report whether it hit a queued
        # entry (Kafka's entries here are never linked in a bucket, so TimerTask.cancel cannot tell).
        self._queued: set[TimerTaskEntry] = set()
        self._lock = threading.Lock()  # synchronized (taskQueue)

    def add(self, task: TimerTask) -> int:
        now = self.clock.now_ms()
        exp = task.delay_ms + now
        if task.delay_ms <= 0:
            self._fire(task, exp)
        else:
            with self._lock:
                entry = TimerTaskEntry(task, exp)
                self._queue.offer(entry)
                self._queued.add(entry)
        return exp

    def advance_clock(self, timeout_ms: int = 0) -> bool:
        self.clock.advance(max(timeout_ms, 0))
        now = self.clock.now_ms()
        executed = False
        while True:
            with self._lock:
                head = self._queue.peek()
                if head is None or not now > head.expiration_ms:
                    break
                self._queue.poll()
                self._queued.discard(head)
            if not head.cancelled():
                assert head.timer_task is not None
                self._fire(head.timer_task, head.expiration_ms)
                executed = True
        return executed

    def holds(self, entry: TimerTaskEntry | None) -> bool:
        """Is ``entry`` still in the queue (not yet dequeued by an advance)?"""
        return entry is not None and entry in self._queued

    def size(self) -> int:
        if self.size_rule == MOCK_SIZE_QUEUE:
            return len(self._queue)
        return sum(1 for e in self._queue.array if not e.cancelled())

    def entries(self) -> list[TimerTaskEntry]:
        """The queue's heap array (slot 0 the head), for invariant checks and white-box tests."""
        return list(self._queue.array)

    def close(self) -> None:
        pass

    def _fire(self, task: TimerTask, exp: int) -> None:
        if self._listener is not None:
            self._listener(Fire(self.clock.now_ms(), task.task_id if task.task_id is not None else -1, exp))
        task.run()
