"""Validators for the ``wheelspec`` command line: argparse ``type=`` functions and the parser class.

Every argument is checked when it is parsed, before any work starts, so that a bad value is one
line and exit 2 instead of a traceback (``--timeout nan``), a silent run of nothing (``--kinds
","``) or results lost at the end (``--out`` to a directory that cannot be written).  Each
validator raises :class:`argparse.ArgumentTypeError`; :class:`Parser` prints it as one line
naming the argument::

    wheelspec check: error: argument --timeout: must be a finite number of seconds > 0, got 'nan'

Light on purpose (the standard library and :mod:`wheelspec.spec.show`): the parser is built for
every invocation.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from wheelspec.spec.show import printable


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        # argparse quotes some arguments as typed: a newline or an escape code in one must not
        # break the line or reach the terminal raw
        message = printable(message).replace("\n", "\\n")
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def seconds(text: str) -> float:
    """A duration in seconds: a finite number > 0 (``nan``, ``inf``, 0 and negatives refused)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return v


def positive_number(text: str) -> float:
    """A finite number > 0 (a rate, a latency)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return v


def _integer(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def at_least(minimum: int) -> Callable[[str], int]:
    """An integer >= ``minimum`` (``at_least(1)`` for counts of things to run)."""

    def parse(text: str) -> int:
        v = _integer(text)
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}")
        return v

    parse.__name__ = f"integer >= {minimum}"   # argparse names the type in some messages
    return parse


def between(lo: int, hi: int) -> Callable[[str], int]:
    """An integer in ``[lo, hi]`` (a bound or a size with a largest value that means something)."""

    def parse(text: str) -> int:
        v = _integer(text)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}], got {text!r}")
        return v

    parse.__name__ = f"integer in [{lo}, {hi}]"
    return parse


#: a count of things to run (threads, runs, examples): an integer >= 1
count = at_least(1)
#: a quantity that may be zero (a number of schedules where 0 means "none")
non_negative = at_least(0)


def seed(text: str) -> int:
    """A seed: an integer >= 0 that fits 64 bits (traces and verdicts store it as an int64)."""
    v = _integer(text)
    if not 0 <= v <= 2**63 - 1:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2^63-1], got {text!r}")
    return v


def accepted_property(text: str) -> str:
    """A property name ``wheelspec check`` reports (``--accept PROP``): one of the conformance
    judge's properties in ``spec/properties.py``; anything else is refused, naming them."""
    from wheelspec.spec import properties

    known = properties.reported_by(properties.RUN)
    if text not in known:
        raise argparse.ArgumentTypeError(f"unknown property {text!r} (known: {', '.join(known)})")
    return text


def comma_list(allowed: Sequence[str] | None = None) -> Callable[[str], str]:
    """A non-empty comma-separated list, every item non-empty and (if ``allowed``) one of them.
    Returns the list re-joined with commas, so the commands' own splitting stays as it is."""

    def parse(text: str) -> str:
        items = [x.strip() for x in text.split(",")]
        if not text.strip() or any(not x for x in items):
            raise argparse.ArgumentTypeError(f"must be a comma-separated list with no empty item, got {text!r}")
        if allowed is not None:
            bad = [x for x in items if x not in allowed]
            if bad:
                raise argparse.ArgumentTypeError(f"unknown value {bad[0]!r} (known: {', '.join(allowed)})")
        return ",".join(items)

    parse.__name__ = "comma list"
    return parse


def _nearest_existing(p: Path) -> Path:
    q = p
    while not q.exists() and not q.is_symlink():
        if q.parent == q:
            break
        q = q.parent
    return q


def _probe_dir(d: Path, shown: str) -> None:
    """Can files be created in the existing directory ``d``?  A real probe: ``os.access`` says yes
    to root on a read-only file system, and ``/proc`` refuses files whatever the mode says."""
    try:
        with tempfile.TemporaryFile(dir=d):
            pass
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot write to {shown}: {d} is not writable "
                                         f"({e.strerror or type(e).__name__})") from None


