"""The real app in a real browser: cold start, edited inputs, navigation across every page with no value changing,
links that reproduce every KPI on every page in a fresh browser, a hostile link that renders no link and fetches
nothing, uploads and downloads; the screenshots in docs/screenshots (README, docs/app.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import economics
from economics import FIELDS
from ui import assets
from ui.editor import section
from ui.format import usd_rate

pytestmark = pytest.mark.e2e

COLD_START_TIMEOUT_MS = 90_000
PAGES = {"cost": "", "fleet": "fleet", "decode": "decode", "plan": "plan", "throughput": "throughput",
         "uncertainty": "uncertainty", "scenarios": "scenarios"}
NAV_TITLES = {"cost": "Cost per token", "fleet": "Fleet", "sessions": "Sessions", "decode": "Decode accelerators",
              "plan": "Plan",
              "throughput": "Throughput", "uncertainty": "Uncertainty", "scenarios": "Scenarios", "data": "Data"}
THROUGHPUT_LINK = "?model=deepseek-v3&accelerator=h200-sxm&precision=fp8&output_tokens_per_s_per_accelerator="


def cost_metric(page: Page) -> Locator:
    return page.get_by_test_id("stMetric").filter(has_text="Cost per M tokens").get_by_test_id("stMetricValue")


def settle(page: Page, timeout_s: float = 60.0) -> None:
    """Wait until the app has finished its run (the app root says ``notRunning``) and the main area's text has been
    stable for 0.5 s (charts and tables draw after the run)."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=COLD_START_TIMEOUT_MS)
    deadline = time.monotonic() + timeout_s
    last, stable_since = None, time.monotonic()
    while time.monotonic() < deadline:
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        text = page.locator('[data-testid="stMain"]').inner_text()
        if state != "notRunning" or text != last:
            last, stable_since = text, time.monotonic()
        elif time.monotonic() - stable_since > 0.5:
            return
        time.sleep(0.1)
    raise AssertionError("the app did not settle")


def download(page: Page, button: str, attempts: int = 3) -> Path:
    """The file a download button gives. A click that lands while a rerun replaces the button starts nothing (seen
    on a loaded CI machine): the click is tried again after the app settles, at most ``attempts`` times, and a
    button that never gives its file fails the test."""
    for attempt in range(attempts):
        try:
            with page.expect_download(timeout=30_000) as info:
                page.get_by_role("button", name=button).click()
            return Path(info.value.path())
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            settle(page)
    raise AssertionError("unreachable")


def kpis(page: Page) -> dict[str, str]:
    """Every KPI on the page: label -> value (and delta, when shown)."""
    out: dict[str, str] = {}
    for metric in page.get_by_test_id("stMetric").all():
        label = metric.get_by_test_id("stMetricLabel").inner_text().strip()
        value = metric.get_by_test_id("stMetricValue").inner_text().strip()
        delta = metric.get_by_test_id("stMetricDelta")
        out[label] = value + (f" | {delta.inner_text().strip()}" if delta.count() else "")
    return out


def tables(page: Page) -> list[str]:
    """The text of every table drawn in the main area, in page order: a grid's accessible table (the cells on
    screen) or a static table (``st.html``)."""
    found = page.get_by_test_id("stMain").locator('[data-testid="stDataFrame"] table, [data-testid="stHtml"] table')
    return [t.inner_text() for t in found.all()]


def fill(page: Page, field: str, value: str) -> None:
    """Type into a field's box (opening its editor section when the page does not list it) and press Enter."""
    box = page.locator(f".st-key-{field} input")
    page.locator(".st-key-editor_section").wait_for()
    if field not in FIELDS:
        # A page's own box (a range end, the sample count) has no editor section to open: wait for it to be drawn,
        # since under load the editor can be on screen before the page's main area is.
        box.wait_for()
    elif not box.count():
        page.locator(".st-key-editor_section").get_by_text(section(field), exact=True).click()
        settle(page)
    box.fill(value)
    box.press("Enter")
    settle(page)


