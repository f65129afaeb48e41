"""The engines' public APIs validate atomically and strictly (docs/design/ENGINE.md, "API validation").

* Atomic: a batch with a bad element anywhere raises and leaves every array of the structure (and
  of its timer) exactly as it was, capacity included.
* Ids: negative and out-of-range ids are refused by every id-taking method, reads included
  (``live[-1]`` is another id's bit); a bool is not an id, anywhere (``True == 1``).
* Flags are real bools (Python's or numpy's); a string or a number is refused.
* The locked facades raise the same errors and release their lock.
* Spark's log4j2 file is made in a private directory and never follows a planted symlink.
"""

from __future__ import annotations

import copy
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wheelspec import reference
from wheelspec.optimized import ArrayPurgatory, ArrayTimer, Simulation
from wheelspec.optimized import purgatory_kernels as PK
from wheelspec.optimized.threadsafe import LockedSimulation, LockedTimer
from wheelspec.reference.scheduler import Ctx, drain
from wheelspec.reference.steps import StepSimulation
from wheelspec.spec.errors import RangeError
from wheelspec.spec.limits import MAX_DELAY_MS, MAX_ID, check_flag


# -- helpers ------------------------------------------------------------------------------------------
def _state(obj: Any) -> dict[str, Any]:
    """Every array (copied) and every plain attribute of an engine object and of its timer."""
    out: dict[str, Any] = {}
    for name, v in vars(obj).items():
        if isinstance(v, np.ndarray):
            out[name] = v.copy()
        elif isinstance(v, ArrayTimer):
            out.update({f"timer.{k}": x for k, x in _state(v).items()})
        elif isinstance(v, (int, dict, list, tuple, str)):
            out[name] = copy.deepcopy(v)
    return out


def _assert_same(before: dict[str, Any], after: dict[str, Any], what: str) -> None:
    assert before.keys() == after.keys(), what
    for name, b in before.items():
        a = after[name]
        if isinstance(b, np.ndarray):
            assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {name} changed shape {b.shape} -> {a.shape}"
            assert np.array_equal(a, b), f"{what}: {name} changed"
        else:
            assert a == b, f"{what}: {name} changed: {b!r} -> {a!r}"


def _purgatory() -> tuple[ArrayPurgatory, int, int]:
    """A purgatory with some history: ops 0-2 watched (0 completed at once), time moved on."""
    p = ArrayPurgatory(1, 8, 0, 10, capacity=8)
    a, b = p.key_id("a"), p.key_id("b")
    p.watch_many([0, 1, 2], [5, 50, 60], [[a], [a, b], [b]], [True, False, False], [False, False, True])
    p.advance_to(3)
    return p, a, b


# -- ArrayPurgatory: atomic batches -----------------------------------------------------------------------
WATCH_MANY_REFUSED = {
    # completable is written before completes_on_retry is checked, unless all checks come first
    "completes_on_retry too short": (lambda a, b: ([3, 4], [10, 10], [[a], [b]], [True, False], [False]), ValueError),
    # op 100 is beyond the capacity: the tables grow unless the bad key id is found first
    "bad key id, op beyond capacity": (lambda a, b: ([3, 100], [10, 10], [[a], [99]]), RangeError),
    "same new op twice beyond capacity": (lambda a, b: ([20, 20], [10, 10], [[a], [b]]), ValueError),
    "string completable": (lambda a, b: ([3], [10], [[a]], ["no"]), TypeError),
    "int completable": (lambda a, b: ([3, 4], [10, 10], [[a], [b]], [1, 0]), TypeError),
    "string completes_on_retry": (lambda a, b: ([3], [10], [[a]], None, ["yes"]), TypeError),
    "bool among the ops": (lambda a, b: ([3, True], [10, 10], [[a], [b]]), TypeError),
    "bool among the key ids": (lambda a, b: ([3, 4], [10, 10], [[a], [False]]), TypeError),
    "delay out of range": (lambda a, b: ([3, 4], [10, MAX_DELAY_MS + 1], [[a], [b]]), RangeError),
    "op watched already": (lambda a, b: ([3, 1], [10, 10], [[a], [b]]), ValueError),
    "negative op": (lambda a, b: ([3, -1], [10, 10], [[a], [b]]), RangeError),
}


