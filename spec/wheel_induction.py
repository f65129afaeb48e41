"""The whole timing wheel proven inductive for every configuration: a per-task invariant, with Z3.

Models Kafka's ``SystemTimer`` / ``TimingWheel`` / ``TimerTaskList`` (reference/system_timer.py,
wheel.py, bucket.py): any base tick ``t >= 1``, any wheel size ``n >= 2``, any level ``L`` (its
tick ``u = m*t`` with ``m = n**L`` left symbolic, ``m >= 1``), any number of tasks, unbounded
integers.  Every division is written with explicit quotient/remainder variables, as in
:mod:`.lemmas`.

**The invariant of one task** ``T`` pending at level ``L`` (:func:`task_invariant`), over the
base clock ``c0 = k0*t``, the clock of T's level ``cL = kL*u``, the wall clock ``now``, T's
expiration ``e = w*u + r`` (``0 <= r < u``) and the expiration ``b`` of the bucket T is linked in:

* *aligned*: ``cL <= c0 < cL + u`` (every level's clock is the base clock rounded down to its
  tick) and ``c0 <= now``;
* *linked*: ``b = w*u`` (T's bucket stands for T's window) and that bucket is queued;
* *live*: ``kL <= w < kL + n`` (the window lies in the level's range: its index names it alone);
* *ahead*: ``c0 <= b`` (the base clock has not passed the window of a bucket still queued).

**The abstraction and why it is sound.**  ``forall T: Inv(T)`` plus the per-bucket rule "queued
once, iff its expiration is set" is the whole-wheel invariant (bmc.py's ``linked``, ``queued``,
``aligned``).  A step of the timer is a sequence of *micro-steps*: an entry placed (the walk up
the levels, an overflow wheel created on the way), an entry unlinked (cancel, or a flush taking
it), the wall clock moving, the delay queue handing a bucket over and every wheel advancing to its
expiration, a bucket's expiration reset after its flush.  A micro-step acts on one task, or on no
task; what it does to any *other* task T is only this, and each case is a lemma:

* it may set the expiration of T's bucket: only by placing an entry at T's level with T's index,
  and then the window is T's (``wi-shared-bucket``), so the expiration does not change and the
  bucket is not queued again (``wi-bucket-queued``);
* it may move clocks: only by a poll, whose bucket's expiration ``s`` is <= T's bucket's (the
  delay queue hands over its minimum; Kafka's ``DelayQueue`` guarantees it) and <= now; every
  wheel then advances (``wi-clocks-aligned``, ``wi-advance-keeps``);
* it may create a level: with its clock aligned (``wi-overflow-aligned``);
* cancel of another task, or the reset of another bucket, touches none of T's variables.

A queued bucket whose entries were all cancelled keeps its window and satisfies the bucket's part
of Inv(T) as if it held a task expiring at its window start (the lemmas use a task's expiration
only through ``b <= e < b + u``), so ``wi-shared-bucket`` covers adds into it too.

The variables of Inv(T) are T's own and those of T's level and the base level; nothing else in
the wheel enters it, so a micro-step that changes none of them preserves it.  The intermediate
levels are abstracted to the closed form of their clocks (:func:`advanced_clocks`):
``wi-chain-closed-form`` proves, by induction over the levels, that ``advanceClock``'s chain (an
upper wheel advanced by the lower one's new clock, only if that one moved) puts every clock
there.  Polling T's own bucket flushes T: ``wi-cascade-down`` / ``wi-cascade-fire`` show T is
re-added below its level (never into the bucket being flushed, whose expiration is then reset) or
handed to the executor at a time its profile allows; the re-add is a placement, covered by
``wi-add-placed``.

**Conclusions.**  No early fire: a fire is a placement that finds the entry due, which happens at
the base level only (``wi-due-only-at-base``); kafka ``now >= floor(exp/t)*t`` (``wi-due-fire``,
built as :mod:`.lemmas`' ``no-early-fire``, and ``wi-cascade-fire``), strict ``now >= exp`` for
tick 1 or expirations that are multiples of the tick (``wi-strict-aligned``; with tick >= 2 and any
other expiration it fails: ``wi-strict-unaligned``, a counterexample expected), strict-gt for
MockTimer ``now > exp`` (``wi-mock-timer``).  Fire at most once (``wi-fire-once``).  No lost task:
when the poll loop stops, every pending task's expiration is at or past the end of ``now``'s
window (``wi-no-lost``).

Assumed, not proven here: the delay queue hands over a bucket only when its expiration is <= now,
one of the least among those queued (Kafka's ``DelayQueue``), and the timer's lock makes each step
atomic (``add`` under the read lock, the flush loop under the write lock; the bucket's monitor
guards its links): see spec/PROOFS.md "The wheel for every configuration".
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from .lemmas import Lemma, Query, Rules, division_order, no_early_fire

__all__ = ["LEMMAS", "advanced_clocks", "task_invariant", "witness"]

NO_EARLY, FIRE_ONCE, NO_LOST = "no-early-fire", "fire-once", "no-lost-task"


def task_invariant(t: z3.ArithRef, n: z3.ArithRef, m: z3.ArithRef, u: z3.ArithRef, c0: z3.ArithRef,
                   k0: z3.ArithRef, cl: z3.ArithRef, kl: z3.ArithRef, now: z3.ArithRef, e: z3.ArithRef,
                   w: z3.ArithRef, r: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """Inv(T) for a task pending at a level of tick ``u = m*t`` (module docstring).  Works on
    symbolic terms and on concrete values (``z3.IntVal``: then ``z3.simplify`` decides it)."""
    return z3.And(t >= 1, n >= 2, m >= 1, u == m * t,
                  c0 == k0 * t, cl == kl * u, cl <= c0, c0 < cl + u, c0 <= now,
                  e == w * u + r, 0 <= r, r < u, b == w * u,
                  kl <= w, w < kl + n, c0 <= b)


class _Task:
    """The symbolic variables of one task and its level, with Inv(T) as hypotheses."""

    def __init__(self, q: Query, tag: str = "", hold: bool = True) -> None:
        iv = q.int
        self.t, self.n, self.m, self.u = iv("tick"), iv("wheel_size"), iv(f"m{tag}"), iv(f"levelTick{tag}")
        self.k0, self.kl, self.now = iv("k0", False), iv(f"kL{tag}", False), iv("now")
        self.c0, self.cl = self.k0 * self.t, self.kl * self.u
        q.shown.update({"currentTime_0": self.c0, f"currentTime_L{tag}": self.cl})
        self.e, self.w, self.r = iv(f"exp{tag}"), iv(f"w{tag}", False), iv(f"r{tag}", False)
        self.b = self.w * self.u
        q.shown[f"bucketExpiration{tag}"] = self.b
        q.where(self.t >= 1, self.n >= 2, self.m >= 1, self.u == self.m * self.t, self.k0 >= 0, self.kl >= 0)
        # A level's tick is a multiple of the base tick: comparisons of multiples of u and of t.
        q.mono(self.kl * self.m, self.k0, self.t)
        q.mono(self.w * self.m, self.k0, self.t)
        if hold:
            q.where(self.inv(self.c0, self.k0, self.cl, self.kl, self.now))

    def inv(self, c0: z3.ArithRef, k0: z3.ArithRef, cl: z3.ArithRef, kl: z3.ArithRef,
            now: z3.ArithRef) -> z3.BoolRef:
        return task_invariant(self.t, self.n, self.m, self.u, c0, k0, cl, kl, now, self.e, self.w, self.r, self.b)


def advanced_clocks(r: Rules, s: z3.ArithRef, t: z3.ArithRef, u: z3.ArithRef, c0: z3.ArithRef,
                    cl: z3.ArithRef, qs: z3.ArithRef, ql: z3.ArithRef) -> tuple[z3.BoolRef, z3.BoolRef]:
    """``SystemTimer.advanceClock`` after the delay queue hands over a bucket of expiration ``s``:
    ``(moved0, movedL)``, whether the base wheel (tick ``t``, clock ``c0``) and a level of tick ``u``
    (clock ``cl``) move; they move to ``qs*t`` and ``ql*u`` (``qs = floor(s/t)``, ``ql = floor(s/u)``).
    ``TimingWheel.advanceClock`` moves the base first and an upper wheel only when the one below
    moved, to the lower clock rounded down; for aligned clocks that is this closed form
    (``wi-chain-closed-form``; the replay test checks it against the reference level by level).
    Symbolic or concrete (``z3.IntVal``) arguments."""
    moved0 = r.moves(s, c0, t)
    c0n = z3.If(moved0, qs * t, c0)
    return moved0, z3.And(moved0, c0n != c0, r.moves(c0n, cl, u))


def _advance(q: Query, tk: _Task, s: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef, z3.ArithRef]:
    """Every wheel advanced to a polled expiration ``s``; returns ``c0', k0', cL', kL'``."""
    qs, _ = q.divmod(s, tk.t, "s", (tk.k0, tk.k0 + 1))
    ql, _ = q.divmod(s, tk.u, "sL", (tk.kl, tk.kl + 1, tk.w, tk.w + 1))
    # floor(s/u) = floor(floor(s/t)/m) since u = m*t (wi-division-nesting), stated as its instance:
    q.where(ql * tk.m <= qs, qs < (ql + 1) * tk.m)
    q.mono(ql * tk.m, tk.k0, tk.t)
    moved0, movedl = advanced_clocks(q.rules, s, tk.t, tk.u, tk.c0, tk.cl, qs, ql)
    c0n, k0n = z3.If(moved0, qs * tk.t, tk.c0), z3.If(moved0, qs, tk.k0)
    return c0n, k0n, z3.If(movedl, ql * tk.u, tk.cl), z3.If(movedl, ql, tk.kl)


def division_nesting(r: Rules) -> Query:
    """``floor(floor(a/b)/c) = floor(a/(b*c))`` for ``b, c >= 1``: the base clock rounded to a
    level's tick, then to the next level's, is the base clock rounded to the next level's tick."""
    q = Query(r)
    a, b, c = q.int("a"), q.int("b"), q.int("c")
    q1, r1, q2, r2 = q.int("q1"), q.int("r1"), q.int("q2"), q.int("r2")
    q.where(b >= 1, c >= 1, a == q1 * b + r1, 0 <= r1, r1 < b if r.remainder_lt else r1 <= b,
            q1 == q2 * c + r2, 0 <= r2, r2 < c)
    q.mono(r2 + 1, c, b)  # r2*b + b <= c*b: the inner remainder fits the outer divisor
    q.goal = z3.And(q2 * (b * c) <= a, a < (q2 + 1) * (b * c))
    return q


