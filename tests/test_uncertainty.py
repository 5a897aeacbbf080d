"""Uncertainty: tornado worked by hand, seeded Monte Carlo, paired comparison, range validation, CLI."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import economics
from economics import FIELDS, catalog
from economics.engine.batch import as_scenario, evaluate
from economics.schema.values import FieldKind
from economics.studies.compare import scenario_frame
from economics.studies.uncertainty import (
    Distribution,
    _checked,
    draw,
    histogram,
    monte_carlo,
    probability_lower,
    shared_resolution,
    tornado,
    tornado_npv,
    valid_number,
)
from tests.test_golden import BASE
from tests.test_retrofit import STUDY

ROOT = Path(__file__).resolve().parents[1]


def test_tornado_worked_by_hand() -> None:
    # golden g1: cost per M = (5.479452 capital + 8 x 1.25 kW x PUE 1 x e energy) USD/h x 24 / 3,456 M tokens/day
    # e = 0.05 -> (5.479452 + 0.5) x 24 / 3,456 = 0.041524; e = 0.20 -> (5.479452 + 2.0) x 24 / 3,456 = 0.051941
    # swing = 1.5 x 24 / 3,456 = 0.0104167; the throughput range swings more and comes first
    table = tornado(BASE, {"electricity_usd_per_kwh": (0.05, 0.2), "output_tokens_per_s_per_accelerator": (800, 1200)})
    assert list(table["field"]) == ["output_tokens_per_s_per_accelerator", "electricity_usd_per_kwh"]
    row = table.set_index("field").loc["electricity_usd_per_kwh"]
    capital = 8 * 30000 / 5 / 8760
    assert row["output_at_low"] == pytest.approx((capital + 0.5) * 24 / 3456)
    assert row["output_at_high"] == pytest.approx((capital + 2.0) * 24 / 3456)
    assert row["swing"] == pytest.approx(1.5 * 24 / 3456)
    # the scenario's evaluation handed in (as the app does) changes nothing
    given = tornado(BASE, {"electricity_usd_per_kwh": (0.05, 0.2), "output_tokens_per_s_per_accelerator": (800, 1200)},
                    result=economics.evaluate_scenario(BASE))
    pd.testing.assert_frame_equal(given, table, check_exact=True)


def test_monte_carlo_is_seeded_ordered_and_within_ranges() -> None:
    ranges = {"electricity_usd_per_kwh": (0.05, 0.2), "output_tokens_per_s_per_accelerator": (800, 1200)}
    a = monte_carlo(BASE, ranges, samples=2000, seed=3)
    b = monte_carlo(BASE, ranges, samples=2000, seed=3)
    assert a.summary.equals(b.summary)
    s = a.summary.set_index("output").loc["cost_usd_per_m_tokens"]
    assert s["p10"] <= s["p50"] <= s["p90"]
    e = a.samples["electricity_usd_per_kwh"].to_numpy()
    assert e.min() >= 0.05 and e.max() <= 0.2
    # triangular with mode 0.10: the mean is (0.05 + 0.10 + 0.20) / 3
    assert e.mean() == pytest.approx(0.35 / 3, rel=0.02)
    assert np.isfinite(a.samples["cost_usd_per_m_tokens"].to_numpy(dtype=float)).all()


def test_paired_comparison() -> None:
    ranges = {"electricity_usd_per_kwh": (0.05, 0.2)}
    cheap = monte_carlo(BASE, ranges, samples=500, seed=1)
    dear = monte_carlo({**BASE, "accelerator_price_usd": 40000.0}, ranges, samples=500, seed=1)
    assert probability_lower(cheap, dear) == 1.0 and probability_lower(dear, cheap) == 0.0
    assert probability_lower(cheap, cheap) == 0.0


def test_ranges_are_checked_by_name() -> None:
    with pytest.raises(economics.ScenarioError, match="electricity_usd_per_kwh: range 0.2..0.3 must contain the base"):
        tornado(BASE, {"electricity_usd_per_kwh": (0.2, 0.3)})
    with pytest.raises(economics.ScenarioError, match="pue: must be >= 1"):
        tornado(BASE, {"pue": (0.5, 1.2)})
    with pytest.raises(economics.ScenarioError, match="ownership: not a numeric scenario field"):
        tornado(BASE, {"ownership": (0.0, 1.0)})


def test_npv_tornado_of_the_retrofit() -> None:
    table = tornado_npv(STUDY, {"decode_accelerator_price_usd": (20000.0, 60000.0)})
    row = table.iloc[0]
    assert row["output_at_low"] > row["base_output"] > row["output_at_high"]  # NPV falls as the price rises


def test_cli_reads_ranges_from_the_csv() -> None:
    out = subprocess.run([sys.executable, "-m", "economics", "uncertainty", "docs/uncertainty-example.csv", "--row",
                          "uncertain-h100", "--samples", "2000", "--seed", "1"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "tornado (cost_usd_per_m_tokens" in out.stdout and "cost_usd_per_m_tokens,0.0" in out.stdout
    # range columns are accepted by evaluate too (and ignored there)
    ev = subprocess.run([sys.executable, "-m", "economics", "evaluate", "docs/uncertainty-example.csv"], cwd=ROOT,
                        capture_output=True, text=True, timeout=120)
    assert ev.returncode == 0, ev.stderr


def test_histogram_bins_of_a_nice_width_count_every_sample() -> None:
    # width (3.0 - 1.0) / 2 bins = 1, a nice width; bins start at a multiple of it: [1, 2), [2, 3), [3, 4] (the
    # maximum 3.0 sits on an edge, so it opens one more bin); NaN is left out
    t = histogram(np.array([1.0, 1.5, 2.9, 3.0, np.nan]), max_bins=2)
    assert t["bin_start"].tolist() == [1.0, 2.0, 3.0] and t["bin_end"].tolist() == [2.0, 3.0, 4.0]
    assert t["count"].tolist() == [2, 1, 1]
    # width 0.013 / 40 = 0.000325 -> 0.0005; 0.1000 .. 0.1130 -> bins from 0.1000 to 0.1135, 27 of them
    t = histogram(np.linspace(0.1, 0.113, 500))
    assert t["bin_end"].iloc[0] - t["bin_start"].iloc[0] == pytest.approx(0.0005)
    assert t["bin_start"].iloc[0] == pytest.approx(0.1) and len(t) == 27 and t["count"].sum() == 500
    mc = monte_carlo(BASE, {"electricity_usd_per_kwh": (0.05, 0.2)}, samples=1000, seed=2)
    assert histogram(mc.samples["cost_usd_per_m_tokens"].to_numpy(dtype=float))["count"].sum() == 1000


def test_monte_carlo_worked_by_hand() -> None:
    # golden g1 (see test_tornado_worked_by_hand): cost per M = (5.479452 + 8 x 1.25 kW x PUE 1 x e) x 24 / 3,456,
    # linear in the electricity price e; cost per day = (5.479452 + 10 e) x 24. Five uniform draws of e on
    # [0.05, 0.20] with seed 0 (np.random.default_rng(0).uniform(0.05, 0.2, 5)), sorted:
    # 0.0524791, 0.0561460, 0.0904680, 0.1455443, 0.1719905 -> cost per M (x 24 / 3,456 = x 0.00694444):
    # 0.0416961, 0.0419508, 0.0443343, 0.0481590, 0.0499955.
    # P50 = the middle one: (5.479452 + 0.904680) x 24 / 3,456 = 6.384132 x 0.00694444 = 0.0443343
    # P10 at rank 0.4 (numpy's linear rule, (5 - 1) x 0.10): 0.0416961 + 0.4 x (0.0419508 - 0.0416961) = 0.0417980
    # P90 at rank 3.6: 0.0481590 + 0.6 x (0.0499955 - 0.0481590) = 0.0492609
    # mean: e averages 0.516628 / 5 = 0.1033257 -> (5.479452 + 1.033257) x 24 / 3,456 = 0.0452272
    # cost per day P50: 6.384132 x 24 = 153.2192; no selling price, so no gross margin in any sample
    mc = monte_carlo(BASE, {"electricity_usd_per_kwh": (0.05, 0.2)}, samples=5, seed=0, distribution="uniform")
    cost = mc.summary.set_index("output").loc["cost_usd_per_m_tokens"]
    assert cost["p50"] == pytest.approx(0.0443343, rel=1e-5)
    assert cost["p10"] == pytest.approx(0.0417980, rel=1e-5)
    assert cost["p90"] == pytest.approx(0.0492609, rel=1e-5)
    assert cost["mean"] == pytest.approx(0.0452272, rel=1e-5) and cost["samples"] == 5
    assert mc.summary.set_index("output").loc["cost_usd_per_day", "p50"] == pytest.approx(153.2192, rel=1e-6)
    margin = mc.summary.set_index("output").loc["gross_margin"]
    assert margin["samples"] == 0 and np.isnan(margin["p50"])
    assert sorted(mc.samples["electricity_usd_per_kwh"].round(7)) == [0.0524791, 0.056146, 0.090468, 0.1455443,
                                                                       0.1719905]


RANGEABLE = ("electricity_usd_per_kwh", "accelerator_price_usd", "output_tokens_per_s_per_accelerator", "pue",
             "cost_of_capital", "accelerator_count", "demand_output_tokens_per_day", "price_usd_per_m_output_tokens",
             "depreciation_years", "headroom", "idle_power_fraction", "rent_usd_per_accelerator_hour",
             "peak_to_average",
             # read by the throughput estimate: these samples do not share one resolution
             "input_tokens_per_request", "output_tokens_per_request", "target_output_tokens_per_s_per_user",
             "prefix_cache_hit_rate")


def _random_scenario(rng: np.random.Generator) -> dict[str, Any]:
    """A scenario of random accelerator, ownership, fleet or demand, prices, cooling and throughput (measured, or
    estimated from a model), sometimes with a decode pool; some are invalid or infeasible on purpose."""
    s: dict[str, Any] = {"accelerator": str(rng.choice(catalog.accelerator_ids())),
                         "ownership": str(rng.choice(["own", "own", "rent"])),
                         "electricity_usd_per_kwh": float(rng.uniform(0.03, 0.3)),
                         "cost_of_capital": float(rng.uniform(0.0, 0.2)),
                         "facility_cooling": str(rng.choice(["air", "liquid", "hybrid"])),
                         "input_tokens_per_request": float(rng.choice([0, 500, 2000, 8000])),
                         "output_tokens_per_request": float(rng.choice([100, 500, 1000]))}
    if rng.random() < 0.5:
        s["accelerator_count"] = int(rng.integers(1, 2000))
    else:
        s["accelerator_count"] = None
        s["demand_output_tokens_per_day"] = float(10 ** rng.uniform(7, 11))
    if rng.random() < 0.6:
        s["output_tokens_per_s_per_accelerator"] = float(rng.uniform(200, 8000))
    else:
        s["output_tokens_per_s_per_accelerator"] = None
        s["model"] = str(rng.choice(list(catalog.models().index)))
        s["precision"] = str(rng.choice(["bf16", "fp8"]))
        s["target_output_tokens_per_s_per_user"] = float(rng.uniform(10, 80))
    if rng.random() < 0.5:
        s["pue"] = float(rng.uniform(1.05, 1.6))
    if rng.random() < 0.7:  # else the catalog's figures, where it has them
        s["accelerator_price_usd"] = float(rng.uniform(5_000, 60_000))
        s["rent_usd_per_accelerator_hour"] = float(rng.uniform(0.5, 6.0))
    for price in ("price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens"):
        s[price] = float(rng.uniform(0.05, 3.0)) if rng.random() < 0.6 else None
    if rng.random() < 0.3:  # facility limits: a site too small, racks, a liquid retrofit allowed or not
        s["site_power_mw"] = float(10 ** rng.uniform(-1, 2))
        s["rack_power_kw"] = float(rng.uniform(15, 140))
        s["allow_liquid_retrofit"] = bool(rng.random() < 0.5)
        s["round_to_whole_systems"] = bool(rng.random() < 0.5)
    if rng.random() < 0.15:
        s["decode_accelerator"] = str(rng.choice(["h200-sxm", "sn50", "b200"]))
        s["decode_output_tokens_per_s_per_accelerator"] = float(rng.uniform(300, 3000))
        s["decode_accelerator_price_usd"] = 40_000.0
        s["decode_rent_usd_per_accelerator_hour"] = 3.0
        s["input_tokens_per_s_per_accelerator"] = float(rng.uniform(5_000, 50_000))
    return s


def _random_ranges(rng: np.random.Generator, result: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Ranges on a few random fields around the value the engine uses (as the Uncertainty page puts them)."""
    ranges = {}
    fields = {str(f) for f in rng.choice(RANGEABLE, size=int(rng.integers(0, 4)), replace=False)}
    # often the fields a scenario may leave empty (an estimate, the PUE of its cooling): their samples resolve apart
    fields |= {f for f in ("output_tokens_per_s_per_accelerator", "pue") if rng.random() < 0.4}
    for field in sorted(fields):
        mid = result.get(str(field))
        mid = result.get(f"{field}_effective") if mid is None else mid
        if mid is None:
            continue
        spec = FIELDS[str(field)]
        lo, hi = float(mid) * rng.uniform(0.3, 1.0), float(mid) * rng.uniform(1.0, 1.8)
        lo = max(lo, float(spec.gt) * 1.000001 if spec.gt is not None else float(spec.ge or 0.0))
        hi = min(hi, float(spec.le)) if spec.le is not None else hi
        if spec.kind is FieldKind.INT:
            lo, hi = float(np.ceil(lo)), float(np.floor(hi))
        if lo <= mid <= hi:
            ranges[str(field)] = (lo, hi)
    return ranges


