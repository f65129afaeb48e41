"""Universal lemmas about the timing wheel's arithmetic, proven with Z3 for all parameters.

Each :class:`Lemma` is a statement ``hypotheses => goal`` over integer variables (symbolic tick
>= 1, wheel size >= 2, clock readings and expirations), built from a :class:`Rules` value that
encodes the rules of Kafka's ``TimingWheel`` / ``SystemTimer`` the lemma depends on.  Z3 proves it
by showing ``hypotheses and not goal`` unsatisfiable; a model of that query is a counterexample.
Before that, the hypotheses alone must be satisfiable: a lemma with contradictory hypotheses would
prove anything, so it is reported as *vacuous*, never as proven.

:data:`MUTATIONS` breaks one rule at a time (the bucket index taken relative to the clock, ``<=``
in the due test, ...); the tests and ``wheelspec prove --mutations`` show that each lemma fails,
with a readable counterexample, under the mutation that targets it.

Phrasing: every division is written with explicit quotient/remainder variables
(``e = q*tick + r, 0 <= r < tick``), never with an ``If`` term multiplied by a variable; a level's
tick is a variable of its own, related to the level below by one product.  Each query then takes
milliseconds.

The rules, as :mod:`wheelspec.reference.wheel` implements them (SEMANTICS.md "Placement",
"Clock", "Buckets"):

* wheel at level L: tick ``u``, ``n`` buckets, interval ``u*n``, clock ``c`` a multiple of ``u``;
* due: ``exp < c + u``; accepted: ``exp < c + u*n``; otherwise the overflow wheel (tick ``u*n``,
  created with clock ``floor(c / (u*n)) * (u*n)``, i.e. the lower wheel's clock rounded down);
* bucket index ``(exp div u) mod n``; the bucket's window (its expiration) ``(exp div u) * u``;
* ``advanceClock(t)``: if ``t >= c + u`` then ``c := floor(t / u) * u`` and the overflow wheel
  advances to the new ``c``;
* the delay queue hands a bucket over only when ``expiration - now <= 0``, and hands them over in
  expiration order, so a polled bucket's expiration is <= that of every bucket still queued.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import z3

from .limits import EXP_SPAN, JAVA_INT_MAX, MAX_DELAY_MS, MAX_TICK_MS, MAX_TIME_MS, MAX_WHEEL_SIZE, MIN_DELAY_MS

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class Rules:
    """The wheel's rules as the lemmas encode them.  ``Rules()`` is Kafka's; each field names one
    rule a mutation can break."""

    #: bucket index and window from the absolute expiration (Kafka) or relative to the clock
    relative_bucket: bool = False
    #: due iff ``exp < c + tick`` (Kafka) -- False: ``exp <= c + tick``
    due_strict: bool = True
    #: accepted iff ``exp < c + interval`` (Kafka) -- False: ``exp <= c + interval``
    fit_strict: bool = True
    #: advanceClock moves iff ``t >= c + tick`` (Kafka) -- False: ``t > c + tick``
    advance_ge: bool = True
    #: an overflow wheel starts at the lower wheel's clock (Kafka) -- False: at the wall clock
    overflow_at_lower: bool = True
    #: the delay queue hands a bucket over iff ``expiration <= now`` (Kafka) -- False: ``<``
    poll_le: bool = True
    #: wheelspec's limits on delays and times (spec/limits.py) -- False: any Java long
    limits: bool = True
    #: floor division's remainder is < the divisor -- False: <= (breaks the division lemma)
    remainder_lt: bool = True
    #: a bucket is enqueued only when its expiration changes (Kafka) -- False: on every add
    enqueue_on_change: bool = True
    #: Kafka's MockTimer runs an entry iff ``now > exp`` -- False: ``now >= exp``
    mock_gt: bool = True
    #: the optimized kernels correct their float quotient ``int64(float64(exp) * (1.0 /
    #: float64(tick)))`` by one step (spec/arith.py) -- False: the truncated quotient is the bucket
    correction: bool = True
    #: ``TimerTaskList.flush`` unlinks each entry before handing it over (Kafka) -- False: the
    #: entry stays linked in the flushed bucket
    flush_unlinks: bool = True

    # -- the rules as formulas --------------------------------------------------------------------
    def due(self, e: z3.ArithRef, c: z3.ArithRef, u: z3.ArithRef) -> z3.BoolRef:
        return e < c + u if self.due_strict else e <= c + u

    def fits(self, e: z3.ArithRef, c: z3.ArithRef, interval: z3.ArithRef) -> z3.BoolRef:
        return e < c + interval if self.fit_strict else e <= c + interval

    def moves(self, t: z3.ArithRef, c: z3.ArithRef, u: z3.ArithRef) -> z3.BoolRef:
        return t >= c + u if self.advance_ge else t > c + u

    def polled(self, expiration: z3.ArithRef, now: z3.ArithRef) -> z3.BoolRef:
        return expiration <= now if self.poll_le else expiration < now


KAFKA = Rules()

#: name -> (rules, what the mutation does)
MUTATIONS: dict[str, tuple[Rules, str]] = {
    "relative-bucket": (Rules(relative_bucket=True), "bucket = (exp - currentTime) / tick"),
    "due-le": (Rules(due_strict=False), "due test exp <= currentTime + tick"),
    "fit-le": (Rules(fit_strict=False), "accept test exp <= currentTime + interval"),
    "advance-gt": (Rules(advance_ge=False), "advanceClock moves only if time > currentTime + tick"),
    "overflow-at-now": (Rules(overflow_at_lower=False), "overflow wheel starts at the wall clock"),
    "poll-lt": (Rules(poll_le=False), "delay queue hands a bucket over only once expiration < now"),
    "no-limits": (Rules(limits=False), "delays and times are any Java long (stock Kafka)"),
    "remainder-le": (Rules(remainder_lt=False), "division remainder allowed to equal the divisor"),
    "enqueue-always": (Rules(enqueue_on_change=False), "a bucket is enqueued on every add, not only on a new window"),
    "mock-ge": (Rules(mock_gt=False), "MockTimer runs an entry once now >= exp"),
    "no-correction": (Rules(correction=False), "the window number is the truncated float quotient "
                      "int64(float64(exp) * (1.0 / float64(tick))), without the one-step correction"),
    "flush-keeps": (Rules(flush_unlinks=False), "flush hands an entry over without unlinking it from the bucket"),
}


# ------------------------------------------------------------------ query building --------------
class Query:
    """Hypotheses, a goal and the variables worth printing in a counterexample."""

    def __init__(self, rules: Rules = KAFKA) -> None:
        self.rules = rules
        self.hyps: list[z3.BoolRef] = []
        self.shown: dict[str, z3.ExprRef] = {}
        self.goal: z3.BoolRef = z3.BoolVal(True)
        #: solver configurations to try, (logic, seed) as in :data:`PORTFOLIO` (None: that one)
        self.portfolio: tuple[tuple[str | None, int], ...] | None = None

    def int(self, name: str, show: bool = True) -> z3.ArithRef:
        v = z3.Int(name)
        if show:
            self.shown[name] = v
        return v

    def where(self, *hyps: z3.BoolRef) -> None:
        self.hyps.extend(hyps)

    def divmod(self, a: z3.ArithRef, b: z3.ArithRef, name: str,
               against: tuple[z3.ArithRef, ...] = ()) -> tuple[z3.ArithRef, z3.ArithRef]:
        """Fresh ``q, r`` with ``a = q*b + r, 0 <= r < b`` (floor division for b >= 1), plus the
        instances of the division-order lemma comparing ``a`` with ``K*b`` for each ``K`` in
        ``against``.  Those instances are valid (lemma ``division-order`` proves them for all
        values); stating them turns the rest of the query into linear reasoning over quotients."""
        q, r = z3.Int(f"{name}_q"), z3.Int(f"{name}_r")
        self.hyps += [a == q * b + r, 0 <= r, r < b]
        for k in against:
            self.hyps += division_order(q, r, b, k)
        return q, r

    def mono(self, x: z3.ArithRef, y: z3.ArithRef, b: z3.ArithRef) -> None:
        """Instance of the division-order lemma: for b >= 1, x*b <= y*b iff x <= y."""
        self.hyps.append((x * b <= y * b) == (x <= y))

    def multiple(self, name: str, b: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef]:
        """A fresh multiple ``k*b`` of ``b``; returns (k*b, k)."""
        k = z3.Int(f"{name}_k")
        return k * b, k

    def advance(self, c: z3.ArithRef, t: z3.ArithRef, u: z3.ArithRef, name: str,
                against: tuple[z3.ArithRef, ...] = ()) -> z3.ArithRef:
        """The clock after ``advanceClock(t)`` on a wheel at ``c`` with tick ``u``."""
        qt, _ = self.divmod(t, u, name, against)
        return z3.If(self.rules.moves(t, c, u), qt * u, c)


def division_order(q: z3.ArithRef, r: z3.ArithRef, b: z3.ArithRef, k: z3.ArithRef) -> list[z3.BoolRef]:
    """For ``a = q*b + r`` with ``0 <= r < b``: how ``a`` compares with ``k*b`` is how ``q``
    compares with ``k``.  Proven for all integers by the lemma ``division-order``."""
    a = q * b + r
    return [(k * b <= a) == (k <= q), (a < k * b) == (q < k),
            (a <= k * b) == z3.Or(q < k, z3.And(q == k, r == 0))]


def bucket(q: Query, e: z3.ArithRef, c: z3.ArithRef, ck: z3.ArithRef, u: z3.ArithRef, n: z3.ArithRef,
           name: str, against: tuple[z3.ArithRef, ...] | None = None
           ) -> tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef]:
    """(bucket index, stored window start, true window number) of expiration ``e`` placed at clock
    ``c = ck*u``.  The stored window is the rule's; the true window is ``[w*u, w*u + u)`` with
    ``w = floor(e/u)`` (goals compare window numbers: for u >= 1 that is comparing windows)."""
    # The bounds the lemmas compare with: by default the clock's window and the live range's end.
    # (Only the instances a lemma needs: extra ones slow Z3's nonlinear search down.)
    qt, _ = q.divmod(e, u, f"{name}_w", (ck, ck + n) if against is None else against)
    if q.rules.relative_bucket:
        qv, _ = q.divmod(e - c, u, f"{name}_v", (z3.IntVal(0), n))
    else:
        qv = qt
    _, idx = q.divmod(qv, n, f"{name}_i")
    return idx, qv * u, qt


# ------------------------------------------------------------------ the lemmas -------------------
def division_order_lemma(r: Rules) -> Query:
    q = Query(r)
    b, qq, rr, k, x, y = (q.int(v) for v in ("b", "q", "r", "K", "x", "y"))
    q.where(b >= 1, 0 <= rr, rr <= b if r.remainder_lt is False else rr < b)
    q.goal = z3.And(*division_order(qq, rr, b, k), (x * b <= y * b) == (x <= y))
    return q


def wheel(q: Query, name: str = "") -> tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef, z3.ArithRef]:
    """A wheel at any level: tick ``u >= 1``, size ``n >= 2``, clock ``c = k*u >= 0``."""
    u, n = q.int(f"tick{name}"), q.int(f"wheel_size{name}")
    c, k = q.multiple(f"c{name}", u)
    q.shown[f"currentTime{name}"] = c
    q.where(u >= 1, n >= 2, k >= 0)
    return u, n, c, k


def placement(r: Rules) -> Query:
    q = Query(r)
    u, n, c, k = wheel(q)
    e = q.int("exp")
    q.where(z3.Not(r.due(e, c, u)), r.fits(e, c, u * n))
    idx, b, _ = bucket(q, e, c, k, u, n, "e")
    q.shown["bucket_start"] = b
    q.goal = z3.And(b <= e, e < b + u, 0 <= idx, idx < n)
    return q


def bucket_uniqueness(r: Rules) -> Query:
    q = Query(r)
    u, n, c, k = wheel(q)
    e1, e2 = q.int("exp1"), q.int("exp2")
    # Live range plus the clock's own window, whose bucket can still be queued when buckets of two
    # levels share an expiration (the delay queue has not yet handed the other one over).
    for e in (e1, e2):
        q.where(e >= c, r.fits(e, c, u * n))
    i1, b1, w1 = bucket(q, e1, c, k, u, n, "e1")
    i2, b2, w2 = bucket(q, e2, c, k, u, n, "e2")
    q.shown.update(index1=i1, index2=i2, window1=w1 * u, window2=w2 * u)
    q.goal = z3.Implies(i1 == i2, w1 == w2)
    return q


def no_aliasing_over_time(r: Rules) -> Query:
    q = Query(r)
    u, n = q.int("tick"), q.int("wheel_size")
    q.where(u >= 1, n >= 2)
    c_then, k_then = q.multiple("cthen", u)
    c_now, k_now = q.multiple("cnow", u)
    q.shown.update(clockWhenQueued=c_then, clockNow=c_now)
    last_polled = q.int("lastPolledExpiration")
    q.where(k_then >= 0, k_then <= k_now, last_polled >= 0)
    # The wheel's clock moves only to polled expirations, rounded down to its tick.
    qp, _ = q.divmod(last_polled, u, "poll", (k_now,))
    q.where(qp == k_now)
    es, en = q.int("queuedExp"), q.int("newExp")
    q.where(z3.Not(r.due(es, c_then, u)), r.fits(es, c_then, u * n))
    q.where(z3.Not(r.due(en, c_now, u)), r.fits(en, c_now, u * n))
    i_s, b_s, w_s = bucket(q, es, c_then, k_then, u, n, "s", (k_then, k_then + n, k_now, k_now + n))
    i_n, b_n, w_n = bucket(q, en, c_now, k_now, u, n, "n")
    q.mono(w_s, k_now, u)
    # Delay-queue assumption: buckets are polled in expiration order, so a bucket still queued has
    # an expiration (its stored window start) >= the last polled one.
    q.where(b_s >= last_polled)
    q.shown.update(queuedWindow=w_s * u, queuedIndex=i_s, newWindow=w_n * u, newIndex=i_n)
    q.goal = z3.Implies(i_s == i_n, w_s == w_n)
    return q


def cascade_progress(r: Rules) -> Query:
    q = Query(r)
    u, n, c, k = wheel(q, "_L")  # level L, whose clock lags the flushed bucket (c <= s)
    big = u * n  # level L+1's tick
    s, j = q.multiple("s", big)
    e = q.int("exp")
    q.shown["bucketStart"] = s
    q.where(j >= 0, c <= s, s <= e, e < s + big)
    q.mono(k, j * n, u)
    # The delay queue hands the level-(L+1) bucket over; every wheel advances to its expiration.
    c2 = q.advance(c, s, u, "adv", (j * n, j * n + 1, k, k + 1))
    q.shown["currentTimeAfter"] = c2
    q.goal = z3.Or(r.due(e, c2, u), r.fits(e, c2, u * n))
    return q


def clocks_stay_aligned(r: Rules) -> Query:
    q = Query(r)
    u, n, c, k = wheel(q, "_L")
    big = u * n
    c1, k1 = q.multiple("c1", big)
    q.shown["currentTime_L1"] = c1
    q.where(c1 <= c, c < c1 + big)  # aligned: c1 = floor(c / big) * big
    t = q.int("time")
    q.where(t >= 0)
    c_new = q.advance(c, t, u, "a0", (k, k + 1))
    qn, _ = q.divmod(c_new, big, "a1", (k1, k1 + 1))
    c1_new = z3.If(c_new != c, z3.If(r.moves(c_new, c1, big), qn * big, c1), c1)
    q.shown.update(currentTimeAfter=c_new, currentTime_L1After=c1_new)
    q.goal = z3.And(c1_new <= c_new, c_new < c1_new + big)
    return q


def rejected_not_due_above(r: Rules) -> Query:
    q = Query(r)
    u, n, c, k = wheel(q, "_L")
    big = u * n
    c1, k1 = q.multiple("c1", big)
    e = q.int("exp")
    q.shown["currentTime_L1"] = c1
    if r.overflow_at_lower:
        q.where(c1 <= c, c < c1 + big)
    else:
        now = q.int("now")
        qn, _ = q.divmod(now, big, "w", (k1, k1 + 1))
        q.where(now >= c, c1 == qn * big)
    q.where(z3.Not(r.due(e, c, u)), z3.Not(r.fits(e, c, big)))
    q.goal = z3.Not(r.due(e, c1, big))
    return q


def level_bound(r: Rules) -> Query:
    q = Query(r)
    t, n, c0, k0 = wheel(q)  # the base wheel
    m = q.int("tickRatio")  # level L's tick is m * tick (m = n**L)
    q.where(m >= 1)
    u = m * t
    src = c0 if r.overflow_at_lower else q.int("now")
    if not r.overflow_at_lower:
        q.where(src >= c0)
    ql, rl = q.divmod(src, u, "cl")
    cl = ql * u
    q.shown["currentTime_L"] = cl
    # c0 - cl = rl is a multiple of t below u = m*t, hence at most u - t.
    rk = z3.Int("cl_rk")
    if r.overflow_at_lower:
        q.where(rl == rk * t)
        q.mono(rk, m - 1, t)
        q.mono(rk, m, t)
    e = q.int("exp")
    d = e - c0
    q.shown["exp - currentTime"] = d
    low = z3.Implies(d < u * n - u + t, r.fits(e, cl, u * n))
    high = z3.Implies(d >= u * n, z3.Not(r.fits(e, cl, u * n)))
    q.goal = z3.And(low, high)
    return q


def no_early_fire(r: Rules) -> Query:
    q = Query(r)
    t, n, c, k = wheel(q)
    now, e = q.int("now"), q.int("exp")
    q.where(c <= now)  # the base wheel's clock lags the real one, never leads it
    q.where(r.due(e, c, t))
    qe, _ = q.divmod(e, t, "w", (k + 1, k + 2))
    w = qe * t
    q.mono(qe, k, t)
    q.shown["windowStart"] = w
    q.goal = w <= now
    return q


def fire_on_time(r: Rules) -> Query:
    q = Query(r)
    t = q.int("tick")
    q.where(t >= 1)
    e = q.int("exp")
    qe, _ = q.divmod(e, t, "w")
    w = qe * t
    # Advanced at the window start: the poll happens at now = w, if the queue hands it over then.
    now = w
    q.shown["fire - exp"] = now - e
    q.goal = z3.And(r.polled(w, now), 0 <= e - now, e - now < t)
    return q


def lateness_bound(r: Rules) -> Query:
    q = Query(r)
    t = q.int("tick")
    gap = q.int("advanceGap")
    q.where(t >= 1, gap >= 1)
    e = q.int("exp")
    qe, _ = q.divmod(e, t, "w")
    w = qe * t
    a0, a1, a2 = q.int("advance0"), q.int("advance1"), q.int("advance2")
    q.where(a0 < a1, a1 < a2, a1 - a0 <= gap, a2 - a1 <= gap)
    q.where(z3.Not(r.polled(w, a0)), r.polled(w, a2))
    fire = z3.If(r.polled(w, a1), a1, a2)  # the first advance at which the bucket is handed over
    q.shown["fire - exp"] = fire - e
    q.goal = z3.And(-t < fire - e, fire - e < gap)
    return q


def mock_fire_window(r: Rules) -> Query:
    q = Query(r)
    e, gap = q.int("exp"), q.int("advanceGap")
    a0, a1 = q.int("advance0"), q.int("advance1")
    q.where(gap >= 1, a0 < a1, a1 - a0 <= gap)

    def runs(now: z3.ArithRef) -> z3.BoolRef:
        return now > e if r.mock_gt else now >= e

    q.where(z3.Not(runs(a0)), runs(a1))  # still queued after a0, dequeued and run at a1
    q.shown["fire - exp"] = a1 - e
    q.goal = z3.And(0 < a1 - e, a1 - e <= gap)
    return q


def no_int64_overflow(r: Rules) -> Query:
    q = Query(r)
    t, n = q.int("tick"), q.int("wheel_size")
    now, d = q.int("now"), q.int("delay")
    if r.limits:
        q.where(t >= 1, t <= MAX_TICK_MS, n >= 2, n <= MAX_WHEEL_SIZE, now >= 0, now <= MAX_TIME_MS,
                d >= MIN_DELAY_MS, d <= MAX_DELAY_MS)
        e_lo, e_hi = MIN_DELAY_MS, MAX_TIME_MS + MAX_DELAY_MS
    else:
        q.where(t >= 1, t <= INT64_MAX, n >= 2, n <= JAVA_INT_MAX, now >= 0, now <= MAX_TIME_MS,
                d >= INT64_MIN, d <= INT64_MAX)
        e_lo, e_hi = INT64_MIN, INT64_MAX
    e = now + d
    q.shown["exp"] = e
    # A wheel the entry reaches: level 0 (u = tick), or a level created because some expiration
    # e' (in range) did not fit the wheel below, whose clock c' >= 0: u = that wheel's interval
    # <= e' - c'.
    u = q.int("levelTick")
    c, k = q.multiple("c", u)
    q.shown["levelClock"] = c
    lower_c, e_creator = q.int("lowerClock"), q.int("creatorExp")
    q.where(k >= 0, c <= now, lower_c >= 0, e_creator >= e_lo, e_creator <= e_hi)
    q.where(z3.Or(u == t, z3.And(u >= t, e_creator - lower_c >= u)))
    q.mono(k, z3.IntVal(0), u)
    interval = u * n
    vb, _ = q.divmod(e, u, "v", (z3.IntVal(0), z3.IntVal(1)))
    intermediates = {"exp": e, "currentTime + tick": c + u, "interval": interval,
                     "currentTime + interval": c + interval, "bucket start": vb * u, "virtualId": vb}
    q.shown.update({k_: v for k_, v in intermediates.items() if k_ != "exp"})
    q.goal = z3.And([z3.And(INT64_MIN <= v, v <= INT64_MAX) for v in intermediates.values()])
    return q


def exp_fits_int64(r: Rules) -> Query:
    q = Query(r)
    now, d = q.int("now"), q.int("delay")
    lo, hi = (MIN_DELAY_MS, MAX_DELAY_MS) if r.limits else (INT64_MIN, INT64_MAX)
    q.where(now >= 0, now <= MAX_TIME_MS, d >= lo, d <= hi)
    e = now + d
    q.shown["exp = now + delay"] = e
    q.goal = z3.And(INT64_MIN <= e, e <= INT64_MAX)
    return q


def interval_never_zero_bv(r: Rules) -> Query:
    """64-bit two's-complement arithmetic, as Java computes ``tickMs * wheelSize``."""
    q = Query(r)
    u = z3.BitVec("levelTick", 64)
    n = z3.BitVec("wheel_size", 64)
    q.shown.update(levelTick=u, wheel_size=n)
    if r.limits:
        # A level's tick is < EXP_SPAN inside the limits (no-int64-overflow), the size <= 2**16.
        q.where(z3.UGE(u, 1), z3.ULT(u, EXP_SPAN), z3.UGE(n, 2), z3.ULE(n, MAX_WHEEL_SIZE))
    else:
        q.where(u > 0, z3.UGE(n, 2), z3.ULE(n, MAX_WHEEL_SIZE))
    interval = u * n
    q.shown["interval (as Java computes it)"] = interval
    q.goal = interval > 0
    return q


