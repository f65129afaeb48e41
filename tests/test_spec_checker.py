"""The history checker's fast path: every property flags a planted violation, explains it in terms
of the events involved, and passes the untouched history the violation was planted in."""

from __future__ import annotations

import pytest

from wheelspec.spec import events as ev
from wheelspec.spec.checker import PROPERTIES, Verdict, check_history
from wheelspec.spec.findings import Finding
from wheelspec.spec.history import History
from wheelspec.spec.profiles import Granularity, profile

K10 = profile("kafka", 10)
K1 = profile("kafka", 1)
GT = profile("strict-gt")
ST = profile("strict")

A, F, C, V, O = ev.Add, ev.Fire, ev.Cancel, ev.Advance, ev.Observe
W, CP, X = ev.TryCompleteElseWatch, ev.Complete, ev.Expire
SC, CK, CFK, FC, P = ev.SetCompletable, ev.CheckAndComplete, ev.CancelForKey, ev.ForceComplete, ev.Purge

# (name, profile, good history, bad history, the property the bad one breaks, words the message must use)
CASES = [
    ("clock-back", K1, [A(5, 1, 10, 15), V(5)], [A(5, 1, 10, 15), V(3)], "well-formed", ["went back", "5", "3"]),
    ("bad-exp", K1, [A(5, 1, 10, 15)], [A(5, 1, 10, 16)], "well-formed", ["exp 16", "15"]),
    ("early-kafka", K10, [A(1000, 7, 15, 1015), F(1010, 7, 1015), V(1010)],
     [A(1000, 7, 15, 1015), F(1009, 7, 1015), V(1009)], "no-early-fire",
     ["task 7 (exp 1015) fired at 1009", "1010", "kafka tick 10"]),
    ("early-strict", ST, [A(0, 1, 5, 5), F(5, 1, 5), V(5)], [A(0, 1, 5, 5), F(4, 1, 5), V(4)], "no-early-fire",
     ["task 1 (exp 5) fired at 4", "strict"]),
    ("early-gt", GT, [A(0, 1, 5, 5), F(6, 1, 5), V(6)], [A(0, 1, 5, 5), F(5, 1, 5), V(5)], "no-early-fire",
     ["fired at 5", "earliest allowed time 6"]),
    ("late", profile("kafka", 1, lateness_ms=5), [A(0, 1, 5, 5), V(3), F(10, 1, 5), V(10)],
     [A(0, 1, 5, 5), V(3), F(11, 1, 5), V(11)], "late-fire", ["6 ms late", "5 ms"]),
    # a declared granularity (a coarse timer): lateness 10 and earliness 3 widen the window to [2, 15]
    ("granularity-late", profile("strict", granularity=Granularity(10, 3)), [A(0, 1, 5, 5), V(14), F(15, 1, 5), V(15)],
     [A(0, 1, 5, 5), V(15), F(16, 1, 5), V(16)], "granularity",
     ["had not fired by the end of the advance to 15", "window [2, 15]", "late by at most 10 ms"]),
    ("granularity-early", profile("strict", granularity=Granularity(10, 3)), [A(0, 1, 5, 5), F(2, 1, 5), V(2)],
     [A(0, 1, 5, 5), F(1, 1, 5), V(1)], "granularity", ["fired at 1, before its window [2, 15]"]),
    ("double-fire", K1, [A(0, 1, 5, 5), F(5, 1, 5), V(5), V(6)],
     [A(0, 1, 5, 5), F(5, 1, 5), V(5), F(6, 1, 5), V(6)], "fire-once", ["fired twice", "at 5 and again at 6"]),
    ("superseded", K1, [A(0, 1, 5, 5), A(0, 1, 9, 9), V(5), F(9, 1, 9), V(9)],
     [A(0, 1, 5, 5), A(0, 1, 9, 9), F(5, 1, 5), V(5), F(9, 1, 9), V(9)], "fire-once",
     ["exp 5 fired at 5", "re-add at 0 (exp 9) had replaced it"]),
    ("never-added", K1, [A(0, 1, 5, 5), F(5, 1, 5), V(5)], [A(0, 1, 5, 5), F(5, 1, 5), F(5, 2, 5), V(5)],
     "fire-unknown-task", ["task 2", "never added"]),
    ("after-cancel", K1, [A(0, 1, 5, 5), C(0, 1, True), V(5)],
     [A(0, 1, 5, 5), C(0, 1, True), F(5, 1, 5), V(5)], "no-fire-after-cancel", ["cancelled at 0"]),
    ("lost", K10, [A(0, 1, 25, 25), V(19), F(20, 1, 25), V(20)], [A(0, 1, 25, 25), V(19), V(20)],
     "no-lost-task", ["task 1 (exp 25)", "advance to 20", "earliest time 20"]),
    ("lost-in-add-gt", GT, [F(0, 1, 0), A(0, 1, 0, 0)], [A(0, 1, 0, 0)], "no-lost-task",
     ["did not fire inside add"]),
    ("cancel-pending", K1, [A(0, 1, 5, 5), C(0, 1, True)], [A(0, 1, 5, 5), C(0, 1, False)], "cancel-result",
     ["reported nothing pending"]),
    ("cancel-fired", K1, [A(0, 1, 5, 5), F(5, 1, 5), V(5), C(5, 1, False)],
     [A(0, 1, 5, 5), F(5, 1, 5), V(5), C(5, 1, True)], "cancel-result", ["no live schedule"]),
    ("size", K1, [A(0, 1, 5, 5), A(0, 2, 5, 5), C(0, 1, True), O(0, "size", 1)],
     [A(0, 1, 5, 5), A(0, 2, 5, 5), C(0, 1, True), O(0, "size", 2)], "size", ["returned 2", "1 tasks pending"]),
    ("size-gt", GT, [A(0, 1, 5, 5), C(0, 1, True), O(0, "size", 1)],
     [A(0, 1, 5, 5), C(0, 1, True), O(0, "size", 0)], "size", ["MockTimer"]),
    ("complete-twice", K1, [W(0, 1, 10, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "a", 1)],
     [W(0, 1, 10, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "a", 1), CP(0, 1, "force"),
      FC(0, 1, True)], "complete-once", ["completed twice", "via check", "via force"]),
    ("context", K1, [W(0, 1, 10, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "a", 1)],
     [W(0, 1, 10, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "b", 1)], "complete-context",
     ["op 1 completed via check", "key 'b'"]),
    ("expire-alone", K1, [W(0, 1, 5, ("a",), False), CP(5, 1, "expire"), X(5, 1), V(5)],
     [W(0, 1, 5, ("a",), False), CP(5, 1, "expire"), V(5)], "expire-rule", ["no Expire"]),
    ("expire-after-cancel", K1, [W(0, 1, 5, ("a",), False), CFK(0, "a", (1,)), V(5)],
     [W(0, 1, 5, ("a",), False), CFK(0, "a", (1,)), CP(5, 1, "expire"), X(5, 1), V(5)], "expire-rule",
     ["cancelForKey at 0"]),
    ("early-expire", K10, [W(1000, 1, 15, ("a",), False), CP(1010, 1, "expire"), X(1010, 1), V(1010)],
     [W(1000, 1, 15, ("a",), False), CP(1009, 1, "expire"), X(1009, 1), V(1009)], "no-early-expire",
     ["deadline 1015", "expired at 1009", "1010"]),
    ("lost-op", K1, [W(0, 1, 5, ("a",), False), CP(5, 1, "expire"), X(5, 1), V(5)],
     [W(0, 1, 5, ("a",), False), V(5)], "no-lost-operation", ["op 1 (deadline 5)", "advance to 5"]),
    ("watch-result", K1, [CP(0, 1, "try"), W(0, 1, 5, ("a",), True)], [CP(0, 1, "try"), W(0, 1, 5, ("a",), False)],
     "watch-result", ["returned False", "completed the op"]),
    ("force-result", K1, [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True), FC(0, 1, False)],
     [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True), FC(0, 1, True)], "force-result",
     ["returned True", "no Complete(via=force)"]),
    ("check-count", K1, [W(0, 1, 5, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "a", 1)],
     [W(0, 1, 5, ("a",), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "a", 2)], "check-count",
     ["returned 2", "1 Complete(via=check)"]),
    ("lost-wakeup", K1, [W(0, 1, 5, ("a", "b"), False), SC(0, 1, True), CP(0, 1, "check"), CK(0, "b", 1)],
     [W(0, 1, 5, ("a", "b"), False), SC(0, 1, True), CK(0, "b", 0)], "no-lost-wakeup",
     ["left op 1 uncompleted", "made completable at 0"]),
    ("cfk-missing", K1, [W(0, 1, 5, ("a",), False), W(0, 2, 5, ("a",), False), CFK(0, "a", (1, 2))],
     [W(0, 1, 5, ("a",), False), W(0, 2, 5, ("a",), False), CFK(0, "a", (1,))], "cancel-for-key-result",
     ["did not return op 2"]),
    ("num-delayed", K1, [W(0, 1, 5, ("a",), False), O(0, "num_delayed", 1)],
     [W(0, 1, 5, ("a",), False), O(0, "num_delayed", 0)], "num-delayed", ["returned 0", "leaves 1"]),
    ("purge-delayed", K1, [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True), P(0, 1, 0, 1), V(0)],
     [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True), P(0, 1, 1, 1), V(0)], "num-delayed",
     ["reports 1 delayed"]),
    # the executor race (SEMANTICS.md, Purge): the purge check runs before or after the executor
    # completes what the advance handed over, as the declared executor order allows
    ("purge-before-expiry", K1, [W(0, 1, 1, ("a",), False), CP(1, 1, "expire"), X(1, 1), P(1, 1, 0, 1), V(1)],
     [W(0, 1, 1, ("a",), False), P(1, 1, 0, 0), CP(1, 1, "expire"), X(1, 1), V(1)], "executor-order",
     ["purge at 1 came before the expiration of op 1", "'expire-before-purge'", "'purge-before-expire'"]),
    ("expiry-before-purge", profile("kafka", 1, executor_order="purge-before-expire"),
     [W(0, 1, 1, ("a",), False), P(1, 1, 0, 0), CP(1, 1, "expire"), X(1, 1), V(1)],
     [W(0, 1, 1, ("a",), False), CP(1, 1, "expire"), X(1, 1), P(1, 1, 0, 1), V(1)], "executor-order",
     ["purge at 1 came after the expiration of op 1", "'purge-before-expire'"]),
    ("purge-delayed-race", profile("kafka", 1, executor_order="either"),
     [W(0, 1, 1, ("a",), False), P(1, 1, 0, 0), CP(1, 1, "expire"), X(1, 1), V(1)],
     [W(0, 1, 1, ("a",), False), P(1, 1, 1, 0), CP(1, 1, "expire"), X(1, 1), V(1)], "num-delayed",
     ["reports 1 delayed", "leaves 0", "1 more left it for the executor"]),
    # reported tryComplete calls (SEMANTICS.md, "tryComplete calls"): the second try is missing
    ("try-complete-calls", K1, [ev.TryComplete(0, 1, False), ev.TryComplete(0, 1, False), W(0, 1, 5, ("a",), False)],
     [ev.TryComplete(0, 1, False), W(0, 1, 5, ("a",), False)], "try-complete-calls",
     ["called tryComplete once", "returned false"]),
]


