"""Fleet page: the hardware, racks and megawatts a demand needs at an interactivity target, and whether the
facility (air or liquid cooling, rack density, site power) can host it; the same demand across accelerators.

A thin view: widget keys are scenario field names; every number comes from :mod:`economics`.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS, catalog
from economics.compare import compare_accelerators
from ui.format import usd
from ui.links import restore, seed, share

st.title("Fleet, racks and power")
st.caption("Size the fleet for a demand at a speed per user, then check it against the facility: cooling (air, "
           "liquid, hybrid), rack power density and site power. Throughput is estimated from the model unless "
           "you give a measured figure.")

models = list(catalog.models().index)
ids = catalog.accelerator_ids()
PAGE_DEFAULTS: dict[str, Any] = {
    "demand_output_tokens_per_day": 5e9, "peak_to_average": 2.0, "headroom": 0.1, "accelerator": "h200-sxm",
    "model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 20.0,
    "facility_cooling": "air", "allow_liquid_retrofit": False, "site_power_mw": 0.0,
}
link_extra = restore(PAGE_DEFAULTS)
seed(PAGE_DEFAULTS, zero_when_empty=["site_power_mw"])
with st.sidebar:
    st.header("Demand")
    demand = st.number_input(FIELDS["demand_output_tokens_per_day"].label, min_value=1e6, step=1e9, format="%.3g",
                             key="demand_output_tokens_per_day")
    peak = st.number_input(FIELDS["peak_to_average"].label, min_value=1.0, step=0.1, key="peak_to_average")
    headroom = st.number_input(FIELDS["headroom"].label, min_value=0.0, step=0.05, key="headroom")
    st.header("Hardware and model")
    accelerator = st.selectbox(FIELDS["accelerator"].label, ids, key="accelerator")
    model = st.selectbox(FIELDS["model"].label, models, key="model")
    precision = st.selectbox(FIELDS["precision"].label, list(FIELDS["precision"].choices), key="precision")
    target = st.number_input(FIELDS["target_output_tokens_per_s_per_user"].label, min_value=1.0, step=5.0,
                             key="target_output_tokens_per_s_per_user")
    st.header("Facility")
    cooling = st.selectbox(FIELDS["facility_cooling"].label, list(FIELDS["facility_cooling"].choices),
                           key="facility_cooling")
    retrofit = st.checkbox("Allow a liquid-cooling retrofit", key="allow_liquid_retrofit",
                           help=FIELDS["allow_liquid_retrofit"].description)
    site = st.number_input(FIELDS["site_power_mw"].label, min_value=0.0, step=0.5, key="site_power_mw",
                           help="0 = no limit")

changes: dict[str, Any] = {
    "accelerator": accelerator, "model": model, "precision": precision,
    "target_output_tokens_per_s_per_user": float(target), "demand_output_tokens_per_day": float(demand),
    "demand_input_tokens_per_day": None, "accelerator_count": None, "peak_to_average": float(peak),
    "headroom": float(headroom), "facility_cooling": cooling, "allow_liquid_retrofit": bool(retrofit),
    "site_power_mw": float(site) or None, "output_tokens_per_s_per_accelerator": None,
    "input_tokens_per_s_per_accelerator": None,
}
base = economics.default_scenario()
scenario = economics.with_changes(base, **{**link_extra, **changes})
try:
    result = economics.evaluate_scenario(scenario)
except economics.ScenarioError as error:
    st.error(str(error))
    st.stop()

if result["feasible"]:
    st.success(f"{accelerator} fits this facility.")
else:
    st.error(result["infeasible_reason"])

if result["accelerators"] is not None:
    k = st.columns(5)
    k[0].metric("Accelerators", f"{result['accelerators']:,}")
    k[1].metric("Systems", f"{result['systems']:,}")
    k[2].metric("Racks", "-" if result["racks"] is None else f"{result['racks']:,}")
    k[3].metric("Facility power", f"{result['facility_power_kw'] / 1000:,.2f} MW")
    k[4].metric("Cost per M tokens", usd(result["cost_usd_per_m_tokens"]))
    rack = "-" if result["kw_per_rack"] is None else f"{result['kw_per_rack']:,.1f} kW per rack"
    st.caption(f"{rack} (limit {result['rack_power_kw_effective']:,.0f} kW); PUE {result['pue_effective']:.2f}; "
               f"utilization {result['utilization']:.1%}; {result['energy_mwh_per_year']:,.0f} MWh a year; "
               f"{result['joules_per_token']:.2f} J per token; cost {usd(result['cost_usd_per_year'])} a year.")

st.subheader("The same demand on other accelerators")
choices = st.multiselect("Accelerators to compare", ids,
                         default=["h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "mi300x", "mi355x"],
                         key="compare_accelerators")
if choices:
    # no published price: cost those as rented so they can still be compared
    rent = {a: {"ownership": "rent"} for a in choices
            if math.isnan(catalog.accelerator_record(a).get("price_usd", math.nan))}
    table = compare_accelerators(scenario, choices, rent)
    chart = table[table["cost_usd_per_m_tokens"].notna()]
    if len(chart):
        st.altair_chart(alt.Chart(chart).mark_bar().encode(
            x=alt.X("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]"),
            y=alt.Y("accelerator:N", sort=None, title=None),
            color=alt.Color("feasible:N", title="Feasible"),
            tooltip=["accelerator:N", "ownership:N", alt.Tooltip("cost_usd_per_m_tokens:Q", format=",.3f"),
                     alt.Tooltip("accelerators:Q", format=","), alt.Tooltip("racks:Q", format=","),
                     alt.Tooltip("facility_power_kw:Q", format=",.0f"), "infeasible_reason:N"]),
            width="stretch")
    st.dataframe(table, hide_index=True, width="stretch")

share(scenario)
if result["feasible"]:
    with st.expander("How this is computed"):
        st.code(economics.explain_text(scenario), language=None)
