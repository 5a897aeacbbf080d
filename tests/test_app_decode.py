"""The Decode accelerators page under ``streamlit.testing``: options side by side; price moves the NPV."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "decode.py")


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def money(text: str) -> float:
    return float(text.replace("$", "").replace(",", "").replace(" each", ""))


def test_options_side_by_side_with_break_even(page: AppTest) -> None:
    options = page.dataframe[0].value
    assert list(options["option"]) == ["status quo", "add decode", "more of the same", "new generation"]
    assert metric(page, "Best option (NPV)") in set(options["option"])
    assert money(metric(page, "Break-even decode price")) != 0
    assert len(page.get("vega_lite_chart")) == 1


def test_a_dearer_decode_accelerator_lowers_its_npv(page: AppTest) -> None:
    before = money(metric(page, "NPV of adding decode"))
    page.number_input(key="decode_accelerator_price_usd").set_value(100000.0).run()
    after = money(metric(page, "NPV of adding decode"))
    assert after < before
    # the break-even price does not depend on the price entered
    assert money(metric(page, "Break-even decode price")) > 0


def test_missing_decode_rate_for_a_dataflow_system_is_explained(page: AppTest) -> None:
    page.number_input(key="decode_output_tokens_per_s_per_accelerator").set_value(0.0).run()
    assert not page.exception
    assert any("add decode" in w.value and "decode pool" in w.value for w in page.warning)
