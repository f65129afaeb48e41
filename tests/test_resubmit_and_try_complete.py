"""Re-submitting an operation, the reported ``tryComplete`` calls, and cancelling a task never added
(SEMANTICS.md, "Resubmit", "tryComplete calls", "Cancel").

The expected histories are Kafka's, read from ``DelayedOperationPurgatory.tryCompleteElseWatch``
and ``DelayedOperation.safeTryCompleteOrElse`` / ``safeTryComplete`` (server-common, Java) and
``TimerTask.cancel``; every engine (reference, optimized, step model) must produce them, and the
history checker must accept them and reject three mutant purgatories written here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from wheelspec import optimized, reference
from wheelspec.reference import operation as ref_operation
from wheelspec.reference import purgatory as ref_purgatory
from wheelspec.reference.scheduler import Ctx, drain
from wheelspec.reference.steps import StepSimulation
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.checker import check_history
from wheelspec.spec.profiles import profile

TC, W, R, CP, X, V = ev.TryComplete, ev.TryCompleteElseWatch, ev.Resubmit, ev.Complete, ev.Expire, ev.Advance
O, CK, SC, C = ev.Observe, ev.CheckAndComplete, ev.SetCompletable, ev.Cancel
K1 = profile("kafka", 1)


class _Steps:
    """The step model driven one call at a time, with the per-operation API's shape."""

    def __init__(self, **kw: Any) -> None:
        self.sim = StepSimulation(**kw)
        self.ctx = Ctx(0, "main")

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.sim, name)
        return lambda *args: drain(method(self.ctx, *args), self.ctx)

    @property
    def events(self) -> list[ev.Event]:
        return self.sim.events


def engines(**kw: Any) -> list[tuple[str, Any, Callable[[Any], list[ev.Event]]]]:
    return [("reference", reference.Simulation(**kw), lambda s: s.history.events),
            ("optimized", optimized.Simulation(debug=True, **kw), lambda s: s.history.events),
            ("steps", _Steps(**kw), lambda s: s.events)]


def run_all(program: list[ops.Op], **kw: Any) -> list[tuple[str, list[ev.Event]]]:
    out = []
    for name, sim, events in engines(**kw):
        for op in program:
            ops.invoke(sim, op)
        out.append((name, list(events(sim))))
    return out


# -- resubmit, state by state (Kafka's facts) -------------------------------------------------------
RESUBMITS = [
    # Watched (not completable): tryComplete twice, listed again (op on 'a' twice, and on 'b'),
    # estimated + 1, re-timed from now with its own timeout: the new entry replaces the old one
    # (numDelayed stays 1), so the deadline moves from 5 to 3 + 5 = 8.
    ("watched", [ops.Watch(1, 5, ("a",)), ops.AdvanceTo(3), ops.Resubmit(1, ("a", "b")), ops.NumDelayed(),
                 ops.Watched(), ops.AdvanceTo(7), ops.AdvanceTo(8)],
     [TC(0, 1, False), TC(0, 1, False), W(0, 1, 5, ("a",), False), V(3),
      TC(3, 1, False), TC(3, 1, False), R(3, 1, ("a", "b"), False), O(3, "num_delayed", 1), O(3, "watched", 3),
      V(7), CP(8, 1, "expire"), X(8, 1), V(8)]),
    # Watched and completable: the first try completes it (its timer entry cancelled by
    # forceComplete), nothing is listed again, result true.
    ("watched-completable", [ops.Watch(1, 5, ("a",)), ops.SetCompletable(1), ops.Resubmit(1, ("b",)),
                             ops.NumDelayed(), ops.Watched()],
     [TC(0, 1, False), TC(0, 1, False), W(0, 1, 5, ("a",), False), SC(0, 1, True),
      CP(0, 1, "try"), TC(0, 1, True), R(0, 1, ("b",), True), O(0, "num_delayed", 0), O(0, "watched", 1)]),
    # Completed (forced): both tries lose (forceComplete finds the flag set), no key lists it again
    # (current Kafka skips the keys of a completed operation), never re-timed, result false.
    ("completed", [ops.Watch(1, 5, ("a",)), ops.ForceComplete(1), ops.SetCompletable(1),
                   ops.Resubmit(1, ("b",)), ops.NumDelayed(), ops.Watched(), ops.AdvanceTo(20)],
     [TC(0, 1, False), TC(0, 1, False), W(0, 1, 5, ("a",), False), CP(0, 1, "force"), ev.ForceComplete(0, 1, True),
      SC(0, 1, True), TC(0, 1, False), TC(0, 1, False), R(0, 1, ("b",), False), O(0, "num_delayed", 0),
      O(0, "watched", 1), V(20)]),
    # Expired: the same as completed (run() completed it via forceComplete); no second expiry.
    ("expired", [ops.Watch(1, 5, ("a",)), ops.AdvanceTo(5), ops.Resubmit(1, ("a",)), ops.NumDelayed(),
                 ops.AdvanceTo(30)],
     [TC(0, 1, False), TC(0, 1, False), W(0, 1, 5, ("a",), False), CP(5, 1, "expire"), X(5, 1), V(5),
      TC(5, 1, False), TC(5, 1, False), R(5, 1, ("a",), False), O(5, "num_delayed", 0), V(30)]),
    # Cancelled for a key (timer entry gone, not completed): re-timed, so it can expire again.
    ("cancelled-for-key", [ops.Watch(1, 5, ("a",)), ops.CancelForKey("a"), ops.Resubmit(1, ("a",)),
                           ops.NumDelayed(), ops.AdvanceTo(5)],
     [TC(0, 1, False), TC(0, 1, False), W(0, 1, 5, ("a",), False), ev.CancelForKey(0, "a", (1,)),
      TC(0, 1, False), TC(0, 1, False), R(0, 1, ("a",), False), O(0, "num_delayed", 1),
      CP(5, 1, "expire"), X(5, 1), V(5)]),
]


