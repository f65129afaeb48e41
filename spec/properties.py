"""The property registry: every property name any judge of the project reports, once.

Each :class:`Property` has the name reports use (``Finding.prop``, JUnit ``type``, JSON ``prop``,
a saved counterexample's ``origin.prop``: names never change), the judge that defines it, one line
saying what it asserts, and the Kafka rule or ``SEMANTICS.md`` section it comes from.  A property
judged on another clock or on concurrent threads declares the history properties it restates
(``same_as``): the real-time names are such aliases.  The conformance matrix's columns are
declared here too, each with the properties it shows (:data:`MATRIX_COLUMNS`).

The judges, and the names each may report (:func:`reported_by`):

==================== ============================================================================
judge                what it judges, and where it lives
==================== ============================================================================
:data:`HISTORY`      one sequential history under a profile: :func:`.checker.check_history`
:data:`RUN`          a run of operations against an implementation: the history checker's
                     properties mapped to operations, plus the oracle, the expectations of a
                     scenario and the refusals (``conformance.check.judge``)
:data:`TRACE`        the set-based trace analysis (``wheelspec analyze``): the history properties
                     that need no per-row state (``conformance.traces.local.judge_table``)
:data:`REALTIME`     a wall-clock run of a timer without a virtual clock
                     (``conformance.realtime.judge.judge_outcome``)
:data:`CONCURRENT`   concurrent runs: interleavings of the step model
                     (``reference.interleave.check_interleaving``, ``check_quiescent``) and real
                     threads on a facade (``conformance.concurrency.hammer.check_event_properties``)
==================== ============================================================================

Every place a property lives is listed too: the *judging forms* (:data:`JUDGING_FORMS`: the
history checker, its Z3 form, the local and Spark trace analyses, the real-time judge, the
concurrent forms, the linearizability model, the conformance judge) and, per property
(:data:`JUDGED_BY`), how each judges it or why it cannot (:class:`NotJudged`); the *engine forms*
(:data:`ENGINE_FORMS`) and the ones implementing each property's behaviour (:data:`ENGINES`).
Each property's proof status is derived from the proofs' ``Lemma.proves`` by spec/proof_status.py.
``tests/test_property_registry.py`` resolves every entry point and requires an entry for every
form; ``tests/test_judging_forms.py`` feeds the same histories to every judging form and requires
the verdicts the entries promise.

Why some properties exist twice (a history form and another form): the history checker judges a
*sequential* history, where each request's caused events sit in its window and ``Expire`` comes
right after its ``Complete``; a concurrent log interleaves threads, so the concurrent forms keep
only what holds there.  The real-time judge measures microseconds against a declared resolution
and a slack for a loaded machine, which the history checker's exact clock has no notion of.
"""

from __future__ import annotations

import dataclasses

#: the judges (see the module doc)
HISTORY, RUN, TRACE, REALTIME, CONCURRENT = "history", "run", "trace", "realtime", "concurrent"
JUDGES = (HISTORY, RUN, TRACE, REALTIME, CONCURRENT)


@dataclasses.dataclass(frozen=True)
class Property:
    name: str
    #: the judge that defines it (it may be reported by others too: :func:`reported_by`)
    judge: str
    #: what it asserts, in one line
    summary: str
    #: the Kafka rule / ``SEMANTICS.md`` section it comes from
    source: str
    #: for a real-time or concurrent property: the history properties it restates
    same_as: tuple[str, ...] = ()


def _p(judge: str, name: str, summary: str, source: str, same_as: tuple[str, ...] = ()) -> Property:
    return Property(name, judge, summary, source, same_as)


