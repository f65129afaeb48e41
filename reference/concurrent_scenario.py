"""A concurrent test program for the step model: operations to run first (alone), then one list of
operations per simulated thread (records of :mod:`wheelspec.spec.ops`), and the model's
configuration.  :mod:`.interleave` runs it under a schedule; :mod:`.mutants` names one per race.
"""

from __future__ import annotations

import dataclasses

from wheelspec.spec import ops, show


@dataclasses.dataclass(frozen=True)
class ConcurrentScenario:
    """A concurrent test program.  ``declare``: operations created before the threads start
    (``(op_id, delay)``) so that any thread may name them; ``tasks``: timer task ids likewise."""

    name: str
    threads: tuple[tuple[ops.Op, ...], ...]
    setup: tuple[ops.Op, ...] = ()
    declare: tuple[tuple[int, int], ...] = ()
    tasks: tuple[int, ...] = ()
    tick_ms: int = 1
    wheel_size: int = 4
    purge_interval: int = 0
    shards: int = 512

    def describe(self) -> str:
        lines = [f"scenario {self.name} (tick {self.tick_ms}, wheel {self.wheel_size}, purge interval "
                 f"{self.purge_interval}, {self.shards} shards)"]
        if self.setup:
            lines.append("  setup: " + ", ".join(show.op_call(o) for o in self.setup))
        for i, th in enumerate(self.threads):
            lines.append(f"  T{i}: " + ", ".join(show.op_call(o) for o in th))
        return "\n".join(lines)
