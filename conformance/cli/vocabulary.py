"""The option vocabulary of the ``wheelspec`` command line: one meaning, one unit, one metavar per name.

Every option of every subcommand is an entry of :data:`VOCABULARY`; :func:`problems` walks a
built parser and lists each option that is missing from it, takes another metavar, or names
another unit than its entry (``tests/test_cli_vocabulary.py`` runs it on the real parser, and on
one with a planted second ``--timeout``).  ``docs/guides/CLI.md`` prints the same table
(:func:`markdown_table`).

Files a command writes are named by four options only: ``--json FILE``, ``--junit-xml FILE``,
``--out DIR`` and ``--write KIND=PATH`` for extra artefacts (traces, plots, histories...),
plus ``--log-protocol FILE`` (the adapters' wire transcript, a diagnostic) and the directories
``--counterexamples DIR`` and ``--build-dir DIR``.

Light on purpose (the standard library only): the parser is built for every invocation.
"""

from __future__ import annotations

import argparse
import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class Term:
    """One option name: what it means, its unit (``seconds``, ``ms`` or None), its metavar
    (None for a flag), and whether it names something the command writes."""

    meaning: str
    metavar: str | None
    unit: str | None = None
    writes: bool = False


def _t(meaning: str, metavar: str | None = None, unit: str | None = None, writes: bool = False) -> Term:
    return Term(meaning, metavar, unit, writes)


#: option string -> its one meaning; a short option (``-v``) has the entry of its long form
VOCABULARY: dict[str, Term] = {
    "-h": _t("show the command's help and exit"),
    "--help": _t("show the command's help and exit"),
    "-v": _t("more detail in the text output (the command's help says which)"),
    "--verbose": _t("more detail in the text output (the command's help says which)"),
    "-q": _t("less text output (the command's help says which)"),
    "--quiet": _t("less text output (the command's help says which)"),
    # what is judged or measured
    "--impl": _t("an implementation: a built-in name, MODULE:FACTORY or cmd:COMMAND", "IMPL"),
    "--scenarios": _t("a directory of scenario files", "DIR"),
    "--no-corpus": _t("skip the shipped scenario corpus"),
    "--schedules": _t("random schedules per campaign kind (a count)", "N"),
    "--seed": _t("the first seed of a seeded run, an integer in [0, 2^63-1]", "SEED"),
    "--kinds": _t("campaign kinds, a comma list of timer,purgatory", "KINDS"),
    "--max-failures": _t("failure budget per campaign kind (failing schedules, each shrunk)", "N"),
    "--accept": _t("a property whose failures are a known, documented deviation", "PROP"),
    "--ranges": _t("how the implementation treats out-of-range values", "MODE"),
    "--workers": _t("processes that judge seeds in parallel (a count, or auto: one per core)", "N"),
    "--no-shrink": _t("do not shrink failing schedules"),
    "--oracle": _t("which oracle judges a schedule: compiled (default) or reference", "ORACLE"),
    # durations of the command: seconds
    "--timeout": _t("the adapter's per-request timeout", "SECONDS", "seconds"),
    "--start-timeout": _t("the adapter's handshake timeout", "SECONDS", "seconds"),
    "--solver-seconds": _t("Z3's budget per query", "SECONDS", "seconds"),
    "--time-limit": _t("wall-clock limit of a search", "SECONDS", "seconds"),
    "--budget": _t("predicted wall time above which a benchmark cell is skipped", "SECONDS", "seconds"),
    # times of the timer model: milliseconds
    "--tick": _t("the timing wheel's tick", "MS", "ms"),
    "--slack": _t("late-bound allowance of a real-time timer on a loaded machine", "MS", "ms"),
    "--request-timeout-ms": _t("a purgatory request's timeout inside the model", "MS", "ms"),
    "--pct50": _t("median completion latency of a purgatory request", "MS", "ms"),
    "--pct75": _t("75th percentile completion latency of a purgatory request", "MS", "ms"),
    "--lateness-ms": _t("the largest lateness (fire - expiry) a trace may show", "MS", "ms"),
    # sizes and counts
    "--wheel-size": _t("buckets per timing wheel", "N"),
    "--sizes": _t("benchmark sizes, a comma list of numbers of tasks (1e3,1e4)", "N,N,..."),
    "--quick": _t("a short benchmark: small sizes, few runs"),
    "--workloads": _t("benchmark workloads, a comma list", "W,W,..."),
    "--cap": _t("the largest size for one implementation (IMPL=none lifts it)", "IMPL=N"),
    "--repeat": _t("runs per benchmark cell, the best reported", "N"),
    "--curve-rounds": _t("extra round-robin rounds of the steady workload", "N"),
    "--mem-max": _t("the largest size at which Python structures are traced with tracemalloc", "N"),
    "--rate": _t("purgatory requests per second", "N"),
    "--keys": _t("watch keys per purgatory request", "N"),
    "--key-space": _t("how many distinct watch keys exist", "N"),
    "--purge-interval": _t("purgatory operations between purges of completed requests", "N"),
    "--keys-per-run": _t("draw the watch keys once per run, as Kafka's tool does"),
    "--no-jit": _t("skip the JIT compile-time probe"),
    "--runs": _t("seeded real-time schedules to run", "N"),
    "--tasks": _t("tasks per real-time schedule", "N"),
    "--rt-runs": _t("seeded real-time schedules per real-time implementation", "N"),
    "--rt-tasks": _t("tasks per real-time schedule", "N"),
    "--schedule": _t("one saved real-time schedule to replay", "FILE"),
    "--threads": _t("client threads against the implementation", "N"),
    "--ops": _t("calls per client thread", "N"),
    "--max-states": _t("states a linearizability search may keep for one segment", "N"),
    "--mutant": _t("a known purgatory race mutant", "NAME"),
    "--examples": _t("Hypothesis examples per mutant", "N"),
    "--clean": _t("random schedules the correct model must pass per scenario", "N"),
    "--only": _t("run only the lemma or check with this name", "NAME"),
    "--mutations": _t("also break each lemma's rule and require a counterexample"),
    "--no-bmc": _t("skip the transition-system checks"),
    "--max-rows": _t("violating rows reported per property", "N"),
    "--synthetic": _t("rows of a seeded synthetic trace to analyze instead of files", "N"),
    "--plant": _t("violations to plant in the synthetic trace, a comma list", "PLANTS"),
    "--chunk": _t("seeds per seed range (one Spark task)", "N"),
    "--fresh": _t("delete the files this command wrote in --out, then start over"),
    # engines
    "--engine": _t("where set-based work runs: local (pyarrow, a process pool) or spark", "ENGINE"),
    "--master": _t("Spark master URL", "URL"),
    "--driver-memory": _t("Spark driver memory (4g, 512m)", "SIZE"),
    "--conf": _t("a Spark setting, as spark-submit --conf", "KEY=VALUE"),
    # what a command writes
    "--json": _t("write the command's JSON report (- for stdout)", "FILE", writes=True),
    "--junit-xml": _t("write a JUnit XML report (- for stdout)", "FILE", writes=True),
    "--out": _t("the directory the command writes its files into", "DIR", writes=True),
    "--write": _t("also write an extra artefact of the given kind to PATH (repeatable)", "KIND=PATH", writes=True),
    "--log-protocol": _t("write the subprocess adapters' requests and responses to FILE", "FILE", writes=True),
    "--no-files": _t("write no file under --out: print the table only"),
    "--counterexamples": _t("the directory failing schedules are saved to", "DIR", writes=True),
    "--build-dir": _t("the directory native drivers are built in on first use", "DIR", writes=True),
    # other commands
    "--path": _t("print where the file is instead of its text"),
    "--lang": _t("the adapter kit's language", "LANG"),
    "--version": _t("print wheelspec's version and exit"),
}

