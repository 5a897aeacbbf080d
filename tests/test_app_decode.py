"""The Decode accelerators page under ``streamlit.testing``: what the study needs is asked for, no hardware is free
by default, options side by side with payback and IRR as KPIs, price moves the NPV, measured speeds belong to a
model."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from economics.engine.batch import as_scenario
from economics.report import charts
from economics.schema.outputs import DisplayFormat as Show
from economics.studies.retrofit import analyse, break_even_decode_price_usd
from economics.studies.retrofit_life import refresh
from economics.studies.retrofit_odds import odds
from tests.test_app import start, static_table
from ui import format as fmt
from ui.common import grid_texts, report_table


def example_page() -> AppTest:
    """The Decode page after "Start from the example study"."""
    at = start("decode")
    at.button(key="load_example").click().run()
    assert not at.exception
    return at


@pytest.fixture
def page() -> AppTest:
    """:func:`example_page` of the test's own, for a test that edits it."""
    return example_page()


@pytest.fixture(scope="module")
def example() -> AppTest:
    """:func:`example_page` run once, shared by the tests that only read it (none of them runs, clicks or sets a
    widget)."""
    return example_page()


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def money(text: str) -> float:
    """'−$38.3 M' -> -38.3e6 (the page's own rounding)."""
    text = text.replace(" each", "").replace("\u2212", "-").replace("$", "").replace(",", "")
    scale = {"M": 1e6, "B": 1e9, "T": 1e12}
    number, _, suffix = text.partition(" ")
    return float(number) * scale.get(suffix, 1.0)


def column(at: AppTest, header: str, title: str | None = None) -> list[str]:
    return [row[title or header] for row in static_table(at, header)]


def intro(at: AppTest) -> list[str]:
    """The paragraphs under the page's title: its intro and the price and speed notes, drawn with the title as one
    Markdown element (ui/text.py ``headed``: each a paragraph of small grey type, its square brackets escaped)."""
    top = next(m.value for m in at.markdown if m.value.startswith("# "))
    paragraphs = top.split("\n\n")[1:]
    # each a whole small-type directive: one spanning paragraphs shows its brackets instead
    assert all(p.startswith(":small[:gray[") and p.endswith("]]") for p in paragraphs), paragraphs
    return [p.removeprefix(":small[:gray[").removesuffix("]]").replace("\\[", "[").replace("\\]", "]")
            for p in paragraphs]


def test_a_scenario_without_a_fleet_is_asked_for_it() -> None:
    at = start("decode")
    assert any("needs" in i.value and "decode accelerator" in i.value for i in at.info)
    assert not at.metric


def test_the_example_leaves_the_decode_price_to_the_catalog(example: AppTest) -> None:
    scenario = example.session_state["scenario"]
    assert scenario["decode_accelerator_price_usd"] is None  # never a 0 that means "free"
    assert example.text_input(key="decode_accelerator_price_usd").value == ""
    said = [note for note in intro(example) if "catalog figure" in note] + [
        w.value for w in example.warning if "No catalog price" in w.value]
    assert said, "the page says where the decode price comes from"
    assert (scenario["existing_accelerators"], scenario["decode_accelerator"], scenario["model"]) == (
        2000, "sn50", "minimax-m2")


def test_options_side_by_side_with_payback_and_irr(page: AppTest) -> None:
    page.text_input(key="decode_accelerator_price_usd").set_value("50,000").run()
    assert not page.dataframe  # every table of the page is short: static, no grid
    options = column(page, "Capex", "Option")
    assert options == ["status quo", "add decode", "more of the same",
                                       "more of the same, as demand grows", "new generation",
                                       "new generation, as demand grows"]
    assert metric(page, "Best option (NPV)") in set(options)
    labels = {m.label for m in page.metric}
    assert {"NPV of adding decode", "Break-even decode price", "Payback of adding decode",
            "IRR of adding decode"} <= labels
    assert "None" not in " ".join(str(m.value) for m in page.metric)
    # one chart of three panels: the odds' fan, the cumulative cash flow, the refresh NPV by year
    (chart,) = page.get("vega_lite_chart")
    assert len(json.loads(chart.proto.spec)["vconcat"]) == 3


