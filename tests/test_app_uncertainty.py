"""The Uncertainty page under ``streamlit.testing``: percentiles ordered, tornado and histogram drawn, ranges move
the spread."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "uncertainty.py")


def money(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_percentiles_tornado_and_histogram() -> None:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    p10, p50, p90 = (money(values[f"P{p} cost per M tokens"]) for p in (10, 50, 90))
    assert p10 <= p50 <= p90
    assert values["Owning cheaper than renting"].endswith("of samples")
    assert len(at.get("vega_lite_chart")) == 2
    # a narrower electricity range never widens the spread
    at.slider(key="range_electricity_usd_per_kwh").set_value((0.07, 0.09)).run()
    narrow = {m.label: m.value for m in at.metric}
    assert money(narrow["P90 cost per M tokens"]) - money(narrow["P10 cost per M tokens"]) <= p90 - p10 + 1e-9
