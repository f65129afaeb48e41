"""The conformance matrix behind ``wheelspec matrix``: implementations x properties, for
third-party timers and our own engines.

=============== ================================================================================
module          what it owns
=============== ================================================================================
:mod:`.rows`    one row per implementation: a virtual-time campaign and probes, or real-time runs
:mod:`.render`  the rows as Markdown, an HTML page and a lateness plot; failures grouped by shape
:mod:`.files`   which files the command may write: the marker of generated files, refusals
=============== ================================================================================

The names below are the package's API.
"""

from wheelspec.conformance.matrix import files
from wheelspec.conformance.matrix.files import MD_BEGIN, MD_END
from wheelspec.conformance.matrix.render import (
    failure_lines,
    grouped_failures,
    html_page,
    markdown,
    update_markdown,
    write_plot,
)
from wheelspec.conformance.matrix.rows import (
                                               COLUMNS,
                                               PROP_COLUMN,
                                               REALTIME,
                                               VIRTUAL,
                                               Row,
                                               probes,
                                               realtime_row,
                                               versions,
                                               virtual_factory,
                                               virtual_row,
)

__all__ = ["COLUMNS", "MD_BEGIN", "MD_END", "PROP_COLUMN", "REALTIME", "VIRTUAL", "Row", "failure_lines", "files",
           "grouped_failures", "html_page", "markdown", "probes", "realtime_row", "update_markdown", "versions",
           "virtual_factory", "virtual_row", "write_plot"]
