"""Decode accelerators page: an aging GPU fleet, and what adding decode accelerators is worth against buying more of
the same GPUs or a new generation (with the liquid retrofit an air-cooled hall needs).

A lens on the working scenario (:mod:`ui.state`). The study needs an existing fleet and a decode accelerator; when
the scenario lacks them the page says so and offers them (or a worked example). No hardware is free by default: an
empty decode price takes the catalog figure, shown with its confidence. Every number comes from
:mod:`economics.retrofit`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import streamlit as st

import economics
from economics import catalog
from ui import common, editor, state, studies
from ui import format as fmt
from ui.text import plain

KEY_FIELDS = ("name", "accelerator", "existing_accelerators", "facility_cooling", "model", "precision",
              "input_tokens_per_request", "output_tokens_per_request", "target_output_tokens_per_s_per_user",
              "demand_output_tokens_per_day", "demand_growth_per_year", "horizon_years", "decode_accelerator",
              "decode_output_tokens_per_s_per_accelerator", "decode_accelerator_price_usd", "new_accelerator",
              "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "fast_tier_price_multiplier",
              "fast_tier_min_tokens_per_s_per_user")
EXAMPLE: dict[str, Any] = {
    "name": "Decode study: 2,000 H100 in an air hall, MiniMax-M2, SN50 decode", "accelerator": "h100-sxm",
    "existing_accelerators": 2000, "facility_cooling": "air", "model": "minimax-m2", "precision": "fp8",
    "input_tokens_per_request": 10000.0, "output_tokens_per_request": 1000.0,
    "target_output_tokens_per_s_per_user": 100.0, "demand_output_tokens_per_day": 2e10,
    "demand_input_tokens_per_day": None, "demand_requests_per_s": None, "demand_growth_per_year": 0.3,
    "horizon_years": 5, "decode_accelerator": "sn50", "decode_output_tokens_per_s_per_accelerator": 763.0,
    "decode_accelerator_price_usd": None, "new_accelerator": "gb200-nvl72", "price_usd_per_m_input_tokens": 0.3,
    "price_usd_per_m_output_tokens": 1.2, "fast_tier_price_multiplier": 1.5,
    "fast_tier_min_tokens_per_s_per_user": 300.0, "output_tokens_per_s_per_accelerator": None,
    "input_tokens_per_s_per_accelerator": None, "accelerator_count": None,
}
# The worked example offered when the scenario lacks what the study needs (763 tokens/s: the reported SN50 rack
# decode speed on MiniMax-M2 with 10k-token prompts, data/throughput_claims.csv).
OPTION_COLUMNS: dict[str, tuple[str, str]] = {
    "option": ("Option", "text"), "feasible": ("Feasible", "text"), "capex_usd": ("Capex [USD]", "usd"),
    "opex_usd_per_year": ("Opex, first year [USD/year]", "usd"),
    "revenue_usd_per_year": ("Revenue, first year [USD/year]", "usd"),
    "npv_vs_status_quo_usd": ("NPV vs status quo [USD]", "usd"), "irr": ("IRR vs status quo", "text"),
    "payback": ("Payback", "text"), "levelized_cost_usd_per_m_tokens": ("Levelized cost [USD/M token]", "usd_rate"),
    "output_tokens_per_s_per_user": ("Per-user speed [token/s]", "number"),
    "accelerators": ("GPUs", "count"), "decode_accelerators": ("Decode accelerators", "count"),
    "facility_mw": ("Facility [MW]", "number"), "racks": ("Racks", "count"), "reason": ("Why not feasible", "text"),
}


def _study(key: str) -> tuple[Any, float | None]:
    """The options, and the break-even decode price. The break-even price does not depend on the decode price
    entered (any price gives the same figure), so it is computed and cached at one fixed price: changing the price
    re-runs the options only, and the break-even is known even when no price is (the most the hardware may cost)."""
    at_no_price = common.canonical({**json.loads(key), "decode_accelerator_price_usd": 0.0})
    return studies.retrofit_of(key), studies.break_even(at_no_price)


def _missing(scenario: dict[str, Any]) -> list[str]:
    needs = {"existing_accelerators": "the size of the existing fleet (Existing fleet)",
             "decode_accelerator": "a decode accelerator (Decode accelerator)"}
    return [why for f, why in needs.items() if scenario[f] is None]


def _payback(months: Any) -> str:
    if months is None or (isinstance(months, float) and not math.isfinite(months)):
        return "never"
    return f"{months / 12:,.1f} years" if months >= 24 else f"{months:,.0f} months"


def _irr(value: Any) -> str:
    return "none" if value is None or (isinstance(value, float) and not math.isfinite(value)) else fmt.percent(value)


HELP = {
    "Best option (NPV)": "The feasible option with the highest NPV against the status quo",
    "NPV of adding decode": "Net present value of 'add decode' minus the status quo over the horizon, at the cost "
                            "of capital",
    "Break-even decode price": "Per decode accelerator: the most one may cost for 'add decode' to match the best "
                               "alternative; negative: not even free",
    "Payback of adding decode": "When the cumulative cash flow against the status quo turns positive",
    "IRR of adding decode": "Internal rate of return of 'add decode' against the status quo",
}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(float(value)) else None


def _best(rows: list[dict[str, Any]]) -> str:
    """The feasible option with the highest NPV (the first of equals; one without an NPV only when none has one)."""
    feasible = [r for r in rows if r["feasible"]]
    if not feasible:
        return "none feasible"
    npvs = [r["npv_vs_status_quo_usd"] for r in feasible]
    known = [v for v in npvs if v == v]
    return str(feasible[npvs.index(max(known)) if known else 0]["option"])


def _kpis(result: Any, break_even: float | None) -> dict[str, tuple[str, float | None, str, bool | None]]:
    """title -> (text, number for the delta, delta kind, higher is better), read from the options' rows."""
    row = result.row("add decode")
    ok = row is not None and bool(row["feasible"])
    r: dict[str, Any] = row if ok else {}
    npv, pay, irr = (_number(r.get(k)) for k in ("npv_vs_status_quo_usd", "payback_months", "irr_vs_status_quo"))
    return {
        "Best option (NPV)": (_best(result.rows), None, "", None),
        "NPV of adding decode": (fmt.usd(npv) if ok else "not feasible", npv, "usd", True),
        "Break-even decode price": (fmt.EMPTY if break_even is None else fmt.usd(break_even),
                                    _number(break_even), "usd", True),
        "Payback of adding decode": (_payback(r.get("payback_months")) if ok else fmt.EMPTY, pay, "months", False),
        "IRR of adding decode": (_irr(r.get("irr_vs_status_quo")) if ok else fmt.EMPTY, irr, "pp", True),
    }


