"""A small model that separates by hour solved exactly (economics/studies/planner/separable.py, #43; the rule
change of docs/speed.md, branch exactcost): its plan is never dearer than HiGHS's at the planner's 0.1 % gap and
equals HiGHS's run to a zero gap, on hypothesis's small days of an owned pool and rented pools.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from economics import Scenario
from economics.studies import planner
from economics.studies.planner import run, separable
from economics.studies.planner.build import build_model, hourly_models, objective_factors, rented_cols
from economics.studies.planner.candidates import Candidate
from economics.studies.planner.hourly import satisfies
from economics.studies.planner.inputs import Ownership, PoolRole, workload
from economics.studies.planner.milp import MIP_REL_GAP, run_milp
from economics.studies.planner.model import ALL_DAY, PlanModel, Row
from economics.studies.planner.pools import Problem, build_pools, candidate_costs
from economics.studies.planner.report import solver_status

FLAT = dict(input_tokens_per_request=0, output_tokens_per_request=100, cost_of_capital=0, depreciation_years=1,
            maintenance_fraction_per_year=0, colocation_usd_per_kw_month=0)
"""Output only (one role, aggregated), capital at 0 % over one year: a system's day is its price / 365."""


def _problem(demand: float, own_rate: float, own_price: float, rents: list[tuple[float, float]],
             energy: float, max_pools: int | None, site_mw: float | None = None) -> Problem:
    """A diurnal day served by an owned box and rented boxes (rate tokens/s, rent USD/h), no rental block; the
    site's power a limit on the owned boxes when given."""
    s = Scenario(name="sep", demand_output_tokens_per_day=demand, electricity_usd_per_kwh=energy,
                 site_power_mw=site_mw, **FLAT)
    cands = [Candidate("own", "own", accelerators_per_system=1, system_power_kw=1.0, price_usd_per_system=own_price,
                       output_tokens_per_s_per_system=own_rate, accelerators_per_replica=1,
                       roles=(PoolRole.AGGREGATED,))]
    cands += [Candidate(f"rent{i}", "rent", accelerators_per_system=1, system_power_kw=1.0,
                        rent_usd_per_system_hour=rent, output_tokens_per_s_per_system=rate,
                        accelerators_per_replica=1, roles=(PoolRole.AGGREGATED,))
              for i, (rate, rent) in enumerate(rents)]
    chosen = planner.PlanSettings(demand_profile="diurnal", spares=False, max_pools=max_pools, min_rental_hours=1.0)
    hosted, _ = planner.hosting_variants(cands, s)
    wl = workload(s, chosen, objective_factors(s, chosen)[1])
    pools, _ = build_pools(hosted, s, chosen, wl)
    return Problem(s, chosen, wl, hosted, pools, [candidate_costs(c, s, wl.day) for c in hosted])


rates = st.floats(50.0, 400.0)
days = st.fixed_dictionaries({
    "demand": st.floats(2e6, 6e7), "own_rate": rates, "own_price": st.floats(500.0, 8000.0),
    "rents": st.lists(st.tuples(rates, st.floats(0.05, 2.0)), min_size=1, max_size=2),
    "energy": st.sampled_from([0.0, 0.1]), "max_pools": st.sampled_from([None, 3]),
    "site_mw": st.sampled_from([None, 0.004, 0.02])})


@settings(max_examples=40, deadline=None, derandomize=True)
@given(days)
def test_the_exact_plan_is_no_dearer_than_highs_and_equals_highs_at_a_zero_gap(day: dict) -> None:
    pb = _problem(**day)
    m, _, _ = build_model(pb, {})
    rented = rented_cols(m, pb)
    found = separable.solve_separable(m, rented, lambda: hourly_models(pb, {}, m))
    assert found is not None and found.x is not None  # every such day separates (one owned count, no block)
    assert satisfies(m, found.x) and found.bound == found.fun and found.message == separable.EXACT
    assert found.fun == pytest.approx(float(np.dot(m.c, found.x)), rel=1e-12)
    at_gap = run_milp(m, gap=MIP_REL_GAP)
    exact = run_milp(m, gap=0.0)
    assert at_gap.status == 0 and exact.status == 0
    tol = 1e-9 * max(1.0, abs(found.fun))
    assert found.fun <= float(at_gap.fun) + tol  # never dearer than HiGHS within its 0.1 %
    assert found.fun == pytest.approx(float(exact.fun), rel=1e-7, abs=1e-6)  # HiGHS's own feasibility tolerance


def test_the_plan_says_proven_optimal() -> None:
    pb = _problem(3e7, 200.0, 3650.0, [(150.0, 0.9)], 0.1, 3)
    m, _, _ = build_model(pb, {})
    found = separable.solve_separable(m, rented_cols(m, pb), lambda: hourly_models(pb, {}, m))
    assert found is not None
    assert solver_status(found, 0.0) == "proven optimal"


def test_a_rental_block_does_not_separate() -> None:
    pb = _problem(3e7, 200.0, 3650.0, [(150.0, 0.9)], 0.1, 3)
    chosen = replace(pb.settings, min_rental_hours=8.0)
    pb = replace(pb, settings=chosen, wl=replace(pb.wl, block_hours=8.0))
    m, _, _ = build_model(pb, {})
    assert m.rules is not None and m.rules.block
    built: list[int] = []

    def hourly() -> list:
        built.append(1)
        return hourly_models(pb, {}, m)

    assert separable.solve_separable(m, rented_cols(m, pb), hourly) is None
    assert not built  # not even its hours' models are made


