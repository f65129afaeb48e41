"""The purgatory's per-operation proof (spec/purgatory_proof.py): every lemma proven, each broken by
its mutation, each invariant satisfiable in a reachable non-trivial state, and the model tied to the
reference: Hypothesis schedules replayed through the reference purgatory, the invariant evaluated on
the concrete state of every (operation, key) pair after every request."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import z3
from conftest import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wheelspec.reference import Simulation
from wheelspec.reference.operation import MockDelayedOperation
from wheelspec.spec import properties
from wheelspec.spec.lemmas import run_lemma
from wheelspec.spec.purgatory_proof import (
    CHECK,
    EXPIRE,
    FORCE,
    INVARIANTS,
    KAFKA,
    LEMMAS,
    MUTATIONS,
    NONE,
    TARGETS,
    TRY,
    State,
    invariant,
    witness,
)

# Each lemma proven and broken by its mutation: tests/test_proof_status.py, for every group.


def test_every_lemma_has_a_mutation_and_names_registered_properties():
    known = {p.name for p in properties.PROPERTIES}
    assert all(lm.mutation in MUTATIONS for lm in LEMMAS)
    assert all(set(lm.proves) <= known for lm in LEMMAS)
    assert all(MUTATIONS[lm.mutation][0] != KAFKA for lm in LEMMAS)
    assert {lm.mutation for lm in LEMMAS} <= set(MUTATIONS)


def test_no_second_try_counterexample_is_the_lost_wakeup():
    """KAFKA-1952's race: the check of the key ran before the operation was watched; without the
    second try the operation ends the call watched, completable and uncompleted."""
    lemma = next(lm for lm in LEMMAS if lm.name == "pp-no-lost-wakeup")
    cex = run_lemma(lemma, MUTATIONS["no-second-try"][0]).counterexample
    assert cex["announced'"] == 1 and cex["done'"] == 0 and cex["completable'"] == 1


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_invariant_holds_in_a_reachable_non_trivial_state(name):
    found, state = witness(name)
    assert found == "sat", found
    if name == "pp-expire-rule":
        assert state["ne"] == 1 and state["nc"] == 1 and state["via"] == EXPIRE
    if name == "pp-no-lost-wakeup":
        assert state["announced"] == 1 and state["checking"] == 1 and state["done"] == 0


def test_witness_reaches_nothing_impossible():
    """The unrolling is not a free-for-all: a second onComplete is unreachable in Kafka's rules."""
    TARGETS["impossible"] = lambda s: s.nc == 2
    INVARIANTS["impossible"] = lambda s: z3.BoolVal(True)
    try:
        assert witness("impossible")[0] == "unsat"
    finally:
        TARGETS.pop("impossible")
        INVARIANTS.pop("impossible")


# ------------------------------------------------------------------ the bridge -----------------
KEYS = ["a", "b", 1]
VIA = {"try": TRY, "check": CHECK, "expire": EXPIRE, "force": FORCE}

op_ref = st.integers(0, 3)
# Checks and satisfying events are weighted up: a check of a key while a watched operation is
# completable is the state no-lost-wakeup is about.
step = st.one_of(
    st.tuples(st.just("watch"), st.one_of(st.integers(-3, 0), st.integers(1, 40)),
              st.lists(st.sampled_from(KEYS), min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("resubmit"), op_ref),
    st.tuples(st.just("completable"), op_ref),
    st.tuples(st.just("completable"), op_ref),
    st.tuples(st.just("check"), st.sampled_from(KEYS)),
    st.tuples(st.just("check"), st.sampled_from(KEYS)),
    st.tuples(st.just("cancel_for_key"), st.sampled_from(KEYS)),
    st.tuples(st.just("force"), op_ref),
    st.tuples(st.just("advance"), st.integers(0, 25)),
)


@dataclasses.dataclass
class Ghost:
    """What the model records and the reference does not hold: O's keys, whether a cancelForKey
    took O's list of K (``cancelled_k``) or O's timer entry (``cancelled``), and whether a check of
    K began while O was completable (``announced``)."""

    keys: tuple
    cancelled: bool = False
    cancelled_k: dict = dataclasses.field(default_factory=dict)
    announced: dict = dataclasses.field(default_factory=dict)


def _listed(sim: Simulation, op: MockDelayedOperation, key) -> bool:
    wl = sim.purgatory._list_for(key)
    w = wl.watchers_by_key.get(key)
    return w is not None and any(o is op for _, o in w._snapshot())


def _timed(op: MockDelayedOperation) -> bool:
    entry = op.timer_task_entry()
    return entry is not None and entry.list is not None


def _concrete(sim: Simulation, op_id: int, ghost: Ghost, key) -> dict:
    op = sim.ops[op_id]
    vias = [e.via for e in sim.history.of_kind("complete") if e.op == op_id]
    return dict(done=op.is_completed, completable=op.completable, submitted=True, in_k=key in ghost.keys,
                listed=_listed(sim, op, key), cancelled_k=ghost.cancelled_k.get(key, False),
                cancelled=ghost.cancelled, timed=_timed(op), checking=False, visited=False, snap=False,
                announced=ghost.announced.get(key, False), phase=0, nc=op.completions, ne=op.expirations,
                via=VIA[vias[-1]] if vias else NONE, pending_cb=0, handed=0)


def _holds(values: dict) -> bool:
    """The invariant's formula evaluated on a concrete state."""
    s = State("")
    subst = [(s.get(n), z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)) for n, v in values.items()]
    return z3.is_true(z3.simplify(z3.substitute(invariant(s), *subst)))


