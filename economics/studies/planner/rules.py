"""The operations settings as rows of the MILP: a binary per pool, the limit on distinct pools, the smallest
pool, and a rented pool held at its full size through the day's busiest hours; and the repair that makes a
solution obey them exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from economics.studies.planner.candidates import Candidate
from economics.studies.planner.inputs import PlanSettings, Workload, block_hours, block_types, flow_per_request
from economics.studies.planner.model import ALL_DAY, PlanModel, Row, Rules
from economics.studies.planner.pools import Pool


def rules_active(settings: PlanSettings, pools: list[Pool], cands: list[Candidate]) -> dict[str, bool]:
    """Which operations settings can change a plan: a pool limit below the pools there are, a rental block longer
    than an hour with a rented pool, a smallest pool above one system.
    """
    rented = any(cands[pool.cand].hourly for pool in pools)  # a reservation is held all day: no block
    return {"max_pools": settings.max_pools is not None and settings.max_pools < len(pools),
            "min_rental_hours": rented and settings.min_rental_hours > 1.0,
            "min_pool_systems": settings.min_pool_systems > 1}


def most_systems(pool: Pool, levels: np.ndarray, wl: Workload, rho: float | None, floor: int, least: int) -> int:
    """More systems than a pool would ever use: those that carry the busiest hour's whole demand of its role alone
    (at its capacity, and at its TTFT cap), plus one; at least its TTFT floor and the smallest pool. The big-M of
    the rows that open a pool (a tight one keeps the relaxation close).
    """
    flow = float(np.max(levels)) * flow_per_request(wl, pool.role)  # the pool's flow units: requests/s, or tokens/s
    need = flow / pool.capacity
    if rho is not None and pool.prefill_weight > 0:
        need = max(need, flow * pool.prefill_weight / (pool.prefill_capacity * rho))
    need = min(need, 1e15)  # finite, whatever the rates (a bound at the fleet's 1e7 made TTFT-capped plans fail)
    return max(math.ceil(need * (1.0 + 1e-9)) + 1, floor, least)


def count_bounds(m: PlanModel, pools: list[Pool], wl: Workload, levels: np.ndarray, rho: dict[int, float],
                 floors: dict[int, int], least: int) -> None:
    """Each count column bounded by the systems its pool could ever use (:func:`most_systems`): a rented pool's
    count in an hour by that hour's demand, any other count (and a rented pool held through a rental block, whose
    size its busiest hour sets) by the day's busiest hour. The same bound as the big-M of the pool rows; as column
    bounds HiGHS's cuts have a bound to round against (with unbounded counts its root took 4-20 x longer on the
    Plan page's models, docs/speed.md).
    """
    block = set(m.rules.block) if m.rules is not None else set()
    day: dict[int, int] = {}  # pool -> its bound for the whole day (the busiest hour), worked out once
    for (p, h), col in m.count_col.items():
        if h is ALL_DAY or h in block or len(levels) == 1:
            if p not in day:
                day[p] = most_systems(pools[p], levels, wl, rho.get(p), floors.get(p, 0), least)
            most = day[p]
        else:
            most = most_systems(pools[p], levels[h:h + 1], wl, rho.get(p), floors.get(p, 0), least)
        m.ub[col] = min(m.ub[col], float(most))


def rule_rows(m: PlanModel, pools: list[Pool], cands: list[Candidate], settings: PlanSettings, wl: Workload,
               levels: np.ndarray, weights: np.ndarray, rho: dict[int, float], floors: dict[int, int]) -> None:
    """The operations settings as rows.

    With a pool limit or a smallest pool, each pool has a binary ``z`` (it has systems) and a bound ``M``
    (:func:`most_systems`):

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
    block: list[int] = []
    if active["min_rental_hours"]:  # the block's own types when the day's hours were grouped around it
        block = (block_types(wl) if wl.block_hours > 0 and len(levels) > 1 else
                 block_hours(levels, weights, float(settings.min_rental_hours)))
    # a day of one demand level is one hour type: a pool rented in it is rented all day, so no block is needed
    rules = Rules({}, {}, {}, block if len(levels) > 1 else [], k, np.asarray(weights, dtype=float), dict(floors))
    binaries = active["max_pools"] or active["min_pool_systems"]
    for p, pool in enumerate(pools):
        big = float(most_systems(pool, levels, wl, rho.get(p), floors.get(p, 0), k))
        z = m.var(0.0, True, 1.0) if binaries else None  # a smallest pool above 1 (k > 1) has binaries
        if z is not None:
            rules.open_col[p] = z
        if not cands[pool.cand].hourly:
            n = m.count_col[(p, ALL_DAY)]
            if z is not None:
                m.row({n: 1.0, z: -big}, 0.0, Row.POOL_OPEN)
                if k > 1:
                    m.row({z: float(k), n: -1.0}, 0.0, Row.SMALLEST_POOL)
            continue
        size = m.var(0.0, False)
        counts = [m.count_col[(p, h)] for h in range(len(weights))]
        if z is not None:
            rules.closes.update(dict.fromkeys(counts, z))
            m.row({size: 1.0, z: -big}, 0.0, Row.POOL_OPEN)
            if k > 1:
                m.row({z: float(k), size: -1.0}, 0.0, Row.SMALLEST_POOL)
                if not rules.block:
                    _size_reached(m, counts, size, big)
        for h, n in enumerate(counts):
            m.row({n: 1.0, size: -1.0}, 0.0, Row.POOL_SIZE, h)
            if h in rules.block:
                m.row({size: 1.0, n: -1.0}, 0.0, Row.RENTAL_BLOCK, h)
        rules.rented[p] = (counts, size)
    if active["max_pools"]:
        m.row(dict.fromkeys(rules.open_col.values(), 1.0), float(settings.max_pools or 0), Row.DISTINCT_POOLS)
    m.rules = rules


