"""The OpenAPI document's schemas, generated from the package's own: a scenario from
:class:`economics.scenario.Scenario` (fields, units, bounds, descriptions), a result row from the output schema
(:data:`economics.outputs.OUTPUTS`), and the error shape (:mod:`economics.api.errors`). The routes point at them by
name.
"""

from __future__ import annotations

from typing import Any

from economics.api.errors import Code
from economics.outputs import OUTPUTS
from economics.scenario import FIELDS, Scenario
from economics.version import __version__

REF = "#/components/schemas/{model}"


def ref(name: str) -> dict[str, str]:
    """A reference to the component schema ``name``."""
    return {"$ref": REF.format(model=name)}


def _scenario() -> dict[str, dict[str, Any]]:
    schema = Scenario.model_json_schema(ref_template=REF)
    defs = schema.pop("$defs", {})
    return {**defs, "Scenario": schema}


def _result_row() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, spec in FIELDS.items():
        props[name] = {"description": f"input, echoed: {spec.label}", "nullable": True}
    for name, out in OUTPUTS.items():
        unit = f" [{out.unit}]" if out.unit and out.unit not in ("-", "text") else ""
        props[name] = {"type": "number" if out.numeric else "string", "nullable": True,
                       "description": f"{out.label}{unit}: {out.description}"}
    props["valid"] = {"type": "boolean", "description": "the row's inputs are valid (only valid rows are returned)"}
    return {"type": "object", "title": "ResultRow", "properties": props,
            "description": "One evaluated scenario: its inputs as the engine used them and every output (null where "
                           "an optional output does not apply). The columns are those of `evaluate`'s CSV."}


def _problem() -> dict[str, Any]:
    return {"type": "object", "title": "Problem", "properties": {
        "row": {"type": "integer", "nullable": True, "description": "1-based row of the table (null: not a row's)"},
        "name": {"type": "string", "description": "the row's name, as given (escaped, shortened)"},
        "field": {"type": "string", "nullable": True, "description": "the field or parameter refused"},
        "value": {"nullable": True, "description": "the value as given"},
        "message": {"type": "string", "description": "why, with the bounds or the choices"}}}


def _error() -> dict[str, Any]:
    codes = [c.name.lower() for c in Code]
    table = "; ".join(f"`{c.name.lower()}` ({c.status}): {c.meaning}" for c in Code)
    return {"type": "object", "title": "Error", "required": ["version", "error"], "properties": {
        "version": {"type": "string"},
        "error": {"type": "object", "required": ["status", "code", "message", "problems"], "properties": {
            "status": {"type": "integer"}, "code": {"type": "string", "enum": codes, "description": table},
            "message": {"type": "string"}, "problems": {"type": "array", "items": ref("Problem")}}},
        "results": {"type": "array", "items": ref("ResultRow"),
                    "description": "evaluate only: the valid rows, evaluated, beside the invalid rows' problems"}}}


def _table() -> dict[str, Any]:
    return {"title": "ScenarioTable", "description": "Scenarios as JSON: an array of scenario objects, one object, "
            "or {\"scenarios\": [...]} (plan also takes \"candidates\": [...] here). Values may be numbers or text "
            "(\"0.5\" and 0.5 are one value); a field left out takes its default.",
            "oneOf": [{"type": "array", "items": ref("Scenario")}, ref("Scenario"),
                      {"type": "object", "properties": {"scenarios": {"type": "array", "items": ref("Scenario")}}}]}


def components() -> dict[str, Any]:
    """Every component schema the routes name."""
    return {**_scenario(), "ScenarioTable": _table(), "ResultRow": _result_row(), "Problem": _problem(),
            "Error": _error(), "Evaluation": {"type": "array", "items": ref("ResultRow")}}


def table_body(extra_fields: tuple[str, ...] = ("curves",)) -> dict[str, Any]:
    """The request body of an endpoint that reads a table of scenarios (``openapi_extra``)."""
    form = {"scenarios": {"type": "string", "format": "binary", "description": "the table (CSV, Parquet or JSON)"}}
    notes = {"curves": "your measured curves (import-benchmark's CSV) for every row that names none",
             "candidates": "plan: hardware options with their own rates and prices (CSV, Parquet or JSON)"}
    for name in extra_fields:
        form[name] = {"type": "string", "format": "binary", "description": notes[name]}
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": ref("ScenarioTable")},
        "text/csv": {"schema": {"type": "string"}, "example": "name,accelerator,accelerator_count\na,h100-sxm,8\n"},
        "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
        "multipart/form-data": {"schema": {"type": "object", "properties": form}}}}}


def files_body() -> dict[str, Any]:
    """import-benchmark's request body: benchmark result files as form fields ``files``."""
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"},
                                                   "description": "benchmark result files"}}}}}}}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code.status: {"description": code.meaning, "content": {"application/json": {"schema": ref("Error")}}}
    for code in Code}
"""Every failure's status and the error shape, for each route's ``responses``."""


def document(base: dict[str, Any]) -> dict[str, Any]:
    """FastAPI's generated document with the package's schemas added under ``components``."""
    base.setdefault("components", {}).setdefault("schemas", {}).update(components())
    base["info"]["version"] = __version__
    return base
