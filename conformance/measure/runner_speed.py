"""How fast ``wheelspec check`` checks: schedules/s and ops/s of the random campaign, per implementation.

Each measurement is one fresh process that runs a fixed seed range of the default campaign
(kinds ``timer,purgatory``, the corpus left out) through the code path ``wheelspec check`` uses
(:func:`wheelspec.conformance.check.session.check_one`, ``wheelspec check``'s default options) and
prints the campaign's own clock (``ImplReport.seconds``, which excludes the adapter's start) and
the number of operations its schedules held.

``--tree NAME=PYTHONPATH`` measures another copy of wheelspec side by side (for example a git
worktree of an older commit laid out as a package: ``NAME=/path/to/site`` whose ``wheelspec``
directory is that tree); the worker processes of that tree run with ``PYTHONPATH`` set to it, and
so do the adapter processes they start.  Repetitions are interleaved (tree by tree, implementation
by implementation, then again) so that a change in the machine's load hits every cell alike; the
table gives the median of each cell.

    python -m wheelspec.conformance.measure.runner_speed --schedules 300 --reps 3
    python -m wheelspec.conformance.measure.runner_speed --tree before=/tmp/before-site --tree after= --json out.json

``--breakdown`` says where a checked operation's CPU goes instead: per implementation, in one
fresh process, the same seeds are generated, run on the implementation, run on the oracle (the
reference watched by the coverage probe, nothing cached) and judged, each part timed apart; the
adapter process's CPU is read from ``/proc``.  Their sum is the CPU one checked operation costs, so
``cores / sum`` is the most any number of ``--workers`` can check per second on this machine.

    python -m wheelspec.conformance.measure.runner_speed --breakdown --schedules 1000 --impl reference --impl java:DIR

``docs/results/RUNNER_SPEED.md`` holds a run and says what was changed to get there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

#: the implementations measured by default (``java:DIR`` adds a Java kit built in DIR)
DEFAULT_IMPLS = ("reference", "optimized", "reference-subprocess", "optimized-subprocess")


def worker(impl: str, schedules: int, seed: int, kinds: str, workers: int = 1) -> dict[str, Any]:
    """One measurement in this process: ``wheelspec check --no-corpus`` on ``impl`` (several,
    comma separated, are checked one after the other as one command checks them; the figures are
    their totals)."""
    import wheelspec
    from wheelspec.conformance.check.session import CheckOptions, check_one

    out = os.path.join(os.environ.get("RUNNER_SPEED_OUT", "/tmp"), "runner-speed-out")
    impls = [impl] if impl.startswith("cmd:") else impl.split(",")
    opts = CheckOptions(schedules=schedules, seed=seed, workers=workers, out=out)  # else `wheelspec check`'s defaults
    kinds_list = [k.strip() for k in kinds.split(",") if k.strip()]
    t0 = time.perf_counter()
    reps = [check_one(one, opts, [], kinds_list) for one in impls]
    wall = time.perf_counter() - t0
    for rep in reps:
        if rep.error:
            raise SystemExit(f"{rep.impl}: {rep.error}")
    return {"impl": impl, "tree": os.path.dirname(os.path.dirname(wheelspec.__file__)),
            "schedules": sum(len(r.campaign) for r in reps), "ops": sum(o.ops for r in reps for o in r.campaign),
            "failed": sum(not o.ok for r in reps for o in r.campaign),
            "seconds": sum(_campaign_seconds(r) for r in reps), "wall": wall}


def _campaign_seconds(rep: Any) -> float:
    """The campaign's own clock of an ``ImplReport`` (an older tree keeps it in ``stats``)."""
    return rep.seconds if hasattr(rep, "seconds") else rep.stats.seconds


#: the parts of a checked operation :func:`breakdown` times, in the order of the table
PARTS = ("generate", "implementation", "oracle", "judge")


