"""Append the seventh validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Added on 2026-12-05 after the sixth set, with no rule changed since the range became the spread across sources
(:func:`economics.studies.leave_out.new_source_quantiles`; the ranges' basis is still the first five sets), and before
any estimate of these points was looked at. The selection rule (which sources, which rows) was written and committed
first, before anything was gathered: tools/validation_set_7.md. The transcription, one row per published figure with
its URL, is tools/validation_set_7.csv (the columns of tools/validation_set_6.csv, and the stack's expert-parallel
size, attention data-parallel, speculative decoding and draft length where the source states them).

Searched (stored-search tool, corpora ``pages``, ``docs`` and ``code``; repositories read at a commit): "H200 Llama 3.1
405B throughput tokens/s TensorRT Model Optimizer FP8 table", "MI300X vLLM throughput benchmark Llama 70B tokens per
second table blog", "TPU v6e Trillium Llama inference throughput tokens per second JetStream", "H200 SGLang benchmark
DeepSeek-V3 output throughput tokens/s", "LMDeploy benchmark throughput llama A100 output token throughput table",
"MLPerf Inference v4.0 llama2-70b offline tokens/s H100 H200 results", "v6e-8 Llama 3.1 70B throughput tokens/s vLLM
TPU benchmark table", "vLLM inference on TPU v6e tutorial benchmark", "JetStream MaxText inference on v6e TPU",
"NanoFlow offline throughput LLaMA-2-70B 8 A100", "rocm blog MI300X throughput table tokens/s Llama 3.1 70B FP8 vLLM",
"benchmark results table output token throughput H100 Llama-3.1-8B SGLang vLLM TensorRT-LLM", and the TensorRT-LLM
repository's blog pages. Taken, every row of each table:

- LMDeploy's "TurboMind Benchmark on A100" (docs/en/benchmark/a100_fp16.md at its last version, LMDeploy v0.2.0,
  A100-80G x8, CUDA 11.8): the request-throughput table (4 rows: llama2-7b and llama2-70b taken; llama2-13b and
  internlm-20b not in the catalog) and the static-inference table (20 rows, llama2-7b): 22 rows.
- dstack's DeepSeek-R1 benchmark on 8 H200 and 8 MI300X (the result files of its blog post "DeepSeek R1 inference
  performance: MI300X vs. H200", dstackai/benchmarks branch deepseek-r1-benchmark): offline_results.csv (63 rows:
  SGLang, vLLM and TensorRT-LLM) and online_results.csv (54 rows: the 45 with random prompts taken; the 9 with a
  shared prefix left out, see below): 108 rows.
- NVIDIA's TensorRT-LLM blog pages (the repository's docs/source/blogs; the H200 launch page of that series is in the
  fourth set, these are other pages): "Falcon-180B on a single H200 GPU with INT4 AWQ, and 6.7x faster Llama-70B over
  A100" (Llama-70B table: the three 1-GPU rows taken, the three 8-GPU rows left out: "max TP/PP/DP config", a layout
  not stated; its Falcon-180B figures are a chart), "New XQA-kernel provides 2.4x more Llama-70B throughput" (the
  1-GPU row without XQA taken; the 1-GPU row with XQA, 2,941 at 128/2048, is the Falcon page's row: left out as a
  copy; the 8-GPU rows left out as above) and "How to get best performance on DeepSeek-R1 in TensorRT LLM" (its five
  expected-result blocks: B200 and H200, expert-parallel, MTP or attention data-parallel): 9 rows.
- Looked at and nothing taken: NVIDIA's "H100 has 4.6x A100 Performance in TensorRT-LLM" (GPT-J 6B only, not in the
  catalog); jetstream-pytorch's benchmark summary (TPU v5e only, not in the catalog); the "Boosting Llama 3.1 405B
  Performance up to 1.44x" tables (only re-posted copies were readable, the original was not); the SGLang v0.2 blog
  benchmark README, dstack's Llama 3.1 405B MI300X post and AMD's DeepSeek-R1 MI300X blog (charts, no numbers); MLPerf
  rounds (no input length per run); Oracle's MI300X posts and the sources of data/ (already cited).

Reading rules, fixed before any point was compared with anything:

- Throughput is output tokens per second per accelerator. LMDeploy's tables and NVIDIA's TensorRT-LLM pages publish it
  per GPU or for a TP-1 run (LMDeploy's 70B row: out tok/s of the TP-4 run / 4); dstack's offline rows publish the
  run's totals: total_output_tokens / elapsed_time / 8; its online rows: output_throughput / 8; NVIDIA's DeepSeek-R1
  page: its "Per GPU Output Throughput".
- Lengths: as stated; LMDeploy's request-throughput rows (ShareGPT) from the run's own rates, output = out tok/s /
  RPS, input = (total tok/s - out tok/s) / RPS.
- Load: LMDeploy's static rows and NVIDIA's Llama-70B rows at their batch (fixed lengths, the batch decoded together);
  LMDeploy's request-throughput rows at its max batch (the run's concurrency); dstack's offline rows (every prompt at
  once) at min(prompts, the engine's sequence limit): vLLM's default max_num_seqs 256, SGLang none of its own (the
  prompts), TensorRT-LLM the engine's max_batch_size 2048 (the prompts); dstack's online rows and NVIDIA's DeepSeek-R1
  rows at their stated concurrency (a closed loop); the XQA row with no batch stated (the offline default).
- Precision: LMDeploy's FP16 read as bf16 (two-byte weights; the A100's FP16 and BF16 tensor peaks are the same, and
  the catalog's precisions have no fp16), said in each row's note; dstack's vLLM and SGLang runs the published FP8
  weights; its offline TensorRT-LLM runs BF16 (the README builds the engine with --dtype bfloat16); NVIDIA's pages as
  stated (FP8 Llama-70B, FP4 DeepSeek-R1 on B200, FP8 on H200).
- Models: llama2-7b / -70b and Llama-70B as llama-2-7b / llama-2-70b; DeepSeek-R1 and R1-0528 as deepseek-v3 (the
  same architecture). Accelerators: A100-80G as a100-sxm (the variant is not stated: the 80 GB SXM, an estimate), H200
  as h200-sxm, MI300X as mi300x, B200 as b200.
- Serving stack as published: dstack's online SGLang server on H200 runs --enable-dp-attention, its online TensorRT-LLM
  server --ep_size 4; NVIDIA's DeepSeek-R1 runs their stated expert-parallel size, MTP and attention data-parallel.
  The catalog's validation split does not estimate such stacks with the plain roofline; those rows are kept and
  reported as refused, with the tool's reason, by ``calibrate --holdout``. The two MTP rows (B200 and H200
  min-latency, MTP with 3 draft layers, acceptance not stated) cannot be held in data/ at all: the catalog takes an
  MTP stack only with its acceptance rate and one draft token (tests/test_stacks.py). They stay in the transcription
  and :func:`main` prints them as refused, with that reason, instead of appending them.
- Left out, counted above: rows of models or accelerators not in the catalog, rows whose parallel layout is not stated,
  a second copy of a figure already taken, and dstack's shared-prefix rows (generated-shared-prefix: 2,000 of each
  3,200-token prompt shared by 50 requests, served from the prefix cache, so the stated input is not the input
  computed).
"""

