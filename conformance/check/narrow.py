"""A schedule as an implementation gets it, and which requests lie outside wheelspec's ranges.

A campaign schedule is drawn for every implementation alike (:mod:`.generate`); :func:`narrow` and
:func:`narrow_config` fit it to what one implementation offers and declares (its operations, its
protocol version, ``capabilities.ranges``), so that it is asked only what it may answer or must
refuse.  :func:`out_of_range` says which requests lie outside wheelspec's ranges
(``spec/limits.py``): property ``ranges`` judges their refusal (:mod:`.judge`).
"""

from __future__ import annotations

import dataclasses

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.spec import limits, ops
from wheelspec.spec.errors import RangeError


def out_of_range(op: ops.Op) -> bool:
    """Is ``op`` outside wheelspec's ranges (``spec/limits.py``: a delay, a clock reading, a task or
    operation id, an int watch key)?  Such a request must be refused (property ``ranges``)."""
    try:
        if isinstance(op, ops.AddTask):
            limits.check_range("task id", op.task, 0, limits.MAX_ID)
            limits.check_delay(op.delay)
        elif isinstance(op, ops.Watch | ops.Resubmit):
            limits.check_range("op id", op.op, 0, limits.MAX_ID)
            if isinstance(op, ops.Watch):
                limits.check_delay(op.delay)
            for k in op.keys:
                if isinstance(k, int) and not isinstance(k, bool):
                    limits.check_key(k)
        elif isinstance(op, ops.AdvanceTo):
            limits.check_time("time", op.time)
    except RangeError:
        return True
    return False


def narrow(schedule: list[ops.Op], caps: Capabilities) -> list[ops.Op]:
    """The schedule as an implementation gets it: without the operations it does not offer (a
    purgatory-only implementation gets no timer operations; a protocol-1 one no resubmits and no
    cancels of a task never added, which only version 2 answers) and, if it declares ``ranges:
    unbounded``, without the out-of-range requests (property ``ranges`` is then not judged).  If
    it declares a range (``ranges`` as an object), every delay and advance target inside
    wheelspec's ranges is moved into the declared one (:func:`within_declared`); the requests
    outside wheelspec's stay as drawn, to be refused (property ``ranges``)."""
    out = [op for op in schedule if caps.supports(op)]
    if caps.declared_ranges() is not None:
        out = [within_declared(op, caps) for op in out]
    if caps.protocol < 2:
        out = _without_never_added_cancels(out)
    if caps.ranges == "unbounded":
        out = [op for op in out if not out_of_range(op)]
    return out


def within_declared(op: ops.Op, caps: Capabilities) -> ops.Op:
    """``op`` with its delay (an add's, a watch's timeout) or advance target clamped into the
    range the implementation declares: a schedule keeps its shape (its tasks, re-adds, cancels
    and advances, in order; advance targets stay in order) and asks only what the implementation
    accepts.  A request outside wheelspec's ranges is left as drawn."""
    declared = caps.declared_ranges()
    if declared is None or out_of_range(op):
        return op
    if isinstance(op, ops.AddTask | ops.Watch):
        return dataclasses.replace(op, delay=declared.clamp("delay", op.delay))
    if isinstance(op, ops.AdvanceTo):
        return dataclasses.replace(op, time=declared.clamp("time", op.time))
    return op


def narrow_config(cfg: Config, caps: Capabilities) -> Config:
    """The configuration as an implementation gets it: its clock starts inside the range it
    declares (``start_ms`` clamped, like the advances: :func:`within_declared`)."""
    declared = caps.declared_ranges()
    if declared is None:
        return cfg
    return dataclasses.replace(cfg, start_ms=declared.clamp("time", cfg.start_ms))


def _without_never_added_cancels(schedule: list[ops.Op]) -> list[ops.Op]:
    """``schedule`` without its cancels of an in-range task id that no in-range add before named
    (version 1 refuses such a cancel ``unknown-id``, version 2 answers false)."""
    added: set[int] = set()
    out = []
    for op in schedule:
        if isinstance(op, ops.AddTask) and not out_of_range(op):
            added.add(op.task)
        elif isinstance(op, ops.CancelTask) and 0 <= op.task <= limits.MAX_ID and op.task not in added:
            continue
        out.append(op)
    return out
