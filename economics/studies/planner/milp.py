"""One call of HiGHS (``scipy.optimize.milp``) with the planner's limits: gap, time and node limits, and the
solution it returns.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, milp

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


MEMO_SIZE = 64
"""HiGHS's answers kept by :func:`run_milp` (the most recently used; each a few kB)."""
_MEMO: OrderedDict[bytes, OptimizeResult] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def run_milp(m: PlanModel, integer: list[int] | None = None, lb: list[float] | None = None,
          ub: list[float] | None = None, gap: float = MIP_REL_GAP, nodes: int | None = None) -> Any:
    """The result of :func:`scipy.optimize.milp` (HiGHS) on ``m``.

    ``integer``, ``lb`` and ``ub`` replace the model's integrality and bounds when given; the search stops within
    the relative ``gap``, after the time limit, or after ``nodes`` branch-and-bound nodes (then with presolve set
    to ``PRESOLVE_LIMITED``).

    HiGHS is deterministic: the same model with the same options gives the same answer, so the answer is remembered
    per model (:data:`MEMO_SIZE` of them; the plan a page solves is solved again when a setting's cost is worked
    out, for the plan's odds and for the plan by the hour). A solve the time limit stopped depends on the machine's
    speed and is not remembered. Every call returns its own copy.
    """
    c, bounds = np.asarray(m.c, dtype=float), Bounds(np.asarray(lb or m.lb, dtype=float),
                                                       np.asarray(ub or m.ub, dtype=float))
    integrality, a = np.asarray(integer or m.integer), m.matrix()
    options: dict[str, Any] = {"mip_rel_gap": gap, "time_limit": TIME_LIMIT_S}
    if nodes is not None:  # a node limit, not a time limit: the same answer on a busy machine as on an idle one
        options["node_limit"] = nodes
        options["presolve"] = PRESOLVE_LIMITED
    key = _memo_key(c, integrality, bounds, a, np.asarray(m.b, dtype=float), options)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
        if found is not None:
            _MEMO.move_to_end(key)
    if found is None:
        cons = [LinearConstraint(a, -np.inf, np.asarray(m.b))] if m.rows else []
        found = milp(c, constraints=cons, integrality=integrality, bounds=bounds, options=options)
        if "Time limit" not in str(found.message):
            with _MEMO_LOCK:
                _MEMO[key] = found
                while len(_MEMO) > MEMO_SIZE:
                    _MEMO.popitem(last=False)
    return _copy(found)


def _memo_key(c: np.ndarray, integrality: np.ndarray, bounds: Bounds, a: Any, b: np.ndarray,
              options: dict[str, Any]) -> bytes:
    """A digest of everything HiGHS is given: objective, integrality, bounds, the rows (CSR arrays) and options."""
    h = hashlib.sha256(repr(sorted(options.items())).encode())
    for part in (c, np.asarray(integrality, dtype=float), bounds.lb, bounds.ub, b, a.data, a.indices, a.indptr,
                 np.asarray(a.shape, dtype=np.int64)):
        arr = np.ascontiguousarray(part)
        h.update(str(arr.dtype).encode() + str(arr.shape).encode())
        h.update(arr.tobytes())
    return h.digest()


def _copy(res: OptimizeResult) -> OptimizeResult:
    """A result of its own: its arrays copied, so a caller that changes them changes no remembered answer."""
    return OptimizeResult({k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in res.items()})


def clear_milp_memo() -> None:
    """Forget HiGHS's remembered answers (the next :func:`run_milp` of each model runs HiGHS again)."""
    with _MEMO_LOCK:
        _MEMO.clear()
