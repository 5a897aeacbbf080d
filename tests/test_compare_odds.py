"""The comparison's odds (economics.studies.compare_odds): how often each accelerator is the cheapest per M tokens."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from economics.studies.compare import compare_accelerators
from economics.studies.compare_odds import NEVER, compare_odds

ROW: dict[str, Any] = {"name": "c", "model": "minimax-m2", "precision": "fp8", "input_tokens_per_request": 10000.0,
                       "output_tokens_per_request": 1000.0, "target_output_tokens_per_s_per_user": 100.0,
                       "demand_output_tokens_per_day": 2e10}
PAIR = ["h100-sxm", "h200-sxm"]


def _collapsed(ids: list[str]) -> dict[str, tuple[float, float]]:
    found = compare_odds(ROW, ids, samples=1)
    return {d.name: (d.base, d.base) for d in found.found}


def test_with_every_range_collapsed_the_odds_are_the_comparison() -> None:
    ids = ["h100-sxm", "h200-sxm", "b200"]
    got = compare_odds(ROW, ids, samples=50, seed=3, ranges=_collapsed(ids)).table.set_index("accelerator")
    point = compare_accelerators(ROW, ids).set_index("accelerator")["cost_usd_per_m_tokens"]
    for acc in ids:
        for p in (10, 50, 90):
            assert got.loc[acc, f"cost_usd_per_m_tokens_p{p}"] == pytest.approx(float(point[acc]), rel=1e-12)
        assert got.loc[acc, "cost_usd_per_m_tokens"] == pytest.approx(float(point[acc]), rel=1e-12)
    assert got.loc["b200", "probability_cheapest"] == 1.0  # the comparison's rank 1
    assert got["probability_cheapest"].sum() == 1.0


def test_the_probability_is_the_share_of_the_price_range_below_the_break_even() -> None:
    # The H100's cost per M tokens is affine in its price (a fleet sized from demand: 7,352 H100 whatever they
    # cost), as the ordinary comparison gives it at two prices: 0.607163 at USD 10,000 and 0.876154 at 20,000, so
    # 2.68991e-5 per USD. The H200 costs 0.725370 (its price not drawn here). The H100 is cheaper below
    # 10,000 + (0.725370 - 0.607163) / 2.68991e-5 = USD 14,394.5; drawn uniform on 10,000-30,000, that is
    # (14,394.5 - 10,000) / 20,000 = 0.2197 of the draws.
    at = {p: compare_accelerators({**ROW, "accelerator": "h100-sxm", "accelerator_price_usd": p}, PAIR)
          .set_index("accelerator")["cost_usd_per_m_tokens"] for p in (10_000.0, 20_000.0)}
    slope = (float(at[20_000.0]["h100-sxm"]) - float(at[10_000.0]["h100-sxm"])) / 10_000.0
    even = 10_000.0 + (float(at[10_000.0]["h200-sxm"]) - float(at[10_000.0]["h100-sxm"])) / slope
    assert even == pytest.approx(14_394.5, abs=1.0)
    expected = (even - 10_000.0) / 20_000.0
    ranges = {**_collapsed(PAIR), "h100-sxm price": (10_000.0, 30_000.0)}
    samples = 20_000
    got = compare_odds(ROW, PAIR, samples=samples, seed=7, distribution="uniform", ranges=ranges)
    share = got.table.set_index("accelerator").loc["h100-sxm", "probability_cheapest"]
    sd = math.sqrt(expected * (1 - expected) / samples)  # Monte Carlo error: 0.0029
    assert share == pytest.approx(expected, abs=4 * sd)


def test_common_draws_seeded_and_a_row_that_cannot_be_evaluated_is_named() -> None:
    ids = ["h100-sxm", "b200", "a100-sxm", "gb200-nvl72"]
    a, b = compare_odds(ROW, ids, samples=500, seed=4), compare_odds(ROW, ids, samples=500, seed=4)
    assert a.table.equals(b.table)
    table = a.table.set_index("accelerator")
    assert "fp8" in table.loc["a100-sxm", "reason"] and table.loc["a100-sxm", "computed_share"] == 0.0
    assert table.loc["gb200-nvl72", "reason"] == NEVER  # liquid cooling in an air hall: in no draw
    assert table.loc[["h100-sxm", "b200"], "computed_share"].tolist() == [1.0, 1.0]
    names = [d.name for d in a.found]
    assert names.count("electricity") == 1 and names.count("cost of capital") == 1  # drawn once, for every one
    for p10, p50, p90 in table.loc[["h100-sxm", "b200"], ["cost_usd_per_m_tokens_p10", "cost_usd_per_m_tokens_p50",
                                                          "cost_usd_per_m_tokens_p90"]].to_numpy():
        assert p10 <= p50 <= p90
    with pytest.raises(ValueError, match="samples"):
        compare_odds(ROW, ids, samples=0)


def test_a_price_the_row_gives_is_not_drawn() -> None:
    got = compare_odds({**ROW, "accelerator": "h100-sxm", "accelerator_price_usd": 28_000.0}, PAIR, samples=10)
    assert "h100-sxm price" not in [d.name for d in got.found]
    assert "h100-sxm throughput" in [d.name for d in got.found]


def test_cli_compare_uncertainty(tmp_path: Path) -> None:
    src = tmp_path / "row.csv"
    src.write_text(",".join(ROW) + "\n" + ",".join(str(v) for v in ROW.values()) + "\n", encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "economics", "compare", str(src), "--row", "c", "--accelerators",
                          "h100-sxm,h200-sxm,b200", "--uncertainty", "--samples", "300", "--seed", "1", "--format",
                          "json"], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["samples"], doc["seed"]) == (300, 1)
    assert [r["accelerator"] for r in doc["odds"]][0] == "b200"
    assert sum(r["probability_cheapest"] for r in doc["odds"]) == pytest.approx(1.0)
    assert "is the cheapest per M tokens in" in out.stderr and "of 300 draws (seed 1)" in out.stderr
    assert "note: assumption: electricity" in out.stderr
    assert {r["driver"] for r in doc["drivers"]} >= {"b200 throughput", "h100-sxm price", "cost of capital"}
