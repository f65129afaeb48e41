"""The common shape of adapters for third-party *virtual-clock* timers (``sched``, ``asyncio``,
Twisted's ``task.Clock``): a task-id translation layer over a library that only knows callbacks.

The rule: **every value the runner judges comes from the library.**  The adapter's own
bookkeeping translates task ids into library handles and nothing else; what the library cannot
tell is declared in ``Capabilities.unobservable`` and reported "not judged"
(``docs/guides/ADAPTERS.md``, "What an adapter observes").  Where each judged value comes from:

* **add**: the result (the expiration) is the deadline the library records for the new handle
  (:meth:`deadline_of`), not ``now + delay`` computed here.  A re-add of a scheduled task (Kafka's
  "a re-added task replaces its entry": ``TimerTaskEntry`` moves, the old entry never runs) is
  made in the one order that keeps a refusal harmless: the new schedule first; only once the
  library has accepted it is the old handle superseded (cancelled with the library's own cancel).
  A library that refuses the new schedule (it raises) has changed nothing: the request is
  answered with the error :func:`~.base.error_of` maps the exception to, and the old entry stays
  scheduled.  While the library schedules the new handle, the old one is already being replaced:
  a fire of the old handle the library runs inside that call is not reported (in Kafka's order
  the old entry was gone before the new one was filed), and a fire of the new handle inside the
  call (a delay <= 0 run at once) is reported where it happened among the request's events.
* **cancel**: the result is the library's answer (:meth:`unschedule`), read from what the library
  returns, raises or exposes about the handle; never from whether this layer thinks it is live.
* **fires**: the library calls back; each fire is reported with the clock reading the library
  gives at that moment (:meth:`read_clock`) and the deadline the library recorded for that
  handle, so an early or late library shows.
* **size**: the library's own count of pending calls (:meth:`count_pending`); a subclass without
  one declares ``size`` unobservable (the base does it when ``count_pending`` is not overridden)
  and a ``size`` request is answered ``unsupported``.
* **the clock after a request** (``now``): the library's reading.

Inputs the library has no notion of belong to this layer, and are declared so (``task-ids``,
``clock`` in :data:`~.protocol.OWNED_INPUTS`): the libraries have no task ids, so a task id outside
[0, 2^31-1] (``range``) and a cancel of an id never added (``unknown-id``) are refused here; the
adapter sets the clock the library reads, so a reading going back (``invalid``) or past 2^43-1 ms
(``range``) is refused here.  The judge reports those refusals "not judged".  Delays are the
library's: a delay beyond wheelspec's range (2^40-1 ms) is handed to the library, and a library
that accepts it is reported as accepting it (the matrix's huge-delay column).

Subclasses implement the public extension hooks :class:`LibraryTimerAdapter` lists (one line
each there and in ``docs/guides/PYTHON_ADAPTERS.md``); everything else here is the base's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.base import refusal_of
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response, declare_ranges
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.errors import RangeError, UserError
from wheelspec.spec.limits import MAX_ID, MAX_TIME_MS, check_tick, check_wheel_size
from wheelspec.spec.profiles import STRICT

#: the task-id range of protocol v1: :data:`wheelspec.spec.limits.MAX_ID`, as every engine's
MAX_TASK_ID = MAX_ID

#: what every library adapter owns instead of the library (module doc)
OWNED = ("task-ids", "clock")


class LibraryTimerAdapter:
    """Base of the in-process adapters of third-party virtual-clock timers (timer only).

    A subclass sets the class attributes below and overrides the extension hooks, each of which
    returns what the *library* says.  A hook refuses by raising: the request it serves is answered
    with the refusal :func:`~.base.error_of` maps the exception to (a ``ValueError`` is
    ``invalid``, a ``RangeError`` ``range``; here for :meth:`schedule`, which then changes
    nothing, by the runner for the others).  A reset has no refusal: an exception of
    :meth:`start_library` or :meth:`stop_library` stops the check.

    ============================== ==============================================================
    hook                           called when; returns
    ============================== ==============================================================
    ``start_library(start_ms)``    at every ``reset``: make a fresh library instance whose clock
                                   reads ``start_ms``; returns nothing
    ``stop_library()``             optional; at ``reset`` and ``close``, before a new instance:
                                   release the library; returns nothing
    ``schedule(task, delay, cb)``  at an ``add``: hand ``cb`` (no arguments) to the library to
                                   run after ``delay`` ms; returns the library's handle, or raises
                                   to refuse (then nothing changed)
    ``deadline_of(handle)``        after each ``schedule`` and at each fire: the expiration (ms)
                                   the library recorded for ``handle``
    ``unschedule(handle)``         at a ``cancel`` and when a re-add supersedes an entry: cancel
                                   with the library's cancel; returns the library's answer, was it
                                   still pending (a ``bool``; anything else is an ``internal``
                                   error unless ``cancel-result`` is unobservable)
    ``advance_clock(time)``        at an ``advance_to``: move the library's clock to ``time`` and
                                   let it run what is due; returns nothing
    ``read_clock()``               before and after every request and at each fire: the library's
                                   clock reading (ms)
    ``count_pending()``            optional; at a ``size``: the library's own count of pending
                                   calls (left out: ``size`` is unobservable, answered
                                   ``unsupported``)
    ============================== ==============================================================
    """

    #: shown in reports; subclasses set these
    name = "library"
    version = ""
    profile = STRICT
    #: properties this library cannot tell (registered names); ``size`` is added when the
    #: subclass has no ``count_pending``
    unobservable: tuple[str, ...] = ()
    #: ``bounded`` (judged on wheelspec's ranges), ``unbounded`` (the library accepts any value by
    #: design) or the range it accepts, e.g. ``{"delay": (1, 4095)}`` (``Capabilities.ranges``;
    #: ``docs/guides/PYTHON_ADAPTERS.md``)
    ranges: str | dict[str, tuple[int, int]] = "bounded"
    #: the library's fixed tick (ms) and number of buckets per wheel, if it has them
    #: (``Capabilities.tick_ms`` / ``wheel_size``): the reports show them as the configuration, the
    #: ``kafka`` profile's tick window is judged with this tick, and a ``kafka`` library declaring
    #: both claims Kafka's wheel, whose fires are then compared one by one with the reference's
    tick_ms: int | None = None
    wheel_size: int | None = None
    #: the library's declared granularity (``Capabilities.lateness_ms`` / ``earliness_ms``;
    #: ``docs/guides/PYTHON_ADAPTERS.md``): a task may fire up to ``lateness_ms`` after the moment
    #: its profile says it must have fired by (a coarse wheel firing a bucket when the clock passes
    #: its end) and up to ``earliness_ms`` before its profile's earliest time (a wheel rounding
    #: deadlines down); judged as property ``granularity``.  0: none declared
    lateness_ms: int = 0
    earliness_ms: int = 0

    def __init__(self) -> None:
        self._entries: dict[int, _Schedule] = {}  # task -> its latest schedule with the library
        self._events: list[ev.Event] = []   # fires reported by callbacks during one request
        self._replacing: _Schedule | None = None  # the schedule a re-add is superseding (_add)
        self._started = False

    # ------------------------------------------------------------------ Adapter protocol ----------
    def not_observed(self) -> tuple[str, ...]:
        """Everything declared unobservable: the owned inputs, the subclass's list, ``size`` if
        the subclass cannot count."""
        extra = ("size",) if type(self).count_pending is LibraryTimerAdapter.count_pending else ()
        return tuple(dict.fromkeys(OWNED + tuple(self.unobservable) + extra))

    def hello(self) -> Hello:
        caps = Capabilities(timer=True, purgatory=False, time="virtual", profile=self.profile,
                            tick_ms=self._declared("tick_ms", check_tick),
                            wheel_size=self._declared("wheel_size", check_wheel_size),
                            configurable=("start_ms",), unobservable=self.not_observed(),
                            ranges=declare_ranges(self.ranges),
                            lateness_ms=self.lateness_ms, earliness_ms=self.earliness_ms)
        return Hello(self.name, caps, self.version)

    def _declared(self, attr: str, check: Callable[[object], int]) -> int | None:
        """The class attribute ``attr`` (``tick_ms`` / ``wheel_size``), checked against
        wheelspec's limits; a bad value is a one-line :class:`UserError` naming it."""
        value = getattr(self, attr)
        if value is None:
            return None
        try:
            return check(value)
        except (RangeError, TypeError) as e:
            raise UserError(f"{type(self).__name__}.{attr}: {e}") from None

    def reset(self, config: Config) -> None:
        self.close()
        self._entries, self._events, self._replacing = {}, [], None
        self.start_library(config.start_ms)
        self._started = True

    def request(self, op: ops.Op) -> Response:
        if not self._started:
            raise RuntimeError("request before reset")
        self._events = []
        now = self.read_clock()
        task_id = getattr(op, "task", None)
        if task_id is not None and not 0 <= task_id <= MAX_TASK_ID:
            return Response(now, error=("range", f"task id={task_id} is outside [0, {MAX_TASK_ID}]"))
        result: Any = None
        match op:
            case ops.AddTask(task, delay):
                added = self._add(task, delay)
                if isinstance(added, Response):
                    return added  # refused by the library: nothing changed
                result = added
            case ops.CancelTask(task):
                if task not in self._entries:
                    return Response(now, error=("unknown-id", f"task {task} was never added"))
                pending = self.unschedule(self._entries[task].handle)
                if "cancel-result" in self.not_observed():
                    result = bool(pending)  # not judged: whatever the library gave, as a bool
                elif not isinstance(pending, bool):
                    return Response(now, error=("internal", f"{type(self).__name__}.unschedule returned "
                                                            f"{pending!r}, not the library's answer (bool)"))
                else:
                    result = pending
            case ops.AdvanceTo(time):
                if time < now:
                    return Response(now, error=("invalid", f"advance to {time} is before the clock ({now})"))
                if time > MAX_TIME_MS:
                    return Response(now, error=("range", f"time={time} is outside [0, {MAX_TIME_MS}] "
                                                         f"(the adapter's clock)"))
                self.advance_clock(time)
            case ops.Size():
                if "size" in self.not_observed():
                    return Response(now, error=("unsupported", f"{self.name} has no count of pending calls"))
                result = self.count_pending()
            case _:
                return Response(now, error=("unsupported", f"{op.kind} is not offered by {self.name} (a timer)"))
        return Response(self.read_clock(), list(self._events), result)

    def close(self) -> None:
        if self._started:
            self.stop_library()
            self._started = False

    # ------------------------------------------------------------------ the library's callback ----
    def _add(self, task: int, delay: int) -> int | Response:
        """Schedule ``task`` with the library; returns the deadline the library recorded, or the
        refusal if the library raised.  A re-add supersedes the task's earlier schedule only once
        the library has accepted the new one (module doc: a refusal changes nothing).  The callback
        reports each fire with the library's clock and this handle's deadline."""
        entry = _Schedule()

        def fire() -> None:
            if self._replacing is entry:
                return  # the old entry of a re-add in progress: in Kafka's order it is gone already
            if entry.bound:
                self._events.append(ev.Fire(self.read_clock(), task, self.deadline_of(entry.handle)))
            else:  # run inside the scheduling call: reported at this place once the handle is known
                entry.early.append((len(self._events), self.read_clock()))

        old = self._replacing = self._entries.get(task)
        try:
            handle = self.schedule(task, delay, fire)
        except Exception as exc:  # noqa: BLE001 - the library's refusal is an answer, not a crash
            return refusal_of(exc, self.read_clock())
        finally:
            self._replacing = None
        entry.handle, entry.bound = handle, True
        self._entries[task] = entry
        if old is not None and not _same_key(old.handle, handle):
            self.unschedule(old.handle)  # superseded (the entry moves); the library's answer is not the add's
        exp = self.deadline_of(handle)
        for k, (at, clock) in enumerate(entry.early):  # each earlier insertion shifts the next by one
            self._events.insert(at + k, ev.Fire(clock, task, exp))
        return exp

    # ------------------------------------------------------------------ the extension hooks -------
    def start_library(self, start_ms: int) -> None:
        """A fresh library instance whose clock reads ``start_ms`` (at every ``reset``)."""
        raise NotImplementedError

    def stop_library(self) -> None:
        """Release the library instance (at ``reset`` and ``close``); optional."""

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        """Schedule ``callback`` (no arguments) after ``delay`` ms; return the library's handle."""
        raise NotImplementedError

    def deadline_of(self, handle: Any) -> int:
        """The expiration (ms) the library recorded for ``handle``."""
        raise NotImplementedError

    def unschedule(self, handle: Any) -> bool:
        """Cancel ``handle`` with the library's cancel; return the library's answer: was it still
        pending (read from the return value, the exception, or the library's state)."""
        raise NotImplementedError

    def advance_clock(self, time: int) -> None:
        """Move the library's clock to ``time`` and let it run what it considers due."""
        raise NotImplementedError

    def read_clock(self) -> int:
        """The library's clock reading, in ms."""
        raise NotImplementedError

    def count_pending(self) -> int:
        """The library's own count of pending calls (leave it out if the library has none: ``size``
        is then unobservable)."""
        raise NotImplementedError


class _Schedule:
    """One schedule of a task with the library (Kafka's ``TimerTaskEntry``): the library's handle
    once its scheduling call has returned, and the fires the library ran inside that call (their
    place among the request's events and the clock reading)."""

    __slots__ = ("handle", "bound", "early")

    def __init__(self) -> None:
        self.handle: Any = None
        self.bound = False
        self.early: list[tuple[int, int]] = []


def _same_key(old: Any, new: Any) -> bool:
    """Is ``new`` the handle ``old`` again: the same object, or the same plain key (an int, a
    string, bytes or None)?  A library that files schedules by a key of the task hands the key back
    and replaces the entry itself on a second schedule: cancelling the "old" handle after it would
    cancel the new entry."""
    if old is new:
        return True
    return type(old) is type(new) and isinstance(new, int | str | bytes) and old == new
