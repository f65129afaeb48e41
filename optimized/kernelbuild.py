"""One kernel source, two compiled builds: the fast build and the checked build.

The kernels of :mod:`.timer_kernels` and :mod:`.purgatory_kernels` are written once, as plain
Python functions whose hot-path checks sit under ``if CHECKED:``.  :func:`build` compiles such a
set of functions with ``CHECKED`` a compile-time constant:

* ``CHECKED = False``, the fast build (what the engine runs): numba prunes the constant-false
  branches before typing, so the fast build's machine code has no check at all.  Its kernels
  keep the plain names (the module's own ``_place_range`` ...), so numba's on-disk cache
  (``cache=True``) stores and finds them under the same files as a plain ``@njit`` function.
* ``CHECKED = True``, the checked build (debug mode, ``WHEELSPEC_DEBUG=1`` or ``debug=True``): the
  same source with every check compiled in, plus ``boundscheck=True``.  A failing check writes
  its code and the state it saw to the kernel's scalars array (``S[DIAG:]``, ``P[P_DIAG:]``),
  stops the kernel, and the Python wrapper raises :class:`wheelspec.spec.errors.InvariantError`
  naming the kernel, the rule and the values.  Its functions are named ``checked.<name>``, so
  they are cached in files of their own.

Why not a closure factory (``def make(checked): @njit def f(): if CHECKED: ...``): numba's cache
keys a closure by pickling its cell contents, and a kernel calling another kernel holds that
kernel's dispatcher in a cell, which pickles differently in every process: such kernels were
recompiled in every new process (measured: ``outer`` missed the cache on every run, a leaf
closure hit).  Here each build gets its own copy of the module's globals instead (``CHECKED``
and the build's own kernels under their names); a function with no closure is keyed by its
bytecode, and the two builds differ in name, so neither can load the other's code.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

from numba import njit


def build(sources: Iterable[Callable[..., Any]], module_globals: dict[str, Any], checked: bool,
          options: dict[str, Any]) -> types.SimpleNamespace:
    """Compile ``sources`` (plain functions of one module) as one build: each function is
    re-created over a copy of ``module_globals`` in which ``CHECKED`` is ``checked`` and every
    source's name is the build's own dispatcher (so kernels call kernels of the same build), then
    wrapped with ``njit(**options)`` (plus ``boundscheck=True`` in the checked build).  Nothing is
    compiled here: numba compiles, or loads from its cache, at a kernel's first call."""
    g = dict(module_globals)
    g["CHECKED"] = bool(checked)
    opts = dict(options, boundscheck=True) if checked else dict(options)
    ns = types.SimpleNamespace()
    for f in sources:
        fn = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
        fn.__qualname__ = ("checked." if checked else "") + f.__qualname__
        fn.__doc__ = f.__doc__
        fn.__kwdefaults__ = f.__kwdefaults__
        dispatcher = njit(**opts)(fn)
        g[f.__name__] = dispatcher
        setattr(ns, f.__name__, dispatcher)
    return ns


class Builds:
    """The two builds of one kernel module: :meth:`make` compiles one, :meth:`checked` makes the
    checked build on first use (the fast path never pays for it).  ``checked_only`` are
    functions only the checked build has (its assertion helpers)."""

    def __init__(self, sources: tuple[Callable[..., Any], ...], checked_only: tuple[Callable[..., Any], ...],
                 module_globals: dict[str, Any], options: dict[str, Any]) -> None:
        self._sources, self._checked_only = sources, checked_only
        self._globals, self._options = module_globals, options
        self._checked: types.SimpleNamespace | None = None

    def make(self, checked: bool) -> types.SimpleNamespace:
        """One build: ``checked=False`` the fast build, ``checked=True`` the debug mode's."""
        sources = self._sources + self._checked_only if checked else self._sources
        return build(sources, self._globals, checked, self._options)

    def checked(self) -> types.SimpleNamespace:
        """The checked build, made once."""
        if self._checked is None:
            self._checked = self.make(True)
        return self._checked
