"""Linearizability checking of concurrent histories (Wing & Gong's search with Lowe's memoization,
in the style of Porcupine).

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

The models it checks wheelspec's histories against are in :mod:`.models`; history files in
:mod:`.history_file`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from wheelspec.spec.errors import WheelspecError


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


class BudgetExhausted(WheelspecError, TimeoutError):
    """The search ran out of states or of wall-clock time before it decided: the history is
    neither shown linearizable nor shown not to be (the verdict is "undecided")."""


class _Budget:
    """Both budgets of a search.  ``max_states`` bounds the memo of one segment (every visited
    ``(mask, state)`` pair stays in it until the segment is decided, about 250 bytes each): the
    memory.  ``seconds`` bounds the wall-clock time of the whole search: the work, exponential in
    the calls that overlap (300 concurrent adds of one task have 2^300 masks)."""

    #: visited states between two reads of the clock
    CLOCK_EVERY = 1024

    def __init__(self, max_states: int | None, seconds: float | None = None) -> None:
        self.max_states = max_states
        self.seconds = seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.tick = 0

    def spend(self, memo_size: int) -> None:
        if self.max_states is not None and memo_size > self.max_states:
            raise BudgetExhausted(f"the search exceeded its state budget ({self.max_states} states in one segment)")
        self.tick += 1
        if self.deadline is not None and self.tick % self.CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise BudgetExhausted(f"the search exceeded its time limit of {self.seconds:g} s")


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
        budget.spend(len(seen))
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


def check(model: Model, history: Sequence[Operation], max_states: int | None = 1_000_000,
          time_limit: float | None = None) -> Result:
    """Is ``history`` linearizable with respect to ``model``?  Every failing partition is reported
    with its smallest non-linearizable window.  ``max_states`` (the memo of one segment: the
    memory) and ``time_limit`` (wall-clock seconds) bound the search: past either it raises
    :class:`BudgetExhausted` (a ``TimeoutError``), the verdict "undecided"."""
    t0 = time.perf_counter()
    budget, stats = _Budget(max_states, time_limit), [0]
    parts = model.partition(history)
    windows = [w for label, p in parts if (w := _check_partition(model, label, p, budget, stats)) is not None]
    return Result(not windows, len(history), len(parts), time.perf_counter() - t0, windows, stats[0])
