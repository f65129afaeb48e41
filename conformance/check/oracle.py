"""The oracle of the judge's second judgement (:mod:`.judge`): the reference's run of a schedule,
configured as the implementation's declaration says, and watched by the coverage probe.

* :func:`oracle_mode`: how the run is compared (``exact``, ``multiset``, ``refusals``; the judge's
  module doc says when each applies);
* :func:`oracle_run`: the run, computed by the compiled oracle or the reference itself
  (:func:`.compiled_oracle.engine_for` says which), and kept for the next implementation judged on
  the same schedule (:class:`_OracleRuns`: the reference is deterministic);
* :func:`purge_points`: where an implementation declaring executor order ``either`` ran each
  advance's purge check, which its oracle then follows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.check.compiled_oracle import CompiledRun, compiled_run, engine_for
from wheelspec.conformance.check.runner import Run, run_ops
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.profiles import EITHER_ORDER, EXPIRE_BEFORE_PURGE, KAFKA, STRICT_GT, behaviour


def oracle_mode(caps: Capabilities) -> str:
    """``exact`` | ``multiset`` | ``refusals``: how the oracle comparison works (module doc)."""
    if caps.granularity():  # fires at other advances than the reference, by declaration
        return "refusals"
    if caps.is_wheel():
        return "exact"
    if not behaviour(caps.profile).fifo_ties:  # MockTimer: a PriorityQueue, ties in any order
        return "multiset"
    return "refusals"


def purge_points(run: Run) -> list[int | None]:
    """Per step of ``run``: for an advance whose response holds a ``Purge``, how many expirations
    (``Complete(via=expire)``) precede it; else None.  The oracle of an implementation declaring
    executor order ``either`` runs each advance's purge check at the same point."""
    out: list[int | None] = []
    for step in run.steps:
        point = None
        if isinstance(step.op, ops.AdvanceTo) and step.response.error is None:
            expiries = 0
            for e in step.response.events:
                if isinstance(e, ev.Purge):
                    point = expiries
                    break
                if isinstance(e, ev.Complete) and e.via == "expire":
                    expiries += 1
        out.append(point)
    return out


class _FollowPurgePoints:
    """Drives the reference so that each advance's purge check comes where the implementation's
    came (``points``, per step: :func:`purge_points`): the executor race has many legal outcomes,
    and the state after an advance (watch lists, later purges) depends on which one happened."""

    trusted_answers = True  # the reference's own, possibly watched by the coverage probe

    def __init__(self, driven: Any, ref: Any, points: Sequence[int | None]) -> None:
        self._driven, self._ref, self._points, self._i = driven, ref, points, 0

    def reset(self, config: Config) -> None:
        self._driven.reset(config)
        self._i = 0

    def request(self, op: ops.Op) -> Any:
        i, self._i = self._i, self._i + 1
        if isinstance(op, ops.AdvanceTo) and i < len(self._points) and self._points[i] is not None:
            self._ref.simulation.set_purge_point(self._points[i])
        return self._driven.request(op)


def oracle_run(caps: Capabilities, config: Config, operations: Sequence[ops.Op], probe: Any = None,
               points: Sequence[int | None] | None = None, *, engine: str | None = None) -> Run:
    """The operations run on the reference (configured as :func:`oracle_mode` says, showing the
    executor order the implementation declares).  ``probe`` (a :class:`~.coverage.Probe`) watches
    the reference's internal state around each request: the semantic coverage report is measured
    on this run.  ``points`` (:func:`purge_points`): where each advance's purge check comes, for
    an implementation declaring executor order ``either``.  Which oracle computes the run, the
    compiled one or the reference itself, is :func:`.compiled_oracle.engine_for`'s to say
    (``engine``: ``reference`` to insist on the reference)."""
    mode = oracle_mode(caps)
    order = EXPIRE_BEFORE_PURGE if caps.executor_order == EITHER_ORDER else caps.executor_order
    eff = caps.effective(config)
    cfg = eff if mode == "exact" else Config(1, 20, eff.start_ms, eff.purge_interval)
    which = engine_for(mode, points, engine, operations)
    key = None
    if points is None:
        key = _HashedKey((mode, order, caps.protocol, caps.reports_try_complete, cfg, tuple(operations)))
        hit = _ORACLES.get(key, probe is not None)
        if hit is not None and engine == "reference" and isinstance(hit[0], CompiledRun):
            hit = None  # the reference is asked to confirm the compiled oracle: not by itself
        if hit is not None:
            run, counts = hit
            if probe is not None and counts is not None:
                probe.counts.update(counts)
            return run
    before = Counter(probe.counts) if probe is not None else None
    compiled = compiled_run(cfg, operations, probe, caps.protocol) if which == "compiled" else None
    run = compiled if compiled is not None else _reference_run(caps, mode, order, cfg, operations, probe, points)
    if key is not None:
        counts = None
        if probe is not None and before is not None:
            # what this run counted, keys counted zero times included (a report lists them)
            counts = Counter({k: v - before.get(k, 0) for k, v in probe.counts.items()
                              if k not in before or v != before[k]})
        _ORACLES.put(key, run, counts)
    return run


