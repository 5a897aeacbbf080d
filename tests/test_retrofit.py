"""Disaggregated serving and the retrofit study: hand-worked balance, KV link, option cash flows; invariants."""

from __future__ import annotations

import random
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from economics.studies.retrofit import (
    DEMAND_FIELDS,
    OptionKind,
    RetrofitResult,
    _forget,
    analyse,
    break_even_decode_price_usd,
)

# Simple owned hardware: constant draw (idle = full), PUE 1.5, 0.10 USD/kWh, nothing else but capital.
SIMPLE: dict[str, Any] = {
    "ownership": "own", "electricity_usd_per_kwh": 0.1, "pue": 1.5, "idle_power_fraction": 1.0,
    "colocation_usd_per_kw_month": 0.0, "maintenance_fraction_per_year": 0.0, "software_usd_per_accelerator_year": 0.0,
    "cost_of_capital": 0.1, "depreciation_years": 5.0, "peak_to_average": 1.0, "headroom": 0.0,
    "prefix_cache_hit_rate": 0.0,
}

DISAGG: dict[str, Any] = {
    **SIMPLE, "accelerator": "h200-sxm", "accelerator_count": 4, "input_tokens_per_s_per_accelerator": 20000.0,
    "decode_accelerator": "sn50", "decode_output_tokens_per_s_per_accelerator": 2000.0,
    "decode_accelerator_price_usd": 50000.0, "input_tokens_per_request": 10000.0, "output_tokens_per_request": 1000.0,
    "round_to_whole_systems": False, "model": "minimax-m2", "precision": "fp8",
}


EIGHT_REQ_S = {"demand_output_tokens_per_day": 8 * 1000 * 86400.0}  # 8 requests/s of 1,000 output tokens


def test_decode_pool_sized_from_the_demand_it_carries() -> None:
    # decode work: 691,200,000 output tokens/day / 2,000 tok/s = 345,600 SN50-s/day; peak 1, no headroom
    # -> ceil(345,600 / 86,400) = 4 SN50; a request is 0.5 s on an H200 (10,000 / 20,000): 4 H200 carry 8 req/s
    out = economics.evaluate_scenario({**DISAGG, **EIGHT_REQ_S})
    assert out["decode_accelerators"] == 4
    assert out["capacity_output_tokens_per_day"] == pytest.approx(8 * 1000 * 86400)
    # with whole systems, the SN50 pool is one rack of 16
    whole = economics.evaluate_scenario({**DISAGG, **EIGHT_REQ_S, "round_to_whole_systems": True})
    assert whole["decode_accelerators"] == 16
    # no demand and no decode count: nothing to size the decode pool from -> infeasible, with the reason
    bare = economics.evaluate_scenario(DISAGG)
    assert bare["feasible"] is False and "decode_accelerator_count" in bare["infeasible_reason"]


@pytest.mark.parametrize("hit_rate", [0.0, 0.5, 0.9, 0.99, 0.999, 1.0])
def test_decode_pool_does_not_follow_the_prefix_cache(hit_rate: float) -> None:
    # 8 H100 prefill at 20,000 tok/s, H200 decode at 3,000 tok/s, 1e9 output tokens a day, peak 2 (the default):
    # decode work 1e9 / 3,000 = 333,333.3 s/day; x 2 / 86,400 = 7.716 -> 8 H200 (one 8-GPU system), whatever the
    # hit rate (the old balance to the prefill pool bought 16 ... 13,336)
    row = {"accelerator": "h100-sxm", "accelerator_count": 8, "input_tokens_per_s_per_accelerator": 20000.0,
           "output_tokens_per_s_per_accelerator": 1000.0, "decode_accelerator": "h200-sxm",
           "decode_output_tokens_per_s_per_accelerator": 3000.0, "demand_output_tokens_per_day": 1e9,
           "prefix_cache_hit_rate": hit_rate}
    out = economics.evaluate_scenario(row)
    assert out["decode_accelerators"] == 8
    assert out["served_output_tokens_per_day"] == pytest.approx(1e9)
    # zero input tokens is a valid row too: the prefill pool idles, the decode pool is the same
    no_input = economics.evaluate_scenario({**row, "input_tokens_per_request": 0})
    assert no_input["decode_accelerators"] == 8 and no_input["utilization"] == 0


def test_capacity_is_the_smaller_pool() -> None:
    # 2 SN50 decode 2 x 2,000 / 1,000 = 4 req/s < 8 req/s of prefill: the decode pool limits the system
    out = economics.evaluate_scenario({**DISAGG, "decode_accelerator_count": 2})
    assert out["capacity_output_tokens_per_day"] == pytest.approx(4 * 1000 * 86400)
    assert out["utilization"] == pytest.approx(0.5) and out["decode_utilization"] == pytest.approx(1.0)
    # per prefill accelerator: 4 req/s over 4 H200 = 1 req/s (the binding pool, not the prefill pool's 2)
    assert out["capacity_requests_per_s_per_accelerator"] == pytest.approx(1.0)


