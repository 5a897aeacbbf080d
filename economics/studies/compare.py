"""The same demand across several accelerators, ranked: feasible first, then by cost per million tokens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from economics.engine.batch import as_scenario, evaluate, evaluate_variants, resolve_scenario
from economics.schema.outputs import cost_parts, names
from economics.schema.scenario import FIELDS, Ownership, Scenario, with_changes
from economics.schema.values import FieldKind

COMPARE_COLUMNS = (
    "accelerator", "ownership", "feasible", "infeasible_reason", "throughput_source", "serving_stack_used",
    "accelerators", "systems",
    "racks", "facility_power_kw", "utilization", "output_tokens_per_s_per_accelerator", "cost_usd_per_m_tokens",
    "cost_usd_per_m_tokens_low", "cost_usd_per_m_tokens_high", "throughput_basis", "cost_usd_per_day",
    "gross_margin", "error",
)


def _column(kind: FieldKind, values: Sequence[Any]) -> np.ndarray:
    if kind.numeric:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    if kind is FieldKind.BOOL:
        return np.array([bool(v) for v in values], dtype=bool)
    return np.array(["" if v is None else str(v) for v in values], dtype=object)


def scenario_frame(rows: Sequence[Mapping[str, Any]], varying: Mapping[str, np.ndarray] | None = None,
                   repeat: int | None = None) -> pd.DataFrame:
    """Scenarios (dicts of every field, e.g. ``Scenario.model_dump()``) as a table with typed columns: numbers as
    float64 with NaN for empty, flags as bool, text as str with '' for empty, in field order (the one-row table
    :func:`economics.evaluate_scenario` builds, for many rows). :func:`economics.evaluate` reads it to the same values
    as ``pd.DataFrame(rows)`` but validates it on its numeric paths instead of parsing object columns as text.

    With ``repeat`` = n, the single row of ``rows`` is repeated n times; ``varying`` gives whole columns (length n)
    that replace those fields (Monte Carlo draws).

    >>> f = scenario_frame([{"name": "a", "pue": None}], repeat=2, varying={"pue": np.array([1.2, 1.3])})
    >>> f.columns.tolist(), f["pue"].tolist(), f["name"].tolist()
    (['name', 'pue'], [1.2, 1.3], ['a', 'a'])
    """
    unknown = [str(k) for k in rows[0] if k not in FIELDS]
    if unknown:
        raise ValueError(f"{unknown[0]}: not a scenario field")
    names_in = [f for f in FIELDS if f in rows[0]]
    source = rows[:1] if repeat is not None else rows
    frame = pd.DataFrame({name: _column(FIELDS[name].kind, [r[name] for r in source]) for name in names_in},
                         columns=names_in)
    if repeat is not None:  # the one row repeated: a take of typed columns, no text converted again
        frame = frame.take(np.zeros(repeat, dtype=np.intp)).reset_index(drop=True)
    for name, given in (varying or {}).items():
        kind = FIELDS[name].kind
        frame[name] = np.asarray(given, dtype=float) if kind.numeric else _column(kind, list(given))
    return frame


@cache
def _schema_defaults() -> dict[str, Any]:
    return Scenario.model_validate({}).model_dump()


def given_fields(row: Mapping[str, Any], keep: Iterable[str] = ()) -> dict[str, Any]:
    """The fields of a scenario (all of them, as ``model_dump`` gives) that differ from the schema's defaults, plus
    ``keep``: a table without the other columns evaluates to the same outputs (an absent column takes its default,
    as the same value given does) and validates fewer columns. The result table then repeats only these inputs.

    >>> sorted(given_fields({**Scenario().model_dump(), "pue": 1.3}, keep=["name"]))
    ['name', 'pue']
    """
    defaults, kept = _schema_defaults(), set(keep)
    return {k: v for k, v in row.items() if k in kept or k not in defaults or v != defaults[k]}


SITE_WORDS = {"fits": "fits the site", "does not fit": "does not fit the site", "off site": "off site (rented)",
              "not feasible": "not feasible"}
"""What a comparison says of each fleet and the site: an owned fleet fits it or not; a rented one is off site, where
the site's limits (power, racks, cooling) do not apply."""


def site_words(ownership: np.ndarray, feasible: np.ndarray) -> np.ndarray:
    """Per fleet, :data:`SITE_WORDS`: ``off site (rented)`` for a feasible rented fleet, never ``fits``.

    >>> [str(x) for x in site_words(np.array(["own", "own", "rent", "rent"]), np.array([True, False, True, False]))]
    ['fits the site', 'does not fit the site', 'off site (rented)', 'not feasible']
    """
    rent = np.asarray(ownership) == Ownership.RENT
    ok = np.asarray(feasible, dtype=bool)
    return np.where(rent, np.where(ok, SITE_WORDS["off site"], SITE_WORDS["not feasible"]),
                    np.where(ok, SITE_WORDS["fits"], SITE_WORDS["does not fit"])).astype(object)


