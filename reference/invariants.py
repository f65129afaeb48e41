"""Structure invariants of the reference timers, checkable between operations.

These are the invariants SEMANTICS.md states for Kafka's ``SystemTimer`` ("Buckets", "Size") and
``MockTimer`` ("Profiles"), written as code so that tests can check them after every step.  They
hold at *quiescent* points: between two calls, with no flush in progress.  A cancel racing a
flush on another thread can leave a cancelled entry linked for a while (SEMANTICS.md, "Cancel");
pass ``sequential=False`` to skip the checks that such a race breaks.

Each check raises :class:`InvariantError` naming the first broken rule and where.
"""

from __future__ import annotations

from wheelspec.spec.errors import InvariantError
from wheelspec.spec.profiles import MOCK_SIZE_QUEUE

from .bucket import TimerTaskList
from .mock_timer import MockTimer
from .system_timer import SystemTimer


def _fail(msg: str) -> None:
    raise InvariantError(msg)


def check_system_timer(timer: SystemTimer, sequential: bool = True) -> None:
    """Check every invariant of a quiescent ``SystemTimer`` (SEMANTICS.md, "Buckets")."""
    levels = timer.timing_wheel.levels()
    heap = timer.delay_queue._heap  # the checker inspects the model's internals
    queued_ids = [id(b) for b in heap]
    # I1: a bucket sits in the delay queue at most once (the bucket-reuse rule).
    if len(set(queued_ids)) != len(queued_ids):
        _fail("a bucket is queued more than once in the delay queue")
    queued = set(queued_ids)
    # I2: the delay queue's array is a binary min-heap on expiration (JDK PriorityQueue).
    for i in range(1, len(heap)):
        if heap[(i - 1) >> 1].get_expiration() > heap[i].get_expiration():
            _fail(f"delay queue heap order broken at index {i}")
    linked = 0
    tick = timer.tick_ms
    for k, wheel in enumerate(levels):
        # I3: level k has tick = tick * size**k, the same size, interval = tick * size.
        if wheel.tick_ms != tick or wheel.wheel_size != timer.wheel_size:
            _fail(f"level {k}: tick {wheel.tick_ms}, size {wheel.wheel_size}; expected {tick}, {timer.wheel_size}")
        if wheel.interval != wheel.tick_ms * wheel.wheel_size:
            _fail(f"level {k}: interval {wheel.interval} != tick * size")
        # I4: a wheel's clock sits on its own tick boundary, and an overflow wheel's clock is the
        # lower wheel's clock rounded down to the overflow tick (it starts there and follows it).
        cur = wheel.current_time
        if cur % wheel.tick_ms:
            _fail(f"level {k}: current_time {cur} is not a multiple of tick {wheel.tick_ms}")
        if k > 0:
            lower = levels[k - 1].current_time
            if cur != lower - lower % wheel.tick_ms:
                _fail(f"level {k}: current_time {cur} != lower clock {lower} rounded down to {wheel.tick_ms}")
        for i, bucket in enumerate(wheel.buckets):
            entries = list(bucket.entries())
            linked += len(entries)
            exp_b = bucket.get_expiration()
            if id(bucket) not in queued:
                # I5: a bucket that is not queued holds no window and no entries.
                if exp_b != -1 or entries:
                    _fail(f"level {k} bucket {i}: not queued but has expiration {exp_b} and {len(entries)} entries")
                continue
            # I6: a queued bucket's expiration is the start of a window this level can still
            # reach, and the window's index is this bucket's index (bucket uniqueness).
            if exp_b % wheel.tick_ms or (exp_b // wheel.tick_ms) % wheel.wheel_size != i:
                _fail(f"level {k} bucket {i}: expiration {exp_b} is not a window start of this bucket")
            if not cur + wheel.tick_ms <= exp_b < cur + wheel.interval:
                _fail(f"level {k} bucket {i}: window {exp_b} outside [{cur + wheel.tick_ms}, {cur + wheel.interval})")
            for e in entries:
                # I7: every linked entry belongs to its bucket's window and knows its bucket.
                if not exp_b <= e.expiration_ms < exp_b + wheel.tick_ms:
                    _fail(f"level {k} bucket {i}: entry exp {e.expiration_ms} "
                          f"outside window [{exp_b}, {exp_b + wheel.tick_ms})")
                if e.list is not bucket:
                    _fail(f"level {k} bucket {i}: entry exp {e.expiration_ms} does not point at its bucket")
                # I8 (sequential runs only): cancelled or superseded entries leave at once.
                if sequential and e.cancelled():
                    _fail(f"level {k} bucket {i}: a cancelled entry (exp {e.expiration_ms}) is still linked")
        tick = wheel.interval
    # I9: size() is the number of linked entries (Kafka's taskCounter).
    if timer.size() != linked:
        _fail(f"size() is {timer.size()} but {linked} entries are linked")
    for b in heap:
        if not isinstance(b, TimerTaskList) or b.get_expiration() == -1:
            _fail("a queued bucket has no window (expiration -1)")


def check_mock_timer(timer: MockTimer) -> None:
    """Kafka's MockTimer: a min-heap on expiration; size() follows its size rule."""
    q = timer.entries()
    for i in range(1, len(q)):
        if q[(i - 1) >> 1].expiration_ms > q[i].expiration_ms:
            _fail(f"mock timer heap order broken at index {i}")
    want = len(q) if timer.size_rule == MOCK_SIZE_QUEUE else sum(not e.cancelled() for e in q)
    if timer.size() != want:
        _fail(f"size() is {timer.size()} but the queue holds {want} entries counted by rule {timer.size_rule!r}")