def choose(page: Page, field: str, option: str) -> None:
    """Pick an option of a select box (its list opens on the arrow key after focusing it)."""
    page.locator(f".st-key-{field} input").click()
    page.keyboard.press("ArrowDown")
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    settle(page)


def test_cold_start_shows_cost(fresh_page: Page, streamlit_url: str) -> None:
    page = fresh_page  # a first visitor's browser: nothing cached
    page.goto(streamlit_url)
    value = cost_metric(page)
    expect(value).to_have_text(re.compile(r"^\$\d[\d,]*(\.\d+)?$"), timeout=COLD_START_TIMEOUT_MS)
    expected = economics.evaluate_scenario(economics.default_scenario().model_dump())["cost_usd_per_m_tokens"]
    expect(value).to_have_text(usd_rate(expected))


def test_the_first_page_s_element_code_is_preloaded_once(fresh_page: Page, streamlit_url: str) -> None:
    page = fresh_page  # nothing cached: each file is fetched, and fetched once
    # issue #43: once the page has loaded, it names the code of the KPIs' and the sidebar's elements (ui.assets) as
    # modulepreload links, and the frontend's own load of that code, when the elements arrive, uses what they fetched:
    # each file is requested once
    seen: list[str] = []
    page.on("request", lambda r: seen.append(urlsplit(r.url).path.rsplit("/", 1)[-1]))
    page.goto(streamlit_url)
    expect(cost_metric(page)).to_have_text(re.compile(r"^\$\d"), timeout=COLD_START_TIMEOUT_MS)
    linked = page.evaluate("() => [...document.querySelectorAll('link[rel=modulepreload]')].map(l => l.href)")
    files = assets.element_files()
    assert {urlsplit(h).path.rsplit("/", 1)[-1] for h in linked} >= set(files)
    assert [f for f in files if seen.count(f) != 1] == []


