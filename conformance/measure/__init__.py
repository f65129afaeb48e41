"""Measurements of the conformance runner itself, each a script started with ``python -m``.

================================  =============================================================
module                            what it measures
================================  =============================================================
:mod:`.power`                     how often ``wheelspec check`` catches each broken timer of
                                  ``tests/fixtures/variants`` (``docs/results/POWER.md``)
:mod:`.runner_speed`              the CPU one checked operation costs, and where it goes
                                  (``docs/results/RUNNER_SPEED.md``)
================================  =============================================================

They drive the code path of ``wheelspec check`` (its defaults: :mod:`..check.defaults`) as a
library user would, without the command line.  The engines' own speed is measured by
:mod:`wheelspec.benchmarks` (``wheelspec bench``).
"""
