"""The per-operation API every implementation of wheelspec offers, as a typed ``Protocol``.

Three classes have this shape: :class:`wheelspec.reference.Simulation` (readable, profiles kafka and
strict-gt), :class:`wheelspec.optimized.Simulation` (numba arrays, profile kafka) and the step
model's :class:`wheelspec.reference.steps.StepSimulation`.  Each method is one public call of
Kafka's timer or purgatory; the operation records of :mod:`.ops` name these methods
(:data:`.ops.METHODS`) and their fields are the arguments, in order.  Every method records the events
it caused (:data:`.events.CAUSED`) and then its result event (:mod:`.results`).

The step model's methods take one leading argument, the thread context ``ctx`` (what
:func:`.ops.invoke` passes as ``leading``), and are generators that *return* the value below when a
scheduler runs them to the end; otherwise their parameters are these (``tests/test_spec_api.py``
compares the signatures).

Constructor: every implementation accepts :data:`CONSTRUCTOR` -- ``tick_ms`` (Kafka's
``tickMs``, default 1), ``wheel_size`` (``wheelSize``, default 20), ``start_ms`` (the virtual
clock's first reading, ``MockTime``'s start, default 0) and ``purge_interval`` (the purgatory's
``purgeInterval``, default 1000) -- by these names and in this order, and raises ``RangeError``
(:mod:`.limits`) for a value outside its range and ``TypeError`` for a non-integer.  Further
parameters are the implementation's own (``profile``, ``debug``, ``shards``, ``executor``,
``mutants``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .history import History
from .ops import Key, Op

#: the constructor parameters every implementation shares, with their defaults, in order
CONSTRUCTOR: tuple[tuple[str, int], ...] = (
    ("tick_ms", 1), ("wheel_size", 20), ("start_ms", 0), ("purge_interval", 1000),
)


@runtime_checkable
class PerOperationAPI(Protocol):
    """The methods (and clock reading) the reference, the optimized engine and the step model share.

    Unless a method says otherwise it raises nothing of its own; the ranges are :mod:`.limits`'s.
    """

    #: the tick the implementation was built with (``tickMs``)
    tick_ms: int

    @property
    def now(self) -> int:
        """The virtual clock's reading in ms (Kafka's ``Time.milliseconds()`` of ``MockTime``)."""
        ...

    # -- timer -------------------------------------------------------------------------------------
    def add(self, task_id: int, delay_ms: int) -> int:
        """``Timer.add(task)`` for task ``task_id`` with ``delayMs = delay_ms``: schedules it, or
        re-schedules it (a re-added task replaces its entry, ``TimerTask.setTimerTaskEntry``).  A
        task already due runs inside the call (its ``Fire`` precedes the ``Add`` event).

        Returns the expiration ``now + delay_ms``.  Raises ``RangeError`` for a task id outside
        ``[0, MAX_ID]`` or a delay outside ``[MIN_DELAY_MS, MAX_DELAY_MS]``, ``TypeError`` for a
        non-integer."""
        ...

    def cancel(self, task_id: int) -> bool:
        """``TimerTask.cancel()`` of task ``task_id``.

        Returns True iff a scheduled entry was unlinked (the task was pending); a task id never
        added is a no-op returning False (Kafka's ``TimerTask.cancel()`` with no entry)."""
        ...

    def advance_to(self, time_ms: int) -> None:
        """Move the virtual clock to ``time_ms`` (``MockTime``), then ``Timer.advanceClock`` until no
        bucket is due, for the timer and for the purgatory's timer
        (``DelayedOperationPurgatory.advanceClock``, which then applies its purge rule).

        Returns None.  Raises ``RangeError`` for a time outside ``[0, MAX_TIME_MS]``,
        ``TypeError`` for a non-integer, ``ValueError`` for a time before :attr:`now` (the clock
        never goes back)."""
        ...

    def size(self) -> int:
        """``Timer.size()``: returns the number of tasks the timer counts (pending tasks; under
        strict-gt every entry still in MockTimer's queue)."""
        ...

    # -- purgatory ---------------------------------------------------------------------------------
    def watch(self, op_id: int, delay_ms: int, keys: Sequence[Key], completable: bool = False,
              completes_on_retry: bool = False) -> bool:
        """``DelayedOperationPurgatory.tryCompleteElseWatch(op, keys)`` for a new operation
        ``op_id`` with timeout ``delay_ms`` whose ``tryComplete`` succeeds iff it is completable
        (Kafka's test ``MockDelayedOperation``; ``completes_on_retry``: see :class:`.ops.Watch`).

        Returns True iff the operation was completed inside the call.  Raises ``RangeError`` for
        an op id outside ``[0, MAX_ID]`` or a delay out of range, ``TypeError`` for a key that is
        not str or int (or keys that are not a sequence), ``ValueError`` for an empty key list or
        an op id watched before (an operation is watched once)."""
        ...

    def resubmit(self, op_id: int, keys: Sequence[Key]) -> bool:
        """``tryCompleteElseWatch(op, keys)`` again for the existing operation ``op_id``, in any
        state (watched, completed, expired): SEMANTICS.md, "Resubmit".

        Returns True iff this call completed the operation.  Raises ``KeyError`` for an op id never
        watched, ``TypeError`` / ``ValueError`` for keys as :meth:`watch` does."""
        ...

    def set_completable(self, op_id: int, value: bool = True) -> None:
        """Make operation ``op_id``'s ``tryComplete`` succeed (or fail) from now on; completes
        nothing by itself.  Returns None.  Raises ``KeyError`` for an op id never watched."""
        ...

    def check_and_complete(self, key: Key) -> int:
        """``DelayedOperationPurgatory.checkAndComplete(key)``: returns the number of operations
        it completed (0 for a key nobody watches).  Raises ``TypeError`` for a key that is not str
        or int."""
        ...

    def cancel_for_key(self, key: Key) -> list[int]:
        """``DelayedOperationPurgatory.cancelForKey(key)``: returns the ids of the operations it
        removed from the key's watch list, in watch order.  Raises ``TypeError`` for a key that is
        not str or int."""
        ...

    def force_complete(self, op_id: int) -> bool:
        """``DelayedOperation.forceComplete()`` of operation ``op_id``, called from outside the
        purgatory.  Returns True iff this call won the completed flag.  Raises ``KeyError`` for an
        op id never watched."""
        ...

    def watched(self) -> int:
        """``DelayedOperationPurgatory.watched()``: returns the number of entries in all watch
        lists (an operation counts once per key)."""
        ...

    def num_delayed(self) -> int:
        """``DelayedOperationPurgatory.numDelayed()``: returns the size of the purgatory's timer."""
        ...

    # -- data-driven ---------------------------------------------------------------------------------
    def apply(self, op: Op) -> object:
        """Execute one operation record of :mod:`.ops` (:func:`.ops.invoke`): returns what the
        method the record names returns, and raises what it raises (``TypeError`` for something
        that is not an operation)."""
        ...


@runtime_checkable
class RecordingSimulation(PerOperationAPI, Protocol):
    """What the reference and the optimized engine add to :class:`PerOperationAPI` (the step model
    records into ``events`` / ``stamped`` instead): the history and the claimed profile, which is
    what an adapter wraps (:class:`wheelspec.conformance.adapters.base.SimulationAdapter`).  Both
    get this API from :class:`.simulation.SimulationDriver` and supply only their engine."""

    #: every event recorded so far, in order (caused events, then each request's result event)
    history: History
    #: the profile the implementation claims (:data:`.profiles.PROFILE_NAMES`)
    profile: str

    def close(self) -> None:
        """Release threads and executors (Kafka's ``Timer.close()`` / ``shutdown()``); returns None."""
        ...
