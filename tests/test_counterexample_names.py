"""The one name of an implementation's saved counterexamples (``spec.show.impl_dirname``): a short
slug of the ``--impl`` text plus a hash of it, the folder ``check``, ``campaign`` and ``matrix``
save into, and the path their printed replay lines name; the full ``--impl`` text is in the file."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.check.corpus import load
from wheelspec.conformance.cli import main
from wheelspec.spec.show import impl_dirname

ROOT = Path(__file__).resolve().parents[1]
PY_IMPL = "tests.fixtures.broken:fires_early"  # the reference with a one-tick-early due test
CMD_IMPL = "cmd:" + shlex.join([sys.executable, "-m", "wheelspec.conformance.adapters.serve", PY_IMPL])


@pytest.mark.parametrize(("impl", "slug"), [
    ("cmd:java -jar mytimer.jar", "java-mytimer"),
    ("cmd:java -cp adapter/build ToyTimer", "java-toytimer"),
    ("cmd:/tmp/venv/bin/python -m wheelspec.conformance.adapters.serve reference", "python-serve-reference"),
    ("mytimer:adapter", "mytimer-adapter"),
    ("tests.fixtures.variants:early_fire", "variants-early-fire"),
    ("reference", "reference"),
    ("cmd:'my adapters/x'/toy-timer", "toy-timer"),
    ("cmd:python3.11 x.py", "python3-11-x"),
    ("   ", "impl"),
])
def test_the_name_is_a_readable_slug_and_a_hash_of_the_whole_text(impl: str, slug: str) -> None:
    name = impl_dirname(impl)
    assert re.fullmatch(re.escape(slug) + r"-[0-9a-f]{6}", name), name
    assert len(name) <= 70


def test_two_texts_of_one_slug_get_two_names_and_one_text_always_the_same() -> None:
    a, b = "cmd:/venv-a/bin/python -m pkg.serve x", "cmd:/venv-b/bin/python -m pkg.serve x"
    assert impl_dirname(a).rsplit("-", 1)[0] == impl_dirname(b).rsplit("-", 1)[0]
    assert impl_dirname(a) != impl_dirname(b)
    assert impl_dirname(a) == impl_dirname(f"  {a}\n")


@pytest.mark.slow
def test_check_saves_under_the_name_with_the_full_impl_inside_and_prints_its_replay_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)  # tests.fixtures imports from the repository root
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "out"
    assert main(["check", "--impl", CMD_IMPL, "--no-corpus", "--schedules", "40", "--kinds", "timer",
                 "--max-failures", "1", "--out", str(out)]) == 1
    folders = [p.name for p in out.iterdir()]
    assert folders == [impl_dirname(CMD_IMPL)] and folders[0].startswith("python-serve-broken-")
    saved = sorted((out / folders[0]).glob("timer-*.json"))
    assert saved
    assert load(saved[0]).recorded_impl() == CMD_IMPL
    printed = capsys.readouterr().out
    assert f"wheelspec replay {saved[0]}" in printed or f"replay {saved[0]}" in printed, printed[-2000:]
    assert "cmd__" not in printed


@pytest.mark.slow
def test_campaign_saves_under_the_same_name_as_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "camp"
    assert main(["campaign", "--impl", PY_IMPL, "--kinds", "timer", "--schedules", "20", "--chunk", "10",
                 "--engine", "local", "--workers", "1", "--out", str(out)]) == 1
    folders = [p.name for p in (out / "counterexamples").iterdir()]
    assert folders == [impl_dirname(PY_IMPL)]
    saved = sorted((out / "counterexamples" / folders[0]).glob("timer-*.json"))
    assert saved and all(load(p).recorded_impl() == PY_IMPL for p in saved)