def test_kv_link_bottleneck() -> None:
    # MiniMax M2 KV: 2 x 62 layers x 8 heads x 128 x 1 B (fp8) = 126,976 B/token; one 10,000-token prompt = 1.26976 GB
    # 8 req/s need 10.158 GB/s; a 5 GB/s link carries 5 / 1.26976 = 3.9378 req/s -> the link is the bottleneck
    free = economics.evaluate_scenario({**DISAGG, **EIGHT_REQ_S, "decode_accelerator_count": 4})
    assert free["kv_transfer_mb_per_request"] == pytest.approx(1269.76)
    assert free["kv_transfer_gb_per_s"] == pytest.approx(8 * 1.26976)
    tight = economics.evaluate_scenario({**DISAGG, **EIGHT_REQ_S, "decode_accelerator_count": 4,
                                         "kv_link_gb_per_s": 5.0})
    assert tight["served_output_tokens_per_day"] == pytest.approx(5 / 1.26976 * 1000 * 86400)
    assert "KV-cache link" in tight["warnings"]
    # the link caps each of the 4 prefill GPUs at 3.9378 / 4 = 0.98445 req/s and their utilization at
    # 3.9378 x 0.5 s / 4 = 0.49222
    assert tight["capacity_requests_per_s_per_accelerator"] == pytest.approx(5 / 1.26976 / 4)
    assert tight["utilization"] == pytest.approx(5 / 1.26976 * 0.5 / 4)


def test_break_even_utilization_respects_the_link() -> None:
    # link-bound row of test_kv_link_bottleneck (3.9378 req/s), prices 0.1 USD/M input, 1 USD/M output:
    # revenue per request 10,000 x 0.1 / 1e6 + 1,000 x 1 / 1e6 = 0.002 USD -> 3.9378 x 86,400 x 0.002 = 680.4 USD/day
    # cost: 4 H200 at 30,000 USD + 4 SN50 at 50,000 USD, CRF(10 %, 5 y) 0.263797, per day:
    #   capital (4 x 30,000 + 4 x 50,000) x 0.263797 / 365 = 231.27 USD/day, energy (4 x 1.275 + 4 x 1.25) x 1.5 x 0.1
    #   x 24 = 36.36 USD/day -> 267.63 USD/day < 680.4: profitable, break-even reachable
    row = {**DISAGG, **EIGHT_REQ_S, "decode_accelerator_count": 4, "kv_link_gb_per_s": 5.0,
           "accelerator_price_usd": 30000.0, "price_usd_per_m_input_tokens": 0.1, "price_usd_per_m_output_tokens": 1.0}
    out = economics.evaluate_scenario(row)
    assert out["revenue_usd_per_day"] == pytest.approx(5 / 1.26976 * 86400 * 0.002)
    assert out["cost_usd_per_day"] == pytest.approx(320000 * 0.26379748 / 365 + 10.1 * 1.5 * 0.1 * 24, rel=1e-6)
    # idle = full draw here, so all cost is fixed: break-even u = cost / revenue x u = 267.63 / 680.4 x 0.49222
    u = 5 / 1.26976 * 0.5 / 4
    assert out["break_even_utilization"] == pytest.approx(out["cost_usd_per_day"] / out["revenue_usd_per_day"] * u)
    # a tenth of the prices: the most revenue the link allows (68.04 USD/day) is below the cost -> not reachable
    cheap = economics.evaluate_scenario({**row, "price_usd_per_m_input_tokens": 0.01,
                                         "price_usd_per_m_output_tokens": 0.1})
    assert cheap["break_even_utilization"] > u
    assert "not reachable" in cheap["warnings"]


def test_costs_split_by_pool() -> None:
    # owned: H200 book 0 here; SN50 4 x 50,000 x CRF(10 %, 5 y) 0.263797 / 8,760 = 6.0228 USD/h capital
    out = economics.evaluate_scenario({**DISAGG, **EIGHT_REQ_S, "accelerator_price_usd": 0.0})
    decode_energy = 4 * 1.25 * 1.5 * 0.1
    prefill_energy = 4 * 1.275 * 1.5 * 0.1
    capital = 4 * 50000 * 0.26379748 / 8760
    assert out["decode_pool_cost_usd_per_hour"] == pytest.approx(capital + decode_energy, rel=1e-6)
    assert out["prefill_pool_cost_usd_per_hour"] == pytest.approx(prefill_energy, rel=1e-9)
    # input tokens carry the prefill pool's share of the cost
    share = prefill_energy / (prefill_energy + capital + decode_energy)
    assert out["input_time_share"] == pytest.approx(share, rel=1e-6)
    assert out["capital_usd_per_hour"] == pytest.approx(capital, rel=1e-6)


# --- the retrofit study, worked by hand --------------------------------------------------------------------

STUDY: dict[str, Any] = {
    **SIMPLE, "name": "study", "accelerator": "h100-sxm", "existing_accelerators": 8, "accelerator_price_usd": 30000.0,
    "input_tokens_per_request": 1000.0, "output_tokens_per_request": 250.0,
    "output_tokens_per_s_per_accelerator": 1000.0, "input_tokens_per_s_per_accelerator": 10000.0,
    "decode_accelerator": "h200-sxm", "decode_accelerator_count": 4, "decode_accelerator_price_usd": 32000.0,
    "decode_output_tokens_per_s_per_accelerator": 2000.0, "demand_requests_per_s": 40.0, "horizon_years": 2,
    "price_usd_per_m_input_tokens": 0.5, "price_usd_per_m_output_tokens": 2.0,
}
YEAR_S = 86400 * 365
REV_PER_REQUEST = 1000 * 0.5 / 1e6 + 250 * 2.0 / 1e6  # 0.001 USD
OPEX_PER_GPU = 1.275 * 1.5 * 0.1 * 8760  # 1,675.35 USD a year: energy only


