"""The planner with rent tiers, time-of-use electricity and carbon (#28): hand-worked plans.

Every case serves 100-token requests (no input) on systems of 100 token/s, so one system carries 1 request/s; money
at 0 % over one year, no hosting, maintenance or headroom; PUE 1 and no idle draw, so a system's kWh is its load.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from economics.schema.scenario import Scenario
from economics.studies import planner
from economics.studies.planner import Candidate, PlanSettings

BASE = dict(name="worked", input_tokens_per_request=0, output_tokens_per_request=100, cost_of_capital=0,
            depreciation_years=1, maintenance_fraction_per_year=0, colocation_usd_per_kw_month=0,
            facility_capex_usd_per_kw=0, software_usd_per_accelerator_year=0, headroom=0, pue=1.0,
            idle_power_fraction=0, rent_includes_energy=True)
DIURNAL = " ".join(["0.5"] * 12 + ["1.5"] * 12)
"""Hours 0-11 at half the average, 12-23 at 1.5 x: at 2 request/s on average, 1 system by night and 3 by day."""
TWO_DAYS = dict(demand_output_tokens_per_day=17_280_000, peak_to_average=1.5)  # 2 req/s x 100 x 86,400
SETTINGS = PlanSettings(demand_profile=DIURNAL, spares=False)


def box(name: str, ownership: str, **kw: float) -> Candidate:
    return Candidate(name, ownership, accelerators_per_system=1, system_power_kw=kw.pop("kw", 1.0),
                     output_tokens_per_s_per_system=100.0, accelerators_per_replica=1, roles=("aggregated",), **kw)


RENTED = box("gpu", "rent", rent_usd_per_system_hour=20.0)
TIERED = Scenario(**BASE, **TWO_DAYS, electricity_usd_per_kwh=0, reserved_discount=0.4, spot_discount=0.6,
                  spot_mtbi_hours=24, spot_recovery_hours=0.5)


def tiers_plan(tiers: str) -> planner.PlanResult:
    r = planner.plan(TIERED, replace(SETTINGS, rent_tiers=tiers), [RENTED])
    assert r.feasible, r.reason
    return r


def test_on_demand_alone_is_the_plan_before_tiers() -> None:
    # 12 h x 1 + 12 h x 3 system-hours at 20 USD = 240 + 720 = 960 USD a day; the scenario's tier (on demand)
    r = tiers_plan("")
    assert r.summary["cost_usd_per_day"] == pytest.approx(960.0, rel=1e-9)
    assert r.plan["tier"].tolist() == ["on_demand"] and r.plan["name"].tolist() == ["gpu"]


def test_a_reservation_for_the_peak_pays_its_idle_hours() -> None:
    # reserved at 20 x (1 - 0.4) = 12 USD/h: 3 systems x 24 h x 12 = 864 USD a day; they carry 48 system-hours of
    # the 72 paid, so 24 idle hours x 12 = 288 USD a day are paid for nothing
    r = tiers_plan("reserved")
    assert r.summary["cost_usd_per_day"] == pytest.approx(864.0, rel=1e-9)
    assert r.plan["systems"].tolist() == [3] and r.plan["tier"].tolist() == ["reserved"]
    assert r.summary["reserved_idle_usd_per_day"] == pytest.approx(288.0, rel=1e-9)


def test_a_reserved_base_and_on_demand_peak_is_cheapest() -> None:
    # a reserved system pays 24 x 12 = 288 a day; on demand it costs 20 an hour used, so reserving beats renting
    # for a system used more than 288 / 20 = 14.4 h a day: the base (used 24 h) is reserved, the two day-time
    # systems (12 h) on demand: 288 + 2 x 12 x 20 = 768 USD a day (all on demand 960, all reserved 864)
    r = tiers_plan("on_demand;reserved")
    assert r.summary["cost_usd_per_day"] == pytest.approx(768.0, rel=1e-9)
    by_tier = dict(zip(r.plan["tier"], r.plan["systems"], strict=True))
    assert by_tier == {"reserved": 1, "on_demand": 2}
    assert r.hours["aggregated_systems_reserved"].tolist() == [1.0] * 24
    assert r.hours["aggregated_systems_on_demand"].tolist() == [0.0] * 12 + [2.0] * 12
    assert r.summary["reserved_idle_usd_per_day"] == pytest.approx(0.0, abs=1e-9)


def test_spot_needs_the_spare_systems_its_interruptions_imply() -> None:
    # availability 24 / (24 + 0.5) = 0.979592: 1 request/s needs 1 / 0.979592 = 1.0208 -> 2 systems, 3 need
    # 3.0625 -> 4; at 20 x (1 - 0.6) = 8 USD/h: 12 x 2 x 8 + 12 x 4 x 8 = 192 + 384 = 576 USD a day (on demand
    # with 1 and 3 systems: 960)
    r = tiers_plan("on_demand;spot")
    assert r.summary["cost_usd_per_day"] == pytest.approx(576.0, rel=1e-9)
    assert r.hours["aggregated_systems_spot"].tolist() == [2.0] * 12 + [4.0] * 12
    assert r.plan["availability"].iloc[0] == pytest.approx(24 / 24.5, rel=1e-12)


def test_spot_carries_no_more_than_its_share_of_each_hour() -> None:
    # at most half of each hour on spot. Night (1 request/s): a spot system for half and an on-demand one for the
    # rest (8 + 20) costs more than one on-demand system alone (20). Day (3 request/s): two spot systems carry
    # 1.5 (16) and two on-demand the other 1.5 (40): 56, against 60 for three on demand or 68 for one spot and three
    # on demand. 12 x 20 + 12 x 56 = 912 USD a day (576 with no share limit)
    r = planner.plan(TIERED, replace(SETTINGS, rent_tiers="on_demand;spot", max_spot_share=0.5), [RENTED])
    assert r.feasible, r.reason
    assert r.summary["cost_usd_per_day"] == pytest.approx(912.0, rel=1e-9)
    assert r.hours["aggregated_systems_spot"].tolist() == [0.0] * 12 + [2.0] * 12
    assert r.hours["aggregated_systems_on_demand"].tolist() == [1.0] * 12 + [2.0] * 12


def test_a_tier_price_the_candidate_gives_is_used() -> None:
    own_price = replace(RENTED, reserved_rent_usd_per_system_hour=15.0)
    r = planner.plan(TIERED, replace(SETTINGS, rent_tiers="reserved"), [own_price])
    assert r.summary["cost_usd_per_day"] == pytest.approx(3 * 24 * 15.0, rel=1e-9)  # 1,080, not 864


def test_rent_tiers_are_read_and_refused_by_name() -> None:
    assert planner.settings_from_row({"rent_tiers": "Spot;on_demand"}).rent_tiers == "on_demand;spot"
    with pytest.raises(ValueError, match="rent_tiers: 'monthly' is not a tier"):
        planner.settings_from_row({"rent_tiers": "reserved;monthly"})


# --- time-of-use electricity --------------------------------------------------------------------------------------

OWN = box("own", "own", price_usd_per_system=3650.0)  # 3,650 USD over 365 days: 10 USD a day
RENT_WITH_ENERGY = box("rent", "rent", rent_usd_per_system_hour=1.0)
TARIFF = " ".join(["0.05"] * 16 + ["0.25"] * 8)
"""0.05 USD/kWh from 0:00 to 16:00, 0.25 after; the day's mean is (16 x 0.05 + 8 x 0.25) / 24 = 2.8 / 24."""