def _by_the_table(scenario: dict[str, Any], ranges: dict[str, tuple[float, float]], samples: int, seed: int,
                  distribution: Any) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """The plain way: the draws, and every sample as a row of one table of whole scenarios through evaluate()."""
    base = as_scenario(scenario)
    drawn = draw(_checked(base, ranges), samples, seed, distribution)
    return drawn, evaluate(scenario_frame([base.model_dump()], varying=drawn, repeat=samples))


def _tornado_frame(scenario: dict[str, Any], ranges: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """The tornado's rows as whole scenarios: the base, then each field at its low and its high, the others at
    base."""
    base = as_scenario(scenario)
    rows = [base.model_dump()] + [{**base.model_dump(), f: end} for f, (lo, _mid, hi) in _checked(base, ranges).items()
                                  for end in (lo, hi)]
    return scenario_frame(rows)


def _check_tornado(scenario: dict[str, Any], ranges: dict[str, tuple[float, float]], output: str,
                   result: dict[str, Any], evaluated: pd.DataFrame) -> None:
    """The tornado's figures equal those of its rows (:func:`_tornado_frame`) as ``evaluated`` gives them."""
    out = evaluated[output].astype(float).to_numpy()
    table = tornado(scenario, ranges, output, result=result).set_index("field")
    for k, field in enumerate(_checked(as_scenario(scenario), ranges)):
        got = table.loc[field, ["base_output", "output_at_low", "output_at_high"]].to_numpy(dtype=float)
        assert np.array_equal(got, out[[0, 1 + 2 * k, 2 + 2 * k]], equal_nan=True), (field, output, got, out)


def _check_tornado_against_the_table(scenario: dict[str, Any], ranges: dict[str, tuple[float, float]], output: str,
                                     result: dict[str, Any]) -> None:
    """The tornado's figures equal those of its rows evaluated as one table of whole scenarios."""
    _check_tornado(scenario, ranges, output, result, evaluate(_tornado_frame(scenario, ranges)))


OUTPUTS = ("cost_usd_per_m_tokens", "cost_usd_per_day", "gross_margin", "accelerators", "facility_power_kw")


@dataclass(frozen=True)
class _Case:
    """One random scenario of the differential test with its ranges and its samples' draws."""

    case: int
    scenario: dict[str, Any]
    result: dict[str, Any]
    ranges: dict[str, tuple[float, float]]
    samples: int
    seed: int
    distribution: Distribution
    drawn: dict[str, np.ndarray]


def _random_cases(first: int, cases: int) -> tuple[list[_Case], int]:
    """The cases from ``first`` on of ``cases`` random scenarios (the first ones drawn too, to reach them), and how
    many of those the single-scenario path refused."""
    rng = np.random.default_rng(20261130)
    kept, refused = [], 0
    for case in range(cases):
        scenario = _random_scenario(rng)
        try:
            result = economics.evaluate_scenario(scenario)
        except economics.ScenarioError:
            refused += case >= first
            continue
        ranges = _random_ranges(rng, result)
        samples, seed = int(rng.integers(1, 1500)), int(rng.integers(0, 2**31))
        if case >= first:
            distribution = Distribution.UNIFORM if case % 3 == 0 else Distribution.TRIANGULAR
            drawn = draw(_checked(as_scenario(scenario), ranges), samples, seed, distribution)
            kept.append(_Case(case, scenario, result, ranges, samples, seed, distribution, drawn))
    return kept, refused


def _evaluated(c: _Case) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The case's samples and its tornado's rows (None without ranges) as rows of one table of whole scenarios
    through evaluate(), one table a case: evaluate()'s fixed cost per table, not the rows, was most of this test's
    time. (A table of many cases' rows costs more: the estimate looks up each measured curve of every configuration
    in the table on every row.)"""
    samples = scenario_frame([as_scenario(c.scenario).model_dump()], varying=c.drawn, repeat=c.samples)
    if not c.ranges:
        return evaluate(samples), None
    table = evaluate(pd.concat([samples, _tornado_frame(c.scenario, c.ranges)], ignore_index=True))
    return table.iloc[:c.samples].reset_index(drop=True), table.iloc[c.samples:].reset_index(drop=True)


def _check_monte_carlo(c: _Case, table: pd.DataFrame) -> bool:
    """The Monte Carlo's summary and samples equal those of the samples' rows as ``table`` gives them; whether it
    refused the scenario (then with the table's reason)."""
    computed = table["cost_usd_per_m_tokens"].notna()
    try:
        mc = monte_carlo(c.scenario, c.ranges, c.samples, c.seed, c.distribution, OUTPUTS,
                         result=c.result if c.case % 2 else None)
    except economics.ScenarioError as error:
        assert not computed.any(), (c.case, str(error))
        reason = next((str(e) for e in table["error"] if e), "") or next(
            (str(r) for r in table["infeasible_reason"] if r), "no sample could be computed")
        assert str(error) == (f"cost_usd_per_m_tokens: none of the {c.samples:,} samples could be computed: "
                              f"{reason}"), c.case
        return True
    assert computed.any(), c.case
    for row in mc.summary.to_dict("records"):
        values = table[row["output"]].astype(float).dropna().to_numpy()
        assert row["samples"] == values.size, (c.case, row["output"])
        if values.size:
            expected = [*np.percentile(values, [10, 50, 90]), values.mean()]
            assert [row["p10"], row["p50"], row["p90"], row["mean"]] == expected, (c.case, row["output"])
    expected_table = pd.concat([pd.DataFrame(c.drawn), table[list(OUTPUTS)].astype("Float64")], axis=1)
    pd.testing.assert_frame_equal(mc.samples, expected_table, check_exact=True)
    return False


@pytest.mark.parametrize("first, cases", [(0, 60), pytest.param(60, 300, marks=pytest.mark.slow)])
def test_monte_carlo_and_tornado_give_exactly_the_numbers_of_the_table_evaluation(first: int, cases: int) -> None:
    """Differential: 300 random scenarios and ranges (the first 60 in the quick loop, the other 240 in the whole
    suite, which draws the first 60 again to reach them but does not check them twice); every summary figure and
    every sample's outputs are identical (==, not approximately) to those of the samples evaluated as rows of a
    table of whole scenarios, and so is every tornado figure. Identical because the same element-wise float
    operations run on the same values (a row does not see its neighbours: a case's samples and tornado rows share
    a table) and the percentiles and means read the same values in the same order."""
    kept, refused = _random_cases(first, cases)
    shared = separate = 0
    for c in kept:
        table, tornado_rows = _evaluated(c)
        if tornado_rows is not None:
            _check_tornado(c.scenario, c.ranges, OUTPUTS[c.case % len(OUTPUTS)], c.result, tornado_rows)
        shared, separate = shared + shared_resolution(c.drawn), separate + (not shared_resolution(c.drawn))
        refused += _check_monte_carlo(c, table)
    # both ways were taken, and some scenarios were refused as the table evaluation refuses them
    checked = cases - first
    assert shared >= checked // 3 and separate >= checked // 10 and refused >= checked // 60, (shared, separate,
                                                                                            refused)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from([f for f, spec in FIELDS.items() if spec.kind.numeric]),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**9, 10**9),
                       st.floats(min_value=-2.0, max_value=2.0)))
