"""Z3 encodings of the six *result* properties of the history checker.

These are the properties whose subject is what a request returned or observed, judged against the
state the earlier events leave: ``cancel-result``, ``size``, ``num-delayed`` (timer and purgatory
bookkeeping: Kafka's ``TimerTaskEntry.cancel`` / ``SystemTimer.size`` and
``DelayedOperationPurgatory.numDelayed``), ``complete-context``, ``no-lost-wakeup`` and
``cancel-for-key-result`` (the purgatory's watch lists: ``checkAndComplete``, ``cancelForKey``).
Each is stated over the symbolic fields of a window of events (:class:`.z3_window.Window`: one
label per event, its fields as facts) exactly as :mod:`.checker`'s fast path judges it; a count is
a sum of labelled 0/1 terms, one per event, so the unsat core names the events that make a count
wrong.  The state is never taken from the fast path: which schedule is live, which operation is on
the timer or in a watch list, is re-derived from the window's events.

The encodings
-------------
*live schedule* ``live(a, o)`` (kafka/strict): ``a`` is a schedule-making add and no event of its
task between ``a`` and ``o`` ends it -- a re-add that makes a schedule, a cancel, or a fire with
``a``'s expiration (under strict-gt not the first matching fire inside a delay <= 0 add, which
belongs to that add) -- nor a fire with ``a``'s expiration inside ``a``'s own add (it precedes
``a``'s result event).

``cancel-result``
    ``Cancel.pending = 1  <=>  OR_a (id a = id c and live(a, c))``.
``size``
    kafka/strict: ``Observe(size).value = SUM_a If(live(a, o), 1, 0)``.  strict-gt (MockTimer's
    queue): ``SUM_a If(schedule-making add a and not popped(a), 1, 0)`` where ``popped(a)`` says the
    latest ``Advance`` before ``o`` comes after ``a`` with ``now > exp(a)``.
``num-delayed``
    ``on(a)``: ``a`` is a watch and no ``Complete`` of its op lies in its own window (it was
    completed inside ``tryCompleteElseWatch``).  kafka/strict: ``value = SUM_a If(on(a) and no
    Complete of the op and no cancelForKey that removed it between a and o, 1, 0)``; a cancelForKey
    ``b`` removes ``a`` when it names ``a``'s op, ``a`` watches ``b``'s key and no cancelForKey of that
    key lies between them; for a ``Purge``, a ``Complete(via=expire)`` after it in its own advance
    counts as before it (handed to the executor before the purge check: the executor race).
    strict-gt: ``SUM_a If(on(a) and delay(a) > 0 and not popped(a), 1, 0)``
    with deadline ``now(a) + delay(a)``; a ``Purge`` inside an advance is counted after that
    advance's pop (MockTimer dequeues before it runs anything).
``complete-context``
    for a ``Complete c`` of a watched op that is its first completion, with ``x`` the request
    closing ``c``'s window: via=try -- ``x`` is the watch of that op; via=check -- ``x`` is a
    ``CheckAndComplete`` of a key the op's watch has, with no cancelForKey of that key in between;
    via=force -- ``x`` is forceComplete of the op; via=expire -- ``x`` is an ``Advance`` or the op's
    own watch.  No request after ``c`` (the history ends) is never a valid context.
``no-lost-wakeup``
    after ``CheckAndComplete(k)`` there is no watch ``a`` of ``k`` (no cancelForKey of ``k`` since)
    whose op has no completion before the check and whose latest ``SetCompletable`` since the
    watch has value 1.
``cancel-for-key-result``
    ``in_ws(a)``: watch ``a`` has ``b``'s key, no cancelForKey of that key lies between, and no
    ``CheckAndComplete`` of the key between them found its op completed (the walk drops it).
    Every op ``b`` names has an ``a`` with ``in_ws(a)``; every ``a`` with ``in_ws(a)`` whose op is not
    completed before ``b`` is named.

Resubmits (SEMANTICS.md, "Resubmit"): a resubmit after a watch of its op lists the op on its keys
again, like the watch (``in_ws``, ``no-lost-wakeup``, a check's context), and puts an uncompleted op
back on the timer: ``num-delayed`` counts an op on the timer since its latest watch or resubmit
unless a cancelForKey that found it listed came after; strict-gt counts each resubmit's new
MockTimer entry (deadline ``now(resubmit) + delay(watch)``) beside the old one.

Windows: the result event, and before it every event that can bear on it (of the same task, the
same operation, or the same key); pairs of events are formed only inside those groups, so the
formula grows linearly with the window (a ``size`` window is every timer event before the observe).
strict-gt's pops use the latest advance, which on a clock that never goes back (``well-formed``)
pops every entry an earlier advance did.
"""

