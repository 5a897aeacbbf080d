"""The decode study's odds: how often each option is the best, and its NPV, IRR and payback at P10 / P50 / P90.

Every input of :func:`economics.studies.retrofit.analyse` that carries a range is a *driver* (:func:`drivers`): the
estimator's P10-P90 for each estimated throughput (data/estimate_ranges.csv), a sourced range for a catalog price
marked estimate (:data:`SOURCED_PRICE_RANGES`), the users a decode replica serves at once where the per-accelerator
rate is built from them, and the demand's growth, the selling prices, electricity and the cost of capital (the
Uncertainty page's default spreads where it has one; every range no source gives is an *assumption*, and says so).

Each driver is drawn ``samples`` times, seeded, in a fixed order, and every option sees the same draws (common random
numbers): "add decode beats more of the same in 87 % of draws" compares like with like. The options are evaluated by
the ordinary engine (:func:`economics.engine.pipeline.compute`) over a table of draws x years per option, in two
vectorised passes (the fleets sized from demand, then every year), and their cash flows are the point study's
formulas (:mod:`economics.studies.retrofit_cash`) over that table. With every range collapsed the odds give the
point study's NPV, IRR and payback exactly, and the best option has ``probability_best`` 1.

Besides the draws, the same pass evaluates each driver alone at its low and high end (the others at base): the
tornado of the NPV difference between the two leading options, with the value of each driver at which that
difference would be zero (linear between the evaluated points; :func:`tornado`).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from economics import catalog
from economics.domain.finance import capital_recovery_factor, discount_factors, growth_factors, irr
from economics.engine.batch import MAX_COUNT, as_scenario, resolve_scenario
from economics.engine.pipeline import INTEGER_OUTPUTS, OPTIONAL_OUTPUTS, OUTPUT_UNITS, compute
from economics.schema.scenario import Scenario
from economics.studies.retrofit import Option, OptionKind, RetrofitResult, _fleet, analyse, standard_options
from economics.studies.retrofit_cash import (
    FAST_TIER,
    OPEX,
    PURCHASE,
    RESIDUAL,
    RETROFIT,
    REVENUE,
    forward_y,
    net_t_usd,
    opex_terms,
    revenue_terms,
)
from economics.studies.retrofit_decode import DECODE_COLUMNS, decode_table
from economics.studies.retrofit_years import DEMAND_FIELDS, _float, _Years
from economics.studies.uncertainty import DEFAULT_RANGE_FACTORS, Distribution

Floats = NDArray[np.float64]


class OddsDistribution(StrEnum):
    """How the odds' draws spread a driver over its range: :class:`~economics.studies.uncertainty.Distribution`'s
    two, or normal with the ends read as P10 and P90 (:func:`draw`).

    >>> [d.value for d in OddsDistribution]
    ['triangular', 'uniform', 'normal']
    """

    TRIANGULAR = Distribution.TRIANGULAR.value
    UNIFORM = Distribution.UNIFORM.value
    NORMAL = "normal"

MAX_SAMPLES = 100_000
"""Most draws a study takes (10,000 run in well under a second)."""

SOURCED_PRICE_RANGES: dict[str, tuple[float, float, str]] = {
    "sn50": (30_000.0, 40_000.0, "USD 30,000-40,000: the Blackwell GPU price range NVIDIA's CEO quoted to CNBC "
                                 "(2024-03), the catalog's basis for the SN50 (SambaNova publishes no price)"),
    "h100-sxm": (25_000.0, 33_750.0, "USD 25,000 (Raymond James' low end, via TechSpot 2023-08) to 33,750 "
                                     "(SemiAnalysis' DGX H100 ~USD 270,000 / 8, as cited by Epoch AI)"),
    "b200": (30_000.0, 40_000.0, "USD 30,000-40,000 quoted by NVIDIA's CEO to CNBC (2024-03)"),
    "gb200-nvl72": (27_778.0, 47_222.0, "USD 2.0M-3.4M a rack / 72 GPUs (awesomeagents.ai's 2-3M; Bernstein's 3.4M)"),
    "gb300-nvl72": (41_667.0, 55_556.0, "USD 3M-4M a rack / 72 GPUs (awesomeagents.ai)"),
    "cerebras-cs3": (2_000_000.0, 3_000_000.0, "USD 2M-3M per CS-3 as reported (secondary)"),
}
"""The range each catalog price marked estimate rests on, as its source states it (data/accelerators.csv's notes);
a catalog price marked estimate without one takes the Uncertainty page's default spread, named an assumption."""
USERS_PER_REPLICA_FACTORS = (0.5, 2.0)
"""Half to twice the users a decode replica serves at once, where the per-accelerator rate is a measured per-user
speed times them: an assumption (the sources state no concurrency)."""
GROWTH_FACTORS = (0.5, 1.5)
"""Half to one and a half times the demand's growth a year: an assumption (no source; no Uncertainty default)."""
TOKEN_PRICE_FACTORS = (0.7, 1.3)
"""-30 % to +30 % on every selling price at once: an assumption (no source; no Uncertainty default)."""
TOKEN_PRICE_CHANGE_RANGE = (-0.889, 0.0, "Epoch AI, 'LLM inference prices have fallen rapidly but unequally "
                            "across tasks' (2025-03-12, https://epoch.ai/data-insights/llm-inference-price-trends): "
                            "the price of a fixed capability fell 9x to 900x a year; the slowest, 9x (-88.9 % a "
                            "year), to prices held (0)")
"""The yearly change of the selling prices the odds draw over (with the scenario's value inside): the slowest
published fall of the price of a fixed capability, to none."""
RENT_CHANGE_RANGE = (-0.46, 0.38, "SemiAnalysis' H100 rental index as reported (https://newsletter.semianalysis.com/p/"
                     "the-great-gpu-shortage-rental-capacity): USD 8/h (2023) to 1.70/h (2025-10), -46 % a year, then "
                     "+38 % to 2.35/h in the half-year to 2026-03")
"""The yearly change of the rent per accelerator-hour the odds draw over (with the scenario's value inside): the
fall and the rebound of the H100 rental price."""
Z90 = 1.2815515655446004
"""The standard normal's 90th percentile: a normal draw reads a range's ends as its P10 and P90."""


@dataclass(frozen=True)
class Driver:
    """One ranged input: its ``low``, ``base`` and ``high`` value, what it moves (``target``: a scenario column, or
    ``throughput:<accelerator>``, a factor on that accelerator's estimated rates), where the range comes from
    (``source``) and whether no source gives it (``assumption``).
    """

    name: str
    target: str
    low: float
    base: float
    high: float
    source: str
    assumption: bool

    @property
    def collapsed(self) -> bool:
        """Whether the range is a single value (low = high)."""
        return self.low == self.high


@dataclass
class _Option:
    """One option as the draws evaluate it: its sizing row (unsized; resolved), its years' row (resolved, with the
    point study's fleet size) and what the point study found (its purchases, the fast tier's speed test per year).
    """

    opt: Option
    sizing: dict[str, np.ndarray] | None
    years: dict[str, np.ndarray]
    existing: float
    at_fast_tier: Floats
    feasible: bool


def drivers(scenario: Scenario | dict[str, Any], point: RetrofitResult | None = None) -> list[Driver]:
    """Every ranged input of the study of ``scenario`` (see the module docstring), in the order they are drawn.

    ``point`` is :func:`economics.studies.retrofit.analyse` of it when the caller has it.
    """
    s = as_scenario(scenario)
    point = analyse(s) if point is None else point
    out = _throughput_drivers(point) + _price_drivers(s, point)
    first = point.option_years[0][1].rows[0]
    out += shared_drivers(s, _resolved(first), bool(first.get("electricity_tariff")))
    out.append(_scaled("demand growth", "demand_growth_per_year", float(s.demand_growth_per_year), GROWTH_FACTORS,
                       "no source: half to one and a half times the growth given"))
    out.append(_scaled("token prices", "token_prices", 1.0, TOKEN_PRICE_FACTORS,
                       "no source: every selling price -30 % to +30 % at once"))
    return out + _curve_drivers(s, point)


def _curve_drivers(s: Scenario, point: RetrofitResult) -> list[Driver]:
    """The forward curves: the yearly change of the selling prices (where the study sells), and of the rent (where
    some option rents), each over its sourced range widened to hold the scenario's value.
    """
    out = []
    curves = (("token price change", "token_price_change_per_year", TOKEN_PRICE_CHANGE_RANGE,
               s.price_usd_per_m_output_tokens is not None or s.price_usd_per_m_input_tokens is not None),
              ("rent change", "rent_change_per_year", RENT_CHANGE_RANGE,
               any(np.nansum(part.numbers["rent_usd_per_hour"]) > 0 for _, part in point.option_years)))
    for name, target, (lo, hi, why), applies in curves:
        base = float(getattr(s, target))
        if applies:
            out.append(Driver(name, target, min(lo, base), base, max(hi, base), why, False))
    return out


def _scaled(name: str, target: str, base: float, factors: tuple[float, float], why: str) -> Driver:
    """A driver ranged by factors of its base, an assumption."""
    return Driver(name, target, base * factors[0], base, base * factors[1], f"assumption: {why}", True)


THROUGHPUT_FIELDS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                     "decode_output_tokens_per_s_per_accelerator")
"""The rates an estimate gives, each with its P10-P90 ratio (``_low_ratio:<field>``, ``_high_ratio:<field>``)."""


