"""The Throughput page under ``streamlit.testing``: the curve's KPIs follow the inputs; impossible pairs explain;
a scenario without a model is told the curve needs one."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import economics
from tests.test_app import start

PAIR = {"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "input_tokens_per_request": "1024",
        "output_tokens_per_request": "1024", "target_output_tokens_per_s_per_user": "50",
        "output_tokens_per_s_per_accelerator": "", "input_tokens_per_s_per_accelerator": "",
        "demand_input_tokens_per_day": "", "demand_output_tokens_per_day": "", "accelerator_count": "8"}


@pytest.fixture
def page() -> AppTest:
    return start("throughput", PAIR)


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def test_pair_shows_measured_curve_kpis_and_calibration(page: AppTest) -> None:
    # H200 x DeepSeek-V3 FP8 at 1k/1k and 50 tokens/s per user lies inside a measured curve
    expected = economics.evaluate_scenario(economics.with_changes(
        economics.default_scenario(), accelerator="h200-sxm", model="deepseek-v3", precision="fp8",
        input_tokens_per_request=1024, output_tokens_per_request=1024, target_output_tokens_per_s_per_user=50.0,
        output_tokens_per_s_per_accelerator=None, input_tokens_per_s_per_accelerator=None,
        demand_input_tokens_per_day=None, demand_output_tokens_per_day=None, accelerator_count=8))
    assert metric(page, "Output tokens/s per accelerator") == f"{expected['output_tokens_per_s_per_accelerator']:,.0f}"
    assert any("measured curve" in c.value for c in page.caption)
    assert any("Calibration scope **nvidia-hopper**" in m.value for m in page.markdown)
    assert len(page.get("vega_lite_chart")) == 2


def test_changing_the_target_changes_throughput(page: AppTest) -> None:
    before = metric(page, "Output tokens/s per accelerator")
    page.text_input(key="target_output_tokens_per_s_per_user").set_value("90").run()
    assert not page.exception
    assert metric(page, "Output tokens/s per accelerator") != before


def test_model_that_does_not_fit_explains_instead_of_failing(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("a100-sxm").run()
    page.selectbox(key="model").set_value("llama-3.1-405b").run()
    page.selectbox(key="precision").set_value("bf16").run()
    assert not page.exception
    assert any("does not fit" in e.value for e in page.error), [e.value for e in page.error]


def test_precision_the_hardware_lacks_is_named(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("h100-sxm").run()
    page.selectbox(key="precision").set_value("fp4").run()
    assert any("has no fp4 peak" in e.value for e in page.error), [e.value for e in page.error]


def test_a_scenario_without_a_model_is_offered_one() -> None:
    at = start("throughput", {"model": "", "output_tokens_per_s_per_accelerator": "2000"})
    assert any("needs" in i.value or "has none" in i.value for i in at.info)
    assert at.selectbox(key="model").value is None
    at.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert len(at.get("vega_lite_chart")) >= 1
