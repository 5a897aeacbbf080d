"""One call of HiGHS (``scipy.optimize.milp``) with the planner's limits: gap, time and node limits, and the
solution it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from economics.studies.planner.model import PlanModel

MIP_REL_GAP = 1e-3
"""HiGHS stops when the plan is proven within 0.1 % of the best possible (the gap is reported)."""
TIME_LIMIT_S = 30.0
"""No solve runs longer (a plan stopped by it says "within X % of the lower bound after 30 s")."""
EXACT_MAX_INTEGERS = 60
EXACT_NODE_LIMIT = 500
"""Up to 60 integer decisions the whole MILP is tried at once; if it is not proven within 500 branch-and-bound
nodes the two-stage answer is computed too and the cheaper kept. Larger models go straight to two stages."""
COVER_NODE_LIMIT = 5000
"""An hour's exact search (:mod:`economics.domain.covering`) gives up after this many nodes; HiGHS then solves it."""
HOURLY_GAP = 1e-3
HOURLY_NODE_LIMIT = 50
PRESOLVE_LIMITED = False
"""Stage 2 (rented systems hour by hour): the exact covering search of :mod:`economics.domain.covering`; an hour it
does not take, the hour's LP rounded up, then a MILP that stops within 0.1 % of what that hour decides (rent and
energy) or after 50 nodes; the better is kept. The gap reported is against stage 1's bound either way."""


@dataclass
class Solution:
    """A solve's outcome, as :func:`scipy.optimize.milp` reports it: the columns' values ``x`` (None without a
    solution), the objective ``fun``, the proven lower ``bound`` (NaN if unknown), ``status`` (0: solved) and
    ``message``.
    """

    x: np.ndarray | None
    fun: float
    bound: float
    status: int
    message: str


def run_milp(m: PlanModel, integer: list[int] | None = None, lb: list[float] | None = None,
          ub: list[float] | None = None, gap: float = MIP_REL_GAP, nodes: int | None = None) -> Any:
    """The result of :func:`scipy.optimize.milp` (HiGHS) on ``m``.

    ``integer``, ``lb`` and ``ub`` replace the model's integrality and bounds when given; the search stops within
    the relative ``gap``, after the time limit, or after ``nodes`` branch-and-bound nodes (then with presolve set
    to ``PRESOLVE_LIMITED``).
    """
    cons = [LinearConstraint(m.matrix(), -np.inf, np.asarray(m.b))] if m.rows else []
    options: dict[str, Any] = {"mip_rel_gap": gap, "time_limit": TIME_LIMIT_S}
    if nodes is not None:  # a node limit, not a time limit: the same answer on a busy machine as on an idle one
        options["node_limit"] = nodes
        options["presolve"] = PRESOLVE_LIMITED
    return milp(np.asarray(m.c), constraints=cons, integrality=np.asarray(integer or m.integer),
                bounds=Bounds(np.asarray(lb or m.lb), np.asarray(ub or m.ub)), options=options)
