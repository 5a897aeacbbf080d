"""Hostile curve and benchmark files (issue #44): a curve's figures are held to the bounds of the scenario fields
they become, a curve is one configuration with one point per per-user speed, and benchmark JSON is read as scenario
JSON is (a repeated key refused, deep nesting refused naming the file). Each finding through the command line and
Python here; through the HTTP API in tests/test_api.py and the app in tests/test_app_throughput.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics import catalog
from economics.cli import main
from economics.io.benchmarks import BenchmarkError, curves_csv, import_benchmark
from economics.io.scenario_files import read_scenarios_json
from economics.schema import user_curves
from economics.schema.validation import validate

FIX = Path(__file__).resolve().parent / "fixtures" / "benchmarks"
GUIDELLM = FIX / "guidellm_benchmarks.json"
FLAGS: dict[str, Any] = {"accelerator": "h100-sxm", "accelerators": 8, "precision": "fp8"}
SCENARIO = {"accelerator": "h100-sxm", "model": "llama-3.1-8b", "precision": "fp8", "accelerator_count": 8,
            "input_tokens_per_request": 512, "output_tokens_per_request": 256,
            "target_output_tokens_per_s_per_user": 100}
LONG_RUN = {"date": "20260412-093015", "backend": "openai", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "max_concurrency": 64, "completed": 10, "total_input_tokens": 160_000, "total_output_tokens": 20_000,
            "output_throughput": 400.0, "median_ttft_ms": 900.0, "median_tpot_ms": 20.0}
"""A vLLM run at 16,000 in / 2,000 out tokens per request: 1,000 / 20 ms = 50 tokens/s per user, 400 / 8 = 50 per
GPU."""


POINT = {"accelerator": "h100-sxm", "model": "llama-3.1-8b", "precision": "fp8", "input_tokens": "512",
         "output_tokens": "256", "output_tokens_per_s_per_user": "123.619",
         "output_tokens_per_s_per_accelerator": "121.517"}


def guidellm_curve() -> str:
    """The GuideLLM fixture's curve file (three points, 512 / 256 tokens, on 8 H100s at FP8)."""
    return curves_csv(import_benchmark([GUIDELLM], **FLAGS))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def evaluate_with(curve_text: str, **changes: Any) -> dict[str, Any]:
    mine = economics.load_curves(curve_text.encode(), "mine.csv")
    return economics.evaluate_scenario({**SCENARIO, **changes, "curves_sha256": mine.sha256})


def test_the_guidellm_curve_reads_the_documented_figure() -> None:
    # docs/how-to/import-benchmark.md: 100 tokens/s per user lies between the measured 123.6 (121.5 per GPU) and
    # 77.5 (300.8 per GPU); the monotone interpolation reads 210.9
    out = evaluate_with(guidellm_curve())
    assert out["throughput_source"] == "your measured curve"
    assert round(out["output_tokens_per_s_per_accelerator"], 1) == 210.9


# --- bounds: a curve's figure is what the scenario field may hold ---------------------------------------------------

def test_a_curve_point_past_the_fields_bound_is_refused_on_the_command_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # was: 1e30 tokens/s per GPU accepted, a valid row at 4.4e-28 USD per million tokens
    curves = tmp_path / "big.csv"
    curves.write_text(guidellm_curve().replace(",300.762,", ",1e30,"))
    scenarios = tmp_path / "s.csv"
    pd.DataFrame([SCENARIO]).to_csv(scenarios, index=False)
    code, out, err = cli(capsys, "evaluate", str(scenarios), "--curves", str(curves))
    assert code == 2 and out == ""
    assert err.strip() == ("error: --curves: big.csv: row 3: output_tokens_per_s_per_accelerator: must be > 0 and "
                           "<= 1,000,000,000 [token/s], got 1e30")


