"""The model built as a recipe: the cost factors, the variables and the objective, then each family of rows
(:mod:`~economics.studies.planner.constraints`, :mod:`~economics.studies.planner.rules`); and the per-hour models the
second stage solves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from economics.domain import finance
from economics.domain.formula import DAYS_PER_YEAR, HOURS_PER_DAY
from economics.schema.scenario import Scenario
from economics.studies.planner.constraints import demand_rows, floor_rows, pool_rows, site_rows, spot_rows
from economics.studies.planner.inputs import PlanSettings, hour_types, type_day
from economics.studies.planner.model import ALL_DAY, STRETCHABLE, PlanModel
from economics.studies.planner.pools import Problem
from economics.studies.planner.rules import count_bounds, rule_rows


@dataclass(frozen=True)
class _Factors:
    """Objective weights: cost per day, or net present cost over the horizon."""

    fixed: float     # per (fixed cost USD/h) of one owned system
    capex: float     # per USD of capex (0 for cost per day: the annuity is in the fixed cost)
    hourly: float    # per USD/h of rent or energy in one hour of the day
    energy: float    # the same for energy (follows the year's demand under growth)


def objective_factors(s: Scenario, settings: PlanSettings) -> tuple[_Factors, float]:
    """(objective factors, demand multiplier of the design year)."""
    if settings.objective == "cost_per_day":
        return _Factors(HOURS_PER_DAY, 0.0, 1.0, 1.0), 1.0
    years = np.arange(1, int(s.horizon_years) + 1)
    growth = finance.growth_factors(float(s.demand_growth_per_year), years)
    design = float(growth.max())
    disc = finance.discount_factors(float(s.cost_of_capital), years)
    pv = float(disc.sum()) * DAYS_PER_YEAR
    return _Factors(HOURS_PER_DAY * pv, 1.0, pv, float((growth / design * disc).sum()) * DAYS_PER_YEAR), design


def build_model(pb: Problem, rho: dict[int, float], elastic: bool | frozenset[str] = False,
                floors: dict[int, int] | None = None, rules: bool = True) -> tuple[PlanModel, np.ndarray, np.ndarray]:
    """The MILP (see :mod:`economics.studies.planner`), as a recipe: the variables with their objective
    coefficients, then each family of rows. ``rho``: each pool's TTFT utilization cap; ``elastic``: the limits
    allowed to stretch at a penalty (True: every :data:`STRETCHABLE` one); ``floors``: pools whose cap holds only
    from that many systems on, which they then have (or none); ``rules``: with the operations settings
    (:func:`rule_rows`; an hour's model of stage 2 has none) and, when they are rows, the count columns' bounds
    (:func:`count_bounds`: they speed up HiGHS's search over the pool binaries; without binaries they only changed
    which of near-equal stage-1 bases it returned, on the speed frontier, and the exact hourly search ran longer
    with them). Returns (model, hour-type demand [request/s], hour-type weights [h]).
    """
    levels, _, weights = hour_types(pb.wl)
    m = PlanModel(hour_weights=weights)
    stretch = STRETCHABLE if elastic is True else (elastic or frozenset())
    onsite = _variables(m, pb, weights)
    demand_rows(m, pb.pools, pb.wl, levels, stretch)
    spot_rows(m, pb.pools, pb.cands, pb.wl, levels, pb.settings)
    pool_rows(m, pb.pools, pb.cands, weights, rho, pb.settings, pb.wl)
    floor_rows(m, pb.pools, floors or {})
    site_rows(m, pb.pools, pb.cands, pb.costs, pb.s, pb.settings, onsite, weights, pb.wl, stretch)
    if rules:
        rule_rows(m, pb.pools, pb.cands, pb.settings, pb.wl, levels, weights, rho, floors or {})
    if m.rules is not None:  # with the operations settings' binaries (where the bounds speed HiGHS up)
        count_bounds(m, pb.pools, pb.wl, levels, rho, floors or {}, int(pb.settings.min_pool_systems))
    return m, levels, weights


def _variables(m: PlanModel, pb: Problem, weights: np.ndarray) -> list[int]:
    """The columns and their objective coefficients: a count per owned pool (all day) or per rented pool and hour
    type, a flow per pool and hour type, racks per on-site candidate when racks are limited. Returns the on-site
    candidates.
    """
    fac, _ = objective_factors(pb.s, pb.settings)
    day = type_day(pb.wl)
    # the weights and ratios as Python floats, read once (numpy scalars cost more than the arithmetic: the same
    # values, multiplied in the same order, so the same coefficients to the bit)
    hours = weights.tolist()
    ratios: dict[bool, list[float]] = {}
    for p, pool in enumerate(pb.pools):
        c, k = pb.cands[pool.cand], pb.costs[pool.cand]
        # each hour type's energy (and carbon) over the day's mean, at which the costs are: 1 for a flat day
        ratio = ratios.get(k.pays_energy)
        if ratio is None:
            ratio = ratios[k.pays_energy] = (day.ratio(k.pays_energy) if day is not None
                                             else np.ones(len(weights))).tolist()
        if c.hourly:
            for h, w in enumerate(hours):
                rent = k.rent_usd_per_hour + k.idle_energy_usd_per_hour * (ratio[h] - 1.0)
                m.count_col[(p, h)] = m.var(fac.hourly * w * rent, True)
        elif not c.on_site:  # reserved: one count for the day, every hour of it paid
            m.count_col[(p, ALL_DAY)] = m.var(fac.hourly * float(np.sum(weights)) * k.rent_usd_per_hour, True)
        else:
            # the existing fleet's size is a row (its dual is the value of one more existing system), not a bound
            m.count_col[(p, ALL_DAY)] = m.var(fac.fixed * (k.opex_usd_per_hour if fac.capex else k.fixed_usd_per_hour)
                                              + fac.capex * k.capex_usd, True)
        energy, unit, scale = pool.energy_usd_per_flow_hour, pool.unit, pb.wl.energy_scale
        for h, w in enumerate(hours):
            m.flow_col[(p, h)] = m.var(fac.energy * w * energy * ratio[h] * unit * scale, False)
    onsite = sorted({pool.cand for pool in pb.pools if pb.cands[pool.cand].on_site})
    if pb.settings.max_racks is not None:  # racks are decisions only when they are limited
        for i in onsite:
            m.rack_col[i] = m.var(0.0, True)
    return onsite


def hourly_models(pb: Problem, rho: dict[int, float], m: PlanModel, elastic: bool | frozenset[str] = False,
                  floors: dict[int, int] | None = None) -> list[tuple[PlanModel, dict[int, int]]]:
    """One model per hour type (the same rows for that hour alone) and the map of its columns into ``m``."""
    levels, _, _ = hour_types(pb.wl)
    out = []
    day = type_day(pb.wl)
    for h, level in enumerate(levels):
        one = replace(pb, wl=replace(pb.wl, hourly_requests_per_s=np.array([level]), block_hours=0.0,
                                     day=day.at(np.array([h])) if day is not None else pb.wl.day))
        sub, _, _ = build_model(one, rho, elastic, floors, rules=False)
        cols = {sub_col: m.count_col[(p, ALL_DAY if hh is ALL_DAY else h)]
                for (p, hh), sub_col in sub.count_col.items()}
        cols.update({sub_col: m.floor_col[(p, ALL_DAY if hh is ALL_DAY else h)]
                     for (p, hh), sub_col in sub.floor_col.items()})
        cols.update({sub_col: m.flow_col[(p, h)] for (p, _), sub_col in sub.flow_col.items()})
        cols.update({sub_col: m.rack_col[i] for i, sub_col in sub.rack_col.items()})
        for group, sub_cols in sub.slack_col.items():
            cols.update(dict(zip(sub_cols, _hour_slacks(m, group, h, len(levels)), strict=False)))
        out.append((sub, cols))
    return out


def _hour_slacks(m: PlanModel, group: str, h: int, hours: int) -> list[int]:
    cols = m.slack_col.get(group, [])
    return [cols[h]] if len(cols) == hours else list(cols)


def rented_cols(m: PlanModel, pb: Problem) -> set[int]:
    """The hour-by-hour decisions stage 1 relaxes: rented counts and their floors."""
    rent = {p for p, pool in enumerate(pb.pools) if pb.cands[pool.cand].hourly}
    cols = {col for (p, h), col in m.count_col.items() if h is not ALL_DAY and p in rent}
    return cols | {col for (p, h), col in m.floor_col.items() if h is not ALL_DAY and p in rent}


def dominated_pools(pb: Problem, m: PlanModel, rho: dict[int, float]) -> list[int]:
    """Pools of ``m`` that another pool dominates: every plan with systems in such a pool costs at least as much as
    the same plan with those systems moved to the other (:func:`_dominates`), so a model without them has the same
    optimum. With ties (two pools alike) the later one is the dominated one. ``rho``: the TTFT caps ``m`` was built
    with. The proof closes them (:func:`~economics.studies.planner.solve.prove_stages`), and so does stage 1 of a
    model with the operations settings (:func:`~economics.studies.planner.solve.solve_built`: the argument holds with
    the rented counts continuous too), which leaves HiGHS fewer columns to branch on and a root with fewer rows.
    """
    if m.rack_col:  # racks shared by the pools of a candidate: not compared here
        return []
    out = []
    for q in range(len(pb.pools)):
        if any(_dominates(pb, m, rho, p, q) and (p < q or not _dominates(pb, m, rho, q, p))
               for p in range(len(pb.pools)) if p != q):
            out.append(q)
    return out


def _dominates(pb: Problem, m: PlanModel, rho: dict[int, float], p: int, q: int) -> bool:
    """Whether pool ``p`` can take pool ``q``'s systems in any plan at no more cost, breaking no row: the same role,
    way of holding (rented by the hour, reserved, on site) and rent tier, neither an existing fleet; no dearer a
    system in any hour type nor a token's energy; at least the tokens per system (and within the TTFT cap); no
    higher a TTFT floor; no more site power or capex a system. Then ``p`` given the systems of both (at most its
    count's bound, which carries the busiest hour alone) serves what both served: the demand, spot-share, KV-link
    and distinct-pool rows hold, and a rented pool's size and block move with its counts.
    """
    a, b = pb.pools[p], pb.pools[q]
    ca, cb = pb.cands[a.cand], pb.cands[b.cand]
    if (a.role != b.role or (ca.hourly, ca.on_site) != (cb.hourly, cb.on_site) or ca.rent_tier != cb.rent_tier
            or math.isfinite(ca.max_systems) or math.isfinite(cb.max_systems)):
        return False
    if ca.hourly and m.rules is not None and m.rules.min_systems > 1 and not m.rules.block:
        return False  # a rented pool's size reached in one hour type (binaries per hour): not compared here
    ka, kb = pb.costs[a.cand], pb.costs[b.cand]
    if ca.on_site and (ka.facility_kw > kb.facility_kw or ka.capex_usd > kb.capex_usd):
        return False
    if a.capacity < b.capacity or (p in rho and (q not in rho or a.prefill_weight != b.prefill_weight
                                                 or rho[p] * a.prefill_capacity < rho[q] * b.prefill_capacity)):
        return False
    floors = m.rules.floors if m.rules is not None else {}
    if p in floors and (q not in floors or floors[p] > floors[q]):
        return False  # q's systems may be fewer than p's TTFT floor
    counts = all(m.c[m.count_col[(p, h)]] <= m.c[col] for (pool, h), col in m.count_col.items() if pool == q)
    return counts and all(m.c[m.flow_col[(p, h)]] / a.unit <= m.c[col] / b.unit
                          for (pool, h), col in m.flow_col.items() if pool == q)
