"""Batch evaluation speed and memory: vectorised `economics.evaluate(df)` vs the single-scenario path row by row.

Prints, from one run on this machine:
  - scenarios/s for 100,000 varied rows through `evaluate(df)` (best of 3),
  - scenarios/s through `evaluate_scenario` one row at a time (a sample of rows, same mix), and the speed-up,
  - one scenario through `evaluate_scenario` (the app's path), as a ratio to its target (1 ms measured, 1.5 ms with an
    estimate): the median of several fresh processes' medians, each process's figure printed beside it (one
    process's figure swung 0.7-1.4 ms from one process to the next with the same work done: docs/speed.md, #43
    "steady"),
  - time and peak resident memory for 1,000,000 rows, measured in a fresh child process, as ratios to the targets
    (2 s, 1.5 GB),
  - a fresh process's import of the Cost page's modules and its first scenario (the Python part of a cold start).

Usage: python bench/batch.py [--rows 100000] [--sample 400] [--million-rows 1000000] [--processes 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402


def scenarios(n: int, seed: int = 7) -> pd.DataFrame:
    """A realistic mix: owned and rented, fixed and demand-sized fleets, with and without prices and prefill."""
    rng = np.random.default_rng(seed)
    accs = np.array(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "mi300x", "mi325x"])
    own = rng.random(n) < 0.6
    acc = accs[rng.integers(0, len(accs), n)]
    fixed = rng.random(n) < 0.5
    return pd.DataFrame({
        "name": [f"s{i}" for i in range(n)],
        "accelerator": acc,
        "ownership": np.where(own, "own", "rent"),
        "accelerator_count": np.where(fixed, rng.integers(8, 20000, n), np.nan),
        "accelerator_price_usd": rng.uniform(10_000, 60_000, n),
        "rent_usd_per_accelerator_hour": rng.uniform(1.0, 6.0, n),
        "electricity_usd_per_kwh": rng.uniform(0.03, 0.25, n),
        "pue": rng.uniform(1.1, 1.8, n),
        "input_tokens_per_request": rng.uniform(100, 20_000, n),
        "output_tokens_per_request": rng.uniform(50, 2_000, n),
        "prefix_cache_hit_rate": rng.uniform(0, 0.8, n),
        "output_tokens_per_s_per_accelerator": rng.uniform(100, 15_000, n),
        "input_tokens_per_s_per_accelerator": np.where(rng.random(n) < 0.7, rng.uniform(2_000, 80_000, n), np.nan),
        "demand_output_tokens_per_day": np.where(rng.random(n) < 0.8, rng.uniform(1e6, 1e11, n), np.nan),
        "peak_to_average": rng.uniform(1.0, 3.0, n),
        "price_usd_per_m_input_tokens": np.where(rng.random(n) < 0.7, rng.uniform(0.05, 3, n), np.nan),
        "price_usd_per_m_output_tokens": np.where(rng.random(n) < 0.7, rng.uniform(0.2, 15, n), np.nan),
    }).assign(demand_output_tokens_per_day=lambda d: d["demand_output_tokens_per_day"].where(
        d["accelerator_count"].notna(), d["demand_output_tokens_per_day"].fillna(1e9)))


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def child(rows: int) -> None:
    df = scenarios(rows, seed=11)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    economics.evaluate(df.iloc[:1000])  # warm caches (catalog load) outside the timing
    t, cpu = time.perf_counter(), time.process_time()
    out = economics.evaluate(df)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"rows": rows, "seconds": seconds, "cpu_seconds": cpu, "valid": int(out["valid"].sum()),
                      "peak_rss_mb": peak_kb / 1024, "rss_before_mb": base_rss / 1024}))


def per_call_s(fn, calls: int = 200) -> float:  # type: ignore[no-untyped-def]
    """Median of five runs of ``calls`` calls, per call [s]."""
    fn()
    return float(np.median([best_of(lambda: [fn() for _ in range(calls)], repeat=1) for _ in range(5)])) / calls


def single_cases() -> dict[str, Callable[[], dict[str, object]]]:
    """The app's path's cases, each a maker of the scenario dict it passes: the default with a measured throughput,
    and with a model's estimated throughput, where each call either changes a price (the estimate is reused), the
    per-user target or the model and accelerator (a new estimate every call)."""
    measured = economics.Scenario().model_dump() | {"output_tokens_per_s_per_accelerator": 1000.0,
                                                      "accelerator_count": 8}
    estimated = economics.Scenario().model_dump() | {"model": "llama-3.1-70b", "precision": "fp8",
                                                       "output_tokens_per_s_per_accelerator": None,
                                                       "accelerator_count": 8}
    pairs = [{"model": m, "accelerator": a, "precision": p} for m, a, p in (
        ("llama-3.1-8b", "a100-sxm", "bf16"), ("deepseek-v3", "h200-sxm", "fp8"), ("qwen3-32b", "b200", "fp8"),
        ("llama-3.1-405b", "h100-sxm", "fp8"), ("gpt-oss-120b", "h100-sxm", "fp8"))]
    calls = iter(range(10**9))

    def new_pair(i: int) -> dict[str, object]:
        return estimated | pairs[i % len(pairs)] | {"target_output_tokens_per_s_per_user": 20.0 + i * 1e-6}

    return {
        "measured throughput (app default)": lambda: measured,
        "estimated (llama-3.1-70b fp8, H100), a price changes": lambda: estimated | {
            "price_usd_per_m_output_tokens": 1.0 + next(calls) * 1e-6},
        "estimated, the per-user target changes (new estimate)": lambda: estimated | {
            "target_output_tokens_per_s_per_user": 20.0 + next(calls) * 1e-6},
        "estimated, model and accelerator change (new estimate, 5 pairs in turn)": lambda: new_pair(next(calls)),
    }


def per_call_wall_cpu(fn, calls: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """:func:`per_call_s`'s five runs, each timed on the wall clock and in this process's CPU time: the medians per
    call [s] (the CPU time leaves out the time another process held the core)."""
    fn()
    wall, cpu = [], []
    for _ in range(5):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(calls):
            fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return float(np.median(wall)) / calls, float(np.median(cpu)) / calls


def single_child() -> None:
    """In this fresh process: each case's `evaluate_scenario` per call [s], wall and CPU (medians of 5 x 100)."""
    print(json.dumps({label: per_call_wall_cpu(lambda m=make: economics.evaluate_scenario(m()), calls=100)
                      for label, make in single_cases().items()}))


