"""The HTML report of ``wheelspec analyze`` opened in a real headless browser (Debian's chromium):
the DOM has the expected headings and violating rows, the three plots load, and a screenshot is
not blank.  No chromium is a failure with instructions, never a skip: bash .ci/system-deps installs it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main

pytestmark = pytest.mark.external("chromium")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed; the report test needs Debian's chromium: "
                    "bash .ci/system-deps (apt-get install -y chromium)")
    return exe


def browse(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile{len(list(tmp.glob('profile*')))}"
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=90)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["analyze", "--synthetic", "30000", "--seed", "5", "--plant", "early,double", "--out", str(out)]) == 1
    return out


def test_report_files_are_written(report):
    for name in ("report.html", "analysis.json", "lateness_hist.png", "lateness_cdf.png", "events_over_time.png"):
        data = (report / name).read_bytes()
        assert len(data) > 1000, name
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_report_renders_in_headless_chromium(report, tmp_path):
    dom = browse(report / "report.html", tmp_path, "--dump-dom", "--virtual-time-budget=5000")
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for heading in ("<h1>wheelspec trace analysis</h1>", "<h2>Properties</h2>", "<h2>Violating rows</h2>",
                    '<h2>Lateness <span class="clock">(virtual clock)</span></h2>', "<h2>Events over time</h2>",
                    '<h3 id="viol-no-early-fire">no-early-fire (1)</h3>', '<h3 id="viol-fire-once">fire-once (1)</h3>',
                    "VIOLATIONS FOUND"):
        assert heading in html, heading
    assert html.count("data:image/png;base64,") == 3
    shot = tmp_path / "shot.png"
    r = browse(report / "report.html", tmp_path, f"--screenshot={shot}", "--window-size=1000,4000",
               "--hide-scrollbars")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] >= 2000 and img.shape[1] >= 900
    # rendered, not blank: a lot of non-white pixels, and the plots' colours (not just black text)
    nonwhite = (img < 0.95).any(axis=2).mean()
    colourful = int((img.max(axis=2) - img.min(axis=2) > 0.3).sum())
    assert nonwhite > 0.05 and colourful > 2000, (nonwhite, colourful)