def test_the_break_even_keeps_its_place_though_sent_after_the_other_kpis(page: AppTest) -> None:
    # the page sends the break-even price (its two studies) after the four KPIs its own study gives, into the first
    # row's third place: the page reads as before, after an edit of the demand too (its figure: the test below)
    order = ["Best option (NPV)", "NPV of adding decode", "Break-even decode price", "Payback of adding decode",
             "IRR of adding decode"]
    assert [m.label for m in page.metric] == order
    page.text_input(key="demand_output_tokens_per_day").set_value("3e10").run()
    assert not page.exception and [m.label for m in page.metric] == order


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
    # the example's rate is a per-user speed times the users a rack serves; without the speed the SN50 (a dataflow
    # system the roofline does not describe) has no decode rate at all
    page.text_input(key="decode_measured_output_tokens_per_s_per_user").set_value("").run()
    assert not page.exception
    assert any("add decode" in w.value and "decode" in w.value for w in page.warning)


NUMBERS = {"capex_usd": ("Capex", Show.USD), "opex_usd_per_year": ("Opex, first year (a year)", Show.USD),
           "revenue_usd_per_year": ("Revenue, first year (a year)", Show.USD),
           "npv_vs_status_quo_usd": ("NPV vs status quo", Show.USD),
           "levelized_cost_usd_per_m_tokens": ("Levelized cost [USD/M token]", Show.USD_RATE),
           "accelerators": ("GPUs", Show.COUNT), "decode_accelerators": ("Decode accelerators", Show.COUNT),
           "facility_mw": ("Facility [MW]", Show.NUMBER), "racks": ("Racks", Show.COUNT),
           "output_tokens_per_s_per_user": ("Per-user speed [token/s]", Show.NUMBER)}
"""The options table's number columns, with the header and display format the page gives each."""


def _payback_text(months: Any) -> str:
    if months is None or not math.isfinite(float(months)):
        return "never"
    return f"{months / 12:,.1f} years" if months >= 24 else f"{months:,.0f} months"


def reference_kpis(scenario: dict[str, Any]) -> dict[str, str]:
    """The KPIs of a study from scratch (every year evaluated on its own, nothing remembered), read from its options
    table with pandas (the best option by sorting on NPV), as the page read them before it kept the options as
    rows; the break-even price at no decode price, as the page computes it."""
    options = analyse(scenario, fresh=True).options
    even = break_even_decode_price_usd({**scenario, "decode_accelerator_price_usd": 0.0}, fresh=True)
    best = options[options["feasible"]].sort_values("npv_vs_status_quo_usd", ascending=False)
    row = options[options["option"] == "add decode"]
    kpis = {"Best option (NPV)": best["option"].iloc[0] if len(best) else "none feasible",
            "NPV of adding decode": "not feasible", "Break-even decode price": fmt.EMPTY if even is None else
            fmt.usd(even), "Payback of adding decode": fmt.EMPTY, "IRR of adding decode": fmt.EMPTY}
    if len(row) and bool(row["feasible"].iloc[0]):
        r = row.iloc[0]
        irr = r["irr_vs_status_quo"]
        kpis.update({"NPV of adding decode": fmt.usd(r["npv_vs_status_quo_usd"]),
                     "Payback of adding decode": _payback_text(r["payback_months"]),
                     "IRR of adding decode": "none" if irr is None or not math.isfinite(float(irr)) else
                     fmt.percent(irr)})
    return kpis


def test_every_kpi_and_the_options_table_after_edits_equal_a_study_from_scratch(page: AppTest) -> None:
    # the edits users make most (the demand, the decode price, the growth), in a seeded random order and size:
    # after each, every KPI's text and every number of the options table are what a study from scratch gives
    rng = random.Random(7)
    feasible = 0
    for step in range(10):
        choices = [("demand_output_tokens_per_day", 10 ** rng.uniform(9.0, 11.0)),
                   ("decode_accelerator_price_usd", rng.uniform(5e3, 2e5)),
                   ("demand_growth_per_year", rng.uniform(-0.2, 1.0))]
        field, value = ("decode_accelerator_price_usd", 40_000.0) if step == 1 else rng.choice(choices)
        page.text_input(key=field).set_value(repr(value)).run()
        assert not page.exception and not page.error, step
        scenario = page.session_state["scenario"]
        assert scenario[field] == value
        expected = reference_kpis(scenario)
        assert {m.label: str(m.value) for m in page.metric} == expected, (step, field, value)
        feasible += expected["NPV of adding decode"] != "not feasible"
        shown = static_table(page, "Capex")
        expected = grid_texts(*report_table(analyse(scenario, fresh=True).options[list(NUMBERS)], NUMBERS))
        for name in NUMBERS:  # each cell's text, in the display format the grid gave it
            assert [row[NUMBERS[name][0]] for row in shown] == expected[name], (step, name)
    assert feasible >= 5  # most steps price the decode pool


