"""Uncertainty page: ranges on the inputs people argue about, the tornado of their effect on cost per token, and a
seeded Monte Carlo with P10 / P50 / P90 and how often owning beats renting.

A lens on the working scenario (:mod:`ui.state`); the ranges, the sample count and the seed are page settings kept
in the same state and carried by the link. Every number comes from :mod:`economics.studies.uncertainty`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import economics
from economics.schema.outputs import label
from economics.studies.uncertainty import (
    applies,
    base_value,
    default_range,
    estimate_range,
)
from ui import common, editor, links, state, studies
from ui import format as fmt
from ui.text import headed, plain

KEY_FIELDS = ("name", "ownership", *links.RANGED_FIELDS)
KPI_PAUSE_S, RUN_START_REDRAW_S = 0.08, 0.2
# The KPIs' own moment (ui/editor.py's Sidebar), as on the Decode page: the title, the ~30 inputs and the charts
# that followed the KPIs 0.025 s after them were rendered first in some edits (74-437 ms of the browser's CPU each
# at load 8-15), and the KPIs showed only after them; so the rest waits until 0.2 s after the run started and at
# least 0.08 s after the KPIs (bench/app_latency.py, alternated with main, in docs/speed.md)
# the summary table's columns, each with its header
SUMMARY_TITLES = {"output": "Output [unit]", "p10": "P10", "p50": "P50", "p90": "P90", "mean": "Mean",
                  "samples": "Samples computed"}


def _range_changed(name: str) -> None:
    text = str(st.session_state.get(f"range_{name}") or "").replace(",", "").strip()
    try:
        state.set_setting(name, links.parse_setting(name, text))
    except ValueError as exc:
        state.error(f"{name}: {exc}; not applied")


def _number_setting_changed(name: str, key: str) -> None:
    try:
        state.set_setting(name, links.parse_setting(name, str(st.session_state.get(key))))
    except ValueError as exc:
        state.error(f"{name}: {exc}; not applied")


def _range_inputs(result: dict[str, Any]) -> None:
    settings = state.settings()
    # st.header's level and the caption under it as one Markdown element (ui.text.headed): one element fewer to draw
    st.markdown(headed("Ranges", "Low and high of each input; empty = the default spread around the scenario's value.",
                       level=2))
    for field in links.RANGED_FIELDS:
        if not applies(field, result):  # a tier's rent on another tier, carbon figures with carbon unpriced
            continue
        value = base_value(result, field)
        if value is None:
            st.caption(f"{editor.label(field)}: no value in this scenario, so no range.")
            continue
        default = default_range(field, value, result)
        where = st.container(horizontal=True, gap="small")  # one block for the pair (st.columns: three)
        ends = []
        for end, fallback in (("low", default[0]), ("high", default[1])):
            name = f"{field}_{end}"
            st.session_state[f"range_{name}"] = editor.shown(field, settings[name])
            where.text_input(f"{editor.label(field)}, {end}", key=f"range_{name}", on_change=_range_changed, width=112,
                             args=(name,), placeholder=f"empty: {fmt.number(fallback)}",
                             help=f"Setting `{links.SETTINGS_PREFIX}{name}`; base value {fmt.number(value)}")
            ends.append(fallback if settings[name] is None else float(settings[name]))
        lo, hi = ends
        if estimate_range(result, field) is not None:
            st.caption(plain(f"{editor.label(field)}: the default range is the estimate's own P10-P90 "
                             f"({fmt.number(default[0])} to {fmt.number(default[1])}; "
                             f"{result.get('throughput_basis') or 'estimated'})."))
        if not lo <= value <= hi:
            st.warning(f"{editor.label(field)}: the range {fmt.number(lo)} to {fmt.number(hi)} does not contain the "
                       f"scenario's value {fmt.number(value)}; it is widened to contain it.")


def _sampling_inputs() -> None:
    settings = state.settings()
    st.session_state["mc_samples"] = settings["samples"]
    st.number_input("Samples", min_value=links.SAMPLES_BOUNDS[0], max_value=links.SAMPLES_BOUNDS[1], step=1000,
                    key="mc_samples", on_change=_number_setting_changed, args=("samples", "mc_samples"),
                    help=f"Monte Carlo draws; setting `{links.SETTINGS_PREFIX}samples`")
    st.session_state["mc_seed"] = settings["seed"]
    st.number_input("Seed", min_value=links.SEED_BOUNDS[0], max_value=links.SEED_BOUNDS[1], step=1, key="mc_seed",
                    on_change=_number_setting_changed, args=("seed", "mc_seed"),
                    help=f"Same seed, same draws; setting `{links.SETTINGS_PREFIX}seed`")


def _inputs(side: editor.Sidebar, result: dict[str, Any]) -> None:
    """The sidebar: the scenario's key fields, then the ranges, the samples and the seed (once per run)."""
    if side.drawn:
        return
    side()
    with st.sidebar:
        _range_inputs(result)
        _sampling_inputs()