def _size_reached(m: PlanModel, counts: list[int], size: int, big: float) -> None:
    """A rented pool's size ``S`` is the systems it rents in its busiest hour, so the smallest pool binds what is
    paid for: ``m_h >= S`` in at least one hour type. With no rental block to hold it there, one hour type (a flat
    day) takes the row directly; several take a binary ``y_h`` each, ``S - m_h <= M (1 - y_h)`` and
    ``sum y_h >= 1`` (with ``S = 0`` when the pool is closed, any ``y_h`` meets the first).
    """
    if len(counts) == 1:
        m.row({size: 1.0, counts[0]: -1.0}, 0.0, Row.SMALLEST_POOL, 0)
        return
    reached = [m.var(0.0, True, 1.0) for _ in counts]
    for h, (n, y) in enumerate(zip(counts, reached, strict=True)):
        m.row({size: 1.0, n: -1.0, y: big}, big, Row.SMALLEST_POOL, h)
    m.row(dict.fromkeys(reached, -1.0), -1.0, Row.SMALLEST_POOL)


def apply_rules(m: PlanModel, x: np.ndarray) -> np.ndarray:
    """Stage 2's rented systems made to follow the operations settings: each rented pool's size is its largest
    hour (at least the smallest pool), held through the rental block's hours; then the binaries say which pools
    are open. More systems never break a row.
    """
    rules = m.rules
    x = x.copy()
    if rules is None:
        return x
    for p, (counts, size) in rules.rented.items():
        n = np.array([round(float(x[c])) for c in counts], dtype=float)
        top = max(float(n.max()), float(rules.min_systems)) if n.max() > 0 else 0.0
        if top > 0:  # held through the block, or else reached in the pool's busiest hour (the smallest pool)
            n[rules.block or [int(np.argmax(n))]] = top
        for c, v in zip(counts, n, strict=True):
            x[c] = v
        x[size] = top
        if p in rules.open_col:
            x[rules.open_col[p]] = 1.0 if top > 0 else 0.0
    for p, z in rules.open_col.items():
        if p not in rules.rented:
            x[z] = 1.0 if round(float(x[m.count_col[(p, ALL_DAY)]])) > 0 else 0.0
    return x


RULE_OFF: dict[str, Any] = {"max_pools": None, "min_rental_hours": 1.0, "min_pool_systems": 1}
"""Each operations setting at the value that makes it no rule."""
