"""``wheelspec linearize``: check a recorded concurrent history (or one recorded now from an
implementation) for linearizability (:mod:`wheelspec.conformance.concurrency.linearizability`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wheelspec.conformance.cli.args import Once, add_write, count, describe, seconds, seed, writable_file

#: default wall-clock limit of the search, in seconds
DEFAULT_TIME_LIMIT = 60.0
#: default bound of the search's memo per segment (about 250 bytes a state: 250 MB)
DEFAULT_MAX_STATES = 1_000_000


def configure_linearize(parser: Any) -> None:
    parser.add_argument("history", nargs="?", help="a recorded concurrent history, JSON lines (see "
                        "wheelspec.conformance.concurrency.history_file for the format)")
    parser.add_argument("--impl", action=Once, metavar="IMPL",
                        help="instead of a file: run client threads and a reaper against this implementation "
                             "(as for `wheelspec check --impl`) and check what they saw")
    parser.add_argument("--threads", type=count, default=4, metavar="N", help="client threads with --impl (default 4)")
    parser.add_argument("--ops", type=count, default=2500, metavar="N",
                        help="calls per client thread with --impl (default 2500)")
    parser.add_argument("--key-space", type=count, default=100, metavar="N",
                        help="how many distinct watch keys exist, with --impl (default 100)")
    parser.add_argument("--seed", type=seed, default=0, metavar="SEED", help="workload seed with --impl (default 0)")
    add_write(parser, {"history": ("save", writable_file, "with --impl: the recorded history, JSON lines")})
    parser.add_argument("--max-states", type=count, default=DEFAULT_MAX_STATES, metavar="N",
                        help="states the search may keep for one segment of the history: its memory, about "
                             f"250 bytes each (default {DEFAULT_MAX_STATES:.0e})")
    parser.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                        help=f"wall-clock limit of the search (default {DEFAULT_TIME_LIMIT:g}).  Past either budget "
                             "the verdict is 'undecided: budget exhausted', exit 2: neither a pass nor a violation")
    parser.add_argument("--json", type=writable_file, metavar="FILE",
                        help="write the verdict as JSON (- for stdout; the text then goes to stderr)")
    describe(parser, [
        ("wheelspec linearize history.jsonl", "check a recorded concurrent history"),
        ("wheelspec linearize --impl optimized --threads 8 --ops 1000 --write history=history.jsonl",
         "record one now from 8 client threads and a reaper, keep it, and check it"),
        ("wheelspec linearize history.jsonl --time-limit 600 --json -",
         "a longer search; the verdict as JSON on stdout"),
    ], ["0    linearizable", "1    not linearizable (the smallest offending windows are printed)",
        "2    also: undecided, the search ran out of --time-limit or --max-states"])


def run_linearize(args: Any) -> int:
    from wheelspec.conformance.concurrency.history_file import dumps, load
    from wheelspec.conformance.concurrency.linearizability import BudgetExhausted, check
    from wheelspec.conformance.concurrency.models import WHEELSPEC
    from wheelspec.spec.errors import UserError

    if (args.history is None) == (args.impl is None):
        raise UserError("give either a history file or --impl IMPL (not both, not neither)")
    if args.impl is not None:
        history, where = _record_impl(args), f"--impl {args.impl}"
        if args.save:
            Path(args.save).write_text(dumps(history))
    else:
        path = Path(args.history)
        if not path.is_file():
            raise UserError(f"history file {path} does not exist")
        history, where = load(path), str(path)
    import sys

    from wheelspec.conformance.cli.output import human_to_stderr, write_json
    from wheelspec.envelope import envelope

    text = sys.stderr if human_to_stderr(args.json) else sys.stdout
    try:
        result = check(WHEELSPEC, history, max_states=args.max_states, time_limit=args.time_limit)
    except BudgetExhausted as e:
        print(f"undecided: budget exhausted: {where}: {e} (raise --time-limit or --max-states)", file=text)
        if args.json:
            write_json(args.json, envelope("linearize", {"history": where, "verdict": "undecided", "reason": str(e)},
                                           exit_code=2))
        return 2
    print(result.summary(), file=text)
    for w in result.windows:
        print(w.render(WHEELSPEC), file=text)
    if args.json:
        write_json(args.json, envelope("linearize", {
            "history": where, "verdict": "linearizable" if result.ok else "not linearizable",
            "operations": result.operations, "partitions": result.partitions, "explored": result.explored,
            "seconds": round(result.seconds, 3),
            "windows": [{"partition": w.partition, "render": w.render(WHEELSPEC)} for w in result.windows]},
            exit_code=0 if result.ok else 1))
    return 0 if result.ok else 1


def _record_impl(args: Any) -> list[Any]:
    """Several client threads and a reaper against one implementation; its answers recorded.
    A subprocess speaks one request at a time, so the clients take turns on its connection."""
    from wheelspec.conformance.adapters import resolve
    from wheelspec.conformance.adapters.protocol import Config
    from wheelspec.conformance.concurrency.hammer import Recorder, hammer
    from wheelspec.spec.errors import UserError

    adapter = resolve(args.impl)()
    try:
        caps = adapter.hello().capabilities
        if caps.time != "virtual":
            raise UserError(f"--impl {args.impl}: needs a virtual-time implementation (it reports {caps.time!r})")
        adapter.reset(Config())
        rec = hammer(None, threads=args.threads, ops_per_thread=args.ops, keys=args.key_space, seed=args.seed,
                     recorder=Recorder.for_adapter(adapter), purgatory=caps.purgatory)
    finally:
        adapter.close()
    import sys

    print(f"recorded {len(rec.history)} calls from {args.threads} clients and a reaper on {args.impl}",
          file=sys.stderr if getattr(args, "json", None) == "-" else sys.stdout)
    return rec.history
