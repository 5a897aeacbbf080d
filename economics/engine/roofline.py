"""The roofline of one replica: its decode step, prefill rate and time to first token from the hardware's peaks,
the model's sizes and the efficiency factors (the scenario's, those passed in, else the stored calibration,
:func:`stored_factors`), and the serving stacks' terms (:func:`stack_columns`). Physics from
:mod:`economics.domain.throughput`; column-wise over scenarios.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.catalog import model_class
from economics.domain import architecture as arch
from economics.domain import capacity as cap
from economics.domain import sessions as ses
from economics.domain import throughput as th
from economics.domain.precision import bytes_per_value, kv_precision, split_precision
from economics.engine.stages import column_or_nans

Array = np.ndarray


FEW_ROWS = 64
"""Up to this many rows only the measured curves of the rows' pairs are tried, and each (accelerator, model) pair's
calibration scope is remembered: the same curves and scopes (catalog ids: :func:`economics.catalog.positions`)."""


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


def model_columns(model_ids: Array) -> dict[str, Array]:
    """The catalog's numeric model columns and MLA flag for each id of ``model_ids`` (NaN and False for an unknown
    id), as arrays aligned with ``model_ids``.
    """
    table = catalog.models()
    codes = catalog.positions(table, "models", model_ids)
    columns = catalog.derived("model columns", (table,), lambda: _model_table(table))
    return {col: values[codes] for col, values in columns.items()}


def _model_table(table: pd.DataFrame) -> dict[str, Array]:
    """The models' numeric columns and MLA flag as arrays, with a last entry (NaN, False) for an unknown id."""
    out: dict[str, Array] = {}
    for col in catalog.MODEL_NUMERIC_COLUMNS:
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
    (NaN: the whole replica), ``disagg`` (bool), ``scale_out`` [GB/s], the replica size ``replica`` (NaN: any).
    """
    table = catalog.serving_stacks()
    # many rows, few stacks: each stack's terms are worked out once per table, each row takes its stack's
    codes = catalog.positions(table, "stacks", stack_ids)
    columns = catalog.derived("stack columns", (table,), lambda: _stack_table(table))
    return {key: values[codes] for key, values in columns.items()}


def _stack_table(table: pd.DataFrame) -> dict[str, Array]:
    """:func:`stack_columns` of every stack in the table, in its order, and last of the plain stack (an unknown,
    empty or ``best`` id: position -1).
    """
    codes = np.append(np.arange(len(table)), -1)

    def col(name: str, missing: float) -> Array:
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan) if (
            name in table.columns) else np.full(len(table), np.nan)
        return np.nan_to_num(np.append(values, missing)[codes], nan=missing)

    k, alpha = col("draft_tokens", 0.0), col("acceptance_rate", 0.0)
    tp, ep = col("tensor_parallel", np.nan), col("expert_parallel", 1.0)
    dp = np.append(table["data_parallel_attention"].to_numpy(dtype=bool), False)[codes]
    return {"k": k, "alpha": alpha, "e": th.speculative_tokens_per_step(alpha, k),
            "draft": col("draft_cost_fraction", 0.0),
            "ep": np.maximum(ep, 1.0), "attn_tp": np.where(dp, 1.0, np.nan),
            "disagg": np.append(table["disaggregated"].to_numpy(dtype=bool), False)[codes],
            "scale_out": col("scale_out_gb_per_s", SCALE_OUT_GB_PER_S),
            "replica": np.where(codes >= 0, np.fmax(tp, np.where(ep > 1, ep, np.nan)), np.nan)}


DRAFT_LAYERS = 1.0
"""Transformer layers of a draft model a scenario's own speculation brings when its stack states no draft cost: one,
as a DeepSeek-V3 MTP module (arXiv:2412.19437 sec. 2.2) and an EAGLE draft head (Li et al., "EAGLE", ICML 2024,
sec. 3) are; each draft step costs DRAFT_LAYERS / layers of the target's step."""