def _adapter_cpu(adapter: Any) -> float | None:
    """CPU seconds (user + system) the adapter's process has used so far; None in-process or
    where ``/proc`` is missing."""
    proc = getattr(adapter, "_proc", None)
    if proc is None:
        return None
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def breakdown(impl: str, schedules: int, seed: int, kinds: str) -> dict[str, Any]:
    """One implementation's checked operations taken apart in this process (module doc): CPU
    seconds per part, the adapter process's CPU, the operations."""
    from wheelspec.conformance.adapters.resolve import resolve
    from wheelspec.conformance.check import compiled_oracle, judge, oracle
    from wheelspec.conformance.check.coverage import Probe
    from wheelspec.conformance.check.generate import generate
    from wheelspec.conformance.check.narrow import narrow
    from wheelspec.conformance.check.runner import run_ops

    adapter = resolve(impl)()
    caps = adapter.hello().capabilities
    kinds_list = [k.strip() for k in kinds.split(",") if k.strip() and (k.strip() != "purgatory" or caps.purgatory)]
    cpu = dict.fromkeys(PARTS, 0.0)
    clock = time.process_time
    n_ops = failed = 0
    run_ops(adapter, *generate(kinds_list[0], seed))  # warm: a JIT, the adapter's first run
    adapter_before = _adapter_cpu(adapter)
    for kind in kinds_list:
        compiled_oracle.expect(kind, schedules)  # as a campaign of wheelspec check announces itself
        for s in range(seed, seed + schedules):
            t0 = clock()
            cfg, schedule = generate(kind, s)
            schedule = narrow(schedule, caps)
            t1 = clock()
            ahead: dict[str, Any] = {}

            def oracle_run(cfg: Any = cfg, schedule: Any = schedule, ahead: dict[str, Any] = ahead) -> None:
                start = clock()
                oracle._ORACLES = oracle._OracleRuns()  # every oracle run computed, none reused
                probe = Probe()
                ahead.update(oracle=oracle.oracle_run(caps, cfg, schedule, probe), probe=probe)
                ahead["cpu"] = clock() - start

            # As wheelspec check does it: a pipelined adapter computes while the oracle runs.
            result = run_ops(adapter, cfg, schedule, meanwhile=oracle_run)
            if not ahead:
                oracle_run()
            t2 = clock()
            failures, _ = judge.judge_run(adapter, caps, result, coverage=True, oracle=ahead["oracle"],
                                          probe=ahead["probe"])
            t3 = clock()
            for part, dt in zip(PARTS, (t1 - t0, t2 - t1 - ahead["cpu"], ahead["cpu"], t3 - t2)):
                cpu[part] += dt
            n_ops += len(schedule)
            failed += bool(failures)
    adapter_after = _adapter_cpu(adapter)
    adapter.close()
    adapter_cpu = None if adapter_before is None or adapter_after is None else adapter_after - adapter_before
    return {"impl": impl, "ops": n_ops, "failed": failed, "cpu": cpu, "adapter_cpu": adapter_cpu}


def breakdown_table(rows: list[dict[str, Any]], cores: int) -> str:
    """Microseconds of CPU per checked operation, part by part, and the ceiling they set."""
    lines = ["| implementation | " + " | ".join(PARTS) + " | adapter process | total | ceiling on "
             f"{cores} cores |", "|---|" + "---|" * (len(PARTS) + 3)]
    for r in rows:
        us = {p: r["cpu"][p] * 1e6 / r["ops"] for p in PARTS}
        adapter = r["adapter_cpu"] * 1e6 / r["ops"] if r["adapter_cpu"] is not None else 0.0
        total = sum(us.values()) + adapter
        lines.append(f"| {r['impl_name']} | " + " | ".join(f"{us[p]:.1f}" for p in PARTS)
                     + (f" | {adapter:.1f}" if r["adapter_cpu"] is not None else " | -")
                     + f" | {total:.1f} | {cores * 1e6 / total:,.0f} ops/s |".replace(",", " "))
    return "\n".join(lines)


def _impl_spec(name: str, tree: str) -> str:
    if name.startswith("java:"):
        d = name[len("java:"):].replace("{tree}", tree)
        return f"cmd:java -cp {os.path.join(d, 'build')} ToyTimer"
    return name


def label(impl: str, workers: int) -> str:
    """A row of the table: the implementation, and the processes judging it when more than one."""
    return impl if workers == 1 else f"{impl}, --workers {workers}"


