"""The conformance matrix rendered: the Markdown table (inserted between markers into a page that
is otherwise hand-written), the self-contained HTML page and the lateness plot.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from wheelspec.conformance.matrix.files import HTML_MARKER, MD_BEGIN, MD_END, PNG_METADATA, claim
from wheelspec.conformance.matrix.rows import COLUMNS, Row
from wheelspec.spec import properties
from wheelspec.spec.show import clip

#: at most this many further places of one failure shape are named in the Markdown
MD_FAILURES = 12

#: the most characters of a failure shape's example in the Markdown and the HTML page (shortened at
#: a word boundary, never inside a number: :func:`wheelspec.spec.show.clip`; matrix.json has it whole)
EXAMPLE_CHARS = 300

#: what "the same shape" means, in the Markdown and the HTML page
FAILURE_SHAPE = "same implementation, property and message up to its numbers"


def markdown(rows: list[Row], meta: dict[str, Any]) -> str:
    head = "| implementation | mode | claims | " + " | ".join(COLUMNS) + " | profiles satisfied |"
    sep = "|" + "---|" * (len(COLUMNS) + 4)
    lines = [head, sep]
    for r in rows:
        cells = []
        for c in COLUMNS:
            v = r.cells.get(c, "n/a")
            v = "**FAIL**" if v == "FAIL" else v
            note = r.notes.get(c)
            cells.append(f"{v} ({note})" if note else v)
        sat = ", ".join(r.satisfies) or "none"
        lines.append(f"| {r.name} | {r.mode} | {r.claimed} | " + " | ".join(cells) + f" | {sat} |")
    lines.append("")
    lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
                 + "; " + ", ".join(f"{r.name}: {r.version}" for r in rows if r.version) + ".")
    lines.append(f"Made by `{meta['command']}` on {meta['date']} ({meta['seconds']:.0f} s).")
    lines.append("")
    lines.append(f"Failures, grouped by shape ({FAILURE_SHAPE}; one example each, the saved files replay them):")
    lines.append("")
    for name, prop, _shape, group in grouped_failures(rows):
        lines.append(f"* {name}" + (f" [{prop}]" if prop else "") + f", {len(group)} failure"
                     + ("s" if len(group) > 1 else "") + f": {clip(group[0], EXAMPLE_CHARS)}")
        if len(group) > 1:
            wheres = [failure_shape(x)[0] or clip(x, 80) for x in group[1:]]
            more = f" and {len(wheres) - MD_FAILURES} more" if len(wheres) > MD_FAILURES else ""
            lines.append(f"  * also: {', '.join(wheres[:MD_FAILURES])}{more}")
    for r in rows:
        for c in r.counterexamples:
            lines.append(f"* {r.name}: saved `{c}`")
    return "\n".join(lines) + "\n"


def failure_lines(rows: list[Row], width: int = 160) -> list[str]:
    """The failures for the terminal, grouped by shape as in the Markdown and the HTML page: one
    line per group (implementation, property, count, an example)."""
    out = []
    for name, prop, _shape, group in grouped_failures(rows):
        line = f"{name}" + (f" [{prop}]" if prop else "") + f" x{len(group)}: {group[0]}"
        out.append(clip(line, width))
    return out


def write_plot(rows: list[Row], path: Path) -> bool:
    """The real-time rows' lateness CDFs (wall clock, measured) as a PNG; False if no row has any.
    A symlog axis (linear within +-0.1 ms) shows early fires, sub-millisecond and tens of
    milliseconds at once; the legend sits beside the axes, covering no curve."""
    data = [(r.name, r.lateness_ms) for r in rows if r.lateness_ms]
    if not data:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wheelspec.conformance.traces.html_report import plain_ticks

    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):  # names shown as written
        fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
        for name, xs in data:
            xs = sorted(xs)
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=f"{name} (n={len(xs)})")
        ax.set_xscale("symlog", linthresh=PLOT_LINTHRESH_MS, linscale=0.5)
        plain_ticks(ax.xaxis)   # mathtext is off: plain numbers, not "$10^{0}$"
        ax.axvline(0, color="k", lw=0.8, ls=":")
        ax.set_xlabel(f"fire time - deadline (ms, wall clock; symlog: linear within +-{PLOT_LINTHRESH_MS:g} ms)")
        ax.set_ylabel("fraction of fires")
        ax.set_ylim(0, 1.02)
        ax.set_title("Real-time lateness (CDF, measured)")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
        fig.savefig(path, bbox_inches="tight", metadata=PNG_METADATA)  # the marker (.files)
        plt.close(fig)
    return True


#: linear part of the lateness plot's symlog axis (ms)
PLOT_LINTHRESH_MS = 0.1

#: what the non-property columns of the matrix mean
ROW_HEADERS = {
    "implementation": "the timer under test (its version below the name)",
    "mode": "virtual: driven on a virtual clock through the adapter protocol (scenario corpus, probes, a seeded "
            "campaign); real-time: seeded schedules run on the wall clock, lateness measured",
    "claims": "the firing profile the implementation claims (kafka, strict or strict-gt: spec/profiles.py); "
              "every cell is judged under it",
    "profiles satisfied": "the profiles whose firing rules every run of the implementation satisfies "
                          "(each history re-judged under every profile)",
}

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def failure_shape(line: str) -> tuple[str, str, str]:
    """``(where, property, shape)`` of a failure line ``WHERE -> [PROP] MESSAGE``: the shape is
    the message with its numbers replaced by ``#``, so failures that differ only in ids, times
    and seeds group together (a line of another form is its own shape)."""
    m = re.match(r"(.*?) -> \[([^\]]+)\] (.*)", line, re.S)
    if m is None:
        return "", "", line
    return m.group(1), m.group(2), _NUMBER.sub("#", m.group(3))


def grouped_failures(rows: list[Row]) -> list[tuple[str, str, str, list[str]]]:
    """Failures grouped by (implementation, property, shape), in first-seen order:
    ``(implementation, property, shape, lines)``."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        for f in r.failures:
            _, prop, shape = failure_shape(f)
            groups.setdefault((r.name, prop, shape), []).append(f)
    return [(n, p, s, lines) for (n, p, s), lines in groups.items()]


