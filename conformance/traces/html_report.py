"""The HTML report of ``wheelspec analyze``: properties (each with its registry summary), violating
rows grouped by shape, lateness and throughput plots.  Plots are matplotlib PNGs, written as files
and embedded in the page (data URIs), so the page is one self-contained file that any browser
opens offline.

What makes the page readable rather than merely complete:

* the lateness histogram's x range is robust: one fire 5 s early among thousands within 50 ms
  must not squeeze the rest into one bar at 0.  The range covers the 0.1th..99.9th percentile (1st..99th
  under 1000 fires), the quartiles +- 3 interquartile ranges and 0; fires outside it are *clipped* and
  counted above the plot.  A heavy tail inside that range gets a symlog axis (linear around 0, logarithmic beyond).
  The layout (:func:`histogram_layout`) is embedded next to the image as JSON, so a reader or a
  test can check the axis range without reading pixels;
* lateness is labelled by the trace's clock (:data:`.format.CLOCK_KEY`): on a virtual clock it is
  how far a test moved the clock past an expiration, not a measured delay; traces on different
  clocks are never pooled into one plot;
* wheel levels appear only when the trace has them (a heap timer records no wheel size);
* every column and property is explained on the page; legends sit outside the axes;
* all text from the trace is HTML-escaped, and matplotlib never parses it as mathtext.
"""

from __future__ import annotations

import base64
import bisect
import html
import io
import json
import math
from pathlib import Path
from typing import Any

from wheelspec.conformance.optional import available, install_hint
from wheelspec.spec import properties
from wheelspec.spec.profiles import PROFILE_NAMES, behaviour

#: the line a report without plots shows, and ``wheelspec analyze --out`` prints
PLOTS_LEFT_OUT = f"Plots left out: they need the 'reports' extra ({install_hint('reports')})."
#: bins of the lateness histogram (at most; integer lateness never gets bins narrower than 1 ms)
HIST_BINS = 60
#: a range wider than this many interquartile ranges is drawn on a symlog axis
SYMLOG_SPREAD = 30

#: per clock (:func:`.analyze.trace_clock`): short name, unit label, explanation on the page
CLOCKS: dict[str, tuple[str, str, str]] = {
    "virtual": ("virtual clock", "virtual ms",
                "This trace's clock is virtual: a test moved it (a campaign of <code>wheelspec check "
                "--write traces=DIR</code>, or a synthetic trace). Lateness is how far the clock had been moved past a "
                "task's expiration when the task fired, not a measured delay: a schedule that jumps the clock by "
                "40 s shows its fires up to 40 s \"late\". It tells which fires wait for the next advance, not how "
                "fast the timer is."),
    "real": ("wall clock", "ms, wall clock",
             "This trace's clock is the wall clock: lateness is a measured delay between a task's expiration and "
             "its run."),
    "unstated": ("clock not stated", "ms of the trace's clock",
                 "The trace does not say which clock its <code>time</code> column reads (file metadata "
                 "<code>wheelspec.clock</code>, docs/guides/TRACE_FORMAT.md). Lateness is in the trace's own "
                 "milliseconds: a "
                 "measured delay only if that clock was a wall clock."),
    "mixed": ("mixed clocks", "ms",
              "The trace files state different clocks (some virtual, some wall clock). Lateness measured on one "
              "and moved by a test on the other cannot be compared, so no lateness plot pools them: analyze the "
              "files of each clock separately."),
}

#: per clock: what the time axis of "events over time" reads
TIME_AXIS = {"virtual": "virtual clock", "real": "wall clock", "unstated": "the trace's clock (not stated which)",
             "mixed": "the files' clocks (mixed)"}

#: the lateness table's columns and what each means
LATENESS_COLUMNS: dict[str, str] = {
    "impl": "the implementation (the trace's <code>impl</code> column)",
    "level": "the timing-wheel level the task was placed on when added (0: delay below tick x wheel size; "
             "L: below tick x wheel size<sup>L+1</sup>); only for traces that record a wheel size",
    "profile": "the firing profile the run claims (how early a fire may be: see the profiles table)",
    "count": "fires with a deadline in this group",
    "early": "fires before their expiration (fire time &lt; expiration). Not necessarily a violation: the kafka "
             "profile lets a wheel fire up to one tick early; <b>no-early-fire</b> counts only fires before the "
             "claimed profile's earliest time",
    "min": "smallest lateness (fire time - expiration)",
    "p50": "median lateness (nearest rank)",
    "p90": "90th percentile of lateness",
    "p99": "99th percentile of lateness",
    "p999": "99.9th percentile of lateness",
    "max": "largest lateness",
    "mean": "average lateness",
}

