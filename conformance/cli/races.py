"""``wheelspec races``: hunt the known purgatory and timer races in the deterministic simulation.

For each mutant of :mod:`wheelspec.reference.mutants` (or the one named), Hypothesis searches
schedules of the mutant's scenario; the command prints how many examples it took to find a
violation, the shrunk schedule, and the interleaving as a per-thread timeline, then checks that
the correct model passes the same schedule and ``--clean`` random ones.  Exit 0 if every mutant
was found and the correct model passed; 1 otherwise.
"""

from __future__ import annotations

from typing import Any

from wheelspec.conformance.cli.args import (
    NO_MORE_DETAIL,
    add_verbosity,
    count,
    describe,
    non_negative,
    seed,
    writable_file,
)


def configure_races(parser: Any) -> None:
    parser.add_argument("--mutant", action="append", metavar="NAME", help="hunt only this mutant (repeatable)")
    parser.add_argument("--examples", type=count, default=1000, metavar="N",
                        help="Hypothesis examples per mutant (default 1000)")
    parser.add_argument("--seed", type=seed, default=0, metavar="SEED", help="seed of the search (default 0)")
    parser.add_argument("--clean", type=non_negative, default=200, metavar="N",
                        help="random schedules the correct model must pass per scenario (default 200)")
    add_verbosity(parser, NO_MORE_DETAIL, "no timelines, one line per mutant")
    parser.set_defaults(_own_quiet=True)   # -q is the command's own, not main()'s silenced stdout
    parser.add_argument("--json", type=writable_file, metavar="FILE",
                        help="write one record per mutant as JSON (- for stdout; the text then goes to stderr)")
    describe(parser, [
        ("wheelspec races", "hunt every known race; print each one's interleaving"),
        ("wheelspec races --mutant no-second-try --examples 200 --quiet --json -",
         "one mutant (a wrong name lists the known ones), one line; the record as JSON on stdout"),
    ], ["0    every mutant's race was found and the correct model passed",
        "1    a race was not found, or the correct model failed a schedule"])


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
    import sys

    from wheelspec.conformance.cli.output import human_to_stderr, write_json
    from wheelspec.envelope import envelope

    text = sys.stderr if human_to_stderr(args.json) else sys.stdout
    failures = 0
    rows = []
    records: list[dict[str, Any]] = []
    for name in names:
        m = MUTANTS[name]
        scenario = scenario_for(name)
        found = hunt(scenario, [name], max_examples=args.examples, seed=args.seed)
        if found is None:
            failures += 1
            rows.append(f"{name:<26} NOT FOUND in {args.examples} examples")
            records.append({"mutant": name, "found": False, "examples": args.examples})
            continue
        clean_ok = run_scenario(scenario, segment_chooser(found.schedule)).ok
        rng = random.Random(args.seed)
        for _ in range(args.clean):
            choices = [rng.randrange(4) for _ in range(rng.randrange(10, 150))]
            out = run_scenario(scenario, list_chooser(choices))
            if not out.ok:
                clean_ok = False
                print(out.report(), file=text)
                break
        failures += not clean_ok
        rows.append(f"{name:<26} found after {found.examples:>4} examples; shrunk to {found.schedule} "
                    f"({len(found.outcome.run.steps)} steps); correct model {'passes' if clean_ok else 'FAILS'}")
        records.append({"mutant": name, "found": True, "examples": found.examples, "schedule": str(found.schedule),
                        "steps": len(found.outcome.run.steps), "correct_model_passes": clean_ok})
        if not args.quiet:
            print(f"=== {name}: {m.change}\n    ({m.kafka})", file=text)
            print(found.outcome.report(), file=text)
            print(file=text)
    print("\n".join(rows), file=text)
    if args.json:
        write_json(args.json, envelope("races", {"seed": args.seed, "mutants": records},
                                       exit_code=1 if failures else 0))
    return 1 if failures else 0
