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
every hour's whole demand on its own changes no hour, which bounds the box. Two relaxations bound a box more
tightly: with one count the hours' relaxations, convex in it (:class:`_Convex`); with several, each hour's
relaxation with the day's systems at a share of their cost (:class:`_Split`). A search whose boxes would take more
bases than it may evaluate (:func:`_work`, from their sizes) is not started.

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
from economics.studies.planner.model import ALL_DAY, HourModels, PlanModel, Row
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
    would need (:func:`_work`) or needs more than :data:`MAX_POINTS` bases, or its plan breaks a row of ``m`` (HiGHS
    then solves it).

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
    made = hourly()
    hours = [_costed(sub, cols, m, day) for sub, cols in made]
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
    None when it would need more than :data:`MAX_POINTS` bases (:func:`_work`, before it starts), needs them, or an
    hour's search gives up.
    """
    lo, hi = np.array([m.lb[j] for j in day]), _most(m, day, hours)
    boxes = _boxes(m, day, lo, hi)
    if _work(boxes) > MAX_POINTS:
        return None
    c = np.array([m.c[j] for j in day])
    relaxed = _Convex(c, day, hours, lo, hi) if len(day) == 1 else _Split(m, day, hours)
    search = _Search(m, day, hours, relaxed)
    try:
        for box_lo, box_hi in boxes:
            search.push(box_lo, box_hi, None)
        while search.heap:
            bound, _, a, b, near = heapq.heappop(search.heap)
            if not search.beats(bound):
                break  # best first: no box can do better
            search.split(a, b, near)
    except _GiveUp:
        return None
    return search.best


def _work(boxes: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """The bases a search over ``boxes`` is taken to need, known before it starts: with one count, none (its bound,
    :class:`_Convex`, is the relaxation's own least, and the search ends within a few halvings); with ``k`` counts,
    the whole counts of a box's largest cross-section (its sides' product without the shortest side), summed over
    the boxes. Where the day's pools substitute for one another (an owned system in its three roles), the plans
    within the relaxation's small gap of the optimum lie along a surface across the box, and every box that
    surface crosses must be opened: for the three-count models of docs/speed.md ("Planner speed", branch
    ``sepbound``) a box of 20 x 12 x 10 took 147 and 107 bases (estimate 240; 250 and 191 with the weak bound
    alone), ones of 36 x 13 x 25 and 175 x 59 x 117 gave up at 400 (estimates 900 and 20,475).
    """
    return sum(float(np.prod(np.sort(b - a + 1.0)[1:])) for a, b in boxes if len(a) > 1)


class _Search:
    """The state of one branch and bound (:func:`_search`): the bases evaluated, the boxes open (a heap of (bound,
    order, lo, hi, the split that bound it)) and the best plan found.
    """

    def __init__(self, m: PlanModel, day: list[int], hours: list[_Hour], relaxed: _Convex | _Split) -> None:
        self.m, self.day, self.hours, self.relaxed = m, day, hours, relaxed
        self.c = np.array([m.c[j] for j in day])
        self.evaluated: dict[tuple[float, ...], tuple[float, list[covering.Cover]] | None] = {}
        self.heap: list[tuple[float, int, np.ndarray, np.ndarray, int | None]] = []
        self.best: _Found | None = None
        self.order = 0  # boxes opened: of two boxes of one bound, the first opened is taken first

    def hours_at(self, n: np.ndarray) -> tuple[float, list[covering.Cover]] | None:
        """:func:`_hours_at` on the base ``n``, remembered; raises :class:`_GiveUp` past :data:`MAX_POINTS` bases."""
        key = tuple(n.tolist())
        if key not in self.evaluated:
            if len(self.evaluated) >= MAX_POINTS:
                raise _GiveUp
            self.evaluated[key] = _hours_at(n, self.day, self.hours)
        return self.evaluated[key]

    def beats(self, bound: float) -> bool:
        """A box of this bound may hold a plan cheaper than the best (by more than the tolerance)."""
        return self.best is None or bound < self.best[0] - covering.TOL * max(1.0, abs(self.best[0]))

    def push(self, a: np.ndarray, b: np.ndarray, near: int | None) -> None:
        """Open the box ``[a, b]`` with its bound: the fewest systems' cost plus the most systems' hours, or the
        relaxation's bound when higher (``near``: the split that bound its parent). Not when its top has no plan,
        nor when the relaxation's bound cannot beat the best (then its top is not evaluated).
        """
        if isinstance(self.relaxed, _Convex):
            bound, near = self.relaxed.least(a[0], b[0]), None
        else:
            bound, near = self.relaxed.least(a, b, near)
        if not self.beats(bound):
            return
        top = self.hours_at(b)
        if top is None:
            return
        heapq.heappush(self.heap, (max(float(self.c @ a) + top[0], bound), self.order, a, b, near))
        self.order += 1

    def split(self, a: np.ndarray, b: np.ndarray, near: int | None) -> None:
        """Take the box ``[a, b]``'s top as a plan when it is the best, and open its two halves (on its widest side).
        A half whose relaxation's bound cannot beat the best is dropped before its top is evaluated.
        """
        top = self.hours_at(b)
        assert top is not None  # a box is pushed only with its top feasible
        if _within(self.m, self.day, b) and (self.best is None or float(self.c @ b) + top[0] < self.best[0]):
            self.best = (float(self.c @ b) + top[0], b, top[1])
        if (a == b).all():
            return
        j = int(np.argmax(b - a))
        mid = math.floor((a[j] + b[j]) / 2)
        left_hi, right_lo = b.copy(), a.copy()
        left_hi[j], right_lo[j] = mid, mid + 1
        for box_lo, box_hi in ((a, left_hi), (right_lo, b)):
            if _within(self.m, self.day, box_lo):
                self.push(box_lo, box_hi, near)


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


class _Split:
    r"""A lower bound of the plan's cost over a box ``a <= n <= b`` of the day's counts (any number of them): each
    hour's relaxation with the day's systems free in the box at a share of their cost, summed over the hours.

    Split the day's cost over the hours, ``c = sum_h s_h`` with every ``s_h >= 0`` (a count's share only in hours
    where its pool appears; a count in none keeps its cost, ``c_0``). For every whole ``n`` in the box

    .. math:: c \cdot n + \sum_h H_h(n) = c_0 \cdot n + \sum_h \left(s_h \cdot n + H_h(n)\right)
              \ge c_0 \cdot a + \sum_h \min_{a \le \nu \le b} \left(s_h \cdot \nu + L_h(\nu)\right)

    with ``L_h(nu) <= H_h(nu)`` the hour's relaxation (rented systems continuous) on a base of ``nu``: each hour
    may pick its own base in the box, real numbers too, which only lowers the sum. The term of hour ``h`` is the
    covering relaxation of the hour with the day's pools between ``a`` and ``b`` at a rent ``s_h`` per system
    (:meth:`economics.domain.covering.Bounds.relaxed`, exact in closed form), so the bound holds for any split, and
    so does the largest over several splits. The best split is the one that prices a system held all day where it
    is worth its cost: in the busy hours, where it displaces rented systems, none in the quiet hours that have it
    idle (with a single pool and one rent, the split over the hours at least as busy as the optimum's count gives
    the whole relaxation's value). So the splits tried are, for each ``t``, the day's cost over the ``t`` busiest
    hour types in proportion to the hours each stands for. Infinite when an hour cannot be covered even on ``b``.
    """

    def __init__(self, m: PlanModel, day: list[int], hours: list[_Hour]) -> None:
        weights = np.asarray(m.hour_weights, dtype=float)  # the hours each hour type stands for, as m is costed
        if weights.shape != (len(hours),):  # a model built by hand, without its hour types: no weight to split by
            raise ValueError(f"{len(hours)} hour types but {weights.size} hour weights")
        paid = np.array([[float(j in item.day) for j in day] for item in hours]).reshape(len(hours), len(day))
        c = np.array([m.c[j] for j in day])
        self.alone = np.where(paid.any(axis=0), 0.0, c)  # a count in no hour: its own cost, at its fewest
        self.day, self.hours = day, hours
        busiest = sorted(range(len(hours)), key=lambda k: -_busy(hours[k].hour))
        self.splits: list[list[covering.Bounds]] = []
        for t in range(1, len(hours) + 1):
            w = np.zeros(len(hours))
            w[busiest[:t]] = weights[busiest[:t]]
            total = w @ paid  # each count's weight over the chosen hours where it appears
            if (total[paid.any(axis=0)] <= 0).any():
                continue  # a count would be free in every hour: not a split
            share = c * w[:, None] * paid / np.where(total > 0, total, 1.0)  # per hour (row) and count (column)
            self.splits.append([covering.Bounds(self._priced(item, share[k])) for k, item in enumerate(hours)])

    def _priced(self, item: _Hour, share: np.ndarray) -> covering.Hour:
        """The hour with the day's pools at a rent of ``share`` per system."""
        rent = item.hour.usd_per_system.copy()
        for j, v in zip(self.day, share.tolist(), strict=True):
            if j in item.day:
                rent[item.day[j]] = v
        return replace(item.hour, usd_per_system=rent)

    def least(self, a: np.ndarray, b: np.ndarray, near: int | None) -> tuple[float, int | None]:
        """The bound over the box ``[a, b]`` (class docstring) and the split that gives it: the largest over the
        splits, or (``near``: the best split of the box it was cut from) that one alone, as a box's best split is
        seldom another than its parent's (any split bounds; the root tries them all). Trying its two neighbours
        too cost more than the bases it saved: 146 bases against 147 on the CLI test's catalog, its three searches
        0.95x of main's CPU against 0.75x (medians of 5 paired rounds).
        """
        boxes = []
        for item in self.hours:
            lo, hi = item.hour.lo.copy(), item.hour.hi.copy()
            for j, v, w in zip(self.day, a.tolist(), b.tolist(), strict=True):
                if j in item.day:
                    lo[item.day[j]], hi[item.day[j]] = v, w
            boxes.append((lo, hi))
        tried = range(len(self.splits)) if near is None else [near]
        best, at = -math.inf, near
        for t in tried:
            total = float(self.alone @ a)
            for search, (lo, hi) in zip(self.splits[t], boxes, strict=True):
                cost = search.relaxed(lo, hi)
                if cost is None:
                    return math.inf, near  # an hour cannot be covered even on the box's most systems
                total += cost
            if total > best:
                best, at = total, t
        return best, at


def _busy(h: covering.Hour) -> float:
    """How busy an hour is: the fewest systems that carry its demand (the largest share one system covers)."""
    most = float(np.max(h.share_per_flow * h.flow_per_system, initial=0.0))
    return max(h.need_input, h.need_output) / most if most > 0 else math.inf


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
