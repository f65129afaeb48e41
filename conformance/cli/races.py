"""``wheelspec races``: hunt the known purgatory and timer races in the deterministic simulation.

For each mutant of :mod:`wheelspec.reference.mutants` (or the one named), Hypothesis searches
schedules of the mutant's scenario; the command prints how many examples it took to find a
violation, the shrunk schedule, and the interleaving as a per-thread timeline, then checks that
the correct model passes the same schedule and ``--clean`` random ones.  Exit 0 if every mutant
was found and the correct model passed; 1 otherwise.
"""

from __future__ import annotations

from typing import Any

from wheelspec.conformance.cli.args import count, non_negative, seed


def configure_races(parser: Any) -> None:
    parser.add_argument("--mutant", action="append", help="hunt only this mutant (repeatable)")
    parser.add_argument("--examples", type=count, default=1000, help="Hypothesis examples per mutant (default 1000)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the search (default 0)")
    parser.add_argument("--clean", type=non_negative, default=200,
                        help="random schedules the correct model must pass per scenario (default 200)")
    parser.add_argument("--quiet", action="store_true", help="no timelines, one line per mutant")


def run_races(args: Any) -> int:
    import random

    from wheelspec.reference.interleave import hunt, run_scenario
    from wheelspec.reference.mutants import MUTANTS, scenario_for
    from wheelspec.reference.scheduler import list_chooser, segment_chooser
    from wheelspec.spec.errors import UserError

    names = args.mutant or list(MUTANTS)
    for n in names:
        if n not in MUTANTS:
            raise UserError(f"--mutant {n!r} is not a known mutant (known: {', '.join(MUTANTS)})")
    if args.examples < 1:
        raise UserError(f"--examples must be at least 1, got {args.examples}")
    failures = 0
    rows = []
    for name in names:
        m = MUTANTS[name]
        scenario = scenario_for(name)
        found = hunt(scenario, [name], max_examples=args.examples, seed=args.seed)
        if found is None:
            failures += 1
            rows.append(f"{name:<26} NOT FOUND in {args.examples} examples")
            continue
        clean_ok = run_scenario(scenario, segment_chooser(found.schedule)).ok
        rng = random.Random(args.seed)
        for _ in range(args.clean):
            choices = [rng.randrange(4) for _ in range(rng.randrange(10, 150))]
            out = run_scenario(scenario, list_chooser(choices))
            if not out.ok:
                clean_ok = False
                print(out.report())
                break
        failures += not clean_ok
        rows.append(f"{name:<26} found after {found.examples:>4} examples; shrunk to {found.schedule} "
                    f"({len(found.outcome.run.steps)} steps); correct model {'passes' if clean_ok else 'FAILS'}")
        if not args.quiet:
            print(f"=== {name}: {m.change}\n    ({m.kafka})")
            print(found.outcome.report())
            print()
    print("\n".join(rows))
    return 1 if failures else 0
