"""``wheelspec matrix`` as a tool run in a user's directory: it writes ``./wheelspec-matrix/`` by
default, replaces only the files it generated (each carries a marker, ``conformance/matrix/files.py``),
refuses any other file in its way, and judges a user's ``--impl`` as a row of the table."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from wheelspec.conformance import cli
from wheelspec.conformance.matrix import Row, files, markdown
from wheelspec.conformance.matrix.render import failure_lines, html_page, write_plot
from wheelspec.conformance.matrix.rows import COLUMNS
from wheelspec.spec.show import impl_dirname

USER_IMPL = "tests.fixtures.broken:fires_early"  # the reference with a one-tick-early due test
ARGS = ["matrix", "--impl", "stdlib-sched", "--impl", USER_IMPL, "--schedules", "2"]
#: the exit code of ARGS: the user's own row fails (its early fires), and a user's row decides it
ARGS_EXIT = 1
OUT = Path("wheelspec-matrix")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's project with its own docs/MATRIX.md and docs/counterexamples/, as cwd."""
    (tmp_path / "docs" / "counterexamples").mkdir(parents=True)
    (tmp_path / "docs" / "MATRIX.md").write_text("# My own matrix\n\nHand-written; no markers.\n")
    (tmp_path / "docs" / "counterexamples" / "x.json").write_text('{"mine": true}\n')
    monkeypatch.chdir(tmp_path)
    # the user's implementation is importable from their path, whichever tests ran before
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    return tmp_path


def test_matrix_leaves_a_users_docs_untouched_and_writes_its_own_folder(user_dir: Path, capsys) -> None:
    before = _tree(user_dir / "docs")
    assert cli.main(ARGS) == ARGS_EXIT
    assert _tree(user_dir / "docs") == before
    assert sorted(p.name for p in user_dir.iterdir()) == ["docs", "wheelspec-matrix"]
    md = (OUT / "MATRIX.md").read_text()
    doc = json.loads((OUT / "matrix.json").read_text())
    assert doc["generated_by"] == "wheelspec matrix"
    assert (OUT / "matrix.html").read_text().startswith(files.HTML_MARKER)
    # the user's implementation is a row of the table, judged (its early fires fail)
    rows = {r["name"]: r for r in doc["rows"]}
    assert set(rows) == {"stdlib-sched", USER_IMPL}
    assert rows[USER_IMPL]["cells"]["early bound"] == "FAIL"
    assert any(line.startswith(f"| {USER_IMPL} | virtual |") for line in md.splitlines())
    saved = [Path(c) for r in doc["rows"] for c in r["counterexamples"]]
    assert saved and all(p.is_relative_to(OUT / "counterexamples") for p in saved)
    assert all(files.is_generated(p) for p in saved)
    out = capsys.readouterr().out  # the terminal output: the table, then the failures by shape
    assert "failures, grouped by shape" in out and f"{USER_IMPL} [no-early-fire]" in out


@pytest.mark.slow
def test_a_second_run_replaces_only_its_own_files(user_dir: Path) -> None:
    assert cli.main(ARGS) == ARGS_EXIT
    cx = OUT / "counterexamples"
    row_dir = next(p for p in cx.iterdir() if p.is_dir())
    foreign = {row_dir / "notes.txt": b"my notes\n", row_dir / "mine.json": b'{"source": "me"}\n',
               cx / "elsewhere" / "keep.json": b"{}\n"}
    for p, data in foreign.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    stale = row_dir / "stale.json"  # a counterexample of an earlier run: the matrix's own
    stale.write_text(json.dumps({"wheelspec_scenario": 1, "name": "x", "source": files.generated_source("old"),
                                 "steps": []}))
    (OUT / "matrix.json").write_text('{"generated_by": "wheelspec matrix", "old": true}\n')
    plot = OUT / "matrix-lateness.png"  # an earlier run's plot (real-time rows): this run has none
    plot.write_bytes(b"\x89PNG\r\n\x1a\n" + b"tEXtComment\x00" + files.MARKER.encode())
    assert cli.main(ARGS) == ARGS_EXIT
    assert not plot.exists()
    assert {p: p.read_bytes() for p in foreign} == foreign
    assert not stale.exists()
    assert "old" not in json.loads((OUT / "matrix.json").read_text())
    doc = json.loads((OUT / "matrix.json").read_text())
    assert all(Path(c).exists() for r in doc["rows"] for c in r["counterexamples"])


@pytest.mark.parametrize("target", ["MATRIX.md", "matrix.html", "matrix.json",
                                    "matrix-lateness.png"])
def test_a_foreign_file_at_a_target_is_refused_before_any_work(user_dir: Path, capsys, target: str) -> None:
    path = OUT / target
    path.parent.mkdir(parents=True)
    path.write_bytes(b"my own file\n")
    assert cli.main(ARGS) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "not written by wheelspec matrix" in err
    assert _tree(user_dir / OUT) == {target: b"my own file\n"}


