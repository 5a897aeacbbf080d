"""The estimate's range on the pages: beside the KPIs it moves, in the throughput line, as the Uncertainty page's
default throughput range, and in the Plan page's candidate table."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import economics
from tests.test_app import start
from ui.format import output, usd_rate

# Gaudi 3 has no measured point: its throughput is the roofline's, with the leave-one-family-out range
GAUDI = {"accelerator": "gaudi3", "input_tokens_per_request": "3000", "output_tokens_per_request": "700"}


def _ranges(at: AppTest) -> list[str]:
    """The KPIs' range lines (a ranged KPI's description line under its value: ui.common.metric)."""
    return [m.proto.delta_description for m in at.metric]


def _scenario() -> dict[str, object]:
    s = economics.default_scenario().model_dump()
    s.update({k: float(v) if k.endswith("request") else v for k, v in GAUDI.items()})
    return economics.evaluate_scenario(s)


def test_the_cost_page_gives_the_range_beside_the_kpis_it_moves() -> None:
    r = _scenario()
    at = start("cost", GAUDI)
    captions = [c.value for c in at.caption]
    want = f"Estimate's range (P10-P90): {usd_rate(r['cost_usd_per_m_tokens_low'])} to " \
           f"{usd_rate(r['cost_usd_per_m_tokens_high'])}"
    assert any(want in c for c in _ranges(at)), _ranges(at)[:8]
    line = next(c for c in captions if "estimated by the roofline" in c)
    assert "no measured point on intel-gaudi3: global's factors borrowed, unseen-family range: expect" in line
    assert "calibrated" not in line


def test_the_fleet_page_gives_the_fleet_and_power_range() -> None:
    r = _scenario()
    at = start("fleet", GAUDI)
    for name in ("accelerators", "facility_power_kw"):
        want = f"{output(name, r[name + '_low'])} to {output(name, r[name + '_high'])}"
        assert any(want in c for c in _ranges(at)), (name, want)


def test_a_measured_throughput_shows_no_range() -> None:
    at = start("cost")  # the default: a measured curve
    assert not any("Estimate's range" in c for c in [*_ranges(at), *(c.value for c in at.caption)])


def test_the_uncertainty_page_starts_from_the_estimate_s_own_range() -> None:
    r = _scenario()
    at = start("uncertainty", GAUDI)
    low = at.text_input(key="range_output_tokens_per_s_per_accelerator_low")
    high = at.text_input(key="range_output_tokens_per_s_per_accelerator_high")
    from ui.format import number

    assert low.placeholder == f"empty: {number(r['output_tokens_per_s_per_accelerator_p10'])}"
    assert high.placeholder == f"empty: {number(r['output_tokens_per_s_per_accelerator_p90'])}"
    assert any("the estimate's own P10-P90" in c.value for c in at.caption)