@dataclasses.dataclass(frozen=True)
class Lemma:
    name: str
    statement: str
    #: the SEMANTICS.md section (rule) the lemma proves
    section: str
    #: builds the query from a rules value of the lemma's own model: :class:`Rules` for the wheel's
    #: lemmas, ``PurgatoryRules`` for spec/purgatory_proof.py's (each model's rules type differs,
    #: so the field is typed by what the lemma's module declares, not here)
    build: Callable[[Any], Query]
    #: "proven" for a lemma that must hold; "counterexample" for a hazard that must be exhibited
    expect: str = "proven"
    #: the rules to build it with (a hazard lemma is built with the hazardous rules)
    rules: Any = KAFKA
    #: the mutation that must break it (tests and ``wheelspec prove --mutations``)
    mutation: str | None = None
    #: the properties of spec/properties.py (registry names) this lemma establishes
    proves: tuple[str, ...] = ()


LEMMAS: tuple[Lemma, ...] = (
    Lemma("division-order", "for a = q*b + r, 0 <= r < b: a vs k*b compares as q vs k; x*b <= y*b iff x <= y",
          "Placement", division_order_lemma, mutation="remainder-le"),
    Lemma("placement", "an accepted expiration lies in its bucket's window [b, b + tick), index in [0, n)",
          "Placement", placement, mutation="relative-bucket"),
    Lemma("bucket-uniqueness", "in [currentTime, currentTime + interval) two expirations share a bucket index "
          "only if they share its window", "Buckets", bucket_uniqueness, mutation="fit-le"),
    Lemma("no-aliasing-over-time", "a bucket still queued (expiration >= last polled) is never reused for "
          "another window as the clock advances lazily", "Buckets", no_aliasing_over_time,
          mutation="relative-bucket"),
    Lemma("cascade-progress", "a task flushed from level L+1 is re-added at level <= L or is due",
          "Clock", cascade_progress, mutation="advance-gt"),
    Lemma("clocks-aligned", "advanceClock keeps each overflow wheel's clock = floor(lower clock / its tick) "
          "* its tick", "Clock", clocks_stay_aligned, mutation="advance-gt"),
    Lemma("rejected-not-due-above", "an expiration a wheel rejects (beyond its interval) is never due in its "
          "overflow wheel", "Placement", rejected_not_due_above, mutation="overflow-at-now"),
    Lemma("levels-bound", "exp lands at level <= L if exp - currentTime < tick_L*(n-1) + tick, at level > L "
          "if >= tick_L*n (tick_L = tick*n^L)", "Placement", level_bound, mutation="overflow-at-now"),
    Lemma("no-early-fire", "a due entry (exp < currentTime + tick) fires at now >= floor(exp/tick)*tick",
          "Firing rule", no_early_fire, mutation="due-le"),
    Lemma("fire-on-time", "advanced at the window start, a task fires with 0 <= exp - fire < tick",
          "Firing rule", fire_on_time, mutation="poll-lt"),
    Lemma("lateness-bound", "with advances at most G apart, -tick < fire - exp < G", "Firing rule",
          lateness_bound, mutation="poll-lt"),
    Lemma("mocktimer-fire-window", "MockTimer (strict-gt), advances at most G apart: 0 < fire - exp <= G",
          "Profiles", mock_fire_window, mutation="mock-ge"),
    Lemma("no-int64-overflow", "inside spec/limits.py every intermediate of placement fits a signed 64-bit "
          "integer", "Ranges", no_int64_overflow, mutation="no-limits"),
    Lemma("interval-positive", "inside the limits a level's interval tick*wheelSize, computed in int64, is > 0",
          "Ranges", interval_never_zero_bv, mutation="no-limits"),
    Lemma("kafka-exp-wraps", "stock Kafka (any long delay): now + delay can overflow int64 (Long.MAX wraps, "
          "runs at once)", "Ranges", exp_fits_int64, expect="counterexample", rules=Rules(limits=False)),
    Lemma("kafka-interval-zero", "stock Kafka (huge delays): an overflow wheel's interval can wrap to <= 0 "
          "(spin, divide by zero)", "Ranges", interval_never_zero_bv, expect="counterexample",
          rules=Rules(limits=False)),
)


