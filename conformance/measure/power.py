"""The runner's power: how well ``wheelspec check`` finds the broken variants of
``tests/fixtures/variants`` (an independent Kafka-style timer and purgatory, each variant one bug).

Run from the repository root (the variants live in the test tree)::

    python -m wheelspec.conformance.measure.power                 # writes docs/results/POWER.md
    python -m wheelspec.conformance.measure.power --seeds 400 --out /tmp/p.md --variants wrap-at-nine

For each variant it measures:

* **rate**: the share of failing schedules among seeds ``0 .. seeds-1`` of each campaign kind
  (``run_seed_range(..., shrink=False)``, the campaign's unit of work);
* **campaign kill per seed base**: whether the default campaign (``--schedules`` seeds per kind from
  the base, every kind the variant offers) has a failing schedule, for each base of ``--bases``.
  The bases default to ``0, 400, ..., 1600``, whose default-size campaigns tile seeds 0-1999, so the
  verdicts are read from the rate measurement; a base whose seeds fall outside it is run on its own;
* **worst base**: the lowest share of failing schedules of the variant's own kind among the
  campaigns of the bases (a bug the campaign finds at every base, but how reliably);
* **default check kill per seed base**: the corpus kills it, or that campaign does (what
  ``wheelspec check --impl ... --seed BASE`` concludes; ``--verify-cli`` runs that command for each
  base and reports any disagreement);
* **schedules to first detection**: from each base, how many schedules of the variant's kind run
  before the first failing one (the median over the bases);
* **shrunk length**: the operations left after shrinking the first failing schedule of its kind,
  and the property it fails.

Heavy: one process, one core.  ``--rates FILE`` also writes the per-variant failure rates as a short
Markdown table (for the people tuning the generator).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VARIANTS_MODULE = "tests.fixtures.variants"


@dataclass
class Measure:
    """What the table shows for one implementation (a variant, or the correct timer)."""

    name: str
    kind: str
    depth: str
    doc: str
    corpus_kills: bool = False
    corpus_failed: list[str] = field(default_factory=list)
    #: kind -> failing seeds among 0 .. seeds-1
    failing: dict[str, list[int]] = field(default_factory=dict)
    seeds: int = 0
    #: base -> the campaign from that base has a failing schedule
    campaign_kill: dict[int, bool] = field(default_factory=dict)
    #: base -> schedules of ``kind`` run before the first failing one (None: none failed)
    to_first: dict[int, int | None] = field(default_factory=dict)
    #: base -> failing schedules of ``kind`` in that base's campaign
    base_fails: dict[int, int] = field(default_factory=dict)
    shrunk_ops: int | None = None
    original_ops: int | None = None
    shrunk_prop: str = ""
    cli: dict[int, bool] = field(default_factory=dict)
    seconds: float = 0.0

    def rate(self, kind: str) -> float:
        return len(self.failing.get(kind, [])) / self.seeds if self.seeds else 0.0

    def best_rate(self) -> float:
        return max((self.rate(k) for k in self.failing), default=0.0)

    def default_kill(self, base: int) -> bool:
        return self.corpus_kills or self.campaign_kill.get(base, False)

    def worst_base(self, schedules: int) -> float | None:
        """The lowest failing share of ``kind`` schedules over the bases (None: not measured)."""
        return min(self.base_fails.values()) / schedules if self.base_fails and schedules else None


def _variants() -> tuple[Any, list[Any]]:
    """The variants package and its VARIANTS (importable when run from the repository root)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    import importlib

    try:
        pkg = importlib.import_module(VARIANTS_MODULE)
    except ImportError as e:
        raise SystemExit(f"power: cannot import {VARIANTS_MODULE} ({e}); run from the repository root") from None
    return pkg, list(pkg.VARIANTS)


