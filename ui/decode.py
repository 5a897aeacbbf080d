"""Decode accelerators page: an aging GPU fleet, and what adding decode accelerators is worth against buying more of
the same GPUs or a new generation (with the liquid retrofit an air-cooled hall needs).

A lens on the working scenario (:mod:`ui.state`). The study needs an existing fleet and a decode accelerator; when
the scenario lacks them the page says so and offers them (or a worked example). No hardware is free by default: an
empty decode price takes the catalog figure, shown with its confidence. Every number comes from
:mod:`economics.studies.retrofit`.
"""

from __future__ import annotations

import html
import json
from typing import Any

import streamlit as st

import economics
from economics import catalog
from economics.engine.batch import as_scenario
from economics.report import charts, kpis
from economics.report.format import Kpi
from economics.schema.outputs import DisplayFormat as Show
from economics.studies.retrofit import OptionKind
from economics.studies.retrofit_decode import decode_table
from economics.studies.retrofit_life import best_year, refresh
from ui import common, editor, links, report, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "existing_accelerators", "facility_cooling", "model", "precision",
              "input_tokens_per_request", "output_tokens_per_request", "target_output_tokens_per_s_per_user",
              "demand_output_tokens_per_day", "demand_growth_per_year", "horizon_years", "decode_accelerator",
              "decode_output_tokens_per_s_per_accelerator", "decode_measured_output_tokens_per_s_per_user",
              "decode_concurrent_users_per_replica", "decode_accelerators_per_replica",
              "measured_speed_context_tokens", "long_context_tokens", "long_context_output_tokens_per_s_per_user",
              "decode_accelerator_price_usd", "new_accelerator",
              "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "fast_tier_price_multiplier",
              "fast_tier_min_tokens_per_s_per_user")
EXAMPLE: dict[str, Any] = {
    "name": "Decode study: 2,000 H100 in an air hall, MiniMax-M2, SN50 decode", "accelerator": "h100-sxm",
    "existing_accelerators": 2000, "facility_cooling": "air", "model": "minimax-m2", "precision": "fp8",
    "input_tokens_per_request": 10000.0, "output_tokens_per_request": 1000.0,
    "target_output_tokens_per_s_per_user": 100.0, "demand_output_tokens_per_day": 2e10,
    "demand_input_tokens_per_day": None, "demand_requests_per_s": None, "demand_growth_per_year": 0.3,
    "horizon_years": 5, "decode_accelerator": "sn50", "decode_output_tokens_per_s_per_accelerator": None,
    "decode_measured_output_tokens_per_s_per_user": 763.0, "decode_concurrent_users_per_replica": 16.0,
    "decode_accelerators_per_replica": 16, "measured_speed_context_tokens": 10000.0, "long_context_tokens": 100000.0,
    "long_context_output_tokens_per_s_per_user": 450.0, "decode_accelerator_price_usd": None,
    "new_accelerator": "gb200-nvl72",
    "price_usd_per_m_input_tokens": 0.3,
    "price_usd_per_m_output_tokens": 1.2, "fast_tier_price_multiplier": 1.5,
    "fast_tier_min_tokens_per_s_per_user": 300.0, "output_tokens_per_s_per_accelerator": None,
    "input_tokens_per_s_per_accelerator": None, "accelerator_count": None,
}
# The worked example offered when the scenario lacks what the study needs: 763 tokens/s per user, the reported speed
# of one 16-chip SN50 rack decoding MiniMax-M2 after 10k-token prompts (data/throughput_claims.csv), at an assumed
# 16 users per rack (SambaNova states none); the SN50's price is the catalog's estimate (parity with the B200). Its
# speed falls with context: "more than 450" at a long context whose length is not stated, taken as 450 at an assumed
# 100,000 tokens (the SN50 preset of data/presets.csv says why).
OPTION_COLUMNS: dict[str, tuple[str, Show]] = {
    "option": common.OPTION_COLUMN, "feasible": ("Feasible", Show.TEXT), "capex_usd": ("Capex", Show.USD),
    "retrofit_capex_usd": ("of which liquid retrofit", Show.USD),
    "opex_usd_per_year": ("Opex, first year (a year)", Show.USD),
    "revenue_usd_per_year": ("Revenue, first year (a year)", Show.USD),
    "lowest_served_share": ("Lowest share of demand served", Show.PERCENT),
    "forgone_revenue_usd": ("Revenue turned away, all years", Show.USD),
    "npv_vs_status_quo_usd": ("NPV vs status quo", Show.USD), "irr": ("IRR vs status quo", Show.TEXT),
    "payback": ("Payback", Show.TEXT),
    "levelized_cost_usd_per_m_tokens": ("Levelized cost [USD/M token]", Show.USD_RATE),
    "output_tokens_per_s_per_user": common.output_column("output_tokens_per_s_per_user"),
    "accelerators": ("GPUs", Show.COUNT), "decode_accelerators": ("Decode accelerators", Show.COUNT),
    "facility_mw": ("Facility [MW]", Show.NUMBER), "racks": ("Racks", Show.COUNT),
    "sizing": ("How it is sized", Show.TEXT),
    "reason": ("Why not feasible", Show.TEXT),
}