#: every property, grouped by judge, each group in the order its judge reports and ranks them
PROPERTIES: tuple[Property, ...] = (
    # -- the history checker (spec/checker.py's docstring states each precisely) --
    _p(HISTORY, "well-formed", "the clock never goes back, exp = now + delay, ids name what was added or watched",
       "SEMANTICS.md Events (ordering rule), Clock"),
    _p(HISTORY, "no-early-fire", "no task fires before its profile's earliest time",
       "SEMANTICS.md Firing rule (F1), Profiles"),
    _p(HISTORY, "late-fire", "with a lateness bound: no fire later than exp + lateness_ms",
       "SEMANTICS.md Profiles (real-time mode)"),
    # A declared granularity (capabilities lateness_ms / earliness_ms) moves a timer task's
    # "not fired by its window's end" and, with earliness, its "fired before its window" here:
    # a coarse timer's documented limit is judged apart from the rest, once per history.
    _p(HISTORY, "granularity",
       "with a declared granularity: every timer task fires inside its profile's window widened by the "
       "declared earliness_ms / lateness_ms (reported once per history)",
       "SEMANTICS.md Profiles (declared granularity)"),
    _p(HISTORY, "fire-once", "a fire matches the task's live schedule and each schedule fires at most once",
       "SEMANTICS.md Cancel (re-add supersedes: TimerTask.setTimerTaskEntry), Firing rule"),
    _p(HISTORY, "fire-unknown-task", "no fire of a task id that was never added (before the fire)",
       "SEMANTICS.md Firing rule (only an added task's entry can fire)"),
    _p(HISTORY, "no-fire-after-cancel", "no fire of a schedule after a cancel of its task",
       "SEMANTICS.md Cancel (TimerTask.cancel)"),
    _p(HISTORY, "no-lost-task", "after Advance(t) every schedule that must have fired by t has fired",
       "SEMANTICS.md Firing rule (F2), Profiles"),
    _p(HISTORY, "cancel-result", "Cancel.pending is true iff the task had a live schedule",
       "SEMANTICS.md Cancel"),
    _p(HISTORY, "size", "size() is the number of pending tasks (strict-gt: MockTimer's queue length)",
       "SEMANTICS.md Size, Profiles (MockTimer)"),
    _p(HISTORY, "complete-once", "at most one Complete per operation",
       "SEMANTICS.md Purgatory (exactly once: DelayedOperation.forceComplete's completed flag)"),
    _p(HISTORY, "complete-context", "a Complete happens inside a request that can cause it",
       "SEMANTICS.md Purgatory, Events (ordering rule)"),
    _p(HISTORY, "expire-rule", "Expire comes right after its Complete via=expire, never for a cancelled timer entry",
       "SEMANTICS.md Purgatory (DelayedOperation.run: forceComplete, then onExpiration)"),
    _p(HISTORY, "no-early-expire", "an operation does not expire before its deadline's firing window",
       "SEMANTICS.md Purgatory, Firing rule (the timeout is a timer task)"),
    _p(HISTORY, "no-lost-operation", "after Advance(t) every operation whose deadline must have fired has completed",
       "SEMANTICS.md Purgatory, Firing rule (F2)"),
    _p(HISTORY, "watch-result", "tryCompleteElseWatch returns true iff it completed the operation",
       "SEMANTICS.md Purgatory (tryCompleteElseWatch)"),
    _p(HISTORY, "force-result", "forceComplete returns true iff it completed the operation",
       "SEMANTICS.md Purgatory (forceComplete)"),
    _p(HISTORY, "check-count", "checkAndComplete returns how many operations it completed",
       "SEMANTICS.md Purgatory (checkAndComplete)"),
    _p(HISTORY, "no-lost-wakeup",
       "after checkAndComplete(key) no completable operation watching key is left uncompleted",
       "SEMANTICS.md Purgatory (KAFKA-1952, 2160/2253, 3994, 8334 ...)"),
    _p(HISTORY, "cancel-for-key-result", "cancelForKey returns exactly the uncompleted operations watching the key",
       "SEMANTICS.md Purgatory (cancelForKey)"),
    _p(HISTORY, "num-delayed", "numDelayed() and Purge.delayed equal the purgatory timer's size",
       "SEMANTICS.md Size, Purge"),
    _p(HISTORY, "executor-order",
       "an advance's Purge sits among its expirations as the declared executor order allows",
       "SEMANTICS.md Purge (the executor race: SystemTimer's executor vs the reaper's purge check)"),
    _p(HISTORY, "try-complete-calls",
       "reported tryComplete calls: twice in tryCompleteElseWatch unless the first completes, once per listed "
       "uncompleted occurrence in checkAndComplete, never on a completed operation, nowhere else",
       "SEMANTICS.md tryComplete calls (DelayedOperation.safeTryCompleteOrElse, Watchers.tryCompleteWatched; "
       "KAFKA-1952, KAFKA-17848)"),
    # -- the conformance judge, beyond the history checker's --
    _p(RUN, "expected", "a scenario step's response matches its expected outcome",
       "the scenario file (conformance/scenarios/, each citing its Kafka test or rule)"),
    _p(RUN, "refused-valid", "a request inside wheelspec's ranges is accepted",
       "SEMANTICS.md Ranges"),
    _p(RUN, "accepted-invalid", "a request outside wheelspec's ranges is refused",
       "SEMANTICS.md Ranges"),
    _p(RUN, "oracle", "the events match the reference configured alike (exactly, or as a multiset for MockTimer)",
       "SEMANTICS.md Placement, Ordering (O1-O4)"),
    _p(RUN, "responds", "every request is answered within its timeout and the adapter stays alive (no hang, no crash)",
       "docs/guides/PROTOCOL.md Transport (a response for every request), Protocol errors (timeouts)"),
    # The range contract, judged apart: a timer that accepts any delay can still satisfy its
    # profile ("strict: pass, ranges: FAIL"); an adapter declaring ``ranges: unbounded`` is not
    # judged on it.  A declared range narrower than wheelspec's (delays, clock readings) is one
    # finding of it per report, and the rest is judged inside the declared range.  Ranked last: a
    # semantic symptom in the same run explains more.
    _p(RUN, "ranges", "a request outside wheelspec's ranges (delay, clock reading, id) is refused and changes "
       "nothing; a declared range is not narrower than wheelspec's", "SEMANTICS.md Ranges (refuse, never clamp)"),
    # -- the real-time judge (wall clock, microseconds, a declared resolution and a slack) --
    _p(REALTIME, "early", "no fire before exp minus the declared early bound (kafka: tick - 1 ms)",
       "SEMANTICS.md Firing rule (F1), Profiles", ("no-early-fire",)),
    _p(REALTIME, "late", "every fire within resolution + slack after exp",
       "SEMANTICS.md Profiles (lateness)", ("late-fire", "no-lost-task")),
    _p(REALTIME, "exactly-once", "every schedule neither cancelled nor superseded fires once before the run ends",
       "SEMANTICS.md Firing rule, Cancel (re-add)", ("fire-once", "no-lost-task")),
    _p(REALTIME, "cancel",
       "a cancel that returned true is never followed by a fire; one that returned false found it fired",
       "SEMANTICS.md Cancel", ("no-fire-after-cancel", "cancel-result")),
    _p(REALTIME, "order", "tasks added together with one delay fire in add order",
       "SEMANTICS.md Ordering (O2)"),
    _p(REALTIME, "delay<=0", "a non-positive delay fires once, after its add, within the late bound",
       "SEMANTICS.md Firing rule (P4), Profiles (delay <= 0)"),
    _p(REALTIME, "huge-delay", "delays of 2^40-1 ms and Long.MAX ms are accepted and do not fire in the run",
       "SEMANTICS.md Ranges"),
    # -- concurrent runs: interleavings of the step model, real threads on a facade --
    _p(CONCURRENT, "exactly-once", "onComplete runs at most once per operation",
       "SEMANTICS.md Purgatory (exactly once; KAFKA-17848, 19312)", ("complete-once",)),
    _p(CONCURRENT, "expiration", "onExpiration only after the timer's own completion, never before the window",
       "SEMANTICS.md Purgatory (DelayedOperation.run), Firing rule (F1)", ("expire-rule", "no-early-expire")),
    _p(CONCURRENT, "lost-wakeup", "an operation made completable before a check of its key began is completed by then",
       "SEMANTICS.md Purgatory (KAFKA-1952, 2160/2253, 8334, 6653)", ("no-lost-wakeup",)),
    _p(CONCURRENT, "cancelled-fired", "no fire after a cancel returned, outside the documented race window",
       "SEMANTICS.md Cancel (cancel racing a flush, R1-R3)", ("no-fire-after-cancel",)),
    _p(CONCURRENT, "deadlock", "some unfinished thread can always take a step",
       "Kafka's lock order (KAFKA-3994, 6042)"),
    _p(CONCURRENT, "crash", "no exception inside the model (the JVM's NullPointerException)",
       "TimerTaskList.remove (KAFKA-2226)"),
    _p(CONCURRENT, "no-progress", "the run finishes within its step budget",
       "the deterministic scheduler's bound (reference/scheduler.py)"),
    _p(CONCURRENT, "structure", "at quiescence every bucket list and taskCounter agree",
       "SEMANTICS.md Buckets, Size"),
    _p(CONCURRENT, "timer", "at quiescence no completed operation keeps a live entry, every uncompleted one has one",
       "SEMANTICS.md Purgatory (forceComplete cancels the entry; tryCompleteElseWatch adds it)"),
    _p(CONCURRENT, "watched", "after a purge no completed operation is watched, every uncompleted one is on its keys",
       "SEMANTICS.md Purge, Purgatory (KAFKA-2160/2253)"),
    _p(CONCURRENT, "numDelayed", "numDelayed is at most the uncompleted operations plus cancelled-but-linked entries",
       "SEMANTICS.md Size, Cancel (R4: the documented over-count)"),
)

