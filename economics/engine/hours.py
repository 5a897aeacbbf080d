"""The hourly columns of the rows that need them: demand shares, electricity prices and grid intensities by hour.

Built from the validated texts (a tariff id or 24 prices, a demand profile, 24 intensities) once per distinct text,
as arrays of shape (24, rows) that broadcast with the engine's ordinary columns (:mod:`economics.domain.formula`).
A row with a flat price or intensity gets that figure in every hour, so the hour-by-hour formulas reduce to the
flat ones for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.schema.day_profiles import HOURS, demand_profile, hour_values


def _by_distinct(keys: list[Any], build: Any, n: int) -> np.ndarray:
    """(24, n): ``build(key)`` for each distinct key, placed at the rows holding it."""
    codes, uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
    table = np.stack([build(k) for k in uniques], axis=1) if len(uniques) else np.zeros((HOURS, 0))
    return table[:, codes] if n else np.zeros((HOURS, 0))


def _flat_or(texts: Any, flat: Any, n: int, parse: Any) -> np.ndarray:
    texts = np.broadcast_to(np.asarray(texts, dtype=object), (n,))
    flat = np.broadcast_to(np.asarray(flat, dtype=float), (n,))
    keys = [t if t else float(f) for t, f in zip(texts.tolist(), flat.tolist(), strict=True)]
    return _by_distinct(keys, lambda k: np.full(HOURS, k) if isinstance(k, float) else parse(k), n)


def tariff_prices(text: str) -> np.ndarray:
    """The 24 prices of a tariff id (data/electricity_tariffs.csv) or of 24 numbers [USD/kWh].

    >>> tariff_prices("sce-tou-8-d-summer")[[15, 16, 20, 21]].tolist()
    [0.0899, 0.1285, 0.1285, 0.0899]
    """
    table = catalog.electricity_tariffs()
    if text in table.index:
        return hour_values("electricity_tariff", str(table.loc[text, "usd_per_kwh_by_hour"]))
    return hour_values("electricity_tariff", text)


def hourly_columns(v: dict[str, Any], n: int) -> None:
    """Add ``demand_share_by_hour``, ``electricity_usd_per_kwh_by_hour``, ``grid_carbon_g_per_kwh_by_hour`` to ``v``."""
    profile = np.broadcast_to(np.asarray(v["demand_profile"], dtype=object), (n,))
    p2a = np.broadcast_to(np.asarray(v["peak_to_average"], dtype=float), (n,))
    keys = [(str(t) or "flat", float(p) if str(t).lower() == "diurnal" else 0.0)
            for t, p in zip(profile.tolist(), p2a.tolist(), strict=True)]
    v["demand_share_by_hour"] = _by_distinct(keys, lambda k: demand_profile(k[0], k[1] or 2.0), n)
    v["electricity_usd_per_kwh_by_hour"] = _flat_or(v["electricity_tariff"], v["electricity_usd_per_kwh"], n,
                                                    tariff_prices)
    carbon = np.nan_to_num(np.asarray(v["grid_carbon_g_per_kwh"], dtype=float))
    v["grid_carbon_g_per_kwh_by_hour"] = _flat_or(v["grid_carbon_by_hour"], carbon, n,
                                                  lambda t: hour_values("grid_carbon_by_hour", t))
