"""Every public name the conformance suite had before it was split into stage packages still
works: module paths in ``--impl``, ``python -m`` entry points, the pytest plugin's entry point,
and the ``origin`` fields of committed counterexample files."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import SubprocessAdapter, resolve
from wheelspec.conformance.check.campaign import GENERATOR_VERSIONS, GENERATORS
from wheelspec.conformance.check.corpus import load
from wheelspec.conformance.moved import MOVED

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_is_the_new_module(old: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_moved_names_cover_every_module_the_package_had() -> None:
    # The flat modules of the package before the split (git show 17b3b2a^:conformance).
    before = {"adapters", "adapters_asyncio", "adapters_sched", "adapters_twisted", "analyze", "analyze_local",
              "analyze_rules", "analyze_spark", "campaign", "campaign_cli", "cli", "commands", "errors", "hammer",
              "judge", "library_adapter", "linearizability", "matrix", "protocol", "pytest_plugin", "races",
              "realtime", "report", "report_html", "runner", "scenarios", "serve", "shrink", "spark_campaign",
              "spark_session", "subprocess_adapter", "trace", "trace_synth"}
    for name in sorted(before):
        importlib.import_module(f"wheelspec.conformance.{name}")  # a package now, or an alias


def test_old_names_of_modules_that_became_packages_keep_their_names() -> None:
    from wheelspec.conformance import adapters, matrix, realtime
    assert callable(adapters.resolve) and callable(adapters.reference_adapter)
    assert callable(realtime.resolve) and callable(realtime.judge_outcome)
    assert callable(matrix.virtual_row)


def test_impl_by_old_module_path() -> None:
    adapter = resolve("wheelspec.conformance.adapters_sched:adapter")()
    try:
        assert adapter.hello().name == "stdlib-sched"
    finally:
        adapter.close()


def test_python_dash_m_old_serve_path_serves() -> None:
    adapter = SubprocessAdapter([sys.executable, "-m", "wheelspec.conformance.serve", "reference"], label="old serve")
    try:
        assert adapter.hello().name == "reference"
    finally:
        adapter.close()


def test_python_dash_m_wheelspec_is_the_command() -> None:
    out = subprocess.run([sys.executable, "-m", "wheelspec", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("wheelspec "), out


def test_pytest_plugin_entry_point_loads() -> None:
    eps = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "wheelspec"]
    assert eps and eps[0].value == "wheelspec.conformance.pytest_plugin"
    assert hasattr(eps[0].load(), "pytest_addoption")


def test_committed_counterexamples_load_with_their_origin() -> None:
    files = sorted((ROOT / "docs" / "results" / "counterexamples").rglob("*.json"))
    # real-time rows save wall-clock schedules (wheelspec realtime --schedule), not scenarios
    files = [f for f in files if "wheelspec_realtime_schedule" not in json.loads(f.read_text())]
    assert files
    for f in files:
        sc = load(f)
        origin = json.loads(f.read_text())["origin"]
        assert sc.origin == origin and sc.recorded_impl(), f  # `wheelspec replay FILE` rebuilds its row
        if "seed" in origin:  # a campaign counterexample (corpus and probe failures have no seed)
            assert origin["generator"] in GENERATOR_VERSIONS, f
            assert origin["kind"] in GENERATORS, f
