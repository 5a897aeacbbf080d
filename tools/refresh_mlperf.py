"""Add MLPerf Inference LLM results to data/throughput_claims.csv from MLCommons' results summary tables.

    python tools/refresh_mlperf.py summary.csv --repo v5.1=URL --repo v6.0=URL [--write]

``summary.csv`` has the submission checker's columns (``closed/<Org>/summary.csv`` of an inference_results_vX.Y
repository, or several of them concatenated); ``--repo VERSION=URL`` gives, per round, the repository's address at
the commit read (``https://github.com/mlcommons/inference_results_v5.1/blob/<commit>``): each claim cites its
``mlperf_log_summary.txt`` under it. Rows are read by the importer's MLPerf table reader (power rows are not runs;
accelerators = nodes x per node; accelerator and model names mapped to catalog ids, rows of other hardware or models
left out). Per round, accelerator, benchmark and scenario the result with the most output tokens/s per accelerator
becomes one claim ``mlperf<round>-<accelerator>x<n>-<benchmark>-<scenario>``, unless the catalog holds that id.
MLPerf publishes no mean prompt length, so ``input_tokens`` stays empty; ``output_tokens`` is the Accuracy column's
TOKENS_PER_SAMPLE. Rerunning replaces the claims this script wrote. Without ``--write`` it prints what it would add.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from economics import benchmarks  # noqa: E402
from economics.io.benchmark_formats import MLPERF_TPOT_LIMIT_MS, mlperf_accelerator, read_mlperf_table  # noqa: E402

CLAIMS = ROOT / "data" / "throughput_claims.csv"
MARK = "written by tools/refresh_mlperf.py"
PUBLISHED = {"v5.1": "2025-09", "v6.0": "2026-04"}
"""When each round's results were published (MLCommons announces them on the day the repository is released)."""


def claims(text: str, repos: dict[str, str]) -> list[dict[str, str]]:
    rows = [r for r in csv.DictReader(io.StringIO(text)) if str(r.get("Units", "")).strip().lower() != "watts"]
    runs = read_mlperf_table(text)
    best: dict[tuple[str, str, str, str], dict[str, str]] = {}
    for row, run in zip(rows, runs, strict=True):
        accelerator = mlperf_accelerator(row["accelerator_model_name"])
        try:
            model = benchmarks.model_id(row["MlperfModel"])
        except benchmarks.BenchmarkError:
            continue
        version = row["version"]
        if not accelerator or not run.accelerators or run.output_tokens_per_s is None or version not in repos:
            continue
        per = run.output_tokens_per_s / run.accelerators
        family = re.sub(r"-(interactive-)?99(\.9)?$", "", row["MlperfModel"].lower())
        scenario = row["Scenario"].strip()
        key = (version, accelerator, family, scenario.lower())
        if key in best and float(best[key]["value"]) >= per:
            continue
        limit = MLPERF_TPOT_LIMIT_MS.get((family, scenario.lower()))
        n = int(run.accelerators)
        log = f"{repos[version]}/{row['Location']}/performance/run_1/mlperf_log_summary.txt"
        best[key] = {
            "claim_id": f"mlperf{version[1:].replace('.', '')}-{accelerator}x{n}-{family}-{scenario.lower()}",
            "system": row["SystemName"], "accelerator": accelerator, "accelerator_count": str(n),
            "decode_accelerator": "", "decode_accelerator_count": "", "model": model,
            "precision": run.precision if run.precision in ("bf16", "fp8", "fp4") else "",
            "metric": "output_tokens_per_s_per_accelerator", "value": f"{per:.2f}", "input_tokens": "",
            "output_tokens": f"{run.output_tokens:.0f}" if run.output_tokens else "", "concurrency": "",
            "conditions": f"MLPerf Inference {version} closed, datacenter, {row['MlperfModel']}, {scenario} scenario; "
                          f"{row['Availability']}" + (f"; p99 time per output token <= {limit:g} ms (>= "
                                                      f"{1000 / limit:.3g} tokens/s per user)" if limit else ""),
            "confidence": "secondary",
            "source": f"MLPerf Inference {version} {row['Location']}/performance/run_1/mlperf_log_summary.txt {log}",
            "source_date": PUBLISHED.get(version, ""),
            "note": f"per-accelerator value = system {float(row['Result']):,.2f} tokens/s / {n} accelerators "
                    f"({row['number_of_nodes']} node(s) x {row['accelerators_per_node']}); output tokens per sample "
                    f"from the Accuracy column (TOKENS_PER_SAMPLE); {row['Organization']}, {row['framework']}; "
                    f"read 2026-12-01; {MARK}"}
    return sorted(best.values(), key=lambda c: c["claim_id"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary")
    ap.add_argument("--repo", action="append", default=[], help="VERSION=URL of the results repository at a commit")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    repos = dict(r.split("=", 1) for r in args.repo)
    table = pd.read_csv(CLAIMS, dtype=str, keep_default_na=False)
    table = table[~table["note"].str.contains(MARK, regex=False)]
    new = [c for c in claims(Path(args.summary).read_text(encoding="utf-8"), repos)
           if c["claim_id"] not in set(table["claim_id"])]
    print(f"{len(new)} claims to add")
    for c in new:
        print(f"  {c['claim_id']}: {c['value']} output tokens/s per accelerator")
    if args.write:
        out = pd.concat([table, pd.DataFrame(new, columns=table.columns)], ignore_index=True)
        out.to_csv(CLAIMS, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        print(f"wrote {CLAIMS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
