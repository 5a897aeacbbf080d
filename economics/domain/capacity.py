"""Serving capacity from measured throughput (fluid approximation) and the tokens a fleet actually serves.

The fluid approximation treats an accelerator as a server of work measured in accelerator-seconds: a prefill of
``I_miss`` tokens takes ``I_miss / P`` seconds and a decode of ``O`` tokens takes ``O / D`` seconds, where P and D are
the measured prefill and decode throughputs per accelerator at the interactivity target. Queueing, batching
granularity and scheduling losses are ignored; they are inside the measured P and D.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import SECONDS_PER_DAY, Formula


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
    r"""Whole accelerators needed to carry the peak of a daily workload.

    .. math:: N = \lceil W \cdot k_{peak} / 86400 \rceil,  at least 1

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
    r"""Share of the average demand a fleet can serve: the rest exceeds its capacity.

    .. math:: f = \min(1, N \cdot 86400 / W)

    >>> float(served_fraction(86400 * 4, 2))
    0.5
    >>> float(served_fraction(86400, 2))
    1.0
    """
    cap = np.asarray(accelerators, dtype=float) * SECONDS_PER_DAY
    return np.minimum(1.0, cap / np.asarray(work_accelerator_s_per_day, dtype=float))


def utilization(work_accelerator_s_per_day: ArrayLike, accelerators: ArrayLike) -> NDArray[np.float64]:
    r"""Average busy share of the fleet: served work over available accelerator-seconds.

    .. math:: u = \min(W, N \cdot 86400) / (N \cdot 86400)

    >>> float(utilization(86400, 4))
    0.25
    """
    cap = np.asarray(accelerators, dtype=float) * SECONDS_PER_DAY
    return np.minimum(np.asarray(work_accelerator_s_per_day, dtype=float), cap) / cap


# --- formulas the engine evaluates and `explain` renders (economics.domain.formula): each written once ---
F = Formula
UNCACHED_INPUT = F("uncached_input_tokens_per_request", "token",
                   "input_tokens_per_request * (1 - prefix_cache_hit_rate)")
REQUEST_TIME = F("request_time_s", "accelerator-s",
                 "uncached_input_tokens_per_request / input_tokens_per_s_per_accelerator"
                 " + output_tokens_per_request / output_tokens_per_s_per_accelerator")
REQUEST_TIME_FOLDED = F("request_time_s", "accelerator-s",
                        "output_tokens_per_request / output_tokens_per_s_per_accelerator",
                        note="no prefill throughput given: the output figure includes prefill")
PREFILL_REQUEST_TIME = F("request_time_s", "accelerator-s",
                         "uncached_input_tokens_per_request / input_tokens_per_s_per_accelerator",
                         note="disaggregated: the prefill pool only prefills")
DEMAND_IN_FROM_REQUESTS = F("demand_input_tokens_per_day", "token/day",
                            "demand_requests_per_s * SECONDS_PER_DAY * input_tokens_per_request",
                            note="token demand from the request rate and the request shape")
DEMAND_OUT_FROM_REQUESTS = F("demand_output_tokens_per_day", "token/day",
                             "demand_requests_per_s * SECONDS_PER_DAY * output_tokens_per_request",
                             note="token demand from the request rate and the request shape")
DEMAND_IN_FROM_OUTPUT = F("demand_input_tokens_per_day", "token/day",
                          "demand_output_tokens_per_day * input_tokens_per_request / output_tokens_per_request",
                          note="input demand inferred from the request shape")
DEMAND_OUT_FROM_INPUT = F("demand_output_tokens_per_day", "token/day",
                          "demand_input_tokens_per_day * output_tokens_per_request / input_tokens_per_request",
                          note="output demand inferred from the request shape")
FLEET_REQUESTS = F("fleet_capacity_requests_per_day", "request/day",
                   "accelerators * SECONDS_PER_DAY / request_time_s")
