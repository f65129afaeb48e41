"""The runner's side of the adapter protocol (versions 1 and 2): an implementation in another process (any language).

Robustness is the point of this module: the implementation under test may hang, crash, print
garbage, truncate a line, log megabytes to stderr, fork helpers or speak another protocol version.
Nothing here blocks without a deadline, and nothing the child does can stall or crash the runner:

* **deadlines both ways**: a request is written through a non-blocking pipe and a selector, its
  answer read the same way, both within the request's timeout (an adapter that stops reading its
  stdin is a timeout, not a hung runner);
* **a process group per adapter** (``start_new_session``): on close, error or timeout the whole
  group is killed, so a forked helper holding stdout is not orphaned; the child's own exit is
  watched while waiting, so "exited with code 3" is reported as such even if a grandchild keeps
  stdout open;
* **a linear line reader**: a ``bytearray`` scanned for the newline from where the last scan
  stopped, with a line-size limit (:data:`MAX_LINE_BYTES`, ``max_line``);
* **stderr** is drained by a thread in large chunks into a bounded log keeping the first lines and
  the last ones (:class:`StderrLog`), control characters stripped; both ends are quoted on error.

Two kinds of trouble are told apart:

* :class:`LivenessError` (a subclass of :class:`AdapterError`): no answer within the timeout, or
  the process died.  The campaign and the corpus make it a finding of the run it happened in
  (property ``responds``), restart the adapter (:meth:`SubprocessAdapter.restart`) and go on;
* any other :class:`AdapterError`: a protocol violation (garbage, a malformed response, a wrong id
  or version) or a configuration error (cannot start, the hello or a restart fails): one line
  naming the adapter, the request and the field, exit code 2.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from typing import Any, NoReturn

from wheelspec.conformance.adapters import transcript as _transcript
from wheelspec.conformance.adapters.protocol import (
    PROTOCOL_VERSIONS,
    Capabilities,
    Config,
    Hello,
    ProtocolError,
    Response,
    clean_text,
    decode_response,
    hello_request,
    json_short,
    parse_line,
)
from wheelspec.spec import ops
from wheelspec.spec.errors import AdapterError

#: the longest response line accepted by default (a longer one is a protocol error)
MAX_LINE_BYTES = 16 * 1024 * 1024
#: bytes asked of the pipe per read (stdout and stderr)
CHUNK = 1 << 20
#: how long close() waits for the adapter to exit after ``bye`` before killing its group
BYE_GRACE = 2.0


class LivenessError(AdapterError):
    """The adapter did not answer a request within its timeout (``reason`` ``"timeout"``) or died
    (``"exit"``): a finding of the run it happened in (property ``responds``), not the end of the run.

    ``problem`` is the message without the adapter's name and the request (a finding's text);
    :func:`wheelspec.conformance.check.runner.run_ops` sets ``step`` (the operation's index, None
    for the ``reset``) and ``run`` (the steps answered before it)."""

    def __init__(self, message: str, *, problem: str, reason: str, request: dict[str, Any]) -> None:
        super().__init__(message)
        self.problem = problem
        self.reason = reason
        self.request = request
        self.step: int | None = None
        self.run: Any = None


class StderrLog:
    """A child's stderr, bounded: the first :attr:`HEAD` lines, the last :attr:`TAIL` ones and a
    count of the lines in between; each line cleaned of control characters and cut at
    :attr:`WIDTH` characters.  Fed in chunks (any size, lines split anywhere)."""

    HEAD, TAIL, WIDTH = 10, 10, 300

    def __init__(self) -> None:
        self.head: list[str] = []
        self.tail: collections.deque[str] = collections.deque(maxlen=self.TAIL)
        self.lines = 0
        self.reads = 0
        self._partial = bytearray()
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.reads += 1
            self._partial += chunk
            *complete, rest = self._partial.split(b"\n")
            # Only the start of an over-long line is ever shown: keep memory bounded.
            self._partial = bytearray(rest[: 4 * self.WIDTH])
            for raw in complete:
                self._add(raw)

    def finish(self) -> None:
        """End of stream: the last line had no newline."""
        with self._lock:
            if self._partial:
                self._add(bytes(self._partial))
                self._partial = bytearray()

    def _add(self, raw: bytes | bytearray) -> None:
        line = clean_text(bytes(raw[: 4 * self.WIDTH]).decode("utf-8", "replace"), self.WIDTH).strip()
        if not line:
            return
        self.lines += 1
        if len(self.head) < self.HEAD:
            self.head.append(line)
        else:
            self.tail.append(line)

    def summary(self, head: int = 5, tail: int = 3) -> str:
        """One line: ``stderr: first | lines ... [n lines] ... last | lines``."""
        with self._lock:
            first = self.head[:head]
            later = self.head[head:] + list(self.tail)
            shown_tail = later[-tail:] if later else []
            skipped = self.lines - len(first) - len(shown_tail)
        if not first:
            return "no stderr output"
        out = "stderr: " + " | ".join(first)
        if skipped > 0:
            out += f" | ... ({skipped} more lines) ..."
        if shown_tail:
            out += " | " + " | ".join(shown_tail)
        return out


class SubprocessAdapter:
    """An :class:`~wheelspec.conformance.adapters.base.Adapter` speaking the protocol to a child
    process, in the version its hello chose (:data:`PROTOCOL_VERSIONS` are offered).

    ``timeout`` bounds every request (writing it and reading its answer); ``start_timeout`` the
    handshake (an adapter may need time to start a JVM or compile); ``max_line`` the length of a
    response line.  The child runs in its own process group, killed whole on close or error."""

    #: every line of request handling is the runner's own code: an exception other than an
    #: AdapterError escaping ``request`` is a bug of wheelspec (runner.run_ops reads this)
    out_of_process = True

    def __init__(self, argv: list[str], *, timeout: float = 10.0, start_timeout: float = 30.0,
                 label: str | None = None, env: dict[str, str] | None = None,
                 max_line: int = MAX_LINE_BYTES) -> None:
        self.argv = list(argv)
        self.label = label or " ".join([os.path.basename(self.argv[0])] + self.argv[1:])
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_line = max_line
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._scan = 0  # no newline in self._buf[:self._scan]
        self._stderr = StderrLog()
        self._stderr_thread: threading.Thread | None = None
        self._n = 0  # request number (the hello is request 0)
        self._hello: Hello | None = None
        self._rsel: selectors.BaseSelector | None = None
        self._wsel: selectors.BaseSelector | None = None
        self._last_req: dict[str, Any] = {}
        #: counters for tests and diagnostics: stdout reads, bytes searched for a newline, restarts
        self.reads = 0
        self.scanned = 0
        self.restarts = 0
        #: the --log-protocol transcript this process writes to (set at each start) and its number there
        self._log: _transcript.Transcript | None = None
        self._log_n = 0

    # -- Adapter interface --------------------------------------------------------------------------
    def hello(self) -> Hello:
        if self._hello is None:
            self._start()
        assert self._hello is not None
        return self._hello

    def reset(self, config: Config) -> None:
        msg = self._call({"type": "reset", "config": config.to_dict()}, self.timeout)
        if msg.get("ok") is not True:
            self._fail(self._last_req, f"reset was refused: {json_short(msg)}")

    def request(self, op: ops.Op) -> Response:
        msg = self._call({"type": "op", "op": op.to_dict()}, self.timeout)
        try:
            return decode_response(msg, op, self._hello.capabilities if self._hello is not None else None)
        except ProtocolError as e:
            self._fail(self._last_req, f"bad response: {e}")

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            self._close_selectors()
            return
        try:
            if not self._exited(proc):
                self._n += 1
                line = json.dumps({"id": self._n, "type": "bye"}).encode() + b"\n"
                self._note(_transcript.SENT, line)
                try:
                    self._write(proc, line, time.monotonic() + 1.0)
                except (OSError, _WriteTimeout):
                    pass
                self._wait_exit(proc, BYE_GRACE)
        finally:
            self._kill()

    def restart(self) -> Hello:
        """Kill the process group, start the command again and redo the handshake.  A start or
        handshake that fails, or a hello that differs from the first one, is a configuration error
        (:class:`AdapterError`, exit 2): the runner cannot go on with this implementation."""
        first = self._hello
        self._kill()
        self._hello = None
        try:
            self._start()
        except AdapterError as e:
            self._hello = first
            raise AdapterError(f"restart failed: {e}") from None
        if first is not None and self._hello != first:
            again = self._hello
            self._kill()
            self._hello = first
            raise AdapterError(f"adapter {self.label!r}: restart failed: the hello answered differently "
                               f"({json_short(again and again.capabilities.to_dict())} instead of "
                               f"{json_short(first.capabilities.to_dict())})")
        self.restarts += 1
        assert self._hello is not None
        return self._hello

    @property
    def requests_sent(self) -> int:
        return self._n

    @property
    def stderr(self) -> StderrLog:
        """The current process's stderr (first and last lines)."""
        return self._stderr

    # -- protocol extensions (requests other than reset/op, e.g. real-time mode's ``rt_run``) ----
    def call(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request ``body`` (its ``type`` and fields; the id is added here) and return
        the answer, a JSON object with the matching id.  Starts the child if needed; a hang,
        crash or malformed answer raises :class:`AdapterError` naming the request."""
        return self._call(body, timeout)

    def fail_last(self, problem: str) -> NoReturn:
        """Reject the answer to the last request: stop the child and raise :class:`AdapterError`
        naming that request and ``problem``."""
        self._fail(self._last_req, problem)

    # -- internals: process --------------------------------------------------------------------------
    def _start(self) -> None:
        self._kill()
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=self._env, bufsize=0,
                                          start_new_session=True)
        except OSError as e:
            raise AdapterError(f"adapter {self.label!r}: cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        proc = self._proc
        self._log = _transcript.current()
        if self._log is not None:
            self._log_n = self._log.adapter()
            self._note(_transcript.NOTE, f"start pid {proc.pid}: {' '.join(self.argv)}")
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdin.fileno(), False)
        self._buf, self._scan = bytearray(), 0
        self._stderr = StderrLog()
        self._stderr_thread = threading.Thread(target=_drain, args=(proc.stderr.fileno(), self._stderr),
                                               daemon=True, name=f"stderr of {self.label}")
        self._stderr_thread.start()
        self._n = -1
        try:
            msg = self._call(hello_request(), self.start_timeout)
        except LivenessError as e:
            # Not a finding: the implementation never got going.  A configuration error (exit 2).
            raise AdapterError(str(e)) from None
        req = self._last_req
        proto = msg.get("protocol")
        if isinstance(proto, bool) or not isinstance(proto, int) or proto not in PROTOCOL_VERSIONS:
            self._fail(req, f"speaks protocol version {json_short(proto)}, this runner speaks "
                            f"{' or '.join(map(str, PROTOCOL_VERSIONS))}")
        if msg.get("ok") is not True:
            self._fail(req, f"refused the handshake: {json_short(msg)}")
        name = msg.get("name")
        if not isinstance(name, str) or not clean_text(name).strip():
            self._fail(req, f"hello response needs a non-empty \"name\": {json_short(msg)}")
        try:
            caps = Capabilities.from_dict(msg.get("capabilities", {}), protocol=proto)
        except ProtocolError as e:
            self._fail(req, str(e))
        version = msg.get("version", "")
        name = clean_text(name, 200).strip()
        self._hello = Hello(name, caps, clean_text(version if isinstance(version, str) else json_short(version), 200))
        self.label = f"{name} ({self.label})" if name not in self.label else self.label

    def _exited(self, proc: subprocess.Popen[bytes]) -> bool:
        """Has the child exited?  Without reaping it (``WNOWAIT``): while it is an unreaped zombie
        its pid, which is also its process group's id, cannot be reused, so killing the group
        afterwards cannot hit another process."""
        if proc.returncode is not None:
            return True
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # reaped elsewhere
            return proc.poll() is not None
        except AttributeError:  # no waitid (not Linux): poll reaps, accept the tiny window
            return proc.poll() is not None

    def _wait_exit(self, proc: subprocess.Popen[bytes], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self._exited(proc):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _kill(self) -> None:
        """Kill the child's whole process group, reap the child, wait for the stderr thread and
        close the pipes.  Idempotent."""
        self._close_selectors()
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.kill()
            except OSError:
                pass
            proc.wait()
        self._note(_transcript.NOTE, f"stopped: {self._status(proc)}")
        t = self._stderr_thread
        if t is not None:
            t.join(timeout=2)
        self._stderr.finish()
        for f in (proc.stdout, proc.stderr, proc.stdin):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass

    def _status(self, proc: subprocess.Popen[bytes]) -> str:
        code = proc.returncode
        if code is None:
            return "closed its stdout"
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def _note(self, direction: str, line: bytes | str) -> None:
        """One entry of the --log-protocol transcript (:mod:`.transcript`), if one is recorded."""
        if self._log is not None:
            self._log.write(self._log_n, direction, line)

    def _close_selectors(self) -> None:
        for sel in (self._rsel, self._wsel):
            if sel is not None:
                sel.close()
        self._rsel = self._wsel = None

    # -- internals: one request -----------------------------------------------------------------------
    def _call(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self._proc is None:
            if self._hello is not None:
                self.restart()  # after a hang or crash: a fresh process for the next run
            else:
                self._start()
        self._n += 1
        req = {"id": self._n, **body}
        self._last_req = req
        line = json.dumps(req, separators=(",", ":")).encode() + b"\n"
        self._note(_transcript.SENT, line)
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + timeout
        try:
            self._write(proc, line, deadline)
        except _WriteTimeout as w:
            self._unresponsive(req, "timeout", f"no response within {timeout:g} s (it stopped reading its stdin: "
                                               f"{w.written} of {len(line)} bytes of the request written)")
        except (BrokenPipeError, OSError, ValueError):
            self._crashed(req)
        raw = self._readline(req, timeout, deadline)
        self._note(_transcript.RECEIVED, raw)
        try:
            msg = parse_line(raw)
        except ProtocolError as e:
            self._fail(req, str(e))
        if not isinstance(msg, dict):
            self._fail(req, f"sent JSON that is not an object: {json_short(msg)}")
        if msg.get("id") != self._n:
            self._fail(req, f"answered with id {json_short(msg.get('id'))}, expected {self._n}: {json_short(msg)}")
        return msg

    def _write(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        if self._wsel is None:
            self._wsel = selectors.DefaultSelector()
            self._wsel.register(fd, selectors.EVENT_WRITE)
        view = memoryview(data)
        done = 0
        while done < len(data):
            try:
                done += os.write(fd, view[done:])
                continue
            except BlockingIOError:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise _WriteTimeout(done)
            self._wsel.select(min(left, 0.1))
            if self._exited(proc):
                raise BrokenPipeError("the adapter exited")

    def _readline(self, req: dict[str, Any], timeout: float, deadline: float) -> bytes:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        if self._rsel is None:
            self._rsel = selectors.DefaultSelector()
            self._rsel.register(fd, selectors.EVENT_READ)
        sel = self._rsel
        buf = self._buf
        while True:
            self.scanned += len(buf) - self._scan
            i = buf.find(b"\n", self._scan)
            if i >= 0:
                line = bytes(buf[:i])
                del buf[: i + 1]
                self._scan = 0
                return line
            self._scan = len(buf)
            if len(buf) > self.max_line:
                self._fail(req, f"sent a line longer than the limit of {_size(self.max_line)} "
                                f"(starts {json_short(bytes(buf[:80]).decode('utf-8', 'replace'))})")
            left = deadline - time.monotonic()
            if left <= 0:
                partial = (f" (partial output {json_short(bytes(buf[:200]).decode('utf-8', 'replace'))})"
                           if buf else "")
                self._unresponsive(req, "timeout", f"no response within {timeout:g} s{partial}")
            # Short slices: the child's own exit is noticed even if a grandchild holds stdout open.
            if not sel.select(min(left, 0.1)):
                if self._exited(proc) and not sel.select(0):
                    self._crashed(req, truncated=bytes(buf) if buf else None)
                continue
            chunk = os.read(fd, CHUNK)
            self.reads += 1
            if not chunk:  # EOF: the adapter exited or closed stdout
                self._crashed(req, truncated=bytes(buf) if buf else None)
            buf += chunk

    # -- internals: failures --------------------------------------------------------------------------
    def _crashed(self, req: dict[str, Any], truncated: bytes | None = None) -> NoReturn:
        proc = self._proc
        assert proc is not None
        self._wait_exit(proc, 2.0)
        exited = self._exited(proc)
        if exited:
            self._kill()  # reaps it: the exit code is known now
        status = self._status(proc) if exited else "closed its stdout"
        what = status
        if truncated is not None:
            what += f" after a truncated line {json_short(truncated[:200].decode('utf-8', 'replace'))}"
        self._unresponsive(req, "exit", what)

    def _unresponsive(self, req: dict[str, Any], reason: str, problem: str) -> NoReturn:
        self._note(_transcript.NOTE, problem)
        self._kill()  # the whole group; the stderr thread has read everything there was
        problem = clean_text(f"{problem}; {self._stderr.summary()}")
        raise LivenessError(self._message(req, problem), problem=problem, reason=reason, request=req)

    def _fail(self, req: dict[str, Any], problem: str) -> NoReturn:
        self._note(_transcript.NOTE, problem)
        self._kill()
        raise AdapterError(self._message(req, problem))

    def _message(self, req: dict[str, Any], problem: str) -> str:
        n = req.get("id")
        what = req.get("op", req.get("type"))
        return clean_text(f"adapter {self.label!r}: request #{n} {json_short(what, 100)}: {problem}")


class _WriteTimeout(Exception):
    def __init__(self, written: int) -> None:
        super().__init__(written)
        self.written = written


def _drain(fd: int, log: StderrLog) -> None:
    """Thread body: read a child's stderr in large chunks until end of file."""
    try:
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            log.feed(chunk)
    except (OSError, ValueError):
        pass
    log.finish()


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"
