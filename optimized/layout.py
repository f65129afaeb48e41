"""The array layout of the optimized engine: slot numbers, column numbers, sizes.

Everything the compiled kernels share is named here, so the kernels, the Python wrappers and the
invariant checker agree on one layout.  This module imports numpy only (no numba), so that it is
cheap to import.

Timer (models Kafka's ``SystemTimer`` + ``TimingWheel`` + ``TimerTaskList`` + ``DelayQueue``):

* ``S``     int64[S_LEN]            scalars (the slots named below).
* ``lv``    int64[max_levels, 5]    one record per wheel level: its tick, its lazy clock
                                    ``current_time``, (to place entries without dividing)
                                    ``current_time // tick`` and that modulo W, and the end of
                                    the level's window ``current_time + tick * W`` (an entry
                                    belongs to the lowest level whose window end exceeds it).  Level 0 exists from the start; level L+1 is
                                    created on demand (Kafka's overflow wheel) and ``S[NLEV]``
                                    counts the levels created so far.
* ``bk``    int64[max_levels*W, 4]  one record per bucket (``TimerTaskList``): its expiration (-1:
                                    no window), the first and last chunk of its entries, and how
                                    many slots it has used (live entries and tombstones).
* ``heap``  int64[max_levels*W+1]   the delay queue: bucket ids in a binary heap keyed by bucket
                                    expiration, sifted exactly like ``java.util.PriorityQueue``.
* ``live``  uint64[words(capacity)] one bit per task id: set iff the task is scheduled (its latest
                                    entry is in a bucket and was not cancelled).  At 10^7 ids
                                    the bitmap is 1.25 MB, so it stays in the core's L2 cache
                                    while the tables below do not fit in any cache.
* ``tk``    int64[capacity]         one *location* per task id: the pool slot of its latest entry
                                    (-1: never placed).  A task *is* its entry: the id is the row.
                                    Only meaningful while a slot still holds the id (a fired or
                                    cancelled task keeps its stale location).
* ``pid``   int32[chunks*CHUNK]     bucket storage: per-bucket chains of fixed-size chunks of
* ``pexp``  int64[chunks*CHUNK]     slots, in insertion order; a slot holds a task id and its
                                    expiration, or -1 (a tombstone).  A slot holding ``t`` is
                                    live iff bit ``t`` of ``live`` is set; the flush skips the
                                    others and clears every slot it reads.
* ``cnext`` int32[chunks]           next chunk of a chain (or of the free list), -1 at the end.

Invariants (checked by :mod:`.invariants`):

* a slot holding ``t`` is ``t``'s latest entry: ``tk[t] == s`` (placing an entry tombstones the
  task's previous slot if that slot still holds it);
* bit ``t`` set implies ``pid[tk[t]] == t``; ``S[COUNT]`` is the number of bits set.

Why chunks, tombstones and expirations in the slots rather than Kafka's doubly linked lists: a
linked-list flush visits nodes at random addresses and measured 3-4 M fires/s here (memory
latency bound).  Here a flush reads its chunks sequentially; per entry it tests one bit of the
small bitmap, and only a cascading entry writes its new location (a store, which does not stall).

Why the bitmap: a cancel has to say whether it found the task pending.  With the liveness in the
slot, a cancel of a random task among 10^7 made two dependent random DRAM accesses (location,
then slot); with the liveness kept in the slot's owner (``tk[pid[s]] == s``), every fire made one.
The bitmap answers both from cache: a cancel only clears a bit and leaves its slot for the flush
to skip, and a fire only tests one.  A cancelled entry's slot still holds its id until its bucket
is flushed, which is why re-placing a task tombstones its previous slot explicitly.
Memory: 8 (location) + 4 + 8 (slot) bytes + 1 bit per pending timer, plus partly filled chunks.
"""

from __future__ import annotations

import numpy as np

#: Slots of a bucket chunk.  64 int32 ids = 256 bytes = 4 cache lines: long enough for the hardware
#: prefetcher, short enough that a nearly empty bucket wastes little.
CHUNK = 64

# -- timer scalars S[...] ------------------------------------------------------------------------
TICK = 0       # base tick (ms)
WSIZE = 1      # wheel size (buckets per level)
NLEV = 2       # levels created so far (>= 1)
MAXLEV = 3     # rows of lv (levels that can ever be needed for the accepted ranges, + 1)
COUNT = 4      # Kafka's taskCounter: live entries in buckets
HEAPN = 5      # buckets in the delay queue
FREE = 6       # head of the free-chunk list (-1: empty)
NFREE = 7      # chunks on the free list
NOUT = 8       # rows of the output buffer filled so far (fired tasks)
NEED = 9       # set by a kernel that stopped for lack of room: how much it needs
ERROR = 10     # non-zero: a kernel met an impossible state (see kernels.ERR_*)
S_LEN = 16

# -- lv columns -------------------------------------------------------------------------------------
LV_TICK = 0
LV_CUR = 1
LV_CVID = 2    # current_time // tick
LV_CIDX = 3    # (current_time // tick) % W: the bucket the clock stands in
LV_END = 4     # current_time + tick * W: the level holds exactly the expirations below this
LV_COLS = 5

