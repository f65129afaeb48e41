"""One finding type for every judge: :class:`Finding` names a broken property and says what went
wrong, and where, in the terms of the judge that found it.

Every judge of the project reports findings of this one type:

================================== ======================= ==========================================
judge                              ``location``            where the finding points
================================== ======================= ==========================================
the history checker                :data:`EVENTS`          ``indices``: positions in the history of
(:func:`.checker.check_history`)                           the events involved
the conformance judge              :data:`STEP`            ``step``: the operation of the run (None:
(``conformance.check.judge``)                              no single operation)
the real-time judge, the           :data:`NOWHERE`         the message says it (a run's findings sit
interleaving and hammer judges                             in a verdict that names the run)
================================== ======================= ==========================================

``prop`` is a name of the property registry (:mod:`.properties`), which says which judge reports it.
The JSON form (:meth:`Finding.to_dict`) has exactly the keys that location carries, in the order
the reports and saved files have always used: ``{"prop", "step", "message"}`` for a run,
``{"prop", "message"}`` for a real-time run, ``{"prop", "indices", "message"}`` for a history.
:meth:`Finding.from_dict` reads them back.  How a finding reads for people: :mod:`.show`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

#: ``indices`` are positions in a history (the history checker)
EVENTS = "events"
#: ``step`` is the index of an operation in a run, or None (the conformance judge)
STEP = "step"
#: no location beyond the message (real time, interleavings, hammered facades)
NOWHERE = "nowhere"
LOCATIONS = (EVENTS, STEP, NOWHERE)

#: the JSON keys of each location, in order
_KEYS = {EVENTS: ("prop", "indices", "message"), STEP: ("prop", "step", "message"), NOWHERE: ("prop", "message")}


@dataclasses.dataclass(frozen=True)
class Finding:
    """One broken property.  Build it with the constructor of its location (:meth:`in_history`,
    :meth:`at_step`) or as ``Finding(prop, message)`` when the message is the whole location."""

    prop: str
    message: str
    _: dataclasses.KW_ONLY
    #: positions in the history of the events involved (location :data:`EVENTS`)
    indices: tuple[int, ...] = ()
    #: the operation index in a run, None for none in particular (location :data:`STEP`)
    step: int | None = None
    location: str = NOWHERE

    def __post_init__(self) -> None:
        if self.location not in LOCATIONS:
            raise ValueError(f"Finding.location must be one of {LOCATIONS}, got {self.location!r}")

    @classmethod
    def in_history(cls, prop: str, indices: Iterable[int], message: str) -> Finding:
        """A finding of the history checker: ``indices`` are the events involved."""
        return cls(prop, message, indices=tuple(indices), location=EVENTS)

    @classmethod
    def at_step(cls, prop: str, step: int | None, message: str) -> Finding:
        """A finding about a run of operations: ``step`` is the operation's index (or None)."""
        return cls(prop, message, step=step, location=STEP)

    def to_dict(self) -> dict[str, Any]:
        d = {"prop": self.prop, "indices": list(self.indices), "step": self.step, "message": self.message}
        return {k: d[k] for k in _KEYS[self.location]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        """The inverse of :meth:`to_dict`; the keys present give the location."""
        if not isinstance(d, dict) or not isinstance(d.get("prop"), str) or not isinstance(d.get("message"), str):
            raise ValueError(f"a finding is {{\"prop\": str, \"message\": str, ...}}, got {d!r}")
        if "step" in d:
            return cls.at_step(d["prop"], d["step"], d["message"])
        if "indices" in d:
            return cls.in_history(d["prop"], d["indices"], d["message"])
        return cls(d["prop"], d["message"])
