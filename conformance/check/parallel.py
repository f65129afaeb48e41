"""A campaign's seeds judged on several processes: ``wheelspec check --workers N``.

Each seed's verdict is a function of the implementation, the kind and the seed alone (the
schedule is generated from the seed, the adapter is reset before each run, the oracle is the
deterministic reference), so seeds can be judged anywhere and in any order.  What must not change
is what the user reads: the report lists the outcomes in seed order, the failure budget
(``--max-failures``) stops a kind at the same seed as a run on one process, and an adapter
error ends the campaign where it would have ended it.  So the workers judge *blocks* of
consecutive seeds, and the caller consumes their outcomes strictly in seed order
(:meth:`SeedPool.outcomes`), deciding as it goes; blocks judged beyond the point where it stops
are thrown away.  What depends on earlier seeds' outcomes (the extra counterexamples of failures
grouped by property, :class:`~.campaign.PropertyShrinks`) is made by the caller, in seed order, as
a run on one process makes it.

A worker is a process of its own (``forkserver``: it inherits neither the caller's threads nor its
adapter's pipes) that starts its own adapter for the implementation on its first block and keeps
it for the next ones, so a subprocess adapter starts once per worker, not once per block.  It
ignores SIGINT: Ctrl-C reaches the caller, which stops the pool; SIGTERM ends it.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: Seeds per block.  A block is the unit handed to a worker: small enough that two workers finish
#: a kind of 400 seeds together and that a spent budget wastes little, large enough that the
#: round trip per block (a pickle each way) is lost in the judging.
BLOCK = 16
#: What the fork server imports before it forks the workers.
PRELOAD = ("wheelspec.conformance.check.parallel", "wheelspec.conformance.check.campaign",
           "wheelspec.conformance.check.judge", "wheelspec.conformance.adapters", "wheelspec.reference")
#: Blocks in flight per worker: one running, one waiting, so that no worker idles while the
#: caller takes a result.
AHEAD = 2


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to start its adapter and judge like the caller."""

    impl: str          # the --impl text
    timeout: float
    start_timeout: float
    caps: Any          # the caller's Capabilities (with the user's --ranges applied)
    impl_name: str     # the counterexamples' name
    trace: bool        # hand back each schedule's run (for --write traces=DIR)
    accept: tuple[str, ...] = ()  # --accept: properties a seed's counterexample is not shrunk toward


@dataclass
class BlockResult:
    """A block's outcomes in seed order; the runs when asked for; the error that ended the block
    early (an adapter or usage error, as its class name and message) or None."""

    outcomes: list[Any]
    runs: list[tuple[int, Any, Any]]
    error: tuple[str, str] | None = None


_SETUP: WorkerSetup | None = None
_ADAPTER: Any = None


def _worker_init(setup: WorkerSetup) -> None:
    from wheelspec.conformance.check import collector

    global _SETUP
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    collector.tune()
    _SETUP = setup


def _adapter() -> Any:
    """The worker's adapter, started on first use and closed when the worker exits."""
    global _ADAPTER
    if _ADAPTER is None:
        from multiprocessing import util

        from wheelspec.conformance.adapters import resolve

        assert _SETUP is not None
        adapter = resolve(_SETUP.impl, timeout=_SETUP.timeout, start_timeout=_SETUP.start_timeout)()
        adapter.hello()  # the handshake; the caller's capabilities (already checked) are used
        _ADAPTER = adapter
        util.Finalize(adapter, adapter.close, exitpriority=10)
    return _ADAPTER


def judge_block(kind: str, seeds: list[int]) -> BlockResult:
    """In a worker: run, judge and shrink the schedules of ``seeds``, as one process would."""
    from wheelspec.conformance.adapters.subprocess_adapter import AdapterError
    from wheelspec.conformance.check import compiled_oracle
    from wheelspec.conformance.check.campaign import run_seed_range
    from wheelspec.spec.errors import UserError

    global _ADAPTER
    assert _SETUP is not None
    setup = _SETUP
    res = BlockResult([], [])

    def on_run(seed: int, cfg: Any, result: Any) -> None:
        if setup.trace:
            res.runs.append((seed, cfg, result.history))

    try:
        adapter = _adapter()
        compiled_oracle.expect(kind, len(seeds))
        run_seed_range(adapter, setup.caps, kind, seeds, impl_name=setup.impl_name,
                       on_seed=res.outcomes.append, on_run=on_run, accept=setup.accept)
    except (AdapterError, UserError) as e:
        res.error = (type(e).__name__, str(e))
        if _ADAPTER is not None:  # a broken adapter is not reused: the next block starts another
            try:
                _ADAPTER.close()
            except Exception:  # noqa: BLE001 - closing a broken adapter must not hide the error
                pass
            _ADAPTER = None
    return res


