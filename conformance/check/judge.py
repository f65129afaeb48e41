"""Judge a run: by the profile the implementation claims, against an oracle, and against a
scenario's expected outcomes.

Three independent judgements, all reported as :class:`~wheelspec.spec.findings.Finding` located
at an operation (property, operation index, one-line message; the property names are registered
in :mod:`wheelspec.spec.properties`, judge ``run``):

1. **Profile** -- the history checker (:func:`wheelspec.spec.checker.check_history`) under the
   claimed profile (``kafka`` with the implementation's tick, ``strict``, ``strict-gt``).  The
   ``tryComplete`` call pattern (``try-complete-calls``) is judged only for an implementation that
   reports its calls (``capabilities.reports_try_complete``, protocol 2); for any other purgatory
   it is "not judged" (:func:`not_judged`).
2. **Oracle** (differential) -- the same operations run on the reference (:mod:`.oracle`):

   * an implementation claiming ``kafka`` with a tick and a wheel size is a Kafka-faithful wheel:
     it must produce *identical* events, request by request, to the reference configured alike
     (including the order of fires inside one advance);
   * ``strict-gt`` is Kafka's MockTimer, whose order among equal expirations is unspecified: per
     request, the same result and the same *multiset* of caused events as the reference's MockTimer;
   * otherwise (``strict``, or ``kafka`` without a wheel) no engine pins the order or the moment a
     delay <= 0 task runs, so the oracle compares only which requests are refused (a refusal of a
     valid request, or acceptance of one outside wheelspec's ranges, is a failure) and leaves the
     rest to the profile's rules;
   * an implementation declaring a granularity (``capabilities.lateness_ms`` / ``earliness_ms``)
     fires at other advances than the reference by design, so it too is compared on refusals
     only, whatever its profile: when each task fires is judged by the history checker inside
     the declared window (property ``granularity``), and every result by the profile's rules.

   The reference speaks the implementation's protocol version (under version 1 it refuses a cancel
   of a task never added, under version 2 it answers false) and reports its ``tryComplete`` calls
   iff the implementation does.  It shows the executor-race outcome the implementation declares
   (``capabilities.executor_order``); for ``either`` each advance's purge check comes where the
   implementation's came (:func:`purge_points`), and the history checker judges the order itself
   (property ``executor-order``).

   A request outside wheelspec's ranges (:func:`out_of_range`) that the implementation accepts is
   a finding of its own property, ``ranges``, not of the oracle: the range contract is judged
   apart from the semantics (:func:`judge_schedule` judges the rest of a
   campaign schedule without those requests).  A request inside wheelspec's ranges that the
   implementation refuses outside the range it declares (``capabilities.ranges`` as an object)
   is no finding and must change nothing: the oracle is the reference's run without it
   (:func:`declared_oracle`), and the declaration is one ``ranges`` finding per report
   (:func:`declared_range_finding`).
3. **Expectations** -- a scenario's per-step expected outcomes (:mod:`.corpus`).  Under a
   declared granularity the expectations that pin when a timer task fires (``fired``,
   ``fired_set``) and the results that follow from it (``cancel``'s pending, ``size``) are not
   compared (:func:`within_granularity`): the history checker judges those steps against the
   declared window; refusals, ``now``, an ``add``'s expiration and every purgatory expectation are.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config, DeclaredRanges, Response
from wheelspec.conformance.check.compiled_oracle import CompiledRun
from wheelspec.conformance.check.narrow import narrow, narrow_config, out_of_range
from wheelspec.conformance.check.oracle import oracle_mode, oracle_run, purge_points
from wheelspec.conformance.check.runner import Run, RunnerBug, Step, run_ops
from wheelspec.spec import events as ev
from wheelspec.spec import limits, ops, properties, show
from wheelspec.spec.findings import Finding
from wheelspec.spec.profiles import (
    EITHER_ORDER,
    Profile,
    behaviour,
    profile,
)


def claimed_profile(caps: Capabilities, config: Config) -> Profile:
    eff = caps.effective(config)
    return profile(caps.profile, tick=eff.tick_ms if behaviour(caps.profile).uses_tick else 1,
                   executor_order=caps.executor_order, granularity=caps.granularity())


# ----------------------------------------------------------------- 1. profile ------------------
def profile_failures(run: Run, prof: Profile, *, reports_tries: bool = False,
                     minimise: bool = True) -> list[Finding]:
    """The history checker under ``prof``; violations mapped back to operations.
    ``reports_tries``: the implementation reports its ``tryComplete`` calls, whose pattern is then
    judged (``try-complete-calls``); otherwise any it sent are ignored.  ``minimise`` False skips
    the Z3 confirmation of each violation (the same properties fail; each finding's step is then
    the fast path's, not the unsat core's): for shrinking, which asks only which properties fail."""
    from wheelspec.spec.checker import check_history  # the one line that picks the checker

    verdict = check_history(run.history, prof, stop_at_first=False, reports_tries=reports_tries,
                            minimise=minimise)
    out = []
    for v in verdict.violations:
        idx = [i for i in v.indices if 0 <= i < len(run.event_step)]
        step = max(run.event_step[i] for i in idx) if idx else None
        out.append(Finding.at_step(v.prop, step, v.message))
    return out


# ------------------------------------------------------------- not judged ----------------------
#: operation -> the property that judges its result (declaring it unobservable leaves the result
#: unjudged: the adapter cannot read it from the implementation)
RESULT_PROPERTY: dict[type, str] = {
    ops.CancelTask: "cancel-result", ops.Size: "size", ops.Watch: "watch-result",
    ops.ForceComplete: "force-result", ops.CheckAndComplete: "check-count",
    ops.CancelForKey: "cancel-for-key-result", ops.NumDelayed: "num-delayed", ops.Resubmit: "watch-result",
}

#: the property only an implementation reporting its ``tryComplete`` calls can be judged on
TRY_COMPLETE_PROPERTY = "try-complete-calls"


def not_judged(caps: Capabilities) -> tuple[str, ...]:
    """What the reports show as "not judged" for an implementation (``caps.unobservable``,
    ``ranges`` for one declaring ``ranges: unbounded``, and ``try-complete-calls`` for a purgatory
    that does not report its ``tryComplete`` calls)."""
    out = tuple(caps.unobservable) + (("ranges",) if caps.ranges == "unbounded" else ())
    if caps.purgatory and not caps.reports_try_complete and TRY_COMPLETE_PROPERTY not in out:
        out += (TRY_COMPLETE_PROPERTY,)
    return out


def _unobserved_refusal(op: ops.Op, r: Any, unobserved: frozenset[str]) -> bool:
    """A request refused ``unsupported`` because its result is unobservable (a library without
    a count answers ``size`` so): nothing to judge."""
    return (r.error is not None and r.error[0] == "unsupported"
            and RESULT_PROPERTY.get(type(op)) in unobserved)


def owned_steps(run: Run, caps: Capabilities) -> frozenset[int]:
    """Steps whose outcome is the adapter's, not the implementation's: requests about the inputs
    the adapter owns (``task-ids``, ``clock`` in ``caps.unobservable``).  ``task-ids``: a task id
    outside [0, MAX_ID], or a cancel of a task no accepted add named; ``clock``: an advance before
    the clock or past MAX_TIME_MS.  Their refusal (or acceptance) is not judged."""
    ids, clock = "task-ids" in caps.unobservable, "clock" in caps.unobservable
    if not (ids or clock):
        return frozenset()
    out: set[int] = set()
    added: set[int] = set()
    now = caps.effective(run.config).start_ms
    for i, step in enumerate(run.steps):
        op, ok = step.op, step.response.error is None
        task = getattr(op, "task", None)
        if ids and task is not None and (not 0 <= task <= limits.MAX_ID
                                         or (isinstance(op, ops.CancelTask) and task not in added)):
            out.add(i)
        elif clock and isinstance(op, ops.AdvanceTo) and (op.time < now or op.time > limits.MAX_TIME_MS):
            out.add(i)
        if ok and isinstance(op, ops.AddTask):
            added.add(op.task)
        if ok and isinstance(op, ops.AdvanceTo):
            now = max(now, op.time)
    return frozenset(out)


# ------------------------------------------------------------ declared range -----------------
def declared_out(op: ops.Op, caps: Capabilities) -> bool:
    """Is ``op`` inside wheelspec's ranges but outside the range the implementation declares
    (``capabilities.ranges`` as an object: a delay of an add or a watch, an advance's target)?
    Its refusal is no finding (:func:`declared_oracle`): the declaration is judged once
    (:func:`declared_range_finding`)."""
    declared = caps.declared_ranges()
    if declared is None or out_of_range(op):
        return False
    if isinstance(op, ops.AddTask | ops.Watch):
        return not declared.admits("delay", op.delay)
    if isinstance(op, ops.AdvanceTo):
        return not declared.admits("time", op.time)
    return False


def declared_refusals(run: Run, caps: Capabilities) -> list[int]:
    """The steps of ``run`` whose request the implementation refused outside its declared range."""
    if caps.declared_ranges() is None:
        return []
    return [i for i, s in enumerate(run.steps) if s.response.error is not None and declared_out(s.op, caps)]


def declared_oracle(run: Run, caps: Capabilities, refused: frozenset[int], probe: Any = None) -> Run:
    """The oracle of ``run`` for an implementation that refused its steps ``refused`` outside the
    range it declares: the reference runs the other requests (it would accept those), and each
    refused one is spliced in where it was, as a refusal that changes nothing.  So the refusals
    are no finding, and what follows each must be the reference's state without it (a refusal
    that lost a pending task is still found)."""
    kept = [s.op for i, s in enumerate(run.steps) if i not in refused]
    points = None
    if caps.executor_order == EITHER_ORDER:
        points = [p for i, p in enumerate(purge_points(run)) if i not in refused]
    base = oracle_run(caps, run.config, kept, probe, points, engine="reference")  # spliced: not confirmable
    rest = iter(base.steps)
    steps: list[Step] = []
    now = caps.effective(run.config).start_ms
    for i, step in enumerate(run.steps):
        if i in refused:
            steps.append(Step(step.op, Response(now, error=("range", "outside the declared range"))))
        else:
            steps.append(next(rest))
            now = steps[-1].response.now
    return Run(base.config, steps, base.history, base.event_step)


def declared_range_finding(caps: Capabilities) -> Finding | None:
    """The one ``ranges`` finding of an implementation that declares a range narrower than
    wheelspec's (Kafka's usable range, ``spec/limits.py``), naming both; None if it declares none
    that is."""
    declared = caps.declared_ranges()
    if declared is None or not declared.narrower():
        return None
    kafka = DeclaredRanges().describe(declared.narrower())
    return Finding("ranges", f"declares {declared.describe()}; Kafka's range (spec/limits.py) is {kafka}: "
                             "the rest is judged inside the declared range")


def oracle_failures(run: Run, oracle: Run, mode: str, *, skip: frozenset[int] = frozenset(),
                    unobserved: frozenset[str] = frozenset()) -> list[Finding]:
    """The first request where ``run`` and the oracle disagree (later ones follow from it).
    Steps in ``skip`` (:func:`owned_steps`) and results of :data:`RESULT_PROPERTY` in
    ``unobserved`` are not compared."""
    for i, (got, want) in enumerate(zip(run.steps, oracle.steps)):
        g, w = got.response, want.response
        if i in skip or _unobserved_refusal(got.op, g, unobserved):
            continue
        if (g.error is None) != (w.error is None):
            if g.error is None and out_of_range(got.op):
                return [Finding.at_step("ranges", i, f"{show.step(i, got.op)} is outside wheelspec's ranges but was "
                                                     f"accepted ({show.response(g)}); the reference refuses it: "
                                                     f"{show.response(w)}")]
            if w.error is None:
                return [Finding.at_step("refused-valid", i, f"{show.step(i, got.op)} was refused ({show.response(g)}); "
                                                            f"the reference accepts it: {show.response(w)}")]
            return [Finding.at_step("accepted-invalid", i, f"{show.step(i, got.op)} was accepted ({show.response(g)}); "
                                                           f"the reference refuses it: {show.response(w)}")]
        if g.error is not None or mode == "refusals":
            continue
        same_result = g.result == w.result or RESULT_PROPERTY.get(type(got.op)) in unobserved
        if mode == "exact":
            same = g.events == w.events and same_result and g.now == w.now
        else:
            same = Counter(g.events) == Counter(w.events) and same_result and g.now == w.now
        if not same:
            what = "events differ from" if mode == "exact" else "events (as a multiset) differ from"
            return [Finding.at_step("oracle", i, f"{show.step(i, got.op)}: {what} the reference's: got "
                                                 f"{show.response(g)}, reference {show.response(w)}")]
    return []


# ------------------------------------------------------------- 3. expectations ------------------
EXPECT_KEYS = ("result", "error", "fired", "fired_set", "completed", "expired", "purged", "now", "tried")
#: expectations about what only an implementation reporting its ``tryComplete`` calls shows
TRY_EXPECT_KEYS = ("tried",)


def expectation_failures(run: Run, expects: Sequence[dict[str, Any] | None], *,
                         skip: frozenset[int] = frozenset(),
                         unobserved: frozenset[str] = frozenset()) -> list[Finding]:
    """Check per-step expectations (see :mod:`.corpus` for the keys); steps in ``skip`` and
    results of :data:`RESULT_PROPERTY` in ``unobserved`` are not judged, nor ``tried`` (the
    request's ``tryComplete`` calls, ``[[op, result], ...]`` in order) when
    :data:`TRY_COMPLETE_PROPERTY` is."""
    out: list[Finding] = []
    for i, (step, exp) in enumerate(zip(run.steps, expects)):
        if not exp or i in skip or _unobserved_refusal(step.op, step.response, unobserved):
            continue
        if RESULT_PROPERTY.get(type(step.op)) in unobserved:
            exp = {k: v for k, v in exp.items() if k != "result"}
        if TRY_COMPLETE_PROPERTY in unobserved:
            exp = {k: v for k, v in exp.items() if k not in TRY_EXPECT_KEYS}
        r = step.response
        where = show.step(i, step.op)
        if "error" in exp:
            want = exp["error"]
            if r.error is None and out_of_range(step.op):  # the range contract is its own property
                out.append(Finding.at_step("ranges", i, f"{where}: outside wheelspec's ranges, expected an error "
                                                        f"{want!r}, got {show.response(r)}"))
            elif r.error is None or (want is not True and r.error[0] != want):
                out.append(Finding.at_step("expected", i,
                                           f"{where}: expected an error {want!r}, got {show.response(r)}"))
            continue
        if r.error is not None:
            out.append(Finding.at_step("expected", i, f"{where}: expected success, got {show.response(r)}"))
            continue
        got: dict[str, Any] = {
            "result": list(r.result) if isinstance(r.result, tuple) else r.result,
            "fired": [e.task for e in r.events if isinstance(e, ev.Fire)],
            "completed": [[e.op, e.via] for e in r.events if isinstance(e, ev.Complete)],
            "expired": [e.op for e in r.events if isinstance(e, ev.Expire)],
            "purged": next((e.purged for e in r.events if isinstance(e, ev.Purge)), None),
            "now": r.now,
            "tried": [[e.op, e.result] for e in r.events if isinstance(e, ev.TryComplete)],
        }
        got["fired_set"] = sorted(got["fired"])
        for key in EXPECT_KEYS:
            if key not in exp or key == "error":
                continue
            want = exp[key]
            if key == "fired_set":
                want = sorted(want)
            if got[key] != want:
                out.append(Finding.at_step("expected", i, f"{where}: expected {key} {show.json_short(want)}, "
                                                          f"got {show.json_short(got[key])}"))
    return out


# ------------------------------------------------------------- declared granularity -------------
#: expectations a declared granularity leaves to the history checker: when a timer task fires
GRANULAR_KEYS = ("fired", "fired_set")
#: operations whose expected ``result`` follows from when timer tasks fire (pending, the count)
GRANULAR_RESULTS: tuple[type, ...] = (ops.CancelTask, ops.Size)


def within_granularity(operations: Sequence[ops.Op],
                       expects: Sequence[dict[str, Any] | None]) -> list[dict[str, Any] | None]:
    """A scenario's expectations for an implementation declaring a granularity: without the
    keys that pin when a timer task fires (:data:`GRANULAR_KEYS`) and the results that follow from
    it (:data:`GRANULAR_RESULTS`).  A scenario's times are exact (Kafka's wheel at tick 1 fires a
    task at the advance that reaches its expiration); a timer declaring ``lateness_ms`` may fire it
    at any advance up to the end of its declared window, so those steps are judged by the history
    checker (property ``granularity``), never against the exact time."""
    out: list[dict[str, Any] | None] = []
    for op, e in zip(operations, expects):
        if e:
            drop = GRANULAR_KEYS + (("result",) if isinstance(op, GRANULAR_RESULTS) else ())
            e = {k: v for k, v in e.items() if k not in drop} or None
        out.append(e)
    return out


def granularity_note(caps: Capabilities) -> str | None:
    """What a scenario's report says of an implementation declaring a granularity (None: none)."""
    g = caps.granularity()
    if not g:
        return None
    return (f"declared granularity ({g.describe()}): when tasks fire is judged by property granularity, "
            "not against the scenario's fired/fired_set, cancel and size expectations")