def chain_closed_form(r: Rules) -> Query:
    """``advanceClock``'s chain agrees with the closed form of :func:`advanced_clocks`: if level j
    (tick ``u = m*t``) moved as the closed form says, level j+1 (tick ``u*n``), advanced by level j's
    new clock as ``TimingWheel.advanceClock`` does, ends where the closed form puts it.  With the
    base level (``m = 1``: the closed form is the base wheel's own rule) this is an induction over
    the levels, so a per-task query may skip the levels between the base and T's."""
    q = Query(r)
    t, n, m = q.int("tick"), q.int("wheel_size"), q.int("m")
    u, big = q.int("levelTick"), q.int("nextTick")
    k0, kj, kn = q.int("k0", False), q.int("kj", False), q.int("kn", False)
    c0, cj, cn = k0 * t, kj * u, kn * big
    q.shown.update(currentTime_0=c0, currentTime_j=cj, currentTime_j1=cn)
    q.where(t >= 1, n >= 2, m >= 1, u == m * t, big == u * n, k0 >= 0, kj >= 0, kn >= 0)
    q.where(cj <= c0, c0 < cj + u, cn <= c0, c0 < cn + big)
    q.mono(kj * m, k0, t)
    q.mono(kn * n, kj, u)
    s = q.int("polledExpiration")
    q.where(s >= 0)
    # floor(s/t) = qs, floor(s/u) = qu, floor(s/(u*n)) = qb, each the quotient of the one before
    # (wi-division-nesting: floor(floor(a/b)/c) = floor(a/(b*c))).
    qs, _ = q.divmod(s, t, "s", (k0, k0 + 1))
    qu, _ = q.divmod(qs, m, "su", (kj * m, kj * m + m))
    qb, _ = q.divmod(qu, n, "sb", (kn * n, kn * n + n, kj, kj + 1))
    for a_, b_ in ((qu * m, k0), (qu * m, k0 + 1), (qu * m + m, k0 + 1), (kj * m + m, qs), (kj * m, qs)):
        q.mono(a_, b_, t)
    for a_, b_ in ((qb * n, kj), (qb * n + n, kj + 1), (kn * n + n, qu), (kn * n, qu)):
        q.mono(a_, b_, u)
    for a_, b_ in ((qb, kn), (qb, kn + 1)):
        q.mono(a_, b_, big)
    moved0, movedj = advanced_clocks(r, s, t, u, c0, cj, qs, qu)
    c0n = z3.If(moved0, qs * t, c0)
    cjn = z3.If(movedj, qu * u, cj)
    # The chain: level j+1 advances to level j's new clock (qu*u, whose quotient by u*n is qb) if
    # level j moved.
    chain = z3.If(z3.And(movedj, r.moves(cjn, cn, big)), qb * big, cn)
    _, movedn = advanced_clocks(r, s, t, big, c0, cn, qs, qb)
    closed = z3.If(movedn, qb * big, cn)
    q.shown.update(chain=chain, closedForm=closed)
    q.goal = z3.And(chain == closed, z3.Implies(m == 1, cjn == c0n))
    return q


