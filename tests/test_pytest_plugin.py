"""The pytest plugin as pytest users expect it (docs/guides/PYTEST.md), and the library API behind it.

Each test builds a small project with pytest's ``pytester`` and runs pytest in it, in-process:
the plugin is active there through its ``pytest11`` entry point, exactly as in a user's project.
Implementations are the fast ``reference`` and the broken fixtures of ``tests/fixtures/broken.py``;
schedules are few, so the whole file runs in seconds.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from wheelspec.conformance import api, check_impl
from wheelspec.conformance.check.corpus import corpus_dir
from wheelspec.conformance.cli import main

# pytester's in-process runs forget the modules first imported inside them; z3 imported there
# and again later would be two modules whose expressions do not mix (Z3Exception in a later
# test). Importing it here keeps one.
import wheelspec.spec.checker_z3  # noqa: F401  isort: skip

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
BROKEN = "tests.fixtures.broken:fires_early"
N_CORPUS = len(list(corpus_dir().rglob("*.json")))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A user's project: one test of its own, and this repository importable (for the broken fixtures)."""
    monkeypatch.syspath_prepend(str(ROOT))
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    return pytester


def _ini(p: pytest.Pytester, **opts: object) -> None:
    body = "".join(f"{k} = {v!r}\n".replace("'", '"') if isinstance(v, str) else f"{k} = {v}\n"
                   for k, v in opts.items())
    p.makefile(".toml", pyproject="[tool.pytest.ini_options]\n" + body)


def _junit(p: pytest.Pytester, *args: str) -> list[tuple[str, str, dict[str, str]]]:
    xml = p.path / "junit.xml"
    p.runpytest(f"--junit-xml={xml}", *args)
    return [(c.get("classname", ""), c.get("name", ""),
             {q.get("name", ""): q.get("value", "") for q in c.iter("property")})
            for c in ET.parse(xml).getroot().iter("testcase")]


# --------------------------------------------------------------------- activation and options ---
def test_inactive_without_an_implementation(project: pytest.Pytester) -> None:
    r = project.runpytest()
    r.assert_outcomes(passed=1)
    r.stdout.no_fnmatch_line("*wheelspec::*")


def test_a_suite_node_id_without_an_implementation_is_a_usage_error(project: pytest.Pytester) -> None:
    r = project.runpytest("wheelspec::campaign::timer")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*wheelspec::campaign::timer: the wheelspec suite needs an implementation*"])


def test_options_set_in_pyproject_only(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=3, wheelspec_seed=7)
    r = project.runpytest("-v")
    total = 1 + N_CORPUS + 2
    r.stdout.fnmatch_lines([f"*collected {total} items"])  # the header counts what runs
    r.assert_outcomes(passed=total)
    r.stdout.no_fnmatch_line("*nknown config option*")
    cases = _junit(project)
    campaign = [props for cls, name, props in cases if cls == "wheelspec.campaign"]
    assert [c["seeds"] for c in campaign] == ["7..9", "7..9"] and campaign[0]["impl"] == "reference"


def test_the_command_line_wins_over_the_ini_file(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=3)
    cases = _junit(project, "--wheelspec-schedules=2", "wheelspec::campaign")
    assert [props["seeds"] for _, _, props in cases] == ["0..1", "0..1"]


@pytest.mark.parametrize("ini, words", [
    ({"wheelspec_schedules": '"many"'}, "pyproject.toml: wheelspec_schedules: must be an integer >= 0"),
    ({"wheelspec_ranges": '"wide"'}, "pyproject.toml: wheelspec_ranges: must be bounded or unbounded, got 'wide'"),
    ({"wheelspec_no_regressions": '"maybe"'}, "pyproject.toml: wheelspec_no_regressions: must be true or false"),
])
def test_a_bad_ini_value_is_one_line_naming_file_and_key(project: pytest.Pytester, ini: dict[str, str],
                                                         words: str) -> None:
    project.makefile(".toml", pyproject="[tool.pytest.ini_options]\nwheelspec_impl = \"reference\"\n"
                     + "".join(f"{k} = {v}\n" for k, v in ini.items()))
    r = project.runpytest()
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert words in r.stderr.str() and "Traceback" not in r.stderr.str()


