"""Running a concurrent scenario on the step model under a schedule, and judging every interleaving.

A :class:`~.concurrent_scenario.ConcurrentScenario` is data (operations per simulated thread and
the model's configuration).  :func:`run_scenario` runs it under a chooser (a schedule) on
:class:`.steps.StepSimulation`, with Kafka's executor thread as a daemon, and returns an
:class:`Outcome`: the scheduler's :class:`.scheduler.Run`, the concurrent history
(:class:`Call` records with invocation and response times, and the events stamped with the step
and thread that caused them) and the violations of the properties below, as
:class:`~wheelspec.spec.findings.Finding` s named in :mod:`wheelspec.spec.properties` (judge
``concurrent``).  ``Outcome.report()`` prints a per-thread timeline and the schedule that
replays it.

Properties (:func:`check_interleaving`, :func:`check_quiescent` and the scheduler's own), checked
on every run:

* ``exactly-once``: ``onComplete`` runs at most once per operation (once for a completed one);
* ``expiration``: ``onExpiration`` only right after the timer's own ``onComplete`` (via=expire) and
  never before the operation's window ``floor(exp / tick) * tick``;
* ``lost-wakeup``: if ``setCompletable(o)`` returned before a ``checkAndComplete(k)`` on one of o's
  keys began, o is completed by the time both that check and o's ``tryCompleteElseWatch`` have
  returned (unless a ``cancelForKey(k)`` intervened);
* ``cancelled-fired``: a timer task does not fire after a ``cancel`` of it returned, unless an
  ``add`` of it overlapped or followed that cancel -- the documented race window is a fire whose
  flush had already taken the entry when the cancel ran, and the fire is then reported *before*
  the cancel returns;
* ``deadlock`` and ``crash`` (an exception inside the model: the JVM's NullPointerException), and
  ``no-progress`` (the step budget ran out);
* at quiescence: every bucket list and ``taskCounter`` agree; no completed operation keeps a current
  timer entry; every uncompleted, watched operation is still in the timer and in the watch list of
  each of its keys (unless that key was cancelled); and after a purge, ``watched`` counts no
  completed operation and ``numDelayed`` counts only uncompleted operations plus cancelled entries
  a racing cancel left linked (Kafka's documented over-count, which the next flush drops).

``exactly-once`` and ``expiration`` are computed by :func:`wheelspec.spec.checker.check_completions`,
the one judge of those rules on a concurrent log (the real-thread hammer uses it too).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from wheelspec.spec import events as ev
from wheelspec.spec import ops, properties, show
from wheelspec.spec.checker import check_completions
from wheelspec.spec.findings import Finding
from wheelspec.spec.profiles import KAFKA, profile

from .concurrent_scenario import ConcurrentScenario
from .mutants import MUTANTS
from .scheduler import Chooser, Ctx, Run, Scheduler, Step, ThreadBody, drain, list_chooser, segment_chooser
from .steps import StepSimulation, Task

if TYPE_CHECKING:
    from .steps.operation import Op as StepOp


@dataclasses.dataclass(frozen=True)
class Call:
    """One call of a concurrent history: who made it, what, when it was invoked and when it
    returned (global step numbers; ``response`` is None if it never returned), and its result."""

    thread: int
    op: ops.Op
    invoke: int
    response: int | None
    result: Any = None


@dataclasses.dataclass
class Outcome:
    scenario: ConcurrentScenario
    mutants: frozenset[str]
    run: Run
    sim: StepSimulation
    calls: list[Call]
    violations: list[Finding]

    @property
    def ok(self) -> bool:
        return not self.violations

    def report(self) -> str:
        notes: dict[int, list[str]] = defaultdict(list)
        for c in self.calls:
            notes[c.invoke].append(f"T{c.thread} calls {show.op_call(c.op)}")
            if c.response is not None:
                notes[c.response].append(f"T{c.thread} {show.op_call(c.op)} -> {c.result!r}")
        for step, _tid, e in self.sim.stamped:
            if isinstance(e, ev.CAUSED):
                notes[step].append(show.event_note(e))
        mut = ", ".join(sorted(self.mutants)) or "none"
        return "\n".join([
            self.scenario.describe(), f"mutants: {mut}",
            self.run.timeline(notes=notes),
            *("VIOLATION " + show.finding_line(v) for v in self.violations),
            f"replay: wheelspec.reference.interleave.replay({self._scenario_expr()}, {self.run.choices!r}, "
            f"{sorted(self.mutants)!r})",
        ])


    def _scenario_expr(self) -> str:
        if self.scenario.name in MUTANTS:
            return f"wheelspec.reference.mutants.scenario_for({self.scenario.name!r})"
        return "<the scenario above>"


# --------------------------------------------------------------------------------- running


def run_scenario(scenario: ConcurrentScenario, chooser: Chooser, mutants: Sequence[str] | frozenset[str] = (),
                 max_steps: int = 4000) -> Outcome:
    """Run ``scenario`` once under ``chooser`` and check every property."""
    sim = StepSimulation(scenario.tick_ms, scenario.wheel_size, 0, scenario.purge_interval,
                         shards=scenario.shards, executor="thread", mutants=mutants)
    for op_id, delay in scenario.declare:
        sim.declare_op(op_id, delay)
    for t in scenario.tasks:
        sim.tasks[t] = Task(t, 0)
    setup_ctx = Ctx(len(scenario.threads) + 1, "setup")
    for op in scenario.setup:
        drain(_inline(sim, setup_ctx, op), setup_ctx)
    calls: list[Call] = []
    bodies = [(f"T{i}", _thread_body(sim, ops_, calls)) for i, ops_ in enumerate(scenario.threads)]
    holder: list[Scheduler] = []
    bodies.append(("executor", sim.ptimer.executor_body(lambda: holder[0].users_done())))
    sched = Scheduler(bodies, daemons=("executor",))
    holder.append(sched)
    sim.scheduler = sched
    run = sched.run(chooser, max_steps=max_steps)
    violations = [_problem(p) for p in run.problems()] + check_interleaving(sim, calls, scenario)
    if run.ok:
        violations += check_quiescent(sim, calls)
    return Outcome(scenario, frozenset(mutants), run, sim, calls, violations)


def _inline(sim: StepSimulation, ctx: Ctx, op: ops.Op) -> ThreadBody:
    # Setup runs before any thread: tasks handed to the executor are run at once.
    result = yield from sim.apply(ctx, op)
    while sim.ptimer.work:
        yield from cast("StepOp", sim.ptimer.work.popleft()).run(ctx)  # the purgatory's timer holds operations
    return result


def _thread_body(sim: StepSimulation, program: Sequence[ops.Op], calls: list[Call]) -> Callable[[Ctx], ThreadBody]:
    def body(ctx: Ctx) -> ThreadBody:
        for op in program:
            # A call starts with a step of its own, so that a thread's calls are ordered in real time.
            yield Step(f"call {show.op_call(op)}")
            invoke = sim.scheduler.clock
            result = yield from sim.apply(ctx, op)
            calls.append(Call(ctx.tid, op, invoke, sim.scheduler.clock, result))

    return body


# --------------------------------------------------------------------------------- properties


def _problem(text: str) -> Finding:
    """A problem the scheduler reports (``deadlock: ...``, ``crash: ...``, no progress) as a finding."""
    prop, sep, message = text.partition(": ")
    if sep and prop in properties.names(properties.CONCURRENT):
        return Finding(prop, message)
    return Finding("no-progress", text)


def check_interleaving(sim: StepSimulation, calls: list[Call], scenario: ConcurrentScenario) -> list[Finding]:
    """The properties judged on the recorded concurrent history (module doc)."""
    stamped = sim.stamped
    # exactly once; expiration only after the timer's completion, never before the window
    out = check_completions([e for _, _, e in stamped], profile(KAFKA, sim.tick_ms),
                            deadline=lambda op: getattr(sim.ops[op], "exp", None),
                            steps=[step for step, _, _ in stamped])
    # lost wakeup (each call is paired with its operation, narrowed to the operation's class)
    sets = [(c, c.op) for c in calls if isinstance(c.op, ops.SetCompletable) and c.op.value]
    checks = [(c, c.op) for c in calls if isinstance(c.op, ops.CheckAndComplete)]
    watches = {c.op.op: (c, c.op) for c in calls if isinstance(c.op, ops.Watch)}
    key_cancels = [(c, c.op) for c in calls if isinstance(c.op, ops.CancelForKey)]
    for s, set_op in sets:
        o = set_op.op
        if o not in watches:
            continue
        w, watch = watches[o]
        if w.response is None or s.response is None:
            continue
        for c, check in checks:
            if c.response is None or check.key not in watch.keys or c.invoke <= s.response:
                continue
            if any(cancel.key == check.key and k.invoke <= c.response for k, cancel in key_cancels):
                continue
            bound = max(c.response, w.response)
            if not _completed_in_time(sim, calls, o, c.response, bound):
                out.append(Finding("lost-wakeup", f"op{o} was completable (step {s.response}) before "
                                   f"checkAndComplete({check.key!r}) began (step {c.invoke}), but was not "
                                   f"completed by step {bound} when that check and its watch had returned"))
                break
    # a cancelled task does not fire outside the race window
    fires = [(step, e) for step, _, e in stamped if isinstance(e, ev.Fire)]
    for step, f in fires:
        adds = [c for c in calls if isinstance(c.op, ops.AddTask) and c.op.task == f.task]
        for c in calls:
            if isinstance(c.op, ops.CancelTask) and c.op.task == f.task and c.response is not None \
                    and c.response < step:
                if not any(a.invoke < step and (a.response is None or a.response > c.response) for a in adds):
                    out.append(Finding("cancelled-fired", f"task {f.task} fired at step {step} after cancel "
                                       f"returned at step {c.response}"))
    return out


def _completed_in_time(sim: StepSimulation, calls: list[Call], o: int, check_response: int, bound: int) -> bool:
    """Was op ``o``'s completed flag won by step ``bound``, or by a call overlapping the check that
    returned at step ``check_response``?"""
    at = sim.ops[o].completed_at
    if at is None:
        return False
    step, tid = at
    if step <= bound:
        return True
    by = [c for c in calls if c.thread == tid and c.invoke <= step and (c.response is None or step <= c.response)]
    return any(c.invoke <= check_response for c in by)


def check_quiescent(sim: StepSimulation, calls: list[Call]) -> list[Finding]:
    """Structural and bound properties once every thread has finished (then a forced purge)."""
    out: list[Finding] = []
    for timer in (sim.timer, sim.ptimer):
        linked = 0
        for w in timer.wheel.levels():
            for b in w.buckets:
                for e in b.entries():
                    linked += 1
                    if e.list is not b:
                        out.append(Finding("structure", f"an entry of {e.task.label if e.task else '?'} is in "
                                           f"{b.name} but points at {e.list.name if e.list else None}"))
        if linked != timer.counter:
            out.append(Finding("structure", f"{timer.name}.size() is {timer.counter} but {linked} entries are linked"))
    cancelled_keys = {c.op.key for c in calls if isinstance(c.op, ops.CancelForKey)}
    # (Entry.cancelled() holds for an entry without a task: testing e.task first excludes nothing more)
    linked_current = {e.task.task_id for e in sim.ptimer.linked_entries() if e.task is not None and not e.cancelled()}
    for o in sim.ops.values():
        if o.completed and o.task_id in linked_current:
            out.append(Finding("timer", f"completed op{o.task_id} still has a live timer entry"))
        if o.watched and not o.completed and not (set(o.keys) & cancelled_keys) and o.task_id not in linked_current:
            out.append(Finding("timer", f"uncompleted op{o.task_id} is not in the timer (it can never expire)"))
    # force a purge, as the reaper eventually does, then judge watched / numDelayed
    ctx = Ctx(99, "purge")
    drain(sim.purgatory.purge_completed(ctx), ctx)
    members: dict[int, set[Any]] = defaultdict(set)
    for m in sim.purgatory.maps:
        for key, watchers in m.items():
            for op in watchers.ops.values():
                members[op.task_id].add(key)
                if op.completed:
                    out.append(Finding("watched", f"completed op{op.task_id} still watched on {key!r} after a purge"))
    for o in sim.ops.values():
        if o.watched and not o.completed:
            missing = [k for k in o.keys if k not in cancelled_keys and k not in members[o.task_id]]
            if missing:
                out.append(Finding("watched", f"uncompleted op{o.task_id} is not in the watch list of "
                                   f"{missing[0]!r} (no checkAndComplete can ever find it there)"))
    uncompleted = sum(1 for o in sim.ops.values() if o.watched and not o.completed)
    stale = sum(1 for e in sim.ptimer.linked_entries() if e.cancelled())
    if sim.ptimer.counter > uncompleted + stale:
        out.append(Finding("numDelayed", f"{sim.ptimer.counter} > {uncompleted} uncompleted + {stale} "
                                         "cancelled-but-linked"))
    bound = sum(len(o.keys) for o in sim.ops.values() if o.watched and not o.completed)
    if sim.purgatory.watched() > bound:
        out.append(Finding("watched", f"{sim.purgatory.watched()} after a purge > {bound} keys of uncompleted "
                                      "operations"))
    return out


def replay(scenario: ConcurrentScenario, choices: Sequence[int], mutants: Sequence[str] = ()) -> Outcome:
    """Replay a recorded schedule (``Outcome.run.choices`` or a shrunk Hypothesis schedule)."""
    return run_scenario(scenario, list_chooser(choices), mutants)



# --------------------------------------------------------------------------------- hunting


@dataclasses.dataclass
class Detection:
    """A bug found by :func:`hunt`: after how many examples, and the shrunk schedule's outcome."""

    mutant: str
    examples: int
    schedule: list[tuple[int, int]]
    outcome: Outcome


