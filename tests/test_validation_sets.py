"""The validation-set add scripts (tools/add_validation_set_4.py to _8.py and their shared tools/validation_sets.py):
re-run in order they give data/ byte for byte, a set is never appended twice, and the seventh and eighth sets' rows
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
"""The first record the fourth set appended to each file: the fourth to eighth sets are the files' last records."""


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
    for n in (4, 5, 6, 7, 8):
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


def _eighth(rows: list[dict[str, object]], group: str, accelerator: str, model: str, **cells: str) -> dict[str, object]:
    """The one row of the eighth set of ``group`` on ``accelerator`` with ``model`` and the given cells."""
    found = [r for r in rows if (r["holdout_group"], r["accelerator"], r["model"]) == (group, accelerator, model)
             and all(str(r[k]) == v for k, v in cells.items())]
    assert len(found) == 1, found
    return found[0]


def test_the_eighth_sets_rows_read_the_published_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _script(8, monkeypatch).rows()
    # Azure's ND H100 v5 page, LLAMA 3 (70B), world size 8, 128 in / 8 out, batch 64: 1077.84 tokens/s, TensorRT-LLM's
    # tokens_per_sec = batch x output length / latency for the 8 GPUs; per GPU 1077.84 / 8 = 134.73
    r = _eighth(rows, "azure-aibg-h100", "h100-sxm", "llama-3.1-70b", concurrency="64")
    assert (r["input_tokens"], r["output_tokens"], r["precision"], r["tensor_parallel"]) == ("128", "8", "bf16", 8)
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(134.73, abs=1e-9)
    # its ND H200 v5 page, LLAMA 3 (405B), batch 96: 333.47 / 8 = 41.68375, held as the FP8 checkpoint of the config
    r = _eighth(rows, "azure-aibg-h200", "h200-sxm", "llama-3.1-405b", concurrency="96")
    assert r["precision"] == "fp8"
    assert float(str(r["output_tokens_per_s_per_accelerator"])) == pytest.approx(41.68375, abs=1e-3)
    # ND A100 v4, Mistral (7B) 'datatype float16' on one GPU, batch 64: 858.61, read as bf16
    r = _eighth(rows, "azure-aibg-a100", "a100-sxm", "mistral-7b")
    assert (r["output_tokens_per_s_per_accelerator"], r["precision"], r["concurrency"]) == ("858.61", "bf16", "64")
    # QServe's A100 table, TRT-LLM-FP16 on Llama-3-8B, 1024 in / 512 out on one GPU: 2503 tokens/s, batch not stated
    r = _eighth(rows, "qserve-paper-efficiency", "a100-sxm", "llama-3.1-8b")
    assert (r["output_tokens_per_s_per_accelerator"], r["concurrency"], r["input_tokens"]) == ("2503", "", "1024")
    # the vLLM blog's Table 4, BF16 KV cache on one H100 at concurrency 8, ~20k in / ~2k out: 450.3 output tok/s
    r = _eighth(rows, "vllm-blog-fp8-kvcache", "h100-sxm", "llama-3.1-8b")
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
    # a set of their own in the validation split, after the eighth
    sets = list(leave_out.calibration.VALIDATION_SETS.items())
    assert sets[-1] == ("eighth set, formats added after (weights, compute and KV cache apart)",
                        ("qserve-paper-efficiency-formats", "vllm-blog-fp8-kvcache-formats",
                         "lmsys-blog-sglang-gpt-oss-formats"))


def test_the_eighth_sets_formats_alone_append_to_data_holding_the_27_and_not_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # data/ as it was before the formats were appended (the 13 last records of the curves cut): --formats gives data/
    name = "throughput_curves.csv"
    lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / name).write_text("".join(lines[:-13]), encoding="utf-8")
    shutil.copy(DATA / "serving_stacks.csv", tmp_path / "serving_stacks.csv")
    script = _script(8, monkeypatch)
    script.main(tmp_path, formats_only=True)
    for f in FILES:
        assert (tmp_path / f).read_bytes() == (DATA / f).read_bytes(), f
    with pytest.raises(SystemExit, match=r"the eighth \(formats\) validation set is already in"):
        script.main(tmp_path, formats_only=True)
