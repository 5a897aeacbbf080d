"""Fill a scenario's throughput when it is not measured: a measured curve if one covers the target, else the roofline.

Column-wise over scenarios. For each row without ``output_tokens_per_s_per_accelerator``:

1. **Measured records** (:mod:`economics.engine.measured`), each only for its own configuration: a curve file of yours
   (``curves_sha256``), a catalog claim the row names (``throughput_claim``), then a curve in
   data/throughput_curves.csv for the same accelerator, model and precision, with input/output lengths within a
   factor 1.25 of the scenario's, whose measured per-user range contains the target: throughput is interpolated
   along the measured Pareto front with a monotone PCHIP interpolant (never extrapolated). The measured figure
   includes prefill; where the model is known the roofline's prefill rate splits its cost between input and output
   (:data:`~economics.domain.revenue.PREFILL_ESTIMATE`). Every curve belongs to a serving stack
   (data/serving_stacks.csv):
   with ``serving_stack=best`` the highest of all stacks' curves at the target wins (the upper envelope of the
   fronts); a pinned stack uses only its own curves.
2. **Roofline** (:mod:`economics.domain.throughput`): for each replica size (or the one given), the largest batch
that fits
   memory, respects the engine's batch limit and whose per-user speed, with its share of chunked prefill, still meets
   the target; the replica size with the most throughput per accelerator (prefill included) wins. The prefill rate
   is compute-bound; the time to first token is the carrying step plus the queued prompt (:class:`Roofline`). The
   efficiency factors are the scenario's, else those passed in, else the stored calibration (:func:`stored_factors`):
   this module never imports the calibration that fits them. A pinned stack without a curve brings its terms
   (:func:`stack_columns`: speculative decoding, expert parallelism with DP attention, disaggregation) and its
   replica size; ``serving_stack_used`` then says that the roofline answered for that stack.

Rows that cannot be estimated come back ``feasible=False`` with the reason and the numbers, never as an exception.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.catalog import MOE_GRANULARITY, model_class  # noqa: F401  (re-exported: the calibration scopes read them here)
from economics.domain import architecture as arch
from economics.domain import capacity as cap
from economics.domain import throughput as th
from economics.domain.explain import format_number as fmt
from economics.domain.revenue import PREFILL_ESTIMATE
from economics.engine.measured import (
    SOURCE_CLAIM,
    SOURCE_CURVE,
    SOURCE_ESTIMATE,
    SOURCE_GIVEN,
    SOURCE_USER,
    Curve,
    claim_record,
    curves,
    given_elsewhere,
    take_claims,
    take_curve,
    take_user_curves,
    user_curves,
)
from economics.engine.measured import configuration as _configuration
from economics.outputs import THROUGHPUT
from economics.scenario import CATALOG_FIELDS, FIELDS

Array = np.ndarray
REPLICA_SIZES = (1, 2, 4, 8, 16, 32, 64, 72)
FEW_ROWS = 64
"""Up to this many rows only the measured curves of the rows' pairs are tried, and each (accelerator, model) pair's
calibration scope is remembered: the same curves and scopes (catalog ids: :func:`economics.catalog.positions`)."""
GRID_POINTS = 65_536
"""One row's batch search evaluates every (replica size, batch) pair up to this many in a single roofline pass (one
call over a 2-D array instead of a dozen or more calls over a few elements each); beyond it, the bisection calls the
roofline. Measured here: 0.09 ms against 0.8 ms at 1,024 pairs, 0.25 ms against 1.1 ms at 32,768, even at 65,536."""
FACTORS = ("bandwidth_utilization", "compute_utilization", "prefill_compute_utilization",
           "step_overhead_us_per_layer")
"""The roofline's efficiency factors: scenario fields that, when empty, take the calibrated values."""
TTFT_FACTOR = "ttft_overhead_ms"
"""Calibrated only: fixed time of every request before its prefill and after its first token (API server,
tokenization, scheduling, streaming the token); 0 where data/calibration.csv has no such column or the scenario gives
its own ``step_overhead_us_per_layer``."""
TOKEN_FACTOR = "token_overhead_ns_per_layer"
"""Calibrated only (no scenario field): time per token per layer outside the GEMMs and attention (norms,
activations, routing and token permutation, sampling); 0 where data/calibration.csv has no such column, and 0 when the
scenario gives its own ``step_overhead_us_per_layer`` (its overhead then replaces the calibrated ones)."""
KV_FACTOR = "kv_bandwidth_utilization"
"""Calibrated only (no scenario field): share of peak memory bandwidth the decode attention kernels reach while
reading the paged KV cache (scattered blocks of a few dozen tokens, one per sequence, unlike the weight GEMMs' long
streams); the weights' ``bandwidth_utilization`` where data/calibration.csv has no such column or the scenario gives
its own ``bandwidth_utilization``."""

THROUGHPUT_OUTPUTS: dict[str, str] = {o.name: o.unit for o in THROUGHPUT}
"""Outputs of the throughput step with their units ('text' for words); empty where they do not apply."""

ESTIMATED_INPUTS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                    "accelerators_per_replica")
"""Input columns the estimate fills when they are empty."""

def _candidate_curves(c: dict[str, Array], need: Array) -> tuple[Curve, ...] | list[Curve]:
    """The measured curves :func:`fill_throughput` tries, in order: all of them for many rows; for a few, only
    those of an accelerator, model and precision a row needing an estimate has (the others match no row)."""
    if need.size > FEW_ROWS:
        return curves()
    pairs = set(zip(c["accelerator"][need], c["model"][need], c["precision"][need], strict=True))
    return [cv for cv in curves() if (cv.accelerator, cv.model, cv.precision) in pairs]


def _model_columns(model_ids: Array) -> dict[str, Array]:
    table = catalog.models()
    codes = catalog.positions(table, "models", model_ids)
    columns = catalog.derived("model columns", (table,), lambda: _model_table(table))
    return {col: values[codes] for col, values in columns.items()}


def _model_table(table: pd.DataFrame) -> dict[str, Array]:
    """The models' numeric columns and MLA flag as arrays, with a last entry (NaN, False) for an unknown id."""
    out: dict[str, Array] = {}
    for col in (*catalog.MODEL_NUMERIC_COLUMNS, "kv_bytes_per_token_bf16"):
        out[col] = np.append(table[col].to_numpy(dtype=float, na_value=np.nan), np.nan)
    out["mla"] = np.append((table["attention"] == "mla").to_numpy(), False)
    return out


BEST = "best"
ROOFLINE_STACK = "roofline"
"""``serving_stack_used`` of a row no published stack covers: the plain roofline (single node, no speculation)."""
SCALE_OUT_GB_PER_S = 50.0
"""Link between nodes per accelerator where a multi-node stack gives none [GB/s]: one 400 Gb/s NIC per GPU."""


def stack_columns(stack_ids: Array) -> dict[str, Array]:
    """The roofline parameters of each row's serving stack (data/serving_stacks.csv); ``best``, empty or unknown
    ids give the plain stack (no speculation, no expert parallelism, aggregated): draft tokens ``k``, tokens per
    step ``e``, draft cost fraction ``draft``, expert parallel ``ep``, attention tensor parallel ``attn_tp``
    (NaN: the whole replica), ``disagg`` (bool), ``scale_out`` [GB/s], the replica size ``replica`` (NaN: any)."""
    table = catalog.serving_stacks()
    # many rows, few stacks: each stack's terms are worked out once per table, each row takes its stack's
    codes = catalog.positions(table, "stacks", stack_ids)
    columns = catalog.derived("stack columns", (table,), lambda: _stack_table(table))
    return {key: values[codes] for key, values in columns.items()}


