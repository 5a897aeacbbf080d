"""Append the fifth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Added on 2026-12-05 after every rule change of issue #40 (the ranges on every source the fit never saw, weight and
compute precision apart, speculative decoding, the families' rows, the published fronts between sparse points) and
before any estimate of these points was looked at. The transcription, one row per published figure with its URL, is
tools/validation_set_5.csv; three measuring sources, none cited in data/ before:

- GPUStack's performance lab (third-party benchmark, vLLM 0.11.0, ``vllm bench serve``): the baseline vLLM runs of
  Qwen3-32B (BF16, one H100 and one A100) and Qwen3-235B-A22B (BF16, eight H100, TP 8). Every prompt is sent at once
  (1,000 ShareGPT or 500 random prompts): the engine serves at its capacity, so each run is read as an offline point
  with the prompts sent as its concurrency; lengths are the run's means (total tokens / requests).
- AMD's vLLM FP8 page for MI300X (vLLM 0.6, ROCm 6.2): Llama 3.1 405B FP8 on 8 MI300X, four lengths, at vLLM's
  default limit of 256 sequences.
- NVIDIA's TensorRT-LLM 0.12.0 figures for the same four rows on 8 H100, as AMD's page quotes them (the batch limit
  not stated: the offline default of the other TensorRT-LLM tables).

Rules fixed before the points were compared with anything (so that none is chosen by its error): every baseline run
of a model and accelerator the catalog has, at lengths the page states or records, is taken; runs with 4 output
tokens (too few to measure decode), the 32K-input runs (beyond the models' catalog context of 32,768 with the output)
and runs of other engines or tuned settings are left out; so are GPUStack's gpt-oss pages (weight-only MXFP4 on
Hopper and Ampere, a pair the validation split does not yet take) and its Qwen3-235B ShareGPT run (its concurrency
would be vLLM's default sequence limit, which the page does not state). A row whose figure is already in the file
would be left out as a copy (none is).
"""

from __future__ import annotations

from pathlib import Path

import validation_sets
from validation_sets import READ

GROUPS = {  # transcription key: (holdout_group, serving stack prefix, confidence, description)
    "gpustack_perf_lab_vllm_0.11.0": ("gpustack-lab-vllm-0.11", "vllm-0.11.0", "secondary",
                                      "GPUStack performance lab (vLLM 0.11.0 baseline runs, vllm bench serve)"),
    "amd_vllm_docs_mi300x_vllm_0.6": ("amd-vllm-0.6-mi300x-fp8", "vllm-0.6-rocm6.2", "vendor claim",
                                      "AMD 'vllm FP8 Latency and Throughput benchmarks on AMD MI300x' (vLLM 0.6, "
                                      "ROCm 6.2)"),
    "trtllm_0.12_h100_as_quoted_by_amd": ("trtllm-0.12-quoted", "trtllm-0.12.0", "secondary",
                                          "NVIDIA TensorRT-LLM 0.12.0 H100 figures as quoted on AMD's "
                                          "'vllm FP8 Latency and Throughput benchmarks on AMD MI300x' page"),
}


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv."""
    out = []
    for t in validation_sets.transcription("validation_set_5.csv"):
        group, stack, confidence, what = GROUPS[t["source_key"]]
        tp, conc = int(t["tensor_parallel"]), t["concurrency_or_batch"]
        i, o = t["input_tokens"], t["output_tokens"]
        how = {"burst": f"every prompt sent at once ({conc}): capacity, read as an offline point with concurrency "
                        f"{conc}",
               "max_throughput": "offline (requests at an infinite rate)"
                                 + (f", concurrency = the engine's sequence limit {conc}" if conc else
                                    ", batch limit not stated")}[t["batch_kind"]]
        out.append(validation_sets.point(
            t, what, curve_id=f"{stack}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{round(float(i))}-"
                              f"{round(float(o))}" + (f"-c{conc}" if conc else ""),
            accelerator_count=tp, input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user=t["output_tokens_per_s_per_user"], framework=t["framework_and_version"],
            serving_stack=f"{stack}-tp{tp}", concurrency=conc, tensor_parallel=tp, holdout_group=group,
            confidence=confidence,
            note= f"{how}, TP {tp}, input {i}, output {o}: published {t['value_as_published']} "
                    f"({t['note']}); fifth validation set, added after every rule change of issue #40 and before "
                    f"any estimate of it was looked at, never fitted; read {READ}"))
    return out


def main(data: Path = validation_sets.DATA) -> None:
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "fifth", data)


if __name__ == "__main__":
    main()
