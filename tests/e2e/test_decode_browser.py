"""The Decode page in a real browser (#41): the worked example leads with the odds of every option, the SN50 and
the Groq 3 LPX side by side, a refresh year; an input changed, the odds drawn again."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

import economics
from economics.studies.retrofit_odds import odds
from tests.e2e.test_browser import fill, open_page, settle, tables
from tests.test_retrofit_odds import EXAMPLE

pytestmark = pytest.mark.e2e

OPTIONS = ("status quo", "add decode", "more of the same", "more of the same, as demand grows", "new generation",
           "new generation, as demand grows")


EMPTIED = dict.fromkeys(("demand_input_tokens_per_day", "demand_requests_per_s", "accelerator_count",
                         "decode_output_tokens_per_s_per_accelerator", "decode_accelerator_price_usd",
                         "output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator"))
"""What the page's "Start from the example study" empties besides setting the example's fields (ui/decode.py)."""


def _headline(**changes: Any) -> str:
    """What the page says at its default draws (2,000 from seed 0) for the worked example with ``changes``."""
    scenario = {**economics.default_scenario().model_dump(), **EXAMPLE, **EMPTIED, **changes}
    return odds(scenario, samples=2_000, seed=0).headline()


def _odds_table(page: Page) -> str:
    return next(t for t in tables(page) if "Best in" in t and "NPV P50" in t)


def test_the_worked_example_shows_the_odds_and_they_follow_an_edit(page: Page, streamlit_url: str) -> None:
    open_page(page, f"{streamlit_url}/decode")
    page.get_by_role("button", name="Start from the example study").click()
    settle(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text(_headline())  # "add decode is the best option in 86 % of 2,000 draws (seed 0)"
    shown = _odds_table(page)
    for option in OPTIONS:  # the odds of every option
        assert option in shown, (option, shown)
    decode = next(t for t in tables(page) if "groq3-lpx" in t)
    assert "sn50" in decode and "best in " in decode and "no odds: no price in the catalog" in decode
    expect(main).to_contain_text("the best: after")  # the refresh year
    # one chart of three titled panels (one Vega view): the fan, the cash flow, the refresh, each axis described
    chart = page.get_by_test_id("stVegaLiteChart")
    expect(chart).to_have_count(1)
    expect(chart).to_contain_text("Cumulative cash flow vs status quo")
    # the legend names each option whole: Vega-Lite's default cut it to "more of the same, as de…"
    legend = chart.locator(".role-legend-label text")
    expect(legend.filter(has_text="more of the same, as demand grows")).to_have_count(1)
    expect(chart.locator("[aria-label^=\"X-axis titled 'Years the existing fleet is kept'\"]")).to_have_count(1)
    expect(chart.locator("[aria-label^=\"X-axis titled 'Year'\"]")).to_have_count(2)
    assert not page.get_by_test_id("stException").count()
    fill(page, "decode_accelerator_price_usd", "150000")  # a dearer SN50: the odds drawn again
    expect(main).to_contain_text(_headline(decode_accelerator_price_usd=150_000.0))
    assert _odds_table(page) != shown
    assert not page.get_by_test_id("stException").count()
