"""Pools (one candidate in one role) and what a system of each costs per day: capital as an annuity, energy,
hosting, operations and rent, with the engine's cost formulas (:mod:`economics.domain.cost`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from economics.domain import availability, carbon, cost, fleet, sessions
from economics.domain.capacity import requests_per_s_per_accelerator
from economics.domain.formula import HOURS_PER_DAY
from economics.schema.scenario import Scenario
from economics.schema.scenario import Workload as WorkloadKind
from economics.studies.planner.candidates import Candidate, pue_for
from economics.studies.planner.inputs import (
    CoolingMode,
    Day,
    Ownership,
    PlanSettings,
    PoolRole,
    Workload,
    flow_per_request,
    plan_day,
)
from economics.studies.planner.tiers import tier_availability


@dataclass(frozen=True)
class Pool:
    """One candidate in one role. Flows are requests/s (aggregated), uncached input tokens/s (prefill) or output
    tokens/s (decode); capacities are per system.
    """

    cand: int
    role: PoolRole
    raw_capacity: float          # flow units/s one system serves at full load
    capacity: float              # x availability / (1 + headroom): what the plan may count on
    prefill_weight: float        # uncached input tokens per flow unit (aggregated I_miss, prefill 1, decode 0)
    prefill_capacity: float      # uncached input tokens/s per system x availability (TTFT rows)
    servers_per_system: int      # model replicas per system: the queue's servers
    service_s: float             # one prefill on one replica [s]
    availability: float
    energy_usd_per_flow_hour: float  # per flow unit/s served for an hour (of the physical flow)
    flow_unit: float = 0.0       # the MILP's flow variable counts this many flow units/s (0: raw_capacity)

    @property
    def unit(self) -> float:
        """What one unit of the pool's flow variable serves [flow units/s]: a system's full load, or the busiest
        hour's whole demand of its role when one system serves more (so that the MILP's coefficients stay near 1:
        a system 10^9 times faster than the demand gave coefficients HiGHS drops as zero, and a plan of none).
        """
        return self.flow_unit or self.raw_capacity


@dataclass(frozen=True)
class Costs:
    """Per system of a candidate [USD/h or USD]."""

    fixed_usd_per_hour: float     # owned or existing, every hour: capital, operations, hosting, idle energy, retrofit
    opex_usd_per_hour: float      # the same without capital and retrofit annuities (NPV objective)
    rent_usd_per_hour: float      # rented, per hour rented (plus idle energy when the rent excludes it)
    busy_energy_usd_per_hour: float  # energy of a fully busy system above its idle draw
    capex_usd: float              # bought now: price (own) and liquid retrofit
    facility_kw: float            # system kW x PUE (on site)
    idle_energy_usd_per_hour: float = 0.0  # the idle draw's energy and carbon in the fixed cost or the rent
    pays_energy: bool = True      # False: a rent that includes energy (only the carbon of its kWh is charged)
    idle_kw: float = 0.0          # idle draw at the facility, x PUE [kW] (wherever the system is)
    busy_kw: float = 0.0          # draw above idle at full load, x PUE [kW]
    embodied_kg_per_hour: float = 0.0  # embodied emissions spread over the hardware's life [kgCO2e/h]


@dataclass(frozen=True)
class Problem:
    """One planning problem as every step of the solve reads it: the scenario, its planner settings and workload,
    the hosted candidates, their pools and each candidate's costs per system (``costs[i]`` is ``cands[i]``'s).
    """

    s: Scenario
    settings: PlanSettings
    wl: Workload
    cands: list[Candidate]
    pools: list[Pool]
    costs: list[Costs]


def candidate_costs(c: Candidate, s: Scenario, day: Day | None = None) -> Costs:
    """Hourly costs of one system with the engine's cost functions (:mod:`economics.domain.cost`).

    .. math:: C_{fixed} = C_K(p) + C_O(p) + C_F(P) + P f_{idle} PUE p_{kWh} + C_K(retrofit, n_{fac})

    Existing systems pay no capital (their purchase is sunk); their maintenance is on their book value, as in the
    retrofit study. Rented systems are off site: the rent (plus energy when it excludes energy). Energy is at the
    day's mean price (``day``, :func:`~economics.studies.planner.inputs.plan_day`; the hours' own prices are the
    model's), with the carbon of each kWh and the embodied emissions at the carbon price when carbon is priced.

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
    pue = pue_for(s, mode)
    # the engine's energy formula: idle all hours it is held, and the draw above idle in proportion to its load
    day = day or plan_day(s)
    pays = c.on_site or not s.rent_includes_energy
    f, usd_per_kwh = float(s.idle_power_fraction), (day.mean_usd_per_kwh if pays else 0.0) + day.mean_carbon_usd_per_kwh
    idle_it_kw = float(cost.average_power_kw(c.system_power_kw, 0.0, f))
    idle = float(cost.energy_usd_per_hour(idle_it_kw, pue, usd_per_kwh))
    busy = float(cost.energy_usd_per_hour(c.system_power_kw * (1.0 - f), pue, usd_per_kwh))
    embodied = c.embodied_kgco2e_per_system if math.isfinite(c.embodied_kgco2e_per_system) else 0.0
    kg_h = float(carbon.embodied_kgco2e_per_day(1.0, embodied, float(s.depreciation_years))) / HOURS_PER_DAY
    carbon_h = kg_h * day.carbon_usd_per_kg
    physical = (idle, pays, idle_it_kw * pue, c.system_power_kw * (1.0 - f) * pue, kg_h)
    tiers = kv_tiers_capex_usd(c, s)  # bought with every system, whoever owns it, as the engine charges them
    tiers_h = float(cost.capital_usd_per_hour(tiers, r, n))
    if c.ownership == Ownership.RENT:
        return Costs(0.0, 0.0, c.rent_usd_per_system_hour + tiers_h + idle + carbon_h, busy, 0.0, 0.0, *physical)
    retrofit_capex = (float(fleet.retrofit_capex_usd(c.system_power_kw, s.liquid_retrofit_usd_per_mw))
                      if mode == CoolingMode.LIQUID_RETROFIT else 0.0)
    capital = float(cost.capital_usd_per_hour(c.price_usd_per_system, r, n)) if c.ownership == Ownership.OWN else 0.0
    retrofit_h = float(cost.capital_usd_per_hour(retrofit_capex, r, float(s.facility_depreciation_years)))
    ops = float(cost.operations_usd_per_hour(c.price_usd_per_system, s.maintenance_fraction_per_year,
                                             float(s.software_usd_per_accelerator_year) * c.accelerators_per_system))
    hosting = float(cost.facility_usd_per_hour(c.system_power_kw, s.colocation_usd_per_kw_month,
                                               s.facility_capex_usd_per_kw, r, s.facility_depreciation_years))
    opex = ops + hosting + idle + carbon_h
    capex = (c.price_usd_per_system if c.ownership == Ownership.OWN else 0.0) + retrofit_capex + tiers
    return Costs(capital + retrofit_h + tiers_h + opex, opex, 0.0, busy, capex, c.system_power_kw * pue, *physical)


