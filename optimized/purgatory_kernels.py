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

Like the timer's, these kernels are compiled twice (:func:`make_kernels`, see :mod:`.kernelbuild`):
the fast build is this module's attributes, the checked build (:func:`checked_kernels`, debug mode)
compiles the ``if CHECKED:`` blocks in.  A failed check stores its code and the state it saw in
``P[P_DIAG:]`` and sets ``P[P_ERROR]``; :func:`describe_check` words it for the wrapper.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .kernelbuild import Builds
from .layout import COUNT

JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")

#: Compile-time constant of a build (see :mod:`.kernelbuild`).
CHECKED = False

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
P_ERROR = 7      # checked build: non-zero when a check failed (P[P_DIAG:] says which and what)
P_DIAG = 8       # P[P_DIAG]: the failed check's code; P[P_DIAG + 1 : P_DIAG + 8]: the values it saw
P_LEN = 16

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

assert len({P_EST, P_WFREE, P_NWFREE, P_WATCHED, P_NLOG, P_BEFORE, P_PURGED, P_ERROR}) == 8 and P_ERROR < P_DIAG, \
    "P slots must be distinct and below the diagnostic area: a failed check writes P[P_DIAG:]"
assert P_DIAG + 8 <= P_LEN, "_pfail stores a check's code and 7 values in P[P_DIAG:P_DIAG + 8]"
assert len({O_DONE, O_COMPLETABLE, O_USED}) == 3 and len({K_HEAD, K_TAIL, K_LEN}) == 3 and W_OP != W_NEXT, \
    "columns of opt, kt and we must be distinct"
assert RETRY not in (0, 1), "RETRY must differ from the completable flag's 0 and 1: watch_range tests == 1 and == RETRY"
assert len(VIAS) == 5 and VIAS.index("expire") == VIA_EXPIRE and VIAS.index("cancelled") == VIA_CANCELLED, \
    "VIAS must be indexed by the VIA_* codes the log holds"

# -- the checks of the checked build: code = kernel + rule ---------------------------------------------
KN_WATCH = 0x100
KN_EXPIRE = 0x200
KN_CHECK = 0x300
KN_CANCEL = 0x400
KN_FORCE = 0x500
KN_PURGE = 0x600
CP_NEW = 1
CP_FREE = 2
CP_KLEN = 3
CP_CHAIN = 4
CP_END = 5
CP_TCOUNT = 6
CP_CONSERVE = 7
CP_USED = 8
#: kernel code -> kernel name; rule code -> (the rule that failed, names of the values in P[P_DIAG + 1:]).
CHECK_KERNELS = {KN_WATCH: "watch_range", KN_EXPIRE: "expire_range", KN_CHECK: "check_range",
                 KN_CANCEL: "cancel_key", KN_FORCE: "force_range", KN_PURGE: "purge"}
CHECK_RULES: dict[int, tuple[str, tuple[str, ...]]] = {
    CP_NEW: ("a newly watched operation is not completed", ("op", "completed", "completable")),
    CP_FREE: ("a watch entry taken from the free list is in the table", ("op", "key", "entry", "entries",
                                                                        "free entries")),
    CP_KLEN: ("a key's list length is not negative", ("key", "length")),
    CP_CHAIN: ("a watch list's entries are in the table", ("key", "entry", "left to walk", "entries")),
    CP_END: ("a watch list ends where its length says", ("key", "next after the last entry", "length")),
    CP_TCOUNT: ("the timeout timer's counter never goes negative", ("op", "timer count")),
    CP_CONSERVE: ("watch entries are conserved: watched + free = entries, neither negative",
                  ("watched", "free entries", "entries")),
    CP_USED: ("a fired timeout belongs to a watched operation", ("op", "position")),
}


