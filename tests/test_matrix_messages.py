"""No report of the matrix shortens a message inside a number.

A bound of 1099511627775 shown as ``10995116277`` is read as a different bound.  Every place that
shortens a message (:func:`wheelspec.spec.show.clip`, used by ``json_short``, ``response``,
``clean_text`` and the matrix's renderers) cuts at a word boundary and says so with ``" ..."``.
Checked three ways: the cutting function on texts with numbers at any position (Hypothesis); the
matrix's renderings of rows whose messages are such texts; and the messages of real matrix rows
(their Markdown, HTML, terminal and JSON forms).
"""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.conformance.adapters.protocol import Response, clean_text
from wheelspec.conformance.matrix import Row, html_page, markdown
from wheelspec.conformance.matrix.rows import COLUMNS, virtual_row
from wheelspec.spec import limits, show
from wheelspec.spec.show import ELLIPSIS, NUMBER, clip, json_short

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ texts with numbers ---------------
_numbers = st.one_of(st.integers(-(2**63), 2**63 - 1).map(str),
                     st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.3f}"),
                     st.just(str(limits.MAX_DELAY_MS)), st.just(str(limits.MIN_DELAY_MS)))
_words = st.sampled_from(["the", "allowed", "range", "delay_ms=", "task", "fired", "at", "xxxxxxxxxxxxxxxxxxxxxx"])
_glue = st.sampled_from([" ", ", ", "[", "]", "(", ")", "=", ":", "; ", ",", "/", "^", "-", ""])
TEXTS = st.lists(st.one_of(_numbers, _words, _glue), min_size=1, max_size=60).map("".join)


def _cut_inside_a_number(text: str, at: int) -> bool:
    return any(m.start() < at < m.end() for m in NUMBER.finditer(text))


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(TEXTS, st.integers(len(ELLIPSIS) + 1, 400))
def test_clip_never_cuts_inside_a_number(text: str, limit: int) -> None:
    out = clip(text, limit)
    if len(text) <= limit:
        assert out == text
        return
    if out == text:  # only when the text is one number that starts it, longer than the room
        m = NUMBER.match(text)
        assert m is not None and m.end() > limit - len(ELLIPSIS), (text, limit)
        return
    assert out.endswith(ELLIPSIS)
    kept = out[: -len(ELLIPSIS)]
    assert text.startswith(kept)
    assert not _cut_inside_a_number(text, len(kept)), (text, limit, out)
    m = NUMBER.match(text)
    if not (m and m.end() > limit - len(ELLIPSIS)):
        assert len(out) <= limit, (text, limit, out)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40), st.integers(4, 200))
def test_json_short_keeps_whole_numbers(values: list[int], limit: int) -> None:
    s = json.dumps(values, separators=(",", ":"))
    out = json_short(values, limit)
    kept = out[: -len(ELLIPSIS)] if out != s else out
    assert s.startswith(kept) and not _cut_inside_a_number(s, len(kept)), (s, out)


def test_a_range_error_is_shown_with_both_bounds_whole() -> None:
    """The message the matrix printed as ``[-1099511627775, 10995116277)``."""
    try:
        limits.check_delay(limits.MAX_DELAY_MS + 1)
    except limits.RangeError as e:
        message = str(e)
    shown = show.response(Response(error=("range", message)))
    assert f"[{limits.MIN_DELAY_MS}, {limits.MAX_DELAY_MS}])" in shown, shown
    assert clean_text(message, 60).endswith(ELLIPSIS)
    assert not _cut_inside_a_number(message, len(clean_text(message, 60)) - len(ELLIPSIS))


# ------------------------------------------------------------------ the renderings -------------------
META = {"versions": {"python": "3"}, "command": "wheelspec matrix", "date": "d", "seconds": 1.0}


def _digits(text: str) -> set[str]:
    return set(re.findall(r"\d+", text))


def _renderings(rows: list[Row]) -> dict[str, str]:
    """Every form the matrix writes rows in: terminal failures and table, Markdown, HTML, JSON."""
    from wheelspec.conformance.cli.matrix import print_failures, print_table

    term = io.StringIO()
    print_table(rows, term)
    print_failures(rows, term)
    return {"terminal": term.getvalue(), "markdown": markdown(rows, META),
            "html": html.unescape(html_page(rows, META, None)),
            "json": json.dumps({"rows": [r.to_dict() for r in rows]})}


def _sources(rows: list[Row]) -> set[str]:
    """The digit runs the renderings may show: those of the rows' own text, of the page around
    them and of the counts the renderings add (failures per shape, shapes)."""
    texts = [json.dumps([r.to_dict() for r in rows]), html.unescape(html_page([], META, None)),
             markdown([], META), " ".join(str(i) for i in range(1000))]
    return set().union(*map(_digits, texts))


