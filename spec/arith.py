"""The optimized kernels' division-free window number, proven equal to ``exp // tick`` with Z3.

``_place_range`` and ``_bucket_block`` (optimized/timer_kernels.py) find a bucket's window number
``exp // tick`` without an integer division::

    v0 = int64(float64(exp) * (1.0 / float64(tick)))     # the truncated float quotient
    vid = v0 - 1 if v0*tick > exp else (v0 + 1 if v0*tick + tick <= exp else v0)
    vid = v0 - int64(v0*tick > exp) + int64(v0*tick + tick <= exp)    # _bucket_block, branch-free

Claim (lemma ``reciprocal-division``): ``vid == exp // tick`` for every ``0 <= exp < EXP_BOUND`` and
``1 <= tick <= TICK_BOUND``, in IEEE-754 binary64 with round-to-nearest-even (numba compiles the
kernels without ``fastmath``: ``sitofp``, ``fdiv``, ``fmul``, ``fptosi``, nothing contracted or
reassociated), with no int64 overflow in the correction.

One query stating all of it (the float operations on 64-bit inputs and an integer product to
compare with) does not finish: a SAT solver cannot relate a divider circuit to a multiplier.  The
proof is therefore a chain of small queries, each one's conclusion a hypothesis of the next:

1. Bit-precise, in Z3's floating-point theory (``fp.div``, ``fp.mul``, ``to_fp``, ``fp.to_sbv`` of
   SMT-LIB, which define each operation as the exact result rounded in the given mode), over the
   operands' whole ranges: ``recip-exp-exact`` (``float64(exp)`` is ``exp``), and for the tick's
   conversion and the product (``recip-tick-rounded``, ``recip-product-rounded``; for the reciprocal
   ``recip-reciprocal-rounded``, in :data:`SLOW_LEMMAS`, checked by the tests) that the
   round-to-nearest result is the round-down (RTN) or the round-up (RTP) result of the same exact
   value, and that the values stay in range (``recip-reciprocal-range`` too: no NaN,
   infinity, zero divisor or underflow: ``1 <= float64(tick) <= TICK_BOUND``, ``2**-62 <= 1/tick``
   rounded ``<= 1``, a product ``>= +0``); ``recip-truncation``: ``fp.to_sbv`` towards zero gives
   ``v0 <= p < v0 + 1`` for ``0 <= p <= 2**46``; ``recip-successor-gap``: the double above a double
   ``0 <= a <= 2**62`` is at most ``a * (1 + 2**-52) + 2**-64``.
2. The definitions of the rounding modes: ``RTN(x)`` is the largest double ``<= x``, so
   ``RTN(x) <= x < succ(RTN(x))``; ``RTP(x)``, the least double ``>= x``, is at most
   ``succ(RTN(x))``; round-to-nearest gives one of the two.  This is what links a double to the
   exact real value it rounds, as SMT-LIB and IEEE-754 define the modes, stated (not proven) in
   ``recip-within-one``.
3. ``recip-within-one`` (real and integer arithmetic): from 1 and 2, with ``e = exp`` exact, the
   float quotient ``p`` satisfies ``q - 1 < p < q + 1`` for ``q = exp // tick`` (the relative error
   of three roundings, about ``3 * 2**-52``, times a quotient below ``2**45``, is far below 1), so
   the truncation ``v0`` is ``q - 1`` or ``q``: the upward step of the correction never fires
   inside the range; the kernels keep it, and ``reciprocal-division`` proves it harmless.
4. ``reciprocal-division`` (integer arithmetic): from ``v0`` in ``{q - 1, q, q + 1}`` both forms of
   the correction give ``q``, and ``v0*tick``, ``v0*tick + tick`` fit an int64.

Every value of step 1 is a double or an int64 of the ranges step 3 uses (step 3 proves the
product's range ``0 <= p <= 2**46`` before using the truncation), so the chain covers the whole
range; the only statements ``wheelspec prove`` does not check with Z3 are the definitions in step
2 (and the tests check the last one on the division's bits).

Mutation ``no-correction`` (``wheelspec prove --mutations``): without the correction the window
number is ``v0``.  An abstract ``v0 = q - 1`` would refute that trivially; to show that the failure
is real, the mutated ``reciprocal-division`` computes ``v0`` bit-precisely from ``exp`` and ``tick``
as the kernels do and asks for a pair with ``v0 != exp // tick``.  The search is kept small and
fast: ``exp = k * tick`` for ``tick <= 64`` and ``k <= 16`` (a multiple, whose quotient the
truncated product can miss by one when ``1/tick`` rounds down; the only such tick up to 64 is 49),
with the 64 reciprocals evaluated by Z3 on numerals.  The tests replay the model in numpy.
"""

