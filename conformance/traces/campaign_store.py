"""A campaign's output folder: what it judged (the manifest), the names of the files it writes,
and the only deletion the tool ever does (``--fresh``).

A campaign resumes by skipping every seed range whose verdict file exists, which is sound only if
the files were written by the same judgement: the same implementation (its ``--impl`` string, the
text of the files that string names, and its hello), the same wheelspec and schedule generators,
the same kinds, shrinking, tracing and chunking.  :func:`identity` collects those facts;
:func:`open_out` compares them with ``OUT/campaign.json`` and refuses, naming the first field
that differs, when they do not match.  The seed span is not part of the identity: a seed's
verdict depends only on the identity and the seed, so a larger ``--schedules`` reuses the done ranges.

Layout (every name below is the tool's; anything else in the folder is the user's and is never
touched)::

    OUT/campaign.json                                       the manifest (atomic)
    OUT/verdicts/<kind>/range-<lo>-<hi>.parquet             one per finished seed range (atomic)
    OUT/traces/<kind>/range-<lo>-<hi>.parquet               with --write traces=OUT/traces (atomic)
    OUT/counterexamples/<impl>/<kind>-<seed>.json           shrunk counterexamples (atomic)

Atomic files are written as ``<name>.tmp<pid>`` and renamed; an interruption can leave such a
temporary, which ``--fresh`` also removes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wheelspec.conformance.check.generate import KINDS
from wheelspec.spec.errors import UserError

MANIFEST = "campaign.json"
#: the manifest's format marker and version
MANIFEST_KEY = "wheelspec_campaign"
MANIFEST_VERSION = 1
VERDICT_DIR = "verdicts"
TRACE_DIR = "traces"
CX_DIR = "counterexamples"
#: the identity fields, in the order they are compared (the first difference is the one named)
IDENTITY_FIELDS = ("impl", "impl_sha256", "impl_files_sha256", "name", "version", "profile", "capabilities",
                   "kinds", "wheelspec", "generators", "shrink", "trace", "chunk")
#: what each field means, for the refusal message
FIELD_NAMES = {
    "impl": "--impl", "impl_sha256": "--impl hash", "impl_files_sha256": "implementation source (files --impl names)",
    "name": "implementation name (hello)", "version": "implementation version (hello)",
    "profile": "profile (hello)", "capabilities": "capabilities (hello)", "wheelspec": "wheelspec version",
    "generators": "schedule generator versions", "kinds": "--kinds", "shrink": "shrinking (--no-shrink)",
    "trace": "--write traces=DIR", "chunk": "--chunk",
}

_TMP = r"(\.tmp\d+)?"
_RANGE = re.compile(r"range-\d{12}-\d{12}(\.parquet" + _TMP + r"|\.tmp\d+)")
_KIND = re.compile("|".join(map(re.escape, KINDS)))
_CX = re.compile(r"(" + _KIND.pattern + r")-\d+\.json" + _TMP)
_MANIFEST = re.compile(re.escape(MANIFEST) + _TMP)


def safe_name(name: str) -> str:
    """``name`` as one path component (what counterexample folders are named by)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "impl"


def default_out(impl: str) -> str:
    """``wheelspec-campaign/<impl>``; a short hash of the ``--impl`` string is appended when it had
    to be altered to be a folder name, so two different strings never share a default folder."""
    impl = impl.strip()
    name = safe_name(impl)
    if name != impl or name in (".", ".."):
        name = f"{name}-{_sha(impl.encode())[:8]}"
    return str(Path("wheelspec-campaign") / name)


def range_name(lo: int, hi: int) -> str:
    return f"range-{lo:012d}-{hi:012d}.parquet"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def impl_files(impl: str) -> list[Path]:
    """The files whose text the ``--impl`` string runs: for ``module:factory`` the module's source
    file; for a command line, every argument that names an existing file (the script, the jar...).
    A built-in engine is part of wheelspec (covered by its version): no files."""
    from wheelspec.conformance.adapters.resolve import BUILTINS

    impl = impl.strip()
    if impl in BUILTINS:
        return []
    if impl.startswith("cmd:") or " " in impl:
        try:
            argv = shlex.split(impl[4:] if impl.startswith("cmd:") else impl)
        except ValueError:
            return []
        return [Path(a) for a in argv if os.path.isfile(a)]
    if ":" in impl:
        import importlib

        mod = importlib.import_module(impl.partition(":")[0])  # resolve() imported it already
        f = getattr(mod, "__file__", None)
        return [Path(f)] if f and os.path.isfile(f) else []
    return []


def identity(impl: str, hello: Any, kinds: Iterable[str], *, shrink: bool, trace: bool | str,
             chunk: int) -> dict[str, Any]:
    """What a campaign judged, field by field (:data:`IDENTITY_FIELDS`); ``trace``: False, True
    (OUT/traces) or the absolute directory of ``--write traces=DIR``."""
    from wheelspec import __version__
    from wheelspec.conformance.check.generate import GENERATORS

    impl = impl.strip()
    kinds = list(kinds)
    files = impl_files(impl)
    digest = _sha("\n".join(f"{p}:{_file_sha(p)}" for p in files).encode()) if files else ""
    caps = hello.capabilities.to_dict()
    caps.pop("pipeline", None)  # how many requests may be in flight: transport, not what is judged
    return {"impl": impl, "impl_sha256": _sha(impl.encode()), "impl_files_sha256": digest,
            "name": hello.name, "version": hello.version or "", "profile": caps["profile"], "capabilities": caps,
            "wheelspec": __version__, "generators": {k: GENERATORS[k] for k in kinds}, "kinds": kinds,
            "shrink": bool(shrink), "trace": trace if isinstance(trace, str) else bool(trace), "chunk": int(chunk)}


