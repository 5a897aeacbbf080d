"""The fast paths of issue #43 give exactly what the general paths give (no timed tests: each fast path is held to the
slower one it replaces, bit for bit).

- a small table with an estimate's range runs its rows and both ends of its ranged rows as one table
  (:func:`economics.engine.pipeline._small_ranged`: one scenario, a decode study's years): the same outputs as those
  rows in a table too large for it, which takes the general path (the stages on the table, then
  :func:`~economics.engine.pipeline._ranges`); a table of a few rows (one scenario and its range's ends), whose
  stages read masks and cells as lists, gives what those rows give in a longer table (numpy's reductions);
- the measured curves are built in one pass over the table (:func:`economics.engine.measured._curves_of`): the same
  curves as the per-curve ``groupby`` it replaced, kept here as the reference;
- an estimate's range is looked up on the estimated rows only (:func:`economics.engine.estimate_range._basis_where`);
- :func:`economics.engine.stages.fill_nan` is :func:`numpy.nan_to_num` (a few cells read one by one), and a float
  cell is read by :func:`economics.schema.values.number` as the generic path reads a numpy float;
- the first page's modules do not import ``scipy.stats`` (about a second of a cold start);
- a few texts are read as numbers one by one (:func:`economics.schema.values._few_numbers_from_text`): the same
  values and masks as pandas' string methods over them; a small table's distinct warning sets are found by sorting
  (:func:`economics.engine.batch._flag_sets`), not through the lookup table of every set a million rows use.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from economics import catalog
from economics.domain.precision import record_precision
from economics.engine import estimate_range, measured, pipeline, stages
from economics.engine.batch import WARNINGS, _flag_sets, _flag_sets_by_lookup, resolve_scenario
from economics.engine.stages import column_or_nans, fill_nan
from economics.schema import values
from economics.schema.scenario import FIELDS, FORMAT_FIELDS
from tests.test_derivation import rows as random_rows

ROOT = Path(__file__).resolve().parent.parent
SESSION = {"workload": "sessions", "turns_per_session": 4, "session_prefix_tokens": 1000, "input_tokens_per_turn": 500,
           "output_tokens_per_turn": 100, "seconds_between_turns": 60, "demand_sessions_per_day": 100_000,
           "accelerator_count": None, "kv_host_memory_gb_per_system": 1000, "kv_host_read_gb_per_s": 400,
           "kv_host_memory_usd_per_gb": 3}
ESTIMATED: list[dict[str, Any]] = [
    {"model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8},
    {"model": "deepseek-v3", "accelerator": "h200-sxm", "precision": "fp8", "accelerator_count": 64,
     "demand_output_tokens_per_day": 2e9, "price_usd_per_m_output_tokens": 2.0},
    {"model": "llama-3.1-8b", "accelerator": "a100-sxm", "precision": "bf16", "demand_output_tokens_per_day": 5e9,
     "ownership": "rent", "rent_tier": "spot", "target_output_tokens_per_s_per_user": 50.0},
    {"model": "llama-3.1-70b", "precision": "fp8", "decode_accelerator": "b200", "demand_output_tokens_per_day": 1e9},
    {"model": "qwen3-32b", "accelerator": "b200", "precision": "fp8", "grid_region": "de",
     "carbon_usd_per_tonne": 100.0, "electricity_tariff": "de-lu-day-ahead-2024", "accelerator_count": 16},
    {"model": "llama-3.1-70b", "precision": "fp8", **SESSION},
]


def _repeated(cols: dict[str, Any], n: int) -> dict[str, Any]:
    """A resolved one-row scenario repeated ``n`` times (every column of the table's length)."""
    return {k: pipeline._take(v, np.zeros(n, dtype=np.intp), 1) for k, v in cols.items()}


@pytest.mark.parametrize("scenario", ESTIMATED, ids=range(len(ESTIMATED)))
def test_one_ranged_scenario_equals_its_row_in_a_table(scenario: dict[str, Any]) -> None:
    cols = resolve_scenario(scenario)
    assert bool(cols["_ranged"][0])  # the estimate has a range: the one-pass path applies
    one = pipeline.compute(cols)
    assert pipeline._small_ranged(cols) is not None
    for rows in (3, pipeline.SMALL_RANGED_ROWS + 1):  # one pass; then too many rows: the general path
        table = _repeated(cols, rows)
        assert (pipeline._small_ranged(table) is None) == (rows > pipeline.SMALL_RANGED_ROWS)
        got = pipeline.compute(table)
        assert list(one) == list(got)
        for k, v in got.items():
            assert np.array_equal(np.asarray(one[k]), np.asarray(v)[:1], equal_nan=True), k
            assert np.array_equal(np.asarray(v)[:1], np.asarray(v)[-1:], equal_nan=True), k
            assert np.asarray(one[k]).dtype == np.asarray(v).dtype, k
    assert np.isfinite(one["cost_usd_per_m_tokens_low"][0])  # the range was computed, not left empty


MEASURED = [{"output_tokens_per_s_per_accelerator": 1000.0, "accelerator_count": 8},
            {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "precision": "bf16",
             "output_tokens_per_s_per_accelerator": 2500.0, "demand_output_tokens_per_day": 2e9}]


def test_a_small_table_with_ranged_rows_equals_its_rows_in_a_large_table() -> None:
    # ranged rows among rows without a range (a throughput given), every kind of ESTIMATED row, through evaluate
    rows = [MEASURED[0], *ESTIMATED[:3], MEASURED[1], *ESTIMATED[3:]]
    small = pd.DataFrame(rows)
    large = pd.concat([small] * (pipeline.SMALL_RANGED_ROWS // len(rows) + 1), ignore_index=True)
    assert len(large) > pipeline.SMALL_RANGED_ROWS  # the general path: the stages, then the ranges apart
    got, reference = economics.evaluate(small), economics.evaluate(large).iloc[:len(rows)]
    pd.testing.assert_frame_equal(got, reference, check_exact=True)
    assert got["cost_usd_per_m_tokens_low"].notna().tolist() == [False, True, True, True, False, True, True, True]


@st.composite
def few_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A table whose stages run on at most ``stages._FEW`` rows: up to two :data:`ESTIMATED` scenarios (each ranged
    one brings its two ends) among random measured rows of every kind, in a random order."""
    estimated = draw(st.lists(st.sampled_from(ESTIMATED), max_size=2))
    measured = draw(st.lists(random_rows(), min_size=0 if estimated else 1, max_size=stages._FEW - 3 * len(estimated)))
    return draw(st.permutations([*measured, *estimated]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(few_rows())
def test_a_few_rows_through_the_stages_equal_them_in_a_longer_table(table: list[dict[str, Any]]) -> None:
    # the stages read a few rows' masks and cells as lists (stages._some_every, _none, fill_nan, nans: one scenario
    # and its range's ends); the same rows repeated past _FEW take numpy's reductions: the same frame, exactly
    small = pd.DataFrame(table)
    large = pd.concat([small] * (stages._FEW // len(small) + 1), ignore_index=True)
    assert len(large) > stages._FEW
    got, reference = economics.evaluate(small), economics.evaluate(large).iloc[:len(small)]
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


REFERENCE_READS = ("curve_id", "accelerator", "model", "precision", *FORMAT_FIELDS, "input_tokens", "output_tokens",
                   "output_tokens_per_s_per_user", "output_tokens_per_s_per_accelerator", "serving_stack", "run_date",
                   "source_date")
"""The columns the reference reads (the catalog's table has 29; each group's rows are taken from these only)."""


def reference_points(table: pd.DataFrame) -> list[tuple[int, tuple[Any, ...]]]:
    """Each curve as ``_curves_of`` built them before #43 (one pandas group per ``curve_id``), with its number of
    points: made once per table, then kept or left out by :func:`reference_curves` for each minimum (a group without
    a point is no curve at any minimum, as every minimum tested is 1 or more)."""
    table = table[[c for c in REFERENCE_READS if c in table.columns]]
    out = []
    for cid, g in table.groupby("curve_id", sort=False):
        pts = g[(g["output_tokens_per_s_per_user"] != "") & (g["input_tokens"] != "") & (g["output_tokens"] != "")]
        if len(pts) == 0:
            continue
        x = pts["output_tokens_per_s_per_user"].astype(float).to_numpy()
        y = pts["output_tokens_per_s_per_accelerator"].astype(float).to_numpy()
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        keep = np.concatenate([[True], np.diff(x) > 0])
        first = pts.iloc[0]
        dates = [d for d in pts.get("run_date", pts["source_date"]) if d] or [d for d in pts["source_date"] if d]
        # filed under its formats (precision, or weights/compute and a KV cache apart: the key a scenario matches)
        filed = record_precision([first["precision"]], *([first.get(f, "")] for f in FORMAT_FIELDS))[0]
        out.append((len(pts), (str(cid), str(first["accelerator"]), str(first["model"]), str(filed),
                               float(first["input_tokens"]), float(first["output_tokens"]), x[keep].tobytes(),
                               y[keep].tobytes(), str(first.get("serving_stack", "")), max(dates) if dates else "")))
    return out


def reference_curves(points: list[tuple[int, tuple[Any, ...]]], minimum_points: int) -> list[tuple[Any, ...]]:
    """The reference's curves of ``minimum_points`` points or more, in the groups' order."""
    assert minimum_points >= 1
    return [curve for n, curve in points if n >= minimum_points]


@functools.cache
def catalog_reference() -> list[tuple[int, tuple[Any, ...]]]:
    """The reference of the catalog's table, made once per test process (6 s of CPU) for the three minimums."""
    return reference_points(catalog.throughput_curves())


def as_tuples(curves: tuple[measured.Curve, ...]) -> list[tuple[Any, ...]]:
    return [(c.curve_id, c.accelerator, c.model, c.precision, c.input_tokens, c.output_tokens, c.per_user.tobytes(),
             c.per_accelerator.tobytes(), c.stack, c.date) for c in curves]


@pytest.mark.parametrize("minimum_points", [1, 2, 4])
def test_the_curves_are_the_groupby_curves(minimum_points: int) -> None:
    table = catalog.throughput_curves()
    assert as_tuples(measured._curves_of(table, minimum_points)) == reference_curves(catalog_reference(),
                                                                                      minimum_points)


def test_the_curves_of_a_shuffled_table_with_gaps_are_the_groupby_curves() -> None:
    # rows out of order, a point without a length, one without a speed, a repeated speed, no run_date column, a
    # KV cache and weights apart from precision
    table = catalog.throughput_curves().sample(frac=1.0, random_state=3).reset_index(drop=True)
    table = table.drop(columns=[c for c in ("run_date",) if c in table.columns])
    table.loc[0, "input_tokens"] = ""
    table.loc[1, "output_tokens_per_s_per_user"] = ""
    table.loc[2, "output_tokens_per_s_per_user"] = table.loc[3, "output_tokens_per_s_per_user"]
    table.loc[2, "curve_id"] = table.loc[3, "curve_id"]
    table.loc[4, "kv_cache_precision"] = "fp8" if table.loc[4, "precision"] == "bf16" else "bf16"
    table.loc[5, "weight_precision"] = "int4"
    points = reference_points(table)
    for minimum in (1, 2):
        assert as_tuples(measured._curves_of(table, minimum)) == reference_curves(points, minimum)


def test_the_range_is_looked_up_on_the_estimated_rows_only() -> None:
    acc = np.array(["h100-sxm", "b200", "mi300x", "h100-sxm", "nope"], dtype=object)
    model = np.array(["llama-3.1-70b", "deepseek-v3", "llama-3.1-8b", "qwen3-32b", "llama-3.1-70b"], dtype=object)
    given_factors = np.array([False, True, False, False, False])
    rows = np.array([True, False, True, True, True])
    full = estimate_range.estimate_basis(acc, model, given_factors)
    part = estimate_range._basis_where(rows, acc, model, given_factors)
    for k, v in full.items():
        assert np.asarray(part[k])[rows].tolist() == np.asarray(v)[rows].tolist(), k  # ratios stored: none NaN
    assert np.isnan(part["ratio_low"][1]) and part["throughput_basis"][1] == "" and not part["unseen"][1]
    none = estimate_range._basis_where(np.zeros(5, dtype=bool), acc, model)
    assert np.isnan(none["ratio_high"]).all() and not none["class_mismatch"].any()


CELLS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf])


@settings(max_examples=300, deadline=None)
@given(st.lists(CELLS, min_size=1, max_size=stages._FEW + 2), st.sampled_from([0.0, 1.0]))
def test_fill_nan_is_nan_to_num(cells: list[float], nan: float) -> None:
    a = np.array(cells)
    assert fill_nan(a, nan).tobytes() == np.nan_to_num(a, nan=nan).tobytes()
    assert fill_nan(a, nan) is not a  # a new column, as nan_to_num's


@given(st.integers(1, 20), st.booleans())
def test_column_or_nans_is_get_with_a_nan_default(n: int, present: bool) -> None:
    # the engine's optional columns are read without building a default when they are there: the column itself
    # where present (the same object, as dict.get gives), else what numpy.full(n, nan) gives
    given = np.arange(n, dtype=float)
    v = {"a": given} if present else {}
    got, reference = column_or_nans(v, "a", n), v.get("a", np.full(n, np.nan))
    assert got.tobytes() == reference.tobytes() and got.dtype == reference.dtype
    assert (got is given) == present


def test_no_engine_column_default_is_built_when_present() -> None:
    # ``v.get(key, np.full(...))`` builds its default whether or not the key is there (stages.column_or_nans does not)
    built = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "economics").rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\.get\([^()]*, np\.full\(", line)]
    assert built == []


@pytest.mark.parametrize("cell", [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.5])
def test_fill_nan_of_one_cell_is_nan_to_num(cell: float) -> None:
    a = np.array([cell])
    for nan in (0.0, 1.0):
        assert fill_nan(a, nan).tobytes() == np.nan_to_num(a, nan=nan).tobytes()


@settings(max_examples=300, deadline=None)
@given(CELLS)
def test_a_float_cell_reads_as_a_numpy_float(x: float) -> None:
    def read(v: Any) -> Any:
        try:
            return values.number(v)
        except values.ValueProblem as exc:
            return str(exc)

    assert read(x) == read(np.float64(x)) or (read(x) is values.EMPTY and read(np.float64(x)) is values.EMPTY)
    assert values.parse(FIELDS["pue"], None) is values.EMPTY


NUMBER_TEXTS = (st.from_regex(values.NUMBER, fullmatch=True) | st.sampled_from(
    ["", "inf", "-INF", "+Infinity", "nan", "1e999", "-1e999", "1" * 101, "1" * 100, "1_0", "\u0663", " 1", ".", "e5",
     "1e", "+.5", "0x10", "٣"]) | st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.lists(NUMBER_TEXTS, min_size=1, max_size=values.FEW_TEXTS))
def test_a_few_texts_read_as_a_table_of_them(texts: list[str]) -> None:
    # a one-row table's number columns (values.FEW_TEXTS texts or fewer) are read one by one, not by pandas' string
    # methods: the same values, bit for bit, and the same masks
    cells = np.array(texts, dtype=object)
    few = values.numbers_from_text(cells)
    table = values._numbers_from_text_table(cells)
    assert few[0].tobytes() == table[0].tobytes(), (texts, few[0], table[0])
    assert few[1].tolist() == table[1].tolist() and few[2].tolist() == table[2].tolist(), texts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, (1 << len(WARNINGS)) - 1) | st.sampled_from([0, 1, 2, 3]), max_size=40))
def test_the_flag_sets_found_by_sorting_are_those_of_the_lookup_table(flags: list[int]) -> None:
    # a table of up to FLAG_SORT_ROWS rows finds its distinct warning sets with np.unique, not with the lookup
    # table of every set (16 MB) that a million rows use: the same sets, in the same order, the same codes
    a = np.array(flags, dtype=np.int64)
    distinct, codes = _flag_sets(a)
    by_lookup = _flag_sets_by_lookup(a)
    assert distinct.tolist() == by_lookup[0].tolist() and codes.tolist() == by_lookup[1].tolist(), flags


def test_the_first_page_imports_no_scipy_stats() -> None:
    # the Cost page's modules (ui/cost.py's imports); scipy.stats came with the planner's package through ui.links
    code = ("import sys; import economics; from economics.report import charts, kpis; "
            "from ui import common, day, editor, report, state, studies; "
            "print('scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"
