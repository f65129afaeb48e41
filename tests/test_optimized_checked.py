"""The checked kernels (debug mode) and the layout's import-time asserts.

* The checked build of the kernels (``timer_kernels.checked_kernels()``, what ``debug=True`` runs)
  leaves bit-identical arrays and gives the same fires and completions as the fast build, on the
  batch tests' random programs.
* Planted corruptions of the state make a checked kernel raise ``InvariantError`` naming the kernel
  and the values it saw, while the fast build runs on without checking.
* ``optimized/layout.py`` refuses to import when a relation between its constants, or between its
  spans and ``wheelspec.spec.limits``, is broken.
* Both builds load from numba's on-disk cache in a new process.

Compile time dominates: every test shares the compiled kernels of the process (and numba's cache).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from test_optimized_batch import NT, large_batches, programs, purgatory_programs

from wheelspec.optimized import ArrayPurgatory, ArrayTimer, check_timer
from wheelspec.optimized import layout as L
from wheelspec.optimized import purgatory_kernels as PK
from wheelspec.optimized import timer_kernels as K
from wheelspec.spec import limits
from wheelspec.spec.errors import InvariantError

TIMER_ARRAYS = ("S", "lv", "bk", "heap", "tk", "live", "pid", "pexp", "cnext")
PURGATORY_ARRAYS = ("P", "opt", "kt", "we")


def same_timers(a: ArrayTimer, b: ArrayTimer) -> None:
    for name in TIMER_ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


# -- the checked build computes what the fast build computes --------------------------------------
def test_debug_mode_runs_the_checked_build_and_the_fast_mode_the_module() -> None:
    fast, checked = ArrayTimer(debug=False), ArrayTimer(debug=True)
    assert fast._K is K
    assert checked._K is K.checked_kernels() and checked._K.advance is not K.advance
    assert checked._K.advance.targetoptions.get("boundscheck") is True
    assert ArrayPurgatory(debug=True)._PK is PK.checked_kernels() and ArrayPurgatory(debug=False)._PK is PK


def run_timer(debug: bool, tick: int, wheel: int, start: int, stages: list) -> tuple[list, list[ArrayTimer]]:
    """A batch-test program, every other stage through the per-operation API (add_range,
    cancel_one), the rest in batches (add_batch for 65 adds or more, cancel_range)."""
    timer = ArrayTimer(tick, wheel, start, capacity=NT, debug=debug)
    out: list = []
    known: set[int] = set()
    for k, (ids, ds, cancels, step) in enumerate(stages):
        if k % 2:
            for t, d in zip(ids, ds):
                _, f, fe = timer.add(t, d)
                out.append(("add", f.tolist(), fe.tolist()))
        else:
            f, fe = timer.add_many(np.array(ids, np.int64), np.array(ds, np.int64))
            out.append(("add_many", f.tolist(), fe.tolist()))
        known.update(ids)
        todo = [t for t in cancels if t in known]
        if k % 2:
            out.append(("cancel", [timer.cancel(t) for t in todo]))
        else:
            out.append(("cancel_many", timer.cancel_many(np.array(todo, np.int64)).tolist()))
        f, fe = timer.advance_to(timer.now + step)
        out.append(("advance", f.tolist(), fe.tolist(), timer.size(), timer.levels()))
        out.append(("arrays", [getattr(timer, name).tobytes() for name in TIMER_ARRAYS]))
    return out, [timer]


@pytest.mark.slow
@pytest.mark.timeout(600)
@settings(max_examples=examples(100, 300))
@given(programs())
def test_checked_timer_kernels_equal_the_fast_ones(program: tuple) -> None:
    fast_out, (fast,) = run_timer(False, *program)
    checked_out, (checked,) = run_timer(True, *program)
    assert fast_out == checked_out
    same_timers(fast, checked)


@pytest.mark.timeout(600)
@settings(max_examples=examples(60, 200))
@given(large_batches())
def test_checked_large_batches_equal_the_fast_ones(program: tuple) -> None:
    """Large batches (the two-pass kernel and its fallback beyond 6 levels), each followed by an
    advance that flushes and cascades what they placed."""
    tick, wheel, start, advance, batches = program
    results = []
    for debug in (False, True):
        t = ArrayTimer(tick, wheel, start, capacity=400, debug=debug)
        t.add_many(np.arange(50), np.arange(1, 51) * tick)
        t.advance_to(start + advance)
        log = []
        for n, seed, far in batches:
            rng = np.random.default_rng(seed)
            ids = rng.integers(0, 400, n)
            delays = np.where(rng.integers(0, 4, n) == 0, rng.integers(-3, tick + 1, n), rng.integers(1, far + 1, n))
            f, fe = t.add_many(ids, delays)
            log.append((f.tolist(), fe.tolist(), t.levels()))
            f, fe = t.advance_to(min(t.now + int(rng.integers(0, 3 * tick * wheel**2)), limits.MAX_TIME_MS))
            log.append((f.tolist(), fe.tolist(), t.size()))
        results.append((t, log))
    (fast, fast_log), (checked, checked_log) = results
    assert fast_log == checked_log
    same_timers(fast, checked)


def run_purgatory(debug: bool, tick: int, wheel: int, purge: int, stages: list) -> tuple[list, ArrayPurgatory]:
    p = ArrayPurgatory(tick, wheel, 0, purge, capacity=4, debug=debug)
    kid = [p.key_id(k) for k in range(6)]
    out: list = []

    def comp(c: tuple[np.ndarray, np.ndarray]) -> list:
        return list(zip(c[0].tolist(), c[1].tolist()))

    for watches, completable, checks, forces, cancel_key, step in stages:
        if watches:
            res, c = p.watch_many([w[0] for w in watches], [w[1] for w in watches],
                                  [[kid[k] for k in w[2]] for w in watches], [w[3] for w in watches])
            out.append(("watch", res.tolist(), comp(c)))
        completable = [o for o in completable if o < p.capacity and p.opt[o, PK.O_USED]]
        if completable:
            p.set_completable_many(completable)
        counts, c = p.check_many([kid[k] for k in checks])
        out.append(("check", counts.tolist(), comp(c)))
        forces = [o for o in forces if o < p.capacity and p.opt[o, PK.O_USED]]
        won, c = p.force_complete_many(forces)
        out.append(("force", won.tolist(), comp(c)))
        if cancel_key is not None:
            out.append(("cancel_for_key", p.cancel_for_key(kid[cancel_key]).tolist()))
        c, report = p.advance_to(p.now + step)
        out.append(("advance", comp(c), repr(report), p.watched(), p.num_delayed(), p.estimated))
        out.append(("arrays", [getattr(p, n).tobytes() for n in PURGATORY_ARRAYS],
                    [getattr(p.timer, n).tobytes() for n in TIMER_ARRAYS]))
    return out, p


@pytest.mark.slow
@pytest.mark.timeout(600)
@settings(max_examples=examples(80, 250))
@given(purgatory_programs())
def test_checked_purgatory_kernels_equal_the_fast_ones(program: tuple) -> None:
    fast_out, fast = run_purgatory(False, *program)
    checked_out, checked = run_purgatory(True, *program)
    assert fast_out == checked_out
    for name in PURGATORY_ARRAYS:
        assert np.array_equal(getattr(fast, name), getattr(checked, name)), name
    same_timers(fast.timer, checked.timer)


# -- planted corruptions: the checked kernel raises with the state, the fast one does not check -----
def small_timer(debug: bool) -> ArrayTimer:
    """Tick 1, wheel 8 at 0: task 0 in level-0 bucket 5 (window 5), task 1 at 30 in a level-1
    bucket (tick 8, window 24), task 2 at 100 in a level-2 bucket (tick 64, window 64); one chunk
    each (0, 1, 2)."""
    t = ArrayTimer(1, 8, 0, capacity=16, debug=debug)
    t.add_many([0, 1, 2], [5, 30, 100])
    return t


def bucket_of(t: ArrayTimer, task: int) -> int:
    slot = int(t.tk[task])
    return next(b for b in range(t.bk.shape[0]) if t.bk[b, L.B_NSLOTS] > 0 and t.bk[b, L.B_HEAD] == slot // L.CHUNK)


def _window(t: ArrayTimer) -> None:
    t.bk[bucket_of(t, 0), L.B_EXP] = 6      # task 0 (exp 5) now sits outside its bucket's window


def _bit_without_entry(t: ArrayTimer) -> None:
    t.live[0] |= np.uint64(1 << 7)          # task 7 was never placed: no slot holds it


def _count(t: ArrayTimer) -> None:
    t.S[L.COUNT] = 0                        # three tasks pending, the counter says none


def _slot_expiration(t: ArrayTimer) -> None:
    t.pexp[int(t.tk[2])] = 10**6            # task 2's entry leaves its level-1 bucket's window


def _stale_slot(t: ArrayTimer) -> None:
    s = int(t.tk[0])                        # a second slot of task 0's bucket claims task 1 (an
    t.pid[s + 1], t.pexp[s + 1] = 1, 5      # older entry that was not tombstoned)
    t.bk[bucket_of(t, 0), L.B_NSLOTS] = 2


def _level_tick(t: ArrayTimer) -> None:
    t.advance_to(40)                        # tasks 0 and 1 fired; task 2 waits in level 2
    t.lv[1, L.LV_TICK] = 4                  # level 1's tick no longer level 0's times W: after the
                                            # clocks move to 64 its window ends at 96, below task 2


def _nslots(t: ArrayTimer) -> None:
    t.bk[bucket_of(t, 0), L.B_NSLOTS] = -3  # a negative slot count


def _free_chunk(t: ArrayTimer) -> None:
    t.S[L.FREE] = int(t.tk[1]) // L.CHUNK   # the free list's head is a chunk a bucket still uses


# name -> (corruption, the call that meets it, words the message must hold: kernel, rule, values).
# The fast build runs each too, unchecked, except where it would not stop (marked by a 4th item).
CORRUPTIONS = {
    "bucket window, met by an add": (_window, lambda t: t.add(3, 5),
                                     ["_place_range", "bucket-reuse rule", "old window=6", "new window=5", "slots=1"]),
    "bucket window, met by a flush": (_window, lambda t: t.advance_to(10),
                                      ["advance", "lies in its bucket's window", "task=0", "exp=5", "window start=6"]),
    "liveness bit without an entry, met by an add": (_bit_without_entry, lambda t: t.add(7, 3),
                                                     ["_place_range", "bitmap bit agrees", "task=7", "location=-1"]),
    "liveness bit without an entry, met by a large batch": (
        _bit_without_entry, lambda t: t.add_many(np.arange(3, 15).repeat(8), np.arange(96) + 1),
        ["_place_block", "bitmap bit agrees", "task=7", "location=-1"]),
    "liveness bit without an entry, met by a cancel": (_bit_without_entry, lambda t: t.cancel_many([3, 7]),
                                                       ["check_cancels", "task=7", "location=-1", "position=1"]),
    "negative counter, met by a cancel": (_count, lambda t: t.cancel(1),
                                          ["cancel_one", "never goes negative", "task=1", "count=-1"]),
    "negative counter, met by a batch cancel": (_count, lambda t: t.cancel_many([0, 1]),
                                                ["cancel_range", "never goes negative", "task=0", "count=-1"]),
    "negative counter, met by a flush": (_count, lambda t: t.advance_to(10),
                                         ["advance", "never goes negative", "count=-1"]),
    "slot expiration, met by a flush": (_slot_expiration, lambda t: t.advance_to(200),
                                        ["advance", "lies in its bucket's window", "task=2", "exp=1000000",
                                         "window start=64", "tick=64"]),
    "level tick, met by a cascade": (_level_tick, lambda t: t.advance_to(200),
                                     ["advance", "strictly down", "task=2", "exp=100", "level=2", "=96"],
                                     "the fast flush would re-queue the bucket it flushes, forever"),
    "older entry not tombstoned, met by a flush": (_stale_slot, lambda t: t.advance_to(10),
                                                   ["advance", "latest", "task=1", "slot=1", "location=64"]),
    "negative slot count, met by an add": (_nslots, lambda t: t.add(3, 5),
                                           ["_place_range", "slot count is not negative", "slots=-3"]),
    "free list head in use, met by an add": (_free_chunk, lambda t: t.add(3, 3),
                                             ["_place_range", "next slot is empty", "task=3"]),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_a_checked_kernel_raises_with_the_state_it_saw(name: str) -> None:
    corrupt, call, words, *unsafe = CORRUPTIONS[name]
    checked = small_timer(debug=True)
    corrupt(checked)
    with pytest.raises(InvariantError) as info:
        call(checked)
    message = str(info.value)
    assert "invariant broken in checked kernel" in message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert checked.S[L.ERROR] == L.ERR_CHECK
    # The fast build has no check: the same corruption, the same call, no error (the state is
    # garbage now, which is what the debug mode is for).
    if unsafe:
        return
    fast = small_timer(debug=False)
    corrupt(fast)
    call(fast)
    assert fast.S[L.ERROR] == 0


def busy_purgatory(debug: bool) -> ArrayPurgatory:
    p = ArrayPurgatory(1, 8, 0, 1000, capacity=8, debug=debug)
    a, b = p.key_id("a"), p.key_id("b")
    p.watch_many([0, 1, 2], [50, 60, 70], [[a, b], [a], [b]])
    return p


PURGATORY_CORRUPTIONS = {
    "negative list length": (lambda p: p.kt.__setitem__((0, PK.K_LEN), -2), lambda p: p.check_many([0]),
                             ["check_range", "list length is not negative", "key=0", "length=-2"]),
    "list longer than its chain": (lambda p: p.kt.__setitem__((0, PK.K_LEN), 3), lambda p: p.cancel_for_key(0),
                                   ["cancel_key", "in the table", "key=0", "entry=-1"]),
    "list shorter than its chain": (lambda p: p.kt.__setitem__((1, PK.K_LEN), 1), lambda p: p.check_many([1]),
                                    ["check_range", "ends where its length says", "key=1", "length=1"]),
    "timer counter": (lambda p: p.timer.S.__setitem__(L.COUNT, 0), lambda p: p.force_complete_many([1]),
                      ["force_range", "timer's counter never goes negative", "op=1", "timer count=-1"]),
    "watched counter": (lambda p: p.P.__setitem__(PK.P_WATCHED, 9), lambda p: p.check_many([0]),
                        ["check_range", "conserved", "watched=9"]),
}


@pytest.mark.parametrize("name", sorted(PURGATORY_CORRUPTIONS))
def test_a_checked_purgatory_kernel_raises_with_the_state_it_saw(name: str) -> None:
    corrupt, call, words = PURGATORY_CORRUPTIONS[name]
    checked = busy_purgatory(debug=True)
    corrupt(checked)
    with pytest.raises(InvariantError) as info:
        call(checked)
    message = str(info.value)
    for word in ["invariant broken in checked kernel"] + words:
        assert word in message, f"{word!r} not in {message!r}"
    fast = busy_purgatory(debug=False)
    corrupt(fast)
    call(fast)
    assert fast.P[PK.P_ERROR] == 0


def test_every_check_is_described() -> None:
    S = np.zeros(L.S_LEN, np.int64)
    for code, (kernel, rule, names) in K.CHECKS.items():
        S[L.DIAG] = code
        S[L.DIAG + 1: L.DIAG + 8] = np.arange(1, 8)
        message = K.describe_check(S)
        assert kernel in message and rule in message and all(f"{n}=" in message for n in names)


def test_the_invariant_checker_raises_invariant_error() -> None:
    t = small_timer(debug=False)
    t.S[L.COUNT] += 1
    with pytest.raises(InvariantError, match="invariant broken: size"):
        check_timer(t)
    assert issubclass(InvariantError, AssertionError)   # callers catching AssertionError still do


# -- layout.py's import-time asserts ---------------------------------------------------------------
LAYOUT = Path(L.__file__)


def exec_layout(replace: dict[str, str]) -> None:
    """Run layout.py's source with the lines ``NAME = ...`` of ``replace`` set to new values."""
    src = LAYOUT.read_text()
    for name, value in replace.items():
        src, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", src, count=1, flags=re.M)
        assert n == 1, name
    exec(compile(src, str(LAYOUT), "exec"), {"__name__": "layout_probe"})


