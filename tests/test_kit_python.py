"""``wheelspec init-adapter``'s Python kit (``conformance/kits/python/``), its language aliases and
its help: the kit, written into an empty directory, passes the check line it prints with its toy
timer, and fails it with a planted early fire."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.cli.init_adapter import ALIASES, KITS, LIBRARY_KITS, kit_files


def _env() -> dict[str, str]:
    """The printed lines' environment: the ``wheelspec`` console script of this Python first."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _init_python(tmp_path: Path) -> tuple[Path, str, str]:
    """Run ``wheelspec init-adapter --lang python`` as a user would: the kit's directory and its
    printed test and check lines (run in that directory)."""
    proc = subprocess.run([sys.executable, "-m", "wheelspec", "init-adapter", "--lang", "python", "kit"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(":  ", 1) for line in proc.stdout.splitlines() if line.startswith(("test:", "check:")))
    assert f"in {Path('kit')}:" in proc.stdout.splitlines()
    return tmp_path / "kit", lines["test"], lines["check"]


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=300, env=_env())


@pytest.mark.slow
def test_python_kit_passes_its_check_line_and_fails_it_with_an_early_fire(tmp_path: Path) -> None:
    kit, _test, check = _init_python(tmp_path)
    assert check == "wheelspec check --impl mytimer:adapter"
    ok = _run(check, kit)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    assert "toy-heap-timer" in ok.stdout and "PASS" in ok.stdout
    toy = kit / "mytimer.py"
    due = "self._heap[0][0] <= to:"
    assert toy.read_text().count(due) == 1, "the toy's due test (the line the plant changes)"
    toy.write_text(toy.read_text().replace(due, "self._heap[0][0] <= to + 1:"))  # runs a call 1 ms early
    bad = _run(check, kit)
    assert bad.returncode == 1, bad.stdout[-3000:] + bad.stderr[-3000:]
    assert "FAIL" in bad.stdout


@pytest.mark.slow
def test_python_kits_own_test_line_passes(tmp_path: Path) -> None:
    kit, test, _check = _init_python(tmp_path)
    ran = _run(f"{test} -p no:cacheprovider", kit)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "3 passed" in ran.stdout


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_language_aliases_write_their_languages_kit(tmp_path: Path, alias: str, capsys) -> None:
    assert main(["init-adapter", "--lang", alias, str(tmp_path / "k")]) == 0
    lang = ALIASES[alias]
    assert f"of the {lang} kit" in capsys.readouterr().out
    assert sorted(p.relative_to(tmp_path / "k").as_posix() for p in (tmp_path / "k").rglob("*") if p.is_file()) \
        == sorted(kit_files(lang))


def test_help_lists_the_aliases_and_each_exit_code_once(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["init-adapter", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for alias, lang in ALIASES.items():
        assert f"{alias} = {lang}" in text
    for lang in [*KITS, *LIBRARY_KITS]:
        assert lang in text
    codes = text[text.index("Exit codes:"):]
    assert codes.count(" 2 ") == 1 and "what was judged" not in codes


def test_an_unknown_language_is_one_usage_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["init-adapter", "--lang", "cobol", str(tmp_path / "k")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--lang" in err and "cobol" in err and "Traceback" not in err
    assert not (tmp_path / "k").exists()
