"""What each operations setting costs, from the plan's own candidates and pools (#43, the settings' costs): the plans
solved without a setting start from what the plan started from (``run.Prepared``: tier variants, workload, pools,
candidates table, costs per system) and are read for their cost and pools alone (``report.plan_cost``); every
figure is what solving each of those plans whole (``planner.solve_plan`` and its summary) gives.
"""

from __future__ import annotations

import dataclasses
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import economics
from economics.studies import planner
from economics.studies.planner import run
from economics.studies.planner.inputs import workload
from economics.studies.planner.pools import build_pools
from economics.studies.planner.report import plan_cost
from economics.studies.planner.rules import RULE_OFF
from economics.studies.planner.tiers import tier_variants
from ui import links

PAGE_LINK = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
             "output_tokens_per_s_per_accelerator": None}
"""The Plan page's scenario in bench/app_latency.py and bench/plan.py (the default scenario with these fields)."""
PAGE = links.default_settings()
SETTINGS, IDS = links.plan_settings(PAGE), list(PAGE[links.PLAN_PREFIX + "accelerators"])


def scenario(**changes: Any) -> economics.Scenario:
    return economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK, **changes})


SESSIONS = dict(workload="sessions", turns_per_session=4, session_prefix_tokens=1000, input_tokens_per_turn=500,
                output_tokens_per_turn=100, seconds_between_turns=30, demand_input_tokens_per_day=None,
                demand_output_tokens_per_day=None, input_tokens_per_request=None, output_tokens_per_request=None,
                kv_remote_gb=1000, kv_remote_read_gb_per_s=10, kv_remote_usd_per_gb_month=0.1,
                demand_sessions_per_day=5_000_000)
"""Agent sessions of 4 turns (a 1,000-token prefix, 500 new and 100 output tokens a turn) with a remote KV store:
the plan's cost has the store's line."""


CASES = [
    ("the page's first edit", scenario(demand_output_tokens_per_day=5.1e9), SETTINGS),
    ("the page's second edit", scenario(demand_output_tokens_per_day=2.02e10), SETTINGS),
    ("two pools of at least two systems", scenario(demand_output_tokens_per_day=2.02e10),
     replace(SETTINGS, max_pools=2, min_pool_systems=2)),
    ("agent sessions", scenario(**SESSIONS), SETTINGS),
]


def solved_whole(summary: dict[str, Any], staged: planner.Staged) -> list[tuple[str, float, int | None]]:
    """Each setting's plan without it as main made it: ``solve_plan`` with the setting off, its summary read (a
    setting that cannot bind costs nothing and keeps the plan's pools; a dearer plan without is the plan itself)."""
    cost = float(summary["cost_usd_per_day"])
    out = []
    for name, off in RULE_OFF.items():
        if not staged.active[name]:
            out.append((name, cost, summary["distinct_pools"]))
            continue
        other = planner.solve_plan(staged.s, replace(staged.settings, **{name: off}), staged.cands, staged.excluded,
                                   costed=False, proof=False)
        assert other.feasible
        without, pools = float(other.summary["cost_usd_per_day"]), other.summary["distinct_pools"]
        out.append((name, cost, summary["distinct_pools"]) if without > cost else (name, without, pools))
    return out


@pytest.mark.parametrize(("case", "s", "settings"), CASES, ids=[c[0] for c in CASES])
def test_the_settings_costs_from_the_plans_stages_are_those_of_each_plan_solved_whole(
        case: str, s: economics.Scenario, settings: planner.PlanSettings) -> None:
    staged = planner.plan_stages(s, settings, None, IDS)
    proven = planner.prove_plan(staged)
    from_stages = planner.costs_of_settings(proven.summary, s, settings, None, IDS, staged=staged.inputs())
    made_again = planner.costs_of_settings(proven.summary, s, settings, None, IDS)  # candidates rated again
    pd.testing.assert_frame_equal(from_stages, made_again, check_exact=True)
    got = list(zip(from_stages["setting"], from_stages["without_usd_per_day"], from_stages["pools_without"],
                   strict=True))
    assert got == solved_whole(proven.summary, staged)  # bit for bit
    assert any(staged.active.values())  # a setting is solved again in each case, not only read off


