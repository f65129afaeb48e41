"""Compiled kernels of the array timer (Kafka's ``SystemTimer``, ``TimingWheel``,
``TimerTaskList`` and ``DelayQueue`` over the arrays of :mod:`.layout`).

Rules these kernels keep:

* They never allocate and never grow anything.  A kernel that could run out of room (chunks, the
  output buffer, the flush scratch) checks *before* it changes any state, stores what it needs in
  ``S[NEED]`` and returns a status; the Python wrapper grows that one thing and calls again.  The
  state between two calls is always a consistent timer, so resuming is just calling again.
* They trust their inputs: ids, delays and times are validated in Python before any call
  (:mod:`.timer`), which is what keeps every index in bounds.
* Hot loops are flat.  The only helper called per *entry* is none: placement is one loop over a
  range of entries (``_place_range``), called once per add batch and once per flushed bucket.
  Helpers that take arrays (``_poll``, ``_advance_clock``) run once per bucket.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import (B_EXP, B_HEAD, B_NSLOTS, B_TAIL, CHUNK, COUNT, DONE, ERROR, FREE, HEAPN,
                     LV_CUR, LV_TICK, MAXLEV, NEED, NEED_CHUNKS, NEED_OUT, NEED_SCRATCH, NFREE,
                     NLEV, NOUT, T_EXP, T_LOC, WSIZE)

#: ``S[ERROR]`` codes: states the proofs say cannot happen; the wrapper raises if one is set.
ERR_LEVELS = 1      # a new overflow level would exceed the level table
ERR_HEAP = 2        # the delay queue would hold more entries than there are buckets


@njit(cache=True, nogil=True)
def _place_range(S, lv, bk, heap, tk, pool, cnext, out, ids, exps, lo, hi):
    """Add the entries ``(ids[i], exps[i])`` for ``lo <= i < hi``, in order: Kafka's
    ``SystemTimer.addTimerTaskEntry`` + ``TimingWheel.add``.

    Per entry: a live entry of the same task becomes a tombstone (re-add replaces); then, from
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
    for i in range(lo, hi):
        t = ids[i]
        exp = exps[i]
        if tk[t, T_LOC] >= 0:
            tk[t, T_LOC] = -1
            count -= 1
        tk[t, T_EXP] = exp
        level = 0
        while True:
            tick = lv[level, LV_TICK]
            cur = lv[level, LV_CUR]
            if exp < cur + tick:
                # Due (or overdue): handed to the executor now, in this order.
                out[nout, 0] = t
                out[nout, 1] = exp
                nout += 1
                break
            if exp < cur + tick * W:
                vid = exp // tick
                b = level * W + vid % W
                ns = bk[b, B_NSLOTS]
                if ns % CHUNK == 0:
                    # The bucket's tail chunk is full (or it has none): take a free chunk.
                    c = free
                    free = cnext[c]
                    nfree -= 1
                    cnext[c] = -1
                    if ns == 0:
                        bk[b, B_HEAD] = c
                    else:
                        cnext[bk[b, B_TAIL]] = c
                    bk[b, B_TAIL] = c
                s = bk[b, B_TAIL] * CHUNK + ns % CHUNK
                pool[s] = t
                bk[b, B_NSLOTS] = ns + 1
                tk[t, T_LOC] = s
                count += 1
                bexp = vid * tick
                if bk[b, B_EXP] != bexp:
                    # "We only need to enqueue the bucket when its expiration time has changed,
                    # i.e. the wheel has advanced and the previous buckets gets reused" (Kafka).
                    bk[b, B_EXP] = bexp
                    if heapn >= heapcap:
                        S[ERROR] = 2
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
                break
            if level + 1 == nlev:
                # Kafka's addOverflowWheel: tick = this interval, start = this clock.
                if nlev >= maxlev:
                    S[ERROR] = 1
                    break
                ntick = tick * W
                lv[nlev, LV_TICK] = ntick
                lv[nlev, LV_CUR] = cur - cur % ntick
                nlev += 1
            level += 1
    S[NLEV] = nlev
    S[COUNT] = count
    S[HEAPN] = heapn
    S[FREE] = free
    S[NFREE] = nfree
    S[NOUT] = nout


