"""Dominated pools closed for the proof (#43): a pool another pool beats on every count (no dearer a system in any
hour, no dearer a token's energy, at least the tokens per system, the same role, way of holding and tier) is closed
in the model HiGHS proves the plan on (``build.dominated_pools``, ``solve.without_dominated``). The closed model
must have the same optimum as the whole one: HiGHS at a zero gap on both is the check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, milp

import economics
from economics.studies import planner
from economics.studies.planner import run
from economics.studies.planner.build import build_model, dominated_pools, rented_cols
from economics.studies.planner.candidates import Candidate
from economics.studies.planner.model import PlanModel
from economics.studies.planner.pools import Problem
from economics.studies.planner.solve import closed_bounds, without_dominated
from tests.test_planner_proof import PAGE_ACCELERATORS, PAGE_SETTINGS, page_scenario
from ui import links


def highs(m: PlanModel, integer: list[int] | None = None, ub: list[float] | None = None,
          cutoff: float | None = None, nodes: int | None = None) -> OptimizeResult:
    """HiGHS (``scipy.optimize.milp``, none of the planner's options) on ``m`` (with ``integer`` and ``ub`` in place of
    its own when given): at a zero gap, or with a ``cutoff`` the first plan costing at most ``cutoff`` (a cost row
    and a gap of 1: any such plan ends the search); within ``nodes`` branch-and-bound nodes when given.
    """
    c = np.asarray(m.c)
    rows = [LinearConstraint(m.matrix(), -np.inf, np.asarray(m.b))]
    if cutoff is not None:
        rows.append(LinearConstraint(c[None, :], -np.inf, cutoff))
    options: dict[str, float] = {"mip_rel_gap": 0.0 if cutoff is None else 1.0}
    if nodes is not None:
        options["node_limit"] = nodes
    return milp(c, constraints=rows, integrality=np.asarray(m.integer if integer is None else integer),
                bounds=Bounds(np.asarray(m.lb), np.asarray(m.ub if ub is None else ub)), options=options)


def bounds_of(m: PlanModel, closed: PlanModel) -> list[float]:
    """The upper bounds of ``closed``, asserted to be ``m`` with only its upper bounds changed."""
    assert replace(closed, ub=list(m.ub)) == m
    return list(closed.ub)


def a_plan(m: PlanModel, x: np.ndarray, integer: list[int], ub: list[float]) -> bool:
    """``x`` is a plan of ``m`` with ``integer`` and ``ub``: whole where a column is integer, within its bounds and
    each row to 1e-6 of their scale (the bound, or the sum of the row's terms' sizes). HiGHS holds both to 1e-7 on its
    scaled model, which can be 7e-7 unscaled."""
    whole = np.asarray(integer) == 1
    a = m.matrix()
    scale = np.maximum.reduce([np.ones(len(m.b)), np.abs(m.b), abs(a) @ np.abs(x)])
    lb, ub_ = np.asarray(m.lb), np.asarray(ub)
    return bool(np.all(x >= lb - 1e-6 * np.maximum(1.0, np.abs(lb)))
                and np.all(x <= ub_ + 1e-6 * np.maximum(1.0, np.abs(np.where(np.isinf(ub_), 0.0, ub_))))
                and np.all(a @ x - np.asarray(m.b) <= 1e-6 * scale)
                and np.allclose(x[whole], np.round(x[whole]), atol=1e-6))


def same_optimum(m: PlanModel, closed_ub: list[float], integer: list[int] | None = None,
                 ub: list[float] | None = None, nodes: int | None = None) -> None:
    """Assert that ``m`` with its upper bounds ``closed_ub`` (some pools closed) has ``m``'s optimum (within ``ub``,
    ``integer`` when given), to 1e-9 relative, or that both have no plan.

    Closing only lowers upper bounds, so the closed model's optimum is no lower than the whole's. HiGHS bounds the
    whole's optimum from below at a zero gap (its dual bound ``L``), then finds any plan of the closed model costing at
    most ``L (1 + 1e-9)``, checked here to be a plan: the closed optimum lies between the two, equal to 1e-9. (Proving
    the closed model's own bound instead takes HiGHS 150,000 nodes and 50 s on some of :data:`SMALL_PLANS` where the
    whole takes 15,000.)

    With ``nodes``, HiGHS stops the whole's proof there: when its bound ``L`` is then too low for a plan of the
    closed model to reach, nothing is shown either way and the example is rejected (:func:`hypothesis.reject`:
    hypothesis draws another in its place). Only an example the bound settles counts.
    """
    integer, ub = m.integer if integer is None else integer, m.ub if ub is None else ub
    assert all(u_closed <= u for u_closed, u in zip(closed_ub, ub, strict=True))
    whole = highs(m, integer, ub, nodes=nodes)
    if whole.status == 2:  # no plan: nor has the closed model
        assert highs(m, integer, closed_ub).status == 2
        return
    if whole.get("mip_dual_bound") is None:  # stopped before any bound
        assert nodes is not None
        reject()
    bound = float(whole.mip_dual_bound)
    cutoff = bound + 1e-9 * max(1.0, abs(bound))
    closed = highs(m, integer, closed_ub, cutoff=cutoff, nodes=nodes)
    if closed.status != 0 and whole.status != 0:  # HiGHS stopped at ``nodes`` short of the whole's optimum
        reject()
    assert closed.status == 0 and a_plan(m, closed.x, integer, closed_ub)
    assert float(np.dot(m.c, closed.x)) <= cutoff + 1e-9 * max(1.0, abs(bound))


def staged_of(*args: object) -> planner.Staged:
    staged = planner.plan_stages(*args)  # type: ignore[arg-type]
    assert staged.found is not None and staged.pb is not None
    return staged


def names(staged: planner.Staged, pools: list[int]) -> list[str]:
    assert staged.pb is not None
    return [f"{staged.pb.cands[staged.pb.pools[p].cand].name} / {staged.pb.pools[p].role}" for p in pools]


@pytest.mark.parametrize("demand", [5.1e9, 2.02e10])
def test_the_page_models_closed_of_their_dominated_pools_keep_their_optimum(demand: float) -> None:
    # the Plan page's first two demand edits (bench/plan.py): 26 pools, 14 hour types, 260 integer columns; three
    # rented pools are dominated (an H100 rented by the hour costs more than an MI355X and serves fewer tokens)
    staged = staged_of(page_scenario(demand), PAGE_SETTINGS, None, PAGE_ACCELERATORS)
    found = staged.found
    assert found is not None and staged.pb is not None
    closed = dominated_pools(staged.pb, found.m, found.rho)
    assert names(staged, closed) == ["h100-sxm rent / aggregated", "h200-sxm rent / aggregated",
                                     "h200-sxm rent / prefill"]
    small = without_dominated(staged.pb, found.m, found.rho, np.zeros(len(found.m.c)))
    assert sum(u == 0.0 for u in small.ub) > sum(u == 0.0 for u in found.m.ub)
    same_optimum(found.m, bounds_of(found.m, small))


def test_the_page_example_with_ttft_floors_keeps_its_optimum() -> None:
    # the Plan page's worked example: a 2 s TTFT, so two pools have TTFT floors (the owned H100s 3 systems, the B200s
    # 5); 302 integer columns. Four rented pools are closed, the optimum stays 10,393.98 USD a day
    s = economics.Scenario(**{**economics.default_scenario().model_dump(), **links.PLAN_EXAMPLE, "name": "example"})
    page = {**links.default_settings(), **links.PLAN_EXAMPLE_SETTINGS}
    staged = staged_of(s, links.plan_settings(page), None, list(page[links.PLAN_PREFIX + "accelerators"]))
    found = staged.found
    assert found is not None and staged.pb is not None and found.m.floor_col
    closed = dominated_pools(staged.pb, found.m, found.rho)
    assert names(staged, closed) == ["h100-sxm rent / aggregated", "h100-sxm rent / prefill",
                                     "h100-sxm rent / decode", "h200-sxm rent / prefill"]
    small = without_dominated(staged.pb, found.m, found.rho, np.zeros(len(found.m.c)))
    same_optimum(found.m, bounds_of(found.m, small))


def box(name: str, rent: float, tokens: float) -> Candidate:
    """A rented system of one accelerator serving ``tokens`` output tokens/s, at ``rent`` USD an hour."""
    return Candidate(name, "rent", accelerators_per_system=1, system_power_kw=1.0, rent_usd_per_system_hour=rent,
                     output_tokens_per_s_per_system=tokens, accelerators_per_replica=1, roles=("aggregated",))


def test_a_pool_is_dominated_by_one_no_dearer_and_no_slower() -> None:
    # b costs more than a for the same tokens; d is a again (ties: the later is closed); c is cheaper per system
    # than a but slower, and a is faster but dearer: neither beats the other
    s = economics.Scenario(name="d", input_tokens_per_request=0, output_tokens_per_request=100,
                           demand_output_tokens_per_day=86_400_000, electricity_usd_per_kwh=0)
    cands = [box("a", 2.0, 100.0), box("b", 2.2, 100.0), box("c", 1.0, 60.0), box("d", 2.0, 100.0)]
    settings = planner.PlanSettings(demand_profile="diurnal", max_pools=1, spares=False)
    staged = staged_of(s, settings, cands)
    found = staged.found
    assert found is not None and staged.pb is not None
    assert names(staged, dominated_pools(staged.pb, found.m, found.rho)) == ["b / aggregated", "d / aggregated"]
    # a plan using b keeps b open (HiGHS's start must be a plan of the model it is given)
    start = np.zeros(len(found.m.c))
    start[found.m.count_col[(1, 0)]] = 1.0
    kept = without_dominated(staged.pb, found.m, found.rho, start)
    assert kept.ub[found.m.count_col[(1, 0)]] > 0 and kept.ub[found.m.count_col[(3, 0)]] == 0
    same_optimum(found.m, bounds_of(found.m, kept))


OWNED = dict(accelerators_per_system=1, accelerators_per_replica=1, roles=("aggregated", "prefill", "decode"))


SMALL_PLANS = (st.lists(st.tuples(st.sampled_from(["own", "rent"]), st.sampled_from([1.0, 2.0, 3.0]),
                                  st.sampled_from([40.0, 80.0, 160.0]), st.sampled_from([1.0, 2.0])),
                        min_size=2, max_size=4),
               st.sampled_from([1, 2, None]), st.sampled_from([1.0, 8.0]), st.sampled_from([1, 3]),
               st.sampled_from([40e6, 400e6]))
"""Small catalogs from a coarse grid (kind, price, rate, power: they repeat, so pools often dominate or tie), the
pool limit, the rental block, the smallest pool and the demand."""


SMALL_NODES = 2_000
"""HiGHS's node limit on the proofs over :data:`SMALL_PLANS` (:func:`same_optimum`): most take under 20 nodes, but a
tied catalog with 8-hour rental blocks took 130,000 (six minutes) to close its last 0.01 %."""


@dataclass(frozen=True)
class Built:
    """The model of every pool that the stages of a plan solve (``m``, :func:`build.build_model`) and its TTFT caps
    (``rho``): what these tests read of a :class:`planner.Staged`'s ``found``."""

    m: PlanModel
    rho: dict[int, float]


