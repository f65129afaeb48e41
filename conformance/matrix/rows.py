"""The rows of the conformance matrix: one per implementation, third-party timers (stdlib ``sched``,
``asyncio``, Twisted's ``Clock``, Netty's ``HashedWheelTimer``) and our own engines (reference,
MockTimer profile, optimized).

Virtual-time implementations are driven through the runner (:mod:`wheelspec.conformance.check`):
the timer part of the scenario corpus, a seeded timer campaign, and four *probes* (small
scenarios with pinned expectations, :func:`probes`): same-tick order, delay <= 0, huge delay,
early bound at tick 10.  Each run is judged by the profile the implementation claims and its
history is re-judged under every profile, which gives the "profiles satisfied" column.
Real-time implementations run seeded wall-clock schedules (:mod:`wheelspec.conformance.realtime`).

Every failure is saved as a replayable file under the counterexamples folder (by default
``wheelspec-matrix/counterexamples``, one folder per row): a scenario, which records the
``--impl`` text of its row (``wheelspec replay FILE`` replays it there; a campaign counterexample is
named ``<kind>-<seed>.json`` as ``wheelspec check`` names it), or a real-time schedule
(``wheelspec realtime --schedule FILE --impl ...``).  ``docs/results/MATRIX.md`` explains them.
"""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wheelspec.conformance.adapters import thirdparty
from wheelspec.conformance.adapters.base import saved_config
from wheelspec.conformance.matrix import files
from wheelspec.conformance.optional import MissingExtra, install_hint
from wheelspec.spec import properties
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import KAFKA, STRICT, STRICT_GT
from wheelspec.spec.show import impl_dirname

#: the matrix's property columns, in order: aliases declared in the property registry, each
#: showing some properties (:data:`wheelspec.spec.properties.MATRIX_COLUMNS`)
COLUMNS = properties.column_names()


#: checker / runner property -> matrix column (``expected`` failures are mapped by scenario)
PROP_COLUMN = properties.columns_by_property(properties.HISTORY, properties.RUN)


#: scenario name fragment -> column, for ``expected`` / ``oracle`` / ``size`` failures
SCENARIO_COLUMN = (("same-tick", "same-tick order"), ("order", "same-tick order"), ("delay-zero", "delay <= 0"),
                   ("nonpositive", "delay <= 0"), ("largest-delay", "huge delay"), ("huge", "huge delay"),
                   ("clock-range", "huge delay"), ("refusals", "huge delay"), ("early", "early bound"),
                   ("cancel", "cancel respected"), ("readd", "exactly once"))


VIRTUAL = ("reference", "reference-mock", "optimized", "stdlib-sched", "twisted-clock", "asyncio",
           "asyncio-res-15.625ms", *thirdparty.virtual_names())


REALTIME = ("netty", "netty-tick10", "asyncio-live", *thirdparty.realtime_names())


#: real-time rows that ask the timer for a coarser tick: name -> (adapter, tick ms)
RT_TICK = {"netty-tick10": ("netty", 10)}


#: the ``--impl`` text that rebuilds a built-in virtual row outside the matrix (recorded in its saved
#: counterexamples: ``wheelspec replay FILE`` replays them on it); our engines and the third-party
#: peers are their own ``--impl`` text, as is a user's row
ROW_IMPLS = {"stdlib-sched": "wheelspec.conformance.adapters.stdlib_sched:adapter",
             "twisted-clock": "wheelspec.conformance.adapters.twisted_clock:adapter",
             "asyncio": "wheelspec.conformance.adapters.asyncio_loop:adapter",
             "asyncio-res-15.625ms": "wheelspec.conformance.adapters.asyncio_loop:adapter_coarse"}


def impl_spec(name: str) -> str:
    """The ``--impl`` text of the virtual row ``name`` (:data:`ROW_IMPLS`)."""
    return ROW_IMPLS.get(name, name)


def is_users_row(name: str) -> bool:
    """Is ``name`` a row the user asked for by an ``--impl`` of their own (``package.module:factory``,
    ``cmd:COMMAND``), not one of the built-in rows (:data:`VIRTUAL`, :data:`REALTIME`)?  Such rows
    decide the exit code of ``wheelspec matrix`` as they do that of ``wheelspec check``."""
    return name not in VIRTUAL + REALTIME


