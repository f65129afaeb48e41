"""Seeded random campaigns: the seed loop that runs each campaign schedule against an
implementation, judges it and shrinks a failing one.

A schedule is a pure function of ``(kind, seed)`` (:mod:`.generate`), fitted to the implementation
(:mod:`.narrow`) and judged (:func:`.judge.judge_run`).  Shrinking (:mod:`.shrink`) is
deterministic too, so a failing seed always shrinks to the same counterexample.

:func:`run_seed_range` is the unit of work (a pure function of its arguments; distributed
campaigns split seed ranges over workers): it returns one :class:`SeedOutcome` per seed, a
failing one carrying its shrunk counterexample as a :class:`~.corpus.Scenario`, each carrying
the semantic situations its schedule exercised (:mod:`.coverage`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from typing import Any

from wheelspec.conformance.adapters.base import saved_config
from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.adapters.subprocess_adapter import LivenessError
from wheelspec.conformance.check.corpus import Scenario
from wheelspec.conformance.check.generate import GENERATORS, generate, generate_ahead
from wheelspec.conformance.check.judge import judge_run, primary
from wheelspec.conformance.check.narrow import narrow, narrow_config
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.check.shrink import RESPONDS, liveness_finding, shrink_liveness, shrink_schedule_safely
from wheelspec.spec import ops
from wheelspec.spec.findings import Finding


@dataclasses.dataclass
class SeedOutcome:
    kind: str
    seed: int
    ops: int
    failures: list[Finding]
    counterexample: Scenario | None = None
    #: the semantic situations the schedule exercised (:mod:`.coverage`), counted on the oracle run
    coverage: Counter[str] = dataclasses.field(default_factory=Counter)
    #: the properties the schedule's own run failed, in the order found (``failures`` are those of
    #: the shrunk counterexample, which keeps one of them); default: the properties of ``failures``
    props: tuple[str, ...] = ()
    #: counterexamples shrunk toward the schedule's other failing properties (:class:`PropertyShrinks`)
    more: list[Scenario] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.props:
            self.props = tuple(dict.fromkeys(f.prop for f in self.failures))

    @property
    def ok(self) -> bool:
        return not self.failures

    def failing(self, accept: Collection[str] = ()) -> bool:
        """Does the schedule fail a property not in ``accept`` (``--accept``)?  Without ``accept``
        this is ``not ok``; a schedule failing accepted properties only is an accepted deviation."""
        return any(p not in accept for p in self.all_props)

    @property
    def all_props(self) -> tuple[str, ...]:
        """Every property this seed was found to fail: its own run's and its counterexample's."""
        return tuple(dict.fromkeys([*self.props, *(f.prop for f in self.failures)]))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "seed": self.seed, "ops": self.ops, "ok": self.ok,
                             "props": list(self.all_props), "failures": [f.to_dict() for f in self.failures]}
        if self.counterexample is not None:
            d["counterexample"] = self.counterexample.to_dict()
        if self.more:
            d["more_counterexamples"] = [cx.to_dict() for cx in self.more]
        return d


def run_seed_range(adapter: Any, caps: Capabilities, kind: str, seeds: Iterable[int], *,
                   shrink: bool = True, impl_name: str = "",
                   on_seed: Callable[[SeedOutcome], None] | None = None,
                   on_run: Callable[[int, Config, Any], None] | None = None,
                   accept: Collection[str] = (), toward: str | None = None,
                   then: int | None = None) -> list[SeedOutcome]:
    """Run and judge the schedules of ``seeds``; a failing seed is shrunk to a counterexample.
    ``on_run(seed, config, result)`` sees each schedule's run (its ``history``) before judging:
    ``wheelspec check --write traces=DIR`` records it.

    The counterexample keeps a failure of the seed's most specific failing property
    (:func:`~.judge.primary`) outside ``accept`` (``--accept``: a seed failing accepted properties
    only is not shrunk here; :class:`PropertyShrinks` shrinks a few per property), or of
    ``toward`` if given (no counterexample when the seed does not fail ``toward``).  Each outcome's
    ``props`` are the properties its own run failed, whatever the counterexample keeps.

    Schedules are narrowed to the implementation (:func:`.narrow.narrow`): a purgatory-only one gets the
    purgatory schedules without their timer operations (a timer-only one is simply not given
    ``purgatory`` schedules by the caller); one declaring ``ranges: unbounded`` gets them without
    their out-of-range requests.

    A schedule the adapter does not answer in time, or during which it dies, fails property
    ``responds``: its operations up to and including the unanswered one are the failing schedule,
    shrunk with a fresh adapter per attempt (:func:`.shrink.shrink_liveness`); the adapter starts
    again for the next seed.  A restart that fails raises :class:`AdapterError` (exit 2).

    While a pipelined adapter computes a run, the runner computes the oracle's run of the same
    schedule and generates the next seed's (the next of ``seeds``, or ``then`` after the last)."""
    outcomes = []
    seeds = list(seeds)
    for i, seed in enumerate(seeds):
        cfg, schedule = generate(kind, seed)
        cfg, schedule = narrow_config(cfg, caps), narrow(schedule, caps)
        ahead: dict[str, Any] = {}
        following = seeds[i + 1] if i + 1 < len(seeds) else then
        try:
            result = run_ops(adapter, cfg, schedule,
                             meanwhile=functools.partial(_meanwhile, caps, cfg, schedule, ahead, kind, following))
        except LivenessError as e:  # a hang or crash: a finding of this schedule, not the end of the run
            if on_run is not None:
                on_run(seed, cfg, e.run)
            failing = schedule[: e.step + 1] if e.step is not None else []
            failures, covered = [liveness_finding(e, schedule)], Counter[str]()
            props: tuple[str, ...] = (RESPONDS,)
            cfg2, small = cfg, failing
            shrunk = shrink and _shrink_target(failures, accept, toward) is not None
            if shrunk:
                cfg2, small, failures = shrink_liveness(adapter, caps, cfg, failing, e)
        else:
            if on_run is not None:
                on_run(seed, cfg, result)
            failures, covered = judge_run(adapter, caps, result, coverage=True, **ahead)
            props = tuple(dict.fromkeys(f.prop for f in failures))  # the seed's own run's
            target = _shrink_target(failures, accept, toward)
            shrunk = shrink and target is not None
            if shrunk:
                assert target is not None
                cfg2, small, failures = shrink_schedule_safely(adapter, caps, cfg, schedule, target, failures)
                if caps.declared_ranges() is not None:  # saved as judge_schedule ran it
                    cfg2, small = narrow_config(cfg2, caps), narrow(small, caps)
        cx = None
        if failures and shrunk:
            # saved with the configuration the implementation ran: its declared tick and wheel size
            cx = Scenario(f"counterexample/{impl_name or 'impl'}/{kind}-{seed}", saved_config(caps, cfg2), small,
                          [None] * len(small),
                          description=f"shrunk from seed {seed} of the {kind} campaign: {failures[0].message}",
                          source="campaign counterexample",
                          origin={"generator": GENERATORS[kind], "kind": kind, "seed": seed, "impl": impl_name,
                                  "prop": failures[0].prop, "original_ops": len(schedule)})
        out = SeedOutcome(kind, seed, len(schedule), failures, cx, covered, props)
        outcomes.append(out)
        if on_seed is not None:
            on_seed(out)
    return outcomes


