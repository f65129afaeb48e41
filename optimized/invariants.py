"""The structural invariants of the array engine, checked by the debug mode after every call
(``WHEELSPEC_DEBUG=1`` or ``debug=True``) and by the tests.  Plain numpy: slow, thorough, and
independent of the compiled kernels it checks.  Each failure raises
:class:`~wheelspec.spec.errors.InvariantError` (an ``AssertionError``) naming the invariant."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wheelspec.spec.errors import InvariantError

from . import layout as L
from . import purgatory_kernels as PK

if TYPE_CHECKING:  # the wrappers import this module: no cycle at run time
    from .purgatory import ArrayPurgatory
    from .timer import ArrayTimer


def _fail(what: str) -> None:
    raise InvariantError(f"optimized engine invariant broken: {what}")


def task_bits(timer: ArrayTimer) -> np.ndarray:
    """The liveness bitmap as one bool per task id; fails if it is not sized to the task table
    or has a bit set beyond it."""
    capacity = timer.tk.shape[0]
    if timer.live.dtype != np.uint64 or timer.live.shape[0] < L.live_words(capacity):
        _fail(f"liveness bitmap has {timer.live.shape[0]} words for {capacity} task ids")
    bits = np.unpackbits(timer.live.view(np.uint8), bitorder="little").astype(bool)
    if bits[capacity:].any():
        _fail("a liveness bit is set beyond the task table")
    return bits[:capacity]


def check_timer(timer: ArrayTimer) -> None:
    """Buckets, chunks, delay queue, levels and task locations of an :class:`~.timer.ArrayTimer`."""
    S, lv, bk, heap, tk, pid, pexp, cnext = (timer.S, timer.lv, timer.bk, timer.heap, timer.tk, timer.pid,
                                             timer.pexp, timer.cnext)
    live_bits = task_bits(timer)
    W = int(S[L.WSIZE])
    nlev = int(S[L.NLEV])
    if S[L.ERROR]:
        _fail(f"error code {int(S[L.ERROR])}")
    if not 1 <= nlev <= S[L.MAXLEV]:
        _fail(f"level count {nlev} outside [1, {int(S[L.MAXLEV])}]")
    # Levels: tick_{L+1} = tick_L * W, clock of L+1 = clock of L rounded down to tick_{L+1}.
    for lvl in range(nlev):
        tick, cur = int(lv[lvl, L.LV_TICK]), int(lv[lvl, L.LV_CUR])
        if cur % tick:
            _fail(f"level {lvl} clock {cur} not a multiple of its tick {tick}")
        if lv[lvl, L.LV_CVID] != cur // tick or lv[lvl, L.LV_CIDX] != (cur // tick) % W:
            _fail(f"level {lvl}: cached clock bucket out of date")
        if lv[lvl, L.LV_END] != cur + tick * W:
            _fail(f"level {lvl}: cached window end {int(lv[lvl, L.LV_END])} != {cur} + {tick} * {W}")
        if lvl:
            if tick != lv[lvl - 1, L.LV_TICK] * W:
                _fail(f"level {lvl} tick {tick} != W * tick below")
            below = int(lv[lvl - 1, L.LV_CUR])
            if cur != below - below % tick:
                _fail(f"level {lvl} clock {cur} != clock below {below} rounded down to {tick}")
    # Delay queue: a binary min-heap on bucket expiration, each queued bucket once, and exactly the
    # buckets with a window (expiration != -1) are queued.
    n = int(S[L.HEAPN])
    q = heap[:n]
    if np.unique(q).size != n:
        _fail("a bucket is queued twice")
    exps = bk[q, L.B_EXP]
    for k in range(1, n):
        if exps[(k - 1) >> 1] > exps[k]:
            _fail(f"heap order broken at position {k}")
    windowed = np.flatnonzero(bk[:, L.B_EXP] != -1)
    if set(windowed.tolist()) != set(q.tolist()):
        _fail("queued buckets != buckets with a window")
    # Chunks: walk every bucket's chain; count slots; check that each slot holding a task is that
    # task's latest entry (its location points back), and count the pending ones (bit set).
    live = 0
    seen_chunks = 0
    nchunks = cnext.shape[0]
    empty = bk[:, L.B_NSLOTS] == 0
    if (bk[empty, L.B_HEAD] != -1).any() or (bk[empty, L.B_TAIL] != -1).any():
        _fail("an empty bucket owns chunks")
    for b in np.flatnonzero(~empty).tolist():
        ns = int(bk[b, L.B_NSLOTS])
        lvl, idx = divmod(b, W)
        if lvl >= nlev:
            _fail(f"bucket {b} of a level not created yet holds entries")
        if bk[b, L.B_EXP] == -1:
            _fail(f"bucket {b} holds slots but has no window")
        tick = int(lv[lvl, L.LV_TICK])
        bexp = int(bk[b, L.B_EXP])
        c, rem, chain = int(bk[b, L.B_HEAD]), ns, 0
        while rem > 0:
            if not 0 <= c < nchunks:
                _fail(f"bucket {b}: chunk {c} out of range")
            m = min(rem, L.CHUNK)
            slots = np.arange(c * L.CHUNK, c * L.CHUNK + m)
            ids = pid[slots]
            ok = ids >= 0
            if (tk[ids[ok]] != slots[ok]).any():
                _fail(f"bucket {b}: a slot's task does not point back at it (an older entry was not tombstoned)")
            ok[ok] = live_bits[ids[ok]]
            for t, e in zip(ids[ok].tolist(), pexp[slots[ok]].tolist()):
                if e // tick * tick != bexp or (e // tick) % W != idx:
                    _fail(f"task {t} (exp {e}) sits in bucket {b} with window {bexp}")
            live += int(ok.sum())
            rem -= m
            chain += 1
            last = c
            c = int(cnext[c])
        if last != bk[b, L.B_TAIL]:
            _fail(f"bucket {b}: tail chunk mismatch")
        seen_chunks += chain
    if live != S[L.COUNT]:
        _fail(f"size {int(S[L.COUNT])} != live entries {live}")
    # Every pending task (bit set) has its entry where its location says; so the bits set, the
    # pending entries found in the buckets and the size counter are one number.
    pending = np.flatnonzero(live_bits)
    if int(pending.size) != live:
        _fail(f"{int(pending.size)} bits set != {live} pending entries in buckets")
    loc = tk[pending]
    if (loc < 0).any() or (pid[np.maximum(loc, 0)] != pending).any():
        _fail("a pending task's location does not hold its entry")
    # Free list length.
    c, free = int(S[L.FREE]), 0
    while c != -1:
        free += 1
        if free > nchunks:
            _fail("free-chunk list has a cycle")
        c = int(cnext[c])
    if free != S[L.NFREE]:
        _fail(f"free list holds {free} chunks, NFREE says {int(S[L.NFREE])}")
    if free + seen_chunks != nchunks:
        _fail(f"chunks leaked: {free} free + {seen_chunks} used != {nchunks}")


def check_purgatory(p: ArrayPurgatory) -> None:
    """Watch lists and counters of an :class:`~.purgatory.ArrayPurgatory` (and its timer)."""
    from .mock_timer import ArrayMockTimer, check_mock_timer

    if isinstance(p.timer, ArrayMockTimer):
        check_mock_timer(p.timer)
    else:
        check_timer(p.timer)
    P, kt, we, opt = p.P, p.kt, p.we, p.opt
    total = 0
    for key in range(p.num_keys):
        n = int(kt[key, PK.K_LEN])
        e, last = int(kt[key, PK.K_HEAD]), -1
        for _ in range(n):
            if not 0 <= e < we.shape[0]:
                _fail(f"key {key}: entry {e} out of range")
            if not opt[we[e, PK.W_OP], PK.O_USED]:
                _fail(f"key {key} lists an operation never watched")
            last, e = e, int(we[e, PK.W_NEXT])
        if e != -1 or (n and last != kt[key, PK.K_TAIL]) or (not n and kt[key, PK.K_HEAD] != -1):
            _fail(f"key {key}: list shape broken")
        total += n
    if total != P[PK.P_WATCHED]:
        _fail(f"watched {int(P[PK.P_WATCHED])} != list lengths {total}")
    if total + P[PK.P_NWFREE] != we.shape[0]:
        _fail("watch entries leaked")
    # A completed operation never has a live timeout entry.
    done = np.flatnonzero(opt[:, PK.O_DONE])
    done = done[done < p.timer.capacity]
    if any(p.timer.is_scheduled(op) for op in done.tolist()):
        _fail("a completed operation is still in the timer")