def clocks_aligned(r: Rules) -> Query:
    """The clocks' part of Inv(T), for any level with or without tasks: the wall clock moving to
    ``now2 >= now`` and a poll (expiration ``s <= now2``) keep ``cL <= c0 < cL + u`` and
    ``c0 <= now``."""
    q = Query(r)
    tk = _Task(q, hold=False)
    for unused in ("exp", "bucketExpiration"):  # no task here: only the clocks
        q.shown.pop(unused)
    q.where(tk.c0 <= tk.now, tk.cl <= tk.c0, tk.c0 < tk.cl + tk.u)
    now2, s = q.int("now2"), q.int("polledExpiration")
    q.where(now2 >= tk.now, s >= 0, r.polled(s, now2))
    c0n, _, cln, _ = _advance(q, tk, s)
    q.shown.update(currentTime_0After=c0n, currentTime_LAfter=cln)
    q.goal = z3.And(cln <= c0n, c0n < cln + tk.u, c0n <= now2)
    return q


# ------------------------------------------------------------------ placement ------------------
def add_placed(r: Rules) -> Query:
    """An entry placed at a level (not due there, inside its range) satisfies Inv(T)."""
    q = Query(r)
    tk = _Task(q, hold=False)
    q.where(tk.c0 <= tk.now, tk.cl <= tk.c0, tk.c0 < tk.cl + tk.u)  # the clocks' invariant
    q.where(z3.Not(r.due(tk.e, tk.cl, tk.u)), r.fits(tk.e, tk.cl, tk.u * tk.n))
    q.where(tk.e == tk.w * tk.u + tk.r, 0 <= tk.r, tk.r < tk.u)
    q.hyps += division_order(tk.w, tk.r, tk.u, tk.kl + 1) + division_order(tk.w, tk.r, tk.u, tk.kl + tk.n)
    if r.relative_bucket:  # the bucket's window taken relative to the clock
        qv, _ = q.divmod(tk.e - tk.cl, tk.u, "v", (z3.IntVal(0), z3.IntVal(1)))
        stored = qv * tk.u
    else:
        stored = tk.b
    q.shown["storedExpiration"] = stored
    q.goal = z3.And(tk.inv(tk.c0, tk.k0, tk.cl, tk.kl, tk.now), stored == tk.b)
    return q