def _shrink_target(failures: list[Finding], accept: Collection[str], toward: str | None) -> str | None:
    """The property a seed's counterexample keeps (:func:`run_seed_range`): ``toward`` if the seed
    fails it, else the most specific failing property outside ``accept``; None: not shrunk."""
    if toward is not None:
        return toward if any(f.prop == toward for f in failures) else None
    judged = [f for f in failures if f.prop not in accept]
    return primary(judged).prop if judged else None


#: counterexamples shrunk per failing property and campaign kind: a seed failing a property that
#: has fewer is shrunk toward that property too (:class:`PropertyShrinks`), the smallest is shown
PER_PROPERTY = 2


class PropertyShrinks:
    """Failures grouped by property: each property a campaign kind fails gets counterexamples of
    its own, even when another property fails first in every seed that fails it.

    :func:`run_seed_range` shrinks a failing seed toward one property (its most specific one
    outside ``--accept``); a rarer property failing in the same seeds would have no counterexample.
    Fed the outcomes of one implementation in seed order (:meth:`add`), this shrinks a seed again
    toward each property it failed that has fewer than ``per_property`` counterexamples of that
    kind yet (accepted properties too: a seed failing only accepted ones is shrunk nowhere else).
    So the extra cost is at most ``per_property`` shrinks per property and kind, and which seeds are
    shrunk depends on the outcomes in seed order alone: ``--workers`` gives the same ones.  The
    new counterexamples go to the outcome's ``more``; none of this changes a verdict."""

    def __init__(self, adapter: Any, caps: Capabilities, *, impl_name: str = "",
                 per_property: int = PER_PROPERTY) -> None:
        self.adapter, self.caps, self.impl_name, self.per_property = adapter, caps, impl_name, per_property
        #: (kind, property) -> counterexamples made for it (or tried: a shrink that did not
        #: reproduce counts, so a flaky property cannot make every seed shrink again)
        self.made: Counter[tuple[str, str]] = Counter()

    def add(self, o: SeedOutcome) -> list[Scenario]:
        """Count ``o``'s counterexample and shrink ``o``'s seed toward each of its properties that
        lacks counterexamples; returns the new ones (also appended to ``o.more``)."""
        have = {(cx.origin or {}).get("prop") for cx in [o.counterexample, *o.more] if cx is not None}
        for prop in have:
            self.made[(o.kind, str(prop))] += 1
        new = []
        for prop in o.props:
            if prop in have or self.made[(o.kind, prop)] >= self.per_property:
                continue
            self.made[(o.kind, prop)] += 1
            cx = run_seed_range(self.adapter, self.caps, o.kind, [o.seed], impl_name=self.impl_name,
                                toward=prop)[0].counterexample
            if cx is not None:
                cx = dataclasses.replace(cx, name=f"{cx.name}-{prop}")
                o.more.append(cx)
                new.append(cx)
        return new


