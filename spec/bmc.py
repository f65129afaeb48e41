"""Bounded model checking and k-induction of the hierarchical timing wheel as a transition system.

The state is symbolic (Z3 integers and booleans) for a concrete small configuration -- tick,
wheel size, number of levels and of task slots -- and every clock reading, delay and expiration
is symbolic.  One transition is one of Kafka's steps (SEMANTICS.md "Placement", "Clock",
"Buckets"):

* ``add(k, d)``      -- ``SystemTimer.add``: task slot k gets a new entry with exp = now + d (its
  old entry, if any, is unlinked); placement walks the levels from the base wheel: due (fires at
  once) / bucket ``(exp div tick_L) mod n`` of level L, setting the bucket's expiration and
  enqueueing it iff the expiration changed / the overflow wheel (created on first need with its
  clock at the lower wheel's clock rounded down to its tick);
* ``cancel(k)``      -- ``TimerTask.cancel``: unlinks the entry; the bucket keeps its expiration;
* ``clock(T)``       -- the wall clock moves forward to T (nothing else happens);
* ``poll``           -- one iteration of ``advanceClock``'s loop: the delay queue hands over a
  queued bucket whose expiration is <= now and minimal among queued buckets (any one of several
  equal ones: the order among ties is left open, a superset of Kafka's heap order); every wheel
  advances to that expiration; each entry is re-added (cascades or fires); the bucket's
  expiration becomes -1.

A bucket's membership is a function of the task (level, index), so "linked in at most one bucket"
is structural; the checked invariants are:

``linked``   every pending task's (level, index) names an existing wheel's bucket whose window
             [expiration, expiration + tick_L) contains the task's expiration, at index
             (exp div tick_L) mod n;
``queued``   a bucket is queued at most once; it is queued iff its expiration is set, and a set
             expiration is a window start of that bucket (a multiple of tick_L with index b);
``no-early`` no task fires at a clock reading before floor(exp / tick) * tick;
``drained``  when no queued bucket is due, no pending task's window has started (nothing is lost);
``aligned``  each overflow wheel's clock is floor(lower clock / its tick) * its tick, the base
             clock <= now (an auxiliary invariant that makes the others inductive).

:func:`bmc` checks every state reachable in up to ``depth`` transitions from the initial state;
:func:`k_induction` checks that the conjunction of the invariants (plus the delay-queue facts it
needs) is preserved by every transition from *any* state satisfying it -- which, with the base
case, proves the invariants for all reachable states of that configuration.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import z3

from .lemmas import KAFKA, Rules

INVARIANTS = ("linked", "queued", "no-early", "drained", "aligned")
#: the registry properties (spec/properties.py) the invariants establish for each configuration
PROVES: dict[str, str] = {"no-early": "no-early-fire", "drained": "no-lost-task"}
#: Width of the machine words of the encoding.  Values are bit-vectors (bit-blasting decides these
#: queries in seconds, where linear integer arithmetic with div/mod timed out at depth 2) and every
#: clock reading is kept below 2**(W - 2), so no sum or comparison of the encoding wraps and signed
#: comparison is integer comparison.
W = 7
TIME_BOUND = 2 ** (W - 2)
IDLE, PENDING, FIRED, CANCELLED = 0, 1, 2, 3


@dataclasses.dataclass(frozen=True)
class Config:
    tick: int = 1
    wheel_size: int = 2
    levels: int = 3
    tasks: int = 2
    #: largest |delay| an add may use (it must also fit the top level; larger adds are disabled)
    max_delay: int = 12

    def tick_of(self, level: int) -> int:
        return self.tick * self.wheel_size**level

    def __post_init__(self) -> None:
        top = self.tick_of(self.levels)
        if TIME_BOUND + self.max_delay + top >= 2 ** (W - 1):
            raise ValueError(f"configuration too large for {W}-bit words: {self}")

    def describe(self) -> str:
        return f"tick {self.tick}, wheel size {self.wheel_size}, {self.levels} levels, {self.tasks} tasks"


@dataclasses.dataclass
class State:
    now: z3.ArithRef
    clock: list[z3.ArithRef]
    exists: list[z3.BoolRef]
    bexp: list[list[z3.ArithRef]]
    qcount: list[list[z3.ArithRef]]
    st: list[z3.ArithRef]
    exp: list[z3.ArithRef]
    lvl: list[z3.ArithRef]
    idx: list[z3.ArithRef]
    #: did the transition into this state fire a task early?
    early: z3.BoolRef


def _fresh(cfg: Config, tag: str) -> State:
    L, n, K = cfg.levels, cfg.wheel_size, cfg.tasks
    def v(name: str) -> z3.BitVecRef:
        return z3.BitVec(name, W)

    return State(
        now=v(f"now{tag}"),
        clock=[v(f"c{l}{tag}") for l in range(L)],
        exists=[z3.BoolVal(True)] + [z3.Bool(f"ex{l}{tag}") for l in range(1, L)],
        bexp=[[v(f"bexp{l}_{b}{tag}") for b in range(n)] for l in range(L)],
        qcount=[[v(f"q{l}_{b}{tag}") for b in range(n)] for l in range(L)],
        st=[v(f"st{k}{tag}") for k in range(K)],
        exp=[v(f"exp{k}{tag}") for k in range(K)],
        lvl=[v(f"lvl{k}{tag}") for k in range(K)],
        idx=[v(f"idx{k}{tag}") for k in range(K)],
        early=z3.Bool(f"early{tag}"),
    )


def _copy(s: State) -> State:
    return State(s.now, list(s.clock), list(s.exists), [list(r) for r in s.bexp], [list(r) for r in s.qcount],
                 list(s.st), list(s.exp), list(s.lvl), list(s.idx), s.early)


_counter = [0]


def _materialize(cfg: Config, s: State, cons: list[z3.BoolRef], tag: str) -> State:
    """A fresh state equal to ``s``: keeps terms small when updates are chained (a flush re-adds
    several entries in turn), so the formula grows linearly with the depth."""
    _counter[0] += 1
    out = _fresh(cfg, f"{tag}~{_counter[0]}")
    cons += _select(out, [(z3.BoolVal(True), s)])
    return out


def _div(x: z3.BitVecRef, u: int) -> z3.BitVecRef:
    return z3.UDiv(x, u)  # operands are non-negative (times are epoch-like readings)


def _mod(x: z3.BitVecRef, u: int) -> z3.BitVecRef:
    return z3.URem(x, u)


def _floor_to(x: z3.BitVecRef, u: int) -> z3.BitVecRef:
    return _div(x, u) * u


def _c(x: int) -> z3.BitVecRef:
    return z3.BitVecVal(x, W)


class _Placer:
    """Placement of one entry (``TimingWheel.add``), as symbolic updates of a state."""

    def __init__(self, cfg: Config, rules: Rules) -> None:
        self.cfg, self.r = cfg, rules

    def place(self, s: State, k: int | z3.ArithRef, e: z3.ArithRef, enabled: z3.BoolRef,
              task_slots: list[int]) -> tuple[State, z3.BoolRef, z3.BoolRef]:
        """Place expiration ``e`` for the task slots in ``task_slots`` selected by ``k``.  Returns
        (new state, fired-at-once, fits-the-modelled-levels)."""
        cfg, r = self.cfg, self.r
        n = cfg.wheel_size
        out = _copy(s)
        # Walk the levels: at level l the entry is due, or placed, or passed up.
        reach = enabled  # the walk reaches level l
        due_any = z3.BoolVal(False)
        for l in range(cfg.levels):
            u = cfg.tick_of(l)
            c = out.clock[l]
            due = z3.And(reach, r.due(e, c, _c(u)))
            fits = z3.And(reach, z3.Not(r.due(e, c, _c(u))), r.fits(e, c, _c(u * n)))
            due_any = z3.Or(due_any, due)
            x = e - c if r.relative_bucket else e
            b_idx = _mod(_div(x, u), n)
            window = _floor_to(x, u)
            for b in range(n):
                here = z3.And(fits, b_idx == b)
                changed = out.bexp[l][b] != window
                enqueue = z3.And(here, changed if r.enqueue_on_change else z3.BoolVal(True))
                out.qcount[l][b] = z3.If(enqueue, out.qcount[l][b] + 1, out.qcount[l][b])
                out.bexp[l][b] = z3.If(here, window, out.bexp[l][b])
            for kk in task_slots:
                sel = k == kk if not isinstance(k, int) else z3.BoolVal(k == kk)
                out.lvl[kk] = z3.If(z3.And(sel, fits), _c(l), out.lvl[kk])
                out.idx[kk] = z3.If(z3.And(sel, fits), b_idx, out.idx[kk])
            up = z3.And(reach, z3.Not(r.due(e, c, _c(u))), z3.Not(r.fits(e, c, _c(u * n))))
            if l + 1 < cfg.levels:
                # Create the overflow wheel on first need, its clock at the lower one's (rounded).
                create = z3.And(up, z3.Not(out.exists[l + 1]))
                start = out.clock[l] if r.overflow_at_lower else out.now
                out.clock[l + 1] = z3.If(create, _floor_to(start, cfg.tick_of(l + 1)), out.clock[l + 1])
                out.exists[l + 1] = z3.Or(out.exists[l + 1], up)
                reach = up
            else:
                top_ok = z3.Not(up)
        fired = due_any
        early = z3.And(fired, out.now < _floor_to(e, cfg.tick))
        out.early = z3.Or(out.early, early)
        for kk in task_slots:
            sel = k == kk if not isinstance(k, int) else z3.BoolVal(k == kk)
            out.st[kk] = z3.If(z3.And(sel, enabled), z3.If(fired, _c(FIRED), _c(PENDING)), out.st[kk])
            out.exp[kk] = z3.If(z3.And(sel, enabled), e, out.exp[kk])
        return out, fired, top_ok

    def advance(self, s: State, t: z3.ArithRef) -> State:
        """``advanceClock(t)`` on the base wheel, cascading to existing overflow wheels."""
        cfg, r = self.cfg, self.r
        out = _copy(s)
        moved = z3.BoolVal(True)
        time_l = t
        for l in range(cfg.levels):
            u = cfg.tick_of(l)
            go = z3.And(moved, out.exists[l], r.moves(time_l, out.clock[l], _c(u)))
            out.clock[l] = z3.If(go, _floor_to(time_l, u), out.clock[l])
            moved, time_l = go, out.clock[l]
        return out


def initial(cfg: Config, s: State, start: z3.ArithRef | None = None) -> list[z3.BoolRef]:
    """The state of a new SystemTimer at ``now`` (one wheel, empty buckets, idle tasks)."""
    f = [s.now >= 0, s.now <= TIME_BOUND, s.clock[0] == _floor_to(s.now, cfg.tick), z3.Not(s.early)]
    f += [z3.Not(x) for x in s.exists[1:]]
    f += [c == 0 for c in s.clock[1:]]
    f += [b == -1 for row in s.bexp for b in row] + [q == 0 for row in s.qcount for q in row]
    f += [x == IDLE for x in s.st] + [x == 0 for x in s.exp] + [x == 0 for x in s.lvl] + [x == 0 for x in s.idx]
    return f


def transition(cfg: Config, rules: Rules, s: State, tag: str) -> tuple[State, list[z3.BoolRef], dict[str, z3.ExprRef]]:
    """The successor of ``s`` under a symbolic choice of action; returns (state, constraints, choice)."""
    n, L, K = cfg.wheel_size, cfg.levels, cfg.tasks
    act, k, d, T = (z3.BitVec(f"{x}{tag}", W) for x in ("act", "k", "d", "T"))
    pl, pb = z3.BitVec(f"pl{tag}", W), z3.BitVec(f"pb{tag}", W)
    # Expirations are >= 0 (clock readings are epoch-like; a negative one would be due at once).
    cons = [act >= 0, act <= 3, k >= 0, k < K, d >= -cfg.max_delay, d <= cfg.max_delay, s.now + d >= 0,
            T >= s.now, T <= TIME_BOUND, pl >= 0, pl < L, pb >= 0, pb < n]
    placer = _Placer(cfg, rules)
    base = _copy(s)
    base.early = z3.BoolVal(False)

    # -- add(k, d): unlink the old entry (bucket untouched), then place.
    is_add = act == 0
    added, _, fits_top = placer.place(base, k, s.now + d, is_add, list(range(K)))
    added = _materialize(cfg, added, cons, tag + "add")
    cons.append(z3.Implies(is_add, fits_top))

    # -- cancel(k)
    cancelled = _copy(base)
    for kk in range(K):
        hit = z3.And(act == 1, k == kk, s.st[kk] == PENDING)
        cancelled.st[kk] = z3.If(hit, _c(CANCELLED), s.st[kk])

    # -- clock(T)
    clocked = _copy(base)
    clocked.now = z3.If(act == 2, T, s.now)

    # -- poll: the minimal queued due bucket (pl, pb)
    is_poll = act == 3
    sel_q = _pick(s.qcount, pl, pb, n, L)
    sel_e = _pick(s.bexp, pl, pb, n, L)
    cons.append(z3.Implies(is_poll, z3.And(sel_q >= 1, rules.polled(sel_e, s.now))))
    for l in range(L):
        for b in range(n):
            cons.append(z3.Implies(z3.And(is_poll, s.qcount[l][b] >= 1), sel_e <= s.bexp[l][b]))
    polled = _materialize(cfg, placer.advance(base, sel_e), cons, tag + "adv")
    for l in range(L):
        for b in range(n):
            mine = z3.And(is_poll, pl == l, pb == b)
            polled.qcount[l][b] = z3.If(mine, s.qcount[l][b] - 1, s.qcount[l][b])
    # Flush: each pending entry of that bucket is unlinked and re-added, in slot order.
    for kk in range(K):
        in_bucket = z3.And(is_poll, s.st[kk] == PENDING, s.lvl[kk] == pl, s.idx[kk] == pb)
        polled, _, ok = placer.place(polled, kk, s.exp[kk], in_bucket, [kk])
        polled = _materialize(cfg, polled, cons, tag + f"re{kk}")
        cons.append(z3.Implies(in_bucket, ok))
    for l in range(L):
        for b in range(n):
            polled.bexp[l][b] = z3.If(z3.And(is_poll, pl == l, pb == b), _c(-1), polled.bexp[l][b])

    nxt = _fresh(cfg, tag + "'")
    branches = [(act == 0, added), (act == 1, cancelled), (act == 2, clocked), (act == 3, polled)]
    cons += _select(nxt, branches)
    return nxt, cons, {"act": act, "k": k, "d": d, "T": T, "level": pl, "bucket": pb}


def _pick(grid: list[list[z3.ArithRef]], pl: z3.ArithRef, pb: z3.ArithRef, n: int, L: int) -> z3.ArithRef:
    out: z3.ArithRef = grid[0][0]
    for l in range(L):
        for b in range(n):
            out = z3.If(z3.And(pl == l, pb == b), grid[l][b], out)
    return out


def _select(nxt: State, branches: list[tuple[z3.BoolRef, State]]) -> list[z3.BoolRef]:
    def pick(get: Callable[..., Any]) -> Any:  # get(state); the lambdas bind their loop indices as defaults
        v = get(branches[-1][1])
        if len(branches) == 1:
            return v
        for cond, st in reversed(branches[:-1]):
            v = z3.If(cond, get(st), v)
        return v

    cons = [nxt.now == pick(lambda s: s.now), nxt.early == pick(lambda s: s.early)]
    for l in range(len(nxt.clock)):
        cons.append(nxt.clock[l] == pick(lambda s, l=l: s.clock[l]))
        if l:
            cons.append(nxt.exists[l] == pick(lambda s, l=l: s.exists[l]))
        for b in range(len(nxt.bexp[l])):
            cons.append(nxt.bexp[l][b] == pick(lambda s, l=l, b=b: s.bexp[l][b]))
            cons.append(nxt.qcount[l][b] == pick(lambda s, l=l, b=b: s.qcount[l][b]))
    for k in range(len(nxt.st)):
        for field in ("st", "exp", "lvl", "idx"):
            cons.append(getattr(nxt, field)[k] == pick(lambda s, f=field, k=k: getattr(s, f)[k]))
    return cons


def invariants(cfg: Config, s: State) -> dict[str, z3.BoolRef]:
    n, L = cfg.wheel_size, cfg.levels
    linked, queued = [], []
    for k in range(cfg.tasks):
        per_level = []
        for l in range(L):
            u = cfg.tick_of(l)
            be = _pick(s.bexp, _c(l), s.idx[k], n, L)
            per_level.append(z3.And(s.lvl[k] == l, s.exists[l], s.idx[k] >= 0, s.idx[k] < n,
                                    s.idx[k] == _mod(_div(s.exp[k], u), n), be >= 0, be <= s.exp[k],
                                    s.exp[k] < be + u))
        linked.append(z3.Implies(s.st[k] == PENDING, z3.Or(per_level)))
    for l in range(L):
        u = cfg.tick_of(l)
        for b in range(n):
            be, qc = s.bexp[l][b], s.qcount[l][b]
            queued.append(z3.And(qc >= 0, qc <= 1, (qc == 1) == (be != -1),
                                 z3.Implies(be != -1, z3.And(be >= 0, _mod(be, u) == 0, _mod(_div(be, u), n) == b))))
    nothing_due = z3.And([z3.Or(s.qcount[l][b] == 0, s.bexp[l][b] > s.now) for l in range(L) for b in range(n)])
    drained = z3.Implies(nothing_due, z3.And([z3.Implies(s.st[k] == PENDING, _floor_to(s.exp[k], cfg.tick) > s.now)
                                              for k in range(cfg.tasks)]))
    aligned = [s.clock[0] >= 0, s.clock[0] <= s.now, _mod(s.clock[0], cfg.tick) == 0]
    for l in range(1, L):
        aligned.append(z3.Implies(s.exists[l], s.clock[l] == _floor_to(s.clock[l - 1], cfg.tick_of(l))))
        if l + 1 < L:
            aligned.append(z3.Implies(s.exists[l + 1], s.exists[l]))
    return {"linked": z3.And(linked), "queued": z3.And(queued), "no-early": z3.Not(s.early),
            "drained": drained, "aligned": z3.And(aligned)}


def _strengthening(cfg: Config, s: State) -> z3.BoolRef:
    """Facts about reachable states the invariants need to be inductive: task fields in range;
    a queued bucket's window lies within its wheel's range (it was placed there and the clock has
    not passed its end) -- the delay-queue assumption seen from the wheel."""
    n, L = cfg.wheel_size, cfg.levels
    f = []
    for k in range(cfg.tasks):
        f += [s.st[k] >= IDLE, s.st[k] <= CANCELLED, s.exp[k] >= 0, s.exp[k] <= TIME_BOUND + cfg.max_delay]
    f += [s.now >= 0, s.now <= TIME_BOUND] + [c >= 0 for c in s.clock]
    for l in range(L):
        u = cfg.tick_of(l)
        for b in range(n):
            be = s.bexp[l][b]
            f.append(z3.Implies(be != -1, z3.And(s.exists[l], be >= 0, be >= s.clock[l], be < s.clock[l] + u * n)))
    return z3.And(f)


@dataclasses.dataclass
class Check:
    name: str
    statement: str
    result: str  # "proven" | "counterexample" | "unknown"
    seconds: float
    expected: str = "proven"
    trace: list[str] = dataclasses.field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.result == self.expected


def _trace(m: z3.ModelRef, cfg: Config, states: list[State], choices: list[dict[str, z3.ExprRef]]) -> list[str]:
    def v(x: Any) -> Any:
        r = m.eval(x, model_completion=True)
        return r.as_signed_long() if z3.is_bv_value(r) else r

    lines = [f"start: now={v(states[0].now)}"]
    for i, ch in enumerate(choices):
        a = v(ch["act"])
        s = states[i + 1]
        if a == 0:
            what = f"add(task {v(ch['k'])}, delay {v(ch['d'])})"
        elif a == 1:
            what = f"cancel(task {v(ch['k'])})"
        elif a == 2:
            what = f"clock -> {v(ch['T'])}"
        else:
            what = f"poll bucket (level {v(ch['level'])}, index {v(ch['bucket'])})"
        tasks = ", ".join(f"t{k}:{['idle', 'pending', 'fired', 'cancelled'][v(s.st[k])]}"
                          f"(exp {v(s.exp[k])}, L{v(s.lvl[k])}/{v(s.idx[k])})" for k in range(cfg.tasks))
        clocks = "/".join(str(v(c)) for c in s.clock)
        buckets = " ".join(f"L{l}b{b}={v(s.bexp[l][b])}x{v(s.qcount[l][b])}" for l in range(cfg.levels)
                           for b in range(cfg.wheel_size) if v(s.bexp[l][b]) != -1 or v(s.qcount[l][b]) != 0)
        lines.append(f"{i + 1}. {what}: now={v(s.now)} clocks={clocks} {tasks} buckets[{buckets}]"
                     + (" EARLY FIRE" if z3.is_true(v(s.early)) else ""))
    return lines


def bmc(cfg: Config, depth: int, rules: Rules = KAFKA, timeout_ms: int = 60_000) -> Check:
    """Check every invariant in every state reachable in at most ``depth`` transitions (one query:
    some state on some path of length <= depth breaks some invariant)."""
    t0 = time.perf_counter()
    name = f"bmc-{cfg.tick}x{cfg.wheel_size}x{cfg.levels}"
    stmt = (f"{', '.join(INVARIANTS)} hold in all states reachable in <= {depth} steps ({cfg.describe()}, "
            f"clock < {TIME_BOUND})")
    solver = z3.SolverFor("QF_BV")
    solver.set("timeout", timeout_ms)
    s0 = _fresh(cfg, "@0")
    solver.add(*initial(cfg, s0))
    states, choices = [s0], []
    for i in range(depth):
        nxt, cons, ch = transition(cfg, rules, states[-1], f"@{i + 1}")
        solver.add(*cons)
        states.append(nxt)
        choices.append(ch)
    invs = [invariants(cfg, st) for st in states]
    solver.add(z3.Or([z3.Not(z3.And(list(inv.values()))) for inv in invs]))
    res = solver.check()
    if res == z3.unsat:
        return Check(name, stmt, "proven", time.perf_counter() - t0)
    if res == z3.unknown:
        return Check(name, stmt, "unknown", time.perf_counter() - t0, reason=solver.reason_unknown())
    m = solver.model()
    for i, inv in enumerate(invs):
        broken = [k for k, f in inv.items() if z3.is_false(m.eval(f, model_completion=True))]
        if broken:
            tr = _trace(m, cfg, states[: i + 1], choices[:i])
            return Check(name, stmt, "counterexample", time.perf_counter() - t0,
                         trace=[f"invariant(s) broken after step {i}: {', '.join(broken)}"] + tr)
    raise AssertionError("model breaks no invariant")  # pragma: no cover


def k_induction(cfg: Config, rules: Rules = KAFKA, timeout_ms: int = 60_000) -> Check:
    """1-induction: from any state satisfying the invariants (and the strengthening facts), every
    transition leads to a state satisfying them.  With the base case (the initial state satisfies
    them, checked here too) this proves them for every reachable state of ``cfg``."""
    t0 = time.perf_counter()
    name = f"induction-{cfg.tick}x{cfg.wheel_size}x{cfg.levels}"
    stmt = f"{', '.join(INVARIANTS)} are inductive: hold initially and after every step ({cfg.describe()})"
    s0 = _fresh(cfg, "@i0")
    base = z3.SolverFor("QF_BV")
    base.set("timeout", timeout_ms)
    base.add(*initial(cfg, s0))
    base.add(z3.Not(z3.And(list(invariants(cfg, s0).values()) + [_strengthening(cfg, s0)])))
    if base.check() != z3.unsat:
        return Check(name, stmt, "counterexample", time.perf_counter() - t0, trace=["the initial state breaks them"])
    s = _fresh(cfg, "@k")
    solver = z3.SolverFor("QF_BV")
    solver.set("timeout", timeout_ms)
    solver.add(*invariants(cfg, s).values(), _strengthening(cfg, s))
    nxt, cons, ch = transition(cfg, rules, s, "@k1")
    solver.add(*cons)
    inv2 = invariants(cfg, nxt)
    solver.add(z3.Not(z3.And(list(inv2.values()) + [_strengthening(cfg, nxt)])))
    res = solver.check()
    if res == z3.unsat:
        return Check(name, stmt, "proven", time.perf_counter() - t0)
    if res == z3.sat:
        m = solver.model()
        broken = [k for k, f in inv2.items() if z3.is_false(m.eval(f, model_completion=True))]
        if z3.is_false(m.eval(_strengthening(cfg, nxt), model_completion=True)):
            broken.append("strengthening")
        return Check(name, stmt, "counterexample", time.perf_counter() - t0,
                     trace=[f"not preserved: {', '.join(broken)}"] + _trace(m, cfg, [s, nxt], [ch]))
    return Check(name, stmt, "unknown", time.perf_counter() - t0, reason=solver.reason_unknown())


#: the configurations ``wheelspec prove`` checks
CONFIGS: tuple[Config, ...] = (
    Config(tick=1, wheel_size=2, levels=3, tasks=2, max_delay=7),
    Config(tick=2, wheel_size=3, levels=2, tasks=2, max_delay=9),
)
#: the depth of the bounded search ``wheelspec prove`` runs before the induction
BMC_DEPTH = 2
