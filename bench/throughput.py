"""Interactivity curves for every catalog pair: accelerators x models x precisions x batch 1..max_batch_size
(x every replica size), in one vectorised pass of the roofline; and the serving-stack choice (``best``: every
stack's measured front at the target) for every pair at five per-user targets; and the Throughput page's own curve
(``interactivity_curve``: the front, its prefill rates and the cost at every point and measured dot) on
bench/app_latency.py's Throughput state, a new electricity price each call as in a switch session's new state.
Prints wall and CPU times (target: all pairs under 1 s) and the machine's load, since the machine is shared.

Usage: python bench/throughput.py [--max-batch 256] [--curves 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from itertools import product
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402
from economics import catalog  # noqa: E402
from economics.engine.estimate import fill_throughput  # noqa: E402
from economics.schema.validation import validate  # noqa: E402
from economics.studies.interactivity import curve_table, interactivity_curve, pareto_front  # noqa: E402
from ui import links  # noqa: E402

PAGE_STATE = {"model": ["deepseek-v3"], "accelerator": ["h200-sxm"], "precision": ["fp8"],
              "output_tokens_per_s_per_accelerator": [""]}
"""bench/app_latency.py's Throughput link, as the page reads it."""


def page_curve_ms(calls: int) -> tuple[float, float]:
    """CPU of the Throughput page's curve (its call: the stack the evaluation chose) in a new state each call, the
    first call's and the median of the others [ms]."""
    scenario = dict(links.read_whole_link(PAGE_STATE).scenario)
    chosen = economics.evaluate_scenario(scenario)["serving_stack_used"]
    times = []
    for i in range(calls):
        scenario["electricity_usd_per_kwh"] = 0.05 + 0.001 * i
        c = time.process_time()
        interactivity_curve(scenario, chosen=chosen)
        times.append((time.process_time() - c) * 1000)
    return times[0], statistics.median(times[1:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-batch", type=int, default=256)
    ap.add_argument("--curves", type=int, default=15, help="calls of the Throughput page's curve (default 15)")
    args = ap.parse_args()
    pairs = pd.DataFrame(
        [{"accelerator": a, "model": m, "precision": p, "accelerator_count": 8, "max_batch_size": args.max_batch}
         for a, m, p in product(catalog.accelerator_ids(), catalog.models().index, ("bf16", "fp8", "fp4"))])
    curve_table(pairs.iloc[:3], args.max_batch)  # warm the catalog caches outside the timing
    best, cpu = float("inf"), float("inf")
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        table = curve_table(pairs, args.max_batch)
        front = pareto_front(table)
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
    with_points = table["scenario"].nunique()
    print(f"{len(pairs)} pairs ({len(catalog.accelerator_ids())} accelerators x {len(catalog.models())} models x 3 "
          f"precisions), batch 1..{args.max_batch} x replica sizes: {len(table):,} roofline points, "
          f"{len(front):,} on the Pareto fronts, in {best:.3f} s wall, {cpu:.3f} s CPU (best of 3; target < 1 s)")
    stack_rows = pd.concat([pairs.assign(target_output_tokens_per_s_per_user=v, input_tokens_per_request=1024,
                                         output_tokens_per_request=1024) for v in (20, 30, 50, 80, 120)])
    cols, _ = validate(stack_rows.reset_index(drop=True))
    t_stack = float("inf")
    for _ in range(3):
        fresh = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in cols.items()}
        t = time.perf_counter()
        out = fill_throughput(fresh)
        t_stack = min(t_stack, time.perf_counter() - t)
    on_curve = int((out["throughput_source"] == "measured curve").sum())
    print(f"serving stack best: {len(stack_rows):,} pair x target rows ({on_curve} on a published stack's front, "
          f"the rest roofline) in {t_stack:.3f} s (best of 3)")
    first, median = page_curve_ms(max(args.curves, 2))
    print(f"the Throughput page's curve (interactivity_curve, a new price each call): CPU median {median:.1f} ms of "
          f"{max(args.curves, 2) - 1} calls (the process's first {first:.0f} ms)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{with_points} pairs have points; the others lack the precision or do not fit any replica size")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
