"""The envelope every JSON report of ``wheelspec`` starts with: one shape a CI script can rely on.

Each command's report is ``format`` (the report format and its version), ``command``, the
``wheelspec`` version, ``ok``, ``exit_code`` and ``interrupted``, then the command's own body.
The JSON Schema of the reports ships as ``conformance/cli/report.schema.json`` (``wheelspec docs
schema``).  This module sits in the root package so that every layer that writes a report (the command line,
the check's report, the benchmarks) builds the envelope the same way.
"""

from __future__ import annotations

from typing import Any

#: the report format every ``--json`` report names first
REPORT_FORMAT = "wheelspec-report/1"


def interrupted(stop: Any) -> dict[str, Any] | None:
    """The envelope's ``interrupted``: null for a run that was not stopped, else the signal
    (:class:`~wheelspec.conformance.interrupt.Interrupted`) and the exit code it gives."""
    if stop is None:
        return None
    return {"signal": str(stop.signal_name), "exit_code": int(stop.exit_code)}


def envelope(command: str, body: dict[str, Any], *, exit_code: int, stop: Any = None) -> dict[str, Any]:
    """A command's JSON report: the envelope every command shares (``format``, ``command``, the
    ``wheelspec`` version, ``ok``, ``exit_code``, ``interrupted``), then the command's own
    ``body``, whose keys may not repeat the envelope's."""
    from wheelspec import __version__

    head: dict[str, Any] = {"format": REPORT_FORMAT, "command": command, "wheelspec": __version__,
                            "ok": exit_code == 0, "exit_code": int(exit_code), "interrupted": interrupted(stop)}
    clash = sorted(head.keys() & body.keys())
    if clash:  # a body key shadowing the envelope would make two reports disagree on "ok"
        raise ValueError(f"report body of {command} repeats envelope keys {clash}")
    return {**head, **body}
