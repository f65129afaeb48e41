"""The Python library base (``LibraryTimerAdapter``): a re-add applied as the protocol says, one
refusal mapping for in-process and served adapters, and a declared tick and wheel size.

* A re-add of a scheduled task (Kafka's "a re-added task replaces its entry") reaches the library
  as the new schedule first and only then the cancel of the old one, so a re-add the library
  refuses changes nothing: after ``add(t, 5); add(t, -1)`` (refused), ``advance`` fires ``t`` at 5
  and ``size`` / ``cancel`` answer as if the refused request never happened.
* An exception a Python implementation raises is answered with the refusal
  ``base.error_of`` maps it to, in-process and served alike (a ``ValueError`` is ``invalid``).
* ``tick_ms`` / ``wheel_size`` class attributes go into the hello, and the reports show them as
  the configuration (the replay header, saved counterexamples).
"""

from __future__ import annotations

import heapq
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wheelspec.conformance.adapters.answers import decode_response
from wheelspec.conformance.adapters.base import error_of, saved_config
from wheelspec.conformance.adapters.library import LibraryTimerAdapter
from wheelspec.conformance.adapters.protocol import Capabilities, Config, Hello, Response
from wheelspec.conformance.adapters.serve import serve
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.judge import judge
from wheelspec.conformance.check.narrow import narrow
from wheelspec.conformance.check.runner import run_ops
from wheelspec.conformance.cli import main
from wheelspec.spec import events as ev
from wheelspec.spec import limits, ops
from wheelspec.spec.errors import RangeError
from wheelspec.spec.profiles import KAFKA, STRICT

#: the findings a lost task shows as (the bug of a base that cancels the old entry first)
LOST_TASK_PROPS = {"no-lost-task", "size", "cancel-result"}


# ------------------------------------------------------------------ a user's timers --------------
class HeapTimer:
    """A heap timer with its own clock; ``refuse(delay)`` says which delays it refuses (ValueError,
    or RangeError outside wheelspec's range), checked before anything is filed."""

    def __init__(self, now: int, refuse: Callable[[int], Exception | None]) -> None:
        self.now, self.refuse = now, refuse
        self.heap: list[tuple[int, int, list[Any]]] = []
        self.seq = 0

    def schedule(self, delay: int, fn: Callable[[], None]) -> list[Any]:
        error = self.refuse(delay)
        if error is not None:
            raise error
        entry = [self.now + delay, fn, "pending"]
        heapq.heappush(self.heap, (entry[0], self.seq, entry))
        self.seq += 1
        return entry

    def cancel(self, entry: list[Any]) -> bool:
        was = entry[2] == "pending"
        if was:
            entry[2] = "cancelled"
        return was

    def run_due(self) -> None:
        while self.heap and self.heap[0][0] <= self.now:
            _, _, entry = heapq.heappop(self.heap)
            if entry[2] == "pending":
                entry[2] = "ran"
                entry[1]()

    def advance(self, t: int) -> None:
        self.now = t
        self.run_due()

    def size(self) -> int:
        return sum(e[2] == "pending" for _, _, e in self.heap)


def no_negative(delay: int) -> Exception | None:
    return ValueError(f"delay {delay} is negative") if delay < 0 else None


def wheelspec_range(delay: int) -> Exception | None:
    return RangeError(f"delay {delay} is outside wheelspec's range") if abs(delay) > limits.MAX_DELAY_MS else None


class HeapAdapter(LibraryTimerAdapter):
    """HeapTimer on the library base; ``refuse`` chooses the delays it refuses."""

    name = "heap"
    profile = STRICT
    refuse: Callable[[int], Exception | None] = staticmethod(no_negative)

    def start_library(self, start_ms: int) -> None:
        self.t = HeapTimer(start_ms, type(self).refuse)

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> Any:
        return self.t.schedule(delay, callback)

    def deadline_of(self, handle: Any) -> int:
        return handle[0]

    def unschedule(self, handle: Any) -> bool:
        return self.t.cancel(handle)

    def advance_clock(self, time: int) -> None:
        self.t.advance(time)

    def read_clock(self) -> int:
        return self.t.now

    def count_pending(self) -> int:
        return self.t.size()