@pytest.mark.parametrize("name,prof,good,bad,prop,words", CASES, ids=[c[0] for c in CASES])
def test_planted_violation_is_flagged_and_explained(name, prof, good, bad, prop, words):
    ok = check_history(good, prof)
    assert ok.ok, ok.explain(good)
    verdict = check_history(bad, prof)
    assert not verdict.ok
    props = {v.prop for v in verdict.violations}
    assert prop in props, verdict.explain(bad)
    v = next(v for v in verdict.violations if v.prop == prop)
    for w in words:
        assert w in v.message, (w, v.message)
    text = verdict.explain(History(bad))
    assert f"[{prop}]" in text
    for i in v.indices:  # the explanation quotes every event involved
        assert f"#{i:<6} {bad[i].kind}(" in text


def test_every_property_has_a_planted_violation():
    assert {c[4] for c in CASES} == set(PROPERTIES)


def test_stop_at_first_returns_one_violation():
    bad = [A(0, 1, 5, 5), F(1, 1, 5), A(1, 2, 5, 6), F(2, 2, 6), V(2)]
    assert len(check_history(bad, K1).violations) == 2
    assert len(check_history(bad, K1, stop_at_first=True).violations) == 1


def test_strict_gt_mocktimer_quirks_are_allowed():
    # delay <= 0 runs inside add; the re-add cancelled the earlier entry, which stays in MockTimer's
    # queue (size 1) until an advance past its expiration drops it unrun.
    h = [A(0, 1, 5, 5), F(0, 1, 0), A(0, 1, 0, 0), O(0, "size", 1), V(5), V(6), O(6, "size", 0)]
    assert check_history(h, GT).ok, check_history(h, GT).explain(h)
    # A second fire of the old entry is a superseded entry firing, under strict-gt as under kafka.
    h2 = [A(0, 1, 5, 5), F(0, 1, 0), A(0, 1, 0, 0), V(5), F(6, 1, 5), V(6)]
    assert {v.prop for v in check_history(h2, GT).violations} == {"fire-once"}
    assert {v.prop for v in check_history(h2, K1).violations} >= {"fire-once"}


