"""Optional dependencies: the packages a base install (``pip install wheelspec``) leaves out, and
the one-line error that names the extra bringing them.

The base install judges implementations (check, replay, prove, races, linearize, realtime, bench,
local campaigns, local trace analysis).  What only draws plots, talks to Spark or adapts a
third-party timer is in an extra (``pyproject.toml``, ``[project.optional-dependencies]``)::

    reports      matplotlib: the plots of analyze --out, matrix and bench --write plot=PATH
    spark        pyspark, pandas: analyze --engine spark, campaign --engine spark
    thirdparty   twisted: the Twisted Clock adapter (a row of wheelspec matrix)
    all          all of the above

A command that needs a missing one raises :class:`MissingExtra` (a :class:`UserError`: one line,
exit 2); a report that can do without one writes the rest and says which extra adds the part.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from wheelspec.spec.errors import UserError

#: extra -> the top-level modules it brings (what :func:`available` and the tests look at)
EXTRAS: dict[str, tuple[str, ...]] = {
    "reports": ("matplotlib",),
    "spark": ("pyspark", "pandas"),
    "thirdparty": ("twisted",),
}


class MissingExtra(UserError):
    """An optional dependency is not installed.  ``extra`` names the extra that installs it, so that
    a caller that can go on without it (a matrix row, a report's plots) can say so precisely."""

    def __init__(self, module: str, extra: str, what: str) -> None:
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'wheelspec[{extra}]' "
                         f"({module} is not installed)")
        self.module = module
        self.extra = extra
        self.what = what


def install_hint(extra: str) -> str:
    """``pip install 'wheelspec[EXTRA]'``, quoted for a POSIX shell (brackets are globs there)."""
    return f"pip install 'wheelspec[{extra}]'"


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` and return it, or raise :class:`MissingExtra` naming ``extra``.

    Only a missing module (or a missing package above it) becomes the one-line error: an
    ImportError raised *inside* an installed package (a broken install, a binary built for
    another Python) propagates with its own message, since the extra is installed already."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        if e.name is None or e.name.split(".")[0] != top:
            raise
        raise MissingExtra(module, extra, what) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (a cheap check for a report that
    leaves out the part needing it).  A module set to None in :data:`sys.modules` (how tests hide
    an installed package) counts as missing, as an import would fail."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):   # ValueError: sys.modules[module] is None or has no spec
        return False
