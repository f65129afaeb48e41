"""Shared test configuration.

Hypothesis profiles: ``dev`` (default, fast enough for every change) and ``ci`` (deeper), chosen
by the environment variable ``WHEELSPEC_PROFILE``.  Markers (pyproject.toml): ``slow`` for the
deep runs that ``pytest -m "not slow"``, the first green run, leaves out; ``external(tool)`` for
tests that need a tool beside Python.  Every test also runs under pytest-timeout
(pyproject.toml): compiled numba code that loops forever cannot be interrupted otherwise.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("WHEELSPEC_PROFILE", "dev"))


def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> str:
    """Write ``source`` as module ``name`` in ``tmp_path``, the test's working directory, importable
    for the test (``--impl name:factory`` as a user would give it); return ``name``."""
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop(name, None)
    return name


def examples(dev: int, ci: int) -> int:
    """Examples for a test whose cost differs from the default: ``dev`` normally, ``ci`` in CI."""
    return ci if os.environ.get("WHEELSPEC_PROFILE") == "ci" else dev


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession every Spark test shares (local[2], loopback only, quiet): started
    once per test run, a few seconds on an idle machine."""
    from wheelspec.conformance.traces.spark_session import get_session

    session = get_session("local[2]", driver_memory="1g", shuffle_partitions=2)
    yield session
    session.stop()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``, pyproject.toml) every test that needs the Spark
    session runs on one worker, so the suite starts one Spark JVM instead of one per worker.

    The ``slow`` tests go first (a stable sort: the order is otherwise kept): the workers take
    work as they free up, so the long tests start while the short ones are left to fill the
    gaps, instead of one long test running alone at the end while the other worker waits."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or item.path.name.startswith(("test_spark_analyze",
                                                                                          "test_spark_campaign")):
            item.add_marker(pytest.mark.xdist_group("spark"))
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
