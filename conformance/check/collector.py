"""The cyclic garbage collector's thresholds while a wheelspec command runs.

A campaign allocates millions of small objects (operations, responses, events, the oracle's
runs), nearly all freed by reference counting the moment they are done with: the cyclic
collector finds almost nothing (the whole default ``wheelspec check`` leaves some 6 000
objects in cycles).  With Python's default thresholds (700, 10, 10) it still runs a young
collection every 700 allocations and, every few thousand schedules, a full one that walks every
live object, the oracle's cache of up to 100 000 operations' runs included: about a tenth of the
default check's CPU.  These thresholds make young collections rare and full ones rarer still;
cycles are still collected, later.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: (young, middle, old) as ``gc.set_threshold`` takes them
THRESHOLDS = (10_000, 20, 20)


def tune() -> None:
    """Set :data:`THRESHOLDS` for this process (a worker of ``--workers``: the process is ours)."""
    gc.set_threshold(*THRESHOLDS)


@contextlib.contextmanager
def tuned() -> Iterator[None]:
    """:data:`THRESHOLDS` while the block runs, the caller's thresholds after it (a command run
    in-process, as the tests and library callers run ``main``, leaves the process as it was)."""
    before = gc.get_threshold()
    tune()
    try:
        yield
    finally:
        gc.set_threshold(*before)