from __future__ import annotations

from typing import Any

import z3

from . import events as ev
from .profiles import Profile
from .z3_window import VIA, WHAT, Window, makes_schedule

RESULTS = ("cancel-result", "size", "complete-context", "no-lost-wakeup", "cancel-for-key-result", "num-delayed")

_TIMER = (ev.Add, ev.Fire, ev.Cancel)
_FALSE = z3.BoolVal(False)


def _or(xs: list[z3.BoolRef]) -> z3.BoolRef:
    return z3.Or(xs) if xs else _FALSE


def _and(xs: list[z3.BoolRef]) -> z3.BoolRef:
    return z3.And(xs) if xs else z3.BoolVal(True)


def _count(xs: list[z3.BoolRef]) -> z3.ArithRef:
    return z3.Sum([z3.If(x, 1, 0) for x in xs]) if xs else z3.IntVal(0)


def _closing(events: list[Any], j: int) -> int:
    k = j
    while k < len(events) and isinstance(events[k], ev.CAUSED):
        k += 1
    return k


def target(prop: str, events: list[Any], indices: tuple[int, ...]) -> int:
    """The result event a violation of ``prop`` (fast-path ``indices``) is about."""
    if prop == "complete-context":
        return next(i for i in indices if isinstance(events[i], ev.Complete))
    return max(indices)


# -- window selection (which events can bear on the result) ---------------------------------------
def _latest_advance(events: list[Any], o: int) -> list[int]:
    for v in range(o - 1, -1, -1):
        if isinstance(events[v], ev.Advance):
            return [v]
    return []


_SUBMITS = (ev.TryCompleteElseWatch, ev.Resubmit)


def _keys_of(e: Any) -> tuple[Any, ...]:
    if isinstance(e, _SUBMITS):
        return e.keys
    if isinstance(e, (ev.CheckAndComplete, ev.CancelForKey)):
        return (e.key,)
    return ()


def _purgatory_story(events: list[Any], t: int, ops: set[int], keys: set[Any]) -> list[int]:
    """Before ``t``: the watches, completions and SetCompletables of ``ops`` and the checks and
    cancelForKeys of ``keys`` (and of ``ops``)."""
    out = []
    for i in range(t):
        e = events[i]
        if isinstance(e, (*_SUBMITS, ev.Complete, ev.SetCompletable)) and e.op in ops:
            out.append(i)
        elif isinstance(e, (ev.CheckAndComplete, ev.CancelForKey)) and (
                e.key in keys or (isinstance(e, ev.CancelForKey) and ops & set(e.ops))):
            out.append(i)
    return out


def select(prop: str, events: list[Any], t: int, p: Profile, pp: Profile) -> list[int]:
    """The window of a ``prop`` judgement of result event ``t``."""
    e = events[t]
    if prop == "cancel-result":
        return [i for i in range(t) if isinstance(events[i], _TIMER) and events[i].task == e.task] + [t]
    if prop == "size":
        if p.size_counts_superseded:  # MockTimer's queue: every add, and the latest advance's pops
            return [i for i in range(t) if isinstance(events[i], ev.Add)] + _latest_advance(events, t) + [t]
        return [i for i in range(t) if isinstance(events[i], _TIMER)] + [t]
    if prop == "num-delayed":
        if pp.size_counts_superseded:  # numDelayed is the purgatory timer's size
            x = _closing(events, t)
            pop = [x] if isinstance(e, ev.Purge) and x < len(events) and isinstance(events[x], ev.Advance) \
                else _latest_advance(events, t)
            return [i for i in range(t) if isinstance(events[i], (*_SUBMITS, ev.Complete))] + pop + [t]
        ops = {x.op for x in events[:t] if isinstance(x, ev.TryCompleteElseWatch)}
        keys = {k for x in events[:t] if isinstance(x, _SUBMITS) for k in x.keys}
        # a purge's own advance: expiries after it were handed over before it (the executor race)
        handed = [i for i in range(t + 1, _closing(events, t)) if isinstance(events[i], ev.Complete)] \
            if isinstance(e, ev.Purge) else []
        return [i for i in _purgatory_story(events, t, ops, keys)
                if not isinstance(events[i], (ev.SetCompletable, ev.CheckAndComplete))] + [t] + handed
    if prop == "complete-context":
        x = _closing(events, t)
        keys = {events[x].key} if x < len(events) and isinstance(events[x], ev.CheckAndComplete) else set()
        story = _purgatory_story(events, min(x + 1, len(events)), {e.op}, keys)
        return sorted(set(story) | {t} | ({x} if x < len(events) else set()))
    if prop in ("no-lost-wakeup", "cancel-for-key-result"):
        ops = {x.op for x in events[:t] if isinstance(x, _SUBMITS) and e.key in x.keys}
        if isinstance(e, ev.CancelForKey):
            ops |= set(e.ops)
        return _purgatory_story(events, t, ops, {e.key}) + [t]
    raise ValueError(f"{prop} is not a result property")  # pragma: no cover


