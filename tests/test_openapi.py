"""The API's OpenAPI document, built in process as the server builds it: a valid OpenAPI 3.1 document (no 3.0
keyword), its models generated from the scenario and output schemas with their descriptions, units and bounds, and
real answers valid against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from economics.api import tasks
from economics.api.app import create_app
from economics.api.errors import ApiError, Code, body_bytes
from economics.api.settings import Settings
from economics.schema.outputs import OUTPUTS
from economics.schema.scenario import FIELDS
from economics.schema.validation import RANGE_COLUMNS

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return create_app(Settings()).openapi()


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def _schema(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """A component as a JSON schema that resolves its references in the document."""
    return {**doc["components"]["schemas"][name], "components": doc["components"]}


def test_the_document_is_valid_openapi_3_1_without_nullable(doc: dict[str, Any]) -> None:
    # it declared 3.1.0 but used the 3.0 keyword nullable, and GET and HEAD /v1/health shared one operationId
    assert doc["openapi"].startswith("3.1")
    validate(doc)  # raises naming the first problem
    assert "nullable" not in _keys(doc)
    ids = [op["operationId"] for path in doc["paths"].values() for op in path.values()]
    assert len(ids) == len(set(ids))


def test_evaluate_reads_scenarios_and_answers_result_rows(doc: dict[str, Any]) -> None:
    post = doc["paths"]["/v1/evaluate"]["post"]
    body = post["requestBody"]["content"]
    assert body["application/json"]["schema"] == {"$ref": "#/components/schemas/ScenarioTable"}
    table = doc["components"]["schemas"]["ScenarioTable"]
    assert {"$ref": "#/components/schemas/Scenario"} in table["anyOf"]
    assert set(body) == {"application/json", "text/csv", "application/vnd.apache.parquet", "multipart/form-data"}
    ok = post["responses"]["200"]["content"]
    assert ok["application/json"]["schema"]["items"] == {"$ref": "#/components/schemas/ResultRow"}
    for code in Code:  # every failure in the one error shape
        assert post["responses"][str(code.status)]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"}


def test_scenario_and_result_columns_carry_the_schemas_words_units_and_bounds(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    scenario, row = schemas["Scenario"]["properties"], schemas["ResultRow"]["properties"]
    assert set(scenario) == set(FIELDS)
    pue = scenario["pue"]
    assert pue["description"] == FIELDS["pue"].description and pue["unit"] == FIELDS["pue"].unit
    number = next(a for a in pue.get("anyOf", [pue]) if a.get("type") == "number")
    assert (number["minimum"], number["maximum"]) == (FIELDS["pue"].ge, FIELDS["pue"].le)
    assert set(OUTPUTS) <= set(row) and set(row) <= set(FIELDS) | set(OUTPUTS) | set(RANGE_COLUMNS)
    # "Cost per million tokens [USD/Mtok]: ..." from OUTPUTS: label, unit, description
    cost = OUTPUTS["cost_usd_per_m_tokens"]
    assert row["cost_usd_per_m_tokens"]["description"] == f"{cost.label} [{cost.unit}]: {cost.description}"
    code = schemas["ErrorDetail"]["properties"]["code"]
    assert schemas[code["$ref"].rsplit("/", 1)[1]]["enum"] == [c.name.lower() for c in Code]


@pytest.mark.parametrize("table", ["example.csv", "example-sessions.csv", "example-kv-memory.csv",
                                   "retrofit-example.csv", "uncertainty-example.csv"])
def test_the_docs_tables_evaluated_are_valid_against_the_document(doc: dict[str, Any], table: str) -> None:
    # every column evaluate answers (inputs echoed, catalog values filled in, outputs) has the type it declares
    request = tasks.Request("evaluate", {"format": "json"}, {"scenarios": [("t", (DOCS / table).read_bytes())]})
    answer = tasks.run(request, 1000)
    assert isinstance(answer, tasks.Answer), answer
    results = json.loads(answer.body)
    assert results
    jsonschema.validate(results, {"type": "array", "items": _schema(doc, "ResultRow")})


def test_an_answer_with_invalid_rows_is_valid_against_the_error_shape(doc: dict[str, Any]) -> None:
    good = (DOCS / "example.csv").read_text().splitlines()
    bad = good[1].replace("worked-example", "bad").replace(",1.56,", ",0.5,")  # pue 0.5: below its bound of 1
    answer = tasks.run(tasks.Request("evaluate", {"format": "csv"}, {"scenarios": [
        ("t", "\n".join([*good, bad]).encode())]}), 1000)
    assert isinstance(answer, ApiError) and answer.code is Code.INVALID_ROWS
    shape = json.loads(body_bytes(answer))
    jsonschema.validate(shape, _schema(doc, "Error"))
    assert [r["name"] for r in shape["results"]] == ["worked-example"]
    assert [(p["row"], p["field"], p["value"]) for p in shape["error"]["problems"]] == [(2, "pue", "0.5")]


def test_plan_and_report_take_the_one_frontier_choice(doc: dict[str, Any]) -> None:
    # both routes read FrontierChoice (tests/test_one_rule.py holds the CLI and the MCP tool to it too)
    assert doc["components"]["schemas"]["FrontierChoice"]["enum"] == ["none", "speed", "site", "both", "carbon", "all"]
    for path in ("/v1/plan", "/v1/report"):
        param = next(p for p in doc["paths"][path]["post"]["parameters"] if p["name"] == "frontier")
        assert param["schema"] == {"$ref": "#/components/schemas/FrontierChoice", "default": "none"}, path


def test_the_report_takes_the_one_report_kind(doc: dict[str, Any]) -> None:
    # the route listed the kinds as a Literal beside ReportKind (the CLI's --kind reads ReportKind's table)
    from economics.report.build import ReportKind

    assert doc["components"]["schemas"]["ReportKind"]["enum"] == [k.value for k in ReportKind]
    param = next(p for p in doc["paths"]["/v1/report"]["post"]["parameters"] if p["name"] == "kind")
    assert param["schema"] == {"$ref": "#/components/schemas/ReportKind", "default": "cost"}


def test_the_draw_and_file_format_parameters_refer_to_their_one_enum(doc: dict[str, Any]) -> None:
    # each was a Literal repeating the CLI's choices (the benchmark's format a free string, refused by the reader)
    from economics.io.benchmark_formats import BenchmarkFormat
    from economics.io.session_traces import TraceFormat
    from economics.studies.uncertainty import Distribution

    for path, name, kind, default in (("/v1/uncertainty", "distribution", Distribution, "triangular"),
                                      ("/v1/import-sessions", "trace_format", TraceFormat, "auto"),
                                      ("/v1/import-benchmark", "benchmark_format", BenchmarkFormat, "auto")):
        param = next(p for p in doc["paths"][path]["post"]["parameters"] if p["name"] == name)
        assert param["schema"] == {"$ref": f"#/components/schemas/{kind.__name__}", "default": default}, path
        assert doc["components"]["schemas"][kind.__name__]["enum"] == [k.value for k in kind]


def test_every_format_parameter_refers_to_the_subset_of_output_formats_it_takes(doc: dict[str, Any]) -> None:
    # each route listed its formats again as a Literal; each now reads one subset of OutputFormat (the CLI's and the
    # MCP's lists are held to the same enums by tests/test_one_rule.py), and OpenAPI names each subset once
    schemas = doc["components"]["schemas"]
    assert {name: schemas[name]["enum"] for name in ("TableFormat", "RecordFormat", "ExplainFormat", "FieldsFormat")} \
        == {"TableFormat": ["json", "csv", "parquet"], "RecordFormat": ["json", "csv"],
            "ExplainFormat": ["json", "text"], "FieldsFormat": ["json", "markdown"]}
    found = {}
    for path, methods in doc["paths"].items():
        for operation in methods.values():
            for param in operation.get("parameters", []):
                if param["name"] == "format":
                    ref = param["schema"]["$ref"].rsplit("/", 1)[1]
                    found[path.split("/", 2)[2]] = (ref, param["schema"]["default"])
    record = ("RecordFormat", "json")
    assert found == {
        "evaluate": ("TableFormat", "json"), "explain": ("ExplainFormat", "json"), "compare": record,
        "session-profile": record, "retrofit": record, "kv-memory": record, "uncertainty": record, "plan": record,
        "import-benchmark": ("RecordFormat", "csv"), "import-sessions": record, "fields": ("FieldsFormat", "json"),
        "catalogs/{name}": record}
