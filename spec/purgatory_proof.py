"""The purgatory proven for any number of operations and keys: per-operation invariants, with Z3.

Models Kafka's ``DelayedOperation`` and ``DelayedOperationPurgatory`` (reference/operation.py,
reference/purgatory.py; SEMANTICS.md "Purgatory", "Resubmit", "tryComplete calls", "Purge",
"The executor race").

**The state of one operation** ``O`` and one key ``K`` (:class:`State`): the atomic ``completed``
flag, how often ``onComplete`` and ``onExpiration`` ran, who won the flag (``via``), the
expiration callbacks won but not yet run, whether O's condition holds (``completable``), where
O's ``tryCompleteElseWatch`` is (``phase``: 0 no call in progress, 1 first try failed (O's lock
held), 2 watched (lock held), 3 second try failed (lock released), 4 timer entry added, its
recheck pending), whether O was ever handed to it, whether K is one of its keys and O is in K's
list, whether a ``cancelForKey`` took K's list or O's timer entry, O's live timer entry, the
entries of O handed to the timer's executor and not yet run, and one tracked
``checkAndComplete(K)``: in progress, whether its walk reached O, whether O was in the list it
walks (the snapshot), and ``announced``: a check of K began while O was completable.

**The abstraction and why it is sound.**  Every other operation and key enters O's state only
through what it can do to O, and each of those is a step of :func:`transition` with its guard
no stronger than Kafka's: a ``checkAndComplete`` of another key (or an untracked one of K)
completes O when it holds O's lock and O is completable, and drops O from K's list if it walks
K; the timer hands O's entry over (unlinking it) and its executor runs ``run()``, at any time
relative to everything else; a purge drops O from K's list if O is completed; a
``cancelForKey`` of another key cancels O's timer entry; an outside ``forceComplete`` completes
O in any phase.  Other operations change nothing else of O's state (their own lists and entries
are theirs), so the transition relation over-approximates what any number of operations and
keys can do to O: an invariant inductive under it holds for every operation and key of every
run.  The purge's counters (``estimated``, ``numDelayed``) are sums over all operations: the
purge's rule is proven for any values of them (``pp-purge-threshold``), and ``pp-executor-race``
shows O's share of ``numDelayed`` does not depend on the executor order; no bound on the
counters themselves is claimed (spec/PROOFS.md section 5 says why).

**Concurrency assumed (Kafka's locks).**  Each step is atomic: ``forceComplete``'s compare-and-set
(an ``AtomicBoolean``); ``safeTryCompleteOrElse`` holds O's lock from its first try to its second
(steps 1-2), so no other ``tryComplete`` of O runs in between and a walk that reaches O waits;
the timer's flush unlinks an entry before handing it over (``numDelayed`` drops at once); a walk
visits each operation of the list it took (the reference's snapshot).  O's condition, once true,
stays true (Kafka's operations are satisfied by events that do not un-happen).  One
``tryCompleteElseWatch`` of O runs at a time (a resubmit comes after the previous call returned).
Every interleaving of these steps is covered, so both executor orders of the executor race (the
purge check before or after the executor runs an expired operation, and every split) are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import z3

from .lemmas import Lemma, Query

__all__ = ["KAFKA", "LEMMAS", "MUTATIONS", "PurgatoryRules", "State", "invariant", "witness"]

#: who won the completed flag (the ``via`` of wheelspec's ``Complete`` event); 0: nobody yet
NONE, TRY, CHECK, EXPIRE, FORCE = 0, 1, 2, 3, 4


@dataclasses.dataclass(frozen=True)
class PurgatoryRules:
    """The purgatory's rules as the proof encodes them.  ``PurgatoryRules()`` is Kafka's; each
    field names one rule a mutation can break."""

    #: forceComplete flips ``completed`` with a compare-and-set (Kafka) -- False: check, then set
    atomic_flag: bool = True
    #: run() calls onExpiration only if its forceComplete won (Kafka) -- False: always
    expire_checks: bool = True
    #: safeTryCompleteOrElse tries again after watching (Kafka) -- False: one try (KAFKA-1952)
    second_try: bool = True
    #: a purge drops only completed operations (Kafka) -- False: every listed one
    purge_checks: bool = True
    #: the purge fires iff ``estimated - numDelayed > purgeInterval`` (Kafka) -- False: ``>=``
    purge_strict: bool = True
    #: a purge sets ``estimated := numDelayed`` (Kafka) -- False: ``:= 0``
    purge_to_delayed: bool = True
    #: the timer's flush unlinks an entry before handing it over (Kafka) -- False: at its run
    unlink_at_flush: bool = True


KAFKA = PurgatoryRules()

#: name -> (rules, what the mutation does)
MUTATIONS: dict[str, tuple[PurgatoryRules, str]] = {
    "flag-not-atomic": (PurgatoryRules(atomic_flag=False), "forceComplete reads completed, then sets it"),
    "expire-unchecked": (PurgatoryRules(expire_checks=False), "run() calls onExpiration even when forceComplete lost"),
    "no-second-try": (PurgatoryRules(second_try=False), "tryCompleteElseWatch does not try again after watching"),
    "purge-unchecked": (PurgatoryRules(purge_checks=False), "a purge drops uncompleted operations too"),
    "purge-ge": (PurgatoryRules(purge_strict=False), "the purge fires iff estimated - numDelayed >= purgeInterval"),
    "purge-to-zero": (PurgatoryRules(purge_to_delayed=False), "a purge sets estimated := 0"),
    "unlink-at-run": (PurgatoryRules(unlink_at_flush=False), "an expired entry stays counted until its run()"),
}

_BOOLS = ("done", "completable", "submitted", "in_k", "listed", "cancelled_k", "cancelled", "timed",
          "checking", "visited", "snap", "announced")
_INTS = ("phase", "nc", "ne", "via", "pending_cb", "handed")


class State:
    """The symbolic state of one operation O and one key K (module docstring)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

        def b(name: str) -> z3.BoolRef:
            return z3.Bool(f"{name}{tag}")

        def i(name: str) -> z3.ArithRef:
            return z3.Int(f"{name}{tag}")

        self.done, self.completable, self.submitted, self.in_k = b("done"), b("completable"), b("submitted"), b("in_k")
        self.listed, self.cancelled_k, self.cancelled, self.timed = (b("listed"), b("cancelled_k"), b("cancelled"),
                                                                      b("timed"))
        self.checking, self.visited, self.snap, self.announced = b("checking"), b("visited"), b("snap"), b("announced")
        self.phase, self.nc, self.ne, self.via = i("phase"), i("nc"), i("ne"), i("via")
        self.pending_cb, self.handed = i("pending_cb"), i("handed")

    def get(self, name: str) -> z3.ExprRef:
        v: z3.ExprRef = getattr(self, name)
        return v

    def shown(self) -> dict[str, z3.ExprRef]:
        return {f"{n}{self.tag}": (z3.If(self.get(n), 1, 0) if n in _BOOLS else self.get(n))
                for n in _BOOLS + _INTS}