# ------------------------------------------------------------------ running ---------------------
@dataclasses.dataclass
class Outcome:
    name: str
    statement: str
    #: "proven", "counterexample", "unknown" or "vacuous" (the hypotheses contradict each other)
    result: str
    seconds: float
    expected: str
    counterexample: dict[str, int] = dataclasses.field(default_factory=dict)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.result == self.expected

    def describe_counterexample(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.counterexample.items())


def _value(model: z3.ModelRef, e: z3.ExprRef) -> int:
    v = model.eval(e, model_completion=True)
    if z3.is_bv(v):
        return v.as_signed_long()
    return v.as_long()


#: Solver configurations tried in turn, each with a share of the time budget: Z3's nonlinear
#: integer search is sensitive to heuristics, and a second configuration often settles at once
#: what the first one wanders on.
PORTFOLIO: tuple[tuple[str | None, int], ...] = ((None, 0), ("QF_NIA", 0), (None, 11), ("QF_NIA", 23))


#: A configuration for floating-point queries that must be unsatisfiable: bit-blasting with an
#: and-inverter-graph pass, which merges the circuits one operation gets under several rounding
#: modes (spec/arith.py: the reciprocal's query takes 1-3 s where QF_FP takes 5-50 s).  It may
#: answer sat as unknown, so a portfolio lists QF_FP after it.
FP_BITBLAST = "QF_FP/aig"


