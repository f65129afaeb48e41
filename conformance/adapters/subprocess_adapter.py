"""The runner's side of protocol v1: an implementation in another process (any language).

Robustness is the point of this module: the implementation under test may hang, crash, print
garbage, truncate a line or speak another protocol version.  Each of these becomes an
:class:`AdapterError` (a :class:`UserError`: one line, exit code 2) that names the adapter, the
request number and the request, and says what went wrong (quoting the offending output, or the
exit code and the last lines of stderr).  Nothing here blocks without a deadline: stdout is read
through a selector with the per-request timeout, stderr is drained by a thread into a bounded
buffer so a chatty adapter cannot fill the pipe and stall.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import subprocess
import threading
import time
from typing import Any, NoReturn

from wheelspec.conformance.adapters.protocol import (
    PROTOCOL_VERSION,
    Capabilities,
    Config,
    Hello,
    ProtocolError,
    Response,
    decode_response,
    json_short,
)
from wheelspec.spec import ops
from wheelspec.spec.errors import AdapterError


class SubprocessAdapter:
    """An :class:`~wheelspec.conformance.adapters.base.Adapter` speaking protocol v1 to a child process.

    ``timeout`` bounds every request; ``start_timeout`` the handshake (an adapter may need time
    to start a JVM or compile)."""

    def __init__(self, argv: list[str], *, timeout: float = 10.0, start_timeout: float = 30.0,
                 label: str | None = None, env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.label = label or " ".join([os.path.basename(self.argv[0])] + self.argv[1:])
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._n = 0  # request number (the hello is request 0)
        self._hello: Hello | None = None
        self._sel: selectors.BaseSelector | None = None

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
            return decode_response(msg, op)
        except ProtocolError as e:
            self._fail(self._last_req, f"bad response: {e}")
            raise  # unreachable

    def close(self) -> None:
        self._close_selector()
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        try:
            if proc.poll() is None:
                assert proc.stdin is not None  # started with stdin=PIPE
                self._n += 1
                proc.stdin.write(json.dumps({"id": self._n, "type": "bye"}).encode() + b"\n")
                proc.stdin.flush()
                proc.stdin.close()
                proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for f in (proc.stdout, proc.stderr, proc.stdin):
                assert f is not None  # all three were started as pipes
                try:
                    f.close()
                except OSError:
                    pass

    @property
    def requests_sent(self) -> int:
        return self._n

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
        raise AssertionError("unreachable")  # _fail always raises

    def _close_selector(self) -> None:
        if self._sel is not None:
            self._sel.close()
            self._sel = None

    # -- internals ----------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=self._env, bufsize=0)
        except OSError as e:
            raise AdapterError(f"adapter {self.label!r}: cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        threading.Thread(target=self._drain_stderr, args=(self._proc.stderr,), daemon=True).start()
        self._n = -1
        msg = self._call({"type": "hello", "protocol": PROTOCOL_VERSION}, self.start_timeout)
        req = self._last_req
        if msg.get("protocol") != PROTOCOL_VERSION:
            self._fail(req, f"speaks protocol version {json_short(msg.get('protocol'))}, this runner speaks "
                            f"{PROTOCOL_VERSION}")
        if msg.get("ok") is not True:
            self._fail(req, f"refused the handshake: {json_short(msg)}")
        name = msg.get("name")
        if not isinstance(name, str) or not name:
            self._fail(req, f"hello response needs a non-empty \"name\": {json_short(msg)}")
        try:
            caps = Capabilities.from_dict(msg.get("capabilities", {}))
        except ProtocolError as e:
            self._fail(req, str(e))
        version = msg.get("version", "")
        self._hello = Hello(name, caps, version if isinstance(version, str) else str(version))
        self.label = f"{name} ({self.label})" if name not in self.label else self.label

    def _drain_stderr(self, stream: Any) -> None:
        try:
            for raw in iter(stream.readline, b""):
                self._stderr.append(raw.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

    def _call(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self._proc is None:
            self._start()
        self._n += 1
        req = {"id": self._n, **body}
        self._last_req = req
        line = json.dumps(req, separators=(",", ":")).encode() + b"\n"
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._crashed(req)
        raw = self._readline(req, timeout)
        try:
            msg = json.loads(raw)
        except ValueError:
            self._fail(req, f"sent a line that is not JSON: {json_short(raw.decode('utf-8', 'replace'))}")
        if not isinstance(msg, dict):
            self._fail(req, f"sent JSON that is not an object: {json_short(msg)}")
        if msg.get("id") != self._n:
            self._fail(req, f"answered with id {json_short(msg.get('id'))}, expected {self._n}: {json_short(msg)}")
        return msg

    def _readline(self, req: dict[str, Any], timeout: float) -> bytes:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = proc.stdout.fileno()
        if self._sel is None:
            self._sel = selectors.DefaultSelector()
            self._sel.register(fd, selectors.EVENT_READ)
        sel = self._sel
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(req, f"no response within {timeout:g} s"
                                + (f" (partial output {json_short(self._buf.decode('utf-8', 'replace'))})"
                                   if self._buf else ""))
            if not sel.select(left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:  # EOF: the adapter exited or closed stdout
                if self._buf:
                    self._crashed(req, truncated=self._buf)
                self._crashed(req)
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def _crashed(self, req: dict[str, Any], truncated: bytes | None = None) -> NoReturn:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=2)
            status = f"exited with code {code}"
        except subprocess.TimeoutExpired:
            status = "closed its stdout"
        time.sleep(0.05)  # let the stderr thread catch the last lines
        what = status
        if truncated is not None:
            what += f" after a truncated line {json_short(truncated.decode('utf-8', 'replace'))}"
        tail = " | ".join(list(self._stderr)[-3:])
        self._fail(req, what + (f"; last stderr: {tail}" if tail else "; no stderr output"))

    def _fail(self, req: dict[str, Any], problem: str) -> NoReturn:
        n = req.get("id")
        what = req.get("op", req.get("type"))
        msg = f"adapter {self.label!r}: request #{n} {json_short(what, 100)}: {problem}"
        self._kill()
        raise AdapterError(msg.replace("\n", " "))

    def _kill(self) -> None:
        self._close_selector()
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