@pytest.mark.parametrize(("column", "cell", "says"), [
    ("output_tokens_per_s_per_user", "2e6", "must be > 0 and <= 1,000,000 [token/s], got 2e6 (the bounds of the "
                                            "scenario's target_output_tokens_per_s_per_user)"),
    ("input_tokens", "0", "must be > 0 and <= 100,000,000 [token], got 0 (the bounds of the scenario's "
                          "input_tokens_per_request)"),
    ("output_tokens", "1e9", "must be > 0 and <= 100,000,000 [token], got 1e9"),
    ("accelerator_count", "8.5", "must be a whole number, got 8.5"),
    ("accelerator_count", "0", "must be >= 1 and <= 10,000,000 [accelerator], got 0"),
    ("output_tokens_per_s_per_accelerator", "-3", "must be > 0 and <= 1,000,000,000 [token/s], got -3"),
])
def test_each_bounded_column_names_its_row_field_value_and_bounds(column: str, cell: str, says: str) -> None:
    table = pd.read_csv(pd.io.common.StringIO(guidellm_curve()), dtype=str, keep_default_na=False)
    table.loc[1, column] = cell
    with pytest.raises(user_curves.CurveFileError) as err:
        user_curves.read_curve_file(curves_csv(table).encode(), "mine.csv")
    assert f"mine.csv: row 2: {column}: {says}" in str(err.value)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(column=st.sampled_from(sorted(user_curves.FIELD_OF)),
       value=st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10, 10**11)))
def test_a_curve_cell_loads_exactly_when_its_scenario_field_would_hold_it(column: str, value: float) -> None:
    """One set of bounds: a figure loads in a curve file iff the scenario's validation takes it for the field it
    becomes (and, a curve's figures dividing, it is above 0)."""
    field = user_curves.FIELD_OF[column]
    text = repr(value)
    point = {**dict.fromkeys(user_curves.COLUMNS, ""), **POINT, column: text}
    loads = not [p for p in user_curves.point_problems(point) if p.startswith(f"{column}:")]
    _, problems = validate(pd.DataFrame({field: [text]}, dtype=object))
    held = not any(p.field == field for p in problems)
    assert loads == (held and value > 0), (column, text, [p.message for p in problems])


def test_the_catalogs_curves_hold_the_same_bounds_and_one_configuration_a_curve() -> None:
    table = catalog.throughput_curves().reindex(columns=list(user_curves.COLUMNS), fill_value="")
    points = [{k: str(v) for k, v in rec.items()} for rec in table.to_dict(orient="records")]
    known = {"accelerator": catalog.accelerator_ids(), "model": list(catalog.models().index)}
    bad = [(i, p) for i, rec in enumerate(points) for p in user_curves.point_problems(dict(rec), known)
           if "empty; needs" not in p]
    assert bad == []  # (MLPerf's catalog rows leave the prompt length empty: a curve file of yours must give it)
    # the catalog keeps a few repeated speeds (its own first-point rule); a curve never mixes configurations
    assert [p for p in user_curves.curve_problems(points, str) if "differ in" in p] == []