def initial(s: State) -> z3.BoolRef:
    """No call made yet: nothing completed, listed, timed or checked; the condition and whether K
    is one of O's keys are free."""
    return z3.And(s.phase == 0, s.nc == 0, s.ne == 0, s.via == NONE, s.pending_cb == 0, s.handed == 0,
                  *(z3.Not(s.get(n)) for n in _BOOLS if n not in ("completable", "in_k")))


# ------------------------------------------------------------------ the steps -------------------
class _Step:
    """One micro-step: post-state values by name (the rest unchanged) under a guard."""

    def __init__(self, pre: State) -> None:
        self.pre = pre
        self.upd: dict[str, z3.ExprRef] = {}

    def __getitem__(self, name: str) -> z3.ExprRef:
        return self.upd.get(name, self.pre.get(name))

    def complete(self, r: PurgatoryRules, cond: z3.BoolRef, via: int, stale: z3.BoolRef) -> z3.BoolRef:
        """``forceComplete`` when ``cond``: wins iff the flag was clear (or, without the atomic
        compare-and-set, another thread's stale read saw it clear); the winner cancels the timer
        entry and runs onComplete.  Returns whether it won."""
        free = z3.Not(self["done"]) if r.atomic_flag else z3.Or(z3.Not(self["done"]), stale)
        won = z3.And(cond, free)
        self.upd.update(done=z3.Or(self["done"], won), nc=self["nc"] + z3.If(won, 1, 0),
                        via=z3.If(won, via, self["via"]), timed=z3.And(self["timed"], z3.Not(won)))
        return won

    def relation(self, post: State, guard: z3.BoolRef) -> z3.BoolRef:
        return z3.And(guard, *(post.get(n) == self[n] for n in _BOOLS + _INTS))