#: history properties the set-based trace analysis cannot judge (they need per-row state;
#: ``granularity`` needs a declared granularity, which a trace does not carry)
NOT_JUDGED_BY_TRACE = ("size", "num-delayed", "cancel-for-key-result", "complete-context", "executor-order",
                       "try-complete-calls", "granularity")


def names(judge: str) -> tuple[str, ...]:
    """The properties ``judge`` defines, in its order."""
    if judge not in JUDGES:
        raise ValueError(f"unknown judge {judge!r} (known: {', '.join(JUDGES)})")
    if judge == TRACE:
        return ()
    return tuple(p.name for p in PROPERTIES if p.judge == judge)


def reported_by(judge: str) -> tuple[str, ...]:
    """Every property name ``judge`` may report, in its order (the conformance judge reports the
    history checker's too; the trace analysis reports a subset of them)."""
    if judge == RUN:
        return names(HISTORY) + names(RUN)
    if judge == TRACE:
        return tuple(n for n in names(HISTORY) if n not in NOT_JUDGED_BY_TRACE)
    return names(judge)


def get(name: str, judge: str) -> Property:
    """The property ``name`` as ``judge`` reports it; ``KeyError`` if it does not."""
    if name in reported_by(judge):
        defining = HISTORY if judge in (RUN, TRACE) and name in names(HISTORY) else judge
        for p in PROPERTIES:
            if p.name == name and p.judge == defining:
                return p
    raise KeyError(f"{name!r} is not a property the {judge} judge reports")