def test_the_other_pages_element_code_is_loaded_once_the_first_run_is_drawn(fresh_page: Page,
                                                                           streamlit_url: str) -> None:
    page = fresh_page  # nothing cached
    # issue #43: once the first page's run has finished, the page names the code of the elements the other pages draw
    # (ui.assets.LATER_ELEMENTS), each file fetched once, so a first switch to the Plan page (its file uploader,
    # selection and download buttons) fetches no script during its run
    seen: list[str] = []
    page.on("request", lambda r: seen.append(urlsplit(r.url).path.rsplit("/", 1)[-1]))
    page.goto(streamlit_url)
    expect(cost_metric(page)).to_have_text(re.compile(r"^\$\d"), timeout=COLD_START_TIMEOUT_MS)
    later = assets.later_files()
    page.wait_for_function("(names) => names.every(n => performance.getEntriesByType('resource')"
                           ".some(e => e.name.endsWith('/' + n)))", arg=later, timeout=COLD_START_TIMEOUT_MS)
    settle(page)
    before = len(seen)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_TITLES["plan"]).click()
    expect(page.locator("h1").filter(has_text="Plan")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    settle(page)
    expect(page.get_by_test_id("stFileUploader")).to_be_visible()
    assert [f for f in seen[before:] if f.endswith(".js")] == []
    assert [f for f in later if seen.count(f) != 1] == []


def test_electricity_input_updates_cost(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    page.goto(streamlit_url)
    value = cost_metric(page)
    expect(value).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    before = value.inner_text()
    price = economics.default_scenario().electricity_usd_per_kwh + 0.40
    field = page.locator(".st-key-electricity_usd_per_kwh input")
    field.fill(f"{price:.4f}")
    field.press("Enter")
    expected = {**economics.default_scenario().model_dump(), "electricity_usd_per_kwh": float(f"{price:.4f}")}
    expected_text = usd_rate(economics.evaluate_scenario(expected)["cost_usd_per_m_tokens"])
    assert expected_text != before
    expect(value).to_have_text(expected_text)
    field.blur()
    settle(page)
    assert screenshot("cost").stat().st_size > 10_000


def test_the_page_config_stays_through_edits_and_page_switches(page: Page, streamlit_url: str) -> None:
    # app.py sends st.set_page_config on a session's first run only (each message before a page's KPIs delays
    # them): the browser must keep the title, the icon and the wide layout through a rerun and a page switch
    # (centered, the main column is at most 736 px wide; wide, the viewport less the 300 px sidebar)
    page.set_viewport_size({"width": 1600, "height": 900})
    config = ("() => [document.title, document.querySelector(\"link[rel~='icon']\").href.slice(0, 18), "
              "document.querySelector('[data-testid=\"stMainBlockContainer\"]').getBoundingClientRect().width]")
    open_page(page, streamlit_url)
    seen = [page.evaluate(config)]
    fill(page, "electricity_usd_per_kwh", "0.2")
    seen.append(page.evaluate(config))
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_TITLES["fleet"]).click()
    settle(page)
    expect(page.get_by_role("heading", name="Fleet, racks and power")).to_be_visible()
    seen.append(page.evaluate(config))
    for title, icon, width in seen:
        assert (title, icon) == ("Token economics", "data:image/svg+xml"), seen
        assert width > 1000, seen


def test_navigation_across_every_page_changes_no_value(page: Page, streamlit_url: str) -> None:
    open_page(page, streamlit_url)
    fill(page, "electricity_usd_per_kwh", "0.08")
    fill(page, "accelerator_count", "512")
    page.get_by_role("button", name="Pin as baseline").click()
    settle(page)
    fill(page, "demand_output_tokens_per_day", "6,000,000,000")
    before, query = kpis(page), urlsplit(page.url).query
    assert "accelerator_count=512" in query and "baseline." in query
    seen: dict[str, tuple[dict[str, str], list[str]]] = {}
    for name in [*list(NAV_TITLES)[1:], *reversed(list(NAV_TITLES)[:-1])]:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_TITLES[name]).click()
        settle(page)
        if name == "plan" and name not in seen:  # a page setting too: it must survive the other pages
            fill(page, "plan_max_racks", "30")
            query = urlsplit(page.url).query
            assert "settings.plan_max_racks=30" in query and "accelerator_count=512" in query, query
        if name != "data":
            assert urlsplit(page.url).query == query, (name, page.url)
        assert not page.get_by_test_id("stException").count(), name
        if name in seen:  # the second visit shows every KPI and table as the first did
            assert (kpis(page), tables(page)) == seen[name], name
        seen[name] = (kpis(page), tables(page))
    assert seen["plan"][0] and seen["plan"][1], "the Plan page showed no KPI or no table"
    assert kpis(page) == before
    expect(page.locator(".st-key-accelerator_count input")).to_have_value("512")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_TITLES["plan"]).click()
    settle(page)
    expect(page.locator(".st-key-plan_max_racks input")).to_have_value("30")


def _edit_for(page: Page, name: str) -> None:
    """Change inputs on a page, including one set back to a value equal to a default."""
    default_price = str(economics.default_scenario().electricity_usd_per_kwh)
    if name == "decode":
        page.get_by_role("button", name="Start from the example study").click()
        settle(page)
        fill(page, "decode_accelerator_price_usd", "45,000")
    if name == "uncertainty":
        fill(page, "range_pue_high", "1.9")
        fill(page, "mc_samples", "2000")
    if name == "fleet":
        fill(page, "peak_to_average", "3")
    if name == "plan":
        page.get_by_role("button", name="Start from the planning example").click()
        settle(page)
        fill(page, "plan_max_racks", "40")
        choose(page, "plan_objective", "net present cost over the horizon")
        page.get_by_test_id("stMetric").first.wait_for()
    if name != "scenarios":
        page.get_by_role("button", name="Pin as baseline").click()
        settle(page)
    fill(page, "electricity_usd_per_kwh", "0.15")
    fill(page, "electricity_usd_per_kwh", default_price)  # back to the default: absent from the link, still right
    fill(page, "name", "![t](http://127.0.0.1:9/pixel.gif)")


