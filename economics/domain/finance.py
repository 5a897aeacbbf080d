"""Time value of money: capital recovery, net present value, internal rate of return, payback.

All functions take floats or numpy arrays and broadcast. Rates are fractions per year (0.08, not 8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy_financial as npf
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import HOURS_PER_YEAR, Formula

"""Hours in a (non-leap) year [h/year]; the cost model charges every hour of every year."""


def capital_recovery_factor(rate: ArrayLike, years: ArrayLike) -> NDArray[np.float64]:
    """Share of an investment to pay back each year so it is repaid with interest over its life.

    .. math:: CRF = r / (1 - (1 + r)^{-n}),  and  1 / n  when  r = 0

    Parameters
    ----------
    rate : float or array
        Annual cost of capital [1/year, fraction], > -1.
    years : float or array
        Amortisation period [year], > 0.

    Returns
    -------
    Annual payment per unit of investment [1/year].

    Special cases: r = 0 gives straight-line 1/n (the limit of the formula). Very small |r| uses the
    limit too, to avoid cancellation in 1 - (1 + r)^-n.

    References: any engineering-economics text (e.g. Blank & Tarquin, *Engineering Economy*, "A/P factor");
    the same quantity as PyPSA's ``annuity``.

    >>> round(float(capital_recovery_factor(0.08, 5)), 6)
    0.250456
    >>> float(capital_recovery_factor(0.0, 4))
    0.25
    """
    r = np.asarray(rate, dtype=float)
    n = np.asarray(years, dtype=float)
    if r.size > 1 and n.shape == r.shape and (r == r.flat[0]).all() and (n == n.flat[0]).all():
        # a column of one rate and one life (the usual batch): compute once
        return np.full(r.shape, float(capital_recovery_factor(r.flat[0], n.flat[0])))
    # the engine's formulas (CRF, CRF_STRAIGHT_LINE below): one definition for the engine and for this function
    values = {"cost_of_capital": np.where(straight_line(r), 1.0, r), "depreciation_years": n}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(np.where(straight_line(r), CRF_STRAIGHT_LINE.evaluate(values), CRF.evaluate(values)),
                          dtype=float)


STRAIGHT_LINE_BELOW = 1e-6
"""Below this cost of capital [1/year] the straight line 1/n is used: the closed form loses about 1e-16 / r of its
relative precision to cancellation, while 1/n differs from it by about r (n + 1) / 2 (under 2e-5 for 30 years)."""


def straight_line(rate: ArrayLike) -> NDArray[np.bool_]:
    """Rows whose cost of capital is small enough for the straight line (see :data:`STRAIGHT_LINE_BELOW`).

    >>> straight_line(np.array([0.0, 1e-7, 0.08])).tolist()
    [True, True, False]
    """
    return np.abs(np.asarray(rate, dtype=float)) < STRAIGHT_LINE_BELOW


def annualized_cost_usd_per_hour(capex_usd: ArrayLike, rate: ArrayLike, years: ArrayLike) -> NDArray[np.float64]:
    r"""Hourly capital charge of an investment repaid as an annuity.

    .. math:: C_h = capex \cdot CRF(r, n) / 8760

    Parameters
    ----------
    capex_usd : float or array -- investment [USD]
    rate : float or array -- annual cost of capital [1/year]
    years : float or array -- amortisation period [year]

    Returns the charge [USD/h].

    >>> round(float(annualized_cost_usd_per_hour(30000, 0.08, 5)), 4)
    0.8577
    """
    return np.asarray(capex_usd, dtype=float) * capital_recovery_factor(rate, years) / HOURS_PER_YEAR


def npv_usd(rate: float, cash_flows_usd: Sequence[float] | NDArray[np.float64]) -> float:
    r"""Net present value of yearly cash flows, the first at year 0 (undiscounted).

    .. math:: NPV = \sum_{t=0}^{T} CF_t / (1 + r)^t

    Parameters
    ----------
    rate : annual discount rate [1/year]
    cash_flows_usd : cash flow of each year, year 0 first [USD]

    Uses ``numpy_financial.npv`` (year-0 flow undiscounted).

    >>> round(npv_usd(0.10, [-100.0, 60.0, 60.0]), 4)
    4.1322
    """
    return float(npf.npv(rate, np.asarray(cash_flows_usd, dtype=float)))


def irr(cash_flows_usd: Sequence[float] | NDArray[np.float64]) -> float | None:
    """Internal rate of return: the rate at which the NPV of the cash flows is zero.

    Parameters
    ----------
    cash_flows_usd : yearly cash flows, year 0 first [USD]

    Returns the rate [1/year], or None when it does not exist (no sign change, or no real root):
    an undefined IRR is reported as missing, never as NaN.

    Uses ``numpy_financial.irr`` rather than a hand-rolled root finder.

    >>> round(irr([-100.0, 60.0, 60.0]), 6)
    0.130662
    >>> irr([100.0, 10.0]) is None
    True
    """
    flows = np.asarray(cash_flows_usd, dtype=float)
    if not (np.any(flows > 0) and np.any(flows < 0)):
        return None
    value = float(npf.irr(flows))
    return value if np.isfinite(value) else None


def payback_years(cash_flows_usd: Sequence[float] | NDArray[np.float64]) -> float | None:
    """Time until the cumulative (undiscounted) cash flow turns non-negative, interpolated within the year.

    Cash flows are yearly, year 0 first, and assumed to accrue evenly within each year after year 0.

    Returns years (0 when year 0 is already non-negative), or None when it never pays back within the flows.

    >>> round(payback_years([-100.0, 60.0, 60.0]), 6)
    1.666667
    >>> payback_years([-100.0, 10.0]) is None
    True
    """
    flows = np.asarray(cash_flows_usd, dtype=float)
    cumulative = np.cumsum(flows)
    if cumulative[0] >= 0:
        return 0.0
    after = np.nonzero(cumulative >= 0)[0]
    if after.size == 0:
        return None
    t = int(after[0])
    before = cumulative[t - 1]
    return (t - 1) + float(-before / flows[t])


# --- the same definitions as formulas the engine evaluates and `explain` renders (economics.domain.formula) ---
CRF = Formula("crf", "1/year", "cost_of_capital / (1 - (1 + cost_of_capital) ** -depreciation_years)",
              note="capital recovery factor CRF(r, n) = r / (1 - (1 + r)^-n)")
CRF_STRAIGHT_LINE = Formula("crf", "1/year", "1 / depreciation_years",
                            note="cost of capital (about) 0: straight line")
FACILITY_CRF = CRF.bind("facility_crf", depreciation_years="facility_depreciation_years")
FACILITY_CRF_STRAIGHT_LINE = CRF_STRAIGHT_LINE.bind("facility_crf", depreciation_years="facility_depreciation_years")


# --- a horizon's years: demand growth, discounting and the levelized cost (the planner and the retrofit study) ---
GROWTH = Formula("demand_growth_factor", "-", "(1 + demand_growth_per_year) ** (year - 1)",
                 note="a year's demand over the first year's (year 1 = the first)")
DISCOUNT = Formula("discount_factor", "-", "(1 + cost_of_capital) ** -year",
                   note="present value of 1 USD paid at the end of a year (year 0 = now)")
LEVELIZED = Formula("levelized_cost_usd_per_m_tokens", "USD/M token", "pv_cost_usd / pv_tokens * TOKENS_PER_M",
                    note="present value of the costs over the present value of the tokens served")


def growth_factors(growth_per_year: ArrayLike, years: ArrayLike) -> NDArray[np.float64]:
    r"""Demand in each year over the first year's demand (:data:`GROWTH`).

    .. math:: g_y = (1 + g)^{y - 1}

    Parameters
    ----------
    growth_per_year : g, the demand's growth [1/year]
    years : y, 1 for the first year

    >>> growth_factors(0.5, [1, 2, 3]).tolist()
    [1.0, 1.5, 2.25]
    """
    return np.asarray(GROWTH.evaluate({"demand_growth_per_year": np.asarray(growth_per_year, dtype=float),
                                       "year": np.asarray(years, dtype=float)}), dtype=float)


def discount_factors(rate: ArrayLike, years: ArrayLike) -> NDArray[np.float64]:
    r"""Present value of one USD paid in each year (:data:`DISCOUNT`).

    .. math:: d_t = (1 + r)^{-t}

    Parameters
    ----------
    rate : r, the cost of capital [1/year]
    years : t, 0 for now

    >>> discount_factors(0.25, [0, 1, 2]).tolist()
    [1.0, 0.8, 0.64]
    """
    return np.asarray(DISCOUNT.evaluate({"cost_of_capital": np.asarray(rate, dtype=float),
                                         "year": np.asarray(years, dtype=float)}), dtype=float)


def levelized_usd_per_m_tokens(pv_cost_usd: float, pv_tokens: float) -> float:
    r"""The levelized cost of a million tokens (:data:`LEVELIZED`): what the costs' present value buys of the tokens'
    present value.

    .. math:: LC = PV(C) / PV(T) \cdot 10^6

    >>> levelized_usd_per_m_tokens(110.0, 1e6)
    110.0
    """
    return float(LEVELIZED.evaluate({"pv_cost_usd": pv_cost_usd, "pv_tokens": pv_tokens}))
