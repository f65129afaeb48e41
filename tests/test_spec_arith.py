"""The kernels' division-free window number (spec/arith.py): Z3 proves every step of the chain, the
proof breaks with a real counterexample when the correction is removed, and numpy agrees with
the model and with the claim on millions of (tick, exp) pairs."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import z3

from wheelspec.conformance.cli import main
from wheelspec.optimized import timer_kernels
from wheelspec.spec import arith, lemmas

# Generous: the machine running the tests may be loaded (the proof takes about 10 s of CPU, and a
# portfolio share of a quarter of this on the reciprocal).
TIMEOUT_MS = 120_000


STEPS = arith.LEMMAS + arith.SLOW_LEMMAS


@pytest.mark.slow
@pytest.mark.parametrize("lemma", STEPS, ids=[lm.name for lm in STEPS])
def test_every_step_is_proven(lemma):
    # SLOW_LEMMAS: the reciprocal's rounding, which wheelspec prove leaves to its definition.
    timeout = TIMEOUT_MS * (2 if lemma in arith.SLOW_LEMMAS else 1)
    o = lemmas.run_lemma(lemma, timeout_ms=timeout)
    assert o.result == "proven", (o.result, o.reason, o.counterexample)


def _numpy_quotient(exp: np.ndarray, tick: np.ndarray) -> np.ndarray:
    """The kernels' float quotient, in numpy float64."""
    return (exp.astype(np.float64) * (1.0 / tick.astype(np.float64))).astype(np.int64)


def _corrected(exp: np.ndarray, tick: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    v0 = _numpy_quotient(exp, tick)
    m = v0 * tick
    branching = np.where(m > exp, v0 - 1, np.where(m + tick <= exp, v0 + 1, v0))
    branch_free = v0 - (m > exp).astype(np.int64) + (m + tick <= exp).astype(np.int64)
    return v0, branching, branch_free


@pytest.mark.slow
def test_without_the_correction_z3_finds_a_pair_numpy_gets_wrong():
    lemma = next(lm for lm in arith.LEMMAS if lm.mutation == "no-correction")
    o = lemmas.run_lemma(lemma, lemmas.MUTATIONS["no-correction"][0], timeout_ms=TIMEOUT_MS)
    assert o.result == "counterexample", (o.result, o.reason)
    cex = o.counterexample
    tick, exp = np.array([cex["tick"]]), np.array([cex["exp"]])
    assert exp[0] % tick[0] == 0 and cex["exp // tick"] == exp[0] // tick[0]
    v0, branching, branch_free = _corrected(exp, tick)
    # The model's float quotient is numpy's, and it is wrong; the corrected one is right.
    assert v0[0] == cex["vid = int64(float64(exp) * (1.0 / float64(tick)))"] != exp[0] // tick[0]
    assert branching[0] == branch_free[0] == exp[0] // tick[0]


@pytest.mark.slow
def test_the_cli_prints_the_counterexample_of_the_mutation(capsys):
    assert main(["prove", "--no-bmc", "--only", "reciprocal-division", "--mutations", "--solver-seconds", "180"]) == 0
    out = capsys.readouterr().out
    assert "reciprocal-division / no-correction (counterexample): tick=" in out


def test_z3_model_of_the_float_quotient_is_numpy_float64():
    # The proof's model of the operations (SMT-LIB fp, round-to-nearest-even) computes what numpy does.
    rng = np.random.default_rng(7)
    ticks = np.concatenate([[1, 3, 49, 2**20 - 1, 3 * 2**40, 2**53 + 1, 2**60 - 1, arith.TICK_BOUND],
                            rng.integers(1, arith.TICK_BOUND, 40)]).astype(np.int64)
    exps = np.concatenate([[0, 49, 2**44 - 1, arith.EXP_BOUND - 1, 2**53 // 3],
                           rng.integers(0, arith.EXP_BOUND, 43)]).astype(np.int64)
    want = _numpy_quotient(exps, ticks)
    for e, t, w in zip(exps.tolist(), ticks.tolist(), want.tolist()):
        got = z3.simplify(arith.float_quotient(z3.BitVecVal(e, 64), z3.BitVecVal(t, 64)))
        assert got.as_signed_long() == w, (e, t)


def _ticks() -> np.ndarray:
    near = [1, 2, 3, 7, 49, 97, 1000]
    for k in range(1, 62):
        near += [2**k - 1, 2**k, 2**k + 1, 3 * 2**k, 49 * 2**k, 7 * 2**k - 1]
    near += [2**60, 2**60 - 1, 2**60 + 1, 20**13, 65535**3, (2**20 - 1) * 65535**2]
    ticks = np.array(sorted({t for t in near if 1 <= t <= arith.TICK_BOUND}), dtype=np.int64)
    rng = np.random.default_rng(2024)
    return np.concatenate([ticks, np.arange(1, 2049, dtype=np.int64),
                           rng.integers(1, 2**20, 1000), rng.integers(1, arith.TICK_BOUND, 500)])


def _exps(tick: int, rng: np.random.Generator) -> np.ndarray:
    top = arith.EXP_BOUND
    edges = np.array([0, 1, tick - 1, tick, tick + 1, 2**44 - 1, 2**44, 2**44 + 1, top - 1, top - 2], dtype=np.int64)
    # Multiples of the tick and their neighbours near the top of the range (where the float quotient
    # has the least room) and at random.
    q_top = (top - 1) // tick
    ks = np.concatenate([np.arange(max(q_top - 200, 0), q_top + 1), rng.integers(0, q_top + 1, 200)])
    mult = (ks * tick)[:, None] + np.array([-1, 0, 1])
    return np.concatenate([edges, mult.ravel(), rng.integers(0, top, 300)])


def test_numpy_cross_check_over_millions_of_pairs():
    rng = np.random.default_rng(11)
    total = 0
    for tick in _ticks().tolist():
        exp = _exps(tick, rng)
        exp = exp[(exp >= 0) & (exp < arith.EXP_BOUND)]
        t = np.full(exp.shape, tick, dtype=np.int64)
        v0, branching, branch_free = _corrected(exp, t)
        q = exp // tick
        assert np.array_equal(branching, q) and np.array_equal(branch_free, q), tick
        # recip-within-one's sharper statement: the float quotient is q - 1 or q, never q + 1.
        assert ((v0 - q == 0) | (v0 - q == -1)).all(), tick
        total += exp.size
    assert total >= 2_000_000


def test_the_kernels_compute_what_the_proof_models():
    # If the kernels' arithmetic changes, the proof no longer describes it: this names the lines.
    src = pathlib.Path(timer_kernels.__file__).read_text()
    assert "vid = np.int64(np.float64(exp) * (1.0 / np.float64(tick)))" in src
    assert "if vid * tick > exp:\n                vid -= 1\n            elif vid * tick + tick <= exp:\n" \
           "                vid += 1" in src
    assert src.count("= 1.0 / np.float64(t") == 6  # _bucket_block's reciprocals, one per level
    assert "vid = np.int64(np.float64(exp) * rec)\n        q = vid * tick\n" \
           "        vid = vid - np.int64(q > exp) + np.int64(q + tick <= exp)" in src
    assert "fastmath" not in src  # no reassociation or reciprocal approximation