def _change(d: float, kind: str) -> str:
    sign = "-" if d < 0 else "+"
    if kind == "usd":
        return sign + fmt.usd(abs(d))
    if kind == "pp":
        return f"{sign}{abs(d) * 100:,.1f} pp"
    return f"{sign}{abs(d):,.1f} months"


def _price_note(scenario: dict[str, Any]) -> None:
    decode = scenario["decode_accelerator"]
    if scenario["decode_accelerator_price_usd"] is not None:
        st.caption(f"Decode accelerator price: {fmt.usd(scenario['decode_accelerator_price_usd'])} each (given).")
        return
    figure = editor.catalog_figure("decode_accelerator_price_usd", scenario)
    if figure is None:
        st.warning(f"No catalog price for {decode}: enter the decode accelerator's price in the sidebar. Until then "
                   f"'add decode' is not costed; the break-even price says the most it may cost.")
        return
    source = catalog.accelerator_source(decode, "price_usd") or {}
    st.caption(f"Decode accelerator price: {fmt.usd(figure[0])} each, the catalog figure "
               f"(confidence: {figure[1] or 'unrated'}; {source.get('note', '')}). Enter your own in the sidebar.")


common.page_start()
st.title("Decode accelerators for an existing fleet")
st.caption("The existing GPUs keep prefill and a decode-optimised pool takes decode, against the status quo, more of "
           "the same GPUs, or a new generation. Cash flows at the cost of capital; the existing fleet is sunk but "
           "still pays power, hosting and maintenance.")
