"""The decode study's odds: 10,000 draws of the six-option worked example (the Decode page's) against one point
study, in one run.

Prints, from one run on this machine:
  - seconds for one point study (every option's years remembered: an edit's re-run) and for the odds at --samples
    draws (best of 3 each, interleaved; the same point study handed in), the draws per second, and the ratio of the
    odds to one point study (target: 10,000 draws well under 2 s).

Usage: python bench/retrofit_odds.py [--samples 10000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from economics.studies.retrofit import analyse  # noqa: E402
from economics.studies.retrofit_odds import odds  # noqa: E402
from tests.test_retrofit_odds import EXAMPLE  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    point = analyse(EXAMPLE)  # the first sight of each option (throughput estimates) out of the timing
    odds(EXAMPLE, samples=100, point=point)
    point_s, odds_s = [], []
    for _ in range(3):
        t = time.perf_counter()
        point = analyse(EXAMPLE)
        point_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = odds(EXAMPLE, samples=args.samples, seed=0, point=point)
        odds_s.append(time.perf_counter() - t)
    best_point, best_odds = min(point_s), min(odds_s)
    print(f"options: {len(found.names)}; horizon {EXAMPLE['horizon_years']} years; drivers: {len(found.found)}")
    print(f"point study: {best_point * 1000:.1f} ms; odds at {args.samples:,} draws: {best_odds:.3f} s "
          f"({args.samples / best_odds:,.0f} draws/s; {best_odds / best_point:,.0f}x one point study)")
    print(found.headline())


if __name__ == "__main__":
    main()
