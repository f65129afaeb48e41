"""The Z3 lemmas and bounded checks: they hold, the expected hazards are found, and each breaks,
with a readable counterexample, when the rule it depends on is mutated (they are not vacuous)."""

from __future__ import annotations

import pytest
import z3

from wheelspec.conformance.cli import main
from wheelspec.spec import bmc, lemmas
from wheelspec.spec.lemmas import LEMMAS, MUTATIONS, Query, decide, run_lemma


@pytest.mark.parametrize("lemma", LEMMAS, ids=[lm.name for lm in LEMMAS])
def test_lemma_has_its_expected_result(lemma):
    o = run_lemma(lemma)
    assert o.result == lemma.expect, (o.result, o.reason, o.counterexample)
    if lemma.expect == "counterexample":  # the hazard, with concrete values
        assert o.counterexample and "=" in o.describe_counterexample()


MUTATED = [lm for lm in LEMMAS if lm.mutation]


@pytest.mark.slow
@pytest.mark.parametrize("lemma", MUTATED, ids=[f"{lm.name}/{lm.mutation}" for lm in MUTATED])
def test_mutating_the_rule_gives_a_readable_counterexample(lemma):
    rules, _ = MUTATIONS[lemma.mutation]
    o = run_lemma(lemma, rules)
    assert o.result == "counterexample", (o.result, o.reason)
    text = o.describe_counterexample()
    # readable: every shown variable as name=integer
    for part in text.split(", "):
        name, value = part.rsplit("=", 1)
        assert name and int(value) == int(value)


def test_every_lemma_that_must_hold_has_a_mutation():
    assert all(lm.mutation for lm in LEMMAS if lm.expect == "proven")
    assert set(MUTATIONS) >= {lm.mutation for lm in MUTATED}


def test_relative_bucket_counterexample_really_breaks_placement():
    o = run_lemma(next(lm for lm in LEMMAS if lm.name == "placement"), MUTATIONS["relative-bucket"][0])
    cex = o.counterexample
    b, e, t = cex["bucket_start"], cex["exp"], cex["tick"]
    assert not (b <= e < b + t)  # the model is a genuine counterexample, checked outside Z3


def test_contradictory_hypotheses_are_vacuous_not_proven():
    q = Query()
    x = q.int("x")
    q.where(x > 1, x < 0)
    q.goal = x == 5
    assert decide(q)[0] == "vacuous"


def test_division_order_instances_are_what_the_lemma_proves():
    # The instances Query.divmod adds are exactly the division-order lemma's conclusions.
    q = lemmas.division_order_lemma(lemmas.KAFKA)
    b, qq, r, k = (z3.Int(n) for n in ("b", "q", "r", "K"))
    s = z3.Solver()
    s.add(b >= 1, 0 <= r, r < b, z3.Not(z3.And(*lemmas.division_order(qq, r, b, k))))
    assert s.check() == z3.unsat
    assert decide(q)[0] == "proven"


@pytest.mark.parametrize("mutation,invariants", [
    ("due-le", ("no-early",)), ("relative-bucket", ("linked",)), ("enqueue-always", ("queued",)),
    # a clock that lags a tick breaks alignment, or strands an entry in a bucket nobody will poll
    ("advance-gt", ("linked", "aligned", "drained"))])
def test_bmc_finds_the_broken_invariant_with_a_trace(mutation, invariants):
    c = bmc.bmc(bmc.CONFIGS[0], 3, MUTATIONS[mutation][0])
    assert c.result == "counterexample"
    assert any(i in c.trace[0] for i in invariants), c.trace[0]
    assert c.trace[1].startswith("start: now=") and len(c.trace) >= 3
    assert any(w in line for line in c.trace[2:] for w in ("add(", "poll", "cancel(", "clock ->"))


@pytest.mark.slow
def test_bmc_and_induction_hold_for_kafka_rules():
    cfg = bmc.CONFIGS[1]
    assert bmc.bmc(cfg, 1).result == "proven"
    ind = bmc.k_induction(cfg)
    assert ind.result == "proven", ind.trace


def test_induction_fails_for_a_mutated_rule():
    c = bmc.k_induction(bmc.CONFIGS[1], MUTATIONS["due-le"][0])
    assert c.result == "counterexample" and "no-early" in c.trace[0]


def test_prove_cli_exit_codes(capsys):
    assert main(["prove", "--no-bmc", "--only", "placement", "--only", "kafka-exp-wraps", "--mutations"]) == 0
    out = capsys.readouterr().out
    assert "placement" in out and "proven" in out and "counterexample" in out
    assert main(["prove", "--only", "no-such-lemma"]) == 2
    assert "no such lemma" in capsys.readouterr().err
