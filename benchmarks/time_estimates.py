"""How long the documented long commands take on this machine: the source of every time that the
help texts and docs quote (``grep -rn minute README.md docs conformance``).

It runs, each from an empty temporary directory, as a user would::

    wheelspec check            the main job (README, "Check a timer or purgatory implementation")
    wheelspec matrix           the matrix of every built-in row (README, ./wheelspec-matrix/)
    wheelspec bench --quick    the short benchmark (conformance/cli/bench.py, QUICK_*)

and prints each wall time with the machine it ran on (CPU, cores, load average before and after:
a loaded machine's figures are upper bounds)::

    python -m wheelspec.benchmarks.time_estimates                 # all three (a few minutes)
    python -m wheelspec.benchmarks.time_estimates --only check,matrix

A command's exit code is printed beside its time: ``check`` and ``matrix`` exit 0 on this tree,
``bench`` 0 unless a cell failed.  Nothing here is a test: it measures, it does not judge.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from .measure import machine_facts

#: name -> the command line after ``wheelspec``, as README and the help texts document it
COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "matrix": ["matrix"],
    "bench": ["bench", "--quick"],
}


def timed(args: list[str]) -> tuple[float, int]:
    """Wall seconds and exit code of ``wheelspec ARGS`` run from a fresh temporary directory (its
    output files go there and are removed); the output is discarded, the error stream kept on failure."""
    with tempfile.TemporaryDirectory(prefix="wheelspec-times-") as cwd:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "wheelspec", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})
        seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        print(f"  wheelspec {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}", file=sys.stderr)
    return seconds, proc.returncode


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wheelspec.benchmarks.time_estimates", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default=",".join(COMMANDS), metavar="NAME,NAME",
                   help=f"which commands to time (default all: {', '.join(COMMANDS)})")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    bad = [n for n in names if n not in COMMANDS]
    if bad or not names:
        p.error(f"--only: unknown {', '.join(bad) or 'empty list'}; choose from {', '.join(COMMANDS)}")
    facts = machine_facts()
    cpu = next((line.split(":", 1)[1].strip() for line in facts["lscpu_head"] if line.startswith("Model name")),
               "unknown CPU")
    print(f"machine: {cpu}, {facts['nproc']} cores, {facts['platform']}, Python {facts['python']}")
    print(f"date: {facts['date_utc']}; tree: {facts['git']}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = []
    for name in names:
        seconds, code = timed(COMMANDS[name])
        results.append((name, seconds, code))
        print(f"  wheelspec {' '.join(COMMANDS[name]):<18} {_minutes(seconds):>20}   exit {code}", flush=True)
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if all(code in (0, 1) for _, _, code in results) else 1


if __name__ == "__main__":
    sys.exit(main())
