"""Named firing rules: when may a task fire, and by when must it have fired.

A *profile* is the contract an implementation claims.  Fires are judged against the clock
reading ``now`` at which the timer handed the task over, and completeness is judged at every
``Advance(now)`` event (the end of an ``advanceClock`` that saw the clock at ``now``).

========== =================================== ======================================= ============
name       may fire when (earliest)            must have fired by the end of advance t  delay <= 0
========== =================================== ======================================= ============
kafka      now >= floor(exp / tick) * tick      floor(exp / tick) * tick <= t           as any task
strict     now >= exp                           exp <= t                                as any task
strict-gt  now > exp                            exp < t                                 inside add
========== =================================== ======================================= ============

``kafka`` is Kafka's SystemTimer: a bucket is due at its window start, so with tick > 1 a task
runs up to tick - 1 ms before its expiration (SEMANTICS.md, "Firing rule").  ``strict`` is what
``sched``, Twisted's ``Clock``, Netty and Jane Street's ``timing_wheel`` promise.  ``strict-gt`` is
Kafka's test ``MockTimer``: a task fires only once ``now > exp``, but ``add`` runs a task with delay
<= 0 synchronously.  An optional ``lateness_ms`` bound (real-time mode) limits ``now - exp``.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str
    #: the tick the window rule uses (only the kafka profile looks at it)
    tick: int = 1
    #: if set, a fire with ``now - exp > lateness_ms`` is a violation (real-time mode)
    lateness_ms: int | None = None

    def earliest(self, exp: int) -> int:
        """The smallest clock reading at which a task with expiration ``exp`` may fire."""
        if self.name == "kafka":
            return (exp // self.tick) * self.tick
        if self.name == "strict":
            return exp
        return exp + 1  # strict-gt

    def may_fire(self, exp: int, now: int, delay: int | None = None, in_add: bool = False) -> bool:
        """Is a fire at ``now`` allowed? ``in_add``: the fire happened inside ``add``."""
        if in_add and delay is not None and delay <= 0 and self.name == "strict-gt":
            return True
        return now >= self.earliest(exp)

    def must_have_fired(self, exp: int, now: int) -> bool:
        """After an advance that saw the clock at ``now``, must a pending task have fired?"""
        return self.earliest(exp) <= now

    def fires_nonpositive_in_add(self) -> bool:
        return self.name == "strict-gt"

    def describe(self) -> str:
        rule = {"kafka": f"now >= floor(exp/{self.tick})*{self.tick}", "strict": "now >= exp",
                "strict-gt": "now > exp (delay <= 0 runs inside add)"}[self.name]
        late = f", late by at most {self.lateness_ms} ms" if self.lateness_ms is not None else ""
        return f"{self.name}: fire when {rule}{late}"


PROFILE_NAMES = ("kafka", "strict", "strict-gt")


def profile(name: str, tick: int = 1, lateness_ms: int | None = None) -> Profile:
    """Look a profile up by name; raises ``ValueError`` naming the known profiles."""
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r} (known: {', '.join(PROFILE_NAMES)})")
    if tick < 1:
        raise ValueError(f"profile tick must be >= 1, got {tick}")
    return Profile(name, tick, lateness_ms)
