"""Drive an adapter through a sequence of operations and record what happened.

A :class:`Run` is the raw material every judgement works on: one :class:`Step` per operation
(the operation and the adapter's response) and the :class:`~wheelspec.spec.history.History` they
add up to (per request: the events it caused, then its result event).  ``event_step`` maps each
event back to the operation that produced it, so a violation found in the history can be
reported, and shrunk, in terms of operations.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Protocol

from wheelspec.conformance.adapters.answers import check_answer, result_event
from wheelspec.conformance.adapters.base import refusal_of
from wheelspec.conformance.adapters.protocol import Config, Response, clean_text
from wheelspec.conformance.adapters.subprocess_adapter import AdapterError, LivenessError
from wheelspec.spec import ops
from wheelspec.spec.errors import Bug, ProtocolError
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


class RunnerBug(Bug, RuntimeError):
    """An exception inside wheelspec's runner while it drove an adapter: a bug to report (the
    original exception, with its traceback, is the ``__cause__``), never a verdict."""


_HERE = os.path.dirname(os.path.abspath(__file__))
_ADAPTERS = os.path.join(os.path.dirname(_HERE), "adapters")
#: source files whose exceptions are the runner's own: this package (run, judge, shrink, corpus,
#: campaign) and the protocol layer every answer passes through
RUNNER_MODULES = (_HERE + os.sep, os.path.join(_ADAPTERS, "protocol.py"), os.path.join(_ADAPTERS, "answers.py"),
                  os.path.join(_ADAPTERS, "subprocess_adapter.py"))


def _innermost_file(tb: TracebackType | None) -> str:
    path = ""
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return os.path.abspath(path) if path and not path.startswith("<") else path


def raised_by_runner(adapter: object, exc: BaseException) -> bool:
    """Is ``exc``, escaping ``adapter.request``, a bug of the runner rather than of the
    implementation?  (The rule is the module docstring's.)"""
    if getattr(adapter, "out_of_process", False):
        return True
    where = _innermost_file(exc.__traceback__)
    return any(where == m or (m.endswith(os.sep) and where.startswith(m)) for m in RUNNER_MODULES)


def run_ops(adapter: Driven, config: Config, operations: Sequence[ops.Op], *,
            meanwhile: Callable[[], None] | None = None) -> Run:
    """Reset ``adapter`` to ``config`` and execute ``operations`` in order.

    A refused operation (error response) adds no events.  An in-process adapter whose own code
    raises instead of answering is recorded as the refusal the exception maps to
    (:func:`~wheelspec.conformance.adapters.base.refusal_of`, as a served one answers: a
    ``ValueError`` is ``invalid``, anything unexpected ``internal``): the runner judges it, it does
    not crash on it.  An exception of the runner's own code is a :class:`RunnerBug`.  A
    :class:`LivenessError` propagates with ``step`` (None: the reset) and ``run`` (the requests
    answered before it) set; any other :class:`AdapterError` propagates as it is.

    An adapter that takes requests ahead of their answers (a subprocess adapter whose hello
    declared ``pipeline`` N > 1, protocol 2: ``docs/guides/PROTOCOL.md`` section 11) is sent up to N of
    them before the first answer is read, and ``meanwhile()`` (work of the runner's own that does
    not depend on the answers, e.g. the oracle's run) runs while the adapter computes them; without
    a pipeline ``meanwhile`` is not called.  Either way the run is the same."""
    if getattr(adapter, "pipeline", 1) > 1:
        return _run_pipelined(adapter, config, operations, meanwhile)
    # An in-process adapter's answers are held to the wire's rules (answers.check_answer), as a
    # subprocess adapter's are when they are decoded; wheelspec's own engines are exempt.
    checked = not (getattr(adapter, "out_of_process", False) or getattr(adapter, "trusted_answers", False))
    # (a test double may offer no hello: its answers are then held to the rules without its
    # capabilities, which allows a try_complete event)
    hello = getattr(adapter, "hello", None) if checked else None
    caps = hello().capabilities if hello is not None else None
    history = History()
    event_step: list[int] = []
    steps: list[Step] = []
    try:
        adapter.reset(config)
    except LivenessError as hung:
        hung.step, hung.run = None, Run(config, steps, history, event_step)
        raise

    for i, op in enumerate(operations):
        try:
            resp = adapter.request(op)
        except LivenessError as hung:
            hung.step, hung.run = i, Run(config, steps, history, event_step)
            raise
        except AdapterError:
            raise
        except Exception as exc:  # an in-process implementation's own bug is a finding (module doc)
            if raised_by_runner(adapter, exc):
                raise RunnerBug(f"wheelspec's runner failed at op {i} {op.to_dict()} on {type(adapter).__name__} "
                                f"({type(exc).__name__}: {exc}); please report this with the traceback") from exc
            resp = refusal_of(exc)
        else:
            if checked:
                resp = _checked(adapter, caps, i, op, resp)
        _record(steps, history, event_step, i, op, resp)
    return Run(config, steps, history, event_step)


def _checked(adapter: Any, caps: Any, i: int, op: ops.Op, resp: Any) -> Response:
    """``resp`` if it is a well-formed answer to ``op``; else an :class:`AdapterError` naming the
    adapter, the op number and the field (exit 2, one line)."""
    try:
        return check_answer(resp, op, caps)
    except ProtocolError as e:
        try:
            name = adapter.hello().name
        except Exception:  # noqa: BLE001 - the message must not depend on a working hello
            name = type(adapter).__name__
        raise AdapterError(f"adapter {clean_text(repr(name), 80)}: op {i} ({op.kind}): {e}") from None


def _record(steps: list[Step], history: History, event_step: list[int], i: int, op: ops.Op,
            resp: Response) -> None:
    steps.append(Step(op, resp))
    if resp.error is None:
        events = history.events
        for e in resp.events:
            events.append(e)
            event_step.append(i)
        events.append(result_event(op, resp.now, resp.result))
        event_step.append(i)


def _run_pipelined(adapter: Any, config: Config, operations: Sequence[ops.Op],
                   meanwhile: Callable[[], None] | None) -> Run:
    """:func:`run_ops` on an adapter with a pipeline (``submit`` / ``receive_reset`` / ``receive``
    of :class:`~wheelspec.conformance.adapters.subprocess_adapter.SubprocessAdapter`)."""
    history = History()
    event_step: list[int] = []
    steps: list[Step] = []
    i: int | None = None
    done = False
    try:
        adapter.submit(config, operations)
        if meanwhile is not None:
            meanwhile()
        adapter.receive_reset()
        for i, op in enumerate(operations):
            _record(steps, history, event_step, i, op, adapter.receive())
        done = True
    except LivenessError as hung:
        hung.step, hung.run = i, Run(config, steps, history, event_step)
        raise
    except AdapterError:
        raise
    except Exception as exc:
        raise RunnerBug(f"wheelspec's runner failed at op {i} on {type(adapter).__name__} "
                        f"({type(exc).__name__}: {exc}); please report this with the traceback") from exc
    finally:
        if not done:
            adapter.abandon()  # answers left unread must not reach the next run
    return Run(config, steps, history, event_step)
