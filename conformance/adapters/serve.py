"""The adapter's side of the protocol, for Python implementations: serve any in-process
:class:`~wheelspec.conformance.adapters.base.Adapter` on stdin/stdout.

The version is negotiated in the hello (:func:`~.protocol.negotiate`): the newest one both the
runner's offer and the adapter (``capabilities.protocol``) know.  An adapter that speaks version 2
(our engines do, reporting their ``tryComplete`` calls) answers a runner offering only version 1
as a version-1 adapter (its ``speak(1)``).  Under version 2 it declares ``pipeline``
(:data:`SERVE_PIPELINE`): the runner may send requests ahead of their answers.

``python -m wheelspec.conformance.adapters.serve reference`` (or ``optimized``, ``reference-mock``, or
``package.module:factory``) is the subprocess entry point of our own engines; the runner reaches
them with ``--impl reference-subprocess`` / ``optimized-subprocess``.  Diagnostics go to stderr;
stdout carries protocol lines only.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, TextIO

from wheelspec.conformance.adapters.protocol import Config, Response, negotiate, offered_versions
from wheelspec.spec import ops

#: the ``pipeline`` capability this server declares under protocol 2 (docs/PROTOCOL.md, section 11):
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
                resp: Response = adapter.request(ops.op_from_dict(req["op"]))
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


def main(argv: list[str] | None = None) -> int:
    from wheelspec.conformance.adapters.base import Adapter
    from wheelspec.conformance.adapters.engines import optimized_adapter, reference_adapter
    from wheelspec.conformance.adapters.resolve import adapter_from_factory
    from wheelspec.spec.errors import UserError
    from wheelspec.spec.profiles import KAFKA, STRICT_GT

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m wheelspec.conformance.adapters.serve reference|reference-mock|optimized|module:factory",
              file=sys.stderr)
        return 2
    name = args[0]
    adapter: Adapter
    try:
        if name == "reference":
            adapter = reference_adapter(KAFKA)
        elif name == "reference-mock":
            adapter = reference_adapter(STRICT_GT)
        elif name == "optimized":
            adapter = optimized_adapter()
        elif ":" in name:
            import importlib

            mod, _, attr = name.partition(":")
            adapter = adapter_from_factory(getattr(importlib.import_module(mod), attr), name)
        else:
            print(f"serve: unknown engine {name!r}", file=sys.stderr)
            return 2
    except (UserError, ImportError, AttributeError) as e:
        print(f"serve: {e}", file=sys.stderr)
        return 2
    return serve(adapter)


if __name__ == "__main__":
    raise SystemExit(main())
