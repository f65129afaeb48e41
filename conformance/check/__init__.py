"""The virtual-time conformance run behind ``wheelspec check``, ``replay`` and the pytest plugin.

============== ===================================================================================
module         what it owns
============== ===================================================================================
:mod:`.runner`   drive an adapter through operations and record the history (the run)
:mod:`.judge`    judge a run: the claimed profile, an oracle, a scenario's expected outcomes
:mod:`.corpus`   scenario files: the format, the shipped corpus, running one scenario
:mod:`.campaign` seeded random schedules, deterministic by ``(kind, seed)``, run and judged
:mod:`.shrink`   a failing schedule shrunk to a small one that still fails the same way
:mod:`.report`   what a check found: the terminal summary, JSON and JUnit XML
============== ===================================================================================

A run flows ``runner -> judge -> shrink -> report``; the properties and the history checker the
judge applies are :mod:`wheelspec.spec`'s.
"""
