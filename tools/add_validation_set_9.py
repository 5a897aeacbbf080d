"""Append the ninth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Gathered on 2026-12-06, after set 8 was measured (19 of 27 inside P10-P90, from 4 publishers, Azure 17 of 27), to be
measured once, by the lead, after it is merged. The selection rule (which sources, which rows, the aim of at least 40
estimated rows from at least 6 publishers, none over a third) was written and committed first, before anything was
gathered: tools/validation_set_9.md. The figures were gathered without comparing them to the estimate (no
``calibrate --holdout`` line of this set read, no estimate/measured ratio computed); only whether the tool takes or
refuses a row was checked. The transcription, one row per published figure with its
URL and its weight, compute and KV-cache formats as published, is tools/validation_set_9.csv (the columns of
tools/validation_set_8.csv plus ``weight_precision``, ``compute_precision``, ``kv_cache_precision``, and
``pipeline_parallel`` and ``nodes`` for Chitu's two-server rows).

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
GPUs", "Gaudi 3 vLLM throughput table Llama-3.1-8B 70B tokens/s input output concurrency HPU README performance",
"SGLang blog table output throughput tokens/s per GPU H200 DeepSeek input 1000 output 1000 concurrency", "AMD
Instinct MI300X MI325X benchmark table Llama 3.1 405B FP8 output throughput tokens per second vLLM SGLang
concurrency", "AMD technical article MI300X Llama 3.1 70B vLLM throughput tokens/s table input length output length
batch size results", "Google Cloud blog TPU v6e Trillium vLLM Llama throughput output tokens per second per chip table
input output", "Gaudi 3 vs H100 H200 Llama 3.1 8B 70B throughput tokens/sec table input 128 output 128 2048 vLLM
Intel blog", "rocm-blogs MI300X table output throughput tok/s concurrency input length output length Llama vLLM
SGLang FP8 results", "djl-serving LMI benchmark results table tokens per second p4d p5 H100 concurrency input output
TensorRT-LLM vLLM Llama", "Trainium2 trn2 benchmark Llama 3.3 70B throughput tokens per second table concurrency input
output optimum-neuron TGI", "Together with SGLang: Best Practices for Serving DeepSeek-R1 on H20-96G throughput per
GPU"; exact strings "2024-04-24 | TPU v5e-8 | bfloat16", "| H200 | Llama-3.1-70B | FP8 |", "| v6e-8 | bfloat16",
"| v6e-8 |", "| Gaudi 3 | Llama", "Speed Benchmark"; and the repositories NVIDIA/TensorRT-Model-Optimizer,
aws-neuron/aws-neuron-sdk, datacrunch-research/h200-benchmarks and datacrunch-research/blogs, pytorch-labs/gpt-fast,
pytorch/ao, thu-pacman/chitu, QwenLM/Qwen2.5 (the Qwen docs), ROCm/rocm-blogs, ROCm/MAD,
vllm-project/vllm-project.github.io (every post's tables grepped for a token-throughput column), vllm-project/recipes,
lm-sys/lm-sys.github.io, sgl-project/sglang (benchmark/blog_v0_2, benchmark/deepseek_v3), NVIDIA/dgxc-benchmarking,
mlcommons/inference, huggingface/blog (llama-sagemaker-benchmark.md), philschmid/text-generation-inference-tests,
huggingface/hf-rocm-benchmark, huggingface/optimum-neuron, LambdaLabsML, MiniMax-AI/MiniMax-M2,
HabanaAI/Gaudi-tutorials, microsoft/DeepSpeed (blogs/deepspeed-fastgen). Taken, every row of each table (publishers
as the rule counts them):

- **NVIDIA**: the TensorRT Model Optimizer Benchmark Reference (NVIDIA/TensorRT-Model-Optimizer, examples/benchmark.md
  at 5a4242fa; the table is unchanged since the first stored commit, 73d6af78, January 2025): '1.1 Performance', H200,
  nvidia-modelopt v0.21.1, TensorRT-LLM v0.15 with trtllm-bench, 2048 in / 128 out, Llama 3.1 8B and 70B at batch
  sizes 1, 8 and 64 in four formats: 24 rows, 12 appended (BF16; FP8 with the FP8 KV cache the example always turns
  on), 12 in split formats (INT4 AWQ weights with BF16 or FP8 activations).
- **AWS**: the Neuron tutorial 'Using Speculative Decoding and Quantization to improve Llama-3.1-405B inference
  performance on Trn2 instances' (aws-neuron/aws-neuron-sdk at 81ce03ae, its Conclusion table
  llama405b_perf_comparison.csv): one trn2.48xlarge (16 Trainium2 chips), 10,000 in / 1,500 out at concurrency 1: 2
  rows, 1 appended (BF16, no speculation), 1 refused (FP8 weights with BF16 compute, and a draft model whose
  acceptance is not stated).
- **DataCrunch** (a cloud): the SGLang offline result file of datacrunch-research/h200-benchmarks at c091ef53
  (sglang/outputs/llama_3_3_70b_offline_output.jsonl: Llama 3.3 70B BF16 on 4 x H200, every request sent at once): 7
  rows, all appended. Its README's offline table (ShareGPT through SGLang's benchmark_vllm_060, lengths not stated),
  its online files (Poisson request rates) and its DeepSeek-V2 file (not in the catalog) are left out.
- **PyTorch** (gpt-fast, the PyTorch team's reference stack): the README's 'Benchmarks', 'Tensor Parallelism' and
  'Tensor Parallelism + Quantization' tables (pytorch-labs/gpt-fast at 32971d31): A100-80GB, batch 1, a 5-token prompt:
  13 distinct figures (104.9 and 62.50 appear in two tables, taken once; 'OOM' cells are not figures), 7 appended
  (BF16, 1 to 8 GPUs), 6 in split formats (int8 or int4 weight-only). Its MI250X table is not in the catalog; its
  speculative-sampling line (48.4 tok/s) is not in a table and runs another prompt.
- **Chitu** (Tsinghua PACMAN / Qingcheng.AI serving stack): docs/en/PERFORMANCE.md (thu-pacman/chitu at 96cd98d2), the
  H20 columns: Qwen3-32B on one H20 (7 rows, appended), DeepSeek-R1 on 16 H20 TP8 x PP2 (8), on 32 H20 with attention
  DP 32 and EP 32 (5) and on one 8-H20 server in FP8, FP4->FP8 and FP4->BF16 (10): 30 rows, 7 appended, 23 in split
  formats (the DeepSeek rows: FP8 weights and activations with a KV cache the page does not state, BF16 by the rule;
  FP4 weights). Its 910B2, DCU and A800 columns, Kimi-K2 and GLM-4.5-Air tables and Xeon + H20 heterogeneous table are
  not in the catalog.
- **Qwen** (the Qwen team's docs): the Qwen3 'Speed Benchmark' page (QwenLM/Qwen2.5, docs/source/getting_started/
  speed_benchmark.md at ac727245, the page qwen.readthedocs.io publishes), NVIDIA H20 96GB, batch 1, 2048 generated
  tokens: the Qwen3-32B, Qwen3-30B-A3B and Qwen3-235B-A22B tables under SGLang 0.4.6.post1 and Transformers 4.51.3: 74
  figures ('-' cells are not figures), 26 appended (BF16), 48 in split formats (FP8 checkpoints with a KV cache the page
  does not state, BF16 by the rule; AWQ or GPTQ 4-bit weights). Its Qwen3-0.6B to 14B tables are not in the catalog.
- Looked at and nothing taken: NVIDIA's developer-blog posts on Llama 3.1 405B with Model Optimizer, on 405B with
  pipeline parallelism and on Mixtral 8x7B (their tables readable only in second-hand copies or not past the pages'
  openings: the rule leaves out a figure quoted second-hand when the original is not readable); Intel's Gaudi 3 model
  performance pages (a release of the page already cited as the first set's gaudi3-1.18; its Gaudi 2 pages are not
  in the catalog); MLPerf Inference v4.0 and earlier (no mean prompt length per run, as tools/refresh_mlperf.py says;
  the llama2-70b reference README states only 'Tokens per sample: 294.45'); the Argonne LLM-Inference-Bench paper,
  Baseten's H100 post, the LMSYS SGLang v0.2 post, AMD's DeepSeek-R1 on MI300X ROCm blog and the vLLM blog's Llama 4
  post (charts); the LMSYS MTP post (per-rank figures of a disaggregated deployment), the LMSYS Ant Group H20 post
  (prefill-decode disaggregation with EP 16) and AMD's Eagle3 ROCm blog (Kimi-K2.5, not in the catalog; MiniMax-M2.5
  with expert parallelism and speculative decoding); the vLLM blog's other posts (no token-throughput table on a
  catalog accelerator and model); vllm-project/recipes (sample outputs with 'xxx' placeholders, or one request on
  hardware not stated); the Neuron vllm-neuron EAGLE3 tutorials ('Numbers are illustrative', and the chips a TP-8 or
  TP-16 group spans are not stated consistently); the Neuron Llama 3.3 70B tutorial (already cited in data/) and the
  Neuron and optimum-neuron benchmark pages (Inf2 and Trn1 only); Hugging Face's SageMaker Llama 2 benchmark (A10G or
  A100 40GB with ShareGPT prompts of unstated length); torchao's quantization README (prompt length not stated);
  NVIDIA's dgxc-benchmarking recipes (configurations, no figures); SGLang's benchmark READMEs, Hugging Face's MI300X
  benchmark repository and ROCm/MAD's SGLang page (commands, no figures); DataCrunch's blog repository (example
  outputs in text, Poisson-rate tables); JetStream's benchmark table (TPU v5e, not in the catalog); saienduri/vllm-docs
  and AMD's performance-results pages (already cited); Habana's Gaudi tutorials (the Gaudi 3 figures are copies of
  Intel's model-performance page, already cited; an example output names no model); DeepSpeed-FastGen's post
  (charts, requests/s).
- **Short of one part of the rule's aim**: 60 rows in one format (150 transcribed) from 6 publishers, as asked, but one
  publisher gives more than a third: Qwen 26 of 60; with the split formats appended (below), 141 rows, Qwen 74 of them.
  No row was dropped for it. Per publisher the rows in one format are
  Qwen 26, NVIDIA 12, Chitu 7, DataCrunch 7, PyTorch 7 and AWS 1, so that coverage is also read with each publisher one
  vote (the mean of each publisher's share inside P10-P90, tools/validation_set_9.md).

Reading rules, fixed before any point was compared with anything:

- Throughput is output tokens per second per accelerator. Model Optimizer's table publishes trtllm-bench's
  'Tokens/sec' of the TP group ('Speedup is normalized to the GPU count': 70B BF16 runs on 2 GPUs, 45.81 / 2 against
  FP8's 43.46 on one gives its 1.90x), read as output tokens (trtllm-bench's token throughput of release 0.15, as
  data/ reads that release's performance overview) and divided by the TP size. The Neuron table publishes LLMPerf's
  'Output token Throughput (per second)' of the instance: divided by its 16 Trainium2 chips (TP degree 64 logical
  NeuronCores at LNC=2, 4 per chip). DataCrunch's file gives sglang.bench_serving's output_throughput (output tokens /
  duration) of the 4-GPU server: divided by 4. gpt-fast's 'Tokens/Second' is generate.py's generated tokens over the
  whole call (prefill included) at batch 1: divided by the GPUs. Chitu's 'Output TPS = output_tokens / (prefill_sec +
  decode_sec)' of the GPUs in the column: divided by them. Qwen's 'Speed = (tokens_prompt + tokens_generation) / time'
  counts prompt and generated tokens: converted to output tokens by its stated lengths, speed x 2048 / (input + 2048),
  and divided by 'GPU Num'.
- Lengths: as stated (2048 / 128; LLMPerf's 10,000 / 1,500 with standard deviation 0; Chitu's 128 / 1,024 and 512 /
  512; Qwen's input lengths with 2,048 generated, its 129042 as the tables print it where its notes say 129024);
  DataCrunch's from the file's own totals (total input and output tokens over completed requests; its random lengths
  are drawn up to the stated ones, random_range_ratio 0.0); gpt-fast's 5-token prompt as stated and 200 output tokens,
  generate.py's --max_new_tokens default (the README's command sets none).
- Load: Model Optimizer's rows at their batch size (trtllm-bench with that batch limit); the Neuron rows at concurrency
  1; DataCrunch's rows offline, every request sent at once, the batch limit not stated; gpt-fast's and Qwen's at batch
  1; Chitu's at their batch size.
- Formats: as published in the three format columns; where the source does not state one, BF16, the rule's reading
  where none is said. Model Optimizer's FP8 and AWQ checkpoints come from examples/llm_ptq/hf_ptq.py, which 'Always
  turn[s] on FP8 kv cache' for every format but int8_sq. The Neuron base row is BF16 throughout; its speculative row
  runs Meta's FP8 checkpoint rescaled for Neuron with BF16 compute. DataCrunch's server is 'Llama 3.3 70B on 4 x H200
  (bf16)'. gpt-fast runs bfloat16 (generate.py), its 8-bit and 4-bit rows weight-only. DeepSeek-R1's and Qwen3's FP8
  are the published block-wise FP8 weights and activations, with a KV cache neither page states (BF16). A row whose
  three formats are equal is appended with ``precision`` alone. As gathered, the 90 others were printed as refused
  until data/throughput_curves.csv held split formats; once it held ``weight_precision``, ``compute_precision`` and
  ``kv_cache_precision`` (merged the same day, before the set was measured) they were appended with ``precision`` the
  compute's format and the weights' and KV cache's where they differ (validation_sets.formats): 81 of them, in the set's
  own sources (141 rows: Qwen 74, NVIDIA 24, Chitu 22, PyTorch 13, DataCrunch 7, AWS 1). The curves' parser refuses 9,
  printed with its reason: Chitu's FP4-weight DeepSeek rows (H20 runs no fp4 weights, data/accelerators.csv's pairs)
  and the Neuron speculative row (FP8 weights with BF16 compute on Trainium2, and no acceptance published).
- Models: Llama3.1-8B / -70B and Llama 3.3 70B as llama-3.1-8b / -70b; Llama-3.1-405B-Instruct as llama-3.1-405b;
  Llama-2-7B / -70B as llama-2-7b / -70b; DeepSeek-R1-671B as deepseek-v3; Qwen3-32B, Qwen3-30B-A3B and Qwen3-235B-A22B
  as themselves. Accelerators: H200 (and 'H200 141GB') as h200-sxm and A100-80GB as a100-sxm (the variants are not
  stated: estimates; gpt-fast's A100s were power-limited to 330 W); Trn2's Trainium2 chip as trainium2; H20 96GB as h20.
- Confidence: ``vendor claim`` for NVIDIA, AWS, PyTorch and Chitu (their own hardware or stack); ``secondary`` for
  DataCrunch (a cloud running SGLang on NVIDIA GPUs) and for the Qwen team's tables (a model vendor measuring
  third-party stacks on NVIDIA GPUs).
"""

