"""Monte Carlo speed: 10,000 samples of a full scenario (five uncertain inputs) through the vectorised engine,
and the tornado. Prints the time (target: 10,000 samples under 0.5 s), and the same samples evaluated the plain way
(every sample a row of one table through ``economics.evaluate``, as the Monte Carlo ran before) in the same run,
with whether every percentile and mean is identical.

Usage: python bench/uncertainty.py [--samples 10000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import economics  # noqa: E402
from economics.engine.batch import as_scenario  # noqa: E402
from economics.studies.compare import given_fields, scenario_frame  # noqa: E402
from economics.studies.uncertainty import MonteCarlo, monte_carlo, tornado  # noqa: E402

RANGES = {"electricity_usd_per_kwh": (0.04, 0.25), "accelerator_price_usd": (20_000.0, 45_000.0),
          "output_tokens_per_s_per_accelerator": (1_800.0, 3_500.0), "pue": (1.2, 1.8), "cost_of_capital": (0.05, 0.15)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10_000)
    args = ap.parse_args()
    scenario = economics.with_changes(economics.default_scenario(), pue=1.5)
    monte_carlo(scenario, RANGES, samples=100, seed=0)  # warm the catalogs
    best = float("inf")
    for seed in range(3):
        t = time.perf_counter()
        mc = monte_carlo(scenario, RANGES, samples=args.samples, seed=seed)
        _ = mc.summary, mc.samples  # the tables are built when first read: timed too
        best = min(best, time.perf_counter() - t)
    plain_s, same = _plain(scenario, args.samples, mc)
    t = time.perf_counter()
    tornado(scenario, RANGES)
    tornado_s = time.perf_counter() - t
    s = mc.summary.set_index("output").loc["cost_usd_per_m_tokens"]
    print(f"Monte Carlo: {args.samples:,} samples of the default scenario with {len(RANGES)} uncertain inputs in "
          f"{best:.3f} s (best of 3; target < 0.5 s); cost per M tokens P10 {s['p10']:.4f}, P50 {s['p50']:.4f}, "
          f"P90 {s['p90']:.4f} USD")
    print(f"the same samples as rows of one table through economics.evaluate: {plain_s:.3f} s (best of 3), "
          f"{plain_s / best:.1f}x the Monte Carlo's time; every P10/P50/P90 and mean identical: {same}")
    print(f"tornado over {len(RANGES)} inputs: {tornado_s * 1000:.0f} ms")


def _plain(scenario: Any, samples: int, mc: MonteCarlo) -> tuple[float, bool]:
    """Best-of-3 time of ``mc``'s samples (its draws) evaluated as a table, and whether its summary equals
    ``mc``'s."""
    base, drawn = as_scenario(scenario), mc.drawn
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        rows = [given_fields(base.model_dump(), keep=drawn)]
        table = economics.evaluate(scenario_frame(rows, varying=drawn, repeat=samples))
        best = min(best, time.perf_counter() - t)
    same = True
    for row in mc.summary.to_dict("records"):
        values = table[row["output"]].astype(float).dropna().to_numpy()
        if values.size:
            same &= [row[k] for k in ("p10", "p50", "p90", "mean")] == [*np.percentile(values, [10, 50, 90]),
                                                                         values.mean()]
        else:
            same &= row["samples"] == 0
    return best, same


if __name__ == "__main__":
    main()
