"""``python -m wheelspec`` is the ``wheelspec`` command."""

from wheelspec.conformance.cli import main

raise SystemExit(main())
