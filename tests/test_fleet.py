"""Fleet sizing, racks, cooling and site power: hand-worked cases, the comparison helper, and invariants."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from economics.studies.compare import compare_accelerators

BASE: dict[str, Any] = {
    "name": "fleet", "ownership": "own", "accelerator_price_usd": 30000.0, "cost_of_capital": 0.0,
    "depreciation_years": 5.0, "maintenance_fraction_per_year": 0.0, "electricity_usd_per_kwh": 0.1,
    "idle_power_fraction": 1.0, "colocation_usd_per_kw_month": 0.0, "facility_depreciation_years": 20.0,
    "input_tokens_per_request": 1000.0, "output_tokens_per_request": 250.0, "prefix_cache_hit_rate": 0.0,
    "output_tokens_per_s_per_accelerator": 1000.0, "peak_to_average": 1.0, "headroom": 0.0,
    "facility_cooling": "air",
}


def run(**changes: Any) -> dict[str, Any]:
    return economics.evaluate_scenario({**BASE, **changes})


@pytest.mark.parametrize("accelerator", ["h100-sxm", "h200-sxm"])
def test_air_facility_hosts_hgx_hopper(accelerator: str) -> None:
    # 64 GPUs = 8 HGX systems of 10.2 kW (DGX H100/H200 maximum); air racks with containment: 30 kW
    # per rack: min(floor(30 / 10.2) = 2, floor(42 U / 8 U) = 5) = 2 systems -> 4 racks
    # IT 64 x 1.275 kW = 81.6 kW -> 20.4 kW per rack; PUE follows air cooling: 1.5 -> 122.4 kW facility
    out = run(accelerator=accelerator, accelerator_count=64)
    assert out["feasible"]
    assert (out["systems"], out["systems_per_rack"], out["racks"]) == (8, 2, 4)
    assert out["it_power_kw"] == pytest.approx(81.6)
    assert out["kw_per_rack"] == pytest.approx(20.4)
    assert out["pue_effective"] == pytest.approx(1.5) and out["facility_power_kw"] == pytest.approx(122.4)


def test_air_facility_cannot_host_gb200_nvl72() -> None:
    # GB200 NVL72 needs liquid cooling and draws 120 kW per rack-scale system, over a 30 kW air rack
    out = run(accelerator="gb200-nvl72", accelerator_count=72, accelerator_price_usd=41667.0)
    assert not out["feasible"]
    reason = out["infeasible_reason"]
    assert "cooling: gb200-nvl72 requires liquid cooling and the facility is air-cooled" in reason
    assert "rack power: one gb200-nvl72 system draws 120 kW, over the 30 kW rack limit" in reason
    assert out["racks"] is None  # no rack can hold it: not a number of racks


def test_the_same_gb200_with_a_liquid_retrofit() -> None:
    # retrofit: liquid racks (150 kW) hold the 120 kW system, 1 per rack; PUE follows liquid: 1.15
    # IT 72 x 1.6667 kW = 120.0024 kW; retrofit capex 120.0024 / 1,000 MW x 2,000,000 USD/MW = 240,004.8 USD
    # amortised at 0% over 20 years: 240,004.8 / 20 / 8,760 = 1.369890 USD/h
    out = run(accelerator="gb200-nvl72", accelerator_count=72, accelerator_price_usd=41667.0,
              allow_liquid_retrofit=True, liquid_retrofit_usd_per_mw=2e6)
    assert out["feasible"], out["infeasible_reason"]
    assert (out["systems"], out["racks"]) == (1, 1)
    assert out["pue_effective"] == pytest.approx(1.15)
    it_kw = 72 * 1.6667
    assert out["cooling_retrofit_usd_per_hour"] == pytest.approx(it_kw / 1000 * 2e6 / 20 / 8760, rel=1e-12)
    capital = 72 * 41667.0 / 5 / 8760
    energy = it_kw * 1.15 * 0.1
    assert out["cost_usd_per_hour"] == pytest.approx(capital + energy + it_kw / 1000 * 2e6 / 20 / 8760, rel=1e-12)


def test_site_power_limit_states_the_shortfall() -> None:
    # 64 H100: IT 81.6 kW x PUE 1.5 = 122.4 kW = 0.1224 MW > 0.1 MW available: short by 0.0224 MW
    out = run(accelerator="h100-sxm", accelerator_count=64, site_power_mw=0.1)
    assert not out["feasible"]
    assert out["infeasible_reason"] == ("site power: the fleet needs 0.1224 MW (IT 0.0816 MW x PUE 1.5) but 0.1 MW "
                                        "is available; short by 0.0224 MW")
    assert run(accelerator="h100-sxm", accelerator_count=64, site_power_mw=0.1224)["feasible"]


def test_demand_for_exactly_n_systems_and_for_a_fraction_more() -> None:
    # 8 systems x 8 GPUs = 64 GPUs x 86,400 s x 1,000 output tokens/s = 5,529,600,000 output tokens/day:
    # exactly 64 GPUs
    exact = run(accelerator="h100-sxm", demand_output_tokens_per_day=5_529_600_000)
    assert (exact["accelerators"], exact["systems"]) == (64, 8)
    assert exact["utilization"] == pytest.approx(1.0)
    # 1% more needs 64.64 GPUs -> 65 -> whole systems: 9 systems = 72 GPUs, utilization 1.01 x 64 / 72
    more = run(accelerator="h100-sxm", demand_output_tokens_per_day=5_529_600_000 * 1.01)
    assert (more["accelerators"], more["systems"]) == (72, 9)
    assert more["utilization"] == pytest.approx(64.64 / 72)


def test_headroom_and_requests_per_second() -> None:
    # 10% headroom on an exact 64: 70.4 -> 71 -> 72 GPUs (9 systems)
    assert run(demand_output_tokens_per_day=5_529_600_000, headroom=0.1)["accelerators"] == 72
    # 10 requests/s x 250 output tokens x 86,400 s = 216,000,000 output and 864,000,000 input tokens a day
    out = run(demand_requests_per_s=10.0)
    assert out["served_output_tokens_per_day"] == pytest.approx(216e6)
    assert out["served_input_tokens_per_day"] == pytest.approx(864e6)


def test_energy_per_token_and_tokens_per_megawatt() -> None:
    # 8 H100 busy all day: 4 requests/s each (250 / 1,000 s) -> 8 x 86,400 x 4 x 1,250 = 3.456e9 tokens/day
    # facility draw 8 x 1.275 kW x 1.5 = 15.3 kW -> 15,300 W x 86,400 s / 3.456e9 = 0.3825 J/token
    # 40,000 tokens/s / 0.0153 MW = 2,614,379 tokens/s per MW
    out = run(accelerator="h100-sxm", accelerator_count=8)
    assert out["joules_per_token"] == pytest.approx(0.3825)
    assert out["tokens_per_s_per_mw"] == pytest.approx(40000 / 0.0153)
    assert out["energy_mwh_per_year"] == pytest.approx(15.3 * 8760 / 1000)


def test_hybrid_facility_weights_pue_and_hosts_liquid_hardware() -> None:
    out = run(accelerator="gb200-nvl72", accelerator_count=72, accelerator_price_usd=41667.0,
              facility_cooling="hybrid", liquid_cooling_share=0.4)
    assert out["feasible"]
    assert out["pue_effective"] == pytest.approx(0.4 * 1.15 + 0.6 * 1.5)


def test_cloud_rent_is_not_bound_by_the_users_facility() -> None:
    out = run(accelerator="gb200-nvl72", accelerator_count=72, ownership="rent", site_power_mw=0.01)
    assert out["feasible"]


def test_comparison_ranks_feasible_options_by_cost() -> None:
    base = {**BASE, "demand_output_tokens_per_day": 5e9, "output_tokens_per_s_per_accelerator": None,
            "model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 20.0}
    table = compare_accelerators(base, ["h100-sxm", "h200-sxm", "b200", "gb200-nvl72"],
                                 {"gb200-nvl72": {"accelerator_price_usd": 41667.0}})
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert table.iloc[-1]["accelerator"] == "gb200-nvl72" and not table.iloc[-1]["feasible"]
    feasible = table[table["feasible"].astype(bool)]
    assert feasible["cost_usd_per_m_tokens"].is_monotonic_increasing
    assert set(feasible["accelerator"]) == {"h100-sxm", "h200-sxm", "b200"}


# --- invariants ----------------------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x"]), st.floats(1e6, 1e12),
       st.floats(1.0, 4.0), st.floats(0.0, 0.5), st.floats(50.0, 20000.0), st.booleans())
def test_more_demand_never_means_a_smaller_fleet(accelerator: str, demand: float, peak: float, headroom: float,
                                                 throughput: float, whole: bool) -> None:
    rows = pd.DataFrame([{**BASE, "accelerator": accelerator, "demand_output_tokens_per_day": d,
                          "peak_to_average": peak, "headroom": headroom, "round_to_whole_systems": whole,
                          "output_tokens_per_s_per_accelerator": throughput} for d in (demand, 2 * demand)])
    out = economics.evaluate(rows)
    small, big = out.iloc[0], out.iloc[1]
    assert big["accelerators"] >= small["accelerators"] and big["systems"] >= small["systems"]
    for r in (small, big):
        assert r["accelerators"] * 86400 >= r["work_accelerator_s_per_day"] * peak * (1 + headroom) * (1 - 1e-9)
        assert 0 < r["utilization"] <= 1
        assert r["racks"] * r["systems_per_rack"] >= r["systems"]


def test_a_rack_of_72_8_kw_holds_14_systems_of_5_2_kw_in_the_engine_and_the_planners_function() -> None:
    # 72.8 kW / 5.2 kW = 14 systems a rack (13.999999999999998 in floating point, so an exact floor gave 13 and 2
    # racks); 112 accelerators / 8 a system = 14 systems = 1 rack. ceil and floor share one named tolerance.
    from economics.domain import fleet
    from economics.domain.formula import ROUNDING_TOLERANCE, floor

    assert 72.8 / 5.2 < 14 and float(floor(72.8 / 5.2)) == 14.0 and ROUNDING_TOLERANCE == 1e-12
    s = economics.default_scenario().model_copy(update={
        "accelerator_count": 112, "system_power_kw": 5.2, "rack_power_kw": 72.8, "system_rack_units": 1,
        "demand_output_tokens_per_day": None})
    r = economics.evaluate_scenario(s)
    assert (r["systems"], r["racks"]) == (14, 1)
    assert float(fleet.systems_per_rack(5.2, 72.8, 1, 42, False)) == 14.0
    assert float(fleet.racks_needed(14, fleet.systems_per_rack(5.2, 72.8, 1, 42, False))) == 1.0
    assert "main_systems_per_rack = min(floor(rack_power_kw_effective / system_power_kw_effective)" in \
        economics.explain_text(s)
