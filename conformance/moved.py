"""Old module names of the conformance suite, kept importable after the suite was split into
stage packages.

Users name modules in command lines and files that outlive a release: ``--impl
wheelspec.conformance.adapters_sched:adapter``, ``python -m wheelspec.conformance.serve``, imports
in their own adapters.  Each old name in :data:`MOVED` resolves to the module that now owns its
code: the *same* module object (classes compare equal, state is shared), and ``python -m OLD``
runs the new module's code.  ``tests/test_moved_names.py`` checks every entry.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType

_P = "wheelspec.conformance."

#: old module name -> the module that owns its code now
MOVED: dict[str, str] = {_P + old: _P + new for old, new in {
    "adapters_asyncio": "adapters.asyncio_loop",
    "adapters_sched": "adapters.stdlib_sched",
    "adapters_twisted": "adapters.twisted_clock",
    "analyze": "traces.analyze",
    "analyze_local": "traces.local",
    "analyze_rules": "traces.rules",
    "analyze_spark": "traces.spark",
    "campaign": "check.campaign",
    "campaign_cli": "cli.campaign",
    "commands": "cli.check",
    "hammer": "concurrency.hammer",
    "judge": "check.judge",
    "library_adapter": "adapters.library",
    "linearizability": "concurrency.linearizability",
    "protocol": "adapters.protocol",
    "races": "cli.races",
    "report": "check.report",
    "report_html": "traces.html_report",
    "runner": "check.runner",
    "scenarios": "check.corpus",
    "serve": "adapters.serve",
    "shrink": "check.shrink",
    "spark_campaign": "traces.spark_campaign",
    "spark_session": "traces.spark_session",
    "subprocess_adapter": "adapters.subprocess_adapter",
    "trace": "traces.format",
    "trace_synth": "traces.synth",
}.items()}
# the errors live in spec/ now
MOVED[_P + "errors"] = "wheelspec.spec.errors"


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Finds an old name and loads it as the module that owns its code now."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=MOVED[fullname])

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # The import system stores what this returns under the old name: the new module itself.
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed under its new name

    def get_code(self, fullname: str) -> CodeType | None:
        # ``python -m OLD`` (runpy) asks for the code to run as ``__main__``.
        new = MOVED[fullname]
        spec = importlib.util.find_spec(new)
        assert spec is not None and isinstance(spec.loader, importlib.abc.InspectLoader), new
        return spec.loader.get_code(new)

    def get_source(self, fullname: str) -> str | None:
        return None

    def is_package(self, fullname: str) -> bool:
        return False


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())  # before the path finder: `scenarios/` is also a data folder
