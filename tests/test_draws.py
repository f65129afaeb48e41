"""The generator's random source (conformance/check/draws.py) draws exactly what ``random.Random``
draws: every value and the state after it, so a seed's schedule is the same schedule."""

from __future__ import annotations

import random

import pytest

from wheelspec.conformance.check.draws import Draws
from wheelspec.conformance.check.generate import generate


def test_draws_gives_random_randoms_values_call_for_call():
    for seed in ("1:timer:0", "2:purgatory:17", "x"):
        ours, std = Draws(seed), random.Random(seed)
        plan = random.Random(seed + "plan")
        for _ in range(20_000):
            what = plan.randrange(6)
            if what == 0:
                lo = plan.randrange(-10**9, 10**9)
                hi = lo + plan.choice((1, 2, 3, 7, 1000, 2**31, 2**62 + 5))
                assert ours.randrange(lo, hi) == std.randrange(lo, hi)
            elif what == 1:
                seq = tuple(range(plan.choice((1, 2, 3, 5, 8, 100, 4097))))
                assert ours.choice(seq) == std.choice(seq)
            elif what == 2:
                assert ours.random() == std.random()
            elif what == 3:
                assert ours.sample(range(50), 3) == std.sample(range(50), 3)
            elif what == 4:
                assert ours.choices("abc", [1, 2, 3]) == std.choices("abc", [1, 2, 3])
            else:
                assert ours.choice("xyz") == std.choice("xyz")
        assert ours.getstate() == std.getstate()


def test_draws_refuses_the_forms_it_does_not_draw_rather_than_drawing_them_otherwise():
    d = Draws(0)
    with pytest.raises(TypeError):
        d.randrange(5)
    with pytest.raises(TypeError):
        d.randrange(0, 10, 2)
    with pytest.raises(ValueError, match="empty range"):
        d.randrange(3, 3)
    with pytest.raises(IndexError):
        d.choice([])


def test_a_schedule_is_the_one_the_standard_random_draws(monkeypatch):
    from wheelspec.conformance.check import generate as gen

    drawn = {(k, s): generate(k, s) for k in ("timer", "purgatory") for s in range(150)}
    monkeypatch.setattr(gen, "Draws", random.Random)
    for (k, s), want in drawn.items():
        assert generate(k, s) == want, (k, s)
