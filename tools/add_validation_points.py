"""Append the validation points (split ``validation``: never fitted, never in a range) to data/throughput_curves.csv.

Three public tables, each read on 2026-12-02 and added in one step before any estimate of them was looked at:

- Intel Gaudi 3 model-performance page (software 1.18.0): Llama 3.1 8B and 70B, Llama 2 70B, FP8, fixed batches.
- AMD's vLLM dev-docker README at ROCm/vllm commit 7545048a (vLLM 0.9.1, ROCm 6.4.1): the latency table, Llama 3.1
  70B and 405B FP8 on 8 MI300X, batch 1 to 128 (end-to-end seconds for the batch).
- Oracle's OCI blog on Llama 3.1 405B on MI300X: vLLM benchmark_latency, 128 in / 128 out, batch 1 to 256.

A second set was added on the same day after three rules had been changed on seeing the first one's errors (the ring
all-reduce latency, the batch-1 bound on the step overhead, AMD's 70B latency points moved into training), and before
any estimate of it was looked at:

- AMD's ROCm blog "Best practices for competitive inference optimization on AMD Instinct MI300X GPUs" (2025-01-29):
  its end-to-end latency tables, Llama 3.1 70B and 405B FP8 at TP 8, batch 1 to 128, on MI300X (vLLM 0.6.7) and on
  H100 (TensorRT-LLM 0.16, emulated static batching).

Curve ids already in the file are left as they are; the rest are appended.
"""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
READ = "2026-12-02"
GAUDI_URL = "https://www.intel.com/content/www/us/en/developer/platform/gaudi/model-performance.html"
AMD_URL = ("https://github.com/ROCm/vllm/blob/7545048a0bae01d4592803c44cf8357a12cae57b/docs/dev-docker/README.md")
OCI_URL = "https://blogs.oracle.com/cloud-infrastructure/post/serving-llama-31-405b-model-with-amd-mi300x-gpus"
BLOG_URL = ("https://github.com/ROCm/rocm-blogs/blob/11235ac299a174b730d359a6b3d9eab85a520f59/blogs/"
            "artificial-intelligence/LLM_Inference/README.md")

# (model, cards, batch, input, output, tokens/s for the cards)
GAUDI3 = [
    ("llama-3.1-8b", 1, 1536, 128, 128, 24310), ("llama-3.1-8b", 1, 768, 128, 2048, 18830),
    ("llama-3.1-8b", 1, 256, 2048, 128, 2652), ("llama-3.1-8b", 1, 364, 2048, 2048, 7405),
    ("llama-3.1-70b", 2, 3516, 128, 128, 3711), ("llama-3.1-70b", 2, 450, 128, 2048, 5776),
    ("llama-3.1-70b", 2, 223, 2048, 128, 497), ("llama-3.1-70b", 2, 175, 2048, 2048, 2588),
    ("llama-3.1-70b", 8, 4000, 128, 128, 15008), ("llama-3.1-70b", 8, 600, 128, 2048, 15711),
    ("llama-3.1-70b", 8, 400, 2048, 128, 1600), ("llama-3.1-70b", 8, 600, 2048, 2048, 8946),
    ("llama-2-70b", 2, 1750, 128, 128, 4433), ("llama-2-70b", 2, 512, 128, 2048, 6026),
    ("llama-2-70b", 2, 231, 2048, 128, 498), ("llama-2-70b", 2, 240, 2048, 2048, 2641),
]
# (model, input, output, {batch: seconds for the whole batch})
AMD_LATENCY = [
    ("llama-3.1-70b", 128, 2048, {1: 17.236, 2: 18.057, 4: 18.450, 8: 19.677, 16: 22.072, 32: 24.932, 64: 33.287,
                                  128: 46.484}),
    ("llama-3.1-70b", 2048, 2048, {1: 17.500, 2: 18.055, 4: 18.858, 8: 20.161, 16: 22.347, 32: 25.966, 64: 35.324,
                                   128: 52.394}),
    ("llama-3.1-405b", 128, 2048, {1: 48.453, 2: 49.268, 4: 51.136, 8: 54.226, 16: 57.274, 32: 68.901, 64: 88.631,
                                   128: 117.027}),
    ("llama-3.1-405b", 2048, 2048, {1: 48.362, 2: 49.121, 4: 52.347, 8: 54.471, 16: 57.841, 32: 70.538, 64: 91.452,
                                    128: 125.471}),
]
# batch: (output tokens/s for the 8 GPUs, average latency [s]) at 128 in / 128 out
OCI_405B = {1: (36, 3.530), 2: (71, 3.583), 4: (137, 3.734), 8: (258, 3.974), 16: (468, 4.375), 32: (798, 5.130),
            64: (1184, 6.919), 128: (1585, 10.340), 256: (1846, 17.750)}


