"""Hourly cost of one accelerator, owned or rented, split into its parts.

Every function is per accelerator and per hour; multiply by the fleet size for the fleet. Inputs are floats or
numpy arrays (broadcast). Power figures are IT power *including the accelerator's share of its server*. Each function
evaluates its pool formula below (:data:`CAPITAL`, :data:`ENERGY`, ...) for one accelerator: the rule is written once.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.finance import capital_recovery_factor
from economics.domain.formula import Formula


def average_power_kw(
    power_kw: ArrayLike, utilization: ArrayLike, idle_power_fraction: ArrayLike
) -> NDArray[np.float64]:
    r"""Average IT draw of an accelerator that is busy a share ``utilization`` of the time.

    .. math:: \bar P = P_{max} (f_{idle} + (1 - f_{idle}) u)

    Linear between idle draw and full draw, the usual first-order server power model.

    Parameters
    ----------
    power_kw : full-load IT power per accelerator incl. server share [kW]
    utilization : busy share of the time [fraction, 0..1]
    idle_power_fraction : idle draw as a share of full draw [fraction, 0..1]

    References: Fan, Weber & Barroso, "Power provisioning for a warehouse-sized computer", ISCA 2007
    (linear utilization-to-power model).

    >>> round(float(average_power_kw(1.2, 0.5, 0.3)), 6)
    0.78
    """
    return _per_accelerator(AVERAGE_POWER, accelerator_power_kw=power_kw, utilization=utilization,
                            idle_power_fraction=idle_power_fraction)


def energy_usd_per_hour(
    average_power_kw: ArrayLike, pue: ArrayLike, electricity_usd_per_kwh: ArrayLike
) -> NDArray[np.float64]:
    r"""Electricity bill for one hour, facility overhead included through PUE.

    .. math:: C_E = \bar P \cdot PUE \cdot p_{kWh}

    Parameters
    ----------
    average_power_kw : average IT draw [kW]
    pue : power usage effectiveness, facility power / IT power [-], >= 1
    electricity_usd_per_kwh : energy price [USD/kWh]

    >>> round(float(energy_usd_per_hour(0.78, 1.5, 0.08)), 4)
    0.0936
    """
    return _per_accelerator(ENERGY, average_power_kw=average_power_kw, pue_effective=pue,
                            electricity_usd_per_kwh=electricity_usd_per_kwh)


def facility_usd_per_hour(
    power_kw: ArrayLike,
    colocation_usd_per_kw_month: ArrayLike,
    facility_capex_usd_per_kw: ArrayLike,
    cost_of_capital: ArrayLike,
    facility_depreciation_years: ArrayLike,
) -> NDArray[np.float64]:
    r"""Space, power delivery and cooling infrastructure, charged on *provisioned* (full-load) IT kW.

    .. math:: C_F = P_{max} (c_{colo} \cdot 12 / 8760 + k_{fac} \cdot CRF(r, n_{fac}) / 8760)

    Colocation is rented per provisioned kW whether it is used or not; an owned facility is its build cost per kW
    repaid as an annuity. Either term may be zero.

    Parameters
    ----------
    power_kw : provisioned IT power per accelerator incl. server share [kW]
    colocation_usd_per_kw_month : colocation rent [USD/(kW month)]
    facility_capex_usd_per_kw : own-facility build cost [USD/kW]
    cost_of_capital : [1/year]
    facility_depreciation_years : facility amortisation period [year]

    >>> round(float(facility_usd_per_hour(1.0, 146.0, 0.0, 0.08, 15)), 4)
    0.2
    """
    return _per_accelerator(FACILITY, accelerator_power_kw=power_kw,
                            colocation_usd_per_kw_month=colocation_usd_per_kw_month,
                            facility_capex_usd_per_kw=facility_capex_usd_per_kw,
                            facility_crf=capital_recovery_factor(cost_of_capital, facility_depreciation_years))


def operations_usd_per_hour(
    accelerator_price_usd: ArrayLike,
    maintenance_fraction_per_year: ArrayLike,
    software_usd_per_accelerator_year: ArrayLike,
) -> NDArray[np.float64]:
    r"""Hardware support and software licences of one accelerator.

    .. math:: C_O = (capex \cdot m + s) / 8760

    Parameters
    ----------
    accelerator_price_usd : capex per accelerator incl. server share [USD]
    maintenance_fraction_per_year : support contract as share of capex [1/year]
    software_usd_per_accelerator_year : licences [USD/year]

    >>> round(float(operations_usd_per_hour(30000, 0.05, 0)), 4)
    0.1712
    """
    return _per_accelerator(OPERATIONS, accelerator_price_usd=accelerator_price_usd,
                            maintenance_fraction_per_year=maintenance_fraction_per_year,
                            software_usd_per_accelerator_year=software_usd_per_accelerator_year)


def capital_usd_per_hour(
    accelerator_price_usd: ArrayLike, cost_of_capital: ArrayLike, depreciation_years: ArrayLike
) -> NDArray[np.float64]:
    r"""Hourly capital charge of an owned accelerator: its price repaid as an annuity over its depreciation life.

    .. math:: C_K = capex \cdot CRF(r, n) / 8760

    >>> round(float(capital_usd_per_hour(30000, 0.08, 5)), 3)
    0.858
    """
    return _per_accelerator(CAPITAL, accelerator_price_usd=accelerator_price_usd,
                            crf=capital_recovery_factor(cost_of_capital, depreciation_years))


def _per_accelerator(formula: Formula, **values: ArrayLike) -> NDArray[np.float64]:
    """``formula`` (the engine's, written for a pool) for one accelerator: the functions above evaluate the same
    formula the engine evaluates and ``explain`` renders, so the planner's costs and the engine's have one definition.
    """
    arrays = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    return np.asarray(formula.evaluate({"accelerators": 1.0, **arrays}), dtype=float)


# --- the cost of one pool as formulas (economics.domain.formula), written once and bound to each pool's columns ---
F = Formula
AVERAGE_POWER = F("average_power_kw", "kW",
                  "accelerator_power_kw * (idle_power_fraction + (1 - idle_power_fraction) * utilization)",
                  note="average draw between idle and full by load")
CAPITAL = F("capital_usd_per_hour", "USD/h", "accelerators * accelerator_price_usd * crf / HOURS_PER_YEAR")
ENERGY = F("energy_usd_per_hour", "USD/h",
           "accelerators * average_power_kw * pue_effective * electricity_usd_per_kwh")
POWER_SHARE_BY_HOUR = ("(idle_power_fraction + (1 - idle_power_fraction)"
                       " * min(1, utilization * demand_share_by_hour))")
"""Each hour's draw over full load: :data:`AVERAGE_POWER`'s linear model at the hour's busy share, the pool's
average utilization shaped by the demand over the day (capped at 1)."""
FACILITY_KW_BY_HOUR = F("facility_kw_by_hour", "kW",
                        f"accelerators * accelerator_power_kw * pue_effective * {POWER_SHARE_BY_HOUR}",
                        note="the pool's draw at the facility in each hour of the day")
ENERGY_BY_HOUR = F("energy_usd_per_hour", "USD/h",
                   f"hours_sum({FACILITY_KW_BY_HOUR.expression} * electricity_usd_per_kwh_by_hour) / HOURS_PER_DAY",
                   note="hour by hour: each hour's draw (the demand over the day) at that hour's price")
ELECTRICITY_EFFECTIVE = F("electricity_usd_per_kwh_effective", "USD/kWh",
                          "energy_usd_per_hour / (average_it_power_kw * pue_effective)",
                          note="the price of the energy drawn, weighted by the hours' draw")
FACILITY = F("facility_usd_per_hour", "USD/h",
             "accelerators * accelerator_power_kw * (colocation_usd_per_kw_month * MONTHS_PER_YEAR / HOURS_PER_YEAR"
             " + facility_capex_usd_per_kw * facility_crf / HOURS_PER_YEAR)",
             note="per provisioned IT kW: colocation, plus own-facility capex amortised")
OPERATIONS = F("operations_usd_per_hour", "USD/h",
               "accelerators * (accelerator_price_usd * maintenance_fraction_per_year"
               " + software_usd_per_accelerator_year) / HOURS_PER_YEAR")
RENT = F("rent_usd_per_hour", "USD/h", "accelerators * rent_usd_per_accelerator_hour")
NO_CAPITAL = F("capital_usd_per_hour", "USD/h", "0", note="rented: the rent pays for the hardware")
NO_FACILITY = F("facility_usd_per_hour", "USD/h", "0", note="rented: the provider's facility is in the rent")
NO_OPERATIONS = F("operations_usd_per_hour", "USD/h", "0",
                  note="rented: the provider's maintenance and software are in the rent")
NO_ENERGY = F("energy_usd_per_hour", "USD/h", "0", note="rented with energy included: the rent pays the electricity")
NO_RENT = F("rent_usd_per_hour", "USD/h", "0", note="owned: no rent")
POOL_OWNED = F("pool_cost_usd_per_hour", "USD/h",
               "capital_usd_per_hour + energy_usd_per_hour + facility_usd_per_hour + operations_usd_per_hour")
POOL_RENTED = F("pool_cost_usd_per_hour", "USD/h", "rent_usd_per_hour + energy_usd_per_hour",
                note="rented; energy paid on top of the rent")
POOL_RENTED_WITH_ENERGY = F("pool_cost_usd_per_hour", "USD/h", "rent_usd_per_hour", note="rent includes energy")
TWO_POOL_TOTALS = tuple(
    F(part, "USD/h", f"prefill_{part} + decode_{part}", note="prefill pool + decode pool")
    for part in ("capital_usd_per_hour", "energy_usd_per_hour", "facility_usd_per_hour", "operations_usd_per_hour",
                 "rent_usd_per_hour"))
POOL_PARTS = ("average_power_kw", "capital_usd_per_hour", "energy_usd_per_hour", "facility_usd_per_hour",
              "operations_usd_per_hour", "rent_usd_per_hour", "pool_cost_usd_per_hour")
"""The columns a pool's cost writes (before binding)."""


def bind_pool(formula: Formula, pool: str) -> Formula:
    """``formula`` bound to a pool's columns: ``pool=''`` is the main pool (prefill, or aggregated);
    ``'prefill'`` names the main pool's parts ``prefill_...``; ``'decode'`` reads the decode pool's hardware.

    >>> bind_pool(CAPITAL, "decode").symbolic()
    'decode_accelerators x decode_accelerator_price_usd x crf / 8,760 h/year'
    """
    if not pool:
        return formula
    names = {p: f"{pool}_{p}" for p in POOL_PARTS}
    if pool == "decode":
        names |= {s: f"decode_{s}" for s in ("accelerators", "accelerator_price_usd", "accelerator_power_kw",
                                               "rent_usd_per_accelerator_hour", "utilization",
                                               "reserved_rent_usd_per_accelerator_hour",
                                               "spot_rent_usd_per_accelerator_hour")}
    return formula.bind(names.get(formula.name, formula.name), **names)


DECODE_FACILITY_KW_BY_HOUR = bind_pool(FACILITY_KW_BY_HOUR, "decode").bind("decode_facility_kw_by_hour")
"""The decode pool's draw at the facility in each hour (its own accelerators, power and utilization)."""
