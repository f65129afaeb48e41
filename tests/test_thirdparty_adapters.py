"""Third-party virtual-clock timers (stdlib sched, Twisted's task.Clock, asyncio) through the
runner: what they satisfy, what they do not, and that the judgement is not vacuous."""

from __future__ import annotations

import pytest
from conftest import examples

from wheelspec.conformance.adapters.asyncio_loop import AsyncioAdapter, adapter_coarse
from wheelspec.conformance.adapters.asyncio_loop import adapter as asyncio_adapter
from wheelspec.conformance.adapters.protocol import Config
from wheelspec.conformance.adapters.stdlib_sched import SchedAdapter
from wheelspec.conformance.adapters.stdlib_sched import adapter as sched_adapter
from wheelspec.conformance.adapters.twisted_clock import adapter as twisted_adapter
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.corpus import load_corpus, run_scenario
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.matrix import probes
from wheelspec.spec import ops

FACTORIES = {"sched": sched_adapter, "twisted": twisted_adapter, "asyncio": asyncio_adapter}

#: corpus scenarios each library fails, and why (docs/guides/ADAPTERS.md, docs/results/MATRIX.md)
KNOWN_CORPUS_FAILURES = {
    # accepts a delay past 2^40-1: no range to refuse outside of (the clock is the adapter's, so
    # its refusals in timer/clock-range are not judged)
    "sched": {"timer/largest-delay-and-one-past"},
    "twisted": {"timer/largest-delay-and-one-past"},
    "asyncio": {"timer/largest-delay-and-one-past"},
}


@pytest.mark.parametrize("lib", FACTORIES)
def test_library_passes_strict_campaign(lib):
    a = FACTORIES[lib]()
    try:
        caps = a.hello().capabilities
        assert caps.profile == "strict" and caps.time == "virtual" and not caps.purgatory
        outs = run_seed_range(a, caps, "timer", range(examples(60, 300)), shrink=False)
    finally:
        a.close()
    # A schedule drawing an out-of-range request fails `ranges` only: none of these libraries has
    # a range (docs/results/MATRIX.md); every other property must hold.
    bad = [(o.seed, f.message) for o in outs for f in o.failures if f.prop != "ranges"]
    assert not bad, bad[:3]


@pytest.mark.parametrize("lib", FACTORIES)
def test_library_corpus_failures_are_exactly_the_documented_ones(lib):
    a = FACTORIES[lib]()
    try:
        caps = a.hello().capabilities
        results = [run_scenario(a, caps, sc) for sc in load_corpus()]
    finally:
        a.close()
    failed = {r.name for r in results if r.status == "fail"}
    assert failed == KNOWN_CORPUS_FAILURES[lib]
    assert sum(r.status == "pass" for r in results) >= 15
    # purgatory scenarios are not applicable to a timer, and say so
    assert all("purgatory" in r.note for r in results if r.status == "n/a")


def _probe(name):
    return next(p for p in probes() if p.name == f"probe/{name}")


def test_asyncio_ties_are_not_first_in_first_out_but_sched_and_twisted_are():
    sc = _probe("same-tick-order")
    orders = {}
    for lib, f in FACTORIES.items():
        a = f()
        run = run_ops(a, sc.config, sc.ops)
        a.close()
        orders[lib] = [e.task for s in run.steps for e in s.response.events]
    assert orders["sched"] == orders["twisted"] == list(range(1, 9))
    # asyncio's timer heap compares deadlines only: equal deadlines leave in heap order
    assert sorted(orders["asyncio"]) == list(range(1, 9)) and orders["asyncio"] != list(range(1, 9))


def test_asyncio_with_windows_clock_resolution_runs_callbacks_early():
    a = adapter_coarse()
    caps = a.hello().capabilities
    sc = _probe("early-bound-tick-10")
    run = run_ops(a, sc.config, sc.ops)
    a.close()
    fails = judge(run, caps)
    assert any(f.prop == "no-early-fire" for f in fails), fails
    early = max(e.exp - e.now for s in run.steps for e in s.response.events)
    assert 0 < early <= 15  # up to one clock resolution (15.625 ms) early, never more


def test_asyncio_float_clock_misses_a_timer_due_at_2_pow_40_ms():
    a = AsyncioAdapter()
    a.reset(Config())
    exp = 2**40 - 1
    a.request(ops.AddTask(1, exp))
    assert a.request(ops.AdvanceTo(exp)).events == []  # time() + 1e-9 s == time() at 1.1e9 s
    assert [e.task for e in a.request(ops.AdvanceTo(exp + 1)).events] == [1]
    a.close()


class _EarlySched(SchedAdapter):
    """Mutation: an advance also runs the events due 1 ms after the clock (fires one ms early)."""

    def advance_clock(self, time):
        self._now = time
        while self._s.queue and self._s.queue[0].time <= time + 1:
            event = self._s.queue[0]
            self._s.cancel(event)
            event.action(*event.argument)


class _CancelIgnoringSched(SchedAdapter):
    """Mutation: cancel reports success but leaves the event queued."""

    def unschedule(self, handle):
        return True


@pytest.mark.parametrize("mutant,prop", [(_EarlySched, "no-early-fire"),
                                         (_CancelIgnoringSched, "no-fire-after-cancel")])
def test_broken_drivers_are_caught(mutant, prop):
    a = mutant()
    caps = a.hello().capabilities
    found = set()
    for seed in range(examples(80, 200)):
        cfg, sched_ops = generate("timer", seed)
        found |= {f.prop for f in judge(run_ops(a, cfg, sched_ops), caps)}
        if prop in found:
            break
    a.close()
    assert prop in found, found


@pytest.mark.parametrize("lib", FACTORIES)
def test_driver_refusals(lib):
    a = FACTORIES[lib]()
    a.reset(Config(start_ms=50))
    assert a.request(ops.CancelTask(3)).error[0] == "unknown-id"
    assert a.request(ops.AdvanceTo(49)).error[0] == "invalid"
    assert a.request(ops.AddTask(-1, 5)).error[0] == "range"
    assert a.request(ops.Watched()).error[0] == "unsupported"
    r = a.request(ops.AddTask(1, 5))
    assert r.error is None and r.result == 55 and r.now == 50
    assert a.request(ops.Size()).result == 1
    a.close()