def test_an_implementation_that_does_not_resolve_is_one_collection_error(project: pytest.Pytester) -> None:
    r = project.runpytest("--wheelspec-impl=no_such_module_x:factory")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*wheelspec: --impl 'no_such_module_x:factory': cannot import module*"])


# --------------------------------------------------------------------- node ids and selection ---
@pytest.mark.parametrize("where", ["ini", "command line"])
def test_selecting_one_test_file_node_runs_no_suite_item(project: pytest.Pytester, where: str) -> None:
    _ini(project, wheelspec_schedules=2, **({"wheelspec_impl": "reference"} if where == "ini" else {}))
    impl = ["--wheelspec-impl=reference"] if where == "command line" else []
    project.runpytest(*impl).assert_outcomes(passed=1 + N_CORPUS + 2)  # the suite is on
    r = project.runpytest(*impl, "test_own.py::test_own")
    r.stdout.fnmatch_lines(["*collected 1 item"])
    r.assert_outcomes(passed=1)


def test_one_suite_item_reruns_by_its_node_id(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=2)
    ids = project.runpytest("--collect-only", "-q").stdout.lines
    one = "wheelspec::corpus::timer/tick-boundaries"
    assert one in ids and "wheelspec::campaign::timer" in ids and "test_own.py::test_own" in ids
    r = project.runpytest("-v", one)
    r.stdout.fnmatch_lines(["*collected 1 item", f"{one} PASSED*"])
    r.assert_outcomes(passed=1)
    r = project.runpytest("test_own.py", "wheelspec::campaign")  # a file and a group of the suite
    r.assert_outcomes(passed=3)


def test_an_unknown_suite_node_id_says_so(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=2)
    r = project.runpytest("wheelspec::corpus::no-such-scenario")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*not found: wheelspec::corpus::no-such-scenario*"])


def test_dash_k_selects_suite_items(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=2)
    r = project.runpytest("-v", "-k", "campaign and timer")
    r.stdout.fnmatch_lines(["wheelspec::campaign::timer PASSED*"])
    r.assert_outcomes(passed=1, deselected=N_CORPUS + 2)


@pytest.mark.slow
def test_junit_names_are_identical_across_seeds(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl="reference", wheelspec_schedules=3)
    a = _junit(project, "--wheelspec-seed=0")
    b = _junit(project, "--wheelspec-seed=50")
    assert [(cls, name) for cls, name, _ in a] == [(cls, name) for cls, name, _ in b]
    suite = [(cls, name) for cls, name, _ in a if cls.startswith("wheelspec")]
    assert len(suite) == N_CORPUS + 2 and all(cls and name for cls, name in suite)
    assert ("wheelspec.campaign", "timer") in suite and ("wheelspec.corpus", "timer/tick-boundaries") in suite
    seeds = {name: (pa["seeds"], pb["seeds"]) for (_, name, pa), (_, _, pb) in zip(a, b) if "seeds" in pa}
    assert seeds == {"timer": ("0..2", "50..52"), "purgatory": ("0..2", "50..52")}


