"""The engine's debug mode: with it, every call of a wrapper checks the structural invariants of
:mod:`.invariants` afterwards.  On when a constructor says ``debug=True``, or when it says nothing
and the environment sets ``WHEELSPEC_DEBUG`` (to anything but ``0``)."""

from __future__ import annotations

import os

from wheelspec.spec.limits import check_flag


def debug_default() -> bool:
    """Whether the environment asks for the debug mode (``WHEELSPEC_DEBUG`` set, not ``0``)."""
    return os.environ.get("WHEELSPEC_DEBUG", "") not in ("", "0")


def debug_flag(debug: object) -> bool:
    """The ``debug`` argument of a constructor: None (the environment decides) or a real bool."""
    return debug_default() if debug is None else check_flag("debug", debug)
