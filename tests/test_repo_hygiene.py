"""Files describe the code as it is: no history narration in code, tests or docs.

History (which session, run or issue did what, and who) belongs in commit messages.  This is the
same search the project's acceptance uses: ``grep -rniE "session [0-9]|run [A-H]\\b|issue [0-9]"``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NARRATION = re.compile(r"session [0-9]|run [A-H]\b|issue [0-9]", re.IGNORECASE)
TEXT = (".py", ".md", ".js", ".java", ".toml", ".txt", "run", "system-deps", "typecheck")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split() if p.endswith(TEXT) and (ROOT / p).exists()]


def _narration(paths: list[Path], root: Path = ROOT) -> list[str]:
    hits = []
    for path in paths:
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if NARRATION.search(line):
                hits.append(f"{path.relative_to(root)}:{n}: {line.strip()[:100]}")
    return hits


def test_no_history_narration_in_tracked_files() -> None:
    files = _tracked()
    assert len(files) > 100
    assert _narration(files) == []


def test_the_search_finds_narration(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    # spelled in pieces, so that this file itself holds no narration
    probe.write_text("# measured in " + "Session" + " 6, run" + " G\nx = 1  # see " + "issue" + " 7\nok = 'fine'\n")
    assert [h.split(":")[:2] for h in _narration([probe], tmp_path)] == [["probe.py", "1"], ["probe.py", "2"]]
