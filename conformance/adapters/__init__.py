"""Adapters: how the runner reaches an implementation under test.

An adapter answers ``hello`` (who am I, which profile I claim, what I can do), ``reset`` (a fresh
instance with this configuration) and ``request`` (run one operation; return the events it caused
and its result).  In-process Python adapters and subprocesses speaking the wire protocol
(``docs/guides/PROTOCOL.md``) look the same to the runner.

======================== ============================================================================
module                   what it owns
======================== ============================================================================
:mod:`.api`              the public Python adapter API, in one module (``docs/guides/PYTHON_ADAPTERS.md``)
:mod:`.protocol`         the wire format: ``Hello``, ``Capabilities``, ``Config``, ``Response``, checks
:mod:`.base`             the :class:`Adapter` interface and :class:`SimulationAdapter`
:mod:`.engines`          wheelspec's own engines as adapters
:mod:`.resolve`          ``--impl`` strings to adapter factories
:mod:`.library`          the base for adapters of third-party virtual-clock timers
:mod:`.stdlib_sched`     the standard library's ``sched``
:mod:`.asyncio_loop`     ``asyncio`` loop timers under a virtual loop clock
:mod:`.twisted_clock`    Twisted's ``task.Clock``
:mod:`.subprocess_adapter` the runner's side of the wire protocol (a child process)
:mod:`.serve`            the adapter's side: serves a Python engine on stdin/stdout
``java/``                the Netty ``HashedWheelTimer`` adapter (real time)
======================== ============================================================================

The names below are the public API for writing an adapter in Python.
"""

from wheelspec.conformance.adapters.base import ALL_CONFIGURABLE, Adapter, SimulationAdapter
from wheelspec.conformance.adapters.engines import optimized_adapter, reference_adapter, serve_command
from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import PROTOCOL_VERSION, Capabilities, Config, Hello, Response
from wheelspec.conformance.adapters.resolve import BUILTINS, adapter_from_factory, resolve
from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter
from wheelspec.spec.errors import AdapterError

__all__ = ["ALL_CONFIGURABLE", "BUILTINS", "PROTOCOL_VERSION", "Adapter", "AdapterError", "Capabilities", "Config",
           "Hello", "LibraryTimerAdapter", "Response", "SimulationAdapter", "SubprocessAdapter", "adapter_from_factory",
           "optimized_adapter", "reference_adapter", "resolve", "serve_command"]
