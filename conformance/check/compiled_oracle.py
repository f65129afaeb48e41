"""The compiled oracle: the reference run of a timer schedule (Kafka's ``SystemTimer``) and its
semantic coverage, computed in one compiled call (:mod:`wheelspec.optimized.oracle_kernels`).

:func:`~.oracle.oracle_run` asks :func:`engine_for` which oracle runs a schedule:

* ``compiled`` when the user chose it (``--oracle compiled``, the default; the choice is the
  environment variable :data:`ENV`, so a campaign's worker processes inherit it), the oracle
  runs Kafka's ``SystemTimer`` (mode ``exact``: an implementation claiming Kafka's wheel, at its
  tick and wheel size; mode ``refusals``: any other timer but MockTimer's kin, at tick 1 and
  wheel size 20) and follows no executor-order purge points; :func:`compiled_run` then runs the
  schedule if every request is a timer request (add, cancel, advance, size) with plain in-range
  ints, and returns None otherwise;
* the reference (``wheelspec.reference`` under the coverage probe) in every other case: the
  ``multiset`` mode (MockTimer), executor order ``either``, a declared range
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
    reference before they are reported.  It holds the kernel's answers as lists
    (:func:`compiled_run`); the judge first asks :meth:`agrees`, which compares them with an
    implementation's run without building a response, and only a run that differs somewhere is
    compared step by step (:func:`~.judge.oracle_failures`).  So the steps, the history and
    ``event_step`` are made on first use, not with every run."""

    def __init__(self, config: Config, steps: list[Step] | None = None, *, operations: Sequence[ops.Op] = (),
                 answers: tuple[list[int], ...] | None = None) -> None:
        self.config = config
        self._steps = steps
        self._operations = tuple(operations) if steps is None else tuple(s.op for s in steps)
        self._answers = answers
        self._made: tuple[History, list[int]] | None = None

    @property
    def steps(self) -> list[Step]:  # type: ignore[override]
        if self._steps is None:
            assert self._answers is not None
            self._steps = _steps_of(self._operations, self._answers)
        return self._steps

    @property
    def ops_count(self) -> int:
        return len(self._operations)

    def agrees(self, run: Run, mode: str = "exact") -> bool:
        """Did ``run`` (the implementation's, of the same requests) answer every request as this
        oracle run, as far as comparison ``mode`` (:func:`~.judge.oracle_mode`) looks: refused
        the same and, unless the mode is ``refusals`` (which compares nothing else), with the
        same clock, result and fires in the same order?  Then the mode's comparison
        (:func:`~.judge.oracle_failures`) finds no difference.  False says only "compare step by
        step" (and always for a run made from steps: the tests' planted oracles)."""
        if self._answers is None or len(run.steps) != len(self._operations):
            return False
        from wheelspec.optimized import oracle_kernels as OK

        kind, res, err, rnow, fstart, ftask, fexp = self._answers
        refused_cancel, backwards, add, size, cancel = (OK.OP_REFUSED_CANCEL, OK.ERR_BACKWARDS, OK.OP_ADD,
                                                        OK.OP_SIZE, OK.OP_CANCEL)
        if mode == "refusals":
            for i, step in enumerate(run.steps):
                if (step.response.error is None) == (kind[i] == refused_cancel or err[i] == backwards):
                    return False
            return True
        fire = ev.Fire
        for i, step in enumerate(run.steps):
            g, k = step.response, kind[i]
            if k == refused_cancel or err[i] == backwards:
                if g.error is None:
                    return False
                continue
            now = rnow[i]
            if g.error is not None or g.now != now:
                return False
            if g.result != (res[i] if k == add or k == size else bool(res[i]) if k == cancel else None):
                return False
            a, b = fstart[i], fstart[i + 1]
            events = g.events
            if len(events) != b - a:
                return False
            for e in events:
                if type(e) is not fire or e.now != now or e.task != ftask[a] or e.exp != fexp[a]:
                    return False
                a += 1
        return True

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