class NoNegativeDelays(HeapAdapter):
    """Refuses negative delays (ValueError), which Kafka accepts: ``refused-valid``, nothing else.
    Declared unbounded, so the schedules hold no request outside wheelspec's ranges."""

    ranges = "unbounded"


class BoundedHeap(HeapAdapter):
    """Refuses exactly the delays outside wheelspec's range (RangeError), as the reference does."""

    refuse = staticmethod(wheelspec_range)


def adapter_no_negative() -> NoNegativeDelays:
    """Factory for ``--impl test_library_readd:adapter_no_negative``."""
    return NoNegativeDelays()


# ------------------------------------------------------------------ 1. a refused re-add ----------
REFUSED_READD = [ops.AddTask(1, 5), ops.AddTask(1, -1), ops.Size(), ops.AdvanceTo(10), ops.Size(),
                 ops.CancelTask(1)]


def test_a_refused_re_add_changes_nothing() -> None:
    a = NoNegativeDelays()
    run = run_ops(a, Config(), REFUSED_READD)
    r = [s.response for s in run.steps]
    assert r[1].error is not None and r[1].error[0] == "invalid" and "negative" in r[1].error[1]
    assert r[2].result == 1                                  # the old entry is still scheduled
    assert r[3].events == [ev.Fire(10, 1, 5)]                # and fires at its own expiration
    assert r[4].result == 0 and r[5].result is False         # fired: nothing left to cancel
    failures = judge(run, a.hello().capabilities)
    assert [(f.prop, f.step) for f in failures] == [("refused-valid", 1)], failures


def test_a_refusal_the_reference_shares_passes_after_a_re_add() -> None:
    """A re-add refused as out of range (as Kafka's reference refuses it): nothing to report."""
    a = BoundedHeap()
    steps = [ops.AddTask(1, 5), ops.AddTask(1, limits.MAX_DELAY_MS + 1), ops.Size(), ops.AdvanceTo(10),
             ops.Size(), ops.CancelTask(1), ops.AddTask(2, 3), ops.AddTask(2, -limits.MAX_DELAY_MS - 1),
             ops.CancelTask(2), ops.Size()]
    run = run_ops(a, Config(), steps)
    assert run.steps[1].response.error[0] == "range"
    assert run.steps[3].response.events == [ev.Fire(10, 1, 5)]
    assert run.steps[8].response.result is True               # task 2 was still scheduled
    assert judge(run, a.hello().capabilities) == []


def _refused_readds(seeds: range, caps: Capabilities) -> int:
    """How many refused re-adds of a still-scheduled task the campaign's schedules hold (so the
    campaign test below exercises what it claims)."""
    n = 0
    for seed in seeds:
        _, schedule = generate("timer", seed)
        pending: dict[int, int] = {}
        now = 0
        for op in narrow(schedule, caps):
            if isinstance(op, ops.AdvanceTo):
                now = max(now, op.time)
                pending = {t: e for t, e in pending.items() if e > now}
            elif isinstance(op, ops.AddTask):
                if op.delay < 0 and op.task in pending:
                    n += 1
                elif op.delay >= 0:
                    pending[op.task] = now + op.delay
            elif isinstance(op, ops.CancelTask):
                pending.pop(op.task, None)
    return n


def test_a_campaign_on_a_timer_refusing_negative_delays_finds_only_the_refusal() -> None:
    a = NoNegativeDelays()
    caps = a.hello().capabilities
    seeds = range(300)
    assert _refused_readds(seeds, caps) >= 20
    outcomes = run_seed_range(a, caps, "timer", seeds, shrink=False)
    props = {f.prop for o in outcomes for f in o.failures}
    assert props == {"refused-valid"}, props
    assert not props & LOST_TASK_PROPS