def kv_tiers_capex_usd(c: Candidate, s: Scenario) -> float:
    """workload=sessions: the host DRAM and SSD KV tiers bought with one system (unit) of ``c``, the engine's
    ``kv_host_capex_usd_per_system + kv_ssd_capex_usd_per_system`` (x the systems of a unit); 0 for requests.
    Amortised as the hardware (CRF over ``depreciation_years``), this is the engine's ``kv_host_usd_per_hour`` and
    ``kv_ssd_usd_per_hour`` per system.
    """
    if s.workload != WorkloadKind.SESSIONS:
        return 0.0
    v = {name: float(getattr(s, name) or 0.0) for name in (
        "kv_host_memory_gb_per_system", "kv_host_memory_usd_per_gb", "kv_ssd_gb_per_system", "kv_ssd_usd_per_gb")}
    per_system = float(sessions.HOST_CAPEX.evaluate(v)) + float(sessions.SSD_CAPEX.evaluate(v))
    return per_system * c.systems_per_unit


def build_pools(cands: list[Candidate], s: Scenario, settings: PlanSettings,
                wl: Workload) -> tuple[list[Pool], list[tuple[str, str]]]:
    """Every (candidate, role) that can serve: rates known, the per-user speed met, one prefill shorter than the
    TTFT target. Returns (pools, excluded (name and role, reason)).
    """
    pools: list[Pool] = []
    excluded: list[tuple[str, str]] = []
    target = s.target_output_tokens_per_s_per_user
    for k, c in enumerate(cands):
        if not c.on_site and not settings.allow_rent:
            continue
        servers = max(1, c.accelerators_per_system // max(1, c.accelerators_per_replica))
        p_sys, d_sys = c.input_tokens_per_s_per_system, c.output_tokens_per_s_per_system
        hit = hit_rate(c, s)
        uncached = wl.input_tokens * (1.0 - hit)
        service = uncached * servers / p_sys if math.isfinite(p_sys) and p_sys > 0 else math.nan
        avail = tier_availability(c, s)  # spot: the share of its hours an interrupted system serves
        if settings.spares and c.on_site:
            fail, repair = availability.family_rates(c.family)
            avail = availability.system_availability(fail, c.accelerators_per_system, repair)
        costs = candidate_costs(c, s, wl.day)
        for role in c.roles:
            why = _role_problem(c, role, wl, target, settings, service, uncached)
            if why:
                excluded.append((f"{c.name} / {role}", why))
                continue
            raw = {PoolRole.AGGREGATED: float(requests_per_s_per_accelerator(
                        wl.input_tokens, wl.output_tokens, hit, p_sys, d_sys)),
                   PoolRole.PREFILL: p_sys, PoolRole.DECODE: d_sys}[role]
            weight = {PoolRole.AGGREGATED: uncached, PoolRole.PREFILL: 1.0, PoolRole.DECODE: 0.0}[role]
            peak = float(np.max(wl.hourly_requests_per_s)) * flow_per_request(wl, role)
            pools.append(Pool(k, role, raw, raw * avail / (1.0 + float(s.headroom)), weight,
                              p_sys * avail if math.isfinite(p_sys) else math.nan, servers, service, avail,
                              costs.busy_energy_usd_per_hour / raw, min(raw, peak) if peak > 0 else 0.0))
    return pools, excluded


def hit_rate(c: Candidate, s: Scenario) -> float:
    """The share of a request's input ``c`` finds cached: its own KV hit rate (workload=sessions: the engine's
    residency on its hardware), else the scenario's ``prefix_cache_hit_rate``.
    """
    return c.kv_hit_rate if math.isfinite(c.kv_hit_rate) else float(s.prefix_cache_hit_rate)


def _role_problem(c: Candidate, role: PoolRole, wl: Workload, target: float | None, settings: PlanSettings,
                  service_s: float, uncached: float) -> str:
    """Why a candidate cannot take a role ('' when it can), with the numbers."""
    has_p = math.isfinite(c.input_tokens_per_s_per_system) and c.input_tokens_per_s_per_system > 0
    has_d = math.isfinite(c.output_tokens_per_s_per_system) and c.output_tokens_per_s_per_system > 0
    if wl.sessions and role != PoolRole.AGGREGATED:
        return ("workload=sessions is planned on aggregated pools only (which pool holds a session's KV between "
                "turns is not modelled)")
    if role == PoolRole.PREFILL and not has_p:
        return "no prefill throughput (input_tokens_per_s_per_accelerator)"
    if role == PoolRole.PREFILL and uncached <= 0:
        return "nothing to prefill: every input token is a prefix-cache hit"
    if role in (PoolRole.AGGREGATED, PoolRole.DECODE) and not has_d:
        return "no decode throughput (output_tokens_per_s_per_accelerator)"
    if role == PoolRole.DECODE and not has_p:
        return "its output figure includes prefill time, so its decode-only rate is unknown"
    if role != PoolRole.PREFILL and target is not None:
        speed = c.output_tokens_per_s_per_user
        if not math.isfinite(speed):
            return f"per-user speed: not given; the target is {target:g} token/s per user"
        if speed < target * (1.0 - 1e-6):
            return f"per-user speed: {speed:,.1f} token/s per user, below the target {target:g}"
    if role != PoolRole.DECODE and settings.ttft_target_s is not None and uncached > 0:
        if not has_p:
            return "time to first token: no prefill throughput to check it with"
        if service_s >= settings.ttft_target_s:
            return (f"time to first token: one prefill of {uncached:,.0f} tokens takes "
                    f"{service_s:.3g} s on one replica, not under the target {settings.ttft_target_s:g} s")
    return ""
