"""Shrink a failing schedule to a minimal one that still fails the same way.

Hypothesis-style, but over our own data (operations) so that it is deterministic and works for
any adapter, in-process or subprocess.  A candidate is kept iff running it (fresh ``reset``)
still produces a failure of the *same property*; passes, repeated until nothing changes:

1. delete chunks of operations (halving chunk sizes down to single operations: delta debugging);
2. make values simpler: delays and timeouts toward 0 (0, then halving, then minus one), advance
   targets toward the previous clock reading, watch key lists shorter;
3. rename task and operation ids to 0, 1, 2, ... in order of first use;
4. move the start time toward 0 (shifting every advance target by the same amount).

The result is 1-minimal for deletions: removing any single operation makes the failure go away.
A budget bounds the number of runs so that shrinking a pathological schedule cannot run away.
Candidates are judged by the history checker's fast path alone: Z3's confirmation of a violation
never changes which properties fail, only which events a finding names (its unsat core), so it is
asked once, about the schedule kept, instead of once per failing candidate (thousands in one
check of a timer that fails often).

A hang or a crash (property ``responds``, :func:`shrink_liveness`) is shrunk by the same passes
with another oracle: a candidate fails iff it hangs (or crashes, whichever the original did) on a
fresh adapter (:meth:`~wheelspec.conformance.adapters.subprocess_adapter.SubprocessAdapter.restart`
before every attempt: a hang may depend on what an earlier run left behind).  Every hanging attempt
costs a whole timeout, so attempts run with a shorter one (:data:`SHRINK_TIMEOUT` at most) and are
capped (:data:`LIVENESS_BUDGET` attempts, :data:`LIVENESS_HANGS` of them hanging).  While any schedule
is shrunk, a candidate that hangs or crashes instead of failing the property is simply not kept.

A failure a rerun does not show is not shrunk, and its findings say what each run did: a property
failed on the first run keeps that run's findings (judged on a complete run), noting whether the
rerun passed (a flaky implementation?) or stopped answering; a hang or crash that a rerun on a
fresh adapter does not repeat stays ``responds`` ("the timeout did not recur: first run: ...;
rerun on a fresh adapter: answered every request").
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.adapters.subprocess_adapter import LivenessError
from wheelspec.conformance.check.judge import judge_schedule
from wheelspec.spec import ops, show
from wheelspec.spec.findings import Finding

BUDGET = 3000
#: the property a hang or a crash violates (spec/properties.py)
RESPONDS = "responds"
#: the longest per-request timeout while shrinking (seconds): a hanging attempt costs this much
SHRINK_TIMEOUT = 2.0
#: at most this many attempts when shrinking a hang or crash, and this many of them hanging
LIVENESS_BUDGET = 60
LIVENESS_HANGS = 12


@contextlib.contextmanager
def _shrink_timeout(adapter: Any) -> Iterator[None]:
    """Run the block with the adapter's request timeout at most :data:`SHRINK_TIMEOUT`."""
    before = getattr(adapter, "timeout", None)
    if isinstance(before, int | float) and before > SHRINK_TIMEOUT:
        adapter.timeout = SHRINK_TIMEOUT
    try:
        yield
    finally:
        if before is not None:
            adapter.timeout = before


def liveness_finding(e: LivenessError, schedule: list[ops.Op]) -> Finding:
    """The ``responds`` finding of a run that hung or crashed at ``e.step`` (None: the reset)."""
    where = show.step(e.step, schedule[e.step]) if e.step is not None and e.step < len(schedule) else "reset"
    return Finding.at_step(RESPONDS, e.step, f"{where}: {e.problem}")


class _Oracle:
    def __init__(self, adapter: Any, caps: Capabilities, prop: str) -> None:
        self.adapter, self.caps, self.prop = adapter, caps, prop
        self.runs = 0
        self.last: list[Finding] = []
        #: the hang or crash of the latest attempt, if it had one
        self.stalled: LivenessError | None = None

    def fails(self, cfg: Config, schedule: list[ops.Op], *, final: bool = False) -> bool:
        """Whether ``schedule`` still fails ``prop``.  A candidate is judged without the Z3
        confirmation of its violations (which would only move each finding's step to its unsat
        core: the properties that fail are the same), so shrinking costs the fast path per
        attempt; ``final`` judges the schedule kept with it, outside the budget, for the report."""
        if self.runs >= BUDGET and not final:
            return False
        self.runs += 1
        self.stalled = None
        try:
            failures = judge_schedule(self.adapter, self.caps, cfg, schedule, minimise=final)
        except LivenessError as e:
            self.stalled = e
            return False  # another failure (the adapter restarts on its next request)
        same = [f for f in failures if f.prop == self.prop]
        if same:
            self.last = same + [f for f in failures if f.prop != self.prop]
            return True
        return False


