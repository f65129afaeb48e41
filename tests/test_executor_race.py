"""The executor race (SEMANTICS.md, "Purge"; spec/profiles.py, ``EXECUTOR_ORDERS``).

Kafka's ``DelayedOperationPurgatory.advanceClock`` advances its ``SystemTimer``, which hands each
expired operation to the timer's executor thread, and then at once runs the purge check; the
executor completes the handed-over operations before, after or around that check.  An
implementation declares which outcomes it may show (``capabilities.executor_order``); the history
checker and the judge accept exactly those.  The double below is an independent purgatory (tick 1,
no wheel code) that shows a chosen outcome and declares a chosen order.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from wheelspec import optimized
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.conformance.check.corpus import load, run_scenario
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.oracle import purge_points
from wheelspec.conformance.check.runner import run_ops
from wheelspec.reference import Simulation
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.checker import check_history
from wheelspec.spec.errors import ProtocolError
from wheelspec.spec.profiles import EITHER_ORDER, EXPIRE_BEFORE_PURGE, PURGE_BEFORE_EXPIRE, profile

SCENARIOS = Path(__file__).resolve().parents[1] / "conformance" / "scenarios" / "purgatory"


class RaceDouble:
    """A purgatory at tick 1 (deadline = watch time + timeout) whose purge check runs after
    ``shows(advance number, expirations due)`` of an advance's expirations."""

    def __init__(self, shows, declares: str) -> None:
        self.shows = shows
        self.caps = Capabilities(timer=False, purgatory=True, profile="kafka", tick_ms=1, wheel_size=20,
                                 configurable=("start_ms", "purge_interval"), executor_order=declares)

    def hello(self) -> Hello:
        return Hello("race-double", self.caps)

    def reset(self, config: Config) -> None:
        self.now, self.interval, self.estimated, self.advances = config.start_ms, config.purge_interval, 0, 0
        self.lists: dict[object, list[int]] = {}
        self.deadline: dict[int, int] = {}   # ops on the timer
        self.done: set[int] = set()

    def _expire(self, op: int, out: list) -> None:
        self.done.add(op)
        out += [ev.Complete(self.now, op, "expire"), ev.Expire(self.now, op)]

    def _purge_check(self, out: list) -> None:
        delayed = len(self.deadline)
        if self.estimated - delayed > self.interval:
            before, self.estimated, purged = self.estimated, delayed, 0
            for key in list(self.lists):
                kept = [o for o in self.lists[key] if o not in self.done]
                purged += len(self.lists[key]) - len(kept)
                if kept:
                    self.lists[key] = kept
                else:
                    del self.lists[key]
            out.append(ev.Purge(self.now, before, delayed, purged))

    def request(self, op: ops.Op) -> Response:
        out: list = []
        if isinstance(op, ops.Watch):
            for k in op.keys:
                self.lists.setdefault(k, []).append(op.op)
            self.estimated += 1
            self.deadline[op.op] = self.now + op.delay
            return Response(self.now, [], False)
        if isinstance(op, ops.AdvanceTo):
            self.now = op.time
            due = sorted((d, o) for o, d in self.deadline.items() if d <= op.time)
            for _, o in due:  # handed to the executor: off the timer
                del self.deadline[o]
            split = self.shows(self.advances, len(due))
            self.advances += 1
            for _, o in due[:split]:
                self._expire(o, out)
            self._purge_check(out)
            for _, o in due[split:]:
                self._expire(o, out)
            return Response(self.now, out, None)
        if isinstance(op, ops.Watched):
            return Response(self.now, [], sum(len(v) for v in self.lists.values()))
        if isinstance(op, ops.NumDelayed):
            return Response(self.now, [], len(self.deadline))
        if isinstance(op, ops.CancelForKey):
            listed = self.lists.pop(op.key, [])
            for o in listed:
                self.deadline.pop(o, None)
            return Response(self.now, [], listed)
        if isinstance(op, ops.CheckAndComplete):
            if op.key in self.lists:
                self.lists[op.key] = [o for o in self.lists[op.key] if o not in self.done]
                if not self.lists[op.key]:
                    del self.lists[op.key]
            return Response(self.now, [], 0)
        return Response(error=("unsupported", f"{op.kind} is not offered by the race double"))

    def close(self) -> None:
        pass


def expire_first(_n: int, due: int) -> int:
    return due


def purge_first(_n: int, _due: int) -> int:
    return 0


def mixed(n: int, due: int) -> int:
    """Advance 0: purge first; advance 1: after one of its expirations; then expirations first."""
    return (0, min(1, due))[n] if n < 2 else due


