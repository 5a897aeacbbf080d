"""Rent tiers, time-of-use electricity and carbon (#28): hand-worked cases, the explain lines, bad input, and
byte-identity with the results before these fields existed.

The worked cases share one fleet: H100 at 1,000 output tokens/s per accelerator, 1,000 input + 1,000 output tokens
per request, so 1 request/s per accelerator; 1e9 input + 1e9 output tokens a day = 1e6 requests a day = 11.574/s on
average, 23.148/s at the default peak_to_average of 2, 24 accelerators (three 8-GPU servers). The work is 1e6
accelerator-seconds a day, so the utilization is 1e6 / (24 x 86,400) = 0.482253.
"""

from __future__ import annotations

import re
import subprocess
import sys
from io import BytesIO
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics import ScenarioError, catalog, evaluate_scenario, explain_text
from economics.domain import capacity as cap
from economics.domain import carbon, cost, fleet, revenue
from economics.domain import sessions as ses
from economics.domain.throughput import RANGE_ENDS
from economics.schema.outputs import NUMERIC_OUTPUTS
from economics.studies.day import hours_table

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "pre_tiers"
BASE: dict[str, Any] = dict(name="worked", accelerator="h100-sxm", ownership="rent",
                            output_tokens_per_s_per_accelerator=1000, input_tokens_per_request=1000,
                            output_tokens_per_request=1000, demand_input_tokens_per_day=1e9,
                            demand_output_tokens_per_day=1e9, rent_usd_per_accelerator_hour=2.0)
OWN = dict(BASE, ownership="own")
U = 1e6 / (24 * 86_400)
TWO_PRICES = " ".join(["0.05"] * 12 + ["0.15"] * 12)
EVENING = " ".join(["1"] * 12 + ["3"] * 12)  # relative load: hours 0-11 at 0.5 x the average, 12-23 at 1.5 x


def run(**changes: Any) -> dict[str, Any]:
    return evaluate_scenario(dict(BASE, **changes))


def test_on_demand_is_the_worked_fleet() -> None:
    r = run()
    assert r["accelerators"] == 24
    assert r["utilization"] == pytest.approx(U, rel=1e-12)
    assert r["rent_usd_per_hour"] == pytest.approx(48.0)  # 24 x 2.00
    assert r["reserved_idle_usd_per_day"] is None and r["spot_availability"] is None


def test_a_reservation_sized_for_the_peak_pays_for_its_idle_hours() -> None:
    r = run(rent_tier="reserved")  # the catalog's reserved H100 rent: 1.30 USD/h (InferenceX costr, 3-year)
    assert r["rent_usd_per_hour"] == pytest.approx(31.2)                  # 24 x 1.30
    # 31.2 USD/h x 24 h x (1 - 0.482253) = 387.689 USD a day paid for hours no request uses
    assert r["reserved_idle_usd_per_day"] == pytest.approx(31.2 * 24 * (1 - U), rel=1e-12)
    assert r["reserved_idle_usd_per_day"] == pytest.approx(387.6889, abs=1e-4)
    assert r["reserved_commitment_usd"] == pytest.approx(819_936.0)       # 31.2 x 8,760 h x 3 years
    assert r["cost_usd_per_m_tokens"] == pytest.approx(0.3744)            # 31.2 x 24 / 2,000 M tokens


def test_a_reserved_price_from_the_discount_when_the_catalog_has_none() -> None:
    # the catalog has no reserved A100 rent: the on-demand rent less the reserved discount, 2.00 x (1 - 0.5) = 1.00
    r = run(accelerator="a100-sxm", rent_tier="reserved", reserved_discount=0.5)
    assert r["reserved_rent_usd_per_accelerator_hour"] is None  # echoed as given; the line is in explain
    assert r["rent_usd_per_hour"] == pytest.approx(24.0)  # 24 x 1.00
    # where the catalog has one (H100: 1.30), it is used whatever the discount
    assert run(rent_tier="reserved", reserved_discount=0.5)["rent_usd_per_hour"] == pytest.approx(31.2)


