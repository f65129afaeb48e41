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
       "docs/PROTOCOL.md Transport (a response for every request), Protocol errors (timeouts)"),
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


_check()
