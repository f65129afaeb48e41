"""What the Python side and a native peer's driver exchange: a workload file in, one result line out.

The workload file carries the arrays of :mod:`wheelspec.benchmarks.workloads` exactly as they were
generated (the same seed, the same delays, cancel orders and advance times), so a native peer runs
the very input the engine and ``heapq`` ran: no generator is re-implemented in Java or Rust.

Layout, little-endian: the 8 ASCII bytes ``WSBENCH1``; an int32 count of arrays; then each array
as an int32 length followed by that many int32 values, in the order of :data:`ARRAYS` (a workload
without an array writes length 0).  int32 suffices: ids are below ``MAX_ID`` and delays and times
are at most 30 000 ms; :func:`write_workload` refuses anything else.

The driver prints one line ``NATIVE_RESULT {json}`` on stdout (:func:`parse_result`): ``status``
``ok`` with ``runs_s`` (seconds of each timed run), ``ops``, ``metric`` (what the seconds
measure), ``version``, ``warm_runs`` and ``latency`` (``p50_ns``, ``p99_ns``, ``p999_ns``,
``samples``, ``stride``, ``method``, ``clock_floor_ns``; null where per-operation timing means
nothing), or ``status`` ``n/a`` with ``why``.  A run that does not verify makes the driver exit
with :data:`EXIT_VERIFY` and print ``VERIFY <reason>`` on stderr.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from ..workloads import TimerWorkload

MAGIC = b"WSBENCH1"
#: The arrays of a timer workload, in file order.
ARRAYS = ("delays", "cancel_order", "advance_times", "window_ids", "window_delays",
          "warm_ids", "warm_delays", "warm_cancels")
RESULT_PREFIX = "NATIVE_RESULT "
#: Exit code of a driver whose run did not verify.
EXIT_VERIFY = 3

_INT32_MAX = np.iinfo(np.int32).max


def write_workload(wl: TimerWorkload, path: Path) -> None:
    """Write ``wl``'s arrays to ``path`` (ids are implicit: ``0 .. n-1``, then the window's and the
    warm-up's, which the workload makes dense; checked here)."""
    if not np.array_equal(wl.ids, np.arange(wl.n)):
        raise ValueError(f"{wl.name}: native peers expect dense ids 0..n-1")
    parts = [MAGIC, struct.pack("<i", len(ARRAYS))]
    for name in ARRAYS:
        a = getattr(wl, name)
        a = np.zeros(0, np.int64) if a is None else np.asarray(a)
        if a.size and (int(a.min()) < 0 or int(a.max()) > _INT32_MAX):
            raise ValueError(f"{wl.name}: {name} holds values outside int32")
        parts += [struct.pack("<i", a.size), a.astype("<i4").tobytes()]
    path.write_bytes(b"".join(parts))


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The driver's result object, or None if it printed none."""
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            out: dict[str, Any] = json.loads(line[len(RESULT_PREFIX):])
            return out
    return None
