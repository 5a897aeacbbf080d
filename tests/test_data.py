"""The catalogs in data/: every figure sourced, dated and tagged; ids resolve; derived figures computed."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

import economics
from economics import catalog
from economics.engine.resolve import kv_bytes_per_token

DATA = Path(catalog.DATA_DIR)
SOURCED = ["accelerators.csv", "models.csv", "throughput_claims.csv", "throughput_curves.csv", "defaults.csv",
           "presets.csv", "api_prices.csv", "calibration.csv", "estimate_ranges.csv", "leave_out_errors.csv",
           "electricity_tariffs.csv", "grid_carbon.csv"]
DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


@pytest.mark.parametrize("name", SOURCED)
def test_every_row_has_source_date_and_confidence(name: str) -> None:
    with open(DATA / name, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows, name
    for i, row in enumerate(rows, start=2):
        assert row["source"].strip(), f"{name} line {i}: no source"
        assert DATE.match(row["source_date"]), f"{name} line {i}: source_date {row['source_date']!r}"
        assert row["confidence"] in catalog.CONFIDENCE_TAGS, f"{name} line {i}: confidence {row['confidence']!r}"


def test_required_accelerators_and_fields_present() -> None:
    table = catalog.accelerators()
    required = ["a100-sxm", "h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "b300", "gb300-nvl72", "mi300x", "mi325x",
                "mi355x", "gaudi3", "sn40l", "sn50", "groq-lpu", "cerebras-cs3"]
    assert set(required) <= set(table.index)
    for acc in required:
        row = table.loc[acc]
        assert row["power_kw"] > 0, acc
        assert row["accelerators_per_system"] >= 1, acc
        assert row["cooling"] in ("air", "liquid", "air_or_liquid"), acc
        assert row["bandwidth_tb_per_s"] > 0, acc
    assert table.loc["gb200-nvl72", "cooling"] == "liquid"
    assert table.loc["gb200-nvl72", "accelerators_per_system"] == 72


def test_kv_bytes_per_token_computed_from_architecture_matches_the_reference() -> None:
    # reference/published-figures.md: 2 x layers x KV heads x head_dim x 2 bytes (GQA); layers x (512 + 64) x 2 (MLA)
    expected = {"llama-3.2-1b": 32768, "llama-3.1-8b": 131072, "llama-3.1-70b": 327680, "llama-3.1-405b": 516096,
                "deepseek-v3": 70272, "minimax-m2": 253952, "qwen3-32b": 262144, "qwen3-235b-a22b": 192512,
                "gpt-oss-120b": 36864}
    ids = np.array(list(expected), dtype=object)
    kv = kv_bytes_per_token(ids, np.full(len(ids), "bf16", object), np.full(len(ids), "", object))
    assert dict(zip(expected, kv.tolist(), strict=True)) == expected
    header = (DATA / "models.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert not any("kv" in h and "bytes" in h for h in header), "KV bytes must be computed, not typed in"


def test_claims_reference_known_ids() -> None:
    claims = catalog.throughput_claims()
    accs, models = set(catalog.accelerator_ids()), set(catalog.models().index)
    assert len(claims) >= 20
    for cid, row in claims.iterrows():
        assert row["accelerator"] in accs, cid
        assert row["decode_accelerator"] in accs | {""}, cid
        assert row["model"] in models, cid
        assert float(row["value"]) > 0, cid
    assert claims.loc["h200x4-sn50x16-minimax-m27-10k", "decode_accelerator"] == "sn50"


def test_presets_are_valid_scenarios_and_cite_their_claims() -> None:
    presets = economics.preset_scenarios()
    assert len(presets) >= 3
    claims = catalog.throughput_claims()
    for name, (scenario, note) in presets.items():
        out = economics.evaluate_scenario(scenario)
        assert out["cost_usd_per_m_tokens"] > 0, name
        assert note, name
        assert scenario.model, name  # every preset names its model
        # no preset copies a measured figure: it is looked up for the preset's configuration, so a changed model
        # or accelerator looks it up again
        assert scenario.output_tokens_per_s_per_accelerator is None, name
        for cid in re.findall(r"claim (\S+?)[;)]", note):
            assert cid in claims.index, (name, cid)
        for cid in re.findall(r"measured curve (\S+)", note):
            assert out["throughput_curve"] == cid, (name, out["throughput_curve"])
            assert out["cost_usd_per_m_input_tokens"] > 0 and out["cost_usd_per_m_output_tokens"] > 0, name


def test_default_scenario_is_owned_so_power_shows_in_cost() -> None:
    out = economics.evaluate_scenario(economics.default_scenario())
    assert out["ownership"] == "own"
    assert out["energy_usd_per_hour"] > 0 and out["facility_usd_per_hour"] > 0