#: oracle requests after which loading the compiled kernels pays: loading them (numba's import and
#: its cache) costs a process about 0.8 s of CPU, and the compiled oracle saves about 37 us per
#: request over the reference (``docs/guides/CAMPAIGN.md``, "The oracle"; measured by
#: ``benchmarks/oracle_load.py``)
PAYS_AFTER_OPS = 22_000
#: the timer requests this process's callers said it is about to judge (:func:`expect`)
_announced = [0]
#: the modes the compiled oracle runs: both judge against Kafka's ``SystemTimer`` (``refusals``
#: at tick 1 and wheel size 20, ``exact`` with the implementation's own); ``multiset`` is MockTimer
COMPILED_MODES = ("exact", "refusals")


#: requests in a campaign timer schedule, on average (seeds 0-2999: 77 228 requests)
MEAN_TIMER_REQUESTS = 26


def expect(kind: str, schedules: int) -> None:
    """Tell the oracle that this process is about to judge ``schedules`` campaign schedules of
    ``kind`` (a campaign of ``wheelspec check``, a block of a ``--workers`` process, a Spark task):
    once the timer requests announced are enough to pay for the kernels' load, the compiled
    oracle serves from the next schedule on.  (The compiled oracle runs timer schedules only.)"""
    if kind == "timer":
        _announced[0] += max(0, schedules) * MEAN_TIMER_REQUESTS


def worth_loading(work: dict[str, int]) -> bool:
    """Would the campaign ``work`` (schedules per kind), announced by :func:`expect`, make the
    compiled oracle load its kernels in a process that has not loaded them?  (``--workers``: then
    the fork server loads them once, :mod:`.oracle_preload`, for every worker.)"""
    return chosen() == "compiled" and work.get("timer", 0) * MEAN_TIMER_REQUESTS + _announced[0] >= PAYS_AFTER_OPS


def load() -> None:
    """Load the kernels the compiled oracle runs (a one-request schedule runs through them)."""
    compiled_run(Config(), [ops.Size()], None, 2)


def _kernels_loaded() -> bool:
    """Has this process loaded the timer kernels (an in-process ``optimized`` run, an earlier
    compiled oracle)?  Then the compiled oracle costs no load."""
    tk = sys.modules.get("wheelspec.optimized.timer_kernels")
    ok = sys.modules.get("wheelspec.optimized.oracle_kernels")
    return bool((tk is not None and tk.advance.overloads) or (ok is not None and ok.run_timer_schedule.overloads))


#: the requests of a timer schedule: the only schedules the compiled oracle runs
TIMER_REQUESTS = frozenset({ops.AddTask, ops.CancelTask, ops.AdvanceTo, ops.Size})


def engine_for(mode: str, points: Sequence[int | None] | None, engine: str | None = None,
               operations: Sequence[ops.Op] = ()) -> str:
    """``compiled`` or ``reference``: the oracle that runs ``operations`` judged in oracle
    ``mode`` (``points``: the purge points an ``either`` implementation's oracle follows).
    ``engine`` overrides the user's choice (the judge's confirmation asks for the reference).
    Under the choice ``compiled`` the reference still runs the schedules of a process that has
    neither the kernels loaded nor :data:`PAYS_AFTER_OPS` timer requests announced
    (:func:`expect`): the load is paid only for work known to repay it.  Work nobody announced
    (shrinking a failing schedule, a corpus, a library call) uses whichever oracle the process
    has: a shrink that is short would be made slower by the load, and one that is long cannot be
    told from it at its start."""
    want = engine or chosen()
    if want != "compiled" or mode not in COMPILED_MODES or points is not None:
        return "reference"
    if not all(type(op) in TIMER_REQUESTS for op in operations):
        return "reference"  # a purgatory schedule: the compiled oracle does not run it
    if engine == "compiled" or _kernels_loaded() or _announced[0] >= PAYS_AFTER_OPS:
        return "compiled"
    return "reference"


