"""The planner and the engine agree on every candidate: for 500 random candidates, each cooled as the planner would
cool it (:func:`~economics.studies.planner.candidates.hosting_variants`), the planner's per-system figures x a fixed
fleet of ``n`` systems equal :func:`economics.evaluate` on the same fleet written as a scenario row (in the manner of
PyPSA's ``test_optimization_expressions_equivalence.py``): systems per rack, racks, PUE, provisioned and average
facility power, capacity and utilization, the cost per hour and per M tokens, and the embodied emissions.

The sample is seeded (numpy's default generator, seed 42), so every run checks the same 500 rows; one vectorised
``evaluate`` rates them all (about 5 s of CPU for the whole module here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

import economics
from economics.domain.formula import HOURS_PER_DAY, SECONDS_PER_DAY
from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import Candidate, hosting_variants, pue_for, rack_systems, racks_for
from economics.studies.planner.inputs import CoolingMode, Ownership, PlanSettings, PoolRole, workload
from economics.studies.planner.pools import Costs, Pool, build_pools, candidate_costs
from economics.studies.planner.report import cost_per_m_tokens

SAMPLES = 500
REL = 1e-9  # the planner works per system and the engine per fleet: the same arithmetic, summed in another order


@dataclass(frozen=True)
class Case:
    """One candidate, the scenario it is planned in, and the fleet of ``systems`` the engine evaluates."""

    cand: Candidate
    s: Scenario
    systems: int
    demand_share: float


def _case(rng: np.random.Generator, k: int) -> Case:
    """A random candidate: its system, cooling, ownership, prices and rates, and a scenario's contract terms."""
    rack_scale = bool(rng.random() < 0.1)
    a = 72 if rack_scale else int(rng.choice([1, 2, 4, 8]))
    kw = round(float(rng.uniform(0.4, 2.0)) * a, 1)
    ownership = Ownership(rng.choice([Ownership.OWN, Ownership.RENT]))
    hw_cooling = "liquid" if rack_scale else str(rng.choice(["air", "liquid", "air_or_liquid"]))
    output = float(rng.uniform(200, 3000))
    given_input = rng.random() < 0.7
    height = None if rng.random() < 0.3 else float(rng.choice([1, 2, 4, 8, 10]))
    s = Scenario(  # l40s: a catalog accelerator with no system height (only the rack's power limits it)
        name=f"eq-{k}", accelerator="l40s" if height is None else "h100-sxm", ownership=ownership,
        accelerators_per_system=a, accelerator_cooling=hw_cooling, system_form="rack" if rack_scale else "server",
        system_power_kw=kw, accelerator_power_kw=kw / a, system_rack_units=height,
        accelerator_price_usd=float(rng.uniform(5_000, 60_000)), rent_usd_per_accelerator_hour=float(
            rng.uniform(0.5, 6.0)), rent_includes_energy=bool(rng.random() < 0.5),
        embodied_kgco2e_per_accelerator=float(rng.uniform(100, 2000)),
        facility_cooling=str(rng.choice(["air", "liquid", "hybrid"])), liquid_cooling_share=float(rng.uniform(0, 1)),
        allow_liquid_retrofit=bool(rng.random() < 0.5),
        liquid_retrofit_usd_per_mw=float(rng.uniform(1e6, 4e6)),
        rack_power_kw=None if rng.random() < 0.4 else round(float(rng.uniform(5, 160)), 1),
        pue=None if rng.random() < 0.5 else round(float(rng.uniform(1.05, 1.7)), 2),
        cost_of_capital=float(rng.choice([0.0, rng.uniform(0.02, 0.15)])),
        depreciation_years=float(rng.integers(2, 8)), facility_depreciation_years=float(rng.integers(10, 25)),
        maintenance_fraction_per_year=float(rng.uniform(0, 0.08)),
        software_usd_per_accelerator_year=float(rng.uniform(0, 2000)),
        electricity_usd_per_kwh=float(rng.uniform(0.03, 0.25)), idle_power_fraction=float(rng.uniform(0.1, 0.5)),
        colocation_usd_per_kw_month=float(rng.uniform(0, 250)), facility_capex_usd_per_kw=float(rng.uniform(0, 12000)),
        grid_carbon_g_per_kwh=float(rng.uniform(20, 700)), carbon_usd_per_tonne=float(rng.choice([0.0, 85.0])),
        input_tokens_per_request=float(rng.integers(100, 8000)),
        output_tokens_per_request=float(rng.integers(50, 2000)),
        prefix_cache_hit_rate=float(rng.uniform(0, 0.8)), output_tokens_per_s_per_accelerator=output,
        input_tokens_per_s_per_accelerator=float(rng.uniform(2000, 30000)) if given_input else None,
        demand_requests_per_s=1.0, peak_to_average=1.0, demand_profile="flat")
    cand = Candidate(
        name=f"c{k}", ownership=ownership, accelerator=s.accelerator, accelerators_per_system=a, system_power_kw=kw,
        system_rack_units=math.nan if s.system_rack_units is None else float(s.system_rack_units),
        rack_scale=rack_scale, hardware_cooling=hw_cooling,
        price_usd_per_system=float(s.accelerator_price_usd or 0) * a if ownership == Ownership.OWN else 0.0,
        rent_usd_per_system_hour=float(s.rent_usd_per_accelerator_hour or 0) * a,
        embodied_kgco2e_per_system=float(s.embodied_kgco2e_per_accelerator or 0) * a,
        input_tokens_per_s_per_system=float(s.input_tokens_per_s_per_accelerator or math.nan) * a,
        output_tokens_per_s_per_system=output * a, accelerators_per_replica=a)
    return Case(cand, s, int(rng.integers(1, 400)), float(rng.uniform(0.05, 0.95)))