from __future__ import annotations

import z3

from .lemmas import FP_BITBLAST, KAFKA, Lemma, Query, Rules
from .limits import EXP_SPAN, MAX_WHEEL_SIZE

#: Expirations the proof covers: ``0 <= exp < EXP_BOUND``.  The limits keep every expiration below
#: ``MAX_TIME_MS + MAX_DELAY_MS < EXP_SPAN``; the kernels' own guard admits ``exp < current_time +
#: EXP_SPAN`` with ``current_time <= MAX_TIME_MS < EXP_SPAN``, so twice EXP_SPAN covers that too.
#: (A negative expiration is always due: placement never divides it.)
EXP_BOUND: int = 2 * EXP_SPAN
#: Ticks the proof covers: ``1 <= tick <= TICK_BOUND``.  A level's tick is the interval of the
#: level below, at most ``MAX_WHEEL_SIZE * EXP_SPAN`` (spec/limits.py); the optimized level table's
#: margin row (optimized/layout.py ``max_levels``) stays below twice that.
TICK_BOUND: int = 2 * MAX_WHEEL_SIZE * EXP_SPAN
#: Lower bound of the rounded reciprocal (below ``1 / TICK_BOUND``) and upper bound of the float
#: product the truncation lemma covers (above ``EXP_BOUND``).
RECIP_MIN_LOG2 = -62
PRODUCT_MAX_LOG2 = 46
#: The successor bound: ``succ(a) <= a * (1 + 2**-SUCC_REL_LOG2) + 2**-SUCC_ABS_LOG2``.
SUCC_REL_LOG2 = 52
SUCC_ABS_LOG2 = 1074  # the least positive (subnormal) double: the successor of +0
#: Search range of the mutation's witness: ``tick <= 2**WITNESS_TICK_LOG2``, ``exp = k * tick``
#: with ``k <= 2**WITNESS_K_LOG2``.
WITNESS_TICK_LOG2 = 6
WITNESS_K_LOG2 = 4

F64 = z3.Float64()
#: The floating-point steps: bit-blasting with an AIG pass (lemmas.FP_BITBLAST) under three seeds,
#: each with a share of the budget (on the reciprocal its time has a long tail: mostly 1-3 s of CPU,
#: sometimes 20 s or more), then QF_FP, which answers sat with a model.
FP_PORTFOLIO: tuple[tuple[str | None, int], ...] = ((FP_BITBLAST, 0), (FP_BITBLAST, 7), (FP_BITBLAST, 13),
                                                    ("QF_FP", 0))
#: Steps whose variables are int64 bit-vectors converted to doubles.
BVFP_PORTFOLIO: tuple[tuple[str | None, int], ...] = (("QF_BVFP", 0),)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def _fp(x: float) -> z3.FPRef:
    return z3.FPVal(x, F64)


def _succ(x: z3.FPRef) -> z3.FPRef:
    """The double just above a non-negative finite double (IEEE-754 orders non-negative doubles
    as their bit patterns)."""
    return z3.fpBVToFP(z3.fpToIEEEBV(x) + 1, F64)


def _one_of(nearest: z3.FPRef, down: z3.FPRef, up: z3.FPRef) -> z3.BoolRef:
    """The round-to-nearest result is the round-down or the round-up result (the same double:
    Z3's ``=``, which tells -0 from +0)."""
    return z3.Or(nearest == down, nearest == up)


def float_quotient(exp: z3.BitVecRef, tick: z3.BitVecRef) -> z3.BitVecRef:
    """``int64(float64(exp) * (1.0 / float64(tick)))`` bit-precisely, as the kernels compute it."""
    rne = z3.RNE()
    recip = z3.fpDiv(rne, _fp(1.0), z3.fpSignedToFP(rne, tick, F64))
    return z3.fpToSBV(z3.RTZ(), z3.fpMul(rne, z3.fpSignedToFP(rne, exp, F64), recip), z3.BitVecSort(64))


