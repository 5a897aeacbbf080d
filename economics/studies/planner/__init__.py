"""Planner: the cheapest fleet that serves a demand at a per-user speed and a time-to-first-token target inside a
site's power, racks, cooling and budget, from catalog hardware (own or rent) and the fleet already owned.

A mixed-integer program solved with ``scipy.optimize.milp`` (HiGHS). docs/planner.md has the full formulation; in
short, for candidates ``i`` (a hardware option with its ownership: ``own``, ``rent`` or ``existing``, and for owned
hardware how it is cooled), roles ``r`` (aggregated, prefill, decode) and hours ``h``:

* integers ``n[i,r]`` (owned or existing systems, present all day), ``m[i,r,h]`` (systems rented in hour h, billed
  by the hour), ``R[i]`` (racks of an on-site candidate); continuous flows ``f[i,r,h] >= 0`` (requests/s for
  aggregated, uncached input tokens/s for prefill, output tokens/s for decode);
* demand in every hour: ``sum_agg I_miss f + sum_prefill f >= I_miss lambda_h`` and ``sum_agg O f + sum_decode f >=
  O lambda_h`` (a request is served by an aggregated pool, or by a prefill pool and a decode pool);
* capacity: ``f <= k A / (1 + headroom) x systems`` with ``k`` the pool's rate per system at the per-user speed
  target and ``A`` the availability from failures and repairs (the extra systems are the spares);
* time to first token at a percentile: the prefill share of a pool's load ``<= rho_max(c) x`` its prefill capacity,
  ``rho_max`` from the M/G/c approximation of :mod:`economics.domain.queueing` at ``c`` replicas (refined at the pool
  sizes chosen; every returned plan is checked at its own pool sizes);
* site: ``sum n x system kW x PUE <= site MW x 1000``; racks: ``sum n <= per_rack x R`` and ``sum R <= max racks``
  (systems per rack from the rack power of the cooling used, :func:`economics.domain.fleet.systems_per_rack`); a capex
  budget; the KV-cache link: ``sum_prefill f x KV bytes/token <= link`` in every hour; the existing fleet's size.

The objective is the cost per day (capital as an annuity, energy, hosting, operations, rent, cooling retrofit: the
same cost functions as the engine, :mod:`economics.domain.cost`), or the net present cost over the horizon with demand
growth (purchases at year 0, the fleet sized for the largest year, as the retrofit study does). Shadow prices come
from the LP with the integer choices fixed: the pools the plan uses stay open, every other pool is closed, the
counts become continuous, and HiGHS's dual values of the site, rack, budget, link and fleet rows are read.
An infeasible plan comes back as data: the constraint that cannot be met, with the numbers.

The package follows the solve's steps, one module each: :mod:`.inputs` (settings, the day's demand, the workload),
:mod:`.candidates` and :mod:`.pools` (options, their rates and costs per system), :mod:`.model`, :mod:`.build`,
:mod:`.constraints` and :mod:`.rules` (the MILP as a recipe: variables and objective, then each family of rows),
:mod:`.milp`, :mod:`.solve` and :mod:`.hourly` (HiGHS in two stages, hour by hour), :mod:`.report` and
:mod:`.diagnosis` (the plan or the reason there is none, as tables), :mod:`.run` (the entry points) and
:mod:`.frontiers`. Files are read and written by :mod:`economics.io.plan_files`; the command is in :mod:`economics.cli`.
"""

from __future__ import annotations

import importlib
from typing import Any