def due_only_at_base(r: Rules) -> Query:
    """The placement walk reaches level j >= 1 only past the range of level j-1, whose clock is
    aligned to level j's: there the entry is never due."""
    q = Query(r)
    v, n, cv, kv = q.int("tick_below"), q.int("wheel_size"), q.int("c_below"), q.int("kv", False)
    u, cj, kj, e = q.int("levelTick"), q.int("c_level"), q.int("kj", False), q.int("exp")
    q.where(v >= 1, n >= 2, u == v * n, cv == kv * v, cj == kj * u, cj <= cv, cv < cj + u)
    q.where(z3.Not(r.due(e, cv, v)), z3.Not(r.fits(e, cv, u)))
    q.goal = z3.Not(r.due(e, cj, u))
    return q


def overflow_aligned(r: Rules) -> Query:
    """A base wheel starts at ``floor(start/t)*t <= start``; an overflow wheel created from level j
    starts aligned with the base clock (its tick ``u*n``)."""
    q = Query(r)
    t, n, m, now = q.int("tick"), q.int("wheel_size"), q.int("m"), q.int("now")
    u, k0, kj = q.int("levelTick"), q.int("k0", False), q.int("kj", False)
    c0, cj = k0 * t, kj * u
    q.where(t >= 1, n >= 2, m >= 1, u == m * t, c0 <= now, cj <= c0, c0 < cj + u)
    q.mono(kj * m, k0, t)
    big = u * n
    qn, _ = q.divmod(cj if r.overflow_at_lower else now, big, "o", (k0, k0 + 1))
    ql, _ = q.divmod(c0, big, "b", ())
    q.mono(qn * n, kj, u)
    q.mono(qn * n + n, kj + 1, u)
    created = qn * big
    q.shown["overflowClock"] = created
    qs, _ = q.divmod(now, t, "st", (k0,))
    q.goal = z3.And(qs * t <= now, created <= c0, c0 < created + big)
    return q