def test_a_range_end_passes_the_quick_check_only_if_the_scenario_takes_it(field: str, value: float) -> None:
    """valid_number lets the Monte Carlo skip building a scenario per range end; whatever it passes, the scenario's
    own parser takes too (what it refuses goes to the parser, which words the message)."""
    if valid_number(field, value):
        as_scenario({**BASE, field: value})


def test_a_first_output_no_sample_computes_is_refused_whichever_way_the_samples_are_evaluated() -> None:
    # BASE sells at no price, so no sample has a gross margin. A range on the PUE alone: the samples share one
    # resolution; with one on the input tokens per request too (read by the throughput estimate), every sample is
    # a row of the table. The same refusal either way (the shared way gave empty figures instead).
    for ranges in ({"pue": (1.0, 1.3)}, {"pue": (1.0, 1.3), "input_tokens_per_request": (500.0, 5_000.0)}):
        with pytest.raises(economics.ScenarioError) as error:
            monte_carlo(BASE, ranges, samples=20, outputs=("gross_margin", "cost_usd_per_m_tokens"))
        assert str(error.value) == "gross_margin: none of the 20 samples could be computed: no sample could be computed"


def test_a_bad_range_end_is_refused_with_the_fields_own_message() -> None:
    with pytest.raises(economics.ScenarioError, match=r"accelerator_count: .*whole number.*7\.5"):
        monte_carlo(BASE, {"accelerator_count": (7.5, 9.0)}, samples=10)
    with pytest.raises(economics.ScenarioError, match="idle_power_fraction: must be >= 0 and <= 1"):
        monte_carlo(BASE, {"idle_power_fraction": (0.5, 1.5)}, samples=10)