@dataclass(frozen=True)
class SmallProblem:
    """A draw of :data:`SMALL_PLANS`: its problem ``pb`` and the model of every pool (``found``), read as the tests
    read a :class:`planner.Staged` (``staged.pb``, ``staged.found.m``, ``staged.found.rho``)."""

    pb: Problem
    found: Built


def small_staged(options: list[tuple[str, float, float, float]], max_pools: int | None, rental: float, least: int,
                 demand: float) -> SmallProblem | None:
    """The model the planner's stages solve for one draw of :data:`SMALL_PLANS` (a 1 MW site, a diurnal day), or
    None when it leaves nothing to prove (no operations setting binds, or the pre-check refused the plan).

    Built, not solved (:func:`run.plan_problem`, then :func:`build.build_model` as
    :func:`~economics.studies.planner.solve.solve_built` builds it): the tests read the model alone, and the stages'
    solve of some draws took 4-12 s (the exact search over three counts held all day gave up after
    :data:`~economics.studies.planner.separable.MAX_POINTS` bases before HiGHS solved the model; since branch
    ``sepbound`` it hands such a model over before it starts: docs/speed.md, "Planner speed"). With no TTFT target
    the stages' caps are none, so their model of every pool is this one.
    """
    s = economics.Scenario(name="d", input_tokens_per_request=200, output_tokens_per_request=100,
                           demand_output_tokens_per_day=demand, site_power_mw=1.0)
    cands = [Candidate(f"{kind}{i}", kind, system_power_kw=kw, price_usd_per_system=1e4 * price,
                       rent_usd_per_system_hour=price, output_tokens_per_s_per_system=rate,
                       input_tokens_per_s_per_system=4 * rate, **OWNED)  # type: ignore[arg-type]
             for i, (kind, price, rate, kw) in enumerate(options)]
    plan_settings = planner.PlanSettings(demand_profile="diurnal", max_pools=max_pools, min_rental_hours=rental,
                                         min_pool_systems=least)
    assert plan_settings.ttft_target_s is None  # no caps: the stages' model of every pool is build_model(pb, {})
    problem = run.plan_problem(s, plan_settings, cands)
    if problem.pb is None:
        return None
    m = build_model(problem.pb, {})[0]
    if m.rules is None:
        return None
    return SmallProblem(problem.pb, Built(m, {}))


