"""The Z3 layer of the history checker: confirm a violation and explain it minimally.

For a violation the fast path (:mod:`.checker`) reports, this module takes a *window* of events
(the violation's events plus every event of the same task or operation between them), asserts
each event's fields as facts under one label per event (``e17: kind@17 = fire, now@17 = 1009,
exp@17 = 1015, ...``), and asserts the property as a constraint over those symbolic fields.
Unsatisfiable means the events really violate the property; the unsat core, minimised, is the
smallest set of events that does, and it replaces the violation's ``indices``.

The property encodings (each mirrors the fast path's predicate):

* ``no-early-fire`` / ``late-fire``: every fire in the window has ``now >= earliest(exp)`` (kafka:
  ``exp = q*tick + r, 0 <= r < tick``, earliest ``q*tick``; strict: exp; strict-gt: exp + 1 unless
  an add of the same task and expiration with delay <= 0 follows it in the window), resp.
  ``now - exp <= lateness``;
* ``fire-once`` / ``fire-unknown-task`` / ``no-fire-after-cancel``: for each fire, the latest
  event of its task before it among {schedule-making add, cancel, fire} is an add with the fire's
  expiration (a cancel, an earlier fire of that add, or a re-add in between breaks it);
* ``no-lost-task``: an add whose window must have started by the advance is ended (fired,
  cancelled, re-added) by some event of its task before that advance;
* ``granularity``: both rules above with the window ``Profile.fire_window`` gives a declared
  granularity: fires at ``now >= earliest(exp) - earliness`` (if an earliness is declared), and
  an add ended before any advance to ``max(earliest(exp), add's now) + lateness`` (if a lateness
  is declared);
* ``complete-once``: no two completes of one op; ``expire-rule``: an expire follows a complete of
  the same op via expire, and such a complete is followed by its expire; no timeout completes an
  op a cancelForKey took off the timer, unless a resubmit re-timed it since;
* ``no-early-expire`` / ``no-lost-operation``: as for fires, with deadline = now + delay of the
  latest watch or resubmit of the op (the timeout is the watch's; a resubmit re-times the op);
  a lost operation is one with no complete, cancelForKey or resubmit of it before the advance;
* ``check-count`` / ``watch-result`` / ``force-result``: the result equals the count (existence)
  of completes via check (try / force of that op) in the window;
* ``well-formed``: the clock does not go back, ``exp = now + delay``, a Complete / ForceComplete /
  SetCompletable names an op watched before it (a Complete inside the watch's own window counts),
  no op is watched twice, ``via`` is known;
* ``executor-order``: no ``Purge`` and ``Complete(via=expire)`` of one advance window (only caused
  events between them) stand in an order the declared executor order forbids;
* the six *result* properties (``cancel-result``, ``size``, ``num-delayed``, ``complete-context``,
  ``no-lost-wakeup``, ``cancel-for-key-result``) in :mod:`.checker_z3_results`: the state a result
  is judged against (live schedules, operations on the timer, watch lists) is re-derived from the
  window's events, and a count is a sum of labelled 0/1 terms, so the core names the events that
  make the count wrong.

Every property of :data:`.checker.PROPERTIES` is encoded (:data:`ENCODED`).  A window larger than
:data:`MINIMIZE_LIMIT` events gets Z3's first core, not a minimised one, and the note says so.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import z3

from . import checker_z3_results as results
from . import events as ev
from .profiles import Profile, purge_allowed_after
from .z3_window import KINDS, VIA, Window, makes_schedule

#: every property of :data:`.checker.PROPERTIES`; the last six are in :mod:`.checker_z3_results`
ENCODED = ("well-formed", "no-early-fire", "late-fire", "granularity", "fire-once", "fire-unknown-task",
           "no-fire-after-cancel", "no-lost-task",
           "complete-once", "expire-rule", "no-early-expire", "no-lost-operation", "check-count",
           "watch-result", "force-result",
           "cancel-result", "size", "complete-context", "no-lost-wakeup", "cancel-for-key-result", "num-delayed",
           "executor-order", "try-complete-calls")


def _earliest(p: Profile, x: z3.ArithRef, tag: str, side: list[z3.BoolRef]) -> z3.ArithRef:
    if p.uses_tick:
        q, r = z3.Int(f"q_{tag}"), z3.Int(f"r_{tag}")
        side += [x == q * p.tick + r, 0 <= r, r < p.tick]
        return q * p.tick
    return x + 1 if p.behaviour.needs_strictly_after else x


def _fire_rule(w: Window, p: Profile, side: list[z3.BoolRef]) -> z3.BoolRef:
    """no-early-fire (and late-fire): every fire of the window is allowed by ``p``."""
    out = []
    for j in w.idx:
        lo = _earliest(p, w.f("exp", j), f"f{j}", side)
        if p.granularity.earliness_ms:  # a declared earliness widens the window (Profile.fire_window)
            lo = lo - p.granularity.earliness_ms
        ok = w.f("now", j) >= lo
        if p.lateness_ms is not None:
            ok = z3.And(ok, w.f("now", j) - w.f("exp", j) <= p.lateness_ms)
        if p.fires_inside_add:
            ok = z3.Or(ok, _in_add(w, j))
        out.append(z3.Implies(w.kind(j, ev.Fire), ok))
    return z3.And(out)


def _in_add(w: Window, j: int, nonpositive: bool = True) -> z3.BoolRef:
    """Fire ``j`` happened inside the add of the same task and expiration whose result closes its
    window (``nonpositive``: and that add's delay is <= 0, strict-gt's synchronous run)."""
    a = w.closing(j)
    if a not in w.labels:
        return z3.BoolVal(False)
    cond = [w.kind(a, ev.Add), w.f("id", a) == w.f("id", j), w.f("exp", a) == w.f("exp", j)]
    if nonpositive:
        cond.append(w.f("delay", a) <= 0)
    return z3.And(cond)


def _match_rule(w: Window, p: Profile) -> z3.BoolRef:
    """fire-once / no-fire-after-cancel: the latest add/cancel/fire of the fired task before each
    fire is a schedule-making add with that fire's expiration."""

    def touches(a: int, j: int) -> z3.BoolRef:
        """Event ``a`` is an add, a cancel or an out-of-add fire of the task fired at ``j`` (every add
        replaces the task's entry; under strict-gt one with delay <= 0 leaves none behind)."""
        return z3.And(w.f("id", a) == w.f("id", j),
                      z3.Or(w.kind(a, ev.Add), w.kind(a, ev.Cancel), z3.And(w.kind(a, ev.Fire), z3.Not(_in_add(w, a)))))

    def ran_inside(a: int, before: int) -> z3.BoolRef:
        """Some fire earlier than ``before`` ran inside add ``a`` (consuming its schedule)."""
        runs = [z3.And(w.kind(f, ev.Fire), w.f("id", f) == w.f("id", a), w.f("exp", f) == w.f("exp", a))
                for f in w.idx if f < before and w.closing(f) == a]
        return z3.Or(runs) if runs else z3.BoolVal(False)

    out = []
    for j in w.idx:
        same = [a for a in w.idx if a < j]
        cases = []
        x = w.closing(j)
        # a fire inside an add of its own task comes after that add replaced the task's entry
        # (Kafka's TimerTaskEntry removes the old entry first): the add counts as the latest touch
        replaced = [z3.And(w.f("id", x) == w.f("id", j), w.kind(x, ev.Add))] if x in w.labels and x != j else []
        for a in same:
            later_quiet = z3.And([z3.Not(touches(b, j)) for b in same if b > a] + [z3.Not(r) for r in replaced]
                                 or [z3.BoolVal(True)])
            cases.append(z3.And(touches(a, j), later_quiet, makes_schedule(w, p, a), w.f("exp", a) == w.f("exp", j),
                                z3.Not(ran_inside(a, a))))
        allowed = z3.Or(cases) if cases else z3.BoolVal(False)
        # a fire inside the add that made the schedule (it precedes that add's result event), once
        a = w.closing(j)
        inside = _in_add(w, j, nonpositive=p.fires_inside_add)
        if a in w.labels:
            inside = z3.And(inside, z3.Not(ran_inside(a, j)))
        allowed = z3.Or(allowed, inside)
        out.append(z3.Implies(w.kind(j, ev.Fire), allowed))
    return z3.And(out)


