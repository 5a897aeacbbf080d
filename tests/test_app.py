"""The Streamlit app, run headless with ``streamlit.testing`` (no browser): pages render, inputs drive the KPIs,
bad input is reported as an error message rather than an exception."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import economics
import ui.format
from ui.format import usd_per_m_tokens

APP = str(Path(__file__).resolve().parents[1] / "app.py")
COST_LABEL = "Cost per M tokens"


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric_value(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert len(values) == 1, f"metric {label!r} not shown; metrics: {[m.label for m in at.metric]}"
    return str(values[0])


def scenario_with(**overrides: object) -> dict[str, object]:
    return {**economics.default_scenario().model_dump(), **overrides}


def test_cost_page_renders_kpis(app: AppTest) -> None:
    assert not app.error, [e.value for e in app.error]
    assert {m.label for m in app.metric} >= {COST_LABEL, "Cost per hour", "Utilization"}
    shown = metric_value(app, COST_LABEL)
    assert re.fullmatch(r"\$\d[\d,]*(\.\d+)? / M tokens", shown), shown
    expected = economics.evaluate_scenario(scenario_with())["cost_usd_per_m_tokens"]
    assert shown == usd_per_m_tokens(expected)


def test_every_input_has_a_key_named_after_its_field(app: AppTest) -> None:
    fields = set(economics.default_scenario().model_dump())
    keys = {w.key for w in [*app.number_input, *app.selectbox]} - {"preset"}  # the preset picker is not a field
    assert keys >= {"accelerator", "accelerator_count", "electricity_usd_per_kwh",
                    "output_tokens_per_s_per_accelerator"}
    assert keys <= fields, keys - fields


def test_accelerator_choices_come_from_the_catalog(app: AppTest) -> None:
    assert list(app.selectbox(key="accelerator").options) == economics.catalog.accelerator_ids()


def test_electricity_price_changes_cost(app: AppTest) -> None:
    before = metric_value(app, COST_LABEL)
    current = app.number_input(key="electricity_usd_per_kwh").value
    assert current is not None
    price = float(current) + 0.40
    app.number_input(key="electricity_usd_per_kwh").set_value(price).run()
    assert not app.exception and not app.error
    after = metric_value(app, COST_LABEL)
    assert after != before
    expected = economics.evaluate_scenario(scenario_with(electricity_usd_per_kwh=price))["cost_usd_per_m_tokens"]
    assert after == usd_per_m_tokens(expected)


@pytest.mark.parametrize(("field", "value"), [("accelerator_count", 0), ("electricity_usd_per_kwh", -0.10)])
def test_impossible_input_shows_error_not_exception(app: AppTest, field: str, value: float) -> None:
    app.number_input(key=field).set_value(value).run()
    assert not app.exception, [e.value for e in app.exception]
    assert len(app.error) == 1
    assert field in str(app.error[0].value)
    assert not [m for m in app.metric if m.label == COST_LABEL]


def test_explanation_is_plain_text(app: AppTest) -> None:
    app.toggle(key="show_derivation").set_value(True).run()
    codes = [c.value for c in app.code]  # the share link and the explanation
    assert economics.explain_text(scenario_with()) in codes
    assert any(c.endswith("?v=1") for c in codes)  # the default scenario's link carries only the version
    assert not app.markdown or all("<" not in md.value for md in app.markdown)


def test_format_doctests() -> None:
    failures, tried = doctest.testmod(ui.format)
    assert tried > 0 and failures == 0


def test_every_catalog_accelerator_gives_kpis_or_an_error(app: AppTest) -> None:
    for accelerator in economics.catalog.accelerator_ids():
        app.selectbox(key="accelerator").set_value(accelerator).run()
        assert not app.exception, (accelerator, [e.value for e in app.exception])
        shown = [m.value for m in app.metric if m.label == COST_LABEL]
        assert shown or app.error, accelerator
        if shown:
            assert re.fullmatch(r"\$\d[\d,]*(\.\d+)? / M tokens", str(shown[0])), (accelerator, shown)


def test_ui_stays_thin_and_safe() -> None:
    """ui/ and app.py draw and never compute (no numeric libraries), and never render raw HTML."""
    root = Path(APP).parent
    for path in [root / "app.py", *sorted((root / "ui").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert "unsafe_allow_html" not in text, path
        assert not re.search(r"^\s*(import|from)\s+(numpy|numpy_financial|pandas)\b", text, re.M), path
    for path in (root / "economics").glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit\b", path.read_text(encoding="utf-8"), re.M), path


def test_presets_load_with_one_click(app: AppTest) -> None:
    names = list(economics.preset_scenarios())
    sn50 = next(n for n in names if "SN50" in n)
    app.selectbox(key="preset").set_value(sn50).run()
    assert not app.exception
    scenario, note = economics.preset_scenarios()[sn50]
    assert app.selectbox(key="accelerator").value == scenario.accelerator == "h200-sxm"
    expected = economics.evaluate_scenario(scenario)["cost_usd_per_m_tokens"]
    assert metric_value(app, COST_LABEL) == usd_per_m_tokens(expected)
    assert any("763" in c.value for c in app.caption)


def test_cost_page_shows_margin_breakdown_and_api_prices(app: AppTest) -> None:
    assert metric_value(app, "Gross margin").endswith("%")
    assert len(app.get("vega_lite_chart")) == 2
    prices = app.dataframe[0].value
    assert {"provider", "gross_margin"} <= set(prices.columns)


def test_pin_a_baseline_and_see_the_difference(app: AppTest) -> None:
    app.button(key="pin_baseline").click().run()
    app.number_input(key="electricity_usd_per_kwh").set_value(0.3).run()
    assert not app.exception
    table = next(d.value for d in app.dataframe if "difference" in d.value.columns).set_index("output")
    base = economics.evaluate_scenario(scenario_with())
    now = economics.evaluate_scenario(scenario_with(electricity_usd_per_kwh=0.3))
    row = table.loc["cost_usd_per_m_tokens"]
    assert row["baseline"] == pytest.approx(base["cost_usd_per_m_tokens"])
    assert row["difference"] == pytest.approx(now["cost_usd_per_m_tokens"] - base["cost_usd_per_m_tokens"])
    # the link carries the baseline too, so the comparison is shareable
    assert any("baseline.v=1" in c.value for c in app.code)