def test_a_foreign_file_where_a_counterexample_goes_is_refused(user_dir: Path, capsys) -> None:
    path = OUT / "counterexamples" / impl_dirname("stdlib-sched") / "timer-largest-delay-and-one-past.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"wheelspec_scenario": 1, "name": "mine", "steps": []}\n')
    before = path.read_bytes()
    assert cli.main(["matrix", "--impl", "stdlib-sched", "--schedules", "1"]) == 2
    assert str(path) in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_foreign_file_where_a_real_time_schedule_goes_is_refused(user_dir: Path, capsys) -> None:
    path = OUT / "counterexamples" / impl_dirname("asyncio-live") / "asyncio-live-realtime-0.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"wheelspec_realtime_schedule": 1, "mine": true}\n')
    before = path.read_bytes()
    assert cli.main(["matrix", "--impl", "asyncio-live", "--rt-runs", "1", "--rt-tasks", "10"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not written by wheelspec matrix" in err
    assert path.read_bytes() == before


def test_out_docs_keeps_the_hand_written_part_of_a_generated_page(user_dir: Path) -> None:
    """How the project's own docs/results/MATRIX.md is made (``--out docs/results``): the marked block is replaced."""
    from wheelspec.conformance.matrix import MD_BEGIN, MD_END

    page = user_dir / "docs" / "MATRIX.md"
    page.write_text(f"# Matrix\n\nIntro.\n\n{MD_BEGIN}\nold table\n{MD_END}\n\n## Explanations\n\nKept.\n")
    assert cli.main([*ARGS, "--out", "docs"]) == ARGS_EXIT
    text = page.read_text()
    assert text.startswith("# Matrix\n\nIntro.\n\n") and text.endswith(f"{MD_END}\n\n## Explanations\n\nKept.\n")
    assert "old table" not in text and f"| {USER_IMPL} |" in text
    assert (user_dir / "docs" / "counterexamples" / "x.json").read_text() == '{"mine": true}\n'
    assert not OUT.exists()


def _row(name: str, failures: list[str], lateness: list[float] | None = None) -> Row:
    return Row(name, "", "virtual", "strict", {c: "pass" for c in COLUMNS}, {}, ["strict"], failures, [],
               lateness_ms=lateness or [])


def test_markdown_and_terminal_group_failures_by_shape() -> None:
    rows = [_row("lib", ["timer seed 1 -> [no-early-fire] task 3 fired at 10, before its expiration 12",
                         "timer seed 7 -> [no-early-fire] task 9 fired at 40, before its expiration 49",
                         "probe/x -> [expected] op 2: expected fired [1], got []"])]
    md = markdown(rows, {"versions": {}, "command": "c", "date": "d", "seconds": 0})
    bullets = [x for x in md.splitlines() if x.startswith("* lib")]
    assert bullets[0].startswith("* lib [no-early-fire], 2 failures: timer seed 1 ->")
    assert "  * also: timer seed 7" in md
    assert len(bullets) == 2
    assert [x.split(":")[0] for x in failure_lines(rows)] == ["lib [no-early-fire] x2", "lib [expected] x1"]


def test_the_plot_carries_the_marker(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the lateness plot needs the 'reports' extra (matplotlib)")
    png = tmp_path / "matrix-lateness.png"
    assert write_plot([_row("rt", [], [0.5, 1.0, 2.0])], png)
    assert files.is_generated(png)
    other = tmp_path / "other.png"
    other.write_bytes(png.read_bytes().replace(files.MARKER.encode(), b"x" * len(files.MARKER)))
    assert not files.is_generated(other)


def test_the_page_says_when_the_lateness_plot_is_left_out() -> None:
    """Without matplotlib the command says on stderr that the plot is left out; the page, which is
    what a reader opens, says it too, where the plot would be."""
    meta = {"versions": {}, "command": "c", "date": "d", "seconds": 0}
    rows = [_row("rt", [], [0.5, 1.0])]
    why = "The lateness plot is left out: it needs the 'reports' extra (pip install 'wheelspec[reports]')."
    page = html_page(rows, meta, None, why)
    assert "<h2>Real-time lateness</h2>" in page and html.escape(why) in page and "<img" not in page
    shown = html_page(rows, meta, "matrix-lateness.png", None)
    assert "<img src='matrix-lateness.png'" in shown and "left out" not in shown
    assert "Real-time lateness" not in html_page(rows, meta, None)  # no plot and nothing to say


def test_a_marked_real_time_schedule_still_loads(tmp_path: Path) -> None:
    from wheelspec.conformance.realtime.schedule import generate, load_schedule

    sched = generate(3, tasks=10)
    path = sched.save(tmp_path / "s.json")
    assert not files.is_generated(path)
    files.mark_schedule(path)
    assert files.is_generated(path)
    assert load_schedule(path).ops == sched.ops
