"""Append the ninth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Gathered on 2026-12-06, after set 8 was measured (19 of 27 inside P10-P90, from 4 publishers, Azure 17 of 27), to be
measured once, by the lead, after it is merged. The selection rule (which sources, which rows, the aim of at least 40
estimated rows from at least 6 publishers, none over a third) was written and committed first, before anything was
gathered: tools/validation_set_9.md. The figures were gathered without comparing them to the estimate (no
``calibrate --holdout`` line of this set read, no estimate/measured ratio computed); only whether the tool takes or
refuses a row was checked. The transcription, one row per published figure with its URL and its weight, compute and
KV-cache formats as published, is tools/validation_set_9.csv (the columns of tools/validation_set_8.csv plus
``weight_precision``, ``compute_precision`` and ``kv_cache_precision``).

Searched (stored-search tool, corpora ``pages``, ``docs`` and ``code``; repositories read at a commit): "MLPerf
llama2-70b OpenOrca dataset mean input tokens output tokens per sample 24576", "developer.nvidia.com TensorRT-LLM
Llama 3.1 405B H200 maximum throughput output tokens/second table input output sequence lengths", "Intel Gaudi 3
Llama 3.1 70B throughput tokens/s input output batch size table model performance data", "offline throughput
tokens/s per GPU Llama-2-70B 8xA100 vLLM TensorRT-LLM DeepSpeed-FastGen table input 512 output 512", "Boosting Llama
3.1 405B Throughput by Another 1.5x H200 NVLink Switch pipeline parallelism tensor parallelism maximum throughput
output tokens/second table", "Achieving High Mixtral 8x7B Performance with NVIDIA H100 Tensor Core GPUs and
TensorRT-LLM throughput table", "LLM-Inference-Bench throughput tokens/s table A100 H100 MI250 Gaudi2 vLLM
TensorRT-LLM LLaMA-3-8B batch size input output length", "Baseten blog benchmark H100 tokens per second Llama 70B
FP8 TensorRT-LLM batch size table", "README benchmark table H100 output throughput tokens/s batch size input length
output length Llama-3-8B FP16 one GPU", "MI300X throughput tokens/s table Llama 3.1 70B input 2048 output 2048 batch
size vLLM FP8 AMD blog", "TPU v6e throughput tokens per second table Llama 3.1 8B JetStream vLLM input length output
length batch", "Boosting Llama 3.1 405B Performance up to 1.44x with NVIDIA TensorRT Model Optimizer on NVIDIA H200
GPUs", "Gaudi 3 vLLM throughput table Llama-3.1-8B 70B tokens/s input output concurrency HPU README performance"; and
the repositories NVIDIA/TensorRT-Model-Optimizer, aws-neuron/aws-neuron-sdk, ROCm/rocm-blogs,
vllm-project/vllm-project.github.io (every post's tables grepped for a token-throughput column), lm-sys/lm-sys.github.io
(blog/2024-07-25-sglang-llama3.md), huggingface/hf-rocm-benchmark (huggingface/blog is too large to bring here).
Taken, every row of each table:

- NVIDIA's TensorRT Model Optimizer Benchmark Reference (NVIDIA/TensorRT-Model-Optimizer, examples/benchmark.md at the
  repository's last stored snapshot, 5a4242fa; the table is unchanged since the first stored commit, 73d6af78,
  January 2025): '1.1 Performance', H200, nvidia-modelopt v0.21.1, TensorRT-LLM v0.15 with trtllm-bench, 2048 in /
  128 out, Llama 3.1 8B and 70B at batch sizes 1, 8 and 64 in four formats: 24 rows, 12 holdable (BF16 and FP8) and
  12 in split formats (INT4 AWQ weights with BF16 activations; INT4 AWQ weights with FP8 activations; both with the
  FP8 KV cache the example always turns on).
- AWS Neuron's 'Using Speculative Decoding and Quantization to improve Llama-3.1-405B inference performance on Trn2
  instances' tutorial (aws-neuron/aws-neuron-sdk, libraries/nxd-inference/tutorials/, the Conclusion table
  llama405b_perf_comparison.csv, at 81ce03ae): one trn2.48xlarge (16 Trainium2 chips), 10,000 in / 1,500 out at
  concurrency 1: 2 rows, 1 holdable (BF16, no speculation) and 1 refused (FP8 weights with BF16 compute, and a draft
  model whose acceptance is not stated).
- Looked at and nothing taken: NVIDIA's developer-blog posts on Llama 3.1 405B with Model Optimizer, on 405B with
  pipeline parallelism and on Mixtral 8x7B (their tables readable only in second-hand copies or not past the pages'
  openings: the rule leaves out a figure quoted second-hand when the original is not readable); Intel's Gaudi 3 model
  performance pages (a release of the page already cited as the first set's gaudi3-1.18; its Gaudi 2 pages are not
  in the catalog); MLPerf Inference v4.0 and earlier (no mean prompt length is published per run, as
  tools/refresh_mlperf.py says); the Argonne LLM-Inference-Bench paper, Baseten's H100 post, the LMSYS SGLang v0.2
  post and the vLLM blog's posts (charts, ratios or a figure in requests/s, or hardware not in the catalog: Intel Arc
  Pro B60, DGX Spark); the vLLM blog's 'Serving LLMs on AMD MI300X' (charts, Poisson rates); the ROCm blogs of the
  stored snapshot (no token-throughput table); Hugging Face's MI300X benchmark repository (commands, no figures);
  the AWS Neuron Llama 3.3 70B tutorial (already cited in data/) and the Neuron model cards (no figures); JetStream's
  benchmark table (TPU v5e, not in the catalog); the TensorRT-LLM performance overviews and H200 launch blog (already
  cited or set 7's); saienduri/vllm-docs (already cited).
- **Short of the rule's aim**: 26 rows from 2 publishers where at least 40 estimated rows from at least 6 publishers
  were asked for; 13 rows are holdable, 12 of them NVIDIA's (more than a third). No row was dropped for it; per
  publisher the estimated rows are NVIDIA 12 and AWS 1, so that coverage can also be read with each publisher one
  vote (the mean of each publisher's share inside P10-P90, tools/validation_set_9.md).

Reading rules, fixed before any point was compared with anything:

- Throughput is output tokens per second per accelerator. Model Optimizer's table publishes trtllm-bench's
  'Tokens/sec' of the TP group ('Speedup is normalized to the GPU count': 70B BF16 runs on 2 GPUs, 45.81 / 2 against
  FP8's 43.46 on one gives its 1.90x), read as output tokens (trtllm-bench's token throughput of release 0.15, as
  data/ reads that release's performance overview) and divided by the TP size. The Neuron table publishes LLMPerf's
  'Output token Throughput (per second)' of the instance: divided by its 16 Trainium2 chips (TP degree 64 logical
  NeuronCores at LNC=2, 4 per chip).
- Lengths: as stated (2048 / 128; LLMPerf's mean 10,000 / 1,500 with standard deviation 0).
- Load: Model Optimizer's rows at their batch size (trtllm-bench with that batch limit, fixed lengths); the Neuron rows
  at concurrency 1 (one LLMPerf client, --max-num-seqs 1).
- Formats: as published in the three format columns. Model Optimizer's FP8 and INT4/W4A8 AWQ checkpoints come from
  examples/llm_ptq/hf_ptq.py, which 'Always turn[s] on FP8 kv cache' for every format but int8_sq: FP8 rows are FP8
  throughout, AWQ rows have an FP8 KV cache; the BF16 column is unquantized. The Neuron base row is BF16 throughout
  (--torch-dtype bfloat16); its speculative row runs Meta's FP8 checkpoint rescaled for Neuron with BF16 compute
  (the CSV's header 'all using BF16' names the compute dtype). A row whose three formats are equal is appended with
  ``precision`` alone; the others are printed by :func:`main` as refused until the curves hold split formats.
- Models: Llama3.1-8B / -70B as llama-3.1-8b / -70b; Llama-3.1-405B-Instruct as llama-3.1-405b. Accelerators: H200 as
  h200-sxm (the variant is not stated: an estimate); Trn2's Trainium2 chip as trainium2.
- Confidence: ``vendor claim`` for both (NVIDIA measuring its GPUs and stack; AWS its chip and SDK).
"""

