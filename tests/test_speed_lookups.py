"""The catalog and range lookups of issue #43's engine round give what the paths they replace gave (no timed
tests: each fast path is held to the reference, element for element).

- :func:`economics.catalog.positions` of many ids, looked up per distinct id, is ``Index.get_indexer`` (the former
  path) and the per-id dict path of a few ids;
- :func:`economics.engine.estimate_range.estimate_basis` on a page's few rows (dicts and lists) is the table path
  (pandas' factorize) on the same rows;
- the typed accelerators of :func:`~economics.engine.estimate_range.attach` are worked out on the estimated rows
  only: the same labels there, ``""`` elsewhere;
- the stages read a mask of a few rows as a list (:func:`economics.engine.stages._any`, ``_all``, ``_some_every``,
  ``_none``): as numpy's ``any`` and ``all`` read it, for masks of booleans and of numbers; a few rows' NaN column
  (``nans``) is ``numpy.full``'s;
- a free-text column of a page's table (at most :data:`economics.schema.validation.PLAIN_TEXT_ROWS` rows) read with
  a plain loop gives the cells, their type and the problems that pandas' string operations give on the same cells
  (the path a longer table takes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from economics import catalog
from economics.engine import estimate_range
from economics.schema.validation import PLAIN_TEXT_ROWS, validate

ACCELERATORS = list(catalog.accelerators().index)
MODELS = list(catalog.models().index)
ID = st.sampled_from([*ACCELERATORS, *MODELS, "", "nope", "H100-SXM", None, np.nan, pd.NA, 3.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(ID, min_size=1, max_size=12), st.sampled_from(["accelerators", "models"]))
def test_positions_of_many_ids_are_the_index_lookup(ids: list[object], name: str) -> None:
    table = catalog.accelerators() if name == "accelerators" else catalog.models()
    keys = np.array(ids * (catalog.FEW_IDS // len(ids) + 1), dtype=object)  # past FEW_IDS: the distinct-id path
    assert keys.size > catalog.FEW_IDS
    reference = pd.Index(table.index).get_indexer(keys)
    assert catalog.positions(table, name, keys).tolist() == reference.tolist()
    assert catalog.positions(table, name, keys[: len(ids)]).tolist() == reference[: len(ids)].tolist()  # few ids
    grid = keys[: 2 * (keys.size // 2)].reshape(2, -1)  # a 2-d array keeps its shape
    assert catalog.positions(table, name, grid).tolist() == reference[: grid.size].reshape(2, -1).tolist()


ROW = st.tuples(st.sampled_from([*ACCELERATORS, "", "nope"]), st.sampled_from([*MODELS, ""]), st.booleans(),
                st.sampled_from(["", "h100-sxm: accelerator_memory_gb"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=6))
def test_the_basis_of_a_few_rows_is_the_table_path(rows: list[tuple[str, str, bool, str]]) -> None:
    acc, mod, giv, typed = (np.array(col, dtype=object) for col in zip(*rows, strict=True))
    few = estimate_range.estimate_basis(acc, mod, giv.astype(bool), typed)
    repeat = catalog.FEW_IDS // len(rows) + 1  # the same rows repeated past FEW_IDS: the table path
    many = estimate_range.estimate_basis(np.tile(acc, repeat), np.tile(mod, repeat),
                                         np.tile(giv.astype(bool), repeat), np.tile(typed, repeat))
    assert len(many["ratio_low"]) > catalog.FEW_IDS
    for k, v in few.items():
        head = np.asarray(many[k])[: len(rows)]
        assert np.asarray(v).dtype == head.dtype, k
        assert [str(x) for x in v] == [str(x) for x in head], k  # str: NaN ratios compare equal


def test_typed_accelerators_are_worked_out_on_the_estimated_rows_only() -> None:
    c = {"accelerator": np.array(["h100-sxm", "h100-sxm", "b200", "h100-sxm"], dtype=object),
         "accelerator_memory_gb": np.array([80.0, 141.0, 1.0, 200.0]),
         "accelerator_bf16_tflops": np.array([np.nan, 5.0, np.nan, 1.0])}
    rows = np.array([True, True, False, True])
    full = estimate_range.typed_specs(c)
    part = estimate_range._typed_where(c, rows)
    assert part[rows].tolist() == full[rows].tolist()
    assert part[~rows].tolist() == [""] and full[2] != ""  # b200 given 1 GB: typed, but not estimated
    assert part.tolist()[1] == "h100-sxm: accelerator_memory_gb, accelerator_bf16_tflops"
    assert estimate_range._typed_where(c, np.zeros(4, dtype=bool)).tolist() == [""] * 4
    assert estimate_range._typed_where(c, np.ones(4, dtype=bool)).tolist() == full.tolist()


MASK = st.lists(st.booleans(), min_size=0, max_size=12)


@settings(max_examples=60, deadline=None)
@given(MASK, st.sampled_from([bool, float, np.int64]))
def test_a_few_rows_mask_reads_as_numpy_reads_it(cells: list[bool], dtype: type) -> None:
    from economics.engine.stages import _FEW, _all, _any, _none, _some_every, nans  # one scenario, its range's rows

    rows = np.array(cells, dtype=dtype)
    assert _any(rows) is bool(np.any(rows)) and _all(rows) is bool(np.all(rows))
    assert _some_every(rows) == (bool(np.any(rows)), bool(np.any(rows)) and bool(np.all(rows)))
    # a flag is left out only where the mask chooses no row; a few booleans' mask choosing none always leaves it out
    assert not (_none(rows) and np.any(rows))
    if dtype is bool:
        assert _none(rows) is (rows.size <= _FEW and not np.any(rows))
    assert nans(rows.size).tobytes() == np.full(rows.size, np.nan).tobytes()
    if rows.size:
        assert _any(rows * 2) is bool(np.any(rows * 2))  # a number other than 1 is true, as numpy reads it


TEXT = st.one_of(
    st.none(), st.just(np.nan), st.just(pd.NA), st.just(""), st.just("x" * 201), st.just(3.5), st.just(True),
    st.text(alphabet=st.sampled_from(list("ab -_.é\t\n\x1c\x1f\u00a0\u2003\u3000") + ["\U0001f9ee"]), max_size=6))


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=8), st.sampled_from([None, "string", "str"]))
def test_a_page_s_free_text_column_reads_as_the_table_path_reads_it(cells: list[object], typed: str | None) -> None:
    # the same cells past PLAIN_TEXT_ROWS take pandas' string operations; the first len(cells) rows must agree. The
    # column as objects, or typed: Arrow strings ("string" empty as <NA>, "str" as NaN: scenario_frame's), or floats
    def column(n: int) -> pd.Series:
        series = pd.Series((cells * (n // len(cells) + 1))[:n], dtype=object)
        plain = all(c is None or c is pd.NA or isinstance(c, str) or (isinstance(c, float) and c != c) for c in cells)
        if typed and all(type(c) is float for c in cells):  # a float64 column (empty where NaN), as a CSV reads one
            return series.astype(float)
        return series.astype(typed) if typed and plain else series

    few, many = len(cells), PLAIN_TEXT_ROWS + len(cells)
    small_cols, small_problems = validate(pd.DataFrame({"name": column(few)}))
    big_cols, big_problems = validate(pd.DataFrame({"name": column(many)}))
    assert small_cols["name"].dtype == big_cols["name"].dtype
    assert list(small_cols["name"]) == list(big_cols["name"][:few])
    assert [(p.row, p.field, p.message) for p in small_problems] == [
        (p.row, p.field, p.message) for p in big_problems if p.row < few]


def test_a_page_s_free_text_column_worked_by_hand() -> None:
    # stripped (" gpu fleet " -> "gpu fleet"), the field's default "scenario" where empty or missing, as strings
    cols, problems = validate(pd.DataFrame({"name": [" gpu fleet ", None, "", "x", np.nan]}))
    assert [p for p in problems if p.field == "name"] == []  # (no throughput given: other fields' problems)
    assert cols["name"].dtype == pd.StringDtype() and list(cols["name"]) == [
        "gpu fleet", "scenario", "scenario", "x", "scenario"]