def _lost_rule(w: Window, p: Profile, side: list[z3.BoolRef]) -> z3.BoolRef:
    """no-lost-task: each schedule is ended before any advance by which it must have fired."""
    out = []
    for a in w.idx:
        for v in w.idx:
            if v <= a:
                continue
            # ended by its fire, a cancel, or any re-add (under strict-gt a delay <= 0 re-add runs a
            # new task inside add: a Kafka caller cancels the old one, TimerTask.delayMs is final)
            ended = [z3.And(w.f("id", b) == w.f("id", a),
                            z3.Or(z3.And(w.kind(b, ev.Fire), w.f("exp", b) == w.f("exp", a),
                                         z3.Not(_in_add(w, b)) if p.fires_inside_add else z3.BoolVal(True)),
                                  w.kind(b, ev.Cancel), w.kind(b, ev.Add)))
                     for b in w.idx if a < b < v]
            due = _due(w, p, a, f"l{a}_{v}", side) <= w.f("now", v)
            out.append(z3.Implies(z3.And(makes_schedule(w, p, a), w.kind(v, ev.Advance), due),
                                  z3.Or(ended) if ended else z3.BoolVal(False)))
        if p.fires_inside_add:  # strict-gt: delay <= 0 runs inside the add, just before it
            ran = [z3.And(w.kind(f, ev.Fire), w.f("id", f) == w.f("id", a), w.f("exp", f) == w.f("exp", a))
                   for f in w.idx if f < a]
            out.append(z3.Implies(z3.And(w.kind(a, ev.Add), w.f("delay", a) <= 0),
                                  z3.Or(ran) if ran else z3.BoolVal(False)))
    return z3.And(out) if out else z3.BoolVal(True)