def measure(trees: list[tuple[str, str]], impls: list[str], schedules: int, seed: int, kinds: str,
            reps: int, workers: tuple[int, ...] = (1,)) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rep in range(reps):
        for impl, w in [(i, w) for i in impls for w in workers]:
            for tree, path in trees:
                env = dict(os.environ)
                if path:
                    env["PYTHONPATH"] = path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", _impl_spec(impl, tree),
                       "--schedules", str(schedules), "--seed", str(seed), "--kinds", kinds, "--workers", str(w)]
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
                if p.returncode != 0:
                    raise SystemExit(f"{tree} {impl}: worker failed ({p.returncode}): {p.stderr[-2000:]}")
                r = json.loads(p.stdout.strip().splitlines()[-1])
                r.update(tree_name=tree, impl_name=label(impl, w), rep=rep)
                rows.append(r)
                print(f"  rep {rep} {tree:>8} {label(impl, w):<22} {r['schedules'] / r['seconds']:8.1f} schedules/s "
                      f"{r['ops'] / r['seconds']:9.0f} ops/s  ({r['seconds']:.2f} s, {r['failed']} failed)",
                      file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict[str, Any]], trees: list[str], impls: list[str]) -> str:
    lines = ["| implementation | " + " | ".join(f"{t} schedules/s | {t} ops/s" for t in trees)
             + (" | ops/s ratio |" if len(trees) == 2 else " |"),
             "|---|" + "---|---|" * len(trees) + ("---|" if len(trees) == 2 else "")]
    for impl in impls:
        cells, rates = [], []
        for t in trees:
            mine = [r for r in rows if r["impl_name"] == impl and r["tree_name"] == t]
            s = statistics.median(r["schedules"] / r["seconds"] for r in mine)
            o = statistics.median(r["ops"] / r["seconds"] for r in mine)
            rates.append(o)
            cells.append(f"{s:.0f} | {o:.0f}")
        ratio = f" | {rates[1] / rates[0]:.1f}x |" if len(trees) == 2 else " |"
        lines.append(f"| {impl} | " + " | ".join(cells) + ratio)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", metavar="IMPL", help=argparse.SUPPRESS)
    ap.add_argument("--impl", action="append", metavar="IMPL",
                    help="implementation (repeatable; java:DIR for a Java kit built in DIR/build, where {tree} "
                         f"stands for the tree's name; default {', '.join(DEFAULT_IMPLS)})")
    ap.add_argument("--tree", action="append", metavar="NAME=PYTHONPATH",
                    help="a copy of wheelspec to measure (repeatable; empty PYTHONPATH: the installed one)")
    ap.add_argument("--schedules", type=int, default=300, help="schedules per kind (default 300)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--kinds", default="timer,purgatory", help="campaign kinds (default timer,purgatory)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of every cell (default 3)")
    ap.add_argument("--workers", default="1", metavar="N,N,...",
                    help="measure each implementation with `check --workers N` for each N (default 1)")
    ap.add_argument("--breakdown", action="store_true",
                    help="time the parts of a checked operation (generate, implementation, oracle, judge, the "
                         "adapter's process) instead of whole campaigns")
    ap.add_argument("--json", metavar="FILE", help="also write every measurement as JSON")
    args = ap.parse_args(argv)
    workers = tuple(int(x) for x in str(args.workers).split(","))
    if args.worker:
        if args.breakdown:
            print(json.dumps(breakdown(args.worker, args.schedules, args.seed, args.kinds)))
        else:
            print(json.dumps(worker(args.worker, args.schedules, args.seed, args.kinds, workers[0])))
        return 0
    if args.breakdown:
        return _main_breakdown(args)
    trees = [(t.partition("=")[0], t.partition("=")[2]) for t in (args.tree or ["installed="])]
    impls = args.impl or list(DEFAULT_IMPLS)
    print(f"runner speed: {args.schedules} schedules per kind ({args.kinds}), seeds {args.seed}.., "
          f"{args.reps} repetitions, medians; python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = measure(trees, impls, args.schedules, args.seed, args.kinds, args.reps, workers)
    print(table(rows, [t for t, _ in trees], [label(i, w) for i in impls for w in workers]))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def _main_breakdown(args: argparse.Namespace) -> int:
    impls = args.impl or list(DEFAULT_IMPLS)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    print(f"runner speed, CPU per checked operation: {args.schedules} schedules per kind ({args.kinds}), seeds "
          f"{args.seed}.., one process per implementation; python {sys.version.split()[0]}, {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for impl in impls:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", _impl_spec(impl, ""), "--breakdown",
               "--schedules", str(args.schedules), "--seed", str(args.seed), "--kinds", args.kinds]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"{impl}: worker failed ({p.returncode}): {p.stderr[-2000:]}")
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r["impl_name"] = impl
        rows.append(r)
    print(breakdown_table(rows, cores))
    print("(microseconds of CPU per checked operation; the ceiling is cores / total: what any number of "
          "--workers could reach with the work spread perfectly)")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
