"""Compiled kernels of the array MockTimer (Kafka's test ``MockTimer``, the strict-gt profile).

Arrays (allocated, grown and validated by :mod:`.mock_timer`):

* ``S``    int64[S_LEN]      scalars: queue length, next entry token, output rows, and at
                             :data:`~.layout.COUNT` the number of live bits (as in the wheel
                             timer, so that the purgatory kernels, which clear an operation's bit
                             and decrement ``S[COUNT]``, serve both timers unchanged).
* ``live`` uint64[words]     bit ``t`` set: task ``t``'s current entry is queued and not cancelled.
* ``cur``  int64[capacity]   the token of task ``t``'s current entry (-1: none).
* ``hexp``, ``hrow``, ``htok`` int64[slots]: the queue, a binary heap of entries (expiration,
                             task, token) ordered on the expiration only and sifted exactly as
                             ``java.util.PriorityQueue`` sifts (the reference's
                             :mod:`wheelspec.reference.priority_queue`): ties come out in the
                             heap's order, not first-in-first-out.
* ``out``  int64[2, rows]    fired task ids (row 0) and expirations (row 1), in run order.

An entry is *cancelled* (Kafka's ``TimerTaskEntry.cancelled()``) when its task's bit is clear or
its token is not the task's current one; cancelled entries stay queued (and in ``size()`` under
the queue rule) until an advance past their expiration drops them unrun.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .layout import COUNT

JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")

U = np.uint64

# S slots (COUNT is the wheel timer's slot, shared with the purgatory kernels)
M_HEAPN = 0   # entries in the queue (Kafka's taskQueue.size())
M_TOKEN = 1   # the next entry token
M_NOUT = 2    # rows of out filled
S_LEN = 8

assert len({M_HEAPN, M_TOKEN, M_NOUT, COUNT}) == 4 and COUNT < S_LEN, "S slots must be distinct"


@njit(**JIT)
def _sift_up(hexp, hrow, htok, k, exp, row, tok):
    """``PriorityQueue.siftUp(k, x)``: stop as soon as the key is >= its parent's."""
    while k > 0:
        parent = (k - 1) >> 1
        if exp >= hexp[parent]:
            break
        hexp[k] = hexp[parent]
        hrow[k] = hrow[parent]
        htok[k] = htok[parent]
        k = parent
    hexp[k] = exp
    hrow[k] = row
    htok[k] = tok


@njit(**JIT)
def _poll(S, hexp, hrow, htok):
    """``PriorityQueue.poll`` of a non-empty heap: the last element is sifted down from the root,
    taking the left child unless the right one is strictly smaller, stopping when its key is <=
    the child's."""
    n = S[M_HEAPN] - 1
    S[M_HEAPN] = n
    if n > 0:
        exp, row, tok = hexp[n], hrow[n], htok[n]
        k = 0
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            right = child + 1
            if right < n and hexp[child] > hexp[right]:
                child = right
            if exp <= hexp[child]:
                break
            hexp[k] = hexp[child]
            hrow[k] = hrow[child]
            htok[k] = htok[child]
            k = child
        hexp[k] = exp
        hrow[k] = row
        htok[k] = tok


@njit(**JIT)
def add_range(S, live, cur, hexp, hrow, htok, out, ids, vals, base, now):
    """Add ``(ids[i], vals[i] + base)`` in order, as a Kafka caller re-schedules: cancel the task
    (clear its bit), then ``MockTimer.add`` of a new task with delay ``exp - now``: delay <= 0
    runs it at once (to ``out``) with no entry; otherwise a new current entry is queued.

    The caller guarantees ``len(ids)`` free heap slots and output rows."""
    count = S[COUNT]
    hn = S[M_HEAPN]
    tok = S[M_TOKEN]
    nout = S[M_NOUT]
    for i in range(ids.shape[0]):
        t = ids[i]
        exp = vals[i] + base
        word = U(t) >> U(6)
        bit = U(1) << (U(t) & U(63))
        w = live[word]
        if w & bit:
            w = w & ~bit
            count -= 1
        if exp - now <= 0:
            cur[t] = -1
            out[0, nout] = t
            out[1, nout] = exp
            nout += 1
        else:
            cur[t] = tok
            w = w | bit
            count += 1
            _sift_up(hexp, hrow, htok, hn, exp, t, tok)
            hn += 1
            tok += 1
        live[word] = w
    S[COUNT] = count
    S[M_HEAPN] = hn
    S[M_TOKEN] = tok
    S[M_NOUT] = nout


@njit(**JIT)
def advance(S, live, cur, hexp, hrow, htok, out, now):
    """``MockTimer.advanceClock`` at clock reading ``now``: while the head has ``now > exp``, poll
    it and run it unless cancelled.  The caller guarantees ``S[M_HEAPN]`` free output rows."""
    nout = S[M_NOUT]
    while S[M_HEAPN] > 0 and now > hexp[0]:
        exp, t, tok = hexp[0], hrow[0], htok[0]
        _poll(S, hexp, hrow, htok)
        word = U(t) >> U(6)
        bit = U(1) << (U(t) & U(63))
        w = live[word]
        if (w & bit) and cur[t] == tok:
            live[word] = w & ~bit
            S[COUNT] -= 1
            out[0, nout] = t
            out[1, nout] = exp
            nout += 1
    S[M_NOUT] = nout


@njit(**JIT)
def cancel_one(S, live, t):
    """``TimerTask.cancel``: True iff the task's current entry was queued and not cancelled."""
    word = U(t) >> U(6)
    bit = U(1) << (U(t) & U(63))
    w = live[word]
    if w & bit:
        live[word] = w & ~bit
        S[COUNT] -= 1
        return True
    return False
