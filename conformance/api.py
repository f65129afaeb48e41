"""Check an implementation from Python: the library API for one's own tests, and the unit of work
of the pytest plugin's items.

    from wheelspec.conformance import check_impl

    def test_my_timer():
        check_impl("mypkg.timer:factory", schedules=200).assert_ok()

:func:`check_impl` runs, against one implementation, what ``wheelspec check`` runs, in this
order: the saved counterexamples of its **regression corpus** (every ``*.json`` under
``<regressions>/<impl>/``), the scenario corpus, and one seeded campaign per kind.  A campaign kind
stops at its first failing seed (as Hypothesis stops at its first failing example); that seed is
shrunk and the counterexample saved in the regression corpus, so the next check replays it first:
it fails until the bug is fixed, then passes and stays as a regression test.  This is Hypothesis's
example database, kept as readable scenario files (``docs/guides/PYTEST.md`` says how to prune them).

Each unit (one saved counterexample, one corpus scenario, one campaign kind) gives an
:class:`Outcome`; a :class:`CheckResult` holds them all.  :class:`Checker` runs single units on one
adapter: the pytest plugin makes one item per unit with it.  Heavy imports (the runner, the engines)
happen inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wheelspec.conformance.adapters.protocol import Capabilities
    from wheelspec.conformance.check.campaign import SeedOutcome
    from wheelspec.conformance.check.corpus import Scenario
    from wheelspec.spec.errors import UserError
    from wheelspec.spec.findings import Finding

#: where saved counterexamples live, one folder per implementation (relative to the current
#: directory for :func:`check_impl`; the pytest plugin takes it relative to pytest's rootdir)
DEFAULT_REGRESSIONS = os.path.join(".wheelspec", "counterexamples")
#: where counterexamples are saved when the regression corpus is off (as ``wheelspec check --out``)
DEFAULT_OUT = "wheelspec-out"
#: the most operations of a counterexample a failure message lists (the saved file has them all)
SHOWN_OPS = 40


def impl_dirname(impl: str) -> str:
    """The folder name of an implementation's counterexamples (:func:`wheelspec.spec.show.impl_dirname`:
    a short slug of the ``--impl`` text and a hash of it, as every command names it)."""
    from wheelspec.spec.show import impl_dirname as dirname

    return dirname(impl)


def replay_command(path: str | Path, impl: str) -> str:
    """The ``wheelspec replay`` command line that reruns ``path`` against ``impl``, quoted for a
    POSIX shell so that it can be pasted as it is.  ``path`` is shown relative to the current
    directory when it lies under it."""
    p = Path(path)
    try:
        shown = str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(p)
    return shlex.join(["wheelspec", "replay", shown, "--impl", impl])


def _natural(path: Path) -> list[Any]:
    # timer-9 before timer-10: the seeds in a file name sort as numbers
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.as_posix())]


def regression_files(directory: str | Path, impl: str) -> list[Path]:
    """The saved counterexamples of ``impl`` under ``directory`` (``<directory>/<impl>/**/*.json``),
    seeds in numeric order; none if the folder does not exist."""
    root = Path(directory) / impl_dirname(impl)
    if not root.is_dir():
        return []
    return sorted(root.rglob("*.json"), key=lambda p: _natural(p.relative_to(root)))


def save_counterexample(cx: Scenario, directory: str | Path, kind: str, seed: int) -> Path:
    """Save ``cx`` as ``<directory>/<kind>-<seed>.json`` and return the path.  A file already there
    with the same content is kept as it is; one with other content (a different shrink after a
    partial fix, or a file someone put there) is never overwritten: the new one gets ``-2``,
    ``-3``, ... appended."""
    text = cx.dumps()
    base = Path(directory) / f"{kind}-{seed}"
    p, n = base.with_suffix(".json"), 1
    while p.exists():
        try:
            if p.read_text() == text:
                return p
        except OSError:
            pass
        n += 1
        p = base.with_name(f"{base.name}-{n}.json")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@dataclasses.dataclass
class Outcome:
    """The verdict on one unit of a check: a saved counterexample (``regressions/<file>``), a corpus
    scenario (``corpus/<name>``) or a campaign kind (``campaign/<kind>``)."""

    unit: str
    status: str  # pass | fail | skip
    #: what failed: findings, the counterexample, its file and the replay command (or why skipped)
    text: str = ""
    findings: list[Finding] = dataclasses.field(default_factory=list)
    #: counterexample files this unit saved (a campaign) or replayed (a regression)
    counterexamples: list[Path] = dataclasses.field(default_factory=list)
    #: facts about the run that are no part of its name (seed range, scenario file): JUnit properties
    properties: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status != "fail"


@dataclasses.dataclass
class CheckResult:
    """What :func:`check_impl` found: one :class:`Outcome` per unit, in the order they ran."""

    impl: str
    outcomes: list[Outcome]

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "fail"]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def counterexamples(self) -> list[Path]:
        """The counterexample files behind the failures (saved by a campaign, or replayed and still
        failing); each reruns with ``wheelspec replay FILE --impl IMPL``."""
        return [p for o in self.failures for p in o.counterexamples]

    def summary(self) -> str:
        counts = {s: sum(o.status == s for o in self.outcomes) for s in ("pass", "fail", "skip")}
        head = (f"wheelspec: {self.impl}: {counts['fail']} failed, {counts['pass']} passed, "
                f"{counts['skip']} not applicable")
        return "\n\n".join([head] + [f"{o.unit}:\n{_indent(o.text)}" for o in self.failures])

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` with every failure (findings, counterexample, replay command)."""
        if not self.ok:
            raise AssertionError(self.summary())


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _finding(f: Finding) -> str:
    from wheelspec.spec import show

    # an adapter's own words (an error, a stderr tail) may hold control characters: shown escaped
    return show.printable(show.finding_at_step(f) if f.step is not None else show.finding(f))