def test_spot_needs_the_spare_capacity_its_interruptions_imply() -> None:
    # 12 requests/s on average (1.0368e9 tokens each way a day), 24/s at peak: 24 accelerators exactly on demand;
    # spot at 24 h between interruptions and 0.25 h to recover serves 24 / 24.25 = 0.989691 of its hours, so the
    # peak needs 24 / 0.989691 = 24.25 -> 25 accelerators (whole accelerators, not servers)
    shape = dict(demand_input_tokens_per_day=1.0368e9, demand_output_tokens_per_day=1.0368e9,
                 round_to_whole_systems=False)
    assert run(**shape)["accelerators"] == 24
    r = run(**shape, rent_tier="spot")
    assert r["spot_availability"] == pytest.approx(24 / 24.25, rel=1e-12)
    assert r["accelerators"] == 25
    assert r["rent_usd_per_hour"] == pytest.approx(25 * 2.0 * (1 - 0.43))  # 28.50: rent less the 43 % spot discount
    assert r["cost_usd_per_m_tokens"] == pytest.approx(28.5 * 24 / 2073.6)  # 2 x 1,036.8 M tokens a day
    assert run(**shape, rent_tier="spot", spot_recovery_hours=0.0)["accelerators"] == 24


def test_a_diurnal_demand_under_a_two_price_tariff_costs_the_hour_by_hour_sum() -> None:
    r = evaluate_scenario(dict(OWN, electricity_tariff=TWO_PRICES, demand_profile=EVENING))
    # draw share per hour = 0.3 + 0.7 x utilization x load: 0.468789 at night (load 0.5), 0.806366 by day (1.5)
    night, day = 0.3 + 0.7 * U * 0.5, 0.3 + 0.7 * U * 1.5
    # the day: 12 h x 0.468789 x 0.05 + 12 h x 0.806366 x 0.15 = 1.732732 full-load hours x USD/kWh;
    # x 24 x 1.275 kW x PUE 1.5 = 45.9 kW / 24 h = 3.31385 USD/h
    hours_sum = 12 * night * 0.05 + 12 * day * 0.15
    assert hours_sum == pytest.approx(1.732732, abs=1e-6)
    assert r["energy_usd_per_hour"] == pytest.approx(45.9 * hours_sum / 24, rel=1e-12)
    assert r["energy_usd_per_hour"] == pytest.approx(3.31385, abs=1e-5)
    # the same day at the tariff's flat average of 0.10 costs 45.9 x (0.3 + 0.7 x 0.482253) x 0.10 = 2.92648
    flat = evaluate_scenario(dict(OWN, electricity_usd_per_kwh=0.10, demand_profile=EVENING))
    assert flat["energy_usd_per_hour"] == pytest.approx(45.9 * (0.3 + 0.7 * U) * 0.10, rel=1e-12)
    # effective price: 3.31385 / (19.50986 kW average IT x 1.5) = 0.113237 USD/kWh
    assert r["electricity_usd_per_kwh_effective"] == pytest.approx(0.113237, abs=1e-6)
    assert flat["electricity_usd_per_kwh_effective"] is None  # a flat price has no effective price of its own


def test_a_named_tariff_is_the_catalogs_hours() -> None:
    named = evaluate_scenario(dict(OWN, electricity_tariff="sce-tou-8-d-summer"))
    prices = catalog.electricity_tariffs().loc["sce-tou-8-d-summer", "usd_per_kwh_by_hour"]
    given = evaluate_scenario(dict(OWN, electricity_tariff=prices))
    assert named["energy_usd_per_hour"] == given["energy_usd_per_hour"]
    # a flat demand draws the same every hour: the day's cost is the tariff's plain average
    average = sum(float(p) for p in str(prices).split()) / 24
    assert named["electricity_usd_per_kwh_effective"] == pytest.approx(average, rel=1e-12)


