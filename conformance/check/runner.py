"""Drive an adapter through a sequence of operations and record what happened.

A :class:`Run` is the raw material every judgement works on: one :class:`Step` per operation
(the operation and the adapter's response) and the :class:`~wheelspec.spec.history.History` they
add up to (per request: the events it caused, then its result event).  ``event_step`` maps each
event back to the operation that produced it, so a violation found in the history can be
reported, and shrunk, in terms of operations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from wheelspec.conformance.adapters.protocol import Config, Response, result_event
from wheelspec.conformance.adapters.subprocess_adapter import AdapterError
from wheelspec.spec import ops
from wheelspec.spec.history import History


@dataclasses.dataclass
class Step:
    op: ops.Op
    response: Response


@dataclasses.dataclass
class Run:
    config: Config
    steps: list[Step]
    history: History
    #: event index -> index of the step (operation) whose request produced it
    event_step: list[int]

    @property
    def ops_count(self) -> int:
        return len(self.steps)


class Driven(Protocol):
    """What :func:`run_ops` needs of an adapter: the ``reset`` and ``request`` of
    :class:`~wheelspec.conformance.adapters.base.Adapter` (a test double may offer no more)."""

    def reset(self, config: Config) -> None: ...

    def request(self, op: ops.Op) -> Response: ...


def run_ops(adapter: Driven, config: Config, operations: Sequence[ops.Op]) -> Run:
    """Reset ``adapter`` to ``config`` and execute ``operations`` in order.

    A refused operation (error response) adds no events.  An in-process adapter that raises
    instead of answering is recorded as an ``internal`` error: the runner judges it, it does not
    crash on it.  Protocol breakage of a subprocess (:class:`AdapterError`) propagates."""
    adapter.reset(config)
    history = History()
    event_step: list[int] = []
    steps: list[Step] = []
    for i, op in enumerate(operations):
        try:
            resp = adapter.request(op)
        except AdapterError:
            raise
        except Exception as exc:  # noqa: BLE001 - an in-process implementation's bug is a finding
            resp = Response(error=("internal", f"raised {type(exc).__name__}: {exc}"))
        steps.append(Step(op, resp))
        if resp.error is None:
            for e in resp.events:
                history(e)
                event_step.append(i)
            history(result_event(op, resp.now, resp.result))
            event_step.append(i)
    return Run(config, steps, history, event_step)
