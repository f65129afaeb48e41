"""The size of a checkout, as the change-cost figures of a closing note count it::

    python -m wheelspec.benchmarks.codesize [TREE]

Per package: lines of Python (and of C beside it); then the modules over 500 lines and the
functions over 80 lines (from the syntax tree: a function's lines run from its ``def`` to its last
statement, nested functions counted in their own right too).  ``TREE`` defaults to this checkout.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGES = ("spec", "reference", "optimized", "conformance", "benchmarks", "tests")
BIG_MODULE = 500
BIG_FUNCTION = 80


def measure(root: Path) -> tuple[dict[str, tuple[int, int]], list[tuple[int, str]], list[tuple[int, str]]]:
    """(package -> (Python lines, C lines), big modules, big functions) of the checkout ``root``."""
    sizes: dict[str, tuple[int, int]] = {}
    modules: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    for package in PACKAGES:
        py = 0
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text()
            lines = len(text.splitlines())
            py += lines
            where = str(path.relative_to(root))
            if lines > BIG_MODULE:
                modules.append((lines, where))
            for node in ast.walk(ast.parse(text, filename=where)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > BIG_FUNCTION:
                        functions.append((length, f"{where}:{node.name}"))
        c = sum(len(p.read_text().splitlines()) for p in (root / package).rglob("*.c"))
        sizes[package] = (py, c)
    return sizes, sorted(modules, reverse=True), sorted(functions, reverse=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wheelspec.benchmarks.codesize", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", nargs="?", type=Path, default=Path(__file__).resolve().parents[1],
                   help="the checkout to measure (default: this one)")
    args = p.parse_args(argv)
    if not (args.tree / "spec").is_dir():
        print(f"codesize: {args.tree}: not a wheelspec checkout (no spec/ folder)", file=sys.stderr)
        return 2
    sizes, modules, functions = measure(args.tree)
    for package, (py, c) in sizes.items():
        print(f"{package:12} {py:6d} py" + (f" + {c} C" if c else ""))
    print(f"{'total':12} {sum(py for py, _ in sizes.values()):6d} py")
    print(f"modules over {BIG_MODULE} lines: {len(modules)}")
    for lines, where in modules:
        print(f"  {lines:5d} {where}")
    print(f"functions over {BIG_FUNCTION} lines: {len(functions)}")
    for lines, where in functions:
        print(f"  {lines:5d} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
