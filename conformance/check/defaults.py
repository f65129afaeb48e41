"""What ``wheelspec check`` runs when given no ``--impl`` and no ``--schedules``: the main job
(README), shared by the command line and the scripts that measure it.  Light at import."""

from __future__ import annotations

#: the implementations the main job checks
DEFAULT_IMPLS = ("reference", "reference-subprocess", "optimized")
#: random schedules per campaign kind
DEFAULT_SCHEDULES = 400