@pytest.mark.parametrize("name,program,want", RESUBMITS, ids=[r[0] for r in RESUBMITS])
def test_resubmit_matches_kafka_in_every_engine(name, program, want):
    for engine, got in run_all(program, try_complete_events=True):
        assert got == want, (engine, got)
        verdict = check_history(got, K1, z3=True)  # the fast path, and Z3 re-judging every result
        assert verdict.ok, verdict.explain(got)


def test_strict_gt_resubmit_keeps_the_old_entry_in_mocktimers_queue():
    program = [ops.Watch(1, 5, ("a",)), ops.AdvanceTo(2), ops.Resubmit(1, ("a",)), ops.NumDelayed(),
               ops.AdvanceTo(6), ops.NumDelayed(), ops.AdvanceTo(8)]
    for engine, got in run_all(program, profile="strict-gt"):
        # two queue entries (the superseded one counted until it is dequeued), one expiry
        assert [e.value for e in got if isinstance(e, O)] == [2, 1], (engine, got)
        assert sum(isinstance(e, X) for e in got) == 1
        assert check_history(got, profile("strict-gt"), z3=True).ok


def test_unknown_op_resubmit_raises_keyerror_everywhere():
    for _name, sim, _events in engines():
        with pytest.raises(KeyError):
            sim.resubmit(3, ["a"])


def test_without_the_flag_histories_have_no_try_complete_events():
    for _name, got in run_all([ops.Watch(1, 5, ("a",)), ops.CheckAndComplete("a")]):
        assert not any(isinstance(e, TC) for e in got)


# -- cancel of a task never added ------------------------------------------------------------------
@pytest.mark.parametrize("prof", ["kafka", "strict-gt"])
def test_cancel_of_a_task_never_added_is_a_noop_returning_false(prof):
    for name, sim, events in engines(profile=prof):
        assert sim.cancel(7) is False, name
        assert events(sim) == [C(0, 7, False)], name
        assert check_history(events(sim), profile(prof), z3=True).ok


# -- the tryComplete call pattern: accepted for the reference, rejected for mutants -----------------
PATTERN = [ops.Watch(1, 5, ("a", "a")), ops.Watch(2, 5, ("a",), completes_on_retry=True),
           ops.Watch(3, 5, ("a",)), ops.ForceComplete(3), ops.CheckAndComplete("a"), ops.SetCompletable(1),
           ops.CheckAndComplete("a"), ops.Watch(4, 5, ("a",)), ops.AdvanceTo(2), ops.Resubmit(4, ("a",)),
           ops.AdvanceTo(6), ops.AdvanceTo(7)]


