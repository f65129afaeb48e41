"""Checking one implementation: the run loop behind ``wheelspec check``, the library API
(:mod:`wheelspec.conformance.api`) and, through it, the pytest plugin.

An implementation is checked unit by unit on one adapter: the range it declares (one ``ranges``
finding, :func:`.corpus.declared_range_result`), each corpus scenario (:func:`.corpus.run_scenario`)
and each campaign kind, seed by seed under a failure budget (:func:`campaign_kind`).
:func:`check_one` runs all of them into an :class:`~.report.ImplReport`, as ``wheelspec check``
reports them: an adapter error is recorded in the report (with the campaign kinds it cut short),
an interruption marks the report incomplete and propagates, the verdicts reached before either
kept.  :class:`wheelspec.conformance.api.Checker` calls the unit functions one by one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello
from wheelspec.conformance.check import compiled_oracle
from wheelspec.conformance.check.campaign import PropertyShrinks, SeedOutcome, run_seed_range
from wheelspec.conformance.check.corpus import Scenario, declared_range_result, run_scenario
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.narrow import narrow
from wheelspec.conformance.check.report import ImplReport
from wheelspec.conformance.interrupt import deferred
from wheelspec.spec.errors import UserError
from wheelspec.spec.show import file_safe, impl_dirname


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """How each implementation is checked: ``wheelspec check``'s options, parsed."""

    #: random schedules per campaign kind (0: no campaign), seeds ``seed .. seed + schedules - 1``
    schedules: int
    seed: int = 0
    #: failing seeds per campaign kind after which that kind stops (``--max-failures``)
    max_failures: int = 20
    #: per-request and handshake timeouts of a subprocess adapter, in seconds
    timeout: float = 10.0
    start_timeout: float = 30.0
    #: ``bounded`` / ``unbounded`` overrides the range contract the adapter declares (``--ranges``)
    ranges: str | None = None
    #: properties whose failures are known, documented deviations (``--accept``)
    accept: tuple[str, ...] = ()
    #: processes judging the campaign's seeds (``--workers``)
    workers: int = 1
    #: where each campaign schedule's history goes as a Parquet trace, if anywhere (``--write traces=DIR``)
    trace_out: str | None = None
    #: where shrunk counterexamples are saved, one folder per implementation (``--out``)
    out: str = "wheelspec-out"

    @property
    def seeds(self) -> range:
        return range(self.seed, self.seed + self.schedules)


def judged_capabilities(hello: Hello, ranges: str | None) -> Capabilities:
    """The capabilities an implementation is judged by: its hello's, with ``ranges``
    (``bounded`` / ``unbounded``, the user's word) overriding the range contract it declares."""
    caps = hello.capabilities
    return dataclasses.replace(caps, ranges=ranges) if ranges else caps


def refuse_real_time(name: str, caps: Capabilities, runner: str) -> None:
    """Raise :class:`UserError` for an implementation whose time is real: ``runner`` (the command or
    API that was asked) drives virtual time only."""
    if caps.time != "virtual":
        raise UserError(f"{name}: capabilities.time is \"real\": {runner} drives virtual time only; check a "
                        f"real-time adapter with `wheelspec realtime --impl ...` (docs/guides/ADAPTERS.md, rt_run)")


def offers(caps: Capabilities, kind: str) -> bool:
    """Does the implementation offer campaign ``kind`` (its ``timer`` / ``purgatory`` capability)?"""
    return bool(getattr(caps, kind))


def salvaged(kind: str, seed: int, result: Any, caps: Capabilities) -> SeedOutcome | None:
    """The outcome of a schedule that ran to its end but never reached the report (an interruption
    or an adapter error while it was judged or shrunk): judged again, without a counterexample.
    None for a run cut short (a hang or crash is the campaign's finding to make, not this one's)."""
    if result is None or len(result.steps) != len(narrow(generate(kind, seed)[1], caps)):
        return None
    failures = judge(result, caps)
    if any(f.prop == "ranges" for f in failures):
        # The other properties are judged on a rerun without the out-of-range requests (the
        # campaign's judge_run), which cannot be made now: keep the range verdict alone.
        failures = [f for f in failures if f.prop == "ranges"]
    return SeedOutcome(kind, seed, len(result.steps), failures)


