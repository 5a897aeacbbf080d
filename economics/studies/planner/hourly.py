"""Stage 2 hour by hour: with the owned base fixed the hours no longer interact, so each hour's rented systems
are found exactly by the covering search of :mod:`economics.domain.covering` where it applies, else by the hour's LP
rounded up and a short MILP (:func:`stage_two`; the rental block's hours first).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from economics.domain import covering
from economics.studies.planner.milp import COVER_NODE_LIMIT, HOURLY_GAP, HOURLY_NODE_LIMIT, run_milp
from economics.studies.planner.model import PlanModel, Row, Rules


def highs_hour(sub: PlanModel, lb: list[float], ub: list[float], cols: dict[int, int],
                first: np.ndarray) -> np.ndarray | None:
    """An hour the exact covering search does not take: its LP rounded up, then a node-limited MILP."""
    best, floor_cost = _rounded_hour(sub, lb, ub, cols, first)
    if best is None or float(np.dot(sub.c, best)) > floor_cost + HOURLY_GAP * max(abs(floor_cost), 1e-9):
        res = run_milp(sub, lb=lb, ub=ub, gap=HOURLY_GAP, nodes=HOURLY_NODE_LIMIT)
        if res.x is not None and (best is None or float(np.dot(sub.c, res.x)) < float(np.dot(sub.c, best))):
            best = np.asarray(res.x)
    return best


COVER_ROWS = frozenset({Row.DEMAND_INPUT, Row.DEMAND_OUTPUT, Row.CAPACITY, Row.TTFT, Row.KV_LINK})
"""Rows the covering search takes into its problem: the hour's demand, each pool's capacity and TTFT cap, the link."""
FIXED_IN_AN_HOUR = frozenset({Row.TTFT_FLOOR, Row.EXISTING_FLEET, Row.RACK_FILL, Row.RACKS, Row.SITE_POWER,
                              Row.CAPEX_BUDGET})
"""Rows over the owned fleet, which stage 2 has fixed: checked to hold, then left out."""
SOLVED_IN_AN_HOUR = frozenset({Row.SPOT_SHARE})
"""Rows an hour's model holds that the covering search does not take: HiGHS solves such an hour."""
NOT_IN_AN_HOUR = frozenset({Row.POOL_OPEN, Row.SMALLEST_POOL, Row.POOL_SIZE, Row.RENTAL_BLOCK, Row.DISTINCT_POOLS})
"""The operations rules couple hours or pools: an hour's model has none (the solve holds them,
:func:`economics.studies.planner.rules.apply_rules`)."""


_KNOWN_ROWS = COVER_ROWS | FIXED_IN_AN_HOUR
"""The kinds of row :func:`cover_problem` reads (made once: it looks at every row of some 40 hours an edit)."""
_POOL_ROWS = (Row.CAPACITY, Row.TTFT)
"""The rows of one pool's flow against its count."""


