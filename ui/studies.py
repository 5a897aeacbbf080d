"""The pages' studies and chart specs, cached per canonical scenario key (:func:`ui.common.canonical`).

They live here rather than in the page scripts because a page script runs again on every rerun, and wrapping a
function with ``st.cache_data`` there looks its source up again each time (about half a millisecond a function,
before the page's first KPI). Presentation only: every number comes from :mod:`economics`; a chart spec is built
once per entry of the data it draws (:func:`economics.report.charts.vega_spec`, the specs the board report
prints too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import streamlit as st

import economics
from economics import catalog
from economics.engine.batch import as_scenario, resolve_scenario
from economics.report import charts
from economics.studies import retrofit_odds
from economics.studies.calibration import report
from economics.studies.compare import SITE_WORDS, compare_accelerators, cost_vs_utilization, margins_at_prices
from economics.studies.compare_odds import compare_odds
from economics.studies.day import hours_table
from economics.studies.interactivity import CURVE_IGNORES, interactivity_curve
from economics.studies.retrofit import OptionKind, analyse, break_even_decode_price_usd
from economics.studies.retrofit_explain import option_text
from economics.studies.uncertainty import MonteCarlo, default_ranges, histogram, monte_carlo, probability_lower, tornado
from ui import common, editor, links

WARNING_COLOR = charts.WARNING_COLOR
FEASIBLE_COLORS = ["#4c78a8", "#d62728", "#72b7b2", "#9d755d"]  # one per SITE_WORDS value, in its order
# altair (with jinja2 and jsonschema, about 0.2 s of CPU) is imported where a chart is built, after a page's KPIs
# (issue #43: the cold start's first KPI waits for nothing it does not draw)


# Cost per token page

@st.cache_resource(max_entries=64, show_spinner=False)
def resolved_of(key: str) -> Any:
    """The scenario resolved once (validated, catalog figures, throughput) for both studies below; they only read
    it (:func:`economics.engine.batch.evaluate_variants` copies the columns it changes)."""
    return resolve_scenario(json.loads(key))


@st.cache_data(max_entries=256, show_spinner=False)
def cost_curve(key: str) -> Any:
    scenario = json.loads(key)
    return cost_vs_utilization(scenario, points=20, result=common.evaluate(scenario), resolved=resolved_of(key))


@st.cache_data(max_entries=256, show_spinner=False)
def margins(key: str) -> Any:
    return margins_at_prices(json.loads(key), catalog.api_prices(), resolved=resolved_of(key))


@st.cache_data(show_spinner=False)
def presets() -> dict[str, tuple[dict[str, Any], str]]:
    """name -> (scenario fields, note): data/presets.csv, read once."""
    return {name: (s.model_dump(), note) for name, (s, note) in economics.preset_scenarios().items()}


@st.cache_data(show_spinner=False)
def breakdown_spec() -> dict[str, Any]:
    """:func:`economics.report.charts.breakdown_spec`, built once: drawn with each scenario's parts."""
    return charts.breakdown_spec()


@st.cache_data(show_spinner=False)
def utilization_spec() -> dict[str, Any]:
    """:func:`economics.report.charts.utilization_spec`, built once."""
    return charts.utilization_spec()


# Fleet page

@st.cache_data(max_entries=128, show_spinner=False)
def compare_of(key: str, accelerators: tuple[str, ...]) -> Any:
    return compare_accelerators(json.loads(key), list(accelerators), _rented(accelerators))


