"""The comparison's odds: how often each accelerator is the cheapest per million tokens at the scenario's speed, and
its cost at P10 / P50 / P90.

The drivers and their draws are the decode study's (:mod:`economics.studies.retrofit_odds`, one definition): a
factor per accelerator whose rates are estimated, over the estimator's P10-P90 (:func:`~retrofit_odds.rate_driver`),
a catalog price marked estimate over its sourced range (:func:`~retrofit_odds.price_driver`), and the electricity and
the cost of capital at the Uncertainty page's spreads (:func:`~retrofit_odds.shared_drivers`, assumptions). Each
driver is drawn once, seeded (:func:`~retrofit_odds.draw`), and every accelerator sees the same draws of what they
share (common random numbers): "the B200 is the cheapest in 71 % of draws" compares like with like. Each
accelerator's row (as :func:`economics.studies.compare.compare_accelerators` builds it) goes through the engine
once over all its draws; with every range collapsed the costs are the comparison's, and the cheapest has
``probability_cheapest`` 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from economics.engine.batch import ScenarioError, as_scenario, resolve_scenario
from economics.schema.scenario import Scenario
from economics.studies.compare import accelerator_rows
from economics.studies.retrofit_odds import (
    DRIVER_COLUMNS,
    Driver,
    Floats,
    OddsDistribution,
    _computed,
    _pass,
    _percentiles,
    check_samples,
    draw,
    estimate_ratios,
    price_driver,
    rate_driver,
    shared_drivers,
    with_ranges,
)

RATE_FIELDS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator")
"""The rates a comparison estimates per accelerator (its throughput factor moves both)."""
COMPARE_ODDS_COLUMNS = ("accelerator", "probability_cheapest", "cost_usd_per_m_tokens_p10",
                        "cost_usd_per_m_tokens_p50", "cost_usd_per_m_tokens_p90", "computed_share",
                        "cost_usd_per_m_tokens", "reason")
"""Columns of the comparison's odds, in order: per accelerator the share of draws in which it is the cheapest per
million tokens among those computed in that draw, its cost at P10 / P50 / P90 over the draws it could be computed in
(a fleet that fits, every output finite), that share, the point cost (the comparison's, where its fleet fits), and
why it is in no draw (empty otherwise)."""
NEVER = "in no draw does its fleet fit with every output finite (the comparison's infeasible_reason says why)"
"""The reason of an accelerator whose row resolves but is computed in no draw."""


def compare_drivers(s: Scenario, resolved: list[dict[str, np.ndarray]], given: set[str]) -> list[Driver]:
    """Every ranged input of the comparison (see the module docstring), in the order they are drawn: per
    accelerator its throughput factor and its price (not one whose price the row gives: in ``given``), then the
    shared electricity and cost of capital.
    """
    out: list[Driver] = []
    for r in resolved:
        acc = str(r["accelerator"][0])
        ratios = next((got for f in RATE_FIELDS if (got := estimate_ratios(r, f)) is not None), None)
        if ratios is not None:
            out.append(rate_driver(acc, *ratios))
        price = None if acc in given else price_driver(
            acc, float(r["accelerator_price_usd"][0]))
        if price is not None:
            out.append(price)
    return out + shared_drivers(s, resolved[0], bool(s.electricity_tariff)) if resolved else out


def _varying(r: dict[str, np.ndarray], found: list[Driver], x: Floats) -> dict[str, Floats]:
    """The columns the draws move in one accelerator's row: its estimated rates times its factor, its price, the
    electricity and the cost of capital.
    """
    acc = str(r["accelerator"][0])
    by_target = {d.target: x[:, k] for k, d in enumerate(found)}
    out: dict[str, Floats] = {}
    factor = by_target.get(f"throughput:{acc}")
    for f in RATE_FIELDS:
        if factor is not None and estimate_ratios(r, f) is not None and np.isfinite(r[f][0]):
            out[f] = factor * float(r[f][0])
    for f, target in (("accelerator_price_usd", f"price:{acc}"), ("electricity_usd_per_kwh", "electricity_usd_per_kwh"),
                      ("cost_of_capital", "cost_of_capital")):
        if target in by_target:
            out[f] = by_target[target]
    return out


@dataclass
class CompareOdds:
    """The odds of a comparison: ``cost`` (draws x accelerators, cost per M tokens, NaN where not computed), the
    point costs, the drivers as drawn; :attr:`table` (columns :data:`COMPARE_ODDS_COLUMNS`) and :attr:`drivers`.
    """

    names: list[str]
    cost: Floats
    point: Floats
    found: list[Driver]
    samples: int
    seed: int
    reasons: list[str]

    @cached_property
    def table(self) -> pd.DataFrame:
        """One row per accelerator, most often cheapest first (then by the P50 cost)."""
        best = np.argmin(np.where(np.isnan(self.cost), np.inf, self.cost), axis=1)
        some = np.isfinite(self.cost).any(axis=1)
        rows = [{"accelerator": name, "probability_cheapest": float(np.mean(some & (best == k))),
                 **_percentiles("cost_usd_per_m_tokens", self.cost[:, k], "linear"),
                 "computed_share": float(np.mean(np.isfinite(self.cost[:, k]))),
                 "cost_usd_per_m_tokens": float(self.point[k]) if np.isfinite(self.point[k]) else None,
                 "reason": self.reasons[k] or ("" if np.isfinite(self.cost[:, k]).any() else NEVER)}
                for k, name in enumerate(self.names)]
        out = pd.DataFrame(rows, columns=list(COMPARE_ODDS_COLUMNS))
        return out.sort_values(["probability_cheapest", "cost_usd_per_m_tokens_p50"], ascending=[False, True],
                               na_position="last", kind="stable").reset_index(drop=True)

    @cached_property
    def drivers(self) -> pd.DataFrame:
        """The ranged inputs as drawn, columns :data:`~economics.studies.retrofit_odds.DRIVER_COLUMNS`."""
        return pd.DataFrame([{"driver": d.name, "low": d.low, "base": d.base, "high": d.high, "source": d.source,
                              "assumption": d.assumption} for d in self.found], columns=list(DRIVER_COLUMNS))

    def headline(self) -> str:
        """The odds in one sentence: the accelerator most often cheapest, and in what share of the draws."""
        top = self.table.iloc[0]
        return (f"{top['accelerator']} is the cheapest per M tokens in {100 * top['probability_cheapest']:.0f} % of "
                f"{self.samples:,} draws (seed {self.seed})")

    def assumptions(self) -> list[str]:
        """Each range no source gives, in words."""
        return [f"{d.name}: {d.low:,.4g} to {d.high:,.4g} around {d.base:,.4g} ({d.source})" for d in self.found
                if d.assumption and not d.collapsed]


def compare_odds(scenario: Scenario | dict[str, Any], accelerators: list[str], samples: int = 10_000, seed: int = 0,
                 distribution: OddsDistribution = OddsDistribution.TRIANGULAR,
                 ranges: dict[str, tuple[float, float]] | None = None,
                 changes_by_accelerator: dict[str, dict[str, Any]] | None = None) -> CompareOdds:
    """The comparison of ``scenario`` across ``accelerators`` over ``samples`` seeded draws of every ranged input
    (see the module docstring).

    Parameters
    ----------
    scenario : the row compared (as :func:`economics.studies.compare.compare_accelerators` takes it)
    accelerators : catalog ids
    samples, seed : how many draws, and the seed that makes them (the same seed, the same draws)
    distribution : how a range is drawn (:func:`economics.studies.retrofit_odds.draw`)
    ranges : ranges given by driver name, (low, high), in place of the defaults
    changes_by_accelerator : per-accelerator fields, as the comparison takes them (a rent for one without a price)

    Returns
    -------
    CompareOdds : per accelerator how often it is the cheapest and its cost per M tokens at P10 / P50 / P90.
    """
    s = as_scenario(scenario)
    check_samples(samples)
    rows = accelerator_rows(s, accelerators, changes_by_accelerator)
    resolved, reasons = _resolved(rows)
    given = {str(row["accelerator"]) for row in rows if row.get("accelerator_price_usd") is not None}
    found = with_ranges(compare_drivers(s, [r for r in resolved if r is not None], given), ranges)
    x = np.vstack([draw(found, samples, seed, distribution), [[d.base for d in found]]])
    cost = np.full((len(x), len(resolved)), np.nan)
    for k, r in enumerate(resolved):
        if r is None:
            continue
        out = _pass(r, _varying(r, found, x), len(x))
        ok = _computed(out, len(x), 1)
        cost[:, k] = np.where(ok, np.asarray(out["cost_usd_per_m_tokens"], dtype=float), np.nan)
    return CompareOdds(list(accelerators), cost[:samples], cost[samples], found, samples, seed, reasons)


def _resolved(rows: list[dict[str, Any]]) -> tuple[list[dict[str, np.ndarray] | None], list[str]]:
    """Each row resolved (its catalog figures and estimates), or None with the reason it cannot be (the comparison
    ranks it last with that reason; here it is in no draw).
    """
    resolved: list[dict[str, np.ndarray] | None] = []
    reasons = []
    for row in rows:
        try:
            resolved.append(resolve_scenario(row))
            reasons.append("")
        except ScenarioError as exc:
            resolved.append(None)
            reasons.append("; ".join(p.message for p in exc.problems))
    return resolved, reasons
