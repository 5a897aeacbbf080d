"""Golden scenarios worked out by hand. Each test states its arithmetic; the expected values are typed from it.

Every scenario gives all the numbers it depends on, so a change in the catalog or defaults cannot move them.
"""

from __future__ import annotations

from typing import Any

import pytest

import economics

BASE: dict[str, Any] = {
    "name": "golden",
    "accelerator": "h100-sxm",
    "ownership": "own",
    "accelerator_count": 8,
    "accelerator_price_usd": 30000.0,
    "accelerator_power_kw": 1.25,
    "depreciation_years": 5.0,
    "cost_of_capital": 0.0,
    "maintenance_fraction_per_year": 0.0,
    "software_usd_per_accelerator_year": 0.0,
    "electricity_usd_per_kwh": 0.10,
    "pue": 1.0,
    "idle_power_fraction": 1.0,  # constant draw: energy does not depend on load
    "colocation_usd_per_kw_month": 0.0,
    "facility_capex_usd_per_kw": 0.0,
    "facility_depreciation_years": 15.0,
    "input_tokens_per_request": 1000.0,
    "output_tokens_per_request": 250.0,
    "prefix_cache_hit_rate": 0.0,
    "output_tokens_per_s_per_accelerator": 1000.0,
    "input_tokens_per_s_per_accelerator": None,
    "peak_to_average": 1.0,
    "round_to_whole_systems": False,  # the fleet tests (test_fleet.py) cover whole systems, racks and cooling
}


def run(**changes: Any) -> dict[str, Any]:
    return economics.evaluate_scenario({**BASE, **changes})


def approx(x: float) -> Any:
    return pytest.approx(x, rel=1e-9)


def test_g1_owned_zero_cost_of_capital_no_demand() -> None:
    # capital: 8 x 30,000 USD / 5 y / 8,760 h/y = 5.479452055 USD/h   (CRF(0, 5) = 1/5)
    # energy: 8 x 1.25 kW x PUE 1.0 x 0.10 USD/kWh = 1.0 USD/h         (idle fraction 1: full draw always)
    # cost: 6.479452055 USD/h x 24 = 155.5068493 USD/day
    # no prefill throughput: one request = 250 / 1000 = 0.25 s -> 4 requests/s per accelerator
    # no demand: busy all day: 8 x 86,400 s x 4 req/s = 2,764,800 req/day
    #   -> 2,764.8 M input + 691.2 M output = 3,456 M tokens/day
    # cost per M tokens = 155.5068493 / 3,456 = 0.044996195
    # prefill is inside the decode figure: input and output costs are not separable (empty, with the reason)
    out = run()
    assert out["capital_usd_per_hour"] == approx(8 * 30000 / 5 / 8760)
    assert out["energy_usd_per_hour"] == approx(1.0)
    assert out["cost_usd_per_hour"] == approx(6.479452054794521)
    assert out["cost_usd_per_day"] == approx(155.50684931506851)
    assert out["capacity_requests_per_s_per_accelerator"] == approx(4.0)
    assert out["served_output_tokens_per_day"] == approx(691.2e6)
    assert out["served_input_tokens_per_day"] == approx(2764.8e6)
    assert out["cost_usd_per_m_tokens"] == approx(155.50684931506851 / 3456)
    assert out["cost_usd_per_m_output_tokens"] is None and out["cost_usd_per_m_input_tokens"] is None
    assert "cannot be split between input and output tokens" in out["warnings"]
    assert out["utilization"] == 1.0
    assert "no demand given" in out["warnings"]
    assert out["revenue_usd_per_day"] is None and out["gross_margin"] is None