def test_retrofit_options_cash_flows_npv_and_payback() -> None:
    # status quo: 8 H100 aggregated, 0.1 s prefill + 0.25 s decode = 0.35 s a request -> 22.857 req/s of the 40
    #   revenue 22.857 x 31,536,000 x 0.001 = 720,822.86/y; opex 8 x 1,675.35 = 13,402.80/y; net 707,420.06/y
    # add decode: 8 H100 prefill (80 req/s) + 4 H200 decode (4 x 2,000 / 250 = 32 req/s) -> 32 req/s
    #   capex 4 x 32,000 = 128,000; revenue 1,009,152/y; opex 12 x 1,675.35 = 20,104.20/y; net 989,047.80/y
    #   vs status quo: -128,000 | +281,627.74 | +281,627.74
    #   NPV at 10 %: -128,000 + 281,627.74 / 1.1 + 281,627.74 / 1.21 = 360,775.42; payback 128,000 / 281,627.74 y
    # more of the same: 40 x 0.35 = 14 GPUs -> whole 8-GPU systems: 16, 8 added: capex 240,000
    #   revenue 40 x 31,536,000 x 0.001 = 1,261,440/y; opex 16 x 1,675.35 = 26,805.60/y; net 1,234,634.40/y
    #   vs status quo: -240,000 | +527,214.34 | +527,214.34 -> NPV 675,000 (below); payback 240,000 / 527,214.34
    result = analyse(STUDY)
    opts = result.options.set_index("option")
    sq_net = 8 / 0.35 * YEAR_S * REV_PER_REQUEST - 8 * OPEX_PER_GPU
    dec_inc = 32 * YEAR_S * REV_PER_REQUEST - 12 * OPEX_PER_GPU - sq_net
    more_inc = 40 * YEAR_S * REV_PER_REQUEST - 16 * OPEX_PER_GPU - sq_net
    assert dec_inc == pytest.approx(281_627.74, abs=0.01)
    assert more_inc == pytest.approx(527_214.34, abs=0.01)
    assert opts.loc["add decode", "capex_usd"] == pytest.approx(128_000)
    assert opts.loc["more of the same", "capex_usd"] == pytest.approx(240_000)
    assert opts.loc["more of the same", "accelerators"] == 16
    assert opts.loc["status quo", "npv_vs_status_quo_usd"] == 0
    assert opts.loc["add decode", "npv_vs_status_quo_usd"] == pytest.approx(
        -128_000 + dec_inc / 1.1 + dec_inc / 1.21, rel=1e-9)
    assert opts.loc["add decode", "npv_vs_status_quo_usd"] == pytest.approx(360_775.42, abs=0.05)
    assert opts.loc["more of the same", "npv_vs_status_quo_usd"] == pytest.approx(
        -240_000 + more_inc / 1.1 + more_inc / 1.21, rel=1e-9)
    assert opts.loc["add decode", "payback_months"] == pytest.approx(128_000 / dec_inc * 12, rel=1e-9)
    assert opts.loc["more of the same", "payback_months"] == pytest.approx(240_000 / more_inc * 12, rel=1e-9)
    flows = result.cashflows[result.cashflows["option"] == "add decode"]
    assert flows["vs_status_quo_usd"].round(2).tolist() == [-128_000.0, round(dec_inc, 2), round(dec_inc, 2)]


def test_break_even_decode_price_matches_the_best_alternative() -> None:
    # 5 H200 decode 40 req/s: the whole demand, with fewer GPUs than 'more of the same' -> a positive break-even
    study = {**STUDY, "decode_accelerator_count": 5}
    p = break_even_decode_price_usd(study)
    assert p is not None and p > 0
    at = analyse({**study, "decode_accelerator_price_usd": p}).options.set_index("option")
    best = max(0.0, float(at.loc["more of the same", "npv_vs_status_quo_usd"]))
    assert at.loc["add decode", "npv_vs_status_quo_usd"] == pytest.approx(best, rel=1e-6)


def test_the_break_even_from_a_given_study_is_the_break_even_it_computes() -> None:
    # the study handed over (as the reference tests do) stands for the one the break-even computes first: the same
    # price, whether the scenario gives its decode price (both studies in one pass otherwise) or the catalog does
    for study in ({**STUDY, "decode_accelerator_count": 5},
                  {**STUDY, "decode_accelerator_count": 5, "decode_accelerator_price_usd": None}):
        alone = break_even_decode_price_usd(study, fresh=True)
        given = break_even_decode_price_usd(study, fresh=True, study=analyse(study, fresh=True))
        assert alone is not None and given == alone, (given, alone)


