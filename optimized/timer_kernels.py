"""Compiled kernels of the array timer (Kafka's ``SystemTimer``, ``TimingWheel``,
``TimerTaskList`` and ``DelayQueue`` over the arrays of :mod:`.layout`).

Rules these kernels keep:

* They never allocate and never grow anything.  A kernel that could run out of room (chunks, the
  output buffer, the flush scratch) checks *before* it changes any state, stores what it needs in
  ``S[NEED]`` and returns a status; the Python wrapper grows that one thing and calls again.  The
  state between two calls is always a consistent timer, so resuming is just calling again.
* They trust their inputs: ids, delays and times are validated in Python before any call
  (:mod:`.timer`), which is what keeps every index in bounds.
* Hot loops are flat.  No helper is called per *entry*: placement is one loop over a range of
  entries, called once per block of a large add batch (``_bucket_block`` then ``_place_block``:
  see ``add_batch``), once per small batch or single add, and once per flushed chunk of a
  cascading bucket (``_bucket_block`` then ``_place_block`` again, or ``_place_range``); a
  level-0 bucket's flush fires its entries in its own loop.  Helpers that take arrays
  (``_poll``, ``_advance_clock``, ``_fill_table``) run once per bucket.
* ``error_model="numpy"``: integer division by zero cannot happen here (ticks >= 1, W >= 2), and
  without Python's zero check the divisions in the placement loop have no extra branch.

The kernels below are plain functions compiled twice by :func:`make_kernels` (see
:mod:`.kernelbuild`): the fast build, whose dispatchers are this module's attributes of the same
names, and the checked build (:func:`checked_kernels`, used by the debug mode), where every
``if CHECKED:`` block is compiled in.  Those blocks assert, per entry, what the proofs and the
invariants say (:data:`CHECKS` lists them); a failed check records its code and the state it saw
in ``S[DIAG:]`` (:func:`_fail`), sets ``S[ERROR] = ERR_CHECK`` and stops the kernel.  In the fast
build they are pruned before typing: its machine code is the code without them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .kernelbuild import Builds
from .layout import (
    B_EXP,
    B_HEAD,
    B_NSLOTS,
    B_TAIL,
    CHUNK,
    COUNT,
    DIAG,
    DIAG_LEN,
    DONE,
    ERR_CHECK,
    ERR_HEAP,
    ERR_LEVELS,
    ERROR,
    EXP_SPAN,
    FREE,
    HEAPN,
    LV_CIDX,
    LV_CUR,
    LV_CVID,
    LV_END,
    LV_TICK,
    MAXLEV,
    NEED,
    NEED_CHUNKS,
    NEED_OUT,
    NFREE,
    NLEV,
    NOUT,
    WSIZE,
)
from .prefetch import prefetch, prefetch_write

JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")

#: Compile-time constant of a build (see :mod:`.kernelbuild`): each build's copy of this module's
#: globals sets it; ``if CHECKED:`` blocks exist only in the checked build.
CHECKED = False

#: Hot loops index with ``U(i)``: every such index is non-negative by construction (ids and
#: delays are validated before any kernel runs; slots, buckets and levels come from the arrays
#: themselves), and with an unsigned index numba skips its negative-index wraparound.  That removed
#: 23 of 129 instructions per add (callgrind, 4*10^5 adds with delays uniform in [1, 30000]).
U = np.uint64

#: How many ids ahead ``cancel_range`` starts fetching a task's bitmap word.
PF_AHEAD = 32

# -- the checks of the checked build ------------------------------------------------------------------
# A failed check stores its code in S[DIAG] and the values CHECKS names in S[DIAG + 1:].
CK_SPAN = 1
CK_LIVE = 2
CK_COUNT = 3
CK_FLUSHED = 4
CK_LEVEL = 5
CK_WINDOW = 6
CK_NSLOTS = 7
CK_REUSE = 8
CK_FREE = 9
CK_SLOT = 10
CK_ROOM = 11
CK_BATCH_DUE = 12
CK_BATCH_BUCKET = 13
CK_BLOCK_LIVE = 14
CK_BLOCK_COUNT = 15
CK_BLOCK_NSLOTS = 16
CK_BLOCK_REUSE = 17
CK_BLOCK_FREE = 18
CK_BLOCK_SLOT = 19
CK_QUEUE = 20
CK_BUCKET = 21
CK_CHAIN = 22
CK_FLUSH_LIVE = 23
CK_FLUSH_WINDOW = 24
CK_CASCADE = 25
CK_FLUSH_COUNT = 26
CK_CANCEL_COUNT = 27
CK_CANCEL1_COUNT = 28
CK_CANCEL_LIVE = 29
CK_BATCH_ROOM = 30

_ENTRY = ("task", "exp")
#: code -> (kernel, the rule that failed, names of the values in ``S[DIAG + 1:]``).
CHECKS: dict[int, tuple[str, str, tuple[str, ...]]] = {
    CK_SPAN: ("_place_range", "an expiration is within EXP_SPAN of the level-0 clock", _ENTRY + ("clock",)),
    CK_LIVE: ("_place_range", "a pending task's location holds its entry (bitmap bit agrees with the location)",
              ("task", "location", "slot holds")),
    CK_COUNT: ("_place_range", "the task counter never goes negative", ("task", "count")),
    CK_FLUSHED: ("_place_range", "an entry re-added by a flush is pending (its bit is set)", _ENTRY),
    CK_LEVEL: ("_place_range", "an entry goes to the lowest level whose window reaches its expiration",
               _ENTRY + ("level", "window end below (due below at level 0)", "window end", "levels")),
    CK_WINDOW: ("_place_range", "the computed bucket's window contains the expiration and is one of the level's W",
                _ENTRY + ("level", "bucket", "window start", "tick", "level clock")),
    CK_NSLOTS: ("_place_range", "a bucket's slot count is not negative and its tail chunk is in the pool",
                ("bucket", "slots", "tail chunk", "chunks")),
    CK_REUSE: ("_place_range", "a bucket changes its window only when empty (the bucket-reuse rule)",
               ("bucket", "old window", "new window", "slots")),
    CK_FREE: ("_place_range", "a chunk taken from the free list is in the pool",
              ("bucket", "chunk", "free chunks", "chunks")),
    CK_SLOT: ("_place_range", "a bucket's next slot is empty", ("task", "slot", "slot holds", "bucket")),
    CK_ROOM: ("add_range", "output rows and free chunks are within their buffers",
              ("rows filled", "rows", "free chunks", "position", "batch")),
    CK_BATCH_ROOM: ("add_batch", "output rows and free chunks are within their buffers",
                    ("rows filled", "rows", "free chunks", "position", "batch")),
    CK_BATCH_DUE: ("add_batch or advance (a cascade)", "an entry _bucket_block marked due is due",
                   _ENTRY + ("due below",)),
    CK_BATCH_BUCKET: ("add_batch or advance (a cascade)",
                      "_bucket_block's bucket is on the lowest level reaching the expiration, and its "
                      "window contains it",
                      _ENTRY + ("level", "bucket", "window start", "tick", "level clock")),
    CK_BLOCK_LIVE: ("_place_block", "a pending task's location holds its entry (bitmap bit agrees with the location)",
                    ("task", "location", "slot holds")),
    CK_BLOCK_COUNT: ("_place_block", "the task counter never goes negative", ("task", "count")),
    CK_BLOCK_NSLOTS: ("_place_block", "a bucket's slot count is not negative and its tail chunk is in the pool",
                      ("bucket", "slots", "tail chunk", "chunks")),
    CK_BLOCK_REUSE: ("_place_block", "a bucket changes its window only when empty (the bucket-reuse rule)",
                     ("bucket", "old window", "new window", "slots")),
    CK_BLOCK_FREE: ("_place_block", "a chunk taken from the free list is in the pool",
                    ("bucket", "chunk", "free chunks", "chunks")),
    CK_BLOCK_SLOT: ("_place_block", "a bucket's next slot is empty", ("task", "slot", "slot holds", "bucket")),
    CK_QUEUE: ("advance", "the delay queue's head is a bucket with a window",
               ("bucket", "expiration", "queued", "buckets", "now")),
    CK_BUCKET: ("advance", "a queued bucket has slots and its first chunk is in the pool",
                ("bucket", "expiration", "slots", "head chunk", "chunks")),
    CK_CHAIN: ("advance", "a bucket's chain of chunks stays in the pool", ("bucket", "chunk", "slots left", "chunks")),
    CK_FLUSH_LIVE: ("advance",
                    "a pending entry in a flushed bucket is its task's latest (bit agrees with the location)",
                    ("task", "slot", "location", "bucket")),
    CK_FLUSH_WINDOW: ("advance", "a flushed entry lies in its bucket's window",
                      _ENTRY + ("bucket", "window start", "tick")),
    CK_CASCADE: ("advance", "a flush moves each entry strictly down a level, or fires it (level 0)",
                 _ENTRY + ("level", "bound (window end below, or due below)", "now")),
    CK_FLUSH_COUNT: ("advance", "the task counter never goes negative", ("bucket", "count", "entries taken")),
    CK_CANCEL_COUNT: ("cancel_range", "the task counter never goes negative", ("task", "count", "position")),
    CK_CANCEL1_COUNT: ("cancel_one", "the task counter never goes negative", ("task", "count")),
    CK_CANCEL_LIVE: ("check_cancels", "a pending task's location holds its entry (bitmap bit agrees with the location)",
                     ("task", "location", "slot holds", "position")),
}


_CODES = {name: code for name, code in globals().items() if name.startswith("CK_")}
assert sorted(_CODES.values()) == sorted(CHECKS) and 0 not in CHECKS, \
    f"every check code must be distinct, non-zero and described in CHECKS ({_CODES})"
assert DIAG_LEN == 8 and all(len(names) <= DIAG_LEN - 1 for _, _, names in CHECKS.values()), \
    "_fail stores a check's code and 7 values in S[DIAG:DIAG + 8]"


def describe_check(S: np.ndarray) -> str:
    """The message for a failed check of the checked build (``S[ERROR] == ERR_CHECK``)."""
    code = int(S[DIAG])
    kernel, rule, names = CHECKS.get(code, ("?", f"unknown check {code}", ()))
    values = ", ".join(f"{name}={int(S[DIAG + 1 + k])}" for k, name in enumerate(names))
    return f"optimized engine invariant broken in checked kernel {kernel}: {rule} ({values})"


def _fail(S, check, v1, v2, v3, v4, v5, v6, v7):
    """Checked build: record a failed check (the first one only) for the wrapper to raise."""
    if S[ERROR] == 0:
        S[ERROR] = ERR_CHECK
        S[DIAG] = check
        S[DIAG + 1] = v1
        S[DIAG + 2] = v2
        S[DIAG + 3] = v3
        S[DIAG + 4] = v4
        S[DIAG + 5] = v5
        S[DIAG + 6] = v6
        S[DIAG + 7] = v7


def _place_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, lo, hi, flushed):
    """Add the entries ``(ids[i], exps[i] + base)`` for ``lo <= i < hi``, in order (``base`` is the
    clock reading when ``exps`` holds delays, 0 when it holds expirations): Kafka's
    ``SystemTimer.addTimerTaskEntry`` + ``TimingWheel.add``.

    Per entry: the task's previous slot, if it still holds the task (its entry pending, or
    cancelled and not flushed yet), becomes a tombstone, and a pending one stops counting
    (re-add replaces; skipped when ``flushed``: entries re-added by a flush were just unlinked,
    and not reading their old slot keeps the flush free of random reads); then, from
    level 0 up: ``exp < current_time + tick`` means due (written to ``out``: the timer runs it);
    ``exp < current_time + interval`` means bucket ``(exp // tick) % W`` of that level, whose
    window start becomes ``exp // tick * tick`` and which is offered to the delay queue only if
    that changed (Kafka's bucket-reuse rule: a bucket is queued at most once); otherwise the next
    level, created on demand with ``tick = interval`` below and the clock of the level below
    rounded down to that tick.

    The caller guarantees room: ``hi - lo`` free chunks and ``hi - lo`` free output rows (each
    entry takes at most one of each)."""
    W = S[WSIZE]
    nlev = S[NLEV]
    maxlev = S[MAXLEV]
    count = S[COUNT]
    heapn = S[HEAPN]
    free = S[FREE]
    nfree = S[NFREE]
    nout = S[NOUT]
    heapcap = heap.shape[0]
    # Due means below level 0's clock + tick.  Only level 0 needs the test: the level clocks are
    # aligned (level L's clock is level L-1's rounded down to level L's tick), so an entry that
    # passed level L-1 (exp >= clock[L-1] + tick[L] >= clock[L] + tick[L]) is never due at level L.
    due_below = lv[0, LV_CUR] + lv[0, LV_TICK]
    for i in range(lo, hi):
        t = ids[U(i)]
        exp = exps[U(i)] + base
        word = U(t) >> U(6)
        bit = U(1) << (U(t) & U(63))
        if CHECKED:
            if exp - lv[0, LV_CUR] >= EXP_SPAN or lv[0, LV_CUR] - exp >= EXP_SPAN:
                _fail(S, CK_SPAN, t, exp, lv[0, LV_CUR], 0, 0, 0, 0)
                return
            if flushed and (live[word] & bit) == 0:
                _fail(S, CK_FLUSHED, t, exp, 0, 0, 0, 0, 0)
                return
        if not flushed:
            # A new id reads -1 here (ids are usually handed out in order, so this read streams).
            old = tk[U(t)]
            if CHECKED:
                if live[word] & bit:
                    held = np.int64(pid[U(old)]) if old >= 0 else np.int64(-2)
                    if held != t:
                        _fail(S, CK_LIVE, t, old, held, 0, 0, 0, 0)
                        return
            if old >= 0 and pid[U(old)] == t:
                pid[U(old)] = -1
                if live[word] & bit:
                    count -= 1
                    if CHECKED:
                        if count < 0:
                            _fail(S, CK_COUNT, t, count, 0, 0, 0, 0, 0)
                            return
        if exp < due_below:
            # Due (or overdue): handed to the executor now, in this order.  Not scheduled any
            # more; its old slot (if any) is already dead.
            live[word] &= ~bit
            out[0, nout] = t
            out[1, nout] = exp
            nout += 1
            continue
        # The lowest level whose window (its clock + tick * W, cached in LV_END) reaches exp.
        level = 0
        while exp >= lv[U(level), LV_END]:
            if level + 1 == nlev:
                # Kafka's addOverflowWheel: tick = this interval, start = this clock.
                if nlev >= maxlev:
                    S[ERROR] = ERR_LEVELS
                    break
                cur = lv[U(level), LV_CUR]
                ntick = lv[U(level), LV_TICK] * W
                lv[nlev, LV_TICK] = ntick
                lv[nlev, LV_CUR] = cur - cur % ntick
                lv[nlev, LV_CVID] = cur // ntick
                lv[nlev, LV_CIDX] = (cur // ntick) % W
                lv[nlev, LV_END] = lv[nlev, LV_CUR] + ntick * W
                nlev += 1
            level += 1
        if S[ERROR] != 0:
            break
        # The bucket is (exp // tick) % W.  It is found from the clock's own bucket, as exp // tick
        # is less than W windows ahead of it, so no modulo is needed.  exp // tick itself: with
        # tick 1 (Kafka's default for level 0) no division; otherwise a multiplication by the
        # reciprocal, corrected by one step.  That is exact: 0 < exp < 2**45, so the float product
        # is within 2**-7 of exp / tick and its truncation within 1 of the floor.  (With the cached
        # window ends, replacing the 64-bit integer division took an add from 29 to 18 ns in one
        # A/B run, delays uniform in [1, 30000].)
        tick = lv[U(level), LV_TICK]
        if tick == 1:
            vid = exp
        else:
            vid = np.int64(np.float64(exp) * (1.0 / np.float64(tick)))
            if vid * tick > exp:
                vid -= 1
            elif vid * tick + tick <= exp:
                vid += 1
        idx = lv[U(level), LV_CIDX] + (vid - lv[U(level), LV_CVID])
        if idx >= W:
            idx -= W
        b = level * W + idx
        if CHECKED:
            below = due_below if level == 0 else lv[U(level - 1), LV_END]
            if exp < below or exp >= lv[U(level), LV_END]:
                _fail(S, CK_LEVEL, t, exp, level, below, lv[U(level), LV_END], nlev, 0)
                return
            start = vid * tick
            ahead = vid - lv[U(level), LV_CVID]
            if start > exp or exp >= start + tick or ahead < 0 or ahead >= W or vid % W != idx:
                _fail(S, CK_WINDOW, t, exp, level, b, start, tick, lv[U(level), LV_CUR])
                return
            nsb = bk[U(b), B_NSLOTS]
            tail = bk[U(b), B_TAIL]
            if nsb < 0 or (nsb > 0 and (tail < 0 or tail >= cnext.shape[0])):
                _fail(S, CK_NSLOTS, b, nsb, tail, cnext.shape[0], 0, 0, 0)
                return
            was = bk[U(b), B_EXP]
            if was != start and (was != -1 or nsb != 0):
                _fail(S, CK_REUSE, b, was, start, nsb, 0, 0, 0)
                return
        ns = bk[U(b), B_NSLOTS]
        if ns & (CHUNK - 1) == 0:
            # The bucket's tail chunk is full (or it has none): take a free chunk.
            if CHECKED:
                if nfree <= 0 or free < 0 or free >= cnext.shape[0]:
                    _fail(S, CK_FREE, b, free, nfree, cnext.shape[0], 0, 0, 0)
                    return
            c = free
            free = cnext[c]
            nfree -= 1
            cnext[c] = -1
            if ns == 0:
                bk[U(b), B_HEAD] = c
            else:
                cnext[bk[U(b), B_TAIL]] = c
            bk[U(b), B_TAIL] = c
        s = bk[U(b), B_TAIL] * CHUNK + (ns & (CHUNK - 1))
        if CHECKED:
            if pid[U(s)] != -1:
                _fail(S, CK_SLOT, t, s, np.int64(pid[U(s)]), b, 0, 0, 0)
                return
        pid[U(s)] = t
        pexp[U(s)] = exp
        bk[U(b), B_NSLOTS] = ns + 1
        tk[U(t)] = s
        if not flushed:
            live[word] |= bit  # (a flushed entry is pending: its bit is set already)
        count += 1
        bexp = vid * tick
        if bk[U(b), B_EXP] != bexp:
            # "We only need to enqueue the bucket when its expiration time has changed, i.e. the
            # wheel has advanced and the previous buckets gets reused" (Kafka).
            bk[U(b), B_EXP] = bexp
            if heapn >= heapcap:
                S[ERROR] = ERR_HEAP
                break
            # java.util.PriorityQueue.siftUp, comparing expirations only.
            k = heapn
            heapn += 1
            while k > 0:
                parent = (k - 1) >> 1
                e = heap[parent]
                if bexp >= bk[e, B_EXP]:
                    break
                heap[k] = e
                k = parent
            heap[k] = b
    S[NLEV] = nlev
    S[COUNT] = count
    S[HEAPN] = heapn
    S[FREE] = free
    S[NFREE] = nfree
    S[NOUT] = nout


def add_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, start):
    """Add entries ``(ids[i], exps[i] + base)`` for ``i`` from ``start``; return how far it got
    (``len(ids)`` when done).  Stops
    early, with ``S[NEED]`` set, when chunks or output rows run out."""
    n = ids.shape[0]
    i = start
    while i < n:
        if CHECKED:
            if S[NOUT] < 0 or S[NOUT] > out.shape[1] or S[NFREE] < 0 or S[NFREE] > cnext.shape[0]:
                _fail(S, CK_ROOM, S[NOUT], out.shape[1], S[NFREE], i, n, 0, 0)
                return i
        k = n - i
        room_out = out.shape[1] - S[NOUT]
        if room_out < k:
            k = room_out
        if S[NFREE] < k:
            k = S[NFREE]
        if k <= 0:
            S[NEED] = n - i
            return i
        _place_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, i, i + k, False)
        if S[ERROR] != 0:
            return i
        i += k
    return n


#: Levels the batch path handles (``add_batch``); a timer with more levels adds through the fused
#: loop.  With Kafka's wheel (tick 1 ms, 20 buckets) 6 levels reach 20**6 ms, about two years.
FAST_LEVELS = 6
#: Entries per block of ``add_batch``: the block's bucket numbers (8 bytes each) stay in L1.
ADD_BLOCK = 2048
#: Layout of the scratch array ``add_batch`` works in (``scratch_size`` gives its length): the
#: bucket numbers of one block, then each bucket's window start for the current clocks
#: (``max_levels * W`` entries), then for each of the ``FAST_LEVELS`` levels its window end (or a
#: value no expiration reaches), its tick and ``current_time // tick - current_bucket``.
SCR_WANT = ADD_BLOCK
FAST_NO_END = np.int64(2**62)


def scratch_size(max_levels: int, wheel_size: int) -> int:
    """Length of the int64 scratch array :func:`add_batch` needs."""
    return ADD_BLOCK + max_levels * wheel_size + 3 * FAST_LEVELS


def _ensure_levels(S, lv, top):
    """Create the overflow levels an expiration ``top`` needs, as placing it would (Kafka's
    ``addOverflowWheel``: tick = the interval below, clock = the clock below rounded down to that
    tick).  No clock moves while a batch is added, so creating them before the batch's entries are
    placed gives the same levels as creating them at the first entry that reaches them."""
    W = S[WSIZE]
    nlev = S[NLEV]
    while top >= lv[nlev - 1, LV_END]:
        if nlev >= S[MAXLEV]:
            S[ERROR] = ERR_LEVELS
            return
        cur = lv[nlev - 1, LV_CUR]
        ntick = lv[nlev - 1, LV_TICK] * W
        lv[nlev, LV_TICK] = ntick
        lv[nlev, LV_CUR] = cur - cur % ntick
        lv[nlev, LV_CVID] = cur // ntick
        lv[nlev, LV_CIDX] = (cur // ntick) % W
        lv[nlev, LV_END] = lv[nlev, LV_CUR] + ntick * W
        nlev += 1
    S[NLEV] = nlev


def _bucket_block(scr, W, due_below, exps, base, lo, hi):
    """Bucket number of each entry ``lo <= i < hi`` (``-1``: due now) into ``scr[0 : hi - lo]``,
    from the level table at ``scr[tab:]`` (see :func:`add_batch`).

    The same arithmetic as :func:`_place_range`, written so that the compiler vectorises it: the
    level is a count of window ends at or below the expiration (the ends grow with the level),
    the per-level values are picked from scalars by selects rather than loaded by index, and the
    loop touches no array but ``exps`` and ``scr``.  A table lookup by level (a gather from an
    array the compiler cannot prove apart from the output) kept the loop scalar: 6.5-8.7 against
    2.5-3.7 ns per entry at 10^5, delays uniform in [1, 30000]."""
    tab = scr.shape[0] - 3 * FAST_LEVELS
    e0 = scr[tab + 0]
    e1 = scr[tab + 3]
    e2 = scr[tab + 6]
    e3 = scr[tab + 9]
    e4 = scr[tab + 12]
    t0 = scr[tab + 1]
    t1 = scr[tab + 4]
    t2 = scr[tab + 7]
    t3 = scr[tab + 10]
    t4 = scr[tab + 13]
    t5 = scr[tab + 16]
    v0 = scr[tab + 2]
    v1 = scr[tab + 5]
    v2 = scr[tab + 8]
    v3 = scr[tab + 11]
    v4 = scr[tab + 14]
    v5 = scr[tab + 17]
    # Reciprocals for the division-free exp // tick (exact: see _place_range).
    r0 = 1.0 / np.float64(t0)
    r1 = 1.0 / np.float64(t1)
    r2 = 1.0 / np.float64(t2)
    r3 = 1.0 / np.float64(t3)
    r4 = 1.0 / np.float64(t4)
    r5 = 1.0 / np.float64(t5)
    for i in range(lo, hi):
        exp = exps[U(i)] + base
        c0 = exp >= e0
        c1 = exp >= e1
        c2 = exp >= e2
        c3 = exp >= e3
        c4 = exp >= e4
        level = np.int64(c0) + np.int64(c1) + np.int64(c2) + np.int64(c3) + np.int64(c4)
        tick = t5 if c4 else (t4 if c3 else (t3 if c2 else (t2 if c1 else (t1 if c0 else t0))))
        rec = r5 if c4 else (r4 if c3 else (r3 if c2 else (r2 if c1 else (r1 if c0 else r0))))
        vbase = v5 if c4 else (v4 if c3 else (v3 if c2 else (v2 if c1 else (v1 if c0 else v0))))
        vid = np.int64(np.float64(exp) * rec)
        q = vid * tick
        vid = vid - np.int64(q > exp) + np.int64(q + tick <= exp)
        idx = vid - vbase
        idx = idx - W * np.int64(idx >= W)
        b = level * W + idx
        scr[U(i - lo)] = -1 if exp < due_below else b


def _place_block(S, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, lo, hi, scr, flushed):
    """Place the entries ``lo <= i < hi`` whose bucket numbers :func:`_bucket_block` wrote to
    ``scr[0 : hi - lo]``: the second half of :func:`_place_range`'s loop (tombstone the previous
    slot, hand a due entry to the executor, append to the bucket's tail chunk, offer a bucket whose
    window changed to the delay queue), with the window start looked up in ``scr[SCR_WANT:]``.
    It is a copy of that half rather than a shared helper because a helper taking arrays costs
    about 120 ns per call in a loop (see the module docstring).  Same room guarantee as there.
    ``flushed`` as in :func:`_place_range`: the entries were just taken out of a flushed bucket
    (pending, bit set, previous slot already cleared), so neither their old slot nor their bit
    is touched."""
    count = S[COUNT]
    heapn = S[HEAPN]
    free = S[FREE]
    nfree = S[NFREE]
    nout = S[NOUT]
    heapcap = heap.shape[0]
    for i in range(lo, hi):
        t = ids[U(i)]
        b = scr[U(i - lo)]
        exp = exps[U(i)] + base
        word = U(t) >> U(6)
        bit = U(1) << (U(t) & U(63))
        if not flushed:
            old = tk[U(t)]
            if CHECKED:
                if live[word] & bit:
                    held = np.int64(pid[U(old)]) if old >= 0 else np.int64(-2)
                    if held != t:
                        _fail(S, CK_BLOCK_LIVE, t, old, held, 0, 0, 0, 0)
                        return
            if old >= 0 and pid[U(old)] == t:
                pid[U(old)] = -1
                if live[word] & bit:
                    count -= 1
                    if CHECKED:
                        if count < 0:
                            _fail(S, CK_BLOCK_COUNT, t, count, 0, 0, 0, 0, 0)
                            return
        if b < 0:
            live[word] &= ~bit
            out[0, nout] = t
            out[1, nout] = exp
            nout += 1
            continue
        if CHECKED:
            nsb = bk[U(b), B_NSLOTS]
            tail = bk[U(b), B_TAIL]
            if nsb < 0 or (nsb > 0 and (tail < 0 or tail >= cnext.shape[0])):
                _fail(S, CK_BLOCK_NSLOTS, b, nsb, tail, cnext.shape[0], 0, 0, 0)
                return
            was = bk[U(b), B_EXP]
            want = scr[U(SCR_WANT + b)]
            if was != want and (was != -1 or nsb != 0):
                _fail(S, CK_BLOCK_REUSE, b, was, want, nsb, 0, 0, 0)
                return
        ns = bk[U(b), B_NSLOTS]
        if ns & (CHUNK - 1) == 0:
            if CHECKED:
                if nfree <= 0 or free < 0 or free >= cnext.shape[0]:
                    _fail(S, CK_BLOCK_FREE, b, free, nfree, cnext.shape[0], 0, 0, 0)
                    return
            c = free
            free = cnext[c]
            nfree -= 1
            cnext[c] = -1
            if ns == 0:
                bk[U(b), B_HEAD] = c
            else:
                cnext[bk[U(b), B_TAIL]] = c
            bk[U(b), B_TAIL] = c
        s = bk[U(b), B_TAIL] * CHUNK + (ns & (CHUNK - 1))
        if CHECKED:
            if pid[U(s)] != -1:
                _fail(S, CK_BLOCK_SLOT, t, s, np.int64(pid[U(s)]), b, 0, 0, 0)
                return
        pid[U(s)] = t
        pexp[U(s)] = exp
        bk[U(b), B_NSLOTS] = ns + 1
        tk[U(t)] = s
        if not flushed:
            live[word] |= bit
        count += 1
        bexp = scr[U(SCR_WANT + b)]
        if bk[U(b), B_EXP] != bexp:
            bk[U(b), B_EXP] = bexp
            if heapn >= heapcap:
                S[ERROR] = ERR_HEAP
                break
            k = heapn
            heapn += 1
            while k > 0:
                parent = (k - 1) >> 1
                e = heap[parent]
                if bexp >= bk[e, B_EXP]:
                    break
                heap[k] = e
                k = parent
            heap[k] = b
    S[COUNT] = count
    S[HEAPN] = heapn
    S[FREE] = free
    S[NFREE] = nfree
    S[NOUT] = nout


def _check_buckets(S, lv, scr, ids, exps, base, lo, hi, due_below):
    """Checked build: every bucket number :func:`_bucket_block` wrote for the entries ``lo <= i <
    hi``, against the level table itself (the lowest level whose window reaches the expiration,
    the bucket whose window contains it, or due).  True if a check failed."""
    W = S[WSIZE]
    nlev = S[NLEV]
    for j in range(lo, hi):
        exp = exps[j] + base
        bb = scr[j - lo]
        if bb < 0:
            if exp >= due_below:
                _fail(S, CK_BATCH_DUE, ids[j], exp, due_below, 0, 0, 0, 0)
                return True
            continue
        level = bb // W
        if level >= nlev:
            _fail(S, CK_BATCH_BUCKET, ids[j], exp, level, bb, -1, -1, -1)
            return True
        tick = lv[level, LV_TICK]
        ws = scr[SCR_WANT + bb]
        below = due_below if level == 0 else lv[level - 1, LV_END]
        ahead = ws // tick - lv[level, LV_CVID]
        if (exp < below or exp >= lv[level, LV_END] or ws > exp or exp >= ws + tick or ahead < 0
                or ahead >= W or (ws // tick) % W != bb - level * W):
            _fail(S, CK_BATCH_BUCKET, ids[j], exp, level, bb, ws, tick, lv[level, LV_CUR])
            return True
    return False


def _fill_table(S, lv, scr):
    """The tables :func:`_bucket_block` and :func:`_place_block` read, for the current clocks and
    the ``S[NLEV] <= FAST_LEVELS`` levels that exist: each bucket's window start in
    ``scr[SCR_WANT:]`` and the level table at the end of ``scr``.  Valid until a clock moves or a
    level is created (once per add batch; once per flushed bucket, after its clocks moved)."""
    W = S[WSIZE]
    nlev = S[NLEV]
    # Each bucket's window start for the current clocks: bucket x of level l holds the window
    # whose number is congruent to x modulo W among the W windows from the level's clock on
    # (the clock's own bucket, LV_CIDX, holds the clock's window, LV_CVID).
    for l in range(nlev):
        tick = lv[l, LV_TICK]
        cvid = lv[l, LV_CVID]
        cidx = lv[l, LV_CIDX]
        for x in range(W):
            ahead = x - cidx if x >= cidx else x - cidx + W
            scr[SCR_WANT + l * W + x] = (cvid + ahead) * tick
    # The level table of _bucket_block (a level that does not exist has an end no exp reaches;
    # the top level's end is never compared: nothing placed lies beyond it).
    tab = scr.shape[0] - 3 * FAST_LEVELS
    for l in range(FAST_LEVELS):
        if l < nlev:
            scr[tab + 3 * l] = lv[l, LV_END] if l < nlev - 1 else FAST_NO_END
            scr[tab + 3 * l + 1] = lv[l, LV_TICK]
            scr[tab + 3 * l + 2] = lv[l, LV_CVID] - lv[l, LV_CIDX]
        else:
            scr[tab + 3 * l] = FAST_NO_END
            scr[tab + 3 * l + 1] = 1
            scr[tab + 3 * l + 2] = 0


def add_batch(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, start, scr):
    """:func:`add_range` for large batches, in two passes per block of ``ADD_BLOCK`` entries: the
    bucket numbers first (:func:`_bucket_block`, vectorised), then the placements
    (:func:`_place_block`).  Same result, state and return value as :func:`add_range`, which it
    calls instead when the timer has more than ``FAST_LEVELS`` levels.

    Every level the batch needs is created first (:func:`_ensure_levels`): the clocks do not move
    during an add, so each entry's bucket, and each bucket's window start, is a function of its
    expiration and of clocks fixed for the whole batch."""
    n = ids.shape[0]
    if start >= n:
        return n
    W = S[WSIZE]
    top = exps[U(start)]
    for i in range(start, n):
        e = exps[U(i)]
        top = e if e > top else top
    _ensure_levels(S, lv, top + base)
    if S[ERROR] != 0:
        return start
    nlev = S[NLEV]
    if nlev > FAST_LEVELS:
        return add_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, start)
    _fill_table(S, lv, scr)
    due_below = lv[0, LV_CUR] + lv[0, LV_TICK]
    i = start
    while i < n:
        if CHECKED:
            if S[NOUT] < 0 or S[NOUT] > out.shape[1] or S[NFREE] < 0 or S[NFREE] > cnext.shape[0]:
                _fail(S, CK_BATCH_ROOM, S[NOUT], out.shape[1], S[NFREE], i, n, 0, 0)
                return i
        k = n - i
        if k > ADD_BLOCK:
            k = ADD_BLOCK
        room_out = out.shape[1] - S[NOUT]
        if room_out < k:
            k = room_out
        if S[NFREE] < k:
            k = S[NFREE]
        if k <= 0:
            S[NEED] = n - i
            return i
        _bucket_block(scr, W, due_below, exps, base, i, i + k)
        if CHECKED:
            if _check_buckets(S, lv, scr, ids, exps, base, i, i + k, due_below):
                return i
        _place_block(S, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, i, i + k, scr, False)
        if S[ERROR] != 0:
            return i
        i += k
    return n


def _poll(S, bk, heap):
    """``java.util.PriorityQueue.poll``: remove the head, sift the last element down from the root
    (comparing expirations only, left child on ties, exactly as the JDK does)."""
    n = S[HEAPN] - 1
    S[HEAPN] = n
    x = heap[n]
    heap[n] = -1
    if n > 0:
        key = bk[x, B_EXP]
        k = 0
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = heap[child]
            right = child + 1
            if right < n and bk[c, B_EXP] > bk[heap[right], B_EXP]:
                child = right
                c = heap[child]
            if key <= bk[c, B_EXP]:
                break
            heap[k] = c
            k = child
        heap[k] = x


def _advance_clock(S, lv, time_ms):
    """``TimingWheel.advanceClock``: move level 0's clock to ``time_ms`` rounded down to its tick if
    that is at least one tick ahead, then offer the new clock to the next level, and so on."""
    W = S[WSIZE]
    if time_ms >= lv[0, LV_CUR] + lv[0, LV_TICK]:
        tick = lv[0, LV_TICK]
        lv[0, LV_CUR] = time_ms - time_ms % tick
        lv[0, LV_CVID] = time_ms // tick
        lv[0, LV_CIDX] = (time_ms // tick) % W
        lv[0, LV_END] = lv[0, LV_CUR] + tick * W
        level = 1
        nlev = S[NLEV]
        while level < nlev:
            below = lv[level - 1, LV_CUR]
            tick = lv[level, LV_TICK]
            if below >= lv[level, LV_CUR] + tick:
                lv[level, LV_CUR] = below - below % tick
                lv[level, LV_CVID] = below // tick
                lv[level, LV_CIDX] = (below // tick) % W
                lv[level, LV_END] = lv[level, LV_CUR] + tick * W
                level += 1
            else:
                break


def advance(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, scr, now):
    """Kafka's ``SystemTimer.advanceClock`` on a manual clock reading ``now``: while the delay
    queue's head bucket is due (``expiration - now <= 0``): poll it, advance the wheels' clocks to
    its expiration, and flush it (every live entry, in insertion order, is re-added: it cascades to
    a lower level or is due and fires).  Returns ``DONE`` or the status of what ran out.

    ``sids``/``sexps`` (``CHUNK`` entries) hold one chunk's live entries between the flush and
    their re-adds; ``scr`` is :func:`add_batch`'s scratch, whose tables a cascade places by."""
    W = S[WSIZE]
    nbuckets = S[MAXLEV] * W
    while S[HEAPN] > 0:
        b = heap[0]
        if CHECKED:
            if S[HEAPN] > heap.shape[0] or b < 0 or b >= nbuckets or bk[b, B_EXP] == -1:
                _fail(S, CK_QUEUE, b, bk[b, B_EXP] if 0 <= b < nbuckets else -1, S[HEAPN], nbuckets, now, 0, 0)
                return DONE
        e = bk[b, B_EXP]
        if e - now > 0:
            break
        ns = bk[b, B_NSLOTS]
        if CHECKED:
            if ns < 1 or bk[b, B_HEAD] < 0 or bk[b, B_HEAD] >= cnext.shape[0]:
                _fail(S, CK_BUCKET, b, e, ns, bk[b, B_HEAD], cnext.shape[0], 0, 0)
                return DONE
        # Room for the worst case of this flush, checked before anything changes: every slot
        # live and every entry fired; and chunks.  The flush frees each chunk of the bucket
        # before it places that chunk's (at most CHUNK) entries, so placements never hold more
        # than one fresh chunk per distinct target bucket beyond what the flush gave back.
        if ns > out.shape[1] - S[NOUT]:
            S[NEED] = ns
            return NEED_OUT
        need_chunks = ns if ns < nbuckets else nbuckets
        if S[NFREE] < need_chunks:
            S[NEED] = need_chunks
            return NEED_CHUNKS
        _poll(S, bk, heap)
        _advance_clock(S, lv, e)
        c = bk[b, B_HEAD]
        bk[b, B_EXP] = -1
        bk[b, B_HEAD] = -1
        bk[b, B_TAIL] = -1
        bk[b, B_NSLOTS] = 0
        # Flush, one chunk at a time, in insertion order: copy the chunk's live entries (a slot
        # holds its task's id and expiration, a tombstone -1; it is live iff its task's bit is
        # set) into the CHUNK-slot scratch, clearing each slot as it is read; give the chunk back
        # to the free list; re-add the copied entries (a fired one has its bit cleared there).
        # The flush reads chunks sequentially, touches no per-task record but that bit, and the
        # chunk it just freed is the first one the re-adds take, so the pool's working set stays
        # in cache.
        # A level-0 bucket only fires (its entries are all due): its flush writes them straight
        # to the output.  A higher level's cascades: its entries are re-added, by the two-pass
        # placement of add_batch (bucket numbers of a chunk's entries in one vectorised pass,
        # then the appends) when the levels fit its tables, else by _place_range.  The clocks
        # and levels do not change during the flush (it places strictly below the flushed
        # level), so the tables are filled once per bucket, here.
        cascades = b >= W
        fast = cascades and S[NLEV] <= FAST_LEVELS
        if fast:
            _fill_table(S, lv, scr)
        due_below = lv[0, LV_CUR] + lv[0, LV_TICK]
        # Every entry of the bucket lies below this (the window end of the level below); the
        # fast placement's tables cover nothing else, so a chunk with an entry beyond it (a
        # broken state, which the checked build reports) takes _place_range instead.
        below = lv[b // W - 1, LV_END] if cascades else due_below
        if CHECKED:
            # After the clocks moved to e: a cascading entry must fit the window of the level below
            # (its end is e + this level's tick), a level-0 entry must be due.
            blevel = b // W
            btick = lv[blevel, LV_TICK]
            bound = lv[blevel - 1, LV_END] if cascades else lv[0, LV_CUR] + lv[0, LV_TICK]
        rem = ns
        while rem > 0:
            if CHECKED:
                if c < 0 or c >= cnext.shape[0]:
                    _fail(S, CK_CHAIN, b, c, rem, cnext.shape[0], 0, 0, 0)
                    return DONE
            m = rem if rem < CHUNK else CHUNK
            first = c * CHUNK
            k = 0
            # The chain's chunks lie anywhere in the pool, so the hardware prefetcher meets each
            # one cold: start fetching the next chunk's lines (4 of ids, 8 of expirations) now.
            if rem > CHUNK:
                nc = cnext[c] * CHUNK
                for j in range(0, CHUNK, 16):
                    prefetch(pid, U(nc + j))
                for j in range(0, CHUNK, 8):
                    prefetch(pexp, U(nc + j))
            if not cascades:
                # Fire: every live entry of a level-0 bucket is due (the check below says so).
                nout = S[NOUT]
                for slot in range(first, first + m):
                    t = pid[U(slot)]
                    if t < 0:
                        continue
                    pid[U(slot)] = -1
                    word = U(t) >> U(6)
                    bit = U(1) << (U(t) & U(63))
                    w = live[word]
                    if w & bit:
                        if CHECKED:
                            x = pexp[U(slot)]
                            if tk[U(t)] != slot:
                                _fail(S, CK_FLUSH_LIVE, np.int64(t), slot, tk[U(t)], b, 0, 0, 0)
                                return DONE
                            if x < e or x >= e + btick:
                                _fail(S, CK_FLUSH_WINDOW, np.int64(t), x, b, e, btick, 0, 0)
                                return DONE
                            if x >= bound:
                                _fail(S, CK_CASCADE, np.int64(t), x, blevel, bound, now, 0, 0)
                                return DONE
                        live[word] = w & ~bit
                        out[0, U(nout)] = t
                        out[1, U(nout)] = pexp[U(slot)]
                        nout += 1
                        k += 1
                S[NOUT] = nout
            else:
                inside = True
                for slot in range(first, first + m):
                    t = pid[U(slot)]
                    if t < 0:
                        continue
                    pid[U(slot)] = -1
                    # Pending unless cancelled since it was placed (a cancel only clears the bit).
                    if live[U(t) >> U(6)] & (U(1) << (U(t) & U(63))):
                        x = pexp[U(slot)]
                        if CHECKED:
                            if tk[U(t)] != slot:
                                _fail(S, CK_FLUSH_LIVE, np.int64(t), slot, tk[U(t)], b, 0, 0, 0)
                                return DONE
                            if x < e or x >= e + btick:
                                _fail(S, CK_FLUSH_WINDOW, np.int64(t), x, b, e, btick, 0, 0)
                                return DONE
                            if x >= bound:
                                _fail(S, CK_CASCADE, np.int64(t), x, blevel, bound, now, 0, 0)
                                return DONE
                        sids[U(k)] = t
                        sexps[U(k)] = x
                        inside &= x < below
                        k += 1
                        # The re-add below stores this task's new location at a random index
                        # of the task table: start fetching that line now, so the chunk's
                        # misses overlap instead of queueing behind one another.  (Fetching
                        # the chunk's bitmap words too, in a pass of their own, measured slower:
                        # 9 of 10 alternating runs at 10^7.)
                        prefetch_write(tk, U(t))
            rem -= m
            nxt = cnext[c]
            cnext[c] = S[FREE]
            S[FREE] = c
            S[NFREE] += 1
            c = nxt
            S[COUNT] -= k
            if CHECKED:
                if S[COUNT] < 0:
                    _fail(S, CK_FLUSH_COUNT, b, S[COUNT], k, 0, 0, 0, 0)
                    return DONE
            if not cascades or k == 0:
                continue
            if fast and inside:
                _bucket_block(scr, W, due_below, sexps, 0, 0, k)
                if CHECKED:
                    if _check_buckets(S, lv, scr, sids, sexps, 0, 0, k, due_below):
                        return DONE
                _place_block(S, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, 0, 0, k, scr, True)
            else:
                _place_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, 0, 0, k, True)
            if S[ERROR] != 0:
                return DONE
    return DONE


def cancel_range(S, live, ids, res):
    """``TimerTask.cancel`` for each id: a pending task stops being pending (its bit is cleared;
    its slot stays until the bucket's flush skips it); ``res[i]`` is 1 iff it was pending.

    Only the bitmap is touched: at 10^7 ids it is 1.25 MB, and the task's location and slot,
    which would be two dependent random DRAM accesses, are not read at all."""
    count = S[COUNT]
    n = ids.shape[0]
    for i in range(n):
        j = i + PF_AHEAD
        if j < n:
            prefetch_write(live, U(ids[U(j)]) >> U(6))
        t = ids[U(i)]
        word = U(t) >> U(6)
        bit = U(1) << (U(t) & U(63))
        w = live[word]
        if w & bit:
            live[word] = w & ~bit
            count -= 1
            if CHECKED:
                if count < 0:
                    _fail(S, CK_CANCEL_COUNT, t, count, i, 0, 0, 0, 0)
                    return
            res[U(i)] = 1
        else:
            res[U(i)] = 0
    S[COUNT] = count


def cancel_one(S, live, t):
    """``TimerTask.cancel`` for one id; True iff it was pending."""
    word = U(t) >> U(6)
    bit = U(1) << (U(t) & U(63))
    w = live[word]
    if w & bit:
        live[word] = w & ~bit
        S[COUNT] -= 1
        if CHECKED:
            if S[COUNT] < 0:
                _fail(S, CK_CANCEL1_COUNT, t, S[COUNT], 0, 0, 0, 0, 0)
        return True
    return False


def check_cancels(S, live, tk, pid, ids):
    """The checked build's half of a cancel that the cancel kernels cannot do without reading the
    task's location (which is what they avoid): every task about to be cancelled whose bit is set
    has its entry where its location says.  The debug mode calls it before ``cancel_range`` and
    ``cancel_one``; only the checked build compiles it."""
    if CHECKED:
        for i in range(ids.shape[0]):
            t = ids[i]
            if live[U(t) >> U(6)] & (U(1) << (U(t) & U(63))):
                loc = tk[t]
                held = np.int64(pid[loc]) if loc >= 0 else np.int64(-2)
                if held != t:
                    _fail(S, CK_CANCEL_LIVE, t, loc, held, i, 0, 0, 0)
                    return


@njit(**JIT)
def validate_adds(ids, delays, capacity, lo, hi):
    """One pass over a batch before it is added: returns the first position whose id is outside
    ``[0, capacity)`` (as ``i``) or whose delay is outside ``[lo, hi]`` (as ``n + i``), or -1.  It
    only reads within the arrays' own lengths (the caller checked that they are equal), so it is
    safe on any input.

    The common case (nothing wrong) is one branch-free pass that the compiler vectorises: each
    range test is one unsigned comparison (a negative id wraps to a huge unsigned value), OR-ed
    into one flag.  Only a batch with a bad element pays for the second pass that finds the first
    one.  (5000 adds: 2.1 -> 0.7 ns per element.)"""
    n = ids.shape[0]
    cap = U(capacity)
    span = U(hi - lo)
    bad: Any = False  # a numpy bool once or-ed with the comparisons (numba unifies the two)
    for i in range(n):
        bad |= (U(ids[U(i)]) >= cap) | (U(delays[U(i)] - lo) > span)
    if not bad:
        return -1
    for i in range(n):
        t = ids[i]
        if t < 0 or t >= capacity:
            return i
        d = delays[i]
        if d < lo or d > hi:
            return n + i
    return -1


@njit(**JIT)
def first_outside(a, lo, hi):
    """The first position of ``a`` whose value is outside ``[lo, hi]``, or -1 (a read-only pass;
    branch-free first, like :func:`validate_adds`)."""
    span = U(hi - lo)
    bad: Any = False  # as in validate_adds
    for i in range(a.shape[0]):
        bad |= U(a[U(i)] - lo) > span
    if not bad:
        return -1
    for i in range(a.shape[0]):
        if a[i] < lo or a[i] > hi:
            return i
    return -1


# -- the two builds ---------------------------------------------------------------------------------
#: The kernels :func:`make_kernels` compiles (``validate_adds`` and ``first_outside`` above are
#: read-only checks of the input and have one build), and those only the checked build calls (in
#: the fast build they stay plain functions that nothing calls).
_SOURCES = (_place_range, add_range, _ensure_levels, _bucket_block, _place_block, _fill_table, add_batch, _poll,
            _advance_clock, advance, cancel_range, cancel_one)
_CHECKED_ONLY = (_fail, _check_buckets, check_cancels)


# ``make_kernels(checked)``: one build (nothing is compiled until a kernel's first call; both
# builds are cached on disk); ``checked_kernels()``: the debug mode's build, made on first use.
_BUILDS = Builds(_SOURCES, _CHECKED_ONLY, globals(), JIT)
make_kernels = _BUILDS.make
checked_kernels = _BUILDS.checked

# The fast build: from here on this module's kernels are its dispatchers.
globals().update(vars(make_kernels(False)))