def test_g2_cost_of_capital_annuity() -> None:
    # CRF(8%, 5 y) = 0.08 / (1 - 1.08^-5) = 0.08 / (1 - 0.680583197) = 0.250456455 /y
    # capital: 8 x 30,000 x 0.250456455 / 8,760 = 6.861820673 USD/h   (vs 5.479 at 0%)
    # cost: 6.861820673 + 1.0 energy = 7.861820673 USD/h
    out = run(cost_of_capital=0.08)
    assert out["capital_usd_per_hour"] == approx(6.8618206730640114)
    assert out["cost_usd_per_hour"] == approx(7.8618206730640114)


def test_g3_pue_and_colocation() -> None:
    # energy: 8 x 1.25 kW x PUE 1.5 x 0.10 = 1.5 USD/h
    # facility (colocation on provisioned kW): 8 x 1.25 kW x 150 USD/kW-month x 12 / 8,760 h = 2.054794521 USD/h
    # cost: 5.479452055 + 1.5 + 2.054794521 = 9.034246575 USD/h; facility power 10 kW x 1.5 = 15 kW
    out = run(pue=1.5, colocation_usd_per_kw_month=150.0)
    assert out["energy_usd_per_hour"] == approx(1.5)
    assert out["facility_usd_per_hour"] == approx(18000 / 8760)
    assert out["cost_usd_per_hour"] == approx(8 * 30000 / 5 / 8760 + 1.5 + 18000 / 8760)
    assert out["it_power_kw"] == approx(10.0)
    assert out["facility_power_kw"] == approx(15.0)


def test_g4_half_loaded_fleet_idle_power_and_prefill_share() -> None:
    # prefill 4,000 tok/s, decode 1,000 tok/s; output demand 172.8 M/day, input inferred 172.8 x 1000/250 = 691.2 M
    # work = 691.2e6 / 4,000 + 172.8e6 / 1,000 = 172,800 + 172,800 = 345,600 accelerator-s/day
    # utilization = 345,600 / (8 x 86,400 = 691,200) = 0.5; input time share = 172,800 / 345,600 = 0.5
    # average draw = 1.25 x (0.3 + 0.7 x 0.5) = 0.8125 kW; energy = 8 x 0.8125 x 1.0 x 0.10 = 0.65 USD/h
    # cost/day = (5.479452055 + 0.65) x 24 = 147.1068493 USD/day
    # per M input = 147.1068493 x 0.5 / 691.2 = 0.106414; per M output = 147.1068493 x 0.5 / 172.8 = 0.425656
    out = run(input_tokens_per_s_per_accelerator=4000.0, demand_output_tokens_per_day=172.8e6,
              idle_power_fraction=0.3)
    day = (8 * 30000 / 5 / 8760 + 0.65) * 24
    assert out["utilization"] == approx(0.5)
    assert out["input_time_share"] == approx(0.5)
    assert out["served_input_tokens_per_day"] == approx(691.2e6)
    assert out["energy_usd_per_hour"] == approx(0.65)
    assert out["cost_usd_per_day"] == approx(day)
    assert out["cost_usd_per_m_input_tokens"] == approx(day * 0.5 / 691.2)
    assert out["cost_usd_per_m_output_tokens"] == approx(day * 0.5 / 172.8)
    assert out["cost_usd_per_m_tokens"] == approx(day / 864.0)


def test_g5_rented_rent_includes_energy() -> None:
    # rent: 8 x 2.50 USD/h = 20 USD/h = 480 USD/day; no energy, capital, facility or operations
    # served at capacity (as g1): 3,456 M tokens/day -> 480 / 3,456 = 0.138888... USD/M
    out = run(ownership="rent", rent_usd_per_accelerator_hour=2.5, pue=1.4, colocation_usd_per_kw_month=200.0)
    assert out["rent_usd_per_hour"] == approx(20.0)
    assert out["capital_usd_per_hour"] == 0.0 and out["facility_usd_per_hour"] == 0.0
    assert out["energy_usd_per_hour"] == 0.0
    assert out["cost_usd_per_day"] == approx(480.0)
    assert out["cost_usd_per_m_tokens"] == approx(480 / 3456)


