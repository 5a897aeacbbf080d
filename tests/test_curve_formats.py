"""Issue #40: measured curves with the weights', compute's and KV cache's formats apart from ``precision``
(data/throughput_curves.csv and a curve file of yours: ``weight_precision``, ``compute_precision``,
``kv_cache_precision``, the scenario's fields). Cells read by the scenario's parser (field, row and value named), pairs
held to what the accelerator runs (the scenario's rule), a curve read only for a scenario of the same three formats,
and the calibration predicting a point with its own formats, as the app estimates the scenario."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics import catalog
from economics.engine import estimate
from economics.engine.measured import filed_precision, scenario_configuration
from economics.schema import user_curves
from economics.schema.validation import validate
from economics.studies import calibration, calibration_points

HEADER = "curve_id,accelerator,model,precision,weight_precision,compute_precision,kv_cache_precision," \
         "input_tokens,output_tokens,output_tokens_per_s_per_user,output_tokens_per_s_per_accelerator"
W4A16 = "w4a16,a100-sxm,llama-3.1-8b,bf16,INT4,,,1024,512,{speed},{rate}"
KV8 = "kv8,h100-sxm,llama-3.1-8b,bf16,,,fp8,1024,512,{speed},{rate}"


def _file(*rows: str) -> bytes:
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def _loaded() -> user_curves.CurveFile:
    """Two curves of two points each: W4A16 on an A100 and BF16 with an FP8 KV cache on an H100."""
    return user_curves.load(_file(W4A16.format(speed=20, rate=900), W4A16.format(speed=60, rate=300),
                                  KV8.format(speed=20, rate=1500), KV8.format(speed=60, rate=500)), "formats.csv")


def test_a_curve_file_with_formats_apart_reads_them_as_the_scenario_does() -> None:
    table = _loaded().table
    # read lower-cased as the scenario reads its fields; empty cells stay empty (= precision's, as a scenario's)
    assert table[["weight_precision", "compute_precision", "kv_cache_precision"]].values.tolist() == [
        ["int4", "", ""], ["int4", "", ""], ["", "", "fp8"], ["", "", "fp8"]]
    # filed as a scenario of these fields is matched: int4 weights with bf16 compute; bf16 with a KV cache apart
    assert filed_precision(table).tolist() == ["int4/bf16", "int4/bf16", "bf16 kv fp8", "bf16 kv fp8"]
    # a KV cache given equal to what its compute implies is precision's own (bf16 -> bf16, fp4 -> fp8)
    same = pd.DataFrame({"precision": ["bf16", "fp4"], "kv_cache_precision": ["bf16", "fp8"]})
    assert filed_precision(same).tolist() == ["bf16", "fp4"]


@pytest.mark.parametrize("cells,says", [
    ("bf16,int3,,", "formats.csv: row 2: weight_precision: 'int3' is not one of bf16, fp8, int8, fp4, mxfp4, int4"),
    # QServe's W8A8 runs integer compute, W4A8KV4 a 4-bit KV cache: not the scenario's
    ("bf16,int8,int8,", "formats.csv: row 2: compute_precision: 'int8' is not one of bf16, fp8, fp4"),
    ("bf16,int4,,int4", "formats.csv: row 2: kv_cache_precision: 'int4' is not one of bf16, fp8, fp4"),
    # MXFP4 weights with FP8 compute: not a pair the A100 is listed as running (mxfp4/bf16 int4/bf16 int8/bf16)
    ("fp8,mxfp4,,", "formats.csv: row 2: weight_precision: a100-sxm (accelerator) does not run mxfp4 weights with "
                    "fp8 compute (data/accelerators.csv weight_compute_pairs lists mxfp4/bf16 int4/bf16 int8/bf16)"),
    ("bf16,,fp8,", "formats.csv: row 2: compute_precision: a100-sxm (accelerator) does not run bf16 weights with fp8 "
                   "compute"),
])
def test_a_bad_format_cell_is_refused_naming_row_field_and_value(cells: str, says: str) -> None:
    good = W4A16.format(speed=20, rate=900)
    bad = f"other,a100-sxm,llama-3.1-8b,{cells},1024,512,60,300"
    with pytest.raises(user_curves.CurveFileError) as err:
        user_curves.read_curve_file(_file(good, bad), "formats.csv")
    assert says in str(err.value)


def test_points_of_one_curve_in_different_formats_are_refused_naming_both_rows() -> None:
    # one curve id, the second point with an FP8 KV cache: two configurations, read as one front they would mix
    bad = "w4a16,a100-sxm,llama-3.1-8b,bf16,int4,,fp8,1024,512,60,300"
    with pytest.raises(user_curves.CurveFileError) as err:
        user_curves.read_curve_file(_file(W4A16.format(speed=20, rate=900), bad), "formats.csv")
    assert "curve 'w4a16': row 1 and row 2 differ in kv_cache_precision empty against 'fp8'" in str(err.value)


FORMAT_CELLS = st.sampled_from(["", "bf16", "fp8", "fp4", "int8", "int4", "mxfp4", "INT4", " fp8 ", "fp16", "x"])


@settings(max_examples=120, deadline=None, derandomize=True)
@given(accelerator=st.sampled_from(["h100-sxm", "a100-sxm", "l40s", "b200"]),
       precision=st.sampled_from(["bf16", "fp8", "fp4"]), weights=FORMAT_CELLS, compute=FORMAT_CELLS,
       kv=FORMAT_CELLS)
def test_a_curves_formats_load_exactly_when_the_scenarios_fields_would_hold_them(
        accelerator: str, precision: str, weights: str, compute: str, kv: str) -> None:
    """One rule: a point's formats load iff the scenario's validation takes the same cells (enums and pairs)."""
    cells = {"weight_precision": weights, "compute_precision": compute, "kv_cache_precision": kv}
    point = {**dict.fromkeys(user_curves.COLUMNS, ""), "accelerator": accelerator, "model": "llama-3.1-8b",
             "precision": precision, "input_tokens": "1024", "output_tokens": "512",
             "output_tokens_per_s_per_user": "20", "output_tokens_per_s_per_accelerator": "900", **cells}
    loads = not user_curves.point_problems(point)
    _, problems = validate(pd.DataFrame([{"accelerator": accelerator, "precision": precision, **cells}], dtype=object))
    held = not any(p.field in cells for p in problems)
    assert loads == held, (point, [p.message for p in problems])


def _evaluate(**fields: Any) -> dict[str, Any]:
    base = {"model": "llama-3.1-8b", "precision": "bf16", "accelerator_count": 1, "input_tokens_per_request": 1024,
            "output_tokens_per_request": 512, "target_output_tokens_per_s_per_user": 40.0}
    return economics.evaluate_scenario({**base, **fields})


def test_a_curve_is_read_only_for_a_scenario_of_its_three_formats() -> None:
    sha = _loaded().sha256
    mine = "your measured curve"
    # int4 weights, bf16 compute on the A100: the W4A16 curve answers (PCHIP through two points is the straight line
    # here: 900 + (40 - 20) / (60 - 20) x (300 - 900) = 600)
    w4 = _evaluate(accelerator="a100-sxm", weight_precision="int4", compute_precision="bf16", curves_sha256=sha)
    assert (w4["throughput_source"], w4["output_tokens_per_s_per_accelerator"]) == (mine, pytest.approx(600.0))
    # precision bf16 alone (bf16 weights) or int4 weights with an FP8 KV cache: another configuration, not read
    for other in ({}, {"weight_precision": "int4", "kv_cache_precision": "fp8"}):
        out = _evaluate(accelerator="a100-sxm", curves_sha256=sha, **other)
        assert out["throughput_source"] != mine, other
        assert "has no curve for this accelerator, model, precision" in out["throughput_note"]
    # BF16 with an FP8 KV cache on the H100: the KV curve (1500 + 0.5 x (500 - 1500) = 1000); BF16 KV: not read
    kv8 = _evaluate(accelerator="h100-sxm", kv_cache_precision="fp8", curves_sha256=sha)
    assert (kv8["throughput_source"], kv8["output_tokens_per_s_per_accelerator"]) == (mine, pytest.approx(1000.0))
    assert _evaluate(accelerator="h100-sxm", curves_sha256=sha)["throughput_source"] != mine


def test_a_scenario_with_its_kv_cache_apart_reads_no_catalog_curve_of_another_kv_cache() -> None:
    # was: the KV cache was not part of the match, so Llama 3.1 70B FP8 with a BF16 KV cache read the catalog's FP8
    # curves (FP8 KV cache: half the KV bytes a sequence holds) as if they were its own
    base = {"accelerator": "h100-sxm", "model": "llama-3.1-70b", "precision": "fp8", "accelerator_count": 8,
            "max_batch_size": 256, "input_tokens_per_request": 5000, "output_tokens_per_request": 500,
            "target_output_tokens_per_s_per_user": 20.0}
    out = economics.evaluate(pd.DataFrame([base, {**base, "kv_cache_precision": "bf16"},
                                           {**base, "kv_cache_precision": "fp8"}]))
    assert out["throughput_source"].tolist()[0] != "estimated"
    assert out["throughput_source"].tolist()[1] == "estimated" and out["throughput_curve"].tolist()[1] == ""
    # an FP8 KV cache given is what fp8 implies: the same configuration, the same curve
    assert out["throughput_curve"].tolist()[2] == out["throughput_curve"].tolist()[0]


def test_a_figure_typed_in_keeps_the_configuration_it_was_typed_for() -> None:
    # throughput_measured_for written from the scenario's own formats: no note that it belongs elsewhere
    s = {"accelerator": "h100-sxm", "model": "llama-3.1-8b", "precision": "bf16", "kv_cache_precision": "fp8",
         "weight_precision": "int4", "output_tokens_per_s_per_accelerator": 500.0, "accelerator_count": 8}
    assert scenario_configuration(s) == "h100-sxm/llama-3.1-8b/int4/bf16 kv fp8"
    same = economics.evaluate_scenario({**s, "throughput_measured_for": scenario_configuration(s)})
    assert same["throughput_note"] == ""
    other = economics.evaluate_scenario({**s, "throughput_measured_for": "h100-sxm/llama-3.1-8b/bf16"})
    assert "measured for h100-sxm/llama-3.1-8b/bf16; this scenario runs h100-sxm/llama-3.1-8b/int4/bf16 kv fp8" \
        in other["throughput_note"]


def test_the_calibration_predicts_a_point_with_its_own_formats_as_the_app_estimates_it() -> None:
    # a hand-made point (not a catalog one): Llama 3.1 8B on one A100, int4 weights with bf16 compute, offline
    pts = pd.DataFrame([{"accelerator": "a100-sxm", "model": "llama-3.1-8b", "precision": "bf16",
                         "weight_precision": "int4", "compute_precision": "", "kv_cache_precision": "",
                         "input_tokens": 1024.0, "output_tokens": 512.0, "per_user": np.nan, "replica": 1.0,
                         "max_batch": 64.0, "at_concurrency": True, "kv_free_fraction": np.nan}])
    cols = calibration._columns(pts)
    assert (cols["weight_precision"][0], cols["compute_precision"][0]) == ("int4", "")
    rl = estimate.Roofline({**cols, "accelerators_per_replica": np.array([1.0])})
    # 8.03 B parameters x 4.125 bits / 8 = 4.1404688 GB of weights; the KV cache at the compute's bf16 (2 bytes)
    params = float(catalog.models().loc["llama-3.1-8b", "total_params_b"])
    assert rl.weights[0] == pytest.approx(params * 1e9 * 4.125 / 8, rel=1e-12) and rl.kv_b[0] == 2.0
    assert calibration._weight_bytes(pts)[0] == pytest.approx(params * 1e9 * 4.125 / 8, rel=1e-12)
    # the same figure as the scenario of those fields estimated by the app's path (no curve, stored factors)
    scenario = {"accelerator": "a100-sxm", "model": "llama-3.1-8b", "precision": "bf16", "weight_precision": "int4",
                "input_tokens_per_request": 1024, "output_tokens_per_request": 512, "accelerators_per_replica": 1,
                "max_batch_size": 64, "accelerator_count": 1, "ownership": "rent", "rent_usd_per_accelerator_hour": 1.0}
    app, _ = validate(pd.DataFrame([scenario]))
    calib = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in cols.items()}
    estimate.fill_throughput(app, use_curves=False)
    estimate.fill_throughput(calib, use_curves=False)
    assert calib["output_tokens_per_s_per_accelerator"][0] == app["output_tokens_per_s_per_accelerator"][0]
    bf16, _ = validate(pd.DataFrame([{**scenario, "weight_precision": ""}]))
    estimate.fill_throughput(bf16, use_curves=False)
    assert app["output_tokens_per_s_per_accelerator"][0] > bf16["output_tokens_per_s_per_accelerator"][0]


def test_every_catalog_point_carries_its_formats_to_the_calibration() -> None:
    # existing rows hold none (empty: precision's), and a point's formats are the ones its row gives
    t = catalog.throughput_curves()
    pts = calibration_points.points()
    curves = pts[pts["kind"] != "claim"].reset_index(drop=True)
    for f in ("weight_precision", "compute_precision", "kv_cache_precision"):
        assert curves[f].tolist() == t[f].tolist()
    assert set(pts.loc[pts["kind"] == "claim", "weight_precision"]) == {""}


def test_an_accelerator_with_no_pair_listed_is_said_to_list_none() -> None:
    # data/accelerators.csv leaves trainium2's weight_compute_pairs empty (read as NaN): the message said "lists nan"
    from economics.schema.scenario import pair_problem

    why = pair_problem("weight_precision", "trainium2", "accelerator", "fp8", "bf16")
    assert "weight_compute_pairs lists none for it" in why and "nan" not in why