def measure(impl: str, name: str, kind: str, depth: str, doc: str, *, seeds: int, bases: list[int],
            schedules: int, kinds: list[str], scenarios: list[Any]) -> Measure:
    """Measure one implementation given as an ``--impl`` value."""
    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.check.campaign import run_seed_range
    from wheelspec.conformance.check.corpus import run_scenario

    t0 = time.perf_counter()
    m = Measure(name, kind, depth, doc, seeds=seeds)
    adapter = resolve(impl)()
    try:
        caps = adapter.hello().capabilities
        for sc in scenarios:
            res = run_scenario(adapter, caps, sc)
            if res.status == "fail":
                m.corpus_failed.append(sc.name)
        m.corpus_kills = bool(m.corpus_failed)
        fails: dict[str, set[int]] = {}
        for k in kinds:
            outs = run_seed_range(adapter, caps, k, range(seeds), shrink=False)
            fails[k] = {o.seed for o in outs if not o.ok}
            m.failing[k] = sorted(fails[k])
        for base in bases:
            window = range(base, base + schedules)
            hit = False
            for k in sorted(kinds, key=lambda k: k != kind):  # the variant's own kind first
                inside = [s for s in window if 0 <= s < seeds]
                outside = [s for s in window if not 0 <= s < seeds]
                failed = sum(s in fails[k] for s in inside)
                if outside:
                    failed += sum(not o.ok for o in run_seed_range(adapter, caps, k, outside, shrink=False))
                if k == kind:
                    m.base_fails[base] = failed
                if failed:
                    hit = True
                    break
            m.campaign_kill[base] = hit
            later = [s for s in sorted(fails.get(kind, ())) if s >= base]
            m.to_first[base] = later[0] - base + 1 if later else None
        first = m.failing.get(kind) or next((m.failing[k] for k in kinds if m.failing.get(k)), [])
        if first:
            k = kind if m.failing.get(kind) else next(k for k in kinds if m.failing.get(k))
            out = run_seed_range(adapter, caps, k, [first[0]], shrink=True, impl_name=name)[0]
            if out.counterexample is not None:
                m.shrunk_ops = len(out.counterexample.ops)
                m.original_ops = out.ops
                m.shrunk_prop = out.counterexample.origin.get("prop", "") if out.counterexample.origin else ""
    finally:
        adapter.close()
    m.seconds = time.perf_counter() - t0
    return m


def verify_cli(impl: str, bases: list[int], schedules: int) -> dict[int, bool]:
    """Run the real ``wheelspec check --impl IMPL --seed BASE`` for each base: killed = exit 1."""
    out: dict[int, bool] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for base in bases:
            cmd = [sys.executable, "-m", "wheelspec", "check", "--impl", impl, "--seed", str(base),
                   "--schedules", str(schedules), "--out", tmp]
            rc = subprocess.run(cmd, capture_output=True, text=True).returncode
            if rc not in (0, 1):
                raise SystemExit(f"power: `{shlex.join(cmd)}` ended with exit {rc}")
            out[base] = rc == 1
    return out


# ----------------------------------------------------------------------------- report --------------
def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _machine() -> str:
    cores = os.cpu_count() or 0
    return (f"`{platform.machine()}`, {cores} cores, Python {platform.python_version()} "
            f"({platform.python_implementation()}), {platform.system()} {platform.release()}")


def _generators() -> str:
    from wheelspec.conformance.check.generate import GENERATORS

    return ", ".join(f"{k} `{v}`" for k, v in GENERATORS.items())