def ref_history(program: list[ops.Op]) -> list[ev.Event]:
    return run_all(program, try_complete_events=True)[0][1]


def test_reference_call_pattern_is_accepted():
    for _name, got in run_all(PATTERN, try_complete_events=True):
        verdict = check_history(got, K1, z3=True)
        assert verdict.ok, verdict.explain(got)
        assert sum(isinstance(e, TC) for e in got) >= 10


@contextmanager
def patched(obj: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def _no_second_try(self: Any, f: Callable[[], None]) -> bool:
    with self.lock, self.asking("try"):
        if self.try_complete():
            return True
        f()
        return False  # mutant: no "last completion check" after watching


def _try_completed_too(self: Any) -> int:
    completed = 0
    for seq, op in self._snapshot():
        with op.lock, op.asking("check"):  # mutant: no isCompleted guard (KAFKA-17848)
            won = op.try_complete()
        if won or op.is_completed:
            self._drop(seq)
            completed += won
    if not self._ops:
        self._purgatory._remove_key_if_empty(self.key, self)
    return completed


def _resubmit_not_retimed(orig: Callable[..., bool]) -> Callable[..., bool]:
    def try_complete_else_watch(self: Any, op: Any, keys: Any) -> bool:
        if op.timer_task_entry() is None:
            return orig(self, op, keys)
        timer, self.timer_enabled = self.timer_enabled, False  # mutant: keeps the old timer entry
        try:
            return orig(self, op, keys)
        finally:
            self.timer_enabled = timer
    return try_complete_else_watch


def test_a_purgatory_that_skips_the_second_try_is_caught():
    with patched(ref_operation.DelayedOperation, "safe_try_complete_or_else", _no_second_try):
        h = ref_history([ops.Watch(1, 5, ("a",))])
    verdict = check_history(h, K1)
    assert {v.prop for v in verdict.violations} == {"try-complete-calls"}, verdict.explain(h)
    assert "not again after watching" in verdict.violations[0].message


def test_a_purgatory_that_tries_completed_operations_is_caught():
    with patched(ref_purgatory.Watchers, "try_complete_watched", _try_completed_too):
        h = ref_history([ops.Watch(1, 5, ("a",)), ops.ForceComplete(1), ops.CheckAndComplete("a")])
    verdict = check_history(h, K1)
    assert {v.prop for v in verdict.violations} == {"try-complete-calls"}, verdict.explain(h)
    assert "KAFKA-17848" in verdict.violations[0].message


def test_a_purgatory_that_does_not_retime_a_resubmit_is_caught():
    orig = ref_purgatory.DelayedOperationPurgatory.try_complete_else_watch
    with patched(ref_purgatory.DelayedOperationPurgatory, "try_complete_else_watch", _resubmit_not_retimed(orig)):
        h = ref_history([ops.Watch(1, 5, ("a",)), ops.AdvanceTo(3), ops.Resubmit(1, ("a",)), ops.AdvanceTo(5)])
    verdict = check_history(h, K1)
    assert "no-early-expire" in {v.prop for v in verdict.violations}, verdict.explain(h)
    assert "resubmitted at 3" in next(v.message for v in verdict.violations if v.prop == "no-early-expire")
    # Z3 confirms it: the expiry keeps the resubmit's deadline (3 + 5), not the watch's
    assert any(n.startswith("z3: no-early-expire confirmed") for n in verdict.z3_notes), verdict.z3_notes


# -- Z3 and the fast path agree on resubmit histories ------------------------------------------------
_CFK = RESUBMITS[4][2]    # cancelled for a key, resubmitted: on the timer again, expires at 5
_WATCHED = RESUBMITS[0][2]  # resubmitted at 3: deadline 3 + 5 = 8
# (name, history, the property the fast path and Z3 must both find, or None for a valid history)
Z3_AGREES = [
    *[(f"valid-{name}", want, None) for name, _program, want in RESUBMITS],
    # a resubmit after cancelForKey puts the op back on the timer: num_delayed is 1, not 0
    ("cfk-num-delayed", [*_CFK[:7], O(0, "num_delayed", 0), *_CFK[8:]], "num-delayed"),
    # ... and re-times it, so it must expire by 5
    ("cfk-lost", _CFK[:8] + [V(5)], "no-lost-operation"),
    # without the resubmit the cancelled entry never expires
    ("cfk-no-resubmit", [*_CFK[:4], CP(5, 1, "expire"), X(5, 1), V(5)], "expire-rule"),
    # the resubmit at 3 moves the deadline to 8: an expiry at 7 is early, none by 8 is lost
    ("early-after-resubmit", [*_WATCHED[:10], CP(7, 1, "expire"), X(7, 1), V(7), V(8)], "no-early-expire"),
    ("lost-after-resubmit", [*_WATCHED[:10], V(7), V(8)], "no-lost-operation"),
    # a key only the resubmit named: cancelForKey('b') must return the op, checkAndComplete('b')
    # must complete it once completable
    ("cfk-of-resubmitted-key", [W(0, 1, 5, ("a",), False), R(0, 1, ("b",), False), ev.CancelForKey(0, "b", ())],
     "cancel-for-key-result"),
    ("wakeup-via-resubmitted-key", [W(0, 1, 5, ("a",), False), R(0, 1, ("b",), False), SC(0, 1, True),
                                    CK(0, "b", 0)], "no-lost-wakeup"),
    ("valid-cfk-of-resubmitted-key", [W(0, 1, 5, ("a",), False), R(0, 1, ("b",), False),
                                      ev.CancelForKey(0, "b", (1,)), O(0, "num_delayed", 0)], None),
    ("valid-wakeup-via-resubmitted-key", [W(0, 1, 5, ("a",), False), R(0, 1, ("b",), False), SC(0, 1, True),
                                          CP(0, 1, "check"), CK(0, "b", 1)], None),
    # a resubmit of a completed op returning true: its earlier completion does not count
    ("resubmit-of-completed-returns-true", [W(0, 1, 5, ("a",), False), CP(0, 1, "force"), ev.ForceComplete(0, 1, True),
                                            R(0, 1, ("a",), True)], "watch-result"),
    # ... also when an earlier resubmit completed it by its try: that Complete is not this call's
    ("second-resubmit-returns-true", [W(0, 1, 5, ("a",), False), SC(0, 1, True), CP(0, 1, "try"),
                                      R(0, 1, ("a",), True), R(0, 1, ("b",), True)], "watch-result"),
]


@pytest.mark.parametrize("name,history,prop", Z3_AGREES, ids=[c[0] for c in Z3_AGREES])
def test_z3_and_the_fast_path_agree_on_resubmit_histories(name, history, prop):
    fast = check_history(history, K1)
    full = check_history(history, K1, z3=True)
    assert {v.prop for v in fast.violations} == ({prop} if prop else set()), fast.explain(history)
    # Z3 finds nothing the fast path accepted, and confirms every violation it found
    assert {v.prop for v in full.violations} == {v.prop for v in fast.violations}, full.explain(history)
    assert not any("DISAGREES" in n for n in full.z3_notes), full.z3_notes
    if prop:
        assert any(n.startswith(f"z3: {prop} confirmed") for n in full.z3_notes), full.z3_notes


def test_z3_does_not_report_again_a_try_complete_violation_the_fast_path_found():
    # the second call returns true but completed nothing: the fast path names the call (#1); Z3,
    # re-judging the watch's calls, must not add the same finding as one "the fast path accepted"
    h = [TC(0, 4, False), TC(0, 4, True), W(0, 4, 5, ("b",), False)]
    verdict = check_history(h, K1, z3=True)
    assert [v.prop for v in verdict.violations] == ["try-complete-calls"], verdict.explain(h)
    assert "fast path accepted" not in verdict.violations[0].message


def test_the_checker_ignores_try_complete_calls_when_told_they_are_not_reported():
    h = [TC(0, 1, False), W(0, 1, 5, ("a",), False)]
    assert not check_history(h, K1).ok
    assert check_history(h, K1, reports_tries=False).ok
    # told they are reported, a watch with no call at all is a finding
    assert not check_history([W(0, 1, 5, ("a",), False)], K1, reports_tries=True).ok
