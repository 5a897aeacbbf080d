"""One call of HiGHS (what ``scipy.optimize.milp`` returns, HiGHS run here as it runs it) with the planner's limits:
gap, time and node limits, and the solution it returns; and a way to stop the solves of a piece of work that is no
longer wanted (:func:`cancellable`: a stopped solve raises :class:`Cancelled`, it never gives a plan).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import math
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import scipy
from scipy.sparse import csc_matrix, csr_matrix, vstack

from economics.lazy import LazyModule
from economics.studies.planner.model import PlanModel

TYPE_CHECKING = False  # typing.TYPE_CHECKING: scipy.optimize as mypy and lint-imports see it
if TYPE_CHECKING:
    import scipy.optimize as optimize
else:  # only a model without rows reads it (SciPy's milp makes its empty matrix)
    optimize = LazyModule("scipy.optimize")

HIGHS_MODULE = "scipy.optimize._highspy._core"
"""SciPy's HiGHS binding: the HiGHS that :func:`scipy.optimize.milp` and :func:`scipy.optimize.linprog` run."""


def _highs_binding() -> ModuleType:
    """SciPy's HiGHS binding (:data:`HIGHS_MODULE`), loaded from its file without running ``scipy.optimize``.

    Importing a submodule runs its packages first, and ``scipy.optimize``'s package imports scipy.linalg,
    scipy.fft, scipy.special and SciPy's array-API layer (which reads numpy.f2py and numpy.testing): 0.3-0.45 s of
    CPU in a fresh process (issue #43, docs/speed.md, ``fresh5``), none of it run by the planner. The binding is
    one compiled module: it is loaded from SciPy's own file under its own name and registered in ``sys.modules``
    first, so that ``scipy.optimize``, when something imports it later, takes this same module (a pybind11 module
    initialised twice in one process would register its types twice). Where SciPy's files are laid out otherwise,
    the ordinary import.
    """
    if HIGHS_MODULE in sys.modules:
        return sys.modules[HIGHS_MODULE]
    folder = Path(scipy.__file__).parent / "optimize" / "_highspy"
    found = importlib.machinery.PathFinder.find_spec("_core", [str(folder)])
    spec = None if found is None else importlib.util.spec_from_file_location(HIGHS_MODULE, found.origin)
    if spec is None or spec.loader is None:
        return importlib.import_module(HIGHS_MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[HIGHS_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[HIGHS_MODULE]
        raise
    return module


highs: Any = _highs_binding()


@dataclass(frozen=True)
class Result:
    """A solve's answer: the fields of :class:`scipy.optimize.OptimizeResult` that :func:`scipy.optimize.milp`
    returns, without importing ``scipy.optimize`` (:func:`_highs_binding`).

    ``x``: the solution (None: none found); ``fun``: its objective (None or NaN without one); ``status`` and
    ``message``: as :func:`scipy.optimize.milp`'s (0: optimal, 1: a limit stopped it, 2: infeasible, ...);
    ``success``: ``status == 0``; a MILP's branch-and-bound nodes, proven lower bound and relative gap (None for an
    LP or a run HiGHS refused).

    >>> r = Result(x=None, fun=None, status=2, success=False, message="The problem is infeasible. ",
    ...            mip_node_count=0, mip_dual_bound=None, mip_gap=None)
    >>> r.success, r.x is None
    (False, True)
    """

    x: np.ndarray | None
    fun: float | None
    status: int
    success: bool
    message: str
    mip_node_count: int | None
    mip_dual_bound: float | None
    mip_gap: float | None

    @property
    def cost(self) -> float:
        """``fun`` as a number: NaN where there is no solution (``fun`` None)."""
        return math.nan if self.fun is None else float(self.fun)

    @property
    def bound(self) -> float:
        """``mip_dual_bound`` as a number: NaN where there is none (an LP, or a run HiGHS refused)."""
        return math.nan if self.mip_dual_bound is None else float(self.mip_dual_bound)

MIP_REL_GAP = 1e-3
"""HiGHS stops when the plan is proven within 0.1 % of the best possible (the gap is reported)."""
TIME_LIMIT_S = 30.0
"""No solve runs longer (a plan stopped by it says "within X % of the lower bound after 30 s")."""
EXACT_MAX_INTEGERS = 60
EXACT_NODE_LIMIT = 500
"""Up to 60 integer decisions the whole MILP is tried at once (exactly, without HiGHS, when its hours separate:
:mod:`~economics.studies.planner.separable`); if it is not proven within 500 branch-and-bound
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


class Cancelled(Exception):  # noqa: N818 -- what happened to the solve, as the planner's words say it
    """A solve stopped because the work it was part of is no longer wanted (:func:`cancellable`): no plan, and
    nothing remembered.
    """


_STOP: ContextVar[threading.Event | None] = ContextVar("planner_stop", default=None)
"""The event that stops the solves of the running context (None: they run to their own end)."""


@contextmanager
def cancellable(stop: threading.Event) -> Iterator[None]:
    """Within it, this context's solves stop soon after ``stop`` is set, and raise :class:`Cancelled`.

    HiGHS is asked to stop through its MIP interrupt callback (checked between its nodes and cuts: it stopped 10-20
    ms after the event on the Plan page's whole model, ``docs/speed.md``), and every HiGHS run and remembered solve
    checks the event before it starts. A run the event stopped is never taken as a result (it raises, and is not
    remembered), and a run that ended as the event was set raises too: what it was for is no longer wanted. An LP
    (no integer column) is not interrupted while it runs: HiGHS calls the simplex interrupt callback at every
    iteration, each a call into Python under the GIL, and the planner's LPs take milliseconds. Threads started inside
    take the context with them only when started with it (:func:`contextvars.copy_context`).

    Parameters
    ----------
    stop : threading.Event
        Set by whoever no longer wants the work (another thread).
    """
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def check_cancelled() -> None:
    """Raise :class:`Cancelled` when the running context's work is no longer wanted (:func:`cancellable`)."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise Cancelled("the work this solve was part of is no longer wanted")


def _interrupt(_kind: int, _message: str, _out: Any, into: Any, stop: threading.Event) -> None:
    """HiGHS's MIP interrupt callback: stop once ``stop`` is set."""
    if stop.is_set():
        into.user_interrupt = True


_INTERRUPTED = (highs.HighsModelStatus.kInterrupt, highs.HighsModelStatus.kHighsInterrupt)


def _run(h: Any, mip: bool) -> Any:
    """``h.run()``: as it is outside :func:`cancellable`; inside, a MILP (``mip``) stops soon after the event, and a
    run stopped by it, or ended as it was set, raises :class:`Cancelled` rather than give its answer.
    """
    stop = _STOP.get()
    if stop is None:
        return h.run()
    check_cancelled()
    if mip:
        h.setCallback(_interrupt, stop)
        h.startCallback(highs.cb.HighsCallbackType.kCallbackMipInterrupt)
    ran = h.run()
    if stop.is_set() or h.getModelStatus() in _INTERRUPTED:
        raise Cancelled("a HiGHS run stopped: the work it was part of is no longer wanted")
    return ran


MEMO_SIZE = 64
"""HiGHS's answers kept by :func:`run_milp` (the most recently used; each a few kB)."""
_MEMO: OrderedDict[bytes, Result] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def run_milp(m: PlanModel, integer: list[int] | None = None, lb: list[float] | None = None,
          ub: list[float] | None = None, gap: float = MIP_REL_GAP, nodes: int | None = None) -> Result:
    """The result of :func:`scipy.optimize.milp` (HiGHS) on ``m``, HiGHS run here on the same arrays and options
    (:func:`_milp`: the same answer, field by field, without SciPy's layers around it).

    ``integer``, ``lb`` and ``ub`` replace the model's integrality and bounds when given; the search stops within
    the relative ``gap``, after the time limit, or after ``nodes`` branch-and-bound nodes (then with presolve set
    to ``PRESOLVE_LIMITED``).

    HiGHS is deterministic: the same model with the same options gives the same answer, so the answer is remembered
    per model (:data:`MEMO_SIZE` of them; the plan a page solves is solved again when a setting's cost is worked
    out, for the plan's odds and for the plan by the hour). A solve the time limit stopped depends on the machine's
    speed and is not remembered. Every call returns its own copy.
    """
    c = np.asarray(m.c, dtype=float)
    bounds = (np.asarray(lb or m.lb, dtype=float), np.asarray(ub or m.ub, dtype=float))
    integrality, a = np.asarray(integer or m.integer), m.matrix()
    options: dict[str, Any] = {"mip_rel_gap": gap, "time_limit": TIME_LIMIT_S}
    if nodes is not None:  # a node limit, not a time limit: the same answer on a busy machine as on an idle one
        options["node_limit"] = nodes
        options["presolve"] = PRESOLVE_LIMITED
    key = _memo_key(c, integrality, bounds, a, np.asarray(m.b, dtype=float), options)
    check_cancelled()

    def solve() -> Result:
        if not m.rows:  # scipy's milp makes the empty matrix
            return _empty_milp(c, integrality, bounds, options)
        return _milp(csc_matrix(a), c, bounds, np.asarray(m.b, dtype=float), integrality, options)
    return _remembered(key, solve)


def _empty_milp(c: np.ndarray, integrality: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                options: dict[str, Any]) -> Result:
    """:func:`scipy.optimize.milp` on a model without rows (SciPy makes its empty matrix), as a :class:`Result`."""
    res = optimize.milp(c, integrality=integrality, bounds=optimize.Bounds(*bounds), options=options)
    return Result(**{f.name: res[f.name] for f in fields(Result)})  # scipy gives every one


_HIGHS_OPTIONS = {"node_limit": "mip_max_nodes"}
""":func:`scipy.optimize.milp`'s names of the options HiGHS knows by another name."""
_SCIPY_STATUS = {highs.HighsModelStatus.kOptimal: (0, "Optimization terminated successfully. "),
                 highs.HighsModelStatus.kTimeLimit: (1, "Time limit reached. "),
                 highs.HighsModelStatus.kIterationLimit: (1, "Iteration limit reached. "),
                 highs.HighsModelStatus.kInfeasible: (2, "The problem is infeasible. "),
                 highs.HighsModelStatus.kUnbounded: (3, "The problem is unbounded. "),
                 highs.HighsModelStatus.kUnboundedOrInfeasible: (4, "The problem is unbounded or infeasible. "),
                 highs.HighsModelStatus.kModelError: (2, "")}
"""HiGHS's model status -> :func:`scipy.optimize.milp`'s status and the start of its message (others: 4, "")."""
_STOPPED = (highs.HighsModelStatus.kTimeLimit, highs.HighsModelStatus.kIterationLimit,
            highs.HighsModelStatus.kSolutionLimit)


def _milp(a: csc_matrix, c: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], b: np.ndarray, integrality: np.ndarray,
          options: dict[str, Any]) -> Result:
    """What :func:`scipy.optimize.milp` returns for ``min c x, a x <= b`` within ``bounds`` (x, fun, status, message,
    success and, for a MILP, mip_node_count, mip_dual_bound, mip_gap; the same HiGHS run on the same arrays and
    options), without its layers around HiGHS: argument checks, an options object checked option by option, and the
    LP's basis and duals read into arrays it then drops (about 2 ms a call, 4-5 calls an edit of the Plan page).
    """
    a.sort_indices()
    lb, ub = (np.broadcast_to(v, c.shape).astype(np.float64) for v in bounds)
    h = _highs_of(a, c, lb, ub, b, integrality)
    for option, value in options.items():
        h.setOptionValue(_HIGHS_OPTIONS.get(option, option), ("on" if value else "off") if option == "presolve"
                         else value)
    mip = bool(np.sum(integrality) > 0)
    ran = _run(h, mip)
    status, info = h.getModelStatus(), h.getInfo()
    code, said = _SCIPY_STATUS.get(status, (4, ""))
    none = Result(status=code, success=code == 0, x=None, fun=None, mip_node_count=None, mip_dual_bound=None,
                  mip_gap=None, message=f"{said}(HiGHS Status {int(status)}: {h.modelStatusToString(status)})")
    if ran == highs.HighsStatus.kError:  # as scipy reports a run HiGHS refused
        return none
    if mip:  # a MILP stopped by a limit keeps the plan it has, if any
        failed = status not in (highs.HighsModelStatus.kOptimal, *_STOPPED) or (
            status in _STOPPED and info.objective_function_value == highs.kHighsInf)
    else:
        failed = status != highs.HighsModelStatus.kOptimal
    if failed:
        return replace(none, message=f"{said}(HiGHS Status {int(status)}: model_status is "
                                     f"{h.modelStatusToString(status)}; primal_status is "
                                     f"{h.solutionStatusToString(info.primal_solution_status)})")
    solved = replace(none, x=np.array(h.getSolution().col_value), fun=info.objective_function_value)
    if mip:
        return replace(solved, mip_node_count=info.mip_node_count, mip_dual_bound=info.mip_dual_bound,
                       mip_gap=info.mip_gap)
    return solved


def _remembered(key: bytes, solve: Callable[[], Result]) -> Result:
    """A copy of the answer remembered under ``key``, else of ``solve()``'s, remembered unless the time limit
    stopped it (it then depends on the machine's speed); the :data:`MEMO_SIZE` most recently used are kept.
    """
    with _MEMO_LOCK:
        found = _MEMO.get(key)
        if found is not None:
            _MEMO.move_to_end(key)
    if found is None:
        found = solve()
        if "Time limit" not in str(found.message):
            with _MEMO_LOCK:
                _MEMO[key] = found
                while len(_MEMO) > MEMO_SIZE:
                    _MEMO.popitem(last=False)
    return _copy(found)


PROVEN = "proven on the whole MILP"
"""The message of a plan HiGHS found on the whole model from the plan of two stages, and the end of the message of a
plan whose bound it proved there (:func:`economics.studies.planner.solve.prove_stages`)."""
PROOF_GAP = 1e-2
PROOF_NODE_LIMIT = 500
PROOF_MAX_INTEGERS = 400
"""Models with more integer columns are not proven (stage 1's bound is reported): the full catalog's 24 distinct
hours (579) take 4.4-5.8 s CPU to prove within 1 % (its dominated pools closed; 17 nodes, most of it strong
branching) against about 2 s for its plan, the rent tiers' 11 s and stopped at 500 nodes 5.1 % from the bound.
The Plan page's edits have 260, its worked example 302 (1.4-1.8 s to prove; 1.1-1.2 s with the demand cuts of
:mod:`~economics.studies.planner.rounding`; 1.7 s with no pool closed)."""
PROOF_OPTIONS: dict[str, Any] = {
    "mip_heuristic_effort": 0.0, "mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False, "mip_heuristic_run_feasibility_jump": False,
    "mip_allow_restart": False, "threads": 1}
"""The proof of a plan (:func:`prove`): the whole MILP from the plan, stopped when it is proven within 1 % of the
bound (or after 500 nodes). HiGHS's heuristics look for a first plan, which the start already is, and its restart
solves the root twice: on the Plan page's 8 edits these took 1.1-1.8 s of a proof's 1.2-1.9 s CPU, and without
them a proof takes 0.04-0.8 s, each within 1 % (docs/speed.md). One thread: the same search on a busy machine."""


def prove(m: PlanModel, start: np.ndarray, gap: float = PROOF_GAP, nodes: int = PROOF_NODE_LIMIT,
          cuts: Cuts | None = None) -> Result:
    """HiGHS on the whole of ``m`` with ``start`` (a plan of ``m``) as its first incumbent: a result as
    :func:`run_milp`'s (``x``, ``fun``, ``mip_dual_bound``, ``status``, ``message``), with a plan no dearer than
    ``start`` when HiGHS accepts it, and a proven lower bound of ``m`` either way (``x`` None when it found no
    plan). Stops within the relative ``gap``, after ``nodes`` nodes or :data:`TIME_LIMIT_S`; remembered as
    :func:`run_milp`'s answers are (the start is part of the key). ``cuts``: valid inequalities of ``m`` (no plan
    of ``m`` breaks one) given to HiGHS as rows after ``m``'s own.
    """
    a = csc_matrix(_with_cuts(m.matrix(), len(m.c), cuts))
    a.sort_indices()
    c, lb, ub = (np.asarray(v, dtype=float) for v in (m.c, m.lb, m.ub))
    b, start = _rhs(m, cuts), np.asarray(start, dtype=float)
    options: dict[str, Any] = {**PROOF_OPTIONS, "mip_rel_gap": gap, "mip_max_nodes": nodes,
                               "time_limit": TIME_LIMIT_S}
    key = _memo_key(c, np.asarray(m.integer), (lb, ub), a.tocsr(), b, {**options, "start": start.tobytes()})
    return _remembered(key, lambda: _highs_run(a, c, lb, ub, b, np.asarray(m.integer), options, start))


@dataclass(frozen=True)
class Cuts:
    """Rows ``a x <= b`` added to a model (valid inequalities: every plan of the model meets them)."""

    a: csr_matrix
    b: np.ndarray


def _with_cuts(a: csr_matrix, cols: int, cuts: Cuts | None) -> csr_matrix:
    """The rows ``a`` (of ``cols`` columns; none: an empty matrix) with the rows of ``cuts`` after them."""
    a = a if a.shape[0] else csr_matrix((0, cols))
    return csr_matrix(vstack([a, cuts.a])) if cuts is not None and cuts.a.shape[0] else a


def _rhs(m: PlanModel, cuts: Cuts | None) -> np.ndarray:
    b = np.asarray(m.b, dtype=float)
    return np.concatenate([b, cuts.b]) if cuts is not None and cuts.a.shape[0] else b


def relaxation(m: PlanModel, cuts: Cuts | None = None) -> tuple[np.ndarray, float] | None:
    """The LP relaxation of ``m`` (every column continuous) with the rows of ``cuts``: its solution and
    objective, or None when HiGHS finds no optimum (infeasible, unbounded).
    """
    a = csc_matrix(_with_cuts(m.matrix(), len(m.c), cuts))
    a.sort_indices()
    c, lb, ub = (np.asarray(v, dtype=float) for v in (m.c, m.lb, m.ub))
    h = _highs_of(a, c, lb, ub, _rhs(m, cuts), None)
    h.setOptionValue("threads", 1)
    _run(h, False)
    if h.getModelStatus() != highs.HighsModelStatus.kOptimal:
        return None
    return np.array(h.getSolution().col_value, dtype=float), float(h.getInfo().objective_function_value)


LP_TOLERANCE = 1e-9
"""How far :func:`scipy.optimize.linprog` lets a solution stray outside its bounds and rows before it calls the
solve failed (its ``tol``), and :func:`row_duals` with it."""


def row_duals(m: PlanModel, ub: np.ndarray) -> np.ndarray | None:
    """The duals of the rows of ``m``'s LP relaxation with the upper bounds ``ub``: what
    :func:`scipy.optimize.linprog` (``method="highs"``) gives as ``ineqlin.marginals``, HiGHS run here on the same
    arrays and options (presolve on, the dual simplex), without importing ``scipy.optimize``
    (:func:`_highs_binding`). None where linprog's status is not 0: no optimum, or a solution outside its bounds or
    rows by more than :data:`LP_TOLERANCE`.

    A dual is the change of the objective per unit more of a row's limit [objective's unit per row's unit].
    References: https://docs.scipy.org/doc/scipy/reference/optimize.linprog-highs.html (``marginals``).

    Boxes of 10 units at 3 USD and up to 4 loose units at 0.5 USD covering 23 units (the row ``-10 box - loose <=
    -23``): relaxed, 2.3 boxes; a unit more is 0.1 box more, 0.3 USD, so the row's dual is -0.3 USD a unit; with no
    box allowed, 4 loose units cannot cover 23, and there is none.

    >>> from economics.studies.planner.model import Row
    >>> m = PlanModel()
    >>> box, loose = m.var(3.0, True), m.var(0.5, False, ub=4.0)
    >>> _ = m.row({box: -10.0, loose: -1.0}, -23.0, Row.DEMAND_OUTPUT)
    >>> [round(float(d), 9) for d in row_duals(m, np.array([np.inf, 4.0]))], row_duals(m, np.array([0.0, 4.0]))
    ([-0.3], None)
    """
    a = csc_matrix(_with_cuts(m.matrix(), len(m.c), None))
    a.sort_indices()
    c, lb, b = (np.asarray(v, dtype=float) for v in (m.c, m.lb, m.b))
    h = _highs_of(a, c, lb, np.asarray(ub, dtype=float), b, None)
    h.setOptionValue("presolve", "on")
    h.setOptionValue("simplex_strategy", int(highs.simplex_constants.SimplexStrategy.kSimplexStrategyDual))
    _run(h, False)
    if h.getModelStatus() != highs.HighsModelStatus.kOptimal:
        return None
    solution = h.getSolution()
    x, slack = np.array(solution.col_value), b - np.asarray(solution.row_value)
    strays = (np.isnan(x).any() or np.isnan(slack).any() or math.isnan(h.getInfo().objective_function_value)
              or (x < lb - LP_TOLERANCE).any() or (x > ub + LP_TOLERANCE).any() or (slack < -LP_TOLERANCE).any())
    return None if strays else np.array(solution.row_dual)


def _highs_of(a: csc_matrix, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, b: np.ndarray,
              integrality: np.ndarray | None) -> Any:
    """A quiet HiGHS holding ``min c x, a x <= b, lb <= x <= ub`` (``integrality`` None: every column continuous)."""
    h = highs._Highs()
    h.setOptionValue("output_flag", False)
    lp = highs.HighsLp()
    lp.num_col_, lp.num_row_ = a.shape[1], a.shape[0]
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = c, lb, ub
    lp.row_lower_, lp.row_upper_ = np.full(a.shape[0], -highs.kHighsInf), b
    lp.a_matrix_.format_ = highs.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    if integrality is not None:
        whole, real = highs.HighsVarType.kInteger, highs.HighsVarType.kContinuous  # read once, not per column
        lp.integrality_ = [whole if v else real for v in integrality.tolist()]
    h.passModel(lp)
    return h


def _highs_run(a: csc_matrix, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, b: np.ndarray,
               integrality: np.ndarray, options: dict[str, Any], start: np.ndarray) -> Result:
    """One HiGHS run of ``min c x, a x <= b, lb <= x <= ub`` from ``start``, as a :class:`Result`."""
    h = _highs_of(a, c, lb, ub, b, integrality)
    for option, value in options.items():
        h.setOptionValue(option, value)
    sol = highs.HighsSolution()
    sol.col_value = [float(v) for v in start]
    sol.value_valid = True
    h.setSolution(sol)
    _run(h, bool(np.sum(integrality) > 0))
    info, status = h.getInfo(), h.getModelStatus()
    x = np.array(h.getSolution().col_value, dtype=float) if info.primal_solution_status == 2 else None
    bound, code = float(info.mip_dual_bound), 0 if status == highs.HighsModelStatus.kOptimal else 1
    return Result(x=x, fun=float(info.objective_function_value) if x is not None else np.nan,
                  mip_dual_bound=bound if abs(bound) < highs.kHighsInf else np.nan, status=code, success=code == 0,
                  message=h.modelStatusToString(status), mip_node_count=int(info.mip_node_count),
                  mip_gap=float(info.mip_gap))


def _memo_key(c: np.ndarray, integrality: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], a: Any, b: np.ndarray,
              options: dict[str, Any]) -> bytes:
    """A digest of everything HiGHS is given: objective, integrality, bounds, the rows (CSR arrays) and options."""
    h = hashlib.sha256(repr(sorted(options.items())).encode())
    for part in (c, np.asarray(integrality, dtype=float), *bounds, b, a.data, a.indices, a.indptr,
                 np.asarray(a.shape, dtype=np.int64)):
        arr = np.ascontiguousarray(part)
        h.update(str(arr.dtype).encode() + str(arr.shape).encode())
        h.update(arr.tobytes())
    return h.digest()


def _copy(res: Result) -> Result:
    """A result of its own: its solution (its one array) copied, so a caller that changes it changes no remembered
    answer.
    """
    return res if res.x is None else replace(res, x=np.array(res.x))


_SOLVED: OrderedDict[bytes, Solution] = OrderedDict()


def solved(m: PlanModel, how: str, solve: Callable[[], Solution]) -> Solution:
    """``solve()``, a solve of ``m`` (``how``: what else it reads, e.g. the columns a second stage decides),
    remembered per model as :func:`run_milp`'s answers are: the same model solved the same way gives the same plan
    (stage 2's exact hours included), so a model solved again is answered from memory. What each operations setting
    costs solves the plan by the hour again (the plan with a rental block solves it first), and the plans of a few
    pools the plan solved. A solve the time limit stopped is not remembered. Each call gets its own copy.
    """
    check_cancelled()
    a = m.matrix()
    key = _memo_key(np.asarray(m.c, dtype=float), np.asarray(m.integer), (np.asarray(m.lb, dtype=float),
                    np.asarray(m.ub, dtype=float)), a, np.asarray(m.b, dtype=float), {"how": how})
    with _MEMO_LOCK:
        found = _SOLVED.get(key)
        if found is not None:
            _SOLVED.move_to_end(key)
    if found is None:
        found = solve()
        if "Time limit" not in found.message:
            with _MEMO_LOCK:
                _SOLVED[key] = found
                while len(_SOLVED) > MEMO_SIZE:
                    _SOLVED.popitem(last=False)
    return replace(found, x=None if found.x is None else np.array(found.x, dtype=float))


def clear_milp_memo() -> None:
    """Forget HiGHS's remembered answers and the plans of :func:`solved` (each model is solved again)."""
    with _MEMO_LOCK:
        _MEMO.clear()
        _SOLVED.clear()
