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
from typing import Any, NoReturn, TextIO

from wheelspec.conformance.adapters.base import refusal_of
from wheelspec.conformance.adapters.protocol import Config, Response, negotiate, offered_versions
from wheelspec.spec import ops
from wheelspec.spec.errors import UserError

#: the ``pipeline`` capability this server declares under protocol 2 (docs/guides/PROTOCOL.md, section 11):
#: requests are read in order and answered in order, so the runner may send this many ahead
SERVE_PIPELINE = 64
#: one encoder for every answer (``json.dumps`` with an argument builds an encoder per call)
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def serve(adapter: Any, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, *, close: bool = True) -> int:
    """Answer requests until ``bye`` or end of input, then close the adapter (unless ``close`` is
    False: a caller feeding one request at a time keeps it for the next); returns the exit code."""

    def send(msg: dict[str, Any]) -> None:
        stdout.write(_ENCODER.encode(msg) + "\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            rid = req["id"]
            kind = req["type"]
        except (ValueError, KeyError, TypeError):
            send({"id": None, "ok": False, "error": {"type": "invalid", "message": f"bad request line {line[:200]!r}"}})
            continue
        try:
            if kind == "hello":
                h = adapter.hello()
                offered = offered_versions(req)
                version = negotiate(offered, h.capabilities.protocol)
                if version is None:
                    send({"id": rid, "ok": False, "error": {"type": "unsupported", "message":
                          f"{h.name} speaks protocol 1 to {h.capabilities.protocol}, "
                          f"the runner offers {list(offered)}"}})
                    continue
                if version != h.capabilities.protocol:
                    speak = getattr(adapter, "speak", None)
                    if speak is None:
                        send({"id": rid, "ok": False, "error": {"type": "unsupported", "message":
                              f"{h.name} speaks protocol {h.capabilities.protocol} only, the runner offers "
                              f"{list(offered)}"}})
                        continue
                    speak(version)  # an older runner: answer as that version's adapter
                    h = adapter.hello()
                caps = h.capabilities
                if version >= 2 and caps.pipeline == 1:
                    # this loop reads requests in order and answers each in order: any number may wait
                    caps = dataclasses.replace(caps, pipeline=SERVE_PIPELINE)
                send({"id": rid, "ok": True, "protocol": version, "name": h.name, "version": h.version,
                      "capabilities": caps.to_dict()})
            elif kind == "reset":
                adapter.reset(Config.from_dict(req.get("config", {})))
                send({"id": rid, "ok": True})
            elif kind == "op":
                op = ops.op_from_dict(req["op"])  # a request that does not decode is answered invalid (below)
                try:
                    resp: Response = adapter.request(op)
                except Exception as exc:  # noqa: BLE001 - the implementation raised: the in-process mapping
                    resp = refusal_of(exc)
                send(resp.to_wire(rid))
            elif kind == "bye":
                send({"id": rid, "ok": True})
                break
            else:
                send({"id": rid, "ok": False,
                      "error": {"type": "invalid", "message": f"unknown request type {kind!r}"}})
        except (ValueError, TypeError, KeyError) as e:
            send({"id": rid, "ok": False, "error": {"type": "invalid", "message": str(e)}})
    if close:
        adapter.close()
    return 0


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
