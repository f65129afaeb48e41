"""spec/api.py: the reference, the optimized engine and the step model have the per-operation API's
shape -- the same method names, parameter names, kinds and defaults (a renamed parameter fails)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from wheelspec.spec import api, ops
from wheelspec.spec.errors import RangeError


def _protocol_methods(proto: type) -> dict[str, Any]:
    """The methods a Protocol declares (its own and inherited from Protocol bases), by name."""
    out: dict[str, Any] = {}
    for klass in reversed(proto.__mro__):
        if klass is object or not getattr(klass, "_is_protocol", False) or klass.__module__ == "typing":
            continue
        for name, v in vars(klass).items():
            if inspect.isfunction(v) and not name.startswith("_"):
                out[name] = v
    return out


def _params(fn: Any, drop: int) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of ``fn``'s parameters after ``self`` and ``drop`` leading ones."""
    ps = list(inspect.signature(fn).parameters.values())[1 + drop:]
    return [(p.name, p.kind, p.default) for p in ps]


def mismatches(cls: type, proto: type = api.PerOperationAPI, leading: tuple[str, ...] = ()) -> list[str]:
    """Where ``cls`` differs from ``proto``: a missing method, other parameters, no ``now`` property,
    other shared constructor parameters.  ``leading``: parameters every method of ``cls`` takes
    first (the step model's ``ctx``)."""
    out = []
    for name, want in _protocol_methods(proto).items():
        have = getattr(cls, name, None)
        if have is None or not callable(have):
            out.append(f"{cls.__name__}.{name}: missing")
            continue
        head = list(inspect.signature(have).parameters)[1:1 + len(leading)]
        if head != list(leading):
            out.append(f"{cls.__name__}.{name}: leading parameters {head}, expected {list(leading)}")
            continue
        if _params(have, len(leading)) != _params(want, 0):
            out.append(f"{cls.__name__}.{name}{inspect.signature(have)} != {name}{inspect.signature(want)}")
    if not isinstance(inspect.getattr_static(cls, "now", None), property):
        out.append(f"{cls.__name__}.now: not a property")
    init = [(n, d) for n, _, d in _params(cls.__init__, 0)][: len(api.CONSTRUCTOR)]
    if init != list(api.CONSTRUCTOR):
        out.append(f"{cls.__name__}.__init__: shared parameters {init}, expected {list(api.CONSTRUCTOR)}")
    return out


def _reference() -> Any:
    from wheelspec.reference import Simulation
    return Simulation


def _optimized() -> Any:
    from wheelspec.optimized import Simulation
    return Simulation


def _steps() -> Any:
    from wheelspec.reference.steps import StepSimulation
    return StepSimulation


IMPLS = {"reference": (_reference, ()), "optimized": (_optimized, ()), "steps": (_steps, ("ctx",))}


@pytest.mark.parametrize("impl", IMPLS)
def test_signatures_match_the_protocol(impl: str) -> None:
    load, leading = IMPLS[impl]
    assert mismatches(load(), leading=leading) == []


@pytest.mark.parametrize("impl", IMPLS)
def test_instances_satisfy_the_protocol(impl: str) -> None:
    load, _ = IMPLS[impl]
    sim = load()()
    try:
        assert isinstance(sim, api.PerOperationAPI)
        if impl != "steps":  # the step model records into .events, and has nothing to close
            assert isinstance(sim, api.RecordingSimulation)
            assert mismatches(type(sim), api.RecordingSimulation) == []
    finally:
        if hasattr(sim, "close"):
            sim.close()


def test_every_operation_names_a_method_of_the_protocol() -> None:
    methods = _protocol_methods(api.PerOperationAPI)
    for op_cls, name in ops.METHODS.items():
        assert name in methods, f"{op_cls.__name__} names {name!r}, which the Protocol lacks"
        params = _params(methods[name], 0)
        fields = dataclasses.fields(op_cls)
        required = [p for p in params if p[2] is inspect.Parameter.empty]
        assert len(required) <= len(fields) <= len(params), (op_cls.__name__, name)


def test_a_renamed_parameter_or_missing_method_is_caught() -> None:
    Simulation = _reference()

    class Renamed(Simulation):  # type: ignore[misc, valid-type]  # a base class looked up at run time
        def add(self, task: int, delay_ms: int) -> int:  # 'task' instead of 'task_id'
            return super().add(task, delay_ms)

    class NoDefault(Simulation):  # type: ignore[misc, valid-type]  # a base class looked up at run time
        def set_completable(self, op_id: int, value: bool) -> None:
            super().set_completable(op_id, value)

    class OtherInit(Simulation):  # type: ignore[misc, valid-type]  # a base class looked up at run time
        def __init__(self, wheel_size: int = 20, tick_ms: int = 1) -> None:
            super().__init__(tick_ms, wheel_size)

    assert any("add" in m for m in mismatches(Renamed))
    assert any("set_completable" in m for m in mismatches(NoDefault))
    assert any("__init__" in m for m in mismatches(OtherInit))
    assert any("leading" in m for m in mismatches(Simulation, leading=("ctx",)))

    class Partial:
        tick_ms = 1

        def add(self, task_id: int, delay_ms: int) -> int:
            return 0

    assert not isinstance(Partial(), api.PerOperationAPI)
    assert any("cancel: missing" in m for m in mismatches(Partial))



BAD_CONFIGS = {
    "profile strict": ({"profile": "strict"}, ValueError),
    "tick 0": ({"tick_ms": 0}, RangeError),
    "bool wheel size": ({"wheel_size": True}, TypeError),
    "negative start": ({"start_ms": -1}, RangeError),
    "negative purge interval": ({"purge_interval": -1}, RangeError),
    "unknown size rule": ({"mock_size": "nope"}, ValueError),
    "int flag": ({"try_complete_events": 1}, TypeError),
}
ENGINE_NAMES = {"reference": "the reference", "optimized": "the optimized engine", "steps": "the step model"}


@pytest.mark.parametrize("case", BAD_CONFIGS)
def test_every_engine_refuses_a_bad_constructor_argument_alike(case: str) -> None:
    """The shared constructor checks (spec/simulation.py): the same error type and message from
    every engine, but for the engine's name."""
    kwargs, error = BAD_CONFIGS[case]
    messages = set()
    for impl, (load, _) in IMPLS.items():
        with pytest.raises(error) as info:
            load()(**kwargs)
        messages.add(str(info.value).replace(ENGINE_NAMES[impl], "ENGINE"))
    assert len(messages) == 1, messages


def test_the_locked_facade_offers_every_request() -> None:
    from wheelspec.optimized import LockedSimulation

    for name in (*ops.METHODS.values(), "apply", "set_purge_point", "close"):
        assert callable(getattr(LockedSimulation, name, None)), name
