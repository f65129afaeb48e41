"""The HTML report of ``wheelspec analyze``: properties, violating rows, lateness and throughput
plots.  Plots are matplotlib PNGs, written as files and embedded in the page (data URIs), so the
page is one self-contained file that any browser opens offline."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def plots(result: dict[str, Any]) -> dict[str, bytes]:
    """The report's figures as PNG bytes: lateness histogram, lateness CDF, events over time."""
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    # Text in the figures (implementation names come from the trace) is shown as written, never
    # parsed as mathtext: a name such as "$\frac{$" would otherwise stop the report.
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        return _plots(result)


def _plots(result: dict[str, Any]) -> dict[str, bytes]:
    import matplotlib.pyplot as plt
    import numpy as np

    out: dict[str, bytes] = {}
    hist = result["lateness_histogram"]
    fig, ax = plt.subplots(figsize=(8, 4))
    for impl, pairs in hist.items():
        if pairs:
            x, c = np.asarray(pairs).T
            ax.bar(x, c, width=max(1, (x.max() - x.min()) / 200), alpha=0.6, label=impl or "(unnamed)")
    ax.set_xlabel("lateness = fire time - expiration (ms)")
    ax.set_ylabel("fires")
    ax.set_title("Lateness histogram")
    ax.axvline(0, color="k", lw=0.8)
    if hist:
        ax.legend()
    out["lateness_hist.png"] = _png(fig)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    for impl, pairs in hist.items():
        if pairs:
            x, c = np.asarray(pairs).T
            ax.step(x, np.cumsum(c) / c.sum(), where="post", label=impl or "(unnamed)")
    ax.set_xlabel("lateness (ms)")
    ax.set_ylabel("fraction of fires")
    ax.set_title("Lateness CDF")
    ax.grid(alpha=0.3)
    if hist:
        ax.legend()
    out["lateness_cdf.png"] = _png(fig)
    plt.close(fig)

    tp = result["throughput"]
    fig, ax = plt.subplots(figsize=(8, 4))
    impls = sorted({s["impl"] for s in tp["series"]})
    for impl in impls:
        pts = [s for s in tp["series"] if s["impl"] == impl]
        xs = [tp["start"] + s["bucket"] * tp["bucket_ms"] for s in pts]
        ax.plot(xs, [s["events"] for s in pts], marker=".", label=f"{impl or '(unnamed)'} events")
        ax.plot(xs, [s["fires"] for s in pts], ls="--", label=f"{impl or '(unnamed)'} fires")
    ax.set_xlabel(f"virtual time (ms), buckets of {tp['bucket_ms']} ms")
    ax.set_ylabel("rows per bucket")
    ax.set_title("Events over time")
    if impls:
        ax.legend()
    out["events_over_time.png"] = _png(fig)
    plt.close(fig)
    return out


def _table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape('' if r.get(c) is None else str(r.get(c)))}</td>" for c in cols)
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(result: dict[str, Any], images: dict[str, bytes], title: str = "wheelspec trace analysis") -> str:
    props = result["properties"]
    verdict = "all judged properties hold" if result["ok"] else "VIOLATIONS FOUND"
    prop_rows = [{"property": p, "violations": v["violations"] if v.get("judged", True) else "not judged",
                  **({"by profile": ", ".join(f"{k}: {n}" for k, n in v["by_profile"].items())}
                     if "by_profile" in v else {})}
                 for p, v in props.items()]
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p class='verdict {'ok' if result['ok'] else 'bad'}'>{result['rows']} rows, {result['runs']} runs, "
             f"engine {html.escape(str(result.get('engine', '?')))}: <b>{verdict}</b></p>",
             "<h2>Properties</h2>", _table(prop_rows, ["property", "violations", "by profile"]),
             f"<p>Not judged by set-based queries (use <code>wheelspec check</code>): "
             f"{html.escape(', '.join(result['not_judged']))}.</p>"]
    bad = [(p, v) for p, v in props.items() if v["violations"]]
    if bad:
        parts.append("<h2>Violating rows</h2>")
        for p, v in bad:
            parts.append(f"<h3>{html.escape(p)} ({v['violations']})</h3>")
            parts.append(_table(v["rows"], ["run", "seq", "kind", "id", "time", "deadline"]))
    parts.append("<h2>Lateness</h2>")
    parts.append(_table(result["lateness"], ["impl", "level", "profile", "count", "early", "min", "p50", "p90",
                                             "p99", "p999", "max", "mean"]))
    for name, alt in (("lateness_hist.png", "Lateness histogram"), ("lateness_cdf.png", "Lateness CDF")):
        if name in images:
            parts.append(f"<img alt='{alt}' src='data:image/png;base64,{base64.b64encode(images[name]).decode()}'>")
    parts.append("<h2>Events over time</h2>")
    if "events_over_time.png" in images:
        parts.append("<img alt='Events over time' src='data:image/png;base64,"
                     f"{base64.b64encode(images['events_over_time.png']).decode()}'>")
    style = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}th{background:#eee}"
             ".ok{color:#060}.bad{color:#b00}img{max-width:100%;display:block;margin:1em 0}")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def write_report(result: dict[str, Any], out_dir: str | Path) -> Path:
    """Write ``report.html`` and the PNG files into ``out_dir``; returns the HTML path."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    images = plots(result)
    for name, data in images.items():
        (d / name).write_bytes(data)
    page = d / "report.html"
    page.write_text(render(result, images))
    return page
