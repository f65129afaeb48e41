"""The benchmark workloads are what docs/guides/BENCH.md and Kafka's purgatory benchmark say they are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wheelspec.benchmarks.workloads import (
    ARRIVE,
    COMPLETE,
    FIRE_MAX_DELAY_MS,
    INSERT_MAX_DELAY_MS,
    PurgatoryParams,
    purgatory_workload,
    timer_workload,
)


@pytest.mark.parametrize("name", ["insert", "cancel", "fire-steps", "fire-jump"])
def test_timer_workloads_are_seeded_and_in_range(name: str) -> None:
    a = timer_workload(name, 5000, seed=7)
    b = timer_workload(name, 5000, seed=7)
    c = timer_workload(name, 5000, seed=8)
    assert np.array_equal(a.delays, b.delays)
    assert not np.array_equal(a.delays, c.delays)
    assert np.array_equal(a.ids, np.arange(5000))
    top = INSERT_MAX_DELAY_MS if name in ("insert", "cancel") else FIRE_MAX_DELAY_MS
    assert a.delays.min() >= 1 and a.delays.max() <= top
    # uniform: both ends of the range are reached and the mean is in the middle
    assert a.delays.min() <= top * 0.01 and a.delays.max() >= top * 0.99
    assert abs(a.delays.mean() - (1 + top) / 2) < top * 0.03
    assert a.ops == 5000


def test_steady_window_adds_new_ids_and_cancels_distinct_pending_ones() -> None:
    from wheelspec.benchmarks.workloads import STEADY_WARM_WINDOWS, STEADY_WINDOW

    w = timer_workload("steady", 1000, seed=5)
    assert w.window_ids is not None and w.window_delays is not None and w.cancel_order is not None
    assert np.array_equal(w.window_ids, np.arange(1000, 1000 + STEADY_WINDOW))
    assert w.capacity == 1000 + (1 + STEADY_WARM_WINDOWS) * STEADY_WINDOW and w.ops == 2 * STEADY_WINDOW
    assert np.unique(w.cancel_order).size == STEADY_WINDOW
    assert w.cancel_order.min() >= 0 and w.cancel_order.max() < w.capacity
    assert w.window_delays.min() >= 1 and w.window_delays.max() <= INSERT_MAX_DELAY_MS
    assert np.array_equal(w.cancel_order, timer_workload("steady", 1000, seed=5).cancel_order)


@pytest.mark.parametrize("n,k", [(1000, None), (30_000, None), (1000, 1), (1000, 0)])
def test_steady_warm_up_keeps_occupancy_and_spares_the_timed_cancels(n: int, k: int | None) -> None:
    """The untimed warm-up is k windows; each adds new ids and cancels distinct tasks pending at
    that point, none of which the timed window cancels: occupancy is n after every window, and
    every timed cancel still finds its task."""
    from wheelspec.benchmarks.workloads import STEADY_WARM_WINDOWS, STEADY_WINDOW

    w = timer_workload("steady", n, seed=5) if k is None else timer_workload("steady", n, seed=5, warm_windows=k)
    k = STEADY_WARM_WINDOWS if k is None else k
    assert w.warm_ids is not None and w.warm_delays is not None and w.warm_cancels is not None
    assert w.window_ids is not None and w.cancel_order is not None
    assert np.array_equal(w.warm_ids, np.arange(n + STEADY_WINDOW, n + (1 + k) * STEADY_WINDOW))
    assert w.capacity == n + (1 + k) * STEADY_WINDOW
    if k:
        assert w.warm_delays.min() >= 1 and w.warm_delays.max() <= INSERT_MAX_DELAY_MS
    assert np.unique(w.warm_cancels).size == k * STEADY_WINDOW
    windows = w.warm_windows()
    assert len(windows) == k
    pending = set(range(n))
    for ids, delays, cancels in windows:
        assert ids.size == delays.size == cancels.size == STEADY_WINDOW
        pending |= set(ids.tolist())
        assert set(cancels.tolist()) <= pending
        pending -= set(cancels.tolist())
        assert len(pending) == n
    pending |= set(w.window_ids.tolist())
    assert set(w.cancel_order.tolist()) <= pending
    # The timed arrays do not depend on the warm-up's length.
    other = timer_workload("steady", n, seed=5, warm_windows=2)
    assert np.array_equal(other.cancel_order, w.cancel_order)
    assert np.array_equal(other.window_delays, w.window_delays)


def test_steady_warm_windows_must_be_a_count() -> None:
    with pytest.raises(ValueError, match="warm_windows"):
        timer_workload("steady", 10, warm_windows=-1)


def test_cancel_order_is_a_shuffled_permutation() -> None:
    w = timer_workload("cancel", 1000, seed=1)
    assert w.cancel_order is not None
    assert np.array_equal(np.sort(w.cancel_order), w.ids)
    assert not np.array_equal(w.cancel_order, w.ids)


def test_fire_workloads_advance_to_the_largest_delay() -> None:
    steps = timer_workload("fire-steps", 100).advance_times
    jump = timer_workload("fire-jump", 100).advance_times
    assert steps is not None and jump is not None
    assert np.array_equal(steps, np.arange(1, FIRE_MAX_DELAY_MS + 1))
    assert jump.tolist() == [FIRE_MAX_DELAY_MS]


def test_bad_sizes_and_names_are_refused() -> None:
    with pytest.raises(ValueError, match="workload size"):
        timer_workload("insert", 0)
    with pytest.raises(ValueError, match="unknown timer workload"):
        timer_workload("nope", 10)


def test_purgatory_distributions_follow_kafkas_benchmark() -> None:
    p = PurgatoryParams(rate=5000.0, pct50=20.0, pct75=80.0, timeout=30_000)
    w = purgatory_workload(40_000, seed=3, params=p)
    # Poisson arrivals at the requested rate
    rate = w.n / (w.arrival[-1] / 1000.0)
    assert abs(rate - p.rate) / p.rate < 0.03
    assert np.all(np.diff(w.arrival) >= 0)
    # log-normal latency, truncated to whole ms: its median and 75th percentile sit at pct50 and
    # pct75 (within the truncation and the sampling error)
    assert p.pct50 - 2 <= np.percentile(w.latency, 50) <= p.pct50 + 1
    assert p.pct75 * 0.9 - 1 <= np.percentile(w.latency, 75) <= p.pct75 * 1.1
    sigma = (math.log(p.pct75) - math.log(p.pct50)) / 0.674490
    tail = 1 - 0.5 * math.erfc(-(math.log(p.timeout) - math.log(p.pct50)) / (sigma * math.sqrt(2)))
    assert abs(w.expected_expirations / w.n - tail) < 0.01
    assert w.keys.shape == (w.n, 3) and w.keys.min() >= 0 and w.keys.max() < 100
    assert len({tuple(r) for r in w.keys[:100].tolist()}) > 50  # drawn per request


def test_purgatory_schedule_is_consistent() -> None:
    p = PurgatoryParams(rate=2000.0, pct50=5.0, pct75=300.0, timeout=400)
    w = purgatory_workload(3000, seed=5, params=p)
    pairs = list(zip(w.times.tolist(), w.kinds.tolist(), w.ops_ids.tolist()))
    assert pairs == sorted(pairs)  # by time, arrivals before completions, then op id
    arrived_at = {}
    completed = set()
    for t, k, op in pairs:
        if k == ARRIVE:
            assert op not in arrived_at
            arrived_at[op] = t
            assert t == w.arrival[op]
        else:
            assert k == COMPLETE and op in arrived_at  # never completed before it arrives
            assert t == w.arrival[op] + w.latency[op] and w.latency[op] < p.timeout
            completed.add(op)
    assert len(arrived_at) == w.n
    assert len(completed) == w.n - w.expected_expirations
    assert w.expected_expirations > 0  # this configuration must exercise expiry
    assert w.end > w.arrival.max() + p.timeout


def test_keys_per_run_is_kafkas_fixed_key_set() -> None:
    w = purgatory_workload(500, params=PurgatoryParams(keys_per_run=True, keys=3))
    assert (w.keys == w.keys[0]).all()


@pytest.mark.parametrize("kw,match", [
    ({"rate": 0.0}, "rate"), ({"pct50": 10.0, "pct75": 5.0}, "percentiles"),
    ({"timeout": 0}, "timeout"), ({"keys": 0}, "keys"), ({"key_space": 0}, "key_space"),
    ({"purge_interval": -1}, "purge_interval"),
])
def test_bad_purgatory_parameters_are_refused(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PurgatoryParams(**kw)