def is_registered(name: str, judge: str | None = None) -> bool:
    """Does ``judge`` (or any judge) report a property called ``name``?"""
    return any(name in reported_by(j) for j in ((judge,) if judge is not None else JUDGES))


# ------------------------------------------------------------------ aliases: matrix columns -----
@dataclasses.dataclass(frozen=True)
class Column:
    """A column of the conformance matrix and the properties it shows, as ``(judge, name)``."""

    name: str
    shows: tuple[tuple[str, str], ...]


#: the matrix's property columns, in order (virtual-time rows fill the ``run`` / ``history`` ones,
#: real-time rows the ``realtime`` ones; ``expected`` failures are mapped by scenario name)
MATRIX_COLUMNS: tuple[Column, ...] = (
    Column("early bound", ((HISTORY, "no-early-fire"), (REALTIME, "early"))),
    Column("late bound", ((HISTORY, "late-fire"), (HISTORY, "no-lost-task"), (HISTORY, "granularity"),
                          (REALTIME, "late"))),
    Column("exactly once", ((HISTORY, "fire-once"), (HISTORY, "fire-unknown-task"), (REALTIME, "exactly-once"))),
    Column("cancel respected", ((HISTORY, "no-fire-after-cancel"), (HISTORY, "cancel-result"), (REALTIME, "cancel"))),
    Column("same-tick order", ((REALTIME, "order"),)),
    Column("delay <= 0", ((REALTIME, "delay<=0"),)),
    Column("huge delay", ((RUN, "ranges"), (RUN, "accepted-invalid"), (RUN, "refused-valid"),
                          (REALTIME, "huge-delay"))),
    # what a virtual-time history says of itself: the clock never goes back, an add's result is
    # now + delay, a fire names a task that was added (a real-time run stamps its own clock: n/a)
    Column("well-formed", ((HISTORY, "well-formed"),)),
)


