"""Calibration honesty and the physics of the throughput roofline: held-out error bounded per scope, hand-worked
communication and queueing terms, and physical limits as properties."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from economics.domain import throughput as th
from economics.engine import estimate
from economics.studies import calibration

# Held-out bounds per accelerator family: (median, worst) absolute error of output tokens/s per accelerator [%] on the
# points the fit never sees (held-out model families and the held-out source), at the figures `python -m economics
# calibrate --holdout` printed for the stored factors plus a small margin (about 2 points on a median, 3 on a worst), so
# any regression fails. Measured (2026-11-30, third fit): all 12.1 / 70.1, nvidia-hopper 9.8 / 42.5, nvidia-ampere 11.7
# / 40.4, nvidia-blackwell 20.7 / 70.1, nvidia-ada 9.6 / 33.3, amd-cdna3 20.3 / 36.2 (Llama 3.1 405B on eight MI300X
# with vLLM, four points), within the 25 % / 75 % target. Llama 4 Scout (20 points on one B200 or GB200) was added to
# the held-out split after the rules below, without a refit: 19.9 / 34.6. The worst is Qwen3-30B-A3B at 128/128 on one
# GB200, measured 39 % below the same table's B200 on the same GPU. Three rules changed after the first fit's held-out
# figures (11.6 / 231.6) had been seen, all disclosed in docs/throughput-model.md, so the held-out figures are not a
# blind test of them: points that publish their concurrency are predicted at it; the per-token overhead is fitted per
# family; points run with attention data-parallel over several GPUs (an unstated expert-parallel size) are not fitted.
# The fit of 2026-12-02 (docs/estimates.md: the all-reduce's latency rounds, the batch-1 bound on the step overhead,
# AMD's vLLM 0.9.1 latency table fitted for 70B and held out for 405B) moved these bounds, after the validation set
# that prompted it had been seen: measured all 11.9 / 73.8, nvidia-hopper 9.2 / 42.6, nvidia-ampere 11.6 / 44.2,
# nvidia-blackwell 20.7 / 73.8, nvidia-ada 10.1 / 33.6, amd-cdna3 10.6 / 60.7 (20 points now, 16 of them AMD's 405B
# latency table, the worst its batch-128 2048/2048 point). The bounds keep the same margin over the new figures.
HOLDOUT_BOUNDS = {"all": (14.0, 76.5), "nvidia-hopper": (11.5, 45.5), "nvidia-ampere": (14.0, 47.0),
                  "nvidia-blackwell": (23.0, 76.5), "nvidia-ada": (12.5, 36.5), "amd-cdna3": (13.0, 63.5)}
TRAIN_BOUNDS = {"all": (8.5, 77.0)}
"""Training split over all families (measured 6.4 % / 73.3 %)."""
TTFT_TRAIN_BOUNDS = {"all": (24.0, 35.0), "amd-cdna4": (24.0, 25.5), "nvidia-blackwell": (8.0, 9.0),
                     "nvidia-hopper": (30.5, 35.0)}
"""Time to first token on the training split, per family (measured: all 22.0 / 31.9, amd-cdna4 21.7 / 22.5,
nvidia-blackwell 6.1 / 6.1, nvidia-hopper 28.3 / 31.9)."""
TTFT_HOLDOUT_BOUNDS = {"all": (16.5, 66.0), "nvidia-hopper": (16.5, 66.0)}
"""Time to first token on the held-out source (TensorRT-LLM 0.14 online serving, Llama 3.1 8B and 70B on H100 and
H200): measured 14.4 / 62.3, within the 25 % / 75 % target. The fixed time per request is fitted with each measured
configuration weighing once; weighted per point (one MI355X sweep of five points setting it) the held-out figures
were 59.5 / 170.9, and that change was made after they were seen (docs/throughput-model.md)."""
PER_USER_BOUNDS = {"train": (8.0, 36.0), "holdout": (17.0, 46.0)}
"""Per-user speed [token/s] predicted at a point's published concurrency against the measured one (measured: train
5.8 / 32.4 over 76 points, held out 15.0 / 42.2 over 56)."""


@pytest.fixture(scope="module")
def holdout() -> Any:
    return calibration.holdout_table().set_index("scope")


def test_the_split_is_by_model_family_and_the_stored_factors_never_saw_the_held_out_points() -> None:
    pts = calibration.points()
    held, train = pts[pts["split"] == "holdout"], pts[pts["split"] == "train"]
    assert set(calibration.HOLDOUT_MODELS) <= set(held["model"])
    assert not set(calibration.HOLDOUT_MODELS) & set(train["model"])
    # a held-out point of a training family belongs to a held-out source, and no training point does
    by_source = held[~held["model"].isin(calibration.HOLDOUT_MODELS)]
    assert len(by_source) and by_source["source_group"].isin(calibration.HOLDOUT_SOURCES).all()
    assert not train["source_group"].isin(calibration.HOLDOUT_SOURCES).any()
    # both dense and mixture-of-experts families are held out
    assert {"dense", "moe"} <= set(calibration.model_class(np.array(calibration.HOLDOUT_MODELS)))
    stored = economics.catalog.calibration()
    assert "held-out model families" in stored["method"].iloc[0]
    assert stored["holdout_points"].astype(int).sum() > 0


BOUNDED = {  # column prefix in the report -> (fewest points a bounded scope must have, bounds per scope)
    "holdout": (4, HOLDOUT_BOUNDS), "train_ttft": (1, TTFT_TRAIN_BOUNDS), "holdout_ttft": (40, TTFT_HOLDOUT_BOUNDS)}


@pytest.mark.parametrize(("prefix", "scope"), [(p, s) for p, (_, b) in BOUNDED.items() for s in sorted(b)])
def test_error_per_scope_is_bounded(holdout: Any, prefix: str, scope: str) -> None:
    # held-out throughput, training TTFT and held-out TTFT: each scope's median and worst error stay within bounds
    least, bounds = BOUNDED[prefix]
    median, worst = bounds[scope]
    row = holdout.loc[scope]
    assert row[f"{prefix}_points"] >= least
    assert row[f"{prefix}_median_pct"] <= median, row
    assert row[f"{prefix}_worst_pct"] <= worst, row


def test_ttft_is_reported_per_split(holdout: Any) -> None:
    res, _ = calibration.report()
    fitted = res[(res["fitted"] == "yes") & res["ttft_error_pct"].notna()]
    for split, prefix in (("train", "train_ttft"), ("holdout", "holdout_ttft")):
        errors = fitted.loc[fitted["split"] == split, "ttft_error_pct"].abs()
        assert holdout.loc["all", f"{prefix}_points"] == len(errors)
        if len(errors):
            assert holdout.loc["all", f"{prefix}_worst_pct"] == pytest.approx(errors.max(), abs=0.051)
    assert holdout.loc["all", "train_ttft_points"] + holdout.loc["all", "holdout_ttft_points"] == holdout.loc[
        "all", "ttft_points"]
    text = calibration.holdout_text()
    assert "time to first token" in text and "held-out n" in text


def test_training_error_ttft_and_deepseek_no_worse_than_before(holdout: Any) -> None:
    assert holdout.loc["all", "train_median_pct"] <= TRAIN_BOUNDS["all"][0]
    assert holdout.loc["all", "train_worst_pct"] <= TRAIN_BOUNDS["all"][1]
    assert holdout.loc["all", "ttft_points"] >= 8
    res, _ = calibration.report()
    dsr1 = res[(res["model"] == "deepseek-v3") & (res["fitted"] == "yes")]
    assert len(dsr1) >= 60
    assert dsr1["error_pct"].abs().median() <= 12.5  # the bound (measured 4.2 % with the stored factors)


def test_per_user_speed_at_the_published_concurrency_is_bounded() -> None:
    res, _ = calibration.report()
    fitted = res[res["fitted"] == "yes"]
    for split, (median, worst) in PER_USER_BOUNDS.items():
        err = fitted.loc[fitted["split"] == split, "per_user_error_pct"].dropna().abs()
        assert len(err) >= 50, split
        assert err.median() <= median and err.max() <= worst, (split, err.median(), err.max())


def test_a_point_with_its_concurrency_is_predicted_at_that_concurrency() -> None:
    # Little's law on the prediction itself: c sequences each decoding at v tokens/s on a replica of n accelerators
    # give at most c x v / n output tokens/s per accelerator (less the time each spends in its prefill). The old rule
    # predicted at the per-user speed and, where the model was a little slower than measured, fell to batch 1: 125
    # tokens/s for the H100 point at QPS 4 (7 in flight, 816 measured), a ratio of 1/7 here.
    res, _ = calibration.report()
    pts = res[(res["source_group"] == "trtllm-0.14-serving") & (res["max_batch"] >= 3) & res["measured"].notna()]
    assert len(pts) >= 30
    ratio = pts["predicted"] * pts["replica"] / (pts["max_batch"] * pts["predicted_per_user"])
    assert ratio.between(0.5, 1.0 + 1e-9).all(), pts.loc[~ratio.between(0.5, 1.0 + 1e-9), "point"].tolist()


def test_attention_data_parallel_over_a_replica_is_not_fitted_and_on_one_gpu_is() -> None:
    # TensorRT-LLM 1.0 and the developer guide ran their MoE models with attention data parallelism: on one GPU it
    # changes nothing; over the eight GPUs of a Qwen3-235B-A22B replica it is a stack the rows do not fully state
    # (the seventh validation set's attention-data-parallel rows are refused by the same rule and reported by
    # calibrate --holdout: tests/test_validation_sets.py)
    curves = economics.catalog.throughput_curves()
    dp = curves[curves["data_parallel_attention"] & (curves["holdout_group"] != "inferencex-2026")
                & ~curves["holdout_group"].isin(calibration.VALIDATION_SOURCES)]
    assert len(dp) >= 70 and dp["note"].str.contains("attention data parallelism").all()
    pts = calibration.points()
    pts = pts[pts["point"].str.partition(" @ ")[0].isin(set(dp["curve_id"]))]
    wide = pts["replica"] > 1
    # Qwen3-235B-A22B at TP8 (27 points) and Llama 4 Scout at TP4 (18)
    assert wide.sum() == 45 and set(pts.loc[wide, "model"]) == {"qwen3-235b-a22b", "llama-4-scout"}
    assert pts.loc[wide, "fitted"].str.startswith("no: attention data-parallel").all()
    assert (pts.loc[~wide, "fitted"] == "yes").all()


def test_at_least_150_points_across_families_and_accelerators() -> None:
    pts = calibration.points()
    fitted = pts[pts["fitted"] == "yes"]
    assert len(fitted) >= 150
    assert fitted["model"].nunique() >= 8
    assert {"a100-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "mi355x"} <= set(fitted["accelerator"])
    assert fitted["measured_ttft"].notna().sum() >= 8


def test_estimate_does_not_import_calibration() -> None:
    tree = ast.parse(inspect.getsource(estimate))
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names]
    assert not [n for n in names if "calibration" in n]
    # and nothing is imported inside a function
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert not [n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)], node.name


# --- hand-worked terms ----------------------------------------------------------------------------------------

def test_allreduce_of_a_decode_batch() -> None:
    # 64 tokens x 8,192 hidden x 2 B = 1,048,576 B; over 8: 2 x 7 / 8 = 1.75 of it per link, 2 x log2(8) = 6 rounds
    # 1.75 x 1,048,576 B / 450e9 B/s = 4.0777 us, + 6 x 5 us latency = 34.0777 us; 80 layers x 2 = 5.45244 ms
    one = th.allreduce_s(64 * 8192 * 2, 8, 450, 5)
    assert float(one) == pytest.approx(30e-6 + 1.75 * 1_048_576 / 450e9, rel=1e-12)
    assert float(th.tensor_parallel_s(64, 8192, 80, 8, 450, 5)) == pytest.approx(160 * (30e-6 + 1.75 * 1_048_576
                                                                                         / 450e9), rel=1e-12)
    # 6 accelerators: ceil(log2 6) = 3, so 6 rounds as for 8
    assert float(th.allreduce_s(0, 6, 450, 5)) == pytest.approx(30e-6, rel=1e-12)
    assert float(th.allreduce_s(1e9, 1, 450, 5)) == 0.0  # one accelerator: nothing to reduce
    assert float(th.allreduce_s(1e9, 8, float("nan"), float("nan"))) == 0.0  # unknown link: inside the overhead


def test_queued_ttft_is_the_mean_m_d_1_wait() -> None:
    # rho = 0.5: wait = 0.5 / (2 x 0.5) = 0.5 service times -> 0.4 s x 1.5 = 0.6 s
    assert float(th.queued_time_to_first_token_s(0.4, 0.5)) == pytest.approx(0.6)
    assert float(th.queued_time_to_first_token_s(0.4, 0.0)) == pytest.approx(0.4)
    assert np.isfinite(th.queued_time_to_first_token_s(0.4, 1.0))


def test_the_kv_cache_is_read_at_its_own_bandwidth_share() -> None:
    # batch 100 on 1 accelerator at 1 TB/s: weights 10 GB at eta_BW 1.0 -> 10 ms; KV 100 x 0.05 GB = 5 GB at
    # eta_KV 0.25 -> 20 ms (attention 100 x 1 GFLOP / 100 TFLOPS = 1 ms is below it); + 1 ms overhead = 31 ms
    t = th.decode_step_s(100, 1, 1.0, 100, 1.0, 1.0, 10e9, 0.05e9, 1e9, 0.001, 1e9, 0.25)
    assert float(t) == pytest.approx(0.031, rel=1e-12)
    # no KV utilization (NaN): the weights' share, 5 GB at 1.0 -> 5 ms: 10 + 5 + 1 = 16 ms
    assert float(th.decode_step_s(100, 1, 1.0, 100, 1.0, 1.0, 10e9, 0.05e9, 1e9, 0.001, 1e9)) == pytest.approx(
        0.016, rel=1e-12)


def test_a_scenario_bandwidth_utilization_also_sets_the_kv_reads() -> None:
    # the calibrated KV share applies only where the scenario leaves bandwidth_utilization empty
    base = _scenario("h100-sxm", "llama-3.1-8b", 2000, 500, accelerators_per_replica=1, max_batch_size=64)
    given = economics.evaluate_scenario({**base, "bandwidth_utilization": 0.4, "compute_utilization": 0.5,
                                         "prefill_compute_utilization": 0.5, "step_overhead_us_per_layer": 0.0})
    m = economics.catalog.models().loc["llama-3.1-8b"]
    rec = economics.catalog.accelerator_record("h100-sxm")
    # decode at batch 64, context 2,250 on average, FP8 weights and KV (1 byte): weights 8.03 GB; KV per sequence
    # 2 x 32 layers x 8 heads x 128 x 1 B x 2,250 = 147.456 MB; both at 3.35 TB/s x 0.4 (the calibrated KV share,
    # 0.80 on Hopper, is not used)
    weights_s = m["active_params_b"] * 1e9 / (rec["bandwidth_tb_per_s"] * 1e12 * 0.4)
    kv_s = 64 * 2 * 32 * 8 * 128 * 2250 / (rec["bandwidth_tb_per_s"] * 1e12 * 0.4)
    assert given["batch_size"] == 64
    # the decode step is at least the two memory terms (compute and attention FLOPs are far below them here)
    step = 64 / given["output_tokens_per_s_per_accelerator"]
    assert step == pytest.approx(weights_s + kv_s, rel=0.02)


def test_decode_step_adds_the_weight_and_attention_rooflines() -> None:
    # batch 100 on 1 accelerator, 1 TB/s x 1, 100 TFLOPS x 1: weights 10 GB -> 10 ms vs 100 x 20 GFLOP -> 20 ms: 20 ms
    # KV 100 x 0.05 GB = 5 GB -> 5 ms vs attention 100 x 1 GFLOP -> 1 ms: 5 ms; + 1 ms overhead = 26 ms
    t = th.decode_step_s(100, 1, 1.0, 100, 1.0, 1.0, 10e9, 0.05e9, 20e9, 0.001, 1e9)
    assert float(t) == pytest.approx(0.026, rel=1e-12)


# --- physical sanity ----------------------------------------------------------------------------------------

PAIRS = st.tuples(st.sampled_from(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "mi355x"]),
                  st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3",
                                   "qwen3-32b", "mistral-7b", "gpt-oss-120b", "mixtral-8x22b"]),
                  st.integers(16, 8000), st.integers(16, 2000))


def _scenario(acc: str, model: str, i: int, o: int, **more: Any) -> dict[str, Any]:
    prec = "bf16" if acc == "a100-sxm" else "fp8"
    return {"accelerator": acc, "model": model, "precision": prec, "input_tokens_per_request": i,
            "output_tokens_per_request": o, "accelerator_count": 8, "ownership": "rent",
            "rent_usd_per_accelerator_hour": 2.0, **more}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PAIRS)
def test_batch_one_never_beats_the_bandwidth_bound(pair: tuple[Any, ...]) -> None:
    acc, model, i, o = pair
    out = economics.evaluate_scenario(_scenario(acc, model, i, o, max_batch_size=1))
    if not out["feasible"]:
        return
    rec = economics.catalog.accelerator_record(acc)
    m = economics.catalog.models().loc[model]
    bytes_per = 2.0 if acc == "a100-sxm" else 1.0
    n = out["accelerators_per_replica"]
    # one token for one user reads at least the active weights: speed <= n x BW / (N_act x bytes)
    bound = n * rec["bandwidth_tb_per_s"] * 1e12 / (m["active_params_b"] * 1e9 * bytes_per)
    assert out["output_tokens_per_s_per_user"] <= bound * (1 + 1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PAIRS)
def test_large_batch_never_beats_the_compute_bound(pair: tuple[Any, ...]) -> None:
    acc, model, i, o = pair
    out = economics.evaluate_scenario(_scenario(acc, model, i, o, max_batch_size=4096))
    if not out["feasible"]:
        return
    rec = economics.catalog.accelerator_record(acc)
    m = economics.catalog.models().loc[model]
    peak = rec["bf16_tflops"] if acc == "a100-sxm" else rec["fp8_tflops"]
    # every decoded token costs at least 2 N_act FLOPs; every prompt token too
    assert out["output_tokens_per_s_per_accelerator"] <= peak * 1e12 / (2 * m["active_params_b"] * 1e9)
    assert out["input_tokens_per_s_per_accelerator"] <= peak * 1e12 / (2 * m["active_params_b"] * 1e9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PAIRS, st.floats(1.2, 4.0), st.none() | st.floats(5.0, 100.0))
def test_more_flops_never_slows_the_estimate(pair: tuple[Any, ...], factor: float, target: float | None) -> None:
    acc, model, i, o = pair
    field = "accelerator_bf16_tflops" if acc == "a100-sxm" else "accelerator_fp8_tflops"
    rec = economics.catalog.accelerator_record(acc)
    base = rec["bf16_tflops"] if acc == "a100-sxm" else rec["fp8_tflops"]
    rows = [_scenario(acc, model, i, o, target_output_tokens_per_s_per_user=target, **{field: base * f})
            for f in (1.0, factor)]
    slow, fast = (economics.evaluate_scenario(r) for r in rows)
    if slow["feasible"]:
        assert fast["feasible"]
        assert fast["capacity_requests_per_s_per_accelerator"] >= slow[
            "capacity_requests_per_s_per_accelerator"] * (1 - 1e-9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PAIRS, st.integers(2, 8))
def test_ttft_grows_with_the_prompt(pair: tuple[Any, ...], times: int) -> None:
    acc, model, i, o = pair
    short, long = (economics.evaluate_scenario(_scenario(acc, model, length, o, accelerators_per_replica=8,
                                                         max_batch_size=1))
                   for length in (i, i * times))
    if short["feasible"] and long["feasible"]:
        assert long["time_to_first_token_s"] > short["time_to_first_token_s"]


@settings(max_examples=200, deadline=None)
@given(st.floats(1, 4096), st.integers(1, 8), st.floats(0.05, 0.95), st.floats(0.05, 0.95), st.floats(1.01, 4.0),
       st.floats(0.0, 1e9), st.floats(0.0, 1e10))
def test_a_slower_kv_read_never_speeds_the_decode_step(batch: float, n: int, eta_bw: float, eta_kv: float,
                                                       factor: float, kv_bytes: float, weights: float) -> None:
    # the KV term only adds time when its share of the bandwidth falls, and more bandwidth never adds time
    def step(bw: float, kv_eta: float) -> float:
        return float(th.decode_step_s(batch, n, bw, 1000.0, eta_bw, 0.5, weights, kv_bytes, 2e9, 1e-3, 1e8, kv_eta))
    assert step(3.35, eta_kv / factor) >= step(3.35, eta_kv) * (1 - 1e-12)
    assert step(3.35 * factor, eta_kv) <= step(3.35, eta_kv) * (1 + 1e-12)
    # the KV share only touches the attention term: with no KV cache it changes nothing
    assert float(th.decode_step_s(batch, n, 3.35, 1000.0, eta_bw, 0.5, weights, 0.0, 2e9, 1e-3, 1e8, eta_kv)) == (
        pytest.approx(float(th.decode_step_s(batch, n, 3.35, 1000.0, eta_bw, 0.5, weights, 0.0, 2e9, 1e-3, 1e8)),
                      rel=1e-12))



def test_arrival_limited_points_are_compared_on_ttft_only() -> None:
    # Poisson-load points with under two requests in flight measure the arrival rate: no throughput is compared or
    # shown for them (no NaN error printed), their TTFT is
    res, _ = calibration.report()
    limited = res[(res["fitted"] == "yes") & res["measured"].isna()]
    assert len(limited) == 11
    assert limited["point"].str.startswith("trtserve014-").all()
    assert limited["predicted"].isna().all() and limited["error_pct"].isna().all()
    assert limited["measured_ttft"].notna().all() and limited["ttft_error_pct"].notna().all()


def test_a_remembered_fit_answers_only_for_the_same_points_held_factors_and_limits() -> None:
    # the leave-out refits look up a scope's fit when they fitted the same points before (calibration._remembered_fit):
    # a fit is deterministic, and whatever else changes (a point's figure, a held factor, a limit) is fitted again;
    # two points and one free factor in a narrow range keep each Nelder-Mead search short
    pts = calibration.points()
    pts = pts[calibration.is_fitted(pts) & (pts["split"] == "train")].head(2).reset_index(drop=True)
    fixed = {f: calibration.START[f] for f in calibration.FITTED if f != "bandwidth_utilization"}
    limits = {"bandwidth_utilization": (0.5, 0.7)}
    calibration._fits.clear()  # the counts below are this test's fits (it runs before the leave-out tests)
    first = calibration._remembered_fit(pts, fixed, limits)
    assert first == calibration._fit(pts, fixed, limits) and len(calibration._fits) == 1
    assert calibration._remembered_fit(pts.copy(), dict(fixed), dict(limits)) == first and len(calibration._fits) == 1
    changed = [(pts.assign(measured=pts["measured"] * 1.001), fixed, limits),
               (pts, {**fixed, "compute_utilization": 0.3}, limits),
               (pts, fixed, {"bandwidth_utilization": (0.5, 0.69)})]
    for k, (points, held, narrow) in enumerate(changed):
        calibration._remembered_fit(points, held, narrow)
        assert len(calibration._fits) == 2 + k  # fitted, not looked up


def test_leaving_a_family_out_refits_without_it_and_predicts_it_from_the_rest() -> None:
    from economics.studies import leave_out

    # AMD CDNA 4 (MI355X) has a scope of its own in the stored fit; refitted without its points it has none, and its
    # points take the factors of the scopes that remain (global, or the model class's)
    table = leave_out.leave_out("family", ["amd-cdna4"])
    assert len(table) and set(table["left_out"]) == {"amd-cdna4"} and set(table["family"]) == {"amd-cdna4"}
    assert "amd-cdna4" not in table["scopes_fitted"].iloc[0].split() and "global" in table["scopes_fitted"].iloc[0]
    assert not (table["split"] == "blind").any()  # the blind split stays a test on data added later
    assert np.isfinite(table["predicted"]).all()
    # the error is the prediction's own: (predicted / measured - 1) x 100, point by point
    assert np.allclose(table["error_pct"], (table["predicted"] / table["measured"] - 1) * 100)
    stored = calibration.report()[0].set_index("point").loc[table["point"], "predicted"].to_numpy()
    assert not np.allclose(stored, table["predicted"].to_numpy())  # other factors than the family's own
    row = leave_out.summary(table).set_index("left_out").loc["all"]
    assert row["points"] == len(table) and row["median_abs_error_pct"] <= row["worst_abs_error_pct"]
    # the figures calibrate --holdout prints without refitting are this refit's (data/leave_out_errors.csv is current)
    stored = economics.catalog.leave_out_errors().set_index(["kind", "left_out"]).loc[("family", "amd-cdna4")]
    assert int(stored["points"]) == len(table)
    assert float(stored["median_abs_error_pct"]) == row["median_abs_error_pct"]
    assert float(stored["worst_abs_error_pct"]) == row["worst_abs_error_pct"]
    assert "leave-one-family-out (stored" in leave_out.stored_errors_text()


def test_leaving_a_table_out_refits_without_it_and_its_stored_errors_are_current() -> None:
    from economics.studies import leave_out

    # AMD's vLLM dev-docker throughput table (rocm-vllm): 4 fitted points and 4 of held-out models; refitted without
    # the table, every one of its points is predicted from the others' factors
    table = leave_out.leave_out("source", ["rocm-vllm"])
    assert len(table) == 8 and set(table["source_group"]) == {"rocm-vllm"} and set(table["left_out"]) == {"rocm-vllm"}
    assert set(table["split"]) == {"train", "holdout"}
    assert np.allclose(table["error_pct"], (table["predicted"] / table["measured"] - 1) * 100)
    row = leave_out.summary(table).set_index("left_out").loc["all"]
    stored = economics.catalog.leave_out_errors().set_index(["kind", "left_out"]).loc[("source", "rocm-vllm")]
    assert int(stored["points"]) == len(table)
    assert float(stored["median_abs_error_pct"]) == row["median_abs_error_pct"]


# Leave-one-out bounds, (median, worst) absolute error [%] over every point, by what is left out of the fit. Measured
# 2026-12-02 (data/leave_out_errors.csv, python -m economics calibrate --ranges --write): family 15.8 / 153.9, model
# 15.7 / 196.5, published table 10.4 / 196.5. The bounds keep about a tenth over them, as the held-out bounds do: a
# change to the roofline or the fit that makes the estimate worse where nothing was measured fails here.
LEAVE_OUT_BOUNDS = {"family": (17.5, 170.0), "model": (17.5, 216.0), "source": (11.5, 216.0)}


@pytest.mark.parametrize("kind", list(LEAVE_OUT_BOUNDS))
def test_the_leave_one_out_error_is_bounded(kind: str) -> None:
    stored = economics.catalog.leave_out_errors().set_index(["kind", "left_out"]).loc[(kind, "all")]
    median, worst = LEAVE_OUT_BOUNDS[kind]
    assert int(float(stored["points"])) >= 900
    assert float(stored["median_abs_error_pct"]) <= median and float(stored["worst_abs_error_pct"]) <= worst


def test_the_points_read_each_catalog_row_as_iterrows_gives_it() -> None:
    # the curve points and claims are read a column at a time (_records), not a Series per row: the same cells,
    # each of the same type, in the same order, for every row of both catalogs
    from economics import catalog
    from economics.studies.calibration_points import _records

    for table in (catalog.throughput_curves(), catalog.throughput_claims()):
        records = _records(table)
        assert len(records) == len(table) > 100
        for (index, row), record in zip(table.iterrows(), records, strict=True):
            assert list(record) == list(row.index), index
            for a, b in zip(row.tolist(), record.values(), strict=True):
                assert type(a) is type(b) and (a == b or (a != a and b != b)), (index, a, b)