def encode(operations: Sequence[ops.Op], protocol: int) -> tuple[np.ndarray, ...] | None:
    """The schedule as the kernel's arrays (kind, row or time, delay) and the task id of each row;
    None if a request is not a plain timer request (the reference runs it: its refusals and
    messages for odd values are the reference's to give; so does a request of a subclass of
    the timer requests)."""
    from wheelspec.optimized import oracle_kernels as OK

    add, cancel, advance, size = ops.AddTask, ops.CancelTask, ops.AdvanceTo, ops.Size
    kind: list[int] = []
    arg: list[int] = []
    delay: list[int] = []
    rows: dict[int, int] = {}
    added: set[int] = set()
    op: Any  # one of the four timer requests, told apart by its exact type
    for op in operations:
        t = type(op)
        k, a, d = OK.OP_SIZE, 0, 0
        if t is advance:
            a = op.time
            if type(a) is not int or not 0 <= a <= MAX_TIME_MS:
                return None
            k = OK.OP_ADVANCE
        elif t is add or t is cancel:
            task = op.task
            if type(task) is not int or not 0 <= task <= MAX_ID:
                return None
            if t is add:
                d = op.delay
                if type(d) is not int or not MIN_DELAY_MS <= d <= MAX_DELAY_MS:
                    return None
                k = OK.OP_ADD
                added.add(task)
            elif protocol < 2 and task not in added:  # version 1 refuses it (base.SimulationAdapter)
                k = OK.OP_REFUSED_CANCEL
            else:
                k = OK.OP_CANCEL
            if k != OK.OP_REFUSED_CANCEL:
                a = rows.setdefault(task, len(rows))
        elif t is not size:
            return None
        kind.append(k)
        arg.append(a)
        delay.append(d)
    ext = np.fromiter(rows, np.int64, len(rows)) if rows else np.zeros(1, np.int64)
    return np.array(kind, np.int8), np.array(arg, np.int64), np.array(delay, np.int64), ext


def compiled_run(config: Config, operations: Sequence[ops.Op], probe: Any, protocol: int) -> CompiledRun | None:
    """The reference's run of ``operations`` from ``config`` (the configuration it runs:
    ``capabilities.effective``), computed by the compiled kernel, with the situations it exercised
    added to ``probe.counts`` (a :class:`~.coverage.Probe`, or None); None when the schedule is
    not one it runs (:func:`encode`) or the engine ran out of room."""
    from wheelspec.optimized import oracle_kernels as OK

    enc = encode(operations, protocol)
    if enc is None:
        return None
    kind, arg, delay, ext = enc
    n = kind.shape[0]
    adds = int(np.count_nonzero(kind == OK.OP_ADD))
    # room for every entry a schedule can hold at once: pending ones and tombstones
    engine = _fresh_engine(config, ext.shape[0], 2 * adds + 64)
    if engine is None:
        return None  # a configuration the reference refuses, as the reference refuses it
    out = np.empty((2, adds + 1), np.int64)
    res, rnow = np.zeros(n, np.int64), np.zeros(n, np.int64)
    err = np.zeros(n, np.int8)
    fstart = np.zeros(n + 1, np.int64)
    ftask, fexp = np.zeros(adds + 1, np.int64), np.zeros(adds + 1, np.int64)
    cov = np.zeros(len(OK.TIMER_SITUATIONS), np.int64)
    S, lv, bk, heap, tk, live, pid, pexp, cnext, sids, sexps, scr = engine
    arrays = (S, lv, bk, heap, tk, live, pid, pexp, cnext, out, sids, sexps, scr)
    results = (res, err, rnow, fstart, ftask, fexp, cov)
    status = OK.run_timer_schedule(arrays, (kind, arg, delay), config.start_ms, results)
    if status != OK.OK:
        return None
    if probe is not None:
        probe.counts.update({name: int(c) for name, c in zip(OK.TIMER_SITUATIONS, cov) if c})
    answers = tuple(a.tolist() for a in (kind, res, err, rnow, fstart, ext[ftask], fexp))
    return CompiledRun(config, operations=operations, answers=answers)


#: the room an empty engine template holds (task rows, pending entries): a campaign schedule
#: fits; a bigger one gets an engine of its own size
TEMPLATE_ROWS, TEMPLATE_PENDING = 512, 2048
_TEMPLATES: dict[tuple[int, int], tuple[np.ndarray, ...] | None] = {}