def column_names() -> tuple[str, ...]:
    return tuple(c.name for c in MATRIX_COLUMNS)


def columns_by_property(*judges: str) -> dict[str, str]:
    """Property name -> the matrix column showing it, for properties defined by ``judges``."""
    return {name: c.name for c in MATRIX_COLUMNS for j, name in c.shows if j in judges}


# ------------------------------------------------------------------ forms: every place a rule lives -----
@dataclasses.dataclass(frozen=True)
class Form:
    """One place that encodes properties: a *judging* form decides whether a history or run keeps
    them, an *engine* form implements the behaviour they describe.  ``entries``: dotted paths of
    its entry points (``tests/test_property_registry.py`` resolves each, so a rename breaks a test,
    not a doc)."""

    name: str
    entries: tuple[str, ...]
    what: str


#: the judging forms, in the order the differential test (``tests/test_judging_forms.py``) lists them
JUDGING_FORMS: tuple[Form, ...] = (
    Form("checker", ("wheelspec.spec.checker.check_history",),
         "the history checker: one pass in plain Python over a sequential history"),
    Form("z3", ("wheelspec.spec.checker_z3.violated",),
         "the history checker's symbolic form: each property instance as Z3 constraints over its events"),
    Form("local", ("wheelspec.conformance.traces.local.judge_table",),
         "the set-based trace analysis (numpy segmented scans, pyarrow joins) over whole runs of a trace"),
    Form("spark", ("wheelspec.conformance.traces.spark.analyze_dataframe",
                   "wheelspec.conformance.traces.spark.judge_partition"),
         "the trace analysis on Spark: SQL aggregations and the set-based pass per partition of whole runs"),
    Form("realtime", ("wheelspec.conformance.realtime.judge.judge_outcome",),
         "the real-time judge: a wall-clock run of a timer, at its declared resolution with a slack"),
    Form("completions", ("wheelspec.spec.checker.check_completions",),
         "the completion rules of a concurrent log (interleavings of the step model, real threads on a facade)"),
    Form("interleavings", ("wheelspec.reference.interleave.check_interleaving",
                           "wheelspec.reference.interleave.check_quiescent"),
         "the step model's concurrent runs: call steps, the scheduler's reports, the state at quiescence"),
    Form("linearizability", ("wheelspec.spec.sequential_spec.step",
                             "wheelspec.conformance.concurrency.models.WHEELSPEC"),
         "the sequential specification of each task's and operation's calls, searched for a linearization"),
    Form("run", ("wheelspec.conformance.check.judge.judge",),
         "the conformance judge: a run of operations against an implementation (the history checker's "
         "properties mapped to operations, the oracle, a scenario's expectations, the refusals)"),
)

#: the engine forms: each implements the timer (and purgatory) behaviour the properties describe
ENGINE_FORMS: tuple[Form, ...] = (
    Form("reference", ("wheelspec.reference.system_timer.SystemTimer", "wheelspec.reference.mock_timer.MockTimer",
                       "wheelspec.reference.purgatory.DelayedOperationPurgatory"),
         "Kafka's classes, readable (reference/)"),
    Form("steps", ("wheelspec.reference.steps.simulation.StepSimulation",),
         "Kafka's classes split into atomic steps at its lock and CAS granularity (reference/steps/)"),
    Form("numba", ("wheelspec.optimized.timer.ArrayTimer", "wheelspec.optimized.mock_timer.ArrayMockTimer",
                   "wheelspec.optimized.purgatory.ArrayPurgatory"),
         "the numba kernels over arrays (optimized/)"),
    Form("app-timer", ("wheelspec.optimized.app_timer.WheelTimer", "wheelspec.optimized._apphot.CStage"),
         "the application timer over the kernels, its staging in C (optimized/app_timer.py, _apphot.c)"),
)