def _reference_run(caps: Capabilities, mode: str, order: str, cfg: Config, operations: Sequence[ops.Op],
                   probe: Any, points: Sequence[int | None] | None) -> Run:
    """:func:`oracle_run` on the reference itself (``wheelspec.reference``, watched by ``probe``)."""
    from wheelspec.conformance.adapters import reference_adapter

    ref = reference_adapter(STRICT_GT if mode == "multiset" else KAFKA, executor_order=order,
                            protocol=caps.protocol, reports_try_complete=caps.reports_try_complete)
    driven: Any = ref if probe is None else probe.wrap(ref)
    if points is not None:
        driven = _FollowPurgePoints(driven, ref, points)
    try:
        return run_ops(driven, cfg, operations)
    finally:
        ref.close()


class _HashedKey:
    """A key of :class:`_OracleRuns` that hashes its schedule once (a tuple does it at every
    lookup, an operation at a time) and is equal to another only if the schedules are the same
    value for value *and type for type*: ``AddTask(task=True)`` equals ``AddTask(task=1)`` as
    Python compares them, but the reference refuses the first and accepts the second, so one
    must never be judged with the other's oracle run.  ``repr`` tells them apart; it is computed
    only for a key found equal, a hit that saves a whole oracle run, and once per key (a hit
    compares two keys twice: the lookup and the move to the end)."""

    __slots__ = ("parts", "_hash", "_repr")

    def __init__(self, parts: tuple[Any, ...]) -> None:
        self.parts = parts
        self._hash = hash(parts)
        self._repr: str | None = None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _HashedKey) and self._hash == other._hash and self.parts == other.parts
                and self.typed() == other.typed())

    def typed(self) -> str:
        """``repr`` of the parts: equal for two keys only if their values have the same types."""
        if self._repr is None:
            self._repr = repr(self.parts)
        return self._repr


class _OracleRuns:
    """The oracle's recent runs, by everything they depend on (the mode, the executor order, the
    protocol version and ``reports_try_complete`` the reference runs with, the configuration and
    the operations), with the coverage counts the probe saw on each: the reference is
    deterministic, so a schedule judged again (the next implementation of the same command, a
    scenario of the corpus, a shrinking attempt) reuses its run.  Bounded by the operations held
    (:attr:`MAX_OPS`), least recently used first out."""

    MAX_OPS = 100_000

    def __init__(self) -> None:
        from collections import OrderedDict

        self._runs: OrderedDict[Any, tuple[Run, Counter[str] | None]] = OrderedDict()
        self._ops = 0

    def get(self, key: Any, counted: bool) -> tuple[Run, Counter[str] | None] | None:
        """The run of ``key``, if held (and, with ``counted``, held with its coverage counts)."""
        hit = self._runs.get(key)
        if hit is None or (counted and hit[1] is None):
            return None
        self._runs.move_to_end(key)
        return hit

    def put(self, key: Any, run: Run, counts: Counter[str] | None) -> None:
        old = self._runs.pop(key, None)
        if old is not None:
            self._ops -= old[0].ops_count
        self._runs[key] = (run, counts)
        self._ops += run.ops_count
        while self._ops > self.MAX_OPS and len(self._runs) > 1:
            _, (gone, _) = self._runs.popitem(last=False)
            self._ops -= gone.ops_count


_ORACLES = _OracleRuns()