def render(ms: list[Measure], *, command: str, seeds: int, bases: list[int], schedules: int,
           kinds: list[str], seconds: float) -> str:
    bases_s = ", ".join(str(b) for b in bases)
    lines = [
        "# The runner's power against broken variants",
        "",
        "Written by `python -m wheelspec.conformance.measure.power`; do not edit by hand. The variants are "
        "`tests/fixtures/variants/broken.py` (each docstring says the bug and why it needs a long "
        "history or not), built on an independent Kafka-style timer and purgatory "
        "(`tests/fixtures/variants/`) that claims the `kafka` profile, so the judge compares it with "
        "the reference event for event.",
        "",
        f"* command: `{command}`",
        f"* machine: {_machine()}; {seconds:.0f} s in all",
        f"* generators: {_generators()}",
        f"* rate: failing share of seeds 0-{seeds - 1} of each kind (`run_seed_range`, no shrinking)",
        f"* default check: `wheelspec check --impl tests.fixtures.variants:NAME --seed BASE` "
        f"(corpus + {schedules} schedules per kind) for the bases {bases_s}: killed at how many of "
        f"the {len(bases)}; campaign alone: the same with `--no-corpus`",
        "* worst base: the lowest share of failing schedules of the variant's kind among the "
        "campaigns of those bases",
        "* to first: schedules of the variant's kind before the first failing one, median over the "
        "bases (`-`: none failed)",
        "* shrunk: operations in the shrunk counterexample of the first failing schedule (from how "
        "many), and the property it fails",
        "",
        "| variant | kind | depth | corpus | default check | campaign alone | "
        + " | ".join(f"rate {k}" for k in kinds) + " | worst base | to first | shrunk | property |",
        "|---|---|---|---|---|---|" + "---|" * len(kinds) + "---|---|---|---|",
    ]
    for m in ms:
        n = len(bases)
        dk = sum(m.default_kill(b) for b in bases)
        ck = sum(m.campaign_kill.get(b, False) for b in bases)
        firsts = [v for v in m.to_first.values() if v is not None]
        to_first = (f"{statistics.median(firsts):g}" + ("" if len(firsts) == n else f" ({n - len(firsts)} none)")
                    if firsts else "-")
        shrunk = f"{m.shrunk_ops} (of {m.original_ops})" if m.shrunk_ops is not None else "-"
        cli = ""
        if m.cli:
            agree = all(m.cli[b] == m.default_kill(b) for b in m.cli)
            cli = " (cli agrees)" if agree else " (CLI DISAGREES: " + ", ".join(
                f"{b}: {'kill' if v else 'pass'}" for b, v in m.cli.items()) + ")"
        lines.append(
            f"| {m.name} | {m.kind} | {m.depth} | {'kill' if m.corpus_kills else 'pass'} | {dk}/{n}{cli} | {ck}/{n} | "
            + " | ".join(_pct(m.rate(k)) for k in kinds)
            + f" | {_pct(worst) if (worst := m.worst_base(schedules)) is not None else '-'}"
            + f" | {to_first} | {shrunk} | {m.shrunk_prop or '-'} |")
    lines += ["", "## The variants", ""]
    for m in ms:
        lines.append(f"* **{m.name}** ({m.depth}): {m.doc}")
        if m.corpus_failed:
            lines.append(f"  Corpus scenarios that fail: {', '.join(m.corpus_failed[:6])}"
                         + (f" and {len(m.corpus_failed) - 6} more" if len(m.corpus_failed) > 6 else "") + ".")
    lines += ["", "## Acceptance", "",
              "Each variant must be killed by the campaign alone at every base and fail at least 1% of "
              "the schedules of some kind (its own kind, or the other one when its bug shows there too).", ""]
    weak = [m for m in ms if m.name != "correct"
            and (not all(m.campaign_kill.get(b, False) for b in bases) or m.best_rate() < 0.01)]
    if weak:
        lines.append("Not met by: " + ", ".join(
            f"{m.name} ({sum(m.campaign_kill.get(b, False) for b in bases)}/{len(bases)} bases, "
            f"best rate {_pct(m.best_rate())})" for m in weak) + ".")
    else:
        lines.append("Met by every variant.")
    return "\n".join(lines) + "\n"