@dataclasses.dataclass(frozen=True)
class Judged:
    """A form judges the property under its own name ``as_name``.  ``same``: on every history it
    gives the history checker's verdict; else it restates the property more loosely, and a failure
    of ``as_name`` implies a failure of one of the history properties it restates."""

    as_name: str
    same: bool = True


@dataclasses.dataclass(frozen=True)
class NotJudged:
    """A form cannot judge the property, and why."""

    why: str


Entry = Judged | NotJudged
J = Judged


def _r(as_name: str) -> Judged:
    return Judged(as_name, same=False)


_TRACE = NotJudged("a set-based pass keeps no per-row state (or, for granularity, a trace declares none)")
_RT = NotJudged("the real-time judge restates it over a wall-clock run to its end, with a slack "
                "(its same_as); a virtual-time history has neither")
_CONC = NotJudged("a concurrent log keeps only the completion rules (no request windows)")
_STEPS = NotJudged("judged on the step model's threads: call steps and the state at quiescence, which a "
                   "history has not")
_LIN = NotJudged("the sequential specification steps results of calls, not times or counts")
_RUN_ONLY = NotJudged("a property of a run against an implementation (responses, refusals, the oracle, a "
                      "scenario), not of a history")
_RT_ONLY = NotJudged("a property of a wall-clock run")
_STEPS_ONLY = NotJudged("a property of the step model's concurrent runs")


def _row(*entries: Entry) -> dict[str, Entry]:
    assert len(entries) == len(JUDGING_FORMS), entries
    return {f.name: e for f, e in zip(JUDGING_FORMS, entries)}


def _only(*forms: str) -> dict[str, Entry]:
    """A property judged only by ``forms`` (under its own name), each other form saying why not."""
    why = {"run": _RUN_ONLY, "realtime": _RT_ONLY, "interleavings": _STEPS_ONLY, "completions": _STEPS_ONLY}
    return {f.name: J("") if f.name in forms else why.get(forms[0], _STEPS_ONLY) for f in JUDGING_FORMS}


_L = _r("linearizable")

