"""After the two stages, rented pools added to the plan one at a time: a neighbourhood search, ranked here and
run by :func:`economics.studies.planner.solve._add_pools`.

Stage 1 chooses the pools from a relaxation and stage 2 sizes only those, so a pool that neither the relaxation nor
stage 1 opens is never tried, though a few of its systems may top up the hours the chosen pools are too coarse for
(a whole rack-scale system rented for a fraction of a rack's demand; docs/planner.md, "Solving"). Each rented pool
the plan does not use is a move: the plan's pools and that one, solved together on their own.

Moves are ranked by a bound. With the two stages' base fixed (every count held all day, the racks) an hour is a
covering problem (:mod:`economics.domain.covering`); with only the plan's pools and the new one allowed systems,
its relaxation, and then its cheapest whole systems, bound what the hour costs, and the base's cost plus every
hour's bound is a lower bound of any plan of those pools on that base (the rental block only adds rows). A pool
is not ranked when another rented pool of the same role beats it in every hour (no dearer per system, at least as
large, no dearer in energy per share of the demand: the other does all it does for no more), when it is a prefill
(decode) pool and no decode (prefill) pool is open (the demand rows leave it nothing to cover), or when its bound
is no lower than the plan. At most :data:`MAX_TRIES` moves a round and :data:`MAX_ROUNDS` rounds: at most 3 solves
of a few pools. The tier does not enter the ranking: every rented pool follows the same rental rules, and an hour
with a spot-share row is not a covering problem, so there is no bound and nothing is ranked.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from economics.domain import covering
from economics.studies.planner.hourly import cover_problem
from economics.studies.planner.inputs import PoolRole
from economics.studies.planner.milp import COVER_NODE_LIMIT
from economics.studies.planner.model import HourModels, PlanModel
from economics.studies.planner.pools import Problem

MAX_ROUNDS = 3
"""Pools added at most (one a round)."""
MAX_TRIES = 1
"""Pools tried a round at most (each one solve of a few pools), the lowest bound first."""


class Neighbourhood:
    """The rented pools worth adding to a plan's pools, ranked by a bound of what the plan's hours cost with them.

    Parameters
    ----------
    pb : Problem
        The problem ``m`` was built from (its pools and candidates).
    m : PlanModel
        The model with every pool, with the operations settings' binaries (``m.rules.open_col``).
    x : numpy.ndarray
        A plan of ``m`` (the two stages'): its base (counts held all day, racks, floors) is what the bounds keep.
    rented : set of int
        The columns stage 2 decides hour by hour (:func:`~economics.studies.planner.build.rented_cols`).
    hourly : list
        Each hour type's model and its column map into ``m``
        (:func:`~economics.studies.planner.build.hourly_models`).
    """

    def __init__(self, pb: Problem, m: PlanModel, x: np.ndarray, rented: set[int], hourly: HourModels) -> None:
        self.pb, self.m = pb, m
        hours = [_hour(sub, cols, m, x, rented) for sub, cols in hourly]
        # an hour of another shape has no bound here: then nothing is tried
        self.hours = [h for h in hours if h is not None] if all(h is not None for h in hours) else []
        c = np.asarray(m.c, dtype=float)
        variable = [j for item in self.hours for j in item[2].values()]
        self.fixed = float(np.dot(c, x)) - float(np.dot(c[variable], x[variable]))  # the base: what no hour decides

    def tries(self, opened: set[int], cost: float) -> list[int]:
        """The rented pools to try with the pools ``opened`` of a plan costing ``cost``: those not beaten by another
        (:func:`_candidates`) whose hours' bound with them (the base kept, the hours' relaxations, then their
        cheapest whole systems) is below ``cost``, the lowest bound first, at most :data:`MAX_TRIES`.
        """
        if not self.hours:
            return []
        below = cost - 1e-9 * max(1.0, abs(cost))
        # each move's hours prepared once (covering.Bounds) for both of its bounds: the same figures as each hour
        # prepared for each bound, without building its slices twice
        made: dict[int, list[_Few]] = {q: [] for q in _candidates(self.pb, self.m, self.hours, opened)}
        loose = [q for q, few in made.items() if self.fixed + _bound(self.hours, opened | {q}, made=few) < below]
        bounds = sorted((self.fixed + _bound(self.hours, opened | {q}, whole=True, made=made[q]), q) for q in loose)
        return [q for bound, q in bounds if bound < below][:MAX_TRIES]


_Hour = tuple[covering.Hour, list[int], dict[int, int]]
"""An hour with the base fixed: its covering problem (costs as ``m``'s), the pool of each of its positions, and its
variable columns in ``m`` (rented counts and flows)."""


def _hour(sub: PlanModel, cols: dict[int, int], m: PlanModel, x: np.ndarray, rented: set[int]) -> _Hour | None:
    """One hour type's covering problem with the base of ``x`` fixed and every pool open, its costs those of ``m``
    (the hour's rent and energy, the base's cost left out); None when the hour is not a covering problem.
    """
    lb, ub = list(sub.lb), list(sub.ub)
    for j_sub, j in cols.items():
        if sub.integer[j_sub] and j not in rented:
            lb[j_sub] = ub[j_sub] = float(round(float(x[j])))
    problem = cover_problem(sub, lb, ub)
    if problem is None:
        return None
    hour, counts, flows = problem
    pool_of = {n: p for (p, _), n in sub.count_col.items()}
    free = [cols[n] in rented for n in counts]
    rent = np.array([m.c[cols[n]] if f else 0.0 for n, f in zip(counts, free, strict=True)])
    hour = replace(hour, usd_per_system=rent, usd_per_flow=np.array([m.c[cols[f]] for f in flows]))
    variable = {n: cols[n] for n, f in zip(counts, free, strict=True) if f} | {f: cols[f] for f in flows}
    return hour, [pool_of[n] for n in counts], variable


_Few = tuple[covering.Hour, covering.Bounds]
"""An hour with only some pools (and the base) allowed systems, and its covering problem prepared."""


def _bound(hours: list[_Hour], opened: set[int], whole: bool = False, made: list[_Few] | None = None) -> float:
    """The hours with only the pools ``opened`` (and the base) allowed systems, each at its relaxation or, with
    ``whole``, at its cheapest whole systems (:func:`economics.domain.covering.cheapest`, its relaxation where the
    search gives up): either is a lower bound of those hours in any plan of these pools, as the rental block only
    adds rows. ``made``: the hours already prepared for ``opened`` (:class:`economics.domain.covering.Bounds`, the
    same figures as :func:`~economics.domain.covering.relax` and :func:`~economics.domain.covering.cheapest`), to
    which the others are added as they are reached.
    """
    made = [] if made is None else made
    total = 0.0
    for i, item in enumerate(hours):
        if i == len(made):
            hour, pools, _ = item
            keep = np.flatnonzero([p in opened or lo > 0 for p, lo in zip(pools, hour.lo, strict=True)])
            few = replace(hour, **{f: getattr(hour, f)[keep] for f in _ARRAYS})
            made.append((few, covering.Bounds(few)))
        few, prepared = made[i]
        cover = prepared.cheapest(few.lo, few.hi, COVER_NODE_LIMIT) if whole else None
        relaxed = cover.cost if cover is not None else prepared.relaxed(few.lo, few.hi)
        if relaxed is None:
            return math.inf
        total += relaxed
    return total


_ARRAYS = ("role", "share_per_flow", "flow_per_system", "usd_per_system", "usd_per_flow", "lo", "hi")
"""The per-pool fields of :class:`economics.domain.covering.Hour`."""


def _candidates(pb: Problem, m: PlanModel, hours: list[_Hour], opened: set[int]) -> list[int]:
    """Rented pools the plan does not use, of a role that can cover something with the plan's pools, that no
    other rented pool of the same role beats in every hour (of two alike, the first is kept).
    """
    assert m.rules is not None
    pools = [p for p in m.rules.open_col if p in m.rules.rented]
    stacked = [np.stack(arrays) for arrays in zip(*(_per_pool(item, pools) for item in hours), strict=True)]
    share, rent, energy = stacked  # (hours, pools) each

    def beaten(k: int) -> bool:
        for o in range(len(pools)):
            if o == k or pb.pools[pools[o]].role != pb.pools[pools[k]].role:
                continue
            no_worse = (share[:, o] >= share[:, k]).all() and (rent[:, o] <= rent[:, k]).all() and (
                energy[:, o] <= energy[:, k]).all()
            alike = (share[:, o] == share[:, k]).all() and (rent[:, o] == rent[:, k]).all() and (
                energy[:, o] == energy[:, k]).all()
            if no_worse and (not alike or o < k):
                return True
        return False

    # the demand rows read G + P >= 1 and G + D >= 1 (the aggregated, prefill and decode pools' shares of the
    # hour's need): without a pool of the other role a prefill (decode) pool leaves G at 1 and covers nothing
    roles = {pb.pools[p].role for p in opened | _base(hours)}
    useful = {PoolRole.AGGREGATED, *((PoolRole.PREFILL,) if PoolRole.DECODE in roles else ()),
              *((PoolRole.DECODE,) if PoolRole.PREFILL in roles else ())}
    return [p for k, p in enumerate(pools) if p not in opened and pb.pools[p].role in useful and not beaten(k)]


def _base(hours: list[_Hour]) -> set[int]:
    """The pools the base gives systems to in some hour."""
    return {p for hour, pools, _ in hours for p, lo in zip(pools, hour.lo, strict=True) if lo > 0}


def _per_pool(item: _Hour, pools: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One hour's (share one system covers, rent per system, energy per share) of each of ``pools``."""
    hour, order, _ = item
    at = [order.index(p) for p in pools]
    share = hour.flow_per_system[at] * hour.share_per_flow[at]
    with np.errstate(divide="ignore", invalid="ignore"):
        energy = np.where(hour.share_per_flow[at] > 0, hour.usd_per_flow[at] / hour.share_per_flow[at], math.inf)
    return share, hour.usd_per_system[at], energy