class _Groups:
    """The window's events by task, operation, key and kind: a term pairs an event only with
    those of its group (concretely; their fields stay symbolic inside the term), so the formula
    grows linearly with the window."""

    def __init__(self, w: Window) -> None:
        self.task: dict[Any, list[int]] = {}
        self.op: dict[Any, list[int]] = {}
        self.key: dict[Any, list[int]] = {}
        self.kind: dict[type, list[int]] = {}
        self.window: dict[int, list[int]] = {}  # result index -> its caused events
        for i in w.idx:
            e = w.events[i]
            self.kind.setdefault(type(e), []).append(i)
            if hasattr(e, "task"):
                self.task.setdefault(e.task, []).append(i)
            if hasattr(e, "op"):
                self.op.setdefault(e.op, []).append(i)
            if isinstance(e, (ev.CheckAndComplete, ev.CancelForKey)):
                self.key.setdefault(e.key, []).append(i)
            if isinstance(e, ev.CAUSED):
                self.window.setdefault(w.closing(i), []).append(i)

    def of_op(self, w: Window, i: int, cls: type | tuple[type, ...]) -> list[int]:
        return [j for j in self.op.get(w.events[i].op, ()) if isinstance(w.events[j], cls)]

    def of_key(self, w: Window, i: int, cls: type) -> list[int]:
        return [j for j in self.key.get(w.events[i].key, ()) if isinstance(w.events[j], cls)]


# -- the timer's live schedules ----------------------------------------------------------------------
def _first_in_transient(w: Window, g: _Groups, b: int) -> z3.BoolRef:
    """strict-gt: fire ``b`` is the first fire of its task and expiration inside a delay <= 0 add
    (MockTimer runs that add's task synchronously; the fire belongs to that add, no schedule)."""
    x = w.closing(b)
    if x not in w.labels:
        return _FALSE
    same = [z3.And(w.kind(f, ev.Fire), w.f("id", f) == w.f("id", b), w.f("exp", f) == w.f("exp", b))
            for f in g.window.get(x, ()) if f < b]
    return z3.And(w.kind(x, ev.Add), w.f("delay", x) <= 0, w.f("id", x) == w.f("id", b),
                  w.f("exp", x) == w.f("exp", b), z3.Not(_or(same)))


def _ends(w: Window, g: _Groups, p: Profile, a: int, b: int) -> z3.BoolRef:
    """Event ``b`` ends the schedule add ``a`` made (``b`` before ``a``: a fire inside ``a``'s add)."""
    same = w.f("id", b) == w.f("id", a)
    fire = z3.And(w.kind(b, ev.Fire), w.f("exp", b) == w.f("exp", a))
    if b < a:
        return z3.And(same, fire)
    if p.fires_inside_add:
        fire = z3.And(fire, z3.Not(_first_in_transient(w, g, b)))
    return z3.And(same, z3.Or(w.kind(b, ev.Add), w.kind(b, ev.Cancel), fire))  # any re-add replaces


def _live(w: Window, g: _Groups, p: Profile, a: int, o: int) -> z3.BoolRef:
    """Schedule ``a`` is live just before event ``o`` (only events of ``a``'s task can end it)."""
    enders = [_ends(w, g, p, a, b) for b in g.task[w.events[a].task]
              if b != a and b < o and (b > a or w.closing(b) == a)]
    return z3.And(makes_schedule(w, p, a), z3.Not(_or(enders)))


