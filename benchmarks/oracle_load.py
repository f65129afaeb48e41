"""What the compiled oracle costs and saves: the source of ``compiled_oracle.PAYS_AFTER_OPS`` and
of the figures in ``docs/guides/CAMPAIGN.md`` ("The oracle").

In one fresh process per measurement (so that the load is a first load, as a user's run pays
it), on the timer campaign's schedules (seeds 0..N-1, each watched by the coverage probe, as
``wheelspec check`` judges them):

* **load**: CPU seconds of numba's import and of the compiled oracle's first run (the kernels
  loaded from numba's cache; a cold cache compiles them instead and is reported apart);
* **per request**: CPU microseconds per oracle request of the compiled oracle (loaded) and of
  the reference, side by side, and the requests after which the load pays::

    python -m wheelspec.benchmarks.oracle_load                  # 3000 schedules, 3 repetitions
    python -m wheelspec.benchmarks.oracle_load --schedules 500 --reps 1

Nothing here is a test: it measures, it does not judge.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from .measure import machine_facts

_CHILD = r"""
import json, sys, time
clock = time.process_time
engine, n = sys.argv[1], int(sys.argv[2])
from wheelspec.conformance.adapters import reference_adapter
from wheelspec.conformance.check import oracle
from wheelspec.conformance.check.coverage import Probe
from wheelspec.conformance.check.generate import generate
from wheelspec.spec import ops
caps = reference_adapter().hello().capabilities
schedules = [generate("timer", s) for s in range(n)]
out = {"requests": sum(len(s) for _, s in schedules)}
if engine == "compiled":
    from wheelspec.conformance.check import compiled_oracle
    t0 = clock()
    import numba  # noqa: F401
    t1 = clock()
    compiled_oracle.compiled_run(schedules[0][0], [ops.AddTask(1, 3)], None, caps.protocol)
    out["import"], out["load"] = t1 - t0, clock() - t1
start = clock()
for cfg, schedule in schedules:
    oracle._ORACLES = oracle._OracleRuns()  # every run computed, none reused
    oracle.oracle_run(caps, cfg, schedule, Probe(), engine=engine)
out["run"] = clock() - start
print(json.dumps(out))
"""


def measure(engine: str, schedules: int) -> dict[str, float]:
    """One fresh process: the oracle ``engine`` over ``schedules`` timer schedules."""
    done = subprocess.run([sys.executable, "-c", _CHILD, engine, str(schedules)], capture_output=True, text=True,
                          check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schedules", type=int, default=3000, help="timer schedules (seeds 0..N-1; default 3000)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions, interleaved (default 3); medians")
    args = ap.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"compiled": [], "reference": []}
    for _ in range(args.reps):
        for engine in runs:
            runs[engine].append(measure(engine, args.schedules))
    requests = runs["compiled"][0]["requests"]
    per = {e: statistics.median(r["run"] for r in rs) / requests * 1e6 for e, rs in runs.items()}
    imp = statistics.median(r["import"] for r in runs["compiled"])
    load = statistics.median(r["load"] for r in runs["compiled"])
    saving = per["reference"] - per["compiled"]
    facts = machine_facts()
    model = next((line.split(":", 1)[1].strip() for line in facts["lscpu_head"] if line.startswith("Model name")), "?")
    print(f"oracle cost: {args.schedules} timer schedules ({requests} requests), medians of {args.reps}; "
          f"{model}, {facts['nproc']} cores, python {facts['python']}, numba {facts['numba']}, "
          f"{facts['uptime_before'].split(',  ')[-1]}")
    print("| oracle | CPU us per request |\n|---|---|")
    for engine, us in per.items():
        print(f"| {engine} | {us:.1f} |")
    print(f"load: numba's import {imp:.2f} s + the kernels {load:.2f} s of CPU; the compiled oracle saves "
          f"{saving:.1f} us per request, so the load pays after {(imp + load) / saving * 1e6:,.0f} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