def test_kgco2e_per_million_tokens_for_a_stated_fleet_intensity_and_embodied_figure() -> None:
    r = evaluate_scenario(dict(OWN, grid_carbon_g_per_kwh=400, carbon_usd_per_tonne=100))
    # operational: 19.50986 kW average IT x PUE 1.5 x 24 h x 400 g/kWh / 1,000 = 280.942 kg a day;
    # per M tokens: 280.942 / 2,000 M = 0.140471
    assert r["operational_kgco2e_per_m_tokens"] == pytest.approx(0.140471, abs=1e-6)
    # embodied: 24 x 354 kg (catalog H100 SXM) / (5 years x 365 days) = 4.655342 kg a day / 2,000 = 0.00232767
    assert r["embodied_kgco2e_per_m_tokens"] == pytest.approx(24 * 354 / (5 * 365) / 2000, rel=1e-12)
    assert r["kgco2e_per_m_tokens"] == pytest.approx(0.140471 + 24 * 354 / (5 * 365) / 2000, abs=1e-6)
    # 285.597 kg a day x 365 / 1,000 = 104.243 t a year; at 100 USD/t: 285.597 x 0.1 / 24 = 1.19 USD/h
    assert r["tco2e_per_year"] == pytest.approx(104.243, abs=1e-3)
    assert r["carbon_usd_per_hour"] == pytest.approx(1.18999, abs=1e-5)
    unpriced = evaluate_scenario(dict(OWN, grid_carbon_g_per_kwh=400))
    assert unpriced["carbon_usd_per_hour"] == 0.0
    # the carbon line adds 1.19 x 24 / 2,000 = 0.01428 USD per M tokens
    assert r["cost_usd_per_m_tokens"] - unpriced["cost_usd_per_m_tokens"] == pytest.approx(1.18999 * 24 / 2000,
                                                                                          abs=1e-7)


def test_a_grid_region_brings_its_sourced_average() -> None:
    r = evaluate_scenario(dict(OWN, grid_region="fr"))  # Ember 2024: France 44.2 gCO2e/kWh
    assert r["grid_carbon_g_per_kwh_effective"] == pytest.approx(44.2)
    assert r["grid_carbon_g_per_kwh"] == pytest.approx(44.2)
    own = evaluate_scenario(dict(OWN, grid_region="fr", grid_carbon_g_per_kwh=100))
    assert own["grid_carbon_g_per_kwh_effective"] == pytest.approx(100.0)  # a row's own figure wins


def test_an_hourly_intensity_weights_the_hours_by_their_draw() -> None:
    dirty_days = " ".join(["100"] * 12 + ["500"] * 12)
    r = evaluate_scenario(dict(OWN, grid_carbon_by_hour=dirty_days, demand_profile=EVENING))
    night, day = 0.3 + 0.7 * U * 0.5, 0.3 + 0.7 * U * 1.5
    # weighted by each hour's draw: (0.468789 x 100 + 0.806366 x 500) / (0.468789 + 0.806366) = 352.94 g/kWh
    assert r["grid_carbon_g_per_kwh_effective"] == pytest.approx((night * 100 + day * 500) / (night + day),
                                                                 rel=1e-9)


def test_a_row_without_an_embodied_figure_says_so() -> None:
    r = evaluate_scenario(dict(OWN, accelerator="gaudi3", grid_carbon_g_per_kwh=400))
    assert r["embodied_kgco2e_per_m_tokens"] is None
    assert "embodied" in r["warnings"]
    assert r["kgco2e_per_m_tokens"] == pytest.approx(r["operational_kgco2e_per_m_tokens"])


