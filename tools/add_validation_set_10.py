"""Append the tenth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Gathered on 2026-12-06, after set 9 was measured (67.6 % inside P10-P90) and while the lead changed a rule after
seeing it (rows of a stack that is not a serving engine, such as Hugging Face Transformers' ``generate``, refused
with a reason): the set "added after the change" that tests the rules as they then stand, measured once, by the
lead, after it is merged. The selection rule (which sources, which rows, the aim of at least 30 estimated rows from
at least 5 publishers, none over a third) was written and committed first, before anything was gathered:
tools/validation_set_10.md. The figures were gathered without comparing them to the estimate (no
``calibrate --holdout`` line of this set read, no estimate/measured ratio computed); only whether the tool takes or
refuses a row was checked. The transcription, one row per published figure with its URL and its weight, compute and
KV-cache formats as published, is tools/validation_set_10.csv (the columns of tools/validation_set_9.csv).

Searched (stored-search tool, corpora ``pages``, ``docs`` and ``code``; repositories read at a commit): "NanoFlow
offline throughput tokens/s per GPU LLaMA-2-70B 8 A100 constant input 512 output 512 vLLM TensorRT-LLM", "vAttention
throughput tokens per second A100 Llama-3-8B Yi-6B batch size decode table", "ROCm blog MI300X vLLM throughput table
tokens/s Mixtral Llama input length output length batch size", "Friendli Baseten Fireworks Together benchmark H100
output tokens per second table Llama 3 70B FP8 concurrency input output tokens", "MLC LLM blog multi-GPU Llama2-70B
A100 tokens/sec batch 1 table fp16 tensor parallel", "benchmark results table output throughput tok/s H100
Llama-3.1-8B concurrency 64 input 1024 output 1024 README serving engine", "Databricks blog LLM inference performance
engineering MPT Llama2 70B A100 H100 tokens per second batch size table", "AMD Instinct MI325X vLLM Llama 3.1 405B
throughput tok/s concurrency table technical report input output tokens", "docs.vultr.com inference-cookbook
benchmarks MI325X throughput concurrency table output tokens per second", "NeMo framework inference performance Llama
3 8B 70B A100 H100 batch size input tokens output tokens throughput table TensorRT-LLM", "Vultr inference cookbook
ROCm Llama-3.1-405B FP8 MI325X results concurrency throughput tok/s TTFT table per concurrency level", "Vultr
inference cookbook stress testing test configuration prompt tokens max_tokens scaling test input length output length
vLLM version", "Perplexity Turbocharging Llama 2 70B H100 fp8 TensorRT-LLM throughput per GPU batch size table",
"Llama-2-70B inference A100 80GB SXM4 H100 80GB HBM3 average latency average throughput sentences/s TP PP GPUs input
128 output 20" (pages and code), "developer.nvidia.com blog table output tokens/second H200 Llama 3.1 70B TensorRT-LLM
input sequence length output sequence length batch size throughput table", "vllm-gaudi Gaudi 3 performance table
throughput tokens/s Llama 3.1 8B 70B input output batch size", "NIM for LLMs performance table H100 Llama 3.1 8B
Instruct throughput output tokens/s concurrency ISL OSL TensorRT-LLM profile", "Gaudi 3 Llama 3.1 70B vLLM throughput
tokens/sec table input 2048 output 2048 batch size Intel blog performance", "Vultr inference cookbook CUDA B200
throughput results Output tok/s concurrent gpt-oss-120b Llama 3.3 70B Qwen3 DeepSeek input=2048 output=512",
"docs.vultr.com inference-cookbook rocm benchmark methodology random dataset input tokens output tokens throughput
definition total tokens", "Vultr inference cookbook MiniMax M2.5 B200 throughput Output tok/s concurrent TTFT TPOT
tensor parallel", "docs.sglang.io best practice benchmark results H200 B200 MI300X DeepSeek-R1 Qwen3 output
throughput concurrency table configuration", "sglang docs best_practice NVIDIA GPU H200 high throughput table Model
Hardware Cards Deploy Mode Dataset TPOT throughput", "docs.vultr.com inference-cookbook cuda model-guides MiniMax
M2.5 performance B200 verified concurrency scaling", "docs.vultr.com inference-cookbook rocm model guide gpt-oss Llama
3.3 70B Qwen3 MI325X performance verified concurrency throughput", "lambda.ai inference-models TL;DR token throughput
Hardware configuration Generation throughput Total throughput TTFT ITL Prompts Tokens in Tokens out Parallel
requests", "lambda.ai inference-models openai gpt-oss-120b TL;DR token throughput NVIDIA B200 H100 generation
throughput", "lambda.ai inference-models meta-llama Llama-3.3-70B Qwen3 DeepSeek-R1 TL;DR token throughput hardware
configuration parallel requests" (pages and docs), "digitalocean blog llm-inference-benchmarking results table
throughput tokens per second concurrency H100 H200 MI300X Llama", "lambda.ai minimax-m2.5 Benchmarking MiniMax-M2.5
full command SGLang server launch tensor parallel B200", "MiniMax M2.5 (FP8, TP=4, 4 GPUs) Concurrent Output tok/s
TTFT (ms) TPOT (ms) ITL p99 saturation peak sustained", "Modal LLM Engine Advisor almanac benchmark results vLLM
SGLang TensorRT-LLM H100 throughput tokens per second table", "runinfra vllm vs sglang vs tensorrt-llm benchmark
Llama-3.1-8B H100 L40S throughput output tokens per second concurrency table input length output length", "spheron
vllm vs tensorrt-llm vs sglang benchmarks throughput comparison concurrency 1 10 50 100 req tok/s table Llama 3.3 70B
FP8 H100", "clarifai comparing sglang vllm tensorrt-llm gpt-oss-120b 2x H100 results throughput tokens per second
concurrency table", "rocm.blogs.amd.com table concurrency output throughput tok/s MI355X MI300X vLLM SGLang Llama
gpt-oss Qwen3 input length output length results", "benchmark results table output tokens per second per GPU H200
Llama-3.3-70B FP8 concurrency 1 8 32 128 vLLM 1k input 1k output guide well-lit path", "lambda.ai/inference-models
TL;DR token throughput vLLM Hardware configuration NVIDIA B200 Tensor Core GPU Generation throughput Qwen3 gpt-oss
Llama DeepSeek", "Fireworks FireAttention MI300X H100 throughput table tokens per second Llama 70B Mixtral benchmark
results blog"; exact strings "Average Throughput [sentences/s]", "Chatbot Conversation use case", "| Output
Throughput (tok/s) |", "Output Token Throughput (tok/s) Per Chip", "Tokens/sec | Memory Bandwidth", "Output token
Throughput", "perf_comparison.csv", "### 5.1 Speed Benchmark", "- sglang version: 0.5", "Total Output Throughput
(tokens/sec)"; and the repositories ROCm/rocm-blogs (the stored snapshot stops in October 2024),
mlc-ai/mlc-ai.github.io, ROCm/ATOM (recipes/, .github/benchmark), AI-Hypercomputer/tpu-recipes (inference/),
aws-neuron/aws-neuron-sdk (libraries/nxd-inference/tutorials), InternLM/lmdeploy (docs/en), bentoml/llm-bench,
sgl-project/sglang (docs_new/cookbook), NVIDIA/NeMo (docs/source/performance), NVIDIA/TensorRT-LLM
(docs/source/deployment-guide), vllm-project/recipes, vllm-project/tpu-inference (docs), oracle-quickstart/
oci-ai-blueprints, nebius/serverless-ai-cookbook. Taken, every row of each table (publishers as the rule counts them):

- **AMD** (its ATOM serving engine's recipes, ROCm/ATOM): recipes/DeepSeek-R1.md at 540600a7, 'Performance baseline'
  on 8xMI300X, tables 'FP8 (TP8, FP8 KV Cache)' and 'FP8 + MTP3': 4 rows, 2 appended, 2 refused (MTP with 3
  speculative tokens, no acceptance stated); recipes/Qwen3-235b.md at 465530db, the MI355X table (Qwen3-235B-A22B
  FP8, TP8 + EP8 and TP4 + EP4 at six ISL / OSL / concurrency points): 12 rows, all appended. Its other recipes'
  models are not in the catalog (DeepSeek-V4, GLM, Kimi, MiniMax-M3, Qwen3.5 and later) or have no figures (GPT-OSS,
  the atom_vllm and atom_sglang recipes); a contest team's DeepSeek-R1 MXFP4 README (recipes/DeepSeek-R1-MXFP4-MI355X-
  Jons) is a contestant's entry with MTP, not AMD's table.
- **SGLang** (the serving project's cookbook, sgl-project/sglang docs_new/cookbook, the pages cookbook.sglang.io
  publishes; the LMSYS/SGLang publisher of set 8), section 5 'Speed Benchmark' result blocks of each page read:
  'GPT-OSS' at 2008fa87 (gpt-oss-120b on 8 B200, ShareGPT at concurrency 1 and 100: 2 rows, refused by the curves'
  parser, b200 lists no MXFP4-weights-with-BF16-compute pair), 'Qwen3' at 0278d9cb (Qwen3-235B-A22B-Instruct-2507 on 8
  B200, three scenarios at three concurrencies: 9 rows), 'DeepSeek-R1' at 23b0c3db (DeepSeek-R1-0528 on 8 B200, the
  same nine runs: 9 rows), 'MiniMax-M2.5' at 3824b1c4 (8 B200 with EP 8, two scenarios at three concurrencies, and its
  '5.1.3 H100 Benchmark' on 8 H100 with EP 8: 9 rows), 'MiniMax-M2' at 3df105d8 (4 MI300X, three concurrencies: 3
  rows) and 'Llama4' at 04d96432 (Llama-4-Scout on 8 MI300X, three concurrencies: 3 rows; its Llama-4-Maverick runs
  are not in the catalog): 35 rows, 33 appended. The pages' versions stored at other commits (the same tables: one
  version taken, the one read with its commit), the GSM8K lines (accuracy runs, lengths not stated) and the pages not
  read in the time (DeepSeek-V3, Llama 3.1, MiniMax-M2.7; Llama3.3-70B has no figures) are not taken; the other
  pages' models are not in the catalog.
- **Google** (AI-Hypercomputer/tpu-recipes): 'Serve Qwen3-32B with vLLM on Ironwood TPU' (inference/ironwood/vLLM/
  Qwen3-32B/README.md at 63744192), table 'Output Token Throughput (tok/s) Per Chip': 3 rows, all appended. Two other
  Ironwood tables (Qwen3.5-397B, Qwen3-Coder-480B: not in the catalog); the Trillium, GPT-OSS and SGLang-Jax recipes
  (no figures, or example output with 'xxx').
- **Lambda** (a cloud): the MiniMax-M2.5 inference-model page's 'TL;DR: token throughput (SGLang)' table
  (lambda.ai/inference-models/minimaxai/minimax-m2.5): 2 rows, both appended.
- Looked at and nothing taken: the NeMo Framework's Llama-2 inference table (docs.nvidia.com nemo-framework
  performance/llama.html: 'Average Throughput [sentences/s]' is requests per second, which the rule leaves out, and
  its Llama-2-70B rows are past the stored page's opening); Vultr's inference cookbook (ROCm pages: 'Throughput' not
  said to count output or all tokens, the stress pages' lengths not readable, as set 8 found; CUDA pages: the
  MiniMax M2.5 table past the stored page's opening, the other models not in the catalog); the arXiv report 2603.10031
  (its tables past the stored page's opening); NanoFlow, vAttention, Perplexity's and Databricks' posts, DigitalOcean's
  posts, Clarifai's gpt-oss post, the ROCm MI355X scaling post, Artificial Analysis and Modal's almanac (openings only,
  charts or interactive pages); Spheron's engine comparison (its lengths readable only in a second-hand copy); NVIDIA
  NIM's benchmarking pages and Oracle's MI300X post (already cited); Intel's Gaudi 3 model-performance page (already
  cited) and Intel community posts (Gaudi 2, not in the catalog); LMDeploy's w4a16 table (RTX 4090) and DeepSeek-V3
  page (the GPU is not named); the Neuron Trn2 / Trn3 tutorials (no figures, or the 70B table already cited); the
  TensorRT-LLM deployment guides ('[result]' placeholders); OCI's Generative AI benchmark pages (the unit does not name
  the accelerator); personal and third-party result repositories found by the exact strings (a MiniMax M2.5 BF16 run
  on p5.48xlarge, a Falcon-H1R post, MI300X-vs-H200 reports: not the rule's kinds of publisher, or not in the
  catalog); GPUStack's performance lab (already cited); bentoml/llm-bench (raw runs, hardware not stated); vLLM's
  recipes (one request on hardware not stated, or 'xxx' placeholders, as set 9 found); Fireworks' FireAttention posts
  (requests per second, charts); vllm-project/tpu-inference's deployment guides (links to the TPU recipes); OCI's AI
  blueprints and Nebius' serverless cookbook (no figures).
- **Short of the rule's aim**: 56 rows transcribed, 52 appended (the 2 MTP rows and the 2 gpt-oss rows refused, with
  the reasons the script prints), of which the estimate's validation split refuses 21 (expert parallelism: ATOM's
  Qwen3-235B table and SGLang's MiniMax-M2.5 runs, ``leave_out.validation_refused``), so 31 estimated rows, from 4
  publishers where at least 5 were asked for, and one publisher gives more than a third: SGLang 24 of the 31. No row
  was dropped for it. Per publisher the estimated rows are SGLang 24, Google 3, AMD 2 and Lambda 2, so that coverage
  is also read with each publisher one vote (the mean of each publisher's share inside P10-P90,
  tools/validation_set_10.md).

Reading rules, fixed before any point was compared with anything:

- Throughput is output tokens per second per accelerator. ATOM's DeepSeek-R1 table, SGLang's result blocks
  ('Output token throughput (tok/s)' of sglang.bench_serving) and Lambda's 'Generation throughput' are the server's
  output tokens/s: divided by its GPUs. ATOM's Qwen3-235B table publishes 'Total Throughput' (input and output tokens,
  fixed lengths at --random-range-ratio 1.0): times OSL / (ISL + OSL), then divided by the GPUs. Google's table is per
  chip already.
- Lengths: ATOM's and Google's as the commands state them (nominal: the InferenceX-style clients draw random lengths
  around them at --random-range-ratio 0.8, as data/ reads InferenceX's); SGLang's from each result's own totals
  (total input and generated tokens over the successful requests); Lambda's from its table's totals (4,194,304 in and
  524,288 out over 512 prompts: 8192 and 1024).
- Load: every row a closed loop at the stated concurrency (--max-concurrency, 'Parallel requests'; Google's 320
  prompts at concurrency 320).
- Formats: as published; ATOM's and Google's FP8 weights and activations with the FP8 KV cache their commands set;
  SGLang's and Lambda's pages state no KV-cache format (BF16, the rule's reading), MiniMax-M2.5's and DeepSeek-R1's
  FP8 are the published block-wise FP8 weights and activations, gpt-oss-120b's the published MXFP4 MoE weights with
  BF16 activations. A row whose three formats are equal is appended with ``precision`` alone, the others with
  ``precision`` the compute's format and the weights' and KV cache's where they differ (as set 9:
  :func:`validation_sets.formats`).
- Parallel layout: as the pages state it (TP, EP); Lambda's is not stated (tensor parallel over its GPUs assumed,
  said in the note); Google's one chip runs TP 2 across its two TensorCores, one accelerator of the catalog.
- Models: DeepSeek-R1-0528 as deepseek-v3; Qwen3-235B-A22B(-Instruct-2507)(-FP8) as qwen3-235b-a22b; MiniMax-M2.5 as
  minimax-m2 (data/models.csv covers M2, M2.5 and M2.7); Llama-4-Scout-17B-16E as llama-4-scout; MiniMax-M2,
  gpt-oss-120b and Qwen3-32B as themselves. Accelerators:
  MI300X, MI355X and B200 as themselves, H100 as h100-sxm and Lambda's 'NVIDIA Blackwell GPU' as b200 (the variants
  are not stated: estimates), Ironwood (TPU7x) as tpu7x.
- Confidence: ``vendor claim`` for AMD, SGLang and Google (their own engine, stack or chip); ``secondary`` for
  Lambda (a cloud running SGLang on NVIDIA GPUs).
"""

