"""The measured points the calibration is fitted and judged on, and the split each belongs to.

Every point of data/throughput_curves.csv and data/throughput_claims.csv becomes one row with what is needed to
predict it (accelerator, model, precision and the formats a curve gives apart from it, lengths, replica, batch
limit), whether it can be fitted (and why not), and its split, decided by the data before anything is fitted:

- ``train``: fitted;
- ``holdout``: a held-out model family (:data:`HOLDOUT_MODELS`) or source (:data:`HOLDOUT_SOURCES`), never fitted;
- ``blind``: a source added after the stored fit (:data:`BLIND_SOURCES`), never fitted, reported on its own;
- ``validation``: a source added after the fit and the ranges (:data:`VALIDATION_SOURCES`), never fitted and never
  part of a range; its error and how often the estimate's range holds it are reported on their own.

:mod:`economics.studies.calibration` fits and reports on these points and re-exports the names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.catalog import model_class
from economics.schema.scenario import FORMAT_FIELDS

HOLDOUT_MODELS = ("llama-2-7b", "llama-3.1-405b", "mixtral-8x7b", "qwen3-30b-a3b", "mistral-7b", "mixtral-8x22b",
                  "gpt-oss-20b", "llama-4-scout")
"""Model families whose points are held out of every fit (dense: Llama 2 7B with full multi-head attention, Llama 3.1
405B, Mistral 7B; MoE: Mixtral 8x7B and 8x22B, Qwen3-30B-A3B, gpt-oss-20b, Llama 4 Scout). Mistral 7B, Mixtral 8x22B
(TensorRT-LLM 0.17 tables) and gpt-oss-20b (TensorRT-LLM developer-guide tables) were added with their points, straight
into the held-out split; Llama 4 Scout (TensorRT-LLM 1.0 table) was added the same way after the three rule changes, as
a blind test of them, without refitting."""
HOLDOUT_SOURCES = ("trtllm-0.14-serving",)
"""Sources whose points are held out whatever the model (``holdout_group`` in data/throughput_curves.csv): TensorRT-LLM
0.14's online-serving table (Llama 3.1 8B and 70B under Poisson load, with the time to first token), added straight
into the held-out split so that the time to first token has points the fit never saw."""
BLIND_SOURCES = ("inferencex-2026",)
"""Sources added after the stored factors were fitted and never fitted (split ``blind``): the InferenceX runs
refreshed on 2026-12-01 by tools/refresh_inferencex.py (B300, GB200, GB300 and newer runs on every other GPU). Their
error is reported on its own (``blind_*``), so it says how the calibration does on runs and hardware it never saw,
without moving the bounds set on the held-out split."""
VALIDATION_SETS = {
    "first set (before the rule changes)": ("gaudi3-1.18", "oci-mi300x-405b"),
    "second set (after the three rule changes)": ("rocm-blog-2025-latency",),
    "third set (after the leave-one-table-out ranges)": ("trtllm-0.9-static", "trtllm-0.14", "trtllm-0.15",
                                                         "rocm-vllm-latency-versions"),
    "fourth set (after the ranges on every source the fit never saw)": ("trtllm-0.5-h200-blog",
                                                                        "rocm-vllm-0.10.2-perf"),
    "fifth set (after every rule change of #40)": ("gpustack-lab-vllm-0.11", "amd-vllm-0.6-mi300x-fp8",
                                                   "trtllm-0.12-quoted"),
    "sixth set (after the ranges as the spread across sources)": ("trtllm-0.20-issue-4043", "vllm-0.6.6-issue-12315",
                                                                  "vllm-pr-7117-h100", "vllm-pr-16458-tpu-v6e"),
    "seventh set (published tables, selection rule first)": ("lmdeploy-0.2-a100", "dstack-r1-offline",
                                                             "dstack-r1-online", "trtllm-blog-falcon-h200",
                                                             "trtllm-blog-xqa-h200", "trtllm-blog-dsr1-perf"),
    "eighth set (gathered during the range rule change, measured after it)": (
        "azure-aibg-a100", "azure-aibg-h100", "azure-aibg-h200", "qserve-paper-efficiency", "vllm-blog-fp8-kvcache",
        "lmsys-blog-sglang-gpt-oss"),
    "eighth set, formats added after (weights, compute and KV cache apart)": (
        "qserve-paper-efficiency-formats", "vllm-blog-fp8-kvcache-formats", "lmsys-blog-sglang-gpt-oss-formats"),
    "ninth set (after set 8 was measured, selection rule first)": (
        "nvidia-modelopt-benchmark-h200", "aws-neuron-trn2-405b-tutorial", "datacrunch-h200-sglang-offline",
        "pytorch-gpt-fast-readme", "chitu-performance-h20", "qwen-speed-benchmark-h20"),
    "tenth set (after the rule change set 9 led to, selection rule first)": (
        "amd-atom-recipes", "sglang-cookbook", "google-tpu-recipes-ironwood", "lambda-inference-models"),
}
"""The validation sources in the order they were added, each set after the rule changes its predecessor led to
(below); only the last set is a test of the rules as they stand."""
VALIDATION_SOURCES = tuple(g for groups in VALIDATION_SETS.values() for g in groups)
"""Sources of the validation split (split ``validation``): never fitted; in no range until the fourth set was added,
since then the sets looked at before the last range rule are in the ranges' basis (:data:`RANGE_BASIS_SOURCES`);
:func:`economics.studies.leave_out.validation` reports their error and how often the range holds them.

