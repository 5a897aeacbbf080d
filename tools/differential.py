"""Every command's output and the bench's scenarios, written to a folder, to compare two trees byte for byte.

A restructure must change no number: run this before and after, then compare the two folders.

Usage:
    python tools/differential.py OUT_DIR            # write every output under OUT_DIR (any existing folder is kept)
    python tools/differential.py --compare A B      # list the files that differ, with the first lines of each diff
    python tools/differential.py OUT_DIR --skip calibrate-leave-out calibrate-ranges   # without the long refits

Each CLI command runs in a child process from the repository root (stdout, stderr and the exit code are kept, and
any output file); the Python part evaluates the presets, the bench's 2,000-row mix and every preset's derivation
through the public ``economics`` names only, so it runs unchanged on any layout of the package.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = "tests/fixtures/benchmarks"
PLAN_ROWS = ("worked-plan", "worked-plan-peaks", "worked-plan-small-site")
IMPORTS = (
    ("vllm_serve.json", "h100-sxm", "8", "fp8"),
    ("vllm_benchmark_serving_legacy.json", "h100-sxm", "1", "bf16"),
    ("sglang_bench_serving.jsonl", "h200-sxm", "8", "fp8"),
    ("genai_perf_profile_export.json", "h100-sxm", "8", "fp8"),
    ("aiperf_profile_export.json", "h200-sxm", "4", "bf16"),
    ("guidellm_benchmarks.json", "h100-sxm", "1", "bf16"),
    ("inferencex_rows.json", "", "", ""),
    ("mlperf_log_summary.txt", "h100-sxm", "8", "fp8"),
)


def commands(out: Path) -> dict[str, list[str]]:
    """Name -> arguments of ``python -m economics``; ``{out}`` is where a command writes its file."""
    o = str(out)
    ex = "docs/example.csv"
    cmds: dict[str, list[str]] = {
        "evaluate-csv": ["evaluate", ex, "-o", f"{o}/evaluate.csv"],
        "evaluate-json": ["evaluate", ex, "--format", "json", "-o", f"{o}/evaluate.json"],
        "explain": ["explain", ex, "--row", "worked-example"],
        "template": ["template"],
        "fields": ["fields"],
        "schema": ["schema"],
        "compare": ["compare", ex, "--row", "worked-example", "--format", "json", "-o", f"{o}/compare.json"],
        "retrofit": ["retrofit", "docs/retrofit-example.csv", "--row", "retrofit-example", "--format", "json",
                     "-o", f"{o}/retrofit.json"],
        "retrofit-explain": ["retrofit", "docs/retrofit-example.csv", "--row", "retrofit-example", "--explain"],
        "uncertainty": ["uncertainty", "docs/uncertainty-example.csv", "--row", "uncertain-h100",
                        "--samples", "300", "--seed", "3"],
        "calibrate": ["calibrate"],
        "calibrate-holdout": ["calibrate", "--holdout"],
        "calibrate-leave-out": ["calibrate", "--leave-out", "family"],
        "calibrate-ranges": ["calibrate", "--ranges"],
        "sweep": ["sweep", "docs/uncertainty-example.csv", "--row", "uncertain-h100", "--grid",
                  "electricity_usd_per_kwh=0.05,0.1", "--samples", "40", "--seed", "2", "--local"],
    }
    for row in PLAN_ROWS:
        cmds[f"plan-{row}"] = ["plan", "docs/plan-example.csv", "--row", row, "--candidates",
                               "docs/plan-candidates.csv", "--format", "json", "-o", f"{o}/plan-{row}.json"]
    cmds["plan-frontier"] = ["plan", "docs/plan-example.csv", "--row", "worked-plan", "--candidates",
                             "docs/plan-candidates.csv", "--frontier", "both", "--format", "csv",
                             "-o", f"{o}/plan-frontier.csv"]
    for name, acc, n, prec in IMPORTS:
        args = ["import-benchmark", f"{FIX}/{name}", "-o", f"{o}/import-{name}.csv"]
        if acc:
            args += ["--accelerator", acc, "--accelerators", n, "--precision", prec]
        cmds[f"import-{name}"] = args
    cmds["evaluate-curves"] = ["evaluate", ex, "--curves", f"{o}/import-vllm_serve.json.csv",
                               "-o", f"{o}/evaluate-curves.csv"]
    return cmds


def run_cli(out: Path, skip: frozenset[str] = frozenset()) -> None:
    for name, args in commands(out).items():
        if name in skip:
            print(f"{name}: skipped", flush=True)
            continue
        proc = subprocess.run([sys.executable, "-m", "economics", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=900)
        (out / f"{name}.stdout").write_text(proc.stdout)
        (out / f"{name}.stderr").write_text(proc.stderr)
        (out / f"{name}.rc").write_text(f"{proc.returncode}\n")
        print(f"{name}: exit {proc.returncode}", flush=True)


def run_python(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    from batch import scenarios  # bench/batch.py's mix

    import economics

    presets = economics.preset_scenarios()
    rows = {name: economics.evaluate_scenario(s) for name, (s, _note) in presets.items()}
    (out / "presets.json").write_text(json.dumps(rows, indent=1, sort_keys=True, default=str))
    text = "\n\n".join(f"## {name}\n{economics.explain_text(s)}" for name, (s, _n) in presets.items())
    (out / "presets-explain.txt").write_text(text)
    table = economics.evaluate(scenarios(2000))
    table.to_csv(out / "bench-mix.csv", index=False, float_format="%.17g")
    print("python: presets, derivations, bench mix", flush=True)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = 0
    for name in names:
        pa, pb = a / name, b / name
        if not (pa.exists() and pb.exists()):
            print(f"only in {'A' if pa.exists() else 'B'}: {name}")
            bad += 1
            continue
        if pa.read_bytes() == pb.read_bytes():
            continue
        bad += 1
        print(f"differs: {name}")
        diff = difflib.unified_diff(pa.read_text(errors="replace").splitlines(),
                                    pb.read_text(errors="replace").splitlines(), lineterm="", n=0)
        for line in list(diff)[:12]:
            print("   ", line[:200])
    print(f"{len(names)} files, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    ap.add_argument("--only", choices=("cli", "python"))
    ap.add_argument("--skip", nargs="*", default=[], metavar="NAME", help="commands not to run (their names as the "
                    "output files name them, e.g. calibrate-leave-out and calibrate-ranges: each refits for minutes, "
                    "beyond the 900 s limit on a loaded machine)")
    ns = ap.parse_args()
    if ns.compare:
        return compare(*ns.compare)
    if ns.out is None:
        ap.error("give OUT_DIR or --compare A B")
    ns.out.mkdir(parents=True, exist_ok=True)
    out = ns.out.resolve()
    if ns.only != "python":
        unknown = set(ns.skip) - set(commands(out))
        if unknown:
            ap.error(f"--skip: no command {sorted(unknown)[0]!r}")
        run_cli(out, frozenset(ns.skip))
    if ns.only != "cli":
        run_python(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
