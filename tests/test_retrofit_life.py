"""The asset's life in the decode study: forward curves, the refresh, lease against buy, the cost of capital's
effect, and every decode accelerator of the catalog (economics.studies.retrofit_cash, retrofit_life,
retrofit_decode)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from economics.domain.finance import npv_usd
from economics.engine.batch import ScenarioError, as_scenario
from economics.studies.retrofit import analyse
from economics.studies.retrofit_cash import forward_y, lease_t_usd, refresh_net_t_usd
from economics.studies.retrofit_decode import _decode_options, decode_options, decode_table
from economics.studies.retrofit_explain import option_text
from economics.studies.retrofit_life import best_year, refresh
from tests.test_retrofit import HAND_STUDY
from tests.test_retrofit_odds import EXAMPLE, RESALE

NEW_GENERATION: dict[str, Any] = {
    "model": "llama-3.1-70b", "precision": "fp8", "accelerator": "h100-sxm", "accelerator_price_usd": 30000,
    "existing_accelerators": 8, "target_output_tokens_per_s_per_user": 40, "new_accelerator": "b200",
    "demand_output_tokens_per_day": 1e9, "price_usd_per_m_output_tokens": 2.0, "horizon_years": 3,
    "residual_value_fraction": 0.25,
}
"""tests/test_retrofit.py's B200 study, at a speed the existing H100 reach (40 tokens/s per user)."""


def test_a_forward_curve_moves_each_year_by_one_formula() -> None:
    # -20 % a year: year 1 at 1, year 2 at 0.8, year 3 at 0.8^2 = 0.64
    assert forward_y(-0.2, 3).tolist() == pytest.approx([1.0, 0.8, 0.64])
    # one curve per draw: a table, draws x years
    assert forward_y(np.array([0.0, 0.5]), 2).tolist() == [[1.0, 1.0], [1.0, 1.5]]


def test_the_token_price_curve_scales_each_years_revenue() -> None:
    # HAND_STUDY sells 600 M output tokens a day at 2 USD / M in year 1 = 1,200 USD a day, x 365 = 438,000 USD;
    # year 2 serves 1.5 x as much (1,800 USD a day at year 1's price) at 0.8 of the price:
    # 1,800 x 365 x 0.8 = 525,600 USD (657,000 held flat)
    s = {**HAND_STUDY, "token_price_change_per_year": -0.2}
    flows = analyse(s).cashflows.set_index(["option", "year"])
    assert flows.loc[("more of the same", 1), "revenue_usd"] == pytest.approx(438_000.0)
    assert flows.loc[("more of the same", 2), "revenue_usd"] == pytest.approx(525_600.0)
    text = option_text(analyse(s), "more of the same", as_scenario(s))
    assert "token_price_index = (1 + token_price_change_per_year) ^ (year - 1)" in text
    assert "= (1,800 x 365 + 0) x 0.8 = 525,600 USD" in text


def test_the_rent_curve_moves_a_rented_fleets_opex() -> None:
    # 8 rented H100 at 2 USD/h: 16 USD/h x 8,760 = 140,160 USD of rent in year 1; at +10 % a year year 2 pays
    # 140,160 x 0.1 = 14,016 USD more than held flat, year 3 140,160 x (1.1^2 - 1) = 29,433.6 USD more
    base = {**RESALE, "ownership": "rent", "rent_usd_per_accelerator_hour": 2.0, "existing_accelerators": 8,
            "horizon_years": 3}
    flat = analyse(base).cashflows.set_index(["option", "year"])
    rising = analyse({**base, "rent_change_per_year": 0.1}).cashflows.set_index(["option", "year"])
    more = [rising.loc[("status quo", t), "opex_usd"] - flat.loc[("status quo", t), "opex_usd"] for t in (1, 2, 3)]
    assert more == pytest.approx([0.0, 14_016.0, 29_433.6])


def test_the_curves_are_bounded() -> None:
    for field, bad in (("rent_change_per_year", -0.95), ("token_price_change_per_year", -1.0),
                       ("lease_rate_per_year", 0.0), ("lease_rate_per_year", 2.5)):
        with pytest.raises(ScenarioError, match=field):
            analyse({**RESALE, field: bad})


def test_the_refresh_cash_flow_by_hand() -> None:
    # kept 1 year of 3 (100 a year), then 120 USD of new hardware (150 a year) bought at t = 1 and resold at
    # 0.25 x 120 = 30 at t = 3: flows 0, 100 - 120 = -20, 150, 150 + 30 = 180. Against keeping it (0, 100, 100,
    # 100) at 10 %: -120 / 1.1 + 50 / 1.21 + 80 / 1.331 = -109.0909 + 41.3223 + 60.1052 = -7.6634
    net = refresh_net_t_usd(np.full(3, 100.0), np.full(3, 150.0), 120.0, 0.0, 1, 0.25)
    assert net.tolist() == [0.0, -20.0, 150.0, 180.0]
    assert npv_usd(0.1, net - np.array([0.0, 100.0, 100.0, 100.0])) == pytest.approx(-7.663411, abs=1e-6)
    # kept to the horizon: nothing bought, nothing resold
    assert refresh_net_t_usd(np.full(3, 100.0), np.full(3, 150.0), 120.0, 0.0, 3, 0.25).tolist() == [0.0] + [100.0] * 3