def _throughput_drivers(point: RetrofitResult) -> list[Driver]:
    """A factor per accelerator whose rate is estimated in some option (the estimator's P10-P90 ratio), and the
    users per decode replica where a decode rate is built from them.
    """
    out: dict[str, Driver] = {}
    for _, part in point.option_years:
        row = part.rows[0]
        resolved = _resolved(row)
        for f in THROUGHPUT_FIELDS:
            ratios = estimate_ratios(resolved, f)
            acc = row["decode_accelerator"] if f.startswith("decode") else row["accelerator"]
            if acc and ratios is not None and acc not in out:
                out[acc] = rate_driver(acc, *ratios)
        users = row.get("decode_concurrent_users_per_replica")
        if row.get("decode_accelerator") and row.get("decode_output_tokens_per_s_per_accelerator") is None and (
                row.get("decode_measured_output_tokens_per_s_per_user") is not None):
            key = f"users:{row['decode_accelerator']}"
            base = float(users if users is not None else resolved["decode_concurrent_users_per_replica"][0])
            if np.isfinite(base) and key not in out:
                lo_f, hi_f = USERS_PER_REPLICA_FACTORS
                out[key] = Driver(f"{row['decode_accelerator']} users per replica", key, base * lo_f, base,
                                  base * hi_f, "assumption: the source states no concurrency; half to twice the "
                                  "users a replica serves at once", True)
    return list(out.values())


def _price_drivers(s: Scenario, point: RetrofitResult) -> list[Driver]:
    """A driver per price an option pays that is a catalog figure marked estimate (:func:`price_driver`). A price
    the scenario gives is the user's, not ranged.
    """
    out: dict[str, Driver] = {}
    for opt, (_, part) in zip(point.studied, point.option_years, strict=True):
        for _, price_col in opt.purchases:
            if getattr(s, price_col, None) is not None:
                continue
            acc = part.rows[0]["decode_accelerator" if price_col.startswith("decode") else "accelerator"]
            found = None if acc in out else price_driver(acc, _float(part.first({price_col}).get(price_col)))
            if found is not None:
                out[acc] = found
    return list(out.values())


def price_driver(acc: str, base: float) -> Driver | None:
    """The range of ``acc``'s catalog price ``base`` where the catalog marks it estimate: its sourced range
    (:data:`SOURCED_PRICE_RANGES`, widened to hold the base), else the Uncertainty page's default spread (an
    assumption); None for a price not marked estimate or not finite. The one rule the decode study's and the
    comparison's odds draw a price by.
    """
    source = catalog.accelerator_source(acc, "price_usd") or {}
    if not np.isfinite(base) or source.get("confidence") != "estimate":
        return None
    if acc in SOURCED_PRICE_RANGES:
        lo, hi, why = SOURCED_PRICE_RANGES[acc]
        return Driver(f"{acc} price", f"price:{acc}", min(lo, base), base, max(hi, base), why, False)
    return _scaled(f"{acc} price", f"price:{acc}", base, DEFAULT_RANGE_FACTORS["accelerator_price_usd"],
                   "a catalog estimate with no range stated; the Uncertainty page's spread")


def rate_driver(acc: str, lo: float, hi: float) -> Driver:
    """A factor on ``acc``'s estimated rates over the estimator's P10-P90 ratio (``lo``, ``hi``)."""
    return Driver(f"{acc} throughput", f"throughput:{acc}", lo, 1.0, hi,
                  f"the estimator's P10-P90 for {acc} (data/estimate_ranges.csv): x{lo:g} to x{hi:g}", False)


def estimate_ratios(resolved: dict[str, np.ndarray], f: str) -> tuple[float, float] | None:
    """The estimator's P10 and P90 over its estimate of the rate ``f`` in a resolved one-row scenario; None where
    the rate is not estimated (given or measured) or has no range.
    """
    lo, hi = (float(resolved[f"_{end}_ratio:{f}"][0]) for end in ("low", "high"))
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) and (lo, hi) != (1.0, 1.0) else None