def test_the_plans_costs_of_settings_are_those_of_the_page() -> None:
    """``plan`` (the CLI's) costs its settings from its stages as the page does from its own."""
    s = CASES[0][1]
    whole = planner.plan(s, SETTINGS, None, IDS)
    staged = planner.plan_stages(s, SETTINGS, None, IDS)
    page = planner.costs_of_settings(planner.prove_plan(staged).summary, s, SETTINGS, None, IDS,
                                     staged=staged.inputs())
    pd.testing.assert_frame_equal(whole.setting_costs, page, check_exact=True)


def test_the_settings_plans_made_beside_the_proof_give_the_same_table() -> None:
    """``run.plans_without`` reads no proven plan: made in a second thread while the proof runs (as
    bench/plan_threads.py makes them), ``setting_costs(..., plans=...)`` gives the table ``costs_of_settings``
    gives after the proof, bit for bit (each solved, not read from HiGHS's memo), and each row is the plan without
    that setting solved whole."""
    s = CASES[0][1]
    staged = planner.plan_stages(s, SETTINGS, None, IDS)
    inputs = staged.inputs()
    args = (inputs.s, inputs.settings, inputs.cands, inputs.excluded, inputs.active, inputs.prepared)
    planner.clear_milp_memo()
    with ThreadPoolExecutor(max_workers=1) as other:
        plans = other.submit(run.plans_without, *args)
        proven = planner.prove_plan(staged)
        beside = run.setting_costs(proven.summary, *args, plans=plans.result())
    planner.clear_milp_memo()
    after = planner.costs_of_settings(proven.summary, s, SETTINGS, None, IDS, staged=inputs)
    pd.testing.assert_frame_equal(beside, after, check_exact=True)
    got = list(zip(beside["setting"], beside["without_usd_per_day"], beside["pools_without"], strict=True))
    assert got == solved_whole(proven.summary, staged)  # each plan without a setting as solve_plan makes it


def same(a: Any, b: Any) -> bool:
    """Equal field by field, arrays element by element (NaN equal to NaN: a day without prices by the hour)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@pytest.mark.parametrize(("case", "s", "settings"), CASES, ids=[c[0] for c in CASES])
def test_what_the_stages_start_from_reads_no_operations_setting(
        case: str, s: economics.Scenario, settings: planner.PlanSettings) -> None:
    """The tier variants, the workload and the pools are the same with each operations setting on or off (so the
    plan and each plan without a setting may share them)."""
    cands, excluded = planner.catalog_candidates(s, IDS)
    hosted, _ = planner.hosting_variants(cands, s)
    for name, off in RULE_OFF.items():
        without = replace(settings, **{name: off})
        assert tier_variants(hosted, s, without) == tier_variants(hosted, s, settings)
        wl_on, wl_off = workload(s, settings), workload(s, without)
        assert same(wl_off, wl_on)
        tiered = tier_variants(hosted, s, settings)
        assert build_pools(tiered, s, without, wl_off) == build_pools(tiered, s, settings, wl_on)


@pytest.mark.parametrize(("case", "s", "settings"), CASES, ids=[c[0] for c in CASES])
def test_plan_cost_is_the_results_cost_pools_and_accelerators(
        case: str, s: economics.Scenario, settings: planner.PlanSettings) -> None:
    staged = planner.plan_stages(s, settings, None, IDS)
    assert staged.found is not None
    m, res, _, pb = staged.found.best
    result = run._result_of(staged, staged.found)
    cost, pools, accelerators = plan_cost(m, res, pb)
    assert (cost, pools) == (result.summary["cost_usd_per_day"], result.summary["distinct_pools"])
    assert accelerators == float(result.plan["accelerators"].sum())