def tou_plan(cands: list[Candidate], **prices: object) -> planner.PlanResult:
    r = planner.plan(Scenario(**BASE, **TWO_DAYS, **prices), SETTINGS, cands)
    assert r.feasible, r.reason
    return r


def test_a_two_price_tariff_costs_the_hour_by_hour_sum() -> None:
    # 3 owned systems, 30 USD a day; their kWh: 1 kW x 12 h at 0.05 (0.6), 3 kW x 4 h at 0.05 (0.6) and 3 kW x
    # 8 h at 0.25 (6.0) = 7.2 USD a day: 37.2. At the flat mean price the 48 kWh cost 48 x 2.8 / 24 = 5.6: 35.6
    assert tou_plan([OWN], electricity_tariff=TARIFF).summary["cost_usd_per_day"] == pytest.approx(37.2, rel=1e-9)
    assert tou_plan([OWN], electricity_usd_per_kwh=2.8 / 24).summary["cost_usd_per_day"] == pytest.approx(
        35.6, rel=1e-9)


def test_dear_hours_move_the_day_peak_to_rented_capacity() -> None:
    # a second or third owned system is busy hours 12-23: 10 USD a day plus its energy, 4 x 0.05 + 8 x 0.25 = 2.2
    # under the tariff (1.4 at the flat mean) against 12 h x 1 USD rented with energy included. Flat: owning wins
    # (11.4 < 12), three owned, 35.6; tariff: renting wins (12.2 > 12): one owned (10 + 24 h x 1 kW at the
    # tariff, 2.8) and two rented (24): 36.8 USD a day, below the 37.2 of owning three
    flat = tou_plan([OWN, RENT_WITH_ENERGY], electricity_usd_per_kwh=2.8 / 24)
    assert flat.summary["cost_usd_per_day"] == pytest.approx(35.6, rel=1e-9) and flat.plan["name"].tolist() == ["own"]
    tou = tou_plan([OWN, RENT_WITH_ENERGY], electricity_tariff=TARIFF)
    assert tou.summary["cost_usd_per_day"] == pytest.approx(36.8, rel=1e-9)
    assert dict(zip(tou.plan["name"], tou.plan["systems"], strict=True)) == {"own": 1, "rent": 2}
    assert tou.hours["usd_per_kwh"].tolist() == [0.05] * 16 + [0.25] * 8