@njit(cache=True, nogil=True)
def add_range(S, lv, bk, heap, tk, pool, cnext, out, ids, exps, start):
    """Add entries ``start..len(ids)-1``; return how far it got (``len(ids)`` when done).  Stops
    early, with ``S[NEED]`` set, when chunks or output rows run out."""
    n = ids.shape[0]
    i = start
    while i < n:
        k = n - i
        room_out = out.shape[0] - S[NOUT]
        if room_out < k:
            k = room_out
        if S[NFREE] < k:
            k = S[NFREE]
        if k <= 0:
            S[NEED] = n - i
            return i
        _place_range(S, lv, bk, heap, tk, pool, cnext, out, ids, exps, i, i + k)
        if S[ERROR] != 0:
            return i
        i += k
    return n


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _advance_clock(S, lv, time_ms):
    """``TimingWheel.advanceClock``: move level 0's clock to ``time_ms`` rounded down to its tick if
    that is at least one tick ahead, then offer the new clock to the next level, and so on."""
    if time_ms >= lv[0, LV_CUR] + lv[0, LV_TICK]:
        lv[0, LV_CUR] = time_ms - time_ms % lv[0, LV_TICK]
        level = 1
        nlev = S[NLEV]
        while level < nlev:
            below = lv[level - 1, LV_CUR]
            tick = lv[level, LV_TICK]
            if below >= lv[level, LV_CUR] + tick:
                lv[level, LV_CUR] = below - below % tick
                level += 1
            else:
                break


@njit(cache=True, nogil=True)
def advance(S, lv, bk, heap, tk, pool, cnext, out, sids, sexps, now):
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
        # live, every entry fired, and one fresh chunk per distinct target bucket (the bucket's
        # own chunks are freed before its entries are placed, which covers the rest).
        if ns > sids.shape[0]:
            S[NEED] = ns
            return NEED_SCRATCH
        if ns > out.shape[0] - S[NOUT]:
            S[NEED] = ns
            return NEED_OUT
        need_chunks = ns if ns < nbuckets else nbuckets
        if S[NFREE] < need_chunks:
            S[NEED] = need_chunks
            return NEED_CHUNKS
        _poll(S, bk, heap)
        _advance_clock(S, lv, e)
        # Flush: gather the live entries in insertion order (sequential walk over the chunks).
        k = 0
        rem = ns
        c = bk[b, B_HEAD]
        last = c
        while rem > 0:
            m = rem if rem < CHUNK else CHUNK
            base = c * CHUNK
            for j in range(m):
                s = base + j
                t = pool[s]
                if tk[t, T_LOC] == s:
                    tk[t, T_LOC] = -1
                    sids[k] = t
                    sexps[k] = tk[t, T_EXP]
                    k += 1
            rem -= m
            last = c
            c = cnext[c]
        if ns > 0:
            # The whole chain goes back to the free list at once.
            cnext[last] = S[FREE]
            S[FREE] = bk[b, B_HEAD]
            S[NFREE] += (ns + CHUNK - 1) // CHUNK
        S[COUNT] -= k
        bk[b, B_EXP] = -1
        bk[b, B_HEAD] = -1
        bk[b, B_TAIL] = -1
        bk[b, B_NSLOTS] = 0
        _place_range(S, lv, bk, heap, tk, pool, cnext, out, sids, sexps, 0, k)
        if S[ERROR] != 0:
            return DONE
    return DONE


@njit(cache=True, nogil=True)
def cancel_range(S, tk, ids, res):
    """``TimerTask.cancel`` for each id: unlink its live entry (leaving a tombstone); ``res[i]`` is
    1 iff a live entry was unlinked."""
    count = S[COUNT]
    for i in range(ids.shape[0]):
        t = ids[i]
        if tk[t, T_LOC] >= 0:
            tk[t, T_LOC] = -1
            count -= 1
            res[i] = 1
        else:
            res[i] = 0
    S[COUNT] = count


@njit(cache=True, nogil=True)
def cancel_one(S, tk, t):
    """``TimerTask.cancel`` for one id; True iff a live entry was unlinked."""
    if tk[t, T_LOC] >= 0:
        tk[t, T_LOC] = -1
        S[COUNT] -= 1
        return True
    return False