def test_a_column_read_alone_is_the_samples_column_and_its_own_copy() -> None:
    mc = monte_carlo(BASE, {"pue": (1.0, 1.3)}, samples=50, seed=4)
    for name in ("cost_usd_per_m_tokens", "gross_margin", "pue"):  # BASE sells at no price: no gross margin
        column, table = mc.column(name), mc.samples[name].astype(float).to_numpy()
        assert np.array_equal(column, table, equal_nan=True), name
        column[:] = 99.0
        assert np.array_equal(mc.column(name), table, equal_nan=True), name
    assert np.isnan(mc.column("gross_margin")).all() and mc.figures("gross_margin")["samples"] == 0


def test_remembered_draws_are_not_shared_with_a_result() -> None:
    # the same ranges, samples and seed draw the same numbers (remembered); a result's table is its own copy
    a = monte_carlo(BASE, {"pue": (1.0, 1.3)}, samples=50, seed=4)
    a.samples.loc[0, "pue"] = 99.0
    b = monte_carlo({**BASE, "name": "another name"}, {"pue": (1.0, 1.3)}, samples=50, seed=4)
    assert b.samples["pue"].max() <= 1.3
    assert b.samples["pue"].iloc[1:].tolist() == a.samples["pue"].iloc[1:].tolist()


