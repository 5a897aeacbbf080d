"""An estimate's range and its label: how far an estimated throughput can be from a measurement, and why."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from economics import catalog
from economics.engine import batch, estimate_range
from economics.schema.outputs import RowWarning
from economics.studies import calibration, leave_out

# 5,000 tokens in, 700 out, 20 tok/s per user: no measured curve matches these lengths, so the roofline answers
SHAPE = {"precision": "fp8", "input_tokens_per_request": 5000, "output_tokens_per_request": 700,
         "target_output_tokens_per_s_per_user": 20}
RANGES = catalog.estimate_ranges()
# the row a dense model's estimate on Hopper takes: the family's dense-model range where one is stored
HOPPER_DENSE = estimate_range.fitted_scope(RANGES.index, "nvidia-hopper", "dense")


def _row(accelerator: str, model: str, **more: Any) -> dict[str, Any]:
    return batch.evaluate_scenario({"accelerator": accelerator, "model": model, **SHAPE, **more})


def test_an_estimate_on_a_fitted_family_says_what_it_was_calibrated_on() -> None:
    r = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9)
    hopper = RANGES.loc[HOPPER_DENSE]
    assert r["throughput_source"] == "estimated"
    assert r["throughput_basis"].startswith(f"estimated; calibrated on {hopper['train_points']} points of "
                                            "nvidia-hopper (held-out median")
    assert RowWarning.ROOFLINE_CALIBRATED.text in r["warnings"]
    assert RowWarning.ROOFLINE_UNSEEN_FAMILY.text not in r["warnings"]
    # the range is the estimate times the stored P10 and P90 of measured / estimated
    est = r["output_tokens_per_s_per_accelerator"]
    assert r["output_tokens_per_s_per_accelerator_p10"] == pytest.approx(est * float(hopper["ratio_p10"]))
    assert r["output_tokens_per_s_per_accelerator_p90"] == pytest.approx(est * float(hopper["ratio_p90"]))


def test_an_estimate_on_a_family_never_measured_is_not_called_calibrated() -> None:
    r = _row("gaudi3", "llama-3.1-70b", demand_output_tokens_per_day=1e9)
    unseen = RANGES.loc["unseen:dense"]
    low, high = (f"{(float(unseen[k]) - 1) * 100:+.0f} %" for k in ("ratio_p10", "ratio_p90"))
    assert r["throughput_basis"].startswith(f"estimated; no measured point on intel-gaudi3: global's factors "
                                            f"borrowed, unseen-family range: expect {low} to {high}")
    assert "calibrated" not in r["throughput_basis"]
    assert RowWarning.ROOFLINE_UNSEEN_FAMILY.text in r["warnings"]
    assert RowWarning.ROOFLINE_CALIBRATED.text not in r["warnings"]


def test_factors_fitted_on_the_other_model_class_are_said_to_be() -> None:
    # AMD CDNA 4's training points are all MoE and it has no dense scope: a dense model on an MI355X takes factors
    # fitted on MoE models only, and the label and a warning say so
    cdna4 = RANGES.loc["amd-cdna4"]
    assert int(cdna4["train_moe_points"]) / int(cdna4["train_points"]) >= estimate_range.OTHER_CLASS_SHARE
    assert "amd-cdna4:dense" not in catalog.calibration().index
    r = _row("mi355x", "llama-3.1-70b", ownership="rent", rent_usd_per_accelerator_hour=2.0,
             demand_output_tokens_per_day=1e9)
    assert f"fitted mostly on MoE models ({cdna4['train_moe_points']} of {cdna4['train_points']} points)" in (
        r["throughput_basis"])
    assert RowWarning.CLASS_MISMATCH.text in r["warnings"]
    # AMD CDNA 3 has a dense scope of its own (AMD's vLLM latency table): a dense model there is not flagged
    assert "amd-cdna3:dense" in catalog.calibration().index
    r = _row("mi300x", "llama-3.1-70b", ownership="rent", rent_usd_per_accelerator_hour=2.0,
             demand_output_tokens_per_day=1e9)
    assert "fitted mostly" not in r["throughput_basis"] and RowWarning.CLASS_MISMATCH.text not in r["warnings"]


def test_factors_a_user_gives_are_not_the_calibrated_ones() -> None:
    r = _row("h100-sxm", "llama-3.1-70b", bandwidth_utilization=0.7, demand_output_tokens_per_day=1e9)
    assert r["throughput_basis"].startswith("estimated; the efficiency factors you gave, unseen-family range: expect")


def test_a_measured_figure_has_no_range() -> None:
    r = _row("h100-sxm", "llama-3.1-70b", output_tokens_per_s_per_accelerator=1000.0,
             demand_output_tokens_per_day=1e9)
    assert r["throughput_basis"] == ""
    for name in ("output_tokens_per_s_per_accelerator_p10", "cost_usd_per_m_tokens_low", "accelerators_high",
                 "facility_power_kw_low"):
        assert r[name] is None, name


def test_a_fixed_busy_fleet_costs_in_inverse_proportion_to_its_throughput() -> None:
    # 8 accelerators, no demand (busy all the time): the hourly cost does not depend on the throughput, so
    # cost per M tokens = cost_usd_per_hour / (T x 8 x 3600 / 1e6) and the low cost is at the high throughput:
    # cost_low = cost x T / T_p90 = cost / ratio_p90, cost_high = cost / ratio_p10
    r = _row("h100-sxm", "llama-3.1-70b", accelerator_count=8)
    hopper = RANGES.loc[HOPPER_DENSE]
    assert r["cost_usd_per_m_tokens_low"] == pytest.approx(r["cost_usd_per_m_tokens"] / float(hopper["ratio_p90"]))
    assert r["cost_usd_per_m_tokens_high"] == pytest.approx(r["cost_usd_per_m_tokens"] / float(hopper["ratio_p10"]))
    assert r["accelerators_low"] == r["accelerators_high"] == 8  # a given fleet is the fleet at both ends


def test_a_sized_fleet_at_each_end_is_the_fleet_that_throughput_needs() -> None:
    # 1e9 output tokens a day at the P10 throughput T10: ceil(1e9 / 86,400 / T10 / 8) x 8 accelerators (whole
    # 8-accelerator systems, peak_to_average 1) -- the same ceiling the sizing applies to the central estimate
    r = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9, peak_to_average=1.0,
             input_tokens_per_s_per_accelerator=1e10)  # prefill free: the fleet is the decode fleet
    t10, t90 = r["output_tokens_per_s_per_accelerator_p10"], r["output_tokens_per_s_per_accelerator_p90"]
    assert r["accelerators_high"] == int(np.ceil(1e9 / 86_400 / t10 / 8) * 8)
    assert r["accelerators_low"] == int(np.ceil(1e9 / 86_400 / t90 / 8) * 8)


@settings(max_examples=25, deadline=None)
@given(acc=st.sampled_from(["h100-sxm", "b200", "gaudi3", "h200-sxm"]),
       demand=st.floats(1e7, 1e11), count=st.one_of(st.none(), st.integers(8, 4000)))
def test_every_range_brackets_its_estimate(acc: str, demand: float, count: int | None) -> None:
    r = _row(acc, "llama-3.1-8b", demand_output_tokens_per_day=demand, accelerator_count=count)
    for name in ("cost_usd_per_m_tokens", "accelerators", "facility_power_kw"):
        low, high = r[f"{name}_low"], r[f"{name}_high"]
        assert low is not None and high is not None and np.isfinite([low, high]).all(), name
        assert low <= high, name
    assert r["output_tokens_per_s_per_accelerator_p10"] < r["output_tokens_per_s_per_accelerator_p90"]


def test_a_table_carries_the_range_column_by_column() -> None:
    import pandas as pd

    df = pd.DataFrame([{"accelerator": a, "model": "llama-3.1-8b", **SHAPE, "demand_output_tokens_per_day": 1e9}
                       for a in ("h100-sxm", "gaudi3")] + [{"accelerator": "h100-sxm", "model": "llama-3.1-8b",
                                                            **SHAPE, "output_tokens_per_s_per_accelerator": 900.0,
                                                            "demand_output_tokens_per_day": 1e9}])
    res = batch.evaluate(df)
    one = [_row(a, "llama-3.1-8b", demand_output_tokens_per_day=1e9) for a in ("h100-sxm", "gaudi3")]
    for i, r in enumerate(one):
        assert res["cost_usd_per_m_tokens_high"][i] == pytest.approx(r["cost_usd_per_m_tokens_high"])
        assert res["throughput_basis"][i] == r["throughput_basis"]
    assert pd.isna(res["cost_usd_per_m_tokens_high"][2]) and res["throughput_basis"][2] == ""


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=2, max_size=40), st.floats(0.0, 1.0))
def test_equal_weights_give_the_midpoint_quantile(values: list[float], q: float) -> None:
    # the midpoint rule is numpy's "hazen" method: the i-th smallest of n at (i - 0.5) / n
    v = np.array(values)
    got = leave_out.weighted_quantiles(v, np.ones(len(v)), [q])[0]
    assert got == pytest.approx(float(np.quantile(v, q, method="hazen")))


def test_every_fitted_family_has_a_range_and_unseen_ones_have_theirs() -> None:
    fitted = [s for s in catalog.calibration().index if s != "global" and ":" not in s]
    assert set(fitted) <= set(RANGES.index) and {"fitted", "unseen", "unseen:dense"} <= set(RANGES.index)
    for scope, r in RANGES.iterrows():
        assert float(r["ratio_p10"]) < float(r["ratio_p50"]) < float(r["ratio_p90"]), scope
        assert int(r["points"]) >= leave_out.RANGE_MIN_POINTS, scope


def test_the_validation_split_is_never_fitted_and_each_point_is_checked_against_its_range() -> None:
    from economics.studies import calibration

    pts = calibration.points()
    val = pts[pts["source_group"].isin(calibration.VALIDATION_SOURCES)]
    assert len(val) >= 50 and set(val["split"]) == {"validation"}
    assert "intel-gaudi3" not in catalog.calibration().index  # no Gaudi point was ever fitted
    table, refused = leave_out.validation(), leave_out.validation_refused()
    # every validation point is either estimated (in the coverage) or listed as refused with its reason: none dropped
    assert len(table) + len(refused) == len(val) and not set(table["point"]) & set(refused["point"])
    no_estimate = refused["reason"] == leave_out.NO_ESTIMATE
    assert len(table) + int(no_estimate.sum()) == int((val["fitted"] == "yes").sum())
    assert (refused.loc[~no_estimate, "reason"].str.startswith("no: ")).all()
    # the range is the point's prediction times its family's stored ratios; inside means measured within it
    gaudi = table[table["accelerator"] == "gaudi3"]
    unseen = RANGES.loc["unseen:dense"]
    assert np.allclose(gaudi["low"], gaudi["predicted"] * float(unseen["ratio_p10"]))
    assert (table["inside"] == ((table["measured"] >= table["low"]) & (table["measured"] <= table["high"]))).all()
    assert gaudi["basis"].str.startswith("estimated; no measured point on intel-gaudi3").all()


def test_the_planner_candidate_table_says_where_each_rate_comes_from() -> None:
    from economics.studies import planner

    s = economics_default()
    result = planner.plan(s, accelerators=["h100-sxm", "gaudi3"])
    table = result.candidates.set_index("name")
    assert table.loc["gaudi3 own", "throughput"].startswith("estimated; no measured point on intel-gaudi3")
    # the default scenario's H100 rate is a measured curve: named as such, never as an estimate
    assert table.loc["h100-sxm own", "throughput"].startswith("measured curve ")


def economics_default() -> Any:
    import economics

    return economics.default_scenario()


def test_a_static_batch_is_the_served_arithmetic() -> None:
    # Intel's Gaudi 3 table, Llama 3.1 70B on 8 cards, batch 400, 2048 in / 128 out, with a prefill of 40,000
    # token/s for the replica and a 60 ms step: 400 x 128 / (400 x 2048 / 40,000 + 128 x 0.06) = 51,200 / 28.16
    # = 1,818.2 token/s for the replica, 227.3 per card; continuous batching's requests per second per card,
    # 1 / (2048 / 5,000 + 128 / (400 / (8 x 0.06))), times 128 tokens gives the same
    from economics.domain import capacity
    from economics.domain import throughput as th

    replica = float(th.static_batch_output_tokens_per_s(400, 2048, 128, 40_000.0, 0.06))
    assert replica == pytest.approx(51_200 / 28.16)
    per_card = 128 * float(capacity.requests_per_s_per_accelerator(2048, 128, 0.0, 40_000.0 / 8, 400 / (8 * 0.06)))
    assert per_card == pytest.approx(replica / 8)


def test_an_all_reduce_pays_its_latency_once_per_round() -> None:
    # batch 1 of Llama 3.1 70B (hidden 8,192, BF16 activations: 16,384 bytes) over 8 MI300X (448 GB/s, 1.5 us):
    # 2 x log2(8) = 6 rounds x 1.5 us = 9 us, plus 2 x 7/8 x 16,384 B / 448 GB/s = 0.064 us
    from economics.domain import throughput as th

    assert float(th.allreduce_s(16_384, 8, 448, 1.5)) * 1e6 == pytest.approx(9.064, abs=1e-3)
    # per step: two per layer over 80 layers
    assert float(th.tensor_parallel_s(1, 8192, 80, 8, 448, 1.5)) * 1e3 == pytest.approx(160 * 9.064e-3, abs=1e-5)


def test_no_scope_is_slower_at_batch_1_than_its_fastest_measured_batch_1_point() -> None:
    from economics.studies import calibration

    pts = calibration.points()
    train = pts[(pts["fitted"] == "yes") & (pts["split"] == "train")]
    cal = catalog.calibration()
    checked = 0
    for scope in cal.index:
        fam, _, cls = scope.partition(":")
        mine = train if scope == "global" else train[train["family"] == fam]
        if cls:
            mine = mine[mine["model_class"] == cls]
        bound = calibration.batch_one_overhead_bound_us(mine)
        if np.isfinite(bound):
            checked += 1
            assert float(cal.loc[scope, "step_overhead_us_per_layer"]) <= bound + 0.05, scope
    assert checked >= 2  # global and amd-cdna3's dense scope have batch-1 points


def test_the_weighted_quantile_worked_by_hand() -> None:
    # values 1, 2, 10 weighing 1, 1, 2 (total 4): each value's cumulative weight is counted at its centre,
    # (1 - 0.5) / 4 = 0.125, (2 - 0.5) / 4 = 0.375, (4 - 1) / 4 = 0.75, linear in between, the ends held flat.
    # P10 (below 0.125) = 1; P25 = 1 + (0.25 - 0.125) / (0.375 - 0.125) x (2 - 1) = 1.5;
    # P50 = 2 + (0.5 - 0.375) / (0.75 - 0.375) x (10 - 2) = 2 + 8 / 3 = 4.6667; P90 (past 0.75) = 10
    got = leave_out.weighted_quantiles(np.array([1.0, 2.0, 10.0]), np.array([1.0, 1.0, 2.0]), [0.1, 0.25, 0.5, 0.9])
    assert got == pytest.approx([1.0, 1.5, 2.0 + 8.0 / 3.0, 10.0])


def test_a_new_sources_spread_is_the_sources_spread_plus_the_spread_within_one_worked_by_hand() -> None:
    # x = ln(measured / predicted). Source A: -0.1 and +0.1 (median 0); B: +0.3; C: -0.3. The medians -0.3, 0,
    # +0.3 have the median 0 (the centre, every source one vote); offsets A 0, B +0.3, C -0.3; deviations within a
    # source: A -0.1 and +0.1 (each 1 / (3 x 2) = 1/6), B 0 (1/3), C 0 (1/3).
    # Every pair offset + deviation, weight 1/3 x the deviation's: for each offset o, o - 0.1 (1/18), o (2/18 twice),
    # o + 0.1 (1/18). Sorted, in 18ths: -0.4 (1), -0.3 (2, 2), -0.2 (1), -0.1 (1), 0 (2, 2), 0.1 (1), 0.2 (1),
    # 0.3 (2, 2), 0.4 (1); centres 0.5, 2, 4, 5.5, 6.5, 8, 10, 11.5, 12.5, 14, 16, 17.5.
    # P10 at 1.8: -0.4 + (1.8 - 0.5) / (2 - 0.5) x 0.1 = -0.31333; P50 at 9: between two 0s = 0;
    # P90 at 16.2: 0.3 + (16.2 - 16) / (17.5 - 16) x 0.1 = 0.31333.
    # The points pooled with every source weighing the same (the rule before) give -0.3 / +0.3: a new source may
    # sit where B or C sat *and* scatter as A did.
    x = np.array([-0.1, 0.1, 0.3, -0.3])
    got = leave_out.new_source_quantiles(x, np.array(["A", "A", "B", "C"]), [0.1, 0.5, 0.9])
    assert got["quantiles"] == pytest.approx([-0.31333, 0.0, 0.31333], abs=1e-5)
    assert got["sources"] == 3 and got["centre"] == 0.0
    # the parts: offsets -0.3, 0, 0.3 at centres 1/6, 1/2, 5/6 -> P10 -0.3, P90 0.3; deviations -0.1 (1/6), 0 (1/3),
    # 0 (1/3), 0.1 (1/6) at centres 1/12, 1/3, 2/3, 11/12 -> P10 = -0.1 + (0.1 - 1/12) / (1/4) x 0.1 = -0.09333
    assert got["between"] == pytest.approx([-0.3, 0.0, 0.3])
    assert got["within"] == pytest.approx([-0.09333, 0.0, 0.09333], abs=1e-5)


def test_a_fitted_familys_range_is_the_spread_across_its_tables() -> None:
    import pandas as pd

    # no point of a source the stored fit never saw is passed, so Ada's row is exactly the left-out-table errors given
    # here: table A, ten points predicted right (ratio measured / predicted = 1), and four tables of one point each
    # at ratios 0.5, 0.8, 1.25 and 2 (errors +100 %, +25 %, -20 %, -50 %). Five sources (RANGE_MIN_SOURCES), so Ada
    # has its own range. The medians 0.5, 0.8, 1, 1.25, 2 have the median 1 (the bias: none); no table scatters
    # around its own median, so a new table's ratio is one of the five medians, each 1/5, at centres 0.1 ... 0.9:
    # P10 = 0.5, P50 = 1, P90 = 2. Counting points, table A's ten 1s would make P10 = 0.8 and P90 = 1.25.
    errors = [0.0] * 10 + [100.0, 25.0, -20.0, -50.0]
    groups = ["A"] * 10 + ["B", "C", "D", "E"]
    source_table = pd.DataFrame({"error_pct": errors, "family": "nvidia-ada", "model_class": "dense",
                                 "source_group": groups, "left_out": groups})
    ampere = source_table.iloc[:4].assign(family="nvidia-ampere", source_group=["F", "G", "H", "I"])
    both = pd.concat([source_table, ampere], ignore_index=True)
    ranges = leave_out.range_table(both.iloc[:0], "2026-12", both, both.iloc[:0]).set_index("scope")
    ada = ranges.loc["nvidia-ada"]
    assert ada["basis"] == "left-out source" and (int(ada["points"]), int(ada["sources"])) == (14, 5)
    assert (float(ada["ratio_p10"]), float(ada["ratio_p50"]), float(ada["ratio_p90"])) == (0.5, 1.0, 2.0)
    assert (float(ada["between_source_p10"]), float(ada["between_source_p90"])) == (0.5, 2.0)
    assert (float(ada["within_source_p10"]), float(ada["within_source_p90"])) == (1.0, 1.0)
    # Ampere has four tables (fewer than five): it takes the pool of every fitted family
    assert leave_out.RANGE_MIN_SOURCES == 5
    assert ranges.loc["nvidia-ampere", "basis"] == "left-out source, every fitted family"
    assert int(ranges.loc["nvidia-ampere", "sources"]) == 9


def test_the_range_is_the_quantiles_of_the_held_out_errors_worked_by_hand() -> None:
    import pandas as pd

    # four points of sources the fit never saw, error = predicted / measured - 1: +25 % and +25 % (table A),
    # -20 % (table B), 0 % (table C). Ratios measured / predicted = 1 / (1 + e): 0.8, 0.8, 1.25, 1.0. The tables'
    # medians 0.8, 1.25, 1.0 have the median 1.0 (no bias); no table scatters around its own median, so a new
    # table's ratio is one of the three medians, each 1/3, at centres 1/6, 1/2, 5/6: P10 (below 1/6) = 0.8,
    # P50 = 1.0, P90 (past 5/6) = 1.25.
    # Median |error|, every table weighing the same: 0 (1), 20 (1), 25 (0.5), 25 (0.5) at 0.1667, 0.5, 0.75,
    # 0.9167: 20 %.
    errors = pd.Series([25.0, 25.0, -20.0, 0.0])
    groups = pd.Series(["A", "A", "B", "C"])
    train = pd.DataFrame({"model_class": ["dense", "moe"]})
    row = leave_out._range_row("x", "left-out source", errors, train, "hand", "2026-12", groups=groups)
    assert (row["ratio_p10"], row["ratio_p50"], row["ratio_p90"]) == (0.8, 1.0, 1.25)
    assert (row["sources"], row["source_median"], row["between_source_p10"], row["between_source_p90"]) == (
        3, 1.0, 0.8, 1.25)
    assert row["median_abs_error_pct"] == 20.0 and row["points"] == 4
    assert (row["train_points"], row["train_dense_points"], row["train_moe_points"]) == (2, 1, 1)
    # an estimate of 1,000 tokens/s then carries 800 to 1,250 tokens/s, its held-out median (the bias) 1,000


def test_the_range_says_its_held_out_median_and_explain_shows_it() -> None:
    r = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9)
    hopper = RANGES.loc[HOPPER_DENSE]
    assert r["throughput_basis"].endswith(f"median {estimate_range.percent(float(hopper['ratio_p50']))})")


# typed in by hand: a TPU v6e-like chip on the default accelerator id (32 GB, 1.64 TB/s, 918 BF16 TFLOPS)
TYPED = {"accelerator_memory_gb": 32.0, "accelerator_bandwidth_tb_per_s": 1.64, "accelerator_bf16_tflops": 918.0,
         "precision": "bf16", "model": "llama-3.1-8b"}


def test_a_typed_accelerator_borrows_factors_and_gets_the_unseen_family_range() -> None:
    r = batch.evaluate_scenario({"accelerator": "h100-sxm", **SHAPE, **TYPED, "demand_output_tokens_per_day": 1e9})
    unseen = RANGES.loc["unseen:dense"]
    assert r["throughput_basis"].startswith(
        "estimated; typed accelerator (accelerator_memory_gb, accelerator_bandwidth_tb_per_s, accelerator_bf16_tflops "
        "typed over h100-sxm's catalog figures): nvidia-hopper:dense's factors borrowed, unseen-family "
        f"range: expect {estimate_range.percent(float(unseen['ratio_p10']))} to "
        f"{estimate_range.percent(float(unseen['ratio_p90']))}")
    assert "calibrated on 3" not in r["throughput_basis"] and "points of nvidia-hopper" not in r["throughput_basis"]
    est = r["output_tokens_per_s_per_accelerator"]
    assert r["output_tokens_per_s_per_accelerator_p10"] == pytest.approx(est * float(unseen["ratio_p10"]))
    assert r["output_tokens_per_s_per_accelerator_p90"] == pytest.approx(est * float(unseen["ratio_p90"]))
    assert RowWarning.ROOFLINE_UNSEEN_FAMILY.text in r["warnings"]
    assert RowWarning.ROOFLINE_CALIBRATED.text not in r["warnings"]


def test_the_catalogs_own_figures_typed_again_are_not_a_typed_accelerator() -> None:
    h100 = catalog.accelerator_record("h100-sxm")
    same = {"accelerator_memory_gb": float(h100["memory_gb"]),
            "accelerator_bandwidth_tb_per_s": float(h100["bandwidth_tb_per_s"])}
    r = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9, **same)
    assert r["throughput_basis"] == _row("h100-sxm", "llama-3.1-70b",
                                         demand_output_tokens_per_day=1e9)["throughput_basis"]
    assert r["throughput_basis"].startswith("estimated; calibrated on")


def test_holdout_prints_coverage_per_family_on_each_set_outside_the_basis_alone() -> None:
    import pandas as pd

    # hand-made validation rows of the eighth set: Hopper +10 % (inside) and -30 % (outside); Ampere +20 % and +40 %
    # (both inside). Hopper: |error| median (10 + 30) / 2 = 20 %, worst 30 %, 1 of 2 inside, signed median
    # (10 - 30) / 2 = -10 %, high in 1; Ampere: 30 %, 40 %, 2 of 2, signed +30 %, high in 2. One hand-made row of the
    # eighth set's formats (added after, a set of its own): Ampere -5 %, inside, printed in its own section only
    table = pd.DataFrame({"source_group": ["azure-aibg-h100"] * 2 + ["qserve-paper-efficiency"] * 2
                          + ["qserve-paper-efficiency-formats"],
                          "family": ["nvidia-hopper"] * 2 + ["nvidia-ampere"] * 3,
                          "error_pct": [10.0, -30.0, 20.0, 40.0, -5.0], "inside": [True, False, True, True, True]})
    text = leave_out.validation_text(table)
    eighth = "per family, eighth set (gathered during the range rule change, measured after it) alone (no rule or " \
             "range has seen it):"
    formats = "per family, eighth set, formats added after (weights, compute and KV cache apart) alone (no rule or " \
              "range has seen it):"
    assert eighth in text and formats in text
    assert "seventh set (published tables, selection rule first)" not in text  # no row of it here
    last = text[text.index(eighth):text.index(formats)]
    hopper = next(line for line in last.splitlines() if line.strip().startswith("nvidia-hopper"))
    assert hopper.split()[1:] == ["2", "20.0%", "30.0%", "50.0%", "(1", "of", "2);", "median", "signed", "-10.0%,",
                                  "estimate", "high", "in", "1"]
    ampere = next(line for line in last.splitlines() if line.strip().startswith("nvidia-ampere"))
    assert "100.0% (2 of 2); median signed +30.0%, estimate high in 2" in ampere
    own = text[text.index(formats):text.index("per family, every validation point:")].splitlines()
    assert [line.split()[:2] for line in own[1:] if line.strip()] == [["nvidia-ampere", "1"]]
    assert "100.0% (1 of 1); median signed -5.0%, estimate high in 0" in own[1]


def test_the_sets_seen_before_the_range_rule_are_its_basis_and_later_ones_stay_out() -> None:
    # the ranges rest on the first seven validation sets (all looked at before the range was kept per model
    # class); a set added after that change tests it and is in no range
    sets = list(calibration.VALIDATION_SETS.values())
    assert calibration.RANGE_BASIS_SETS == 7
    assert set(calibration.RANGE_BASIS_SOURCES) == {"gaudi3-1.18", "oci-mi300x-405b", "rocm-blog-2025-latency",
                                                    "trtllm-0.9-static", "trtllm-0.14", "trtllm-0.15",
                                                    "rocm-vllm-latency-versions", "trtllm-0.5-h200-blog",
                                                    "rocm-vllm-0.10.2-perf", "gpustack-lab-vllm-0.11",
                                                    "amd-vllm-0.6-mi300x-fp8", "trtllm-0.12-quoted",
                                                    "trtllm-0.20-issue-4043", "vllm-0.6.6-issue-12315",
                                                    "vllm-pr-7117-h100", "vllm-pr-16458-tpu-v6e", "lmdeploy-0.2-a100",
                                                    "dstack-r1-offline", "dstack-r1-online", "trtllm-blog-falcon-h200",
                                                    "trtllm-blog-xqa-h200", "trtllm-blog-dsr1-perf"}
    assert not set(calibration.RANGE_BASIS_SOURCES) & {g for groups in sets[7:] for g in groups}


def test_explain_shows_the_held_out_median_step_with_its_numbers() -> None:
    # the P50 step is the estimate times the family's stored median ratio; the note says how far the estimate was
    # high or low at it: 1 / r50 - 1 (r50 > 1: measured above the estimate, so the estimate was low)
    scenario = {"accelerator": "h100-sxm", "model": "llama-3.1-70b", **SHAPE, "demand_output_tokens_per_day": 1e9}
    trace = batch.explain_scenario(scenario)
    r = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9)
    r50 = float(RANGES.loc[HOPPER_DENSE, "ratio_p50"])
    step = trace.step("output_tokens_per_s_per_accelerator_p50")
    assert step.value == pytest.approx(r["output_tokens_per_s_per_accelerator"] * r50)
    assert f"{abs(1 / r50 - 1) * 100:.0f} % {'low' if r50 > 1 else 'high'} at the median" in step.note
    names = [s.name for s in trace.steps]
    assert names.index("output_tokens_per_s_per_accelerator_p50") < names.index(
        "output_tokens_per_s_per_accelerator_p10")


def test_explain_shows_how_the_range_is_made_with_its_numbers() -> None:
    # the P90 step's note gives the parts of the stored range: how many sources, their medians' median, the
    # sources' spread and the spread within one, and the P10 and P90 they make together
    scenario = {"accelerator": "h100-sxm", "model": "llama-3.1-70b", **SHAPE, "demand_output_tokens_per_day": 1e9}
    note = batch.explain_scenario(scenario).step("output_tokens_per_s_per_accelerator_p90").note
    hopper = RANGES.loc[HOPPER_DENSE]
    assert note == estimate_range.range_step({"scope": HOPPER_DENSE, **hopper.to_dict()})
    assert note.startswith(f"{HOPPER_DENSE}: measured / estimated on {int(hopper['sources'])} sources the fit never "
                           f"saw: their medians' median x{float(hopper['source_median']):.3g} (the bias)")
    assert note.endswith(f"P10 x{float(hopper['ratio_p10']):.3g}, P90 x{float(hopper['ratio_p90']):.3g}")


def test_the_range_step_in_words_worked_by_hand() -> None:
    r = {"scope": "nvidia-hopper", "basis": "left-out source", "sources": 16, "source_median": 0.95,
         "between_source_p10": 0.8, "between_source_p90": 1.1, "within_source_p10": 0.9, "within_source_p90": 1.05,
         "ratio_p10": 0.7, "ratio_p90": 1.12}
    assert estimate_range.range_step(r) == (
        "nvidia-hopper: measured / estimated on 16 sources the fit never saw: their medians' median x0.95 (the "
        "bias), the sources' medians x0.8 to x1.1 of it and a source's points x0.9 to x1.05 of its median "
        "(P10-P90); every pair of the two: P10 x0.7, P90 x1.12")
    unseen = {**r, "scope": "unseen:dense", "basis": "leave-one-family-out", "sources": 6}
    assert "on 6 families the fit never saw" in estimate_range.range_step(unseen)
    assert "a family's points" in estimate_range.range_step(unseen)
    pooled = {**r, "scope": "amd-cdna4", "basis": "left-out source, every fitted family"}
    assert estimate_range.range_step(pooled).startswith("amd-cdna4 (the pool of every fitted family): measured")
    assert estimate_range.range_step({"scope": "x", "ratio_p10": 0.7}) == ""  # a row stored without the parts


def _classes_table() -> Any:
    import pandas as pd

    # nvidia-ada, dense: table A ten points at ratio 1 (error 0 %), tables B-E one point each at 0.5, 0.8, 1.25, 2;
    # MoE: tables F-J two points each at 0.25, 0.4, 0.5, 0.625, 1 (errors +300, +150, +100, +60, 0 %).
    # nvidia-ampere: four dense tables K-N of one point each (too few for a range of its own).
    dense = pd.DataFrame({"error_pct": [0.0] * 10 + [100.0, 25.0, -20.0, -50.0], "model_class": "dense",
                          "source_group": ["A"] * 10 + ["B", "C", "D", "E"]})
    moe = pd.DataFrame({"error_pct": [300.0, 300.0, 150.0, 150.0, 100.0, 100.0, 60.0, 60.0, 0.0, 0.0],
                        "model_class": "moe", "source_group": ["F", "F", "G", "G", "H", "H", "I", "I", "J", "J"]})
    ampere = dense.iloc[10:].assign(source_group=["K", "L", "M", "N"], family="nvidia-ampere")
    return pd.concat([dense.assign(family="nvidia-ada"), moe.assign(family="nvidia-ada"), ampere],
                     ignore_index=True)


def test_a_fitted_familys_range_is_kept_per_model_class_worked_by_hand() -> None:
    # nvidia-ada:dense is tables A-E: medians 1, 0.5, 0.8, 1.25, 2, none scattering around its own: a new table's
    # ratio is one of the five medians (centres 0.1 ... 0.9): P10 0.5, P50 1, P90 2.
    # nvidia-ada:moe is tables F-J: medians 0.25, 0.4, 0.5, 0.625, 1: P10 0.25, P50 0.5, P90 1 (ten points).
    # nvidia-ada over both classes is the ten tables' spread (new_source_quantiles, worked by hand above): P10
    # 0.37, P90 1.85, so one range for both would put a dense estimate's P10 at -63 % and a MoE one's P90 at +85 %.
    table = _classes_table()
    ranges = leave_out.range_table(table.iloc[:0], "2026-12", table, table.iloc[:0]).set_index("scope")
    got = {s: tuple(float(ranges.loc[s, k]) for k in ("ratio_p10", "ratio_p50", "ratio_p90"))
           for s in ("nvidia-ada", "nvidia-ada:dense", "nvidia-ada:moe", "nvidia-ampere:moe")}
    assert got["nvidia-ada:dense"] == (0.5, 1.0, 2.0) and got["nvidia-ada:moe"] == (0.25, 0.5, 1.0)
    ada = table[table["family"] == "nvidia-ada"]
    both = leave_out.new_source_quantiles(np.log(1.0 / (1.0 + ada["error_pct"].to_numpy() / 100.0)),
                                          ada["source_group"].to_numpy(), [0.1, 0.5, 0.9])["quantiles"]
    assert got["nvidia-ada"] == pytest.approx(tuple(np.exp(both)), abs=1e-4)
    assert got["nvidia-ada"][0] < 0.5 and got["nvidia-ada"][2] > 1.0
    assert ranges.loc["nvidia-ada:moe", "basis"] == "left-out source"
    assert int(ranges.loc["nvidia-ada:moe", "points"]) == 10 and int(ranges.loc["nvidia-ada:moe", "sources"]) == 5
    # Ampere has no MoE point: its MoE range is the pool of every fitted family's MoE points (Ada's five tables)
    assert got["nvidia-ampere:moe"] == got["nvidia-ada:moe"]
    assert ranges.loc["nvidia-ampere:moe", "basis"] == "left-out source, every fitted family"
    assert "those of moe models of every fitted family" in ranges.loc["nvidia-ampere:moe", "method"]
    # the estimate's lookup: the class's row where stored, else the family's
    assert estimate_range.fitted_scope(ranges.index, "nvidia-ada", "moe") == "nvidia-ada:moe"
    assert estimate_range.fitted_scope(ranges.index, "nvidia-ada", "") == "nvidia-ada"
    # four MoE tables (fewer than RANGE_MIN_SOURCES over every family): no class row, the family's range serves
    fewer = table[table["source_group"] != "J"]
    rows = leave_out.range_table(fewer.iloc[:0], "2026-12", fewer, fewer.iloc[:0]).set_index("scope")
    assert "nvidia-ada:moe" not in rows.index and "nvidia-ada:dense" in rows.index
    assert estimate_range.fitted_scope(rows.index, "nvidia-ada", "moe") == "nvidia-ada"


def test_each_source_left_out_of_the_range_is_checked_against_it_worked_by_hand() -> None:
    import pandas as pd

    # six dense tables of one point each on nvidia-ada at ratios 0.5, 0.8, 1, 1.25, 2, 4 (errors +100, +25, 0, -20,
    # -50, -75 %). Left out in turn, the other five are the range (five medians, no scatter within: P10 = the
    # smallest, P90 = the largest): 0.5 against 0.8-4 outside; 0.8 against 0.5-4 inside; 1, 1.25 and 2 inside;
    # 4 against 0.5-2 outside: 4 of 6 inside, the two ends out.
    table = pd.DataFrame({"error_pct": [100.0, 25.0, 0.0, -20.0, -50.0, -75.0], "model_class": "dense",
                          "family": "nvidia-ada", "source_group": list("ABCDEF")})
    cov = leave_out.source_out_coverage(table, ["nvidia-ada"]).set_index("source_group")
    assert cov["inside"].to_dict() == {"A": False, "B": True, "C": True, "D": True, "E": True, "F": False}
    assert (float(cov.loc["A", "low"]), float(cov.loc["A", "high"])) == pytest.approx((0.8, 4.0))
    assert (float(cov.loc["F", "low"]), float(cov.loc["F", "high"])) == pytest.approx((0.5, 2.0))
    # stored with the range: the points of the scope an estimate takes, and how many held
    ranges = leave_out.range_table(table.iloc[:0], "2026-12", table, table.iloc[:0]).set_index("scope")
    assert (int(ranges.loc["nvidia-ada:dense", "source_out_points"]),
            int(ranges.loc["nvidia-ada:dense", "source_out_inside"])) == (6, 4)


def test_a_moe_model_on_a_fitted_family_takes_its_class_range_and_says_so() -> None:
    # DeepSeek-V3 (fine-grained MoE) on H200 at a shape no curve holds: the estimate takes Hopper's MoE-model row,
    # the label names the class, and explain's P90 step names the row; Llama 3.1 70B (dense) takes the dense row
    assert estimate_range.fitted_scope(RANGES.index, "nvidia-hopper", "moe") == "nvidia-hopper:moe"
    moe = RANGES.loc["nvidia-hopper:moe"]
    scenario = {"accelerator": "h200-sxm", "model": "deepseek-v3", **SHAPE, "demand_output_tokens_per_day": 1e9}
    r = batch.evaluate_scenario(scenario)
    assert r["throughput_source"] == "estimated"
    assert f"over {int(moe['points'])} MoE-model points" in r["throughput_basis"]
    est = r["output_tokens_per_s_per_accelerator"]
    assert r["output_tokens_per_s_per_accelerator_p10"] == pytest.approx(est * float(moe["ratio_p10"]))
    assert r["output_tokens_per_s_per_accelerator_p90"] == pytest.approx(est * float(moe["ratio_p90"]))
    note = batch.explain_scenario(scenario).step("output_tokens_per_s_per_accelerator_p90").note
    assert note.startswith("nvidia-hopper:moe")
    dense = _row("h100-sxm", "llama-3.1-70b", demand_output_tokens_per_day=1e9)
    assert HOPPER_DENSE == "nvidia-hopper:dense" and "dense-model points" in dense["throughput_basis"]
    assert float(RANGES.loc[HOPPER_DENSE, "ratio_p10"]) != float(moe["ratio_p10"])


def test_holdout_prints_the_stored_leave_one_source_out_coverage() -> None:
    import pandas as pd

    # two scopes an estimate takes: 4 of 6 points inside (66.7 %) and 9 of 10 (90 %); the pool row takes no point
    # and the unseen row stores none, so neither is printed; over all 13 of 16 = 81.25 %, printed 81.2 %
    t = pd.DataFrame({"scope": ["nvidia-ada:dense", "nvidia-hopper:moe", "fitted", "unseen"],
                      "source_out_points": ["6", "10", "0", ""], "source_out_inside": ["4", "9", "0", ""]})
    lines = leave_out.source_out_text(t).splitlines()
    assert lines[1].startswith("the ranges' basis, each source left out in turn")
    assert [line.split() for line in lines[2:]] == [
        ["nvidia-ada:dense", "6", "points", "66.7%", "inside", "(4)"],
        ["nvidia-hopper:moe", "10", "points", "90.0%", "inside", "(9)"],
        ["all", "16", "points", "81.2%", "inside", "(13)"]]
    assert leave_out.source_out_text(t.drop(columns=["source_out_points"])) == ""