def test_how_each_option_is_computed_is_on_the_page(page: AppTest) -> None:
    page.toggle(key="show_study_derivation").set_value(True).run()
    assert not page.exception
    page.selectbox(key="derivation_option").set_value("add decode").run()
    text = next(c.value for c in page.code if c.value.startswith("add decode: "))
    # the study's own figures, written out: the decode pool bought at t = 0 at the catalog's estimated price, and
    # the NPV the KPI shows as the sum of the present values
    assert "t = 0: purchase_usd = bought x price_usd = 608 x 35,000 = 21,280,000 USD" in text
    npv_line = next(x for x in text.splitlines() if x.startswith("npv_vs_status_quo_usd ="))
    assert money(metric(page, "NPV of adding decode")) == pytest.approx(
        float(npv_line.rsplit(" = ", 1)[1].replace(" USD", "").replace(",", "")), rel=5e-3)
    assert "payback = " in text and "irr_vs_status_quo = " in text


def test_the_page_leads_with_the_odds(page: AppTest) -> None:
    # the worked example: the odds above the point figures (add decode leads there, as its point NPV does), the
    # odds table and the tornado, and the assumptions named
    # the headline leads the odds table, the tornado and the assumptions, in one element (the fan is a panel of the
    # year-by-year chart further down)
    tables = page.html[0].value.split("<tbody>")
    assert "<strong>add decode is the best option in" in tables[0] and "of 2,000 draws (seed 0).</strong>" in tables[0]
    assert "<th class=\"figure\">Best in</th>" in tables[0] and ">NPV P50</th>" in tables[0]  # the odds lead
    assert ">Break-even value</th>" in tables[1]
    assumptions = page.html[0].value.split("</table>")[-1]
    assert "Assumptions (ranges no source gives)" in assumptions and "token prices" in assumptions
    page.number_input(key="odds_seed").set_value(1).run()
    assert not page.exception
    assert "of 2,000 draws (seed 1)" in page.html[0].value


def test_the_worked_example_shows_the_refresh_and_every_decode_accelerator(example: AppTest) -> None:
    # each heading and its caption are one Markdown element (a level-3 heading, as a subheader draws it)
    heads = {m.value.split("\n\n")[0]: m.value for m in example.markdown if m.value.startswith("### ")}
    assert "### Every decode accelerator of the catalog" in heads
    assert "the best: after" in heads["### When to replace the fleet"]
    rows = {row["decode_accelerator"]: row for row in static_table(example, "decode_accelerator")}
    assert rows["sn50"]["studied"] == "✓" and "no measured throughput" in rows["groq3-lpx"]["note"]
    # the SN50 and the Groq 3 LPX side by side with the odds: the SN50's option's share of draws as the best, the
    # LPX none (no price in the catalog, no measured throughput for the model: none invented)
    odds = {row["Option"]: row for row in static_table(example, "Draws computed")}
    assert rows["sn50"]["Best in"] == odds["add decode"]["Best in"] != fmt.EMPTY
    assert rows["sn50"]["odds"].startswith("best in ")
    assert rows["groq3-lpx"]["odds"].startswith("no odds: no price in the catalog; no measured throughput")
    assert rows["groq3-lpx"]["Best in"] == rows["groq3-lpx"]["NPV P50"] == fmt.EMPTY  # none invented


