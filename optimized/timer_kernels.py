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
  see ``add_batch``), once per small batch or single add, and once per flushed chunk
  (``_place_range``).  Helpers that take arrays (``_poll``, ``_advance_clock``) run once per
  bucket.
* ``error_model="numpy"``: integer division by zero cannot happen here (ticks >= 1, W >= 2), and
  without Python's zero check the divisions in the placement loop have no extra branch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import (B_EXP, B_HEAD, B_NSLOTS, B_TAIL, CHUNK, COUNT, DONE, ERROR, FREE, HEAPN, LV_CIDX, LV_CUR,
                     LV_CVID, LV_END, LV_TICK, MAXLEV, NEED, NEED_CHUNKS, NEED_OUT, NFREE, NLEV, NOUT, WSIZE)
from .prefetch import prefetch_write

#: ``S[ERROR]`` codes: states the proofs say cannot happen; the wrapper raises if one is set.
ERR_LEVELS = 1      # a new overflow level would exceed the level table
ERR_HEAP = 2        # the delay queue would hold more entries than there are buckets

JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Hot loops index with ``U(i)``: every such index is non-negative by construction (ids and
#: delays are validated before any kernel runs; slots, buckets and levels come from the arrays
#: themselves), and with an unsigned index numba skips its negative-index wraparound.  That removed
#: 23 of 129 instructions per add (callgrind, 4*10^5 adds with delays uniform in [1, 30000]).
U = np.uint64

#: How many ids ahead ``cancel_range`` starts fetching a task's bitmap word.
PF_AHEAD = 32


@njit(**JIT)
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
        if not flushed:
            # A new id reads -1 here (ids are usually handed out in order, so this read streams).
            old = tk[U(t)]
            if old >= 0 and pid[U(old)] == t:
                pid[U(old)] = -1
                if live[word] & bit:
                    count -= 1
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
        ns = bk[U(b), B_NSLOTS]
        if ns & (CHUNK - 1) == 0:
            # The bucket's tail chunk is full (or it has none): take a free chunk.
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


@njit(**JIT)
def add_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, start):
    """Add entries ``(ids[i], exps[i] + base)`` for ``i`` from ``start``; return how far it got
    (``len(ids)`` when done).  Stops
    early, with ``S[NEED]`` set, when chunks or output rows run out."""
    n = ids.shape[0]
    i = start
    while i < n:
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


@njit(**JIT)
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


@njit(**JIT)
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


@njit(**JIT)
def _place_block(S, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, lo, hi, scr):
    """Place the entries ``lo <= i < hi`` whose bucket numbers :func:`_bucket_block` wrote to
    ``scr[0 : hi - lo]``: the second half of :func:`_place_range`'s loop (tombstone the previous
    slot, hand a due entry to the executor, append to the bucket's tail chunk, offer a bucket whose
    window changed to the delay queue), with the window start looked up in ``scr[SCR_WANT:]``.
    It is a copy of that half rather than a shared helper because a helper taking arrays costs
    about 120 ns per call in a loop (see the module docstring).  Same room guarantee as there."""
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
        old = tk[U(t)]
        if old >= 0 and pid[U(old)] == t:
            pid[U(old)] = -1
            if live[word] & bit:
                count -= 1
        if b < 0:
            live[word] &= ~bit
            out[0, nout] = t
            out[1, nout] = exp
            nout += 1
            continue
        ns = bk[U(b), B_NSLOTS]
        if ns & (CHUNK - 1) == 0:
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
        pid[U(s)] = t
        pexp[U(s)] = exp
        bk[U(b), B_NSLOTS] = ns + 1
        tk[U(t)] = s
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


@njit(**JIT)
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
    # the top level's end is never compared: nothing in the batch lies beyond it).
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
    due_below = lv[0, LV_CUR] + lv[0, LV_TICK]
    i = start
    while i < n:
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
        _place_block(S, bk, heap, tk, live, pid, pexp, cnext, out, ids, exps, base, i, i + k, scr)
        if S[ERROR] != 0:
            return i
        i += k
    return n


@njit(**JIT)
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


@njit(**JIT)
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


@njit(**JIT)
def advance(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, now):
    """Kafka's ``SystemTimer.advanceClock`` on a manual clock reading ``now``: while the delay
    queue's head bucket is due (``expiration - now <= 0``): poll it, advance the wheels' clocks to
    its expiration, and flush it (every live entry, in insertion order, is re-added: it cascades to
    a lower level or is due and fires).  Returns ``DONE`` or the status of what ran out."""
    W = S[WSIZE]
    nbuckets = S[MAXLEV] * W
    while S[HEAPN] > 0:
        b = heap[0]
        e = bk[b, B_EXP]
        if e - now > 0:
            break
        ns = bk[b, B_NSLOTS]
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
        # A level-0 bucket only fires (its entries are all due); a higher level's cascades.
        cascades = b >= W
        rem = ns
        while rem > 0:
            m = rem if rem < CHUNK else CHUNK
            first = c * CHUNK
            k = 0
            for slot in range(first, first + m):
                t = pid[U(slot)]
                if t < 0:
                    continue
                pid[U(slot)] = -1
                # Pending unless cancelled since it was placed (a cancel only clears the bit).
                if live[U(t) >> U(6)] & (U(1) << (U(t) & U(63))):
                    sids[U(k)] = t
                    sexps[U(k)] = pexp[U(slot)]
                    k += 1
                    if cascades:
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
            _place_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, 0, 0, k, True)
            if S[ERROR] != 0:
                return DONE
    return DONE


@njit(**JIT)
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
            res[U(i)] = 1
        else:
            res[U(i)] = 0
    S[COUNT] = count


@njit(**JIT)
def cancel_one(S, live, t):
    """``TimerTask.cancel`` for one id; True iff it was pending."""
    word = U(t) >> U(6)
    bit = U(1) << (U(t) & U(63))
    w = live[word]
    if w & bit:
        live[word] = w & ~bit
        S[COUNT] -= 1
        return True
    return False


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
    bad = False
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
    bad = False
    for i in range(a.shape[0]):
        bad |= U(a[U(i)] - lo) > span
    if not bad:
        return -1
    for i in range(a.shape[0]):
        if a[i] < lo or a[i] > hi:
            return i
    return -1