# --- carbon -------------------------------------------------------------------------------------------------------


def test_a_plans_emissions_operational_and_embodied() -> None:
    # 48 kWh a day at 400 g/kWh = 19.2 kg; 3 systems of 365 kgCO2e over 1 year = 3 kg a day: 22.2 kg a day,
    # 22.2 x 365 / 1000 = 8.103 t a year, over 17.28 M tokens a day 1.284722 kg per M tokens
    r = tou_plan([replace(OWN, embodied_kgco2e_per_system=365.0)], electricity_usd_per_kwh=0.1,
                 grid_carbon_g_per_kwh=400)
    s = r.summary
    assert (s["operational_kgco2e_per_day"], s["embodied_kgco2e_per_day"]) == pytest.approx((19.2, 3.0), rel=1e-9)
    assert s["tco2e_per_year"] == pytest.approx(8.103, rel=1e-9)
    assert s["kgco2e_per_m_tokens"] == pytest.approx(22.2 / 17.28, rel=1e-9)
    assert s["carbon_usd_per_day"] == 0.0 and r.plan["kgco2e_per_day"].sum() == pytest.approx(22.2, rel=1e-9)


def test_no_grid_intensity_gives_no_operational_figure() -> None:
    r = tou_plan([OWN], electricity_usd_per_kwh=0.1)
    assert r.summary["operational_kgco2e_per_day"] is None and r.summary["embodied_kgco2e_per_day"] == 0.0
    assert r.summary["tco2e_per_year"] is None and r.plan["kgco2e_per_day"].isna().all()


# a dirty box (1 kW, 10 USD a day) and a clean one (0.5 kW, 12 USD a day) for 1 request/s all day at 0.1 USD/kWh
# and 400 g/kWh: a costs 10 + 2.4 = 12.4 and emits 9.6 kg a day (3.504 t a year); b 12 + 1.2 = 13.2 and 4.8 kg
# (1.752 t). b is cheaper once 0.8 USD < 4.8 kg x p: p > 166.67 USD/t
DIRTY = box("a", "own", price_usd_per_system=3650.0)
CLEAN = box("b", "own", price_usd_per_system=4380.0, kw=0.5)
FLAT_DAY = Scenario(**{**BASE, "demand_output_tokens_per_day": 8_640_000, "peak_to_average": 1},
                    electricity_usd_per_kwh=0.1, grid_carbon_g_per_kwh=400)
