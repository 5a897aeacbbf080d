"""The MCP tools and their input schemas, generated from the field specs (:data:`economics.schema.scenario.FIELDS`, the
planner's :data:`~economics.studies.planner.inputs.PLAN_FIELDS`, the candidates' columns) and the catalogs: each
field's type, description, unit, default and bounds as the scenario schema states them, never a hand copy.

The schemas tell a client what to send; the values are checked where every table's are, by the scenario reader
in the worker (a bad value is refused naming its field, row and value), so the bounds here and the checks there
are one definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from economics.api.settings import Settings
from economics.api.tasks import catalog_names
from economics.catalog import accelerator_ids
from economics.schema.scenario import FIELDS, FieldSpec
from economics.schema.values import FieldKind
from economics.store import records
from economics.store.limits import NAME_CHARS, PROJECT_CHARS, WHO_CHARS
from economics.studies.candidate_fields import MEASURED_AT, PER_CANDIDATE
from economics.studies.planner.candidates import CANDIDATE_COLUMNS, CANDIDATE_TEXT_COLUMNS, MAX_CANDIDATES
from economics.studies.planner.inputs import PLAN_FIELDS, FrontierChoice

JSON_TYPES = {FieldKind.FLOAT: "number", FieldKind.INT: "integer", FieldKind.BOOL: "boolean", FieldKind.STR: "string",
              FieldKind.CHOICE: "string"}
"""The JSON Schema type of each kind of field."""
BOUNDS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
"""Each bound of a field spec and the JSON Schema keyword that says it."""


class ToolName(StrEnum):
    """The tools the server offers: computations, reference tables, and the store's scenarios (list, read, save)."""

    EVALUATE = "evaluate"
    EXPLAIN = "explain"
    COMPARE = "compare"
    PLAN = "plan"
    RETROFIT = "retrofit"
    FIELDS = "fields"
    CATALOG = "catalog"
    LIST_SCENARIOS = "list_scenarios"
    GET_SCENARIO = "get_scenario"
    SAVE_SCENARIO = "save_scenario"


STORE = "store"
"""A tool's ``pool`` when it reads or writes the store: one short transaction, run on a thread of the server (as
the HTTP API runs its store routes), not in a worker process."""


@dataclass(frozen=True)
class Tool:
    """One tool: its description, its arguments' schemas, the ones it needs, and where it runs: the HTTP API's
    task and worker pool (``evaluate`` or ``study``, with their time limits), :data:`STORE` for the store, or
    ``None`` for a reference table read in the server itself; ``writes`` when it changes something (a save).
    """

    name: ToolName
    title: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    pool: str | None = None
    writes: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        """The tool's JSON Schema: an object of its arguments, no others."""
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}


def _described(description: str, unit: str) -> str:
    """A field's description with its unit, as a client shows it: ``... [USD/kWh]``."""
    return f"{description} [{unit}]" if unit and unit != "-" else description


def field_schema(spec: FieldSpec) -> dict[str, Any]:
    """The JSON Schema of one field: its type (null allowed where the field is optional: empty = the default),
    its description and unit, its choices, its bounds and its default.

    >>> field_schema(FIELDS["pue"])["minimum"], field_schema(FIELDS["pue"])["maximum"]
    (1.0, 5.0)
    """
    kind = JSON_TYPES[spec.kind]
    out: dict[str, Any] = {"type": [kind, "null"] if spec.optional else kind, "title": spec.label,
                           "description": _described(spec.description, spec.unit), "unit": spec.unit}
    if spec.choices:
        out["enum"] = [*spec.choices, *([None] if spec.optional else [])]
    for bound, keyword in BOUNDS.items():
        if getattr(spec, bound) is not None:
            out[keyword] = getattr(spec, bound)
    if spec.max_length is not None:
        out["maxLength"] = spec.max_length
    default = spec.default.value if isinstance(spec.default, StrEnum) else spec.default
    if default is None or isinstance(default, bool | int | float | str):
        out["default"] = default
    return out


def scenario_schema(specs: dict[str, FieldSpec], what: str) -> dict[str, Any]:
    """An object of the fields ``specs``; any field left out takes its default, an unknown one is refused."""
    return {"type": "object", "description": what, "properties": {n: field_schema(s) for n, s in specs.items()},
            "additionalProperties": False}


def candidate_schema() -> dict[str, Any]:
    """One hardware option of a plan: the candidates' columns and the scenario fields a candidate may set."""
    properties: dict[str, Any] = {
        name: {"type": "string" if name in CANDIDATE_TEXT_COLUMNS else ["number", "null"],
               "description": _described(description, unit), "unit": unit}
        for name, (unit, description) in CANDIDATE_COLUMNS.items()}
    properties |= {name: field_schema(FIELDS[name]) for name in (*PER_CANDIDATE, *MEASURED_AT)}
    return {"type": "object", "description": "one hardware option with its own measured rates and prices (a row "
            "of a CANDIDATES.csv)", "properties": properties, "required": ["name", "ownership"],
            "additionalProperties": False}


def _common() -> dict[str, Any]:
    """The arguments every one-row tool takes beside its scenario."""
    return {"curves": {"type": "string", "description": "your measured curves: the CSV text import-benchmark "
                       "writes; they outrank the catalog's for their accelerator, model, precision and request "
                       "shape"}}


def _accelerators() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string", "enum": accelerator_ids()}, "uniqueItems": True,
            "description": "catalog accelerator ids to consider (default: every one)"}


