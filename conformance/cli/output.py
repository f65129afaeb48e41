"""What every ``wheelspec`` command prints, printed one way: consoles and JSON reports.

- A rich console never turns text into emoji (``mytimer.adapter:factory:`` stays that text) and,
  when its stream is not a terminal (a pipe, a CI log), prints plain lines that are never wrapped
  at rich's 80-column default.
- ``--json FILE`` writes a report to FILE; ``--json -`` prints it on stdout, and the command's
  human-readable output then goes to stderr so that stdout is one JSON document.

Light on purpose (rich is imported inside :func:`console`): the parser imports this module's
siblings for every invocation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from wheelspec.conformance.cli.args import STDOUT

#: width of a console whose stream is not a terminal: wide enough that tables are not truncated
PIPE_WIDTH = 200


def console(*, stderr: bool = False, file: Any = None) -> Any:
    """A rich Console for a command's output: no emoji codes, no highlighting; on a pipe, plain
    text ``PIPE_WIDTH`` wide with lines never wrapped (``soft_wrap``)."""
    from rich.console import Console

    c = Console(file=file, stderr=stderr, highlight=False, emoji=False)
    if not c.is_terminal:
        c = Console(file=file, stderr=stderr, highlight=False, emoji=False, width=PIPE_WIDTH, soft_wrap=True)
    return c


def human_to_stderr(*targets: str | None) -> bool:
    """True when one of the command's reports goes to stdout (``--json -``): its terminal output
    must then go to stderr."""
    return any(t == STDOUT for t in targets)


def json_text(doc: Any, **dumps: Any) -> str:
    return json.dumps(doc, indent=1, **dumps) + "\n"


#: the JSON Schema (draft 2020-12) of every command's report (:mod:`wheelspec.envelope`),
#: shipped beside this module
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


def schema() -> dict[str, Any]:
    """The shipped JSON Schema of the reports (``wheelspec docs schema`` prints it)."""
    doc: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return doc


def write_json(target: str, doc: Any, **dumps: Any) -> None:
    """``doc`` as JSON to ``target``: a file, written whole (temporary file and rename), or stdout for ``-``."""
    text = json_text(doc, **dumps)
    if target == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from wheelspec.conformance.interrupt import atomic_write_text
    from wheelspec.spec.errors import UserError

    try:
        atomic_write_text(Path(target), text)
    except OSError as e:
        raise UserError(f"--json {target}: cannot write the report ({e.strerror or e})") from None
