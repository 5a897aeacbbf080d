"""The serving-stack spread in a real browser: the Throughput page draws every published stack's front for the pair
(the legend names them), names the chosen stack, and a pinned stack changes the figure."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

import economics
from tests.e2e.test_browser import THROUGHPUT_LINK, fill, open_page

pytestmark = pytest.mark.e2e

SLOW = THROUGHPUT_LINK + "&input_tokens_per_request=1024&output_tokens_per_request=1024" \
    "&target_output_tokens_per_s_per_user=22"


def test_every_stacks_front_is_drawn_and_the_chosen_one_named(page: Page, streamlit_url: str) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    open_page(page, f"{streamlit_url}/throughput{SLOW}")
    main = page.get_by_test_id("stMain")
    # at 22 tokens/s per user only the Dynamo + TensorRT-LLM front of the refreshed InferenceX runs covers the speed
    expect(main).to_contain_text("Serving stack: dynamo-trtllm-tp8-ep8-disagg")
    chart = page.get_by_test_id("stVegaLiteChart").first
    expect(chart).to_be_visible()
    legend = chart.inner_text() + " " + (chart.locator("svg").first.text_content() or "")
    for stack in ("sglang-0.5.9-tp8", "trtllm-tp8-ep8-mtp", "dynamo-trtllm-tp8-ep8-disagg"):
        assert stack in legend, legend[:500]
    assert not [e for e in errors if "vega" in e.lower() or "Error" in e], errors
    value = page.get_by_test_id("stMetric").filter(has_text="Output tokens/s per accelerator").get_by_test_id(
        "stMetricValue")
    want = economics.evaluate_scenario({**economics.default_scenario().model_dump(), "accelerator": "h200-sxm",
                                        "model": "deepseek-v3", "precision": "fp8", "input_tokens_per_request": 1024,
                                        "output_tokens_per_request": 1024, "target_output_tokens_per_s_per_user": 22})
    expect(value).to_have_text(f"{want['output_tokens_per_s_per_accelerator']:,.0f}")
    fill(page, "serving_stack", "sglang-0.5.9-tp8")
    expect(value).not_to_have_text(f"{want['output_tokens_per_s_per_accelerator']:,.0f}")
    expect(main).to_contain_text(re.compile(r"Serving stack: sglang-0\.5\.9-tp8"))
