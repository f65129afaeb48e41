"""``DelayedOperationPurgatory``: operations waiting on keys, with a timer for their timeouts.

Structure (Kafka): 512 ``WatcherList`` shards, each a lock and a map ``key -> Watchers``; a
``Watchers`` is the FIFO of operations watching one key.  An operation watching k keys is in k
lists.  ``estimated`` (Kafka's ``estimatedTotalOperations``) counts watched operations
approximately; the purge rule uses it.

* ``try_complete_else_watch(op, keys)``: under the op's lock, try to complete; if not, watch it on
  every key, add 1 to ``estimated`` (once, not per key), and try again.  If still not completed,
  add it to the timer, and if it completed meanwhile cancel that timer entry.  Returns True only
  if *this call* completed it.
* ``check_and_complete(key)``: walk the key's list in order; drop completed operations; try the
  others (``safe_try_complete``) and drop those it completes; remove the key once its list is
  empty.  Returns how many this call completed.
* ``cancel_for_key(key)``: remove the key's whole list and cancel each operation's timer entry; no
  callback runs, and the operations stay in their other keys' lists, still completable there.
* ``advance_clock(timeout_ms)`` (the reaper's step): advance the timer; then, if
  ``estimated - num_delayed > purge_interval``: ``estimated := num_delayed`` and drop completed
  operations from every list.  Until that purge, an operation completed through one key stays in
  its other keys' lists (the memory growth Kafka users reported).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import Protocol

from wheelspec.spec.events import Event, Purge
from wheelspec.spec.limits import check_keys, check_purge_interval

from .clock import Clock
from .operation import DelayedOperation
from .system_timer import Reaper, SystemTimer
from .task import TimerTask

Key = str | int


class Timer(Protocol):
    """Kafka's ``Timer`` interface: what a purgatory needs of its timeout timer (and its clock,
    which dates the purge events)."""

    def add(self, task: TimerTask) -> int: ...
    def advance_clock(self, timeout_ms: int = 0) -> bool: ...
    def size(self) -> int: ...
    def close(self) -> None: ...
    @property
    def clock(self) -> Clock: ...


class Watchers:
    """The operations watching one key, in the order they started watching.

    Kafka uses a ``ConcurrentLinkedQueue``; here an insertion-ordered dict from a watch sequence
    number to the operation gives the same order with O(1) removal during a walk."""

    def __init__(self, key: Key, purgatory: DelayedOperationPurgatory) -> None:
        self.key = key
        self._purgatory = purgatory
        self._ops: dict[int, DelayedOperation] = {}
        self._seq = 0
        self._lock = threading.Lock()  # guards the dict's structure only

    def __len__(self) -> int:
        return len(self._ops)

    def watch(self, op: DelayedOperation) -> None:
        with self._lock:
            self._seq += 1
            self._ops[self._seq] = op

    def _snapshot(self) -> list[tuple[int, DelayedOperation]]:
        with self._lock:
            return list(self._ops.items())

    def _drop(self, seq: int) -> None:
        with self._lock:
            self._ops.pop(seq, None)

    def try_complete_watched(self) -> int:
        completed = 0
        for seq, op in self._snapshot():
            if op.is_completed:
                self._drop(seq)  # completed elsewhere (another key, the timer): just forget it
            elif op.safe_try_complete():
                self._drop(seq)
                completed += 1
        if not self._ops:
            self._purgatory._remove_key_if_empty(self.key, self)
        return completed

    def cancel(self) -> list[DelayedOperation]:
        cancelled = []
        for seq, op in self._snapshot():
            op.cancel()
            self._drop(seq)
            cancelled.append(op)
        return cancelled

    def purge_completed(self) -> int:
        purged = 0
        for seq, op in self._snapshot():
            if op.is_completed:
                self._drop(seq)
                purged += 1
        if not self._ops:
            self._purgatory._remove_key_if_empty(self.key, self)
        return purged


class WatcherList:
    """One shard: a lock and the map from key to its ``Watchers``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watchers_by_key: dict[Key, Watchers] = {}


def shard_of(key: Key, shards: int) -> int:
    """A process-stable shard index (Python's str hash is salted per process; Kafka's hashCode
    is not).  Which shard a key lands in changes nothing observable."""
    data = key.encode() if isinstance(key, str) else key.to_bytes(8, "little", signed=True)
    return zlib.crc32(data) % shards


