"""Tests of mytimer.py: the toy timer's own behaviour, then the whole wheelspec check.

Run in this directory: ``python -m pytest -q test_mytimer.py``.  ``wheelspec_check`` is the
fixture of wheelspec's pytest plugin (installed with wheelspec; docs/guides/PYTEST.md).
"""

from __future__ import annotations

from mytimer import ToyTimer


def test_a_call_runs_once_the_clock_reaches_its_expiration_never_before() -> None:
    timer, ran = ToyTimer(0), []
    timer.call_later(10, lambda: ran.append(timer.now))
    timer.advance(9)
    assert ran == []
    timer.advance(10)
    assert ran == [10]


def test_equal_expirations_run_in_insertion_order_and_cancel_answers_pending() -> None:
    timer, ran = ToyTimer(0), []
    first = timer.call_later(5, lambda: ran.append("first"))
    timer.call_later(5, lambda: ran.append("second"))
    assert timer.size() == 2
    timer.advance(5)
    assert ran == ["first", "second"] and timer.size() == 0
    assert timer.cancel(first) is False  # it ran already


def test_wheelspec_check_passes(wheelspec_check) -> None:
    wheelspec_check("mytimer:adapter", schedules=50).assert_ok()