def shared_drivers(s: Scenario, resolved: dict[str, np.ndarray], tariff: bool) -> list[Driver]:
    """The electricity (not under a ``tariff``: its hours are priced by it) and the cost of capital at the
    Uncertainty page's default spreads, assumptions both.
    """
    factors = DEFAULT_RANGE_FACTORS
    out = []
    electricity = float(resolved["electricity_usd_per_kwh"][0])
    if np.isfinite(electricity) and not tariff:
        out.append(_scaled("electricity", "electricity_usd_per_kwh", electricity, factors["electricity_usd_per_kwh"],
                           "the Uncertainty page's default spread (x0.5 to x2.5)"))
    out.append(_scaled("cost of capital", "cost_of_capital", float(s.cost_of_capital), factors["cost_of_capital"],
                       "the Uncertainty page's default spread (x0.5 to x1.5)"))
    return out


def draw(found: list[Driver], samples: int, seed: int,
         distribution: OddsDistribution = OddsDistribution.TRIANGULAR) -> Floats:
    """Seeded draws, one column per driver in order (the same seed gives every option, and every study with the
    same drivers, the same draws): triangular (low, mode base, high), uniform (low, high), or normal with the ends
    read as P10 and P90 (below the base the spread of the low end, above it the high end's; kept above 0).

    >>> d = [Driver("x", "x", 1.0, 2.0, 4.0, "", True), Driver("y", "y", 3.0, 3.0, 3.0, "", True)]
    >>> draw(d, 3, 0)[:, 1].tolist()
    [3.0, 3.0, 3.0]
    """
    rng = np.random.default_rng(seed)
    out = np.empty((samples, len(found)))
    for k, d in enumerate(found):
        if d.collapsed:
            out[:, k] = d.base
        elif distribution == "uniform":
            out[:, k] = rng.uniform(d.low, d.high, samples)
        elif distribution == "normal":
            z = rng.standard_normal(samples)
            out[:, k] = np.maximum(d.base + z * np.where(z < 0, d.base - d.low, d.high - d.base) / Z90, 0.0)
        else:
            out[:, k] = rng.triangular(d.low, d.base, d.high, samples)
    return out


def tornado_rows(found: list[Driver]) -> Floats:
    """The base row, then each driver alone at its low and its high end (the others at base)."""
    base = np.array([d.base for d in found])
    rows = [base]
    for k, d in enumerate(found):
        for end in (d.low, d.high):
            row = base.copy()
            row[k] = end
            rows.append(row)
    return np.array(rows).reshape(len(rows), len(found))


def _sizing_row(s: Scenario, opt: Option, part: _Years, fresh: dict[str, Option]) -> dict[str, Any] | None:
    """The scenario row an option's fleet is sized from (its standard option in ``fresh``, unsized), when it is sized
    from demand and feasible; else None.
    """
    unsized = fresh.get(opt.name)
    sized = unsized is not None and unsized.changes.get("accelerator_count", "given") is None
    return _fleet(s, unsized) if sized and unsized is not None and bool(part.status[0]) else None


def _prepared(s: Scenario, opt: Option, part: _Years, sizing: dict[str, Any] | None) -> _Option:
    """An option of the point study, resolved: its years' row (year 1, the point study's fleet) and, when its fleet
    is sized from demand, the row it is sized from (``sizing``, :func:`_sizing_row`).
    """
    feasible = bool(part.status[0])
    return _Option(opt, None if sizing is None else _resolved(sizing), _resolved(part.rows[0]) if feasible else {},
                   float(opt.changes.get("existing", 0) or 0),
                   np.asarray(revenue_terms(part.numbers, s)["at_fast_tier_speed"], dtype=float), feasible)


class _Memo:
    """Computed values by key, bounded: at most ``entries`` of them and ``max_bytes`` of their arrays, the least
    recently used dropped first (a value larger than the bound is not kept). Values are read-only arrays, or dicts
    or tuples of them: read them, never change them. Sessions of one server run in threads: a lock guards the
    store (a value computed twice at once is kept once; both are equal).
    """

    def __init__(self, entries: int, max_bytes: int) -> None:
        self.entries, self.max_bytes = entries, max_bytes
        self._store: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept under ``key`` (None when none is)."""
        with self._lock:
            hit = self._store.get(key)
            if hit is None:
                return None
            self._store.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` under ``key`` (its arrays made read-only) and return it."""
        arrays = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, tuple) \
            else [value]
        size = 0
        for a in arrays:
            if isinstance(a, np.ndarray):
                a.setflags(write=False)
                size += a.nbytes
        with self._lock:
            if key in self._store:
                self._bytes -= self._store.pop(key)[1]
            if size <= self.max_bytes:
                self._store[key] = (value, size)
                self._bytes += size
            while len(self._store) > self.entries or self._bytes > self.max_bytes:
                self._bytes -= self._store.popitem(last=False)[1][1]
        return value

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._store.clear()
            self._bytes = 0


_RESOLVED = _Memo(entries=128, max_bytes=16 * 2**20)
"""Resolved scenario rows (:func:`_resolved`)."""
_FLOWS = _Memo(entries=64, max_bytes=64 * 2**20)
"""Each option's net cash flows over the draws (:func:`_evaluate`): 2,000 draws of a 5-year study are about 100 kB
an option; 100,000 draws (the most) about 5 MB."""
_RETURNS = _Memo(entries=64, max_bytes=16 * 2**20)
"""Each option's IRR and payback over the draws against the status quo's flows (:func:`_evaluate`)."""


def forget() -> None:
    """Forget every remembered resolution and draw (the next odds compute every option from scratch)."""
    for memo in (_RESOLVED, _FLOWS, _RETURNS):
        memo.clear()