def _stack_table(table: pd.DataFrame) -> dict[str, Array]:
    """:func:`stack_columns` of every stack in the table, in its order, and last of the plain stack (an unknown,
    empty or ``best`` id: position -1)."""
    codes = np.append(np.arange(len(table)), -1)

    def col(name: str, missing: float) -> Array:
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan) if (
            name in table.columns) else np.full(len(table), np.nan)
        return np.nan_to_num(np.append(values, missing)[codes], nan=missing)

    k, alpha = col("draft_tokens", 0.0), col("acceptance_rate", 0.0)
    tp, ep = col("tensor_parallel", np.nan), col("expert_parallel", 1.0)
    dp = np.append((table["data_parallel_attention"] == "yes").to_numpy(), False)[codes]
    return {"k": k, "e": th.speculative_tokens_per_step(alpha, k), "draft": col("draft_cost_fraction", 0.0),
            "ep": np.maximum(ep, 1.0), "attn_tp": np.where(dp, 1.0, np.nan),
            "disagg": np.append((table["disaggregated"] == "yes").to_numpy(), False)[codes],
            "scale_out": col("scale_out_gb_per_s", SCALE_OUT_GB_PER_S),
            "replica": np.where(codes >= 0, np.fmax(tp, np.where(ep > 1, ep, np.nan)), np.nan)}


def _bytes_per_value(precisions: Array) -> Array:
    """Bytes per value of each row's precision (NaN for an unknown one): a list for a few rows, else per element.

    >>> _bytes_per_value(np.array(["bf16", "fp8", "fp4", "?"], dtype=object)).tolist()
    [2.0, 1.0, 0.5, nan]
    """
    p = np.asarray(precisions, dtype=object)
    if p.size > FEW_ROWS:
        return np.asarray(np.vectorize(th.BYTES_PER_VALUE.get, otypes=[float])(p), dtype=float)
    return np.array([th.BYTES_PER_VALUE.get(x, np.nan) for x in p.ravel()], dtype=float).reshape(p.shape)


def _peak_tflops(c: dict[str, Array]) -> Array:
    prec = c["precision"]
    return np.select([prec == "bf16", prec == "fp8", prec == "fp4"],
                     [c["accelerator_bf16_tflops"], c["accelerator_fp8_tflops"], c["accelerator_fp4_tflops"]],
                     np.nan)


def _largest_batch(speed_ok: Any, cap: Array) -> Array:
    """Largest B in [1, cap] with speed_ok(B) true, assuming speed falls with B (0 where even B=1 fails)."""
    lo = np.where(speed_ok(np.ones_like(cap)) & (cap >= 1), 1.0, 0.0)
    hi = np.where(lo > 0, np.maximum(cap, 1.0), 0.0)
    for _ in range(int(np.ceil(np.log2(max(2.0, float(np.nanmax(hi, initial=1.0)))))) + 1):
        mid = np.floor((lo + hi + 1) / 2)
        ok = (lo > 0) & (mid <= hi) & speed_ok(np.maximum(mid, 1.0))
        lo = np.where(ok, mid, lo)
        hi = np.where(ok | (lo == 0), hi, mid - 1)
    return lo


def fill_throughput(c: dict[str, Array], calibration: dict[str, Array] | None = None,
                    use_curves: bool = True) -> dict[str, Array]:
    """Estimate throughput where it is not given; updates ``c`` in place and returns the throughput outputs.

    ``c`` holds validated, catalog-resolved scenario columns. Returns arrays: ``throughput_source``,
    ``throughput_curve``, ``serving_stack_used``, ``output_tokens_per_s_per_user``, ``batch_size``,
    ``time_to_first_token_s``,
    ``decode_bound``, ``weights_gb_per_replica``, ``kv_cache_gb_per_sequence``, ``max_batch_in_memory``,
    ``feasible`` and ``infeasible_reason``.
    """
    n_rows = len(c["accelerator"])
    given = ~np.isnan(c["output_tokens_per_s_per_accelerator"])
    target = c["target_output_tokens_per_s_per_user"]
    out: dict[str, Array] = {
        "throughput_source": np.full(n_rows, SOURCE_GIVEN, dtype=object),
        "throughput_curve": np.full(n_rows, "", dtype=object),
        "serving_stack_used": np.full(n_rows, "", dtype=object),
        "output_tokens_per_s_per_user": np.where(given, target, np.nan),
        "batch_size": np.full(n_rows, np.nan),
        "time_to_first_token_s": np.full(n_rows, np.nan),
        "decode_bound": np.full(n_rows, "", dtype=object),
        "weights_gb_per_replica": np.full(n_rows, np.nan),
        "kv_cache_gb_per_sequence": np.full(n_rows, np.nan),
        "max_batch_in_memory": np.full(n_rows, np.nan),
        "feasible": np.ones(n_rows, dtype=bool),
        "outside_measured_range": np.zeros(n_rows, dtype=bool),
        "infeasible_reason": np.full(n_rows, "", dtype=object),
        "throughput_note": np.full(n_rows, "", dtype=object),
        "throughput_date": np.full(n_rows, "", dtype=object),
        PREFILL_ESTIMATE: np.full(n_rows, np.nan),
        "_input_estimated": np.zeros(n_rows, dtype=bool),
        "_decode_estimated": np.zeros(n_rows, dtype=bool),
    }
    given_elsewhere(c, out, given)
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool) if "decode_accelerator" in c else np.zeros(n_rows,
                                                                                                           bool)
    if dis.any():
        _fill_disaggregated(c, out, dis, calibration, use_curves)
    need = ~given & ~dis
    if not need.any():
        return out
    out["throughput_source"][need] = SOURCE_ESTIMATE
    m = _model_columns(c["model"])

    stack = np.asarray(c["serving_stack"], dtype=object) if "serving_stack" in c else np.full(n_rows, BEST, object)
    stack = np.where((stack == "") | pd.isna(stack), BEST, stack)
    best_d = np.full(n_rows, -np.inf)
    # 0. the user's own curves outrank every catalog figure for their configuration (an empty target reads the
    # point of most throughput they measured)
    from_curve = take_user_curves(c, out, need, target, best_d)
    # then a referenced claim, while the configuration is the one it was measured for
    from_curve |= take_claims(c, out, need & ~from_curve)
    # 1. measured curves: the pinned stack's, or (best) the highest of every stack's at the target
    left = need & ~from_curve
    for cv in _candidate_curves(c, left) if use_curves and left.any() else ():
        match = left & _configuration(c, cv) & ~np.isnan(target) & ((stack == BEST) | (stack == cv.stack))
        if match.any():
            from_curve |= take_curve(c, out, cv, match, target, best_d)
    out["outside_measured_range"] &= ~from_curve
    _estimate_prefill(c, out, from_curve & np.isnan(c["input_tokens_per_s_per_accelerator"]), m, calibration)
    need &= ~from_curve
    if not need.any():
        return out

    # 2. roofline: the pinned stack's terms (and its replica size where none is given), else the plain stack
    out["serving_stack_used"] = np.where(need, np.where(
        stack == BEST, ROOFLINE_STACK + " (no published stack measured for this pair, lengths and speed)",
        stack + " (roofline with its terms: no measured curve for this pair, lengths and speed)"),
        out["serving_stack_used"])
    pinned_n = stack_columns(np.where(need, stack, BEST))["replica"]
    c["accelerators_per_replica"] = np.where(need & np.isnan(c["accelerators_per_replica"]), pinned_n,
                                             c["accelerators_per_replica"])
    rl = Roofline(c, m, calibration)
    best = _best_replica(c, rl, need, target)
    describable = accelerator_figure(c["accelerator"], "roofline", "") != "no"  # dataflow/SRAM systems are not
    est = need & (best["effective"] > 0) & describable
    n_best, b_best = best["n"], np.maximum(best["b"], 1.0)
    t, p_rep = rl.step(b_best, n_best), rl.prefill_rate(n_best)
    c["output_tokens_per_s_per_accelerator"] = np.where(est, b_best / (n_best * t),
                                                        c["output_tokens_per_s_per_accelerator"])
    out["_input_estimated"] |= est & np.isnan(c["input_tokens_per_s_per_accelerator"])
    c["input_tokens_per_s_per_accelerator"] = np.where(out["_input_estimated"], p_rep / n_best,
                                                       c["input_tokens_per_s_per_accelerator"])
    c["accelerators_per_replica"] = np.where(est, n_best, c["accelerators_per_replica"])
    mem_t = rl.memory_s(b_best, n_best) + rl.overhead
    out["output_tokens_per_s_per_user"] = np.where(
        est, 1.0 / rl.user_step(b_best, n_best, t, rl.mixed_step(b_best, n_best, t, p_rep)),
        out["output_tokens_per_s_per_user"])
    out["batch_size"] = np.where(est, best["b"], np.nan)
    out["time_to_first_token_s"] = np.where(est, rl.time_to_first_token(b_best, n_best, t, p_rep), np.nan)
    out["decode_bound"] = np.where(est, np.where(mem_t >= rl.compute_s(b_best, n_best) + rl.overhead,
                                                 "memory", "compute"), "")
    out["weights_gb_per_replica"] = np.where(need, rl.weights / 1e9, np.nan)
    out["kv_cache_gb_per_sequence"] = np.where(need, rl.kv_max / 1e9, np.nan)
    out["max_batch_in_memory"] = np.where(est, best["bmem"], np.nan)

    bad = need & ~est
    if bad.any():
        reasons = _reasons(c, bad, rl.peak, best["any_fit"], best["speed_at_1"], rl.weights, rl.kv_max)
        out["feasible"] = ~bad
        out["infeasible_reason"] = np.where(bad & (stack != BEST), reasons + " (serving stack " + stack.astype(str)
                                            + ": roofline with its terms, no measured curve for this pair)", reasons)
    return out