StepBuilder = Callable[[_Step], z3.BoolRef]


def _call_steps(r: PurgatoryRules, s: State, stale: z3.BoolRef) -> list[StepBuilder]:
    """The steps of O's own tryCompleteElseWatch (and of a resubmit), and the satisfying event."""

    def event(st: _Step) -> z3.BoolRef:  # the satisfying event
        st.upd["completable"] = z3.BoolVal(True)
        return z3.BoolVal(True)

    def try1(st: _Step) -> z3.BoolRef:  # tryCompleteElseWatch (or a resubmit): the first try
        won = st.complete(r, s.completable, TRY, stale)
        st.upd.update(submitted=z3.BoolVal(True), phase=z3.If(won, 0, 1))
        return s.phase == 0

    def watch(st: _Step) -> z3.BoolRef:  # list O on its keys, skipped once O is completed
        listing = z3.And(s.in_k, z3.Not(s.done))
        st.upd.update(listed=z3.Or(s.listed, listing), cancelled_k=z3.And(s.cancelled_k, z3.Not(listing)),
                      phase=z3.IntVal(2))
        return s.phase == 1

    def try2(st: _Step) -> z3.BoolRef:  # the second try, still under O's lock
        won = st.complete(r, s.completable, TRY, stale) if r.second_try else z3.BoolVal(False)
        st.upd["phase"] = z3.If(won, 0, 3)
        return s.phase == 2

    def timer_add(st: _Step) -> z3.BoolRef:  # if not completed: timeoutTimer.add(op)
        st.upd.update(timed=z3.Or(s.timed, z3.Not(s.done)), cancelled=z3.And(s.cancelled, s.done),
                      phase=z3.If(s.done, 0, 4))
        return s.phase == 3

    def recheck(st: _Step) -> z3.BoolRef:  # completed meanwhile: cancel the fresh entry
        st.upd.update(timed=z3.And(s.timed, z3.Not(s.done)), phase=z3.IntVal(0))
        return s.phase == 4

    return [event, try1, watch, try2, timer_add, recheck]