def test_g6_rented_bare_metal_pays_energy() -> None:
    # rent 20 USD/h + energy 8 x 1.25 kW x PUE 1.4 x 0.10 USD/kWh = 1.4 USD/h -> 21.4 USD/h
    out = run(ownership="rent", rent_usd_per_accelerator_hour=2.5, rent_includes_energy=False, pue=1.4)
    assert out["energy_usd_per_hour"] == approx(1.4)
    assert out["cost_usd_per_hour"] == approx(21.4)


def test_g7_fleet_sized_from_demand_rounds_up() -> None:
    # output demand 1e9/day, decode 1,000 tok/s (prefill inside) -> work 1e6 accelerator-s/day
    # at peak 1.5: 1.5e6 / 86,400 = 17.36 -> 18 accelerators; utilization = 1e6 / (18 x 86,400) = 0.643004115
    out = run(accelerator_count=None, demand_output_tokens_per_day=1e9, peak_to_average=1.5)
    assert out["accelerators"] == 18
    assert out["utilization"] == approx(1e6 / (18 * 86400))
    assert out["served_output_tokens_per_day"] == approx(1e9)
    assert out["served_input_tokens_per_day"] == approx(4e9)  # inferred: 1e9 x 1000 / 250


def test_g8_exact_fit_does_not_round_up() -> None:
    # work = 864e6 / 1,000 = 864,000 accelerator-s/day = exactly 10 accelerator-days -> 10, utilization 1
    out = run(accelerator_count=None, demand_output_tokens_per_day=864e6)
    assert out["accelerators"] == 10
    assert out["utilization"] == approx(1.0)


def test_g9_prefix_cache_hits_skip_prefill_and_bill_cached_price() -> None:
    # I = 2,000, O = 200, h = 0.5, P = 5,000, D = 1,000:
    # one request = 2,000 x 0.5 / 5,000 + 200 / 1,000 = 0.2 + 0.2 = 0.4 s -> 2.5 requests/s per accelerator
    # 8 accelerators all day: 8 x 86,400 x 2.5 = 1,728,000 req -> 3,456 M input (1,728 M cached), 345.6 M output
    # revenue = (1,728 x 1.00 + 1,728 x 0.10 + 345.6 x 4.00) USD = 1,728 + 172.8 + 1,382.4 = 3,283.2 USD/day
    out = run(input_tokens_per_request=2000.0, output_tokens_per_request=200.0, prefix_cache_hit_rate=0.5,
              input_tokens_per_s_per_accelerator=5000.0, price_usd_per_m_input_tokens=1.0,
              price_usd_per_m_cached_input_tokens=0.1, price_usd_per_m_output_tokens=4.0)
    assert out["capacity_requests_per_s_per_accelerator"] == approx(2.5)
    assert out["served_cached_input_tokens_per_day"] == approx(1728e6)
    assert out["served_output_tokens_per_day"] == approx(345.6e6)
    assert out["revenue_usd_per_day"] == approx(3283.2)
    assert out["input_time_share"] == approx(0.5)


def test_g10_margins_and_break_even() -> None:
    # g1 fleet (cost 155.5068493 USD/day at utilization 1) selling output at 0.50 and input at 0.02 USD/M:
    # revenue = 2,764.8 x 0.02 + 691.2 x 0.50 = 55.296 + 345.6 = 400.896 USD/day
    # cost_profit_margin = (400.896 - 155.5068493) / 155.5068493 = 1.578009...
    # gross_margin = (400.896 - 155.5068493) / 400.896 = 0.612099...
    # break-even output price, input held: (155.5068493 - 55.296) / 691.2 x 1e6 / 1e6 = 0.144981 USD/M
    # break-even utilization: idle fraction 1 -> all cost fixed: 155.5068493 / 400.896 = 0.387897
    out = run(price_usd_per_m_input_tokens=0.02, price_usd_per_m_output_tokens=0.5)
    cost = 155.50684931506851
    assert out["revenue_usd_per_day"] == approx(400.896)
    assert out["cost_profit_margin"] == approx((400.896 - cost) / cost)
    assert out["gross_margin"] == approx((400.896 - cost) / 400.896)
    assert out["profit_usd_per_day"] == approx(400.896 - cost)
    assert out["break_even_price_usd_per_m_output_tokens"] == approx((cost - 55.296) / 691.2)
    assert out["break_even_utilization"] == approx(cost / 400.896)