def schedules(n_threads: int, max_segments: int = 6, max_run: int = 12):
    """Hypothesis strategy for a context-bounded schedule (see :func:`.scheduler.segment_chooser`):
    up to ``max_segments`` ``(thread, steps)`` pairs; thread ``n_threads`` is the executor."""
    from hypothesis import strategies as st

    return st.lists(st.tuples(st.integers(0, n_threads), st.integers(1, max_run)), max_size=max_segments)


def hunt(scenario: ConcurrentScenario, mutants: Sequence[str], max_examples: int = 1000,
         seed: int = 0) -> Detection | None:
    """Let Hypothesis search schedules of ``scenario`` for a violation under ``mutants``; return the
    first-detection count and the shrunk schedule's outcome (replayable from ``run.choices``), or
    None if no violation was found."""
    import random

    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    seen = {"n": 0, "first": 0}

    def bad(schedule: list[tuple[int, int]]) -> bool:
        seen["n"] += 1
        found = not run_scenario(scenario, segment_chooser(schedule), mutants).ok
        if found and not seen["first"]:
            seen["first"] = seen["n"]
        return found

    try:
        schedule = find(schedules(len(scenario.threads)), bad, random=random.Random(seed),
                        settings=settings(max_examples=max_examples, database=None, deadline=None,
                                          suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return None
    outcome = run_scenario(scenario, segment_chooser(schedule), mutants)
    return Detection(",".join(mutants), seen["first"], list(schedule), outcome)