def _due(w: Window, p: Profile, a: int, tag: str, side: list[z3.BoolRef]) -> z3.ArithRef:
    """The end of add ``a``'s window (``Profile.fire_window``'s ``hi``): its earliest time, or with
    a declared lateness the later of that and the add's clock reading, plus the lateness."""
    e = _earliest(p, w.f("exp", a), tag, side)
    late = p.granularity.lateness_ms
    return z3.If(e >= w.f("now", a), e, w.f("now", a)) + late if late else e


def _granularity(w: Window, p: Profile, side: list[z3.BoolRef]) -> z3.BoolRef:
    """granularity: the declared window's lower end (an earliness) and upper end (a lateness)."""
    rules = ([_fire_rule(w, p, side)] if p.granularity.earliness_ms else []) + (
        [_lost_rule(w, p, side)] if p.granularity.lateness_ms else [])
    return z3.And(rules) if rules else z3.BoolVal(True)


def _complete_once(w: Window) -> z3.BoolRef:
    pairs = [z3.Not(z3.And(w.kind(a, ev.Complete), w.kind(b, ev.Complete), w.f("id", a) == w.f("id", b)))
             for a in w.idx for b in w.idx if a < b]
    return z3.And(pairs) if pairs else z3.BoolVal(True)


def _expire_rule(w: Window) -> z3.BoolRef:
    out = []
    for i in w.idx:
        if i - 1 in w.labels:
            out.append(z3.Implies(w.kind(i, ev.Expire), z3.And(w.kind(i - 1, ev.Complete),
                                                              w.f("id", i - 1) == w.f("id", i),
                                                              w.f("via", i - 1) == VIA["expire"])))
        elif i - 1 < 0:
            out.append(z3.Not(w.kind(i, ev.Expire)))
        nxt = i + 1
        completes_by_timer = z3.And(w.kind(i, ev.Complete), w.f("via", i) == VIA["expire"])
        for k in w.idx:
            if k < i:  # a timeout never completes an operation whose timer entry was cancelled
                # (unless a resubmit re-timed it since)
                out.append(z3.Not(z3.And(completes_by_timer, w.cancels(k, i), z3.Not(_retimed(w, k, i)))))
        if nxt in w.labels:
            out.append(z3.Implies(completes_by_timer, z3.And(w.kind(nxt, ev.Expire), w.f("id", nxt) == w.f("id", i))))
        elif nxt >= len(w.events):
            out.append(z3.Not(completes_by_timer))
    return z3.And(out) if out else z3.BoolVal(True)


def _submits(w: Window, t: int, a: int) -> z3.BoolRef:
    """Event ``t`` is a watch or resubmit of the operation of event ``a``."""
    return z3.And(z3.Or(w.kind(t, ev.TryCompleteElseWatch), w.kind(t, ev.Resubmit)), w.f("id", t) == w.f("id", a))


def _retimed(w: Window, t: int, c: int) -> z3.BoolRef:
    """A resubmit of ``c``'s operation after ``t`` and before ``c`` (or holding ``c`` in its own
    window) re-timed it: ``t``'s timer entry is not the one that expired at ``c``."""
    return z3.Or([z3.And(w.kind(r, ev.Resubmit), w.f("id", r) == w.f("id", c)) for r in w.idx
                  if t < r != c and (r < c or w.closing(c) == r)] or [z3.BoolVal(False)])


def _timings(w: Window) -> list[tuple[int, int]]:
    """(watch ``a``, ``t``) pairs: ``t`` is ``a`` itself or a later resubmit (each times the op
    with ``a``'s timeout: Kafka's ``delayMs`` is final)."""
    watches = [a for a in w.idx if isinstance(w.events[a], ev.TryCompleteElseWatch)]
    return [(a, t) for a in watches for t in w.idx
            if t == a or (t > a and isinstance(w.events[t], ev.Resubmit) and w.events[t].op == w.events[a].op)]


def _expire_time(w: Window, p: Profile, side: list[z3.BoolRef]) -> z3.BoolRef:
    """no-early-expire: an expiry keeps the deadline of the latest watch or resubmit of its op
    before it (``now + delay`` of the watch)."""
    out = []
    for a, t in _timings(w):
        for c in w.idx:
            in_watch = c < t and w.closing(c) == t  # the timeout ran inside the call (it precedes it)
            if c == t or (c < t and not in_watch):
                continue
            deadline = w.f("now", t) + w.f("delay", a)
            ok = w.f("now", c) >= _earliest(p, deadline, f"x{t}_{c}", side)
            if p.fires_inside_add and in_watch:  # strict-gt: delay <= 0 expires inside the watch
                ok = z3.Or(ok, w.f("delay", a) <= 0)
            timing = w.kind(a, ev.TryCompleteElseWatch) if t == a else z3.And(w.kind(a, ev.TryCompleteElseWatch),
                                                                              _submits(w, t, a))
            out.append(z3.Implies(z3.And(timing, w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a),
                                         w.f("via", c) == VIA["expire"], z3.Not(_retimed(w, t, c))), ok))
    return z3.And(out) if out else z3.BoolVal(True)


