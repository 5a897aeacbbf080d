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
from dataclasses import dataclass

import numpy as np
from numpy._core.multiarray import interp as _interp
from numpy._core.umath import clip as _clip  # type: ignore[attr-defined]  # numpy's stubs omit the ufunc

# np.clip and np.interp run these two after three and two Python layers of checks; a search solves thousands of
# tiny relaxations, where those layers were most of the time. The same functions on the same arguments: the same bits.

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
    slice, then its optional one) and their cost per share of demand.
    """

    def __init__(self, h: Hour) -> None:
        self.h = h
        self.cap = max(h.need_input, h.need_output, 0.0)  # more than the whole demand is never needed
        self.per_system = h.flow_per_system * h.share_per_flow  # share one system covers [-]
        self.per_slice = np.tile(self.per_system, 2)  # the same for a pool's paid and optional slice
        useful = self.per_system > 0
        with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 lands in branches np.where drops
            self.unit = np.where(h.share_per_flow > 0, h.usd_per_flow / h.share_per_flow, 0.0)  # energy per share
            extra = np.where(useful, h.usd_per_system / self.per_system, 0.0)
            self.per_share = np.where(h.share_per_flow > 0, 1.0 / h.share_per_flow, 0.0)  # flow per share
            self.systems_per_share = np.where(useful, 1.0 / self.per_system, 0.0)
            # more systems of a pool than cover the whole demand are never needed
            self.most = np.where(useful, np.ceil(self.cap / self.per_system) + 1.0, 0.0)
        cost = np.concatenate([self.unit, self.unit + extra])
        role = np.concatenate([h.role, h.role])
        self.order = [np.flatnonzero(role == r)[np.argsort(cost[role == r], kind="stable")]
                      for r in (AGGREGATED, PREFILL, DECODE)]
        self.cost = [cost[o] for o in self.order]
        self.n = len(h.role)
        # each role's cost curve (cumulative share, cumulative cost) in buffers a relaxation fills again: their first
        # points stay 0 and the rest are written whole each time, so no call sees another's values
        self.curves = [(np.zeros(len(o) + 1), np.zeros(len(o) + 1)) for o in self.order]
        self.tails = [(x[1:], y[1:]) for x, y in self.curves]

    def shares(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Each slice's share of demand [-]: the paid ones (``lo`` systems), then the optional ones."""
        return np.minimum(np.concatenate([lo, np.minimum(hi - lo, self.most)]) * self.per_slice, self.cap)

    def relax(self, lo: np.ndarray, hi: np.ndarray) -> _Relaxed | None:
        """The relaxation with ``lo <= x <= hi`` continuous: (cost, systems x, flow f), or None when infeasible."""
        h, share = self.h, self.shares(lo, hi)
        slices = [share[order] for order in self.order]  # each role's slices in cost order
        for s, cost, (x_tail, y_tail) in zip(slices, self.cost, self.tails, strict=True):
            s.cumsum(out=x_tail)
            (s * cost).cumsum(out=y_tail)
        (xa, ya), (xp, yp), (xd, yd) = self.curves
        g_min = max(0.0, h.need_input - min(xp[-1], h.prefill_max), h.need_output - xd[-1])
        g_max = min(xa[-1], self.cap)
        if g_min > g_max + TOL:
            return None
        kinks = np.concatenate([xa, h.need_input - xp, h.need_output - xd, [h.need_input, h.need_output, g_min]])
        g = _clip(kinks, g_min, max(g_min, g_max))
        total = (_interp(g, xa, ya, None, None) + _interp(h.need_input - g, xp, yp, 0.0, None)
                 + _interp(h.need_output - g, xd, yd, 0.0, None))
        best = int(total.argmin())
        g_star = float(g[best])
        used = np.empty(len(share))
        for order, s, (x, _), q in zip(self.order, slices, self.curves,
                                       (g_star, h.need_input - g_star, h.need_output - g_star), strict=True):
            used[order] = _clip(q - x[:-1], 0.0, s)
        n = self.n
        flow = (used[:n] + used[n:]) * self.per_share
        return float(total[best] + np.dot(h.usd_per_system, lo)), lo + used[n:] * self.systems_per_share, flow


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
    h, share, energy = roles.h, roles.per_system, roles.unit
    free = (h.lo < h.hi) & (share > 0)
    out = (h.lo < h.hi) & (share <= 0)
    for q in np.flatnonzero(free):
        better = (free & np.isinf(h.hi) & (h.role == h.role[q]) & (share >= share[q])
                  & (h.usd_per_system <= h.usd_per_system[q]) & (energy <= energy[q]))
        better[q] = False
        same = better & (share == share[q]) & (h.usd_per_system == h.usd_per_system[q]) & (energy == energy[q])
        out[q] = bool((better & ~same).any() or same[:q].any())
    return out


def _beats(cost: float, best: _Relaxed | None) -> bool:
    """``cost`` is below the best answer so far by more than the tolerance (any cost beats no answer)."""
    return best is None or cost < best[0] - TOL * max(1.0, abs(best[0]))


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


def cheapest(h: Hour, max_nodes: int = 5000) -> Cover | None:
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
    roles = _Roles(h)
    lo, hi = h.lo.astype(float), np.where(_dominated(roles), h.lo, h.hi).astype(float)
    root = roles.relax(lo, hi)
    if root is None:
        return None
    best = _descend(roles, root[1])
    heap: list[_Open] = [(root[0], 0, lo, hi)]
    nodes = 0
    while heap:
        bound, _, lo, hi = heapq.heappop(heap)  # a node's bound is its parent's until it is solved
        if not _beats(bound, best):
            break  # best first: no open node can do better
        node = roles.relax(lo, hi)
        if node is None or not _beats(node[0], best):
            continue
        nodes += 1
        if nodes > max_nodes:
            return None
        x = node[1]
        frac = np.abs(x - np.round(x)) > TOL * np.maximum(1.0, x)
        if not frac.any():
            whole = roles.relax(np.round(x), np.round(x))
            if whole is not None and (best is None or whole[0] < best[0]):
                best = whole
            continue
        j = int(np.argmax(np.where(frac, h.usd_per_system + 0.5 - np.abs(x - np.floor(x) - 0.5), -1.0)))  # dearest
        down_hi, up_lo = hi.copy(), lo.copy()
        down_hi[j], up_lo[j] = math.floor(x[j]), math.ceil(x[j])
        heapq.heappush(heap, (node[0], 2 * nodes, lo, down_hi))
        heapq.heappush(heap, (node[0], 2 * nodes + 1, up_lo, hi))
    if best is None:
        return None
    return Cover(best[1], best[2], best[0], nodes)
