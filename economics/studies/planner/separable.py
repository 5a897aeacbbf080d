r"""A small model that separates by hour solved exactly, without HiGHS: the proven optimum.

With the counts held all day (owned or reserved pools: ``k`` of them, ``n`` their counts) fixed, a model's hours no
longer interact, and each hour is a covering problem that :mod:`economics.domain.covering` solves exactly. So the
cheapest plan is

.. math:: \min_{n} \; c \cdot n + \sum_h H_h(n)

with ``H_h(n)`` the cheapest rented systems and flows of hour ``h`` (its rent and energy at the model's own costs)
on a base of ``n``. More systems held all day never make an hour dearer (a plan of the hour on ``n`` is one on
``n + 1``: a system is paid by the day, its flow is a choice), so over a box ``a <= n <= b`` every plan costs at
least ``c . a + sum_h H_h(b)``: a branch and bound on the box of counts, split on its widest side, that ends when no
box can beat the best plan found (to :data:`~economics.domain.covering.TOL`). A day's count beyond what carries
every hour's whole demand on its own changes no hour, which bounds the box.

The operations settings' rows (a binary per pool, a rented pool's size, the limit on distinct pools) are left out,
a relaxation; a plan of it that meets every row of the whole model (checked) is then optimal for the model too. A
model with rows this does not take (a rental block, a smallest pool above one system, racks, a spot share, slack
columns) or whose hours the covering search does not take is not solved here (None):
HiGHS solves it as before.

Reference: A. H. Land and A. G. Doig, "An automatic method of solving discrete programming problems",
Econometrica 28(3), 1960 (branch and bound).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from economics.domain import covering
from economics.studies.planner.hourly import cover_problem, satisfies
from economics.studies.planner.milp import COVER_NODE_LIMIT, Solution
from economics.studies.planner.model import ALL_DAY, PlanModel, Row
from economics.studies.planner.rules import apply_rules

EXACT = "optimal: each hour solved exactly on the counts held all day, searched whole"
"""The message of a plan this module proves optimal (:func:`solve_separable`)."""
MAX_DAY_COUNTS = 3
"""Counts held all day searched at most (the boxes grow with their number): more, and HiGHS solves the model."""
MAX_POINTS = 400
"""Bases whose hours are solved at most (each one covering search per hour type): more, and HiGHS solves it."""

_OVER_DAY = frozenset({Row.EXISTING_FLEET, Row.SITE_POWER, Row.CAPEX_BUDGET})
"""Rows over the counts held all day alone, each a limit (no negative coefficient): a base that breaks one is no
plan, and neither is a larger one."""
_TAKEN = frozenset({Row.DEMAND_INPUT, Row.DEMAND_OUTPUT, Row.CAPACITY, Row.TTFT, Row.KV_LINK, Row.TTFT_FLOOR,
                    Row.POOL_OPEN, Row.POOL_SIZE, Row.DISTINCT_POOLS, *_OVER_DAY})
"""Rows of a model this solves: an hour's covering rows, the TTFT floors and the limits over the counts held all day
(:data:`_OVER_DAY`), and the operations settings' rows it relaxes (then checks)."""

HourModels = list[tuple[PlanModel, dict[int, int]]]


