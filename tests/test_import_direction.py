"""The shape of wheelspec's imports (README, "How the parts fit").

Three rules, each checked over the ``import`` statements of every module, including those inside
functions (a lazy import is still a dependency):

* **direction**: spec/ imports nothing else of wheelspec; reference/ and optimized/ implement spec/
  and import only it; benchmarks/ measures the engines and imports only spec/, reference/,
  optimized/ and the root package; conformance/ may import anything, including benchmarks/ (the
  ``wheelspec bench`` command drives its workloads); the root package ``wheelspec`` (spec/root: the
  version, ``wheelspec.Error``, the reports' envelope and ``python -m wheelspec``) re-exports spec's root error and
  starts the command.  Nothing imports conformance/ but the root package.
* **the command on top**: nothing of conformance/ imports conformance/cli/ but cli/ itself and
  conformance/measure/ (the scripts that measure the runner through ``wheelspec check``'s code
  path and defaults): the commands use the library, never the other way round.
* **no cycle**: the graph of modules has no cycle, counting every import Python executes, at
  module level or inside a function.  Imports under ``if TYPE_CHECKING:`` are left out of this
  rule (they still count for the other two): they run only for the type checker, and counting them
  would merge modules that model Kafka classes which name each other in their types, as
  ``TimerTaskEntry`` and ``TimerTaskList`` do.  An edge goes to the module an import names:
  ``from pkg import sub`` to the submodule ``pkg.sub`` when there is one, else to ``pkg`` itself;
  a package's ``__init__`` is not counted as imported by importing one of its submodules (Python
  runs it first, but a submodule that needs only its siblings does not depend on it).

And no module imports a private name (``_x``) of a module of another package: what is shared
between packages is public.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: folder -> the wheelspec parts its modules may import (their own part always)
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "root": {"spec", "conformance"},
    "reference": {"spec"},
    "optimized": {"spec"},
    "benchmarks": {"spec", "root", "reference", "optimized"},
    "conformance": {"spec", "root", "reference", "optimized", "benchmarks"},
}
#: the folder each part lives in
FOLDER = {"spec": "spec", "root": "spec/root", "reference": "reference", "optimized": "optimized",
          "benchmarks": "benchmarks", "conformance": "conformance"}
#: the package a folder installs as (spec/root is the root package ``wheelspec``)
PACKAGE = {"spec": "wheelspec.spec", "reference": "wheelspec.reference", "optimized": "wheelspec.optimized",
           "benchmarks": "wheelspec.benchmarks", "conformance": "wheelspec.conformance"}
#: the command-line package: only it (and the root package) imports it
CLI = "wheelspec.conformance.cli"
ON_TOP = (CLI,)

#: one import: the importing file, its line, and the module name the statement names
Import = tuple[Path, int, str]


def _module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    if rel.parts[:2] == ("spec", "root"):
        parts = ["wheelspec", *rel.parts[2:]]
    else:
        parts = [PACKAGE[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the import statements under ``if TYPE_CHECKING:``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


@functools.cache
def _parse(text: str, filename: str) -> ast.Module:
    """One file's syntax tree; every test walks the whole package, and parsing is what costs."""
    return ast.parse(text, filename)


