"""Failures and repairs become spare systems: how much of a pool is up on average, and how many spares cover the
systems that are down at once.

A system is down when any of its accelerators has failed (a failed GPU takes its server's replica out of service)
and comes back after the repair time. With failure rate ``lambda`` per system-hour and mean time to repair ``MTTR``
each system is up a share ``A = 1 / (1 + lambda MTTR)`` of the time (the two-state Markov model), independently
of the others, so the number down in a pool of ``N`` is binomial(N, 1 - A).

Rates per accelerator family are in data/reliability.csv with their sources (Meta's Llama 3 interruption record,
arXiv:2407.21783, for Hopper; estimates elsewhere, each with its derivation).

References: R. Billinton & R. N. Allan, *Reliability Evaluation of Engineering Systems* (2nd ed., 1992), ch. 9
(two-state repairable component, availability 1 / (1 + lambda r)).
"""

from __future__ import annotations

from functools import cache

import pandas as pd
from scipy.special._ufuncs import _binom_cdf

from economics import catalog


@cache
def reliability() -> pd.DataFrame:
    """data/reliability.csv as stored: failure and repair figures per accelerator family, with their sources.

    Two figures per family, and a ``default`` family for accelerators not listed:

    >>> sorted(set(reliability()["field"])), "default" in set(reliability()["family"])
    (['failures_per_accelerator_hour', 'repair_hours'], True)
    """
    return pd.read_csv(catalog.DATA_DIR / "reliability.csv", dtype=str, keep_default_na=False)


@cache  # the table is read once (:func:`reliability`), so a family's rates never change: worked out once each
def family_rates(family: str) -> tuple[float, float]:
    """(failures per accelerator-hour [1/h], repair hours [h]) of a family; the ``default`` row when not listed.

    >>> family_rates("nvidia-hopper")   # 419 interruptions / (54 days x 24 h x 16,384 GPUs); one-day repairs
    (1.973e-05, 24.0)
    >>> family_rates("no-such-family") == family_rates("default")
    True
    """
    table = reliability()
    rows = table[table["family"] == family]
    if rows.empty:
        rows = table[table["family"] == "default"]
    values = dict(zip(rows["field"], rows["value"].astype(float), strict=True))
    return values["failures_per_accelerator_hour"], values["repair_hours"]


def system_availability(failures_per_accelerator_hour: float, accelerators_per_system: float,
                        repair_hours: float) -> float:
    r"""Long-run share of time a system is in service.

    .. math:: A = 1 / (1 + a \lambda_{acc} MTTR)

    Parameters
    ----------
    failures_per_accelerator_hour : lambda_acc [1/h]
    accelerators_per_system : a [-]; a system fails when any of its accelerators does
    repair_hours : MTTR [h]

    >>> round(system_availability(1.973e-5, 8, 24), 6)   # an 8-GPU H100 server, one-day repairs
    0.996226
    """
    return 1.0 / (1.0 + failures_per_accelerator_hour * accelerators_per_system * repair_hours)


def spares_needed(working_systems: int, availability: float, confidence: float = 0.999) -> int:
    r"""Fewest spares ``s`` such that at least ``working_systems`` are up with the given probability.

    .. math:: \min s : P(\text{Binomial}(N + s, 1 - A) \le s) \ge q

    >>> spares_needed(100, 0.996226, 0.999)
    3
    >>> spares_needed(0, 0.99)
    0
    """
    if working_systems <= 0:
        return 0
    down = 1.0 - availability
    s = 0
    while binomial_cdf(s, working_systems + s, down) < confidence:
        s += 1
    return s


def probability_enough_up(systems: int, working_systems: int, availability: float) -> float:
    r"""Probability that at least ``working_systems`` of ``systems`` are up at a given moment.

    .. math:: P(\text{Binomial}(N, 1 - A) \le N - W)

    >>> round(probability_enough_up(103, 100, 0.996226), 4)
    0.9993
    """
    if systems < working_systems:
        return 0.0
    return binomial_cdf(systems - working_systems, systems, 1.0 - availability)


def binomial_cdf(k: int, n: int, p: float) -> float:
    r"""``P(Binomial(n, p) <= k)`` for whole ``0 <= n``, bit for bit what ``scipy.stats.binom.cdf(k, n, p)`` returns.

    ``scipy.stats.binom.cdf`` checks its arguments, gives 1 from ``k >= n`` on (0 below ``k = 0``) and otherwise
    evaluates Boost's binomial distribution through scipy.special's ufunc ``_binom_cdf``, clipped to [0, 1]; this is
    the same steps on one value. It spares importing ``scipy.stats``, about a second of a cold start (issue #43: the
    planner's spare counts and each pool's odds of enough systems up need nothing else from it).
    ``tests/test_availability.py`` holds the two equal.

    Parameters
    ----------
    k : systems down at most [-]
    n : systems [-]
    p : probability that one system is down [-]

    >>> binomial_cdf(3, 103, 1 - 0.996226) == binomial_cdf(3, 103, 0.003774)
    True
    >>> binomial_cdf(5, 5, 0.5), binomial_cdf(-1, 5, 0.5), binomial_cdf(0, 1, 0.25)
    (1.0, 0.0, 0.75)
    """
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    return min(max(float(_binom_cdf(float(k), float(n), p)), 0.0), 1.0)
