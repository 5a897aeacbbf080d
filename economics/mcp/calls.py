"""A tool call as the HTTP API's request: its arguments checked (an unknown or missing one, or one of the wrong
type, refused naming it), its scenarios written as the JSON table the API's body would be, and the task the
endpoint runs named. The scenarios' values are not checked here: the worker's scenario reader checks them, as it
checks every table's.
"""

from __future__ import annotations

import json
from typing import Any

from economics.api import store_routes
from economics.api.errors import ApiError, Code, json_bytes
from economics.api.settings import Settings
from economics.api.tasks import MEDIA, Answer, Request, catalog_document, catalog_names, fields_document
from economics.catalog import closest
from economics.io.output_paths import OutputFormat, TableFormat
from economics.mcp.schemas import STORE, Tool, ToolName
from economics.schema.values import shown
from economics.studies.planner.inputs import FrontierChoice
from economics.version import __version__

PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "boolean": bool, "array": list, "object": dict,
                                                    "integer": int}
"""The Python type the JSON value of each argument type is read as (the scenarios' own values are the reader's)."""


def _refused(name: str, value: Any, message: str) -> ApiError:
    """An argument refused, named as the HTTP API names a bad query parameter."""
    return ApiError(Code.UNUSABLE_INPUT, message, [{"row": None, "field": name, "value": _plain(value),
                                                    "message": message}])


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, bool | int | float | str) else json.dumps(value)[:200]


def _check_one(name: str, value: Any, schema: dict[str, Any]) -> None:
    """``value`` is of the argument's type (and among its choices); an array's items as well, but the scenarios'
    fields, which the reader checks.
    """
    kind = schema.get("type")
    wrong_whole = kind == "integer" and isinstance(value, bool)  # JSON's true is not a whole number
    if isinstance(kind, str) and kind in PYTHON_TYPES and (not isinstance(value, PYTHON_TYPES[kind]) or wrong_whole):
        raise _refused(name, value, f"{name}: must be {'an' if kind[0] in 'aoi' else 'a'} {kind}, got "
                                    f"{shown(json.dumps(value), 100)}")
    _check_bounds(name, value, schema)
    if "enum" in schema and value not in schema["enum"]:
        guess = closest(str(value), [str(c) for c in schema["enum"]]) if len(str(value)) <= 100 else None
        raise _refused(name, value, f"{name}: '{shown(str(value))}' is not one of the choices"
                                    + (f" (did you mean '{guess}'?)" if guess else "") + f"; {tool_choices(schema)}")
    items = schema.get("items", {})
    if kind == "array" and items.get("type") != "object":
        for i, item in enumerate(value, start=1):
            _check_one(f"{name}[{i}]", item, items)


def _check_bounds(name: str, value: Any, schema: dict[str, Any]) -> None:
    """A whole number within the argument's ``minimum`` and ``maximum``, a text within its ``maxLength``, as the
    HTTP API's query parameters are checked.
    """
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") == "integer" and ((low is not None and value < low) or (high is not None and value > high)):
        raise _refused(name, value, f"{name}: must be >= {low}" + (f" and <= {high:,}" if high is not None else "")
                       + f", got {value}")
    limit = schema.get("maxLength")
    if schema.get("type") == "string" and limit is not None and len(value) > limit:
        raise _refused(name, shown(value), f"{name}: {len(value):,} characters, more than the {limit:,} allowed")


def tool_choices(schema: dict[str, Any]) -> str:
    """The choices of an argument, for a message: at most 20, then a count."""
    choices = [str(c) for c in schema["enum"]]
    return "choose from " + ", ".join(choices[:20]) + (f" and {len(choices) - 20} more" if len(choices) > 20 else "")


def checked_arguments(tool: Tool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The call's arguments, every one known to the tool and of its type, every required one given."""
    given = arguments or {}
    for name, value in given.items():
        if name not in tool.properties:
            known = list(tool.properties)
            guess = closest(name, known) if known and len(name) <= 100 else None
            takes = f"; {tool.name} takes {', '.join(known)}" if known else f"; {tool.name} takes none"
            raise _refused(name, value, f"{shown(name)}: unknown argument" + (f" (did you mean '{guess}'?)" if guess
                                                                              else "") + takes)
        _check_one(name, value, tool.properties[name])
    missing = [name for name in tool.required if name not in given]
    if missing:
        raise _refused(missing[0], None, f"{missing[0]}: required; {tool.name} needs {', '.join(tool.required)}")
    return given


def _part(name: str, value: Any, limit: int) -> tuple[str, bytes]:
    """An argument as the form part the HTTP API would receive, within the server's body limit."""
    data = value.encode("utf-8", "backslashreplace") if isinstance(value, str) else json_bytes(value)
    if len(data) > limit:
        raise ApiError(Code.TOO_LARGE, f"{name}: {len(data):,} bytes, over the server's {limit:,}-byte limit "
                                       "(--max-body-mb)")
    return (f"{name}.csv" if isinstance(value, str) else f"{name}.json"), data


def request_for(tool: Tool, arguments: dict[str, Any], config: Settings) -> Request:
    """The HTTP API's request for a call of a computing tool (its arguments checked): the parts its endpoint's body
    would hold, the parameters its query would give.
    """
    args = checked_arguments(tool, arguments)
    rows = args["scenarios"] if tool.name is ToolName.EVALUATE else [args["scenario"]]
    parts = {"scenarios": [_part("scenarios", rows, config.max_body_bytes)]}
    for name in ("curves", "candidates"):
        if name in args:
            parts[name] = [_part(name, args[name], config.max_body_bytes)]
    params: dict[str, Any] = {"input_format": TableFormat.JSON.value, "format": OutputFormat.JSON.value,
                              "accelerators": args.get("accelerators", []),
                              "frontier": args.get("frontier", FrontierChoice.NONE.value),
                              "explain": args.get("explain", False)}
    return Request(tool.name.value, params, parts)


def reference_answer(tool: Tool, arguments: dict[str, Any] | None) -> Answer:
    """The answer of ``fields`` or ``catalog``: a table of the package, read in the server (no worker needed)."""
    args = checked_arguments(tool, arguments)
    if tool.name is ToolName.FIELDS:
        doc = fields_document()
    elif "name" in args:
        doc = catalog_document(args["name"])
    else:
        doc = {"version": __version__, "catalogs": catalog_names()}
    return Answer(200, MEDIA[OutputFormat.JSON], json_bytes(doc))


def store_answer(tool: Tool, arguments: dict[str, Any] | None) -> Answer:
    """The answer of a store tool: the HTTP API's ``/v1/store/scenarios`` document for the same request (its
    limits, its refusals with their codes: 404 not found, 409 a stale save naming the newer version, 422 a bad
    field named), read or written on the calling thread.
    """
    assert tool.pool == STORE
    args = checked_arguments(tool, arguments)
    if tool.name is ToolName.LIST_SCENARIOS:
        doc = store_routes.scenarios_document(args.get("search", ""), args.get("project"), args.get("limit", 100),
                                              args.get("offset", 0))
    elif tool.name is ToolName.GET_SCENARIO:
        doc = store_routes.scenario_document(args["name"], args.get("version"))
    else:
        doc = store_routes.saved_document(args, saved_by="mcp")
    return Answer(200, MEDIA[OutputFormat.JSON], json_bytes({"version": __version__, **doc}))