def campaign_kind(adapter: Any, caps: Capabilities, kind: str, seeds: Sequence[int], *, impl_name: str,
                  on_seed: Callable[[SeedOutcome], None], accept: Collection[str] = (),
                  max_failures: int | None = None, on_run: Callable[[int, Config, Any], None] | None = None,
                  on_salvaged: Callable[[SeedOutcome], None] | None = None) -> int | None:
    """Run and judge ``kind``'s schedules of ``seeds`` one at a time (:func:`.campaign.run_seed_range`),
    each outcome handed to ``on_seed`` as soon as it is in, each run to ``on_run(seed, config, run)``
    before it is judged.  Once ``max_failures`` seeds failed a property outside ``accept`` (an
    accepted deviation spends no budget) the kind stops: the seed it stopped before is returned
    (None: every seed ran).

    ``on_salvaged``: whatever ends the loop while a schedule that ran is judged or shrunk, that
    schedule's verdict (without a counterexample, :func:`salvaged`) is handed to it first."""
    compiled_oracle.expect(kind, len(seeds))
    failed = 0
    # The run of the schedule being judged, held from the moment it ran until its outcome is in:
    # an interruption or adapter error while judging or shrinking it keeps the verdict.
    pending: dict[str, Any] = {}

    def ran(seed: int, cfg: Config, result: Any) -> None:
        if on_run is not None:
            on_run(seed, cfg, result)
        pending["result"] = result

    def judged(o: SeedOutcome) -> None:
        pending.clear()
        on_seed(o)

    seeds = list(seeds)
    for i, seed in enumerate(seeds):
        if max_failures is not None and failed >= max_failures:
            return seed
        try:
            outs = run_seed_range(adapter, caps, kind, [seed], impl_name=impl_name, on_seed=judged, on_run=ran,
                                  accept=accept, then=seeds[i + 1] if i + 1 < len(seeds) else None)
        except BaseException:
            if pending and on_salvaged is not None:  # ran, not yet reported: its verdict
                with deferred():
                    kept = salvaged(kind, seed, pending.pop("result"), caps)
                    if kept is not None:
                        on_salvaged(kept)
            raise
        failed += sum(o.failing(accept) for o in outs)
    return None


def stop_kinds(rep: ImplReport, kinds: list[str], reason: str, planned: int) -> None:
    """Record in ``rep.stopped`` each of ``kinds`` whose campaign ended before its ``planned``
    schedules, with ``reason`` and the last seed judged (from the outcomes ``rep`` holds)."""
    for kind in kinds:
        seeds = [o.seed for o in rep.campaign if o.kind == kind]
        if len(seeds) < planned and not any(st["kind"] == kind for st in rep.stopped):
            rep.stopped.append({"kind": kind, "reason": reason, "after_seed": seeds[-1] if seeds else None,
                                "schedules": len(seeds), "planned": planned})


def budget_spent(rep: ImplReport, kind: str, seed: int, opts: CheckOptions) -> None:
    """Record in ``rep.stopped`` that ``kind`` spent its ``--max-failures`` budget before ``seed``."""
    rep.stopped.append({"kind": kind, "reason": "max-failures", "after_seed": seed - 1,
                        "schedules": sum(o.kind == kind for o in rep.campaign),
                        "planned": opts.schedules, "max_failures": opts.max_failures})