def _lost_op(w: Window, p: Profile, side: list[z3.BoolRef]) -> z3.BoolRef:
    """no-lost-operation: each timer entry of an op (made by its watch or a resubmit, with the
    watch's timeout) is ended before any advance by which it must have expired: by a completion,
    a cancelForKey naming the op, or a resubmit (whose new entry replaces it)."""
    out = []
    for a, t in _timings(w):
        # the call put its op on the timer: no Complete of it inside the call (whatever the call's
        # result says; watch-result judges that), nor, for a resubmit, before it
        inside = [z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a)) for c in w.idx
                  if c < t and (w.closing(c) == t or t != a)]
        timing = w.kind(a, ev.TryCompleteElseWatch) if t == a else z3.And(w.kind(a, ev.TryCompleteElseWatch),
                                                                          _submits(w, t, a))
        on_timer = z3.And(timing, z3.Not(z3.Or(inside)) if inside else z3.BoolVal(True))
        for v in w.idx:
            if v <= t:
                continue
            ended = [z3.And(w.kind(b, ev.Complete), w.f("id", b) == w.f("id", a)) for b in w.idx if t < b < v]
            ended += [w.cancels(b, a) for b in w.idx if t < b < v]
            ended += [z3.And(w.kind(b, ev.Resubmit), w.f("id", b) == w.f("id", a)) for b in w.idx if t < b < v]
            due = _earliest(p, w.f("now", t) + w.f("delay", a), f"o{t}_{v}", side) <= w.f("now", v)
            out.append(z3.Implies(z3.And(on_timer, w.kind(v, ev.Advance), due),
                                  z3.Or(ended) if ended else z3.BoolVal(False)))
        if p.fires_inside_add:  # strict-gt: a timeout <= 0 expires inside the call
            ran = [z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a)) for c in w.idx
                   if c < t and w.closing(c) == t]
            out.append(z3.Implies(z3.And(on_timer, w.f("delay", a) <= 0), z3.Or(ran) if ran else z3.BoolVal(False)))
    return z3.And(out) if out else z3.BoolVal(True)


def _count_rule(w: Window, result_cls: type, via: str, same_op: bool, since: int = 0) -> z3.BoolRef:
    """The result of each request counts (or says whether there is) a completion via ``via`` among
    the window's events from ``since`` on, before it."""
    out = []
    for r in w.idx:
        before = [c for c in w.idx if since <= c < r]
        hits = [z3.If(z3.And(w.kind(c, ev.Complete), w.f("via", c) == VIA[via],
                             *( [w.f("id", c) == w.f("id", r)] if same_op else [])), 1, 0) for c in before]
        total = z3.Sum(hits) if hits else z3.IntVal(0)
        if result_cls is ev.CheckAndComplete:
            ok = w.f("value", r) == total
        else:
            ok = (w.f("value", r) == 1) == (total >= 1)
        out.append(z3.Implies(w.kind(r, result_cls), ok))
    return z3.And(out) if out else z3.BoolVal(True)


def _well_formed(w: Window) -> z3.BoolRef:
    out = [w.f("now", a) <= w.f("now", b) for a in w.idx for b in w.idx if a < b]
    out += [z3.Implies(w.kind(i, ev.Add), w.f("exp", i) == w.f("now", i) + w.f("delay", i)) for i in w.idx]
    watches = [a for a in w.idx if isinstance(w.events[a], ev.TryCompleteElseWatch)]
    for i in w.idx:
        # a Complete / ForceComplete / SetCompletable names an operation watched before it (a
        # Complete inside the watch's own window counts: the watch registers the op first)
        if isinstance(w.events[i], (ev.Complete, ev.ForceComplete, ev.SetCompletable, ev.Resubmit)):
            seen = [z3.And(w.kind(a, ev.TryCompleteElseWatch), w.f("id", a) == w.f("id", i)) for a in watches
                    if a < i or (a == w.closing(i) and a != i)]
            names_op = z3.Or(w.kind(i, ev.Complete), w.kind(i, ev.ForceComplete), w.kind(i, ev.SetCompletable),
                             w.kind(i, ev.Resubmit))
            out.append(z3.Implies(names_op, z3.Or(seen) if seen else z3.BoolVal(False)))
        out.append(z3.Implies(w.kind(i, ev.Complete), z3.And(w.f("via", i) >= 0, w.f("via", i) <= 3)))
    out += [z3.Not(z3.And(w.kind(a, ev.TryCompleteElseWatch), w.kind(b, ev.TryCompleteElseWatch),
                          w.f("id", a) == w.f("id", b))) for a in watches for b in watches if a < b]
    return z3.And(out) if out else z3.BoolVal(True)


_SUBMITS = (ev.TryCompleteElseWatch, ev.Resubmit)