def shared_bucket(r: Rules) -> Query:
    """Another entry placed at T's level with T's bucket index has T's window: the bucket's
    expiration is unchanged, so T's window survives every other add."""
    q = Query(r)
    tk = _Task(q)
    e2 = q.int("exp2")
    q.where(z3.Not(r.due(e2, tk.cl, tk.u)), r.fits(e2, tk.cl, tk.u * tk.n))
    w2, _ = q.divmod(e2, tk.u, "w2", (tk.kl + 1, tk.kl + tk.n))
    _, i1 = q.divmod(tk.w, tk.n, "i1")
    _, i2 = q.divmod(w2, tk.n, "i2")
    q.shown.update(index=i1, index2=i2, window2=w2 * tk.u)
    q.goal = z3.Implies(i1 == i2, w2 == tk.w)
    return q


def bucket_queued(r: Rules) -> Query:
    """A bucket is in the delay queue once, iff its expiration is set, across an add into it (whose
    window is the set one, ``wi-shared-bucket``) and a poll (queue count 1 -> 0, reset after flush)."""
    q = Query(r)
    qc, is_set, same = q.int("queueCount"), z3.Bool("expirationSet"), z3.Bool("sameWindow")
    q.where(qc >= 0, qc <= 1, (qc == 1) == is_set, z3.Implies(is_set, same))
    changed = z3.Or(z3.Not(is_set), z3.Not(same))
    qc_add = z3.If(z3.Or(changed, z3.BoolVal(not r.enqueue_on_change)), qc + 1, qc)
    q.shown["queueCountAfterAdd"] = qc_add
    polled = z3.Bool("polled")
    qc_poll = z3.If(polled, qc - 1, qc)
    q.goal = z3.And(qc_add == 1, z3.Implies(z3.And(polled, is_set), z3.And(qc_poll == 0)))
    return q


# ------------------------------------------------------------------ clocks and polls -----------
def advance_keeps(r: Rules) -> Query:
    """The wall clock moves to ``now2 >= now``; the delay queue hands over another bucket (its
    expiration ``s <= now2`` and ``<=`` T's bucket's); every wheel advances: Inv(T) still holds."""
    q = Query(r)
    tk = _Task(q)
    now2, s = q.int("now2"), q.int("polledExpiration")
    q.where(now2 >= tk.now, s >= 0, r.polled(s, now2), s <= tk.b)
    c0n, k0n, cln, kln = _advance(q, tk, s)
    q.shown.update(currentTime_0After=c0n, currentTime_LAfter=cln)
    q.goal = tk.inv(c0n, k0n, cln, kln, now2)
    return q