@pytest.mark.parametrize("case", WATCH_MANY_REFUSED)
def test_watch_many_refuses_a_bad_batch_without_changing_anything(case: str) -> None:
    make, error = WATCH_MANY_REFUSED[case]
    p, a, b = _purgatory()
    before = _state(p)
    with pytest.raises(error):
        p.watch_many(*make(a, b))
    _assert_same(before, _state(p), case)
    # and the purgatory still works: a good batch over the same ids goes through
    res, _ = p.watch_many([3, 40], [10, 10], [[a], [b]], np.array([True, False]))
    assert res.tolist() == [True, False] and p.capacity > 40


SET_COMPLETABLE_REFUSED = {
    "strings": (([1, 2], ["no", "yes"]), TypeError),
    "one string": (([1, 2], "no"), TypeError),
    "an int": (([1, 2], 1), TypeError),
    "too few values": (([1, 2], [True]), ValueError),
    "an unknown op": (([1, 7], True), KeyError),
    "a bool op": (([1, True], True), TypeError),
}


@pytest.mark.parametrize("case", SET_COMPLETABLE_REFUSED)
def test_set_completable_many_is_strict_and_atomic(case: str) -> None:
    args, error = SET_COMPLETABLE_REFUSED[case]
    p, _, _ = _purgatory()
    before = _state(p)
    with pytest.raises(error):
        p.set_completable_many(*args)
    _assert_same(before, _state(p), case)


def test_set_completable_many_takes_python_and_numpy_bools() -> None:
    p, a, b = _purgatory()
    p.set_completable_many([1], np.True_)
    p.set_completable_many([1], [np.False_])
    assert p.check_many([a])[0].tolist() == [0]
    p.set_completable_many([1], [True])
    assert p.check_many([b])[0].tolist() == [1]


@pytest.mark.parametrize("call", [
    lambda p: p.force_complete_many([1, True]), lambda p: p.force_complete_many([1, -1]),
    lambda p: p.check_many([0, True]), lambda p: p.check_many([-1]),
    lambda p: p.cancel_for_key(True), lambda p: p.cancel_for_key(-1),
])
def test_other_purgatory_batches_refuse_bools_and_bad_ids_atomically(call) -> None:
    p, _, _ = _purgatory()
    before = _state(p)
    with pytest.raises((TypeError, RangeError, KeyError)):
        call(p)
    _assert_same(before, _state(p), "refused call")


# -- ArrayPurgatory: per-id reads -------------------------------------------------------------------------
def test_is_completed_refuses_negative_out_of_range_and_bool_ids() -> None:
    p, _, _ = _purgatory()
    p.opt[-1, PK.O_DONE] = 1  # the last row: what is_completed(-1) would read
    assert p.is_completed(0) is True and p.is_completed(1) is False
    with pytest.raises(RangeError, match=r"op id=-1 is outside the allowed range \[0, 7\]"):
        p.is_completed(-1)
    with pytest.raises(RangeError, match="op id=8"):
        p.is_completed(8)
    with pytest.raises(TypeError, match="op id must be an integer, got bool"):
        p.is_completed(True)


def test_key_of_and_key_id_refuse_what_is_not_a_key() -> None:
    p = ArrayPurgatory(1, 8, capacity=4)
    assert p.key_id(0) == 0 and p.key_id(1) == 1 and p.key_id("a") == 2
    assert p.key_id(1) == 1 and p.key_of(2) == "a"
    with pytest.raises(RangeError, match="key id=-1"):
        p.key_of(-1)
    with pytest.raises(RangeError, match="key id=3"):
        p.key_of(3)
    with pytest.raises(TypeError, match="watch key"):
        p.key_id(True)  # True == 1: the dict alone would answer key 1's id
    with pytest.raises(TypeError, match="watch key"):
        p.key_id(1.0)
    assert p.num_keys == 3


# -- ArrayTimer -------------------------------------------------------------------------------------------
def _timer() -> ArrayTimer:
    t = ArrayTimer(1, 8, capacity=128)
    t.add_many([0, 1, 5, 127], [10, 20, 300, 5000])
    return t


