"""Baseline: a plain-Python delayed-operation purgatory over the ``heapq`` timer.

What a Python programmer would write to get Kafka's ``DelayedOperationPurgatory`` behaviour for
the purgatory benchmark, without a timing wheel, locks, shards or callbacks:

* an operation is a small slotted object (completed flag, completable flag);
* ``watch`` = Kafka's ``tryCompleteElseWatch``: try; if not completed, append the operation to
  every key's list, count it once in ``estimated``, try again, then add its timeout to the timer;
* ``force_complete``: complete once (the flag), take the timeout off the timer;
* ``advance_to``: expire what the timer fires, then Kafka's purge rule: if ``estimated -
  num_delayed > purge_interval``, set ``estimated := num_delayed`` and drop completed operations
  from every watch list.

With tick 1 ms its observable results on the purgatory workload (who completed, who expired, the
watch-list sizes after every purge) are those of the reference, which a test checks.
"""

from __future__ import annotations

from collections.abc import Iterable

from .heap_timer import HeapTimer

Key = int | str


class _Op:
    __slots__ = ("completed", "completable")

    def __init__(self, completable: bool) -> None:
        self.completed = False
        self.completable = completable


class HeapPurgatory:
    def __init__(self, purge_interval: int = 1000, start_ms: int = 0) -> None:
        self.purge_interval = purge_interval
        self.timer = HeapTimer(start_ms)
        self.ops: dict[int, _Op] = {}
        self.watchers: dict[Key, list[int]] = {}
        self.estimated = 0
        self.completed_at_watch = 0
        self.force_completed = 0
        self.expired = 0
        self.purges = 0

    @property
    def now(self) -> int:
        return self.timer.now

    def watch(self, op_id: int, delay_ms: int, keys: Iterable[Key], completable: bool = False) -> bool:
        """Kafka's ``tryCompleteElseWatch``: True iff this call completed the operation."""
        if op_id in self.ops:
            raise ValueError(f"watch: op id {op_id} was used already")
        op = self.ops[op_id] = _Op(completable)
        if op.completable:  # first try
            op.completed = True
            self.completed_at_watch += 1
            return True
        for key in keys:
            lst = self.watchers.get(key)
            if lst is None:
                self.watchers[key] = [op_id]
            else:
                lst.append(op_id)
        self.estimated += 1
        # The second try cannot succeed here (nothing ran in between); the timeout goes on the timer.
        self.timer.add(op_id, delay_ms)
        return False

    def force_complete(self, op_id: int) -> bool:
        op = self.ops[op_id]
        if op.completed:
            return False
        op.completed = True
        self.timer.cancel(op_id)
        self.force_completed += 1
        return True

    def advance_to(self, time_ms: int) -> list[int]:
        """Advance the timer; expire what fired; apply the purge rule. Returns the expired ops."""
        expired = self.timer.advance_to(time_ms)
        ops = self.ops
        for op_id in expired:
            ops[op_id].completed = True  # the timer's entry was live, so nobody completed it
        self.expired += len(expired)
        delayed = self.timer.size()
        if self.estimated - delayed > self.purge_interval:
            self.estimated = delayed
            self.purges += 1
            for key in list(self.watchers):
                keep = [i for i in self.watchers[key] if not ops[i].completed]
                if keep:
                    self.watchers[key] = keep
                else:
                    del self.watchers[key]
        return expired

    def num_delayed(self) -> int:
        return self.timer.size()

    def watched(self) -> int:
        return sum(len(v) for v in self.watchers.values())
