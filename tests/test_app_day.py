"""The Cost page's energy and carbon panel (#28) in AppTest: its figures are the engine's, its hours the study's."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics.studies.day import hours_table
from tests.test_app import static_table
from ui.format import usd, usd_rate

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def start(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def test_the_default_shows_a_flat_price_and_asks_for_a_grid_intensity() -> None:
    shown = metrics(start({}))
    default = economics.evaluate_scenario(economics.default_scenario())
    assert shown["Electricity price paid"] == f"{usd_rate(default['electricity_usd_per_kwh'])} flat"
    assert shown["Emissions per M tokens [kgCO2e/M token]"] == "no grid intensity given"
    assert shown["Carbon cost per hour"] == "no carbon price"


def test_a_tariff_and_a_region_show_the_engines_figures_and_the_24_hours() -> None:
    query = {"electricity_tariff": "de-lu-day-ahead-2024", "demand_profile": "diurnal", "grid_region": "de",
             "carbon_usd_per_tonne": "80"}
    at = start({**query, "settings.open": "hours"})  # the 24 hours as a table: drawn only while open
    shown = metrics(at)
    scenario = {**economics.default_scenario().model_dump(), **query, "carbon_usd_per_tonne": 80.0}
    r = economics.evaluate_scenario(scenario)
    assert shown["Electricity price paid"] == usd_rate(r["electricity_usd_per_kwh_effective"])
    assert shown["Grid intensity of the energy drawn [gCO2e/kWh]"] == "342.1"  # Ember 2024, Germany
    assert shown["Carbon cost per hour"].startswith("$") and shown["Carbon cost per hour"] != "$0"
    assert not at.dataframe  # the 24 hours are a static table (ui/common.py draw_table), as every table here
    hours = static_table(at, "Hour")
    assert [row["Hour"] for row in hours] == [str(h) for h in range(24)]
    expected = hours_table(scenario)
    # the busiest hour of the diurnal day is 14:00 and draws the most, on the page as in the study
    assert int(expected["facility_kw"].to_numpy().argmax()) == 14
    drawn = [float(row["Draw at the facility [kW]"].replace(",", "")) for row in hours]
    assert drawn.index(max(drawn)) == 14
    assert any("draw at the facility" in c.value for c in at.caption)


def test_a_reserved_rented_fleet_shows_its_idle_hours() -> None:
    shown = metrics(start({"ownership": "rent", "rent_tier": "reserved"}))
    r = economics.evaluate_scenario({**economics.default_scenario().model_dump(), "ownership": "rent",
                                     "rent_tier": "reserved"})
    # 312 H100 at the catalog's reserved 1.30 USD/h = 405.60 USD/h, every hour paid
    assert r["accelerators"] == 312 and shown["Rent"] == "$405.60"
    # 405.60 x 24 h x (1 - utilization) a day paid and unused; the 3-year term 405.60 x 8,760 x 3 = 10.66 M USD
    assert r["reserved_idle_usd_per_day"] == pytest.approx(405.6 * 24 * (1 - r["utilization"]), rel=1e-12)
    assert shown["Reserved hours unused"] == usd(r["reserved_idle_usd_per_day"])
    assert shown["Reservation commitment"] == "$10.7 M"
    assert shown["Emissions per year [tCO2e/year]"] == "no grid intensity given"
