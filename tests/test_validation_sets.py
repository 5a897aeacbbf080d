"""The validation-set add scripts (tools/add_validation_set_4.py to _10.py and their shared tools/validation_sets.py):
re-run in order they give data/ byte for byte, a set is never appended twice, and the seventh to tenth sets' rows
read the published figures as their reading rules say (golden values worked by hand)."""

from __future__ import annotations

import csv
import importlib
import shutil
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from economics.studies import leave_out

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
FILES = ("throughput_curves.csv", "serving_stacks.csv")
FIRST = {"throughput_curves.csv": ("holdout_group", "trtllm-0.5-h200-blog"),
         "serving_stacks.csv": ("stack_id", "trtllm-0.5.0-tp1")}
"""The first record the fourth set appended to each file: the fourth to tenth sets are the files' last records."""


def _script(n: int, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    return importlib.import_module(f"add_validation_set_{n}")


def _before_the_fourth_set(tmp: Path) -> None:
    """Copy the two files data/ the scripts append to into ``tmp``, cut before the fourth set's first record."""
    for name in FILES:
        lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
        column, value = FIRST[name]
        k = next(csv.reader(lines[:1])).index(column)
        cut = next(i for i, line in enumerate(lines) if i and (next(csv.reader([line])) + [""] * k)[k] == value)
        (tmp / name).write_text("".join(lines[:cut]), encoding="utf-8")


def test_re_running_the_add_scripts_in_order_gives_data_byte_for_byte(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _before_the_fourth_set(tmp_path)
    for n in (4, 5, 6, 7, 8, 9, 10):
        _script(n, monkeypatch).main(tmp_path)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_a_set_already_in_data_is_refused_and_nothing_is_written(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in FILES:
        shutil.copy(DATA / name, tmp_path / name)
    with pytest.raises(SystemExit, match="the seventh validation set is already in data/throughput_curves.csv"):
        _script(7, monkeypatch).main(tmp_path)
    with pytest.raises(SystemExit, match="the eighth validation set is already in data/throughput_curves.csv"):
        _script(8, monkeypatch).main(tmp_path)
    with pytest.raises(SystemExit, match="the ninth validation set is already in data/throughput_curves.csv"):
        _script(9, monkeypatch).main(tmp_path)
    with pytest.raises(SystemExit, match="the tenth validation set is already in data/throughput_curves.csv"):
        _script(10, monkeypatch).main(tmp_path)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_the_seventh_sets_rows_read_the_published_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = {str(r["curve_id"]): r for r in _script(7, monkeypatch).rows()}
    # LMDeploy's request-throughput row for llama2-70b (TP 4): 7.231 RPS, 1682.738 out tok/s, 3467.969 total tok/s;
    # output 1682.738 / 7.231 = 232.71, input (3467.969 - 1682.738) / 7.231 = 246.89, per GPU 1682.738 / 4 = 420.6845
    r = rows["set7-lmdeploy-0.2-a100-a100-sxm-llama-2-70b-bf16-tp4-247-233-r2"]
    assert (r["input_tokens"], r["output_tokens"], float(str(r["output_tokens_per_s_per_accelerator"]))) == (
        "246.89", "232.71", pytest.approx(420.6845, abs=1e-3))
    assert (r["concurrency"], r["model"], r["precision"]) == ("256", "llama-2-70b", "bf16")
    # dstack's offline SGLang run on 8 H200 with 512 prompts: 409,600 output tokens in 324.5106853 s,
    # 409600 / 324.5106853 = 1262.208 tokens/s, / 8 = 157.776 per GPU; SGLang sets no sequence limit: concurrency 512
    r = next(r for r in rows.values() if str(r["serving_stack"]) == "sglang-0.4.3.post2-tp8"
             and r["concurrency"] == "512" and r["output_tokens"] == "800")
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(157.776, abs=1e-3)
    # the same run on vLLM with 1024 prompts is read at vLLM's default limit of 256 sequences
    assert any(str(r["serving_stack"]) == "vllm-0.7.4.dev181-tp8" and r["concurrency"] == "256"
               and "--num-prompts 1024" in str(r["note"]) for r in rows.values())
    # NVIDIA's Llama-70B on one H200, 128 in / 2048 out at batch 192: 2,941 tokens/s per GPU
    r = rows["set7-trtllm-blog-falcon-h200-h200-sxm-llama-2-70b-fp8-tp1-128-2048-r132"]
    assert (r["output_tokens_per_s_per_accelerator"], r["concurrency"]) == ("2941", "192")


def test_the_rows_the_catalog_cannot_hold_are_printed_as_refused_not_dropped(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = _script(7, monkeypatch)
    # two of the transcription's 139 rows run MTP with 3 draft layers and no stated acceptance (B200, H200)
    assert [(t["accelerator"], t["draft_tokens"]) for t, _ in script.refused()] == [("b200", "3"), ("h200-sxm", "3")]
    assert len(script.rows()) == 139 - 2
    _before_the_fourth_set(tmp_path)
    for n in (4, 5, 6):
        _script(n, monkeypatch).main(tmp_path)
    capsys.readouterr()
    script.main(tmp_path)
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out[:2]] == [
        "not appended (trtllm_blog_dsr1_best_perf, b200 deepseek-v3 fp4)",
        "not appended (trtllm_blog_dsr1_best_perf, h200-sxm deepseek-v3 fp8)"]
    assert out[2] == "appended 137 points and 12 serving stacks"


def test_holdout_lists_the_refused_validation_points_per_set_with_their_reason() -> None:
    # hand-made: one estimated point of the seventh set; three refused (two of one source for one reason, one of
    # another source for another), one refused of the sixth set
    table = pd.DataFrame({"source_group": ["lmdeploy-0.2-a100"], "family": ["nvidia-ampere"], "error_pct": [5.0],
                          "inside": [True]})
    refused = pd.DataFrame({"source_group": ["dstack-r1-online", "dstack-r1-online", "dstack-r1-offline",
                                             "vllm-pr-7117-h100"],
                            "reason": ["no: serving stack with expert parallelism", "no: serving stack with expert "
                                       "parallelism", leave_out.NO_ESTIMATE, leave_out.ARRIVAL_LIMITED]})
    text = leave_out.validation_text(table, refused)
    tail = text[text.index("refused: validation points the catalog does not estimate"):].splitlines()
    assert tail[1:] == [
        "  sixth set (after the ranges as the spread across sources): 1 points",
        "       1  arrival-limited (Poisson load below saturation): its throughput is not compared "
        "(vllm-pr-7117-h100 1)",
        "  seventh set (published tables, selection rule first): 3 points",
        "       1  no estimate (the roofline gave no throughput for the row's replica, model and lengths) "
        "(dstack-r1-offline 1)",
        "       2  serving stack with expert parallelism (dstack-r1-online 2)"]
    assert "refused" not in leave_out.validation_text(table)  # nothing refused, nothing printed


ONE_FORMAT = {"weight_precision": "", "kv_cache_precision": ""}
"""The cells of a row whose weights and KV cache are in its ``precision`` (the compute's format)."""


def _row(rows: list[dict[str, object]], group: str, accelerator: str, model: str, **cells: str) -> dict[str, object]:
    """The one row of a set of ``group`` on ``accelerator`` with ``model`` and the given cells."""
    found = [r for r in rows if (r["holdout_group"], r["accelerator"], r["model"]) == (group, accelerator, model)
             and all(str(r[k]) == v for k, v in cells.items())]
    assert len(found) == 1, found
    return found[0]


def test_the_eighth_sets_rows_read_the_published_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _script(8, monkeypatch).rows()
    # Azure's ND H100 v5 page, LLAMA 3 (70B), world size 8, 128 in / 8 out, batch 64: 1077.84 tokens/s, TensorRT-LLM's
    # tokens_per_sec = batch x output length / latency for the 8 GPUs; per GPU 1077.84 / 8 = 134.73
    r = _row(rows, "azure-aibg-h100", "h100-sxm", "llama-3.1-70b", concurrency="64")
    assert (r["input_tokens"], r["output_tokens"], r["precision"], r["tensor_parallel"]) == ("128", "8", "bf16", 8)
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(134.73, abs=1e-9)
    # its ND H200 v5 page, LLAMA 3 (405B), batch 96: 333.47 / 8 = 41.68375, held as the FP8 checkpoint of the config
    r = _row(rows, "azure-aibg-h200", "h200-sxm", "llama-3.1-405b", concurrency="96")
    assert r["precision"] == "fp8"
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(41.68375, abs=1e-3)
    # ND A100 v4, Mistral (7B) 'datatype float16' on one GPU, batch 64: 858.61, read as bf16
    r = _row(rows, "azure-aibg-a100", "a100-sxm", "mistral-7b")
    assert (r["output_tokens_per_s_per_accelerator"], r["precision"], r["concurrency"]) == ("858.61", "bf16", "64")
    # QServe's A100 table, TRT-LLM-FP16 on Llama-3-8B, 1024 in / 512 out on one GPU: 2503 tokens/s, batch not stated
    r = _row(rows, "qserve-paper-efficiency", "a100-sxm", "llama-3.1-8b")
    assert (r["output_tokens_per_s_per_accelerator"], r["concurrency"], r["input_tokens"]) == ("2503", "", "1024")
    # the vLLM blog's Table 4, BF16 KV cache on one H100 at concurrency 8, ~20k in / ~2k out: 450.3 output tok/s
    r = _row(rows, "vllm-blog-fp8-kvcache", "h100-sxm", "llama-3.1-8b")
    assert (r["output_tokens_per_s_per_accelerator"], r["concurrency"], r["input_tokens"], r["output_tokens"]) == (
        "450.3", "8", "20000", "2000")
    # the LMSYS table, gpt-oss-120b at batch 1: B200 MXFP4 (TP 4) 416.02 / 4 = 104.005, B200 BF16 315.63 / 4 =
    # 78.9075, H100 BF16 (TP 8) 293.12 / 8 = 36.64
    per_gpu = {(str(r["accelerator"]), str(r["precision"])): float(str(r["output_tokens_per_s_per_accelerator"]))
               for r in rows if r["holdout_group"] == "lmsys-blog-sglang-gpt-oss"}
    assert per_gpu == pytest.approx({("b200", "fp4"): 104.005, ("b200", "bf16"): 78.9075, ("h100-sxm", "bf16"): 36.64})
    assert {str(r["source_date"]) for r in rows} == {"2026-12-06"}


def test_the_eighth_sets_rows_in_a_format_the_scenario_cannot_hold_are_printed_as_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = _script(8, monkeypatch)
    # 59 rows: 27 in one precision; QServe's 27 quantized figures (W4A16 8, W8A8 7 with one OOM cell, W4A4 4,
    # W4A8KV4 8), the vLLM blog's FP8 KV cache and gpt-oss MXFP4-on-H100 rows (4) and the LMSYS MXFP4 run on H100 (1)
    # in formats apart. Integer compute and a 4-bit KV cache are not the scenario's: 7 + 4 + 8 = 19 refused
    formats = [t["precision"] for t, _ in script.refused()]
    assert {f: formats.count(f) for f in set(formats)} == {"w8a8": 7, "w4a4": 4, "w4a8kv4": 8}
    assert len(script.rows()) == 27 and len(script.rows(formats=True)) == 59 - 27 - 19
    why = {t["precision"]: w for t, w in script.refused()}
    # the reason is the scenario's own parser's, naming the field and the value
    assert why["w8a8"].startswith("compute_precision: 'int8' is not one of bf16, fp8, fp4 (the scenario's fields")
    assert why["w4a4"].startswith("compute_precision: 'int4' is not one of bf16, fp8, fp4")
    assert why["w4a8kv4"].startswith("compute_precision: 'int8' is not one of bf16, fp8, fp4; kv_cache_precision: "
                                     "'int4' is not one of bf16, fp8, fp4")
    _before_the_fourth_set(tmp_path)
    for n in (4, 5, 6, 7):
        _script(n, monkeypatch).main(tmp_path)
    capsys.readouterr()
    script.main(tmp_path)
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("not appended (") for line in out) == 19
    assert out[19:] == ["appended 27 points and 6 serving stacks", "appended 13 points and 0 serving stacks"]


def test_the_ninth_sets_rows_read_the_published_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _script(9, monkeypatch).rows()
    # each lookup among the rows in one format: weights and KV cache in the precision (the compute's)
    group = "nvidia-modelopt-benchmark-h200"
    # Model Optimizer's H200 table, Llama3.1-70B BF16 on TP 2 at batch size 64, 2048 in / 128 out: 401.50 Tokens/sec
    # for the 2 GPUs ('Speedup is normalized to the GPU count'), per GPU 401.50 / 2 = 200.75
    r = _row(rows, group, "h200-sxm", "llama-3.1-70b", precision="bf16", concurrency="64", **ONE_FORMAT)
    assert (r["input_tokens"], r["output_tokens"], r["tensor_parallel"], r["accelerator_count"]) == ("2048", "128", 2,
                                                                                                    "2")
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(200.75, abs=1e-9)
    # its FP8 column on one GPU at batch 8: 1,051.17 / 1; the speedup it prints checks the reading: FP8 70B at batch
    # 1, 43.46 on one GPU, against BF16's 45.81 / 2 = 22.905 per GPU: 43.46 / 22.905 = 1.897, published 1.90x
    r = _row(rows, group, "h200-sxm", "llama-3.1-8b", precision="fp8", concurrency="8", **ONE_FORMAT)
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(1051.17, abs=1e-9)
    bf16 = _row(rows, group, "h200-sxm", "llama-3.1-70b", precision="bf16", concurrency="1", **ONE_FORMAT)
    fp8 = _row(rows, group, "h200-sxm", "llama-3.1-70b", precision="fp8", concurrency="1", **ONE_FORMAT)
    speedup = float(str(fp8["output_tokens_per_s_per_accelerator"])) / float(
        str(bf16["output_tokens_per_s_per_accelerator"]))
    assert round(speedup, 2) == 1.90
    # AWS Neuron's 405B tutorial, base row: 25.46 output tokens/s on one trn2.48xlarge = 16 Trainium2 chips (TP 64
    # logical NeuronCores at LNC=2), 25.46 / 16 = 1.59125 per chip, 10,000 in / 1,500 out at concurrency 1
    r = _row(rows, "aws-neuron-trn2-405b-tutorial", "trainium2", "llama-3.1-405b", **ONE_FORMAT)
    assert (r["output_tokens_per_s_per_accelerator"], r["concurrency"], r["input_tokens"], r["output_tokens"]) == (
        "1.59125", "1", "10000", "1500")
    # DataCrunch's first offline line, Llama 3.3 70B on 4 H200: 1,525,074 input and 1,544,818 output tokens over 3,000
    # requests = 508.358 and 514.939 a request; output_throughput 4520.698730654741 / 4 = 1130.1746826636853
    r = _row(rows, "datacrunch-h200-sglang-offline", "h200-sxm", "llama-3.1-70b", input_tokens="508.36", **ONE_FORMAT)
    assert (r["output_tokens"], r["concurrency"], r["tensor_parallel"]) == ("514.94", "", 4)
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(1130.1746826636853, rel=1e-12)
    # gpt-fast, Llama-2-70B bf16 on 4 A100 at batch 1 with a 5-token prompt: 38.01 tokens/s, 38.01 / 4 = 9.5025
    r = _row(rows, "pytorch-gpt-fast-readme", "a100-sxm", "llama-2-70b", tensor_parallel="4", **ONE_FORMAT)
    assert (r["output_tokens_per_s_per_accelerator"], r["input_tokens"], r["output_tokens"]) == ("9.5025", "5", "200")
    # Chitu, Qwen3-32B on one H20 at batch 64, 128 in / 1,024 out: 1333.49 output tokens/s
    r = _row(rows, "chitu-performance-h20", "h20", "qwen3-32b", concurrency="64", **ONE_FORMAT)
    assert r["output_tokens_per_s_per_accelerator"] == "1333.49"
    # Qwen's speed counts prompt and generated tokens: Qwen3-235B-A22B BF16 under SGLang on 8 H20, 6,144 in and 2,048
    # generated at batch 1: 289.03 x 2048 / (6144 + 2048) = 72.2575 output tokens/s, / 8 = 9.0321875, to 4 places
    r = _row(rows, "qwen-speed-benchmark-h20", "h20", "qwen3-235b-a22b", input_tokens="6144", **ONE_FORMAT)
    assert (r["output_tokens_per_s_per_accelerator"], r["tensor_parallel"], r["output_tokens"]) == ("9.0322", 8, "2048")
    assert {str(r["source_date"]) for r in rows} == {"2026-12-06"}
    assert {str(r["precision"]) for r in rows} == {"bf16", "fp8"}


def test_the_ninth_sets_split_format_rows_are_held_in_the_curves_format_columns(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = _script(9, monkeypatch)
    # 150 rows, 90 with formats that differ (weights / compute / KV cache): FP8 checkpoints with a KV cache the page
    # does not state (BF16: Chitu's DeepSeek 15, Qwen's 26), 4-bit weight-only (gpt-fast 3, Qwen's AWQ 10 and GPTQ 12),
    # Model Optimizer's AWQ columns (6 + 6), gpt-fast's int8 weight-only (3), Chitu's FP4 weights (4 + 4) and the
    # Neuron speculative row (FP8 weights, BF16 compute, a draft model with no acceptance). The curves hold 81 of
    # them; H20 runs no fp4 weights (data/accelerators.csv's pairs) and the Neuron row fails twice: 8 + 1 refused
    appended = [tuple(str(r[k]) for k in ("precision", "weight_precision", "kv_cache_precision"))
                for r in script.rows()]
    assert {f: appended.count(f) for f in set(appended)} == {
        ("bf16", "", ""): 54, ("fp8", "", ""): 6, ("fp8", "", "bf16"): 41, ("bf16", "int4", ""): 25,
        ("bf16", "int4", "fp8"): 6, ("fp8", "int4", ""): 6, ("bf16", "int8", ""): 3}
    assert {str(r["compute_precision"]) for r in script.rows()} == {""}  # the compute's format is the precision
    refused = [tuple(t[k] for k in ("weight_precision", "compute_precision", "kv_cache_precision"))
               for t, _ in script.refused()]
    assert {f: refused.count(f) for f in set(refused)} == {("fp4", "fp8", "bf16"): 4, ("fp4", "bf16", "bf16"): 4,
                                                           ("fp8", "bf16", "bf16"): 1}
    why = [w for _, w in script.refused()]
    assert sum(w.startswith("weight_precision: h20 (accelerator) does not run fp4 weights with") for w in why) == 8
    assert sum("no acceptance" in w and w.startswith("weight_precision: trainium2") for w in why) == 1
    _before_the_fourth_set(tmp_path)
    for n in (4, 5, 6, 7, 8):
        _script(n, monkeypatch).main(tmp_path)
    capsys.readouterr()
    script.main(tmp_path)
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("not appended (") for line in out) == 9
    assert out[9] == "appended 141 points and 17 serving stacks"
    # a weight-only row as the curves hold it: gpt-fast's Llama-2-70B 4-bit (G=32) on 8 A100s, 90.77 tokens/s for
    # the 8 GPUs: 90.77 / 8 = 11.34625 per GPU; int4 weights, bf16 compute and KV cache (precision bf16)
    r = _row(script.rows(), "pytorch-gpt-fast-readme", "a100-sxm", "llama-2-70b", tensor_parallel="8",
             weight_precision="int4")
    assert (r["precision"], r["kv_cache_precision"], r["output_tokens_per_s_per_accelerator"]) == ("bf16", "",
                                                                                                   "11.34625")


def test_the_tenth_sets_rows_read_the_published_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _script(10, monkeypatch).rows()
    # AMD's ATOM DeepSeek-R1 recipe, 8 MI300X at TP 8, FP8 with an FP8 KV cache, ISL / OSL 1024 at concurrency 128:
    # Output Throughput 4,274 tok/s for the 8 GPUs, per GPU 4274 / 8 = 534.25
    r = _row(rows, "amd-atom-recipes", "mi300x", "deepseek-v3", concurrency="128", **ONE_FORMAT)
    assert (r["precision"], r["output_tokens_per_s_per_accelerator"], r["input_tokens"]) == ("fp8", "534.25", "1024")
    # ATOM's Qwen3-235B table counts input and output tokens: TP4 + EP4 at ISL 4000 / OSL 1000, concurrency 128, Total
    # Throughput 19388.74 for 4 GPUs: 19388.74 x 1000 / 5000 = 3877.748 output tokens/s, / 4 = 969.437 per GPU
    r = _row(rows, "amd-atom-recipes", "mi355x", "qwen3-235b-a22b", tensor_parallel="4", concurrency="128",
             input_tokens="4000")
    assert (r["output_tokens_per_s_per_accelerator"], r["expert_parallel"]) == ("969.437", 4)
    # Google's Ironwood recipe publishes per chip: Qwen3-32B FP8 on one TPU7x chip, 8k/1k at concurrency 320: 1382.18
    r = _row(rows, "google-tpu-recipes-ironwood", "tpu7x", "qwen3-32b", input_tokens="8192", **ONE_FORMAT)
    assert (r["output_tokens_per_s_per_accelerator"], r["accelerator_count"], r["precision"]) == ("1382.18", "1",
                                                                                                  "fp8")
    # the SGLang cookbook's Qwen3 page, 8 B200, summarization at concurrency 64: lengths from the result's totals,
    # 1,273,893 input and 169,680 generated tokens over 320 requests = 3980.915625 and 530.25; 1790.43 / 8 = 223.80375
    r = _row(rows, "sglang-cookbook", "b200", "qwen3-235b-a22b", concurrency="64", output_tokens="530.25")
    assert (r["input_tokens"], r["output_tokens_per_s_per_accelerator"]) == ("3980.915625", "223.80375")
    # its DeepSeek-R1 page, FP8 weights with the BF16 KV cache the rule reads where none is stated, reasoning at
    # concurrency 16 (318,226 tokens over 80 requests = 3977.825): 912.02 / 8 = 114.0025
    r = _row(rows, "sglang-cookbook", "b200", "deepseek-v3", concurrency="16", output_tokens="3977.825")
    assert (r["precision"], r["weight_precision"], r["kv_cache_precision"]) == ("fp8", "", "bf16")
    assert r["output_tokens_per_s_per_accelerator"] == "114.0025"
    # its Llama4 page prints 49,668 input tokens for the medium run (the other pages print 39,668): 49668 / 80 = 620.85
    r = _row(rows, "sglang-cookbook", "mi300x", "llama-4-scout", concurrency="16")
    assert (r["input_tokens"], r["output_tokens_per_s_per_accelerator"]) == ("620.85", "144.05875")  # 1152.47 / 8
    # Lambda's MiniMax-M2.5 page: 896 generation tok/s on 2 Blackwell GPUs (read as b200), 849 on 4 H100, 32 parallel
    # requests, 4,194,304 in and 524,288 out over 512 prompts = 8192 and 1024: 896 / 2 = 448, 849 / 4 = 212.25
    per_gpu = {r["accelerator"]: r["output_tokens_per_s_per_accelerator"] for r in rows
               if r["holdout_group"] == "lambda-inference-models"}
    assert per_gpu == {"b200": "448", "h100-sxm": "212.25"}
    assert {(r["input_tokens"], r["output_tokens"], r["concurrency"]) for r in rows
            if r["holdout_group"] == "lambda-inference-models"} == {("8192", "1024", "32")}
    assert {str(r["source_date"]) for r in rows} == {"2026-12-06"}
    assert all("gathered without comparing it to the estimate" in str(r["note"]) for r in rows)


def test_the_tenth_sets_refused_rows_are_kept_with_the_tools_reason(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = _script(10, monkeypatch)
    # 56 rows transcribed: ATOM's two MTP rows (no acceptance published) and the cookbook's two gpt-oss-120b rows
    # (MXFP4 weights with BF16 compute: b200 lists no such pair in data/accelerators.csv) are refused, 52 appended
    refused = [(t["source_key"], t["accelerator"], t["speculative_decoding"]) for t, _ in script.refused()]
    assert sorted(refused) == [("amd_atom_dsr1", "mi300x", "mtp")] * 2 + [("sglang_cookbook_gpt_oss", "b200",
                                                                          "none")] * 2
    why = [w for _, w in script.refused()]
    assert sum(w.endswith("the page states MTP with 3 speculated tokens and no acceptance") for w in why) == 2
    assert sum(w.startswith("weight_precision: b200 (accelerator) does not run mxfp4 weights with bf16 compute")
               for w in why) == 2
    assert len(script.rows()) == 52
    _before_the_fourth_set(tmp_path)
    for n in (4, 5, 6, 7, 8, 9):
        _script(n, monkeypatch).main(tmp_path)
    capsys.readouterr()
    script.main(tmp_path)
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("not appended (") for line in out) == 4
    assert out[4] == "appended 52 points and 12 serving stacks"
    # the tenth set is listed on its own line after the ninth, its sources in no range's basis
    sets = list(leave_out.calibration.VALIDATION_SETS.items())
    assert sets[-1] == ("tenth set (after the rule change set 9 led to, selection rule first)",
                        ("amd-atom-recipes", "sglang-cookbook", "google-tpu-recipes-ironwood",
                         "lambda-inference-models"))
    assert sets[-2][0].startswith("ninth set (")
    assert not set(sets[-1][1]) & set(leave_out.calibration.RANGE_BASIS_SOURCES)


def test_the_eighth_sets_rows_in_formats_apart_are_the_scenarios_fields_in_groups_of_their_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _script(8, monkeypatch).rows(formats=True)
    cells = {(str(r["holdout_group"]), str(r["accelerator"]), str(r["model"]), str(r["precision"]),
              str(r.get("weight_precision", "")), str(r.get("compute_precision", "")),
              str(r.get("kv_cache_precision", ""))) for r in rows}
    # W4A16 (QServe's TRT-LLM baseline) as int4 weights with bf16 compute, on L40S and A100, four models each
    w4a16 = {c for c in cells if c[0] == "qserve-paper-efficiency-formats"}
    assert w4a16 == {("qserve-paper-efficiency-formats", a, m, "bf16", "int4", "", "") for a in ("l40s", "a100-sxm")
                     for m in ("llama-3.1-8b", "llama-2-7b", "mistral-7b", "llama-2-70b")}
    # the vLLM blog: BF16 weights with an FP8 KV cache; MXFP4 gpt-oss-20b with BF16 compute and a BF16 or FP8 KV cache
    assert {c for c in cells if c[0] == "vllm-blog-fp8-kvcache-formats"} == {
        ("vllm-blog-fp8-kvcache-formats", "h100-sxm", "llama-3.1-8b", "bf16", "", "", "fp8"),
        ("vllm-blog-fp8-kvcache-formats", "h100-sxm", "gpt-oss-20b", "bf16", "mxfp4", "", "bf16"),
        ("vllm-blog-fp8-kvcache-formats", "h100-sxm", "gpt-oss-20b", "bf16", "mxfp4", "", "fp8")}
    assert {c for c in cells if c[0] == "lmsys-blog-sglang-gpt-oss-formats"} == {
        ("lmsys-blog-sglang-gpt-oss-formats", "h100-sxm", "gpt-oss-120b", "bf16", "mxfp4", "", "")}
    # the LMSYS H100 MXFP4 run at batch 1 on TP 8: 318.53 / 8 = 39.81625 per GPU, transcribed to 4 decimals
    r = next(r for r in rows if r["holdout_group"] == "lmsys-blog-sglang-gpt-oss-formats")
    assert r["output_tokens_per_s_per_accelerator"] == "39.8162"
    assert "never compared with the estimate" in str(r["note"])
    # a set of their own in the validation split, after the eighth and before the ninth
    names = list(leave_out.calibration.VALIDATION_SETS)
    formats = "eighth set, formats added after (weights, compute and KV cache apart)"
    assert names[names.index(formats) - 1].startswith("eighth set (") and names[names.index(formats) + 1].startswith(
        "ninth set (")
    assert leave_out.calibration.VALIDATION_SETS[formats] == ("qserve-paper-efficiency-formats",
                                                              "vllm-blog-fp8-kvcache-formats",
                                                              "lmsys-blog-sglang-gpt-oss-formats")


def test_the_eighth_sets_formats_alone_append_to_data_holding_the_27_and_not_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # data/ as it was before the formats were appended: the ninth and tenth sets (appended after them) and the
    # formats' 13 records cut; --formats gives data/ as it was before the ninth set
    later = [r for n in (9, 10) for r in _script(n, monkeypatch).rows()]
    curves = (DATA / "throughput_curves.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    stacks = (DATA / "serving_stacks.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    ids = {str(r["serving_stack"]) for r in later}  # the stacks the ninth and tenth sets appended are the last ones
    first = next(i for i in range(1, len(stacks)) if all(line.split(",")[0] in ids for line in stacks[i:]))
    before_ninth = {"throughput_curves.csv": curves[:len(curves) - len(later)],
                    "serving_stacks.csv": stacks[:first]}
    (tmp_path / "throughput_curves.csv").write_text("".join(before_ninth["throughput_curves.csv"][:-13]),
                                                    encoding="utf-8")
    (tmp_path / "serving_stacks.csv").write_text("".join(before_ninth["serving_stacks.csv"]), encoding="utf-8")
    script = _script(8, monkeypatch)
    script.main(tmp_path, formats_only=True)
    for f in FILES:
        assert (tmp_path / f).read_text(encoding="utf-8") == "".join(before_ninth[f]), f
    with pytest.raises(SystemExit, match=r"the eighth \(formats\) validation set is already in"):
        script.main(tmp_path, formats_only=True)


def test_a_stack_that_is_not_a_serving_engine_is_refused_with_its_reason_never_dropped() -> None:
    # the ninth set's 20 Hugging Face Transformers rows (Qwen's speed benchmark: 5 models x 4 input lengths) are
    # refused with the reason; its 54 SGLang rows of the same tables are estimated
    from economics.studies import calibration_points as cp

    p = cp.points()
    qwen = p[p["source_group"] == "qwen-speed-benchmark-h20"]
    refused = qwen[~cp.is_fitted(qwen)]
    assert len(qwen) == 74 and len(refused) == 20
    assert set(refused["fitted"]) == {"no: not a serving engine (Hugging Face Transformers' generate: no continuous "
                                      "batching or serving kernels; the estimate describes a serving engine)"}
    curves = pd.read_csv(DATA / "throughput_curves.csv", dtype=str, keep_default_na=False)
    stack = dict(zip(curves["curve_id"], curves["serving_stack"], strict=True))
    assert {stack[point.split(" @")[0]].split("-")[0] for point in refused["point"]} == {"transformers"}
    listed = leave_out.validation_refused()
    assert (listed["source_group"] == "qwen-speed-benchmark-h20").sum() == 20
