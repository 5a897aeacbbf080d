"""Emissions of a fleet: operational (the grid's carbon in the energy drawn) and embodied (manufacturing, spread
over the hardware's life), per day, per million tokens and per year, and their cost at a carbon price.

Operational emissions follow the facility energy, IT power x PUE, at the grid's intensity: the annual average, or
hour by hour where an hourly profile is given, weighted by the power drawn in each hour (the demand over the day
sets it). Embodied emissions are the product carbon footprint per accelerator (its share of the system included)
spread evenly over ``depreciation_years``: a rented accelerator carries its share of the hours it is held.

References: GHG Protocol Scope 2 Guidance (2015), location-based method (grid average emission factors);
GHG Protocol Product Life Cycle Standard (2011) for product carbon footprints.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.cost import DECODE_FACILITY_KW_BY_HOUR, FACILITY_KW_BY_HOUR
from economics.domain.formula import DAYS_PER_YEAR, G_PER_KG, HOURS_PER_DAY, KG_PER_TONNE, Formula


def operational_kgco2e_per_day(average_it_power_kw: ArrayLike, pue: ArrayLike,
                               grid_carbon_g_per_kwh: ArrayLike) -> NDArray[np.float64]:
    r"""Emissions of the energy a fleet draws in a day at a constant grid intensity.

    .. math:: E_{op} = \bar P_{IT} \cdot PUE \cdot 24 \cdot I / 1000

    Parameters
    ----------
    average_it_power_kw : average IT draw of the fleet [kW]
    pue : facility power / IT power [-]
    grid_carbon_g_per_kwh : grid intensity, location-based [gCO2e/kWh]

    Returns
    -------
    [kgCO2e/day]

    >>> round(float(operational_kgco2e_per_day(100.0, 1.5, 400.0)), 6)
    1440.0
    """
    return (np.asarray(average_it_power_kw, dtype=float) * np.asarray(pue, dtype=float) * HOURS_PER_DAY
            * np.asarray(grid_carbon_g_per_kwh, dtype=float) / G_PER_KG)


def embodied_kgco2e_per_day(accelerators: ArrayLike, embodied_kgco2e_per_accelerator: ArrayLike,
                            life_years: ArrayLike) -> NDArray[np.float64]:
    r"""Manufacturing emissions of a fleet spread evenly over its life.

    .. math:: E_{emb} = N \cdot e / (n \cdot 365)

    Parameters
    ----------
    accelerators : [accelerator]
    embodied_kgco2e_per_accelerator : product carbon footprint per accelerator incl. its system share [kgCO2e]
    life_years : years the footprint is spread over (the depreciation life) [year]

    >>> round(float(embodied_kgco2e_per_day(8, 3650.0, 5)), 6)
    16.0
    """
    return (np.asarray(accelerators, dtype=float) * np.asarray(embodied_kgco2e_per_accelerator, dtype=float)
            / (np.asarray(life_years, dtype=float) * DAYS_PER_YEAR))


def carbon_usd_per_hour(kgco2e_per_day: ArrayLike, carbon_usd_per_tonne: ArrayLike) -> NDArray[np.float64]:
    r"""The cost of a day's emissions at a carbon price, per hour.

    .. math:: C_{CO_2} = E \cdot p_{CO_2} / 1000 / 24

    >>> round(float(carbon_usd_per_hour(2400.0, 100.0)), 6)
    10.0
    """
    return np.asarray(kgco2e_per_day, dtype=float) * np.asarray(carbon_usd_per_tonne, dtype=float) / (
        KG_PER_TONNE * HOURS_PER_DAY)


# --- as formulas over a pool's columns (economics.domain.formula), written once ---
F = Formula
OPERATIONAL = F("operational_kgco2e_per_day", "kgCO2e/day",
                "average_it_power_kw * pue_effective * HOURS_PER_DAY * grid_carbon_g_per_kwh / G_PER_KG",
                note="the facility energy at the grid's annual average intensity")
OPERATIONAL_BY_HOUR = F(
    "operational_kgco2e_per_day", "kgCO2e/day",
    f"hours_sum({FACILITY_KW_BY_HOUR.expression} * grid_carbon_g_per_kwh_by_hour) / G_PER_KG",
    note="hour by hour: each hour's draw at that hour's intensity")
OPERATIONAL_BY_HOUR_TWO_POOLS = F(
    "operational_kgco2e_per_day", "kgCO2e/day",
    f"hours_sum(({FACILITY_KW_BY_HOUR.expression} + {DECODE_FACILITY_KW_BY_HOUR.expression})"
    " * grid_carbon_g_per_kwh_by_hour) / G_PER_KG",
    note="hour by hour, both pools: each hour's draw at that hour's intensity")
INTENSITY_EFFECTIVE = F("grid_carbon_g_per_kwh_effective", "gCO2e/kWh",
                        "operational_kgco2e_per_day * G_PER_KG / (average_it_power_kw * pue_effective"
                        " * HOURS_PER_DAY)", note="the intensity of the energy drawn, weighted by the hours' draw")
EMBODIED = F("embodied_kgco2e_per_day", "kgCO2e/day",
             "accelerators * embodied_kgco2e_per_accelerator / (depreciation_years * DAYS_PER_YEAR)",
             note="the product carbon footprint spread over the hardware's life")
EMBODIED_TWO_POOLS = F("embodied_kgco2e_per_day", "kgCO2e/day",
                       "(accelerators * embodied_kgco2e_per_accelerator + decode_accelerators"
                       " * decode_embodied_kgco2e_per_accelerator) / (depreciation_years * DAYS_PER_YEAR)",
                       note="both pools' footprints spread over the hardware's life")
FOOTPRINT = F("kgco2e_per_day", "kgCO2e/day", "operational_kgco2e_per_day + embodied_kgco2e_per_day")
FOOTPRINT_OPERATIONAL_ONLY = F("kgco2e_per_day", "kgCO2e/day", "operational_kgco2e_per_day",
                               note="no embodied figure for this hardware: operational emissions only")
PER_YEAR = F("tco2e_per_year", "tCO2e/year", "kgco2e_per_day * DAYS_PER_YEAR / KG_PER_TONNE")
OPERATIONAL_PER_M = F("operational_kgco2e_per_m_tokens", "kgCO2e/M token",
                      "operational_kgco2e_per_day / (served_input_tokens_per_day + served_output_tokens_per_day)"
                      " * TOKENS_PER_M")
EMBODIED_PER_M = F("embodied_kgco2e_per_m_tokens", "kgCO2e/M token",
                   "embodied_kgco2e_per_day / (served_input_tokens_per_day + served_output_tokens_per_day)"
                   " * TOKENS_PER_M")
PER_M = F("kgco2e_per_m_tokens", "kgCO2e/M token",
          "kgco2e_per_day / (served_input_tokens_per_day + served_output_tokens_per_day) * TOKENS_PER_M")
COST = F("carbon_usd_per_hour", "USD/h", "kgco2e_per_day * carbon_usd_per_tonne / KG_PER_TONNE / HOURS_PER_DAY",
         note="the footprint (operational and embodied) at the carbon price")
NO_COST = F("carbon_usd_per_hour", "USD/h", "0", note="no carbon price, or no grid carbon figure to price")
MARGINAL_PRICE = F("load_following_usd_per_kwh", "USD/kWh",
                   "hours_sum(demand_share_by_hour * (energy_paid * electricity_usd_per_kwh_by_hour"
                   " + carbon_usd_per_tonne * grid_carbon_g_per_kwh_by_hour / G_PER_KG / KG_PER_TONNE))"
                   " / HOURS_PER_DAY",
                   note="what a kWh more costs when the load grows: the hours' prices (and carbon) weighted by demand")