# ------------------------------------------------------------------ together -------------------
def judge(run: Run, caps: Capabilities, *, expects: Sequence[dict[str, Any] | None] | None = None,
          oracle: Run | None = None, probe: Any = None, minimise: bool = True) -> list[Finding]:
    """All findings for ``run``: profile, oracle (computed if not given, watched by ``probe``),
    expectations.  ``minimise``: as :func:`profile_failures` says."""
    prof = claimed_profile(caps, run.config)
    unobserved = frozenset(not_judged(caps))
    skip = owned_steps(run, caps)
    failures = profile_failures(run, prof, reports_tries=caps.reports_try_complete, minimise=minimise)
    refused = frozenset(declared_refusals(run, caps))
    if refused:  # refused outside the declared range: the reference never sees them
        oracle = declared_oracle(run, caps, refused, probe if oracle is None else None)
    if oracle is None:
        points = purge_points(run) if caps.executor_order == EITHER_ORDER else None
        oracle = oracle_run(caps, run.config, [s.op for s in run.steps], probe, points)
    mode = oracle_mode(caps)
    if isinstance(oracle, CompiledRun) and oracle.agrees(run, mode):
        found = []  # every request answered as the compiled oracle answers it: nothing to compare
    else:
        found = oracle_failures(run, oracle, mode, skip=skip, unobserved=unobserved)
    if found and isinstance(oracle, CompiledRun):
        found = confirmed(found, run, caps, skip=skip, unobserved=unobserved)
    failures += found
    if expects is not None:
        if refused:  # what a scenario expects from the first of them on assumed it accepted
            expects = list(expects[:min(refused)]) + [None] * (len(expects) - min(refused))
        if caps.granularity():
            expects = within_granularity([s.op for s in run.steps], expects)
        failures += expectation_failures(run, expects, skip=skip, unobserved=unobserved)
    # what the adapter cannot observe is "not judged": never a failure, and never a pass either
    # (the reports list caps.unobservable as not judged)
    return [f for f in failures if f.prop not in unobserved]