def render_rates(ms: list[Measure], kinds: list[str], seeds: int) -> str:
    lines = [f"Failure rates over seeds 0-{seeds - 1} per kind (generators: {_generators()})", "",
             "| variant | kind | depth | " + " | ".join(kinds) + " |", "|---|---|---|" + "---|" * len(kinds)]
    for m in ms:
        lines.append(f"| {m.name} | {m.kind} | {m.depth} | "
                     + " | ".join(f"{_pct(m.rate(k))} ({len(m.failing.get(k, []))})" for k in kinds) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from wheelspec.conformance.check.defaults import DEFAULT_SCHEDULES

    p = argparse.ArgumentParser(prog="python -m wheelspec.conformance.measure.power",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=2000, help="seeds per kind for the rates (default 2000)")
    p.add_argument("--bases", default="0,400,800,1200,1600", help="seed bases of the default check")
    p.add_argument("--schedules", type=int, default=DEFAULT_SCHEDULES,
                   help=f"schedules per kind of one default check (default {DEFAULT_SCHEDULES})")
    p.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    p.add_argument("--no-correct", action="store_true", help="do not measure the correct timer")
    p.add_argument("--verify-cli", action="store_true",
                   help="also run `wheelspec check --seed BASE` for each variant and base (slow)")
    p.add_argument("--out", default="docs/results/POWER.md", help="the Markdown table (default docs/results/POWER.md)")
    p.add_argument("--rates", default="", help="also write the failure rates to this Markdown file")
    args = p.parse_args(argv)
    if args.seeds < 1 or args.schedules < 1:
        p.error("--seeds and --schedules must be >= 1")
    try:
        bases = [int(b) for b in args.bases.split(",") if b.strip()]
    except ValueError:
        p.error(f"--bases: not a comma-separated list of integers: {args.bases!r}")
    from wheelspec.conformance.check.corpus import load_corpus
    from wheelspec.conformance.check.generate import KINDS

    _pkg, variants = _variants()
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(chosen) - {v.name for v in variants}
    if unknown:
        p.error(f"--variants: unknown {sorted(unknown)[0]!r} (known: {', '.join(v.name for v in variants)})")
    todo = [v for v in variants if not chosen or v.name in chosen]
    kinds = list(KINDS)
    scenarios = load_corpus(None)
    t0 = time.perf_counter()
    ms: list[Measure] = []
    jobs: list[tuple[str, str, str, str, str]] = []
    if not args.no_correct:
        jobs.append((f"{VARIANTS_MODULE}:correct_timer", "correct", "-", "-", "The correct timer and purgatory."))
    for v in todo:
        jobs.append((f"{VARIANTS_MODULE}:{v.name.replace('-', '_')}", v.name, v.kind, v.depth, v.doc))
    for impl, name, kind, depth, doc in jobs:
        m = measure(impl, name, kind, depth, doc, seeds=args.seeds, bases=bases, schedules=args.schedules,
                    kinds=kinds, scenarios=scenarios)
        if args.verify_cli:
            m.cli = verify_cli(impl, bases, args.schedules)
        ms.append(m)
        print(f"{name:32s} corpus {'kill' if m.corpus_kills else 'pass'}  "
              + "  ".join(f"{k} {_pct(m.rate(k))}" for k in kinds)
              + f"  bases {sum(m.campaign_kill.values())}/{len(bases)}"
              + (f"  worst base {_pct(worst)}" if (worst := m.worst_base(args.schedules)) is not None else "")
              + f"  shrunk {m.shrunk_ops}  {m.seconds:.0f}s",
              flush=True)
    given = argv if argv is not None else sys.argv[1:]
    command = "python -m wheelspec.conformance.measure.power" + (" " + shlex.join(given) if given else "")
    text = render(ms, command=command, seeds=args.seeds, bases=bases, schedules=args.schedules, kinds=kinds,
                  seconds=time.perf_counter() - t0)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    if args.rates:
        Path(args.rates).write_text(render_rates(ms, kinds, args.seeds))
        print(f"wrote {args.rates}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
