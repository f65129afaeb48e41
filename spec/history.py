"""A history: the ordered list of events one run produced, with its JSON-lines form."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from .events import Event, event_from_dict


class History:
    """An append-only event log. Implementations call it (``history(event)``) as their listener."""

    __slots__ = ("events",)

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = list(events)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, i):
        return self.events[i]

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def to_jsonl(self) -> str:
        return "".join(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in self.events)

    @classmethod
    def from_jsonl(cls, text: str, source: str = "<history>") -> History:
        out = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(event_from_dict(json.loads(line)))
            except (ValueError, TypeError) as e:
                raise ValueError(f"{source}:{lineno}: {e}") from None
        return cls(out)

    @classmethod
    def load(cls, path: str | Path) -> History:
        p = Path(path)
        return cls.from_jsonl(p.read_text(), str(p))
