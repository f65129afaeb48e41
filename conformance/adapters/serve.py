"""The adapter's side of the protocol, for Python implementations: serve any in-process
:class:`~wheelspec.conformance.adapters.base.Adapter` on stdin/stdout.

The version is negotiated in the hello (:func:`~.protocol.negotiate`): the newest one both the
runner's offer and the adapter (``capabilities.protocol``) know.  An adapter that speaks version 2
(our engines do, reporting their ``tryComplete`` calls) answers a runner offering only version 1
as a version-1 adapter (its ``speak(1)``).  Under version 2 it declares ``pipeline``
(:data:`SERVE_PIPELINE`): the runner may send requests ahead of their answers.  A request the
adapter raises on instead of answering is answered with the refusal :func:`~.base.refusal_of`
maps the exception to, as the in-process runner records it (a ``ValueError`` is ``invalid``).

``python -m wheelspec.conformance.adapters.serve reference`` (or ``optimized``, ``reference-mock``, or
``package.module:factory``) is the subprocess entry point of our own engines; the runner reaches
them with ``--impl reference-subprocess`` / ``optimized-subprocess``.  For the reference, options
choose what the served process declares (:func:`~.engines.reference_adapter`): ``--profile`` (kafka,
strict: the SystemTimer model at tick 1, strict-gt: Kafka's MockTimer), ``--protocol 1`` (a
version-1 adapter, as a Kafka class behind a version-1 kit is), ``--executor-order`` and
``--no-try-complete``; the corpus self-consistency test serves the reference under each.
Diagnostics go to stderr; stdout carries protocol lines only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TextIO

import orjson

from wheelspec.conformance.adapters.base import refusal_of
from wheelspec.conformance.adapters.lines import encode_line, orjson_brackets
from wheelspec.conformance.adapters.protocol import Config, Response, negotiate, offered_versions
from wheelspec.spec import ops
from wheelspec.spec.errors import UserError

#: the ``pipeline`` capability this server declares under protocol 2 (docs/guides/PROTOCOL.md, section 11):
#: requests are read in order and answered in order, so the runner may send this many ahead
SERVE_PIPELINE = 64
#: bytes asked of stdin per read: a whole pipelined window of requests fits in one
CHUNK = 1 << 16
#: the longest an answer is held back to go out with the next ones (:func:`serve`), in seconds
HOLD_S = 0.02


def serve(adapter: Any, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, *, close: bool = True) -> int:
    """Answer requests until ``bye`` or end of input, then close the adapter (unless ``close`` is
    False: a caller feeding one request at a time keeps it for the next); returns the exit code.

    The requests one read of stdin returns (a pipelined window arrives in one read or a few) are
    answered together, their answers written with one write and one flush: a write wakes the
    runner up, so one per window rather than one per request.  An answer waits at most
    :data:`HOLD_S` (plus the request after it) for the others: a slow implementation's answers
    reach the runner well within their timeouts, as they would one by one."""
    answers: list[bytes] = []
    clock = time.monotonic
    try:
        for batch in _batches(stdin):
            held_since = clock()
            for line in batch:
                if line.strip() and not _answer(adapter, line, answers.append):
                    return 0  # bye: answered (the finally writes it)
                if clock() - held_since > HOLD_S:
                    _write(stdout, answers)
                    held_since = clock()
            _write(stdout, answers)
    finally:
        _write(stdout, answers)
        if close:
            adapter.close()
    return 0


def _batches(stdin: TextIO) -> Iterator[list[bytes]]:
    """The lines of ``stdin``, without their newlines, in the groups they arrive in: every line
    one read completes (a last line without a newline comes alone, at the end)."""
    raw = getattr(stdin, "buffer", None)
    read1 = getattr(raw, "read1", None)
    buf = bytearray()
    while True:
        chunk = read1(CHUNK) if read1 is not None else stdin.read(CHUNK).encode("utf-8", "surrogateescape")
        if not chunk:
            if buf:
                yield [bytes(buf)]
            return
        buf += chunk
        end = buf.rfind(b"\n")
        if end >= 0:
            lines = bytes(buf[:end]).split(b"\n")
            del buf[: end + 1]
            yield lines


def _write(stdout: TextIO, answers: list[bytes]) -> None:
    """Write ``answers`` (whole lines) to ``stdout`` in one write and flush it; empties the list."""
    if not answers:
        return
    data = b"".join(answers)
    answers.clear()
    raw = getattr(stdout, "buffer", None)
    if raw is not None:
        stdout.flush()  # (nothing waits in the text layer: every answer goes through here)
        raw.write(data)
        raw.flush()
    else:
        stdout.write(data.decode())
        stdout.flush()


def _answer(adapter: Any, line: bytes, send: Callable[[bytes], Any]) -> bool:
    """Answer one request line through ``send`` (one encoded line); False after ``bye``."""
    try:
        req = _load(line)
        rid = req["id"]
        kind = req["type"]
    except (ValueError, KeyError, TypeError):
        text = line.decode("utf-8", "replace")[:200]
        send(encode_line({"id": None, "ok": False, "error": {"type": "invalid",
                                                            "message": f"bad request line {text!r}"}}))
        return True
    try:
        if kind == "op":
            op = ops.op_from_dict(req["op"])  # a request that does not decode is answered invalid (below)
            try:
                resp: Response = adapter.request(op)
            except Exception as exc:  # noqa: BLE001 - the implementation raised: the in-process mapping
                resp = refusal_of(exc)
            send(encode_line(resp.to_wire(rid)))
        elif kind == "hello":
            send(encode_line(_hello(adapter, req, rid)))
        elif kind == "reset":
            adapter.reset(Config.from_dict(req.get("config", {})))
            send(encode_line({"id": rid, "ok": True}))
        elif kind == "bye":
            send(encode_line({"id": rid, "ok": True}))
            return False
        else:
            send(encode_line({"id": rid, "ok": False,
                              "error": {"type": "invalid", "message": f"unknown request type {kind!r}"}}))
    except (ValueError, TypeError, KeyError) as e:
        send(encode_line({"id": rid, "ok": False, "error": {"type": "invalid", "message": str(e)}}))
    return True


def _load(line: bytes) -> Any:
    """A request line's value, as ``json.loads`` reads it: by orjson where it reads the same (no
    integer of 19 digits or more, which orjson would read as a float past 64 bits; no deep nesting,
    which orjson recurses into without a limit), else, or if orjson refuses it (a lone surrogate
    escape, ``NaN``), by ``json.loads``."""
    if orjson_brackets(line) is not None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def _hello(adapter: Any, req: Any, rid: Any) -> dict[str, Any]:
    """The answer to a hello: the version negotiated (:func:`~.protocol.negotiate`) and the
    adapter's capabilities in it, or a refusal when there is no common version."""
    h = adapter.hello()
    offered = offered_versions(req)
    version = negotiate(offered, h.capabilities.protocol)
    if version is None:
        return {"id": rid, "ok": False, "error": {"type": "unsupported", "message":
                f"{h.name} speaks protocol 1 to {h.capabilities.protocol}, the runner offers {list(offered)}"}}
    if version != h.capabilities.protocol:
        speak = getattr(adapter, "speak", None)
        if speak is None:
            return {"id": rid, "ok": False, "error": {"type": "unsupported", "message":
                    f"{h.name} speaks protocol {h.capabilities.protocol} only, the runner offers {list(offered)}"}}
        speak(version)  # an older runner: answer as that version's adapter
        h = adapter.hello()
    caps = h.capabilities
    if version >= 2 and caps.pipeline == 1:
        # this loop reads requests in order and answers each in order: any number may wait
        caps = dataclasses.replace(caps, pipeline=SERVE_PIPELINE)
    return {"id": rid, "ok": True, "protocol": version, "name": h.name, "version": h.version,
            "capabilities": caps.to_dict()}