#: per property (``(judge, name)``), every judging form: how it judges it, or why it cannot.
#: History properties, one column per form of :data:`JUDGING_FORMS`:
#: checker, z3, local, spark, realtime, completions, interleavings, linearizability, run
JUDGED_BY: dict[tuple[str, str], dict[str, Entry]] = {
    (HISTORY, "well-formed"): _row(J("well-formed"), J("well-formed"), J("well-formed"), J("well-formed"), _RT,
                                   _CONC, _STEPS, _L, J("well-formed")),
    (HISTORY, "no-early-fire"): _row(J("no-early-fire"), J("no-early-fire"), J("no-early-fire"), J("no-early-fire"),
                                     _r("early"), _CONC, _STEPS, _LIN, J("no-early-fire")),
    # the checker bounds the lateness of fires and of timeouts (an operation's expiry); the Z3
    # encoding and the trace analysis bound fires only
    (HISTORY, "late-fire"): _row(J("late-fire"), _r("late-fire"), _r("late-fire"), _r("late-fire"), _RT, _CONC,
                                 _STEPS, _LIN, J("late-fire")),
    (HISTORY, "granularity"): _row(J("granularity"), J("granularity"), _TRACE, _TRACE, _RT, _CONC, _STEPS, _LIN,
                                   J("granularity")),
    (HISTORY, "fire-once"): _row(J("fire-once"), J("fire-once"), J("fire-once"), J("fire-once"), _RT, _CONC,
                                 _STEPS, _L, J("fire-once")),
    (HISTORY, "fire-unknown-task"): _row(J("fire-unknown-task"), J("fire-unknown-task"), J("fire-unknown-task"),
                                         J("fire-unknown-task"), _RT, _CONC, _STEPS, _L, J("fire-unknown-task")),
    (HISTORY, "no-fire-after-cancel"): _row(J("no-fire-after-cancel"), J("no-fire-after-cancel"),
                                            J("no-fire-after-cancel"), J("no-fire-after-cancel"), _RT, _CONC, _STEPS,
                                            _L, J("no-fire-after-cancel")),
    (HISTORY, "no-lost-task"): _row(J("no-lost-task"), J("no-lost-task"), J("no-lost-task"), J("no-lost-task"), _RT,
                                    _CONC, _STEPS, _LIN, J("no-lost-task")),
    (HISTORY, "cancel-result"): _row(J("cancel-result"), J("cancel-result"), J("cancel-result"), J("cancel-result"),
                                     _RT, _CONC, _STEPS, _L, J("cancel-result")),
    (HISTORY, "size"): _row(J("size"), J("size"), _TRACE, _TRACE, _RT, _CONC, _STEPS, _LIN, J("size")),
    (HISTORY, "complete-once"): _row(J("complete-once"), J("complete-once"), J("complete-once"), J("complete-once"),
                                     _RT, J("exactly-once"), _STEPS, _L, J("complete-once")),
    (HISTORY, "complete-context"): _row(J("complete-context"), J("complete-context"), _TRACE, _TRACE, _RT, _CONC,
                                        _STEPS, _L, J("complete-context")),
    (HISTORY, "expire-rule"): _row(J("expire-rule"), J("expire-rule"), J("expire-rule"), J("expire-rule"), _RT,
                                   _r("expiration"), _STEPS, _L, J("expire-rule")),
    (HISTORY, "no-early-expire"): _row(J("no-early-expire"), J("no-early-expire"), J("no-early-expire"),
                                       J("no-early-expire"), _RT, _r("expiration"), _STEPS, _LIN,
                                       J("no-early-expire")),
    (HISTORY, "no-lost-operation"): _row(J("no-lost-operation"), J("no-lost-operation"), J("no-lost-operation"),
                                         J("no-lost-operation"), _RT, _CONC, _STEPS, _LIN, J("no-lost-operation")),
    # the trace analysis judges the result of a watch, not of a resubmit
    (HISTORY, "watch-result"): _row(J("watch-result"), J("watch-result"), _r("watch-result"), _r("watch-result"),
                                    _RT, _CONC, _STEPS, _L, J("watch-result")),
    (HISTORY, "force-result"): _row(J("force-result"), J("force-result"), J("force-result"), J("force-result"), _RT,
                                    _CONC, _STEPS, _L, J("force-result")),
    (HISTORY, "check-count"): _row(J("check-count"), J("check-count"), J("check-count"), J("check-count"), _RT,
                                   _CONC, _STEPS, _L, J("check-count")),
    (HISTORY, "no-lost-wakeup"): _row(J("no-lost-wakeup"), J("no-lost-wakeup"), J("no-lost-wakeup"),
                                      J("no-lost-wakeup"), _RT, _CONC, _STEPS, _L, J("no-lost-wakeup")),
    (HISTORY, "cancel-for-key-result"): _row(J("cancel-for-key-result"), J("cancel-for-key-result"), _TRACE, _TRACE,
                                             _RT, _CONC, _STEPS, _L, J("cancel-for-key-result")),
    (HISTORY, "num-delayed"): _row(J("num-delayed"), J("num-delayed"), _TRACE, _TRACE, _RT, _CONC, _STEPS, _LIN,
                                   J("num-delayed")),
    (HISTORY, "executor-order"): _row(J("executor-order"), J("executor-order"), _TRACE, _TRACE, _RT, _CONC, _STEPS,
                                      _LIN, J("executor-order")),
    (HISTORY, "try-complete-calls"): _row(J("try-complete-calls"), J("try-complete-calls"), _TRACE, _TRACE, _RT,
                                          _CONC, _STEPS, _LIN, J("try-complete-calls")),
    # the rest are judged by their own judge's forms only
    (RUN, "expected"): _only("run"),
    (RUN, "refused-valid"): _only("run"),
    (RUN, "accepted-invalid"): _only("run"),
    (RUN, "oracle"): _only("run"),
    (RUN, "responds"): _only("run"),
    (RUN, "ranges"): _only("run"),
    (REALTIME, "early"): _only("realtime"),
    (REALTIME, "late"): _only("realtime"),
    (REALTIME, "exactly-once"): _only("realtime"),
    (REALTIME, "cancel"): _only("realtime"),
    (REALTIME, "order"): _only("realtime"),
    (REALTIME, "delay<=0"): _only("realtime"),
    (REALTIME, "huge-delay"): _only("realtime"),
    (CONCURRENT, "exactly-once"): _only("completions", "interleavings"),
    (CONCURRENT, "expiration"): _only("completions", "interleavings"),
    (CONCURRENT, "lost-wakeup"): _only("interleavings"),
    (CONCURRENT, "cancelled-fired"): _only("interleavings"),
    (CONCURRENT, "deadlock"): _only("interleavings"),
    (CONCURRENT, "crash"): _only("interleavings"),
    (CONCURRENT, "no-progress"): _only("interleavings"),
    (CONCURRENT, "structure"): _only("interleavings"),
    (CONCURRENT, "timer"): _only("interleavings"),
    (CONCURRENT, "watched"): _only("interleavings"),
    (CONCURRENT, "numDelayed"): _only("interleavings"),
}
# a property judged only by its own judge's forms (``_only``) carries its own name there
JUDGED_BY = {key: {f: Judged(key[1]) if isinstance(e, Judged) and not e.as_name else e for f, e in forms.items()}
             for key, forms in JUDGED_BY.items()}