def cover_problem(sub: PlanModel, lb: list[float],
                  ub: list[float]) -> tuple[covering.Hour, list[int], list[int]] | None:
    """An hour with the owned fleet fixed as :class:`economics.domain.covering.Hour`, with the count and flow column of
    each of its pools; None when a row or column is of another kind (slacks, a free column outside the pools, an
    aggregated pool covering unequal shares, KV bytes that differ per prefill token, a fixed row that fails).
    """
    pools = sorted((p, n) for (p, _), n in sub.count_col.items())
    counts, flows = [n for _, n in pools], [sub.flow_col[(p, 0)] for p, _ in pools]
    fixed = [lb[j] == ub[j] for j in range(len(sub.c))]
    if sub.slack_col or min(sub.c) < 0 or any(not fixed[j] for j in set(range(len(sub.c))) - set(counts) - set(flows)):
        return None
    share: dict[Row, dict[int, float]] = {Row.DEMAND_INPUT: {}, Row.DEMAND_OUTPUT: {}}
    need = {Row.DEMAND_INPUT: 0.0, Row.DEMAND_OUTPUT: 0.0}
    kappa, kv, link = dict.fromkeys(flows, math.inf), {}, math.inf
    count_of = dict(zip(flows, counts, strict=True))
    for row, b, kind in zip(sub.rows, sub.b, sub.row_kind, strict=True):
        if kind not in _KNOWN_ROWS:  # a kind this adapter does not know: HiGHS solves the hour
            return None
        if kind in share:
            share[kind], need[kind] = {j: -v for j, v in row.items()}, -b
        elif kind in _POOL_ROWS and len(row) == 2 and b == 0:
            (f, alpha), (n, beta) = row.items()
            if f not in kappa and n in kappa:  # the flow first (as a stable sort on "not a flow" puts it)
                (f, alpha), (n, beta) = (n, beta), (f, alpha)
            if f not in kappa or count_of[f] != n or alpha <= 0 or beta > 0:
                return None
            kappa[f] = min(kappa[f], -beta / alpha)
        elif kind is Row.KV_LINK:
            kv, link = row, b
        elif any(not fixed[j] for j in row) or sum(v * lb[j] for j, v in row.items()) > b + 1e-9 * max(1.0, abs(b)):
            return None
    a_in = np.array([share[Row.DEMAND_INPUT].get(f, 0.0) for f in flows])
    a_out = np.array([share[Row.DEMAND_OUTPUT].get(f, 0.0) for f in flows])
    takes_in, takes_out = a_in > 0, a_out > 0
    both = takes_in & takes_out
    if (a_in < 0).any() or (a_out < 0).any() or not _close(a_in[both], a_out[both], 1e-12):
        return None
    # aggregated where a flow covers both, prefill where only the input, else decode (_COVER_ROLES)
    role = np.where(both, covering.AGGREGATED, np.where(takes_in, covering.PREFILL, covering.DECODE))
    per_token = [kv[f] / a_in[k] for k, f in enumerate(flows) if f in kv]
    if any(role[k] != covering.PREFILL for k, f in enumerate(flows) if f in kv) or (
            per_token and not _close(np.array(per_token), np.array(per_token[:1]), 1e-9)):
        return None
    hour = covering.Hour(role, np.maximum(a_in, a_out), np.array([kappa[f] for f in flows]),
                         np.array([sub.c[n] for n in counts]), np.array([sub.c[f] for f in flows]),
                         np.array([lb[n] for n in counts]), np.array([ub[n] for n in counts]),
                         need[Row.DEMAND_INPUT], need[Row.DEMAND_OUTPUT],
                         link / per_token[0] if per_token and per_token[0] > 0 else math.inf)
    return hour, counts, flows


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    """``np.allclose(a, b, rtol=rtol, atol=0.0)`` (``b`` of ``a``'s shape or one value), without its Python layers
    when every value is finite: numpy's rule, ``|a - b| <= atol + rtol |b|`` where ``b`` is finite or ``a == b``,
    is then ``|a - b| <= rtol |b|`` (an equal pair is 0 apart); else ``np.allclose`` itself (an infinity or a NaN).
    """
    if _all(np.isfinite(a)) and _all(np.isfinite(b)):
        return bool(_all(np.abs(a - b) <= rtol * np.abs(b)))
    return bool(np.allclose(a, b, rtol=rtol, atol=0.0))


_all = np.logical_and.reduce  # ndarray.all's C loop without its Python layer


def covered_hour(sub: PlanModel, lb: list[float], ub: list[float]) -> np.ndarray | None:
    """The hour's cheapest whole rented systems by :func:`economics.domain.covering.cheapest` (exact), as a solution of
    ``sub`` checked against every one of its rows; None when the hour is not of that shape or the check fails.
    """
    problem = cover_problem(sub, lb, ub)
    cover = covering.cheapest(problem[0], COVER_NODE_LIMIT) if problem is not None else None
    if problem is None or cover is None:
        return None
    x = np.array(lb, dtype=float)
    x[problem[1]], x[problem[2]] = cover.systems, cover.flow
    slack = np.asarray(sub.b) - sub.matrix() @ x
    return x if (slack >= -1e-7 * np.maximum(1.0, np.abs(sub.b))).all() else None


