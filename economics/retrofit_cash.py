"""The cash flows of one option of the decode study, year by year, from the engine's results for its years.

Pure functions over arrays, one value per year t = 1 .. T (``_y``), or per cash-flow time t = 0 .. T (``_t``: the
purchases of year t + 1 are paid at t, so that year 1's fleet is bought at t = 0). :mod:`economics.retrofit` builds
the options and evaluates their years; this module turns the results into money: purchases and retrofits, revenue
(with the fast tier), the revenue a capped fleet turns away, net cash flows and the levelized cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .finance import HOURS_PER_YEAR, capital_recovery_factor
from .scenario import Scenario

DAYS_PER_YEAR = 365.0
Floats = NDArray[np.float64]


def purchases_t_usd(needed_y: Floats, price_usd: float) -> Floats:
    """What is bought when: the accelerators needed in year t (``needed_y``, never fewer than the year before)
    bought at the start of that year, at ``price_usd`` each.

    .. math:: P_{t} = (n_{t+1} - n_{t}) \\, p, \\quad n_0 = 0, \\quad t = 0 .. T - 1; \\qquad P_T = 0

    Sized once for the last year, ``needed_y`` is that size every year and everything is bought at t = 0.

    >>> [float(x) for x in purchases_t_usd(np.array([10.0, 10.0, 14.0]), 1000.0)]
    [10000.0, 0.0, 4000.0, 0.0]
    """
    bought = np.diff(np.concatenate([[0.0], np.maximum.accumulate(np.asarray(needed_y, dtype=float))]))
    return np.append(bought * price_usd, 0.0)


def retrofit_t_usd(retrofit_usd_per_hour_y: Floats, cost_of_capital: float, depreciation_years: float) -> Floats:
    """The liquid-cooling retrofit's capex, paid when the retrofitted power first grows: the engine charges it as an
    annuity A [USD/h], whose capex is A x 8,760 / CRF(r, n); each year pays for the growth over the year before.

    .. math:: C_y = A_y \\, 8760 / CRF(r, n), \\qquad R_{t} = \\max(0, C_{t+1} - \\max_{y \\le t} C_y)

    At no interest over 10 years CRF = 0.1, so 1 USD a year of annuity is 10 USD of capex:

    >>> [round(float(x)) for x in retrofit_t_usd(np.array([1.0, 1.0, 2.0]) / 8760, 0.0, 10)]
    [10, 0, 10, 0]
    """
    crf = float(capital_recovery_factor(cost_of_capital, depreciation_years))
    capex_y = np.nan_to_num(np.asarray(retrofit_usd_per_hour_y, dtype=float), nan=0.0) * HOURS_PER_YEAR / crf
    return np.append(np.diff(np.concatenate([[0.0], np.maximum.accumulate(capex_y)])), 0.0)


def revenue_y_usd(y: dict[str, Floats], s: Scenario) -> Floats:
    """Revenue per year; output tokens sell at the fast-tier price when the option's users see that speed."""
    rev = np.nan_to_num(y["revenue_usd_per_day"], nan=0.0) * DAYS_PER_YEAR
    threshold = s.fast_tier_min_tokens_per_s_per_user
    if threshold is None or s.fast_tier_price_multiplier == 1.0 or s.price_usd_per_m_output_tokens is None:
        return rev
    # the per-user speed: estimated, or the target at which the measured throughput was given
    target = s.target_output_tokens_per_s_per_user
    speed = np.nan_to_num(y["output_tokens_per_s_per_user"], nan=0.0 if target is None else float(target))
    extra = (y["served_output_tokens_per_day"] * DAYS_PER_YEAR / 1e6
             * s.price_usd_per_m_output_tokens * (s.fast_tier_price_multiplier - 1.0))
    return rev + np.where(speed >= threshold, extra, 0.0)


def forgone_revenue_y_usd(revenue_y_usd: Floats, served_fraction_y: Floats) -> Floats:
    """The revenue the demand a capped fleet cannot serve would have brought: the tokens turned away are in the
    same mix (input, cached, output) as those served, at the same prices.

    .. math:: F_y = R_y \\, (1 / f_y - 1)

    f_y the share of the year's demand served. Zero where everything is served; where nothing is (f = 0) the
    revenue per token is unknown and F is 0 with the share saying why.

    >>> [round(float(x), 9) for x in forgone_revenue_y_usd(np.array([30.0, 30.0, 0.0]), np.array([1.0, 0.75, 0.0]))]
    [0.0, 10.0, 0.0]
    """
    f = np.asarray(served_fraction_y, dtype=float)
    safe = np.where(f > 0, f, 1.0)
    return np.where(f > 0, np.asarray(revenue_y_usd, dtype=float) * (1.0 / safe - 1.0), 0.0)


def net_t_usd(capex_t_usd: Floats, revenue_y_usd: Floats, opex_y_usd: Floats) -> Floats:
    """Net cash flow at t = 0 .. T: - purchases and retrofits + revenue - opex (no revenue or opex at t = 0).

    >>> [float(x) for x in net_t_usd(np.array([100.0, 20.0, 0.0]), np.array([50.0, 60.0]), np.array([10.0, 10.0]))]
    [-100.0, 20.0, 50.0]
    """
    return -np.asarray(capex_t_usd, dtype=float) + np.concatenate([[0.0], revenue_y_usd - opex_y_usd])


def levelized_usd_per_m_tokens(capex_t_usd: Floats, opex_y_usd: Floats, tokens_y: Floats, rate: float) -> float:
    """PV(capex + opex) / PV(tokens served) x 10^6, capex at t = 0 .. T and opex and tokens in years 1 .. T.

    >>> round(levelized_usd_per_m_tokens(np.array([100.0, 0.0]), np.array([10.0]), np.array([1e6]), 0.0), 6)
    110.0
    """
    disc_t = (1.0 + rate) ** -np.arange(len(capex_t_usd))
    return float((np.sum(capex_t_usd * disc_t) + np.sum(opex_y_usd * disc_t[1:])) / np.sum(tokens_y * disc_t[1:])
                 * 1e6)


def flow_rows(name: str, capex_t: Floats, revenue_y: Floats, opex_y: Floats, net_t: Floats, incremental_t: Floats,
              served_fraction_y: Floats, forgone_y: Floats) -> list[dict[str, Any]]:
    """An option's cash flows, t = 0 (the first purchases) to the horizon, their difference from the status quo,
    and each year's share of the demand served with the revenue the rest would have brought."""
    rows = []
    for t, (value, inc) in enumerate(zip(net_t, incremental_t, strict=True)):
        rows.append({"option": name, "year": t, "capex_usd": float(capex_t[t]),
                     "revenue_usd": 0.0 if t == 0 else float(revenue_y[t - 1]),
                     "opex_usd": 0.0 if t == 0 else float(opex_y[t - 1]), "net_usd": float(value),
                     "vs_status_quo_usd": float(inc),
                     "served_share": None if t == 0 or not np.isfinite(served_fraction_y[t - 1])
                     else float(served_fraction_y[t - 1]),
                     "forgone_revenue_usd": 0.0 if t == 0 else float(forgone_y[t - 1])})
    return rows
