"""``wheelspec docs [NAME]``: list and print the documentation shipped in the wheel.

The help of the commands points at pages (``wheelspec docs PROTOCOL``) and at an example adapter
(``wheelspec docs heap_timer.js``); they ship as package data of ``wheelspec.docs`` (the
repository's ``docs/`` folder, ``pyproject.toml``) and ``wheelspec.spec`` (``SEMANTICS.md``), so a
``pip install wheelspec`` without the repository has them too.  In a source checkout (an editable
install) they are read from the checkout.

Light at import: the standard library only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wheelspec.spec.errors import UserError


def configure_docs(p: argparse.ArgumentParser) -> None:
    from wheelspec.conformance.cli.args import describe

    describe(p, [("wheelspec docs", "list the pages and examples"),
                 ("wheelspec docs PROTOCOL | less", "read the adapter protocol"),
                 ('wheelspec check --impl "cmd:node $(wheelspec docs --path heap_timer.js)"',
                  "check the shipped example adapter (needs Node.js)")],
             ["0    printed", "2    no such document (the known ones are listed)"])
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="a page (PROTOCOL, protocol.md, docs/PROTOCOL.md: case and .md optional) or an example "
                        "(heap_timer.js); without NAME, list them")
    p.add_argument("--path", action="store_true",
                   help="print where the file is instead of its text (for example to run the shipped "
                        "example: wheelspec check --impl \"cmd:node $(wheelspec docs --path heap_timer.js)\")")


def _package_dir(name: str) -> Path | None:
    """The directory of package ``name`` (a namespace package such as ``wheelspec.docs`` too), or
    None when it is not installed."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def doc_dirs() -> list[Path]:
    """Where the shipped files are: the installed ``wheelspec.docs`` package, else (an editable
    install, whose finder maps only the packages it was installed with) the checkout's ``docs/``."""
    import wheelspec.conformance

    installed = _package_dir("wheelspec.docs")
    if installed is not None and installed.is_dir():
        return [installed]
    checkout = Path(wheelspec.conformance.__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "docs").is_dir():
        return [checkout / "docs"]
    return []


def shipped() -> dict[str, Path]:
    """Every printable file: page name (``PROTOCOL``, ``SEMANTICS``) or example file name
    (``heap_timer.js``) -> its path, in a stable order."""
    import wheelspec.spec

    found: dict[str, Path] = {}
    for d in doc_dirs():
        for f in sorted(d.glob("*.md")):
            found.setdefault(f.stem, f)
        for f in sorted((d / "examples").glob("*")):
            if f.is_file():
                found.setdefault(f.name, f)
    semantics = Path(wheelspec.spec.__file__).parent / "SEMANTICS.md"
    if semantics.is_file():
        found.setdefault("SEMANTICS", semantics)
    return dict(sorted(found.items(), key=lambda kv: (kv[1].suffix != ".md", kv[0].lower())))


def lookup(name: str) -> Path:
    """The shipped file called ``name``: ``PROTOCOL``, ``protocol.md``, ``docs/PROTOCOL.md``,
    ``heap_timer.js``, ``docs/examples/heap_timer.js`` (case-insensitive)."""
    files = shipped()
    key = name.replace("\\", "/").rsplit("/", 1)[-1]
    if key.lower().endswith(".md"):
        key = key[:-3]
    for k, path in files.items():
        if k.lower() == key.lower():
            return path
    known = ", ".join(files) or "none (the wheelspec.docs package is not installed)"
    raise UserError(f"no shipped document {name!r} (known: {known}; `wheelspec docs` lists them)")


def _title(path: Path) -> str:
    """A page's first heading, or the example's first comment line."""
    try:
        with path.open(encoding="utf-8") as f:
            for line in f:
                s = line.strip()
                if s.startswith("#") and path.suffix == ".md":
                    return s.lstrip("#").strip()
                if s.startswith("//"):
                    return s.lstrip("/").strip()
    except OSError:
        return ""
    return ""


def run_docs(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:
        # `wheelspec docs PROTOCOL | head`: the reader has what it wanted.  Point stdout at
        # /dev/null so that the interpreter's final flush does not fail a second time.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.name is None:
        files = shipped()
        if not files:
            raise UserError("no documentation found: the wheelspec.docs package is not installed")
        width = max(map(len, files))
        for name, path in files.items():
            print(f"{name:{width}}  {_title(path)}")
        print("\nwheelspec docs NAME prints one; wheelspec docs --path NAME says where it is", file=sys.stderr)
        return 0
    path = lookup(args.name)
    if args.path:
        print(path)
        return 0
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