FLEET_REQUESTS_TWO_POOLS = F(
    "fleet_capacity_requests_per_day", "request/day",
    "min(accelerators * SECONDS_PER_DAY / request_time_s, decode_accelerators * SECONDS_PER_DAY"
    " * decode_output_tokens_per_s_per_accelerator / output_tokens_per_request)")
FLEET_REQUESTS_TWO_POOLS_LINK = F(
    "fleet_capacity_requests_per_day", "request/day",
    "min(accelerators * SECONDS_PER_DAY / request_time_s, decode_accelerators * SECONDS_PER_DAY"
    " * decode_output_tokens_per_s_per_accelerator / output_tokens_per_request, kv_link_requests_per_day)")
DEMAND_IN_FULL = F("demand_input_tokens_per_day", "token/day",
                   "fleet_capacity_requests_per_day * input_tokens_per_request",
                   note="no demand given: demand = what the fleet can serve all day")
DEMAND_OUT_FULL = F("demand_output_tokens_per_day", "token/day",
                    "fleet_capacity_requests_per_day * output_tokens_per_request",
                    note="no demand given: demand = what the fleet can serve all day")
DEMAND_REQUESTS = F("demand_requests_per_day", "request/day",
                    "demand_output_tokens_per_day / output_tokens_per_request")
PREFILL_WORK = F("prefill_accelerator_s_per_day", "accelerator-s/day",
                 "demand_input_tokens_per_day * (1 - prefix_cache_hit_rate) / input_tokens_per_s_per_accelerator")
NO_PREFILL_WORK = F("prefill_accelerator_s_per_day", "accelerator-s/day", "0",
                    note="no prefill throughput given: the decode figure includes prefill")
DECODE_WORK = F("decode_accelerator_s_per_day", "accelerator-s/day",
                "demand_output_tokens_per_day / output_tokens_per_s_per_accelerator")
WORK = F("work_accelerator_s_per_day", "accelerator-s/day",
         "prefill_accelerator_s_per_day + decode_accelerator_s_per_day")
WORK_FOLDED = F("work_accelerator_s_per_day", "accelerator-s/day", "decode_accelerator_s_per_day",
                note="no prefill throughput given: the decode figure includes prefill")
WORK_PREFILL_POOL = F("work_accelerator_s_per_day", "accelerator-s/day", "prefill_accelerator_s_per_day",
                      note="disaggregated: the prefill pool only prefills")
DECODE_POOL_WORK = F("decode_work_accelerator_s_per_day", "accelerator-s/day",
                     "demand_output_tokens_per_day / decode_output_tokens_per_s_per_accelerator")
PEAK_LOAD_FACTOR = F("peak_load_factor", "-", "peak_to_average * (1 + headroom)")
ACCELERATORS_NEEDED = F("accelerators_needed", "accelerator",
                        "max(1, ceil(work_accelerator_s_per_day * peak_load_factor / SECONDS_PER_DAY))",
                        note="sized from demand at peak, with headroom")
DECODE_ACCELERATORS_NEEDED = ACCELERATORS_NEEDED.bind(
    "decode_accelerators_needed", work_accelerator_s_per_day="decode_work_accelerator_s_per_day")
MAIN_POOL_RATIO = F("main_pool_capacity_ratio", "-", "accelerators * SECONDS_PER_DAY / work_accelerator_s_per_day",
                    note="capacity of the pool / the work the average demand needs")
DECODE_POOL_RATIO = MAIN_POOL_RATIO.bind("decode_pool_capacity_ratio", accelerators="decode_accelerators",
                                         work_accelerator_s_per_day="decode_work_accelerator_s_per_day")
KV_PER_REQUEST = F("kv_transfer_mb_per_request", "MB", "input_tokens_per_request * kv_bytes_per_token / BYTES_PER_MB",
                   note="the decode pool needs the whole prompt's KV cache")
LINK_REQUESTS = F("kv_link_requests_per_day", "request/day",
                  "kv_link_gb_per_s * BYTES_PER_GB * SECONDS_PER_DAY / (kv_transfer_mb_per_request * BYTES_PER_MB)")