from __future__ import annotations

from pathlib import Path

import validation_sets
from validation_sets import format_problems

READ = "2026-12-06"
"""The date the tenth set was read."""
NAME = "validation_set_10.csv"
GROUPS = {  # transcription key: (holdout_group, serving stack prefix, confidence, description)
    "amd_atom_dsr1": ("amd-atom-recipes", "atom-main-dsr1-recipe", "vendor claim",
                      "AMD ATOM recipe 'DeepSeek-R1 Usage Guide' (ROCm/ATOM recipes/DeepSeek-R1.md), 'Performance "
                      "baseline' on 8xMI300X"),
    "amd_atom_qwen3": ("amd-atom-recipes", "atom-2f713064-qwen3-recipe", "vendor claim",
                       "AMD ATOM recipe 'Qwen3-235B-A22B Usage Guide' (ROCm/ATOM recipes/Qwen3-235b.md), 'Performance "
                       "baseline' on MI355X"),
    "google_tpu_recipes": ("google-tpu-recipes-ironwood", "vllm-tpu-nightly-20260330", "vendor claim",
                           "Google tpu-recipes 'Serve Qwen3-32B with vLLM on Ironwood TPU', per-chip table"),
    "sglang_cookbook_gpt_oss": ("sglang-cookbook", "sglang-0.5.6-cookbook", "vendor claim",
                                "SGLang cookbook 'GPT-OSS', 5.1 Speed Benchmark (8x B200)"),
    "sglang_cookbook_qwen3": ("sglang-cookbook", "sglang-0.5.6-cookbook", "vendor claim",
                              "SGLang cookbook 'Qwen3', 5.1 Speed Benchmark (8x B200)"),
    "sglang_cookbook_minimax_b200": ("sglang-cookbook", "sglang-0.5.8-cookbook", "vendor claim",
                                     "SGLang cookbook 'MiniMax-M2.5', 5.1 Speed Benchmark (8x B200)"),
    "sglang_cookbook_dsr1": ("sglang-cookbook", "sglang-0.5.6.post1-cookbook", "vendor claim",
                             "SGLang cookbook 'DeepSeek-R1', 5.1 Speed Benchmark (8x B200)"),
    "sglang_cookbook_minimax_m2": ("sglang-cookbook", "sglang-0.5.7-cookbook", "vendor claim",
                                   "SGLang cookbook 'MiniMax-M2', 5.1 Speed Benchmark (4x MI300X)"),
    "sglang_cookbook_llama4": ("sglang-cookbook", "sglang-0.5.9-cookbook", "vendor claim",
                               "SGLang cookbook 'Llama4', 5.1 Speed Benchmark (Llama-4-Scout, 8x MI300X)"),
    "sglang_cookbook_minimax_h100": ("sglang-cookbook", "sglang-0.5.9-cookbook", "vendor claim",
                                     "SGLang cookbook 'MiniMax-M2.5', 5.1.3 H100 Benchmark (8x H100)"),
    "lambda_inference_models": ("lambda-inference-models", "sglang-lambda-minimax-m2.5", "secondary",
                                "Lambda inference-model page 'MiniMax-M2.5', 'TL;DR: token throughput (SGLang)'"),
}
HOW = "closed loop at concurrency {c}"
DRAFT_REFUSED = ("the catalog estimates a speculative stack only with its acceptance rate; the page states "
                 "{method} with {n} speculated tokens and no acceptance")
