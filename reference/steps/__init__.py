"""The reference, decomposed into atomic steps at Kafka's lock and CAS granularity.

The readable reference (:mod:`wheelspec.reference.system_timer`, :mod:`wheelspec.reference.purgatory`,
...) says *what* Kafka's classes compute; this package says *how they interleave*.  It models the
same classes -- ``TimerTaskEntry``, ``TimerTaskList``, ``TimingWheel``, ``SystemTimer``,
``DelayedOperation``, ``DelayedOperationPurgatory`` -- with every public method written as a
generator that yields before each atomic step (see :mod:`wheelspec.reference.scheduler`).  One
module per Kafka class, as in the readable reference:

====================  ======================================  ========================================
module                models                                  step-model names
====================  ======================================  ========================================
:mod:`.task`          ``TimerTask``, ``TimerTaskEntry``       :class:`Task`, :class:`Entry`,
                                                              :func:`new_entry`, :func:`entry_remove`,
                                                              :func:`task_cancel`
:mod:`.bucket`        ``TimerTaskList``                       :class:`Bucket`
:mod:`.wheel`         ``TimingWheel``                         :class:`Wheel`
:mod:`.system_timer`  ``SystemTimer`` (over the reference's   :class:`Timer`
                      ``DelayQueue``) and its executor
:mod:`.mock_timer`    the test ``MockTimer`` (strict-gt)      :class:`MockTimer`
:mod:`.operation`     ``DelayedOperation``, the test          :class:`Op`
                      ``MockDelayedOperation``
:mod:`.purgatory`     ``DelayedOperationPurgatory``,          :class:`Purgatory`, :class:`Watchers`
                      ``WatcherList``, ``Watchers``
:mod:`.simulation`    the per-operation facade (as            :class:`StepSimulation`; :data:`MAX_ID`
                      :mod:`wheelspec.reference.simulation`)  (from :mod:`wheelspec.spec.limits`)
====================  ======================================  ========================================

The locks are Kafka's:

==================================  ===========================================================
lock (name in timelines)            Kafka
==================================  ===========================================================
``timer.rw`` / ``ptimer.rw``        ``SystemTimer``'s ``ReentrantReadWriteLock`` (add: read,
                                    advanceClock's flush loop: write)
``timer.taskQueue`` / ...           ``synchronized (taskQueue)`` in the test ``MockTimer``
``B<level>.<slot>``                 ``synchronized (TimerTaskList)``: a bucket's monitor
``e(t<id>)``                        ``synchronized (TimerTaskEntry)``
``t<id>`` / ``op<id>``              ``synchronized (TimerTask)`` (``cancel``, ``setTimerTaskEntry``)
``op<id>.lock``                     ``DelayedOperation.lock`` (``safeTryComplete[OrElse]``)
``shard<i>``                        ``WatcherList.watchersLock``
==================================  ===========================================================

The ``completed`` flag is a compare-and-set (one step); counters (``taskCounter``,
``estimatedTotalOperations``) are atomics; a watch list (``ConcurrentLinkedQueue``) is lock-free:
appends and removals are single steps and a walk sees one element per step, including elements
appended after the walk began (a weakly consistent iterator).  The delay queue is the reference's
:class:`~wheelspec.reference.delay_queue.DelayQueue` (the JDK's heap, so fire order is Kafka's);
each ``offer`` and ``poll`` is one step (``DelayQueue`` has its own internal lock).

Run alone (:func:`wheelspec.reference.scheduler.drain`, ``executor="inline"``) the model produces
exactly the events of :class:`wheelspec.reference.simulation.Simulation` (tested).  Run
concurrently, due operations go to an executor thread, as in Kafka: running them inline on the
reaper would deadlock (the reaper holds a bucket monitor while an operation's ``cancel`` wants it;
Kafka avoided that with its executor).

``mutants`` reintroduces known races, one flag each (see :mod:`wheelspec.reference.mutants`).
"""

from wheelspec.spec.limits import MAX_ID

from .bucket import Bucket
from .mock_timer import MockTimer
from .operation import Op
from .purgatory import Purgatory, Watchers
from .simulation import StepSimulation
from .system_timer import Timer
from .task import Entry, Task, entry_remove, new_entry, task_cancel
from .wheel import Wheel

__all__ = [
    "MAX_ID", "Task", "Entry", "new_entry", "entry_remove", "task_cancel", "Bucket", "Wheel", "Timer", "MockTimer",
    "Op", "Watchers", "Purgatory", "StepSimulation",
]