def virtual_factory(name: str) -> Callable[[], Any]:
    from wheelspec.conformance import adapters

    if name == "reference":
        return lambda: adapters.reference_adapter(KAFKA)
    if name == "reference-mock":
        return lambda: adapters.reference_adapter(STRICT_GT)
    if name == "optimized":
        return adapters.optimized_adapter
    if name == "stdlib-sched":
        from wheelspec.conformance.adapters.stdlib_sched import adapter
        return adapter
    if name == "twisted-clock":
        from wheelspec.conformance.adapters.twisted_clock import adapter as tw
        return tw
    if name == "asyncio":
        from wheelspec.conformance.adapters.asyncio_loop import adapter as aio
        return aio
    if name == "asyncio-res-15.625ms":
        from wheelspec.conformance.adapters.asyncio_loop import adapter_coarse
        return adapter_coarse
    # any other implementation `wheelspec check --impl` takes (package.module:factory, cmd:COMMAND)
    return adapters.resolve(name)


# ------------------------------------------------------------------ probes ---------------------
def probes() -> list[Any]:
    """Small scenarios that pin one behaviour each (expectations for the strict family; the
    kafka and strict-gt expectations are what our engines do)."""
    from wheelspec.conformance.adapters.protocol import Config
    from wheelspec.conformance.check.corpus import Scenario
    from wheelspec.spec import ops
    from wheelspec.spec.limits import MAX_DELAY_MS

    def sc(name: str, desc: str, cfg: Config, steps: list[tuple[Any, dict[str, Any] | None]]) -> Scenario:
        return Scenario(f"probe/{name}", cfg, [s for s, _ in steps], [e for _, e in steps], description=desc,
                        source="wheelspec matrix probe")

    order = sc("same-tick-order", "Eight tasks due at the same moment, added in the order 1..8 (four at once, "
               "four later with shorter delays), run in that order (first in, first out).", Config(1, 20, 0, 1000),
               [(ops.AddTask(1, 10), None), (ops.AddTask(2, 10), None), (ops.AddTask(3, 10), None),
                (ops.AddTask(4, 10), None), (ops.AdvanceTo(4), None), (ops.AddTask(5, 6), None),
                (ops.AddTask(6, 6), None), (ops.AddTask(7, 6), None), (ops.AddTask(8, 6), None),
                (ops.AdvanceTo(10), {KAFKA: {"fired": [1, 2, 3, 4, 5, 6, 7, 8]},
                                     STRICT: {"fired": [1, 2, 3, 4, 5, 6, 7, 8]},
                                     STRICT_GT: {"fired": []}}),
                # Kafka's MockTimer (strict-gt) runs ties in its PriorityQueue's heap order, not FIFO
                (ops.AdvanceTo(11), {KAFKA: {"fired": []}, STRICT: {"fired": []},
                                     STRICT_GT: {"fired_set": [1, 2, 3, 4, 5, 6, 7, 8]}})])
    nonpos = sc("delay-nonpositive", "Delays 0 and -5 at clock 100: fired inside add (strict-gt), or at the "
                "next advance even by 0 (kafka, strict).", Config(1, 20, 100, 1000),
                [(ops.AddTask(1, 0), {STRICT_GT: {"fired": [1]}, KAFKA: {"fired": [1]}, STRICT: {"fired": []}}),
                 (ops.AddTask(2, -5), {STRICT_GT: {"fired": [2]}, KAFKA: {"fired": [2]}, STRICT: {"fired": []}}),
                 (ops.AdvanceTo(100), {STRICT_GT: {"fired": []}, KAFKA: {"fired": []}, STRICT: {"fired_set": [1, 2]}})])
    huge = sc("huge-delay", "The largest allowed delay fires exactly at its expiration (strict, kafka) or one "
              "past it (strict-gt), not before.", Config(1, 20, 0, 1000),
              [(ops.AddTask(1, MAX_DELAY_MS), {"result": MAX_DELAY_MS}),
               (ops.AdvanceTo(MAX_DELAY_MS - 1), {"fired": []}),
               (ops.AdvanceTo(MAX_DELAY_MS),
                {KAFKA: {"fired": [1]}, STRICT: {"fired": [1]}, STRICT_GT: {"fired": []}}),
               (ops.AdvanceTo(MAX_DELAY_MS + 1),
                {KAFKA: {"fired": []}, STRICT: {"fired": []}, STRICT_GT: {"fired": [1]}})])
    early = sc("early-bound-tick-10", "Expirations 15 and 19 at tick 10: a kafka wheel runs both at 10 (up to "
               "tick - 1 ms early); a strict timer runs 15 at 15 and 19 at 19.", Config(10, 20, 0, 1000),
               [(ops.AddTask(1, 15), None), (ops.AddTask(2, 19), None),
                (ops.AdvanceTo(10), {KAFKA: {"fired": [1, 2]}, STRICT: {"fired": []}, STRICT_GT: {"fired": []}}),
                (ops.AdvanceTo(15), {KAFKA: {"fired": []}, STRICT: {"fired": [1]}, STRICT_GT: {"fired": []}}),
                (ops.AdvanceTo(19), {KAFKA: {"fired": []}, STRICT: {"fired": [2]}, STRICT_GT: {"fired": [1]}})])
    return [order, nonpos, huge, early]


