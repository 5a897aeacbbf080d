"""Benchmark files in: each tool's fixture (tests/fixtures/benchmarks, written in the tool's documented format, see
FORMATS.md there) imports to its hand-checked points; what a file lacks is refused naming the flag; a curve file
round-trips; a user's curve and a catalog claim are used only for their own configuration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics.engine import measured
from economics.io import benchmarks
from economics.io.benchmarks import BenchmarkError, curves_csv, import_benchmark
from economics.schema import user_curves

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "benchmarks"
NUMBERS = ("output_tokens_per_s_per_user", "output_tokens_per_s_per_accelerator", "time_to_first_token_s",
           "concurrency", "request_rate_per_s", "input_tokens", "output_tokens", "accelerator_count")


def points(name: str, **flags: Any) -> list[dict[str, Any]]:
    """The imported points of one fixture, numbers as floats (None where empty)."""
    table = import_benchmark([FIX / name], **flags)
    rows = table.to_dict(orient="records")
    return [{k: (float(v) if v != "" else None) if k in NUMBERS else v for k, v in r.items()} for r in rows]


def close(row: dict[str, Any], **want: float | None) -> None:
    for k, v in want.items():
        assert (row[k] is None) if v is None else row[k] == pytest.approx(v, rel=2e-4), (k, row[k], v)


# --- each format, hand-checked ---------------------------------------------------------------------------------

def test_vllm_bench_serve() -> None:
    # per user = 1000 / median_tpot_ms 20.6799 = 48.356; per accelerator = output_throughput 731.785 / 8 = 91.473;
    # TTFT median 96.865 ms; max_concurrency 16; input 65,536 / 64 = 1,024; output 16,384 / 64 = 256 tokens
    (p,) = points("vllm_serve.json", accelerator="h100-sxm", accelerators=8, precision="fp8")
    close(p, output_tokens_per_s_per_user=1000 / 20.6799, output_tokens_per_s_per_accelerator=731.785 / 8,
          time_to_first_token_s=0.096865, concurrency=16, input_tokens=1024, output_tokens=256, accelerator_count=8)
    assert (p["model"], p["accelerator"], p["precision"], p["tool"], p["run_date"]) == (
        "llama-3.1-70b", "h100-sxm", "fp8", "vllm", "2026-04-12")  # meta-llama/Llama-3.3-70B-Instruct, an alias
    assert p["source_sha256"] == user_curves.sha256_of((FIX / "vllm_serve.json").read_bytes())
    assert p["source_file"] == "vllm_serve.json" and "/ accelerators" in p["token_basis"]


def test_vllm_legacy_benchmark_serving() -> None:
    # a rate point: 1000 / 6.8748 = 145.46 tokens/s per user; 93.131 output tokens/s on one GPU; 28.14 ms TTFT;
    # request_rate 2.0 req/s, no concurrency limit; 5,120 / 10 = 512 in, 320 / 10 = 32 out
    (p,) = points("vllm_benchmark_serving_legacy.json", accelerator="h100-sxm", accelerators=1, precision="bf16")
    close(p, output_tokens_per_s_per_user=1000 / 6.8748, output_tokens_per_s_per_accelerator=93.131,
          time_to_first_token_s=0.028140, concurrency=None, request_rate_per_s=2.0, input_tokens=512, output_tokens=32)
    assert p["model"] == "llama-3.1-8b"


def test_sglang_bench_serving_jsonl() -> None:
    # three runs appended to one file; 1000 / median TPOT, output_throughput / 8, median TTFT, 1,024 / 1,024
    got = points("sglang_bench_serving.jsonl", accelerator="h200-sxm", accelerators=8, precision="fp8")
    want = ((4, 10.6294, 368.181, 0.128514), (16, 16.4839, 939.218, 0.228245), (64, 29.7314, 2022.151, 0.457102))
    assert len(got) == 3 and len({p["curve_id"] for p in got}) == 1  # one curve: one stack, one request shape
    for p, (conc, tpot, out, ttft) in zip(got, want, strict=True):
        close(p, concurrency=conc, output_tokens_per_s_per_user=1000 / tpot,
              output_tokens_per_s_per_accelerator=out / 8, time_to_first_token_s=ttft, input_tokens=1024,
              output_tokens=1024)
        assert p["model"] == "deepseek-v3" and p["tensor_parallel"] == "8"  # server_info: model_path, tp_size


def test_genai_perf_profile_export() -> None:
    # per user = the median of the per-request speeds, 43.27 (= 1000 / p50 ITL 23.1124); 1,320.233 / 8 = 165.03;
    # TTFT p50 265.37 ms; concurrency 32 (perf_analyzer stimulus); input 2,048; output 511.94 (avg OSL)
    (p,) = points("genai_perf_profile_export.json", accelerator="h100-sxm", accelerators=8, precision="fp8")
    close(p, output_tokens_per_s_per_user=1000 / 23.1124, output_tokens_per_s_per_accelerator=1320.233 / 8,
          time_to_first_token_s=0.26537, concurrency=32, input_tokens=2048, output_tokens=511.94)
    assert p["model"] == "llama-3.1-70b"  # meta/llama-3.1-70b-instruct: an alias by its name after the owner


def test_aiperf_profile_export_both_layouts() -> None:
    # flat: per user p50 38.24 (= 1000 / 26.1523); 2,332.965 / 4 = 583.24; TTFT 221.27 ms; concurrency 64;
    # output 326,653 tokens / 640 requests = 510.40
    (p,) = points("aiperf_profile_export.json", accelerator="h200-sxm", accelerators=4, precision="bf16")
    close(p, output_tokens_per_s_per_user=1000 / 26.1523, output_tokens_per_s_per_accelerator=2332.965 / 4,
          time_to_first_token_s=0.22127, concurrency=64, input_tokens=1024, output_tokens=326653 / 640)
    # records (before 2025-10): 56.18 (= 1000 / 17.8014); 861.889 / 4 = 215.47; 126.09 ms; 16; 81,920 / 160 = 512
    (q,) = points("aiperf_profile_export_records_legacy.json", accelerator="h200-sxm", accelerators=4,
                  precision="bf16")
    close(q, output_tokens_per_s_per_user=1000 / 17.8014, output_tokens_per_s_per_accelerator=861.889 / 4,
          time_to_first_token_s=0.12609, concurrency=16, input_tokens=1024, output_tokens=512)
    assert p["model"] == q["model"] == "qwen3-32b"


def test_guidellm_reports() -> None:
    # 0.5: streams 1 / 8 / 32; per user 1000 / median inter-token latency (6.5502, 8.0894, 12.908 ms; the TPOT field
    # counts the first token and would read low); mean output tokens/s on one GPU; median TTFT; 512 / 256
    got = points("guidellm_benchmarks.json", accelerator="h100-sxm", accelerators=1, precision="bf16")
    want = ((1, 6.5502, 151.34, 0.018157), (8, 8.0894, 972.14, 0.032047), (32, 12.908, 2406.1, 0.075106))
    for p, (streams, itl, out, ttft) in zip(got, want, strict=True):
        close(p, concurrency=streams, output_tokens_per_s_per_user=1000 / itl, output_tokens_per_s_per_accelerator=out,
              time_to_first_token_s=ttft, input_tokens=512, output_tokens=256)
    # 0.3, synchronous (concurrency 1): Qwen2.5-7B is no catalog model, so the file is refused naming the alias to add
    with pytest.raises(BenchmarkError, match=r"Qwen/Qwen2\.5-7B-Instruct .*give --model ID, or add"):
        points("guidellm_benchmarks_v03.json", accelerator="h100-sxm", accelerators=1, precision="bf16")
    (q,) = points("guidellm_benchmarks_v03.json", accelerator="h100-sxm", accelerators=1, precision="bf16",
                  model="llama-3.1-8b")
    close(q, output_tokens_per_s_per_user=1000 / 6.4631, output_tokens_per_s_per_accelerator=152.33,
          time_to_first_token_s=0.017641, concurrency=1, input_tokens=256, output_tokens=128)


def test_inferencex_rows_count_every_gpu_of_a_disaggregated_deployment() -> None:
    # the rows say the hardware, GPUs, precision and model: no flag needed
    got = points("inferencex_rows.json")
    assert [p["accelerator"] for p in got] == ["b200", "b200", "b200", "gb200-nvl72"]
    close(got[0], output_tokens_per_s_per_user=64.433, output_tokens_per_s_per_accelerator=126.889,
          accelerator_count=8, concurrency=16, input_tokens=1024, output_tokens=1024)
    assert got[2]["speculative_decoding"] == "mtp" and got[2]["curve_id"] != got[0]["curve_id"]
    # disaggregated: output_tput_per_gpu 2,100.29 is per decode GPU; over the 8 prefill + 8 decode GPUs
    # 2,100.29 x 8 / 16 = 1,050.15 output tokens/s per GPU
    close(got[3], output_tokens_per_s_per_accelerator=2100.29 * 8 / 16, accelerator_count=16, concurrency=512,
          time_to_first_token_s=2.21, input_tokens=8192, output_tokens=1024)
    assert got[3]["disaggregated"] == "yes" and (got[3]["prefill_accelerators"], got[3]["decode_accelerators"]) == (
        "8", "8") and "x 8 decode / 16 GPUs" in got[3]["token_basis"]
    # the benchmark repository's own artifact holds the same two configurations
    raw = points("inferencex_agg_bmk.json")
    close(raw[1], output_tokens_per_s_per_accelerator=2100.29 * 8 / 16, accelerator_count=16)


def test_inferencex_rows_that_contradict_their_gpu_counts_are_refused_or_named() -> None:
    rows = json.loads((FIX / "inferencex_rows.json").read_text())
    bad = {**rows[3], "num_prefill_gpu": 24, "num_decode_gpu": 8}  # counts that do not fit the throughputs
    data = json.dumps([rows[0], bad]).encode()
    with pytest.raises(BenchmarkError, match=r"row 2: tput_per_gpu x \(P \+ D\) = .* do not match"):
        import_benchmark([("ix.json", data)])
    skipped: list[str] = []
    table = import_benchmark([("ix.json", data)], skipped=skipped)
    assert len(table) == 1 and len(skipped) == 1 and "ix.json: row 2" in skipped[0]


def test_mlperf_summaries_and_the_results_table() -> None:
    flags = {"model": "llama-2-70b", "accelerator": "h200-sxm", "accelerators": 8, "precision": "fp8",
             "input_tokens": 300}
    # Server log: per user 1e9 / median TPOT 139,876,543 ns = 7.149; 27,612.66 tokens/s / 8 = 3,451.58; TTFT p50
    # 0.6554 s; 27,612.66 / 94.37 samples/s = 292.6 output tokens per sample
    (p,) = points("mlperf_log_summary.txt", **flags)
    close(p, output_tokens_per_s_per_user=1e9 / 139876543, output_tokens_per_s_per_accelerator=27612.66 / 8,
          time_to_first_token_s=0.6554321, output_tokens=27612.66 / 94.37, input_tokens=300)
    # Offline: no per-user speed; 27,961.4 / 8 = 3,495.18; 27,961.4 / 95.6012 = 292.48
    (o,) = points("mlperf_log_summary_offline.txt", **flags)
    assert o["point_kind"] == "offline" and o["output_tokens_per_s_per_user"] is None
    close(o, output_tokens_per_s_per_accelerator=27961.4 / 8, output_tokens=27961.4 / 95.6012)
    # the table: the Watts row is not a run; Server and Interactive at their p99 TPOT bounds (200 and 40 ms);
    # accelerators = nodes x per node (2 x 8 for the DeepSeek-R1 row); output per sample from TOKENS_PER_SAMPLE
    rows = points("mlperf_results_summary.csv", input_tokens=300)
    assert [r["point_kind"] for r in rows] == ["offline", "constraint", "constraint", "offline"]
    close(rows[0], output_tokens_per_s_per_accelerator=27961.4 / 8, output_tokens=292.5)
    close(rows[1], output_tokens_per_s_per_accelerator=27612.66 / 8, output_tokens_per_s_per_user=5.0)
    close(rows[2], output_tokens_per_s_per_accelerator=20125.3 / 8, output_tokens_per_s_per_user=25.0)
    close(rows[3], output_tokens_per_s_per_accelerator=61234.8 / 16, accelerator_count=16, output_tokens=3629.7)
    assert [(r["accelerator"], r["model"], r["precision"]) for r in rows] == [
        ("h200-sxm", "llama-2-70b", "fp8")] * 3 + [("b200", "deepseek-v3", "fp4")]


# --- what a file lacks ------------------------------------------------------------------------------------------

def test_a_file_without_the_hardware_is_refused_naming_every_flag() -> None:
    with pytest.raises(BenchmarkError) as err:
        points("vllm_serve.json")
    message = str(err.value)
    assert message.startswith("vllm_serve.json, run 1: ")
    for flag in ("--accelerator ID", "--accelerators N", "--precision"):
        assert flag in message
    with pytest.raises(BenchmarkError, match="--accelerator h200-sxm: the file says the run was on b200"):
        points("inferencex_rows.json", accelerator="h200-sxm")
    with pytest.raises(BenchmarkError, match="--input-tokens N"):
        points("mlperf_log_summary.txt", model="llama-2-70b", accelerator="h200-sxm", accelerators=8, precision="fp8")
    with pytest.raises(BenchmarkError, match="unknown id 'h999'"):
        points("vllm_serve.json", accelerator="h999", accelerators=8, precision="fp8")


def test_the_command_refuses_with_exit_2_and_writes_a_curve_file(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "economics", "import-benchmark", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    bad = run(str(FIX / "vllm_serve.json"))
    assert bad.returncode == 2 and "--accelerators N" in bad.stderr and "Traceback" not in bad.stderr
    out = tmp_path / "curves.csv"
    ok = run(str(FIX / "sglang_bench_serving.jsonl"), "--accelerator", "h200-sxm", "--accelerators", "8",
             "--precision", "fp8", "-o", str(out))
    assert ok.returncode == 0 and "3 points in 1 curve" in ok.stderr
    assert user_curves.read_curve_file(out.read_bytes(), "curves.csv").table["accelerator"].tolist() == ["h200-sxm"] * 3


# --- a curve file -----------------------------------------------------------------------------------------------

RUNS = st.lists(st.tuples(st.integers(1, 4096), st.integers(10, 5000).map(lambda t: t / 10), st.floats(1.0, 1e5),
                          st.floats(0.01, 30.0), st.integers(1, 64), st.integers(16, 32_768), st.integers(1, 16_384)),
                min_size=1, max_size=6, unique_by=lambda r: r[1])
"""Runs of a serving benchmark: concurrency, median TPOT [ms] (distinct: one point per speed), output tokens/s,
TTFT [s], completed requests, input and output tokens per request."""


@settings(max_examples=60, deadline=None, derandomize=True)
@given(RUNS)
def test_import_export_import_is_identity(runs: list[tuple[int, float, float, float, int, int, int]]) -> None:
    lines = []
    for conc, tpot_ms, out_tps, ttft_s, completed, isl, osl in runs:
        lines.append(json.dumps({"backend": "sglang", "dataset_name": "random", "max_concurrency": conc,
                                 "completed": completed, "total_input_tokens": isl * completed,
                                 "total_output_tokens": osl * completed, "output_throughput": out_tps,
                                 "median_tpot_ms": tpot_ms, "median_ttft_ms": ttft_s * 1000,
                                 "server_info": {"model_path": "deepseek-ai/DeepSeek-R1", "tp_size": 8}}))
    data = ("\n".join(lines) + "\n").encode()
    first = import_benchmark([("runs.jsonl", data)], accelerator="b200", accelerators=8, precision="fp8")
    text = curves_csv(first)
    again = import_benchmark([("curves.csv", text.encode())])  # a curve file imports to itself
    pd.testing.assert_frame_equal(first, again)
    assert curves_csv(again) == text
    # and its numbers are the runs' own: per user 1000 / TPOT, per accelerator output / 8, to 6 digits
    for row, (_, tpot_ms, out_tps, *_rest) in zip(first.to_dict("records"), runs, strict=False):
        assert float(row["output_tokens_per_s_per_user"]) == pytest.approx(1000 / tpot_ms, rel=1e-5)
        assert float(row["output_tokens_per_s_per_accelerator"]) == pytest.approx(out_tps / 8, rel=1e-5)


def test_a_bad_curve_file_names_row_field_and_value() -> None:
    good = (FIX / "vllm_serve.json")
    table = import_benchmark([good], accelerator="h100-sxm", accelerators=8, precision="fp8")
    text = curves_csv(table).replace(",fp8,", ",fp9,").replace(",h100-sxm,", ",h100-sxn,", 1)
    with pytest.raises(user_curves.CurveFileError) as err:
        user_curves.read_curve_file(text.encode(), "mine.csv")
    msg = str(err.value)
    assert "mine.csv: row 1: accelerator: unknown id 'h100-sxn'; did you mean 'h100-sxm'?" in msg
    assert "precision: fp9 is not one of bf16, fp8, fp4" in msg
    with pytest.raises(user_curves.CurveFileError, match="row 1: output_tokens_per_s_per_user: 1e999 is not a finite"):
        user_curves.read_curve_file(curves_csv(table).replace(",48.3562,", ",1e999,").encode())
    with pytest.raises(user_curves.CurveFileError, match="unknown columns colour"):
        user_curves.read_curve_file(b"colour,accelerator\nred,h100-sxm\n")


# --- used for its own configuration ------------------------------------------------------------------------------

MINE = {"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "accelerator_count": 8,
        "ownership": "rent", "input_tokens_per_request": 1024, "output_tokens_per_request": 1024}


@pytest.fixture(scope="module")
def mine() -> user_curves.CurveFile:
    table = import_benchmark([FIX / "sglang_bench_serving.jsonl"], accelerator="h200-sxm", accelerators=8,
                             precision="fp8")
    return economics.load_curves(curves_csv(table).encode(), "mine.csv")


def test_a_users_curve_outranks_the_catalog_for_its_configuration(mine: user_curves.CurveFile) -> None:
    # at its own measured point (60.6654 tokens/s per user: 939.218 / 8 = 117.40 per GPU), whatever the catalog says
    out = economics.evaluate_scenario({**MINE, "curves_sha256": mine.sha256,
                                       "target_output_tokens_per_s_per_user": 1000 / 16.4839})
    assert out["throughput_source"] == "your measured curve"
    assert out["throughput_curve"].startswith(f"{mine.label} sglang-h200-sxm")  # its name as held in this process
    assert out["output_tokens_per_s_per_accelerator"] == pytest.approx(939.218 / 8, rel=1e-5)
    catalog_figure = economics.evaluate_scenario({**MINE, "target_output_tokens_per_s_per_user": 1000 / 16.4839})
    assert catalog_figure["output_tokens_per_s_per_accelerator"] != pytest.approx(939.218 / 8, rel=1e-3)
    # no target: the point of most throughput measured (2,022.151 / 8 = 252.77 at 33.63 tokens/s per user)
    most = economics.evaluate_scenario({**MINE, "curves_sha256": mine.sha256})
    assert most["output_tokens_per_s_per_accelerator"] == pytest.approx(2022.151 / 8, rel=1e-5)
    assert most["output_tokens_per_s_per_user"] == pytest.approx(1000 / 29.7314, rel=1e-5)
    # another accelerator: the file has no curve for it; the catalog answers and the note says why
    other = economics.evaluate_scenario({**MINE, "accelerator": "b200", "curves_sha256": mine.sha256,
                                         "target_output_tokens_per_s_per_user": 42.0})
    assert other["throughput_source"] != "your measured curve"
    assert f"your curve file {mine.name}" in other["throughput_note"] and "no curve for this accelerator" in (
        other["throughput_note"])


def test_the_same_bytes_loaded_again_under_another_name_are_the_file_held_and_named_so(
        mine: user_curves.CurveFile) -> None:
    # bytes of their own (a note edited), so no other test of this process has loaded them under any name
    edited = mine.table.assign(note="loaded under two names by this test")
    data = curves_csv(edited).encode()
    sha = user_curves.sha256_of(data)
    assert sha != mine.sha256
    scenario = {**MINE, "curves_sha256": sha, "target_output_tokens_per_s_per_user": 1000 / 16.4839}
    assert measured.user_curves(sha) == ()  # not loaded yet: nothing, and that is not remembered
    first = economics.load_curves(data, "first.csv")
    assert economics.evaluate_scenario(scenario)["throughput_curve"].startswith(f"first.csv (sha256 {sha[:12]}) ")
    again = economics.load_curves(data, "again.csv")
    assert again == first and again.name == "first.csv" and again.label == first.label
    # what the results remembered per file say is what the file held is named
    assert economics.evaluate_scenario(scenario)["throughput_curve"].startswith(f"{again.label} ")


def test_a_scenario_naming_a_file_not_loaded_says_which_file_it_needs() -> None:
    with pytest.raises(economics.ScenarioError, match=r"curves_sha256: .*SHA-256 abababababab… that is not loaded; "
                                                      r"pass it with --curves FILE"):
        economics.evaluate_scenario({**MINE, "curves_sha256": "ab" * 32})
    out = economics.evaluate(pd.DataFrame([{**MINE, "curves_sha256": "xyz"}]))
    assert not out["valid"][0] and "is not a SHA-256" in out["error"][0]


def test_evaluate_with_curves_on_the_command_line(mine: user_curves.CurveFile, tmp_path: Path) -> None:
    scenarios = tmp_path / "s.csv"
    pd.DataFrame([{**MINE, "target_output_tokens_per_s_per_user": 1000 / 16.4839}]).to_csv(scenarios, index=False)
    curves = tmp_path / "mine.csv"
    curves.write_text(curves_csv(mine.table))
    run = subprocess.run([sys.executable, "-m", "economics", "evaluate", str(scenarios), "--curves", str(curves),
                          "--format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(run.stdout)
    assert row["throughput_source"] == "your measured curve" and row["curves_sha256"] == mine.sha256
    assert row["output_tokens_per_s_per_accelerator"] == pytest.approx(939.218 / 8, rel=1e-5)
    explain = subprocess.run([sys.executable, "-m", "economics", "explain", str(scenarios), "--row", "1", "--curves",
                              str(curves)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert explain.returncode == 0 and "curve mine.csv (sha256" in explain.stdout
    missing = subprocess.run([sys.executable, "-m", "economics", "evaluate", str(scenarios), "--curves",
                              str(tmp_path / "nope.csv")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "--curves: cannot read" in missing.stderr and "No such file" in missing.stderr


def test_a_claim_is_used_for_its_own_configuration_and_looked_up_again_otherwise() -> None:
    claim = {"accelerator": "h100-sxm", "model": "llama-2-70b", "precision": "fp8", "accelerator_count": 8,
             "output_tokens_per_request": 290, "input_tokens_per_request": 300,
             "throughput_claim": "mlperf41-h100x8-llama2-70b-server"}
    out = economics.evaluate_scenario(claim)
    # MLPerf Inference v4.1, 8 x H100 Server: 2,700.72 output tokens/s per GPU (data/throughput_claims.csv)
    assert (out["throughput_source"], out["output_tokens_per_s_per_accelerator"]) == ("measured claim", 2700.72)
    assert out["throughput_curve"] == "mlperf41-h100x8-llama2-70b-server"
    for change in ({"accelerator": "b200"}, {"model": "llama-3.1-70b"}, {"output_tokens_per_request": 2000}):
        other = economics.evaluate_scenario({**claim, **change})
        assert other["throughput_source"] != "measured claim" and other["output_tokens_per_s_per_accelerator"] != (
            2700.72)
        assert "claim mlperf41-h100x8-llama2-70b-server" in other["throughput_note"] and "looked up again" in (
            other["throughput_note"])
    with pytest.raises(economics.ScenarioError, match="throughput_claim: unknown id 'sn40l-llama31-8b-aa'"):
        economics.evaluate_scenario({**claim, "throughput_claim": "sn40l-llama31-8b-aa"})  # a per-user speed


def test_a_measured_figure_that_includes_prefill_is_split_by_the_estimated_prefill_time() -> None:
    # the default: NIM 1.8 on H100, 5,000 in / 500 out at 20 tokens/s per user. Input share of device time =
    # (5,000 / P) / (500 / D), P the roofline's prefill rate per GPU, D the measured curve's output per GPU
    out = economics.evaluate_scenario(economics.default_scenario())
    p, d = out["estimated_prefill_tokens_per_s_per_accelerator"], out["output_tokens_per_s_per_accelerator"]
    share = (5000 / p) / (500 / d)
    assert 0 < share < 1 and out["input_time_share"] == pytest.approx(share, rel=1e-12)
    assert out["cost_usd_per_m_input_tokens"] == pytest.approx(
        out["cost_usd_per_day"] * share / out["served_input_tokens_per_day"] * 1e6, rel=1e-12)
    assert out["cost_usd_per_m_output_tokens"] == pytest.approx(
        out["cost_usd_per_day"] * (1 - share) / out["served_output_tokens_per_day"] * 1e6, rel=1e-12)
    # a figure measured on shorter prompts: the estimated prefill alone exceeds the measured request, no split
    short = economics.evaluate_scenario({"accelerator": "h100-sxm", "model": "llama-2-70b", "precision": "fp8",
                                         "accelerator_count": 8, "output_tokens_per_request": 290,
                                         "input_tokens_per_request": 4000,
                                         "throughput_claim": "mlperf41-h100x8-llama2-70b-server"})
    assert short["cost_usd_per_m_input_tokens"] is None and "no input/output split" in short["throughput_note"]


def test_flags_are_typed_once() -> None:
    assert benchmarks.Flags().accelerators is None and set(benchmarks.FORMATS) >= {"vllm", "inferencex", "curves"}


def test_plan_and_a_dask_sweep_use_the_curve_file(mine: user_curves.CurveFile) -> None:
    from economics.io import plan_files
    from economics.studies import sweep

    # the planner's H200 candidate runs at the curve's point: 939.218 / 8 = 117.40 per GPU, 939.218 per 8-GPU system
    row = "name,accelerator,model,precision,input_tokens_per_request,output_tokens_per_request," \
          "target_output_tokens_per_s_per_user,demand_output_tokens_per_day,ownership\n" \
          f"r,h200-sxm,deepseek-v3,fp8,1024,1024,{1000 / 16.4839},1000000000,rent\n"
    out = plan_files.plan_from_files(row.encode(), "r", accelerators=["h200-sxm"], curves_sha256=mine.sha256)
    rates = {c["name"]: c["output_tokens_per_s_per_system"] for c in out["candidates"]}
    assert rates["h200-sxm rent"] == pytest.approx(939.218, rel=1e-5)
    # a sweep on worker processes loads the same file under the same hash, and equals the sweep in this process
    base = {**MINE, "curves_sha256": mine.sha256, "target_output_tokens_per_s_per_user": 1000 / 16.4839}
    s = sweep.make_sweep(base, {"rent_usd_per_accelerator_hour": "2,3,4"}, {}, 0, partition_rows=2)
    assert s.curves == ((mine.name, mine.data),)
    local, dask = sweep.run_local(s, k=3), sweep.run_dask(s, k=3, workers=1)
    assert dask.feasible == local.feasible == 3 and dask.quantiles.equals(local.quantiles)
