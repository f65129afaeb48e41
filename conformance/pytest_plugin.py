"""pytest plugin: run the conformance suite inside a third party's own test run (``docs/guides/PYTEST.md``).

Installed through the ``pytest11`` entry point, inactive unless an implementation is named, on the
command line or in the ini file (``[tool.pytest.ini_options]`` of pyproject.toml, pytest.ini, ...)::

    pytest --wheelspec-impl=mypkg.timer:factory              # an in-process Adapter factory
    pytest --wheelspec-impl="cmd:java -jar mytimer.jar"      # any language, the adapter protocol

    [tool.pytest.ini_options]
    wheelspec_impl = "mypkg.timer:factory"
    wheelspec_schedules = 200

Every option is both ``--wheelspec-NAME`` and ini key ``wheelspec_NAME`` (:data:`OPTIONS`); the
command line wins.  The suite is one collector beside the test files, ``wheelspec``, holding one
item per unit of :mod:`wheelspec.conformance.api`, in the order they run::

    wheelspec::regressions::timer-41        a saved counterexample of this implementation, replayed
    wheelspec::corpus::timer/tick-boundary  one scenario of the corpus
    wheelspec::campaign::timer              one campaign kind (its seed range is a JUnit property)

Node ids do not depend on the seed, so JUnit names and CI test history stay stable.  They select
as any node id does: ``pytest wheelspec::campaign::timer``, ``pytest tests wheelspec``, ``-k``,
``--deselect``, ``-m wheelspec``.  The suite lives at the rootdir: it is collected when pytest
collects the rootdir (no arguments, ``testpaths``, ``pytest .``), not for ``pytest tests/x.py``.

A failing campaign kind saves its shrunk counterexample in the regression corpus
(``.wheelspec/counterexamples/<impl>/`` under the rootdir), and its failure names the operations,
the file and the ``wheelspec replay`` command.  The ``wheelspec_check`` fixture runs a check inside
one's own test with the same settings.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from wheelspec.spec.errors import WheelspecError

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr  # not exported by pytest; the base method returns it

    from wheelspec.conformance.api import Checker, CheckResult, Outcome

#: the name of the suite's collector: the first part of every item's node id
SUITE = "wheelspec"
#: the suite's groups, in the order they run: saved counterexamples first (Hypothesis's database)
GROUPS = ("regressions", "corpus", "campaign")


@dataclasses.dataclass(frozen=True)
class Option:
    """One setting: ``--wheelspec-NAME`` on the command line and ``wheelspec_NAME`` in the ini file."""

    name: str
    kind: str  # str | path | int | float | bool | choice
    default: Any
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()


OPTIONS = (
    Option("impl", "str", None, "implementation to check: package.module:factory, cmd:COMMAND, or a built-in "
           "(reference, optimized, ...); the suite is inactive without it", "IMPL"),
    Option("scenarios", "path", None, "scenario directory (default: the shipped corpus)", "DIR"),
    Option("schedules", "int", 100, "random schedules per campaign kind (default 100; 0 = no campaign)", "N"),
    Option("seed", "int", 0, "first campaign seed: seeds S .. S+N-1 (default 0)", "S"),
    Option("timeout", "float", 10.0, "per-request timeout of a subprocess adapter, seconds (default 10)", "SECONDS"),
    Option("ranges", "choice", None, "unbounded: the implementation accepts any value by design; out-of-range "
           "requests are left out and property ranges is not judged (default: its capabilities)", None,
           ("bounded", "unbounded")),
    Option("accept", "str", None, "properties whose failures are known, documented deviations, comma "
           "separated (as wheelspec check --accept): a unit failing only those passes (names: "
           "spec/properties.py)", "PROP[,PROP...]"),
    Option("regressions", "path", None, "the regression corpus: failing seeds are saved in DIR/<impl>/ and every "
           "file there is replayed first (default: .wheelspec/counterexamples under the rootdir)", "DIR"),
    Option("no-regressions", "bool", False, "neither replay nor save the regression corpus; counterexamples go "
           "to --wheelspec-out"),
    Option("out", "path", None, "where counterexamples are saved when the regression corpus is off "
           "(default: wheelspec-out under the rootdir)", "DIR"),
)


def _dest(o: Option) -> str:
    return "wheelspec_" + o.name.replace("-", "_")


@dataclasses.dataclass(frozen=True)
class Settings:
    """The plugin's settings, each from the command line, else the ini file, else its default."""

    impl: str | None
    scenarios: Path | None
    schedules: int
    seed: int
    timeout: float
    ranges: str | None
    #: properties whose failures are accepted (``--wheelspec-accept``)
    accept: tuple[str, ...]
    #: the regression corpus folder, None when it is off
    regressions: Path | None
    out: Path

    def counterexamples(self) -> Path:
        """Where this implementation's failing seeds are saved."""
        from wheelspec.conformance.api import impl_dirname

        assert self.impl is not None
        return (self.regressions or self.out) / impl_dirname(self.impl)


