"""The history checker: does a recorded history obey the semantics?

Given the events one run produced (:mod:`.events`, in order) and the firing profile the
implementation claims (:mod:`.profiles`), :func:`check_history` judges a fixed list of
properties (:data:`PROPERTIES`) and returns a :class:`Verdict` whose violations name the
smallest set of events involved and say, in terms of those events, what went wrong.

Two layers judge the same predicates:

* the **fast path** (this module): one pass in plain Python, linear in the history (a few heaps
  make the "must have fired by now" checks O(n log n)); 10^5 events take about a second;
* the **Z3 layer** (:mod:`.checker_z3`, imported only when needed): every violation the fast path
  finds is re-encoded as constraints over the events of its window, each event's facts asserted
  under its own label; Z3 confirms the property is unsatisfiable together with those facts and its
  unsat core is the minimal explanation.  With ``z3=True`` the Z3 layer also re-judges every
  property instance of a passing history (slow; for small histories) and a disagreement with the
  fast path is reported as an internal error, never hidden.

How a history is read
---------------------
Events split into *caused* events (``Fire``, ``Complete``, ``Expire``, ``Purge``) and *request
results* (every other kind).  The ordering rule (:mod:`.events`) puts the events a request caused
before its result, so the caused events since the previous result form that request's *window*:
a ``Fire`` in the window of ``Add(task)`` with the same task and expiration is a fire *inside* add;
a ``Complete(via=check)`` belongs to the ``CheckAndComplete`` that closes its window; and so on.

Properties (the names in :data:`PROPERTIES`, registered in :mod:`.properties`)
------------------------------------------------------------------------------
Timer (Kafka ``SystemTimer`` / ``MockTimer``):

``well-formed``
    the clock never goes back; ``Add.exp == now + delay``; ids in ``Complete``/``ForceComplete``
    name watched operations; an operation id is watched once; ``via`` is one of try/check/expire/force.
``no-early-fire``
    every ``Fire`` happens at ``now >= profile.earliest(exp)`` (kafka: the tick window start;
    strict: exp; strict-gt: exp + 1, except a fire inside ``add`` of a task with delay <= 0).
``late-fire``
    only when the profile has ``lateness_ms``: ``now - exp <= lateness_ms`` at every fire.
``granularity``
    only when the implementation declares a granularity (``Profile.granularity``, from its
    ``lateness_ms`` / ``earliness_ms`` capabilities): the window of a timer task is
    ``profile.fire_window(exp, added_at)`` = ``(lo, hi)``.  With a declared lateness, a live
    schedule with ``hi <= t`` at the end of an ``Advance(t)`` fails ``granularity`` in place of
    ``no-lost-task`` (it fired too late, or never: the history cannot tell them apart); with a
    declared earliness, a fire at ``now < lo`` fails ``granularity`` in place of ``no-early-fire``
    and a fire in ``[lo, earliest)`` is allowed.  Reported once per history: its first violation,
    the message counting the rest.  Operation deadlines keep the profile's own window.
``fire-once``
    a fire matches the task's live *schedule* (the latest ``Add`` of it, not yet fired or
    cancelled) and each schedule fires at most once; an entry superseded by a re-add never fires.
    Under strict-gt (Kafka's MockTimer) an ``Add`` with delay <= 0 runs inside add and makes no
    entry; it supersedes the task's earlier entry like any re-add (a Kafka caller cancels the old
    task: ``TimerTask.delayMs`` is final), which then never fires but stays in ``size``.
``fire-unknown-task``
    no ``Fire`` of a task id that no earlier ``Add`` named (a fire inside an add of the task
    counts as after it).
``no-fire-after-cancel``
    no fire of a schedule after a ``Cancel`` of its task (until the task is re-added).  Histories
    are sequential, so Kafka's race window (a cancel racing a bucket flush) cannot appear in them.
``no-lost-task``
    at every ``Advance(t)``, every live schedule with ``profile.must_have_fired(exp, t)`` has fired;
    under strict-gt an ``Add`` with delay <= 0 must fire inside the add.
``cancel-result``
    ``Cancel.pending`` is true iff the task had a live schedule (for strict-gt: iff its current
    MockTimer entry was still queued, which is the same thing).
``size``
    ``Observe(size)``: kafka and strict -- the number of live schedules (Kafka's ``taskCounter``
    drops an entry as soon as it fires or is cancelled).  strict-gt -- MockTimer's queue length:
    every ``Add`` with delay > 0 pushes an entry that stays counted, cancelled or superseded or
    not, until an ``Advance(t)`` with ``t > exp`` pops it.

Purgatory (Kafka ``DelayedOperation`` / ``DelayedOperationPurgatory``), with the purgatory
profile (default: the timer's):

``complete-once``
    at most one ``Complete`` per operation (the atomic ``completed`` flag).
``complete-context``
    a ``Complete`` happens inside a request that can cause it: via=try in the ``watch`` of that
    op, via=check in a ``check`` of a key the op watches, via=force in ``force_complete`` of that
    op, via=expire in an ``advance`` or (timeout <= 0, timer fires inside add) in its own ``watch``.
``expire-rule``
    ``Expire(op)`` comes right after ``Complete(op, via=expire)`` and every such ``Complete`` is
    followed by its ``Expire`` (onComplete runs before onExpiration); a timeout never completes an
    operation whose timer entry ``cancelForKey`` cancelled.
``no-early-expire``
    a completion via=expire happens no earlier than the deadline window: deadline = watch now +
    delay, judged as a fire with expiration = deadline under the purgatory profile.
``no-lost-operation``
    at every ``Advance(t)``, every operation still on its timer whose deadline must have fired has
    completed; under strict-gt a timeout <= 0 completes inside the ``watch``.
``watch-result``
    ``TryCompleteElseWatch.result`` is true iff a ``Complete(op, via=try)`` precedes it in its window.
``force-result``
    ``ForceComplete.result`` is true iff the op was not completed before, iff a
    ``Complete(op, via=force)`` precedes it in its window.
``check-count``
    ``CheckAndComplete.completed`` equals the number of ``Complete(via=check)`` in its window.
``no-lost-wakeup``
    after ``checkAndComplete(key)`` no operation watching ``key`` is both uncompleted and
    completable (``tryComplete`` succeeds iff completable, as for :class:`~.ops.Watch`; an op is
    completable after ``SetCompletable(value=True)``; a watch whose result was false started
    uncompleted and not completable).  This is the symptom of Kafka's lost-wakeup bugs.
``cancel-for-key-result``
    ``CancelForKey.ops`` lists only operations watched on that key since its last cancel, and
    every one of them that is not completed.  An operation completed inside its own
    ``tryCompleteElseWatch`` counts as watched (completed): Kafka's second try completes it after
    it joined the lists, and a history cannot tell which try completed it.
``num-delayed``
    ``Observe(num_delayed)`` and ``Purge.delayed`` equal the purgatory timer's size, modelled as
    for ``size``: kafka/strict count operations still on the timer; strict-gt counts MockTimer's
    queue.  An operation whose ``Complete(via=expire)`` follows the ``Purge`` in the same advance
    has left the timer already (handed to the executor before the purge check: the executor race).
``executor-order``
    inside one ``Advance`` window the ``Purge`` sits among the expirations (``Complete(via=expire)``)
    as the purgatory profile's ``executor_order`` allows: ``expire-before-purge`` (the default)
    after all of them, ``purge-before-expire`` before all of them, ``either`` anywhere.
``try-complete-calls``
    only when the implementation reports its ``tryComplete`` calls (``TryComplete`` events;
    ``check_history(reports_tries=...)``): a call returns true iff it completed the op (its
    ``Complete`` via try/check comes right before it, and every such ``Complete`` is followed by
    its call); ``tryCompleteElseWatch`` and a resubmit call it once, and once more iff that
    returned false; ``checkAndComplete(key)`` calls it once per occurrence of an uncompleted
    operation in the key's list until a call completes it, never for a completed operation
    (KAFKA-17848); no other request calls it.

A ``Resubmit`` (``tryCompleteElseWatch`` of an operation watched before) is judged by the rules
above as its watch is: ``watch-result`` for its result, ``complete-context`` for a Complete via
try inside it; if it leaves the operation uncompleted, the operation is listed on its keys again
and re-timed from the resubmit with the watch's timeout (the old timer entry replaced; under
strict-gt the old entry stays in MockTimer's queue), which ``no-early-expire``,
``no-lost-operation``, ``expire-rule`` (a cancelForKey's cancellation is undone) and
``num-delayed`` then use; a completed operation is not re-timed.  A ``Cancel`` of a task id never
added is well formed: ``pending`` must be false (``cancel-result``).

Not judged: ``Observe(watched)`` (it counts completed operations not yet purged, which depends on
the purge interval the history does not carry) and the purge trigger itself.

Concurrent logs
---------------
:func:`check_completions` judges the purgatory's exactly-once and expiry rules on the events of
*several threads* in the order they happened (the interleaving judge of
``wheelspec.reference.interleave`` and the real-thread hammer of ``wheelspec.conformance``
both call it).  It is not :func:`check_history`: a concurrent log has no request windows and
another thread's events may sit between a ``Complete(via=expire)`` and its ``Expire``, so it keeps
only what still holds there, under the registry's concurrent names (``exactly-once`` restates
``complete-once``; ``expiration`` restates ``expire-rule`` and ``no-early-expire``).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import events as ev
from . import properties, show
from .errors import WheelspecError
from .findings import Finding
from .profiles import EITHER_ORDER, PURGE_BEFORE_EXPIRE, Profile, purge_allowed_after

#: the properties this checker judges, in order (their descriptions: :mod:`.properties`)
PROPERTIES: tuple[str, ...] = properties.names(properties.HISTORY)


@dataclasses.dataclass
class Verdict:
    ok: bool
    violations: list[Finding]
    #: set when ``z3=True`` (or on failure): what the Z3 layer said, one line per violation/check
    z3_notes: list[str] = dataclasses.field(default_factory=list)

    def explain(self, history: Any) -> str:
        """A readable report quoting the events each violation involves."""
        events = list(history)
        if self.ok:
            return f"history of {len(events)} events: all {len(PROPERTIES)} properties hold"
        lines = [f"history of {len(events)} events: {len(self.violations)} violation(s)"]
        for v in self.violations:
            lines.append(show.finding(v))
            for i in v.indices:
                lines.append(f"    #{i:<6} {show.event(events[i]) if 0 <= i < len(events) else '(no such event)'}")
        lines.extend(self.z3_notes)
        return "\n".join(lines)


#: the requests that call ``tryComplete`` (judged even when they reported no call: a missing call
#: is the finding); every other request may report none
_CALLS_TRIES = (ev.TryCompleteElseWatch, ev.Resubmit, ev.CheckAndComplete)


class _Stop(WheelspecError):
    """Ends the judging loop at the first finding when the checker is asked to stop there; caught
    inside the checker, never raised to its caller."""


def _lateness_ok(p: Profile, exp: int, now: int) -> bool:
    return p.lateness_ms is None or now - exp <= p.lateness_ms


class _Judge:
    """One pass over a history, keeping just enough state to judge every property.

    Schedules are identified by the index of the ``Add`` that made them; operations by their id.
    """

    def __init__(self, profile: Profile, purg: Profile, stop_at_first: bool) -> None:
        self.p = profile
        self.pp = purg
        self.stop = stop_at_first
        self.out: list[Finding] = []
        self.events: list[Any] = []
        # -- timer --
        self.live: dict[int, int] = {}            # task -> sid of its live schedule
        self.sched_of_task: dict[int, list[int]] = {}  # task -> every sid, in order
        self.fired_at: dict[int, int] = {}        # sid -> index of its fire
        self.cancelled_at: dict[int, int] = {}    # sid -> index of the Cancel that killed it
        self.superseded_by: dict[int, int] = {}   # sid -> sid of the re-add that replaced it
        self.lost_reported: set[int] = set()
        self.due_heap: list[tuple[int, int]] = []  # (earliest, sid)
        self.mock_queue: list[int] = []           # strict-gt: exps of MockTimer's queue
        # -- purgatory --
        self.op_watch: dict[int, int] = {}        # op -> index of its TryCompleteElseWatch
        self.op_timed: dict[int, int] = {}        # op -> index of the watch / resubmit that last timed it
        self.completed_at: dict[int, int] = {}    # op -> index of its Complete
        self.completable: dict[int, int | None] = {}  # op -> index of SetCompletable(True), or None
        self.on_timer: set[int] = set()           # ops whose timer entry is live
        self.op_cancelled_at: dict[int, int] = {}  # op -> index of the CancelForKey that cancelled it
        self.op_lost_reported: set[int] = set()
        self.op_heap: list[tuple[int, int, int]] = []  # (earliest deadline, op, index that timed it)
        self.mock_op_queue: list[int] = []        # strict-gt: deadlines in the purgatory's MockTimer
        self.watchers: dict[Any, dict[int, int]] = {}  # key -> {op: watch index}, watch order
        # try-complete-calls: key -> {op: occurrences in the key's list}, for operations not
        # completed when they were appended (a key listed twice, or a resubmit, appends again)
        self.occ: dict[Any, dict[int, int]] = {}
        self.reports_tries = False
        self.granularity_at: int | None = None  # index in self.out of the one granularity finding
        self.granularity_more = 0                # its further violations, counted in its message
        self.last_now: int | None = None
        self.last_now_index = -1
        self.ctx_i: int | None = None

    # -- reporting --------------------------------------------------------------------------------
    def flag(self, prop: str, indices: Iterable[int], message: str) -> None:
        self.out.append(Finding.in_history(prop, sorted(set(indices)), message))
        if self.stop:
            raise _Stop

    def rule(self, p: Profile) -> str:
        return f"under profile {show.profile(p.name, p.tick)}"

    def outside_granularity(self, indices: Iterable[int], message: str) -> None:
        """``granularity``: one finding per history (a coarse timer misses its declared window
        for many tasks at once); the first violation is flagged, the rest counted in its message."""
        if self.granularity_at is not None:
            self.granularity_more += 1
            return
        self.granularity_at = len(self.out)
        self.flag("granularity", indices, message)

    def count_granularity(self) -> None:
        k = self.granularity_at
        if k is not None and self.granularity_more:
            f = self.out[k]
            self.out[k] = dataclasses.replace(f, message=f"{f.message} ({self.granularity_more} more outside the "
                                                           "declared window in this history)")

    def window_text(self, add: Any) -> str:
        lo, hi = self.p.fire_window(add.exp, add.now)
        return (f"its window [{lo}, {hi}] (profile {show.profile(self.p.name, self.p.tick)}, declared "
                f"{self.p.granularity.describe()})")

    # -- driver -----------------------------------------------------------------------------------
    def run(self, history: Iterable[Any], reports_tries: bool | None = None) -> list[Finding]:
        self.events = events = list(history)
        self.reports_tries = (any(type(e) is ev.TryComplete for e in events) if reports_tries is None
                              else reports_tries)
        window: list[int] = []
        try:
            for i, e in enumerate(events):
                now = getattr(e, "now", None)
                if type(now) is int and (self.last_now is None or now >= self.last_now):
                    self.last_now, self.last_now_index = now, i  # (clock()'s good case, without its call)
                else:
                    self.clock(i, e)
                if isinstance(e, ev.CAUSED):
                    if isinstance(e, ev.Expire):
                        self.expire_adjacent(i, e)
                    elif isinstance(e, ev.Complete) and e.via == "expire":
                        nxt = events[i + 1] if i + 1 < len(events) else None
                        if not (isinstance(nxt, ev.Expire) and nxt.op == e.op):
                            self.flag("expire-rule", (i,), f"op {e.op} completed via expire at {e.now} "
                                      "but no Expire of it follows immediately (onExpiration must run "
                                      "right after onComplete)")
                    window.append(i)
                    continue
                self.result(i, e, window)
                window = []
            if window:  # the history ended after caused events that no request result closes
                self.ctx_i = None
                self.caused(window, None)
        except _Stop:
            pass
        self.count_granularity()
        return self.out

    def clock(self, i: int, e: Any) -> None:
        now = getattr(e, "now", None)
        if not isinstance(now, int):
            self.flag("well-formed", (i,), f"event #{i} has no integer clock reading")
            return
        if self.last_now is not None and now < self.last_now:
            self.flag("well-formed", (self.last_now_index, i),
                      f"the clock went back from {self.last_now} to {now}")
        self.last_now, self.last_now_index = now, i

    def expire_adjacent(self, i: int, e: ev.Expire) -> None:
        prev = self.events[i - 1] if i > 0 else None
        if not (isinstance(prev, ev.Complete) and prev.op == e.op and prev.via == "expire"):
            self.flag("expire-rule", (i - 1, i) if i > 0 else (i,),
                      f"Expire of op {e.op} at {e.now} does not come right after Complete(op {e.op}, "
                      "via=expire): onExpiration ran for an operation the timer did not complete")

    # -- one request ------------------------------------------------------------------------------
    def result(self, i: int, e: Any, window: list[int]) -> None:
        self.ctx_i = i  # the index of the request closing this window
        t = type(e)
        if self.reports_tries:
            self.tries(i, e, window)  # judged against the state before the request
        if t is ev.Add:
            self.add(i, e, window)
            return
        if t is ev.TryCompleteElseWatch:
            self.watch(i, e, window)
            return
        if t is ev.Resubmit:
            self.resubmit(i, e, window)
            return
        if t is ev.Advance:
            self.pop_mock_queues(e.now)  # MockTimer dequeues before it runs anything
        # Everything else: the window's events happen first, then the result is judged.
        vias = self.caused(window, e)
        if t is ev.Advance:
            self.executor_order(i, window)
            self.advance(i, e)
        elif t is ev.Cancel:
            self.cancel(i, e)
        elif t is ev.Observe:
            self.observe(i, e)
        elif t is ev.CheckAndComplete:
            self.check(i, e, vias)
        elif t is ev.ForceComplete:
            self.force(i, e, vias)
        elif t is ev.SetCompletable:
            if e.op not in self.op_watch:
                self.flag("well-formed", (i,), f"set_completable names op {e.op}, which was never watched")
            self.completable[e.op] = i if e.value else None
        elif t is ev.CancelForKey:
            self.cancel_for_key(i, e)

    def caused(self, window: list[int], ctx: Any) -> list[tuple[int, ev.Complete]]:
        """Judge the caused events of ``window``, which the result event ``ctx`` closes (None: the
        history ended); returns the completions among them, for ``ctx``'s own rule."""
        events = self.events
        vias: list[tuple[int, ev.Complete]] = []
        for j in window:
            c = events[j]
            if type(c) is ev.Fire:
                self.fire(j, c, in_add=False)
            elif type(c) is ev.Complete:
                self.complete(j, c, ctx)
                vias.append((j, c))
            elif type(c) is ev.Purge:
                self.purge(j, c, self.expiring_after(window, j))
        return vias

    def expiring_after(self, window: list[int], j: int) -> frozenset[int]:
        """The operations the window's timeout expiries complete after event ``j``: handed to the
        purgatory timer's executor by this advance (so off its timer, out of ``numDelayed``) but
        completed after the purge check (the executor race)."""
        return frozenset(c.op for k in window if k > j and type(c := self.events[k]) is ev.Complete
                         and c.via == "expire")

    def executor_order(self, i: int, window: list[int]) -> None:
        """executor-order: the advance's ``Purge`` sits among its expirations as the purgatory
        profile's executor order allows (:func:`~.profiles.purge_allowed_after`)."""
        purges = [j for j in window if type(self.events[j]) is ev.Purge]
        if not purges:
            return
        j = purges[0]
        expiring = [k for k in window if type(c := self.events[k]) is ev.Complete and c.via == "expire"]
        before, after = [k for k in expiring if k < j], [k for k in expiring if k > j]
        order = self.pp.executor_order
        if purge_allowed_after(order, len(before), len(after)):
            return
        p = self.events[j]
        if after:
            ops = ", ".join(f"op {self.events[k].op}" for k in after)
            self.flag("executor-order", (j, after[0], i),
                      f"the purge at {p.now} came before the expiration of {ops} handed over by the same "
                      f"advance, but the declared executor order {order!r} completes every expired operation "
                      f"before the purge check (an implementation whose purge check can run first declares "
                      f"executor_order {PURGE_BEFORE_EXPIRE!r} or {EITHER_ORDER!r})")
        else:
            ops = ", ".join(f"op {self.events[k].op}" for k in before)
            self.flag("executor-order", (before[0], j, i),
                      f"the purge at {p.now} came after the expiration of {ops} handed over by the same "
                      f"advance, but the declared executor order {order!r} runs the purge check before the "
                      f"executor completes any of them")

    # -- tryComplete calls (reported) ---------------------------------------------------------------
    def tries(self, i: int, e: Any, window: list[int]) -> None:
        """``try-complete-calls``: the ``TryComplete`` events of request ``i``'s window, judged
        against the state before the request (SEMANTICS.md, "tryComplete calls")."""
        if not window and type(e) not in _CALLS_TRIES:
            return  # no call reported, and none was due
        events = self.events
        calls = [j for j in window if type(events[j]) is ev.TryComplete]
        for j in window:  # T2: a call returns true iff it completed the op, right before returning
            c = events[j]
            prev = events[j - 1] if j - 1 in window else None
            if type(c) is ev.TryComplete:
                won = type(prev) is ev.Complete and prev.op == c.op and prev.via in ("try", "check")
                if c.result != won:
                    self.flag("try-complete-calls", (j - 1, j) if won else (j,),
                              f"tryComplete of op {c.op} at {c.now} returned {c.result}, but "
                              + ("it completed the op" if won else "no Complete(via=try/check) of the op "
                                 "comes right before it"))
            elif type(c) is ev.Complete and c.via in ("try", "check"):
                nxt = events[j + 1] if j + 1 < len(events) else None
                if not (type(nxt) is ev.TryComplete and nxt.op == c.op and nxt.result):
                    self.flag("try-complete-calls", (j,), f"op {c.op} completed via {c.via} at {c.now} outside a "
                              "tryComplete call (no TryComplete(result=true) of it follows)")
        t = type(e)
        if t in (ev.TryCompleteElseWatch, ev.Resubmit):
            self.tries_of_watch(i, e, calls)
        elif t is ev.CheckAndComplete:
            self.tries_of_check(i, e, calls)
        else:
            for j in calls:
                c = events[j]
                self.flag("try-complete-calls", (j, i), f"tryComplete of op {c.op} ran at {c.now} inside a "
                          f"{e.kind} request, which never calls it")

    def tries_of_watch(self, i: int, e: Any, calls: list[int]) -> None:
        """T3: ``tryCompleteElseWatch`` tries once; if that fails it watches the keys and tries
        once more (``safeTryCompleteOrElse``), whatever state the operation is in."""
        events = self.events
        mine = [j for j in calls if events[j].op == e.op]
        for j in calls:
            if events[j].op != e.op:
                self.flag("try-complete-calls", (j, i), f"tryComplete of op {events[j].op} ran inside "
                          f"tryCompleteElseWatch of op {e.op}")
        what = f"{'resubmit' if type(e) is ev.Resubmit else 'tryCompleteElseWatch'} of op {e.op} at {e.now}"
        if not mine:
            self.flag("try-complete-calls", (i,), f"{what} called no tryComplete (Kafka tries before watching)")
        elif not events[mine[0]].result and len(mine) == 1:
            self.flag("try-complete-calls", (mine[0], i), f"{what} called tryComplete once, which returned "
                      "false, and not again after watching the keys (the second try closes the lost-wakeup "
                      "window, KAFKA-1952)")
        elif events[mine[0]].result and len(mine) > 1:
            self.flag("try-complete-calls", (mine[0], mine[1], i), f"{what} called tryComplete again after the "
                      "first call completed the op")
        elif len(mine) > 2:
            self.flag("try-complete-calls", (*mine, i), f"{what} called tryComplete {len(mine)} times (Kafka: "
                      "at most twice)")

    def tries_of_check(self, i: int, e: ev.CheckAndComplete, calls: list[int]) -> None:
        """T4: ``checkAndComplete(key)`` tries each uncompleted operation once per occurrence in
        the key's list, until one try completes it; never a completed operation (KAFKA-17848)."""
        events = self.events
        occ = self.occ.get(e.key, {})
        by_op: dict[int, list[int]] = {}
        for j in calls:
            by_op.setdefault(events[j].op, []).append(j)
        for op, js in by_op.items():
            done = self.completed_at.get(op)
            n = occ.get(op, 0)
            if done is not None:
                self.flag("try-complete-calls", (done, js[0], i), f"checkAndComplete({e.key!r}) at {e.now} called "
                          f"tryComplete of op {op}, which completed at {events[done].now} (a completed "
                          "operation is dropped from the list untried, KAFKA-17848)")
            elif n == 0:
                self.flag("try-complete-calls", (js[0], i), f"checkAndComplete({e.key!r}) at {e.now} called "
                          f"tryComplete of op {op}, which is not in the key's list")
            else:
                won = [j for j in js if events[j].result]
                if won and won[0] != js[-1]:
                    self.flag("try-complete-calls", (won[0], js[-1], i), f"checkAndComplete({e.key!r}) at {e.now} "
                              f"called tryComplete of op {op} again after it completed the op")
                elif len(js) > n or (not won and len(js) != n):
                    w = self.watchers.get(e.key, {}).get(op)
                    self.flag("try-complete-calls", ((w,) if w is not None else ()) + (js[0], i),
                              f"checkAndComplete({e.key!r}) at {e.now} called tryComplete of op {op} {len(js)} "
                              f"time(s); it is listed {n} time(s) under the key and "
                              + ("the last call completed it" if won else "no call completed it"))
        for op, n in occ.items():
            if op not in by_op and op not in self.completed_at:
                w = self.watchers.get(e.key, {}).get(op)
                self.flag("try-complete-calls", ((w,) if w is not None else ()) + (i,),
                          f"checkAndComplete({e.key!r}) at {e.now} did not call tryComplete of op {op}, which is "
                          f"listed {n} time(s) under the key and not completed")

    # -- timer ------------------------------------------------------------------------------------
    def add(self, i: int, e: ev.Add, window: list[int]) -> None:
        p = self.p
        if e.exp != e.now + e.delay:
            self.flag("well-formed", (i,), f"task {e.task} added at {e.now} with delay {e.delay} "
                      f"reports exp {e.exp}, not now + delay = {e.now + e.delay}")
        transient = p.fires_inside_add and e.delay <= 0
        if transient:
            # Kafka's MockTimer runs it inside add and makes no entry.  A Kafka caller re-adds by
            # cancelling the old task (TimerTask.delayMs is final), so the old entry never runs.
            old = self.live.pop(e.task, None)
            if old is not None:
                self.superseded_by[old] = i
            fired_inside = False
            for j in window:
                c = self.events[j]
                if type(c) is ev.Fire and not fired_inside and c.task == e.task and c.exp == e.exp:
                    fired_inside = True
                    self.fired_at[i] = j
                    self.sched_of_task.setdefault(e.task, []).append(i)
                    continue
                self.other_in_window(j, c, e)
            if not fired_inside:
                self.sched_of_task.setdefault(e.task, []).append(i)
                self.flag("no-lost-task", (i,), f"task {e.task} added at {e.now} with delay {e.delay} <= 0 "
                          f"did not fire inside add, as {p.name} requires")
            return
        old = self.live.get(e.task)
        if old is not None:
            self.superseded_by[old] = i
        self.live[e.task] = i
        self.sched_of_task.setdefault(e.task, []).append(i)
        # due by the end of an advance to fire_window's hi: the profile's earliest time, widened by
        # a declared lateness (without one, hi is earliest(exp) itself)
        heapq.heappush(self.due_heap, (p.fire_window(e.exp, e.now)[1], i))
        if p.size_counts_superseded:  # MockTimer queues the entry until an advance past exp pops it
            heapq.heappush(self.mock_queue, e.exp)
        for j in window:
            c = self.events[j]
            if type(c) is ev.Fire:
                self.fire(j, c, in_add=(c.task == e.task))
            else:
                self.other_in_window(j, c, e)

    def other_in_window(self, j: int, c: Any, ctx: Any) -> None:
        if type(c) is ev.Fire:
            self.fire(j, c, in_add=False)
        elif type(c) is ev.Complete:
            self.complete(j, c, ctx)
        elif type(c) is ev.Purge:
            self.purge(j, c)

    def fire(self, j: int, f: ev.Fire, in_add: bool) -> None:
        p = self.p
        sid = self.live.get(f.task)
        if sid is not None and self.events[sid].exp == f.exp:
            add = self.events[sid]
            del self.live[f.task]
            self.fired_at[sid] = j
            if p.may_fire(f.exp, f.now, add.delay, in_add=in_add):
                pass
            elif p.granularity.earliness_ms:  # a declared earliness: only before the window is wrong
                if f.now < p.fire_window(f.exp, add.now)[0]:
                    self.outside_granularity((sid, j), f"task {f.task} (exp {f.exp}) fired at {f.now}, before "
                                             f"{self.window_text(add)}")
            else:
                self.flag("no-early-fire", (sid, j), f"task {f.task} (exp {f.exp}) fired at {f.now}, before "
                          f"its earliest allowed time {p.earliest(f.exp)} {self.rule(p)}")
            if not _lateness_ok(p, f.exp, f.now):
                self.flag("late-fire", (sid, j), f"task {f.task} (exp {f.exp}) fired at {f.now}, "
                          f"{f.now - f.exp} ms late; the profile allows {p.lateness_ms} ms")
            return
        # No live schedule with this expiration: find which schedule this fire claims to be.
        claimed = None
        for s in reversed(self.sched_of_task.get(f.task, ())):
            if self.events[s].exp == f.exp:
                claimed = s
                break
        if claimed is None:
            prior = self.sched_of_task.get(f.task)
            if not prior:
                self.flag("fire-unknown-task", (j,),
                          f"task {f.task} fired at {f.now} (exp {f.exp}) but was never added")
            else:
                last = prior[-1]
                self.flag("fire-once", (last, j), f"task {f.task} fired at {f.now} with exp {f.exp}, which no "
                          f"add of it produced (its last add, at {self.events[last].now}, gave exp "
                          f"{self.events[last].exp})")
        elif claimed in self.fired_at:
            k = self.fired_at[claimed]
            self.flag("fire-once", (claimed, k, j), f"task {f.task} (exp {f.exp}) fired twice for one add: "
                      f"at {self.events[k].now} and again at {f.now}")
        elif claimed in self.cancelled_at:
            c = self.cancelled_at[claimed]
            self.flag("no-fire-after-cancel", (claimed, c, j), f"task {f.task} (exp {f.exp}) fired at {f.now} "
                      f"after it was cancelled at {self.events[c].now} (and not re-added)")
        elif claimed in self.superseded_by:
            n = self.superseded_by[claimed]
            self.flag("fire-once", (claimed, n, j), f"task {f.task}: the entry with exp {f.exp} fired at {f.now} "
                      f"although a re-add at {self.events[n].now} (exp {self.events[n].exp}) had replaced it")
        else:  # pragma: no cover - every schedule is live, fired, cancelled or superseded
            self.flag("fire-once", (claimed, j), f"task {f.task} (exp {f.exp}) fired at {f.now} unexpectedly")

    def cancel(self, i: int, e: ev.Cancel) -> None:
        sid = self.live.pop(e.task, None)
        if sid is not None:
            self.cancelled_at[sid] = i
        if e.pending and sid is None:
            prev = self.sched_of_task.get(e.task)
            idx = (prev[-1], i) if prev else (i,)
            self.flag("cancel-result", idx, f"cancel of task {e.task} at {e.now} reported a pending entry, "
                      "but the task had no live schedule")
        elif not e.pending and sid is not None:
            self.flag("cancel-result", (sid, i), f"cancel of task {e.task} at {e.now} reported nothing pending, "
                      f"but its add at {self.events[sid].now} (exp {self.events[sid].exp}) had not fired")

    def advance(self, i: int, e: ev.Advance) -> None:
        t = e.now
        p, pp = self.p, self.pp
        heap = self.due_heap
        while heap and heap[0][0] <= t:
            due, sid = heapq.heappop(heap)
            add = self.events[sid]
            if self.live.get(add.task) == sid and sid not in self.lost_reported:
                self.lost_reported.add(sid)
                if p.granularity.lateness_ms:  # a declared lateness: the window's end has passed
                    self.outside_granularity((sid, i), f"task {add.task} (exp {add.exp}, added at {add.now}) had "
                                             f"not fired by the end of the advance to {t}, though "
                                             f"{self.window_text(add)} ends at {due}")
                    continue
                self.flag("no-lost-task", (sid, i), f"task {add.task} (exp {add.exp}) had not fired by the end "
                          f"of the advance to {t}, though its earliest time {p.earliest(add.exp)} "
                          f"{self.rule(p)} had come")
        oh = self.op_heap
        while oh and oh[0][0] <= t:
            _, op, timed = heapq.heappop(oh)
            if op in self.on_timer and self.op_timed.get(op) == timed and op not in self.op_lost_reported:
                self.op_lost_reported.add(op)
                deadline = self.deadline(op)
                self.flag("no-lost-operation", (timed, i), f"op {op} (deadline {deadline}) "
                          f"had not completed by the end of the advance to {t}, though its deadline "
                          f"window {pp.earliest(deadline)} {self.rule(pp)} had come")

    def pop_mock_queues(self, t: int) -> None:
        for q in (self.mock_queue, self.mock_op_queue):  # (empty unless a profile counts MockTimer's queue)
            while q and q[0] < t:
                heapq.heappop(q)

    def observe(self, i: int, e: ev.Observe) -> None:
        if e.what == "size":
            mock = self.p.size_counts_superseded
            want = len(self.mock_queue) if mock else len(self.live)
            if e.value != want:
                self.flag("size", (i,), f"size() returned {e.value} at {e.now}; the history leaves {want} "
                          + ("entries in MockTimer's queue" if mock else "tasks pending"))
        elif e.what == "num_delayed":
            want = self.delayed()
            if e.value != want:
                self.flag("num-delayed", (i,), f"num_delayed() returned {e.value} at {e.now}; the history "
                          f"leaves {want} operations on the purgatory's timer")

    def delayed(self, handed_over: frozenset[int] = frozenset()) -> int:
        """The purgatory timer's size; ``handed_over``: operations already handed to its executor
        whose completion the history shows later (they left the timer)."""
        if self.pp.size_counts_superseded:
            return len(self.mock_op_queue)
        return len(self.on_timer) - len(self.on_timer & handed_over)

    # -- purgatory --------------------------------------------------------------------------------
    def watch(self, i: int, e: ev.TryCompleteElseWatch, window: list[int]) -> None:
        if e.op in self.op_watch:
            self.flag("well-formed", (self.op_watch[e.op], i), f"op {e.op} is watched twice")
        self.op_watch[e.op] = i
        self.completable[e.op] = None
        by_try = None
        for j in window:
            c = self.events[j]
            if type(c) is ev.Complete:
                self.complete(j, c, e)
                if c.op == e.op and c.via == "try":
                    by_try = j
            else:
                self.other_in_window(j, c, e)
        if e.result != (by_try is not None):
            idx = (by_try, i) if by_try is not None else (i,)
            self.flag("watch-result", idx, f"tryCompleteElseWatch of op {e.op} at {e.now} returned {e.result}, "
                      + ("but it completed the op (Complete via=try)" if by_try is not None
                         else "but no Complete(via=try) of the op precedes it"))
        for k in e.keys:
            self.watchers.setdefault(k, {})[e.op] = i
        self.listed(e.op, e.keys)
        if by_try is not None and e.result:
            # Completed inside the call, never on the timer.  By the first try it was never
            # watched; by the second (the race KAFKA-1952 closes) it sits, completed, in its
            # watch lists until a check or a purge drops it.  The history cannot tell the two
            # tries apart, so it is listed as a completed watcher: every property then accepts
            # both (a completed watcher may or may not be returned by cancelForKey).
            return
        if e.op in self.completed_at:
            return  # its timeout fired inside add (delay <= 0)
        self.timed(i, e.op, e.delay, "watched")

    def timed(self, i: int, op: int, delay: int, how: str) -> None:
        """Request ``i`` (a watch or a resubmit) left ``op`` uncompleted: it is on the timer, its
        deadline ``now + delay`` (a resubmit's new entry replaces the old one)."""
        pp = self.pp
        now = self.events[i].now
        self.on_timer.add(op)
        self.op_cancelled_at.pop(op, None)  # a fresh timer entry: it can expire again
        self.op_timed[op] = i
        deadline = now + delay
        heapq.heappush(self.op_heap, (pp.earliest(deadline), op, i))
        if pp.fires_inside_add and delay <= 0:
            self.flag("no-lost-operation", (i,), f"op {op} {how} at {now} with timeout {delay} <= 0 "
                      f"did not expire inside the call, as {pp.name} requires")
        elif pp.size_counts_superseded:
            # MockTimer queues a new entry; a resubmitted operation's old one stays queued, cancelled
            heapq.heappush(self.mock_op_queue, deadline)

    def deadline(self, op: int) -> int:
        """The deadline of ``op``'s current timer entry: the time of the watch or resubmit that
        made it plus the timeout of the op's watch (Kafka's ``delayMs`` is final)."""
        return self.events[self.op_timed.get(op, self.op_watch[op])].now + self.events[self.op_watch[op]].delay

    def listed(self, op: int, keys: tuple[Any, ...]) -> None:
        """A watch or resubmit that left ``op`` uncompleted appended it to each key's list."""
        if op in self.completed_at:
            return
        for k in keys:
            d = self.occ.setdefault(k, {})
            d[op] = d.get(op, 0) + 1

    def resubmit(self, i: int, e: ev.Resubmit, window: list[int]) -> None:
        """``tryCompleteElseWatch`` of an operation watched before (SEMANTICS.md, "Resubmit")."""
        if e.op not in self.op_watch:
            self.flag("well-formed", (i,), f"resubmit names op {e.op}, which was never watched")
            self.caused(window, e)
            return
        was_done = self.completed_at.get(e.op)
        if was_done is None:
            # re-timed inside this call, before any timeout the call itself runs
            self.op_cancelled_at.pop(e.op, None)
        by_try = None
        for j in window:
            c = self.events[j]
            if type(c) is ev.Complete:
                self.complete(j, c, e)
                if c.op == e.op and c.via == "try":
                    by_try = j
            else:
                self.other_in_window(j, c, e)
        if e.result != (by_try is not None):
            idx = (by_try, i) if by_try is not None else ((was_done, i) if was_done is not None else (i,))
            self.flag("watch-result", idx, f"resubmit of op {e.op} at {e.now} returned {e.result}, "
                      + ("but it completed the op (Complete via=try)" if by_try is not None
                         else "but no Complete(via=try) of the op precedes it"
                         + (f" (it completed at {self.events[was_done].now})" if was_done is not None else "")))
        # Listed again on every key unless completed (current Kafka skips the keys of a completed
        # operation; Kafka 2.7-3.9's Scala purgatory listed it anyway): a completed op counts as a
        # completed watcher, which cancelForKey may or may not return.
        for k in e.keys:
            self.watchers.setdefault(k, {})[e.op] = i
        self.listed(e.op, e.keys)
        if e.op in self.completed_at:
            return  # completed before (never re-timed) or inside this call
        self.timed(i, e.op, self.events[self.op_watch[e.op]].delay, "resubmitted")

    def complete(self, j: int, c: ev.Complete, ctx: Any) -> None:
        pp = self.pp
        w_idx = self.op_watch.get(c.op)
        if w_idx is None:
            self.flag("well-formed", (j,), f"op {c.op} completed at {c.now} but was never watched")
            return
        if c.op in self.completed_at:
            k = self.completed_at[c.op]
            self.flag("complete-once", (k, j), f"op {c.op} completed twice: via {self.events[k].via} at "
                      f"{self.events[k].now} and via {c.via} at {c.now}")
            return
        self.completed_at[c.op] = j
        self.on_timer.discard(c.op)
        w = self.events[w_idx]
        t = type(ctx)
        ok = True
        if c.via == "try":
            ok = t in (ev.TryCompleteElseWatch, ev.Resubmit) and ctx.op == c.op
        elif c.via == "check":
            ok = t is ev.CheckAndComplete and c.op in self.watchers.get(ctx.key, ())
        elif c.via == "force":
            ok = t is ev.ForceComplete and ctx.op == c.op
        elif c.via == "expire":
            in_add = t in (ev.TryCompleteElseWatch, ev.Resubmit) and ctx.op == c.op
            ok = t is ev.Advance or in_add
            if c.op in self.op_cancelled_at:
                k = self.op_cancelled_at[c.op]
                self.flag("expire-rule", (w_idx, k, j), f"op {c.op} expired at {c.now} although cancelForKey at "
                          f"{self.events[k].now} had cancelled its timer entry")
            # the entry that fired: a resubmit inside whose window this is, or the op's current one
            timed = self.ctx_i if in_add and self.ctx_i is not None else self.op_timed.get(c.op, w_idx)
            start = self.events[timed]
            deadline = start.now + w.delay
            how = "resubmitted" if type(start) is ev.Resubmit else "watched"
            if not pp.may_fire(deadline, c.now, w.delay, in_add=in_add):
                self.flag("no-early-expire", (timed, j), f"op {c.op} ({how} at {start.now}, timeout {w.delay}, "
                          f"deadline {deadline}) expired at {c.now}, before its deadline window "
                          f"{pp.earliest(deadline)} {self.rule(pp)}")
            if not _lateness_ok(pp, deadline, c.now):
                self.flag("late-fire", (timed, j), f"op {c.op} (deadline {deadline}) expired at {c.now}, "
                          f"{c.now - deadline} ms late; the profile allows {pp.lateness_ms} ms")
        else:
            self.flag("well-formed", (j,), f"Complete of op {c.op} has unknown via {c.via!r}")
            return
        if not ok:
            where = f"a {ctx.kind} request" if ctx is not None else "no request (the history ends)"
            detail = f" of key {ctx.key!r}, which op {c.op} does not watch" if t is ev.CheckAndComplete else ""
            ctx_i = self.ctx_i
            self.flag("complete-context", (j,) + ((ctx_i,) if ctx_i is not None else ()),
                      f"op {c.op} completed via {c.via} at {c.now} inside {where}{detail}")

    def check(self, i: int, e: ev.CheckAndComplete, vias: list[tuple[int, ev.Complete]]) -> None:
        by_check = [j for j, c in vias if c.via == "check"]
        if e.completed != len(by_check):
            self.flag("check-count", tuple(by_check) + (i,), f"checkAndComplete({e.key!r}) at {e.now} returned "
                      f"{e.completed}, but {len(by_check)} Complete(via=check) precede it")
        ws = self.watchers.get(e.key)
        if ws is None:
            return
        for op, w_idx in list(ws.items()):
            if op in self.completed_at:
                del ws[op]  # the walk drops completed operations
                continue
            sc = self.completable.get(op)
            if sc is not None:
                self.flag("no-lost-wakeup", (w_idx, sc, i), f"checkAndComplete({e.key!r}) at {e.now} left op {op} "
                          f"uncompleted, though it watches {e.key!r} and was made completable at "
                          f"{self.events[sc].now}")
        if not ws:
            del self.watchers[e.key]
        occ = self.occ.get(e.key)
        if occ:  # the walk drops completed operations
            for op in [op for op in occ if op in self.completed_at]:
                del occ[op]

    def force(self, i: int, e: ev.ForceComplete, vias: list[tuple[int, ev.Complete]]) -> None:
        if e.op not in self.op_watch:
            self.flag("well-formed", (i,), f"force_complete names op {e.op}, which was never watched")
            return
        mine = [j for j, c in vias if c.op == e.op and c.via == "force"]
        before = self.completed_at.get(e.op)
        was_done = before is not None and not mine
        if e.result != bool(mine):
            self.flag("force-result", tuple(mine) + (i,), f"forceComplete of op {e.op} at {e.now} returned "
                      f"{e.result}, but " + ("it completed the op" if mine else "no Complete(via=force) precedes it"))
        elif e.result == was_done:
            self.flag("force-result", ((before,) if before is not None else ()) + (i,),
                      f"forceComplete of op {e.op} at {e.now} returned {e.result} although the op was "
                      + ("completed already" if was_done else "not completed before"))

    def cancel_for_key(self, i: int, e: ev.CancelForKey) -> None:
        self.occ.pop(e.key, None)
        ws = self.watchers.pop(e.key, {})
        returned = set(e.ops)
        for op in e.ops:
            if op not in ws:
                self.flag("cancel-for-key-result", (i,), f"cancelForKey({e.key!r}) at {e.now} returned op {op}, "
                          f"which does not watch {e.key!r}")
        for op, w_idx in ws.items():
            if op not in returned and op not in self.completed_at:
                self.flag("cancel-for-key-result", (w_idx, i), f"cancelForKey({e.key!r}) at {e.now} did not return "
                          f"op {op}, which watches {e.key!r} and is not completed")
        for op in returned & ws.keys():
            if op in self.on_timer:
                self.on_timer.discard(op)
                self.op_cancelled_at[op] = i

    def purge(self, j: int, e: ev.Purge, handed_over: frozenset[int] = frozenset()) -> None:
        want = self.delayed(handed_over)
        if e.delayed != want:
            pending = len(self.on_timer & handed_over) if not self.pp.size_counts_superseded else 0
            note = (f" ({pending} more left it for the executor in this advance and expire after the purge)"
                    if pending else "")
            self.flag("num-delayed", (j,), f"the purge at {e.now} reports {e.delayed} delayed operations; the "
                      f"history leaves {want} on the purgatory's timer{note}")


