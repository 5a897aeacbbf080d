"""The cash flows of one option of the decode study, year by year, from the engine's results for its years.

Pure functions over arrays, one value per year t = 1 .. T (``_y``), or per cash-flow time t = 0 .. T (``_t``: the
purchases of year t + 1 are paid at t, so that year 1's fleet is bought at t = 0). :mod:`economics.studies.retrofit`
builds
the options and evaluates their years; this module turns the results into money: purchases and retrofits, revenue
(with the fast tier), the revenue a capped fleet turns away, net cash flows and the levelized cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from economics.domain.finance import capital_recovery_factor, discount_factors
from economics.domain.finance import levelized_usd_per_m_tokens as finance_levelized
from economics.domain.formula import Formula
from economics.schema.scenario import Scenario

Floats = NDArray[np.float64]

# Each year's money as formulas (economics.domain.formula): the functions below evaluate them over the years, and the
# study's derivation (economics.studies.retrofit_explain) renders the same definitions with one year's numbers.
FORWARD = Formula("forward_index", "-", "(1 + change_per_year) ** (year - 1)",
                  note="a forward curve: the year's price over year 1's")
TOKEN_PRICE_INDEX = FORWARD.bind("token_price_index", change_per_year="token_price_change_per_year")
RENT_INDEX = FORWARD.bind("rent_index", change_per_year="rent_change_per_year")
OPEX = Formula("opex_usd", "USD", "cost_usd_per_year - (capital_usd_per_hour + cooling_retrofit_usd_per_hour) * "
               "HOURS_PER_YEAR + rent_usd_per_hour * HOURS_PER_YEAR * (rent_index - 1)",
               note="the engine's cost of the year without its capital charges: energy, facility, operations, "
                    "software, rent (the rent on its forward curve)")
FAST_TIER = Formula("fast_tier_usd", "USD", "served_output_tokens_per_day * DAYS_PER_YEAR / TOKENS_PER_M * "
                    "price_usd_per_m_output_tokens * (fast_tier_price_multiplier - 1) * at_fast_tier_speed",
                    note="output tokens sold at the fast-tier price when users see at least its speed (1) or not (0)")
REVENUE = Formula("revenue_usd", "USD", "(revenue_usd_per_day * DAYS_PER_YEAR + fast_tier_usd) * token_price_index",
                  note="every selling price on its forward curve")
FORGONE = Formula("forgone_revenue_usd", "USD", "revenue_usd * (1 / served_fraction - 1)",
                  note="the demand not served, in the same token mix and at the same prices as the demand served")
PURCHASE = Formula("purchase_usd", "USD", "bought * price_usd", note="bought at the start of the year that needs them")
RETROFIT = Formula("retrofit_capex_usd", "USD", "cooling_retrofit_usd_per_hour * HOURS_PER_YEAR / crf",
                   note="the liquid retrofit the engine charges as an annuity, as capex")
RESIDUAL = Formula("residual_value_usd", "USD", "bought_usd * residual_value_fraction",
                   note="the accelerators the option bought, resold at the horizon at that share of their price")
LEASE = Formula("lease_usd", "USD", "leased_usd * lease_rate_per_year",
                note="paid at the end of each year for what the option would have bought by then; no purchase, no "
                     "resale")
NET = Formula("net_usd", "USD", "revenue_usd - opex_usd - capex_usd + residual_value_usd",
              note="at the end of year t, where the purchases for year t + 1 are paid (the resale at the horizon)")
PRESENT_VALUE = Formula("present_value_usd", "USD", "vs_status_quo_usd / (1 + cost_of_capital) ** year")


def forward_y(change_per_year: float | Floats, years: int) -> Floats:
    r"""A forward curve over years 1 .. ``years`` (:data:`FORWARD`): each year's price over year 1's, one formula for
    the rent and the token prices. ``change_per_year`` a number, or one per draw (a table, draws x years).

    .. math:: I_t = (1 + c)^{t - 1}

    Prices falling 20 % a year: year 3 sells at 0.8^2 = 0.64 of year 1's price.

    >>> [round(float(x), 6) for x in forward_y(-0.2, 3)]
    [1.0, 0.8, 0.64]
    """
    change = np.asarray(change_per_year, dtype=float)
    year = np.arange(1, years + 1, dtype=float)
    values = {"change_per_year": change[..., None] if change.ndim else change, "year": year}
    return np.asarray(FORWARD.evaluate(values), dtype=float)


def purchases_t_usd(needed_y: Floats, price_usd: float) -> Floats:
    r"""What is bought when: the accelerators needed in year t (``needed_y``, never fewer than the year before)
    bought at the start of that year, at ``price_usd`` each.

    .. math:: P_{t} = (n_{t+1} - n_{t}) \, p, \quad n_0 = 0, \quad t = 0 .. T - 1; \qquad P_T = 0

    Sized once for the last year, ``needed_y`` is that size every year and everything is bought at t = 0.

    >>> [float(x) for x in purchases_t_usd(np.array([10.0, 10.0, 14.0]), 1000.0)]
    [10000.0, 0.0, 4000.0, 0.0]
    """
    bought = np.diff(np.concatenate([[0.0], np.maximum.accumulate(np.asarray(needed_y, dtype=float))]))
    return np.append(PURCHASE.evaluate({"bought": bought, "price_usd": price_usd}), 0.0)


def residual_t_usd(purchases_t_usd: Floats, fraction: float) -> Floats:
    r"""The resale value of what was bought (:data:`RESIDUAL`), received at the horizon t = T: every purchase
    (not the liquid retrofit, which stays with the building) times ``fraction``, whatever year it was made.

    .. math:: V_T = \phi \sum_t P_t, \qquad V_t = 0 \quad (t < T)

    100 accelerators at USD 30,000 resold at 0.2 of their price:

    >>> [float(x) for x in residual_t_usd(np.array([3_000_000.0, 0.0, 0.0]), 0.2)]
    [0.0, 0.0, 600000.0]
    """
    purchases = np.asarray(purchases_t_usd, dtype=float)
    out = np.zeros_like(purchases)
    out[-1] = RESIDUAL.evaluate({"bought_usd": float(purchases.sum()), "residual_value_fraction": float(fraction)})
    return out


def lease_t_usd(purchases_t_usd: Floats, rate: float) -> Floats:
    r"""What leasing costs at t = 0 .. T in place of the purchases (:data:`LEASE`): each year, at its end, ``rate``
    times the price of everything the option would have bought by its start (the liquid retrofit is not leased).

    .. math:: L_t = \lambda \sum_{k < t} P_k \quad (t \ge 1), \qquad L_0 = 0

    100 accelerators at USD 30,000 leased at 0.3 a year: 900,000 USD at the end of each year.

    >>> [float(x) for x in lease_t_usd(np.array([3_000_000.0, 0.0, 0.0]), 0.3)]
    [0.0, 900000.0, 900000.0]
    """
    purchases = np.asarray(purchases_t_usd, dtype=float)
    leased = np.concatenate([[0.0], np.cumsum(purchases)[:-1]])
    return np.asarray(LEASE.evaluate({"leased_usd": leased, "lease_rate_per_year": float(rate)}), dtype=float)


def refresh_net_t_usd(keep_y: Floats, new_y: Floats, bought_usd: float, retrofit_usd: float, kept_years: int,
                      fraction: float) -> Floats:
    r"""Net cash flow at t = 0 .. T of keeping a fleet ``kept_years`` (N) years and then replacing it: revenue less
    opex of the kept fleet (``keep_y``) in years 1 .. N and of the new one (``new_y``) after; the new fleet bought
    (``bought_usd``, with its liquid retrofit ``retrofit_usd``) at t = N and resold at the horizon at ``fraction`` of
    its price (:data:`RESIDUAL`, :data:`NET`). N = T replaces nothing.

    .. math:: CF_t = O^{keep}_t [t \le N] + O^{new}_t [t > N] - (P + R) [t = N < T] + \phi P [t = T > N]

    Kept 1 year of 3, then 120 USD of hardware resold at 0.25 of its price:

    >>> [float(x) for x in refresh_net_t_usd(np.array([100.0] * 3), np.array([150.0] * 3), 120.0, 0.0, 1, 0.25)]
    [0.0, -20.0, 150.0, 180.0]
    """
    keep, new = np.asarray(keep_y, dtype=float), np.asarray(new_y, dtype=float)
    years = len(keep)
    ops = np.where(np.arange(1, years + 1) <= kept_years, keep, new)
    capex, residual = np.zeros(years + 1), np.zeros(years + 1)
    if kept_years < years:
        capex[kept_years] = bought_usd + retrofit_usd
        residual = residual_t_usd(np.append(bought_usd, np.zeros(years)), fraction)
    return net_t_usd(capex, ops, np.zeros(years), residual)


def retrofit_t_usd(retrofit_usd_per_hour_y: Floats, cost_of_capital: float, depreciation_years: float) -> Floats:
    r"""The liquid-cooling retrofit's capex, paid when the retrofitted power first grows: the engine charges it as an
    annuity A [USD/h], whose capex is A x 8,760 / CRF(r, n); each year pays for the growth over the year before.

    .. math:: C_y = A_y \, 8760 / CRF(r, n), \qquad R_{t} = \max(0, C_{t+1} - \max_{y \le t} C_y)

    At no interest over 10 years CRF = 0.1, so 1 USD a year of annuity is 10 USD of capex:

    >>> [round(float(x)) for x in retrofit_t_usd(np.array([1.0, 1.0, 2.0]) / 8760, 0.0, 10)]
    [10, 0, 10, 0]
    """
    crf = float(capital_recovery_factor(cost_of_capital, depreciation_years))
    annuity = np.nan_to_num(np.asarray(retrofit_usd_per_hour_y, dtype=float), nan=0.0)
    capex_y = RETROFIT.evaluate({"cooling_retrofit_usd_per_hour": annuity, "crf": crf})
    return np.append(np.diff(np.concatenate([[0.0], np.maximum.accumulate(capex_y)])), 0.0)


def revenue_terms(y: dict[str, Floats], s: Scenario) -> dict[str, Floats]:
    """The symbols :data:`REVENUE` and :data:`FAST_TIER` read, per year: the engine's revenue per day and, where the
    scenario has a fast tier, whether the option's users see its speed (the per-user speed: estimated, or the target
    at which the measured throughput was given).
    """
    n = len(y["revenue_usd_per_day"])
    terms = {"revenue_usd_per_day": np.nan_to_num(y["revenue_usd_per_day"], nan=0.0),
             "served_output_tokens_per_day": np.asarray(y["served_output_tokens_per_day"], dtype=float),
             "price_usd_per_m_output_tokens": np.full(n, float(s.price_usd_per_m_output_tokens or 0.0)),
             "fast_tier_price_multiplier": np.full(n, float(s.fast_tier_price_multiplier)),
             "at_fast_tier_speed": np.zeros(n), "token_price_index": forward_y(s.token_price_change_per_year, n)}
    threshold = s.fast_tier_min_tokens_per_s_per_user
    if threshold is not None and s.fast_tier_price_multiplier != 1.0 and s.price_usd_per_m_output_tokens is not None:
        target = s.target_output_tokens_per_s_per_user
        speed = np.nan_to_num(y["output_tokens_per_s_per_user"], nan=0.0 if target is None else float(target))
        terms["at_fast_tier_speed"] = (speed >= threshold).astype(float)
    terms["fast_tier_usd"] = np.asarray(FAST_TIER.evaluate(terms), dtype=float)
    return terms


def revenue_y_usd(y: dict[str, Floats], s: Scenario) -> Floats:
    """Revenue per year (:data:`REVENUE`); output tokens sell at the fast-tier price when the option's users see that
    speed; every price on its forward curve (``token_price_change_per_year``).
    """
    return np.asarray(REVENUE.evaluate(revenue_terms(y, s)), dtype=float)


def forgone_revenue_y_usd(revenue_y_usd: Floats, served_fraction_y: Floats) -> Floats:
    r"""The revenue the demand a capped fleet cannot serve would have brought: the tokens turned away are in the
    same mix (input, cached, output) as those served, at the same prices.

    .. math:: F_y = R_y \, (1 / f_y - 1)

    f_y the share of the year's demand served. Zero where everything is served; where nothing is (f = 0) the
    revenue per token is unknown and F is 0 with the share saying why.

    >>> [round(float(x), 9) for x in forgone_revenue_y_usd(np.array([30.0, 30.0, 0.0]), np.array([1.0, 0.75, 0.0]))]
    [0.0, 10.0, 0.0]
    """
    f = np.asarray(served_fraction_y, dtype=float)
    lost = FORGONE.evaluate({"revenue_usd": np.asarray(revenue_y_usd, dtype=float),
                             "served_fraction": np.where(f > 0, f, 1.0)})
    return np.where(f > 0, lost, 0.0)


def net_t_usd(capex_t_usd: Floats, revenue_y_usd: Floats, opex_y_usd: Floats,
              residual_t_usd: Floats | None = None) -> Floats:
    """Net cash flow at t = 0 .. T: - purchases and retrofits + revenue - opex (no revenue or opex at t = 0) + the
    resale value at the horizon (:func:`residual_t_usd`; none when not given). Years along the last axis: a table of
    draws (one row each) gives a table.

    >>> [float(x) for x in net_t_usd(np.array([100.0, 20.0, 0.0]), np.array([50.0, 60.0]), np.array([10.0, 10.0]))]
    [-100.0, 20.0, 50.0]
    """
    capex = np.asarray(capex_t_usd, dtype=float)
    zero = np.zeros((*capex.shape[:-1], 1))
    residual = np.zeros_like(capex) if residual_t_usd is None else np.asarray(residual_t_usd, dtype=float)
    return np.asarray(NET.evaluate({"revenue_usd": np.concatenate([zero, revenue_y_usd], axis=-1),
                                    "opex_usd": np.concatenate([zero, opex_y_usd], axis=-1),
                                    "capex_usd": capex, "residual_value_usd": residual}), dtype=float)


def opex_terms(y: dict[str, Floats], rent_change_per_year: float | Floats) -> dict[str, Floats]:
    """The symbols :data:`OPEX` reads, per year (draws x years for a table): the engine's numbers, its rent (0 where
    nothing is rented) and the rent's forward curve (:func:`forward_y`).
    """
    cost = np.asarray(y["cost_usd_per_year"], dtype=float)
    rent = np.nan_to_num(np.asarray(y.get("rent_usd_per_hour", np.zeros(cost.shape)), dtype=float), nan=0.0)
    return {**y, "rent_usd_per_hour": rent, "rent_index": forward_y(rent_change_per_year, cost.shape[-1])}


def opex_y_usd(y: dict[str, Floats], rent_change_per_year: float | Floats = 0.0) -> Floats:
    """Opex per year (:data:`OPEX`): the engine's yearly cost without its capital charges, its rent on the forward
    curve of ``rent_change_per_year``.
    """
    return np.asarray(OPEX.evaluate(opex_terms(y, rent_change_per_year)), dtype=float)


def levelized_usd_per_m_tokens(capex_t_usd: Floats, opex_y_usd: Floats, tokens_y: Floats, rate: float) -> float:
    """PV(capex + opex) / PV(tokens served) x 10^6, capex at t = 0 .. T and opex and tokens in years 1 .. T
    (:func:`economics.domain.finance.levelized_usd_per_m_tokens`, discounted by
    :func:`~economics.domain.finance.discount_factors`).

    >>> round(levelized_usd_per_m_tokens(np.array([100.0, 0.0]), np.array([10.0]), np.array([1e6]), 0.0), 6)
    110.0
    """
    disc_t = discount_factors(rate, np.arange(len(capex_t_usd)))
    pv_cost = float(np.sum(capex_t_usd * disc_t) + np.sum(opex_y_usd * disc_t[1:]))
    return finance_levelized(pv_cost, float(np.sum(tokens_y * disc_t[1:])))


def flow_rows(name: str, purchase_t: Floats, retrofit_t: Floats, revenue_y: Floats, opex_y: Floats, net_t: Floats,
              incremental_t: Floats, served_fraction_y: Floats, forgone_y: Floats,
              residual_t: Floats) -> list[dict[str, Any]]:
    """An option's cash flows, t = 0 (the first purchases) to the horizon: capex (purchases and the liquid retrofit,
    the retrofit also on its own), the resale value at the horizon, their difference from the status quo, and each
    year's share of the demand served with the revenue the rest would have brought.
    """
    rows = []
    for t, (value, inc) in enumerate(zip(net_t, incremental_t, strict=True)):
        rows.append({"option": name, "year": t, "capex_usd": float(purchase_t[t] + retrofit_t[t]),
                     "retrofit_capex_usd": float(retrofit_t[t]),
                     "revenue_usd": 0.0 if t == 0 else float(revenue_y[t - 1]),
                     "opex_usd": 0.0 if t == 0 else float(opex_y[t - 1]),
                     "residual_value_usd": float(residual_t[t]), "net_usd": float(value),
                     "vs_status_quo_usd": float(inc),
                     "served_share": None if t == 0 or not np.isfinite(served_fraction_y[t - 1])
                     else float(served_fraction_y[t - 1]),
                     "forgone_revenue_usd": 0.0 if t == 0 else float(forgone_y[t - 1])})
    return rows