def test_violation_and_verdict_shapes():
    v = check_history([A(5, 1, 10, 15), V(3)], K1)
    assert isinstance(v, Verdict) and isinstance(v.violations[0], Finding)
    assert v.violations[0].indices == (0, 1)
    assert "all" in check_history([], K1).explain([])


# -- the Z3 layer ---------------------------------------------------------------------------------
from wheelspec.spec.checker_z3 import ENCODED  # noqa: E402 - the Z3 section's imports
from wheelspec.spec.checker_z3_results import RESULTS  # noqa: E402 - likewise

# the window-local properties; the six result properties (their windows reach back) are below
Z3_CASES = [c for c in CASES if c[4] in ENCODED and c[4] not in RESULTS]


@pytest.mark.parametrize("name,prof,good,bad,prop,words", Z3_CASES, ids=[c[0] for c in Z3_CASES])
def test_z3_confirms_the_violation_and_gives_a_minimal_core(name, prof, good, bad, prop, words):
    from wheelspec.spec.checker import _Judge

    fast = [v for v in _Judge(prof, prof, False).run(bad) if v.prop == prop][0]
    verdict = check_history(bad, prof)
    v = next(v for v in verdict.violations if v.prop == prop)
    assert any(n.startswith(f"z3: {prop} confirmed") for n in verdict.z3_notes), verdict.z3_notes
    assert v.indices and v.message == fast.message
    # the core names only events of the violation's window, at least one the fast path named
    assert set(v.indices) & set(fast.indices)
    assert min(v.indices) >= min(fast.indices) - 2 and max(v.indices) <= max(fast.indices) + 1


