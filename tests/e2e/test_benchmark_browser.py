"""Your own benchmark in a real browser: a vLLM result uploaded on the Throughput page becomes the scenario's
throughput, the Cost KPIs follow it and name it as their source; a model change never keeps the earlier figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

import economics
from tests.e2e.test_browser import COLD_START_TIMEOUT_MS, choose, cost_metric, open_page, settle
from ui.format import usd_rate

pytestmark = pytest.mark.e2e

VLLM = Path(__file__).resolve().parents[1] / "fixtures" / "benchmarks" / "vllm_serve.json"


def test_a_vllm_result_uploaded_drives_the_cost_kpis_and_is_named(page: Page, streamlit_url: str) -> None:
    open_page(page, f"{streamlit_url}/throughput")
    page.get_by_text("Your benchmark: use your own measured run").click()
    page.locator(".st-key-benchmark_file input[type=file]").set_input_files(str(VLLM))
    settle(page)
    # the file records no hardware: the fields beside it say H100 (the scenario's), 8 GPUs, FP8
    page.locator(".st-key-use_benchmark button").click()
    settle(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("Using vllm_serve.json (sha256", timeout=COLD_START_TIMEOUT_MS)
    # the same file, imported here with the same fields, is the same curve under the same hash
    table = economics.import_benchmark([VLLM], accelerator="h100-sxm", accelerators=8, precision="fp8")
    mine = economics.load_curves(economics.curves_csv(table).encode(), "vllm_serve.json")
    expected = economics.evaluate_scenario({
        **economics.default_scenario().model_dump(), "curves_sha256": mine.sha256, "accelerator": "h100-sxm",
        "model": "llama-3.1-70b", "precision": "fp8", "input_tokens_per_request": 1024.0,
        "output_tokens_per_request": 256.0, "target_output_tokens_per_s_per_user": float(
            table["output_tokens_per_s_per_user"].iloc[0])})
    assert expected["throughput_source"] == "your measured curve"
    # 731.785 output tokens/s over 8 GPUs = 91.47 per GPU
    assert expected["output_tokens_per_s_per_accelerator"] == pytest.approx(731.785 / 8, rel=1e-4)
    page.get_by_role("link", name="Cost per token").click()
    settle(page)
    expect(cost_metric(page)).to_have_text(usd_rate(expected["cost_usd_per_m_tokens"]))
    expect(page.get_by_test_id("stMain")).to_contain_text(f"your measured curve vllm_serve.json (sha256 "
                                                          f"{mine.sha256[:12]})")
    # a model the file did not measure: the figure is looked up again, and the page says where it now comes from
    choose(page, "model", "Llama 3.1 8B")
    expect(page.get_by_test_id("stMain")).to_contain_text("your curve file vllm_serve.json")
    expect(cost_metric(page)).not_to_have_text(usd_rate(expected["cost_usd_per_m_tokens"]))