def writable_dir(text: str) -> str:
    """A directory the command may create or write into: it exists as a directory, or its
    nearest existing ancestor is a writable directory (the command creates the rest)."""
    if not text:
        raise argparse.ArgumentTypeError("must be a directory path, got ''")
    p = Path(text)
    q = _nearest_existing(p)
    if not q.is_dir():
        what = "is not a directory" if q == p else "is a file, not a directory"
        raise argparse.ArgumentTypeError(f"cannot write to {text}: {q} {what}")
    _probe_dir(q, text)
    return text


def writable_file(text: str) -> str:
    """A file the command may write: ``-`` (stdout), or a path that is not a directory and whose
    directory exists or can be created and is writable."""
    if text == "-":
        return text
    if not text:
        raise argparse.ArgumentTypeError("must be a file path, got ''")
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write to {text}: it is a directory")
    if p.exists() and not os.access(p, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write to {text}: the file is not writable")
    q = _nearest_existing(p.parent if str(p.parent) else Path("."))
    if not q.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write to {text}: {q} is a file, not a directory")
    _probe_dir(q, text)
    return text


# ------------------------------------------------------------------ one grammar -----------------
#: what ``--json``, ``--junit-xml`` and the like take to mean "standard output"
STDOUT = "-"


class Once(argparse.Action):
    """An option of a command that takes one value (``--impl`` of ``replay``, ``campaign``...):
    given twice, it is refused instead of the last one silently winning."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, why: str = "", **kw: object) -> None:
        super().__init__(option_strings, dest, **kw)  # type: ignore[arg-type]
        self.why = why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        given: set[str] = namespace.__dict__.setdefault("_once_given", set())
        if self.dest in given:
            raise argparse.ArgumentError(self, f"given twice; this command takes one{self.why}")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


#: the exit codes every command shares (a command's ``1`` is said in its own epilog)
EXIT_COMMON = ("  2    usage, configuration or adapter error (one line on stderr)\n"
               "  3    a bug in wheelspec (its traceback on stderr), never a verdict\n"
               "  130  interrupted by SIGINT (Ctrl-C); 143 by SIGTERM (a CI timeout): what was judged is written")


def describe(parser: argparse.ArgumentParser, examples: Sequence[tuple[str, str]], exit_codes: Sequence[str], *,
             common: str | None = EXIT_COMMON) -> None:
    """Give a subcommand's ``--help`` its examples and exit codes (``exit_codes``, then ``common``: the
    codes every judging command shares; ``None`` for a command whose own list says them all)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter   # examples are meant to be copied
    parser.set_defaults(_examples=[command for command, _what in examples])   # tests run each one
    lines = ["Examples:"]
    for command, what in examples:
        lines += [f"  {command}", f"      {what}"]
    lines += ["", "Exit codes:", *(f"  {c}" for c in exit_codes), *([common] if common else []), ""]
    # called last in a configure_* function: the notes match the options the command has
    metavars = {a.metavar for a in parser._actions}
    if metavars & {"SECONDS", "MS"}:
        lines += ["Durations of the command (timeouts, budgets) are in seconds; times of the timer model",
                  "(tick, slack, lateness, latencies) are in milliseconds."]
    if any("--json" in a.option_strings for a in parser._actions):
        lines += ["--json - writes the JSON report to stdout; the text output then goes to stderr."]
    lines += ["The whole grammar: wheelspec docs CLI"]
    parser.epilog = "\n".join(lines)