def test_z3_core_drops_events_that_do_not_matter():
    # The add is not needed to see that a fire at 1009 of exp 1015 is early under tick 10.
    bad = [A(1000, 7, 15, 1015), O(1000, "size", 1), F(1009, 7, 1015), V(1009)]
    v = check_history(bad, K10).violations[0]
    assert v.prop == "no-early-fire" and v.indices == (2,)


def test_z3_full_mode_agrees_on_passing_histories():
    for name, prof, good, *_ in CASES:
        verdict = check_history(good, prof, z3=True)
        assert verdict.ok, (name, verdict.explain(good))
        assert any("re-judged" in n for n in verdict.z3_notes)


def test_every_property_is_encoded_in_z3():
    assert set(ENCODED) == set(PROPERTIES)
    for name, prof, _good, bad, _prop, _words in CASES:
        notes = check_history(bad, prof).z3_notes
        assert not any("not-encoded" in n or "fast path only" in n for n in notes), (name, notes)


# -- the six result properties in Z3 ---------------------------------------------------------------
RESULT_CASES = [c for c in CASES if c[4] in RESULTS]

#: the minimal explanation of each planted violation: the result event and the events that make it
#: wrong (e.g. size: the add, the cancel that ended it, the observe; not the other task's add)
CORES = {
    "cancel-pending": (0, 1),          # add, cancel(pending=False)
    "cancel-fired": (0, 1, 3),         # add, its fire, cancel(pending=True)
    "size": (0, 2, 3),                 # add of task 1, its cancel, size()=2
    "size-gt": (0, 2),                 # add (MockTimer keeps the cancelled entry), size()=0
    "context": (0, 2, 3),              # watch of 'a', Complete(check), check of 'b'
    "lost-wakeup": (0, 1, 2),          # watch of 'b', set_completable, check of 'b'
    "cfk-missing": (1, 2),             # watch of op 2 on 'a', cancelForKey('a') without it
    "num-delayed": (0, 1),             # watch, num_delayed()=0
    "purge-delayed": (0, 1, 3),        # watch, its forced completion, purge counting it
    "purge-delayed-race": (0, 1, 2),   # watch, purge counting it, its expiry after the purge
}