_TIMER = ("reference", "steps", "numba", "app-timer")
_PURGATORY = ("reference", "steps", "numba")
_TIMER_PROPERTIES = ("well-formed", "no-early-fire", "late-fire", "granularity", "fire-once", "fire-unknown-task",
                     "no-fire-after-cancel", "no-lost-task", "cancel-result", "size")

#: per property, the engine forms (:data:`ENGINE_FORMS`) that implement the behaviour it judges:
#: the timer's rules every engine, the purgatory's the engines with a purgatory, the concurrent
#: rules the step model (the only engine whose threads interleave step by step)
ENGINES: dict[tuple[str, str], tuple[str, ...]] = {
    **{(HISTORY, n): _TIMER if n in _TIMER_PROPERTIES else _PURGATORY for n in names(HISTORY)},
    **{(RUN, n): _TIMER for n in names(RUN)},
    **{(REALTIME, n): _TIMER for n in names(REALTIME)},
    **{(CONCURRENT, n): ("steps",) for n in names(CONCURRENT)},
}


def judging_form(name: str) -> Form:
    """The judging form called ``name``."""
    for f in JUDGING_FORMS:
        if f.name == name:
            return f
    raise KeyError(f"no judging form {name!r} (known: {', '.join(f.name for f in JUDGING_FORMS)})")


def judged_by(form: str, judge: str = HISTORY) -> dict[str, Judged]:
    """The properties of ``judge`` that ``form`` judges, each with how (:class:`Judged`)."""
    judging_form(form)
    return {name: e for (j, name), forms in JUDGED_BY.items() if j == judge
            for f, e in forms.items() if f == form and isinstance(e, Judged)}


def _check() -> None:
    seen: set[tuple[str, str]] = set()
    for p in PROPERTIES:
        assert p.judge in JUDGES and p.judge != TRACE, p
        assert (p.judge, p.name) not in seen, f"{p.name} twice for the {p.judge} judge"
        seen.add((p.judge, p.name))
        assert all(s in names(HISTORY) for s in p.same_as), p
    for j in JUDGES:
        assert len(set(reported_by(j))) == len(reported_by(j)), j
    for c in MATRIX_COLUMNS:
        assert all(n in names(j) for j, n in c.shows), c
    traced = {n for (j, n), forms in JUDGED_BY.items() if j == HISTORY and forms["local"] is _TRACE}
    assert traced == set(NOT_JUDGED_BY_TRACE), traced ^ set(NOT_JUDGED_BY_TRACE)


_check()
