"""What ``wheelspec check`` runs when given no ``--impl`` and no ``--schedules``: the main job
(README), shared by the command line and the scripts that measure it.  Light at import."""

from __future__ import annotations

#: the implementations the main job checks
DEFAULT_IMPLS = ("reference", "reference-subprocess", "optimized")
#: random schedules per campaign kind
DEFAULT_SCHEDULES = 400
#: ``--oracle``: which oracle a campaign schedule is judged against (``compiled_oracle.ORACLES``,
#: repeated here so that building the parser imports nothing heavy)
ORACLE_CHOICES = ("compiled", "reference")
ORACLE_HELP = ("compiled (default): the reference's run of each timer schedule and its coverage computed in one "
               "compiled call (once that pays for loading the kernels), every failure it finds confirmed by the "
               "reference before it is reported; "
               "reference: the reference model itself (docs/guides/CAMPAIGN.md, \"The oracle\")")