def check_history(history: Iterable[Any], profile: Profile, *, purgatory_profile: Profile | None = None,
                  z3: bool = False, stop_at_first: bool = False, reports_tries: bool | None = None,
                  minimise: bool = True) -> Verdict:
    """Judge ``history`` against :data:`PROPERTIES` under ``profile`` (timer) and
    ``purgatory_profile`` (operation deadlines; default: ``profile``).

    ``reports_tries``: the implementation reports each ``tryComplete`` call (a ``TryComplete``
    event), so ``try-complete-calls`` judges their pattern; None (the default) infers it from the
    history (any ``TryComplete`` event); False judges none (an implementation that does not report
    them; any it reports anyway are ignored).

    ``stop_at_first`` returns after the first violation.  ``z3``: also re-judge every property
    instance with Z3 (slow; for small histories).  When there are violations, Z3 confirms each one
    and shrinks its ``indices`` to an unsat core, whatever ``z3`` says, unless ``minimise`` is
    False (the properties violated are the same; only the events each violation names differ).
    """
    events = list(history)
    judge = _Judge(profile, purgatory_profile or profile, stop_at_first)
    violations = judge.run(events, reports_tries)
    verdict = Verdict(not violations, violations)
    if (violations and minimise) or z3:
        from .checker_z3 import confirm  # z3 is imported only here

        confirm(verdict, events, profile, purgatory_profile or profile, full=z3)
    return verdict


