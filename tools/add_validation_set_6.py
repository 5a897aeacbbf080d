"""Append the sixth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Added on 2026-12-05 after the range rule became the spread across sources (each source's median error one vote,
the spread within a source added to the spread of the sources' medians,
:func:`economics.studies.leave_out.new_source_quantiles`; the fourth and fifth sets joined the range's basis) and
before any estimate of these points was looked at. The transcription, one row per published figure with its URL, is
tools/validation_set_6.csv; four measuring sources, none cited in data/ before (GitHub issue and pull-request threads
where a user or a maintainer posts a benchmark's output):

- NVIDIA/TensorRT-LLM issue #4043: trtllm-bench (TensorRT-LLM 0.20.0rc0) on eight B200 and eight H200, Llama 3.1
  405B FP8, 3,000 prompts, input 124 (as written) and output 2,048, TP 8;
- vllm-project/vllm issue #12315: benchmark_throughput (vLLM 0.6.6) on four A100, Llama 3.3 70B, 200 ShareGPT
  prompts, TP 4, multi-step scheduling off and at 10 steps;
- vllm-project/vllm pull request #7117: benchmark_throughput on one H100, Llama 3 8B, 256 in / 256 out, before and
  after the change (the mean of the three published trials each);
- vllm-project/vllm pull request #16458: benchmark_serving on one TPU v6e chip, Llama 3.1 8B, random 1,800 in /
  128 out, the run before the change.

Rules fixed before the points were compared with anything (so that none is chosen by its error): every published
throughput figure of such a thread whose accelerator is named (the variant assumed where only the family is: A100 80
GB SXM, H100 SXM, H200 SXM; said in the note), whose lengths are stated or follow from the run's own totals, and whose
model is in the catalog or has a catalog model's architecture (Llama 3 8B as llama-3.1-8b, Llama 3.3 70B as
llama-3.1-70b: same layers, widths, heads and vocabulary) is taken; a figure without the tokens it counts (requests/s
alone), a run whose accelerator is not named, weight-only quantized models (gpt-oss: a pair the validation split does
not take) and arrival-limited runs (Poisson rates below saturation) are left out. Totals counting input and output
(vLLM's benchmark_throughput "tokens/s") are converted to output tokens by the run's own lengths. A burst (every
prompt sent at once) is read as an offline point at concurrency min(prompts, the engine's sequence limit).
"""

from __future__ import annotations

from pathlib import Path

import validation_sets
from validation_sets import READ

GROUPS = {  # transcription key: (holdout_group, serving stack prefix, confidence, description)
    "trtllm_issue_4043": ("trtllm-0.20-issue-4043", "trtllm-0.20.0rc0-issue", "secondary",
                          "NVIDIA/TensorRT-LLM issue #4043 'LLama 3.1 405B FP8 perf low on B200' (a user's "
                          "trtllm-bench runs)"),
    "vllm_issue_12315": ("vllm-0.6.6-issue-12315", "vllm-0.6.6-issue", "secondary",
                         "vllm-project/vllm issue #12315 'Unable to produce the result of throughput & latency "
                         "claimed on vLLM dashboard' (a user's benchmark_throughput runs)"),
    "vllm_pr_7117": ("vllm-pr-7117-h100", "vllm-main-2024-08", "secondary",
                     "vllm-project/vllm pull request #7117 (a maintainer's benchmark_throughput trials)"),
    "vllm_pr_16458": ("vllm-pr-16458-tpu-v6e", "vllm-tpu-2025-04", "secondary",
                      "vllm-project/vllm pull request #16458 '[TPU] Increase block size and reset block shapes' "
                      "(benchmark_serving on one TPU v6e chip)"),
}


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv."""
    out = []
    for k, t in enumerate(validation_sets.transcription("validation_set_6.csv")):
        group, stack, confidence, what = GROUPS[t["source_key"]]
        tp, conc = int(t["tensor_parallel"]), t["concurrency_or_batch"]
        i, o = t["input_tokens"], t["output_tokens"]
        how = {"burst": f"every prompt sent at once: capacity, read as an offline point with concurrency {conc}",
               "max_throughput": "offline (requests at an infinite rate), batch limit not stated"}[t["batch_kind"]]
        out.append(validation_sets.point(
            t, what, curve_id=f"{stack}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{round(float(i))}-"
                              f"{round(float(o))}-r{k + 1}",
            accelerator_count=t["accelerator_count"], input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user="", framework=t["framework_and_version"], serving_stack=f"{stack}-tp{tp}",
            concurrency=conc, tensor_parallel=tp, holdout_group=group, confidence=confidence,
            note= f"{how}, TP {tp}, input {i}, output {o}, model as published {t['model_as_published']}: "
                    f"published {t['value_as_published']} ({t['note']}); sixth validation set, added after the "
                    f"range rule became the spread across sources and before any estimate of it was looked at, "
                    f"never fitted; read {READ}"))
    return out


def main(data: Path = validation_sets.DATA) -> None:
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "sixth", data)


if __name__ == "__main__":
    main()