# -- bk columns -------------------------------------------------------------------------------------
B_EXP = 0
B_HEAD = 1
B_TAIL = 2
B_NSLOTS = 3
BK_COLS = 4

# -- kernel status codes (why a kernel stopped early; the wrapper grows something and resumes) ----
DONE = 0
NEED_CHUNKS = 1
NEED_OUT = 2

#: Every expiration the accepted ranges allow satisfies ``|exp - current_time| < 2**44`` (see
#: :mod:`wheelspec.spec.limits`).
EXP_SPAN = 2**44

#: Largest dense task id + 1 (pool slots hold int32 ids).
MAX_CAPACITY = 2**31 - 1


def live_words(capacity: int) -> int:
    """Words of the liveness bitmap for ids ``< capacity``."""
    return (capacity + 63) >> 6


def max_levels(tick_ms: int, wheel_size: int) -> int:
    """Rows for the level table: enough for any expiration the accepted ranges allow.

    Level L's clock is ``current_time`` of level 0 rounded down to level L's tick (the levels stay
    aligned), so level L accepts every ``exp`` with ``exp - current_time_0 < (W - 1) * tick * W**L``.
    The first L where that reaches ``EXP_SPAN`` is the highest level ever created; one more row is
    kept as a margin that an invariant check watches."""
    level = 0
    while (wheel_size - 1) * tick_ms * wheel_size**level < EXP_SPAN:
        level += 1
    return level + 2


def new_timer_arrays(tick_ms: int, wheel_size: int, start_ms: int, capacity: int,
                     chunks: int) -> dict[str, np.ndarray]:
    """Allocate a fresh timer: level 0 at ``start_ms`` rounded down to the tick, empty buckets,
    an empty delay queue, ``capacity`` task rows and ``chunks`` free chunks."""
    maxlev = max_levels(tick_ms, wheel_size)
    nbuckets = maxlev * wheel_size
    S = np.zeros(S_LEN, np.int64)
    S[TICK] = tick_ms
    S[WSIZE] = wheel_size
    S[NLEV] = 1
    S[MAXLEV] = maxlev
    lv = np.zeros((maxlev, LV_COLS), np.int64)
    lv[0, LV_TICK] = tick_ms
    lv[0, LV_CUR] = start_ms - start_ms % tick_ms
    lv[0, LV_CVID] = start_ms // tick_ms
    lv[0, LV_CIDX] = (start_ms // tick_ms) % wheel_size
    lv[0, LV_END] = lv[0, LV_CUR] + tick_ms * wheel_size
    bk = np.full((nbuckets, BK_COLS), -1, np.int64)
    bk[:, B_NSLOTS] = 0
    heap = np.full(nbuckets + 1, -1, np.int64)
    tk = np.full(capacity, -1, np.int64)
    live = np.zeros(live_words(capacity), np.uint64)
    pid = np.full(chunks * CHUNK, -1, np.int32)
    pexp = np.zeros(chunks * CHUNK, np.int64)
    cnext = np.arange(1, chunks + 1, dtype=np.int32)
    cnext[-1] = -1
    S[FREE] = 0
    S[NFREE] = chunks
    return {"S": S, "lv": lv, "bk": bk, "heap": heap, "tk": tk, "live": live, "pid": pid, "pexp": pexp, "cnext": cnext}


def grow_chunks(S: np.ndarray, pid: np.ndarray, pexp: np.ndarray, cnext: np.ndarray,
                at_least: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one place the chunk pool grows: by ``at_least`` chunks and by at least half its size
    (1.5x keeps the slack, which counts against bytes per pending timer, at a third at most), and
    put the new chunks on the free list.  Returns the new ``(pid, pexp, cnext)``."""
    old = cnext.shape[0]
    new = old + max(at_least, old // 2, 16)
    pid2 = np.full(new * CHUNK, -1, np.int32)
    pid2[: old * CHUNK] = pid
    pexp2 = np.zeros(new * CHUNK, np.int64)
    pexp2[: old * CHUNK] = pexp
    cnext2 = np.empty(new, np.int32)
    cnext2[:old] = cnext
    cnext2[old:new] = np.arange(old + 1, new + 1, dtype=np.int32)
    cnext2[new - 1] = S[FREE]  # the new chunks go in front of whatever is still free
    S[FREE] = old
    S[NFREE] += new - old
    return pid2, pexp2, cnext2


def grow_out(out: np.ndarray, at_least: int) -> np.ndarray:
    """Grow the fired-task buffer (``int64[2, capacity]``: row 0 ids, row 1 expirations, so each
    row is a contiguous array) to at least ``at_least`` columns, at least doubling.  The new part
    is left uninitialised: kernels only read what they wrote."""
    old = out.shape[1]
    if at_least <= old:
        return out
    b = np.empty((2, max(2 * old, at_least)), np.int64)
    b[:, :old] = out
    return b


def grow_rows(a: np.ndarray, at_least: int, fill: int) -> np.ndarray:
    """Grow a 1-d or 2-d array to at least ``at_least`` rows (at least doubling), new rows = fill."""
    old = a.shape[0]
    if at_least <= old:
        return a
    new = max(2 * old, at_least, 16)
    b = np.full((new,) + a.shape[1:], fill, a.dtype)
    b[:old] = a
    return b