def describe_check(P: np.ndarray) -> str:
    """The message for a failed check of the checked build (``P[P_ERROR] != 0``)."""
    code = int(P[P_DIAG])
    kernel = CHECK_KERNELS.get(code & ~0xFF, "?")
    rule, names = CHECK_RULES.get(code & 0xFF, (f"unknown check {code}", ()))
    values = ", ".join(f"{name}={int(P[P_DIAG + 1 + k])}" for k, name in enumerate(names))
    return f"optimized engine invariant broken in checked kernel {kernel}: {rule} ({values})"


def _pfail(P, check, v1, v2, v3, v4, v5):
    """Checked build: record a failed check (the first one only) for the wrapper to raise."""
    if P[P_ERROR] == 0:
        P[P_ERROR] = 1
        P[P_DIAG] = check
        P[P_DIAG + 1] = v1
        P[P_DIAG + 2] = v2
        P[P_DIAG + 3] = v3
        P[P_DIAG + 4] = v4
        P[P_DIAG + 5] = v5


def _conserved(P, we, kernel):
    """Checked build, at the end of a kernel that moves watch entries: none was lost or made up."""
    if P[P_WATCHED] < 0 or P[P_NWFREE] < 0 or P[P_WATCHED] + P[P_NWFREE] != we.shape[0]:
        _pfail(P, kernel + CP_CONSERVE, P[P_WATCHED], P[P_NWFREE], we.shape[0], 0, 0)


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
        if CHECKED:
            if opt[op, O_DONE] != 0:
                _pfail(P, KN_WATCH + CP_NEW, op, opt[op, O_DONE], opt[op, O_COMPLETABLE], 0, 0)
                return m
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
            if CHECKED:
                if e < 0 or e >= we.shape[0]:
                    _pfail(P, KN_WATCH + CP_FREE, op, key, e, we.shape[0], P[P_NWFREE])
                    return m
                if kt[key, K_LEN] < 0:
                    _pfail(P, KN_WATCH + CP_KLEN, key, kt[key, K_LEN], 0, 0, 0)
                    return m
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
    if CHECKED:
        _conserved(P, we, KN_WATCH)
    return m


def expire_range(P, opt, lg, fired):
    """The timer ran these operations' timeouts (``DelayedOperation.run``): each that is not yet
    completed completes (``via`` expire; Kafka then calls ``onExpiration``)."""
    nlog = P[P_NLOG]
    for i in range(fired.shape[0]):
        op = fired[i]
        if CHECKED:
            if opt[op, O_USED] == 0:
                _pfail(P, KN_EXPIRE + CP_USED, op, i, 0, 0, 0)
                return
        if opt[op, O_DONE] == 0:
            opt[op, O_DONE] = 1
            lg[nlog, 0] = op
            lg[nlog, 1] = VIA_EXPIRE
            nlog += 1
    P[P_NLOG] = nlog


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
        if CHECKED:
            if n < 0:
                _pfail(P, KN_CHECK + CP_KLEN, key, n, 0, 0, 0)
                return
        while n > 0:
            if CHECKED:
                if e < 0 or e >= we.shape[0]:
                    _pfail(P, KN_CHECK + CP_CHAIN, key, e, n, we.shape[0], 0)
                    return
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
                    if CHECKED:
                        if TS[COUNT] < 0:
                            _pfail(P, KN_CHECK + CP_TCOUNT, op, TS[COUNT], 0, 0, 0)
                            return
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
        if CHECKED:
            if e != -1:
                _pfail(P, KN_CHECK + CP_END, key, e, kt[key, K_LEN], 0, 0)
                return
        if kt[key, K_LEN] == 0:
            kt[key, K_HEAD] = -1
            kt[key, K_TAIL] = -1
        counts[i] = done
    P[P_NLOG] = nlog
    P[P_WFREE] = free
    P[P_NWFREE] = nfree
    P[P_WATCHED] = watched
    if CHECKED:
        _conserved(P, we, KN_CHECK)