def _estimate_prefill(c: dict[str, Array], out: dict[str, Array], rows: Array, m: dict[str, Array],
                      calibration: dict[str, Array] | None) -> None:
    """For rows whose measured figure (claim or curve) includes prefill: the roofline's prefill tokens/s per
    accelerator (replica of ``accelerators_per_replica``, else one), only to split their cost between input and
    output tokens (:data:`PREFILL_ESTIMATE`); NaN where the model or the hardware is not one the roofline describes."""
    rows = rows & (np.asarray(c["model"], dtype=object) != "") & (
        accelerator_figure(c["accelerator"], "roofline", "") != "no")
    if not rows.any():
        return
    sub = _rows(c, rows)
    rl = Roofline(sub, {k: v[rows] for k, v in m.items()},
                  None if calibration is None else {k: np.asarray(v)[rows] for k, v in calibration.items()})
    n = np.nan_to_num(sub["accelerators_per_replica"], nan=1.0)
    rate = rl.prefill_rate(n) / n
    prefill_s = rl.i_miss / rate
    request_s = sub["output_tokens_per_request"] / sub["output_tokens_per_s_per_accelerator"]
    # a prefill longer than the whole measured request means the figure was measured on shorter prompts
    fits = np.isfinite(rate) & (rate > 0) & (prefill_s < request_s)
    out[PREFILL_ESTIMATE][rows] = np.where(fits, rate, np.nan)
    note = np.array([f"no input/output split: the roofline's prefill of {fmt(float(p))} s per request exceeds the "
                     f"measured request time of {fmt(float(r))} s at this request shape (the figure was measured on "
                     "shorter prompts)" if not ok and np.isfinite(p) else "" for p, r, ok in
                     zip(prefill_s, request_s, fits, strict=True)], dtype=object)
    out["throughput_note"][rows] = np.where(note != "", note, out["throughput_note"][rows])


def _best_replica(c: dict[str, Array], rl: Roofline, need: Array, target: Array) -> dict[str, Array]:
    """For each replica size (or the one given), the largest batch that fits memory and the engine's limit and
    whose per-user speed 1 / t_mix(B) (decode with its chunked prefill) still meets the target; the size with the
    most output tokens/s per accelerator, prefill included, wins."""
    n_rows = len(need)
    if n_rows == 1:
        return _best_replica_of_one(c, rl, need, target)
    best = _no_replica(n_rows)
    for size in REPLICA_SIZES:
        n, allowed = _replica_size(c, need, float(size))
        if not allowed.any():
            continue
        bmem, cap_b = _batch_cap(c, rl, n, allowed)
        s1 = 1.0 / rl.user_step(np.ones(n_rows), n)
        b = _largest_batch(lambda bb, n=n: ~(1.0 / rl.user_step(bb, n) < target), cap_b)
        _keep_better(best, n, b, bmem, cap_b >= 1, s1, rl.mixed_step(np.maximum(b, 1.0), n))
    return best


def _no_replica(n_rows: int) -> dict[str, Array]:
    """The search's start: no replica size yet (``effective`` -1, below any found)."""
    best = {k: np.full(n_rows, np.nan) for k in ("n", "b", "bmem")}
    best["effective"] = np.full(n_rows, -1.0)
    best["any_fit"] = np.zeros(n_rows, dtype=bool)
    best["speed_at_1"] = np.full(n_rows, np.nan)
    return best


def _replica_size(c: dict[str, Array], need: Array, size: float | Array) -> tuple[Array, Array]:
    """The replica size n tried for ``size`` (the one given, else ``size``) and whether it is tried: sizes up to the
    system (at least 8) when none is given, only once (at the first size) when one is."""
    fixed_n = c["accelerators_per_replica"]
    system = np.nan_to_num(c["accelerators_per_system"], nan=8.0)
    n = np.where(np.isnan(fixed_n), size, fixed_n)
    allowed = need & np.where(np.isnan(fixed_n), size <= np.maximum(8.0, system), size == REPLICA_SIZES[0])
    return n, allowed


def _batch_cap(c: dict[str, Array], rl: Roofline, n: Array, allowed: Array) -> tuple[Array, Array]:
    """The batch a replica of n holds in memory, and the search's cap: that and the engine's batch limit (0 where
    the size is not tried)."""
    bmem = th.max_batch_in_memory(n, rl.mem, c["memory_utilization"], rl.weights, rl.kv_max)
    return bmem, np.nan_to_num(np.where(allowed, np.minimum(bmem, c["max_batch_size"]), 0.0), nan=0.0)


def _keep_better(best: dict[str, Array], n: Array, b: Array, bmem: Array, fits: Array, s1: Array,
                 mixed: Array) -> None:
    """Fold one replica size into the search, in place: whether any size fits, the per-user speed at batch 1 (the
    fastest a fitting size gives, for the reason when none meets the target), and the size with the most output
    tokens/s per accelerator, prefill included, B / (n t_mix(B)) with ``mixed`` = t_mix at the batch found (the first
    of equals; -1 where no batch is found)."""
    effective = np.where(b >= 1, np.maximum(b, 1.0) / (n * mixed), -1.0)
    best["any_fit"] |= fits
    best["speed_at_1"] = np.where(fits & ~(best["speed_at_1"] >= s1), s1, best["speed_at_1"])
    better = effective > best["effective"]
    best["effective"] = np.where(better, effective, best["effective"])
    for key, val in (("n", n), ("b", b), ("bmem", bmem)):
        best[key] = np.where(better, val, best[key])


