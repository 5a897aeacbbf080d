"""What a board report says, gathered from the engine and the studies: the assumptions with their sources, the
inputs that move the cost most, the derivation and the link that reproduces it.

Every figure is the engine's (:func:`economics.evaluate_scenario`, :func:`economics.studies.uncertainty.tornado`,
:func:`economics.explain_scenario`); this module only picks and words them, as plain JSON-ready data for
:mod:`economics.report.document`.
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping
from typing import Any

from economics import catalog
from economics.catalog.sources import first_url
from economics.engine.batch import as_scenario, explain_scenario
from economics.engine.provenance import input_origins, throughput_description
from economics.report import format as fmt
from economics.report.format import Kpi
from economics.schema.presets import default_scenario
from economics.schema.scenario import FIELDS
from economics.schema.values import shown
from economics.studies.links import BASELINE_PREFIX, encode_query, query_string, setting_text
from economics.studies.planner import PlanSettings
from economics.studies.uncertainty import default_ranges, tornado

TORNADO_INPUTS = 5
"""The most sensitive inputs the report shows (the tornado's largest swings)."""
TORNADO_OUTPUT = "cost_usd_per_m_tokens"
DEFAULT_APP_URL = "http://localhost:8501"
"""Where ``make run`` serves the app: the link's default host when the report is made from the command line."""


def kpi_rows(rows: list[list[Kpi]]) -> list[list[dict[str, str]]]:
    """KPIs as the document prints them: title, value, and the change against the baseline ('' without one)."""
    return [[{"title": k.title, "value": k.value, "change": k.change or ""} for k in row] for row in rows]


def assumptions(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The scenario's sourced inputs (a catalog figure or a sourced default, :func:`input_origins`), one row per
    source: the inputs it gives (label, value with its unit) and the source's text, address, date read and
    confidence, in the order of the scenario's fields. Inputs the user gave are their own assumption: the
    derivation lists them.
    """
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in input_origins(dict(scenario)):
        if not r["source"]:
            continue
        where = f"catalog {r['accelerator']}" if r["origin"] == "catalog" else "default"
        key = (where, r["source"], r["source_date"], r["confidence"])
        row = rows.setdefault(key, {"origin": where, "source": r["source"], "url": first_url(r["source"]) or "",
                                    "date": r["source_date"], "confidence": r["confidence"], "inputs": []})
        row["inputs"].append({"field": r["field"], "input": FIELDS[r["field"]].label,
                              "value": f"{r['value']} {r['unit']}".strip()})
    return list(rows.values())


def sensitivity(scenario: Mapping[str, Any], result: dict[str, Any]) -> Any:
    """The tornado of cost per M tokens over the Uncertainty page's default ranges, its
    :data:`TORNADO_INPUTS` largest swings (a DataFrame; empty when no input can be ranged).
    """
    ranges = default_ranges(result)
    table = tornado(dict(scenario), ranges, TORNADO_OUTPUT, result=result) if ranges else None
    if table is None:
        return None
    return table.head(TORNADO_INPUTS)


def tornado_rows(table: Any) -> list[dict[str, str]]:
    """The tornado as the document tabulates it: each input's label, its two ends and the cost at each."""
    if table is None:
        return []
    return [{"input": FIELDS[r["field"]].label, "low": fmt.number(r["low"]), "high": fmt.number(r["high"]),
             "at_low": fmt.usd_rate(r["output_at_low"]), "at_high": fmt.usd_rate(r["output_at_high"])}
            for r in table.to_dict(orient="records")]


def scenario_notes(result: Mapping[str, Any]) -> list[str]:
    """The lines under the KPIs: where the throughput comes from, feasibility and the engine's warnings."""
    notes = [throughput_description(result)]
    if not result.get("feasible", True):
        notes.append(f"Not feasible: {result.get('infeasible_reason')}")
    notes += [w for w in str(result.get("warnings") or "").split("; ") if w]
    return notes


def derivation(scenario: Mapping[str, Any]) -> str:
    """Every output of the scenario with its numbers substituted (what ``python -m economics explain`` prints after
    the inputs' origins, which the report tabulates as its assumptions).
    """
    return explain_scenario(as_scenario(dict(scenario))).text()


def checked_app_url(text: str) -> str:
    """The app's address as given for the report's link, when it is an ``http://`` or ``https://`` address with a
    host; :class:`ValueError` saying why otherwise (a ``javascript:`` or ``file:`` link printed in a board report is
    one click from running or opening what its author chose). The caller names the field (``--app-url``,
    ``app_url``).

    >>> checked_app_url("https://tco.example.com/app")
    'https://tco.example.com/app'
    """
    parts = urllib.parse.urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(
            c.isspace() or not c.isprintable() for c in text):
        raise ValueError(f"must be an http:// or https:// address with a host, got '{shown(text, 100)}'")
    return text


def app_link(scenario: Mapping[str, Any], baseline: Mapping[str, Any] | None = None, page: str = "",
             app_url: str = DEFAULT_APP_URL, settings: Mapping[str, str] | None = None) -> str:
    """The app link that reproduces the report: the scenario's differences from the default scenario
    (:func:`economics.studies.links.encode_query`), the baseline's under ``baseline.``, the page and any page
    settings (already as link text, under ``settings.``). ``app_url`` is checked (:func:`checked_app_url`).
    """
    checked_app_url(app_url)
    base = default_scenario()
    query = encode_query(dict(scenario), base)
    query.update({f"settings.{k}": v for k, v in (settings or {}).items()})
    if baseline is not None:
        query.update({BASELINE_PREFIX + k: v for k, v in encode_query(dict(baseline), base).items()})
    return f"{app_url.rstrip('/')}/{page}?{query_string(query)}"



def plan_link_settings(settings: Any, accelerators: list[str] | None) -> dict[str, str]:
    """A plan's settings as the Plan page's link settings (``plan_<name>``, :func:`setting_text`): each planner
    setting that differs from the planner's default, the day's profile always (the page starts on another), and the
    accelerators considered (every catalog one when none is named, as the planner does).
    """
    defaults = PlanSettings()
    out = {f"plan_{f.name}": setting_text(getattr(settings, f.name)) for f in dataclasses.fields(settings)
           if getattr(settings, f.name) != getattr(defaults, f.name) or f.name == "demand_profile"}
    out["plan_accelerators"] = setting_text(tuple(accelerators or catalog.accelerator_ids()))
    return out
