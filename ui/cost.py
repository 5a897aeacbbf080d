"""Cost per token page: what a million tokens costs on this fleet, where the money goes, and the margin at your
prices and at published API prices.

A lens on the working scenario (:mod:`ui.state`): the key fields of the question are in the sidebar, every other
field one click away; every number comes from :mod:`economics`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics.report import charts, kpis
from economics.schema.outputs import DisplayFormat as Show
from ui import common, day, editor, report, saving, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "ownership", "accelerator_count", "accelerator_price_usd",
              "rent_usd_per_accelerator_hour", "electricity_usd_per_kwh", "pue", "colocation_usd_per_kw_month",
              "depreciation_years", "cost_of_capital", "model", "output_tokens_per_s_per_accelerator",
              "demand_input_tokens_per_day", "demand_output_tokens_per_day", "price_usd_per_m_input_tokens",
              "price_usd_per_m_output_tokens")
NOT_SEPARABLE = kpis.NOT_SEPARABLE
WARNING_COLOR = "#d62728"
UTILIZATION_NOTE = "Same fleet, demand set to each share of its capacity; the red dot is this scenario."


def _load_preset() -> None:
    chosen = st.session_state.get("preset")
    if chosen:
        state.replace(studies.presets()[chosen][0])
    st.session_state["preset"] = None


def _preset_picker() -> None:
    st.selectbox("Load a preset", list(studies.presets()), index=None, key="preset",
                 on_change=_load_preset, placeholder="Replace the scenario with a preset...",
                 help="Ready-made scenarios from data/presets.csv; each note cites its figures")


def _preset_note(scenario: dict[str, Any]) -> None:
    """The note of the preset the scenario came from, or what changed since, if it came from one."""
    presets = studies.presets()
    origin_name = scenario["name"].removeprefix(state.EDITED)
    if origin_name in presets:
        origin, note = presets[origin_name]
        edits = [f for f in economics.FIELDS if f != "name" and scenario.get(f) != origin.get(f)]
        if not edits:
            st.caption(note)  # the preset as it is: its note describes it
        else:  # edited: the preset's note no longer describes it
            st.caption(f"Edited from the preset {plain(origin_name)}: {', '.join(edits)} changed since. Where each "
                       "figure now comes from: the throughput line below, explain for every input.")


def _top(scenario: dict[str, Any], result: dict[str, Any] | None) -> None:
    """What sits above the KPIs after the title (see editor.Sidebar.above): the preset's note, whether the
    scenario is feasible and the baseline's buttons (``result`` None: the note alone, the engine refused it)."""
    with side.above():
        _preset_note(scenario)
        if result is not None and not result["feasible"]:
            st.error(f"Not feasible: {plain(result['infeasible_reason'])}")
        if result is not None and result["cost_usd_per_m_tokens"] is not None:
            common.baseline_controls()


common.page_start()
side = editor.Sidebar("Scenario", KEY_FIELDS, before=_preset_picker, title="Cost per token")
scenario = state.scenario()
try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    _top(scenario, None)
    common.evaluation_error(error)
    side.stop()
if result["cost_usd_per_m_tokens"] is None:
    _top(scenario, result)
    side.stop()

base = common.baseline_result()
separable = "Give a measured prefill throughput (input tokens/s per accelerator) to split the cost by device time"
for names in kpis.COST_ROWS:
    k = common.row()
    for name in names:
        common.metric(k, name, result, base, value=kpis.stated(name, result))
side()  # the title and the inputs after the KPIs (see editor.Sidebar)
_top(scenario, result)
per_dollar = 1e6 / result["cost_usd_per_m_tokens"]
split = [f"Input/output split: {NOT_SEPARABLE}. {separable}."] if result["cost_usd_per_m_input_tokens"] is None else []
lead = [*split, (f"{fmt.count(result['accelerators'])} x {result['accelerator']} ({result['ownership']}); "
                 f"{fmt.count(per_dollar)} tokens per dollar; "
                 f"{fmt.output('facility_power_kw', result['facility_power_kw'])} at the facility; PUE "
                 f"{fmt.number(result['pue_effective'])}.")]
common.warnings_and_provenance(result, lead)

pinned = state.baseline()
if pinned is not None and base is not None:
    common.heading("Against the baseline")
    common.difference_table(result, base)

key = common.canonical(scenario)
left, right = st.columns(2)
with left:
    common.heading("Where the money goes")
    common.draw(studies.breakdown_spec(), charts.breakdown_data(result))
with right:
    if result["capacity_output_tokens_per_day"]:  # the chart's note under its heading: one element, not two
        common.heading("Cost against utilization", UTILIZATION_NOTE)
        curve = studies.cost_curve(key)
        common.draw(studies.utilization_spec(), charts.utilization_data(result, curve))
    else:
        common.heading("Cost against utilization")
        st.info("No capacity figure for this scenario, so no curve.")

day.panel(scenario, result, base)

common.heading("Against published API prices",
               "Your fleet's margin if it sold at each listed price (data/api_prices.csv; check the dates).")
margins = studies.margins(key)
common.show_table(margins, key="api_prices", columns=[
    "provider", "model", "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "revenue_usd_per_day",
    "gross_margin", "confidence", "source_date"], extra={
        "provider": ("Provider", Show.TEXT), "model": ("Model", Show.TEXT), "confidence": ("Confidence", Show.TEXT),
        "source_date": ("Date read", Show.TEXT),
        "price_usd_per_m_input_tokens": ("Input price [USD/M token]", Show.USD_RATE),
        "price_usd_per_m_output_tokens": ("Output price [USD/M token]", Show.USD_RATE)}, static=True)

report.offer("cost", report.scenario_pdf("cost"))
common.share()
box = common.panel("Save to library", "save")
if box is not None:  # drawn only while open
    with box:
        st.caption("A new version of the stored scenario (who, when, what changed); the Library page lists, opens "
                   "and compares them, and the link then names the version.")
        saving.form("cost_save", with_project=False)
common.explanation(scenario, key="show_derivation")
