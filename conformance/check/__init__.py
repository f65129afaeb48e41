"""The virtual-time conformance run behind ``wheelspec check``, ``replay`` and the pytest plugin.

============== ===================================================================================
module         what it owns
============== ===================================================================================
:mod:`.runner`   drive an adapter through operations and record the history (the run)
:mod:`.narrow`   a schedule fitted to an implementation; which requests lie outside wheelspec's ranges
:mod:`.judge`    judge a run: the claimed profile, an oracle, a scenario's expected outcomes
:mod:`.corpus`   scenario files: the format, the shipped corpus, running one scenario
:mod:`.generate` seeded random schedules, deterministic by ``(kind, seed)``
:mod:`.campaign` the seed loop: each schedule run, judged and, failing, shrunk
:mod:`.shrink`   a failing schedule shrunk to a small one that still fails the same way
:mod:`.parallel` a campaign's seeds judged on several processes
:mod:`.report`   what a check found: the terminal summary, JSON and JUnit XML
:mod:`.session`  one implementation checked unit by unit: the run loop of the CLI and the API
============== ===================================================================================

A run flows ``runner -> judge -> shrink -> report``; the properties and the history checker the
judge applies are :mod:`wheelspec.spec`'s.
"""