def _tries_encode(events: list[Any], indices: tuple[int, ...]) -> tuple[Window, z3.BoolRef, list[z3.BoolRef]]:
    """try-complete-calls over the request ``r`` whose window holds the violation: its caused
    events and, for a check, the watches / resubmits naming its key, the completions of their
    operations and the key's cancelForKeys before it (SEMANTICS.md, "tryComplete calls")."""
    r = max(indices)
    while r < len(events) - 1 and isinstance(events[r], ev.CAUSED):
        r += 1
    lo = r
    while lo > 0 and isinstance(events[lo - 1], ev.CAUSED):
        lo -= 1
    idx = set(range(lo, r + 1)) | set(indices)
    rr = events[r]
    subs: list[int] = []
    if isinstance(rr, ev.CheckAndComplete):
        subs = [a for a in range(lo) if isinstance(events[a], _SUBMITS) and rr.key in events[a].keys]
        ops = {events[a].op for a in subs}
        ops |= {events[j].op for j in range(lo, r) if isinstance(events[j], ev.TryComplete)}
        idx |= set(subs)
        idx |= {k for k in range(lo) if isinstance(events[k], ev.Complete) and events[k].op in ops}
        idx |= {b for b in range(lo) if isinstance(events[b], ev.CancelForKey) and events[b].key == rr.key}
    w = Window(events, sorted(idx))
    win = [j for j in w.idx if lo <= j < r]
    out: list[z3.BoolRef] = []

    def tc(j: int) -> z3.BoolRef:
        return w.kind(j, ev.TryComplete)

    def wins(j: int) -> z3.BoolRef:  # a Complete via try or check
        return z3.And(w.kind(j, ev.Complete), z3.Or(w.f("via", j) == VIA["try"], w.f("via", j) == VIA["check"]))

    for j in win:  # T2: true iff it completed the op right before; such a Complete is followed by it
        prev = (z3.And(wins(j - 1), w.f("id", j - 1) == w.f("id", j)) if j - 1 in w.labels and j > lo
                else z3.BoolVal(False))
        out.append(z3.Implies(tc(j), (w.f("value", j) == 1) == prev))
        nxt = (z3.And(tc(j + 1), w.f("id", j + 1) == w.f("id", j), w.f("value", j + 1) == 1)
               if j + 1 in w.labels and j + 1 < r else z3.BoolVal(False))
        out.append(z3.Implies(wins(j), nxt))
    submit = z3.Or(w.kind(r, ev.TryCompleteElseWatch), w.kind(r, ev.Resubmit))
    check = w.kind(r, ev.CheckAndComplete)
    none = z3.And([z3.Not(tc(j)) for j in win] or [z3.BoolVal(True)])
    out.append(z3.Implies(z3.And(z3.Not(submit), z3.Not(check)), none))
    # T3: the op's own calls: one, and a second iff the first returned false; no other op's
    mine = [z3.And(tc(j), w.f("id", j) == w.f("id", r)) for j in win]
    n_mine = z3.Sum([z3.If(m, 1, 0) for m in mine]) if mine else z3.IntVal(0)
    first_false = z3.Or([z3.And(mine[k], *[z3.Not(mine[q]) for q in range(k)], w.f("value", win[k]) == 0)
                         for k in range(len(win))] or [z3.BoolVal(False)])
    others = z3.And([z3.Implies(tc(j), w.f("id", j) == w.f("id", r)) for j in win] or [z3.BoolVal(True)])
    out.append(z3.Implies(submit, z3.And(others, n_mine >= 1, n_mine <= 2, (n_mine == 2) == first_false)))
    # T4: per operation, once per listed uncompleted occurrence until a call completes it
    if isinstance(rr, ev.CheckAndComplete):
        reps: dict[int, int] = {}
        for j in [*win, *subs]:
            if isinstance(events[j], (ev.TryComplete, *_SUBMITS)):
                reps.setdefault(events[j].op, j)
        for x in reps.values():
            same = w.f("id", x)
            calls = [z3.And(tc(j), w.f("id", j) == same) for j in win]
            n_calls = z3.Sum([z3.If(c, 1, 0) for c in calls]) if calls else z3.IntVal(0)
            done = z3.Or([z3.And(w.kind(k, ev.Complete), w.f("id", k) == same) for k in w.idx if k < lo]
                         or [z3.BoolVal(False)])
            terms = []
            for a in subs:
                kept = [z3.Not(z3.And(w.kind(k, ev.Complete), w.f("id", k) == same)) for k in w.idx if k < a]
                alive = [z3.Not(z3.And(w.kind(b, ev.CancelForKey), w.f("key", b) == w.f("key", r)))
                         for b in w.idx if a < b < lo]
                mult = z3.Sum([z3.If(w.f(f"wkey{m}", a) == w.f("key", r), 1, 0) for m in range(len(events[a].keys))])
                terms.append(z3.If(z3.And(z3.Or(w.kind(a, ev.TryCompleteElseWatch), w.kind(a, ev.Resubmit)),
                                          w.f("id", a) == same, *kept, *alive), mult, 0))
            n_listed = z3.Sum(terms) if terms else z3.IntVal(0)
            won = z3.Or([z3.And(c, w.f("value", j) == 1) for c, j in zip(calls, win)] or [z3.BoolVal(False)])
            after = [z3.Not(z3.And(calls[k], w.f("value", win[k]) == 1, calls[q]))
                     for k in range(len(win)) for q in range(k + 1, len(win))]
            rule = z3.And(z3.Implies(done, n_calls == 0),
                          z3.Implies(z3.Not(done), z3.And(n_calls <= n_listed, z3.Or(n_calls == n_listed, won))),
                          *after)
            out.append(z3.Implies(check, rule))
    return w, z3.And(out) if out else z3.BoolVal(True), []


