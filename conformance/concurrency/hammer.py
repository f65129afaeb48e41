"""Real threads against a thread-safe facade, with the concurrent history recorded.

Several Python threads call ``add``, ``cancel``, ``watch`` (tryCompleteElseWatch),
``set_completable`` + ``check_and_complete`` (the satisfying event and the check that must see it)
and ``force_complete`` on one facade, while a reaper thread advances the facade's clock with real
time.  Every call is stamped with a global counter at invocation and response; the facade's events
are attributed to the call running on the thread that emitted them (a ``Complete`` via check inside
a ``check_and_complete`` becomes part of that call's output; a ``Fire`` or an expiry becomes a
pseudo-call spanning the call that caused it).  The result is a history for
:mod:`.linearizability` and the list of all events for the property checks.

The facade is anything with the per-operation API of ``wheelspec.reference.Simulation`` whose
events reach a ``history`` it calls as a listener in the calling thread, e.g.
``wheelspec.optimized.LockedSimulation``.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.concurrency.linearizability import Operation
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.findings import Finding
from wheelspec.spec.history import History
from wheelspec.spec.sequential_spec import ExpireCall, FireCall


class _RecordingList(list[ev.Event]):
    """Stands in for the facade's ``History.events``: keeps every event, and hands each to the
    open call of the thread that emitted it.  Every listener of the facade (its timer's, its
    operations') appends to this one list, so nothing is missed."""

    def __init__(self, old: list[ev.Event]) -> None:
        super().__init__(old)
        self.local = threading.local()

    def append(self, event: ev.Event) -> None:
        super().append(event)  # list.append is atomic under the GIL
        sink = getattr(self.local, "sink", None)
        if sink is not None:
            sink.append(event)


class Recorder:
    """Records a concurrent history: ``call(client, op)`` runs one operation record through
    ``run_op(op) -> (result, events it caused)`` and stamps it.  :meth:`for_facade` hooks a
    thread-safe facade's event log; :meth:`for_adapter` talks to a runner adapter (in-process or a
    subprocess speaking protocol v1), one request at a time."""

    def __init__(self, run_op: Callable[[ops.Op], tuple[Any, list[ev.Event]]],
                 log: Callable[[], list[ev.Event]]) -> None:
        self.run_op = run_op
        self._log = log
        self.clock = itertools.count()  # next() on a count is atomic under the GIL
        self.history: list[Operation] = []
        self._hlock = threading.Lock()

    @classmethod
    def for_facade(cls, facade: Any) -> Recorder:
        history: History = facade.history
        listener = _RecordingList(history.events)
        history.events = listener

        def run_op(op: ops.Op) -> tuple[Any, list[ev.Event]]:
            sink: list[ev.Event] = []
            listener.local.sink = sink
            try:
                result = facade.apply(op)
            finally:
                listener.local.sink = None
            return result, sink

        return cls(run_op, lambda: list(listener))

    @classmethod
    def for_adapter(cls, adapter: Any) -> Recorder:
        from wheelspec.spec.errors import UserError

        lock = threading.Lock()  # one connection: the clients' requests take turns on it
        log: list[ev.Event] = []

        def run_op(op: ops.Op) -> tuple[Any, list[ev.Event]]:
            with lock:
                resp = adapter.request(op)
                if resp.error is not None:
                    raise UserError(f"the implementation refused {op.to_dict()}: {resp.error[0]}: {resp.error[1]}")
                events = list(resp.events)
                if isinstance(op, ops.Watch):  # the result event, for the expiration window
                    events.append(ev.TryCompleteElseWatch(resp.now, op.op, op.delay, op.keys, bool(resp.result)))
                log.extend(events)
            return resp.result, events

        return cls(run_op, lambda: list(log))

    def call(self, client: int, op: ops.Op) -> Any:
        invoke = next(self.clock)
        result, sink = self.run_op(op)
        ret = next(self.clock)
        rows = []
        if isinstance(op, ops.CheckAndComplete):
            output: Any = tuple(e.op for e in sink if isinstance(e, ev.Complete) and e.via == "check")
        elif isinstance(op, ops.CancelForKey):
            output = tuple(result)
        else:
            output = result
        rows.append(Operation(client, op, invoke, output, ret))
        for e in sink:
            if isinstance(e, ev.Fire):
                rows.append(Operation(client, FireCall(e.task, e.exp), invoke, None, ret))
            elif isinstance(e, ev.Complete) and e.via == "expire":
                rows.append(Operation(client, ExpireCall(e.op), invoke, None, ret))
        with self._hlock:
            self.history.extend(rows)
        return result

    @property
    def events(self) -> list[ev.Event]:
        return self._log()


class Locked:
    """One lock around every call of any per-operation simulation (e.g. the reference's), so the
    reference can be hammered exactly like the optimized engine's ``LockedSimulation``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()

    def apply(self, op: ops.Op) -> Any:
        with self._lock:
            return self._inner.apply(op)

    @property
    def history(self) -> History:
        return self._inner.history


def hammer(make_facade: Callable[[], Any] | None, threads: int = 4, ops_per_thread: int = 2500, keys: int = 100,
           seed: int = 0, reaper_sleep_s: float = 0.0005, recorder: Recorder | None = None,
           purgatory: bool = True) -> Recorder:
    """Run ``threads`` worker threads and one reaper on a new facade; return the recorder (its
    ``history`` for linearizability, its ``events`` for the properties).  Workers use their own
    task and operation ids, watch 1-2 of ``keys`` keys, and make each other's operations
    completable (only operations whose watch has returned: ids come from a shared list)."""
    rec = (recorder if recorder is not None
           else Recorder.for_facade(make_facade()))  # type: ignore[misc]  # make_facade is given when recorder is None
    watched: list[int] = []
    wlock = threading.Lock()
    done = threading.Event()
    errors: list[BaseException] = []
    start = time.monotonic()

    def worker(w: int) -> None:
        rng = random.Random(seed * 1000 + w)
        next_op = w * 10_000_000
        tasks = [w * 10_000_000 + i for i in range(16)]
        added: set[int] = set()
        try:
            for _ in range(ops_per_thread):
                r = rng.random()
                if not purgatory:  # a timer-only implementation: adds and cancels
                    r = 0.0 if rng.random() < 0.7 or not added else 0.2
                if r < 0.15:
                    t = rng.choice(tasks)
                    rec.call(w, ops.AddTask(t, rng.randint(-2, 40)))
                    added.add(t)
                elif r < 0.22 and added:
                    rec.call(w, ops.CancelTask(rng.choice(sorted(added))))
                elif r < 0.50:
                    ks = tuple(f"k{rng.randrange(keys)}" for _ in range(rng.randint(1, 2)))
                    ks = tuple(dict.fromkeys(ks))
                    rec.call(w, ops.Watch(next_op, rng.randint(1, 60), ks, rng.random() < 0.1))
                    with wlock:
                        watched.append(next_op)
                    next_op += 1
                elif r < 0.80:
                    with wlock:
                        o = rng.choice(watched) if watched else None
                    if o is not None:
                        rec.call(w, ops.SetCompletable(o))
                    rec.call(w, ops.CheckAndComplete(f"k{rng.randrange(keys)}"))
                elif r < 0.85:
                    with wlock:
                        o = rng.choice(watched) if watched else None
                    if o is not None:
                        rec.call(w, ops.ForceComplete(o))
                elif r < 0.88:
                    rec.call(w, ops.CancelForKey(f"k{rng.randrange(keys)}"))
                else:
                    rec.call(w, ops.CheckAndComplete(f"k{rng.randrange(keys)}"))
        except BaseException as e:  # noqa: BLE001 - reported by the caller, never swallowed
            errors.append(e)

    def reaper() -> None:
        try:
            while not done.is_set():
                now = int((time.monotonic() - start) * 1000)
                rec.call(threads, ops.AdvanceTo(now))
                time.sleep(reaper_sleep_s)
        except BaseException as e:  # noqa: BLE001 - likewise: the caller re-raises it
            errors.append(e)

    workers = [threading.Thread(target=worker, args=(w,), name=f"worker-{w}") for w in range(threads)]
    rp = threading.Thread(target=reaper, name="reaper")
    rp.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    done.set()
    rp.join()
    if errors:
        raise errors[0]
    # A last advance well past every timeout: whatever is still pending fires or expires now, so
    # every history has fires and expiries to check, however fast the workers ran.
    rec.call(threads, ops.AdvanceTo(int((time.monotonic() - start) * 1000) + 1000))
    return rec


def check_event_properties(events: list[ev.Event], tick_ms: int = 1) -> list[Finding]:
    """The properties of :mod:`wheelspec.reference.interleave` that need no thread timing, on the
    events the threads saw (``exactly-once``: onComplete at most once per operation;
    ``expiration``: onExpiration only after the timer's own completion and never before the
    operation's window), judged by the same function as the interleavings:
    :func:`wheelspec.spec.checker.check_completions`.  Not :func:`~wheelspec.spec.checker.check_history`:
    the log interleaves threads, so it has no request windows and another thread's events can sit
    between a completion and its expiration."""
    from wheelspec.spec.checker import check_completions
    from wheelspec.spec.profiles import KAFKA, profile

    return check_completions(events, profile(KAFKA, tick_ms))


# --------------------------------------------------------------------------------- scheduled facades


def drive(scenario: Any, chooser: Any, make_facade: Callable[[], Any]) -> tuple[Any, list[Operation], list[ev.Event]]:
    """Drive a :class:`wheelspec.reference.concurrent_scenario.ConcurrentScenario` on a thread-safe facade under the
    deterministic scheduler, at the facade's own granularity: each call is one atomic step (the
    facade serializes whole calls under its lock, so these are all its interleavings).

    A facade knows an operation only once it is watched, and a task once it is added (the step
    model can declare them earlier), so a ``set_completable`` / ``force_complete`` waits for its
    operation's watch and a ``cancel`` for its task's first add: the schedule can only order the
    calls in ways the facade accepts.  Returns the scheduler's run, the history (for
    :mod:`.linearizability`) and the facade's events."""
    from wheelspec.reference.scheduler import Scheduler, Step, WaitUntil

    rec = Recorder.for_facade(make_facade())
    for op in scenario.setup:
        rec.call(len(scenario.threads), op)
    known_ops = {o.input.op for o in rec.history if isinstance(o.input, ops.Watch)}
    known_tasks = {o.input.task for o in rec.history if isinstance(o.input, ops.AddTask)}
    holder: list[Any] = []

    def present(ids: set[int], i: int) -> Callable[[], bool]:
        """The scheduler's predicate "``i`` is in ``ids``" (read whenever the scheduler asks)."""
        return lambda: i in ids

    def body_for(program: Any) -> Callable[[Any], Any]:
        def body(ctx: Any) -> Any:
            for op in program:
                if isinstance(op, (ops.SetCompletable, ops.ForceComplete)):
                    yield WaitUntil(present(known_ops, op.op), f"wait for op{op.op} to be watched")
                elif isinstance(op, ops.CancelTask):
                    yield WaitUntil(present(known_tasks, op.task), f"wait for task {op.task} to be added")
                yield Step(f"{op.kind}")
                # the whole call in one step; stamp with the scheduler's clock
                rec.clock = itertools.count(holder[0].clock * 2)
                rec.call(ctx.tid, op)
                if isinstance(op, ops.Watch):
                    known_ops.add(op.op)
                elif isinstance(op, ops.AddTask):
                    known_tasks.add(op.task)
        return body

    sched = Scheduler([(f"T{i}", body_for(p)) for i, p in enumerate(scenario.threads)])
    holder.append(sched)
    run = sched.run(chooser)
    return run, rec.history, rec.events