@settings(max_examples=15, deadline=None)
@given(*SMALL_PLANS)
def test_closing_dominated_pools_keeps_the_optimum_of_any_small_plan(
        options: list[tuple[str, float, float, float]], max_pools: int | None, rental: float, least: int,
        demand: float) -> None:
    # small catalogs from a coarse grid (prices, rates and power repeat, so pools often dominate or tie), under the
    # operations settings: the pool limit, the rental block, the smallest pool; HiGHS at a zero gap on the model of
    # every pool with and without the dominated pools gives the same optimum (or both none: a catalog that cannot
    # serve the demand within the site's 1 MW)
    staged = small_staged(options, max_pools, rental, least, demand)
    if staged is None:
        return  # no plan to prove
    assert staged.found is not None and staged.pb is not None
    m = staged.found.m
    small = without_dominated(staged.pb, m, staged.found.rho, np.zeros(len(m.c)))
    same_optimum(m, bounds_of(m, small), nodes=SMALL_NODES)


def same_stage_one(staged: planner.Staged | SmallProblem, nodes: int | None = None) -> int:
    """Stage 1 of the staged plan's model of every pool with and without its dominated pools closed (as
    ``solve.solve_built`` runs it on a model too large to prove): the same optimum, or both none. Returns how many
    pools were closed.
    """
    found, pb = staged.found, staged.pb
    assert found is not None and pb is not None
    closed = set(dominated_pools(pb, found.m, found.rho))
    rented = rented_cols(found.m, pb)
    relaxed = [0 if j in rented else v for j, v in enumerate(found.m.integer)]  # stage 1: rented counts continuous
    same_optimum(found.m, closed_bounds(found.m, closed), integer=relaxed, nodes=nodes)
    return len(closed)


