"""The ``wheelspec`` command: argument parsing and printing only.

Each subcommand has a module in this package exposing ``configure_NAME(parser)`` and
``run_NAME(args) -> int``; this file only routes (:mod:`.spark_submit` is the other entry: the
Python file ``spark-submit`` runs, whose path ``wheelspec spark-entry`` prints).  The work lives in the stage packages
(:mod:`..check`, :mod:`..traces`, :mod:`..realtime`, :mod:`..matrix`, :mod:`..concurrency`, and
:mod:`wheelspec.benchmarks`), imported inside ``run_NAME`` so that building the parser imports no
numba, z3, pyarrow or pyspark (``tests/test_cli_parser.py`` checks it).

Exit codes: 0 success, 1 violations found (or an expected proof failed), 2 usage, configuration
or adapter errors, 3 a bug in wheelspec, 130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM (a CI
timeout): both raise :class:`~.interrupt.Interrupted` inside the command, which writes what it has
judged.  A :class:`~wheelspec.spec.errors.WheelspecError` that reaches this file is printed as one
line (control characters escaped) with its ``exit_code``, never a traceback; a
:class:`~wheelspec.spec.errors.Bug` (an ``InvariantError``, a ``RunnerBug``) is a bug in wheelspec:
it is printed with its traceback, to be reported, and exits 3, a code no verdict uses, so that a
CI reading exit codes never takes wheelspec's own failure for one of the implementation's.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import traceback
from collections.abc import Iterator

from wheelspec.conformance.cli.args import NO_MORE_DETAIL, QUIET_HELP, Parser, describe_top
from wheelspec.conformance.interrupt import as_interrupted, signals_raise
from wheelspec.spec.errors import Bug, UserError, WheelspecError
from wheelspec.spec.show import printable

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("wheelspec.conformance.cli.check",
              "run the scenario corpus and a random campaign against an implementation"),
    "replay": ("wheelspec.conformance.cli.check", "rerun one scenario file (for example a saved counterexample)"),
    "prove": ("wheelspec.conformance.cli.prove", "prove the wheel's lemmas and bounded invariants with Z3"),
    "bench": ("wheelspec.conformance.cli.bench",
              "benchmark our engines, heapq, sched and native timers (Netty, the JDK, tokio) side by side"),
    "realtime": ("wheelspec.conformance.cli.realtime",
                 "judge a real-time timer (Netty's HashedWheelTimer, a live asyncio loop) against the wall clock"),
    "matrix": ("wheelspec.conformance.cli.matrix",
               "conformance matrix of third-party timers and our engines (terminal, Markdown, HTML)"),
    "linearize": ("wheelspec.conformance.cli.linearize", "check a recorded concurrent history for linearizability"),
    "races": ("wheelspec.conformance.cli.races", "find the known purgatory races in the deterministic simulation"),
    "analyze": ("wheelspec.conformance.cli.analyze",
                "judge Parquet trace datasets with set-based queries (local pyarrow or Spark); HTML report"),
    "campaign": ("wheelspec.conformance.cli.campaign",
                 "random campaign split into seed ranges on Spark or a local pool; verdicts to Parquet, resumable"),
    "docs": ("wheelspec.conformance.cli.docs", "list and print the documentation and examples shipped with wheelspec"),
    "init-adapter": ("wheelspec.conformance.cli.init_adapter",
                     "write an adapter kit (java, javascript, rust, go, cpp, python) with a toy timer; "
                     "print how to check it"),
    "spark-entry": ("wheelspec.conformance.cli.spark_entry",
                    "print the path of the Python file to give spark-submit (wheelspec docs SPARK)"),
}


def build_parser() -> argparse.ArgumentParser:
    from wheelspec import __version__

    parser = Parser(prog="wheelspec", description="Executable, checkable semantics of "
                    "Kafka-style hierarchical timing wheels and purgatories.")
    parser.add_argument("--version", action="version", version=f"wheelspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module, _name=name)
        try:
            mod = importlib.import_module(module)
        except ImportError as e:  # a subcommand whose module is missing must say so, not vanish
            p.set_defaults(_import_error=str(e))
            continue
        getattr(mod, f"configure_{name.replace('-', '_')}")(p)
        _verbosity_pair(p)
    describe_top(parser)
    return parser


def _verbosity_pair(p: argparse.ArgumentParser) -> None:
    """Every command takes ``-v`` and ``-q`` (one CI line works across commands): those a
    ``configure_*`` did not define get the shared meaning (``-q``: no stdout, see :func:`main`)."""
    have = {s for a in p._actions for s in a.option_strings}
    if "-v" not in have:
        p.add_argument("-v", "--verbose", action="store_true", help=NO_MORE_DETAIL)
    if "-q" not in have:
        p.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)


@contextlib.contextmanager
def _quiet(args: argparse.Namespace) -> Iterator[None]:
    """``-q`` of a command without its own meaning for it: its stdout goes to /dev/null, unless a
    report is written there (``--json -``); stderr (errors, progress) is untouched."""
    if (not getattr(args, "quiet", False) or getattr(args, "_own_quiet", False)
            or "-" in (getattr(args, "json", None), getattr(args, "junit_xml", None))):
        yield
        return
    import os

    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield


def _protocol_log(args: argparse.Namespace) -> contextlib.AbstractContextManager[object]:
    """``--log-protocol FILE`` (check, replay, matrix): record every subprocess adapter's requests
    and responses while the command runs (:mod:`wheelspec.conformance.adapters.transcript`)."""
    path = getattr(args, "log_protocol", None)
    if not path:
        return contextlib.nullcontext()
    if getattr(args, "workers", 1) > 1:  # refused before the log file is opened
        raise UserError("--log-protocol records the adapters of this process only: give it with --workers 1")
    from wheelspec.conformance.adapters.transcript import recording

    return recording(path)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # an unknown flag is the subcommand's usage error: `wheelspec check: error: ...`
        from wheelspec.conformance.cli.vocabulary import subcommands

        name = getattr(args, "_name", None)
        (subcommands(parser).get(name, parser) if name else parser).error(
            f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    if getattr(args, "_import_error", None):
        print(f"wheelspec {args._name}: unavailable ({args._import_error})", file=sys.stderr)
        return 2
    mod = importlib.import_module(args._module)
    from wheelspec.conformance.check import collector

    try:
        with signals_raise(), collector.tuned(), _protocol_log(args), _quiet(args):
            return int(getattr(mod, f"run_{args._name.replace('-', '_')}")(args) or 0)
    except Bug as e:
        traceback.print_exception(e)
        print(f"wheelspec {args._name}: internal error: a bug in wheelspec, not a verdict about the implementation "
              "(exit 3); please report it with the traceback above", file=sys.stderr)
        return e.exit_code
    except WheelspecError as e:
        print(f"wheelspec {args._name}: error: {printable(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt as e:
        # SIGINT or SIGTERM (a CI timeout): the command has written what it judged; say so in
        # one line and exit 128 + signal, never 0.
        stop = as_interrupted(e)
        print(f"wheelspec {args._name}: {stop}", file=sys.stderr)
        return stop.exit_code
