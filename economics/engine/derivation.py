"""How one row's throughput was obtained, for ``explain``: the claim or curve it was read from, or the roofline's
arithmetic.

The roofline's lines are recorded from the formula objects of :mod:`economics.domain.throughput` over the very terms
the :class:`~economics.engine.roofline.Roofline` evaluates them on (its ``*_terms`` methods), so the printed
derivation is the computation, step by step, and the derivation test re-does each line from its printed numbers.
Lookups (a claim, a point of a measured curve) and the batch search are described in words with their numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from economics.domain import throughput as th
from economics.domain.explain import Trace
from economics.domain.formula import Formula
from economics.engine.estimate import decode_pool_columns, fill_throughput, prefill_pool_columns
from economics.engine.measured import (
    SOURCE_CLAIM,
    SOURCE_CURVE,
    SOURCE_ESTIMATE,
    SOURCE_USER,
    Curve,
    Front,
    claim_record,
    curves,
    fronts,
    user_curves,
)
from economics.engine.roofline import Array, Roofline

AVERAGE = "kv_bytes_at_average_context"
FULL = "kv_bytes_at_full_context"


def trace_throughput(c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    """Record how row ``trace.row``'s throughput was obtained (claim, curve or roofline), with its numbers."""
    r = trace.row
    source = thr["throughput_source"][r]
    if "decode_accelerator" in c and str(c["decode_accelerator"][r]) != "":
        _trace_pools(c, thr, trace)
    elif source == SOURCE_CLAIM:
        _trace_claim(c, thr, trace)
    elif source in (SOURCE_CURVE, SOURCE_USER):
        _trace_curve(c, thr, trace, source)
    elif source == SOURCE_ESTIMATE and thr["feasible"][r]:
        _trace_roofline(c, thr, trace)


def _trace_pools(c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    """A prefill pool and a decode pool of another accelerator: each pool's estimate is worked out as the engine
    worked it out, as a one-pool scenario (:func:`~economics.engine.estimate.prefill_pool_columns`,
    :func:`~economics.engine.estimate.decode_pool_columns`), and its lines are named for the pool.
    """
    rows = np.array([trace.row])
    if thr["_input_estimated"][trace.row]:
        sub = prefill_pool_columns(c, rows)
        sub["input_tokens_per_s_per_accelerator"][:] = np.nan  # filled by the engine: estimated again here
        _trace_pool(sub, trace, "prefill_pool_")
    if thr["_decode_estimated"][trace.row] or str(thr["throughput_curve"][trace.row]):
        _trace_pool(decode_pool_columns(c, rows), trace, "decode_pool_")


def _trace_pool(sub: dict[str, Array], trace: Any, prefix: str) -> None:
    """One pool's lines, from its own estimate, appended to ``trace`` under ``prefix``."""
    pool = fill_throughput(sub)
    if not pool["feasible"][0]:
        return
    one = Trace(0)
    trace_throughput(sub, pool, one)
    for step in one.steps:
        step.name = prefix + step.name
        trace.steps.append(step)


def _record(trace: Any, formula: Formula, values: Mapping[str, Any], result: Any = None, name: str = "",
            note: str = "", **rename: str) -> Any:
    """Record ``formula`` on ``values`` for the trace's row, renamed ``name`` and with its symbols renamed
    (``symbol=name``; still the one definition, :meth:`Formula.bind`); ``result`` is the engine's value (evaluated
    here when None). Returns the result.
    """
    bound = formula.bind(name or formula.name, **rename) if name or rename else formula
    terms = {rename.get(k, k): v for k, v in values.items()}
    out = bound.evaluate(terms) if result is None else result
    trace.record(bound, terms, out, note)
    return out


def _trace_claim(c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    claim = claim_record(str(thr["throughput_curve"][trace.row]))
    trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
              "{claim}", note=f"claim {claim['claim_id']}: {claim['system']}, {claim['conditions']}; "
              f"{claim['source']}, {claim['source_date']}, {claim['confidence']}; prefill included",
              claim=(c["output_tokens_per_s_per_accelerator"], "token/s"))


def _trace_curve(c: dict[str, Array], thr: dict[str, Array], trace: Any, source: str) -> None:
    r = trace.row
    pool = (*curves(), *fronts()) if source == SOURCE_CURVE else user_curves(str(c["curves_sha256"][r]))
    cv = next(cv for cv in pool if cv.curve_id == thr["throughput_curve"][r])
    shape = f"{cv.accelerator} x {cv.model} {cv.precision}, {cv.input_tokens:g} in / {cv.output_tokens:g} out"
    if np.isnan(c["target_output_tokens_per_s_per_user"][r]) or cv.per_user.size == 1:
        trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
                  "{most_measured} at {per_user_speed}", note=f"curve {cv.curve_id}: the measured point of "
                  f"most throughput (no per-user target, or a single point); {shape}; prefill included",
                  most_measured=(np.full(len(c["accelerator"]), cv.most()), "token/s"),
                  per_user_speed=(np.full(len(c["accelerator"]), cv.speed_of_most()), "token/s/user"))
        return
    k = int(np.clip(np.searchsorted(cv.per_user, c["target_output_tokens_per_s_per_user"][r]), 1,
                    cv.per_user.size - 1))
    trace.add("output_tokens_per_s_per_accelerator", c["output_tokens_per_s_per_accelerator"], "token/s",
              "PCHIP on measured curve at {target_output_tokens_per_s_per_user}, between ({x0}, {y0}) and "
              "({x1}, {y1})", note=f"curve {cv.curve_id}: {shape}; prefill included" + _neighbours(cv, k),
              target_output_tokens_per_s_per_user=(c["target_output_tokens_per_s_per_user"], "token/s/user"),
              x0=(cv.per_user[k - 1], "token/s/user"), y0=(cv.per_accelerator[k - 1], "token/s"),
              x1=(cv.per_user[k], "token/s/user"), y1=(cv.per_accelerator[k], "token/s"))