def assert_no_number_cut(rows: list[Row]) -> None:
    allowed = _sources(rows)
    for form, text in _renderings(rows).items():
        cut = sorted(_digits(text) - allowed)
        assert not cut, f"{form} shows numbers no message holds (cut?): {cut[:5]}"
        assert not re.search(r"\d\.\.\.", text), f"{form}: a number runs into an ellipsis"


def _row(name: str, failures: list[str], notes: dict[str, str] | None = None) -> Row:
    return Row(name, "1.0", "virtual", "strict", {c: "FAIL" for c in COLUMNS}, notes or {}, [], failures, [])


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=4), st.integers(0, 400))
def test_renderings_never_cut_a_number(messages: list[str], pad: int) -> None:
    # each message padded so that a number may fall on any cut point (80, 160, 300 characters)
    failures = [f"timer seed {i} -> [oracle] " + "w" * (pad % 97) + " " + m for i, m in enumerate(messages)]
    failures.append("probe/x -> [expected] " + " ".join(messages) * 3)
    failures.append("adapter: " + "y" * pad + " " + messages[0])
    assert_no_number_cut([_row("lib", failures)])


# ------------------------------------------------------------------ real rows ------------------------
#: virtual rows whose failures cover the matrix's message forms: range refusals (the reference's
#: error text), early fires, double fires, lost tasks, oracle disagreements, expectations
REAL_ROWS = ("stdlib-sched", "tests.fixtures.broken:fires_early", "tests.fixtures.broken:fires_twice",
             "tests.fixtures.broken:drops_readd", "tests.fixtures.broken:relative_bucket",
             "tests.fixtures.broken:fires_cancelled", "no_such_module_wheelspec_x:factory")


@pytest.fixture(scope="module")
def real_rows() -> list[Row]:
    import os

    here = os.getcwd()
    os.chdir(ROOT)  # tests.fixtures imports from the repository root
    try:
        return [virtual_row(n, schedules=12, cx_dir=None, progress=lambda m: None) for n in REAL_ROWS]
    finally:
        os.chdir(here)


@pytest.mark.slow
def test_real_matrix_messages_are_whole(real_rows: list[Row]) -> None:
    messages = [f for r in real_rows for f in r.failures]
    assert len(messages) > 20 and any("allowed range" in m for m in messages)
    for m in messages:
        for at in (x.end() for x in re.finditer(r"allowed range ", m)):
            assert re.match(r"\[-?\d+, -?\d+\]", m[at:]), m  # both bounds, whole
        assert not re.search(r"\d\.\.\.", m), m
    bounds = {(int(a), int(b)) for m in messages for a, b in re.findall(r"allowed range \[(-?\d+), (-?\d+)\]", m)}
    assert (limits.MIN_DELAY_MS, limits.MAX_DELAY_MS) in bounds


@pytest.mark.slow
def test_real_matrix_renderings_never_cut_a_number(real_rows: list[Row]) -> None:
    assert_no_number_cut(real_rows)
    # and the JSON keeps every message whole
    doc = json.loads(_renderings(real_rows)["json"])
    assert [f for r in doc["rows"] for f in r["failures"]] == [f for r in real_rows for f in r.failures]


# ------------------------------------------------------------------ check's JUnit report -------------
@pytest.mark.parametrize("offset", range(280, 305, 3))
def test_junit_message_attributes_never_cut_a_number(tmp_path: Path, offset: int) -> None:
    """`wheelspec check --junit-xml` shortens a failure's ``message`` attribute the same way."""
    import xml.etree.ElementTree as ET

    from wheelspec.conformance.check.corpus import ScenarioResult
    from wheelspec.conformance.check.report import ImplReport, write_junit
    from wheelspec.spec.findings import Finding

    message = "w" * offset + f" [{limits.MIN_DELAY_MS}, {limits.MAX_DELAY_MS}] tail"
    rep = ImplReport("x", error="e" * offset + f" {limits.MAX_DELAY_MS} tail")
    rep.scenarios.append(ScenarioResult("s", "fail", [Finding("oracle", message)], 1))
    write_junit(tmp_path / "r.xml", [rep])
    shown = [el.get("message") or "" for el in ET.parse(tmp_path / "r.xml").iter() if el.tag in ("failure", "error")]
    ours = [t for t in shown if t.startswith(("w", "e"))]  # the finding's and the adapter error's
    assert {t[0] for t in ours} == {"w", "e"}, shown
    for text in ours:
        whole = message if text.startswith("w") else rep.error
        kept = text[: -len(ELLIPSIS)] if text != whole else text
        assert whole.startswith(kept) and not _cut_inside_a_number(whole, len(kept)), text