def _largest_batch_on_grid(ok: Array, cap: Array) -> Array:
    """:func:`_largest_batch` of each row j of a grid ``ok[j, B - 1]`` (B = 1 .. at least ``cap[j]``). Where a row is
    true up to some batch and false after it within its cap (the speed falling with B, as the bisection assumes),
    the bisection provably ends at that batch (capped at ``cap``; 0 if batch 1 fails or the cap is below 1): read it
    off the grid. Otherwise the bisection walks the grid.

    >>> ok = np.array([[True, True, False, False], [True, True, True, True], [False] * 4, [True, False, True, True]])
    >>> _largest_batch_on_grid(ok, np.array([4.0, 3.0, 4.0, 4.0])).tolist()
    [2.0, 3.0, 0.0, 4.0]
    >>> _largest_batch_on_grid(ok[:3], np.array([4.0, -7.0, 4.0])).tolist()
    [2.0, 0.0, 0.0]
    """
    width = ok.shape[1]
    leading = np.where(ok.all(axis=1), width, ok.argmin(axis=1))  # trues before the first false
    last = np.minimum(leading, np.maximum(cap, 0.0))  # a negative cap: the model does not fit, no batch
    if np.array_equal((ok & (np.arange(1.0, width + 1.0) <= cap[:, None])).sum(axis=1), last):
        return np.where(ok[:, 0] & (cap >= 1), last, 0.0)
    rows = np.arange(len(cap))
    return _largest_batch(lambda bb: ok[rows, np.clip(bb, 1.0, width).astype(np.intp) - 1], cap)


def _best_replica_of_one(c: dict[str, Array], rl: Roofline, need: Array, target: Array) -> dict[str, Array]:
    """:func:`_best_replica` of one row, every allowed replica size at once: the row's roofline broadcasts over the
    vector of sizes, and where the (size, batch) grid is small (:data:`GRID_POINTS`) the per-user speed of every
    batch up to the largest cap is worked out in one pass, the bisection then reading it instead of calling the
    roofline a dozen times. The same speeds at the same batches, the same bisection (:func:`_largest_batch`), then
    the sizes compared in order by the rules of the loop over sizes: the same numbers."""
    n, allowed = _replica_size(c, need, np.array(REPLICA_SIZES, dtype=float))
    n = n[allowed]
    bmem, cap_b = _batch_cap(c, rl, n, np.ones(n.size, dtype=bool))
    fits = cap_b >= 1
    top = int(cap_b.max(initial=0.0))
    if top < 1:  # fits nowhere: the bisection keeps batch 0 (it needs a cap of 1), no speed at batch 1 counts
        b, s1 = np.zeros(n.size), np.full(n.size, np.nan)
        mixed = np.full(n.size, np.nan)  # no batch: unused
    elif n.size * top <= GRID_POINTS:
        grid_b, grid_n = np.arange(1.0, top + 1.0)[None, :], n[:, None]
        t = rl.step(grid_b, grid_n)
        t_mix = rl.mixed_step(grid_b, grid_n, t, rl.prefill_rate(grid_n))
        speed = 1.0 / rl.user_step(grid_b, grid_n, t, t_mix)
        b, s1 = _largest_batch_on_grid(~(speed < target), cap_b), speed[:, 0]
        mixed = t_mix[np.arange(n.size), np.maximum(b, 1.0).astype(np.intp) - 1]
    else:
        s1 = 1.0 / rl.user_step(np.ones(n.size), n)
        b = _largest_batch(lambda bb: ~(1.0 / rl.user_step(bb, n) < target), cap_b)
        mixed = rl.mixed_step(np.maximum(b, 1.0), n)
    best = _no_replica(1)
    for j in np.flatnonzero(fits):  # in order, as the loop over sizes; one that does not fit changes nothing
        one = slice(j, j + 1)
        _keep_better(best, n[one], b[one], bmem[one], fits[one], s1[one], mixed[one])
    return best


