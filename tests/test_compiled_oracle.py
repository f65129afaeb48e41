"""The compiled oracle (``conformance/check/compiled_oracle.py`` over
``optimized/oracle_kernels.py``) in lockstep with the reference oracle: per request the same
response, and per schedule the same coverage counts as the probe on the reference; the dispatch
between the two; and a failure found against the compiled oracle reported only once the
reference confirms it (two oracles that disagree are a RunnerBug, never a verdict)."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.adapters.protocol import Config, Response
from wheelspec.conformance.check import compiled_oracle, judge, oracle
from wheelspec.conformance.check.coverage import NAMES, Probe
from wheelspec.conformance.check.generate import generate
from wheelspec.conformance.check.runner import Run, RunnerBug, run_ops
from wheelspec.optimized import oracle_kernels
from wheelspec.spec import events as ev
from wheelspec.spec import ops

CAPS = reference_adapter().hello().capabilities


def compiled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's choice ``compiled`` (no ``--oracle reference`` left in the environment) with the
    kernels loaded: :func:`compiled_oracle.engine_for` picks the compiled oracle at once."""
    monkeypatch.delenv(compiled_oracle.ENV, raising=False)
    monkeypatch.setattr(compiled_oracle, "_kernels_loaded", lambda: True)


def both(cfg: Config, schedule: list[ops.Op], protocol: int = 2) -> tuple[tuple, tuple]:
    """(responses, non-zero coverage counts) of the reference oracle and of the compiled one."""
    caps = dataclasses.replace(CAPS, protocol=protocol)
    ref_probe, cmp_probe = Probe(), Probe()
    ref = oracle.oracle_run(caps, cfg, schedule, ref_probe, engine="reference")
    got = compiled_oracle.compiled_run(caps.effective(cfg), schedule, cmp_probe, protocol)
    assert got is not None, "the compiled oracle declined a plain timer schedule"
    assert isinstance(got, compiled_oracle.CompiledRun) and not isinstance(ref, compiled_oracle.CompiledRun)
    return (([s.response for s in ref.steps], compiled_oracle.counts_of(ref_probe)),
            ([s.response for s in got.steps], compiled_oracle.counts_of(cmp_probe)))


def assert_lockstep(cfg: Config, schedule: list[ops.Op], protocol: int = 2) -> None:
    (ref, ref_cov), (got, got_cov) = both(cfg, schedule, protocol)
    for i, (r, g) in enumerate(zip(ref, got)):
        assert r == g, f"step {i} {schedule[i]}: reference {r}, compiled {g}"
    assert len(ref) == len(got)
    assert ref_cov == got_cov


@st.composite
def timer_schedules(draw: st.DrawFn) -> tuple[Config, list[ops.Op], int]:
    """Small wheels and few task ids, so that cascades, re-adds, cancels, ties and stale clocks
    happen often; advances forward (sometimes by 0, sometimes far) and now and then backward."""
    tick = draw(st.sampled_from([1, 1, 2, 3, 5]))
    wheel = draw(st.sampled_from([2, 3, 4, 8, 20]))
    start = draw(st.sampled_from([0, 7, 1_000_003]))
    span = tick * wheel ** 3
    now = start
    schedule: list[ops.Op] = []
    for _ in range(draw(st.integers(1, 40))):
        what = draw(st.sampled_from(["add", "add", "add", "cancel", "advance", "advance", "size"]))
        task = draw(st.integers(0, 7))
        if what == "add":
            schedule.append(ops.AddTask(task, draw(st.integers(-2, span))))
        elif what == "cancel":
            schedule.append(ops.CancelTask(task))
        elif what == "advance":
            step = draw(st.one_of(st.integers(0, tick * wheel), st.integers(0, span), st.just(-1)))
            schedule.append(ops.AdvanceTo(max(0, now + step)))
            now = max(now, now + step)
        else:
            schedule.append(ops.Size())
    return Config(tick, wheel, start), schedule, draw(st.sampled_from([1, 2]))


@settings(max_examples=examples(300, 1000), deadline=None)
@given(timer_schedules())
def test_compiled_oracle_in_lockstep_with_reference(case: tuple[Config, list[ops.Op], int]) -> None:
    cfg, schedule, protocol = case
    assert_lockstep(cfg, schedule, protocol)