from __future__ import annotations

import re
from pathlib import Path

import validation_sets
from validation_sets import READ

GROUPS = {  # transcription key: (holdout_group, confidence, description)
    "lmdeploy_a100_fp16_v0.2.0": ("lmdeploy-0.2-a100", "vendor claim",
                                  "LMDeploy 'TurboMind Benchmark on A100' (docs/en/benchmark/a100_fp16.md, LMDeploy "
                                  "v0.2.0)"),
    "dstack_deepseek_r1_offline": ("dstack-r1-offline", "secondary",
                                   "dstack 'DeepSeek R1 inference performance: MI300X vs. H200', offline result file"),
    "dstack_deepseek_r1_online": ("dstack-r1-online", "secondary",
                                  "dstack 'DeepSeek R1 inference performance: MI300X vs. H200', online result file"),
    "trtllm_blog_falcon180b_h200": ("trtllm-blog-falcon-h200", "vendor claim",
                                    "NVIDIA TensorRT-LLM blog 'Falcon-180B on a single H200 GPU with INT4 AWQ, and "
                                    "6.7x faster Llama-70B over A100'"),
    "trtllm_blog_xqa_h200": ("trtllm-blog-xqa-h200", "vendor claim",
                             "NVIDIA TensorRT-LLM blog 'New XQA-kernel provides 2.4x more Llama-70B throughput within "
                             "the same latency budget'"),
    "trtllm_blog_dsr1_best_perf": ("trtllm-blog-dsr1-perf", "vendor claim",
                                   "NVIDIA TensorRT-LLM blog 'How to get best performance on DeepSeek-R1 in "
                                   "TensorRT LLM'"),
}
HOW = {"static": "static batch {c}: fixed lengths, the batch decoded together",
       "closed_loop": "closed loop at concurrency {c}",
       "burst": "every prompt sent at once: capacity, read as an offline point with concurrency {c}",
       "max_throughput": "offline (requests at an infinite rate), batch limit not stated"}


