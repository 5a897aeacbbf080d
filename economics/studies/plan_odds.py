"""A plan's odds: the cost of the chosen plan's candidates at P10 / P50 / P90 over the candidates' throughput ranges,
and how often a mix of other candidates would be cheaper.

The drivers and draws are the decode study's (:mod:`economics.studies.retrofit_odds`, one definition): a factor per
accelerator whose candidate rates are estimated, over the estimator's P10-P90 (:func:`~retrofit_odds.rate_driver`;
the own, rent and existing candidates of one accelerator share it, as they share the hardware); a rate a
candidates file or a measurement gives has no range. In each draw the candidates' rates are multiplied by their
factor and the planner is solved twice, exactly as ``plan`` solves it: over the chosen plan's candidates only
(re-sized to the draw's rates, their pools and roles chosen again: the chosen plan's cost a day in that draw) and
over every candidate (the cheapest mix of that draw). Other candidates are cheaper in a draw when that optimum costs
less than the chosen plan's by more than :data:`CHEAPER_BY` of it. A solve takes about half a second, so the draws
are few (:data:`DEFAULT_SAMPLES`); with every range collapsed each draw is the plan itself, P10 = P50 = P90 = its
cost and no other mix is cheaper.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd

from economics.engine.batch import ScenarioError, resolve_scenario
from economics.schema.scenario import Scenario
from economics.studies.compare import accelerator_rows
from economics.studies.planner.candidates import Candidate
from economics.studies.planner.inputs import DEFAULT_PLAN_SAMPLES, MAX_PLAN_SAMPLES, PlanSettings
from economics.studies.planner.run import PlanResult, plan
from economics.studies.retrofit_odds import (
    DRIVER_COLUMNS,
    Driver,
    Floats,
    _percentiles,
    check_samples,
    draw,
    estimate_ratios,
    rate_driver,
    with_ranges,
)

DEFAULT_SAMPLES = DEFAULT_PLAN_SAMPLES
"""Draws a plan's odds take unless told (:data:`~economics.studies.planner.inputs.DEFAULT_PLAN_SAMPLES`, defined
with the plan's inputs, as is :data:`~economics.studies.planner.inputs.MAX_PLAN_SAMPLES`)."""
CHEAPER_BY = 1e-6
"""The share of the chosen mix's cost by which another mix must be cheaper to count (the solver's own tolerance)."""
MIX_COLUMNS = ("mix", "probability_cheapest", "cost_usd_per_day_p50")
"""Columns of the mixes table: each mix (its candidates and roles) that was the cheapest in some draw, the share
of draws it was, and its cost a day at P50 over those draws."""


def mix_of(result: PlanResult) -> str:
    """A plan's mix in words: each pool's candidate and role, in the plan's order ('b200 own: aggregated + ...')."""
    return " + ".join(f"{r['name']}: {r['role']}" for _, r in result.plan.iterrows() if r["systems"] > 0)


def plan_drivers(s: Scenario, candidates: list[Candidate]) -> list[Driver]:
    """A factor per catalog accelerator whose candidates' rates the estimator gives (see the module docstring)."""
    out: list[Driver] = []
    for acc in dict.fromkeys(c.accelerator for c in candidates if c.accelerator and
                             c.throughput.startswith("estimated")):
        try:
            resolved = resolve_scenario(accelerator_rows(s, [acc])[0])
        except ScenarioError:  # the planner left it out, or rates it by other means: no range to draw
            continue
        ratios = estimate_ratios(resolved, "output_tokens_per_s_per_accelerator")
        if ratios is not None:
            out.append(rate_driver(acc, *ratios))
    return out


def drawn_candidates(candidates: list[Candidate], found: list[Driver], row: Floats) -> list[Candidate]:
    """The candidates with their rates times the drawn factor of their accelerator (``row``: one draw)."""
    factor = {d.target: float(v) for d, v in zip(found, row, strict=True)}
    out = []
    for c in candidates:
        f = factor.get(f"throughput:{c.accelerator}", 1.0)
        out.append(c if f == 1.0 else replace(c, input_tokens_per_s_per_system=c.input_tokens_per_s_per_system * f,
                                              output_tokens_per_s_per_system=c.output_tokens_per_s_per_system * f))
    return out


