"""Seeded random campaigns: schedules of operations run against an implementation and judged.

Determinism: a schedule is a pure function of ``(kind, seed)``.  Its generator is a
``random.Random`` seeded with the string ``"<version>:<kind>:<seed>"``, the version being the kind's
entry in :data:`GENERATORS` (``wheelspec-campaign-v1`` for timers, ``-v2`` for purgatories) (Python seeds
from a string through SHA-512, identically on every platform and Python 3 version), and the
generator uses only ``randrange`` / ``choice`` / ``random`` on it -- so the same seed gives the
same schedule on any machine.  Shrinking (:mod:`.shrink`) is deterministic too, so a failing seed
always shrinks to the same counterexample.  Changing a kind's generator means bumping its version.

Two kinds:

* ``timer``: a tick (1 to 50), a small wheel (2 to 8 buckets, so deltas reach several levels) or
  Kafka's 20, a start time, then adds / re-adds / cancels of a few task ids with delays drawn
  around tick boundaries (k*tick - 1, k*tick, k*tick + 1), zero and negative delays, delays that
  need several levels, advances by 0, by a tick, across many levels, and ``size`` queries;
* ``purgatory``: watches of fresh operations on 1-3 of a few keys, with timeouts like the delays
  above and purge intervals 0-5 (some watches race their own completion:
  ``completes_on_retry``), ``set_completable``, ``check``, ``cancel_for_key``,
  ``force_complete``, ``watched``, ``num_delayed``, advances, mixed with some timer operations.

:func:`run_seed_range` is the unit of work (a pure function of its arguments; later distributed
campaigns split seed ranges over workers): it returns one :class:`SeedOutcome` per seed, a
failing one carrying its shrunk counterexample as a :class:`~.scenarios.Scenario`.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from wheelspec.conformance.adapters.protocol import Capabilities, Config
from wheelspec.conformance.check.corpus import Scenario
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.spec import ops
from wheelspec.spec.findings import Finding

KINDS = ("timer", "purgatory")
GENERATOR = "wheelspec-campaign-v1"
#: The generator version of each kind (a schedule is a pure function of version, kind and seed).
#: Purgatory schedules are at v2: they also draw ``Watch(completes_on_retry=True)``, the
#: sequential form of the race Kafka's second ``tryComplete`` closes (KAFKA-1952).  Timer
#: schedules are unchanged since v1, so timer counterexamples found by seed stay valid.
GENERATORS = {"timer": GENERATOR, "purgatory": "wheelspec-campaign-v2"}


def _rng(kind: str, seed: int) -> random.Random:
    return random.Random(f"{GENERATORS[kind]}:{kind}:{seed}")


def _delay(r: random.Random, tick: int, wheel: int) -> int:
    """A delay drawn where wheels go wrong: tick boundaries, level boundaries, <= 0, tiny."""
    c = r.random()
    if c < 0.30:
        return r.randrange(0, 3 * tick + 2)
    if c < 0.55:
        k = r.randrange(1, 2 * wheel + 2)
        return k * tick + r.choice((-1, 0, 1))
    if c < 0.75:  # a level boundary: tick * wheel^level, +-1
        level = r.randrange(1, 4)
        return tick * wheel**level + r.choice((-1, 0, 1, r.randrange(0, tick * wheel**level)))
    if c < 0.87:
        return -r.randrange(0, 2 * tick + 1)
    return r.randrange(0, tick * wheel**3 + 1)


def _advance(r: random.Random, now: int, tick: int, wheel: int) -> int:
    c = r.random()
    if c < 0.15:
        return now
    if c < 0.45:
        return now + r.randrange(1, 2 * tick + 1)
    if c < 0.70:
        return now + r.randrange(1, tick * wheel + 1)
    if c < 0.90:
        return (now // tick + r.randrange(1, 3 * wheel)) * tick + r.choice((-1, 0, 0, 1))
    return now + r.randrange(1, tick * wheel**3 + 1)


def generate(kind: str, seed: int) -> tuple[Config, list[ops.Op]]:
    """The schedule for ``(kind, seed)``: a configuration and a list of operations."""
    if kind not in KINDS:
        raise ValueError(f"campaign kind must be one of {KINDS}, got {kind!r}")
    r = _rng(kind, seed)
    tick = r.choice((1, 1, 1, 2, 3, 5, 10, 10, 20, 50))
    wheel = r.choice((2, 3, 4, 5, 8, 20))
    start = r.choice((0, 0, r.randrange(0, 1000), r.randrange(0, 10**9)))
    purge = r.choice((0, 1, 2, 3, 5, 1000))
    cfg = Config(tick, wheel, start, purge)
    n = r.randrange(1, 31 if kind == "timer" else 36)
    now = start
    out: list[ops.Op] = []
    tasks = r.randrange(1, 7)
    next_op = 0
    watched: list[int] = []
    keys: tuple[Any, ...] = ("a", "b", "c", 1)[: r.randrange(1, 5)]
    for _ in range(n):
        c = r.random()
        if kind == "timer" or c < 0.25:
            c2 = r.random()
            if c2 < 0.45:
                out.append(ops.AddTask(r.randrange(tasks), _delay(r, tick, wheel)))
            elif c2 < 0.60:
                out.append(ops.CancelTask(r.randrange(tasks)))
            elif c2 < 0.92:
                now = _advance(r, now, tick, wheel)
                out.append(ops.AdvanceTo(now))
            else:
                out.append(ops.Size())
            continue
        c = r.random()
        if c < 0.30 or not watched:
            k = r.randrange(1, min(3, len(keys)) + 1)
            chosen = tuple(r.sample(keys, k))
            completable = r.random() < 0.2
            # One in ten of the others becomes completable while it is being watched.
            retry = not completable and r.random() < 0.1
            out.append(ops.Watch(next_op, _delay(r, tick, wheel), chosen, completable, retry))
            watched.append(next_op)
            next_op += 1
        elif c < 0.45:
            out.append(ops.SetCompletable(r.choice(watched), r.random() < 0.85))
        elif c < 0.62:
            out.append(ops.CheckAndComplete(r.choice(keys)))
        elif c < 0.67:
            out.append(ops.CancelForKey(r.choice(keys)))
        elif c < 0.72:
            out.append(ops.ForceComplete(r.choice(watched)))
        elif c < 0.92:
            now = _advance(r, now, tick, wheel)
            out.append(ops.AdvanceTo(now))
        else:
            out.append(r.choice((ops.Watched(), ops.NumDelayed())))
    # Cancel of a task never added is a usage error, not a semantics question: keep schedules valid.
    seen: set[int] = set()
    valid: list[ops.Op] = []
    for op in out:
        if isinstance(op, ops.AddTask):
            seen.add(op.task)
        if isinstance(op, ops.CancelTask) and op.task not in seen:
            continue
        valid.append(op)
    if not any(isinstance(op, ops.AdvanceTo) for op in valid[-1:]):
        valid.append(ops.AdvanceTo(now + tick * wheel**2))  # drain: lost tasks show at an advance
    return cfg, valid


@dataclasses.dataclass
class SeedOutcome:
    kind: str
    seed: int
    ops: int
    failures: list[Finding]
    counterexample: Scenario | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "seed": self.seed, "ops": self.ops, "ok": self.ok,
                             "failures": [f.to_dict() for f in self.failures]}
        if self.counterexample is not None:
            d["counterexample"] = self.counterexample.to_dict()
        return d


def judge_schedule(adapter: Any, caps: Capabilities, cfg: Config, schedule: list[ops.Op]) -> list[Finding]:
    return judge(run_ops(adapter, cfg, schedule), caps)


def run_seed_range(adapter: Any, caps: Capabilities, kind: str, seeds: Iterable[int], *,
                   shrink: bool = True, impl_name: str = "",
                   on_seed: Callable[[SeedOutcome], None] | None = None,
                   on_run: Callable[[int, Config, Any], None] | None = None) -> list[SeedOutcome]:
    """Run and judge the schedules of ``seeds``; a failing seed is shrunk to a counterexample.
    ``on_run(seed, config, result)`` sees each schedule's run (its ``history``) before judging:
    ``wheelspec check --trace-out`` records it.

    Schedules are narrowed to what the implementation offers: a purgatory-only implementation
    gets the purgatory schedules without their timer operations (a timer-only one is simply not
    given ``purgatory`` schedules by the caller)."""
    from wheelspec.conformance.check.judge import primary
    from wheelspec.conformance.check.shrink import shrink_schedule

    outcomes = []
    for seed in seeds:
        cfg, schedule = generate(kind, seed)
        # A purgatory-only implementation gets the purgatory schedules without their timer ops.
        schedule = [op for op in schedule if caps.supports(op)]
        result = run_ops(adapter, cfg, schedule)
        if on_run is not None:
            on_run(seed, cfg, result)
        failures = judge(result, caps)
        cx = None
        if failures and shrink:
            cfg2, small, failures = shrink_schedule(adapter, caps, cfg, schedule, primary(failures).prop)
            cx = Scenario(f"counterexample/{impl_name or 'impl'}/{kind}-{seed}", cfg2, small, [None] * len(small),
                          description=f"shrunk from seed {seed} of the {kind} campaign: {failures[0].message}",
                          source="campaign counterexample",
                          origin={"generator": GENERATORS[kind], "kind": kind, "seed": seed, "impl": impl_name,
                                  "prop": failures[0].prop, "original_ops": len(schedule)})
        out = SeedOutcome(kind, seed, len(schedule), failures, cx)
        outcomes.append(out)
        if on_seed is not None:
            on_seed(out)
    return outcomes


@dataclasses.dataclass
class CampaignStats:
    schedules: int = 0
    ops: int = 0
    seconds: float = 0.0
    failed: int = 0

    def rate(self) -> tuple[float, float]:
        s = max(self.seconds, 1e-9)
        return self.schedules / s, self.ops / s


def timed(fn: Callable[[], list[SeedOutcome]]) -> tuple[list[SeedOutcome], CampaignStats]:
    t0 = time.perf_counter()
    outs = fn()
    st = CampaignStats(len(outs), sum(o.ops for o in outs), time.perf_counter() - t0, sum(not o.ok for o in outs))
    return outs, st