def _blind(monkeypatch, prop):
    """Make the fast path blind to ``prop`` (it drops that property's flags)."""
    from wheelspec.spec import checker

    flag = checker._Judge.flag

    def blind_flag(self, p, indices, message):
        if p != prop:
            flag(self, p, indices, message)

    monkeypatch.setattr(checker._Judge, "flag", blind_flag)


@pytest.mark.parametrize("name,prof,good,bad,prop,words", RESULT_CASES, ids=[c[0] for c in RESULT_CASES])
def test_z3_confirms_result_property_with_minimal_core(name, prof, good, bad, prop, words):
    from wheelspec.spec.checker import _Judge
    from wheelspec.spec.checker_z3 import encode
    from wheelspec.spec.checker_z3_results import target

    fast = next(v for v in _Judge(prof, prof, False).run(bad) if v.prop == prop)  # before Z3 shrinks it
    verdict = check_history(bad, prof)
    v = next(v for v in verdict.violations if v.prop == prop)
    assert f"z3: {prop} confirmed; minimal events {list(v.indices)}" in verdict.z3_notes, verdict.z3_notes
    window = encode(prop, bad, fast.indices, prof, prof)[0].idx
    offending = target(prop, bad, fast.indices)  # the result (or Complete) the violation is about
    assert v.indices and set(v.indices) <= set(window) and offending in v.indices
    assert v.indices == CORES[name], verdict.explain(bad)


@pytest.mark.parametrize("name,prof,good,bad,prop,words", RESULT_CASES, ids=[c[0] for c in RESULT_CASES])
def test_z3_full_mode_rejudges_result_properties(monkeypatch, name, prof, good, bad, prop, words):
    ok = check_history(good, prof, z3=True)
    assert ok.ok and any(f"{prop} " in n for n in ok.z3_notes if "re-judged" in n), ok.z3_notes
    # with the fast path blind to the property, the re-judgement alone catches the violation
    _blind(monkeypatch, prop)
    assert check_history(bad, prof).ok
    verdict = check_history(bad, prof, z3=True)
    found = [v for v in verdict.violations if v.prop == prop]
    assert not verdict.ok and found and "fast path accepted" in found[0].message, verdict.explain(bad)
    assert set(CORES[name]) <= set(found[0].indices) or found[0].indices == CORES[name]


