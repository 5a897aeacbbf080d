r"""The cheapest whole systems that cover one hour's demand: an exact branch and bound for the planner's hours.

With the owned fleet fixed, what is left of a plan's hour is a small covering problem. Pools ``j`` (one hardware
option in one role) carry a flow ``f_j`` of at most ``kappa_j`` per system on ``x_j`` systems, whole numbers
between ``lo_j`` and ``hi_j`` (``lo_j = hi_j`` for a fixed fleet). A unit of flow covers a share ``a_j`` of the
hour's demand: of both its input and its output (an aggregated pool), of its input only (prefill) or of its
output only (decode). The cost is rent per system and energy per unit of flow:

.. math::

    \min \sum_j r_j x_j + e_j f_j \quad \text{s.t.} \quad G + P \ge N_{in},\; G + D \ge N_{out},\;
    P \le P_{max},\; 0 \le f_j \le \kappa_j x_j,\; x_j \in \{lo_j, \dots, hi_j\}

with ``G``, ``P``, ``D`` the demand shares covered by aggregated, prefill and decode pools
(``G = sum a_j f_j`` over aggregated pools, and so on) and ``P_max`` the most the KV-cache link lets prefill pools
carry (every prefill token moves the same KV bytes, so the link caps the prefill share).

**The relaxation in closed form.** With ``x`` continuous each pool offers two slices of coverage: what its
``lo_j`` systems (paid for anyway) carry, at ``e_j / a_j`` per unit of demand, and what further systems would
carry, at ``(e_j + r_j / kappa_j) / a_j``. Filling each role's slices cheapest first gives its cost of covering a
share ``q``, convex and piecewise linear: ``A(q)``, ``P(q)``, ``D(q)``. The relaxation is then one-dimensional in
the aggregated share ``g``:

.. math:: \min_{g} A(g) + P(\max(0, N_{in} - g)) + D(\max(0, N_{out} - g))

convex in ``g``, so its minimum lies at one of the kinks, which are all known: the exact LP optimum, in
microseconds, with no LP solver.

**Whole systems.** A depth-first branch and bound on the fractional ``x_j`` (``x_j <= floor`` or ``x_j >= ceil``),
pruned by that bound; the first incumbent is the relaxation rounded up. It proves the optimum (to ``1e-9`` of the
cost) or gives up after ``max_nodes`` nodes and returns ``None``, and the caller solves the hour otherwise.

Reference: A. H. Land and A. G. Doig, "An automatic method of solving discrete programming problems",
Econometrica 28(3), 1960 (branch and bound).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, replace

import numpy as np
from numpy._core.multiarray import interp as _interp
from numpy._core.umath import clip as _clip  # type: ignore[attr-defined]  # numpy's stubs omit the ufunc

# np.clip and np.interp run these two after three and two Python layers of checks; a search solves thousands of
# tiny relaxations, where those layers were most of the time. The same functions on the same arguments: the same bits.

_any = np.logical_or.reduce  # ndarray.any's C loop without its Python layer

AGGREGATED, PREFILL, DECODE = 0, 1, 2
"""Roles by the demand a pool's flow covers: both input and output, input only, output only."""
TOL = 1e-9
"""Relative tolerance: a count this close to a whole number is whole; an answer must beat the best by this much."""


@dataclass(frozen=True)
class Hour:
    """One hour's covering problem (arrays over pools)."""

    role: np.ndarray              # AGGREGATED, PREFILL or DECODE
    share_per_flow: np.ndarray    # a_j: share of the hour's demand one unit of flow covers [-/flow]
    flow_per_system: np.ndarray   # kappa_j: most flow one system carries [flow/system]
    usd_per_system: np.ndarray    # r_j: cost of one system in this hour [USD]
    usd_per_flow: np.ndarray      # e_j: cost of one unit of flow [USD/flow]
    lo: np.ndarray                # fewest systems [-]
    hi: np.ndarray                # most systems [-] (inf: no limit)
    need_input: float = 1.0       # N_in: input demand to cover [-] (0: no input row)
    need_output: float = 1.0      # N_out
    prefill_max: float = math.inf  # P_max: most input share prefill pools may carry (KV link) [-]


@dataclass(frozen=True)
class Cover:
    """A solution: systems and flow per pool, its cost, and the nodes the search used."""

    systems: np.ndarray
    flow: np.ndarray
    cost: float
    nodes: int