def _window(events: list[Any], indices: tuple[int, ...], key: Callable[[Any], Any] | None) -> list[int]:
    """The violation's events plus, between the first and the last, every event ``key`` selects."""
    if not indices:
        return []
    lo, hi = min(indices), max(indices)
    out = set(indices)
    if key is not None:
        for i in range(lo, hi + 1):
            if key(events[i]):
                out.add(i)
    return sorted(out)


def _entity(e: Any) -> tuple[str, int] | None:
    if isinstance(e, (ev.Add, ev.Fire, ev.Cancel)):
        return ("task", e.task)
    if isinstance(e, (ev.Complete, ev.Expire, ev.TryCompleteElseWatch, ev.ForceComplete, ev.Resubmit, ev.TryComplete)):
        return ("op", e.op)
    return None


def encode(prop: str, events: list[Any], indices: tuple[int, ...], p: Profile, pp: Profile
           ) -> tuple[Window, z3.BoolRef, list[z3.BoolRef]] | None:
    """(window, property constraint, side conditions) for one violation, or None if not encoded."""
    if prop not in ENCODED:
        return None
    if prop in results.RESULTS:
        return results.encode(prop, events, indices, p, pp)
    if prop == "try-complete-calls":
        return _tries_encode(events, indices)
    ents = {x for x in (_entity(events[i]) for i in indices if 0 <= i < len(events)) if x is not None}
    side: list[z3.BoolRef] = []
    if prop in ("check-count", "watch-result", "force-result"):
        lo = min(indices)
        # the request's window: the caused events since the previous request result
        while lo > 0 and isinstance(events[lo - 1], ev.CAUSED):
            lo -= 1
        idx = list(range(lo, max(indices) + 1))
        if prop == "force-result":
            # ... and every earlier completion of the op: forceComplete wins iff nobody did before
            op = events[max(indices)].op
            earlier = [k for k in range(lo) if isinstance(events[k], ev.Complete) and events[k].op == op]
            w = Window(events, earlier + idx)
            r = max(indices)
            before = [z3.And(w.kind(k, ev.Complete), w.f("id", k) == w.f("id", r)) for k in earlier]
            won = z3.Not(z3.Or(before)) if before else z3.BoolVal(True)
            rule = z3.And(_count_rule(w, ev.ForceComplete, "force", True, since=lo),
                          z3.Implies(w.kind(r, ev.ForceComplete), (w.f("value", r) == 1) == won))
            return w, rule, side
        w = Window(events, idx)
        watch_cls = ev.Resubmit if isinstance(events[max(indices)], ev.Resubmit) else ev.TryCompleteElseWatch
        cls = {"check-count": ev.CheckAndComplete, "watch-result": watch_cls,
               "force-result": ev.ForceComplete}[prop]
        via = {"check-count": "check", "watch-result": "try", "force-result": "force"}[prop]
        # only the request's own window counts: a resubmit's violation also names the op's
        # earlier completion, which lies before it
        since = max(indices)
        while since > 0 and isinstance(events[since - 1], ev.CAUSED):
            since -= 1
        return w, _count_rule(w, cls, via, prop != "check-count", since=since), side
    if prop == "executor-order":  # one advance's caused events, all of them between the two named
        w = Window(events, list(range(min(indices), max(indices) + 1)))
        return w, _executor_order(w, pp), side
    key = (lambda e: _entity(e) in ents) if ents else None
    if prop in ("no-early-expire", "no-lost-operation"):
        # a resubmit's deadline takes its op's timeout from the watch: the window starts there
        named_ops = {i for kind, i in ents if kind == "op"}
        indices = tuple(indices) + tuple(a for a in range(max(indices) + 1)
                                         if isinstance(events[a], ev.TryCompleteElseWatch)
                                         and events[a].op in named_ops)
    idx = _window(events, indices, key)
    if prop in ("no-lost-operation", "expire-rule"):
        ops = {i for kind, i in ents if kind == "op"}
        for i in range(min(indices), max(indices) + 1):
            e = events[i]
            if isinstance(e, ev.CancelForKey) and ops & set(e.ops):
                idx.append(i)
    if prop == "expire-rule":  # the neighbours say whether Complete and Expire are adjacent
        idx += [j for i in indices for j in (i - 1, i + 1) if 0 <= j < len(events)]
    if (prop == "no-lost-task" and p.fires_inside_add) or prop == "no-lost-operation":
        lo = min(indices)  # the request's caused events: where an in-add fire would be
        while lo > 0 and isinstance(events[lo - 1], ev.CAUSED):
            lo -= 1
            idx.append(lo)
    if prop == "well-formed":  # the watches of the operations the window's events name
        named = {events[i].op for i in idx
                 if isinstance(events[i], (ev.Complete, ev.ForceComplete, ev.SetCompletable, ev.Resubmit))}
        last = max(idx)
        while last + 1 < len(events) and isinstance(events[last], ev.CAUSED):
            last += 1
        idx += [a for a in range(last + 1) if isinstance(events[a], ev.TryCompleteElseWatch) and events[a].op in named]
    idx = sorted(set(idx))
    w = Window(events, idx)
    if prop == "well-formed":
        return w, _well_formed(w), side
    if prop in ("no-early-fire", "late-fire"):
        return w, _fire_rule(w, p, side), side
    if prop in ("fire-once", "fire-unknown-task", "no-fire-after-cancel"):
        return w, _match_rule(w, p), side
    if prop == "no-lost-task":
        return w, _lost_rule(w, p, side), side
    if prop == "granularity":
        return w, _granularity(w, p, side), side
    if prop == "complete-once":
        return w, _complete_once(w), side
    if prop == "expire-rule":
        return w, _expire_rule(w), side
    if prop == "no-early-expire":
        return w, _expire_time(w, pp, side), side
    if prop == "no-lost-operation":
        return w, _lost_op(w, pp, side), side
    return None  # pragma: no cover


