"""The decode study's resale value at the horizon and its odds (economics.studies.retrofit_odds)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from economics.engine.batch import as_scenario
from economics.studies.retrofit import analyse
from economics.studies.retrofit_explain import option_text

SIMPLE: dict[str, Any] = {
    "ownership": "own", "electricity_usd_per_kwh": 0.1, "pue": 1.5, "idle_power_fraction": 1.0,
    "colocation_usd_per_kw_month": 0.0, "maintenance_fraction_per_year": 0.0, "software_usd_per_accelerator_year": 0.0,
    "cost_of_capital": 0.1, "depreciation_years": 5.0, "peak_to_average": 1.0, "headroom": 0.0,
    "prefix_cache_hit_rate": 0.0,
}
STUDY: dict[str, Any] = {
    **SIMPLE, "name": "study", "accelerator": "h100-sxm", "existing_accelerators": 8, "accelerator_price_usd": 30000.0,
    "input_tokens_per_request": 1000.0, "output_tokens_per_request": 250.0,
    "output_tokens_per_s_per_accelerator": 1000.0, "input_tokens_per_s_per_accelerator": 10000.0,
    "decode_accelerator": "h200-sxm", "decode_accelerator_count": 4, "decode_accelerator_price_usd": 32000.0,
    "decode_output_tokens_per_s_per_accelerator": 2000.0, "demand_requests_per_s": 40.0, "horizon_years": 2,
    "price_usd_per_m_input_tokens": 0.5, "price_usd_per_m_output_tokens": 2.0,
}
"""The hand-worked study of tests/test_retrofit.py (docs/retrofit-example.csv)."""

# 100 decode accelerators bought at USD 30,000, resold after 5 years at 0.2 of their price, at 8 % a year
RESALE = {**STUDY, "decode_accelerator_count": 100, "decode_accelerator_price_usd": 30000.0, "horizon_years": 5,
          "cost_of_capital": 0.08}


def test_the_resale_at_the_horizon_adds_its_present_value_to_the_npv() -> None:
    # 100 x 30,000 x 0.2 = 600,000 USD at t = 5; / 1.08^5 = 600,000 / 1.4693281 = 408,349.79 USD more NPV
    without = analyse({**RESALE, "residual_value_fraction": 0.0}).row("add decode")
    result = analyse({**RESALE, "residual_value_fraction": 0.2})
    with_resale = result.row("add decode")
    assert without is not None and with_resale is not None
    assert with_resale["residual_value_usd"] == pytest.approx(600_000.0)
    added = with_resale["npv_vs_status_quo_usd"] - without["npv_vs_status_quo_usd"]
    assert added == pytest.approx(600_000 / 1.08 ** 5, abs=0.01)
    assert round(added) == 408_350
    flows = result.cashflows[result.cashflows["option"] == "add decode"]
    assert flows["residual_value_usd"].tolist() == [0.0] * 5 + [600_000.0]
    # the status quo buys nothing and resells nothing
    assert result.row("status quo")["residual_value_usd"] == 0.0  # type: ignore[index]


def test_the_derivation_shows_the_resale_with_its_numbers() -> None:
    s = {**RESALE, "residual_value_fraction": 0.2}
    text = option_text(analyse(s), "add decode", as_scenario(s))
    assert ("t = 5: residual_value_usd = bought_usd x residual_value_fraction = 3,000,000 x 0.2 = 600,000 USD"
            in text)
    assert "it adds 600,000 / (1 + 0.08)^5 = 408,350 USD to the NPV" in text
    # year 5's net cash flow carries it
    assert "net_usd = revenue_usd - opex_usd - capex_usd + residual_value_usd" in text


def test_residual_value_fraction_is_bounded() -> None:
    from economics.engine.batch import ScenarioError

    for bad in (-0.1, 1.5):
        with pytest.raises(ScenarioError, match="residual_value_fraction"):
            analyse({**RESALE, "residual_value_fraction": bad})


# --- the odds ---------------------------------------------------------------------------------------------------

from economics.studies.retrofit_odds import drivers, odds  # noqa: E402

EXAMPLE: dict[str, Any] = {
    "name": "decode example", "accelerator": "h100-sxm", "existing_accelerators": 2000, "facility_cooling": "air",
    "model": "minimax-m2", "precision": "fp8", "input_tokens_per_request": 10000.0, "output_tokens_per_request": 1000.0,
    "target_output_tokens_per_s_per_user": 100.0, "demand_output_tokens_per_day": 2e10,
    "demand_growth_per_year": 0.3, "horizon_years": 5, "decode_accelerator": "sn50",
    "decode_measured_output_tokens_per_s_per_user": 763.0, "decode_concurrent_users_per_replica": 16.0,
    "decode_accelerators_per_replica": 16, "new_accelerator": "gb200-nvl72", "price_usd_per_m_input_tokens": 0.3,
    "price_usd_per_m_output_tokens": 1.2, "fast_tier_price_multiplier": 1.5,
    "fast_tier_min_tokens_per_s_per_user": 300.0,
}
"""The Decode page's worked example (ui/decode.py): estimated rates, catalog prices marked estimate, fleets sized
once and year by year, a liquid retrofit, a fast tier."""


def _collapsed(s: dict[str, Any]) -> dict[str, tuple[float, float]]:
    return {d.name: (d.base, d.base) for d in drivers(s)}


def test_with_every_range_collapsed_the_odds_are_the_point_study() -> None:
    point = analyse(EXAMPLE)
    found = drivers(EXAMPLE, point)
    # every kind of range the study has: the estimator's, a sourced price range, the assumptions
    names = {d.name for d in found}
    assert {"h100-sxm throughput", "gb200-nvl72 throughput", "sn50 price", "sn50 users per replica",
            "electricity", "cost of capital", "demand growth", "token prices"} <= names
    sn50 = next(d for d in found if d.name == "sn50 price")
    assert (sn50.low, sn50.base, sn50.high, sn50.assumption) == (30_000.0, 35_000.0, 40_000.0, False)
    got = odds(EXAMPLE, samples=200, seed=3, point=point, ranges=_collapsed(EXAMPLE)).options.set_index("option")
    for row in point.rows:
        mine = got.loc[row["option"]]
        assert mine["npv_usd_p10"] == mine["npv_usd_p50"] == mine["npv_usd_p90"]
        assert mine["npv_usd_p50"] == pytest.approx(row["npv_vs_status_quo_usd"], rel=1e-9, abs=1e-3)
        for p in ("irr_p10", "irr_p50", "irr_p90"):
            assert mine[p] == pytest.approx(row["irr_vs_status_quo"], rel=1e-9) if row["irr_vs_status_quo"] \
                is not None and row["option"] != "status quo" else True
        if row["payback_months"] is not None:
            assert mine["payback_months_p50"] == pytest.approx(row["payback_months"], rel=1e-9)
    best = max(point.rows, key=lambda r: r["npv_vs_status_quo_usd"])["option"]
    assert got.loc[best, "probability_best"] == 1.0
    assert got["probability_best"].sum() == pytest.approx(1.0)


def test_the_probability_one_beats_the_other_is_the_normal_cdf_of_their_difference() -> None:
    # Only the selling prices move, by one factor f on every price, drawn normal with P10 0.4 and P90 1.6 (mean 1,
    # sd 0.6 / 1.28155 = 0.46818). By hand (tests/test_retrofit.py's study), a year's net at f: status quo
    # 22.857 x 31,536 f - 13,402.80; add decode 32 x 31,536 f - 20,104.20; more of the same 40 x 31,536 f - 26,805.60.
    # add decode - more of the same: +112,000 at t = 0 (128,000 against 240,000 of capex), then
    # -252,288 f + 6,701.40 a year for 2 years at 10 % (x 1.7355372): NPV difference 123,630.5 - 437,855.2 f,
    # normal with mean -314,224.7 and sd 437,855.2 x 0.46818 = 204,996: P(> 0) = Phi(-1.5328) = 0.0627
    # (f < 0.28236; a draw clipped at 0 is below it too).
    ranges = {**_collapsed(STUDY), "token prices": (0.4, 1.6)}
    got = odds(STUDY, samples=20_000, seed=11, distribution="normal", ranges=ranges)
    pairs = got.pairs.set_index(["option", "other"])["probability_option_beats_other"]
    expected = 0.5 * (1 + math.erf((0.28236 - 1.0) / (0.6 / 1.2815516) / math.sqrt(2)))
    assert expected == pytest.approx(0.0627, abs=5e-4)
    sd = math.sqrt(expected * (1 - expected) / 20_000)  # Monte Carlo error: 0.0017
    assert pairs[("add decode", "more of the same")] == pytest.approx(expected, abs=4 * sd)
    assert pairs[("more of the same", "add decode")] == pytest.approx(1 - expected, abs=4 * sd)


def test_the_tornado_ends_are_the_point_study_at_those_values() -> None:
    # each driver alone at an end goes through the same vectorised pass as the draws: it must give the NPVs the
    # ordinary study gives with that value in the scenario
    got = odds(STUDY, samples=100, seed=0)
    assert got.leading == ("more of the same", "add decode")
    table = got.tornado.set_index("driver")
    for name, field, end, value in (("electricity", "electricity_usd_per_kwh", "low", 0.05),
                                    ("cost of capital", "cost_of_capital", "high", 0.15)):
        at = analyse({**STUDY, field: value})
        diff = at.row("more of the same")["npv_vs_status_quo_usd"] - at.row("add decode")["npv_vs_status_quo_usd"]
        assert table.loc[name, f"difference_at_{end}"] == pytest.approx(diff, rel=1e-9)
    prices = analyse({**STUDY, "price_usd_per_m_input_tokens": 0.35, "price_usd_per_m_output_tokens": 1.4})
    diff = (prices.row("more of the same")["npv_vs_status_quo_usd"]
            - prices.row("add decode")["npv_vs_status_quo_usd"])
    assert table.loc["token prices", "difference_at_low"] == pytest.approx(diff, rel=1e-9)
    # by hand above: more of the same - add decode = 437,855.2 f - 123,630.5, zero at f = 0.28236, below the
    # range's low end (0.7): no break-even within it
    assert table.loc["token prices", "break_even"] is None or pd.isna(table.loc["token prices", "break_even"])


def test_break_even_is_found_where_the_difference_changes_sign() -> None:
    got = odds(STUDY, samples=10, seed=0, ranges={"token prices": (0.2, 1.3)})
    row = got.tornado.set_index("driver").loc["token prices"]
    # linear in f between 0.2 and 1: zero at f = 123,630.5 / 437,855.2 = 0.28236
    assert row["break_even"] == pytest.approx(0.28236, abs=1e-4)


def test_same_seed_same_draws_and_bad_input_is_named() -> None:
    a, b = odds(STUDY, samples=300, seed=5), odds(STUDY, samples=300, seed=5)
    assert a.options.equals(b.options)
    with pytest.raises(ValueError, match="samples"):
        odds(STUDY, samples=0)
    with pytest.raises(ValueError, match="'nope' is not a ranged input"):
        odds(STUDY, samples=10, ranges={"nope": (1.0, 2.0)})
    with pytest.raises(ValueError, match="electricity: 0.2 to 0.3 must be finite and contain its base 0.1"):
        odds(STUDY, samples=10, ranges={"electricity": (0.2, 0.3)})


def test_cli_retrofit_uncertainty_writes_the_odds_and_names_the_assumptions(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "economics", "retrofit", "docs/retrofit-example.csv", "--row", "1",
                          "--uncertainty", "--samples", "400", "--seed", "2", "--format", "json"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    odds_rows = {r["option"]: r for r in doc["odds"]}
    assert set(odds_rows) == {"status quo", "add decode", "more of the same", "more of the same, as demand grows"}
    assert sum(r["probability_best"] for r in odds_rows.values()) == pytest.approx(1.0)
    assert odds_rows["more of the same"]["npv_usd_p10"] <= odds_rows["more of the same"]["npv_usd_p50"] \
        <= odds_rows["more of the same"]["npv_usd_p90"]
    assert "note: assumption: token prices: 0.7 to 1.3 around 1" in out.stderr
    assert "is the best option in" in out.stderr and "of 400 draws (seed 2)" in out.stderr
    bad = subprocess.run([sys.executable, "-m", "economics", "retrofit", "docs/retrofit-example.csv", "--row", "1",
                          "--uncertainty", "--samples", "0"], cwd=root, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "--samples" in bad.stderr and "Traceback" not in bad.stderr


def test_the_fan_is_the_npv_to_each_year() -> None:
    # The hand study, every range collapsed: add decode against the status quo is -128,000 at t = 0, then
    # 281,627.74 a year (989,047.8 - 707,420.1); at 10 %: -128,000; -128,000 + 281,627.74 / 1.1 = 128,025.22;
    # + 281,627.74 / 1.21 = 360,775.42 (the option's NPV), at P10 = P50 = P90.
    got = odds(STUDY, samples=20, seed=1, ranges=_collapsed(STUDY)).fan
    mine = got[got["option"] == "add decode"].set_index("year")
    for p in (10, 50, 90):
        assert mine[f"npv_to_date_usd_p{p}"].tolist() == pytest.approx([-128_000.0, 128_025.22, 360_775.42],
                                                                       abs=0.01)
    assert "status quo" not in set(got["option"])
    point = analyse(STUDY).row("add decode")
    assert point is not None and mine.loc[2, "npv_to_date_usd_p50"] == pytest.approx(point["npv_vs_status_quo_usd"])
    # with the ranges, the band holds the median and widens with the years
    wide = odds(STUDY, samples=2_000, seed=1).fan
    band = wide[wide["option"] == "add decode"].set_index("year")
    assert (band["npv_to_date_usd_p10"] <= band["npv_to_date_usd_p50"]).all()
    assert (band["npv_to_date_usd_p50"] <= band["npv_to_date_usd_p90"]).all()
    spread = band["npv_to_date_usd_p90"] - band["npv_to_date_usd_p10"]
    assert spread.is_monotonic_increasing


# --- the draws remembered per option ------------------------------------------------------------------------------

from economics.studies import retrofit_odds  # noqa: E402


def _same_odds(a: Any, b: Any) -> None:
    """Two odds equal bit for bit: every draw's NPV, IRR and payback, the tornado's rows, and every table."""
    import numpy as np

    for name in ("npv", "irr", "payback_years", "point_npv", "base_npv", "ends_npv"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    for name, table in a.tables().items():
        pd.testing.assert_frame_equal(table, b.tables()[name], check_exact=True, obj=name)
    assert (a.leading, a.headline(), a.assumptions()) == (b.leading, b.headline(), b.assumptions())


EDITS: list[dict[str, Any]] = [
    {"decode_accelerator_price_usd": 60_000.0}, {"decode_accelerator_price_usd": 31_000.0},
    {"demand_output_tokens_per_day": 3e10}, {"decode_accelerator_price_usd": 90_000.0},
    {"cost_of_capital": 0.12}, {"residual_value_fraction": 0.3}, {"decode_accelerator_price_usd": None},
    {"demand_growth_per_year": 0.1}, {"token_price_change_per_year": -0.2},
    {"decode_concurrent_users_per_replica": 8.0}, {}, {},
]
"""Page edits in a row, each kept: prices (one option changes), then the demand, the cost of capital, the resale,
the growth, the price curve and the users per replica (every option, or the drivers, change); last, the same
scenario with another seed, then more draws."""


def test_the_odds_after_each_edit_equal_the_odds_from_scratch_bit_for_bit() -> None:
    scenario = dict(EXAMPLE)
    retrofit_odds.forget()
    for k, edit in enumerate(EDITS):
        scenario.update(edit)
        seed, samples = int(k >= len(EDITS) - 2), 300 + 100 * (k == len(EDITS) - 1)
        point = analyse(scenario)
        kept = odds(scenario, samples=samples, seed=seed, point=point)  # what earlier edits left remembered
        retrofit_odds.forget()
        _same_odds(kept, odds(scenario, samples=samples, seed=seed, point=point))


def test_a_price_edit_draws_add_decode_alone_again() -> None:
    # The example with a decode price given: a new price changes 'add decode' alone (the drivers and their draws
    # stay: the price given is not ranged); the other five options' flows over the draws are remembered.
    retrofit_odds.forget()
    first = {**EXAMPLE, "decode_accelerator_price_usd": 50_000.0}
    odds(first, samples=200, point=analyse(first))
    drawn = len(retrofit_odds._FLOWS)
    assert drawn == 6
    dearer = {**EXAMPLE, "decode_accelerator_price_usd": 70_000.0}
    odds(dearer, samples=200, point=analyse(dearer))
    assert len(retrofit_odds._FLOWS) == drawn + 1
    # the same price with other draws (another seed) is every option again
    odds(dearer, samples=200, seed=5, point=analyse(dearer))
    assert len(retrofit_odds._FLOWS) == drawn + 1 + 6


def test_what_is_remembered_is_bounded() -> None:
    import numpy as np

    memo = retrofit_odds._Memo(entries=2, max_bytes=3 * 800)  # 2 values, 3 arrays of 100 floats (800 bytes each)
    for k in range(3):
        memo.put(k, np.zeros(100))
    assert memo.get(0) is None and memo.get(1) is not None and memo.get(2) is not None  # the oldest dropped
    memo.get(1)  # 1 used since 2
    memo.put(3, np.zeros(200))  # 1,600 bytes: 3 values, one too many: 2, the least recently used, dropped
    assert memo.get(2) is None and memo.get(1) is not None and memo.get(3) is not None
    memo.put(5, np.zeros(100))  # 1 (800) + 3 (1,600) + 5 (800) = 3,200 bytes, over 2,400: 1 dropped (and 3 values)
    assert memo.get(1) is None and memo.get(3) is not None and memo.get(5) is not None
    memo.put(4, np.zeros(400))  # 3,200 bytes: over the bound, not kept (and nothing dropped for it)
    assert memo.get(4) is None and len(memo) == 2
    kept = memo.get(3)
    with pytest.raises(ValueError, match="read-only"):
        kept[0] = 1.0  # a remembered value cannot be changed by whoever reads it


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@given(arrays(float, st.tuples(st.integers(1, 40), st.integers(2, 9)),
              elements=st.one_of(st.floats(-1e9, 1e9), st.sampled_from([0.0, -1.0, 1.0, 5e-324, -1e300]))))
def test_irr_of_many_rows_is_the_finance_irr_of_each_bit_for_bit(flows: Any) -> None:
    # every kind of row: no sign change, one, several; zeros first or last (numpy.roots trims them); tiny and huge
    # flows (a companion matrix that overflows goes row by row)
    import numpy as np

    from economics.domain.finance import irr

    with np.errstate(all="ignore"):  # flows of 1e300 and 5e-324 overflow in numpy's own steps: values compared
        expected, refused = np.full(len(flows), np.nan), np.zeros(len(flows), dtype=bool)
        for i, row in enumerate(flows):
            try:
                value = irr(row)
            except np.linalg.LinAlgError:  # its companion matrix overflows: irr refuses the row, and so does irr_many
                refused[i] = True
                with pytest.raises(np.linalg.LinAlgError):
                    retrofit_odds.irr_many(flows[i:i + 1])
                continue
            expected[i] = np.nan if value is None else value
        flows, expected = flows[~refused], expected[~refused]
        assert np.array_equal(retrofit_odds.irr_many(flows), expected, equal_nan=True)
        # irr_rows: the bisection where the flows change sign once is its own (to 1e-15); the rest is irr_many's
        several = (flows > 0).any(axis=1) & (flows < 0).any(axis=1) & (retrofit_odds._sign_changes(flows) > 1)
        rows = retrofit_odds.irr_rows(flows)
    assert np.array_equal(rows[several], expected[several], equal_nan=True)

