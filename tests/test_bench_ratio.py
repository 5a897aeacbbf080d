"""bench/ratio.py, which bench/app_latency.py and bench/retrofit_odds.py judge their rounds with: the interval of the
median per-round figure (a percentile bootstrap with a fixed seed: the bench prints "met" only when the whole
interval is under the target, so the interval must bracket the median and be the same from run to run for the same
figures), the verdict, the balanced order of a round's measurements, and bench/app_latency.py's rounds from its
command line. Values worked by hand; no clock."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter

import pytest

from bench.app_latency import ROUNDS, arguments
from bench.ratio import Verdict, balanced_order, bootstrap_median, every, judge, percentile, ratios, verdict


def test_the_interval_brackets_the_median_and_is_seeded() -> None:
    values = [0.8, 1.1, 1.2, 1.25, 1.3, 1.4, 1.45, 1.6, 2.4, 3.0]
    low, high = bootstrap_median(values)
    assert min(values) <= low <= statistics.median(values) <= high <= max(values)
    assert low < high
    assert bootstrap_median(values) == (low, high)
    assert bootstrap_median(values, seed=1) != (low, high)


def test_equal_values_give_a_point_and_a_wider_spread_a_wider_interval() -> None:
    assert bootstrap_median([1.3] * 8) == (1.3, 1.3)
    narrow = bootstrap_median([1.2, 1.25, 1.3, 1.35, 1.4, 1.3, 1.3, 1.28])
    wide = bootstrap_median([0.6, 0.9, 1.3, 1.7, 2.2, 1.3, 1.0, 1.6])
    assert wide[1] - wide[0] > narrow[1] - narrow[0]


def test_the_interval_of_two_or_three_values_is_their_range() -> None:
    # By hand: a resample of [1, 3] has the median 1 with odds 1/4, 2 with 1/2 and 3 with 1/4, so about 500 of the
    # 2,000 medians are 1 and 500 are 3: the 2.5th and 97.5th percentiles are 1 and 3. Of three values each end is
    # the median of a resample with odds 7/27 (two or three draws of it).
    assert bootstrap_median([3.0, 1.0]) == (1.0, 3.0)
    assert bootstrap_median([1.0, 2.0, 10.0]) == (1.0, 10.0)


def test_one_wild_round_in_ten_moves_neither_the_median_nor_its_interval() -> None:
    # By hand: the median of a resample of ten moves off 1.0 only when 5 or more of its draws are the 100x round,
    # odds 0.0016 (binomial, 10 draws at 1/10): about 3 of the 2,000 medians, under the 50 past the 97.5th
    # percentile. A mean would have been 10.9.
    judged = judge([1.0] * 9 + [100.0], 1.5)
    assert (judged.median, judged.low, judged.high, judged.verdict) == (1.0, 1.0, 1.0, Verdict.MET)


@pytest.mark.parametrize(("low", "high", "expected"), [
    (1.1, 1.4, Verdict.MET), (1.1, 1.5, Verdict.MET), (1.4, 1.6, Verdict.NOT_SHOWN), (1.5, 1.6, Verdict.NOT_SHOWN),
    (1.51, 2.0, Verdict.NOT_MET)])
def test_met_only_when_the_whole_interval_is_under_the_target(low: float, high: float, expected: Verdict) -> None:
    assert verdict(low, high, 1.5) is expected


def test_every_figure_met_only_when_each_is() -> None:
    met, shown, not_met = Verdict.MET, Verdict.NOT_SHOWN, Verdict.NOT_MET
    assert every([met, met]) is met
    assert every([met, shown, met]) is shown
    assert every([met, shown, not_met]) is not_met


def test_judged_in_words() -> None:
    # By hand: five rounds, the interval their range (a resample's median is the smallest when 3 or more of its 5
    # draws are, odds 0.058, above the 0.025 of the interval's end); their median 1.2 and 510
    assert judge([1.4, 1.0, 1.2, 1.1, 1.3], 1.5).words() == (
        "median 1.20x of 5 rounds, 95 % bootstrap interval 1.00-1.40x (target <= 1.5x: met)")
    assert judge([400.0, 620.0, 510.0, 450.0, 580.0], 500).words(".0f", " ms") == (
        "median 510 ms of 5 rounds, 95 % bootstrap interval 400-620 ms (target <= 500 ms: not shown either way)")


def test_fewer_than_five_rounds_show_nothing_either_way() -> None:
    # two rounds both above the target fall there with odds 1/4 even when the true median is under it
    assert judge([2.0, 2.1], 1.5).verdict is Verdict.NOT_SHOWN
    assert judge([1.0, 1.1, 1.2, 1.3], 1.5).verdict is Verdict.NOT_SHOWN
    assert judge([2.0, 2.1, 2.2, 2.3, 2.4], 1.5).verdict is Verdict.NOT_MET


def test_percentile_and_ratios_by_hand() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([0.0, 10.0], 95) == 9.5
    assert percentile([7.0], 2.5) == 7.0
    assert ratios([150.0, 90.0], [100.0, 60.0]) == [1.5, 1.5]
    with pytest.raises(ValueError, match="shorter"):
        ratios([1.0, 2.0], [1.0])


def test_the_first_rows_of_the_balanced_order() -> None:
    assert [balanced_order(4, r) for r in range(5)] == [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1],
                                                       [0, 1, 3, 2]]
    assert [balanced_order(3, r) for r in range(6)] == [[0, 1, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0], [0, 2, 1],
                                                       [1, 0, 2]]
    assert balanced_order(1, 3) == [0]


@pytest.mark.parametrize("items", [2, 3, 4, 5, 7, 8])
def test_over_a_cycle_every_item_comes_first_and_after_every_other_equally_often(items: int) -> None:
    cycle = items if items % 2 == 0 else 2 * items
    rows = [balanced_order(items, r) for r in range(cycle)]
    assert all(sorted(row) == list(range(items)) for row in rows)
    assert set(Counter(row[0] for row in rows).values()) == {cycle // items}
    pairs = Counter(pair for row in rows for pair in itertools.pairwise(row))
    assert len(pairs) == items * (items - 1)
    assert len(set(pairs.values())) == 1


def test_the_old_commands_of_the_browser_bench_still_run_their_edits() -> None:
    # bench/app_latency.py's --changes was the edits per page; each round now makes one, so it raises the rounds
    assert arguments(["--changes", "6", "--rounds", "1"]).rounds == 6
    assert arguments(["--rounds", "4", "--changes", "2"]).rounds == 4
    assert arguments([]).rounds == ROUNDS
    assert arguments(["--pages", "fleet", "plan", "--bytecode", "--no-switch"]).pages == ["fleet", "plan"]
    with pytest.raises(SystemExit):
        arguments(["--rounds", "0"])