@pytest.mark.parametrize("name", list(PAGES))
def test_a_link_reproduces_every_kpi_on_every_page(browser: Browser, page: Page, streamlit_url: str,
                                                  name: str) -> None:
    start = f"{streamlit_url}/{PAGES[name]}" + (THROUGHPUT_LINK if name == "throughput" else "")
    open_page(page, start)
    _edit_for(page, name)
    shown, shown_tables, link = kpis(page), tables(page), page.url
    assert name == "scenarios" or shown
    assert name != "plan" or any("h100-sxm existing" in t for t in shown_tables), shown_tables  # the plan's table
    other = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        fresh = other.new_page()
        open_page(fresh, link)
        if shown:  # a study can take seconds on a loaded machine: wait for its first KPI, then for the run to end
            expect(fresh.get_by_test_id("stMetric").first).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
            settle(fresh)
        assert kpis(fresh) == shown
        assert tables(fresh) == shown_tables
        assert urlsplit(fresh.url).query == urlsplit(link).query
    finally:
        other.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_a_hostile_link_renders_no_link_and_fetches_nothing(fresh_page: Page, streamlit_url: str, name: str) -> None:
    """Opened on each page in a fresh session (the page reads the link itself), then every other page visited."""
    page = fresh_page  # a browser of its own: a link followed from elsewhere
    own = urlsplit(streamlit_url).netloc
    elsewhere: list[str] = []
    page.on("request", lambda r: elsewhere.append(r.url) if urlsplit(r.url).netloc not in (own, "") else None)
    evil = "[Your session expired - sign in](https://evil.example)"
    pixel = quote("![t](http://127.0.0.1:9/pixel.gif)", safe="")
    query = f"{quote(evil, safe='')}=1&baseline.name={pixel}&name={pixel}&settings.{quote(evil, safe='')}=2"
    open_page(page, f"{streamlit_url}/{PAGES[name]}?{query}")
    expect(page.get_by_text("evil.example", exact=False).first).to_be_visible()
    assert not page.get_by_test_id("stException").count(), name
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="pixel.gif"]').count() == 0
    for other in [n for n in NAV_TITLES if n != name]:  # the warning and the names on every other page too
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_TITLES[other]).click()
        settle(page)
        assert not page.get_by_test_id("stException").count(), other
        assert page.locator('img[src*="pixel.gif"]').count() == 0, other
        assert page.locator('a[href*="evil.example"]').count() == 0, other
        if other != "data":  # the Data page shows the catalogs only
            expect(page.get_by_text("evil.example", exact=False).first).to_be_visible()
    assert not [u for u in elsewhere if "pixel.gif" in u or "evil.example" in u], elsewhere
    assert not elsewhere, elsewhere


def test_throughput_page_shows_the_curve_and_follows_the_target(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    open_page(page, f"{streamlit_url}/throughput{THROUGHPUT_LINK}")
    value = page.get_by_test_id("stMetric").filter(has_text="Output tokens/s per accelerator").get_by_test_id(
        "stMetricValue")
    expect(value).to_have_text(re.compile(r"^\d[\d,]*$"))
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    before = value.inner_text()
    fill(page, "target_output_tokens_per_s_per_user", "90")
    expect(value).not_to_have_text(before)
    assert screenshot("throughput").stat().st_size > 10_000


def test_fleet_page_sizes_and_checks_the_facility(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path]
) -> None:
    open_page(page, f"{streamlit_url}/fleet")
    accelerators = page.get_by_test_id("stMetric").filter(has_text="Accelerators").get_by_test_id("stMetricValue")
    expect(accelerators.first).to_have_text(re.compile(r"^\d[\d,]*$"))
    expect(page.get_by_text("fits this facility")).to_be_visible()
    before = accelerators.first.inner_text()
    fill(page, "demand_output_tokens_per_day", "20,000,000,000")
    expect(accelerators.first).not_to_have_text(before)
    assert screenshot("fleet").stat().st_size > 10_000