class Checker:
    """One implementation behind one adapter, started on first use (a subprocess once), with the
    unit checks :func:`check_impl` and the pytest plugin run.

    ``counterexamples`` is the folder a failing campaign seed's counterexample is saved in (the
    implementation's folder of the regression corpus, or of ``--out``); ``ranges`` overrides the
    range contract the adapter declares, as ``wheelspec check --ranges`` does; ``accept`` names
    properties whose failures are known, documented deviations (``--accept``): a scenario or
    campaign seed failing only those passes, and the outcome says what it accepted."""

    def __init__(self, impl: str, *, counterexamples: str | Path, timeout: float = 10.0,
                 start_timeout: float = 30.0, ranges: str | None = None, accept: Iterable[str] = ()) -> None:
        self.impl = impl
        self.accept = accepted_properties(accept)
        self.counterexamples = Path(counterexamples)
        self.timeout, self.start_timeout, self.ranges = timeout, start_timeout, ranges
        self._factory: Callable[[], Any] | None = None
        self._adapter: Any = None
        self._caps: Capabilities | None = None
        #: why the adapter could not be opened: every later unit fails with it at once, instead
        #: of waiting again for a subprocess that does not start
        self._broken: UserError | None = None

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def resolve(self) -> Callable[[], Any]:
        """The implementation's adapter factory, without starting it (a module is imported, a
        command line split); an ``impl`` that does not resolve raises :class:`UserError`."""
        if self._factory is None:
            from wheelspec.conformance.adapters import resolve

            self._factory = resolve(self.impl, timeout=self.timeout, start_timeout=self.start_timeout)
        return self._factory

    def open(self) -> tuple[Any, Capabilities]:
        """The adapter and its capabilities; an implementation that does not load or answer raises
        :class:`~wheelspec.spec.errors.UserError` (one line), then and on every later call."""
        from wheelspec.conformance.check.session import judged_capabilities, refuse_real_time
        from wheelspec.spec.errors import UserError

        if self._broken is not None:
            raise UserError(str(self._broken))
        if self._adapter is None or self._caps is None:
            try:
                adapter = self.resolve()()
                try:
                    hello = adapter.hello()
                    caps = judged_capabilities(hello, self.ranges)
                    refuse_real_time(hello.name, caps, "the conformance suite")
                except BaseException:
                    adapter.close()
                    raise
            except UserError as e:
                self._broken = e
                raise
            self._adapter, self._caps = adapter, caps
        return self._adapter, self._caps

    def close(self) -> None:
        if self._adapter is not None:
            adapter, self._adapter, self._caps = self._adapter, None, None
            adapter.close()

    # ------------------------------------------------------------------ units ------------------
    def declared_ranges(self, unit: str = "declared-ranges") -> Outcome | None:
        """The one ``ranges`` finding of an implementation declaring a range narrower than
        wheelspec's (``capabilities.ranges`` as an object); None if it declares none."""
        from wheelspec.conformance.check.judge import declared_range_finding

        finding = declared_range_finding(self.open()[1])
        if finding is None:
            return None
        return Outcome(unit, "fail", _finding(finding), [finding], properties={"impl": self.impl})

    def scenario(self, sc: Scenario, unit: str | None = None, *, saved: bool = False) -> Outcome:
        """Run one scenario (a corpus file, or a saved counterexample if ``saved``) and judge it."""
        from wheelspec.conformance.check.corpus import run_scenario

        adapter, caps = self.open()
        unit = unit or f"corpus/{sc.name}"
        props = {"impl": self.impl}
        if sc.path:
            props["file"] = str(sc.path)
        res = run_scenario(adapter, caps, sc)
        if res.status == "n/a":
            return Outcome(unit, "skip", f"not applicable: {res.note}", properties=props)
        if not res.failures:
            return Outcome(unit, "pass", properties=props)
        if all(f.prop in self.accept for f in res.failures):  # a known, documented deviation
            return Outcome(unit, "pass", "accepted: " + "; ".join(_finding(f) for f in res.failures),
                           list(res.failures), properties={**props, "accepted": _props(res.failures)})
        lines = [_finding(f) for f in res.failures]
        if saved:
            if sc.description:
                lines.append(f"({sc.description})")
            lines += _counterexample_lines(sc)
            lines.append(f"saved: {sc.path}")
        elif sc.path:
            lines.append(f"scenario file: {sc.path}")
        if sc.path:
            lines.append(f"replay: {replay_command(sc.path, self.impl)}")
        files = [Path(sc.path)] if saved and sc.path else []
        return Outcome(unit, "fail", "\n".join(lines), list(res.failures), files, props)

    def regression(self, path: str | Path, unit: str | None = None) -> Outcome:
        """Replay one saved counterexample."""
        from wheelspec.conformance.check.corpus import load

        return self.scenario(load(path), unit or f"regressions/{Path(path).stem}", saved=True)

    def campaign(self, kind: str, seed: int, schedules: int, unit: str | None = None) -> Outcome:
        """Run seeds ``seed .. seed + schedules - 1`` of ``kind``; stop at the first failing seed,
        shrink it and save its counterexample under :attr:`counterexamples`."""
        from wheelspec.conformance.check.generate import GENERATORS
        from wheelspec.conformance.check.session import campaign_kind, offers

        adapter, caps = self.open()
        unit = unit or f"campaign/{kind}"
        seeds = f"{seed}..{seed + schedules - 1}" if schedules else "none"
        props = {"impl": self.impl, "seeds": seeds, "schedules": str(schedules), "generator": GENERATORS[kind]}
        if not offers(caps, kind):
            return Outcome(unit, "skip", f"not applicable: the implementation offers no {kind}", properties=props)
        outs: list[SeedOutcome] = []
        campaign_kind(adapter, caps, kind, range(seed, seed + schedules), impl_name=impl_dirname(self.impl),
                      on_seed=outs.append, accept=self.accept, max_failures=1)
        accepted = [o for o in outs if not o.ok and not o.failing(self.accept)]  # counted, not failures
        if accepted:
            props["accepted"] = f"{len(accepted)} schedules fail {_props(accepted[-1].failures)} only (accepted)"
        out = next((o for o in outs if o.failing(self.accept)), None)
        if out is None:
            return Outcome(unit, "pass", properties=props)
        s = out.seed
        props_broken = ", ".join(dict.fromkeys(f.prop for f in out.failures))
        lines = [f"seed {s} (of seeds {seeds}) breaks {props_broken}: a schedule of {_n(out.ops, 'operation')}"]
        files: list[Path] = []
        cx = out.counterexample
        if cx is None:  # not shrunk: the findings are the whole schedule's
            lines += [_finding(f) for f in out.failures]
        else:
            p = save_counterexample(cx.for_impl(self.impl), self.counterexamples, kind, s)  # replays alone
            files.append(p)
            lines.append("shrunk counterexample:")
            lines += ["  " + line for line in _counterexample_lines(cx)]
            lines += ["  " + _finding(f) for f in out.failures]
            lines.append(f"saved: {p}")
            lines.append(f"replay: {replay_command(p, self.impl)}")
        props["failing_seed"] = str(s)
        return Outcome(unit, "fail", "\n".join(lines), list(out.failures), files, props)