def _other_steps(r: PurgatoryRules, s: State, stale: z3.BoolRef, choice: z3.BoolRef) -> list[StepBuilder]:
    """What the timer, its executor, the walks, the purge, cancelForKey and outside callers do to O."""
    unlocked = z3.And(s.phase != 1, s.phase != 2)  # O's lock is free outside steps 1-2

    def force(st: _Step) -> z3.BoolRef:  # an outside forceComplete
        st.complete(r, z3.BoolVal(True), FORCE, stale)
        return z3.BoolVal(True)

    def flush(st: _Step) -> z3.BoolRef:  # the timer hands the live entry to its executor
        st.upd.update(timed=z3.And(z3.BoolVal(not r.unlink_at_flush), s.timed), handed=s.handed + 1)
        return s.timed

    def run(st: _Step) -> z3.BoolRef:  # the executor runs it: forceComplete, then onExpiration
        won = st.complete(r, z3.BoolVal(True), EXPIRE, stale)
        if not r.unlink_at_flush:
            st.upd["timed"] = z3.BoolVal(False)
        st.upd.update(handed=s.handed - 1,
                      pending_cb=s.pending_cb + (z3.If(won, 1, 0) if r.expire_checks else 1))
        return s.handed >= 1

    def callback(st: _Step) -> z3.BoolRef:
        st.upd.update(pending_cb=s.pending_cb - 1, ne=s.ne + 1)
        return s.pending_cb >= 1

    def check_start(st: _Step) -> z3.BoolRef:  # the tracked checkAndComplete(K) takes K's list
        st.upd.update(checking=z3.BoolVal(True), visited=z3.BoolVal(False), snap=s.listed,
                      announced=z3.Or(s.announced, s.completable))
        return z3.Not(s.checking)

    def visit(st: _Step) -> z3.BoolRef:  # its walk reaches O (waiting for O's lock)
        st.complete(r, z3.And(s.snap, s.completable), CHECK, stale)
        st.upd.update(visited=z3.BoolVal(True), listed=z3.If(s.snap, z3.And(s.listed, z3.Not(st["done"])), s.listed))
        return z3.And(s.checking, z3.Not(s.visited), z3.Or(z3.Not(s.snap), unlocked))

    def check_end(st: _Step) -> z3.BoolRef:
        st.upd.update(checking=z3.BoolVal(False), visited=z3.BoolVal(False))
        return z3.And(s.checking, s.visited)

    def other_check(st: _Step) -> z3.BoolRef:  # another key's walk, or an untracked walk of K (choice)
        st.complete(r, s.completable, CHECK, stale)
        st.upd["listed"] = z3.And(s.listed, z3.Not(z3.And(choice, st["done"])))
        return z3.And(s.submitted, unlocked)

    def purge(st: _Step) -> z3.BoolRef:  # the purge drops completed operations
        st.upd["listed"] = z3.And(s.listed, z3.Not(s.done) if r.purge_checks else z3.BoolVal(False))
        return z3.BoolVal(True)

    def cancel_k(st: _Step) -> z3.BoolRef:  # cancelForKey(K): O leaves K's list, its entry cancelled
        st.upd.update(listed=z3.BoolVal(False), cancelled_k=z3.BoolVal(True), timed=z3.BoolVal(False),
                      cancelled=z3.BoolVal(True))
        return s.listed

    def cancel_other(st: _Step) -> z3.BoolRef:  # cancelForKey of another of O's keys
        st.upd.update(timed=z3.BoolVal(False), cancelled=z3.BoolVal(True))
        return s.submitted

    return [force, flush, run, callback, check_start, visit, check_end, other_check, purge, cancel_k, cancel_other]


def transition(r: PurgatoryRules, s: State, post: State) -> z3.BoolRef:
    """Some micro-step takes ``s`` to ``post`` (``stale`` and ``choice``: the step's free choices,
    named after ``post``)."""
    stale, choice = z3.Bool(f"stale{post.tag}"), z3.Bool(f"choice{post.tag}")
    out = []
    for build in _call_steps(r, s, stale) + _other_steps(r, s, stale, choice):
        st = _Step(s)
        out.append(st.relation(post, build(st)))
    return z3.Or(*out)


# ------------------------------------------------------------------ the invariants --------------
def complete_once(s: State) -> z3.BoolRef:
    """onComplete ran once iff the flag is set, never twice; a winner is recorded iff it is set."""
    return z3.And(s.nc == z3.If(s.done, 1, 0), (s.via != NONE) == s.done)


def expire_rule(s: State) -> z3.BoolRef:
    """onExpiration (run or pending) at most once, and only after the expiration's own onComplete."""
    return z3.And(complete_once(s), s.ne >= 0, s.pending_cb >= 0, s.pending_cb + s.ne <= 1,
                  z3.Implies(s.pending_cb + s.ne >= 1, z3.And(s.done, s.via == EXPIRE)))