#: the command line, as an error message shows it
USAGE = ("python -m wheelspec.conformance.adapters.serve [--profile P] [--protocol N] [--executor-order O] "
         "[--no-try-complete] reference|reference-mock|optimized|module:factory")
#: the engines the options apply to: the reference model, claiming the profile the option names
REFERENCE_ENGINES = ("reference", "reference-mock")


class _Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr and exit 2 (:func:`main`), not argparse's usage dump."""

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (usage: {USAGE})")


def _parser() -> argparse.ArgumentParser:
    from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSIONS
    from wheelspec.spec.profiles import EXECUTOR_ORDERS, PROFILE_NAMES

    p = _Parser(prog="python -m wheelspec.conformance.adapters.serve", usage=USAGE,
                description="Serve one of wheelspec's engines (or a Python adapter factory) over the adapter "
                            "protocol on stdin/stdout (docs/guides/PROTOCOL.md, section 10).")
    p.add_argument("engine", help="reference, reference-mock (the reference claiming strict-gt: Kafka's "
                                  "MockTimer), optimized, or package.module:factory")
    p.add_argument("--profile", choices=PROFILE_NAMES,
                   help="reference only: the profile it claims (kafka: SystemTimer; strict: SystemTimer at tick 1; "
                        "strict-gt: MockTimer)")
    p.add_argument("--protocol", type=int, choices=PROTOCOL_VERSIONS,
                   help="reference only: the newest protocol version it speaks (default: the newest there is)")
    p.add_argument("--executor-order", choices=EXECUTOR_ORDERS,
                   help="reference only: the executor order it declares (either: it shows expire-before-purge)")
    p.add_argument("--no-try-complete", action="store_true",
                   help="reference only: do not report tryComplete calls (capability reports_try_complete false)")
    return p