# Edge cases of the result rules, each judged the same way by the fast path and by Z3, instance by
# instance: (name, profile, history, the result properties it violates)
EDGES = [
    # a fire with another expiration does not end the schedule; a re-add supersedes it
    ("fire-other-exp", K1, [A(0, 1, 5, 5), A(0, 1, 9, 9), F(5, 1, 5), V(5), C(5, 1, True), O(5, "size", 0)], set()),
    ("fire-inside-add", K10, [F(0, 1, 5), A(0, 1, 5, 5), C(0, 1, False), O(0, "size", 0)], set()),
    ("fire-inside-add-size", K10, [F(0, 1, 5), A(0, 1, 5, 5), O(0, "size", 1)], {"size"}),
    # strict-gt: a delay <= 0 re-add runs inside add; the earlier entry is cancelled (a Kafka caller
    # cancels the old task) but stays in MockTimer's queue, so size counts it and cancel does not
    ("gt-transient", GT, [A(0, 1, 5, 5), F(0, 1, 0), A(0, 1, 0, 0), C(0, 1, False), O(0, "size", 1)], set()),
    ("gt-transient-bad", GT, [A(0, 1, 5, 5), F(0, 1, 0), A(0, 1, 0, 0), C(0, 1, True)], {"cancel-result"}),
    ("gt-popped", GT, [A(0, 1, 5, 5), A(0, 1, 7, 7), V(6), F(6, 1, 7)], set()),
    ("gt-popped-size", GT, [A(0, 1, 5, 5), A(0, 1, 7, 7), V(6), O(6, "size", 2)], {"size"}),
    # KAFKA-1952: completed inside its own watch, it stays in the lists; cancelForKey may name it
    ("completed-in-watch", K1, [CP(0, 1, "try"), W(0, 1, 5, ("a",), True), CFK(0, "a", (1,)),
                                O(0, "num_delayed", 0)], set()),
    ("completed-in-watch-2", K1, [CP(0, 1, "try"), W(0, 1, 5, ("a",), True), CFK(0, "a", ())], set()),
    # ... until a check of the key drops it
    ("dropped-by-check", K1, [CP(0, 1, "try"), W(0, 1, 5, ("a",), True), CK(0, "a", 0), CFK(0, "a", (1,))],
     {"cancel-for-key-result"}),
    # cancelForKey takes the op off the timer (num_delayed) and out of the key's list only
    ("cfk-off-timer", K1, [W(0, 1, 5, ("a", "b"), False), CFK(0, "a", (1,)), O(0, "num_delayed", 0),
                           CFK(0, "b", (1,)), CFK(0, "a", ())], set()),
    ("cfk-twice", K1, [W(0, 1, 5, ("a",), False), CFK(0, "a", (1,)), CFK(0, "a", (1,))], {"cancel-for-key-result"}),
    ("cfk-other-key", K1, [W(0, 1, 5, ("a",), False), CFK(0, "b", (1,)), O(0, "num_delayed", 0)],
     {"cancel-for-key-result", "num-delayed"}),
    # a check after a cancelForKey of the key does not see the op; completable false again is fine
    ("wakeup-after-cfk", K1, [W(0, 1, 5, ("a",), False), CFK(0, "a", (1,)), SC(0, 1, True), CK(0, "a", 0)], set()),
    ("wakeup-reset", K1, [W(0, 1, 5, ("a",), False), SC(0, 1, True), SC(0, 1, False), CK(0, "a", 0)], set()),
    ("wakeup-other-key", K1, [W(0, 1, 5, ("a",), False), SC(0, 1, True), CK(0, "b", 0)], set()),
    # contexts: expire in an advance or in its own watch (delay <= 0); force of another op is wrong
    ("expire-in-watch", K1, [CP(0, 1, "expire"), X(0, 1), W(0, 1, 0, ("a",), False), O(0, "num_delayed", 0)], set()),
    ("force-other-op", K1, [W(0, 1, 5, ("a",), False), W(0, 2, 5, ("a",), False), CP(0, 1, "force"),
                            FC(0, 2, True)], {"complete-context"}),
    ("check-after-cfk", K1, [W(0, 1, 5, ("a",), False), CFK(0, "a", (1,)), SC(0, 1, True), CP(0, 1, "check"),
                             CK(0, "a", 1)], {"complete-context"}),
    ("history-ends", K1, [W(0, 1, 5, ("a",), False), CP(5, 1, "expire"), X(5, 1)], {"complete-context"}),
    # strict-gt purgatory: MockTimer keeps completed entries queued until an advance passes them
    ("gt-num-delayed", GT, [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True),
                            O(0, "num_delayed", 1), V(6), O(6, "num_delayed", 0)], set()),
    ("gt-purge-after-pop", GT, [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), FC(0, 1, True),
                                P(6, 0, 1, 0), V(6)], {"num-delayed"}),
]


