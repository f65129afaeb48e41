"""One option vocabulary across the command line (conformance/cli/vocabulary.py).

The checker walks every subparser of the real parser and finds nothing; the same checker finds a
planted ``--timeout`` that means another thing in a new command.  Also: ``--write KIND=PATH`` (the
one spelling of extra artefacts), ``-v``/``-q`` on every command, unknown flags named by their
subcommand, and the top-level help's examples and exit codes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from wheelspec.conformance.cli import build_parser, main
from wheelspec.conformance.cli.args import writable_file
from wheelspec.conformance.cli.vocabulary import VOCABULARY, markdown_table, problems, subcommands

ROOT = Path(__file__).resolve().parents[1]


def test_every_option_of_every_command_is_in_the_vocabulary() -> None:
    assert problems(build_parser()) == []


def test_a_planted_timeout_with_another_meaning_is_reported() -> None:
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if isinstance(a, argparse._SubParsersAction))
    plant = sub.add_parser("plant", prog="wheelspec plant")
    plant.add_argument("--timeout", type=int, metavar="MS", help="a request's timeout inside the model, ms")
    found = problems(parser)
    assert "wheelspec plant --timeout: metavar MS, the vocabulary's is SECONDS" in found
    assert any(p.startswith("wheelspec plant --timeout: the help names ms") for p in found)
    assert len(found) == 3   # the metavar, the missing unit (seconds), the other unit (ms)


def test_a_flag_where_the_vocabulary_has_a_value_and_an_unknown_output_are_reported() -> None:
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if isinstance(a, argparse._SubParsersAction))
    plant = sub.add_parser("plant2", prog="wheelspec plant2")
    plant.add_argument("--seed", action="store_true", help="a flag")
    plant.add_argument("--save-plot", type=writable_file, metavar="PATH", help="writes a file")
    found = problems(parser)
    assert "wheelspec plant2 --seed: is a flag, the vocabulary's --seed takes SEED" in found
    assert any(p.startswith("wheelspec plant2 --save-plot: not in the option vocabulary") for p in found)


def test_every_command_has_the_verbosity_pair() -> None:
    for name, sub in subcommands(build_parser()).items():
        have = {s for a in sub._actions for s in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= have, name


def test_cli_guide_holds_the_vocabulary_table() -> None:
    guide = (ROOT / "docs" / "guides" / "CLI.md").read_text()
    assert markdown_table() in guide
    assert all(f"`{opt}`" in guide for opt in VOCABULARY if opt.startswith("--"))


def test_unknown_flag_names_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["check", "--trace-out", "x"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("wheelspec check: error: unrecognized arguments: --trace-out x")


@pytest.mark.parametrize(("argv", "message"), [
    (["linearize", "--write", "plot=x.png"], "must be KIND=PATH with KIND one of history"),
    (["linearize", "--write", "history"], "must be KIND=PATH"),
    (["bench", "--write", "plot=a.png", "--write", "plot=b.png"], "plot= given twice"),
])
def test_write_refuses_bad_kinds(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"wheelspec {argv[0]}: error: argument --write: ") and message in err


def test_write_sets_the_artefact_path(tmp_path: Path) -> None:
    args = build_parser().parse_args(["bench", "--write", f"plot={tmp_path / 'b.png'}",
                                      "--write", f"markdown={tmp_path / 'b.md'}"])
    assert (args.plot, args.markdown) == (str(tmp_path / "b.png"), str(tmp_path / "b.md"))
    assert build_parser().parse_args(["bench"]).plot is None


def test_quiet_silences_stdout_but_not_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["linearize", "--impl", "reference", "--threads", "2", "--ops", "10"]
    assert main(argv) == 0
    assert "linearizable" in capsys.readouterr().out
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main([*argv, "-q", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "linearizable"


def test_top_level_help_has_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "Examples:" in out and "wheelspec check --impl" in out
    codes = out.split("Exit codes", 1)[1]
    for line in ("\n  0    success", "\n  1    a violation", "\n  2    usage", "\n  130  interrupted by SIGINT"):
        assert line in codes
    assert "143 by SIGTERM" in codes