def test_g11_demand_above_fixed_fleet_is_capped_and_warned() -> None:
    # capacity 691.2 M output/day (g1); demand 1,000 M output/day -> served fraction 0.6912, utilization 1
    out = run(demand_output_tokens_per_day=1e9)
    assert out["served_output_tokens_per_day"] == approx(691.2e6)
    assert out["utilization"] == 1.0
    assert "exceeds the fleet's capacity" in out["warnings"]


def test_g12_break_even_utilization_with_load_dependent_energy() -> None:
    # own, r = 0, idle 0.5, PUE 1, 0.10 USD/kWh, 8 x 1.25 kW, demand half the capacity (u = 0.5)
    # energy above idle at full load: 8 x 1.25 x 0.5 x 0.10 x 24 = 12 USD/day; at u = 0.5: 6 USD/day
    # idle energy 8 x 1.25 x 0.5 x 0.10 x 24 = 12 USD/day; capital 5.479452055 x 24 = 131.5068493 USD/day
    # fixed = 131.5068493 + 12 = 143.5068493; output price 0.5 USD/M, input free: revenue at u=0.5 is
    # 345.6 M x 0.5 = 172.8 USD/day -> at full load 345.6 USD/day
    # u* = 143.5068493 / (345.6 - 12) = 0.430176
    out = run(idle_power_fraction=0.5, demand_output_tokens_per_day=345.6e6, price_usd_per_m_output_tokens=0.5)
    assert out["utilization"] == approx(0.5)
    assert out["revenue_usd_per_day"] == approx(172.8)
    assert out["break_even_utilization"] == approx((8 * 30000 / 5 / 8760 * 24 + 12) / (345.6 - 12))


def test_g13_maintenance_software_and_own_facility() -> None:
    # operations: 8 x (30,000 x 0.05 + 1,000) / 8,760 = 8 x 2,500 / 8,760 = 2.283105023 USD/h
    # own facility: 10,000 USD/kW over 20 y at 0% -> 500 USD/kW-y; 8 x 1.25 kW x 500 / 8,760 = 0.570776256 USD/h
    out = run(maintenance_fraction_per_year=0.05, software_usd_per_accelerator_year=1000.0,
              facility_capex_usd_per_kw=10000.0, facility_depreciation_years=20.0)
    assert out["operations_usd_per_hour"] == approx(20000 / 8760)
    assert out["facility_usd_per_hour"] == approx(5000 / 8760)


def test_explain_substitutes_the_numbers() -> None:
    # the derivation of g2's capital charge, with its numbers, and ending at the computed value
    text = economics.explain_text({**BASE, "cost_of_capital": 0.08})
    # CRF(8 %, 5 y) = 0.250456 (6 significant digits); 8 x 30,000 x 0.250456 / 8,760 = 6.8618 USD/h
    assert "crf = cost_of_capital / (1 - (1 + cost_of_capital) ^ (-depreciation_years))" in text
    assert "= 0.08 / (1 - (1 + 0.08) ^ (-5)) = 0.2505 1/year" in text
    assert "capital_usd_per_hour = accelerators x accelerator_price_usd x crf / 8,760 h/year" in text
    assert "= 8 x 30,000 x 0.250456 / 8,760 = 6.862 USD/h" in text
    assert "cost_usd_per_m_tokens" in text
