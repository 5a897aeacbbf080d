"""Interactivity curves for every catalog pair: accelerators x models x precisions x batch 1..max_batch_size
(x every replica size), in one vectorised pass of the roofline. Prints the time (target: all pairs under 1 s).

Usage: python bench/throughput.py [--max-batch 256]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from itertools import product
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from economics import catalog  # noqa: E402
from economics.interactivity import curve_table, pareto_front  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-batch", type=int, default=256)
    args = ap.parse_args()
    pairs = pd.DataFrame(
        [{"accelerator": a, "model": m, "precision": p, "accelerator_count": 8, "max_batch_size": args.max_batch}
         for a, m, p in product(catalog.accelerator_ids(), catalog.models().index, ("bf16", "fp8", "fp4"))])
    curve_table(pairs.iloc[:3], args.max_batch)  # warm the catalog caches outside the timing
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        table = curve_table(pairs, args.max_batch)
        front = pareto_front(table)
        best = min(best, time.perf_counter() - t)
    with_points = table["scenario"].nunique()
    print(f"{len(pairs)} pairs ({len(catalog.accelerator_ids())} accelerators x {len(catalog.models())} models x 3 "
          f"precisions), batch 1..{args.max_batch} x replica sizes: {len(table):,} roofline points, "
          f"{len(front):,} on the Pareto fronts, in {best:.3f} s (best of 3; target < 1 s)")
    print(f"{with_points} pairs have points; the others lack the precision or do not fit any replica size")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
