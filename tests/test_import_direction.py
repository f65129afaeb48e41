"""The direction of imports between the parts of wheelspec (README, "How the parts fit").

spec/ defines and imports nothing else of wheelspec; reference/ and optimized/ implement spec/ and
import only it; conformance/ and benchmarks/ may import anything, and nothing imports them.  The
root package ``wheelspec`` (spec/root: the version, ``wheelspec.Error`` and ``python -m
wheelspec``) re-exports spec's root error and starts the command.  Every ``import`` statement
counts, including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: folder -> the wheelspec parts its modules may import (their own part always)
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "root": {"spec", "conformance"},
    "reference": {"spec"},
    "optimized": {"spec"},
    "benchmarks": {"spec", "root", "reference", "optimized", "conformance"},
    "conformance": {"spec", "root", "reference", "optimized", "benchmarks"},
}
#: the folder each part lives in
FOLDER = {"spec": "spec", "root": "spec/root", "reference": "reference", "optimized": "optimized",
          "benchmarks": "benchmarks", "conformance": "conformance"}
#: the package a folder installs as (spec/root is the root package ``wheelspec``)
PACKAGE = {"spec": "wheelspec.spec", "reference": "wheelspec.reference", "optimized": "wheelspec.optimized",
           "benchmarks": "wheelspec.benchmarks", "conformance": "wheelspec.conformance"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    if rel.parts[:2] == ("spec", "root"):
        parts = ["wheelspec", *rel.parts[2:]]
    else:
        parts = [PACKAGE[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module name one file imports, relative imports resolved, with its line."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # `from wheelspec import conformance` names a part too
            if mod == "wheelspec":
                out += [(node.lineno, f"wheelspec.{a.name}") for a in node.names if a.name in PACKAGE]
    return out


def _part(module: str) -> str | None:
    """The part a wheelspec module belongs to; None for other packages."""
    if module == "wheelspec" or module.startswith("wheelspec.__"):
        return "root"
    if not module.startswith("wheelspec."):
        return None
    return module.split(".")[1]


def _files(part: str) -> list[Path]:
    files = sorted((ROOT / FOLDER[part]).rglob("*.py"))
    if part == "spec":  # spec/root is its own part
        files = [f for f in files if "root" not in f.relative_to(ROOT / "spec").parts[:1]]
    return files


def _violations() -> list[str]:
    bad = []
    for me, allowed in ALLOWED.items():
        for path in _files(me):
            for line, mod in _imports(path):
                part = _part(mod)
                if part is not None and part != me and part not in allowed:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod} ({me} may import only "
                               f"{', '.join(sorted(allowed)) or 'itself'})")
    return bad


def test_every_import_goes_the_allowed_way() -> None:
    assert _violations() == []


def test_the_checker_sees_a_wrong_way_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The rule must be able to fail: a lazy import of conformance inside spec is found.
    fake = ROOT / "spec" / "_direction_probe.py"
    fake.write_text("def f():\n    from wheelspec.conformance.cli import main\n    from ..reference import wheel\n")
    try:
        found = _violations()
    finally:
        fake.unlink()
    assert any("_direction_probe.py:2 imports wheelspec.conformance.cli" in v for v in found), found
    assert any("_direction_probe.py:3 imports wheelspec.reference" in v for v in found), found


def test_parts_are_found() -> None:
    # Guards the walk itself: each part has modules and each reads some wheelspec import.
    for part in ALLOWED:
        assert _files(part), part
    assert not any(f.parent.name == "root" for f in _files("spec"))
    assert any(_part(m) == "spec" for _, m in _imports(ROOT / "reference" / "system_timer.py"))
    assert ("wheelspec.conformance.cli" in {m for _, m in _imports(ROOT / "spec" / "root" / "__main__.py")})