# Every table of this page is short (six options, a handful of decode accelerators and reported speeds, the
# horizon's years): each is drawn static with the grid's headers and cell text (common.draw_table), as the grid
# would show it; a sort or search would not help, and the browser lays out no grid when a run starts (docs/speed.md).
KPI_PAUSE_S, RUN_START_REDRAW_S = 0.08, 0.2
# The KPIs' own moment (ui/editor.py's Sidebar): this page's previous run leaves about 70 elements (41 in the main
# area: tables, charts, the odds) for the browser to redraw when a run starts, and its odds are drawn again right
# after the inputs, so the inputs and the rest wait until 0.2 s after the run started, and at least 0.08 s after the
# KPIs (0.06 and 0.025 s on the other pages): bench/retrofit_odds.py, alternated, in docs/speed.md.


# Each heading is drawn with the captions under it as one Markdown element, and each short table with the text
# around it (the odds' headline, captions) as one st.html: the browser draws every element of the previous run again
# at each step of a run's start, before the first KPI, and a subheader costs it about twice a Markdown heading
# (bench/browser_trace.py --floor --kind, docs/speed.md).

# A caption's look (small grey type) for a paragraph inside an st.html block.
NOTE_STYLE = ("<style>p.static-note { font-size: 0.875rem; color: rgba(49, 51, 63, 0.6); margin: 0.25rem 0 0.5rem; }"
              "</style>")


def _heading(title: str, *notes: str) -> None:
    """A subheader and the captions under it as one Markdown element: the title as a level-3 heading (a subheader's
    level and anchor), each note a paragraph of small grey type as a caption draws it. Only the page's own words
    and figures go in (no user text: it is Markdown)."""
    st.markdown("\n\n".join([f"### {title}", *(f":small[:gray[{note}]]" for note in notes)]))


def _note(text: str) -> str:
    """A caption inside an ``st.html`` block (:data:`NOTE_STYLE`), its text escaped: plain text."""
    return f'<p class="static-note">{html.escape(text)}</p>'


def _break_even(key: str) -> float | None:
    """The break-even decode price of the state ``key``. It does not depend on the decode price entered (any price
    gives the same figure), so it is computed and cached at one fixed price: changing the price re-runs the options
    only, and the break-even is known even when no price is (the most the hardware may cost). On any other edit,
    its two studies differ from the page's own in 'add decode' alone (at 0 and 1,000 USD): the other options are
    remembered from it, and the two go through one pass of the engine."""
    return studies.break_even(common.canonical({**json.loads(key), "decode_accelerator_price_usd": 0.0}))


