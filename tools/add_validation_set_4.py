"""Append the fourth validation set to data/throughput_curves.csv (split ``validation``: never fitted, not in a range).

Added after the ranges' basis became every source the fit never saw (the leave-one-table-out errors of the fitted
tables, the blind split and the first three validation sets, :data:`economics.studies.calibration.RANGE_BASIS_SOURCES`),
and before any estimate of these points was looked at. The transcription, one row per published figure with its URL,
is tools/validation_set_4.csv:

- NVIDIA's TensorRT-LLM blog "H200 achieves nearly 12,000 tokens/sec on Llama2-13B with TensorRT-LLM" (release
  0.5.0, TensorRT 9.1.0.4): the "H200 FP8 Max throughput" table, Llama 2 70B on one H200 in FP8, static batches of
  the largest power of two that fits.

Rules fixed before the points were compared with anything (so that none is chosen by its error):

- Only the rows at tensor-parallel size 1 are taken: the table does not say whether "Throughput (out tok/s)" is per GPU
  or summed over the GPUs of a TP 2 or TP 4 row, and at TP 1 both read the same. Its Llama 2 13B rows are left out (no
  such model in data/models.csv).
- The batch given is the static batch (the release's benchmark prefills the batch, then decodes it together).
- AMD's ROCm performance results page in the version with vLLM 0.10.2 (container rocm7.0.0_vllm_0.10.2_20251006,
  read under the /zh-cn/ locale path; the file holds the later version with vLLM 0.11.1, fitted): the eight rows of
  the MI300X throughput table (Llama 3.1 70B and 405B FP8 on 8 MI300X, TP 8), read by the same rules as the later
  version: "tokens/s" as output tokens/s for the 8-GPU server, divided by 8; concurrency = max num seqs. Its latency
  table is left out (only part of it could be read).
- A row whose figure is already in the file (same accelerator, model, precision, lengths, TP and batch, within 0.1 %)
  would be left out as a copy (none is).
"""

from __future__ import annotations

from pathlib import Path

import validation_sets
from validation_sets import READ

GROUPS = {  # transcription key: (holdout_group, framework, serving stack prefix, description)
    "trtllm_h200_launch_blog_v0.5.0": ("trtllm-0.5-h200-blog", "TensorRT-LLM 0.5.0", "trtllm-0.5.0",
                                       "NVIDIA TensorRT-LLM blog, H200 launch (release 0.5.0)"),
    "amd_rocm_perf_results_vllm_0.10.2": ("rocm-vllm-0.10.2-perf", "vLLM 0.10.2 (ROCm 7.0.0)", "vllm-0.10.2-rocm",
                                          "AMD ROCm performance results (AI inference, vLLM, 'Results on AMD "
                                          "Instinct MI300X Platform', page in the version with container "
                                          "rocm/vllm:rocm7.0.0_vllm_0.10.2_20251006; English text under the /zh-cn/ "
                                          "locale path)"),
}


def rows() -> list[dict[str, object]]:
    """The transcription as rows of data/throughput_curves.csv."""
    out = []
    for t in validation_sets.transcription("validation_set_4.csv"):
        group, framework, stack, what = GROUPS[t["source_key"]]
        tp, batch = int(float(t["tensor_parallel"])), str(int(float(t["concurrency_or_batch"])))
        i, o = int(float(t["input_tokens"])), int(float(t["output_tokens"]))
        how = (f"static batch {batch}" if t["batch_kind"] == "static" else
               f"offline (requests at an infinite rate), concurrency = max num seqs {batch} (the engine's limit)")
        out.append(validation_sets.point(
            t, what, curve_id=f"{stack}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{i}-{o}-b{batch}",
            accelerator_count=tp, input_tokens=i, output_tokens=o,
            output_tokens_per_s_per_user=t["output_tokens_per_s_per_user"], framework=framework,
            serving_stack=f"{stack}-tp{tp}", concurrency=batch, tensor_parallel=tp, holdout_group=group,
            confidence="vendor claim",
            note= f"{how}, TP {tp}, input {i}, output {o}: published {t['value_as_published']} "
                    f"({t['note']}); fourth validation set, added after the ranges on every source the fit never "
                    f"saw and before any estimate of it was looked at, never fitted; read {READ}"))
    return out


def main(data: Path = validation_sets.DATA) -> None:
    validation_sets.append(rows(), (g for g, *_ in GROUPS.values()), "fourth", data)


if __name__ == "__main__":
    main()