def accepted_properties(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` (``--accept``: properties whose failures are known, documented deviations) checked
    against the conformance judge's properties (``spec/properties.py``); an unknown one raises
    :class:`~wheelspec.spec.errors.UserError` naming it."""
    from wheelspec.spec import properties
    from wheelspec.spec.errors import UserError

    if isinstance(names, str):
        names = [names]
    known = properties.reported_by(properties.RUN)
    out = tuple(dict.fromkeys(names))
    for name in out:
        if name not in known:
            raise UserError(f"accept: unknown property {name!r} (known: {', '.join(known)})")
    return out


def _props(findings: Iterable[Finding]) -> str:
    return ", ".join(dict.fromkeys(f.prop for f in findings))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _counterexample_lines(sc: Scenario) -> list[str]:
    """A counterexample as a failure shows it: its configuration, then its operations (the first
    :data:`SHOWN_OPS`; the file holds them all)."""
    from wheelspec.spec import show

    c = sc.config
    lines = [f"{_n(len(sc.ops), 'operation')} on tick_ms={c.tick_ms} wheel_size={c.wheel_size} "
             f"start_ms={c.start_ms} purge_interval={c.purge_interval}:"]
    lines += ["  " + show.step(i, op) for i, op in enumerate(sc.ops[:SHOWN_OPS])]
    if len(sc.ops) > SHOWN_OPS:
        lines.append(f"  ... {_n(len(sc.ops) - SHOWN_OPS, 'more operation')} in the file")
    return lines


def check_impl(impl: str, *, schedules: int = 100, seed: int = 0, kinds: Iterable[str] | None = None,
               scenarios: str | Path | None = None, corpus: bool = True,
               regressions: str | Path | None = DEFAULT_REGRESSIONS, out: str | Path = DEFAULT_OUT,
               timeout: float = 10.0, ranges: str | None = None, accept: Iterable[str] = ()) -> CheckResult:
    """Check ``impl`` (an ``--impl`` value: a built-in name, ``package.module:factory`` or
    ``cmd:COMMAND``) and return what was found; nothing is raised for a violation (call
    :meth:`CheckResult.assert_ok`).

    ``schedules`` random schedules per campaign kind from ``seed`` on (0: no campaign), ``kinds``
    (default: timer and purgatory; a kind the implementation does not offer is not applicable),
    ``scenarios`` a scenario folder instead of the shipped corpus (``corpus=False``: none),
    ``regressions`` the regression corpus folder (``None``: no replay, counterexamples saved under
    ``out``), ``timeout`` seconds per request to a subprocess adapter, ``ranges`` ``"unbounded"``
    for an implementation that accepts any value by design, ``accept`` properties whose failures
    are known, documented deviations (as ``wheelspec check --accept``: a unit failing only those
    passes, saying what it accepted).  An implementation that does not load
    or breaks the protocol raises :class:`~wheelspec.spec.errors.UserError`."""
    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.conformance.check.generate import KINDS
    from wheelspec.spec.errors import UserError

    kinds = tuple(KINDS if kinds is None else kinds)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UserError(f"check_impl: unknown campaign kind {bad[0]!r} (known: {', '.join(KINDS)})")
    if schedules < 0:
        raise UserError(f"check_impl: schedules must be >= 0, got {schedules}")
    if ranges not in (None, "bounded", "unbounded"):
        raise UserError(f"check_impl: ranges must be 'bounded' or 'unbounded', got {ranges!r}")
    saved = regression_files(regressions, impl) if regressions is not None else []
    folder = Path(regressions if regressions is not None else out) / impl_dirname(impl)
    outcomes: list[Outcome] = []
    with Checker(impl, counterexamples=folder, timeout=timeout, ranges=ranges, accept=accept) as checker:
        for p in saved:
            outcomes.append(checker.regression(p, f"regressions/{p.relative_to(folder).with_suffix('').as_posix()}"))
        declared = checker.declared_ranges() if corpus or (kinds and schedules) else None
        if declared is not None:  # a declared range narrower than Kafka's: one finding
            outcomes.append(declared)
        for sc in load_corpus(scenarios) if corpus else []:
            outcomes.append(checker.scenario(sc))
        for kind in kinds if schedules else ():
            outcomes.append(checker.campaign(kind, seed, schedules))
    return CheckResult(impl, outcomes)
