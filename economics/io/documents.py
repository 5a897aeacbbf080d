"""Text generated from the two schemas and the formula definitions: the CSV template, the docs' field and
output tables and the model page's section. One source of truth each: nothing here is typed twice.
"""

from __future__ import annotations

import json
from types import ModuleType

import pandas as pd

from economics.domain import capacity, carbon, cost, finance, fleet, rent, revenue, sessions, throughput
from economics.domain.formula import CONSTANTS, Formula
from economics.io.scenario_files import to_csv_text
from economics.schema.outputs import OUTPUTS
from economics.schema.presets import default_scenario
from economics.schema.scenario import FIELDS, Scenario
from economics.studies import retrofit_cash

MODEL_SECTIONS: tuple[tuple[str, ModuleType], ...] = (
    ("Agent sessions and KV residency (economics/domain/sessions.py; workload=sessions; the tier formulas are bound "
     "to each tier's columns)", sessions),
    ("Roofline throughput estimate (economics/domain/throughput.py; where nothing is measured)", throughput),
    ("Capacity, demand and serving (economics/domain/capacity.py)", capacity),
    ("Fleet, facility and energy (economics/domain/fleet.py)", fleet),
    ("Capital recovery (economics/domain/finance.py)", finance),
    ("Cost of a pool (economics/domain/cost.py; bound to each pool's columns)", cost),
    ("Rented capacity: reserved and spot tiers (economics/domain/rent.py; bound to each pool's columns)", rent),
    ("Emissions and the carbon price (economics/domain/carbon.py)", carbon),
    ("Unit costs, revenue and break-even (economics/domain/revenue.py)", revenue),
    ("The decode study's cash flows (economics/studies/retrofit_cash.py; year by year, for each option)",
     retrofit_cash),
)
"""The modules whose formulas the engine evaluates, in the order it runs them, then the decode study's (which
evaluates them on the engine's outputs). tests/test_docs.py checks that every module defining a formula is here."""


def template_text() -> str:
    """Comment lines with each field's unit, bounds and description, the header, and the default scenario."""
    lines = ["# Scenario CSV template: one scenario per row; empty cell = default (or catalog value).",
             "# field: [unit] bounds; description"]
    for spec in FIELDS.values():
        bits = [f"[{spec.unit}]" if spec.unit else "", spec.bounds_text()]
        if spec.choices:
            bits.append("one of " + "/".join(spec.choices))
        if spec.catalog_field:
            bits.append(f"empty = catalog {spec.catalog_field}")
        lines.append(f"# {spec.name}: {' '.join(b for b in bits if b)}; {spec.description}")
    default = default_scenario().model_dump()
    row = {k: ("" if v is None else v) for k, v in default.items()}
    return "\n".join(lines) + "\n" + to_csv_text(pd.DataFrame([row], columns=list(FIELDS)))


def fields_markdown() -> str:
    """The scenario fields and the outputs as Markdown tables (docs/fields.md is this text)."""
    lines = ["| field | unit | bounds | default | description |", "|---|---|---|---|---|"]
    for spec in FIELDS.values():
        if spec.catalog_field:
            default = f"catalog `{spec.catalog_field}`"
        elif spec.default is None:
            default = "empty"
        else:
            default = f"{spec.default}" + (" (defaults.csv)" if spec.default_source else "")
        bounds = spec.bounds_text() or ("/".join(spec.choices) if spec.choices else "")
        lines.append(f"| `{spec.name}` | {spec.unit} | {bounds} | {default} | {spec.description} |")
    lines += ["", "| output | unit | meaning |", "|---|---|---|"]
    lines += [f"| `{s.name}` | {s.unit} | {s.description} |" for s in OUTPUTS.values()]
    return "\n".join(lines) + "\n"


def formulas(module: ModuleType) -> list[Formula]:
    """The formulas a module defines, in definition order (bound copies included)."""
    return [v for v in vars(module).values() if isinstance(v, Formula)]


def model_markdown() -> str:
    """Every formula the engine evaluates, by stage: ``name [unit] = expression`` and its note. The same objects
    compute the outputs and print `explain`'s derivations, so this section cannot drift from the code.

    >>> "`utilization` [-] = `min(1, served_fraction x work_accelerator_s_per_day" in model_markdown()
    True
    """
    consts = ", ".join(f"{format(v, ',.0f')} {u}" for v, u in CONSTANTS.values())
    lines = [f"Constants: {consts}.", ""]
    seen: set[int] = set()  # a formula a module imports from an earlier one (carbon's draw by the hour) once
    for title, module in MODEL_SECTIONS:
        lines += [f"**{title}**", ""]
        for f in formulas(module):
            if id(f) in seen:
                continue
            seen.add(id(f))
            note = f" — {f.note}" if f.note else ""
            lines.append(f"- `{f.name}` [{f.unit}] = `{f.symbolic()}`{note}")
        lines.append("")
    return "\n".join(lines)


def schema_text() -> str:
    """The JSON schema of a scenario (:class:`economics.schema.scenario.Scenario`), indented, for the ``schema``
    command.
    """
    return json.dumps(Scenario.model_json_schema(), indent=2)
