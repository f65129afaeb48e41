"""The benchmark workloads (docs/guides/BENCH.md, (a)-(e)), generated from a seed as numpy arrays.

Every workload is data, not code: the same arrays drive every implementation, so a row of the
benchmark table compares implementations on identical input, and a test can check that they all
fire the same tasks.  Ids are dense (``0 .. n-1``) because the array engine sizes its tables by id.

Timer workloads (tick 1 ms, wheel size 20 unless told otherwise; start at time 0):

* ``insert``     -- (a) add ``n`` tasks, delays uniform in [1, 30000] ms;
* ``cancel``     -- (b) the same adds, then cancel every task, in a shuffled order (a real
  workload cancels in no particular order; insertion order would flatter cache locality);
* ``fire-steps`` -- (c) add ``n`` tasks with delays uniform in [1, 2000] ms, then advance the
  clock 1 ms at a time until 2000: every task fires;
* ``fire-jump``  -- (c) the same adds, then one advance to 2000;
* ``steady``     -- (e) the cost of one operation with ``n`` tasks *pending* (the O(1) claim):
  ``n`` tasks with delays uniform in [1, 30000] ms are added untimed; the timed window is
  ``STEADY_WINDOW`` adds of new tasks (same delays) followed by as many cancels of tasks drawn
  without replacement from all those pending.  Its ops/s counts the window's adds and cancels,
  whatever ``n`` is, so the figure at each ``n`` is the cost of an operation at that occupancy.
  Right before the timed window (after the harness's ``gc.collect()``), an untimed *warm-up*
  of ``STEADY_WARM_WINDOWS`` windows of the same shape runs, back to back: each adds
  ``STEADY_WINDOW`` other new ids and cancels as many other pending tasks (``warm_ids``/
  ``warm_delays``/``warm_cancels``, cut by ``warm_windows()``); occupancy is ``n`` again after each.
  Why: the window is meant to time an operation in a steady state at occupancy ``n``, and what
  comes before it is far from one.  The untimed bulk insert streams the whole structure through
  the caches (about 200 MB at 10^7 for the engine), and the collection walks the interpreter's
  heap; a timed window lasts well under a millisecond, so without a warm-up it timed the refill of
  the caches.  ``python -m wheelspec.benchmarks.warmup`` prints the window's cost against the
  warm-up's length; on the engine at 10^7 (``docs/results/BENCHMARKS.md`` has the table): 34.0 ns/op with
  no warm-up, 20.2 after one window, 13.7-16.5 after 8 to 64, against 11.9-13.4 at 10^3 after any
  warm-up of at least one window.  What a cancel of a random task touches is one bit of a 1.25 MB
  bitmap at 10^7; one window's 5000 random cancels reach about a fifth of its 19 532 64-byte
  lines, 16 windows' 80 000 all but about 2% of them.  Every implementation gets the same warm-up.
  Workloads (a)-(c) time ``n`` operations on a structure that starts empty: at small ``n`` their
  per-operation figure is dominated by the fixed cost of one batch call and of touching fresh
  memory, which says nothing about how an operation's cost grows with occupancy.

Purgatory workload ``purgatory`` -- (d), Kafka's ``TestPurgatoryPerformance`` replayed in virtual
time.  Facts taken from Kafka's benchmark (its Scala and, later, Java version):

* request inter-arrival times are exponential with rate ``rate`` per second, rounded down to whole
  milliseconds with the fractional residue carried to the next interval (so no time is lost);
* the completion latency is log-normal: ``mu = ln(pct50)``, ``sigma = (ln(pct75) - mu) /
  0.674490`` (0.674490 is the 75th percentile of N(0, 1)), truncated to whole milliseconds;
* each request is a ``DelayedOperation`` with delay ``timeout`` watching ``keys`` keys drawn with
  replacement from ``key_space`` possible keys; its ``tryComplete`` succeeds once its latency has
  elapsed (in virtual time: only a latency of 0 completes at arrival);
* a completion queue (a ``DelayQueue`` ordered by due time) force-completes every request whose
  latency is below the timeout when that latency has elapsed; the others expire on the timer;
* nothing calls ``checkAndComplete``: completed requests stay in their watch lists until the purge
  rule (purge interval 1000, Kafka's default) drops them.

Kafka's tool draws its ``keys`` once and every request watches those same keys; we draw them per
request (``keys_per_run=False``) by default, which spreads requests over the key space as a broker
does, and offer Kafka's choice with ``keys_per_run=True``.  The benchmark's Kafka timer is a
``SystemTimer`` with tick 1 ms and wheel size 20.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from wheelspec.spec.errors import UserError
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, MAX_PURGE_INTERVAL

#: Delays of workloads (a) and (b): uniform in [1, INSERT_MAX_DELAY_MS].
INSERT_MAX_DELAY_MS = 30_000
#: Delays of workload (c): uniform in [1, FIRE_MAX_DELAY_MS]; advancing to this time fires all.
FIRE_MAX_DELAY_MS = 2_000
#: Adds (and as many cancels) in the timed window of workload (e) ``steady``.
STEADY_WINDOW = 5_000
#: Untimed windows of the same shape run right before the timed one (see the module docstring).
STEADY_WARM_WINDOWS = 16

TIMER_WORKLOADS = ("insert", "cancel", "fire-steps", "fire-jump", "steady")
PURGATORY_WORKLOADS = ("purgatory",)
WORKLOADS = TIMER_WORKLOADS + PURGATORY_WORKLOADS

#: Events of a purgatory schedule, in the order they run within one millisecond: arrivals first,
#: then the completion queue's work.  A request with latency 0 is completed by its own
#: ``tryCompleteElseWatch`` and, as in Kafka, still queued: its ``forceComplete`` later in the
#: same millisecond finds it completed and returns false.
ARRIVE, COMPLETE = 0, 1


@dataclasses.dataclass(frozen=True)
class TimerWorkload:
    """Inputs of one timer workload. ``cancel_order`` is set for ``cancel`` and ``steady``;
    ``advance_times`` (the times to ``advance_to``, ascending) for the fire workloads;
    ``window_ids``/``window_delays`` (the timed adds) for ``steady``, whose ``ids``/``delays``
    are the untimed pending tasks."""

    name: str
    n: int
    seed: int
    ids: np.ndarray
    delays: np.ndarray
    cancel_order: np.ndarray | None = None
    advance_times: np.ndarray | None = None
    window_ids: np.ndarray | None = None
    window_delays: np.ndarray | None = None
    warm_ids: np.ndarray | None = None
    warm_delays: np.ndarray | None = None
    warm_cancels: np.ndarray | None = None

    @property
    def ops(self) -> int:
        """Operations the timed phase performs (what ops/s divides by): inserts, cancels or fires;
        for ``steady``, the window's adds and cancels."""
        if self.window_ids is not None:
            return 2 * int(self.window_ids.size)
        return self.n

    @property
    def capacity(self) -> int:
        """Task ids are ``0 .. capacity-1``."""
        extra = 0 if self.window_ids is None else int(self.window_ids.size)
        if self.warm_ids is not None:
            extra += int(self.warm_ids.size)
        return self.n + extra

    def warm_windows(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The warm-up of ``steady`` as (ids, delays, cancels) per window, in the order they run."""
        if self.warm_ids is None or self.warm_delays is None or self.warm_cancels is None:
            return []
        w = STEADY_WINDOW
        return [(self.warm_ids[i:i + w], self.warm_delays[i:i + w], self.warm_cancels[i:i + w])
                for i in range(0, int(self.warm_ids.size), w)]


@dataclasses.dataclass(frozen=True)
class PurgatoryParams:
    """The knobs of Kafka's ``TestPurgatoryPerformance`` (``--rate``, ``--pct50``, ``--pct75``,
    ``--timeout``, ``--keys``, ``--key-space-size``) plus the purge interval of its purgatory."""

    rate: float = 10_000.0
    pct50: float = 10.0
    pct75: float = 50.0
    timeout: int = 30_000
    keys: int = 3
    key_space: int = 100
    purge_interval: int = 1000
    keys_per_run: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ValueError(f"purgatory rate={self.rate} must be a positive number of requests per second")
        if not (self.pct50 >= 1 and self.pct75 > self.pct50 and math.isfinite(self.pct75)):
            raise ValueError(f"purgatory latency percentiles need 1 <= pct50 < pct75, "
                             f"got pct50={self.pct50} pct75={self.pct75}")
        if not 1 <= self.timeout <= MAX_DELAY_MS:
            raise ValueError(f"purgatory timeout={self.timeout} is outside [1, {MAX_DELAY_MS}]")
        if not 1 <= self.keys <= 64:
            raise ValueError(f"purgatory keys={self.keys} per request is outside [1, 64]")
        if not 1 <= self.key_space <= MAX_ID:  # distinct keys, each a dense int32 row like an id
            raise ValueError(f"purgatory key_space={self.key_space} is outside [1, {MAX_ID}]")
        if not 0 <= self.purge_interval <= MAX_PURGE_INTERVAL:
            raise ValueError(f"purgatory purge_interval={self.purge_interval} is outside [0, {MAX_PURGE_INTERVAL}]")


@dataclasses.dataclass(frozen=True)
class PurgatoryWorkload:
    """A purgatory schedule in virtual time.

    Per request ``i``: ``arrival[i]``, ``latency[i]``, ``keys[i]`` (a row of ``params.keys`` ints).
    The schedule ``times``/``kinds``/``ops`` lists every event sorted by time (then kind, then
    op): ``ARRIVE`` = ``watch(i, timeout, keys[i], completable=latency[i] == 0)``; ``COMPLETE`` =
    ``force_complete(i)`` from the completion queue.  After the schedule a final advance to
    ``end`` lets every remaining request expire."""

    name: str
    n: int
    seed: int
    params: PurgatoryParams
    arrival: np.ndarray
    latency: np.ndarray
    keys: np.ndarray
    times: np.ndarray
    kinds: np.ndarray
    ops_ids: np.ndarray
    end: int

    @property
    def ops(self) -> int:
        """What ops/s divides by: requests (Kafka's benchmark reports requests per second)."""
        return self.n

    @property
    def expected_expirations(self) -> int:
        """Requests the completion queue never completes: latency >= timeout."""
        return int(np.count_nonzero(self.latency >= self.params.timeout))


def _rng(seed: int, salt: int) -> np.random.Generator:
    # One independent stream per (workload, seed): changing one workload never shifts another's.
    return np.random.default_rng([seed, salt])


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ID:  # task ids 0..n-1
        raise ValueError(f"workload size n={n!r} must be an integer in [1, {MAX_ID}]")
    return int(n)


def timer_workload(name: str, n: int, seed: int = 0, warm_windows: int = STEADY_WARM_WINDOWS) -> TimerWorkload:
    """Build timer workload ``name`` (one of :data:`TIMER_WORKLOADS`) with ``n`` tasks;
    ``warm_windows`` is the length of ``steady``'s warm-up (``benchmarks/warmup.py`` varies it)."""
    n = _check_n(n)
    if isinstance(warm_windows, bool) or not isinstance(warm_windows, int) or warm_windows < 0:
        raise ValueError(f"warm_windows={warm_windows!r} must be an integer >= 0")
    ids = np.arange(n, dtype=np.int64)
    if name in ("insert", "cancel"):
        rng = _rng(seed, 1)
        delays = rng.integers(1, INSERT_MAX_DELAY_MS, size=n, endpoint=True, dtype=np.int64)
        if name == "insert":
            return TimerWorkload(name, n, seed, ids, delays)
        order = _rng(seed, 2).permutation(n).astype(np.int64)
        return TimerWorkload(name, n, seed, ids, delays, cancel_order=order)
    if name in ("fire-steps", "fire-jump"):
        rng = _rng(seed, 3)
        delays = rng.integers(1, FIRE_MAX_DELAY_MS, size=n, endpoint=True, dtype=np.int64)
        if name == "fire-steps":
            times = np.arange(1, FIRE_MAX_DELAY_MS + 1, dtype=np.int64)
        else:
            times = np.array([FIRE_MAX_DELAY_MS], dtype=np.int64)
        return TimerWorkload(name, n, seed, ids, delays, advance_times=times)
    if name == "steady":
        rng = _rng(seed, 4)
        delays = rng.integers(1, INSERT_MAX_DELAY_MS, size=n, endpoint=True, dtype=np.int64)
        window_ids = np.arange(n, n + STEADY_WINDOW, dtype=np.int64)
        window_delays = rng.integers(1, INSERT_MAX_DELAY_MS, size=STEADY_WINDOW, endpoint=True, dtype=np.int64)
        cancels = rng.choice(n + STEADY_WINDOW, size=STEADY_WINDOW, replace=False).astype(np.int64)
        # The warm-up windows (their own stream, so the timed arrays do not depend on them): new
        # ids above the timed window's, then cancels of distinct tasks pending at that point that
        # the timed window does not cancel (the first n except the timed cancels, and the warm-up's
        # own adds so far), so that occupancy is n again after each window.
        wrng = _rng(seed, 5)
        k = warm_windows
        warm_ids = np.arange(n + STEADY_WINDOW, n + (1 + k) * STEADY_WINDOW, dtype=np.int64)
        warm_delays = wrng.integers(1, INSERT_MAX_DELAY_MS, size=k * STEADY_WINDOW, endpoint=True, dtype=np.int64)
        taken = np.zeros(n, bool)
        taken[cancels[cancels < n]] = True
        pool = np.flatnonzero(~taken)
        picks = []
        for w in range(k):
            pool = np.concatenate([pool, warm_ids[w * STEADY_WINDOW:(w + 1) * STEADY_WINDOW]])
            at = wrng.choice(pool.size, size=STEADY_WINDOW, replace=False)
            picks.append(pool[at])
            pool = np.delete(pool, at)
        warm_cancels = np.concatenate(picks).astype(np.int64) if picks else np.zeros(0, np.int64)
        return TimerWorkload(name, n, seed, ids, delays, cancel_order=cancels,
                             window_ids=window_ids, window_delays=window_delays,
                             warm_ids=warm_ids, warm_delays=warm_delays, warm_cancels=warm_cancels)
    raise ValueError(f"unknown timer workload {name!r}; expected one of {', '.join(TIMER_WORKLOADS)}")


def purgatory_workload(n: int, seed: int = 0, params: PurgatoryParams | None = None) -> PurgatoryWorkload:
    """Kafka's purgatory benchmark as a virtual-time schedule of ``n`` requests."""
    n = _check_n(n)
    p = params if params is not None else PurgatoryParams()
    rng = _rng(seed, 4)
    # Poisson arrivals: exponential gaps in ms; the running sum is floored, which is exactly
    # Kafka's "round down and carry the residue" (the floor of a sum loses nothing overall).
    gaps = rng.exponential(1000.0 / p.rate, size=n)
    arrival = np.floor(np.cumsum(gaps)).astype(np.int64)
    mu = math.log(p.pct50)
    sigma = (math.log(p.pct75) - mu) / 0.674490
    # Truncate to whole ms like Kafka's (long) cast; cap so that arrival + latency stays far inside
    # the accepted time range even for absurd percentiles (a capped latency is >= timeout anyway).
    latency = np.minimum(np.floor(rng.lognormal(mu, sigma, size=n)), float(p.timeout)).astype(np.int64)
    if p.keys_per_run:
        row = rng.integers(0, p.key_space, size=p.keys, dtype=np.int64)
        keys = np.broadcast_to(row, (n, p.keys)).copy()
    else:
        keys = rng.integers(0, p.key_space, size=(n, p.keys), dtype=np.int64)
    op_ids = np.arange(n, dtype=np.int64)
    queued = latency < p.timeout  # Kafka: if (latencyToComplete < timeout) queue.add(request)
    times = np.concatenate([arrival, arrival[queued] + latency[queued]])
    kinds = np.concatenate([np.full(n, ARRIVE, np.int8), np.full(int(queued.sum()), COMPLETE, np.int8)])
    ops_ids = np.concatenate([op_ids, op_ids[queued]])
    order = np.lexsort((ops_ids, kinds, times))
    end = int(arrival[-1]) + p.timeout + 1
    return PurgatoryWorkload("purgatory", n, seed, p, arrival, latency, keys,
                             times[order], kinds[order], ops_ids[order], end)


def workload(name: str, n: int, seed: int = 0,
             params: PurgatoryParams | None = None) -> TimerWorkload | PurgatoryWorkload:
    """Any workload by name."""
    if name == "purgatory":
        return purgatory_workload(n, seed, params)
    return timer_workload(name, n, seed)


def parse_size(text: str, what: str) -> int:
    """``1000``, ``1e6``, ``10^7`` or ``1_000_000`` -> int, in [1, MAX_ID] (a size is a number of ids)."""
    t = text.strip().replace("_", "")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            v = float(int(base) ** int(exp))
        else:
            v = float(t)
    except (ValueError, OverflowError):
        raise UserError(f"{what}: {text!r} is not a size (write 1000, 1e6 or 10^7)") from None
    if not math.isfinite(v) or v != int(v) or not 1 <= v <= MAX_ID:
        raise UserError(f"{what}: {text!r} must be a whole number in [1, {MAX_ID}]")
    return int(v)