# ------------------------------------------------------------------ rows -----------------------
@dataclasses.dataclass
class Row:
    name: str
    version: str
    mode: str                       # virtual | real-time
    claimed: str
    cells: dict[str, str]           # column -> "pass" | "FAIL" | "n/a" | "not judged"
    notes: dict[str, str]           # column -> short measured detail
    satisfies: list[str]
    failures: list[str]             # one line each: where -> property: message
    counterexamples: list[str]
    runs: int = 0
    ops: int = 0
    seconds: float = 0.0
    lateness: dict[str, float] | None = None
    lateness_ms: list[float] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("lateness_ms")
        return d


def not_judged_columns(unobservable: tuple[str, ...]) -> dict[str, list[str]]:
    """Columns touched by what an adapter declared unobservable: column -> the declared properties
    it shows, or ``[]`` when it shows nothing else (the whole cell is "not judged")."""
    out: dict[str, list[str]] = {}
    for c in properties.MATRIX_COLUMNS:
        shown = [n for j, n in c.shows if j in (properties.HISTORY, properties.RUN)]
        hidden = [n for n in shown if n in unobservable]
        if hidden:
            out[c.name] = [] if len(hidden) == len(shown) else hidden
    return out


def _column_of(prop: str, scenario: str) -> str:
    if prop in PROP_COLUMN and not (prop in ("accepted-invalid", "refused-valid") and "refusals" not in scenario
                                    and "range" not in scenario and "largest" not in scenario):
        return PROP_COLUMN[prop]
    for frag, col in SCENARIO_COLUMN:
        if frag in scenario:
            return col
    return PROP_COLUMN.get(prop, "exactly once" if prop in ("oracle", "expected") else "late bound")


def _observed(scenario: str, run: Any) -> dict[str, str]:
    """Short notes of what a probe saw (the behaviour, pass or fail)."""
    steps = run.steps

    def fired(i: int) -> list[int]:
        return [e.task for e in steps[i].response.events if hasattr(e, "task")]

    if scenario == "probe/delay-nonpositive" and len(steps) == 3:
        if fired(0) or fired(1):
            return {"delay <= 0": "runs inside add"}
        return {"delay <= 0": "runs at the next advance (even by 0)" if fired(2) else "did not run at the next advance"}
    if scenario == "probe/same-tick-order" and steps:
        order = [t for i in range(len(steps)) for t in fired(i)]
        return {"same-tick order": "first in, first out" if order == sorted(order) else f"ran {order}"}
    if scenario == "timer/largest-delay-and-one-past" and len(steps) > 1:
        r = steps[1].response
        return {"huge delay": "refuses delay 2^40 (range)" if r.error
                else "accepts delay 2^40 (beyond wheelspec's range)"}
    return {}


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