class _Roles:
    """What stays the same at every node of one hour's search: each role's slices in cost order (a pool's paid
    slice, then its optional one) and their cost per share of demand, and the buffers a relaxation fills again.
    """

    def __init__(self, h: Hour) -> None:
        self.h = h
        self.cap = max(h.need_input, h.need_output, 0.0)  # more than the whole demand is never needed
        self.n = len(h.role)
        self.per_system = h.flow_per_system * h.share_per_flow  # share one system covers [-]
        self.per_slice = np.concatenate((self.per_system, self.per_system))  # a pool's paid and optional slice
        useful, covers = self.per_system > 0, h.share_per_flow > 0
        # each ratio where its divisor is positive, else 0: divided only there (no x / 0 to silence), the same bits
        self.unit = _ratio(h.usd_per_flow, h.share_per_flow, covers)  # energy per share
        self.per_share = _ratio(1.0, h.share_per_flow, covers)  # flow per share
        self.systems_per_share = _ratio(1.0, self.per_system, useful)
        # more systems of a pool than cover the whole demand are never needed
        self.most = _ratio(self.cap, self.per_system, useful)
        np.ceil(self.most, out=self.most, where=useful)
        np.add(self.most, 1.0, out=self.most, where=useful)
        cost = np.concatenate((self.unit, self.unit + _ratio(h.usd_per_system, self.per_system, useful)))
        # each role's slices by cost, ties in the slices' order: one stable sort by (role, cost), split by role
        role = np.concatenate((h.role, h.role))
        by_role = np.lexsort((cost, role))
        ends = np.searchsorted(role[by_role], (AGGREGATED, PREFILL, DECODE), side="right").tolist()
        self.order = [by_role[start:end] for start, end in zip([0, *ends[:2]], ends, strict=True)]
        self._buffers(cost)

    def _buffers(self, cost: np.ndarray) -> None:
        """The arrays a relaxation writes whole each time, one row per role, so that a node makes few numpy calls.

        Each role's slices in cost order are a row of ``width`` entries (``perm``: the slices' indices, a shorter row
        padded with a slice that stays empty, index ``2 n``), so its cost curve (cumulative share, cumulative cost,
        from a first point at 0) ends in copies of its last point. A copy changes no value of the curve, no kink's
        value and, coming right after its original, not which kink is the first cheapest: the same figures as
        curves of each role's own length, bit for bit.
        """
        n, width = self.n, max(len(o) for o in self.order)
        self.perm = np.full((3, width), 2 * n)
        for r, o in enumerate(self.order):
            self.perm[r, :len(o)] = o
        self.ordered_cost = np.append(cost, 0.0)[self.perm]
        self.share = np.zeros(2 * n + 1)  # every slice's share, then the empty one
        self.paid, self.optional, self.slices = self.share[:n], self.share[n:2 * n], self.share[:2 * n]
        self.sorted_share, self.sorted_cost, self.used = (np.empty((3, width)) for _ in range(3))
        self.xs, self.ys = np.zeros((3, width + 1)), np.zeros((3, width + 1))
        self.x_tail, self.y_tail, self.x_last = self.xs[:, 1:], self.ys[:, 1:], self.xs[:, -1]
        self.curves = list(zip(self.xs, self.ys, strict=True))
        self.kinks = np.empty(3 * (width + 1) + 3)  # the aggregated curve's shares, the others' left over, three more
        self.kink_rows = self.kinks[:-3].reshape(3, width + 1)
        self.needs = np.array([[self.h.need_input], [self.h.need_output]])
        self.used_by_slice = np.empty(2 * n + 1)  # each slice's share used, in the slices' order, then the empty one's
        self.g_star = 0.0

    def bound(self, lo: np.ndarray, hi: np.ndarray) -> float | None:
        """The relaxation's cost with ``lo <= x <= hi`` continuous, or None when infeasible; its systems are then
        :meth:`systems` (until the next call).
        """
        h, share, optional = self.h, self.slices, self.optional
        # each slice's share of demand: the paid ones (lo systems), then the optional ones, at most the whole demand
        self.paid[:] = lo
        np.subtract(hi, lo, out=optional)
        np.minimum(optional, self.most, out=optional)
        np.multiply(share, self.per_slice, out=share)
        np.minimum(share, self.cap, out=share)
        self.share.take(self.perm, out=self.sorted_share, mode="clip")  # each role's slices in cost order
        np.multiply(self.sorted_share, self.ordered_cost, out=self.sorted_cost)
        self.sorted_share.cumsum(axis=1, out=self.x_tail)
        self.sorted_cost.cumsum(axis=1, out=self.y_tail)
        most_a, most_p, most_d = self.x_last.tolist()  # the most share each role can cover
        g_min = max(0.0, h.need_input - min(most_p, h.prefill_max), h.need_output - most_d)
        g_max = min(most_a, self.cap)
        if g_min > g_max + TOL:
            return None
        g, rows = self.kinks, self.kink_rows
        rows[0] = self.xs[0]
        np.subtract(self.needs, self.xs[1:], out=rows[1:])
        g[-3:] = (h.need_input, h.need_output, g_min)
        _clip(g, g_min, max(g_min, g_max), out=g)
        (xa, ya), (xp, yp), (xd, yd) = self.curves
        total = _interp(g, xa, ya, None, None)
        total += _interp(h.need_input - g, xp, yp, 0.0, None)
        total += _interp(h.need_output - g, xd, yd, 0.0, None)
        best = int(total.argmin())
        self.g_star = float(g[best])
        return float(total[best] + np.dot(h.usd_per_system, lo))

    def systems(self, lo: np.ndarray) -> np.ndarray:
        """The last :meth:`bound`'s systems per pool (each slice's share used is kept for :meth:`flow`)."""
        h, g_star, used = self.h, self.g_star, self.used
        wanted = np.array([[g_star], [h.need_input - g_star], [h.need_output - g_star]])
        np.subtract(wanted, self.xs[:, :-1], out=used)
        _clip(used, 0.0, self.sorted_share, out=used)
        self.used_by_slice[self.perm] = used
        return lo + self.used_by_slice[self.n:2 * self.n] * self.systems_per_share

    def flow(self) -> np.ndarray:
        """The last :meth:`systems`' flow per pool, from its slices' shares used."""
        n, used = self.n, self.used_by_slice
        return (used[:n] + used[n:2 * n]) * self.per_share

    def relax(self, lo: np.ndarray, hi: np.ndarray) -> _Relaxed | None:
        """The relaxation with ``lo <= x <= hi`` continuous: (cost, systems x, flow f), or None when infeasible."""
        cost = self.bound(lo, hi)
        if cost is None:
            return None
        return cost, self.systems(lo), self.flow()