TYPE_CHECKING = False  # typing.TYPE_CHECKING; the names as mypy sees them
if TYPE_CHECKING:  # at run time each is imported from its module on first use (below)
    from economics.studies.planner.candidates import (
        CANDIDATE_COLUMNS,
        Candidate,
        catalog_candidates,
        catalog_rates,
        clear_rates_memo,
        hosting_variants,
    )
    from economics.studies.planner.frontiers import (
        CARBON_FRONTIER_COLUMNS,
        FRONTIER_COLUMNS,
        default_speed_targets,
        frontier_carbon,
        frontier_site,
        frontier_speed,
        frontier_table,
    )
    from economics.studies.planner.inputs import (
        HOURS,
        OWNERSHIPS,
        PLAN_FIELDS,
        RENT_TIERS,
        ROLES,
        PlanSettings,
        Workload,
        demand_profile,
        settings_from_row,
        workload,
    )
    from economics.studies.planner.milp import Cancelled, cancellable, clear_milp_memo
    from economics.studies.planner.pools import Costs, Pool, build_pools, candidate_costs
    from economics.studies.planner.report import (
        CONSTRAINT_COLUMNS,
        PLAN_COLUMNS,
        SETTING_COST_COLUMNS,
        PlanResult,
        records,
    )
    from economics.studies.planner.rules import RULE_OFF, block_hours, rules_active
    from economics.studies.planner.run import (
        SettingPlans,
        Staged,
        costs_of_settings,
        limits_with_costs,
        plan,
        plan_stages,
        prove_plan,
        setting_costs,
        settings_plans,
        solve_plan,
    )

_LAZY = {
    **dict.fromkeys(("CANDIDATE_COLUMNS", "Candidate", "catalog_candidates", "catalog_rates", "clear_rates_memo",
                     "hosting_variants"), "economics.studies.planner.candidates"),
    **dict.fromkeys(("CARBON_FRONTIER_COLUMNS", "FRONTIER_COLUMNS", "default_speed_targets", "frontier_carbon",
                     "frontier_site", "frontier_speed", "frontier_table"), "economics.studies.planner.frontiers"),
    **dict.fromkeys(("HOURS", "OWNERSHIPS", "PLAN_FIELDS", "RENT_TIERS", "ROLES", "PlanSettings", "Workload",
                     "demand_profile", "settings_from_row", "workload"), "economics.studies.planner.inputs"),
    **dict.fromkeys(("Cancelled", "cancellable", "clear_milp_memo"), "economics.studies.planner.milp"),
    **dict.fromkeys(("Costs", "Pool", "build_pools", "candidate_costs"), "economics.studies.planner.pools"),
    **dict.fromkeys(("CONSTRAINT_COLUMNS", "PLAN_COLUMNS", "SETTING_COST_COLUMNS", "PlanResult", "records"),
                    "economics.studies.planner.report"),
    **dict.fromkeys(("RULE_OFF", "block_hours", "rules_active"), "economics.studies.planner.rules"),
    **dict.fromkeys(("SettingPlans", "Staged", "costs_of_settings", "limits_with_costs", "plan", "plan_stages",
                     "prove_plan", "setting_costs", "settings_plans", "solve_plan"), "economics.studies.planner.run"),
}
"""Public name -> the module that defines it, imported on first use (issue #43, the cold start): the app's first
page reads the planner's settings and their defaults (:mod:`.inputs`, for the Plan link's settings) before its first
KPI, and the rest of the package (the MILP, its rows, HiGHS's memo, the reports: 16 modules, with the domain's
covering search and availability about 50 ms of CPU at a load of 8) is loaded when a plan is first made, as
``economics`` and ``economics.store`` do with their names."""


def __getattr__(name: str) -> Any:
    """A public name of the planner, imported from its module on first use (then kept as an attribute); a name that
    is not one (a submodule not yet imported, say) raises AttributeError, so ``from ... import`` imports it.
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'economics.studies.planner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CANDIDATE_COLUMNS", "CARBON_FRONTIER_COLUMNS", "CONSTRAINT_COLUMNS", "FRONTIER_COLUMNS", "HOURS", "OWNERSHIPS",
    "PLAN_COLUMNS", "PLAN_FIELDS", "RENT_TIERS", "ROLES", "RULE_OFF", "SETTING_COST_COLUMNS", "Cancelled",
    "Candidate", "Costs", "PlanResult", "PlanSettings", "Pool", "SettingPlans", "Staged", "Workload", "block_hours",
    "build_pools", "cancellable", "candidate_costs", "catalog_candidates", "catalog_rates", "clear_milp_memo",
    "clear_rates_memo", "costs_of_settings", "default_speed_targets", "demand_profile", "frontier_carbon",
    "frontier_site", "frontier_speed", "frontier_table", "hosting_variants", "limits_with_costs", "plan",
    "plan_stages", "prove_plan", "records", "rules_active", "setting_costs", "settings_from_row", "settings_plans",
    "solve_plan", "workload",
]
