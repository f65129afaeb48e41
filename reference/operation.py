"""``DelayedOperation``: a request that completes once, by whoever gets there first.

An operation is a :class:`TimerTask` whose delay is its timeout.  It completes exactly once: the
atomic ``completed`` flag is set by a compare-and-set in ``force_complete``, and only the caller
that wins it cancels the timer entry and runs ``on_complete``.  Completion is attempted by
``try_complete`` (from the purgatory, under the operation's lock) and by the timer: when the
timeout fires, ``run`` calls ``force_complete`` and, if it won, ``on_expiration`` *after*
``on_complete``.

wheelspec records *who* won the flag (``via`` in the ``Complete`` event: try, check, expire,
force).  Kafka has no such notion; the purgatory here says who is asking before it calls
``try_complete``, which changes nothing else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from wheelspec.spec.events import Complete, Event, Expire, TryComplete

from .clock import Clock
from .task import TimerTask


class DelayedOperation(TimerTask):
    def __init__(self, delay_ms: int, op_id: int | None = None, lock: threading.RLock | None = None) -> None:
        super().__init__(delay_ms, task_id=op_id)
        self._completed = False
        self._cas = threading.Lock()  # makes the test-and-set of `completed` atomic
        self.lock = lock if lock is not None else threading.RLock()
        self._asker = "force"

    # -- to be provided by a concrete operation ---------------------------------------------------
    def try_complete(self) -> bool:
        """Check the completion condition; if met, call ``force_complete`` and return its result."""
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        raise NotImplementedError

    # -- the protocol ------------------------------------------------------------------------------
    def force_complete(self) -> bool:
        """Complete now, if nobody has; True iff this call did it."""
        with self._cas:
            if self._completed:
                return False
            self._completed = True
        self.cancel()  # take it off the timer: a completed operation must not expire
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    @property
    def completed_via(self) -> str:
        """Who is asking right now (meaningful inside ``on_complete``)."""
        return self._asker

    @contextmanager
    def asking(self, via: str) -> Iterator[None]:
        before, self._asker = self._asker, via
        try:
            yield
        finally:
            self._asker = before

    def safe_try_complete_or_else(self, f: Callable[[], None]) -> bool:
        """Under the lock: try; if that fails run ``f`` (watch the keys) and try again.  The second
        try closes the window in which the condition became true after the first try but before the
        operation was watched, when no ``checkAndComplete`` would have seen it."""
        with self.lock, self.asking("try"):
            if self.try_complete():
                return True
            f()
            return self.try_complete()

    def safe_try_complete(self) -> bool:
        """Under the lock: try, unless already completed (KAFKA-17848: never call try_complete on a
        completed operation)."""
        with self.lock, self.asking("check"):
            if self.is_completed:
                return False
            return self.try_complete()

    def run(self) -> None:
        """The timer fired: the timeout elapsed."""
        with self.asking("expire"):
            if self.force_complete():
                self.on_expiration()


class MockDelayedOperation(DelayedOperation):
    """Kafka's test operation: ``try_complete`` succeeds iff ``completable`` is set. Reports its
    callbacks as ``Complete`` / ``Expire`` events, and with ``report_tries`` each ``tryComplete``
    call as a ``TryComplete`` event when it returns (after the ``Complete`` it caused)."""

    def __init__(self, delay_ms: int, op_id: int, clock: Clock,
                 listener: Callable[[Event], None] | None = None, completable: bool = False,
                 completes_on_retry: bool = False, report_tries: bool = False) -> None:
        super().__init__(delay_ms, op_id)
        self.op_id = op_id
        self.completable = completable
        # The condition turns true right after tryComplete's first look (spec.ops.Watch).
        self.completes_on_retry = completes_on_retry
        self._clock = clock
        self._listener = listener
        self.completions = 0
        self.expirations = 0
        self.report_tries = report_tries

    def try_complete(self) -> bool:
        result = self._condition()
        if self.report_tries and self._listener is not None:
            self._listener(TryComplete(self._clock.now_ms(), self.op_id, result))
        return result

    def _condition(self) -> bool:
        """Kafka's test tryComplete: ``if (completable) forceComplete() else false`` (on a completed
        operation forceComplete loses the flag, so the call returns false)."""
        if self.completable:
            return self.force_complete()
        if self.completes_on_retry:
            self.completes_on_retry = False
            self.completable = True  # the satisfying event arrives after this first look
        return False

    def on_complete(self) -> None:
        self.completions += 1
        if self._listener is not None:
            self._listener(Complete(self._clock.now_ms(), self.op_id, self.completed_via))

    def on_expiration(self) -> None:
        self.expirations += 1
        if self._listener is not None:
            self._listener(Expire(self._clock.now_ms(), self.op_id))
