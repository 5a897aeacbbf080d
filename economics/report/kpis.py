"""The KPIs of each page, as the page draws them and the board report prints them: one list, one rule.

The Cost and Fleet pages show outputs of the engine (:func:`economics.report.format.kpi`); the Decode page reads the
retrofit study's options, the Plan page the plan's summary. Each function returns :class:`~economics.report.format.Kpi`
values with the change against the pinned baseline where there is one; no figure is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from economics.report import format as fmt
from economics.report.format import Kpi
from economics.schema.outputs import DisplayFormat as Show
from economics.studies.planner.inputs import Ownership
from economics.studies.retrofit import OptionKind

NOT_SEPARABLE = "not separable"
COST_ROWS: tuple[tuple[str, ...], ...] = (
    ("cost_usd_per_m_tokens", "cost_usd_per_m_input_tokens", "cost_usd_per_m_output_tokens", "gross_margin"),
    ("cost_usd_per_hour", "cost_usd_per_day", "revenue_usd_per_day", "utilization", "accelerators"),
)
"""The Cost per token page's KPIs, row by row (output names)."""
DAY_ROWS: tuple[tuple[str, ...], ...] = (
    ("electricity_usd_per_kwh_effective", "energy_usd_per_hour", "kgco2e_per_m_tokens", "tco2e_per_year"),
    ("operational_kgco2e_per_m_tokens", "embodied_kgco2e_per_m_tokens", "grid_carbon_g_per_kwh_effective",
     "carbon_usd_per_hour"),
)
"""The Cost page's energy and carbon panel (output names); a rented fleet's tier adds :data:`TIER_ROWS`."""
TIER_ROWS: dict[str, tuple[str, ...]] = {
    "reserved": ("rent_usd_per_hour", "reserved_idle_usd_per_day", "reserved_commitment_usd"),
    "spot": ("rent_usd_per_hour", "spot_availability", "accelerators"),
}
"""The figures of each rent tier other than on demand."""
FLEET_ROWS: tuple[tuple[str, ...], ...] = (
    ("accelerators", "systems", "racks", "facility_power_kw"),
    ("cost_usd_per_m_tokens", "utilization", "it_power_kw", "kw_per_rack"),
    ("energy_mwh_per_year", "joules_per_token", "tokens_per_s_per_mw", "cost_usd_per_year"),
)
"""The Fleet page's KPIs, row by row."""
SESSION_ROWS: tuple[tuple[str, ...], ...] = (
    ("cost_usd_per_session", "kv_hit_rate", "sessions_served_per_day", "input_tokens_per_session",
     "prefill_tokens_per_session"),
    ("agents_per_accelerator", "agents_per_mw", "agents_per_usd_per_hour", "agents_per_rack", "ttft_last_turn_s"),
    ("cost_usd_per_day", "kv_tiers_usd_per_hour", "cost_usd_per_m_tokens", "accelerators", "racks"),
)
"""The Sessions page's KPIs (the session, agents at the SLO), and the fleet behind them, row by row."""


def stated(name: str, result: Mapping[str, Any]) -> str | None:
    """The words a KPI shows for an output the engine leaves empty for a reason (None: its value is shown).

    >>> stated("gross_margin", {"gross_margin": None}), stated("cost_usd_per_m_input_tokens", {"x": 1})
    ('no price given', 'not separable')
    >>> stated("gross_margin", {"gross_margin": None, "revenue_usd_per_day": 0.0})
    'no revenue'
    """
    if result.get(name) is not None:
        return None
    if name in ("cost_usd_per_m_input_tokens", "cost_usd_per_m_output_tokens"):
        return NOT_SEPARABLE
    if name != "gross_margin":
        return None
    # a margin on revenue is empty without a price, and also when prices of 0 bring no revenue
    return "no revenue" if result.get("revenue_usd_per_day") == 0 else "no price given"


def output_kpis(rows: tuple[tuple[str, ...], ...], result: Mapping[str, Any],
                base: Mapping[str, Any] | None) -> list[list[Kpi]]:
    """The KPIs of ``rows`` (:data:`COST_ROWS`, :data:`FLEET_ROWS`) for an evaluated scenario and baseline."""
    return [[fmt.kpi(name, result, base, value=stated(name, result)) for name in row] for row in rows]