def _engine_arrays(timer: Any) -> tuple[np.ndarray, ...]:
    return (timer.S, timer.lv, timer.bk, timer.heap, timer.tk, timer.live, timer.pid, timer.pexp, timer.cnext,
            timer.sids, timer.sexps, timer.scr)


def _fresh_engine(config: Config, rows: int, pending: int) -> tuple[np.ndarray, ...] | None:
    """The arrays of an empty ``ArrayTimer`` (Kafka's ``SystemTimer`` with ``config``'s tick, wheel
    size and start) with room for ``rows`` task rows and ``pending`` entries; None if the engine
    refuses the configuration.  A schedule that fits gets copies of an empty engine made once
    per tick and wheel size, its clock set to the start (the only part of an empty engine that
    depends on it: ``layout.new_timer_arrays``); building one costs some 20 times the copies."""
    from wheelspec.optimized import layout as L
    from wheelspec.optimized.timer import ArrayTimer
    from wheelspec.spec.limits import check_time

    try:
        start = check_time("start_ms", config.start_ms)
        key = (config.tick_ms, config.wheel_size)
        if rows > TEMPLATE_ROWS or pending > TEMPLATE_PENDING or type(key[0]) is not int or type(key[1]) is not int:
            timer = ArrayTimer(config.tick_ms, config.wheel_size, start, capacity=rows)
            timer.reserve(rows, pending=pending)
            return _engine_arrays(timer)
        if key not in _TEMPLATES:
            timer = ArrayTimer(config.tick_ms, config.wheel_size, 0, capacity=TEMPLATE_ROWS)
            timer.reserve(TEMPLATE_ROWS, pending=TEMPLATE_PENDING)
            _TEMPLATES[key] = _engine_arrays(timer)
    except (ValueError, TypeError):
        return None
    template = _TEMPLATES[key]
    assert template is not None
    engine = tuple(a.copy() for a in template)
    lv, tick, wheel = engine[1], config.tick_ms, config.wheel_size
    lv[0, L.LV_CUR] = start - start % tick
    lv[0, L.LV_CVID] = start // tick
    lv[0, L.LV_CIDX] = (start // tick) % wheel
    lv[0, L.LV_END] = lv[0, L.LV_CUR] + tick * wheel
    return engine


def _steps_of(operations: Sequence[ops.Op], answers: tuple[list[int], ...]) -> list[Step]:
    """The kernel's answers (:func:`compiled_run`) as the steps of a :class:`~.runner.Run`: the
    responses the reference gives, its refusals in its words."""
    from wheelspec.optimized import oracle_kernels as OK

    kind, res, err, rnow, fstart, ftask, fexp = answers
    fire, response, step = ev.Fire, Response, Step
    refused_cancel, backwards, cancel = OK.OP_REFUSED_CANCEL, OK.ERR_BACKWARDS, OK.OP_CANCEL
    with_result = (OK.OP_ADD, OK.OP_SIZE)
    steps: list[Step] = []
    for i, op in enumerate(operations):
        k, now = kind[i], rnow[i]
        if k == refused_cancel:
            assert isinstance(op, ops.CancelTask)
            resp = response(now, error=("unknown-id", f"cancel: unknown task id {op.task}"))
        elif err[i] == backwards:
            assert isinstance(op, ops.AdvanceTo)
            resp = response(now, error=("invalid", f"time_ms={op.time} is before the clock's current time {now}: "
                                                   "time never goes back"))
        else:
            a, b = fstart[i], fstart[i + 1]
            events: list[ev.Event] = [fire(now, t, e) for t, e in zip(ftask[a:b], fexp[a:b])] if b > a else []
            resp = response(now, events, res[i] if k in with_result else bool(res[i]) if k == cancel else None)
        steps.append(step(op, resp))
    return steps


def counts_of(probe: Any) -> Counter[str]:
    """The non-zero counts of ``probe`` (a :class:`~.coverage.Probe`): what two runs must agree on."""
    return Counter({k: v for k, v in probe.counts.items() if v})
