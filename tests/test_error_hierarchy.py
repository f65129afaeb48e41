"""Every exception class of the package derives from ``wheelspec.Error`` (spec/errors.py), so a
caller's ``except wheelspec.Error`` catches whatever wheelspec raises on purpose.

The check imports every module of the five parts (spec, reference, optimized, conformance,
benchmarks) and looks at each class defined there, at module level or nested in a class.  The one
allowed exception is a signal: a ``BaseException`` that is not an ``Exception`` (``Interrupted``,
a ``KeyboardInterrupt``), which must stay outside ``Exception`` so that no ``except Exception``
swallows Ctrl-C; it is listed by name in :data:`SIGNALS`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterator

import pytest

import wheelspec
from wheelspec.spec.errors import Bug

PARTS = ("spec", "reference", "optimized", "conformance", "benchmarks")

#: BaseExceptions that are deliberately not errors (qualified names)
SIGNALS = {"wheelspec.conformance.interrupt.Interrupted"}


def _modules() -> Iterator[types.ModuleType]:
    for part in PARTS:
        pkg = importlib.import_module(f"wheelspec.{part}")
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}."):
            if info.name.rpartition(".")[2] != "__main__":  # running it is its import
                yield importlib.import_module(info.name)


def _classes(owner: types.ModuleType | type, module: str) -> Iterator[type]:
    """The classes defined in ``module``: ``owner``'s own, and those nested in them."""
    for value in vars(owner).values():
        if inspect.isclass(value) and value.__module__ == module and value is not owner:
            yield value
            yield from _classes(value, module)


def exception_classes() -> dict[str, type[BaseException]]:
    """Qualified name -> class, for every exception class the package defines."""
    out: dict[str, type[BaseException]] = {}
    for mod in _modules():
        for cls in _classes(mod, mod.__name__):
            if issubclass(cls, BaseException):
                out[f"{mod.__name__}.{cls.__qualname__}"] = cls
    return out


def strays(classes: dict[str, type[BaseException]]) -> list[str]:
    """The classes outside ``wheelspec.Error`` that are not listed signals, each with its bases."""
    bad = []
    for name, cls in sorted(classes.items()):
        if issubclass(cls, wheelspec.Error):
            continue
        if name in SIGNALS and not issubclass(cls, Exception):
            continue
        bad.append(f"{name}({', '.join(b.__name__ for b in cls.__bases__)})")
    return bad


@pytest.fixture(scope="module")
def classes() -> dict[str, type[BaseException]]:
    return exception_classes()


def test_every_exception_class_derives_from_wheelspec_error(classes: dict[str, type[BaseException]]) -> None:
    assert len(classes) >= 20, sorted(classes)  # the walk reached the parts (a broken walk finds nothing)
    assert strays(classes) == [], "derive these from wheelspec.Error (spec/errors.py) too"


def test_a_planted_stray_exception_is_found(classes: dict[str, type[BaseException]]) -> None:
    planted = type("Planted", (RuntimeError,), {"__module__": "wheelspec.conformance.check.runner"})
    found = strays({**classes, "wheelspec.conformance.check.runner.Planted": planted})
    assert found == ["wheelspec.conformance.check.runner.Planted(RuntimeError)"]
    # a signal that became an Exception would be swallowed by `except Exception`: not allowed either
    as_error = type("Interrupted", (Exception, KeyboardInterrupt), {})
    assert strays({"wheelspec.conformance.interrupt.Interrupted": as_error}) != []


def test_the_built_in_kinds_are_kept_where_callers_catch_them(classes: dict[str, type[BaseException]]) -> None:
    for name, kind in [("wheelspec.spec.errors.RangeError", ValueError),
                       ("wheelspec.spec.errors.InvariantError", AssertionError),
                       ("wheelspec.conformance.concurrency.linearizability.BudgetExhausted", TimeoutError),
                       ("wheelspec.conformance.check.runner.RunnerBug", RuntimeError),
                       ("wheelspec.benchmarks.drivers.VerificationError", AssertionError)]:
        assert issubclass(classes[name], kind), name
    # a bug in wheelspec is shown with its traceback by the command (conformance/cli/__init__.py)
    assert issubclass(classes["wheelspec.conformance.check.runner.RunnerBug"], Bug)
    assert issubclass(classes["wheelspec.spec.errors.InvariantError"], Bug)


@pytest.mark.parametrize("error,raised", [("RunnerBug", True), ("InvariantError", True), ("UserError", False),
                                          ("BudgetExhausted", False)])
def test_the_command_shows_a_bugs_traceback_and_any_other_error_as_one_line(
        error: str, raised: bool, classes: dict[str, type[BaseException]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from wheelspec.conformance import cli
    from wheelspec.conformance.cli import linearize

    cls = next(c for name, c in classes.items() if name.endswith(f".{error}"))

    def run(args: object) -> int:
        raise cls("planted")

    monkeypatch.setattr(linearize, "run_linearize", run)
    if raised:  # a bug in wheelspec: its traceback, then exit 3, a code no verdict uses
        assert cli.main(["linearize", "history.jsonl"]) == 3
        err = capsys.readouterr().err
        assert err.startswith("Traceback") and f"{error}: planted" in err
        assert err.endswith("wheelspec linearize: internal error: a bug in wheelspec, not a verdict about the "
                            "implementation (exit 3); please report it with the traceback above\n")
    else:
        assert cli.main(["linearize", "history.jsonl"]) == 2
        assert capsys.readouterr().err == "wheelspec linearize: error: planted\n"
