"""The common shape of adapters for third-party *virtual-clock* timers (``sched``, ``asyncio``,
Twisted's ``task.Clock``): a task-id bookkeeping layer over a library that only knows callbacks.

What the adapter adds, and why (``docs/ADAPTERS.md`` says the same per library):

* **task ids.** The libraries schedule anonymous callbacks and hand back a handle; wheelspec's
  operations name tasks.  The adapter keeps ``task -> handle`` for live schedules.  Re-adding a
  scheduled task cancels its old handle first, which is Kafka's "a re-added task replaces its
  entry" (``TimerTaskEntry`` moves) expressed with the library's own cancel.
* **the virtual clock.** The adapter owns the clock the library reads; ``advance_to(t)`` moves it
  to ``t`` and lets the library run what it considers due.  A fire is reported with the clock
  reading the callback *observes* (not the reading the adapter intended), so a library that runs
  a callback early or late shows it.
* **refusals of the driver, not of the library.** A task id outside [0, 2^31-1] is ``range``,
  cancelling a task id never added is ``unknown-id`` and moving the clock back is ``invalid``: all
  three are about the driver's bookkeeping (the libraries have no task ids and no settable clock).
  Nothing else is refused: a library that accepts a delay beyond wheelspec's range (2^40-1 ms)
  is reported as accepting it, which the matrix shows as its huge-delay behaviour.

Subclasses implement four hooks: ``_start`` (a fresh library instance at ``start_ms``),
``_schedule`` (returns a handle), ``_unschedule`` (library cancel) and ``_advance`` (move the
library's clock and let it run), plus ``_size`` (the library's own count of pending calls).
"""

from __future__ import annotations

from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.limits import MAX_ID
from wheelspec.spec.profiles import STRICT

#: the task-id range of protocol v1: :data:`wheelspec.spec.limits.MAX_ID`, as every engine's
MAX_TASK_ID = MAX_ID


class LibraryTimerAdapter:
    """Base of the in-process adapters of third-party virtual-clock timers (timer only)."""

    #: shown in reports; subclasses set these
    name = "library"
    version = ""
    profile = STRICT

    def __init__(self) -> None:
        self.now = 0
        self._live: dict[int, Any] = {}    # task -> library handle of its live schedule
        self._known: set[int] = set()      # every task id ever added since reset
        self._events: list[ev.Event] = []  # fires reported by callbacks during one request
        self._started = False

    # ------------------------------------------------------------------ Adapter protocol ----------
    def hello(self) -> Hello:
        caps = Capabilities(timer=True, purgatory=False, time="virtual", profile=self.profile,
                            configurable=("start_ms",))
        return Hello(self.name, caps, self.version)

    def reset(self, config: Config) -> None:
        self.close()
        self.now = config.start_ms
        self._live, self._known, self._events = {}, set(), []
        self._start(config.start_ms)
        self._started = True

    def request(self, op: ops.Op) -> Response:
        if not self._started:
            raise RuntimeError("request before reset")
        self._events = []
        task_id = getattr(op, "task", None)
        if task_id is not None and not 0 <= task_id <= MAX_TASK_ID:
            return Response(self.now, error=("range", f"task id={task_id} is outside [0, {MAX_TASK_ID}]"))
        match op:
            case ops.AddTask(task, delay):
                old = self._live.pop(task, None)
                if old is not None:  # re-add replaces the entry (Kafka's TimerTaskEntry move)
                    self._unschedule(old)
                exp = self.now + delay
                self._known.add(task)
                self._live[task] = self._schedule(task, delay, exp)
                result: Any = exp
            case ops.CancelTask(task):
                if task not in self._known:
                    return Response(self.now, error=("unknown-id", f"task {task} was never added"))
                handle = self._live.pop(task, None)
                if handle is not None:
                    self._unschedule(handle)
                result = handle is not None
            case ops.AdvanceTo(time):
                if time < self.now:
                    return Response(self.now, error=("invalid", f"advance to {time} is before the clock ({self.now})"))
                self._advance(time)
                self.now = time
                result = None
            case ops.Size():
                result = self._size()
            case _:
                return Response(self.now, error=("unsupported", f"{op.kind} is not offered by {self.name} (a timer)"))
        return Response(self.now, list(self._events), result)

    def close(self) -> None:
        if self._started:
            self._stop()
            self._started = False

    # ------------------------------------------------------------------ for subclasses ------------
    def _fired(self, task: int, exp: int, now: int) -> None:
        """Called from the library's callback: record the fire with the clock it observed."""
        self._live.pop(task, None)
        self._events.append(ev.Fire(now, task, exp))

    def _start(self, start_ms: int) -> None:
        raise NotImplementedError

    def _stop(self) -> None:
        pass

    def _schedule(self, task: int, delay: int, exp: int) -> Any:
        raise NotImplementedError

    def _unschedule(self, handle: Any) -> None:
        raise NotImplementedError

    def _advance(self, time: int) -> None:
        raise NotImplementedError

    def _size(self) -> int:
        raise NotImplementedError
