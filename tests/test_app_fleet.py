"""The Fleet page under ``streamlit.testing``: sizing KPIs follow the inputs; cooling and site power decide."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "fleet.py")


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def test_default_fleet_fits_and_shows_hardware_racks_power(page: AppTest) -> None:
    assert any("fits this facility" in s.value for s in page.success)
    assert int(metric(page, "Accelerators").replace(",", "")) % 8 == 0  # whole 8-GPU systems
    assert metric(page, "Facility power").endswith(" MW")
    assert len(page.dataframe) == 1


def test_more_demand_needs_more_hardware(page: AppTest) -> None:
    before = int(metric(page, "Accelerators").replace(",", ""))
    page.number_input(key="demand_output_tokens_per_day").set_value(2e10).run()
    assert int(metric(page, "Accelerators").replace(",", "")) > before


def test_gb200_needs_liquid_or_a_retrofit(page: AppTest) -> None:
    page.selectbox(key="accelerator").set_value("gb200-nvl72").run()
    assert any("requires liquid cooling" in e.value for e in page.error)
    page.checkbox(key="allow_liquid_retrofit").check().run()
    assert any("fits this facility" in s.value for s in page.success)
    page.checkbox(key="allow_liquid_retrofit").uncheck()
    page.selectbox(key="facility_cooling").set_value("liquid").run()
    assert any("fits this facility" in s.value for s in page.success)


def test_site_power_limit_is_reported(page: AppTest) -> None:
    page.number_input(key="site_power_mw").set_value(0.01).run()
    assert any("site power: the fleet needs" in e.value for e in page.error)
