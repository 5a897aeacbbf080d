"""The planner's inputs: its settings (:data:`PLAN_FIELDS`, :class:`PlanSettings`, read from a row's cells),
the demand over the day (:func:`demand_profile`) and the workload a scenario asks of the fleet (:func:`workload`).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from economics.domain import sessions as sessions_domain
from economics.domain.formula import G_PER_KG, HOURS_PER_DAY, KG_PER_TONNE, SECONDS_PER_DAY
from economics.engine.hours import tariff_prices
from economics.engine.resolve import kv_bytes_per_token
from economics.engine.sessions import request_shape
from economics.schema import values
from economics.schema.day_profiles import HOURS as HOURS
from economics.schema.day_profiles import demand_profile, hour_values
from economics.schema.scenario import FieldSpec, Scenario
from economics.schema.scenario import Workload as WorkloadKind
from economics.schema.validation_hours import region_intensity
from economics.schema.values import FieldKind


class FrontierChoice(StrEnum):
    """Which cost frontiers a plan request also draws (``plan --frontier``, ``report --frontier``, the API's and the
    MCP tools' ``frontier``): none, one (speed, site, carbon), speed and site (both), or all three.
    """

    NONE = "none"
    SPEED = "speed"
    SITE = "site"
    BOTH = "both"
    CARBON = "carbon"
    ALL = "all"

    def draws(self, frontier: FrontierChoice) -> bool:
        """Whether this choice draws ``frontier`` (one of SPEED, SITE, CARBON).

        Examples
        --------
        >>> FrontierChoice("both").draws(FrontierChoice.SITE), FrontierChoice.BOTH.draws(FrontierChoice.CARBON)
        (True, False)
        >>> [c.value for c in FrontierChoice if c.draws(FrontierChoice.CARBON)]
        ['carbon', 'all']
        """
        return (self is frontier or self is FrontierChoice.ALL
                or (self is FrontierChoice.BOTH and frontier in (FrontierChoice.SPEED, FrontierChoice.SITE)))


class PoolRole(StrEnum):
    """What a pool serves: whole requests (aggregated), or one side of a disaggregated fleet."""

    AGGREGATED = "aggregated"
    PREFILL = "prefill"
    DECODE = "decode"


ROLES: tuple[PoolRole, ...] = tuple(PoolRole)


class Ownership(StrEnum):
    """How a plan holds a candidate: bought, rented, or already installed (the scenario's ``ownership`` is one of
    the first two; ``existing`` is the planner's own: the site's installed fleet, its purchase sunk).
    """

    OWN = "own"
    RENT = "rent"
    EXISTING = "existing"


OWNERSHIPS: tuple[Ownership, ...] = tuple(Ownership)


class RentTier(StrEnum):
    """The tier rented capacity is bought in (the scenario's ``rent_tier``)."""

    ON_DEMAND = "on_demand"
    RESERVED = "reserved"
    SPOT = "spot"


class CoolingMode(StrEnum):
    """How a candidate's systems are cooled in the plan: in the hall's own air or liquid, by a liquid retrofit of an
    air hall, or off site (rented).
    """

    AIR = "air"
    LIQUID = "liquid"
    LIQUID_RETROFIT = "liquid retrofit"
    OFF_SITE = "off site"










BIG_PENALTY = 1e9
DEFAULT_PLAN_SAMPLES = 100
"""Draws a plan's odds take unless told (two solves each: about a minute; :mod:`economics.studies.plan_odds`)."""
MAX_PLAN_SAMPLES = 2_000
"""Most draws a plan's odds take (two solves each). Both are here, with the plan's other inputs, so that the command
line's ``plan --samples`` reads them without importing the odds' study and the decode study it draws with."""


def _pf(name: str, kind: FieldKind, default: Any, unit: str, description: str, optional: bool = False,
        choices: tuple[str, ...] = (), gt: float | None = None, ge: float | None = None, lt: float | None = None,
        le: float | None = None) -> FieldSpec:
    return FieldSpec(name=name, kind=kind, optional=optional, default=default, unit=unit, description=description,
                     group="plan", choices=choices, gt=gt, ge=ge, lt=lt, le=le)


PLAN_FIELDS: dict[str, FieldSpec] = {f.name: f for f in (
    _pf("ttft_target_s", FieldKind.FLOAT, None, "s", "Time-to-first-token target at the percentile; empty = not a "
        "constraint", optional=True, gt=0, le=3600),
    _pf("ttft_percentile", FieldKind.FLOAT, 0.99, "-",
        "Percentile of the TTFT target, e.g. 0.5, 0.9 or 0.99", gt=0, lt=1),
    _pf("prefill_service_cv2", FieldKind.FLOAT, 1.0, "-",
        "Squared coefficient of variation of prefill times (0 = every "
        "prompt alike, 1 = exponential)", ge=0, le=10),
    _pf("demand_profile", FieldKind.STR, "peak", "", "Demand over the day: peak (every hour at peak_to_average x the "
        "average), flat, diurnal (a smooth day whose peak is peak_to_average x the average, at 14:00), or 24 "
        "relative numbers"),
    _pf("max_racks", FieldKind.FLOAT, None, "rack",
        "Racks (floor space) available to on-site systems; empty = no limit",
        optional=True, ge=0, le=1e6),
    _pf("capex_budget_usd", FieldKind.FLOAT, None, "USD",
        "Most that may be spent on new hardware and cooling retrofit; "
        "empty = no limit", optional=True, ge=0, le=1e13),
    _pf("objective", FieldKind.CHOICE, "cost_per_day", "",
        "What is minimised: cost_per_day (capital as an annuity) or npv "
        "(net present cost over horizon_years with demand growth)", choices=("cost_per_day", "npv")),
    _pf("spares", FieldKind.BOOL, True, "", "Derate capacity by availability (failure and repair rates per family, "
        "data/reliability.csv): the extra systems are spares"),
    _pf("allow_rent", FieldKind.BOOL, True, "", "Rented systems (off site, billed by the hour) may carry part of the "
        "demand"),
    _pf("max_pools", FieldKind.INT, 3, "pool",
        "Most distinct pools the plan may use (a pool: one hardware option in one "
        "role, owned, rented or existing); each is one more thing to deploy, monitor and keep spares for",
        ge=1, le=100),
    _pf("min_rental_hours", FieldKind.FLOAT, 8.0, "h",
        "Shortest rental: a rented pool holds its largest size through the "
        "day's busiest hours for at least this many hours, so no rented system is held for less; 24 = rented all "
        "day (a monthly rental), monthly is read as 24", ge=1, le=24),
    _pf("rent_tiers", FieldKind.STR, "", "", "Tiers rented capacity may be bought in, separated by ';' (on_demand, "
        "reserved: every hour paid, spot: sized up for its interruptions); the plan chooses the mix per pool; "
        "empty = the scenario's rent_tier"),
    _pf("max_spot_share", FieldKind.FLOAT, 1.0, "-", "Most of each hour's demand spot capacity may carry (what an "
        "interruption may take down while spares load); 1 = no limit", ge=0, le=1),
    _pf("carbon_cap_tco2e_per_year", FieldKind.FLOAT, None, "tCO2e/year",
        "Most the fleet may emit in a year (operational "
        "and embodied); met by pricing carbon until the plan is under it; empty = no cap", optional=True, ge=0,
        le=1e9),
    _pf("min_pool_systems", FieldKind.INT, 1, "system", "Smallest pool: a pool the plan uses has at least this many "
        "systems (at its largest hour when rented); rack-scale systems are always whole racks", ge=1, le=10_000),
)}
"""Planner inputs that are not scenario fields (a FILE row may carry them as extra columns)."""


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
    rent_tiers: str = ""
    max_spot_share: float = 1.0
    carbon_cap_tco2e_per_year: float | None = None
    min_pool_systems: int = 1


def settings_from_row(row: dict[str, Any]) -> PlanSettings:
    """Planner settings from a row's cells (text or values); empty cells keep the defaults. Raises ValueError naming
    the field and the value.
    """
    values: dict[str, Any] = {}
    for name, spec in PLAN_FIELDS.items():
        raw = row.get(name)
        if raw is None or (isinstance(raw, str) and not raw.strip()) or (isinstance(raw, float) and math.isnan(raw)):
            continue
        values[name] = _parse_setting(spec, raw)
    return PlanSettings(**values)


def _parse_setting(spec: FieldSpec, raw: Any) -> Any:
    """One planner setting through the value parser every cell goes through (``2_5``, non-ASCII digits and the
    like are refused as in any scenario field), then its bounds.
    """
    text = str(raw).strip()
    if spec.name == "rent_tiers":
        return tiers_text(text)
    if spec.kind is FieldKind.STR:
        demand_profile(text, 2.0)  # checks the profile's text
        return text
    if spec.name == "min_rental_hours" and text.lower() == "monthly":
        return HOURS_PER_DAY
    try:
        value = values.parse(spec, raw)
    except (ValueError, TypeError) as exc:  # a value of no usable type (a JSON list) too
        raise ValueError(f"{spec.name}: {exc}") from None
    if spec.kind in (FieldKind.BOOL, FieldKind.CHOICE):
        return value
    bad = ((spec.gt is not None and value <= spec.gt)
           or (spec.ge is not None and value < spec.ge) or (spec.lt is not None and value >= spec.lt)
           or (spec.le is not None and value > spec.le))
    if bad:
        raise ValueError(f"{spec.name}: must be {spec.bounds_text()} [{spec.unit}], got {values.shown(text)}")
    return value


RENT_TIERS: tuple[RentTier, ...] = tuple(RentTier)


def tiers_text(text: str) -> str:
    """A ``rent_tiers`` setting checked and written canonically (the tiers in their order, lower case); ValueError
    naming a tier that is not one.

    >>> tiers_text("Spot; on_demand")
    'on_demand;spot'
    """
    given = [t.strip().lower() for t in text.split(";") if t.strip()]
    bad = [t for t in given if t not in RENT_TIERS]
    if bad:
        raise ValueError(f"rent_tiers: '{values.shown(bad[0])}' is not a tier; give on_demand, reserved or spot, "
                         "separated by ';'")
    return ";".join(t for t in RENT_TIERS if t in given)


def plan_tiers(s: Scenario, settings: PlanSettings) -> tuple[RentTier, ...]:
    """The tiers a plan weighs: the setting's (checked by :func:`tiers_text`), else the scenario's ``rent_tier``."""
    return tuple(map(RentTier, settings.rent_tiers.split(";") if settings.rent_tiers else [s.rent_tier]))


@dataclass(frozen=True)
class Day:
    """Prices and grid intensity of each hour (or hour type) of the plan's day, and their means over the 24 hours
    (what a system held all day pays): the energy price, the carbon price per kWh drawn and the intensity.
    """

    usd_per_kwh: np.ndarray          # [USD/kWh]
    carbon_usd_per_kwh: np.ndarray   # the grid's carbon in a kWh at the carbon price [USD/kWh]
    g_per_kwh: np.ndarray            # [gCO2e/kWh]; NaN: no intensity given
    mean_usd_per_kwh: float
    mean_carbon_usd_per_kwh: float
    carbon_usd_per_kg: float         # [USD/kgCO2e]
    flat: bool = True
    """One price all day and no carbon price: every hour costs the same (the hour types are the demand's alone)."""

    def ratio(self, pays_energy: bool) -> np.ndarray:
        """Each hour's cost of a kWh over the day's mean, for a system that pays its energy or only its carbon
        (a rent that includes energy); 1 where the mean is 0.
        """
        each = self.usd_per_kwh * float(pays_energy) + self.carbon_usd_per_kwh
        mean = self.mean_usd_per_kwh * float(pays_energy) + self.mean_carbon_usd_per_kwh
        return each / mean if mean > 0 else np.ones_like(each)

    def at(self, hours: np.ndarray) -> Day:
        """The same day read at ``hours`` (one hour of each type): the means stay the day's."""
        return replace(self, usd_per_kwh=self.usd_per_kwh[hours], carbon_usd_per_kwh=self.carbon_usd_per_kwh[hours],
                       g_per_kwh=self.g_per_kwh[hours])


def plan_day(s: Scenario) -> Day:
    """The scenario's tariff (or flat price), grid intensity and carbon price over the 24 hours."""
    price = tariff_prices(str(s.electricity_tariff)) if s.electricity_tariff else np.full(
        HOURS, float(s.electricity_usd_per_kwh))
    average, hours = s.grid_carbon_g_per_kwh, s.grid_carbon_by_hour
    if average is None and s.grid_region:  # the region's figures, as a table row naming it takes them
        average, region_hours = region_intensity(str(s.grid_region).lower())
        hours = hours or region_hours or None
    if hours:
        grid = hour_values("grid_carbon_by_hour", str(hours))
    else:
        grid = np.full(HOURS, np.nan if average is None else float(average))
    per_kg = float(s.carbon_usd_per_tonne) / KG_PER_TONNE
    carbon = np.nan_to_num(grid) / G_PER_KG * per_kg
    one_price = bool(np.all(price == price[0]))
    mean_price = float(price[0]) if one_price else float(price.mean())
    return Day(price, carbon, grid, mean_price, float(carbon.mean()), per_kg, one_price and per_kg == 0.0)


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
    day: Day | None = None
    """The hours' prices and intensity (None: a flat price, no carbon)."""
    block_hours: float = 0.0
    """The rental block's hours (0: no block). Hours of equal demand and price are one type only when the block
    takes all or none of them (:func:`hour_types`), so the block can take any ``B`` hours."""
    turns_per_session: float = 0.0
    """workload=sessions: a request is a turn, ``turns_per_session`` of them a session (0: requests)."""
    kv_remote_usd_per_day: float = 0.0
    """workload=sessions: the remote KV store, one line for the fleet (the engine's ``kv_remote_usd_per_hour``
    x 24): its cost does not change with the systems, so it is added to the plan's cost, not to a pool's."""

    @property
    def sessions(self) -> bool:
        """The demand is agent sessions (their turns are the requests)."""
        return self.turns_per_session > 0


def flow_per_request(wl: Workload, role: PoolRole) -> float:
    """Flow units one request brings a pool of ``role``: 1 request (aggregated), its uncached input tokens (prefill)
    or its output tokens (decode).
    """
    if role == PoolRole.AGGREGATED:  # tests, not a dict made per call: a model's build asks ~3,000 times
        return 1.0
    if role == PoolRole.PREFILL:
        return wl.uncached_input_tokens
    if role == PoolRole.DECODE:
        return wl.output_tokens
    raise KeyError(role)


def workload(s: Scenario, settings: PlanSettings, growth: float = 1.0) -> Workload:
    r"""Average request rate from the scenario's demand (output tokens, else input tokens, else requests), its
    24-hour profile, and the KV-cache bytes per token of its model.

    .. math:: \lambda = D_{out} / (O \cdot 86400)  (or D_{in} / (I \cdot 86400), or the request rate)
    """
    if s.workload == WorkloadKind.SESSIONS:
        return session_workload(s, settings, growth)
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
    kv = float(kv_bytes_per_token(np.array([s.model or ""], dtype=object), np.array([s.precision], dtype=object),
                                  np.array([s.kv_cache_precision or ""], dtype=object))[0])
    return Workload(i, i * (1.0 - float(s.prefix_cache_hit_rate)), o, lam, lam * profile, scale, kv, plan_day(s))


def session_workload(s: Scenario, settings: PlanSettings, growth: float = 1.0) -> Workload:
    r"""The request stream the engine makes of a sessions scenario (:func:`economics.engine.sessions.request_shape`):
    a turn is a request of the session's mean turn context and the turn's output, at
    ``demand_sessions_per_day x turns_per_session / 86,400`` turns a second, shaped over the day by the demand
    profile as request demand is. The share of that context each pool finds cached is its own (the residency on its
    hardware, :attr:`~economics.studies.planner.candidates.Candidate.kv_hit_rate`); ``uncached_input_tokens`` here
    is the whole mean turn context (nothing found), which only says that there is prefill to do.
    """
    if s.demand_sessions_per_day is None:
        raise ValueError("demand_sessions_per_day: give the demand (sessions per day) for a plan of sessions")
    shape = session_shape(s)
    base = replace(workload(s.model_copy(update={
        "workload": WorkloadKind.REQUESTS, "input_tokens_per_request": shape["input_tokens_per_request"],
        "output_tokens_per_request": shape["output_tokens_per_request"], "prefix_cache_hit_rate": 0.0,
        "demand_requests_per_s": shape["demand_requests_per_s"], "demand_sessions_per_day": None}),
        settings, growth), turns_per_session=float(s.turns_per_session or 0))
    remote = float(sessions_domain.REMOTE_COST.evaluate({
        "kv_remote_gb": float(s.kv_remote_gb), "kv_remote_usd_per_gb_month": float(
            s.kv_remote_usd_per_gb_month or 0.0)})) if s.kv_remote_gb > 0 else 0.0
    return replace(base, kv_remote_usd_per_day=remote * HOURS_PER_DAY)


def session_shape(s: Scenario) -> dict[str, float]:
    """A session scenario's mean turn (``input_tokens_per_request``, ``output_tokens_per_request``) and its turns a
    second (``demand_requests_per_s``), by the engine's own step (:func:`economics.engine.sessions.request_shape`)
    on a one-row table.
    """
    cols: dict[str, Any] = {name: np.array([np.nan if getattr(s, name) is None else float(getattr(s, name))])
                            for name in ("turns_per_session", "turns_per_session_cv", "session_prefix_tokens",
                                         "input_tokens_per_turn",
                                         "output_tokens_per_turn", "demand_sessions_per_day",
                                         "demand_requests_per_s", "input_tokens_per_request",
                                         "output_tokens_per_request")}
    cols["workload"] = np.array([WorkloadKind.SESSIONS.value], dtype=object)
    request_shape(cols)
    return {k: float(cols[k][0]) for k in ("input_tokens_per_request", "output_tokens_per_request",
                                           "demand_requests_per_s")}


HOUR_TYPES_MEMO = 64
"""Workloads whose hour types :func:`hour_types` keeps (the most recently used)."""
_HOUR_TYPES: OrderedDict[int, tuple[weakref.ref[Workload], tuple[np.ndarray, np.ndarray, np.ndarray]]] = OrderedDict()
_HOUR_TYPES_LOCK = threading.Lock()


def hour_types(wl: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(demand of each hour type [request/s], the type of each hour of the day, the hours of each type [h]): hours
    of equal demand (and price and carbon intensity) are one type, and with a rental block (``block_hours``) only
    when the block takes all or none of them (:func:`clock_block`; a day of one type stays one: a pool rented in it
    is rented all day). Hours of one type have the same rows and costs, so the cheapest plan
    treats them alike, and a type of ``w`` hours is one set of decisions weighed ``w`` times instead of ``w``.

    Worked out once per workload object (a plan's build, solve and report ask ~150 times an edit, 0.17 ms each): a
    :class:`Workload` is frozen, so the same object has the same types; :data:`HOUR_TYPES_MEMO` are kept, each
    call gets its own copies.
    """
    hourly = np.asarray(wl.hourly_requests_per_s)
    if len(hourly) == 1 and hourly.dtype == np.float64:  # one hour (stage 2's models, a new workload each)
        return _one_hour(hourly)
    with _HOUR_TYPES_LOCK:
        hit = _HOUR_TYPES.get(id(wl))
        if hit is not None and hit[0]() is wl:  # the same object (an id is reused only after it is gone)
            _HOUR_TYPES.move_to_end(id(wl))
            return hit[1][0].copy(), hit[1][1].copy(), hit[1][2].copy()
    found = _hour_types(wl)
    with _HOUR_TYPES_LOCK:
        _HOUR_TYPES[id(wl)] = (weakref.ref(wl), found)
        while len(_HOUR_TYPES) > HOUR_TYPES_MEMO:
            _HOUR_TYPES.popitem(last=False)
    return found[0].copy(), found[1].copy(), found[2].copy()


def _one_hour(hourly: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_hour_types` of a one-hour workload's demand ``hourly`` (float64) without ``np.unique``: each stage-2
    hour model asks for it, a new workload each time, so the memo never holds it. One type whatever its prices and
    block: the hour's demand rounded as there, type 0, one hour, in the same dtypes.
    """
    return np.round(hourly, 12), np.zeros(1, dtype=np.intp), np.ones(1, dtype=np.int64)


def _hour_types(wl: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`hour_types` worked out."""
    demand = np.round(wl.hourly_requests_per_s, 12)
    if wl.day is None or wl.day.flat:
        keys = demand[:, None]
    else:  # hours of one demand at different prices (or intensities, carbon priced) are types of their own
        keys = np.stack([demand, np.round(wl.day.usd_per_kwh, 12), np.round(wl.day.carbon_usd_per_kwh, 15)], axis=1)
    if wl.block_hours > 0 and len(np.unique(keys, axis=0)) > 1:  # the block's hours apart from the rest
        in_block = np.zeros(len(demand))
        in_block[clock_block(wl)] = 1.0
        keys = np.column_stack([keys, in_block])
    unique, inverse, weights = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    return unique[:, 0], inverse.reshape(-1), weights


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


def clock_block(wl: Workload) -> list[int]:
    """The clock hours of the rental block (:func:`block_hours` over the day's hours one by one), busiest first."""
    demand = np.asarray(wl.hourly_requests_per_s, dtype=float)
    return block_hours(demand, np.ones(len(demand)), wl.block_hours)


def block_types(wl: Workload) -> list[int]:
    """The hour types (:func:`hour_types`) of the rental block's hours, busiest first: the block takes each whole."""
    inverse = hour_types(wl)[1]
    return list(dict.fromkeys(int(inverse[h]) for h in clock_block(wl)))


def type_day(wl: Workload) -> Day | None:
    """The day's prices read at each hour type of :func:`hour_types` (None: a flat price, no carbon)."""
    if wl.day is None or wl.day.flat:
        return None
    _, inverse, weights = hour_types(wl)
    first = np.array([int(np.flatnonzero(inverse == t)[0]) for t in range(len(weights))])
    return wl.day.at(first)
