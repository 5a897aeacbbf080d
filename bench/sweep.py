"""Sweep speed on Dask: 10M generated scenarios on 1 and on 2 local worker processes, against the engine alone.

Prints, from one run on this machine:
  - engine only: `evaluate` on the sweep's first partitions in this process, scaled to the whole sweep;
  - the sweep (generate -> evaluate -> reduce on the workers, combine here) on a LocalCluster of 1 worker and of
    2 workers, each as a ratio to the engine, and the speed-up of 2 workers over 1 (target >= 1.6x);
  - that both runs give the same quantiles, top-k and fronts; the load average (the machine is shared).

Usage: python bench/sweep.py [--scenarios 10000000] [--partition-rows 250000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from distributed import Client  # noqa: E402

from economics.engine.batch import evaluate  # noqa: E402
from economics.studies.sweep import local_cluster, make_sweep, run_dask, scenarios  # noqa: E402

BASE = {"name": "fleet", "accelerator": "h100-sxm", "accelerator_count": 64,
        "output_tokens_per_s_per_accelerator": 2700, "input_tokens_per_s_per_accelerator": 20000,
        "accelerator_price_usd": 30000,
        "price_usd_per_m_output_tokens": 0.6, "electricity_usd_per_kwh": 0.08}
RANGES = {"accelerator_price_usd": (22_000.0, 40_000.0), "output_tokens_per_s_per_accelerator": (2000.0, 3500.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=10_000_000)
    parser.add_argument("--partition-rows", type=int, default=250_000)
    parser.add_argument("--engine-partitions", type=int, default=2, help="partitions timed for the engine alone")
    args = parser.parse_args()
    grid = {"accelerator_count": "8:1024:128", "pue": "1.1:1.5:5", "electricity_usd_per_kwh": "0.04:0.2:10"}
    points = 128 * 5 * 10
    samples = max(1, args.scenarios // points)
    sweep = make_sweep(BASE, grid, RANGES, samples, seed=11, partition_rows=args.partition_rows)
    load_before = os.getloadavg()
    print(f"sweep: {sweep.scenarios:,} scenarios ({points:,} grid points x {samples:,} draws), "
          f"{sweep.partitions} partitions of {args.partition_rows:,}; {os.cpu_count()} CPUs")

    timed = min(args.engine_partitions, sweep.partitions)
    frames = [scenarios(sweep, i).drop(columns="scenario") for i in range(timed)]
    start = time.perf_counter()
    for frame in frames:
        evaluate(frame)
    engine = (time.perf_counter() - start) * sweep.scenarios / sum(len(f) for f in frames)
    print(f"engine only (evaluate in this process, {timed} partitions timed, scaled): {engine:.1f} s "
          f"({sweep.scenarios / engine:,.0f} scenarios/s)")

    results, seconds = {}, {}
    for workers in (1, 2):
        start = time.perf_counter()
        with local_cluster(workers) as cluster, Client(cluster) as client:
            started = time.perf_counter() - start
            warm = make_sweep(BASE, {"pue": "1.1:1.5:" + str(2 * workers)}, {}, 0, partition_rows=1)
            run_dask(warm, client=client)  # each worker imports the engine and reads the catalog once, untimed
            start = time.perf_counter()
            results[workers] = run_dask(sweep, k=10, client=client)
            seconds[workers] = time.perf_counter() - start
        print(f"Dask sweep, {workers} local worker{'s' if workers > 1 else ''}: {seconds[workers]:.1f} s = "
              f"{seconds[workers] / engine:.2f}x the engine ({sweep.scenarios / seconds[workers]:,.0f} scenarios/s; "
              f"cluster start-up {started:.1f} s and a warm-up apart)")
    same = all(getattr(results[1], n).equals(getattr(results[2], n)) for n in ("quantiles", "top"))
    print(f"2 workers over 1: {seconds[1] / seconds[2]:.2f}x (target >= 1.6x); same quantiles and top-k: {same}")
    print(results[2].quantiles.to_string(index=False))
    print(f"load average before / after: {' '.join(f'{x:.2f}' for x in load_before)} / "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
