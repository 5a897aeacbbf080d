"""The charts the app draws and the board report prints, as Vega-Lite specs: one spec per chart for both.

Each ``*_spec`` function returns the Vega-Lite dict of an Altair chart whose layers read named datasets
(``alt.NamedData``); the matching ``*_data`` function turns the engine's figures into those datasets. The app draws
a spec with its datasets attached (:func:`ui.common.draw`, its builders cached by :mod:`ui.studies`), the report
renders the same spec to SVG (:mod:`economics.report.document`). Pure functions: no Streamlit, no figure computed
here. This is the one module of :mod:`economics` that imports Altair (the import contracts in pyproject.toml), and
only in the functions that build a chart: Altair is the ``report`` (and ``app``) extra, and the command line imports
this module whatever the command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from economics.domain.sessions import context_tokens
from economics.report import format as fmt
from economics.schema.outputs import cost_parts
from economics.studies.retrofit import OptionKind

WARNING_COLOR = "#d62728"


def vega_spec(chart: Any, datasets: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The Vega-Lite spec of an Altair chart whose layers read named datasets, with any datasets given attached.

    Built once (or once per cache entry of the data it draws), so a page's rerun draws a ready spec instead of
    building the chart and validating it against the schema again; every encoding names its type (``"field:Q"``),
    as nothing is inferred from the data. The theme's fixed 300 px view is left out, as ``st.altair_chart`` does:
    the app sizes the chart to its column, the report to its page (:func:`economics.report.document.svg`).

    Parameters
    ----------
    chart
        An Altair chart or layer.
    datasets
        Name -> rows (a DataFrame or a list of records), attached as ``datasets``.

    Returns
    -------
    dict
        The spec, unvalidated.
    """
    spec = dict(chart.to_dict(validate=False))
    spec.pop("config", None)
    spec["datasets"] = dict(datasets or {})
    return spec


