"""Kafka's test MockTimer: the strict-gt profile (SEMANTICS.md, "Profiles" and "Ordering").

The oracle at the bottom is an independent MockTimer over this file's own port of
``java.util.PriorityQueue`` (written from the JDK's documented algorithm, not from
``wheelspec.reference.priority_queue``); the reference must match it event for event, in order,
on programs with many equal expirations.
"""

from __future__ import annotations

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelspec.reference import ManualClock, MockTimer, Simulation, TimerTask
from wheelspec.reference.invariants import check_mock_timer
from wheelspec.reference.scheduler import Ctx, drain
from wheelspec.reference.steps import StepSimulation
from wheelspec.spec import events as ev
from wheelspec.spec import ops
from wheelspec.spec.profiles import MOCK_SIZE_LIVE, MOCK_SIZE_QUEUE


def fires(sim: Simulation) -> list[tuple[int, int, int]]:
    return [(e.task, e.now, e.exp) for e in sim.history.of_kind("fire")]


def test_fires_only_when_now_is_past_exp():
    sim = Simulation(profile="strict-gt")
    sim.add(1, 10)
    sim.advance_to(10)
    assert fires(sim) == []  # now == exp is not enough
    sim.advance_to(11)
    assert fires(sim) == [(1, 11, 10)]


def test_readd_with_nonpositive_delay_runs_once_inside_add_and_the_old_entry_never_runs():
    """Kafka's ``TimerTask.delayMs`` is final: re-adding task 0 with delay 0 is, for a Kafka
    caller, ``old.cancel(); timer.add(new TimerTask(0))``.  MockTimer runs the new task inside
    ``add``; the old entry stays queued (counted by size) but is cancelled, so it never runs, and
    a cancel afterwards finds nothing queued for the task."""
    sim = Simulation(profile="strict-gt")
    sim.add(0, 1)
    sim.add(0, 0)
    assert [e.kind for e in sim.history] == ["add", "fire", "add"]
    assert sim.size() == 1  # the cancelled delay-1 entry is still in taskQueue
    sim.advance_to(2)
    assert fires(sim) == [(0, 0, 0)]  # once, inline
    assert sim.cancel(0) is False
    assert sim.size() == 0


def test_readd_with_nonpositive_delay_under_the_live_size_rule():
    sim = Simulation(profile="strict-gt", mock_size=MOCK_SIZE_LIVE)
    sim.add(0, 1)
    sim.add(0, 0)
    assert sim.size() == 0  # the only queued entry is cancelled
    sim.add(1, 5)
    assert sim.size() == 1


def test_size_counts_superseded_and_cancelled_entries_until_they_are_dequeued():
    sim = Simulation(profile="strict-gt")
    sim.add(1, 10)
    sim.add(1, 20)  # supersedes: the old entry stays queued but will not run
    sim.add(2, 30)
    assert sim.cancel(2) is True
    assert sim.cancel(2) is False
    assert sim.size() == 3
    sim.advance_to(25)
    assert fires(sim) == [(1, 25, 20)]
    assert sim.size() == 1  # the cancelled entry of task 2 (exp 30) is still counted
    sim.advance_to(31)
    assert fires(sim) == [(1, 25, 20)] and sim.size() == 0


def test_the_live_size_rule_counts_only_current_entries():
    sim = Simulation(profile="strict-gt", mock_size=MOCK_SIZE_LIVE)
    sim.add(1, 10)
    sim.add(1, 20)
    sim.add(2, 30)
    sim.cancel(2)
    assert sim.size() == 1  # the queue holds 3 entries; only task 1's exp-20 entry is current
    check_mock_timer(sim.timer)
    sim.advance_to(25)
    assert sim.size() == 0


def test_an_unknown_size_rule_is_refused():
    with pytest.raises(ValueError, match="size rule 'fifo'"):
        Simulation(profile="strict-gt", mock_size="fifo")


def test_equal_expirations_run_in_the_jdk_heap_order_not_fifo():
    # Five entries with expiration 7.  siftUp stops at once for an equal key, so the heap array
    # is the arrival order:                       [5, 3, 9, 1, 4]
    # poll -> 5; the last (4) goes to the root and siftDown stops at once (4's key <= child's):
    #                                             [4, 3, 9, 1]
    # poll -> 4; last (1) to the root:            [1, 3, 9]
    # poll -> 1; last (9) to the root:            [9, 3]
    # poll -> 9; then 3.
    clock = ManualClock(0)
    out: list[int] = []
    timer = MockTimer(clock)
    for i in [5, 3, 9, 1, 4]:
        timer.add(TimerTask(7, i, action=lambda i=i: out.append(i)))
    check_mock_timer(timer)
    assert [e.timer_task.task_id for e in timer.entries()] == [5, 3, 9, 1, 4]
    assert timer.advance_clock(8) is True  # Kafka's MockTimer.advanceClock sleeps the clock
    assert out == [5, 4, 1, 9, 3] and clock.now_ms() == 8
    assert timer.advance_clock(0) is False