def test_is_scheduled_refuses_negative_out_of_range_and_bool_ids() -> None:
    t = _timer()
    assert t.is_scheduled(127) is True and t.is_scheduled(126) is False
    with pytest.raises(RangeError, match=r"task id=-1 is outside the allowed range \[0, 127\]"):
        t.is_scheduled(-1)  # live[-1], bit 63: task 127's bit
    with pytest.raises(RangeError, match="task id=128"):
        t.is_scheduled(128)
    with pytest.raises(TypeError, match="task id must be an integer, got bool"):
        t.is_scheduled(True)
    assert t.is_scheduled(np.int64(1)) is True


TIMER_REFUSED = {
    "add_many with a bool id": (lambda t: t.add_many([2, True], [5, 5]), TypeError),
    "add_many with a numpy bool id": (lambda t: t.add_many((2, np.True_), [5, 5]), TypeError),
    "add_many with a bad last delay": (lambda t: t.add_many([2, 3], [5, MAX_DELAY_MS + 1]), RangeError),
    "add_many with an id beyond capacity": (lambda t: t.add_many([2, 128], [5, 5]), RangeError),
    "cancel_many with a bool id": (lambda t: t.cancel_many([0, False]), TypeError),
    "cancel_many with a negative id": (lambda t: t.cancel_many([0, -1]), RangeError),
    "cancel with a bool": (lambda t: t.cancel(True), TypeError),
    "advance_to back in time": (lambda t: (t.advance_to(4), t.advance_to(3)), ValueError),
    "reserve with a bad pending": (lambda t: t.reserve(4096, -1), RangeError),
}


@pytest.mark.parametrize("case", TIMER_REFUSED)
def test_timer_refuses_without_changing_anything(case: str) -> None:
    call, error = TIMER_REFUSED[case]
    t = _timer()
    if case.startswith("advance_to"):
        t.advance_to(4)
    before = _state(t)
    with pytest.raises(error):
        call(t)
    _assert_same(before, _state(t), case)


@pytest.mark.parametrize("make", [lambda: ArrayTimer(debug="no"), lambda: ArrayPurgatory(debug=1)])
def test_debug_flag_must_be_a_bool(make) -> None:
    with pytest.raises(TypeError, match="debug must be a bool"):
        make()


# -- the per-operation APIs: reference, optimized, step model ---------------------------------------------
class _Steps:
    """The step model driven sequentially, with the per-operation API's shape."""

    def __init__(self) -> None:
        self.model = StepSimulation(2, 4, 0, 1000, executor="inline")
        self.ctx = Ctx(0, "main")

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.model, name)
        return lambda *args, **kwargs: drain(method(self.ctx, *args, **kwargs), self.ctx)

    @property
    def history(self) -> Any:
        return self.model.events


SIMS = {
    "reference": lambda: reference.Simulation(tick_ms=2, wheel_size=4),
    "optimized": lambda: Simulation(tick_ms=2, wheel_size=4),
    "steps": _Steps,
    "locked": lambda: LockedSimulation(tick_ms=2, wheel_size=4),
}

SIM_REFUSED = {
    "cancel(True)": (lambda s: s.cancel(True), TypeError),
    "cancel(-1)": (lambda s: s.cancel(-1), RangeError),
    "cancel(MAX_ID + 1)": (lambda s: s.cancel(MAX_ID + 1), RangeError),
    "cancel('1')": (lambda s: s.cancel("1"), TypeError),
    "force_complete(True)": (lambda s: s.force_complete(True), TypeError),
    "force_complete(-1)": (lambda s: s.force_complete(-1), RangeError),
    "set_completable(True)": (lambda s: s.set_completable(True), TypeError),
    "set_completable(1, 'no')": (lambda s: s.set_completable(1, "no"), TypeError),
    "set_completable(1, 0)": (lambda s: s.set_completable(1, 0), TypeError),
    "watch(completable='yes')": (lambda s: s.watch(2, 5, ["a"], "yes"), TypeError),
    "watch(completes_on_retry=1)": (lambda s: s.watch(2, 5, ["a"], False, 1), TypeError),
}