def test_layout_source_runs_as_is() -> None:
    exec_layout({})


@pytest.mark.parametrize("name, value, words", [
    ("CHUNK", "48", "power of 2"),
    ("CHUNK", "8", "cache lines"),
    ("NEED", "8", "S slots must be distinct"),
    ("ERROR", "17", "below the diagnostic area"),
    ("S_LEN", "20", "must fit in S_LEN"),
    ("LV_END", "3", "lv columns"),
    ("B_NSLOTS", "4", "bk columns"),
    ("NEED_OUT", "1", "status codes"),
    ("ERR_CHECK", "2", "S[ERROR] codes"),
    ("MAX_CAPACITY", "2**32", "int32"),
])
def test_layout_refuses_a_broken_relation(name: str, value: str, words: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(words)):
        exec_layout({name: value})


@pytest.mark.parametrize("limit, value, words", [
    ("MAX_DELAY_MS", 2**44, "EXP_SPAN"),
    ("MAX_TIME_MS", 2**44, "EXP_SPAN"),
    ("MAX_WHEEL_SIZE", 2**30, "fit int64"),
])
def test_layout_refuses_limits_its_spans_do_not_cover(limit: str, value: int, words: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, limit, value)
    with pytest.raises(AssertionError, match=re.escape(words)):
        exec_layout({})


