"""Every HTML report opened in a real headless browser (Debian's chromium) and checked as a reader
would see it: no console errors, every image loads (naturalWidth > 0), the key parts are visible,
every column and property is explained; plus what makes the reports readable: a robust lateness
axis (one fire 5 s early among thousands within 50 ms), lateness labelled by its clock, wheel levels
only for wheels, matrix failures grouped by shape.

The pages have no scripts of their own: the test opens a copy of each page with a small probe
script added, which records resource errors and console calls, measures the images and the key
elements, and writes the result into the DOM, read back with ``--dump-dom``.  Chromium's own
console log (``--enable-logging=stderr``) must stay empty too.  No chromium is a failure with
instructions, never a skip: bash .ci/system-deps installs it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from test_trace_report import browse

from wheelspec.conformance.cli import main
from wheelspec.spec import properties
from wheelspec.spec.show import impl_dirname

pytestmark = pytest.mark.external("chromium")

#: added at the start of <head>: records errors before anything else loads
PROBE_HEAD = """<script>
window.__probe = {errors: [], console: []};
addEventListener('error', e => window.__probe.errors.push(
  (e.target && e.target.src ? 'resource ' + e.target.src.slice(-80) : String(e.message))), true);
for (const k of ['error', 'warn']) {
  const f = console[k].bind(console);
  console[k] = (...a) => { window.__probe.console.push(k + ': ' + a.join(' ')); f(...a); };
}
</script>"""
#: added before </body>: measures images and key elements once everything has loaded
PROBE_TAIL = """<script>
addEventListener('load', () => {
  const vis = e => { if (!e) return false; const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const out = {errors: window.__probe.errors, console: window.__probe.console,
    images: [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                             w: i.naturalWidth, shown: vis(i)})),
    visible: Object.fromEntries(KEYS.map(k => [k, vis(document.querySelector(k))]))};
  const pre = document.createElement('pre');
  pre.id = 'probe-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def probe(page: Path, tmp: Path, keys: list[str], own_scripts: bool = False) -> tuple[dict, str]:
    """Open ``page`` (a copy beside it, with the probe) in headless chromium: the probe's result
    (``logged``: the console lines chromium logged) and the DOM."""
    text = page.read_text()
    assert own_scripts or "<script" not in text.lower(), "a report page has no scripts of its own"
    probed = text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace(
        "</body>", PROBE_TAIL.replace("KEYS", json.dumps(keys)) + "</body>", 1)
    copy = page.with_name(f".probe-{page.name}")   # beside the page: relative image paths resolve
    copy.write_text(probed)
    try:
        r = browse(copy, tmp, "--dump-dom", "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0")
    finally:
        copy.unlink()
    assert r.returncode == 0, r.stderr[-2000:]
    logged = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', r.stdout, re.S)
    assert m, "the probe did not run: " + r.stdout[-1000:]
    result = json.loads(html.unescape(m.group(1)))
    result["logged"] = logged
    return result, r.stdout


def assert_clean(result: dict, images: int) -> None:
    assert result["errors"] == [] and result["console"] == [] and result["logged"] == [], result
    assert len(result["images"]) == images, result["images"]
    for img in result["images"]:
        assert img["ok"] and img["w"] > 100 and img["shown"], img
    hidden = [k for k, v in result["visible"].items() if not v]
    assert not hidden, f"not visible: {hidden}"


def screenshot(page: Path, tmp: Path, chroma: float = 0.3, pixels: int = 2000) -> None:
    """A screenshot that is not blank: text, and colour (``pixels`` pixels with a channel spread
    over ``chroma``: the plots' lines, the matrix's pale cell backgrounds)."""
    import matplotlib.image as mpimg

    shot = tmp / f"{page.stem}.png"
    r = browse(page, tmp, f"--screenshot={shot}", "--window-size=1200,4000", "--hide-scrollbars")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    img = mpimg.imread(shot)[..., :3]
    nonwhite = (img < 0.95).any(axis=2).mean()
    colourful = int((img.max(axis=2) - img.min(axis=2) > chroma).sum())
    assert nonwhite > 0.03 and colourful > pixels, (nonwhite, colourful)


@pytest.mark.slow
def test_the_probe_catches_console_errors_and_broken_images(tmp_path):
    """The checks can fail: a page with a console error and a missing image is caught."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><title>bad</title></head><body><h1>t</h1>"
                    "<img alt='gone' src='missing.png'><p id='hidden' style='display:none'>x</p>"
                    "<script>console.error('boom')</script></body></html>")
    result, _ = probe(page, tmp_path, ["h1", "#hidden", "#absent"], own_scripts=True)
    assert any("missing.png" in e for e in result["errors"]), result
    assert result["console"] == ["error: boom"] and any('"boom"' in ln for ln in result["logged"]), result
    assert result["images"] == [{"alt": "gone", "ok": False, "w": 0, "shown": True}]
    assert result["visible"] == {"h1": True, "#hidden": False, "#absent": False}
    with pytest.raises(AssertionError):
        assert_clean(result, 1)
    page2 = tmp_path / "clean.html"
    page2.write_text("<!DOCTYPE html><html><head></head><body><h1>t</h1></body></html>")
    result, _ = probe(page2, tmp_path, ["h1"])
    assert_clean(result, 0)


# ------------------------------------------------------------------ wheelspec analyze ------------
ANALYZE_KEYS = ["h1", "p.verdict", "#by-profile", "h2", "p.clockinfo", "#lateness-hist img", "#lateness-cdf img",
                "#events-over-time img", "dl.glossary"]


def _properties_explained(dom: str, result: dict) -> None:
    for name in result["properties"]:
        assert properties.get(name, properties.TRACE).summary in html.unescape(dom), name
    for name in result["not_judged"]:
        assert properties.get(name, properties.HISTORY).summary in html.unescape(dom), name
    for col in ("count", "early", "p50", "p99", "max"):
        assert f"<dt>{col}</dt>" in dom, col


def _plot(dom: str, fid: str) -> dict:
    m = re.search(rf"<figure id=\"{fid}\" data-plot=\"([^\"]*)\"", dom)
    assert m, f"figure {fid} has no data-plot"
    return json.loads(html.unescape(m.group(1)))


@pytest.mark.slow
def test_analyze_report_of_a_synthetic_trace(tmp_path):
    out = tmp_path / "synth"
    assert main(["analyze", "--synthetic", "8000", "--seed", "5", "--plant", "early,double", "--out", str(out)]) == 1
    result = json.loads((out / "analysis.json").read_text())
    assert result["clock"] == "virtual"
    probed, dom = probe(out / "report.html", tmp_path, ANALYZE_KEYS + ["#viol-no-early-fire", "#viol-fire-once"])
    assert_clean(probed, 3)
    _properties_explained(dom, result)
    assert "<th>level</th>" in dom   # the synthetic wheels record their wheel size
    assert "virtual clock" in dom and "not a measured delay" in dom
    # the by-profile counts are explained next to each profile's firing rule
    assert "Which profiles these fires fit" in dom and "fires it calls early" in dom
    # violating rows grouped by shape, one example each
    assert "fire before its deadline" in dom
    ev = _plot(dom, "events-over-time")
    assert ev["bucket_ms"] in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000)
    screenshot(out / "report.html", tmp_path)


def _outlier_trace(path: Path) -> None:
    """A synthetic trace where exactly one fire is 5046 ms early (its add's delay and expiration
    moved with it, so the trace stays well-formed): a no-early-fire violation and a huge outlier."""
    import pyarrow as pa

    from wheelspec.conformance.traces.format import write_trace
    from wheelspec.conformance.traces.synth import synthetic_trace

    t, _ = synthetic_trace(20000, seed=3)
    d = {c: t.column(c).to_pylist() for c in t.column_names}
    f = next(i for i, k in enumerate(d["kind"]) if k == "fire" and d["delay"][i] is not None)
    a = next(i for i in range(f, -1, -1) if d["kind"][i] == "add" and d["id"][i] == d["id"][f]
             and d["run"][i] == d["run"][f])
    shift = d["time"][f] + 5046 - d["deadline"][f]
    for col, i in (("deadline", f), ("deadline", a), ("delay", a), ("delay", f)):
        d[col][i] += shift
    write_trace(pa.table(d, schema=t.schema), path)


@pytest.mark.slow
def test_analyze_report_with_one_huge_outlier_has_a_readable_histogram(tmp_path):
    trace = tmp_path / "outlier.parquet"
    _outlier_trace(trace)
    out = tmp_path / "outlier"
    assert main(["analyze", str(trace), "--out", str(out)]) == 1
    result = json.loads((out / "analysis.json").read_text())
    assert result["properties"]["no-early-fire"]["violations"] == 1
    probed, dom = probe(out / "report.html", tmp_path, ANALYZE_KEYS)
    assert_clean(probed, 3)
    h = _plot(dom, "lateness-hist")
    fires = sum(c for pairs in result["lateness_histogram"].values() for _, c in pairs)
    assert h["fires"] == fires and h["min"] == -5046
    # the outlier is clipped and said so; the axis spans the main mass, not -5046
    assert h["clipped_below"] == 1 and h["x_min"] > -100 and h["x_max"] < 500, h
    assert "clipped" in dom and "lowest -5046" in dom
    # the main mass is spread over several bins: no bin holds most fires, many hold some
    totals = [sum(cs) for cs in zip(*h["counts"].values())]
    assert sum(totals) == fires - h["clipped_below"] - h["clipped_above"]
    assert max(totals) < 0.5 * fires, totals
    assert sum(t >= 0.01 * fires for t in totals) >= 8, totals
    assert len(h["edges"]) - 1 >= 20
    screenshot(out / "report.html", tmp_path)


@pytest.mark.slow
def test_analyze_report_of_a_campaign_trace_labels_virtual_time_and_has_no_levels_for_a_heap(tmp_path):
    traces = tmp_path / "traces"
    assert main(["check", "--impl", "reference", "--impl", "reference-mock", "--no-corpus", "--schedules", "12",
                 "--kinds", "timer", "--out", str(tmp_path / "cx"), "--write", "traces=" + str(traces)]) == 0
    both = tmp_path / "both"
    assert main(["analyze", str(traces), "--out", str(both)]) == 0
    result = json.loads((both / "analysis.json").read_text())
    assert result["clock"] == "virtual"
    levels = {(g["impl"], g["level"] is not None) for g in result["lateness"]}
    assert levels == {("reference", True), ("reference-mock", False)}, levels   # wheel levels only for the wheel
    heap = tmp_path / "heap"
    assert main(["analyze", str(traces / f"{impl_dirname('reference-mock')}.parquet"), "--out", str(heap)]) == 0
    probed, dom = probe(heap / "report.html", tmp_path, ANALYZE_KEYS)
    assert_clean(probed, 3)
    assert "<th>level</th>" not in dom and "<dt>level</dt>" not in dom
    assert "Lateness <span class=\"clock\">(virtual clock)</span>" in dom
    assert "virtual ms" in dom and "not a measured delay" in dom
    ev = _plot(dom, "events-over-time")
    # a bucket a reader takes in: 1-2-5 steps or whole seconds, minutes, hours, days
    assert re.fullmatch(r"(1|2|5)0*", str(ev["bucket_ms"])) or ev["bucket_ms"] % 1000 == 0, ev
    screenshot(heap / "report.html", tmp_path)


# ------------------------------------------------------------------ the matrix page --------------
@pytest.mark.slow
def test_matrix_page(tmp_path):
    code = main(["matrix", "--impl", "stdlib-sched", "--impl", "asyncio-res-15.625ms", "--impl", "asyncio-live",
                 "--schedules", "12",
                 "--rt-runs", "1", "--rt-tasks", "30", "--out", str(tmp_path)])
    assert code in (0, 1)
    page = tmp_path / "matrix.html"
    rows = json.loads((tmp_path / "matrix.json").read_text())["rows"]
    probed, dom = probe(page, tmp_path, ["h1", "table", "dl.glossary", "#lateness img", "table.failures"])
    assert_clean(probed, 1)
    for col in properties.MATRIX_COLUMNS:   # every column explained, with its properties' summaries
        assert f"<dt>{html.escape(col.name)}</dt>" in dom, col.name
        for judge, name in col.shows:
            assert properties.get(name, judge).summary in html.unescape(dom), name
    for head in ("implementation", "mode", "claims", "profiles satisfied"):
        assert f"<dt>{head}</dt>" in dom, head
    # failures grouped by shape: far fewer rows than failures, each with its count and one example
    failures = sum(len(r["failures"]) for r in rows)
    table = dom.split('<table class="failures">', 1)[1].split("</table>", 1)[0]
    groups = table.count("<tr>") - 1
    assert failures >= 10 and groups < failures / 2, (failures, groups)
    assert "more</summary>" in table
    screenshot(page, tmp_path, chroma=0.05, pixels=20_000)