# ------------------------------------------------------------------ concurrent logs --------------
def check_completions(events: Iterable[Any], profile: Profile, *, deadline: Callable[[int], int | None] | None = None,
                      steps: Sequence[int] | None = None) -> list[Finding]:
    """The purgatory's exactly-once and expiry rules on a concurrent log (module doc, "Concurrent
    logs"): ``onComplete`` runs at most once per operation (``exactly-once``); ``onExpiration`` runs
    only when the operation's latest completion was the timer's (via=expire), and never before the
    firing window of its deadline under ``profile`` (``expiration``).

    ``deadline(op)`` gives an operation's deadline; by default the ``TryCompleteElseWatch`` events
    seen so far give it (watch time + timeout).  ``steps``: the step of each event, quoted in the
    messages.  Findings: every ``expiration`` in log order, then every ``exactly-once``."""
    out: list[Finding] = []
    completes: dict[int, list[tuple[int | None, ev.Complete]]] = {}
    watched: dict[int, int] = {}
    for i, e in enumerate(events):
        if isinstance(e, ev.TryCompleteElseWatch):
            watched[e.op] = e.now + e.delay
        elif isinstance(e, ev.Complete):
            completes.setdefault(e.op, []).append((steps[i] if steps is not None else None, e))
        elif isinstance(e, ev.Expire):
            prev = completes.get(e.op)
            if not prev or prev[-1][1].via != "expire":
                out.append(Finding("expiration", f"onExpiration(op{e.op}) without the timer completing it"))
            exp = deadline(e.op) if deadline is not None else watched.get(e.op)
            if exp is not None and e.now < profile.earliest(exp):
                out.append(Finding("expiration", f"op{e.op} expired at {e.now}, before its window "
                                                 f"{profile.earliest(exp)}"))
    for op, cs in completes.items():
        if len(cs) > 1:
            at = f" at steps {', '.join(str(s) for s, _ in cs)}" if steps is not None else ""
            out.append(Finding("exactly-once", f"onComplete(op{op}) ran {len(cs)} times (via "
                                               f"{', '.join(c.via for _, c in cs)}{at})"))
    return out