def _rented(accelerators: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """No published price: cost those as rented so they can still be compared."""
    return {a: {"ownership": "rent"} for a in accelerators
            if math.isnan(catalog.accelerator_record(a).get("price_usd", math.nan))}


@st.cache_resource(max_entries=16, show_spinner=False)
def compare_odds_of(key: str, accelerators: tuple[str, ...], samples: int, seed: int) -> Any:
    """The comparison's odds (:func:`economics.studies.compare_odds.compare_odds`, the accelerators without a price
    rented as the comparison rents them), remembered per scenario, accelerators, samples and seed."""
    return compare_odds(json.loads(key), list(accelerators), samples, seed,
                        changes_by_accelerator=_rented(accelerators))


@st.cache_data(max_entries=128, show_spinner=False)
def compare_spec(key: str, accelerators: tuple[str, ...]) -> dict[str, Any] | None:
    """Cost per M tokens of each accelerator that has one, coloured by whether it fits the facility (the chart of
    :func:`_compare_chart` with this comparison's rows); None when none has a cost."""
    table = compare_of(key, accelerators)
    costed = table[table["cost_usd_per_m_tokens"].notna()]
    if not len(costed):
        return None
    return {**_compare_chart(), "datasets": {"compare": costed}}


@st.cache_data(show_spinner=False)
def _compare_chart() -> dict[str, Any]:
    """The comparison's bar chart (dataset ``compare``), built once: altair built it on every edit of the Fleet page
    (about 15 ms of CPU, after its KPIs; docs/speed.md)."""
    import altair as alt

    chart = alt.Chart(alt.NamedData("compare")).mark_bar().encode(
        x=alt.X("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]", scale=alt.Scale(zero=True)),
        y=alt.Y("accelerator:N", sort=None, title=None),
        color=alt.Color("site:N", title="Site", scale=alt.Scale(domain=list(SITE_WORDS.values()),
                                                                        range=FEASIBLE_COLORS)),
        tooltip=["accelerator:N", "serving_stack_used:N", "ownership:N", "site:N",
                 alt.Tooltip("cost_usd_per_m_tokens:Q", format="$,.3f", title="USD per M tokens"),
                 alt.Tooltip("accelerators:Q", format=","), alt.Tooltip("racks:Q", format=","),
                 alt.Tooltip("facility_power_kw:Q", format=",.0f", title="facility kW"), "infeasible_reason:N"])
    return charts.vega_spec(chart)


@st.cache_data(show_spinner=False)
def accelerator_names() -> dict[str, str]:
    return {a: str(catalog.accelerator_record(a).get("name", a)) for a in catalog.accelerator_ids()}


# Decode accelerators page

@st.cache_resource(max_entries=64, show_spinner=False)
def retrofit_of(key: str) -> Any:
    """The study itself, not a copy (no pickling before the KPIs): the page only reads it."""
    return analyse(json.loads(key))


@st.cache_resource(max_entries=64, show_spinner=False)
def retrofit_decode_of(key: str) -> Any:
    """The study of 'add decode' against the status quo alone (``analyse(..., only=...)``): its rows are the whole
    study's, and on a new demand it skips the options sized from demand (their sizing pass and theirs), which the
    Decode page's KPIs of adding decode do not read. The whole study then finds both remembered."""
    return analyse(json.loads(key), only=(OptionKind.ADD_DECODE,))


@st.cache_resource(max_entries=16, show_spinner=False)
def retrofit_odds_of(key: str, samples: int, seed: int) -> Any:
    """The study's odds (:func:`economics.studies.retrofit_odds.odds`), remembered per scenario, samples and seed:
    an edit elsewhere on the page draws nothing again. The page only reads it."""
    return retrofit_odds.odds(json.loads(key), samples=samples, seed=seed, point=retrofit_of(key))


@st.cache_data(show_spinner=False)
def _fan_chart() -> dict[str, Any]:
    """:func:`economics.report.charts.fan_spec`, built once (altair takes 15-60 ms to build its layered chart, which
    the page paid on every new state): drawn with each study's fan."""
    return charts.fan_spec()


@st.cache_data(max_entries=16, show_spinner=False)
def fan_spec(key: str, samples: int, seed: int) -> dict[str, Any]:
    """The fan of the study's odds (:func:`economics.report.charts.fan_spec`), its data built once per scenario,
    samples and seed."""
    return {**_fan_chart(), "datasets": charts.fan_data(retrofit_odds_of(key, samples, seed).fan)}


@st.cache_data(max_entries=64, show_spinner=False)
def retrofit_explanation(key: str, option: str) -> str:
    """How one option of the study is computed, with its numbers
    (:func:`economics.studies.retrofit_explain.option_text`)."""
    return option_text(retrofit_of(key), option, as_scenario(json.loads(key)))


@st.cache_data(show_spinner=False)
def _cashflow_chart() -> dict[str, Any]:
    """:func:`economics.report.charts.cashflow_spec`, built once: drawn with each study's cash flows."""
    return charts.cashflow_spec()


@st.cache_data(max_entries=64, show_spinner=False)
def cashflow_spec(key: str) -> dict[str, Any]:
    """The cumulative cash flow of each option against the status quo
    (:func:`economics.report.charts.cashflow_spec`), its data built once per study."""
    return {**_cashflow_chart(), "datasets": charts.cashflow_data(retrofit_of(key).cashflows)}


@st.cache_data(show_spinner=False)
def refresh_spec() -> dict[str, Any]:
    """:func:`economics.report.charts.refresh_spec` (the board report's chart), built once: drawn with each study's
    refresh table (altair through ``st.bar_chart`` was built on every run of the page)."""
    return charts.refresh_spec()


@st.cache_data(max_entries=64, show_spinner=False)
def break_even(key: str) -> float | None:
    return break_even_decode_price_usd(json.loads(key))


# Throughput page

def curve_key(scenario: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[str, str]:
    """What the interactivity curve depends on: neither the per-user target nor a given throughput changes it
    (:data:`economics.studies.interactivity.CURVE_IGNORES`), only which measured stack is the one the estimate chose
    (the evaluation's ``serving_stack_used``), so moving the target redraws no curve."""
    return common.canonical({**scenario, **dict.fromkeys(CURVE_IGNORES)}), str(result.get("serving_stack_used") or "")


@st.cache_data(max_entries=64, show_spinner=False)
def curve_of(key: str, chosen: str) -> dict[str, Any]:
    return interactivity_curve(json.loads(key), chosen=chosen)


def _front_layer() -> Any:
    import altair as alt

    return alt.Chart(alt.NamedData("front")).mark_line(color="black").encode(
        x=alt.X("output_tokens_per_s_per_user:Q", title="Output tokens/s per user"),
        y=alt.Y("effective_output_tokens_per_s_per_accelerator:Q", title="Output tokens/s per accelerator"),
        tooltip=[alt.Tooltip("batch_size:Q", title="batch"),
                 alt.Tooltip("accelerators_per_replica:Q", title="replica"),
                 alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                 alt.Tooltip("effective_output_tokens_per_s_per_accelerator:Q",
                             title="tokens/s per accelerator", format=",.0f"),
                 alt.Tooltip("cost_usd_per_m_tokens:Q", title="USD per M tokens", format="$,.3f")])


def _measured_layers() -> list[Any]:
    import altair as alt

    chosen = alt.Scale(domain=["chosen", "other stack"], range=[1.0, 0.35])
    base_pts = alt.Chart(alt.NamedData("measured")).encode(
        x="output_tokens_per_s_per_user:Q", y="output_tokens_per_s_per_accelerator:Q",
        color=alt.Color("series:N", title="Serving stack (measured)", legend=alt.Legend(labelLimit=400)),
        detail="curve:N",
        opacity=alt.Opacity("role:N", title="Stack", scale=chosen))
    return [base_pts.mark_line(strokeWidth=1.5), base_pts.mark_point(filled=True).encode(
        size=alt.Size("role:N", title="Stack", scale=alt.Scale(domain=["chosen", "other stack"], range=[140, 50])),
        shape=alt.Shape("series:N", title="Serving stack (measured)", legend=alt.Legend(labelLimit=400)),
        tooltip=["serving_stack:N", "curve:N", "role:N", alt.Tooltip("input_tokens:Q", title="input tokens"),
                 alt.Tooltip("output_tokens:Q", title="output tokens"),
                 alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                 alt.Tooltip("output_tokens_per_s_per_accelerator:Q", title="tokens/s per accelerator",
                             format=",.0f")])]


def _cost_chart() -> Any:
    import altair as alt

    return alt.Chart(alt.NamedData("front")).mark_line().encode(
        x=alt.X("output_tokens_per_s_per_user:Q", title="Output tokens/s per user"),
        y=alt.Y("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]", scale=alt.Scale(zero=True)),
        tooltip=[alt.Tooltip("output_tokens_per_s_per_user:Q", title="tokens/s per user", format=",.1f"),
                 alt.Tooltip("cost_usd_per_m_tokens:Q", title="USD per M tokens", format="$,.3f")])


@st.cache_data(max_entries=4, show_spinner=False)
def _curve_chart(front: bool, measured: bool) -> dict[str, Any]:
    """The interactivity chart's spec with the roofline front's layer, the measured points' layers or both, built
    once each: altair built it, and the cost chart, for every new curve (a page switch to Throughput with a new
    scenario; about 40 ms of CPU; issue #43)."""
    import altair as alt

    layers = [*([_front_layer()] if front else []), *(_measured_layers() if measured else [])]
    return charts.vega_spec(alt.layer(*layers).interactive())


@st.cache_data(show_spinner=False)
def _cost_spec() -> dict[str, Any]:
    """The cost-along-the-curve chart's spec (dataset ``front``), built once."""
    return charts.vega_spec(_cost_chart())


@st.cache_data(max_entries=64, show_spinner=False)
def curve_specs(key: str, chosen: str) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The interactivity chart and the cost-along-the-curve chart (None without a roofline front) with this
    curve's rows, once per curve; None when there is nothing to draw."""
    drawn = curve_of(key, chosen)
    front, measured = drawn["front"], drawn["measured"]
    if front.empty and measured.empty:
        return None
    data = {}
    if not front.empty:
        data["front"] = front.assign(series="roofline estimate")
    if not measured.empty:
        data["measured"] = measured.assign(series=measured["serving_stack"],
                                           role=["chosen" if c else "other stack" for c in measured["chosen"]])
    chart = _curve_chart(not front.empty, not measured.empty)
    spec = _cost_spec()  # a cached function's answer is a copy per call: read once
    cost = None if front.empty else {**spec, "datasets": {"front": _read_by(spec, front)}}
    return {**chart, "datasets": {name: _read_by(chart, rows) for name, rows in data.items()}}, cost


def _read_by(spec: dict[str, Any], rows: Any) -> Any:
    """The columns of ``rows`` the chart's encodings and tooltips name, in their order: the browser decodes and
    ingests no other (the curve's cost, utilization and prefill columns the chart does not draw were half of its
    bytes; issue #43's switch)."""
    return rows[[c for c in rows.columns if c in _fields(spec)]]


def _fields(spec: Any) -> set[str]:
    """Every ``field`` a Vega-Lite spec names, at any depth."""
    if isinstance(spec, dict):
        own = {spec["field"]} if isinstance(spec.get("field"), str) else set()
        return own.union(*(_fields(v) for k, v in spec.items() if k != "datasets"))
    if isinstance(spec, list):
        return set().union(*(_fields(v) for v in spec))
    return set()


@st.cache_data(show_spinner=False)
def calibration() -> tuple[Any, Any]:
    return report()  # the fit against every measured point: depends on data/ only


# Uncertainty page

def ranges_key(result: dict[str, Any], settings: Mapping[str, Any]) -> str:
    """The range of each ranged field with a value, as the studies below take it (JSON, keys sorted): the page
    settings' ends, or the default spread around the value (:func:`economics.studies.uncertainty.default_ranges`)."""
    given: dict[str, tuple[float | None, float | None]] = {}
    for f in links.RANGED_FIELDS:
        lo, hi = settings[f"{f}_low"], settings[f"{f}_high"]
        given[f] = (None if lo is None else float(lo), None if hi is None else float(hi))
    return json.dumps(default_ranges(result, given), sort_keys=True)


def own_cheaper(key: str, ranges_json: str, samples: int, seed: int) -> float | None:
    """Share of the draws in which the scenario as it is (owned) is cheaper than the same fleet rented (same
    draws: paired); None when it cannot be rented (no rent for its accelerator)."""
    rent_key = common.canonical({**json.loads(key), "ownership": "rent"})
    try:
        rented = monte_carlo_of(rent_key, ranges_json, samples, seed)
    except economics.ScenarioError:
        return None
    return probability_lower(monte_carlo_of(key, ranges_json, samples, seed), rented)


@st.cache_resource(max_entries=64, show_spinner=False)
def monte_carlo_of(key: str, ranges_json: str, samples: int, seed: int) -> MonteCarlo:
    """The Monte Carlo itself, not a copy: a new state's KPIs wait for no pickling of its draws and outputs (0.7 MB at
    10,000 samples), the page's later reads of it (the paired rent draws, the histogram, the summary) unpickle
    nothing, and the percentiles it works out once per output stay worked out. The page only reads it."""
    scenario = json.loads(key)  # its evaluation is cached: the ranges' base values are read from it
    return monte_carlo(scenario, _ranges(ranges_json), samples=samples, seed=seed, result=common.evaluate(scenario))


@st.cache_data(max_entries=64, show_spinner=False)
def tornado_of(key: str, ranges_json: str) -> Any:
    scenario = json.loads(key)
    return tornado(scenario, _ranges(ranges_json), result=common.evaluate(scenario))


def _ranges(ranges_json: str) -> dict[str, tuple[float, float]]:
    return {k: (float(v[0]), float(v[1])) for k, v in json.loads(ranges_json).items()}


@st.cache_data(max_entries=64, show_spinner=False)
def tornado_bars(key: str, ranges_json: str) -> Any:
    """The tornado's bars, dataset ``tornado`` of :func:`tornado_spec`."""
    return charts.tornado_data(tornado_of(key, ranges_json), editor.label)


@st.cache_data(show_spinner=False)
def tornado_spec() -> dict[str, Any]:
    """:func:`economics.report.charts.tornado_spec`, built once: drawn with each study's bars."""
    return charts.tornado_spec()


@st.cache_data(max_entries=64, show_spinner=False)
def histogram_bins(key: str, ranges_json: str, samples: int, seed: int) -> Any:
    """The distribution of cost per M tokens over the draws, binned here (40 bins at most) so the browser draws
    a few dozen bars rather than binning every sample: dataset ``bins`` of :func:`histogram_spec`."""
    return histogram(monte_carlo_of(key, ranges_json, samples, seed).column("cost_usd_per_m_tokens"))


@st.cache_data(show_spinner=False)
def histogram_spec() -> dict[str, Any]:
    """The histogram of :func:`histogram_bins` (dataset ``bins``): built once, drawn with each study's bins."""
    import altair as alt

    chart = alt.Chart(alt.NamedData("bins")).mark_bar().encode(
        x=alt.X("bin_start:Q", title="Cost [USD per M tokens]", bin="binned", axis=alt.Axis(format="$,.3f")),
        x2="bin_end:Q", y=alt.Y("count:Q", title="Samples"),
        tooltip=[alt.Tooltip("bin_start:Q", format="$,.4f", title="from"),
                 alt.Tooltip("bin_end:Q", format="$,.4f", title="to"), alt.Tooltip("count:Q", title="samples")])
    return charts.vega_spec(chart)


# Cost page: the day hour by hour

@st.cache_data(max_entries=128, show_spinner=False)
def hours_of(key: str) -> Any:
    """:func:`economics.studies.day.hours_table` of a scenario (its canonical JSON key)."""
    return hours_table(json.loads(key))


@st.cache_data(show_spinner=False)
def day_spec() -> dict[str, Any]:
    """:func:`economics.report.charts.day_spec`, built once."""
    return charts.day_spec()
