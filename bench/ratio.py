"""Judging a bench's figure on a loaded machine: per-round samples, the median with a seeded bootstrap interval, and
a verdict against the target that says "met" only when the whole interval is under it; and the order of a round's
measurements, balanced so that no item always follows the same one.

The browser benches (bench/app_latency.py, bench/retrofit_odds.py) measure in rounds: in each round the Streamlit
floor and every page once, so both share the machine's load of that moment, and a page's figure is the median of
its per-round ratios to the floor. The machine is shared, so one round says little; the interval says whether the
rounds settle the target either way. Nothing here reads a clock.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from enum import StrEnum

BOOTSTRAP = 2000
"""Resamples of the rounds for the interval of the median."""
MIN_ROUNDS = 5
"""Fewer rounds than this show a target neither way: the interval of the median of so few rounds is about their
range, and all n rounds fall on one side of the true median with odds 0.5^n (3 % for 5 rounds, 25 % for 2)."""


class Verdict(StrEnum):
    """What the rounds show about a target that a figure must not exceed."""

    MET = "met"
    NOT_MET = "not met"
    NOT_SHOWN = "not shown either way"


@dataclass(frozen=True)
class Judged:
    """A figure's rounds judged against a target: their median, the 95 % bootstrap interval of that median, the
    target the figure must not exceed and the verdict."""

    median: float
    low: float
    high: float
    target: float
    verdict: Verdict
    rounds: int

    def words(self, fmt: str = ".2f", unit: str = "x") -> str:
        """The median, its interval and the verdict in words, each figure formatted with ``fmt`` and ``unit``.

        >>> judge([1.0, 1.1, 1.2, 1.3, 1.4], 1.5).words()
        'median 1.20x of 5 rounds, 95 % bootstrap interval 1.00-1.40x (target <= 1.5x: met)'
        """
        def f(value: float) -> str:
            return f"{value:{fmt}}{unit}"

        return (f"median {f(self.median)} of {self.rounds} rounds, 95 % bootstrap interval {self.low:{fmt}}-"
                f"{f(self.high)} (target <= {self.target:g}{unit}: {self.verdict})")


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks (as numpy's default).

    >>> percentile([4.0, 1.0, 3.0, 2.0], 50)
    2.5
    """
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def bootstrap_median(values: list[float], seed: int = 0) -> tuple[float, float]:
    """A 95 % percentile-bootstrap interval of the median of ``values``: the 2.5th and 97.5th percentiles of the
    medians of :data:`BOOTSTRAP` resamples (with replacement, a fixed seed: the same values give the same interval
    in every run)."""
    draw = random.Random(seed)
    medians = sorted(statistics.median(draw.choices(values, k=len(values))) for _ in range(BOOTSTRAP))
    return percentile(medians, 2.5), percentile(medians, 97.5)


def verdict(low: float, high: float, target: float, rounds: int = MIN_ROUNDS) -> Verdict:
    """Met when the whole interval is at or under the target, not met when it is wholly above it; neither from
    fewer than :data:`MIN_ROUNDS` rounds."""
    if rounds < MIN_ROUNDS:
        return Verdict.NOT_SHOWN
    if high <= target:
        return Verdict.MET
    return Verdict.NOT_MET if low > target else Verdict.NOT_SHOWN


def every(verdicts: list[Verdict]) -> Verdict:
    """The verdict on a target every figure must meet: met when each is met, not met when one is not met, else not
    shown either way."""
    if all(v is Verdict.MET for v in verdicts):
        return Verdict.MET
    return Verdict.NOT_MET if Verdict.NOT_MET in verdicts else Verdict.NOT_SHOWN


def judge(values: list[float], target: float, seed: int = 0) -> Judged:
    """The rounds' ``values`` (at least one) judged against a ``target`` they must not exceed."""
    low, high = bootstrap_median(values, seed)
    return Judged(statistics.median(values), low, high, target, verdict(low, high, target, len(values)),
                  len(values))


def ratios(page: list[float], floor: list[float]) -> list[float]:
    """Each round's page figure over the same round's floor figure."""
    return [p / f for p, f in zip(page, floor, strict=True)]


def balanced_order(items: int, round_: int) -> list[int]:
    """The order of ``items`` measurements in round ``round_``: a row of Williams' balanced Latin square (E. J.
    Williams, 1949). The first row is 0, 1, n-1, 2, n-2, ...; row r adds r to each (mod n); for an odd n the rows
    n..2n-1 are the first n reversed. Over n rounds (2n for an odd n) each item comes first equally often and right
    after each other item equally often, so no item's figure always carries the same predecessor's tail.

    >>> [balanced_order(4, r) for r in range(4)]
    [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]
    """
    first = [0]
    for k in range(1, items):
        first.append((k + 1) // 2 if k % 2 else items - k // 2)
    row = [(x + round_) % items for x in first]
    return row[::-1] if items % 2 and (round_ // items) % 2 else row