from __future__ import annotations

import sys
from pathlib import Path

import validation_sets

sys.path.insert(0, str(validation_sets.ROOT))
from economics.schema.user_curves import PRECISIONS  # noqa: E402

READ = "2026-12-06"
"""The date the ninth set was read."""
NAME = "validation_set_9.csv"
GROUPS = {  # transcription key: (holdout_group, serving stack prefix, confidence, description)
    "nvidia_modelopt_benchmark": ("nvidia-modelopt-benchmark-h200", "trtllm-0.15-modelopt-0.21.1", "vendor claim",
                                  "NVIDIA TensorRT Model Optimizer Benchmark Reference (examples/benchmark.md), "
                                  "'1.1 Performance'"),
    "aws_neuron_405b_tutorial": ("aws-neuron-trn2-405b-tutorial", "vllm-neuron-nxdi-2026-02", "vendor claim",
                                 "AWS Neuron tutorial 'Using Speculative Decoding and Quantization to improve "
                                 "Llama-3.1-405B inference performance on Trn2 instances', Conclusion table"),
}
HOW = {"max_batch": "batch size {c} (trtllm-bench with that batch limit), fixed lengths",
       "closed_loop": "closed loop at concurrency {c}"}
SPLIT_REFUSED = ("refused until the curves hold split formats: data/throughput_curves.csv holds one precision for "
                 "weights, compute and KV cache, one of " + ", ".join(PRECISIONS)
                 + " (economics.schema.user_curves.PRECISIONS); this row runs {w} weights, {c} compute and a {kv} "
                   "KV cache")
