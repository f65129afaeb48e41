"""The property registry (``wheelspec.spec.properties``) lists every place a rule lives: each
form's entry points resolve, and every property has an entry for every judging form."""

from __future__ import annotations

import importlib

import pytest

from wheelspec.spec import properties
from wheelspec.spec.properties import JUDGED_BY, Judged, NotJudged


def resolve(path: str) -> object:
    """The object a dotted path names: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(path)


@pytest.mark.parametrize("form", properties.JUDGING_FORMS + properties.ENGINE_FORMS, ids=lambda f: f.name)
def test_every_entry_point_resolves(form):
    for path in form.entries:
        assert resolve(path) is not None, path


def test_every_property_has_an_entry_for_every_judging_form():
    forms = {f.name for f in properties.JUDGING_FORMS}
    assert set(JUDGED_BY) == {(p.judge, p.name) for p in properties.PROPERTIES}
    for key, entries in JUDGED_BY.items():
        assert set(entries) == forms, key
        assert all(isinstance(e, (Judged, NotJudged)) for e in entries.values()), key
        assert any(isinstance(e, Judged) for e in entries.values()), f"{key} is judged by no form"
        assert all(e.why for e in entries.values() if isinstance(e, NotJudged)), key


def test_every_property_has_its_engines():
    engines = {f.name for f in properties.ENGINE_FORMS}
    assert set(properties.ENGINES) == set(JUDGED_BY)
    for key, names in properties.ENGINES.items():
        assert names and set(names) <= engines, key


def test_the_trace_analysis_not_judged_list_is_the_registry_s():
    local = properties.judged_by("local")
    assert set(properties.names(properties.HISTORY)) - set(local) == set(properties.NOT_JUDGED_BY_TRACE)
    assert properties.judged_by("spark") == local


def test_a_property_added_without_its_forms_fails(monkeypatch):
    """What the registry's own check and the test above do with a property nobody placed."""
    extra = properties.Property("no-such-rule", properties.HISTORY, "a rule", "nowhere")
    monkeypatch.setattr(properties, "PROPERTIES", properties.PROPERTIES + (extra,))
    with pytest.raises(AssertionError):
        test_every_property_has_an_entry_for_every_judging_form()