class Roofline:
    """The per-row quantities of the roofline for resolved scenario columns ``c`` and their model ``m``: bytes
    per parameter, KV bytes per sequence, FLOPs per token, efficiency factors, the tensor-parallel link;
    ``step(B, n)`` is the decode step time [s], ``mixed_step(B, n)`` the step with its share of chunked prefill,
    ``prefill_rate(n)`` the replica's prefill tokens/s and ``time_to_first_token(B, n)`` the queued TTFT. One place
    for the estimate, its explanation, the calibration and the interactivity curve.

    ``factors`` are the efficiency factors to use where the scenario gives none (from
    :func:`stored_factors` when omitted): the estimator never imports the calibration that fits them."""

    def __init__(self, c: dict[str, Array], m: dict[str, Array] | None = None,
                 factors: dict[str, Array] | None = None) -> None:
        m = _model_columns(c["model"]) if m is None else m
        self.m = m
        self.bpp = _bytes_per_value(c["precision"])
        # an empty KV precision follows the weights, but no engine measured here keeps an FP4 KV cache: FP8 then
        kv_prec = np.where(c["kv_cache_precision"] == "", np.where(c["precision"] == "fp4", "fp8", c["precision"]),
                           c["kv_cache_precision"])
        self.kv_b = _bytes_per_value(kv_prec)
        self.peak = _peak_tflops(c)
        # attention (scores and the weighted sum over the KV cache) does not run at FP4: FP8 peak for FP4 models
        attention_peak = np.where(c["precision"] == "fp4", c["accelerator_fp8_tflops"], self.peak)
        self.attention_cost = np.where(np.isnan(attention_peak), 1.0, self.peak / attention_peak)
        self.bw = c["accelerator_bandwidth_tb_per_s"]
        self.mem = c["accelerator_memory_gb"]
        self.link_gb_per_s = accelerator_figure(c["accelerator"], "interconnect_gb_per_s")
        self.link_latency_us = accelerator_figure(c["accelerator"], "interconnect_latency_us")
        cal = stored_factors(c["accelerator"], c["model"]) if factors is None else factors
        self.eff_bw, self.eff_f, self.eff_p, self.overhead_us_per_layer = _efficiency(c, m, cal)
        self.overhead = m["layers"] * self.overhead_us_per_layer * 1e-6
        # a scenario that gives its own step overhead replaces the calibrated overheads, the per-token one included
        token_ns = np.where(np.isnan(c["step_overhead_us_per_layer"]),
                            np.asarray(cal.get(TOKEN_FACTOR, np.zeros(len(self.bw))), dtype=float), 0.0)
        self.token_overhead_s = m["layers"] * token_ns * 1e-9
        # the paged KV cache is read at its own calibrated share of the bandwidth (the weights' share where none is
        # calibrated or the scenario gives its own bandwidth_utilization)
        kv_eff = np.where(np.isnan(c["bandwidth_utilization"]),
                          np.asarray(cal.get(KV_FACTOR, np.zeros(len(self.bw))), dtype=float), np.nan)
        self.eff_kv = np.where(np.isfinite(kv_eff) & (kv_eff > 0), kv_eff, self.eff_bw)
        self.request_overhead_s = np.where(np.isnan(c["step_overhead_us_per_layer"]),
                                           np.asarray(cal.get(TTFT_FACTOR, np.zeros(len(self.bw))), dtype=float),
                                           0.0) * 1e-3
        # KV bytes per token and layer: the architecture's formula (one layer), at the KV precision
        self.per_layer = np.where(m["mla"], arch.kv_cache_bytes_per_token_mla(1.0, m["kv_lora_rank"],
                                                                              m["qk_rope_head_dim"], self.kv_b),
                                  arch.kv_cache_bytes_per_token_gqa(1.0, m["kv_heads"], m["head_dim"], self.kv_b))
        i_req, o_req = c["input_tokens_per_request"], c["output_tokens_per_request"]
        self.i_miss = cap.uncached_input_tokens(i_req, c["prefix_cache_hit_rate"])
        self.o_req = o_req
        self.c_avg, self.c_max = i_req + o_req / 2.0, i_req + o_req
        args = (m["full_attention_layers"], m["layers"], m["sliding_window_tokens"], self.per_layer)
        self.kv_avg = th.kv_bytes_per_sequence(self.c_avg, *args)
        self.kv_max = th.kv_bytes_per_sequence(self.c_max, *args)
        self.qk_dim = np.where(m["mla"], m["kv_lora_rank"] + m["qk_rope_head_dim"], m["head_dim"])
        self.v_dim = np.where(m["mla"], m["kv_lora_rank"], m["head_dim"])
        self.attention_flops = th.attention_flops_per_token(self.c_avg, m["full_attention_layers"], m["layers"],
                                                            m["sliding_window_tokens"], m["q_heads"], self.qk_dim,
                                                            self.v_dim)
        self.linear_flops_tok = 2.0 * m["active_params_b"] * 1e9
        self.flops_tok = self.linear_flops_tok + self.attention_flops * self.attention_cost
        self.weights = m["total_params_b"] * 1e9 * self.bpp
        # the serving stack's terms (plain stack for best/empty): speculation, expert parallelism, disaggregation
        st = stack_columns(c["serving_stack"] if "serving_stack" in c else np.full(len(self.bw), BEST, object))
        self.spec_k, self.spec_e, self.draft_f = st["k"], st["e"], st["draft"]
        self.ep, self.attn_tp, self.disagg, self.scale_out = st["ep"], st["attn_tp"], st["disagg"], st["scale_out"]
        dp_attention = ~np.isnan(self.attn_tp)
        ep_weights = th.expert_parallel_weight_bytes(m["total_params_b"], m["active_params_b"], m["experts"],
                                                     m["experts_per_token"], self.bpp, self.ep, self.attn_tp)
        # DP attention copies the non-expert weights in each of the EP group's attention groups: held and read
        self.weights_copied = np.where(dp_attention & (self.ep > 1), ep_weights - self.weights, 0.0)
        self.weights = self.weights + self.weights_copied
        self._copies, self._a2a = bool(self.weights_copied.any()), bool((self.ep > 1).any())
        self.kv_prompt = th.kv_bytes_per_sequence(self.i_miss, *args)
        # prefill FLOPs per prompt token: linear layers plus causal attention over the prompt (I / 2 keys on average
        # in a full layer; at most the window w in a sliding-window layer, so min(I / 2, w) keys: min(I, 2 w) below)
        i_p = np.maximum(self.i_miss, 1.0)
        window = m["sliding_window_tokens"]
        keys_x2 = m["full_attention_layers"] * i_p + (m["layers"] - m["full_attention_layers"]) * np.where(
            np.isnan(window), i_p, np.minimum(i_p, 2.0 * np.nan_to_num(window)))
        self.prefill_flops_tok = 2.0 * m["active_params_b"] * 1e9 + keys_x2 * m["q_heads"] * (
            self.qk_dim + self.v_dim) * self.attention_cost

    def weights_read(self, batch: Array) -> Array:
        m = self.m
        read = th.weight_bytes_read(batch, m["total_params_b"], m["active_params_b"], m["experts"],
                                    m["experts_per_token"], self.bpp)
        return read + self.weights_copied if self._copies else read

    def memory_s(self, batch: Array, n: Array) -> Array:
        return (self.weights_read(batch) / self.eff_bw + batch * self.kv_avg / self.eff_kv) / (n * self.bw * 1e12)

    def compute_s(self, batch: Array, n: Array) -> Array:
        return batch * self.flops_tok / (n * self.peak * 1e12 * self.eff_f)

    def communication_s(self, tokens: Array | float, n: Array) -> Array:
        """Tensor-parallel all-reduces of one forward pass over ``tokens`` tokens (within the attention's TP group:
        the replica, or 1 under DP attention), plus the expert-parallel all-to-all of the stack [s]."""
        m = self.m
        tp = np.where(np.isnan(self.attn_tp), n, self.attn_tp) if self._a2a else n
        t = th.tensor_parallel_s(tokens, m["hidden_size"], m["layers"], tp, self.link_gb_per_s, self.link_latency_us)
        if not self._a2a:
            return t
        return t + th.all_to_all_s(tokens, m["hidden_size"], m["experts_per_token"], m["layers"],
                                   np.minimum(self.ep, n), self.link_gb_per_s, self.link_latency_us)

    def plain_step(self, batch: Array, n: Array, tokens_per_seq: Array | float = 1.0) -> Array:
        """One forward pass of the target model over ``tokens_per_seq`` tokens of each of B sequences [s]."""
        one = isinstance(tokens_per_seq, float) and tokens_per_seq == 1.0  # the plain step: no array work
        tokens = batch if one else batch * tokens_per_seq
        step = th.decode_step_s(tokens, n, self.bw, self.peak, self.eff_bw, self.eff_f, self.weights_read(tokens),
                                self.kv_avg if one else self.kv_avg / tokens_per_seq, self.linear_flops_tok,
                                self.overhead, self.attention_flops * self.attention_cost, self.eff_kv)
        return step + self.communication_s(tokens, n) + tokens * self.token_overhead_s

    def step(self, batch: Array, n: Array) -> Array:
        """Time per emitted token of each of B sequences [s]: the plain decode step, or under speculative decoding
        the verification of k + 1 tokens per sequence plus k draft steps, over the E tokens accepted
        (:func:`economics.domain.throughput.speculative_step_s`)."""
        plain = self.plain_step(batch, n)
        if not (self.spec_k > 0).any():
            return plain
        verify = self.plain_step(batch, n, self.spec_k + 1.0)
        spec = th.speculative_step_s(verify, plain, self.spec_k, self.draft_f, self.spec_e)
        return np.where(self.spec_k > 0, spec, plain)

    def user_step(self, batch: Array, n: Array, step: Array | None = None, mixed: Array | None = None) -> Array:
        """Time between a user's tokens [s]: the mixed step with its chunked prefill, or the bare decode step when
        prefill runs on other accelerators (disaggregated stack). ``step``, ``mixed``: t(B) and t_mix(B) when
        already computed."""
        t = self.step(batch, n) if step is None else step
        return np.where(self.disagg, t, self.mixed_step(batch, n, t) if mixed is None else mixed)

    def prefill_rate(self, n: Array) -> Array:
        """Prompt tokens/s of a replica of n accelerators when prefill rides in large batches (weights read once
        per chunk, so compute-bound) plus its all-reduce traffic [token/s]."""
        per_token = self.prefill_flops_tok / (n * self.peak * 1e12 * self.eff_p) + self.communication_s(1.0, n) - (
            self.communication_s(0.0, n)) + self.token_overhead_s
        return 1.0 / per_token

    def mixed_step(self, batch: Array, n: Array, step: Array | None = None, rate: Array | None = None) -> Array:
        """Decode step at batch B with the chunked prefill its finishing requests bring (steady state) [s].

        In steady state B / O requests finish per step, so each step also prefills B I_miss / O prompt tokens:
        t_mix(B) = t(B) + (B I_miss / O) / P_rep. The user sees 1 / t_mix; the replica produces B / t_mix output
        tokens/s, the fluid accounting of :func:`economics.domain.capacity.requests_per_s_per_accelerator`. ``step``,
        ``rate``:
        the decode step t(B) and the prefill rate P_rep when already computed.
        Reference: Agrawal et al., "Sarathi-Serve", OSDI 2024 (chunked prefills piggybacked on decode batches)."""
        prompt_tokens = batch * self.i_miss / np.maximum(self.o_req, 1.0)
        t = self.step(batch, n) if step is None else step
        return t + cap.prefill_seconds(prompt_tokens, self.prefill_rate(n) if rate is None else rate)

    def time_to_first_token(self, batch: Array, n: Array, step: Array | None = None,
                            rate: Array | None = None) -> Array:
        r"""The step that carries the request's prefill, t(B), plus its prompt at the replica's prefill rate queued
        behind the other requests' prefill (M/D/1, rho the prefill share of the step time) [s].

        .. math:: TTFT = t_{req} + t(B) + \frac{I_{miss}}{P_{rep}} \left(1 + \frac{\rho}{2 (1 - \rho)}\right)

        t_req the calibrated fixed time per request (server, tokenization, scheduling); ``step``, ``rate``: t(B) and
        P_rep when already computed."""
        t = self.step(batch, n) if step is None else step
        p_rep = self.prefill_rate(n) if rate is None else rate
        t_mix = self.mixed_step(batch, n, t, p_rep)
        share = (t_mix - t) / t_mix
        kv_link = np.where(self.disagg, th.kv_transfer_s(self.kv_prompt, self.scale_out), 0.0)
        return self.request_overhead_s + t + kv_link + th.queued_time_to_first_token_s(
            cap.prefill_seconds(self.i_miss, p_rep), np.where(self.disagg, 0.0, share))