def test_mixed_expirations_hand_checked():
    # add A exp 5, B exp 3, C exp 5, D exp 3 (array of (task, exp), slot 0 the head):
    #   offer A:  [A5]
    #   offer B:  slot 1, parent A5: 3 < 5 moves A down          -> [B3, A5]
    #   offer C:  slot 2, parent B3: 5 >= 3 stops                 -> [B3, A5, C5]
    #   offer D:  slot 3, parent A5 (slot 1): 3 < 5, A down;
    #             parent B3 (slot 0): 3 >= 3 stops                -> [B3, D3, C5, A5]
    #   poll B:   last A5 to the root; children D3, C5: D3 (left unless right strictly smaller);
    #             5 > 3: D up                                     -> [D3, A5, C5]
    #   poll D:   last C5 to the root; child A5: 5 <= 5 stops     -> [C5, A5]
    #   poll C, poll A.
    # Fire order B, D, C, A (first-in-first-out would be B, D, A, C).
    sim = Simulation(profile="strict-gt")
    for task, delay in [("A", 5), ("B", 3), ("C", 5), ("D", 3)]:
        sim.add(ord(task), delay)
    assert [(chr(e.timer_task.task_id), e.expiration_ms) for e in sim.timer.entries()] == \
        [("B", 3), ("D", 3), ("C", 5), ("A", 5)]
    sim.advance_to(6)
    assert [chr(t) for t, _, _ in fires(sim)] == ["B", "D", "C", "A"]


def test_expiration_order_across_different_delays():
    sim = Simulation(profile="strict-gt")
    for task, delay in [(1, 30), (2, 10), (3, 20), (4, 10)]:
        sim.add(task, delay)
    sim.advance_to(100)
    assert [t for t, _, _ in fires(sim)] == [2, 4, 3, 1]


# -- the oracle ------------------------------------------------------------------------------------
class JdkHeap:
    """``java.util.PriorityQueue`` with ``Comparator.comparingLong(expiration)``, from the JDK's
    documentation of its array heap: ``queue[n]``'s children are ``queue[2n+1]`` and
    ``queue[2n+2]``; ``offer`` sifts the new element up from the end, promoting it "until it is
    greater than or equal to its parent"; ``poll`` removes ``queue[0]``, takes the last element
    and sifts it down from the root, demoting it "until it is less than or equal to its children",
    always comparing with the smaller child (the left one unless the right is strictly smaller)."""

    def __init__(self) -> None:
        self.q: list[tuple[int, int]] = []  # (expiration, entry token)

    def offer(self, item: tuple[int, int]) -> None:
        self.q.append(item)
        i = len(self.q) - 1
        while i:
            up = (i - 1) // 2
            if self.q[up][0] <= item[0]:
                break
            self.q[i] = self.q[up]
            i = up
        self.q[i] = item

    def poll(self) -> tuple[int, int]:
        head, last = self.q[0], self.q.pop()
        size = len(self.q)
        if size:
            i = 0
            while 2 * i + 1 < size:
                c = 2 * i + 1
                if c + 1 < size and self.q[c + 1][0] < self.q[c][0]:
                    c += 1
                if last[0] <= self.q[c][0]:
                    break
                self.q[i] = self.q[c]
                i = c
            self.q[i] = last
        return head


class OracleMockTimer:
    """Kafka's MockTimer as a Kafka caller drives it through wheelspec's operations: a re-add
    cancels the task and adds a new one; delay <= 0 runs inside add; an advance polls while
    ``now > exp`` and runs the entries still current."""

    def __init__(self, size_rule: str) -> None:
        self.heap = JdkHeap()
        self.now = 0
        self.size_rule = size_rule
        self.current: dict[int, int | None] = {}  # task -> its current entry token
        self.task_of: dict[int, int] = {}         # token -> task
        self.queued: set[int] = set()
        self.tokens = 0
        self.log: list[tuple] = []

    def add(self, task: int, delay: int) -> None:
        self.current[task] = None  # old.cancel()
        exp = self.now + delay
        if delay <= 0:
            self.log.append(("fire", self.now, task, exp))
        else:
            self.tokens += 1
            self.current[task], self.task_of[self.tokens] = self.tokens, task
            self.heap.offer((exp, self.tokens))
            self.queued.add(self.tokens)
        self.log.append(("add", self.now, task, exp))

    def cancel(self, task: int) -> None:
        token = self.current.get(task)
        self.log.append(("cancel", self.now, task, token is not None and token in self.queued))
        self.current[task] = None

    def advance_to(self, t: int) -> None:
        self.now = t
        while self.heap.q and t > self.heap.q[0][0]:
            exp, token = self.heap.poll()
            self.queued.discard(token)
            task = self.task_of[token]
            if self.current[task] == token:
                self.log.append(("fire", t, task, exp))
        self.log.append(("advance", t))

    def size(self) -> None:
        if self.size_rule == MOCK_SIZE_QUEUE:
            n = len(self.heap.q)
        else:
            n = sum(1 for _, token in self.heap.q if self.current[self.task_of[token]] == token)
        self.log.append(("size", self.now, n))