def speculation(c: dict[str, Array], st: dict[str, Array], layers: Array) -> tuple[Array, Array, Array]:
    """Draft tokens k, acceptance rate a and draft cost fraction of each row: the scenario's
    ``speculative_draft_tokens`` and ``speculative_acceptance_rate`` where given, else the serving stack's
    (:func:`stack_columns`); the stack's draft cost fraction, else :data:`DRAFT_LAYERS` over the model's layers.
    """
    n = len(st["k"])
    k_given = np.asarray(column_or_nans(c, "speculative_draft_tokens", n), dtype=float)
    a_given = np.asarray(column_or_nans(c, "speculative_acceptance_rate", n), dtype=float)
    k = np.where(np.isnan(k_given), st["k"], k_given)
    a = np.where(np.isnan(a_given), st["alpha"], a_given)
    draft = np.where(st["draft"] > 0, st["draft"], DRAFT_LAYERS / np.where(layers > 0, layers, np.nan))
    return k, a, np.where(k > 0, np.nan_to_num(draft), 0.0)


def _peak_tflops(c: dict[str, Array], prec: Array) -> Array:
    """Each row's peak at its compute precision ``prec`` [TFLOPS] (NaN where the accelerator has none)."""
    return np.select([prec == "bf16", prec == "fp8", prec == "fp4"],
                     [c["accelerator_bf16_tflops"], c["accelerator_fp8_tflops"], c["accelerator_fp4_tflops"]],
                     np.nan)


