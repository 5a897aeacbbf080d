"""The Decode accelerators page under ``streamlit.testing``: what the study needs is asked for, no hardware is free
by default, options side by side with payback and IRR as KPIs, price moves the NPV, measured speeds belong to a
model."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_app import start


@pytest.fixture
def page() -> AppTest:
    at = start("decode")
    at.button(key="load_example").click().run()
    assert not at.exception
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def money(text: str) -> float:
    """'−$38.3 M' -> -38.3e6 (the page's own rounding)."""
    text = text.replace(" each", "").replace("\u2212", "-").replace("$", "").replace(",", "")
    scale = {"M": 1e6, "B": 1e9, "T": 1e12}
    number, _, suffix = text.partition(" ")
    return float(number) * scale.get(suffix, 1.0)


def test_a_scenario_without_a_fleet_is_asked_for_it() -> None:
    at = start("decode")
    assert any("needs" in i.value and "decode accelerator" in i.value for i in at.info)
    assert not at.metric


def test_the_example_leaves_the_decode_price_to_the_catalog(page: AppTest) -> None:
    scenario = page.session_state["scenario"]
    assert scenario["decode_accelerator_price_usd"] is None  # never a 0 that means "free"
    assert page.text_input(key="decode_accelerator_price_usd").value == ""
    said = [c.value for c in page.caption if "catalog figure" in c.value] + [
        w.value for w in page.warning if "No catalog price" in w.value]
    assert said, "the page says where the decode price comes from"
    assert (scenario["existing_accelerators"], scenario["decode_accelerator"], scenario["model"]) == (
        2000, "sn50", "minimax-m2")


def test_options_side_by_side_with_payback_and_irr(page: AppTest) -> None:
    page.text_input(key="decode_accelerator_price_usd").set_value("50,000").run()
    options = next(d.value for d in page.dataframe if "option" in d.value.columns)
    assert list(options["option"]) == ["status quo", "add decode", "more of the same", "new generation"]
    assert metric(page, "Best option (NPV)") in set(options["option"])
    labels = {m.label for m in page.metric}
    assert {"NPV of adding decode", "Break-even decode price", "Payback of adding decode",
            "IRR of adding decode"} <= labels
    assert "None" not in " ".join(str(m.value) for m in page.metric)
    assert len(page.get("vega_lite_chart")) == 1


def test_a_dearer_decode_accelerator_lowers_its_npv(page: AppTest) -> None:
    page.text_input(key="decode_accelerator_price_usd").set_value("50000").run()
    before = money(metric(page, "NPV of adding decode"))
    even = metric(page, "Break-even decode price")
    page.text_input(key="decode_accelerator_price_usd").set_value("100000").run()
    assert money(metric(page, "NPV of adding decode")) < before
    assert metric(page, "Break-even decode price") == even  # it does not depend on the price entered


def test_a_measured_speed_of_another_model_is_named(page: AppTest) -> None:
    page.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert any("minimax-m2" in w.value and "763" in w.value for w in page.warning), [w.value for w in page.warning]


def test_missing_decode_rate_for_a_dataflow_system_is_explained(page: AppTest) -> None:
    page.text_input(key="decode_accelerator_price_usd").set_value("50000").run()
    page.text_input(key="decode_output_tokens_per_s_per_accelerator").set_value("").run()
    assert not page.exception
    assert any("add decode" in w.value and "decode" in w.value for w in page.warning)
