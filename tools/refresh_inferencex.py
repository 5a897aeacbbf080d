"""Refresh the InferenceX fronts of data/throughput_curves.csv (and their stacks) from InferenceX's published rows.

    python tools/refresh_inferencex.py benchmarks.json benchmarks-history.json [--write]

The files are InferenceX's result rows: its ``/api/v1/benchmarks`` JSON, as the InferenceX-app repository keeps it
(``packages/app/cypress/fixtures/api/benchmarks.json`` and ``benchmarks-history.json``). Each row is read by the
same importer as ``import-benchmark --format inferencex`` (rows whose GPU counts contradict their throughputs are
named and left out). Then, per configuration (accelerator, precision, framework, speculative decoding,
disaggregation, ISL/OSL), the published run with the most points (two at least; the newest on a tie) becomes one
curve ``ixr-…`` with holdout group ``inferencex-2026``: never fitted by the calibration, so the refresh tests the
roofline on data it was not fitted on and leaves the fitted factors as they are. Its serving stack is written to
data/serving_stacks.csv where the catalog has no such id yet.

Rerunning replaces every ``ixr-`` curve and every stack this script wrote; the five disaggregated InferenceX curves
added on 2026-11-30 (per-accelerator output divided by the decode GPUs only) are superseded by the refreshed runs
and removed. Without ``--write`` it prints what it would write.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from economics.io import benchmarks  # noqa: E402
from economics.schema import user_curves  # noqa: E402

CURVES, STACKS = ROOT / "data" / "throughput_curves.csv", ROOT / "data" / "serving_stacks.csv"
GROUP = "inferencex-2026"
MARK = "written by tools/refresh_inferencex.py"
FIXTURE_URL = ("https://github.com/SemiAnalysisAI/InferenceX-app/blob/528c4146b8f502fcbce8df7870a935a970cbae25/"
               "packages/app/cypress/fixtures/api/benchmarks.json")
FRAMEWORKS = {"sglang": ("sglang", "SGLang"), "trt": ("trtllm", "TensorRT-LLM"), "vllm": ("vllm", "vLLM"),
              "atom": ("atom", "ATOM"), "dynamo-trt": ("dynamo-trtllm", "Dynamo + TensorRT-LLM"),
              "dynamo-sglang": ("dynamo-sglang", "Dynamo + SGLang"), "mori-sglang": ("sglang-mori", "SGLang + MoRI")}
MTP_NOTE = ("MTP with one draft token per step; acceptance 0.85 is the low end of the 85-90 % second-token acceptance "
            "DeepSeek-V3 reports (arXiv:2412.19437, section 5.4.3; https://arxiv.org/abs/2412.19437); the engine's own "
            "draft-token setting is not in the run record (estimate); draft_cost_fraction = one MTP module of 61 "
            "transformer layers (DeepSeek-V3 config: num_nextn_predict_layers 1, num_hidden_layers 61) = 1/61")


def version(image: str, framework: str) -> str:
    """The engine version in a container image name ('' when the row names no image)."""
    tag = image.split(":", 1)[1] if ":" in image else ""
    pattern = r"atom(\d+\.\d+\.\d+)" if framework == "atom" else r"(\d+\.\d+(?:\.\d+)?(?:rc\d+)?(?:\.post\d+)?)"
    m = re.search(pattern, tag)
    return m.group(1) if m else ""


def stack_of(run: pd.DataFrame) -> dict[str, str]:
    """The serving stack of a curve: id and the catalog row (the configuration of its first point; the engine
    version of the first point whose row names its image)."""
    first = run.iloc[0]
    prefix, name = FRAMEWORKS.get(first["framework"], (first["framework"], first["framework"]))
    ver = next((v for v in (version(img, first["framework"]) for img in run["tool_version"]) if v), "")
    mtp, disagg = first["speculative_decoding"] == "mtp", first["disaggregated"] == "yes"
    ep = first["expert_parallel"] if first["expert_parallel"] not in ("", "1") else ""
    sid = "-".join(p for p in (prefix, ver, f"tp{first['tensor_parallel']}", f"ep{ep}" if ep else "",
                               "dpa" if first["data_parallel_attention"] == "yes" else "", "mtp" if mtp else "",
                               "disagg" if disagg else "") if p)
    note = (f"configuration as published with the measured points (data/throughput_curves.csv, serving_stack {sid}); "
            "per-accelerator figures count every GPU of the deployment (prefill and decode); " + MARK)
    return {"stack_id": sid, "framework": name, "version": f"{name} {ver}".strip(),
            "tensor_parallel": first["tensor_parallel"], "expert_parallel": first["expert_parallel"] or "1",
            "data_parallel_attention": first["data_parallel_attention"] or "no",
            "speculative_method": "mtp" if mtp else "none", "draft_tokens": "1" if mtp else "0",
            "acceptance_rate": "0.85" if mtp else "", "draft_cost_fraction": "0.016" if mtp else "",
            "disaggregated": "yes" if disagg else "no", "nodes": "", "accelerators": first["accelerator_count"],
            "precision": first["precision"], "measured_on": first["accelerator"], "source": first["source"],
            "source_date": first["run_date"], "confidence": "estimate" if mtp else "secondary",
            "note": note + ("; " + MTP_NOTE if mtp else "")}


def chosen_runs(table: pd.DataFrame) -> list[pd.DataFrame]:
    """Per configuration, the run with the most points (at least two; the newest on a tie)."""
    keys = ["accelerator", "precision", "framework", "speculative_decoding", "disaggregated", "input_tokens",
            "output_tokens"]
    out = []
    for _, config in table.groupby(keys, sort=True):
        runs = [(len(g), g["run_date"].max(), cid, g) for cid, g in config.groupby("curve_id")]
        runs = [r for r in runs if r[0] >= 2]
        if runs:
            out.append(max(runs, key=lambda r: (r[0], r[1], r[2]))[3])
    return out


def curve_rows(run: pd.DataFrame, stack_id: str) -> list[dict[str, str]]:
    cid = "ixr-" + run["curve_id"].iloc[0].removeprefix("inferencex-").replace("deepseek-v3", "dsr1")
    rows = []
    for _, p in run.sort_values("concurrency", key=lambda s: s.astype(float)).iterrows():
        rows.append({
            "curve_id": cid, "accelerator": p["accelerator"], "accelerator_count": p["accelerator_count"],
            "model": p["model"], "precision": p["precision"], "input_tokens": p["input_tokens"],
            "output_tokens": p["output_tokens"], "output_tokens_per_s_per_user": p["output_tokens_per_s_per_user"],
            "output_tokens_per_s_per_accelerator": p["output_tokens_per_s_per_accelerator"],
            "point_kind": "measured", "framework": FRAMEWORKS.get(p["framework"], ("", p["framework"]))[1],
            "serving_stack": stack_id, "time_to_first_token_s": p["time_to_first_token_s"],
            "concurrency": p["concurrency"], "tensor_parallel": p["tensor_parallel"], "pipeline_parallel": "1",
            "expert_parallel": p["expert_parallel"], "data_parallel_attention": p["data_parallel_attention"],
            "speculative_decoding": p["speculative_decoding"], "disaggregated": p["disaggregated"], "nodes": "",
            "holdout_group": GROUP, "confidence": "secondary",
            "source": f"SemiAnalysis InferenceX results as published in the InferenceX-app API fixture {FIXTURE_URL}; "
                      f"run {p['source']}",
            "source_date": p["run_date"],
            "note": f"{p['token_basis']}; concurrency {p['concurrency']}"
                    + (f"; {p['prefill_accelerators']} prefill + {p['decode_accelerators']} decode GPUs"
                       if p["disaggregated"] == "yes" else "")
                    + f"; image {p['tool_version'] or 'not recorded'}; per-user = InferenceX median interactivity "
                      "(1 / median TPOT); nominal ISL/OSL; model DeepSeek-R1-0528 (InferenceX dsr1), filed under "
                      f"deepseek-v3; read 2026-12-01 with import-benchmark; {MARK}"})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--write", action="store_true", help="write data/throughput_curves.csv and serving_stacks.csv")
    args = ap.parse_args()
    skipped: list[str] = []
    table = benchmarks.import_benchmark(args.files, fmt="inferencex", skipped=skipped)
    for note in skipped:
        print(f"skipped: {note}", file=sys.stderr)
    curves = pd.read_csv(CURVES, dtype=str, keep_default_na=False)
    stacks = pd.read_csv(STACKS, dtype=str, keep_default_na=False)
    superseded = (curves["holdout_group"] == "inferencex") & (curves["disaggregated"] == "yes")
    curves = curves[~curves["curve_id"].str.startswith("ixr-") & ~superseded]
    stacks = stacks[~stacks["note"].str.contains(MARK, regex=False)]
    new_curves, new_stacks = [], {}
    for run in chosen_runs(table):
        stack = stack_of(run)
        if stack["stack_id"] not in set(stacks["stack_id"]):
            new_stacks.setdefault(stack["stack_id"], stack)
        new_curves.extend(curve_rows(run, stack["stack_id"]))
    curves = pd.concat([curves, pd.DataFrame(new_curves, columns=curves.columns)], ignore_index=True)
    stacks = pd.concat([stacks, pd.DataFrame(list(new_stacks.values()), columns=stacks.columns)], ignore_index=True)
    stacks = stacks[stacks["stack_id"].isin(set(curves["serving_stack"]))]
    ids = pd.Series([r["curve_id"] for r in new_curves]).nunique() if new_curves else 0
    print(f"{len(table)} points read; {ids} curves ({len(new_curves)} points) and {len(new_stacks)} new stacks; "
          f"{int(superseded.sum())} superseded points removed")
    if args.write:
        for frame, path in ((curves, CURVES), (stacks, STACKS)):
            frame.to_csv(path, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        print(f"wrote {CURVES.relative_to(ROOT)} and {STACKS.relative_to(ROOT)}")
    assert set(user_curves.CATALOG_COLUMNS) == set(curves.columns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