def _one_row_tools(scenario: dict[str, Any]) -> list[Tool]:
    one = {"scenario": scenario, **_common()}
    return [
        Tool(ToolName.EXPLAIN, "Explain a scenario", "Where each input of the scenario comes from (given, catalog "
             "with its source, default), then every output's formula with the numbers substituted: how each "
             "figure is reached.", one, ("scenario",), "evaluate"),
        Tool(ToolName.COMPARE, "Compare accelerators", "The scenario's demand served by each accelerator asked for "
             "(default: every catalog accelerator), ranked by cost per million tokens.",
             {**one, "accelerators": _accelerators()}, ("scenario",), "evaluate"),
        Tool(ToolName.RETROFIT, "Retrofit options", "For a scenario with an existing fleet: status quo, add decode "
             "accelerators, more of the same, a new generation; NPV, IRR, payback, the cash flows and the "
             "break-even decode accelerator price. With explain=true, the study's derivation as text.",
             {**one, "explain": {"type": "boolean", "default": False, "description": "the study's derivation "
                                 "with its numbers, instead of the tables"}}, ("scenario",), "study"),
    ]


def _text(description: str, limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit, "description": description}


def _whole(description: str, minimum: int, maximum: int, default: int | None = None) -> dict[str, Any]:
    out = {"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}
    return out if default is None else {**out, "default": default}


def _store_tools(scenario: dict[str, Any]) -> list[Tool]:
    """The store's tools (the HTTP API's ``/v1/store/scenarios`` routes): the same limits, answers and errors."""
    name = _text("the stored scenario's name", NAME_CHARS)
    return [
        Tool(ToolName.LIST_SCENARIOS, "List stored scenarios", "The scenarios in the store (TOKEN_ECONOMICS_"
             "DATABASE_URL, default a SQLite file in the user's data directory) whose name or project holds "
             "`search`, by name: each one's project, newest version, who saved it and when; `total` counts them "
             "all.", {"search": _text("text the name or project holds (any case)", 200),
                      "project": _text("only this project's scenarios", PROJECT_CHARS),
                      "limit": _whole("how many to list", 1, records.MAX_VERSIONS_LISTED, 100),
                      "offset": _whole("how many to skip (the next page)", 0, 10**9, 0)}, (), STORE),
        Tool(ToolName.GET_SCENARIO, "Read a stored scenario", "One version of a stored scenario (default: its "
             "newest) with its fields, checked by the scenario schema, who saved it, when, what changed and the "
             "engine's version; pass its fields to evaluate or explain.",
             {"name": name, "version": _whole("the version (default: the newest)", 1, 10**9)}, ("name",), STORE),
        Tool(ToolName.SAVE_SCENARIO, "Save a scenario to the store", "Save the fields as the next version of the "
             "named scenario (version 1 of a new one). `base_version` is the version the change was made from: a "
             "save based on an older version than the newest is refused naming the newer one (nothing is lost); "
             "the fields are checked by the scenario schema, a bad one refused naming it.",
             {"name": name, "fields": {**scenario, "description": "the scenario's fields: those left out take "
                                       "their defaults, as an empty CSV cell does"},
              "base_version": _whole("the version the change was made from (none, or 0, for a new scenario)", 0,
                                     10**9),
              "note": _text("what changed", records.MAX_NOTE_CHARS), "saved_by": _text("who saves", WHO_CHARS),
              "project": _text("a project tag", PROJECT_CHARS)}, ("name", "fields"), STORE, writes=True),
    ]


def tools(config: Settings) -> list[Tool]:
    """Every tool, its schemas generated from the field specs, its limits from the server's ``config``."""
    scenario = scenario_schema(FIELDS, "one scenario: any field left out takes its default (the fields tool lists "
                                       "them all)")
    plan_row = scenario_schema(FIELDS | PLAN_FIELDS, "the scenario and the planner's settings (targets, site, "
                                                     "demand over the day, rent tiers)")
    return [
        Tool(ToolName.EVALUATE, "Evaluate scenarios", "Every scenario evaluated: cost per million tokens, fleet, "
             "energy, margins and every other output, as `python -m economics evaluate` writes them (JSON "
             "records). A scenario with a bad value is refused naming its row, field and value; the valid ones "
             "are evaluated beside the problems.",
             {"scenarios": {"type": "array", "items": scenario, "minItems": 1, "maxItems": config.max_rows,
                            "description": "the scenarios, one object each"}, **_common()}, ("scenarios",),
             "evaluate"),
        *_one_row_tools(scenario),
        Tool(ToolName.PLAN, "Plan the cheapest fleet", "Prefill and decode pools, owned and rented, with the "
             "existing fleet, for the scenario's demand, targets and site; feasible=false with the diagnosis when "
             "no plan serves it.",
             {"scenario": plan_row, "candidates": {"type": "array", "items": candidate_schema(), "minItems": 1,
                                                   "maxItems": MAX_CANDIDATES, "description": "hardware options "
                                                   "with their own rates and prices (default: the catalog)"},
              "accelerators": _accelerators(), "frontier": {"type": "string", "enum": [f.value for f in FrontierChoice],
                                                            "default": FrontierChoice.NONE.value,
                                                            "description": "also the cost frontiers: speed, site "
                                                            "(both), carbon, or all"},
              **_common()}, ("scenario",), "study"),
        Tool(ToolName.FIELDS, "Input fields and outputs", "Every scenario field (type, unit, default, bounds, "
             "description) and every output (unit, label, description).", {}),
        Tool(ToolName.CATALOG, "Catalogs", "With no name, the catalogs the engine reads; with a name, every row "
             "of that catalog as stored, each with its source URL, the date it was read and a confidence tag.",
             {"name": {"type": "string", "enum": catalog_names(), "description": "the catalog to read"}}),
        *_store_tools(scenario),
    ]
