"""Protocol transcripts (``--log-protocol FILE``): every line the runner writes to a subprocess
adapter and every line it reads back, with a timestamp and the direction.

The point is debugging an adapter in another language: the transcript shows exactly what was sent
and answered, in order, including the handshake, the resets, the final ``bye`` and what the runner
saw go wrong (a timeout, an exit).  One file covers every adapter process of the command (each
restart is a new process with its own number).  In-process implementations (``reference``,
``optimized``, ``package.module:factory``) have no wire and leave nothing in it.

Format, one entry per line (``docs/guides/KITS.md`` shows an excerpt)::

    # wheelspec protocol transcript, started 2025-01-01T12:00:00.000000Z
    0.004211 [1] ! start pid 4242: node timer.js
    0.005120 [1] > {"id":0,"type":"hello","protocol":1}
    0.061877 [1] < {"id":0,"ok":true,"protocol":1,...}

the seconds since the transcript started, the adapter process (numbered from 1), the direction
(``>`` runner to adapter, ``<`` adapter to runner, ``!`` what the runner did or saw) and the line as
sent or received (non-printable characters escaped, so that one entry stays one line).

:class:`~wheelspec.conformance.adapters.subprocess_adapter.SubprocessAdapter` writes to the
transcript that is open (:func:`recording`) when it starts its process.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import time
from collections.abc import Iterator

from wheelspec.spec.errors import UserError

#: directions of an entry
SENT, RECEIVED, NOTE = ">", "<", "!"

_current: Transcript | None = None


class Transcript:
    """An open transcript file; safe to write from several threads."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            # line-buffered: whatever stops the command, the lines up to it are in the file
            self._file = open(path, "w", encoding="utf-8", buffering=1)  # closed by close()
        except OSError as e:
            raise UserError(f"--log-protocol {path}: cannot write the transcript ({e.strerror or e})") from None
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self.adapters = 0
        self.entries = 0
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self._file.write(f"# wheelspec protocol transcript, started {started}; columns: seconds since then, "
                         f"adapter process, direction ({SENT} runner to adapter, {RECEIVED} adapter to runner, "
                         f"{NOTE} what the runner did or saw), line\n")

    def adapter(self) -> int:
        """The number of a new adapter process."""
        with self._lock:
            self.adapters += 1
            return self.adapters

    def write(self, adapter: int, direction: str, line: bytes | str) -> None:
        text = line.decode("utf-8", "backslashreplace") if isinstance(line, (bytes, bytearray)) else line
        text = text.rstrip("\n")
        if not text.isprintable():
            text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
        with self._lock:
            if self._file.closed:
                return
            self._file.write(f"{time.monotonic() - self._t0:.6f} [{adapter}] {direction} {text}\n")
            self.entries += 1

    def close(self) -> None:
        with self._lock:
            if self._file.closed:
                return
            if self.adapters == 0:
                self._file.write("# no subprocess adapter ran: in-process implementations have no wire to record\n")
            self._file.close()


def current() -> Transcript | None:
    """The transcript being recorded, if any."""
    return _current


@contextlib.contextmanager
def recording(path: str) -> Iterator[Transcript]:
    """Record every subprocess adapter started inside the ``with`` block into ``path``."""
    global _current
    if path == "-":
        raise UserError("--log-protocol needs a FILE: the transcript does not share stdout with the reports")
    transcript = Transcript(path)
    previous, _current = _current, transcript
    try:
        yield transcript
    finally:
        _current = previous
        transcript.close()
