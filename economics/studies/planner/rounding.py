r"""Valid inequalities for the proof: each hour's demand rounded up to whole systems (mixed-integer rounding).

The LP relaxation of the whole MILP serves an hour's demand with fractions of systems, e.g. 2.48 rented GB200 NVL72
racks where a plan rents 2 or 3. For each demand row of an hour, the capacity rows substituted into it give a
knapsack over the pools' whole counts; its mixed-integer rounding (MIR) cuts off such fractions. The proof
(:func:`~economics.studies.planner.solve.prove_stages`) gives HiGHS these rows up front, found by a few rounds of
LP solve and separation (:func:`demand_cuts`); they hold for every plan of the model, so its optimum is unchanged.

**The knapsack** (:func:`knapsacks`). A demand row of hour ``h`` reads, in the form ``>=`` and scaled to the hour's
need, :math:`\sum_p a_p f_p + \sum_k c_k y_k \ge 1` with flows :math:`f_p \ge 0` (:math:`a_p > 0`) and any other
column :math:`y_k \ge 0` (an elastic model's unserved demand). Every flow has rows :math:`f_p - \kappa n_p \le 0`
(capacity; TTFT), :math:`n_p \ge 0` the pool's count in the hour (its count held all day, or the hour's rented
count); with :math:`\kappa_p` the least of their :math:`\kappa`, :math:`a_p f_p \le a_p \kappa_p n_p`, and the
terms :math:`c_k y_k` with :math:`c_k < 0` are at most 0, so every plan meets

.. math:: \sum_p g_p n_p + \sum_{c_k > 0} c_k y_k \ge 1, \qquad g_p = a_p \kappa_p \ge 0.

(A count that is not integer in the model counts with the continuous terms; several flows on one count add up.)

**The rounding** (:func:`mir`). For a divisor :math:`\delta > 0` let :math:`\beta = 1/\delta` with fractional part
:math:`f_0 > 0`, :math:`\alpha_p = g_p / \delta` with fractional part :math:`\phi_p`. Then every plan meets

.. math:: \sum_p \Bigl(\lfloor \alpha_p \rfloor + \frac{\min(\phi_p, f_0)}{f_0}\Bigr) n_p
          + \sum_{c_k > 0} \frac{c_k}{\delta f_0} y_k \ge \lceil \beta \rceil.

Proof: divide the knapsack by :math:`\delta`. Let :math:`z = \sum_{\phi_p \le f_0} \lfloor\alpha_p\rfloor n_p +
\sum_{\phi_p > f_0} \lceil\alpha_p\rceil n_p` (an integer: the counts are) and :math:`r = \sum_{\phi_p \le f_0}
\phi_p n_p + \sum_{c_k > 0} c_k y_k / \delta \ge 0`; as :math:`\lceil\alpha\rceil \ge \alpha`, :math:`z + r \ge
\beta`. If :math:`z \ge \lceil\beta\rceil`, then :math:`z + r / f_0 \ge \lceil\beta\rceil` as :math:`r \ge 0`. Else
:math:`z \le \lceil\beta\rceil - 1 = \lfloor\beta\rfloor`, so :math:`r \ge \beta - z = f_0 + (\lceil\beta\rceil - 1
- z) \ge f_0 (\lceil\beta\rceil - z)` (:math:`f_0 \le 1` times a whole number :math:`\ge 0`), i.e. :math:`z + r /
f_0 \ge \lceil\beta\rceil` again. The coefficient of :math:`n_p` in :math:`z + r / f_0` is :math:`\lfloor\alpha_p
\rfloor + \phi_p / f_0` when :math:`\phi_p \le f_0` and :math:`\lceil\alpha_p\rceil = \lfloor\alpha_p\rfloor + 1`
otherwise: :math:`\lfloor\alpha_p\rfloor + \min(\phi_p, f_0)/f_0` in both cases. (Nemhauser and Wolsey's MIR.)

The divisors tried for a row are the shares :math:`g_p` of the counts the LP uses and their halves, thirds and
quarters; a row's most violated cut (relative to its right-hand side) is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from economics.studies.planner.milp import Cuts, relaxation
from economics.studies.planner.model import PlanModel, Row

CUT_ROUNDS = 10
"""LP solves and separations at most (the page's models stop after 2-4, when no row yields a violated cut)."""
MIN_VIOLATION = 1e-4
"""A cut is kept when the LP point breaks it by this much of its right-hand side."""
MIN_GAIN = 1e-5
"""The rounds stop when the LP bound rose by less than this (relative) in a round."""
DIVISORS = (1, 2, 3, 4)
"""Each share the LP uses divided by these is tried as a divisor."""
_TINY = 1e-9


@dataclass(frozen=True)
class Knapsack:
    """A demand row as every plan meets it: ``sum(whole[j] n_j) + sum(other[k] y_k) >= 1`` (:func:`knapsacks`)."""

    whole: dict[int, float]   # integer count column -> the share of the hour's need one system serves
    other: dict[int, float]   # any other column with a positive coefficient (continuous)


@dataclass(frozen=True)
class Cut:
    """``sum(coefs[j] x_j) >= rhs``."""

    coefs: dict[int, float]
    rhs: float


def knapsacks(m: PlanModel) -> list[Knapsack]:
    """Each demand row of ``m`` with its flows' capacity substituted (the module's first argument): valid for every
    plan of ``m``. Flows without a capacity row, and counts that are not integer, stay as continuous terms.
    """
    per_system = _per_system(m)
    out = []
    for i, kind in enumerate(m.row_kind):
        if kind not in (Row.DEMAND_INPUT, Row.DEMAND_OUTPUT) or m.b[i] >= 0:
            continue
        scale = -m.b[i]  # the row reads sum(v x) <= b with b < 0: sum(-v / -b x) >= 1
        whole: dict[int, float] = {}
        other: dict[int, float] = {}
        for j, v in m.rows[i].items():
            a = -v / scale
            if a <= 0:
                continue  # a term that only lowers the left-hand side: dropped (its column is >= 0)
            if j in per_system and m.integer[per_system[j][0]]:
                n, kappa = per_system[j]
                whole[n] = whole.get(n, 0.0) + a * kappa
            elif j in per_system:
                n, kappa = per_system[j]
                other[n] = other.get(n, 0.0) + a * kappa
            else:
                other[j] = other.get(j, 0.0) + a
        out.append(Knapsack(whole, other))
    return out


def _per_system(m: PlanModel) -> dict[int, tuple[int, float]]:
    """Flow column -> (its count column, the least flow a system of it may carry) from the capacity and TTFT rows
    ``f - kappa n <= 0``; only flows and counts with lower bound 0 (the substitution needs ``f, n >= 0``).
    """
    out: dict[int, tuple[int, float]] = {}
    for i, kind in enumerate(m.row_kind):
        row = m.rows[i]
        if kind not in (Row.CAPACITY, Row.TTFT) or len(row) != 2 or m.b[i] != 0.0:
            continue
        (f, vf), (n, vn) = sorted(row.items(), key=lambda kv: -kv[1])
        if vf <= 0 or vn >= 0 or m.lb[f] != 0.0 or m.lb[n] != 0.0:
            continue
        kappa = -vn / vf
        if f not in out or (out[f][0] == n and kappa < out[f][1]):
            out[f] = (n, kappa)
    return out


def mir(k: Knapsack, delta: float) -> Cut | None:
    """The mixed-integer rounding of knapsack ``k`` divided by ``delta`` (the module's second argument), or None
    when ``1 / delta`` is (within 1e-6) whole: the rounding then cuts nothing off.
    """
    beta = 1.0 / delta
    f0 = beta - math.floor(beta)
    if f0 < 1e-6 or f0 > 1.0 - 1e-6:
        return None
    coefs: dict[int, float] = {}
    for j, g in k.whole.items():
        alpha = g / delta
        low = math.floor(alpha + _TINY)  # a share a hair under a whole number is that number
        coefs[j] = low + min(max(alpha - low, 0.0), f0) / f0
    for j, c in k.other.items():
        coefs[j] = coefs.get(j, 0.0) + c / (delta * f0)
    return Cut(coefs, float(math.ceil(beta)))


def separate(k: Knapsack, x: np.ndarray) -> Cut | None:
    """The cut of knapsack ``k`` the LP point ``x`` breaks most (relative to its right-hand side), of the divisors
    the shares of the counts ``x`` uses give (:data:`DIVISORS`); None when none breaks by :data:`MIN_VIOLATION`.
    """
    shares = {g for j, g in k.whole.items() if x[j] > _TINY and g > _TINY}
    best: tuple[float, Cut] | None = None
    for delta in sorted({g / d for g in shares for d in DIVISORS}):
        cut = mir(k, delta)
        if cut is None:
            continue
        short = (cut.rhs - sum(v * x[j] for j, v in cut.coefs.items())) / cut.rhs
        if short > MIN_VIOLATION and (best is None or short > best[0]):
            best = (short, cut)
    return best[1] if best is not None else None


def demand_cuts(m: PlanModel, rounds: int = CUT_ROUNDS) -> Cuts | None:
    """MIR cuts of ``m``'s demand rows (:func:`separate`) against its LP relaxation, the relaxation solved again
    with them, for at most ``rounds`` rounds or until a round finds none or lifts the bound by less than
    :data:`MIN_GAIN`. None when there are none (or the relaxation has no optimum).
    """
    sacks = knapsacks(m)
    cuts: list[Cut] = []
    last = -math.inf
    for _ in range(rounds):
        lp = relaxation(m, as_rows(cuts, len(m.c)))
        if lp is None or lp[1] < last + MIN_GAIN * abs(lp[1]):
            break
        last = lp[1]
        found = [cut for cut in (separate(k, lp[0]) for k in sacks) if cut is not None]
        if not found:
            break
        cuts += found
    return as_rows(cuts, len(m.c))


def as_rows(cuts: list[Cut], cols: int) -> Cuts | None:
    """``cuts`` as rows ``-coefs x <= -rhs`` of a model of ``cols`` columns (None: no cuts)."""
    if not cuts:
        return None
    rows = np.repeat(np.arange(len(cuts)), [len(cut.coefs) for cut in cuts])
    cols_ = np.fromiter((j for cut in cuts for j in cut.coefs), dtype=np.int64, count=len(rows))
    vals = np.fromiter((-v for cut in cuts for v in cut.coefs.values()), dtype=float, count=len(rows))
    return Cuts(csr_matrix((vals, (rows, cols_)), shape=(len(cuts), cols)),
                np.array([-cut.rhs for cut in cuts], dtype=float))
