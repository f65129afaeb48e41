"""What ``wheelspec analyze`` computes, shared by both engines (pyarrow/numpy and Spark).

The property queries are :func:`.local.judge_table` (pyarrow joins and numpy segmented
scans over whole runs); the local engine runs it on the whole dataset, the Spark engine
(:mod:`.spark`) on each partition of the dataset hash-partitioned by run, and sums the
results, so both engines' JSON results are identical (a test checks it).  The summary, lateness
and throughput are order-free aggregations each engine computes itself.  The algorithm, described
here once, re-states the history checker's properties (:mod:`wheelspec.spec.checker`) over a
whole dataset:

Per run, rows ordered by ``seq``.  A *request* row is any row whose kind is not caused
(fire, complete, expire, purge); the caused rows before a request row are its *window*.

* **req** of a caused row: the request row closing its window (kind, id, delay, seq).
* **prev_adv** of a row: the last ``advance`` row before it (seq, time).
* **Timer rows** (add, fire, cancel) are partitioned by (run, id) and ordered by seq.  A
  *superseding add* is any add (a Kafka caller re-adds by cancelling the old task: under
  strict-gt a delay <= 0 re-add, which MockTimer runs inside add, ends the earlier entry too).  A
  row's **schedule** is the last superseding add at or before it; a fire inside an add of its own
  task counts as after that add (the add replaced the task's entry before anything in it ran).  A
  fire is *exempt* (from the early rule) under strict-gt when it is the first fire of its req's
  expiration inside an add of the same task with delay <= 0 (it ran inside that add).  A fire
  *matches* its schedule when the expirations are equal; its **rank** is the number of matching
  fires of the schedule so far.
  - ``fire-unknown-task``: a fire with no add of its task at or before it;
  - ``fire-once``: any other fire with no schedule, a different expiration, or rank >= 2;
  - ``no-fire-after-cancel``: rank 1 but a cancel of the task lies between schedule and fire;
  - ``no-early-fire``: a remaining (good), non-exempt fire before ``earliest(exp)`` of the run's
    profile;
    ``by_profile`` counts the good fires every profile would reject;
  - ``late-fire`` (with ``--lateness-ms``): a good fire later than the bound;
  - ``cancel-result``: pending must equal "the schedule is live";
  - ``no-lost-task``: a schedule ends at its first cancel or rank-1 fire, else at the next
    superseding add, else never.  Let A be the last advance before that end (or the run's last
    advance).  Since a well-formed clock never goes back, some advance between the add and the
    end saw the task due iff ``A.seq > add.seq and A.time >= earliest(exp)``.  Under strict-gt an
    add with delay <= 0 is judged apart: it must have a fire inside it.
* **Purgatory**: ``complete-once`` (a second complete of an op), ``expire-rule`` (expire right
  after complete via=expire of the same op and vice versa), ``no-early-expire`` (first complete
  via=expire before ``earliest(deadline)``, strict-gt in-watch timeouts exempt), ``watch-result``,
  ``force-result`` and ``check-count`` (the request's result against the completes in its
  window), ``no-lost-wakeup`` (after check(key), an op watching key, watched after the key's last
  cancel_for_key, not completed, whose last set_completable says true), ``no-lost-operation``
  (as no-lost-task, for the deadline of a watch or of a resubmit that re-times its operation;
  its end is the first complete, a cancel_for_key returning it, or the operation's next resubmit).
* ``well-formed``: a row whose ``time`` lies outside the protocol's clock range, whose ``delay``
  lies outside its delay range, or whose ``deadline`` lies outside what ``time + delay`` can reach
  inside both (:data:`TIME_RANGE`, :data:`DELAY_RANGE`, :data:`DEADLINE_RANGE`, from
  :mod:`wheelspec.spec.limits`); the clock goes back; an add or watch, inside those ranges, whose
  deadline is not time + delay; a complete whose via is unknown.  Each reported row says which
  (``why``), with exact numbers.

Every sum and difference of times is exact: int64 where the operands cannot wrap, Python ints
(local) or ``decimal(20,0)`` (Spark SQL) where they could, so a trace holding values near 2^63 is
judged and reported with its true numbers.  A fire whose time or deadline lies outside the ranges
is a ``well-formed`` finding and left out of the lateness statistics.

Not judged here (they need per-row state a set-based pass does not keep): ``size``,
``num-delayed``, ``cancel-for-key-result``, ``complete-context``, and the part of ``expire-rule``
about operations whose timer entry ``cancel_for_key`` removed.  ``wheelspec check`` judges them.

Fire rows whose req is needed (strict-gt exemptions) are those with ``delay`` null or <= 0, or
``time <= deadline``: an exempt fire always has its own add's delay <= 0.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

from wheelspec.spec import properties
from wheelspec.spec.errors import UserError
from wheelspec.spec.events import CAUSED_KINDS
from wheelspec.spec.limits import EXP_SPAN, MAX_DELAY_MS, MAX_TIME_MS, MIN_DELAY_MS
from wheelspec.spec.profiles import PROFILE_NAMES

#: the profiles a trace may claim, in report order (:data:`wheelspec.spec.profiles.PROFILE_NAMES`)
PROFILES = PROFILE_NAMES
#: the properties the analysis judges, in report order, and those a trace cannot decide
#: (:mod:`wheelspec.spec.properties`)
PROPERTIES = properties.reported_by(properties.TRACE)
NOT_JUDGED = properties.NOT_JUDGED_BY_TRACE
#: the caused kinds (:data:`wheelspec.spec.events.CAUSED_KINDS`)
CAUSED = CAUSED_KINDS
#: the fields of a reported row: the trace's values, and ``why`` (what is wrong, for well-formed;
#: else None).  A deadline that is the 64-bit wrap of the row's ``time + delay`` is shown as that
#: exact sum (a recorder's ``long`` arithmetic wrapped it; the row is a well-formed finding)
ROW_COLUMNS = ("run", "seq", "kind", "id", "time", "deadline", "why")
#: the protocol's ranges (spec/limits.py): every clock reading ``time`` (MAX_TIME_MS), every
#: delay or timeout (MIN_DELAY_MS, MAX_DELAY_MS), and every deadline, an expiration time + delay
#: of the two.  Values outside them are refused by every implementation judged, so a trace row
#: holding one is not well-formed.
TIME_RANGE = (0, MAX_TIME_MS)
DELAY_RANGE = (MIN_DELAY_MS, MAX_DELAY_MS)
DEADLINE_RANGE = (MIN_DELAY_MS, MAX_TIME_MS + MAX_DELAY_MS)
#: the largest lateness (fire time - deadline) the ranges allow; a larger ``--lateness-ms`` bounds nothing
MAX_LATENESS_MS = TIME_RANGE[1] - DEADLINE_RANGE[0]
#: the most violating rows a result lists per property (``--max-rows``)
MAX_ROWS = 1_000_000
#: the sizes of a synthetic trace (:mod:`.synth`, ``--synthetic``), in rows: a few tasks at least,
#: at most what one machine holds while generating it (about 100 bytes a row)
MIN_SYNTHETIC_ROWS = 10
MAX_SYNTHETIC_ROWS = 10**9


def check_options(lateness_ms: int | None, max_rows: int) -> None:
    """Refuse, in one line, a lateness bound outside [0, :data:`MAX_LATENESS_MS`] or a number of
    rows outside [0, :data:`MAX_ROWS`] (a negative bound would call every valid fire late)."""
    for name, value, hi in (("lateness_ms", lateness_ms, MAX_LATENESS_MS), ("max_rows", max_rows, MAX_ROWS)):
        if value is None and name == "lateness_ms":
            continue
        if isinstance(value, bool) or not isinstance(value, Integral) or not 0 <= value <= hi:
            raise UserError(f"{name} must be an integer in [0, {hi}], got {value!r}")
THROUGHPUT_BUCKETS = 60
#: throughput bucket widths (ms) a reader takes in at a glance: 1-2-5 steps, then whole seconds,
#: minutes, hours and days; past the last one, multiples of it
NICE_BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000,
                   120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000,
                   43_200_000, 86_400_000, 172_800_000, 604_800_000)


def bucket_width(span: int) -> int:
    """The throughput bucket width for ``span`` ms of clock: the smallest width of
    :data:`NICE_BUCKETS_MS` (or multiple of a week) giving at most :data:`THROUGHPUT_BUCKETS` buckets."""
    need = max(1, -(-span // THROUGHPUT_BUCKETS))
    for w in NICE_BUCKETS_MS:
        if w >= need:
            return w
    week = NICE_BUCKETS_MS[-1]
    return -(-need // week) * week
MAX_LEVELS = 44  # tick * wheel^L > 2^43 for every L past this, whatever tick >= 1 and wheel >= 2


def level_thresholds(tick: int, wheel: int) -> list[int]:
    """Delays at which a task lands one level higher: tick * wheel^L for L = 1, 2, ...
    (level 0 holds delay < tick * wheel; Kafka's TimingWheel.add with currentTime = add time).
    Past :data:`~wheelspec.spec.limits.EXP_SPAN` no accepted delay reaches a threshold."""
    out: list[int] = []
    t = tick * wheel
    while t <= EXP_SPAN and len(out) < MAX_LEVELS:
        out.append(t)
        t *= wheel
    return out


def lateness_stats(hist: dict[int, int]) -> dict[str, Any]:
    """Exact summary of a lateness histogram {lateness_ms: count} (nearest-rank percentiles)."""
    keys = sorted(hist)
    n = sum(hist.values())
    total = sum(k * c for k, c in hist.items())
    out: dict[str, Any] = {"count": n, "min": keys[0], "max": keys[-1], "mean": round(total / n, 3)}
    for q, name in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p999")):
        rank = max(1, math.ceil(q * n))
        acc = 0
        for k in keys:
            acc += hist[k]
            if acc >= rank:
                out[name] = k
                break
    out["early"] = sum(c for k, c in hist.items() if k < 0)
    return out


def finish(summary: dict[str, Any], violations: dict[str, tuple[int, list[dict[str, Any]]]],
           by_profile: dict[str, int], lateness_hist: list[tuple[str, int, str, int, int]],
           throughput: dict[str, Any], max_rows: int, lateness_ms: int | None) -> dict[str, Any]:
    """Assemble the JSON result both engines return (sorted, engine-independent)."""
    props: dict[str, Any] = {}
    for p in PROPERTIES:
        n, rows = violations.get(p, (0, []))
        entry: dict[str, Any] = {"violations": int(n),
                                 "rows": sorted(rows, key=lambda r: (r["run"], r["seq"]))[:max_rows]}
        if p == "late-fire" and lateness_ms is None:
            entry["judged"] = False
        if p == "no-early-fire":
            entry["by_profile"] = {k: int(by_profile.get(k, 0)) for k in PROFILES}
        props[p] = entry
    groups: dict[tuple[str, int, str], dict[int, int]] = {}
    for impl, level, prof, late, count in lateness_hist:
        groups.setdefault((impl, level, prof), {})[late] = groups.get((impl, level, prof), {}).get(late, 0) + count
    lat = [{"impl": impl, "level": level if level >= 0 else None, "profile": prof, **lateness_stats(h)}
           for (impl, level, prof), h in sorted(groups.items())]
    hist_all: dict[str, dict[int, int]] = {}
    for impl, _level, _prof, late, count in lateness_hist:
        hist_all.setdefault(impl, {})
        hist_all[impl][late] = hist_all[impl].get(late, 0) + count
    return {
        "format": "wheelspec-analyze-v1",
        **summary,
        "ok": all(v["violations"] == 0 for v in props.values()),
        "properties": props,
        "not_judged": list(NOT_JUDGED),
        "lateness": lat,
        "lateness_histogram": {impl: sorted([k, c] for k, c in h.items()) for impl, h in sorted(hist_all.items())},
        "throughput": throughput,
    }
