"""Errors that reach the user as one line and an exit code, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input, configuration or adapter behaviour: printed as one line; exit code 2."""

    exit_code = 2