class _LivenessOracle(_Oracle):
    """Fails iff the schedule hangs (or crashes, as ``reason`` says) on a freshly started adapter."""

    def __init__(self, adapter: Any, caps: Capabilities, reason: str) -> None:
        super().__init__(adapter, caps, RESPONDS)
        self.reason = reason
        self.hangs = 0

    def fails(self, cfg: Config, schedule: list[ops.Op], *, final: bool = False) -> bool:
        from wheelspec.conformance.check.runner import run_ops

        if self.runs >= LIVENESS_BUDGET or self.hangs >= LIVENESS_HANGS:
            return False
        self.runs += 1
        self.stalled = None
        self.adapter.restart()  # a failed restart is a configuration error: it propagates
        try:
            run_ops(self.adapter, cfg, schedule)
        except LivenessError as e:
            self.stalled = e
            self.hangs += e.reason == "timeout"
            if e.reason == self.reason:
                self.last = [liveness_finding(e, schedule)]
                return True
        return False


def _what_happened(e: LivenessError | None, schedule: list[ops.Op]) -> str:
    """What a run did, in a few words: answered, or where and how it stopped answering."""
    if e is None:
        return "answered every request"
    where = show.step(e.step, schedule[e.step]) if e.step is not None and e.step < len(schedule) else "the reset"
    return f"{where}: {e.problem}"


def _not_reproduced(prop: str, first: list[Finding] | None, o: _Oracle, schedule: list[ops.Op]) -> list[Finding]:
    """The findings of a schedule whose failure of ``prop`` a rerun did not show: the first run's
    (a complete run judged them), each saying what the rerun did instead."""
    rerun = ("did not fail it: flaky implementation?" if o.stalled is None
             else f"did not finish: {_what_happened(o.stalled, schedule)}")
    note = f" (not shrunk: a rerun of the schedule {rerun})"
    if not first:
        return [Finding.at_step(prop, None, f"the first run failed {prop}; not shrunk: a rerun {rerun}")]
    mine = [f for f in first if f.prop == prop] or [Finding.at_step(prop, None, f"the first run failed {prop}")]
    return [dataclasses.replace(mine[0], message=mine[0].message + note), *(f for f in first if f is not mine[0])]


