"""Real-time adapters: the timers run against the wall clock, in-process or as a child process.

The adapter executes a whole schedule itself (so pipe latency never enters a measurement) and
reports, in microseconds since the start, the moment of every operation (an ``add`` is stamped
just *before* the library computes its deadline, so ``stamp + delay`` is a lower bound of the
library's own deadline) and of every fire, naming the add (``seq``) that scheduled it.  Protocol:
``rt_run`` in ``docs/guides/ADAPTERS.md``; :class:`RealtimeAdapter` is the in-process form.

Built in: Netty's ``HashedWheelTimer`` (Java and Debian's libnetty-java, through
``adapters/java/NettyAdapter.java``) and a live ``asyncio`` loop; ``cmd:COMMAND`` reaches any
other child speaking ``rt_run``.  Adapters warm their classes before the first run.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from wheelspec.conformance.realtime.schedule import RtSchedule
from wheelspec.spec.errors import UserError
from wheelspec.spec.show import clip


# ------------------------------------------------------------------ adapters -------------------
@dataclasses.dataclass
class RtOutcome:
    """What an adapter reports for one schedule (times in microseconds since the run's start)."""

    op_us: list[int]
    results: list[Any]
    fires: list[tuple[int, int, int]]  # (task, seq, t_us) in the order the fires ran
    unfired: int | None = None


class RealtimeAdapter(Protocol):
    """In-process form of the ``rt_run`` request."""

    name: str
    version: str
    profile: str       # "strict" (never early) or "kafka" (early by up to tick - 1)
    resolution_ms: int

    def run(self, schedule: RtSchedule) -> RtOutcome:
        ...

    def close(self) -> None:
        ...


def netty_command() -> list[str]:
    """``java -cp <netty-common jar> NettyAdapter.java`` (Java 11+ single-file launch)."""
    java = shutil.which("java")
    if java is None:
        raise UserError("the Netty adapter needs Java 11+ on PATH (`java` not found)")
    for jar in ("/usr/share/java/netty-common.jar", "/usr/share/java/netty-all.jar"):
        if Path(jar).exists():
            break
    else:
        raise UserError("the Netty adapter needs Netty's jars: apt-get install libnetty-java "
                        "(expected /usr/share/java/netty-common.jar)")
    src = resources.files("wheelspec.conformance.adapters").joinpath("java/NettyAdapter.java")
    return [java, "-cp", jar, str(src)]


class SubprocessRealtimeAdapter:
    """A real-time adapter in another process (protocol v1 handshake, then ``rt_run``)."""

    def __init__(self, argv: list[str], *, start_timeout: float = 120.0) -> None:
        from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter

        self._sub = SubprocessAdapter(argv, start_timeout=start_timeout)
        hello = self._sub.hello()
        caps = hello.capabilities
        if caps.time != "real":
            self._sub.close()
            raise UserError(f"adapter {hello.name!r} declares virtual time: check it with `wheelspec check`")
        self.name, self.version, self.profile = hello.name, hello.version, caps.profile
        self.resolution_ms = caps.tick_ms or 1

    def run(self, schedule: RtSchedule) -> RtOutcome:
        body = {"type": "rt_run", "tick_ms": schedule.tick_ms, "wheel_size": schedule.wheel_size,
                "run_ms": schedule.run_ms, "ops": schedule.ops}
        msg = self._sub.call(body, schedule.run_ms / 1000 + 30)
        if msg.get("ok") is not True:
            self._sub.fail_last(f"rt_run refused: {clip(json.dumps(msg), 200)}")
        try:
            ops = msg["ops"]
            out = RtOutcome([int(o["t_us"]) for o in ops], [o["result"] for o in ops],
                            [(int(f["task"]), int(f["seq"]), int(f["t_us"])) for f in msg["fires"]],
                            msg.get("unfired"))
        except (KeyError, TypeError, ValueError) as e:
            self._sub.fail_last(f"bad rt_run response ({e!r}): {clip(json.dumps(msg), 200)}")
        if len(out.op_us) != len(schedule.ops):
            self._sub.fail_last(f"rt_run answered {len(out.op_us)} ops for {len(schedule.ops)}")
        self.resolution_ms = schedule.tick_ms
        return out

    def close(self) -> None:
        self._sub.close()


class AsyncioRealtimeAdapter:
    """A live asyncio loop (this platform's monotonic clock): the schedule's operations are run
    by a coroutine that sleeps until each one's moment; tasks are ``loop.call_later`` callbacks.
    Single-threaded, as asyncio programs are, so an operation and a fire never race.  A cancel's
    result is asyncio's state of the handle (:func:`~wheelspec.conformance.adapters.asyncio_loop.cancel_pending`),
    a size the loop's live timers: never this adapter's bookkeeping."""

    profile = "strict"
    resolution_ms = 1

    def __init__(self) -> None:
        import platform

        self.name = "asyncio-live"
        self.version = f"Python {platform.python_version()}"

    def run(self, schedule: RtSchedule) -> RtOutcome:
        import asyncio
        import time

        from wheelspec.conformance.adapters.asyncio_loop import cancel_pending

        op_us: list[int] = []
        results: list[Any] = []
        fires: list[tuple[int, int, int]] = []

        async def main() -> None:
            loop = asyncio.get_running_loop()
            t0 = time.monotonic_ns()

            def us() -> int:
                return (time.monotonic_ns() - t0) // 1000

            # task -> handle of its latest schedule: translates ids, never answers a judged value
            latest: dict[int, asyncio.TimerHandle] = {}

            def on_fire(t: int, s: int) -> None:
                fires.append((t, s, us()))

            seq = 0
            for op in schedule.ops:
                wait = t0 / 1e9 + op["at"] / 1000 - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if op["kind"] == "add":
                    old = latest.get(op["task"])
                    # asyncio's cancel returns nothing: its answer is read from its state of the handle
                    res = None if old is None else cancel_pending(loop, old)
                    s, task = seq, op["task"]
                    seq += 1
                    op_us.append(us())
                    delay = min(op["delay"], 10**9) / 1000  # asyncio accepts any float; keep it finite
                    latest[task] = loop.call_later(delay, on_fire, task, s)
                    results.append(res)
                elif op["kind"] == "cancel":
                    op_us.append(us())
                    h = latest.get(op["task"])
                    results.append(False if h is None else cancel_pending(loop, h))
                else:
                    op_us.append(us())
                    # the loop's own pending timers (its heap holds cancelled handles until they
                    # reach the head: count the live ones)
                    results.append(sum(not h.cancelled() for h in loop._scheduled))  # type: ignore[attr-defined]
            wait = t0 / 1e9 + schedule.run_ms / 1000 - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)

        asyncio.run(main())
        return RtOutcome(op_us, results, fires, None)

    def close(self) -> None:
        pass


def resolve(impl: str) -> RealtimeAdapter:
    if impl == "netty":
        return SubprocessRealtimeAdapter(netty_command())
    if impl == "asyncio-live":
        return AsyncioRealtimeAdapter()
    if impl.startswith("cmd:"):
        import shlex

        return SubprocessRealtimeAdapter(shlex.split(impl[4:]))
    from wheelspec.conformance.adapters import thirdparty

    peer = thirdparty.PEERS.get(impl)
    if peer is not None and peer.mode == "real-time":
        return SubprocessRealtimeAdapter(peer.command())
    names = ", ".join(["netty", "asyncio-live", *thirdparty.realtime_names()])
    raise UserError(f"--impl {impl!r}: real-time implementations are {names} or cmd:COMMAND")
