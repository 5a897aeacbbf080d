"""Planner speed: the full catalog x 3 roles x own/rent (and the existing fleet) x 24 distinct hours, and 20-point
frontiers (cost vs per-user speed target, cost vs site MW). Prints the measured times, the model's size, the
optimality gap and the peak memory; targets: one plan <= 2 s, a 20-point frontier <= 10 s. No timed tests: this
script reports, it does not assert.

Usage: python bench/plan.py
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402
from economics import catalog, planner  # noqa: E402

PROFILE = " ".join(f"{v:.4f}" for v in planner.demand_profile("diurnal", 2.0) + np.linspace(0.0, 0.05, 24))
"""24 distinct hours: the diurnal day (peak 2 x average at 14:00) plus a small ramp so no two hours are alike."""


def scenario() -> economics.Scenario:
    return economics.Scenario(
        name="bench", model="llama-3.1-70b", precision="fp8", target_output_tokens_per_s_per_user=30,
        demand_output_tokens_per_day=2e10, accelerator="h100-sxm", existing_accelerators=64, site_power_mw=2.0,
        allow_liquid_retrofit=True, kv_link_gb_per_s=400)


def timed(fn, repeats: int = 3):  # type: ignore[no-untyped-def]
    """Best wall-clock time of ``repeats`` runs, the CPU time of that run, and the result."""
    best, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        if time.perf_counter() - t < best:
            best, cpu = time.perf_counter() - t, time.process_time() - c
    return best, cpu, out


def main() -> None:
    s = scenario()
    ids = catalog.accelerator_ids()
    t = time.perf_counter()
    cands, excluded = planner.catalog_candidates(s)
    cold = time.perf_counter() - t
    warm, _, _ = timed(lambda: planner.catalog_candidates(s), 1)
    hosted, more = planner.hosting_variants(cands, s)
    print(f"catalog: {len(ids)} accelerators -> {len(cands)} candidates (own/rent/existing), {len(hosted)} with "
          f"cooling variants; {len(excluded) + len(more)} left out; rates from the engine in {cold:.2f} s cold "
          f"(engine caches built), {warm:.2f} s warm")

    for label, settings in (("24 hours, no TTFT", planner.PlanSettings(demand_profile=PROFILE)),
                            ("24 hours, P99 TTFT 1 s", planner.PlanSettings(demand_profile=PROFILE,
                                                                             ttft_target_s=1.0))):
        wl = planner.workload(s, settings)
        pools, _ = planner.build_pools(hosted, s, settings, wl)
        costs = [planner.candidate_costs(c, s) for c in hosted]
        m, _, weights = planner._build(pools, hosted, costs, s, settings, wl, {})
        best, cpu, result = timed(lambda st=settings: planner.solve_plan(s, st, hosted, excluded + more))
        assert result is not None
        print(f"plan ({label}): {len(pools)} pools (candidate x role), {len(weights)} distinct hours, "
              f"{len(m.c):,} variables ({sum(m.integer):,} integer), {len(m.rows):,} rows -> solved in {best:.2f} s "
              f"wall, {cpu:.2f} s CPU (best of 3; target <= 2 s, ratio {best / 2.0:.2f}); feasible {result.feasible}, "
              f"{result.summary.get('cost_usd_per_day', 0):,.0f} USD/day, gap to the bound "
              f"{result.summary.get('mip_gap', 0):.2%}")

    settings = planner.PlanSettings(demand_profile="diurnal")
    t_speed, c_speed, speed = timed(lambda: planner.frontier_speed(s, settings), 1)
    t_site, c_site, site = timed(lambda: planner.frontier_site(s, settings, candidates=cands), 1)
    assert speed is not None and site is not None
    print(f"frontier cost vs per-user speed: {len(speed)} points ({int(speed['feasible'].sum())} feasible) in "
          f"{t_speed:.2f} s wall, {c_speed:.2f} s CPU, incl. re-rating the catalog at every target (target <= 10 s, "
          f"ratio {t_speed / 10:.2f})")
    print(f"frontier cost vs site MW: {len(site)} points ({int(site['feasible'].sum())} feasible) in {t_site:.2f} s "
          f"wall, {c_site:.2f} s CPU, incl. the plan without a site limit that sets the range (target <= 10 s, "
          f"ratio {t_site / 10:.2f})")
    print(f"load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} "
          "cores (wall times stretch when the machine is shared; CPU times do not)")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS of this process): {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