def _summary_table(summary: Any) -> None:
    """P10, P50, P90 and mean of each output over the draws, each in its output's display format (the units differ
    by row, so the cells are formatted text), as a static table (:func:`ui.common.text_table`: a dozen rows need no
    grid, and the browser lays out none when a run starts)."""
    records = summary.to_dict("records")
    cells = {"output": [label(str(r["output"])) for r in records],
             **{k: [fmt.output(str(r["output"]), r[k]) for r in records] for k in ("p10", "p50", "p90", "mean")},
             "samples": [fmt.count(r["samples"]) for r in records]}
    common.text_table({SUMMARY_TITLES[c]: cells[c] for c in SUMMARY_TITLES},
                      figures=[SUMMARY_TITLES[c] for c in list(SUMMARY_TITLES)[1:]])


common.page_start()
side = editor.Sidebar("Scenario", KEY_FIELDS, pause_s=KPI_PAUSE_S, redraw_s=RUN_START_REDRAW_S, title="Uncertainty",
                      intro=("Give each uncertain input a low and a high around the scenario's value. The tornado "
                             "moves one input at a time; the Monte Carlo draws them all at once (triangular, peaked at "
                             "the base value)."))
scenario = state.scenario()
try:
    result = common.evaluate(scenario)
except economics.ScenarioError as error:
    side.above()  # the title and the messages above the error
    common.evaluation_error(error)
    side.stop()
settings = state.settings()
samples, seed = int(settings["samples"]), int(settings["seed"])

key, ranges_json = common.canonical(scenario), studies.ranges_key(result, settings)
try:
    mc = studies.monte_carlo_of(key, ranges_json, samples, seed)
except economics.ScenarioError as error:
    side.above()  # the title and the messages above the error
    st.error(plain(str(error)))
    _inputs(side, result)
    st.stop()


def _percentiles(mc: Any) -> dict[str, float]:
    """P10, P50 and P90 of the cost per M tokens (the summary's row, computed alone: the KPIs need nothing else)."""
    figures = mc.figures("cost_usd_per_m_tokens")
    return {p: float(figures[p]) for p in ("p10", "p50", "p90")}


pinned = state.baseline()
base: tuple[dict[str, float], float | None] | None = None
if pinned is not None:
    try:  # the baseline under the same ranges, draws and seed
        pinned_key = common.canonical(pinned)
        base = (_percentiles(studies.monte_carlo_of(pinned_key, ranges_json, samples, seed)),
                studies.own_cheaper(pinned_key, ranges_json, samples, seed))
    except economics.ScenarioError:
        base = None
summary = _percentiles(mc)
k = common.row()
for p in ("p10", "p50", "p90"):
    change = None if base is None else fmt.versus(fmt.delta("cost_usd_per_m_tokens", summary[p], base[0][p]),
                                                  summary[p] == base[0][p])
    k.metric(f"{p.upper()} cost per M tokens", fmt.usd_rate(summary[p]), help=f"{p[1:]} % of the draws cost less",
             delta=change, delta_color="inverse")
# filled once the paired rent draws are done: a container, in which the browser keeps the previous run's figure,
# greyed, until then (a container replacing one keeps its children); an empty slot blanked it, and the row's
# KPIs moved while it was blank
own_slot = k.container()
# the percentiles are on screen before the title and inputs are drawn again, the paired rent draws and the tornado
# computed (see editor.Sidebar)
_inputs(side, result)
with side.above():  # in its place above the KPIs
    common.baseline_controls()
own_cheaper = studies.own_cheaper(key, ranges_json, samples, seed)
change = None
if base is not None and own_cheaper is not None and base[1] is not None:
    change = fmt.versus(fmt.signed(own_cheaper - base[1], fmt.points), own_cheaper == base[1])
own_slot.metric("Owning cheaper than renting [share of samples]",
                "no rent figure" if own_cheaper is None else fmt.percent(own_cheaper),
                help="Same draws for both (paired); renting at the catalog rent",
                delta=change, delta_color="off")
try:
    sens = studies.tornado_of(key, ranges_json)
except economics.ScenarioError as error:
    st.error(plain(str(error)))
    st.stop()

common.heading("Tornado: cost per M tokens, one input at a time")
common.draw(studies.tornado_spec(), {"tornado": studies.tornado_bars(key, ranges_json)})
common.heading("Monte Carlo: distribution of cost per M tokens")
common.draw(studies.histogram_spec(), {"bins": studies.histogram_bins(key, ranges_json, samples, seed)})
_summary_table(mc.summary)
common.share()
