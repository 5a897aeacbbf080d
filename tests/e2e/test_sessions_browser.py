"""The Sessions page in a real browser: the issue's hand-worked 4-turn session opened from a link shows its KPIs
(9,600 input tokens a session, a KV hit rate of 79.2 %), and a request scenario switches to sessions in one click."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

import economics
from economics.studies.links import encode_query
from tests.e2e.test_browser import kpis, open_page, settle
from tests.test_sessions import AMPLE

pytestmark = pytest.mark.e2e


def test_the_hand_worked_session_opens_from_a_link(page: Page, streamlit_url: str) -> None:
    query = urlencode(encode_query(economics.Scenario(**AMPLE), economics.default_scenario()))
    open_page(page, f"{streamlit_url}/sessions?{query}")
    expect(page.get_by_test_id("stMetric").first).to_be_visible()
    shown = kpis(page)
    # 4 x 1,000 + (0 + 1 + 2 + 3) x 600 + 4 x 500 = 9,600; kv_hit_rate = 7,600 / 9,600 = 0.79167
    assert shown["Input tokens per session [token]"] == "9,600", shown
    assert shown["KV hit rate"] == "79.2 %", shown
    assert page.get_by_test_id("stVegaLiteChart").count() == 2  # the context per turn, the speed across the session
    assert not page.get_by_test_id("stException").count()


def test_a_request_scenario_switches_to_sessions(page: Page, streamlit_url: str) -> None:
    open_page(page, f"{streamlit_url}/sessions")
    page.get_by_role("button", name="Switch to sessions").click()
    settle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="Cost per session")).to_be_visible()
    assert "workload=sessions" in page.url
    expect(page.get_by_test_id("stMain")).to_contain_text("AA-AgentPerf")
