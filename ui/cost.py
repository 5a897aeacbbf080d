"""Cost per token page.

A thin view: it collects a few scenario fields, asks :func:`economics.evaluate_scenario` for the numbers and shows
them. Each input widget's ``key`` is the scenario field name, so tests (and later the shareable URL) find it.
Labels and help texts come from the scenario's field metadata (:data:`economics.FIELDS`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics import FIELDS, catalog
from ui.format import percent, usd_per_hour, usd_per_m_tokens

INPUT_FIELDS = ("accelerator", "accelerator_count", "electricity_usd_per_kwh", "output_tokens_per_s_per_accelerator")

default_values: dict[str, Any] = economics.default_scenario().model_dump()


def _as_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _as_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _help(field: str) -> str:
    spec = FIELDS[field]
    unit = f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""
    return f"{spec.description}{unit}. Field `{field}`."


st.title("Cost per token")

with st.sidebar:
    st.header("Scenario")
    accelerator_ids = catalog.accelerator_ids()
    st.selectbox(
        "Accelerator",
        accelerator_ids,
        index=accelerator_ids.index(default_values["accelerator"]) if default_values["accelerator"] in accelerator_ids
        else 0,
        key="accelerator",
        help=_help("accelerator"),
    )
    st.number_input(
        FIELDS["accelerator_count"].label,
        value=_as_int(default_values["accelerator_count"]),
        step=1,
        placeholder="empty: sized from demand",
        key="accelerator_count",
        help=_help("accelerator_count"),
    )
    st.number_input(
        FIELDS["electricity_usd_per_kwh"].label,
        value=_as_float(default_values["electricity_usd_per_kwh"]),
        step=0.01,
        format="%.3f",
        key="electricity_usd_per_kwh",
        help=_help("electricity_usd_per_kwh"),
    )
    st.number_input(
        FIELDS["output_tokens_per_s_per_accelerator"].label,
        value=_as_float(default_values["output_tokens_per_s_per_accelerator"]),
        step=10.0,
        format="%.2f",
        placeholder="empty: estimated",
        key="output_tokens_per_s_per_accelerator",
        help=_help("output_tokens_per_s_per_accelerator"),
    )

scenario = economics.with_changes(economics.default_scenario(), **{f: st.session_state[f] for f in INPUT_FIELDS})

try:
    result = economics.evaluate_scenario(scenario)
    explanation = economics.explain_text(scenario)
except economics.ScenarioError as error:
    st.error(str(error))
    st.stop()

kpis = st.columns(3)
kpis[0].metric("Cost per M tokens", usd_per_m_tokens(result["cost_usd_per_m_tokens"]))
kpis[1].metric("Cost per hour", usd_per_hour(result["cost_usd_per_hour"]))
kpis[2].metric("Utilization", percent(result["utilization"]))

for warning in economics.split_warnings(result["warnings"]):
    st.warning(warning)

with st.expander("How this is computed"):
    st.code(explanation, language=None)
