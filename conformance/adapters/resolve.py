"""Turn an ``--impl`` value into an adapter factory: a built-in engine, a subprocess command, or a
Python ``module:factory``.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from collections.abc import Callable
from typing import Any

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, Adapter, SimulationAdapter
from wheelspec.conformance.adapters.engines import optimized_adapter, reference_adapter, serve_command
from wheelspec.conformance.adapters.protocol import Capabilities
from wheelspec.spec.errors import UserError
from wheelspec.spec.profiles import KAFKA, STRICT_GT

#: built-in implementation names accepted by ``--impl``
BUILTINS: dict[str, str] = {
    "reference": "the reference model, in-process (kafka profile)",
    "reference-subprocess": "the reference model behind the protocol (version 2) in a subprocess",
    "reference-mock": "the reference's MockTimer profile (strict-gt), in-process",
    "optimized": "the numba engine, in-process",
    "optimized-subprocess": "the numba engine behind the protocol (version 2) in a subprocess",
}


def resolve(spec: str, *, timeout: float = 10.0, start_timeout: float = 30.0) -> Callable[[], Adapter]:
    """Turn an ``--impl`` value into a zero-argument factory of adapters.

    * a built-in name (:data:`BUILTINS`);
    * ``cmd:COMMAND ARGS...`` (or any value with a space): a subprocess speaking the adapter protocol (version 1 or 2);
    * ``package.module:attr``: ``attr()`` returns an :class:`Adapter`, or a simulation-shaped
      object, in which case ``attr`` is taken as a factory accepting the reset configuration."""
    from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter

    spec = spec.strip()
    if spec in ("reference", "reference-mock"):
        profile = KAFKA if spec == "reference" else STRICT_GT
        return lambda: reference_adapter(profile)
    if spec == "optimized":
        optimized_adapter()  # fail now, with the reason, if it cannot load
        return optimized_adapter
    if spec in ("reference-subprocess", "optimized-subprocess"):
        engine = spec.split("-")[0]
        if engine == "optimized":
            optimized_adapter()
        return lambda: SubprocessAdapter(serve_command(engine), timeout=timeout, start_timeout=start_timeout,
                                         label=spec)
    from wheelspec.conformance.adapters import thirdparty

    peer = thirdparty.PEERS.get(spec)
    if peer is not None:
        if peer.mode != "virtual":
            raise UserError(f"--impl {spec!r} runs in real time: use `wheelspec realtime --impl {spec}`")
        argv = peer.command()  # builds on first use; a missing toolchain is one line naming it
        return lambda: SubprocessAdapter(argv, timeout=timeout, start_timeout=start_timeout, label=spec)
    if spec.startswith("cmd:") or " " in spec:
        cmd = spec[4:] if spec.startswith("cmd:") else spec
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            raise UserError(f"--impl {spec!r}: cannot split the command line ({e})") from None
        if not argv:
            raise UserError("--impl cmd: needs a command")
        return lambda: SubprocessAdapter(argv, timeout=timeout, start_timeout=start_timeout)
    if ":" in spec:
        mod_name, _, attr = spec.partition(":")
        if os.getcwd() not in sys.path:  # like `python -m`: modules of the current project import
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_name)
        except ImportError as e:
            raise UserError(f"--impl {spec!r}: cannot import module {mod_name!r} ({e})") from None
        factory = getattr(mod, attr, None)
        if factory is None or not callable(factory):
            raise UserError(f"--impl {spec!r}: module {mod_name!r} has no callable {attr!r}")
        return lambda: adapter_from_factory(factory, spec)
    known = ", ".join([*BUILTINS, *thirdparty.virtual_names()])
    raise UserError(f"--impl {spec!r}: not a built-in ({known}), not module:factory, not cmd:COMMAND")


def adapter_from_factory(factory: Callable[..., Any], label: str) -> Adapter:
    """Call a user factory; accept an Adapter, or wrap a simulation-shaped engine."""
    obj = factory()
    if isinstance(obj, Adapter):
        return obj
    if hasattr(obj, "apply") and hasattr(obj, "history"):
        caps = Capabilities(timer=True, purgatory=True, profile=getattr(obj, "profile", KAFKA),
                            configurable=ALL_CONFIGURABLE)
        if hasattr(obj, "close"):
            obj.close()
        return SimulationAdapter(factory, label, caps)
    raise UserError(f"--impl {label!r}: the factory returned {type(obj).__name__}, which is neither an Adapter "
                    f"(hello/reset/request/close) nor simulation-shaped (apply/history/now)")
