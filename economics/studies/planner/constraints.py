"""The MILP's rows, one function per family (``*_rows``): demand in every hour, the floors of the existing
fleet, each pool's capacity and time-to-first-token rows, and the site's power, racks, budget and KV link.
"""

from __future__ import annotations

import math

import numpy as np

from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import Candidate, rack_systems
from economics.studies.planner.inputs import (
    BIG_PENALTY,
    PlanSettings,
    PoolRole,
    RentTier,
    Workload,
    flow_per_request,
    hour_types,
)
from economics.studies.planner.model import ALL_DAY, PlanModel, Row, count_column
from economics.studies.planner.pools import Costs, Pool


def demand_rows(m: PlanModel, pools: list[Pool], wl: Workload, levels: np.ndarray, stretch: frozenset[str]) -> None:
    """Every hour: input to prefill and output to decode, each served by aggregated pools or by its own pools."""
    sides = [(group, per_request, [(p, pool.role == PoolRole.AGGREGATED, pool.unit) for p, pool in enumerate(pools)
                                   if pool.role in (PoolRole.AGGREGATED, role)])
             for group, role, per_request in ((Row.DEMAND_INPUT, PoolRole.PREFILL, wl.uncached_input_tokens),
                                              (Row.DEMAND_OUTPUT, PoolRole.DECODE, wl.output_tokens))]
    # the hours' levels as Python floats and each side's pools read once: the same coefficients to the bit
    for h, lam in enumerate(levels.tolist()):
        for group, per_request, serving in sides:
            if per_request <= 0:
                continue
            need = lam * per_request  # tokens/s; the row is scaled to 1 = the hour's demand
            coefs = {m.flow_col[(p, h)]: -(per_request if aggregated else 1.0) * unit / need
                     for p, aggregated, unit in serving}
            if group in stretch:  # unserved share of the demand, at a price far above any plan
                col = m.var(BIG_PENALTY * 10.0, False)
                m.slack_col.setdefault(group, []).append(col)
                coefs[col] = -1.0
            m.row(coefs, -1.0, group, h)


def spot_rows(m: PlanModel, pools: list[Pool], cands: list[Candidate], wl: Workload, levels: np.ndarray,
              settings: PlanSettings) -> None:
    """Every hour: spot pools carry at most ``max_spot_share`` of the input and of the output demand (the share
    of the service an interruption may take down); no rows when the share is 1 or nothing is spot.
    """
    spot = [p for p, pool in enumerate(pools) if cands[pool.cand].rent_tier == RentTier.SPOT]
    if settings.max_spot_share >= 1.0 or not spot:
        return
    for h, lam in enumerate(levels):
        for role, per_request in ((PoolRole.PREFILL, wl.uncached_input_tokens), (PoolRole.DECODE, wl.output_tokens)):
            if per_request <= 0 or lam <= 0:  # nothing of this kind to serve in the hour
                continue
            coefs = {m.flow_col[(p, h)]: (per_request if pools[p].role == PoolRole.AGGREGATED else 1.0) * pools[p].unit
                     / (lam * per_request) for p in spot if pools[p].role in (PoolRole.AGGREGATED, role)}
            if coefs:
                m.row(coefs, float(settings.max_spot_share), Row.SPOT_SHARE, h)


def whole_demand_flow(pool: Pool, wl: Workload, requests_per_s: float) -> float:
    r"""The flow [in units of one system's full load] that serves the hour's whole demand by this pool alone.

    .. math:: u = \lambda \, t / C_{raw}

    with :math:`t` the pool's flow units per request (1 for an aggregated pool, uncached input tokens for prefill,
    output tokens for decode). More flow than this serves nothing, so a system counts for at most ``u`` in its
    capacity row: exact for whole systems (one system covers the hour either way) and it keeps a system that
    outruns the demand a million times over from looking like 10^-9 of a system, which the solver's integrality
    tolerance would round to none.

    >>> pool = Pool(0, "decode", 1e9, 9e8, 0.0, 1.0, 1, 1.0, 1.0, 0.0)
    >>> wl = Workload(0.0, 0.0, 250.0, 20.0, np.full(24, 20.0), 1.0, 0.0)
    >>> whole_demand_flow(pool, wl, 20.0)  # 20 request/s x 250 token / 1e9 token/s
    5e-06
    """
    return requests_per_s * flow_per_request(wl, pool.role) / pool.unit