# --------------------------------------------------------------------- the folder -------------
def owned(rel: Path) -> bool:
    """Whether a path relative to OUT has one of the tool's own names (see the module docstring)."""
    parts = rel.parts
    if len(parts) == 1:
        return bool(_MANIFEST.fullmatch(parts[0]))
    if len(parts) == 3 and parts[0] in (VERDICT_DIR, TRACE_DIR):
        return bool(_KIND.fullmatch(parts[1]) and _RANGE.fullmatch(parts[2]))
    if len(parts) == 3 and parts[0] == CX_DIR:
        return bool(_CX.fullmatch(parts[2]))
    return False


def _files(out: Path) -> list[Path]:
    """Every non-directory entry below ``out`` (symbolic links included, never followed)."""
    found = []
    for root, dirs, files in os.walk(out):
        base = Path(root)
        found += [base / f for f in files]
        found += [base / d for d in dirs if (base / d).is_symlink()]
    return sorted(found)


def _ours(out: Path, p: Path) -> bool:
    return not p.is_symlink() and p.is_file() and owned(p.relative_to(out))


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of ``out``, None when there is none; a file of that name that is not one is a
    one-line error (it may be the user's: it is never overwritten)."""
    p = out / MANIFEST
    if not p.exists() and not p.is_symlink():
        return None
    try:
        if p.is_symlink() or not p.is_file():
            raise ValueError("not a regular file")
        d = json.loads(p.read_text(encoding="utf-8"))
        if (not isinstance(d, dict) or d.get(MANIFEST_KEY) != MANIFEST_VERSION
                or not isinstance(d.get("identity"), dict)):
            raise ValueError(f"no \"{MANIFEST_KEY}\": {MANIFEST_VERSION} with an identity")
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise UserError(f"{p}: not a wheelspec campaign manifest ({e}); choose another --out") from None
    return d


def write_manifest(out: Path, ident: dict[str, Any]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    target = out / MANIFEST
    tmp = out / f"{MANIFEST}.tmp{os.getpid()}"
    tmp.write_text(json.dumps({MANIFEST_KEY: MANIFEST_VERSION, "identity": ident}, indent=1, sort_keys=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, target)
    return target


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    for f in IDENTITY_FIELDS:
        if old.get(f) != new.get(f):
            return f
    return None


def _show(v: Any) -> str:
    if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v):
        return v[:12]
    s = json.dumps(v, sort_keys=True) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def open_out(out: str | Path, ident: dict[str, Any], *, fresh: bool) -> tuple[Path, bool]:
    """Make ``out`` ready for the campaign ``ident``: resume it, start it, or (``fresh``) clear
    the tool's files from it first; write the manifest.  Returns the folder and whether done
    ranges are resumed.  Raises :class:`UserError` (one line) when it must not be used."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    manifest = read_manifest(out) if out.is_dir() else None
    entries = _files(out) if out.is_dir() else []
    if fresh:
        foreign = [p for p in entries if not _ours(out, p)]
        if manifest is None and foreign:
            raise UserError(f"--fresh: {out} holds no campaign manifest ({MANIFEST}) and files wheelspec did not "
                            f"write (such as {foreign[0].relative_to(out)}); nothing is deleted: choose another --out")
        remove_owned(out, entries)
        write_manifest(out, ident)
        return out, False
    if manifest is None:
        old = [p for p in entries if _ours(out, p)]
        if old:
            raise UserError(f"--out {out}: holds campaign results without a manifest ({MANIFEST}, such as "
                            f"{old[0].relative_to(out)}), so what they judged is unknown and they cannot be resumed: "
                            f"rerun with --fresh to delete them, or choose another --out")
        write_manifest(out, ident)
        return out, False
    field = first_difference(manifest["identity"], ident)
    if field is not None:
        raise UserError(f"--out {out}: holds a campaign with a different {FIELD_NAMES[field]} "
                        f"({_show(manifest['identity'].get(field))} there, {_show(ident.get(field))} now); "
                        f"rerun with --fresh to discard its results, or choose another --out")
    return out, True


def remove_owned(out: Path, entries: Iterable[Path] | None = None) -> int:
    """Delete the tool's own files below ``out`` (never anything else), then the tool's
    subfolders they leave empty; returns how many files were deleted."""
    n = 0
    for p in (_files(out) if entries is None else entries):
        if _ours(out, p):
            p.unlink()
            n += 1
    for top in (VERDICT_DIR, TRACE_DIR, CX_DIR):
        d = out / top
        if d.is_symlink() or not d.is_dir():
            continue
        for sub in sorted(d.iterdir()):
            if sub.is_dir() and not sub.is_symlink() and not any(sub.iterdir()):
                sub.rmdir()
        if not any(d.iterdir()):
            d.rmdir()
    return n
