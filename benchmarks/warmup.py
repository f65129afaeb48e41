"""How long workload (e)'s warm-up must be: the timed window's cost against the number of untimed
warm-up windows before it.

Workload (e) ``steady`` times one window (5000 adds, 5000 cancels) at occupancy ``n`` and is
meant to show an operation's cost in a steady state.  What runs before the window is a bulk insert
of ``n`` tasks and a ``gc.collect()``, which leave the caches holding little of what the window
touches.  This script times the same window after 0, 1, 2, ... warm-up windows of the same shape,
so the warm-up length that ``workloads.STEADY_WARM_WINDOWS`` fixes can be seen to be where the
figure stops falling, for every implementation alike.  It prints one table::

    python -m wheelspec.benchmarks.warmup --sizes 1e3,1e7 --windows 0,1,2,4,8,16,32 \\
        --impls optimized-batch,heapq --repeat 3

Each cell is the best of ``repeat`` runs, each on a freshly built structure (the harness of
``wheelspec bench``: :func:`measure.time_run`), in ns per operation (adds and cancels counted).
"""

from __future__ import annotations

import argparse
import functools
import sys

from rich.console import Console
from rich.table import Table

from wheelspec.spec.errors import UserError

from .drivers import TimerConfig, Unavailable
from .measure import time_run
from .registry import DRIVERS
from .workloads import STEADY_WARM_WINDOWS, STEADY_WINDOW, parse_size, timer_workload


def _sizes(text: str) -> list[int]:
    """Sizes as ``wheelspec bench --sizes`` reads them (1000, 1e6, 10^7)."""
    try:
        out = [parse_size(x, "--sizes") for x in text.split(",") if x.strip()]
    except UserError as e:
        raise SystemExit(f"warmup: {e}") from None
    if not out:
        raise SystemExit("warmup: --sizes: no sizes given")
    return out


def _windows(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"warmup: --windows {text!r}: expected comma-separated whole numbers") from None
    if not out or min(out) < 0:
        raise SystemExit(f"warmup: --windows {text!r}: expected one or more numbers >= 0")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wheelspec.benchmarks.warmup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e3,1e5,1e7", help="occupancies n (default 1e3,1e5,1e7)")
    ap.add_argument("--windows", default="0,1,2,4,8,16,32", help="warm-up lengths in windows")
    ap.add_argument("--impls", default="optimized-batch,heapq", help=f"implementations, of {', '.join(DRIVERS)}")
    ap.add_argument("--repeat", type=int, default=3, help="runs per cell, best reported (default 3)")
    opts = ap.parse_args(argv)
    sizes = _sizes(opts.sizes)
    windows = _windows(opts.windows)
    impls = [x.strip() for x in opts.impls.split(",") if x.strip()]
    unknown = [x for x in impls if x not in DRIVERS]
    if unknown:
        print(f"warmup: --impls: unknown implementation {unknown[0]!r}; expected one of {', '.join(DRIVERS)}",
              file=sys.stderr)
        return 2
    console = Console()
    cfg = TimerConfig()
    table = Table(title=f"workload (e): ns per operation of the timed window after k warm-up windows "
                        f"of {STEADY_WINDOW} adds + {STEADY_WINDOW} cancels (bench uses k = {STEADY_WARM_WINDOWS})")
    table.add_column("impl", no_wrap=True)
    table.add_column("n", justify="right")
    for k in windows:
        table.add_column(f"k={k}", justify="right")
    for name in impls:
        driver = DRIVERS[name]()
        why = driver.available()
        if why is not None:
            console.print(f"[yellow]{name}: not run: {why}[/yellow]")
            continue
        for n in sizes:
            row = [name, f"{n:.0e}"]
            for k in windows:
                wl = timer_workload("steady", n, warm_windows=k)
                try:
                    times = time_run(functools.partial(driver.prepare, wl, cfg), opts.repeat, budget_s=60.0)
                except Unavailable as exc:
                    row.append(f"({exc})")
                    continue
                row.append(f"{min(times) * 1e9 / wl.ops:.1f}")
                console.print(f"  {name} n={n:.0e} k={k}: {row[-1]} ns/op", highlight=False)
            table.add_row(*row)
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
