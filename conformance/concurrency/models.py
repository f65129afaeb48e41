"""Sequential models for :mod:`.linearizability`: wheelspec's timer and purgatory, and a register.

The wheelspec model (:data:`WHEELSPEC`).  Partitions: timer calls by task id (``add`` ->
expiration, ``cancel`` -> whether it was pending, and a ``fire`` pseudo-call spanning from the
invocation of the call that fired it -- an advance, or an add of a due task -- to the ``Fire``
event); purgatory calls by operation id, with each ``checkAndComplete(k)`` and ``cancelForKey(k)``
projected onto every operation watched on ``k`` (output: did *this* call complete / cancel it), and
an ``expire`` pseudo-call for the timer's completion.  The specification each partition is
stepped through is :func:`wheelspec.spec.sequential_spec.step` (a watch completes at once iff the
operation is completable, else it is watched on all its keys; a check of a watched key completes
it iff completable and not yet completed; ``forceComplete`` returns whether it was not yet
completed; an expiry needs an uncompleted, watched operation); this module adapts wheelspec's
histories to the linearizability checker: the partitions and the reports.  Limits, by
design: the projection of one check onto several operations is checked per operation, so a finding
is always real but a history needing inconsistent linearization points for one check across
operations could pass; which completed operations ``cancelForKey`` returns is left free (it depends
on purges); ``watched``, ``numDelayed`` and ``size`` are global observations and not checked here;
expiry *timing* is the profile checker's job, not this one's.

:data:`KV` is a key-value register, the checker's own test model.  :func:`from_step_model` turns a
run of the step model (:mod:`wheelspec.reference.interleave`) into a history of :class:`Operation`.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

from wheelspec.conformance.concurrency.linearizability import Model, Operation
from wheelspec.spec import ops, sequential_spec
from wheelspec.spec.sequential_spec import ExpireCall, FireCall, Projected


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


WHEELSPEC = Model(_wheelspec_partition, _wheelspec_init, sequential_spec.step, _wheelspec_describe)


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
