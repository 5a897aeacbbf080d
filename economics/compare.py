"""The same demand across several accelerators, ranked: feasible first, then by cost per million tokens."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .batch import as_scenario, evaluate
from .scenario import Scenario, with_changes

COMPARE_COLUMNS = (
    "accelerator", "ownership", "feasible", "infeasible_reason", "throughput_source", "accelerators", "systems",
    "racks", "facility_power_kw", "utilization", "output_tokens_per_s_per_accelerator", "cost_usd_per_m_tokens",
    "cost_usd_per_day", "gross_margin", "error",
)


def compare_accelerators(scenario: Scenario | dict[str, Any], accelerators: list[str],
                         changes_by_accelerator: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Evaluate ``scenario`` once per accelerator (its own catalog figures; measured throughput left empty so it is
    interpolated or estimated, unless ``changes_by_accelerator`` gives per-accelerator fields such as a measured
    throughput or a rent), and rank: valid and feasible first, then by cost per M tokens, ascending.

    Returns one row per accelerator with :data:`COMPARE_COLUMNS` and ``rank`` (1 = cheapest feasible).
    """
    base = as_scenario(scenario)
    extra = changes_by_accelerator or {}
    rows = [with_changes(base, accelerator=acc, output_tokens_per_s_per_accelerator=None,
                         input_tokens_per_s_per_accelerator=None, accelerators_per_replica=None,
                         **extra.get(acc, {})) for acc in accelerators]
    out = evaluate(pd.DataFrame(rows))
    table = out[list(COMPARE_COLUMNS)].copy()
    ok = table["feasible"].fillna(False).astype(bool) & out["valid"]
    table["_order"] = (~ok).astype(int)
    table = table.sort_values(["_order", "cost_usd_per_m_tokens"], na_position="last", kind="stable")
    table["rank"] = range(1, len(table) + 1)
    return table.drop(columns="_order").reset_index(drop=True)
