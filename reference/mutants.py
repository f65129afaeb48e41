"""Known purgatory and timer races, reintroduced one at a time into the step model.

Each mutant names one flag understood by :mod:`.steps`, the Kafka issue whose race it brings back,
and a small scenario on which the deterministic simulation must find it (tests report how many
Hypothesis examples that took, and print the shrunk interleaving).  The correct model passes the
same scenarios under every schedule tried.
"""

from __future__ import annotations

import dataclasses

from wheelspec.spec.ops import AddTask, AdvanceTo, CancelTask, CheckAndComplete, ForceComplete, SetCompletable, Watch

from .concurrent_scenario import ConcurrentScenario


@dataclasses.dataclass(frozen=True)
class Mutant:
    name: str
    #: what the mutant changes, in terms of Kafka's code
    change: str
    #: the Kafka issues whose race it reintroduces
    kafka: str
    #: which property is expected to catch it
    caught_by: str


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("no-second-try",
           "tryCompleteElseWatch does not call tryComplete again after watching the keys",
           "KAFKA-1952 (the reason for the second try)", "lost-wakeup"),
    Mutant("trylock-check",
           "checkAndComplete's safeTryComplete uses lock.tryLock() and skips a busy operation",
           "KAFKA-8334, KAFKA-6653 (tryLock traded a deadlock for a lost wakeup)", "lost-wakeup"),
    Mutant("unguarded-completed",
           "forceComplete reads and then writes `completed` instead of one compareAndSet",
           "KAFKA-17848, KAFKA-19312 (completion must be exactly once)", "exactly-once"),
    Mutant("remove-wrong-list",
           "TimerTaskList.remove unlinks the entry without checking that it is in this list",
           "KAFKA-2226 (NullPointerException when a cancel races a bucket flush)", "crash"),
    Mutant("watch-outside-shard-lock",
           "watchForOperation looks the key's list up under the shard lock but appends after releasing it",
           "KAFKA-2160/2253 (removeKeyIfEmpty racing a watch orphans the operation)", "lost-wakeup / watched"),
    Mutant("check-holds-shard-lock",
           "checkAndComplete walks the key's list (taking operation locks) while holding the shard lock",
           "KAFKA-3994, KAFKA-6042 (lock-order inversion with tryCompleteElseWatch)", "deadlock"),
)}


def scenario_for(name: str) -> ConcurrentScenario:
    """The small concurrent program on which mutant ``name`` is hunted."""
    if name not in MUTANTS:
        raise ValueError(f"unknown mutant {name!r} (known: {', '.join(MUTANTS)})")
    if name in ("no-second-try", "trylock-check"):
        # A request watched while a producer makes it satisfiable and checks its key.
        return ConcurrentScenario(name, threads=((Watch(1, 3, ("a",)),),
                                       (SetCompletable(1), CheckAndComplete("a"))), declare=((1, 3),))
    if name == "unguarded-completed":
        # A satisfied request completes inside tryCompleteElseWatch while someone force-completes it.
        return ConcurrentScenario(name, threads=((Watch(1, 3, ("a",), True),), (ForceComplete(1),)), declare=((1, 3),))
    if name == "remove-wrong-list":
        return ConcurrentScenario(name, threads=((AddTask(1, 1), CancelTask(1)), (AdvanceTo(1),)), tasks=(1,))
    if name == "watch-outside-shard-lock":
        # op1's list entry is dropped (and the key removed) while op2 is being watched on the same key.
        return ConcurrentScenario(name, setup=(Watch(1, 3, ("a",)), ForceComplete(1)),
                        threads=((CheckAndComplete("a"),),
                                 (Watch(2, 3, ("a",)), SetCompletable(2), CheckAndComplete("a"))),
                        declare=((2, 3),))
    # check-holds-shard-lock: two keys in one shard, so the watch needs that shard's lock again
    return ConcurrentScenario(name, threads=((Watch(1, 3, ("a", "b")),), (CheckAndComplete("a"),)),
                    declare=((1, 3),), shards=1)
