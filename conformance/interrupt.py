"""Interruptions every command survives: SIGINT and SIGTERM as one exception, reports written atomically.

A CI job that runs out of time sends SIGTERM (then SIGKILL after a grace period); a person
presses Ctrl-C (SIGINT).  Python turns only SIGINT into an exception: SIGTERM's default action
kills the process on the spot, so nothing a command judged so far reaches its reports.
:func:`signals_raise` makes both raise :class:`Interrupted` (a :class:`KeyboardInterrupt`, so every
``except KeyboardInterrupt`` and ``finally`` written for Ctrl-C also runs for a CI timeout);
``wheelspec``'s ``main()`` installs it around every command and maps the exception to the
conventional exit code ``128 + signal`` (130 for SIGINT, 143 for SIGTERM) with one line.

:func:`deferred` holds signals back while a report is being written, and :func:`atomic_write_text`
writes through a temporary file in the same directory and ``os.replace``: a reader (or a
second signal) sees the previous report or the new one, never half of one.

Light on purpose (os, signal, tempfile): ``main()`` imports it for every invocation.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

#: The signals turned into :class:`Interrupted`.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was stopped by ``signum`` (SIGINT or SIGTERM) before it finished."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        # The shell's convention for "ended by signal N" (what `$?` shows after Ctrl-C), so a CI
        # log reads the same whether the process died or stopped cleanly.
        return 128 + self.signum

    def __str__(self) -> str:
        return f"interrupted by {self.signal_name}"


def as_interrupted(e: KeyboardInterrupt) -> Interrupted:
    """``e`` as an :class:`Interrupted` (a plain KeyboardInterrupt, raised before the handlers
    were installed or by code that raises it itself, counts as SIGINT)."""
    return e if isinstance(e, Interrupted) else Interrupted(signal.SIGINT)


# While > 0 (inside `deferred()`), signals are remembered instead of raised.
_state = threading.local()
_pending: list[int] = []


def _handler(signum: int, frame: FrameType | None) -> None:
    if getattr(_state, "defer", 0) > 0:
        _pending.append(signum)
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted`; the previous handlers are
    restored after it (``main()`` is also called in-process by tests).  Outside the main thread,
    where Python allows no signal handlers, the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the (short) block, then raise :class:`Interrupted` for the
    first that arrived.  For writing a report: a second Ctrl-C, or the SIGTERM a CI runner sends
    after the first, must not cut a report in half."""
    _state.defer = getattr(_state, "defer", 0) + 1
    try:
        yield
    finally:
        _state.defer -= 1
    if _state.defer == 0 and _pending:
        signum = _pending[0]
        _pending.clear()
        raise Interrupted(signum)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` (creating its directory) through a temporary file in the same
    directory and ``os.replace``, under :func:`deferred`.  Raises :class:`OSError`."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with deferred():
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            # mkstemp creates the file 0600; a report is an ordinary file (umask applies).
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return p
