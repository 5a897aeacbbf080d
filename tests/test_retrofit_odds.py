"""The decode study's resale value at the horizon and its odds (economics.studies.retrofit_odds)."""

from __future__ import annotations

from typing import Any

import pytest

from economics.engine.batch import as_scenario
from economics.studies.retrofit import analyse
from economics.studies.retrofit_explain import option_text

SIMPLE: dict[str, Any] = {
    "ownership": "own", "electricity_usd_per_kwh": 0.1, "pue": 1.5, "idle_power_fraction": 1.0,
    "colocation_usd_per_kw_month": 0.0, "maintenance_fraction_per_year": 0.0, "software_usd_per_accelerator_year": 0.0,
    "cost_of_capital": 0.1, "depreciation_years": 5.0, "peak_to_average": 1.0, "headroom": 0.0,
    "prefix_cache_hit_rate": 0.0,
}
STUDY: dict[str, Any] = {
    **SIMPLE, "name": "study", "accelerator": "h100-sxm", "existing_accelerators": 8, "accelerator_price_usd": 30000.0,
    "input_tokens_per_request": 1000.0, "output_tokens_per_request": 250.0,
    "output_tokens_per_s_per_accelerator": 1000.0, "input_tokens_per_s_per_accelerator": 10000.0,
    "decode_accelerator": "h200-sxm", "decode_accelerator_count": 4, "decode_accelerator_price_usd": 32000.0,
    "decode_output_tokens_per_s_per_accelerator": 2000.0, "demand_requests_per_s": 40.0, "horizon_years": 2,
    "price_usd_per_m_input_tokens": 0.5, "price_usd_per_m_output_tokens": 2.0,
}
"""The hand-worked study of tests/test_retrofit.py (docs/retrofit-example.csv)."""

# 100 decode accelerators bought at USD 30,000, resold after 5 years at 0.2 of their price, at 8 % a year
RESALE = {**STUDY, "decode_accelerator_count": 100, "decode_accelerator_price_usd": 30000.0, "horizon_years": 5,
          "cost_of_capital": 0.08}


def test_the_resale_at_the_horizon_adds_its_present_value_to_the_npv() -> None:
    # 100 x 30,000 x 0.2 = 600,000 USD at t = 5; / 1.08^5 = 600,000 / 1.4693281 = 408,349.79 USD more NPV
    without = analyse({**RESALE, "residual_value_fraction": 0.0}).row("add decode")
    result = analyse({**RESALE, "residual_value_fraction": 0.2})
    with_resale = result.row("add decode")
    assert without is not None and with_resale is not None
    assert with_resale["residual_value_usd"] == pytest.approx(600_000.0)
    added = with_resale["npv_vs_status_quo_usd"] - without["npv_vs_status_quo_usd"]
    assert added == pytest.approx(600_000 / 1.08 ** 5, abs=0.01)
    assert round(added) == 408_350
    flows = result.cashflows[result.cashflows["option"] == "add decode"]
    assert flows["residual_value_usd"].tolist() == [0.0] * 5 + [600_000.0]
    # the status quo buys nothing and resells nothing
    assert result.row("status quo")["residual_value_usd"] == 0.0  # type: ignore[index]


def test_the_derivation_shows_the_resale_with_its_numbers() -> None:
    s = {**RESALE, "residual_value_fraction": 0.2}
    text = option_text(analyse(s), "add decode", as_scenario(s))
    assert ("t = 5: residual_value_usd = bought_usd x residual_value_fraction = 3,000,000 x 0.2 = 600,000 USD"
            in text)
    assert "it adds 600,000 / (1 + 0.08)^5 = 408,350 USD to the NPV" in text
    # year 5's net cash flow carries it
    assert "net_usd = revenue_usd - opex_usd - capex_usd + residual_value_usd" in text


def test_residual_value_fraction_is_bounded() -> None:
    from economics.engine.batch import ScenarioError

    for bad in (-0.1, 1.5):
        with pytest.raises(ScenarioError, match="residual_value_fraction"):
            analyse({**RESALE, "residual_value_fraction": bad})