_SETTINGS = pytest.StashKey[Settings]()
#: node ids selecting inside the suite (``[]``: the whole suite); absent when it is not collected
_SELECTION = pytest.StashKey[list[str]]()
_CHECKER = pytest.StashKey["Checker"]()


def _ini_type(kind: str) -> str:
    # Every ini value is read as a string and parsed by :func:`_parse`: pytest's own typed ini
    # values (8.4 and later) refuse a bad value with their message, before this plugin can name
    # the file and the key, and older versions have no types at all.
    return "string"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("wheelspec", "wheelspec conformance suite (docs/guides/PYTEST.md)")
    for o in OPTIONS:
        flag = f"--wheelspec-{o.name}"
        if o.kind == "bool":
            g.addoption(flag, dest=_dest(o), action="store_true", default=None, help=o.help)
        else:
            g.addoption(flag, dest=_dest(o), default=None, metavar=o.metavar, help=o.help,
                        choices=o.choices or None)
        parser.addini(_dest(o), f"{o.help} (as {flag})", type=_ini_type(o.kind),  # type: ignore[arg-type]
                      default=None)


#: what a value of each kind must be, as an error message says it
_WHAT = {"int": "an integer >= 0", "float": "a number of seconds > 0", "bool": "true or false",
         "str": "a non-empty string", "path": "a non-empty path", "choice": "one of the listed values"}


def _parse(o: Option, value: Any, where: str) -> Any:
    """``value`` (a command-line string, an ini string or a typed TOML value) as option ``o``."""
    bad = pytest.UsageError(f"{where}: must be {' or '.join(o.choices) or _WHAT[o.kind]}, got {value!r}")
    if o.kind in ("int", "float"):
        try:
            v = (int if o.kind == "int" else float)(value)
        except (TypeError, ValueError):
            raise bad from None
        if isinstance(value, bool) or (v < 0 if o.kind == "int" else not v > 0):
            raise bad
        return v
    if o.kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
            raise bad
        return text in ("1", "true", "yes", "on")
    if not isinstance(value, str) or not value.strip() or (o.choices and value.strip() not in o.choices):
        raise bad
    return value.strip()


def _setting(config: pytest.Config, o: Option) -> Any:
    """Option ``o``'s value: the command line's, else the ini file's, else the default (paths
    relative to the invocation directory, the ini file's directory, or the rootdir)."""
    cli = config.getoption(_dest(o))
    if cli is not None:
        v = _parse(o, cli, f"--wheelspec-{o.name}")
        return config.invocation_params.dir / v if o.kind == "path" else v
    where = f"{config.inipath or 'ini'}: {_dest(o)}"
    try:
        ini = config.getini(_dest(o))
    except (TypeError, ValueError) as e:  # pytest's own type check of a typed ini value
        raise pytest.UsageError(f"{where}: must be {_WHAT[o.kind]} ({e})") from None
    if ini is None or ini == "":
        return o.default
    v = _parse(o, ini, where)
    if o.kind == "path":
        return (config.inipath.parent if config.inipath else config.rootpath) / v
    return v


def settings(config: pytest.Config) -> Settings:
    """The plugin's :class:`Settings` for this pytest run (read once, at configure time)."""
    if _SETTINGS not in config.stash:
        v = {o.name: _setting(config, o) for o in OPTIONS}
        off = v.pop("no-regressions")
        config.stash[_SETTINGS] = Settings(
            impl=v["impl"], scenarios=v["scenarios"], schedules=v["schedules"], seed=v["seed"],
            timeout=v["timeout"], ranges=v["ranges"], accept=_accept(v["accept"], config),
            regressions=None if off else (v["regressions"] or config.rootpath / ".wheelspec" / "counterexamples"),
            out=v["out"] or config.rootpath / "wheelspec-out")
    return config.stash[_SETTINGS]


