"""Two ideas for #43's planner targets measured (branch `planner7`); the planner uses neither (docs/speed.md, "Planner
speed"): what bounds the full catalog's proof, and a Plan page edit's stage 1 started from the previous edit's plan.

``--census``: the full catalog's proof model (bench/plan_proof.py's ``full``: its dominated pools closed, the stages'
plan as the start). Each set of at most ``max_pools`` of its open pools alone (the others closed): the LP of that
set (rented counts and binaries continuous), and how many sets are under the plan's cost (each would need a MILP of
its own to rule out); then HiGHS at a zero gap from the plan with only the pools of ``--keep`` open (every open pool
by default), ``--rounds`` times.

``--chain``: the Plan page's stage-1 MILPs (stage 1 of the model of every pool, and of the plan by the hour) along
two chains of demand edits 0.2e9 tokens a day apart (bench/plan.py's page demands, in order), solved by HiGHS as the
planner runs it (``milp._milp``) and again from the previous edit's stage-1 answer (``milp._highs_run``, HiGHS's
``setSolution``; it breaks the new edit's demand rows by 1-4 %, and HiGHS completes it). CPU of each, their costs,
and whether the columns came back the same.

Usage: python bench/plan_starts.py --census [--keep 6,15,24,27] [--rounds 2] | --chain
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plan import PAGE_DEMANDS, PAGE_LINK  # noqa: E402  (bench/plan.py's page edits)
from plan_proof import models  # noqa: E402  (bench/plan_proof.py's proof models)

import economics  # noqa: E402
from economics.studies import planner  # noqa: E402
from economics.studies.planner import milp, rounding  # noqa: E402
from economics.studies.planner.model import PlanModel  # noqa: E402
from ui import links  # noqa: E402


def closed(m: PlanModel, shut: list[int]) -> PlanModel:
    """``m`` with the pools ``shut`` closed (their counts, flows and open binary bounded at 0)."""
    assert m.rules is not None
    ub = list(m.ub)
    for (p, _), j in [*m.count_col.items(), *m.flow_col.items()]:
        if p in shut:
            ub[j] = 0.0
    for p in shut:
        ub[m.rules.open_col[p]] = 0.0
    return replace(m, ub=ub)


def census(keep: list[int] | None, rounds: int) -> None:
    """The ``--census`` figures (the module's docstring)."""
    milp.TIME_LIMIT_S = 600.0  # CPU-bound figures on a shared machine: no wall-clock stop
    proof = models(["full"])["full"]
    m = proof.m
    assert m.rules is not None
    cost = float(np.dot(m.c, proof.start))
    pools = [p for p, z in m.rules.open_col.items() if m.ub[z] > 0]
    limit = int(next(b for b, kind in zip(m.b, m.row_kind, strict=True) if kind.value == "distinct pools"))
    t, lps = time.process_time(), {}
    for k in range(1, limit + 1):
        for few in itertools.combinations(pools, k):
            out = milp.relaxation(closed(m, [p for p in pools if p not in few]))
            lps[few] = out[1] if out is not None else np.inf
    cpu = time.process_time() - t
    under = sorted((v, few) for few, v in lps.items() if v < cost)
    print(f"the full catalog's proof model: {len(pools)} open pools, at most {limit}; {len(lps):,} sets, their LPs "
          f"{cpu:.1f} s CPU ({cpu / len(lps) * 1000:.1f} ms each); the least {under[0][0]:,.2f} ({under[0][1]}); "
          f"under the plan's {cost:,.2f}: {len(under)} (under 99 %: {sum(v < 0.99 * cost for v, _ in under)}); "
          f"pools in them: {sorted({p for _, few in under for p in few})}")
    kept = keep or pools
    small = closed(m, [p for p in pools if p not in kept])
    for _ in range(rounds):
        milp.clear_milp_memo()
        t = time.process_time()
        out = milp.prove(small, proof.start, gap=0.0, nodes=100_000, cuts=rounding.demand_cuts(small))
        print(f"HiGHS at a zero gap from the plan, {len(kept)} pools open: {time.process_time() - t:.2f} s CPU, "
              f"{out.mip_node_count} nodes, {out.fun:,.2f} within {out.mip_dual_bound:,.2f}", flush=True)
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


Call = tuple[PlanModel, list[int] | None, list[float] | None, list[float] | None, float, Any]


def stage_ones(s0: economics.Scenario, demand: float) -> list[Call]:
    """The stage-1 MILPs (640 and 598 columns on the page's models) of one edit's stages, with their answers."""
    calls: list[Call] = []
    real = milp.run_milp

    def spy(m: PlanModel, integer: list[int] | None = None, lb: list[float] | None = None,
            ub: list[float] | None = None, gap: float = milp.MIP_REL_GAP, nodes: int | None = None) -> Any:
        out = real(m, integer, lb, ub, gap, nodes)
        if m.rules is not None and integer is not None:  # stage 1: rented counts continuous
            calls.append((m, integer, lb, ub, gap, out))
        return out

    users = [mod for mod in list(sys.modules.values())
             if getattr(mod, "__name__", "").startswith("economics.studies.planner")
             and getattr(mod, "run_milp", None) is real]
    for mod in users:
        mod.run_milp = spy
    try:
        milp.clear_milp_memo()
        page = links.default_settings()
        planner.plan_stages(s0.model_copy(update={"demand_output_tokens_per_day": demand}),
                            links.plan_settings(page), None, list(page[links.PLAN_PREFIX + "accelerators"])).result()
    finally:
        for mod in users:
            mod.run_milp = real
    return calls


def highs(call: Call, start: np.ndarray | None) -> tuple[float, Any]:
    """HiGHS on a captured stage-1 MILP as the planner runs it, or from ``start``: (thread CPU, its answer)."""
    m, integer, lb, ub, gap, _ = call
    c, lo, hi = (np.asarray(v, dtype=float) for v in (m.c, lb or m.lb, ub or m.ub))
    whole, b = np.asarray(integer or m.integer), np.asarray(m.b, dtype=float)
    a = csc_matrix(m.matrix())
    a.sort_indices()
    options = {"mip_rel_gap": gap, "time_limit": 600.0}
    t = time.thread_time()
    out = (milp._milp(a, c, (lo, hi), b, whole, options) if start is None else
           milp._highs_run(a, c, lo, hi, b, whole, options, start))
    return time.thread_time() - t, out


def chain() -> None:
    """The ``--chain`` figures (the module's docstring)."""
    s0 = economics.Scenario(**{**economics.default_scenario().model_dump(), **PAGE_LINK})
    cold_total = warm_total = 0.0
    moved = bases = 0
    for demands in (PAGE_DEMANDS[0::2], PAGE_DEMANDS[1::2]):
        before: list[Call] = []
        for demand in demands:
            now = stage_ones(s0, demand)
            for call in now:
                prev = next((p for p in before if len(p[0].c) == len(call[0].c)), None)
                if prev is None or getattr(prev[5], "x", None) is None:
                    continue
                start = np.asarray(prev[5].x, dtype=float)
                broken = float(np.max(call[0].matrix() @ start - np.asarray(call[0].b)))
                cold_cpu, cold = highs(call, None)
                warm_cpu, warm = highs(call, start)
                same = bool(np.allclose(cold.x, warm.x, atol=1e-6))
                whole = np.asarray(call[1], dtype=bool)  # the owned counts and binaries stage 2 keeps
                base = bool(np.allclose(cold.x[whole], warm.x[whole], atol=1e-6))
                bases += not base
                cold_total, warm_total, moved = cold_total + cold_cpu, warm_total + warm_cpu, moved + (not same)
                print(f"{demand:.3g} tokens/day, {len(call[0].c)} columns: from nothing {cold_cpu * 1000:4.0f} ms "
                      f"{cold.fun:,.2f}; from the previous edit's (rows broken by {broken:.3f}) "
                      f"{warm_cpu * 1000:4.0f} ms {warm.fun:,.2f}; the same columns: {same}, the same whole ones: "
                      f"{base}; bounds {cold.mip_dual_bound:,.2f} and {warm.mip_dual_bound:,.2f}", flush=True)
            before = now
    print(f"in all: from nothing {cold_total * 1000:.0f} ms, from the previous edit's {warm_total * 1000:.0f} ms "
          f"({warm_total / cold_total:.2f}x); other columns in {moved}, other whole columns in {bases}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--census", action="store_true")
    parser.add_argument("--keep", default="", help="pools left open for the zero-gap proof, e.g. 6,15,24,27")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--chain", action="store_true")
    args = parser.parse_args()
    if args.census:
        census([int(p) for p in args.keep.split(",")] if args.keep else None, args.rounds)
    if args.chain:
        chain()


if __name__ == "__main__":
    main()
