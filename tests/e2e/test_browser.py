"""The real app in a real browser: cold start, an edited input, a screenshot."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

import economics
from ui.format import usd_per_m_tokens

pytestmark = pytest.mark.e2e

COLD_START_TIMEOUT_MS = 90_000


def cost_metric(page: Page) -> Locator:
    return page.get_by_test_id("stMetric").filter(has_text="Cost per M tokens").get_by_test_id("stMetricValue")


def test_cold_start_shows_cost(page: Page, streamlit_url: str) -> None:
    page.goto(streamlit_url)
    value = cost_metric(page)
    expect(value).to_have_text(re.compile(r"^\$\d[\d,]*(\.\d+)? / M tokens$"), timeout=COLD_START_TIMEOUT_MS)
    expected = economics.evaluate_scenario(economics.default_scenario().model_dump())["cost_usd_per_m_tokens"]
    expect(value).to_have_text(usd_per_m_tokens(expected))


def test_electricity_input_updates_cost(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    page.goto(streamlit_url)
    value = cost_metric(page)
    expect(value).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    before = value.inner_text()

    price = economics.default_scenario().electricity_usd_per_kwh + 0.40
    field = page.locator(".st-key-electricity_usd_per_kwh input")
    field.fill(f"{price:.3f}")
    field.press("Enter")

    expected = {**economics.default_scenario().model_dump(), "electricity_usd_per_kwh": float(f"{price:.3f}")}
    expected_text = usd_per_m_tokens(economics.evaluate_scenario(expected)["cost_usd_per_m_tokens"])
    assert expected_text != before
    expect(value).to_have_text(expected_text)
    field.blur()

    path = screenshot("cost")
    assert path.stat().st_size > 10_000


def test_throughput_page_shows_the_curve_and_follows_the_target(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    page.goto(f"{streamlit_url}/throughput")
    value = page.get_by_test_id("stMetric").filter(has_text="Output tokens/s per accelerator").get_by_test_id(
        "stMetricValue")
    expect(value).to_have_text(re.compile(r"^\d[\d,]*$"), timeout=COLD_START_TIMEOUT_MS)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    before = value.inner_text()
    field = page.locator(".st-key-target_output_tokens_per_s_per_user input")
    field.fill("90")
    field.press("Enter")
    expect(value).not_to_have_text(before)
    path = screenshot("throughput")
    assert path.stat().st_size > 10_000


def test_fleet_page_sizes_and_checks_the_facility(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    page.goto(f"{streamlit_url}/fleet")
    accelerators = page.get_by_test_id("stMetric").filter(has_text="Accelerators").get_by_test_id("stMetricValue")
    expect(accelerators).to_have_text(re.compile(r"^\d[\d,]*$"), timeout=COLD_START_TIMEOUT_MS)
    expect(page.get_by_text("fits this facility")).to_be_visible()
    before = accelerators.inner_text()
    field = page.locator(".st-key-demand_output_tokens_per_day input")
    field.fill("2e10")
    field.press("Enter")
    expect(accelerators).not_to_have_text(before)
    path = screenshot("fleet")
    assert path.stat().st_size > 10_000


def test_decode_page_compares_the_options(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    page.goto(f"{streamlit_url}/decode")
    best = page.get_by_test_id("stMetric").filter(has_text="Best option").get_by_test_id("stMetricValue")
    expect(best).to_have_text(re.compile(r"status quo|add decode|more of the same|new generation"),
                              timeout=COLD_START_TIMEOUT_MS)
    npv = page.get_by_test_id("stMetric").filter(has_text="NPV of adding decode").get_by_test_id("stMetricValue")
    before = npv.inner_text()
    field = page.locator(".st-key-decode_accelerator_price_usd input")
    field.fill("100000")
    field.press("Enter")
    expect(npv).not_to_have_text(before)
    path = screenshot("decode")
    assert path.stat().st_size > 10_000


def test_upload_good_and_bad_csv_and_download_results(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path], tmp_path: Path
) -> None:
    good = tmp_path / "good.csv"
    good.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator\n"
                    "=HYPERLINK(1),h100-sxm,8,1000\nb200 fleet,b200,8,4000\n", encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator\n"
                   "ok,h100-sxm,8,1000\nbroken,h100-sx,-2,fast\n", encoding="utf-8")
    page.goto(f"{streamlit_url}/scenarios")
    uploader = page.locator("input[type=file]")
    expect(page.get_by_text("No file yet")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    uploader.set_input_files(str(good))
    expect(page.get_by_test_id("stMetric").filter(has_text="Valid scenarios")).to_contain_text("2 of 2")
    with page.expect_download() as info:
        page.get_by_role("button", name="Results (CSV)").click()
    downloaded = Path(info.value.path()).read_text(encoding="utf-8")
    assert downloaded.splitlines()[1].startswith("'=HYPERLINK(1)")  # formula neutralised
    uploader.set_input_files(str(bad))
    expect(page.get_by_test_id("stMetric").filter(has_text="Valid scenarios")).to_contain_text("1 of 2")
    expect(page.get_by_text("Validation report")).to_be_visible()
    path = screenshot("scenarios")
    assert path.stat().st_size > 10_000


def test_shared_link_reproduces_the_kpis(page: Page, streamlit_url: str, browser: Any) -> None:
    page.goto(streamlit_url)
    value = cost_metric(page)
    expect(value).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    field = page.locator(".st-key-electricity_usd_per_kwh input")
    field.fill("0.190")
    field.press("Enter")
    expect(page).to_have_url(re.compile(r"electricity_usd_per_kwh=0\.19"))
    shown = value.inner_text()
    link = page.url
    other = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    other.goto(link)
    expect(cost_metric(other)).to_have_text(shown, timeout=COLD_START_TIMEOUT_MS)
    bad = browser.new_context().new_page()
    bad.goto(f"{streamlit_url}/?pue=0.5&colour=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    # (the warning names the parameter and the value; markdown shows ">=" as a typographic sign)
    expect(bad.get_by_text(re.compile(r"pue: must be . 1 and . 5, got 0.5"))).to_be_visible(
        timeout=COLD_START_TIMEOUT_MS)
    expect(cost_metric(bad)).to_have_text(usd_per_m_tokens(
        economics.evaluate_scenario(economics.default_scenario())["cost_usd_per_m_tokens"]))


def test_data_page_shows_sources(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    page.goto(f"{streamlit_url}/data")
    expect(page.get_by_text("Data and sources")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    path = screenshot("data")
    assert path.stat().st_size > 10_000
