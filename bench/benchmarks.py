"""Benchmark import and your own curves: speed and memory, measured in one run.

Prints, from one run on this machine:
  - points/s importing an SGLang JSONL of N runs (import-benchmark's work: read, convert, name curves),
  - rows/s checking a curve file of the same points (what --curves and the upload do), and its peak memory,
  - 100,000 scenarios through `evaluate(df)` with their throughput from a curve file of yours against the same
    scenarios on the catalog's curves: the ratio is what a curve of yours costs a batch.

Usage: python bench/benchmarks.py [--runs 20000] [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402
from economics.schema import user_curves  # noqa: E402


def sglang_lines(n: int, seed: int = 3) -> bytes:
    """``n`` runs of DeepSeek-R1 on 8 H200s at 1k/1k, concurrency 1 to 1,024: TPOT and throughput rising together."""
    rng = np.random.default_rng(seed)
    conc = rng.integers(1, 1025, n)
    lines = []
    for i, c in enumerate(conc):
        c = int(c)
        tpot = 8.0 + 0.03 * c + i * 1e-6  # distinct speeds: one point each
        lines.append(json.dumps({"backend": "sglang", "dataset_name": "random", "max_concurrency": c,
                                 "completed": 100, "total_input_tokens": 102_400, "total_output_tokens": 102_400,
                                 "output_throughput": float(c) * 1000 / tpot * 0.9, "median_tpot_ms": tpot,
                                 "median_ttft_ms": 100 + c, "server_info": {"model_path": "deepseek-ai/DeepSeek-R1"}}))
    return ("\n".join(lines) + "\n").encode()


def timed(fn, repeat: int = 3):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    data = sglang_lines(args.runs)
    t_import, table = timed(lambda: economics.import_benchmark(
        [("runs.jsonl", data)], accelerator="h200-sxm", accelerators=8, precision="fp8"), 1)
    print(f"import-benchmark: {len(table):,} points from {args.runs:,} SGLang runs in {t_import:.2f} s "
          f"({len(table) / t_import:,.0f} points/s)")
    text = economics.curves_csv(table).encode()
    tracemalloc.start()
    t_check, mine = timed(lambda: economics.load_curves(text, "runs.csv"), 1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"curve file check: {len(table):,} rows ({len(text) / 1e6:.1f} MB) in {t_check:.2f} s "
          f"({len(table) / t_check:,.0f} rows/s), peak {peak / 1e6:.0f} MB traced")
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8",
                          "input_tokens_per_request": 1024, "output_tokens_per_request": 1024,
                          "target_output_tokens_per_s_per_user": rng.uniform(20, 90, args.rows),
                          "accelerator_count": 8, "ownership": "rent"})
    mine_small = economics.load_curves(economics.curves_csv(economics.import_benchmark(
        [Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "benchmarks" / "sglang_bench_serving.jsonl"],
        accelerator="h200-sxm", accelerators=8, precision="fp8")).encode(), "mine.csv")
    t_catalog, out_catalog = timed(lambda: economics.evaluate(frame))
    t_mine, out_mine = timed(lambda: economics.evaluate(frame.assign(curves_sha256=mine_small.sha256)))
    share = (out_mine["throughput_source"] == "your measured curve").mean()
    print(f"evaluate {args.rows:,} rows: catalog curves {t_catalog:.2f} s, your curve file {t_mine:.2f} s "
          f"(ratio {t_mine / t_catalog:.2f}; {share:.0%} of rows inside your curve's measured range)")
    assert mine.sha256 in {user_curves.loaded(mine.sha256).sha256} and len(out_catalog) == args.rows  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
