"""Installs as a user installs: the built wheel (not the editable checkout), with the base
dependencies only, in a fresh venv, running every command's documented example there: no
traceback anywhere, exit codes as documented, and a missing optional dependency either one line
naming the extra (exit 2) or a report written without that part that says so.

The quick tests below check the same behaviours in this process, hiding an installed optional
package by setting it to None in ``sys.modules`` (what an import of a missing package sees).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wheelspec.conformance.cli import COMMANDS, main
from wheelspec.conformance.optional import EXTRAS, MissingExtra, available, require

ROOT = Path(__file__).resolve().parents[1]


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    # Submodules an earlier test imported are hidden too: `import a.b` finds a cached a.b
    # without looking at a.
    for m in modules:
        for loaded in [k for k in sys.modules if k.startswith(m + ".")]:
            monkeypatch.setitem(sys.modules, loaded, None)
        monkeypatch.setitem(sys.modules, m, None)


# ------------------------------------------------------------------ in this process -------------
def test_require_is_one_line_naming_the_extra(monkeypatch):
    _hide(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtra) as e:
        require("matplotlib.pyplot", "reports", "--plot")
    assert str(e.value) == ("--plot needs the 'reports' extra: pip install 'wheelspec[reports]' "
                            "(matplotlib.pyplot is not installed)")
    assert e.value.exit_code == 2 and e.value.extra == "reports"
    assert not available("matplotlib")


def test_require_lets_an_error_inside_an_installed_package_through(tmp_path, monkeypatch):
    """A broken install of an extra is not "install the extra": its own error shows."""
    pkg = tmp_path / "wheelspec_broken_dep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import wheelspec_no_such_inner_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="wheelspec_no_such_inner_module"):
        require("wheelspec_broken_dep", "reports", "x")


def test_extras_table_matches_pyproject():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        pinned = " ".join(extras[extra]).lower()
        for m in modules:
            assert m in pinned, f"{m} is said to come with '{extra}' but pyproject's extra lacks it"
    assert set(EXTRAS) <= set(extras) and "all" in extras


def test_twisted_row_is_unavailable_naming_the_extra(monkeypatch):
    from wheelspec.conformance.matrix import virtual_row

    _hide(monkeypatch, "twisted", "twisted.internet", "twisted.internet.task")
    row = virtual_row("twisted-clock", schedules=1, cx_dir=None, progress=lambda m: None)
    assert set(row.cells.values()) == {"unavailable"}
    assert "needs the 'thirdparty' extra" in next(iter(row.notes.values()))
    assert row.failures == ["unavailable: needs the 'thirdparty' extra (pip install 'wheelspec[thirdparty]')"]


def test_matrix_without_twisted_exits_0_and_says_which_extra(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "twisted")
    rc = main(["matrix", "--impl", "twisted-clock", "--schedules", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "twisted-clock: unavailable: needs the 'thirdparty' extra" in err
    assert "unavailable (needs the 'thirdparty' extra)" in (tmp_path / "MATRIX.md").read_text()


def test_analyze_report_without_matplotlib_is_written_and_says_so(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "matplotlib")
    rc = main(["analyze", "--synthetic", "300", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Traceback" not in err and "the 'reports' extra" in err
    page = (tmp_path / "report.html").read_text()
    assert "Plots left out: they need the &#x27;reports&#x27; extra" in page
    assert not list(tmp_path.glob("*.png")) and (tmp_path / "analysis.json").is_file()


def test_bench_plot_without_matplotlib_is_one_line(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "matplotlib")
    rc = main(["bench", "--quick", "--write", "plot=" + str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == ("wheelspec bench: error: --write plot=PATH needs the 'reports' extra: pip install "
                           "'wheelspec[reports]' (matplotlib is not installed)")


@pytest.mark.parametrize("command", ["analyze", "campaign"])
def test_spark_engine_without_pyspark_is_one_line(command, monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "pyspark", "pyspark.sql")
    argv = (["analyze", "--synthetic", "200", "--write", "trace=" + str(tmp_path / "t.parquet")] if command == "analyze"
            else ["campaign", "--schedules", "2", "--out", str(tmp_path / "c")])
    rc = main(argv + ["--engine", "spark"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.endswith("--engine spark needs the 'spark' extra: pip install 'wheelspec[spark]' "
                        "(pyspark.sql is not installed)")


def test_docs_lists_and_prints_the_shipped_pages(capsys):
    assert main(["docs"]) == 0
    listed = capsys.readouterr().out
    for name in ("PROTOCOL", "SEMANTICS", "SPARK", "TRACE_FORMAT", "ENGINE", "MATRIX", "heap_timer.js"):
        assert f"\n  {name} " in listed
    for folder in ("guides", "design", "results", "spec", "examples"):
        assert f"{folder}: " in listed
    for name in ("PROTOCOL", "docs/protocol.md", "docs/guides/PROTOCOL.md"):
        assert main(["docs", name]) == 0
        assert capsys.readouterr().out == (ROOT / "docs" / "guides" / "PROTOCOL.md").read_text()
    assert main(["docs", "--path", "heap_timer.js"]) == 0
    assert Path(capsys.readouterr().out.strip()) == ROOT / "docs" / "examples" / "heap_timer.js"
    assert main(["docs", "NOPE"]) == 2
    assert "no shipped document 'NOPE' (known: " in capsys.readouterr().err


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    return capsys.readouterr().out


def test_help_texts_point_only_at_shipped_files(capsys):
    """Every file a ``--help`` names is in the wheel (``wheelspec docs`` prints it); none is a
    file of the repository that the wheel does not hold (tests/, benchmarks' data...)."""
    import re

    from wheelspec.conformance.cli.docs import lookup

    texts = {"wheelspec": _help(["--help"], capsys)}
    texts.update({name: _help([name, "--help"], capsys) for name in COMMANDS})
    for name, text in texts.items():
        flat = re.sub(r"\s+", " ", text)
        assert "tests/" not in flat, f"wheelspec {name} --help names a file of tests/, which is not installed"
        for ref in re.findall(r"docs/[\w./-]+\.(?:md|js)", flat):
            lookup(ref)   # raises (UserError) if the page is not shipped
        for ref in re.findall(r"wheelspec docs (?:--path )?([A-Z][A-Z_]+|[\w-]+\.\w+)\b", flat):
            if ref != "NAME":
                lookup(ref)


def test_the_example_adapter_ships_with_the_docs():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert data["package-dir"]["wheelspec.docs"] == "docs" and "wheelspec.docs" in data["packages"]
    assert {"guides/*.md", "design/*.md", "results/*.md", "examples/*"} <= set(data["package-data"]["wheelspec.docs"])
    assert (ROOT / "docs" / "examples" / "heap_timer.js").is_file()


# ------------------------------------------------------------------ the built wheel -------------
def _source_copy(dest: Path) -> None:
    """The checkout's files as git sees them (tracked and untracked, not ignored): no build/,
    no egg-info, nothing another test run left."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                                capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info",
                                                                  "__pycache__", ".*_cache", "wheelspec-*"))
        return
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _clean_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PYSPARK"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, env, run dir, source copy): the wheel built from a copy of this checkout,
    installed with its base dependencies only (from the package index or pip's cache) into a new
    venv."""
    work = tmp_path_factory.mktemp("wheel")
    src, dist, venv = work / "src", work / "dist", work / "venv"
    src.mkdir()
    _source_copy(src)
    t0 = time.perf_counter()
    # Installed by this pip into a venv without one, and not byte-compiled: what is tested is what
    # the wheel holds and what it pulls in, in half the set-up time.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
                   check=True, capture_output=True, timeout=300)
    wheels = list(dist.glob("wheelspec-*.whl"))
    assert len(wheels) == 1, wheels
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = _clean_env(venv)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-compile", str(wheels[0])], check=True, capture_output=True, timeout=600, env=env)
    print(f"wheel built and installed in {time.perf_counter() - t0:.0f} s")
    run = work / "run"
    run.mkdir()
    return venv, env, run, src