def floor_rows(m: PlanModel, pools: list[Pool], floors: dict[int, int]) -> None:
    """Either none of a pool or at least its floor: ``floor y <= n <= big y`` with a binary ``y`` per count."""
    for (p, h), col in list(m.count_col.items()):
        if p not in floors:
            continue
        y = m.var(0.0, True, 1.0)
        m.floor_col[(p, h)] = y
        m.row({y: float(floors[p]), col: -1.0}, 0.0, Row.TTFT_FLOOR, h)
        m.row({col: 1.0, y: -float(max(100 * floors[p], 10_000))}, 0.0, Row.TTFT_FLOOR, h)


def pool_rows(m: PlanModel, pools: list[Pool], cands: list[Candidate], weights: np.ndarray, rho: dict[int, float],
               settings: PlanSettings, wl: Workload) -> None:
    """Capacity and TTFT of every pool in every hour; the existing fleet's size; racks of on-site candidates."""
    levels = hour_types(wl)[0].tolist()  # Python floats: the same values, read without numpy's scalars
    capacity, ttft = Row.CAPACITY, Row.TTFT
    for p, pool in enumerate(pools):
        most = pool.capacity / pool.unit  # a system's flow at full load, in the pool's flow units
        weight = pool.prefill_weight * pool.unit / pool.prefill_capacity if p in rho else 0.0
        for h in range(len(weights)):
            n, f = count_column(m, p, h), m.flow_col[(p, h)]
            m.row({f: 1.0, n: -min(most, whole_demand_flow(pool, wl, levels[h]))}, 0.0, capacity, h)
            if p in rho:
                m.row({f: weight, n: -rho[p]}, 0.0, ttft, h)
    by_cand: dict[int, list[int]] = {}
    for p, pool in enumerate(pools):
        if cands[pool.cand].on_site:
            by_cand.setdefault(pool.cand, []).append(m.count_col[(p, ALL_DAY)])
    for i, cols in by_cand.items():
        if math.isfinite(cands[i].max_systems):
            m.row(dict.fromkeys(cols, 1.0), cands[i].max_systems, Row.EXISTING_FLEET,
                  label=f"existing fleet: {cands[i].name}")


def site_rows(m: PlanModel, pools: list[Pool], cands: list[Candidate], costs: list[Costs], s: Scenario,
               settings: PlanSettings, onsite: list[int], weights: np.ndarray, wl: Workload,
               stretch: frozenset[str]) -> None:
    """Racks, site power, capex budget and the KV link."""
    counts = {i: [m.count_col[(p, ALL_DAY)] for p, pool in enumerate(pools) if pool.cand == i] for i in onsite}
    for i in m.rack_col:
        coefs = dict.fromkeys(counts[i], 1.0)
        coefs[m.rack_col[i]] = -rack_systems(cands[i], s, cands[i].cooling_mode)
        m.row(coefs, 0.0, Row.RACK_FILL)
    limits: list[tuple[Row, dict[int, float], float]] = []
    if settings.max_racks is not None:
        limits.append((Row.RACKS, {m.rack_col[i]: 1.0 for i in onsite}, float(settings.max_racks)))
    if s.site_power_mw is not None:
        limits.append((Row.SITE_POWER, {col: costs[i].facility_kw / 1000.0 for i in onsite for col in counts[i]},
                       float(s.site_power_mw)))
    if settings.capex_budget_usd is not None:
        limits.append((Row.CAPEX_BUDGET, {col: costs[i].capex_usd / 1e6 for i in onsite for col in counts[i]},
                       float(settings.capex_budget_usd) / 1e6))
    for group, coefs, limit in limits:
        if group in stretch:
            col = m.var(BIG_PENALTY / max(limit, 1e-9), False)
            m.slack_col[group] = [col]
            coefs = {**coefs, col: -1.0}
        m.row(coefs, limit, group)
    if s.kv_link_gb_per_s is not None and any(pool.role == PoolRole.PREFILL for pool in pools):
        if not math.isfinite(wl.kv_bytes_per_token):
            raise ValueError("kv_link_gb_per_s: the KV-cache bytes per token need a catalog model (model)")
        for h in range(len(weights)):
            coefs = {m.flow_col[(p, h)]: pool.unit * wl.kv_bytes_per_token / 1e9
                     for p, pool in enumerate(pools) if pool.role == PoolRole.PREFILL}
            if Row.KV_LINK in stretch:
                col = m.var(BIG_PENALTY / float(s.kv_link_gb_per_s), False)
                m.slack_col.setdefault(Row.KV_LINK, []).append(col)
                coefs[col] = -1.0
            m.row(coefs, float(s.kv_link_gb_per_s), Row.KV_LINK, h)
