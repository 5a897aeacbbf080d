"""A plan's odds (economics.studies.plan_odds): the chosen plan's candidates over their throughput ranges."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from economics.engine.batch import as_scenario
from economics.studies.plan_odds import MAX_PLAN_SAMPLES, drawn_candidates, plan_drivers, plan_odds
from economics.studies.planner.candidates import catalog_candidates
from economics.studies.planner.inputs import PlanSettings
from economics.studies.planner.run import plan

ROW = {"name": "p", "model": "llama-3.1-70b", "precision": "fp8", "target_output_tokens_per_s_per_user": 30.0,
       "input_tokens_per_request": 2000.0, "output_tokens_per_request": 250.0, "demand_output_tokens_per_day": 2e10}
IDS = ["h100-sxm", "b200"]


@pytest.fixture(scope="module")
def made() -> tuple:
    s = as_scenario(ROW)
    cands = catalog_candidates(s, IDS)[0]
    return s, cands, plan(s, PlanSettings(), cands)


def test_with_every_range_collapsed_each_draw_is_the_plan(made: tuple) -> None:
    s, cands, chosen = made
    names = [d.name for d in plan_drivers(s, cands)]
    assert names == ["h100-sxm throughput", "b200 throughput"]  # own and rent share their accelerator's factor
    found = plan_odds(s, PlanSettings(), cands, chosen, samples=2, seed=0,
                      ranges={"h100-sxm throughput": (1.0, 1.0), "b200 throughput": (1.0, 1.0)})
    got = found.summary()
    cost = chosen.summary["cost_usd_per_day"]
    assert got["cost_usd_per_day_p10"] == got["cost_usd_per_day_p50"] == got["cost_usd_per_day_p90"] == \
        pytest.approx(cost, rel=1e-9)
    assert got["probability_other_candidates_cheaper"] == 0.0 and got["chosen_served_share"] == 1.0


def test_slower_chosen_hardware_costs_more_and_rates_scale_by_their_factor(made: tuple) -> None:
    s, cands, chosen = made
    used = {str(n).split()[0] for n in chosen.plan.loc[chosen.plan["systems"] > 0, "name"]}
    slow = {f"{acc} throughput": (0.5, 1.0) for acc in used}  # triangular with its mode at 1: every draw below
    found = plan_odds(s, PlanSettings(), cands, chosen, samples=3, seed=2, ranges=slow)
    assert found.summary()["cost_usd_per_day_p10"] >= chosen.summary["cost_usd_per_day"] * (1 - 1e-9)
    b200 = next(c for c in cands if c.name == "b200 own")
    drivers = plan_drivers(s, cands)
    row = [0.5 if d.name == "b200 throughput" else 1.0 for d in drivers]
    moved = next(c for c in drawn_candidates(cands, drivers, row) if c.name == "b200 own")  # type: ignore[arg-type]
    assert moved.output_tokens_per_s_per_system == b200.output_tokens_per_s_per_system * 0.5
    assert moved.input_tokens_per_s_per_system == b200.input_tokens_per_s_per_system * 0.5
    with pytest.raises(ValueError, match="at most"):
        plan_odds(s, PlanSettings(), cands, chosen, samples=MAX_PLAN_SAMPLES + 1)


def test_cli_plan_uncertainty(tmp_path: Path) -> None:
    src = tmp_path / "row.csv"
    src.write_text(",".join(ROW) + "\n" + ",".join(str(v) for v in ROW.values()) + "\n", encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "economics", "plan", str(src), "--row", "p", "--accelerators",
                          ",".join(IDS), "--uncertainty", "--samples", "3", "--seed", "1"], cwd=root,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["odds"]["samples"], doc["odds"]["seed"]) == (3, 1)
    assert doc["odds"]["cost_usd_per_day_p10"] <= doc["odds"]["cost_usd_per_day_p90"]
    assert sum(m["probability_cheapest"] for m in doc["odds_mixes"]) == pytest.approx(1.0)
    assert "of 3 draws (seed 1)" in out.stderr