side = editor.Sidebar("Existing fleet and options", KEY_FIELDS)
editor.show_messages()
scenario = state.scenario()

missing = _missing(scenario)
if missing:
    st.info("This study needs " + " and ".join(missing) + ". Set it in the sidebar, or start from the worked example "
            "(it sets the fields the study needs and keeps the rest of the scenario).")
    st.button("Start from the example study", key="load_example", on_click=state.apply, args=(EXAMPLE,))
    common.share()
    side.stop()

try:
    result, break_even = _study(common.canonical(scenario))
except (economics.ScenarioError, ValueError) as error:
    st.error(plain(str(error)))
    side.stop()

notes = st.container()  # drawn after the KPIs (see editor.Sidebar), in its place above them
kpis = _kpis(result, break_even)
pinned = state.baseline()
base_kpis: dict[str, Any] | None = None
if pinned is not None and not _missing(pinned):
    try:
        base_result, base_break_even = _study(common.canonical(pinned))
        base_kpis = _kpis(base_result, base_break_even)
    except (economics.ScenarioError, ValueError):
        base_kpis = None
first, second = common.row(), common.row()
k = [first, first, first, second, second]
for col, (title, (text, value, kind, good)) in zip(k, kpis.items(), strict=True):
    change, same = None, False
    if base_kpis is not None and value is not None and base_kpis[title][1] is not None:
        same = value == base_kpis[title][1]
        change = "same as baseline" if same else f"{_change(value - base_kpis[title][1], kind)} vs baseline"
    col.metric(title, text, delta=change, delta_arrow="off" if same else "auto", help=HELP[title],
               delta_color="off" if same else "normal" if good else "inverse" if good is False else "off")
side()  # the inputs after the KPIs (see editor.Sidebar)
with notes:
    _price_note(scenario)
    common.measured_speed_check("decode_output_tokens_per_s_per_accelerator", "decode_accelerator")
    common.baseline_controls()

options = result.options

for _, bad in options[~options["feasible"]].iterrows():
    st.warning(f"{bad['option']}: {plain(bad['reason'])}")

st.subheader("Options side by side")
table = options.assign(payback=[_payback(m) if o != "status quo" else "—"
                                for m, o in zip(options["payback_months"], options["option"], strict=True)],
                       irr=[_irr(v) if o != "status quo" else "—"
                            for v, o in zip(options["irr_vs_status_quo"], options["option"], strict=True)],
                       feasible=[fmt.yes_no(v) for v in options["feasible"]])
common.show_table(table, key="options_table", columns=list(OPTION_COLUMNS), extra=OPTION_COLUMNS)

st.subheader("Cumulative cash flow against the status quo")
common.draw(studies.cashflow_spec(common.canonical(scenario)))

st.subheader("Reported speeds of this decode accelerator")
claims = catalog.throughput_claims()
speeds = claims[(claims["accelerator"] == scenario["decode_accelerator"])
                | (claims["decode_accelerator"] == scenario["decode_accelerator"])]
if speeds.empty:
    st.caption("None in data/throughput_claims.csv.")
else:
    st.dataframe(speeds[["system", "model", "precision", "metric", "value", "conditions", "confidence",
                         "source_date"]], hide_index=True, width="stretch", column_config={
        "value": st.column_config.NumberColumn("Value", format="%,.0f"),
        "source_date": st.column_config.TextColumn("Date")})
common.share()