def stored_factors(accelerators: Array, models: Array | None = None) -> dict[str, Array]:
    """Calibrated factors from data/calibration.csv for each row: the most specific scope that exists, in the
    order ``<family>:<model class>``, ``<family>``, ``global:<model class>``, ``global`` (model class ``dense`` or
    ``moe``)."""
    names, factors = _calibration_factors(catalog.calibration())
    acc = np.asarray(accelerators, dtype=object)
    mod = np.full(len(acc), "", dtype=object) if models is None else np.asarray(models, dtype=object)
    if acc.size <= FEW_ROWS:  # one scenario: each pair's scope is remembered (per calibration and catalog)
        known: dict[tuple[Any, Any], str] = catalog.derived(
            "scopes", (catalog.calibration(), catalog.accelerators(), catalog.models()), dict)
        if len(known) > 100_000:  # ids are catalog ids, so this never fills; a bound all the same
            known.clear()
        scopes = []
        for pair in zip(acc, mod, strict=True):
            scope = known.get(pair)
            if scope is None:
                scope = known[pair] = _scopes(np.array(pair[:1], dtype=object), np.array(pair[1:], dtype=object),
                                              factors)[0]
            scopes.append(scope)
        inverse = np.arange(len(scopes))
    else:  # a million rows hold few distinct pairs: look each pair up once
        code_a, uniq_a = pd.factorize(acc)
        code_m, uniq_m = pd.factorize(mod)
        width = max(len(uniq_m), 1)
        pairs, inverse = np.unique(code_a * width + code_m, return_inverse=True)
        scopes = _scopes(np.asarray(uniq_a, dtype=object)[pairs // width],
                         np.asarray(uniq_m, dtype=object)[pairs % width], factors)
    out = {f: np.array([factors.get(s, {}).get(f, np.nan) for s in scopes], dtype=float)[inverse.ravel()]
           for f in names}
    for extra in (TOKEN_FACTOR, TTFT_FACTOR, KV_FACTOR):
        out.setdefault(extra, np.zeros(len(acc)))
    return out


def _scopes(accelerators: Array, models: Array, factors: dict[str, dict[str, float]]) -> list[str]:
    """The calibration scope of each (accelerator, model) pair: the first of ``<family>:<model class>``,
    ``<family>``, ``global:<model class>`` that ``factors`` holds, else ``global``."""
    fam = accelerator_figure(accelerators, "family", "")
    cls = model_class(models)
    return [next((s for s in (f"{f}:{c}", str(f), f"global:{c}") if s in factors), "global")
            for f, c in zip(fam, cls, strict=True)]


_FACTORS_OF: list[tuple[pd.DataFrame, list[str], dict[str, dict[str, float]]]] = []


def _calibration_factors(cal: pd.DataFrame) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The factors data/calibration.csv holds, and the table as scope -> factor -> value (empty = 0); built once
    per catalog table (the table is cached; a re-read, as after ``calibrate --write``, is a new object, read
    again)."""
    entry = _FACTORS_OF[0] if _FACTORS_OF else None
    if entry is None or entry[0] is not cal:
        names = [f for f in (*FACTORS, TOKEN_FACTOR, TTFT_FACTOR, KV_FACTOR) if f in cal.columns]
        numbers = cal[names].replace("", "0").astype(float)
        entry = (cal, names, {str(scope): dict(zip(names, map(float, row), strict=True))
                              for scope, row in zip(numbers.index, numbers.to_numpy(), strict=True)})
        _FACTORS_OF[:] = [entry]
    return entry[1], entry[2]


def accelerator_figure(ids: Array, field: str, missing: Any = np.nan) -> Array:
    """An accelerators.csv figure for each row's id (``missing`` where absent, the field unknown or the id
    empty)."""
    table = catalog.accelerators()
    codes = catalog.positions(table, "accelerators", ids)
    if field not in table.columns:
        return np.full(len(codes), missing, dtype=float if isinstance(missing, float) else object)

    def build() -> Array:
        column = table[field]
        values = (pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                  if isinstance(missing, float) else column.fillna(missing).to_numpy(dtype=object))
        return np.append(values, missing)

    values: Array = catalog.derived(f"accelerator {field} {type(missing).__name__} {missing!r}", (table,), build)
    return values[codes]


def _efficiency(c: dict[str, Array], m: dict[str, Array],
                factors: dict[str, Array] | None) -> tuple[Array, Array, Array, Array]:
    """Bandwidth, decode compute and prefill compute utilization and the per-layer step overhead [us]: the
    scenario's own, else the given (calibrated) factors, else the stored ones for its accelerator and model."""
    cal = stored_factors(c["accelerator"], c["model"]) if factors is None else factors
    bw, fl, fp, oh = (np.where(np.isnan(c[f]), cal[f], c[f]) for f in FACTORS)
    return bw, fl, fp, oh


def _reasons(c: dict[str, Array], bad: Array, peak: Array, any_fit: Array, speed_at_1: Array, weights: Array,
             kv_max: Array) -> Array:
    """One sentence per infeasible row, naming the constraint and the numbers."""
    table = catalog.accelerators()
    roofline = table["roofline"] if "roofline" in table.columns else pd.Series(dtype=object)
    out = np.full(len(bad), "", dtype=object)
    for r in np.flatnonzero(bad):
        acc, model, prec = str(c["accelerator"][r]), str(c["model"][r]), str(c["precision"][r])
        if roofline.get(acc, "") == "no":
            out[r] = (f"throughput: no roofline estimate for {acc} (dataflow/SRAM system); give a measured "
                      f"output_tokens_per_s_per_accelerator")
        elif np.isnan(peak[r]):
            out[r] = f"precision: {acc} has no {prec} peak in the catalog ({prec} not supported); use another precision"
        elif np.isnan(c["accelerator_memory_gb"][r]) or np.isnan(c["accelerator_bandwidth_tb_per_s"][r]):
            out[r] = f"throughput: memory or bandwidth of {acc} unknown; give them or a measured throughput"
        elif not any_fit[r]:
            n = c["accelerators_per_replica"][r]
            size = int(n) if not np.isnan(n) else int(max(8.0, np.nan_to_num(c["accelerators_per_system"][r], nan=8)))
            usable = size * c["accelerator_memory_gb"][r] * c["memory_utilization"][r]
            out[r] = (f"memory: {model} does not fit: {prec} weights {fmt(weights[r] / 1e9)} GB + KV "
                      f"{fmt(kv_max[r] / 1e9)} GB per sequence > usable {fmt(usable)} GB on {size} x {acc} "
                      f"({fmt(c['accelerator_memory_gb'][r])} GB x {fmt(c['memory_utilization'][r])}); use a "
                      f"lower precision or a larger accelerators_per_replica")
        else:
            out[r] = (f"interactivity: target {fmt(c['target_output_tokens_per_s_per_user'][r])} tokens/s per user "
                      f"not reachable on {acc}: the fastest replica gives {fmt(speed_at_1[r])} tokens/s at batch 1")
    return out


def _rows(c: dict[str, Array], rows: Array) -> dict[str, Array]:
    return {k: np.asarray(v)[rows].copy() if not isinstance(v, np.ndarray) else v[rows].copy() for k, v in c.items()}


