"""Issue #40 item 5: the families a buyer weighs (TPU v6e and TPU7x, Trainium2 and Trainium3, Groq 3 LPX, Rubin).

Each row passes the catalog's rules in tests/test_data.py and tests/test_sources.py; here: their figures agree with
the vendor's system totals, each evaluates on a model it can hold, and none claims calibration points it has not got.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import economics
from economics import catalog

NEW = {"tpu-v6e": "google-tpu", "tpu7x": "google-tpu", "trainium2": "aws-trainium", "trainium3": "aws-trainium",
       "groq3-lpx": "groq-lpx"}
# (accelerator, model, precision, accelerators per replica): a model whose weights fit the replica's memory
HOLDS = [("tpu-v6e", "llama-3.1-8b", "bf16", 1),     # 8.0 B x 2 bytes = 16 GB <= 32 GB
         ("tpu7x", "llama-3.1-70b", "fp8", 1),        # 70.6 B x 1 byte = 70.6 GB <= 192 GB
         ("trainium2", "llama-3.1-70b", "bf16", 2),   # 141.2 GB <= 2 x 96 = 192 GB
         ("trainium3", "llama-3.1-70b", "fp8", 1),    # 70.6 GB <= 144 GB
         ("rubin-vr200", "deepseek-v3", "fp4", 2)]    # 671 B x 0.5 byte = 335.5 GB <= 2 x 288 = 576 GB


def _eval(*rows: dict) -> pd.DataFrame:
    # cloud-only parts publish no price or power, so the rows rent at a typed 1 USD per accelerator-hour
    base = {"ownership": "rent", "rent_usd_per_accelerator_hour": 1.0, "accelerator_count": 16,
            "input_tokens_per_request": 1000, "output_tokens_per_request": 500}
    return economics.evaluate(pd.DataFrame([{**base, **r} for r in rows]))


def test_each_new_family_is_its_own_and_has_no_calibration() -> None:
    table = catalog.accelerators()
    assert {a: table.loc[a, "family"] for a in NEW} == NEW
    fitted = {s.split(":")[0] for s in catalog.calibration().index}
    assert not set(NEW.values()) & fitted
    # not silently a GPU family: no accelerator outside the new rows shares these ids
    others = table.drop(index=list(NEW))
    assert not set(NEW.values()) & set(others["family"])


def test_the_per_chip_figures_add_up_to_the_vendors_system_totals() -> None:
    t = catalog.accelerators()
    # TPU v6e: BF16 peak per Pod 234.9 PF = 256 chips x 918 TFLOPS (234,999 TFLOPS, as tabled rounded down)
    assert 256 * t.loc["tpu-v6e", "bf16_tflops"] == pytest.approx(234_900, rel=1e-3)
    # Trainium2: trn2.48xlarge 20.8 PF FP8 and 10.7 PF BF16 = 16 chips x 1,299 and x 667 TFLOPS (20,784; 10,672)
    assert 16 * t.loc["trainium2", "fp8_tflops"] == pytest.approx(20_800, rel=2e-3)
    assert 16 * t.loc["trainium2", "bf16_tflops"] == pytest.approx(10_700, rel=3e-3)
    # Trainium3: the 144-chip UltraServer's 362 PF FP8 = 144 x 2,517 TFLOPS (362,448)
    assert t.loc["trainium3", "accelerators_per_system"] * t.loc["trainium3", "fp8_tflops"] == pytest.approx(
        362_000, rel=2e-3)
    # Groq 3 LPX rack: 256 LPUs x 0.5 GB = 128 GB SRAM; 256 x 1,230 TFLOPS = 314,880 ~ 315 PF FP8
    lpx = t.loc["groq3-lpx"]
    assert lpx["accelerators_per_system"] * lpx["sram_gb"] == 128
    assert lpx["accelerators_per_system"] * lpx["fp8_tflops"] == pytest.approx(315_000, rel=1e-3)
    # per direction = the vendor's bidirectional figure / 2: ICI 800 -> 400, NeuronLink-v4 2,560 -> 1,280
    assert t.loc["tpu-v6e", "interconnect_gb_per_s"] == 400 and t.loc["trainium3", "interconnect_gb_per_s"] == 1280


@pytest.mark.parametrize("accelerator,model,precision,replica", HOLDS)
def test_each_new_accelerator_evaluates_on_a_model_it_can_hold(accelerator: str, model: str, precision: str,
                                                               replica: int) -> None:
    r = _eval({"accelerator": accelerator, "model": model, "precision": precision,
               "accelerators_per_replica": replica, "max_batch_size": 8}).iloc[0]
    assert not r["error"], r["error"]
    assert r["feasible"] and r["throughput_source"] == "estimated"
    assert np.isfinite(r["output_tokens_per_s_per_accelerator"]) and r["output_tokens_per_s_per_accelerator"] > 0
    memory = catalog.accelerator_record(accelerator)["memory_gb"]
    assert r["weights_gb_per_replica"] <= replica * memory
    assert r["cost_usd_per_m_tokens"] > 0


@pytest.mark.parametrize("accelerator,model,precision,replica", HOLDS)
def test_the_basis_does_not_claim_calibration_points_it_has_not_got(accelerator: str, model: str, precision: str,
                                                                    replica: int) -> None:
    r = _eval({"accelerator": accelerator, "model": model, "precision": precision,
               "accelerators_per_replica": replica, "max_batch_size": 8}).iloc[0]
    family = catalog.accelerator_record(accelerator)["family"]
    basis = str(r["throughput_basis"])
    assert f"no measured point on {family}" in basis and "calibrated on" not in basis
    assert "left out of the fit" in basis  # the unseen-family range, stated
    assert r["output_tokens_per_s_per_accelerator_p10"] < r["output_tokens_per_s_per_accelerator"] < r[
        "output_tokens_per_s_per_accelerator_p90"]


def test_no_peak_is_invented_for_a_precision_the_vendor_does_not_list() -> None:
    # Google tables TPU v6e at bf16 and Int8 only: an FP8 row is refused, naming the field and the accelerator
    r = _eval({"accelerator": "tpu-v6e", "model": "llama-3.1-8b", "precision": "fp8",
               "accelerators_per_replica": 1}).iloc[0]
    assert not r["feasible"] and "tpu-v6e has no fp8 peak" in r["infeasible_reason"]


def test_the_lpx_rack_is_not_a_roofline_and_says_so() -> None:
    # SRAM-only LPUs pipelined across the rack, as groq-lpu: no estimate, a measured throughput is asked for
    lpx = {"accelerator": "groq3-lpx", "model": "llama-3.1-8b", "precision": "fp8", "accelerator_count": 256}
    refused, given = _eval(lpx, {**lpx, "output_tokens_per_s_per_accelerator": 100.0}).to_dict("records")
    assert not refused["feasible"] and "no roofline estimate for groq3-lpx" in refused["infeasible_reason"]
    assert given["feasible"] and given["cost_usd_per_m_tokens"] > 0