def _wheelspec(installed, *argv: str, timeout: float = 300) -> tuple[int, str, str]:
    venv, env, run, _ = installed
    p = subprocess.run([str(venv / "bin" / "wheelspec"), *argv], cwd=run, env=env, capture_output=True, text=True,
                       timeout=timeout)
    for stream in (p.stdout, p.stderr):
        assert "Traceback" not in stream, f"wheelspec {' '.join(argv)}:\n{p.stderr[-3000:]}"
    return p.returncode, p.stdout, p.stderr


def _one_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.slow
@pytest.mark.external("pip")
@pytest.mark.timeout(900)
def test_the_built_wheel_runs_every_documented_command_with_the_base_install(installed):
    venv, env, run, src = installed
    py = str(venv / "bin" / "python")
    where = subprocess.run([py, "-c", "import wheelspec, sys; print(wheelspec.__file__); "
                            "print(*[m for m in ('matplotlib', 'pyspark', 'twisted') "
                            "if __import__('importlib.util').util.find_spec(m)])"],
                           cwd=run, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert where[0].startswith(str(venv)), f"the venv imports wheelspec from {where[0]}, not from the wheel"
    assert where[1:] == [""] or where[1:] == [], f"the base install holds optional packages: {where[1:]}"
    t0 = time.perf_counter()

    for argv in (["--help"], *([name, "--help"] for name in COMMANDS)):
        assert _wheelspec(installed, *argv)[0] == 0, argv

    # the shipped documentation, and the example adapter the protocol page points to
    rc, out, _ = _wheelspec(installed, "docs")
    assert rc == 0 and "PROTOCOL" in out and "heap_timer.js" in out
    rc, out, _ = _wheelspec(installed, "docs", "PROTOCOL")
    assert rc == 0 and out == (src / "docs" / "guides" / "PROTOCOL.md").read_text()
    rc, out, _ = _wheelspec(installed, "docs", "ENGINE")
    assert rc == 0 and out == (src / "docs" / "design" / "ENGINE.md").read_text()
    rc, out, _ = _wheelspec(installed, "docs", "--path", "heap_timer.js")
    assert rc == 0 and Path(out.strip()).is_file() and out.startswith(str(venv))
    rc, out, _ = _wheelspec(installed, "spark-entry")
    assert rc == 0 and Path(out.strip()).name == "spark_submit.py" and out.startswith(str(venv))

    # judging: check, replay of a shipped scenario, the proofs, the races, linearizability
    assert _wheelspec(installed, "check", "--schedules", "20")[0] == 0
    scenario = subprocess.run([py, "-c", "import wheelspec.conformance as c, pathlib; print(pathlib.Path(c.__file__)"
                               ".parent / 'scenarios' / 'kafka' / 'timer-task-expiration.json')"],
                              env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert _wheelspec(installed, "replay", scenario, "--impl", "optimized")[0] == 0
    # One lemma and one bounded check show Z3 works from the base install; every proof is the
    # test_spec_* tests' and CI's (`wheelspec prove --mutations`).
    assert _wheelspec(installed, "prove", "--only", "placement", "--only", "bmc-1x2x3")[0] == 0
    assert _wheelspec(installed, "races", "--mutant", "no-second-try", "--examples", "200", "--clean", "2",
                      "--quiet")[0] == 0
    assert _wheelspec(installed, "linearize", "--impl", "reference", "--threads", "2", "--ops", "50")[0] == 0
    rc, _, err = _wheelspec(installed, "realtime", "--impl", "asyncio-live", "--runs", "1", "--tasks", "20")
    assert rc in (0, 1), err   # 1 is a wall-clock violation on a loaded machine: documented, not a crash
    assert _wheelspec(installed, "bench", "--quick", "--sizes", "1e3", "--workloads", "insert", "--impl", "heapq",
                      "--impl", "sched", "--no-jit", "--repeat", "1")[0] == 0

    # campaigns and traces: local in the base; Spark and the plots name their extra
    rc, _, err = _wheelspec(installed, "campaign", "--engine", "local", "--schedules", "20", "--out", "camp")
    assert rc == 0, err
    rc, _, err = _wheelspec(installed, "analyze", "--synthetic", "2000", "--out", "an")
    assert rc == 0, err
    assert "Plots left out: they need the 'reports' extra (pip install 'wheelspec[reports]')" in err
    assert "reports" in (run / "an" / "report.html").read_text() and not list((run / "an").glob("*.png"))
    assert json.loads((run / "an" / "analysis.json").read_text())["ok"] is True
    for argv in (["analyze", "an/synthetic-trace.parquet", "--engine", "spark"],
                 ["campaign", "--engine", "spark", "--schedules", "2", "--out", "camp-spark"]):
        rc, _, err = _wheelspec(installed, *argv)
        assert rc == 2 and _one_line(err).endswith("needs the 'spark' extra: pip install 'wheelspec[spark]' "
                                                   "(pyspark.sql is not installed)"), err
    rc, _, err = _wheelspec(installed, "bench", "--quick", "--write", "plot=p.png")
    assert rc == 2 and "--write plot=PATH needs the 'reports' extra" in _one_line(err)

    # the matrix: the Twisted row says which extra adds it; the command still succeeds
    rc, out, err = _wheelspec(installed, "matrix", "--impl", "stdlib-sched", "--impl", "twisted-clock",
                              "--schedules", "5", "--out", "mx")
    assert rc == 0, err
    assert "twisted-clock: unavailable: needs the 'thirdparty' extra" in err
    assert "unavailable (needs the 'thirdparty' extra)" in (run / "mx" / "MATRIX.md").read_text()
    print(f"commands ran in {time.perf_counter() - t0:.0f} s")
