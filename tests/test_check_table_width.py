"""The ``wheelspec check`` summary table at 80 columns (``conformance.check.report.summary_table``):
implementation names wrap between words, never cut to ``optimiz…``; every line fits."""

from __future__ import annotations

import io

from rich.console import Console

from wheelspec.conformance.check.report import ImplReport, print_summary

#: (--impl text, the adapter's name, profile): names as the built-ins and a user's module give them
REPORTS = [("reference", "reference", "kafka"), ("optimized-subprocess", "optimized", "kafka"),
           ("reference-subprocess", "reference", "kafka"), ("mytimer:adapter", "toy-heap-timer", "strict"),
           ("stdlib-sched", "stdlib-sched", "strict-gt"), ("twisted-clock", "twisted-clock", "strict")]


def _render(width: int) -> str:
    reports = [ImplReport(impl, name, {"profile": prof, "tick_ms": 10 if prof == "kafka" else None})
               for impl, name, prof in REPORTS]
    reports[1].incomplete = True  # the widest verdict, INCOMPLETE
    console = Console(width=width, record=True, emoji=False, file=io.StringIO())
    print_summary(console, reports)
    return console.export_text()


def test_at_80_columns_every_name_appears_whole_and_every_line_fits() -> None:
    text = _render(80)
    table = text[:text.index("reference: ")]  # the table, before the per-implementation lines
    lines = table.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in table
    cells = [line.split("  ")[0].strip() for line in lines]  # the implementation column
    for impl, name, _ in REPORTS:
        assert name in cells, (name, table)
        if impl != name:
            assert f"({impl})" in cells, (impl, table)
    assert "INCOMPLETE" in table and "PASS" in table


def test_a_wide_console_keeps_every_column_on_one_header_line() -> None:
    text = _render(200)
    for head in ("scenarios pass/fail/n-a", "campaign schedules (failed)", "ops", "schedules/s", "ops/s", "verdict"):
        assert head in text