def single_scenario(processes: int) -> None:
    """The app's path: one scenario through evaluate_scenario (lean, one-row columns), measured in ``processes``
    fresh processes one after another, against the same scenario as a one-row table through evaluate(df) (in this
    process).

    Why several processes: one process's figure (its half-second of calls) swung 0.7-1.4 ms from one run to the
    next with the same work done (the same instructions to within 0.3 % under callgrind whatever the hash seed, the
    same Python calls after this bench's earlier steps, one young collection per 100 calls; docs/speed.md, #43
    "steady"), so it is a draw from what else the machine did meanwhile. The headline is the median of the
    processes' medians; every process's figure is printed (a slow one is shown, not hidden), and their CPU times.
    """
    runs = [subprocess.run([sys.executable, __file__, "--single"], capture_output=True, text=True, check=True)
            for _ in range(processes)]
    per_process = [json.loads(r.stdout.strip().splitlines()[-1]) for r in runs]
    for label, make in single_cases().items():
        wall = [p[label][0] for p in per_process]
        lean, cpu = float(np.median(wall)), float(np.median([p[label][1] for p in per_process]))
        table = per_call_s(lambda m=make: economics.evaluate(pd.DataFrame([m()])), calls=20)
        target = 1e-3 if label.startswith("measured") else 1.5e-3
        print(f"one scenario, {label}: evaluate_scenario {lean * 1e3:.2f} ms = {lean / target:.2f} x the target "
              f"({target * 1e3:g} ms), the median of {processes} fresh processes' medians "
              f"({', '.join(f'{x * 1e3:.2f}' for x in wall)} ms; CPU {cpu * 1e3:.2f} ms); as a one-row "
              f"evaluate(df) {table * 1e3:.2f} ms ({table / lean:.1f}x, in this process)")