def _neighbours(cv: Curve, k: int) -> str:
    """For a published front, the runs its two bracketing points come from (one each)."""
    if not isinstance(cv, Front):
        return ""
    (id0, st0, _), (id1, st1, _) = cv.origins[k - 1], cv.origins[k]
    return f"; the two points are {id0} (stack {st0}) and {id1} (stack {st1})"


def _trace_roofline(c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    """The roofline's lines: memory, the batch found, the decode step, prefill, speeds and the time to first
    token.
    """
    rl = Roofline(c)
    n, b = c["accelerators_per_replica"], thr["batch_size"]
    _trace_memory(rl, c, thr, trace)
    target = c["target_output_tokens_per_s_per_user"]
    session = rl.slowest_context is not None and not np.isnan(rl.slowest_context[trace.row])
    trace.add("batch_size", b, "sequence",
              "largest B <= min({max_batch_in_memory}, {max_batch_size}) with "
              + ("1 / last_turn_decode_step_s(B) >= " if session else "1 / t_mix(B) >= ")
              + "{target_output_tokens_per_s_per_user}",
              note=("a session: its slowest turn, the last, holds the target (last_turn_decode_step_s below, at the "
                    "batch found); " if session else "")
              + "t_mix: the decode step with its chunked prefill (below); the replica size that gives the most "
                "throughput per accelerator, prefill included",
              max_batch_in_memory=(thr["max_batch_in_memory"], ""), max_batch_size=(c["max_batch_size"], ""),
              target_output_tokens_per_s_per_user=(np.where(np.isnan(target), np.inf, target), "token/s"))
    t = _trace_step(rl, c, thr, trace, b, n)
    p_rep = _record(trace, th.PREFILL_RATE, rl.prefill_terms(n))
    if thr["_input_estimated"][trace.row]:
        _record(trace, th.INPUT_RATE, {"prefill_tokens_per_s_per_replica": p_rep, "accelerators_per_replica": n},
                c["input_tokens_per_s_per_accelerator"])
    if rl.disagg[trace.row]:
        _record(trace, th.USER_SPEED, {"decode_step_s": t}, thr["output_tokens_per_s_per_user"],
                note="disaggregated stack: prefill runs on other accelerators, the user's step carries none",
                mixed_step_s="decode_step_s")
    else:
        t_mix = _record(trace, th.MIXED_STEP, rl.mixed_terms(b, n, t, p_rep))
        _record(trace, th.USER_SPEED, {"mixed_step_s": t_mix}, thr["output_tokens_per_s_per_user"])
    _record(trace, th.OUTPUT_RATE, {"batch_size": b, "accelerators_per_replica": n, "decode_step_s": t},
            c["output_tokens_per_s_per_accelerator"])
    _trace_first_token(rl, thr, trace, rl.first_token_terms(b, n, t, p_rep))


def _trace_memory(rl: Roofline, c: dict[str, Array], thr: dict[str, Array], trace: Any) -> None:
    """Weights, the KV cache of a sequence at its full context, and the batch that fits."""
    r = trace.row
    weights = _record(trace, th.WEIGHT_BYTES, rl.weight_terms, rl.weights,
                      note=f"bytes_per_parameter: {rl.weight_precision[r]} weights"
                      + (f", {rl.compute_precision[r]} compute" if rl.weight_precision[r] != rl.compute_precision[r]
                         else "") + f" ({8 * rl.bpp[r]:g} bits a parameter)")
    _record(trace, th.WEIGHTS_GB, {"weight_bytes_per_replica": weights}, thr["weights_gb_per_replica"])
    kv_max = _record(trace, th.KV_BYTES_PER_SEQUENCE, rl.kv_terms_max, rl.kv_max, name=FULL,
                     note="at the full context: input + output tokens of a request",
                     context_tokens="full_context_tokens")
    _record(trace, th.KV_GB, {FULL: kv_max}, thr["kv_cache_gb_per_sequence"])
    _record(trace, th.MAX_BATCH_IN_MEMORY, {
        "accelerators_per_replica": c["accelerators_per_replica"], "accelerator_memory_gb": rl.mem,
        "memory_utilization": c["memory_utilization"], "weight_bytes_per_replica": weights,
        "kv_bytes_per_sequence": kv_max}, thr["max_batch_in_memory"], kv_bytes_per_sequence=FULL)


def _trace_step(rl: Roofline, c: dict[str, Array], thr: dict[str, Array], trace: Any, b: Array, n: Array) -> Array:
    """The decode step at the batch found (the target model's, then the speculative step per token); returns t(B)."""
    r = trace.row
    _record(trace, th.KV_BYTES_PER_SEQUENCE, rl.kv_terms_avg, rl.kv_avg, name=AVERAGE,
            note="at the average context of a decoding sequence: input + half the output tokens",
            context_tokens="average_context_tokens")
    spec = bool(rl.spec_k[r] > 0)
    plain_terms = rl.plain_step_terms(b, n)
    note = (f"{thr['decode_bound'][r]}-bound; weight_bytes_read: "
            + ("the always-active weights and the experts the batch touches" if rl.m["experts"][r] > 0
               else "every weight, each step")
            + ("; the non-expert weights copied in each DP-attention group included" if rl.weights_copied[r] > 0
               else "")
            + ("; attention_flops_per_token scaled to the FP8 peak (attention does not run at FP4)"
               if rl.compute_precision[r] == "fp4" else "")
            + "; tensor_parallel_s: two all-reduces per layer (2 log2 n latency rounds each)"
            + (" and the expert-parallel all-to-all" if rl.ep[r] > 1 else "")
            + "; overhead_s and token_overhead_s calibrated per layer")
    plain = _record(trace, th.DECODE_STEP, plain_terms, name="target_step_s" if spec else "", note=note,
                    kv_bytes_per_sequence=AVERAGE)
    if not spec:
        return np.asarray(plain)
    given = not np.isnan(np.asarray(c.get("speculative_draft_tokens", [np.nan]), dtype=float)[r]) or not np.isnan(
        np.asarray(c.get("speculative_acceptance_rate", [np.nan]), dtype=float)[r])
    _record(trace, th.TOKENS_PER_STEP, th.speculative_acceptance_terms(rl.spec_a, rl.spec_k), rl.spec_e,
            note="the scenario's speculative_draft_tokens / speculative_acceptance_rate where given, else the serving "
                 f"stack's ({c['serving_stack'][r]})" if given else f"the serving stack's ({c['serving_stack'][r]})")
    spec_note = ("speculative decoding: the target model verifies 1 + k tokens of every sequence (target_step_s "
                 "over k + 1 tokens each) and k draft steps cost draft_cost_fraction of its step each")
    return np.asarray(_record(trace, th.SPECULATIVE_STEP, rl.speculative_terms(b, n, plain), rl.step(b, n),
                              note=spec_note))


def _trace_first_token(rl: Roofline, thr: dict[str, Array], trace: Any, terms: dict[str, Array]) -> None:
    """The prompt's prefill, queued behind the others' (aggregated), and the time to first token."""
    _record(trace, th.PROMPT_PREFILL, terms, terms["prompt_prefill_s"])
    if rl.disagg[trace.row]:
        _record(trace, th.QUEUED_PREFILL, terms, terms["queued_prefill_s"],
                note="disaggregated: no decode step's prefill queues in front (prefill_share 0)")
    else:
        _record(trace, th.PREFILL_SHARE, terms, terms["prefill_share"])
        _record(trace, th.QUEUED_PREFILL, terms, terms["queued_prefill_s"])
    _record(trace, th.TIME_TO_FIRST_TOKEN, terms, thr["time_to_first_token_s"])