# (model, input, output, batch, MI300X ms, H100 ms): the blog's two latency tables
BLOG = [
    *(("llama-3.1-70b", 128, 2048, b, m, h) for b, m, h in (
        (1, 19089, 20923), (2, 19610, 20352), (4, 19911, 21134), (8, 21859, 22102), (16, 23538, 23961),
        (32, 25343, 26543), (64, 32548, 29599), (128, 45216, 42398))),
    *(("llama-3.1-70b", 2048, 2048, b, m, h) for b, m, h in (
        (1, 19154, 21105), (2, 19671, 21449), (4, 19976, 22201), (8, 22486, 23453), (16, 25246, 26056),
        (32, 28967, 30501), (64, 39920, 36313), (128, 59514, 54202))),
    *(("llama-3.1-405b", 128, 2048, b, m, h) for b, m, h in (
        (1, 51740, 58916), (2, 52769, 58130), (4, 54557, 59730), (8, 56902, 62833), (16, 60432, 66537),
        (32, 67353, 71742), (64, 81085, 87298), (128, 116139, 99911))),
    *(("llama-3.1-405b", 2048, 2048, b, m, h) for b, m, h in (
        (1, 52218, 59511), (2, 53227, 60554), (4, 55512, 62048), (8, 59931, 66082), (16, 66890, 72055),
        (32, 80688, 82687), (64, 108503, 106951), (128, 168846, 195622))),
]
BLOG_SYSTEMS = {"mi300x": ("vLLM 0.6.7.dev121 (ROCm 6.3.0)", "vllm-0.6.7-rocm-tp8", "rocm/vllm-dev:20250112 image"),
                "h100-sxm": ("TensorRT-LLM 0.16.0", "trtllm-0.16.0-tp8", "emulated static batching")}


def _row(**kw: object) -> dict[str, object]:
    base = {"pipeline_parallel": 1, "expert_parallel": 1, "data_parallel_attention": "", "speculative_decoding": "none",
            "disaggregated": "no", "nodes": 1, "time_to_first_token_s": "", "source_date": READ}
    return {**base, **kw}


