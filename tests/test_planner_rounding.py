"""The proof's cuts (``economics.studies.planner.rounding``, #43): each hour's demand rounded up to whole systems
(mixed-integer rounding of the demand row with the capacity rows substituted). A cut must hold for every plan: the
rounding is checked against every whole point of small knapsacks, and the cuts of small catalogs' models against
the plan HiGHS finds at a zero gap (when it is the optimum, the model with the cuts has the same optimum: the cuts
only add rows, and an optimal plan of the model without them meets them).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

import economics
from economics.studies import planner
from economics.studies.planner import rounding
from economics.studies.planner.milp import Cuts, relaxation
from economics.studies.planner.model import PlanModel
from tests.test_planner_dominance import SMALL_PLANS, small_staged
from ui import links


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(0.05, 1.0), min_size=1, max_size=3), st.floats(0.05, 2.0), st.integers(0, 2),
       st.sampled_from([1, 2, 3, 4]))
def test_the_rounding_holds_at_every_whole_point_of_a_small_knapsack(shares: list[float], other: float, pick: int,
                                                                     divide: int) -> None:
    # sum(g n) + c y >= 1 with n whole and y >= 0: every whole n up to the point where it alone covers the row (and
    # the least y that meets the row) meets the cut of a divisor the planner would try (a share, halved, ...)
    sack = rounding.Knapsack(dict(enumerate(shares)), {len(shares): other})
    cut = rounding.mir(sack, shares[pick % len(shares)] / divide)
    if cut is None:
        return  # 1 / delta whole: no cut
    for n in itertools.product(*(range(math.ceil(1.0 / g) + 2) for g in shares)):
        covered = sum(g * k for g, k in zip(shares, n, strict=True))
        point = {**dict(enumerate(map(float, n))), len(shares): max(0.0, 1.0 - covered) / other}
        lhs = sum(v * point[j] for j, v in cut.coefs.items())
        assert lhs >= cut.rhs - 1e-9 * max(1.0, cut.rhs)


def test_the_rounding_of_a_rack_needs_a_whole_rack() -> None:
    # a rack covering 0.4 of the hour and a server covering 0.05: 2.5 racks serve the LP, the cut asks for 3 racks or
    # servers in their stead (the coefficient of a server 0.125 / 0.5 = 0.25: four servers for the half rack)
    cut = rounding.mir(rounding.Knapsack({0: 0.4, 1: 0.05}, {}), 0.4)
    assert cut is not None and cut.rhs == 3.0
    assert cut.coefs[0] == 1.0 and math.isclose(cut.coefs[1], 0.25)
    assert cut.coefs[0] * 2.5 < cut.rhs  # the LP's 2.5 racks are cut off


def with_cuts_holds(m: PlanModel, x: np.ndarray, cuts: Cuts | None) -> bool:
    """Whether ``x`` meets every cut (to 1e-6 of the cut's scale)."""
    if cuts is None:
        return True
    lhs = cuts.a @ x
    return bool(np.all(lhs - cuts.b <= 1e-6 * np.maximum(1.0, np.abs(cuts.a) @ np.abs(x))))


def page_example() -> planner.Staged:
    s = economics.Scenario(**{**economics.default_scenario().model_dump(), **links.PLAN_EXAMPLE, "name": "example"})
    page = {**links.default_settings(), **links.PLAN_EXAMPLE_SETTINGS}
    return planner.plan_stages(s, links.plan_settings(page), None, list(page[links.PLAN_PREFIX + "accelerators"]))


def test_the_page_example_cuts_lift_the_bound_and_keep_its_plan() -> None:
    # the Plan page's worked example (302 integer columns): the LP bound rises (9,523.86 -> 9,531.57 USD/day with
    # 7 cuts at the time of writing) and the stages' plan, the proven optimum 10,393.98, meets every cut; the proof
    # with the cuts gives the same plan within 1 %
    staged = page_example()
    found = staged.found
    assert found is not None and staged.pb is not None
    m = found.m
    cuts = rounding.demand_cuts(m)
    assert cuts is not None and cuts.a.shape[0] >= 1
    plain, cut = relaxation(m), relaxation(m, cuts)
    assert plain is not None and cut is not None and cut[1] > plain[1] + 1.0
    result = planner.prove_plan(staged)
    assert math.isclose(result.summary["cost_usd_per_day"], 10393.976112698369, rel_tol=1e-9)
    assert result.summary["mip_gap"] <= 0.01


PLAN_NODES = 100
"""HiGHS's node limit on the small catalogs' models: most are solved to a zero gap within it (then its plan is the
optimum); a model it does not finish still gives a plan, which must meet every cut as any plan must."""


@settings(max_examples=10, deadline=None, derandomize=True)
@given(*SMALL_PLANS)
def test_the_best_plan_highs_finds_meets_the_cuts_of_any_small_plan(options: list[tuple[str, float, float, float]],
                                                                    max_pools: int | None, rental: float,
                                                                    least: int, demand: float) -> None:
    # small catalogs under the operations settings (test_planner_dominance's draws): HiGHS on the whole model at a
    # zero gap, within PLAN_NODES nodes. Its plan meets every cut: when it is the optimum, the model with the cuts
    # has the same optimum (they only add rows); else it is still a plan, which no valid cut may cut off
    staged = small_staged(options, max_pools, rental, least, demand)
    if staged is None:
        return
    assert staged.found is not None
    m = staged.found.m
    whole = milp(np.asarray(m.c), constraints=[LinearConstraint(m.matrix(), -np.inf, np.asarray(m.b))],
                 integrality=np.asarray(m.integer), bounds=Bounds(np.asarray(m.lb), np.asarray(m.ub)),
                 options={"mip_rel_gap": 0.0, "node_limit": PLAN_NODES})
    if whole.x is None:
        assert whole.status in (1, 2)  # no plan (or none within the node limit): nothing to check
        return
    x = np.asarray(whole.x, dtype=float)
    x[np.asarray(m.integer) == 1] = np.round(x[np.asarray(m.integer) == 1])  # whole counts, as a plan has them
    cuts = rounding.demand_cuts(m)
    assert with_cuts_holds(m, x, cuts)
