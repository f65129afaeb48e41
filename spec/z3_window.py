"""The symbolic events the Z3 history checker reasons over (:mod:`.checker_z3` and
:mod:`.checker_z3_results`): a window of a history's events, each event's fields as Z3 integers
asserted under the event's own label, so that an unsat core names the events a verdict rests on.
"""

from __future__ import annotations

from typing import Any

import z3

from . import events as ev
from .profiles import Profile

KINDS = {cls: i for i, cls in enumerate((ev.Add, ev.Fire, ev.Cancel, ev.Advance, ev.Observe, ev.Complete,
                                         ev.Expire, ev.TryCompleteElseWatch, ev.SetCompletable,
                                         ev.CheckAndComplete, ev.CancelForKey, ev.ForceComplete, ev.Purge,
                                         ev.Resubmit, ev.TryComplete))}
VIA = {"try": 0, "check": 1, "expire": 2, "force": 3}
WHAT = {"size": 0, "num_delayed": 1, "watched": 2}


class Window:
    """Symbolic fields of the events in a window, each event's facts under its own label."""

    def __init__(self, events: list[Any], indices: list[int]) -> None:
        self.events = events
        self.idx = sorted(set(i for i in indices if 0 <= i < len(events)))
        self.labels: dict[int, z3.BoolRef] = {}
        self.facts: list[z3.BoolRef] = []
        #: the keys the window's events name, each as a small integer code (keys compare as the
        #: fast path's dicts compare them)
        self.keys: dict[Any, int] = {}
        for i in self.idx:
            lab = z3.Bool(f"e{i}")
            self.labels[i] = lab
            e = events[i]
            vals = {"kind": KINDS[type(e)], "now": e.now}
            for f in ("task", "op", "exp", "delay", "completed"):
                if hasattr(e, f):
                    vals["id" if f in ("task", "op") else ("value" if f == "completed" else f)] = getattr(e, f)
            if hasattr(e, "via"):
                vals["via"] = VIA.get(e.via, -1)
            if hasattr(e, "result"):
                vals["value"] = int(e.result)
            if hasattr(e, "pending"):
                vals["value"] = int(e.pending)
            # lists are fields too: a cancelForKey's k-th returned op, a watch's m-th key
            if isinstance(e, ev.CancelForKey):
                for k, op in enumerate(e.ops):
                    vals[f"op{k}"] = op
            if isinstance(e, (ev.CheckAndComplete, ev.CancelForKey)):
                vals["key"] = self.keys.setdefault(e.key, len(self.keys))
            if isinstance(e, (ev.TryCompleteElseWatch, ev.Resubmit)):
                for m, key in enumerate(e.keys):
                    vals[f"wkey{m}"] = self.keys.setdefault(key, len(self.keys))
            if isinstance(e, (ev.SetCompletable, ev.Observe)):
                vals["value"] = int(e.value)
            if isinstance(e, ev.Observe):
                vals["what"] = WHAT.get(e.what, -1)
            if isinstance(e, ev.Purge):
                vals["value"] = e.delayed
            for name, v in vals.items():
                self.facts.append(z3.Implies(lab, self.f(name, i) == v))

    def closing(self, j: int) -> int:
        """The index of the request whose result closes the window event ``j`` is in."""
        k = j
        while k < len(self.events) and isinstance(self.events[k], ev.CAUSED):
            k += 1
        return k

    def cancels(self, k: int, c: int) -> z3.BoolRef:
        """Event ``k`` is a cancelForKey that named the operation of event ``c``."""
        return z3.And(self.kind(k, ev.CancelForKey), self.names(k, c))

    def names(self, b: int, a: int) -> z3.BoolRef:
        """Event ``b``'s list of operations (a cancelForKey's result) names the operation of ``a``
        (the list's length is structure; its entries are ``b``'s labelled fields)."""
        n = len(self.events[b].ops) if isinstance(self.events[b], ev.CancelForKey) else 0
        return z3.Or([self.f("id", a) == self.f(f"op{k}", b) for k in range(n)] or [z3.BoolVal(False)])

    def watches(self, a: int, b: int) -> z3.BoolRef:
        """Event ``a`` (a watch) has among its keys the key of event ``b`` (a check or cancelForKey)."""
        n = len(self.events[a].keys) if isinstance(self.events[a], (ev.TryCompleteElseWatch, ev.Resubmit)) else 0
        return z3.Or([self.f(f"wkey{m}", a) == self.f("key", b) for m in range(n)] or [z3.BoolVal(False)])

    @staticmethod
    def f(name: str, i: int) -> z3.ArithRef:
        return z3.Int(f"{name}@{i}")

    def kind(self, i: int, cls: type) -> z3.BoolRef:
        return self.f("kind", i) == KINDS[cls]


def makes_schedule(w: Window, p: Profile, a: int) -> z3.BoolRef:
    """Event ``a`` makes a schedule (strict-gt: an add with delay <= 0 makes none)."""
    if p.fires_inside_add:
        return z3.And(w.kind(a, ev.Add), w.f("delay", a) > 0)
    return w.kind(a, ev.Add)