def test_a_campaign_on_a_timer_refusing_out_of_range_delays_passes() -> None:
    a = BoundedHeap()
    outcomes = run_seed_range(a, a.hello().capabilities, "timer", range(300), shrink=False)
    assert [(o.seed, o.failures) for o in outcomes if o.failures] == []


def test_wheelspec_check_on_a_timer_refusing_negative_delays_reports_only_the_refusal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    code = main(["check", "--impl", "test_library_readd:adapter_no_negative", "--schedules", "300",
                 "--no-corpus", "--kinds", "timer", "--out", str(tmp_path / "out"),
                 "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 1, out   # the refusals of negative delays are refused-valid
    # every property the report names anywhere (findings, summaries, counterexamples)
    text = json.dumps(json.loads((tmp_path / "r.json").read_text()))
    assert set(re.findall(r'"prop": "([^"]+)"', text)) == {"refused-valid"}


# ------------------------------------------------------------------ 2. the order of a re-add ----
class EagerTimer(HeapTimer):
    """A timer whose ``schedule`` runs a delay <= 0 at once, then every entry already due (a
    library that works off due entries whenever it is called): the new entry fires inside the
    scheduling call, before the others it runs there."""

    def schedule(self, delay: int, fn: Callable[[], None]) -> list[Any]:
        if delay <= 0:
            fn()
            entry = [self.now + delay, fn, "ran"]
        else:
            entry = super().schedule(delay, fn)
        self.run_due()
        return entry

    def advance(self, t: int) -> None:
        self.now = t  # lazy: due entries run at the next schedule call


class EagerAdapter(HeapAdapter):
    refuse = staticmethod(lambda delay: None)

    def start_library(self, start_ms: int) -> None:
        self.t = EagerTimer(start_ms, type(self).refuse)


def test_a_re_add_run_inside_the_scheduling_call_keeps_the_order_and_the_old_entry_never_fires() -> None:
    a = EagerAdapter()
    a.reset(Config())
    a.request(ops.AddTask(1, 10))
    a.request(ops.AddTask(2, 10))
    assert a.request(ops.AdvanceTo(10)).events == []   # lazy: nothing runs yet
    r = a.request(ops.AddTask(1, 0))                   # re-add of task 1, due: the entry moves
    # the new entry of task 1 ran first, inside the call, then task 2 (due); task 1's old entry,
    # also due, ran inside the call too, but it was being replaced: never reported
    assert r.error is None and r.result == 10
    assert r.events == [ev.Fire(10, 1, 10), ev.Fire(10, 2, 10)]
    assert a.request(ops.Size()).result == 0


class KeyedTimer:
    """A timer that files entries by a key: a second schedule of a key replaces its entry, and the
    handle it returns is the key (a dict keyed by task, as many timing wheels are)."""

    def __init__(self, now: int) -> None:
        self.now = now
        self.entries: dict[int, tuple[int, int, Callable[[], None]]] = {}
        self.seq = 0

    def schedule(self, key: int, delay: int, fn: Callable[[], None]) -> int:
        self.seq += 1
        self.entries[key] = (self.now + delay, self.seq, fn)
        return key

    def unschedule(self, key: int) -> bool:
        return self.entries.pop(key, None) is not None

    def advance(self, t: int) -> None:
        self.now = t
        for key, (exp, _, fn) in sorted(self.entries.items(), key=lambda kv: kv[1][:2]):
            if exp <= t:
                fn()  # the callback reads the entry's deadline: removed once it has run
                del self.entries[key]


class KeyedAdapter(LibraryTimerAdapter):
    name = "keyed"
    profile = STRICT
    ranges = "unbounded"

    def start_library(self, start_ms: int) -> None:
        self.t = KeyedTimer(start_ms)
        self.exp: dict[int, int] = {}

    def schedule(self, task: int, delay: int, callback: Callable[[], None]) -> int:
        # a large task id: the same key again is an equal int, not the same object
        return self.t.schedule(task + 10**6, delay, callback)

    def deadline_of(self, handle: int) -> int:
        return self.t.entries[handle][0] if handle in self.t.entries else self.t.now

    def unschedule(self, handle: int) -> bool:
        return self.t.unschedule(handle)

    def advance_clock(self, time: int) -> None:
        self.t.advance(time)

    def read_clock(self) -> int:
        return self.t.now

    def count_pending(self) -> int:
        return len(self.t.entries)


def test_a_timer_keyed_by_task_is_not_asked_to_cancel_the_entry_it_replaced() -> None:
    a = KeyedAdapter()
    run = run_ops(a, Config(), [ops.AddTask(7, 5), ops.AddTask(7, 8), ops.Size(), ops.AdvanceTo(10)])
    assert run.steps[2].response.result == 1
    assert run.steps[3].response.events == [ev.Fire(10, 7, 8)]
    outcomes = run_seed_range(a, a.hello().capabilities, "timer", range(150), shrink=False)
    assert [(o.seed, o.failures) for o in outcomes if o.failures] == []


# ------------------------------------------------------------------ 3. one refusal mapping -------
class Raising:
    """An adapter that raises ``exc`` on every request."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def hello(self) -> Hello:
        return Hello("raising", Capabilities(profile=STRICT, configurable=("start_ms",)))

    def reset(self, config: Config) -> None:
        pass

    def request(self, op: ops.Op) -> Response:
        raise self.exc

    def close(self) -> None:
        pass


def _served(adapter: Any, op: ops.Op) -> Response:
    lines = [{"id": 0, "type": "hello", "protocol": 1}, {"id": 1, "type": "reset", "config": {}},
             {"id": 2, "type": "op", "op": op.to_dict()}, {"id": 3, "type": "bye"}]
    out = io.StringIO()
    serve(adapter, io.StringIO("".join(json.dumps(x) + "\n" for x in lines)), out)
    return decode_response(json.loads(out.getvalue().splitlines()[2]), op)


@pytest.mark.parametrize("exc", [ValueError("no negative delays"), KeyError(3), TypeError("not an int"),
                                 RangeError("delay out of range"), NotImplementedError("later"),
                                 RuntimeError("boom"), ZeroDivisionError("divided")])
def test_the_same_exception_is_the_same_refusal_in_process_and_served(exc: Exception) -> None:
    op = ops.AddTask(1, -1)
    inproc = run_ops(Raising(exc), Config(), [op]).steps[0].response
    served = _served(Raising(exc), op)
    assert inproc.error == served.error
    assert inproc.error is not None and inproc.error[0] == error_of(exc)[0]
    assert type(exc).__name__ in inproc.error[1]


def test_a_valueerror_of_a_library_timer_is_invalid_on_both_paths() -> None:
    """The case PYTHON_ADAPTERS.md documents: the library base's refusal, in-process and served."""
    op = ops.AddTask(1, -1)
    a = NoNegativeDelays()
    a.reset(Config())
    inproc = a.request(op)
    assert _served(NoNegativeDelays(), op).error == inproc.error
    assert inproc.error is not None and inproc.error[0] == "invalid"


# ------------------------------------------------------------------ 4. a declared tick and wheel --
class FixedWheel(HeapAdapter):
    """A heap timer declaring a fixed tick and wheel size; ``early`` fires each task 1 ms early."""

    name = "fixed-wheel"
    ranges = "unbounded"
    refuse = staticmethod(lambda delay: None)
    tick_ms = 10
    wheel_size = 4096
    early = 0

    def advance_clock(self, time: int) -> None:
        self.t.now = time
        self.t.now += self.early   # the bug: the heap runs what is due 1 ms later
        self.t.run_due()
        self.t.now = time


class EarlyFixedWheel(FixedWheel):
    early = 1


def adapter_fixed_wheel() -> FixedWheel:
    """Factory for ``--impl test_library_readd:adapter_fixed_wheel``."""
    return FixedWheel()


def test_a_declared_tick_and_wheel_size_are_in_the_hello() -> None:
    caps = FixedWheel().hello().capabilities
    assert (caps.tick_ms, caps.wheel_size) == (10, 4096)
    assert Capabilities.from_dict(caps.to_dict()) == caps
    assert caps.effective(Config(3, 8, 5, 1000)) == Config(10, 4096, 5, 1000)
    plain = HeapAdapter().hello().capabilities
    assert (plain.tick_ms, plain.wheel_size) == (None, None)


@pytest.mark.parametrize("attr, value", [("tick_ms", 0), ("wheel_size", 1), ("tick_ms", "10"),
                                         ("wheel_size", limits.MAX_WHEEL_SIZE + 1)])
def test_a_declared_value_outside_the_limits_is_one_line_exit_2(
        attr: str, value: object, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FixedWheel, attr, value)
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    assert main(["check", "--impl", "test_library_readd:adapter_fixed_wheel", "--schedules", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"FixedWheel.{attr}" in err and "Traceback" not in err


def test_a_saved_counterexample_holds_the_declared_configuration() -> None:
    a = EarlyFixedWheel()
    caps = a.hello().capabilities
    outcomes = run_seed_range(a, caps, "timer", range(6), impl_name="early")
    saved = [o.counterexample for o in outcomes if o.counterexample is not None]
    assert saved, "the early timer must fail some schedule"
    drawn = {generate("timer", o.seed)[0].tick_ms for o in outcomes if o.counterexample is not None}
    assert drawn != {10}   # the campaign drew other ticks: what is saved is the declared one
    assert {(cx.config.tick_ms, cx.config.wheel_size) for cx in saved} == {(10, 4096)}


def test_a_saved_configuration_holds_only_values_a_scenario_file_can_hold() -> None:
    drawn = Config(3, 8, 5, 1000)
    assert saved_config(Capabilities(tick_ms=10, wheel_size=4096), drawn) == Config(10, 4096, 5, 1000)
    # configurable: what the reset asked for
    assert saved_config(Capabilities(tick_ms=10, configurable=("tick_ms",)), drawn) == drawn
    # a declared value beyond wheelspec's limits (a hello may say so) cannot be loaded back
    too_big = Capabilities(tick_ms=limits.MAX_TICK_MS + 1, wheel_size=1)
    assert saved_config(too_big, drawn) == drawn


def test_the_replay_header_shows_the_declared_configuration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    sc = {"wheelspec_scenario": 1, "name": "declared-config", "config": {"tick_ms": 3, "wheel_size": 8, "start_ms": 0,
                                                 "purge_interval": 1000},
          "steps": [{"kind": "add", "task": 1, "delay": 5}, {"kind": "advance", "time": 10}]}
    path = tmp_path / "sc.json"
    path.write_text(json.dumps(sc))
    code = main(["replay", str(path), "--impl", "test_library_readd:adapter_fixed_wheel"])
    out = capsys.readouterr().out
    assert code == 0, out
    header = next(line for line in out.splitlines() if line.startswith("config "))
    assert "'tick_ms': 10" in header and "'wheel_size': 4096" in header
    assert "the file asks tick_ms=3, wheel_size=8" in header


class WindowHeap(HeapTimer):
    """Kafka's tick window on a heap: a task runs once the clock reaches the start of its tick
    window (``floor(exp / tick) * tick``), so up to ``tick - 1`` ms before its expiration."""

    tick = 10

    def run_due(self) -> None:
        while self.heap and self.heap[0][0] // self.tick * self.tick <= self.now:
            _, _, entry = heapq.heappop(self.heap)
            if entry[2] == "pending":
                entry[2] = "ran"
                entry[1]()


class WindowTimer(HeapAdapter):
    """WindowHeap under the kafka profile, declaring its tick."""

    name = "window"
    profile = KAFKA
    ranges = "unbounded"
    refuse = staticmethod(lambda delay: None)
    tick_ms = 10

    def start_library(self, start_ms: int) -> None:
        self.t = WindowHeap(start_ms, type(self).refuse)


def test_the_kafka_profile_is_judged_with_the_declared_tick() -> None:
    declared = WindowTimer()
    outcomes = run_seed_range(declared, declared.hello().capabilities, "timer", range(60), shrink=False)
    assert [(o.seed, o.failures) for o in outcomes if o.failures] == []
    # the same timer without the declaration is judged with the tick each schedule draws
    undeclared = WindowTimer()
    undeclared.tick_ms = None
    caps = undeclared.hello().capabilities
    undeclared.tick_ms = 10   # it still runs 10 ms windows
    outcomes = run_seed_range(undeclared, caps, "timer", range(60), shrink=False)
    assert any(o.failures for o in outcomes)


# ------------------------------------------------------------------ 5. a kit's toy timer ----------
#: the JavaScript kit's toy timer made to refuse negative delays, checked before it touches the
#: task's entry (as docs/guides/KITS.md asks of a refused add)
REFUSING_ADD = """  add(task, delay, fire) {
    if (delay < 0) throw new Refusal("invalid", `delay ${delay} is negative`);
"""


@pytest.mark.slow
@pytest.mark.external("node")
def test_a_kits_toy_timer_refusing_a_re_add_keeps_the_old_entry(tmp_path: Path) -> None:
    import shutil

    from wheelspec.conformance.adapters.subprocess_adapter import SubprocessAdapter

    if shutil.which("node") is None:
        pytest.fail("node is not installed: the JavaScript kit's test needs it (bash .ci/system-deps)")
    assert main(["init-adapter", "--lang", "javascript", str(tmp_path)]) == 0
    timer = tmp_path / "timer.js"
    src = timer.read_text()
    assert src.count("  add(task, delay, fire) {\n") == 1 and src.count('const { serve } = require') == 1
    timer.write_text(src.replace("  add(task, delay, fire) {\n", REFUSING_ADD)
                     .replace("const { serve } = require", "const { serve, Refusal } = require"))
    a = SubprocessAdapter(["node", str(timer)])
    try:
        caps = a.hello().capabilities
        run = run_ops(a, Config(), REFUSED_READD)
        r = [s.response for s in run.steps]
        assert r[1].error is not None and r[1].error[0] == "invalid"
        assert r[2].result == 1 and r[3].events == [ev.Fire(10, 1, 5)]
        assert r[4].result == 0 and r[5].result is False
        assert [(f.prop, f.step) for f in judge(run, caps)] == [("refused-valid", 1)]
        outcomes = run_seed_range(a, caps, "timer", range(300), shrink=False)
    finally:
        a.close()
    props = {f.prop for o in outcomes for f in o.failures}
    assert props == {"refused-valid"}, props


def adapter_window() -> WindowTimer:
    """Factory for ``--impl test_library_readd:adapter_window``."""
    return WindowTimer()


def test_a_trace_of_a_declared_tick_is_analysed_with_that_tick(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check --write traces=DIR`` records the configuration the implementation ran, so ``analyze``
    judges the kafka tick window with the declared tick, not the one each schedule drew."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    out = tmp_path / "traces"
    assert main(["check", "--impl", "test_library_readd:adapter_window", "--no-corpus", "--kinds", "timer",
                 "--schedules", "20", "--write", "traces=" + str(out), "--out", str(tmp_path / "cx")]) == 0
    (trace,) = out.glob("*.parquet")
    assert main(["analyze", str(trace), "--engine", "local"]) == 0
