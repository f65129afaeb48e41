"""wheelspec: the semantics of Kafka-style hierarchical timing wheels, made executable and checkable.

Data flows one way through the subpackages (``tests/test_import_direction.py`` enforces it):

* :mod:`wheelspec.spec` defines: limits, operations, events, firing profiles, errors, proofs,
  the history checker.  It imports nothing else of wheelspec.
* :mod:`wheelspec.reference` (readable) and :mod:`wheelspec.optimized` (numba arrays) implement
  those semantics; they import only :mod:`wheelspec.spec`.
* :mod:`wheelspec.benchmarks` times the engines; it imports only the parts above and this package.
* :mod:`wheelspec.conformance` drives any implementation through an adapter, records a history
  and judges it with :mod:`wheelspec.spec`; it may import everything above, benchmarks included,
  and nothing but ``python -m wheelspec`` imports it.

The module graph has no cycle, counting imports inside functions (README, "How the parts fit").

This package's own source lives in ``spec/root/`` (the project's top-level folders are fixed);
it holds only the version and the root exception, ``wheelspec.Error``.
"""

from wheelspec.spec.errors import WheelspecError as Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
