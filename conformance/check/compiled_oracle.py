"""The compiled oracle: the reference run of a timer schedule (Kafka's ``SystemTimer``) and its
semantic coverage, computed in one compiled call (:mod:`wheelspec.optimized.oracle_kernels`).

:func:`~.judge.oracle_run` asks :func:`engine_for` which oracle runs a schedule:

* ``compiled`` when the user chose it (``--oracle compiled``, the default; the choice is the
  environment variable :data:`ENV`, so a campaign's worker processes inherit it), the oracle
  mode is ``exact`` (an implementation claiming Kafka's wheel) and no executor-order purge
  points are followed; :func:`compiled_run` then runs the schedule if every request is a timer
  request (add, cancel, advance, size) with plain in-range ints, and returns None otherwise;
* the reference (``wheelspec.reference`` under the coverage probe) in every other case: the
  ``multiset`` and ``refusals`` modes, executor order ``either``, a declared range
  (:func:`~.judge.declared_oracle`), purgatory schedules, a replay (:func:`using`), and any
  schedule :func:`compiled_run` declines.

A run of the compiled oracle is a :class:`CompiledRun`.  The judge reports no failure found
against one before the reference has confirmed it (:func:`~.judge.judge`): when the two oracles
disagree, that is a :class:`~.runner.RunnerBug`, never a verdict.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from wheelspec.conformance.adapters.protocol import Config, Response
from wheelspec.conformance.check.runner import Run, Step, _record
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.history import History
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, MAX_TIME_MS, MIN_DELAY_MS

#: the oracles ``--oracle`` chooses from
ORACLES = ("compiled", "reference")
#: the environment variable holding the choice (unset: ``compiled``)
ENV = "WHEELSPEC_ORACLE"


class CompiledRun(Run):
    """A :class:`~.runner.Run` computed by the compiled oracle: its findings are confirmed by the
    reference before they are reported.  The judge compares an oracle's responses only
    (:func:`~.judge.oracle_failures`), so the history and ``event_step`` are made from them on
    first use, not with every run."""

    def __init__(self, config: Config, steps: list[Step]) -> None:
        self.config, self.steps = config, steps
        self._made: tuple[History, list[int]] | None = None

    def _make(self) -> tuple[History, list[int]]:
        if self._made is None:
            steps: list[Step] = []
            history = History()
            event_step: list[int] = []
            for i, s in enumerate(self.steps):
                _record(steps, history, event_step, i, s.op, s.response)
            self._made = (history, event_step)
        return self._made

    @property
    def history(self) -> History:  # type: ignore[override]
        return self._make()[0]

    @property
    def event_step(self) -> list[int]:  # type: ignore[override]
        return self._make()[1]


def chosen() -> str:
    """The oracle the user chose (``compiled`` unless :data:`ENV` says ``reference``)."""
    return "reference" if os.environ.get(ENV) == "reference" else "compiled"


def use(name: str) -> None:
    """Choose the oracle for this process and the processes it starts (``--oracle``)."""
    if name not in ORACLES:
        raise ValueError(f"unknown oracle {name!r} (known: {', '.join(ORACLES)})")
    os.environ[ENV] = name


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """The oracle ``name`` inside the block (a replay always judges by the reference)."""
    old = os.environ.get(ENV)
    use(name)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


#: requests the reference oracle runs in a process before the compiled one takes over, unless the
#: engine's kernels are loaded already: loading them from numba's cache costs about 2 s of CPU
#: (3 s with numba's import) once per process, and the compiled oracle saves about 35 us per
#: request (``docs/guides/CAMPAIGN.md``, "The oracle"), so a shorter run is faster without it
PAYS_AFTER_OPS = 80_000
_reference_ops = [0]


def _kernels_loaded() -> bool:
    """Has this process loaded the timer kernels (an in-process ``optimized`` run, an earlier
    compiled oracle)?  Then the compiled oracle costs no load."""
    tk = sys.modules.get("wheelspec.optimized.timer_kernels")
    ok = sys.modules.get("wheelspec.optimized.oracle_kernels")
    return bool((tk is not None and tk.advance.overloads) or (ok is not None and ok.run_timer_schedule.overloads))


def engine_for(mode: str, points: Sequence[int | None] | None, engine: str | None = None, n: int = 0) -> str:
    """``compiled`` or ``reference``: the oracle that runs a schedule of ``n`` requests judged in
    oracle ``mode`` (``points``: the purge points an ``either`` implementation's oracle follows).
    ``engine`` overrides the user's choice (the judge's confirmation asks for the reference).
    Under the choice ``compiled`` the reference still runs a process's first
    :data:`PAYS_AFTER_OPS` requests, unless the kernels are loaded already."""
    want = engine or chosen()
    if want != "compiled" or mode != "exact" or points is not None:
        return "reference"
    if engine == "compiled" or _kernels_loaded() or _reference_ops[0] >= PAYS_AFTER_OPS:
        return "compiled"
    _reference_ops[0] += n
    return "reference"


def _plain(x: object, lo: int, hi: int) -> bool:
    return type(x) is int and lo <= x <= hi


def encode(operations: Sequence[ops.Op], protocol: int) -> tuple[np.ndarray, ...] | None:
    """The schedule as the kernel's arrays (kind, row or time, delay) and the task id of each row;
    None if a request is not a plain timer request (the reference runs it: its refusals and
    messages for odd values are the reference's to give)."""
    from wheelspec.optimized import oracle_kernels as OK

    n = len(operations)
    kind = np.empty(n, np.int8)
    arg = np.zeros(n, np.int64)
    delay = np.zeros(n, np.int64)
    rows: dict[int, int] = {}
    added: set[int] = set()
    for i, op in enumerate(operations):
        if isinstance(op, ops.AdvanceTo):
            if not _plain(op.time, 0, MAX_TIME_MS):
                return None
            kind[i], arg[i] = OK.OP_ADVANCE, op.time
        elif isinstance(op, ops.AddTask | ops.CancelTask):
            task = op.task
            if not _plain(task, 0, MAX_ID):
                return None
            if isinstance(op, ops.AddTask):
                if not _plain(op.delay, MIN_DELAY_MS, MAX_DELAY_MS):
                    return None
                kind[i], delay[i] = OK.OP_ADD, op.delay
                added.add(task)
            elif protocol < 2 and task not in added:  # version 1 refuses it (base.SimulationAdapter)
                kind[i] = OK.OP_REFUSED_CANCEL
                continue
            else:
                kind[i] = OK.OP_CANCEL
            arg[i] = rows.setdefault(task, len(rows))
        elif isinstance(op, ops.Size):
            kind[i] = OK.OP_SIZE
        else:
            return None
    ext = np.fromiter(rows, np.int64, len(rows)) if rows else np.zeros(1, np.int64)
    return kind, arg, delay, ext


def compiled_run(config: Config, operations: Sequence[ops.Op], probe: Any, protocol: int) -> CompiledRun | None:
    """The reference's run of ``operations`` from ``config`` (the configuration it runs:
    ``capabilities.effective``), computed by the compiled kernel, with the situations it exercised
    added to ``probe.counts`` (a :class:`~.coverage.Probe`, or None); None when the schedule is
    not one it runs (:func:`encode`) or the engine ran out of room."""
    from wheelspec.optimized import oracle_kernels as OK
    from wheelspec.optimized.timer import ArrayTimer

    enc = encode(operations, protocol)
    if enc is None:
        return None
    kind, arg, delay, ext = enc
    n = kind.shape[0]
    adds = int(np.count_nonzero(kind == OK.OP_ADD))
    try:
        timer = ArrayTimer(config.tick_ms, config.wheel_size, config.start_ms, capacity=ext.shape[0])
    except (ValueError, TypeError):
        return None  # a configuration the reference refuses, as the reference refuses it
    # room for every entry a schedule can hold at once: pending ones and tombstones
    timer.reserve(ext.shape[0], pending=2 * adds + 64)
    out = np.empty((2, adds + 1), np.int64)
    res, rnow = np.zeros(n, np.int64), np.zeros(n, np.int64)
    err = np.zeros(n, np.int8)
    fstart = np.zeros(n + 1, np.int64)
    ftask, fexp = np.zeros(adds + 1, np.int64), np.zeros(adds + 1, np.int64)
    cov = np.zeros(len(OK.TIMER_SITUATIONS), np.int64)
    arrays = (timer.S, timer.lv, timer.bk, timer.heap, timer.tk, timer.live, timer.pid, timer.pexp, timer.cnext, out,
              timer.sids, timer.sexps, timer.scr)
    results = (res, err, rnow, fstart, ftask, fexp, cov)
    status = OK.run_timer_schedule(arrays, (kind, arg, delay), config.start_ms, results)
    if status != OK.OK:
        return None
    if probe is not None:
        probe.counts.update({name: int(c) for name, c in zip(OK.TIMER_SITUATIONS, cov) if c})
    return _as_run(config, operations, (kind, res, err, rnow, fstart, ext[ftask], fexp))


def _as_run(config: Config, operations: Sequence[ops.Op], arrays: tuple[np.ndarray, ...]) -> CompiledRun:
    """The kernel's answers as the :class:`~.runner.Run` the judge compares (responses, history)."""
    from wheelspec.optimized import oracle_kernels as OK

    kind, res, err, rnow, fstart, ftask, fexp = (a.tolist() for a in arrays)
    fire = ev.Fire
    steps: list[Step] = []
    for i, op in enumerate(operations):
        k, now = kind[i], rnow[i]
        if k == OK.OP_REFUSED_CANCEL and isinstance(op, ops.CancelTask):
            resp = Response(now, error=("unknown-id", f"cancel: unknown task id {op.task}"))
        elif err[i] == OK.ERR_BACKWARDS and isinstance(op, ops.AdvanceTo):
            resp = Response(now, error=("invalid", f"time_ms={op.time} is before the clock's current time "
                                                   f"{now}: time never goes back"))
        else:
            a, b = fstart[i], fstart[i + 1]
            events: list[ev.Event] = [fire(now, t, e) for t, e in zip(ftask[a:b], fexp[a:b])] if b > a else []
            result = (res[i] if k in (OK.OP_ADD, OK.OP_SIZE) else bool(res[i]) if k == OK.OP_CANCEL else None)
            resp = Response(now, events, result)
        steps.append(Step(op, resp))
    return CompiledRun(config, steps)


def counts_of(probe: Any) -> Counter[str]:
    """The non-zero counts of ``probe`` (a :class:`~.coverage.Probe`): what two runs must agree on."""
    return Counter({k: v for k, v in probe.counts.items() if v})
