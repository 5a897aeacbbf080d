"""The Plan page under ``streamlit.testing``: the plan and its limits are shown, inputs change it, an infeasible
plan names its constraint, the settings travel in the link and come back from it, user text stays plain."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "plan.py")


def run(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


@pytest.fixture(scope="module")
def page() -> AppTest:
    return run()


def test_default_plan_shows_cost_tables_and_link(page: AppTest) -> None:
    assert metric(page, "Cost per day").startswith("$")
    assert metric(page, "Facility power").endswith(" MW")
    assert len(page.dataframe) >= 3  # plan, limits, candidates
    plan = page.dataframe[0].value
    assert {"name", "role", "systems", "ownership"} <= set(plan.columns)
    assert set(plan["role"]) <= {"aggregated", "prefill", "decode"}
    # the settings are in the URL
    assert page.query_params["plan.demand_profile"] == "diurnal"
    assert page.query_params["plan.ttft_target_s"] == "2.0"
    assert any("plan.demand_profile=diurnal" in c.value for c in page.code)


def test_labels_come_from_the_scenario_fields(page: AppTest) -> None:
    from economics import FIELDS

    labels = {w.label for w in page.number_input}
    assert FIELDS["site_power_mw"].label in labels
    assert FIELDS["demand_output_tokens_per_day"].label in labels


def test_no_rent_and_a_tiny_site_is_infeasible_with_numbers() -> None:
    at = run({"site_power_mw": "0.05", "plan.allow_rent": "false"})
    assert any("site power" in e.value and "MW available" in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric


def test_more_demand_costs_more(page: AppTest) -> None:
    before = page.dataframe[0].value["systems"].sum()
    page.number_input(key="plan_demand_output_tokens_per_day").set_value(4e10).run()
    assert not page.exception
    assert page.dataframe[0].value["systems"].sum() > before
    assert float(page.query_params["demand_output_tokens_per_day"]) == 4e10


def test_link_seeds_the_widgets_and_bad_values_are_named_plainly() -> None:
    at = run({"plan.objective": "npv", "plan.demand_profile": "flat", "plan.ttft_percentile": "2",
              "plan.[x](https://evil.example)": "1", "plan.accelerators": "b200,h200-sxm"})
    assert at.selectbox(key="plan_objective").value == "npv"
    assert at.selectbox(key="plan_demand_profile").value == "flat"
    assert at.multiselect(key="plan_accelerators").value == ["b200", "h200-sxm"]
    warnings = " ".join(w.value for w in at.warning)
    assert "ttft\\_percentile: must be \\> 0 and \\< 1" in warnings
    assert "\\[x\\]\\(https://evil\\.example\\)" in warnings  # escaped: shown as typed, never a link
    assert set(at.dataframe[0].value["accelerator"]) <= {"b200", "h200-sxm"}


def test_frontier_charts_are_drawn_on_request() -> None:
    at = run({"plan.accelerators": "b200,h200-sxm", "plan.demand_profile": "flat", "plan.ttft_target_s": ""})
    before = len(at.get("vega_lite_chart"))
    at.toggle(key="plan_show_frontiers").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("vega_lite_chart")) == before + 2
