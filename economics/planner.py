"""Planner: the cheapest fleet that serves a demand at a per-user speed and a time-to-first-token target inside a
site's power, racks, cooling and budget, from catalog hardware (own or rent) and the fleet already owned.

A mixed-integer program solved with ``scipy.optimize.milp`` (HiGHS). docs/planner.md has the full formulation; in
short, for candidates ``i`` (a hardware option with its ownership: ``own``, ``rent`` or ``existing``, and for owned
hardware how it is cooled), roles ``r`` (aggregated, prefill, decode) and hours ``h``:

* integers ``n[i,r]`` (owned or existing systems, present all day), ``m[i,r,h]`` (systems rented in hour h, billed
  by the hour), ``R[i]`` (racks of an on-site candidate); continuous flows ``f[i,r,h] >= 0`` (requests/s for
  aggregated, uncached input tokens/s for prefill, output tokens/s for decode);
* demand in every hour: ``sum_agg I_miss f + sum_prefill f >= I_miss lambda_h`` and ``sum_agg O f + sum_decode f >=
  O lambda_h`` (a request is served by an aggregated pool, or by a prefill pool and a decode pool);
* capacity: ``f <= k A / (1 + headroom) x systems`` with ``k`` the pool's rate per system at the per-user speed
  target and ``A`` the availability from failures and repairs (the extra systems are the spares);
* time to first token at a percentile: the prefill share of a pool's load ``<= rho_max(c) x`` its prefill capacity,
  ``rho_max`` from the M/G/c approximation of :mod:`economics.queueing` at ``c`` replicas (refined at the pool sizes
  chosen; every returned plan is checked at its own pool sizes);
* site: ``sum n x system kW x PUE <= site MW x 1000``; racks: ``sum n <= per_rack x R`` and ``sum R <= max racks``
  (systems per rack from the rack power of the cooling used, :func:`economics.fleet.systems_per_rack`); a capex
  budget; the KV-cache link: ``sum_prefill f x KV bytes/token <= link`` in every hour; the existing fleet's size.

The objective is the cost per day (capital as an annuity, energy, hosting, operations, rent, cooling retrofit: the
same cost functions as the engine, :mod:`economics.cost`), or the net present cost over the horizon with demand
growth (purchases at year 0, the fleet sized for the largest year, as the retrofit study does). Shadow prices come
from the LP with the integer choices fixed: the pools the plan uses stay open, every other pool is closed, the
counts become continuous, and HiGHS's dual values of the site, rack, budget, link and fleet rows are read.
An infeasible plan comes back as data: the constraint that cannot be met, with the numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_matrix, csr_matrix

from . import availability, candidate_fields, catalog, cost, covering, fleet, queueing, user_curves
from .batch import ScenarioError, as_scenario, evaluate, evaluate_scenario
from .capacity import requests_per_s_per_accelerator
from .scenario import FIELDS, FieldSpec, Scenario, with_changes
from .scenario_files import read_input_bytes, to_csv_text
from .tables import read_table
from .validation import InputError

ROLES = ("aggregated", "prefill", "decode")
OWNERSHIPS = ("own", "rent", "existing")
HOURS = 24
SECONDS_PER_DAY = 86400.0
DAYS_PER_YEAR = 365.0
KV_BYTES_SCALE = {"bf16": 1.0, "fp8": 0.5, "fp4": 0.25}
BIG_PENALTY = 1e9


def _pf(name: str, kind: Any, default: Any, unit: str, description: str, optional: bool = False,
        choices: tuple[str, ...] = (), gt: float | None = None, ge: float | None = None, lt: float | None = None,
        le: float | None = None) -> FieldSpec:
    return FieldSpec(name=name, kind=kind, optional=optional, default=default, unit=unit, description=description,
                     group="plan", choices=choices, gt=gt, ge=ge, lt=lt, le=le)


PLAN_FIELDS: dict[str, FieldSpec] = {f.name: f for f in (
    _pf("ttft_target_s", "float", None, "s", "Time-to-first-token target at the percentile; empty = not a "
        "constraint", optional=True, gt=0, le=3600),
    _pf("ttft_percentile", "float", 0.99, "-", "Percentile of the TTFT target, e.g. 0.5, 0.9 or 0.99", gt=0, lt=1),
    _pf("prefill_service_cv2", "float", 1.0, "-", "Squared coefficient of variation of prefill times (0 = every "
        "prompt alike, 1 = exponential)", ge=0, le=10),
    _pf("demand_profile", "str", "peak", "", "Demand over the day: peak (every hour at peak_to_average x the "
        "average), flat, diurnal (a smooth day whose peak is peak_to_average x the average, at 14:00), or 24 "
        "relative numbers"),
    _pf("max_racks", "float", None, "rack", "Racks (floor space) available to on-site systems; empty = no limit",
        optional=True, ge=0, le=1e6),
    _pf("capex_budget_usd", "float", None, "USD", "Most that may be spent on new hardware and cooling retrofit; "
        "empty = no limit", optional=True, ge=0, le=1e13),
    _pf("objective", "choice", "cost_per_day", "", "What is minimised: cost_per_day (capital as an annuity) or npv "
        "(net present cost over horizon_years with demand growth)", choices=("cost_per_day", "npv")),
    _pf("spares", "bool", True, "", "Derate capacity by availability (failure and repair rates per family, "
        "data/reliability.csv): the extra systems are spares"),
    _pf("allow_rent", "bool", True, "", "Rented systems (off site, billed by the hour) may carry part of the "
        "demand"),
    _pf("max_pools", "int", 3, "pool", "Most distinct pools the plan may use (a pool: one hardware option in one "
        "role, owned, rented or existing); each is one more thing to deploy, monitor and keep spares for",
        ge=1, le=100),
    _pf("min_rental_hours", "float", 8.0, "h", "Shortest rental: a rented pool holds its largest size through the "
        "day's busiest hours for at least this many hours, so no rented system is held for less; 24 = rented all "
        "day (a monthly rental), monthly is read as 24", ge=1, le=24),
    _pf("min_pool_systems", "int", 1, "system", "Smallest pool: a pool the plan uses has at least this many "
        "systems (at its largest hour when rented); rack-scale systems are always whole racks", ge=1, le=10_000),
)}
"""Planner inputs that are not scenario fields (a FILE row may carry them as extra columns)."""

CANDIDATE_COLUMNS: dict[str, tuple[str, str]] = {
    "name": ("", "Label of the hardware option (required, unique)"),
    "ownership": ("", "own, rent or existing (required)"),
    "accelerator": ("", "Catalog id that fills empty hardware figures (optional)"),
    "accelerators_per_system": ("accelerator", "Accelerators per system"),
    "accelerator_power_kw": ("kW", "Full-load IT power per accelerator incl. its share of the system"),
    "system_power_kw": ("kW", "Full-load IT power per system (instead of accelerator_power_kw)"),
    "system_rack_units": ("U", "Height of one system; empty = only the rack's power limits it"),
    "system_form": ("", "server, rack or wafer (a rack-scale system fills a rack)"),
    "accelerator_cooling": ("", "air, liquid or air_or_liquid"),
    "accelerator_price_usd": ("USD", "Capex per accelerator (own; book value for existing)"),
    "rent_usd_per_accelerator_hour": ("USD/h", "Rent per accelerator-hour (rent)"),
    "max_accelerators": ("accelerator", "Size of the existing fleet (existing)"),
    "output_tokens_per_s_per_accelerator": ("token/s", "Measured decode throughput per accelerator at the "
                                            "per-user speed below (required)"),
    "input_tokens_per_s_per_accelerator": ("token/s", "Measured prefill throughput per accelerator; empty = the "
                                           "output figure includes prefill (aggregated role only)"),
    "output_tokens_per_s_per_user": ("token/s", "Per-user speed at which the output figure was measured"),
    "accelerators_per_replica": ("accelerator", "Accelerators holding one copy of the model; empty = one system"),
    "family": ("", "Accelerator family for failure and repair rates (data/reliability.csv)"),
    "roles": ("", "Roles allowed, separated by ';' (aggregated;prefill;decode); empty = all the figures allow"),
}
"""Columns of a CANDIDATES.csv: one hardware option per row with its own measured rates and prices."""


@dataclass(frozen=True)
class PlanSettings:
    """The planner inputs of :data:`PLAN_FIELDS`, checked."""

    ttft_target_s: float | None = None
    ttft_percentile: float = 0.99
    prefill_service_cv2: float = 1.0
    demand_profile: str = "peak"
    max_racks: float | None = None
    capex_budget_usd: float | None = None
    objective: str = "cost_per_day"
    spares: bool = True
    allow_rent: bool = True
    max_pools: int | None = 3
    """None: no limit (the plan without the setting, as :func:`setting_costs` solves it)."""
    min_rental_hours: float = 8.0
    min_pool_systems: int = 1


@dataclass(frozen=True)
class Candidate:
    """One hardware option: its system, its ownership and cooling, its rates and its prices (per system)."""

    name: str
    ownership: str
    accelerator: str = ""
    family: str = "default"
    accelerators_per_system: int = 8
    system_power_kw: float = 10.0
    system_rack_units: float = math.nan
    rack_scale: bool = False
    hardware_cooling: str = "air"
    cooling_mode: str = "air"
    price_usd_per_system: float = 0.0
    rent_usd_per_system_hour: float = math.nan
    input_tokens_per_s_per_system: float = math.nan
    output_tokens_per_s_per_system: float = math.nan
    output_tokens_per_s_per_user: float = math.nan
    accelerators_per_replica: int = 8
    max_systems: float = math.inf
    roles: tuple[str, ...] = ROLES
    note: str = ""
    throughput: str = ""
    """Where the rates come from: a measured record, or the estimate's basis (calibrated on which points, or no
    measured point on the family and the range to expect)."""
    changes: tuple[tuple[str, Any], ...] = ()
    """Scenario fields this candidate sets for itself (:data:`economics.candidate_fields.PER_CANDIDATE`): its costs
    are figured with them instead of the scenario's."""


SETTING_COST_COLUMNS = ("setting", "value", "unit", "cost_usd_per_day", "without_usd_per_day", "costs_usd_per_day",
                        "pools_without", "meaning")


