"""The public Python adapter API (``wheelspec.conformance.adapters.api``) and its guides: the
complete example of docs/guides/PYTHON_ADAPTERS.md is extracted from the page and run through
``wheelspec check`` (so the page cannot rot), and a copy with a planted bug must fail."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from wheelspec.conformance import cli
from wheelspec.conformance.adapters import api
from wheelspec.conformance.adapters.protocol import observable_name
from wheelspec.conformance.check.narrow import out_of_range
from wheelspec.spec import ops
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, MAX_TIME_MS, MIN_DELAY_MS

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guides" / "PYTHON_ADAPTERS.md"
PURGATORY_GUIDE = ROOT / "docs" / "guides" / "PYTHON_PURGATORY_ADAPTERS.md"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)


def _check(tmp_path: Path, module: str, code: str, *args: str) -> tuple[int, dict]:
    """``wheelspec check --impl MODULE:adapter`` on ``code`` saved as MODULE.py."""
    (tmp_path / f"{module}.py").write_text(code)
    sys.path.insert(0, str(tmp_path))
    try:
        rc = cli.main(["check", "--impl", f"{module}:adapter", "--schedules", "40", "--out", str(tmp_path / "out"),
                       "--json", str(tmp_path / "report.json"), *args])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)
    return rc, json.loads((tmp_path / "report.json").read_text())["implementations"][0]


def test_the_timer_guides_example_passes_wheelspec_check(tmp_path: Path) -> None:
    blocks = python_blocks(GUIDE)
    assert len(blocks) == 1, "the guide has one complete example (the test runs it)"
    rc, impl = _check(tmp_path, "guide_mytimer", blocks[0])
    assert (rc, impl["status"]) == (0, "pass"), impl
    assert impl["capabilities"]["profile"] == api.STRICT
    assert impl["capabilities"]["ranges"] == "unbounded"
    assert "cancel-result" in impl["not_judged"]
    assert impl["campaign"], "the random schedules ran"


@pytest.mark.slow
def test_the_guides_example_with_a_planted_bug_fails(tmp_path: Path) -> None:
    code = python_blocks(GUIDE)[0]
    due = "self._heap[0][0] <= to"
    assert code.count(due) == 1, "the example's due test (the line this test breaks)"
    rc, impl = _check(tmp_path, "guide_mytimer_early", code.replace(due, "self._heap[0][0] <= to + 1"))
    assert (rc, impl["status"]) == (1, "fail")


def test_the_purgatory_guides_example_passes_wheelspec_check(tmp_path: Path) -> None:
    blocks = python_blocks(PURGATORY_GUIDE)
    assert len(blocks) == 1, "the guide has one complete example (the test runs it)"
    rc, impl = _check(tmp_path, "guide_mypurgatory", blocks[0], "--kinds", "purgatory")
    assert (rc, impl["status"]) == (0, "pass"), impl
    assert impl["capabilities"]["purgatory"] is True


@pytest.mark.slow
def test_the_purgatory_guides_example_with_a_planted_bug_fails(tmp_path: Path) -> None:
    code = python_blocks(PURGATORY_GUIDE)[0]
    due = "to > self._timer[0].deadline"
    assert code.count(due) == 1, "the example's expiry test (the line this test breaks)"
    rc, impl = _check(tmp_path, "guide_mypurgatory_early", code.replace(due, "to >= self._timer[0].deadline"),
                      "--kinds", "purgatory")
    assert (rc, impl["status"]) == (1, "fail")


#: what a user writing a Python adapter needs, and nothing more (the module docstring's table)
API = {"Adapter", "LibraryTimerAdapter", "SimulationAdapter", "Hello", "Capabilities", "Config", "Response",
       "ops", "events", "refused", "error_of", "range_refusal", "KAFKA", "STRICT", "STRICT_GT",
       "unobservable_names"}

#: the public extension hooks of LibraryTimerAdapter
HOOKS = ("start_library", "stop_library", "schedule", "deadline_of", "unschedule", "advance_clock", "read_clock",
         "count_pending")


def test_the_api_module_exports_what_the_guides_name() -> None:
    assert set(api.__all__) == API
    for name in api.__all__:
        assert hasattr(api, name), name
    named = set(re.findall(r"`(?:api\.)?([A-Za-z_]+)(?:\(|`)", GUIDE.read_text()))
    table = set(re.findall(r"``([A-Za-z_]+)``|:(?:class|func):`([A-Za-z_]+)`", api.__doc__ or ""))
    for name in API - {"ops", "events"}:
        assert name in named, name
        assert name in {a or b for a, b in table}, f"{name} is not in api's docstring table"
    from wheelspec.conformance.adapters.library import LibraryTimerAdapter

    assert api.LibraryTimerAdapter is LibraryTimerAdapter


def test_the_library_hooks_are_public_documented_and_clash_with_nothing() -> None:
    base = api.LibraryTimerAdapter
    guide = GUIDE.read_text()
    for hook in HOOKS:
        assert callable(getattr(base, hook)), hook
        assert f"``{hook}(" in (base.__doc__ or ""), f"{hook} is not in LibraryTimerAdapter's docstring"
        assert f"| `{hook}(" in guide, f"{hook} is not in the guide's table of hooks"
    # a hook must not shadow the Adapter interface nor an attribute the base or the runner reads
    taken = {"hello", "reset", "request", "close", "not_observed", "name", "version", "profile", "unobservable",
             "ranges", "tick_ms", "wheel_size", "lateness_ms", "earliness_ms", "pipeline", "out_of_process",
             "trusted_answers", "speak", "restart", "timeout", "simulation", "apply", "history"}
    assert not taken & set(HOOKS)
    private = {n for n in vars(base) if n.startswith("_") and not n.startswith("__") and callable(vars(base)[n])}
    assert private == {"_declared", "_add"}, "the base's private helpers are no hooks"


def test_a_library_adapter_declares_its_ranges_in_its_hello() -> None:
    class Unbounded(api.LibraryTimerAdapter):
        ranges = "unbounded"

    assert Unbounded().hello().capabilities.ranges == "unbounded"
    assert api.LibraryTimerAdapter().hello().capabilities.ranges == "bounded"


@pytest.mark.parametrize("op", [
    ops.AddTask(1, MAX_DELAY_MS), ops.AddTask(1, MAX_DELAY_MS + 1), ops.AddTask(1, MIN_DELAY_MS - 1),
    ops.AddTask(MAX_ID + 1, 5), ops.AddTask(-1, 5), ops.AdvanceTo(MAX_TIME_MS),
    ops.AdvanceTo(MAX_TIME_MS + 1), ops.Watch(1, MAX_DELAY_MS + 1, ("a",)),
    ops.Watch(MAX_ID + 1, 5, ("a",)),
    ops.Watch(1, 5, (2**63,)), ops.Resubmit(1, (-(2**63) - 1,)), ops.Size(),
])
def test_range_refusal_agrees_with_the_judges_ranges(op: ops.Op) -> None:
    r = api.range_refusal(op, now=7)
    assert (r is not None) == out_of_range(op)
    if r is not None:
        assert r.error is not None and r.error[0] == "range" and r.now == 7


def test_refused_names_a_protocol_error_type() -> None:
    assert api.refused("unknown-id", "task 3 was never added", 5).error == ("unknown-id", "task 3 was never added")
    with pytest.raises(ValueError, match="not one of"):
        api.refused("nope", "x")


def test_every_unobservable_name_is_accepted_in_a_hello() -> None:
    names = api.unobservable_names()
    assert {"task-ids", "clock", "cancel-result", "size"} <= set(names)
    assert all(observable_name(n) for n in names)
    api.Capabilities.from_dict({"unobservable": list(names)})
