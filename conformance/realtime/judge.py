"""The real-time judge: one run's outcome against its schedule, at the declared resolution.

Properties, judged at the implementation's **declared** resolution (its tick; profile ``strict``
declares "never early", ``kafka`` declares "early by at most tick - 1 ms"):

``early``         no fire before ``exp - early bound`` (exp = add stamp + delay);
``late``          every fire within ``resolution + slack`` after exp (slack: the runner's allowance
                  for a loaded machine, :data:`~.schedule.DEFAULT_SLACK_MS`, plus the run's own
                  measured scheduling jitter, :func:`run_jitter_us`);
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
The early bound is exact, because being early is a logic error; the late bound is generous,
because being late is mostly scheduling noise.  Exactly-once, cancel and order are exact too: no
load excuses a lost, doubled or reordered fire.  The late bound widens by the jitter the run
itself measured, so that a machine busy with other work does not fail a timer, while a fire later
than anything the machine's own scheduling explains still does.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from typing import Any

from wheelspec.conformance.realtime.adapters import RtOutcome
from wheelspec.conformance.realtime.schedule import DEFAULT_SLACK_MS, HUGE_DELAYS, RtSchedule
from wheelspec.spec import properties
from wheelspec.spec.findings import Finding
from wheelspec.spec.profiles import STRICT
from wheelspec.spec.profiles import profile as make_profile

#: the properties judged, in report order (registered in :mod:`wheelspec.spec.properties`)
PROPS = properties.names(properties.REALTIME)


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
    early_us = make_profile(profile, tick=resolution_ms).max_early_ms * 1000
    jitter_us = run_jitter_us(schedule, out)
    late_us = (resolution_ms + slack_ms) * 1000 + jitter_us
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
                                                        f"(bound {late_us / 1000:.3f} ms)"))
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
                                                f"(bound: resolution {resolution_ms} + slack {slack_ms} ms "
                                                f"+ the run's jitter {jitter_us / 1000:.3f} ms)"))
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


def run_jitter_us(schedule: RtSchedule, out: RtOutcome) -> int:
    """The scheduling jitter a run measured on itself, in microseconds: how far its operations ran
    behind their moments at worst (``op stamp - at``).  The adapter sleeps until each operation's
    moment; waking late by X shows the machine delaying a sleeping thread by X during this run, and
    a timer's firing thread is delayed the same way, so the late bound widens by X."""
    return max((max(0, t - op["at"] * 1000) for t, op in zip(out.op_us, schedule.ops)), default=0)


def percentiles(values: Sequence[int]) -> dict[str, float]:
    """p50 / p99 / max (and min) of microsecond values, in milliseconds."""
    if not values:
        return {"n": 0}
    v = sorted(values)

    def q(p: float) -> float:
        return v[min(len(v) - 1, int(round(p * (len(v) - 1))))] / 1000

    return {"n": len(v), "min": v[0] / 1000, "p50": q(0.5), "p99": q(0.99), "max": v[-1] / 1000,
            "mean": statistics.fmean(v) / 1000}
