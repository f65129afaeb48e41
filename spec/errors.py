"""The exceptions of wheelspec: one root, one class per kind of trouble.

Every exception wheelspec raises on purpose derives from :class:`WheelspecError` (exported as
``wheelspec.Error``), so a caller can write ``except wheelspec.Error``.  A class that stands for
a built-in kind has that base too (``RangeError`` is a ``ValueError``, ``InvariantError`` an
``AssertionError``, the linearizability search's ``BudgetExhausted`` a ``TimeoutError``), so an
``except`` clause written for the built-in kind catches it.

=================== ============================================================================
class               raised when
=================== ============================================================================
``UserError``       bad input, configuration or command line: one line for the user, exit 2
``AdapterError``    the implementation under test broke the protocol (hang, crash, garbage)
``ProtocolError``   one message breaks the adapter protocol (the runner wraps it)
``RangeError``      an argument is outside the ranges of :mod:`.limits`
``RecordError``     a dict could not be decoded into an operation or event record
``Bug``             a bug in wheelspec itself, never a verdict: the command keeps its traceback
``InvariantError``  a structure invariant of an engine is broken (a :class:`Bug`)
=================== ============================================================================

Every other exception class of the package derives from one of these or from the root
(``tests/test_error_hierarchy.py`` checks it), the control-flow signals private to one module
included.  One deliberate exception: ``conformance/interrupt.py``'s ``Interrupted`` is a
``KeyboardInterrupt`` (a signal, not an error), so that no ``except Exception`` swallows Ctrl-C.

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


class Bug(WheelspecError):
    """A bug in wheelspec itself, never a verdict: the command shows it with its traceback, to be
    reported, and exits 3 (a code no verdict uses)."""

    exit_code = 3


class InvariantError(Bug, AssertionError):
    """A structure invariant does not hold; the message names the rule and where."""