# Decode accelerators page

DECODE_HELP = {
    "Best option (NPV)": "The feasible option with the highest NPV against the status quo",
    "NPV of adding decode": "Net present value of 'add decode' minus the status quo over the horizon, at the cost "
                            "of capital",
    "Break-even decode price": "Per decode accelerator: the most one may cost for 'add decode' to match the best "
                               "alternative; negative: not even free",
    "Payback of adding decode": "When the cumulative cash flow against the status quo turns positive",
    "IRR of adding decode": "Internal rate of return of 'add decode' against the status quo",
}


def payback(months: Any) -> str:
    """A payback period in words.

    >>> payback(30.0), payback(7.0), payback(None)
    ('2.5 years', '7 months', 'never')
    """
    if months is None or (isinstance(months, float) and not math.isfinite(months)):
        return "never"
    return f"{months / 12:,.1f} years" if months >= 24 else f"{months:,.0f} months"


def irr(value: Any) -> str:
    """An internal rate of return, ``none`` where there is none.

    >>> irr(0.125), irr(float("nan"))
    ('12.5 %', 'none')
    """
    return "none" if value is None or (isinstance(value, float) and not math.isfinite(value)) else fmt.percent(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(float(value)) else None


def best_option(rows: list[dict[str, Any]]) -> str:
    """The feasible option with the highest NPV (the first of equals; one without an NPV only when none has one)."""
    feasible = [r for r in rows if r["feasible"]]
    if not feasible:
        return "none feasible"
    npvs = [r["npv_vs_status_quo_usd"] for r in feasible]
    known = [v for v in npvs if v == v]
    return str(feasible[npvs.index(max(known)) if known else 0]["option"])


def _decode_figures(result: Any, break_even: float | None) -> dict[str, tuple[str, float | None, Show, bool | None]]:
    """Each KPI by title: (text, number for the delta, the delta's display format, higher is better), read from the
    options' rows.
    """
    row = result.row(OptionKind.ADD_DECODE)
    ok = row is not None and bool(row["feasible"])
    r: dict[str, Any] = row if ok else {}
    npv, pay, rate = (_number(r.get(k)) for k in ("npv_vs_status_quo_usd", "payback_months", "irr_vs_status_quo"))
    return {
        "Best option (NPV)": (best_option(result.rows), None, Show.TEXT, None),
        "NPV of adding decode": (fmt.usd(npv) if ok else "not feasible", npv, Show.USD, True),
        "Break-even decode price": (fmt.EMPTY if break_even is None else fmt.usd(break_even),
                                    _number(break_even), Show.USD, True),
        "Payback of adding decode": (payback(r.get("payback_months")) if ok else fmt.EMPTY, pay, Show.MONTHS, False),
        "IRR of adding decode": (irr(r.get("irr_vs_status_quo")) if ok else fmt.EMPTY, rate, Show.PERCENT, True),
    }


def decode_kpis(result: Any, break_even: float | None, base: tuple[Any, float | None] | None = None) -> list[Kpi]:
    """The Decode page's five KPIs of a retrofit study (:func:`economics.studies.retrofit.analyse`) and its
    break-even decode price, with the change against the baseline's study and price ``base``.
    """
    mine = _decode_figures(result, break_even)
    theirs = None if base is None else _decode_figures(*base)
    out = []
    for title, (text, value, kind, good) in mine.items():
        change, same = None, False
        before = None if theirs is None else theirs[title][1]
        if value is not None and before is not None:
            same = value == before
            change = fmt.versus(fmt.change(value - before, kind), same)
        color = "off" if same else "normal" if good else "inverse" if good is False else "off"
        out.append(Kpi(title, text, change, same, color, DECODE_HELP[title]))
    return out


# Plan page

PLAN_KPIS: tuple[tuple[str, str, Show], ...] = (
    ("cost_usd_per_day", "Cost per day", Show.USD), ("cost_usd_per_m_tokens", "Cost per M tokens", Show.USD_RATE),
    ("capex_usd", "Capex", Show.USD), ("facility_mw", "Facility power [MW]", Show.NUMBER),
    ("racks", "Racks", Show.COUNT),
)
"""The Plan page's KPIs: plan summary key, title, display format."""


def plan_kpis(summary: Mapping[str, Any], base: Mapping[str, Any] | None) -> list[Kpi]:
    """The Plan page's KPIs of a plan's ``summary``, with the change against the baseline plan's summary ``base``
    (every one a cost or a size: lower is better).
    """
    out = []
    for key, title, kind in PLAN_KPIS:
        shown, current, before = fmt.FORMATTERS[kind], summary.get(key), None if base is None else base.get(key)
        same = base is not None and current == before
        change = None if current is None or before is None else fmt.versus(
            fmt.signed(float(current) - float(before), shown), same)
        out.append(Kpi(title, shown(current), change, same, "off" if same else "inverse", f"Plan summary `{key}`"))
    return out


PLAN_COLUMNS: dict[str, tuple[str, Show]] = {
    "name": ("Option", Show.TEXT), "accelerator": ("Accelerator", Show.TEXT), "ownership": ("Ownership", Show.TEXT),
    "tier": ("Rent tier", Show.TEXT), "cooling": ("Cooling", Show.TEXT), "role": ("Role", Show.TEXT),
    "systems": ("Systems", Show.COUNT), "kgco2e_per_day": ("Emissions [kgCO2e/day]", Show.NUMBER),
    "accelerators": ("Accelerators", Show.COUNT), "racks": ("Racks", Show.COUNT),
    "it_mw": ("IT power [MW]", Show.NUMBER),
    "facility_mw": ("Facility power [MW]", Show.NUMBER), "hours_per_day": ("Hours a day", Show.NUMBER),
    "system_hours_per_day": ("System-hours a day", Show.NUMBER), "capex_usd": ("Capex [USD]", Show.USD),
    "cost_usd_per_day": ("Cost [USD/day]", Show.USD), "peak_utilization": ("Peak utilization", Show.PERCENT),
    "ttft_s": ("TTFT at the percentile [s]", Show.NUMBER), "availability": ("Availability", Show.PERCENT),
    "spares": ("Spare systems", Show.COUNT), "p_enough_systems_up": ("Chance enough systems are up", Show.PERCENT),
}
"""A plan's pools (the planner's ``plan`` records): each column's title and display format, for the Plan page's
table and the report's."""
POOL_COLUMNS = ("name", "accelerator", "role", "ownership", "systems", "accelerators", "racks", "facility_mw",
                "capex_usd", "cost_usd_per_day", "peak_utilization")
"""The columns of a plan's pools the board report prints (its page is narrower than the Plan page's table)."""
OWNERSHIP_WORDS: dict[str, str] = {Ownership.OWN: "buys", Ownership.RENT: "rents", Ownership.EXISTING: "already owned"}
"""How the report words a pool's ownership (display only)."""


def pool_rows(plan: Mapping[str, Any]) -> list[dict[str, str]]:
    """The pools a plan buys or rents (its ``plan`` records, :func:`economics.studies.planner.plan` ``.to_dict()``)
    as the report prints them: :data:`POOL_COLUMNS`, each in its display format, a rented pool with its tier.

    >>> pool = {"name": "gpu", "accelerator": "h100-sxm", "role": "decode", "ownership": "rent", "tier": "spot",
    ...         "systems": 2, "accelerators": 16, "racks": 1, "facility_mw": 0.025, "capex_usd": 0.0,
    ...         "cost_usd_per_day": 425.3, "peak_utilization": 0.78125}
    >>> row = pool_rows({"plan": [pool]})[0]
    >>> row["ownership"], row["cost_usd_per_day"], row["peak_utilization"]
    ('rents (spot)', '$425.30', '78.1 %')
    """
    rows = []
    for pool in plan.get("plan") or []:
        row = {}
        for key in POOL_COLUMNS:
            row[key] = fmt.FORMATTERS[PLAN_COLUMNS[key][1]](pool.get(key))
        own = str(pool.get("ownership") or "")
        row["ownership"] = OWNERSHIP_WORDS.get(own, own) + (f" ({pool['tier']})" if pool.get("tier") else "")
        rows.append(row)
    return rows