LINK_RATIO = F("kv_link_capacity_ratio", "-", "kv_link_requests_per_day / demand_requests_per_day")
CAPACITY_RATIO = F("capacity_ratio", "-", "main_pool_capacity_ratio")
CAPACITY_RATIO_TWO_POOLS = F("capacity_ratio", "-", "min(main_pool_capacity_ratio, decode_pool_capacity_ratio)",
                             note="the smaller pool binds")
CAPACITY_RATIO_TWO_POOLS_LINK = F(
    "capacity_ratio", "-", "min(main_pool_capacity_ratio, decode_pool_capacity_ratio, kv_link_capacity_ratio)",
    note="the smaller pool or the KV link binds")
SERVED_FRACTION = F("served_fraction", "-", "min(1, capacity_ratio)")
CAPACITY_IN = F("capacity_input_tokens_per_day", "token/day", "demand_input_tokens_per_day * capacity_ratio")
CAPACITY_OUT = F("capacity_output_tokens_per_day", "token/day", "demand_output_tokens_per_day * capacity_ratio")
SERVED_IN = F("served_input_tokens_per_day", "token/day", "demand_input_tokens_per_day * served_fraction")
SERVED_OUT = F("served_output_tokens_per_day", "token/day", "demand_output_tokens_per_day * served_fraction")
SERVED_CACHED = F("served_cached_input_tokens_per_day", "token/day",
                  "served_input_tokens_per_day * prefix_cache_hit_rate")
UTILIZATION = F("utilization", "-",
                "min(1, served_fraction * work_accelerator_s_per_day / (accelerators * SECONDS_PER_DAY))",
                note="the served share of the pool's time (never above 1, even by rounding)")
DECODE_UTILIZATION = UTILIZATION.bind("decode_utilization", accelerators="decode_accelerators",
                                      work_accelerator_s_per_day="decode_work_accelerator_s_per_day")
CAPACITY_REQUESTS_PER_S = F("capacity_requests_per_s_per_accelerator", "request/s",
                            "demand_requests_per_day * capacity_ratio / SECONDS_PER_DAY / accelerators",
                            note="the fleet's request capacity (binding pool and link) per main-pool accelerator")
KV_TRANSFER = F("kv_transfer_gb_per_s", "GB/s", "served_fraction * demand_requests_per_day * kv_transfer_mb_per_request"
                " * BYTES_PER_MB / BYTES_PER_GB / SECONDS_PER_DAY")
MODEL_WEIGHTS = F("model_weights_gb", "GB", "model_total_params_b * bytes_per_param",
                  note="the model's weights at the scenario's precision")
REPLICA_FOR_MODEL = F("accelerators_per_replica", "accelerator",
                      "accelerators_per_system * ceil(model_weights_gb / (accelerators_per_system * chip_memory_gb"
                      " * memory_utilization))",
                      note="the chips the model's weights need, in whole systems (on-chip SRAM where there is no "
                           "other memory)")
REPLICA_ONE_SYSTEM = F("accelerators_per_replica", "accelerator", "accelerators_per_system",
                       note="no model or memory figure: one system holds one copy")
THROUGHPUT_FROM_USERS = F(
    "output_tokens_per_s_per_accelerator", "token/s",
    "measured_output_tokens_per_s_per_user * concurrent_users_per_replica / accelerators_per_replica",
    note="a per-user speed times the users one replica serves at once, over the replica's chips")
DECODE_REPLICA_FOR_MODEL = REPLICA_FOR_MODEL.bind(
    "decode_accelerators_per_replica", accelerators_per_system="decode_accelerators_per_system",
    chip_memory_gb="decode_chip_memory_gb")
DECODE_REPLICA_ONE_SYSTEM = REPLICA_ONE_SYSTEM.bind(
    "decode_accelerators_per_replica", accelerators_per_system="decode_accelerators_per_system")