def _fp_query(portfolio: tuple[tuple[str | None, int], ...]) -> Query:
    q = Query(KAFKA)
    q.portfolio = portfolio
    return q


# ------------------------------------------------------------------ step 1: the roundings ---------
def exp_exact(r: Rules) -> Query:
    q = _fp_query(BVFP_PORTFOLIO)
    e = z3.BitVec("exp", 64)
    q.shown["exp"] = e
    q.where(e >= 0, e < EXP_BOUND)
    down, up, nearest = (z3.fpSignedToFP(m, e, F64) for m in (z3.RTN(), z3.RTP(), z3.RNE()))
    # Rounded down and up to the same double: exp is that double.
    q.goal = z3.And(nearest == down, nearest == up, z3.fpIsPositive(nearest))
    return q


def tick_rounded(r: Rules) -> Query:
    q = _fp_query(BVFP_PORTFOLIO)
    t = z3.BitVec("tick", 64)
    q.shown["tick"] = t
    q.where(t >= 1, t <= TICK_BOUND)
    down, up, nearest = (z3.fpSignedToFP(m, t, F64) for m in (z3.RTN(), z3.RTP(), z3.RNE()))
    q.goal = z3.And(_one_of(nearest, down, up), down >= _fp(1.0), nearest <= _fp(float(TICK_BOUND)))
    return q


def _reciprocal(q: Query) -> tuple[z3.FPRef, z3.FPRef, z3.FPRef]:
    x = z3.FP("float_tick", F64)
    q.shown["float_tick_bits"] = z3.fpToIEEEBV(x)
    # Every double float64(tick) can be (recip-tick-rounded), not only the integers.
    q.where(x >= _fp(1.0), x <= _fp(float(TICK_BOUND)))
    down, up, nearest = (z3.fpDiv(m, _fp(1.0), x) for m in (z3.RTN(), z3.RTP(), z3.RNE()))
    return down, up, nearest


def reciprocal_rounded(r: Rules) -> Query:
    q = _fp_query(FP_PORTFOLIO)
    down, up, nearest = _reciprocal(q)
    q.goal = _one_of(nearest, down, up)
    return q


def reciprocal_range(r: Rules) -> Query:
    # A query of its own: with the rounding goal in the same query, the solver's time varies from
    # 1 to 30 s between runs; apart, each takes 1-3 s.
    q = _fp_query(FP_PORTFOLIO)
    down, _, nearest = _reciprocal(q)
    q.goal = z3.And(down >= _fp(2.0**RECIP_MIN_LOG2), nearest <= _fp(1.0))
    return q


def product_rounded(r: Rules) -> Query:
    q = _fp_query(FP_PORTFOLIO)
    e, rec = z3.FP("float_exp", F64), z3.FP("reciprocal", F64)
    q.shown.update(float_exp_bits=z3.fpToIEEEBV(e), reciprocal_bits=z3.fpToIEEEBV(rec))
    # Every double float64(exp) (recip-exp-exact: +0 or positive, < EXP_BOUND) and the rounded
    # reciprocal can be (recip-reciprocal-range and recip-within-one: in [2**-62, 1]).
    q.where(z3.fpIsPositive(e), e < _fp(float(EXP_BOUND)),
            rec >= _fp(2.0**RECIP_MIN_LOG2), rec <= _fp(1.0))
    down, up, nearest = (z3.fpMul(m, e, rec) for m in (z3.RTN(), z3.RTP(), z3.RNE()))
    q.goal = z3.And(_one_of(nearest, down, up), z3.fpIsPositive(down))
    return q


def truncation(r: Rules) -> Query:
    q = _fp_query(BVFP_PORTFOLIO)
    p = z3.FP("product", F64)
    q.shown["product_bits"] = z3.fpToIEEEBV(p)
    q.where(z3.fpIsPositive(p), p <= _fp(2.0**PRODUCT_MAX_LOG2))
    v = z3.fpToSBV(z3.RTZ(), p, z3.BitVecSort(64))
    q.shown["int64(product)"] = v
    lo = [z3.fpSignedToFP(m, v, F64) for m in (z3.RTN(), z3.RTP())]
    hi = [z3.fpSignedToFP(m, v + 1, F64) for m in (z3.RTN(), z3.RTP())]
    # v and v + 1 convert exactly (down = up), and the product lies in [v, v + 1).
    q.goal = z3.And(v >= 0, lo[0] == lo[1], hi[0] == hi[1], lo[0] <= p, p < hi[0])
    return q