def _solver(logic: str | None, seed: int, timeout_ms: int) -> z3.Solver:
    if logic == FP_BITBLAST:
        s = z3.Then("simplify", "fpa2bv", "simplify", "bit-blast", "aig", "sat").solver()
    else:
        s = z3.SolverFor(logic) if logic else z3.Solver()
    s.set("timeout", timeout_ms)
    if seed:
        s.set("random_seed", seed)
    return s


def decide(q: Query, timeout_ms: int = 20_000) -> tuple[str, dict[str, int], str]:
    """("proven" | "counterexample" | "unknown" | "vacuous", model, reason) for one query."""
    portfolio = q.portfolio or PORTFOLIO
    share = max(timeout_ms // len(portfolio), 500)
    # (A query's own portfolio ends with a configuration that answers sat; the default is Z3's.)
    s = _solver(portfolio[-1][0] if q.portfolio else None, 0, timeout_ms)
    s.add(*q.hyps)
    if s.check() == z3.unsat:
        return "vacuous", {}, "the hypotheses are contradictory"
    reasons = []
    for logic, seed in portfolio:
        s = _solver(logic, seed, share)
        s.add(*q.hyps)
        s.add(z3.Not(q.goal))
        res = s.check()
        if res == z3.unsat:
            return "proven", {}, ""
        if res == z3.sat:
            m = s.model()
            return "counterexample", {k: _value(m, v) for k, v in q.shown.items()}, ""
        reasons.append(f"{logic or 'default'}/seed {seed}: {s.reason_unknown()}")
    return "unknown", {}, "; ".join(reasons)


def run_lemma(lemma: Lemma, rules: Any = None, timeout_ms: int = 20_000) -> Outcome:
    """Decide ``lemma`` under its own rules, or under ``rules`` (a mutation)."""
    t0 = time.perf_counter()
    result, cex, reason = decide(lemma.build(rules if rules is not None else lemma.rules), timeout_ms)
    expected = lemma.expect if rules is None else "counterexample"
    return Outcome(lemma.name, lemma.statement, result, time.perf_counter() - t0, expected, cex, reason)
