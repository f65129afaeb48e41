"""Real-time schedules: what a real-time run executes, as data, seeded and saved as files.

A schedule holds operations stamped with the wall-clock offset (ms from the run's start) at which
the adapter performs them, plus the run's length::

    {"wheelspec_realtime_schedule": 1, "name": ..., "seed": ..., "tick_ms": 1, "wheel_size": 512,
     "run_ms": 420, "ops": [{"at": 0, "kind": "add", "task": 3, "delay": 25},
                            {"at": 7, "kind": "cancel", "task": 3}, {"at": 9, "kind": "size"}]}

:func:`generate` draws one from a seed (delays of tens of milliseconds, bursts of equal delays,
cancels, re-adds, non-positive and huge delays); :func:`load_schedule` reads a saved one and
refuses a malformed file in one line.  Delays stay short and a run holds a few hundred tasks, so
a run lasts well under a second even on a loaded 2-core machine.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

from wheelspec.spec.errors import UserError
from wheelspec.spec.limits import MAX_DELAY_MS

FORMAT_VERSION = 1


#: the runner's allowance for scheduling noise on top of the declared resolution
DEFAULT_SLACK_MS = 250


#: Java's Long.MAX_VALUE: Netty clamps deadlines that overflow
LONG_MAX = 2**63 - 1


HUGE_DELAYS = (MAX_DELAY_MS, LONG_MAX)


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