def successor_gap(r: Rules) -> Query:
    q = _fp_query(FP_PORTFOLIO)
    a = z3.FP("a", F64)
    q.shown["a_bits"] = z3.fpToIEEEBV(a)
    q.where(z3.fpIsPositive(a), a <= _fp(2.0**62))
    rtn = z3.RTN()
    # Each step rounds down, so the right-hand side is at most the exact a + a*2**-52 + 2**-64.
    bound = z3.fpAdd(rtn, z3.fpAdd(rtn, a, z3.fpMul(rtn, a, _fp(2.0**-SUCC_REL_LOG2))), _fp(2.0**-SUCC_ABS_LOG2))
    q.goal = z3.And(_succ(a) > a, _succ(a) <= bound)
    return q


# ------------------------------------------------------------------ step 3: within one ------------
def within_one(r: Rules) -> Query:
    """Reals stand for the doubles (a superset: any real satisfying the step-1 facts)."""
    q = Query(r)
    e, t, qq, rem, v0 = (q.int(n) for n in ("exp", "tick", "exp // tick", "exp % tick", "v0"))
    q.where(e >= 0, e < EXP_BOUND, t >= 1, t <= TICK_BOUND, e == qq * t + rem, 0 <= rem, rem < t)
    rel, tiny = z3.Q(1, 2**SUCC_REL_LOG2), z3.Q(1, 2**SUCC_ABS_LOG2)

    def rounded(name: str, lo_bound: z3.ArithRef | int) -> tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef, z3.ArithRef]:
        """The RTN result of one operation, the double above it, the RTP result and the RNE
        result: the step-1 facts (one of down, up; the successor gap) and, from the definitions,
        ``up <= succ(down)`` (the least double >= x is at most a double > x)."""
        down, succ, up, nearest = z3.Reals(f"{name}_down {name}_succ {name}_up {name}_nearest")
        q.where(down >= lo_bound, succ <= down * (1 + rel) + tiny, up <= succ, z3.Or(nearest == down, nearest == up))
        return down, succ, up, nearest

    # float64(tick): RTN(tick) <= tick < its successor and tick <= RTP(tick) (step 2).
    t_down, t_succ, t_up, tf = rounded("float_tick", 1)
    q.where(t_down <= t, t < t_succ, t <= t_up, tf <= TICK_BOUND)
    # 1.0 / float64(tick), the same multiplied out by tf >= 1 > 0.
    r_down, r_succ, r_up, rec = rounded("reciprocal", z3.Q(1, 2**-RECIP_MIN_LOG2))
    q.where(r_down * tf <= 1, 1 < r_succ * tf, 1 <= r_up * tf, rec <= 1)
    # float64(exp) * reciprocal, float64(exp) = exp (recip-exp-exact).
    p_down, p_succ, p_up, p = rounded("product", 0)
    q.where(p_down <= e * rec, e * rec < p_succ, e * rec <= p_up)
    # Truncation (recip-truncation), for a product in its range.
    in_range = z3.And(p >= 0, p <= 2**PRODUCT_MAX_LOG2)
    q.where(z3.Implies(in_range, z3.And(v0 <= p, p < v0 + 1)))
    q.goal = z3.And(in_range, qq - 1 < p, p < qq + 1, qq - 1 <= v0, v0 <= qq)
    return q


# ------------------------------------------------------------------ step 4: the correction --------
def correction(r: Rules) -> Query:
    if not r.correction:
        return _uncorrected_witness()
    q = Query(r)
    e, t, qq, rem, v0 = (q.int(n) for n in ("exp", "tick", "exp // tick", "exp % tick", "v0"))
    q.where(e >= 0, e < EXP_BOUND, t >= 1, t <= TICK_BOUND, e == qq * t + rem, 0 <= rem, rem < t)
    q.where(qq - 1 <= v0, v0 <= qq + 1)  # recip-within-one (which proves v0 <= q)
    m = v0 * t
    branching = z3.If(m > e, v0 - 1, z3.If(m + t <= e, v0 + 1, v0))
    branch_free = v0 - z3.If(m > e, 1, 0) + z3.If(m + t <= e, 1, 0)
    q.shown.update({"vid (branching)": branching, "vid (branch-free)": branch_free})
    fits = [z3.And(INT64_MIN <= x, x <= INT64_MAX) for x in (m, m + t)]
    q.goal = z3.And(branching == qq, branch_free == qq, *fits)
    return q


