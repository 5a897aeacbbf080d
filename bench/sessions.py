"""Agent sessions through the batch path: 100,000 session scenarios through `economics.evaluate(df)` against the same
rows as requests (each session's mean turn as a request, at a given prefix cache hit rate), in one run.

Prints, from one run on this machine:
  - seconds for the session rows and for the request rows (best of 3 each, interleaved), and their ratio
    (target: sessions <= 3x requests; the sessions' extra work is the KV residency's bisection over the rows),
  - peak resident memory of evaluating the session rows, measured in a fresh child process.

Usage: python bench/sessions.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import economics  # noqa: E402


def sessions(n: int, seed: int = 7) -> pd.DataFrame:
    """A varied mix of session rows: hardware, models, fixed and demand-sized fleets, session shapes, idle gaps,
    with and without a host-memory tier (half the rows) and an SSD tier (a quarter)."""
    rng = np.random.default_rng(seed)
    accs = np.array(["h100-sxm", "h200-sxm", "b200", "a100-sxm"])
    models = np.array(["llama-3.1-70b", "llama-3.1-8b"])
    fixed = rng.random(n) < 0.5
    host = rng.random(n) < 0.5
    ssd = rng.random(n) < 0.25
    return pd.DataFrame({
        "name": [f"s{i}" for i in range(n)], "workload": "sessions",
        "accelerator": accs[rng.integers(0, len(accs), n)], "model": models[rng.integers(0, len(models), n)],
        "precision": "fp8", "target_output_tokens_per_s_per_user": rng.uniform(10, 60, n),
        "accelerator_count": np.where(fixed, rng.integers(1, 500, n) * 8, np.nan),
        "output_tokens_per_s_per_accelerator": rng.uniform(200, 5_000, n),
        "input_tokens_per_s_per_accelerator": rng.uniform(5_000, 50_000, n),
        "turns_per_session": rng.integers(1, 200, n), "session_prefix_tokens": rng.uniform(0, 20_000, n),
        "input_tokens_per_turn": rng.uniform(50, 5_000, n), "output_tokens_per_turn": rng.uniform(20, 2_000, n),
        "seconds_between_turns": rng.uniform(1, 600, n), "demand_sessions_per_day": rng.uniform(1e3, 1e7, n),
        "kv_host_memory_gb_per_system": np.where(host, rng.uniform(256, 4096, n), 0.0),
        "kv_host_read_gb_per_s": np.where(host, rng.uniform(50, 400, n), np.nan),
        "kv_host_memory_usd_per_gb": np.where(host, rng.uniform(2, 10, n), np.nan),
        "kv_ssd_gb_per_system": np.where(ssd, rng.uniform(1_000, 30_000, n), 0.0),
        "kv_ssd_read_gb_per_s": np.where(ssd, rng.uniform(10, 60, n), np.nan),
        "kv_ssd_usd_per_gb": np.where(ssd, rng.uniform(0.05, 0.3, n), np.nan),
    })


def as_requests(df: pd.DataFrame) -> pd.DataFrame:
    """The same rows as requests: a request is the session's mean turn (its mean context in, its output out), at a
    prefix cache hit rate of 0.8 the user would have to know, with the same tokens a day as demand."""
    t, s, u, o = (df[c].astype(float) for c in ("turns_per_session", "session_prefix_tokens",
                                                "input_tokens_per_turn", "output_tokens_per_turn"))
    per_session = t * (s + u) + (u + o) * t * (t - 1) / 2  # economics.domain.sessions.input_tokens_per_session
    session_only = [c for c in df.columns if c.startswith(("turns_", "session_", "seconds_", "demand_sessions",
                                                           "kv_")) or c.endswith("_per_turn")]
    return df.drop(columns=session_only).assign(
        workload="requests", input_tokens_per_request=per_session / t, output_tokens_per_request=o,
        prefix_cache_hit_rate=0.8, demand_input_tokens_per_day=df["demand_sessions_per_day"] * per_session,
        demand_output_tokens_per_day=df["demand_sessions_per_day"] * t * o)


def child(rows: int) -> None:
    df = sessions(rows, seed=11)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    out = economics.evaluate(df)
    seconds = time.perf_counter() - t
    print(json.dumps({"rows": rows, "seconds": seconds, "valid": int(out["valid"].sum()),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "rss_before_mb": before / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    ses = sessions(args.rows)
    req = as_requests(ses)
    economics.evaluate(ses.iloc[:100])
    economics.evaluate(req.iloc[:100])  # warm the catalog and caches outside the timing
    times: dict[str, float] = {"sessions": float("inf"), "requests": float("inf")}
    for _ in range(3):  # interleaved, so a busy moment on the shared machine hits both
        for name, df in (("sessions", ses), ("requests", req)):
            t = time.perf_counter()
            out = economics.evaluate(df)
            times[name] = min(times[name], time.perf_counter() - t)
            assert out["valid"].all(), (name, out.loc[~out["valid"], "error"].head().tolist())
    ratio = times["sessions"] / times["requests"]
    print(f"{args.rows:,} session rows through evaluate(df): {times['sessions']:.3f} s; the same rows as requests: "
          f"{times['requests']:.3f} s; ratio {ratio:.2f}x (target <= 3x; best of 3 each, one run)")
    proc = subprocess.run([sys.executable, __file__, "--child", str(args.rows)], capture_output=True, text=True,
                          check=True)
    m = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{m['rows']:,} session rows in a fresh process: {m['seconds']:.2f} s, peak RSS {m['peak_rss_mb']:,.0f} MB "
          f"of which {m['rss_before_mb']:,.0f} MB before evaluate (input frame + libraries); {m['valid']:,} valid")


if __name__ == "__main__":
    main()