def _columns_html() -> str:
    """Every column explained: the row headers, and per property column the properties it shows
    (summaries from the property registry)."""
    esc = html.escape
    items = [f"<dt>{esc(h)}</dt><dd>{esc(t)}</dd>" for h, t in ROW_HEADERS.items() if h != "profiles satisfied"]
    for c in properties.MATRIX_COLUMNS:
        shows = "".join(f"<li><b>{esc(n)}</b> ({esc(j)}): {esc(properties.get(n, j).summary)}</li>"
                        for j, n in c.shows)
        items.append(f"<dt>{esc(c.name)}</dt><dd>shows<ul>{shows}</ul></dd>")
    items.append(f"<dt>profiles satisfied</dt><dd>{esc(ROW_HEADERS['profiles satisfied'])}</dd>")
    cells = ("<dt>cell values</dt><dd><b>pass</b>: no run violated the column's properties; <b>FAIL</b>: some "
             "run did (the failures below); <b>n/a</b>: the mode does not judge it; <b>not judged</b>: the adapter "
             "declared the property unobservable; <b>error</b>: the implementation could not be run. The small "
             "text in a cell is what was observed.</dd>")
    return f"<h2>Columns</h2><dl class='glossary'>{''.join(items)}{cells}</dl>"


def _failures_html(rows: list[Row]) -> str:
    esc = html.escape
    groups = grouped_failures(rows)
    if not groups:
        return "<h2>Failures</h2><p>None.</p>"
    out = [f"<h2>Failures</h2><p>{sum(len(g[3]) for g in groups)} failures in {len(groups)} shapes ({FAILURE_SHAPE}): "
           "one example each; the saved files replay "
           "them (docs/results/MATRIX.md).</p><table class='failures'><thead><tr><th>implementation</th>"
           "<th>property</th>"
           "<th>failures</th><th>example</th></tr></thead><tbody>"]
    for name, prop, _shape, lines in groups:
        more = ""
        if len(lines) > 1:
            where = ", ".join(failure_shape(x)[0] or x for x in lines[1:])
            more = f"<details><summary>{len(lines) - 1} more</summary><small>{esc(where)}</small></details>"
        out.append(f"<tr><td>{esc(name)}</td><td>{esc(prop or '-')}</td><td>{len(lines)}</td>"
                   f"<td class='ex'>{esc(clip(lines[0], EXAMPLE_CHARS))}{more}</td></tr>")
    out.append("</tbody></table>")
    saved = [(r.name, c) for r in rows for c in r.counterexamples]
    if saved:
        out.append("<details><summary>" + f"{len(saved)} saved counterexample files</summary><ul>"
                   + "".join(f"<li>{esc(n)}: <code>{esc(c)}</code></li>" for n, c in saved) + "</ul></details>")
    return "".join(out)