def stacked_spec(panels: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Charts from :func:`vega_spec` one above the other as one Vega-Lite chart (``vconcat``), each panel titled, their
    datasets merged.

    A browser compiles, parses and runs one Vega view for it instead of one a chart, which a page switch mounts
    sooner (the Decode page's three charts: docs/speed.md, ``switch10``). The panels keep their marks, axes, tooltips
    and the SVG's accessible description; panels colouring by the same field share one scale and one legend. The
    width fits the column (``autosize`` ``fit-x``): Streamlit gives a stack holding a layer ``pad`` and sets each
    panel as wide as the column, so the axes and the legend overflowed it.
    Vega-Lite's concatenation: https://vega.github.io/vega-lite/docs/concat.html

    Parameters
    ----------
    panels
        (title, spec) pairs, top first; each spec's ``datasets`` named apart from the others'.

    Returns
    -------
    dict
        The spec, unvalidated.

    Raises
    ------
    ValueError
        Two panels bring a dataset of the same name (one would hide the other's rows).

    >>> one = {"$schema": "s", "mark": "bar", "datasets": {"a": [{"x": 1}]}}
    >>> two = {"$schema": "s", "mark": "line", "datasets": {"b": [{"x": 2}]}}
    >>> spec = stacked_spec([("A", one), ("B", two)])
    >>> [v["title"] for v in spec["vconcat"]], sorted(spec["datasets"]), "datasets" in spec["vconcat"][0]
    (['A', 'B'], ['a', 'b'], False)
    """
    datasets: dict[str, Any] = {}
    views = []
    for title, spec in panels:
        shared = set(datasets) & set(spec.get("datasets", {}))
        if shared:
            raise ValueError(f"stacked_spec: panel {title!r} brings dataset(s) {sorted(shared)} another panel has")
        datasets.update(spec.get("datasets", {}))
        views.append({**{k: v for k, v in spec.items() if k not in ("$schema", "datasets")}, "title": title})
    return {"$schema": panels[0][1].get("$schema"), "vconcat": views, "datasets": datasets,
            "autosize": {"type": "fit-x", "contains": "padding"}}


# Cost per token page

def breakdown_spec() -> dict[str, Any]:
    """Where the money goes: a bar per part of the hourly cost (dataset ``parts``, :func:`breakdown_data`)."""
    import altair as alt  # the report and app extra: imported where a chart is built

    return vega_spec(alt.Chart(alt.NamedData("parts")).mark_bar().encode(
        x=alt.X("usd_per_hour:Q", title="Cost [USD/h]", axis=alt.Axis(format="$,.0f")),
        y=alt.Y("part:N", sort="-x", title=None),
        tooltip=["part:N", alt.Tooltip("usd_per_hour:Q", format="$,.2f", title="USD/h"),
                 alt.Tooltip("share:Q", format=".1%", title="share")]))


def breakdown_data(result: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``parts`` of :func:`breakdown_spec`: each non-zero part of an evaluated scenario's hourly cost."""
    total = float(result["cost_usd_per_hour"])
    return {"parts": [{"part": part, "usd_per_hour": float(result[name] or 0.0),
                       "share": float(result[name] or 0.0) / total}
                      for name, part in cost_parts().items() if float(result[name] or 0.0) > 0]}


def utilization_spec() -> dict[str, Any]:
    """Cost against utilization (dataset ``curve``) with the scenario's point marked and labelled (``point``)."""
    import altair as alt

    x = alt.X("utilization:Q", title="Average utilization", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("cost_usd_per_m_tokens:Q", title="Cost [USD per M tokens]", scale=alt.Scale(type="log"))
    line = alt.Chart(alt.NamedData("curve")).mark_line(point=True).encode(
        x=x, y=y, tooltip=[alt.Tooltip("utilization:Q", format=".0%"),
                           alt.Tooltip("cost_usd_per_m_tokens:Q", format="$,.4f", title="USD per M tokens")])
    dot = alt.Chart(alt.NamedData("point")).mark_point(size=160, filled=True, color=WARNING_COLOR).encode(
        x=x, y=y, tooltip=["label:N"])
    text = alt.Chart(alt.NamedData("point")).mark_text(align="left", dx=10, dy=-10).encode(x=x, y=y, text="label:N")
    return vega_spec(alt.layer(line, dot, text))


def utilization_data(result: Mapping[str, Any], curve: Any) -> dict[str, Any]:
    """Datasets ``curve`` (:func:`economics.studies.compare.cost_vs_utilization`) and ``point`` (this scenario,
    labelled) of :func:`utilization_spec`.
    """
    return {"curve": curve, "point": [{
        "utilization": result["utilization"], "cost_usd_per_m_tokens": result["cost_usd_per_m_tokens"],
        "label": f"this fleet: {fmt.percent(result['utilization'])}, {fmt.usd_rate(result['cost_usd_per_m_tokens'])}"}]}


def day_spec() -> dict[str, Any]:
    """The day hour by hour (dataset ``day``, :func:`economics.studies.day.hours_table`): the draw at the
    facility as bars, the hour's electricity price as a line on its own axis.
    """
    import altair as alt

    x = alt.X("hour:O", title="Hour of the day")
    tooltip = ["hour:O", alt.Tooltip("demand_x_average:Q", format=".2f", title="demand x average"),
               alt.Tooltip("facility_kw:Q", format=",.1f", title="kW at the facility"),
               alt.Tooltip("usd_per_kwh:Q", format="$,.4f", title="USD/kWh"),
               alt.Tooltip("energy_usd:Q", format="$,.2f", title="energy USD"),
               alt.Tooltip("g_per_kwh:Q", format=",.0f", title="gCO2e/kWh"),
               alt.Tooltip("kgco2e:Q", format=",.1f", title="kgCO2e")]
    bars = alt.Chart(alt.NamedData("day")).mark_bar(opacity=0.7).encode(
        x=x, y=alt.Y("facility_kw:Q", title="Draw at the facility [kW]"), tooltip=tooltip)
    price = alt.Chart(alt.NamedData("day")).mark_line(point=True, color=WARNING_COLOR).encode(
        x=x, y=alt.Y("usd_per_kwh:Q", title="Electricity [USD/kWh]", axis=alt.Axis(format="$,.3f")),
        tooltip=tooltip)
    return vega_spec(alt.layer(bars, price).resolve_scale(y="independent"))


def day_data(hours: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Dataset ``day`` of :func:`day_spec` (NaN intensities left empty for the tooltip)."""
    return {"day": hours.astype(object).where(hours.notna(), None)}


# Uncertainty

def tornado_spec() -> dict[str, Any]:
    """Cost per M tokens at each end of each input (dataset ``tornado``, :func:`tornado_data`)."""
    import altair as alt

    bars = alt.Chart(alt.NamedData("tornado")).mark_bar().encode(
        x=alt.X("start:Q", title="Cost [USD per M tokens]", axis=alt.Axis(format="$,.3f"),
                scale=alt.Scale(zero=False)),
        x2="end:Q", y=alt.Y("input:N", sort=None, title=None, axis=alt.Axis(labelLimit=320)),
        tooltip=["input:N", alt.Tooltip("low:Q", format=",.4g"), alt.Tooltip("high:Q", format=",.4g"),
                 alt.Tooltip("output_at_low:Q", format="$,.4f", title="cost at low"),
                 alt.Tooltip("output_at_high:Q", format="$,.4f", title="cost at high")])
    base_rule = alt.Chart(alt.NamedData("tornado")).mark_rule(color="black").encode(x="base_output:Q")
    return vega_spec(alt.layer(bars, base_rule))


def tornado_data(sens: pd.DataFrame, label: Callable[[str], str]) -> pd.DataFrame:
    """The bars of :func:`tornado_spec` from a tornado (:func:`economics.studies.uncertainty.tornado`), each input
    named by ``label``.
    """
    ends = sens[["output_at_low", "output_at_high"]]
    return sens.assign(start=ends.min(axis=1), end=ends.max(axis=1), input=[label(f) for f in sens["field"]])


# Decode accelerators page

def _option_color() -> Any:
    """The colour of a retrofit option, its legend's labels whole: Vega-Lite cuts a label at 160 px by default
    (``labelLimit``), which left "more of the same, as demand grows" as "more of the same, as demand gr…". The cash
    flow and the fan share this legend when stacked (:func:`stacked_spec`).
    """
    import altair as alt

    return alt.Color("option:N", title=None, legend=alt.Legend(labelLimit=0))


def cashflow_spec() -> dict[str, Any]:
    """The cumulative cash flow of each option against the status quo (dataset ``flows``, :func:`cashflow_data`)."""
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("flows")).mark_line(point=True).encode(
        x=alt.X("year:O", title="Year"),
        y=alt.Y("cumulative_vs_status_quo_usd:Q", title="Cumulative cash flow vs status quo [USD]",
                axis=alt.Axis(format="$,.3~s")),
        color=_option_color(),
        tooltip=["option:N", "year:O", alt.Tooltip("vs_status_quo_usd:Q", format="$,.0f", title="that year"),
                 alt.Tooltip("cumulative_vs_status_quo_usd:Q", format="$,.0f", title="cumulative")]))


def cashflow_data(cashflows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Dataset ``flows`` of :func:`cashflow_spec` from a retrofit study's cash flows (every option but the status
    quo, with its running sum).
    """
    flows = cashflows.copy()
    flows["cumulative_vs_status_quo_usd"] = flows.groupby("option")["vs_status_quo_usd"].cumsum()
    return {"flows": flows[flows["option"] != OptionKind.STATUS_QUO]}


def fan_spec() -> dict[str, Any]:
    """The NPV to date of each option against the status quo over the years: the band from P10 to P90 of the draws
    and the P50 as a line (dataset ``fan``, :func:`fan_data`).
    """
    import altair as alt

    base = alt.Chart(alt.NamedData("fan"))
    x = alt.X("year:O", title="Year")
    color = _option_color()
    tips = ["option:N", "year:O", alt.Tooltip("npv_to_date_usd_p10:Q", format="$,.3s", title="P10"),
            alt.Tooltip("npv_to_date_usd_p50:Q", format="$,.3s", title="P50"),
            alt.Tooltip("npv_to_date_usd_p90:Q", format="$,.3s", title="P90")]
    band = base.mark_area(opacity=0.2).encode(
        x=x, y=alt.Y("npv_to_date_usd_p10:Q", title="NPV to date vs status quo, P10-P90 band and P50 [USD]",
                     axis=alt.Axis(format="$,.3~s")), y2="npv_to_date_usd_p90:Q", color=color, tooltip=tips)
    line = base.mark_line(point=True).encode(x=x, y="npv_to_date_usd_p50:Q", color=color, tooltip=tips)
    return vega_spec(alt.layer(band, line))


def fan_data(fan: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``fan`` of :func:`fan_spec` from :attr:`economics.studies.retrofit_odds.RetrofitOdds.fan`.

    >>> t = pd.DataFrame({"option": ["add decode"], "year": [0], "npv_to_date_usd_p10": [-2.0],
    ...                   "npv_to_date_usd_p50": [-1.0], "npv_to_date_usd_p90": [0.0]})
    >>> fan_data(t)["fan"][0]["npv_to_date_usd_p50"]
    -1.0
    """
    ends = [f"npv_to_date_usd_p{p}" for p in (10, 50, 90)]
    return {"fan": [{"option": str(o), "year": int(t), **{e: float(v) for e, v in zip(ends, vs, strict=True)}}
                    for o, t, *vs in zip(fan["option"], fan["year"], *(fan[e] for e in ends), strict=True)]}


def refresh_spec() -> dict[str, Any]:
    """The NPV against the status quo of keeping the existing fleet N years and then replacing it, per N (dataset
    ``refresh``: :func:`economics.studies.retrofit_life.refresh`'s table).
    """
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("refresh")).mark_bar().encode(
        x=alt.X("kept_years:O", title="Years the existing fleet is kept"),
        y=alt.Y("npv_vs_status_quo_usd:Q", title="NPV vs status quo [USD]", axis=alt.Axis(format="$,.3~s")),
        tooltip=["kept_years:O", alt.Tooltip("npv_vs_status_quo_usd:Q", format="$,.0f", title="NPV")]))


# Plan page

def hours_spec() -> dict[str, Any]:
    """Accelerators in service hour by hour, stacked by role and where (dataset ``hours``, :func:`hours_data`)."""
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("hours")).mark_area().encode(
        x=alt.X("hour:O", title="Hour of the day"),
        y=alt.Y("accelerators:Q", stack=True, title="Accelerators in service"),
        color=alt.Color("pool:N", title="Role and where"), tooltip=["hour:O", "pool:N", "accelerators:Q"]))


def hours_data(hours: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``hours`` of :func:`hours_spec` from a plan's ``hours`` records, one row per hour and pool."""
    # accelerators, not systems: a 72-GPU rack and an 8-GPU server are one system each
    cols = [c for c in hours[0] if "_accelerators_" in c and (c.endswith("_on_site") or c.endswith("_rented"))] \
        if hours else []
    return {"hours": [{"hour": r["hour"], "pool": c.replace("_accelerators_", ", ").replace("_", " "),
                       "accelerators": r[c]} for r in hours for c in cols]}


FRONTIERS = {"speed": ("target_output_tokens_per_s_per_user", "Per-user speed target [token/s]"),
             "site": ("site_power_mw", "Site power [MW]")}
"""The planner's two frontiers: the setting each moves and its axis title (:func:`frontier_spec`)."""


def frontier_spec(x: str, title: str) -> dict[str, Any]:
    """The cheapest plan against one setting ``x`` (dataset ``frontier``, :func:`frontier_data`)."""
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("frontier")).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", title=title), y=alt.Y("cost_usd_per_day:Q", title="Cheapest plan [USD/day]"),
        tooltip=[f"{x}:Q", alt.Tooltip("cost_usd_per_day:Q", format=",.0f"),
                 alt.Tooltip("cost_usd_per_m_tokens:Q", format=",.4f"), "binding:N"]))


def frontier_data(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``frontier`` of :func:`frontier_spec` (and :func:`carbon_frontier_spec`): the feasible points."""
    return {"frontier": [p for p in points if p["feasible"]]}


def carbon_frontier_spec() -> dict[str, Any]:
    """Cost against emissions: each carbon price's cheapest plan, its cost before the carbon price against its
    tCO2e a year (dataset ``frontier`` of :func:`frontier_data` on ``frontier_carbon``'s records).
    """
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("frontier")).mark_line(point=True).encode(
        x=alt.X("tco2e_per_year:Q", title="Emissions [tCO2e a year]"),
        y=alt.Y("cost_before_carbon_usd_per_day:Q", title="Cost before the carbon price [USD/day]",
                scale=alt.Scale(zero=False)),
        order="carbon_usd_per_tonne:Q",
        tooltip=[alt.Tooltip("carbon_usd_per_tonne:Q", title="carbon price [USD/t]"),
                 alt.Tooltip("cost_before_carbon_usd_per_day:Q", format=",.0f"),
                 alt.Tooltip("tco2e_per_year:Q", format=",.1f"),
                 alt.Tooltip("kgco2e_per_m_tokens:Q", format=",.4f")]))


# Sessions page

def context_spec() -> dict[str, Any]:
    """The context each turn of a session reads against the turn number (dataset ``turns``, :func:`context_data`)."""
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("turns")).mark_line(point=True).encode(
        x=alt.X("turn:Q", title="Turn", axis=alt.Axis(format=",d", tickMinStep=1)),
        y=alt.Y("context_tokens:Q", title="Context the turn reads, C_t [token]", axis=alt.Axis(format=",.0f")),
        tooltip=[alt.Tooltip("turn:Q", format=",d"), alt.Tooltip("context_tokens:Q", format=",.0f",
                                                                 title="context [token]")]))


CONTEXT_POINTS = 200
"""Most turns drawn: C_t is a straight line in t, so a longer session is drawn at evenly spaced turns, both ends
included."""


def context_data(turns: int, prefix: float, new_input: float, output: float) -> dict[str, list[dict[str, float]]]:
    """Dataset ``turns`` of :func:`context_spec`: C_t = S + (t - 1)(u + o) + u for each turn drawn.

    >>> context_data(4, 1000, 500, 100)["turns"][-1]
    {'turn': 4, 'context_tokens': 3300.0}
    """
    step = max(1, -(-(turns - 1) // (CONTEXT_POINTS - 1)))
    drawn = sorted({*range(1, turns + 1, step), turns})
    return {"turns": [{"turn": t, "context_tokens": float(context_tokens(t, prefix, new_input, output))}
                      for t in drawn]}


def profile_spec() -> dict[str, Any]:
    """The speed across a session: each turn's per-user decode speed and its TTFT against the turn number, side by
    side (dataset ``profile``, :func:`profile_data`).
    """
    import altair as alt

    base = alt.Chart(alt.NamedData("profile")).mark_line(point=True)
    turn = alt.X("turn:Q", title="Turn", axis=alt.Axis(format=",d", tickMinStep=1))
    tips = [alt.Tooltip("turn:Q", format=",d"), alt.Tooltip("context_tokens:Q", format=",.0f", title="context [token]"),
            alt.Tooltip("output_tokens_per_s_per_user:Q", format=",.1f", title="per-user speed [token/s]"),
            alt.Tooltip("ttft_s:Q", format=",.3f", title="TTFT [s]")]
    speed = base.encode(x=turn, y=alt.Y("output_tokens_per_s_per_user:Q", title="Per-user decode speed [token/s]",
                                        axis=alt.Axis(format=",.0f")), tooltip=tips)
    ttft = base.encode(x=turn, y=alt.Y("ttft_s:Q", title="Time to first token [s]", axis=alt.Axis(format=",.2f")),
                       tooltip=tips)
    return vega_spec(alt.hconcat(speed.properties(width=260), ttft.properties(width=260)))


def profile_data(table: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``profile`` of :func:`profile_spec`: the rows of a session's per-turn profile
    (:func:`economics.engine.batch.session_profile`), at most :data:`CONTEXT_POINTS` turns evenly spaced with both
    ends, a speed that is not known left out of its panel (None).

    >>> t = pd.DataFrame({"turn": [1, 2], "context_tokens": [1500.0, 2100.0],
    ...                   "output_tokens_per_s_per_user": [50.0, float("nan")], "ttft_s": [0.1, 0.2]})
    >>> profile_data(t)["profile"][1]["output_tokens_per_s_per_user"] is None
    True
    """
    n = len(table)
    step = max(1, -(-(n - 1) // (CONTEXT_POINTS - 1))) if n > 1 else 1
    drawn = table.iloc[sorted({*range(0, n, step), n - 1})] if n else table
    return {"profile": [{str(k): (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
                        for row in drawn.astype(object).to_dict("records")]}


def where_found_spec() -> dict[str, Any]:
    """Where a session's input tokens are found: a bar per KV tier and one for those recomputed, as shares of the
    session's input tokens (dataset ``where``, :func:`where_found_data`).
    """
    import altair as alt

    return vega_spec(alt.Chart(alt.NamedData("where")).mark_bar().encode(
        x=alt.X("share:Q", title="Share of the session's input tokens", axis=alt.Axis(format=".0%"),
                scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("where:N", sort=None, title=None),
        tooltip=[alt.Tooltip("where:N"), alt.Tooltip("share:Q", format=".1%"),
                 alt.Tooltip("tokens:Q", format=",.0f", title="tokens a session")]))


def where_found_data(table: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``where`` of :func:`where_found_spec`: the rows of
    :func:`economics.studies.session_shape.where_found` (place, share, tokens).

    >>> where_found_data(pd.DataFrame({"where": ["HBM"], "gb": [None], "share": [0.5], "tokens": [10.0]}))
    {'where': [{'where': 'HBM', 'share': 0.5, 'tokens': 10.0}]}
    """
    return {"where": [{"where": str(w), "share": float(s), "tokens": float(t)}
                      for w, s, t in zip(table["where"], table["share"], table["tokens"], strict=True)]}


def odds_spec() -> dict[str, Any]:
    """The decode study's odds: per option its NPV from P10 to P90 over the draws (a bar) with the P50 (a tick),
    the option's name carrying the share of draws in which it is the best (dataset ``odds``, :func:`odds_data`).
    """
    import altair as alt

    base = alt.Chart(alt.NamedData("odds"))
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=320))
    tips = [alt.Tooltip("label:N", title="option"), alt.Tooltip("npv_usd_p10:Q", format="$,.3s", title="P10"),
            alt.Tooltip("npv_usd_p50:Q", format="$,.3s", title="P50"),
            alt.Tooltip("npv_usd_p90:Q", format="$,.3s", title="P90")]
    band = base.mark_bar(opacity=0.5, height=14).encode(
        x=alt.X("npv_usd_p10:Q", title="NPV against the status quo, P10 to P90 of the draws [USD]",
                axis=alt.Axis(format="$,.3s")), x2="npv_usd_p90:Q", y=y, tooltip=tips)
    tick = base.mark_tick(color="black", thickness=2, size=18).encode(x="npv_usd_p50:Q", y=y, tooltip=tips)
    return vega_spec(alt.layer(band, tick))


def odds_data(options: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Dataset ``odds`` of :func:`odds_spec`: the rows of the odds table
    (:attr:`economics.studies.retrofit_odds.RetrofitOdds.options`) with an NPV at all three percentiles, each
    labelled with its share of draws as the best option.

    >>> t = pd.DataFrame({"option": ["add decode"], "probability_best": [0.87], "npv_usd_p10": [1.0],
    ...                   "npv_usd_p50": [2.0], "npv_usd_p90": [3.0]})
    >>> odds_data(t)["odds"][0]["label"]
    'add decode (best in 87 %)'
    """
    keep = options.dropna(subset=["npv_usd_p10", "npv_usd_p50", "npv_usd_p90"])
    return {"odds": [{"label": f"{o} (best in {100 * float(p):.0f} %)", "npv_usd_p10": float(a),
                      "npv_usd_p50": float(b), "npv_usd_p90": float(c)}
                     for o, p, a, b, c in zip(keep["option"], keep["probability_best"], keep["npv_usd_p10"],
                                              keep["npv_usd_p50"], keep["npv_usd_p90"], strict=True)]}