@dataclass(frozen=True)
class _Hour:
    """One hour type's covering problem at the model's costs, with where its pools sit: ``day`` (the position of
    each count held all day, by its column of the model) and ``cols`` (each position's count and flow column).
    """

    hour: covering.Hour
    day: dict[int, int]
    counts: list[int]
    flows: list[int]
    search: covering.Bounds

    def at(self, day: list[int], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The hour's bounds with the day's counts at ``n``."""
        lo, hi = self.hour.lo.copy(), self.hour.hi.copy()
        for j, v in zip(day, n.tolist(), strict=True):
            if j in self.day:
                lo[self.day[j]] = hi[self.day[j]] = v
        return lo, hi


def solve_separable(m: PlanModel, rented: set[int], hourly: Callable[[], HourModels]) -> Solution | None:
    """The proven cheapest plan of ``m`` (module docstring), or None when ``m`` is not of that shape, the search
    needs more than :data:`MAX_POINTS` bases, or its plan breaks a row of ``m`` (HiGHS then solves it).

    Parameters
    ----------
    m : PlanModel
        The model, with its operations settings' rows if any.
    rented : set of int
        Its columns decided hour by hour (:func:`~economics.studies.planner.build.rented_cols`).
    hourly : callable
        Builds each hour type's model and its column map into ``m``
        (:func:`~economics.studies.planner.build.hourly_models`); called only when ``m`` may be of the shape.
    """
    day = [j for (_, h), j in m.count_col.items() if h is ALL_DAY]
    if not _shape(m, rented, day):
        return None
    hours = [_costed(sub, cols, m, day) for sub, cols in hourly()]
    if any(h is None for h in hours):
        return None
    costed = [h for h in hours if h is not None]
    found = _search(m, day, costed)
    if found is None:
        return None
    x = apply_rules(m, _plan(m, day, costed, found))
    fun = float(np.dot(m.c, x))
    if not satisfies(m, x) or fun > found[0] + covering.TOL * max(1.0, abs(found[0])):
        return None  # the relaxed rows bind (the rules would raise the plan): not proven here
    return Solution(x, fun, fun, 0, EXACT)


def _shape(m: PlanModel, rented: set[int], day: list[int]) -> bool:
    """Whether ``m`` may separate by hour: rows of the kinds taken, no slack or rack column, a floor only on a count
    held all day, no rental block nor smallest pool above one system, every count either held all day or rented,
    rows over the day's counts alone with no negative coefficient, and few enough day counts.
    """
    if len(day) > MAX_DAY_COUNTS or m.slack_col or m.rack_col or any(k not in _TAKEN for k in m.row_kind):
        return False
    if m.rules is not None and (m.rules.block or m.rules.min_systems > 1):
        return False
    if any(h is not ALL_DAY for (_, h) in m.floor_col) or min(m.c, default=0.0) < 0:
        return False
    if any(j not in rented for (_, h), j in m.count_col.items() if h is not ALL_DAY):
        return False
    return all(all(v >= 0 and j in day for j, v in row.items())
               for row, kind in zip(m.rows, m.row_kind, strict=True) if kind in _OVER_DAY)


def _costed(sub: PlanModel, cols: dict[int, int], m: PlanModel, day: list[int]) -> _Hour | None:
    """One hour type's covering problem with the day's counts at their lower bounds (a floor's binary closed; both
    set per base by :func:`_hours_at` and :func:`_plan`), its costs those of ``m`` (the hour's rent and energy; a
    day's count is paid once, outside the hours) and its bounds the tighter of the hour's and ``m``'s; None when the
    hour is not a covering problem.
    """
    if len(cols) != len(sub.c):
        return None
    floors = set(m.floor_col.values())
    lb = [max(sub.lb[i], m.lb[cols[i]]) for i in range(len(sub.c))]
    ub = [min(sub.ub[i], m.ub[cols[i]]) for i in range(len(sub.c))]
    for i, j in cols.items():
        if j in day:
            ub[i] = lb[i]
        elif j in floors:
            lb[i] = ub[i] = 0.0
    problem = cover_problem(sub, lb, ub)
    if problem is None:
        return None
    hour, counts, flows = problem
    rent = np.array([0.0 if cols[n] in day else m.c[cols[n]] for n in counts])
    hour = replace(hour, usd_per_system=rent, usd_per_flow=np.array([m.c[cols[f]] for f in flows]))
    at = {cols[n]: k for k, n in enumerate(counts) if cols[n] in day}
    return _Hour(hour, at, [cols[n] for n in counts], [cols[f] for f in flows], covering.Bounds(hour))


_Found = tuple[float, np.ndarray, list[covering.Cover]]
"""(cost, the day's counts, each hour's cover)"""


def _search(m: PlanModel, day: list[int], hours: list[_Hour]) -> _Found | None:
    """The branch and bound over the day's counts (module docstring): the cheapest base and its hours' covers, or
    None when it needs more than :data:`MAX_POINTS` bases or an hour's search gives up.
    """
    c = np.array([m.c[j] for j in day])
    lo, hi = np.array([m.lb[j] for j in day]), _most(m, day, hours)
    evaluated: dict[tuple[float, ...], tuple[float, list[covering.Cover]] | None] = {}

    def hours_at(n: np.ndarray) -> tuple[float, list[covering.Cover]] | None:
        key = tuple(n.tolist())
        if key not in evaluated:
            if len(evaluated) >= MAX_POINTS:
                raise _GiveUp
            evaluated[key] = _hours_at(n, day, hours)
        return evaluated[key]

    relaxed = _Convex(c, day, hours, lo, hi) if len(day) == 1 else None

    def bound_of(a: np.ndarray, b: np.ndarray, top: float) -> float:
        weak = float(c @ a) + top  # the fewest systems' cost, the most systems' hours
        return weak if relaxed is None else max(weak, relaxed.least(a[0], b[0]))

    best: _Found | None = None
    heap: list[tuple[float, int, np.ndarray, np.ndarray]] = []
    try:
        for box_lo, box_hi in _boxes(m, day, lo, hi):
            top = hours_at(box_hi)
            if top is not None:
                heapq.heappush(heap, (bound_of(box_lo, box_hi, top[0]), len(heap), box_lo, box_hi))
        order = len(heap)
        while heap:
            bound, _, a, b = heapq.heappop(heap)
            if best is not None and not bound < best[0] - covering.TOL * max(1.0, abs(best[0])):
                break  # best first: no box can do better
            top = hours_at(b)
            assert top is not None  # a box is pushed only with its top feasible
            if _within(m, day, b) and (best is None or float(c @ b) + top[0] < best[0]):
                best = (float(c @ b) + top[0], b, top[1])
            if (a == b).all():
                continue
            j = int(np.argmax(b - a))
            mid = math.floor((a[j] + b[j]) / 2)
            left_hi, right_lo = b.copy(), a.copy()
            left_hi[j], right_lo[j] = mid, mid + 1
            left = hours_at(left_hi)
            for box_lo, box_hi, box_top in ((a, left_hi, left), (right_lo, b, top)):
                if box_top is not None and _within(m, day, box_lo):
                    order += 1
                    heapq.heappush(heap, (bound_of(box_lo, box_hi, box_top[0]), order, box_lo, box_hi))
    except _GiveUp:
        return None
    return best


class _Convex:
    """One day's count ``n``: the cost with every hour relaxed (rented systems continuous), ``g(n) = c n + sum_h
    L_h(n)``, a lower bound of the plan's cost at ``n``. Each ``L_h`` is an LP's value as a function of the bound its
    capacity rows read (``f <= kappa n``), so convex, and ``g`` too (infinite below the fewest systems that cover every
    hour): its least over whole ``n`` in ``[a, b]`` is at ``n*``, its least over all whole counts, moved into the range.
    """

    def __init__(self, c: np.ndarray, day: list[int], hours: list[_Hour], lo: np.ndarray, hi: np.ndarray) -> None:
        self.c, self.day, self.hours = float(c[0]), day, hours
        self.values: dict[float, float] = {}
        a, b = float(lo[0]), float(hi[0])
        while b - a > 2:  # ternary search over whole counts; an infinite value lies left of the least
            left, right = a + (b - a) // 3, b - (b - a) // 3
            if self.at(left) <= self.at(right) and math.isfinite(self.at(left)):
                b = right
            else:
                a = left
        self.least_at = min((self.at(v), v) for v in np.arange(a, b + 1.0))[1]

    def at(self, n: float) -> float:
        """``g(n)``: infinite when an hour cannot be covered on ``n`` (remembered per ``n``)."""
        if n not in self.values:
            total = self.c * n
            for item in self.hours:
                lo, hi = item.at(self.day, np.array([n]))
                cost = item.search.relaxed(lo, hi)
                if cost is None:
                    total = math.inf
                    break
                total += cost
            self.values[n] = total
        return self.values[n]

    def least(self, a: float, b: float) -> float:
        """The least ``g`` over whole counts in ``[a, b]``."""
        return self.at(min(max(self.least_at, a), b))


class _GiveUp(Exception):
    """The search needs more bases than :data:`MAX_POINTS`, or an hour's covering search gave up."""


def _hours_at(n: np.ndarray, day: list[int], hours: list[_Hour]) -> tuple[float, list[covering.Cover]] | None:
    """Every hour's cheapest cover on the day's counts ``n``: (their cost, the covers), None when an hour cannot be
    covered on them. Raises :class:`_GiveUp` when an hour's search gives up.
    """
    total, covers = 0.0, []
    for item in hours:
        lo, hi = item.at(day, n)
        cover = item.search.cheapest(lo, hi, COVER_NODE_LIMIT)
        if cover is None:
            if item.search.relaxed(lo, hi) is not None:
                raise _GiveUp  # the search's node limit, not an hour that cannot be covered
            return None
        total += cover.cost
        covers.append(cover)
    return total, covers


def _most(m: PlanModel, day: list[int], hours: list[_Hour]) -> np.ndarray:
    """Each day's count at most: its bound in ``m``, and no more than carries the busiest hour's whole demand of its
    role on its own, plus one (more changes no hour and costs more).
    """
    most = np.array([m.ub[j] for j in day], dtype=float)
    for k, j in enumerate(day):
        enough = 0.0
        for item in hours:
            if j not in item.day:
                continue
            h, at = item.hour, item.day[j]
            share = float(h.flow_per_system[at] * h.share_per_flow[at])
            need = max(h.need_input, h.need_output, 0.0)
            enough = max(enough, math.ceil(need / share) + 1.0 if share > 0 else 0.0)
        most[k] = max(float(m.lb[j]), min(most[k], enough))
    return most


def _boxes(m: PlanModel, day: list[int], lo: np.ndarray, hi: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The day's counts as boxes: a count with a TTFT floor is none or at least its floor, two boxes."""
    sides: list[list[tuple[float, float]]] = []
    for k, j in enumerate(day):
        floor = _floor(m, j)
        if floor <= 1.0 or lo[k] >= floor:
            sides.append([(lo[k], hi[k])])
        else:
            sides.append([(lo[k], 0.0)] + ([(floor, hi[k])] if hi[k] >= floor else []))
    out = [(np.array([], dtype=float), np.array([], dtype=float))]
    for side in sides:
        out = [(np.append(a, s[0]), np.append(b, s[1])) for a, b in out for s in side if s[0] <= s[1]]
    return out


def _floor(m: PlanModel, j: int) -> float:
    """The TTFT floor of the day's count ``j`` (its row ``floor y - n <= 0``), 0 without one."""
    key = next((k for k, col in m.count_col.items() if col == j), None)
    y = m.floor_col.get(key) if key is not None else None
    if y is None:
        return 0.0
    return max((r[y] for r, kind in zip(m.rows, m.row_kind, strict=True)
                if kind is Row.TTFT_FLOOR and r.get(y, 0.0) > 0 and r.get(j, 0.0) < 0), default=0.0)


def _within(m: PlanModel, day: list[int], n: np.ndarray) -> bool:
    """The day's counts ``n`` meet the limits over them alone (:data:`_OVER_DAY`)."""
    at = dict(zip(day, n.tolist(), strict=True))
    return all(sum(v * at[j] for j, v in row.items()) <= b + 1e-9 * max(1.0, abs(b))
               for row, b, kind in zip(m.rows, m.b, m.row_kind, strict=True) if kind in _OVER_DAY)


def _plan(m: PlanModel, day: list[int], hours: list[_Hour], found: _Found) -> np.ndarray:
    """The plan of ``m``: the day's counts (a floor's binary 1 with systems), each hour's systems and flows."""
    _, n, covers = found
    x = np.zeros(len(m.c))
    for j, v in zip(day, n.tolist(), strict=True):
        x[j] = v
    for key, y in m.floor_col.items():
        x[y] = 1.0 if x[m.count_col[key]] > 0 else 0.0
    for item, cover in zip(hours, covers, strict=True):
        for k, (count, flow) in enumerate(zip(item.counts, item.flows, strict=True)):
            if count not in item.day:
                x[count] = cover.systems[k]
            x[flow] = cover.flow[k]
    return x
