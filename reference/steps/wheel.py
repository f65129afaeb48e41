"""Step model of ``TimingWheel`` (readable form: :mod:`wheelspec.reference.wheel`).

Placing an entry links it into a bucket (:meth:`.bucket.Bucket.add`), then sets the bucket's
expiration and, if it changed, offers the bucket to the delay queue (one step each);
``addOverflowWheel`` is synchronized on the wheel (``<prefix>wheel<level>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..scheduler import Ctx, SimLock, Step, ThreadBody
from .bucket import Bucket

if TYPE_CHECKING:
    from .system_timer import Timer
    from .task import Entry


class Wheel:
    """``TimingWheel``: placement and the lazy clock (arithmetic as in :mod:`wheelspec.reference.wheel`)."""

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
                self.timer.queue.offer(bucket)
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
        out: list[Wheel] = []
        w: Wheel | None = self
        while w is not None:
            out.append(w)
            w = w.overflow
        return out

