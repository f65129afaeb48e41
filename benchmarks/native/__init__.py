"""Native peers in ``wheelspec bench``: timers of other languages measured beside the engine.

Netty's ``HashedWheelTimer``, the JDK's ``ScheduledThreadPoolExecutor`` and ``DelayQueue`` (Java,
``java/``) and tokio-util's ``DelayQueue`` on tokio's paused clock (Rust, ``rust/``) run the same
workloads as the Python implementations -- the very arrays :mod:`wheelspec.benchmarks.workloads`
generates, handed over in a file -- and their rows sit in the same table, with ratios against the
engine.

========================  =====================================================================
module                    what it is
========================  =====================================================================
:mod:`.protocol`          the workload file the drivers read and the result line they print
:mod:`.build`             builds the drivers on first use into a cache directory
:mod:`.drivers`           one bench driver per peer: runs a cell in a subprocess, reads its figures
========================  =====================================================================
"""