def cascade_down(r: Rules) -> Query:
    """T's bucket at level L >= 1 is polled: after every wheel advances to its expiration, T fits
    the range of level L-1 (tick ``v``, ``u = v*n``), whose clock stays aligned: the re-add places
    T at a level below L (never back into the bucket being flushed) or fires it at the base."""
    q = Query(r)
    tk = _Task(q)
    now2 = q.int("now2")
    v, mv, kv = q.int("tick_below"), q.int("m_below"), q.int("kv", False)
    cv = kv * v
    q.where(mv >= 1, v == mv * tk.t, tk.u == v * tk.n, kv >= 0, cv <= tk.c0, tk.c0 < cv + v)
    q.mono(kv * mv, tk.k0, tk.t)
    q.where(now2 >= tk.now, r.polled(tk.b, now2))
    c0n, _, _, _ = _advance(q, tk, tk.b)
    qb, _ = q.divmod(tk.b, v, "sv", (kv, kv + 1))
    q.where(qb == tk.w * tk.n)  # b = w*u = (w*n)*v
    moved_v = z3.And(c0n != tk.c0, r.moves(c0n, cv, v))
    cvn = z3.If(moved_v, qb * v, cv)
    q.shown.update(currentTime_0After=c0n, currentTime_belowAfter=cvn)
    q.goal = z3.And(r.fits(tk.e, cvn, v * tk.n), cvn <= c0n, c0n < cvn + v, c0n <= now2)
    return q


def cascade_fire(r: Rules) -> Query:
    """T's bucket at the base level (u = t) is polled: after the base wheel advances to its
    expiration, the re-add finds T due and hands it over at ``now >= floor(exp/t)*t`` (kafka)."""
    q = Query(r)
    tk = _Task(q)
    now2 = q.int("now2")
    q.where(tk.m == 1, now2 >= tk.now, r.polled(tk.b, now2))
    c0n, _, _, _ = _advance(q, tk, tk.b)
    q.shown["currentTime_0After"] = c0n
    q.goal = z3.And(r.due(tk.e, c0n, tk.t), tk.w * tk.t <= now2)
    return q


# ------------------------------------------------------------------ conclusions ----------------
def fire_once(r: Rules) -> Query:
    """A schedule is handed to the executor at most once.  Its entry is linked in at most one
    bucket; a flush unlinks it before the re-add, which links it again (placed) or hands it over
    (due); only an add (a new schedule) or a flush of its bucket reaches it.  Invariant: a handed
    over entry is not linked.  The same holds for MockTimer with "linked" read as "queued":
    ``advanceClock`` polls the head off the queue before running it."""
    q = Query(r)
    linked, fired, due = z3.Bool("linked"), z3.Bool("fired"), z3.Bool("dueOnReAdd")
    q.where(z3.Implies(fired, z3.Not(linked)))
    # A flush of the entry's bucket: only a linked entry is in it.
    fires_now = z3.And(linked, due)
    linked_after = z3.Or(z3.And(linked, z3.Not(due)), z3.And(linked, z3.BoolVal(not r.flush_unlinks)))
    fired_after = z3.Or(fired, fires_now)
    q.shown.update(linked=z3.If(linked, 1, 0), fired=z3.If(fired, 1, 0), due=z3.If(due, 1, 0))
    q.goal = z3.And(z3.Not(z3.And(fired, fires_now)), z3.Implies(fired_after, z3.Not(linked_after)))
    return q


def no_lost(r: Rules) -> Query:
    """When the poll loop stops (the delay queue's head, hence T's bucket, is not handed over at
    ``now``), a pending task's expiration is at or past the end of ``now``'s base window: kafka's
    ``floor(exp/t)*t <= now`` and strict's ``exp <= now`` do not require it yet."""
    q = Query(r)
    tk = _Task(q)
    q.where(z3.Not(r.polled(tk.b, tk.now)))
    qn, _ = q.divmod(tk.now, tk.t, "n", (tk.w * tk.m, tk.w * tk.m + 1))
    qe, _ = q.divmod(tk.e, tk.t, "e", (qn + 1,))
    q.where(qe >= tk.w * tk.m)  # e >= w*u = (w*m)*t
    q.shown["windowEnd(now)"] = qn * tk.t + tk.t
    q.goal = z3.And(tk.e >= qn * tk.t + tk.t, qe * tk.t > tk.now, tk.e > tk.now)
    return q


