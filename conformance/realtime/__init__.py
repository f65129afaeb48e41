"""Real-time mode: timers without a virtual clock (Netty's ``HashedWheelTimer``, a live asyncio
loop) judged against the wall clock, behind ``wheelspec realtime`` and the matrix's real-time rows.

=================== =============================================================================
module              what it owns
=================== =============================================================================
:mod:`.schedule`    real-time schedules: the format, seeded generation, loading a saved one
:mod:`.adapters`    the real-time adapter interface, Netty over ``rt_run``, a live asyncio loop
:mod:`.judge`       one run's outcome against its schedule: early, late, exactly once, cancel...
:mod:`.run`         running seeded schedules, saving failures, the report
=================== =============================================================================

The names below are the package's API (``wheelspec.conformance.realtime`` was one module before
it became this package, and these are its names).
"""

from wheelspec.conformance.realtime.adapters import (
                                                     AsyncioRealtimeAdapter,
                                                     RealtimeAdapter,
                                                     RtOutcome,
                                                     SubprocessRealtimeAdapter,
                                                     netty_command,
                                                     resolve,
)
from wheelspec.conformance.realtime.judge import PROPS, RtVerdict, judge_outcome, percentiles
from wheelspec.conformance.realtime.run import RtReport, report_dict, run_schedules
from wheelspec.conformance.realtime.schedule import (
                                                     DEFAULT_SLACK_MS,
                                                     FORMAT_VERSION,
                                                     HUGE_DELAYS,
                                                     LONG_MAX,
                                                     RtSchedule,
                                                     generate,
                                                     load_schedule,
)

__all__ = ["DEFAULT_SLACK_MS", "FORMAT_VERSION", "HUGE_DELAYS", "LONG_MAX", "PROPS", "AsyncioRealtimeAdapter",
           "RealtimeAdapter", "RtOutcome", "RtReport", "RtSchedule", "RtVerdict", "SubprocessRealtimeAdapter",
           "generate", "judge_outcome", "load_schedule", "netty_command", "percentiles", "report_dict", "resolve",
           "run_schedules"]