#: the violating-rows table's columns
ROW_COLUMNS: dict[str, str] = {
    "run": "the run (one history; campaign runs are named implementation/kind/seed)",
    "seq": "the event's position in its run, from 0",
    "kind": "the event kind (fire, complete, ...)",
    "id": "task or operation id",
    "time": "the clock reading when the event happened",
    "deadline": "the task's expiration (fire) or the operation's deadline (watch, complete, expire)",
    "why": "what is wrong with the row, where the property says (well-formed: the rule it breaks, with exact "
           "numbers)",
}


# ------------------------------------------------------------------ layout (no matplotlib) -------
def _at_rank(values: list[int], cum: list[int], rank: int) -> int:
    """The value at nearest rank ``rank`` (1-based) of a histogram given as sorted values and
    cumulative counts."""
    lo, hi = 0, len(cum) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] >= rank:
            hi = mid
        else:
            lo = mid + 1
    return values[lo]


def _symlog(x: float, lt: float) -> float:
    """matplotlib's symlog transform (base 10, linscale 0.9), divided by ``lt``: linear within
    +-lt, one unit per decade beyond."""
    return x / lt if abs(x) <= lt else math.copysign(1 + math.log10(abs(x) / lt), x)


def _symlog_inv(y: float, lt: float) -> float:
    return y * lt if abs(y) <= 1 else math.copysign(lt * 10 ** (abs(y) - 1), y)


