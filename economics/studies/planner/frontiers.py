"""Cost frontiers: the cheapest plan at each per-user speed target, and at each site power."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.engine.batch import as_scenario
from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import (
    Candidate,
    catalog_candidates,
    catalog_rates,
    hosted_candidates,
    hosting_variants,
)
from economics.studies.planner.inputs import PlanSettings
from economics.studies.planner.report import PlanResult
from economics.studies.planner.rules import RULE_OFF
from economics.studies.planner.run import solve_plan

FRONTIER_COLUMNS = ("feasible", "cost_usd_per_day", "cost_usd_per_m_tokens", "facility_mw", "systems_on_site",
                    "rented_system_hours_per_day", "binding", "reason")


def _frontier_row(r: PlanResult) -> dict[str, Any]:
    row = {k: r.summary.get(k) for k in FRONTIER_COLUMNS[1:-1]}
    return {"feasible": r.feasible, **row, "reason": r.reason}


def default_speed_targets(s: Scenario, points: int = 20) -> list[float]:
    """``points`` per-user speed targets, geometric from a quarter to four times the scenario's (30 token/s when
    none is given).
    """
    t = float(s.target_output_tokens_per_s_per_user or 30.0)
    return [float(v) for v in np.geomspace(t / 4.0, t * 4.0, points)]


def frontier_speed(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                   targets: list[float] | None = None, candidates: list[Candidate] | None = None,
                   accelerators: list[str] | None = None) -> pd.DataFrame:
    """The cheapest plan's cost against the per-user speed target. Catalog candidates are re-rated at every target
    (one engine evaluation for all); a CANDIDATES.csv keeps its rates and a candidate qualifies while its measured
    per-user speed meets the target. Each point is the cheapest plan of any shape: the operations settings
    (:data:`RULE_OFF`) are lifted, since the curve is the cost of the demand, and 20 plans each held to a pool limit
    and a rental block take a minute where these take seconds; the plan itself says what its settings add.
    """
    s = as_scenario(scenario)
    settings = replace(settings or PlanSettings(), **RULE_OFF)
    targets = targets or default_speed_targets(s)
    ids = accelerators or catalog.accelerator_ids()
    rates = catalog_rates(s, ids, list(targets)) if candidates is None else None
    rows = []
    for t in targets:
        st = s.model_copy(update={"target_output_tokens_per_s_per_user": float(t)})
        excluded: list[tuple[str, str]] = []
        if rates is None:
            assert candidates is not None
            cands = candidates
        else:
            cands, excluded = catalog_candidates(st, ids, rates[rates["target"] == t])
        hosted, more = hosting_variants(cands, st)
        rows.append({"target_output_tokens_per_s_per_user": float(t),
                     **_frontier_row(solve_plan(st, settings, hosted, excluded + more, costed=False, proof=False))})
    return pd.DataFrame(rows)


def frontier_site(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                  site_mw: list[float] | None = None, candidates: list[Candidate] | None = None,
                  accelerators: list[str] | None = None, points: int = 20) -> pd.DataFrame:
    """The cheapest plan's cost against the site's power. Without ``site_mw``: ``points`` limits from 5 % to 120 %
    of the facility power of the plan with no site limit. As :func:`frontier_speed`, without the operations
    settings.
    """
    s = as_scenario(scenario)
    settings = replace(settings or PlanSettings(), **RULE_OFF)
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    else:
        excluded = []
    free = solve_plan(s.model_copy(update={"site_power_mw": None}), settings,
                      *hosted_candidates(candidates, s, excluded), costed=False, proof=False)
    used_mw = float(free.summary.get("facility_mw") or 0.0) if free.feasible else math.inf
    if site_mw is None:
        top = used_mw if math.isfinite(used_mw) and used_mw > 0 else 1.0
        site_mw = [float(v) for v in np.linspace(0.05 * top, 1.2 * top, points)]
    rows = []
    for mw in site_mw:
        st = s.model_copy(update={"site_power_mw": float(mw)})
        # a limit the unlimited plan already fits changes nothing: that plan is the answer
        result = free if used_mw <= mw else solve_plan(st, settings, *hosted_candidates(candidates, st, excluded),
                                                       costed=False, proof=False)
        rows.append({"site_power_mw": float(mw), **_frontier_row(result)})
    return pd.DataFrame(rows)


CARBON_FRONTIER_COLUMNS = ("carbon_usd_per_tonne", "feasible", "cost_before_carbon_usd_per_day", "cost_usd_per_day",
                           "kgco2e_per_day", "tco2e_per_year", "kgco2e_per_m_tokens", "reason")
DEFAULT_CARBON_PRICES = (0.0, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0)
"""Carbon prices [USD/tCO2e] the cost-against-emissions frontier is drawn at: from none to well above any traded
price, so that the cleanest plans the candidates allow show."""


def frontier_carbon(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                    prices: list[float] | None = None, candidates: list[Candidate] | None = None,
                    accelerators: list[str] | None = None) -> pd.DataFrame:
    """Cost against emissions: the cheapest plan at each carbon price, its cost before the carbon price (what it
    costs to run) and its emissions. Each point is a plan no other beats on both (a cheaper one emits more: it was
    not chosen at that price); the line between points is a trade, not a plan. As :func:`frontier_speed`, without
    the operations settings and without a carbon cap. Needs a grid intensity or embodied figures to trade against.
    """
    s = as_scenario(scenario)
    settings = replace(settings or PlanSettings(), **RULE_OFF, carbon_cap_tco2e_per_year=None)
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    else:
        excluded = []
    rows = []
    for price in prices or list(DEFAULT_CARBON_PRICES):
        st = s.model_copy(update={"carbon_usd_per_tonne": float(price)})
        r = solve_plan(st, settings, *hosted_candidates(candidates, st, excluded), costed=False, proof=False)
        cost = r.summary.get("cost_usd_per_day") if r.feasible else None
        carbon = r.summary.get("carbon_usd_per_day") if r.feasible else None
        rows.append({"carbon_usd_per_tonne": float(price), "feasible": r.feasible,
                     "cost_before_carbon_usd_per_day": None if cost is None else float(cost) - float(carbon or 0.0),
                     "cost_usd_per_day": cost, **{k: r.summary.get(k) if r.feasible else None
                                                  for k in CARBON_FRONTIER_COLUMNS[4:7]},
                     "reason": r.reason})
    return pd.DataFrame(rows, columns=list(CARBON_FRONTIER_COLUMNS))


def frontier_table(points: list[dict[str, Any]]) -> pd.DataFrame:
    """A frontier's records (as :func:`~economics.studies.planner.report.records` gives them) as a table again."""
    return pd.DataFrame(points)