def _stack_id(t: dict[str, str]) -> str:
    """The serving stack: the framework as published, slugged, and the parallel layout and speculation it states."""
    ep, spec = int(t["expert_parallel"]), t["speculative_decoding"]
    return (re.sub(r"[^a-z0-9.]+", "-", t["framework_and_version"].lower()).strip("-") + f"-tp{t['tensor_parallel']}"
            + (f"-ep{ep}" if ep > 1 else "") + ("-dpattn" if t["data_parallel_attention"] == "yes" else "")
            + (f"-{spec}" if spec != "none" else ""))


MTP_REFUSED = ("the catalog holds an MTP stack only with its acceptance rate and one draft token, derived "
               "(tests/test_stacks.py); the page states neither the acceptance nor one draft token (MTP 3 layers)")
"""Why an MTP row of the transcription is not appended to data/: the catalog refuses the stack it would need."""


def refused() -> list[tuple[dict[str, str], str]]:
    """Transcription rows data/ cannot hold, with the catalog's reason: reported by :func:`main`, not appended."""
    return [(t, MTP_REFUSED) for t in validation_sets.transcription("validation_set_7.csv")
            if t["speculative_decoding"] == "mtp"]


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv (every row but the :func:`refused` ones)."""
    out: list[dict[str, object]] = []
    for k, t in enumerate(validation_sets.transcription("validation_set_7.csv")):
        if t["speculative_decoding"] == "mtp":
            continue
        group, confidence, what = GROUPS[t["source_key"]]
        tp, conc, i, o = int(t["tensor_parallel"]), t["concurrency_or_batch"], t["input_tokens"], t["output_tokens"]
        out.append(validation_sets.point(
            t, what, curve_id=f"set7-{group}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-"
                              f"{round(float(i))}-{round(float(o))}-r{k + 1}",
            accelerator_count=t["accelerator_count"], input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user="", framework=t["framework_and_version"], serving_stack=_stack_id(t),
            concurrency=conc, tensor_parallel=tp, expert_parallel=t["expert_parallel"],
            data_parallel_attention=t["data_parallel_attention"], speculative_decoding=t["speculative_decoding"],
            holdout_group=group, confidence=confidence,
            note= f"{HOW[t['batch_kind']].format(c=conc)}, TP {tp}, input {i}, output {o}, model as published "
                    f"{t['model_as_published']}: published {t['value_as_published']} ({t['note']}); seventh "
                    f"validation set, selection rule committed before it was gathered (tools/validation_set_7.md), "
                    f"added before any estimate of it was looked at, never fitted; read {READ}"))
    return out


def _stack(sid: str, r: dict[str, object], ordinal: str) -> dict[str, object]:
    """The serving stack row, with the expert-parallel size, attention data-parallel and MTP the source states."""
    drafts = {_stack_id(t): t["draft_tokens"] for t in validation_sets.transcription("validation_set_7.csv")}
    return {**validation_sets.stack_row(sid, r, ordinal), "expert_parallel": r["expert_parallel"],
            "data_parallel_attention": "yes" if r["data_parallel_attention"] == "yes" else "no",
            "speculative_method": r["speculative_decoding"], "draft_tokens": drafts[sid]}


def main(data: Path = validation_sets.DATA) -> None:
    for t, why in refused():
        print(f"not appended ({t['source_key']}, {t['accelerator']} {t['model']} {t['precision']}): {why}")
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "seventh", data, _stack)


if __name__ == "__main__":
    main()
