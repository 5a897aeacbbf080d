"""The Streamlit app, run headless with ``streamlit.testing`` (no browser): the Cost page renders and its inputs
drive the KPIs, bad input is reported by field rather than raised, the editor reaches every field on every page,
and the ui modules' doctests hold."""

from __future__ import annotations

import doctest
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import economics
import ui.assets
import ui.editor
import ui.format
import ui.links
import ui.text
from economics import FIELDS
from economics.schema.values import FieldKind
from ui.editor import SECTION_KEY, SECTIONS
from ui.format import usd_rate

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
COST_LABEL = "Cost per M tokens"
EDITOR_PAGES = ("cost", "fleet", "sessions", "decode", "throughput", "uncertainty", "scenarios")


def start(page: str = "cost", query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    if page != "cost":
        at.switch_page(f"ui/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_field(at: AppTest, field: str, value: object) -> AppTest:
    """Edit one scenario field through its widget, opening its editor section first if the page does not list it."""
    keys = {w.key for w in [*at.text_input, *at.selectbox, *at.checkbox]}
    if field not in keys:
        at.pills(key=SECTION_KEY).set_value(ui.editor.section(field)).run()
    kind = FIELDS[field].kind
    if field in ui.editor.ID_FIELDS or kind is FieldKind.CHOICE:
        at.selectbox(key=field).set_value(value).run()
    elif kind is FieldKind.BOOL:
        at.checkbox(key=field).set_value(bool(value)).run()
    else:
        at.text_input(key=field).set_value(str(value)).run()
    return at


def open_share(at: AppTest) -> None:
    """Open the share panel as a click does (its content is drawn only while open: ui.common.share) and run."""
    at.session_state["settings"] = {**at.session_state["settings"], "open": ("share",)}
    at.run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def app() -> AppTest:
    """A fresh Cost page, for a test that edits it."""
    return start()


@pytest.fixture(scope="module")
def cost_page() -> AppTest:
    """The Cost page as it opens, one run shared by the tests that only read it (none of them runs, clicks or sets
    a widget; a test that edits the page takes :func:`app`, a page of its own)."""
    return start()


def metric_value(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert len(values) == 1, f"metric {label!r} not shown; metrics: {[m.label for m in at.metric]}"
    return str(values[0])


def scenario_with(**overrides: object) -> dict[str, object]:
    return {**economics.default_scenario().model_dump(), **overrides}


def test_cost_page_renders_kpis(cost_page: AppTest) -> None:
    assert not cost_page.error, [e.value for e in cost_page.error]
    assert {m.label for m in cost_page.metric} >= {COST_LABEL, "Cost per hour", "Utilization", "Gross margin"}
    shown = metric_value(cost_page, COST_LABEL)
    assert re.fullmatch(r"\$\d[\d,]*(\.\d+)?", shown), shown
    expected = economics.evaluate_scenario(scenario_with())["cost_usd_per_m_tokens"]
    assert shown == usd_rate(expected)


def test_cost_page_has_the_inputs_of_its_question(cost_page: AppTest) -> None:
    keys = {w.key for w in [*cost_page.text_input, *cost_page.selectbox, *cost_page.checkbox]}
    assert keys >= {"accelerator", "accelerator_count", "electricity_usd_per_kwh", "pue", "accelerator_price_usd",
                    "depreciation_years", "cost_of_capital", "colocation_usd_per_kw_month", "model",
                    "demand_output_tokens_per_day", "output_tokens_per_s_per_accelerator"}


def test_accelerators_are_shown_by_name_with_the_id_in_the_help(cost_page: AppTest) -> None:
    box = cost_page.selectbox(key="accelerator")
    assert list(box.options)[:2] == [economics.catalog.accelerator_record(a)["name"]
                                     for a in economics.catalog.accelerator_ids()[:2]]
    assert box.value == economics.default_scenario().accelerator
    assert "`h100-sxm`" in str(box.help)


def test_empty_fields_are_shown_empty_with_their_meaning(cost_page: AppTest) -> None:
    # the default scenario leaves the hardware price to the catalog: the box is empty, the catalog figure shows
    price = cost_page.text_input(key="accelerator_price_usd")
    assert price.value == ""
    assert price.placeholder is not None and "catalog 30,000 USD" in price.placeholder
    assert cost_page.text_input(key="demand_output_tokens_per_day").value == "5,000,000,000"


def test_electricity_price_changes_cost(app: AppTest) -> None:
    before = metric_value(app, COST_LABEL)
    price = economics.default_scenario().electricity_usd_per_kwh + 0.40
    app.text_input(key="electricity_usd_per_kwh").set_value(f"{price:.4f}").run()
    assert not app.exception and not app.error
    after = metric_value(app, COST_LABEL)
    assert after != before
    expected = economics.evaluate_scenario(scenario_with(electricity_usd_per_kwh=float(f"{price:.4f}")))
    assert after == usd_rate(expected["cost_usd_per_m_tokens"])
    assert app.query_params["electricity_usd_per_kwh"] == f"{price:.4f}".rstrip("0")


def test_thousands_separators_are_accepted(app: AppTest) -> None:
    app.text_input(key="demand_output_tokens_per_day").set_value("10,000,000,000").run()
    assert not app.error
    assert app.session_state["scenario"]["demand_output_tokens_per_day"] == 1e10
    assert app.text_input(key="demand_output_tokens_per_day").value == "10,000,000,000"


@pytest.mark.parametrize(("field", "value"), [("accelerator_count", "0"), ("electricity_usd_per_kwh", "-0.10"),
                                              ("pue", "fast"), ("electricity_usd_per_kwh", "")])
def test_impossible_input_is_refused_by_name_and_the_scenario_kept(app: AppTest, field: str, value: str) -> None:
    before = metric_value(app, COST_LABEL)
    kept = app.session_state["scenario"][field]
    app.text_input(key=field).set_value(value).run()
    assert not app.exception, [e.value for e in app.exception]
    assert len(app.error) == 1 and field in str(app.error[0].value), [e.value for e in app.error]
    assert app.session_state["scenario"][field] == kept
    assert metric_value(app, COST_LABEL) == before  # the scenario stays valid and shown
    app.run()
    assert not app.error  # the message is about that edit, shown once


@pytest.mark.parametrize("page", ["cost", "fleet", "throughput", "uncertainty"])
def test_the_link_follows_an_edit_the_engine_refuses(page: str) -> None:
    # The URL is written once a page has drawn its KPIs (or its editor, when it stops early): a scenario the
    # engine refuses stops the page before any KPI, and the link must still hold it.
    at = start(page)
    set_field(at, "model", None)  # the default's throughput is its model's measured curve: none is left
    assert not at.metric and "output_tokens_per_s_per_accelerator" in str(at.error[0].value)
    expected = ui.links.link_query(at.session_state["scenario"], at.session_state["settings"],
                                   at.session_state["baseline"])
    assert dict(at.query_params) == expected
    assert expected["model"] == ""  # the edit itself, not only the earlier state


def test_explanation_is_plain_text(app: AppTest) -> None:
    app.toggle(key="show_derivation").set_value(True).run()
    open_share(app)  # the share link is drawn only while its panel is open (ui.common.share)
    codes = [c.value for c in app.code]  # the share link and the explanation
    assert economics.explain_text(scenario_with()) in codes
    assert any(c.endswith("?v=1") for c in codes)  # the default scenario's link carries only the version


@pytest.mark.parametrize("module", [economics.report.format, ui.links, ui.text, ui.editor, ui.assets])
def test_ui_doctests(module: object) -> None:
    failures, tried = doctest.testmod(module)  # type: ignore[arg-type]
    assert tried > 0 and failures == 0


@pytest.mark.parametrize(("previous", "browser", "expected"), [
    (None, True, ui.editor.FIRST_RUN_PAUSE_S),  # a session's first page with KPIs: the charts' code is not loaded yet
    ("cost", True, 0.25),  # a rerun: until the browser's run-start redraws are done, at least the page's pause
    ("fleet", True, 0.0),  # a page switch
    (None, False, 0.0), ("cost", False, 0.0)])  # no browser (AppTest): never
def test_a_run_pauses_after_its_kpis_on_a_first_page_and_a_rerun_only(previous: str | None, browser: bool,
                                                                       expected: float) -> None:
    assert ui.editor.kpi_pause_s(previous, "cost", browser=browser, pause_s=0.1, redraw_s=0.5,
                                 since_start_s=0.25) == expected
    # the first page's pause is not shortened by a long run (its KPIs wait for code, not for a redraw)
    assert ui.editor.kpi_pause_s(None, "cost", browser=True, pause_s=0.1, redraw_s=0.5, since_start_s=9.0) == (
        ui.editor.FIRST_RUN_PAUSE_S)
    assert ui.editor.FIRST_RUN_PAUSE_S > 0


def test_every_catalog_accelerator_gives_kpis_or_an_error(app: AppTest) -> None:
    for accelerator in economics.catalog.accelerator_ids():
        app.selectbox(key="accelerator").set_value(accelerator).run()
        assert not app.exception, (accelerator, [e.value for e in app.exception])
        shown = [m.value for m in app.metric if m.label == COST_LABEL]
        assert shown or app.error, accelerator
        if shown:
            assert re.fullmatch(r"\$\d[\d,]*(\.\d+)?", str(shown[0])), (accelerator, shown)


def test_ui_stays_thin_and_safe() -> None:
    """ui/ and app.py draw and never compute (no numeric libraries), and never render raw HTML."""
    for path in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert "unsafe_allow_html" not in text, path
        assert not re.search(r"^\s*(import|from)\s+(numpy|numpy_financial|pandas)\b", text, re.M), path
    for path in (ROOT / "economics").glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit\b", path.read_text(encoding="utf-8"), re.M), path


def test_presets_load_with_one_click(app: AppTest) -> None:
    names = list(economics.preset_scenarios())
    sn50 = next(n for n in names if "SN50" in n)
    app.selectbox(key="preset").set_value(sn50).run()
    assert not app.exception
    scenario, _note = economics.preset_scenarios()[sn50]
    assert app.session_state["scenario"] == scenario.model_dump()
    assert app.selectbox(key="accelerator").value == scenario.accelerator == "h200-sxm"
    expected = economics.evaluate_scenario(scenario)["cost_usd_per_m_tokens"]
    assert metric_value(app, COST_LABEL) == usd_rate(expected)
    assert any("763" in c.value for c in app.caption)
    assert app.selectbox(key="preset").value is None  # a preset is an action, not a state


class _Cells(HTMLParser):
    """The rows of each HTML table as the text of their cells (header row first), a table each in ``tables`` (an
    element may hold several: the Decode page's odds and tornado)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.rows = []
            self.tables.append(self.rows)
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def static_table(at: AppTest, header: str) -> list[dict[str, str]]:
    """The page's first static table (``st.html``, ui/common.py ``draw_table``) with a column titled ``header``: its
    rows, each cell's text by its column's title."""
    for element in at.html:
        cells = _Cells()
        cells.feed(element.value)
        for rows in cells.tables:
            if rows and header in rows[0]:
                return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    raise AssertionError(f"no table with a column {header!r}")


def test_cost_page_shows_margin_breakdown_and_api_prices(cost_page: AppTest) -> None:
    assert metric_value(cost_page, "Gross margin").endswith("%")
    assert len(cost_page.get("vega_lite_chart")) == 3  # the breakdown, cost against utilisation, the day's 24 hours
    assert not cost_page.dataframe  # every table of the page is short: static, no grid
    prices = static_table(cost_page, "Provider")
    assert prices and {"Provider", "Gross margin [%]"} <= set(prices[0])
    assert [row["Provider"] for row in prices] == list(economics.catalog.api_prices()["provider"])
    assert all(row["Gross margin [%]"].endswith("%") for row in prices)


def test_pin_a_baseline_and_every_kpi_shows_its_change(app: AppTest) -> None:
    app.button(key="pin_baseline").click().run()
    app.text_input(key="electricity_usd_per_kwh").set_value("0.3").run()
    assert not app.exception
    deltas = {m.label: m.delta for m in app.metric}
    # every KPI whose value moved carries a delta; the margin moves in percentage points
    assert deltas["Cost per M tokens"].endswith("vs baseline") and deltas["Cost per M tokens"].startswith("+$")
    assert re.fullmatch(r"-\d+\.\d pp vs baseline", deltas["Gross margin"]), deltas["Gross margin"]
    assert deltas["Cost per day"].startswith("+$")
    base = economics.evaluate_scenario(scenario_with())
    now = economics.evaluate_scenario(scenario_with(electricity_usd_per_kwh=0.3))
    # 0.3 vs 0.0806 USD/kWh: the margin change is (now - base) x 100 points, rounded to 0.1
    points = (now["gross_margin"] - base["gross_margin"]) * 100
    assert deltas["Gross margin"] == f"-{abs(points):.1f} pp vs baseline"
    table = next(d.value for d in app.dataframe if "change" in d.value.columns).set_index("output")
    assert table.loc["Cost per M tokens [USD/M token]", "baseline"] == ui.format.usd_rate(
        base["cost_usd_per_m_tokens"])
    # the link carries the baseline too, so the comparison is shareable
    open_share(app)
    assert any("baseline.v=1" in c.value for c in app.code)


@pytest.mark.parametrize("page", EDITOR_PAGES)
def test_every_field_is_reachable_on_every_page(page: str) -> None:
    at = start(page)
    reached: set[str] = set()
    for section in SECTIONS:
        at.pills(key=SECTION_KEY).set_value(section).run()
        assert not at.exception, (page, section)
        reached |= {w.key for w in [*at.text_input, *at.selectbox, *at.checkbox] if w.key in FIELDS}
    assert reached == set(FIELDS), (page, set(FIELDS) - reached)