def test_the_estimates_ends_are_drawn_only_when_asked_for_and_then_as_the_table_gives_them() -> None:
    """The samples skip the stages' two extra runs at the estimate's P10 and P90 unless an output asked for is one
    of those ends (``_low``, ``_high``); asked for, the samples and the tornado give the table's figures."""
    scenario = {**economics.default_scenario().model_dump(), "model": "llama-3.1-70b", "precision": "fp8",
                "accelerator": "h200-sxm", "output_tokens_per_s_per_accelerator": None,
                "target_output_tokens_per_s_per_user": 30.0}
    result = economics.evaluate_scenario(scenario)
    assert result["cost_usd_per_m_tokens_low"] < result["cost_usd_per_m_tokens_high"]  # an estimate with a range
    ranges = {"electricity_usd_per_kwh": (0.05, 0.2), "accelerator_price_usd": (20_000.0, 40_000.0)}
    outputs = ("cost_usd_per_m_tokens", "cost_usd_per_m_tokens_low", "accelerators_high")
    drawn, table = _by_the_table(scenario, ranges, 200, 7, "triangular")
    assert shared_resolution(drawn)
    mc = monte_carlo(scenario, ranges, 200, 7, "triangular", outputs, result=result)
    expected = pd.concat([pd.DataFrame(drawn), table[list(outputs)].astype("Float64")], axis=1)
    pd.testing.assert_frame_equal(mc.samples, expected, check_exact=True)
    assert mc.samples["cost_usd_per_m_tokens_low"].notna().all()
    for output in ("cost_usd_per_m_tokens_high", "cost_usd_per_m_tokens"):
        _check_tornado_against_the_table(scenario, ranges, output, result)