def test_decode_page_compares_the_options(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    open_page(page, f"{streamlit_url}/decode")
    page.get_by_role("button", name="Start from the example study").click()
    settle(page)
    best = page.get_by_test_id("stMetric").filter(has_text="Best option").get_by_test_id("stMetricValue")
    expect(best).to_have_text(re.compile(r"status quo|add decode|more of the same|new generation|none feasible"))
    npv = page.get_by_test_id("stMetric").filter(has_text="NPV of adding decode").get_by_test_id("stMetricValue")
    fill(page, "decode_accelerator_price_usd", "50000")
    before = npv.inner_text()
    fill(page, "decode_accelerator_price_usd", "100000")
    expect(npv).not_to_have_text(before)
    assert screenshot("decode").stat().st_size > 10_000
    # like for like: the status quo cannot serve the growing demand, and the page says so year by year
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Demand served, year by year", exact=True)).to_be_visible()
    shown = tables(page)
    assert any("status quo" in t and "year 1: served" in t.lower() for t in shown), shown
    # and each option's derivation, down to the NPV the KPI shows
    main.get_by_text("How this is computed", exact=True).click()
    settle(page)
    choose(page, "derivation_option", "add decode")
    code = main.get_by_test_id("stCode").filter(has_text="npv_vs_status_quo_usd = sum of the present values")
    expect(code.first).to_be_visible()


def test_uncertainty_page(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    open_page(page, f"{streamlit_url}/uncertainty")
    expect(page.get_by_test_id("stMetric").filter(has_text="P50 cost per M tokens")).to_be_visible()
    assert screenshot("uncertainty").stat().st_size > 10_000


def test_upload_good_and_bad_csv_and_download_results(
    page: Page, streamlit_url: str, screenshot: Callable[[str], Path], tmp_path: Path
) -> None:
    good = tmp_path / "good.csv"
    good.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator\n"
                    "=HYPERLINK(1),h100-sxm,8,1000\nb200 fleet,b200,8,4000\n", encoding="utf-8")
    bad = tmp_path / "[bad](https%3A%2F%2Fevil.example).csv"
    bad.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator,[c](http://x.example)\n"
                   "ok,h100-sxm,8,1000,1\nbroken,h100-sx,-2,fast,1\n", encoding="utf-8")
    page.goto(f"{streamlit_url}/scenarios")
    uploader = page.locator("input[type=file]")
    expect(page.get_by_text("No file yet")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    uploader.set_input_files(str(good))
    expect(page.get_by_test_id("stMetric").filter(has_text="Valid scenarios")).to_contain_text("2 of 2")
    # the run that shows the metric may still be drawing: a click on a button it then replaces starts no download
    settle(page)
    downloaded = download(page, "Results (CSV)").read_text(encoding="utf-8")
    assert downloaded.splitlines()[1].startswith("'=HYPERLINK(1)")  # formula neutralised
    uploader.set_input_files(str(bad))
    settle(page)
    assert page.locator('a[href*="evil.example"], a[href*="x.example"]').count() == 0
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator\n"
                     "ok,h100-sxm,8,1000\nbroken,h100-sx,-2,fast\n", encoding="utf-8")
    uploader.set_input_files(str(mixed))
    expect(page.get_by_test_id("stMetric").filter(has_text="Valid scenarios")).to_contain_text("1 of 2")
    settle(page)
    # the page says the invalid row is left out of the results and their downloads: the files agree
    expect(page.get_by_text("left out of the results and their downloads")).to_be_visible()
    results = download(page, "Results (CSV)").read_text(encoding="utf-8").splitlines()
    assert len(results) == 2 and results[1].startswith("ok,")
    invalid = download(page, "Invalid rows (CSV, 1)").read_text(encoding="utf-8").splitlines()
    assert len(invalid) == 2 and invalid[1].startswith("broken,h100-sx,")  # the unknown id as given
    assert "accelerator_count: must be >= 1" in invalid[1] and "'fast' is" in invalid[1]
    settle(page)
    assert screenshot("scenarios").stat().st_size > 10_000


def test_data_page_shows_sources(page: Page, streamlit_url: str, screenshot: Callable[[str], Path]) -> None:
    page.goto(f"{streamlit_url}/data")
    expect(page.get_by_text("Data and sources")).to_be_visible(timeout=COLD_START_TIMEOUT_MS)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    assert screenshot("data").stat().st_size > 10_000