def no_lost_operation(s: State) -> z3.BoolRef:
    """Once handed to tryCompleteElseWatch, an uncompleted O is in K's list (K one of its keys,
    unless cancelForKey(K) took it) and, once the call returned, has a live timer entry or one
    handed to the executor (unless a cancelForKey cancelled it); a completed O keeps no live entry
    outside the call's recheck."""
    return z3.And(s.handed >= 0, s.phase >= 0, s.phase <= 4,
                  z3.Implies(z3.And(s.submitted, s.in_k, z3.Not(s.done), z3.Not(s.cancelled_k), s.phase != 1),
                             s.listed),
                  z3.Implies(z3.And(s.submitted, z3.Not(s.done), z3.Not(s.cancelled),
                                    z3.Or(s.phase == 0, s.phase == 4)), z3.Or(s.timed, s.handed >= 1)),
                  z3.Implies(z3.And(s.done, s.phase != 4), z3.Not(s.timed)),
                  z3.Implies(z3.Not(s.submitted), z3.And(s.phase == 0, z3.Not(s.listed), z3.Not(s.timed),
                                                         s.handed == 0)))


def no_lost_wakeup(s: State) -> z3.BoolRef:
    """A check of K announced O's condition: until O completes, either O's own locked
    tryCompleteElseWatch has a try to come (phases 1-2; phase 0 before it is submitted) or the
    tracked walk has still to reach O, which is in its snapshot."""
    return z3.And(no_lost_operation(s), z3.Implies(s.announced, s.completable),
                  z3.Implies(s.visited, s.checking),
                  z3.Implies(z3.And(s.announced, z3.Not(s.done), s.in_k, z3.Not(s.cancelled_k), s.submitted,
                                    z3.Or(s.phase == 0, s.phase >= 3)),
                             z3.And(s.checking, z3.Not(s.visited), s.snap)))


def invariant(s: State) -> z3.BoolRef:
    """Every per-operation invariant together (the witness and the replay test use it)."""
    return z3.And(expire_rule(s), no_lost_wakeup(s))


# ------------------------------------------------------------------ the lemmas ------------------
Invariant = Callable[[State], z3.BoolRef]
Goal = Callable[[State, State], z3.BoolRef]


def _inductive(r: PurgatoryRules, inv: Invariant, goal: Goal) -> Query:
    """``inv`` holds initially and is preserved by every micro-step, and ``goal(pre, post)``
    follows for every step from a state satisfying it."""
    q = Query()
    s, post, s0 = State(""), State("'"), State("0")
    q.where(inv(s), transition(r, s, post))
    q.shown.update(s.shown())
    q.shown.update(post.shown())
    q.goal = z3.And(inv(post), goal(s, post), z3.Implies(initial(s0), inv(s0)))
    return q


def complete_once_lemma(r: PurgatoryRules) -> Query:
    return _inductive(r, complete_once, lambda s, t: t.nc <= 1)


def expire_rule_lemma(r: PurgatoryRules) -> Query:
    return _inductive(r, expire_rule, lambda s, t: z3.And(
        t.ne <= 1, z3.Implies(t.ne >= 1, z3.And(t.nc == 1, t.via == EXPIRE)),
        # onExpiration runs in a later step than the onComplete of the same run()
        z3.Implies(t.ne > s.ne, z3.And(s.nc == 1, s.via == EXPIRE))))


def _quiescent_ok(t: State) -> z3.BoolRef:
    """No call in progress and nothing handed over: a completed O has no live entry; an
    uncompleted O is timed (unless a cancelForKey cancelled it) and in K's list (unless
    cancelForKey(K) took it)."""
    return z3.Implies(z3.And(t.submitted, t.phase == 0, t.handed == 0), z3.And(
        z3.Implies(t.done, z3.Not(t.timed)),
        z3.Implies(z3.And(z3.Not(t.done), z3.Not(t.cancelled)), t.timed),
        z3.Implies(z3.And(z3.Not(t.done), t.in_k, z3.Not(t.cancelled_k)), t.listed)))


def no_lost_operation_lemma(r: PurgatoryRules) -> Query:
    return _inductive(r, no_lost_operation, lambda s, t: _quiescent_ok(t))


