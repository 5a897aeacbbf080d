"""Waiting for a prefill slot: M/G/c queueing with Erlang C and the Allen–Cunneen correction.

A pool of ``c`` replicas (servers) takes requests that arrive at random (Poisson, rate ``lambda``); each prefill
occupies one replica for a service time ``S`` with squared coefficient of variation ``Cs^2`` (0 = every prompt the
same length, 1 = exponential). The time to first token at a percentile is the wait for a free replica at that
percentile plus the prefill itself.

The approximation, in three steps:

1. **Erlang C** (M/M/c, exact): the probability that a request waits, ``C(c, a)`` with offered load ``a = lambda S``.
2. **Allen–Cunneen** (M/G/c and G/G/c): the mean wait of M/M/c multiplied by ``(Ca^2 + Cs^2) / 2``.
3. **Exponential tail**: a request that waits, waits an exponential time whose mean is the Allen–Cunneen mean of
   the waiting ones, so ``P(W > t) = C exp(-t (c mu - lambda) 2 / (Ca^2 + Cs^2))``; the percentile follows in
   closed form. For M/M/c (Cs^2 = 1) this is exact.

tests/test_queueing.py checks the P99 wait against a discrete-event simulation (FCFS, c servers) for utilization
up to 0.9.

References: A. K. Erlang (1917); A. O. Allen, *Probability, Statistics, and Queueing Theory* (2nd ed., 1990),
§6 (the Allen–Cunneen approximation); W. Whitt, "Approximations for the GI/G/m queue", Production and Operations
Management 2(2), 1993 (the exponential tail given a wait).
"""

from __future__ import annotations

import heapq
import math
from functools import lru_cache
from typing import Any

import numpy as np


def erlang_c(servers: int, offered_load: float) -> float:
    r"""Probability that an arriving request has to wait in an M/M/c queue (Erlang C).

    .. math:: C(c, a) = \frac{B(c, a)}{1 - \rho (1 - B(c, a))},  \rho = a / c,
              B(k, a) = \frac{a B(k-1, a)}{k + a B(k-1, a)},  B(0, a) = 1

    The Erlang B recursion is numerically stable for thousands of servers. One row of :func:`erlang_c_array`.

    Parameters
    ----------
    servers : c, number of servers [-], >= 1
    offered_load : a = lambda x S [erlang], >= 0; a >= c (rho >= 1) gives 1 (every request waits)

    >>> round(erlang_c(1, 0.5), 6)     # M/M/1: C = rho
    0.5
    >>> round(erlang_c(2, 1.0), 6)     # c = 2, a = 1: 2 a^2 / (2 + a) / (2 + a - a^2 ... ) = 1/3
    0.333333
    """
    if servers < 1:
        raise ValueError(f"servers: must be >= 1, got {servers}")
    return float(erlang_c_array(np.array([servers], dtype=float), np.array([offered_load], dtype=float))[0])


def erlang_c_array(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """:func:`erlang_c` over columns (servers >= 1): 0 without load, 1 at or above full load (rho >= 1).

    >>> erlang_c_array(np.array([1.0, 2.0, 4.0]), np.array([0.5, 1.0, 4.0])).round(6).tolist()
    [0.5, 0.333333, 1.0]
    """
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=float), np.asarray(offered_load, dtype=float))
    rho = a / c
    b = erlang_b_array(c, np.maximum(a, 0.0))
    return np.where(a <= 0.0, 0.0, np.where(rho >= 1.0, 1.0, b / (1.0 - np.minimum(rho, 1.0) * (1.0 - b))))


RECURSION_SERVERS = 32
"""Up to this many servers Erlang B is worked out by its recursion (exact, c steps); beyond, by the Poisson ratio in
closed form (a fixed cost whatever c: a pool of a million replicas costs what a pool of a thousand does, and a
column of a hundred thousand pools costs one vectorised call). The two agree to 2.1e-12 relative for every c up to
1,000 at loads 0.01 to 0.999 (measured; tests/test_queueing.py checks them from 33 servers up)."""


