"""The exceptions of wheelspec: one root, one class per kind of trouble.

Every exception wheelspec raises on purpose derives from :class:`WheelspecError` (exported as
``wheelspec.Error``), so a caller can write ``except wheelspec.Error``.  Classes that stood for a
built-in kind before the hierarchy existed keep that base too (``RangeError`` is still a
``ValueError``, ``InvariantError`` still an ``AssertionError``), so existing ``except`` clauses
keep catching them.

=================== ============================================================================
class               raised when
=================== ============================================================================
``UserError``       bad input, configuration or command line: one line for the user, exit 2
``AdapterError``    the implementation under test broke the protocol (hang, crash, garbage)
``ProtocolError``   one message breaks the adapter protocol (the runner wraps it)
``RangeError``      an argument is outside the ranges of :mod:`.limits`
``RecordError``     a dict could not be decoded into an operation or event record
``InvariantError``  a structure invariant of an engine is broken (a bug in wheelspec)
=================== ============================================================================

The mapping to exit codes belongs to the command line (:mod:`wheelspec.conformance.cli`); the
``exit_code`` attribute below is the one fact it reads.
"""

from __future__ import annotations


class WheelspecError(Exception):
    """Root of every exception wheelspec raises on purpose."""

    #: the ``wheelspec`` command's exit code when this error ends a command
    exit_code: int = 2


class UserError(WheelspecError):
    """Bad input, configuration or adapter behaviour: printed as one line; exit code 2."""


class AdapterError(UserError):
    """The implementation under test broke the protocol (hang, crash, garbage, wrong version)."""


class ProtocolError(WheelspecError, ValueError):
    """A message from the adapter breaks the protocol; the message says what was wrong."""


class RangeError(WheelspecError, ValueError):
    """An argument is outside the range the semantics accepts; the message names the argument."""


class RecordError(WheelspecError, ValueError):
    """A dict could not be decoded into a record; the message names the kind and field."""


class InvariantError(WheelspecError, AssertionError):
    """A structure invariant does not hold; the message names the rule and where."""
