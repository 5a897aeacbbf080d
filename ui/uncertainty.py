"""Uncertainty page: ranges on the inputs people argue about, the tornado of their effect on cost per token, and a
seeded Monte Carlo with P10 / P50 / P90 and how often owning beats renting.

A thin view: every number comes from :mod:`economics.uncertainty`.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS
from economics.uncertainty import monte_carlo, probability_lower, tornado
from ui.format import usd
from ui.links import restore, share

st.title("Uncertainty")
st.caption("Give each uncertain input a low and a high around the scenario's value. The tornado moves one input at "
           "a time; the Monte Carlo draws them all at once (triangular, peaked at the base value).")

base = economics.default_scenario()
link_extra = restore([])
scenario = economics.with_changes(base, **link_extra)
resolved = economics.evaluate_scenario(scenario)

RANGES: dict[str, tuple[float, float]] = {
    "electricity_usd_per_kwh": (0.5, 2.5), "accelerator_price_usd": (0.7, 1.4),
    "output_tokens_per_s_per_accelerator": (0.7, 1.3), "pue": (0.85, 1.2), "cost_of_capital": (0.5, 1.5),
}
ranges: dict[str, tuple[float, float]] = {}
with st.sidebar:
    st.header("Ranges")
    for field, (lo_factor, hi_factor) in RANGES.items():
        value = float(resolved[field] if resolved[field] is not None else resolved[f"{field}_effective"])
        floor = FIELDS[field].ge
        lo_default = max(value * lo_factor, 0.0 if floor is None else float(floor))
        lo, hi = st.slider(FIELDS[field].label, min_value=0.0, max_value=float(value * 3 or 1.0),
                           value=(float(lo_default), float(value * hi_factor)), key=f"range_{field}")
        ranges[field] = (min(lo, value), max(hi, value))
    samples = st.select_slider("Samples", [1000, 2000, 5000, 10000, 20000], value=10000, key="mc_samples")
    seed = st.number_input("Seed", min_value=0, value=0, step=1, key="mc_seed")

try:
    sens = tornado(scenario, ranges)
    mc = monte_carlo(scenario, ranges, samples=int(samples), seed=int(seed))
    rented = monte_carlo({**scenario, "ownership": "rent"}, ranges, samples=int(samples),
                         seed=int(seed))
except economics.ScenarioError as error:
    st.error(str(error))
    st.stop()

summary = {str(k): v for k, v in mc.summary.set_index("output").to_dict("index")["cost_usd_per_m_tokens"].items()}
k = st.columns(4)
k[0].metric("P10 cost per M tokens", usd(float(summary["p10"])))
k[1].metric("P50 cost per M tokens", usd(float(summary["p50"])))
k[2].metric("P90 cost per M tokens", usd(float(summary["p90"])))
k[3].metric("Owning cheaper than renting", f"{probability_lower(mc, rented):.0%} of samples",
            help="Same draws for both (paired); renting at the catalog rent")

st.subheader("Tornado: cost per M tokens, one input at a time")
bars: list[dict[str, Any]] = []
for _, row in sens.iterrows():
    bars.append({"field": row["field"], "from": min(row["output_at_low"], row["output_at_high"]),
                 "to": max(row["output_at_low"], row["output_at_high"]), "swing": row["swing"]})
chart_data = sens.assign(start=[b["from"] for b in bars], end=[b["to"] for b in bars])
base_rule = alt.Chart(chart_data).mark_rule(color="black").encode(x="base_output:Q")
st.altair_chart(alt.layer(alt.Chart(chart_data).mark_bar().encode(
    x=alt.X("start:Q", title="Cost [USD per M tokens]"), x2="end:Q", y=alt.Y("field:N", sort=None, title=None),
    tooltip=["field:N", alt.Tooltip("low:Q"), alt.Tooltip("high:Q"), alt.Tooltip("output_at_low:Q", format=",.4f"),
             alt.Tooltip("output_at_high:Q", format=",.4f")]), base_rule), width="stretch")

st.subheader("Monte Carlo: distribution of cost per M tokens")
st.altair_chart(alt.Chart(mc.samples).mark_bar().encode(
    x=alt.X("cost_usd_per_m_tokens:Q", bin=alt.Bin(maxbins=40), title="Cost [USD per M tokens]"),
    y=alt.Y("count():Q", title="Samples")), width="stretch")
st.dataframe(mc.summary, hide_index=True, width="stretch")
share(scenario)