def _delete_chunks(o: _Oracle, cfg: Config, s: list[ops.Op]) -> list[ops.Op]:
    chunk = max(1, len(s) // 2)
    while chunk >= 1:
        i = 0
        while i < len(s):
            cand = s[:i] + s[i + chunk:]
            if cand and o.fails(cfg, cand):
                s = cand
            else:
                i += chunk
        chunk //= 2
    return s


def _smaller_ints(v: int, floor: int = 0) -> list[int]:
    """Candidates closer to ``floor`` than ``v``, closest first."""
    d = v - floor
    step = 1 if d > 0 else -1
    out: list[int] = []
    for c in (floor, floor + int(d / 2), v - step):
        if d != 0 and abs(c - floor) < abs(d) and c not in out:
            out.append(c)
    return out


def _simplify_values(o: _Oracle, cfg: Config, s: list[ops.Op]) -> list[ops.Op]:
    for i in range(len(s)):
        progress = True
        while progress:
            progress = False
            op = s[i]
            cands: list[ops.Op] = []
            if isinstance(op, ops.AddTask):
                cands = [dataclasses.replace(op, delay=d) for d in _smaller_ints(op.delay)]
            elif isinstance(op, ops.Watch):
                cands = [dataclasses.replace(op, delay=d) for d in _smaller_ints(op.delay)]
                if len(op.keys) > 1:
                    cands += [dataclasses.replace(op, keys=op.keys[:j] + op.keys[j + 1:]) for j in range(len(op.keys))]
                if op.completable:
                    cands.append(dataclasses.replace(op, completable=False))
            elif isinstance(op, ops.Resubmit) and len(op.keys) > 1:
                cands = [dataclasses.replace(op, keys=op.keys[:j] + op.keys[j + 1:]) for j in range(len(op.keys))]
            elif isinstance(op, ops.AdvanceTo):
                prev = max([x.time for x in s[:i] if isinstance(x, ops.AdvanceTo)] + [cfg.start_ms])
                cands = [dataclasses.replace(op, time=t) for t in _smaller_ints(op.time, prev)]
            for c in cands:
                cand = s[:i] + [c] + s[i + 1:]
                if o.fails(cfg, cand):
                    s, progress = cand, True
                    break
    return s


def _renumber(o: _Oracle, cfg: Config, s: list[ops.Op]) -> list[ops.Op]:
    tasks: dict[int, int] = {}
    opids: dict[int, int] = {}
    out = []
    for op in s:
        if isinstance(op, ops.AddTask | ops.CancelTask):
            op = dataclasses.replace(op, task=tasks.setdefault(op.task, len(tasks)))
        elif isinstance(op, ops.Watch | ops.SetCompletable | ops.ForceComplete | ops.Resubmit):
            op = dataclasses.replace(op, op=opids.setdefault(op.op, len(opids)))
        out.append(op)
    return out if out != s and o.fails(cfg, out) else s


def _smaller_start(o: _Oracle, cfg: Config, s: list[ops.Op]) -> tuple[Config, list[ops.Op]]:
    """Move the start time (and every advance target) down by a multiple of ``tick * wheel**L``:
    such a shift keeps every bucket index of the levels below L, so the failure often survives.
    Largest shift first (start 0), then finer alignments."""
    if cfg.start_ms == 0:
        return cfg, s
    cands = [0]
    span = cfg.tick_ms * cfg.wheel_size
    while span < cfg.start_ms and len(cands) < 12:
        cands.append(cfg.start_ms % span)
        span *= cfg.wheel_size
    cands = sorted(set(c for c in cands if c < cfg.start_ms))
    for new in cands:
        shift = cfg.start_ms - new
        cfg2 = dataclasses.replace(cfg, start_ms=new)
        s2 = [ops.AdvanceTo(op.time - shift) if isinstance(op, ops.AdvanceTo) else op for op in s]
        if o.fails(cfg2, s2):
            return cfg2, s2
    return cfg, s


def shrink_schedule(adapter: Any, caps: Capabilities, cfg: Config, schedule: list[ops.Op],
                    prop: str, first: list[Finding] | None = None) -> tuple[Config, list[ops.Op], list[Finding]]:
    """Shrink ``schedule`` keeping a failure of property ``prop``; returns the smaller schedule
    and its failures (the ones of ``prop`` first).  ``first``: the findings of the run that found
    the failure; if a rerun does not fail ``prop`` (a flaky implementation, or a rerun that hung
    or crashed first), the schedule is kept whole with those findings, each saying what the rerun
    did instead."""
    o = _Oracle(adapter, caps, prop)
    s = list(schedule)
    if not o.fails(cfg, s):
        return cfg, s, _not_reproduced(prop, first, o, s)
    while True:
        before = (cfg, list(s))
        s = _delete_chunks(o, cfg, s)
        s = _simplify_values(o, cfg, s)
        s = _renumber(o, cfg, s)
        cfg, s = _smaller_start(o, cfg, s)
        if (cfg, s) == before or o.runs >= BUDGET:
            break
    o.fails(cfg, s, final=True)  # leave o.last describing the final schedule, confirmed by Z3
    return cfg, s, o.last


def shrink_schedule_safely(adapter: Any, caps: Capabilities, cfg: Config, schedule: list[ops.Op],
                           prop: str, first: list[Finding] | None = None
                           ) -> tuple[Config, list[ops.Op], list[Finding]]:
    """:func:`shrink_schedule` with the request timeout at most :data:`SHRINK_TIMEOUT` (a
    candidate may hang an implementation that has hangs too)."""
    with _shrink_timeout(adapter):
        return shrink_schedule(adapter, caps, cfg, schedule, prop, first)


def shrink_liveness(adapter: Any, caps: Capabilities, cfg: Config, schedule: list[ops.Op],
                    e: LivenessError) -> tuple[Config, list[ops.Op], list[Finding]]:
    """Shrink ``schedule`` (the operations up to and including the one that hung or crashed,
    ``e``) keeping a hang (or a crash, as ``e.reason`` says) on a fresh adapter per attempt;
    returns the smaller schedule and its ``responds`` finding.  An adapter that cannot restart
    (an in-process one never hangs) or a hang that does not recur keeps the schedule as it is."""
    first = [liveness_finding(e, schedule)]
    if not callable(getattr(adapter, "restart", None)):
        return cfg, schedule, first
    o = _LivenessOracle(adapter, caps, e.reason)
    with _shrink_timeout(adapter):
        if not o.fails(cfg, schedule):
            return cfg, schedule, [_did_not_recur(e, o, schedule)]
        s = list(schedule)
        while True:
            before = (cfg, list(s))
            s = _delete_chunks(o, cfg, s)
            s = _simplify_values(o, cfg, s)
            s = _renumber(o, cfg, s)
            cfg, s = _smaller_start(o, cfg, s)
            if (cfg, s) == before or o.runs >= LIVENESS_BUDGET or o.hangs >= LIVENESS_HANGS:
                break
    # Every pass keeps a candidate only when it failed, so o.last describes ``s`` already.
    return cfg, s, o.last


def _did_not_recur(e: LivenessError, o: _LivenessOracle, schedule: list[ops.Op]) -> Finding:
    """The ``responds`` finding of a hang or crash (``e``) that a rerun on a fresh adapter did not
    repeat: a request went unanswered, so the property fails, and the finding says what each run
    did (a timeout under load that passes on the rerun reads as what it is, not as a flaky
    verdict of another property)."""
    what = "timeout" if e.reason == "timeout" else "crash"
    limit = getattr(o.adapter, "timeout", None)
    per = f" ({limit:g} s per request)" if isinstance(limit, int | float) else ""
    rerun = "not run (the shrinking budget was spent)" if o.runs == 0 else _what_happened(o.stalled, schedule)
    msg = (f"the {what} did not recur: first run: {_what_happened(e, schedule)}; "
           f"rerun on a fresh adapter{per}: {rerun} (not shrunk)")
    return Finding.at_step(RESPONDS, e.step, msg)
