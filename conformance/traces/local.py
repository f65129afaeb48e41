"""``wheelspec analyze --engine local``: the property queries of :mod:`.rules` on one
machine, with pyarrow (I/O, joins, group-bys) and numpy (segmented scans), no Java needed.

Rows are put once in (run, seq) order; timer rows are re-ordered by (run, id, seq).  The window
functions of the Spark engine become *segmented scans*: "last X at or before this row inside my
partition" is a running maximum of positions (``np.maximum.accumulate``) clipped at the
partition's start.  Joins on (run, key) / (run, op) use pyarrow's hash join.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from wheelspec.conformance.traces.columns import (
    bfill,
    dict_codes,
    exact_ints,
    ffill,
    int_column,
    lookup_unique,
    minus,
    pair_codes,
    plus,
    segments,
    stable_order,
    within,
    wrap64,
)
from wheelspec.conformance.traces.format import EVENT_KINDS, conform
from wheelspec.conformance.traces.rules import (
    CAUSED,
    DEADLINE_RANGE,
    DELAY_RANGE,
    PROFILES,
    TIME_RANGE,
    bucket_width,
    check_options,
    finish,
    level_thresholds,
)
from wheelspec.spec.errors import UserError
from wheelspec.spec.events import VIAS
from wheelspec.spec.profiles import KAFKA, behaviour, earliest_time

K = {k: i for i, k in enumerate(EVENT_KINDS)}
ADD, FIRE, CANCEL, ADV = K["add"], K["fire"], K["cancel"], K["advance"]
COMPLETE, EXPIRE, WATCH, SETC = K["complete"], K["expire"], K["watch"], K["set_completable"]
CHECK, CFK, FORCE = K["check"], K["cancel_for_key"], K["force_complete"]
#: the kinds whose deadline is the row's own ``time + delay`` (docs/guides/TRACE_FORMAT.md)
DEADLINE_IS_SUM = (ADD, WATCH, K["resubmit"])
#: the well-formed rules, as bits of a row's reason code (one row may break several)
(WF_TIME, WF_DELAY, WF_DEADLINE, WF_CLOCK_BACK, WF_NOT_SUM, WF_VIA, WF_WATCHED_TWICE,
 WF_NOT_WATCHED) = (1 << i for i in range(8))
# What each profile (by its code, the index in PROFILES) does, as lookup tables on the codes:
# the analysis asks these, never a profile's name (wheelspec.spec.profiles.Behaviour).
USES_TICK = np.array([behaviour(p).uses_tick for p in PROFILES])
STRICTLY_AFTER = np.array([behaviour(p).needs_strictly_after for p in PROFILES], np.int64)
INSIDE_ADD = np.array([behaviour(p).fires_inside_add for p in PROFILES])


# ------------------------------------------------------------------ profile rules ---------------
def _before_earliest(t: np.ndarray, exp: np.ndarray, prof: np.ndarray, tick: np.ndarray) -> np.ndarray:
    """``t < profile.earliest(exp)`` per row (spec.profiles), without wrapping."""
    t, exp, tick = exact_ints(t, exp, tick)
    return np.asarray(t < earliest_time(exp, tick, USES_TICK[prof], STRICTLY_AFTER[prof]), bool)


class _Rows:
    """The trace as numpy arrays in (run, seq) order."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        n = self.n = table.num_rows
        run, self.run_names = dict_codes(table.column("run"), None, "run")
        seq, _ = int_column(table.column("seq"))
        order = stable_order(run, seq)
        self.order = order
        self.r = run[order]
        self.seq = seq[order]
        self.kind = dict_codes(table.column("kind"), EVENT_KINDS, "kind")[0][order]
        self.time = int_column(table.column("time"))[0][order]
        self.id, self.id_ok = (a[order] for a in int_column(table.column("id")))
        self.delay, self.delay_ok = (a[order] for a in int_column(table.column("delay")))
        self.dl, self.dl_ok = (a[order] for a in int_column(table.column("deadline")))
        self.value, self.value_ok = (a[order] for a in int_column(table.column("value")))
        flag = table.column("flag").combine_chunks()
        self.flag_ok = ~flag.is_null().to_numpy(zero_copy_only=False)[order]
        self.flag = pc.fill_null(flag, False).to_numpy(zero_copy_only=False)[order]
        self.prof = dict_codes(table.column("profile"), PROFILES, "profile", null_as=KAFKA)[0][order]
        self.tick = int_column(table.column("tick_ms"), 1)[0][order]
        if n and self.tick.min() < 1:
            raise UserError(f"trace column 'tick_ms' has a value {int(self.tick.min())} < 1")
        self.wheel, self.wheel_ok = (a[order] for a in int_column(table.column("wheel_size")))
        label, self.labels = dict_codes(table.column("label"), None, "label", null_as="")
        self.label = label[order]
        impl, self.impls = dict_codes(table.column("impl"), None, "impl", null_as="")
        self.impl = impl[order]
        self.run_start, self.run_end = segments(self.r)
        self.idx = np.arange(n)

    def label_code(self, name: str) -> int:
        return self.labels.index(name) if name in self.labels else -1

    def deadline(self, p: int) -> int | None:
        """Row ``p``'s deadline as reported: the trace's, except that a deadline defined as the
        row's ``time + delay`` and holding that sum wrapped to 64 bits (a recorder's ``long``
        arithmetic) is the exact sum, a Python int."""
        if not self.dl_ok[p]:
            return None
        dl = int(self.dl[p])
        if self.kind[p] in DEADLINE_IS_SUM and self.delay_ok[p]:
            exact = int(self.time[p]) + int(self.delay[p])
            if exact != dl and wrap64(exact) == dl:
                return exact
        return dl

    def rows(self, pos: np.ndarray, limit: int, why: Any = None) -> list[dict[str, Any]]:
        """Example rows (the first ``limit`` by run name, seq) as plain dicts (:data:`.rules.ROW_COLUMNS`);
        ``why(p)``: what is wrong with row ``p``, if the property says."""
        pos = np.asarray(pos, np.int64)
        if pos.size == 0:
            return []
        names = np.asarray(self.run_names, dtype=object)[self.r[pos]]
        o = sorted(range(pos.size), key=lambda i: (names[i], int(self.seq[pos[i]])))[:limit]
        out = []
        for i in o:
            p = int(pos[i])
            out.append({"run": names[i], "seq": int(self.seq[p]), "kind": EVENT_KINDS[self.kind[p]],
                        "id": int(self.id[p]) if self.id_ok[p] else None, "time": int(self.time[p]),
                        "deadline": self.deadline(p), "why": why(p) if why is not None else None})
        return out