def smallest(outcomes: Iterable[SeedOutcome]) -> dict[str, Scenario]:
    """Per property, the smallest counterexample that keeps a failure of it among ``outcomes``'
    (fewest operations, then the earliest in ``outcomes``)."""
    best: dict[str, Scenario] = {}
    for o in outcomes:
        for cx in [o.counterexample, *o.more]:
            if cx is None:
                continue
            prop = str((cx.origin or {}).get("prop"))
            if prop not in best or len(cx.ops) < len(best[prop].ops):
                best[prop] = cx
    return best


def _meanwhile(caps: Capabilities, cfg: Config, schedule: list[ops.Op], into: dict[str, Any], kind: str,
               following: int | None) -> None:
    """The runner's work while a pipelined adapter computes ``schedule`` (:func:`run_seed_range`):
    put into ``into`` the oracle's run of it and the coverage probe that watched it (nothing for
    an implementation declaring executor order ``either``, whose oracle follows the purge points
    of its answers), then generate the schedule of seed ``following`` (if any) for its turn."""
    from wheelspec.conformance.check.coverage import Probe
    from wheelspec.conformance.check.oracle import oracle_run
    from wheelspec.spec.profiles import EITHER_ORDER

    if caps.executor_order != EITHER_ORDER:
        probe = Probe()
        into.update(oracle=oracle_run(caps, cfg, schedule, probe), probe=probe)
    if following is not None:
        generate_ahead(kind, following)


@dataclasses.dataclass
class CampaignStats:
    schedules: int = 0
    ops: int = 0
    seconds: float = 0.0
    failed: int = 0

    def rate(self) -> tuple[float, float]:
        s = max(self.seconds, 1e-9)
        return self.schedules / s, self.ops / s


def timed(fn: Callable[[], list[SeedOutcome]]) -> tuple[list[SeedOutcome], CampaignStats]:
    t0 = time.perf_counter()
    outs = fn()
    st = CampaignStats(len(outs), sum(o.ops for o in outs), time.perf_counter() - t0, sum(not o.ok for o in outs))
    return outs, st