def _uncorrected_witness() -> Query:
    q = _fp_query(BVFP_PORTFOLIO)
    t, k = z3.BitVec("tick", 64), z3.BitVec("k", 64)
    e = t * k
    # 1.0 / float64(tick) for each tick of the search, evaluated by Z3's simplifier (fp.div on
    # numerals, the same semantics): with the divider circuit in the query the search takes 5-20 s.
    rne = z3.RNE()
    recip: z3.ExprRef = _fp(1.0)
    for tick in range(2, 2**WITNESS_TICK_LOG2 + 1):
        value = z3.simplify(z3.fpDiv(rne, _fp(1.0), z3.fpSignedToFP(rne, z3.BitVecVal(tick, 64), F64)))
        recip = z3.If(t == tick, value, recip)
    v0 = z3.fpToSBV(z3.RTZ(), z3.fpMul(rne, z3.fpSignedToFP(rne, e, F64), recip), z3.BitVecSort(64))
    q.where(t >= 1, t <= 2**WITNESS_TICK_LOG2, k >= 1, k <= 2**WITNESS_K_LOG2)
    q.shown.update({"tick": t, "exp": e, "exp // tick": k, "vid = int64(float64(exp) * (1.0 / float64(tick)))": v0})
    # exp = k * tick <= 2**10, so exp // tick is k: the window number must be k.
    q.goal = v0 == k
    return q


_SECTION = "Engine arithmetic"

#: The chain, in the order each step's conclusion is used; ``reciprocal-division`` is the claim.
LEMMAS: tuple[Lemma, ...] = (
    Lemma("recip-exp-exact", "float64(exp) is exp for 0 <= exp < 2*EXP_SPAN (rounded down and up alike)",
          _SECTION, exp_exact),
    Lemma("recip-tick-rounded", "float64(tick), 1 <= tick <= 2*W_max*EXP_SPAN, is RTN(tick) or RTP(tick); "
          "1 <= RTN, result <= 2*W_max*EXP_SPAN", _SECTION, tick_rounded),
    Lemma("recip-reciprocal-range", "for the same x: RTN(1/x) >= 2**-62 and 1.0 / x <= 1 (no underflow)",
          _SECTION, reciprocal_range),
    Lemma("recip-product-rounded", "e * r (doubles +0 <= e < 2*EXP_SPAN, 2**-62 <= r <= 1) is RTN(e*r) or "
          "RTP(e*r); RTN >= +0", _SECTION, product_rounded),
    Lemma("recip-truncation", "int64(p) for a double 0 <= p <= 2**46 is v with v <= p < v + 1 (v, v+1 exact)",
          _SECTION, truncation),
    Lemma("recip-successor-gap", "the double above a double 0 <= a <= 2**62 is > a and <= a*(1 + 2**-52) + 2**-1074",
          _SECTION, successor_gap),
    Lemma("recip-within-one", "from the above and RTN(x) <= x < succ(RTN(x)), x <= RTP(x): float quotient p has "
          "q-1 < p < q+1, so int64(p) is q-1 or q (q = exp // tick)", _SECTION, within_one),
    Lemma("reciprocal-division", "placement's reciprocal multiplication with its one-step correction (branching "
          "and branch-free) is exp // tick, no int64 overflow", _SECTION, correction, mutation="no-correction"),
)

#: Steps the tests check but ``wheelspec prove`` does not run: the reciprocal's rounding query takes
#: 1-3 s of CPU mostly and 20-60 s sometimes (seed and term order), too long a tail for the command.
#: Its conclusion is the definition of round-to-nearest (the nearer of the two doubles around the
#: exact value), which ``recip-within-one`` states for the division without it.
SLOW_LEMMAS: tuple[Lemma, ...] = (
    Lemma("recip-reciprocal-rounded", "1.0 / x (a double 1 <= x <= 2*W_max*EXP_SPAN) is RTN(1/x) or RTP(1/x)",
          _SECTION, reciprocal_rounded),
)
