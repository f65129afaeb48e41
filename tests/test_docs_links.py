"""Every link and file path the documentation names resolves.

The pages live in ``docs/guides/`` (for users), ``docs/design/`` (how it works) and
``docs/results/`` (generated); ``wheelspec docs NAME`` finds a page by its file name alone. This
walks every Markdown file of the repository (relative links, and ``docs/...`` paths written as
text), every ``docs/...`` path in the package's Python files, and the help text of every command,
and fails on a path that does not exist. Guides and design pages name no commit: a measured tree
is named on a results page.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from wheelspec.conformance.cli import COMMANDS, main
from wheelspec.conformance.cli.docs import shipped

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("spec", "reference", "optimized", "conformance", "benchmarks")

#: ``[text](target)``: a Markdown link (images too); the target up to a space or ``)``.
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: a repository path into docs/ written as text: ``docs/guides/PROTOCOL.md``, ``docs/examples/heap_timer.js``
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w./-]*\.(?:md|js|json|html|png)\b")
#: a commit hash: 7 to 40 hex digits with at least one letter and one digit, or any after "commit"
HASH = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])"
                  r"|\bcommits? (?:of )?[0-9a-f]{7,40}\b")


def _files(pattern: str) -> list[Path]:
    """The repository's files matching ``pattern``, tracked or not, but not ignored ones (no build/,
    target/, node_modules/)."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", pattern], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in sorted(set(out)) if (ROOT / p).is_file()]


MARKDOWN = _files("*.md")


def _outside_code_blocks(text: str) -> str:
    """The text with fenced code blocks blanked out (shell transcripts name files of a user's cwd)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _broken_links(md: Path) -> list[str]:
    broken = []
    for target in LINK.findall(_outside_code_blocks(md.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor on the same page
        path = target.split("#", 1)[0]
        if not (md.parent / path).exists():
            broken.append(target)
    return broken


def test_the_markdown_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in MARKDOWN}
    assert {"README.md", "spec/SEMANTICS.md", "docs/guides/PROTOCOL.md", "docs/design/ENGINE.md",
            "docs/results/MATRIX.md"} <= names


@pytest.mark.parametrize("md", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(md):
    assert _broken_links(md) == []


@pytest.mark.parametrize("md", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_docs_path_in_a_page_exists(md):
    text = md.read_text(encoding="utf-8")
    assert [p for p in DOCS_PATH.findall(text) if not (ROOT / p).exists()] == []


def test_every_docs_path_in_the_package_exists():
    missing = []
    for pkg in PACKAGES:
        for py in _files(f"{pkg}/*.py"):
            for p in DOCS_PATH.findall(py.read_text(encoding="utf-8")):
                if not (ROOT / p).exists():
                    missing.append(f"{py.relative_to(ROOT)}: {p}")
    assert missing == []


def test_every_docs_path_in_the_help_exists(capsys):
    texts = []
    for argv in (["--help"], *([name, "--help"] for name in COMMANDS)):
        with pytest.raises(SystemExit):
            main(argv)
        texts.append(re.sub(r"\s+", " ", capsys.readouterr().out))
    named = {p for t in texts for p in DOCS_PATH.findall(t)}
    assert named, "no help text names a docs/ file: the pattern is stale"
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_page_names_are_unique_across_the_folders():
    """``wheelspec docs NAME`` finds a page by its name in whichever folder holds it."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    stems = [p.stem.lower() for p in pages] + ["semantics"]
    assert len(stems) == len(set(stems))
    folders = [ROOT / "docs" / f for f in ("guides", "design", "results")]
    assert [p for p in pages if p.parent not in folders] == [], "a page outside docs/guides, design, results"
    assert {p.resolve() for p in pages} <= {p.resolve() for p in shipped().values()}


@pytest.mark.parametrize("page", sorted([*(ROOT / "docs" / "guides").glob("*.md"),
                                         *(ROOT / "docs" / "design").glob("*.md")]),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_guides_and_design_pages_name_no_commit(page):
    assert HASH.findall(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", sorted((ROOT / "docs" / "results").glob("*.md")),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_results_pages_name_their_command_at_the_top(page):
    head = "\n".join(page.read_text(encoding="utf-8").splitlines()[:15])
    assert "wheelspec" in head and "`" in head, "a results page says at its top which command makes it"
    assert re.search(r"machine|cores?\b", head), "a results page says at its top which machine measured it"
