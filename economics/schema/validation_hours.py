"""Validation of the fields that hold a day's hours: ``demand_profile``, ``electricity_tariff``, ``grid_region``
and ``grid_carbon_by_hour``.

Each distinct text is read once (a million rows usually hold a handful of profiles), by the value parser every cell
goes through (:func:`economics.schema.day_profiles.hour_values`); a bad one is reported for each row holding it, naming
the field and the value. The columns are left holding the canonical text: a catalog id in lower case, or the
numbers as given.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.schema.day_profiles import DIURNAL_MAX_PEAK, demand_profile, diurnal_problem, hour_values
from economics.schema.scenario import FIELDS

HOURLY_FIELDS = ("demand_profile", "electricity_tariff", "grid_carbon_by_hour", "grid_region")
"""The fields this module checks (each text against the day's 24 hours or a catalog of them)."""
HOUR_LIST_FIELDS = ("demand_profile", "electricity_tariff", "grid_carbon_by_hour")
"""The fields that may hold 24 numbers (the others of :data:`HOURLY_FIELDS` hold a catalog id or a word): what a
``;``-separated file's decimal commas are read in (:func:`economics.io.reading.hour_lists`)."""

Add = Callable[[np.ndarray, str, Any, Any], None]
Distinct = Callable[[Any], tuple[np.ndarray, np.ndarray]]
RowsOf = Callable[[np.ndarray, np.ndarray, Any], Any]


def _numbers(field: str, text: str, ge: float, le: float, unit: str) -> str | None:
    """The problem with 24 numbers in ``text`` (None when they are good)."""
    try:
        x = hour_values(field, text)
    except ValueError as exc:
        return str(exc)
    out = np.flatnonzero((x < ge) | (x > le))
    if out.size:
        h = int(out[0])
        return (f"{field}: each of the 24 values must be >= {ge:g} and <= {le:g} [{unit}]; hour {h} "
                f"(value {h + 1} of 24) is {x[h]:g}")
    return None


def _tariff_problem(text: str) -> str | None:
    if text in catalog.electricity_tariffs().index:
        return None
    if any(ch.isalpha() for ch in text.replace("e", "").replace("E", "")):  # a word: an id that does not exist
        return catalog.unknown_id_message("electricity_tariff", text, list(catalog.electricity_tariffs().index))
    spec = FIELDS["electricity_usd_per_kwh"]
    return _numbers("electricity_tariff", text, float(spec.ge or 0), float(spec.le or 10), spec.unit)


@lru_cache(maxsize=1024)
def _demand_peak(text: str, peak_to_average: float) -> tuple[float, str | None]:
    """The busiest hour of a demand profile, as a multiple of the average, or its problem (remembered per text: a
    pure function every scenario's validation calls, which builds the profile's 24 hours).
    """
    text = text or "flat"
    if text.lower() == "peak":
        return 0.0, ("demand_profile: 'peak' is a planner setting; a scenario's demand over the day is flat, "
                     "diurnal or 24 relative loads")
    try:
        return float(demand_profile(text, peak_to_average).max()), None
    except ValueError as exc:
        return 0.0, str(exc)


def _checks() -> dict[str, tuple[Any, Callable[[str], str | None]]]:
    """Per hourly field: the catalog ids it may name and the problem with one (stripped, canonical) text; built once
    per catalog tables (every scenario's validation reads it).
    """
    tables = (catalog.electricity_tariffs(), catalog.grid_regions())
    return catalog.derived("hourly checks", tables, lambda: _checks_of(*tables))


def _checks_of(tariff_table: Any, region_table: Any) -> dict[str, tuple[Any, Callable[[str], str | None]]]:
    tariffs, regions = frozenset(tariff_table.index), list(region_table.index)
    carbon = FIELDS["grid_carbon_g_per_kwh"]
    return {
        "electricity_tariff": (tariffs, _tariff_problem),
        "grid_carbon_by_hour": ((), lambda t: _numbers("grid_carbon_by_hour", t, 0.0, float(carbon.le or 3000),
                                                         carbon.unit)),
        "grid_region": (regions, lambda t: None if t in regions else catalog.unknown_id_message("grid_region", t,
                                                                                               regions)),
    }


def canonical(text: str, ids: Any) -> str:
    """A catalog id in lower case; any other text as given."""
    return text.lower() if text.lower() in ids else text


def value_problem(field: str, text: str, peak_to_average: float = 2.0) -> tuple[str, str | None]:
    """One hourly field's stripped text read as a row's check reads it: (its canonical text, its problem or None).

    The check every path makes (the tables, links, ``Scenario``), here for one value: what the fuzz bench holds
    each path to. ``demand_profile`` is checked against ``peak_to_average``; other fields need no other column.
    """
    text = text.strip()
    if field == "demand_profile":
        text = _demand_text(text)
        peak, problem = _demand_peak(text, 2.0)
        if problem is None and bool(_above_peak(text == "diurnal", peak, peak_to_average)):
            problem = _peak_message(peak)
        if problem is None and text == "diurnal":
            problem = diurnal_problem(peak_to_average)
        return text or "flat", problem
    ids, check_one = _checks()[field]
    text = canonical(text, ids)
    return text, (check_one(text) if text else None)


def check(cols: dict[str, Any], add: Add, distinct: Distinct, rows_of: RowsOf) -> None:
    """Check the hourly fields of every row; canonical texts written back into ``cols`` (``rows_of``: each row's
    text from the codes and texts of ``distinct``, held as the column held its cells).
    """
    for field, (ids, problem) in _checks().items():
        codes, texts = distinct(cols[field])
        texts = np.array([canonical(str(t), ids) for t in texts], dtype=object)
        bad = np.array([bool(t) and problem(str(t)) is not None for t in texts], dtype=bool)
        add(bad[codes], field, cols[field], lambda v, ids=ids, problem=problem: problem(canonical(str(v).strip(),
                                                                                                 ids)))
        cols[field] = rows_of(codes, texts, cols[field])
    _fill_from_region(cols)
    _check_demand(cols, add, distinct, rows_of)
    _check_carbon_price(cols, add)


def _check_carbon_price(cols: dict[str, Any], add: Add) -> None:
    """A carbon price with no grid intensity would price nothing: refused rather than shown as a zero cost."""
    price = np.asarray(cols["carbon_usd_per_tonne"], dtype=float)
    n = len(cols["grid_region"])
    price = np.broadcast_to(price, (n,))
    average = np.broadcast_to(np.asarray(cols["grid_carbon_g_per_kwh"], dtype=float), (n,))
    no_hours = np.broadcast_to(np.asarray(cols["grid_carbon_by_hour"] == "", dtype=bool), (n,))  # no object copy
    add((price > 0) & np.isnan(average) & no_hours, "carbon_usd_per_tonne", cols["carbon_usd_per_tonne"],
        lambda v: f"carbon_usd_per_tonne: a carbon price ({float(v):g} USD/t) needs the grid's intensity; give "
        "grid_region, grid_carbon_g_per_kwh or grid_carbon_by_hour")


def region_intensity(region: str) -> tuple[float, str]:
    """A grid region's annual average [gCO2e/kWh] and its hourly profile's text ('' where the catalog has none);
    ValueError naming an id the catalog does not hold.
    """
    table = catalog.grid_regions()
    if region not in table.index:
        raise ValueError(catalog.unknown_id_message("grid_region", region, list(table.index)))
    hours = table["g_per_kwh_by_hour"].get(region, "")
    average = table["g_per_kwh"].astype(float)[region]
    return float(average), "" if not isinstance(hours, str) else hours


def _fill_from_region(cols: dict[str, Any]) -> None:
    """A row naming a grid region and no intensity of its own takes the region's annual average, and its hourly
    profile where the catalog has one and the row gives none (a row's own average keeps its hours flat).
    """
    region = cols["grid_region"]
    names: Any
    if isinstance(region, pd.Categorical):  # no row names a region (the usual table): its codes as they are
        codes, names = region.codes, list(region.categories)
    elif len(region) <= catalog.FEW_IDS:  # one scenario: the same codes without a pandas call
        seen: dict[Any, int] = {}
        codes = np.array([seen.setdefault(r, len(seen)) for r in region], dtype=np.intp)
        names = list(seen)
    else:
        codes, names = pd.factorize(pd.Series(region, dtype=object), use_na_sentinel=False)  # a region read once
    figures = [region_intensity(str(r)) if r in catalog.grid_regions().index else (np.nan, "") for r in names]
    average = np.array([f[0] for f in figures], dtype=float)[codes] if len(names) else np.zeros(0)
    given = np.asarray(cols["grid_carbon_g_per_kwh"], dtype=float)
    take = ~np.isnan(average) & np.isnan(given)
    if not take.any():
        return
    cols["grid_carbon_g_per_kwh"] = np.where(take, average, given)
    hours = np.asarray(cols["grid_carbon_by_hour"], dtype=object)
    profile = np.array([f[1] for f in figures], dtype=object)[codes]
    cols["grid_carbon_by_hour"] = np.where(take & (hours == ""), profile, hours)


def _check_demand(cols: dict[str, Any], add: Add, distinct: Distinct, rows_of: RowsOf) -> None:
    codes, texts = distinct(cols["demand_profile"])
    texts = np.array([_demand_text(str(t)) for t in texts], dtype=object)
    found = [_demand_peak(str(t), 2.0) for t in texts]
    bad = np.array([m is not None for _, m in found], dtype=bool)
    add(bad[codes], "demand_profile", cols["demand_profile"],
        lambda v: _demand_peak(_demand_text(str(v)), 2.0)[1])
    peak = np.array([p for p, _ in found])[codes]
    p2a = np.broadcast_to(np.asarray(cols["peak_to_average"], dtype=float), peak.shape)
    above = _above_peak((texts == "diurnal")[codes], peak, p2a)
    add(~bad[codes] & above, "demand_profile", cols["demand_profile"],
        lambda v: _peak_message(_demand_peak(_demand_text(str(v)), 2.0)[0]))
    bounds = FIELDS["peak_to_average"]
    with np.errstate(invalid="ignore"):  # an out-of-bounds peak_to_average is reported by its bounds already
        steep = (texts == "diurnal")[codes] & (p2a >= DIURNAL_MAX_PEAK) & (p2a <= float(bounds.le or np.inf))
    add(steep, "peak_to_average", p2a, lambda v: str(diurnal_problem(float(v))))
    texts[texts == ""] = "flat"
    cols["demand_profile"] = rows_of(codes, texts, cols["demand_profile"])


def _above_peak(diurnal: Any, peak: Any, peak_to_average: Any) -> Any:
    """Whether a profile's busiest hour exceeds the row's ``peak_to_average`` (scalars or arrays): the diurnal shape
    peaks at the row's own by construction; numbers at their own busiest hour.
    """
    return np.logical_and(np.logical_not(diurnal), np.asarray(peak) > np.asarray(peak_to_average) * (1 + 1e-9))


def _peak_message(peak: float) -> str:
    return (f"demand_profile: its busiest hour is {peak:.4g} x the average, above peak_to_average; raise "
            "peak_to_average to at least that (the fleet is sized for it)")


def _demand_text(text: str) -> str:
    text = text.strip()
    return text.lower() if text.lower() in ("flat", "diurnal", "peak", "") else text