class DelayedOperationPurgatory:
    def __init__(self, timer: Timer | None = None, purge_interval: int = 1000, *,
                 name: str = "purgatory", shards: int = 512, timer_enabled: bool = True,
                 reaper: bool = False, listener: Callable[[Event], None] | None = None) -> None:
        self.name = name
        self.purge_interval = check_purge_interval(purge_interval)
        self.timer: Timer = timer if timer is not None else SystemTimer(name=name)
        self.timer_enabled = timer_enabled
        # A shard is made when a key first lands in it: Kafka allocates all 512 up front, but a
        # checker builds thousands of short-lived purgatories, and 512 locks each cost more than
        # the schedule they judge.  Which shards exist changes nothing observable.
        self._lists: list[WatcherList | None] = [None] * shards
        self._lists_lock = threading.Lock()
        self._estimated = 0
        self._estimated_lock = threading.Lock()
        self._listener = listener
        self._reaper: Reaper | None = None
        if reaper:
            self._reaper = Reaper(self, name=f"expiration-reaper-{name}")
            self._reaper.start()

    # -- public API -------------------------------------------------------------------------------
    def try_complete_else_watch(self, op: DelayedOperation, watch_keys: list[Key] | tuple[Key, ...]) -> bool:
        keys = check_keys(watch_keys)

        def watch_all() -> None:
            for key in keys:
                # Current Kafka skips the remaining keys once the operation is completed (by
                # another thread); older versions returned early from the loop instead.
                if not op.is_completed:
                    self._watch_for_operation(key, op)
            with self._estimated_lock:
                self._estimated += 1

        if op.safe_try_complete_or_else(watch_all):
            return True
        # Not completed by this call and hence watched: add it to the timer too.  If it completed
        # in between (another thread's checkAndComplete), take the fresh timer entry out again.
        if not op.is_completed:
            if self.timer_enabled:
                self.timer.add(op)
            if op.is_completed:
                op.cancel()
        return False

    def check_and_complete(self, key: Key) -> int:
        wl = self._list_for(key)
        with wl.lock:
            watchers = wl.watchers_by_key.get(key)
        return 0 if watchers is None else watchers.try_complete_watched()

    def cancel_for_key(self, key: Key) -> list[DelayedOperation]:
        wl = self._list_for(key)
        with wl.lock:
            watchers = wl.watchers_by_key.pop(key, None)
            return watchers.cancel() if watchers is not None else []

    def watched(self) -> int:
        return sum(len(w) for wl in self._made_lists() for w in list(wl.watchers_by_key.values()))

    def num_delayed(self) -> int:
        return self.timer.size()

    @property
    def estimated(self) -> int:
        return self._estimated

    def advance_clock(self, timeout_ms: int = 0) -> bool:
        """The reaper's step (Kafka's ``advanceClock``): advance the timer, then the purge check.
        The timer hands expired operations to its executor; with an inline executor they complete
        before the purge check, with a deferred one the driver decides (the executor race)."""
        advanced = self.timer.advance_clock(timeout_ms)
        self.purge_check()
        return advanced

    def purge_check(self) -> None:
        """Kafka's purge rule, the second half of ``advanceClock``: if ``estimated - numDelayed >
        purgeInterval``, set ``estimated := numDelayed`` and drop completed operations from every
        list."""
        # Completed-but-still-watched operations are estimated as estimated - num_delayed.
        if self._estimated - self.num_delayed() > self.purge_interval:
            with self._estimated_lock:
                before = self._estimated
                self._estimated = delayed = self.num_delayed()
            purged = 0
            for wl in self._made_lists():
                with wl.lock:
                    all_watchers = list(wl.watchers_by_key.values())
                for w in all_watchers:
                    purged += w.purge_completed()
            if self._listener is not None:
                now = self.timer.clock.now_ms()
                self._listener(Purge(now, before, delayed, purged))

    def shutdown(self) -> None:
        if self._reaper is not None:
            self._reaper.shutdown()
            self._reaper = None
        self.timer.close()

    # -- internals --------------------------------------------------------------------------------
    def _list_for(self, key: Key) -> WatcherList:
        i = shard_of(key, len(self._lists))
        wl = self._lists[i]
        if wl is None:
            with self._lists_lock:  # two threads must not make two lists for one shard
                wl = self._lists[i]
                if wl is None:
                    wl = self._lists[i] = WatcherList()
        return wl

    def _made_lists(self) -> list[WatcherList]:
        return [wl for wl in self._lists if wl is not None]

    def _watch_for_operation(self, key: Key, op: DelayedOperation) -> None:
        wl = self._list_for(key)
        with wl.lock:
            watchers = wl.watchers_by_key.get(key)
            if watchers is None:
                watchers = wl.watchers_by_key[key] = Watchers(key, self)
            watchers.watch(op)

    def _remove_key_if_empty(self, key: Key, watchers: Watchers) -> None:
        wl = self._list_for(key)
        with wl.lock:
            if wl.watchers_by_key.get(key) is watchers and len(watchers) == 0:
                del wl.watchers_by_key[key]