def test_the_draws_and_the_seed_travel_in_the_link(page: AppTest) -> None:
    page.number_input(key="odds_samples").set_value(500).run()
    page.number_input(key="odds_seed").set_value(4).run()
    assert not page.exception
    query = {str(k): str(v) for k, v in dict(page.query_params).items()}
    assert (query["settings.odds_samples"], query["settings.odds_seed"]) == ("500", "4")
    again = start("decode", query)  # the link opened anew: the same draws
    assert "of 500 draws (seed 4)" in again.html[0].value  # the odds' headline, above its table
    assert again.number_input(key="odds_samples").value == 500


def test_the_example_reads_the_decode_speed_on_its_curve_against_context(page: AppTest) -> None:
    # the example's SN50 pool: 763 tokens/s a user at 10,000 input tokens, 450 at an assumed 100,000; at 55,000 input
    # tokens 1 / (1/763 + (1/450 - 1/763) x 0.5) = 566.1 tokens/s a user, x 16 users / 16 chips per SN50
    page.text_input(key="decode_accelerator_price_usd").set_value("50000").run()
    page.text_input(key="input_tokens_per_request").set_value("55000").run()
    assert not page.exception
    note = next(n for n in intro(page) if n.startswith("Decode throughput:"))
    assert note.startswith("Decode throughput: 566.1 output tokens/s per sn50 = 566.1 tokens/s per user (measured "
                           "763 at 10,000 tokens, read on its curve against context at the workload's 55,000")


def _encoded(spec: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each mark of a chart spec with the field each channel (tooltips aside) encodes: what a chart draws
    (Streamlit writes its own titles into a spec it draws)."""
    return sorted((str(layer.get("mark")), channel, str(enc.get("field")))
                  for layer in spec.get("layer", [spec]) for channel, enc in layer.get("encoding", {}).items()
                  if channel != "tooltip")


def test_the_pages_charts_are_the_board_reports_with_the_studys_own_figures(example: AppTest) -> None:
    # the fan, the cash flow and the refresh: each panel of the page's one chart is the board report's chart (its
    # spec built once), titled, drawn with the study's own figures, bit for bit (the odds at the page's 2,000 draws
    # from seed 0)
    scenario = example.session_state["scenario"]
    result = analyse(scenario, fresh=True)
    expected = {"fan": (charts.fan_spec(), pd.DataFrame(charts.fan_data(odds(scenario, 2_000, 0).fan)["fan"])),
                "flows": (charts.cashflow_spec(), charts.cashflow_data(result.cashflows)["flows"]),
                "refresh": (charts.refresh_spec(), refresh(result, as_scenario(scenario)))}
    (chart,) = example.get("vega_lite_chart")
    datasets = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets}
    panels = json.loads(chart.proto.spec)["vconcat"]
    assert [p["data"]["name"] for p in panels] == ["fan", "flows", "refresh"]  # top to bottom
    assert panels[0]["title"].startswith("NPV to date vs status quo: P10-P90 of the 2,000 draws")
    for panel in panels:
        spec, data = expected.pop(panel["data"]["name"])
        assert _encoded(panel) == _encoded(spec) and panel["title"], panel["data"]
        drawn = datasets[panel["data"]["name"]]
        pd.testing.assert_frame_equal(drawn[list(data.columns)].reset_index(drop=True),
                                      data.reset_index(drop=True), check_dtype=False, check_exact=True)
    assert not expected  # all three drawn


def test_a_stack_refuses_two_panels_with_one_dataset_name() -> None:
    # merged, the second panel's rows would replace the first's: refused, naming the panel and the dataset
    fan = {**charts.fan_spec(), "datasets": {"fan": []}}
    with pytest.raises(ValueError, match=r"panel 'again' brings dataset\(s\) \['fan'\]"):
        charts.stacked_spec([("first", fan), ("again", fan)])


def test_without_the_odds_the_chart_keeps_the_cash_flow_and_the_refresh(page: AppTest) -> None:
    # the odds turned off: no fan, so the stack holds the two other panels, and the heading's note names only them
    page.toggle(key="show_odds").set_value(False).run()
    assert not page.exception
    (chart,) = page.get("vega_lite_chart")
    assert [p["data"]["name"] for p in json.loads(chart.proto.spec)["vconcat"]] == ["flows", "refresh"]
    (note,) = [m.value for m in page.markdown if m.value.startswith("### Year by year")]
    assert "the cumulative cash flow; the NPV of keeping" in note and "odds' draws" not in note
