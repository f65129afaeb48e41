"""Real-time mode: timers without a virtual clock (Netty's ``HashedWheelTimer``, a live asyncio
loop) judged against the wall clock, behind ``wheelspec realtime`` and the matrix's real-time rows.

:mod:`.realtime` holds the schedules (data, seeded), the real-time adapters, the judge of one
run (never early, exactly once, lateness within the allowance) and the report.
"""

# ``wheelspec.conformance.realtime`` was one module before this package: its names stay importable.
from wheelspec.conformance.realtime.realtime import *  # noqa: F403 - the former module's public names