def check_one(impl: str, opts: CheckOptions, scenarios: list[Scenario], kinds: list[str], *,
              rep: ImplReport | None = None, progress: Any = None) -> ImplReport:
    """Check ``impl`` (an ``--impl`` text): its declared range, ``scenarios`` and the campaign kinds
    of ``kinds`` it offers, filling ``rep`` (a new :class:`~.report.ImplReport` if None) one
    verdict at a time, and return it.  An adapter error is recorded in the report (and the
    campaign kinds it cut short in ``rep.stopped``); an interruption (KeyboardInterrupt, or
    :class:`~wheelspec.conformance.interrupt.Interrupted` for SIGTERM) marks the report incomplete
    and propagates, the verdicts reached before it kept.  ``progress``: a ``rich`` progress display
    that gets one task per implementation, advanced per scenario and schedule.

    ``max_failures`` is a budget per campaign kind: failing timer schedules do not use up the
    purgatory campaign's budget, and a kind that spends its budget is listed in ``rep.stopped``."""
    from wheelspec.conformance.adapters import resolve

    if rep is None:
        rep = ImplReport(impl)
    rep.accept = opts.accept
    # Incomplete until it returns normally: whatever escapes (a signal, even while the adapter
    # loads; a runner bug) leaves the report saying so.
    rep.started, rep.incomplete = True, True
    try:
        adapter = resolve(impl, timeout=opts.timeout, start_timeout=opts.start_timeout)()
    except UserError as e:
        rep.error, rep.incomplete = str(e), False
        return rep
    _ImplCheck(impl, opts, rep, adapter, progress).run(scenarios, kinds)
    rep.incomplete = False
    return rep


