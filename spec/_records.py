"""Plain-data records with a JSON-lines form, shared by :mod:`.ops` and :mod:`.events`.

A record class declares its ``kind`` (the JSON tag) and its fields; ``to_dict`` and
``from_dict`` give the wire form used by scenario files, traces and the adapter protocol.
Decoding errors name the field that was wrong, so callers can add the file and line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

from .errors import RecordError

R = TypeVar("R", bound="Record")


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            # Fields added after a format was published are written only when they matter, so
            # files and request lines written before them stay byte-for-byte the same.
            if f.metadata.get("omit_default") and v == f.default:
                continue
            d[f.name] = list(v) if isinstance(v, tuple) else v
        return d


def registry(*classes: type[R]) -> dict[str, type[R]]:
    return {c.kind: c for c in classes}


def decode(reg: dict[str, type[R]], d: Any, what: str) -> R:
    """Decode ``d`` (a dict from JSON) into the record class its ``kind`` names."""
    if not isinstance(d, dict):
        raise RecordError(f"{what} must be a JSON object, got {type(d).__name__}")
    kind = d.get("kind")
    if not isinstance(kind, str) or kind not in reg:
        raise RecordError(f"unknown {what} kind {kind!r} (expected one of {', '.join(sorted(reg))})")
    cls = reg[kind]
    fields = _FIELDS.get(cls)
    if fields is None:  # once per class: dataclasses.fields costs more than a small decode
        fields = _FIELDS[cls] = (dataclasses.fields(cls), frozenset(f.name for f in dataclasses.fields(cls)) | {"kind"})
    kwargs: dict[str, Any] = {}
    for f in fields[0]:
        if f.name in d:
            v = d[f.name]
        elif f.default is not dataclasses.MISSING:
            v = f.default
        else:
            raise RecordError(f"{what} {kind!r}: missing field {f.name!r}")
        kwargs[f.name] = _coerce(kind, f, v, what)
    extra = set(d) - fields[1]
    if extra:
        raise RecordError(f"{what} {kind!r}: unknown field {sorted(extra)[0]!r}")
    return cls(**kwargs)


#: record class -> (its fields, their names and "kind"), filled by :func:`decode`
_FIELDS: dict[type, tuple[tuple[dataclasses.Field, ...], frozenset[str]]] = {}


def _coerce(kind: str, f: dataclasses.Field, v: Any, what: str) -> Any:
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    if t == "int":
        if type(v) is int:  # the common case first
            return v
    bad = RecordError(f"{what} {kind!r}: field {f.name!r} has a bad value {v!r} (expected {t})")
    if t == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise bad
    elif t == "bool":
        if not isinstance(v, bool):
            raise bad
    elif t == "str":
        if not isinstance(v, str):
            raise bad
    elif t.startswith("tuple"):
        if not isinstance(v, (list, tuple)):
            raise bad
        for x in v:
            if isinstance(x, bool) or not isinstance(x, (int, str)):
                raise bad
        v = tuple(v)
    elif t.startswith("Key") or t == "str | int":
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise bad
    return v
