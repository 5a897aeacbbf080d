"""Fleet sizing speed: 100,000 scenarios sized from demand (mixed accelerators, cooling, rack limits, site power,
retrofit allowed or not) through `economics.evaluate`, with systems, racks, MW and feasibility. Prints the rate.

Usage: python bench/fleet.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402


def scenarios(n: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    accs = np.array(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "gb300-nvl72"])
    return pd.DataFrame({
        "accelerator": accs[rng.integers(0, len(accs), n)],
        "accelerator_price_usd": rng.uniform(15_000, 60_000, n),
        "output_tokens_per_s_per_accelerator": rng.uniform(200, 15_000, n),
        "demand_output_tokens_per_day": rng.uniform(1e8, 1e12, n),
        "peak_to_average": rng.uniform(1.0, 3.0, n),
        "headroom": rng.uniform(0.0, 0.3, n),
        "facility_cooling": np.array(["air", "liquid", "hybrid"])[rng.integers(0, 3, n)],
        "allow_liquid_retrofit": rng.random(n) < 0.5,
        "site_power_mw": np.where(rng.random(n) < 0.5, rng.uniform(0.5, 100, n), np.nan),
    })


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    df = scenarios(args.rows)
    economics.evaluate(df.iloc[:100])
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        out = economics.evaluate(df)
        best = min(best, time.perf_counter() - t)
    feasible = out["feasible"].astype(bool)
    print(f"sized {args.rows:,} fleets in {best:.3f} s = {args.rows / best:,.0f} scenarios/s (best of 3); "
          f"{int(feasible.sum()):,} feasible, {int((~feasible).sum()):,} infeasible with a stated reason; "
          f"{int(out['racks'].sum()):,} racks and {out['facility_power_kw'].sum() / 1000:,.0f} MW in all")


if __name__ == "__main__":
    main()
