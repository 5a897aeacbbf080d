"""Cost per token, revenue at the user's prices, margins and break-even points.

Ratios with a zero denominator (no revenue, no cost) are returned as NaN here and reported as *missing* (empty)
by the callers, never as a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import Formula

TOKENS_PER_M = 1e6


def _ratio(num: ArrayLike, den: ArrayLike) -> NDArray[np.float64]:
    n = np.asarray(num, dtype=float)
    d = np.asarray(den, dtype=float)
    ok = d != 0
    return np.where(ok, n / np.where(ok, d, 1.0), np.nan)


def usd_per_m_tokens(cost_usd: ArrayLike, tokens: ArrayLike) -> NDArray[np.float64]:
    r"""Cost of a million tokens.

    .. math:: c = C / T \cdot 10^6

    Parameters
    ----------
    cost_usd : cost over a period [USD]
    tokens : tokens served over the same period [token]; 0 gives NaN (no tokens, no unit cost)

    Evaluates the engine's :data:`COST_PER_M` (the tokens as its input tokens, a period's cost as its day's).

    >>> round(float(usd_per_m_tokens(120.0, 300e6)), 9)
    0.4
    """
    t = np.asarray(tokens, dtype=float)
    ok = t != 0
    value = COST_PER_M.evaluate({"cost_usd_per_day": np.asarray(cost_usd, dtype=float),
                                 "served_input_tokens_per_day": np.where(ok, t, 1.0),
                                 "served_output_tokens_per_day": 0.0})
    return np.asarray(np.where(ok, value, np.nan), dtype=float)


def revenue_usd(
    input_tokens: ArrayLike,
    output_tokens: ArrayLike,
    prefix_cache_hit_rate: ArrayLike,
    price_usd_per_m_input_tokens: ArrayLike,
    price_usd_per_m_cached_input_tokens: ArrayLike,
    price_usd_per_m_output_tokens: ArrayLike,
) -> NDArray[np.float64]:
    """Revenue from served tokens, cached input billed at its own price.

    .. math:: Rev = (I (1-h) p_{in} + I h p_{cached} + O p_{out}) / 10^6

    Parameters
    ----------
    input_tokens, output_tokens : served tokens [token]
    prefix_cache_hit_rate : h, share of input tokens served from the prefix cache [fraction]
    price_usd_per_m_* : list prices [USD per million tokens]

    >>> float(revenue_usd(10e6, 2e6, 0.5, 0.5, 0.1, 2.0))
    7.0
    """
    i = np.asarray(input_tokens, dtype=float)
    h = np.asarray(prefix_cache_hit_rate, dtype=float)
    return (
        i * (1.0 - h) * np.asarray(price_usd_per_m_input_tokens, dtype=float)
        + i * h * np.asarray(price_usd_per_m_cached_input_tokens, dtype=float)
        + np.asarray(output_tokens, dtype=float) * np.asarray(price_usd_per_m_output_tokens, dtype=float)
    ) / TOKENS_PER_M


def cost_profit_margin(revenue_usd: ArrayLike, cost_usd: ArrayLike) -> NDArray[np.float64]:
    """Profit as a share of cost (markup): the engine's :data:`COST_PROFIT_MARGIN`.

    .. math:: m_c = (Rev - C) / C

    Parameters
    ----------
    revenue_usd, cost_usd : revenue and cost over the same period [USD]

    Special cases: NaN where the cost is not above 0, where the engine leaves the margin empty.

    >>> float(cost_profit_margin(150.0, 100.0))
    0.5
    >>> bool(np.isnan(cost_profit_margin(150.0, 0.0)))
    True
    """
    return _margin(COST_PROFIT_MARGIN, "cost_usd_per_day", revenue_usd, cost_usd)


def gross_margin(revenue_usd: ArrayLike, cost_usd: ArrayLike) -> NDArray[np.float64]:
    """Profit as a share of revenue: the engine's :data:`GROSS_MARGIN`.

    .. math:: m_g = (Rev - C) / Rev

    Parameters
    ----------
    revenue_usd, cost_usd : revenue and cost over the same period [USD]

    Special cases: NaN where the revenue is not above 0 (prices of 0, say), where the engine leaves it empty.

    >>> round(float(gross_margin(150.0, 100.0)), 6)
    0.333333
    >>> bool(np.isnan(gross_margin(0.0, 100.0)))
    True
    """
    return _margin(GROSS_MARGIN, "revenue_usd_per_day", revenue_usd, cost_usd)


def _margin(formula: Formula, base: str, revenue_usd: ArrayLike, cost_usd: ArrayLike) -> NDArray[np.float64]:
    # the engine's formulas (PROFIT, then the margin) evaluated on a day's figures: one definition for both; a margin
    # of a base that is not positive is empty in the engine (stages.py computes it only where the base is above 0)
    values: dict[str, Any] = {"revenue_usd_per_day": np.asarray(revenue_usd, dtype=float),
                              "cost_usd_per_day": np.asarray(cost_usd, dtype=float)}
    values["profit_usd_per_day"] = PROFIT.evaluate(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(values[base] > 0, formula.evaluate(values), np.nan), dtype=float)


def break_even_utilization(
    fixed_cost_usd: ArrayLike, variable_cost_at_full_usd: ArrayLike, revenue_at_full_usd: ArrayLike
) -> NDArray[np.float64]:
    r"""Utilization at which revenue equals cost, when revenue and the variable cost both scale with load.

    .. math:: Rev_{1} u = F + V_{1} u  \Rightarrow  u^* = F / (Rev_{1} - V_{1})

    F is the cost paid whatever the load (capital, facility, operations, rent, idle power); V_1 and Rev_1 are the
    load-dependent cost and the revenue at full utilization, over the same period. NaN when Rev_1 <= V_1 (no load
    breaks even). A value above 1 means break-even is out of reach at these prices.

    >>> float(break_even_utilization(60.0, 20.0, 120.0))
    0.6
    """
    return _ratio(fixed_cost_usd, np.asarray(revenue_at_full_usd, dtype=float) - np.asarray(
        variable_cost_at_full_usd, dtype=float
    )) * np.where(np.asarray(revenue_at_full_usd, dtype=float) > np.asarray(variable_cost_at_full_usd, dtype=float),
                  1.0, np.nan)


def break_even_price_usd_per_m_output_tokens(
    cost_usd: ArrayLike, input_revenue_usd: ArrayLike, output_tokens: ArrayLike
) -> NDArray[np.float64]:
    r"""Output-token price that makes revenue equal cost with the input prices held.

    .. math:: p_{out}^* = \max(0, C - Rev_{in}) / O \cdot 10^6

    Floored at 0: when input revenue alone covers the cost, any output price breaks even.

    >>> float(break_even_price_usd_per_m_output_tokens(100.0, 40.0, 30e6))
    2.0
    """
    gap = np.maximum(0.0, np.asarray(cost_usd, dtype=float) - np.asarray(input_revenue_usd, dtype=float))
    return _ratio(gap, output_tokens) * TOKENS_PER_M


# --- unit costs, revenue and break-even as formulas (economics.domain.formula), each written once ---
F = Formula
COST_OWNED = F("cost_usd_per_hour", "USD/h", "capital_usd_per_hour + energy_usd_per_hour + facility_usd_per_hour"
               " + operations_usd_per_hour + cooling_retrofit_usd_per_hour")
COST_RENTED = F("cost_usd_per_hour", "USD/h", "rent_usd_per_hour + energy_usd_per_hour + cooling_retrofit_usd_per_hour")
COST_OWNED_CARBON = F("cost_usd_per_hour", "USD/h", COST_OWNED.expression + " + carbon_usd_per_hour",
                      note="owned, with the carbon price's line")
COST_RENTED_CARBON = F("cost_usd_per_hour", "USD/h", COST_RENTED.expression + " + carbon_usd_per_hour",
                       note="rented, with the carbon price's line")
COST_PER_DAY = F("cost_usd_per_day", "USD/day", "cost_usd_per_hour * HOURS_PER_DAY")
COST_PER_YEAR = F("cost_usd_per_year", "USD/year", "cost_usd_per_day * DAYS_PER_YEAR")
COST_PER_M = F("cost_usd_per_m_tokens", "USD/M token",
               "cost_usd_per_day / (served_input_tokens_per_day + served_output_tokens_per_day) * TOKENS_PER_M")
INPUT_SHARE = F("input_time_share", "-", "prefill_accelerator_s_per_day / work_accelerator_s_per_day",
                note="prefill's share of the device time")
INPUT_SHARE_TWO_POOLS = F("input_time_share", "-",
                          "prefill_pool_cost_usd_per_hour / (prefill_pool_cost_usd_per_hour"
                          " + decode_pool_cost_usd_per_hour)",
                          note="input tokens carry the prefill pool's cost, output tokens the decode pool's")
PREFILL_ESTIMATE = "estimated_prefill_tokens_per_s_per_accelerator"
"""The roofline's prefill rate of a row whose measured figure includes prefill (a claim or a curve, no prefill
figure given): it splits the cost between input and output tokens and changes nothing else (NaN: no split)."""
INPUT_SHARE_FOLDED = F("input_time_share", "-",
                       "min(uncached_input_tokens_per_request / estimated_prefill_tokens_per_s_per_accelerator"
                       " / request_time_s, 1)",
                       note="the measured figure includes prefill: the roofline's prefill time over the measured "
                            "request time (this split only; capacity is the measured figure's)")
OUTPUT_SHARE_FOLDED = F("output_time_share", "-", "1 - input_time_share")
COST_PER_M_IN = F("cost_usd_per_m_input_tokens", "USD/M token",
                  "cost_usd_per_day * input_time_share / served_input_tokens_per_day * TOKENS_PER_M")
OUTPUT_SHARE = F("output_time_share", "-", "decode_accelerator_s_per_day / work_accelerator_s_per_day",
                 note="decode's share of the device time")
OUTPUT_SHARE_TWO_POOLS = F("output_time_share", "-",
                           "decode_pool_cost_usd_per_hour / (prefill_pool_cost_usd_per_hour"
                           " + decode_pool_cost_usd_per_hour)")
COST_PER_M_OUT = F("cost_usd_per_m_output_tokens", "USD/M token",
                   "cost_usd_per_day * output_time_share / served_output_tokens_per_day * TOKENS_PER_M")
INPUT_REVENUE = F("input_revenue_usd_per_day", "USD/day",
                  "(served_input_tokens_per_day * (1 - prefix_cache_hit_rate) * price_usd_per_m_input_tokens"
                  " + served_cached_input_tokens_per_day * price_usd_per_m_cached_input_tokens) / TOKENS_PER_M")
REVENUE = F("revenue_usd_per_day", "USD/day",
            "input_revenue_usd_per_day + served_output_tokens_per_day * price_usd_per_m_output_tokens / TOKENS_PER_M")
PROFIT = F("profit_usd_per_day", "USD/day", "revenue_usd_per_day - cost_usd_per_day")
COST_PROFIT_MARGIN = F("cost_profit_margin", "-", "profit_usd_per_day / cost_usd_per_day")
GROSS_MARGIN = F("gross_margin", "-", "profit_usd_per_day / revenue_usd_per_day")
BREAK_EVEN_PRICE = F("break_even_price_usd_per_m_output_tokens", "USD/M token",
                     "max(0, cost_usd_per_day - input_revenue_usd_per_day) / served_output_tokens_per_day"
                     " * TOKENS_PER_M",
                     note="the output price at which today's served volume covers the cost")
ENERGY_ABOVE_IDLE = F("energy_above_idle_at_full_load_usd_per_day", "USD/day",
                      "accelerators * accelerator_power_kw * (1 - idle_power_fraction) * pue_effective"
                      " * electricity_usd_per_kwh * HOURS_PER_DAY", note="the only cost that follows the load")
DECODE_ENERGY_ABOVE_IDLE = ENERGY_ABOVE_IDLE.bind(
    "decode_energy_above_idle_at_full_load_usd_per_day", accelerators="decode_accelerators",
    accelerator_power_kw="decode_accelerator_power_kw")
ENERGY_ABOVE_IDLE_BY_HOUR = ENERGY_ABOVE_IDLE.bind("energy_above_idle_at_full_load_usd_per_day",
                                                   electricity_usd_per_kwh="load_following_usd_per_kwh")
DECODE_ENERGY_ABOVE_IDLE_BY_HOUR = DECODE_ENERGY_ABOVE_IDLE.bind(
    "decode_energy_above_idle_at_full_load_usd_per_day", electricity_usd_per_kwh="load_following_usd_per_kwh")
NO_ENERGY_ABOVE_IDLE = F("energy_above_idle_at_full_load_usd_per_day", "USD/day", "0",
                         note="the rent includes energy and no carbon price: no cost follows the load")
DECODE_NO_ENERGY_ABOVE_IDLE = NO_ENERGY_ABOVE_IDLE.bind("decode_energy_above_idle_at_full_load_usd_per_day")
VARIABLE_COST = F("variable_cost_usd_per_day", "USD/day", "energy_above_idle_at_full_load_usd_per_day * utilization")
VARIABLE_COST_TWO_POOLS = F("variable_cost_usd_per_day", "USD/day",
                            "energy_above_idle_at_full_load_usd_per_day * utilization"
                            " + decode_energy_above_idle_at_full_load_usd_per_day * decode_utilization")
FIXED_COST = F("fixed_cost_usd_per_day", "USD/day", "cost_usd_per_day - variable_cost_usd_per_day")
BREAK_EVEN_UTILIZATION = F(
    "break_even_utilization", "-",
    "fixed_cost_usd_per_day * utilization / (revenue_usd_per_day - variable_cost_usd_per_day)",
    note="revenue and load-following energy both scale with the served volume, so with the main pool's utilization")
MAX_UTILIZATION = F("max_utilization", "-", "min(1, capacity_ratio / main_pool_capacity_ratio)",
                    note="the most the main pool can be used before the decode pool or the KV link binds")