def erlang_b(servers: int, offered_load: float) -> float:
    r"""Probability that all ``servers`` are busy in an M/M/c/c system (Erlang B), in bounded time.

    .. math:: B(c, a) = \frac{a^c / c!}{\sum_{k=0}^{c} a^k / k!} = \frac{P(N = c)}{P(N \le c)},  N \sim
              \text{Poisson}(a)

    By the recursion :math:`B(k, a) = a B(k-1, a) / (k + a B(k-1, a))` up to :data:`RECURSION_SERVERS` servers, by
    the ratio of the Poisson probability to its distribution function (log-gamma and the regularised upper
    incomplete gamma function) beyond, where the two agree to 1e-9 relative (tests/test_queueing.py). One row of
    :func:`erlang_b_array`.

    >>> round(erlang_b(2, 1.0), 6)   # (1/2) / (1 + 1 + 1/2)
    0.2
    >>> abs(erlang_b(1_001, 990.0) - erlang_b(1_000, 990.0)) < 0.01
    True
    """
    return float(erlang_b_array(np.array([servers], dtype=float), np.array([offered_load], dtype=float))[0])


def _erlang_b_step(k: int, load: Any, b: Any) -> Any:
    """Erlang B with ``k`` servers from its value with ``k - 1``: ``a B / (k + a B)`` (floats or arrays alike)."""
    return load * b / (k + load * b)


def erlang_b_array(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """:func:`erlang_b` over columns: the recursion run on every row at once (each row stops at its own c), the
    closed form on the rows above :data:`RECURSION_SERVERS`.

    >>> erlang_b_array(np.array([2.0, 1.0]), np.array([1.0, 1.0])).round(6).tolist()
    [0.2, 0.5]
    """
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=float), np.asarray(offered_load, dtype=float))
    if c.size == 1 and c.flat[0] <= RECURSION_SERVERS:
        # one row (max_utilization's bisection asks about 60 in turn): the recursion on Python floats, the same
        # IEEE operations in the same order (the same bits) without numpy's cost per call on a one-element array
        one, load = 1.0, float(a.flat[0])
        for k in range(1, int(c.flat[0]) + 1):
            one = _erlang_b_step(k, load, one)
        return np.full(c.shape, one)
    out = np.empty(c.shape)
    small = c <= RECURSION_SERVERS
    if small.any():  # rows sorted by c: step k updates the rows whose c is at least k, a tail of the order
        order = np.argsort(c[small], kind="stable")
        cs, as_ = c[small][order], a[small][order]
        b = np.ones(cs.shape)
        for k in range(1, int(cs[-1]) + 1):
            tail = int(np.searchsorted(cs, k, side="left"))
            b[tail:] = _erlang_b_step(k, as_[tail:], b[tail:])
        out[np.flatnonzero(small)[order]] = b
    big = ~small
    if big.any():
        out[big] = _erlang_b_closed(c[big], a[big])
    return out


