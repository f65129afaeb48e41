"""A whole timer schedule in one compiled call: Kafka's ``SystemTimer`` (the engine's timer
kernels, :mod:`.timer_kernels`) driven request by request inside compiled code, recording each
request's answer and the semantic situations of ``spec/SEMANTICS.md`` it exercised.

This is the compiled form of the conformance judge's oracle for the timer kind: the reference
run of a schedule plus the coverage probe that watches it (``conformance/check/coverage.py``
defines each situation; :data:`TIMER_SITUATIONS` are the ones a schedule of timer requests can
show, counted here by the same rules, on the engine's arrays instead of the reference's
objects).  The equality of both, answers and counts, is held by
``tests/test_compiled_oracle.py``.

The schedule comes encoded as arrays (:data:`OP_ADD` ...), task ids as dense rows; the caller
sizes the engine so that no buffer can run out (:func:`run_timer_schedule` then returns
:data:`RAN_OUT` if one did anyway, and the caller uses the reference instead).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .layout import (
    B_EXP,
    B_HEAD,
    B_NSLOTS,
    CHUNK,
    COUNT,
    DONE,
    ERROR,
    HEAPN,
    LV_CUR,
    LV_END,
    LV_TICK,
    NLEV,
    NOUT,
    WSIZE,
)
from .timer_kernels import add_range, advance, cancel_one

#: request codes of the encoded schedule (``kind[i]``); ``arg[i]``: the task row, delay or time
OP_ADD, OP_CANCEL, OP_ADVANCE, OP_SIZE, OP_REFUSED_CANCEL = 0, 1, 2, 3, 4

#: the situations counted, in the order of the ``cov`` array (names of ``coverage.SITUATIONS``)
TIMER_SITUATIONS = (
    "nonpositive-delay", "due-at-add-stale-clock", "stale-placement-overflow", "zero-advance-fires",
    "idle-jump", "early-fire-in-window", "cascade-level-1", "cascade-level-2", "cascade-level-3+",
    "bucket-reuse-level-0", "bucket-reuse-overflow", "tie-across-levels", "fire-order-not-by-exp",
    "mixed-route-bucket", "readd-while-scheduled", "readd-after-fire", "readd-after-cancel",
    "readd-cascaded", "cancel-cascaded", "cancel-after-fire", "cancel-racing-flush",
)
(C_NONPOS, C_STALE_DUE, C_STALE_OVF, C_ZERO_ADV, C_IDLE, C_EARLY, C_CASC1, C_CASC2, C_CASC3, C_REUSE0,
 C_REUSE_OVF, C_TIE, C_ORDER, C_MIXED, C_READD_SCHED, C_READD_FIRE, C_READD_CANCEL, C_READD_CASC,
 C_CANCEL_CASC, C_CANCEL_FIRE, C_CANCEL_RACE) = range(len(TIMER_SITUATIONS))

#: :func:`run_timer_schedule`'s status: every request answered, or a buffer ran out / the engine
#: flagged an impossible state (the caller runs the reference instead)
OK, RAN_OUT = 0, 1
#: ``err[i]``: the request was refused (an advance before the clock, which changes nothing)
ERR_NONE, ERR_BACKWARDS = 0, 1
#: per task row, the probe's view (``coverage.Probe``): pending with ``pexp``, fired, cancelled,
#: cascaded down from an overflow wheel; and the route of its linked entry into level 0
F_LIVE, F_FIRED, F_CANCELLED, F_CASCADED = 1, 2, 4, 8
R_NONE, R_DIRECT, R_CASCADED, R_READDED = 0, 1, 2, 4

JIT: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy")


@njit(**JIT)
def _is_live(live, t):
    return ((live[t >> 6] >> np.uint64(t & 63)) & np.uint64(1)) != 0


@njit(**JIT)
def _bucket_entries(bk, tk, live, pid, cnext, b, rows_out):
    """The live entries of bucket ``b`` (Kafka's ``TimerTaskList`` as linked: a slot holding the
    task's latest entry, not cancelled), written to ``rows_out``; returns how many."""
    n = 0
    left = bk[b, B_NSLOTS]
    c = bk[b, B_HEAD]
    while left > 0 and c >= 0:
        k = min(left, CHUNK)
        for j in range(k):
            s = c * CHUNK + j
            t = pid[s]
            if t >= 0 and tk[t] == s and _is_live(live, t):
                rows_out[n] = t
                n += 1
        left -= k
        c = cnext[c]
    return n


@njit(**JIT)
def _before_advance(S, bk, heap, tk, live, pid, cnext, W, t, window_of, route, flushing, scratch, cov):
    """``Probe.before`` of an advance to ``t``: bucket reuse, cascades, ties across levels and
    mixed-route buckets, read from the delay queue as it stands; marks the plain timer's tasks
    in cascading buckets in ``flushing`` (returns how many)."""
    nq = S[HEAPN]
    nflush = 0
    tie = False
    for q in range(nq):
        b = heap[q]
        level = b // W
        e = bk[b, B_EXP]
        if window_of[b] != -1 and window_of[b] != e:
            cov[C_REUSE0 if level == 0 else C_REUSE_OVF] += 1
        window_of[b] = e
        if e > t:
            continue
        for r in range(q):  # an earlier due bucket of another level with the same expiration
            b2 = heap[r]
            if bk[b2, B_EXP] == e and b2 // W != level:
                tie = True
        n = _bucket_entries(bk, tk, live, pid, cnext, b, scratch)
        if level == 0:
            seen = 0
            for j in range(n):
                seen |= route[scratch[j]]
            if seen == R_DIRECT | R_CASCADED | R_READDED:
                cov[C_MIXED] += 1
        elif n > 0:
            cov[C_CASC1 if level == 1 else C_CASC2 if level == 2 else C_CASC3] += 1
            for j in range(n):
                flushing[nflush] = scratch[j]
                nflush += 1
    if tie:
        cov[C_TIE] += 1
    return nflush


@njit(**JIT)
def _fired(state, pexp, ftask, fexp, lo, hi, now, tick, cov):
    """``Probe._events`` for the fires ``lo:hi`` of one request (answered at ``now``)."""
    for i in range(lo, hi):
        t, e = ftask[i], fexp[i]
        if now < e:
            cov[C_EARLY] += 1
        w = (e // tick) * tick
        for j in range(i - 1, lo - 1, -1):  # the previous fire of the same window, if any
            if (fexp[j] // tick) * tick == w:
                if fexp[j] > e:
                    cov[C_ORDER] += 1
                break
        if state[t] & F_LIVE and pexp[t] == e:
            state[t] = (state[t] & ~(F_LIVE | F_CASCADED)) | F_FIRED


@njit(**JIT)
def _take_fires(S, out, ftask, fexp, nf):
    """Move the engine's output rows (fired tasks, in firing order) to the schedule's fire arrays."""
    k = S[NOUT]
    for j in range(k):
        ftask[nf + j] = out[0, j]
        fexp[nf + j] = out[1, j]
    S[NOUT] = 0
    return nf + k


@njit(**JIT)
def _add(T, one_id, one_exp, row, delay, now, tick, W, probe, cov):
    """``SimulationDriver.add`` on the engine (``T``: the timer's arrays) and ``Probe.after`` of
    it (minus the fires; ``probe``: its per-row state); returns (the engine stopped, the
    expiration)."""
    S, lv, bk, heap, tk, live, pid, pexp, cnext, out = T[:10]
    state, probe_exp, route = probe
    superseding = _is_live(live, row)
    exp = now + delay
    one_id[0] = row
    one_exp[0] = exp
    if add_range(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, one_id, one_exp, 0, 0) < 1 or S[ERROR] != 0:
        return True, exp
    st = state[row]
    if delay <= 0:
        cov[C_NONPOS] += 1
    if st & F_LIVE:
        cov[C_READD_SCHED] += 1
        if st & F_CASCADED:
            cov[C_READD_CASC] += 1
    elif st & F_CANCELLED:
        cov[C_READD_CANCEL] += 1
    elif st & F_FIRED:
        cov[C_READD_FIRE] += 1
    state[row] = F_LIVE
    probe_exp[row] = exp
    route[row] = R_NONE
    if _is_live(live, row):  # linked in a bucket: the level it was placed in says its route
        level = 0
        while level < S[NLEV] - 1 and exp >= lv[level, LV_END]:
            level += 1
        route[row] = R_CASCADED if level > 0 else R_READDED if superseding else R_DIRECT
    c0 = lv[0, LV_CUR]
    if (exp // tick) * tick <= now and exp >= c0 + tick:
        cov[C_STALE_DUE] += 1
    if delay < tick * W and exp >= c0 + tick * W:
        cov[C_STALE_OVF] += 1
    return False, exp


@njit(**JIT)
def _cancel(S, live, row, now, tick, state, probe_exp, cov):
    """``SimulationDriver.cancel`` on the engine and ``Probe.after`` of it; returns pending."""
    pending = cancel_one(S, live, row)
    st = state[row]
    if pending:
        if st & F_LIVE and (probe_exp[row] // tick) * tick <= now:
            cov[C_CANCEL_RACE] += 1
        if st & F_CASCADED:
            cov[C_CANCEL_CASC] += 1
    elif st & F_FIRED:
        cov[C_CANCEL_FIRE] += 1
    if st & F_LIVE:
        st = (st & ~F_LIVE) | F_CANCELLED
    state[row] = st & ~F_CASCADED
    return pending


@njit(**JIT)
def run_timer_schedule(T, schedule, now, R):
    """Run the encoded schedule (``kind[i]``, ``arg[i]``: task row or time, ``delay[i]``) on the
    timer ``T`` (its arrays ``S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, scr``)
    from clock ``now``.  Into ``R``, per request: ``res`` its result (an add's expiration, a
    cancel's pending 0/1, a size), ``err`` (:data:`ERR_BACKWARDS`), ``rnow`` the clock after it,
    and its fires ``ftask[fstart[i]:fstart[i + 1]]`` (task rows) with expirations ``fexp``; and
    ``cov``, the counts of :data:`TIMER_SITUATIONS`.  Returns :data:`OK` or :data:`RAN_OUT`."""
    S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, scr = T
    kind, arg, delay = schedule
    res, err, rnow, fstart, ftask, fexp, cov = R
    W = S[WSIZE]
    tick = lv[0, LV_TICK]
    n = kind.shape[0]
    rows = tk.shape[0]
    state = np.zeros(rows, np.int8)
    probe_exp = np.zeros(rows, np.int64)
    route = np.zeros(rows, np.int8)
    flushing = np.zeros(rows, np.int64)
    scratch = np.zeros(rows, np.int64)
    window_of = np.full(bk.shape[0], -1, np.int64)
    one_id = np.zeros(1, np.int64)
    one_exp = np.zeros(1, np.int64)
    nf = 0
    for i in range(n):
        fstart[i] = nf
        k = kind[i]
        err[i] = ERR_NONE
        res[i] = 0
        if k == OP_ADD:
            stopped, exp = _add(T, one_id, one_exp, arg[i], delay[i], now, tick, W, (state, probe_exp, route), cov)
            if stopped:
                return RAN_OUT
            res[i] = exp
        elif k == OP_CANCEL:
            res[i] = 1 if _cancel(S, live, arg[i], now, tick, state, probe_exp, cov) else 0
        elif k == OP_ADVANCE:
            t = arg[i]
            if t - now > tick * W * W and _any_live(state):
                cov[C_IDLE] += 1
            nflush = _before_advance(S, bk, heap, tk, live, pid, cnext, W, t, window_of, route, flushing,
                                     scratch, cov)
            if t < now:  # refused: time never goes back
                err[i] = ERR_BACKWARDS
            else:
                if advance(S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, scr, t) != DONE \
                        or S[ERROR] != 0:
                    return RAN_OUT
                before = now
                now = t
                nf2 = _take_fires(S, out, ftask, fexp, nf)
                if t == before and nf2 > nf:
                    cov[C_ZERO_ADV] += 1
                _fired(state, probe_exp, ftask, fexp, nf, nf2, now, tick, cov)
                nf = nf2
                for j in range(nflush):
                    r = flushing[j]
                    if state[r] & F_LIVE:
                        state[r] |= F_CASCADED
        elif k == OP_SIZE:
            res[i] = S[COUNT]
        rnow[i] = now
        if k == OP_ADD:
            nf2 = _take_fires(S, out, ftask, fexp, nf)
            _fired(state, probe_exp, ftask, fexp, nf, nf2, now, tick, cov)
            nf = nf2
    fstart[n] = nf
    return OK


@njit(**JIT)
def _any_live(state):
    for x in state:
        if x & F_LIVE:
            return True
    return False
