"""Decode accelerators page: an aging GPU fleet, and what adding decode accelerators is worth against buying more of
the same GPUs or a new generation (with the liquid retrofit an air-cooled hall needs).

A thin view: widget keys are scenario field names; every number comes from :mod:`economics.retrofit`.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS, catalog
from economics.retrofit import analyse, break_even_decode_price_usd
from ui.format import usd
from ui.links import restore, seed, share

st.title("Decode accelerators for an existing fleet")
st.caption("The existing GPUs keep prefill and a decode-optimised pool takes decode, against the status quo, more of "
           "the same GPUs, or a new generation. Cash flows at the cost of capital; the existing fleet is sunk but "
           "still pays power, hosting and maintenance.")

ids = catalog.accelerator_ids()
models = list(catalog.models().index)
PAGE_DEFAULTS: dict[str, Any] = {
    "accelerator": "h100-sxm", "existing_accelerators": 2000, "facility_cooling": "air", "model": "minimax-m2",
    "precision": "fp8", "input_tokens_per_request": 10000.0, "output_tokens_per_request": 1000.0,
    "target_output_tokens_per_s_per_user": 100.0, "demand_output_tokens_per_day": 2e10, "demand_growth_per_year": 0.3,
    "horizon_years": 5, "decode_accelerator": "sn50", "decode_output_tokens_per_s_per_accelerator": 763.0,
    "decode_accelerator_price_usd": 0.0, "new_accelerator": "gb200-nvl72", "price_usd_per_m_input_tokens": 0.3,
    "price_usd_per_m_output_tokens": 1.2, "fast_tier_price_multiplier": 1.5,
    "fast_tier_min_tokens_per_s_per_user": 300.0,
}
link_extra = restore(PAGE_DEFAULTS)
seed(PAGE_DEFAULTS, zero_when_empty=["decode_output_tokens_per_s_per_accelerator", "decode_accelerator_price_usd"])
with st.sidebar:
    st.header("Existing fleet")
    accelerator = st.selectbox(FIELDS["accelerator"].label, ids, key="accelerator")
    existing = st.number_input(FIELDS["existing_accelerators"].label, min_value=1, step=64,
                               key="existing_accelerators")
    cooling = st.selectbox(FIELDS["facility_cooling"].label, list(FIELDS["facility_cooling"].choices),
                           key="facility_cooling")
    st.header("Workload")
    model = st.selectbox(FIELDS["model"].label, models, key="model")
    precision = st.selectbox(FIELDS["precision"].label, list(FIELDS["precision"].choices), key="precision")
    input_tokens = st.number_input(FIELDS["input_tokens_per_request"].label, min_value=0.0, step=1000.0,
                                   format="%.0f", key="input_tokens_per_request")
    output_tokens = st.number_input(FIELDS["output_tokens_per_request"].label, min_value=1.0, step=100.0,
                                    format="%.0f", key="output_tokens_per_request")
    target = st.number_input(FIELDS["target_output_tokens_per_s_per_user"].label, min_value=1.0, step=10.0,
                             key="target_output_tokens_per_s_per_user")
    demand = st.number_input(FIELDS["demand_output_tokens_per_day"].label, min_value=1e6, step=1e9, format="%.3g",
                             key="demand_output_tokens_per_day")
    growth = st.number_input(FIELDS["demand_growth_per_year"].label, min_value=-0.5, step=0.1,
                             key="demand_growth_per_year")
    horizon = st.number_input(FIELDS["horizon_years"].label, min_value=1, max_value=15, key="horizon_years")
    st.header("Options")
    decode = st.selectbox(FIELDS["decode_accelerator"].label, ids, key="decode_accelerator")
    decode_rate = st.number_input(FIELDS["decode_output_tokens_per_s_per_accelerator"].label, min_value=0.0,
                                  step=50.0, key="decode_output_tokens_per_s_per_accelerator",
                                  help="0 = estimate it from the model (not possible for dataflow systems)")
    decode_price = st.number_input(FIELDS["decode_accelerator_price_usd"].label, min_value=0.0, step=5000.0,
                                   key="decode_accelerator_price_usd",
                                   help="Not published for most decode accelerators: the break-even price below "
                                        "is what it may cost")
    new = st.selectbox(FIELDS["new_accelerator"].label, ids, key="new_accelerator")
    st.header("Prices")
    price_in = st.number_input(FIELDS["price_usd_per_m_input_tokens"].label, min_value=0.0, step=0.05,
                               key="price_usd_per_m_input_tokens")
    price_out = st.number_input(FIELDS["price_usd_per_m_output_tokens"].label, min_value=0.0, step=0.1,
                                key="price_usd_per_m_output_tokens")
    fast = st.number_input(FIELDS["fast_tier_price_multiplier"].label, min_value=0.0, step=0.1,
                           key="fast_tier_price_multiplier")
    fast_from = st.number_input(FIELDS["fast_tier_min_tokens_per_s_per_user"].label, min_value=1.0, step=50.0,
                                key="fast_tier_min_tokens_per_s_per_user")

changes: dict[str, Any] = dict(
    accelerator=accelerator, existing_accelerators=int(existing),
    facility_cooling=cooling, model=model, precision=precision, input_tokens_per_request=float(input_tokens),
    output_tokens_per_request=float(output_tokens), target_output_tokens_per_s_per_user=float(target),
    demand_output_tokens_per_day=float(demand), demand_input_tokens_per_day=None,
    demand_growth_per_year=float(growth), horizon_years=int(horizon), decode_accelerator=decode,
    decode_output_tokens_per_s_per_accelerator=float(decode_rate) or None,
    decode_accelerator_price_usd=float(decode_price), new_accelerator=new, price_usd_per_m_input_tokens=float(price_in),
    price_usd_per_m_output_tokens=float(price_out), fast_tier_price_multiplier=float(fast),
    fast_tier_min_tokens_per_s_per_user=float(fast_from), output_tokens_per_s_per_accelerator=None,
    input_tokens_per_s_per_accelerator=None, accelerator_count=None)
study: dict[str, Any] = economics.with_changes(economics.default_scenario(), **{**link_extra, **changes})

try:
    result = analyse(study)
    break_even = break_even_decode_price_usd(study)
except (economics.ScenarioError, ValueError) as error:
    st.error(str(error))
    st.stop()

share(study)
options = result.options
best = options[options["feasible"]].sort_values("npv_vs_status_quo_usd", ascending=False)
k = st.columns(3)
k[0].metric("Best option (NPV)", best["option"].iloc[0] if len(best) else "none feasible")
decode_row = options[options["option"] == "add decode"]
k[1].metric("NPV of adding decode", "-" if decode_row.empty or not bool(decode_row["feasible"].iloc[0])
            else usd(float(decode_row["npv_vs_status_quo_usd"].iloc[0])))
k[2].metric("Break-even decode price", "-" if break_even is None else usd(break_even) + " each",
            help="The most one decode accelerator may cost for 'add decode' to match the best alternative; "
                 "negative: not even free")

for _, row in options[~options["feasible"]].iterrows():
    st.warning(f"{row['option']}: {row['reason']}")

st.subheader("Options side by side")
st.dataframe(options, hide_index=True, width="stretch", column_config={
    "capex_usd": st.column_config.NumberColumn("capex [USD]", format="%.0f"),
    "npv_vs_status_quo_usd": st.column_config.NumberColumn("NPV vs status quo [USD]", format="%.0f"),
    "levelized_cost_usd_per_m_tokens": st.column_config.NumberColumn("levelized cost [USD/M tokens]", format="%.4f"),
    "payback_months": st.column_config.NumberColumn("payback [months]", format="%.1f"),
    "output_tokens_per_s_per_user": st.column_config.NumberColumn("tokens/s per user", format="%.0f"),
    "facility_mw": st.column_config.NumberColumn("facility [MW]", format="%.2f"),
})

flows = result.cashflows.copy()
flows["cumulative_vs_status_quo_usd"] = flows.groupby("option")["vs_status_quo_usd"].cumsum()
st.subheader("Cumulative cash flow against the status quo")
st.altair_chart(alt.Chart(flows[flows["option"] != "status quo"]).mark_line(point=True).encode(
    x=alt.X("year:O", title="Year"),
    y=alt.Y("cumulative_vs_status_quo_usd:Q", title="Cumulative cash flow vs status quo [USD]"),
    color=alt.Color("option:N", title=None),
    tooltip=["option:N", "year:O", alt.Tooltip("vs_status_quo_usd:Q", format=",.0f", title="that year [USD]"),
             alt.Tooltip("cumulative_vs_status_quo_usd:Q", format=",.0f", title="cumulative [USD]")]),
    width="stretch")

st.subheader("Reported single-system speeds")
claims = catalog.throughput_claims()
speeds = claims[claims["accelerator"].isin(["sn40l", "sn50", "cerebras-cs3", "groq-lpu"])
                | (claims["decode_accelerator"] != "")]
st.dataframe(speeds[["system", "model", "precision", "metric", "value", "conditions", "confidence", "source_date"]],
             width="stretch")