def _imports(path: Path, root: Path = ROOT, *, run_time: bool = False) -> list[tuple[int, str, list[str]]]:
    """Every import statement of one file as (line, module, names imported from it), relative
    imports resolved; ``import a.b`` has no names.  With ``run_time``, only those Python executes
    (not those under ``if TYPE_CHECKING:``)."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str, list[str]]] = []
    tree = _parse(path.read_text(), str(path))
    skip = _type_only(tree) if run_time else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod, [a.name for a in node.names]))
    return out


def _part(module: str) -> str | None:
    """The part a wheelspec module belongs to; None for other packages."""
    if module == "wheelspec":
        return "root"
    if not module.startswith("wheelspec."):
        return None
    top = module.split(".")[1]
    # a module of spec/root (``wheelspec.__main__``, ``wheelspec.envelope``) is the root package's
    return "root" if (ROOT / FOLDER["root"] / f"{top}.py").exists() else top


def _files(part: str, root: Path = ROOT) -> list[Path]:
    files = sorted((root / FOLDER[part]).rglob("*.py"))
    if part == "spec":  # spec/root is its own part
        files = [f for f in files if "root" not in f.relative_to(root / "spec").parts[:1]]
    return files


def _all_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    return {_module_name(f, root): f for part in ALLOWED for f in _files(part, root)}


def _targets(mod: str, names: list[str], modules: Iterable[str]) -> list[str]:
    """The modules one import statement depends on: ``pkg.sub`` for each imported name that is a
    submodule, else the named module (or, for a name that is no file, its nearest enclosing one)."""
    known = set(modules)
    subs = [f"{mod}.{n}" for n in names if f"{mod}.{n}" in known]
    if subs and len(subs) == len(names):
        return subs
    target = mod
    while target and target not in known:
        target = target.rpartition(".")[0]
    return subs + ([target] if target else [])


def _graph(root: Path = ROOT) -> dict[str, list[tuple[str, Path, int]]]:
    """module -> the modules it imports, each with the file and line of the import."""
    modules = _all_files(root)
    graph: dict[str, list[tuple[str, Path, int]]] = {m: [] for m in modules}
    for me, path in modules.items():
        for line, mod, names in _imports(path, root, run_time=True):
            if _part(mod) is None:
                continue
            for target in _targets(mod, names, modules):
                if target != me:
                    graph[me].append((target, path, line))
    return graph


def _cycles(graph: dict[str, list[tuple[str, Path, int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        # iterative Tarjan: the graph is deep enough to matter for recursion in a long chain
        work = [(v, iter(graph[v]))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, edges = work[-1]
            for w, _path, _line in edges:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return sorted(found)


def _cycle_report(graph: dict[str, list[tuple[str, Path, int]]], root: Path = ROOT) -> list[str]:
    """One line per cycle: its modules, then every import edge between them with file:line."""
    out = []
    for comp in _cycles(graph):
        members = set(comp)
        edges = [f"{a} -> {b} ({path.relative_to(root)}:{line})"
                 for a in comp for b, path, line in graph[a] if b in members]
        out.append(f"cycle of {len(comp)} modules {', '.join(comp)}: " + "; ".join(edges))
    return out


def _violations(root: Path = ROOT) -> list[str]:
    bad = []
    for me, allowed in ALLOWED.items():
        for path in _files(me, root):
            name = _module_name(path, root)
            for line, mod, names in _imports(path, root):
                # `from wheelspec import conformance` names a part too
                mods = [mod] + [f"wheelspec.{n}" for n in names if mod == "wheelspec" and n in PACKAGE]
                for m in mods:
                    part = _part(m)
                    where = f"{path.relative_to(root)}:{line} imports {m}"
                    if part is not None and part != me and part not in allowed:
                        bad.append(f"{where} ({me} may import only {', '.join(sorted(allowed)) or 'itself'})")
                    if (me == "conformance" and (m == CLI or m.startswith(CLI + "."))
                            and not any(name == top or name.startswith(top + ".") for top in ON_TOP)):
                        bad.append(f"{where} (only {', '.join(ON_TOP)} and the root package import the command line)")
    return bad


def _private_imports(root: Path = ROOT) -> list[str]:
    """Imports of a private name from a module of another package, as ``file:line module name``."""
    modules = _all_files(root)
    bad = []
    for me, path in modules.items():
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for line, mod, names in _imports(path, root):
            if _part(mod) is None:
                continue
            theirs = mod if mod in modules and modules[mod].name == "__init__.py" else mod.rpartition(".")[0]
            bad += [f"{path.relative_to(root)}:{line} {mod} {n}" for n in names
                    if n.startswith("_") and not n.startswith("__") and theirs != package]
    return bad


def test_every_import_goes_the_allowed_way() -> None:
    assert _violations() == []


def test_no_private_name_crosses_a_package() -> None:
    assert _private_imports() == []


def test_no_import_cycle() -> None:
    cycles = _cycle_report(_graph())
    assert not cycles, "\n".join(cycles)


def _copy_tree(dst: Path) -> None:
    """The package's Python files under ``dst``, laid out as in the repository."""
    for path in _all_files().values():
        target = dst / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())