def test_import_refuses_a_figure_out_of_bounds_naming_file_run_and_field(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    # was: per-user speeds of 1e303 (1,000 / 1e-300 ms) and zero or negative throughputs written to a curve file
    # that its own loader then refused
    for name, change, says in (
            ("fast.json", {"median_tpot_ms": 1e-300}, "output_tokens_per_s_per_user: must be > 0 and <= 1,000,000 "
             "[token/s], got 1e+303"),
            ("negative.json", {"output_throughput": -400.0}, "output_tokens_per_s_per_accelerator: must be > 0 and "
             "<= 1,000,000,000 [token/s], got -50"),  # -400 / 8
            ("zero.json", {"output_throughput": 0.0}, "output_tokens_per_s_per_accelerator: must be > 0")):
        path = tmp_path / name
        path.write_text(json.dumps({**LONG_RUN, **change}))
        out = tmp_path / "out.csv"
        code, _, err = cli(capsys, "import-benchmark", str(path), "--accelerator", "h100-sxm", "--accelerators", "8",
                           "--precision", "fp8", "-o", str(out))
        assert code == 2 and err.startswith(f"error: {name}, run 1: {says}"), err
        assert not out.exists()


# --- a curve is one configuration ----------------------------------------------------------------------------------

def test_runs_of_two_request_shapes_imported_under_one_id_are_two_curves(tmp_path: Path) -> None:
    # was: each file named on its own, both 'mine', one curve: a 512-token scenario interpolated between the runs
    long = tmp_path / "long.json"
    long.write_text(json.dumps(LONG_RUN))
    table = import_benchmark([long, GUIDELLM], **FLAGS, curve_id="mine")
    shapes = {(r["curve_id"], r["input_tokens"], r["output_tokens"]) for r in table.to_dict(orient="records")}
    assert shapes == {("mine", "16000", "2000"), ("mine-2", "512", "256")}
    out = evaluate_with(curves_csv(table))
    assert round(out["output_tokens_per_s_per_accelerator"], 1) == 210.9  # the 512-token curve alone, as above
    assert out["throughput_curve"].endswith(" mine-2")
    # a curve file imported beside a run: the run never takes the file's id
    again = import_benchmark([("old.csv", guidellm_curve().replace("guidellm-h100-sxm-llama-3.1-8b-fp8-512-256",
                                                                   "mine").encode()), long], **FLAGS, curve_id="mine")
    assert sorted(set(again["curve_id"])) == ["mine", "mine-2"]


def test_points_of_another_configuration_under_one_id_are_refused_naming_id_rows_and_difference(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    short = guidellm_curve().replace("guidellm-h100-sxm-llama-3.1-8b-fp8-512-256", "mine")
    long = tmp_path / "long.json"
    long.write_text(json.dumps(LONG_RUN))
    long_curve = curves_csv(import_benchmark([long], **FLAGS, curve_id="mine"))
    joined = tmp_path / "both.csv"
    joined.write_text(short + long_curve.split("\n", 1)[1])  # two curve files pasted together by hand
    scenarios = tmp_path / "s.csv"
    pd.DataFrame([SCENARIO]).to_csv(scenarios, index=False)
    code, _, err = cli(capsys, "evaluate", str(scenarios), "--curves", str(joined))
    assert code == 2
    assert ("both.csv: curve 'mine': row 1 and row 4 differ in framework empty against 'vLLM'; input_tokens '512' "
            "against '16000' (more than 1.25x apart); output_tokens '256' against '2000' (more than 1.25x apart): a "
            "curve is one accelerator, count, model, precision, request shape and stack") in err
    # the same two files given to import-benchmark: refused naming each file's row
    with pytest.raises(BenchmarkError, match=r"curve 'mine': short\.csv row 1 and long\.csv row 1 differ in"):
        import_benchmark([("short.csv", short.encode()), ("long.csv", long_curve.encode())])
    # a hand-edited accelerator (was: the H100 figure at 100 tokens/s per user moved from 210.9 to 904.6)
    edited = short.replace("mine,h100-sxm,8,llama-3.1-8b,fp8,,,,512,256,77.4713",
                           "mine,b200,8,llama-3.1-8b,fp8,,,,512,256,77.4713")
    with pytest.raises(user_curves.CurveFileError, match="curve 'mine': row 1 and row 3 differ in accelerator "
                                                         "'h100-sxm' against 'b200'"):
        user_curves.read_curve_file(edited.encode(), "mine.csv")


def test_a_published_runs_sweep_of_deployment_sizes_is_one_curve_and_anything_else_one_count() -> None:
    table = pd.read_csv(pd.io.common.StringIO(guidellm_curve()), dtype=str, keep_default_na=False)
    table.loc[2, "accelerator_count"] = "4"
    with pytest.raises(user_curves.CurveFileError, match=r"row 1 and row 3 differ in accelerator_count '8' against "
                                                         r"'4' \(counts differ only between the points of one "
                                                         r"published run's sweep"):
        user_curves.read_curve_file(curves_csv(table).encode())
    # one published run, as InferenceX's: its sweep of 8 and 4 GPUs is one front
    table[["source", "confidence"]] = ["https://github.com/SemiAnalysisAI/InferenceX/actions/runs/1", "secondary"]
    assert len(user_curves.read_curve_file(curves_csv(table).encode()).table) == 3


def test_two_points_at_one_per_user_speed_are_refused_naming_both_rows() -> None:
    # was: the second point silently dropped
    table = pd.read_csv(pd.io.common.StringIO(guidellm_curve()), dtype=str, keep_default_na=False)
    table.loc[2, "output_tokens_per_s_per_user"] = "152.667"
    with pytest.raises(user_curves.CurveFileError, match="curve 'guidellm-h100-sxm-llama-3.1-8b-fp8-512-256': row 1 "
                                                         "and row 3 are both at '152.667' output tokens/s per user"):
        user_curves.read_curve_file(curves_csv(table).encode(), "mine.csv")


# --- benchmark JSON read as scenario JSON is -----------------------------------------------------------------------

def test_a_repeated_key_in_benchmark_json_is_refused_as_in_scenario_json(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    # was: the last value won (here the TPOT of 2 ms: 500 tokens/s per user instead of 50)
    text = json.dumps(LONG_RUN)[:-1] + ', "median_tpot_ms": 2.0}'
    path = tmp_path / "dup.json"
    path.write_text(text)
    code, _, err = cli(capsys, "import-benchmark", str(path), "--accelerator", "h100-sxm", "--accelerators", "8",
                       "--precision", "fp8")
    assert code == 2
    assert err.strip() == "error: dup.json: not usable JSON: the key 'median_tpot_ms' appears twice in one object"
    with pytest.raises(economics.InputError, match="not usable JSON: the key 'name' appears twice in one object"):
        read_scenarios_json('{"name": "a", "name": "b"}')  # the one rule, both readers
    lines = (FIX / "sglang_bench_serving.jsonl").read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "output_throughput": 1.0}'
    with pytest.raises(BenchmarkError, match="runs.jsonl: not usable JSON: the key 'output_throughput' appears twice"):
        import_benchmark([("runs.jsonl", "\n".join(lines).encode())], accelerator="h200-sxm", accelerators=8,
                         precision="fp8")


def test_deeply_nested_benchmark_json_is_refused_naming_the_file(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = cli(capsys, "import-benchmark", str(path))
    assert code == 2 and err.strip() == "error: deep.json: not usable JSON: nested too deeply"
    with pytest.raises(BenchmarkError, match="deep.json: not usable JSON: nested too deeply"):
        import_benchmark([("deep.json", b'{"a": ' * 100_000 + b"1" + b"}" * 100_000)], fmt="vllm")


def test_every_way_in_reads_a_benchmark_file_to_the_same_bound() -> None:
    from economics.io import benchmarks

    data = b"[]" + b" " * benchmarks.MAX_FILE_BYTES  # was read whole as JSON when given as bytes (the app's way)
    with pytest.raises(BenchmarkError, match=f"big.json: {len(data):,} bytes, more than the 128,000,000 a "
                                             "benchmark file may have"):
        import_benchmark([("big.json", data)])


def test_a_curve_file_the_importer_writes_loads(tmp_path: Path) -> None:
    # every fixture's import loads as a curve file (the importer holds its points to the loader's rules)
    cases = {"vllm_serve.json": FLAGS, "sglang_bench_serving.jsonl": {**FLAGS, "accelerator": "h200-sxm"},
             "guidellm_benchmarks.json": FLAGS, "inferencex_rows.json": {},
             "genai_perf_profile_export.json": FLAGS,
             "mlperf_results_summary.csv": {"input_tokens": 300}}
    for name, flags in cases.items():
        table = import_benchmark([FIX / name], **flags)
        assert len(user_curves.read_curve_file(curves_csv(table).encode(), name).table) == len(table)