@pytest.mark.parametrize(("changes", "expected"), [
    (dict(electricity_tariff="nowhere"), "electricity_tariff: unknown id 'nowhere'"),
    (dict(electricity_tariff=" ".join(["0.1"] * 23)), "electricity_tariff: '0.1 0.1"),
    (dict(electricity_tariff=" ".join(["0.1"] * 23 + ["11"])), "hour 23 (value 24 of 24) is 11"),
    (dict(grid_region="atlantis"), "grid_region: unknown id 'atlantis'"),
    (dict(grid_carbon_by_hour=" ".join(["100"] * 23 + ["-1"])), "grid_carbon_by_hour: each of the 24 values"),
    (dict(demand_profile="peak"), "demand_profile: 'peak' is a planner setting"),
    (dict(demand_profile=" ".join(["1"] * 23 + ["30"])), "its busiest hour is 13.58 x the average"),
    # a diurnal day's busiest hour holds at most the whole day (24 x the average): refused by validation, where the
    # engine's shape took the whole table down (issue #44)
    (dict(demand_profile="diurnal", peak_to_average=30, electricity_tariff="sce-tou-8-d-summer"),
     "peak_to_average: a 24-hour diurnal profile (demand_profile diurnal) must peak below 23.976 x the average"),
    (dict(carbon_usd_per_tonne=50), "carbon_usd_per_tonne: a carbon price (50 USD/t) needs the grid's intensity"),
    (dict(rent_tier="cheap"), "rent_tier: 'cheap' is not one of on_demand, reserved, spot"),
    (dict(spot_mtbi_hours=0), "spot_mtbi_hours"),
])
def test_bad_hourly_and_tier_input_names_the_field_and_value(changes: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        evaluate_scenario(dict(OWN, **changes))
    assert expected in str(exc.value)


def test_explain_shows_the_new_lines_with_their_numbers() -> None:
    text = explain_text(dict(OWN, electricity_tariff=TWO_PRICES, demand_profile=EVENING, grid_carbon_g_per_kwh=400,
                             carbon_usd_per_tonne=100))
    assert "hours_sum(" in text and "energy_usd_per_hour" in text
    assert "kgco2e_per_m_tokens" in text and "carbon_usd_per_hour" in text
    assert "[0.05, 0.05" in text  # the tariff's hours substituted
    reserved = explain_text(dict(BASE, rent_tier="reserved"))
    assert "reserved_idle_usd_per_day" in reserved and "387.7" in reserved
    spot = explain_text(dict(BASE, rent_tier="spot"))
    assert "spot_mtbi_hours / (spot_mtbi_hours + spot_recovery_hours)" in spot


def test_a_flat_price_and_no_carbon_give_the_results_of_before() -> None:
    """Every preset and variants of it, evaluated by the commit before rent tiers, hours and carbon existed
    (tests/fixtures/pre_tiers/results.csv): every column it wrote is byte for byte the same today."""
    out = subprocess.run([sys.executable, "-m", "economics", "evaluate", str(FIXTURES / "scenarios.csv"), "-o", "-"],
                         cwd=ROOT, capture_output=True, check=False, timeout=300)
    assert out.returncode == 1, out.stderr  # one variant (a rented SN50, no published rent) was invalid then too
    new = pd.read_csv(BytesIO(out.stdout), dtype=str, keep_default_na=False)
    old = pd.read_csv(FIXTURES / "results.csv", dtype=str, keep_default_na=False)
    assert len(new) == len(old) == 63
    missing = [c for c in old.columns if c not in new.columns]
    assert not missing
    changed = {c: int((old[c] != new[c]).sum()) for c in old.columns if not (old[c] == new[c]).all()}
    # the estimate's range since #40 (docs/estimates.md: the range's basis is the error on sources never fitted):
    # its ends, the columns drawn from them and its label moved on purpose; every other column is the same
    recalibrated = {c for c in changed if c.endswith(("_low", "_high", "_p10", "_p90")) or c == "throughput_basis"}
    assert set(changed) == recalibrated, changed


@pytest.mark.parametrize("number", [1, 43])
def test_explain_of_before_is_kept_line_for_line(number: int) -> None:
    """Every line of before's derivation is in today's (the average IT power now comes before the energy that
    uses it, so the order moved); today's only adds the new inputs' lines."""
    out = subprocess.run([sys.executable, "-m", "economics", "explain", str(FIXTURES / "scenarios.csv"), "--row",
                          f"number:{number}"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=300)
    name = {1: "explain_1.txt", 43: "explain_7.txt"}[number]
    old = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    new = out.stdout.splitlines()
    lost = [line for line in old if line not in set(new) and not changed_on_purpose(line)]
    assert not lost, lost[:5]
    added = [line for line in new if line not in set(old) and not changed_on_purpose(line)]
    assert all(line.startswith("  ") and " = " in line for line in added), [
        line for line in added if not (line.startswith("  ") and " = " in line)][:5]


RACK_POWER = (fleet.RACK_POWER_GIVEN, fleet.RACK_POWER_LIQUID, fleet.RACK_POWER_AIR)
NEWLY_DERIVED = (*RACK_POWER, *map(fleet.bind_decode, RACK_POWER), fleet.SYSTEMS_PER_RACK_ONE_POOL, fleet.NO_RETROFIT,
                 carbon.NO_COST, ses.NO_TIERS_COST, *(f for ends in RANGE_ENDS.values() for f in ends),
                 cap.NO_PREFILL_WORK, revenue.NO_ENERGY_ABOVE_IDLE, revenue.DECODE_NO_ENERGY_ABOVE_IDLE,
                 ses.NO_REMOTE_SHARE, *ses.NO_LOADS.values(),
                 *(cost.bind_pool(f, pool) for pool in ("", "prefill", "decode")
                   for f in (cost.NO_CAPITAL, cost.NO_FACILITY, cost.NO_OPERATIONS, cost.NO_ENERGY, cost.NO_RENT)))
"""Outputs and the quantities they read set without a step before #43 (a choice, a zero, the range's ends; the zero
lines of the ownership a row does not have, of no prefill figure, of no cost following the load, of a KV tier with no
capacity), recorded since: their lines are added."""
RANGE_END_LINE = re.compile(r"= (min|max)\([^,()]+, [^,()]+\) = ")
"""A range end's substituted line: the smaller or the larger of two numbers."""


def changed_on_purpose(line: str) -> bool:
    """A line of the derivation that a later issue changed or added on purpose: the estimate's range, its label and
    its median step (#40: the range's basis is the error on sources never fitted), the P90 step's note (#40: it now
    says how the range is made, the sources' spread and the spread within one), the weight bytes' note (#40:
    the weights' own precision), and the steps of the outputs #43 records (:data:`NEWLY_DERIVED`: the step, its
    substituted line and its note)."""
    text = line.strip()
    if any(text.startswith(f"{f.name} = {f.symbolic()}") or text == f"({f.note})" for f in NEWLY_DERIVED):
        return True
    if RANGE_END_LINE.match(text):
        return True
    return ("P10-P90" in line or "unseen-family" in line or text.startswith(("(copied_weight_bytes:",
                                                                           "(bytes_per_parameter:"))
            or text.startswith("output_tokens_per_s_per_accelerator_p50 = ") or "held-out median" in line
            or text == "(measured / estimated at the P90 of the same points)")


@settings(max_examples=25, deadline=None)
@given(price=st.floats(0.01, 1.0), idle=st.floats(0.0, 1.0), p2a=st.floats(1.0, 4.0))
def test_a_tariff_of_one_price_costs_what_that_flat_price_does(price: float, idle: float, p2a: float) -> None:
    flat = evaluate_scenario(dict(OWN, electricity_usd_per_kwh=price, idle_power_fraction=idle, peak_to_average=p2a))
    hourly = evaluate_scenario(dict(OWN, electricity_tariff=" ".join([repr(price)] * 24), idle_power_fraction=idle,
                                    peak_to_average=p2a, demand_profile="diurnal"))
    # a diurnal demand below the peak fleet's capacity moves the draw between hours, not its total: the busy share
    # is linear in the load until an hour saturates, and the diurnal peak is at most peak_to_average
    assert hourly["energy_usd_per_hour"] == pytest.approx(flat["energy_usd_per_hour"], rel=1e-9)
    assert hourly["electricity_usd_per_kwh_effective"] == pytest.approx(price, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(mtbi=st.floats(0.5, 1000.0), recovery=st.floats(0.0, 10.0))
def test_spot_never_needs_fewer_accelerators_than_on_demand(mtbi: float, recovery: float) -> None:
    on_demand = run(round_to_whole_systems=False)
    spot = run(round_to_whole_systems=False, rent_tier="spot", spot_mtbi_hours=mtbi, spot_recovery_hours=recovery)
    assert spot["accelerators"] >= on_demand["accelerators"]
    assert spot["spot_availability"] == pytest.approx(mtbi / (mtbi + recovery), rel=1e-12)


def test_the_day_hour_by_hour_is_the_worked_draw_price_and_carbon() -> None:
    scenario = dict(OWN, electricity_tariff=TWO_PRICES, demand_profile=EVENING, grid_carbon_g_per_kwh=400)
    t = hours_table(scenario)
    assert t["hour"].tolist() == list(range(24))
    # 45.9 kW at full load (24 x 1.275 x PUE 1.5) x the hour's draw share: 21.5174 kW at night, 37.0122 kW by day
    assert t["facility_kw"].iloc[0] == pytest.approx(45.9 * (0.3 + 0.7 * U * 0.5), rel=1e-12)
    assert t["facility_kw"].iloc[12] == pytest.approx(37.0122, abs=1e-4)
    assert t["energy_usd"].iloc[12] == pytest.approx(37.0122 * 0.15, abs=1e-4)  # one hour's kWh at 0.15
    assert t["kgco2e"].iloc[0] == pytest.approx(21.5174 * 0.4, abs=1e-4)      # 400 g/kWh
    r = evaluate_scenario(scenario)
    # the engine's day is these hours summed
    assert t["energy_usd"].sum() / 24 == pytest.approx(r["energy_usd_per_hour"], rel=1e-12)
    assert t["kgco2e"].sum() / 2000 == pytest.approx(r["operational_kgco2e_per_m_tokens"], rel=1e-12)


def test_the_day_of_a_rented_fleet_pays_no_energy_of_its_own() -> None:
    t = hours_table(dict(BASE, demand_profile="diurnal"))
    assert (t["energy_usd"] == 0).all() and t["g_per_kwh"].isna().all()
    assert t["facility_kw"].max() > t["facility_kw"].min()  # the draw still follows the day


# ------------------------------------------------------------------ tier inputs a row's tier does not read (#44)
TIER_ON_OWNED = "rent_tier is for a rented fleet: this row is owned (ownership=own)"
RESERVED_UNUSED = "reserved_discount or reserved_term_years is set but rent_tier is not reserved"
SPOT_UNUSED = "spot_discount, spot_mtbi_hours or spot_recovery_hours is set but rent_tier is not spot"


@pytest.mark.parametrize(("changes", "said"), [
    (dict(OWN, rent_tier="reserved"), [TIER_ON_OWNED]),
    (dict(OWN, rent_tier="spot", spot_mtbi_hours=5.0), [TIER_ON_OWNED, SPOT_UNUSED]),
    (dict(BASE, spot_mtbi_hours=5.0), [SPOT_UNUSED]),
    (dict(BASE, rent_tier="reserved", spot_discount=0.5), [SPOT_UNUSED]),
    (dict(BASE, rent_tier="spot", reserved_term_years=1.0), [RESERVED_UNUSED]),
    (dict(BASE, rent_tier="spot", spot_mtbi_hours=5.0), []),
    (dict(BASE, rent_tier="reserved", reserved_discount=0.5), []),
    (dict(OWN), []),
])
def test_a_tier_input_the_row_does_not_read_is_said(changes: dict[str, Any], said: list[str]) -> None:
    # nothing set is ignored without a word: the warnings cell names what the row's tier leaves unused
    warnings = evaluate_scenario(changes)["warnings"]
    found = [w for w in (TIER_ON_OWNED, RESERVED_UNUSED, SPOT_UNUSED) if w in warnings]
    assert found == said, warnings


def test_an_unused_tier_input_changes_no_number() -> None:
    # the warning is the only difference: an owned row with a tier costs what it costs without one
    plain, tiered = evaluate_scenario(OWN), evaluate_scenario(dict(OWN, rent_tier="spot", spot_discount=0.9))
    assert {k: plain[k] for k in NUMERIC_OUTPUTS} == {k: tiered[k] for k in NUMERIC_OUTPUTS}
