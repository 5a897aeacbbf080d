"""Throughput page: the interactivity curve of an accelerator x model x precision x workload.

A thin view: inputs are scenario fields (widget key = field name); every number comes from
:func:`economics.interactivity.interactivity_curve`, :func:`economics.evaluate_scenario` and the calibration report.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import streamlit as st

import economics
from economics import FIELDS, catalog
from economics.calibration import report, scope_for
from economics.interactivity import interactivity_curve
from ui.format import percent, usd
from ui.links import restore, seed, share

st.title("Throughput and interactivity")
st.caption("Throughput per accelerator against the speed each user sees. The line is the calibrated roofline "
           "estimate; dots are measured points from data/throughput_curves.csv for the same hardware, model and "
           "precision (any workload). Costs come from the same engine as every other page.")

base = economics.default_scenario()
models = list(catalog.models().index)
PAGE_DEFAULTS: dict[str, Any] = {
    "accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "input_tokens_per_request": 1024.0,
    "output_tokens_per_request": 1024.0, "target_output_tokens_per_s_per_user": 50.0,
}
link_extra = restore(PAGE_DEFAULTS)
seed(PAGE_DEFAULTS, zero_when_empty=["target_output_tokens_per_s_per_user"])
with st.sidebar:
    st.header("Hardware and model")
    accelerator = st.selectbox(FIELDS["accelerator"].label, catalog.accelerator_ids(), key="accelerator")
    model = st.selectbox(FIELDS["model"].label, models, key="model")
    precision = st.selectbox(FIELDS["precision"].label, list(FIELDS["precision"].choices), key="precision")
    input_tokens = st.number_input(FIELDS["input_tokens_per_request"].label, min_value=0.0, step=256.0,
                                   format="%.0f", key="input_tokens_per_request")
    output_tokens = st.number_input(FIELDS["output_tokens_per_request"].label, min_value=1.0, step=256.0,
                                    format="%.0f", key="output_tokens_per_request")
    target = st.number_input(FIELDS["target_output_tokens_per_s_per_user"].label, min_value=0.0, step=5.0,
                             key="target_output_tokens_per_s_per_user",
                             help=FIELDS["target_output_tokens_per_s_per_user"].description + " (0 = none)")

changes: dict[str, Any] = {
    "accelerator": accelerator, "model": model, "precision": precision,
    "input_tokens_per_request": float(input_tokens), "output_tokens_per_request": float(output_tokens),
    "target_output_tokens_per_s_per_user": float(target) or None,
    "output_tokens_per_s_per_accelerator": None, "input_tokens_per_s_per_accelerator": None,
    "demand_input_tokens_per_day": None, "demand_output_tokens_per_day": None, "accelerator_count": 8,
}
if math.isnan(catalog.accelerator_record(accelerator).get("price_usd", math.nan)):  # no published price: rent it
    changes["ownership"] = "rent"
scenario = economics.with_changes(base, **{**link_extra, **changes})

try:
    result = economics.evaluate_scenario(scenario)
except economics.ScenarioError as error:
    st.error(str(error))
    st.stop()

if not result["feasible"]:
    st.error(result["infeasible_reason"])
else:
    k = st.columns(4)
    k[0].metric("Output tokens/s per accelerator", f"{result['output_tokens_per_s_per_accelerator']:,.0f}")
    k[1].metric("Tokens/s per user", f"{result['output_tokens_per_s_per_user']:,.1f}")
    k[2].metric("Cost per M tokens", usd(result["cost_usd_per_m_tokens"]), help="USD per million tokens served")
    ttft = result["time_to_first_token_s"]
    k[3].metric("Time to first token", "-" if ttft is None else f"{ttft:,.2f} s",
                help="Prefill of one request on its replica; not given by a measured curve")
    if result["throughput_curve"]:
        how = f"interpolated on the measured curve {result['throughput_curve']}"
    else:
        how = (f"estimated by the roofline: replica of {result['accelerators_per_replica']} x {accelerator}, batch "
               f"{int(result['batch_size'])}, {result['decode_bound']}-bound")
    st.caption(f"Throughput {how}; cost at {percent(result['utilization'])} utilization ({result['ownership']}).")

curve = interactivity_curve(scenario)
front, measured = curve["front"], curve["measured"]
if front.empty and measured.empty:
    st.info("No curve: the model does not fit, the hardware lacks this precision, or it is a dataflow system "
            "the roofline does not describe.")
else:
    layers = []
    if not front.empty:
        layers.append(alt.Chart(front).mark_line(color="black").encode(
            x=alt.X("output_tokens_per_s_per_user:Q", title="Output tokens/s per user"),
            y=alt.Y("effective_output_tokens_per_s_per_accelerator:Q", title="Output tokens/s per accelerator"),
            tooltip=[alt.Tooltip("batch_size:Q", title="batch"),
                     alt.Tooltip("accelerators_per_replica:Q", title="replica"),
                     alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                     alt.Tooltip("effective_output_tokens_per_s_per_accelerator:Q", title="tokens/s per accelerator",
                                 format=",.0f"),
                     alt.Tooltip("cost_usd_per_m_tokens:Q", title="USD per M tokens", format=",.3f")]))
    if not measured.empty:
        pts = measured.assign(series=measured["curve"])
        layers.append(alt.Chart(pts).mark_point(filled=True, size=70).encode(
            x="output_tokens_per_s_per_user:Q", y="output_tokens_per_s_per_accelerator:Q",
            color=alt.Color("series:N", title=None), shape=alt.Shape("series:N", title=None),
            tooltip=["curve:N", alt.Tooltip("input_tokens:Q", title="input tokens"),
                     alt.Tooltip("output_tokens:Q", title="output tokens"),
                     alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                     alt.Tooltip("output_tokens_per_s_per_accelerator:Q", title="tokens/s per accelerator",
                                 format=",.0f")]))
    st.subheader("Interactivity curve")
    st.caption("Black line: roofline estimate for this workload, prefill time included. Markers: measured curves.")
    st.altair_chart(alt.layer(*layers).interactive(), width="stretch")
    if not front.empty:
        st.subheader("Cost along the curve")
        st.altair_chart(alt.Chart(front).mark_line().encode(
            x=alt.X("output_tokens_per_s_per_user:Q", title="Output tokens/s per user"),
            y=alt.Y("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]"),
            tooltip=[alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                     alt.Tooltip("cost_usd_per_m_tokens:Q", title="USD per M tokens", format=",.3f")]),
            width="stretch")

st.subheader("How good is the estimate?")
points, summary = report()
row = scope_for(accelerator)
st.write(f"Calibration scope **{row['scope']}**: bandwidth utilization {row['bandwidth_utilization']:.2f}, decode "
         f"compute {row['compute_utilization']:.2f}, prefill compute "
         f"{row['prefill_compute_utilization']:.2f}, step overhead "
         f"{row['step_overhead_us_per_layer']:g} us per layer; fitted on {row['points']} points with median "
         f"absolute error {row['median_abs_error_pct']} % (worst {row['worst_abs_error_pct']} %). Over all "
         f"{int(summary['fitted_points'])} fitted points: median {summary['median_abs_error_pct']:.1f} %, worst "
         f"{summary['worst_abs_error_pct']:.1f} %.")
shown = points[points["accelerator"] == accelerator][
    ["point", "model", "precision", "measured", "predicted", "error_pct", "fitted"]]
st.dataframe(shown.round(1), hide_index=True, width="stretch")

share(scenario)
if result["feasible"]:
    with st.expander("How this is computed"):
        st.code(economics.explain_text(scenario), language=None)
