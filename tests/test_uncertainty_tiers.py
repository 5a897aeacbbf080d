"""Ranges on the inputs of rent tiers and carbon (#28): each where it can move the result, hand-worked ends and
swings, and the Uncertainty page's range inputs for them."""

from __future__ import annotations

import pytest

import economics
from economics.studies import uncertainty as u
from tests.test_app import start

RENTED = {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8,
          "output_tokens_per_s_per_accelerator": 1000, "demand_output_tokens_per_day": 345.6e6}
"""8 rented H100s at 1,000 token/s each, half busy (345.6 M output tokens a day of 691.2 M they could serve)."""


def test_a_tiers_inputs_are_ranged_only_on_that_tier() -> None:
    on_demand = u.default_ranges(economics.evaluate_scenario(RENTED))
    assert set(on_demand) <= set(u.DEFAULT_RANGED_FIELDS)
    reserved = u.default_ranges(economics.evaluate_scenario({**RENTED, "rent_tier": "reserved"}))
    # the catalog's 1.30 USD/h reserved rent (InferenceX, 3-year): x0.8 and x1.25
    assert reserved["reserved_rent_usd_per_accelerator_hour"] == pytest.approx((1.04, 1.625), rel=1e-12)
    assert "reserved_discount" not in reserved  # the catalog gives the price: the discount moves nothing
    spot = u.default_ranges(economics.evaluate_scenario({**RENTED, "rent_tier": "spot", "spot_mtbi_hours": 24}))
    assert spot["spot_mtbi_hours"] == pytest.approx((6.0, 96.0), rel=1e-12)  # a quarter to four times
    assert "spot_discount" in spot and "spot_rent_usd_per_accelerator_hour" not in spot  # no spot price: discount


def test_carbon_inputs_are_ranged_where_carbon_is_priced() -> None:
    unpriced = u.default_ranges(economics.evaluate_scenario({**RENTED, "grid_carbon_g_per_kwh": 400}))
    assert "grid_carbon_g_per_kwh" not in unpriced
    priced = u.default_ranges(economics.evaluate_scenario({**RENTED, "grid_carbon_g_per_kwh": 400,
                                                           "carbon_usd_per_tonne": 100}))
    assert priced["grid_carbon_g_per_kwh"] == pytest.approx((280.0, 520.0), rel=1e-12)
    assert priced["embodied_kgco2e_per_accelerator"] == pytest.approx((177.0, 708.0), rel=1e-12)  # 354 x 0.5, x 2


def test_the_reserved_rents_swing_is_worked_by_hand() -> None:
    # the rent is the cost here (energy in the rent, no carbon): 8 accelerators x (1.625 - 1.04) USD/h over the
    # tokens served an hour, 345.6 M output tokens a day plus their input tokens, / 24
    scenario = {**RENTED, "rent_tier": "reserved"}
    result = economics.evaluate_scenario(scenario)
    assert result["rent_includes_energy"] is True and result["cost_usd_per_hour"] == pytest.approx(8 * 1.3)
    ranges = {"reserved_rent_usd_per_accelerator_hour": (1.04, 1.625)}
    t = u.tornado(scenario, ranges).set_index("field")
    tokens_per_hour = (result["served_input_tokens_per_day"] + result["served_output_tokens_per_day"]) / 24
    swing = 8 * (1.625 - 1.04) / tokens_per_hour * 1e6
    assert t.loc["reserved_rent_usd_per_accelerator_hour", "swing"] == pytest.approx(swing, rel=1e-9)


def test_the_uncertainty_page_offers_a_spot_fleets_ranges() -> None:
    at = start("uncertainty", {"ownership": "rent", "rent_tier": "spot", "rent_includes_energy": "false"})
    keys = {t.key for t in at.text_input}
    assert {"range_spot_mtbi_hours_low", "range_spot_discount_high"} <= keys
    assert "range_reserved_rent_usd_per_accelerator_hour_low" not in keys
    at.text_input(key="range_spot_mtbi_hours_low").set_value("1").run()
    assert not at.exception and at.session_state["settings"]["spot_mtbi_hours_low"] == 1.0
    default = start("uncertainty")
    assert not [t for t in default.text_input if str(t.key).startswith("range_spot")]
