"""The engine's fixes, each with its expected value worked by hand in a comment."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import economics

# Simple owned hardware: constant draw, PUE 1.5, 0.10 USD/kWh, nothing but capital and energy.
SIMPLE: dict[str, Any] = {
    "ownership": "own", "electricity_usd_per_kwh": 0.1, "pue": 1.5, "idle_power_fraction": 1.0,
    "colocation_usd_per_kw_month": 0.0, "maintenance_fraction_per_year": 0.0, "software_usd_per_accelerator_year": 0.0,
    "cost_of_capital": 0.0, "depreciation_years": 5.0, "peak_to_average": 1.0, "headroom": 0.0,
}


def test_rack_scale_system_takes_a_rack_of_its_own() -> None:
    # GB200 NVL72: 72 GPUs, 120 kW, 48U. Liquid hall, rack limit 150 kW (defaults.csv): min(1, floor(150 / 120)) = 1
    # 144 GPUs -> 2 systems -> 2 racks; the 42U rack height never enters (a rack-scale system is its own rack)
    row = {**SIMPLE, "accelerator": "gb200-nvl72", "accelerator_count": 144, "facility_cooling": "liquid",
           "output_tokens_per_s_per_accelerator": 1000.0}
    out = economics.evaluate_scenario(row)
    assert out["systems"] == 2 and out["systems_per_rack"] == 1 and out["racks"] == 2
    text = economics.explain_text(row)
    step = text[text.index("main_systems_per_rack = "):].split("\n")[:3]
    assert "min(1, floor(rack_power_kw_effective / system_power_kw_effective))" in step[0]
    assert "= min(1, floor(150 / 120)) = 1 system" in step[1]
    assert "42" not in "\n".join(step)


def test_counts_never_overflow() -> None:
    # 1e18 output tokens/day at 1e-6 tok/s: 1e24 accelerator-s/day x peak 100 x (1 + 10) / 86,400 = 1.27e22
    # accelerators, far beyond the 10,000,000 a fleet may hold -> an error on that row, never -9.2e18
    row = {**SIMPLE, "accelerator": "h100-sxm", "output_tokens_per_s_per_accelerator": 1e-6,
           "demand_output_tokens_per_day": 1e18, "peak_to_average": 100.0, "headroom": 10.0}
    out = economics.evaluate(pd.DataFrame([row, {**row, "demand_output_tokens_per_day": 1e6,
                                                 "output_tokens_per_s_per_accelerator": 1000.0}]))
    assert out["valid"].tolist() == [False, True]
    assert "accelerators: the demand needs 1.27e+22" in out.loc[0, "error"]
    assert out.loc[0, "accelerators"] is pd.NA
    # the valid row: 1e6 / 1,000 = 1,000 s/day x 100 x 11 / 86,400 = 12.7 -> 13, in whole 8-GPU systems: 16
    assert out.loc[1, "accelerators"] == 16


def test_tokens_per_mw_and_joules_per_token_on_both_power_bases() -> None:
    # 8 H100 (1.275 kW each at full load, idle fraction 0.5), 50 % busy, PUE 1.5:
    # provisioned facility power 8 x 1.275 x 1.5 = 15.3 kW; average IT 8 x 1.275 x (0.5 + 0.5 x 0.5) = 7.65 kW
    # -> average facility 11.475 kW. Served: 8 x 86,400 x 1,000 tok/s x 0.5 = 345.6 M output tokens/day (no input)
    # tokens/s 4,000: per provisioned MW 4,000 / 0.0153 = 261,437.9; per average MW 4,000 / 0.011475 = 348,583.9
    # J/token: average 11,475 W / 4,000 = 2.86875; provisioned 15,300 / 4,000 = 3.825
    row = {**SIMPLE, "accelerator": "h100-sxm", "accelerator_count": 8, "idle_power_fraction": 0.5,
           "output_tokens_per_s_per_accelerator": 1000.0, "input_tokens_per_request": 0.0,
           "demand_output_tokens_per_day": 345.6e6}
    out = economics.evaluate_scenario(row)
    assert out["utilization"] == pytest.approx(0.5)
    assert out["tokens_per_s_per_mw"] == pytest.approx(261_437.908, rel=1e-6)
    assert out["tokens_per_s_per_average_mw"] == pytest.approx(348_583.878, rel=1e-6)
    assert out["joules_per_token"] == pytest.approx(2.86875)
    assert out["joules_per_token_provisioned"] == pytest.approx(3.825)


def test_prices_and_demand_never_silently_assumed() -> None:
    # an output price without an input price: input tokens earn 0, and the result says so;
    # output demand only: the input demand is inferred from the request shape (2,000 / 500 x 1e9 = 4e9), and said
    row = {**SIMPLE, "accelerator": "h100-sxm", "output_tokens_per_s_per_accelerator": 1000.0,
           "input_tokens_per_s_per_accelerator": 10000.0, "demand_output_tokens_per_day": 1e9,
           "input_tokens_per_request": 2000.0, "output_tokens_per_request": 500.0,
           "price_usd_per_m_output_tokens": 2.0}
    out = economics.evaluate_scenario(row)
    assert "no input price given: input tokens are priced at 0" in out["warnings"]
    assert "token demand inferred from the request shape" in out["warnings"]
    assert out["served_input_tokens_per_day"] == pytest.approx(4e9)
    assert out["revenue_usd_per_day"] == pytest.approx(1e9 * 2.0 / 1e6)
    both = economics.evaluate_scenario({**row, "price_usd_per_m_input_tokens": 0.5,
                                        "demand_input_tokens_per_day": 4e9})
    assert "priced at 0" not in both["warnings"] and "inferred" not in both["warnings"]


def test_input_and_output_costs_split_by_device_time() -> None:
    # per request: 2,000 / 10,000 = 0.2 s prefill, 500 / 1,000 = 0.5 s decode -> input share 0.2 / 0.7 = 2/7
    # 32 H100 fixed (work 1e9 / 500 x 0.7 s = 1.4 M s/day < 32 x 86,400: all served), 1e9 output tokens/day
    # (4e9 input): cost per day C -> per M input = C x 2/7 / 4,000; per M output = C x 5/7 / 1,000
    row = {**SIMPLE, "accelerator": "h100-sxm", "accelerator_count": 32, "output_tokens_per_s_per_accelerator": 1000.0,
           "input_tokens_per_s_per_accelerator": 10000.0, "demand_output_tokens_per_day": 1e9,
           "input_tokens_per_request": 2000.0, "output_tokens_per_request": 500.0, "accelerator_price_usd": 30000.0}
    out = economics.evaluate_scenario(row)
    c = out["cost_usd_per_day"]
    assert out["input_time_share"] == pytest.approx(2 / 7)
    assert out["cost_usd_per_m_input_tokens"] == pytest.approx(c * 2 / 7 / 4000)
    assert out["cost_usd_per_m_output_tokens"] == pytest.approx(c * 5 / 7 / 1000)


def test_a_per_user_speed_needs_its_concurrency() -> None:
    # Groq LPU (catalog: 0.23 GB SRAM per chip, 8 chips per system), Llama 3.1 8B at FP8: 8.03 GB of weights;
    # a system holds 8 x 0.23 x 0.9 (memory_utilization) = 1.656 GB -> ceil(8.03 / 1.656) = 5 systems = 40 chips
    # 750 tok/s per user x 64 users per replica / 40 chips = 1,200 tok/s per chip
    row = {**SIMPLE, "accelerator": "groq-lpu", "accelerator_count": 40, "accelerator_price_usd": 20000.0,
           "model": "llama-3.1-8b", "precision": "fp8", "measured_output_tokens_per_s_per_user": 750.0,
           "concurrent_users_per_replica": 64.0}
    out = economics.evaluate_scenario(row)
    assert out["accelerators_per_replica"] == 40
    assert out["output_tokens_per_s_per_accelerator"] == pytest.approx(1200.0)
    assert "= 750 x 64 / 40 = 1,200 token/s" in economics.explain_text(row)
    # without the concurrency the per-user figure is refused, never used as a per-chip throughput
    with pytest.raises(economics.ScenarioError, match="concurrent_users_per_replica"):
        economics.evaluate_scenario({**row, "concurrent_users_per_replica": None})


def test_variants_of_a_resolved_scenario() -> None:
    # 8 H100 at 30,000 USD, r = 0, 5 years: 8 x 30,000 / 5 / 8,760 = 5.47945 USD/h; energy (idle = full draw)
    # 8 x 1.275 x 1.5 x 0.10 = 1.53 USD/h -> 7.00945 USD/h = 168.2268 USD/day. Output only (no input tokens):
    # at half load 8 x 86,400 x 1,000 x 0.5 = 345.6 M tokens/day -> 168.2268 / 345.6 = 0.486768 USD/M
    from economics.engine.batch import evaluate_variants, resolve_scenario
    from economics.studies.compare import cost_vs_utilization

    row = {**SIMPLE, "accelerator": "h100-sxm", "accelerator_count": 8, "accelerator_price_usd": 30000.0,
           "output_tokens_per_s_per_accelerator": 1000.0, "input_tokens_per_request": 0.0,
           "demand_output_tokens_per_day": 345.6e6}
    curve = cost_vs_utilization(row, points=4)
    assert curve["utilization"].tolist() == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert curve["cost_usd_per_m_tokens"][1] == pytest.approx((8 * 30000 / 5 / 8760 + 1.53) * 24 / 345.6)
    with pytest.raises(ValueError, match="demand_output_tokens_per_day: -1 is out of bounds"):
        evaluate_variants(resolve_scenario(row), demand_output_tokens_per_day=[-1.0])
    with pytest.raises(ValueError, match="pue: not a field a variant may change"):
        evaluate_variants(resolve_scenario(row), pue=[1.2])
