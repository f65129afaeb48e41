"""The ``wheelspec`` command's parser is light: building it (every ``wheelspec`` invocation does)
imports none of the heavy libraries the commands use, and every subcommand has its module in
``conformance/cli/``."""

from __future__ import annotations

import json
import subprocess
import sys

from wheelspec.conformance.cli import COMMANDS

HEAVY = ("numba", "z3", "pyarrow", "pyspark", "matplotlib", "numpy")


def test_build_parser_imports_no_heavy_library() -> None:
    code = ("import sys, json; from wheelspec.conformance.cli import build_parser; build_parser(); "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_the_check_sees_a_heavy_import() -> None:
    # The probe must be able to fail: importing numpy is seen.
    code = (f"import sys, json, numpy; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "numpy" in json.loads(out.stdout)


def test_every_command_lives_in_the_cli_package() -> None:
    for name, (module, _help) in COMMANDS.items():
        assert module.startswith("wheelspec.conformance.cli."), (name, module)