def strict_no_early(r: Rules, aligned: bool = True) -> Query:
    """A fire (due at the base, whose clock is <= now) is never before exp when the tick is 1 or
    exp is a multiple of the tick."""
    q = Query(r)
    t, k0, now, e = q.int("tick"), q.int("k0", False), q.int("now"), q.int("exp")
    c0 = k0 * t
    q.shown["currentTime_0"] = c0
    q.where(t >= 1, c0 <= now, r.due(e, c0, t))
    qe, re = q.divmod(e, t, "e", (k0 + 1,))
    q.where(z3.Or(t == 1, re == 0) if aligned else t >= 2)
    q.goal = e <= now
    return q


def mock_timer(r: Rules) -> Query:
    """Kafka's MockTimer (strict-gt): an entry runs only at ``now > exp``; when ``advanceClock``
    stops (its head not run), no queued entry has ``exp < now``."""
    q = Query(r)
    now, e, head = q.int("now"), q.int("exp"), q.int("headExp")

    def runs(x: z3.ArithRef) -> z3.BoolRef:
        return now > x if r.mock_gt else now >= x

    ran = z3.Bool("ran")
    q.where(head <= e, z3.Implies(ran, runs(e)), z3.Implies(z3.Not(ran), z3.Not(runs(head))))
    q.shown["ran"] = z3.If(ran, 1, 0)
    q.goal = z3.And(z3.Implies(ran, now > e), z3.Implies(z3.Not(ran), z3.Not(e < now)))
    return q


def _strict_unaligned(r: Rules) -> Query:
    return strict_no_early(r, aligned=False)


#: the SEMANTICS.md section (rule) each obligation is about
_SECTIONS = {"wi-add-placed": "Placement", "wi-due-only-at-base": "Placement", "wi-shared-bucket": "Buckets",
             "wi-bucket-queued": "Buckets", "wi-fire-once": "Firing rule", "wi-due-fire": "Firing rule",
             "wi-no-lost": "Firing rule", "wi-cascade-fire": "Firing rule", "wi-strict-aligned": "Profiles",
             "wi-strict-unaligned": "Profiles", "wi-mock-timer": "Profiles"}


def _lemma(name: str, statement: str, build: Callable[[Rules], Query], mutation: str | None,
           proves: tuple[str, ...], expect: str = "proven") -> Lemma:
    return Lemma(name, statement, _SECTIONS.get(name, "Clock"), build, expect=expect, mutation=mutation,
                 proves=proves)


