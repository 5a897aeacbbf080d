"""One scenario's parse and checks remembered (issue #43, branch engine1) give exactly what running them gives (no
timed tests: each remembered form is held to the run it stands for, bit for bit).

- :func:`economics.schema.known_values.scenario_of`: a dict whose every value the model has read before is the
  model pydantic builds from it (the same values, types and fields given), and a dict it cannot vouch for is left
  to pydantic;
- :func:`economics.schema.validation.validate_one` remembers its checks per value of the fields they read
  (:class:`economics.schema.read_memo.ReadMemo`): a scenario alike in those fields gets the columns and problems
  the checks give it when run.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics.engine.batch import ScenarioError, as_scenario, evaluate_scenario
from economics.schema import known_values, read_memo, validation
from economics.schema.scenario import FIELDS, Scenario
from economics.schema.values import FieldKind


def _values_of(name: str) -> list[Any]:
    """A field's values worth trying: valid, at and past its bounds, of other types, empty, malformed."""
    spec = FIELDS[name]
    if spec.kind is FieldKind.FLOAT:
        edges = [b for b in (spec.ge, spec.gt, spec.le, spec.lt) if b is not None]
        return [None, 0.0, -0.0, 0.5, 1.5, 3, 1e300, math.nan, math.inf, -1.0, "2.5", "", "x", True,
                *edges, *[b + 1e-9 for b in edges], *[b - 1e-9 for b in edges]]
    if spec.kind is FieldKind.INT:
        return [None, 0, 1, 8, 8.0, 1.5, -3, "8", "", True, 1e30]
    if spec.kind is FieldKind.BOOL:
        return [None, True, False, "yes", "no", 1, 0, 2, "maybe"]
    if spec.kind is FieldKind.CHOICE:
        return [None, "", *spec.choices, f" {spec.choices[0].upper()} ", "bogus", 1.0]
    return [None, "", "h100-sxm", " B200 ", "llama-3.1-70b", "flat", "diurnal", "x" * 2100, 3]


NAMES = sorted(FIELDS)


def _dicts() -> st.SearchStrategy[dict[str, Any]]:
    field = st.sampled_from(NAMES).flatmap(lambda n: st.tuples(st.just(n), st.sampled_from(_values_of(n))))
    return st.lists(field, max_size=12).map(dict)


def _same_model(got: Scenario, want: Scenario) -> None:
    assert list(got.__dict__) == list(want.__dict__)
    for name, v in want.__dict__.items():
        g = got.__dict__[name]
        assert type(g) is type(v) and (g == v or (g != g and v != v)), name
        if type(v) is float:
            assert math.copysign(1.0, g) == math.copysign(1.0, v), name
    assert got.model_fields_set == want.model_fields_set


@settings(max_examples=200, deadline=None)
@given(_dicts(), _dicts())
def test_a_known_scenario_is_pydantics(first: dict[str, Any], second: dict[str, Any]) -> None:
    """After any dict was read (``first``), a dict (``second``, and ``first`` again) reads as pydantic reads it:
    the same model, or a ScenarioError where pydantic refuses it."""
    for given_ in (first, second, first, second):
        try:
            want = Scenario.model_validate(given_)
        except ValueError:
            with pytest.raises(ScenarioError):
                as_scenario(dict(given_))
            continue
        _same_model(as_scenario(dict(given_)), want)
        known = known_values.scenario_of(given_)
        assert known is not None  # read once, so known: the remembered path is the one tested
        _same_model(known, want)


def test_a_known_scenario_leaves_the_rest_to_pydantic() -> None:
    as_scenario({"pue": 1.2, "accelerator": "b200"})
    assert known_values.scenario_of({"pue": 1.2, "accelerator": "b200"}) is not None
    for unknown in ({"pue": 0.5}, {"pue": math.inf}, {"pue": math.nan}, {"not_a_field": 1.0},
                    {"accelerator": "never-seen-before"}, {"accelerator": ["b200"]}):
        assert known_values.scenario_of(unknown) is None


