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
  stopped, with a line-size limit (:data:`MAX_LINE_BYTES`, ``max_line``); every whole line a read
  brought is split off at once (a read brings a pipelined window's answers), and the answers
  after the first are taken from a queue without another search;
* **stderr** is drained by a thread in large chunks into a bounded log keeping the first lines and
  the last ones (:class:`StderrLog`), control characters stripped; both ends are quoted on error.
* **pipelining** (protocol 2, capability ``pipeline`` N; ``docs/guides/PROTOCOL.md`` section 11):
  :meth:`SubprocessAdapter.submit` queues a run's reset and operations and writes up to N of them
  ahead of their answers (those a window holds go out in one write), :meth:`~SubprocessAdapter.receive`
  reads the answers in order while writing the rest as the window opens; reading and writing share
  one selector, so neither side can block the other.  Every request keeps its own deadline (from
  the start of its writing, or from the answer before it if that came later) and a hang or crash
  names the first request without an answer.  With a window of 1 (a version-1 adapter, or none
  declared) the same code is plain request/response.

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
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from wheelspec.conformance.adapters import transcript as _transcript
from wheelspec.conformance.adapters.answers import decode_response
from wheelspec.conformance.adapters.lines import encode_line, parse_line
from wheelspec.conformance.adapters.protocol import (
    MAX_PIPELINE,
    PROTOCOL_VERSIONS,
    Capabilities,
    Config,
    Hello,
    ProtocolError,
    Response,
    clean_text,
    hello_request,
    json_short,
)
from wheelspec.spec import ops
from wheelspec.spec.errors import AdapterError, WheelspecError

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
                 max_line: int = MAX_LINE_BYTES, pipeline: int = MAX_PIPELINE) -> None:
        self.argv = list(argv)
        self.label = label or " ".join([os.path.basename(self.argv[0])] + self.argv[1:])
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_line = max_line
        #: the most requests sent ahead of their answers, whatever the adapter declares (1: never)
        self.max_pipeline = max(1, pipeline)
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = bytearray()
        self._scan = 0  # no newline in self._buf[:self._scan]
        #: whole lines read ahead of the answer being read (one read brings a window's answers)
        self._lines: collections.deque[bytes] = collections.deque()
        self._stderr = StderrLog()
        self._stderr_thread: threading.Thread | None = None
        self._n = 0  # request number (the hello is request 0)
        self._hello: Hello | None = None
        self._rsel: selectors.BaseSelector | None = None
        self._wsel_on = False  # the child's stdin is registered in _rsel (output waits for room)
        self._last_req: dict[str, Any] = {}
        # requests queued and not yet written; written (or being written) and not yet answered;
        # the one being written; when the last answer was read; the child's stdin is closed
        self._unsent: collections.deque[_Pending] = collections.deque()
        self._inflight: collections.deque[_Pending] = collections.deque()
        self._out = bytearray()  # requests started and not yet taken by the pipe
        self._queued_bytes = self._written_bytes = 0  # bytes started / taken by the pipe, this process
        self._answered_at = 0.0
        self._broken = False
        #: counters for tests and diagnostics: stdout reads, bytes searched for a newline, restarts
        self.reads = 0
        self.scanned = 0
        self.restarts = 0
        #: the most requests that were ever written and unanswered at once (tests: the window holds)
        self.max_in_flight = 0
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
        return self._decode(self._call({"type": "op", "op": op.to_dict()}, self.timeout), op)

    def _decode(self, msg: dict[str, Any], op: ops.Op) -> Response:
        try:
            return decode_response(msg, op, self._hello.capabilities if self._hello is not None else None)
        except ProtocolError as e:
            self._fail(self._last_req, f"bad response: {e}")

    # -- pipelining (docs/guides/PROTOCOL.md, section 11) ----------------------------------------------------
    @property
    def pipeline(self) -> int:
        """How many requests of a run may be in flight: the adapter's declared ``pipeline`` under
        protocol 2 (capped by the constructor's ``pipeline``), else 1."""
        h = self.hello()
        if h.capabilities.protocol < 2:
            return 1
        return max(1, min(h.capabilities.pipeline, self.max_pipeline))

    def submit(self, config: Config, operations: Sequence[ops.Op]) -> None:
        """Queue a ``reset`` to ``config`` and ``operations`` and write as many of them as the
        window (:attr:`pipeline`) allows; :meth:`receive_reset` and then :meth:`receive`, once per
        operation in order, read the answers (writing the rest as answers come in).  With a window
        of 1 this is exactly request/response."""
        if self._unsent or self._inflight:
            raise RuntimeError("submit while requests of another run are in flight")
        self._enqueue({"type": "reset", "config": config.to_dict()}, self.timeout)  # (starts the child if needed)
        n, timeout, unsent = self._n, self.timeout, self._unsent
        for op in operations:  # _enqueue, inlined: this loop runs once per checked operation
            n += 1
            req = {"id": n, "type": "op", "op": op.to_dict()}
            unsent.append(_Pending(req, encode_line(req), timeout, op))
        self._n = n
        self._pump()

    def receive_reset(self) -> None:
        """The answer to the ``reset`` of :meth:`submit`."""
        msg = self._answer()
        if msg.get("ok") is not True:
            self._fail(self._last_req, f"reset was refused: {json_short(msg)}")

    def receive(self) -> Response:
        """The answer to the next operation of :meth:`submit`, decoded."""
        op = self._inflight[0].op if self._inflight else (self._unsent[0].op if self._unsent else None)
        if op is None:
            raise RuntimeError("receive without a submitted operation")
        return self._decode(self._answer(), op)

    def abandon(self) -> None:
        """Drop a submitted run whose answers will not be read (the runner failed meanwhile): the
        process is killed, so no stale answer can reach the next run; the next request restarts it."""
        if self._unsent or self._inflight:
            self._kill()

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            self._close_selectors()
            return
        try:
            # (with requests of an abandoned run still in flight there is no clean end: just the kill)
            if not self._exited(proc) and not (self._inflight or self._unsent):
                self._n += 1
                line = encode_line({"id": self._n, "type": "bye"})
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
        # Answers are read without asking the selector first (:meth:`_readline`): they are
        # usually waiting already, and a poll is a system call per read.
        os.set_blocking(proc.stdout.fileno(), False)
        self._buf, self._scan = bytearray(), 0
        self._lines.clear()
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
        self._unsent.clear()
        self._inflight.clear()
        self._lines.clear()
        self._out = bytearray()
        self._queued_bytes = self._written_bytes = 0
        self._broken = False
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
        if self._rsel is not None:
            self._rsel.close()
        self._rsel = None
        self._wsel_on = False

    # -- internals: requests in flight ---------------------------------------------------------------
    def _enqueue(self, body: dict[str, Any], timeout: float, op: ops.Op | None = None) -> _Pending:
        """Give ``body`` the next id and queue it; it is written as soon as the window allows
        (:meth:`_pump`).  Starts the child (or restarts it after a hang or crash) if needed."""
        if self._proc is None:
            if self._hello is not None:
                self.restart()  # after a hang or crash: a fresh process for the next run
            else:
                self._start()
        self._n += 1
        req = {"id": self._n, **body}
        line = encode_line(req)
        p = _Pending(req, line, timeout, op)
        self._unsent.append(p)
        return p

    def _window(self) -> int:
        """How many requests may be written and not yet answered: the declared ``pipeline``
        (protocol 2) once the hello is in, capped by the ``pipeline`` argument; else 1."""
        h = self._hello
        if h is None or self._proc is None or h.capabilities.protocol < 2:
            return 1
        return max(1, min(h.capabilities.pipeline, self.max_pipeline))

    def _pump(self) -> None:
        """Write what the window allows without blocking: the output not yet taken by the pipe,
        after the queued requests that fit in the window (:meth:`_window`) are appended to it once
        half of it is free, so that they go out in few writes."""
        if not self._unsent and not self._out:  # the usual case once a run's requests are written
            return
        proc = self._proc
        if proc is None or proc.stdin is None or self._broken:
            return
        window = self._window()
        # Refill once half the window is answered, not after every answer: fewer, larger writes
        # (a write wakes the adapter up).  A window of 1 is refilled when it is empty.
        if self._unsent and len(self._inflight) <= window // 2:
            now = time.monotonic()
            while self._unsent and len(self._inflight) < window:
                p = self._unsent.popleft()
                self._note(_transcript.SENT, p.line)
                p.started, p.offset = now, self._queued_bytes
                self._queued_bytes += len(p.line)
                self._out += p.line
                self._inflight.append(p)
            self.max_in_flight = max(self.max_in_flight, len(self._inflight))
        if not self._out:
            return
        try:
            n = os.write(proc.stdin.fileno(), self._out)
        except BlockingIOError:
            return
        except (BrokenPipeError, OSError, ValueError):
            self._broken = True  # the child is gone: its exit is seen while reading the answer
            return
        del self._out[:n]
        self._written_bytes += n

    def _answer(self) -> dict[str, Any]:
        """Read the answer to the oldest unanswered request (writing more as the window opens) and
        check its id.  Its deadline: ``timeout`` from the moment its writing started or, if later,
        from the moment the answer before it was read (requests are answered in order)."""
        if self._unsent or self._out or not self._inflight:
            self._pump()
            if not self._inflight:
                self._pump()
            if not self._inflight:  # nothing could be written: the child exited before reading it
                self._crashed(self._unsent[0].req if self._unsent else self._last_req)
        p = self._inflight[0]
        self._last_req = p.req
        if self._lines:
            raw = self._lines.popleft()
        else:
            raw = self._readline(p, max(p.started, self._answered_at) + p.timeout)
        self._inflight.popleft()
        self._answered_at = time.monotonic()
        if self._log is not None:
            self._note(_transcript.RECEIVED, raw)
        try:
            msg = parse_line(raw)
        except ProtocolError as e:
            self._fail(p.req, str(e))
        if not isinstance(msg, dict):
            self._fail(p.req, f"sent JSON that is not an object: {json_short(msg)}")
        if msg.get("id") != p.req["id"]:
            self._fail(p.req, f"answered with id {json_short(msg.get('id'))}, expected {p.req['id']}: "
                              f"{json_short(msg)}")
        return msg

    def _call(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One request and its answer (nothing else may be in flight)."""
        self._enqueue(body, timeout)
        return self._answer()

    def _write(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        """Write ``data`` whole before ``deadline`` (the ``bye``)."""
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        sel = selectors.DefaultSelector()
        try:
            sel.register(fd, selectors.EVENT_WRITE)
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
                sel.select(min(left, 0.1))
                if self._exited(proc):
                    raise BrokenPipeError("the adapter exited")
        finally:
            sel.close()

    def _readline(self, p: _Pending, deadline: float) -> bytes:
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stdin is not None
        fd = proc.stdout.fileno()
        if self._rsel is None:
            self._rsel = selectors.DefaultSelector()
            self._rsel.register(fd, selectors.EVENT_READ)
        sel = self._rsel
        wfd = proc.stdin.fileno()
        buf = self._buf
        while True:
            self.scanned += len(buf) - self._scan
            i = buf.find(b"\n", self._scan)
            if i >= 0:
                # Every whole line read so far is split off at once: a read brings the answers of
                # a window, and the next ones are then taken from self._lines without a search.
                last = buf.rfind(b"\n")
                lines = bytes(buf[:last]).split(b"\n")
                del buf[: last + 1]
                self._scan = 0
                self._lines.extend(lines[1:])
                return lines[0]
            self._scan = len(buf)
            if len(buf) > self.max_line:
                self._fail(p.req, f"sent a line longer than the limit of {_size(self.max_line)} "
                                  f"(starts {json_short(bytes(buf[:80]).decode('utf-8', 'replace'))})")
            # A read first: the runner was busy while the adapter answered, so the answers are
            # usually there (and one read brings a window of them); the selector only waits.
            try:
                chunk = os.read(fd, CHUNK)
            except BlockingIOError:
                pass
            else:
                self.reads += 1
                if not chunk:  # EOF: the adapter exited or closed stdout
                    self._crashed(p.req, truncated=bytes(buf) if buf else None)
                buf += chunk
                continue
            # Output waiting for a pipe that was full: wait for room as well as for an answer.
            want_write = bool(self._out) and not self._broken
            if want_write != self._wsel_on:
                if want_write:
                    sel.register(wfd, selectors.EVENT_WRITE)
                else:
                    sel.unregister(wfd)
                self._wsel_on = want_write
            left = deadline - time.monotonic()
            # Short slices: the child's own exit is noticed even if a grandchild holds stdout open.
            # Past the deadline, one last poll: an answer that came while the runner was busy
            # elsewhere (pipelining) is an answer, not a timeout.
            ready = sel.select(min(max(left, 0.0), 0.1))
            readable = any(key.fd == fd for key, _ in ready)
            if any(key.fd == wfd for key, _ in ready):
                self._pump()
            if not readable:
                if left <= 0:
                    self._timed_out(p, buf)
                if not ready and self._exited(proc) and not sel.select(0):
                    self._crashed(p.req, truncated=bytes(buf) if buf else None)

    def _timed_out(self, p: _Pending, buf: bytearray) -> NoReturn:
        written = min(max(self._written_bytes - p.offset, 0), len(p.line))
        if written < len(p.line):
            self._unresponsive(p.req, "timeout", f"no response within {p.timeout:g} s (it stopped reading its "
                                                 f"stdin: {written} of {len(p.line)} bytes of the request written)")
        partial = (f" (partial output {json_short(bytes(buf[:200]).decode('utf-8', 'replace'))})" if buf else "")
        self._unresponsive(p.req, "timeout", f"no response within {p.timeout:g} s{partial}")

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


class _Pending:
    """One request on its way: its line, its timeout, the operation it carries (None for the
    hello, a reset, ...), when its writing started and where its first byte is in the stream of
    bytes written to the process."""

    __slots__ = ("req", "line", "timeout", "op", "started", "offset")

    def __init__(self, req: dict[str, Any], line: bytes, timeout: float, op: ops.Op | None) -> None:
        self.req, self.line, self.timeout, self.op = req, line, timeout, op
        self.started = 0.0
        self.offset = 0


class _WriteTimeout(WheelspecError):
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
