r"""Roofline throughput estimate for LLM serving when nothing is measured.

A decode step of a replica (``n`` accelerators holding one copy of the model, tensor-parallel) at batch ``B`` runs
the weight GEMMs (reading the weights the batch needs, ``2 x active parameters`` FLOPs per token) and then the
attention over every sequence's KV cache; each has its own roofline and their times add, plus the tensor-parallel
all-reduces and a fixed overhead per step:

.. math:: t(B) = t_0 + \max\left(\frac{W(B)}{n\,BW\,\eta_{BW}}, \frac{2 B N_{act}}{n\,F\,\eta_F}\right)
          + \max\left(\frac{B\,KV(c)}{n\,BW\,\eta_{KV}}, \frac{B\,A(c)}{n\,F\,\eta_F}\right) + t_{TP}(B)

with W(B) the weight bytes read (a mixture-of-experts model reads only the experts its B tokens touch,
``E (1 - (1 - k/E)^B)`` of them per layer), KV(c) a sequence's KV cache at its average context c, A(c) the attention
FLOPs per token, BW and F the accelerator's memory bandwidth and peak FLOPS at the precision, t_TP two
all-reduces per layer (:func:`allreduce_s`, 2 log2 n latency rounds each) and eta the efficiency factors
calibrated on measured points (eta_KV: the paged KV cache's reads, which reach their own share of the bandwidth,
unlike the weights' long streams)
(:mod:`economics.studies.calibration`). Prefill is compute-bound (2 N_act I plus the causal attention); in aggregated
serving
it rides in the decode steps as chunked prefill, and the time to first token queues behind it
(:func:`queued_time_to_first_token_s`); the estimator (:mod:`economics.engine.estimate`) assembles these terms.

Every function takes floats or numpy arrays and broadcasts. Bytes in [byte], speeds in [token/s], FLOPS in
[FLOP/s]. References: Williams, Waterman & Patterson, "Roofline", CACM 2009; Pope et al., "Efficiently Scaling
Transformer Inference", MLSys 2023 (memory- vs compute-bound decode); DeepSeek-V2 paper (MLA KV cache);
Kaplan et al. 2020 (2 N FLOPs per token).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from economics.domain.formula import Formula
from economics.schema.outputs import OUTPUTS

F = NDArray[np.float64]

PRECISIONS = ("bf16", "fp8", "fp4")

# --- the roofline's formulas: the functions below and the estimator evaluate these objects, and `explain` renders
# them, so the derivation printed for a row is the arithmetic that produced its throughput ---

WEIGHT_BYTES = Formula(
    "weight_bytes_per_replica", "byte",
    "total_params_b * PARAMS_PER_BILLION * bytes_per_parameter + copied_weight_bytes",
    note="copied_weight_bytes: the non-expert weights each data-parallel attention group holds again (0 without)")
WEIGHTS_GB = Formula("weights_gb_per_replica", "GB", "weight_bytes_per_replica / BYTES_PER_GB")
KV_BYTES_PER_SEQUENCE = Formula(
    "kv_bytes_per_sequence", "byte",
    "kv_bytes_per_token_per_layer * (full_attention_layers * context_tokens + (layers - full_attention_layers)"
    " * min(context_tokens, sliding_window_tokens))",
    note="full-attention layers keep every token, sliding-window layers at most the window (inf: no window)")
KV_GB = Formula("kv_cache_gb_per_sequence", "GB", "kv_bytes_at_full_context / BYTES_PER_GB")
MAX_BATCH_IN_MEMORY = Formula(
    "max_batch_in_memory", "sequence",
    "floor((accelerators_per_replica * accelerator_memory_gb * BYTES_PER_GB * memory_utilization"
    " - weight_bytes_per_replica) / kv_bytes_per_sequence)",
    note="usable memory left after the weights, over one sequence's KV cache at the full context")
DECODE_STEP = Formula(
    "decode_step_s", "s",
    "overhead_s + max(weight_bytes_read / (accelerators_per_replica * bandwidth_tb_per_s * BYTES_PER_TB"
    " * bandwidth_utilization), batch_size * linear_flops_per_token / (accelerators_per_replica * peak_tflops"
    " * FLOPS_PER_TFLOPS * compute_utilization)) + max(batch_size * kv_bytes_per_sequence / (accelerators_per_replica"
    " * bandwidth_tb_per_s * BYTES_PER_TB * kv_bandwidth_utilization), batch_size * attention_flops_per_token"
    " / (accelerators_per_replica * peak_tflops * FLOPS_PER_TFLOPS * compute_utilization)) + tensor_parallel_s"
    " + batch_size * token_overhead_s",
    note="weight GEMMs and attention each on their own roofline, then the tensor-parallel all-reduces and the "
         "per-token work outside GEMMs and attention")
SPECULATIVE_STEP = Formula(
    "decode_step_s", "s",
    "(verify_step_s + draft_tokens * draft_cost_fraction * target_step_s) / max(tokens_per_step, 1)",
    note="speculative decoding: one verification of the k + 1 tokens of every sequence and k draft steps, over the "
         "tokens accepted per step")
TOKENS_PER_STEP = Formula(
    "tokens_per_step", "token", "(1 - acceptance_rate ** (draft_tokens + 1)) / (1 - acceptance_rate)",
    note="expected tokens a sequence emits per verification: the accepted draft tokens until the first rejection, "
         "plus the target model's own (Leviathan et al., ICML 2023, eq. 1; k + 1 at acceptance 1, the limit)")
PREFILL_RATE = Formula(
    "prefill_tokens_per_s_per_replica", "token/s",
    "1 / (prefill_flops_per_token / (accelerators_per_replica * peak_tflops * FLOPS_PER_TFLOPS"
    " * prefill_compute_utilization) + tensor_parallel_s_one_token - tensor_parallel_s_no_token + token_overhead_s)",
    note="chunked prefill in large batches: compute-bound (linear layers and causal attention over the prompt), "
         "plus each token's share of the all-reduces and its per-token work")
INPUT_RATE = Formula("input_tokens_per_s_per_accelerator", "token/s",
                     "prefill_tokens_per_s_per_replica / accelerators_per_replica")
MIXED_STEP = Formula(
    "mixed_step_s", "s",
    "decode_step_s + batch_size * uncached_input_tokens / max(output_tokens_per_request, 1)"
    " / prefill_tokens_per_s_per_replica",
    note="each step also prefills the prompts of the B / O requests that replace the finished ones")
USER_SPEED = Formula("output_tokens_per_s_per_user", "token/s", "1 / mixed_step_s")
OUTPUT_RATE = Formula("output_tokens_per_s_per_accelerator", "token/s",
                      "batch_size / (accelerators_per_replica * decode_step_s)",
                      note="decode only; the capacity step adds the prefill time from the prefill rate")
PROMPT_PREFILL = Formula("prompt_prefill_s", "s", "uncached_input_tokens / prefill_tokens_per_s_per_replica",
                         note="one request's prompt at the replica's prefill rate")
PREFILL_SHARE = Formula("prefill_share", "-", "min(max((mixed_step_s - decode_step_s) / mixed_step_s, 0), 0.95)",
                        note="share of the step spent prefilling, at most 0.95 (a saturated replica waits long, "
                             "not forever)")
QUEUED_PREFILL = Formula("queued_prefill_s", "s", "prompt_prefill_s * (1 + prefill_share / (2 * (1 - prefill_share)))",
                         note="M/D/1: the prompt waits behind the other requests' prefill (Pollaczek-Khinchine)")
TIME_TO_FIRST_TOKEN = Formula(
    "time_to_first_token_s", "s", "request_overhead_s + decode_step_s + kv_transfer_s + queued_prefill_s",
    note="fixed time per request (calibrated), the step that carries the prompt, the prompt's KV cache over the "
         "link to the decode pool (0 when aggregated) and the queued prefill")


def _a(x: ArrayLike) -> F:
    return np.asarray(x, dtype=float)


def expert_params_b(total_params_b: ArrayLike, active_params_b: ArrayLike, experts: ArrayLike,
                    experts_per_token: ArrayLike) -> F:
    """Parameters of one routed expert summed over all layers [billion], from the published totals.

    .. math:: N_e = (N_{tot} - N_{act}) / (E - k)

    since N_tot = N_shared + E N_e and N_act = N_shared + k N_e. Dense models (E = 0) give 0.

    >>> round(float(expert_params_b(671, 37, 256, 8)), 4)   # DeepSeek-V3
    2.5565
    """
    e, k = _a(experts), _a(experts_per_token)
    moe = e > k
    return np.where(moe, (_a(total_params_b) - _a(active_params_b)) / np.where(moe, e - k, 1.0), 0.0)


def touched_expert_fraction(batch: ArrayLike, experts: ArrayLike, experts_per_token: ArrayLike) -> F:
    """Expected share of a layer's routed experts that at least one of B tokens selects (uniform routing).

    .. math:: f(B) = 1 - (1 - k/E)^B

    >>> round(float(touched_expert_fraction(1, 256, 8)), 6), round(float(touched_expert_fraction(64, 256, 8)), 4)
    (0.03125, 0.8689)
    """
    e, k = _a(experts), _a(experts_per_token)
    moe = e > 0
    return np.where(moe, 1.0 - (1.0 - k / np.where(moe, e, 1.0)) ** _a(batch), 0.0)


def weight_bytes_read(batch: ArrayLike, total_params_b: ArrayLike, active_params_b: ArrayLike, experts: ArrayLike,
                      experts_per_token: ArrayLike, bytes_per_param: ArrayLike) -> F:
    r"""Weight bytes one decode step reads at batch B: the always-active part plus the touched experts.

    .. math:: W(B) = (N_{act} - k N_e + E N_e f(B)) \cdot b

    Dense models read all weights every step. [byte]

    >>> float(weight_bytes_read(1, 8.03, 8.03, 0, 0, 2)) / 1e9   # Llama 3.1 8B, BF16
    16.06
    """
    ne = expert_params_b(total_params_b, active_params_b, experts, experts_per_token)
    dense = _a(active_params_b) - _a(experts_per_token) * ne
    touched = _a(experts) * ne * touched_expert_fraction(batch, experts, experts_per_token)
    return (dense + touched) * 1e9 * _a(bytes_per_param)


def kv_bytes_per_sequence(context_tokens: ArrayLike, full_attention_layers: ArrayLike, layers: ArrayLike,
                          sliding_window_tokens: ArrayLike, per_layer_bytes: ArrayLike) -> F:
    r"""KV cache of one sequence at a context length: full layers keep every token, sliding-window layers at most
    the window [byte].

    .. math:: KV(c) = b_{layer} (L_{full} c + (L - L_{full}) \min(c, w))

    >>> float(kv_bytes_per_sequence(1000, 80, 80, float("nan"), 4096)) / 1e6   # Llama 3.1 70B BF16, 1k tokens
    327.68
    """
    return KV_BYTES_PER_SEQUENCE.evaluate(kv_sequence_terms(context_tokens, full_attention_layers, layers,
                                                            sliding_window_tokens, per_layer_bytes))


def kv_sequence_terms(context_tokens: ArrayLike, full_attention_layers: ArrayLike, layers: ArrayLike,
                      sliding_window_tokens: ArrayLike, per_layer_bytes: ArrayLike) -> dict[str, F]:
    """The symbols of :data:`KV_BYTES_PER_SEQUENCE` (no sliding window, NaN, as an infinite one).

    >>> float(kv_sequence_terms(1000, 80, 80, float("nan"), 4096)["sliding_window_tokens"])
    inf
    """
    w = _a(sliding_window_tokens)
    return {"kv_bytes_per_token_per_layer": _a(per_layer_bytes), "full_attention_layers": _a(full_attention_layers),
            "context_tokens": _a(context_tokens), "layers": _a(layers),
            "sliding_window_tokens": np.where(np.isnan(w), np.inf, w)}


def attention_flops_per_token(context_tokens: ArrayLike, full_attention_layers: ArrayLike, layers: ArrayLike,
                              sliding_window_tokens: ArrayLike, q_heads: ArrayLike, qk_dim: ArrayLike,
                              v_dim: ArrayLike) -> F:
    """Attention FLOPs for one new token against c cached tokens: scores (2 H d_qk per key) and the weighted sum
    (2 H d_v per value), over full and sliding-window layers [FLOP].

    >>> float(attention_flops_per_token(1000, 80, 80, float("nan"), 64, 128, 128)) / 1e9
    2.62144
    """
    c = _a(context_tokens)
    w = _a(sliding_window_tokens)
    windowed = np.where(np.isnan(w), c, np.minimum(c, np.where(np.isnan(w), 0.0, w)))
    keys = _a(full_attention_layers) * c + (_a(layers) - _a(full_attention_layers)) * windowed
    return 2.0 * keys * _a(q_heads) * (_a(qk_dim) + _a(v_dim))


def decode_step_s(batch: ArrayLike, replica_accelerators: ArrayLike, bandwidth_tb_per_s: ArrayLike,
                  peak_tflops: ArrayLike, bandwidth_utilization: ArrayLike, compute_utilization: ArrayLike,
                  weight_bytes_read_b: ArrayLike, kv_bytes_per_seq: ArrayLike, flops_per_token: ArrayLike,
                  overhead_s: ArrayLike = 0.0, attention_flops_per_token: ArrayLike = 0.0,
                  kv_bandwidth_utilization: ArrayLike = float("nan")) -> F:
    r"""Time of one decode step of a replica at batch B (one token for each of B sequences) [s].

    The weight GEMMs and the attention over the KV cache are separate kernels that run one after the other, so each
    has its own roofline and their times add:

    .. math:: t(B) = t_0 + \max\left(\frac{W(B)}{n\,BW\,\eta_{BW}}, \frac{B\,f_{lin}}{n\,F\,\eta_F}\right)
                         + \max\left(\frac{B\,KV}{n\,BW\,\eta_{KV}}, \frac{B\,f_{att}}{n\,F\,\eta_F}\right)

    f_lin the linear-layer FLOPs per token (``flops_per_token``), f_att the attention FLOPs per token. t_0 is a fixed
    time per step that no batch amortises (kernel launches, scheduling), calibrated per layer. eta_KV is the share of
    peak bandwidth the attention kernels reach on the paged KV cache (small blocks scattered over memory, one set per
    sequence, where the weight GEMMs stream long contiguous tiles); NaN: eta_BW.

    References: Williams et al., "Roofline", CACM 2009; Yuan et al., "LLM Inference Unveiled: Survey and Roofline
    Model Insights", arXiv:2402.16363 (per-operator rooflines summed over a layer).

    >>> round(float(decode_step_s(1, 1, 3.35, 989, 1.0, 1.0, 16.06e9, 0.0, 16.06e9)) * 1e3, 3)  # 8B on H100
    4.794
    >>> # batch 100, 10 GB of weights at 1 TB/s x 1.0 (10 ms), 100 x 50 MB of KV at 1 TB/s x 0.5 (10 ms)
    >>> round(float(decode_step_s(100, 1, 1.0, 1000, 1.0, 1.0, 10e9, 0.05e9, 1e9, 0.0, 0.0, 0.5)) * 1e3, 6)
    20.0
    """
    return DECODE_STEP.evaluate(decode_step_terms(
        batch, replica_accelerators, bandwidth_tb_per_s, peak_tflops, bandwidth_utilization, compute_utilization,
        weight_bytes_read_b, kv_bytes_per_seq, flops_per_token, overhead_s, attention_flops_per_token,
        kv_bandwidth_utilization))


def decode_step_terms(batch: ArrayLike, replica_accelerators: ArrayLike, bandwidth_tb_per_s: ArrayLike,
                      peak_tflops: ArrayLike, bandwidth_utilization: ArrayLike, compute_utilization: ArrayLike,
                      weight_bytes_read_b: ArrayLike, kv_bytes_per_seq: ArrayLike, flops_per_token: ArrayLike,
                      overhead_s: ArrayLike = 0.0, attention_flops_per_token: ArrayLike = 0.0,
                      kv_bandwidth_utilization: ArrayLike = float("nan"), tensor_parallel_s: ArrayLike = 0.0,
                      token_overhead_s: ArrayLike = 0.0) -> dict[str, F]:
    """The symbols of :data:`DECODE_STEP` from :func:`decode_step_s`'s arguments (eta_KV NaN: eta_BW), plus the
    tensor-parallel time and the per-token overhead the replica adds (0 here).

    >>> float(decode_step_terms(1, 1, 3.35, 989, 0.8, 0.5, 16e9, 0.0, 16e9)["kv_bandwidth_utilization"])
    0.8
    """
    kv_eff = _a(kv_bandwidth_utilization)
    return {"overhead_s": _a(overhead_s), "weight_bytes_read": _a(weight_bytes_read_b),
            "accelerators_per_replica": _a(replica_accelerators), "bandwidth_tb_per_s": _a(bandwidth_tb_per_s),
            "bandwidth_utilization": _a(bandwidth_utilization), "batch_size": _a(batch),
            "linear_flops_per_token": _a(flops_per_token), "peak_tflops": _a(peak_tflops),
            "compute_utilization": _a(compute_utilization), "kv_bytes_per_sequence": _a(kv_bytes_per_seq),
            "kv_bandwidth_utilization": np.where(np.isnan(kv_eff), _a(bandwidth_utilization), kv_eff),
            "attention_flops_per_token": _a(attention_flops_per_token), "tensor_parallel_s": _a(tensor_parallel_s),
            "token_overhead_s": _a(token_overhead_s)}


def prefill_s(input_tokens: ArrayLike, replica_accelerators: ArrayLike, peak_tflops: ArrayLike,
              compute_utilization: ArrayLike, bandwidth_tb_per_s: ArrayLike, bandwidth_utilization: ArrayLike,
              active_params_b: ArrayLike, weight_bytes: ArrayLike, full_attention_layers: ArrayLike,
              q_heads: ArrayLike, qk_dim: ArrayLike, v_dim: ArrayLike) -> F:
    r"""Time to prefill I tokens on one replica: linear 2 N_act I plus causal attention L I^2 H (d_qk + d_v),
    compute-bound, never faster than reading the weights once [s].

    .. math:: t_P = \max(\frac{2 N_{act} I + L I^2 H (d_{qk} + d_v)}{n F \eta_F}, \frac{W}{n BW \eta_{BW}})

    >>> round(float(prefill_s(1000, 1, 989, 1.0, 3.35, 1.0, 8.03, 16.06e9, 32, 32, 128, 128)), 4)
    0.0165
    """
    i, n = _a(input_tokens), _a(replica_accelerators)
    flops = 2.0 * _a(active_params_b) * 1e9 * i + _a(full_attention_layers) * i * i * _a(q_heads) * (
        _a(qk_dim) + _a(v_dim))
    comp = flops / (n * _a(peak_tflops) * 1e12 * _a(compute_utilization))
    mem = _a(weight_bytes) / (n * _a(bandwidth_tb_per_s) * 1e12 * _a(bandwidth_utilization))
    return np.maximum(comp, mem)


def max_batch_in_memory(replica_accelerators: ArrayLike, memory_gb: ArrayLike, memory_utilization: ArrayLike,
                        weight_bytes: ArrayLike, kv_bytes_per_seq_at_max_context: ArrayLike) -> F:
    r"""Sequences a replica can hold: usable memory left after the weights, over one sequence's KV at full context.

    .. math:: B_{mem} = \lfloor (n M u - W) / KV(c_{max}) \rfloor   (<= 0: the model does not fit)

    >>> float(max_batch_in_memory(8, 80, 0.9, 141.2e9, 0.8192e9))   # Llama 3.1 70B BF16 on 8 x H100, 2.5k ctx
    530.0
    """
    return MAX_BATCH_IN_MEMORY.evaluate({
        "accelerators_per_replica": _a(replica_accelerators), "accelerator_memory_gb": _a(memory_gb),
        "memory_utilization": _a(memory_utilization), "weight_bytes_per_replica": _a(weight_bytes),
        "kv_bytes_per_sequence": _a(kv_bytes_per_seq_at_max_context)})


def _link(link_gb_per_s: ArrayLike, latency_us: ArrayLike) -> tuple[F, F]:
    """(bandwidth [GB/s], latency [us]) of a link, an unknown one (NaN) as infinite bandwidth and no latency, so it
    adds no time (np.where rather than np.nan_to_num: this runs on every step of the estimate's search).

    >>> [x.tolist() for x in _link(np.array([450.0, np.nan]), np.array([np.nan, 5.0]))]
    [[450.0, inf], [0.0, 5.0]]
    """
    bw, lat = _a(link_gb_per_s), _a(latency_us)
    return np.where(np.isnan(bw), np.inf, bw), np.where(np.isnan(lat), 0.0, lat)


def allreduce_s(message_bytes: ArrayLike, replica_accelerators: ArrayLike, link_gb_per_s: ArrayLike,
                latency_us: ArrayLike) -> F:
    r"""Time of one all-reduce of a message across the n accelerators of a tensor-parallel group [s].

    .. math:: t_{AR} = [n > 1] \left(2 \lceil \log_2 n \rceil \lambda + \frac{2 (n - 1)}{n}
              \frac{S}{BW_{link}}\right)

    S the message [byte], BW_link the accelerator's interconnect bandwidth per direction [GB/s], lambda the latency
    of one message over it [us]. Rabenseifner's algorithm (a reduce-scatter then an all-gather by recursive halving
    and doubling): 2 log2 n rounds each pay the link's latency, and 2 (n - 1) / n of the message crosses each link, the
    bandwidth-optimal share. A decode step's all-reduces are small (a batch's hidden states, kilobytes to a few
    megabytes), so the rounds' latency is most of their time: 6 rounds at n = 8. One accelerator needs no all-reduce
    (0 s). An unknown link (NaN bandwidth or latency) contributes nothing: its cost then sits in the calibrated
    per-layer step overhead.

    References: Thakur, Rabenseifner & Gropp, "Optimization of collective communication operations in MPICH", IJHPCA
    2005 (the latency and bandwidth terms of each algorithm); Patarasuk & Yuan, "Bandwidth optimal all-reduce
    algorithms", JPDC 2009; Pope et al., MLSys 2023 (two all-reduces per layer under 1-D tensor parallelism).

    >>> round(float(allreduce_s(64 * 8192 * 2, 8, 450, 5)) * 1e6, 3)   # 2 x 3 x 5 us + 7/4 x 1 MiB / 450 GB/s
    34.078
    >>> round(float(allreduce_s(0, 2, 450, 1.5)) * 1e6, 3)   # two accelerators: 2 rounds of 1.5 us
    3.0
    >>> float(allreduce_s(1e6, 1, 450, 5))
    0.0
    """
    n = _a(replica_accelerators)
    bw, lat = _link(link_gb_per_s, latency_us)
    rounds = 2.0 * np.ceil(np.log2(np.maximum(n, 1.0)))
    t = rounds * lat * 1e-6 + 2.0 * (n - 1.0) / np.maximum(n, 1.0) * _a(message_bytes) / (bw * 1e9)
    return np.where(n > 1, t, 0.0)


def static_batch_output_tokens_per_s(batch: ArrayLike, input_tokens: ArrayLike, output_tokens: ArrayLike,
                                     prefill_tokens_per_s: ArrayLike, step_s: ArrayLike) -> F:
    r"""Output tokens per second of one replica running a fixed (static) batch: every prompt of the batch prefilled,
    then O decode steps of the whole batch, as fixed-batch benchmark tables measure it (vLLM's benchmark_latency,
    TensorRT-LLM's emulated static batching, Intel's Gaudi tables) [token/s].

    .. math:: T_{static} = \frac{B \, O}{B I / P + O \, t(B)}

    B the batch, I and O the tokens in and out per request, P the replica's prefill rate [token/s] and t(B) its decode
    step at batch B [s], at the batch's average context I + O / 2. Divided by the replica's n accelerators this is
    O / (I / p + O / d) with p = P / n and d = B / (n t(B)): the requests per second of continuous batching
    (:func:`economics.domain.capacity.requests_per_s_per_accelerator`) times O. A fixed-batch table is therefore
    predicted by
    the same arithmetic as a served one; only its per-user speed differs (each user waits for the whole batch's
    prefill: O / (B I / P + O t(B)) rather than 1 / t(B)).

    >>> round(float(static_batch_output_tokens_per_s(64, 2048, 128, 20_000.0, 0.03)), 1)   # 8192 / (6.5536 + 3.84)
    788.2
    """
    b, o = _a(batch), _a(output_tokens)
    return b * o / (b * _a(input_tokens) / _a(prefill_tokens_per_s) + o * _a(step_s))


def tensor_parallel_s(tokens: ArrayLike, hidden_size: ArrayLike, layers: ArrayLike, replica_accelerators: ArrayLike,
                      link_gb_per_s: ArrayLike, latency_us: ArrayLike, activation_bytes: float = 2.0) -> F:
    r"""Communication time of one forward pass over T tokens under tensor parallelism: two all-reduces per layer
    (after attention and after the MLP) of the tokens' hidden states [s].

    .. math:: t_{TP} = 2 L \, t_{AR}(T \cdot h \cdot b_{act})

    >>> round(float(tensor_parallel_s(64, 8192, 80, 8, 450, 5)) * 1e3, 4)   # Llama 70B, batch 64, TP8: 160 x 34.078 us
    5.4524
    """
    return 2.0 * _a(layers) * allreduce_s(_a(tokens) * _a(hidden_size) * activation_bytes, replica_accelerators,
                                          link_gb_per_s, latency_us)


def queued_time_to_first_token_s(prefill_s_one_request: ArrayLike, prefill_share: ArrayLike) -> F:
    r"""Time to first token with other requests' prefill competing: an M/D/1 queue in front of a deterministic
    prefill (Pollaczek-Khinchine mean wait) [s].

    .. math:: TTFT = t_P \left(1 + \frac{\rho}{2 (1 - \rho)}\right)

    rho is the share of the replica's time spent prefilling (0 <= rho < 1); rho = 0 gives the bare prefill time.
    rho is clipped at 0.95 so a saturated replica reports a long but finite wait.

    References: Kleinrock, Queueing Systems Vol. 1 (1975), M/G/1 mean waiting time with deterministic service.

    >>> float(queued_time_to_first_token_s(0.4, 0.0)), round(float(queued_time_to_first_token_s(0.4, 0.5)), 3)
    (0.4, 0.6)
    """
    rho = np.clip(np.nan_to_num(_a(prefill_share), nan=0.0), 0.0, 0.95)
    return QUEUED_PREFILL.evaluate({"prompt_prefill_s": _a(prefill_s_one_request), "prefill_share": rho})


# --- serving-stack terms: speculative decoding, expert parallelism, disaggregation (data/serving_stacks.csv) ---


def speculative_tokens_per_step(acceptance: ArrayLike, draft_tokens: ArrayLike) -> F:
    r"""Expected tokens a sequence emits per verification step with k draft tokens, each accepted with probability
    alpha until the first rejection, plus the token the target model always adds (:data:`TOKENS_PER_STEP`) [token].

    .. math:: E = \frac{1 - \alpha^{k+1}}{1 - \alpha}   (\alpha = 1: E = k + 1, the limit; k = 0: E = 1)

    Reference: Leviathan, Kalman & Matias, "Fast Inference from Transformers via Speculative Decoding", ICML 2023
    (eq. 1, the i.i.d. acceptance model); DeepSeek-V3 report arXiv:2412.19437 sec. 5.4.3 (MTP, one draft token,
    85-90 % acceptance).

    >>> round(float(speculative_tokens_per_step(0.85, 1)), 6), round(float(speculative_tokens_per_step(0.8, 3)), 4)
    (1.85, 2.952)
    >>> float(speculative_tokens_per_step(1.0, 2)), float(speculative_tokens_per_step(0.7, 0))
    (3.0, 1.0)
    """
    terms = speculative_acceptance_terms(acceptance, draft_tokens)
    a, k = terms["acceptance_rate"], terms["draft_tokens"]
    return np.where(a < 1.0, TOKENS_PER_STEP.evaluate({**terms, "acceptance_rate": np.where(a < 1.0, a, 0.0)}),
                    k + 1.0)


def speculative_acceptance_terms(acceptance: ArrayLike, draft_tokens: ArrayLike) -> dict[str, F]:
    """The symbols of :data:`TOKENS_PER_STEP`: the acceptance within [0, 1] and the draft tokens at least 0 (NaN:
    none).

    >>> {k: float(v) for k, v in speculative_acceptance_terms(float("nan"), 2).items()}
    {'acceptance_rate': 0.0, 'draft_tokens': 2.0}
    """
    return {"acceptance_rate": np.clip(np.nan_to_num(_a(acceptance), nan=0.0), 0.0, 1.0),
            "draft_tokens": np.maximum(np.nan_to_num(_a(draft_tokens)), 0.0)}


def speculative_step_s(verify_step_s: ArrayLike, plain_step_s: ArrayLike, draft_tokens: ArrayLike,
                       draft_cost_fraction: ArrayLike, tokens_per_step: ArrayLike) -> F:
    r"""Time per emitted token of a sequence under speculative decoding [s]: one verification step of the target
    model over the k + 1 tokens of every sequence, plus k draft steps each costing a fraction f_d of a plain
    decode step, shared by the E tokens accepted on average.

    .. math:: t_{tok} = \frac{t_{verify}(B (k+1)) + k f_d t(B)}{E}

    >>> round(float(speculative_step_s(0.012, 0.010, 1, 1 / 61, 1.85)) * 1e3, 4)   # MTP on a 61-layer model
    6.5751
    """
    return SPECULATIVE_STEP.evaluate(speculative_step_terms(verify_step_s, plain_step_s, draft_tokens,
                                                            draft_cost_fraction, tokens_per_step))


def speculative_step_terms(verify_step_s: ArrayLike, plain_step_s: ArrayLike, draft_tokens: ArrayLike,
                           draft_cost_fraction: ArrayLike, tokens_per_step: ArrayLike) -> dict[str, F]:
    """The symbols of :data:`SPECULATIVE_STEP` (no draft tokens or cost given, NaN: none).

    >>> float(speculative_step_terms(0.012, 0.010, float("nan"), 0.02, 1.0)["draft_tokens"])
    0.0
    """
    return {"verify_step_s": _a(verify_step_s), "target_step_s": _a(plain_step_s),
            "draft_tokens": np.maximum(np.nan_to_num(_a(draft_tokens)), 0.0),
            "draft_cost_fraction": np.nan_to_num(_a(draft_cost_fraction)), "tokens_per_step": _a(tokens_per_step)}


def all_to_all_s(tokens: ArrayLike, hidden_size: ArrayLike, experts_per_token: ArrayLike, moe_layers: ArrayLike,
                 expert_parallel: ArrayLike, link_gb_per_s: ArrayLike, latency_us: ArrayLike,
                 bytes_per_value: float = 1.5) -> F:
    r"""Expert-parallel dispatch and combine of one forward pass over T tokens spread over an EP group of e
    accelerators [s]: each token's hidden state goes to its k experts and comes back; the share (e - 1) / e lands on
    another accelerator, and each accelerator sends its T / e tokens' share over its own link.

    .. math:: t_{A2A} = [e > 1] \; L_{moe} \left(2 \lambda + \frac{2 T k h b (e - 1) / e}{e \, BW_{link}}\right)

    b = 1.5 byte per value on average: FP8 dispatch (1 byte) and BF16 combine (2 bytes), as DeepEP does. An unknown
    link (NaN) contributes nothing. Reference: DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.2 and 3.4 (EP all-to-all,
    FP8 dispatch, BF16 combine); Rajbhandari et al., "DeepSpeed-MoE", ICML 2022 (two all-to-alls per MoE layer).

    >>> round(float(all_to_all_s(256, 7168, 8, 58, 8, 450, 5)) * 1e3, 4)   # DeepSeek-V3, 256 tokens, EP8, NVLink 4
    1.2008
    >>> float(all_to_all_s(256, 7168, 8, 58, 1, 450, 5))
    0.0
    """
    e = np.maximum(np.nan_to_num(_a(expert_parallel), nan=1.0), 1.0)
    bw, lat = _link(link_gb_per_s, latency_us)
    sent = 2.0 * _a(tokens) * _a(experts_per_token) * _a(hidden_size) * bytes_per_value * (e - 1.0) / e / e
    return np.where(e > 1.0, _a(moe_layers) * (2.0 * lat * 1e-6 + sent / (bw * 1e9)), 0.0)


def expert_parallel_weight_bytes(total_params_b: ArrayLike, active_params_b: ArrayLike, experts: ArrayLike,
                                 experts_per_token: ArrayLike, bytes_per_param: ArrayLike, accelerators: ArrayLike,
                                 attention_tensor_parallel: ArrayLike) -> F:
    r"""Weight bytes a replica of n accelerators holds when the routed experts are spread over all n (expert
    parallelism) and the rest (attention, shared experts, embeddings) is split only over the attention's
    tensor-parallel group t and copied in each of the n / t data-parallel attention groups [byte].

    .. math:: W_{EP} = b \left(\frac{n}{t} (N_{tot} - E N_e) + E N_e\right)

    t = n is plain tensor parallelism (W = N_tot b). Reference: DeepSeek-V3 report arXiv:2412.19437 sec. 3.4
    (decoding: EP with DP attention).

    >>> round(float(expert_parallel_weight_bytes(671, 37, 256, 8, 1, 8, 1)) / 1e9, 2)   # DeepSeek-V3 FP8, EP8, DP8
    786.84
    >>> round(float(expert_parallel_weight_bytes(671, 37, 256, 8, 1, 8, 8)) / 1e9, 2)
    671.0
    """
    ne = expert_params_b(total_params_b, active_params_b, experts, experts_per_token)
    routed = _a(experts) * ne
    copies = _a(accelerators) / np.maximum(_a(attention_tensor_parallel), 1.0)
    return (copies * (_a(total_params_b) - routed) + routed) * 1e9 * _a(bytes_per_param)


def kv_transfer_s(kv_bytes: ArrayLike, link_gb_per_s: ArrayLike, latency_us: ArrayLike = 0.0) -> F:
    r"""Time to move a prompt's KV cache from the prefill to the decode accelerators in disaggregated serving [s],
    added to the time to first token.

    .. math:: t_{KV} = \lambda + KV(I) / BW_{link}

    An unknown link (NaN) contributes nothing. Reference: Zhong et al., "DistServe", OSDI 2024 (KV transfer between
    prefill and decode instances).

    >>> round(float(kv_transfer_s(61 * 576 * 1024, 50, 10)) * 1e3, 4)   # DeepSeek-V3 FP8 KV of 1,024 tokens, 400 Gb/s
    0.7296
    """
    bw, lat = _link(link_gb_per_s, latency_us)
    return lat * 1e-6 + _a(kv_bytes) / (bw * 1e9)


# --- an estimate's range: each ranged output at both ends of the estimated throughput's P10-P90 ------------------
def _range_end(name: str, end: str) -> Formula:
    """``<name>_<end>``: the smaller (``low``) or larger (``high``) of the output ``name`` computed again with every
    estimated throughput at its P10 and at its P90 (a sized fleet needs fewer accelerators at the higher throughput,
    a fixed one serves more).
    """
    pick = "min" if end == "low" else "max"
    return Formula(f"{name}_{end}", OUTPUTS[name].unit, f"{pick}({name}_at_p10, {name}_at_p90)",
                   note="the stages run again with the estimated throughput at its P10 and at its P90")


COST_PER_M_LOW = _range_end("cost_usd_per_m_tokens", "low")
COST_PER_M_HIGH = _range_end("cost_usd_per_m_tokens", "high")
ACCELERATORS_LOW = _range_end("accelerators", "low")
ACCELERATORS_HIGH = _range_end("accelerators", "high")
FACILITY_POWER_LOW = _range_end("facility_power_kw", "low")
FACILITY_POWER_HIGH = _range_end("facility_power_kw", "high")
RANGE_ENDS: dict[str, tuple[Formula, Formula]] = {
    "cost_usd_per_m_tokens": (COST_PER_M_LOW, COST_PER_M_HIGH), "accelerators": (ACCELERATORS_LOW, ACCELERATORS_HIGH),
    "facility_power_kw": (FACILITY_POWER_LOW, FACILITY_POWER_HIGH)}
"""Each of :data:`economics.schema.outputs.RANGE_OUTPUTS` and its ``_low`` and ``_high`` formulas (module names: the
model's page lists them)."""
