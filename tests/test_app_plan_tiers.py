"""The Plan page with rent tiers, a tariff and carbon (#28): the tiers setting travels in the link, the plan
table shows each pool's tier and emissions, the hours table each tier's systems and the hour's price and grid,
and cost against emissions is drawn on request from the planner's own frontier.
"""

from __future__ import annotations

import economics
from economics.studies import planner
from tests.test_app import start, static_table
from tests.test_app_plan import headers
from ui import format as fmt
from ui import links

SCENARIO = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": "30",
            "output_tokens_per_s_per_accelerator": "", "grid_carbon_g_per_kwh": "400",
            "settings.plan_accelerators": "h100-sxm", "settings.plan_demand_profile": "diurnal",
            "settings.plan_rent_tiers": "on_demand;reserved"}


def test_the_plan_shows_its_tiers_hours_and_emissions() -> None:
    # the hours as a table and the candidates are panels drawn only while open (issue #43: no grid mounted on a
    # switch); the link opens them
    at = start("plan", {**SCENARIO, "settings.open": "plan_hours,candidates"})
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["settings"][links.PLAN_PREFIX + "rent_tiers"] == "on_demand;reserved"
    plan = static_table(at, "Role")  # the pools: a static table (short), the grid's headers and cells
    assert {"Rent tier", "Emissions [kgCO2e/day]"} <= set(plan[0])
    chosen = {**links.default_settings(), **{links.PLAN_PREFIX + k: v for k, v in
                                             (("accelerators", ("h100-sxm",)), ("demand_profile", "diurnal"),
                                              ("rent_tiers", "on_demand;reserved"))}}
    s = economics.Scenario.model_validate(at.session_state["scenario"])
    want = planner.plan(s, links.plan_settings(chosen), None, ["h100-sxm"])
    assert [row["Rent tier"] for row in plan] == [t or fmt.EMPTY for t in want.plan["tier"].fillna("")]
    hours = next(d for d in at.dataframe if "hour" in d.value.columns)
    assert len(hours.value) == 24 and "g_per_kwh" in hours.value.columns
    assert hours.value["g_per_kwh"].tolist() == [400.0] * 24
    assert not [h for h in headers(hours).values() if "_" in h], headers(hours)
    candidates = next(d for d in at.dataframe if "left_out" in d.value.columns)
    assert "h100-sxm" in set(candidates.value["accelerator"])
    words = " ".join(c.value for c in at.caption)
    assert f"{want.summary['tco2e_per_year']:,.0f}"[:3] in words and "kgCO2e a day operational" in words


def test_cost_against_emissions_is_drawn_on_request() -> None:
    at = start("plan", SCENARIO)
    before = len(at.get("vega_lite_chart"))
    at.toggle(key="plan_show_carbon_frontier").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("vega_lite_chart")) == before + 1
    table = next(d.value for d in at.dataframe if "carbon_usd_per_tonne" in d.value.columns)
    assert len(table) == len(planner.frontiers.DEFAULT_CARBON_PRICES) and table["carbon_usd_per_tonne"][0] == "$0"
    # the page's points are the planner's, as formatted; emissions never rise as carbon gets dearer
    s = economics.Scenario.model_validate(at.session_state["scenario"])
    direct = planner.frontier_carbon(s, links.plan_settings(at.session_state["settings"]), accelerators=["h100-sxm"])
    assert table["tco2e_per_year"].tolist() == direct["tco2e_per_year"].tolist()
    tonnes = direct.loc[direct["feasible"], "tco2e_per_year"].tolist()
    assert len(tonnes) == len(direct) and all(b <= a * (1 + 1e-9) for a, b in zip(tonnes, tonnes[1:], strict=False))


def test_without_a_grid_intensity_the_page_says_what_is_missing() -> None:
    at = start("plan", {k: v for k, v in SCENARIO.items() if k != "grid_carbon_g_per_kwh"})
    assert not at.exception
    assert not [t for t in at.toggle if t.key == "plan_show_carbon_frontier"]
    assert any("needs the grid's intensity" in c.value for c in at.caption)
