"""The Fleet page under ``streamlit.testing``: sizing KPIs follow the inputs; cooling and site power decide; the
accelerators compared are a page setting carried by the link."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_app import start, static_table
from ui.common import grid_number
from ui.format import EMPTY

SIZING = {"model": "llama-3.1-70b", "accelerator": "h200-sxm", "precision": "fp8",
          "target_output_tokens_per_s_per_user": "20", "output_tokens_per_s_per_accelerator": "",
          "demand_input_tokens_per_day": ""}


@pytest.fixture
def page() -> AppTest:
    return start("fleet", SIZING)


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def count(text: str) -> int:
    return int(text.replace(",", ""))


def test_default_fleet_fits_and_shows_hardware_racks_power(page: AppTest) -> None:
    assert any("fits this facility" in s.value for s in page.success)
    assert count(metric(page, "Accelerators")) % 8 == 0  # whole 8-GPU systems
    assert metric(page, "Facility power (provisioned) [kW]").replace(",", "").replace(".", "").isdigit()
    assert not page.dataframe  # the comparison is short: a static table (ui/common.py draw_table)
    table = static_table(page, "Rank")
    assert table and {row["Accelerator"] for row in table} == set(page.session_state["settings"]["compare"])


def test_more_demand_needs_more_hardware(page: AppTest) -> None:
    before = count(metric(page, "Accelerators"))
    page.text_input(key="demand_output_tokens_per_day").set_value("20,000,000,000").run()
    assert count(metric(page, "Accelerators")) > before


def test_gb200_needs_liquid_or_a_retrofit(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("gb200-nvl72").run()
    assert any("requires liquid cooling" in e.value for e in page.error), [e.value for e in page.error]
    page.checkbox(key="allow_liquid_retrofit").check().run()
    assert any("fits this facility" in s.value for s in page.success)
    page.checkbox(key="allow_liquid_retrofit").uncheck().run()
    page.selectbox(key="facility_cooling").set_value("liquid").run()
    assert any("fits this facility" in s.value for s in page.success)


def test_site_power_limit_is_reported(page: AppTest) -> None:
    assert page.text_input(key="site_power_mw").value == ""  # empty: no limit, never a 0
    assert "no limit" in str(page.text_input(key="site_power_mw").placeholder)
    page.text_input(key="site_power_mw").set_value("0.01").run()
    assert any("site power: the fleet needs" in e.value for e in page.error)


def test_a_fixed_fleet_is_said_and_sizing_is_one_click_away(page: AppTest) -> None:
    page.text_input(key="accelerator_count").set_value("536").run()
    assert metric(page, "Accelerators") == "536"
    assert any("fixed at 536" in i.value for i in page.info)
    page.button(key="size_from_demand").click().run()
    assert page.session_state["scenario"]["accelerator_count"] is None
    assert metric(page, "Accelerators") != "536"


def test_compared_accelerators_are_kept_in_the_state_and_the_link(page: AppTest) -> None:
    page.multiselect(key="compare_accelerators").set_value(["b200", "h100-sxm"]).run()
    assert page.session_state["settings"]["compare"] == ("b200", "h100-sxm")
    assert page.query_params["settings.compare"] == "b200,h100-sxm"
    again = start("fleet", {**SIZING, "settings.compare": "b200,h100-sxm"})
    assert {row["Accelerator"] for row in static_table(again, "Rank")} == {"b200", "h100-sxm"}


def test_a_fleet_that_does_not_fit_still_shows_how_it_is_computed(page: AppTest) -> None:
    page.text_input(key="site_power_mw").set_value("0.01").run()
    assert any("site power: the fleet needs" in e.value for e in page.error)
    page.toggle(key="show_derivation").set_value(True).run()
    assert not page.exception
    assert any("facility_power_kw = " in c.value for c in page.code)  # why it does not fit, with its numbers


def test_a_rented_fleet_in_a_comparison_is_off_site_never_fitting_the_site() -> None:
    # a 0.01 MW site: every owned fleet is too big for it; rented ones are off site, where its limit does not apply
    page = start("fleet", {**SIZING, "ownership": "rent", "site_power_mw": "0.01"})
    assert not page.exception
    sites = {row["Site"] for row in static_table(page, "Rank")}
    assert "fits the site" not in sites
    assert sites <= {"off site (rented)", "not feasible"} and "off site (rented)" in sites


def test_the_comparison_odds_on_request(page: AppTest) -> None:
    # #41 item 5 on the page: off by default (no draws on an edit), then each compared accelerator's share of draws
    # as the cheapest, at the Uncertainty page's samples and seed, as compare --uncertainty gives it
    from economics.studies.compare_odds import compare_odds

    assert not any("cheapest per M tokens in" in m.value for m in page.markdown)
    page.multiselect(key="compare_accelerators").set_value(["b200", "h100-sxm"]).run()
    page.session_state["settings"] = {**page.session_state["settings"], "samples": 500}
    page.toggle(key="show_compare_odds").set_value(True).run()
    assert not page.exception
    expected = compare_odds(page.session_state["scenario"], ["b200", "h100-sxm"], samples=500, seed=0)
    assert f"{expected.headline()}." in [m.value.strip("*") for m in page.markdown]
    shown = [row["Cheapest in"] for row in static_table(page, "Cheapest in")]
    assert shown == [EMPTY if p != p else grid_number(float(p), "percent")  # as the grid wrote each share
                     for p in expected.table["probability_cheapest"]]


def test_the_comparison_chart_draws_each_edits_own_rows(page: AppTest) -> None:
    # the chart is built once and drawn with each comparison's rows: after each edit, the rows compare_accelerators
    # gives for the scenario as it now is (the unpriced ones rented, as the table rents them)
    import json
    import math

    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    from economics import catalog
    from economics.studies.compare import compare_accelerators

    costs = []
    for headroom in ("0.1", "0.6"):
        page.text_input(key="headroom").set_value(headroom).run()
        chosen = list(page.session_state["settings"]["compare"])
        rented = {a: {"ownership": "rent"} for a in chosen
                  if math.isnan(catalog.accelerator_record(a).get("price_usd", math.nan))}
        table = compare_accelerators(page.session_state["scenario"], chosen, rented)
        expected = table[table["cost_usd_per_m_tokens"].notna()]
        (chart,) = [c for c in page.get("vega_lite_chart") if [d.name for d in c.proto.datasets] == ["compare"]]
        drawn = convert_arrow_bytes_to_pandas_df(chart.proto.datasets[0].data.data)
        assert list(drawn["accelerator"]) == list(expected["accelerator"])
        assert list(drawn["cost_usd_per_m_tokens"]) == list(expected["cost_usd_per_m_tokens"])
        assert json.loads(chart.proto.spec)["encoding"]["x"]["field"] == "cost_usd_per_m_tokens"
        costs.append(list(drawn["cost_usd_per_m_tokens"]))
    assert costs[0] != costs[1]  # more headroom, more hardware: the second edit's own rows, not the first's