def _cancel_result(w: Window, g: _Groups, p: Profile, c: int) -> z3.BoolRef:
    live = [z3.And(w.f("id", a) == w.f("id", c), _live(w, g, p, a, c)) for a in g.task[w.events[c].task] if a < c]
    return z3.Implies(w.kind(c, ev.Cancel), (w.f("value", c) == 1) == _or(live))


def _popped(w: Window, a: int, v: int | None, deadline: z3.ArithRef) -> z3.BoolRef:
    """MockTimer popped entry ``a`` at advance ``v`` (it dequeues every entry with exp < now)."""
    if v is None or v <= a:
        return _FALSE
    return z3.And(w.kind(v, ev.Advance), w.f("now", v) > deadline)


def _size(w: Window, g: _Groups, p: Profile, o: int) -> z3.BoolRef:
    before = [a for a in w.idx if a < o and hasattr(w.events[a], "task")]
    if p.size_counts_superseded:
        v = max([i for i in g.kind.get(ev.Advance, ()) if i < o], default=None)
        counted = [z3.And(makes_schedule(w, p, a), z3.Not(_popped(w, a, v, w.f("exp", a)))) for a in before]
    else:
        counted = [_live(w, g, p, a, o) for a in before]
    return z3.Implies(z3.And(w.kind(o, ev.Observe), w.f("what", o) == WHAT["size"]),
                      w.f("value", o) == _count(counted))


# -- the purgatory -----------------------------------------------------------------------------------
def _completed_by(w: Window, g: _Groups, a: int, before: int) -> z3.BoolRef:
    """The op of watch ``a`` has a completion before event ``before`` (in ``a``'s own window or
    later: a completion before the watch names an op not yet watched and does not count); for a
    resubmit ``a``, any completion of its op before ``before`` (the op was watched before it)."""
    resub = isinstance(w.events[a], ev.Resubmit)
    return _or([z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a)) for c in g.of_op(w, a, ev.Complete)
                if c < before and (resub or c > a or w.closing(c) == a)])


def _listings(w: Window, g: _Groups, a: int, before: int) -> list[int]:
    """The watch and resubmits of ``a``'s op before ``before``: each appends the op to its keys'
    lists (SEMANTICS.md, "Resubmit"), and one that leaves it uncompleted re-times it."""
    return [t for t in g.of_op(w, a, _SUBMITS) if t < before]


def _submits(w: Window, t: int, a: int, g: _Groups | None = None) -> z3.BoolRef:
    """Event ``t`` is a watch or resubmit of the op of event ``a`` (with ``g``: a resubmit counts
    only after a watch of its op; one naming an op never watched is ill-formed and lists nothing)."""
    watched = [z3.And(w.kind(b, ev.TryCompleteElseWatch), w.f("id", b) == w.f("id", t))
               for b in (g.of_op(w, t, ev.TryCompleteElseWatch) if g is not None else ()) if b < t]
    resubmit = z3.And(w.kind(t, ev.Resubmit), _or(watched)) if g is not None else w.kind(t, ev.Resubmit)
    return z3.And(z3.Or(w.kind(t, ev.TryCompleteElseWatch), resubmit), w.f("id", t) == w.f("id", a))


def _listed_at(w: Window, g: _Groups, a: int, b: int) -> z3.BoolRef:
    """The op of ``a`` is in the list of ``b``'s key just before ``b`` (a check or cancelForKey):
    a watch or resubmit of it named the key, and no cancelForKey of the key came since."""
    return _or([z3.And(_submits(w, t, a, g), w.watches(t, b), _no_cfk_between(w, g, t, b, b))
                for t in _listings(w, g, a, b) if w.events[b].key in w.events[t].keys])


def _no_cfk_between(w: Window, g: _Groups, a: int, b: int, key_event: int) -> z3.BoolRef:
    """No cancelForKey of ``key_event``'s key lies strictly between ``a`` and ``b``."""
    return z3.Not(_or([z3.And(w.kind(m, ev.CancelForKey), w.f("key", m) == w.f("key", key_event))
                       for m in g.of_key(w, key_event, ev.CancelForKey) if a < m < b]))