def no_lost_wakeup_lemma(r: PurgatoryRules) -> Query:
    def returned(s: State, t: State) -> z3.BoolRef:
        # The tracked checkAndComplete(K) returns, or O's tryCompleteElseWatch returns with no
        # tracked check in progress: an O watching K (outside its own locked call), completable
        # when a check of K began, is completed.
        check_ret = z3.And(s.checking, z3.Not(t.checking), t.phase != 1, t.phase != 2)
        watch_ret = z3.And(s.phase != 0, t.phase == 0, z3.Not(t.checking))
        return z3.Implies(z3.And(z3.Or(check_ret, watch_ret), t.announced, t.in_k, z3.Not(t.cancelled_k),
                                 t.submitted), t.done)
    return _inductive(r, no_lost_wakeup, returned)


def executor_race_lemma(r: PurgatoryRules) -> Query:
    """The executor running a handed-over O (``run()``) before or after the purge check: O's
    share of ``numDelayed`` (its live entry) is the same, so the check's trigger and its
    ``delayed`` are; the purge's drop differs only for an O this run completed (it stays in K's
    list, completed, until a walk of K, cancelForKey(K) or the next purge).  Excepted: a resubmit
    of O between the hand-over and run() (see the hypothesis)."""
    q = Query()
    s, post = State(""), State("'")
    st = _Step(s)
    won = st.complete(r, z3.BoolVal(True), EXPIRE, z3.Bool("stale"))
    if not r.unlink_at_flush:
        st.upd["timed"] = z3.BoolVal(False)
    # No entry added after the hand-over: a resubmit between the hand-over and run() gives O a
    # fresh live entry, which run()'s forceComplete cancels (then the order does change
    # numDelayed by one).  Without the unlink at the flush, the handed entry itself is the live one.
    q.where(invariant(s), s.handed >= 1, st.relation(post, z3.BoolVal(True)),
            z3.Not(s.timed) if r.unlink_at_flush else z3.BoolVal(True))
    q.shown.update(s.shown())
    q.shown.update(post.shown())
    dropped_first = z3.And(s.listed, z3.Not(s.done if r.purge_checks else z3.BoolVal(False)))
    dropped_after = z3.And(s.listed, z3.Not(post.done if r.purge_checks else z3.BoolVal(False)))
    q.goal = z3.And(post.timed == s.timed, z3.Implies(dropped_first != dropped_after, won))
    return q


def purge_fires(r: PurgatoryRules, estimated: z3.ArithRef, delayed: z3.ArithRef,
                interval: z3.ArithRef) -> z3.BoolRef:
    return estimated - delayed > interval if r.purge_strict else estimated - delayed >= interval


def purge_threshold_lemma(r: PurgatoryRules) -> Query:
    """The purge check as :func:`purge_fires` and the purge step encode it is SEMANTICS.md's
    rule: it fires iff ``estimated - numDelayed > purgeInterval`` (strictly), then ``estimated :=
    numDelayed``, so after the check ``estimated - numDelayed <= purgeInterval``; it drops O from
    K's list iff it fires and O is completed (an uncompleted O stays on its keys)."""
    q = Query()
    est, delayed, interval = q.int("estimated"), q.int("numDelayed"), q.int("purgeInterval")
    s, post = State(""), State("'")
    fires = purge_fires(r, est, delayed, interval)
    st = _Step(s)
    st.upd["listed"] = z3.And(s.listed, z3.Not(s.done) if r.purge_checks else z3.BoolVal(False))
    est2 = z3.If(fires, delayed if r.purge_to_delayed else z3.IntVal(0), est)
    q.where(delayed >= 0, interval >= 0, est >= 0,
            z3.If(fires, st.relation(post, z3.BoolVal(True)), _Step(s).relation(post, z3.BoolVal(True))))
    q.shown.update(listed=z3.If(s.listed, 1, 0), done=z3.If(s.done, 1, 0), listed_after=z3.If(post.listed, 1, 0))
    q.shown["estimated_after"] = est2
    q.goal = z3.And(fires == (est - delayed > interval), z3.Implies(fires, est2 == delayed),
                    est2 - delayed <= interval,
                    post.listed == z3.And(s.listed, z3.Not(z3.And(fires, s.done))))
    return q


CO, ER, NLO, NLW = "complete-once", "expire-rule", "no-lost-operation", "no-lost-wakeup"