ALL = (NO_EARLY, FIRE_ONCE, NO_LOST)
LEMMAS: tuple[Lemma, ...] = (
    _lemma("wi-add-placed", "an entry placed at any level (not due, in range) satisfies Inv(T): aligned, linked "
           "to its window's bucket, live, ahead", add_placed, "relative-bucket", ALL),
    _lemma("wi-due-only-at-base", "the placement walk never finds an entry due above the base level",
           due_only_at_base, "due-le", (NO_EARLY,)),
    _lemma("wi-overflow-aligned", "a new base wheel starts at floor(start/t)*t <= now; a new overflow wheel "
           "starts aligned with the base clock", overflow_aligned, "overflow-at-now", ALL),
    _lemma("wi-shared-bucket", "another entry placed at T's level with T's bucket index has T's window "
           "(T's bucket expiration never changes under it)", shared_bucket, "fit-le", (FIRE_ONCE, NO_LOST)),
    _lemma("wi-bucket-queued", "a bucket is queued once iff its expiration is set, across adds into it and "
           "its poll", bucket_queued, "enqueue-always", (FIRE_ONCE, NO_LOST)),
    _lemma("wi-division-nesting", "floor(floor(a/b)/c) = floor(a/(b*c)) for b, c >= 1 (clocks rounded level by "
           "level are rounded to the upper tick)", division_nesting, "remainder-le", ALL),
    _lemma("wi-chain-closed-form", "advanceClock's chain (an upper wheel advanced by the lower one's new clock) "
           "puts every level where the closed form floor(s/tick_L)*tick_L (if it moves) does", chain_closed_form,
           "advance-gt", ALL),
    _lemma("wi-clocks-aligned", "the wall clock moving and any poll (expiration <= now) with every wheel "
           "advancing keep each level's clock = floor(base clock / its tick) * its tick, base clock <= now",
           clocks_aligned, "advance-gt", ALL),
    _lemma("wi-advance-keeps", "the wall clock moving and a poll of another bucket (expiration <= now, <= T's "
           "bucket's) with every wheel advancing keep Inv(T)", advance_keeps, "advance-gt", ALL),
    _lemma("wi-cascade-down", "T's bucket at level L >= 1 polled: after the advance T fits level L-1's range "
           "(re-added below L, never into the flushed bucket)", cascade_down, "advance-gt", (NO_LOST, FIRE_ONCE)),
    _lemma("wi-cascade-fire", "T's bucket at the base polled: the re-add finds T due, at now >= floor(exp/t)*t",
           cascade_fire, "advance-gt", (NO_EARLY, NO_LOST)),
    _lemma("wi-due-fire", "an entry added due at the base (clock <= now) is handed over at now >= floor(exp/t)*t",
           no_early_fire, "due-le", (NO_EARLY,)),
    _lemma("wi-fire-once", "a handed-over entry is never linked (MockTimer: never queued), so a schedule is "
           "handed over at most once",
           fire_once, "flush-keeps", (FIRE_ONCE,)),
    _lemma("wi-no-lost", "when the poll loop stops, every pending task has exp >= the end of now's window "
           "(kafka W(exp) > now, strict exp > now)", no_lost, "poll-lt", (NO_LOST,)),
    _lemma("wi-strict-aligned", "strict: with tick 1 or exp a multiple of the tick, a fire is at now >= exp",
           strict_no_early, "due-le", (NO_EARLY,)),
    _lemma("wi-strict-unaligned", "strict does not hold for tick >= 2 and other expirations: a fire at now < exp",
           _strict_unaligned, None, (NO_EARLY,), expect="counterexample"),
    _lemma("wi-mock-timer", "MockTimer (strict-gt): an entry runs only at now > exp; after advanceClock no "
           "queued entry has exp < now", mock_timer, "mock-ge", (NO_EARLY, NO_LOST)),
)


def witness(levels: int = 3) -> tuple[str, dict[str, int]]:
    """Inv(T) is not vacuous: it holds at once for ``levels`` tasks at levels 0, 1, 2, ... (tick
    ``t * n**L``) of one drained wheel state.  Returns ("sat", a model) or ("unsat"/"unknown", {}).
    tests/test_wheel_induction.py reaches such a state with the reference and checks Inv(T) there."""
    s = z3.Solver()
    s.set("timeout", 10_000)
    t, n, k0, now = z3.Ints("tick wheel_size k0 now")
    c0 = k0 * t
    s.add(t >= 1, n >= 2, k0 >= 1, t <= 10, n <= 10, now <= 500)
    shown: dict[str, z3.ArithRef] = {"tick": t, "wheel_size": n, "currentTime_0": c0, "now": now}
    m = z3.IntVal(1)
    for level in range(levels):
        kl, e, w, r = (z3.Int(f"{x}{level}") for x in ("kL", "exp", "w", "r"))
        u = m * t
        s.add(task_invariant(t, n, m, u, c0, k0, kl * u, kl, now, e, w, r, w * u))
        s.add(w * u > now, kl >= 0)  # drained: the poll loop has stopped (no queued bucket due)
        shown.update({f"exp@L{level}": e, f"currentTime_L{level}": kl * u, f"bucketExpiration@L{level}": w * u})
        m = m * n
    res = s.check()
    if res != z3.sat:
        return str(res), {}
    model = s.model()
    return "sat", {k: model.eval(v, model_completion=True).as_long() for k, v in shown.items()}
