"""``evaluate_at_rates`` (a scenario's outputs at many given throughputs, validated once per pattern of empty rates)
gives what ``evaluate`` gives for the same repeated table, which validates every row: the same columns, dtypes and
numbers, refused rows (out of bounds, not finite, a scenario the rates leave incomplete) included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from economics.engine.batch import RATE_FIELDS, as_scenario, evaluate, evaluate_at_rates
from economics.studies.compare import scenario_frame

OUTPUTS = ("cost_usd_per_m_tokens", "cost_usd_per_m_output_tokens", "accelerators", "utilization",
           "racks", "cost_usd_per_day", "break_even_utilization", "decode_accelerators")

SCENARIOS: list[dict[str, Any]] = [
    {"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "accelerator_count": 64,
     "demand_output_tokens_per_day": 5e9},
    {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8", "ownership": "rent",
     "demand_requests_per_s": 50, "price_usd_per_m_output_tokens": 2.0},
    {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8", "decode_accelerator": "h200-sxm"},
    # a measured per-user speed falling with context: given a throughput, the context curve is refused
    {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8",
     "measured_output_tokens_per_s_per_user": 40, "concurrent_users_per_replica": 32,
     "measured_speed_context_tokens": 1000, "long_context_tokens": 10000,
     "long_context_output_tokens_per_s_per_user": 30},
    {"accelerator_count": 8},  # no model: an empty throughput leaves the scenario incomplete
    {"accelerator": "h100-sxm", "model": "llama-3.1-8b", "precision": "bf16", "accelerator_count": 1,
     "demand_output_tokens_per_day": 1e13},  # a fleet too large to count at slow rates
]

RATES = st.one_of(st.just(np.nan), st.floats(1e-3, 1e5), st.sampled_from(
    [0.0, -5.0, np.inf, 1e9, 2e9, 1e10, 2e10, 1e-300]))


def _expected(scenario: dict[str, Any], rates: dict[str, np.ndarray]) -> pd.DataFrame:
    """What :func:`evaluate` gives for the scenario repeated with these rates, read from its table."""
    n = len(next(iter(rates.values())))
    out = evaluate(scenario_frame([scenario], repeat=n, varying=rates))
    return out[list(OUTPUTS)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SCENARIOS))), st.lists(st.tuples(RATES, RATES), min_size=1, max_size=12),
       st.sampled_from([RATE_FIELDS, RATE_FIELDS[:1], RATE_FIELDS[1:]]))
def test_the_outputs_at_rates_are_the_repeated_tables(which: int, pairs: list[tuple[float, float]],
                                                     fields: tuple[str, ...]) -> None:
    scenario = as_scenario(SCENARIOS[which]).model_dump()
    columns = np.array(pairs, dtype=float).T
    rates = {name: columns[RATE_FIELDS.index(name)] for name in fields}
    got = evaluate_at_rates(scenario, rates, OUTPUTS)
    pd.testing.assert_frame_equal(got, _expected(scenario, rates), check_exact=True)


def test_a_curve_s_points_and_measured_dots_at_once() -> None:
    """The interactivity curve's case: hundreds of decode rates with their prefill rates, and measured dots
    without one, in one call, every row as the table gives it (some refused: beyond the bounds)."""
    scenario = as_scenario(SCENARIOS[0]).model_dump()
    decode = np.geomspace(1.0, 5e9, 300)
    prefill = np.concatenate([np.geomspace(10.0, 1e6, 200), np.full(100, np.nan)])
    rates = {RATE_FIELDS[0]: decode, RATE_FIELDS[1]: prefill}
    got = evaluate_at_rates(scenario, rates, OUTPUTS)
    expected = _expected(scenario, rates)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert expected["cost_usd_per_m_tokens"].isna().any() and expected["cost_usd_per_m_tokens"].notna().sum() > 250


@pytest.mark.parametrize("rates", [{}, {"accelerator_count": np.ones(2)},
                                   {RATE_FIELDS[0]: np.ones(2), RATE_FIELDS[1]: np.ones(3)}])
def test_other_fields_or_uneven_rates_are_refused(rates: dict[str, np.ndarray]) -> None:
    with pytest.raises(ValueError, match="evaluate_at_rates"):
        evaluate_at_rates(as_scenario(SCENARIOS[0]).model_dump(), rates, OUTPUTS)
