"""Compiled kernels of the array purgatory (Kafka's ``DelayedOperationPurgatory``, ``Watchers`` and
``DelayedOperation`` with the test ``MockDelayedOperation``'s completion rule).

Arrays (allocated and grown by :mod:`.purgatory`, which also validates every input first):

* ``P``   int64[P_LEN]        scalars (slots below).
* ``opt`` int8[capacity, 3]   the operation table: completed flag (Kafka's atomic ``completed``),
                              completable flag (what ``tryComplete`` answers), in-use flag.  An
                              operation's timeout entry is the row of the same id in the
                              purgatory's own :class:`~.timer.ArrayTimer` (``TS``/``tlive`` here).
* ``kt``  int64[keys, 3]      one watch list per dense key id: first entry, last entry, length.
* ``we``  int64[entries, 2]   watch-list entries: operation id, next entry (-1: end).  Free entries
                              are chained through ``next`` from ``P[P_WFREE]``.
* ``lg``  int64[rows, 2]      output log: (operation id, ``via``) for every completion, in the
                              order the callbacks ran, or the cancelled ids of ``cancel_for_key``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import COUNT

#: Unsigned indices for the timer's liveness bitmap (see :mod:`.timer_kernels`).  Its
#: test-and-clear is written out in each loop below, as in the timer's kernels: a helper that takes
#: the array would cost a call with reference counting per element.
U = np.uint64

# P slots
P_EST = 0        # Kafka's estimatedTotalOperations
P_WFREE = 1      # head of the free watch-entry list
P_NWFREE = 2     # free watch entries
P_WATCHED = 3    # sum of all watch-list lengths (Kafka's watched())
P_NLOG = 4       # rows of lg filled
P_BEFORE = 5     # purge: estimated before the purge
P_PURGED = 6     # purge: watch entries dropped
P_LEN = 8

# opt columns
O_DONE = 0
O_COMPLETABLE = 1
O_USED = 2
RETRY = 2        # opt[op, O_COMPLETABLE]: false at the first look, true from then on

# kt columns
K_HEAD = 0
K_TAIL = 1
K_LEN = 2

# we columns
W_OP = 0
W_NEXT = 1

# via codes of the log (the ``via`` of wheelspec's Complete event)
VIA_TRY = 0
VIA_CHECK = 1
VIA_EXPIRE = 2
VIA_FORCE = 3
VIA_CANCELLED = 4   # cancel_for_key: listed, not completed
VIAS = ("try", "check", "expire", "force", "cancelled")


@njit(cache=True, nogil=True, error_model="numpy")
def watch_range(P, opt, kt, we, lg, ops, kstart, kids, tout):
    """``tryCompleteElseWatch`` for ``ops[i]`` with keys ``kids[kstart[i]:kstart[i+1]]``, first
    half: try (completes at once if completable: logged ``try``); else append the operation to
    each key's list (a key listed twice gets it twice, as in Kafka), count it once in
    ``estimated``, then try again: an operation whose completable flag is ``RETRY`` (the
    condition turns true right after the first look) completes there (logged ``try``, still in
    its watch lists, no timeout); any other is written as ``i`` to ``tout`` (the caller then adds
    its timeout to the timer).  Returns how many entries of ``tout`` were written.

    The caller guarantees ``len(kids)`` free watch entries and ``len(ops)`` free log rows."""
    nlog = P[P_NLOG]
    free = P[P_WFREE]
    m = 0
    for i in range(ops.shape[0]):
        op = ops[i]
        opt[op, O_USED] = 1
        if opt[op, O_COMPLETABLE] == 1:
            opt[op, O_DONE] = 1
            lg[nlog, 0] = op
            lg[nlog, 1] = VIA_TRY
            nlog += 1
            continue
        for j in range(kstart[i], kstart[i + 1]):
            key = kids[j]
            e = free
            free = we[e, W_NEXT]
            we[e, W_OP] = op
            we[e, W_NEXT] = -1
            if kt[key, K_LEN] == 0:
                kt[key, K_HEAD] = e
            else:
                we[kt[key, K_TAIL], W_NEXT] = e
            kt[key, K_TAIL] = e
            kt[key, K_LEN] += 1
        P[P_NWFREE] -= kstart[i + 1] - kstart[i]
        P[P_WATCHED] += kstart[i + 1] - kstart[i]
        P[P_EST] += 1
        if opt[op, O_COMPLETABLE] == RETRY:
            # Kafka's second tryComplete, after watching every key: the satisfying event has
            # arrived meanwhile, so the call completes the operation itself.
            opt[op, O_COMPLETABLE] = 1
            opt[op, O_DONE] = 1
            lg[nlog, 0] = op
            lg[nlog, 1] = VIA_TRY
            nlog += 1
            continue
        tout[m] = i
        m += 1
    P[P_WFREE] = free
    P[P_NLOG] = nlog
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def expire_range(P, opt, lg, fired):
    """The timer ran these operations' timeouts (``DelayedOperation.run``): each that is not yet
    completed completes (``via`` expire; Kafka then calls ``onExpiration``)."""
    nlog = P[P_NLOG]
    for i in range(fired.shape[0]):
        op = fired[i]
        if opt[op, O_DONE] == 0:
            opt[op, O_DONE] = 1
            lg[nlog, 0] = op
            lg[nlog, 1] = VIA_EXPIRE
            nlog += 1
    P[P_NLOG] = nlog


@njit(cache=True, nogil=True, error_model="numpy")
def check_range(P, opt, kt, we, lg, TS, tlive, kids, counts):
    """``checkAndComplete(key)`` for each key id: walk its list in watch order; drop completed
    operations; complete the completable ones (``via`` check: the completed flag is set and the
    timeout entry cancelled, as ``forceComplete`` does) and drop them; leave the rest.  An empty
    list is the same as a removed key.  ``counts[i]`` is how many this call completed.

    The caller guarantees ``P[P_WATCHED]`` free log rows."""
    nlog = P[P_NLOG]
    free = P[P_WFREE]
    nfree = P[P_NWFREE]
    watched = P[P_WATCHED]
    for i in range(kids.shape[0]):
        key = kids[i]
        done = 0
        prev = -1
        e = kt[key, K_HEAD]
        n = kt[key, K_LEN]
        while n > 0:
            n -= 1
            op = we[e, W_OP]
            nxt = we[e, W_NEXT]
            drop = False
            if opt[op, O_DONE] != 0:
                drop = True
            elif opt[op, O_COMPLETABLE] != 0:
                opt[op, O_DONE] = 1
                w = tlive[U(op) >> U(6)]
                bit = U(1) << (U(op) & U(63))
                if w & bit:
                    tlive[U(op) >> U(6)] = w & ~bit
                    TS[COUNT] -= 1
                lg[nlog, 0] = op
                lg[nlog, 1] = VIA_CHECK
                nlog += 1
                done += 1
                drop = True
            if drop:
                if prev == -1:
                    kt[key, K_HEAD] = nxt
                else:
                    we[prev, W_NEXT] = nxt
                if kt[key, K_TAIL] == e:
                    kt[key, K_TAIL] = prev
                kt[key, K_LEN] -= 1
                watched -= 1
                we[e, W_NEXT] = free
                free = e
                nfree += 1
            else:
                prev = e
            e = nxt
        if kt[key, K_LEN] == 0:
            kt[key, K_HEAD] = -1
            kt[key, K_TAIL] = -1
        counts[i] = done
    P[P_NLOG] = nlog
    P[P_WFREE] = free
    P[P_NWFREE] = nfree
    P[P_WATCHED] = watched


@njit(cache=True, nogil=True, error_model="numpy")
def cancel_key(P, kt, we, lg, TS, tlive, key):
    """``cancelForKey(key)``: remove the key's whole list and cancel each listed operation's
    timeout entry; nothing completes, no callback runs, the operations stay in their other keys'
    lists.  The listed ids (in watch order, repeats included) go to the log.  Returns their number.

    The caller guarantees ``kt[key, K_LEN]`` free log rows."""
    nlog = P[P_NLOG]
    free = P[P_WFREE]
    n = kt[key, K_LEN]
    e = kt[key, K_HEAD]
    for _ in range(n):
        op = we[e, W_OP]
        nxt = we[e, W_NEXT]
        w = tlive[U(op) >> U(6)]
        bit = U(1) << (U(op) & U(63))
        if w & bit:
            tlive[U(op) >> U(6)] = w & ~bit
            TS[COUNT] -= 1
        lg[nlog, 0] = op
        lg[nlog, 1] = VIA_CANCELLED
        nlog += 1
        we[e, W_NEXT] = free
        free = e
        e = nxt
    kt[key, K_HEAD] = -1
    kt[key, K_TAIL] = -1
    kt[key, K_LEN] = 0
    P[P_NLOG] = nlog
    P[P_WFREE] = free
    P[P_NWFREE] += n
    P[P_WATCHED] -= n
    return n


@njit(cache=True, nogil=True, error_model="numpy")
def force_range(P, opt, lg, TS, tlive, ops, res):
    """``forceComplete()`` from outside for each op: wins iff not completed yet; the winner
    cancels the timeout entry and completes (``via`` force)."""
    nlog = P[P_NLOG]
    for i in range(ops.shape[0]):
        op = ops[i]
        if opt[op, O_DONE] != 0:
            res[i] = 0
            continue
        opt[op, O_DONE] = 1
        w = tlive[U(op) >> U(6)]
        bit = U(1) << (U(op) & U(63))
        if w & bit:
            tlive[U(op) >> U(6)] = w & ~bit
            TS[COUNT] -= 1
        lg[nlog, 0] = op
        lg[nlog, 1] = VIA_FORCE
        nlog += 1
        res[i] = 1
    P[P_NLOG] = nlog


@njit(cache=True, nogil=True, error_model="numpy")
def purge(P, opt, kt, we, nkeys, num_delayed, purge_interval):
    """The purge rule after a reaper step: if ``estimated - numDelayed > purgeInterval``, set
    ``estimated := numDelayed`` and drop completed operations from every watch list (recording
    ``P_BEFORE`` and ``P_PURGED``).  Returns whether it ran."""
    if P[P_EST] - num_delayed <= purge_interval:
        return False
    P[P_BEFORE] = P[P_EST]
    P[P_EST] = num_delayed
    free = P[P_WFREE]
    purged = 0
    for key in range(nkeys):
        n = kt[key, K_LEN]
        if n == 0:
            continue
        prev = -1
        e = kt[key, K_HEAD]
        for _ in range(n):
            nxt = we[e, W_NEXT]
            if opt[we[e, W_OP], O_DONE] != 0:
                if prev == -1:
                    kt[key, K_HEAD] = nxt
                else:
                    we[prev, W_NEXT] = nxt
                if kt[key, K_TAIL] == e:
                    kt[key, K_TAIL] = prev
                kt[key, K_LEN] -= 1
                we[e, W_NEXT] = free
                free = e
                purged += 1
            else:
                prev = e
            e = nxt
        if kt[key, K_LEN] == 0:
            kt[key, K_HEAD] = -1
            kt[key, K_TAIL] = -1
    P[P_WFREE] = free
    P[P_NWFREE] += purged
    P[P_WATCHED] -= purged
    P[P_PURGED] = purged
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def validate_ops(opt, ops, want_used):
    """The first position whose op is outside ``[0, len(opt))``, or (``want_used`` 1) was never
    watched, or (``want_used`` 0) was watched already or repeats an earlier op of the batch; -1 if
    none.  Repeats are found by marking ``opt[op, O_USED]`` with 2 and removing every mark before
    returning, so the table is unchanged."""
    n = ops.shape[0]
    cap = opt.shape[0]
    bad = -1
    marked = 0
    for i in range(n):
        op = ops[i]
        if op < 0 or op >= cap:
            bad = i
            break
        used = opt[op, O_USED]
        if want_used == 1:
            if used == 0:
                bad = i
                break
        else:
            if used != 0:
                bad = i
                break
            opt[op, O_USED] = 2
            marked = i + 1
    for i in range(marked):
        opt[ops[i], O_USED] = 0
    return bad
