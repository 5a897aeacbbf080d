"""A large table's memory (issue #43): ``evaluate(df)`` computes it in slices of rows, and every column empty on all
rows is one shared column, without changing a value.

- sliced == whole: random tables of varied scenarios (measured and estimated, a decode pool, sessions, hours,
  carbon, tiers, ranges, invalid rows) give the same frame at every slice size, the features' rows on either side
  of a slice's edge (an output empty in the first slices and not in a later one included);
- slices on threads == slices in turn, bit for bit (every cell's bytes, the values under a ``<NA>`` included);
- an output or an echoed input empty on every row is a view of one column per dtype (no memory per column), with
  the dtype and the ``<NA>`` it had, and a write to it changes that column alone (pandas' copy-on-write).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
import economics.engine.batch as batch

MEASURED = {"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000.0}
SESSION = {"workload": "sessions", "turns_per_session": 4, "session_prefix_tokens": 1000, "input_tokens_per_turn": 500,
           "output_tokens_per_turn": 100, "seconds_between_turns": 60, "demand_sessions_per_day": 100_000,
           "kv_host_memory_gb_per_system": 1000, "kv_host_read_gb_per_s": 400, "kv_host_memory_usd_per_gb": 3}
POOL: list[dict[str, Any]] = [
    MEASURED,
    {**MEASURED, "demand_output_tokens_per_day": 345.6e6, "price_usd_per_m_output_tokens": 2.0},
    {"output_tokens_per_s_per_accelerator": 1500.0, "demand_output_tokens_per_day": 5e9, "ownership": "rent",
     "accelerator": "a100-sxm"},
    {"model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8},
    {"model": "llama-3.1-70b", "precision": "fp8", "decode_accelerator": "b200", "demand_output_tokens_per_day": 1e9},
    {"model": "llama-3.1-8b", "accelerator": "a100-sxm", "precision": "bf16", "demand_output_tokens_per_day": 5e9,
     "ownership": "rent", "rent_tier": "spot", "target_output_tokens_per_s_per_user": 50.0},
    {"model": "qwen3-32b", "accelerator": "b200", "precision": "fp8", "grid_region": "de",
     "carbon_usd_per_tonne": 100.0, "electricity_tariff": "de-lu-day-ahead-2024", "accelerator_count": 16},
    {"model": "llama-3.1-70b", "precision": "fp8", **SESSION},
    {**MEASURED, "pue": 1.3, "pue_low": 1.2, "pue_high": 1.5, "electricity_usd_per_kwh": 0.1,
     "electricity_usd_per_kwh_low": 0.05, "electricity_usd_per_kwh_high": 0.2},  # ranges: the outputs' _low, _high
    {**MEASURED, "accelerator_count": 0},  # invalid: refused, its outputs empty
]
"""Rows of every kind; a table draws them in any order, so each kind falls on either side of a slice's edge."""


def evaluate_sliced(table: pd.DataFrame, rows: int, threads: int = batch.THREADS) -> pd.DataFrame:
    saved = batch.CHUNK_ROWS, batch.THREADS
    batch.CHUNK_ROWS, batch.THREADS = rows, threads
    try:
        return economics.evaluate(table)
    finally:
        batch.CHUNK_ROWS, batch.THREADS = saved


def cells(column: pd.Series) -> tuple[Any, ...]:
    """A column's every byte: a nullable column's values (those under <NA> too) and mask, a categorical's codes and
    texts, any other column's cells."""
    array = column.array
    if isinstance(array, (pd.arrays.FloatingArray, pd.arrays.IntegerArray, pd.arrays.BooleanArray)):
        return str(array.dtype), array._data.tobytes(), array._mask.tobytes()  # type: ignore[attr-defined]
    if isinstance(array, pd.Categorical):
        return "category", array.codes.tobytes(), tuple(array.categories)
    return str(array.dtype), tuple(array)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(range(len(POOL))), min_size=2, max_size=12), st.integers(1, 12))
def test_sliced_equals_whole(picks: list[int], rows: int) -> None:
    table = pd.DataFrame([POOL[i] for i in picks])
    pd.testing.assert_frame_equal(economics.evaluate(table), evaluate_sliced(table, rows))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(range(len(POOL))), min_size=2, max_size=14), st.integers(1, 5), st.integers(2, 4))
def test_slices_on_threads_equal_slices_in_turn_bit_for_bit(picks: list[int], rows: int, threads: int) -> None:
    # slices finish in any order on threads; each output's cells (NaN's bytes under <NA> too) are those of one thread
    table = pd.DataFrame([POOL[i] for i in picks])
    in_turn, on_threads = evaluate_sliced(table, rows, threads=1), evaluate_sliced(table, rows, threads)
    pd.testing.assert_frame_equal(economics.evaluate(table), on_threads)
    assert list(in_turn.columns) == list(on_threads.columns)
    for column in in_turn.columns:
        assert cells(in_turn[column]) == cells(on_threads[column]), column


def test_every_feature_sliced_on_threads_equals_whole() -> None:
    # every kind of row twice, interleaved, in slices of 2 rows on 3 threads: each slice's edge falls between kinds
    table = pd.DataFrame(POOL + POOL[::-1])
    whole, sliced = economics.evaluate(table), evaluate_sliced(table, 2, threads=3)
    pd.testing.assert_frame_equal(whole, sliced)
    assert not sliced["valid"].all() and sliced["cost_usd_per_m_tokens_low"].notna().any()
    assert sliced["decode_accelerators"].notna().any() and sliced["kv_hit_rate"].notna().any()


