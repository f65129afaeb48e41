"""The rules of docs/guides/PROTOCOL.md that no other test pins, one test each (the document links here).

Each test drives wheelspec's own adapter side (``conformance/adapters/serve.py`` over in-memory
streams), the runner side (``protocol.py``, ``subprocess_adapter.py``) or the judge, and checks the
sentence of PROTOCOL.md named in its docstring.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.conformance.adapters.serve import serve
from wheelspec.conformance.adapters.subprocess_adapter import AdapterError, SubprocessAdapter
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.runner import run_ops
from wheelspec.reference import Simulation
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.checker import check_history
from wheelspec.spec.profiles import profile

RESET = {"tick_ms": 1, "wheel_size": 20, "start_ms": 0, "purge_interval": 1000}


def _serve(*requests: dict) -> list[dict]:
    """The reference adapter's answers to ``requests`` (a hello and a reset come first)."""
    lines = [{"type": "hello", "protocol": 1}, {"type": "reset", "config": RESET}, *requests]
    text = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(lines))
    out = io.StringIO()
    serve(reference_adapter(), io.StringIO(text), out)
    return [json.loads(x) for x in out.getvalue().splitlines()][2:]


def _error(answer: dict) -> str | None:
    return None if answer["ok"] else answer["error"]["type"]


# -- 3. Errors -----------------------------------------------------------------------------------
def test_a_request_wheelspec_cannot_decode_is_answered_invalid():
    """PROTOCOL.md 3: an unknown op kind, a missing or unknown field, a value of the wrong JSON type
    or an unknown request type get ``invalid`` from wheelspec's adapters."""
    answers = _serve({"type": "op", "op": {"kind": "teleport"}},
                     {"type": "op", "op": {"kind": "add", "task": 1}},
                     {"type": "op", "op": {"kind": "add", "task": 1, "delay": 5, "extra": 0}},
                     {"type": "op", "op": {"kind": "add", "task": 1, "delay": "5"}},
                     {"type": "op", "op": {"kind": "watch", "op": 1, "delay": 5, "keys": [True]}},
                     {"type": "frobnicate"})
    assert [_error(a) for a in answers] == ["invalid"] * 6
    assert "unknown operation kind 'teleport'" in answers[0]["error"]["message"]
    assert "missing field 'delay'" in answers[1]["error"]["message"]


def test_error_precedence_of_the_reference():
    """PROTOCOL.md 3 (several faults in one request): a negative clock reading is ``range`` though
    it is also before the clock; a reused op id is ``invalid`` though its delay is out of range; an
    out-of-range id is ``range``, not ``unknown-id``."""
    answers = _serve({"type": "op", "op": {"kind": "advance", "time": 5}},
                     {"type": "op", "op": {"kind": "advance", "time": -1}},
                     {"type": "op", "op": {"kind": "watch", "op": 0, "delay": 5, "keys": ["a"]}},
                     {"type": "op", "op": {"kind": "watch", "op": 0, "delay": 2**41, "keys": ["a"]}},
                     {"type": "op", "op": {"kind": "cancel", "task": 2**31}},
                     {"type": "op", "op": {"kind": "watch", "op": 1, "delay": 2**41, "keys": []}})
    assert [_error(a) for a in answers] == [None, "range", None, "invalid", "range", "invalid"]


class _Retyped:
    """The reference, but every refusal answered with another error type."""

    def __init__(self) -> None:
        self._ref = reference_adapter()

    def hello(self) -> Hello:
        return self._ref.hello()

    def reset(self, config: Config) -> None:
        self._ref.reset(config)

    def request(self, op: ops.Op) -> Response:
        r = self._ref.request(op)
        if r.error is not None:
            r = Response(error=("range" if r.error[0] != "range" else "invalid", r.error[1]))
        return r

    def close(self) -> None:
        self._ref.close()


def test_the_runner_judges_whether_a_request_is_refused_not_with_which_type():
    """PROTOCOL.md 3: the oracle compares which requests are refused; only a scenario's
    ``expect.error`` pins a type."""
    seq = [ops.AdvanceTo(5), ops.AdvanceTo(3), ops.Watch(0, 5, ("a",)), ops.Watch(0, 2**41, ("a",)),
           ops.CancelTask(9)]
    a = _Retyped()
    assert judge(run_ops(a, Config(1, 20, 0, 1000), seq), a.hello().capabilities) == []
    found = judge(run_ops(a, Config(1, 20, 0, 1000), seq), a.hello().capabilities,
                  expects=[None, {"error": "invalid"}, None, None, None])
    assert [f.prop for f in found] == ["expected"] and "expected an error 'invalid'" in found[0].message


# -- 2.2 reset -----------------------------------------------------------------------------------
def test_an_invalid_reset_is_refused_invalid_and_the_runner_stops():
    """PROTOCOL.md 2.2: the reference answers a reset it cannot honour (unknown key, wrong type,
    a value outside 4.4) with ``invalid``; the runner treats any refused reset as an adapter error
    (exit 2), never as a verdict."""
    lines = [{"type": "hello", "protocol": 1}, {"type": "reset", "config": {"tick_ms": 0}},
             {"type": "reset", "config": {"tick_ms": 1, "bogus": 3}}, {"type": "reset", "config": {"tick_ms": "1"}}]
    out = io.StringIO()
    serve(reference_adapter(), io.StringIO("".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(lines))),
          out)
    answers = [json.loads(x) for x in out.getvalue().splitlines()][1:]
    assert [_error(a) for a in answers] == ["invalid"] * 3
    adapter = SubprocessAdapter([sys.executable, "-m", "wheelspec.conformance.adapters.serve", "reference"],
                                label="reference")
    try:
        adapter.hello()
        with pytest.raises(AdapterError, match="reset was refused"):
            adapter.reset(Config(tick_ms=0))
    finally:
        adapter.close()


