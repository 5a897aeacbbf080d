"""How the decode study computes each option: its derivation with the numbers substituted.

For one option of :func:`economics.studies.retrofit.analyse`: its sizing rule; the first year's fleet, cost parts and
revenue
as the engine derives them (the same steps the Cost page's "How this is computed" shows, recorded by the computation
itself, :func:`economics.engine.batch.explain_scenario`); then each year's purchases, opex, revenue, revenue turned
away and
net cash flow, the difference from the status quo and its present value, rendered from the formulas
:mod:`economics.studies.retrofit_cash` evaluates (:data:`~economics.studies.retrofit_cash.OPEX`, ...); then NPV, IRR
and payback
with their arithmetic. ``python -m economics retrofit --explain`` prints it for every option; the Decode
accelerators page shows it for the option chosen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from economics.domain.explain import Step, Trace, format_number
from economics.engine.batch import explain_scenario
from economics.schema.scenario import Scenario
from economics.studies.retrofit import OptionKind, RetrofitResult
from economics.studies.retrofit_cash import (
    FORGONE,
    NET,
    OPEX,
    PRESENT_VALUE,
    PURCHASE,
    RENT_INDEX,
    RESIDUAL,
    RETROFIT,
    REVENUE,
    TOKEN_PRICE_INDEX,
    opex_terms,
    revenue_terms,
)

ENGINE_STEPS = ("accelerators", "decode_accelerators", "capacity_output_tokens_per_day", "served_fraction",
                "served_output_tokens_per_day", "energy_usd_per_hour", "facility_usd_per_hour",
                "operations_usd_per_hour", "rent_usd_per_hour", "capital_usd_per_hour",
                "cooling_retrofit_usd_per_hour", "cost_usd_per_hour", "cost_usd_per_year", "revenue_usd_per_day")
"""The steps of the engine's first-year derivation the study's derivation repeats (fleet, capacity, cost parts,
revenue): the rest is on the Cost page."""


def _money(x: float) -> str:
    return f"{format_number(x)} USD"


def _engine_lines(row: dict[str, Any]) -> list[str]:
    """The engine's derivation of the option's first year, the steps of :data:`ENGINE_STEPS` that were computed."""
    trace = explain_scenario(row)
    names = {s.name for s in trace.steps}
    return [trace.step(name).text() for name in ENGINE_STEPS if name in names]


def _year_steps(values: dict[str, np.ndarray], t: int) -> list[Step]:
    """Year t's money (t = 1 .. T), each from its formula with that year's numbers."""
    trace = Trace(t - 1)
    for formula in (RENT_INDEX, OPEX, TOKEN_PRICE_INDEX, REVENUE, NET):
        trace.record(formula, values, formula.evaluate(values))
    if values["served_fraction"][t - 1] < 1.0:
        trace.record(FORGONE, values, FORGONE.evaluate(values))
    return trace.steps


def _capex_lines(result: RetrofitResult, option: str, fraction: float = 0.0, rate: float = 0.0) -> list[str]:
    """What the option buys and when: each year's purchases (accelerators bought x price, from :data:`PURCHASE`)
    and its liquid retrofit (from :data:`RETROFIT`'s annuity, as the cash flows carry it), then its resale at the
    horizon (``fraction`` of the price, discounted at ``rate``).
    """
    flows = result.cashflows[result.cashflows["option"] == option].reset_index(drop=True)
    opt = next(o for o in result.studied if o.name == option)
    part = next(p for name, p in result.option_years if name == option)
    capex = flows["capex_usd"].to_numpy(dtype=float)
    if not np.any(capex > 0):
        return ["capex_usd = 0 USD (nothing bought: the existing fleet is sunk)"]
    prices = part.first({price for _, price in opt.purchases})
    retrofits = flows["retrofit_capex_usd"].to_numpy(dtype=float)
    lines = []
    for t in range(len(capex)):
        retrofit = float(retrofits[t])
        bought_usd = capex[t] - retrofit
        for _, price_col in opt.purchases:
            price = float(prices.get(price_col) or 0.0)
            if bought_usd > 0 and price > 0:
                values = {"bought": np.array([bought_usd / price]), "price_usd": np.array([price])}
                lines.append(f"t = {t}: {PURCHASE.name} = {PURCHASE.symbolic()} = {PURCHASE.substituted(values)} "
                             f"= {_money(bought_usd)}   ({PURCHASE.note}; {price_col})")
        if retrofit > 0:
            lines.append(f"t = {t}: {RETROFIT.name} = {_money(retrofit)}   ({RETROFIT.note}: "
                         f"{RETROFIT.symbolic()}, the growth of the retrofitted power that year)")
    lines.append(f"capex_usd = {' + '.join(format_number(c) for c in capex if c > 0)} = "
                 f"{_money(float(capex.sum()))} over the horizon")
    return lines + _residual_lines(flows, fraction, rate)


def _residual_lines(flows: Any, fraction: float, rate: float) -> list[str]:
    """The resale at the horizon (:data:`RESIDUAL`) with its numbers, and what it adds to the NPV."""
    bought = float((flows["capex_usd"] - flows["retrofit_capex_usd"]).sum())
    horizon = len(flows) - 1
    values = {"bought_usd": np.array([bought]), "residual_value_fraction": np.array([fraction])}
    value = float(RESIDUAL.evaluate(values)[0])
    if value <= 0:
        return [f"t = {horizon}: {RESIDUAL.name} = 0 USD (residual_value_fraction {format_number(fraction)})"]
    pv = value / (1.0 + rate) ** horizon
    return [f"t = {horizon}: {RESIDUAL.name} = {RESIDUAL.symbolic()} = {RESIDUAL.substituted(values)} = "
            f"{_money(value)}   ({RESIDUAL.note}); it adds {format_number(value)} / (1 + {format_number(rate)})^"
            f"{horizon} = {_money(pv)} to the NPV"]


def option_text(result: RetrofitResult, option: str, s: Scenario) -> str:
    """The derivation of ``option``: sizing, the first year as the engine computes it, each year's cash flow and the
    comparison with the status quo (NPV, IRR, payback), every line with its numbers.
    """
    row = result.row(option)
    if row is None:
        raise KeyError(option)
    part = next(p for name, p in result.option_years if name == option)
    lines = [f"{option}: {row['description']}", f"  sized: {row['sizing']}"]
    if not row["feasible"]:
        return "\n".join([*lines, f"  not feasible: {row['reason']}"]) + "\n"
    lines += ["", "year 1, as the engine derives it (the Cost page shows every step):"]
    lines += ["  " + line.replace("\n", "\n  ") for line in _engine_lines(part.rows[0])]
    lines += ["", "purchases and retrofits, paid at the start of the year that needs them (t = 0 for year 1):"]
    lines += ["  " + line for line in _capex_lines(result, option, s.residual_value_fraction, s.cost_of_capital)]
    y = part.numbers
    flows = result.cashflows[result.cashflows["option"] == option]
    years = s.horizon_years
    curves = {"year": np.arange(1.0, years + 1), "rent_change_per_year": np.full(years, s.rent_change_per_year),
              "token_price_change_per_year": np.full(years, s.token_price_change_per_year)}
    values = {**{k: np.asarray(v, dtype=float) for k, v in opex_terms(y, s.rent_change_per_year).items()},
              **revenue_terms(y, s), **curves,
              "capex_usd": flows["capex_usd"].to_numpy(dtype=float)[1:],
              "residual_value_usd": flows["residual_value_usd"].to_numpy(dtype=float)[1:]}
    values["opex_usd"] = np.asarray(OPEX.evaluate(values), dtype=float)
    values["revenue_usd"] = np.asarray(REVENUE.evaluate(values), dtype=float)
    for t in range(1, s.horizon_years + 1):
        lines += ["", f"year {t} (t = {t}):"]
        lines += ["  " + step.text().replace("\n", "\n  ") for step in _year_steps(values, t)]
    lines += ["", *_comparison_lines(result, option, s)]
    return "\n".join(lines) + "\n"


def _comparison_lines(result: RetrofitResult, option: str, s: Scenario) -> list[str]:
    """Against the status quo: each year's difference and its present value, the NPV as their sum, the IRR (the rate
    that makes it zero) and the payback (when the cumulative difference turns non-negative).
    """
    flows = result.cashflows
    mine = flows[flows["option"] == option].reset_index(drop=True)
    base = flows[flows["option"] == OptionKind.STATUS_QUO].reset_index(drop=True)
    if option == OptionKind.STATUS_QUO:
        return ["against the status quo: this is the status quo (NPV 0 by definition)"]
    lines = ["against the status quo, each year: vs_status_quo_usd = net_usd - net_usd of the status quo"]
    pv = []
    diff, net, base_net = (frame[c].to_numpy(dtype=float) for frame, c in (
        (mine, "vs_status_quo_usd"), (mine, "net_usd"), (base, "net_usd")))
    for t in range(len(diff)):
        values = {"vs_status_quo_usd": diff[t:t + 1], "year": np.array([float(t)]),
                  "cost_of_capital": np.array([float(s.cost_of_capital)])}
        pv.append(float(PRESENT_VALUE.evaluate(values)[0]))
        lines.append(f"  t = {t}: {format_number(net[t])} - {format_number(base_net[t])} = {_money(diff[t])}; "
                     f"{PRESENT_VALUE.name} = {PRESENT_VALUE.substituted(values)} = {_money(pv[-1])}")
    row = result.row(option) or {}
    lines.append(f"npv_vs_status_quo_usd = sum of the present values = {' + '.join(format_number(v) for v in pv)} "
                 f"= {_money(float(row.get('npv_vs_status_quo_usd', float('nan'))))}")
    irr = row.get("irr_vs_status_quo")
    if irr is None or not np.isfinite(irr):
        lines.append("irr_vs_status_quo: none (the differences never change sign, or no rate makes their sum zero)")
    else:
        check = sum(float(v) / (1.0 + irr) ** t for t, v in enumerate(mine["vs_status_quo_usd"]))
        lines.append(f"irr_vs_status_quo = the rate r with sum_t vs_status_quo_usd / (1 + r)^t = 0: r = "
                     f"{irr:.4f} (at that rate the sum is {format_number(check)} USD)")
    lines += _payback_lines(mine["vs_status_quo_usd"].to_numpy(dtype=float), row.get("payback_months"))
    return lines


def _payback_lines(diff: np.ndarray, months: Any) -> list[str]:
    """When the cumulative difference from the status quo turns non-negative, interpolated within the year."""
    cum = np.cumsum(diff)
    text = "cumulative vs status quo: " + ", ".join(f"t = {t}: {format_number(c)}" for t, c in enumerate(cum))
    if months is None or not np.isfinite(months):
        return [text, "payback: never within the horizon"]
    k = int(np.argmax(cum >= 0))
    years = (k - 1) + (-cum[k - 1]) / diff[k] if k > 0 else 0.0
    return [text, f"payback = {k - 1} + {format_number(-cum[k - 1])} / {format_number(diff[k])} = "
                  f"{years:.3f} years = {months:.1f} months" if k > 0 else "payback: at once"]


def study_text(result: RetrofitResult, s: Scenario) -> str:
    """Every option's derivation, one after the other (``retrofit --explain``)."""
    return "\n".join(option_text(result, name, s) for name in result.options["option"])


def shortfall_notes(result: RetrofitResult) -> list[str]:
    """A note for each option that cannot serve the whole demand, year by year, with the revenue it turns away
    (:attr:`economics.studies.retrofit.RetrofitResult.shortfall`, as the Decode page shows it): ``retrofit``'s
    notes on stderr.
    """
    lines = []
    short = result.shortfall
    for option in dict.fromkeys(short["option"]):
        mine = short[short["option"] == option]
        years = ", ".join(f"year {int(t)} {100 * f:.1f} %" for t, f in zip(mine["year"], mine["served_share"],
                                                                           strict=True))
        lines.append(f"note: {option} cannot serve the whole demand: served {years}; revenue turned away "
                     f"{mine['forgone_revenue_usd'].sum():,.0f} USD over the horizon")
    return lines
