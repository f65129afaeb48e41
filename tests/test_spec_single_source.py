"""spec/ is the single source of truth for semantic facts: nothing else restates them.

Scans the Python source of spec/, reference/, optimized/, conformance/ and benchmarks/ with ``ast``:

* **profile names compared**: a comparison with a string constant that is a profile name
  (``p.name == "strict-gt"``, ``profile in ("kafka", "strict")``) anywhere but spec/profiles.py.
  Code asks the profile how it behaves (:class:`wheelspec.spec.profiles.Behaviour`) instead;
* **limits restated**: a constant expression worth ``2**31 - 1`` (:data:`~wheelspec.spec.limits.MAX_ID`,
  ``MAX_PURGE_INTERVAL``) or ``2**44`` (``EXP_SPAN``), written as the number or as arithmetic on
  constants, anywhere but spec/limits.py.  Import the name from :mod:`wheelspec.spec.limits`;
* **caused events restated**: a tuple, list or set literal of exactly the caused events (``(Fire,
  Complete, Expire, Purge)`` or their kinds ``("fire", "complete", "expire", "purge")``) anywhere
  but spec/events.py.  Use :data:`wheelspec.spec.events.CAUSED` / ``CAUSED_KINDS``.
"""

from __future__ import annotations

import ast
import operator
from pathlib import Path

from wheelspec.spec.events import CAUSED, CAUSED_KINDS
from wheelspec.spec.limits import EXP_SPAN, MAX_ID
from wheelspec.spec.profiles import PROFILE_NAMES

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("spec", "reference", "optimized", "conformance", "benchmarks")

PROFILE, NUMBER, CAUSED_SET = "profile name compared", "limit restated", "caused events restated"
#: the values no file but spec/limits.py may spell out
LIMIT_VALUES = {2**31 - 1: "MAX_ID (2**31 - 1)", 2**44: "EXP_SPAN (2**44)"}
assert set(LIMIT_VALUES) == {MAX_ID, EXP_SPAN}
#: the only files that may spell each out
HOMES = {PROFILE: "spec/profiles.py", NUMBER: "spec/limits.py", CAUSED_SET: "spec/events.py"}
#: the caused events, by class name and by kind
CAUSED_NAMES = frozenset(c.__name__ for c in CAUSED)
CAUSED_KIND_SET = frozenset(CAUSED_KINDS)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
        ast.LShift: operator.lshift, ast.FloorDiv: operator.floordiv, ast.BitOr: operator.or_}


def _value(node: ast.AST) -> int | None:
    """The value of an integer expression made of constants only, else None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _value(node.left), _value(node.right)
        if a is None or b is None or (isinstance(node.op, (ast.Pow, ast.LShift)) and not 0 <= b <= 256):
            return None
        try:
            return _OPS[type(node.op)](a, b)
        except ZeroDivisionError:
            return None
    return None


def _profile_constants(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and node.value in PROFILE_NAMES:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in PROFILE_NAMES]
    return []


def _caused_literal(node: ast.AST) -> bool:
    """A tuple / list / set literal of exactly the caused events (as classes or as kinds)."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) != len(CAUSED):
        return False
    names = {e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else None
             for e in node.elts}
    kinds = {e.value if isinstance(e, ast.Constant) else None for e in node.elts}
    return names == CAUSED_NAMES or kinds == CAUSED_KIND_SET


def scan_source(source: str, rel: str) -> list[tuple[str, int, str, str]]:
    """The findings of one file: ``(rel, line, rule, what)``; a file is never judged by the rule
    whose home it is."""
    out = []
    for node in ast.walk(ast.parse(source, rel)):
        if isinstance(node, ast.Compare) and rel != HOMES[PROFILE]:
            names = [n for side in (node.left, *node.comparators) for n in _profile_constants(side)]
            if names:
                out.append((rel, node.lineno, PROFILE, ", ".join(repr(n) for n in names)))
        if isinstance(node, (ast.Constant, ast.BinOp)) and rel != HOMES[NUMBER]:
            v = _value(node)
            if v in LIMIT_VALUES:
                out.append((rel, node.lineno, NUMBER, LIMIT_VALUES[v]))
        if _caused_literal(node) and rel != HOMES[CAUSED_SET]:
            out.append((rel, node.lineno, CAUSED_SET, "spec.events.CAUSED"))
    return out


def scan_file(path: Path, root: Path = ROOT) -> list[tuple[str, int, str, str]]:
    return scan_source(path.read_text(), path.relative_to(root).as_posix())


def scan_tree(root: Path = ROOT) -> list[tuple[str, int, str, str]]:
    out = []
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                out += scan_file(path, root)
    return out


def test_the_tree_restates_no_semantic_fact() -> None:
    found = scan_tree()
    assert not found, "semantic facts restated outside spec/ (ask spec.profiles / import spec.limits):\n" + \
        "\n".join(f"  {rel}:{line}: {rule}: {what}" for rel, line, rule, what in found)


def test_scanner_catches_planted_restatements(tmp_path: Path) -> None:
    planted = tmp_path / "conformance" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        'KIND = "kafka"                       # a name as data: fine\n'
        'def f(p, profile, x):\n'
        '    if p.name == "strict-gt":        # 3\n'
        '        return 1\n'
        '    if profile in ("kafka", "strict"):  # 5\n'
        '        return 2\n'
        '    return "strict" != profile       # 7\n'
        'MAX = 2**31 - 1                      # 8\n'
        'SPAN = 2 ** 44                       # 9\n'
        'N = 2147483647                       # 10\n'
        'CAP = (1 << 31) - 1                  # 11\n'
        'OK = 2**31                           # 12: not a limit\n'
        'ALSO_OK = x == "kafka-ish"           # 13: not a profile name\n'
        'C = (ev.Fire, ev.Complete, ev.Expire, ev.Purge, ev.TryComplete)  # 14\n'
        'K = {"purge", "fire", "expire", "complete", "try_complete"}      # 15\n'
        'SOME = ("fire", "complete")                      # 16: not the caused set\n')
    found = scan_file(planted, tmp_path)
    assert sorted((line, rule) for _, line, rule, _ in found) == [
        (3, PROFILE), (5, PROFILE), (7, PROFILE), (8, NUMBER), (9, NUMBER), (10, NUMBER), (11, NUMBER),
        (14, CAUSED_SET), (15, CAUSED_SET)]
    # the homes themselves may spell the facts out
    assert scan_source('MAX_ID = 2**31 - 1\nEXP_SPAN = 2**44\n', "spec/limits.py") == []
    assert scan_source('ok = name == "kafka"\n', "spec/profiles.py") == []
    assert scan_source('ok = name == "kafka"\n', "spec/limits.py") != []
    assert scan_source('CAUSED = (Fire, Complete, Expire, Purge)\n', "spec/events.py") == []
