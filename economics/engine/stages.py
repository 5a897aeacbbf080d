"""The engine's stages: resolved scenario columns in, every output column out.

Each stage is a short, pure step over a :class:`Columns` record: it evaluates formula definitions of the domain
modules (capacity, fleet, cost, revenue, finance) over whole columns, choosing per row the variant that applies
(owned or rented, one pool or two, demand given or inferred), and records the applied formula of a traced row
with that row's numbers. Order: demand and work -> sizing -> serving (capacity, served, utilization) ->
facility (cooling, PUE, systems, racks, site) -> cost of a pool (once per pool) -> unit costs -> revenue and
break-even -> energy. Catalog figures and defaults were resolved before (:mod:`economics.engine.resolve`): no I/O here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from economics.domain import capacity as cap
from economics.domain import carbon, cost, finance, fleet, rent, revenue
from economics.domain import sessions as ses
from economics.domain.explain import Trace
from economics.domain.formula import Formula
from economics.schema.outputs import FleetProblem, RowWarning
from economics.schema.scenario import Cooling, FacilityCooling

Array = NDArray[Any]


class Columns:
    """The working record: named columns ``v`` (inputs, then every quantity computed), row masks, the trace."""

    # row masks, set by :func:`economics.engine.resolve.resolve` and by the stages that decide them
    own: Array
    dis: Array
    any_dis: bool
    has_p: Array
    sized: Array
    pays_energy: Array
    in_facility: Array
    zero_rate: Array
    has_link: Array
    has_demand: Array
    needs_liquid: Array
    retrofit: Array
    needs_liquid_y: Array
    retrofit_y: Array
    liquid_racks: Array
    liquid_racks_y: Array
    reserved: Array
    spot: Array
    tou: Array
    has_carbon: Array
    carbon_by_hour: Array
    carbon_priced: Array
    by_hour: Array
    sessions: Array

    def __init__(self, v: dict[str, Any], trace: Trace | None) -> None:
        self.v = v
        self.trace = trace
        self.n = len(v["ownership"])
        self.row = trace.row if trace is not None else -1
        self.flags = np.zeros(self.n, dtype=np.int64)
        self.fleet_flags = np.zeros(self.n, dtype=np.int64)

    def calc(self, formula: Formula, where: Any = None, note: str = "") -> Any:
        """Evaluate ``formula`` into column ``formula.name`` on the rows ``where`` (all rows when None); other
        rows keep their value (NaN if new). Records the step when the traced row is one of them.
        """
        some, every = (True, True) if where is None else _some_every(where)
        if not some:
            if formula.name not in self.v:
                self.v[formula.name] = nans(self.n)
            return self.v[formula.name]
        out = formula.evaluate(self.v)
        if not every:
            old = self.v.get(formula.name)
            out = np.where(where, out, np.nan if old is None else old)
        elif not (type(out) is np.ndarray and out.ndim > 0) and np.ndim(out) == 0:  # a column: no dispatch
            out = np.full(self.n, float(out))
        if self.trace is not None and (where is None or where[self.row]):
            self.trace.record(formula, self.v, out, note)
        self.v[formula.name] = out
        return out

    def zeros(self, *formulas: Formula, where: Callable[[], Any]) -> None:
        """Set each column of ``formulas`` (zero formulas: expression ``0``, a note saying why) to 0 on every row,
        and record each step when the traced row is one of ``where()``, the rows that keep the zero (later steps
        compute the others). ``where`` is called only with a trace: untraced, this is a column of zeros a formula.
        """
        for f in formulas:
            self.v[f.name] = out = np.zeros(self.n)
            if self.trace is not None and where()[self.row]:
                self.trace.record(f, self.v, out)

    def flag(self, warning: RowWarning, rows: Any) -> None:
        """Mark ``rows`` with a warning (its bit in :attr:`flags`)."""
        if not _none(rows):  # the flag's int: numpy probes an enum member for array protocols, slowly
            self.flags |= np.asarray(rows, dtype=np.int64) * int(warning)

    def fleet_flag(self, problem: FleetProblem, rows: Any) -> None:
        """Mark ``rows`` as infeasible for a reason (its bit in :attr:`fleet_flags`)."""
        if not _none(rows):
            self.fleet_flags |= np.asarray(rows, dtype=np.int64) * int(problem)


def nans(n: int) -> Array:
    """A new column of ``n`` NaN (one scenario, its range's few rows: a list's, without :func:`numpy.full`'s
    overhead).

    >>> nans(1).tolist(), nans(3).tolist(), nans(_FEW + 1).shape
    ([nan], [nan, nan, nan], (9,))
    """
    return np.array([np.nan]) if n == 1 else np.array([np.nan] * n) if n <= _FEW else np.full(n, np.nan)


def column_or_nans(v: Mapping[str, Any], key: str, n: int) -> Any:
    """The column ``key`` of ``v``, else a new column of ``n`` NaN (:func:`nans`), made only where ``key`` is missing
    (``v.get(key, numpy.full(n, nan))`` builds its default on every call, present or not).

    >>> column_or_nans({"a": np.array([1.0])}, "a", 1).tolist(), column_or_nans({}, "a", 2).tolist()
    ([1.0], [nan, nan])
    """
    return v[key] if key in v else nans(n)


def fill_nan(values: Any, nan: float) -> Array:
    """:func:`numpy.nan_to_num` of a column (``nan`` where empty), read at once where no cell is NaN or infinite
    (a copy, as nan_to_num's).

    >>> fill_nan(np.array([np.nan, 2.0]), 1.0).tolist(), fill_nan(np.array([3.0]), 1.0).tolist()
    ([1.0, 2.0], [3.0])
    """
    a = np.asarray(values)
    if a.shape == (1,) and a.dtype == np.float64:  # one scenario: the cell read as nan_to_num reads it
        x = float(a[0])
        return np.array([nan if x != x else x if math.isfinite(x) else math.copysign(_LARGEST, x)])
    if a.ndim == 1 and a.shape[0] <= _FEW and a.dtype == np.float64:  # its range's few rows: each cell, as above
        return np.array([nan if x != x else x if math.isfinite(x) else math.copysign(_LARGEST, x) for x in a.tolist()])
    if a.dtype == np.float64 and np.isfinite(a).all():
        return a.copy()
    return np.nan_to_num(a, nan=nan)


_LARGEST = float(np.finfo(np.float64).max)
"""What :func:`numpy.nan_to_num` writes for an infinite float (negated for minus infinity)."""


def _none(rows: Any) -> bool:
    """Whether ``rows`` is a mask of a few rows (:data:`_FEW`) that chooses none (a flag then changes nothing); False
    for a longer mask (its flag is set whatever it holds).

    >>> _none(np.array([False, False, False])), _none(np.array([False, True])), _none(np.zeros(_FEW + 1, bool))
    (True, False, False)
    """
    if type(rows) is not np.ndarray:
        return False
    if rows.shape == (1,):  # one scenario
        return not rows[0]
    return rows.ndim == 1 and rows.shape[0] <= _FEW and rows.dtype.kind == "b" and True not in rows.tolist()


def _any(rows: Any) -> bool:
    """Whether any row is chosen (a one-row mask read directly: the single-scenario path calls this ~140 times).

    >>> _any(np.array([False])), _any(np.array([False, True]))
    (False, True)
    """
    if type(rows) is np.ndarray:
        if rows.shape == (1,):  # one scenario
            return bool(rows[0])
        if rows.ndim == 1 and rows.size <= _FEW and rows.dtype.kind == "b":  # its range's three rows: a list
            return True in rows.tolist()
    return bool(rows.any())


_FEW = 8
"""Up to this many rows (one scenario, its range's three) a mask is read as a list of bools, a column filled
(:func:`fill_nan`) or made (:func:`nans`) from a list: numpy's call costs more than the cells."""


def _all(rows: Any) -> bool:
    """Whether every row is chosen (a few rows read as a list, as :func:`_any`).

    >>> _all(np.array([True, False, True])), _all(np.ones(20, dtype=bool))
    (False, True)
    """
    if type(rows) is np.ndarray and rows.ndim == 1 and rows.size <= _FEW and rows.dtype.kind == "b":
        return False not in rows.tolist()
    return bool(np.all(rows))


def _some_every(rows: Any) -> tuple[bool, bool]:
    """Whether any row is chosen and whether every row is, and some (:func:`_any`, :func:`_all`; an empty mask
    chooses none): a few rows' mask read once as a list, a longer one tested for all only where some row is chosen.

    >>> _some_every(np.array([True, False])), _some_every(np.array([True])), _some_every(np.zeros(20, dtype=bool))
    ((True, False), (True, True), (False, False))
    """
    if type(rows) is np.ndarray:
        if rows.shape == (1,):  # one scenario: any() is all()
            some = bool(rows[0])
            return some, some
        if rows.ndim == 1 and rows.shape[0] <= _FEW and rows.dtype.kind == "b":  # its range's three rows
            cells = rows.tolist()
            some = True in cells
            return some, some and False not in cells
    some = bool(rows.any())  # a longer mask: numpy's reductions, as _any and _all end in, without their checks
    return some, some and bool(np.all(rows))


def request_time(x: Columns) -> None:
    """Accelerator-seconds one request takes on the main pool, and the fleets given as counts."""
    v = x.v
    x.calc(cap.UNCACHED_INPUT)
    agg, dis = ~x.dis, x.dis
    x.calc(cap.REQUEST_TIME, agg & x.has_p)
    x.calc(cap.REQUEST_TIME_FOLDED, agg & ~x.has_p)
    x.calc(cap.PREFILL_REQUEST_TIME, dis)
    x.calc(fleet.ACCELERATORS_FIXED, ~x.sized)
    if x.any_dis:
        x.calc(fleet.DECODE_FIXED, dis & ~np.isnan(v["decode_accelerator_count"]))
        x.calc(cap.KV_PER_REQUEST, dis)
        x.calc(cap.LINK_REQUESTS, x.has_link)


def demand(x: Columns) -> None:
    """Token demand per day: given; from the request rate; one side from the other by the request shape; or,
    with no demand, what the fleet can serve all day.
    """
    v = x.v
    d_in, d_out, rps = v["demand_input_tokens_per_day"], v["demand_output_tokens_per_day"], v["demand_requests_per_s"]
    has_in, has_out = ~np.isnan(d_in), ~np.isnan(d_out)
    by_requests = ~has_in & ~has_out & ~np.isnan(rps)
    x.has_demand = has_in | has_out | by_requests
    x.calc(cap.DEMAND_IN_FROM_REQUESTS, by_requests)
    x.calc(cap.DEMAND_OUT_FROM_REQUESTS, by_requests)
    x.calc(cap.DEMAND_IN_FROM_OUTPUT, has_out & ~has_in)
    zero_input = has_in & ~has_out & ~(v["input_tokens_per_request"] > 0)
    x.calc(cap.DEMAND_OUT_FROM_INPUT, has_in & ~has_out & ~zero_input)
    x.fleet_flag(FleetProblem.INPUT_WITHOUT_SHAPE, zero_input)
    x.flag(RowWarning.DEMAND_FROM_SHAPE, (by_requests | (has_in ^ has_out)) & ~x.sessions)  # sessions: their turns
    none = ~x.has_demand
    if _any(none):
        no_k = x.dis & np.isnan(v["decode_accelerator_count"])
        x.fleet_flag(FleetProblem.DECODE_UNSIZED, none & no_k)
        v["decode_accelerators"] = np.where(none & no_k, 1.0, v.get("decode_accelerators", np.nan))
        x.calc(cap.FLEET_REQUESTS, none & ~x.dis)
        x.calc(cap.FLEET_REQUESTS_TWO_POOLS, none & x.dis & ~x.has_link)
        x.calc(cap.FLEET_REQUESTS_TWO_POOLS_LINK, none & x.has_link)
        x.calc(cap.DEMAND_IN_FULL, none)
        x.calc(cap.DEMAND_OUT_FULL, none)
    if _any(zero_input):  # infeasible (flagged): keep the numbers finite
        v["demand_output_tokens_per_day"] = np.where(zero_input, d_in, v["demand_output_tokens_per_day"])
    x.calc(cap.DEMAND_REQUESTS)


def work(x: Columns) -> None:
    """Accelerator-seconds per day the demand needs on each pool."""
    agg, dis = ~x.dis, x.dis
    x.zeros(cap.NO_PREFILL_WORK, where=lambda: ~x.has_p)
    x.calc(cap.PREFILL_WORK, x.has_p)
    x.calc(cap.DECODE_WORK, agg)
    x.calc(cap.WORK, agg & x.has_p)
    x.calc(cap.WORK_FOLDED, agg & ~x.has_p)
    x.calc(cap.WORK_PREFILL_POOL, dis)
    if x.any_dis:
        x.calc(cap.DECODE_POOL_WORK, dis)


def sizing(x: Columns) -> None:
    """Fleets sized from demand at peak with headroom (and spot's spare capacity), in whole replicas (and systems);
    each pool from the demand it must carry, never from the other pool's capacity.
    """
    v = x.v
    x.calc(rent.SPOT_AVAILABILITY, x.spot)
    sized_decode = x.dis & np.isnan(v["decode_accelerator_count"]) & x.has_demand
    if not (_any(x.sized) or _any(sized_decode)):
        return
    whole = v["round_to_whole_systems"].astype(bool)
    x.calc(cap.PEAK_LOAD_FACTOR, (x.sized | sized_decode) & ~x.spot)
    x.calc(rent.PEAK_LOAD_FACTOR_SPOT, (x.sized | sized_decode) & x.spot)
    x.calc(cap.ACCELERATORS_NEEDED, x.sized)
    x.calc(fleet.WHOLE_REPLICAS, x.sized)
    x.calc(fleet.WHOLE_SYSTEMS, x.sized & whole)
    x.calc(fleet.AS_REPLICAS, x.sized & ~whole)
    x.calc(cap.DECODE_ACCELERATORS_NEEDED, sized_decode)
    x.calc(fleet.DECODE_WHOLE_SYSTEMS, sized_decode & whole)
    x.calc(fleet.DECODE_AS_NEEDED, sized_decode & ~whole)


def serving(x: Columns) -> None:
    """Capacity against demand, pool by pool and the KV link; served tokens and utilization."""
    v, dis = x.v, x.dis
    x.calc(cap.MAIN_POOL_RATIO, ~x.spot)
    x.calc(rent.MAIN_POOL_RATIO_SPOT, x.spot)
    if x.any_dis:
        x.calc(cap.DECODE_POOL_RATIO, dis & ~x.spot)
        x.calc(rent.DECODE_POOL_RATIO_SPOT, dis & x.spot)
        x.calc(cap.LINK_RATIO, x.has_link)
    x.calc(cap.CAPACITY_RATIO, ~dis)
    x.calc(cap.CAPACITY_RATIO_TWO_POOLS, dis & ~x.has_link)
    x.calc(cap.CAPACITY_RATIO_TWO_POOLS_LINK, x.has_link)
    for f in (cap.SERVED_FRACTION, cap.CAPACITY_IN, cap.CAPACITY_OUT, cap.SERVED_IN, cap.SERVED_OUT,
              cap.SERVED_CACHED, cap.UTILIZATION, cap.CAPACITY_REQUESTS_PER_S):
        x.calc(f)
    if x.any_dis:
        x.calc(cap.DECODE_UTILIZATION, dis)
        x.calc(cap.KV_TRANSFER, dis)
        others = np.minimum(v["main_pool_capacity_ratio"], v["decode_pool_capacity_ratio"])
        x.flag(RowWarning.KV_LINK_BOTTLENECK, x.has_link & (v["kv_link_capacity_ratio"] < others))
    f = v["served_fraction"]
    x.flag(RowWarning.OVER_CAPACITY, x.has_demand & (f < 1.0))
    peak_short = v["capacity_ratio"] * (1 + 1e-12) < v["peak_to_average"]
    x.flag(RowWarning.PEAK_OVER_CAPACITY, x.has_demand & (f >= 1.0) & peak_short)
    x.flag(RowWarning.NO_DEMAND, ~x.has_demand)


def cooling(x: Columns) -> None:
    """The hall's cooling after any liquid retrofit, and its PUE."""
    v = x.v
    air_hall = np.asarray(v["facility_cooling"] == FacilityCooling.AIR, dtype=bool)
    hybrid = np.asarray(v["facility_cooling"] == FacilityCooling.HYBRID, dtype=bool)
    allow = v["allow_liquid_retrofit"].astype(bool)
    x.needs_liquid = np.asarray(v["accelerator_cooling"] == Cooling.LIQUID, dtype=bool)
    x.retrofit = x.needs_liquid & air_hall & allow
    x.needs_liquid_y = x.dis & (v["decode_accelerator_cooling"] == Cooling.LIQUID) if x.any_dis else np.zeros(x.n, bool)
    x.retrofit_y = x.needs_liquid_y & air_hall & allow
    liquid = ~air_hall & ~hybrid | x.retrofit  # the hall is liquid-cooled, or retrofitted for the main pool
    given = ~np.isnan(v["pue"])
    x.calc(fleet.PUE_GIVEN, given)
    x.calc(fleet.PUE_AIR, ~given & air_hall & ~x.retrofit)
    x.calc(fleet.PUE_LIQUID, ~given & liquid)
    x.calc(fleet.PUE_HYBRID, ~given & hybrid)
    x.liquid_racks = liquid | (hybrid & x.needs_liquid)
    x.liquid_racks_y = liquid | x.retrofit_y | (hybrid & x.needs_liquid_y)
    x.fleet_flag(FleetProblem.COOLING, x.in_facility & x.needs_liquid & air_hall & ~x.retrofit)
    x.fleet_flag(FleetProblem.DECODE_COOLING, x.in_facility & x.needs_liquid_y & air_hall & ~x.retrofit_y)


def racks_of_pool(x: Columns, decode: bool) -> None:
    """Systems, systems per rack, racks and IT power of one pool (the formulas bound to its columns)."""
    v = x.v
    b = fleet.bind_decode if decode else (lambda f: f)
    rows = x.dis if decode else np.ones(x.n, dtype=bool)
    pre = "decode_" if decode else ""
    liquid = x.liquid_racks_y if decode else x.liquid_racks
    given_rack = ~np.isnan(v["rack_power_kw"])
    x.calc(b(fleet.RACK_POWER_GIVEN), rows & given_rack)
    x.calc(b(fleet.RACK_POWER_LIQUID), rows & ~given_rack & liquid)
    x.calc(b(fleet.RACK_POWER_AIR), rows & ~given_rack & ~liquid)
    given_power = ~np.isnan(v[f"{pre}system_power_kw"])
    x.calc(b(fleet.SYSTEM_POWER_GIVEN), rows & given_power)
    x.calc(b(fleet.SYSTEM_POWER), rows & ~given_power)
    x.calc(b(fleet.SYSTEMS), rows)
    rack_scale = v[f"{pre}system_form"] == "rack"
    no_units = np.isnan(v[f"{pre}system_rack_units"])
    x.calc(b(fleet.SYSTEMS_PER_RACK_SCALE), rows & rack_scale)
    x.calc(b(fleet.SYSTEMS_PER_RACK_POWER_ONLY), rows & ~rack_scale & no_units)
    x.calc(b(fleet.SYSTEMS_PER_RACK), rows & ~rack_scale & ~no_units)
    per_rack = v[b(fleet.SYSTEMS_PER_RACK).name]
    fits = per_rack >= 1
    x.calc(b(fleet.RACKS), rows & fits)
    x.calc(b(fleet.IT_POWER), rows)
    x.fleet_flag(FleetProblem.DECODE_RACK_POWER if decode else FleetProblem.RACK_POWER, x.in_facility & rows & ~fits)


def facility(x: Columns) -> None:
    """Cooling and PUE, both pools' systems and racks, facility power, site power and the cooling retrofit."""
    v, dis = x.v, x.dis
    cooling(x)
    racks_of_pool(x, decode=False)
    if x.any_dis:
        racks_of_pool(x, decode=True)
    hosted = ~np.isnan(v["main_racks"]) & (~dis | ~np.isnan(v.get("decode_racks", v["main_racks"])))
    for total, single, rows in ((fleet.SYSTEMS_TOTAL, fleet.SYSTEMS_ONE_POOL, True),
                                (fleet.RACKS_TOTAL, fleet.RACKS_ONE_POOL, hosted),
                                (fleet.IT_POWER_TOTAL, fleet.IT_POWER_ONE_POOL, True)):
        x.calc(total, dis & rows)
        x.calc(single, ~dis & rows)
    x.calc(fleet.SYSTEMS_PER_RACK_ONE_POOL, ~dis)
    x.calc(fleet.FACILITY_POWER)
    x.calc(fleet.KW_PER_RACK, v["racks"] > 0)
    site = v["site_power_mw"]
    site_bad = x.in_facility & ~np.isnan(site) & (v["facility_power_kw"] > site * 1000.0 * (1 + 1e-12))
    x.fleet_flag(FleetProblem.SITE_POWER, site_bad)
    main, both = x.in_facility & x.retrofit, x.in_facility & x.retrofit_y
    x.calc(fleet.NO_RETROFIT, ~(main | both))
    x.calc(fleet.RETROFIT_IT_MAIN, main & ~both)
    x.calc(fleet.RETROFIT_IT_DECODE, both & ~main)
    x.calc(fleet.RETROFIT_IT_BOTH, main & both)
    if _any(main | both):
        x.calc(finance.FACILITY_CRF_STRAIGHT_LINE, (main | both) & x.zero_rate)
        x.calc(finance.FACILITY_CRF, (main | both) & ~x.zero_rate)
        x.calc(fleet.RETROFIT, main | both)


def pool_cost(x: Columns, pool: str, rows: Any) -> None:
    """The hourly cost of one pool on ``rows``: capital, energy, facility, operations (owned) or rent, with its
    own hardware figures and utilization (``pool`` as in :func:`economics.domain.cost.bind_pool`).
    """
    def b(f: Formula) -> Formula:
        return _bound(f, pool)

    own, pays = x.own & rows, x.pays_energy & rows
    rented, no_energy, no_rent = _ZERO_LINES[pool]
    x.zeros(*rented, where=lambda: rows & ~x.own)
    x.zeros(no_energy, where=lambda: rows & ~x.pays_energy)
    x.zeros(no_rent, where=lambda: own)
    x.calc(b(cost.AVERAGE_POWER), rows)
    x.calc(b(cost.CAPITAL), own)
    x.calc(b(cost.ENERGY), pays & ~x.tou)
    x.calc(b(cost.ENERGY_BY_HOUR), pays & x.tou)
    x.calc(b(cost.FACILITY), own)
    x.calc(b(cost.OPERATIONS), own)
    rent_tiers(x, pool, rows)
    if pool:
        x.calc(b(cost.POOL_OWNED), own)
        x.calc(b(cost.POOL_RENTED), rows & ~x.own & x.pays_energy)
        x.calc(b(cost.POOL_RENTED_WITH_ENERGY), rows & ~x.own & ~x.pays_energy)


def rent_tiers(x: Columns, pool: str, rows: Any) -> None:
    """A pool's rent in its tier: on demand, reserved or spot (a tier price the catalog lacks from its discount)."""
    v = x.v
    pre = "decode_" if pool == "decode" else ""
    on_demand, reserved, spot = rows & ~x.own & ~x.reserved & ~x.spot, rows & x.reserved, rows & x.spot
    x.calc(_bound(cost.RENT, pool), on_demand)
    for tier_rows, price, from_discount, tier_rent in (
            (reserved, "reserved_rent_usd_per_accelerator_hour", rent.RESERVED_FROM_DISCOUNT, rent.RENT_RESERVED),
            (spot, "spot_rent_usd_per_accelerator_hour", rent.SPOT_FROM_DISCOUNT, rent.RENT_SPOT)):
        if not _any(tier_rows):
            continue
        missing = tier_rows & np.isnan(np.asarray(v[pre + price], dtype=float))
        if _any(missing):
            f = from_discount.bind(pre + price, rent_usd_per_accelerator_hour=pre + "rent_usd_per_accelerator_hour")
            x.calc(f, missing)
        x.calc(_bound(tier_rent, pool), tier_rows)


_ZERO_LINES = {pool: (tuple(cost.bind_pool(f, pool) for f in (cost.NO_CAPITAL, cost.NO_FACILITY, cost.NO_OPERATIONS)),
                      cost.bind_pool(cost.NO_ENERGY, pool), cost.bind_pool(cost.NO_RENT, pool))
               for pool in ("", "prefill", "decode")}
"""Each pool's zero lines (bound to its columns): a rented pool's capital, facility and operations; a pool whose
rent includes energy, its energy; an owned pool's rent."""

_BOUND: dict[tuple[str, str], Formula] = {}


def _bound(f: Formula, pool: str) -> Formula:
    key = (f.name + f.expression, pool)
    if key not in _BOUND:
        _BOUND[key] = cost.bind_pool(f, pool)
    return _BOUND[key]


def costs(x: Columns) -> None:
    """The capital recovery factors, then the cost of each pool and of the fleet."""
    dis = x.dis
    x.calc(finance.CRF_STRAIGHT_LINE, x.own & x.zero_rate)
    x.calc(finance.CRF, x.own & ~x.zero_rate)
    x.calc(finance.FACILITY_CRF_STRAIGHT_LINE, x.own & x.zero_rate)
    x.calc(finance.FACILITY_CRF, x.own & ~x.zero_rate)
    pool_cost(x, "", ~dis)
    if x.any_dis:
        pool_cost(x, "prefill", dis)
        pool_cost(x, "decode", dis)
        for total in cost.TWO_POOL_TOTALS:
            x.calc(total, dis)
    x.calc(fleet.AVERAGE_IT_POWER, ~x.dis)
    x.calc(fleet.AVERAGE_IT_POWER_TWO_POOLS, x.dis)
    reserved_lines(x)
    emissions(x)
    kv_tiers(x)
    priced = x.carbon_priced
    for f, rows in ((revenue.COST_OWNED, x.own & ~priced), (revenue.COST_RENTED, ~x.own & ~priced),
                    (revenue.COST_OWNED_CARBON, x.own & priced), (revenue.COST_RENTED_CARBON, ~x.own & priced)):
        x.calc(f, rows & ~x.sessions)
        x.calc(ses.WITH_TIERS[f], rows & x.sessions)
    x.calc(revenue.COST_PER_DAY)
    x.calc(revenue.COST_PER_YEAR)


def kv_tiers(x: Columns) -> None:
    """The KV tiers' cost lines (session rows): host and SSD capex amortised as the hardware is, the remote store
    by the month; 0 on request rows.
    """
    v, rows = x.v, x.sessions
    x.calc(ses.NO_TIERS_COST, ~rows)
    if not _any(rows):
        return
    for name in ("kv_host_memory_usd_per_gb", "kv_ssd_usd_per_gb", "kv_remote_usd_per_gb_month"):
        v[name] = fill_nan(np.asarray(v[name], dtype=float), 0.0)  # empty only where its tier has no capacity
    x.calc(ses.KV_CRF_STRAIGHT_LINE, rows & x.zero_rate)
    x.calc(ses.KV_CRF, rows & ~x.zero_rate)
    for f in (ses.HOST_CAPEX, ses.SSD_CAPEX, ses.HOST_COST, ses.SSD_COST, ses.REMOTE_COST, ses.TIERS_COST):
        x.calc(f, rows)


def per_session(x: Columns) -> None:
    """Sessions served per day and the cost of one (session rows)."""
    rows = x.sessions
    if _any(rows):
        x.calc(ses.SESSIONS_SERVED, rows)
        x.calc(ses.COST_PER_SESSION, rows & (x.v["sessions_served_per_day"] > 0))


def reserved_lines(x: Columns) -> None:
    """A reservation's idle hours (paid, not used) and its commitment over the term; the price of the energy drawn
    where it changes by the hour.
    """
    if _any(x.reserved):
        x.calc(rent.RESERVED_IDLE, x.reserved & ~x.dis)
        x.calc(rent.RESERVED_IDLE_TWO_POOLS, x.reserved & x.dis)
        x.calc(rent.RESERVED_COMMITMENT, x.reserved)
    x.calc(cost.ELECTRICITY_EFFECTIVE, x.tou & x.pays_energy & (x.v["average_it_power_kw"] > 0))


def emissions(x: Columns) -> None:
    """Operational emissions (at the grid's average, or hour by hour), embodied emissions spread over the life,
    per day, per M tokens and per year, and their cost at the carbon price.
    """
    v, rows = x.v, x.has_carbon
    x.calc(carbon.NO_COST, ~x.carbon_priced)
    if not _any(rows):
        return
    x.calc(carbon.OPERATIONAL, rows & ~x.carbon_by_hour)
    x.calc(carbon.OPERATIONAL_BY_HOUR, rows & x.carbon_by_hour & ~x.dis)
    x.calc(carbon.OPERATIONAL_BY_HOUR_TWO_POOLS, rows & x.carbon_by_hour & x.dis)
    x.calc(carbon.INTENSITY_EFFECTIVE, rows & (v["average_it_power_kw"] > 0))
    known = ~np.isnan(np.asarray(v["embodied_kgco2e_per_accelerator"], dtype=float))
    if x.any_dis:
        known &= ~x.dis | ~np.isnan(np.asarray(v["decode_embodied_kgco2e_per_accelerator"], dtype=float))
    x.calc(carbon.EMBODIED, rows & known & ~x.dis)
    x.calc(carbon.EMBODIED_TWO_POOLS, rows & known & x.dis)
    x.calc(carbon.FOOTPRINT, rows & known)
    x.calc(carbon.FOOTPRINT_OPERATIONAL_ONLY, rows & ~known)
    x.flag(RowWarning.NO_EMBODIED_FIGURE, rows & ~known)
    served = (v["served_input_tokens_per_day"] + v["served_output_tokens_per_day"]) > 0
    x.calc(carbon.OPERATIONAL_PER_M, rows & served)
    x.calc(carbon.EMBODIED_PER_M, rows & known & served)
    x.calc(carbon.PER_M, rows & served)
    x.calc(carbon.PER_YEAR, rows)
    x.calc(carbon.COST, x.carbon_priced)


def unit_costs(x: Columns) -> None:
    """Cost per M tokens, and per M input and output tokens where prefill is separable."""
    v, dis = x.v, x.dis
    x.calc(revenue.COST_PER_M)
    folded = ~dis & ~x.has_p & ~np.isnan(v[revenue.PREFILL_ESTIMATE]) & (v["work_accelerator_s_per_day"] > 0)
    separable = dis | x.has_p | folded
    v["input_time_share"] = nans(x.n)
    x.calc(revenue.INPUT_SHARE, ~dis & x.has_p & (v["work_accelerator_s_per_day"] > 0))
    x.calc(revenue.INPUT_SHARE_TWO_POOLS, dis)
    x.calc(revenue.INPUT_SHARE_FOLDED, folded)
    v["output_time_share"] = nans(x.n)
    x.calc(revenue.OUTPUT_SHARE, ~dis & x.has_p & (v["work_accelerator_s_per_day"] > 0))
    x.calc(revenue.OUTPUT_SHARE_TWO_POOLS, dis)
    x.calc(revenue.OUTPUT_SHARE_FOLDED, folded)
    requests = separable & ~x.sessions  # sessions: by stream (economics.engine.sessions.streams)
    x.calc(revenue.COST_PER_M_IN, requests & (v["served_input_tokens_per_day"] > 0))
    x.calc(revenue.COST_PER_M_OUT, requests)
    x.flag(RowWarning.NO_PREFILL_FIGURE, ~separable)


def revenue_and_break_even(x: Columns) -> None:
    """Revenue at the selling prices, margins, break-even output price and break-even utilization."""
    v = x.v
    p_in, p_cached, p_out = (v["price_usd_per_m_input_tokens"], v["price_usd_per_m_cached_input_tokens"],
                             v["price_usd_per_m_output_tokens"])
    has_in, has_out = ~np.isnan(p_in), ~np.isnan(p_out)
    priced = has_in | has_out
    x.flag(RowWarning.NO_PRICE, ~priced)
    x.flag(RowWarning.NO_INPUT_PRICE, has_out & ~has_in)
    x.flag(RowWarning.NO_OUTPUT_PRICE, has_in & ~has_out)
    v["price_usd_per_m_input_tokens"] = fill_nan(p_in, 0.0)
    v["price_usd_per_m_output_tokens"] = fill_nan(p_out, 0.0)
    v["price_usd_per_m_cached_input_tokens"] = np.where(np.isnan(p_cached), v["price_usd_per_m_input_tokens"], p_cached)
    for f in (revenue.INPUT_REVENUE, revenue.REVENUE, revenue.PROFIT):
        x.calc(f, priced)
    # a margin is a share of its base: none of a base of 0 (prices of 0 bring no revenue), not an infinite step
    x.calc(revenue.COST_PROFIT_MARGIN, priced & (v["cost_usd_per_day"] > 0))
    x.calc(revenue.GROSS_MARGIN, priced & (v["revenue_usd_per_day"] > 0))
    x.calc(revenue.BREAK_EVEN_PRICE, priced)
    if not _any(priced):
        return
    dis = x.dis
    def load_free() -> Any:  # the rows no energy bill nor carbon price makes pay for the load (computed below)
        return priced & ~x.pays_energy & ~x.carbon_priced

    x.zeros(revenue.NO_ENERGY_ABOVE_IDLE, where=load_free)
    x.zeros(revenue.DECODE_NO_ENERGY_ABOVE_IDLE, where=lambda: load_free() & dis)
    weighted = priced & (x.tou | x.carbon_priced)  # load-following price: by the hour, carbon included
    x.calc(carbon.MARGINAL_PRICE, weighted & (x.pays_energy | x.carbon_priced))
    x.calc(revenue.ENERGY_ABOVE_IDLE, priced & x.pays_energy & ~weighted)
    x.calc(revenue.ENERGY_ABOVE_IDLE_BY_HOUR, weighted & (x.pays_energy | x.carbon_priced))
    if x.any_dis:
        x.calc(revenue.DECODE_ENERGY_ABOVE_IDLE, priced & dis & x.pays_energy & ~weighted)
        x.calc(revenue.DECODE_ENERGY_ABOVE_IDLE_BY_HOUR, dis & weighted & (x.pays_energy | x.carbon_priced))
    x.calc(revenue.VARIABLE_COST, priced & ~dis)
    x.calc(revenue.VARIABLE_COST_TWO_POOLS, priced & dis)
    x.calc(revenue.FIXED_COST, priced)
    v["max_utilization"] = np.ones(x.n)
    x.calc(revenue.MAX_UTILIZATION, priced & dis)
    margin = v["revenue_usd_per_day"] - v["variable_cost_usd_per_day"]
    reachable = priced & (margin > 0) & (v["utilization"] > 0)
    x.calc(revenue.BREAK_EVEN_UTILIZATION, reachable)
    be = v["break_even_utilization"]
    x.flag(RowWarning.BREAK_EVEN_UNREACHABLE, priced & (~reachable | (be > v["max_utilization"] * (1 + 1e-12))))


def energy(x: Columns) -> None:
    """Average power, energy per year, tokens per MW and joules per token on both power bases."""
    v = x.v
    served = (v["served_input_tokens_per_day"] + v["served_output_tokens_per_day"]) > 0
    for f in (fleet.ENERGY_PER_YEAR, fleet.TOKENS_PER_S_PER_MW, fleet.TOKENS_PER_S_PER_AVERAGE_MW,
              fleet.JOULES_PER_TOKEN, fleet.JOULES_PER_TOKEN_PROVISIONED):
        x.calc(f, served if f is not fleet.ENERGY_PER_YEAR else None)
