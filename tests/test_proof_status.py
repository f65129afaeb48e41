"""Every registry property's proof status (spec/proof_status.py): derived from the lemmas'
``proves`` and bmc's configurations, printed by ``wheelspec prove``, carried by SEMANTICS.md."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from wheelspec.conformance.cli import main
from wheelspec.spec import bmc, proof_status, properties
from wheelspec.spec.lemmas import Lemma, run_lemma

SEMANTICS = Path(__file__).resolve().parent.parent / "spec" / "SEMANTICS.md"


def test_semantics_carries_the_derived_table():
    text = SEMANTICS.read_text(encoding="utf-8")
    assert proof_status.markdown_table() in text, (
        "SEMANTICS.md 'Proof status' differs from spec/proof_status.markdown_table(): paste the new table")


def test_every_property_has_one_status_and_every_proves_name_is_registered():
    names = [s.prop for s in proof_status.statuses()]
    assert names == list(dict.fromkeys(p.name for p in properties.PROPERTIES))
    assert proof_status.unknown_proves() == []
    by = {s.prop: s for s in proof_status.statuses()}
    for name in ("no-early-fire", "fire-once", "no-lost-task"):
        assert by[name].status == proof_status.ALL_CONFIGURATIONS, by[name]
    assert by["no-early-fire"].limits == ("wi-strict-unaligned",)
    assert by["size"].status == proof_status.TESTED


def test_status_follows_the_lemmas_and_the_bounded_checks(monkeypatch):
    # Derived, not written: a lemma naming a property makes it proven; bmc's invariants make it bounded.
    lemma = proof_status.all_lemmas()[0]
    extra = dataclasses.replace(lemma, name="planted", proves=("size",))
    hazard = dataclasses.replace(lemma, name="planted-hazard", expect="counterexample", proves=("cancel-result",))
    groups: tuple[tuple[str, tuple[Lemma, ...], dict], ...] = (("planted", (extra, hazard), {}),)
    monkeypatch.setattr(proof_status, "GROUPS", proof_status.GROUPS + groups)
    monkeypatch.setattr(bmc, "PROVES", {**bmc.PROVES, "queued": "well-formed"})
    by = {s.prop: s for s in proof_status.statuses()}
    assert by["size"].status == proof_status.ALL_CONFIGURATIONS and by["size"].lemmas == ("planted",)
    assert by["cancel-result"].status == proof_status.TESTED and by["cancel-result"].limits == ("planted-hazard",)
    assert by["well-formed"].status == proof_status.BOUNDED
    assert by["well-formed"].bounded == tuple(c.describe() for c in bmc.CONFIGS)
    assert proof_status.markdown_table() not in SEMANTICS.read_text(encoding="utf-8")


def test_prove_prints_and_writes_the_status_table(tmp_path, capsys):
    out = tmp_path / "prove.json"
    assert main(["prove", "--no-bmc", "--only", "wi-no-lost", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "proof status of every registry property" in printed and "proven for all configurations" in printed
    data = json.loads(out.read_text())
    rows = {r["property"]: r for r in data["properties"]}
    assert rows["no-lost-task"]["status"] == proof_status.ALL_CONFIGURATIONS
    assert "wi-no-lost" in rows["no-lost-task"]["lemmas"]
    assert [r["name"] for r in data["results"]] == ["wi-no-lost"]


def test_prove_runs_the_witness_and_the_wheel_mutations(capsys):
    assert main(["prove", "--no-bmc", "--only", "wi-witness", "--only", "wi-shared-bucket", "--mutations"]) == 0
    printed = capsys.readouterr().out
    assert "wi-witness (sat): tick=" in printed
    assert "wi-shared-bucket / fit-le (counterexample)" in printed


def test_prove_prints_a_reachable_state_for_each_purgatory_invariant(tmp_path):
    from wheelspec.spec import purgatory_proof

    names = [f"{lemma}-witness" for lemma in purgatory_proof.TARGETS]
    out = tmp_path / "w.json"
    argv = ["prove", "--no-bmc", "--json", str(out)]
    for name in names:
        argv += ["--only", name]
    assert main(argv) == 0
    results = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    assert sorted(results) == sorted(names)
    # each row is a satisfying run's final state, printed, not merely a "sat" answer
    assert all(r["result"] == "sat" and r["details"] and "=" in r["details"][0] for r in results.values())


#: the lemmas of the parametric groups, each with its group's mutations (the arithmetic group's
#: lemmas and mutations are tested by tests/test_spec_lemmas.py, its slow ones marked)
_PARAMETRIC = [(lm, muts) for name, group, muts in proof_status.GROUPS if name != "arithmetic" for lm in group]


@pytest.mark.parametrize("lemma,mutations", _PARAMETRIC, ids=[lm.name for lm, _ in _PARAMETRIC])
def test_parametric_lemma_has_its_expected_result(lemma, mutations):
    o = run_lemma(lemma)
    assert o.result == lemma.expect, (o.result, o.reason, o.counterexample)


_MUTATED = [(lm, muts) for lm, muts in _PARAMETRIC if lm.mutation]


@pytest.mark.parametrize("lemma,mutations", _MUTATED, ids=[f"{lm.name}/{lm.mutation}" for lm, _ in _MUTATED])
def test_parametric_lemma_is_broken_by_its_mutation(lemma, mutations):
    o = run_lemma(lemma, mutations[lemma.mutation][0])
    assert o.result == "counterexample", (o.result, o.reason)
    assert o.counterexample