#: words that name a unit in a help text
UNIT_WORDS: dict[str, re.Pattern[str]] = {
    "seconds": re.compile(r"\bseconds?\b|\bSECONDS\b"),
    "ms": re.compile(r"\bms\b|\bmilliseconds?\b|\bMS\b"),
}


def _unit_problems(where: str, opt: str, term: Term, action: argparse.Action) -> list[str]:
    """A timed option must say its unit (metavar or help) and name no other unit."""
    if term.unit is None:
        return []
    text = f"{action.metavar or ''} {action.help or ''}"
    found = [u for u, pat in UNIT_WORDS.items() if pat.search(text)]
    out = []
    if term.unit not in found:
        out.append(f"{where} {opt}: the help does not say its unit ({term.unit})")
    out += [f"{where} {opt}: the help names {u}, the vocabulary's unit is {term.unit} ({term.meaning})"
            for u in found if u != term.unit]
    return out


def option_problems(where: str, action: argparse.Action) -> list[str]:
    """What is wrong with one option of the command ``where`` against :data:`VOCABULARY`."""
    out: list[str] = []
    takes_value = action.nargs != 0
    for opt in action.option_strings:
        term = VOCABULARY.get(opt)
        if term is None:
            out.append(f"{where} {opt}: not in the option vocabulary (conformance/cli/vocabulary.py)")
            continue
        if takes_value != (term.metavar is not None):
            out.append(f"{where} {opt}: {'takes a value' if takes_value else 'is a flag'}, "
                       f"the vocabulary's {opt} {'is a flag' if term.metavar is None else 'takes ' + term.metavar}")
        elif takes_value and action.metavar != term.metavar:
            out.append(f"{where} {opt}: metavar {action.metavar}, the vocabulary's is {term.metavar}")
        out += _unit_problems(where, opt, term, action)
        if _writes(action) and not term.writes:
            out.append(f"{where} {opt}: writes a file, but the vocabulary's {opt} is not an output option")
    return out


def _writes(action: argparse.Action) -> bool:
    """Does the option name a file or directory the command writes (its validator says so)?"""
    from wheelspec.conformance.cli.args import writable_dir, writable_file

    return action.type in (writable_file, writable_dir) or getattr(action, "writes", False)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (argparse keeps them in its subparsers action)."""
    if parser._subparsers is None:
        return {}
    for action in parser._subparsers._group_actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def problems(parser: argparse.ArgumentParser) -> list[str]:
    """Every option of every subcommand of ``parser`` (and of the top level) checked against
    :data:`VOCABULARY`: one line per problem, empty when the grammar is one vocabulary."""
    out = [p for a in parser._actions if a.option_strings for p in option_problems(parser.prog, a)]
    for sub in subcommands(parser).values():
        out += [p for a in sub._actions if a.option_strings for p in option_problems(sub.prog, a)]
    return out


def markdown_table() -> str:
    """The vocabulary as a Markdown table (``docs/guides/CLI.md`` holds it; a test compares)."""
    rows = ["| option | value | unit | meaning |", "| --- | --- | --- | --- |"]
    for opt, t in VOCABULARY.items():
        if opt.startswith("--"):
            rows.append(f"| `{opt}` | {t.metavar or '(flag)'} | {t.unit or ''} | {t.meaning} |")
    return "\n".join(rows)
