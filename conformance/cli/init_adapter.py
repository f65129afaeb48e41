"""``wheelspec init-adapter --lang LANG DIR``: write an adapter kit into DIR and say how to build and
check it.

A kit (``conformance/kits/LANG/``, shipped in the wheel) is a protocol layer
(``docs/guides/PROTOCOL.md``) plus a toy heap timer claiming ``strict``: the user replaces the toy's five
timer calls with calls into their own timer (``docs/guides/KITS.md``).  The Python kit needs no
protocol: its toy timer sits on the library adapter base (``docs/guides/PYTHON_ADAPTERS.md``), with a
pytest file, and is judged in-process (``--impl mytimer:adapter``).  The command never overwrites a
file: a file already in DIR with the kit's exact content is left as it is, any other file of the
same name stops the command before anything is written.

Light at import: the standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import shutil
import sys
from pathlib import Path

from wheelspec.spec.errors import UserError


@dataclasses.dataclass(frozen=True)
class Kit:
    """One language's kit: the file the user fills in, how to build the toy and how to run it.
    ``build`` and ``run`` are templates: ``{d}`` is the shell-quoted target directory."""

    fill_in: str
    build: str
    run: str
    tool: str            # the command the build needs on PATH
    install_hint: str    # how to get it (Debian names, as .ci/system-deps installs them)


KITS: dict[str, Kit] = {
    "java": Kit("ToyTimer.java", "javac -d {d}/build {d}/*.java", "java -cp {d}/build ToyTimer",
                "javac", "a JDK 17 or newer (apt-get install openjdk-17-jdk-headless)"),
    "javascript": Kit("timer.js", "node --check {d}/timer.js", "node {d}/timer.js",
                      "node", "Node.js (apt-get install nodejs)"),
    "rust": Kit("src/main.rs", "cargo build --release --offline --manifest-path {d}/Cargo.toml",
                "{d}/target/release/toy-timer", "cargo", "cargo (apt-get install cargo)"),
    "go": Kit("timer.go", "(cd {d} && go build -o toy-timer .)", "{d}/toy-timer",
              "go", "Go 1.19 or newer (apt-get install golang-go)"),
    "cpp": Kit("main.cpp", "g++ -std=c++17 -O2 -o {d}/toy-timer {d}/main.cpp", "{d}/toy-timer",
               "g++", "a C++17 compiler (apt-get install g++)"),
}


@dataclasses.dataclass(frozen=True)
class LibraryKit:
    """A Python kit: a module on the library adapter base, judged in-process from its directory
    (``--impl MODULE:adapter`` imports from the current directory), and its pytest file."""

    fill_in: str
    test: str     # the kit's own test line, run in its directory
    impl: str     # the --impl value naming its adapter factory


LIBRARY_KITS: dict[str, LibraryKit] = {
    "python": LibraryKit("mytimer.py", "python -m pytest -q test_mytimer.py", "mytimer:adapter"),
}

#: other names of a kit's language, as users type them (TypeScript runs the JavaScript kit's adapter)
ALIASES: dict[str, str] = {"js": "javascript", "node": "javascript", "ts": "javascript", "c++": "cpp"}

#: every language ``--lang`` accepts, aliases aside
LANGS: tuple[str, ...] = tuple(sorted([*KITS, *LIBRARY_KITS]))


def language(value: str) -> str:
    """``--lang``'s value as a kit name: an alias (:data:`ALIASES`) becomes its language."""
    return ALIASES.get(value.lower(), value.lower())


def configure_init_adapter(p: argparse.ArgumentParser) -> None:
    from wheelspec.conformance.cli.args import describe

    aliases = ", ".join(f"{a} = {lang}" for a, lang in ALIASES.items())
    p.add_argument("--lang", required=True, type=language, choices=LANGS, metavar="LANG",
                   help=f"the kit's language: {', '.join(LANGS)} (also {aliases})")
    p.add_argument("dir", metavar="DIR",
                   help="where the kit goes (created if missing; an existing file is never overwritten)")
    describe(p, [
        ("wheelspec init-adapter --lang java my-adapter",
         "a Java kit with a toy timer in ./my-adapter; prints its build and check lines"),
        ("wheelspec init-adapter --lang rust .", "a Rust crate in the current directory"),
        ("wheelspec init-adapter --lang python mytimer",
         "a Python timer skeleton on the library adapter base, its test and its check line"),
    ], ["0    the kit was written (or was already there, unchanged)",
        "2    a file of the kit exists in DIR with other content (nothing was written), DIR is a file,",
        "     or a usage error (one line on stderr)",
        "130  interrupted by SIGINT (Ctrl-C); 143 by SIGTERM: the files written so far stay (run it again)"],
        common=None)