def test_stage_one_of_the_full_catalog_keeps_its_optimum_with_its_dominated_pools_closed() -> None:
    # bench/plan.py's full catalog over 24 distinct hours (48 pools, 579 integer columns): 10 pools dominated; stage 1
    # over the other 38 is what the planner runs (2.3 x faster), and must have the optimum of stage 1 over all 48
    s = economics.Scenario(name="bench", model="llama-3.1-70b", precision="fp8",
                           target_output_tokens_per_s_per_user=30, demand_output_tokens_per_day=2e10,
                           accelerator="h100-sxm", existing_accelerators=64, site_power_mw=2.0,
                           allow_liquid_retrofit=True, kv_link_gb_per_s=400)
    profile = planner.demand_profile("diurnal", 2.0) + np.linspace(0.0, 0.05, 24)
    staged = staged_of(s, planner.PlanSettings(demand_profile=" ".join(f"{v:.4f}" for v in profile)))
    assert same_stage_one(staged) == 10


@settings(max_examples=15, deadline=None)
@given(*SMALL_PLANS)
def test_stage_one_keeps_its_optimum_with_the_dominated_pools_closed_on_any_small_plan(
        options: list[tuple[str, float, float, float]], max_pools: int | None, rental: float, least: int,
        demand: float) -> None:
    # the small catalogs of the test above: stage 1 (rented counts continuous) with and without the dominated pools
    staged = small_staged(options, max_pools, rental, least, demand)
    if staged is not None:  # else no stage 1 with the operations settings
        same_stage_one(staged, SMALL_NODES)