def counterexample_stem(scenario: Any) -> str:
    """The file name (without ``.json``) a failing scenario is saved under: ``<kind>-<seed>`` for a
    campaign counterexample, as ``wheelspec check`` names it, else the scenario's name with ``/``
    made ``-`` (``timer-tick-boundaries``, ``probe-huge-delay``)."""
    origin = scenario.origin or {}
    if scenario.name.startswith("counterexample/") and "kind" in origin and "seed" in origin:
        return f"{_safe(str(origin['kind']))}-{_safe(str(origin['seed']))}"
    return _safe(scenario.name.replace("/", "-"))


def save_counterexample(scenario: Any, folder: Path, impl: str) -> Path:
    """Save a failing scenario under ``folder`` (:func:`counterexample_stem`) for replay, recording
    ``impl``, the ``--impl`` text that rebuilds the implementation it failed on, and marked as
    generated (:mod:`.files`); a file of the same name that the matrix did not write is refused."""
    path = files.claim(folder / f"{counterexample_stem(scenario)}.json")
    return dataclasses.replace(scenario.for_impl(impl), source=files.generated_source(scenario.source)).save(path)


#: failing campaign seeds shrunk and saved per implementation (the rest are counted)
MAX_SHRUNK = 3


#: the cell of every column of a row whose implementation needs an extra that is not installed
UNAVAILABLE = "unavailable"


def unavailable_row(name: str, mode: str, missing: MissingExtra) -> Row:
    """The row of an implementation whose optional dependency is not installed: every cell
    ``unavailable``, the first one noting the extra that adds it; not an error of the matrix."""
    reason = f"needs the '{missing.extra}' extra"
    return Row(name, reason, mode, "?", {c: UNAVAILABLE for c in COLUMNS}, {COLUMNS[0]: reason}, [],
               [f"{UNAVAILABLE}: {reason} ({install_hint(missing.extra)})"], [])