def kit_files(lang: str) -> dict[str, bytes]:
    """The kit of ``lang``: its files' paths (relative, ``/``-separated) and contents."""
    from importlib.resources import files

    root = files("wheelspec.conformance").joinpath("kits", lang)
    out: dict[str, bytes] = {}

    def walk(node, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__":
                continue  # bytecode of the Python kit, where a test imported it
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.is_file():
                out[prefix + child.name] = child.read_bytes()

    if not root.is_dir():
        raise UserError(f"the {lang} kit is missing from this installation of wheelspec "
                        f"(expected it in {root})")
    walk(root, "")
    if not out:
        raise UserError(f"the {lang} kit in {root} is empty")
    return out


def commands(lang: str, target: str) -> tuple[str, str, str]:
    """The build line, the command that runs the adapter and the check line, for a kit written to
    ``target`` (as the user typed it: the lines are run from the same directory)."""
    kit = KITS[lang]
    d = shlex.quote(target.rstrip("/") or "/")
    run = kit.run.format(d=d)
    return kit.build.format(d=d), run, f"wheelspec check --impl {shlex.quote('cmd:' + run)}"


def run_init_adapter(args: argparse.Namespace) -> int:
    lang, target = args.lang, args.dir
    dest = Path(target)
    if dest.exists() and not dest.is_dir():
        raise UserError(f"{target} is a file, not a directory")
    files = kit_files(lang)
    todo: list[tuple[Path, bytes]] = []
    clashes: list[str] = []
    for rel, data in files.items():
        path = dest.joinpath(*rel.split("/"))
        if path.exists() or path.is_symlink():
            if not path.is_file() or path.read_bytes() != data:
                clashes.append(str(path))
            continue  # the kit's own file, unchanged: nothing to do
        todo.append((path, data))
    if clashes:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise UserError(f"{clashes[0]} already exists with other content{more}; nothing was "
                        f"written (choose another DIR, or move the file away)")
    for path, data in todo:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as f:  # exclusive: never replaces a file that appeared meanwhile
            f.write(data)
    written = len(todo)
    print(f"wrote {written} file{'s' if written != 1 else ''} of the {lang} kit to {target}"
          + (f" ({len(files) - written} already there, unchanged)" if written < len(files) else ""))
    for rel in files:
        print(f"  {dest.joinpath(*rel.split('/'))}")
    if lang in LIBRARY_KITS:
        _print_library_lines(LIBRARY_KITS[lang], dest)
    else:
        _print_protocol_lines(lang, target, dest)
    return 0


def _print_library_lines(kit: LibraryKit, dest: Path) -> None:
    print(f"fill in: {dest / kit.fill_in} (replace the toy timer with yours; keep the adapter's hooks, "
          f"docs/guides/PYTHON_ADAPTERS.md says what each must return)")
    test, check = kit.test, f"wheelspec check --impl {kit.impl}"
    print(f"in {dest}:")
    print(f"test:   {test}")
    print(f"check:  {check}")


def _print_protocol_lines(lang: str, target: str, dest: Path) -> None:
    kit = KITS[lang]
    build, _run, check = commands(lang, target)
    print(f"fill in: {dest.joinpath(*kit.fill_in.split('/'))} (the toy timer's calls; "
          f"{dest / 'README.md'} says what each must do)")
    print("from this directory:")
    print(f"build:  {build}")
    print(f"check:  {check}")
    if shutil.which(kit.tool) is None:
        print(f"init-adapter: note: {kit.tool} is not on PATH; the build needs {kit.install_hint}",
              file=sys.stderr)
