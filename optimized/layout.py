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
                                    belongs to the lowest level whose window end exceeds it).
                                    Level 0 exists from the start; level L+1 is created on demand
                                    (Kafka's overflow wheel) and ``S[NLEV]`` counts the levels
                                    created so far.
* ``bk``    int64[max_levels*W, 4]  one record per bucket (``TimerTaskList``): its expiration (-1:
                                    no window), the first and last chunk of its entries, and how
                                    many slots it has used (live entries and tombstones).
* ``heap``  int64[max_levels*W+1]   the delay queue: bucket ids in a binary heap keyed by bucket
                                    expiration, sifted exactly like ``java.util.PriorityQueue``.
* ``live``  uint64[words(capacity)] one bit per task id: set iff the task is scheduled (its latest
                                    entry is in a bucket and was not cancelled).  At 10^7 ids
                                    the bitmap is 1.25 MB, so it stays in the core's L2 cache
                                    while the tables below do not fit in any cache.
* ``tk``    int32[capacity]         one *location* per task id: the pool slot of its latest entry
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
Memory: 4 (location) + 4 + 8 (slot) bytes + 1 bit per pending timer, plus partly filled chunks.
Locations are int32, so the pool holds at most ``MAX_SLOTS`` slots (:func:`grow_chunks` refuses more).
"""

from __future__ import annotations

import numpy as np

from wheelspec.spec import limits as _limits
from wheelspec.spec.limits import RangeError

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
ERROR = 10     # non-zero: a kernel met an impossible state (ERR_* below)
DIAG = 16      # S[DIAG:DIAG + DIAG_LEN]: what a checked kernel saw when one of its checks failed:
DIAG_LEN = 8   # the check's code, then up to 7 state values (timer_kernels.CHECKS names them)
S_LEN = 24

# -- S[ERROR] codes: states the proofs say cannot happen; the wrapper raises if one is set ---------
ERR_LEVELS = 1  # a new overflow level would exceed the level table
ERR_HEAP = 2    # the delay queue would hold more entries than there are buckets
ERR_CHECK = 3   # a check of the checked build failed (debug mode; S[DIAG:] says which and what)

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
EXP_SPAN = _limits.EXP_SPAN  # defined once, in the spec

#: Largest dense task id + 1 (pool slots hold int32 ids).
MAX_CAPACITY = _limits.MAX_ID

#: Pool slots are numbered in int32 (``tk``, the location of each task): at most this many chunks,
#: so every slot number is below 2**31.  That is 2**31 slots of 12 bytes (24 GiB of pool) before
#: the limit matters.
MAX_CHUNKS = int(np.iinfo(np.int32).max) // CHUNK
MAX_SLOTS = MAX_CHUNKS * CHUNK


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
    tk = np.full(capacity, -1, np.int32)
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
    new = min(old + max(at_least, old // 2, 16), MAX_CHUNKS)
    if new < old + at_least:
        raise RangeError(f"the chunk pool would need more than {MAX_SLOTS} slots (int32 locations): "
                         "too many pending timers and tombstones")
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


# -- the relations this layout rests on, asserted at import ------------------------------------------
# (TigerBeetle's comptime asserts, tokio's asserts beside its constants: a constant changed without
# its partners fails here, at import, instead of as a wrong index inside a compiled kernel.)

_S_SLOTS = {"TICK": TICK, "WSIZE": WSIZE, "NLEV": NLEV, "MAXLEV": MAXLEV, "COUNT": COUNT, "HEAPN": HEAPN,
            "FREE": FREE, "NFREE": NFREE, "NOUT": NOUT, "NEED": NEED, "ERROR": ERROR}
assert len(set(_S_SLOTS.values())) == len(_S_SLOTS), \
    f"S slots must be distinct: two names on one slot make two counters one ({_S_SLOTS})"
assert all(0 <= v < DIAG for v in _S_SLOTS.values()), \
    f"every named S slot must lie below the diagnostic area S[{DIAG}:]: a failing check writes there"
assert DIAG_LEN >= 2 and DIAG + DIAG_LEN <= S_LEN, \
    f"the diagnostic area S[{DIAG}:{DIAG + DIAG_LEN}] (a check's code and its values) must fit in S_LEN={S_LEN}"
assert sorted((LV_TICK, LV_CUR, LV_CVID, LV_CIDX, LV_END)) == list(range(LV_COLS)), \
    "lv columns must be distinct and fill the LV_COLS columns of a level row"
assert sorted((B_EXP, B_HEAD, B_TAIL, B_NSLOTS)) == list(range(BK_COLS)), \
    "bk columns must be distinct and fill the BK_COLS columns of a bucket row"
assert DONE == 0 and len({DONE, NEED_CHUNKS, NEED_OUT}) == 3, \
    "kernel status codes must be distinct, DONE 0: a wrapper grows what the status names and resumes until DONE"
assert len({0, ERR_LEVELS, ERR_HEAP, ERR_CHECK}) == 4, \
    "S[ERROR] codes must be distinct and non-zero: 0 means no error, and the wrapper's message depends on the code"

assert CHUNK > 0 and CHUNK & (CHUNK - 1) == 0, \
    f"CHUNK={CHUNK} must be a power of 2: the kernels find a slot's place in its tail chunk as nslots & (CHUNK - 1)"
assert CHUNK * np.dtype(np.int32).itemsize % 64 == 0, \
    "a chunk's int32 ids must fill whole 64-byte cache lines: the flush reads chunks line by line"

# Ids, chunk numbers and slot numbers are int32 (pid, cnext, tk); the bitmap has 64-bit words.
_I32_MAX = int(np.iinfo(np.int32).max)
assert MAX_SLOTS - 1 <= _I32_MAX and MAX_CHUNKS * CHUNK == MAX_SLOTS, \
    "tk holds slot numbers as int32: the largest slot of the largest pool must fit"
assert MAX_CAPACITY - 1 <= _I32_MAX, \
    f"pid holds task ids as int32: the largest dense id {MAX_CAPACITY - 1} must fit (MAX_CAPACITY={MAX_CAPACITY})"
assert MAX_CAPACITY - 1 <= _limits.MAX_ID, \
    "a dense row must be an id the limits accept (wheelspec.spec.limits.MAX_ID)"
assert np.dtype(np.uint64).itemsize * 8 == 64 == 1 << 6, \
    "the liveness bitmap's words are 64 bits: the kernels take id >> 6 as the word and id & 63 as the bit"
assert (live_words(1), live_words(64), live_words(65)) == (1, 1, 2) and live_words(MAX_CAPACITY) * 64 >= MAX_CAPACITY, \
    "live_words must give one bit per id"

# Spans: every expiration the limits accept is within EXP_SPAN of every accepted clock reading, and the
# level table sized by it (max_levels) holds every level that can be created, with int64 arithmetic.
assert _limits.MIN_DELAY_MS == -_limits.MAX_DELAY_MS and _limits.MAX_TIME_MS + _limits.MAX_DELAY_MS < EXP_SPAN, \
    (f"|now + delay - current_time| <= MAX_TIME_MS + MAX_DELAY_MS must stay below EXP_SPAN={EXP_SPAN}: "
     "max_levels sizes the level table by EXP_SPAN, and a level beyond the table is ERR_LEVELS")
assert _limits.MAX_TIME_MS + EXP_SPAN + 2 * _limits.MAX_WHEEL_SIZE * EXP_SPAN < 2**63, \
    "the window end of the highest level that can be created (interval < 2 * W * EXP_SPAN) must fit int64"
_MAX_BUCKETS = 0
for _tick in (1, 2, 3, 7, 1000, _limits.MAX_TICK_MS - 1, _limits.MAX_TICK_MS):
    for _w in (_limits.MIN_WHEEL_SIZE, 3, 20, 255, 256, _limits.MAX_WHEEL_SIZE - 1, _limits.MAX_WHEEL_SIZE):
        _rows = max_levels(_tick, _w)
        # Level rows - 2 is the highest that can ever be created (it holds everything within EXP_SPAN);
        # the last row is the margin the invariant check watches.
        assert (_w - 1) * _tick * _w ** (_rows - 2) >= EXP_SPAN, \
            f"max_levels({_tick}, {_w}) = {_rows}: its last row but one must hold every expiration within EXP_SPAN"
        assert _limits.MAX_TIME_MS + EXP_SPAN + _tick * _w ** (_rows - 1) < 2**63, \
            f"max_levels({_tick}, {_w}): the highest level's window end must fit int64"
        _MAX_BUCKETS = max(_MAX_BUCKETS, _rows * _w)
assert 3 * (MAX_CAPACITY // CHUNK + 1 + _MAX_BUCKETS) // 2 + 16 <= _I32_MAX, \
    ("cnext holds chunk numbers as int32: a full pool (every id pending, a tail chunk per bucket, and "
     "grow_chunks' slack of half) must be numbered below 2**31")
del _tick, _w, _rows