def test_a_decode_price_edit_changes_only_add_decode_and_matches_a_study_from_scratch() -> None:
    # 4 H200 decode at 32,000 -> 33,000 USD: the purchase at t = 0 is 4 x 1,000 = 4,000 USD more; maintenance is 0
    # (SIMPLE) and capital charges are not cash flows, so the NPV falls by exactly 4,000 (t = 0, undiscounted)
    before = analyse(STUDY)
    edited = {**STUDY, "decode_accelerator_price_usd": 33000.0}
    after = analyse(edited)  # the other options' years are remembered from the first study
    b, a = before.options.set_index("option"), after.options.set_index("option")
    assert a.loc["add decode", "capex_usd"] == pytest.approx(132_000.0)
    assert b.loc["add decode", "npv_vs_status_quo_usd"] - a.loc["add decode", "npv_vs_status_quo_usd"] == \
        pytest.approx(4_000.0, abs=1e-6)
    pd.testing.assert_frame_equal(a.drop(index="add decode"), b.drop(index="add decode"))
    _forget()  # nothing remembered: every option evaluated again
    cold = analyse(edited)
    pd.testing.assert_frame_equal(cold.options, after.options)
    pd.testing.assert_frame_equal(cold.cashflows, after.cashflows)
    pd.testing.assert_frame_equal(cold.years, after.years)
    # the years table: each option's years in order, 2 per option
    assert after.years["option"].tolist() == [o for o in a.index for _ in (1, 2)]
    assert after.years["year"].tolist() == [1, 2] * len(a)
    assert after.years.loc[after.years["option"] == "add decode", "decode_accelerator_price_usd"].tolist() == \
        [33000.0, 33000.0]


def test_an_unreachable_target_makes_the_options_infeasible_with_the_reason() -> None:
    # 5,000 tokens/s per user is beyond any H100 replica: the fleet cannot be sized from demand for 'more of the
    # same' (no size at all); the study says why for each option instead of failing (it raised a TypeError before)
    study = {"model": "llama-3.1-70b", "precision": "fp8", "accelerator": "h100-sxm", "accelerator_price_usd": 30000,
             "existing_accelerators": 8, "target_output_tokens_per_s_per_user": 5000,
             "demand_output_tokens_per_day": 1e9, "price_usd_per_m_output_tokens": 2.0}
    opts = analyse(study).options.set_index("option")
    assert opts.index.tolist() == ["status quo", "more of the same", "more of the same, as demand grows"]
    assert not opts["feasible"].any()
    assert all("target 5,000 tokens/s per user not reachable on h100-sxm" in r for r in opts["reason"])


def test_a_fleet_that_cannot_be_sized_keeps_no_size_when_another_can() -> None:
    # 100 tokens/s per user: an H100 replica gives at most 71.46 at batch 1, a B200 one 116.8. 'More of the same'
    # cannot be sized from demand while 'new generation' can; it used to take the existing fleet's 8 accelerators
    # as its size (a NaN count lost in max(existing, NaN)) and show them in its years
    study = {"model": "llama-3.1-70b", "precision": "fp8", "accelerator": "h100-sxm", "accelerator_price_usd": 30000,
             "existing_accelerators": 8, "target_output_tokens_per_s_per_user": 100, "new_accelerator": "b200",
             "demand_output_tokens_per_day": 1e9, "price_usd_per_m_output_tokens": 2.0}
    for fresh in (True, False):
        result = analyse(study, fresh=fresh)
        opts, years = result.options.set_index("option"), result.years
        more = years[years["option"] == "more of the same"]
        assert more["accelerator_count"].isna().all() and not more["feasible"].any()
        assert "target 100 tokens/s per user not reachable on h100-sxm" in opts.loc["more of the same", "reason"]
        assert bool(opts.loc["new generation", "feasible"])


def test_new_generation_in_an_air_hall_needs_the_liquid_retrofit() -> None:
    # GB200 NVL72 needs liquid; the air-cooled hall gets a retrofit: capex includes IT MW x 2 M USD/MW
    study = {**STUDY, "new_accelerator": "gb200-nvl72", "facility_cooling": "air", "pue": None,
             "model": "llama-3.1-70b", "precision": "fp8"}
    opts = analyse(study).options.set_index("option")
    new = opts.loc["new generation"]
    assert new["feasible"], new["reason"]
    years = analyse(study).years
    first = years[(years["option"] == "new generation") & (years["year"] == 1)].iloc[0]
    retrofit = float(first["it_power_kw"]) / 1000 * 2e6
    assert new["capex_usd"] == pytest.approx(float(first["accelerators"]) * float(first["accelerator_price_usd"])
                                             + retrofit, rel=1e-9)
    assert float(first["pue_effective"]) == pytest.approx(1.15)
    # without the retrofit the same hardware is infeasible in that hall
    plain = economics.evaluate_scenario({**study, "accelerator": "gb200-nvl72", "accelerator_count": 72,
                                         "decode_accelerator": None, "allow_liquid_retrofit": False,
                                         "output_tokens_per_s_per_accelerator": 1000.0})
    assert not plain["feasible"] and "requires liquid cooling" in plain["infeasible_reason"]


# --- invariants ------------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 64), st.integers(1, 64), st.floats(100.0, 50000.0), st.floats(100.0, 5000.0))
def test_adding_decode_capacity_never_lowers_capacity(g: int, k: int, p: float, d: float) -> None:
    rows = pd.DataFrame([{**DISAGG, "accelerator_count": g, "decode_accelerator_count": kk,
                          "input_tokens_per_s_per_accelerator": p, "decode_output_tokens_per_s_per_accelerator": d}
                         for kk in (k, k + 1, 2 * k)])
    cap = economics.evaluate(rows)["capacity_output_tokens_per_day"].astype(float).tolist()
    assert cap[0] <= cap[1] * (1 + 1e-12) and cap[1] <= cap[2] * (1 + 1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(1000.0, 200000.0), st.floats(1000.0, 200000.0))