def _as_tuple(e: ev.Event) -> tuple:
    if isinstance(e, ev.Fire):
        return ("fire", e.now, e.task, e.exp)
    if isinstance(e, ev.Add):
        return ("add", e.now, e.task, e.exp)
    if isinstance(e, ev.Cancel):
        return ("cancel", e.now, e.task, e.pending)
    if isinstance(e, ev.Advance):
        return ("advance", e.now)
    assert isinstance(e, ev.Observe) and e.what == "size"
    return ("size", e.now, e.value)


# Few tasks, delays from a narrow band and small steps: most queued entries share an expiration
# with several others, and re-adds, cancels and delay <= 0 re-adds are frequent.
PROGRAMS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 7), st.integers(-1, 4)),
    st.tuples(st.just("add"), st.integers(0, 7), st.integers(2, 3)),
    st.tuples(st.just("cancel"), st.integers(0, 7)),
    st.tuples(st.just("advance"), st.integers(0, 3)),
    st.tuples(st.just("size")),
), max_size=80)


@pytest.mark.slow
@settings(max_examples=examples(300, 1500), deadline=None)
@given(program=PROGRAMS, size_rule=st.sampled_from([MOCK_SIZE_QUEUE, MOCK_SIZE_LIVE]))
def test_reference_matches_an_independent_jdk_heap_mock_timer(program, size_rule):
    sim = Simulation(profile="strict-gt", mock_size=size_rule)
    oracle = OracleMockTimer(size_rule)
    for step in program:
        if step[0] == "add":
            sim.add(step[1], step[2])
            oracle.add(step[1], step[2])
        elif step[0] == "cancel":
            if step[1] not in sim.tasks:
                continue
            sim.cancel(step[1])
            oracle.cancel(step[1])
        elif step[0] == "advance":
            sim.advance_to(sim.now + step[1])
            oracle.advance_to(oracle.now + step[1])
        else:
            sim.size()
            oracle.size()
        check_mock_timer(sim.timer)
        assert [e.expiration_ms for e in sim.timer.entries()] == [exp for exp, _ in oracle.heap.q]
    assert [_as_tuple(e) for e in sim.history] == oracle.log


def test_the_oracle_heap_is_not_fifo_on_ties():
    """The oracle must be able to tell the JDK order from FIFO (else the comparison proves nothing)."""
    oracle = OracleMockTimer(MOCK_SIZE_QUEUE)
    for task in range(5):
        oracle.add(task, 2)
    oracle.advance_to(3)
    assert [x[2] for x in oracle.log if x[0] == "fire"] == [0, 4, 3, 2, 1]


# -- the step model ----------------------------------------------------------------------------------
STEP_PROGRAMS = st.lists(st.one_of(
    st.builds(ops.AddTask, st.integers(0, 5), st.integers(-1, 4)),
    st.builds(ops.CancelTask, st.integers(0, 5)),
    st.builds(ops.AdvanceTo, st.integers(0, 12)),
    st.builds(ops.Size),
    st.builds(ops.Watch, st.integers(0, 7), st.integers(-1, 4), st.lists(st.sampled_from(["a", "b", 7]), min_size=1,
                                                                         max_size=2).map(tuple), st.booleans()),
    st.builds(ops.SetCompletable, st.integers(0, 7), st.booleans()),
    st.builds(ops.CheckAndComplete, st.sampled_from(["a", "b", 7])),
    st.builds(ops.CancelForKey, st.sampled_from(["a", "b", 7])),
    st.builds(ops.ForceComplete, st.integers(0, 7)),
    st.builds(ops.NumDelayed),
), max_size=50)


@settings(max_examples=examples(150, 600), deadline=None)
@given(program=STEP_PROGRAMS, size_rule=st.sampled_from([MOCK_SIZE_QUEUE, MOCK_SIZE_LIVE]),
       purge=st.sampled_from([0, 1, 1000]))
def test_step_model_strict_gt_matches_the_reference(program, size_rule, purge):
    """The step model's MockTimer run alone gives the reference's events (JDK tie order, re-add
    rule, size rule), results and exceptions."""
    ref = Simulation(purge_interval=purge, profile="strict-gt", mock_size=size_rule)
    model = StepSimulation(purge_interval=purge, profile="strict-gt", mock_size=size_rule)
    ctx = Ctx(0, "main")
    for op in program:
        if isinstance(op, ops.AdvanceTo):
            op = ops.AdvanceTo(ref.now + op.time)
        outcomes = []
        for run in (lambda o=op: ref.apply(o), lambda o=op: drain(model.apply(ctx, o), ctx)):
            try:
                outcomes.append(("ok", run()))
            except Exception as e:  # noqa: BLE001 - the exception type is part of the contract
                outcomes.append(("raised", type(e)))
        assert outcomes[0] == outcomes[1], f"{op}: reference {outcomes[0]} != step model {outcomes[1]}"
        assert ctx.held == [], f"{op}: the step model leaked locks {ctx.held}"
    assert model.events == list(ref.history.events)
    assert model.timer.counter == ref.timer.size() and model.ptimer.counter == ref.purgatory.num_delayed()
