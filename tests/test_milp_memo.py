"""HiGHS's answers remembered per model (:func:`economics.studies.planner.milp.run_milp`, issue #43): the same model
with the same options is solved once and every call gets its own copy of the answer; a model that differs in one
number is solved; a solve the time limit stopped is not kept; the memo is bounded; and the Plan page's plan and what
its operations settings cost are the same, bit for bit, whether HiGHS's answers were remembered or not.

HiGHS itself is counted by wrapping the module's one HiGHS run per model (``milp._milp``, and SciPy's ``milp`` for a
model without rows; the wrapped functions still run). ``_milp`` gives what SciPy's ``milp`` gives, field by field,
and ``milp.row_duals`` the duals SciPy's ``linprog`` gives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

import economics
from economics.studies import planner
from economics.studies.planner import hourly as hourly_module
from economics.studies.planner import milp as milp_module
from economics.studies.planner import report as report_module
from economics.studies.planner import solve as solve_module
from economics.studies.planner.model import PlanModel, Row
from ui import links


def boxes(demand: float) -> PlanModel:
    """Cover ``demand`` units with whole boxes of 10 units at 3 USD each and loose units at 0.5 USD, at most 4 loose:
    min 3 x + 0.5 y subject to 10 x + y >= demand, x whole, 0 <= y <= 4."""
    m = PlanModel()
    box, loose = m.var(3.0, True), m.var(0.5, False, ub=4.0)
    m.row({box: -10.0, loose: -1.0}, -demand, Row.DEMAND_OUTPUT)
    return m


@pytest.fixture
def highs_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The memo emptied, and every call of SciPy's ``milp`` from the planner recorded."""
    calls: list[Any] = []

    def counted(run: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return run(*args, **kwargs)
        return call

    planner.clear_milp_memo()
    monkeypatch.setattr(milp_module, "_empty_milp", counted(milp_module._empty_milp))
    monkeypatch.setattr(milp_module, "_milp", counted(milp_module._milp))
    yield calls
    planner.clear_milp_memo()


def test_the_same_model_is_solved_once_and_each_call_gets_a_copy(highs_calls: list[Any]) -> None:
    # 23 units: 2 boxes (20 units, 6 USD) and 3 loose (1.5 USD) = 7.5 USD; 3 boxes would be 9 USD
    first = milp_module.run_milp(boxes(23.0))
    assert first.fun == 7.5 and first.x.tolist() == [2.0, 3.0]
    first.x[:] = -1.0  # a caller changing its answer changes no remembered one
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.fun = 0.0  # a typed record, its fields set once by the solve
    again = milp_module.run_milp(boxes(23.0))
    assert len(highs_calls) == 1
    assert again.fun == 7.5 and again.x.tolist() == [2.0, 3.0] and again.status == 0


def test_a_model_that_differs_in_one_number_or_option_is_solved(highs_calls: list[Any]) -> None:
    assert milp_module.run_milp(boxes(23.0)).fun == 7.5
    # 27 units: 2 boxes would need 7 loose (more than 4), so 3 boxes: 9 USD
    assert milp_module.run_milp(boxes(27.0)).fun == 9.0
    # the same model as continuous (an LP): 2.3 boxes = 6.9 USD (a box's unit costs 0.3 USD, a loose one 0.5)
    assert milp_module.run_milp(boxes(23.0), integer=[0, 0]).fun == pytest.approx(6.9, rel=1e-12)
    assert milp_module.run_milp(boxes(23.0), nodes=50).fun == 7.5
    assert len(highs_calls) == 4


def test_a_solve_stopped_by_the_time_limit_is_not_kept(highs_calls: list[Any],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(milp_module, "TIME_LIMIT_S", 0.0)  # HiGHS stops before it starts: "Time limit reached"
    stopped = milp_module.run_milp(boxes(23.0))
    assert stopped.x is None and "Time limit" in stopped.message
    assert milp_module.run_milp(boxes(23.0)).x is None
    assert len(highs_calls) == 2  # asked again, not answered from memory


def test_the_memo_is_bounded_and_forgets_the_least_recently_used(highs_calls: list[Any]) -> None:
    demands = [float(d) for d in range(1, milp_module.MEMO_SIZE + 2)]  # one more model than the memo holds
    for d in demands:
        milp_module.run_milp(boxes(d))
    assert len(milp_module._MEMO) == milp_module.MEMO_SIZE
    milp_module.run_milp(boxes(demands[-1]))  # remembered
    assert len(highs_calls) == len(demands)
    milp_module.run_milp(boxes(demands[0]))  # the first, forgotten: solved again
    assert len(highs_calls) == len(demands) + 1


def scipy_answer(m: PlanModel, integer: list[int] | None = None, nodes: int | None = None) -> Any:
    """SciPy's ``milp`` on ``m`` as :func:`~economics.studies.planner.milp.run_milp` set it up before it ran HiGHS
    itself."""
    options: dict[str, Any] = {"mip_rel_gap": milp_module.MIP_REL_GAP, "time_limit": milp_module.TIME_LIMIT_S}
    if nodes is not None:
        options.update(node_limit=nodes, presolve=milp_module.PRESOLVE_LIMITED)
    return milp(np.asarray(m.c), integrality=np.asarray(integer or m.integer),
                            bounds=Bounds(np.asarray(m.lb), np.asarray(m.ub)), options=options,
                            constraints=[LinearConstraint(m.matrix(), -np.inf, np.asarray(m.b))])


def same_answer(ours: milp_module.Result, scipys: Any) -> None:
    assert {f.name for f in dataclasses.fields(ours)} == set(scipys)
    for key, value in scipys.items():
        mine = getattr(ours, key)
        if isinstance(value, np.ndarray):
            assert np.array_equal(mine, value), key
        else:
            assert mine == value and type(mine) is type(value), key


def infeasible() -> PlanModel:
    """At least 5 boxes and at most 4 (``-x <= -5``, ``x <= 4``)."""
    m = PlanModel()
    box = m.var(1.0, True)
    m.row({box: -1.0}, -5.0, Row.DEMAND_OUTPUT)
    m.row({box: 1.0}, 4.0, Row.DEMAND_OUTPUT)
    return m


@pytest.mark.parametrize(("model", "integer", "nodes"), [
    (boxes(23.0), None, None), (boxes(23.0), [0, 0], None), (boxes(27.0), None, 50), (infeasible(), None, None),
    (infeasible(), [0], None)])
def test_highs_run_here_answers_as_scipys_milp(model: PlanModel, integer: list[int] | None,
                                               nodes: int | None) -> None:
    """The planner runs HiGHS itself (without SciPy's checks and the LP's duals it drops): the same x, objective,
    status, message and MILP figures as SciPy's ``milp``, solved or not, MILP or LP."""
    planner.clear_milp_memo()
    same_answer(milp_module.run_milp(model, integer=integer, nodes=nodes), scipy_answer(model, integer, nodes))


def test_highs_run_here_answers_as_scipys_milp_when_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(milp_module, "TIME_LIMIT_S", 0.0)
    planner.clear_milp_memo()
    same_answer(milp_module.run_milp(boxes(23.0)), scipy_answer(boxes(23.0)))


def test_highs_run_here_answers_as_scipys_milp_on_the_page_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model a Plan page edit solves (stage 1, the plan by the hour, the pools on their own): bit for bit."""
    seen: list[tuple[PlanModel, Any, Any]] = []
    run = milp_module.run_milp

    def recorded(m: PlanModel, integer: list[int] | None = None, lb: Any = None, ub: Any = None,
                 gap: float = milp_module.MIP_REL_GAP, nodes: int | None = None) -> Any:
        out = run(m, integer, lb, ub, gap, nodes)
        if lb is None and ub is None and gap == milp_module.MIP_REL_GAP:
            seen.append((m, (integer, nodes), out))
        return out

    for module in (solve_module, hourly_module):
        monkeypatch.setattr(module, "run_milp", recorded)
    planner.clear_milp_memo()
    page = links.default_settings()
    s = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK,
                              "demand_output_tokens_per_day": 5.1e9})
    planner.plan_stages(s, links.plan_settings(page), None, list(page[links.PLAN_PREFIX + "accelerators"]))
    assert len(seen) >= 3
    for m, (integer, nodes), out in seen:
        same_answer(out, scipy_answer(m, integer, nodes))


def scipy_duals(m: PlanModel, ub: np.ndarray) -> np.ndarray | None:
    """SciPy's ``linprog`` (HiGHS) on ``m``'s LP relaxation with upper bounds ``ub``: the rows' marginals, None
    unless its status is 0 (what the limits' shadow prices read before the planner ran HiGHS itself)."""
    res = linprog(np.asarray(m.c), A_ub=m.matrix(), b_ub=np.asarray(m.b), bounds=list(zip(m.lb, ub, strict=True)),
                  method="highs")
    return res.ineqlin.marginals if res.status == 0 else None


@pytest.mark.parametrize(("model", "ub", "duals"), [
    # boxes(23) relaxed: 2.3 boxes at 3 USD; one more unit of demand is 0.1 box more: the row's dual -0.3 USD/unit
    (boxes(23.0), [np.inf, 4.0], [-0.3]),
    # at most 5 boxes against 53: 5 boxes and 3 loose units; one more unit is one more loose unit: -0.5 USD/unit
    (boxes(53.0), [5.0, 4.0], [-0.5]),
    # no box allowed: 4 loose units cannot cover 23, no optimum; and at least 5 and at most 4 boxes
    (boxes(23.0), [0.0, 4.0], None), (infeasible(), [np.inf], None)])
def test_row_duals_are_scipy_s_linprog_marginals(model: PlanModel, ub: list[float], duals: list[float] | None) -> None:
    ours, scipys = milp_module.row_duals(model, np.asarray(ub)), scipy_duals(model, np.asarray(ub))
    assert (ours is None) == (scipys is None) == (duals is None)
    if duals is not None:
        assert np.array_equal(ours, scipys) and ours.tolist() == pytest.approx(duals, rel=1e-12)


def test_row_duals_are_scipy_s_linprog_marginals_on_the_page_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every LP whose duals a Plan page edit's plan reports as the limits' shadow prices: bit for bit."""
    seen: list[tuple[PlanModel, np.ndarray, Any]] = []
    run = milp_module.row_duals

    def recorded(m: PlanModel, ub: np.ndarray) -> Any:
        out = run(m, ub)
        seen.append((m, np.array(ub), out))
        return out

    monkeypatch.setattr(report_module, "row_duals", recorded)
    planner.clear_milp_memo()
    page = links.default_settings()
    s = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK,
                              "demand_output_tokens_per_day": 5.1e9})
    planner.plan_stages(s, links.plan_settings(page), None, list(page[links.PLAN_PREFIX + "accelerators"])).result()
    assert seen and all(out is not None for _, _, out in seen)
    for m, ub, out in seen:
        assert np.array_equal(out, scipy_duals(m, ub))


PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""The Plan page's scenario in bench/app_latency.py and bench/plan.py (the default scenario with these fields)."""


@pytest.mark.parametrize("demand", [5.1e9, 2.02e10])
def test_the_page_plan_and_its_settings_costs_are_the_same_from_memory(demand: float) -> None:
    """The page solves the plan, then what each operations setting costs (the plan by the hour inside the plan is
    the plan without its rental block there): from a warm memo as from a cold one, every figure equal."""
    s = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK,
                              "demand_output_tokens_per_day": demand})
    page = links.default_settings()
    settings, ids = links.plan_settings(page), list(page[links.PLAN_PREFIX + "accelerators"])

    def page_run(cold: bool) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
        if cold:
            planner.clear_milp_memo()
        result = planner.plan(s, settings, None, ids, costed=False)
        if cold:
            planner.clear_milp_memo()
        costs = planner.costs_of_settings(result.summary, s, settings, None, ids)
        return result.to_dict(), result.plan, costs

    cold_dict, cold_plan, cold_costs = page_run(cold=True)
    warm_dict, warm_plan, warm_costs = page_run(cold=False)  # every HiGHS answer of the plan from memory
    assert warm_dict == cold_dict
    pd.testing.assert_frame_equal(warm_plan, cold_plan, check_exact=True)
    pd.testing.assert_frame_equal(warm_costs, cold_costs, check_exact=True)
    assert np.isfinite(cold_costs["without_usd_per_day"].astype(float)).all()
