"""The planner's formulation page (docs/planner-formulation.md) names each family of rows and the function that
builds it: every name is a row of a model built with every limit and setting active, every function exists, and
every kind of row the model knows is on the page."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import economics
from economics.studies import planner
from economics.studies.planner.build import build_model
from economics.studies.planner.model import Row, utilization_cap
from economics.studies.planner.pools import Problem
from economics.studies.planner.tiers import tier_variants

PAGE = Path(__file__).resolve().parent.parent / "docs" / "planner-formulation.md"
TABLE_ROW = re.compile(r"^\| .+ \| `(?P<name>[^`]+)` \| `(?P<module>\w+)\.(?P<function>\w+)` \|$", re.M)


def documented() -> list[tuple[str, str, str]]:
    return [(m["name"], m["module"], m["function"]) for m in TABLE_ROW.finditer(PAGE.read_text(encoding="utf-8"))]


def every_row_kind() -> set[Row]:
    """The kinds of row of a model with the demand over a diurnal day, a TTFT target (and a floor), an existing
    fleet, racks, site power, a capex budget, a KV link, rented pools in a rental block (on demand, reserved and
    spot, at most half of the demand on spot) and both pool settings."""
    s = economics.Scenario(name="all", model="llama-3.1-70b", precision="fp8", target_output_tokens_per_s_per_user=30,
                           demand_output_tokens_per_day=2e10, accelerator="h100-sxm", existing_accelerators=64,
                           kv_link_gb_per_s=400.0, site_power_mw=50.0)
    settings = planner.PlanSettings(demand_profile="diurnal", ttft_target_s=1.0, max_racks=200.0,
                                    capex_budget_usd=5e8, max_pools=3, min_pool_systems=2, min_rental_hours=8.0,
                                    rent_tiers="on_demand;reserved;spot", max_spot_share=0.5)
    wl = planner.workload(s, settings)
    cands, _ = planner.catalog_candidates(s, ["h100-sxm", "h200-sxm", "b200"])
    hosted, _ = planner.hosting_variants(cands, s)
    hosted = tier_variants(hosted, s, settings)
    pools, _ = planner.build_pools(hosted, s, settings, wl)
    pb = Problem(s, settings, wl, hosted, pools, [planner.candidate_costs(c, s) for c in hosted])
    rho = {p: utilization_cap(pool, pool.servers_per_system, settings) for p, pool in enumerate(pools)
           if pool.prefill_weight > 0}
    floors = {p: 2 for p in rho if hosted[pools[p].cand].ownership != "rent"}
    m, _, _ = build_model(pb, rho, floors=floors)
    return set(m.row_kind)


def test_every_documented_row_is_built_by_its_function() -> None:
    rows = documented()
    assert len(rows) >= len(Row)
    built = every_row_kind()
    for name, module, function in rows:
        assert Row(name) in built, name
        assert callable(getattr(importlib.import_module(f"economics.studies.planner.{module}"), function)), function
    assert {Row(name) for name, _, _ in rows} == set(Row)  # and no kind of row is missing from the page