def confirmed(found: list[Finding], run: Run, caps: Capabilities, *, skip: frozenset[int] = frozenset(),
              unobserved: frozenset[str] = frozenset()) -> list[Finding]:
    """``found``, what the compiled oracle's run (:class:`.compiled_oracle.CompiledRun`) showed
    wrong in ``run``, once the reference has shown the same: a finding is reported only if the
    reference itself makes it.  Two oracles that disagree are a bug of wheelspec's, never a
    verdict: :class:`~.runner.RunnerBug`, naming both findings."""
    ref = oracle_run(caps, run.config, [s.op for s in run.steps], engine="reference")
    again = oracle_failures(run, ref, oracle_mode(caps), skip=skip, unobserved=unobserved)
    if again != found:
        mine = found[0].message if found else "nothing"
        theirs = again[0].message if again else "nothing"
        raise RunnerBug(f"wheelspec's compiled oracle and the reference disagree on a schedule of {len(run.steps)} "
                        f"requests (config {run.config}): against the compiled oracle: {mine}; against the "
                        f"reference: {theirs}; please report this (`--oracle reference` judges without it)")
    return again


Judge = Callable[[Run], list[Finding]]

#: runner-level properties, after the checker's (a semantic symptom explains more than a diff)
RUNNER_PROPS = properties.names(properties.RUN)