def _submit(sim: Simulation, ghosts: dict, op_id: int, call) -> None:
    """A (re)submit: the first try fails iff O is neither completed nor completable; then O is
    listed on its keys and (not completed) timed, as the model's watch and timer-add steps say."""
    op = sim.ops.get(op_id)
    watched = op is None or not (op.is_completed or op.completable)
    call()
    ghost = ghosts[op_id]
    if watched:
        ghost.cancelled_k = {k: False for k in ghost.keys}
        ghost.cancelled = False


def replay(program: list[tuple]) -> int:
    """Run ``program`` on the reference; after each request check the invariant for every (op, key).
    Returns how many states were checked."""
    sim = Simulation(tick_ms=1, wheel_size=4, purge_interval=1)
    ghosts: dict[int, Ghost] = {}
    checked = 0
    for st_ in program:
        kind = st_[0]
        if kind == "watch":
            op_id, (_, delay, keys, completable) = len(ghosts), st_
            ghosts[op_id] = Ghost(tuple(keys))
            _submit(sim, ghosts, op_id, functools.partial(sim.watch, op_id, delay, keys, completable))
        elif kind in ("resubmit", "completable", "force") and st_[1] not in ghosts:
            continue
        elif kind == "resubmit":
            op_id = st_[1]
            _submit(sim, ghosts, op_id, functools.partial(sim.resubmit, op_id, list(ghosts[op_id].keys)))
        elif kind == "completable":
            sim.set_completable(st_[1], True)  # the model's condition, once true, stays true
        elif kind == "check":
            for op_id, g in ghosts.items():
                g.announced[st_[1]] = g.announced.get(st_[1], False) or sim.ops[op_id].completable
            sim.check_and_complete(st_[1])
        elif kind == "cancel_for_key":
            for op_id, g in ghosts.items():
                if _listed(sim, sim.ops[op_id], st_[1]):
                    g.cancelled = True
                    g.cancelled_k[st_[1]] = True
            sim.cancel_for_key(st_[1])
        elif kind == "force":
            sim.force_complete(st_[1])
        else:
            sim.advance_to(sim.now + st_[1])
        for op_id, g in ghosts.items():
            for key in KEYS:
                values = _concrete(sim, op_id, g, key)
                assert _holds(values), (op_id, key, values, program)
                checked += 1
    sim.close()
    return checked


@settings(max_examples=examples(60, 300), deadline=None)
@given(st.lists(step, min_size=3, max_size=25))
@example([("watch", 5, ["a", "b"], False), ("completable", 0), ("check", "a"), ("advance", 10)])
@example([("watch", 5, ["a"], False), ("cancel_for_key", "a"), ("completable", 0), ("check", "a"),
          ("resubmit", 0), ("advance", 3)])
@example([("watch", 2, ["a", "b"], False), ("advance", 5), ("resubmit", 0), ("force", 0)])
def test_reference_states_satisfy_the_invariant(program):
    replay(program)


def test_the_bridge_can_fail():
    """The evaluation is not constant: a state the reference never reaches (an uncompleted,
    submitted operation missing from its key's list) violates the invariant."""
    sim = Simulation(tick_ms=1, wheel_size=4, purge_interval=1)
    sim.watch(0, 5, ["a"], False)
    good = _concrete(sim, 0, Ghost(("a",)), "a")
    assert _holds(good)
    assert not _holds(dict(good, listed=False))
    assert not _holds(dict(good, nc=1))
    assert not _holds(dict(good, done=True, nc=1, via=TRY, timed=True))
    assert replay([("watch", 5, ["a", "b"], False), ("completable", 0), ("check", "b"), ("advance", 9)]) == 12
    sim.close()