def build_adapter(args: argparse.Namespace) -> Any:
    """The adapter ``args`` name (:func:`_parser`); raises UserError (or ImportError /
    AttributeError for a factory that cannot be found) with a message for one line."""
    from wheelspec.conformance.adapters.engines import optimized_adapter, reference_adapter
    from wheelspec.conformance.adapters.resolve import adapter_from_factory
    from wheelspec.spec.profiles import EXPIRE_BEFORE_PURGE, KAFKA, STRICT_GT

    name = args.engine
    if name in REFERENCE_ENGINES:
        claimed = KAFKA if name == "reference" else STRICT_GT
        if name == "reference-mock" and args.profile not in (None, STRICT_GT):
            raise UserError(f"reference-mock claims strict-gt, not --profile {args.profile} "
                            f"(serve reference --profile {args.profile})")
        kwargs: dict[str, Any] = {"reports_try_complete": not args.no_try_complete}
        if args.protocol is not None:
            kwargs["protocol"] = args.protocol
        try:
            return reference_adapter(args.profile or claimed, args.executor_order or EXPIRE_BEFORE_PURGE, **kwargs)
        except ValueError as e:
            raise UserError(str(e)) from None
    given = [opt for opt, v in (("--profile", args.profile), ("--protocol", args.protocol),
                                ("--executor-order", args.executor_order),
                                ("--no-try-complete", args.no_try_complete or None)) if v is not None]
    if given:
        raise UserError(f"{given[0]} applies to the reference engines only ({', '.join(REFERENCE_ENGINES)}), "
                        f"not {name!r}")
    if name == "optimized":
        return optimized_adapter()
    if ":" in name:
        import importlib

        mod, _, attr = name.partition(":")
        return adapter_from_factory(getattr(importlib.import_module(mod), attr), name)
    raise UserError(f"unknown engine {name!r} (usage: {USAGE})")


def main(argv: list[str] | None = None) -> int:
    try:
        adapter = build_adapter(_parser().parse_args(sys.argv[1:] if argv is None else argv))
    except (UserError, ImportError, AttributeError) as e:
        print(f"serve: {e}", file=sys.stderr)
        return 2
    return serve(adapter, sys.stdin, sys.stdout)  # the streams of now, not of import time


if __name__ == "__main__":
    raise SystemExit(main())