def _executor_order(w: Window, pp: Profile) -> z3.BoolRef:
    """executor-order: no ``Purge`` and ``Complete(via=expire)`` of one advance window (only caused
    events between them) stand in an order the declared executor order forbids."""
    caused = [KINDS[c] for c in ev.CAUSED if c in KINDS]

    def expiry(k: int) -> z3.BoolRef:
        return z3.And(w.kind(k, ev.Complete), w.f("via", k) == VIA["expire"])

    out = []
    for a in w.idx:
        for b in w.idx:
            if a >= b:
                continue
            one_window = z3.And([z3.Or([w.f("kind", k) == c for c in caused]) for k in w.idx if a <= k <= b])
            if not purge_allowed_after(pp.executor_order, 0, 1):  # a purge may not precede an expiry
                out.append(z3.Not(z3.And(w.kind(a, ev.Purge), expiry(b), one_window)))
            if not purge_allowed_after(pp.executor_order, 1, 0):  # an expiry may not precede a purge
                out.append(z3.Not(z3.And(expiry(a), w.kind(b, ev.Purge), one_window)))
    return z3.And(out) if out else z3.BoolVal(True)


#: windows with more events than this get Z3's first unsat core, not a minimised one: minimising
#: a core of a few hundred labelled events takes Z3 tens of seconds (a ``size`` window is every
#: timer event before the observe; a count that is too high is explained by all of them)
MINIMIZE_LIMIT = 150


def explain(prop: str, events: list[Any], indices: tuple[int, ...], p: Profile, pp: Profile,
            timeout_ms: int = 10_000) -> tuple[str, tuple[int, ...]]:
    """("confirmed" | "confirmed-unminimised" | "refuted" | "unknown" | "not-encoded", indices):
    the unsat core (minimal unless the window is larger than :data:`MINIMIZE_LIMIT`)."""
    enc = encode(prop, events, indices, p, pp)
    if enc is None:
        return "not-encoded", indices
    w, rule, side = enc
    minimize = len(w.labels) <= MINIMIZE_LIMIT
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.set("core.minimize", minimize)
    s.add(*w.facts, *side, rule)
    res = s.check(*w.labels.values())
    if res == z3.unsat:
        core = {str(x) for x in s.unsat_core()}
        return ("confirmed" if minimize else "confirmed-unminimised"), tuple(i for i in w.idx if f"e{i}" in core)
    return ("refuted" if res == z3.sat else "unknown"), indices


#: at most this many violations of one history are sent to Z3 (a badly broken history can have
#: thousands; the first ones explain it)
MAX_CONFIRM = 25


def confirm(verdict: Any, events: list[Any], p: Profile, pp: Profile, full: bool = False) -> None:
    """Confirm each violation with Z3 and shrink its indices to the unsat core; with ``full``,
    also re-judge every fire, completion and check/watch/force result of a history with Z3."""
    _confirm_each(verdict, events, p, pp)
    if full:
        _rejudge(verdict, events, p, pp)


def violated(events: list[Any], findings: list[Any], p: Profile, pp: Profile) -> set[str]:
    """Z3's own verdict on a history whose fast-path violations are ``findings``: the properties
    of the findings Z3 confirms (the first :data:`MAX_CONFIRM`), and of every property instance it
    finds violated re-judging the rest of the history (:func:`confirm` with ``full``).  The Z3
    form of the history checker as ``wheelspec.spec.properties.JUDGING_FORMS`` names it."""
    verdict = types.SimpleNamespace(ok=not findings, violations=list(findings), z3_notes=[])
    held = _confirm_each(verdict, events, p, pp)
    n = len(verdict.violations)
    _rejudge(verdict, events, p, pp)
    return {f.prop for f, ok in zip(findings, held) if ok} | {f.prop for f in verdict.violations[n:]}


