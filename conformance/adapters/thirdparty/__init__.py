"""Third-party timers judged by wheelspec: adapters, written with the adapter kits, for timers
people run in production or in their test suites, in any language.

Each peer is a subprocess adapter whose sources ship in this package and are built on first use
into a cache directory (:mod:`wheelspec.benchmarks.buildcache`).  A peer runs in virtual time (protocol versions 1
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

# JavaScript (node_peers.py; the adapters in node/, written with the JavaScript kit)
register(Peer("sinon-tick", "virtual", "javascript",
              "@sinonjs/fake-timers 15.5.0 (npm): clock.setTimeout / clearTimeout on createClock(start), "
              "advanced with clock.tick(time - now)", "node_peers:sinon_tick"))
register(Peer("sinon-jump", "virtual", "javascript",
              "@sinonjs/fake-timers 15.5.0 (npm): clock.setTimeout / clearTimeout on createClock(start), "
              "advanced with clock.jump(time - now)", "node_peers:sinon_jump"))
register(Peer("timer-wheel", "virtual", "javascript",
              "timer-wheel 1.0.0 (npm): ReschedulingTimerWheel, a 5-layer hierarchical wheel with 1024 ms "
              "buckets; Date.now is the virtual clock, advanced with advance(time - base)", "node_peers:timer_wheel"))
register(Peer("node-timers", "real-time", "javascript",
              "Node.js's own setTimeout / clearTimeout (the node on PATH), on the wall clock",
              "node_peers:node_timers"))

register(Peer(
    name="tokio-delayqueue", mode="virtual", language="rust",
    what="tokio-util 0.7 DelayQueue (tokio 1.x hierarchical wheel, 6 levels x 64 slots, 1 ms), Debian's crates; "
         "tokio's paused clock driven by tokio::time::advance, then poll_expired drained",
    builder="native_peers:tokio_delayqueue"))

register(Peer(
    name="jdk-stpe", mode="real-time", language="java",
    what="the JDK's (17+) java.util.concurrent.ScheduledThreadPoolExecutor, 1 thread, removeOnCancel; "
         "the wall clock (System.nanoTime), stamped inside the JVM",
    builder="native_peers:jdk_stpe"))

# Go (go_clock_peer.py; the adapter in go_clock/, written with the Go kit)
register(Peer("go-clock-mock", "virtual", "go",
              "github.com/benbjohnson/clock Mock (Debian's golang-github-benbjohnson-clock-dev): AfterFunc / "
              "Timer.Stop, the fake clock moved with Mock.Set", "go_clock_peer:go_clock_mock"))

register(Peer(
    name="go-timers", mode="real-time", language="go",
    what="Go's runtime timers (time.AfterFunc, Timer.Stop), Debian's golang-go 1.19+; "
         "the wall clock (Go's monotonic clock), stamped inside the Go process",
    builder="native_peers:go_timers"))
