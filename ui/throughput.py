"""Throughput page: the interactivity curve of the working scenario's accelerator x model x precision x workload.

A lens on the working scenario (:mod:`ui.state`). The curve is estimated from the model, so the page needs one: when
the scenario has none it says so and offers the choice. Every number comes from
:func:`economics.interactivity.interactivity_curve`, :func:`economics.evaluate_scenario` and the calibration report.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics.calibration import scope_for
from economics.interactivity import CURVE_IGNORES
from ui import common, editor, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "model", "precision", "serving_stack", "input_tokens_per_request",
              "output_tokens_per_request",
              "target_output_tokens_per_s_per_user", "accelerators_per_replica", "output_tokens_per_s_per_accelerator",
              "input_tokens_per_s_per_accelerator", "accelerator_count")


def curve_key(scenario: dict[str, Any], result: dict[str, Any]) -> tuple[str, str]:
    """What the interactivity curve depends on: neither the per-user target nor a given throughput changes it
    (:data:`economics.interactivity.CURVE_IGNORES`), only which measured stack is the one the estimate chose (the
    evaluation's ``serving_stack_used``), so moving the target redraws no curve."""
    return common.canonical({**scenario, **dict.fromkeys(CURVE_IGNORES)}), str(result.get("serving_stack_used") or "")


common.page_start()
st.title("Throughput and interactivity")
st.caption("Throughput per accelerator against the speed each user sees. The line is the calibrated roofline "
           "estimate for the scenario's model; dots are measured points from data/throughput_curves.csv for the "
           "same hardware, model and precision (any workload). The KPIs are the scenario's own figures.")
side = editor.Sidebar("Hardware, model, workload", KEY_FIELDS)
editor.show_messages()
scenario = state.scenario()

try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    common.evaluation_error(error)
    side.stop()

common.baseline_controls()
base = common.baseline_result()
if not result["feasible"]:
    st.error(f"Not feasible: {plain(result['infeasible_reason'])}")
common.kpi_row(["output_tokens_per_s_per_accelerator", "output_tokens_per_s_per_user", "cost_usd_per_m_tokens",
                "time_to_first_token_s"], result, base)
side()  # the inputs after the KPIs (see editor.Sidebar)
source = result.get("throughput_source") or "given"
if result.get("throughput_curve"):
    how = (f"interpolated on the measured curve {plain(result['throughput_curve'])} of serving stack "
           f"{plain(result.get('serving_stack_used') or '')}")
elif source == "estimated":
    how = (f"estimated by the roofline: replica of {result['accelerators_per_replica']} x {result['accelerator']}, "
           f"batch {fmt.count(result['batch_size'])}, {result['decode_bound']}-bound")
else:
    how = "as measured (given in the scenario)"
st.caption(f"Throughput {how}; cost at {fmt.percent(result['utilization'])} utilization ({result['ownership']}).")
if result.get("serving_stack_used"):
    st.caption(f"Serving stack: {plain(result['serving_stack_used'])} (asked: {plain(scenario['serving_stack'])}; "
               f"best = the highest published stack for this pair at the per-user target).")
common.measured_speed_check("output_tokens_per_s_per_accelerator", "accelerator")

if scenario["model"] is None:
    st.info("The curve is estimated from a model, and this scenario has none: choose one in the sidebar (Model).")
else:
    key, chosen = curve_key(scenario, result)
    specs = studies.curve_specs(key, chosen)
    if specs is None:
        st.info("No curve: the model does not fit, the hardware lacks this precision, or it is a dataflow system "
                "the roofline does not describe.")
    else:
        st.subheader("Interactivity curve")
        st.caption("Black line: roofline estimate for this workload (plain stack unless one is pinned), prefill "
                   "time included. Coloured lines and markers: every published serving stack's measured front for "
                   "this hardware, model and precision; the stack the scenario uses is drawn opaque and large.")
        common.draw(specs[0])
        if specs[1] is not None:
            st.subheader("Cost along the curve")
            common.draw(specs[1])

st.subheader("How good is the estimate?")
points, summary = studies.calibration()
row = scope_for(scenario["accelerator"])
st.write(f"Calibration scope **{row['scope']}**: bandwidth utilization {row['bandwidth_utilization']:.2f}, decode "
         f"compute {row['compute_utilization']:.2f}, prefill compute "
         f"{row['prefill_compute_utilization']:.2f}, step overhead "
         f"{row['step_overhead_us_per_layer']:g} us per layer; fitted on {row['points']} points with median "
         f"absolute error {row['median_abs_error_pct']} % (worst {row['worst_abs_error_pct']} %). Over all "
         f"{int(summary['fitted_points'])} fitted points: median {summary['median_abs_error_pct']:.1f} %, worst "
         f"{summary['worst_abs_error_pct']:.1f} %.")
shown = points[points["accelerator"] == scenario["accelerator"]][
    ["point", "model", "precision", "measured", "predicted", "error_pct", "fitted"]]
st.dataframe(shown.assign(fitted=[fmt.yes_no(v) for v in shown["fitted"]]), hide_index=True, width="stretch",
             key="calibration_table", column_config={
                 "point": st.column_config.TextColumn("Measured point"),
                 "model": st.column_config.TextColumn("Model"),
                 "precision": st.column_config.TextColumn("Precision"),
                 "measured": st.column_config.NumberColumn("Measured [token/s]", format="%,.0f"),
                 "predicted": st.column_config.NumberColumn("Predicted [token/s]", format="%,.0f"),
                 "error_pct": st.column_config.NumberColumn("Error [%]", format="%.1f"),
                 "fitted": st.column_config.TextColumn("Used in the fit")})

common.share()
if result["feasible"]:
    common.explanation(scenario, key="show_derivation")
