"""Third-party timers judged by wheelspec: adapters, written with the adapter kits, for timers
people run in production or in their test suites, in any language.

Each peer is a subprocess adapter whose sources ship in this package and are built on first use
into a cache directory (:mod:`.buildcache`).  A peer runs in virtual time (protocol versions 1
and 2: ``wheelspec check --impl NAME``) or in real time (the ``rt_run`` extension:
``wheelspec realtime --impl NAME``); ``wheelspec matrix`` makes a row of each.  A missing
toolchain is a :class:`~wheelspec.spec.errors.UserError` naming what to install: the matrix row
says so, the other rows are still made.

:data:`PEERS` is the registry: name -> :class:`Peer`.  The command builder is named by
``module:function`` so that importing this package stays light (nothing builds, nothing heavy
is imported until a peer is asked for).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Literal

Mode = Literal["virtual", "real-time"]


@dataclasses.dataclass(frozen=True)
class Peer:
    """One third-party timer: its ``--impl`` name and matrix row, how it runs, and its adapter."""

    name: str
    mode: Mode
    language: str
    #: one line: the library, its version pin, and how its clock is driven
    what: str
    #: ``module:function`` (module relative to this package) returning the adapter's argv, after
    #: building it if needed; raises ``UserError`` when the toolchain is missing
    builder: str

    def command(self) -> list[str]:
        mod, _, fn = self.builder.partition(":")
        build: Callable[[], list[str]] = getattr(importlib.import_module(f"{__name__}.{mod}"), fn)
        return build()


#: the registry of third-party peers, in matrix order
PEERS: dict[str, Peer] = {}


def register(peer: Peer) -> None:
    assert peer.name not in PEERS, peer.name
    PEERS[peer.name] = peer


def virtual_names() -> tuple[str, ...]:
    return tuple(n for n, p in PEERS.items() if p.mode == "virtual")


def realtime_names() -> tuple[str, ...]:
    return tuple(n for n, p in PEERS.items() if p.mode == "real-time")


# ---------------------------------------------------------------- the peers ---------------------
# (one register(...) call per peer; keep each peer's entry in one block)
