"""`wheelspec matrix`: the virtual-time part of the matrix is deterministic, so a fresh run must
reproduce the committed docs/results/matrix.json cell for cell (real-time rows are noise-prone and are
covered by test_thirdparty_realtime.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.matrix import COLUMNS, VIRTUAL, virtual_row
from wheelspec.spec.show import impl_dirname

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = json.loads((ROOT / "docs" / "results" / "matrix.json").read_text())


def _committed(name):
    return next(r for r in COMMITTED["rows"] if r["name"] == name)


# The optimized engine's row is left to its own conformance tests (test_conformance_*): its
# verdict follows the corpus and the engine, both of which change as the project does.
@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in VIRTUAL if n != "optimized"])
def test_virtual_rows_match_the_committed_matrix(name):
    # fewer campaign schedules than the committed run: every cell is decided by the corpus, the
    # probes or the first seeds, which is also what makes the committed matrix reproducible
    row = virtual_row(name, schedules=40, cx_dir=None, progress=lambda m: None)
    want = _committed(name)
    assert row.cells == want["cells"]
    assert row.satisfies == want["satisfies"]
    for col in ("same-tick order", "delay <= 0", "huge delay"):
        assert row.notes.get(col) == want["notes"].get(col)


def test_committed_matrix_covers_every_implementation_and_column():
    names = {r["name"] for r in COMMITTED["rows"]}
    assert set(VIRTUAL) <= names and "netty-hashedwheeltimer" in names and "asyncio-live" in names
    assert COMMITTED["columns"] == list(COLUMNS)
    for r in COMMITTED["rows"]:
        assert set(r["cells"]) == set(COLUMNS)
        for path in r["counterexamples"]:  # every failure has its replayable file committed
            assert (ROOT / path).exists(), path
        if "FAIL" in r["cells"].values():
            assert r["counterexamples"], r["name"]
    netty = _committed("netty-hashedwheeltimer")
    assert netty["lateness"]["n"] > 0 and {"p50", "p99", "max"} <= set(netty["lateness"])


def test_matrix_command_small_run_and_usage_errors(tmp_path, capsys):
    code = main(["matrix", "--impl", "reference", "--impl", "stdlib-sched", "--schedules", "5", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "stdlib-sched" in out and "huge delay" in out
    md = (tmp_path / "MATRIX.md").read_text()
    assert "| stdlib-sched | virtual | strict |" in md and "saved `" in md
    assert "<table>" in (tmp_path / "matrix.html").read_text()
    assert list((tmp_path / "counterexamples" / impl_dirname("stdlib-sched")).glob("*.json"))
    assert main(["matrix", "--impl", "nope"]) == 2
    assert main(["matrix", "--schedules", "0"]) == 2
    err = capsys.readouterr().err
    assert "unknown implementation 'nope'" in err and "--schedules must be >= 1" in err
