"""Benchmark the estimate's range: what the low and high ends cost an evaluation, measured in one run.

Every estimated row is evaluated three times (the estimate, then its P10 and P90 ends through the same stages), so a
table of estimates costs more than one of measured figures. Prints, from one run on this machine:
  - the stages (:func:`economics.engine.pipeline.compute`) over N resolved scenarios whose throughput the roofline
  estimated
    (10 accelerators x N/10 demands), with the range and with its second pass skipped on the same columns: the
    ratio is what the range costs, and the peak memory of each,
  - ``evaluate(df)`` end to end on the same table (validation and the estimate included), for scale,
  - one scenario through ``evaluate_scenario`` (the app's path; the estimate itself is remembered).

Usage: python bench/ranges.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402
from economics.engine.batch import _mark_throughput  # noqa: E402
from economics.engine.estimate import fill_throughput  # noqa: E402
from economics.engine.pipeline import compute  # noqa: E402
from economics.schema.validation import validate  # noqa: E402

ACCELERATORS = ("h100-sxm", "h200-sxm", "b200", "gaudi3", "mi355x", "a100-sxm", "gb200-nvl72", "h100-sxm", "b200",
                "gaudi3")
SHAPE = {"model": "llama-3.1-70b", "precision": "fp8", "input_tokens_per_request": 3000.0,
         "output_tokens_per_request": 700.0, "target_output_tokens_per_s_per_user": 20.0, "ownership": "rent",
         "rent_usd_per_accelerator_hour": 3.0}


def timed(fn, repeat: int = 3):  # type: ignore[no-untyped-def]
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def peak_mb(fn) -> float:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    n = args.rows
    demand = np.geomspace(1e8, 1e11, max(n // len(ACCELERATORS), 1))
    df = pd.DataFrame([{"accelerator": a, **SHAPE, "demand_output_tokens_per_day": d} for d in demand
                       for a in ACCELERATORS])
    cols, problems = validate(df)
    assert not problems, problems[:3]
    thr = fill_throughput(cols)
    _mark_throughput(cols, thr)
    plain = dict(cols)
    plain["_ranged"] = np.zeros(len(df), dtype=bool)  # the same rows, the range's second pass skipped
    t_range, out = timed(lambda: compute(cols))
    t_plain, _ = timed(lambda: compute(plain))
    m_range, m_plain = peak_mb(lambda: compute(cols)), peak_mb(lambda: compute(plain))
    t_eval, res = timed(lambda: economics.evaluate(df), repeat=1)
    one = {"accelerator": "gaudi3", **SHAPE, "demand_output_tokens_per_day": 1e9}
    economics.evaluate_scenario(one)
    t_one, _ = timed(lambda: [economics.evaluate_scenario(one) for _ in range(200)])
    print(f"{len(df):,} scenarios, {int(cols['_ranged'].sum()):,} with a range "
          f"({int(np.isfinite(out['cost_usd_per_m_tokens_low']).sum()):,} low ends computed)")
    print(f"  the stages with the range   {t_range:6.3f} s, peak {m_range:,.0f} MB")
    print(f"  the stages without it       {t_plain:6.3f} s, peak {m_plain:,.0f} MB")
    print(f"  ratio (with / without)      {t_range / t_plain:6.2f}x")
    print(f"  evaluate(df) end to end     {t_eval:6.2f} s ({len(df) / t_eval:,.0f} rows/s, estimate included)")
    print(f"  one scenario (the app's path, estimate remembered): {t_one / 200 * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
