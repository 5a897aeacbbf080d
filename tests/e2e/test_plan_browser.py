"""The Plan page in a real browser: it plans the working scenario and shows the planner's own figures, a link of the
earlier ``plan.*`` form opens as the same plan (rewritten to ``settings.plan_*``), and the Plan screenshot
(docs/app.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

import economics
from economics.io import plan_files
from economics.studies import planner
from tests.e2e.conftest import ROOT
from tests.e2e.test_browser import COLD_START_TIMEOUT_MS, kpis, open_page
from ui import format as fmt
from ui import links
from ui.links import PLAN_EXAMPLE, PLAN_EXAMPLE_SETTINGS

pytestmark = pytest.mark.e2e

SCENARIO = {"model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": "30",
            "output_tokens_per_s_per_accelerator": ""}
OLD_LINK = "plan.objective=npv&plan.demand_profile=flat&plan.accelerators=b200,h200-sxm&" + "&".join(
    f"{k}={v}" for k, v in SCENARIO.items())


def planned(scenario: dict[str, Any], **settings: Any) -> dict[str, Any]:
    """The planner run in the test process on the same inputs (the page must show its figures)."""
    chosen = {**links.default_settings(), **{links.PLAN_PREFIX + k: v for k, v in settings.items()}}
    s = economics.Scenario.model_validate(economics.with_changes(economics.default_scenario(), **scenario))
    result = planner.plan(s, links.plan_settings(chosen), None, list(chosen[links.PLAN_PREFIX + "accelerators"]))
    return dict(result.summary)


def test_a_link_of_the_earlier_form_opens_as_the_same_plan(page: Page, streamlit_url: str) -> None:
    open_page(page, f"{streamlit_url}/plan?{OLD_LINK}")
    expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    # the URL is written after the KPIs (ui.state.sync_url): wait for the rewritten link
    expect(page).to_have_url(re.compile(r"settings\.plan_objective=npv"), timeout=COLD_START_TIMEOUT_MS)
    query = parse_qs(urlsplit(page.url).query, keep_blank_values=True)
    assert query["settings.plan_objective"] == ["npv"] and query["settings.plan_demand_profile"] == ["flat"]
    assert query["settings.plan_accelerators"] == ["b200,h200-sxm"] and "plan.objective" not in query
    want = planned({**SCENARIO, "target_output_tokens_per_s_per_user": 30.0, "output_tokens_per_s_per_accelerator":
                    None}, objective="npv", demand_profile="flat", accelerators=("b200", "h200-sxm"))
    # the run is over when what the settings cost (solved after the plan) is drawn: every KPI is there by then
    expect(page.get_by_test_id("stMain").get_by_text("What the operations settings cost")).to_be_visible(
        timeout=COLD_START_TIMEOUT_MS)
    expect(page.get_by_test_id("stMetric").filter(has_text="Racks")).to_be_visible()
    shown = kpis(page)
    assert shown["Cost per day"] == fmt.usd(float(want["cost_usd_per_day"])), shown
    assert shown["Racks"] == fmt.count(float(want["racks"])), shown
    table = page.get_by_test_id("stMain").locator('[data-testid="stHtml"] table').first  # the pools: static (short)
    expect(table).to_be_visible()
    assert not re.search(r"\bNone\b|\bnan\b", page.get_by_test_id("stMain").inner_text())


def test_plan_page_example(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    open_page(page, f"{streamlit_url}/plan?model=")  # a scenario without a model is told what it can plan
    expect(page.get_by_text("The scenario has no model")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    page.get_by_role("button", name="Start from the planning example").click()
    expect(page.get_by_text("The scenario has no model")).to_have_count(0, timeout=COLD_START_TIMEOUT_MS)
    # the URL is written after the KPIs (ui.state.sync_url), so after the example's plan is solved: wait for it
    expect(page).to_have_url(re.compile(r"settings\.plan_ttft_target_s=2"), timeout=COLD_START_TIMEOUT_MS)
    open_page(page, page.url)  # the example's link, read in a new session
    want = planned(PLAN_EXAMPLE, **{k[len(links.PLAN_PREFIX):]: v for k, v in PLAN_EXAMPLE_SETTINGS.items()})
    cost = page.get_by_test_id("stMetric").filter(has_text="Cost per day").get_by_test_id("stMetricValue")
    expect(cost).to_have_text(fmt.usd(float(want["cost_usd_per_day"])))
    assert want["distinct_pools"] <= 3  # the default operations settings: at most 3 pools, rentals of 8 h or more
    # what each setting costs is solved after the plan is drawn, under its own heading
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("What the operations settings cost")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    expect(main.get_by_text("Each setting's cost is the plan solved again with that setting alone lifted")
           ).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("More planner settings").click()  # the less used settings' panel, drawn once opened
    expect(sidebar.get_by_text("Most distinct pools")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    expect(sidebar.get_by_text("Shortest rental [h a day]")).to_be_visible()
    assert screenshot("plan").stat().st_size > 10_000


def test_candidate_files_are_named_plainly_and_a_good_one_is_planned(page: Page, streamlit_url: str,
                                                                      tmp_path: Path) -> None:
    own = urlsplit(streamlit_url).netloc
    elsewhere: list[str] = []
    page.on("request", lambda r: elsewhere.append(r.url) if urlsplit(r.url).netloc not in (own, "") else None)
    good_text = (ROOT / "docs" / "plan-candidates.csv").read_text(encoding="utf-8")
    header, *rows = good_text.splitlines()
    bad = tmp_path / "[bad](https%3A%2F%2Fevil.example).csv"
    bad.write_text("\n".join([f"{header},![c](http://127.0.0.1:9/pixel.gif)", *[f"{r},1" for r in rows]]) + "\n",
                   encoding="utf-8")
    open_page(page, f"{streamlit_url}/plan")
    uploader = page.locator(".st-key-plan_candidates_file input[type=file]")
    uploader.set_input_files(str(bad))
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("unknown column", timeout=COLD_START_TIMEOUT_MS)
    expect(main).to_contain_text("![c](http://127.0.0.1:9/pixel.gif)")  # the column name as typed
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="pixel.gif"]').count() == 0
    good = tmp_path / "[ok](https%3A%2F%2Fevil.example).csv"
    good.write_text(good_text, encoding="utf-8")
    uploader.set_input_files(str(good))
    expect(main).to_contain_text("Candidates from [ok](https%3A%2F%2Fevil.example).csv", timeout=COLD_START_TIMEOUT_MS)
    mine = plan_files.read_candidates_csv(good_text.encode(), economics.default_scenario())
    want = planner.plan(economics.default_scenario(), links.plan_settings(links.default_settings()), mine).summary
    cost = page.get_by_test_id("stMetric").filter(has_text="Cost per day").get_by_test_id("stMetricValue")
    expect(cost).to_have_text(fmt.usd(float(want["cost_usd_per_day"])))  # planned from the file's own figures
    open_page(page, page.url)  # the file is not in the link: a reload plans from the catalog again
    expect(main).not_to_contain_text("Candidates from")
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert not elsewhere, elsewhere


def test_an_infeasible_plan_says_what_would_make_it_feasible(page: Page, streamlit_url: str) -> None:
    # a 5 kW site with rent off: nothing fits; the page names the least site that would do and what rent would cost
    open_page(page, f"{streamlit_url}/plan?v=1&site_power_mw=0.005&settings.plan_allow_rent=false")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("What would make it feasible, one limit at a time")).to_be_visible()
    expect(main.get_by_text(re.compile(r"site power: at least [0-9.,]+ MW \(0\.01 MW now\)"))).to_be_visible()
    expect(main.get_by_text(re.compile(r"rent: allowing rented systems gives a plan at [0-9,]+ USD a day"))
           ).to_be_visible()


# Every animation frame of a run, until it has finished: each stale element's opacity and transition (its duration
# and the properties it runs on; ui.assets's style), and how many animations run on the spinner's icon while it shows.
RUN_FRAMES_JS = """() => new Promise(done => {
  const stale = [], spinning = [];
  const app = document.querySelector('[data-testid="stApp"]'), t0 = performance.now();
  const tick = () => {
    for (const el of document.querySelectorAll('[data-testid="stElementContainer"][data-stale="true"]')) {
      const style = getComputedStyle(el);
      stale.push([style.opacity, style.transitionDuration, style.transitionProperty]);
    }
    for (const icon of document.querySelectorAll('[data-testid="stSpinnerIcon"]')) {
      spinning.push(icon.getAnimations().length);
    }
    const over = app.dataset.testScriptState === 'notRunning' && performance.now() - t0 > 1000;
    if (over || performance.now() - t0 > 60000) done([stale, spinning]); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


def test_a_long_run_dims_the_stale_output_at_once_and_its_spinner_stands_still(page: Page, streamlit_url: str) -> None:
    # issue #43: Streamlit fades the previous run's output over 1 s from 0.5 s into a run and spins st.spinner's
    # icon, and each animated frame costs the renderer CPU; ui.assets's style keeps the dimming (users see what is
    # stale) in one step, and a still icon beside the spinner's text. The frontiers solve 40 plans (seconds): the
    # sections after the toggle stay stale all that time
    open_page(page, f"{streamlit_url}/plan?" + "&".join(f"{k}={v}" for k, v in SCENARIO.items()))
    page.evaluate(f"() => {{ window.__runFrames = ({RUN_FRAMES_JS})(); }}")  # not awaited: it watches the run
    page.get_by_text("Compute the frontiers").click()
    stale, spinning = page.evaluate("() => window.__runFrames")
    assert stale and spinning, "no stale element or spinner seen during the frontiers' run"
    # no transition at all, not even one of no duration waiting out Streamlit's delay: that one still cost the browser
    # a repaint when a run started and ended (docs/speed.md, pages7)
    assert {(duration, runs_on) for _, duration, runs_on in stale} == {("0s", "none")}
    opacities = {float(opacity) for opacity, _, _ in stale}
    dimmed = opacities - {1.0}
    assert len(dimmed) == 1 and min(dimmed) < 0.5, opacities  # one dimmed value, no step of a fade between
    assert set(spinning) == {0}