#: watch(op 0, timeout 1); advance(1) at purge interval 0: the case of the issue
ONE = [ops.Watch(0, 1, ("a",)), ops.AdvanceTo(1), ops.NumDelayed(), ops.Watched(), ops.CancelForKey("a")]
#: three advances, two operations expiring together at the second
MANY = [ops.Watch(0, 1, ("a", "b")), ops.AdvanceTo(1), ops.Watched(), ops.Watch(1, 1, ("a",)),
        ops.Watch(2, 1, ("b",)), ops.AdvanceTo(2), ops.Watched(), ops.Watch(3, 1, ("c",)), ops.AdvanceTo(3),
        ops.Watched(), ops.CancelForKey("a"), ops.CancelForKey("b")]
CONFIG = Config(1, 20, 0, 0)


def _findings(shows, declares: str, seq=ONE) -> list:
    double = RaceDouble(shows, declares)
    return judge(run_ops(double, CONFIG, seq), double.caps)


# ------------------------------------------------------------------ the acceptance line ---------
@pytest.mark.parametrize("shows, seq, legal", [
    (expire_first, ONE, (EXPIRE_BEFORE_PURGE, EITHER_ORDER)),
    (purge_first, ONE, (PURGE_BEFORE_EXPIRE, EITHER_ORDER)),
    (expire_first, MANY, (EXPIRE_BEFORE_PURGE, EITHER_ORDER)),
    (purge_first, MANY, (PURGE_BEFORE_EXPIRE, EITHER_ORDER)),
    (mixed, MANY, (EITHER_ORDER,)),  # purge first, then between two expirations, then last
], ids=["expire-first", "purge-first", "expire-first-many", "purge-first-many", "mixed-many"])
def test_an_outcome_passes_iff_declared(shows, seq, legal):
    for declares in (EXPIRE_BEFORE_PURGE, PURGE_BEFORE_EXPIRE, EITHER_ORDER):
        found = _findings(shows, declares, seq)
        if declares in legal:
            assert found == [], (declares, [f.message for f in found])
        else:
            assert "executor-order" in {f.prop for f in found}, (declares, found)


def test_the_other_order_undeclared_is_named_as_the_race_not_as_num_delayed():
    found = _findings(purge_first, EXPIRE_BEFORE_PURGE)
    props = {f.prop for f in found}
    assert "num-delayed" not in props and "executor-order" in props, [f.message for f in found]
    msg = next(f.message for f in found if f.prop == "executor-order")
    assert "purge at 1 came before the expiration of op 0" in msg and "'purge-before-expire'" in msg


def test_the_default_order_declared_the_other_way_fails():
    found = _findings(expire_first, PURGE_BEFORE_EXPIRE)
    msg = next(f.message for f in found if f.prop == "executor-order")
    assert "came after the expiration of op 0" in msg


# ------------------------------------------------------------------ the corpus scenarios ---------
@pytest.mark.parametrize("order, shows", [(EXPIRE_BEFORE_PURGE, expire_first), (PURGE_BEFORE_EXPIRE, purge_first)])
def test_each_outcome_has_a_scenario_that_pins_it(order, shows):
    sc = load(SCENARIOS / f"executor-race-{order}.json")
    assert sc.expect_executor_orders == (order,)
    ok = RaceDouble(shows, order)
    res = run_scenario(ok, ok.caps, sc)
    assert res.status == "pass" and "expectations" not in res.note, res.failures
    other = PURGE_BEFORE_EXPIRE if order == EXPIRE_BEFORE_PURGE else EXPIRE_BEFORE_PURGE
    # the same behaviour declared as the other order: the checker names the race
    wrong = RaceDouble(shows, other)
    res = run_scenario(wrong, wrong.caps, sc)
    assert res.status == "fail" and "executor-order" in {f.prop for f in res.failures}
    # the other behaviour declared as this order: the expectations catch it too
    liar = RaceDouble(purge_first if shows is expire_first else expire_first, order)
    res = run_scenario(liar, liar.caps, sc)
    assert {"expected", "executor-order"} <= {f.prop for f in res.failures}


# ------------------------------------------------------------------ the reference ---------------
def _events(order: str) -> list:
    sim = Simulation(purge_interval=0, executor_order=order)
    for op in ONE:
        sim.apply(op)
    return list(sim.history)


