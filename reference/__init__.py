"""The executable reference model: Kafka's timer package and purgatory, readable first.

One module per Kafka class:

========================  =====================================================================
module                    models
========================  =====================================================================
:mod:`.clock`             ``org.apache.kafka.common.utils.Time`` (system) and ``MockTime`` (manual)
:mod:`.task`              ``TimerTask`` and ``TimerTaskEntry``
:mod:`.bucket`            ``TimerTaskList`` (a bucket: doubly linked list with a sentinel)
:mod:`.delay_queue`       ``java.util.concurrent.DelayQueue`` over a JDK ``PriorityQueue``
:mod:`.wheel`             ``TimingWheel`` (placement, lazy clock, overflow wheels)
:mod:`.system_timer`      ``SystemTimer`` (delay queue, lock, executor) and the reaper thread
:mod:`.mock_timer`        Kafka's test ``MockTimer`` (the strict-gt profile)
:mod:`.operation`         ``DelayedOperation`` and the test ``MockDelayedOperation``
:mod:`.purgatory`         ``DelayedOperationPurgatory``, ``WatcherList``, ``Watchers``
:mod:`.simulation`        the engine under the per-operation driver (:mod:`wheelspec.spec.simulation`)
:mod:`.invariants`        the structure invariants of SEMANTICS.md, checkable between operations
``steps/``                the same classes cut at Kafka's lock and CAS granularity (the step model)
:mod:`.scheduler`         a deterministic scheduler of simulated threads, with Kafka's locks
:mod:`.interleave`        concurrent scenarios run on the step model, every interleaving judged
:mod:`.mutants`           Kafka's known races, reintroduced one at a time into the step model
========================  =====================================================================
"""

from .bucket import TimerTaskList
from .clock import Clock, ManualClock, SystemClock
from .delay_queue import DelayQueue
from .mock_timer import MockTimer
from .operation import DelayedOperation, MockDelayedOperation
from .purgatory import DelayedOperationPurgatory
from .simulation import Simulation
from .system_timer import SystemTimer
from .task import TimerTask, TimerTaskEntry
from .wheel import TimingWheel

__all__ = [
    "Clock", "ManualClock", "SystemClock", "TimerTask", "TimerTaskEntry", "TimerTaskList",
    "DelayQueue", "TimingWheel", "SystemTimer", "MockTimer", "DelayedOperation",
    "MockDelayedOperation", "DelayedOperationPurgatory", "Simulation",
]