def rows() -> list[dict[str, object]]:
    out = []
    for model, cards, batch, i, o, total in GAUDI3:
        out.append(_row(
            curve_id=f"gaudi118-gaudi3-{model}-fp8-tp{cards}-{i}-{o}", accelerator="gaudi3", accelerator_count=cards,
            model=model, precision="fp8", input_tokens=i, output_tokens=o, output_tokens_per_s_per_user="",
            output_tokens_per_s_per_accelerator=round(total / cards, 2), point_kind="offline",
            framework="Intel Gaudi software 1.18.0 (PyTorch 2.4.0)", serving_stack=f"gaudi-1.18.0-tp{cards}",
            concurrency=batch, tensor_parallel=cards, holdout_group="gaudi3-1.18", confidence="vendor claim",
            source=f"Intel, Model Performance Data for Intel Gaudi 3 AI Accelerators (LLM inference, throughput) "
                   f"{GAUDI_URL}",
            note=f"{model}, FP8, {cards} x HL-325L (HLS-Gaudi3 server, 2 x Xeon 8480+), fixed batch {batch}, input "
                 f"{i}, output {o}: {total:,} tokens/s for the {cards} cards / {cards}; the page says 'Throughput "
                 "(tokens/sec)' and names no framework; read as output tokens/s (estimate of the unit: the 2048-in / "
                 "128-out rows are about a tenth of the 128/128 rows, as output tokens would be); a static batch "
                 "(every prompt prefilled, then decoded together); validation split, never fitted; read 2026-12-02"))
    for model, i, o, table in AMD_LATENCY:
        for batch, seconds in table.items():
            out.append(_row(
                curve_id=f"rocm-vllm091-lat-mi300x-{model}-fp8-tp8-{i}-{o}", accelerator="mi300x",
                accelerator_count=8, model=model, precision="fp8", input_tokens=i, output_tokens=o,
                output_tokens_per_s_per_user=round(o / seconds, 2),
                output_tokens_per_s_per_accelerator=round(batch * o / seconds / 8, 2), point_kind="measured",
                framework="vLLM 0.9.1 (ROCm 6.4.1)", serving_stack="vllm-0.9.1-rocm-tp8", concurrency=batch,
                tensor_parallel=8, holdout_group="rocm-vllm-0.9.1-latency", confidence="vendor claim",
                source=f"AMD, vLLM FP8 latency and throughput benchmarks on MI300X (ROCm/vllm docs/dev-docker/"
                       f"README.md, latency table, commit 7545048a of 2025-07-18) {AMD_URL}",
                note=f"latency table, {model} (amd/...-FP8-KV), FP8, TP 8, batch {batch}, input {i}, output {o}: "
                     f"{seconds} s for the whole batch (vLLM benchmark_latency: one fixed batch, prefill included); "
                     f"{batch} x {o} / {seconds} s / 8 GPUs output tokens/s per GPU, {o} / {seconds} s per user "
                     "(prefill included, so slightly under the decode speed); 8 x MI300X 192GB 750 W (Supermicro "
                     "AS-8125GS-TNMR2); validation split, never fitted; read 2026-12-02"))
    for batch, (tps, seconds) in OCI_405B.items():
        out.append(_row(
            curve_id="oci-vllm-mi300x-llama-3.1-405b-fp8-tp8-128-128", accelerator="mi300x", accelerator_count=8,
            model="llama-3.1-405b", precision="fp8", input_tokens=128, output_tokens=128,
            output_tokens_per_s_per_user=round(128 / seconds, 2),
            output_tokens_per_s_per_accelerator=round(tps / 8, 2), point_kind="measured",
            framework="vLLM (version not stated; October 2024)", serving_stack="vllm-oci-2024-tp8",
            concurrency=batch, tensor_parallel=8, holdout_group="oci-mi300x-405b", confidence="vendor claim",
            source=f"Oracle Cloud Infrastructure blog, Serving Llama 3.1 405B model with AMD Instinct MI300X "
                   f"Accelerators (2024-10-10) {OCI_URL}",
            note=f"OCI BM.GPU.MI300X.8, one vLLM instance on 8 GPUs, Llama 3.1 405B FP8, benchmark_latency, input "
                 f"128, output 128, batch {batch}: output throughput {tps} tokens/s for the 8 GPUs / 8, average "
                 f"latency {seconds} s (128 / {seconds} s per user, prefill included); validation split, never "
                 "fitted; read 2026-12-02"))
    for model, i, o, batch, mi_ms, h_ms in BLOG:
        for acc, ms in (("mi300x", mi_ms), ("h100-sxm", h_ms)):
            framework, stack, how = BLOG_SYSTEMS[acc]
            seconds = ms / 1000.0
            out.append(_row(
                curve_id=f"rocmblog-lat-{acc}-{model}-fp8-tp8-{i}-{o}", accelerator=acc, accelerator_count=8,
                model=model, precision="fp8", input_tokens=i, output_tokens=o,
                output_tokens_per_s_per_user=round(o / seconds, 2),
                output_tokens_per_s_per_accelerator=round(batch * o / seconds / 8, 2), point_kind="measured",
                framework=framework, serving_stack=stack, concurrency=batch, tensor_parallel=8,
                holdout_group="rocm-blog-2025-latency", confidence="vendor claim",
                source=f"AMD ROCm blog, Best practices for competitive inference optimization on AMD Instinct MI300X "
                       f"GPUs (2025-01-29; latency tables, endnote MI300-074) {BLOG_URL}",
                note=f"latency table, {model} FP8, TP 8, batch {batch}, input {i}, output {o}: {ms:,} ms end to end "
                     f"on 8 x {acc} ({framework}, {how}; prefill included); {batch} x {o} / {seconds} s / 8 GPUs "
                     f"output tokens/s per GPU, {o} / {seconds} s per user (prefill included); published by AMD, "
                     "H100 figures measured by AMD; second validation set, added after the rule changes, never "
                     "fitted; read 2026-12-02"))
    return out


def main() -> None:
    path = DATA / "throughput_curves.csv"
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        have = {r["curve_id"] for r in reader}
    new = [r for r in rows() if str(r["curve_id"]) not in have]
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        for r in new:
            w.writerow(r)
    print(f"appended {len(new)} points to {path}")


if __name__ == "__main__":
    main()