def accelerator_rows(scenario: Scenario | dict[str, Any], accelerators: list[str],
                     changes_by_accelerator: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The scenario on each accelerator, as the comparison evaluates it: its own catalog figures, its throughput
    left empty (interpolated or estimated) unless ``changes_by_accelerator`` gives per-accelerator fields.
    """
    base = as_scenario(scenario)
    extra = changes_by_accelerator or {}
    return [with_changes(base, accelerator=acc, output_tokens_per_s_per_accelerator=None,
                         input_tokens_per_s_per_accelerator=None, accelerators_per_replica=None,
                         **extra.get(acc, {})) for acc in accelerators]


def compare_accelerators(scenario: Scenario | dict[str, Any], accelerators: list[str],
                         changes_by_accelerator: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Evaluate ``scenario`` once per accelerator (its own catalog figures; measured throughput left empty so it is
    interpolated or estimated, unless ``changes_by_accelerator`` gives per-accelerator fields such as a measured
    throughput or a rent), and rank: valid and feasible first, then by cost per M tokens, ascending.

    Returns one row per accelerator with :data:`COMPARE_COLUMNS` and ``rank`` (1 = cheapest feasible).
    """
    out = evaluate(scenario_frame(accelerator_rows(scenario, accelerators, changes_by_accelerator)))
    table = out[list(COMPARE_COLUMNS)].copy()
    ok = table["feasible"].fillna(False).astype(bool) & out["valid"]
    table.insert(3, "site", site_words(table["ownership"].to_numpy(), ok.to_numpy()))
    table["_order"] = (~ok).astype(int)
    table = table.sort_values(["_order", "cost_usd_per_m_tokens"], na_position="last", kind="stable")
    table["rank"] = range(1, len(table) + 1)
    return table.drop(columns="_order").reset_index(drop=True)


def cost_vs_utilization(scenario: Scenario | dict[str, Any], points: int = 10,
                        result: dict[str, Any] | None = None,
                        resolved: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Cost per M tokens of the scenario's fleet as its average utilization goes from 1/points to 1: the demand is
    set to that share of the fleet's capacity (same request shape), everything else unchanged.

    The fleet as evaluated (sized or given) stays fixed: it is the fleet that is more or less busy. Returns columns
    ``utilization``, ``cost_usd_per_m_tokens``, ``gross_margin``. The variants reuse the resolved scenario
    (:func:`economics.engine.batch.evaluate_variants`; pass ``resolved``,
    :func:`economics.engine.batch.resolve_scenario` of the
    same scenario, when the caller has it).
    """
    base = resolve_scenario(scenario) if resolved is None else resolved
    if result is None:
        result = {k: float(v[0]) for k, v in evaluate_variants(base).items() if np.ndim(v)}
    capacity = float(result["capacity_output_tokens_per_day"])
    shares = [(i + 1) / points for i in range(points)]
    n = float(result["accelerators"])
    out = evaluate_variants(base, accelerator_count=[n] * points, demand_input_tokens_per_day=[None] * points,
                            demand_requests_per_s=[None] * points,
                            demand_output_tokens_per_day=[capacity * u for u in shares])
    return pd.DataFrame({"utilization": out["utilization"], "cost_usd_per_m_tokens": out["cost_usd_per_m_tokens"],
                         "gross_margin": pd.array(out["gross_margin"], dtype="Float64")})


def margins_at_prices(scenario: Scenario | dict[str, Any], prices: pd.DataFrame,
                      resolved: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """The scenario evaluated at each row's input/output list price (e.g. data/api_prices.csv): adds
    ``revenue_usd_per_day``, ``gross_margin`` and ``cost_usd_per_m_tokens`` columns to ``prices`` (``resolved``:
    the scenario already resolved, as for :func:`cost_vs_utilization`).
    """
    k = len(prices)
    out = evaluate_variants(resolve_scenario(scenario) if resolved is None else resolved,
                            price_usd_per_m_input_tokens=prices["price_usd_per_m_input_tokens"].astype(float).tolist(),
                            price_usd_per_m_output_tokens=prices["price_usd_per_m_output_tokens"].astype(float).tolist(),
                            price_usd_per_m_cached_input_tokens=[None] * k)
    return prices.reset_index(drop=True).assign(
        revenue_usd_per_day=pd.array(out["revenue_usd_per_day"], dtype="Float64"),
        gross_margin=pd.array(out["gross_margin"], dtype="Float64"),
        cost_usd_per_m_tokens=out["cost_usd_per_m_tokens"])


COST_PARTS = cost_parts()
"""Output -> label of each part of the hourly cost (from the output schema, :mod:`economics.schema.outputs`)."""


def breakdown(result: dict[str, Any]) -> pd.DataFrame:
    """The hourly cost of an evaluated scenario by part (capital, energy, facility, operations, rent, retrofit),
    with each part's share; parts that are zero are left out.
    """
    rows = [(label, float(result[col] or 0.0)) for col, label in COST_PARTS.items()]
    table = pd.DataFrame(rows, columns=["part", "usd_per_hour"])
    table = table[table["usd_per_hour"] > 0]
    return table.assign(share=table["usd_per_hour"] / float(result["cost_usd_per_hour"]))


DIFFERENCE_OUTPUTS = names("difference")
"""Outputs listed against a baseline (flagged ``difference`` in the output schema)."""


def difference_table(baseline: dict[str, Any], current: dict[str, Any],
                     outputs: tuple[str, ...] = DIFFERENCE_OUTPUTS) -> pd.DataFrame:
    """Each output with the baseline, the current scenario, their difference and the relative change (empty where
    either side has no value or the baseline is 0).
    """
    rows = []
    for name in outputs:
        b, c = baseline.get(name), current.get(name)
        if b is None or c is None:
            rows.append({"output": name, "baseline": b, "current": c, "difference": None, "relative": None})
            continue
        rows.append({"output": name, "baseline": b, "current": c, "difference": c - b,
                     "relative": (c - b) / b if b else None})
    return pd.DataFrame(rows)