def start_server(oracle_kernels: bool) -> None:
    """Start this process's fork server, if it has none yet, without waiting for it: it imports
    the runner (and, with ``oracle_kernels``, for a campaign the compiled oracle pays for:
    ``compiled_oracle.worth_loading``, loads the compiled oracle's kernels) on the other core
    while this process goes on (``check`` calls it before the handshake and the corpus), and
    every worker of a :class:`SeedPool` is forked from it with all that done.  The first call's
    choice holds for the process: the fork server is started once."""
    from multiprocessing import forkserver

    mp.get_context("forkserver").set_forkserver_preload(
        list(PRELOAD) + (["wheelspec.conformance.check.oracle_preload"] if oracle_kernels else []))
    forkserver.ensure_running()


class SeedPool:
    """``workers`` processes judging blocks of seeds of one implementation.

    ``outcomes(work)`` yields ``(kind, outcome, run)`` for every seed of ``work`` (a list of
    ``(kind, seeds)``), in that order; ``run`` is ``(config, history)`` when ``setup.trace``.
    :meth:`skip` makes it leave out the rest of a kind.  An error a worker met ends the iteration
    with :class:`~wheelspec.spec.errors.AdapterError` (or :class:`UserError`) after the outcomes
    judged before it."""

    def __init__(self, setup: WorkerSetup, workers: int, *, oracle_kernels: bool = False) -> None:
        if workers < 2:
            raise ValueError("a SeedPool has at least two workers")
        self.workers = workers
        start_server(oracle_kernels)
        self._pool = mp.get_context("forkserver").Pool(workers, initializer=_worker_init, initargs=(setup,))
        self._skipped: set[str] = set()

    def skip(self, kind: str) -> None:
        self._skipped.add(kind)

    def outcomes(self, work: list[tuple[str, list[int]]]) -> Iterator[tuple[str, Any, tuple[Any, Any] | None]]:
        from wheelspec.conformance.adapters.subprocess_adapter import AdapterError
        from wheelspec.spec.errors import UserError

        blocks = [(kind, seeds[i:i + BLOCK]) for kind, seeds in work for i in range(0, len(seeds), BLOCK)]
        inflight: list[tuple[str, Any]] = []
        nxt = 0
        while nxt < len(blocks) or inflight:
            while nxt < len(blocks) and len(inflight) < self.workers * AHEAD:
                kind, seeds = blocks[nxt]
                nxt += 1
                if kind not in self._skipped:
                    inflight.append((kind, self._pool.apply_async(judge_block, (kind, seeds))))
            if not inflight:
                continue
            kind, pending = inflight.pop(0)
            if kind in self._skipped:  # judged past the end of its kind: not waited for
                continue
            res = _wait(pending)
            runs = {seed: (cfg, history) for seed, cfg, history in res.runs}
            for o in res.outcomes:
                yield kind, o, runs.get(o.seed)
                if kind in self._skipped:
                    break
            if res.error is not None and kind not in self._skipped:
                name, message = res.error
                raise (UserError if name == "UserError" else AdapterError)(message)

    def close(self) -> None:
        """Stop the workers (those still judging are killed: their blocks are not needed)."""
        self._pool.terminate()
        self._pool.join()

    def __enter__(self) -> SeedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _wait(pending: Any) -> BlockResult:
    # A timed wait, so that Ctrl-C (or SIGTERM through conformance.interrupt) interrupts it at once.
    while True:
        try:
            return pending.get(timeout=0.2)
        except mp.TimeoutError:
            continue