def _same_columns(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for name, w in want.items():
        g = got[name]
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape, name
        assert (g.tolist() == w.tolist()) if w.dtype.kind == "O" else g.tobytes() == w.tobytes(), name


CHANGES = {
    "accelerator": ["h100-sxm", "b200", "mi300x", " H200-SXM ", "gb200-nvl72", "nonesuch"],
    "decode_accelerator": [None, "b200", "h100-sxm"],
    "model": [None, "llama-3.1-70b", "qwen3-32b", "nonesuch"],
    "precision": ["bf16", "fp8", "fp4"],
    "weight_precision": [None, "fp4", "fp8"],
    "workload": ["requests", "sessions"],
    "accelerator_power_kw": [None, 1.0, 2.5],
    "accelerator_price_usd": [None, 20000.0],
    "grid_region": [None, "us-ca", "nonesuch"],
    "grid_carbon_g_per_kwh": [None, 300.0],
    "carbon_usd_per_tonne": [None, 0.0, 50.0],
    "demand_profile": ["flat", "diurnal", " Diurnal ", "1,2,3", "bad"],
    "peak_to_average": [1.0, 1.5, 3.0],
    "serving_stack": [None, "best", "vllm", "nonesuch"],
    "speculative_draft_tokens": [None, 0.0, 3.0],
    "speculative_acceptance_rate": [None, 0.7],
    "demand_sessions_per_day": [None, 1e5],
    "demand_output_tokens_per_day": [None, 1e9],
    "electricity_usd_per_kwh": [0.0, -0.0, 0.08, 0.2],
    "price_usd_per_m_output_tokens": [None, 0.0, 1.0, 2.5],
    "target_output_tokens_per_s_per_user": [None, 20.0, 50.0],
    "accelerator_count": [None, 8, 64],
}


def _changes() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(sorted(CHANGES)), st.none(), max_size=6).flatmap(
        lambda picked: st.fixed_dictionaries({k: st.sampled_from(CHANGES[k]) for k in picked}))


def _parsed(changes: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return Scenario.model_validate(changes).__dict__
    except ValueError:
        return None


@settings(max_examples=150, deadline=None)
@given(st.lists(_changes(), min_size=2, max_size=4))
def test_remembered_checks_are_the_checks(scenarios: list[dict[str, Any]]) -> None:
    """Each scenario of a sequence (the earlier ones remembered) is validated as the checks validate it when run:
    the same columns (order, dtypes, bytes) and the same problems."""
    for changes in scenarios:
        parsed = _parsed(changes)
        if parsed is None:
            continue
        want, problems = validation._checked_one(validation._one_row(parsed))
        got, got_problems = validation.validate_one(parsed)
        _same_columns(got, dict(dict.items(want)))
        assert got_problems == problems


def test_a_price_edit_takes_the_checks_back() -> None:
    """A field no check reads (a price) is not part of what is remembered: the second scenario is found."""
    base = Scenario(model="llama-3.1-70b", accelerator_count=8).__dict__
    validation.validate_one(base)
    edited = base | {"price_usd_per_m_output_tokens": 3.25}
    assert validation._ONE_SEEN.find(edited) is not None
    assert validation._ONE_SEEN.find(base | {"accelerator": "b200"}) is None


def test_a_recording_reads_and_walks() -> None:
    columns = read_memo.Recording({"a": 1, "b": 2})
    assert columns["a"] == 1 and columns.get("c") is None and "b" in columns
    assert list(columns.read) == ["a", "c", "b"] and not columns.whole
    list(columns.items())
    assert columns.whole


def test_a_run_that_walks_every_column_is_not_remembered() -> None:
    memo = read_memo.ReadMemo()
    before = {"a": np.array([1.0]), "b": np.array([2.0])}
    after = read_memo.Recording(before)
    after["b"] = after["a"] * 2
    assert list(after.keys()) == ["a", "b"]  # a walk over every column
    memo.keep({"a": 1.0}, before, after)
    assert memo.find({"a": 1.0}) is None
    after.whole = False
    memo.keep({"a": 1.0}, before, after)
    found = memo.find({"a": 1.0, "b": 5.0})
    assert found is not None and found["b"].tolist() == [2.0] and found["b"] is not dict.__getitem__(after, "b")
    assert memo.find({"a": -1.0}) is None


def test_evaluate_scenario_remembered_equals_a_fresh_process_order() -> None:
    """The app's sequence (a scenario, a price edit, a new accelerator, back): each result as the same scenario
    gives when its checks run (validate_one's memory emptied before it)."""
    base = {"model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8}
    steps = [base, base | {"price_usd_per_m_output_tokens": 2.0}, base | {"accelerator": "b200"},
             base | {"price_usd_per_m_output_tokens": 2.5}, base]
    remembered = [evaluate_scenario(s) for s in steps]
    fresh = []
    for s in steps:
        validation._ONE_SEEN.__init__()  # the memory emptied: this scenario's checks run
        fresh.append(evaluate_scenario(s))
    for r, f in zip(remembered, fresh, strict=True):
        assert list(r) == list(f)
        assert all(r[k] == f[k] or (r[k] != r[k] and f[k] != f[k]) for k in r)