FLAT = PlanSettings(demand_profile="flat", spares=False)


def test_the_cost_against_emissions_frontier() -> None:
    f = planner.frontier_carbon(FLAT_DAY, FLAT, [0.0, 100.0, 200.0], candidates=[DIRTY, CLEAN])
    assert f["cost_before_carbon_usd_per_day"].tolist() == pytest.approx([12.4, 12.4, 13.2], rel=1e-9)
    assert f["tco2e_per_year"].tolist() == pytest.approx([3.504, 3.504, 1.752], rel=1e-9)
    # at 100 USD/t the dirty box pays 9.6 kg x 0.1 = 0.96 USD of carbon: 13.36; at 200 the clean one 4.8 x 0.2 =
    # 0.96: 14.16 (the dirty one would pay 12.4 + 1.92 = 14.32)
    assert f["cost_usd_per_day"].tolist() == pytest.approx([12.4, 13.36, 14.16], rel=1e-9)


def test_a_carbon_cap_is_met_at_its_shadow_price() -> None:
    r = planner.plan(FLAT_DAY, replace(FLAT, carbon_cap_tco2e_per_year=2.5), [DIRTY, CLEAN])
    assert r.plan["name"].tolist() == ["b"]
    # costs at the scenario's own carbon price (none): 13.2 USD a day; the price that met the cap lies within
    # the halving's step (4 x 64 - 64 = 192 USD/t over 2^10) above the 166.67 at which b becomes the cheaper
    assert r.summary["cost_usd_per_day"] == pytest.approx(13.2, rel=1e-9) and r.summary["carbon_usd_per_day"] == 0.0
    assert 0.8 / 4.8 * 1000 <= r.summary["carbon_cap_usd_per_tonne"] <= 0.8 / 4.8 * 1000 + 192 / 2**10
    assert any("binds" in n for n in r.notes)
    loose = planner.plan(FLAT_DAY, replace(FLAT, carbon_cap_tco2e_per_year=4.0), [DIRTY, CLEAN])
    assert loose.plan["name"].tolist() == ["a"] and any("not binding" in n for n in loose.notes)


def test_a_cap_no_plan_meets_is_said_with_the_numbers() -> None:
    r = planner.plan(FLAT_DAY, replace(FLAT, carbon_cap_tco2e_per_year=1.0), [DIRTY, CLEAN])
    assert not r.feasible
    assert r.reason.startswith("carbon_cap_tco2e_per_year: no plan emits under 1 tCO2e a year") and "1.752" in r.reason


def test_a_cap_without_a_grid_intensity_is_refused_by_name() -> None:
    s = FLAT_DAY.model_copy(update={"grid_carbon_g_per_kwh": None})
    r = planner.plan(s, replace(FLAT, carbon_cap_tco2e_per_year=2.5), [DIRTY, CLEAN])
    assert not r.feasible and r.reason.startswith("carbon_cap_tco2e_per_year: a cap needs the grid's intensity")
    assert planner.plan(s, FLAT, [DIRTY]).summary["kgco2e_per_day"] is None  # not counted, not zero


def test_a_grid_region_alone_gives_the_plan_its_intensity() -> None:
    # France at 44.2 g/kWh (Ember 2024): the dirty box's 24 kWh a day emit 24 x 0.0442 = 1.0608 kg
    r = planner.plan(FLAT_DAY.model_copy(update={"grid_carbon_g_per_kwh": None, "grid_region": "fr"}), FLAT, [DIRTY])
    assert r.summary["operational_kgco2e_per_day"] == pytest.approx(24 * 0.0442, rel=1e-9)
    with pytest.raises(ValueError, match="grid_region: unknown id 'atlantis'"):
        planner.plan(FLAT_DAY.model_copy(update={"grid_region": "atlantis", "grid_carbon_g_per_kwh": None}), FLAT,
                     [DIRTY])