def _row(case: Case, mode: CoolingMode, requests_per_s: float) -> dict[str, Any]:
    """The engine's scenario row of ``case``'s fleet cooled by ``mode``, carrying ``requests_per_s``."""
    c, s = case.cand, case.s
    row = s.model_dump()
    row.update(accelerator_count=case.systems * c.accelerators_per_system, demand_requests_per_s=requests_per_s)
    if mode == CoolingMode.LIQUID_RETROFIT:  # the engine retrofits an air hall for hardware that needs liquid
        row.update(accelerator_cooling="liquid", facility_cooling="air", allow_liquid_retrofit=True)
    elif mode == CoolingMode.LIQUID:  # air_or_liquid hardware the plan puts in a hybrid hall's liquid racks
        row.update(accelerator_cooling="liquid")
    return row


@dataclass(frozen=True)
class Planned:
    """One candidate as the planner holds it: cooled one way, its aggregated pool and its costs per system."""

    case: Case
    cand: Candidate
    pool: Pool
    costs: Costs
    row: dict[str, Any]


def _cases() -> list[Planned]:
    rng = np.random.default_rng(42)
    settings = PlanSettings()
    out: list[Planned] = []
    k = 0
    while len(out) < SAMPLES:
        case = _case(rng, k)
        k += 1
        if _colocated_liquid(case):
            continue
        variants, _excluded = hosting_variants([case.cand], case.s)
        for v in variants[:1] if rng.random() < 0.5 else variants[-1:]:
            pools, _ = build_pools([v], case.s, settings, workload(case.s, settings))
            pool = next(p for p in pools if p.role == PoolRole.AGGREGATED)
            flow = case.demand_share * case.systems * pool.raw_capacity  # the plan's flow of requests/s
            out.append(Planned(case, v, pool, candidate_costs(v, case.s), _row(case, v.cooling_mode, flow)))
    return out[:SAMPLES]


def _colocated_liquid(case: Case) -> bool:
    """A rented candidate needing liquid in an air hall: the one case the two still model apart. The planner rents
    it off site; the engine keeps a rented fleet in the facility (``in_facility``: its rent excludes energy) or at
    least at the facility's PUE, so it retrofits the hall for it (or calls it unhostable without a retrofit).
    """
    return case.cand.ownership == Ownership.RENT and case.cand.hardware_cooling == "liquid" and (
        case.s.facility_cooling == "air")


