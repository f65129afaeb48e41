"""Step model of ``DelayedOperationPurgatory``, ``WatcherList`` and ``Watchers`` (readable form:
:mod:`wheelspec.reference.purgatory`).

Each watcher-list shard has its lock (``shard<i>``, ``WatcherList.watchersLock``) and a key map;
a key's watch list (``ConcurrentLinkedQueue``) is lock-free: appends and removals are single steps
and a walk sees one element per step, including elements appended after the walk began.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wheelspec.spec import events as ev

from ..purgatory import shard_of
from ..scheduler import Ctx, SimLock, Step, ThreadBody
from .task import task_cancel

if TYPE_CHECKING:
    from .mock_timer import MockTimer
    from .operation import Op
    from .simulation import StepSimulation
    from .system_timer import Timer


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

    def __init__(self, sim: StepSimulation, timer: Timer | MockTimer, purge_interval: int, shards: int) -> None:
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

