"""The Uncertainty page under ``streamlit.testing``: percentiles ordered, tornado and histogram drawn, ranges move
the spread, and ranges, samples and seed are page settings the link carries."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import economics
from economics import cli
from economics.engine.batch import as_scenario, evaluate
from economics.studies.compare import scenario_frame
from economics.studies.uncertainty import draw
from tests.test_app import start
from tests.test_app import static_table as table
from ui.format import usd_rate


def money(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def kpis(at: AppTest) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def test_percentiles_tornado_and_histogram() -> None:
    at = start("uncertainty")
    values = kpis(at)
    p10, p50, p90 = (money(values[f"P{p} cost per M tokens"]) for p in (10, 50, 90))
    assert p10 <= p50 <= p90
    assert values["Owning cheaper than renting [share of samples]"].endswith(" %")
    assert len(at.get("vega_lite_chart")) == 2
    # the summary reads like the KPIs: each output in its own format, the P50 cost the KPI's figure
    # (a static table: its cells are the text on screen)
    summary = {row["Output [unit]"]: row for row in table(at, "Samples computed")}
    assert summary["Cost per M tokens [USD/M token]"]["P50"] == values["P50 cost per M tokens"]
    assert summary["Gross margin [%]"]["P10"].endswith(" %")
    assert summary["Cost per day [USD/day]"]["P90"].startswith("$")
    assert {row["Samples computed"] for row in summary.values()} == {"10,000"}
    # a narrower electricity range never widens the spread
    at.text_input(key="range_electricity_usd_per_kwh_low").set_value("0.07").run()
    at.text_input(key="range_electricity_usd_per_kwh_high").set_value("0.09").run()
    narrow = kpis(at)
    # (the KPIs are shown to the cent: the spreads compared may differ by one rounding step)
    assert money(narrow["P90 cost per M tokens"]) - money(narrow["P10 cost per M tokens"]) <= p90 - p10 + 0.01 + 1e-9


def test_ranges_samples_and_seed_travel_in_the_link() -> None:
    at = start("uncertainty")
    at.text_input(key="range_pue_high").set_value("1.9").run()
    at.number_input(key="mc_samples").set_value(2000).run()
    at.number_input(key="mc_seed").set_value(7).run()
    query = dict(at.query_params)
    assert query["settings.pue_high"] == "1.9" and query["settings.samples"] == "2000"
    assert query["settings.seed"] == "7"
    shown = kpis(at)
    again = start("uncertainty", {str(k): str(v) for k, v in query.items()})
    assert kpis(again) == shown
    assert again.text_input(key="range_pue_high").value == "1.9"


def test_a_bad_range_is_refused_by_name() -> None:
    at = start("uncertainty")
    at.text_input(key="range_pue_low").set_value("low").run()
    assert not at.exception
    assert any("pue_low" in e.value for e in at.error)


def test_the_kpis_are_the_percentiles_of_every_sample_evaluated_as_a_table() -> None:
    """The page's P10 / P50 / P90 against the plain way: the 10,000 seeded draws (seed 0, triangular) of the page's
    default ranges (economics.studies.uncertainty.DEFAULT_RANGE_FACTORS around the values the engine uses) as rows
    of one table of whole scenarios through economics.evaluate, then numpy's percentiles."""
    at = start("uncertainty")
    for e in (0.2, 0.031):
        at.text_input(key="electricity_usd_per_kwh").set_value(str(e)).run()
        scenario = as_scenario({**economics.default_scenario().model_dump(), "electricity_usd_per_kwh": e})
        # the default's measured throughput (its curve at its target), air-cooled PUE, price
        tokens = economics.evaluate_scenario(scenario)["output_tokens_per_s_per_accelerator"]
        pue, price = 1.5, 30_000.0
        ranges = {"electricity_usd_per_kwh": (e * 0.5, e, e * 2.5),
                  "accelerator_price_usd": (price * 0.7, price, price * 1.4),
                  "output_tokens_per_s_per_accelerator": (tokens * 0.7, tokens, tokens * 1.3),
                  "pue": (pue * 0.85, pue, pue * 1.2), "cost_of_capital": (0.1 * 0.5, 0.1, 0.1 * 1.5)}
        drawn = draw(ranges, 10_000, 0)
        table = evaluate(scenario_frame([scenario.model_dump()], varying=drawn, repeat=10_000))
        cost = table["cost_usd_per_m_tokens"].astype(float).to_numpy()
        assert not np.isnan(cost).any()
        shown = kpis(at)
        for p, value in zip((10, 50, 90), np.percentile(cost, [10, 50, 90]), strict=True):
            assert shown[f"P{p} cost per M tokens"] == usd_rate(value), (e, p)


def test_the_command_line_reproduces_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `uncertainty --default-ranges` draws the page's ranges (the same defaults, from economics) with the same seed
    # and samples: its P10 / P50 / P90 of cost per M tokens are the page's KPIs
    at = start("uncertainty")
    at.text_input(key="electricity_usd_per_kwh").set_value("0.2").run()
    row = {k: v for k, v in economics.default_scenario().model_dump().items() if v is not None}
    pd.DataFrame([{**row, "name": "u", "electricity_usd_per_kwh": 0.2}]).to_csv(tmp_path / "u.csv", index=False)
    assert cli.main(["uncertainty", str(tmp_path / "u.csv"), "--row", "u", "--default-ranges", "--samples", "10000",
                     "--seed", "0"]) == 0
    summary = capsys.readouterr().out.split("Monte Carlo", 1)[1].split("\n", 1)[1]
    cost = pd.read_csv(io.StringIO(summary)).set_index("output").loc["cost_usd_per_m_tokens"]
    shown = kpis(at)
    for p in (10, 50, 90):
        assert shown[f"P{p} cost per M tokens"] == usd_rate(float(cost[f"p{p}"])), p