def test_lockstep_on_campaign_schedules() -> None:
    """The timer campaign's own schedules (the default run's first seeds), where compilable."""
    ran = 0
    for seed in range(examples(150, 400)):
        cfg, schedule = generate("timer", seed)
        if compiled_oracle.encode(schedule, 2) is not None:
            assert_lockstep(cfg, schedule)
            ran += 1
    assert ran >= examples(150, 400) * 9 // 10


def test_lockstep_for_an_implementation_compared_by_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timer the oracle compares by refusals only (here one claiming ``strict``) is judged
    against Kafka's SystemTimer at tick 1 and wheel size 20: the compiled oracle's run of it, and
    the coverage counted on it, equal the reference's."""
    compiled_now(monkeypatch)
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    caps = dataclasses.replace(CAPS, profile="strict", tick_ms=None, wheel_size=None, configurable=())
    assert oracle.oracle_mode(caps) == "refusals"
    compiled = 0
    for seed in range(examples(60, 200)):
        cfg, schedule = generate("timer", seed)
        got_probe, ref_probe = Probe(), Probe()
        got = oracle.oracle_run(caps, cfg, schedule, got_probe)
        ref = oracle.oracle_run(caps, cfg, schedule, ref_probe, engine="reference")
        compiled += isinstance(got, compiled_oracle.CompiledRun)
        assert not isinstance(ref, compiled_oracle.CompiledRun)
        assert [s.response for s in got.steps] == [s.response for s in ref.steps], f"seed {seed}"
        assert compiled_oracle.counts_of(got_probe) == compiled_oracle.counts_of(ref_probe), f"seed {seed}"
    assert compiled >= examples(60, 200) * 9 // 10


def test_situations_are_the_probes() -> None:
    assert set(oracle_kernels.TIMER_SITUATIONS) <= set(NAMES)


