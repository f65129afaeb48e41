"""``wheelspec bench``: reference, optimized (per-op and batch), ``heapq`` and ``sched`` side by side.

This module only defines the command line; the work lives in :mod:`wheelspec.benchmarks`
(workloads, baselines, drivers, measurement, report), imported inside :func:`run_bench` so that
every other ``wheelspec`` command stays fast to start.

Exit codes: 0 all cells measured or honestly skipped; 1 a run did not verify (an implementation
fired the wrong tasks, left tasks pending, completed a request twice...); 2 bad arguments.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from wheelspec.conformance.cli.args import (
    NO_MORE_DETAIL,
    QUIET_HELP,
    add_verbosity,
    add_write,
    comma_list,
    count,
    describe,
    non_negative,
    positive_number,
    seconds,
    seed,
    writable_file,
)
from wheelspec.spec.errors import UserError

if TYPE_CHECKING:
    from wheelspec.benchmarks.suite import Options

#: Native peers (benchmarks/native/): built on first use with Java / cargo, each cell run in a subprocess.
NATIVE_IMPLS = ("netty", "jdk-stpe", "jdk-delayqueue", "tokio-delayqueue")
IMPLS = ("reference", "optimized", "optimized-op", "optimized-batch", "heapq", "sched", "app-timer") + NATIVE_IMPLS
WORKLOAD_NAMES = ("insert", "cancel", "fire-steps", "fire-jump", "steady", "purgatory")
FULL_SIZES = "1e3,1e4,1e5,1e6,1e7"
#: --quick: small sizes, the in-process implementations (the native peers build with Java and cargo on
#: first use and start a process per cell), no JIT probe: about 2 minutes on 2 loaded cores
#: (benchmarks/time_estimates.py measures it)
QUICK_SIZES = "1e3,1e4"
QUICK_IMPLS = tuple(i for i in IMPLS if i not in NATIVE_IMPLS)


def _names(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    out = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in out if x not in allowed]
    if bad or not out:
        raise UserError(f"{what}: unknown {', '.join(bad) or 'empty list'}; choose from {', '.join(allowed)}")
    return list(dict.fromkeys(out))


def configure_bench(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", type=comma_list(), default=None, metavar="N,N,...",
                        help=f"sizes N to run (default {FULL_SIZES}; with --quick {QUICK_SIZES})")
    parser.add_argument("--quick", action="store_true",
                        help=f"sizes {QUICK_SIZES}, the in-process implementations ({', '.join(QUICK_IMPLS)}; "
                             "--impl chooses others), at most 2 runs per cell, tracemalloc up to 1e4, no JIT probe: "
                             "a short check (about 2 minutes)")
    parser.add_argument("--workloads", type=comma_list(), default=",".join(WORKLOAD_NAMES), metavar="W,W,...",
                        help=f"workloads (default all: {', '.join(WORKLOAD_NAMES)})")
    parser.add_argument("--impl", action="append", choices=IMPLS, metavar="IMPL",
                        help=f"implementation to measure (repeatable; default all: {', '.join(IMPLS)})")
    parser.add_argument("--cap", action="append", default=[], metavar="IMPL=N",
                        help="largest N for an implementation (default 1e6 for reference, optimized, "
                             "optimized-op and sched; IMPL=none lifts a cap); repeatable")
    parser.add_argument("--budget", type=seconds, default=180.0, metavar="SECONDS",
                        help="skip a cell if one run of it, preparation included, is predicted from the previous size "
                             "to take longer than this (default 180)")
    parser.add_argument("--repeat", type=count, default=3, metavar="N", help="runs per cell, best reported (default 3)")
    parser.add_argument("--curve-rounds", type=non_negative, default=8, metavar="N",
                        help="after the steady workload's sweep, N more rounds of one run per cell, round-robin "
                             "over sizes, so that a slow spell of the machine cannot take all runs of one size "
                             "(cells whose run takes over 5 s are left out; default 8, 0: none)")
    parser.add_argument("--mem-max", default="1e5", metavar="N",
                        help="largest N at which Python structures are traced with tracemalloc (default 1e5)")
    parser.add_argument("--seed", type=seed, default=0, metavar="SEED", help="workload seed (default 0)")
    parser.add_argument("--tick", type=count, default=1, metavar="MS",
                        help="tick in ms for the wheels (default 1, Kafka's)")
    parser.add_argument("--wheel-size", type=count, default=20, metavar="N",
                        help="buckets per wheel (default 20, Kafka's)")
    g = parser.add_argument_group("purgatory workload (Kafka's TestPurgatoryPerformance)")
    g.add_argument("--rate", type=positive_number, default=10_000.0, metavar="N",
                   help="requests per second (default 10000)")
    g.add_argument("--pct50", type=positive_number, default=10.0, metavar="MS",
                   help="median completion latency, ms (default 10)")
    g.add_argument("--pct75", type=positive_number, default=50.0, metavar="MS",
                   help="75th percentile completion latency, ms (default 50)")
    g.add_argument("--request-timeout-ms", type=count, default=30_000, metavar="MS",
                   help="a request's timeout inside the model, in ms (default 30000)")
    g.add_argument("--keys", type=count, default=3, metavar="N", help="watch keys per request (default 3)")
    g.add_argument("--key-space", type=count, default=100, metavar="N",
                   help="how many distinct watch keys exist (default 100)")
    g.add_argument("--purge-interval", type=count, default=1000, metavar="N",
                   help="operations between purges of completed requests (default 1000)")
    g.add_argument("--keys-per-run", action="store_true",
                   help="draw the keys once for the whole run, as Kafka's tool does (default: per request)")
    parser.add_argument("--no-jit", action="store_true", help="skip the cold/warm JIT compile-time probe")
    parser.add_argument("--build-dir", metavar="DIR", default=None,
                        help="where the native peers' drivers are built on first use "
                             "(default $XDG_CACHE_HOME/wheelspec/native, i.e. ~/.cache/wheelspec/native)")
    parser.add_argument("--json", type=writable_file, metavar="FILE",
                        help="also write every figure as JSON (- for stdout; the tables then go to stderr)")
    add_write(parser, {"markdown": ("markdown", writable_file, "the tables as Markdown"),
                       "plot": ("plot", writable_file, "ns/op against N as a PNG (needs the 'reports' extra: "
                                                       "matplotlib)")})
    add_verbosity(parser, NO_MORE_DETAIL, QUIET_HELP)
    describe(parser, [
        ("wheelspec bench --quick", "sizes 1e3-1e4, every workload, the in-process implementations: about 2 minutes"),
        ("wheelspec bench --impl optimized --impl heapq --workloads steady --sizes 1e5,1e6 --json bench.json",
         "two implementations on one workload; every figure as JSON"),
        ("wheelspec bench --workloads purgatory --rate 20000 --request-timeout-ms 5000 --write markdown=bench.md",
         "Kafka's TestPurgatoryPerformance workload, requests timing out after 5 s"),
    ], ["0    every cell measured or honestly skipped",
        "1    a run did not verify (wrong tasks fired, tasks left pending, a request completed twice...)"])


def _caps(specs: list[str]) -> dict[str, int]:
    from wheelspec.benchmarks.suite import default_caps
    from wheelspec.benchmarks.workloads import parse_size

    caps = default_caps()
    for spec in specs:
        impl, sep, value = spec.partition("=")
        impl = impl.strip()
        if not sep or impl not in IMPLS:
            raise UserError(f"--cap {spec!r}: expected IMPL=N with IMPL one of {', '.join(IMPLS)}")
        if value.strip().lower() == "none":
            caps.pop(impl, None)
        else:
            caps[impl] = parse_size(value, f"--cap {impl}")
    return caps



def options_from_args(args: argparse.Namespace) -> Options:
    """Validate the command line into :class:`wheelspec.benchmarks.suite.Options` (UserError on
    anything wrong, before any benchmark runs)."""
    from wheelspec.benchmarks.drivers import TimerConfig
    from wheelspec.benchmarks.suite import Options
    from wheelspec.benchmarks.workloads import PurgatoryParams, parse_size
    from wheelspec.spec.limits import RangeError, check_tick, check_wheel_size

    sizes_text = args.sizes if args.sizes is not None else (QUICK_SIZES if args.quick else FULL_SIZES)
    sizes = sorted({parse_size(s, "--sizes") for s in sizes_text.split(",") if s.strip()})
    if not sizes:
        raise UserError("--sizes: no sizes given")
    if args.repeat < 1 or args.repeat > 100:
        raise UserError(f"--repeat {args.repeat}: must be in [1, 100]")
    if args.curve_rounds < 0 or args.curve_rounds > 100:
        raise UserError(f"--curve-rounds {args.curve_rounds}: must be in [0, 100]")
    if not (args.budget > 0 and math.isfinite(args.budget)):
        raise UserError(f"--budget {args.budget}: must be a positive number of seconds")
    try:
        timer = TimerConfig(check_tick(args.tick), check_wheel_size(args.wheel_size))
    except (RangeError, TypeError) as e:
        raise UserError(f"--tick/--wheel-size: {e}") from None
    try:
        purg = PurgatoryParams(rate=args.rate, pct50=args.pct50, pct75=args.pct75, timeout=args.request_timeout_ms,
                               keys=args.keys, key_space=args.key_space,
                               purge_interval=args.purge_interval, keys_per_run=args.keys_per_run)
    except ValueError as e:
        raise UserError(str(e)) from None
    mem_max = parse_size(args.mem_max, "--mem-max")
    return Options(
        sizes=sizes,
        workloads=_names(args.workloads, WORKLOAD_NAMES, "--workloads"),
        impls=_names(",".join(args.impl or (QUICK_IMPLS if args.quick else IMPLS)), IMPLS, "--impl"),
        caps=_caps(args.cap),
        repeat=min(args.repeat, 2) if args.quick else args.repeat,
        budget_s=args.budget,
        mem_max=min(mem_max, 10_000) if args.quick else mem_max,
        seed=args.seed,
        timer=timer,
        purgatory=purg,
        jit=not (args.no_jit or args.quick),
        curve_rounds=0 if args.quick else args.curve_rounds,
        native_build_dir=args.build_dir,
    )


def run_bench(args: argparse.Namespace) -> int:
    opts = options_from_args(args)
    plt: Any = None  # matplotlib.pyplot when --write plot=PATH is given
    if args.plot:
        from wheelspec.conformance.optional import require

        require("matplotlib", "reports", "--write plot=PATH").use("Agg")
        import matplotlib.pyplot as plt
    for path in (args.json, args.markdown, args.plot):
        if path and path != "-":  # "-" is stdout (--json -), not a file named "-"
            try:
                with open(path, "a"):
                    pass
            except OSError as e:
                raise UserError(f"cannot write {path}: {e.strerror}") from None

    from wheelspec.benchmarks import report, suite
    from wheelspec.conformance.cli.output import console, human_to_stderr

    err = console(stderr=True)
    argv = ["wheelspec", "bench"] + sys.argv[2:] if sys.argv[1:2] == ["bench"] else ["wheelspec bench (library call)"]
    res = suite.run(opts, argv, progress=lambda s: err.print(f"[dim]{s}[/dim]"))
    report.print_rich(res, err if human_to_stderr(args.json) else console())
    bad = report.failed(res.cells)
    if args.json:
        report.write_json(res, args.json, 1 if bad else 0)
    if args.markdown:
        report.write_markdown(res, args.markdown)
    if args.plot:
        report.write_plot(res, args.plot, plt)
    for c in bad:
        print(f"wheelspec bench: {c.workload} n={c.n} {c.impl}: {c.note}", file=sys.stderr)
    return 1 if bad else 0
