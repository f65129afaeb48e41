"""Real-time mode: judge a timer that has no virtual clock (Netty's ``HashedWheelTimer``, a live
asyncio loop) by running schedules against the wall clock.

A **real-time schedule** is data: operations stamped with the wall-clock offset (ms from the
run's start) at which the adapter performs them, plus the run's length::

    {"wheelspec_realtime_schedule": 1, "name": ..., "seed": ..., "tick_ms": 1, "wheel_size": 512,
     "run_ms": 420, "ops": [{"at": 0, "kind": "add", "task": 3, "delay": 25},
                            {"at": 7, "kind": "cancel", "task": 3}, {"at": 9, "kind": "size"}]}

The adapter executes the whole schedule itself (so pipe latency never enters a measurement) and
reports, in microseconds since the start, the moment of every operation (an ``add`` is stamped
just *before* the library computes its deadline, so ``stamp + delay`` is a lower bound of the
library's own deadline) and of every fire, naming the add (``seq``) that scheduled it.  Protocol:
``rt_run`` in ``docs/ADAPTERS.md``; :class:`RealtimeAdapter` is the in-process form.

Properties, judged at the implementation's **declared** resolution (its tick; profile ``strict``
declares "never early", ``kafka`` declares "early by at most tick - 1 ms"):

``early``         no fire before ``exp - early bound`` (exp = add stamp + delay);
``late``          every fire within ``resolution + slack`` after exp (slack: the runner's allowance
                  for a loaded machine, :data:`DEFAULT_SLACK_MS`);
``exactly-once``  every schedule that was neither cancelled nor superseded fires exactly once
                  before the run ends, none fires twice;
``cancel``        a cancel (or superseding re-add) that returned ``true`` is never followed by a
                  fire of that schedule; one that returned ``false`` found it already fired;
``order``         adds made together with one delay (a burst) fire in the order they were added;
``delay<=0``      a non-positive delay fires (once, after the add, within the late bound of the add);
``huge-delay``    delays of 2^40-1 ms and Long.MAX ms are accepted and do not fire in the run.

The names are registered in :mod:`wheelspec.spec.properties` (judge ``realtime``), each with the
history properties it restates; failures are :class:`~wheelspec.spec.findings.Finding` s.  Why a
second judge of "never early", "exactly once" and "cancel respected" beside the history checker
(:func:`wheelspec.spec.checker.check_history`): a real-time run has no history of clock readings
to judge.  Its times are microseconds on the wall clock, an ``add``'s deadline is only bounded
from below by its stamp, lateness is allowed up to the declared resolution plus a slack for a
loaded machine, and a fire names the add that scheduled it instead of sitting in a request's
window; the history checker's exact, sequential rules would call scheduling noise a violation.

Stability on a loaded 2-core machine: delays are tens of milliseconds, a run holds a few hundred
tasks and lasts well under a second; the late bound is generous (``slack_ms``, 250 ms by default)
while the early bound is exact, because being early is a logic error and being late is mostly
scheduling noise; lateness is *reported* as a distribution (p50 / p99 / max) rather than asserted
tightly; the adapter warms its classes before the first run; the driver repeats a few seeded
runs and a failure is saved as a schedule file that ``wheelspec realtime --schedule FILE``
replays.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import statistics
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from wheelspec.spec import properties
from wheelspec.spec.errors import UserError
from wheelspec.spec.findings import Finding
from wheelspec.spec.limits import MAX_DELAY_MS
from wheelspec.spec.profiles import STRICT, behaviour

FORMAT_VERSION = 1
#: the runner's allowance for scheduling noise on top of the declared resolution
DEFAULT_SLACK_MS = 250
#: Java's Long.MAX_VALUE: Netty clamps deadlines that overflow
LONG_MAX = 2**63 - 1
HUGE_DELAYS = (MAX_DELAY_MS, LONG_MAX)
#: the properties judged, in report order (registered in :mod:`wheelspec.spec.properties`)
PROPS = properties.names(properties.REALTIME)


# ------------------------------------------------------------------ schedules ------------------
@dataclasses.dataclass
class RtSchedule:
    name: str
    ops: list[dict[str, Any]]
    run_ms: int
    tick_ms: int = 1
    wheel_size: int = 512
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"wheelspec_realtime_schedule": FORMAT_VERSION, "name": self.name, "seed": self.seed,
                "tick_ms": self.tick_ms, "wheel_size": self.wheel_size, "run_ms": self.run_ms, "ops": self.ops}

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        d = self.to_dict()
        body = ",\n".join("  " + json.dumps(o) for o in d.pop("ops"))
        p.write_text(json.dumps(d, indent=1)[:-2] + ',\n "ops": [\n' + body + "\n ]\n}\n")
        return p


def load_schedule(path: str | Path) -> RtSchedule:
    where = str(path)
    try:
        d = json.loads(Path(path).read_text())
    except OSError as e:
        raise UserError(f"{where}: cannot read the schedule ({e.strerror or e})") from None
    except ValueError as e:
        raise UserError(f"{where}: not JSON ({e})") from None
    if not isinstance(d, dict) or d.get("wheelspec_realtime_schedule") != FORMAT_VERSION:
        raise UserError(f"{where}: \"wheelspec_realtime_schedule\" must be {FORMAT_VERSION}")
    ops = d.get("ops")
    if not isinstance(ops, list):
        raise UserError(f"{where}: \"ops\" must be a list")
    for i, op in enumerate(ops):
        if (not isinstance(op, dict) or op.get("kind") not in ("add", "cancel", "size")
                or not isinstance(op.get("at"), int)):
            raise UserError(f"{where}: ops[{i}] must be {{\"at\": ms, \"kind\": add|cancel|size, ...}}, got {op!r}")
        if op["kind"] == "add" and not (isinstance(op.get("task"), int) and isinstance(op.get("delay"), int)):
            raise UserError(f"{where}: ops[{i}]: an add needs integer \"task\" and \"delay\"")
        if op["kind"] == "cancel" and not isinstance(op.get("task"), int):
            raise UserError(f"{where}: ops[{i}]: a cancel needs an integer \"task\"")
    if [o["at"] for o in ops] != sorted(o["at"] for o in ops):
        raise UserError(f"{where}: ops must be in order of \"at\"")
    run_ms = d.get("run_ms")
    if not isinstance(run_ms, int) or run_ms < (ops[-1]["at"] if ops else 0):
        raise UserError(f"{where}: \"run_ms\" must be an integer >= the last op's \"at\"")
    return RtSchedule(str(d.get("name", Path(path).stem)), ops, run_ms, int(d.get("tick_ms", 1)),
                      int(d.get("wheel_size", 512)), d.get("seed"))


def generate(seed: int, *, tasks: int = 150, tick_ms: int = 1, wheel_size: int = 512,
             slack_ms: int = DEFAULT_SLACK_MS) -> RtSchedule:
    """A seeded schedule: ``tasks`` adds spread over 120 ms with delays of 1-60 ms, bursts of
    equal delays, delays <= 0, re-adds, cancels before and after firing, two huge delays."""
    r = random.Random(f"wheelspec-realtime-v1:{seed}")
    ops: list[dict[str, Any]] = []
    task = 0
    for _ in range(tasks // 10):  # bursts: five adds at one instant with one delay
        at, delay = r.randrange(0, 120), r.randrange(5, 60)
        ops += [{"at": at, "kind": "add", "task": task + j, "delay": delay} for j in range(5)]
        task += 5
    while task < tasks:
        at = r.randrange(0, 120)
        c = r.random()
        delay = r.randrange(-5, 1) if c < 0.1 else r.randrange(1, 61)
        ops.append({"at": at, "kind": "add", "task": task, "delay": delay})
        c = r.random()
        if c < 0.15:  # cancel well before the deadline
            ops.append({"at": at + r.randrange(0, max(1, delay // 2)), "kind": "cancel", "task": task})
        elif c < 0.25:  # cancel well after it (must report false)
            ops.append({"at": at + max(delay, 0) + 40 + r.randrange(0, 20), "kind": "cancel", "task": task})
        elif c < 0.30 and delay > 20:  # re-add before it fires
            ops.append({"at": at + r.randrange(0, delay // 2), "kind": "add", "task": task,
                        "delay": r.randrange(1, 40)})
        task += 1
    for i, delay in enumerate(HUGE_DELAYS):
        ops.append({"at": r.randrange(0, 60), "kind": "add", "task": tasks + i, "delay": delay})
    ops.append({"at": 60, "kind": "size"})
    end = max(o["at"] + max(o.get("delay", 0), 0) for o in ops if o.get("delay", 0) < 10**6)
    end = max(end, max(o["at"] for o in ops))
    for i in range(len(HUGE_DELAYS)):
        ops.append({"at": end + 1, "kind": "cancel", "task": tasks + i})
    ops.sort(key=lambda o: o["at"])  # stable: same-instant ops keep their generated order
    name = f"realtime-{seed}" + (f"-tick{tick_ms}" if tick_ms != 1 else "")
    return RtSchedule(name, ops, end + 1 + slack_ms + tick_ms, tick_ms, wheel_size, seed)


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
            self._sub.fail_last(f"rt_run refused: {json.dumps(msg)[:200]}")
        try:
            ops = msg["ops"]
            out = RtOutcome([int(o["t_us"]) for o in ops], [o["result"] for o in ops],
                            [(int(f["task"]), int(f["seq"]), int(f["t_us"])) for f in msg["fires"]],
                            msg.get("unfired"))
        except (KeyError, TypeError, ValueError) as e:
            self._sub.fail_last(f"bad rt_run response ({e!r}): {json.dumps(msg)[:200]}")
        if len(out.op_us) != len(schedule.ops):
            self._sub.fail_last(f"rt_run answered {len(out.op_us)} ops for {len(schedule.ops)}")
        self.resolution_ms = schedule.tick_ms
        return out

    def close(self) -> None:
        self._sub.close()


class AsyncioRealtimeAdapter:
    """A live asyncio loop (this platform's monotonic clock): the schedule's operations are run
    by a coroutine that sleeps until each one's moment; tasks are ``loop.call_later`` callbacks.
    Single-threaded, as asyncio programs are, so an operation and a fire never race."""

    profile = "strict"
    resolution_ms = 1

    def __init__(self) -> None:
        import platform

        self.name = "asyncio-live"
        self.version = f"Python {platform.python_version()}"

    def run(self, schedule: RtSchedule) -> RtOutcome:
        import asyncio
        import time

        op_us: list[int] = []
        results: list[Any] = []
        fires: list[tuple[int, int, int]] = []

        async def main() -> None:
            loop = asyncio.get_running_loop()
            t0 = time.monotonic_ns()

            def us() -> int:
                return (time.monotonic_ns() - t0) // 1000

            live: dict[int, tuple[int, asyncio.TimerHandle]] = {}

            def on_fire(t: int, s: int) -> None:
                fires.append((t, s, us()))
                live.pop(t, None)

            seq = 0
            for op in schedule.ops:
                wait = t0 / 1e9 + op["at"] / 1000 - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if op["kind"] == "add":
                    old = live.pop(op["task"], None)
                    res = None
                    if old is not None:  # asyncio's cancel returns nothing: pending = not yet run
                        res = (not old[1].cancelled()
                               and old[1] in loop._scheduled)  # type: ignore[attr-defined]  # asyncio's private heap
                        old[1].cancel()
                    s, task = seq, op["task"]
                    seq += 1
                    op_us.append(us())
                    delay = min(op["delay"], 10**9) / 1000  # asyncio accepts any float; keep it finite
                    h = loop.call_later(delay, on_fire, task, s)
                    live[task] = (s, h)
                    results.append(res)
                elif op["kind"] == "cancel":
                    op_us.append(us())
                    entry = live.pop(op["task"], None)
                    ok = entry is not None and not entry[1].cancelled()
                    if entry is not None:
                        entry[1].cancel()
                    results.append(ok)
                else:
                    op_us.append(us())
                    results.append(len(live))
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
    raise UserError(f"--impl {impl!r}: real-time implementations are netty, asyncio-live or cmd:COMMAND")


# ------------------------------------------------------------------ judging --------------------
@dataclasses.dataclass
class RtVerdict:
    schedule: RtSchedule
    failures: list[Finding]  # no location beyond the message: JSON {"prop", "message"}
    lateness_us: list[int]      # fire - exp for every fire of a delay > 0 schedule
    nonpositive_us: list[int]   # fire - add stamp for delay <= 0 schedules
    fires: int
    checked: dict[str, int]     # property -> how many instances were judged

    @property
    def ok(self) -> bool:
        return not self.failures


def judge_outcome(schedule: RtSchedule, out: RtOutcome, *, profile: str = STRICT, resolution_ms: int = 1,
                  slack_ms: int = DEFAULT_SLACK_MS) -> RtVerdict:
    """Judge one run (module doc).  ``exp`` of a schedule is its add's stamp plus its delay.
    A profile whose firing window is a tick (kafka) may fire up to ``resolution_ms - 1`` ms early."""
    early_us = (resolution_ms - 1) * 1000 if behaviour(profile).uses_tick else 0
    late_us = (resolution_ms + slack_ms) * 1000
    end_us = schedule.run_ms * 1000
    adds: list[dict[str, Any]] = []  # per seq
    live: dict[int, int] = {}        # task -> seq
    checked = {p: 0 for p in PROPS}
    failures: list[Finding] = []
    for i, op in enumerate(schedule.ops):
        t, res = out.op_us[i], out.results[i]
        if op["kind"] == "add":
            old = live.get(op["task"])
            if old is not None:
                adds[old]["ended"] = ("superseded", t, res)
            live[op["task"]] = len(adds)
            adds.append({"i": i, "task": op["task"], "delay": op["delay"], "t": t, "exp": t + op["delay"] * 1000,
                         "ended": None})
        elif op["kind"] == "cancel" and op["task"] in live:
            adds[live.pop(op["task"])]["ended"] = ("cancelled", t, res)
    fires_by_seq: dict[int, list[int]] = {}
    for task, seq, t in out.fires:
        if not 0 <= seq < len(adds) or adds[seq]["task"] != task:
            failures.append(Finding("exactly-once", f"a fire of task {task} names add #{seq}, which did not add it"))
            continue
        fires_by_seq.setdefault(seq, []).append(t)
    lateness, nonpos = [], []
    for seq, a in enumerate(adds):
        got = fires_by_seq.get(seq, [])
        what = f"task {a['task']} (op {a['i']}: add at {a['t'] / 1000:.3f} ms, delay {a['delay']} ms)"
        ended = a["ended"]
        huge = a["delay"] in HUGE_DELAYS
        if huge:
            checked["huge-delay"] += 1
            if got:
                failures.append(Finding("huge-delay", f"{what} fired at {got[0] / 1000:.3f} ms"))
            if ended and ended[0] == "cancelled" and ended[2] is not True:
                failures.append(Finding("huge-delay", f"{what}: its cancel returned {ended[2]!r}, "
                                                      f"the timeout should still be pending"))
            continue
        checked["exactly-once"] += 1
        if len(got) > 1:
            failures.append(Finding("exactly-once", f"{what} fired {len(got)} times"))
        if ended is not None:
            checked["cancel"] += 1
            kind, t_end, res = ended
            if res is True and got:
                failures.append(Finding("cancel", f"{what} fired at {got[0] / 1000:.3f} ms although it was "
                                                  f"{kind} at {t_end / 1000:.3f} ms (the cancel returned true)"))
            if res is False and not got:
                failures.append(Finding("cancel", f"{what}: {kind} at {t_end / 1000:.3f} ms reported it no longer "
                                                  f"pending, yet it never fired"))
            if res is not None or got:
                pass
        elif not got:
            failures.append(Finding("exactly-once", f"{what} never fired (deadline {a['exp'] / 1000:.3f} ms, "
                                                    f"run ended at {end_us / 1000:.0f} ms)"))
        for t in got[:1]:
            if a["delay"] <= 0:
                checked["delay<=0"] += 1
                nonpos.append(t - a["t"])
                if t < a["t"]:
                    failures.append(Finding("delay<=0", f"{what} fired before it was added"))
                if t - a["t"] > late_us:
                    failures.append(Finding("delay<=0", f"{what} fired {(t - a['t']) / 1000:.3f} ms after its add "
                                                        f"(bound {late_us / 1000:.0f} ms)"))
                continue
            checked["early"] += 1
            checked["late"] += 1
            lateness.append(t - a["exp"])
            if t < a["exp"] - early_us:
                failures.append(Finding("early", f"{what} fired at {t / 1000:.3f} ms, "
                                                 f"{(a['exp'] - t) / 1000:.3f} ms before its deadline "
                                                 f"(declared early bound {early_us / 1000:g} ms)"))
            if t > a["exp"] + late_us:
                failures.append(Finding("late", f"{what} fired {(t - a['exp']) / 1000:.3f} ms late "
                                                f"(bound: resolution {resolution_ms} + slack {slack_ms} ms)"))
    # same-instant, same-delay adds (bursts) must fire in add order
    groups: dict[tuple[int, int], list[int]] = {}
    for seq, a in enumerate(adds):
        if a["ended"] is None and a["delay"] > 0 and a["delay"] not in HUGE_DELAYS:
            groups.setdefault((schedule.ops[a["i"]]["at"], a["delay"]), []).append(seq)
    order = [seq for _, seq, _ in out.fires]
    pos = {seq: k for k, seq in enumerate(order)}
    for (at, delay), seqs in groups.items():
        if len(seqs) < 2 or any(s not in pos for s in seqs):
            continue
        checked["order"] += 1
        ran = sorted(seqs, key=pos.__getitem__)
        if ran != seqs:
            tasks = [adds[s]["task"] for s in ran]
            failures.append(Finding("order", f"tasks added together at {at} ms with delay {delay} ms ran as "
                                             f"{tasks}, not in add order {[adds[s]['task'] for s in seqs]}"))
    return RtVerdict(schedule, failures, lateness, nonpos, len(out.fires), checked)


def percentiles(values: Sequence[int]) -> dict[str, float]:
    """p50 / p99 / max (and min) of microsecond values, in milliseconds."""
    if not values:
        return {"n": 0}
    v = sorted(values)

    def q(p: float) -> float:
        return v[min(len(v) - 1, int(round(p * (len(v) - 1))))] / 1000

    return {"n": len(v), "min": v[0] / 1000, "p50": q(0.5), "p99": q(0.99), "max": v[-1] / 1000,
            "mean": statistics.fmean(v) / 1000}


@dataclasses.dataclass
class RtReport:
    name: str
    version: str
    profile: str
    resolution_ms: int
    verdicts: list[RtVerdict]
    counterexamples: list[str]

    @property
    def lateness_us(self) -> list[int]:
        return [x for v in self.verdicts for x in v.lateness_us]

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    def prop_status(self) -> dict[str, str]:
        out = {}
        for p in PROPS:
            n = sum(v.checked[p] for v in self.verdicts)
            bad = sum(f.prop == p for v in self.verdicts for f in v.failures)
            out[p] = "n/a" if n == 0 and not bad else ("fail" if bad else "pass")
        return out


def run_schedules(adapter: RealtimeAdapter, schedules: Sequence[RtSchedule], *, slack_ms: int = DEFAULT_SLACK_MS,
                 out_dir: str | Path | None = None) -> RtReport:
    """Run and judge ``schedules``; each failing one is saved under ``out_dir`` for replay."""
    verdicts, cx = [], []
    for s in schedules:
        out = adapter.run(s)
        v = judge_outcome(s, out, profile=adapter.profile, resolution_ms=adapter.resolution_ms, slack_ms=slack_ms)
        verdicts.append(v)
        if not v.ok and out_dir is not None:
            p = s.save(Path(out_dir) / f"{adapter.name}-{s.name}.json")
            cx.append(str(p))
    return RtReport(adapter.name, adapter.version, adapter.profile, adapter.resolution_ms, verdicts, cx)


def report_dict(rep: RtReport) -> dict[str, Any]:
    return {"name": rep.name, "version": rep.version, "profile": rep.profile, "resolution_ms": rep.resolution_ms,
            "ok": rep.ok, "properties": rep.prop_status(), "lateness_ms": percentiles(rep.lateness_us),
            "nonpositive_fire_after_add_ms": percentiles([x for v in rep.verdicts for x in v.nonpositive_us]),
            "runs": [{"schedule": v.schedule.name, "fires": v.fires, "failures": [f.to_dict() for f in v.failures]}
                     for v in rep.verdicts], "counterexamples": rep.counterexamples}