"""Why a speculative row whose acceptance is not published cannot be held as a stack of data/serving_stacks.csv."""


def _why(t: dict[str, str]) -> str:
    """Every reason the row cannot be appended, joined; empty when it can."""
    why = format_problems(t)
    if t["speculative_decoding"] != "none":
        why.append(DRAFT_REFUSED.format(method=t["speculative_decoding"].upper(), n=t["draft_tokens"]))
    return "; ".join(why)


def refused() -> list[tuple[dict[str, str], str]]:
    """Transcription rows data/ cannot hold, with the reason: reported by :func:`main`, not appended."""
    return [(t, _why(t)) for t in validation_sets.transcription(NAME) if _why(t)]


def _stack_id(t: dict[str, str]) -> str:
    """The serving stack: the source's stack prefix and the parallel layout it states (tensor, expert)."""
    ep = int(t["expert_parallel"])
    return f"{GROUPS[t['source_key']][1]}-tp{t['tensor_parallel']}" + (f"-ep{ep}" if ep > 1 else "")


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv (every row but the :func:`refused` ones)."""
    return [validation_sets.layout_point(t, k, 10, "tenth", GROUPS[t["source_key"]],
                                         HOW.format(c=t["concurrency_or_batch"]), _stack_id(t), READ)
            for k, t in enumerate(validation_sets.transcription(NAME)) if not _why(t)]


def _stack(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The serving stack row, dated the day the set was read, with the layout its points state (tensor x expert
    parallel on one node)."""
    return {**validation_sets.stack_row(sid, r, ordinal), "source_date": READ, "expert_parallel": r["expert_parallel"],
            "accelerators": r["accelerator_count"]}


def main(data: Path = validation_sets.DATA) -> None:
    for t, why in refused():
        fmts = "/".join(t[k] for k in ("weight_precision", "compute_precision", "kv_cache_precision"))
        print(f"not appended ({t['source_key']}, {t['accelerator']} {t['model']} {fmts}): {why}")
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "tenth", data, _stack)


if __name__ == "__main__":
    main()