class _ImplCheck:
    """One implementation's check on its open adapter (:func:`check_one`): the state its units share."""

    def __init__(self, impl: str, opts: CheckOptions, rep: ImplReport, adapter: Any, progress: Any) -> None:
        self.impl, self.opts, self.rep, self.adapter, self.progress = impl, opts, rep, adapter, progress
        self.name = impl_dirname(impl)  # its folder of counterexamples
        self.task: Any = None
        self.trace_writer: Any = None
        self.t0 = time.perf_counter()
        self.shrinks: PropertyShrinks | None = None
        #: the fork server of ``--workers`` loads the compiled oracle's kernels (decided once, at its start)
        self.kernels = False

    def run(self, scenarios: list[Scenario], kinds: list[str]) -> None:
        """Every unit, the adapter closed at the end whatever happened."""
        rep, opts = self.rep, self.opts
        kinds_here: list[str] = []
        try:
            if opts.workers > 1 and opts.schedules:
                from wheelspec.conformance.check.parallel import start_server

                # the workers' process is made ready while this one shakes hands and runs the corpus
                self.kernels = compiled_oracle.worth_loading({k: len(opts.seeds) for k in kinds})
                start_server(self.kernels)
            hello = self.adapter.hello()
            caps = judged_capabilities(hello, opts.ranges)
            rep.name, rep.capabilities = hello.name, caps.to_dict()
            refuse_real_time(hello.name, caps, "`wheelspec check`")
            kinds_here = [k for k in kinds if offers(caps, k)]
            if self.progress is not None:
                self.task = self.progress.add_task(self.impl, total=len(scenarios) + opts.schedules * len(kinds_here))
            self.scenarios(caps, scenarios)
            self.campaign(caps, kinds_here)
        except UserError as e:  # an adapter error (AdapterError is one)
            rep.error = str(e)
            stop_kinds(rep, kinds_here, "error", opts.schedules)
        except KeyboardInterrupt:
            stop_kinds(rep, kinds_here, "interrupted", opts.schedules)
            raise
        finally:
            if self.trace_writer is not None:
                # Written whatever happened (a second signal waits for it): the histories are the user's.
                with deferred():
                    rep.trace = str(self.trace_writer.close())
            with contextlib.suppress(Exception):  # closing a broken adapter must not hide the finding
                self.adapter.close()
            if self.progress is not None and self.task is not None:
                self.progress.remove_task(self.task)

    def scenarios(self, caps: Capabilities, scenarios: list[Scenario]) -> None:
        declared = declared_range_result(caps)  # a declared range narrower than Kafka's: one finding
        if declared is not None:
            self.rep.scenarios.append(declared)
        for sc in scenarios:
            self.rep.scenarios.append(run_scenario(self.adapter, caps, sc))
            self.advance()

    def campaign(self, caps: Capabilities, kinds: list[str]) -> None:
        opts = self.opts
        if opts.trace_out:
            from wheelspec.conformance.traces.format import TraceWriter

            self.trace_writer = TraceWriter(Path(opts.trace_out) / f"{self.name}.parquet")
        self.t0 = time.perf_counter()
        self.shrinks = PropertyShrinks(self.adapter, caps, impl_name=self.name)
        if opts.workers > 1 and opts.schedules:
            self.campaign_on_pool(caps, kinds)
            return
        try:
            for kind in kinds:
                stopped = campaign_kind(self.adapter, caps, kind, opts.seeds, impl_name=self.name,
                                        on_seed=self.on_seed, accept=self.rep.accept, max_failures=opts.max_failures,
                                        on_run=functools.partial(self.on_run, caps, kind=kind),
                                        on_salvaged=self.rep.campaign.append)
                if stopped is not None:
                    budget_spent(self.rep, kind, stopped, opts)
        finally:
            self.rep.seconds = time.perf_counter() - self.t0

    def campaign_on_pool(self, caps: Capabilities, kinds: list[str]) -> None:
        """The campaign on ``opts.workers`` processes (:mod:`.parallel`): the same outcomes in the
        same order, the same budget stops, the same errors."""
        from wheelspec.conformance.check.parallel import SeedPool, WorkerSetup

        opts, rep = self.opts, self.rep
        setup = WorkerSetup(self.impl, opts.timeout, opts.start_timeout, caps, self.name,
                            self.trace_writer is not None, tuple(rep.accept))
        failed = dict.fromkeys(kinds, 0)
        with SeedPool(setup, opts.workers, oracle_kernels=self.kernels) as pool:
            for kind, o, run in pool.outcomes([(k, list(opts.seeds)) for k in kinds]):
                if failed[kind] >= opts.max_failures:
                    budget_spent(rep, kind, o.seed, opts)
                    pool.skip(kind)
                    continue
                if run is not None:
                    self.trace(caps, o.seed, run[0], run[1], kind)
                self.on_seed(o)
                failed[kind] += o.failing(rep.accept)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def on_run(self, caps: Capabilities, seed: int, cfg: Config, result: Any, kind: str) -> None:
        self.trace(caps, seed, cfg, result.history, kind)

    def trace(self, caps: Capabilities, seed: int, cfg: Config, history: Any, kind: str) -> None:
        if self.trace_writer is not None:
            self.trace_writer.add_schedule(history, impl=self.impl, kind=kind, seed=seed, config=caps.effective(cfg),
                                           profile=caps.profile,
                                           wheel=caps.wheel_size is not None or "wheel_size" in caps.configurable)

    def on_seed(self, o: SeedOutcome) -> None:
        """A seed's outcome into the report, its counterexamples saved under ``--out``."""
        rep = self.rep
        rep.campaign.append(o)
        rep.seconds = time.perf_counter() - self.t0
        self.advance()
        folder = Path(self.opts.out) / self.name
        if o.counterexample is not None:
            p = folder / f"{o.kind}-{o.seed}.json"
            o.counterexample.for_impl(self.impl).save(p)  # `replay FILE` rebuilds the implementation from it
            o.counterexample.path = str(p)
            rep.counterexamples.append(str(p))
        # failures grouped by property: the seed shrunk toward its other failing properties too
        assert self.shrinks is not None
        for cx in self.shrinks.add(o):
            p = folder / f"{o.kind}-{o.seed}-{file_safe(str((cx.origin or {})['prop']))}.json"
            cx.for_impl(self.impl).save(p)
            cx.path = str(p)
            rep.counterexamples.append(str(p))
