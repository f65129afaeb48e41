"""Linearizability checking of concurrent histories (Wing & Gong's search with Lowe's memoization,
in the style of Porcupine), and the sequential model of wheelspec's timer and purgatory it checks
against.

The checker is generic: a :class:`Model` is four functions, as in Porcupine's ``model.go``:

* ``partition(history) -> [(label, sub-history)]``: independent pieces, checked separately;
* ``init() -> state`` (hashable);
* ``step(state, input, output) -> next states`` (empty: this output is impossible here; more than one:
  the specification is nondeterministic);
* ``describe(input, output) -> str`` for reports.

A history is a list of :class:`Operation` (client, input, invocation time, output, response time).
Times are any totally ordered numbers (scheduler steps, a global counter, nanoseconds); ``ret`` is
None for a call that never returned, which may or may not have taken effect.

Search.  Each partition is cut at *quiescent points* (no call in flight); between cuts, a
depth-first search over "which calls are linearized so far" (a bitmask) and the model state, with a
memo of visited ``(mask, state)`` pairs (Lowe's optimization of WGL), collects every state the
segment can end in, starting from every state the previous segments could end in.  A call may be
linearized next only if no pending call returned before it was invoked (real-time order).  If no
state survives a segment, the history is not linearizable; the *smallest non-linearizable window*
reported is that segment cut at the earliest time at which it already fails (calls still running
then are shown without a response: they may or may not have taken effect), with the states it
started from.  Both ends are sound: the start is a quiescent point whose possible states are all
kept, and a non-linearizable prefix makes the whole history non-linearizable.

The wheelspec model (:data:`WHEELSPEC`).  Partitions: timer calls by task id (``add`` ->
expiration, ``cancel`` -> whether it was pending, and a ``fire`` pseudo-call spanning from the
invocation of the call that fired it -- an advance, or an add of a due task -- to the ``Fire``
event); purgatory calls by operation id, with each ``checkAndComplete(k)`` and ``cancelForKey(k)``
projected onto every operation watched on ``k`` (output: did *this* call complete / cancel it), and
an ``expire`` pseudo-call for the timer's completion.  Per-operation specification: a watch
completes at once iff the operation is completable (else it is watched on all its keys); a check
of a watched key completes it iff completable and not yet completed; ``forceComplete`` returns
whether it was not yet completed; an expiry needs an uncompleted, watched operation.  Limits, by
design: the projection of one check onto several operations is checked per operation, so a finding
is always real but a history needing inconsistent linearization points for one check across
operations could pass; which completed operations ``cancelForKey`` returns is left free (it depends
on purges); ``watched``, ``numDelayed`` and ``size`` are global observations and not checked here;
expiry *timing* is the profile checker's job, not this one's.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from wheelspec.spec import ops

# --------------------------------------------------------------------------------- the checker


@dataclasses.dataclass(frozen=True)
class Operation:
    """One call of a concurrent history (Porcupine's ``Operation``)."""

    client: int
    input: Any
    call: float
    output: Any
    ret: float | None


@dataclasses.dataclass(frozen=True)
class Model:
    partition: Callable[[Sequence[Operation]], list[tuple[str, list[Operation]]]]
    init: Callable[[], Hashable]
    step: Callable[[Hashable, Any, Any], Iterable[Hashable]]
    describe: Callable[[Any, Any], str] = lambda i, o: f"{i!r} -> {o!r}"


@dataclasses.dataclass
class Window:
    """The smallest non-linearizable window of one partition."""

    partition: str
    ops: list[Operation]
    start_states: list[Hashable]

    def render(self, model: Model) -> str:
        states = ", ".join("initial" if s is None else repr(s) for s in self.start_states[:3])
        lines = [f"partition {self.partition}: no linearization of these {len(self.ops)} calls "
                 f"from state(s) {states}"]
        for o in sorted(self.ops, key=lambda o: o.call):
            ret = "..." if o.ret is None else o.ret
            lines.append(f"  client {o.client:>3}  [{o.call} .. {ret}]  {model.describe(o.input, o.output)}")
        return "\n".join(lines)


@dataclasses.dataclass
class Result:
    ok: bool
    operations: int
    partitions: int
    seconds: float
    windows: list[Window]
    #: states explored (memo size summed over segments): a measure of the search's work
    explored: int = 0

    def summary(self) -> str:
        verdict = "linearizable" if self.ok else f"NOT linearizable ({len(self.windows)} partition(s))"
        return (f"{verdict}: {self.operations} operations in {self.partitions} partitions, "
                f"{self.explored} search states, {self.seconds:.3f} s")


class _Budget:
    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def spend(self) -> None:
        if self.left is not None:
            self.left -= 1
            if self.left < 0:
                raise TimeoutError("linearizability search exceeded its state budget")


def _segments(history: list[Operation]) -> list[list[Operation]]:
    """Cut a history (sorted by invocation) at quiescent points."""
    out: list[list[Operation]] = []
    cur: list[Operation] = []
    horizon = float("-inf")
    for o in history:
        if cur and o.call > horizon:
            out.append(cur)
            cur = []
        cur.append(o)
        horizon = max(horizon, float("inf") if o.ret is None else o.ret)
    if cur:
        out.append(cur)
    return out


def _end_states(model: Model, seg: list[Operation], starts: Iterable[Hashable], budget: _Budget,
                stats: list[int]) -> set[Hashable]:
    """Every state reachable by linearizing all returned calls of ``seg`` (calls that never
    returned may be left out) from any of ``starts``."""
    n = len(seg)
    # must_precede[j]: mask of calls that returned before call j was invoked
    must = [0] * n
    for j, oj in enumerate(seg):
        m = 0
        for k, ok in enumerate(seg):
            if ok.ret is not None and ok.ret < oj.call:
                m |= 1 << k
        must[j] = m
    required = 0
    for k, o in enumerate(seg):
        if o.ret is not None:
            required |= 1 << k
    ends: set[Hashable] = set()
    seen: set[tuple[int, Hashable]] = set()
    stack = [(0, s) for s in starts]
    while stack:
        mask, state = stack.pop()
        if (mask, state) in seen:
            continue
        seen.add((mask, state))
        budget.spend()
        if mask & required == required:
            ends.add(state)
        for j in range(n):
            bit = 1 << j
            if mask & bit or (must[j] & ~mask):
                continue
            o = seg[j]
            for nxt in model.step(state, o.input, o.output):
                stack.append((mask | bit, nxt))
    stats[0] += len(seen)
    return ends


def _check_partition(model: Model, label: str, part: list[Operation], budget: _Budget,
                     stats: list[int]) -> Window | None:
    part = sorted(part, key=lambda o: o.call)
    states: set[Hashable] = {model.init()}
    for seg in _segments(part):
        nxt = _end_states(model, seg, states, budget, stats)
        if not nxt:
            return Window(label, _smallest_failing_prefix(model, seg, states, budget, stats), sorted(states, key=repr))
        states = nxt
    return None


def _prefix(seg: list[Operation], t: float) -> list[Operation]:
    """The history as it stood at time ``t``: calls invoked by then; those still running have no
    response yet (ret=None, output unknown), and may or may not have taken effect."""
    return [o if o.ret is not None and o.ret <= t else dataclasses.replace(o, ret=None, output=None)
            for o in seg if o.call <= t]


def _smallest_failing_prefix(model: Model, seg: list[Operation], states: set[Hashable], budget: _Budget,
                             stats: list[int]) -> list[Operation]:
    """The earliest time at which the segment, cut there, is already not linearizable.  Failure is
    monotone in the cut (every prefix of a linearizable history is linearizable), so a binary
    search over the response times finds it; the window is sound because a non-linearizable
    prefix makes the whole history non-linearizable."""
    times = sorted({o.ret for o in seg if o.ret is not None})
    lo, hi = 0, len(times) - 1  # the whole segment (the last time) is known to fail
    while lo < hi:
        mid = (lo + hi) // 2
        if _end_states(model, _prefix(seg, times[mid]), states, budget, stats):
            lo = mid + 1
        else:
            hi = mid
    return _prefix(seg, times[lo]) if times else seg


def check(model: Model, history: Sequence[Operation], max_states: int | None = 5_000_000) -> Result:
    """Is ``history`` linearizable with respect to ``model``?  Every failing partition is reported
    with its smallest non-linearizable window.  ``max_states`` bounds the search (TimeoutError)."""
    t0 = time.perf_counter()
    budget, stats = _Budget(max_states), [0]
    parts = model.partition(history)
    windows = [w for label, p in parts if (w := _check_partition(model, label, p, budget, stats)) is not None]
    return Result(not windows, len(history), len(parts), time.perf_counter() - t0, windows, stats[0])


# --------------------------------------------------------------------------------- wheelspec model


@dataclasses.dataclass(frozen=True, slots=True)
class FireCall:
    """Pseudo-call: the timer handed ``task`` (expiration ``exp``) to its executor."""

    task: int
    exp: int


@dataclasses.dataclass(frozen=True, slots=True)
class ExpireCall:
    """Pseudo-call: the timer completed ``op`` (its timeout)."""

    op: int


@dataclasses.dataclass(frozen=True, slots=True)
class Projected:
    """A per-key purgatory call seen by one operation: ``what`` is ``check`` or ``cancel_for_key``."""

    what: str
    key: Any
    op: int


# task state: (pending, exp);  op state: (watched, completable, completed, live keys)
_TASK0 = (False, None)
_OP0: tuple[bool, bool, bool, frozenset[ops.Key]] = (False, False, False, frozenset())


def _wheelspec_partition(history: Sequence[Operation]) -> list[tuple[str, list[Operation]]]:
    parts: dict[tuple[str, int], list[Operation]] = defaultdict(list)
    watchers: dict[Any, set[int]] = defaultdict(set)
    watch_call: dict[int, float] = {}
    done_at: dict[int, float] = {}  # earliest response of a call that surely completed the op

    def completed(op_id: int, when: float | None) -> None:
        if when is not None and when < done_at.get(op_id, float("inf")):
            done_at[op_id] = when

    for o in history:
        i = o.input
        if isinstance(i, ops.Watch):
            watch_call[i.op] = o.call
            for k in i.keys:
                watchers[k].add(i.op)
            if o.output is True:
                completed(i.op, o.ret)
        elif isinstance(i, ops.ForceComplete) and o.output is True:
            completed(i.op, o.ret)
        elif isinstance(i, ExpireCall):
            completed(i.op, o.ret)
        elif isinstance(i, ops.CheckAndComplete) and o.output:
            for op_id in o.output:
                completed(op_id, o.ret)
    inf = float("inf")
    by_key: dict[Any, tuple[list[float], list[int]]] = {}
    for k, op_ids in watchers.items():
        ordered = sorted(op_ids, key=lambda x: watch_call[x])
        by_key[k] = ([watch_call[x] for x in ordered], ordered)
    for o in history:
        i = o.input
        if isinstance(i, (ops.AddTask, ops.CancelTask)):
            parts[("task", i.task)].append(o)
        elif isinstance(i, FireCall):
            parts[("task", i.task)].append(o)
        elif isinstance(i, (ops.Watch, ops.SetCompletable, ops.ForceComplete)):
            parts[("op", i.op)].append(o)
        elif isinstance(i, ExpireCall):
            parts[("op", i.op)].append(o)
        elif isinstance(i, (ops.CheckAndComplete, ops.CancelForKey)):
            what = "check" if isinstance(i, ops.CheckAndComplete) else "cancel_for_key"
            ids = set(o.output) if o.output is not None else None
            # Outside [watch invoked, completion returned] a check or cancel that does not name
            # the operation is a no-op of its specification: leave it out (sound, and it keeps
            # per-operation partitions short).  by_key is sorted by watch invocation.
            calls_k, ops_k = by_key.get(i.key, ((), ()))
            upto = len(ops_k) if o.ret is None else bisect.bisect_right(calls_k, o.ret)
            for op_id in ops_k[:upto]:
                out = None if ids is None else (op_id in ids)
                if out is False and o.call > done_at.get(op_id, inf):
                    continue
                parts[("op", op_id)].append(Operation(o.client, Projected(what, i.key, op_id), o.call, out, o.ret))
        # Size / Watched / NumDelayed / AdvanceTo: global observations, not partitioned (see above)
    return [(f"{kind} {ident}", p) for (kind, ident), p in sorted(parts.items(), key=lambda kv: repr(kv[0]))]


def _wheelspec_init() -> Hashable:
    return None  # each partition starts from its kind's initial state (chosen on first step)


def _wheelspec_step(state: Any, i: Any, out: Any) -> list[Any]:
    if isinstance(i, (ops.AddTask, ops.CancelTask, FireCall)):
        pending, exp = state if state is not None else _TASK0
        if isinstance(i, ops.AddTask):
            # output None: the call had not returned, its expiration is unknown ("*" matches any)
            return [(True, out if out is not None else "*")]
        if isinstance(i, ops.CancelTask):
            return [(False, None)] if out is None or out == pending else []
        return [(False, None)] if pending and exp in (i.exp, "*") else []
    watched, completable, completed, live = state if state is not None else _OP0
    if isinstance(i, ops.Watch):
        if watched:
            return []
        c = completable or i.completable
        if completed:
            return [(True, c, True, frozenset())] if out in (False, None) else []
        if c:
            return [(True, c, True, frozenset())] if out in (True, None) else []
        return [(True, c, False, frozenset(i.keys))] if out in (False, None) else []
    if isinstance(i, ops.SetCompletable):
        return [(watched, i.value, completed, live)]
    if isinstance(i, ops.ForceComplete):
        return [(watched, completable, True, live)] if out in (not completed, None) else []
    if isinstance(i, ExpireCall):
        return [(watched, completable, True, live)] if watched and not completed else []
    if isinstance(i, Projected):
        if i.what == "check":
            should = watched and not completed and completable and i.key in live
            if out is None:  # never returned: it may or may not have completed the operation
                return [(watched, completable, completed or should, live)]
            if out != should:
                return []
            return [(watched, completable, completed or should, live)]
        # cancel_for_key: an uncompleted operation is returned iff it is watched on the key
        if completed:
            return [(watched, completable, completed, live - {i.key})]
        listed = watched and i.key in live
        if out not in (listed, None):
            return []
        return [(watched, completable, completed, live - {i.key})]
    raise TypeError(f"the wheelspec model has no step for {i!r}")


def _wheelspec_describe(i: Any, out: Any) -> str:
    if isinstance(i, FireCall):
        return f"fire(task {i.task}, exp {i.exp})"
    if isinstance(i, ExpireCall):
        return f"expire(op {i.op})"
    if isinstance(i, Projected):
        verb = "completed" if i.what == "check" else "returned"
        return f"{i.what}({i.key!r}) {verb} op {i.op}: {out}"
    d = i.to_dict()
    kind = d.pop("kind")
    return f"{kind}(" + ", ".join(f"{k}={v!r}" for k, v in d.items()) + f") -> {out!r}"


WHEELSPEC = Model(_wheelspec_partition, _wheelspec_init, _wheelspec_step, _wheelspec_describe)


# --------------------------------------------------------------------------------- a register model


def _kv_partition(history: Sequence[Operation]) -> list[tuple[str, list[Operation]]]:
    parts: dict[Any, list[Operation]] = defaultdict(list)
    for o in history:
        parts[o.input[1]].append(o)
    return [(f"key {k!r}", p) for k, p in parts.items()]


def _kv_step(state: Any, i: Any, out: Any) -> list[Any]:
    kind = i[0]
    if kind == "put":
        return [i[2]]
    if kind == "append":
        return [state + i[2]]
    return [state] if out is None or out == state else []  # get; None: the call never returned


#: Porcupine's classic key-value model (``("put"|"append", key, value)``, ``("get", key)``; an
#: absent key reads as ``""``); used to test the checker itself and for its throughput figure.
KV = Model(_kv_partition, lambda: "", _kv_step, lambda i, o: f"{i[0]}({', '.join(map(repr, i[1:]))}) -> {o!r}")


# --------------------------------------------------------------------------------- history files


def _encode_input(i: Any) -> dict[str, Any]:
    if isinstance(i, FireCall):
        return {"kind": "fire", "task": i.task, "exp": i.exp}
    if isinstance(i, ExpireCall):
        return {"kind": "expire", "op": i.op}
    return i.to_dict()


def _decode_input(d: Any) -> Any:
    if isinstance(d, dict) and d.get("kind") == "fire":
        return FireCall(int(d["task"]), int(d["exp"]))
    if isinstance(d, dict) and d.get("kind") == "expire":
        return ExpireCall(int(d["op"]))
    return ops.op_from_dict(d)


def dumps(history: Sequence[Operation]) -> str:
    """JSON lines: ``{"client", "call", "ret", "input": <operation record>, "output"}`` per call;
    inputs are :mod:`wheelspec.spec.ops` records or ``{"kind": "fire", "task", "exp"}`` /
    ``{"kind": "expire", "op"}``; a check's / cancelForKey's output is the list of operation ids it
    completed / returned."""
    rows = []
    for o in history:
        out = list(o.output) if isinstance(o.output, (tuple, list, set, frozenset)) else o.output
        rows.append(json.dumps({"client": o.client, "call": o.call, "ret": o.ret,
                                "input": _encode_input(o.input), "output": out}, separators=(",", ":")))
    return "".join(r + "\n" for r in rows)


def loads(text: str, source: str = "<history>") -> list[Operation]:
    from wheelspec.spec.errors import UserError

    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(Operation(int(d["client"]), _decode_input(d["input"]), d["call"],
                                 tuple(d["output"]) if isinstance(d.get("output"), list) else d.get("output"),
                                 d.get("ret")))
        except (ValueError, KeyError, TypeError) as e:
            raise UserError(f"{source}:{n}: not a history record ({type(e).__name__}: {e})") from None
    return out


# --------------------------------------------------------------------------------- from the step model


def from_step_model(calls: Sequence[Any], stamped: Sequence[tuple[int, int, Any]],
                    handed_over: dict[int, int] | None = None) -> list[Operation]:
    """Convert a run of :mod:`wheelspec.reference.interleave` (its ``Call`` records, the
    simulation's stamped events and its ``handed_over`` steps) into a history: completions are
    attributed to the call running on the thread that produced them; fires and expiries become
    pseudo-calls (an expiry spans from the timer's hand-over of the operation to its completion)."""
    handed_over = handed_over or {}
    from wheelspec.spec import events as ev

    def enclosing(tid: int, step: int) -> Any:
        for c in calls:
            if c.thread == tid and c.invoke <= step and (c.response is None or step <= c.response):
                return c
        return None

    completed_by: dict[int, list[int]] = defaultdict(list)
    history: list[Operation] = []
    for step, tid, e in stamped:
        c = enclosing(tid, step)
        if isinstance(e, ev.Complete) and e.via == "check" and c is not None:
            completed_by[id(c)].append(e.op)
        elif isinstance(e, ev.Complete) and e.via == "expire":
            # on the executor: the expiry may take effect any time after the timeout's flush
            history.append(Operation(tid, ExpireCall(e.op), handed_over.get(e.op, 0), None, step))
        elif isinstance(e, ev.Fire):
            history.append(Operation(tid, FireCall(e.task, e.exp), 0 if c is None else c.invoke, None, step))
    for c in calls:
        out = c.result
        if isinstance(c.op, ops.CheckAndComplete):
            out = tuple(completed_by.get(id(c), ()))
        history.append(Operation(c.thread, c.op, c.invoke, out, c.response))
    return history