def first_scenario() -> None:
    """In this fresh process: the Cost page's imports (ui/cost.py's), then its first scenario and a second one."""
    t = time.perf_counter()
    from economics.report import charts, kpis  # noqa: F401
    from ui import common, day, editor, report, state, studies  # noqa: F401
    imports = time.perf_counter() - t
    t = time.perf_counter()
    economics.evaluate_scenario(economics.default_scenario())
    first = time.perf_counter() - t
    t = time.perf_counter()
    economics.evaluate_scenario(economics.default_scenario().model_copy(update={"electricity_usd_per_kwh": 0.11}))
    print(json.dumps({"imports": imports, "first": first, "next": time.perf_counter() - t,
                      "scipy_stats": "scipy.stats" in sys.modules}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--million-rows", type=int, default=1_000_000)
    ap.add_argument("--processes", type=int, default=5,
                    help="fresh processes that each measure one scenario (the median of their medians is shown)")
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--first", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    if args.first:
        first_scenario()
        return
    if args.single:
        single_child()
        return

    df = scenarios(args.rows)
    economics.evaluate(df.iloc[:100])
    vec_s = best_of(lambda: economics.evaluate(df))
    out = economics.evaluate(df)
    assert out["valid"].all(), out.loc[~out["valid"], "error"].head().tolist()

    records = df.iloc[: args.sample].to_dict(orient="records")
    clean = [{k: v for k, v in r.items() if not (v is pd.NA or (isinstance(v, float) and np.isnan(v)))}
             for r in records]
    t = time.perf_counter()
    singles = [economics.evaluate_scenario(r) for r in clean]
    row_s = (time.perf_counter() - t) / len(clean)
    # same numbers both ways (the property tests check every column; this is a spot check)
    assert np.allclose([s["cost_usd_per_m_tokens"] for s in singles],
                       out["cost_usd_per_m_tokens"].iloc[: args.sample].astype(float), rtol=1e-9)

    vec_rate = args.rows / vec_s
    print(f"vectorised evaluate(df): {args.rows:,} rows in {vec_s:.3f} s = {vec_rate:,.0f} scenarios/s (best of 3)")
    print(f"row by row evaluate_scenario: {1 / row_s:,.0f} scenarios/s ({row_s * 1e3:.2f} ms/row, "
          f"{args.sample} rows)")
    print(f"speed-up vectorised / row-by-row: {vec_rate * row_s:,.0f}x (target >= 50x)")
    single_scenario(args.processes)

    # variants of one scenario (the app's cost curve): resolved once, then the stages only, vs the batch path
    one = clean[0] | {"accelerator_count": 64}
    shares = [(i + 1) / 20 * 1e9 for i in range(20)]
    rows = pd.DataFrame([{**one, "demand_output_tokens_per_day": d, "demand_input_tokens_per_day": None}
                         for d in shares])
    batch_s = best_of(lambda: economics.evaluate(rows), repeat=5)
    resolved = economics.engine.batch.resolve_scenario(one)
    var_s = best_of(lambda: economics.engine.batch.evaluate_variants(
        resolved, demand_output_tokens_per_day=shares, demand_input_tokens_per_day=[None] * 20), repeat=5)
    print(f"20 variants of one scenario: {var_s * 1e3:.1f} ms from the resolved scenario vs {batch_s * 1e3:.1f} ms "
          f"through evaluate(df): {batch_s / var_s:.1f}x")

    proc = subprocess.run([sys.executable, __file__, "--child", str(args.million_rows)], capture_output=True,
                          text=True, check=True)
    m = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{m['rows']:,} rows: {m['seconds']:.2f} s = {m['seconds'] / 2.0:.2f} x the target for a million (2 s; "
          f"CPU {m['cpu_seconds']:.2f} s, the figure to compare on a loaded machine), "
          f"peak RSS {m['peak_rss_mb']:,.0f} MB = {m['peak_rss_mb'] / 1536:.2f} x the target (1,536 MB), of which "
          f"{m['rss_before_mb']:,.0f} MB before evaluate (input frame + libraries)")
    first = subprocess.run([sys.executable, __file__, "--first"], capture_output=True, text=True, check=True)
    f = json.loads(first.stdout.strip().splitlines()[-1])
    print(f"a fresh process (the cold start's Python part): the Cost page's modules imported in {f['imports']:.2f} s "
          f"(scipy.stats loaded: {f['scipy_stats']}), then the default scenario in {f['first']:.2f} s (catalogs "
          f"read, measured curves built), the next in {f['next'] * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