def _erlang_b_closed(c: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Erlang B in closed form for many servers: the Poisson pmf at ``c`` over its upper tail, in logs.

    ``scipy.special`` is imported here, on first use: the default scenario's pools are smaller than that, and
    importing it costs the first KPI of a cold start about 0.13 s of CPU (issue #43).
    """
    from scipy.special import gammaincc, gammaln

    with np.errstate(divide="ignore"):
        log_pmf = c * np.log(a) - a - gammaln(c + 1.0)
    return np.minimum(1.0, np.exp(log_pmf) / gammaincc(c + 1.0, a))


def wait_percentile_s(servers: int, utilization: float, service_s: float, percentile: float,
                      service_cv2: float = 1.0, arrival_cv2: float = 1.0) -> float:
    r"""Waiting time in the queue (before service starts) at a percentile, M/G/c by Erlang C and Allen–Cunneen.

    .. math:: t_p = \max\left(0, \frac{\ln(C / (1 - p))}{c \mu - \lambda} \cdot \frac{C_a^2 + C_s^2}{2}\right),
              \mu = 1 / S,  \lambda = \rho c \mu

    Parameters
    ----------
    servers : c [-], >= 1
    utilization : rho = lambda S / c [-], 0 <= rho < 1 (rho >= 1: the queue grows without bound -> inf)
    service_s : mean service time S [s], > 0
    percentile : p [fraction], e.g. 0.99
    service_cv2 : Cs^2, squared coefficient of variation of the service time [-]
    arrival_cv2 : Ca^2 of the inter-arrival times [-] (1 = Poisson)

    Special cases: when fewer than a share 1 - p of requests wait at all (C <= 1 - p) the percentile is 0.

    >>> round(wait_percentile_s(1, 0.5, 1.0, 0.99), 4)   # M/M/1: ln(0.5 / 0.01) / (1 - 0.5)
    7.824
    >>> wait_percentile_s(8, 0.1, 1.0, 0.99)
    0.0
    """
    return float(wait_percentile_array(np.array([servers], dtype=float), np.array([utilization], dtype=float),
                                       np.array([service_s], dtype=float), percentile, service_cv2, arrival_cv2)[0])


def wait_percentile_array(servers: np.ndarray, utilization: np.ndarray, service_s: np.ndarray, percentile: Any,
                          service_cv2: Any = 1.0, arrival_cv2: Any = 1.0) -> np.ndarray:
    """:func:`wait_percentile_s` over columns (the one definition; the scalar is its one row).

    >>> wait_percentile_array(np.array([1.0, 8.0, 2.0]), np.array([0.5, 0.1, 1.0]), np.ones(3), 0.99).round(4).tolist()
    [7.824, 0.0, inf]
    """
    c, u, svc = (np.asarray(x, dtype=float) for x in (servers, utilization, service_s))
    c_wait = erlang_c_array(c, np.minimum(u, 1.0) * c)
    p = np.asarray(percentile, dtype=float)
    waits = c_wait > 1.0 - p
    spare_rate = c * (1.0 - np.minimum(u, 1.0)) / svc  # c mu - lambda [1/s]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(np.where(waits, c_wait, 1.0) / (1.0 - p)) / spare_rate * (arrival_cv2 + np.asarray(
            service_cv2, dtype=float)) / 2.0
    return np.where(u >= 1.0, math.inf, np.where(waits, t, 0.0))


def ttft_percentile_s(servers: int, utilization: float, service_s: float, percentile: float,
                      service_cv2: float = 1.0) -> float:
    r"""Time to first token at a percentile: the wait for a replica plus the prefill itself.

    .. math:: TTFT_p \approx t_p + S

    The prefill time is taken at its mean (the percentile of the sum is approximated by the wait's percentile).

    >>> round(ttft_percentile_s(1, 0.5, 0.2, 0.99), 4)
    1.7648
    """
    return wait_percentile_s(servers, utilization, service_s, percentile, service_cv2) + service_s


@lru_cache(maxsize=4096, typed=True)
def max_utilization(servers: int, service_s: float, ttft_target_s: float, percentile: float,
                    service_cv2: float = 1.0) -> float:
    """Highest utilization at which ``servers`` replicas still meet the TTFT target at the percentile.

    Found by bisection (TTFT grows with utilization). 0 when the prefill alone takes longer than the target.
    It grows with the number of servers (pooling), which is why the planner refines it at the pool sizes it picks.
    Remembered per argument values (a pure function of them): the planner asks the same few pool sizes again in
    every stage and for each setting's cost (issue #43: 388 calls, 22 distinct, on the Plan page's example).

    >>> u = max_utilization(1, 0.2, 1.7648, 0.99)
    >>> round(u, 3)
    0.5
    >>> max_utilization(4, 2.0, 1.0, 0.99)
    0.0
    """
    if service_s >= ttft_target_s:
        return 0.0
    lo, hi = 0.0, 1.0 - 1e-9
    if ttft_percentile_s(servers, hi, service_s, percentile, service_cv2) <= ttft_target_s:
        return hi
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if ttft_percentile_s(servers, mid, service_s, percentile, service_cv2) <= ttft_target_s:
            lo = mid
        else:
            hi = mid
    return lo


def simulate_waits_s(servers: int, utilization: float, service_s: float, service_cv2: float, customers: int,
                     seed: int = 0) -> np.ndarray:
    """Waiting times of a first-come-first-served M/G/c queue by discrete-event simulation (for checking the
    approximation): Poisson arrivals, gamma-distributed service times with mean ``service_s`` and squared
    coefficient of variation ``service_cv2`` (0 = deterministic), ``servers`` identical servers.

    Each arrival takes the server that frees first; its wait is max(0, that server's free time - arrival).

    >>> w = simulate_waits_s(1, 0.5, 1.0, 1.0, 20000, seed=1)
    >>> 0.8 < float(w.mean()) < 1.2       # M/M/1: E[W] = rho / (mu - lambda) = 1.0
    True
    """
    rng = np.random.default_rng(seed)
    rate = utilization * servers / service_s
    arrivals = np.cumsum(rng.exponential(1.0 / rate, customers)).tolist()
    if service_cv2 <= 0:
        service = [service_s] * customers
    else:
        shape = 1.0 / service_cv2
        service = rng.gamma(shape, service_s / shape, customers).tolist()
    free = [0.0] * servers  # a heap of the times the servers become free
    waits = [0.0] * customers
    for i in range(customers):
        arrival = arrivals[i]
        start = free[0] if free[0] > arrival else arrival
        waits[i] = start - arrival
        heapq.heapreplace(free, start + service[i])
    return np.asarray(waits)
