"""``wheelspec realtime``: run real-time schedules against a wall-clock timer and print the verdicts
(the schedules, adapters and judge are :mod:`wheelspec.conformance.realtime`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from wheelspec.conformance.cli.args import Once, count, describe, non_negative, seed, writable_dir, writable_file
from wheelspec.conformance.realtime import (
    DEFAULT_SLACK_MS,
    RtReport,
    generate,
    load_schedule,
    percentiles,
    report_dict,
    resolve,
    run_schedules,
)
from wheelspec.spec import show
from wheelspec.spec.errors import UserError


def configure_realtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", default="netty", metavar="IMPL", action=Once,
                   help="netty (Java + libnetty-java), asyncio-live, or cmd:COMMAND speaking rt_run (default netty)")
    p.add_argument("--runs", type=count, default=3, metavar="N", help="seeded schedules to run (default 3)")
    p.add_argument("--seed", type=seed, default=0, metavar="SEED", help="first seed (default 0)")
    p.add_argument("--tasks", type=count, default=150, metavar="N", help="tasks per schedule (default 150)")
    p.add_argument("--tick", type=count, default=1, metavar="MS", help="tick asked of the timer, in ms (default 1)")
    p.add_argument("--slack", type=non_negative, default=DEFAULT_SLACK_MS, metavar="MS",
                   help=f"late-bound allowance for a loaded machine, in ms (default {DEFAULT_SLACK_MS})")
    p.add_argument("--schedule", metavar="FILE", help="replay one saved real-time schedule instead")
    p.add_argument("--out", type=writable_dir, default="wheelspec-out/realtime", metavar="DIR",
                   help="where failing schedules go")
    p.add_argument("--json", type=writable_file, metavar="FILE", help="write the verdicts as JSON (- for stdout)")
    describe(p, [
        ("wheelspec realtime", "Netty's HashedWheelTimer (needs Java and libnetty-java) against the wall clock"),
        ("wheelspec realtime --impl asyncio-live --runs 5 --json -",
         "a live asyncio loop; the verdicts as JSON on stdout"),
        ("wheelspec realtime --impl netty --schedule wheelspec-out/realtime/netty-realtime-3.json",
         "replay one saved failing schedule"),
    ], ["0    every real-time property holds", "1    a violation (failing schedules saved under --out)"])


def run_realtime(args: argparse.Namespace) -> int:
    """``wheelspec realtime``: exit 0 all properties hold, 1 a violation, 2 usage/adapter errors."""
    for name in ("runs", "tasks", "tick"):
        if getattr(args, name) < 1:
            raise UserError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.slack < 0:
        raise UserError(f"--slack must be >= 0, got {args.slack}")
    if args.schedule:
        schedules = [load_schedule(args.schedule)]
    else:
        schedules = [generate(args.seed + k, tasks=args.tasks, tick_ms=args.tick, slack_ms=args.slack)
                     for k in range(args.runs)]
    from wheelspec.conformance.cli.output import human_to_stderr, write_json
    from wheelspec.envelope import envelope

    adapter = resolve(args.impl)
    try:
        rep = run_schedules(adapter, schedules, slack_ms=args.slack, out_dir=args.out)
    finally:
        adapter.close()
    print_report(rep, sys.stderr if human_to_stderr(args.json) else None, impl=args.impl)
    if args.json:
        body = {k: v for k, v in report_dict(rep).items() if k != "ok"}
        write_json(args.json, envelope("realtime", body, exit_code=0 if rep.ok else 1))
    return 0 if rep.ok else 1


def print_report(rep: RtReport, file: Any = None, *, impl: str = "...") -> None:
    from wheelspec.conformance.cli.output import console

    # no emoji, and plain unwrapped lines on a pipe (a CI log is grepped, not read at 80 columns)
    con = console(file=file or sys.stdout)
    late = percentiles(rep.lateness_us)
    con.print(f"[bold]{rep.name}[/] ({rep.version}), profile {rep.profile}, resolution {rep.resolution_ms} ms: "
              f"{len(rep.verdicts)} runs, {sum(v.fires for v in rep.verdicts)} fires")
    if late.get("n"):
        con.print(f"  lateness ms: p50 {late['p50']:.3f}  p99 {late['p99']:.3f}  max {late['max']:.3f}  "
                  f"(min {late['min']:.3f}, n={late['n']})")
    con.print("  " + "  ".join(f"{p}: {s}" for p, s in rep.prop_status().items()))
    for v in rep.verdicts:
        for f in v.failures[:5]:
            con.print(f"  [red]FAIL[/] {v.schedule.name} {show.finding(f)}")
    for c in rep.counterexamples:
        replay = f"wheelspec realtime --impl {shlex.quote(impl)} --schedule {shlex.quote(str(c))}"
        con.print(f"  saved {c} (replay: {replay})", soft_wrap=True)
    con.print("[green]PASS[/]" if rep.ok else "[red]FAIL[/]")
