"""The bench plot (``benchmarks.report.write_plot``): every series distinguishable by its colour and
marker pair, the same in every panel, and the legend outside every panel's plot area."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from wheelspec.benchmarks import report
from wheelspec.benchmarks.registry import DRIVERS
from wheelspec.benchmarks.suite import Cell

plt = pytest.importorskip("matplotlib.pyplot", reason="the plot needs the 'reports' extra")


def _results(impls: list[str]) -> types.SimpleNamespace:
    cells = [Cell(w, n, impl, "ok", runs_s=[n * (i + 1) * 1e-7], ops=n)
             for i, impl in enumerate(impls) for w in ("insert", "cancel") for n in (10**3, 10**4, 10**5)]
    return types.SimpleNamespace(cells=cells, options=types.SimpleNamespace(impls=impls))


def test_every_series_has_its_own_colour_and_marker() -> None:
    impls = sorted(DRIVERS)
    assert len(impls) > 10, "the registry's series outnumber the 10-colour cycle this test guards"
    styles = report.series_styles(impls)
    pairs = [(tuple(c), m) for c, m in styles.values()]
    assert len(set(pairs)) == len(impls)
    assert len({c for c, _ in pairs}) == len(impls), "a colour each"


def test_the_legend_is_outside_every_panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    impls = sorted(DRIVERS)
    figures = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig: figures.append(fig))
    report.write_plot(_results(impls), str(tmp_path / "bench.png"), plt)  # type: ignore[arg-type]
    fig = figures[0]
    try:
        assert (tmp_path / "bench.png").stat().st_size > 0
        assert all(ax.get_legend() is None for ax in fig.axes)
        (legend,) = fig.legends
        assert [t.get_text() for t in legend.get_texts()] == impls
        fig.canvas.draw()
        box = legend.get_window_extent()
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent()), ax.get_title()
        lines = {ln.get_label(): (ln.get_color(), ln.get_marker()) for ax in fig.axes for ln in ax.get_lines()}
        assert len(set(map(str, lines.values()))) == len(impls)
    finally:
        real_close(fig)
