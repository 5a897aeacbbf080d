"""What the hour-by-hour day costs the vectorised engine: the same rows evaluated with a flat price and no carbon,
and with a tariff by the hour, a diurnal demand, a grid region and a carbon price (the (24, rows) columns of
:mod:`economics.engine.hours`), in one run; then rented rows in the reserved and spot tiers.

Prints scenarios/s of each (best of 3), the ratio to the flat rows, and the peak resident memory of this process.
No timed tests: this script reports, it does not assert.

Usage: python bench/hours.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402


def rows(n: int, seed: int = 1) -> pd.DataFrame:
    """``n`` owned and rented H100 and B200 fleets of varied size, throughput, price and demand."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "name": [f"r{i}" for i in range(n)],
        "accelerator": rng.choice(["h100-sxm", "b200"], n),
        "ownership": rng.choice(["own", "rent"], n),
        "accelerator_count": rng.integers(8, 512, n),
        "output_tokens_per_s_per_accelerator": rng.uniform(500, 5000, n).round(1),
        "demand_output_tokens_per_day": rng.uniform(1e8, 5e10, n).round(0),
        "electricity_usd_per_kwh": rng.uniform(0.04, 0.2, n).round(4),
        "rent_includes_energy": "false",
    })


def best_of(df: pd.DataFrame, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = economics.evaluate(df)
        best = min(best, time.perf_counter() - t)
        assert bool(out["valid"].all()), out.loc[~out["valid"], "error"].head().tolist()
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    n = ap.parse_args().rows
    flat = rows(n)
    hourly = flat.assign(electricity_tariff=np.where(np.arange(n) % 2, "de-lu-day-ahead-2024", "sce-tou-8-d-summer"),
                         demand_profile="diurnal", grid_region=np.where(np.arange(n) % 3, "de", "us-camx-california"),
                         carbon_usd_per_tonne=100.0)
    on_demand = flat.assign(ownership="rent")
    tiers = on_demand.assign(rent_tier=np.where(np.arange(n) % 2, "reserved", "spot"))
    for df in (flat, hourly, tiers):
        economics.evaluate(df.head(1000))  # the catalogs loaded and every path's caches built before timing
    for label, base, df in (
            ("a tariff by the hour, a diurnal demand, a grid region and carbon at 100 USD/t", flat, hourly),
            ("rented in the reserved and spot tiers (against the same rows on demand)", on_demand, tiers)):
        t_base, t = best_of(base), best_of(df)
        print(f"{n:,} rows, {label}: {n / t:,.0f} scenarios/s ({t:.2f} s) against {n / t_base:,.0f} ({t_base:.2f} s): "
              f"{t / t_base:.2f} x the time")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS of this process): {peak_mb:,.0f} MB")


if __name__ == "__main__":
    main()