# --------------------------------------------------------------------- failures and regressions -
def test_a_failure_shows_the_counterexample_its_file_and_the_replay_command(project: pytest.Pytester,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _ini(project, wheelspec_impl=BROKEN, wheelspec_schedules=20)
    r = project.runpytest("wheelspec::campaign::timer")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "shrunk counterexample:" in out and "op 0 add(task=" in out and "[no-early-fire]" in out
    # Under CI=1 pytest repeats the whole failure text in its short summary, so the same lines may
    # appear twice: what matters is that they name one file and one command.
    saved = sorted({line.split("saved: ", 1)[1] for line in r.stdout.lines if line.startswith("saved: ")})
    replay = sorted({line.split("replay: ", 1)[1] for line in r.stdout.lines if line.startswith("replay: ")})
    assert len(saved) == 1 and len(replay) == 1
    path = Path(saved[0])
    assert path.parent == project.path / ".wheelspec" / "counterexamples" / api.impl_dirname(BROKEN)
    argv = shlex.split(replay[0])
    assert argv == ["wheelspec", "replay", str(path.relative_to(project.path)), "--impl", BROKEN]
    monkeypatch.chdir(project.path)
    assert main(argv[1:]) == 1  # the command, pasted, reproduces the failure
    assert main([*argv[1:-1], "reference"]) == 0


def test_the_replay_command_is_quoted_for_a_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    impl = "cmd:node my timer.js"
    cmd = api.replay_command(tmp_path / "a dir" / "timer-3.json", impl)
    assert shlex.split(cmd) == ["wheelspec", "replay", "a dir/timer-3.json", "--impl", impl]


MYTIMER_BROKEN = "from tests.fixtures.broken import fires_early as factory\n"
MYTIMER_FIXED = ("from wheelspec.conformance.adapters import reference_adapter\n\n\n"
                 "def factory():\n    return reference_adapter()\n")


@pytest.mark.slow
def test_saved_counterexamples_are_replayed_first_and_stay_as_regression_tests(project: pytest.Pytester) -> None:
    impl = "mytimer:factory"
    project.makepyfile(mytimer=MYTIMER_BROKEN)
    _ini(project, wheelspec_impl=impl, wheelspec_schedules=20)
    project.runpytest("wheelspec::campaign::timer").assert_outcomes(failed=1)
    folder = project.path / ".wheelspec" / "counterexamples" / api.impl_dirname(impl)
    saved = sorted(folder.glob("timer-*.json"))
    assert len(saved) == 1

    # next run: the saved counterexample is an item of its own, and it runs first
    r = project.runpytest("-v")
    first = next(line for line in r.stdout.lines if "wheelspec::" in line and ("PASSED" in line or "FAILED" in line))
    assert first.startswith(f"wheelspec::regressions::{saved[0].stem} FAILED"), first

    # the bug fixed: the regressions (that run's purgatory counterexample too) pass, and stay
    corpus = sorted(folder.glob("*.json"))
    assert saved[0] in corpus
    project.makepyfile(mytimer=MYTIMER_FIXED)
    for cache in project.path.glob("__pycache__/mytimer*"):
        cache.unlink()
    r = project.runpytest("-v")
    r.stdout.fnmatch_lines([f"wheelspec::regressions::{saved[0].stem} PASSED*"])
    r.assert_outcomes(passed=1 + len(corpus) + N_CORPUS + 2)
    assert sorted(folder.glob("*.json")) == corpus


@pytest.mark.slow
def test_no_regressions_neither_replays_nor_saves_there(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_impl=BROKEN, wheelspec_schedules=20)
    project.runpytest("wheelspec::campaign::timer").assert_outcomes(failed=1)
    r = project.runpytest("--collect-only", "-q", "--wheelspec-no-regressions")
    assert not [line for line in r.stdout.lines if "wheelspec::regressions" in line]
    project.runpytest("--wheelspec-no-regressions", "--wheelspec-seed=100",
                      "wheelspec::campaign::timer").assert_outcomes(failed=1)
    assert list((project.path / "wheelspec-out" / api.impl_dirname(BROKEN)).glob("timer-*.json"))
    assert len(list((project.path / ".wheelspec").rglob("*.json"))) == 1  # only the first run's


def test_a_saved_file_with_other_content_is_never_overwritten(tmp_path: Path) -> None:
    def failing_file(out: Path) -> Path:
        report = check_impl(BROKEN, corpus=False, kinds=["timer"], schedules=20, regressions=None, out=out)
        return report.counterexamples[0]

    cx = failing_file(tmp_path / "a")
    theirs = tmp_path / "b" / cx.parent.name / cx.name  # a file of the same name, put there by someone
    theirs.parent.mkdir(parents=True)
    theirs.write_text("{}\n")
    ours = failing_file(tmp_path / "b")
    assert theirs.read_text() == "{}\n"
    assert ours.name == f"{cx.stem}-2.json" and ours.read_text() == cx.read_text()
    assert failing_file(tmp_path / "a") == cx  # the same content again: kept, not duplicated
    assert len(list(cx.parent.iterdir())) == 1


# --------------------------------------------------------------------- fixture and library API --
def test_the_wheelspec_check_fixture(project: pytest.Pytester) -> None:
    _ini(project, wheelspec_schedules=3)
    project.makepyfile(test_fixture=f"""
        import pytest

        def test_reference(wheelspec_check):
            result = wheelspec_check("reference")
            assert result.ok and not result.failures and result.outcomes
            result.assert_ok()

        def test_broken(wheelspec_check):
            result = wheelspec_check("{BROKEN}", schedules=20, corpus=False, kinds=["timer"])
            assert not result.ok and result.counterexamples
            with pytest.raises(AssertionError, match="replay: wheelspec replay"):
                result.assert_ok()

        def test_no_implementation(wheelspec_check):
            wheelspec_check()
    """)
    r = project.runpytest("test_fixture.py")
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.fnmatch_lines(["*wheelspec_check: no implementation*"])


def test_check_impl_replays_its_regression_corpus_first(tmp_path: Path) -> None:
    first = check_impl(BROKEN, corpus=False, kinds=["timer"], schedules=20, regressions=tmp_path)
    assert not first.ok and [o.unit for o in first.outcomes] == ["campaign/timer"]
    cx = first.counterexamples
    assert len(cx) == 1 and cx[0].parent == tmp_path / api.impl_dirname(BROKEN)
    message = first.summary()
    assert f"saved: {cx[0]}" in message and "replay: wheelspec replay" in message and "shrunk counterexample" in message
    second = check_impl(BROKEN, corpus=False, kinds=["timer"], schedules=20, regressions=tmp_path)
    assert second.outcomes[0].unit == f"regressions/{cx[0].stem}" and second.outcomes[0].status == "fail"
    fixed = check_impl("reference", corpus=False, schedules=0, regressions=tmp_path)
    assert fixed.ok and fixed.outcomes == []  # another implementation has its own corpus


# --------------------------------------------------------------------- accepted properties ------
def test_an_unknown_accepted_property_is_a_usage_error(project: pytest.Pytester) -> None:
    r = project.runpytest("--wheelspec-impl=reference", "--wheelspec-accept=size,nope")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "--wheelspec-accept: accept: unknown property 'nope'" in r.stderr.str()
    assert "Traceback" not in r.stderr.str()


@pytest.mark.slow
def test_an_accepted_property_passes_the_campaign_that_fails_only_it(project: pytest.Pytester) -> None:
    # tests/fixtures/two_bugs.py with its size bug only: about a third of the schedules fail size
    args = ["--wheelspec-impl=tests.fixtures.two_bugs:size_only", "--wheelspec-schedules=20", "wheelspec::campaign"]
    project.runpytest(*args).assert_outcomes(failed=1, skipped=1)  # the purgatory kind is not offered
    r = project.runpytest(*args, "--wheelspec-accept=size")
    r.assert_outcomes(passed=1, skipped=1)


def test_the_pytest11_entry_point_loads_the_plugin() -> None:
    import importlib.metadata

    eps = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "wheelspec"]
    assert eps and eps[0].value == "wheelspec.conformance.pytest_plugin"
    assert hasattr(eps[0].load(), "pytest_addoption")