@dataclass
class PlanResult:
    """What :func:`plan` returns: a plan, or the reason there is none, always as data."""

    feasible: bool
    reason: str
    summary: dict[str, Any]
    plan: pd.DataFrame
    hours: pd.DataFrame
    constraints: pd.DataFrame
    candidates: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    setting_costs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SETTING_COST_COLUMNS)))
    """What each operations setting costs (:func:`setting_costs`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: plain numbers, None for missing, never NaN."""
        return {"feasible": self.feasible, "infeasible_reason": self.reason, "summary": _plain(self.summary),
                "plan": _records(self.plan), "constraints": _records(self.constraints),
                "hours": _records(self.hours), "candidates": _records(self.candidates),
                "setting_costs": _records(self.setting_costs), "notes": self.notes}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if value is pd.NA or value is None:
        return None
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as JSON-ready records: plain numbers, None for missing, never NaN."""
    return [_plain(r) for r in df.to_dict(orient="records")]


_records = records


# ----------------------------------------------------------------------------------------------- settings, demand
def settings_from_row(row: dict[str, Any]) -> PlanSettings:
    """Planner settings from a row's cells (text or values); empty cells keep the defaults. Raises ValueError naming
    the field and the value."""
    values: dict[str, Any] = {}
    for name, spec in PLAN_FIELDS.items():
        raw = row.get(name)
        if raw is None or (isinstance(raw, str) and not raw.strip()) or (isinstance(raw, float) and math.isnan(raw)):
            continue
        values[name] = _parse_setting(spec, raw)
    return PlanSettings(**values)


def _parse_setting(spec: FieldSpec, raw: Any) -> Any:
    text = str(raw).strip()
    if spec.kind == "bool":
        if isinstance(raw, bool):
            return raw
        if text.lower() in ("true", "yes", "1", "y"):
            return True
        if text.lower() in ("false", "no", "0", "n"):
            return False
        raise ValueError(f"{spec.name}: '{text}' is not true or false")
    if spec.kind == "choice":
        if text not in spec.choices:
            raise ValueError(f"{spec.name}: '{text}' is not one of {', '.join(spec.choices)}")
        return text
    if spec.kind == "str":
        demand_profile(text, 2.0)  # checks the profile's text
        return text
    if spec.name == "min_rental_hours" and text.lower() == "monthly":
        return 24.0
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{spec.name}: '{text}' is not a number") from None
    if spec.kind == "int" and math.isfinite(value) and not value.is_integer():
        raise ValueError(f"{spec.name}: must be a whole number [{spec.unit}], got {text}")
    bad = (not math.isfinite(value) or (spec.gt is not None and value <= spec.gt)
           or (spec.ge is not None and value < spec.ge) or (spec.lt is not None and value >= spec.lt)
           or (spec.le is not None and value > spec.le))
    if bad:
        raise ValueError(f"{spec.name}: must be {spec.bounds_text()} [{spec.unit}], got {text}")
    return int(value) if spec.kind == "int" else value


def demand_profile(profile: str, peak_to_average: float) -> np.ndarray:
    """The 24 hourly multipliers of the average demand.

    * ``peak``: every hour at ``peak_to_average`` (the engine's sizing: the fleet carries the peak all day);
    * ``flat``: every hour at the average;
    * ``diurnal``: a smooth day, :math:`x_h \\propto e^{b \\cos(2 \\pi (h - 14) / 24)}` (a von Mises shape) scaled
      to mean 1, with ``b`` chosen so that the busiest hour is ``peak_to_average`` x the average;
    * 24 numbers (separated by spaces, commas or semicolons): relative load per hour 0..23, scaled to mean 1.

    >>> demand_profile("peak", 2.0)[:3].tolist()
    [2.0, 2.0, 2.0]
    >>> x = demand_profile("diurnal", 2.0); round(float(x.mean()), 9), round(float(x.max()), 6), int(x.argmax())
    (1.0, 2.0, 14)
    >>> demand_profile(" ".join(["1"] * 12 + ["3"] * 12), 1.0)[[0, 23]].tolist()
    [0.5, 1.5]
    """
    name = profile.strip().lower()
    if name == "peak":
        return np.full(HOURS, float(peak_to_average))
    if name == "flat":
        return np.ones(HOURS)
    if name == "diurnal":
        return _diurnal(float(peak_to_average))
    parts = [p for p in re.split(r"[\s,;]+", profile.strip()) if p]
    if len(parts) != HOURS:
        raise ValueError(f"demand_profile: '{profile[:60]}' is not peak, flat, diurnal or 24 numbers "
                         f"(got {len(parts)} values)")
    try:
        x = np.array([float(p) for p in parts])
    except ValueError:
        raise ValueError(f"demand_profile: '{profile[:60]}' has a value that is not a number") from None
    if not np.all(np.isfinite(x)) or np.any(x < 0) or x.sum() <= 0:
        raise ValueError(f"demand_profile: the 24 values must be >= 0 and not all 0, got '{profile[:60]}'")
    return x / x.mean()


def _diurnal(peak_to_average: float) -> np.ndarray:
    theta = 2.0 * np.pi * (np.arange(HOURS) - 14) / HOURS
    if peak_to_average >= HOURS * 0.999:
        raise ValueError(f"peak_to_average: a 24-hour diurnal profile cannot peak above 24 x the average, got "
                         f"{peak_to_average:g}")

    def shape(b: float) -> np.ndarray:
        y = np.exp(b * (np.cos(theta) - 1.0))
        return y / y.mean()

    lo, hi = 0.0, 1.0
    while shape(hi).max() < peak_to_average:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if shape(mid).max() < peak_to_average else (lo, mid)
    return shape((lo + hi) / 2.0)


@dataclass(frozen=True)
class Workload:
    """Request shape and demand of the plan, from the scenario."""

    input_tokens: float
    uncached_input_tokens: float
    output_tokens: float
    requests_per_s: float           # average over the day (the plan's design year)
    hourly_requests_per_s: np.ndarray  # the 24 hours the fleet must carry
    energy_scale: float             # served work / the work of the hourly flows (1/peak_to_average for 'peak')
    kv_bytes_per_token: float
    clock_hours: bool = False
    """Each hour of the day on its own rather than hours of equal demand merged (:func:`_hour_types`): a rental
    block of B hours must be able to take any B of them."""


def workload(s: Scenario, settings: PlanSettings, growth: float = 1.0) -> Workload:
    """Average request rate from the scenario's demand (output tokens, else input tokens, else requests), its
    24-hour profile, and the KV-cache bytes per token of its model.

    .. math:: \\lambda = D_{out} / (O \\cdot 86400)  (or D_{in} / (I \\cdot 86400), or the request rate)
    """
    i, o = float(s.input_tokens_per_request), float(s.output_tokens_per_request)
    if s.demand_output_tokens_per_day is not None:
        lam = float(s.demand_output_tokens_per_day) / (o * SECONDS_PER_DAY)
    elif s.demand_input_tokens_per_day is not None and i > 0:
        lam = float(s.demand_input_tokens_per_day) / (i * SECONDS_PER_DAY)
    elif s.demand_requests_per_s is not None:
        lam = float(s.demand_requests_per_s)
    else:
        raise ValueError("demand_output_tokens_per_day: give the demand (output tokens, input tokens or requests "
                         "per day) for a plan")
    lam *= growth
    profile = demand_profile(settings.demand_profile, float(s.peak_to_average))
    scale = 1.0 / float(s.peak_to_average) if settings.demand_profile.strip().lower() == "peak" else 1.0
    kv = math.nan
    if s.model and s.model in catalog.models().index:
        precision = s.kv_cache_precision or s.precision
        kv = float(str(catalog.models().loc[s.model, "kv_bytes_per_token_bf16"])) * KV_BYTES_SCALE[precision]
    return Workload(i, i * (1.0 - float(s.prefix_cache_hit_rate)), o, lam, lam * profile, scale, kv)


# ----------------------------------------------------------------------------------------------------- candidates
RATE_COLUMNS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                "accelerators_per_replica", "output_tokens_per_s_per_user")


RATES_MEMO_SIZE = 64
"""Rate tables kept by :func:`catalog_rates` (the most recently used; each a few kB)."""
_RATES_MEMO: dict[tuple[str, tuple[str, ...], tuple[float | None, ...]], tuple[tuple[object, ...], pd.DataFrame]] = {}
_RATES_LOCK = threading.Lock()


def _catalog_tables() -> tuple[object, ...]:
    """The catalog's loaded tables: a table read again (as after ``calibrate --write``) is a new object."""
    return (catalog.accelerator_figures(), catalog.accelerators(), catalog.models(), catalog.throughput_claims(),
            catalog.throughput_curves(), catalog.serving_stacks(), catalog.calibration(), catalog.defaults(),
            catalog.presets())


def catalog_rates(s: Scenario, accelerators: list[str], targets: list[float | None]) -> pd.DataFrame:
    """Throughput per accelerator and per-user speed target from the engine (a measured curve or the calibrated
    roofline, :mod:`economics.estimate`), one evaluation for all pairs. Prices are not read here (a placeholder rent
    lets hardware without a published price be estimated); the catalog's prices are read by the candidates.

    The engine is deterministic, so the table is remembered per input (the whole scenario, the accelerators and the
    targets; :data:`RATES_MEMO_SIZE` of them) while the catalog's tables are the same objects: a planner setting
    changed on the same scenario re-rates nothing. Every call returns its own copy.

    Returns one row per (target, accelerator) with :data:`RATE_COLUMNS`, ``feasible`` and ``reason``.
    """
    key = (s.model_dump_json(), tuple(accelerators), tuple(targets))
    tables = _catalog_tables()
    with _RATES_LOCK:
        entry = _RATES_MEMO.pop(key, None)
    if entry is None or any(a is not b for a, b in zip(entry[0], tables, strict=True)):
        entry = (tables, _engine_rates(s, accelerators, targets))
    table = entry[1]
    with _RATES_LOCK:
        _RATES_MEMO[key] = entry  # the most recent last
        while len(_RATES_MEMO) > RATES_MEMO_SIZE:
            del _RATES_MEMO[next(iter(_RATES_MEMO))]
    return table.copy()


def clear_rates_memo() -> None:
    """Forget the remembered rate tables (the next :func:`catalog_rates` asks the engine again)."""
    with _RATES_LOCK:
        _RATES_MEMO.clear()


def _engine_rates(s: Scenario, accelerators: list[str], targets: list[float | None]) -> pd.DataFrame:
    rows, keys = [], []
    for target in targets:
        for acc in accelerators:
            measured = {k: getattr(s, k) for k in RATE_COLUMNS[:3]} if acc == s.accelerator else dict.fromkeys(
                RATE_COLUMNS[:3])
            rows.append(with_changes(
                s, accelerator=acc, ownership="rent", rent_usd_per_accelerator_hour=1.0, accelerator_count=None,
                facility_cooling="liquid", site_power_mw=None, decode_accelerator=None, existing_accelerators=None,
                new_accelerator=None, target_output_tokens_per_s_per_user=target, **measured))
            keys.append((target, acc))
    out = _evaluated(rows)
    table = pd.DataFrame({"target": [k[0] for k in keys], "accelerator": [k[1] for k in keys]})
    for col in RATE_COLUMNS:
        table[col] = pd.to_numeric(out[col], errors="coerce").astype(float).to_numpy()
    ok = out["valid"].astype(bool) & out["feasible"].fillna(False).astype(bool)
    table["feasible"] = ok.to_numpy()
    basis = out["throughput_basis"].fillna("").astype(str) if "throughput_basis" in out else pd.Series([""] * len(out))
    curve = out["throughput_curve"].fillna("").astype(str)
    source: pd.Series = out["throughput_source"].fillna("").astype(str) + curve.where(curve == "", " " + curve)
    table["throughput"] = np.where(basis != "", basis, source)
    table["reason"] = [str(r or e or "") for r, e in zip(out["infeasible_reason"].fillna(""), out["error"].fillna(""),
                                                         strict=True)]
    return table


FEW_RATE_ROWS = 32
"""Up to this many rows are rated one by one through the single-scenario path (about 1 ms each against about
30 ms for a small table through the vectorised one); a row that path refuses sends the table through
:func:`economics.evaluate`, which reports such rows in its ``error`` column."""


def _evaluated(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The engine's result table for ``rows``: what :func:`economics.evaluate` gives, row by row when few."""
    if len(rows) <= FEW_RATE_ROWS:
        try:
            return pd.DataFrame([evaluate_scenario(r) for r in rows])
        except (ScenarioError, InputError):
            pass
    return evaluate(pd.DataFrame(rows))


def _num(record: dict[str, Any], key: str) -> float:
    value = record.get(key, math.nan)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def catalog_candidates(s: Scenario, accelerators: list[str] | None = None,
                       rates: pd.DataFrame | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Own and rent candidates for every catalog accelerator with a price or a rent, and the existing fleet
    (``existing_accelerators`` of ``accelerator``), with rates at the scenario's per-user speed target.

    Returns (candidates, excluded) where excluded lists (name, reason) for hardware that cannot take part.
    """
    ids = accelerators or catalog.accelerator_ids()
    if rates is None:
        rates = catalog_rates(s, ids, [s.target_output_tokens_per_s_per_user])
    by_id = {str(r["accelerator"]): r for r in rates.to_dict(orient="records")}
    candidates: list[Candidate] = []
    excluded: list[tuple[str, str]] = []
    for acc in ids:
        rec = catalog.accelerator_record(acc)
        rate = by_id[acc]
        if not rate["feasible"]:
            excluded.append((acc, str(rate["reason"])))
            continue
        if not math.isfinite(_num(rec, "accelerators_per_system")):
            excluded.append((acc, "accelerators_per_system: not in the catalog"))
            continue
        a = int(_num(rec, "accelerators_per_system"))
        kw = _num(rec, "system_power_kw")
        kw = kw if math.isfinite(kw) else _num(rec, "power_kw") * a
        price = _num(rec, "system_price_usd")
        price = price if math.isfinite(price) else _num(rec, "price_usd") * a
        rent = _num(rec, "rent_usd_per_hour") * a
        base = Candidate(
            name=acc, ownership="own", accelerator=acc, family=str(rec.get("family") or "default"),
            accelerators_per_system=a, system_power_kw=kw, system_rack_units=_num(rec, "system_rack_units"),
            rack_scale=str(rec.get("system_form")) == "rack", hardware_cooling=str(rec.get("cooling") or "air"),
            price_usd_per_system=price, rent_usd_per_system_hour=rent,
            input_tokens_per_s_per_system=float(rate["input_tokens_per_s_per_accelerator"]) * a,
            output_tokens_per_s_per_system=float(rate["output_tokens_per_s_per_accelerator"]) * a,
            output_tokens_per_s_per_user=float(rate["output_tokens_per_s_per_user"]),
            accelerators_per_replica=int(rate["accelerators_per_replica"]) if math.isfinite(
                rate["accelerators_per_replica"]) else a, throughput=str(rate.get("throughput", "")))
        found = False
        if math.isfinite(price):
            candidates.append(replace(base, name=f"{acc} own"))
            found = True
        if math.isfinite(rent):
            candidates.append(replace(base, name=f"{acc} rent", ownership="rent", price_usd_per_system=0.0))
            found = True
        if s.existing_accelerators and acc == s.accelerator:
            candidates.append(replace(base, name=f"{acc} existing", ownership="existing",
                                      price_usd_per_system=float(s.existing_book_value_usd) * a,
                                      max_systems=float(s.existing_accelerators // a)))
            found = True
        if not found:
            excluded.append((acc, "no price and no rent in the catalog (give them in a CANDIDATES.csv)"))
    return [_whole_replicas(c) for c in candidates], excluded


def _whole_replicas(c: Candidate) -> Candidate:
    """When one copy of the model spans several systems, the unit bought is that group of systems."""
    k = math.ceil(c.accelerators_per_replica / c.accelerators_per_system)
    if k <= 1:
        return c
    return replace(c, accelerators_per_system=c.accelerators_per_system * k, system_power_kw=c.system_power_kw * k,
                   system_rack_units=c.system_rack_units * k, price_usd_per_system=c.price_usd_per_system * k,
                   rent_usd_per_system_hour=c.rent_usd_per_system_hour * k,
                   input_tokens_per_s_per_system=c.input_tokens_per_s_per_system * k,
                   output_tokens_per_s_per_system=c.output_tokens_per_s_per_system * k,
                   max_systems=math.floor(c.max_systems / k) if math.isfinite(c.max_systems) else math.inf,
                   note=(c.note + "; " if c.note else "") + f"a unit here is {k} systems holding one model copy")


def hosting_variants(cands: list[Candidate], s: Scenario) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Each on-site candidate once per way the facility can cool it (air, liquid, or a liquid retrofit of an air
    hall when allowed); rented candidates are off site. Returns (variants, excluded with reasons)."""
    out: list[Candidate] = []
    excluded: list[tuple[str, str]] = []
    for c in cands:
        if c.ownership == "rent":
            out.append(replace(c, cooling_mode="off site"))
            continue
        modes = _cooling_modes(c.hardware_cooling, s.facility_cooling, bool(s.allow_liquid_retrofit))
        if c.ownership == "existing":  # already installed: it is cooled as it is, no retrofit to pay
            modes = ["air"] if c.hardware_cooling != "liquid" else ["liquid"]
        if not modes:
            excluded.append((c.name, f"cooling: {c.name} requires liquid cooling and the facility is air-cooled "
                                     "(allow_liquid_retrofit is false)"))
        for mode in modes:
            per_rack = _systems_per_rack(c, s, mode)
            if per_rack < 1:
                excluded.append((c.name, f"rack power: one {c.name} system draws {c.system_power_kw:,.1f} kW, more "
                                         f"than a {mode}-cooled rack's {_rack_kw(s, mode):,.0f} kW"))
                continue
            name = c.name + (" (liquid retrofit)" if mode == "liquid retrofit" else "")
            out.append(replace(c, name=name, cooling_mode=mode))
    return out, excluded


def _cooling_modes(hardware: str, facility: str, allow_retrofit: bool) -> list[str]:
    """How on-site hardware can be cooled in a facility: its own hall's cooling, or a liquid retrofit of an air hall
    (when allowed; for hardware that can run on air too, a choice the MILP makes: denser racks, lower PUE).

    >>> _cooling_modes("liquid", "air", False), _cooling_modes("liquid", "air", True)
    ([], ['liquid retrofit'])
    >>> _cooling_modes("air_or_liquid", "air", True), _cooling_modes("air", "hybrid", True)
    (['air', 'liquid retrofit'], ['air'])
    """
    if facility == "liquid":
        return ["liquid"]
    if facility == "hybrid":
        return ["air"] if hardware == "air" else ["liquid"]
    if hardware == "air":
        return ["air"]
    if hardware == "air_or_liquid":
        return ["air", "liquid retrofit"] if allow_retrofit else ["air"]
    return ["liquid retrofit"] if allow_retrofit else []


def _rack_kw(s: Scenario, mode: str) -> float:
    if s.rack_power_kw is not None:
        return float(s.rack_power_kw)
    return catalog.default_value("rack_power_kw_air_containment" if mode == "air" else "rack_power_kw_liquid")


def _pue(s: Scenario, mode: str) -> float:
    if s.pue is not None:
        return float(s.pue)
    return catalog.default_value("pue_air" if mode == "air" else "pue_liquid")


def _systems_per_rack(c: Candidate, s: Scenario, mode: str) -> float:
    return float(fleet.systems_per_rack(c.system_power_kw, _rack_kw(s, mode), c.system_rack_units,
                                        float(s.rack_units_per_rack), c.rack_scale))


# ------------------------------------------------------------------------------------------------ pools and costs
@dataclass(frozen=True)
class Pool:
    """One candidate in one role. Flows are requests/s (aggregated), uncached input tokens/s (prefill) or output
    tokens/s (decode); capacities are per system."""

    cand: int
    role: str
    raw_capacity: float          # flow units/s one system serves at full load
    capacity: float              # x availability / (1 + headroom): what the plan may count on
    prefill_weight: float        # uncached input tokens per flow unit (aggregated I_miss, prefill 1, decode 0)
    prefill_capacity: float      # uncached input tokens/s per system x availability (TTFT rows)
    servers_per_system: int      # model replicas per system: the queue's servers
    service_s: float             # one prefill on one replica [s]
    availability: float
    energy_usd_per_flow_hour: float


@dataclass(frozen=True)
class Costs:
    """Per system of a candidate [USD/h or USD]."""

    fixed_usd_per_hour: float     # owned or existing, every hour: capital, operations, hosting, idle energy, retrofit
    opex_usd_per_hour: float      # the same without capital and retrofit annuities (NPV objective)
    rent_usd_per_hour: float      # rented, per hour rented (plus idle energy when the rent excludes it)
    busy_energy_usd_per_hour: float  # energy of a fully busy system above its idle draw
    capex_usd: float              # bought now: price (own) and liquid retrofit
    facility_kw: float            # system kW x PUE (on site)


def candidate_costs(c: Candidate, s: Scenario) -> Costs:
    """Hourly costs of one system with the engine's cost functions (:mod:`economics.cost`).

    .. math:: C_{fixed} = C_K(p) + C_O(p) + C_F(P) + P f_{idle} PUE p_{kWh} + C_K(retrofit, n_{fac})

    Existing systems pay no capital (their purchase is sunk); their maintenance is on their book value, as in the
    retrofit study. Rented systems are off site: the rent (plus energy when it excludes energy).

    An 8-GPU server of 240,000 USD and 10.2 kW at 10 % over 5 years (CRF 0.263797 -> 7.2273 USD/h), 3 %
    maintenance (0.8219 USD/h), 184.06 USD/kW-month colocation (10.2 x 184.06 x 12 / 8,760 = 2.5718 USD/h) and a
    30 % idle draw at PUE 1.5 and 0.0806 USD/kWh (10.2 x 0.3 x 1.5 x 0.0806 = 0.3700 USD/h; busy, the other 70 %:
    0.8632 USD/h):

    >>> s = Scenario(pue=1.5, cost_of_capital=0.1, depreciation_years=5, maintenance_fraction_per_year=0.03,
    ...              electricity_usd_per_kwh=0.0806, colocation_usd_per_kw_month=184.06, idle_power_fraction=0.3,
    ...              facility_capex_usd_per_kw=0, software_usd_per_accelerator_year=0)
    >>> k = candidate_costs(Candidate("h100", "own", system_power_kw=10.2, price_usd_per_system=240_000.0), s)
    >>> round(k.fixed_usd_per_hour, 3), round(k.busy_energy_usd_per_hour, 4), k.capex_usd
    (10.991, 0.8632, 240000.0)
    """
    if c.changes:  # the candidate's own hardware and contract terms (validated when the CANDIDATES row was read)
        s = s.model_copy(update=dict(c.changes))
    r, n = float(s.cost_of_capital), float(s.depreciation_years)
    mode = c.cooling_mode
    pue = _pue(s, "liquid" if mode == "liquid retrofit" else (mode if mode != "off site" else "air"))
    idle = c.system_power_kw * float(s.idle_power_fraction) * pue * float(s.electricity_usd_per_kwh)
    busy = c.system_power_kw * (1.0 - float(s.idle_power_fraction)) * pue * float(s.electricity_usd_per_kwh)
    if c.ownership == "rent":
        with_energy = not s.rent_includes_energy
        return Costs(0.0, 0.0, c.rent_usd_per_system_hour + (idle if with_energy else 0.0),
                     busy if with_energy else 0.0, 0.0, 0.0)
    retrofit_capex = (float(fleet.retrofit_capex_usd(c.system_power_kw, s.liquid_retrofit_usd_per_mw))
                      if mode == "liquid retrofit" else 0.0)
    capital = float(cost.capital_usd_per_hour(c.price_usd_per_system, r, n)) if c.ownership == "own" else 0.0
    retrofit_h = float(cost.capital_usd_per_hour(retrofit_capex, r, float(s.facility_depreciation_years)))
    ops = float(cost.operations_usd_per_hour(c.price_usd_per_system, s.maintenance_fraction_per_year,
                                             float(s.software_usd_per_accelerator_year) * c.accelerators_per_system))
    hosting = float(cost.facility_usd_per_hour(c.system_power_kw, s.colocation_usd_per_kw_month,
                                               s.facility_capex_usd_per_kw, r, s.facility_depreciation_years))
    opex = ops + hosting + idle
    capex = (c.price_usd_per_system if c.ownership == "own" else 0.0) + retrofit_capex
    return Costs(capital + retrofit_h + opex, opex, 0.0, busy, capex, c.system_power_kw * pue)


def build_pools(cands: list[Candidate], s: Scenario, settings: PlanSettings,
                wl: Workload) -> tuple[list[Pool], list[tuple[str, str]]]:
    """Every (candidate, role) that can serve: rates known, the per-user speed met, one prefill shorter than the
    TTFT target. Returns (pools, excluded (name and role, reason))."""
    pools: list[Pool] = []
    excluded: list[tuple[str, str]] = []
    target = s.target_output_tokens_per_s_per_user
    for k, c in enumerate(cands):
        if c.ownership == "rent" and not settings.allow_rent:
            continue
        servers = max(1, c.accelerators_per_system // max(1, c.accelerators_per_replica))
        p_sys, d_sys = c.input_tokens_per_s_per_system, c.output_tokens_per_s_per_system
        service = wl.uncached_input_tokens * servers / p_sys if math.isfinite(p_sys) and p_sys > 0 else math.nan
        avail = 1.0
        if settings.spares and c.ownership != "rent":
            fail, repair = availability.family_rates(c.family)
            avail = availability.system_availability(fail, c.accelerators_per_system, repair)
        costs = candidate_costs(c, s)
        for role in c.roles:
            why = _role_problem(c, role, wl, target, settings, service)
            if why:
                excluded.append((f"{c.name} / {role}", why))
                continue
            raw = {"aggregated": float(requests_per_s_per_accelerator(
                        wl.input_tokens, wl.output_tokens, float(s.prefix_cache_hit_rate), p_sys, d_sys)),
                   "prefill": p_sys, "decode": d_sys}[role]
            weight = {"aggregated": wl.uncached_input_tokens, "prefill": 1.0, "decode": 0.0}[role]
            pools.append(Pool(k, role, raw, raw * avail / (1.0 + float(s.headroom)), weight,
                              p_sys * avail if math.isfinite(p_sys) else math.nan, servers, service, avail,
                              costs.busy_energy_usd_per_hour / raw))
    return pools, excluded


def _role_problem(c: Candidate, role: str, wl: Workload, target: float | None, settings: PlanSettings,
                  service_s: float) -> str:
    """Why a candidate cannot take a role ('' when it can), with the numbers."""
    has_p = math.isfinite(c.input_tokens_per_s_per_system) and c.input_tokens_per_s_per_system > 0
    has_d = math.isfinite(c.output_tokens_per_s_per_system) and c.output_tokens_per_s_per_system > 0
    if role == "prefill" and not has_p:
        return "no prefill throughput (input_tokens_per_s_per_accelerator)"
    if role == "prefill" and wl.uncached_input_tokens <= 0:
        return "nothing to prefill: every input token is a prefix-cache hit"
    if role in ("aggregated", "decode") and not has_d:
        return "no decode throughput (output_tokens_per_s_per_accelerator)"
    if role == "decode" and not has_p:
        return "its output figure includes prefill time, so its decode-only rate is unknown"
    if role != "prefill" and target is not None:
        speed = c.output_tokens_per_s_per_user
        if not math.isfinite(speed):
            return f"per-user speed: not given; the target is {target:g} token/s per user"
        if speed < target * (1.0 - 1e-6):
            return f"per-user speed: {speed:,.1f} token/s per user, below the target {target:g}"
    if role != "decode" and settings.ttft_target_s is not None and wl.uncached_input_tokens > 0:
        if not has_p:
            return "time to first token: no prefill throughput to check it with"
        if service_s >= settings.ttft_target_s:
            return (f"time to first token: one prefill of {wl.uncached_input_tokens:,.0f} tokens takes "
                    f"{service_s:.3g} s on one replica, not under the target {settings.ttft_target_s:g} s")
    return ""


# ---------------------------------------------------------------------------------------------------------- model
@dataclass
class _Model:
    """The MILP in the form ``min c x, A x <= b, lb <= x <= ub``, with names for rows and columns."""

    c: list[float] = field(default_factory=list)
    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    integer: list[int] = field(default_factory=list)
    rows: list[dict[int, float]] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    row_group: list[str] = field(default_factory=list)
    row_hour: list[int] = field(default_factory=list)
    count_col: dict[tuple[int, int], int] = field(default_factory=dict)   # (pool, hour type or -1) -> column
    flow_col: dict[tuple[int, int], int] = field(default_factory=dict)
    rack_col: dict[int, int] = field(default_factory=dict)
    floor_col: dict[tuple[int, int], int] = field(default_factory=dict)
    slack_col: dict[str, list[int]] = field(default_factory=dict)
    rules: _Rules | None = None

    def var(self, cost: float, integer: bool, ub: float = math.inf) -> int:
        self.c.append(cost)
        self.lb.append(0.0)
        self.ub.append(ub)
        self.integer.append(1 if integer else 0)
        return len(self.c) - 1

    def row(self, coefs: dict[int, float], b: float, group: str, hour: int = -1) -> int:
        self.rows.append(coefs)
        self.b.append(b)
        self.row_group.append(group)
        self.row_hour.append(hour)
        return len(self.rows) - 1

    def matrix(self) -> csr_matrix:
        r, c, v = [], [], []
        for i, coefs in enumerate(self.rows):
            for j, val in coefs.items():
                r.append(i)
                c.append(j)
                v.append(val)
        return coo_matrix((v, (r, c)), shape=(len(self.rows), len(self.c))).tocsr()


@dataclass(frozen=True)
class _Factors:
    """Objective weights: cost per day, or net present cost over the horizon."""

    fixed: float     # per (fixed cost USD/h) of one owned system
    capex: float     # per USD of capex (0 for cost per day: the annuity is in the fixed cost)
    hourly: float    # per USD/h of rent or energy in one hour of the day
    energy: float    # the same for energy (follows the year's demand under growth)


def _factors(s: Scenario, settings: PlanSettings) -> tuple[_Factors, float]:
    """(objective factors, demand multiplier of the design year)."""
    if settings.objective == "cost_per_day":
        return _Factors(24.0, 0.0, 1.0, 1.0), 1.0
    years = np.arange(1, int(s.horizon_years) + 1)
    growth = (1.0 + float(s.demand_growth_per_year)) ** (years - 1)
    design = float(growth.max())
    disc = (1.0 + float(s.cost_of_capital)) ** -years.astype(float)
    pv = float(disc.sum()) * DAYS_PER_YEAR
    return _Factors(24.0 * pv, 1.0, pv, float((growth / design * disc).sum()) * DAYS_PER_YEAR), design


def _build(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario, settings: PlanSettings,
           wl: Workload, rho: dict[int, float], elastic: bool | frozenset[str] = False,
           floors: dict[int, int] | None = None, rules: bool = True) -> tuple[_Model, np.ndarray, np.ndarray]:
    """The MILP (see the module docstring). ``rho``: each pool's TTFT utilization cap; ``floors``: pools whose cap
    holds only from that many systems on, which they then have (or none); ``rules``: with the operations settings
    (:func:`_rule_rows`; an hour's model of stage 2 has none, see :func:`_solve`). Returns (model, hour-type demand
    [request/s], hour-type weights [h])."""
    m = _Model()
    stretch = STRETCHABLE if elastic is True else (elastic or frozenset())
    fac, _ = _factors(s, settings)
    levels, _, weights = _hour_types(wl)
    for p, pool in enumerate(pools):
        c, k = cands[pool.cand], costs[pool.cand]
        if c.ownership == "rent":
            for h, w in enumerate(weights):
                m.count_col[(p, h)] = m.var(fac.hourly * w * k.rent_usd_per_hour, True)
        else:
            # the existing fleet's size is a row (its dual is the value of one more existing system), not a bound
            m.count_col[(p, -1)] = m.var(fac.fixed * (k.opex_usd_per_hour if fac.capex else k.fixed_usd_per_hour)
                                         + fac.capex * k.capex_usd, True)
        for h, w in enumerate(weights):
            m.flow_col[(p, h)] = m.var(fac.energy * w * pool.energy_usd_per_flow_hour * pool.raw_capacity
                                       * wl.energy_scale, False)
    onsite = sorted({pool.cand for pool in pools if cands[pool.cand].ownership != "rent"})
    if settings.max_racks is not None:  # racks are decisions only when they are limited
        for i in onsite:
            m.rack_col[i] = m.var(0.0, True)
    _demand_rows(m, pools, wl, levels, stretch)
    _pool_rows(m, pools, cands, weights, rho, settings, wl)
    _floor_rows(m, pools, floors or {})
    _site_rows(m, pools, cands, costs, s, settings, onsite, weights, wl, stretch)
    if rules:
        _rule_rows(m, pools, cands, settings, wl, levels, weights, rho, floors or {})
    return m, levels, weights


STRETCHABLE = frozenset({"demand input", "demand output", "racks", "site power", "capex budget", "KV link"})
"""Rows an elastic model may stretch at a steep price: the demand (what is left unserved) and each limit."""


def _count(m: _Model, p: int, h: int) -> int:
    return m.count_col.get((p, -1), m.count_col.get((p, h), -1))


def _demand_rows(m: _Model, pools: list[Pool], wl: Workload, levels: np.ndarray, stretch: frozenset[str]) -> None:
    """Every hour: input to prefill and output to decode, each served by aggregated pools or by its own pools."""
    for h, lam in enumerate(levels):
        for group, role, per_request in (("demand input", "prefill", wl.uncached_input_tokens),
                                         ("demand output", "decode", wl.output_tokens)):
            if per_request <= 0:
                continue
            need = lam * per_request  # tokens/s; the row is scaled to 1 = the hour's demand
            coefs = {m.flow_col[(p, h)]: -(per_request if pool.role == "aggregated" else 1.0) * pool.raw_capacity
                     / need for p, pool in enumerate(pools) if pool.role in ("aggregated", role)}
            if group in stretch:  # unserved share of the demand, at a price far above any plan
                col = m.var(BIG_PENALTY * 10.0, False)
                m.slack_col.setdefault(group, []).append(col)
                coefs[col] = -1.0
            m.row(coefs, -1.0, group, h)


def _floor_rows(m: _Model, pools: list[Pool], floors: dict[int, int]) -> None:
    """Either none of a pool or at least its floor: ``floor y <= n <= big y`` with a binary ``y`` per count."""
    for (p, h), col in list(m.count_col.items()):
        if p not in floors:
            continue
        y = m.var(0.0, True, 1.0)
        m.floor_col[(p, h)] = y
        m.row({y: float(floors[p]), col: -1.0}, 0.0, "ttft floor", h)
        m.row({col: 1.0, y: -float(max(100 * floors[p], 10_000))}, 0.0, "ttft floor", h)


def _pool_rows(m: _Model, pools: list[Pool], cands: list[Candidate], weights: np.ndarray, rho: dict[int, float],
               settings: PlanSettings, wl: Workload) -> None:
    """Capacity and TTFT of every pool in every hour; the existing fleet's size; racks of on-site candidates."""
    for p, pool in enumerate(pools):
        for h in range(len(weights)):
            n = _count(m, p, h)
            m.row({m.flow_col[(p, h)]: 1.0, n: -pool.capacity / pool.raw_capacity}, 0.0, "capacity", h)
            if p in rho:
                m.row({m.flow_col[(p, h)]: pool.prefill_weight * pool.raw_capacity / pool.prefill_capacity,
                       n: -rho[p]}, 0.0, "ttft", h)
    by_cand: dict[int, list[int]] = {}
    for p, pool in enumerate(pools):
        if cands[pool.cand].ownership != "rent":
            by_cand.setdefault(pool.cand, []).append(m.count_col[(p, -1)])
    for i, cols in by_cand.items():
        if math.isfinite(cands[i].max_systems):
            m.row(dict.fromkeys(cols, 1.0), cands[i].max_systems, f"existing fleet: {cands[i].name}")


def _site_rows(m: _Model, pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario,
               settings: PlanSettings, onsite: list[int], weights: np.ndarray, wl: Workload,
               stretch: frozenset[str]) -> None:
    """Racks, site power, capex budget and the KV link."""
    counts = {i: [m.count_col[(p, -1)] for p, pool in enumerate(pools) if pool.cand == i] for i in onsite}
    for i in m.rack_col:
        coefs = dict.fromkeys(counts[i], 1.0)
        coefs[m.rack_col[i]] = -_systems_per_rack(cands[i], s, cands[i].cooling_mode)
        m.row(coefs, 0.0, "rack fill")
    limits: list[tuple[str, dict[int, float], float]] = []
    if settings.max_racks is not None:
        limits.append(("racks", {m.rack_col[i]: 1.0 for i in onsite}, float(settings.max_racks)))
    if s.site_power_mw is not None:
        limits.append(("site power", {col: costs[i].facility_kw / 1000.0 for i in onsite for col in counts[i]},
                       float(s.site_power_mw)))
    if settings.capex_budget_usd is not None:
        limits.append(("capex budget", {col: costs[i].capex_usd / 1e6 for i in onsite for col in counts[i]},
                       float(settings.capex_budget_usd) / 1e6))
    for group, coefs, limit in limits:
        if group in stretch:
            col = m.var(BIG_PENALTY / max(limit, 1e-9), False)
            m.slack_col[group] = [col]
            coefs = {**coefs, col: -1.0}
        m.row(coefs, limit, group)
    if s.kv_link_gb_per_s is not None and any(pool.role == "prefill" for pool in pools):
        if not math.isfinite(wl.kv_bytes_per_token):
            raise ValueError("kv_link_gb_per_s: the KV-cache bytes per token need a catalog model (model)")
        for h in range(len(weights)):
            coefs = {m.flow_col[(p, h)]: pool.raw_capacity * wl.kv_bytes_per_token / 1e9
                     for p, pool in enumerate(pools) if pool.role == "prefill"}
            if "KV link" in stretch:
                col = m.var(BIG_PENALTY / float(s.kv_link_gb_per_s), False)
                m.slack_col.setdefault("KV link", []).append(col)
                coefs[col] = -1.0
            m.row(coefs, float(s.kv_link_gb_per_s), "KV link", h)


# ------------------------------------------------------------------------------------------- operations settings
@dataclass
class _Rules:
    """The columns of the operations settings, for stage 2 to close the pools stage 1 left closed and to hold each
    rented pool's block (:func:`_apply_rules`)."""

    open_col: dict[int, int]                 # pool -> binary: the pool has systems (with a pool limit or size)
    closes: dict[int, int]                   # a rented count column -> its pool's binary
    rented: dict[int, tuple[list[int], int]]  # rented pool -> (its count in each hour type, its size)
    block: list[int]                         # the hour types of the rental block (the day's busiest hours)
    min_systems: int
    weights: np.ndarray                      # hours of each hour type [h]
    floors: dict[int, int] = field(default_factory=dict)  # the TTFT floors the model was built with


def rules_active(settings: PlanSettings, pools: list[Pool], cands: list[Candidate]) -> dict[str, bool]:
    """Which operations settings can change a plan: a pool limit below the pools there are, a rental block longer
    than an hour with a rented pool, a smallest pool above one system."""
    rented = any(cands[pool.cand].ownership == "rent" for pool in pools)
    return {"max_pools": settings.max_pools is not None and settings.max_pools < len(pools),
            "min_rental_hours": rented and settings.min_rental_hours > 1.0,
            "min_pool_systems": settings.min_pool_systems > 1}


def _most_systems(pool: Pool, levels: np.ndarray, wl: Workload, rho: float | None, floor: int, least: int) -> int:
    """More systems than a pool would ever use: those that carry the busiest hour's whole demand of its role alone
    (at its capacity, and at its TTFT cap), plus one; at least its TTFT floor and the smallest pool. The big-M of
    the rows that open a pool (a tight one keeps the relaxation close)."""
    per = {"aggregated": 1.0, "prefill": wl.uncached_input_tokens, "decode": wl.output_tokens}[pool.role]
    flow = float(np.max(levels)) * per  # the pool's flow units: requests/s, or tokens/s
    need = flow / pool.capacity
    if rho is not None and pool.prefill_weight > 0:
        need = max(need, flow * pool.prefill_weight / (pool.prefill_capacity * rho))
    return max(math.ceil(need * (1.0 + 1e-9)) + 1, floor, least)


def block_hours(levels: np.ndarray, weights: np.ndarray, hours: float) -> list[int]:
    """The hour types a rental block of ``hours`` takes: the day's busiest, and among hours of equal demand those
    nearest the busiest hour (so the block is one stretch around the peak where it can be), until they add up to
    ``hours``.

    >>> block_hours(np.array([1.0, 1, 1, 3, 2, 1]), np.ones(6), 3)
    [3, 4, 2]
    """
    top = int(np.argmax(levels))
    n = len(levels)
    order = sorted(range(n), key=lambda h: (-float(levels[h]), min(abs(h - top), n - abs(h - top)), h))
    taken, held = [], 0.0
    for h in order:
        if held >= hours - 1e-9:
            break
        taken.append(h)
        held += float(weights[h])
    return taken


def _rule_rows(m: _Model, pools: list[Pool], cands: list[Candidate], settings: PlanSettings, wl: Workload,
               levels: np.ndarray, weights: np.ndarray, rho: dict[int, float], floors: dict[int, int]) -> None:
    """The operations settings as rows. With a pool limit or a smallest pool, each pool has a binary ``z`` (it has
    systems) and a bound ``M`` (:func:`_most_systems`):

    * distinct pools: ``sum z <= max_pools``;
    * an on-site pool: ``k z <= n <= M z`` (``k`` the smallest pool);
    * a rented pool of size ``S``: ``m_h <= S`` every hour, ``S <= M z`` and ``S >= k z``; with a rental block of
      ``B`` hours, ``m_h >= S`` in the day's ``B`` busiest hours (:func:`block_hours`): the pool is held at its full
      size through the block, so every rented system is held at least ``B`` hours (a stack of rented systems is as
      short as its top layer), and more in the hours it needs them.
    """
    active = rules_active(settings, pools, cands)
    if not any(active.values()):
        return
    k = int(settings.min_pool_systems)
    block = block_hours(levels, weights, float(settings.min_rental_hours)) if active["min_rental_hours"] else []
    # a day of one demand level is one hour type: a pool rented in it is rented all day, so no block is needed
    rules = _Rules({}, {}, {}, block if len(levels) > 1 else [], k, np.asarray(weights, dtype=float), dict(floors))
    binaries = active["max_pools"] or active["min_pool_systems"]
    for p, pool in enumerate(pools):
        big = float(_most_systems(pool, levels, wl, rho.get(p), floors.get(p, 0), k))
        z = m.var(0.0, True, 1.0) if binaries else -1
        if binaries:
            rules.open_col[p] = z
        if cands[pool.cand].ownership != "rent":
            n = m.count_col[(p, -1)]
            if binaries:
                m.row({n: 1.0, z: -big}, 0.0, "pool open")
            if k > 1:
                m.row({z: float(k), n: -1.0}, 0.0, "smallest pool")
            continue
        size = m.var(0.0, False)
        counts = [m.count_col[(p, h)] for h in range(len(weights))]
        if binaries:
            rules.closes.update(dict.fromkeys(counts, z))
            m.row({size: 1.0, z: -big}, 0.0, "pool open")
        if k > 1:
            m.row({z: float(k), size: -1.0}, 0.0, "smallest pool")
        for h, n in enumerate(counts):
            m.row({n: 1.0, size: -1.0}, 0.0, "pool size", h)
            if h in rules.block:
                m.row({size: 1.0, n: -1.0}, 0.0, "rental block", h)
        rules.rented[p] = (counts, size)
    if active["max_pools"]:
        m.row(dict.fromkeys(rules.open_col.values(), 1.0), float(settings.max_pools or 0), "distinct pools")
    m.rules = rules


def _apply_rules(m: _Model, x: np.ndarray) -> np.ndarray:
    """Stage 2's rented systems made to follow the operations settings: each rented pool's size is its largest
    hour (at least the smallest pool), held through the rental block's hours; then the binaries say which pools
    are open. More systems never break a row."""
    rules = m.rules
    x = x.copy()
    if rules is None:
        return x
    for p, (counts, size) in rules.rented.items():
        n = np.array([round(float(x[c])) for c in counts], dtype=float)
        top = max(float(n.max()), float(rules.min_systems)) if n.max() > 0 else 0.0
        if top > 0:
            n[rules.block] = top
        for c, v in zip(counts, n, strict=True):
            x[c] = v
        x[size] = top
        if p in rules.open_col:
            x[rules.open_col[p]] = 1.0 if top > 0 else 0.0
    for p, z in rules.open_col.items():
        if p not in rules.rented:
            x[z] = 1.0 if round(float(x[m.count_col[(p, -1)]])) > 0 else 0.0
    return x


# ---------------------------------------------------------------------------------------------------------- solve
MIP_REL_GAP = 1e-3
"""HiGHS stops when the plan is proven within 0.1 % of the best possible (the gap is reported)."""
TIME_LIMIT_S = 30.0
EXACT_MAX_INTEGERS = 60
EXACT_NODE_LIMIT = 500
"""Up to 60 integer decisions the whole MILP is tried at once; if it is not proven within 500 branch-and-bound
nodes the two-stage answer is computed too and the cheaper kept. Larger models go straight to two stages."""
COVER_NODE_LIMIT = 5000
"""An hour's exact search (:mod:`economics.covering`) gives up after this many nodes; HiGHS then solves it."""
HOURLY_GAP = 1e-3
HOURLY_NODE_LIMIT = 50
PRESOLVE_LIMITED = False
"""Stage 2 (rented systems hour by hour): the exact covering search of :mod:`economics.covering`; an hour it does not
take, the hour's LP rounded up, then a MILP that stops within 0.1 % of what that hour decides (rent and energy) or
after 50 nodes; the better is kept. The gap reported is against stage 1's bound either way."""


@dataclass
class _Solution:
    x: np.ndarray | None
    fun: float
    bound: float
    status: int
    message: str


def _milp(m: _Model, integer: list[int] | None = None, lb: list[float] | None = None,
          ub: list[float] | None = None, gap: float = MIP_REL_GAP, nodes: int | None = None) -> Any:
    cons = [LinearConstraint(m.matrix(), -np.inf, np.asarray(m.b))] if m.rows else []
    options: dict[str, Any] = {"mip_rel_gap": gap, "time_limit": TIME_LIMIT_S}
    if nodes is not None:  # a node limit, not a time limit: the same answer on a busy machine as on an idle one
        options["node_limit"] = nodes
        options["presolve"] = PRESOLVE_LIMITED
    return milp(np.asarray(m.c), constraints=cons, integrality=np.asarray(integer or m.integer),
                bounds=Bounds(np.asarray(lb or m.lb), np.asarray(ub or m.ub)), options=options)


def _solve(m: _Model, rented: set[int], hourly: list[tuple[_Model, dict[int, int]]] | None = None) -> _Solution:
    """Solve the MILP. Small models (or without rent) at once. Larger ones in two stages: (1) the owned base with
    rented counts continuous, a relaxation whose bound is a lower bound of the whole problem; (2) the owned counts
    fixed, the rented counts in whole systems, each hour on its own, exactly where :mod:`economics.covering` takes
    it (``hourly``: one model per hour type and its column map into ``m``; with the base fixed the hours no longer
    interact). The bound reported is stage 1's, so the gap is an honest one."""
    exact: _Solution | None = None
    if sum(m.integer) <= EXACT_MAX_INTEGERS or not rented or hourly is None:
        small = not rented or hourly is None
        res = _milp(m, nodes=None if small else EXACT_NODE_LIMIT)
        bound = float(getattr(res, "mip_dual_bound", math.nan) or math.nan)
        # the binaries of the operations settings cost nothing, so the solver may leave one at 1 over an empty
        # pool: they are read off the counts (which already follow the settings)
        xs = _apply_rules(m, np.asarray(res.x)) if res.x is not None else None
        exact = _Solution(xs, float(np.dot(m.c, xs)) if xs is not None else math.nan, bound, res.status, res.message)
        if small or res.status == 0:
            return exact
    first = _milp(m, integer=[0 if j in rented else v for j, v in enumerate(m.integer)])
    if first.x is None:
        return _Solution(None, math.nan, math.nan, first.status, first.message)
    x = _stage_two(m, np.asarray(first.x, dtype=float), rented, hourly or [])
    if x is None:
        return _Solution(None, math.nan, math.nan, 2, "an hour cannot be served with the owned base fixed")
    x = _apply_rules(m, x)
    bound = float(getattr(first, "mip_dual_bound", first.fun) or first.fun)
    if not _satisfies(m, x):  # not expected (more systems break no row); the whole MILP, node-limited, instead
        res = _milp(m, nodes=EXACT_NODE_LIMIT)
        return _Solution(res.x, float(res.fun) if res.x is not None else math.nan,
                         float(getattr(res, "mip_dual_bound", math.nan) or math.nan), res.status, res.message)
    staged = _Solution(x, float(np.dot(m.c, x)), bound, 0, "two stages")
    if exact is not None and exact.x is not None:
        better = exact if exact.fun <= staged.fun else staged
        return replace(better, bound=max(bound, exact.bound) if math.isfinite(exact.bound) else bound)
    return staged


def _stage_two(m: _Model, first: np.ndarray, rented: set[int],
               hourly: list[tuple[_Model, dict[int, int]]]) -> np.ndarray | None:
    """Each hour's rented systems with stage 1's owned base fixed (and the pools it closed closed). With a rental
    block the busiest hour goes first, its rented systems priced for every hour of the block (they are held
    through it), and its rented pool sizes then hold: every block hour has them, no other hour more."""
    x = first.copy()
    rules = m.rules or _Rules({}, {}, {}, [], 1, np.ones(len(hourly)))
    closes, block = rules.closes, rules.block
    pool_of = {col: p for p, (counts, _) in rules.rented.items() for col in counts}
    order = [block[0], *[h for h in range(len(hourly)) if h != block[0]]] if block else list(range(len(hourly)))
    held = float(rules.weights[block].sum()) if block else 0.0  # hours the block's rented systems are paid for
    sizes: dict[int, float] = {}
    for h in order:
        sub, cols = hourly[h]
        lb, ub = list(sub.lb), list(sub.ub)
        for j_sub, j in cols.items():
            if sub.integer[j_sub] and j not in rented:
                lb[j_sub] = ub[j_sub] = float(round(first[j]))
                sub.c[j_sub] = 0.0  # a fixed cost: left out so the gap applies to what the hour decides
            elif j in closes and round(float(first[closes[j]])) == 0:
                ub[j_sub] = 0.0  # a rented pool stage 1 left closed (the limit on distinct pools)
            elif j in pool_of and block and h == block[0]:
                sub.c[j_sub] *= held / float(rules.weights[h])
            elif j in pool_of and block:
                size = sizes.get(pool_of[j], 0.0)
                lb[j_sub], ub[j_sub] = (size, size) if h in block else (0.0, min(ub[j_sub], size))
        best = _covered_hour(sub, lb, ub)
        if best is None:  # not a covering problem of the usual shape, or too many nodes: HiGHS, as before
            best = _highs_hour(sub, lb, ub, cols, first)
        if best is None:
            return None
        for j_sub, j in cols.items():
            x[j] = best[j_sub]
            if j in pool_of and block and h == block[0]:
                sizes[pool_of[j]] = float(round(best[j_sub]))
    return x


def _satisfies(m: _Model, x: np.ndarray) -> bool:
    """Every row and bound of ``m`` holds at ``x`` (within a relative 1e-7), the integers whole."""
    slack = np.asarray(m.b) - m.matrix() @ x
    whole = all(abs(x[j] - round(x[j])) <= 1e-6 for j, v in enumerate(m.integer) if v)
    inside = bool(np.all(x >= np.asarray(m.lb) - 1e-9) and np.all(x <= np.asarray(m.ub) + 1e-9))
    return bool((slack >= -1e-7 * np.maximum(1.0, np.abs(m.b))).all()) and whole and inside


def _highs_hour(sub: _Model, lb: list[float], ub: list[float], cols: dict[int, int],
                first: np.ndarray) -> np.ndarray | None:
    """An hour the exact covering search does not take: its LP rounded up, then a node-limited MILP."""
    best, floor_cost = _rounded_hour(sub, lb, ub, cols, first)
    if best is None or float(np.dot(sub.c, best)) > floor_cost + HOURLY_GAP * max(abs(floor_cost), 1e-9):
        res = _milp(sub, lb=lb, ub=ub, gap=HOURLY_GAP, nodes=HOURLY_NODE_LIMIT)
        if res.x is not None and (best is None or float(np.dot(sub.c, res.x)) < float(np.dot(sub.c, best))):
            best = np.asarray(res.x)
    return best


_COVER_ROLES = {(True, True): covering.AGGREGATED, (True, False): covering.PREFILL, (False, True): covering.DECODE}


def _cover_problem(sub: _Model, lb: list[float], ub: list[float]) -> tuple[covering.Hour, list[int], list[int]] | None:
    """An hour with the owned fleet fixed as :class:`economics.covering.Hour`, with the count and flow column of
    each of its pools; None when a row or column is of another kind (slacks, a free column outside the pools, an
    aggregated pool covering unequal shares, KV bytes that differ per prefill token, a fixed row that fails)."""
    pools = sorted((p, n) for (p, _), n in sub.count_col.items())
    counts, flows = [n for _, n in pools], [sub.flow_col[(p, 0)] for p, _ in pools]
    fixed = [lb[j] == ub[j] for j in range(len(sub.c))]
    if sub.slack_col or min(sub.c) < 0 or any(not fixed[j] for j in set(range(len(sub.c))) - set(counts) - set(flows)):
        return None
    share: dict[str, dict[int, float]] = {"demand input": {}, "demand output": {}}
    need = {"demand input": 0.0, "demand output": 0.0}
    kappa, kv, link = dict.fromkeys(flows, math.inf), {}, math.inf
    count_of = dict(zip(flows, counts, strict=True))
    for row, b, group in zip(sub.rows, sub.b, sub.row_group, strict=True):
        if group in share:
            share[group], need[group] = {j: -v for j, v in row.items()}, -b
        elif group in ("capacity", "ttft") and len(row) == 2 and b == 0:
            (f, alpha), (n, beta) = sorted(row.items(), key=lambda item: item[0] not in kappa)  # the flow first
            if f not in kappa or count_of[f] != n or alpha <= 0 or beta > 0:
                return None
            kappa[f] = min(kappa[f], -beta / alpha)
        elif group == "KV link":
            kv, link = row, b
        elif any(not fixed[j] for j in row) or sum(v * lb[j] for j, v in row.items()) > b + 1e-9 * max(1.0, abs(b)):
            return None
    a_in = np.array([share["demand input"].get(f, 0.0) for f in flows])
    a_out = np.array([share["demand output"].get(f, 0.0) for f in flows])
    both = (a_in > 0) & (a_out > 0)
    if (a_in < 0).any() or (a_out < 0).any() or not np.allclose(a_in[both], a_out[both], rtol=1e-12, atol=0.0):
        return None
    role = np.array([_COVER_ROLES.get((bool(i > 0), bool(o > 0)), covering.DECODE)
                     for i, o in zip(a_in, a_out, strict=True)])
    per_token = [kv[f] / a_in[k] for k, f in enumerate(flows) if f in kv]
    if any(role[k] != covering.PREFILL for k, f in enumerate(flows) if f in kv) or (
            per_token and not np.allclose(per_token, per_token[0], rtol=1e-9, atol=0.0)):
        return None
    hour = covering.Hour(role, np.maximum(a_in, a_out), np.array([kappa[f] for f in flows]),
                         np.array([sub.c[n] for n in counts]), np.array([sub.c[f] for f in flows]),
                         np.array([lb[n] for n in counts]), np.array([ub[n] for n in counts]),
                         need["demand input"], need["demand output"],
                         link / per_token[0] if per_token and per_token[0] > 0 else math.inf)
    return hour, counts, flows


def _covered_hour(sub: _Model, lb: list[float], ub: list[float]) -> np.ndarray | None:
    """The hour's cheapest whole rented systems by :func:`economics.covering.cheapest` (exact), as a solution of
    ``sub`` checked against every one of its rows; None when the hour is not of that shape or the check fails."""
    problem = _cover_problem(sub, lb, ub)
    cover = covering.cheapest(problem[0], COVER_NODE_LIMIT) if problem is not None else None
    if problem is None or cover is None:
        return None
    x = np.array(lb, dtype=float)
    x[problem[1]], x[problem[2]] = cover.systems, cover.flow
    slack = np.asarray(sub.b) - sub.matrix() @ x
    return x if (slack >= -1e-7 * np.maximum(1.0, np.abs(sub.b))).all() else None


def _rounded_hour(sub: _Model, lb: list[float], ub: list[float], cols: dict[int, int],
                  first: np.ndarray) -> tuple[np.ndarray | None, float]:
    """One hour's rented systems from its LP, rounded up (more systems never break a row; a pool given any
    systems is given at least its floor): a whole-system answer at once, which the MILP then tries to beat when
    it is not already within the gap of the LP's cost (returned too, a lower bound of the hour). The LP is stage
    1's answer for that hour when it maps onto every column (with the base fixed the hours are independent, so
    stage 1's hour is that hour's LP); else it is solved."""
    if len(cols) == len(sub.c):
        x = np.array([float(first[cols[j]]) for j in range(len(sub.c))])
        lp_cost = float(np.dot(sub.c, x))
    else:
        lp = _milp(sub, integer=[0] * len(sub.c), lb=lb, ub=ub)
        if lp.x is None:
            return None, math.nan
        x, lp_cost = np.array(lp.x, dtype=float), float(lp.fun)
    for col in sub.count_col.values():
        x[col] = math.ceil(x[col] - 1e-7)
    for key, y in sub.floor_col.items():
        x[y] = 1.0 if x[sub.count_col[key]] > 0 else 0.0
        if x[y]:
            x[sub.count_col[key]] = max(x[sub.count_col[key]], sub.rows[_floor_row(sub, y)][y])
    return x, lp_cost


def _floor_row(sub: _Model, y: int) -> int:
    """The row ``floor y - n <= 0`` of a floor binary."""
    return next(i for i, r in enumerate(sub.rows) if sub.row_group[i] == "ttft floor" and r.get(y, 0.0) > 0)


def _hourly_models(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario,
                   settings: PlanSettings, wl: Workload, rho: dict[int, float], m: _Model,
                   elastic: bool | frozenset[str] = False,
                   floors: dict[int, int] | None = None) -> list[tuple[_Model, dict[int, int]]]:
    """One model per hour type (the same rows for that hour alone) and the map of its columns into ``m``."""
    levels, _, _ = _hour_types(wl)
    out = []
    for h, level in enumerate(levels):
        one = replace(wl, hourly_requests_per_s=np.array([level]))
        sub, _, _ = _build(pools, cands, costs, s, settings, one, rho, elastic, floors, rules=False)
        cols = {sub_col: m.count_col[(p, h if hh >= 0 else -1)] for (p, hh), sub_col in sub.count_col.items()}
        cols.update({sub_col: m.floor_col[(p, h if hh >= 0 else -1)] for (p, hh), sub_col in sub.floor_col.items()})
        cols.update({sub_col: m.flow_col[(p, h)] for (p, _), sub_col in sub.flow_col.items()})
        cols.update({sub_col: m.rack_col[i] for i, sub_col in sub.rack_col.items()})
        for group, sub_cols in sub.slack_col.items():
            cols.update(dict(zip(sub_cols, _hour_slacks(m, group, h, len(levels)), strict=False)))
        out.append((sub, cols))
    return out


def _hour_slacks(m: _Model, group: str, h: int, hours: int) -> list[int]:
    cols = m.slack_col.get(group, [])
    return [cols[h]] if len(cols) == hours else list(cols)


def _rented_cols(m: _Model, pools: list[Pool], cands: list[Candidate]) -> set[int]:
    """The hour-by-hour decisions stage 1 relaxes: rented counts and their floors."""
    cols = {col for (p, h), col in m.count_col.items() if h >= 0 and cands[pools[p].cand].ownership == "rent"}
    cols |= {col for (p, h), col in m.floor_col.items() if h >= 0 and cands[pools[p].cand].ownership == "rent"}
    return cols


def _rho(pool: Pool, servers: int, settings: PlanSettings) -> float:
    assert settings.ttft_target_s is not None
    return queueing.max_utilization(max(1, servers), pool.service_s, settings.ttft_target_s,
                                    settings.ttft_percentile, settings.prefill_service_cv2)


def _counts(m: _Model, x: np.ndarray, p: int, hours: int) -> np.ndarray:
    return np.array([round(float(x[_count(m, p, h)])) for h in range(hours)], dtype=float)


def _ttft_ok(m: _Model, x: np.ndarray, pools: list[Pool], settings: PlanSettings, hours: int) -> bool:
    """Every pool-hour of a solution meets the TTFT target at its own number of replicas."""
    for p, pool in enumerate(pools):
        if pool.prefill_weight <= 0 or settings.ttft_target_s is None:
            continue
        n = _counts(m, x, p, hours)
        for h in range(hours):
            load = pool.prefill_weight * pool.raw_capacity * float(x[m.flow_col[(p, h)]])
            if n[h] <= 0 or load <= 0:
                continue
            rho = load / (pool.prefill_capacity * n[h])
            if rho > _rho(pool, int(n[h]) * pool.servers_per_system, settings) + 1e-7:
                return False
    return True


def _solve_refined(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario,
                   settings: PlanSettings, wl: Workload,
                   refine: bool = True) -> tuple[_Model, Any, dict[int, float], list[str]]:
    """TTFT in two passes. (1) Every pool's utilization cap at one system's replicas: safe, since more replicas
    only allow more. (2) For each pool the first pass used, its floor: the fewest systems that carry its busiest
    hour within the target at their own size (a search over n, as n rho_max(n) grows with n); the cap at that
    size holds for any pool at least that big, so the pool is given either none or at least its floor (a binary).
    Only on-site pools get floors (one count a day); rented pools, sized hour by hour, keep the safe cap.
    The second plan is kept when it is no dearer and passes the check at its own pool sizes. Returns (model,
    result, caps, notes). ``refine=False``: the first pass only (enough to see which pools a plan uses)."""
    ttft = settings.ttft_target_s is not None and wl.uncached_input_tokens > 0
    rho = {p: _rho(pool, pool.servers_per_system, settings) for p, pool in enumerate(pools)
           if ttft and pool.prefill_weight > 0}
    m, _, weights = _build(pools, cands, costs, s, settings, wl, rho)
    res = _solve(m, _rented_cols(m, pools, cands), _hourly_models(pools, cands, costs, s, settings, wl, rho, m))
    notes: list[str] = []
    if not rho or res.x is None or not refine:
        return m, res, rho, notes
    floors: dict[int, int] = {}
    caps = dict(rho)
    for p in rho:
        n = _counts(m, res.x, p, len(weights))
        if not (n > 0).any() or cands[pools[p].cand].ownership == "rent":
            continue
        pool = pools[p]
        load = max(pool.prefill_weight * pool.raw_capacity * float(res.x[m.flow_col[(p, h)]])
                   for h in range(len(weights)))
        floors[p] = _fewest_systems(pool, load, int(n.max()), settings)
        caps[p] = _rho(pool, floors[p] * pool.servers_per_system, settings)
    if all(caps[p] <= rho[p] * 1.01 for p in floors):  # pooling would raise no cap by even 1 %
        return m, res, rho, notes
    m2, _, _ = _build(pools, cands, costs, s, settings, wl, caps, floors=floors)
    res2 = _solve(m2, _rented_cols(m2, pools, cands), _hourly_models(pools, cands, costs, s, settings, wl, caps, m2,
                                                                     floors=floors))
    if res2.x is not None and res2.fun <= res.fun + 1e-9 and _ttft_ok(m2, res2.x, pools, settings, len(weights)):
        return m2, res2, caps, notes
    notes.append("TTFT: the plan with pooled caps was no better or failed the check; the safe plan is kept")
    return m, res, rho, notes


def _solve_open(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario, settings: PlanSettings,
                wl: Workload) -> tuple[_Model, Any, dict[int, float], list[str], list[Pool]]:
    """:func:`_solve_refined`, then, with the operations settings, a few pools solved again on their own: a few pools
    make a small model, solved whole (a rented pool's hours coupled by its rental block) where the large one went in
    two stages. The pools tried are those the plan chose and, with a rental block, those of the plan by the hour
    (its relaxation couples no hours, so it often chooses better). The cheapest plan is kept; the lower bound stays
    the large model's, so the gap reported is against every pool. Returns (model, result, TTFT caps, notes, the
    pools of the model)."""
    m, res, rho, notes = _solve_refined(pools, cands, costs, s, settings, wl)
    if m.rules is None or res.x is None or res.message != "two stages":
        return m, res, rho, notes, pools
    hours = len(_hour_types(wl)[2])
    chosen = [[p for p in range(len(pools)) if _counts(m, res.x, p, hours).max() > 0]]
    if m.rules.block:
        hourly = replace(settings, min_rental_hours=1.0)
        m1, res1, _, _ = _solve_refined(pools, cands, costs, s, hourly, replace(wl, clock_hours=False), refine=False)
        if res1.x is not None:
            chosen.append([p for p in range(len(pools)) if _counts(m1, res1.x, p, len(_hour_types(
                replace(wl, clock_hours=False))[2])).max() > 0])
    best: tuple[_Model, Any, dict[int, float], list[Pool]] = (m, res, rho, pools)
    for used in dict.fromkeys(tuple(u) for u in chosen):
        few = [pools[p] for p in used]
        caps = {i: rho[p] for i, p in enumerate(used) if p in rho}
        floors = {i: int(m.rules.floors[p]) for i, p in enumerate(used) if p in m.rules.floors}
        m2, _, _ = _build(few, cands, costs, s, settings, wl, caps, floors=floors)
        res2 = _solve(m2, _rented_cols(m2, few, cands), _hourly_models(few, cands, costs, s, settings, wl, caps, m2,
                                                                       floors=floors))
        if res2.x is not None and res2.fun < best[1].fun - 1e-9 * max(1.0, abs(best[1].fun)) and _ttft_ok(
                m2, res2.x, few, settings, hours):
            best = (m2, replace(res2, bound=res.bound, message="two stages, then its pools"), caps, few)
    return best[0], best[1], best[2], notes, best[3]


def _fewest_systems(pool: Pool, load: float, most: int, settings: PlanSettings) -> int:
    """Fewest systems of a pool whose prefill capacity at the TTFT cap of their own size carries ``load``
    [uncached input tokens/s] (binary search: n rho_max(n) grows with n). At most ``most``."""
    lo, hi = 1, max(1, most)
    while lo < hi:
        mid = (lo + hi) // 2
        if load <= mid * _rho(pool, mid * pool.servers_per_system, settings) * pool.prefill_capacity * (1 + 1e-9):
            hi = mid
        else:
            lo = mid + 1
    return lo


def plan(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
         candidates: list[Candidate] | None = None, accelerators: list[str] | None = None,
         costed: bool = True) -> PlanResult:
    """The cheapest plan for the scenario's demand, targets and facility (see the module docstring).

    ``candidates`` (e.g. from :func:`read_candidates_csv`) replace the catalog; else the catalog's accelerators
    (``accelerators``, default all) are used with their estimated or measured rates, plus the existing fleet.
    ``costed``: with what each operations setting costs (``setting_costs``; :func:`costs_of_settings` adds it to a
    plan made without). Never raises for a plan that cannot be met: the result says why, with the numbers.

    One request/s of 100 output tokens on a system serving 100 tokens/s bought for 3,650 USD over one year at 0 %
    (3,650 / 365 = 10 USD a day, nothing else charged):

    >>> s = Scenario(name="d", input_tokens_per_request=0, output_tokens_per_request=100,
    ...              demand_output_tokens_per_day=8_640_000, cost_of_capital=0, depreciation_years=1,
    ...              maintenance_fraction_per_year=0, electricity_usd_per_kwh=0, colocation_usd_per_kw_month=0)
    >>> box = Candidate("box", "own", accelerators_per_system=1, system_power_kw=1.0, price_usd_per_system=3650.0,
    ...                 output_tokens_per_s_per_system=100.0, accelerators_per_replica=1, roles=("aggregated",))
    >>> r = plan(s, PlanSettings(demand_profile="flat", spares=False), [box])
    >>> r.plan[["name", "role", "systems"]].values.tolist(), round(r.summary["cost_usd_per_day"], 2)
    ([['box', 'aggregated', 1]], 10.0)
    """
    s = as_scenario(scenario)
    settings = settings or PlanSettings()
    excluded: list[tuple[str, str]] = []
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    cands, more = hosting_variants(candidates, s)
    return solve_plan(s, settings, cands, excluded + more, costed)


def costs_of_settings(summary: dict[str, Any], scenario: Scenario | dict[str, Any], settings: PlanSettings,
                      candidates: list[Candidate] | None = None,
                      accelerators: list[str] | None = None) -> pd.DataFrame:
    """What each operations setting costs (:func:`setting_costs`) for a plan made by :func:`plan` with
    ``costed=False`` from the same inputs (its ``summary``): the Plan page draws the plan first and this after."""
    s = as_scenario(scenario)
    excluded: list[tuple[str, str]] = []
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    cands, more = hosting_variants(candidates, s)
    _, growth = _factors(s, settings)
    pools, _ = build_pools(cands, s, settings, workload(s, settings, growth))
    return setting_costs(summary, s, settings, cands, excluded + more, rules_active(settings, pools, cands))


def solve_plan(s: Scenario, settings: PlanSettings, cands: list[Candidate],
               excluded: list[tuple[str, str]], costed: bool = True) -> PlanResult:
    """:func:`plan` for hosting variants already made; ``costed``: with what each operations setting costs
    (:func:`setting_costs`, one more plan per setting that can change the answer)."""
    _, growth = _factors(s, settings)
    wl = workload(s, settings, growth)
    pools, role_excluded = build_pools(cands, s, settings, wl)
    active = rules_active(settings, pools, cands)  # of every pool (the plan's model may narrow them)
    if active["min_rental_hours"]:
        wl = replace(wl, clock_hours=True)
    given, excluded = excluded, excluded + role_excluded  # a plan made again makes its role exclusions again
    table = _candidate_table(cands, pools, excluded, s)
    reason = _precheck(pools, wl, s, settings, excluded)
    if reason:
        return _infeasible(reason, table, wl, s)
    costs = [candidate_costs(c, s) for c in cands]
    m, res, rho, notes, pools = _solve_open(pools, cands, costs, s, settings, wl)
    if res.x is None:
        if res.status != 2:
            return _infeasible(f"solver: {res.message}", table, wl, s)
        needs, fixes = _relaxations(pools, cands, costs, s, settings, wl, rho, given)
        # each limit that alone would make a plan, with the least of it; else the limits stretched together
        why = "; or ".join(needs) if needs else _diagnose(pools, cands, costs, s, settings, wl, rho)
        return _partial(why, fixes, pools, cands, costs, s, settings, wl, rho, table)
    result = _result(m, res, pools, cands, costs, s, settings, wl, table, notes)
    if costed:
        result.setting_costs = setting_costs(result.summary, s, settings, cands, given, active)
        result.constraints = limits_with_costs(result.constraints, result.setting_costs)
    return result


RULE_OFF: dict[str, Any] = {"max_pools": None, "min_rental_hours": 1.0, "min_pool_systems": 1}
"""Each operations setting at the value that makes it no rule."""


def setting_costs(summary: dict[str, Any], s: Scenario, settings: PlanSettings, cands: list[Candidate],
                  excluded: list[tuple[str, str]], active: dict[str, bool]) -> pd.DataFrame:
    """What each operations setting costs: the plan solved again with that one setting off (the others kept), and
    the difference of the cost per day. A setting that cannot change the plan (a pool limit above the pools there
    are, a rental block with nothing to rent) costs nothing and is not solved again. A difference below zero is the
    solvers' gap, not a saving, and is shown as nothing."""
    rows = []
    cost = float(summary["cost_usd_per_day"])
    for name, off in RULE_OFF.items():
        value, spec = getattr(settings, name), PLAN_FIELDS[name]
        row = {"setting": name, "value": value, "unit": spec.unit, "cost_usd_per_day": cost}
        if not active[name]:
            rows.append({**row, "without_usd_per_day": cost, "costs_usd_per_day": 0.0,
                         "pools_without": summary["distinct_pools"],
                         "meaning": "cannot change this plan (nothing it limits)"})
            continue
        other = solve_plan(s, replace(settings, **{name: off}), cands, excluded, costed=False)
        if not other.feasible:  # cannot happen (a setting off only allows more), said rather than hidden
            rows.append({**row, "without_usd_per_day": None, "costs_usd_per_day": None, "pools_without": None,
                         "meaning": f"the plan without it could not be solved: {other.reason}"})
            continue
        without = float(other.summary["cost_usd_per_day"])
        extra = max(0.0, cost - without)
        rows.append({**row, "without_usd_per_day": without, "costs_usd_per_day": extra,
                     "pools_without": other.summary["distinct_pools"],
                     "meaning": (f"adds {extra:,.0f} USD a day ({extra / without:.1%}): without it the plan costs "
                                 f"{without:,.0f} USD a day with {other.summary['distinct_pools']} pools"
                                 if extra > 0.5e-3 * max(without, 1.0) else
                                 f"costs nothing: without it the plan is no cheaper ({without:,.0f} USD a day)")})
    frame = pd.DataFrame(rows, columns=list(SETTING_COST_COLUMNS))
    frame["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # 3 pools, 8.0 h: each as it was set
    return frame


def limits_with_costs(constraints: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """The limits table with its line for the distinct pools saying what that limit costs, from the plan solved
    without it (an LP's dual says nothing about a count of pools)."""
    table = constraints.copy()
    at = table.index[table["constraint"] == "distinct pools"]
    row = costs.loc[costs["setting"] == "max_pools"]
    if len(at) and len(row) and bool(table.loc[at[0], "binding"]):
        table.loc[at[0], "meaning"] = f"binding: {row['meaning'].iloc[0]}"
    return table


LIMIT_WORDS = {"racks": ("racks", "{:,.0f}", lambda s, st: st.max_racks),
               "site power": ("MW", "{:,.2f}", lambda s, st: s.site_power_mw),
               "capex budget": ("M USD", "{:,.2f}", lambda s, st: None if st.capex_budget_usd is None
                                else st.capex_budget_usd / 1e6),
               "KV link": ("GB/s", "{:,.1f}", lambda s, st: s.kv_link_gb_per_s)}
"""Each limit an infeasible plan may need more of: its unit, its format and where its value is."""


def _need_sentence(group: str, over: float, s: Scenario, settings: PlanSettings) -> str:
    """'site power: serving the demand needs at least 1.00 MW; 0.40 MW available': a limit and by how much it had to
    stretch (``over``, in its unit)."""
    unit, form, value = LIMIT_WORDS[group]
    limit = value(s, settings)
    assert limit is not None  # only a limit the scenario sets can stretch
    return (f"{group}: serving the demand needs at least {form.format(limit + over)} {unit}; "
            f"{form.format(limit)} {unit} available")


def _relaxations(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario, settings: PlanSettings,
                 wl: Workload, rho: dict[int, float], excluded: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """For each limit on its own (the others kept), the least of it that makes the plan feasible: the model with
    only that limit allowed to stretch, at a price that dwarfs any plan, so that it stretches as little as it can;
    and, when rent is off, whether allowing rent alone makes a plan. Returns (the reason's sentences, one per limit
    that alone suffices; every limit's finding, for the summary)."""
    out, needs = [], []
    for group, (unit, form, value) in LIMIT_WORDS.items():
        limit = value(s, settings)
        if limit is None:
            continue
        stretch = frozenset({group})
        m, _, _ = _build(pools, cands, costs, s, settings, wl, rho, elastic=stretch)
        res = _solve(m, _rented_cols(m, pools, cands), _hourly_models(pools, cands, costs, s, settings, wl, rho, m,
                                                                      elastic=stretch))
        if res.x is None:
            out.append(f"{group}: no amount is enough on its own (another limit binds too)")
            continue
        over = max(float(res.x[c]) for c in m.slack_col.get(group, [])) if m.slack_col.get(group) else 0.0
        out.append(f"{group}: at least {form.format(limit + over)} {unit} ({form.format(limit)} {unit} now)")
        if over > 1e-9:
            needs.append(_need_sentence(group, over, s, settings))
    if not settings.allow_rent:
        rented = solve_plan(s, replace(settings, allow_rent=True), cands, excluded, costed=False)
        out.append(f"rent: allowing rented systems gives a plan at {rented.summary['cost_usd_per_day']:,.0f} USD a "
                   "day" if rented.feasible else "rent: allowing rented systems is not enough on its own")
    active = rules_active(settings, pools, cands)
    for name, off in RULE_OFF.items():
        if not active[name]:
            continue
        other = solve_plan(s, replace(settings, **{name: off}), cands, excluded, costed=False)
        said = _rule_text(name, getattr(settings, name))
        if other.feasible:
            found = (f"{name}: without it ({said}) a plan exists at {other.summary['cost_usd_per_day']:,.0f} USD a "
                     f"day with {other.summary['distinct_pools']} pools")
            out.append(found)
            needs.append(found)
        else:
            out.append(f"{name}: lifting it ({said}) is not enough on its own")
    return needs, out


def _rule_text(name: str, value: Any) -> str:
    """'at most 3 pools', 'rentals of at least 8 h', 'pools of at least 2 systems'."""
    s = "" if value == 1 else "s"
    return {"max_pools": f"at most {value} pool{s}", "min_rental_hours": f"rentals of at least {value:g} h",
            "min_pool_systems": f"pools of at least {value} system{s}"}[name]


def _partial(why: str, fixes: list[str], pools: list[Pool], cands: list[Candidate], costs: list[Costs],
             s: Scenario, settings: PlanSettings, wl: Workload, rho: dict[int, float],
             table: pd.DataFrame) -> PlanResult:
    """The infeasible plan as data: the reason, the least of each limit that would make it feasible, and the best
    partial plan within every limit (the demand is what stretches: the plan serves as much of it as it can, at the
    least cost), with the share of the day's demand it serves and of its busiest hour."""
    demand = frozenset({"demand input", "demand output"})
    m, levels, weights = _build(pools, cands, costs, s, settings, wl, rho, elastic=demand)
    res = _solve(m, _rented_cols(m, pools, cands), _hourly_models(pools, cands, costs, s, settings, wl, rho, m,
                                                                  elastic=demand))
    if res.x is None:
        return _infeasible(why, table, wl, s)
    short = np.zeros(len(levels))
    for group in demand:
        for h, col in enumerate(m.slack_col.get(group, [])):
            short[h] = max(short[h], float(res.x[col]))
    served = 1.0 - np.clip(short, 0.0, 1.0)
    day = float(np.sum(weights * levels * served) / np.sum(weights * levels)) if np.sum(weights * levels) > 0 else 0.0
    best = _result(m, res, pools, cands, costs, s, settings, wl, table, [])
    # the limits that had to stretch together say why; what the candidates can serve is the partial plan's share
    # (the all-limits-stretch model's unserved demand is not a share of anything a user can act on)
    limits = [x for x in why.split("; ") if x and not x.startswith("demand")]
    reason = "; ".join(limits or [f"within every limit the candidates serve at most {day:.1%} of the day's demand "
                                  f"({float(served[int(np.argmax(levels))]):.1%} of its busiest hour)"])
    summary = {**best.summary, "feasible": False, "infeasible_reason": reason, "served_share": day,
               "busiest_hour_served_share": float(served[int(np.argmax(levels))]),
               "relaxations": "; ".join(fixes), "tokens_per_day": best.summary["tokens_per_day"] * day}
    summary["cost_usd_per_m_tokens"] = (summary["cost_usd_per_day"] / summary["tokens_per_day"] * 1e6
                                        if summary["tokens_per_day"] > 0 else None)
    return PlanResult(False, reason, summary, best.plan, best.hours, best.constraints, table,
                      [f"best partial plan: serves {day:.1%} of the day's demand within every limit"])


# --------------------------------------------------------------------------------------------------------- output
PLAN_COLUMNS = ("name", "accelerator", "ownership", "cooling", "role", "systems", "accelerators", "racks",
                "it_mw", "facility_mw", "hours_per_day", "system_hours_per_day", "capex_usd", "cost_usd_per_day",
                "peak_utilization", "ttft_s", "availability", "spares", "p_enough_systems_up")
CONSTRAINT_COLUMNS = ("constraint", "limit", "used", "unit", "slack", "binding", "shadow_price_usd", "meaning")


def _candidate_table(cands: list[Candidate], pools: list[Pool], excluded: list[tuple[str, str]],
                     s: Scenario) -> pd.DataFrame:
    """Every candidate considered: its figures per system, its roles, and why a role or it was left out."""
    rows = []
    for k, c in enumerate(cands):
        roles = [p.role for p in pools if p.cand == k]
        why = "; ".join(f"{n.split(' / ')[-1]}: {r}" for n, r in excluded if n.startswith(c.name + " / "))
        rows.append({"name": c.name, "accelerator": c.accelerator, "ownership": c.ownership, "cooling": c.cooling_mode,
                     "accelerators_per_system": c.accelerators_per_system, "system_power_kw": c.system_power_kw,
                     "price_usd_per_system": c.price_usd_per_system if c.ownership != "rent" else None,
                     "rent_usd_per_system_hour": c.rent_usd_per_system_hour if c.ownership == "rent" else None,
                     "input_tokens_per_s_per_system": c.input_tokens_per_s_per_system,
                     "output_tokens_per_s_per_system": c.output_tokens_per_s_per_system,
                     "output_tokens_per_s_per_user": c.output_tokens_per_s_per_user,
                     "throughput": c.throughput or "given (candidates file)",
                     "roles": ";".join(roles), "left_out": why, "note": c.note})
    names = {c.name for c in cands}
    for n, r in excluded:
        if " / " not in n and n not in names:
            rows.append({"name": n, "roles": "", "left_out": r})
    return pd.DataFrame(rows)


def _precheck(pools: list[Pool], wl: Workload, s: Scenario, settings: PlanSettings,
              excluded: list[tuple[str, str]]) -> str:
    """A reason when no combination of pools can serve the demand at all, naming the targets and the best offer."""
    out_ok = any(p.role in ("aggregated", "decode") for p in pools)
    in_ok = wl.uncached_input_tokens <= 0 or any(p.role in ("aggregated", "prefill") for p in pools)
    both = any(p.role == "aggregated" for p in pools) or (any(p.role == "prefill" for p in pools) and any(
        p.role == "decode" for p in pools)) or (wl.uncached_input_tokens <= 0 and out_ok)
    if out_ok and in_ok and both:
        return ""
    speed = [r for n, r in excluded if r.startswith("per-user speed")]
    unreachable = [f"{n}: {r}" for n, r in excluded if r.startswith("interactivity")]
    if not out_ok and unreachable and not speed:
        return (f"per-user speed: no candidate reaches the target {s.target_output_tokens_per_s_per_user:g} token/s "
                f"per user ({'; '.join(unreachable[:3])})")
    ttft = [r for n, r in excluded if r.startswith("time to first token")]
    if not out_ok and speed:
        best = max((r for r in speed), key=lambda r: float(re.sub(r"[^0-9.]", "", r.split(" token/s")[0]) or 0),
                   default="")
        return (f"per-user speed: no candidate decodes at the target {s.target_output_tokens_per_s_per_user:g} "
                f"token/s per user (the fastest: {best.split(': ', 1)[-1]})")
    if not in_ok and ttft:
        return f"time to first token: no candidate can prefill within {settings.ttft_target_s:g} s ({ttft[0]})"
    listed = "; ".join(f"{n}: {r}" for n, r in excluded[:6])
    return f"no candidate can serve this demand ({listed or 'no candidates'})"


def _infeasible(reason: str, table: pd.DataFrame, wl: Workload, s: Scenario) -> PlanResult:
    return PlanResult(False, reason, {"feasible": False, "infeasible_reason": reason},
                      pd.DataFrame(columns=list(PLAN_COLUMNS)), _hours_frame(wl, None),
                      pd.DataFrame(columns=list(CONSTRAINT_COLUMNS)), table)


def _diagnose(pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario, settings: PlanSettings,
              wl: Workload, rho: dict[int, float]) -> str:
    """Name the constraints that cannot be met: solve again with each limit allowed to stretch at a steep price
    (unserved demand at a steeper one) and report by how much each had to stretch."""
    res = None
    for stretch in (STRETCHABLE - {"demand input", "demand output"}, STRETCHABLE):
        # the limits first, together: the demand is left unserved only when no amount of them serves it
        m, levels, _ = _build(pools, cands, costs, s, settings, wl, rho, elastic=stretch)
        res = _solve(m, _rented_cols(m, pools, cands), _hourly_models(pools, cands, costs, s, settings, wl, rho,
                                                                      m, elastic=stretch))
        if res.x is not None:
            break
    if res is None or res.x is None:
        return f"no plan: {res.message if res is not None else 'no model'}"
    sentences = []
    for group, cols in m.slack_col.items():
        over = max(float(res.x[c]) for c in cols)
        if over <= 1e-6:
            continue
        if group.startswith("demand"):
            h = int(np.argmax([float(res.x[c]) for c in cols]))
            per = wl.uncached_input_tokens if group == "demand input" else wl.output_tokens
            need = float(levels[h]) * per
            sentences.append(f"{group}: the candidates can serve at most {1.0 - over:.1%} of the busiest "
                             f"hour's {need:,.0f} {'uncached input' if 'input' in group else 'output'} tokens/s "
                             "(existing fleet size, rent not allowed, or every other limit)")
            continue
        sentences.append(_need_sentence(group, over, s, settings))
    return "; ".join(sentences) or "no plan meets every constraint"


def _hours_frame(wl: Workload, per_hour: dict[str, np.ndarray] | None) -> pd.DataFrame:
    frame = pd.DataFrame({"hour": np.arange(HOURS), "requests_per_s": wl.hourly_requests_per_s,
                          "output_tokens_per_s": wl.hourly_requests_per_s * wl.output_tokens})
    for name, values in (per_hour or {}).items():
        frame[name] = values
    return frame


def _hour_types(wl: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(demand of each hour type [request/s], the type of each hour of the day, the hours of each type [h]): hours
    of equal demand are one type, unless the rental block needs the clock hours one by one (``clock_hours``; a day
    of one demand level stays one type: a pool rented in it is rented all day)."""
    levels, inverse, weights = np.unique(np.round(wl.hourly_requests_per_s, 12), return_inverse=True,
                                         return_counts=True)
    if wl.clock_hours and len(levels) > 1:
        hours = len(wl.hourly_requests_per_s)
        return np.asarray(wl.hourly_requests_per_s, dtype=float), np.arange(hours), np.ones(hours, dtype=int)
    return levels, inverse, weights


def _pool_row(m: _Model, x: np.ndarray, p: int, pool: Pool, c: Candidate, k: Costs, s: Scenario,
              settings: PlanSettings, wl: Workload, weights: np.ndarray) -> dict[str, Any]:
    """One line of the plan: a pool's systems, hours, power, cost, utilization, TTFT and spares."""
    hours = len(weights)
    n = _counts(m, x, p, hours)
    f = np.array([float(x[m.flow_col[(p, h)]]) for h in range(hours)]) * pool.raw_capacity
    on_site = c.ownership != "rent"
    systems = float(n.max())
    per_rack = _systems_per_rack(c, s, c.cooling_mode) if on_site else math.nan
    cost_day = (24.0 * k.fixed_usd_per_hour * systems if on_site else 0.0) + float(np.sum(
        weights * (n * k.rent_usd_per_hour + f * pool.energy_usd_per_flow_hour * wl.energy_scale)))
    busy = np.divide(f, pool.raw_capacity * n, out=np.zeros(hours), where=n > 0)
    ttft, needed = 0.0, 0.0
    for h in range(hours):
        if n[h] <= 0:
            continue
        need = f[h] / (pool.raw_capacity / (1.0 + float(s.headroom)))
        if pool.prefill_weight > 0 and math.isfinite(pool.service_s) and math.isfinite(pool.prefill_capacity):
            rho = pool.prefill_weight * f[h] / (pool.prefill_capacity * n[h])
            servers = int(n[h]) * pool.servers_per_system
            if settings.ttft_target_s is not None:
                cap = _rho(pool, servers, settings)
                need = max(need, pool.prefill_weight * f[h] / (cap * pool.prefill_capacity / pool.availability))
            rho = 1.0 if rho > 1.0 - 1e-9 else rho  # full load to rounding: no steady state, no finite TTFT
            ttft = max(ttft, queueing.ttft_percentile_s(servers, rho, pool.service_s,
                                                        settings.ttft_percentile, settings.prefill_service_cv2))
        needed = max(needed, need)
    required = min(systems, math.ceil(needed * (1.0 - 1e-9))) if on_site else systems
    return {"name": c.name, "accelerator": c.accelerator, "ownership": c.ownership, "cooling": c.cooling_mode,
            "role": pool.role, "systems": int(systems), "accelerators": int(systems) * c.accelerators_per_system,
            "racks": math.ceil(systems / per_rack * (1 - 1e-12)) if on_site else None,
            "it_mw": systems * c.system_power_kw / 1000.0 if on_site else None,
            "facility_mw": systems * k.facility_kw / 1000.0 if on_site else None,
            "hours_per_day": 24.0 if on_site else float(np.sum(weights * (n > 0))),
            "system_hours_per_day": float(np.sum(weights * n)), "capex_usd": systems * k.capex_usd,
            "cost_usd_per_day": cost_day, "peak_utilization": float(busy.max()),
            "ttft_s": ttft if ttft > 0 else None, "availability": pool.availability,
            "spares": int(systems - required) if on_site else None,
            "p_enough_systems_up": availability.probability_enough_up(int(systems), int(required), pool.availability)
            if on_site else None}


def _result(m: _Model, res: Any, pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario,
            settings: PlanSettings, wl: Workload, table: pd.DataFrame, notes: list[str]) -> PlanResult:
    levels, inverse, weights = _hour_types(wl)
    x = res.x
    used = [p for p in range(len(pools)) if _counts(m, x, p, len(weights)).max() > 0]
    rows = [_pool_row(m, x, p, pools[p], cands[pools[p].cand], costs[pools[p].cand], s, settings, wl, weights)
            for p in used]
    plan_df = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    per_hour: dict[str, np.ndarray] = {}
    for role in ROLES:
        for own in ("on site", "rented"):
            cols = [p for p in used if pools[p].role == role and (cands[pools[p].cand].ownership == "rent") == (
                own == "rented")]
            if cols:
                where = own.replace(' ', '_')
                per_hour[f"{role}_systems_{where}"] = sum(
                    (_counts(m, x, p, len(weights)) for p in cols), np.zeros(len(weights)))[inverse]
                # accelerators as well: a 72-GPU rack is not one 8-GPU server
                per_hour[f"{role}_accelerators_{where}"] = sum(
                    (_counts(m, x, p, len(weights)) * cands[pools[p].cand].accelerators_per_system for p in cols),
                    np.zeros(len(weights)))[inverse]
    racks = float(sum(_racks_of(m, x, pools, cands, s, i, len(weights)) for i in
                      {pools[p].cand for p in used if cands[pools[p].cand].ownership != "rent"}))
    shadow = _shadow_prices(m, pools, used, weights)
    constraints = _constraints_table(m, x, shadow, s, settings, racks, weights, len(used))
    tokens_day = wl.requests_per_s * (wl.input_tokens + wl.output_tokens) * SECONDS_PER_DAY
    cost_day = float(plan_df["cost_usd_per_day"].sum())
    summary = {
        "feasible": True, "objective": settings.objective, "objective_usd": float(res.fun),
        "cost_usd_per_day": cost_day, "tokens_per_day": tokens_day,
        "cost_usd_per_m_tokens": cost_day / tokens_day * 1e6 if tokens_day > 0 else None,
        "capex_usd": float(plan_df["capex_usd"].sum()), "it_mw": float(plan_df["it_mw"].fillna(0).sum()),
        "facility_mw": float(plan_df["facility_mw"].fillna(0).sum()), "racks": racks,
        "systems_on_site": int(plan_df.loc[plan_df["ownership"] != "rent", "systems"].sum()),
        "distinct_pools": len(plan_df),
        "rented_system_hours_per_day": float(plan_df.loc[plan_df["ownership"] == "rent",
                                                         "system_hours_per_day"].sum()),
        "binding": "; ".join(constraints.loc[constraints["binding"], "constraint"].astype(str)),
        "mip_gap": max(0.0, (float(res.fun) - res.bound) / float(res.fun)) if res.fun > 0 and math.isfinite(
            res.bound) else 0.0,
    }
    summary["solver_status"] = solver_status(res, float(summary["mip_gap"] or 0.0))
    if settings.objective == "npv":
        summary["npv_cost_usd"] = float(res.fun)
        summary["levelized_cost_usd_per_m_tokens"] = _levelized(float(res.fun), tokens_day, s)
    return PlanResult(True, "", summary, plan_df, _hours_frame(wl, per_hour), constraints, table, notes)


def solver_status(res: _Solution, gap: float) -> str:
    """What the solver proved, in its own terms: ``proven optimal`` only at no gap; else how far from the lower bound
    the plan may be, and why the search stopped (the gap it was asked for, a node or time limit, the two stages).

    >>> solver_status(_Solution(None, 100.0, 100.0, 0, "Optimal"), 0.0)
    'proven optimal'
    >>> solver_status(_Solution(None, 100.0, 99.95, 0, "Optimal"), 0.0005)
    'within 0.05 % of the lower bound (the search stops within 0.1 %)'
    """
    within = f"within {100 * gap:.2f} % of the lower bound"
    if res.message == "two stages":
        return f"{within} (two stages: the owned base, then each hour's rented systems)"
    if res.message == "two stages, then its pools":
        return f"{within} (the pools chosen in two stages, then solved together on their own)"
    if res.status == 0:
        return "proven optimal" if gap <= 1e-9 else f"{within} (the search stops within {100 * MIP_REL_GAP:.1f} %)"
    return f"{within} (the search stopped: {res.message})"


def _racks_of(m: _Model, x: np.ndarray, pools: list[Pool], cands: list[Candidate], s: Scenario, i: int,
              hours: int) -> float:
    """Racks of one on-site candidate: its systems (all roles) over the systems a rack holds, rounded up."""
    systems = sum(float(_counts(m, x, p, hours).max()) for p, pool in enumerate(pools) if pool.cand == i)
    per_rack = _systems_per_rack(cands[i], s, cands[i].cooling_mode)
    return float(math.ceil(systems / per_rack * (1.0 - 1e-12)))


def _levelized(pv_cost: float, tokens_day_design: float, s: Scenario) -> float:
    """PV(cost) / PV(tokens) x 10^6, the retrofit study's levelized cost [USD/M token]."""
    years = np.arange(1, int(s.horizon_years) + 1)
    growth = (1.0 + float(s.demand_growth_per_year)) ** (years - 1)
    disc = (1.0 + float(s.cost_of_capital)) ** -years.astype(float)
    tokens = float((tokens_day_design * growth / growth.max() * DAYS_PER_YEAR * disc).sum())
    return pv_cost / tokens * 1e6


LIMIT_UNITS = {"site power": "MW", "racks": "rack", "capex budget": "M USD", "KV link": "GB/s",
               "distinct pools": "pool"}


def _shadow_prices(m: _Model, pools: list[Pool], used: list[int], weights: np.ndarray) -> dict[str, float] | None:
    """Dual values of the limits from the LP with the integer choices fixed: the pools the plan uses stay open,
    every other pool is closed (count bound 0), counts and racks become continuous. A dual is the change of the
    objective per unit more of the limit; the saving is its negative. Summed over the hours of a per-hour limit.
    None when HiGHS returns no duals."""
    ub = np.asarray(m.ub, dtype=float).copy()
    open_pools = set(used)
    for (p, _h), col in m.count_col.items():
        if p not in open_pools:
            ub[col] = 0.0
    res = linprog(np.asarray(m.c), A_ub=m.matrix(), b_ub=np.asarray(m.b),
                  bounds=list(zip(m.lb, ub, strict=True)), method="highs")
    if res.status != 0 or res.ineqlin is None:
        return None
    savings: dict[str, float] = {}
    for i, group in enumerate(m.row_group):
        savings[group] = savings.get(group, 0.0) - float(res.ineqlin.marginals[i])
    return savings


def _constraints_table(m: _Model, x: np.ndarray, shadow: dict[str, float] | None, s: Scenario,
                       settings: PlanSettings, racks: float, weights: np.ndarray, pools_used: int) -> pd.DataFrame:
    """The limits of the plan: limit, use, slack, binding, and what one more unit of each would save."""
    lhs = m.matrix() @ x
    period = "a day" if settings.objective == "cost_per_day" else "in present value over the horizon"
    rows = []
    # the distinct pools are counted on the plan (a model of the chosen pools alone has no such row)
    groups = [g for g in dict.fromkeys(m.row_group)
              if (g in LIMIT_UNITS and g != "distinct pools") or g.startswith("existing fleet")]
    for group in groups:
        idx = [i for i, g in enumerate(m.row_group) if g == group]
        used = max(float(lhs[i]) for i in idx)
        limit = float(m.b[idx[0]])
        unit = LIMIT_UNITS.get(group, "system")
        slack = limit - used
        # binding means no slack in the plan itself; only a binding limit has a shadow price (the LP's dual can be
        # non-zero for a limit the whole-system plan leaves slack on, and then it says nothing about the plan)
        binding = slack <= 1e-6 * max(1.0, abs(limit))
        saving = None if shadow is None or not binding else max(0.0, shadow.get(group, 0.0))
        shown_unit = {"M USD": "M USD of budget", "GB/s": "GB/s of KV link", "system": "existing system"}.get(
            unit, unit)
        meaning = (f"one more {shown_unit} saves {saving:,.0f} USD {period}" if saving is not None and saving > 1e-6
                   else "binding, but one more unit saves nothing at the margin" if binding
                   else f"not limiting: {slack:,.4g} {unit} to spare")
        rows.append({"constraint": group, "limit": limit, "used": used, "unit": unit, "slack": slack,
                     "binding": bool(binding), "shadow_price_usd": saving, "meaning": meaning})
    if settings.max_pools is not None:
        rows.append(_pool_limit_row(pools_used, int(settings.max_pools)))
    return pd.DataFrame(rows, columns=list(CONSTRAINT_COLUMNS))


def _pool_limit_row(used: int, limit: int) -> dict[str, Any]:
    """The limits table's line for the distinct pools. A count of pools has no meaningful dual: what the limit costs
    is the plan solved without it (:func:`limits_with_costs` writes it in)."""
    binding = used >= limit
    return {"constraint": "distinct pools", "limit": float(limit), "used": float(used), "unit": "pool",
            "slack": float(limit - used), "binding": binding, "shadow_price_usd": None,
            "meaning": "binding: what it costs is the plan without it (what the operations settings cost)" if binding
            else f"not limiting: {limit - used} pool{'' if limit - used == 1 else 's'} to spare"}


# -------------------------------------------------------------------------------------------------- files, inputs
MAX_SHOWN = 60


def _shown(value: Any) -> str:
    """A user's value in a message: at most 60 characters, control characters escaped."""
    text = str(value)
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def _csv_rows(data: bytes | str, what: str) -> tuple[list[str], list[list[str]], str]:
    """Header, rows and delimiter of a CSV (',' ';' or tab, '#' comment lines skipped); InputError when unusable."""
    if isinstance(data, bytes):
        if b"\x00" in data[:8192]:
            raise InputError(f"{what}: not a CSV file (binary data)")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{what}: not UTF-8 text (undecodable byte at position {exc.start})") from None
    lines = [ln for ln in data.removeprefix("\ufeff").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise InputError(f"{what}: empty file")
    first = lines[0]
    sep = ";" if first.count(";") > first.count(",") else ("\t" if first.count("\t") > first.count(",") else ",")
    try:
        table = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=sep))
    except csv.Error as exc:
        raise InputError(f"{what}: not a well-formed CSV ({exc})") from None
    header = [h.strip() for h in table[0]]
    rows = [r for r in table[1:] if any(c.strip() for c in r)]
    if not rows:
        raise InputError(f"{what}: no rows below the header")
    for i, r in enumerate(rows, start=2):
        if len(r) != len(header):
            raise InputError(f"{what}: line {i} has {len(r)} cells, the header has {len(header)}")
    return header, rows, sep


class InvalidPlanRow(ValueError):
    """The chosen row has a bad value (exit code 1, as for the other row commands); the message names the row."""


def read_plan_row(data: bytes | str, row: str) -> tuple[dict[str, Any], PlanSettings]:
    """One row of a scenario CSV that may also carry the planner columns (:data:`PLAN_FIELDS`): the row's non-empty
    scenario cells (read as :func:`economics.tables.read_table` reads files) and its planner settings."""
    header, rows, sep = _csv_rows(data, "FILE")
    plan_idx = [i for i, h in enumerate(header) if h in PLAN_FIELDS]
    keep = [i for i in range(len(header)) if i not in plan_idx]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, lineterminator="\n")
    writer.writerow([header[i] for i in keep])
    for r in rows:
        writer.writerow([r[i] for i in keep])
    df = read_table(out.getvalue().encode("utf-8"), fmt="csv")
    names = [str(n) for n in df["name"]] if "name" in df.columns else []
    if names.count(row) > 1:
        where = ", ".join(str(i + 1) for i, n in enumerate(names) if n == row)
        raise InputError(f"--row: {names.count(row)} rows are named '{_shown(row)}' (rows {where}); give the row "
                         "number")
    if row in names:
        position = names.index(row)
    elif row.isdigit() and 1 <= int(row) <= len(df):
        position = int(row) - 1
    else:
        guess = catalog.closest(row, names) if names else None
        hint = f"; did you mean '{_shown(guess)}'?" if guess else ""
        raise InputError(f"--row: no row named '{_shown(row)}' and no row number 1..{len(df)}{hint}")
    # scenario fields only: range columns (<field>_low/_high) belong to the uncertainty study
    cells = {str(k): v for k, v in df.iloc[position].to_dict().items() if str(v).strip() != "" and k in FIELDS}
    label = f"row {position + 1}" + (f" ({_shown(names[position])})" if names else "")
    try:
        settings = settings_from_row({header[i]: rows[position][i] for i in plan_idx})
    except ValueError as exc:
        raise InvalidPlanRow(f"{label}: {exc}") from None
    return {**cells, "_label": label}, settings


def read_candidates_csv(data: bytes | str, s: Scenario) -> list[Candidate]:
    """Hardware options from a CANDIDATES.csv (:data:`CANDIDATE_COLUMNS`): each row its own measured rates and
    prices; a catalog id fills the empty hardware figures. Raises InputError naming the row, the field and the
    value for anything it cannot use."""
    header, rows, _ = _csv_rows(data, "CANDIDATES")
    for h in header:
        if h not in CANDIDATE_COLUMNS:
            candidate_fields.check_column(h)  # a scenario field the whole plan shares: refused with the reason
    unknown = [h for h in header if h not in CANDIDATE_COLUMNS and h not in FIELDS]
    if unknown:
        guess = catalog.closest(unknown[0], list(CANDIDATE_COLUMNS))
        hint = f" (did you mean '{guess}'?)" if guess else ""
        raise InputError(f"CANDIDATES: unknown column '{_shown(unknown[0])}'{hint}; known: "
                         f"{', '.join(CANDIDATE_COLUMNS)}, and the scenario fields "
                         f"{', '.join((*candidate_fields.PER_CANDIDATE, *candidate_fields.MEASURED_AT))}")
    if len(set(header)) != len(header):
        raise InputError("CANDIDATES: duplicate columns")
    out, seen = [], set()
    for i, r in enumerate(rows, start=1):
        cells = {h: c.strip() for h, c in zip(header, r, strict=True) if c.strip()}
        cand = _candidate_from_cells(cells, i, s)
        if cand.name in seen:
            raise InputError(f"CANDIDATES row {i}: name '{_shown(cand.name)}' is used twice")
        seen.add(cand.name)
        out.append(cand)
    return out


def _cell_number(cells: dict[str, str], key: str, where: str, positive: bool = True) -> float:
    if key not in cells:
        return math.nan
    try:
        value = float(cells[key])
    except ValueError:
        raise InputError(f"{where}: {key}: '{_shown(cells[key])}' is not a number") from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0) or value > 1e12:
        raise InputError(f"{where}: {key}: must be {'> 0' if positive else '>= 0'} and <= 1e12, got "
                         f"{_shown(cells[key])}")
    return value


def _candidate_from_cells(cells: dict[str, str], i: int, s: Scenario) -> Candidate:
    name = cells.get("name", "")
    where = f"CANDIDATES row {i}" + (f" ({_shown(name)})" if name else "")
    if not name:
        raise InputError(f"{where}: name: empty; every candidate needs a name")
    own = cells.get("ownership", "")
    if own not in OWNERSHIPS:
        raise InputError(f"{where}: ownership: '{_shown(own)}' is not one of own, rent, existing")
    rec: dict[str, Any] = {}
    if "accelerator" in cells:
        if cells["accelerator"] not in catalog.accelerator_ids():
            raise InputError(f"{where}: " + catalog.unknown_id_message("accelerator", _shown(cells["accelerator"]),
                                                                       catalog.accelerator_ids()))
        rec = catalog.accelerator_record(cells["accelerator"])
    changes = candidate_fields.candidate_changes(cells, where, s)
    num = {k: _cell_number(cells, k, where, positive=k != "accelerator_price_usd") for k in CANDIDATE_COLUMNS
           if k not in ("name", "ownership", "accelerator", "system_form", "accelerator_cooling", "family", "roles")}
    a = num["accelerators_per_system"] if math.isfinite(num["accelerators_per_system"]) else _num(
        rec, "accelerators_per_system")
    if not math.isfinite(a) or a != int(a):
        raise InputError(f"{where}: accelerators_per_system: give a whole number (empty and no catalog id)")
    a = int(a)
    kw = num["system_power_kw"]
    if not math.isfinite(kw):
        per = num["accelerator_power_kw"] if math.isfinite(num["accelerator_power_kw"]) else _num(rec, "power_kw")
        kw = per * a if math.isfinite(per) else _num(rec, "system_power_kw")
    if not math.isfinite(kw):
        raise InputError(f"{where}: accelerator_power_kw: give the power (empty and no catalog id)")
    if not math.isfinite(num["output_tokens_per_s_per_accelerator"]):
        raise InputError(f"{where}: output_tokens_per_s_per_accelerator: the measured throughput is required")
    price = num["accelerator_price_usd"] if math.isfinite(num["accelerator_price_usd"]) else _num(rec, "price_usd")
    rent = num["rent_usd_per_accelerator_hour"] if math.isfinite(
        num["rent_usd_per_accelerator_hour"]) else _num(rec, "rent_usd_per_hour")
    if own == "own" and not math.isfinite(price):
        raise InputError(f"{where}: accelerator_price_usd: an owned candidate needs a price")
    if own == "rent" and not math.isfinite(rent):
        raise InputError(f"{where}: rent_usd_per_accelerator_hour: a rented candidate needs a rent")
    if own == "existing" and not math.isfinite(num["max_accelerators"]):
        raise InputError(f"{where}: max_accelerators: an existing candidate needs the fleet's size")
    cooling = cells.get("accelerator_cooling") or str(rec.get("cooling") or "air")
    if cooling not in ("air", "liquid", "air_or_liquid"):
        raise InputError(f"{where}: accelerator_cooling: '{_shown(cooling)}' is not air, liquid or air_or_liquid")
    form = cells.get("system_form") or str(rec.get("system_form") or "server")
    if form not in ("server", "rack", "wafer"):
        raise InputError(f"{where}: system_form: '{_shown(form)}' is not server, rack or wafer")
    roles = tuple(r.strip() for r in cells.get("roles", ";".join(ROLES)).split(";") if r.strip())
    bad = [r for r in roles if r not in ROLES]
    if bad or not roles:
        raise InputError(f"{where}: roles: '{_shown(cells.get('roles', ''))}' must list aggregated, prefill, decode "
                         "separated by ';'")
    rep = num["accelerators_per_replica"]
    return _whole_replicas(Candidate(
        name=name, ownership=own, accelerator=cells.get("accelerator", ""),
        family=cells.get("family") or str(rec.get("family") or "default"), accelerators_per_system=a,
        system_power_kw=kw, system_rack_units=num["system_rack_units"] if math.isfinite(
            num["system_rack_units"]) else _num(rec, "system_rack_units"), rack_scale=form == "rack",
        hardware_cooling=cooling,
        price_usd_per_system=(price * a if own == "own" else (price * a if math.isfinite(price) else 0.0)
                              if own == "existing" else 0.0),
        rent_usd_per_system_hour=rent * a if math.isfinite(rent) else math.nan,
        input_tokens_per_s_per_system=num["input_tokens_per_s_per_accelerator"] * a,
        output_tokens_per_s_per_system=num["output_tokens_per_s_per_accelerator"] * a,
        output_tokens_per_s_per_user=num["output_tokens_per_s_per_user"],
        accelerators_per_replica=int(rep) if math.isfinite(rep) else a,
        max_systems=float(int(num["max_accelerators"]) // a) if own == "existing" else math.inf, roles=roles,
        changes=changes))


# ------------------------------------------------------------------------------------------------------ frontiers
FRONTIER_COLUMNS = ("feasible", "cost_usd_per_day", "cost_usd_per_m_tokens", "facility_mw", "systems_on_site",
                    "rented_system_hours_per_day", "binding", "reason")


def _frontier_row(r: PlanResult) -> dict[str, Any]:
    row = {k: r.summary.get(k) for k in FRONTIER_COLUMNS[1:-1]}
    return {"feasible": r.feasible, **row, "reason": r.reason}


def default_speed_targets(s: Scenario, points: int = 20) -> list[float]:
    """``points`` per-user speed targets, geometric from a quarter to four times the scenario's (30 token/s when
    none is given)."""
    t = float(s.target_output_tokens_per_s_per_user or 30.0)
    return [float(v) for v in np.geomspace(t / 4.0, t * 4.0, points)]


def frontier_speed(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                   targets: list[float] | None = None, candidates: list[Candidate] | None = None,
                   accelerators: list[str] | None = None) -> pd.DataFrame:
    """The cheapest plan's cost against the per-user speed target. Catalog candidates are re-rated at every target
    (one engine evaluation for all); a CANDIDATES.csv keeps its rates and a candidate qualifies while its measured
    per-user speed meets the target. Each point is the cheapest plan of any shape: the operations settings
    (:data:`RULE_OFF`) are lifted, since the curve is the cost of the demand, and 20 plans each held to a pool limit
    and a rental block take a minute where these take seconds; the plan itself says what its settings add."""
    s = as_scenario(scenario)
    settings = replace(settings or PlanSettings(), **RULE_OFF)
    targets = targets or default_speed_targets(s)
    ids = accelerators or catalog.accelerator_ids()
    rates = catalog_rates(s, ids, list(targets)) if candidates is None else None
    rows = []
    for t in targets:
        st = s.model_copy(update={"target_output_tokens_per_s_per_user": float(t)})
        excluded: list[tuple[str, str]] = []
        if rates is None:
            assert candidates is not None
            cands = candidates
        else:
            cands, excluded = catalog_candidates(st, ids, rates[rates["target"] == t])
        hosted, more = hosting_variants(cands, st)
        rows.append({"target_output_tokens_per_s_per_user": float(t),
                     **_frontier_row(solve_plan(st, settings, hosted, excluded + more, costed=False))})
    return pd.DataFrame(rows)


def frontier_site(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                  site_mw: list[float] | None = None, candidates: list[Candidate] | None = None,
                  accelerators: list[str] | None = None, points: int = 20) -> pd.DataFrame:
    """The cheapest plan's cost against the site's power. Without ``site_mw``: ``points`` limits from 5 % to 120 %
    of the facility power of the plan with no site limit. As :func:`frontier_speed`, without the operations
    settings."""
    s = as_scenario(scenario)
    settings = replace(settings or PlanSettings(), **RULE_OFF)
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    else:
        excluded = []
    free = solve_plan(s.model_copy(update={"site_power_mw": None}), settings, *_hosted(candidates, s, excluded),
                      costed=False)
    used_mw = float(free.summary.get("facility_mw") or 0.0) if free.feasible else math.inf
    if site_mw is None:
        top = used_mw if math.isfinite(used_mw) and used_mw > 0 else 1.0
        site_mw = [float(v) for v in np.linspace(0.05 * top, 1.2 * top, points)]
    rows = []
    for mw in site_mw:
        st = s.model_copy(update={"site_power_mw": float(mw)})
        # a limit the unlimited plan already fits changes nothing: that plan is the answer
        result = free if used_mw <= mw else solve_plan(st, settings, *_hosted(candidates, st, excluded),
                                                       costed=False)
        rows.append({"site_power_mw": float(mw), **_frontier_row(result)})
    return pd.DataFrame(rows)


def _hosted(cands: list[Candidate], s: Scenario,
            excluded: list[tuple[str, str]]) -> tuple[list[Candidate], list[tuple[str, str]]]:
    hosted, more = hosting_variants(cands, s)
    return hosted, excluded + more


# ------------------------------------------------------------------------------------------------------------ CLI
def add_plan_command(subparsers: Any) -> argparse.ArgumentParser:
    """``python -m economics plan FILE --row NAME [--candidates CANDIDATES.csv] [--format json|csv] [-o OUT]``."""
    cmd: argparse.ArgumentParser = subparsers.add_parser(
        "plan", help="the cheapest fleet (prefill/decode pools, own/rent, the existing fleet) for a row's demand, "
        "targets and facility")
    cmd.add_argument("input", help="scenario CSV (may carry the planner columns), or - for standard input")
    cmd.add_argument("--row", required=True, help="the row's name, or its 1-based number")
    cmd.add_argument("--candidates", help="CSV of hardware options with their own measured rates and prices "
                     "(default: the catalog)")
    cmd.add_argument("--accelerators", default="", help="catalog ids to consider, comma-separated (default: all)")
    cmd.add_argument("--frontier", choices=("none", "speed", "site", "both"), default="none",
                     help="also compute cost frontiers (20 points each)")
    cmd.add_argument("--format", choices=("json", "csv"), default="json")
    cmd.add_argument("-o", "--output", default="-", help="output file, or - for standard output (default)")
    cmd.add_argument("--curves", metavar="FILE", help="your measured curves (a CSV from import-benchmark): they "
                     "outrank the catalog's for their accelerator, model, precision and request shape")
    cmd.set_defaults(func=run_plan)
    return cmd


def plan_from_files(data: bytes | str, row: str, candidates_data: bytes | str | None = None,
                    accelerators: list[str] | None = None, frontier: str = "none",
                    curves_sha256: str = "") -> dict[str, Any]:
    """The ``plan`` command as a function: the JSON-ready plan (and frontiers) of one row (its throughput from the
    curve file ``curves_sha256`` names where the row names none). Raises InputError."""
    cells, settings = read_plan_row(data, row)
    label = cells.pop("_label")
    if curves_sha256 and not cells.get("curves_sha256"):
        cells["curves_sha256"] = curves_sha256
    try:
        s = as_scenario(cells)
    except ScenarioError as exc:
        raise InvalidPlanRow(f"{label}: {exc}") from None
    try:
        cands = None if candidates_data is None else read_candidates_csv(candidates_data, s)
        ids = accelerators or None
        unknown = [a for a in ids or [] if a not in catalog.accelerator_ids()]
        if unknown:
            raise InputError(catalog.unknown_id_message("--accelerators", _shown(unknown[0]),
                                                        catalog.accelerator_ids()))
        out = plan(s, settings, cands, ids).to_dict()
        if frontier in ("speed", "both"):
            out["frontier_speed"] = _records(frontier_speed(s, settings, candidates=cands, accelerators=ids))
        if frontier in ("site", "both"):
            out["frontier_site"] = _records(frontier_site(s, settings, candidates=cands, accelerators=ids))
    except (ScenarioError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc)) from None
    return out


@contextlib.contextmanager
def _solver_chatter_to_stderr() -> Iterator[None]:
    """HiGHS occasionally prints a line from C++ straight to file descriptor 1; while the command computes, that
    descriptor points at stderr so standard output holds only the plan (JSON or CSV)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real descriptor (an embedding host): nothing to redirect
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run_plan(args: argparse.Namespace) -> int:
    """Run the ``plan`` command: 0 with a plan (feasible or not, it is data), 1 when the row has a bad value, 2 for
    unusable input (the same exit codes as the other row commands)."""
    try:
        sha = ""
        if args.curves:
            try:
                sha = user_curves.load(user_curves.read_bounded(args.curves), Path(args.curves).name).sha256
            except user_curves.CurveFileError as exc:
                raise InputError(f"--curves: {exc}") from None
        with _solver_chatter_to_stderr():
            out = plan_from_files(read_input_bytes(args.input), args.row,
                                  None if not args.candidates else read_input_bytes(args.candidates),
                                  [a.strip() for a in args.accelerators.split(",") if a.strip()], args.frontier, sha)
    except InvalidPlanRow as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    text = json.dumps(out, indent=1, allow_nan=False) + "\n" if args.format == "json" else plan_csv_text(out)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            sys.stderr.write(f"error: cannot write {_shown(args.output)}: {exc.strerror}\n")
            return 2
    if not out["feasible"]:
        sys.stderr.write(f"no feasible plan: {out['infeasible_reason']}\n")
    return 0


def plan_csv_text(out: dict[str, Any]) -> str:
    """The plan as CSV sections (summary, plan, constraints, setting costs, hours, frontiers), each under a '# name'
    line."""
    parts = ["# summary\n" + to_csv_text(pd.DataFrame([{"feasible": out["feasible"],
                                                         "infeasible_reason": out["infeasible_reason"],
                                                         **out["summary"]}]))]
    for key in ("plan", "constraints", "setting_costs", "hours", "frontier_speed", "frontier_site"):
        if key in out:
            parts.append(f"# {key}\n" + to_csv_text(pd.DataFrame(out[key])))
    return "\n".join(parts)
