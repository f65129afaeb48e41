"""The common shape of adapters for third-party *virtual-clock* timers (``sched``, ``asyncio``,
Twisted's ``task.Clock``): a task-id translation layer over a library that only knows callbacks.

The rule: **every value the runner judges comes from the library.**  The adapter's own
bookkeeping translates task ids into library handles and nothing else; what the library cannot
tell is declared in ``Capabilities.unobservable`` and reported "not judged" (``docs/ADAPTERS.md``,
"What an adapter observes").  Where each judged value comes from:

* **add**: the result (the expiration) is the deadline the library records for the new handle
  (:meth:`_deadline`), not ``now + delay`` computed here; a re-add of a scheduled task first
  cancels the old handle with the library's own cancel (Kafka's "a re-added task replaces its
  entry": ``TimerTaskEntry`` moves).
* **cancel**: the result is the library's answer (:meth:`_unschedule`), read from what the library
  returns, raises or exposes about the handle; never from whether this layer thinks it is live.
* **fires**: the library calls back; each fire is reported with the clock reading the library
  gives at that moment (:meth:`_clock`) and the deadline the library recorded for that handle, so
  an early or late library shows.
* **size**: the library's own count of pending calls (:meth:`_size`); a subclass without one
  declares ``size`` unobservable (the base does it when ``_size`` is not overridden) and a
  ``size`` request is answered ``unsupported``.
* **the clock after a request** (``now``): the library's reading.

Inputs the library has no notion of belong to this layer, and are declared so (``task-ids``,
``clock`` in :data:`~.protocol.OWNED_INPUTS`): the libraries have no task ids, so a task id outside
[0, 2^31-1] (``range``) and a cancel of an id never added (``unknown-id``) are refused here; the
adapter sets the clock the library reads, so a reading going back (``invalid``) or past 2^43-1 ms
(``range``) is refused here.  The judge reports those refusals "not judged".  Delays are the
library's: a delay beyond wheelspec's range (2^40-1 ms) is handed to the library, and a library
that accepts it is reported as accepting it (the matrix's huge-delay column).

Subclasses implement ``_start`` (a fresh library instance at ``start_ms``), ``_schedule`` (hand a
callback to the library, return its handle), ``_deadline``, ``_unschedule``, ``_advance`` (move the
library's clock and let it run), ``_clock`` and, if the library has one, ``_size``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.limits import MAX_ID, MAX_TIME_MS
from wheelspec.spec.profiles import STRICT

#: the task-id range of protocol v1: :data:`wheelspec.spec.limits.MAX_ID`, as every engine's
MAX_TASK_ID = MAX_ID

#: what every library adapter owns instead of the library (module doc)
OWNED = ("task-ids", "clock")


class LibraryTimerAdapter:
    """Base of the in-process adapters of third-party virtual-clock timers (timer only)."""

    #: shown in reports; subclasses set these
    name = "library"
    version = ""
    profile = STRICT
    #: properties this library cannot tell (registered names); ``size`` is added when the
    #: subclass has no ``_size``
    unobservable: tuple[str, ...] = ()
    #: ``bounded`` (judged on wheelspec's ranges) or ``unbounded`` (the library accepts any value
    #: by design: ``Capabilities.ranges``)
    ranges: str = "bounded"

    def __init__(self) -> None:
        self._handles: dict[int, Any] = {}  # task -> library handle of its latest schedule (ids only)
        self._events: list[ev.Event] = []   # fires reported by callbacks during one request
        self._started = False

    # ------------------------------------------------------------------ Adapter protocol ----------
    def not_observed(self) -> tuple[str, ...]:
        """Everything declared unobservable: the owned inputs, the subclass's list, ``size`` if
        the subclass cannot count."""
        extra = ("size",) if type(self)._size is LibraryTimerAdapter._size else ()
        return tuple(dict.fromkeys(OWNED + tuple(self.unobservable) + extra))

    def hello(self) -> Hello:
        caps = Capabilities(timer=True, purgatory=False, time="virtual", profile=self.profile,
                            configurable=("start_ms",), unobservable=self.not_observed(), ranges=self.ranges)
        return Hello(self.name, caps, self.version)

    def reset(self, config: Config) -> None:
        self.close()
        self._handles, self._events = {}, []
        self._start(config.start_ms)
        self._started = True

    def request(self, op: ops.Op) -> Response:
        if not self._started:
            raise RuntimeError("request before reset")
        self._events = []
        now = self._clock()
        task_id = getattr(op, "task", None)
        if task_id is not None and not 0 <= task_id <= MAX_TASK_ID:
            return Response(now, error=("range", f"task id={task_id} is outside [0, {MAX_TASK_ID}]"))
        result: Any = None
        match op:
            case ops.AddTask(task, delay):
                old = self._handles.get(task)
                if old is not None:  # re-add replaces the entry (Kafka's TimerTaskEntry move)
                    self._unschedule(old)
                result = self._add(task, delay)
            case ops.CancelTask(task):
                if task not in self._handles:
                    return Response(now, error=("unknown-id", f"task {task} was never added"))
                pending = self._unschedule(self._handles[task])
                if "cancel-result" in self.not_observed():
                    result = bool(pending)  # not judged: whatever the library gave, as a bool
                elif not isinstance(pending, bool):
                    return Response(now, error=("internal", f"{type(self).__name__}._unschedule returned "
                                                            f"{pending!r}, not the library's answer (bool)"))
                else:
                    result = pending
            case ops.AdvanceTo(time):
                if time < now:
                    return Response(now, error=("invalid", f"advance to {time} is before the clock ({now})"))
                if time > MAX_TIME_MS:
                    return Response(now, error=("range", f"time={time} is outside [0, {MAX_TIME_MS}] "
                                                         f"(the adapter's clock)"))
                self._advance(time)
            case ops.Size():
                if "size" in self.not_observed():
                    return Response(now, error=("unsupported", f"{self.name} has no count of pending calls"))
                result = self._size()
            case _:
                return Response(now, error=("unsupported", f"{op.kind} is not offered by {self.name} (a timer)"))
        return Response(self._clock(), list(self._events), result)

    def close(self) -> None:
        if self._started:
            self._stop()
            self._started = False

    # ------------------------------------------------------------------ the library's callback ----
    def _add(self, task: int, delay: int) -> int:
        """Schedule ``task`` with the library; returns the deadline the library recorded.  The
        callback reports each fire with the library's clock and this handle's deadline."""
        bound: list[Any] = []   # the handle, once the library has returned it
        inside: list[int] = []  # clock readings of fires run inside the scheduling call itself

        def fire() -> None:
            if bound:
                self._events.append(ev.Fire(self._clock(), task, self._deadline(bound[0])))
            else:
                inside.append(self._clock())

        handle = self._schedule(task, delay, fire)
        bound.append(handle)
        self._handles[task] = handle
        exp = self._deadline(handle)
        self._events.extend(ev.Fire(t, task, exp) for t in inside)
        return exp

    # ------------------------------------------------------------------ for subclasses ------------
    def _start(self, start_ms: int) -> None:
        """A fresh library instance whose clock reads ``start_ms``."""
        raise NotImplementedError

    def _stop(self) -> None:
        pass

    def _schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        """Schedule ``callback`` (no arguments) after ``delay`` ms; return the library's handle."""
        raise NotImplementedError

    def _deadline(self, handle: Any) -> int:
        """The expiration (ms) the library recorded for ``handle``."""
        raise NotImplementedError

    def _unschedule(self, handle: Any) -> bool:
        """Cancel ``handle`` with the library's cancel; return the library's answer: was it still
        pending (read from the return value, the exception, or the library's state)."""
        raise NotImplementedError

    def _advance(self, time: int) -> None:
        """Move the library's clock to ``time`` and let it run what it considers due."""
        raise NotImplementedError

    def _clock(self) -> int:
        """The library's clock reading, in ms."""
        raise NotImplementedError

    def _size(self) -> int:
        """The library's own count of pending calls (leave it out if the library has none)."""
        raise NotImplementedError