# -- 4. keys --------------------------------------------------------------------------------------
def test_key_string_1_and_key_int_1_are_different_keys():
    """PROTOCOL.md 4: keys compare by JSON type and value: ``"1"`` and ``1`` are two keys."""
    answers = _serve({"type": "op", "op": {"kind": "watch", "op": 0, "delay": 50, "keys": ["1"]}},
                     {"type": "op", "op": {"kind": "set_completable", "op": 0}},
                     {"type": "op", "op": {"kind": "check", "key": 1}},
                     {"type": "op", "op": {"kind": "cancel_for_key", "key": 1}},
                     {"type": "op", "op": {"kind": "cancel_for_key", "key": "1"}})
    assert [a["result"] for a in answers] == [False, None, 0, [], [0]]
    # the history checker keys its watch lists the same way
    h = [ev.TryCompleteElseWatch(0, 0, 50, ("1",), False), ev.CancelForKey(0, 1, (0,))]
    assert {v.prop for v in check_history(h, profile("kafka")).violations} == {"cancel-for-key-result"}


# -- 4.2 completes_on_retry with completable -------------------------------------------------------
@pytest.mark.parametrize("engine", ["reference", "optimized"])
def test_completable_wins_over_completes_on_retry(engine):
    """PROTOCOL.md 4.2: ``completable: true`` with ``completes_on_retry: true`` completes at the
    first ``tryComplete``: never watched, ``estimated`` unchanged, no timeout; ``completes_on_retry``
    alone completes at the second, after the operation joined its lists."""
    if engine == "optimized":
        from wheelspec.optimized import Simulation as Engine
    else:
        Engine = Simulation
    both, retry = Engine(purge_interval=0), Engine(purge_interval=0)
    assert both.watch(0, 10, ["a", "b"], True, True) is True
    assert retry.watch(0, 10, ["a", "b"], False, True) is True
    assert (both.watched(), both.num_delayed()) == (0, 0)
    assert (retry.watched(), retry.num_delayed()) == (2, 0)
    both.advance_to(1)
    retry.advance_to(1)
    # estimated - numDelayed > 0 only where the operation was counted as watched
    assert [e for e in both.history if isinstance(e, ev.Purge)] == []
    assert [e.purged for e in retry.history if isinstance(e, ev.Purge)] == [2]


# -- 5. the purgatory's timer and the order inside one advance -------------------------------------
def test_the_purgatory_timer_runs_the_reset_tick_and_wheel():
    """PROTOCOL.md 4.2: the purgatory's timeout timer is a SystemTimer with the reset's
    ``tick_ms`` and ``wheel_size``, started at ``start_ms``."""
    sim = Simulation(tick_ms=10, wheel_size=7, start_ms=1003)
    timer = sim.purgatory.timer
    assert (timer.tick_ms, timer.wheel_size, timer.timing_wheel.levels()[0].current_time) == (10, 7, 1000)
    sim.watch(0, 15, ["a"])  # deadline 1018: window [1010, 1020)
    sim.advance_to(1009)
    sim.advance_to(1010)
    assert [(e.now, e.via) for e in sim.history if isinstance(e, ev.Complete)] == [(1010, "expire")]


def test_inside_one_advance_fires_then_expirations_then_the_purge():
    """PROTOCOL.md 5: the timer's fires, then the purgatory's expirations, then its purge; a
    Kafka-faithful wheel must report that order (the exact oracle), the history checker does not
    require the fires before the expirations."""
    sim = Simulation(purge_interval=0)
    sim.add(1, 5)
    sim.watch(0, 5, ["a"])
    sim.advance_to(5)
    kinds = [e.kind for e in sim.history][2:]
    assert kinds == ["fire", "complete", "expire", "purge", "advance"]
    h = list(sim.history)
    swapped = h[:2] + h[3:5] + [h[2]] + h[5:]
    assert check_history(swapped, profile("kafka")).ok

    class Swapping(_Retyped):
        def request(self, op: ops.Op) -> Response:
            r = self._ref.request(op)
            if isinstance(op, ops.AdvanceTo) and r.events and isinstance(r.events[0], ev.Fire):
                r = Response(r.now, r.events[1:3] + r.events[:1] + r.events[3:], r.result)
            return r

    a = Swapping()
    found = judge(run_ops(a, Config(1, 20, 0, 0), [ops.AddTask(1, 5), ops.Watch(0, 5, ("a",)), ops.AdvanceTo(5)]),
                  a.hello().capabilities)
    assert [f.prop for f in found] == ["oracle"]
    caps = Capabilities(timer=True, purgatory=True, profile="strict")  # no wheel: not compared
    assert judge(run_ops(a, Config(1, 20, 0, 0), [ops.AddTask(1, 5), ops.Watch(0, 5, ("a",)), ops.AdvanceTo(5)]),
                 caps) == []
