"""Append the third validation set to data/throughput_curves.csv (split ``validation``: never fitted, never in a range).

Added on 2026-12-02 after the ranges of fitted families were changed to the leave-one-table-out errors (on seeing the
second set's coverage), and before any estimate of these points was looked at. The transcription, one row per
published figure with its URL, is tools/validation_set_3.csv:

- NVIDIA TensorRT-LLM performance overview, release 0.15.0 (tag v0.15.0): trtllm-bench offline throughput on H100
  (FP8 and unquantized), A100-SXM (unquantized) and L40S (FP8); Llama 3.1 8B/70B, Mistral 7B, Mixtral 8x7B/8x22B.
- The same page as generated with release 0.14.0 (read from a copy of the docs at a fork's commit, the page stating
  "generated using version 0.14.0"): adds H200 and Llama 3.1 405B.
- The same page as generated with release 0.9.0 (static batching, the batch stated per row, per-GPU output tokens/s;
  read from a copy at a fork's commit): H200, H100, L40S (FP8), A100 (FP16); Llama 2 7B/70B, Mistral 7B, Mixtral 8x7B.
- AMD's vLLM dev-docker README (ROCm/vllm docs/dev-docker/README.md) at three commits other than the fitted 7545048a:
  the latency tables of vLLM 0.6.6, 0.9.0.1 and 0.10.0 (the last on an unmerged pull request's head), Llama 3.1 70B
  and 405B FP8 on 8 MI300X, batch 1 to 128.

Rules fixed before the points were compared with anything (so that none is chosen by its error):

- "Mixed" and FP16 columns are filed as bf16; the tables give the tensor-parallel size only (pipeline 1); the
  TensorRT-LLM figures are output tokens/s summed over the GPUs (the page's own example output is request rate x
  output length), divided by the tensor-parallel size; 0.9.0's are already per GPU.
- A latency row's per-GPU figure is batch x output / latency / 8 and its per-user speed output / latency (the
  latency includes the prefill); the README's throughput tables are left out (their unit, total or output tokens,
  is not stated).
- A row whose figure is already in the file (same accelerator, model, precision, lengths, tensor-parallel size and
  batch, per-GPU figure within 0.1 %) is left out as a copy: the 0.6.6 latency table repeats the MI300X figures of
  AMD's blog of the same day (second validation set).
- The A100 of 0.9.0 (variant not stated) is filed as a100-sxm; its "LLaMA 7B/70B" are Llama 2 (the page's method
  section names Llama2-7b and Llama2-70b).
"""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
READ = "2026-12-02"

GROUPS = {  # transcription key: (holdout_group, framework, serving stack prefix, point kind, description)
    "trtllm_perf_overview_v0.15.0": ("trtllm-0.15", "TensorRT-LLM 0.15.0", "trtllm-0.15.0", "offline",
                                     "NVIDIA TensorRT-LLM performance overview, release 0.15.0"),
    "trtllm_perf_overview_v0.14.0": ("trtllm-0.14", "TensorRT-LLM 0.14.0", "trtllm-0.14.0", "offline",
                                     "NVIDIA TensorRT-LLM performance overview as generated with release 0.14.0 "
                                     "(a copy of NVIDIA's docs at a fork's commit)"),
    "trtllm_perf_overview_v0.9.0_static": ("trtllm-0.9-static", "TensorRT-LLM 0.9.0", "trtllm-0.9.0", "offline",
                                           "NVIDIA TensorRT-LLM performance overview as generated with release 0.9.0, "
                                           "static batching (a copy of NVIDIA's docs at a fork's commit)"),
    "rocm_vllm_devdocker_7a292f9b0_latency": ("rocm-vllm-latency-versions", "vLLM 0.6.6 (ROCm 6.3.1)",
                                              "vllm-0.6.6-rocm", "measured",
                                              "AMD, ROCm/vllm docs/dev-docker/README.md latency table (2025-01-29)"),
    "rocm_vllm_devdocker_68af05584_latency": ("rocm-vllm-latency-versions", "vLLM 0.9.0.1 (ROCm 6.4.1)",
                                              "vllm-0.9.0.1-rocm", "measured",
                                              "AMD, ROCm/vllm docs/dev-docker/README.md latency table (2025-06-11)"),
    "rocm_vllm_devdocker_7802e2b72_latency": ("rocm-vllm-latency-versions", "vLLM 0.10.0 (ROCm 6.4.1)",
                                              "vllm-0.10.0-rocm", "measured",
                                              "AMD, ROCm/vllm docs/dev-docker/README.md latency table (2025-08-14, "
                                              "head of pull request 631)"),
}


def _key(r: dict[str, str]) -> tuple[str, ...]:
    conc = r.get("concurrency", "")
    return (r["accelerator"], r["model"], r["precision"], str(int(float(r["input_tokens"]))),
            str(int(float(r["output_tokens"]))), str(int(float(r["tensor_parallel"] or r["accelerator_count"]))),
            str(int(float(conc))) if conc else "")


