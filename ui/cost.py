"""Cost per token page.

A thin view: it collects a few scenario fields, asks :func:`economics.evaluate_scenario` for the numbers and shows
them. Each input widget's ``key`` is the scenario field name, so tests (and later the shareable URL) find it.
Labels and help texts come from the scenario's field metadata (:data:`economics.FIELDS`).
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS, catalog
from economics.compare import breakdown, cost_vs_utilization, difference_table, margins_at_prices
from ui.format import percent, usd, usd_per_hour, usd_per_m_tokens
from ui.links import restore, share

INPUT_FIELDS = ("accelerator", "ownership", "accelerator_count", "electricity_usd_per_kwh",
                "output_tokens_per_s_per_accelerator", "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens")

def _help(field: str) -> str:
    spec = FIELDS[field]
    unit = f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""
    return f"{spec.description}{unit}. Field `{field}`."


@st.cache_data(max_entries=256, show_spinner=False)
def _explanation(scenario_json: str) -> str:
    return economics.explain_text(json.loads(scenario_json))


@st.cache_data(max_entries=256, show_spinner=False)
def _cost_curve(scenario_json: str) -> Any:
    return cost_vs_utilization(json.loads(scenario_json))


@st.cache_data(max_entries=256, show_spinner=False)
def _margins(scenario_json: str) -> Any:
    return margins_at_prices(json.loads(scenario_json), catalog.api_prices())


st.title("Cost per token")

presets = economics.preset_scenarios()
preset_names = list(presets)


def _load_preset() -> None:
    values = presets[st.session_state["preset"]][0].model_dump()
    for field in INPUT_FIELDS:
        st.session_state[field] = values[field]


st.selectbox("Preset", preset_names, key="preset", on_change=_load_preset,
             help="Ready-made scenarios from data/presets.csv; each note cites its figures")
base = presets[st.session_state["preset"]][0]
link_extra = restore(INPUT_FIELDS)  # a shared link's values seed the widgets; its other fields apply as given
st.caption(presets[st.session_state["preset"]][1])
for field in INPUT_FIELDS:  # first run: the widgets start from the preset
    st.session_state.setdefault(field, base.model_dump()[field])

with st.sidebar:
    st.header("Scenario")
    accelerator_ids = catalog.accelerator_ids()
    st.selectbox("Accelerator", accelerator_ids, key="accelerator", help=_help("accelerator"))
    st.selectbox(FIELDS["ownership"].label, list(FIELDS["ownership"].choices), key="ownership",
                 help=_help("ownership"))
    st.number_input(FIELDS["accelerator_count"].label, step=1, placeholder="empty: sized from demand",
                    key="accelerator_count", help=_help("accelerator_count"))
    st.number_input(FIELDS["electricity_usd_per_kwh"].label, step=0.01, format="%.3f",
                    key="electricity_usd_per_kwh", help=_help("electricity_usd_per_kwh"))
    st.number_input(FIELDS["output_tokens_per_s_per_accelerator"].label, step=10.0, format="%.2f",
                    placeholder="empty: estimated", key="output_tokens_per_s_per_accelerator",
                    help=_help("output_tokens_per_s_per_accelerator"))
    st.number_input(FIELDS["price_usd_per_m_input_tokens"].label, step=0.05, format="%.3f",
                    placeholder="empty: no revenue", key="price_usd_per_m_input_tokens",
                    help=_help("price_usd_per_m_input_tokens"))
    st.number_input(FIELDS["price_usd_per_m_output_tokens"].label, step=0.05, format="%.3f",
                    placeholder="empty: no revenue", key="price_usd_per_m_output_tokens",
                    help=_help("price_usd_per_m_output_tokens"))

scenario = economics.with_changes(base, **link_extra, **{f: st.session_state[f] for f in INPUT_FIELDS})

try:
    result = economics.evaluate_scenario(scenario)
except economics.ScenarioError as error:
    st.error(str(error))
    st.stop()

if not result["feasible"]:
    st.error(result["infeasible_reason"])
    st.stop()

pin, clear, _ = st.columns([1, 1, 4])
if pin.button("Pin as baseline", key="pin_baseline", help="Compare every KPI with this scenario from now on"):
    st.session_state["baseline"] = scenario
if st.session_state.get("baseline") is not None and clear.button("Clear baseline", key="clear_baseline"):
    st.session_state["baseline"] = None
baseline = st.session_state.get("baseline")
baseline_result = economics.evaluate_scenario(baseline) if baseline is not None else None


def _delta(name: str) -> str | None:
    if baseline_result is None or baseline_result[name] is None or result[name] is None:
        return None
    return usd(result[name] - baseline_result[name]) + " vs baseline"


kpis = st.columns(3)
kpis[0].metric("Cost per M tokens", usd_per_m_tokens(result["cost_usd_per_m_tokens"]),
               delta=_delta("cost_usd_per_m_tokens"), delta_color="inverse",
               help="Input and output tokens served, all hours of the fleet")
kpis[1].metric("Cost per M input tokens", "-" if result["cost_usd_per_m_input_tokens"] is None
               else usd(result["cost_usd_per_m_input_tokens"]), help="Prefill's share of device time")
kpis[2].metric("Cost per M output tokens", usd(result["cost_usd_per_m_output_tokens"]),
               help="Decode's share of device time")
row2 = st.columns(4)
row2[0].metric("Cost per hour", usd_per_hour(result["cost_usd_per_hour"]))
row2[1].metric("Cost per day", usd(result["cost_usd_per_day"]))
row2[2].metric("Utilization", percent(result["utilization"]))
row2[3].metric("Gross margin", "-" if result["gross_margin"] is None else percent(result["gross_margin"]),
               help="(revenue - cost) / revenue at your prices")
st.caption(f"{result['accelerators']:,} x {result['accelerator']} ({result['ownership']}); "
           f"{1e6 / result['cost_usd_per_m_tokens']:,.0f} tokens per dollar; "
           f"{result['facility_power_kw']:,.0f} kW at the facility.")

for warning in economics.split_warnings(result["warnings"]):
    st.warning(warning)

if baseline is not None and baseline_result is not None:
    st.subheader("Against the baseline")
    st.caption(f"Baseline: {baseline['name']} ({baseline['accelerator']}, {baseline['ownership']}).")
    st.dataframe(difference_table(baseline_result, result), hide_index=True, width="stretch",
                 key="baseline_table",
                 column_config={"relative": st.column_config.NumberColumn("relative", format="percent")})

parts = breakdown(result)
left, right = st.columns(2)
with left:
    st.subheader("Where the money goes")
    st.altair_chart(alt.Chart(parts).mark_bar().encode(
        x=alt.X("usd_per_hour:Q", title="Cost [USD/h]"), y=alt.Y("part:N", sort="-x", title=None),
        tooltip=["part:N", alt.Tooltip("usd_per_hour:Q", format=",.2f", title="USD/h"),
                 alt.Tooltip("share:Q", format=".1%", title="share")]), width="stretch")
with right:
    st.subheader("Cost against utilization")
    curve = _cost_curve(json.dumps(scenario, sort_keys=True, default=str))
    st.altair_chart(alt.Chart(curve).mark_line(point=True).encode(
        x=alt.X("utilization:Q", title="Average utilization", axis=alt.Axis(format="%")),
        y=alt.Y("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]"),
        tooltip=[alt.Tooltip("utilization:Q", format=".0%"),
                 alt.Tooltip("cost_usd_per_m_tokens:Q", format=",.4f")]), width="stretch")

st.subheader("Against published API prices")
st.caption("Your fleet's margin if it sold at each listed price (data/api_prices.csv; check the dates).")
st.dataframe(_margins(json.dumps(scenario, sort_keys=True, default=str)), hide_index=True, width="stretch",
             column_config={"gross_margin": st.column_config.NumberColumn("gross margin", format="percent")})

share(scenario)
# the derivation is written out on request only: it is the slowest part of a rerun
if st.toggle("How this is computed", key="show_derivation",
             help="Every output with the scenario's numbers substituted, and where each input comes from"):
    st.code(_explanation(json.dumps(scenario, sort_keys=True, default=str)), language=None)