class Roofline:
    """The per-row quantities of the roofline for resolved scenario columns ``c`` and their model ``m``: bytes
    per parameter, KV bytes per sequence, FLOPs per token, efficiency factors, the tensor-parallel link;
    ``step(B, n)`` is the decode step time [s], ``mixed_step(B, n)`` the step with its share of chunked prefill,
    ``prefill_rate(n)`` the replica's prefill tokens/s and ``time_to_first_token(B, n)`` the queued TTFT. One place
    for the estimate, its explanation, the calibration and the interactivity curve.

    ``factors`` are the efficiency factors to use where the scenario gives none (from
    :func:`stored_factors` when omitted): the estimator never imports the calibration that fits them.
    """

    def __init__(self, c: dict[str, Array], m: dict[str, Array] | None = None,
                 factors: dict[str, Array] | None = None) -> None:
        m = model_columns(c["model"]) if m is None else m
        self.m = m
        self._init_hardware(c)
        cal = stored_factors(c["accelerator"], c["model"]) if factors is None else factors
        self._init_overheads(c, m, cal)
        self._init_kv_cache(c, m)
        self._init_flops(m)
        self._init_weights_and_stack(c, m)
        # a session's slowest turn, the last, reads its longest context C_T (NaN on request rows): the per-user
        # target holds for it (economics.domain.sessions.SLOWEST_CONTEXT)
        slowest = c.get(ses.SLOWEST_CONTEXT)
        self.slowest_context = None if slowest is None or np.isnan(slowest).all() else np.asarray(slowest, float)

    def _init_hardware(self, c: dict[str, Array]) -> None:
        """The precisions and bytes per value, the peak FLOPS, the attention's cost, memory, bandwidth and link."""
        # the weights' bytes from their format, the FLOPS (and the KV cache's format) from the compute's
        self.weight_precision, self.compute_precision = split_precision(
            c["precision"], c.get("weight_precision"), c.get("compute_precision"))
        self.bpp = bytes_per_value(self.weight_precision)
        self.kv_b = bytes_per_value(kv_precision(self.compute_precision, c["kv_cache_precision"]))
        self.peak = _peak_tflops(c, self.compute_precision)
        # attention (scores and the weighted sum over the KV cache) does not run at FP4: FP8 peak for FP4 compute
        attention_peak = np.where(self.compute_precision == "fp4", c["accelerator_fp8_tflops"], self.peak)
        self.attention_cost = np.where(np.isnan(attention_peak), 1.0, self.peak / attention_peak)
        self.bw = c["accelerator_bandwidth_tb_per_s"]
        self.mem = c["accelerator_memory_gb"]
        self.link_gb_per_s = accelerator_figure(c["accelerator"], "interconnect_gb_per_s")
        self.link_latency_us = accelerator_figure(c["accelerator"], "interconnect_latency_us")

    def _init_overheads(self, c: dict[str, Array], m: dict[str, Array], cal: dict[str, Array]) -> None:
        """The efficiency factors (the scenario's, else ``cal``'s) and the step, token and request overheads [s]."""
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

    def _init_kv_cache(self, c: dict[str, Array], m: dict[str, Array]) -> None:
        """The request's lengths and the KV cache [byte]: per token and layer, per sequence at the average and the
        full context, for the uncached prompt, and per token over the layers that hold it.
        """
        # KV bytes per token and layer: the architecture's formula (one layer), at the KV precision
        self.per_layer = np.where(m["mla"], arch.kv_cache_bytes_per_token_mla(1.0, m["kv_lora_rank"],
                                                                              m["qk_rope_head_dim"], self.kv_b),
                                  arch.kv_cache_bytes_per_token_gqa(1.0, m["kv_heads"], m["head_dim"], self.kv_b))
        i_req, o_req = c["input_tokens_per_request"], c["output_tokens_per_request"]
        self.i_req = i_req
        self.i_miss = cap.uncached_input_tokens(i_req, c["prefix_cache_hit_rate"])
        self.o_req = o_req
        self.c_avg, self.c_max = i_req + o_req / 2.0, i_req + o_req
        args = (m["full_attention_layers"], m["layers"], m["sliding_window_tokens"], self.per_layer)
        self.kv_terms_avg = th.kv_sequence_terms(self.c_avg, *args)
        self.kv_terms_max = th.kv_sequence_terms(self.c_max, *args)
        self.kv_avg = th.KV_BYTES_PER_SEQUENCE.evaluate(self.kv_terms_avg)
        self.kv_max = th.KV_BYTES_PER_SEQUENCE.evaluate(self.kv_terms_max)
        self.kv_prompt = th.kv_bytes_per_sequence(self.i_miss, *args)
        self.kv_bytes_per_token = np.where(m["mla"], self.per_layer * m["layers"],
                                           self.per_layer * m["full_attention_layers"])

    def _init_flops(self, m: dict[str, Array]) -> None:
        """FLOPs per token: a decode step's (linear layers and attention at the average context) and a prompt
        token's in prefill.
        """
        self.qk_dim = np.where(m["mla"], m["kv_lora_rank"] + m["qk_rope_head_dim"], m["head_dim"])
        self.v_dim = np.where(m["mla"], m["kv_lora_rank"], m["head_dim"])
        self.attention_flops = th.attention_flops_per_token(self.c_avg, m["full_attention_layers"], m["layers"],
                                                            m["sliding_window_tokens"], m["q_heads"], self.qk_dim,
                                                            self.v_dim)
        self.linear_flops_tok = 2.0 * m["active_params_b"] * 1e9
        self.flops_tok = self.linear_flops_tok + self.attention_flops * self.attention_cost
        # prefill FLOPs per prompt token: linear layers plus causal attention over the prompt (I / 2 keys on average
        # in a full layer; at most the window w in a sliding-window layer, so min(I / 2, w) keys: min(I, 2 w) below)
        i_p = np.maximum(self.i_miss, 1.0)
        window = m["sliding_window_tokens"]
        keys_x2 = m["full_attention_layers"] * i_p + (m["layers"] - m["full_attention_layers"]) * np.where(
            np.isnan(window), i_p, np.minimum(i_p, 2.0 * np.nan_to_num(window)))
        self.prefill_flops_tok = 2.0 * m["active_params_b"] * 1e9 + keys_x2 * m["q_heads"] * (
            self.qk_dim + self.v_dim) * self.attention_cost

    def _init_weights_and_stack(self, c: dict[str, Array], m: dict[str, Array]) -> None:
        """The serving stack's terms (plain stack for best/empty: speculation, expert parallelism, disaggregation)
        and the weight bytes a replica holds, the non-expert copies under DP attention included.
        """
        self.weight_terms = {"total_params_b": m["total_params_b"], "bytes_per_parameter": self.bpp,
                             "copied_weight_bytes": 0.0}
        self.weights = th.WEIGHT_BYTES.evaluate(self.weight_terms)
        st = stack_columns(c["serving_stack"] if "serving_stack" in c else np.full(len(self.bw), BEST, object))
        self.spec_k, self.spec_a, self.draft_f = speculation(c, st, m["layers"])
        self.spec_e = th.speculative_tokens_per_step(self.spec_a, self.spec_k)
        self.ep, self.attn_tp, self.disagg, self.scale_out = st["ep"], st["attn_tp"], st["disagg"], st["scale_out"]
        dp_attention = ~np.isnan(self.attn_tp)
        ep_weights = th.expert_parallel_weight_bytes(m["total_params_b"], m["active_params_b"], m["experts"],
                                                     m["experts_per_token"], self.bpp, self.ep, self.attn_tp)
        # DP attention copies the non-expert weights in each of the EP group's attention groups: held and read
        self.weights_copied = np.where(dp_attention & (self.ep > 1), ep_weights - self.weights, 0.0)
        self.weight_terms["copied_weight_bytes"] = self.weights_copied
        self.weights = th.WEIGHT_BYTES.evaluate(self.weight_terms)
        self._copies, self._a2a = bool(self.weights_copied.any()), bool((self.ep > 1).any())

    def weights_read(self, batch: Array) -> Array:
        """Weight bytes a decode step at batch ``batch`` reads (:func:`~economics.domain.throughput.weight_bytes_read`),
        plus the copied non-expert weights under DP attention [byte].
        """
        m = self.m
        read = th.weight_bytes_read(batch, m["total_params_b"], m["active_params_b"], m["experts"],
                                    m["experts_per_token"], self.bpp)
        return read + self.weights_copied if self._copies else read

    def memory_s(self, batch: Array, n: Array) -> Array:
        """Memory time of one decode step at batch ``batch`` on ``n`` accelerators: the weights and the sequences'
        average KV cache, each read at its share of the bandwidth [s].
        """
        return (self.weights_read(batch) / self.eff_bw + batch * self.kv_avg / self.eff_kv) / (n * self.bw * 1e12)

    def compute_s(self, batch: Array, n: Array) -> Array:
        """Compute time of one decode step at batch ``batch`` on ``n`` accelerators, at the decode compute
        utilization [s].
        """
        return batch * self.flops_tok / (n * self.peak * 1e12 * self.eff_f)

    def decode_bound(self, batch: Array, n: Array) -> Array:
        """What limits one decode step at batch ``batch`` on ``n`` accelerators (the engine's ``decode_bound``):
        'memory' where its memory time is at least its compute time (each with the step's overhead), else 'compute'.
        """
        return np.where(self.memory_s(batch, n) + self.overhead >= self.compute_s(batch, n) + self.overhead,
                        "memory", "compute")

    def communication_s(self, tokens: Array | float, n: Array) -> Array:
        """Tensor-parallel all-reduces of one forward pass over ``tokens`` tokens (within the attention's TP group:
        the replica, or 1 under DP attention), plus the expert-parallel all-to-all of the stack [s].
        """
        m = self.m
        tp = np.where(np.isnan(self.attn_tp), n, self.attn_tp) if self._a2a else n
        t = th.tensor_parallel_s(tokens, m["hidden_size"], m["layers"], tp, self.link_gb_per_s, self.link_latency_us)
        if not self._a2a:
            return t
        return t + th.all_to_all_s(tokens, m["hidden_size"], m["experts_per_token"], m["layers"],
                                   np.minimum(self.ep, n), self.link_gb_per_s, self.link_latency_us)

    def plain_step_terms(self, batch: Array, n: Array, tokens_per_seq: Array | float = 1.0) -> dict[str, Array]:
        """The symbols of :data:`~economics.domain.throughput.DECODE_STEP` for a forward pass over
        ``tokens_per_seq`` tokens of each of B sequences on ``n`` accelerators.
        """
        one = isinstance(tokens_per_seq, float) and tokens_per_seq == 1.0  # the plain step: no array work
        tokens = batch if one else batch * tokens_per_seq
        return th.decode_step_terms(tokens, n, self.bw, self.peak, self.eff_bw, self.eff_f, self.weights_read(tokens),
                                    self.kv_avg if one else self.kv_avg / tokens_per_seq, self.linear_flops_tok,
                                    self.overhead, self.attention_flops * self.attention_cost, self.eff_kv,
                                    self.communication_s(tokens, n), self.token_overhead_s)

    def plain_step(self, batch: Array, n: Array, tokens_per_seq: Array | float = 1.0) -> Array:
        """One forward pass of the target model over ``tokens_per_seq`` tokens of each of B sequences [s]."""
        return th.DECODE_STEP.evaluate(self.plain_step_terms(batch, n, tokens_per_seq))

    def step(self, batch: Array, n: Array) -> Array:
        """Time per emitted token of each of B sequences [s]: the plain decode step, or under speculative decoding
        the verification of k + 1 tokens per sequence plus k draft steps, over the E tokens accepted
        (:func:`economics.domain.throughput.speculative_step_s`).
        """
        plain = self.plain_step(batch, n)
        if not (self.spec_k > 0).any():
            return plain
        spec = th.SPECULATIVE_STEP.evaluate(self.speculative_terms(batch, n, plain))
        return np.where(self.spec_k > 0, spec, plain)

    def speculative_terms(self, batch: Array, n: Array, plain: Array) -> dict[str, Array]:
        """The symbols of :data:`~economics.domain.throughput.SPECULATIVE_STEP` at batch B, ``plain`` the target
        model's plain step t(B).
        """
        verify = self.plain_step(batch, n, self.spec_k + 1.0)
        return th.speculative_step_terms(verify, plain, self.spec_k, self.draft_f, self.spec_e)

    def user_step(self, batch: Array, n: Array, step: Array | None = None, mixed: Array | None = None) -> Array:
        """Time between a user's tokens [s]: the mixed step with its chunked prefill, or the bare decode step when
        prefill runs on other accelerators (disaggregated stack). ``step``, ``mixed``: t(B) and t_mix(B) when
        already computed.
        """
        t = self.step(batch, n) if step is None else step
        return np.where(self.disagg, t, self.mixed_step(batch, n, t) if mixed is None else mixed)

    def slowest_user_step(self, batch: Array, n: Array, user: Array | None = None,
                          step: Array | None = None) -> Array:
        """Time between a user's tokens in a session's slowest (last) turn [s]: the user step ``user`` (t_mix(B)),
        plus the KV bytes the running batch reads more at the last turn's context than at the mean turn's, by the
        session's formula :data:`economics.domain.sessions.TURN_STEP` at the output rate the engine reports
        (:data:`~economics.domain.throughput.OUTPUT_RATE` over the decode step ``step``, t(B)); the user step itself
        on a request row.
        """
        t = self.user_step(batch, n, step) if user is None else user
        if self.slowest_context is None:
            return t
        rate = th.OUTPUT_RATE.evaluate({"batch_size": batch, "accelerators_per_replica": n,
                                        "decode_step_s": self.step(batch, n) if step is None else step})
        last = ses.TURN_STEP.evaluate({
            "kv_per_user_speed": 1.0 / t, "output_tokens_per_s_per_accelerator": rate,
            "kv_bytes_per_token": self.kv_bytes_per_token, "turn_context_tokens": self.slowest_context,
            "input_tokens_per_request": self.i_req, "accelerator_bandwidth_tb_per_s": self.bw,
            "kv_bandwidth_utilization": self.eff_kv})
        return np.where(np.isnan(self.slowest_context), t, last)

    def prefill_terms(self, n: Array) -> dict[str, Array]:
        """The symbols of :data:`~economics.domain.throughput.PREFILL_RATE` on ``n`` accelerators."""
        return {"prefill_flops_per_token": self.prefill_flops_tok, "accelerators_per_replica": n,
                "peak_tflops": self.peak, "prefill_compute_utilization": self.eff_p,
                "tensor_parallel_s_one_token": self.communication_s(1.0, n),
                "tensor_parallel_s_no_token": self.communication_s(0.0, n), "token_overhead_s": self.token_overhead_s}

    def prefill_rate(self, n: Array) -> Array:
        """Prompt tokens/s of a replica of n accelerators when prefill rides in large batches (weights read once
        per chunk, so compute-bound) plus its all-reduce traffic [token/s].
        """
        return th.PREFILL_RATE.evaluate(self.prefill_terms(n))

    def mixed_step(self, batch: Array, n: Array, step: Array | None = None, rate: Array | None = None) -> Array:
        """Decode step at batch B with the chunked prefill its finishing requests bring (steady state) [s].

        In steady state B / O requests finish per step, so each step also prefills B I_miss / O prompt tokens:
        t_mix(B) = t(B) + (B I_miss / O) / P_rep. The user sees 1 / t_mix; the replica produces B / t_mix output
        tokens/s, the fluid accounting of :func:`economics.domain.capacity.requests_per_s_per_accelerator`. ``step``,
        ``rate``:
        the decode step t(B) and the prefill rate P_rep when already computed.
        Reference: Agrawal et al., "Sarathi-Serve", OSDI 2024 (chunked prefills piggybacked on decode batches).
        """
        return th.MIXED_STEP.evaluate(self.mixed_terms(batch, n, step, rate))

    def mixed_terms(self, batch: Array, n: Array, step: Array | None = None,
                    rate: Array | None = None) -> dict[str, Array]:
        """The symbols of :data:`~economics.domain.throughput.MIXED_STEP` (no prefill rate, NaN: the prompts take
        no time, as :func:`economics.domain.capacity.prefill_seconds` counts them).
        """
        p_rep = self.prefill_rate(n) if rate is None else rate
        return {"decode_step_s": self.step(batch, n) if step is None else step, "batch_size": batch,
                "uncached_input_tokens": self.i_miss, "output_tokens_per_request": self.o_req,
                "prefill_tokens_per_s_per_replica": np.where(np.isnan(p_rep), np.inf, p_rep)}

    def time_to_first_token(self, batch: Array, n: Array, step: Array | None = None,
                            rate: Array | None = None) -> Array:
        r"""The step that carries the request's prefill, t(B), plus its prompt at the replica's prefill rate queued
        behind the other requests' prefill (M/D/1, rho the prefill share of the step time) [s].

        .. math:: TTFT = t_{req} + t(B) + \frac{I_{miss}}{P_{rep}} \left(1 + \frac{\rho}{2 (1 - \rho)}\right)

        t_req the calibrated fixed time per request (server, tokenization, scheduling); ``step``, ``rate``: t(B) and
        P_rep when already computed.
        """
        return th.TIME_TO_FIRST_TOKEN.evaluate(self.first_token_terms(batch, n, step, rate))

    def first_token_terms(self, batch: Array, n: Array, step: Array | None = None,
                          rate: Array | None = None) -> dict[str, Array]:
        """The symbols of :data:`~economics.domain.throughput.PROMPT_PREFILL`, ``PREFILL_SHARE`` (``mixed_step_s``;
        0 under a disaggregated stack, whose decode steps carry no prefill), ``QUEUED_PREFILL`` and
        ``TIME_TO_FIRST_TOKEN``.
        """
        mixed = self.mixed_terms(batch, n, step, rate)
        terms = {**mixed, "mixed_step_s": th.MIXED_STEP.evaluate(mixed), "request_overhead_s": self.request_overhead_s,
                 "kv_transfer_s": np.where(self.disagg, th.kv_transfer_s(self.kv_prompt, self.scale_out), 0.0)}
        terms["prompt_prefill_s"] = th.PROMPT_PREFILL.evaluate(terms)
        terms["prefill_share"] = np.where(self.disagg, 0.0, th.PREFILL_SHARE.evaluate(terms))
        terms["queued_prefill_s"] = th.queued_time_to_first_token_s(terms["prompt_prefill_s"], terms["prefill_share"])
        return terms


