"""``wheelspec replay FILE`` without ``--impl`` judges the implementation the file records.

A saved counterexample records the exact ``--impl`` text of the implementation it failed on
(``origin.impl_spec``), whoever saved it (``check``, ``matrix``); replaying it with no ``--impl``
rebuilds that implementation, and the verdict line names it.  A file that records none, or one
whose implementation cannot be rebuilt, is one line and exit 2: never a verdict about an
implementation the user did not name (a reference PASS for a failing timer).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.adapters import resolve
from wheelspec.conformance.check.corpus import IMPL_SPEC, corpus_dir, load
from wheelspec.conformance.cli import main
from wheelspec.conformance.matrix.rows import ROW_IMPLS, impl_spec
from wheelspec.spec.show import impl_dirname

ROOT = Path(__file__).resolve().parents[1]
PY_IMPL = "tests.fixtures.broken:fires_early"  # the reference with a one-tick-early due test
#: the same broken adapter served over the protocol in a subprocess
CMD_IMPL = "cmd:" + shlex.join([sys.executable, "-m", "wheelspec.conformance.adapters.serve", PY_IMPL])


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # tests.fixtures imports from the repository root, as `python -m` would


def _saved_by_check(impl: str, out: Path) -> Path:
    """A counterexample `wheelspec check --impl impl` saves (the fixture fails early fires)."""
    assert main(["check", "--impl", impl, "--no-corpus", "--schedules", "100", "--kinds", "timer",
                 "--max-failures", "1", "--out", str(out)]) == 1
    saved = sorted(out.rglob("*.json"))
    assert saved, "check saved no counterexample"
    return saved[0]


def _verdict(out: str) -> str:
    return [line for line in out.splitlines() if line.startswith(("PASS ", "FAIL ", "N/A "))][-1]


@pytest.mark.parametrize("impl", [PY_IMPL, CMD_IMPL], ids=["python", "cmd"])
def test_replay_without_impl_judges_the_implementation_the_file_records(impl, tmp_path, capsys):
    cx = _saved_by_check(impl, tmp_path / "out")
    assert load(cx).recorded_impl() == impl  # the exact --impl text, not the folder name
    capsys.readouterr()
    report = tmp_path / "replay.json"
    # the failing implementation, rebuilt from the file: exit 1, named on the verdict line
    assert main(["replay", str(cx), "--json", str(report)]) == 1
    line = _verdict(capsys.readouterr().out)
    assert line.startswith("FAIL ") and f" on {impl} (the implementation the file records" in line, line
    doc = json.loads(report.read_text())
    assert doc["impl"] == impl and doc["impl_from"] == "file"
    assert doc["implementations"][0]["spec"] == impl and doc["implementations"][0]["status"] == "fail"
    # judging it against the reference is explicit, and the verdict line says so
    assert main(["replay", str(cx), "--impl", "reference"]) == 0
    line = _verdict(capsys.readouterr().out)
    assert line.startswith("PASS ") and " on reference" in line and "the file records" not in line, line


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _with_origin(src: Path, dst: Path, origin: dict | None) -> Path:
    d = json.loads(src.read_text())
    if origin is None:
        d.pop("origin", None)
    else:
        d["origin"] = origin
    dst.write_text(json.dumps(d))
    return dst


@pytest.mark.parametrize("spec, words", [
    ("no_such_module_wheelspec_x:factory", "cannot import module 'no_such_module_wheelspec_x'"),
    ("cmd:/nonexistent/wheelspec-adapter-x", "/nonexistent/wheelspec-adapter-x"),
    ("tests.fixtures.broken:no_such_factory", "has no callable 'no_such_factory'"),
])
def test_a_recorded_implementation_that_cannot_be_rebuilt_is_one_line_exit_2(spec, words, tmp_path, capsys):
    cx = _saved_by_check(PY_IMPL, tmp_path / "out")
    origin = {**json.loads(cx.read_text())["origin"], IMPL_SPEC: spec}
    f = _with_origin(cx, tmp_path / "moved.json", origin)
    capsys.readouterr()
    assert main(["replay", str(f), "--json", str(tmp_path / "r.json")]) == 2
    err = _one_line_error(capsys)
    assert str(f) in err and "cannot rebuild the implementation it records" in err and repr(spec) in err, err
    assert words in err, err
    assert "PASS" not in capsys.readouterr().out


def test_a_file_that_records_no_implementation_needs_impl(tmp_path, capsys):
    shipped = corpus_dir() / "timer" / "tick-boundaries.json"
    assert main(["replay", str(shipped)]) == 2
    err = _one_line_error(capsys)
    assert f"{shipped} records no implementation: give --impl" in err
    assert main(["replay", str(shipped), "--impl", "reference"]) == 0
    # a counterexample that keeps only the folder name (origin.impl) cannot be rebuilt from it
    cx = _saved_by_check(PY_IMPL, tmp_path / "out")
    origin = {k: v for k, v in json.loads(cx.read_text())["origin"].items() if k != IMPL_SPEC}
    f = _with_origin(cx, tmp_path / "old.json", origin)
    capsys.readouterr()
    assert main(["replay", str(f)]) == 2
    err = _one_line_error(capsys)
    assert f"records only the folder name '{impl_dirname(PY_IMPL)}'" in err and "give --impl" in err
    assert main(["replay", str(_with_origin(cx, tmp_path / "none.json", None))]) == 2
    assert "records no implementation" in _one_line_error(capsys)


def test_a_malformed_recorded_implementation_is_a_load_error(tmp_path, capsys):
    cx = _saved_by_check(PY_IMPL, tmp_path / "out")
    f = _with_origin(cx, tmp_path / "bad.json", {IMPL_SPEC: 7})
    capsys.readouterr()
    assert main(["replay", str(f)]) == 2
    assert f"{f}: origin.impl_spec must be a non-empty string" in _one_line_error(capsys)


@pytest.mark.slow
def test_the_matrix_saves_counterexamples_as_check_does_and_they_replay_alone(tmp_path, capsys):
    out = tmp_path / "mx"
    assert main(["matrix", "--impl", PY_IMPL, "--schedules", "40", "--out", str(out)]) == 1
    folder = out / "counterexamples" / impl_dirname(PY_IMPL)
    campaign = sorted(folder.glob("timer-[0-9]*.json"))
    assert campaign, sorted(p.name for p in folder.iterdir())
    assert not list(folder.glob("counterexample-*"))
    for p in campaign:  # the name and origin `wheelspec check` gives a counterexample of that seed
        sc = load(p)
        seed = sc.origin["seed"]
        assert p.name == f"timer-{seed}.json"
        assert sc.name == f"counterexample/{impl_dirname(PY_IMPL)}/timer-{seed}"
        assert sc.origin["impl"] == impl_dirname(PY_IMPL) and sc.recorded_impl() == PY_IMPL
    capsys.readouterr()
    for p in [campaign[0], *sorted(set(folder.glob("*.json")) - set(campaign))[:1]]:  # and a corpus one
        assert main(["replay", str(p)]) == 1, p
        assert f" on {PY_IMPL} (the implementation the file records" in _verdict(capsys.readouterr().out)


def test_the_matrix_names_no_campaign_file_like_a_corpus_scenario():
    """A failing corpus scenario is saved under its name (``timer-tick-boundaries.json``) beside
    the campaign's ``timer-<seed>.json``: no shipped name may take the form of a seed's."""
    import re

    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.conformance.matrix.rows import counterexample_stem, probes

    stems = [counterexample_stem(sc) for sc in [*load_corpus(), *probes()]]
    assert len(stems) == len(set(stems))
    assert not [s for s in stems if re.fullmatch(r"(timer|purgatory)-\d+", s)]


@pytest.mark.parametrize("row", [*sorted(ROW_IMPLS), "reference", "reference-mock", "optimized"])
def test_every_python_matrix_row_records_an_impl_that_rebuilds_it(row):
    """What `wheelspec replay FILE` rebuilds from a matrix counterexample is the row's adapter."""
    from wheelspec.conformance.matrix.rows import virtual_factory
    from wheelspec.conformance.optional import MissingExtra

    try:
        want = virtual_factory(row)()
    except MissingExtra as e:
        pytest.skip(f"{row} needs the {e.extra!r} extra")  # the row itself is "unavailable" then
    got = resolve(impl_spec(row))()
    try:
        assert type(got) is type(want)
        assert got.hello().name == want.hello().name
        assert got.hello().capabilities == want.hello().capabilities
    finally:
        got.close()
        want.close()


def test_committed_counterexamples_load_with_their_origin():
    from wheelspec.conformance.check.generate import GENERATOR_VERSIONS, GENERATORS

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
