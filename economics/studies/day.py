"""The day hour by hour: the demand, the fleet's draw at the facility, the price of each hour's energy and the
grid's carbon in it, for one scenario.

The figures come from the engine's own hourly formulas (:data:`economics.domain.cost.FACILITY_KW_BY_HOUR`, for the
decode pool bound to its columns), evaluated on the scenario's working columns: the day's energy cost and
operational emissions the engine reports are these hours summed (:data:`economics.domain.cost.ENERGY_BY_HOUR`,
:data:`economics.domain.carbon.OPERATIONAL_BY_HOUR`). A flat price or intensity is the same figure in every hour.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics.domain.cost import DECODE_FACILITY_KW_BY_HOUR, FACILITY_KW_BY_HOUR
from economics.domain.formula import G_PER_KG
from economics.engine.batch import resolve_scenario
from economics.engine.hours import hourly_columns
from economics.engine.pipeline import working_columns
from economics.schema.day_profiles import HOURS
from economics.schema.scenario import Scenario

COLUMNS = ("hour", "demand_x_average", "facility_kw", "usd_per_kwh", "energy_usd", "g_per_kwh", "kgco2e")
"""The table's columns: hour 0..23, the demand as a multiple of the day's average, the draw at the facility [kW],
the hour's price [USD/kWh], the energy it buys [USD], the grid's intensity [gCO2e/kWh] and the emissions [kgCO2e]."""


def hours_table(scenario: Scenario | dict[str, Any]) -> pd.DataFrame:
    """The 24 hours of one scenario's day (:data:`COLUMNS`).

    ``energy_usd`` is 0 where the energy is in the rent (a rented fleet with ``rent_includes_energy``), and
    ``g_per_kwh``/``kgco2e`` are NaN where no grid intensity is given. Raises
    :class:`~economics.engine.batch.ScenarioError` for an invalid scenario, as the engine does.

    >>> t = hours_table({"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000,
    ...                  "electricity_usd_per_kwh": 0.1, "grid_carbon_g_per_kwh": 400})
    >>> len(t), round(float(t["usd_per_kwh"].iloc[0]), 3), round(float(t["g_per_kwh"].iloc[23]), 1)
    (24, 0.1, 400.0)
    """
    x = working_columns(resolve_scenario(scenario))
    v = dict(x.v)
    if "demand_share_by_hour" not in v:  # a flat day: the engine had no need of the hours
        hourly_columns(v, 1)
    kw = np.broadcast_to(FACILITY_KW_BY_HOUR.evaluate(v), (HOURS, 1))[:, 0].astype(float)
    if bool(x.dis[0]):
        kw = kw + np.broadcast_to(DECODE_FACILITY_KW_BY_HOUR.evaluate(v), (HOURS, 1))[:, 0]
    price = np.broadcast_to(v["electricity_usd_per_kwh_by_hour"], (HOURS, 1))[:, 0].astype(float)
    has_carbon = bool(x.has_carbon[0])
    grid = np.broadcast_to(v["grid_carbon_g_per_kwh_by_hour"], (HOURS, 1))[:, 0].astype(float) if has_carbon \
        else np.full(HOURS, np.nan)
    return pd.DataFrame({
        "hour": np.arange(HOURS),
        "demand_x_average": np.broadcast_to(v["demand_share_by_hour"], (HOURS, 1))[:, 0].astype(float),
        "facility_kw": kw,
        "usd_per_kwh": price,
        "energy_usd": kw * price if bool(x.pays_energy[0]) else np.zeros(HOURS),  # one hour's kWh x its price
        "g_per_kwh": grid,
        "kgco2e": kw * grid / G_PER_KG,
    }, columns=list(COLUMNS))
