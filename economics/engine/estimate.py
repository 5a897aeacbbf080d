"""Fill a scenario's throughput when it is not measured: a measured curve if one covers the target, else the roofline.

Column-wise over scenarios. For each row without ``output_tokens_per_s_per_accelerator``:

1. **Measured records** (:mod:`economics.engine.measured`), each only for its own configuration: a curve file of yours
   (``curves_sha256``), a catalog claim the row names (``throughput_claim``), then a curve in
   data/throughput_curves.csv for the same accelerator, model and precision, with input/output lengths within a
   factor 1.25 of the scenario's, whose measured per-user range contains the target: throughput is interpolated
   along the measured Pareto front with a monotone PCHIP interpolant (never extrapolated). The measured figure
   includes prefill; where the model is known the roofline's prefill rate splits its cost between input and output
   (:data:`~economics.domain.revenue.PREFILL_ESTIMATE`). Every curve belongs to a serving stack
   (data/serving_stacks.csv): with ``serving_stack=best`` the highest of all stacks' curves at the target wins (the
   upper envelope of the fronts); a pinned stack uses only its own curves.
2. **Roofline** (:mod:`economics.domain.throughput`): for each replica size (or the one given), the largest batch
   that fits memory, respects the engine's batch limit and whose per-user speed, with its share of chunked prefill,
   still meets the target; the replica size with the most throughput per accelerator (prefill included) wins. The
   prefill rate is compute-bound; the time to first token is the carrying step plus the queued prompt
   (:class:`~economics.engine.roofline.Roofline`). The efficiency factors are the scenario's, else those passed in,
   else the stored calibration (:func:`~economics.engine.roofline.stored_factors`): this module never imports the
   calibration that fits them. A pinned stack without a curve brings its terms
   (:func:`~economics.engine.roofline.stack_columns`: speculative decoding, expert parallelism with DP attention,
   disaggregation) and its replica size; ``serving_stack_used`` then says that the roofline answered for that stack.

Rows that cannot be estimated come back ``feasible=False`` with the reason and the numbers, never as an exception.
The roofline itself is :mod:`economics.engine.roofline`, the replica and batch search :mod:`economics.engine.replicas`;
this module runs the steps in order; :mod:`economics.engine.derivation` records their derivation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.domain import throughput as th
from economics.domain.explain import format_number as fmt
from economics.domain.precision import split_precision
from economics.domain.revenue import PREFILL_ESTIMATE
from economics.engine.measured import (
    SOURCE_ESTIMATE,
    SOURCE_GIVEN,
    Curve,
    Front,
    configuration_precision,
    curves,
    fronts,
    given_elsewhere,
    take_claims,
    take_curve,
    take_front,
    take_user_curves,
)
from economics.engine.measured import configuration as _configuration
from economics.engine.replicas import best_replica
from economics.engine.roofline import (
    BEST,
    FEW_ROWS,
    ROOFLINE_STACK,
    Array,
    Roofline,
    accelerator_figure,
    model_columns,
    stack_columns,
)
from economics.schema.outputs import THROUGHPUT
from economics.schema.scenario import CATALOG_FIELDS, FIELDS

THROUGHPUT_OUTPUTS: dict[str, str] = {o.name: o.unit for o in THROUGHPUT}
"""Outputs of the throughput step with their units ('text' for words); empty where they do not apply."""


ESTIMATED_INPUTS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                    "accelerators_per_replica")
"""Input columns the estimate fills when they are empty."""


def _candidate_curves(c: dict[str, Array], need: Array) -> tuple[Curve, ...] | list[Curve]:
    """The measured curves :func:`fill_throughput` tries, in order: all of them for many rows; for a few, only
    those of an accelerator, model and precision a row needing an estimate has (the others match no row).
    """
    if need.size > FEW_ROWS:
        return curves()
    pairs = set(zip(c["accelerator"][need], c["model"][need], configuration_precision(c)[need], strict=True))
    return [cv for cv in curves() if (cv.accelerator, cv.model, cv.precision) in pairs]


def _candidate_fronts(c: dict[str, Array], need: Array) -> tuple[Front, ...] | list[Front]:
    """The published fronts :func:`fill_throughput` tries, chosen as :func:`_candidate_curves` chooses curves."""
    if need.size > FEW_ROWS:
        return fronts()
    pairs = set(zip(c["accelerator"][need], c["model"][need], configuration_precision(c)[need], strict=True))
    return [f for f in fronts() if (f.accelerator, f.model, f.precision) in pairs]


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
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool) if "decode_accelerator" in c else np.zeros(n_rows,
                                                                                                           bool)
    if given.all() and not dis.any():
        return _all_given(c, given, target, n_rows)
    out = _unestimated(given, target, n_rows)
    given_elsewhere(c, out, given)
    if dis.any():
        _fill_disaggregated(c, out, dis, calibration, use_curves)
    need = ~given & ~dis
    if not need.any():
        return out
    out["throughput_source"][need] = SOURCE_ESTIMATE
    m = model_columns(c["model"])
    stack = np.asarray(c["serving_stack"], dtype=object) if "serving_stack" in c else np.full(n_rows, BEST, object)
    stack = np.where((stack == "") | pd.isna(stack), BEST, stack)
    from_curve = _take_measured(c, out, need, target, stack, use_curves)
    _estimate_prefill(c, out, from_curve & np.isnan(c["input_tokens_per_s_per_accelerator"]), m, calibration)
    need &= ~from_curve
    if need.any():
        _take_roofline(c, out, need, target, stack, m, calibration)
    return out


def _unestimated(given: Array, target: Array, n_rows: int) -> dict[str, Array]:
    """:func:`fill_throughput`'s outputs before any row is estimated: each row's own arrays, the given rows'
    per-user speed their target, every row feasible.
    """
    return {
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


def _take_measured(c: dict[str, Array], out: dict[str, Array], need: Array, target: Array, stack: Array,
                   use_curves: bool) -> Array:
    """Step 1 of :func:`fill_throughput`: the rows ``need``-ing an estimate that a measured record answers, written
    into ``c`` and ``out``; returns them. ``stack`` is each row's serving stack (``best`` where none is pinned).
    """
    best_d = np.full(len(need), -np.inf)
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
    # the published front of every stack (best only): where the target falls between two runs' points
    for fr in _candidate_fronts(c, left) if use_curves and left.any() else ():
        match = left & _configuration(c, fr) & ~np.isnan(target) & (stack == BEST)
        if match.any():
            from_curve |= take_front(c, out, fr, match, target, best_d)
    out["outside_measured_range"] &= ~from_curve
    return from_curve


def _take_roofline(c: dict[str, Array], out: dict[str, Array], need: Array, target: Array, stack: Array,
                   m: dict[str, Array], calibration: dict[str, Array] | None) -> None:
    """Step 2 of :func:`fill_throughput`, for the rows still ``need``-ing an estimate: the roofline with the pinned
    stack's terms (and its replica size where none is given), else the plain stack; the best replica size and batch
    (:func:`~economics.engine.replicas.best_replica`) written into ``c`` and ``out``, and the rows it cannot
    describe or fit infeasible, with the reason.
    """
    out["serving_stack_used"] = np.where(need, np.where(
        stack == BEST, ROOFLINE_STACK + " (no published stack measured for this pair, lengths and speed)",
        stack + " (roofline with its terms: no measured curve for this pair, lengths and speed)"),
        out["serving_stack_used"])
    pinned_n = stack_columns(np.where(need, stack, BEST))["replica"]
    c["accelerators_per_replica"] = np.where(need & np.isnan(c["accelerators_per_replica"]), pinned_n,
                                             c["accelerators_per_replica"])
    rl = Roofline(c, m, calibration)
    best = best_replica(c, rl, need, target)
    describable = accelerator_figure(c["accelerator"], "roofline", True).astype(bool)  # dataflow/SRAM: not
    est = need & (best["effective"] > 0) & describable
    _write_roofline(c, out, rl, best, est)
    out["weights_gb_per_replica"] = np.where(need, th.WEIGHTS_GB.evaluate({"weight_bytes_per_replica": rl.weights}),
                                             np.nan)
    out["kv_cache_gb_per_sequence"] = np.where(need, th.KV_GB.evaluate({"kv_bytes_at_full_context": rl.kv_max}),
                                               np.nan)
    bad = need & ~est
    if bad.any():
        reasons = _reasons(c, bad, rl.peak, best["any_fit"], best["speed_at_1"], rl.weights, rl.kv_max)
        pinned = np.where(stack != BEST, reasons + " (serving stack " + stack.astype(str)
                          + ": roofline with its terms, no measured curve for this pair)", reasons)
        # only these rows: a disaggregated row's pools were judged before (its reason is its own, whatever the table)
        out["feasible"] &= ~bad
        out["infeasible_reason"] = np.where(bad, pinned, out["infeasible_reason"])


def _write_roofline(c: dict[str, Array], out: dict[str, Array], rl: Roofline, best: dict[str, Array],
                    est: Array) -> None:
    """The roofline's figures at the best replica size and batch (``best``) on the rows ``est``: the rates and
    replica size into ``c`` (the input rate only where not given), the per-user speed, batch, TTFT, bound and batch
    in memory into ``out``.
    """
    n_best, b_best = best["n"], np.maximum(best["b"], 1.0)
    t, p_rep = rl.step(b_best, n_best), rl.prefill_rate(n_best)
    per_replica = {"batch_size": b_best, "accelerators_per_replica": n_best, "decode_step_s": t,
                   "prefill_tokens_per_s_per_replica": p_rep}
    c["output_tokens_per_s_per_accelerator"] = np.where(est, th.OUTPUT_RATE.evaluate(per_replica),
                                                        c["output_tokens_per_s_per_accelerator"])
    # this estimate's own rows: a disaggregated row's prefill rate, estimated before, is not this replica's
    fresh = est & np.isnan(c["input_tokens_per_s_per_accelerator"])
    out["_input_estimated"] |= fresh
    c["input_tokens_per_s_per_accelerator"] = np.where(fresh, th.INPUT_RATE.evaluate(per_replica),
                                                       c["input_tokens_per_s_per_accelerator"])
    c["accelerators_per_replica"] = np.where(est, n_best, c["accelerators_per_replica"])
    out["output_tokens_per_s_per_user"] = np.where(
        est, th.USER_SPEED.evaluate({"mixed_step_s": rl.user_step(b_best, n_best, t,
                                                                  rl.mixed_step(b_best, n_best, t, p_rep))}),
        out["output_tokens_per_s_per_user"])
    # the other rows keep theirs (a disaggregated row's pools were estimated before: its batch, TTFT and bound)
    out["batch_size"] = np.where(est, best["b"], out["batch_size"])
    out["time_to_first_token_s"] = np.where(est, rl.time_to_first_token(b_best, n_best, t, p_rep),
                                            out["time_to_first_token_s"])
    out["decode_bound"] = np.where(est, rl.decode_bound(b_best, n_best), out["decode_bound"])
    out["max_batch_in_memory"] = np.where(est, best["bmem"], out["max_batch_in_memory"])


def _all_given(c: dict[str, Array], given: Array, target: Array, n_rows: int) -> dict[str, Array]:
    """:func:`fill_throughput` where every row gives its throughput and has one pool (the usual table): nothing is
    estimated, so each output but the per-user speed and the note is the same on every row, a read-only view of
    one value (a million measured rows allocate none of them; the note can say a figure was measured elsewhere).
    """
    def same(value: Any, dtype: Any) -> Array:
        return np.broadcast_to(np.array(value, dtype=dtype), (n_rows,))

    nan, empty = same(np.nan, float), same("", object)
    out: dict[str, Array] = {
        "throughput_source": same(SOURCE_GIVEN, object), "throughput_curve": empty, "serving_stack_used": empty,
        "output_tokens_per_s_per_user": np.where(given, target, np.nan), "batch_size": nan,
        "time_to_first_token_s": nan, "decode_bound": empty, "weights_gb_per_replica": nan,
        "kv_cache_gb_per_sequence": nan, "max_batch_in_memory": nan, "feasible": same(True, bool),
        "outside_measured_range": same(False, bool), "infeasible_reason": empty,
        "throughput_note": np.full(n_rows, "", dtype=object), "throughput_date": empty, PREFILL_ESTIMATE: nan,
        "_input_estimated": same(False, bool), "_decode_estimated": same(False, bool)}
    given_elsewhere(c, out, given)
    return out


def _estimate_prefill(c: dict[str, Array], out: dict[str, Array], rows: Array, m: dict[str, Array],
                      calibration: dict[str, Array] | None) -> None:
    """For rows whose measured figure (claim or curve) includes prefill: the roofline's prefill tokens/s per
    accelerator (replica of ``accelerators_per_replica``, else one), only to split their cost between input and
    output tokens (:data:`PREFILL_ESTIMATE`); NaN where the model or the hardware is not one the roofline describes.
    """
    rows = rows & (np.asarray(c["model"], dtype=object) != "") & (
        accelerator_figure(c["accelerator"], "roofline", True).astype(bool))
    if not rows.any():
        return
    sub = _rows(c, rows)
    rl = Roofline(sub, {k: v[rows] for k, v in m.items()},
                  None if calibration is None else {k: np.asarray(v)[rows] for k, v in calibration.items()})
    n = np.nan_to_num(sub["accelerators_per_replica"], nan=1.0)
    rate = th.INPUT_RATE.evaluate({"prefill_tokens_per_s_per_replica": rl.prefill_rate(n),
                                   "accelerators_per_replica": n})
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


def _reasons(c: dict[str, Array], bad: Array, peak: Array, any_fit: Array, speed_at_1: Array, weight_bytes: Array,
             kv_max: Array) -> Array:
    """One sentence per infeasible row, naming the constraint and the numbers."""
    table = catalog.accelerators()
    roofline = table["roofline"] if "roofline" in table.columns else pd.Series(dtype=bool)
    out = np.full(len(bad), "", dtype=object)
    weights, compute = split_precision(c["precision"], c.get("weight_precision"), c.get("compute_precision"))
    for r in np.flatnonzero(bad):
        acc, model, prec, field = str(c["accelerator"][r]), str(c["model"][r]), str(compute[r]), "precision"
        if weights[r] != compute[r] or prec != c["precision"][r]:
            field = "compute_precision"  # the precisions given apart: the compute's is the one without a peak
        if not roofline.get(acc, True):
            out[r] = (f"throughput: no roofline estimate for {acc} (dataflow/SRAM system); give a measured "
                      f"output_tokens_per_s_per_accelerator")
        elif np.isnan(peak[r]):
            out[r] = f"{field}: {acc} has no {prec} peak in the catalog ({prec} not supported); use another {field}"
        elif np.isnan(c["accelerator_memory_gb"][r]) or np.isnan(c["accelerator_bandwidth_tb_per_s"][r]):
            out[r] = f"throughput: memory or bandwidth of {acc} unknown; give them or a measured throughput"
        elif not any_fit[r]:
            n = c["accelerators_per_replica"][r]
            size = int(n) if not np.isnan(n) else int(max(8.0, np.nan_to_num(c["accelerators_per_system"][r], nan=8)))
            usable = size * c["accelerator_memory_gb"][r] * c["memory_utilization"][r]
            out[r] = (f"memory: {model} does not fit: {weights[r]} weights {fmt(weight_bytes[r] / 1e9)} GB + KV "
                      f"{fmt(kv_max[r] / 1e9)} GB per sequence > usable {fmt(usable)} GB on {size} x {acc} "
                      f"({fmt(c['accelerator_memory_gb'][r])} GB x {fmt(c['memory_utilization'][r])}); use a "
                      f"lower precision or a larger accelerators_per_replica")
        else:
            out[r] = (f"interactivity: target {fmt(c['target_output_tokens_per_s_per_user'][r])} tokens/s per user "
                      f"not reachable on {acc}: the fastest replica gives {fmt(speed_at_1[r])} tokens/s at batch 1")
    return out


def _rows(c: dict[str, Array], rows: Array) -> dict[str, Array]:
    return {k: np.asarray(v)[rows].copy() if not isinstance(v, np.ndarray) else v[rows].copy() for k, v in c.items()}


def prefill_pool_columns(c: dict[str, Array], rows: Array) -> dict[str, Array]:
    """The columns of ``rows``' prefill pool as one-pool scenarios: its prefill rate is the roofline's, whatever its
    decode speed (no decode figure, no per-user target).
    """
    sub = _rows(c, rows)
    sub["decode_accelerator"] = np.full(rows.size, "", dtype=object)
    sub["output_tokens_per_s_per_accelerator"] = np.full(rows.size, np.nan)
    sub["target_output_tokens_per_s_per_user"] = np.full(rows.size, np.nan)
    return sub


def decode_pool_columns(c: dict[str, Array], rows: Array) -> dict[str, Array]:
    """The columns of ``rows``' decode pool as one-pool scenarios: the decode accelerator's own catalog hardware,
    the same model, precision and per-user target, its throughput and replica size to estimate.
    """
    sub = _rows(c, rows)
    sub["accelerator"] = sub["decode_accelerator"]
    sub["decode_accelerator"] = np.full(rows.size, "", dtype=object)
    for field, cat_field in CATALOG_FIELDS.items():
        if FIELDS[field].catalog_id == "accelerator" and field not in ("accelerator_cooling", "system_form"):
            sub[field] = accelerator_figure(sub["accelerator"], cat_field, np.nan)
    for field in ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                  "accelerators_per_replica"):
        sub[field] = np.full(rows.size, np.nan)
    return sub


def _fill_disaggregated(c: dict[str, Array], out: dict[str, Array], dis: Array,
                        calibration: dict[str, Array] | None, use_curves: bool) -> None:
    """Prefill rate of the first pool and decode rate of the decode pool, where not measured."""
    feasible = np.ones(len(dis), dtype=bool)
    reasons = np.full(len(dis), "", dtype=object)
    estimated = np.zeros(len(dis), dtype=bool)
    # prefill pool: its prefill rate from the roofline (its decode speed does not matter here)
    rows = np.flatnonzero(dis & np.isnan(c["input_tokens_per_s_per_accelerator"]))
    if rows.size:
        sub = prefill_pool_columns(c, rows)
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
        sub = decode_pool_columns(c, rows)
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