from __future__ import annotations

from pathlib import Path

import validation_sets
from validation_sets import format_problems as _format_problems

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
    "datacrunch_h200_sglang": ("datacrunch-h200-sglang-offline", "sglang-2024-12-datacrunch", "secondary",
                               "DataCrunch h200-benchmarks, SGLang offline result file (Llama 3.3 70B on 4 x H200)"),
    "pytorch_gpt_fast_readme": ("pytorch-gpt-fast-readme", "gpt-fast-2023-12", "vendor claim",
                                "PyTorch gpt-fast README 'Benchmarks' tables (A100-80GB, batch 1)"),
    "chitu_performance_doc": ("chitu-performance-h20", "chitu-perf-doc", "vendor claim",
                              "Chitu (thu-pacman/chitu) docs/en/PERFORMANCE.md, H20 tables"),
    "qwen_speed_sglang": ("qwen-speed-benchmark-h20", "sglang-0.4.6.post1-qwen-speed", "secondary",
                          "Qwen3 Speed Benchmark (Qwen team docs), SGLang tables on H20"),
    "qwen_speed_transformers": ("qwen-speed-benchmark-h20", "transformers-4.51.3-qwen-speed", "secondary",
                                "Qwen3 Speed Benchmark (Qwen team docs), Transformers tables on H20"),
}
HOW = {"max_batch": "batch size {c} (trtllm-bench with that batch limit), fixed lengths",
       "closed_loop": "closed loop at concurrency {c}",
       "static": "static batch {c}: fixed lengths, the batch decoded together",
       "max_throughput": "offline (every request sent at once), batch limit not stated"}