def _lemma(name: str, statement: str, build: Callable[[PurgatoryRules], Query], mutation: str,
           proves: tuple[str, ...], section: str = "Purgatory") -> Lemma:
    return Lemma(name, statement, section, build, rules=KAFKA, mutation=mutation, proves=proves)


LEMMAS: tuple[Lemma, ...] = (
    _lemma("pp-complete-once", "any operation, any keys, every interleaving: onComplete runs once at most "
           "(the completed flag's compare-and-set)", complete_once_lemma, "flag-not-atomic", (CO,)),
    _lemma("pp-expire-rule", "onExpiration runs only for the run() that won the completed flag, once, in a step "
           "after its onComplete", expire_rule_lemma, "expire-unchecked", (ER,)),
    _lemma("pp-no-lost-operation", "once handed to tryCompleteElseWatch an uncompleted operation is in each of "
           "its keys' lists and, once the call returned, timed or handed to the executor (cancelForKey "
           "excepted); a completed one keeps no live entry", no_lost_operation_lemma, "purge-unchecked",
           (NLO, "timer", "watched")),
    _lemma("pp-no-lost-wakeup", "once checkAndComplete(key) and the operation's tryCompleteElseWatch have "
           "returned, an operation watching key, completable when a check of key began, is completed",
           no_lost_wakeup_lemma, "no-second-try",
           (NLW, "lost-wakeup")),
    _lemma("pp-purge-threshold", "the purge fires iff estimated - numDelayed > purgeInterval, sets estimated := "
           "numDelayed, drops exactly the completed operations", purge_threshold_lemma, "purge-ge",
           ("watched",), "Purge"),
    _lemma("pp-executor-race", "run() of an expired operation before or after the purge check leaves numDelayed "
           "(the purge's trigger and delayed) the same unless O was resubmitted after the hand-over; the drop "
           "differs only for the operation it completed",
           executor_race_lemma, "unlink-at-run", (), "Purge"),
)


# ------------------------------------------------------------------ non-vacuity -----------------
#: for each invariant, a non-trivial state it must hold in (``witness`` reaches one)
TARGETS: dict[str, Callable[[State], z3.BoolRef]] = {
    "pp-complete-once": lambda s: z3.And(s.done, s.nc == 1, s.via == CHECK),
    "pp-expire-rule": lambda s: z3.And(s.ne == 1, s.phase == 0),
    "pp-no-lost-operation": lambda s: z3.And(s.submitted, s.in_k, s.listed, s.timed, z3.Not(s.done), s.phase == 0),
    "pp-no-lost-wakeup": lambda s: z3.And(s.announced, s.checking, s.snap, z3.Not(s.visited), z3.Not(s.done),
                                          s.phase == 0, s.listed),
}
#: the invariant each target state must satisfy
INVARIANTS: dict[str, Invariant] = {"pp-complete-once": complete_once, "pp-expire-rule": expire_rule,
                                    "pp-no-lost-operation": no_lost_operation, "pp-no-lost-wakeup": no_lost_wakeup}


def witness(name: str, depth: int = 8, timeout_ms: int = 10_000) -> tuple[str, dict[str, int]]:
    """The invariant of lemma ``name`` is not vacuous: a run of at most ``depth`` Kafka steps from
    the initial state reaches the non-trivial state :data:`TARGETS` names, and the invariant holds
    there.  Returns ("sat", the final state) or ("unsat"/"unknown", {})."""
    states = [State(f"@{i}") for i in range(depth + 1)]
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(initial(states[0]))
    for a, b in zip(states, states[1:], strict=False):
        # a step, or staying put (a shorter run)
        solver.add(z3.Or(transition(KAFKA, a, b), z3.And(*(a.get(n) == b.get(n) for n in _BOOLS + _INTS))))
    last = states[-1]
    solver.add(TARGETS[name](last), INVARIANTS[name](last))
    res = solver.check()
    if res != z3.sat:
        return str(res), {}
    model = solver.model()
    return "sat", {k.removesuffix(f"@{depth}"): model.eval(v, model_completion=True).as_long()
                   for k, v in last.shown().items()}