def _rounded_hour(sub: PlanModel, lb: list[float], ub: list[float], cols: dict[int, int],
                  first: np.ndarray) -> tuple[np.ndarray | None, float]:
    """One hour's rented systems from its LP, rounded up (more systems never break a row; a pool given any
    systems is given at least its floor): a whole-system answer at once, which the MILP then tries to beat when
    it is not already within the gap of the LP's cost (returned too, a lower bound of the hour). The LP is stage
    1's answer for that hour when it maps onto every column (with the base fixed the hours are independent, so
    stage 1's hour is that hour's LP); else it is solved.
    """
    if len(cols) == len(sub.c):
        x = np.array([float(first[cols[j]]) for j in range(len(sub.c))])
        lp_cost = float(np.dot(sub.c, x))
    else:
        lp = run_milp(sub, integer=[0] * len(sub.c), lb=lb, ub=ub)
        if lp.x is None:
            return None, math.nan
        x, lp_cost = np.array(lp.x, dtype=float), lp.cost
    for col in sub.count_col.values():
        x[col] = math.ceil(x[col] - 1e-7)
    for key, y in sub.floor_col.items():
        x[y] = 1.0 if x[sub.count_col[key]] > 0 else 0.0
        if x[y]:
            x[sub.count_col[key]] = max(x[sub.count_col[key]], sub.rows[_floor_row(sub, y)][y])
    return x, lp_cost


def _floor_row(sub: PlanModel, y: int) -> int:
    """The row ``floor y - n <= 0`` of a floor binary."""
    return next(i for i, r in enumerate(sub.rows) if sub.row_kind[i] is Row.TTFT_FLOOR and r.get(y, 0.0) > 0)


def stage_two(m: PlanModel, first: np.ndarray, rented: set[int],
               hourly: list[tuple[PlanModel, dict[int, int]]]) -> np.ndarray | None:
    """Each hour's rented systems with stage 1's owned base fixed (and the pools it closed closed). With a rental
    block the busiest hour goes first, its rented systems priced for every hour of the block (they are held
    through it), and its rented pool sizes then hold: every block hour has them, no other hour more.
    """
    x = first.copy()
    rules = m.rules or Rules({}, {}, {}, [], 1, np.ones(len(hourly)))
    closes, block = rules.closes, rules.block
    pool_of = {col: p for p, (counts, _) in rules.rented.items() for col in counts}
    order = [block[0], *[h for h in range(len(hourly)) if h != block[0]]] if block else list(range(len(hourly)))
    held = float(rules.weights[block].sum()) if block else 0.0  # hours the block's rented systems are paid for
    sizes: dict[int, float] = {}
    for h in order:
        sub, cols = hourly[h]
        sub = replace(sub, c=list(sub.c))  # its costs are changed below: the hour's model stays as built
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
        best = covered_hour(sub, lb, ub)
        if best is None:  # not a covering problem of the usual shape, or too many nodes: HiGHS, as before
            best = highs_hour(sub, lb, ub, cols, first)
        if best is None:
            return None
        for j_sub, j in cols.items():
            x[j] = best[j_sub]
            if j in pool_of and block and h == block[0]:
                sizes[pool_of[j]] = float(round(best[j_sub]))
    return x


def satisfies(m: PlanModel, x: np.ndarray) -> bool:
    """Every row and bound of ``m`` holds at ``x`` (within a relative 1e-7), the integers whole."""
    slack = np.asarray(m.b) - m.matrix() @ x
    whole = all(abs(x[j] - round(x[j])) <= 1e-6 for j, v in enumerate(m.integer) if v)
    inside = bool(np.all(x >= np.asarray(m.lb) - 1e-9) and np.all(x <= np.asarray(m.ub) + 1e-9))
    return bool((slack >= -1e-7 * np.maximum(1.0, np.abs(m.b))).all()) and whole and inside
