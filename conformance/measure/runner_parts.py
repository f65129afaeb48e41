"""The runner's own parts of a checked timer operation, each timed alone in one process: what the
runner spends per operation generating, on the wire (writing the requests, reading and decoding
the answers, recording the history), on the compiled oracle, and judging.

``runner_speed --breakdown`` times the same parts inside real runs, where the adapter's process
shares the two cores and the pipe's wake-ups add their noise; this script takes the adapter away
(the answers are the reference's, written as a served adapter writes them, and read back from
memory) so that two trees can be compared part by part.  Each part is timed ``--reps`` times over
the same schedules; the table gives the fastest repetition (the least disturbed), in microseconds
of CPU per operation.

    python -m wheelspec.conformance.measure.runner_parts --schedules 1500
    PYTHONPATH=/path/to/site-of-another-tree python conformance/measure/runner_parts.py --schedules 1500

The oracle is the compiled one, its kernels loaded before the timing (their load, about 0.8 s of
CPU per process, is ``benchmarks/oracle_load.py``'s to measure); its cache of earlier runs is
emptied before each schedule, as for a schedule judged once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any


def _decoder() -> Callable[..., Any]:
    try:  # this tree
        from wheelspec.conformance.adapters.answers import decode_response
    except ImportError:  # a tree from before the answers module (e4688ed)
        from wheelspec.conformance.adapters.protocol import decode_response  # type: ignore[attr-defined,no-redef]
    return decode_response


def measure(schedules: int, reps: int) -> dict[str, float]:
    """CPU microseconds per operation of each part (fastest of ``reps``)."""
    import wheelspec
    from wheelspec.conformance.adapters import reference_adapter
    from wheelspec.conformance.adapters.lines import encode_line, parse_line
    from wheelspec.conformance.check import compiled_oracle, judge, oracle
    from wheelspec.conformance.check.coverage import Probe
    from wheelspec.conformance.check.generate import generate
    from wheelspec.conformance.check.runner import run_ops

    decode = _decoder()
    adapter = reference_adapter()
    caps = adapter.hello().capabilities
    cases = [generate("timer", seed) for seed in range(schedules)]
    runs = [run_ops(adapter, cfg, schedule) for cfg, schedule in cases]
    # what a served reference writes for each answer (serve.py: encode_line of to_wire)
    answers = [[encode_line(s.response.to_wire(i + 2))[:-1] for i, s in enumerate(run.steps)] for run in runs]
    n_ops = sum(len(schedule) for _, schedule in cases)

    def generating() -> None:
        for seed in range(schedules):
            generate("timer", seed)

    class Recorded:
        """An adapter whose answers are lines read back from memory: the runner's side of the
        wire alone (the lines decoded, as a subprocess adapter decodes them, then recorded)."""

        trusted_answers = True  # decoded here already, as SubprocessAdapter's are

        def __init__(self) -> None:
            self.lines: Any = iter(())

        def reset(self, config: Any) -> None:
            pass

        def request(self, op: Any) -> Any:
            return decode(parse_line(next(self.lines)), op, caps)

    recorded = Recorded()

    def wire() -> None:
        for (cfg, schedule), lines in zip(cases, answers):
            for i, op in enumerate(schedule):
                encode_line({"id": i + 2, "type": "op", "op": op.to_dict()})
            recorded.lines = iter(lines)
            run_ops(recorded, cfg, schedule)

    computed: list[tuple[Any, Any]] = []

    def oracles() -> None:
        computed.clear()
        for cfg, schedule in cases:
            oracle._ORACLES = oracle._OracleRuns()  # every run computed, none reused
            probe = Probe()
            computed.append((oracle.oracle_run(caps, cfg, schedule, probe), probe))

    def judging() -> None:
        for run, (ran, probe) in zip(runs, computed):
            judge.judge_run(adapter, caps, run, coverage=True, oracle=ran, probe=probe)

    compiled_oracle.use("compiled")
    compiled_oracle.expect("timer", 10**6)  # loaded now, not inside the timing
    oracle.oracle_run(caps, *cases[0])
    parts = {"generate": generating, "wire": wire, "oracle": oracles, "judge": judging}
    best = dict.fromkeys(parts, float("inf"))
    for _ in range(reps):
        for name, part in parts.items():
            t0 = time.process_time()
            part()
            best[name] = min(best[name], time.process_time() - t0)
    out = {name: s / n_ops * 1e6 for name, s in best.items()}
    out["ops"] = n_ops
    out["tree"] = os.path.dirname(os.path.dirname(wheelspec.__file__))  # type: ignore[assignment]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schedules", type=int, default=1500, help="timer schedules (default 1500)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each part (default 5)")
    args = ap.parse_args(argv)
    r = measure(args.schedules, args.reps)
    print(f"runner parts, CPU per operation (fastest of {args.reps}), {r['ops']} operations of "
          f"{args.schedules} timer schedules; tree {r['tree']}; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("| generate | wire | oracle | judge | sum |")
    print("|---|---|---|---|---|")
    parts = [r[k] for k in ("generate", "wire", "oracle", "judge")]
    print("| " + " | ".join(f"{v:.2f}" for v in [*parts, sum(parts)]) + " |")
    print("(microseconds of CPU per operation; the wire is the runner's side of it: requests written, "
          "answers parsed, decoded and recorded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
