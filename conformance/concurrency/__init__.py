"""Concurrency: real threads against the thread-safe facades, and linearizability checking.

======================= ========================================================================
module                  what it owns
======================= ========================================================================
:mod:`.hammer`          real threads calling a thread-safe facade, the concurrent history recorded
:mod:`.linearizability` the generic checker (Porcupine-style): a model is four functions
:mod:`.models`          wheelspec's timer and purgatory as a sequential model, and a register
:mod:`.history_file`    concurrent histories as JSON-lines files
======================= ========================================================================

The deterministic interleaving of Kafka's locking protocol (the step model and its races) is in
:mod:`wheelspec.reference.steps` and :mod:`wheelspec.reference.interleave`.
"""
