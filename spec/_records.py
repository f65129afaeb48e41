"""Plain-data records with a JSON-lines form, shared by :mod:`.ops` and :mod:`.events`.

A record class declares its ``kind`` (the JSON tag) and its fields; ``to_dict`` and
``from_dict`` give the wire form used by scenario files, traces and the adapter protocol.
Decoding errors name the field that was wrong, so callers can add the file and line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, NamedTuple, TypeVar

from .errors import RecordError

R = TypeVar("R", bound="Record")


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for f in fields_of(type(self)).fields:
            v = getattr(self, f.name)
            # Fields added after a format was published are written only when they matter, so
            # files and request lines written before them stay byte-for-byte the same.
            if f.omit_default and v == f.default:
                continue
            d[f.name] = list(v) if isinstance(v, tuple) else v
        return d


class FieldInfo(NamedTuple):
    """What the record code reads of one dataclass field, once per class."""

    name: str
    type: str           # the annotation's name: "int", "bool", "str", "tuple[...]", "Key", ...
    default: Any        # dataclasses.MISSING when the field has none
    omit_default: bool  # left out of to_dict at its default (fields added after a format's release)


class FieldTable(NamedTuple):
    fields: tuple[FieldInfo, ...]
    names: tuple[str, ...]
    #: the keys a record's dict may hold: its field names and "kind"
    keys: frozenset[str]


def fields_of(cls: type) -> FieldTable:
    """The field table of record class ``cls``, built on first use (``dataclasses.fields`` costs
    more than a small record's ``to_dict`` or decode, or a call through :func:`ops.invoke`)."""
    table = _TABLES.get(cls)
    if table is None:
        infos = tuple(FieldInfo(f.name, f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type)),
                                f.default, bool(f.metadata.get("omit_default")))
                      for f in dataclasses.fields(cls))
        names = tuple(f.name for f in infos)
        table = _TABLES[cls] = FieldTable(infos, names, frozenset(names) | {"kind"})
    return table


#: record class -> its :class:`FieldTable` (filled by :func:`fields_of`)
_TABLES: dict[type, FieldTable] = {}


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
    table = fields_of(cls)
    kwargs: dict[str, Any] = {}
    for f in table.fields:
        if f.name in d:
            v = d[f.name]
        elif f.default is not dataclasses.MISSING:
            v = f.default
        else:
            raise RecordError(f"{what} {kind!r}: missing field {f.name!r}")
        kwargs[f.name] = v if f.type == "int" and type(v) is int else _coerce(kind, f, v, what)
    if not table.keys.issuperset(d):
        raise RecordError(f"{what} {kind!r}: unknown field {sorted(set(d) - table.keys)[0]!r}")
    return cls(**kwargs)


def _coerce(kind: str, f: FieldInfo, v: Any, what: str) -> Any:
    """``v`` checked against the type of field ``f`` (a tuple's list becomes a tuple)."""
    t = f.type
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
