"""An in-process adapter's malformed answer is one line naming the adapter, the op number and the
field (exit 2), as a subprocess adapter's malformed line is: never a traceback, never a verdict."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from conftest import user_module

from wheelspec.conformance.cli import main

#: The reference, whose answer to the first add is replaced by a malformed one (MODE picks how;
#: "ok" keeps it).
BAD = textwrap.dedent('''
    import dataclasses
    from wheelspec.conformance.adapters import reference_adapter
    from wheelspec.conformance.adapters.protocol import Response
    from wheelspec.spec import ops

    class _Payload:
        pass

    MODES = {
        "ok": lambda r: r,
        "result-type": lambda r: dataclasses.replace(r, result="x"),
        "now-str": lambda r: dataclasses.replace(r, now="7"),
        "now-bool": lambda r: dataclasses.replace(r, now=True),
        "event-dict": lambda r: dataclasses.replace(r, events=[{"kind": "fire"}]),
        "events-not-list": lambda r: dataclasses.replace(r, events=7),
        "none": lambda r: None,
        "error-pair": lambda r: Response(error=("invalid", 3)),
        "error-type": lambda r: Response(error=("nope", "no")),
        "error-shape": lambda r: Response(error="broken"),
        "object": lambda r: _Payload(),
    }

    class Bad:
        def __init__(self, mode):
            self.inner, self.mode, self.done = reference_adapter(), mode, False

        def hello(self):
            return dataclasses.replace(self.inner.hello(), name="bad-" + self.mode)

        def reset(self, config):
            self.inner.reset(config)

        def request(self, op):
            r = self.inner.request(op)
            if self.done or not isinstance(op, ops.AddTask):
                return r
            self.done = True
            return MODES[self.mode](r)

        def close(self):
            self.inner.close()

    def factory(mode):
        return lambda: Bad(mode)

    for _m in MODES:
        globals()[_m.replace("-", "_")] = factory(_m)
''')

#: mode -> the field the error line names
FIELDS = {"result-type": "result of 'add' must be an integer", "now-str": 'integer "now"',
          "now-bool": 'integer "now"', "event-dict": "events[0] must be an event",
          "events-not-list": "events must be a list", "none": "the answer must be a Response, got NoneType",
          "error-pair": "error response needs", "error-type": "error response needs",
          "error-shape": "error must be a (type, message) pair", "object": "the answer must be a Response"}


@pytest.fixture
def bad(tmp_path, monkeypatch):
    return user_module(tmp_path, monkeypatch, "bad_adapter", BAD)


@pytest.mark.parametrize("mode", sorted(FIELDS))
def test_a_malformed_answer_is_one_line_naming_op_and_field(tmp_path: Path, bad: str, mode: str, capsys) -> None:
    j = tmp_path / "r.json"
    code = main(["check", "--impl", f"{bad}:{mode.replace('-', '_')}", "--no-corpus", "--schedules", "3",
                 "--kinds", "timer", "--json", str(j), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.match(rf"wheelspec check: error: adapter 'bad-{mode}': op \d+ \(add\): ", lines[0]), lines[0]
    assert FIELDS[mode] in lines[0], lines[0]
    (impl,) = json.loads(j.read_text())["implementations"]
    assert impl["status"] == "error" and impl["campaign"]["schedules"] == 0


def test_well_formed_answers_pass_the_check(tmp_path: Path, bad: str, capsys) -> None:
    """The reference's own answers, given by an adapter the runner checks, are not refused."""
    code = main(["check", "--impl", f"{bad}:ok", "--schedules", "30", "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err


#: A simulation-shaped engine (wrapped by the runner in SimulationAdapter) whose first add logs a
#: stray dict among its events.
ENGINE = textwrap.dedent('''
    from wheelspec.reference import Simulation
    from wheelspec.spec import ops

    class Stray(Simulation):
        def apply(self, op):
            out = super().apply(op)
            if isinstance(op, ops.AddTask) and not getattr(self, "_strayed", False):
                self._strayed = True
                self.history.events.insert(len(self.history.events) - 1, {"kind": "fire"})
            return out

    def factory(**cfg):
        return Stray(**cfg)
''')


def test_a_users_engine_wrapped_by_the_runner_is_checked_too(tmp_path: Path, monkeypatch, capsys) -> None:
    engine = user_module(tmp_path, monkeypatch, "stray_engine", ENGINE)
    code = main(["check", "--impl", f"{engine}:factory", "--no-corpus", "--schedules", "3", "--kinds", "timer",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert re.match(r"wheelspec check: error: adapter 'stray_engine:factory': op \d+ \(add\): events\[0\] must be "
                    r"an event", err), err