@pytest.mark.parametrize("schedule", [
    [ops.Watch(1, 5, ("k",), False, False), ops.AdvanceTo(9)],   # a purgatory request
    [ops.AddTask(True, 3)],                                       # a bool is no task id
    [ops.AddTask(-1, 3)],                                         # out of range: the reference refuses it
    [ops.AdvanceTo(2**60)],
])
def test_declines_what_it_does_not_run(schedule: list[ops.Op], monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_now(monkeypatch)
    assert compiled_oracle.compiled_run(Config(), schedule, None, 2) is None
    # and oracle_run then uses the reference: a plain Run
    assert not isinstance(oracle.oracle_run(CAPS, Config(), schedule), compiled_oracle.CompiledRun)


def test_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_now(monkeypatch)
    for mode in ("exact", "refusals"):  # both judge against Kafka's SystemTimer
        assert compiled_oracle.engine_for(mode, None) == "compiled"
    assert compiled_oracle.engine_for("multiset", None) == "reference"  # MockTimer
    assert compiled_oracle.engine_for("exact", [None, 1]) == "reference"  # executor order either
    assert compiled_oracle.engine_for("exact", None, "reference") == "reference"
    with compiled_oracle.using("reference"):
        assert compiled_oracle.engine_for("exact", None) == "reference"
        assert not isinstance(oracle.oracle_run(CAPS, Config(), [ops.AddTask(1, 3)]), compiled_oracle.CompiledRun)
    assert compiled_oracle.chosen() == "compiled"
    # (a schedule the reference ran above: its run is held and reused, the same value)
    assert not isinstance(oracle.oracle_run(CAPS, Config(), [ops.AddTask(1, 3)]), compiled_oracle.CompiledRun)
    assert isinstance(oracle.oracle_run(CAPS, Config(), [ops.AddTask(2, 3)]), compiled_oracle.CompiledRun)
    with pytest.raises(ValueError, match="unknown oracle"):
        compiled_oracle.use("fast")


def test_the_reference_runs_unless_loading_the_kernels_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled oracle serves once the timer work announced repays the kernels' load, or
    once they are loaded anyway; work nobody announced (shrinking, a corpus) never loads them."""
    monkeypatch.delenv(compiled_oracle.ENV, raising=False)
    monkeypatch.setattr(compiled_oracle, "_kernels_loaded", lambda: False)
    monkeypatch.setattr(compiled_oracle, "_announced", [0])
    mean = compiled_oracle.MEAN_TIMER_REQUESTS
    pays = -(-compiled_oracle.PAYS_AFTER_OPS // mean)  # schedules
    schedule = [ops.Size()] * mean
    watch = [ops.Watch(1, 5, ["k"], False, False)] * mean
    for _ in range(3 * pays):  # unannounced work, however much of it
        assert compiled_oracle.engine_for("exact", None, operations=schedule) == "reference"
    compiled_oracle.expect("purgatory", 10 * pays)  # the compiled oracle runs none of them
    compiled_oracle.expect("timer", pays - 1)
    assert compiled_oracle.engine_for("exact", None, operations=schedule) == "reference"
    compiled_oracle.expect("timer", 1)
    assert compiled_oracle.engine_for("exact", None, operations=schedule) == "compiled"
    assert compiled_oracle.engine_for("refusals", None, operations=schedule) == "compiled"
    assert compiled_oracle.engine_for("exact", None, operations=watch) == "reference"  # a purgatory schedule
    assert compiled_oracle.engine_for("multiset", None, operations=schedule) == "reference"  # MockTimer
    assert compiled_oracle.engine_for("exact", None, "reference", schedule) == "reference"  # a confirmation
    monkeypatch.setattr(compiled_oracle, "_announced", [0])
    assert compiled_oracle.engine_for("exact", None, "compiled", schedule) == "compiled"  # asked for: no waiting
    monkeypatch.setattr(compiled_oracle, "_kernels_loaded", lambda: True)
    assert compiled_oracle.engine_for("exact", None, operations=schedule) == "compiled"


def test_the_mean_timer_schedule_is_what_the_oracle_expects() -> None:
    """:func:`compiled_oracle.expect` counts a timer schedule as ``MEAN_TIMER_REQUESTS``: the
    generator's mean, within a tenth (else the load is paid too early or too late)."""
    n = examples(200, 1000)
    mean = sum(len(generate("timer", seed)[1]) for seed in range(n)) / n
    assert abs(mean - compiled_oracle.MEAN_TIMER_REQUESTS) <= compiled_oracle.MEAN_TIMER_REQUESTS / 10, mean


def test_a_schedule_bigger_than_the_engine_template_runs_in_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = compiled_oracle.TEMPLATE_ROWS + 5
    schedule = [ops.AddTask(t, 1 + t % 97) for t in range(tasks)] + [ops.AdvanceTo(50), ops.Size(),
                                                                       ops.AdvanceTo(200), ops.Size()]
    assert_lockstep(Config(1, 8, 3), schedule)


def test_kernels_loaded_once_the_engine_ran() -> None:
    compiled_oracle.compiled_run(Config(), [ops.AddTask(1, 3)], None, 2)
    assert compiled_oracle._kernels_loaded()


# ------------------------------------------------ failures confirmed by the reference ------------
class _LateByOne:
    """The reference, but every add's expiration is reported one ms late (a wrong result only the
    oracle's comparison catches)."""

    trusted_answers = True

    def __init__(self) -> None:
        self._ref = reference_adapter()

    def reset(self, config: Config) -> None:
        self._ref.reset(config)

    def request(self, op: ops.Op) -> Response:
        r = self._ref.request(op)
        if isinstance(op, ops.AddTask) and r.error is None:
            return dataclasses.replace(r, result=r.result + 1)
        return r


def test_a_real_failure_is_confirmed_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_now(monkeypatch)
    cfg, schedule = Config(), [ops.AddTask(1, 5), ops.AdvanceTo(5)]
    run = run_ops(_LateByOne(), cfg, schedule)
    computed = oracle.oracle_run(CAPS, cfg, schedule)
    assert isinstance(computed, compiled_oracle.CompiledRun)
    found = [f for f in judge.judge(run, CAPS, oracle=computed) if f.prop == "oracle"]
    ref = oracle.oracle_run(CAPS, cfg, schedule, engine="reference")
    assert found == [f for f in judge.judge(run, CAPS, oracle=ref) if f.prop == "oracle"] != []


def _planted(config: Config, operations: list[ops.Op], probe: object, protocol: int
             ) -> compiled_oracle.CompiledRun | None:
    """A wrong compiled oracle: every add's expiration one ms late, planted in the kernel's answers
    (so the judge meets it through CompiledRun.agrees, as it meets a real one)."""
    run = _REAL_RUN(config, operations, probe, protocol)
    if run is None:
        return None
    assert run._answers is not None
    kind, res, *rest = run._answers
    late = [r + 1 if k == oracle_kernels.OP_ADD else r for k, r in zip(kind, res)]
    return compiled_oracle.CompiledRun(run.config, operations=operations, answers=(kind, late, *rest))


_REAL_RUN = compiled_oracle.compiled_run


def test_oracles_disagreeing_is_a_runner_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_now(monkeypatch)
    monkeypatch.setattr(oracle, "compiled_run", _planted)
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    cfg, schedule = Config(), [ops.AddTask(1, 5), ops.AdvanceTo(5)]
    run = run_ops(reference_adapter(), cfg, schedule)
    with pytest.raises(RunnerBug, match="compiled oracle and the reference disagree"):
        judge.judge(run, CAPS)


def _refuses_adds(config: Config, operations: list[ops.Op], probe: object, protocol: int
                  ) -> compiled_oracle.CompiledRun | None:
    """A wrong compiled oracle: it refuses every add (what a comparison by refusals sees)."""
    run = _REAL_RUN(config, operations, probe, protocol)
    if run is None:
        return None
    steps = [dataclasses.replace(s, response=Response(s.response.now, error=("invalid", "planted")))
             if isinstance(s.op, ops.AddTask) else s for s in run.steps]
    return compiled_oracle.CompiledRun(run.config, steps)


def test_oracles_disagreeing_on_refusals_is_a_runner_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_now(monkeypatch)
    monkeypatch.setattr(oracle, "compiled_run", _refuses_adds)
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    caps = dataclasses.replace(CAPS, profile="strict", tick_ms=None, wheel_size=None, configurable=())
    cfg, schedule = Config(), [ops.AddTask(1, 5), ops.AdvanceTo(5)]
    run = run_ops(reference_adapter(), cfg, schedule)
    with pytest.raises(RunnerBug, match="compiled oracle and the reference disagree"):
        judge.judge(run, caps)


def test_check_with_a_planted_oracle_reports_a_runner_bug(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """``wheelspec check``'s library path (``check_impl``) on a correct implementation, with a
    wrong compiled oracle planted: a RunnerBug, not a failing verdict."""
    from wheelspec.conformance.api import check_impl

    compiled_now(monkeypatch)
    monkeypatch.setattr(oracle, "compiled_run", _planted)
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    with pytest.raises(RunnerBug, match="compiled oracle and the reference disagree"):
        check_impl("optimized", schedules=3, kinds=["timer"], corpus=False, regressions=None, out=tmp_path)


def test_the_command_exits_3_on_a_runner_bug_and_its_report_gives_no_verdict(
        monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """``wheelspec check`` with a wrong compiled oracle planted: exit 3 (a bug in wheelspec, a
    code no verdict uses), the traceback on stderr, and a JSON report whose implementation has
    status ``error``, neither pass nor fail."""
    import json

    from wheelspec.conformance.cli import main

    compiled_now(monkeypatch)
    monkeypatch.setattr(oracle, "compiled_run", _planted)
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    report = tmp_path / "r.json"
    code = main(["check", "--impl", "optimized", "--no-corpus", "--kinds", "timer", "--schedules", "3",
                 "--json", str(report), "--out", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 3
    assert "RunnerBug" in err and "Traceback" in err and "not a verdict" in err
    d = json.loads(report.read_text())
    impl = d["implementations"][0]
    assert (d["exit_code"], d["ok"], impl["status"]) == (3, False, "error")
    assert "a bug in wheelspec" in impl["error"]


@pytest.mark.parametrize("choice", ["reference", "compiled"])
def test_the_command_line_choice_reaches_the_oracle(choice: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from wheelspec.conformance.cli import build_parser, main

    monkeypatch.delenv(compiled_oracle.ENV, raising=False)
    assert build_parser().parse_args(["check"]).oracle == "compiled"
    assert build_parser().parse_args(["campaign", "--oracle", choice]).oracle == choice
    assert main(["check", "--impl", "reference", "--no-corpus", "--kinds", "timer", "--schedules", "2",
                 "--oracle", choice, "--out", str(tmp_path), "-q"]) == 0
    assert compiled_oracle.chosen() == choice


# ------------------------------------------------ the agreement check, before any comparison ----
def _mutations(run: Run) -> list[tuple[str, Run]]:
    """``run`` with one response changed each way an implementation can differ from the oracle."""
    out: list[tuple[str, Run]] = []

    def changed(what: str, i: int, resp: Response) -> None:
        steps = list(run.steps)
        steps[i] = dataclasses.replace(steps[i], response=resp)
        out.append((what, Run(run.config, steps, run.history, run.event_step)))

    for i, s in enumerate(run.steps):
        r = s.response
        if r.error is not None:
            changed("accepted", i, Response(r.now, [], None))
            continue
        changed("refused", i, Response(r.now, error=("invalid", "planted")))
        changed("now", i, dataclasses.replace(r, now=r.now + 1))
        if isinstance(r.result, int):
            changed("result", i, dataclasses.replace(r, result=(not r.result) if isinstance(r.result, bool)
                                                     else r.result + 1))
        if r.events:
            e = r.events[-1]
            changed("fire", i, dataclasses.replace(r, events=r.events[:-1] + [dataclasses.replace(e, exp=e.exp + 1)]))
            changed("lost fire", i, dataclasses.replace(r, events=r.events[:-1]))
            if len(r.events) > 1:
                changed("order", i, dataclasses.replace(r, events=r.events[::-1]))
        else:
            changed("extra fire", i, dataclasses.replace(r, events=[ev.Fire(r.now, 99, r.now)]))
    return out


@settings(max_examples=examples(60, 300), deadline=None)
@given(timer_schedules())
def test_agrees_with_the_reference_run_and_with_no_run_that_differs(case: tuple[Config, list[ops.Op], int]) -> None:
    """CompiledRun.agrees lets the judge skip the step-by-step comparison: it must hold for the
    reference's own run and fail for every run that differs from it in one response (a refusal,
    the clock, the result, a fire, the order of fires, a fire too many or too few).  In mode
    ``refusals`` it must say exactly what that mode's comparison says: a refusal changed is a
    difference, anything else is not."""
    cfg, schedule, protocol = case
    caps = dataclasses.replace(CAPS, protocol=protocol)
    got = compiled_oracle.compiled_run(caps.effective(cfg), schedule, None, protocol)
    assert got is not None
    ref = run_ops(reference_adapter(protocol=protocol), cfg, schedule)
    assert got.agrees(ref) and got.agrees(ref, "refusals")
    refusals_changed = 0
    for what, other in _mutations(ref):
        assert judge.oracle_failures(other, got, "exact") != [], what  # a real difference
        assert not got.agrees(other), what
        alike = judge.oracle_failures(other, got, "refusals") == []
        assert got.agrees(other, "refusals") == alike, what
        refusals_changed += not alike
    assert refusals_changed == sum(what in ("refused", "accepted") for what, _ in _mutations(ref))
    shorter = Run(ref.config, ref.steps[:-1], ref.history, ref.event_step)
    assert not got.agrees(shorter) and not got.agrees(shorter, "refusals")


def test_worth_loading_counts_the_timer_work_of_a_campaign(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compiled_oracle.ENV, raising=False)
    monkeypatch.setattr(compiled_oracle, "_announced", [0])
    pays = -(-compiled_oracle.PAYS_AFTER_OPS // compiled_oracle.MEAN_TIMER_REQUESTS)  # schedules
    assert compiled_oracle.worth_loading({"timer": pays, "purgatory": 10})
    assert not compiled_oracle.worth_loading({"timer": pays - 1})
    assert not compiled_oracle.worth_loading({"purgatory": 10**6})  # the compiled oracle runs timer schedules only
    monkeypatch.setenv(compiled_oracle.ENV, "reference")
    assert not compiled_oracle.worth_loading({"timer": 10**6})