class Write(argparse.Action):
    """``--write KIND=PATH`` (repeatable): the one spelling of "also write this artefact there".

    ``kinds`` maps each KIND the command offers to ``(dest, validator)``: the PATH, checked by
    the validator (:func:`writable_file` or :func:`writable_dir`), is stored in ``dest`` (None
    when the kind is not asked for).  An unknown KIND, a bad PATH or a KIND given twice is one
    usage error naming the option.
    """

    writes = True   # the vocabulary's check: an output option (conformance/cli/vocabulary.py)

    def __init__(self, option_strings: Sequence[str], dest: str, *,
                 kinds: dict[str, tuple[str, Callable[[str], str]]], **kw: object) -> None:
        super().__init__(option_strings, dest, **kw)  # type: ignore[arg-type]
        self.kinds = kinds

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        kind, sep, path = str(values).partition("=")
        if not sep or kind not in self.kinds:
            raise argparse.ArgumentError(self, f"must be KIND=PATH with KIND one of {', '.join(self.kinds)}, "
                                               f"got {values!r}")
        dest, check = self.kinds[kind]
        if getattr(namespace, dest, None) is not None:
            raise argparse.ArgumentError(self, f"{kind}= given twice")
        try:
            setattr(namespace, dest, check(path))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentError(self, f"{kind}={path}: {e}") from None


def add_write(parser: argparse.ArgumentParser, kinds: dict[str, tuple[str, Callable[[str], str], str]]) -> None:
    """Give a command ``--write KIND=PATH``; ``kinds``: KIND -> (dest, validator, what it writes)."""
    for dest, _check, _what in kinds.values():
        parser.set_defaults(**{dest: None})
    what = "; ".join(f"{k}=PATH: {w}" for k, (_d, _c, w) in kinds.items())
    parser.add_argument("--write", action=Write, metavar="KIND=PATH", dest="_write",
                        kinds={k: (d, c) for k, (d, c, _w) in kinds.items()},
                        help=f"also write an artefact (repeatable): {what}")


def add_verbosity(parser: argparse.ArgumentParser, verbose: str, quiet: str) -> None:
    """The one verbosity pair of every command: ``-v/--verbose`` and ``-q/--quiet``, with what
    each means for this command."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="store_true", help=verbose)
    g.add_argument("-q", "--quiet", action="store_true", help=quiet)


#: ``-q`` of a command that prints a text report: main() sends its stdout to /dev/null
QUIET_HELP = "print nothing on stdout (errors, warnings and progress still go to stderr; exit code and files unchanged)"
#: ``-v`` of a command whose text output has no further detail to give
NO_MORE_DETAIL = "accepted by every command; this one has no further detail to print"


#: examples of ``wheelspec --help``: one per kind of work, each one line a user can copy
TOP_EXAMPLES = (
    ("wheelspec check --impl mytimer.adapter:factory --json report.json", "judge your timer; a JSON report for CI"),
    ("wheelspec check --impl 'cmd:node mytimer.js' --junit-xml report.xml", "a timer in another language"),
    ("wheelspec replay wheelspec-out/optimized/timer-17.json", "replay a saved counterexample"),
    ("wheelspec init-adapter --lang java mykit/", "start an adapter for a timer in another language"),
    ("wheelspec prove", "prove the wheel's lemmas with Z3"),
    ("wheelspec docs", "list the shipped guides (wheelspec docs CLI: the whole grammar)"),
    ("wheelspec COMMAND --help", "a command's options, examples and exit codes"),
)


def describe_top(parser: argparse.ArgumentParser) -> None:
    """Give ``wheelspec --help`` examples and the exit codes every command shares."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    lines = ["Examples:"]
    for command, what in TOP_EXAMPLES:
        lines += [f"  {command}", f"      {what}"]
    lines += ["", "Exit codes (every command):", "  0    success: what was judged holds",
              "  1    a violation found (or an expected proof failed): the command's --help says which",
              EXIT_COMMON, "",
              "Every command takes -v/--verbose and -q/--quiet; --json FILE (- for stdout) writes a report",
              "in one envelope whose JSON Schema `wheelspec docs schema` prints.",
              "The whole grammar: wheelspec docs CLI"]
    parser.epilog = "\n".join(lines)