def _metric(col: Any, k: Kpi) -> None:
    """One KPI in its row (``col``)."""
    col.metric(k.title, k.value, delta=k.change, delta_arrow="off" if k.same else "auto", help=k.help,
               delta_color=k.color)


def _missing(scenario: dict[str, Any]) -> list[str]:
    needs = {"existing_accelerators": "the size of the existing fleet (Existing fleet)",
             "decode_accelerator": "a decode accelerator (Decode accelerator)"}
    return [why for f, why in needs.items() if scenario[f] is None]


def _price_note(scenario: dict[str, Any]) -> tuple[str | None, str | None]:
    """The decode price the study uses and where it comes from, or (None, a warning's text) when there is none."""
    decode = scenario["decode_accelerator"]
    if scenario["decode_accelerator_price_usd"] is not None:
        return f"Decode accelerator price: {fmt.usd(scenario['decode_accelerator_price_usd'])} each (given).", None
    figure = editor.catalog_figure("decode_accelerator_price_usd", scenario)
    if figure is None:
        return None, (f"No catalog price for {decode}: enter the decode accelerator's price in the sidebar. Until "
                      f"then 'add decode' is not costed; the break-even price says the most it may cost.")
    source = catalog.accelerator_source(decode, "price_usd") or {}
    return (f"Decode accelerator price: {fmt.usd(figure[0])} each, the catalog figure "
            f"(confidence: {figure[1] or 'unrated'}; {source.get('note', '')}). Enter your own in the sidebar."), None


DECODE_SPEED = ("decode_output_tokens_per_s_per_accelerator", "decode_measured_output_tokens_per_s_per_user",
                "decode_concurrent_users_per_replica", "decode_accelerators_per_replica")
# the decode pool's measured per-user speed read on its curve against context (long_context_*), where given
AT_CONTEXT = "decode_output_tokens_per_s_per_user_at_context"


