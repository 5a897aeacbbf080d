"""Issue #43's engine round 17: what a table or a scenario does not use costs nothing, and every faster form gives
exactly what the form it replaced gave (no timed tests).

- a table whose throughputs are all measured attaches no estimate's range row by row
  (:func:`economics.engine.estimate_range._attach_none`): the same columns the general path gives its measured rows;
- an absent id, hash or hourly field of a table keeps its default's categorical through validation
  (:func:`economics.schema.validation._rows_of`): the same texts as the object array it replaced, row for row;
- a text, whole number or flag is parsed once per field and value (:func:`economics.schema.values.for_model`):
  the parser's value or its error, every time;
- one scenario's estimate is remembered with its range, only the columns they wrote copied back;
- a table whose fleets are all feasible gets its empty ``infeasible_reason`` without a pass over the rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticCustomError, PydanticUseDefault

import economics
from economics.engine import batch, estimate_range
from economics.engine.estimate import fill_throughput
from economics.engine.measured import SOURCE_ESTIMATE
from economics.schema import values
from economics.schema.scenario import FIELDS
from economics.schema.validation import SMALL, _distinct_text, _rows_of, validate
from tests.test_derivation import rows


def _resolved(table: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    cols, problems = validate(table)
    assert not problems, problems
    thr = fill_throughput(cols)
    return cols, thr


RANGE_KEYS_C = ("_range_median", "_range_step", "_ranged", "_throughput_unseen", "_class_mismatch",
                *(c for pair in estimate_range.RANGE_COLUMNS.values() for c in pair))
RANGE_KEYS_THR = ("throughput_basis", "output_tokens_per_s_per_accelerator_p10",
                  "output_tokens_per_s_per_accelerator_p90")


def test_a_table_without_estimates_attaches_what_its_measured_rows_get_beside_an_estimate() -> None:
    measured = [{"accelerator": a, "output_tokens_per_s_per_accelerator": 900.0 + i, "accelerator_count": 8}
                for i, a in enumerate(["h100-sxm", "b200", "a100-sxm"] * 7)]
    estimated = {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8}
    mixed = pd.DataFrame([*measured, estimated])
    plain = pd.DataFrame(measured).assign(model="", precision="fp8")  # the same columns, no row estimated
    cols, thr = _resolved(mixed)
    est = thr["throughput_source"] == SOURCE_ESTIMATE
    assert est.tolist() == [False] * len(measured) + [True]
    estimate_range.attach(cols, thr, est)  # the general path: the measured rows beside one estimate
    alone, alone_thr = _resolved(plain)
    none = alone_thr["throughput_source"] == SOURCE_ESTIMATE
    assert not none.any()
    estimate_range.attach(alone, alone_thr, none)  # the path without an estimate
    n = len(measured)
    for key in RANGE_KEYS_C:
        want, got = np.asarray(cols[key])[:n], np.asarray(alone[key])
        assert got.dtype == want.dtype, key
        assert [str(x) for x in got] == [str(x) for x in want], key  # str: NaN equal to NaN
    for key in RANGE_KEYS_THR:
        want, got = np.asarray(thr[key])[:n], np.asarray(alone_thr[key])
        assert got.dtype == want.dtype and [str(x) for x in got] == [str(x) for x in want], key
    # worked by hand: no range anywhere, ratio 1, no label, no flag
    assert np.asarray(alone["_ranged"]).tolist() == [False] * n
    assert np.asarray(alone[estimate_range.RANGE_COLUMNS["output_tokens_per_s_per_accelerator"][0]]).tolist() == [
        1.0] * n
    assert alone_thr["throughput_basis"].tolist() == [""] * n


TEXTS = st.lists(st.sampled_from(["", "best", "h100-sxm", "B200 ", "b200", "flat"]), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(TEXTS, st.lists(st.integers(-1, 4), min_size=SMALL + 1, max_size=60))
def test_an_absent_fields_texts_are_the_object_arrays_texts(texts: list[str], picks: list[int]) -> None:
    table = np.array([*texts, ""], dtype=object)  # as _distinct_text gives them: the last for a missing cell
    codes = np.array([p if p < len(texts) else -1 for p in picks], dtype=np.int8)
    like = pd.Categorical.from_codes(np.zeros(len(picks), dtype=np.int8), pd.Index([""]))
    got = _rows_of(codes, table, like)
    want = table[codes]
    assert isinstance(got, pd.Categorical)
    assert np.asarray(got, dtype=object).tolist() == want.tolist()
    assert sorted(got.categories) == sorted(set(want.tolist()))  # the texts used, each once
    # a column given as cells in a table past SMALL rows is held the same way; a small table's stays an object array
    given = _rows_of(codes, table, want)
    assert isinstance(given, pd.Categorical) and np.asarray(given, dtype=object).tolist() == want.tolist()
    small = pd.Categorical.from_codes(np.zeros(SMALL, dtype=np.int8), pd.Index([""]))
    assert isinstance(_rows_of(codes[:SMALL], table, small), np.ndarray)
    assert isinstance(_rows_of(codes[:SMALL], table, want[:SMALL]), np.ndarray)


@settings(max_examples=100, deadline=None)
@given(TEXTS, st.lists(st.integers(-1, 4), min_size=SMALL + 1, max_size=60))
def test_a_categorical_text_column_is_the_result_column_of_its_object_array(texts: list[str],
                                                                             picks: list[int]) -> None:
    """The result's text column made from validation's categorical (its codes renumbered) is the column the
    object array of the same texts gives (factorized): the same categories in the same order, dtype and codes."""
    table = np.array([*texts, ""], dtype=object)
    codes = np.array([p if p < len(texts) else -1 for p in picks], dtype=np.int8)
    got = batch._text(_rows_of(codes, table, table[codes]))
    want = batch._text(table[codes])
    assert got.categories.dtype == want.categories.dtype == object
    assert got.categories.tolist() == want.categories.tolist()
    assert got.codes.dtype == want.codes.dtype and got.codes.tolist() == want.codes.tolist()


def test_a_tables_choice_column_worked_by_hand() -> None:
    """A given ownership column past SMALL rows is validated once per distinct cell into a categorical: ' Rent '
    read as 'rent', an empty cell as the default 'own', 'lease' refused (held as the default meanwhile)."""
    cells = [" Rent ", None, "own", "lease"] * 5  # 20 rows > SMALL
    table = pd.DataFrame({"ownership": cells, "accelerator_count": [8] * 20,
                          "output_tokens_per_s_per_accelerator": [1000.0] * 20})
    cols, problems = validate(table)
    assert isinstance(cols["ownership"], pd.Categorical)
    assert np.asarray(cols["ownership"], dtype=object).tolist() == ["rent", "own", "own", "own"] * 5
    assert [(p.row, p.field) for p in problems] == [(r, "ownership") for r in range(3, 20, 4)]
    out = economics.evaluate(table)["ownership"]
    # the result: categories in order of first appearance (row 0 'rent', row 1 'own'); refused rows echo 'lease'
    assert out.cat.categories.tolist() == ["rent", "own", "lease"]
    assert out.tolist() == [" Rent ".strip().lower(), "own", "own", "lease"] * 5


def test_an_absent_fields_default_worked_by_hand() -> None:
    like = pd.Categorical.from_codes(np.zeros(20, dtype=np.int8), pd.Index([""]))
    codes, texts = _distinct_text(like)
    stacks = _rows_of(codes, np.where(texts == "", "best", texts), like)
    assert stacks.categories.tolist() == ["best"] and set(stacks) == {"best"} and len(stacks) == 20


def _same(a: Any, b: Any) -> bool:
    if a is pd.NA or b is pd.NA:
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])  # a failure is reported as drawn: each draw is slow
@given(st.lists(rows(), min_size=SMALL + 1, max_size=SMALL + 4))
def test_a_table_over_small_gives_each_row_what_its_one_row_table_gives(scenarios: list[dict[str, Any]]) -> None:
    """Past :data:`SMALL` rows the absent text fields stay categoricals through the engine; one-row tables take the
    object arrays: every cell the same (of the columns the one-row table echoes)."""
    table = pd.DataFrame(scenarios)
    whole = economics.evaluate(table).astype(object)  # each column's cells as objects once, not once a row
    for i in range(len(table)):
        alone = economics.evaluate(table.iloc[[i]]).astype(object)
        for name in alone.columns:
            a, b = whole[name].iat[i], alone[name].iat[0]
            assert _same(a, b), (i, name, a, b)


def test_a_tables_empty_reasons_are_the_text_column() -> None:
    table = pd.DataFrame({"accelerator_count": [8] * 20, "output_tokens_per_s_per_accelerator": [1000.0] * 20})
    reason = economics.evaluate(table)["infeasible_reason"]
    want = batch._text(np.full(20, "", dtype=object))
    assert reason.dtype == pd.Series(want).dtype and reason.tolist() == [""] * 20
    # a row with an infeasible fleet (a site too small) keeps its sentence, the others empty
    tight = table.assign(site_power_mw=[1e-3] + [None] * 19)
    out = economics.evaluate(tight)
    assert out["feasible"].tolist() == [False] + [True] * 19
    assert out["infeasible_reason"].iloc[0] != "" and set(out["infeasible_reason"][1:]) == {""}
    assert economics.evaluate(table.iloc[:0])["infeasible_reason"].tolist() == []


CELLS = [("ownership", "own"), ("ownership", "rent"), ("ownership", " Rent "), ("ownership", "lease"),
         ("accelerator_count", 8), ("accelerator_count", 0), ("accelerator_count", True),
         ("accelerator", "H100-SXM"), ("accelerator", ""), ("model", "llama-3.1-70b"),
         ("rent_includes_energy", "f"), ("rent_includes_energy", True), ("rent_includes_energy", 2),
         ("facility_cooling", "liquid"), ("facility_cooling", "water"), ("round_to_whole_systems", 1),
         ("name", "x" * 300), ("name", "  a  ")]


def _parsed(name: str, value: Any) -> tuple[str, Any]:
    try:
        return "value", values.for_model(FIELDS[name], value)
    except PydanticCustomError as exc:
        return "error", str(exc)
    except PydanticUseDefault:
        return "default", None


@pytest.mark.parametrize(("name", "value"), CELLS)
def test_a_remembered_parse_is_the_parsers_every_time(name: str, value: Any) -> None:
    values._PARSED.clear()
    first, second = _parsed(name, value), _parsed(name, value)
    assert first == second
    try:
        want = values.parse(FIELDS[name], value)
    except (values.ValueProblem, values.CellTypeError) as exc:
        assert first == ("error", str(exc))
        return
    if want is values.EMPTY:
        assert first[0] in ("default", "value") and first[1] is None
    else:
        assert first == ("value", want) and type(first[1]) is type(want)


def test_a_remembered_parse_is_per_field_type_and_value() -> None:
    values._PARSED.clear()
    assert _parsed("accelerator_count", True) == _parsed("accelerator_count", True)
    # 1 and True hash alike: each is parsed as itself, for each field
    assert _parsed("round_to_whole_systems", 1) == ("value", True)
    assert _parsed("accelerator_count", 1) == ("value", 1)
    assert _parsed("round_to_whole_systems", True) == ("value", True)
    assert _parsed("accelerator", "B200") == ("value", "b200")
    assert _parsed("name", "B200") == ("value", "B200")  # a name keeps its case: another field, another entry
    for i in range(values.PARSED_AT_MOST + 5):  # bounded: it starts again rather than growing
        values.for_model(FIELDS["name"], f"n{i}")
    assert len(values._PARSED) <= values.PARSED_AT_MOST


def test_a_remembered_estimate_writes_back_only_what_it_wrote() -> None:
    scenario = economics.Scenario().model_dump() | {"model": "llama-3.1-70b", "precision": "fp8",
                                                      "output_tokens_per_s_per_accelerator": None,
                                                      "accelerator_count": 8}
    batch._estimated.cache_clear()
    first = economics.evaluate_scenario(scenario)
    again = economics.evaluate_scenario(scenario | {"price_usd_per_m_output_tokens": 2.0})
    assert batch._estimated.cache_info().hits >= 1
    assert first["output_tokens_per_s_per_accelerator"] == again["output_tokens_per_s_per_accelerator"] > 0
    assert first["output_tokens_per_s_per_accelerator_p10"] == again["output_tokens_per_s_per_accelerator_p10"]
    cols = batch._validated(economics.Scenario.model_validate(scenario))
    filled, _ = batch._estimated(tuple((f, batch._plain(cols[f][0])) for f in batch.ESTIMATE_READS))
    assert "output_tokens_per_s_per_accelerator" in filled and "_ranged" in filled
    assert "electricity_usd_per_kwh" not in filled  # not read by the estimate at all
    assert "accelerator" not in filled and "model" not in filled  # read and kept: the row holds them already