def _confirm_each(verdict: Any, events: list[Any], p: Profile, pp: Profile) -> list[bool]:
    """Confirm each violation of ``verdict`` and shrink its indices to the unsat core; per
    violation sent to Z3, whether Z3 confirmed it."""
    from .findings import Finding

    held = []
    out = []
    for n, v in enumerate(verdict.violations):
        if n >= MAX_CONFIRM:
            out.extend(verdict.violations[n:])
            verdict.z3_notes.append(f"z3: {len(verdict.violations) - n} further violation(s) not sent to Z3")
            break
        status, core = explain(v.prop, events, v.indices, p, pp)
        held.append(status.startswith("confirmed"))
        if status == "confirmed":
            out.append(Finding.in_history(v.prop, core, v.message))
            verdict.z3_notes.append(f"z3: {v.prop} confirmed; minimal events {list(core)}")
        elif status == "confirmed-unminimised":
            out.append(Finding.in_history(v.prop, core, v.message))
            verdict.z3_notes.append(f"z3: {v.prop} confirmed; core of {len(core)} events, not minimised "
                                    f"(window over {MINIMIZE_LIMIT} events)")
        else:
            out.append(v)
            verdict.z3_notes.append(f"z3: {v.prop} {status}" + (" (judged by the fast path only)"
                                                                 if status == "not-encoded" else
                                                                 " -- Z3 DISAGREES with the fast path"))
    verdict.violations = out
    return held


def _rejudge(verdict: Any, events: list[Any], p: Profile, pp: Profile) -> None:
    """Re-judge with Z3 every fire, completion and request result the fast path did not flag;
    each instance Z3 finds violated is added to ``verdict`` as a violation."""
    from .findings import Finding

    flagged = {i for v in verdict.violations for i in v.indices}
    reports_tries = any(isinstance(e, ev.TryComplete) for e in events)
    checked = 0
    per_prop: dict[str, int] = {}

    def makes(x: Any, task: int) -> bool:
        """``x`` is an add of ``task`` that makes a schedule."""
        return isinstance(x, ev.Add) and x.task == task and (x.delay > 0 or not p.fires_inside_add)

    for i, e in enumerate(events):
        if i in flagged:
            continue
        props: list[tuple[str, tuple[int, ...]]] = []
        if isinstance(e, ev.Fire):
            first = max([j for j in range(i) if makes(events[j], e.task)] or [i])
            idx: tuple[int, ...] = (first, i)
            nxt = events[i + 1] if i + 1 < len(events) else None
            if isinstance(nxt, ev.Add) and nxt.task == e.task:
                idx = (first, i, i + 1)  # a fire inside that add
            props = [("fire-once", idx)]
            # with a declared earliness the lower bound is granularity's, reported once per history
            early = "granularity" if p.granularity.earliness_ms else "no-early-fire"
            if not (early == "granularity" and any(v.prop == early for v in verdict.violations)):
                props.insert(0, (early, (i,) + idx[2:]))
        elif isinstance(e, ev.CheckAndComplete):
            props = [("check-count", (i,)), ("no-lost-wakeup", (i,))]
        elif isinstance(e, (ev.TryCompleteElseWatch, ev.Resubmit)):
            props = [("watch-result", (i,))]
        elif isinstance(e, ev.ForceComplete):
            props = [("force-result", (i,))]
        elif isinstance(e, ev.Cancel):
            props = [("cancel-result", (i,))]
        elif isinstance(e, ev.Observe) and e.what in ("size", "num_delayed"):
            props = [("size" if e.what == "size" else "num-delayed", (i,))]
        elif isinstance(e, ev.Purge):
            lo, hi = i, i
            while lo > 0 and isinstance(events[lo - 1], ev.CAUSED):
                lo -= 1
            while hi + 1 < len(events) and isinstance(events[hi], ev.CAUSED):
                hi += 1
            props = [("num-delayed", (i,)), ("executor-order", (lo, hi))]  # its whole advance window
        elif isinstance(e, ev.Complete):
            props = [("complete-context", (i,))]
        elif isinstance(e, ev.CancelForKey):
            props = [("cancel-for-key-result", (i,))]
        if reports_tries and isinstance(e, (ev.TryCompleteElseWatch, ev.Resubmit, ev.CheckAndComplete)):
            lo = i
            while lo > 0 and isinstance(events[lo - 1], ev.CAUSED):
                lo -= 1
            # a call of this request the fast path flagged already (its indices name the call, not
            # always the request): re-judging the request would report the same finding again
            if not any(v.prop == "try-complete-calls" and any(lo <= k <= i for k in v.indices)
                       for v in verdict.violations):
                props.append(("try-complete-calls", (i,)))
        for prop, idx in props:
            status, core = explain(prop, events, idx, p, pp)
            checked += 1
            per_prop[prop] = per_prop.get(prop, 0) + 1
            if status.startswith("confirmed"):
                verdict.violations.append(Finding.in_history(prop, core or idx, f"Z3 finds event #{i} violates {prop}, "
                                                    "which the fast path accepted"))
                verdict.ok = False
    detail = ", ".join(f"{k} {n}" for k, n in sorted(per_prop.items()))
    verdict.z3_notes.append(f"z3: re-judged {checked} property instances of a passing history"
                            + (f" ({detail})" if detail else ""))