@pytest.mark.parametrize("name,prof,history,props", EDGES, ids=[e[0] for e in EDGES])
def test_result_rules_agree_on_edge_cases(name, prof, history, props):
    from wheelspec.spec.checker import _Judge
    from wheelspec.spec.checker_z3 import explain
    from wheelspec.spec.checker_z3_results import target

    fast = _Judge(prof, prof, False).run(history)  # the fast path's own indices, before Z3 shrinks them
    flagged = {(v.prop, target(v.prop, history, v.indices)) for v in fast if v.prop in RESULTS}
    assert {p for p, _ in flagged} == props, fast
    kinds = {ev.Cancel: "cancel-result", ev.Purge: "num-delayed", ev.Complete: "complete-context",
             ev.CheckAndComplete: "no-lost-wakeup", ev.CancelForKey: "cancel-for-key-result"}
    for i, e in enumerate(history):
        prop = {"size": "size", "num_delayed": "num-delayed"}.get(e.what) if isinstance(e, O) else kinds.get(type(e))
        if prop is not None:
            status, core = explain(prop, history, (i,), prof, prof)
            assert status.startswith("confirmed") == ((prop, i) in flagged), (prop, i, status, core)


# -- Z3 against the fast path on perturbed reference histories ------------------------------------
from conftest import examples  # noqa: E402 - this section's imports
from hypothesis import given, settings  # noqa: E402 - likewise
from hypothesis import strategies as st  # noqa: E402 - likewise
from test_spec_wiring import run, scenarios  # noqa: E402 - likewise


def _perturb(h, data):
    """One small corruption of a history: drop an event, or change one result field."""
    import dataclasses

    i = data.draw(st.integers(0, len(h) - 1))
    e = h[i]
    if data.draw(st.integers(0, 6)) == 0 or not isinstance(e, (C, O, P, CP, CK, CFK, SC)):
        return h[:i] + h[i + 1:]
    if isinstance(e, C):
        e = dataclasses.replace(e, pending=not e.pending)
    elif isinstance(e, O):
        e = dataclasses.replace(e, value=e.value + data.draw(st.sampled_from([-1, 1])))
    elif isinstance(e, P):
        e = dataclasses.replace(e, delayed=e.delayed + data.draw(st.sampled_from([-1, 1])))
    elif isinstance(e, CP):
        if e.via == "check" and data.draw(st.booleans()):
            return h[:i] + h[i + 1:]  # a check that misses a completable watcher: a lost wakeup
        e = dataclasses.replace(e, via=data.draw(st.sampled_from(["try", "check", "expire", "force"])))
    elif isinstance(e, CK):
        e = dataclasses.replace(e, key=data.draw(st.sampled_from(["a", "b", "c", 1, 2])))
    elif isinstance(e, CFK):
        ops = list(e.ops)
        if ops and data.draw(st.booleans()):
            ops.pop(data.draw(st.integers(0, len(ops) - 1)))
        else:
            ops.append(data.draw(st.integers(0, 7)))
        e = dataclasses.replace(e, ops=tuple(ops))
    else:
        e = dataclasses.replace(e, value=not e.value)
    return h[:i] + [e] + h[i + 1:]


@pytest.mark.slow
@settings(max_examples=examples(25, 100), deadline=None)
@given(st.data())
def test_z3_and_fast_path_agree_on_result_properties_of_perturbed_histories(data):
    """Every instance of the six result properties is a violation for Z3 iff the fast path flags
    it, and every fast-path violation (of any property) is confirmed, on reference histories with
    up to three corruptions."""
    from wheelspec.reference import Simulation
    from wheelspec.spec.checker import _Judge
    from wheelspec.spec.checker_z3 import explain
    from wheelspec.spec.checker_z3_results import target

    h, prof = run(Simulation, data.draw(scenarios()))
    for _ in range(data.draw(st.integers(1, 3))):
        if h:
            h = _perturb(h, data)
    verdict = check_history(h, prof)
    assert not any("DISAGREES" in n or " unknown" in n for n in verdict.z3_notes), verdict.explain(h)
    flagged = {(v.prop, target(v.prop, h, v.indices)) for v in _Judge(prof, prof, False).run(h) if v.prop in RESULTS}
    kinds = {C: "cancel-result", P: "num-delayed", CP: "complete-context", CK: "no-lost-wakeup",
             CFK: "cancel-for-key-result"}
    for i, e in enumerate(h):
        prop = {"size": "size", "num_delayed": "num-delayed"}.get(e.what) if isinstance(e, O) else kinds.get(type(e))
        if prop is not None:
            status, core = explain(prop, h, (i,), prof, prof)
            assert status.startswith("confirmed") == ((prop, i) in flagged), (prop, i, status, core, h)