def _fill_disaggregated(c: dict[str, Array], out: dict[str, Array], dis: Array,
                        calibration: dict[str, Array] | None, use_curves: bool) -> None:
    """Prefill rate of the first pool and decode rate of the decode pool, where not measured."""
    feasible = np.ones(len(dis), dtype=bool)
    reasons = np.full(len(dis), "", dtype=object)
    estimated = np.zeros(len(dis), dtype=bool)
    # prefill pool: its prefill rate from the roofline (its decode speed does not matter here)
    rows = np.flatnonzero(dis & np.isnan(c["input_tokens_per_s_per_accelerator"]))
    if rows.size:
        sub = _rows(c, rows)
        sub["decode_accelerator"] = np.full(rows.size, "", dtype=object)
        sub["output_tokens_per_s_per_accelerator"] = np.full(rows.size, np.nan)
        sub["target_output_tokens_per_s_per_user"] = np.full(rows.size, np.nan)
        pre = fill_throughput(sub, None if calibration is None else {k: v[rows] for k, v in calibration.items()},
                              use_curves=False)
        c["input_tokens_per_s_per_accelerator"][rows] = sub["input_tokens_per_s_per_accelerator"]
        c["accelerators_per_replica"][rows] = sub["accelerators_per_replica"]
        out["time_to_first_token_s"][rows] = pre["time_to_first_token_s"]
        feasible[rows] &= pre["feasible"]
        reasons[rows] = np.where(pre["feasible"], "", "prefill pool: " + pre["infeasible_reason"].astype(str))
        estimated[rows] = True
        out["_input_estimated"][rows] = True
    # decode pool: the decode accelerator's own catalog hardware, the same model, precision and target
    rows = np.flatnonzero(dis & np.isnan(c["decode_output_tokens_per_s_per_accelerator"]))
    if rows.size:
        sub = _rows(c, rows)
        sub["accelerator"] = sub["decode_accelerator"]
        sub["decode_accelerator"] = np.full(rows.size, "", dtype=object)
        for field, cat_field in CATALOG_FIELDS.items():
            if FIELDS[field].catalog_id == "accelerator" and field not in ("accelerator_cooling", "system_form"):
                sub[field] = accelerator_figure(sub["accelerator"], cat_field, np.nan)
        for field in ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                      "accelerators_per_replica"):
            sub[field] = np.full(rows.size, np.nan)
        dec = fill_throughput(sub, None, use_curves=use_curves)
        c["decode_output_tokens_per_s_per_accelerator"][rows] = sub["output_tokens_per_s_per_accelerator"]
        out["output_tokens_per_s_per_user"][rows] = dec["output_tokens_per_s_per_user"]
        out["batch_size"][rows] = dec["batch_size"]
        out["decode_bound"][rows] = dec["decode_bound"]
        out["throughput_curve"][rows] = dec["throughput_curve"]
        ok = dec["feasible"]
        reasons[rows] = np.where(ok, reasons[rows], np.where(reasons[rows] == "", "", reasons[rows] + "; ")
                                 + "decode pool: " + np.char.replace(dec["infeasible_reason"].astype(str),
                                                                      "output_tokens_per_s_per_accelerator",
                                                                      "decode_output_tokens_per_s_per_accelerator"))
        feasible[rows] &= ok
        estimated[rows] = True
        out["_decode_estimated"][rows] = dec["throughput_source"] == SOURCE_ESTIMATE
    out["throughput_source"][dis & estimated] = SOURCE_ESTIMATE
    out["output_tokens_per_s_per_user"] = np.where(dis & np.isnan(out["output_tokens_per_s_per_user"]),
                                                   c["target_output_tokens_per_s_per_user"],
                                                   out["output_tokens_per_s_per_user"])
    out["feasible"] &= feasible
    out["infeasible_reason"] = np.where(feasible, out["infeasible_reason"], reasons)