def test_the_checker_sees_a_wrong_way_import(tmp_path: Path) -> None:
    # The rules must be able to fail: a lazy import of conformance inside spec, a relative import
    # of reference from spec, and a library module importing the command line are each found.
    _copy_tree(tmp_path)
    (tmp_path / "spec" / "_direction_probe.py").write_text(
        "def f():\n    from wheelspec.conformance.cli import main\n    from ..reference import wheel\n")
    (tmp_path / "conformance" / "traces" / "_direction_probe.py").write_text(
        "def f():\n    from ..cli.args import seed\n")
    (tmp_path / "benchmarks" / "_direction_probe.py").write_text("import wheelspec.conformance.check\n")
    found = _violations(tmp_path)
    assert any("_direction_probe.py:2 imports wheelspec.conformance.cli" in v for v in found), found
    assert any("_direction_probe.py:3 imports wheelspec.reference" in v for v in found), found
    assert any("traces/_direction_probe.py:2 imports wheelspec.conformance.cli.args (only" in v for v in found), found
    assert any("benchmarks/_direction_probe.py:1 imports wheelspec.conformance.check (" in v for v in found), found
    (tmp_path / "conformance" / "measure" / "_direction_probe.py").write_text(
        "from wheelspec.conformance.cli.bench import configure_bench\n"
        "from wheelspec.benchmarks.workloads import _private\n")
    assert any("measure/_direction_probe.py:1 imports wheelspec.conformance.cli.bench (only" in v
               for v in _violations(tmp_path))
    assert _private_imports(tmp_path) == [
        "conformance/measure/_direction_probe.py:2 wheelspec.benchmarks.workloads _private"]


def test_the_checker_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    # The acceptance of the rule: a cycle closed only by an import inside a function is reported,
    # with its modules and the file:line of each edge.
    _copy_tree(tmp_path)
    (tmp_path / "spec" / "_cycle_a.py").write_text("from ._cycle_b import B\n\nA = 1\n")
    (tmp_path / "spec" / "_cycle_b.py").write_text("B = 2\n\n\ndef f():\n    from wheelspec.spec import _cycle_a\n")
    report = _cycle_report(_graph(tmp_path), tmp_path)
    planted = [c for c in report if "_cycle_a" in c]
    assert len(planted) == 1, report
    assert "modules wheelspec.spec._cycle_a, wheelspec.spec._cycle_b:" in planted[0]
    assert "wheelspec.spec._cycle_a -> wheelspec.spec._cycle_b (spec/_cycle_a.py:1)" in planted[0]
    assert "wheelspec.spec._cycle_b -> wheelspec.spec._cycle_a (spec/_cycle_b.py:5)" in planted[0]


def test_edges_follow_what_an_import_names() -> None:
    # `from pkg import sub` is an edge to the submodule; `from pkg import name` one to pkg itself;
    # a name of no file goes to the nearest enclosing module.
    mods = ["wheelspec.conformance.adapters", "wheelspec.conformance.adapters.resolve"]
    assert _targets("wheelspec.conformance.adapters", ["resolve"], mods) == ["wheelspec.conformance.adapters.resolve"]
    assert _targets("wheelspec.conformance.adapters", ["resolve", "X"], mods) == [
        "wheelspec.conformance.adapters.resolve", "wheelspec.conformance.adapters"]
    assert _targets("wheelspec.conformance.adapters.resolve", ["resolve"], mods) == [
        "wheelspec.conformance.adapters.resolve"]
    assert _targets("wheelspec.conformance.adapters.gone", [], mods) == ["wheelspec.conformance.adapters"]
    assert _cycles({"a": [("b", ROOT, 1)], "b": [("c", ROOT, 2)], "c": [("a", ROOT, 3)], "d": [("a", ROOT, 4)]}) == [
        ["a", "b", "c"]]


def test_parts_are_found() -> None:
    # Guards the walk itself: each part has modules and each reads some wheelspec import.
    for part in ALLOWED:
        assert _files(part), part
    assert not any(f.parent.name == "root" for f in _files("spec"))
    assert any(_part(m) == "spec" for _, m, _n in _imports(ROOT / "reference" / "system_timer.py"))
    assert CLI in {m for _, m, _n in _imports(ROOT / "spec" / "root" / "__main__.py")}


@pytest.mark.parametrize("part", sorted(PACKAGE))
def test_graph_has_every_module(part: str) -> None:
    graph = _graph()
    assert all(_module_name(f) in graph for f in _files(part))
