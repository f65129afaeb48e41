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
        for name, omit, default in _written(type(self)):
            v = getattr(self, name)
            # Fields added after a format was published are written only when they matter, so
            # files and request lines written before them stay byte-for-byte the same.
            if omit and v == default:
                continue
            d[name] = list(v) if isinstance(v, tuple) else v
        return d


def _written(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    """Per field of ``cls``: its name, whether it is left out at its default, that default."""
    out = _WRITTEN.get(cls)
    if out is None:  # once per class: dataclasses.fields costs more than a small record's to_dict
        out = _WRITTEN[cls] = tuple((f.name, bool(f.metadata.get("omit_default")), f.default)
                                    for f in dataclasses.fields(cls))
    return out


#: record class -> what :meth:`Record.to_dict` writes (filled by :func:`_written`)
_WRITTEN: dict[type, tuple[tuple[str, bool, Any], ...]] = {}


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
        fs = tuple((f, _type_name(f)) for f in dataclasses.fields(cls))
        fields = _FIELDS[cls] = (fs, frozenset(f.name for f, _ in fs) | {"kind"})
    kwargs: dict[str, Any] = {}
    for f, t in fields[0]:
        if f.name in d:
            v = d[f.name]
        elif f.default is not dataclasses.MISSING:
            v = f.default
        else:
            raise RecordError(f"{what} {kind!r}: missing field {f.name!r}")
        kwargs[f.name] = v if t == "int" and type(v) is int else _coerce(kind, f, t, v, what)
    if not fields[1].issuperset(d):
        raise RecordError(f"{what} {kind!r}: unknown field {sorted(set(d) - fields[1])[0]!r}")
    return cls(**kwargs)


def _type_name(f: dataclasses.Field) -> str:
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))


#: record class -> (its fields with their type names, their names and "kind"), filled by :func:`decode`
_FIELDS: dict[type, tuple[tuple[tuple[dataclasses.Field, str], ...], frozenset[str]]] = {}


def _coerce(kind: str, f: dataclasses.Field, t: str, v: Any, what: str) -> Any:
    """``v`` checked against the type ``t`` of field ``f`` (a tuple's list becomes a tuple)."""
    if t == "int":
        ok = type(v) is int or (isinstance(v, int) and not isinstance(v, bool))
    elif t == "bool":
        ok = isinstance(v, bool)
    elif t == "str":
        ok = isinstance(v, str)
    elif t.startswith("tuple"):
        ok = isinstance(v, (list, tuple)) and all(not isinstance(x, bool) and isinstance(x, (int, str)) for x in v)
        if ok:
            v = tuple(v)
    elif t.startswith("Key") or t == "str | int":
        ok = not isinstance(v, bool) and isinstance(v, (int, str))
    else:
        ok = True
    if not ok:
        raise RecordError(f"{what} {kind!r}: field {f.name!r} has a bad value {v!r} (expected {t})")
    return v
