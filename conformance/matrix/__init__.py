"""The conformance matrix behind ``wheelspec matrix``: implementations x properties, for
third-party timers and our own engines.

:mod:`.matrix` builds one row per implementation (a virtual-time campaign and probes, or
real-time runs) and renders the rows as Markdown, HTML, JSON and a lateness plot.
"""

# ``wheelspec.conformance.matrix`` was one module before this package: its names stay importable.
from wheelspec.conformance.matrix.matrix import *  # noqa: F403 - the former module's public names