def virtual_row(name: str, *, schedules: int, cx_dir: Path | None, progress: Callable[[str], None]) -> Row:
    from wheelspec.conformance.check.corpus import Scenario, load_corpus
    from wheelspec.conformance.check.generate import GENERATORS, generate
    from wheelspec.conformance.check.judge import (
        declared_range_finding,
        judge,
        judge_run,
        not_judged,
        primary,
    )
    from wheelspec.conformance.check.narrow import narrow, narrow_config, out_of_range
    from wheelspec.conformance.check.runner import run_ops
    from wheelspec.conformance.check.shrink import shrink_schedule
    from wheelspec.spec import events as ev
    from wheelspec.spec.checker import check_history
    from wheelspec.spec.profiles import PROFILE_NAMES, profile

    t0 = time.perf_counter()
    try:
        adapter = virtual_factory(name)()
    except MissingExtra as e:  # Twisted not installed: the row says which extra adds it, not "error"
        return unavailable_row(name, "virtual", e)
    except UserError as e:  # the other rows are still made
        return Row(name, "", "virtual", "?", {c: "error" for c in COLUMNS}, {}, [], [f"adapter: {e}"], [])
    try:
        hello = adapter.hello()
        caps = hello.capabilities
        cells = {c: "pass" for c in COLUMNS}
        unjudged = not_judged_columns(not_judged(caps))
        cells.update({c: "not judged" for c, part in unjudged.items() if not part})
        fails: list[str] = []
        cxs: list[str] = []
        satisfied = {p: True for p in PROFILE_NAMES}
        firing = {"no-early-fire", "no-lost-task", "fire-once", "no-fire-after-cancel",
                  "cancel-result"} - set(caps.unobservable)
        early_max = 0
        n_runs = n_ops = 0
        shrunk = [0]
        behaviour: dict[str, str] = {}

        def account(run: Any, failures: list[Any], where: str, scenario: Any) -> None:
            nonlocal early_max, n_runs, n_ops
            n_runs += 1
            n_ops += len(run.steps)
            for e in run.history:
                if isinstance(e, ev.Fire):
                    early_max = max(early_max, e.exp - e.now)
            for p in PROFILE_NAMES:
                if satisfied[p]:
                    tick = run.config.tick_ms
                    v = check_history(run.history, profile(p, tick=tick), stop_at_first=False)
                    if any(x.prop in firing for x in v.violations):
                        satisfied[p] = False
            if not failures:
                return
            # the most specific symptom names the column: an early fire also makes later
            # expectations of the same scenario fail, but the cause is the early fire
            f0 = primary(failures)
            cells[_column_of(f0.prop, where)] = "FAIL"
            if any(f.prop in ("ranges", "accepted-invalid") for f in failures):
                cells["huge delay"] = "FAIL"  # the range contract, whatever the primary symptom
            fails.append(f"{where} -> [{f0.prop}] {f0.message}")
            if cx_dir is not None and scenario is not None:
                cxs.append(str(save_counterexample(scenario, cx_dir / impl_dirname(name), impl_spec(name))))

        timer_corpus = [s for s in load_corpus() if s.needs() <= {"timer"}]
        if caps.ranges == "unbounded":  # as `wheelspec check`: out-of-range requests are left out
            timer_corpus = [s for s in timer_corpus if not any(out_of_range(op) for op in s.ops)]
        declared = caps.declared_ranges()
        for sc in timer_corpus + probes():
            if declared is not None and not declared.admits("time", sc.config.start_ms):
                continue  # as `wheelspec check`: a clock starting outside the declared range is n/a
            expects, _ = sc.expectations_for(caps)
            run = run_ops(adapter, sc.config, sc.ops)
            account(run, judge(run, caps, expects=expects), sc.name, sc)
            behaviour.update(_observed(sc.name, run))
        progress(f"{name}: corpus and probes done")
        for seed in range(schedules):
            cfg, schedule = generate("timer", seed)
            cfg, schedule = narrow_config(cfg, caps), narrow(schedule, caps)
            run = run_ops(adapter, cfg, schedule)
            # as `wheelspec check`: the range contract judged apart from the rest (property ranges)
            failures, _ = judge_run(adapter, caps, run)
            cx = None
            if failures and shrunk[0] < MAX_SHRUNK:
                shrunk[0] += 1
                cfg2, small, failures2 = shrink_schedule(adapter, caps, cfg, schedule, primary(failures).prop)
                # named and saved as `wheelspec check` names and saves it (OUT/<impl>/<kind>-<seed>.json)
                folder = impl_dirname(name)
                cx = Scenario(f"counterexample/{folder}/timer-{seed}", saved_config(caps, cfg2), small,
                              [None] * len(small),
                              description=f"shrunk from seed {seed} of the timer campaign: {failures2[0].message}",
                              source="wheelspec matrix campaign counterexample",
                              origin={"generator": GENERATORS["timer"], "kind": "timer", "seed": seed,
                                      "impl": folder, "prop": failures2[0].prop, "original_ops": len(schedule)})
            account(run, failures, f"timer seed {seed}", cx)
        progress(f"{name}: {schedules} campaign schedules done")
        notes = {"early bound": "never early" if early_max <= 0 else f"early by up to {early_max} ms", **behaviour}
        narrower = declared_range_finding(caps)
        if declared is not None and narrower is not None:  # the declared range, its one finding
            cells["huge delay"] = "FAIL"
            notes["huge delay"] = f"declares {declared.describe()}"
            fails.append(f"declared range -> [{narrower.prop}] {narrower.message}")
            if declared.delay[0] > 0:  # it refuses every delay <= 0 by declaration: the probe saw none run
                behaviour.pop("delay <= 0", None)
                cells["delay <= 0"], notes["delay <= 0"] = "not judged", "outside the declared range"
        for col, part in unjudged.items():  # a column judged only in part says what is left out
            if part:
                notes[col] = "; ".join(filter(None, (notes.get(col), f"{', '.join(part)} not judged")))
        if profile(caps.profile).fifo_ties and behaviour.get("same-tick order", "first in").startswith("ran"):
            cells["same-tick order"] = "FAIL"  # even when an earlier symptom was the primary one
        if behaviour.get("delay <= 0", "").startswith("did not run"):
            cells["delay <= 0"] = "FAIL"  # its primary symptom (a lost task) marks late bound too
        failed_seeds = sum(1 for f in fails if f.startswith("timer seed"))
        if failed_seeds > MAX_SHRUNK:
            fails.append(f"(campaign: {failed_seeds} of {schedules} seeds failed; "
                         f"the first {MAX_SHRUNK} were shrunk and saved)")
        return Row(name, hello.version, "virtual", caps.profile, cells, notes,
                   [p for p in PROFILE_NAMES if satisfied[p]], fails, cxs, n_runs, n_ops, time.perf_counter() - t0)
    finally:
        adapter.close()