def _ratio(top: np.ndarray | float, bottom: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``top / bottom`` where ``where`` holds, else 0 (the division made only there)."""
    return np.divide(top, bottom, out=np.zeros(len(bottom)), where=where)


_Relaxed = tuple[float, np.ndarray, np.ndarray]
"""(cost [USD], systems per pool, flow per pool)"""
_Open = tuple[float, int, np.ndarray, np.ndarray]
"""(bound [USD], order, lo, hi) of a node not yet solved: its parent's bound"""


def relax(h: Hour, lo: np.ndarray, hi: np.ndarray) -> _Relaxed | None:
    """The relaxation with ``lo <= x <= hi`` continuous: (cost, systems x, flow f), or None when infeasible.

    >>> one = Hour(np.array([0]), np.array([0.25]), np.array([1.0]), np.array([10.0]), np.array([0.0]),
    ...            np.array([0.0]), np.array([np.inf]))
    >>> relax(one, one.lo, one.hi)[:2]  # 4 systems' worth of flow, 10 USD each
    (40.0, array([4.]))
    """
    return _Roles(h).relax(lo, hi)


def _dominated(roles: _Roles) -> np.ndarray:
    """Pools some optimal answer leaves at their fewest systems: those that cover nothing, and those another pool
    of the same role, without a limit, beats: it covers at least as much per system for no more rent and no more
    energy per share (each system of the first can be swapped for one of the second); of two alike the later one.
    """
    h, share, energy, rent = roles.h, roles.per_system, roles.unit, roles.h.usd_per_system
    free = (h.lo < h.hi) & (share > 0)
    out = (h.lo < h.hi) & (share <= 0)
    # every pair at once: row q, column o, "o does all q does for no more" (a free pool without a limit, q's role)
    better = ((free & np.isinf(h.hi))[None, :] & (h.role[None, :] == h.role[:, None])
              & (share[None, :] >= share[:, None]) & (rent[None, :] <= rent[:, None])
              & (energy[None, :] <= energy[:, None]))
    np.fill_diagonal(better, False)
    same = better & (share[None, :] == share[:, None]) & (rent[None, :] == rent[:, None]) & (
        energy[None, :] == energy[:, None])
    earlier = np.tri(len(share), k=-1, dtype=bool)  # column o before row q
    beaten = _any(better & ~same, axis=1) | _any(same & earlier, axis=1)
    out[free] = beaten[free]
    return out


def _beats(cost: float, best: _Relaxed | None) -> bool:
    """``cost`` is below the best answer so far by more than the tolerance (any cost beats no answer)."""
    return best is None or cost < _to_beat(best)


def _to_beat(best: _Relaxed | None) -> float:
    """What a cost must be under to beat ``best`` (:func:`_beats`): the best cost less the tolerance, or infinity
    when there is no answer yet.
    """
    return math.inf if best is None else best[0] - TOL * max(1.0, abs(best[0]))


def _descend(roles: _Roles, x: np.ndarray) -> _Relaxed | None:
    """A whole-system answer from the relaxation's: rounded up, then one system fewer in any pool while the hour
    is still covered and it costs less (dearest systems first).
    """
    h = roles.h
    best = roles.relax(*(2 * [np.minimum(np.ceil(x - TOL * np.maximum(1.0, x)), h.hi)]))
    improved = best is not None
    while improved and best is not None:
        improved = False
        for j in np.argsort(-h.usd_per_system):
            if best[1][j] <= h.lo[j]:
                continue
            fewer = best[1].copy()
            fewer[j] -= 1.0
            trial = roles.relax(fewer, fewer)
            if trial is not None and _beats(trial[0], best):
                best, improved = trial, True
    return best


class Bounds:
    """One hour's covering problem prepared once for many searches that differ only in the pools' bounds (``lo``,
    ``hi``): a caller that moves a few pools' bounds (a count held all day, tried at several values) skips building
    the slices and buffers each time. The same figures as :func:`relax` and :func:`cheapest` on the hour with those
    bounds, bit for bit.
    """

    def __init__(self, h: Hour) -> None:
        self._roles = _Roles(h)

    def relaxed(self, lo: np.ndarray, hi: np.ndarray) -> float | None:
        """The relaxation's cost with ``lo <= x <= hi`` continuous (as :func:`relax`'s), None when infeasible."""
        return self._roles.bound(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))

    def cheapest(self, lo: np.ndarray, hi: np.ndarray, max_nodes: int = 5000) -> Cover | None:
        """:func:`cheapest` of the hour with the bounds ``lo`` and ``hi``."""
        roles = self._roles
        roles.h = replace(roles.h, lo=lo, hi=hi)  # only _dominated and _descend read the hour's own bounds
        return cheapest(roles.h, max_nodes, roles)


