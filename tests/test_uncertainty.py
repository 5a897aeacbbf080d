"""Uncertainty: tornado worked by hand, seeded Monte Carlo, paired comparison, range validation, CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import economics
from economics.uncertainty import histogram, monte_carlo, probability_lower, tornado, tornado_npv
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
