"""A plan's emissions, pool by pool: operational (each clock hour's draw at that hour's grid intensity) and
embodied (the systems held, their footprint spread over the hardware's life), with the domain's carbon formulas
(:mod:`economics.domain.carbon`) for the year, the tokens and the price.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from economics.domain import carbon
from economics.domain.formula import G_PER_KG, HOURS_PER_DAY
from economics.studies.planner.inputs import Workload
from economics.studies.planner.pools import Costs, Pool


def pool_kgco2e_per_day(n: np.ndarray, f: np.ndarray, inverse: np.ndarray, pool: Pool, k: Costs,
                        wl: Workload) -> tuple[float, float]:
    r"""(operational, embodied) emissions of one pool in a day [kgCO2e/day]; operational NaN when the scenario
    gives no grid intensity.

    .. math:: E_{op} = \sum_h (n_h P_{idle} + f_h / c \cdot P_{busy} \cdot s) \cdot I_h / 1000, \quad
              E_{emb} = \sum_h n_h \cdot e_h

    ``n``, ``f``: systems and flow (flow units/s) of each hour type; ``inverse``: the type of each clock hour;
    ``P_idle``, ``P_busy``: a system's idle draw and its draw above idle at full load, x PUE [kW]; ``c``: a
    system's full-load flow; ``s``: the workload's energy scale; ``e_h``: embodied kgCO2e per system-hour.
    """
    g = wl.day.g_per_kwh if wl.day is not None else np.full(len(inverse), np.nan)
    n_h, f_h = n[inverse], f[inverse]
    kwh = n_h * k.idle_kw + f_h / pool.raw_capacity * k.busy_kw * wl.energy_scale  # each clock hour's kWh
    operational = float(np.sum(kwh * g)) / G_PER_KG if not np.isnan(g).any() else math.nan
    return operational, float(np.sum(n_h)) * k.embodied_kg_per_hour


def footprint_summary(operational: list[float], embodied: list[float], tokens_day: float,
                      carbon_usd_per_tonne: float) -> dict[str, Any]:
    """The plan's emissions for its summary: per day, per year, per M tokens and their cost at the carbon price
    (in the plan's cost already). Without a grid intensity only the embodied figure is given (the rest None).
    """
    op = float(np.sum(operational)) if operational and not np.isnan(operational).any() else math.nan
    emb = float(np.sum(embodied))
    total = emb + (0.0 if math.isnan(op) else op)
    v = {"kgco2e_per_day": total, "operational_kgco2e_per_day": op, "embodied_kgco2e_per_day": emb,
         "served_input_tokens_per_day": tokens_day, "served_output_tokens_per_day": 0.0,
         "carbon_usd_per_tonne": carbon_usd_per_tonne}
    per_m = float(carbon.PER_M.evaluate(v)) if tokens_day > 0 else math.nan
    known = not math.isnan(op)  # without the grid's intensity the footprint is not known: only its embodied part
    return {"operational_kgco2e_per_day": op if known else None, "embodied_kgco2e_per_day": emb,
            "kgco2e_per_day": total if known else None,
            "tco2e_per_year": float(carbon.PER_YEAR.evaluate(v)) if known else None,
            "kgco2e_per_m_tokens": None if math.isnan(per_m) or not known else per_m,
            "carbon_usd_per_day": float(carbon.COST.evaluate(v)) * HOURS_PER_DAY}
