"""Two versions of a stored scenario side by side: the fields that differ and the KPIs each evaluates to, with the
difference (b - a) and the change relative to a. The KPIs are the Cost page's (:data:`KPIS`), computed by the
engine as every command computes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from economics.engine.batch import ScenarioError, evaluate_scenario
from economics.report.kpis import COST_ROWS, FLEET_ROWS
from economics.schema.outputs import label
from economics.store.errors import InvalidStored
from economics.store.records import VersionInfo, changes

KPIS: tuple[str, ...] = tuple(dict.fromkeys(name for rows in (*COST_ROWS, *FLEET_ROWS) for name in rows))
"""The outputs compared: the Cost and Fleet pages' KPIs, in their order."""


@dataclass(frozen=True)
class Comparison:
    """Versions ``a`` and ``b`` of one scenario: the fields that differ and each KPI's values and difference."""

    a: VersionInfo
    b: VersionInfo
    fields: list[dict[str, Any]]
    kpis: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        """The comparison as JSON (what ``store show --compare`` and the HTTP API answer)."""
        return {"a": self.a.as_json(), "b": self.b.as_json(), "fields": self.fields, "kpis": self.kpis}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def kpi_rows(result_a: dict[str, Any], result_b: dict[str, Any]) -> list[dict[str, Any]]:
    """Each KPI of two results: its label, both values, b - a, and (b - a) / |a| where a is not 0 (None where an
    output is empty).

    >>> kpi_rows({"cost_usd_per_m_tokens": 2.0}, {"cost_usd_per_m_tokens": 1.5})[0]["relative_change"]
    -0.25
    """
    out = []
    for name in KPIS:
        a, b = _number(result_a.get(name)), _number(result_b.get(name))
        diff = None if a is None or b is None else b - a
        relative = None if diff is None or a == 0 or a is None else diff / abs(a)
        out.append({"output": name, "label": label(name), "a": a, "b": b, "difference": diff,
                    "relative_change": relative})
    return out


def compare(a: VersionInfo, b: VersionInfo) -> Comparison:
    """Versions ``a`` and ``b`` (read with their fields) compared: fields that differ, KPIs evaluated."""
    results = []
    for v in (a, b):
        try:
            results.append(evaluate_scenario(v.scenario()))
        except ScenarioError as exc:
            raise InvalidStored(f"scenario '{v.name}' version {v.version}: {exc}") from None
    return Comparison(a, b, changes(a.fields or {}, b.fields or {}), kpi_rows(results[0], results[1]))