def _number(value: Any) -> float | None:
    """A figure of the study as a float, or None where it is empty (None, NaN, or pandas' NA of an option that could
    not run)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number


def _decode_speed_note(result: Any, scenario: dict[str, Any]) -> str | None:
    """The decode throughput per accelerator the study uses and where it comes from: given, or a per-user speed
    turned into a per-accelerator one by the users a replica serves at once (an assumption the page states)."""
    part = next((p for name, p in result.option_years if name == OptionKind.ADD_DECODE), None)
    if part is None:
        return None
    got = {k: _number(v) for k, v in part.first({*DECODE_SPEED, AT_CONTEXT}).items()}
    per_acc = got.get("decode_output_tokens_per_s_per_accelerator")
    decode = scenario["decode_accelerator"]
    if per_acc is None:
        return None
    if scenario.get("decode_output_tokens_per_s_per_accelerator") is not None:
        return f"Decode throughput: {fmt.number(per_acc)} output tokens/s per {decode} (given)."
    user, users, chips = (got.get(f) for f in DECODE_SPEED[1:])
    if user is not None and users is not None and chips is not None:
        read = got.get(AT_CONTEXT)
        speed = (f"{fmt.number(read)} tokens/s per user (measured {fmt.number(user)} at "
                 f"{fmt.number(scenario['measured_speed_context_tokens'])} tokens, read on its curve against context "
                 f"at the workload's {fmt.number(scenario['input_tokens_per_request'])} input tokens)"
                 if read is not None else f"{fmt.number(user)} tokens/s per user (measured)")
        user = read if read is not None else user
        return (f"Decode throughput: {fmt.number(per_acc)} output tokens/s per {decode} = {speed} "
                f"x {fmt.number(users)} users a replica serves at once "
                f"({'given' if scenario.get('decode_concurrent_users_per_replica') is not None else 'default'}: "
                f"an assumption where the source states no concurrency) / {fmt.number(chips)} {decode} per "
                "replica. At one user per replica it would be "
                f"{fmt.number(float(user) / float(chips))} per {decode}.")
    return f"Decode throughput: {fmt.number(per_acc)} output tokens/s per {decode} (estimated)."


def _demand_words(scenario: dict[str, Any]) -> str:
    """The demand path every option faces, in words."""
    growth, years = float(scenario["demand_growth_per_year"] or 0.0), int(scenario["horizon_years"])
    given = next(((f, scenario[f]) for f in ("demand_output_tokens_per_day", "demand_input_tokens_per_day",
                                             "demand_requests_per_s") if scenario.get(f) is not None), None)
    if given is None:
        return "Demand: none given."
    field, first = given
    unit = {"demand_output_tokens_per_day": "output tokens a day", "demand_input_tokens_per_day":
            "input tokens a day", "demand_requests_per_s": "requests a second"}[field]
    last = float(first) * (1.0 + growth) ** (years - 1)
    return (f"Demand: {fmt.number(float(first))} {unit} in year 1, growing {fmt.percent(growth)} a year to "
            f"{fmt.number(last)} in year {years}.")


def _cooling_notes(options: Any, scenario: dict[str, Any]) -> None:
    """An option that needs liquid cooling in an air-cooled hall: the retrofit it includes, and how that squares with
    the Fleet page (which, without the retrofit allowed, calls the hardware infeasible in air); one paragraph an
    option, in one box."""
    notes = []
    for _, r in options.iterrows():
        retrofit = float(r["retrofit_capex_usd"] or 0.0)
        if retrofit > 0 and scenario.get("facility_cooling") == "air":
            notes.append(f"{r['option']}: the hardware needs liquid cooling and this hall is air-cooled. The option "
                         f"includes the liquid retrofit, {fmt.usd(retrofit)} of its {fmt.usd(r['capex_usd'])} "
                         "capex; without it (the Fleet page with the liquid retrofit not allowed) it does not fit.")
    if notes:
        st.info("\n\n".join(notes))


def _served_by_year(result: Any) -> None:
    """Each year's share of the demand served and the revenue turned away, for every option that cannot serve it
    all (:attr:`economics.studies.retrofit.RetrofitResult.shortfall`); a line when every option serves every year."""
    short = result.shortfall
    if short.empty:
        st.caption("Every option serves the whole demand in every year.")
        return
    _heading("Demand served, year by year", "A fleet of fixed size serves what it can; the rest of the demand is "
             "turned away, with the revenue it would have brought (same prices and token mix). The options sized "
             "from demand serve all of it.")
    cells = short.assign(cell=[f"{fmt.percent(f)} (−{fmt.usd(lost)})" if lost > 0 else fmt.percent(f)
                               for f, lost in zip(short["served_share"], short["forgone_revenue_usd"], strict=True)],
                         year=[f"year {int(t)}" for t in short["year"]])
    wide = cells.pivot(index="option", columns="year", values="cell").reindex(
        list(dict.fromkeys(short["option"]))).reset_index()
    common.show_table(wide, key="served_table", extra={"option": common.OPTION_COLUMN, **{
        c: (c.capitalize() + ": served (revenue turned away)", Show.TEXT) for c in wide.columns if c != "option"}},
        static=True)


ODDS_COLUMNS: dict[str, tuple[str, Show]] = {
    "option": common.OPTION_COLUMN, "probability_best": ("Best in", Show.PERCENT),
    "npv_usd_p10": ("NPV P10", Show.USD), "npv_usd_p50": ("NPV P50", Show.USD), "npv_usd_p90": ("NPV P90", Show.USD),
    "irr_p50": ("IRR P50", Show.PERCENT), "payback_months_p50": ("Payback P50 [months]", Show.NUMBER),
    "computed_share": ("Draws computed", Show.PERCENT),
}
TORNADO_COLUMNS: dict[str, tuple[str, Show]] = {
    "driver": ("Input", Show.TEXT), "low": ("Low", Show.NUMBER), "high": ("High", Show.NUMBER),
    "difference_at_low": ("Difference at low", Show.USD), "difference_at_high": ("Difference at high", Show.USD),
    "break_even": ("Break-even value", Show.NUMBER), "source": ("Range from", Show.TEXT),
}


# The decode accelerators side by side: the odds first (the table is wider than the page).
DECODE_ODDS_ORDER = ("decode_accelerator", "odds", "probability_best", "npv_usd_p10", "npv_usd_p50", "npv_usd_p90",
                     "price_confidence", "confidence", "output_tokens_per_s_per_user", "measured_on", "claim_id",
                     "studied", "option", "note")


def _setting_changed(name: str) -> None:
    """A draws or seed input changed: into the page settings (and so the link), or an error naming it."""
    try:
        state.set_setting(name, links.parse_setting(name, str(st.session_state.get(name))))
    except ValueError as exc:
        state.error(f"{name}: {exc}; not applied")


def _odds(key: str) -> tuple[Any, tuple[str, dict[str, Any]] | None]:
    """The odds, above the point figures: how often each option is the best over the draws of every ranged input
    (the same draws for every option), its NPV at P10 / P50 / P90, the tornado of the two leading options' NPV
    difference, and every range no source gives, named an assumption. Cached per scenario, samples and seed. With
    the odds, the fan's panel (title, spec) of the page's year-by-year chart (:func:`_year_by_year`), or None."""
    _heading("The odds")
    if not st.toggle("Draw every uncertain input", value=True, key="show_odds",
                     help="Monte Carlo over the estimator's P10-P90 throughputs, sourced price ranges and the "
                          "assumptions named below; the same draws for every option"):
        return None, None
    settings = state.settings()
    where = common.row()  # one block for both inputs (st.columns: one for each and one around them)
    st.session_state["odds_samples"] = settings["odds_samples"]
    where.number_input("Draws", links.SAMPLES_BOUNDS[0], links.SAMPLES_BOUNDS[1], step=1_000, key="odds_samples",
                      on_change=_setting_changed, args=("odds_samples",),
                      help=f"Monte Carlo draws; setting `{links.SETTINGS_PREFIX}odds_samples` in the link")
    st.session_state["odds_seed"] = settings["odds_seed"]
    where.number_input("Seed", links.SEED_BOUNDS[0], links.SEED_BOUNDS[1], step=1, key="odds_seed",
                       on_change=_setting_changed, args=("odds_seed",),
                       help=f"Same seed, same draws; setting `{links.SETTINGS_PREFIX}odds_seed` in the link")
    samples, seed = int(settings["odds_samples"]), int(settings["odds_seed"])
    try:
        found = studies.retrofit_odds_of(key, samples, seed)
    except (economics.ScenarioError, ValueError) as error:
        st.error(plain(str(error)))
        return None, None
    # the headline, the odds table, the tornado's caption, the tornado and the assumptions as one element (each
    # option a row: a handful, short enough to draw static); the fan is a panel of the year-by-year chart
    after = [f"{NOTE_STYLE}<p><strong>{html.escape(found.headline())}.</strong></p>",
             common.static_report(found.options, ODDS_COLUMNS, list(ODDS_COLUMNS))]
    if found.leading is not None:
        a, b = found.leading
        after += [_note(f"What would have to be true for {b} to beat {a}: the NPV of {a} minus {b} with each input "
                        "alone at its low and high end (the others at base), and the value at which the difference "
                        "is zero (empty: none within the range)."),
                  common.static_report(found.tornado.head(6), TORNADO_COLUMNS, list(TORNADO_COLUMNS))]
    notes = found.assumptions()
    if notes:
        after.append(_note("Assumptions (ranges no source gives): " + "; ".join(notes) + "."))
    st.html("".join(after))
    return found, (f"NPV to date vs status quo: P10-P90 of the {samples:,} draws (band), P50 (line)",
                   studies.fan_spec(key, samples, seed))


def _year_by_year(key: str, fan: tuple[str, dict[str, Any]] | None, refresh_table: Any) -> None:
    """The options against the status quo over the years as one chart of titled panels
    (:func:`economics.report.charts.stacked_spec`: one Vega view for the browser to make on a switch instead of
    three, docs/speed.md): the odds' fan (with the odds), the cumulative cash flow, and the NPV of replacing the
    fleet after N years (when a new generation is given: the table below)."""
    panels = [*([fan] if fan else []), ("Cumulative cash flow vs status quo", studies.cashflow_spec(key))]
    parts = ["the NPV to date over the odds' draws (the band from P10 to P90, the line at P50; at the last year, "
             "each option's NPV)"] if fan else []
    parts.append("the cumulative cash flow")
    if not refresh_table.empty:
        parts.append("the NPV of keeping the existing fleet N years and then replacing it (its table below)")
        panels.append(("When to replace the fleet: NPV vs status quo by years kept",
                       {**studies.refresh_spec(), "datasets": {"refresh": refresh_table}}))
    _heading("Year by year against the status quo", "Each option against the status quo, a panel each: "
             + "; ".join(parts) + ".")
    common.draw(charts.stacked_spec(panels))


common.page_start()
side = editor.Sidebar("Existing fleet and options", KEY_FIELDS, pause_s=KPI_PAUSE_S, redraw_s=RUN_START_REDRAW_S,
                      title="Decode accelerators for an existing fleet", intro=(
                          "The existing GPUs keep prefill and a decode-optimised pool takes decode, against the "
                          "status quo, more of the same GPUs, or a new generation. Cash flows at the cost of capital; "
                          "the existing fleet is sunk but still pays power, hosting and maintenance."))
scenario = state.scenario()

missing = _missing(scenario)
if missing:
    st.info("This study needs " + " and ".join(missing) + ". Set it in the sidebar, or start from the worked example "
            "(it sets the fields the study needs and keeps the rest of the scenario).")
    st.button("Start from the example study", key="load_example", on_click=state.apply, args=(EXAMPLE,))
    common.share()
    side.stop()

key = common.canonical(scenario)
pinned = state.baseline()
base_study: tuple[Any, float | None] | None = None
if pinned is not None and not _missing(pinned):
    try:
        pinned_key = common.canonical(pinned)
        base_study = studies.retrofit_of(pinned_key), _break_even(pinned_key)
    except (economics.ScenarioError, ValueError):
        base_study = None
# The KPIs of adding decode first, from its study against the status quo alone; the best option (every option: on a
# demand edit, the options sized from demand are sized and evaluated again) and the break-even price (two more
# studies) after them, each in its place in the first row: an edit's first KPIs wait for what they read alone
# (docs/speed.md). The best option's slot is a container, in which the browser keeps the previous run's figure,
# greyed, until it is drawn (a container replacing one keeps its children); the second row is opened after the
# first's KPIs (a message less before them).
first = common.row()
best_slot = first.container()
try:
    shown = kpis.decode_kpis(studies.retrofit_decode_of(key), None, base_study)
    _metric(first, shown[1])
    second = common.row()
    _metric(second, shown[3])
    _metric(second, shown[4])
    result = studies.retrofit_of(key)
    _metric(best_slot, kpis.decode_kpis(result, None, base_study)[0])
    break_even = _break_even(key)
except (economics.ScenarioError, ValueError) as error:
    st.error(plain(str(error)))
    side.stop()
_metric(first, kpis.decode_kpis(result, break_even, base_study)[2])
price_note, no_price = _price_note(scenario)
# the price and speed notes as paragraphs of the intro's caption, drawn with the title (one element fewer)
side.intro = "\n\n".join(n for n in (side.intro, price_note, _decode_speed_note(result, scenario)) if n)
side()  # the title and the inputs after the KPIs (see editor.Sidebar)
with side.above():  # in its place above the KPIs
    if no_price is not None:
        st.warning(no_price)
    common.measured_speed_check("decode_output_tokens_per_s_per_accelerator", "decode_accelerator")
    common.measured_speed_check("decode_measured_output_tokens_per_s_per_user", "decode_accelerator")
    common.baseline_controls()

options = result.options
found_odds, fan = _odds(key)

infeasible = [f"{bad['option']}: {plain(bad['reason'])}" for _, bad in options[~options["feasible"]].iterrows()]
if infeasible:
    st.warning("\n\n".join(infeasible))  # one box, an option a paragraph

table = options.assign(payback=[kpis.payback(m) if o != OptionKind.STATUS_QUO else "—"
                                for m, o in zip(options["payback_months"], options["option"], strict=True)],
                       irr=[kpis.irr(v) if o != OptionKind.STATUS_QUO else "—"
                            for v, o in zip(options["irr_vs_status_quo"], options["option"], strict=True)],
                       feasible=[fmt.yes_no(v) for v in options["feasible"]])
_heading("Options side by side", _demand_words(scenario) + " Every option faces that demand; how each is sized is "
         "in its row (How it is sized). A fleet of fixed size serves what it can and turns the rest away (below).")
common.show_table(table, key="options_table", columns=list(OPTION_COLUMNS), extra=OPTION_COLUMNS, static=True)
_cooling_notes(options, scenario)
_served_by_year(result)

if st.toggle("How this is computed", key="show_study_derivation",
             help="For the option chosen: its fleet, capex, opex, revenue and cash flows year by year, and its NPV, "
                  "IRR and payback against the status quo, each with the numbers substituted"):
    chosen = st.selectbox(common.OPTION_COLUMN[0], list(options["option"]), key="derivation_option")
    st.code(studies.retrofit_explanation(key, chosen), language=None)

refresh_table = refresh(result, as_scenario(scenario))
_year_by_year(key, fan, refresh_table)
if refresh_table.empty:
    _heading("When to replace the fleet", "Give a new-generation accelerator (whose option is feasible) to see when "
             "replacing the fleet pays.")
else:
    best = best_year(refresh_table)
    _heading("When to replace the fleet", "The existing fleet kept N years, then replaced by the new generation "
             f"(bought at today's price, resold at the horizon at the residual value); the best: after {best} "
             "year(s), as the chart's last panel draws.")
    common.show_table(refresh_table, key="refresh_table", static=True)

if found_odds is None:
    _heading("Every decode accelerator of the catalog")
    common.draw_table(decode_table(as_scenario(scenario)))
else:
    _heading("Every decode accelerator of the catalog", "Side by side with the odds of the option that studies each "
             "(the same draws); one with no measured throughput for the model, or no price, has no odds and says "
             "why: none is invented.")
    common.draw_table(found_odds.decode, column_order=DECODE_ODDS_ORDER, config={
        "probability_best": st.column_config.NumberColumn("Best in", format="percent"),
        **{f"npv_usd_p{p}": st.column_config.NumberColumn(f"NPV P{p}", format="dollar") for p in (10, 50, 90)}})

claims = catalog.throughput_claims()
speeds = claims[(claims["accelerator"] == scenario["decode_accelerator"])
                | (claims["decode_accelerator"] == scenario["decode_accelerator"])]
if speeds.empty:
    _heading("Reported speeds of this decode accelerator", "None in data/throughput_claims.csv.")
else:
    _heading("Reported speeds of this decode accelerator")
    common.draw_table(speeds[["system", "model", "precision", "metric", "value", "conditions", "confidence",
                              "source_date"]], config={
        "value": st.column_config.NumberColumn("Value", format="%,.0f"),
        "source_date": st.column_config.TextColumn("Date")})
report.offer("decode", report.scenario_pdf("decode"))
common.share()
