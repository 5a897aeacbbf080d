"""Fleet page: the hardware, racks and megawatts the working scenario's demand needs at its interactivity target,
whether the facility (air or liquid cooling, rack density, site power) can host it, and the same demand on other
accelerators.

A lens on the working scenario (:mod:`ui.state`); the accelerators compared are a page setting kept in the same
state and carried by the link. Every number comes from :mod:`economics`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics import catalog
from economics.report import kpis
from economics.schema.outputs import DisplayFormat as Show
from ui import common, editor, report, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "demand_output_tokens_per_day", "demand_input_tokens_per_day", "peak_to_average", "headroom",
              "accelerator", "accelerator_count", "model", "precision", "serving_stack",
              "target_output_tokens_per_s_per_user",
              "output_tokens_per_s_per_accelerator", "facility_cooling", "allow_liquid_retrofit", "rack_power_kw",
              "site_power_mw")


COMPARE_NOTE = (
    "Each accelerator with its own catalog figures and its throughput interpolated or estimated (a measured figure "
    "belongs to one accelerator); those without a published price are costed as rented. Serving stack: with best (the "
    "default) each accelerator gets its own best published stack at the per-user target, named in the Serving stack "
    "column; pin one stack in the sidebar to compare all on it (where it has no measured curve, the roofline with its "
    "terms answers, and says so).")
# drawn under the heading with COMPARE_NOTE when a comparison is shown (one element, not a caption after the table)
OFF_SITE_NOTE = ("A rented fleet is off site: the site's power, racks and cooling limits do not apply to it, so it is "
                 "never said to fit them.")


def _compare_changed() -> None:
    state.set_setting("compare", tuple(st.session_state.get("compare_accelerators") or ()))


def _compare_odds(key: str, choices: tuple[str, ...], settings: dict[str, Any]) -> None:
    """How often each accelerator is the cheapest per M tokens over the draws of every ranged input (the same draws
    for every accelerator; the Uncertainty page's samples and seed), on request."""
    if not st.toggle("Odds of being the cheapest", value=False, key="show_compare_odds",
                     help="Monte Carlo over each accelerator's estimated throughput (P10-P90), estimated prices, "
                          "electricity and the cost of capital; the samples and seed are the Uncertainty page's"):
        return
    samples, seed = int(settings["samples"]), int(settings["seed"])
    try:
        found = studies.compare_odds_of(key, choices, samples, seed)
    except (economics.ScenarioError, ValueError) as error:
        st.error(plain(str(error)))
        return
    st.markdown(f"**{found.headline()}.**")
    common.show_table(found.table, key="compare_odds_table", extra={
        "probability_cheapest": ("Cheapest in", Show.PERCENT), "computed_share": ("Draws computed", Show.PERCENT),
        "reason": ("Not computed because", Show.TEXT)}, static=True)
    notes = found.assumptions()
    if notes:
        st.caption("Assumptions (ranges no source gives): " + "; ".join(notes) + ".")


common.page_start()
side = editor.Sidebar("Demand, hardware, facility", KEY_FIELDS, title="Fleet, racks and power", intro=(
    "Size the fleet for a demand at a speed per user, then check it against the facility: cooling (air, liquid, "
    "hybrid), rack power density and site power. Throughput is measured if you give it, else interpolated on a "
    "measured curve or estimated from the model."))
scenario = state.scenario()

if scenario["accelerator_count"] is not None:
    with side.above():  # the title first, then this (rare: drawn before the KPIs)
        st.info(f"The fleet is fixed at {fmt.count(scenario['accelerator_count'])} accelerators, so it is not sized "
                f"from the demand.")
        st.button("Size the fleet from the demand instead", key="size_from_demand", on_click=state.edit_text,
                  args=({"accelerator_count": ""},))
try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    common.evaluation_error(error)
    if scenario["model"] is None and scenario["output_tokens_per_s_per_accelerator"] is None:
        st.info("Sizing needs a throughput: give a measured one, or choose a model to estimate it (sidebar).")
    side.stop()

base = common.baseline_result()
lead: list[str] = []  # the fleet's line, drawn with the throughput's (common.warnings_and_provenance)
if result["accelerators"] is not None:
    for outputs in kpis.FLEET_ROWS:
        common.kpi_row(outputs, result, base)
    lead = [f"Rack power limit {fmt.output('rack_power_kw_effective', result['rack_power_kw_effective'])}; PUE "
            f"{fmt.number(result['pue_effective'])}; cost {fmt.usd(result['cost_usd_per_year'])} a year; "
            f"throughput {result.get('throughput_source') or 'given'}"
            + (f", serving stack {plain(result['serving_stack_used'])}" if result.get("serving_stack_used") else "")
            + "."]
side()  # the title and the inputs after the KPIs (see editor.Sidebar)
with side.above():  # in its place above the KPIs
    if result["feasible"]:
        st.success(f"{catalog.accelerator_record(result['accelerator']).get('name', result['accelerator'])} fits "
                   f"this facility.")
    else:
        st.error(f"Does not fit: {plain(result['infeasible_reason'])}")
    common.baseline_controls()
common.warnings_and_provenance(result, lead)
if state.baseline() is not None and base is not None:
    common.heading("Against the baseline")
    common.difference_table(result, base)

settings = state.settings()
ids = catalog.accelerator_ids()
names = studies.accelerator_names()
st.session_state["compare_accelerators"] = [a for a in settings["compare"] if a in ids]  # what the select shows
compared = bool(st.session_state["compare_accelerators"]) and scenario["model"] is not None
common.heading("The same demand on other accelerators", COMPARE_NOTE, *([OFF_SITE_NOTE] if compared else []))
choices = st.multiselect("Accelerators to compare", ids, key="compare_accelerators", on_change=_compare_changed,
                         format_func=lambda a: names.get(a, a))
if choices and scenario["model"] is None:
    st.info("Each accelerator's throughput is estimated from the model, and this scenario has none: choose a model "
            "(sidebar) to compare.")
elif choices:
    table = studies.compare_of(common.canonical(scenario), tuple(choices))
    spec = studies.compare_spec(common.canonical(scenario), tuple(choices))
    if spec is not None:
        common.draw(spec)
    common.show_table(table, key="compare_table", static=True, wide=True, extra={
        "error": ("Not computed because", Show.TEXT), "rank": ("Rank", Show.COUNT), "site": ("Site", Show.TEXT)})
    _compare_odds(common.canonical(scenario), tuple(choices), settings)

report.offer("fleet", report.scenario_pdf("fleet"))
common.share()
# the derivation stays when the fleet does not fit: that is when a user needs to see why
common.explanation(scenario, key="show_derivation")