def stored_factors(accelerators: Array, models: Array | None = None) -> dict[str, Array]:
    """Calibrated factors from data/calibration.csv for each row: the most specific scope that exists, in the
    order ``<family>:<model class>``, ``<family>``, ``global:<model class>``, ``global`` (model class ``dense`` or
    ``moe``).
    """
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


def calibration_scopes(accelerators: Array, models: Array) -> list[str]:
    """The data/calibration.csv scope whose factors :func:`stored_factors` gives each (accelerator, model) pair
    (the words an estimate's basis names, e.g. ``nvidia-hopper:dense`` or ``global:dense``).
    """
    return _scopes(np.asarray(accelerators, dtype=object), np.asarray(models, dtype=object),
                   _calibration_factors(catalog.calibration())[1])


def _scopes(accelerators: Array, models: Array, factors: dict[str, dict[str, float]]) -> list[str]:
    """The calibration scope of each (accelerator, model) pair: the first of ``<family>:<model class>``,
    ``<family>``, ``global:<model class>`` that ``factors`` holds, else ``global``.
    """
    fam = accelerator_figure(accelerators, "family", "")
    cls = model_class(models)
    return [next((s for s in (f"{f}:{c}", str(f), f"global:{c}") if s in factors), "global")
            for f, c in zip(fam, cls, strict=True)]