def primary(failures: Sequence[Finding]) -> Finding:
    """The failure a counterexample is shrunk for: the most specific symptom.  The checker's
    properties come first, in the checker's order (early fire, double fire, fire after cancel,
    lost task, ... before size), ``well-formed`` after them, the oracle's diff last."""
    checker = properties.names(properties.HISTORY)
    order = [p for p in checker if p != "well-formed"] + ["well-formed", *RUNNER_PROPS]

    def rank(f: Finding) -> int:
        return order.index(f.prop) if f.prop in order else len(order)

    return min(failures, key=rank)


#: the prefix of a finding judged on a schedule without its out-of-range requests
WITHOUT_OUT_OF_RANGE = "(judged without the out-of-range requests) "


def judge_run(adapter: Any, caps: Capabilities, result: Run, *, coverage: bool = False,
              oracle: Run | None = None, probe: Any = None,
              minimise: bool = True) -> tuple[list[Finding], Counter[str]]:
    """The findings of a campaign run, and (if asked) the semantic situations it exercised.

    The range contract is judged apart (property ``ranges``): when the implementation accepted an
    out-of-range request, the state it then holds is no longer the reference's, so every other
    property is judged on a fresh run of the schedule without the out-of-range requests (its
    findings say so).  A timer without range checks thus fails ``ranges`` and only ``ranges``.

    ``oracle`` (with ``probe``, the :class:`~.coverage.Probe` that watched it): the oracle's run of
    the same schedule, computed ahead (:func:`.campaign.run_seed_range`, while a pipelined adapter
    works)."""
    from wheelspec.conformance.check.coverage import Probe

    if oracle is None:
        probe = Probe() if coverage else None
    failures = judge(result, caps, probe=probe, oracle=oracle, minimise=minimise)
    if any(f.prop == "ranges" for f in failures):
        rest = [s.op for s in result.steps if not out_of_range(s.op)]
        again = judge(run_ops(adapter, result.config, rest), caps, minimise=minimise)
        failures = [f for f in failures if f.prop == "ranges"] + [
            dataclasses.replace(f, message=WITHOUT_OUT_OF_RANGE + f.message) for f in again]
    return failures, (probe.counts if probe is not None else Counter())


def judge_schedule(adapter: Any, caps: Capabilities, cfg: Config, schedule: list[ops.Op], *,
                   minimise: bool = True) -> list[Finding]:
    """Run ``schedule`` (narrowed to the implementation: :func:`.narrow.narrow`,
    :func:`.narrow.narrow_config`) and judge it (``minimise``: as :func:`profile_failures` says)."""
    return judge_run(adapter, caps, run_ops(adapter, narrow_config(cfg, caps), narrow(schedule, caps)),
                     minimise=minimise)[0]