def _accept(value: str | None, config: pytest.Config) -> tuple[str, ...]:
    """The ``accept`` setting (comma separated) as property names, each checked: an unknown one is
    a usage error naming it."""
    from wheelspec.conformance.api import accepted_properties
    from wheelspec.spec.errors import UserError

    try:
        return accepted_properties(p.strip() for p in (value or "").split(",") if p.strip())
    except UserError as e:
        raise pytest.UsageError(f"wheelspec_accept / --wheelspec-accept: {e}") from None


def _is_selector(arg: str, config: pytest.Config) -> bool:
    """An argument that names the suite or a node in it (``wheelspec``, ``wheelspec::...``) rather
    than a file: a path of that name, if one exists, stays a path."""
    head = arg.split("::", 1)[0]
    return head == SUITE and not (config.invocation_params.dir / head).exists()


def _covers_rootdir(arg: str, config: pytest.Config) -> bool:
    if "::" in arg:
        return False
    root = config.rootpath.resolve()
    p = (config.invocation_params.dir / arg).resolve()
    return p == root or p in root.parents


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Read the settings, and take the suite's node ids out of the arguments before pytest looks
    for them as files; decide whether the suite is collected at all."""
    s = settings(config)
    mine = [a for a in config.args if _is_selector(a, config)]
    if mine:
        config.args = [a for a in config.args if a not in mine]
        if s.impl is None:
            raise pytest.UsageError(f"{mine[0]}: the wheelspec suite needs an implementation: "
                                    f"--wheelspec-impl IMPL, or wheelspec_impl in the ini file")
    if s.impl is None:
        return
    config.addinivalue_line("markers", "wheelspec: an item of the wheelspec conformance suite (docs/guides/PYTEST.md)")
    if mine:
        config.stash[_SELECTION] = [] if SUITE in mine else mine
    elif (config.args_source == pytest.Config.ArgsSource.TESTPATHS
          or any(_covers_rootdir(a, config) for a in config.args)):
        # the project's default run (its testpaths), or a collection of the rootdir (no arguments
        # at the rootdir, `pytest .`): the suite lives at the rootdir, so it is part of it
        config.stash[_SELECTION] = []


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, pytest.CollectReport,
                                                                          pytest.CollectReport]:
    """The session's collection, plus the suite's collector after the test files (so that the
    header's count is what runs)."""
    rep = yield
    if isinstance(collector, pytest.Session) and rep.passed and _SELECTION in collector.config.stash:
        rep.result.append(Suite.from_parent(collector, name=SUITE, nodeid=SUITE))
    return rep


def _checker(config: pytest.Config) -> Checker:
    """One adapter for the whole run (a subprocess is started once), closed when pytest ends."""
    if _CHECKER not in config.stash:
        from wheelspec.conformance.api import Checker

        s = settings(config)
        assert s.impl is not None
        checker = Checker(s.impl, counterexamples=s.counterexamples(), timeout=s.timeout, ranges=s.ranges,
                          accept=s.accept)
        config.stash[_CHECKER] = checker
        config.add_cleanup(checker.close)
    return config.stash[_CHECKER]


def _selected(nodeid: str, selection: list[str]) -> bool:
    return not selection or any(nodeid == s or nodeid.startswith(s + "::") for s in selection)


class Suite(pytest.Collector):
    """The conformance suite of one implementation: its groups, each of units."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        from wheelspec.conformance.api import regression_files
        from wheelspec.conformance.check.corpus import load_corpus
        from wheelspec.conformance.check.generate import KINDS
        from wheelspec.spec.errors import UserError

        s, selection = settings(self.config), self.config.stash[_SELECTION]
        checker = _checker(self.config)
        units: dict[str, list[tuple[str, Callable[[], Outcome], dict[str, str]]]] = {g: [] for g in GROUPS}
        base = {"impl": checker.impl}
        if s.regressions is not None:
            folder = s.counterexamples()
            for p in regression_files(s.regressions, checker.impl):
                name = p.relative_to(folder).with_suffix("").as_posix()
                units["regressions"].append((name, functools.partial(checker.regression, p, f"regressions/{name}"),
                                             {**base, "file": str(p)}))
        try:
            checker.resolve()  # an implementation that does not resolve is one error, not one per item
            corpus = load_corpus(s.scenarios)
        except UserError as e:
            raise self.CollectError(f"wheelspec: {e}") from None
        for sc in corpus:
            units["corpus"].append((sc.name, functools.partial(checker.scenario, sc), {**base, "file": str(sc.path)}))
        if s.schedules > 0:
            seeds = f"{s.seed}..{s.seed + s.schedules - 1}"
            for kind in KINDS:
                units["campaign"].append((kind, functools.partial(checker.campaign, kind, s.seed, s.schedules),
                                          {**base, "seeds": seeds, "schedules": str(s.schedules)}))
        groups: list[pytest.Item | pytest.Collector] = []
        for g in GROUPS:
            chosen = [u for u in units[g] if _selected(f"{SUITE}::{g}::{u[0]}", selection)]
            if chosen:
                groups.append(Group.from_parent(self, name=g, units=chosen))
        # A group selected whole may be empty (no saved counterexamples yet); a unit must exist.
        ids = {f"{SUITE}::{g}" for g in GROUPS} | {f"{SUITE}::{g}::{u[0]}" for g in GROUPS for u in units[g]}
        missing = [x for x in selection if x not in ids]
        if missing:
            raise self.CollectError(f"not found: {missing[0]} (the suite's node ids: wheelspec::regressions::FILE, "
                                    f"wheelspec::corpus::SCENARIO, wheelspec::campaign::KIND; "
                                    f"list them with --collect-only -q)")
        return groups


class Group(pytest.Collector):
    """One group of the suite: ``regressions``, ``corpus`` or ``campaign``."""

    def __init__(self, *, units: list[tuple[str, Callable[[], Outcome], dict[str, str]]], **kw: Any) -> None:
        super().__init__(**kw)
        self.units = units

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return [UnitItem.from_parent(self, name=name, run=run, properties=props) for name, run, props in self.units]


class WheelspecFailure(WheelspecError):
    """A unit's verdict is "fail"; the message is the whole report (findings, counterexample, replay)."""


class UnitItem(pytest.Item):
    """One unit of the suite, run by :class:`wheelspec.conformance.api.Checker`."""

    def __init__(self, *, run: Callable[[], Outcome], properties: dict[str, str], **kw: Any) -> None:
        super().__init__(**kw)
        self.run = run
        self.add_marker(SUITE)
        # Facts that are no part of the name (the seed range above all) go to JUnit as properties.
        self.user_properties.extend(properties.items())

    def runtest(self) -> None:
        outcome = self.run()
        known = {k for k, _ in self.user_properties}
        self.user_properties.extend((k, v) for k, v in outcome.properties.items() if k not in known)
        if outcome.status == "skip":
            pytest.skip(outcome.text)
        if outcome.status == "fail":
            raise WheelspecFailure(outcome.text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        from wheelspec.spec.errors import UserError

        if excinfo.errisinstance(WheelspecFailure):
            return str(excinfo.value)
        if excinfo.errisinstance(UserError):  # the implementation did not load or broke the protocol
            from wheelspec.spec.show import printable

            return printable(f"wheelspec: {excinfo.value}")
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.nodeid


@pytest.fixture
def wheelspec_check(pytestconfig: pytest.Config) -> Callable[..., CheckResult]:
    """Check an implementation inside a test, with the run's wheelspec settings as defaults::

        def test_my_timer(wheelspec_check):
            wheelspec_check("mypkg.timer:factory", schedules=50).assert_ok()

    Returns :func:`wheelspec.conformance.check_impl`'s :class:`~wheelspec.conformance.api.CheckResult`
    (``.ok``, ``.failures``, ``.counterexamples``, ``.assert_ok()``); keyword arguments override the
    settings (``schedules``, ``seed``, ``kinds``, ``scenarios``, ``corpus``, ``regressions``, ...)."""
    from wheelspec.conformance.api import check_impl

    s = settings(pytestconfig)

    def check(impl: str | None = None, **kw: Any) -> CheckResult:
        impl = impl or s.impl
        if not impl:
            pytest.fail("wheelspec_check: no implementation: wheelspec_check('mypkg.timer:factory'), "
                        "--wheelspec-impl IMPL or wheelspec_impl in the ini file", pytrace=False)
        args: dict[str, Any] = {"schedules": s.schedules, "seed": s.seed, "scenarios": s.scenarios,
                                "regressions": s.regressions, "out": s.out, "timeout": s.timeout, "ranges": s.ranges,
                                "accept": s.accept}
        args.update(kw)
        return check_impl(impl, **args)

    return check