def test_an_output_first_given_in_a_later_slice_is_whole() -> None:
    # three measured rows without a decode pool (slices 1 and 2 hold no decode output), then a decode pool's row
    table = pd.DataFrame([MEASURED, MEASURED, MEASURED, POOL[4]])
    whole, sliced = economics.evaluate(table), evaluate_sliced(table, 2)
    pd.testing.assert_frame_equal(whole, sliced)
    assert sliced["decode_accelerators"].isna().tolist() == [True, True, True, False]


def buffer(column: pd.Series) -> np.ndarray:
    return column.array._data  # type: ignore[attr-defined,no-any-return]


def test_empty_columns_share_one_column_per_dtype_and_write_alone() -> None:
    table = pd.DataFrame([MEASURED, {**MEASURED, "accelerator_count": 16}], index=[7, 7])  # a repeated label too
    out = economics.evaluate(table)
    empty_float = ["kv_hit_rate", "decode_utilization", "cost_usd_per_m_tokens_low", "spot_availability"]
    empty_int = ["decode_accelerators", "accelerators_low"]
    assert (out[empty_float].dtypes == "Float64").all() and (out[empty_int].dtypes == "Int64").all()
    assert out[[*empty_float, *empty_int]].isna().all().all()
    assert all(np.shares_memory(buffer(out[c]), buffer(out[empty_float[0]])) for c in empty_float)
    assert all(np.shares_memory(buffer(out[c]), buffer(out[empty_int[0]])) for c in empty_int)
    assert out.index.tolist() == [7, 7]
    out.iloc[0, out.columns.get_loc("kv_hit_rate")] = 0.5
    out["decode_accelerators"] = out["decode_accelerators"].fillna(3)
    assert out["kv_hit_rate"].tolist() == [0.5, pd.NA]
    assert out["decode_utilization"].isna().all() and out["accelerators_low"].isna().all()
    assert out["decode_accelerators"].tolist() == [3, 3]
    again = economics.evaluate(table)  # a new result: its own empty columns
    assert again["kv_hit_rate"].isna().all()


def huge_page_advice() -> bool:
    from numpy._core import multiarray

    return bool(multiarray._get_madvise_hugepage())  # type: ignore[attr-defined]


def test_huge_page_advice_withheld_within_and_put_back_after_the_last_user() -> None:
    # numpy's setting as it was before (either way) once the last of several overlapping evaluations ends, an
    # exception included; withheld only for a large table
    advice = batch._PageAdvice()
    for before in (True, False):
        saved = batch._set_huge_page_advice(before)  # type: ignore[misc]
        try:
            with advice.withheld(False):
                assert huge_page_advice() is before
            first, second = advice.withheld(True), advice.withheld(True)
            first.__enter__()
            second.__enter__()
            assert huge_page_advice() is False
            first.__exit__(None, None, None)
            assert huge_page_advice() is False  # the second evaluation still runs
            second.__exit__(None, None, None)
            assert huge_page_advice() is before
            try:
                with advice.withheld(True):
                    raise ValueError("inside")
            except ValueError:
                pass
            assert huge_page_advice() is before and advice.users == 0
        finally:
            batch._set_huge_page_advice(saved)  # type: ignore[misc]


def test_a_large_table_leaves_numpys_huge_page_advice_as_it_was() -> None:
    table = pd.DataFrame([POOL[i % len(POOL)] for i in range(12)])
    for before in (True, False):
        saved = batch._set_huge_page_advice(before)  # type: ignore[misc]
        try:
            evaluate_sliced(table, 4)  # more rows than a slice: the advice withheld while it runs
            with pytest.raises(economics.InputError):
                evaluate_sliced(pd.DataFrame({"no_such_field": range(12)}), 4)
            assert huge_page_advice() is before
        finally:
            batch._set_huge_page_advice(saved)  # type: ignore[misc]


TEXTS = st.lists(st.sampled_from(["", "a", "b", "é; ü", "a", "long text, with 'quotes'", "日本"]), min_size=1,
                 max_size=6)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(TEXTS, st.lists(st.integers(0, 5), max_size=40))
def test_coded_text_is_the_categorical_of_the_rows_texts(texts: list[str], picks: list[int]) -> None:
    # the categories (first appearance, each once, texts alike merged) and codes _text gives the object array
    codes = np.array([p % len(texts) for p in picks], dtype=np.intp)
    expected = batch._text(np.array(texts, dtype=object)[codes] if picks else np.zeros(0, dtype=object))
    got = batch._coded_text(codes, texts)
    assert cells(pd.Series(got)) == cells(pd.Series(expected))
    assert got.codes.dtype == expected.codes.dtype and got.categories.dtype == expected.categories.dtype


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(0, 30), st.dictionaries(st.integers(0, 29), TEXTS.map(lambda t: "; ".join(t)), max_size=8))
def test_strings_are_the_str_column_of_the_texts(n: int, texts: dict[int, str]) -> None:
    # the str column pandas makes of an object array holding the texts (multi-byte characters too), '' elsewhere
    texts = {r: t for r, t in texts.items() if r < n}
    rows = np.full(n, "", dtype=object)
    for r, t in texts.items():
        rows[r] = t
    expected = pd.DataFrame({"error": rows})["error"]
    got = pd.DataFrame({"error": batch._strings(n, texts)}, copy=False)["error"]
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()  # no rows: object, as pandas keeps it
    assert type(got.array) is type(expected.array)
    if n:
        assert got.array._pa_array.type == expected.array._pa_array.type  # type: ignore[attr-defined]