def _resolved(row: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`economics.engine.batch.resolve_scenario` of a scenario row, remembered per the row's values (an edit
    re-runs the odds with most options' rows unchanged); a dict of its own, of read-only arrays.
    """
    key = tuple(row.items())
    hit = _RESOLVED.get(key)
    if hit is None:  # copies of its own, made read-only (the engine may keep the arrays it resolved from)
        hit = _RESOLVED.put(key, {name: np.array(v) for name, v in resolve_scenario(row).items()})
    return dict(hit)


def _column(found: list[Driver], x: Floats, target: str) -> Floats | None:
    """The draws of the driver moving ``target`` (None when none does)."""
    k = next((i for i, d in enumerate(found) if d.target == target), None)
    return None if k is None else x[:, k]


def _varying(resolved: dict[str, np.ndarray], found: list[Driver], x: Floats, growth_years: Floats,
             s: Scenario) -> dict[str, Floats]:
    """The columns the draws move, one row per draw and year (``growth_years``: the demand of each year over the
    first year's, per draw): the demand, prices, electricity, cost of capital and estimated rates.
    """
    m, t = growth_years.shape
    per_draw: dict[str, Floats] = {}
    for f in DEMAND_FIELDS:
        base = float(resolved[f][0])
        if np.isfinite(base):
            per_draw[f] = base * growth_years
    prices = _column(found, x, "token_prices")
    for f in ("price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "price_usd_per_m_cached_input_tokens"):
        if prices is not None and np.isfinite(resolved[f][0]):
            per_draw[f] = np.outer(prices * float(resolved[f][0]), np.ones(t))
    for f in ("electricity_usd_per_kwh", "cost_of_capital"):
        drawn = _column(found, x, f)
        if drawn is not None:
            per_draw[f] = np.outer(drawn, np.ones(t))
    for f, acc in (("accelerator_price_usd", "accelerator"), ("decode_accelerator_price_usd", "decode_accelerator")):
        drawn = _column(found, x, f"price:{resolved[acc][0]}")
        if drawn is not None and np.isfinite(resolved[f][0]):
            per_draw[f] = np.outer(drawn, np.ones(t))
    per_draw.update(_rates(resolved, found, x, t))
    return {name: np.asarray(v, dtype=float).reshape(m * t) for name, v in per_draw.items()}


def _rates(resolved: dict[str, np.ndarray], found: list[Driver], x: Floats, t: int) -> dict[str, Floats]:
    """The estimated rates times their accelerator's drawn factor, and a decode rate built from the users per
    replica times their drawn share of the base (per draw, per year).
    """
    out: dict[str, Floats] = {}
    for f in THROUGHPUT_FIELDS:
        acc = str(resolved["decode_accelerator" if f.startswith("decode") else "accelerator"][0])
        estimated = (float(resolved[f"_low_ratio:{f}"][0]), float(resolved[f"_high_ratio:{f}"][0])) != (1.0, 1.0)
        factor = _column(found, x, f"throughput:{acc}")
        if estimated and factor is not None and np.isfinite(resolved[f][0]):
            out[f] = np.outer(factor * float(resolved[f][0]), np.ones(t))
    users = next((d for d in found if d.target == f"users:{resolved['decode_accelerator'][0]}"), None)
    rate = float(resolved["decode_output_tokens_per_s_per_accelerator"][0])
    if users is not None and np.isfinite(rate) and users.base > 0:
        drawn = _column(found, x, users.target)
        assert drawn is not None
        out["decode_output_tokens_per_s_per_accelerator"] = np.outer(drawn / users.base * rate, np.ones(t))
    return out


def _pass(resolved: dict[str, np.ndarray], varying: dict[str, Floats], rows: int) -> dict[str, np.ndarray]:
    """The engine's outputs for ``rows`` copies of a resolved one-row scenario with the ``varying`` columns in place
    of its own (the constant ones broadcast, as :func:`economics.studies.uncertainty.monte_carlo` does).
    """
    # the estimate's P10/P90 outputs (the stages run twice more) are not read: the draws carry the spread
    cols = {**resolved, "ownership": np.broadcast_to(resolved["ownership"], (rows,)), **varying,
            "_ranged": np.zeros(1, dtype=bool)}
    return {name: np.broadcast_to(v, (rows,)) for name, v in compute(cols).items()}


REQUIRED_OUTPUTS = tuple(c for c in OUTPUT_UNITS if c not in OPTIONAL_OUTPUTS)


def _computed(out: dict[str, np.ndarray], m: int, t: int) -> NDArray[np.bool_]:
    """Per draw: every year's fleet fits, every required output is finite and no count is beyond belief (what the
    point study calls a valid, feasible year).
    """
    ok = out["fleet_flags"] == 0
    for c in REQUIRED_OUTPUTS:
        ok &= np.isfinite(np.asarray(out[c], dtype=float))
    for c in INTEGER_OUTPUTS:
        ok &= ~(np.asarray(out[c], dtype=float) > MAX_COUNT)
    return np.asarray(ok.reshape(m, t).all(axis=1))


def _growth_years(s: Scenario, found: list[Driver], x: Floats) -> Floats:
    """Each year's demand over the first year's, per draw (the drawn growth, else the scenario's)."""
    growth = _column(found, x, "demand_growth_per_year")
    g = np.full(len(x), float(s.demand_growth_per_year)) if growth is None else growth
    return growth_factors(g[:, None], np.arange(1, s.horizon_years + 1)[None, :])


def _counts(o: _Option, s: Scenario, found: list[Driver], x: Floats, grown: Floats) -> Floats | None:
    """The option's fleet per draw and year where it is sized from demand (on a schedule, each year's; else the
    last year's, every year), never below the fleet it keeps; NaN where it cannot be sized. None when the point
    study gives its fleet.
    """
    if o.sizing is None:
        return None
    m, t = grown.shape
    years = grown if o.opt.schedule else grown[:, -1:]
    out = _pass(o.sizing, _varying(o.sizing, found, x, years, s), years.size)
    sized = np.asarray(out["accelerators"], dtype=float).reshape(years.shape)
    sized = np.where(_computed(out, *years.shape)[:, None], np.trunc(sized), np.nan)
    sized = np.maximum(o.existing, sized)
    if o.opt.schedule:
        unsized = np.isnan(sized).any(axis=1, keepdims=True)
        return np.where(unsized, np.nan, np.maximum.accumulate(np.nan_to_num(sized), axis=1))
    return np.repeat(sized, t, axis=1)


def _option_flows(o: _Option, s: Scenario, found: list[Driver], x: Floats, grown: Floats,
                  point: dict[str, Any]) -> tuple[Floats, NDArray[np.bool_]]:
    """The option's net cash flow at t = 0 .. T per draw (NaN rows where a year cannot be computed) and which draws
    it could be computed in: its years through the engine, then the point study's formulas over the table.
    ``point``: the point study's first-year values of the option's purchases (count and price columns).
    """
    m, t = grown.shape
    if not o.feasible:
        return np.full((m, t + 1), np.nan), np.zeros(m, dtype=bool)
    counts = _counts(o, s, found, x, grown)
    varying = _varying(o.years, found, x, grown, s)
    if counts is not None:
        varying["accelerator_count"] = np.nan_to_num(counts, nan=max(o.existing, 1.0)).reshape(m * t)
    out = _pass(o.years, varying, m * t)
    ok = _computed(out, m, t) & (np.isfinite(counts).all(axis=1) if counts is not None else True)
    y = {c: np.asarray(out[c], dtype=float).reshape(m, t) for c in (
        "capital_usd_per_hour", "cooling_retrofit_usd_per_hour", "cost_usd_per_year", "revenue_usd_per_day",
        "served_output_tokens_per_day", "accelerators", "rent_usd_per_hour")}
    y["decode_accelerators"] = np.asarray(out["decode_accelerators"], dtype=float).reshape(m, t)
    rate = _column(found, x, "cost_of_capital")
    rate = np.full(m, float(s.cost_of_capital)) if rate is None else rate
    buy = _purchases(o, y, found, x, point)
    capex = buy + _retrofit(y["cooling_retrofit_usd_per_hour"], rate, float(s.facility_depreciation_years))
    residual = np.zeros_like(buy)
    residual[:, -1] = RESIDUAL.evaluate({"bought_usd": buy.sum(axis=1),
                                         "residual_value_fraction": float(s.residual_value_fraction)})
    opex = np.asarray(OPEX.evaluate(opex_terms(y, _curve(found, x, s, "rent_change_per_year"))), dtype=float)
    net = net_t_usd(capex, _revenue(o, y, found, x, s), opex, residual)
    return np.where(ok[:, None], net, np.nan), ok


def _revenue(o: _Option, y: dict[str, Floats], found: list[Driver], x: Floats, s: Scenario) -> Floats:
    """Revenue per draw and year (:data:`REVENUE`; the fast tier at the drawn output price, where the point study's
    users see its speed: the per-user speed does not move with the draws).
    """
    prices = _column(found, x, "token_prices")
    price = float(s.price_usd_per_m_output_tokens or 0.0) * (1.0 if prices is None else prices)
    terms = {"revenue_usd_per_day": np.nan_to_num(y["revenue_usd_per_day"], nan=0.0),
             "served_output_tokens_per_day": y["served_output_tokens_per_day"],
             "price_usd_per_m_output_tokens": np.reshape(price, (-1, 1)),
             "fast_tier_price_multiplier": float(s.fast_tier_price_multiplier),
             "at_fast_tier_speed": o.at_fast_tier[None, :],
             "token_price_index": forward_y(_curve(found, x, s, "token_price_change_per_year"),
                                            y["revenue_usd_per_day"].shape[1])}
    terms["fast_tier_usd"] = np.asarray(FAST_TIER.evaluate(terms), dtype=float)
    return np.asarray(REVENUE.evaluate(terms), dtype=float) * np.ones_like(y["revenue_usd_per_day"])


def _curve(found: list[Driver], x: Floats, s: Scenario, target: str) -> Floats:
    """A forward curve's yearly change per draw: drawn where it is a driver, else the scenario's."""
    drawn = _column(found, x, target)
    return np.full(len(x), float(getattr(s, target))) if drawn is None else drawn


def _purchases(o: _Option, y: dict[str, Floats], found: list[Driver], x: Floats, point: dict[str, Any]) -> Floats:
    """What the option buys at t = 0 .. T per draw (:data:`PURCHASE`, as
    :func:`economics.studies.retrofit_cash.purchases_t_usd` over a table): the accelerators each year needs beyond
    the last, at the drawn price (else the point study's).
    """
    m, t = y["accelerators"].shape
    buy = np.zeros((m, t + 1))
    for count_col, price_col in o.opt.purchases:
        acc = str(o.years["decode_accelerator" if price_col.startswith("decode") else "accelerator"][0])
        drawn = _column(found, x, f"price:{acc}")
        price = np.full(m, _float(point.get(price_col))) if drawn is None else drawn
        if count_col == "added_accelerators":
            needed = np.maximum(0.0, y["accelerators"] - o.existing)
        elif count_col == "accelerators":
            needed = y["accelerators"]
        else:  # the decode pool, bought once in year 0
            needed = np.repeat(y[count_col][:, :1], t, axis=1)
        bought = np.diff(np.maximum.accumulate(np.nan_to_num(needed), axis=1), axis=1, prepend=0.0)
        buy[:, :t] += PURCHASE.evaluate({"bought": bought, "price_usd": price[:, None]})
    return buy


def _retrofit(annuity_y: Floats, rate: Floats, years: float) -> Floats:
    """The liquid retrofit's capex at t = 0 .. T per draw (:data:`RETROFIT`, as
    :func:`economics.studies.retrofit_cash.retrofit_t_usd` over a table).
    """
    crf = np.asarray(capital_recovery_factor(rate, years), dtype=float)[:, None]
    capex_y = RETROFIT.evaluate({"cooling_retrofit_usd_per_hour": np.nan_to_num(annuity_y), "crf": crf})
    grown = np.diff(np.maximum.accumulate(capex_y, axis=1), axis=1, prepend=0.0)
    return np.concatenate([grown, np.zeros((len(grown), 1))], axis=1)


def npv_rows(rate: Floats, flows: Floats) -> Floats:
    """NPV of each row of cash flows (t = 0 .. T) at its own rate: what :func:`economics.domain.finance.npv_usd`
    gives one row.

    >>> npv_rows(np.array([0.1]), np.array([[-100.0, 110.0]])).round(9).tolist() == [0.0]
    True
    """
    disc = discount_factors(rate[:, None], np.arange(flows.shape[1])[None, :])
    return np.asarray((flows * disc).sum(axis=1), dtype=float)


def irr_rows(flows: Floats) -> Floats:
    """IRR of each row (t = 0 .. T), as :func:`economics.domain.finance.irr` gives it where the flows change sign
    once (bisection on the log of 1 + r, between -99.9999 % and 10^6); + or - infinity where they never change sign
    (positive or negative in sum), NaN where all are zero; a row changing sign more than once goes through
    :func:`~economics.domain.finance.irr` itself.

    >>> irr_rows(np.array([[-100.0, 60.0, 60.0], [100.0, 10.0, 0.0]])).round(6).tolist()
    [0.130662, inf]
    """
    pos, neg = (flows > 0).any(axis=1), (flows < 0).any(axis=1)
    out = np.where(pos & ~neg, np.inf, np.where(neg & ~pos, -np.inf, np.nan))
    both = pos & neg
    lo, hi = np.full(len(flows), np.log(1e-6)), np.full(len(flows), np.log(1e6 + 1.0))
    f_lo = _present(flows, lo)
    for _ in range(56):  # the bracket, 27.6 wide in log(1 + r), to below 10^-15
        mid = 0.5 * (lo + hi)
        f_mid = _present(flows, mid)
        same = np.sign(f_mid) == np.sign(f_lo)
        lo, f_lo = np.where(same, mid, lo), np.where(same, f_mid, f_lo)
        hi = np.where(same, hi, mid)
    root = np.expm1(0.5 * (lo + hi))
    once = both & (_sign_changes(flows) == 1)
    out[once] = root[once]
    more = np.nonzero(both & ~once)[0]
    out[more] = irr_many(flows[more])
    return np.asarray(out, dtype=float)


def irr_many(flows: Floats) -> Floats:
    """IRR of each row (t = 0 .. T), exactly as :func:`economics.domain.finance.irr` gives it (NaN where it gives
    None): ``numpy_financial.irr``'s own steps over every row at once (the roots of the polynomial in 1 / (1 + r),
    the eigenvalues of its companion matrix, as ``numpy.roots`` builds it; of the real positive ones, the rate
    closest to zero), where a row's first and last flows are not zero and its matrix is finite; any other row
    goes through :func:`~economics.domain.finance.irr` itself (and so raises as it does, on a matrix that is not
    finite). Equal to it bit for bit (tests/test_retrofit_odds.py), and about 10 times faster on the draws whose
    flows change sign more than once (years of losses, then a resale at the horizon).

    >>> irr_many(np.array([[-100.0, 230.0, -132.0], [100.0, 10.0, 0.0]])).round(6).tolist()
    [0.1, nan]
    """
    out = np.full(len(flows), np.nan)
    p = flows[:, ::-1]  # numpy.roots' order: the last year's flow is the highest power
    n = flows.shape[1] - 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = -p[:, 1:] / p[:, :1]
    signs = (flows > 0).any(axis=1) & (flows < 0).any(axis=1)  # else no rate: empty, as irr gives it
    fast = signs & (p[:, 0] != 0) & (p[:, -1] != 0) & np.isfinite(top).all(axis=1)
    if fast.any():
        matrix = np.zeros((int(fast.sum()), n, n))
        matrix[:, np.arange(1, n), np.arange(n - 1)] = 1.0
        matrix[:, 0, :] = top[fast]
        roots = np.linalg.eigvals(matrix)
        real = (roots.imag == 0) & (roots.real > 0)
        with np.errstate(divide="ignore", over="ignore"):  # a root near 0: an infinite rate, no IRR
            rate = 1 / roots.real - 1
        closest = np.where(real, np.abs(rate), np.inf)
        k = np.argmin(closest, axis=1)
        found = np.isfinite(closest[np.arange(len(k)), k])  # a real positive root, and a finite rate
        out[fast] = np.where(found, rate[np.arange(len(k)), k], np.nan)
    for i in np.nonzero(signs & ~fast)[0]:
        value = irr(flows[i])
        out[i] = np.nan if value is None else value
    return out


def payback_rows(flows: Floats) -> Floats:
    """Payback of each row in years, as :func:`economics.domain.finance.payback_years` gives it; infinity where the
    cumulative flow never turns non-negative.

    >>> payback_rows(np.array([[-100.0, 60.0, 60.0], [-100.0, 10.0, 0.0]])).round(6).tolist()
    [1.666667, inf]
    """
    cum = np.cumsum(flows, axis=1)
    reached = cum >= 0
    k = np.argmax(reached, axis=1)
    rows = np.arange(len(flows))
    before = cum[rows, np.maximum(k - 1, 0)]
    step = flows[rows, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        years = np.where(k == 0, 0.0, (k - 1) - before / np.where(step == 0, 1.0, step))
    return np.asarray(np.where(reached.any(axis=1), years, np.inf), dtype=float)


def _present(flows: Floats, log_growth: Floats) -> Floats:
    """Each row's present value at the rate r with log(1 + r) = ``log_growth`` (Horner's rule in 1 / (1 + r))."""
    u = np.exp(-log_growth)
    acc = flows[:, -1].copy()
    for j in range(flows.shape[1] - 2, -1, -1):
        acc = acc * u + flows[:, j]
    return np.asarray(acc, dtype=float)


def _sign_changes(flows: Floats) -> NDArray[np.int_]:
    """How often each row's flows change sign, zeros skipped.

    >>> _sign_changes(np.array([[-1.0, 0.0, 2.0, 3.0], [-1.0, 2.0, -1.0, 0.0]])).tolist()
    [1, 2]
    """
    signs = np.sign(flows)
    prev, changes = signs[:, 0].copy(), np.zeros(len(flows), dtype=int)
    for j in range(1, flows.shape[1]):
        now = signs[:, j]
        changes += (now != 0) & (prev != 0) & (now != prev)
        prev = np.where(now != 0, now, prev)
    return changes


ODDS_COLUMNS = ("option", "probability_best", "npv_usd_p10", "npv_usd_p50", "npv_usd_p90", "irr_p10", "irr_p50",
                "irr_p90", "payback_months_p10", "payback_months_p50", "payback_months_p90", "computed_share",
                "npv_vs_status_quo_usd")
"""Columns of the odds table, in order: per option the share of draws in which it has the highest NPV against the
status quo (the status quo itself at 0), its NPV, IRR and payback at P10 / P50 / P90 over the draws it could be
computed in (empty: an IRR with no rate, a payback not within the horizon), that share, and the point NPV."""
PAIR_COLUMNS = ("option", "other", "probability_option_beats_other")
TORNADO_COLUMNS = ("driver", "low", "base", "high", "difference_at_low", "difference_at_high", "swing",
                   "break_even", "source", "assumption")
DRIVER_COLUMNS = ("driver", "low", "base", "high", "source", "assumption")
FAN_COLUMNS = ("option", "year", "npv_to_date_usd_p10", "npv_to_date_usd_p50", "npv_to_date_usd_p90")
"""Columns of the fan: per option other than the status quo and year t = 0 .. T, the NPV against the status quo of
the cash flows to t (present values summed from t = 0; at T the option's NPV) at P10 / P50 / P90 of the draws it
could be computed in."""


DECODE_ODDS_COLUMNS = (*DECODE_COLUMNS, "option", "probability_best", "npv_usd_p10", "npv_usd_p50", "npv_usd_p90",
                       "odds")
"""Columns of the decode accelerators' odds: the decode accelerators table
(:data:`economics.studies.retrofit_decode.DECODE_COLUMNS`) with the option that studies each, its share of draws as
the best and its NPV at P10 / P50 / P90, and the odds in words (or why there are none)."""


def decode_odds(s: Scenario, options: pd.DataFrame) -> pd.DataFrame:
    """Every decode accelerator of the catalog side by side with the odds of the option that studies it (the
    scenario's own in ``add decode``, another in ``add decode (<id>)``); one not studied, or studied but never
    computed, says why it has no odds. ``options``: :attr:`RetrofitOdds.options`.
    """
    table = decode_table(s)
    by_option = {str(r["option"]): r for r in options.to_dict(orient="records")}
    rows = []
    for _, r in table.iterrows():
        acc = r["decode_accelerator"]
        name = str(OptionKind.ADD_DECODE) if acc == s.decode_accelerator else f"add decode ({acc})"
        row = {**r.to_dict(), "option": name if r["studied"] else "", "probability_best": None,
               "npv_usd_p10": None, "npv_usd_p50": None, "npv_usd_p90": None}
        got = by_option.get(name) if r["studied"] else None
        if got is not None and float(got["computed_share"]) > 0:
            row.update({k: got[k] for k in ("probability_best", "npv_usd_p10", "npv_usd_p50", "npv_usd_p90")})
            row["odds"] = f"best in {100 * float(got['probability_best']):.0f} % of the draws"
        else:
            why = [] if r["price_confidence"] != "no price in the catalog" else ["no price in the catalog"]
            why += [str(r["note"])] if not r["studied"] else ["its option could not be computed in any draw"]
            row["odds"] = "no odds: " + "; ".join(why)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(DECODE_ODDS_COLUMNS))


def _fan(names: list[str], to_date: Floats) -> pd.DataFrame:
    """The fan (:data:`FAN_COLUMNS`) from each draw's NPV to date (draws x options x years); an option computed in
    no draw is left out.
    """
    rows = []
    for k, name in enumerate(names[1:], start=1):
        done = to_date[np.isfinite(to_date[:, k, -1]), k, :]
        if not len(done):
            continue
        p10, p50, p90 = np.percentile(done, [10, 50, 90], axis=0)
        rows += [{"option": name, "year": t, "npv_to_date_usd_p10": float(a), "npv_to_date_usd_p50": float(b),
                  "npv_to_date_usd_p90": float(c)} for t, (a, b, c) in enumerate(zip(p10, p50, p90, strict=True))]
    return pd.DataFrame(rows, columns=list(FAN_COLUMNS))


@dataclass
class RetrofitOdds:
    """The odds of a decode study: :attr:`options` (columns :data:`ODDS_COLUMNS`), :attr:`pairs` (for each pair
    of options computed in some draw, the share of draws in which the first has the higher NPV), :attr:`tornado`
    (the NPV of ``leading[0]`` minus ``leading[1]`` with each driver alone at its ends, largest swing first, and
    the value of the driver at which it would be zero) and :attr:`drivers`; ``npv``: every draw's NPV per option
    (draws x options, NaN where not computed).
    """

    names: list[str]
    npv: Floats
    irr: Floats
    payback_years: Floats
    point_npv: Floats
    base_npv: Floats
    ends_npv: Floats
    found: list[Driver]
    samples: int
    seed: int
    distribution: OddsDistribution
    leading: tuple[str, str] | None = field(default=None)
    fan: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(FAN_COLUMNS)))
    """The NPV to each year per option at P10 / P50 / P90 of the draws, columns :data:`FAN_COLUMNS` (:func:`_fan`)."""
    decode: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(DECODE_ODDS_COLUMNS)))
    """Every decode accelerator of the catalog with its option's odds (:func:`decode_odds`)."""

    @cached_property
    def options(self) -> pd.DataFrame:
        """One row per option, in the study's order, columns :data:`ODDS_COLUMNS`."""
        best = np.argmax(np.where(np.isnan(self.npv), -np.inf, self.npv), axis=1)
        rows = []
        for k, name in enumerate(self.names):
            rows.append({"option": name, "probability_best": float(np.mean(best == k)),
                         **_percentiles("npv_usd", self.npv[:, k], "linear"),
                         **_percentiles("irr", self.irr[:, k], "inverted_cdf"),
                         **_percentiles("payback_months", self.payback_years[:, k] * 12.0, "inverted_cdf"),
                         "computed_share": float(np.mean(np.isfinite(self.npv[:, k]))),
                         "npv_vs_status_quo_usd": _finite(self.point_npv[k])})
        return pd.DataFrame(rows, columns=list(ODDS_COLUMNS))

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """Every ordered pair of options computed together in some draw, columns :data:`PAIR_COLUMNS`."""
        rows = []
        for a, name_a in enumerate(self.names):
            for b, name_b in enumerate(self.names):
                both = np.isfinite(self.npv[:, a]) & np.isfinite(self.npv[:, b])
                if a != b and both.any():
                    rows.append({"option": name_a, "other": name_b, "probability_option_beats_other":
                                 float(np.mean(self.npv[both, a] > self.npv[both, b]))})
        return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))

    @cached_property
    def drivers(self) -> pd.DataFrame:
        """The ranged inputs as drawn, columns :data:`DRIVER_COLUMNS` (assumption: no source gives the range)."""
        return pd.DataFrame([{"driver": d.name, "low": d.low, "base": d.base, "high": d.high, "source": d.source,
                              "assumption": d.assumption} for d in self.found], columns=list(DRIVER_COLUMNS))

    @cached_property
    def tornado(self) -> pd.DataFrame:
        """The leading options' NPV difference with each driver alone at its ends, columns
        :data:`TORNADO_COLUMNS`, largest swing first (empty with fewer than two options computed).
        """
        if self.leading is None:
            return pd.DataFrame(columns=list(TORNADO_COLUMNS))
        a, b = (self.names.index(n) for n in self.leading)
        base = float(self.base_npv[a] - self.base_npv[b])
        rows = []
        for k, d in enumerate(self.found):
            lo, hi = (float(self.ends_npv[2 * k + e, a] - self.ends_npv[2 * k + e, b]) for e in (0, 1))
            rows.append({"driver": d.name, "low": d.low, "base": d.base, "high": d.high, "difference_at_low": lo,
                         "difference_at_high": hi, "swing": abs(hi - lo), "break_even": _break_even(d, lo, base, hi),
                         "source": d.source, "assumption": d.assumption})
        out = pd.DataFrame(rows, columns=list(TORNADO_COLUMNS))
        return out.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables the CLI and the API write, by name, in the order they write them."""
        return {"odds": self.options, "pairs": self.pairs, "tornado": self.tornado, "drivers": self.drivers,
                "fan": self.fan, "decode_accelerators": self.decode}

    def headline(self) -> str:
        """The odds in one sentence: the option most often best, and in what share of the draws."""
        top = self.options.sort_values("probability_best", ascending=False, kind="stable").iloc[0]
        return (f"{top['option']} is the best option in {100 * top['probability_best']:.0f} % of "
                f"{self.samples:,} draws (seed {self.seed})")

    def assumptions(self) -> list[str]:
        """Each range no source gives, in words (the page and the CLI name them)."""
        return [f"{d.name}: {d.low:,.4g} to {d.high:,.4g} around {d.base:,.4g} ({d.source})" for d in self.found
                if d.assumption and not d.collapsed]


def _finite(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def _percentiles(prefix: str, values: Floats, method: str) -> dict[str, float | None]:
    """P10 / P50 / P90 of the draws computed (NaN left out); an infinite percentile (a payback never reached, an
    IRR with no rate) or none computed is empty (None).
    """
    v = values[~np.isnan(values)]
    if not v.size:
        return {f"{prefix}_p{p}": None for p in (10, 50, 90)}
    got = np.percentile(v, [10, 50, 90], method=method)  # type: ignore[call-overload]
    return {f"{prefix}_p{p}": _finite(float(x)) for p, x in zip((10, 50, 90), got, strict=True)}


def _break_even(d: Driver, lo: float, base: float, hi: float) -> float | None:
    """The driver's value at which the difference is zero, linear between the points evaluated (low, base, high);
    None when it keeps its sign over the range.
    """
    for (x0, y0), (x1, y1) in (((d.low, lo), (d.base, base)), ((d.base, base), (d.high, hi))):
        if y0 == 0:
            return x0
        if x1 != x0 and y0 * y1 < 0:
            return x0 + (x1 - x0) * y0 / (y0 - y1)
    return d.high if hi == 0 else None


def with_ranges(found: list[Driver], ranges: dict[str, tuple[float, float]] | None) -> list[Driver]:
    """The drivers with the ``ranges`` given by name (low, high) in place of theirs: each must name a driver and
    contain its base (:class:`ValueError` naming the driver and the values otherwise).
    """
    ranges = dict(ranges or {})
    names = [d.name for d in found]
    unknown = [n for n in ranges if n not in names]
    if unknown:
        raise ValueError(f"ranges: {unknown[0]!r} is not a ranged input of this study (they are: {', '.join(names)})")
    out = []
    for d in found:
        if d.name in ranges:
            lo, hi = (float(v) for v in ranges[d.name])
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= d.base <= hi):
                raise ValueError(f"ranges: {d.name}: {lo:g} to {hi:g} must be finite and contain its base {d.base:g}")
            d = Driver(d.name, d.target, lo, d.base, hi, "given", False)
        out.append(d)
    return out


def check_samples(samples: int) -> int:
    """``samples`` if it is a whole number from 1 to :data:`MAX_SAMPLES`, else a :class:`ValueError` naming it."""
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples: {samples!r} must be a whole number from 1 to {MAX_SAMPLES:,}")
    return samples


def odds(scenario: Scenario | dict[str, Any], samples: int = 10_000, seed: int = 0,
         distribution: OddsDistribution = OddsDistribution.TRIANGULAR,
         ranges: dict[str, tuple[float, float]] | None = None,
         point: RetrofitResult | None = None) -> RetrofitOdds:
    """The decode study of ``scenario`` over ``samples`` seeded draws of every ranged input (see the module
    docstring).

    Parameters
    ----------
    scenario : the study's scenario (as :func:`economics.studies.retrofit.analyse` takes it)
    samples, seed : how many draws, and the seed that makes them (the same seed, the same draws)
    distribution : how a range is drawn (:func:`draw`)
    ranges : ranges given by driver name (:func:`drivers`), (low, high), in place of the defaults
    point : :func:`economics.studies.retrofit.analyse` of the scenario when the caller has it

    Returns
    -------
    RetrofitOdds : per option the odds it is best and its NPV, IRR and payback at P10 / P50 / P90; the pairs; the
    tornado of the two leading options' NPV difference.
    """
    s = as_scenario(scenario)
    check_samples(samples)
    point = analyse(s) if point is None else point
    found = with_ranges(drivers(s, point), ranges)
    x = np.vstack([draw(found, samples, seed, distribution), tornado_rows(found)])
    npv, irr_, payback, to_date = _evaluate(s, point, found, x, (samples, seed, distribution))
    names = [opt.name for opt in point.studied]
    point_npv = np.array([_float(r["npv_vs_status_quo_usd"]) for r in point.rows])
    result = RetrofitOdds(names, npv[:samples], irr_[:samples], payback[:samples], point_npv, npv[samples],
                          npv[samples + 1:], found, samples, seed, distribution, fan=_fan(names, to_date[:samples]))
    result.decode = decode_odds(s, result.options)
    ranked = result.options.sort_values(["probability_best", "npv_usd_p50"], ascending=False, kind="stable")
    order = [names.index(n) for n in ranked.loc[ranked["computed_share"] > 0, "option"]]
    # the runner-up: the next option that differs from the leader in some draw (an option on a schedule with no
    # growth is the same fleet as the one bought at once)
    rest = [k for k in order[1:] if not np.allclose(npv[:, k], npv[:, order[0]], rtol=1e-12, equal_nan=True)]
    if order and rest:
        result.leading = (names[order[0]], names[rest[0]])
    return result


def _evaluate(s: Scenario, point: RetrofitResult, found: list[Driver], x: Floats,
              drawn: tuple[int, int, str]) -> tuple[Floats, Floats, Floats, Floats]:
    """NPV, IRR and payback [years] against the status quo of every option in every row of draws ``x`` (rows x
    options; NaN where the option or the status quo could not be computed; IRR and payback NaN for the status quo
    and where an option's flows equal the status quo's), and the NPV to each year t = 0 .. T (rows x options x
    years: the present values summed to t; at T the NPV). ``drawn``: the samples, seed and distribution ``x`` was
    drawn with.

    Each option's flows over the draws are remembered per :func:`_option_key` (its rows, the drivers and how they
    were drawn: the same draws for every option), and its IRR and payback per its key and the status quo's: an edit
    that changes one option (a decode price: 'add decode') draws that option alone again. Nothing else is shared
    between options, so the figures are those of the odds computed from scratch, bit for bit.
    """
    grown = _growth_years(s, found, x)
    rate = _column(found, x, "cost_of_capital")
    rate = np.full(len(x), float(s.cost_of_capital)) if rate is None else rate
    fresh = {o.name: o for o in standard_options(s)}
    keys, nets = [], []
    for opt, (_, part) in zip(point.studied, point.option_years, strict=True):
        sizing = _sizing_row(s, opt, part, fresh)
        key = _option_key(opt, part, sizing, found, drawn)
        net = _FLOWS.get(key)
        if net is None:
            first = part.first({c for pair in opt.purchases for c in pair})
            net = _FLOWS.put(key, _option_flows(_prepared(s, opt, part, sizing), s, found, x, grown, first)[0])
        keys.append(key)
        nets.append(net)
    shape = (len(x), len(nets))
    npv, irr_, payback = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    to_date = np.full((*shape, s.horizon_years + 1), np.nan)
    disc = discount_factors(rate[:, None], np.arange(s.horizon_years + 1)[None, :])
    for k, net in enumerate(nets):
        inc = net - nets[0]
        npv[:, k] = npv_rows(rate, inc)
        to_date[:, k, :] = np.cumsum(inc * disc, axis=1)
        if k == 0:
            continue
        returns = _RETURNS.get((keys[k], keys[0]))
        if returns is None:
            returns = _RETURNS.put((keys[k], keys[0]), _returns(net, inc))
        irr_[:, k], payback[:, k] = returns
    return npv, irr_, payback, to_date


def _option_key(opt: Option, part: _Years, sizing: dict[str, Any] | None, found: list[Driver],
                drawn: tuple[int, int, str]) -> Hashable:
    """What an option's flows over the draws depend on: the option (its name, purchases, schedule and the fleet it
    keeps), its years' rows as the point study evaluated them, the row it is sized from, and the drivers with how
    they were drawn (which fix the draws). Each row is the whole scenario with the option's changes, so it holds
    every field the flows read besides the draws (the cost of capital, horizon, prices and their curves, resale).
    """
    return (opt.name, tuple(opt.purchases), opt.schedule, opt.changes.get("existing"),
            tuple(tuple(r.items()) for r in part.rows), None if sizing is None else tuple(sizing.items()),
            tuple(found), drawn)


def _returns(net: Floats, inc: Floats) -> tuple[Floats, Floats]:
    """IRR and payback [years] of each row of an option's flows against the status quo's (``inc``; ``net``: its
    own), NaN where they equal the status quo's or a year is missing.
    """
    irr_, payback = np.full(len(inc), np.nan), np.full(len(inc), np.nan)
    scale = np.maximum(1.0, np.nanmax(np.abs(net), axis=1))
    differs = ~np.all(np.abs(inc) <= 1e-9 * scale[:, None], axis=1) & np.isfinite(inc).all(axis=1)
    irr_[differs] = irr_rows(inc[differs])
    payback[differs] = payback_rows(inc[differs])
    return irr_, payback