_FACTORS_OF: list[tuple[pd.DataFrame, list[str], dict[str, dict[str, float]]]] = []


def _calibration_factors(cal: pd.DataFrame) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The factors data/calibration.csv holds, and the table as scope -> factor -> value (empty = 0); built once
    per catalog table (the table is cached; a re-read, as after ``calibrate --write``, is a new object, read
    again).
    """
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
    empty).
    """
    table = catalog.accelerators()
    return figure_by_position(table, field, missing)[catalog.positions(table, "accelerators", ids)]


def figure_by_position(table: pd.DataFrame, field: str, missing: Any = np.nan) -> Array:
    """The accelerators table's ``field`` by row position, ``missing`` appended for position -1 (no such id) and on
    every row when the table has no such field: what :func:`accelerator_figure` indexes with each id's position,
    built once per table.
    """
    def build() -> Array:
        if field not in table.columns:
            return np.full(len(table) + 1, missing, dtype=float if isinstance(missing, float) else object)
        column = table[field]
        values = (pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                  if isinstance(missing, float) else column.fillna(missing).to_numpy(dtype=object))
        return np.append(values, missing)

    values: Array = catalog.derived(f"accelerator {field} {type(missing).__name__} {missing!r}", (table,), build)
    return values


def _efficiency(c: dict[str, Array], m: dict[str, Array],
                factors: dict[str, Array] | None) -> tuple[Array, Array, Array, Array]:
    """Bandwidth, decode compute and prefill compute utilization and the per-layer step overhead [us]: the
    scenario's own, else the given (calibrated) factors, else the stored ones for its accelerator and model.
    """
    cal = stored_factors(c["accelerator"], c["model"]) if factors is None else factors
    bw, fl, fp, oh = (np.where(np.isnan(c[f]), cal[f], c[f]) for f in FACTORS)
    return bw, fl, fp, oh
