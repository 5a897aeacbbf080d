"""The planner's shortcuts around numpy's and pandas' layers give what those layers give (docs/speed.md, branch
``planedit11``): the rate table read from the engine's records against the table made by pandas from the same
records, and the hourly adapter's closeness test against ``np.allclose``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics.studies.planner import candidates
from economics.studies.planner.hourly import _close

NUMBERS = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6))
TEXTS = st.one_of(st.none(), st.sampled_from(["", "measured curve", "estimated", "curve-a", "too many"]))
NUMBER_KEYS = (*candidates.RATE_COLUMNS, "kv_hit_rate")
TEXT_KEYS = ("throughput_basis", "throughput_curve", "throughput_source", "infeasible_reason", "error")


@st.composite
def engine_records(draw: st.DrawFn) -> list[dict[str, object]]:
    """1-6 records as the engine's rows give them to the planner: numbers or None, ``valid`` a bool, ``feasible`` a
    bool or None, text or None; ``kv_hit_rate`` and ``throughput_basis`` left out at times (the engine gives the
    first only for sessions)."""
    records = []
    for _ in range(draw(st.integers(1, 6))):
        record: dict[str, object] = {"valid": draw(st.booleans()),
                                     "feasible": draw(st.one_of(st.none(), st.booleans()))}
        record |= {k: draw(NUMBERS) for k in NUMBER_KEYS if draw(st.booleans()) or k != "kv_hit_rate"}
        record |= {k: draw(TEXTS) for k in TEXT_KEYS if k in candidates._ALWAYS or draw(st.booleans())}
        records.append(record)
    return records


def _same_table(records: list[dict[str, object]]) -> None:
    columns = candidates._record_columns(records)
    assert columns is not None  # every value is of the kinds the shortcut takes
    expected = candidates._frame_columns(pd.DataFrame(records))
    keys = {"target": [30.0] * len(records), "accelerator": [f"a{i}" for i in range(len(records))]}
    got, want = pd.DataFrame({**keys, **columns}), pd.DataFrame({**keys, **expected})
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)
    assert repr(got.to_dict(orient="records")) == repr(want.to_dict(orient="records"))


# the table's path fills a column of no text with "" (pandas warns about the float column it made): its own way
@pytest.mark.filterwarnings("ignore:'str' is not supported as a fill value")
@settings(max_examples=150, derandomize=True, deadline=None)
@given(engine_records())
def test_the_rate_table_from_records_is_the_table_pandas_makes(records: list[dict[str, object]]) -> None:
    _same_table(records)


def test_the_rate_table_from_records_hand_worked() -> None:
    # an infeasible row (valid, not feasible, its reason), a feasible measured one (source and curve joined by a
    # space) and an estimated one (the basis wins), a missing input rate and replica size read as NaN
    records = [
        {"output_tokens_per_s_per_accelerator": 100.0, "input_tokens_per_s_per_accelerator": None,
         "accelerators_per_replica": None, "output_tokens_per_s_per_user": 30.0, "valid": True, "feasible": False,
         "throughput_basis": "", "throughput_source": "estimated", "throughput_curve": "",
         "infeasible_reason": "over 10,000,000", "error": ""},
        {"output_tokens_per_s_per_accelerator": 268.8, "input_tokens_per_s_per_accelerator": 5000.0,
         "accelerators_per_replica": 2, "output_tokens_per_s_per_user": 30.0, "valid": True, "feasible": True,
         "throughput_basis": "", "throughput_source": "measured curve", "throughput_curve": "nim-h100",
         "infeasible_reason": "", "error": ""},
        {"output_tokens_per_s_per_accelerator": 432.8, "input_tokens_per_s_per_accelerator": 7326.3,
         "accelerators_per_replica": 1, "output_tokens_per_s_per_user": 30.2, "valid": True, "feasible": True,
         "throughput_basis": "estimated; calibrated", "throughput_source": "estimated", "throughput_curve": "",
         "infeasible_reason": "", "error": ""}]
    columns = candidates._record_columns(records)
    assert columns is not None
    assert columns["feasible"].tolist() == [False, True, True]
    assert list(columns["throughput"]) == ["estimated", "measured curve nim-h100", "estimated; calibrated"]
    assert math.isnan(columns["accelerators_per_replica"][0]) and columns["accelerators_per_replica"][1] == 2.0
    assert columns["reason"] == ["over 10,000,000", "", ""]
    assert columns["kv_hit_rate"] is np.nan  # no record has it: one NaN for the column, as the table's path
    _same_table(records)


def test_values_of_other_kinds_go_to_pandas() -> None:
    # text in a number's place, or a number for valid: pandas' own conversions, not the shortcut's
    ok = {"valid": True, "feasible": True, **dict.fromkeys(candidates._ALWAYS, ""),
          **dict.fromkeys(candidates.RATE_COLUMNS, 1.0)}
    assert candidates._record_columns([ok]) is not None
    assert candidates._record_columns([{**ok, "output_tokens_per_s_per_accelerator": "12"}]) is None
    assert candidates._record_columns([{**ok, "valid": 1}]) is None
    assert candidates._record_columns([{**ok, "feasible": float("nan")}]) is None
    assert candidates._record_columns([{**ok, "throughput_source": 3.0}]) is None
    # a key the table's path reads from every row, missing from one: pandas fills it, or raises where no row has it
    assert candidates._record_columns([ok, {k: v for k, v in ok.items() if k != "throughput_curve"}]) is None


VALUES = st.one_of(st.floats(min_value=-1e6, max_value=1e6),
                   st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-13, 1.0 + 1e-11, math.inf, -math.inf, math.nan]))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES), min_size=0, max_size=6), st.sampled_from([1e-12, 1e-9]))
def test_close_is_numpys_allclose(pairs: list[tuple[float, float]], rtol: float) -> None:
    a, b = np.array([p[0] for p in pairs], dtype=float), np.array([p[1] for p in pairs], dtype=float)
    assert _close(a, b, rtol) == bool(np.allclose(a, b, rtol=rtol, atol=0.0))
    if len(a):  # against one value, as the KV link's bytes per token are compared
        assert _close(a, b[:1], rtol) == bool(np.allclose(a, b[0], rtol=rtol, atol=0.0))


def test_close_hand_worked() -> None:
    # 1 and 1 + 1e-13 are within 1e-12 of each other, 1 and 1 + 1e-11 are not; equal infinities are close, a NaN
    # never is
    assert _close(np.array([1.0]), np.array([1.0 + 1e-13]), 1e-12)
    assert not _close(np.array([1.0]), np.array([1.0 + 1e-11]), 1e-12)
    assert _close(np.array([math.inf, 2.0]), np.array([math.inf, 2.0]), 1e-12)
    assert not _close(np.array([math.nan]), np.array([math.nan]), 1e-12)
