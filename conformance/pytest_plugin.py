"""pytest plugin: run the conformance suite inside a third party's own test run.

Installed through the ``pytest11`` entry point, inactive unless asked for::

    pytest --wheelspec-impl=mypkg.timer:factory          # an in-process Adapter factory
    pytest --wheelspec-impl="cmd:java -jar mytimer.jar"  # any language, protocol v1
    pytest --wheelspec-impl=reference --wheelspec-schedules=200 --wheelspec-seed=7

adds one test per scenario of the corpus (``--wheelspec-scenarios DIR`` for another corpus) and
one test per campaign kind (``--wheelspec-schedules`` seeds each; 0 disables the campaign).  A
failing test's report is the runner's findings; a failing campaign also saves the shrunk
counterexample under ``--wheelspec-out`` and names it with its ``wheelspec replay`` command.
Scenarios needing what the implementation lacks are reported as skipped with that reason.
``--wheelspec-ranges=unbounded`` (or ``ranges: "unbounded"`` in the adapter's capabilities) leaves
out-of-range requests out, as ``wheelspec check --ranges unbounded`` does: property ``ranges``
is then not judged.
Adapter breakage (hang, crash, garbage) fails the test that met it with the runner's one-line error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr  # not exported by pytest; the base method returns it


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("wheelspec", "wheelspec conformance suite")
    g.addoption("--wheelspec-impl", metavar="IMPL",
                help="implementation to check: module:factory, cmd:COMMAND, or a built-in (reference, optimized, ...)")
    g.addoption("--wheelspec-scenarios", metavar="DIR", help="scenario directory (default: the shipped corpus)")
    g.addoption("--wheelspec-schedules", type=int, default=100, metavar="N",
                help="random schedules per campaign kind (default 100; 0 = no campaign)")
    g.addoption("--wheelspec-seed", type=int, default=0, metavar="S", help="first campaign seed (default 0)")
    g.addoption("--wheelspec-timeout", type=float, default=10.0, metavar="SECONDS",
                help="per-request timeout for subprocess adapters")
    g.addoption("--wheelspec-out", default="wheelspec-out", metavar="DIR", help="where counterexamples are saved")
    g.addoption("--wheelspec-ranges", choices=("bounded", "unbounded"), default=None,
                help="unbounded: the implementation accepts any value by design; out-of-range requests are left "
                     "out and property ranges is not judged (default: what its capabilities declare)")


class _Shared:
    """One adapter for the whole session (a subprocess is started once)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._adapter: Any = None
        self._caps: Any = None

    def get(self) -> tuple[Any, Any]:
        if self._adapter is None:
            from wheelspec.conformance.adapters import resolve

            spec = self.config.getoption("wheelspec_impl")
            self._adapter = resolve(spec, timeout=self.config.getoption("wheelspec_timeout"))()
            self._caps = self._adapter.hello().capabilities
            ranges = self.config.getoption("wheelspec_ranges")
            if ranges:  # as `wheelspec check --ranges`: the user's word overrides the declaration
                import dataclasses

                self._caps = dataclasses.replace(self._caps, ranges=ranges)
        return self._adapter, self._caps

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
            self._adapter = None


class WheelspecFailure(Exception):
    pass


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Any, shared: _Shared, **kw: Any) -> None:
        super().__init__(**kw)
        self.scenario = scenario
        self.shared = shared

    def runtest(self) -> None:
        from wheelspec.conformance.check.corpus import run_scenario
        from wheelspec.spec import show

        adapter, caps = self.shared.get()
        res = run_scenario(adapter, caps, self.scenario)
        if res.status == "n/a":
            pytest.skip(f"not applicable: {res.note}")
        if res.failures:
            raise WheelspecFailure("\n".join(show.finding(f) for f in res.failures)
                                   + f"\nreplay: wheelspec replay {self.scenario.path} "
                                     f"--impl {self.config.getoption('wheelspec_impl')!r}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if excinfo.errisinstance(WheelspecFailure):
            return str(excinfo.value)
        from wheelspec.spec.errors import UserError

        if excinfo.errisinstance(UserError):
            return f"adapter error: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.scenario.path or "wheelspec", 0, f"wheelspec scenario {self.scenario.name}"


class CampaignItem(ScenarioItem):
    def __init__(self, *, kind: str, **kw: Any) -> None:
        super().__init__(scenario=None, **kw)
        self.kind = kind

    def runtest(self) -> None:
        from wheelspec.conformance.check.campaign import run_seed_range
        from wheelspec.spec import show

        adapter, caps = self.shared.get()
        if self.kind == "purgatory" and not caps.purgatory:
            pytest.skip("not applicable: the implementation offers no purgatory")
        if self.kind == "timer" and not caps.timer:
            pytest.skip("not applicable: the implementation offers no timer")
        opt = self.config.getoption
        first, n = opt("wheelspec_seed"), opt("wheelspec_schedules")
        for seed in range(first, first + n):
            out = run_seed_range(adapter, caps, self.kind, [seed], impl_name="pytest")[0]
            if not out.ok:
                f = out.failures[0]
                msg = f"seed {seed} ({out.ops} ops) failed: {show.finding(f)}"
                if out.counterexample is not None:
                    p = Path(opt("wheelspec_out")) / "pytest" / f"{self.kind}-{seed}.json"
                    out.counterexample.save(p)
                    msg += (f"\nshrunk to {len(out.counterexample.ops)} operations: {p}"
                            f"\nreplay: wheelspec replay {p} --impl {opt('wheelspec_impl')!r}")
                raise WheelspecFailure(msg)

    def reportinfo(self) -> tuple[Any, int, str]:
        return "wheelspec", 0, f"wheelspec campaign {self.kind}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("wheelspec_impl"):
        return
    from wheelspec.conformance.check.campaign import KINDS
    from wheelspec.conformance.check.corpus import load_corpus

    shared = _Shared(config)
    config._wheelspec_shared = shared  # type: ignore[attr-defined]  # our mark on pytest's Config, for unconfigure
    for sc in load_corpus(config.getoption("wheelspec_scenarios")):
        items.append(ScenarioItem.from_parent(session, name=f"wheelspec[{sc.name}]", scenario=sc, shared=shared))
    if config.getoption("wheelspec_schedules") > 0:
        for kind in KINDS:
            items.append(CampaignItem.from_parent(session, name=f"wheelspec[campaign-{kind}]", kind=kind,
                                                  shared=shared))


def pytest_unconfigure(config: pytest.Config) -> None:
    shared = getattr(config, "_wheelspec_shared", None)
    if shared is not None:
        shared.close()