def test_the_reference_produces_either_order():
    a, b = _events(EXPIRE_BEFORE_PURGE), _events(PURGE_BEFORE_EXPIRE)
    kinds = [e.kind for e in a[1:5]], [e.kind for e in b[1:5]]
    assert kinds == (["complete", "expire", "purge", "advance"], ["purge", "complete", "expire", "advance"])
    assert a[3].purged == 1 and b[1].purged == 0
    watched = [e.value for e in a + b if isinstance(e, ev.Observe) and e.what == "watched"]
    assert watched == [0, 1]
    assert [e.ops for e in a + b if isinstance(e, ev.CancelForKey)] == [(), (0,)]
    assert check_history(a, profile("kafka")).ok
    assert check_history(b, profile("kafka", executor_order=PURGE_BEFORE_EXPIRE)).ok
    assert {v.prop for v in check_history(b, profile("kafka")).violations} == {"executor-order"}


def test_a_purge_point_splits_one_advance_and_the_judge_follows_it():
    sim = Simulation(purge_interval=0)
    sim.watch(0, 1, ["a"])
    sim.watch(1, 1, ["a"])
    sim.set_purge_point(1)
    sim.advance_to(1)
    window = [e.kind if not isinstance(e, ev.Complete) else f"complete {e.op}" for e in sim.history][2:]
    assert window == ["complete 0", "expire", "purge", "complete 1", "expire", "advance"]
    double = RaceDouble(mixed, EITHER_ORDER)
    run = run_ops(double, CONFIG, MANY)
    assert [p for p in purge_points(run) if p is not None] == [0, 1, 1]


@pytest.mark.parametrize("engine", [Simulation, optimized.Simulation], ids=["reference", "optimized"])
def test_both_engines_refuse_what_is_not_one_outcome_of_the_race(engine):
    with pytest.raises(ValueError, match="not one outcome"):
        engine(executor_order=EITHER_ORDER)
    with pytest.raises(ValueError, match="unknown executor order"):
        engine(executor_order="sometimes")
    with pytest.raises(ValueError, match="inline"):
        engine(profile="strict-gt", executor_order=PURGE_BEFORE_EXPIRE)
    sim = engine()
    for bad in (-1, True, 1.5, "1"):
        with pytest.raises(ValueError, match="non-negative int"):
            sim.set_purge_point(bad)
    gt = engine(profile="strict-gt")
    gt.set_purge_point(0)  # MockTimer runs expirations inline: 0 and None are the only points
    with pytest.raises(ValueError, match="inline"):
        gt.set_purge_point(1)


def test_the_optimized_engine_shows_the_orders_and_points_of_the_reference():
    """(tests/test_optimized_lockstep.py, ExecutorLockstep, holds them equal on random runs.)"""
    for order in (EXPIRE_BEFORE_PURGE, PURGE_BEFORE_EXPIRE):
        runs = []
        for engine in (Simulation, optimized.Simulation):
            sim = engine(purge_interval=0, executor_order=order)
            for op in ONE:
                sim.apply(op)
            runs.append(list(sim.history))
        assert runs[0] == runs[1]
    split = []
    for engine in (Simulation, optimized.Simulation):
        sim = engine(purge_interval=0)
        sim.watch(0, 1, ["a"])
        sim.watch(1, 1, ["a"])
        sim.set_purge_point(1)
        sim.advance_to(1)
        split.append([e.kind for e in sim.history][2:])
    assert split[0] == split[1] == ["complete", "expire", "purge", "complete", "expire", "advance"]


def test_mocktimer_has_no_executor_race():
    with pytest.raises(ValueError, match="inline"):
        Simulation(profile="strict-gt", executor_order=PURGE_BEFORE_EXPIRE)
    with pytest.raises(ValueError, match="inline"):
        profile("strict-gt", executor_order=EITHER_ORDER)
    with pytest.raises(ProtocolError, match="executor_order"):
        Capabilities.from_dict({"profile": "strict-gt", "executor_order": "either"})
    with pytest.raises(ProtocolError, match="unknown executor order"):
        Capabilities.from_dict({"executor_order": "sometimes"})


def test_the_capability_travels_and_the_default_stays_off_the_wire():
    caps = Capabilities(purgatory=True, executor_order=EITHER_ORDER)
    assert Capabilities.from_dict(caps.to_dict()) == caps
    assert "executor_order" not in Capabilities().to_dict()
    assert dataclasses.replace(caps, executor_order=EXPIRE_BEFORE_PURGE).to_dict() == Capabilities(
        purgatory=True).to_dict()


def test_a_scenario_with_an_unknown_order_is_one_line(tmp_path):
    from wheelspec.spec.errors import UserError

    p = tmp_path / "s.json"
    p.write_text('{"wheelspec_scenario": 1, "name": "x", "expect_executor_orders": ["later"], "steps": []}')
    with pytest.raises(UserError, match=r"expect_executor_orders: unknown executor order 'later'"):
        load(p)