"""Why a split-format row of the transcription is not appended to data/ (the lead wires them in later)."""
DRAFT_REFUSED = ("the catalog estimates a speculative stack only with its acceptance rate; the page states a draft "
                 "model with {n} speculated tokens and no acceptance")
"""Why a speculative row whose acceptance is not published cannot be held as a stack of data/serving_stacks.csv."""


def _equal(t: dict[str, str]) -> bool:
    """Whether the row's weight, compute and KV-cache formats are one curve precision (its ``precision``)."""
    return t["weight_precision"] == t["compute_precision"] == t["kv_cache_precision"] == t["precision"] \
        and t["precision"] in PRECISIONS


def _why(t: dict[str, str]) -> str:
    """Every reason the row cannot be appended, joined; empty when it can."""
    why = [] if _equal(t) else [SPLIT_REFUSED.format(w=t["weight_precision"], c=t["compute_precision"],
                                                     kv=t["kv_cache_precision"])]
    if t["speculative_decoding"] != "none":
        why.append(DRAFT_REFUSED.format(n=t["draft_tokens"]))
    return "; ".join(why)


def refused() -> list[tuple[dict[str, str], str]]:
    """Transcription rows data/ cannot hold, with the reason: reported by :func:`main`, not appended."""
    return [(t, _why(t)) for t in validation_sets.transcription(NAME) if _why(t)]


def _stack_id(t: dict[str, str]) -> str:
    """The serving stack: the source's stack prefix and the tensor-parallel size it states."""
    return f"{GROUPS[t['source_key']][1]}-tp{t['tensor_parallel']}"


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv (every row but the :func:`refused` ones)."""
    out: list[dict[str, object]] = []
    for k, t in enumerate(validation_sets.transcription(NAME)):
        if _why(t):
            continue
        group, _, confidence, what = GROUPS[t["source_key"]]
        tp, conc, i, o = int(t["tensor_parallel"]), t["concurrency_or_batch"], t["input_tokens"], t["output_tokens"]
        out.append(validation_sets.point(
            t, what, curve_id=f"set9-{group}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{i}-{o}-r{k + 1}",
            accelerator_count=t["accelerator_count"], input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user="", framework=t["framework_and_version"], serving_stack=_stack_id(t),
            concurrency=conc, tensor_parallel=tp, holdout_group=group, confidence=confidence, source_date=READ,
            note=f"{HOW[t['batch_kind']].format(c=conc)}, TP {tp}, input {i}, output {o}, model as published "
                 f"{t['model_as_published']}: published {t['value_as_published']} ({t['note']}); ninth validation "
                 f"set, selection rule committed before it was gathered (tools/validation_set_9.md), gathered without "
                 f"comparing it to the estimate, never fitted; read {READ}"))
    return out


def _stack(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The serving stack row, dated the day the set was read."""
    return {**validation_sets.stack_row(sid, r, ordinal), "source_date": READ}


def main(data: Path = validation_sets.DATA) -> None:
    for t, why in refused():
        formats = "/".join(t[k] for k in ("weight_precision", "compute_precision", "kv_cache_precision"))
        print(f"not appended ({t['source_key']}, {t['accelerator']} {t['model']} {formats}): {why}")
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "ninth", data, _stack)


if __name__ == "__main__":
    main()