def _on_timer_at_watch(w: Window, g: _Groups, a: int) -> z3.BoolRef:
    """Watch ``a`` put its op on the timer: it was not completed inside the watch."""
    inside = [z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a)) for c in g.of_op(w, a, ev.Complete)
              if c < a and w.closing(c) == a]
    return z3.And(w.kind(a, ev.TryCompleteElseWatch), z3.Not(_or(inside)))


def _num_delayed(w: Window, g: _Groups, pp: Profile, o: int) -> z3.BoolRef:
    watches = [a for a in g.kind.get(ev.TryCompleteElseWatch, ()) if a < o]
    if pp.size_counts_superseded:  # numDelayed is the purgatory timer's size
        v = next((i for i in g.kind.get(ev.Advance, ()) if i != o), None)
        counted = [z3.And(_on_timer_at_watch(w, g, a), w.f("delay", a) > 0,
                          z3.Not(_popped(w, a, v, w.f("now", a) + w.f("delay", a)))) for a in watches]
        # a resubmit of an uncompleted op queues a new entry (MockTimer keeps the old one, cancelled)
        for a in watches:
            for t in _listings(w, g, a, o):
                if t <= a or not isinstance(w.events[t], ev.Resubmit):
                    continue
                done = _or([z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a))
                            for c in g.of_op(w, a, ev.Complete) if c < t])
                counted.append(z3.And(w.kind(a, ev.TryCompleteElseWatch), _submits(w, t, a), z3.Not(done),
                                      w.f("delay", a) > 0,
                                      z3.Not(_popped(w, t, v, w.f("now", t) + w.f("delay", a)))))
    else:
        counted = []
        for a in watches:
            keys = {k for t in _listings(w, g, a, o) for k in w.events[t].keys}
            # on the timer since its latest watch / resubmit t (a resubmit re-times it, also after
            # a cancelForKey took it off), unless a cancelForKey that found it listed came after t
            since = []
            for t in _listings(w, g, a, o):
                removed = [z3.And(w.kind(b, ev.CancelForKey), w.names(b, a), _listed_at(w, g, a, b))
                           for k in keys for b in g.key.get(k, ())
                           if t < b < o and isinstance(w.events[b], ev.CancelForKey)]
                since.append(z3.And(_submits(w, t, a), z3.Not(_or(removed))))
            # a Complete(via=expire) after a Purge in its advance: handed to the executor before the
            # purge check, so already off the timer (the executor race)
            handed = [z3.And(w.kind(c, ev.Complete), w.f("id", c) == w.f("id", a), w.f("via", c) == VIA["expire"])
                      for c in g.of_op(w, a, ev.Complete) if o < c < w.closing(o)] \
                if isinstance(w.events[o], ev.Purge) else []
            counted.append(z3.And(_on_timer_at_watch(w, g, a), z3.Not(_completed_by(w, g, a, o)),
                                  z3.Not(_or(handed)), _or(since)))
    judged = z3.Or(z3.And(w.kind(o, ev.Observe), w.f("what", o) == WHAT["num_delayed"]), w.kind(o, ev.Purge))
    return z3.Implies(judged, w.f("value", o) == _count(counted))


def _complete_context(w: Window, g: _Groups, c: int) -> z3.BoolRef:
    x = w.closing(c)
    watches = [a for a in g.of_op(w, c, ev.TryCompleteElseWatch) if a < c or a == x]
    earlier = [b for b in g.of_op(w, c, ev.Complete) if b < c]
    # judged: the first completion of a watched operation with a known via
    first = [z3.And(w.kind(a, ev.TryCompleteElseWatch), w.f("id", a) == w.f("id", c),
                    z3.Not(_or([z3.And(w.kind(b, ev.Complete), w.f("id", b) == w.f("id", c))
                                for b in earlier if b > a or w.closing(b) == a])))
             for a in watches]
    judged = z3.And(w.kind(c, ev.Complete), w.f("via", c) >= 0, w.f("via", c) <= 3, _or(first))
    if x not in w.labels:
        return z3.Not(judged)  # no request closes the window: the history ends
    via = w.f("via", c)
    own = w.f("id", x) == w.f("id", c)
    by_check = [z3.And(_submits(w, a, c), w.watches(a, x),
                       _no_cfk_between(w, g, a, c, x) if x in g.key.get(getattr(w.events[x], "key", None), ()) else
                       z3.BoolVal(True))
                for a in g.of_op(w, c, _SUBMITS) if a < c]
    submit = z3.Or(w.kind(x, ev.TryCompleteElseWatch), w.kind(x, ev.Resubmit))  # the op's own tryCompleteElseWatch
    ok = z3.Or(z3.And(via == VIA["try"], submit, own),
               z3.And(via == VIA["check"], w.kind(x, ev.CheckAndComplete), _or(by_check)),
               z3.And(via == VIA["force"], w.kind(x, ev.ForceComplete), own),
               z3.And(via == VIA["expire"],
                      z3.Or(w.kind(x, ev.Advance), z3.And(submit, own))))
    return z3.Implies(judged, ok)


