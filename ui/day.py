"""The Cost page's energy and carbon panel: the effective price of the energy drawn, emissions per million tokens
and a year, the carbon cost; the rent tier's own figures; and the day hour by hour (draw and price).

Every figure is an output of the engine (:data:`economics.report.kpis.DAY_ROWS`) or a row of
:func:`economics.studies.day.hours_table`; nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from economics.report import charts, kpis
from economics.schema.outputs import DisplayFormat as Show
from ui import common, studies
from ui import format as fmt
from ui.text import plain

HOURS_COLUMNS = {"hour": ("Hour", Show.COUNT), "demand_x_average": ("Demand [x average]", Show.NUMBER),
                 "facility_kw": ("Draw at the facility [kW]", Show.NUMBER),
                 "usd_per_kwh": ("Electricity [USD/kWh]", Show.USD_RATE), "energy_usd": ("Energy [USD]", Show.USD),
                 "g_per_kwh": common.GRID_COLUMN, "kgco2e": ("Emissions [kgCO2e]", Show.NUMBER)}

TITLES = {"energy_usd_per_hour": "Energy per hour", "carbon_usd_per_hour": "Carbon cost per hour"}


def _stated(name: str, result: Mapping[str, Any]) -> str | None:
    """Words for a figure the engine leaves empty for a reason."""
    if name == "carbon_usd_per_hour" and not result.get("carbon_usd_per_tonne"):
        return "no carbon price"
    if result.get(name) is not None:
        return None
    if name == "electricity_usd_per_kwh_effective":
        return f"{fmt.output('electricity_usd_per_kwh_effective', result['electricity_usd_per_kwh'])} flat"
    if "co2e" in name or name == "grid_carbon_g_per_kwh_effective":
        return "no embodied figure" if name.startswith("embodied") and result.get("grid_carbon_g_per_kwh_effective") \
            is not None else "no grid intensity given"
    return None


def panel(scenario: Mapping[str, Any], result: Mapping[str, Any], base: Mapping[str, Any] | None) -> None:
    """The panel, for an evaluated feasible scenario."""
    common.heading("Energy and carbon over the day")  # a Markdown heading: cheaper for the browser to draw
    for names in kpis.DAY_ROWS:
        k = common.row()
        for name in names:
            common.metric(k, name, result, base, value=_stated(name, result), title=TITLES.get(name))
    tier = str(result.get("rent_tier") or "on_demand")
    if result["ownership"] == "rent" and tier in kpis.TIER_ROWS:
        st.caption(f"Rent tier: {tier.replace('_', ' ')}")
        k = common.row()
        for name in kpis.TIER_ROWS[tier]:
            common.metric(k, name, result, base)
    hours = studies.hours_of(common.canonical(scenario))
    common.draw(studies.day_spec(), charts.day_data(hours))
    paid = "" if hours["energy_usd"].any() else " The energy is in the rent, so no hour's energy is paid apart."
    st.caption(plain(f"Bars: the fleet's draw at the facility in each hour ({result['demand_profile']} demand); "
                     "line: the hour's price. The day's energy cost and emissions above are these hours summed."
                     + paid))
    box = common.panel("The 24 hours as a table", "hours")
    if box is not None:  # drawn only while open
        with box:
            common.show_table(hours, key="day_hours", columns=list(HOURS_COLUMNS), extra=HOURS_COLUMNS,
                              static=True)