def _three_roles(own_rate: float, rents: list[tuple[float, float]], demand: float) -> tuple[Problem, PlanModel]:
    """A diurnal day with an owned box in its three roles (three counts held all day) beside rented boxes (rate
    tokens/s, rent USD/h), no operations rule that keeps the model from separating."""
    s = Scenario(name="split", input_tokens_per_request=200, output_tokens_per_request=100,
                 demand_output_tokens_per_day=demand, site_power_mw=1.0)
    roles = (PoolRole.AGGREGATED, PoolRole.PREFILL, PoolRole.DECODE)
    cands = [Candidate("own", Ownership.OWN, accelerators_per_system=1, system_power_kw=1.0, price_usd_per_system=2e4,
                       output_tokens_per_s_per_system=own_rate, input_tokens_per_s_per_system=4 * own_rate,
                       accelerators_per_replica=1, roles=roles)]
    cands += [Candidate(f"rent{i}", Ownership.RENT, accelerators_per_system=1, system_power_kw=1.0,
                        rent_usd_per_system_hour=rent, output_tokens_per_s_per_system=rate,
                        input_tokens_per_s_per_system=4 * rate, accelerators_per_replica=1, roles=roles)
              for i, (rate, rent) in enumerate(rents)]
    chosen = planner.PlanSettings(demand_profile="diurnal", min_rental_hours=1.0)
    pb = run.plan_problem(s, chosen, cands).pb
    assert pb is not None
    return pb, build_model(pb, {})[0]


def _box_optimum(m: PlanModel, day: list[int], a: np.ndarray, b: np.ndarray) -> float:
    """The reference: HiGHS at a zero gap on the hours' own rows alone (no operations setting, no limit over the
    counts held all day: fewer rows, a lower optimum), the day's counts within ``[a, b]``; infinite without a plan."""
    keep = [i for i, kind in enumerate(m.row_kind) if kind in _HOUR_ROWS]
    lb, ub = np.array(m.lb), np.array(m.ub)
    lb[day], ub[day] = a, b
    res = milp(np.array(m.c), constraints=LinearConstraint(m.matrix()[keep], -np.inf, np.array(m.b)[keep]),
               integrality=np.array(m.integer), bounds=Bounds(lb, ub), options={"mip_rel_gap": 0.0})
    return float(res.fun) if res.status == 0 else math.inf


_HOUR_ROWS = frozenset({Row.DEMAND_INPUT, Row.DEMAND_OUTPUT, Row.CAPACITY, Row.TTFT, Row.KV_LINK})


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.sampled_from([40.0, 80.0, 160.0]), st.lists(st.tuples(st.sampled_from([40.0, 80.0, 160.0]),
                                                                 st.sampled_from([0.5, 1.0, 2.0, 3.0])),
                                                       min_size=1, max_size=2),
       st.sampled_from([5e6, 2e7, 4e7]), st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6))
def test_the_split_bound_never_exceeds_the_optimum_of_a_box(own_rate: float, rents: list[tuple[float, float]],
                                                            demand: float, corners: list[float]) -> None:
    # a box of the three counts held all day drawn within the search's range; the bound over it (every split, and
    # the splits near each one as a box cut from another tries them) is at most the cheapest plan of the box
    pb, m = _three_roles(own_rate, rents, demand)
    day = [j for (_, h), j in m.count_col.items() if h is ALL_DAY]
    made = hourly_models(pb, {}, m)
    hours = [separable._costed(sub, cols, m, day) for sub, cols in made]
    assert len(day) == 3 and all(h is not None for h in hours)
    costed = [h for h in hours if h is not None]
    most = separable._most(m, day, costed)
    ends = np.floor(np.array(corners).reshape(2, 3) * (most + 1.0)).clip(0.0, most)
    a, b = ends.min(axis=0), ends.max(axis=0)
    split = separable._Split(m, day, costed)
    optimum = _box_optimum(m, day, a, b)
    tol = 1e-7 * max(1.0, abs(optimum))  # HiGHS's feasibility tolerance
    bounds = [split.least(a, b, near)[0] for near in [None, *range(len(split.splits))]]
    assert max(bounds) <= optimum + tol
    assert bounds[0] == max(bounds)  # the root's search over every split finds the largest
    # and it says something: every plan of the box pays for at least its lowest day counts (the hours cost nothing
    # less than 0), and so does the bound, which is finite wherever the box has a plan (a bound of -inf would pass
    # the checks above)
    assert bounds[0] >= float(np.dot(np.array(m.c)[day], a)) - tol
    assert math.isfinite(bounds[0]) or not math.isfinite(optimum)


def test_three_counts_held_all_day_solved_exactly_when_their_boxes_are_small_else_by_highs_at_once() -> None:
    # an owned box in its three roles: at 20 M tokens a day the boxes' cross-sections hold fewer bases than the
    # search may evaluate, and its plan is HiGHS's at a zero gap; at 400 M they hold more, so no search is started
    for demand, exact in ((2e7, True), (4e8, False)):
        pb, m = _three_roles(80.0, [(160.0, 2.0)], demand)
        day = [j for (_, h), j in m.count_col.items() if h is ALL_DAY]
        made = hourly_models(pb, {}, m)
        costed = [h for h in (separable._costed(sub, cols, m, day) for sub, cols in made) if h is not None]
        boxes = separable._boxes(m, day, np.array([m.lb[j] for j in day]), separable._most(m, day, costed))
        assert (separable._work(boxes) <= separable.MAX_POINTS) is exact
        found = separable.solve_separable(m, rented_cols(m, pb), lambda made=made: made)
        if not exact:
            assert found is None
            continue
        assert found is not None and found.message == separable.EXACT and satisfies(m, found.x)
        zero = run_milp(m, gap=0.0)
        assert zero.status == 0 and found.fun == pytest.approx(float(zero.fun), rel=1e-7, abs=1e-6)