# ------------------------------------------------------------------ the analysis ----------------
Violations = dict[str, tuple[int, list[dict[str, Any]]]]
#: how a property family reports: ``report(prop, positions, count=None, why=None)`` adds the rows
#: at ``positions`` (and ``count`` violations, by default one per row) to property ``prop``
Report = Callable[..., None]


def analyze_table(table: pa.Table, *, lateness_ms: int | None = None, max_rows: int = 20,
                  source: str = "<trace>") -> dict[str, Any]:
    check_options(lateness_ms, max_rows)
    table = conform(table, source)
    if table.num_rows == 0:
        raise UserError(f"{source}: the trace has no rows")
    R = _Rows(table)
    viol, by_profile = judge_table(R, lateness_ms=lateness_ms, max_rows=max_rows)
    hist = lateness_histogram(R)
    kind, time, n = R.kind, R.time, R.n

    # ---- throughput ----------------------------------------------------------------------------
    tmin, tmax = int(time.min()), int(time.max())
    width = bucket_width(tmax - tmin + 1)
    bucket = (minus(time, np.full(n, tmin, np.int64)) // width).astype(np.int64)   # < THROUGHPUT_BUCKETS
    tp = pa.table({"impl": R.impl, "bucket": bucket, "fire": (kind == FIRE).astype(np.int64)})
    g = tp.group_by(["impl", "bucket"]).aggregate([("fire", "count"), ("fire", "sum")]).to_pydict()
    series = sorted(({"impl": R.impls[i], "bucket": int(b), "events": int(c), "fires": int(s)}
                     for i, b, c, s in zip(g["impl"], g["bucket"], g["fire_count"], g["fire_sum"])),
                    key=lambda d: (d["impl"], d["bucket"]))
    summary = {"rows": n, "runs": len(R.run_names), "impls": sorted(R.impls),
               "profiles": sorted({PROFILES[p] for p in np.unique(R.prof)}),
               "kinds": {EVENT_KINDS[k]: int(c) for k, c in zip(*np.unique(kind, return_counts=True))}}
    return finish(summary, viol, by_profile, hist, {"bucket_ms": width, "start": tmin, "series": series},
                  max_rows, lateness_ms)


def lateness_histogram(R: _Rows) -> list[tuple[str, int, str, int, int]]:
    """(impl, wheel level or -1, profile, fire - exp, count) over every fire with a deadline whose
    time and deadline lie in the protocol's ranges (the others are well-formed findings)."""
    kind, time = R.kind, R.time
    fr = np.flatnonzero((kind == FIRE) & R.dl_ok & within(time, TIME_RANGE) & within(R.dl, DEADLINE_RANGE))
    level = np.full(fr.size, -1, np.int64)
    known = R.delay_ok[fr] & R.wheel_ok[fr]
    if known.any():
        pairs = np.unique(np.stack([R.tick[fr][known], R.wheel[fr][known]], 1), axis=0)
        for tk, wh in pairs:
            sel = known & (R.tick[fr] == tk) & (R.wheel[fr] == wh)
            level[sel] = np.searchsorted(np.asarray(level_thresholds(int(tk), int(wh)), np.int64),
                                         R.delay[fr][sel], side="right")
    late = minus(time[fr], R.dl[fr])
    if late.dtype == object:   # beyond int64: Python ints, counted in Python
        counts = Counter(zip(R.impl[fr].tolist(), level.tolist(), R.prof[fr].tolist(), late.tolist()))
        return [(R.impls[i], int(lv), PROFILES[p], int(lt), c) for (i, lv, p, lt), c in counts.items()]
    lat_t = pa.table({"impl": R.impl[fr], "level": level, "prof": R.prof[fr], "late": late})
    g = lat_t.group_by(["impl", "level", "prof", "late"]).aggregate([("late", "count")]).to_pydict()
    hist = [(R.impls[i], int(lv), PROFILES[p], int(lt), int(c)) for i, lv, p, lt, c in
            zip(g["impl"], g["level"], g["prof"], g["late"], g["late_count"])]
    return hist


def judge_table(R: _Rows, *, lateness_ms: int | None = None, max_rows: int = 20) -> tuple[Violations, dict[str, int]]:
    """Every property of :mod:`.rules` over the rows of ``R`` (any number of whole runs):
    per property the violation count and the first ``max_rows`` violating rows (by run, seq), and
    the good fires each profile would call early.  Runs never interact, so the Spark engine calls
    this on each partition of a dataset partitioned by run and adds the results up."""
    viol: Violations = {}

    def report(prop: str, pos: np.ndarray, count: int | None = None, why: Any = None) -> None:
        pos = np.unique(np.asarray(pos, np.int64))
        old_n, old_rows = viol.get(prop, (0, []))
        viol[prop] = (old_n + (int(pos.size) if count is None else count), old_rows + R.rows(pos, max_rows, why))

    c = _context(R)
    _well_formed(R, c, report)
    S = _schedules(R, c)
    _fire_once(S, report)
    _early_fire(R, S, report)
    by_profile = _early_by_profile(S)
    if lateness_ms is not None:
        _late_fire(S, lateness_ms, report)
    _cancel_result(R, S, report)
    _lost_tasks(R, c, S, report)
    first_done, c_first = _complete_once(R, report)
    _expire_rule(R, c, report)
    _early_expire(R, c, c_first, report)
    by_try = _completed_in(R, c, "try")
    _watch_result(R, by_try, report)
    _force_result(R, c, first_done, report)
    _check_count(R, c, report)
    _lost_wakeups(R, by_try, first_done, report)
    _lost_operations(R, c, first_done, report)
    return viol, by_profile


@dataclass(frozen=True)
class _Context:
    """The per-row columns (rows in (run, seq) order) the property families share."""

    #: the row is its run's first
    first_in_run: np.ndarray
    #: each row's request: the next non-caused row at or after it, inside its run (-1: none)
    req: np.ndarray
    req_ok: np.ndarray
    #: ``req`` with 0 for none: an index to read masked by ``req_ok``
    rq: np.ndarray
    #: the last advance strictly before the row, inside its run (-1: none)
    prev_adv: np.ndarray
    #: the last advance of the row's run (-1: none)
    last_adv_of_run: np.ndarray
    #: the row's profile runs a delay <= 0 inside add / watch, with no entry (MockTimer)
    gt: np.ndarray


def _context(R: _Rows) -> _Context:
    """Each row's request, the advances around it and what its profile does with delay <= 0."""
    caused = np.isin(R.kind, [K[k] for k in CAUSED])
    req = bfill(~caused, R.run_end, strict=False)
    req_ok = req >= 0
    return _Context(first_in_run=R.idx == R.run_start, req=req, req_ok=req_ok, rq=np.where(req_ok, req, 0),
                    prev_adv=ffill(R.kind == ADV, R.run_start, inclusive=False),
                    last_adv_of_run=ffill(R.kind == ADV, R.run_start)[R.run_end - 1], gt=INSIDE_ADD[R.prof])


def _completes(R: _Rows, via: str) -> np.ndarray:
    """Per row: is it a complete with this ``via``?"""
    return (R.kind == COMPLETE) & (R.label == R.label_code(via))


# ---- well-formed --------------------------------------------------------------------------------
def _well_formed(R: _Rows, c: _Context, report: Report) -> None:
    """well-formed (SEMANTICS.md Events, Clock, Ranges): ranges, clock, exp = now + delay, via, watched ids."""
    kind, r, time, n = R.kind, R.r, R.time, R.n
    wf_bits = np.zeros(n, np.int64)   # per row: the rules it breaks (WF_*)
    # the protocol's ranges first: the arithmetic below is judged only on rows inside them
    bad_time = ~within(time, TIME_RANGE)
    bad_delay = R.delay_ok & ~within(R.delay, DELAY_RANGE)
    bad_dl = R.dl_ok & ~within(R.dl, DEADLINE_RANGE)
    wf_bits[bad_time] |= WF_TIME
    wf_bits[bad_delay] |= WF_DELAY
    wf_bits[bad_dl] |= WF_DEADLINE
    wf_bits[~c.first_in_run & (time < np.r_[time[:1], time[:-1]])] |= WF_CLOCK_BACK
    sums = np.flatnonzero(np.isin(kind, [ADD, WATCH]) & R.delay_ok & R.dl_ok & ~(bad_time | bad_delay | bad_dl))
    wf_bits[sums[R.dl[sums] != time[sums] + R.delay[sums]]] |= WF_NOT_SUM   # inside the ranges: no wrap
    via_codes = [R.label_code(v) for v in VIAS]
    wf_bits[(kind == COMPLETE) & ~np.isin(R.label, via_codes)] |= WF_VIA
    # purgatory ids must name a watched operation (a complete may precede its watch in the window)
    wpos = np.flatnonzero((kind == WATCH) & R.id_ok)
    W_ = wpos[stable_order(r[wpos], R.id[wpos])]
    w_start, _ = segments(r[W_], R.id[W_])
    wf_bits[W_[np.arange(W_.size) != w_start]] |= WF_WATCHED_TWICE
    w_first = W_[np.arange(W_.size) == w_start]
    opr = np.flatnonzero(np.isin(kind, [COMPLETE, SETC, FORCE]) & R.id_ok)
    wk, ok_ = pair_codes((r[w_first], R.id[w_first]), (r[opr], R.id[opr]))
    first_watch = lookup_unique(wk, w_first, ok_)
    at = np.where(kind[opr] == COMPLETE, np.where(c.req_ok[opr], c.req[opr], n), opr)
    wf_bits[opr[(first_watch < 0) | (first_watch > at)]] |= WF_NOT_WATCHED
    report("well-formed", np.flatnonzero(wf_bits), why=lambda p: _well_formed_why(R, p, int(wf_bits[p])))


def _well_formed_why(R: _Rows, p: int, bits: int) -> str:
    """What is wrong with row ``p`` (its ``WF_*`` bits), with the exact numbers (Python ints), the
    checker's wording where it has one (spec/checker.py)."""
    t = int(R.time[p])
    d = int(R.delay[p]) if R.delay_ok[p] else None
    dl = R.deadline(p)
    out = []
    if bits & WF_TIME:
        out.append(f"time {t} is outside the protocol's clock range [{TIME_RANGE[0]}, {TIME_RANGE[1]}] "
                   "(spec/limits.py MAX_TIME_MS)")
    if bits & WF_DELAY:
        out.append(f"delay {d} is outside the protocol's delay range [{DELAY_RANGE[0]}, {DELAY_RANGE[1]}] "
                   "(spec/limits.py MIN_DELAY_MS, MAX_DELAY_MS)")
    if bits & WF_DEADLINE:
        wrapped = " (time + delay; the trace holds it wrapped to 64 bits)" if dl != int(R.dl[p]) else ""
        out.append(f"deadline {dl}{wrapped} is outside [{DEADLINE_RANGE[0]}, {DEADLINE_RANGE[1]}], the "
                   "expirations time + delay can reach inside the protocol's ranges")
    if bits & WF_CLOCK_BACK:
        out.append(f"the clock went back from {int(R.time[p - 1])} to {t}")
    if bits & WF_NOT_SUM:
        out.append(f"deadline {dl} is not time + delay = {t + (d or 0)}")
    if bits & WF_VIA:
        out.append(f"complete has unknown via {R.labels[R.label[p]]!r} (expected one of {', '.join(VIAS)})")
    if bits & WF_WATCHED_TWICE:
        out.append(f"op {int(R.id[p])} is watched twice")
    if bits & WF_NOT_WATCHED:
        out.append(f"op {int(R.id[p])} was not watched before this row")
    return "; ".join(out)


# ---- the timer: schedules and their fires ------------------------------------------------------
@dataclass(frozen=True)
class _Schedules:
    """The timer rows (add, fire, cancel with an id) in (run, id, effective seq) order, each with
    its schedule: the task's last add at or before it, which replaced the task's entry."""

    #: each row's position in (run, seq) order
    Q: np.ndarray
    kind: np.ndarray
    time: np.ndarray
    dl: np.ndarray
    dl_ok: np.ndarray
    prof: np.ndarray
    tick: np.ndarray
    gt: np.ndarray
    #: start and exclusive end of each row's task, by index in this order
    s_start: np.ndarray
    s_end: np.ndarray
    #: a strict-gt add of delay <= 0: runs inside the add and leaves no entry
    gt_nonpos: np.ndarray
    #: the row's schedule, by index in this order (-1: none); ``sc``: 0 for none
    sched: np.ndarray
    has_sched: np.ndarray
    sc: np.ndarray
    #: a fire at its schedule's expiration, and how many of those its schedule has had up to it
    match: np.ndarray
    rank: np.ndarray
    #: the task's last cancel strictly before the row (-1: none)
    last_cancel: np.ndarray
    #: each row's request, as a position in (run, seq) order (0: none)
    rp: np.ndarray
    #: a fire inside an add of delay <= 0 of its own task
    in_add0: np.ndarray
    #: a schedule's first matching fire after a cancel of its task
    after_cancel: np.ndarray
    #: a schedule's first matching fire, not cancelled before it: the fire the timing rules judge
    good: np.ndarray


def _schedules(R: _Rows, c: _Context) -> _Schedules:
    """The schedule of every timer row (SEMANTICS.md Cancel: an add supersedes the task's entry)."""
    kind, r, rq = R.kind, R.r, c.rq
    tpos = np.flatnonzero(np.isin(kind, [ADD, FIRE, CANCEL]) & R.id_ok)
    # A fire inside an add of the same task precedes the Add event but comes after the add's
    # replacement of the task's entry (Kafka's TimerTaskEntry constructor unlinks the old entry
    # before the new one is added and, if due, run): order it right after its add, so its
    # schedule is that add.  Every such fire, not only those that look like the new entry's: a
    # fire of the old entry inside the add is exactly what fire-once must catch.
    tf = tpos[kind[tpos] == FIRE]
    in_add_f = tf[c.req_ok[tf] & (kind[rq[tf]] == ADD) & R.id_ok[rq[tf]] & (R.id[rq[tf]] == R.id[tf])]
    # positions in (run, seq) order, not seq itself: seq * 2 could wrap
    eff = R.idx * 2
    eff[in_add_f] = rq[in_add_f] * 2 + 1
    o1 = tpos[stable_order(r[tpos], eff[tpos])]          # (run, effective seq), then stably by id
    Q = o1[stable_order(r[o1], R.id[o1])]
    k_, id_, t_ = kind[Q], R.id[Q], R.time[Q]
    dl, dl_ok, dly, dly_ok = R.dl[Q], R.dl_ok[Q], R.delay[Q], R.delay_ok[Q]
    gt_ = c.gt[Q]
    s_start, s_end = segments(r[Q], id_)
    # every add replaces the task's entry (strict-gt: a delay <= 0 re-add too, since a Kafka caller
    # cancels the old task: TimerTask.delayMs is final)
    supersede = k_ == ADD
    sched = ffill(supersede, s_start)
    has_sched = sched >= 0
    sc = np.where(has_sched, sched, 0)
    fire = k_ == FIRE
    cand = fire & (~dly_ok | (dly <= 0) | (dl_ok & (t_ <= dl)))
    rp = rq[Q]
    in_add0 = (cand & c.req_ok[Q] & (kind[rp] == ADD) & R.id_ok[rp] & (R.id[rp] == id_) & R.delay_ok[rp]
               & (R.delay[rp] <= 0))
    match = fire & has_sched & dl_ok[sc] & dl_ok & (dl == dl[sc])
    cm = np.cumsum(match)
    rank = np.where(has_sched, cm - cm[sc], 0)
    last_cancel = ffill(k_ == CANCEL, s_start, inclusive=False)
    after_cancel = match & (rank == 1) & (last_cancel > sched)
    return _Schedules(Q=Q, kind=k_, time=t_, dl=dl, dl_ok=dl_ok, prof=R.prof[Q], tick=R.tick[Q], gt=gt_,
                      s_start=s_start, s_end=s_end, gt_nonpos=supersede & gt_ & dly_ok & (dly <= 0), sched=sched,
                      has_sched=has_sched, sc=sc, match=match, rank=rank, last_cancel=last_cancel, rp=rp,
                      in_add0=in_add0, after_cancel=after_cancel, good=match & (rank == 1) & ~after_cancel)


def _fire_once(S: _Schedules, report: Report) -> None:
    """fire-once, fire-unknown-task, no-fire-after-cancel (SEMANTICS.md Firing rule, Cancel)."""
    fire = S.kind == FIRE
    # a fire with no add of its task at or before it (in effective order) is its own property
    unknown = fire & (ffill(S.kind == ADD, S.s_start) < 0)
    once = fire & ~unknown & (~S.has_sched | ~S.match | (S.match & (S.rank >= 2)))
    report("fire-once", S.Q[once])
    report("fire-unknown-task", S.Q[unknown])
    report("no-fire-after-cancel", S.Q[S.after_cancel])


def _early_fire(R: _Rows, S: _Schedules, report: Report) -> None:
    """no-early-fire (SEMANTICS.md Firing rule F1, Profiles): no good fire before its profile's earliest time."""
    m, rp, s_start = S.Q.size, S.rp, S.s_start
    # strict-gt: the first fire inside an add of delay <= 0 (same task and expiration) is that add's
    # run inside add, never early
    ex_cand = S.in_add0 & S.gt & S.dl_ok & R.dl_ok[rp] & (S.dl == R.dl[rp])
    prev_same = np.r_[False, ex_cand[:-1] & (rp[:-1] == rp[1:]) & (s_start[1:] != np.arange(1, m))] if m else ex_cand
    exempt = ex_cand & ~prev_same
    report("no-early-fire", S.Q[S.good & ~exempt & _before_earliest(S.time, S.dl, S.prof, S.tick)])


def _early_by_profile(S: _Schedules) -> dict[str, int]:
    """The good fires each profile would call early (SEMANTICS.md Profiles), per profile name."""
    by_profile = {}
    for code, name in enumerate(PROFILES):
        would = S.good & _before_earliest(S.time, S.dl, np.full(S.Q.size, code), S.tick)
        if INSIDE_ADD[code]:
            would &= ~S.in_add0
        by_profile[name] = int(np.count_nonzero(would))
    return by_profile


def _late_fire(S: _Schedules, lateness_ms: int, report: Report) -> None:
    """late-fire (SEMANTICS.md Profiles, real-time mode): no good fire later than exp + ``lateness_ms``."""
    report("late-fire", S.Q[S.good & np.asarray(minus(S.time, S.dl) > lateness_ms, bool)])


def _cancel_result(R: _Rows, S: _Schedules, report: Report) -> None:
    """cancel-result (SEMANTICS.md Cancel): Cancel.pending is true iff the task had a live schedule."""
    cancel = (S.kind == CANCEL) & R.flag_ok[S.Q]
    # (strict-gt: a delay <= 0 add leaves no entry, whether or not it ran inside the add)
    live = S.has_sched & ~S.gt_nonpos[S.sc] & (S.rank == 0) & (S.last_cancel < S.sched)
    report("cancel-result", S.Q[cancel & (R.flag[S.Q] != live)])


def _lost_tasks(R: _Rows, c: _Context, S: _Schedules, report: Report) -> None:
    """no-lost-task (SEMANTICS.md Firing rule F2): every schedule due by an advance has fired by then."""
    Q = S.Q
    # the end of each schedule, then the last advance before that end
    end_row = (S.kind == CANCEL) | (S.match & (S.rank == 1))
    ends = np.flatnonzero(end_row & S.has_sched)
    first_end = np.full(Q.size, -1)
    if ends.size:
        sch, first = np.unique(S.sched[ends], return_index=True)
        first_end[sch] = ends[first]
    supersede = S.kind == ADD
    nxt_sup = bfill(supersede, S.s_end)
    adds = np.flatnonzero(supersede & S.dl_ok & ~S.gt_nonpos)  # strict-gt delay <= 0: judged below
    fe, ns = first_end[adds], nxt_sup[adds]
    A = np.where(fe >= 0, c.prev_adv[Q[np.maximum(fe, 0)]],
                 np.where(ns >= 0, c.prev_adv[Q[np.maximum(ns, 0)]], c.last_adv_of_run[Q[adds]]))
    Ac = np.maximum(A, 0)
    lost = ((A >= 0) & (R.seq[Ac] > R.seq[Q[adds]])
            & ~_before_earliest(R.time[Ac], S.dl[adds], S.prof[adds], S.tick[adds]))
    lost_pos = [Q[adds[lost]]]
    # strict-gt: an add with delay <= 0 must fire inside the add
    nonpos = np.flatnonzero(S.gt_nonpos)
    fired_in = np.zeros(R.n, bool)
    fired_in[S.rp[S.in_add0]] = True
    lost_pos.append(Q[nonpos[~fired_in[Q[nonpos]]]])
    report("no-lost-task", np.concatenate(lost_pos))


# ---- the purgatory ------------------------------------------------------------------------------
def _complete_once(R: _Rows, report: Report) -> tuple[np.ndarray, np.ndarray]:
    """complete-once (SEMANTICS.md Purgatory, exactly once); per row its op's first complete, and those."""
    kind, r = R.kind, R.r
    cpos = np.flatnonzero((kind == COMPLETE) & R.id_ok)
    C = cpos[stable_order(r[cpos], R.id[cpos])]
    c_start, _ = segments(r[C], R.id[C])
    c_first = C[np.arange(C.size) == c_start]
    report("complete-once", C[np.arange(C.size) != c_start])
    fkeys, allkeys = pair_codes((r[c_first], R.id[c_first]), (r, np.where(R.id_ok, R.id, 0)))
    first_done = lookup_unique(fkeys, c_first, allkeys)      # per row: its op's first complete
    return np.where(R.id_ok, first_done, -1), c_first


def _expire_rule(R: _Rows, c: _Context, report: Report) -> None:
    """expire-rule (SEMANTICS.md Purgatory, DelayedOperation.run): Expire right after its Complete via=expire."""
    kind, n = R.kind, R.n
    is_cexp = _completes(R, "expire")
    prev_i, next_i = np.maximum(R.idx - 1, 0), np.minimum(R.idx + 1, n - 1)
    exp_rows = np.flatnonzero(kind == EXPIRE)
    ok_prev = (~c.first_in_run[exp_rows] & is_cexp[prev_i[exp_rows]] & R.id_ok[prev_i[exp_rows]]
               & R.id_ok[exp_rows] & (R.id[prev_i[exp_rows]] == R.id[exp_rows]))
    cexp = np.flatnonzero(is_cexp)
    last_in_run = R.idx == R.run_end - 1
    ok_next = (~last_in_run[cexp] & (kind[next_i[cexp]] == EXPIRE) & R.id_ok[next_i[cexp]] & R.id_ok[cexp]
               & (R.id[next_i[cexp]] == R.id[cexp]))
    report("expire-rule", np.concatenate([exp_rows[~ok_prev], cexp[~ok_next]]))


def _early_expire(R: _Rows, c: _Context, c_first: np.ndarray, report: Report) -> None:
    """no-early-expire (SEMANTICS.md Purgatory, Firing rule): no expiry before the deadline's window."""
    kind = R.kind
    rc = c.rq[c_first]
    in_watch0 = (c.req_ok[c_first] & (kind[rc] == WATCH) & R.id_ok[rc] & (R.id[rc] == R.id[c_first])
                 & R.delay_ok[rc] & (R.delay[rc] <= 0))
    ce = _completes(R, "expire")[c_first] & R.dl_ok[c_first]
    early_exp = (ce & _before_earliest(R.time[c_first], R.dl[c_first], R.prof[c_first], R.tick[c_first])
                 & ~(c.gt[c_first] & in_watch0))
    report("no-early-expire", c_first[early_exp])


def _completed_in(R: _Rows, c: _Context, via: str) -> np.ndarray:
    """Per row: does a complete(via=``via``) of the row's own id lie in its window?"""
    cc = np.flatnonzero(_completes(R, via) & c.req_ok & R.id_ok)
    cc = cc[R.id_ok[c.req[cc]] & (R.id[c.req[cc]] == R.id[cc])]
    out = np.zeros(R.n, bool)
    out[c.req[cc]] = True
    return out


def _watch_result(R: _Rows, by_try: np.ndarray, report: Report) -> None:
    """watch-result (SEMANTICS.md Purgatory, tryCompleteElseWatch): true iff it completed the operation."""
    w = np.flatnonzero((R.kind == WATCH) & R.flag_ok)
    report("watch-result", w[R.flag[w] != by_try[w]])


def _force_result(R: _Rows, c: _Context, first_done: np.ndarray, report: Report) -> None:
    """force-result (SEMANTICS.md Purgatory, forceComplete): true iff it completed the operation."""
    kind, r = R.kind, R.r
    watched_ops = np.flatnonzero((kind == WATCH) & R.id_ok)
    f = np.flatnonzero((kind == FORCE) & R.flag_ok & R.id_ok)
    wcodes, fcodes = pair_codes((r[watched_ops], R.id[watched_ops]), (r[f], R.id[f]))
    f = f[np.isin(fcodes, wcodes)]
    mine = _completed_in(R, c, "force")[f]
    fd = first_done[f]
    was_done = (fd >= 0) & (fd < f) & ~mine
    report("force-result", f[(R.flag[f] != mine) | (R.flag[f] == was_done)])


def _check_count(R: _Rows, c: _Context, report: Report) -> None:
    """check-count (SEMANTICS.md Purgatory, checkAndComplete): it returns how many it completed."""
    ccheck = np.flatnonzero(_completes(R, "check") & c.req_ok & R.id_ok)
    counts = np.bincount(c.req[ccheck], minlength=R.n)
    chk = np.flatnonzero((R.kind == CHECK) & R.value_ok)
    report("check-count", chk[counts[chk] != R.value[chk]])


def _keys_table(R: _Rows, pos: np.ndarray, column: str, **extra: np.ndarray) -> pa.Table:
    """(r, key, pos, extra...) for the rows ``pos``; a list column (keys, ops) is exploded."""
    col = R.table.column(column).combine_chunks().take(pa.array(R.order[pos]))
    if pa.types.is_list(col.type):
        parents = pc.list_parent_indices(col).to_numpy(zero_copy_only=False)
        values = pc.list_flatten(col)
    else:
        ok = ~col.is_null().to_numpy(zero_copy_only=False)
        parents = np.flatnonzero(ok)
        values = col.filter(pa.array(ok))
    cols = {"r": R.r[pos][parents], "key": values, "pos": pos[parents]}
    cols.update({k: v[parents] for k, v in extra.items()})
    return pa.table(cols)


def _lost_wakeups(R: _Rows, by_try: np.ndarray, first_done: np.ndarray, report: Report) -> None:
    """no-lost-wakeup (SEMANTICS.md Purgatory): a check of a key completes every completable watcher."""
    kind = R.kind
    w = np.flatnonzero((kind == WATCH) & R.id_ok & ~(R.flag_ok & R.flag & by_try))
    c = np.flatnonzero(kind == CHECK)
    if w.size == 0 or c.size == 0:
        return
    W = _keys_table(R, w, "keys", op=R.id[w])
    C = _keys_table(R, c, "key").rename_columns(["r", "key", "cpos"])
    pairs = W.join(C, ["r", "key"], join_type="inner")
    wp, cp, op = (pairs.column(x).to_numpy() for x in ("pos", "cpos", "op"))
    fd = first_done[wp]
    keep = (wp < cp) & ((fd < 0) | (fd > cp))
    pairs = pairs.filter(pa.array(keep)).append_column("pid", pa.array(np.arange(int(keep.sum()))))
    if pairs.num_rows == 0:
        return
    f = np.flatnonzero(kind == CFK)
    if f.size:
        F = _keys_table(R, f, "key").rename_columns(["r", "key", "fpos"])
        j = pairs.join(F, ["r", "key"], join_type="inner")
        hit = (j.column("fpos").to_numpy() > j.column("pos").to_numpy()) & \
              (j.column("fpos").to_numpy() < j.column("cpos").to_numpy())
        dropped = np.unique(j.column("pid").to_numpy()[hit])
        pairs = pairs.filter(pa.array(~np.isin(pairs.column("pid").to_numpy(), dropped)))
    s = np.flatnonzero((kind == SETC) & R.id_ok & R.flag_ok)
    if s.size == 0 or pairs.num_rows == 0:
        return
    S = pa.table({"r": R.r[s], "op": R.id[s], "spos": s, "sflag": R.flag[s].astype(np.int64)})
    j = pairs.join(S, ["r", "op"], join_type="inner")
    sp = j.column("spos").to_numpy()
    inside = (sp > j.column("pos").to_numpy()) & (sp < j.column("cpos").to_numpy())
    j = j.filter(pa.array(inside))
    if j.num_rows == 0:
        return
    packed = j.column("spos").to_numpy() * 2 + j.column("sflag").to_numpy()
    j = j.append_column("packed", pa.array(packed))
    last = j.group_by(["pid", "cpos"]).aggregate([("packed", "max")])
    bad = last.filter(pc.equal(pc.bit_wise_and(last.column("packed_max"), 1), 1))
    report("no-lost-wakeup", bad.column("cpos").to_numpy(), count=bad.num_rows)


def _lost_operations(R: _Rows, c: _Context, first_done: np.ndarray, report: Report) -> None:
    """no-lost-operation (SEMANTICS.md Purgatory, Firing rule F2): an operation due by an advance is done."""
    kind = R.kind
    # A watch times its operation; a later resubmit that leaves it uncompleted re-times it
    # (SEMANTICS.md, "Resubmit"), so each timing row answers for its operation only until the
    # operation's next timing row (rows are in (run, seq) order; the sort is stable).
    timing = np.flatnonzero(((kind == WATCH) | (kind == K["resubmit"])) & R.id_ok)
    o = timing[stable_order(R.r[timing], R.id[timing])]
    _, seg_end = segments(R.r[o], R.id[o])
    nxt = np.arange(1, o.size + 1)
    next_timing = np.full(kind.size, -1, np.int64)
    next_timing[o] = np.where(nxt < seg_end, o[np.minimum(nxt, max(o.size - 1, 0))], -1)
    w = timing[R.delay_ok[timing]]
    fd = first_done[w]
    w = w[(fd < 0) | (fd > w)]          # still on the timer after its watch or resubmit
    if w.size == 0:
        return
    gt = INSIDE_ADD[R.prof[w]]
    nonpos = gt & (R.delay[w] <= 0)
    out = [w[nonpos]]
    fd = first_done[w]
    end = np.where(fd >= 0, fd, -1)
    nt = next_timing[w]
    end = np.where((nt >= 0) & ((end < 0) | (nt < end)), nt, end)
    f = np.flatnonzero(kind == CFK)
    if f.size:
        F = _keys_table(R, f, "ops").rename_columns(["r", "op", "fpos"])
        Wt = pa.table({"r": R.r[w], "op": R.id[w], "pos": w})
        j = Wt.join(F, ["r", "op"], join_type="inner")
        after = j.filter(pc.greater(j.column("fpos"), j.column("pos")))
        if after.num_rows:
            g = after.group_by(["pos"]).aggregate([("fpos", "min")])
            fp = lookup_unique(g.column("pos").to_numpy(), g.column("fpos_min").to_numpy(), w)
            end = np.where((fp >= 0) & ((end < 0) | (fp < end)), fp, end)
    A = np.where(end >= 0, c.prev_adv[np.maximum(end, 0)], c.last_adv_of_run[w])
    Ac = np.maximum(A, 0)
    due = ~_before_earliest(R.time[Ac], plus(R.time[w], R.delay[w]), R.prof[w], R.tick[w])
    lost = ~nonpos & (A >= 0) & (R.seq[Ac] > R.seq[w]) & due
    out.append(w[lost])
    report("no-lost-operation", np.concatenate(out))
