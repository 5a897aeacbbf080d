"""Append the eighth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Gathered on 2026-12-06 while the range rule was being changed in another branch, to be measured once, by the lead,
after that change is merged: the set "added after the change" of issue #40. The selection rule (which sources, which
rows) was written and committed first, before anything was gathered: tools/validation_set_8.md. The figures were
gathered without comparing them to the estimate (no ``calibrate --holdout`` line of this set read, no
estimate/measured ratio computed); only whether the tool takes or refuses a row was checked. The transcription, one
row per published figure with its URL, is tools/validation_set_8.csv (the columns of tools/validation_set_7.csv).

Searched (stored-search tool, corpora ``pages``, ``docs`` and ``code``; repositories read at a commit): "vLLM v0.6.0
performance update throughput Llama 3 8B H100 tokens/s table", "SGLang blog benchmark Llama 3 70B H100 output
throughput tokens/s offline batch", "Gaudi 3 Llama 3.1 70B throughput tokens/s input output batch size table Intel",
"MI300X Llama 3.1 405B throughput tokens per second vLLM table batch input length output length",
"developer.nvidia.com blog TensorRT-LLM H200 Llama throughput table output tokens/s input length output length", "AWS
Neuron Trainium2 inference performance Llama 3.1 70B throughput tokens/s table", "Vultr inference cookbook benchmark
MI355X Llama 3.1 8B throughput concurrency input tokens output tokens", "Google Cloud TPU v6e Trillium Llama 3.1 70B
vLLM throughput output tokens per second benchmark table", "Performance of Llama 3.1 8B AI Inference using vLLM on
ND-H100-v5 throughput tokens/s table concurrency", "Ori benchmarking Llama 3.1 8B Instruct H100 SXM A100 vLLM",
"rocm-blogs MI300X vLLM benchmark table input length output length batch size throughput tokens/s Llama", "MI325X
SGLang vLLM benchmark results table concurrency input 1024 output 1024 output throughput tok/s", "Lenovo Press LLM
inference performance H100 H200 Llama 3.1 70B throughput", "Dell PowerEdge XE9680 Llama 3 70B inference vLLM
throughput", "Perplexity Turbocharging Llama 2 70B H100 fp8 TensorRT-LLM batch size", "NxD Inference Trn2 Llama 3.1
405B tutorial benchmark results", "docs.vultr.com inference-cookbook rocm benchmarks methodology", "Gaudi 3 vLLM
throughput Llama-3.1-70B input 2048 output 2048 batch size tokens/s table HPU", "tpu-inference vLLM TPU v6e benchmark
results Llama 3.1 8B 70B output throughput", "AMD ROCm blog MI355X MI300X vLLM SGLang Llama 3.1 70B 405B throughput
table", "SGLang for gpt-oss: From Day 0 Support to Enhanced Performance", "AWS machine learning blog Trn2 Llama 3.1
70B 405B inference output tokens per second table", "llm-d benchmark results H100 H200 Llama 3.1 70B output
tokens/s", "v6e-8 Trillium Llama 2 70B Llama 3.1 8B JetStream MaxText throughput tokens/s results table", "Gaudi3
HPU vLLM benchmark results markdown table throughput tokens/s"; and the repositories Azure/AI-benchmarking-
guide, mit-han-lab/qserve, efeslab/Nanoflow, LambdaLabsML/vllm-benchmark, sgl-project/sglang (benchmark/),
vllm-project/vllm-project.github.io (the vLLM blog's posts), lm-sys/lm-sys.github.io (the LMSYS blog's posts),
ROCm/rocm-blogs, AI-Hypercomputer/tpu-recipes, vllm-project/vllm-gaudi, aws-neuron/aws-neuron-sdk, modal-labs/stopwatch
and huggingface/text-generation-inference. Taken, every row of each table:

- Microsoft Azure's AI benchmarking guide (Azure/AI-benchmarking-guide, Azure_Results/ND_A100_v4_results.md,
  ND_H100_v5_results.md and ND_H200_v5_results.md, the repository's last stored snapshot, September 2024): the
  'End-to-End Inference Workloads' tables, TensorRT-LLM's python benchmark at fixed batches, 128 in / 8 out: 5 + 6 + 6
  = 17 rows. Its ND GB200 v6 table (2025) is left out: its 'throughput(tokens/sec)' is the trtllm-bench line the guide's
  script greps for "Token Throughput (tokens/sec):", output tokens in trtllm-bench's earlier report and input plus
  output tokens ("Total Token Throughput") in its later one, and the release used is not pinned: the metric is not
  stated. The H100 page's later version (readable in a fork, samuel-bohman/AI-benchmarking-guide at 26d18e94)
  replaces its table with such a trtllm-bench table: left out for the same reason, so the September 2024 versions,
  cited at their commits, are the last with a stated metric.
- MIT HAN Lab's QServe paper (arXiv 2405.04532) as its repository's README publishes it (mit-han-lab/qserve,
  'Efficiency Benchmarks'): the L40S and A100 tables, 1024 in / 512 out, one GPU; the columns Llama-3-8B, Llama-2-7B,
  Mistral-7B and Llama-2-70B taken (Llama-2-13B, Llama-30B, Yi-34B and Qwen-1.5-72B not in the catalog; 'OOM' and
  '--' cells are not figures): 33 rows, 6 of them TensorRT-LLM FP16 and 27 in a format data/ cannot hold (below).
- The vLLM blog's 'The State of FP8 KV-Cache and Attention Quantization in vLLM' (2026-04-22, AWS and Red Hat AI
  authors): Tables 4 and 5, one H100, 150 requests at concurrency 8, ~20k in / ~2k out: 5 rows, 1 of them holdable.
- The LMSYS blog's 'SGLang for gpt-oss: From Day 0 Support to Enhanced Performance' (2025-08-27, lmsys.org, the page
  as published; the repository's stored drafts carry an MI350 column the page does not): the 'Low-Latency Performance
  (Batch Size = 1)' table, gpt-oss-120b MXFP4 and BF16 on B200 (TP 4) and H100 (TP 8), 1024 in / 512 out from the
  linked reproduction commands: 4 rows, 3 holdable.
- Looked at and nothing taken: Lambda's vLLM benchmark report (LambdaLabsML/vllm-benchmark: ShareGPT, lengths not
  stated; its raw result files exist in several versions per configuration); SGLang's 'benchmark_vllm_060' README
  (ShareGPT, input length not stated) and 'benchmark_v0.4.1.post4' (no figures); NanoFlow's README, the SGLang-Jax and
  AMD 'Scaling AI Inference ... MI355X' posts (charts only); TGI's v3 overview (seconds, not tokens); Vultr's ROCm
  cookbook (its 'Throughput' is not said to count output or all tokens, and two of its pages give different figures
  for one setup); Microsoft's Tech Community posts on Llama 3.1 8B, Ori's, Perplexity's and MAKO's posts and NVIDIA's
  developer-blog posts (their tables are not readable past the pages' openings); Google's TPU recipes (no figures, or
  an example output without the chip count); AWS Neuron's benchmark pages (Inf2 and Trn1 only, not in the catalog);
  vllm-gaudi's Gaudi 3 directory (configurations, no figures); Oracle's posts and OCI's Generative AI benchmark pages
  (Oracle's host path already cited; OCI's units do not name the accelerator); AMD's ROCm performance-results page (a
  later release of a table already in data/, set 4); MLPerf Inference v4.0 (no input length per run).
- Short of the rule's aim: 59 rows from 4 publishers where at least 5 were asked for, and QServe's paper gives 33 of
  them, more than half (27 of them refused): no rows were dropped for it; per publisher the estimated rows are Azure
  17, QServe 6, LMSYS 3 and vLLM 1, so that coverage can also be read with each publisher one vote.

Reading rules, fixed before any point was compared with anything:

- Throughput is output tokens per second per accelerator. Azure's tables publish TensorRT-LLM's ``tokens_per_sec`` (=
  batch x output length / latency, the latency with the context phase, gpt_benchmark.py) for the run: divided by the
  world size (1, or 8 as the page states). QServe's tables publish 'absolute token generation throughputs' on one
  GPU. The vLLM blog publishes 'Output tok/s' of the one-GPU run. The LMSYS table publishes 'single-batch decode
  throughput' (bench_one_batch_server: output tokens / (latency - TTFT), decode only, without the prefill) of the TP
  group: divided by its TP.
- Lengths: as stated; the vLLM blog's '~20k input and ~2k output tokens (+/-15 %)' read at 20,000 / 2,000.
- Load: Azure's rows at their batch (static, the batch decoded together); QServe's rows at the max-throughput batch its
  README gives for QServe, its baselines with no batch stated (offline, the batch limit unknown); the vLLM blog's rows
  at concurrency 8 (closed loop); the LMSYS rows at batch 1.
- Precision: Azure's A100 'datatype float16' read as bf16; its H100 and H200 pages state none, so the models'
  published one: BF16, except Llama 3 405B, whose only model in the same commit's config.json is Meta's FP8 checkpoint
  (fp8). QServe's FP16 read as bf16. gpt-oss MXFP4 on B200 is held as fp4, as the catalog's other gpt-oss B200 rows.
  A row in another format is transcribed with its format as published (QServe's W4A16, W8A8, W4A4 and W4A8KV4; the
  vLLM blog's BF16 weights with an FP8 KV cache and gpt-oss's MXFP4 weights with BF16 compute on H100; the LMSYS MXFP4
  run on H100) and read as the scenario's fields it stands for (:data:`SCENARIO_FORMATS`). When the set was gathered
  a curve held one precision for weights, activations and KV cache, so the 32 such rows were printed as refused.
  Since data/throughput_curves.csv holds ``weight_precision``, ``compute_precision`` and ``kv_cache_precision`` (the
  scenario's fields, the scenario's parser and pairs: ``economics.schema.user_curves.point_problems``), the 13 of
  them the scenario can express (W4A16 as int4 weights with bf16 compute; BF16 weights with an FP8 KV cache; MXFP4
  weights with BF16 compute, with a BF16 or an FP8 KV cache, on H100) are appended by :func:`main` after the 27 as
  sources of their own (:data:`FORMAT_GROUPS`), so that ``calibrate --holdout`` prints them on their own: they were
  never compared with the estimate. The 19 it cannot (W8A8, W4A4, W4A8KV4: integer compute, a 4-bit KV cache) are
  printed as refused with the field and value the scenario's parser refuses. The vLLM blog's FP8 rows quantize the
  attention's math as well; a scenario has no field for it (decode attention reads the KV cache, at its bytes).
- Models: Llama 3 8B / 70B as llama-3.1-8b / -70b; Llama 3.1 405B FP8 as llama-3.1-405b; Mistral 7B (v0.1) as
  mistral-7b; Llama-2-7B / -70B as llama-2-7b / -70b; gpt-oss-20b / -120b as themselves. Accelerators: A100-SXM4-80GB
  as a100-sxm (QServe's 'A100 (80G)' too, the variant not stated: an estimate), H100 80GB HBM3 and the blogs' H100 as
  h100-sxm, H200 141GB as h200-sxm, L40S as l40s, B200 as b200.
- Confidence: ``secondary`` for Azure (a cloud measuring NVIDIA's GPUs and stack) and for QServe's paper;
  ``vendor claim`` for the vLLM and SGLang teams' own stacks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import validation_sets

sys.path.insert(0, str(validation_sets.ROOT))
from economics.schema import user_curves  # noqa: E402

READ = "2026-12-06"
"""The date the eighth set was read."""
ADDED = "2026-12-06"
"""The date data/throughput_curves.csv took the formats apart from ``precision`` and the rows in them were appended
(``python tools/add_validation_set_8.py --formats``)."""
GROUPS = {  # transcription key: (holdout_group, serving stack prefix, confidence, description)
    "azure_nd_a100_v4": ("azure-aibg-a100", "trtllm-azure-aibg-2024-09", "secondary",
                         "Microsoft Azure AI benchmarking guide, ND A100 v4 results"),
    "azure_nd_h100_v5": ("azure-aibg-h100", "trtllm-azure-aibg-2024-09", "secondary",
                         "Microsoft Azure AI benchmarking guide, ND H100 v5 results"),
    "azure_nd_h200_v5": ("azure-aibg-h200", "trtllm-azure-aibg-2024-09", "secondary",
                         "Microsoft Azure AI benchmarking guide, ND H200 v5 results"),
    "qserve_readme_efficiency": ("qserve-paper-efficiency", "trtllm-qserve-baseline", "secondary",
                                 "QServe (MIT HAN Lab, arXiv 2405.04532) README 'Efficiency Benchmarks'"),
    "vllm_blog_fp8_kvcache": ("vllm-blog-fp8-kvcache", "vllm-0.19.1-fa3", "vendor claim",
                              "vLLM blog 'The State of FP8 KV-Cache and Attention Quantization in vLLM'"),
    "lmsys_blog_sglang_gpt_oss": ("lmsys-blog-sglang-gpt-oss", "sglang-0.5.1.post3", "vendor claim",
                                  "LMSYS blog 'SGLang for gpt-oss: From Day 0 Support to Enhanced Performance'"),
}
HOW = {"static": "static batch {c}: fixed lengths, the batch decoded together",
       "closed_loop": "closed loop at concurrency {c}",
       "max_throughput": "offline (maximum achievable throughput), batch limit not stated"}
FORMATS = {"w4a16": "4-bit weights with 16-bit activations (W4A16)",
           "w8a8": "8-bit integer weights and activations (W8A8)",
           "w4a4": "4-bit weights and activations (W4A4)",
           "w4a8kv4": "4-bit weights, 8-bit activations and a 4-bit KV cache (W4A8KV4)",
           "bf16-kv-fp8": "BF16 weights with an FP8 KV cache and attention",
           "mxfp4-kv-bf16": "MXFP4 weights with BF16 compute and KV cache on H100",
           "mxfp4-kv-fp8": "MXFP4 weights with BF16 compute and an FP8 KV cache on H100",
           "mxfp4-bf16": "MXFP4 weights with BF16 compute on H100"}
"""The formats as published of the rows not in one precision, in words (the transcription's ``precision`` cell)."""
SCENARIO_FORMATS = {
    "w4a16": {"precision": "bf16", "weight_precision": "int4"},
    "w8a8": {"precision": "bf16", "weight_precision": "int8", "compute_precision": "int8"},
    "w4a4": {"precision": "bf16", "weight_precision": "int4", "compute_precision": "int4"},
    "w4a8kv4": {"precision": "bf16", "weight_precision": "int4", "compute_precision": "int8",
                "kv_cache_precision": "int4"},
    "bf16-kv-fp8": {"precision": "bf16", "kv_cache_precision": "fp8"},
    "mxfp4-kv-bf16": {"precision": "bf16", "weight_precision": "mxfp4", "kv_cache_precision": "bf16"},
    "mxfp4-kv-fp8": {"precision": "bf16", "weight_precision": "mxfp4", "kv_cache_precision": "fp8"},
    "mxfp4-bf16": {"precision": "bf16", "weight_precision": "mxfp4"}}
"""Each of :data:`FORMATS` as the scenario's fields it stands for (the 16-bit parts, FP16 as published, read as
bf16: ``precision``); a format the scenario's fields cannot hold (integer compute, a 4-bit KV cache) is written as
what it is, and refused by the curves' parser naming the field and value."""
FORMAT_GROUPS = {"qserve_readme_efficiency": "qserve-paper-efficiency-formats",
                 "vllm_blog_fp8_kvcache": "vllm-blog-fp8-kvcache-formats",
                 "lmsys_blog_sglang_gpt_oss": "lmsys-blog-sglang-gpt-oss-formats"}
"""The holdout group of each source's rows in a format apart from one precision: appended after the 27, measured on
their own (``economics.studies.calibration_points.VALIDATION_SETS``)."""


def _formats(t: dict[str, str]) -> dict[str, str]:
    """The scenario's format fields of a transcription row (its ``precision`` cell as published)."""
    return SCENARIO_FORMATS.get(t["precision"], {"precision": t["precision"]})


def _format_problems(t: dict[str, str]) -> list[str]:
    """What the curves' parser (``economics.schema.user_curves.point_problems``, the scenario's fields) refuses in a
    transcription row's formats: [] when data/throughput_curves.csv can hold it.
    """
    cells = {**dict.fromkeys(user_curves.COLUMNS, ""), "accelerator": t["accelerator"], "model": t["model"],
             **_formats(t)}
    columns = ("precision", *user_curves.FORMAT_COLUMNS)
    return [p for p in user_curves.point_problems(cells) if p.split(":")[0] in columns]


def refused() -> list[tuple[dict[str, str], str]]:
    """Transcription rows data/ cannot hold, with the reason: reported by :func:`main`, not appended."""
    out = []
    for t in validation_sets.transcription("validation_set_8.csv"):
        problems = _format_problems(t)
        if problems:
            what = FORMATS[t["precision"]]
            out.append((t, "; ".join(problems) + f" (the scenario's fields and their choices): this row runs {what}"))
    return out


def _stack_id(t: dict[str, str]) -> str:
    """The serving stack: the source's stack prefix and the tensor-parallel size it states."""
    return f"{GROUPS[t['source_key']][1]}-tp{t['tensor_parallel']}"


def rows(formats: bool = False) -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv: the rows in one precision (the 27 appended first), or
    with ``formats`` those in formats apart from it that the curves hold (:data:`FORMAT_GROUPS`); never the
    :func:`refused` ones.
    """
    out: list[dict[str, object]] = []
    for k, t in enumerate(validation_sets.transcription("validation_set_8.csv")):
        if (t["precision"] in FORMATS) != formats or _format_problems(t):
            continue
        group, _, confidence, what = GROUPS[t["source_key"]]
        group = FORMAT_GROUPS[t["source_key"]] if formats else group
        later = (f"; in formats data/ could hold only after weight_precision, compute_precision and kv_cache_precision "
                 f"were added ({ADDED}), appended then, never compared with the estimate" if formats else "")
        tp, conc, i, o = int(t["tensor_parallel"]), t["concurrency_or_batch"], t["input_tokens"], t["output_tokens"]
        out.append(validation_sets.point(
            t, what, curve_id=f"set8-{group}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{i}-{o}-r{k + 1}",
            accelerator_count=t["accelerator_count"], input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user="", framework=t["framework_and_version"], serving_stack=_stack_id(t),
            concurrency=conc, tensor_parallel=tp, holdout_group=group, confidence=confidence, source_date=READ,
            note=f"{HOW[t['batch_kind']].format(c=conc)}, TP {tp}, input {i}, output {o}, model as published "
                 f"{t['model_as_published']}: published {t['value_as_published']} ({t['note']}); eighth validation "
                 f"set, selection rule committed before it was gathered (tools/validation_set_8.md), gathered without "
                 f"comparing it to the estimate, never fitted; read {READ}{later}", **_formats(t)))
    return out


def _stack(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The serving stack row, dated the day the set was read."""
    return {**validation_sets.stack_row(sid, r, ordinal), "source_date": READ}


def main(data: Path = validation_sets.DATA, formats_only: bool = False) -> None:
    """Print the refused rows, then append the 27 rows in one precision (unless ``formats_only``: data/ has them
    already) and the rows in formats apart from it (:data:`FORMAT_GROUPS`), each refused when already in ``data``.
    """
    for t, why in refused():
        print(f"not appended ({t['source_key']}, {t['accelerator']} {t['model']} {t['precision']}): {why}")
    if not formats_only:
        validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "eighth", data, _stack)
    validation_sets.append(rows(formats=True), FORMAT_GROUPS.values(), "eighth (formats)", data, _stack)


if __name__ == "__main__":
    main(formats_only="--formats" in sys.argv[1:])
