"""``TimingWheel``: where an entry goes, and the wheel's lazy clock.

A wheel has ``wheel_size`` buckets of ``tick_ms`` each; its *interval* is ``tick_ms * wheel_size``.
Its clock ``current_time`` is a multiple of ``tick_ms`` and moves only when the timer advances it
to the expiration of a bucket it has just polled (the *lazy clock*; SEMANTICS.md, "Clock").

Placement of an entry with expiration ``exp`` (SEMANTICS.md, "Placement"):

* cancelled                                   -> refused, nothing happens;
* ``exp <  current_time + tick_ms``            -> refused: *due*, the timer runs it now;
* ``exp <  current_time + interval``           -> bucket ``(exp // tick_ms) % wheel_size``, whose
  window becomes ``[exp // tick_ms * tick_ms, + tick_ms)``; the bucket is enqueued if that window
  is new to it;
* otherwise                                   -> the overflow wheel (created on first need with
  ``tick = interval``, the same size, and ``start = current_time``).

The "due" test is what makes Kafka fire early: with tick 10 and ``current_time`` 1000, an entry
expiring at 1009 is due.  With tick 1 nothing is early.
"""

from __future__ import annotations

from .bucket import TaskCounter, TimerTaskList
from .delay_queue import DelayQueue
from .task import TimerTaskEntry


class TimingWheel:
    def __init__(self, tick_ms: int, wheel_size: int, start_ms: int,
                 task_counter: TaskCounter, queue: DelayQueue[TimerTaskList]) -> None:
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.interval = tick_ms * wheel_size
        self.task_counter = task_counter
        self.queue = queue
        self.buckets = [TimerTaskList(task_counter) for _ in range(wheel_size)]
        # Rounded down to a multiple of tick_ms: the clock always sits on a window boundary.
        self.current_time = start_ms - (start_ms % tick_ms)
        # Created lazily, when an expiration beyond this wheel's interval arrives.  Kafka marks it
        # volatile: add() reads it without the timer's write lock.
        self.overflow_wheel: TimingWheel | None = None

    def _add_overflow_wheel(self) -> None:
        if self.overflow_wheel is None:
            # The overflow wheel's tick is this wheel's whole interval, and it starts where this
            # wheel's clock is now (not at the wall clock): the levels stay aligned.
            self.overflow_wheel = TimingWheel(self.interval, self.wheel_size, self.current_time,
                                              self.task_counter, self.queue)

    def add(self, entry: TimerTaskEntry) -> bool:
        """Place ``entry``; False means it was not placed (cancelled, or due now)."""
        exp = entry.expiration_ms
        if entry.cancelled():
            return False
        if exp < self.current_time + self.tick_ms:
            return False  # due: already in (or before) the window the clock stands in
        if exp < self.current_time + self.interval:
            virtual_id = exp // self.tick_ms
            bucket = self.buckets[virtual_id % self.wheel_size]
            bucket.add(entry)
            # Enqueue only when the window changed: the wheel advanced and this bucket is being
            # reused.  Further adds into the same window find it queued already.
            if bucket.set_expiration(virtual_id * self.tick_ms):
                self.queue.offer(bucket)
            return True
        self._add_overflow_wheel()
        assert self.overflow_wheel is not None
        return self.overflow_wheel.add(entry)

    def advance_clock(self, time_ms: int) -> None:
        """Move the clock to ``time_ms`` rounded down to this wheel's tick, if that is at least one
        tick ahead; then try the overflow wheel with the rounded time."""
        if time_ms >= self.current_time + self.tick_ms:
            self.current_time = time_ms - (time_ms % self.tick_ms)
            if self.overflow_wheel is not None:
                self.overflow_wheel.advance_clock(self.current_time)

    # -- inspection (tests, invariant checks) -------------------------------------------------
    def levels(self) -> list[TimingWheel]:
        out: list[TimingWheel] = []
        w: TimingWheel | None = self
        while w is not None:
            out.append(w)
            w = w.overflow_wheel
        return out