def trace_throughput(c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    """Record how row ``trace.row``'s throughput was obtained (curve or roofline), with its numbers."""
    r = trace.row
    source = thr["throughput_source"][r]
    if source == SOURCE_CLAIM:
        claim = claim_record(str(thr["throughput_curve"][r]))
        trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
                  "{claim}", note=f"claim {claim['claim_id']}: {claim['system']}, {claim['conditions']}; "
                  f"{claim['source']}, {claim['source_date']}, {claim['confidence']}; prefill included",
                  claim=(c["output_tokens_per_s_per_accelerator"], "token/s"))
        return
    if source in (SOURCE_CURVE, SOURCE_USER):
        pool = curves() if source == SOURCE_CURVE else user_curves(str(c["curves_sha256"][r]))
        cv = next(cv for cv in pool if cv.curve_id == thr["throughput_curve"][r])
        if np.isnan(c["target_output_tokens_per_s_per_user"][r]) or cv.per_user.size == 1:
            trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
                      "{most_measured} at {per_user_speed}", note=f"curve {cv.curve_id}: the measured point of "
                      f"most throughput (no per-user target, or a single point); {cv.accelerator} x {cv.model} "
                      f"{cv.precision}, {cv.input_tokens:g} in / {cv.output_tokens:g} out; prefill included",
                      most_measured=(np.full(len(c["accelerator"]), cv.most()), "token/s"),
                      per_user_speed=(np.full(len(c["accelerator"]), cv.speed_of_most()), "token/s/user"))
            return
        k = int(np.clip(np.searchsorted(cv.per_user, c["target_output_tokens_per_s_per_user"][r]), 1,
                        cv.per_user.size - 1))
        trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
                  "PCHIP on measured curve at {target_output_tokens_per_s_per_user}, between ({x0}, {y0}) and "
                  "({x1}, {y1})", note=f"curve {cv.curve_id}: {cv.accelerator} x {cv.model} {cv.precision}, "
                  f"{cv.input_tokens:g} in / {cv.output_tokens:g} out; prefill included",
                  target_output_tokens_per_s_per_user=(c["target_output_tokens_per_s_per_user"], "token/s/user"),
                  x0=(cv.per_user[k - 1], "token/s/user"), y0=(cv.per_accelerator[k - 1], "token/s"),
                  x1=(cv.per_user[k], "token/s/user"), y1=(cv.per_accelerator[k], "token/s"))
        return
    if source != SOURCE_ESTIMATE or not thr["feasible"][r]:
        return
    rl = Roofline(c)
    m = rl.m
    n, b = c["accelerators_per_replica"], thr["batch_size"]
    trace.add("weights_gb_per_replica", rl.weights / 1e9, "GB", "{total_params_b} x {bytes_per_parameter}",
              total_params_b=(m["total_params_b"], "billion"), bytes_per_parameter=(rl.bpp, "byte"))
    trace.add("kv_cache_gb_per_sequence", rl.kv_max / 1e9, "GB",
              "{kv_bytes_per_token_per_layer} x ({full_attention_layers} x {context_tokens} + sliding layers x "
              "window) / 1e9", note="context = input + output tokens per request",
              kv_bytes_per_token_per_layer=(rl.per_layer, "byte"),
              full_attention_layers=(m["full_attention_layers"], ""), context_tokens=(rl.c_max, "token"))
    trace.add("max_batch_in_memory", thr["max_batch_in_memory"], "sequence",
              "floor(({accelerators_per_replica} x {accelerator_memory_gb} x {memory_utilization}"
              " - {weights_gb_per_replica}) / {kv_cache_gb_per_sequence})",
              accelerators_per_replica=(n, ""), accelerator_memory_gb=(rl.mem, "GB"),
              memory_utilization=(c["memory_utilization"], ""), weights_gb_per_replica=(rl.weights / 1e9, "GB"),
              kv_cache_gb_per_sequence=(rl.kv_max / 1e9, "GB"))
    target = c["target_output_tokens_per_s_per_user"]
    trace.add("batch_size", b, "sequence",
              "largest B <= min({max_batch_in_memory}, {max_batch_size}) with 1 / t_mix(B) >= "
              "{target_output_tokens_per_s_per_user}",
              note="t_mix: the decode step with its chunked prefill (below); the replica size that gives the most "
                   "throughput per accelerator, prefill included",
              max_batch_in_memory=(thr["max_batch_in_memory"], ""),
              max_batch_size=(c["max_batch_size"], ""),
              target_output_tokens_per_s_per_user=(np.where(np.isnan(target), np.inf, target), "token/s"))
    w = rl.weights_read(b)
    t = rl.step(b, n)
    t_plain = rl.plain_step(b, n)
    spec = bool(rl.spec_k[r] > 0)
    trace.add("target_step_s" if spec else "decode_step_s", t_plain, "s",
              "{overhead_s} + max({weights_read_gb} / ({accelerators_per_replica} x {bandwidth_tb_per_s} x "
              "{bandwidth_utilization}), {batch_size} x {linear_gflop_per_token} / ({accelerators_per_replica} x "
              "{peak_tflops} x {compute_utilization})) / 1,000 + max({batch_size} x {kv_gb_at_average_context} / "
              "({accelerators_per_replica} x {bandwidth_tb_per_s} x {kv_bandwidth_utilization}), {batch_size} x "
              "{attention_gflop_per_token} / ({accelerators_per_replica} x {peak_tflops} x {compute_utilization})) "
              "/ 1,000 + {tensor_parallel_s} + {batch_size} x {token_overhead_s}",
              note=f"weight GEMMs and attention each on their own roofline (the paged KV cache read at its own "
              f"calibrated share of the bandwidth); {thr['decode_bound'][r]}-bound"
              + ("; MoE: only the experts the batch touches are read" if m["experts"][r] > 0 else "")
              + "; tensor_parallel_s: two all-reduces per layer over the interconnect (2 log2 n latency rounds "
              "each); token_overhead_s: per-token work outside GEMMs and attention over all layers (calibrated)"
              + ("; expert-parallel all-to-all included in tensor_parallel_s" if rl.ep[r] > 1 else "")
              + ("; DP attention: the non-expert weights copied in each attention group are read too"
                 if rl.weights_copied[r] > 0 else ""),
              overhead_s=(rl.overhead, "s"), weights_read_gb=(w / 1e9, "GB"), batch_size=(b, ""),
              kv_gb_at_average_context=(rl.kv_avg / 1e9, "GB"), accelerators_per_replica=(n, ""),
              bandwidth_tb_per_s=(rl.bw, "TB/s"), bandwidth_utilization=(rl.eff_bw, ""),
              kv_bandwidth_utilization=(rl.eff_kv, ""),
              linear_gflop_per_token=(rl.linear_flops_tok / 1e9, "GFLOP"),
              attention_gflop_per_token=(rl.attention_flops * rl.attention_cost / 1e9, "GFLOP"),
              peak_tflops=(rl.peak, "TFLOPS"), compute_utilization=(rl.eff_f, ""),
              tensor_parallel_s=(rl.communication_s(b, n), "s"), token_overhead_s=(rl.token_overhead_s, "s"))
    if spec:
        drafts = rl.spec_k
        trace.add("decode_step_s", t, "s",
                  "({verify_step_s} + {draft_tokens} x {draft_cost_fraction} x {target_step_s}) / {tokens_per_step}",
                  note=f"speculative decoding ({c['serving_stack'][r]}): the target model verifies 1 + k tokens of "
                  "every sequence, k draft steps at a fraction of its step; tokens_per_step = (1 - a^(k+1)) / (1 - a)",
                  verify_step_s=(rl.plain_step(b, n, drafts + 1.0), "s"), draft_tokens=(drafts, "token"),
                  draft_cost_fraction=(rl.draft_f, ""), target_step_s=(t_plain, "s"),
                  tokens_per_step=(rl.spec_e, "token"))
    p_rep = rl.prefill_rate(n)
    t_mix = rl.mixed_step(b, n)
    trace.add("input_tokens_per_s_per_accelerator", c["input_tokens_per_s_per_accelerator"], "token/s",
              "1 / ({prefill_gflop_per_token} / ({accelerators_per_replica} x {peak_tflops} x "
              "{prefill_compute_utilization}) / 1,000 + {tensor_parallel_s_per_token} + {token_overhead_s}) / "
              "{accelerators_per_replica}",
              note="chunked prefill in large batches: compute-bound (linear layers + causal attention over the prompt)",
              prefill_gflop_per_token=(rl.prefill_flops_tok / 1e9, "GFLOP"), accelerators_per_replica=(n, ""),
              peak_tflops=(rl.peak, "TFLOPS"), prefill_compute_utilization=(rl.eff_p, ""),
              tensor_parallel_s_per_token=(rl.communication_s(1.0, n) - rl.communication_s(0.0, n), "s"),
              token_overhead_s=(rl.token_overhead_s, "s"))
    trace.add("mixed_step_s", t_mix, "s",
              "{decode_step_s} + {batch_size} x {uncached_input_tokens} / {output_tokens_per_request} / "
              "({accelerators_per_replica} x {input_tokens_per_s_per_accelerator})",
              note="each step also prefills the prompts of the B / O requests that replace finished ones",
              decode_step_s=(t, "s"), batch_size=(b, ""), uncached_input_tokens=(rl.i_miss, "token"),
              output_tokens_per_request=(rl.o_req, "token"), accelerators_per_replica=(n, ""),
              input_tokens_per_s_per_accelerator=(p_rep / n, "token/s"))
    if rl.disagg[r]:
        trace.add("output_tokens_per_s_per_user", 1.0 / t, "token/s", "1 / {decode_step_s}",
                  note="disaggregated stack: prefill runs on other accelerators, the user's step carries none",
                  decode_step_s=(t, "s"))
    else:
        trace.add("output_tokens_per_s_per_user", 1.0 / t_mix, "token/s", "1 / {mixed_step_s}",
                  mixed_step_s=(t_mix, "s"))
    trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
              "{batch_size} / ({accelerators_per_replica} x {decode_step_s})", batch_size=(b, ""),
              accelerators_per_replica=(n, ""), decode_step_s=(t, "s"),
              note="decode only; the prefill time is added by the capacity step from the prefill rate")
    share = (t_mix - t) / t_mix
    if rl.disagg[r]:
        kv_link = th.kv_transfer_s(rl.kv_prompt, rl.scale_out)
        trace.add("time_to_first_token_s", thr["time_to_first_token_s"], "s",
                  "{request_overhead_s} + {decode_step_s} + {kv_transfer_s} + {uncached_input_tokens} / "
                  "({accelerators_per_replica} x {input_tokens_per_s_per_accelerator})",
                  note="disaggregated: the prompt's KV cache crosses the link to the decode accelerators "
                       "(kv_transfer_s = KV of the prompt / link); no decode step's prefill queues in front",
                  request_overhead_s=(rl.request_overhead_s, "s"), decode_step_s=(t, "s"),
                  kv_transfer_s=(kv_link, "s"), uncached_input_tokens=(rl.i_miss, "token"),
                  accelerators_per_replica=(n, ""), input_tokens_per_s_per_accelerator=(p_rep / n, "token/s"))
        return
    trace.add("time_to_first_token_s", thr["time_to_first_token_s"], "s",
              "{request_overhead_s} + {decode_step_s} + {uncached_input_tokens} / ({accelerators_per_replica} x "
              "{input_tokens_per_s_per_accelerator}) x (1 + {prefill_share} / (2 x (1 - {prefill_share})))",
              note="fixed per-request time (calibrated), the step that carries the prompt, and the prompt at the "
                   "prefill rate queued behind the other requests' prefill (M/D/1; prefill_share = share of the step "
                   "spent prefilling)",
              decode_step_s=(t, "s"), uncached_input_tokens=(rl.i_miss, "token"), accelerators_per_replica=(n, ""),
              input_tokens_per_s_per_accelerator=(p_rep / n, "token/s"), prefill_share=(share, ""),
              request_overhead_s=(rl.request_overhead_s, "s"))