@dataclass
class PlanOdds:
    """The odds of a plan: per draw the cost a day of the chosen plan's candidates (``chosen``; NaN where they cannot
    serve the demand) and the cheapest mix's cost and words (``best``, ``mixes``); the drivers as drawn.
    """

    chosen_candidates: str
    chosen: Floats
    best: Floats
    mixes: list[str]
    found: list[Driver]
    samples: int
    seed: int

    @cached_property
    def cheaper(self) -> np.ndarray:
        """Per draw: a mix with other candidates is cheaper than the chosen plan's candidates (or they cannot serve
        the demand).
        """
        chosen = np.where(np.isnan(self.chosen), np.inf, self.chosen)
        return np.asarray(self.best < chosen * (1.0 - CHEAPER_BY))

    def summary(self) -> dict[str, object]:
        """The chosen plan's candidates, their cost a day at P10 / P50 / P90 (over the draws they serve the demand
        in, that share) and how often other candidates are cheaper.
        """
        return {"chosen_candidates": self.chosen_candidates, **_percentiles("cost_usd_per_day", self.chosen, "linear"),
                "chosen_served_share": float(np.mean(np.isfinite(self.chosen))),
                "probability_other_candidates_cheaper": float(np.mean(self.cheaper)), "samples": self.samples,
                "seed": self.seed}

    @cached_property
    def table(self) -> pd.DataFrame:
        """Each mix cheapest in some draw, most often first, columns :data:`MIX_COLUMNS`."""
        mixes = pd.Series(self.mixes)
        rows = [{"mix": m, "probability_cheapest": float(np.mean(mixes == m)),
                 "cost_usd_per_day_p50": _percentiles("c", self.best[(mixes == m).to_numpy()], "linear")["c_p50"]}
                for m in dict.fromkeys(self.mixes) if m]
        out = pd.DataFrame(rows, columns=list(MIX_COLUMNS))
        return out.sort_values("probability_cheapest", ascending=False, kind="stable").reset_index(drop=True)

    @cached_property
    def drivers(self) -> pd.DataFrame:
        """The ranged inputs as drawn, columns :data:`~economics.studies.retrofit_odds.DRIVER_COLUMNS`."""
        return pd.DataFrame([{"driver": d.name, "low": d.low, "base": d.base, "high": d.high, "source": d.source,
                              "assumption": d.assumption} for d in self.found], columns=list(DRIVER_COLUMNS))

    def headline(self) -> str:
        """The odds in one sentence."""
        return (f"a mix of other candidates is cheaper than the chosen plan's ({self.chosen_candidates}) in "
                f"{100 * float(np.mean(self.cheaper)):.0f} % of {self.samples:,} draws (seed {self.seed})")


def plan_odds(s: Scenario, settings: PlanSettings, candidates: list[Candidate], chosen: PlanResult,
              samples: int = DEFAULT_SAMPLES, seed: int = 0,
              ranges: dict[str, tuple[float, float]] | None = None) -> PlanOdds:
    """The odds of the plan ``chosen`` (the plan of ``s`` over ``candidates``; see the module docstring).

    Parameters
    ----------
    s, settings, candidates : what the plan was made of (``candidates``: before its hosting variants)
    chosen : the plan
    samples, seed : how many draws (at most :data:`MAX_PLAN_SAMPLES`) and the seed that makes them
    ranges : ranges given by driver name, (low, high), in place of the defaults

    Returns
    -------
    PlanOdds : the chosen plan's cost a day over the draws, and how often other candidates are cheaper.
    """
    if check_samples(samples) > MAX_PLAN_SAMPLES:
        raise ValueError(f"samples: {samples:,} must be at most {MAX_PLAN_SAMPLES:,} for a plan (two solves a draw)")
    if not chosen.feasible:
        raise ValueError("plan: no feasible plan to draw the odds of (its diagnosis says why)")
    names = set(chosen.plan.loc[chosen.plan["systems"] > 0, "name"])
    found = with_ranges(plan_drivers(s, candidates), ranges)
    x = draw(found, samples, seed)
    own, best, mixes = np.full(samples, np.nan), np.full(samples, np.nan), []
    for i in range(samples):
        drawn = drawn_candidates(candidates, found, x[i])
        mine = plan(s, settings, [c for c in drawn if c.name in names], costed=False)
        every = plan(s, settings, drawn, costed=False)
        own[i] = float(mine.summary["cost_usd_per_day"]) if mine.feasible else np.nan
        best[i] = float(every.summary["cost_usd_per_day"]) if every.feasible else np.nan
        mixes.append(mix_of(every) if every.feasible else "")
    return PlanOdds(", ".join(sorted(names)), own, best, mixes, found, samples, seed)