DRAFT_REFUSED = ("the catalog estimates a speculative stack only with its acceptance rate; the page states a draft "
                 "model with {n} speculated tokens and no acceptance")
"""Why a speculative row whose acceptance is not published cannot be held as a stack of data/serving_stacks.csv."""


def _why(t: dict[str, str]) -> str:
    """Every reason the row cannot be appended, joined; empty when it can."""
    why = _format_problems(t)
    if t["speculative_decoding"] != "none":
        why.append(DRAFT_REFUSED.format(n=t["draft_tokens"]))
    return "; ".join(why)


def refused() -> list[tuple[dict[str, str], str]]:
    """Transcription rows data/ cannot hold, with the reason: reported by :func:`main`, not appended."""
    return [(t, _why(t)) for t in validation_sets.transcription(NAME) if _why(t)]


def _stack_id(t: dict[str, str]) -> str:
    """The serving stack: the source's stack prefix and the parallel layout it states (tensor, pipeline, expert,
    attention data-parallel)."""
    pp, ep = int(t["pipeline_parallel"]), int(t["expert_parallel"])
    return (f"{GROUPS[t['source_key']][1]}-tp{t['tensor_parallel']}" + (f"-pp{pp}" if pp > 1 else "")
            + (f"-ep{ep}" if ep > 1 else "") + ("-dpattn" if t["data_parallel_attention"] == "yes" else ""))


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv (every row but the :func:`refused` ones)."""
    return [validation_sets.layout_point(t, k, 9, "ninth", GROUPS[t["source_key"]],
                                         HOW[t["batch_kind"]].format(c=t["concurrency_or_batch"]), _stack_id(t), READ)
            for k, t in enumerate(validation_sets.transcription(NAME)) if not _why(t)]


def _stack(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The serving stack row, dated the day the set was read, with the layout its points state (a replica of
    tensor x pipeline accelerators on ``nodes`` nodes, expert parallel, attention data-parallel)."""
    return {**validation_sets.stack_row(sid, r, ordinal), "source_date": READ, "expert_parallel": r["expert_parallel"],
            "data_parallel_attention": "yes" if r["data_parallel_attention"] == "yes" else "no", "nodes": r["nodes"],
            "accelerators": r["accelerator_count"]}


def main(data: Path = validation_sets.DATA) -> None:
    for t, why in refused():
        formats = "/".join(t[k] for k in ("weight_precision", "compute_precision", "kv_cache_precision"))
        print(f"not appended ({t['source_key']}, {t['accelerator']} {t['model']} {formats}): {why}")
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "ninth", data, _stack)


if __name__ == "__main__":
    main()
