"""Pipelining (docs/guides/PROTOCOL.md, section 11): an adapter declaring ``pipeline`` N under protocol 2 is
sent up to N requests ahead of their answers, and the runs, histories and verdicts are exactly
those of one request at a time.  A hang or crash mid-pipeline is the ``responds`` finding of the
request that got no answer; a version-1 adapter, or one declaring no pipeline, is never sent a
request ahead; the declared window is never exceeded (tests/fixtures/window_adapter.py answers
``internal`` when it is).  Nothing here measures time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from wheelspec.conformance.adapters.engines import serve_command
from wheelspec.conformance.adapters.serve import SERVE_PIPELINE
from wheelspec.conformance.adapters.subprocess_adapter import LivenessError, SubprocessAdapter
from wheelspec.conformance.check.campaign import run_seed_range
from wheelspec.conformance.check.runner import run_ops
from wheelspec.spec import ops

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
WINDOW = FIXTURES / "window_adapter.py"
BAD = FIXTURES / "bad_adapter.py"
HANG = FIXTURES / "hang_adapter.py"


def _campaign(argv: list[str], seeds: range, *, pipeline: int | None = None, shrink: bool = False,
              kinds: tuple[str, ...] = ("timer", "purgatory")) -> tuple[list[dict[str, Any]], list[Any], int]:
    """Outcomes (as dicts) and histories of ``seeds`` of each kind, and the most requests that were in
    flight at once."""
    kw = {} if pipeline is None else {"pipeline": pipeline}
    a = SubprocessAdapter(argv, timeout=20, **kw)
    histories: list[Any] = []
    try:
        caps = a.hello().capabilities
        outs = []
        for kind in kinds:
            if kind == "purgatory" and not caps.purgatory:
                continue
            outs += run_seed_range(a, caps, kind, seeds, shrink=shrink,
                                   on_run=lambda seed, cfg, run: histories.append((seed, cfg, list(run.history))))
        return [o.to_dict() | {"coverage": dict(o.coverage)} for o in outs], histories, a.max_in_flight
    finally:
        a.close()


def _served(name: str) -> list[str]:
    return serve_command(name)


@pytest.mark.slow
def test_a_served_engine_is_pipelined_and_gives_the_same_histories_and_verdicts():
    piped, piped_h, depth = _campaign(_served("reference"), range(0, 40))
    plain, plain_h, plain_depth = _campaign(_served("reference"), range(0, 40), pipeline=1)
    assert depth > 1 and plain_depth == 1  # the first ran ahead, the second one request at a time
    assert piped_h == plain_h
    assert piped == plain
    assert all(o["ok"] for o in piped)


@pytest.mark.slow
def test_a_broken_served_implementation_fails_alike_pipelined_or_not(monkeypatch):
    monkeypatch.chdir(ROOT)  # serve imports tests.fixtures.broken from the repository root
    argv = [sys.executable, "-m", "wheelspec.conformance.adapters.serve", "tests.fixtures.broken:tries_completed"]
    piped, piped_h, depth = _campaign(argv, range(0, 12), shrink=True, kinds=("purgatory",))
    plain, plain_h, _ = _campaign(argv, range(0, 12), pipeline=1, shrink=True, kinds=("purgatory",))
    assert depth > 1
    assert piped_h == plain_h
    assert piped == plain  # failures, messages, shrunk counterexamples
    assert any(not o["ok"] for o in piped)


def test_the_engines_declare_the_pipeline_under_version_2_only():
    a = SubprocessAdapter(_served("reference"))
    try:
        caps = a.hello().capabilities
        assert caps.protocol == 2 and caps.pipeline == SERVE_PIPELINE and a.pipeline == SERVE_PIPELINE
    finally:
        a.close()
    v1 = SubprocessAdapter([sys.executable, str(WINDOW), "8", "v1"])
    try:
        assert v1.hello().capabilities.protocol == 1 and v1.pipeline == 1
    finally:
        v1.close()


SCHEDULE = [ops.AddTask(1, 5), ops.AddTask(2, 9), ops.Size(), ops.AdvanceTo(4), ops.CancelTask(2),
            ops.AddTask(3, 1), ops.AdvanceTo(20), ops.Size(), ops.AddTask(4, 2), ops.AdvanceTo(30)]


@pytest.mark.slow
@pytest.mark.parametrize("mode, reason, words", [("hang", "timeout", "no response within 1 s"),
                                                 ("crash", "exit", "exited with code 3")])
def test_a_hang_or_crash_mid_pipeline_names_the_request_that_got_no_answer(mode, reason, words):
    # request ids: hello 0, reset 1, the operations from 2: id 7 is operation 5, AddTask(3, 1)
    a = SubprocessAdapter([sys.executable, str(BAD), mode, "7"], timeout=1)
    try:
        assert a.pipeline > 1
        with pytest.raises(LivenessError) as info:
            run_ops(a, a.hello().capabilities.effective(_config()), SCHEDULE)
        e = info.value
        assert a.max_in_flight > 1  # requests after the unanswered one were on their way
        assert e.step == 5 and e.request["id"] == 7 and e.request["op"] == SCHEDULE[5].to_dict()
        assert e.reason == reason and words in e.problem
        assert [s.op for s in e.run.steps] == SCHEDULE[:5]  # the answers before it are kept
        # the next run starts a fresh process and is not disturbed by the dropped answers
        run = run_ops(a, _config(), SCHEDULE[:3])
        assert [s.response.result for s in run.steps] == [5, 9, 2] and a.restarts == 1
    finally:
        a.close()


@pytest.mark.slow
def test_a_hang_mid_pipeline_is_the_responds_finding_of_that_operation():
    a = SubprocessAdapter([sys.executable, str(BAD), "hang", "7"], timeout=1)
    try:
        caps = a.hello().capabilities
        import wheelspec.conformance.check.campaign as campaign

        real = campaign.generate
        campaign.generate = lambda kind, seed: (_config(), list(SCHEDULE))
        try:
            (out,) = run_seed_range(a, caps, "timer", [0], shrink=False)
        finally:
            campaign.generate = real
        (f,) = out.failures
        assert f.prop == "responds" and f.step == 5 and "no response within 1 s" in f.message
        assert a.max_in_flight > 1
    finally:
        a.close()


def _config():
    from wheelspec.conformance.adapters.protocol import Config

    return Config(1, 20, 0, 1000)


@pytest.mark.slow
@pytest.mark.parametrize("argv_tail", [["4", "v1"], ["1"]], ids=["version-1", "no-pipeline-declared"])
def test_an_adapter_without_a_pipeline_is_never_sent_a_request_ahead(argv_tail):
    outs, _, depth = _campaign([sys.executable, str(WINDOW), *argv_tail], range(0, 15))
    assert depth == 1
    assert all(o["ok"] for o in outs), [o["failures"] for o in outs if not o["ok"]][:1]


@pytest.mark.slow
def test_the_declared_window_is_kept():
    outs, _, depth = _campaign([sys.executable, str(WINDOW), "2"], range(0, 15))
    assert depth == 2  # used, and never more
    assert all(o["ok"] for o in outs), [o["failures"] for o in outs if not o["ok"]][:1]


def test_the_window_fixture_catches_a_runner_that_ignores_the_declaration(monkeypatch):
    monkeypatch.setattr(SubprocessAdapter, "_window", lambda self: 64 if self._hello is not None else 1)
    outs, _, depth = _campaign([sys.executable, str(WINDOW), "2"], range(0, 5), kinds=("timer",))
    assert depth > 2
    assert any("requests unanswered, the window is 2" in f["message"] for o in outs for f in o["failures"])
