"""Step model of ``TimerTaskList`` (readable form: :mod:`wheelspec.reference.bucket`).

A bucket's ``add``, ``remove`` and ``flush`` hold its monitor (``synchronized (TimerTaskList)``,
named ``B<level>.<slot>`` or ``P<level>.<slot>``) and, to link or unlink, the entry's monitor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..scheduler import Ctx, SimLock, Step, ThreadBody
from .task import Entry, entry_remove

if TYPE_CHECKING:
    from .system_timer import Timer


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
            prv.next = nxt  # type: ignore[union-attr]  # likewise
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

