"""Building shipped sources once, on first use, into a cache directory: the third-party
subprocess adapters of :mod:`wheelspec.conformance.adapters.thirdparty` and the native peers of
:mod:`.native`.

An adapter whose sources ship in the package (a Rust crate, Java files, a Go module, Node files)
is built from them the first time it is asked for.  The build directory's name carries a hash of
the sources and of the toolchain's version (:func:`content_key`), so an edited source or a new
compiler builds afresh and an unchanged one is reused.  :func:`build_once` builds into a temporary
directory beside the final place and renames it into place when complete: a build that fails or is
interrupted leaves nothing half-built behind, and two processes building at once both end with a
complete one (the second rename loses and its copy is thrown away).

A missing tool, a failed build or a build that takes too long is a
:class:`~wheelspec.spec.errors.UserError` with one line naming what is missing and how to install
it (:func:`require_tool`, :func:`run_build`).

The cache lives under ``$XDG_CACHE_HOME/wheelspec/<area>`` (``~/.cache/wheelspec/...`` when the
variable is unset); the adapters use the area ``adapters``, the native bench peers ``native``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path

from wheelspec.spec.errors import UserError

#: a build that runs longer than this is stopped and reported (cargo's first build is ~30 s)
BUILD_TIMEOUT_S = 900.0
#: never part of the shipped sources: build output, caches, lock files written by a local build
_SKIP_DIRS = frozenset({"target", "__pycache__", "build", "node_modules"})


def cache_root(area: str = "adapters", override: str | os.PathLike[str] | None = None) -> Path:
    """``override`` if given, else ``$XDG_CACHE_HOME/wheelspec/<area>`` (``~/.cache`` by default)."""
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "wheelspec" / area


def package_sources(package: str, sub: str = "") -> dict[str, bytes]:
    """The files shipped under ``sub`` of ``package`` (dotted name), by relative path, without
    build output (``target/``, ``__pycache__/``...) and lock files.  Raises ``UserError`` when
    nothing is there (an installed package missing its package-data)."""
    root = resources.files(package)
    if sub:
        root = root.joinpath(sub)
    out: dict[str, bytes] = {}

    def walk(node: object, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):  # type: ignore[attr-defined]
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                if child.name not in _SKIP_DIRS:
                    walk(child, rel + "/")
            elif not child.name.endswith((".lock", ".pyc")) and child.name != "__init__.py":
                out[rel] = child.read_bytes()

    if root.is_dir():
        walk(root, "")
    if not out:
        raise UserError(f"the sources {package}/{sub} are missing from the installed package")
    return out


def require_tool(name: str, install: str) -> str:
    """The path of ``name`` on PATH, else a ``UserError``: "<name> not found on PATH (<install>)"."""
    path = shutil.which(name)
    if path is None:
        raise UserError(f"{name} not found on PATH ({install})")
    return path


def tool_version(argv: list[str]) -> str:
    """The first line ``argv`` prints (stdout or stderr), e.g. ``javac 17.0.9``."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise UserError(f"`{' '.join(argv)}` failed: {e}") from None
    text = (p.stdout + p.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def content_key(sources: Mapping[str, bytes], *extra: str) -> str:
    """A 16-hex-digit hash of the sources (names and bytes) and of ``extra`` (toolchain versions,
    library paths): equal keys mean the same build."""
    h = hashlib.sha256()
    for name, data in sorted(sources.items()):
        h.update(name.encode() + b"\0" + data + b"\0")
    for e in extra:
        h.update(e.encode() + b"\0")
    return h.hexdigest()[:16]


def last_lines(text: str, k: int = 3) -> str:
    """The last ``k`` non-empty lines of a tool's output, joined on one line (for an error)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-k:]) if lines else "no output"


def write_sources(dest: Path, sources: Mapping[str, bytes]) -> None:
    """Write ``sources`` (relative path -> bytes) under ``dest``, creating folders."""
    for name, data in sources.items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes(data)


def run_build(cmd: list[str], what: str, *, cwd: Path | None = None,
              env: Mapping[str, str] | None = None, timeout: float = BUILD_TIMEOUT_S) -> None:
    """Run one build command; a non-zero exit or a timeout is a ``UserError`` naming ``what``
    with the last lines of the tool's output."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=None if env is None else dict(env),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what} took over {timeout:.0f} s") from None
    except OSError as e:
        raise UserError(f"{what} could not start: {e}") from None
    if p.returncode != 0:
        raise UserError(f"{what} failed: {last_lines(p.stderr + p.stdout)}")


def _publish(tmp: Path, final: Path) -> None:
    """Move a complete build into place; if another process got there first, keep theirs."""
    try:
        tmp.rename(final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def build_once(root: Path, name: str, key: str, marker: str, build: Callable[[Path], None]) -> Path:
    """The directory ``root/<name>-<key>``, built by ``build(tmp)`` if its ``marker`` file (a
    path relative to it, the build's main output) is not there yet.  ``build`` fills a fresh
    temporary directory; it is renamed into place only when ``build`` returns and ``marker``
    exists, and removed otherwise."""
    final = root / f"{name}-{key}"
    if (final / marker).exists():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-build-", dir=root))
    try:
        build(tmp)
        if not (tmp / marker).exists():
            raise UserError(f"building {name} finished without producing {marker}")
        _publish(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