@pytest.mark.parametrize("case", SIM_REFUSED)
@pytest.mark.parametrize("impl", SIMS)
def test_per_operation_apis_refuse_bool_ids_bad_ids_and_non_bool_flags(impl: str, case: str) -> None:
    call, error = SIM_REFUSED[case]
    sim = SIMS[impl]()
    sim.add(1, 10)
    sim.watch(1, 10, ["a"])
    events = len(sim.history)
    with pytest.raises(error):
        call(sim)
    assert len(sim.history) == events, "a refused call recorded an event"
    # nothing changed: task 1 still pending, op 1 not completed, op 2 still free to watch
    assert sim.cancel(1) is True
    assert sim.force_complete(1) is True
    assert sim.watch(2, 5, ["a"]) is False
    if impl == "locked":
        assert not sim.lock.locked()


@pytest.mark.parametrize("impl", SIMS)
def test_numpy_bools_are_flags(impl: str) -> None:
    sim = SIMS[impl]()
    assert sim.watch(1, 10, ["a"], np.True_) is True
    sim.watch(2, 10, ["a"], np.False_, np.False_)
    sim.set_completable(2, np.True_)
    assert sim.check_and_complete("a") == 1
    # the recorded events hold Python bools, as with True and False
    flags = [e.value for e in sim.history if type(e).__name__ == "SetCompletable"]
    assert flags == [True] and type(flags[0]) is bool


def test_check_flag() -> None:
    assert check_flag("f", True) is True and check_flag("f", np.False_) is False
    for bad in ("no", 1, 0, None, 1.0, np.int64(1), [True]):
        with pytest.raises(TypeError, match="f must be a bool"):
            check_flag("f", bad)


# -- the locked timer facade --------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error", [
    (lambda t: t.is_scheduled(-1), RangeError), (lambda t: t.is_scheduled(True), TypeError),
    (lambda t: t.cancel(True), TypeError), (lambda t: t.add_many([2, True], [5, 5]), TypeError),
    (lambda t: t.cancel_many([0, -1]), RangeError), (lambda t: t.add(1, "5"), TypeError),
])
def test_locked_timer_validates_like_the_timer(call, error) -> None:
    t = LockedTimer(1, 8, capacity=128)
    t.add_many([0, 1], [10, 20])
    before = _state(t._inner)
    with pytest.raises(error):
        call(t)
    _assert_same(before, _state(t._inner), "locked facade")
    assert not t._lock.locked()
    assert t.is_scheduled(1) is True


# -- Spark's log4j2 file ----------------------------------------------------------------------------------
@pytest.fixture()
def spark_session_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The module with the temp directory moved to ``tmp_path`` and no log4j2 directory yet."""
    from wheelspec.conformance.traces import spark_session

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(spark_session, "_log4j_dir", None, raising=False)
    monkeypatch.setattr(spark_session, "_log4j_pid", 0, raising=False)
    yield spark_session
    if getattr(spark_session, "_log4j_dir", None) is not None:
        spark_session._remove_log4j_dir()


def test_log4j_file_never_follows_a_planted_symlink(spark_session_module: Any, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    planted = tmp_path / "wheelspec-spark-log4j2.properties"  # a fixed name someone could predict
    planted.symlink_to(victim)
    path = Path(spark_session_module._log4j_file())
    assert victim.read_text() == "precious\n", "the log4j2 file was written through a planted symlink"
    assert path != planted and not path.is_symlink()
    assert path.read_text() == spark_session_module._LOG4J
    assert path.parent.parent == tmp_path and path.parent.name.startswith("wheelspec-spark-")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700  # a private directory
    assert spark_session_module._log4j_file() == str(path)  # one file per process


def test_log4j_directory_is_removed_and_made_again(spark_session_module: Any) -> None:
    first = Path(spark_session_module._log4j_file())
    spark_session_module._remove_log4j_dir()
    assert not first.parent.exists()
    second = Path(spark_session_module._log4j_file())
    assert second.is_file() and second.parent != first.parent
    # a forked child inherits the directory's path but must not remove its parent's directory
    spark_session_module._log4j_pid = os.getpid() + 1
    spark_session_module._remove_log4j_dir()
    assert second.parent.exists()
    second.unlink()
    second.parent.rmdir()
