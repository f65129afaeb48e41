"""conformance/measure/runner_parts.py: each of the runner's parts is timed over the same schedules and
printed as one row of positive figures (the benchmark prints figures; nothing here judges them)."""

from __future__ import annotations

import pytest

from wheelspec.conformance.check import compiled_oracle, oracle
from wheelspec.conformance.measure import runner_parts


def test_runner_parts_prints_one_row_of_positive_figures(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the script chooses the compiled oracle and announces a campaign: that stays in this test
    monkeypatch.setenv(compiled_oracle.ENV, "reference")
    monkeypatch.setattr(compiled_oracle, "_announced", [0])
    monkeypatch.setattr(oracle, "_ORACLES", oracle._OracleRuns())
    assert runner_parts.main(["--schedules", "6", "--reps", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("| ") and line[2].isdigit())
    figures = [float(x) for x in row.strip("| ").split(" | ")]
    assert len(figures) == 5 and all(f > 0 for f in figures[:4])
    assert abs(sum(figures[:4]) - figures[4]) < 0.02