def cancel_key(P, kt, we, lg, TS, tlive, key):
    """``cancelForKey(key)``: remove the key's whole list and cancel each listed operation's
    timeout entry; nothing completes, no callback runs, the operations stay in their other keys'
    lists.  The listed ids (in watch order, repeats included) go to the log.  Returns their number.

    The caller guarantees ``kt[key, K_LEN]`` free log rows."""
    nlog = P[P_NLOG]
    free = P[P_WFREE]
    n = kt[key, K_LEN]
    e = kt[key, K_HEAD]
    if CHECKED:
        if n < 0:
            _pfail(P, KN_CANCEL + CP_KLEN, key, n, 0, 0, 0)
            return 0
    for j in range(n):
        if CHECKED:
            if e < 0 or e >= we.shape[0]:
                _pfail(P, KN_CANCEL + CP_CHAIN, key, e, n - j, we.shape[0], 0)
                return 0
        op = we[e, W_OP]
        nxt = we[e, W_NEXT]
        w = tlive[U(op) >> U(6)]
        bit = U(1) << (U(op) & U(63))
        if w & bit:
            tlive[U(op) >> U(6)] = w & ~bit
            TS[COUNT] -= 1
            if CHECKED:
                if TS[COUNT] < 0:
                    _pfail(P, KN_CANCEL + CP_TCOUNT, op, TS[COUNT], 0, 0, 0)
                    return 0
        lg[nlog, 0] = op
        lg[nlog, 1] = VIA_CANCELLED
        nlog += 1
        we[e, W_NEXT] = free
        free = e
        e = nxt
    if CHECKED:
        if e != -1:
            _pfail(P, KN_CANCEL + CP_END, key, e, n, 0, 0)
            return 0
    kt[key, K_HEAD] = -1
    kt[key, K_TAIL] = -1
    kt[key, K_LEN] = 0
    P[P_NLOG] = nlog
    P[P_WFREE] = free
    P[P_NWFREE] += n
    P[P_WATCHED] -= n
    if CHECKED:
        _conserved(P, we, KN_CANCEL)
    return n


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
            if CHECKED:
                if TS[COUNT] < 0:
                    _pfail(P, KN_FORCE + CP_TCOUNT, op, TS[COUNT], 0, 0, 0)
                    return
        lg[nlog, 0] = op
        lg[nlog, 1] = VIA_FORCE
        nlog += 1
        res[i] = 1
    P[P_NLOG] = nlog


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
        if CHECKED:
            if n < 0:
                _pfail(P, KN_PURGE + CP_KLEN, key, n, 0, 0, 0)
                return True
        if n == 0:
            continue
        prev = -1
        e = kt[key, K_HEAD]
        for j in range(n):
            if CHECKED:
                if e < 0 or e >= we.shape[0]:
                    _pfail(P, KN_PURGE + CP_CHAIN, key, e, n - j, we.shape[0], 0)
                    return True
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
        if CHECKED:
            if e != -1:
                _pfail(P, KN_PURGE + CP_END, key, e, n, 0, 0)
                return True
        if kt[key, K_LEN] == 0:
            kt[key, K_HEAD] = -1
            kt[key, K_TAIL] = -1
    P[P_WFREE] = free
    P[P_NWFREE] += purged
    P[P_WATCHED] -= purged
    P[P_PURGED] = purged
    if CHECKED:
        _conserved(P, we, KN_PURGE)
    return True


@njit(**JIT)
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


# -- the two builds ---------------------------------------------------------------------------------
#: The kernels :func:`make_kernels` compiles (``validate_ops`` is a read-only check of the input
#: and has one build), and the helpers only the checked build calls.
_SOURCES = (watch_range, expire_range, check_range, cancel_key, force_range, purge)
_CHECKED_ONLY = (_pfail, _conserved)


# ``make_kernels(checked)`` and ``checked_kernels()``: as in :mod:`.timer_kernels`.
_BUILDS = Builds(_SOURCES, _CHECKED_ONLY, globals(), JIT)
make_kernels = _BUILDS.make
checked_kernels = _BUILDS.checked

# The fast build: from here on this module's kernels are its dispatchers.
globals().update(vars(make_kernels(False)))