def rows() -> list[dict[str, object]]:
    out = []
    with open(ROOT / "tools" / "validation_set_3.csv", newline="", encoding="utf-8") as f:
        for t in csv.DictReader(f):
            group, framework, stack, kind, what = GROUPS[t["source_key"]]
            tp = int(float(t["tensor_parallel"]))
            batch = t["concurrency_or_batch"]
            batch = str(int(float(batch))) if batch else ""
            i, o = int(float(t["input_tokens"])), int(float(t["output_tokens"]))
            how = ("static batch " + batch if t["batch_kind"] == "static" else "batch 1" if t["batch_kind"] ==
                   "latency" else "offline maximum throughput (trtllm-bench, requests at an infinite rate)")
            out.append({
                "curve_id": f"{stack}-{t['accelerator']}-{t['model']}-{t['precision']}-tp{tp}-{i}-{o}",
                "accelerator": t["accelerator"], "accelerator_count": tp, "model": t["model"],
                "precision": t["precision"], "input_tokens": i, "output_tokens": o,
                "output_tokens_per_s_per_user": t["output_tokens_per_s_per_user"],
                "output_tokens_per_s_per_accelerator": t["output_tokens_per_s_per_accelerator"], "point_kind": kind,
                "framework": framework, "serving_stack": f"{stack}-tp{tp}", "time_to_first_token_s": "",
                "concurrency": batch, "tensor_parallel": tp, "pipeline_parallel": 1, "expert_parallel": 1,
                "data_parallel_attention": "", "speculative_decoding": "none", "disaggregated": "no", "nodes": 1,
                "holdout_group": group, "confidence": "vendor claim", "source": f"{what} {t['url']}",
                "source_date": READ,
                "note": f"{how}, TP {tp}, input {i}, output {o}: published {t['value_as_published']} "
                        f"({t['note']}); third validation set, added after the leave-one-table-out ranges and "
                        f"before any estimate of it was looked at, never fitted; read {READ}"})
    return out


def stacks(new: list[dict[str, object]]) -> list[dict[str, object]]:
    """One serving stack per (framework release, tensor-parallel size), as the points publish them."""
    seen: dict[str, dict[str, object]] = {}
    for r in new:
        sid = str(r["serving_stack"])
        s = seen.setdefault(sid, {"stack_id": sid, "framework": str(r["framework"]).split(" ")[0]
                                  if "TensorRT" not in str(r["framework"]) else "TensorRT-LLM",
                                  "version": r["framework"], "tensor_parallel": r["tensor_parallel"],
                                  "expert_parallel": 1, "data_parallel_attention": "no", "speculative_method": "none",
                                  "draft_tokens": 0, "acceptance_rate": "", "draft_cost_fraction": "",
                                  "disaggregated": "no", "nodes": 1, "accelerators": r["tensor_parallel"],
                                  "_precision": set(), "_on": set(), "source": str(r["source"]).split(" ")[-1],
                                  "source_date": READ, "confidence": "vendor claim"})
        s["_precision"].add(r["precision"])  # type: ignore[union-attr]
        s["_on"].add(r["accelerator"])  # type: ignore[union-attr]
    out = []
    for sid, s in seen.items():
        s["precision"] = "/".join(sorted(s.pop("_precision")))  # type: ignore[call-overload]
        s["measured_on"] = "/".join(sorted(s.pop("_on")))  # type: ignore[call-overload]
        s["note"] = f"configuration as published with the measured points (data/throughput_curves.csv, " \
                    f"serving_stack {sid}); third validation set"
        out.append(s)
    return out


def _copy(r: dict[str, object], have: dict[tuple[str, ...], list[float]]) -> bool:
    value = float(str(r["output_tokens_per_s_per_accelerator"]))
    key = _key({k: str(v) for k, v in r.items()})
    return any(abs(value / v - 1.0) <= 1e-3 for v in have.get(key, []) if v > 0)


def main() -> None:
    path = DATA / "throughput_curves.csv"
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        existing = list(reader)
    have: dict[tuple[str, ...], list[float]] = {}
    for r in existing:
        if r["output_tokens_per_s_per_accelerator"] and r["input_tokens"] and r["output_tokens"]:
            have.setdefault(_key(r), []).append(float(r["output_tokens_per_s_per_accelerator"]))
    groups = {g for g, *_ in GROUPS.values()}
    if any(r["holdout_group"] in groups for r in existing):
        raise SystemExit("the third validation set is already in data/throughput_curves.csv")
    new, copies = [], 0
    for r in rows():
        if _copy(r, have):
            copies += 1
        else:
            new.append(r)
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writerows(new)
    stack_path = DATA / "serving_stacks.csv"
    with open(stack_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        stack_fields = list(reader.fieldnames or [])
        known = {r["stack_id"] for r in reader}
    added = [s for s in stacks(new) if s["stack_id"] not in known]
    with open(stack_path, "a", newline="", encoding="utf-8") as f:
        csv.DictWriter(f, fieldnames=stack_fields, lineterminator="\n").writerows(added)
    print(f"appended {len(new)} points ({copies} left out as copies of points already in the file) and "
          f"{len(added)} serving stacks")


if __name__ == "__main__":
    main()