def realtime_row(name: str, *, runs: int, tasks: int, slack_ms: int, cx_dir: Path | None) -> Row:
    from wheelspec.conformance import realtime as rt

    t0 = time.perf_counter()
    try:
        impl, tick = RT_TICK.get(name, (name, 1))
        adapter = rt.resolve(impl)
    except UserError as e:
        cells = {c: "error" for c in COLUMNS}
        return Row(name, "", "real-time", "?", cells, {}, [], [f"adapter: {e}"], [])
    scheds = [rt.generate(k, tasks=tasks, slack_ms=slack_ms, tick_ms=tick) for k in range(runs)]
    out_dir = None if cx_dir is None else cx_dir / impl_dirname(name)
    try:
        if out_dir is not None:  # where run_schedules saves a failing schedule: refused if not ours
            for s in scheds:
                files.claim(out_dir / f"{adapter.name}-{s.name}.json")
    except UserError:
        adapter.close()
        raise  # a user's file in the way stops the matrix (one line, exit 2), not an error row
    try:
        rep = rt.run_schedules(adapter, scheds, slack_ms=slack_ms, out_dir=out_dir)
    except UserError as e:  # the adapter hung, crashed or broke the protocol mid-run
        return Row(name, "", "real-time", "?", {c: "error" for c in COLUMNS}, {}, [], [f"adapter: {e}"], [])
    finally:
        adapter.close()
    for c in rep.counterexamples:
        files.mark_schedule(Path(c))
    status = rep.prop_status()
    col_of = properties.columns_by_property(properties.REALTIME)
    cells = {c: "n/a" for c in COLUMNS}  # a column no real-time property shows
    cells.update({col_of[p]: ("FAIL" if s == "fail" else s) for p, s in status.items()})
    late = rt.percentiles(rep.lateness_us)
    nonpos = rt.percentiles([x for v in rep.verdicts for x in v.nonpositive_us])
    notes = {}
    if late.get("n"):
        notes["early bound"] = f"min fire - deadline {late['min']:.3f} ms"
        notes["late bound"] = f"p50 {late['p50']:.2f} / p99 {late['p99']:.2f} / max {late['max']:.2f} ms"
    if nonpos.get("n"):
        notes["delay <= 0"] = f"runs {nonpos['p50']:.2f} ms (p50) after the add"
    if status["order"] == "pass":
        notes["same-tick order"] = "bursts ran in add order"
    if status["huge-delay"] == "pass":
        notes["huge delay"] = "2^40-1 and 2^63-1 ms accepted, never fired"
    fails = [f"{v.schedule.name} -> [{f.prop}] {f.message}" for v in rep.verdicts for f in v.failures]
    satisfied = [rep.profile] if rep.ok else []
    label = rep.name if tick == 1 else f"{rep.name} (tick {tick} ms)"
    return Row(label, rep.version, "real-time", rep.profile, cells, notes, satisfied, fails, rep.counterexamples,
               len(rep.verdicts), sum(len(s.ops) for s in scheds), time.perf_counter() - t0, late,
               [x / 1000 for x in rep.lateness_us])


# ------------------------------------------------------------------ output ---------------------
def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        import twisted
        out["twisted"] = twisted.__version__
    except ImportError:
        out["twisted"] = "not installed"
    from wheelspec import __version__
    out["wheelspec"] = __version__
    return out
