"""Rendering one run's results: the rich tables on the terminal, Markdown, JSON, and a plot.

Every output is made from the same :class:`~.suite.Results`, so the Markdown committed as
docs/results/BENCHMARKS.md carries exactly the figures the terminal showed.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from .suite import INTERLEAVED_WORKLOADS, Cell, Results
from .workloads import STEADY_WARM_WINDOWS, STEADY_WINDOW, WORKLOADS

#: Workloads whose per-operation cost is plotted against n (the O(1) claim).
CURVE_WORKLOADS = ("insert", "cancel", "fire-steps", "fire-jump", "steady")

WHAT = {
    "insert": "(a) adds/s, delays uniform in [1, 30000] ms",
    "cancel": "(b) cancels/s of all pending tasks, shuffled order (the adds are not timed)",
    "fire-steps": "(c) fires/s, delays in [1, 2000] ms, advancing 1 ms at a time to 2000",
    "fire-jump": "(c) fires/s, delays in [1, 2000] ms, one advance to 2000",
    "steady": (f"(e) ops/s of a window of {STEADY_WINDOW} adds + {STEADY_WINDOW} cancels with N tasks already pending, "
               f"after {STEADY_WARM_WINDOWS} untimed windows alike (the O(1) claim)"),
    "purgatory": "(d) requests/s, Kafka's TestPurgatoryPerformance in virtual time",
}


def si(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.3g}"


def ratio(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}x"


def pow10(n: int) -> str:
    e = round(math.log10(n)) if n > 0 else 0
    return f"10^{e}" if 10**e == n else f"{n:,}"


def _ns(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def _main_rows(res: Results) -> list[list[str]]:
    rows = []
    for c in res.cells:
        if c.status == "ok":
            mem = "-" if c.bytes_per_pending is None else f"{c.bytes_per_pending:.1f} ({c.memory_method})"
            note = f"best of {len(c.runs_s)}" + (f" ({c.interleaved} interleaved)" if c.interleaved else "")
            if c.warm_runs:
                note += f" after {c.warm_runs} untimed"
            rows.append([c.workload, pow10(c.n), c.impl, si(c.ops_per_s), f"{c.ns_per_op:.1f}",
                         ratio(c.vs_reference), ratio(c.vs_heapq), ratio(c.vs_engine),
                         _ns(c.p50_ns), _ns(c.p99_ns), _ns(c.p999_ns), mem, note])
        else:
            note = f"n/a ({c.note})" if c.status == "n/a" else f"{c.status}: {c.note}"
            rows.append([c.workload, pow10(c.n), c.impl] + ["-"] * 9 + [note])
    return rows


MAIN_HEADER = ["workload", "N", "implementation", "ops/s", "ns/op", "vs reference", "vs heapq", "vs engine",
               "p50 ns", "p99 ns", "p999 ns", "bytes/pending", "note"]
NUMERIC = ("N", "ops/s", "ns/op", "vs reference", "vs heapq", "vs engine", "p50 ns", "p99 ns", "p999 ns",
           "bytes/pending")


def _native_lines(res: Results) -> list[str]:
    """What each native peer's figures measure: per peer, the version it ran and how its latency
    percentiles were taken (from its largest cell); per workload, what its seconds count."""
    by_impl: dict[str, list[Cell]] = {}
    for c in res.cells:
        if c.status == "ok" and c.metric is not None:
            by_impl.setdefault(c.impl, []).append(c)
    lines = []
    for impl, cells in by_impl.items():
        lines.append(f"{impl}: {cells[0].version}")
        sampled = [c for c in cells if c.latency_method]
        if sampled:
            big = max(sampled, key=lambda c: c.n)
            lines.append(f"{impl}: percentiles at N = {pow10(big.n)}, {big.workload}: {big.latency_method}")
        for w in dict.fromkeys(c.workload for c in cells):
            c = next(c for c in cells if c.workload == w)
            lines.append(f"{impl} / {w}: {c.metric}" + ("" if c.latency_method else "; no per-operation latency"))
    return lines


def _curve(res: Results) -> tuple[list[str], list[list[str]]]:
    """ns/op per n, per (workload, implementation), and max/min over the sizes measured."""
    sizes = sorted({c.n for c in res.cells})
    header = ["workload", "implementation"] + [pow10(n) for n in sizes] + ["max/min"]
    rows = []
    for w in CURVE_WORKLOADS:
        for impl in res.options.impls:
            vals = {c.n: c.ns_per_op for c in res.cells
                    if c.workload == w and c.impl == impl and c.status == "ok" and c.ns_per_op is not None}
            if not vals:
                continue
            spread = max(vals.values()) / min(vals.values()) if len(vals) > 1 else None
            rows.append([w, impl] + [f"{vals[n]:.1f}" if n in vals else "-" for n in sizes]
                        + [ratio(spread)])
    return header, rows


def _jit_rows(res: Results) -> list[list[str]]:
    if not res.jit:
        return []
    if "error" in res.jit:
        return [["error", res.jit["error"], "", "", "", ""]]
    rows = []
    for phase in ("cold", "warm"):
        r = res.jit[phase]
        batch = r.get("first_batch_s")
        rows.append([phase, f"{r['engine_import_s']:.3f}", f"{r['first_op_s']:.3f}",
                     f"{r['import_and_first_op_s']:.3f}",
                     "-" if batch is None else f"{batch:.3f}", f"{r['process_wall_s']:.3f}"])
    return rows


JIT_HEADER = ["numba cache", "import engine (s)", "first per-op ops (s)", "import + first op (s)",
              "first batch ops (s)", "whole process (s)"]


def _machine_lines(res: Results) -> list[str]:
    m = res.machine
    lb, la = res.load_before, res.load_after
    return [
        f"date: {m['date_utc']}",
        f"nproc: {m['nproc']}; platform: {m['platform']}",
        f"python {m['python']}, numpy {m['numpy']}, numba {m['numba']}",
        f"code: git {m.get('git', 'unknown')}",
        "load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}; "
        "highest 1-min value seen between cells: {:.2f}".format(*lb, *la, res.load_max_1min),
        f"uptime before: {m['uptime_before']}",
        f"uptime after: {m.get('uptime_after', '')}",
    ]


def _settings_line(res: Results) -> str:
    o = res.options
    p = o.purgatory
    caps = ", ".join(f"{k} <= {pow10(v)}" for k, v in sorted(o.caps.items())) or "none"
    return (f"tick {o.timer.tick_ms} ms, wheel size {o.timer.wheel_size}; seed {o.seed}; best of up to "
            f"{o.repeat} runs (fewer once {o.repeat_budget_s:g} s were spent)"
            + (f", and {o.curve_rounds} interleaved rounds over the sizes of {', '.join(INTERLEAVED_WORKLOADS)}"
               if o.curve_rounds and any(w in o.workloads for w in INTERLEAVED_WORKLOADS) else "")
            + f"; caps: {caps}; budget "
            f"{o.budget_s:g} s per run; tracemalloc up to n = {pow10(o.mem_max)}; purgatory: rate "
            f"{p.rate:g}/s, pct50 {p.pct50:g} ms, pct75 {p.pct75:g} ms, timeout {p.timeout} ms, "
            f"{p.keys} keys of {p.key_space}"
            f"{' (fixed for the run, as Kafka)' if p.keys_per_run else ' (drawn per request)'}, "
            f"purge interval {p.purge_interval}")


# -- terminal ----------------------------------------------------------------------------------
def print_rich(res: Results, console: Any = None) -> None:
    """The tables on ``console`` (default: stdout, 200 columns when it is not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        # A report is read as a whole: never squeeze it into an 80-column pipe.
        console = Console(width=None if Console().is_terminal else 200, emoji=False, highlight=False)
    console.print(f"[bold]wheelspec bench[/bold]: {res.to_dict()['command']}")
    for line in _machine_lines(res):
        console.print("  " + line)
    console.print("  " + _settings_line(res))
    t = Table(title="Throughput, one run, side by side", show_lines=False)
    for h in MAIN_HEADER:
        numeric = h in NUMERIC
        t.add_column(h, justify="right" if numeric else "left")
    prev = None
    for row, cell in zip(_main_rows(res), res.cells):
        key = (cell.workload, cell.n)
        if prev is not None and key != prev:
            t.add_section()
        prev = key
        t.add_row(*row)
    console.print(t)
    for w in WORKLOADS:
        if any(c.workload == w for c in res.cells):
            console.print(f"  {w}: {WHAT[w]}")
    native = _native_lines(res)
    if native:
        console.print("  native peers (p50/p99/p999: single operations timed in a separate run; vs engine: "
                      "against optimized-batch):")
        for line in native:
            console.print("    " + line)
    header, rows = _curve(res)
    if rows:
        ct = Table(title="Per-operation cost (ns/op) against N: the O(1) claim")
        for h in header:
            ct.add_column(h, justify="left" if h in ("workload", "implementation") else "right")
        for r in rows:
            ct.add_row(*r)
        console.print(ct)
    jrows = _jit_rows(res)
    if jrows:
        jt = Table(title="JIT: import + first operations in a fresh process")
        for h in JIT_HEADER:
            jt.add_column(h)
        for r in jrows:
            jt.add_row(*r)
        console.print(jt)


# -- Markdown ----------------------------------------------------------------------------------
def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[str(x).replace("|", "\\|") for x in r] for r in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(out)


def markdown(res: Results) -> str:
    parts = ["## Run", "", "```", res.to_dict()["command"], "```", ""]
    parts += [f"- {line}" for line in _machine_lines(res)]
    parts += [f"- settings: {_settings_line(res)}", "", "`lscpu | head`:", "", "```"]
    parts += res.machine["lscpu_head"] + ["```", ""]
    parts += ["## Throughput", ""]
    parts += [f"- `{w}`: {WHAT[w]}" for w in WORKLOADS if any(c.workload == w for c in res.cells)]
    parts += ["", _md_table(MAIN_HEADER, _main_rows(res)), ""]
    native = _native_lines(res)
    if native:
        parts += ["Native peers (p50/p99/p999: single operations timed in a separate run; vs engine: "
                  "against optimized-batch):", ""] + [f"- {line}" for line in native] + [""]
    header, rows = _curve(res)
    if rows:
        parts += ["## Per-operation cost against N (ns/op)", "", _md_table(header, rows), ""]
    jrows = _jit_rows(res)
    if jrows:
        parts += ["## JIT compile time (fresh processes; cold = empty NUMBA_CACHE_DIR)", "",
                  _md_table(JIT_HEADER, jrows), ""]
    return "\n".join(parts)


def write_markdown(res: Results, path: str) -> None:
    Path(path).write_text(markdown(res))


def write_json(res: Results, path: str, exit_code: int) -> None:
    """Every figure as JSON to ``path`` (``-``: stdout), in the commands' report envelope
    (:func:`~wheelspec.envelope.envelope`); the run's command line is ``argv``."""
    from wheelspec.envelope import envelope

    body = res.to_dict()
    body["argv"] = body.pop("command")
    doc = envelope("bench", json.loads(json.dumps(body, default=_jsonable)), exit_code=exit_code)
    text = json.dumps(doc, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    Path(path).write_text(text)


def _jsonable(x: Any) -> Any:
    if isinstance(x, tuple):
        return list(x)
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"not JSON-serializable: {type(x).__name__}")


# -- plot ----------------------------------------------------------------------------------------
#: one marker per series, cycled with the colours (:func:`series_styles`): a series stays
#: distinguishable in grey print and where two colours are close
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")


def series_styles(impls: list[str]) -> dict[str, tuple[Any, str]]:
    """A (colour, marker) per implementation, every pair different: colours from ``tab10``, or from
    ``tab20`` when there are more than 10 series, and a marker each (:data:`MARKERS`)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(impls) <= 10 else "tab20"]
    n = cmap.N
    return {impl: (cmap(i % n), MARKERS[i % len(MARKERS)]) for i, impl in enumerate(impls)}


def write_plot(res: Results, path: str, plt: Any) -> None:
    """ns/op against n on log-log axes, one panel per workload, one line per implementation (same
    colour and marker in every panel), the legend beside the panels, outside every plot area."""
    ws = [w for w in CURVE_WORKLOADS if any(c.workload == w and c.status == "ok" for c in res.cells)]
    styles = series_styles(list(res.options.impls))
    fig, axes = plt.subplots(1, max(1, len(ws)), figsize=(4.5 * max(1, len(ws)) + 2.5, 4), squeeze=False,
                             layout="constrained")
    for ax, w in zip(axes[0], ws):
        for impl in res.options.impls:
            pts = sorted((c.n, c.ns_per_op) for c in res.cells
                         if c.workload == w and c.impl == impl and c.status == "ok")
            if pts:
                colour, marker = styles[impl]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour, label=impl)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N (tasks)")
        ax.set_ylabel("ns per operation")
        ax.set_title(w)
        ax.grid(True, which="both", alpha=0.3)
    handles: dict[str, Any] = {}
    for ax in axes[0]:  # every series once, whichever panel drew it
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize="small")
    fig.savefig(path)
    plt.close(fig)


def failed(cells: list[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "failed"]