DECODE_THROUGHPUT_FROM_USERS = THROUGHPUT_FROM_USERS.bind(
    "decode_output_tokens_per_s_per_accelerator",
    measured_output_tokens_per_s_per_user="decode_measured_output_tokens_per_s_per_user",
    concurrent_users_per_replica="decode_concurrent_users_per_replica",
    accelerators_per_replica="decode_accelerators_per_replica")

# --- a per-user speed that falls with context (issue #39, item 3): a measured two-point curve ---
CONTEXT_STEP = F(
    "decode_step_at_context_s", "s",
    "1 / measured_output_tokens_per_s_per_user + (1 / long_context_output_tokens_per_s_per_user"
    " - 1 / measured_output_tokens_per_s_per_user) * (context_tokens - measured_speed_context_tokens)"
    " / (long_context_tokens - measured_speed_context_tokens)",
    note="the decode step (1 / per-user speed) linear in the context through the two measured points, as the "
         "roofline's step grows by the KV bytes read per token of context")
SPEED_AT_CONTEXT = F("output_tokens_per_s_per_user_at_context", "token/s", "1 / decode_step_at_context_s",
                     note="the measured curve read at the workload's context (its input tokens; a session: the "
                          "mean turn's, the step being linear in the context)")
STEP_AT_INPUT = CONTEXT_STEP.bind("decode_step_at_context_s", context_tokens="input_tokens_per_request")
THROUGHPUT_AT_CONTEXT = THROUGHPUT_FROM_USERS.bind(
    "output_tokens_per_s_per_accelerator",
    measured_output_tokens_per_s_per_user="output_tokens_per_s_per_user_at_context")
DECODE_STEP_AT_INPUT = STEP_AT_INPUT.bind(
    "decode_decode_step_at_context_s",
    measured_output_tokens_per_s_per_user="decode_measured_output_tokens_per_s_per_user")
DECODE_SPEED_AT_CONTEXT = SPEED_AT_CONTEXT.bind("decode_output_tokens_per_s_per_user_at_context",
                                                decode_step_at_context_s="decode_decode_step_at_context_s")
DECODE_THROUGHPUT_AT_CONTEXT = DECODE_THROUGHPUT_FROM_USERS.bind(
    "decode_output_tokens_per_s_per_accelerator",
    decode_measured_output_tokens_per_s_per_user="decode_output_tokens_per_s_per_user_at_context")


def speed_at_context(context_tokens: ArrayLike, speed: ArrayLike, speed_context_tokens: ArrayLike,
                     long_speed: ArrayLike, long_context_tokens: ArrayLike) -> NDArray[np.float64]:
    r"""Per-user decode speed at a context from a two-point measured curve: the step :math:`1 / v` linear in the
    context ``C`` through :math:`(C_1, v_1)` and :math:`(C_2, v_2)` (:data:`CONTEXT_STEP`).

    .. math:: v(C) = 1 / \left(1 / v_1 + (1 / v_2 - 1 / v_1) (C - C_1) / (C_2 - C_1)\right)

    Parameters
    ----------
    context_tokens : C [token]
    speed, speed_context_tokens : v_1 [token/s] measured at C_1 [token]
    long_speed, long_context_tokens : v_2 [token/s] measured at C_2 > C_1 [token]

    >>> [round(float(speed_at_context(c, 763, 10_000, 450, 100_000)), 1) for c in (10_000, 55_000, 100_000)]
    [763.0, 566.1, 450.0]
    """
    return SPEED_AT_CONTEXT.evaluate({"decode_step_at_context_s": CONTEXT_STEP.evaluate({
        "context_tokens": np.asarray(context_tokens, dtype=float),
        "measured_output_tokens_per_s_per_user": np.asarray(speed, dtype=float),
        "measured_speed_context_tokens": np.asarray(speed_context_tokens, dtype=float),
        "long_context_output_tokens_per_s_per_user": np.asarray(long_speed, dtype=float),
        "long_context_tokens": np.asarray(long_context_tokens, dtype=float)})})