def html_page(rows: list[Row], meta: dict[str, Any], plot: str | None, plot_left_out: str | None = None) -> str:
    """The matrix as one HTML page; ``plot``: the lateness plot's file name beside it, or None;
    ``plot_left_out``: why there is no plot though real-time rows measured lateness (the page says
    so where the plot would be, as the command says it on stderr)."""
    esc = html.escape
    heads = ("implementation", "mode", "claims", *COLUMNS, "profiles satisfied")
    th = "".join(f"<th>{esc(c)}</th>" for c in heads)
    body = []
    for r in rows:
        tds = [f"<td>{esc(r.name)}<br><small>{esc(r.version)}</small></td>", f"<td>{esc(r.mode)}</td>",
               f"<td>{esc(r.claimed)}</td>"]
        for c in COLUMNS:
            v = r.cells.get(c, "n/a")
            cls = {"pass": "ok", "FAIL": "bad"}.get(v, "na")
            note = r.notes.get(c)
            tds.append(f"<td class='{cls}'>{esc(v)}" + (f"<br><small>{esc(note)}</small>" if note else "") + "</td>")
        tds.append(f"<td>{esc(', '.join(r.satisfies) or 'none')}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    img = ""
    if plot:
        img = (f"<h2>Real-time lateness</h2><figure id='lateness'><img src='{esc(plot)}' alt='lateness CDF'>"
               "<figcaption>Measured on the wall clock by the real-time rows: fraction of fires at most this late "
               "after their deadline (negative: early). Virtual-time rows have no measured lateness.</figcaption>"
               "</figure>")
    elif plot_left_out:
        img = f"<h2>Real-time lateness</h2><p id='lateness'>{esc(plot_left_out)}</p>"
    vers = esc(", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    return f"""{HTML_MARKER}
<!doctype html><html lang="en"><head><meta charset="utf-8"><title>wheelspec conformance matrix</title>
<style>body{{font-family:sans-serif;margin:1.5em;color:#222}}table{{border-collapse:collapse}}
td,th{{border:1px solid #bbb;padding:4px 6px;font-size:13px;vertical-align:top}}
.ok{{background:#dff5df}}.bad{{background:#f8d0d0}}
.na{{background:#eee}}small{{color:#555}}img{{max-width:100%}}figcaption{{color:#444;font-size:90%}}
dl.glossary{{display:grid;grid-template-columns:max-content auto;gap:4px 1em;font-size:90%}}
dl.glossary dt{{font-weight:bold}}dl.glossary dd{{margin:0}}dl.glossary ul{{margin:0;padding-left:1.2em}}
table.failures td.ex{{max-width:60em}}</style>
</head><body>
<h1>wheelspec conformance matrix</h1><p>{vers}. Made by <code>{esc(meta['command'])}</code> on {esc(meta['date'])}.
Explanations: docs/results/MATRIX.md.</p>
<table><tr>{th}</tr>{''.join(body)}</table>{_columns_html()}{img}{_failures_html(rows)}</body></html>
"""


def update_markdown(path: Path, table: str) -> None:
    """Replace the generated part of ``path`` (between the markers), keeping the explanations; a
    new page if there is none.  A page without the markers is not the matrix's: refused
    (:func:`.files.claim`), never overwritten."""
    block = f"{MD_BEGIN}\n{table}{MD_END}"
    if claim(path).exists():
        text = path.read_text()
        pre, rest = text.split(MD_BEGIN, 1)
        post = rest.split(MD_END, 1)[1]
        path.write_text(pre + block + post)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Conformance matrix\n\n{block}\n")
