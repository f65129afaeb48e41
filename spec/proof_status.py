"""Each registry property's proof status, derived from the proofs themselves.

A property of spec/properties.py is *proven for all configurations* when some lemma that must hold
names it in ``Lemma.proves`` (:data:`GROUPS`: the arithmetic lemmas of :mod:`.lemmas` and
:mod:`.arith`, the wheel's induction of :mod:`.wheel_induction`, the purgatory's proof of
:mod:`.purgatory_proof`); *proven for bounded configurations* when one of :mod:`.bmc`'s
invariants establishes it (``bmc.PROVES``) for the configurations ``bmc.CONFIGS``; otherwise it is
*tested only* (the history checker and the test suite judge it on runs).  Nothing here is written
by hand: ``wheelspec prove`` prints the table, and SEMANTICS.md "Proof status" carries it
(``tests/test_proof_status.py`` fails when the two disagree).

Imports Z3 (through the lemma modules).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import arith, bmc, lemmas, purgatory_proof, wheel_induction
from .lemmas import Lemma
from .properties import PROPERTIES

ALL_CONFIGURATIONS = "proven for all configurations"
BOUNDED = "proven for bounded configurations"
TESTED = "tested only"
#: what judges a property no proof covers
UNPROVEN = "its judge, on runs, and the tests"

#: Every group of lemmas ``wheelspec prove`` runs: (group name, lemmas, the mutations they name).
GROUPS: tuple[tuple[str, tuple[Lemma, ...], dict[str, tuple[Any, str]]], ...] = (
    ("arithmetic", lemmas.LEMMAS + arith.LEMMAS, dict(lemmas.MUTATIONS)),
    ("wheel induction", wheel_induction.LEMMAS, dict(lemmas.MUTATIONS)),
    ("purgatory", purgatory_proof.LEMMAS, dict(purgatory_proof.MUTATIONS)),
)


@dataclasses.dataclass(frozen=True)
class Status:
    prop: str
    #: the judge that defines the property (spec/properties.py)
    judge: str
    #: :data:`ALL_CONFIGURATIONS`, :data:`BOUNDED` or :data:`TESTED`
    status: str
    #: the lemmas (that must hold) naming the property in ``proves``
    lemmas: tuple[str, ...]
    #: the bounded configurations whose induction establishes it (``bmc.Config.describe()``)
    bounded: tuple[str, ...]
    #: hazard lemmas naming it: a configuration or profile where it does not hold (a counterexample)
    limits: tuple[str, ...] = ()

    def evidence(self) -> str:
        parts = []
        if self.lemmas:
            parts.append(", ".join(self.lemmas))
        if self.bounded:
            parts.append("bounded: " + "; ".join(self.bounded))
        if self.limits:
            parts.append("except: " + ", ".join(self.limits))
        return " | ".join(parts) if parts else UNPROVEN


def all_lemmas() -> tuple[Lemma, ...]:
    return tuple(lm for _, group, _ in GROUPS for lm in group)


def statuses() -> tuple[Status, ...]:
    """One :class:`Status` per registered property name, in the registry's order."""
    by_lemma: dict[str, list[str]] = {}
    limits: dict[str, list[str]] = {}
    for lm in all_lemmas():
        for name in lm.proves:
            (by_lemma if lm.expect == "proven" else limits).setdefault(name, []).append(lm.name)
    bounded_props = set(bmc.PROVES.values())
    configs = tuple(c.describe() for c in bmc.CONFIGS)
    out, seen = [], set()
    for p in PROPERTIES:
        if p.name in seen:
            continue
        seen.add(p.name)
        proven = tuple(by_lemma.get(p.name, ()))
        bounded = configs if p.name in bounded_props else ()
        status = ALL_CONFIGURATIONS if proven else BOUNDED if bounded else TESTED
        out.append(Status(p.name, p.judge, status, proven, bounded, tuple(limits.get(p.name, ()))))
    return tuple(out)


def unknown_proves() -> list[str]:
    """``lemma: name`` for every ``proves`` entry that names no registered property."""
    known = {p.name for p in PROPERTIES}
    bad = [f"{lm.name}: {name}" for lm in all_lemmas() for name in lm.proves if name not in known]
    bad += [f"bmc {inv}: {name}" for inv, name in bmc.PROVES.items() if name not in known]
    return bad


def markdown_table() -> str:
    """The table SEMANTICS.md "Proof status" carries, exactly."""
    rows = ["| property | judge | status | by |", "|---|---|---|---|"]
    for s in statuses():
        by = ", ".join(f"`{x}`" for x in s.lemmas)
        if s.bounded:
            by += ("; " if by else "") + "bounded (`spec/bmc.py`): " + "; ".join(s.bounded)
        if s.limits:
            by += "; except where " + ", ".join(f"`{x}`" for x in s.limits) + " gives a counterexample"
        rows.append(f"| `{s.prop}` | {s.judge} | {s.status} | {by or UNPROVEN} |")
    return "\n".join(rows)