def _watching(w: Window, g: _Groups, b: int) -> list[int]:
    """The window's watches before ``b`` that concretely have ``b``'s key (the only ones it can
    find in its watch list)."""
    return [a for a in [*g.kind.get(ev.TryCompleteElseWatch, ()), *g.kind.get(ev.Resubmit, ())]
            if a < b and w.events[b].key in w.events[a].keys]


def _no_lost_wakeup(w: Window, g: _Groups, i: int) -> z3.BoolRef:
    lost = []
    for a in _watching(w, g, i):
        # the op's SetCompletables since its watch (a resubmit does not reset completability)
        first = min(g.of_op(w, a, _SUBMITS))
        sets = [s for s in g.of_op(w, a, ev.SetCompletable) if first < s < i]
        made = [z3.And(w.kind(s, ev.SetCompletable), w.f("id", s) == w.f("id", a), w.f("value", s) == 1,
                       z3.Not(_or([z3.And(w.kind(s2, ev.SetCompletable), w.f("id", s2) == w.f("id", a))
                                   for s2 in sets if s2 > s])))
                for s in sets]
        lost.append(z3.And(_submits(w, a, a, g), w.watches(a, i), _no_cfk_between(w, g, a, i, i),
                           z3.Not(_completed_by(w, g, a, i)), _or(made)))
    return z3.Implies(w.kind(i, ev.CheckAndComplete), z3.Not(_or(lost)))


def _cancel_for_key(w: Window, g: _Groups, b: int) -> z3.BoolRef:
    in_ws: dict[int, z3.BoolRef] = {}
    checks = g.of_key(w, b, ev.CheckAndComplete)
    for a in _watching(w, g, b):  # each watch / resubmit that listed its op under the key
        # dropped: a check of the key between them found the op completed (before that check)
        dropped = [z3.And(w.kind(j, ev.CheckAndComplete), w.f("key", j) == w.f("key", b), _completed_by(w, g, a, j))
                   for j in checks if a < j < b]
        in_ws[a] = z3.And(_submits(w, a, a, g), w.watches(a, b), _no_cfk_between(w, g, a, b, b),
                          z3.Not(_or(dropped)))
    n = len(w.events[b].ops) if isinstance(w.events[b], ev.CancelForKey) else 0
    named = [_or([z3.And(w.f("id", a) == w.f(f"op{k}", b), ok) for a, ok in in_ws.items()]) for k in range(n)]
    owed = [z3.Implies(z3.And(ok, z3.Not(_completed_by(w, g, a, b))), w.names(b, a)) for a, ok in in_ws.items()]
    return z3.Implies(w.kind(b, ev.CancelForKey), _and(named + owed))


def encode(prop: str, events: list[Any], indices: tuple[int, ...], p: Profile, pp: Profile
           ) -> tuple[Window, z3.BoolRef, list[z3.BoolRef]]:
    """(window, property constraint, side conditions) for the ``prop`` judgement that fast-path
    ``indices`` name (re-judging a passing history passes the result event alone)."""
    t = target(prop, events, indices)
    w = Window(events, select(prop, events, t, p, pp) + list(indices))
    g = _Groups(w)
    if prop == "cancel-result":
        rule = _cancel_result(w, g, p, t)
    elif prop == "size":
        rule = _size(w, g, p, t)
    elif prop == "num-delayed":
        rule = _num_delayed(w, g, pp, t)
    elif prop == "complete-context":
        rule = _complete_context(w, g, t)
    elif prop == "no-lost-wakeup":
        rule = _no_lost_wakeup(w, g, t)
    else:
        rule = _cancel_for_key(w, g, t)
    return w, rule, []