def test_npv_falls_as_the_decode_price_rises(a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    npv = [analyse({**STUDY, "decode_accelerator_price_usd": p}).options.set_index("option").loc[
        "add decode", "npv_vs_status_quo_usd"] for p in (lo, hi)]
    assert npv[1] <= npv[0] * (1 + 1e-12) + 1e-6


def test_growth_applies_to_a_request_rate() -> None:
    # 10 req/s doubling a year: year 1 serves 10 req/s, year 2 20 req/s (below the 8 / 0.35 = 22.857 capacity)
    # revenue 10 x 31,536,000 x 0.001 = 315,360 USD, then 630,720 USD
    result = analyse({**STUDY, "demand_requests_per_s": 10.0, "demand_growth_per_year": 1.0})
    flows = result.cashflows[result.cashflows["option"] == "status quo"]
    assert flows["revenue_usd"].tolist() == pytest.approx([0.0, 315_360.0, 630_720.0])


def test_sunk_costs_never_enter_the_cash_flows() -> None:
    # maintenance 10 % a year on the accelerator's price (30,000 USD), whatever its book value:
    # status quo opex = 8 x 1,675.35 energy + 8 x 30,000 x 0.1 = 13,402.80 + 24,000 = 37,402.80 USD/year
    study = {**STUDY, "maintenance_fraction_per_year": 0.1}
    written_off = analyse({**study, "existing_book_value_usd": 0.0})
    on_books = analyse({**study, "existing_book_value_usd": 20_000.0})
    sq = written_off.options.set_index("option").loc["status quo"]
    assert sq["opex_usd_per_year"] == pytest.approx(8 * OPEX_PER_GPU + 24_000.0)
    pd.testing.assert_frame_equal(written_off.cashflows, on_books.cashflows)


def test_an_option_equal_to_the_status_quo_has_no_payback() -> None:
    from economics.studies.retrofit import Option

    result = analyse(STUDY, extra_options=[Option("same again", "the fleet as it is", {
        "accelerator_count": 8, "decode_accelerator": None, "decode_accelerator_count": None})])
    same = result.options.set_index("option").loc["same again"]
    assert same["npv_vs_status_quo_usd"] == 0
    assert pd.isna(same["payback_months"]) and pd.isna(same["irr_vs_status_quo"])  # none, never "0 months"


def test_fast_tier_with_measured_throughput() -> None:
    # measured throughput at a 100 tok/s per-user target; the fast tier starts at 50 tok/s and doubles the output
    # price: a request earns 1,000 x 0.5 / 1e6 + 250 x 2.0 x 2 / 1e6 = 0.0015 USD
    # status quo: 8 / 0.35 req/s x 31,536,000 s x 0.0015 = 1,081,234.29 USD/year
    result = analyse({**STUDY, "target_output_tokens_per_s_per_user": 100.0,
                      "fast_tier_min_tokens_per_s_per_user": 50.0, "fast_tier_price_multiplier": 2.0})
    sq = result.options.set_index("option").loc["status quo"]
    assert sq["revenue_usd_per_year"] == pytest.approx(8 / 0.35 * YEAR_S * 0.0015)


# --- the remembered, vectorised study against a study from scratch ------------------------------------------------

def random_study(rng: random.Random) -> dict[str, Any]:
    """A random decode study: an existing fleet, estimated or measured speeds, a decode pool (priced, from the
    catalog or none), a new generation or none, demand in any of its forms with growth (falling too), prices or
    none, the fast tier, facility limits that make some options infeasible, owned or rented hardware."""
    def some(lo: float, hi: float, none: float = 0.0) -> float | None:
        return None if rng.random() < none else rng.uniform(lo, hi)

    s: dict[str, Any] = {
        "accelerator": rng.choice(["a100-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x"]),
        "existing_accelerators": rng.choice([8, 64, 512, 2000, rng.randint(1, 5000)]),
        "model": rng.choice(["llama-3.1-8b", "llama-3.1-70b", "minimax-m2", "deepseek-v3", "qwen3-32b"]),
        "precision": rng.choice(["fp8", "bf16"]), "ownership": rng.choice(["own", "own", "rent"]),
        "input_tokens_per_request": rng.choice([0.0, 1000.0, 10000.0, rng.uniform(1.0, 20000.0)]),
        "output_tokens_per_request": rng.uniform(50.0, 4000.0),
        "target_output_tokens_per_s_per_user": rng.choice([None, 20.0, 100.0, rng.uniform(5.0, 400.0)]),
        "output_tokens_per_s_per_accelerator": some(100.0, 20000.0, none=0.6),
        "decode_accelerator": rng.choice([None, "sn50", "h200-sxm", "b200", "gb200-nvl72"]),
        "decode_output_tokens_per_s_per_accelerator": some(100.0, 5000.0, none=0.4),
        "decode_accelerator_price_usd": some(1e3, 2e5, none=0.4),
        "new_accelerator": rng.choice([None, "gb200-nvl72", "b200", "h200-sxm"]),
        "facility_cooling": rng.choice(["air", "liquid", "hybrid"]),
        "site_power_mw": rng.choice([None, None, None, rng.uniform(1.0, 200.0)]),
        "demand_growth_per_year": rng.choice([0.0, 0.3, rng.uniform(-0.5, 2.0)]),
        "horizon_years": rng.randint(1, 8), "cost_of_capital": rng.uniform(0.0, 0.2),
        "price_usd_per_m_input_tokens": some(0.0, 2.0, none=0.2),
        "price_usd_per_m_output_tokens": some(0.0, 10.0, none=0.2),
        "fast_tier_min_tokens_per_s_per_user": some(10.0, 400.0, none=0.5),
        "fast_tier_price_multiplier": rng.choice([1.0, 1.5, rng.uniform(1.0, 3.0)]),
        "maintenance_fraction_per_year": rng.uniform(0.0, 0.15),
    }
    form = rng.choice(["demand_output_tokens_per_day", "demand_input_tokens_per_day", "demand_requests_per_s"])
    s[form] = 10 ** rng.uniform(0.0, 4.0) if form == "demand_requests_per_s" else 10 ** rng.uniform(8.0, 11.5)
    if s["ownership"] == "rent":
        s["rent_usd_per_accelerator_hour"] = rng.uniform(1.0, 10.0)
        s["decode_rent_usd_per_accelerator_hour"] = rng.uniform(1.0, 10.0)
    return s


def edits(rng: random.Random, s: dict[str, Any]) -> list[dict[str, Any]]:
    """What a user changes next, one field at a time: the decode price, the demand (twice: each is new), the
    growth, the horizon, a price."""
    form = next(d for d in DEMAND_FIELDS if s.get(d) is not None)
    return [{**s, "decode_accelerator_price_usd": rng.uniform(1e3, 2e5)},
            {**s, form: s[form] * rng.uniform(0.2, 5.0)}, {**s, form: s[form] * rng.uniform(0.2, 5.0)},
            {**s, "demand_growth_per_year": rng.uniform(-0.5, 1.5)}, {**s, "horizon_years": rng.randint(1, 8)},
            {**s, "price_usd_per_m_output_tokens": rng.uniform(0.1, 10.0)}]


def assert_identical(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """``pd.testing.assert_frame_equal(got, expected, check_exact=True)``, which walks every column in Python (about
    43 ms of CPU a study's three tables, its years' of some 250 columns; ``equals`` 3 ms): ``DataFrame.equals``
    first (every column of the same dtype with the same values, NaN where NaN), with the labels, their dtypes and
    names the same; only when that does not hold does assert_frame_equal run, to fail and say where.
    """
    same_axes = all(type(a) is type(b) and a.dtype == b.dtype and a.names == b.names and a.equals(b)
                    for a, b in ((got.index, expected.index), (got.columns, expected.columns)))
    if not (type(got) is type(expected) and same_axes and got.equals(expected)):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_assert_identical_fails_wherever_assert_frame_equal_does() -> None:
    base = pd.DataFrame({"npv": [1.0, float("nan")], "name": pd.Series(["a", None], dtype=object), "n": [1, 2]},
                        index=pd.Index([0, 1]))
    assert_identical(base, base.copy())
    changed = [base.assign(npv=[1.0 + 1e-15, float("nan")]),  # the last bit of a figure
               base.assign(npv=[1.0, 0.0]),  # a figure where the other is empty
               base.assign(npv=pd.array([1.0, None], dtype="Float64")),  # the same values, another dtype
               base.assign(name=pd.Series(["b", None], dtype=object)),  # a text of an object column
               base.assign(n=[1.0, 2.0]),  # int and float
               base.set_axis(pd.Index([0.0, 1.0])),  # the row labels' dtype
               base.set_axis(pd.Index([0, 1], name="year")),  # their name
               base.rename(columns={"n": "m"}), base[["name", "npv", "n"]]]  # a column's name, the columns' order
    for other in changed:
        with pytest.raises(AssertionError):
            pd.testing.assert_frame_equal(base, other, check_exact=True)
        with pytest.raises(AssertionError):
            assert_identical(base, other)


def assert_same_study(s: dict[str, Any]) -> RetrofitResult | None:
    """The study as the app computes it (options remembered from the studies before, years in one vectorised
    pass) gives, exactly, what a study from scratch gives: options table, cash flows, every year's result and the
    break-even decode price, or the same refusal."""
    try:
        scratch = analyse(s, fresh=True)
    except ValueError as refused:
        with pytest.raises(ValueError) as caught:
            analyse(s)
        assert str(caught.value) == str(refused)
        return None
    quick = analyse(s)
    assert_identical(quick.options, scratch.options)
    assert_identical(quick.cashflows, scratch.cashflows)
    assert_identical(quick.years, scratch.years)
    assert quick.rows == scratch.rows or quick.options.equals(scratch.options)
    # the fresh break-even reads the fresh study above (the same study it would compute first) and computes the
    # dearer one from scratch
    fresh_price = break_even_decode_price_usd(s, fresh=True, study=scratch)
    price = break_even_decode_price_usd(s)
    assert price == fresh_price or (price != price and fresh_price != fresh_price), (price, fresh_price)
    return quick


def test_the_remembered_vectorised_study_equals_a_study_from_scratch() -> None:
    # 12 random studies, each followed by six edits as a user makes them (each edit's study remembers the options
    # the edit does not change): 84 studies (30 took a quarter of the suite's time on a loaded machine), every
    # figure equal to the one from scratch (each year on its own, nothing remembered); most option years come from
    # the vectorised pass (the others: invalid or infeasible years, or a one-year horizon, which the single-scenario
    # path gives), or this would prove little
    rng = random.Random(20261130)
    _forget()
    fast = slow = 0
    for _ in range(12):
        s = random_study(rng)
        for study in [s, *edits(rng, s)]:
            quick = assert_same_study(study)
            for _, part in [] if quick is None else quick.option_years:
                fast, slow = (fast + 1, slow) if part.known is not None else (fast, slow + 1)
    assert fast > slow, (fast, slow)



def same(a: Any, b: Any) -> bool:
    """Equal, or both empty (NaN)."""
    return bool(a == b) or (a != a and b != b)


def test_add_decode_against_the_status_quo_alone_is_the_whole_studys() -> None:
    # the Decode page's first KPIs read 'add decode' from its study against the status quo alone (analyse(...,
    # only=...)), then the whole study, which finds both remembered: after each edit as a user makes it, the two
    # rows and their cash flows are exactly those of the study from scratch, and so is the whole study after them
    rng = random.Random(20261207)
    _forget()
    checked = 0
    for _ in range(4):
        s = random_study(rng)
        for study in [s, *edits(rng, s)]:
            try:
                scratch = analyse(study, fresh=True)
            except ValueError as refused:
                with pytest.raises(ValueError) as caught:
                    analyse(study, only=(OptionKind.ADD_DECODE,))
                assert str(caught.value) == str(refused)
                continue
            head = analyse(study, only=(OptionKind.ADD_DECODE,))
            names = [r["option"] for r in scratch.rows if r["option"] in (OptionKind.STATUS_QUO, OptionKind.ADD_DECODE)]
            assert [r["option"] for r in head.rows] == names
            for got, whole in ((head.rows, scratch.rows), (head.flows, scratch.flows)):  # as dicts: a table of
                expected = [r for r in whole if r["option"] in names]  # two rows may type an empty column otherwise
                assert [r.keys() for r in got] == [r.keys() for r in expected]
                assert all(same(a[k], b[k]) for a, b in zip(got, expected, strict=True) for k in a), study
            quick = analyse(study)
            assert_identical(quick.options, scratch.options)
            assert_identical(quick.cashflows, scratch.cashflows)
            checked += len(names) == 2 and len(scratch.rows) > 2
    assert checked >= 10, checked  # most studies have a decode pool and options besides, or this would prove little


def break_even_from_two_studies(s: dict[str, Any]) -> float | None:
    """The break-even decode price as it was computed before its two studies shared one pass of the engine: the
    study at the scenario's decode price p0, then a second study with 'add decode' at p0 + 1,000 USD, each from
    scratch, and the price on the line through their NPVs at which 'add decode' equals the best other option (or
    0)."""
    s = {**s}
    base = analyse(s, fresh=True)
    decode = base.row("add decode")
    if not s.get("decode_accelerator") or decode is None or not decode["feasible"]:
        return None
    best = max([0.0, *(float(r["npv_vs_status_quo_usd"]) for r in base.rows
                       if r["option"] != "add decode" and r["feasible"] and r["npv_vs_status_quo_usd"] is not None
                       and r["npv_vs_status_quo_usd"] == r["npv_vs_status_quo_usd"])])
    part = next(part for name, part in base.option_years if name == "add decode")
    price = part.first({"decode_accelerator_price_usd"})["decode_accelerator_price_usd"]
    p0 = float("nan") if price is None else float(price)
    n0 = float(decode["npv_vs_status_quo_usd"])
    dearer = analyse(s, decode_price_override=p0 + 1000.0, fresh=True).row("add decode")
    assert dearer is not None
    slope = (n0 - float(dearer["npv_vs_status_quo_usd"])) / 1000.0
    return None if not slope > 0 else p0 + (n0 - best) / slope


def test_the_break_even_price_in_one_pass_equals_its_two_studies() -> None:
    # the page asks for the break-even at no decode price (0) right after the study of the scenario: both studies
    # ('add decode' at 0 and at 1,000 USD; every other option is the study's, remembered) now go through one pass
    # of the engine. The price is exactly the one two studies from scratch give, at a given price (the page's 0
    # and a random one) and at the catalog's (none given, then read by the first study)
    from tests.test_retrofit_odds import EXAMPLE  # the Decode page's worked example (the SN50 at the catalog's price)

    rng = random.Random(20261206)
    _forget()
    checked = 0
    fixed = [EXAMPLE, {**EXAMPLE, "demand_output_tokens_per_day": 1e10}, {**STUDY, "decode_accelerator_count": 5},
             {**STUDY, "decode_accelerator_count": 5, "demand_growth_per_year": 0.3}]
    for s in fixed + [random_study(rng) for _ in range(4)]:
        try:
            analyse(s)
        except ValueError:
            continue
        for study in (s, {**s, "decode_accelerator_price_usd": 0.0},
                      {**s, "decode_accelerator_price_usd": rng.uniform(1e3, 2e5)}):
            expected, got = break_even_from_two_studies(study), break_even_decode_price_usd(study)
            assert got == expected or (got != got and expected != expected), (study, got, expected)
            checked += expected is not None and expected == expected
    assert checked >= 12, checked  # the fixed studies have a break-even at every price, or this would prove little

HAND_STUDY = {"accelerator": "h100-sxm", "output_tokens_per_s_per_accelerator": 1000.0,
              "input_tokens_per_s_per_accelerator": 1e7, "input_tokens_per_request": 100.0,
              "output_tokens_per_request": 1000.0, "accelerators_per_replica": 1, "round_to_whole_systems": False,
              "peak_to_average": 1.0, "existing_accelerators": 4, "demand_output_tokens_per_day": 6e8,
              "demand_growth_per_year": 0.5, "horizon_years": 3, "accelerator_price_usd": 30000.0,
              "price_usd_per_m_output_tokens": 2.0, "price_usd_per_m_input_tokens": 0.0}
"""A study small enough to work by hand (the tests below say how)."""


def test_every_option_faces_the_same_demand_path_sized_by_hand() -> None:
    # 1,000 output tokens/s per H100 given, prefill at 10 M tokens/s, 100 in / 1,000 out per request: a request
    # takes 100 / 1e7 + 1,000 / 1,000 = 1.00001 accelerator-seconds. 600 M output tokens a day = 600,000 requests,
    # 600,000 x 1.00001 / 86,400 = 6.9445 accelerators busy (peak = average): 7 to serve year 1; growing 50 % a
    # year, year 2 needs ceil(10.4168) = 11 and year 3 ceil(15.6252) = 16.
    result = analyse(HAND_STUDY)
    opts = result.options.set_index("option")
    flows = result.cashflows.set_index(["option", "year"])
    # sized once for year 3: 16 in all, the 12 beyond the existing 4 bought at t = 0 (12 x 30,000 = 360,000)
    assert opts.loc["more of the same", "accelerators"] == 16
    assert [flows.loc[("more of the same", t), "capex_usd"] for t in range(4)] == [360000.0, 0.0, 0.0, 0.0]
    # as demand grows: 7, 11, 16 in years 1-3, each bought at the start of its year: 3, 4 and 5 more at t = 0, 1, 2
    assert opts.loc["more of the same, as demand grows", "sizing"].endswith("7 in year 1 to 16 in year 3")
    assert [flows.loc[("more of the same, as demand grows", t), "capex_usd"] for t in range(4)] == [
        90000.0, 120000.0, 150000.0, 0.0]
    # both serve the whole demand every year: 600 M x 365 x 2 USD / M = 438,000 USD in year 1, then x 1.5 a year
    for option in ("more of the same", "more of the same, as demand grows"):
        assert [flows.loc[(option, t), "revenue_usd"] for t in (1, 2, 3)] == pytest.approx([438000, 657000, 985500])
        assert opts.loc[option, "lowest_served_share"] == 1.0 and opts.loc[option, "forgone_revenue_usd"] == 0.0
    # the status quo's 4 serve 4 / 6.9445 = 57.6 % of year 1, 4 / 10.4168 = 38.4 % and 4 / 15.6252 = 25.6 %; the
    # rest turned away in year 1 is 438,000 x (1 - 0.57599) = 185,714 USD
    shares = [flows.loc[("status quo", t), "served_share"] for t in (1, 2, 3)]
    assert shares == pytest.approx([4 / 6.94451, 4 / 10.41677, 4 / 15.62516], rel=1e-5)
    assert flows.loc[("status quo", 1), "forgone_revenue_usd"] == pytest.approx(438000 * (1 - 4 / 6.94451), rel=1e-5)
    assert opts.loc["status quo", "forgone_revenue_usd"] == pytest.approx(
        sum(438000 * 1.5 ** (t - 1) * (1 - f) for t, f in zip((1, 2, 3), shares, strict=True)))


def test_the_derivation_shows_each_purchase_and_sums_to_the_npv() -> None:
    from economics.engine.batch import as_scenario
    from economics.studies.retrofit_explain import option_text

    result = analyse(HAND_STUDY)
    text = option_text(result, "more of the same, as demand grows", as_scenario(HAND_STUDY))
    # the purchases worked by hand above: 3, 4 and 5 H100 at 30,000 USD, at t = 0, 1 and 2
    for t, n, usd in ((0, 3, "90,000"), (1, 4, "120,000"), (2, 5, "150,000")):
        assert f"t = {t}: purchase_usd = bought x price_usd = {n} x 30,000 = {usd} USD" in text
    assert "capex_usd = 90,000 + 120,000 + 150,000 = 360,000 USD over the horizon" in text
    # year 1's revenue: 600 M output tokens a day x 2 USD / M = 1,200 USD a day, x 365 = 438,000 USD
    assert "revenue_usd = (revenue_usd_per_day x 365 day/year + fast_tier_usd) x token_price_index\n" in text
    assert "= (1,200 x 365 + 0) x 1 = 438,000 USD" in text
    # the NPV line: the present values it lists add up to the NPV the options table holds
    line = next(x for x in text.splitlines() if x.startswith("npv_vs_status_quo_usd = sum of the present values"))
    terms, total = line.split(" = ")[2], line.split(" = ")[3]
    npv = result.row("more of the same, as demand grows")["npv_vs_status_quo_usd"]
    assert sum(float(x.replace(",", "")) for x in terms.replace(" + ", "|").split("|")) == pytest.approx(npv, abs=3)
    assert float(total.replace(" USD", "").replace(",", "")) == pytest.approx(npv, abs=1)


def test_the_status_quo_derivation_says_what_it_turns_away() -> None:
    from economics.engine.batch import as_scenario
    from economics.studies.retrofit_explain import option_text

    text = option_text(analyse(HAND_STUDY), "status quo", as_scenario(HAND_STUDY))
    assert "capex_usd = 0 USD (nothing bought: the existing fleet is sunk)" in text
    # year 1: 4 of the 6.9445 accelerators the demand needs; 438,000 x (1 / 0.576 - 1) turned away
    assert "forgone_revenue_usd = revenue_usd x (1 / served_fraction - 1)" in text
    assert "this is the status quo (NPV 0 by definition)" in text