@pytest.fixture(scope="module")
def evaluated() -> tuple[list[Planned], pd.DataFrame]:
    cases = _cases()
    table = economics.evaluate(pd.DataFrame([p.row for p in cases]))
    assert table["valid"].all() and table["feasible"].all(), table.loc[~table["feasible"], "infeasible_reason"]
    return cases, table


def test_the_sample_covers_every_ownership_and_cooling(evaluated: Any) -> None:
    cases, _ = evaluated
    assert len(cases) == SAMPLES
    assert {p.cand.ownership for p in cases} == {Ownership.OWN, Ownership.RENT}
    assert {p.cand.cooling_mode for p in cases} == set(CoolingMode)
    assert {p.case.s.facility_cooling for p in cases} == {"air", "liquid", "hybrid"}
    assert any(p.cand.rack_scale for p in cases) and any(math.isnan(p.cand.system_rack_units) for p in cases)
    assert {p.case.s.rent_includes_energy for p in cases} == {True, False}
    assert {p.case.s.carbon_usd_per_tonne > 0 for p in cases} == {True, False}


def test_planner_and_engine_agree_on_racks_power_capacity_cost_and_emissions(evaluated: Any) -> None:
    cases, table = evaluated
    for p, (_, r) in zip(cases, table.iterrows(), strict=True):
        c, s, n, k, u = p.cand, p.case.s, p.case.systems, p.costs, p.case.demand_share
        flow = u * n * p.pool.raw_capacity  # requests/s: the pool runs at u of its full load
        assert r["systems"] == n
        assert r["capacity_requests_per_s_per_accelerator"] * c.accelerators_per_system == pytest.approx(
            p.pool.raw_capacity, rel=REL), c.name
        assert r["utilization"] == pytest.approx(u, rel=REL), c.name
        if c.on_site:
            assert r["systems_per_rack"] == rack_systems(c, s, c.cooling_mode), c.name
            assert r["racks"] == racks_for(c, s, n), c.name
            assert r["facility_power_kw"] == pytest.approx(n * k.facility_kw, rel=REL), c.name
        assert r["pue_effective"] == pue_for(s, c.cooling_mode), c.name
        assert r["average_it_power_kw"] * r["pue_effective"] == pytest.approx(
            n * (k.idle_kw + u * k.busy_kw), rel=REL), c.name
        # the plan's cost of the pool: per system held, plus the energy of its flow
        per_hour = n * (k.fixed_usd_per_hour + k.rent_usd_per_hour) + flow * p.pool.energy_usd_per_flow_hour
        assert r["cost_usd_per_hour"] == pytest.approx(per_hour, rel=REL), c.name
        tokens_day = flow * (s.input_tokens_per_request + s.output_tokens_per_request) * SECONDS_PER_DAY
        assert r["cost_usd_per_m_tokens"] == pytest.approx(
            cost_per_m_tokens(per_hour * HOURS_PER_DAY, tokens_day), rel=REL), c.name
        embodied_day = r["embodied_kgco2e_per_m_tokens"] * tokens_day / 1e6
        assert embodied_day == pytest.approx(n * k.embodied_kg_per_hour * HOURS_PER_DAY, rel=REL), c.name


def test_a_72_8_kw_rack_holds_14_systems_of_5_2_kw_in_the_planner_as_in_the_engine() -> None:
    # 72.8 kW / 5.2 kW = 14 systems a rack (13.999999999999998 in floating point); 112 systems fill 112 / 14 = 8 racks
    s = Scenario(name="rack", accelerator="h100-sxm", accelerator_count=112 * 8, system_power_kw=5.2,
                 rack_power_kw=72.8, system_rack_units=1, output_tokens_per_s_per_accelerator=1000,
                 demand_output_tokens_per_day=1e9)
    c = Candidate("h100 own", Ownership.OWN, accelerators_per_system=8, system_power_kw=5.2, system_rack_units=1)
    r = economics.evaluate_scenario(s)
    assert rack_systems(c, s, CoolingMode.AIR) == r["systems_per_rack"] == 14
    assert racks_for(c, s, 112) == r["racks"] == 8
    assert racks_for(c, s, 113) == 9  # one system more opens a ninth rack
