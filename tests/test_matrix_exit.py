"""``wheelspec matrix``: a user's own ``--impl`` row decides the exit code, as in ``check``.

A CI job that adds the matrix to judge its own timer must go red when that timer fails; the
built-in rows other than our engines (the standard library, Twisted, the third-party peers) stay
informational: their failures are what the matrix reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.matrix.rows import VIRTUAL, is_users_row

ROOT = Path(__file__).resolve().parents[1]
FAILING = "tests.fixtures.broken:fires_early"         # early fires: a FAIL cell, its profile not satisfied
PASSING = "wheelspec.conformance.adapters:optimized_adapter"  # our engine, named as a user names a factory


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # tests.fixtures imports from the repository root


def _matrix(*impls: str) -> list[str]:
    return ["matrix", *(x for i in impls for x in ("--impl", i)), "--schedules", "3", "--no-files"]


def test_a_failing_users_row_exits_1_and_says_which(capsys) -> None:
    assert main(_matrix("stdlib-sched", FAILING)) == 1
    err = capsys.readouterr().err
    assert f"wheelspec matrix: {FAILING}: fails early bound" in err and "(exit 1)" in err
    assert "stdlib-sched: fails" not in err  # a built-in row's failure is reported, not an exit code


def test_failing_built_in_rows_stay_informational(capsys) -> None:
    assert main(_matrix("stdlib-sched", "reference")) == 0  # stdlib-sched fails "huge delay"
    assert "FAIL" in capsys.readouterr().out


def test_a_passing_users_row_exits_0() -> None:
    assert main(_matrix(PASSING)) == 0


def test_only_specs_outside_the_built_in_rows_are_users_rows() -> None:
    assert not any(is_users_row(n) for n in VIRTUAL)
    assert is_users_row(FAILING) and is_users_row("cmd:./mytimer")
