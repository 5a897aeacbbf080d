"""The Plan page in a real browser: it solves on open, its link holds the planner settings, and the link opened in a
fresh browser reproduces every KPI."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 120_000


def settle(page: Page, timeout_s: float = 90.0) -> None:
    """Wait for the app's run to end and the main area's text to stay the same for a second."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=TIMEOUT_MS)
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        text = page.locator('[data-testid="stMain"]').inner_text()
        if state != "notRunning" or text != last:
            last, since = text, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return
        time.sleep(0.2)
    raise AssertionError("the page did not settle")


def kpis(page: Page) -> dict[str, str]:
    return {m.get_by_test_id("stMetricLabel").inner_text().strip(): m.get_by_test_id("stMetricValue").inner_text()
            for m in page.get_by_test_id("stMetric").all()}


def test_plan_page_link_reproduces_the_plan(browser: Browser, page: Page, streamlit_url: str) -> None:
    page.goto(f"{streamlit_url}/plan?plan.objective=npv&plan.demand_profile=flat&plan.accelerators=b200,h200-sxm")
    settle(page)
    shown = kpis(page)
    assert shown.get("Cost per day", "").startswith("$"), shown
    assert "plan.objective=npv" in page.url and "plan.demand_profile=flat" in page.url
    other = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        fresh = other.new_page()
        fresh.goto(page.url)
        settle(fresh)
        assert kpis(fresh) == shown
    finally:
        other.close()