The first set was added on 2026-12-02 after the stored factors and the ranges were built and before any estimate of
it was looked at: Intel Gaudi 3 (a family with no other point), Llama 3.1 70B and 405B FP8 on MI300X under vLLM at
fixed batches (AMD's vLLM 0.9.1 latency table, ``rocm-vllm-0.9.1-latency``; Oracle's 405B table). Its errors (median
53.5 %, 35 % inside the range, every MI300X point too slow: the amd-cdna3 step overhead, fitted on MoE points, made a
70B batch-1 step 31 ms against 8.4 ms measured) led to three changes: the all-reduce's latency rounds
(:func:`economics.domain.throughput.allreduce_s`), the batch-1 bound on the step overhead
(:func:`batch_one_overhead_bound_us`)
and AMD's vLLM 0.9.1 latency table moved into the fitted data (its 70B points train an amd-cdna3 dense scope, its
405B points are held out with their model). The first set is therefore no longer blind: the second,
``rocm-blog-2025-latency`` (AMD's blog latency tables, MI300X under vLLM 0.6.7 and H100 under TensorRT-LLM 0.16), was
added after those changes and before any estimate of it was looked at. Its coverage (61 % inside the range; H100
points at small batches faster than Hopper's range allowed) led to a fourth change: a fitted family's range is taken
from its points predicted with their published table left out of the fit
(:func:`economics.studies.leave_out.range_table`)
instead of points held out inside tables the fit saw. The third set, added after that change and before any estimate
of it was looked at (tools/add_validation_set_3.py), holds the TensorRT-LLM performance tables of releases 0.9.0
(static batching), 0.14.0 and 0.15.0 (H100, H200, A100, L40S) and AMD's MI300X latency tables of vLLM 0.9.0.1 and
0.10.0."""
RANGE_BASIS_SETS = 7
"""How many of the first validation sets are in the ranges' basis: every set looked at before the range rule of
2026-12-06 (a fitted family's range kept per model class, :func:`economics.studies.leave_out.range_scopes`) was
made; a set added after it stays out and tests it."""
RANGE_BASIS_SOURCES = tuple(g for groups in list(VALIDATION_SETS.values())[:RANGE_BASIS_SETS] for g in groups)
"""Validation sources that are part of the ranges' basis: never fitted, so their error under the stored factors is
an error on sources the fit never saw, the range's basis (:func:`economics.studies.leave_out.range_table`). The
first three sets joined it when the fourth was added (the rules had changed after each); the fourth (TensorRT-LLM
0.5 H200 blog, AMD's vLLM 0.10.2 page) and the fifth (tools/add_validation_set_5.py: GPUStack's vLLM 0.11 runs,
AMD's vLLM 0.6 MI300X and NVIDIA's TensorRT-LLM 0.12 H100 Llama 3.1 405B tables) joined it when the range became
the spread across sources (both had been looked at: the fifth's 40 % coverage led to that change). The sixth
(tools/add_validation_set_6.py: GitHub issue and pull-request threads with TensorRT-LLM 0.20 on B200 and H200, vLLM
0.6.6 on A100, vLLM on H100 and on one TPU v6e chip) and the seventh, drawn by a selection rule committed before
anything was gathered (tools/validation_set_7.md, tools/add_validation_set_7.py: LMDeploy's A100 tables, dstack's
DeepSeek-R1 runs on 8 H200 and 8 MI300X, NVIDIA's TensorRT-LLM blog tables on H200 and B200), each measured once
under that rule (2 of 7 and 42 of 104 inside), joined it when the range was kept per model class (the seventh's
dense rows held, its MoE rows did not). Only a set added after that change tests the rules as they stand: the
eighth (tools/validation_set_8.md, tools/add_validation_set_8.py: Azure's AI benchmarking guide tables, QServe's
paper tables, the vLLM and LMSYS blogs), drawn by a rule committed first and gathered without comparing it to the
estimate while the range rule was being changed, measured once when both were merged. Its 13 rows in formats apart
from one precision (W4A16, an FP8 KV cache on BF16 weights, MXFP4 weights with BF16 compute on H100), refused until
data/throughput_curves.csv held ``weight_precision``, ``compute_precision`` and ``kv_cache_precision``, were appended
after that as sources of their own (``-formats``), never compared with the estimate before: a set of their own.
The ninth (tools/validation_set_9.md, tools/add_validation_set_9.py: the Qwen team's speed benchmark on H20, NVIDIA's
Model Optimizer table on H200, Chitu's H20 tables, DataCrunch's SGLang runs on H200, gpt-fast's A100 tables, AWS
Neuron's Llama 3.1 405B tutorial on Trn2) was drawn by a rule committed first, after the eighth was measured, and
gathered without comparing it to the estimate; no rule changed between them. The tenth (tools/validation_set_10.md,
tools/add_validation_set_10.py: AMD's ATOM recipes on MI300X and MI355X, the SGLang cookbook's speed benchmarks on
B200 and H100, Google's Ironwood Qwen3-32B recipe, Lambda's MiniMax-M2.5 page) was drawn by a rule committed first,
after the ninth was measured and while a rule was changed after seeing it, and gathered without comparing it to the
estimate: the set that tests the rules as they then stand."""
FITTED_CELL = "yes"
"""The ``fitted`` cell of a point the fit uses; any other cell is "no: " and why the point is left out."""
NEVER_FITTED = ("blind", "validation")
"""Splits no fit and no training figure reads."""
OFFLINE_MAX_BATCH = 2048.0
"""Batch limit for offline (maximum-throughput) points that publish no concurrency: TensorRT-LLM's default
``max_batch_size`` (LLM API BuildConfig default 2048, https://nvidia.github.io/TensorRT-LLM/llm-api/reference.html)."""
KV_FREE_FRACTION = {"TensorRT-LLM 0.11": 0.99, "TensorRT-LLM": 0.95}
"""Share of the memory left after the weights that TensorRT-LLM's benchmarks gave the KV cache
(``kv_cache_free_gpu_mem_fraction``): 0.99 in the 0.11 commands, 0.95 "in a majority of cases" from 0.19 on (the
performance overviews cited with each point). Other engines keep the scenario's ``memory_utilization`` (of all
memory, as vLLM counts it)."""
NOT_SERVING_ENGINES = ("Transformers",)
"""Frameworks (a point's ``framework`` cell's first word) that are not serving engines: Hugging Face Transformers'
``generate`` runs a model eagerly, without continuous batching, paged attention or a serving engine's fused kernels
(its MoE layers loop over experts), so its figures are not what the estimate describes (a tuned serving engine). Its
points are refused with the reason, never dropped. A rule made on 2026-12-06 after the ninth validation set was
measured (its 20 Transformers rows were 2 of 20 inside the range, the estimate up to 406x their figure), so it is
tested by a set added after it."""


def number_or_nan(value: Any) -> float:
    """A cell as a float, NaN where empty."""
    return float(value) if str(value).strip() else np.nan


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Each row of ``table`` as a dict of its cells: the values ``iterrows`` gives, read a column at a time (building
    a Series per row of the 3,000 curve points was most of the Throughput page's first visit in a process).
    """
    names = list(table.columns)
    columns = [table[c].to_numpy(dtype=object).tolist() for c in names]
    return [dict(zip(names, cells, strict=True)) for cells in zip(*columns, strict=True)]


def _curve_rows() -> list[dict[str, Any]]:
    rows = []
    for p in _records(catalog.throughput_curves()):
        tp, pp = number_or_nan(p.get("tensor_parallel", "")), number_or_nan(p.get("pipeline_parallel", ""))
        replica = tp * (1.0 if np.isnan(pp) else pp) if not np.isnan(tp) else (
            number_or_nan(p["accelerator_count"]) if p["point_kind"] == "measured" else np.nan)
        conc = number_or_nan(p.get("concurrency", ""))
        ttft = number_or_nan(p.get("time_to_first_token_s", ""))
        free = next((f for prefix, f in KV_FREE_FRACTION.items() if p["framework"].startswith(prefix)), np.nan)
        rows.append({
            "point": f"{p['curve_id']} @ {p['output_tokens_per_s_per_user'] or p['point_kind']}",
            "kv_free_fraction": free,
            "source_group": p.get("holdout_group", "") or p["curve_id"].split("-")[0],
            "accelerator": p["accelerator"], "model": p["model"], "precision": p["precision"], "replica": replica,
            **{f: p.get(f, "") for f in FORMAT_FIELDS},  # the point's own formats, predicted as a scenario of them
            "input_tokens": number_or_nan(p["input_tokens"]), "output_tokens": number_or_nan(p["output_tokens"]),
            "per_user": number_or_nan(p["output_tokens_per_s_per_user"]),
            "max_batch": conc if not np.isnan(conc) else OFFLINE_MAX_BATCH, "at_concurrency": not np.isnan(conc),
            "metric": "output_tokens_per_s_per_accelerator",
            # an arrival-limited point (Poisson load with under 2 requests in flight) measures the arrival rate, not
            # the replica's capacity: its throughput is not compared, its time to first token is
            "measured": np.nan if "arrival-limited" in p["note"] else float(p["output_tokens_per_s_per_accelerator"]),
            "measured_ttft": np.nan if "saturated" in p["note"] else ttft, "kind": p["point_kind"],
            "stack_terms": (p.get("speculative_decoding", "") not in ("", "none") or bool(p["disaggregated"])
                            or number_or_nan(p.get("expert_parallel", "")) > 1),
            # attention run data-parallel over a replica of several accelerators (each its own sequences and KV
            # cache) is not the plain tensor-parallel roofline, and these rows do not state their expert-parallel size
            "dp_attention": bool(p["data_parallel_attention"]) and replica > 1,
            "not_engine": str(p["framework"]).split(" ")[0] in NOT_SERVING_ENGINES,
        })
    return rows


def _claim_rows() -> list[dict[str, Any]]:
    rows = []
    claims = catalog.throughput_claims()
    for cid, p in zip(claims.index, _records(claims), strict=True):
        if p["decode_accelerator"]:
            continue  # disaggregated systems are modelled by the disaggregation capability, not this roofline
        rows.append({
            "point": str(cid), "source_group": "claims", "accelerator": p["accelerator"], "model": p["model"],
            "precision": p["precision"] if p["precision"] in ("bf16", "fp8", "fp4") else "",
            **dict.fromkeys(FORMAT_FIELDS, ""),
            "replica": number_or_nan(p["accelerator_count"]), "input_tokens": number_or_nan(p["input_tokens"]),
            "output_tokens": number_or_nan(p["output_tokens"]), "per_user": np.nan, "max_batch": OFFLINE_MAX_BATCH,
            "at_concurrency": False,
            "metric": p["metric"], "measured": float(p["value"]), "measured_ttft": np.nan, "kind": "claim",
            "kv_free_fraction": np.nan,
        })
    return rows


def is_fitted(table: pd.DataFrame) -> pd.Series:
    """Whether each point of ``table`` (of :func:`points`, or a result carrying its ``fitted``) is used in the fit."""
    return table["fitted"] == FITTED_CELL


def points() -> pd.DataFrame:
    """Every measured point in data/ with what is needed to predict it, whether it can be fitted, and its split
    (``train`` or ``holdout``, by model family).
    """
    df = pd.DataFrame(_curve_rows() + _claim_rows())
    acc = catalog.accelerators()
    known = df["accelerator"].isin(acc.index)
    roof = df["accelerator"].map(acc["roofline"] if "roofline" in acc.columns else {}).fillna(True)
    df["family"] = df["accelerator"].map(acc["family"]).fillna("")
    df["model_class"] = model_class(df["model"].to_numpy())
    df["split"] = np.where(df["source_group"].isin(VALIDATION_SOURCES), "validation", np.where(
        df["source_group"].isin(BLIND_SOURCES), "blind", np.where(
            df["model"].isin(HOLDOUT_MODELS) | df["source_group"].isin(HOLDOUT_SOURCES), "holdout", "train")))
    df["fitted"] = FITTED_CELL
    df.loc[df["input_tokens"].isna() | df["output_tokens"].isna(), "fitted"] = "no: input/output length unknown"
    df.loc[df["precision"] == "", "fitted"] = "no: precision unknown"
    df.loc[df["metric"] != "output_tokens_per_s_per_accelerator", "fitted"] = "no: per-user speed, batch unknown"
    df.loc[~roof.astype(bool), "fitted"] = "no: dataflow/SRAM system, not roofline-describable"
    df.loc[~known, "fitted"] = "no: accelerator not in data/accelerators.csv"
    stack_terms = df["stack_terms"].fillna(False).astype(bool) if "stack_terms" in df else False
    df.loc[stack_terms, "fitted"] = ("no: serving stack with speculative decoding, expert parallelism or "
                                     "disaggregation (checked by the stack terms, tests/test_stacks.py)")
    dp_attention = df["dp_attention"].fillna(False).astype(bool) if "dp_attention" in df else False
    df.loc[dp_attention, "fitted"] = ("no: attention data-parallel over the replica with an unstated expert-parallel "
                                      "size (a serving stack the data do not fully describe)")
    not_engine = df["not_engine"].fillna(False).astype(bool) if "not_engine" in df else False
    df.loc[not_engine, "fitted"] = ("no: not a serving engine (Hugging Face Transformers' generate: no continuous "
                                    "batching or serving kernels; the estimate describes a serving engine)")
    return df