def histogram_layout(hist: dict[str, list[list[int]]], bins: int = HIST_BINS) -> dict[str, Any] | None:
    """The lateness histogram's axis and bins from the exact histogram ``{impl: [[lateness, count],
    ...]}``: robust x range, bin edges, per-implementation counts and the fires clipped on each side.
    ``None`` when there are no fires."""
    merged: dict[int, int] = {}
    for pairs in hist.values():
        for v, c in pairs:
            merged[int(v)] = merged.get(int(v), 0) + int(c)
    if not merged:
        return None
    values = sorted(merged)
    cum, acc = [], 0
    for v in values:
        acc += merged[v]
        cum.append(acc)
    n = acc
    k = n // (1000 if n >= 1000 else 100)   # fires beyond the 0.1 (small traces: 1) percentiles may be clipped
    q_lo, q_hi = _at_rank(values, cum, k + 1), _at_rank(values, cum, n - k)
    q25, q75 = _at_rank(values, cum, max(1, math.ceil(0.25 * n))), _at_rank(values, cum, max(1, math.ceil(0.75 * n)))
    spread = max(1, q75 - q25)
    # the range ends at fires, not at the bounds: no empty stretch between the bound and the data
    lo_bound, hi_bound = min(q_lo, q25 - 3 * spread, 0), max(q_hi, q75 + 3 * spread, 0)
    lo = values[bisect.bisect_left(values, lo_bound)]
    hi = values[bisect.bisect_right(values, hi_bound) - 1]
    lt: float | None = None
    if hi - lo + 1 <= bins:
        edges = [lo - 0.5 + i for i in range(hi - lo + 2)]
        scale = "linear"
    elif hi - lo > SYMLOG_SPREAD * spread:
        scale = "symlog"
        lt = float(max(1, abs(q25), abs(q75), spread))
        a, b = _symlog(lo - 0.5, lt), _symlog(hi + 0.5, lt)
        raw = [_symlog_inv(a + (b - a) * i / bins, lt) for i in range(bins + 1)]
        # integer lateness: edges on half-integers, so no bin is empty only for falling between integers
        edges = sorted({math.floor(e) + 0.5 for e in raw[1:-1]} | {lo - 0.5, hi + 0.5})
    else:
        scale = "linear"
        width = -(-(hi - lo + 1) // bins)
        edges = [lo - 0.5 + i * width for i in range(-(-(hi - lo + 1) // width) + 1)]
    counts: dict[str, list[int]] = {}
    below = above = 0
    for impl, pairs in hist.items():
        cs = [0] * (len(edges) - 1)
        for v, c in pairs:
            if v < lo:
                below += c
            elif v > hi:
                above += c
            else:
                cs[min(len(cs) - 1, bisect.bisect_right(edges, v) - 1)] += c
        counts[impl] = cs
    return {"scale": scale, "linthresh": lt, "edges": edges, "x_min": edges[0], "x_max": edges[-1],
            "counts": counts, "clipped_below": below, "clipped_above": above, "min": values[0], "max": values[-1],
            "fires": n, "q25": q25, "q75": q75}


#: units of the events-over-time axis: (ms per unit, name), largest first
TIME_UNITS = ((86_400_000, "days"), (3_600_000, "h"), (60_000, "min"), (1_000, "s"), (1, "ms"))


def time_unit(width_ms: int) -> tuple[int, str]:
    """The largest unit of :data:`TIME_UNITS` that a bucket of ``width_ms`` spans."""
    for ms, name in TIME_UNITS:
        if width_ms >= ms:
            return ms, name
    return 1, "ms"


def duration(ms: int) -> str:
    """``ms`` in the largest unit it is a whole or simple number of: ``5 h``, ``200 ms``."""
    per, name = time_unit(ms)
    v = ms / per
    return f"{v:g} {name}"


# ------------------------------------------------------------------ plots ------------------------
def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def _name(impl: str) -> str:
    return impl or "(unnamed)"


def plots(result: dict[str, Any]) -> dict[str, bytes]:
    """The report's figures as PNG bytes: lateness histogram and CDF (unless the trace mixes
    clocks), events over time; none without matplotlib (the 'reports' extra): the page then says so
    (:data:`PLOTS_LEFT_OUT`)."""
    if not available("matplotlib"):
        return {}
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    # Text in the figures (implementation names come from the trace) is shown as written, never
    # parsed as mathtext: a name such as "$\frac{$" would otherwise stop the report.
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        return _plots(result)


def plain_ticks(axis: Any) -> None:
    """Tick labels of a log or symlog ``axis`` as plain numbers (``1000``, ``-10``): matplotlib's
    default writes them as mathtext, which is off in these figures and would show as ``$...$``."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _legend(ax: Any) -> None:
    """A legend beside the axes (right), so it covers no data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def _plots(result: dict[str, Any]) -> dict[str, bytes]:
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt
    import numpy as np

    out: dict[str, bytes] = {}
    clock = result.get("clock", "unstated")
    _, unit, _ = CLOCKS.get(clock, CLOCKS["unstated"])
    hist = result["lateness_histogram"]
    layout = histogram_layout(hist) if clock != "mixed" else None
    if layout is not None:
        fig, ax = plt.subplots(figsize=(8, 4))
        edges = np.asarray(layout["edges"])
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (impl, cs) in enumerate(layout["counts"].items()):
            # one patch per implementation: its fill and its outline in one colour, both in the legend
            c = colours[i % len(colours)]
            ax.stairs(cs, edges, fill=True, facecolor=mcolors.to_rgba(c, 0.35), edgecolor=c, lw=1.2,
                      label=_name(impl))
        if layout["scale"] == "symlog":
            ax.set_xscale("symlog", linthresh=layout["linthresh"], linscale=0.9)
            plain_ticks(ax.xaxis)
        ax.set_xlim(layout["x_min"], layout["x_max"])
        if layout["x_min"] <= 0 <= layout["x_max"]:
            ax.axvline(0, color="k", lw=0.8, ls=":")
        ax.set_xlabel(f"lateness = fire time - expiration ({unit})"
                      + (", symlog axis" if layout["scale"] == "symlog" else ""))
        ax.set_ylabel("fires per bin")
        ax.set_title(f"Lateness histogram ({CLOCKS.get(clock, CLOCKS['unstated'])[0]})", pad=20)
        if layout["clipped_below"]:
            ax.annotate(f"<- {layout['clipped_below']} fire(s) below {int(layout['x_min'] + 0.5)} clipped "
                        f"(lowest {layout['min']})", (0, 1.01), xycoords="axes fraction", ha="left", va="bottom",
                        fontsize=8, color="#b00")
        if layout["clipped_above"]:
            ax.annotate(f"{layout['clipped_above']} fire(s) above {int(layout['x_max'] - 0.5)} clipped "
                        f"(highest {layout['max']}) ->", (1, 1.01), xycoords="axes fraction", ha="right",
                        va="bottom", fontsize=8, color="#b00")
        _legend(ax)
        out["lateness_hist.png"] = _png(fig)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(8, 4))
        for impl, pairs in hist.items():
            if pairs:
                x, c = np.asarray(pairs, dtype=float).T
                ax.step(x, np.cumsum(c) / c.sum(), where="post", label=_name(impl))
        lt = layout["linthresh"] or float(max(1, layout["q75"] - layout["q25"]))
        ax.set_xscale("symlog", linthresh=lt, linscale=0.9)
        plain_ticks(ax.xaxis)
        ax.set_xlabel(f"lateness ({unit}), symlog axis: linear within +-{lt:g}, logarithmic beyond; every fire shown")
        ax.set_ylabel("fraction of fires")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"Lateness CDF ({CLOCKS.get(clock, CLOCKS['unstated'])[0]})")
        ax.grid(alpha=0.3)
        _legend(ax)
        out["lateness_cdf.png"] = _png(fig)
        plt.close(fig)

    tp = result["throughput"]
    series = tp["series"]
    if series:
        per, uname = time_unit(tp["bucket_ms"])
        fig, ax = plt.subplots(figsize=(8, 4))
        peaks = []
        for impl in sorted({s["impl"] for s in series}):
            pts = [s for s in series if s["impl"] == impl]
            xs = [s["bucket"] * tp["bucket_ms"] / per for s in pts]
            line = ax.plot(xs, [s["events"] for s in pts], marker=".", label=f"{_name(impl)}: all rows")[0]
            ax.plot(xs, [s["fires"] for s in pts], ls="--", color=line.get_color(), label=f"{_name(impl)}: fires")
            peaks += [s["events"] for s in pts] + [s["fires"] for s in pts if s["fires"]]
        positive = [p for p in peaks if p > 0]
        if positive and max(positive) > 100 * min(positive):
            ax.set_yscale("log")  # a burst at the start must not flatten the rest
            plain_ticks(ax.yaxis)
        start = f" since {tp['start']} ms" if tp["start"] else ""
        ax.set_xlabel(f"{TIME_AXIS.get(clock, TIME_AXIS['unstated'])}{start} ({uname})")
        ax.set_ylabel(f"rows per {duration(tp['bucket_ms'])}")
        ax.set_title(f"Events over time (buckets of {duration(tp['bucket_ms'])})")
        ax.grid(alpha=0.3)
        _legend(ax)
        out["events_over_time.png"] = _png(fig)
        plt.close(fig)
    return out


# ------------------------------------------------------------------ HTML -------------------------
def _esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def _table(rows: list[dict[str, Any]], cols: list[str], raw: tuple[str, ...] = ()) -> str:
    """A table; cells are escaped except the columns in ``raw`` (built by this module)."""
    head = "".join(f"<th>{_esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{r.get(c, '') if c in raw else _esc(r.get(c))}</td>" for c in cols)
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _glossary(items: dict[str, str], cols: list[str]) -> str:
    """What each column means (the texts are this module's, with a little markup)."""
    return "<dl class='glossary'>" + "".join(f"<dt>{_esc(c)}</dt><dd>{items[c]}</dd>" for c in cols) + "</dl>"


def _summary(name: str, judge: str) -> tuple[str, str]:
    try:
        p = properties.get(name, judge)
    except KeyError:
        return "", ""
    return p.summary, p.source


def _earliest_rule(name: str) -> str:
    """When a profile lets a task fire, from its behaviour predicates (spec.profiles)."""
    b = behaviour(name)
    if b.uses_tick:
        return ("from the start of the expiration's tick window: now &gt;= floor(exp / tick) x tick "
                "(up to tick - 1 ms early)")
    if b.needs_strictly_after:
        return "only once the clock is past the expiration: now &gt; exp (and a delay &lt;= 0 runs inside add)"
    return "once the clock reaches the expiration: now &gt;= exp"


def _shape(prop: str, row: dict[str, Any]) -> str:
    """A violating row's shape: its event kind and where its time lies against its deadline."""
    t, d = row.get("time"), row.get("deadline")
    if t is None or d is None:
        where = "no deadline"
    else:
        where = "before its deadline" if t < d else ("at its deadline" if t == d else "after its deadline")
    impl = str(row.get("run", "")).split("/")[0] if "/" in str(row.get("run", "")) else ""
    return f"{row.get('kind')} {where}" + (f" ({impl})" if impl else "")


def _violations(props: dict[str, Any]) -> list[str]:
    parts: list[str] = []
    bad = [(p, v) for p, v in props.items() if v["violations"]]
    if not bad:
        return parts
    parts.append("<h2>Violating rows</h2><p>Per property, the rows shown grouped by shape (event kind, and the "
                 "event's time against its deadline): one example each, the others folded.</p>")
    for p, v in bad:
        summary, _ = _summary(p, properties.TRACE)
        parts.append(f"<h3 id='viol-{_esc(p)}'>{_esc(p)} ({v['violations']})</h3>"
                     f"<p class='what'>{_esc(summary)}</p>")
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in v["rows"]:
            groups.setdefault(_shape(p, r), []).append(r)
        # the why column only where the property says what is wrong (well-formed)
        cols = [c for c in ROW_COLUMNS if c != "why" or any(r.get("why") for r in v["rows"])]
        rows = [{"shape": s, "rows": len(rs), **rs[0]} for s, rs in groups.items()]
        parts.append(_table(rows, ["shape", "rows", *cols]))
        more = [r for rs in groups.values() for r in rs[1:]]
        if more:
            parts.append(f"<details><summary>{len(more)} more rows of the same shapes</summary>"
                         f"{_table(more, cols)}</details>")
        if v["violations"] > len(v["rows"]):
            parts.append(f"<p class='note'>{v['violations'] - len(v['rows'])} further violations not listed "
                         "(<code>--max-rows</code>).</p>")
    parts.append(_glossary(ROW_COLUMNS, list(ROW_COLUMNS)))
    return parts


def _figure(fid: str, name: str, images: dict[str, bytes], alt: str, caption: str, data: Any = None) -> str:
    if name not in images:
        return ""
    attr = f" data-plot='{html.escape(json.dumps(data), quote=True)}'" if data is not None else ""
    return (f"<figure id='{fid}'{attr}><img alt='{_esc(alt)}' src='data:image/png;base64,"
            f"{base64.b64encode(images[name]).decode()}'><figcaption>{caption}</figcaption></figure>")


def render(result: dict[str, Any], images: dict[str, bytes], title: str = "wheelspec trace analysis") -> str:
    props = result["properties"]
    clock = result.get("clock", "unstated")
    clock_name, unit, clock_text = CLOCKS.get(clock, CLOCKS["unstated"])
    verdict = "all judged properties hold" if result["ok"] else "VIOLATIONS FOUND"
    parts = [f"<h1>{_esc(title)}</h1>",
             *([] if images else [f"<p class='note'>{_esc(PLOTS_LEFT_OUT)}</p>"]),
             f"<p class='verdict {'ok' if result['ok'] else 'bad'}'>{result['rows']} rows, {result['runs']} runs, "
             f"engine {_esc(result.get('engine', '?'))}, <span class='clock'>{_esc(clock_name)}</span>: "
             f"<b>{verdict}</b></p>"]

    prop_rows = []
    for p, v in props.items():
        summary, source = _summary(p, properties.TRACE)
        n = v["violations"] if v.get("judged", True) else "not judged"
        cls = "na" if not v.get("judged", True) else ("bad" if v["violations"] else "ok")
        link = f"<a href='#viol-{_esc(p)}'>{_esc(p)}</a>" if v["violations"] else _esc(p)
        prop_rows.append({"property": link, "violations": f"<span class='{cls}'>{_esc(n)}</span>",
                          "what it asserts": summary, "source": source})
    parts += ["<h2>Properties</h2>",
              "<p>Each property of the history checker that a set-based pass over the trace can judge, with the "
              "number of rows violating it (under the profile each run claims).</p>",
              _table(prop_rows, ["property", "violations", "what it asserts", "source"],
                     raw=("property", "violations")),
              "<p>Not judged by set-based queries (they need per-row state; <code>wheelspec check</code> judges "
              "them):</p><ul class='notjudged'>"
              + "".join(f"<li><b>{_esc(n)}</b>: {_esc(_summary(n, properties.HISTORY)[0])}</li>"
                        for n in result["not_judged"]) + "</ul>"]
    if "late-fire" in props and not props["late-fire"].get("judged", True):
        parts.append("<p class='note'><b>late-fire</b> is judged only with <code>--lateness-ms</code> "
                     "(a bound on fire time - expiration).</p>")

    by_profile = props.get("no-early-fire", {}).get("by_profile")
    if by_profile:
        claimed = set(result.get("profiles", []))
        rows = [{"profile": p + (" (claimed)" if p in claimed else ""), "fires it calls early": n,
                 "a task may fire": _earliest_rule(p)} for p, n in by_profile.items() if p in PROFILE_NAMES]
        parts += ["<h2 id='by-profile'>Which profiles these fires fit</h2>",
                  "<p>Every fire that is otherwise correct (its task's live schedule, first fire, not cancelled), "
                  "judged against each firing profile in turn: how many of them that profile would call early. "
                  "A profile with 0 is one the implementation's fires satisfy; <b>no-early-fire</b> above judges "
                  "each run by the profile it claims.</p>",
                  _table(rows, ["profile", "fires it calls early", "a task may fire"], raw=("a task may fire",))]

    parts += _violations(props)

    parts.append(f"<h2>Lateness <span class='clock'>({_esc(clock_name)})</span></h2><p class='clockinfo'>"
                 f"{clock_text}</p>")
    lat = result["lateness"]
    cols = list(LATENESS_COLUMNS)
    if not any(g.get("level") is not None for g in lat):
        cols.remove("level")   # no wheel recorded (a heap timer, or a trace without wheel_size)
    parts.append(_table(lat, cols))
    parts.append(f"<p>All lateness values are fire time - expiration in {_esc(unit)}.</p>")
    parts.append(_glossary(LATENESS_COLUMNS, cols))
    layout = histogram_layout(result["lateness_histogram"]) if clock != "mixed" else None
    if layout is not None:
        clipped = layout["clipped_below"] + layout["clipped_above"]
        cap = (f"Fires per lateness bin, per implementation; x from {layout['x_min']:g} to {layout['x_max']:g} "
               f"({_esc(unit)}, {layout['scale']} axis)."
               + (f" {clipped} fire(s) outside that range are clipped (counted above the plot): lowest "
                  f"{layout['min']}, highest {layout['max']}." if clipped else " No fire is clipped."))
        parts.append(_figure("lateness-hist", "lateness_hist.png", images, "Lateness histogram", cap, layout))
        parts.append(_figure("lateness-cdf", "lateness_cdf.png", images, "Lateness CDF",
                             "Fraction of fires at most this late, every fire included (no clipping)."))
    parts.append("<h2>Events over time</h2>")
    tp = result["throughput"]
    parts.append(_figure("events-over-time", "events_over_time.png", images, "Events over time",
                         f"Rows (solid) and fires (dashed) per bucket of {_esc(duration(tp['bucket_ms']))} of "
                         f"{_esc(TIME_AXIS.get(clock, TIME_AXIS['unstated']))}, all runs together.",
                         {"bucket_ms": tp["bucket_ms"], "start": tp["start"]}))
    style = ("body{font-family:sans-serif;margin:2em;max-width:75em;color:#222}"
             "table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #bbb;padding:2px 8px;text-align:right;vertical-align:top}th{background:#eee}"
             "td:nth-child(3),td:nth-child(4){text-align:left}"
             ".ok{color:#060}.bad{color:#b00;font-weight:bold}.na{color:#777}.note,.what{color:#444}"
             "img{max-width:100%;display:block;margin:1em 0}figure{margin:1em 0}"
             "figcaption{color:#444;font-size:90%}dl.glossary{display:grid;grid-template-columns:max-content auto;"
             "gap:2px 1em;font-size:90%}dl.glossary dt{font-weight:bold}dl.glossary dd{margin:0}"
             ".clockinfo{background:#fff8e0;border-left:4px solid #e0b000;padding:.5em 1em}")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_esc(title)}</title>"
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

