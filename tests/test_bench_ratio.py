"""bench/retrofit_odds.py's interval of the median per-round ratio: a percentile bootstrap with a fixed seed (the
bench prints "met" only when the whole interval is under the target, so the interval must bracket the median and be
the same from run to run for the same ratios)."""

from __future__ import annotations

import statistics

from bench.retrofit_odds import bootstrap_median


def test_the_interval_brackets_the_median_and_is_seeded() -> None:
    ratios = [0.8, 1.1, 1.2, 1.25, 1.3, 1.4, 1.45, 1.6, 2.4, 3.0]
    low, high = bootstrap_median(ratios)
    assert min(ratios) <= low <= statistics.median(ratios) <= high <= max(ratios)
    assert low < high
    assert bootstrap_median(ratios) == (low, high)
    assert bootstrap_median(ratios, seed=1) != (low, high)


def test_equal_ratios_give_a_point_and_a_wider_spread_a_wider_interval() -> None:
    assert bootstrap_median([1.3] * 8) == (1.3, 1.3)
    narrow = bootstrap_median([1.2, 1.25, 1.3, 1.35, 1.4, 1.3, 1.3, 1.28])
    wide = bootstrap_median([0.6, 0.9, 1.3, 1.7, 2.2, 1.3, 1.0, 1.6])
    assert wide[1] - wide[0] > narrow[1] - narrow[0]