def cheapest(h: Hour, max_nodes: int = 5000, roles: _Roles | None = None) -> Cover | None:
    """The cheapest whole systems (proven to ``1e-9`` of the cost), or None if the hour cannot be covered or the
    search needs more than ``max_nodes`` nodes. Best first: the open node of lowest bound is split on its
    fractional pool of highest rent (the most fractional among equals); the search ends when no open node could
    beat the best answer found.

    >>> # an aggregated pool at 10 USD per system covering 40 % of the hour each, and a decode pool at 3 USD
    >>> # covering 30 % of the output each: 3 aggregated systems (120 %) cost 30; 2 aggregated (80 % of both)
    >>> # leave 20 % of the input uncovered, so 3 it is: 30 USD
    >>> h = Hour(np.array([0, 2]), np.array([0.4, 0.3]), np.array([1.0, 1.0]), np.array([10.0, 3.0]),
    ...          np.zeros(2), np.zeros(2), np.array([np.inf, np.inf]))
    >>> c = cheapest(h)
    >>> c.systems.tolist(), round(c.cost, 9)
    ([3.0, 0.0], 30.0)
    """
    roles = roles or _Roles(h)  # made once by :class:`Bounds` for an hour searched at many bounds
    lo, hi = h.lo.astype(float), np.where(_dominated(roles), h.lo, h.hi).astype(float)
    root = roles.relax(lo, hi)
    if root is None:
        return None
    best = _descend(roles, root[1])
    beat = _to_beat(best)
    rent_first = h.usd_per_system + 0.5  # the branching's key, less each count's distance from a half
    heap: list[_Open] = [(root[0], 0, lo, hi)]
    nodes = 0
    while heap:
        bound, _, lo, hi = heapq.heappop(heap)  # a node's bound is its parent's until it is solved
        if not bound < beat:
            break  # best first: no open node can do better
        cost = roles.bound(lo, hi)
        if cost is None or not cost < beat:
            continue
        nodes += 1
        if nodes > max_nodes:
            return None
        x = roles.systems(lo)  # only a node that could beat the best needs its systems
        whole = x.round()
        frac = np.abs(x - whole) > TOL * np.maximum(1.0, x)
        if not _any(frac):
            found = roles.relax(whole, whole)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
                beat = _to_beat(best)
            continue
        j = int(np.where(frac, rent_first - np.abs(x - np.floor(x) - 0.5), -1.0).argmax())  # dearest
        down_hi, up_lo = hi.copy(), lo.copy()
        down_hi[j], up_lo[j] = math.floor(x[j]), math.ceil(x[j])
        heapq.heappush(heap, (cost, 2 * nodes, lo, down_hi))
        heapq.heappush(heap, (cost, 2 * nodes + 1, up_lo, hi))
    if best is None:
        return None
    return Cover(best[1], best[2], best[0], nodes)
