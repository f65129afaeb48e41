"""Units in ``wheelspec analyze``'s output: the terminal's lateness lines name their unit (the
trace's clock), and the lateness histogram's legend shows each series as it is drawn, fill and
outline in one colour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wheelspec.conformance.cli import main
from wheelspec.conformance.traces import html_report

pytest.importorskip("matplotlib", reason="the plots need the 'reports' extra")


def test_lateness_lines_and_histogram_legend_carry_their_units(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    figures: list[Any] = []
    real_png = html_report._png

    def keep(fig: Any) -> bytes:
        figures.append(fig)
        return real_png(fig)

    monkeypatch.setattr(html_report, "_png", keep)
    assert main(["analyze", "--synthetic", "3000", "--seed", "5", "--out", str(tmp_path / "out")]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("lateness ")]
    assert lines, "the synthetic trace has fires"
    units = {unit for _, unit, _ in html_report.CLOCKS.values()}
    assert all(any(f"({u})" in ln for u in units) for ln in lines), lines
    hist = next(f for f in figures if f.axes[0].get_title().startswith("Lateness histogram"))
    ax = hist.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    handles = legend.legend_handles
    assert len(handles) == len([p for p in ax.patches if p.get_label() and not p.get_label().startswith("_")])
    for h in handles:  # the outline (opaque edge) and the fill (translucent face) of one colour
        edge, face = h.get_edgecolor(), h.get_facecolor()
        assert edge[3] == 1.0 and face[3] < 1.0 and tuple(edge[:3]) == tuple(face[:3])
        assert h.get_linewidth() > 0
