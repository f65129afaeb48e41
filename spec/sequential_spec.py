"""The sequential specification of the timer's and the purgatory's calls, one task or one
operation at a time: the step function the linearizability checker
(``wheelspec.conformance.concurrency.linearizability``) searches with.

A task's state is ``(pending, exp)``; an operation's is ``(watched, completable, completed, live
keys)``.  :func:`step` takes a state, a call's input and its output (None: the call never
returned, so any output it could have had is allowed) and returns every state the call can leave
(none: this output is impossible here).  The inputs are the operations of :mod:`.ops` a partition
holds, and three pseudo-calls a concurrent history needs: :class:`FireCall` (the timer handed a
task to its executor: Kafka's ``TimerTaskList.flush`` into ``SystemTimer``'s executor),
:class:`ExpireCall` (``DelayedOperation.run``: the timeout completed the operation) and
:class:`Projected` (one ``checkAndComplete(key)`` / ``cancelForKey(key)`` as one operation on the
key sees it).

The rules, Kafka's (SEMANTICS.md Purgatory, Cancel): an add makes its task pending with its
expiration; a cancel returns whether the task was pending and ends it; a fire needs a pending task
of that expiration.  ``tryCompleteElseWatch`` completes at once iff the operation is completable,
else watches it on all its keys (``DelayedOperationPurgatory.tryCompleteElseWatch``); a check of a
watched key completes it iff completable and not yet completed (``Watchers.tryCompleteWatched``);
``forceComplete`` returns whether it was not yet completed (the ``completed`` flag's
compareAndSet); a timeout needs an uncompleted, watched operation; ``cancelForKey`` returns an
uncompleted operation iff it is watched on the key.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import ops


@dataclasses.dataclass(frozen=True, slots=True)
class FireCall:
    """Pseudo-call: the timer handed ``task`` (expiration ``exp``) to its executor."""

    task: int
    exp: int


@dataclasses.dataclass(frozen=True, slots=True)
class ExpireCall:
    """Pseudo-call: the timer completed ``op`` (its timeout)."""

    op: int


@dataclasses.dataclass(frozen=True, slots=True)
class Projected:
    """A per-key purgatory call seen by one operation: ``what`` is ``check`` or ``cancel_for_key``."""

    what: str
    key: Any
    op: int


#: a task before its first call: not pending, no expiration
TASK_INITIAL = (False, None)
#: an operation before its first call: not watched, not completable, not completed, on no key
OP_INITIAL: tuple[bool, bool, bool, frozenset[ops.Key]] = (False, False, False, frozenset())


def step(state: Any, i: Any, out: Any) -> list[Any]:
    """Every state call ``i`` with output ``out`` can leave a task or operation in ``state``
    (None: the initial state of ``i``'s kind); empty if ``out`` is impossible (module doc)."""
    if isinstance(i, (ops.AddTask, ops.CancelTask, FireCall)):
        pending, exp = state if state is not None else TASK_INITIAL
        if isinstance(i, ops.AddTask):
            # output None: the call had not returned, its expiration is unknown ("*" matches any)
            return [(True, out if out is not None else "*")]
        if isinstance(i, ops.CancelTask):
            return [(False, None)] if out is None or out == pending else []
        return [(False, None)] if pending and exp in (i.exp, "*") else []
    watched, completable, completed, live = state if state is not None else OP_INITIAL
    if isinstance(i, ops.Watch):
        if watched:
            return []
        c = completable or i.completable
        if completed:
            return [(True, c, True, frozenset())] if out in (False, None) else []
        if c:
            return [(True, c, True, frozenset())] if out in (True, None) else []
        return [(True, c, False, frozenset(i.keys))] if out in (False, None) else []
    if isinstance(i, ops.SetCompletable):
        return [(watched, i.value, completed, live)]
    if isinstance(i, ops.ForceComplete):
        return [(watched, completable, True, live)] if out in (not completed, None) else []
    if isinstance(i, ExpireCall):
        return [(watched, completable, True, live)] if watched and not completed else []
    if isinstance(i, Projected):
        if i.what == "check":
            should = watched and not completed and completable and i.key in live
            if out is None:  # never returned: it may or may not have completed the operation
                return [(watched, completable, completed or should, live)]
            if out != should:
                return []
            return [(watched, completable, completed or should, live)]
        # cancel_for_key: an uncompleted operation is returned iff it is watched on the key
        if completed:
            return [(watched, completable, completed, live - {i.key})]
        listed = watched and i.key in live
        if out not in (listed, None):
            return []
        return [(watched, completable, completed, live - {i.key})]
    raise TypeError(f"the wheelspec model has no step for {i!r}")