# -- numba's cache keeps working for both builds ---------------------------------------------------
PROBE = """
import json, sys
import numpy as np
from wheelspec.optimized import ArrayTimer, ArrayPurgatory
from wheelspec.optimized import purgatory_kernels as PK, timer_kernels as K
stats = {}
for debug in (False, True):
    t = ArrayTimer(1, 20, 0, capacity=1000, debug=debug)
    t.add(1, 5)
    t.add_many(np.arange(100), np.arange(100) + 1)
    t.cancel(3)
    t.advance_to(50)
    p = ArrayPurgatory(1, 8, 0, 10, capacity=8, debug=debug)
    p.watch_many([0, 1], [5, 6], [[p.key_id("a")], [p.key_id("a")]])
    p.check_many([0])
    kernels = (K.checked_kernels() if debug else K, PK.checked_kernels() if debug else PK)
    for name, ks in zip(("add_range", "add_batch", "advance", "cancel_one", "watch_range", "check_range"),
                        (kernels[0],) * 4 + (kernels[1],) * 2):
        d = getattr(ks, name)
        stats[f"{debug}.{name}"] = [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
print(json.dumps(stats))
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_both_builds_load_from_numba_cache_in_a_new_process() -> None:
    """A kernel factory built from closures would miss numba's cache in every new process (a
    closure holding another kernel's dispatcher pickles differently each time); the builds of
    ``kernelbuild`` must not.  The first process may compile (a cold cache); the second must load
    every kernel it calls."""
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=500, check=True)
        stats = json.loads(out.stdout.strip().splitlines()[-1])
    missed = {k: v for k, v in stats.items() if v[0] < 1 or v[1] != 0}
    assert not missed, f"[cache hits, misses] of kernels not loaded from the cache: {missed}"
