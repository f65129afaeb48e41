"""A seeded synthetic trace generator, vectorised with numpy: millions of rows in seconds.

It models what a Kafka-style wheel records (profile ``kafka``): every task is added at a time
``a`` with a delay ``d`` (some <= 0, most spread over the first three wheel levels), and fires at
the first ``advance`` of its run whose clock reading reaches both the add and the start of its
tick window ``floor(exp / tick) * tick`` -- so the trace obeys every timer property, with a
realistic lateness distribution (up to ``tick - 1`` early in ms, late by up to one advance step).
About one task in ten is cancelled before its fire.  Two implementations are simulated,
``wheel-fine`` (advances every 2 ticks) and ``wheel-coarse`` (every 8 ticks), so lateness
distributions differ per implementation.

``plant_early`` / ``plant_double`` insert one violation each (a fire at an advance before the
task's window; a second fire of a fired task one advance later) and report the planted rows, so
tests and benchmarks can check that :mod:`.analyze` finds exactly them.

Only timer events are generated: the purgatory's queries are exercised on real histories.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyarrow as pa

from wheelspec.conformance.traces.format import TRACE_SCHEMA
from wheelspec.conformance.traces.rules import MAX_SYNTHETIC_ROWS, MIN_SYNTHETIC_ROWS
from wheelspec.spec.profiles import KAFKA

KINDS = ("add", "fire", "cancel", "advance")
IMPLS = (("wheel-fine", 2), ("wheel-coarse", 8))  # (name, advance step in ticks)
TICKS = (1, 10, 50)
WHEEL = 20


@dataclasses.dataclass
class Planted:
    kind: str   # "early" or "double"
    run: str
    task: int
    time: int   # clock reading of the planted fire
    exp: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def synthetic_trace(rows: int, *, runs: int | None = None, seed: int = 0, plant_early: bool = False,
                    plant_double: bool = False) -> tuple[pa.Table, list[Planted]]:
    """About ``rows`` trace rows over ``runs`` runs (default: one run per ~10 000 rows)."""
    if not MIN_SYNTHETIC_ROWS <= rows <= MAX_SYNTHETIC_ROWS:
        raise ValueError(f"rows must be in [{MIN_SYNTHETIC_ROWS}, {MAX_SYNTHETIC_ROWS}], got {rows}")
    if runs is not None and not 1 <= runs <= rows:
        raise ValueError(f"runs must be in [1, rows], got {runs}")
    runs = runs or max(1, rows // 10_000)
    rng = np.random.default_rng(seed)
    n = max(2, int(rows / 2.3 / runs))                # tasks per run (rows ~ 2.3 per task)
    R = runs
    impl_of_run = np.arange(R) % len(IMPLS)
    tick_of_run = np.asarray(TICKS)[rng.integers(0, len(TICKS), R)]
    step_of_run = tick_of_run * np.asarray([s for _, s in IMPLS])[impl_of_run]
    span_of_run = np.maximum(1, n * step_of_run // 5)    # ~ n/5 advances over the adds' span

    run = np.repeat(np.arange(R, dtype=np.int64), n)
    task = np.tile(np.arange(n, dtype=np.int64), R)
    tick = tick_of_run[run]
    step = step_of_run[run]
    a = (rng.random(R * n) * span_of_run[run]).astype(np.int64)
    # delays: 5% in [-tick, 0], the rest log-uniform up to the third level (capped by the span)
    maxd = np.minimum(tick * WHEEL**3, np.maximum(2, span_of_run[run] // 2))
    d = np.exp(rng.random(R * n) * np.log(maxd)).astype(np.int64)
    nonpos = rng.random(R * n) < 0.05
    d[nonpos] = -(rng.integers(0, 1 << 30, nonpos.sum()) % (tick[nonpos] + 1))
    exp = a + d
    window = (exp // tick) * tick
    fire_t = -(-np.maximum(window, a) // step) * step   # first advance at or after both
    cancelled = (rng.random(R * n) < 0.10) & (fire_t > a)
    cancel_t = a + (rng.random(R * n) * np.maximum(fire_t - a, 1)).astype(np.int64)

    planted: list[Planted] = []
    extra_fires: list[tuple[int, int, int, int, int]] = []  # (run, task, time, exp, delay)
    mid = (R // 2) * n
    if plant_early:
        first_adv = -(-a // step) * step
        cand = np.flatnonzero(~cancelled & (first_adv < window) & (np.arange(R * n) >= mid))
        if cand.size == 0:
            raise ValueError("no task can carry a planted early fire; use more rows")
        i = int(cand[0])
        fire_t[i] = first_adv[i]
        planted.append(Planted("early", f"synth-{run[i]:05d}", int(task[i]), int(fire_t[i]), int(exp[i])))
    if plant_double:
        cand = np.flatnonzero(~cancelled & (np.arange(R * n) >= mid + n // 2))
        i = int(cand[0])
        extra_fires.append((int(run[i]), int(task[i]), int(fire_t[i] + step[i]), int(exp[i]), int(d[i])))
        planted.append(Planted("double", f"synth-{run[i]:05d}", int(task[i]), int(fire_t[i] + step[i]),
                               int(exp[i])))

    fired = ~cancelled
    # advances: every step from `step` to one step past the last fire of the run
    last = np.zeros(R, dtype=np.int64)
    np.maximum.at(last, run, fire_t)
    adv_count = last // step_of_run + 2
    adv_run = np.repeat(np.arange(R, dtype=np.int64), adv_count)
    adv_k = np.arange(adv_run.size, dtype=np.int64) - np.repeat(np.cumsum(adv_count) - adv_count, adv_count)
    adv_t = (adv_k + 1) * step_of_run[adv_run]

    ex = np.asarray(extra_fires, dtype=np.int64).reshape(-1, 5)
    # one block per row kind; phase orders rows of equal time: requests (0) < fires (1) < advance (2)
    blocks = [
        # kind, run, time, phase, id, delay, deadline, flag
        (0, run, a, 0, task, d, exp, None),
        (1, run[fired], fire_t[fired], 1, task[fired], d[fired], exp[fired], None),
        (1, ex[:, 0], ex[:, 2], 1, ex[:, 1], ex[:, 4], ex[:, 3], None),
        (2, run[cancelled], cancel_t[cancelled], 0, task[cancelled], None, None, True),
        (3, adv_run, adv_t, 2, None, None, None, None),
    ]
    parts: dict[str, list[np.ndarray]] = {c: [] for c in ("kind", "run", "time", "phase", "id", "delay",
                                                          "deadline", "flag", "has_id", "has_d", "has_flag")}
    for kind, r_, t_, ph, id_, dl, dd, fl in blocks:
        m = len(r_)
        parts["kind"].append(np.full(m, kind, np.int8))
        parts["run"].append(np.asarray(r_, np.int64))
        parts["time"].append(np.asarray(t_, np.int64))
        parts["phase"].append(np.full(m, ph, np.int8))
        parts["id"].append(np.zeros(m, np.int64) if id_ is None else np.asarray(id_, np.int64))
        parts["has_id"].append(np.full(m, id_ is not None))
        parts["delay"].append(np.zeros(m, np.int64) if dl is None else np.asarray(dl, np.int64))
        parts["deadline"].append(np.zeros(m, np.int64) if dd is None else np.asarray(dd, np.int64))
        parts["has_d"].append(np.full(m, dl is not None))
        parts["flag"].append(np.full(m, bool(fl)))
        parts["has_flag"].append(np.full(m, fl is not None))
    col = {k: np.concatenate(v) for k, v in parts.items()}
    order = _row_order(col["run"], col["time"], col["phase"], col["id"])
    col = {k: v[order] for k, v in col.items()}
    total = order.size
    starts = np.flatnonzero(np.r_[True, col["run"][1:] != col["run"][:-1]])
    counts = np.diff(np.r_[starts, total])
    seq = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)

    run_names = pa.array([f"synth-{i:05d}" for i in range(R)])
    rcode = col["run"].astype(np.int32)
    kind_dict = pa.DictionaryArray.from_arrays(pa.array(col["kind"].astype(np.int32)), pa.array(KINDS))
    impl_names = pa.array([IMPLS[i][0] for i in impl_of_run])

    def masked(values: np.ndarray, present: np.ndarray) -> pa.Array:
        return pa.array(values, mask=~present)

    data = {
        "run": pa.DictionaryArray.from_arrays(pa.array(rcode), run_names).cast(pa.string()),
        "impl": pa.DictionaryArray.from_arrays(pa.array(rcode), impl_names).cast(pa.string()),
        "profile": pa.DictionaryArray.from_arrays(pa.array(np.zeros(total, np.int32)),
                                                  pa.array([KAFKA])).cast(pa.string()),
        "tick_ms": pa.array(tick_of_run[col["run"]]),
        "wheel_size": pa.array(np.full(total, WHEEL, np.int64)),
        "seed": pa.array(np.full(total, seed, np.int64)),
        "thread": pa.array(np.zeros(total, np.int64)),
        "seq": pa.array(seq),
        "kind": kind_dict.cast(pa.string()),
        "id": masked(col["id"], col["has_id"]),
        "time": pa.array(col["time"]),
        "delay": masked(col["delay"], col["has_d"]),
        "deadline": masked(col["deadline"], col["has_d"]),
        "flag": masked(col["flag"], col["has_flag"]),
    }
    arrays = [data[f.name] if f.name in data else pa.nulls(total, f.type) for f in TRACE_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=TRACE_SCHEMA), planted


def _row_order(run: np.ndarray, time: np.ndarray, phase: np.ndarray, ident: np.ndarray) -> np.ndarray:
    """Stable order by (run, time, phase, id).  One packed int64 key sorts 10x faster than
    ``np.lexsort`` on four keys (measured: 2.8 s against 26 s for 10 M rows)."""
    widths = [max(1, int(x.max()).bit_length()) if x.size else 1 for x in (time, phase, ident)]
    if max(1, int(run.max()).bit_length() if run.size else 1) + sum(widths) > 63 or (time.size and time.min() < 0):
        return np.lexsort((ident, phase, time, run))
    key = run.copy()
    for x, w in zip((time, phase, ident), widths):
        key <<= w
        key |= x
    return np.argsort(key, kind="stable")
