"""Token economics for LLM inference: cost per token, capacity, revenue and margins from sourced catalogs.

Python API (the CLI ``python -m economics`` and the Streamlit app use the same functions)::

    import economics
    s = economics.default_scenario()
    out = economics.evaluate_scenario(s)          # one scenario -> dict of inputs and outputs
    print(economics.explain_text(s))              # every output with the numbers substituted
    table = economics.evaluate(df)                # a DataFrame of scenarios, column-wise
"""

from __future__ import annotations

from . import catalog
from .batch import (
    RESULT_COLUMNS,
    ScenarioError,
    evaluate,
    evaluate_scenario,
    evaluate_with_report,
    explain_row,
    explain_scenario,
    explain_text,
)
from .pipeline import split_warnings
from .presets import default_scenario, preset_scenarios
from .scenario import CATALOG_FIELDS, FIELDS, Scenario, with_changes
from .validation import InputError

__all__ = [
    "CATALOG_FIELDS",
    "FIELDS",
    "RESULT_COLUMNS",
    "InputError",
    "Scenario",
    "ScenarioError",
    "catalog",
    "default_scenario",
    "evaluate",
    "evaluate_scenario",
    "evaluate_with_report",
    "explain_row",
    "explain_scenario",
    "explain_text",
    "preset_scenarios",
    "split_warnings",
    "with_changes",
]
