"""Same runs, two trees: do the verdicts of ``wheelspec check`` move?

Any change that could move a verdict is checked by running the same ``wheelspec check --json``
commands on the tree before and the tree after, and comparing the reports.  This script does both
halves::

    # the reports of one tree (its python, run from its checkout so tests.fixtures resolve there)
    python -m wheelspec.benchmarks.verdicts run OUT_BEFORE --python /old/venv/bin/python --cwd /old/tree
    python -m wheelspec.benchmarks.verdicts run OUT_AFTER
    # what moved
    python -m wheelspec.benchmarks.verdicts diff OUT_BEFORE OUT_AFTER
    # what each check cost (CPU seconds of the check and the processes it started), side by side
    python -m wheelspec.benchmarks.verdicts cpu OUT_BEFORE OUT_AFTER

The implementations (:data:`IMPLS`) are wheelspec's engines, the test fixtures (broken engines
in-process and served, the variants of ``tests/fixtures/variants`` and their correct timer) and
the third-party Python adapters.  ``diff`` compares, per implementation, the status, the verdict per
contract, each scenario's status and findings, each failing seed's findings, the exit code and the
rest of the report's body; what varies between two runs of the same tree (times, rates, process
ids, the output folder) and the report envelope's other fields (``format``, ``wheelspec``, ``ok``...)
are left out, so that reports with and without the envelope compare by their verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_SERVE = "cmd:{python} -m wheelspec.conformance.adapters.serve "

#: the implementations judged, as ``--impl`` values ({python}: the tree's interpreter); the broken
#: fixtures ``tries_completed`` and ``retimes_completed`` are left out: shrinking their failures
#: takes over a quarter of an hour of CPU each
IMPLS: tuple[str, ...] = (
    "reference", "reference-mock", "optimized", "reference-subprocess", "optimized-subprocess",
    "wheelspec.conformance.adapters.stdlib_sched:adapter",
    "wheelspec.conformance.adapters.asyncio_loop:adapter",
    "tests.fixtures.broken:fires_early", "tests.fixtures.broken:fires_cancelled",
    "tests.fixtures.broken:fires_twice", "tests.fixtures.broken:drops_readd",
    "tests.fixtures.broken:relative_bucket", "tests.fixtures.broken:no_requeue",
    "tests.fixtures.broken:one_try", "tests.fixtures.broken:complete_twice",
    "tests.fixtures.broken:no_purge",
    _SERVE + "tests.fixtures.broken:fires_early", _SERVE + "tests.fixtures.broken:drops_readd",
    "tests.fixtures.variants:correct_timer",
)

#: keys whose values differ between two runs of one tree
_VOLATILE = {"seconds", "schedules_per_s", "ops_per_s", "wheelspec", "counterexamples"}
_PID = re.compile(r"\b(pid|process) \d+")
#: an implementation's counterexample folder (spec.show.impl_dirname: it spells the interpreter's path)
_CX_FOLDER = re.compile(r"\bOUT/cx/[^/]+/")
#: the same folder in a counterexample's scenario name (``counterexample/FOLDER/timer-14``)
_CX_NAME = re.compile(r"^counterexample/[^/]+/")


def _variant_impls(python: str, cwd: str) -> list[str]:
    """``tests.fixtures.variants:NAME`` for every variant the tree at ``cwd`` defines."""
    code = "from tests.fixtures.variants import FACTORIES as F; print(' '.join(f.__name__ for f in F.values()))"
    out = subprocess.run([python, "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return [f"tests.fixtures.variants:{n}" for n in out.stdout.split()]


def _safe(impl: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", impl.replace("{python} ", ""))[:120]


#: where ``run`` keeps each check's CPU seconds (its process and every process it started)
CPU_FILE = "cpu.json"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(out: Path, *, python: str, cwd: str, schedules: int, seed: int, env: dict[str, str] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    impls = [*IMPLS, *_variant_impls(python, cwd)]
    cpu: dict[str, float] = {}
    for impl in impls:
        spec = impl.format(python=python)
        dest = out / f"{_safe(impl)}.json"
        t0, c0 = time.perf_counter(), _children_cpu()
        cmd = [python, "-m", "wheelspec", "check", "--impl", spec, "--schedules", str(schedules),
               "--seed", str(seed), "--json", str(dest), "--out", str(out / "cx")]
        rc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **(env or {}), "COLUMNS": "200"})
        cpu[dest.name] = round(_children_cpu() - c0, 2)
        print(f"{impl}: exit {rc.returncode} in {time.perf_counter() - t0:.1f} s, {cpu[dest.name]:.1f} s of CPU",
              flush=True)
    (out / CPU_FILE).write_text(json.dumps(cpu, indent=1) + "\n")


def _first_failures(path: Path) -> str:
    """Schedules run before the first failing one, per campaign kind (``-``: none failed)."""
    report = json.loads(path.read_text())
    first: dict[str, int] = {}
    for f in report["implementations"][0].get("campaign", {}).get("failures", []):
        first[f["kind"]] = min(first.get(f["kind"], f["seed"]), f["seed"])
    seed0 = report.get("first_seed", 0)
    return ", ".join(f"{k} {s - seed0 + 1}" for k, s in sorted(first.items())) or "-"


def cpu(before: Path, after: Path) -> int:
    """CPU seconds of each check in both folders (``run`` records them), side by side, with the
    schedules each campaign ran up to and including its first failing one (AFTER's report)."""
    a, b = (json.loads((d / CPU_FILE).read_text()) for d in (before, after))
    print("| implementation | schedules to first detection | CPU s before | CPU s after | ratio |")
    print("|---|---|---|---|---|")
    for name in sorted(set(a) & set(b)):
        print(f"| {name[:-5]} | {_first_failures(after / name)} | {a[name]:.1f} | {b[name]:.1f} | "
              f"{a[name] / b[name]:.2f}x |")
    print(f"| total | | {sum(a[n] for n in set(a) & set(b)):.1f} | {sum(b[n] for n in set(a) & set(b)):.1f} | |")
    return 0


def _norm(x: Any, python: str, out: str) -> Any:
    """``x`` without what differs between two trees' runs of one implementation: volatile keys,
    process ids, the output folder and the interpreter, also where a folder name is made from it."""
    if isinstance(x, dict):
        if "generator" in x and "impl" in x:  # a counterexample's origin: ``impl`` names its folder
            x = {**x, "impl": "IMPL"}
        return {k: _norm(v, python, out) for k, v in x.items() if k not in _VOLATILE}
    if isinstance(x, list):
        return [_norm(v, python, out) for v in x]
    if isinstance(x, str):
        x = _CX_FOLDER.sub("OUT/cx/IMPL/", x.replace(python, "PYTHON").replace(out, "OUT"))
        x = _CX_NAME.sub("counterexample/IMPL/", x)
        return _PID.sub(r"\1 N", x)
    return x


def _drop(x: Any, keys: frozenset[str]) -> Any:
    if isinstance(x, dict):
        return {k: _drop(v, keys) for k, v in x.items() if k not in keys}
    if isinstance(x, list):
        return [_drop(v, keys) for v in x]
    return x


#: the report envelope every command shares (wheelspec.envelope): compared through
#: ``exit_code`` only, so that reports written with and without the envelope compare by their bodies
_ENVELOPE = frozenset({"format", "command", "wheelspec", "ok", "exit_code", "interrupted"})


def _load(path: Path, ignore: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One report's implementation, its exit code and the rest of its body (``run``: the
    arguments it records), normalized; an implementation that never ran has no name (null)."""
    d = json.loads(path.read_text())
    impl = d["implementations"][0]
    if impl.get("name") == "":
        impl = {**impl, "name": None}
    python = impl["spec"].split()[0][4:] if impl["spec"].startswith("cmd:") else "\0"
    run = {k: v for k, v in d.items() if k not in _ENVELOPE and k != "implementations"}
    body = _norm({**impl, "run": run}, python, str(path.parent))
    return _drop(body, ignore) | {"exit_code": d.get("exit_code")}


def _failing(rep: dict[str, Any], kinds: set[str]) -> dict[str, list[str]]:
    """Failing seed of ``kinds`` -> its properties; scenario -> its status and properties."""
    out = {f"{f['kind']}-{f['seed']}": sorted({x["prop"] for x in f["failures"]})
           for f in rep.get("campaign", {}).get("failures", []) if f["kind"] in kinds}
    for s in rep.get("scenarios", []):
        props = sorted({x["prop"] for x in s.get("failures", [])})
        out[s["name"]] = [s.get("status", "?"), *props]
    return out


def _by_kind(rep: dict[str, Any], kind: str) -> str:
    """How many seeds of ``kind`` failed, and which properties."""
    fails = [f for f in rep.get("campaign", {}).get("failures", []) if f["kind"] == kind]
    props = sorted({p for f in fails for p in [*f.get("props", []), *(x["prop"] for x in f["failures"])]})
    return f"{len(fails)} failing ({', '.join(props) or '-'})"


def diff(before: Path, after: Path, redrawn: set[str], ignore: frozenset[str] = frozenset()) -> int:
    """Print what moved; seeds of the kinds in ``redrawn`` (a generator version changed between
    the trees, so seed N is another schedule) are compared as counts and properties only; keys in
    ``ignore`` (fields one tree adds, or text both word differently) are left out everywhere."""
    names = sorted(({p.name for p in before.glob("*.json")} | {p.name for p in after.glob("*.json")}) - {CPU_FILE})
    same = 0
    for name in names:
        a, b = before / name, after / name
        if not (a.exists() and b.exists()):
            print(f"{name[:-5]}: only {'before' if a.exists() else 'after'}")
            continue
        ra, rb = _load(a, ignore), _load(b, ignore)
        if ra == rb:
            same += 1
            continue
        print(f"{name[:-5]}: status {ra['status']} -> {rb['status']}, exit {ra['exit_code']} -> {rb['exit_code']}")
        va, vb = ra.get("verdicts", {}), rb.get("verdicts", {})
        for k in sorted(set(va) | set(vb)):
            if va.get(k) != vb.get(k):
                print(f"    verdict {k}: {va.get(k)} -> {vb.get(k)}")
        kinds = {"timer", "purgatory"} - redrawn
        fa, fb = _failing(ra, kinds), _failing(rb, kinds)
        for k in sorted(set(fa) | set(fb)):
            if fa.get(k) != fb.get(k):
                print(f"    {k}: {fa.get(k, 'pass')} -> {fb.get(k, 'pass')}")
        for kind in sorted(redrawn):
            was, now = _by_kind(ra, kind), _by_kind(rb, kind)
            if was != now:
                print(f"    {kind} seeds (redrawn): {was} -> {now}")
        rest = sorted(k for k in set(ra) | set(rb) if ra.get(k) != rb.get(k))
        print(f"    fields that differ: {', '.join(rest)}")
    print(f"{same} of {len(names)} reports identical")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wheelspec.benchmarks.verdicts", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="write one JSON report per implementation into OUT")
    r.add_argument("out", type=Path)
    r.add_argument("--python", default=sys.executable, help="the tree's interpreter (default: this one)")
    r.add_argument("--cwd", default=".", help="the tree's checkout (default: here)")
    r.add_argument("--schedules", type=int, default=150, help="schedules per campaign kind (default 150)")
    r.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    r.add_argument("--pythonpath", default="", help="PYTHONPATH of the checks: another tree laid out as a package "
                                                    "(as runner_speed's --tree) instead of the installed one")
    d = sub.add_parser("diff", help="compare two folders written by run")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument("--redrawn", action="append", default=[], choices=("timer", "purgatory"),
                   help="a campaign kind whose generator version differs between the trees: its seeds "
                        "are compared as counts and properties, not seed by seed")
    d.add_argument("--ignore", default="", metavar="KEY,KEY",
                   help="keys left out at every depth of both reports (a field only one tree writes)")
    c = sub.add_parser("cpu", help="the CPU of each check in two folders written by run, side by side")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "run":
        env = {"PYTHONPATH": args.pythonpath} if args.pythonpath else None
        run(args.out, python=args.python, cwd=args.cwd, schedules=args.schedules, seed=args.seed, env=env)
        return 0
    if args.cmd == "cpu":
        return cpu(args.before, args.after)
    return diff(args.before, args.after, set(args.redrawn),
                frozenset(k for k in args.ignore.split(",") if k))


if __name__ == "__main__":
    sys.exit(main())
