"""wheelspec: the semantics of Kafka-style hierarchical timing wheels, made executable and checkable.

Data flows one way through the subpackages:

* :mod:`wheelspec.spec` defines: limits, operations, events, firing profiles, proofs, the history checker;
* :mod:`wheelspec.reference` and :mod:`wheelspec.optimized` implement those semantics;
* :mod:`wheelspec.conformance` drives any implementation through an adapter, records a history
  and judges it.
"""

__version__ = "0.1.0"
