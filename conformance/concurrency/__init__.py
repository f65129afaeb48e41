"""Concurrency: real threads against the thread-safe facades, and linearizability checking.

==================== ===========================================================================
module               what it owns
==================== ===========================================================================
:mod:`.hammer`         real threads calling a thread-safe facade, the concurrent history recorded
:mod:`.linearizability` the generic checker (Porcupine-style) and wheelspec's sequential model
==================== ===========================================================================

The deterministic interleaving of Kafka's locking protocol (the step model and its races) is in
:mod:`wheelspec.reference.steps` and :mod:`wheelspec.reference.interleave`.
"""
