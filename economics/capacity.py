"""Serving capacity from measured throughput (fluid approximation) and the tokens a fleet actually serves.

The fluid approximation treats an accelerator as a server of work measured in accelerator-seconds: a prefill of
``I_miss`` tokens takes ``I_miss / P`` seconds and a decode of ``O`` tokens takes ``O / D`` seconds, where P and D are
the measured prefill and decode throughputs per accelerator at the interactivity target. Queueing, batching
granularity and scheduling losses are ignored; they are inside the measured P and D.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

SECONDS_PER_DAY = 86400.0


def uncached_input_tokens(input_tokens: ArrayLike, prefix_cache_hit_rate: ArrayLike) -> NDArray[np.float64]:
    """Input tokens that must be prefilled: cache hits skip prefill.

    .. math:: I_{miss} = I (1 - h)

    >>> float(uncached_input_tokens(2000, 0.25))
    1500.0
    """
    return np.asarray(input_tokens, dtype=float) * (1.0 - np.asarray(prefix_cache_hit_rate, dtype=float))


def prefill_seconds(
    uncached_input_tokens: ArrayLike, input_tokens_per_s_per_accelerator: ArrayLike
) -> NDArray[np.float64]:
    """Accelerator-seconds spent on prefill.

    .. math:: t_P = I_{miss} / P

    ``P`` missing (NaN) means the measured decode figure already includes prefill work: 0 s is returned.

    >>> float(prefill_seconds(1500, 10000))
    0.15
    >>> float(prefill_seconds(1500, float("nan")))
    0.0
    """
    p = np.asarray(input_tokens_per_s_per_accelerator, dtype=float)
    i = np.asarray(uncached_input_tokens, dtype=float)
    given = ~np.isnan(p)
    return np.where(given, i / np.where(given, p, 1.0), 0.0)


def decode_seconds(output_tokens: ArrayLike, output_tokens_per_s_per_accelerator: ArrayLike) -> NDArray[np.float64]:
    """Accelerator-seconds spent on decode.

    .. math:: t_D = O / D

    >>> float(decode_seconds(400, 1000))
    0.4
    """
    return np.asarray(output_tokens, dtype=float) / np.asarray(output_tokens_per_s_per_accelerator, dtype=float)


def requests_per_s_per_accelerator(
    input_tokens_per_request: ArrayLike,
    output_tokens_per_request: ArrayLike,
    prefix_cache_hit_rate: ArrayLike,
    input_tokens_per_s_per_accelerator: ArrayLike,
    output_tokens_per_s_per_accelerator: ArrayLike,
) -> NDArray[np.float64]:
    """Requests one accelerator completes per second in aggregated serving (fluid approximation).

    .. math:: R = 1 / (I (1 - h) / P + O / D)

    Parameters
    ----------
    input_tokens_per_request : I [token]
    output_tokens_per_request : O [token], > 0
    prefix_cache_hit_rate : h [fraction]
    input_tokens_per_s_per_accelerator : P [token/s]; NaN = already included in D
    output_tokens_per_s_per_accelerator : D [token/s], > 0

    References: DESIGN.md; the same accounting as the time-share split in Splitwise (Patel et al., ISCA 2024).

    >>> round(float(requests_per_s_per_accelerator(2000, 400, 0.25, 10000, 1000)), 6)
    1.818182
    """
    miss = uncached_input_tokens(input_tokens_per_request, prefix_cache_hit_rate)
    work = prefill_seconds(miss, input_tokens_per_s_per_accelerator) + decode_seconds(
        output_tokens_per_request, output_tokens_per_s_per_accelerator
    )
    return 1.0 / work


def accelerators_for_work(work_accelerator_s_per_day: ArrayLike, peak_to_average: ArrayLike) -> NDArray[np.float64]:
    """Whole accelerators needed to carry the peak of a daily workload.

    .. math:: N = \\lceil W \\cdot k_{peak} / 86400 \\rceil,  at least 1

    Parameters
    ----------
    work_accelerator_s_per_day : average work [accelerator-s/day]
    peak_to_average : peak load / average load [-], >= 1

    >>> float(accelerators_for_work(86400 * 3.2, 1.0))
    4.0
    >>> float(accelerators_for_work(86400 * 2.0, 1.5))
    3.0
    """
    need = np.asarray(work_accelerator_s_per_day, dtype=float) * np.asarray(peak_to_average, dtype=float)
    # a relative tolerance keeps 3.0000000000000004 from becoming 4 machines
    return np.maximum(1.0, np.ceil(need / SECONDS_PER_DAY * (1.0 - 1e-12)))


def served_fraction(work_accelerator_s_per_day: ArrayLike, accelerators: ArrayLike) -> NDArray[np.float64]:
    """Share of the average demand a fleet can serve: the rest exceeds its capacity.

    .. math:: f = \\min(1, N \\cdot 86400 / W)

    >>> float(served_fraction(86400 * 4, 2))
    0.5
    >>> float(served_fraction(86400, 2))
    1.0
    """
    cap = np.asarray(accelerators, dtype=float) * SECONDS_PER_DAY
    return np.minimum(1.0, cap / np.asarray(work_accelerator_s_per_day, dtype=float))


def utilization(work_accelerator_s_per_day: ArrayLike, accelerators: ArrayLike) -> NDArray[np.float64]:
    """Average busy share of the fleet: served work over available accelerator-seconds.

    .. math:: u = \\min(W, N \\cdot 86400) / (N \\cdot 86400)

    >>> float(utilization(86400, 4))
    0.25
    """
    cap = np.asarray(accelerators, dtype=float) * SECONDS_PER_DAY
    return np.minimum(np.asarray(work_accelerator_s_per_day, dtype=float), cap) / cap