def test_the_refresh_table_runs_from_the_new_generation_to_the_status_quo() -> None:
    s = as_scenario(NEW_GENERATION)
    result = analyse(s)
    table = refresh(result, s)
    assert table["kept_years"].tolist() == [0, 1, 2, 3]
    new = result.row("new generation")
    assert new is not None and new["feasible"]
    # replaced at once: the 'new generation' option; kept to the horizon: the status quo
    assert table["npv_vs_status_quo_usd"].iloc[0] == pytest.approx(new["npv_vs_status_quo_usd"], rel=1e-12)
    assert table["npv_vs_status_quo_usd"].iloc[-1] == 0.0
    assert table["residual_value_usd"].iloc[0] == pytest.approx(0.25 * (new["capex_usd"] - new["retrofit_capex_usd"]))
    best = best_year(table)
    assert best is not None and table.loc[best, "npv_vs_status_quo_usd"] == table["npv_vs_status_quo_usd"].max()
    # no new generation: no refresh
    assert refresh(analyse(HAND_STUDY), as_scenario(HAND_STUDY)).empty


def test_a_lease_by_hand() -> None:
    # 100 decode accelerators at USD 30,000 leased at 0.3 a year: 900,000 USD at the end of each of 5 years,
    # PV at 8 % = 900,000 x (1 - 1.08^-5) / 0.08 = 900,000 x (1 - 0.6805832) / 0.08 = 900,000 x 3.9927100 =
    # 3,593,439.03 USD; bought: 3,000,000 at t = 0 less the resale 600,000 / 1.08^5 = 408,349.92, i.e.
    # 2,591,650.08. Leasing costs 3,593,439.03 - 2,591,650.08 = 1,001,788.95 USD of NPV more
    assert lease_t_usd(np.array([3_000_000.0, 0.0, 0.0]), 0.3).tolist() == [0.0, 900_000.0, 900_000.0]
    row = analyse({**RESALE, "residual_value_fraction": 0.2, "lease_rate_per_year": 0.3}).row("add decode")
    assert row is not None
    leased_less_bought = row["npv_leased_vs_status_quo_usd"] - row["npv_vs_status_quo_usd"]
    assert leased_less_bought == pytest.approx(-1_001_788.95, abs=0.01)
    # no lease rate: leasing not studied
    assert analyse(RESALE).row("add decode")["npv_leased_vs_status_quo_usd"] is None  # type: ignore[index]


def test_the_cost_of_capital_two_points_either_side() -> None:
    # the same differences from the status quo, discounted at 6 % and 10 % instead of 8 %
    result = analyse({**RESALE, "residual_value_fraction": 0.2})
    flows = result.cashflows[result.cashflows["option"] == "add decode"]["vs_status_quo_usd"].to_numpy()
    row = result.row("add decode")
    assert row is not None
    t = np.arange(len(flows))
    assert row["npv_at_cost_of_capital_minus_2pt_usd"] == pytest.approx(float(np.sum(flows / 1.06 ** t)))
    assert row["npv_at_cost_of_capital_plus_2pt_usd"] == pytest.approx(float(np.sum(flows / 1.10 ** t)))



def test_the_decode_options_are_remembered_per_the_fields_they_read_and_each_call_gets_copies() -> None:
    # the Groq 3 LPX as the scenario's decode pool: the SN50, which has a decode-pool claim for the model, is an
    # option of its own; remembered, each call gets what the table gives, and a caller's change reaches no other
    s = as_scenario({**EXAMPLE, "decode_accelerator": "groq3-lpx"})
    first = decode_options(s)
    assert [o["name"] for o in first] == ["add decode (sn50)"] and first == _decode_options(s)
    first[0]["changes"]["decode_accelerator_count"] = 1
    first[0]["purchases"].clear()
    assert decode_options(s) == _decode_options(s)
    # another existing fleet is another set of options (the GPUs that prefill), not the remembered one; with the
    # users per replica not given the SN50 is not studied
    fewer = as_scenario({**EXAMPLE, "decode_accelerator": "groq3-lpx", "existing_accelerators": 500})
    assert decode_options(fewer) == _decode_options(fewer) != decode_options(s)
    unknown = as_scenario({**EXAMPLE, "decode_accelerator": "groq3-lpx", "decode_concurrent_users_per_replica": None})
    assert decode_options(unknown) == []

def test_every_decode_accelerator_is_listed_with_its_figures_or_says_it_has_none() -> None:
    table = decode_table(as_scenario(EXAMPLE)).set_index("decode_accelerator")
    assert {"sn50", "groq3-lpx", "cerebras-cs3", "groq-lpu"} <= set(table.index)
    assert bool(table.loc["sn50", "studied"]) and table.loc["sn50", "output_tokens_per_s_per_user"] == 763.0
    assert table.loc["sn50", "confidence"] == "secondary"
    lpx = table.loc["groq3-lpx"]
    assert not lpx["studied"] and np.isnan(lpx["output_tokens_per_s_per_user"])
    assert "no measured throughput for minimax-m2 in data/throughput_claims.csv" in lpx["note"]
    # a whole-system figure is shown with its confidence but not turned into a decode pool
    llama = decode_table(as_scenario({**EXAMPLE, "model": "llama-3.1-70b"})).set_index("decode_accelerator")
    assert llama.loc["cerebras-cs3", "output_tokens_per_s_per_user"] == 450.0
    assert llama.loc["cerebras-cs3", "confidence"] == "vendor claim" and not llama.loc["cerebras-cs3", "studied"]
