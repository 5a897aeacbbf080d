"""The MCP server as an assistant uses it: ``python -m economics mcp`` started as a real subprocess and driven by the
official SDK's client, over stdio and over streamable HTTP on 127.0.0.1. Its figures are held against what the CLI
writes for the same rows; its schemas against the field specs they are generated from.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

httpx2 = pytest.importorskip("httpx2")  # the SDK's HTTP client

pytest.importorskip("mcp")

from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.api_server import START_TIMEOUT_S, free_port  # noqa: E402
from bench.server_proc import stop_server  # noqa: E402
from economics.api.errors import ApiError  # noqa: E402
from economics.api.settings import Settings  # noqa: E402
from economics.api.tasks import catalog_document, fields_document  # noqa: E402
from economics.cli import main  # noqa: E402
from economics.mcp.calls import checked_arguments, request_for  # noqa: E402
from economics.mcp.command import address  # noqa: E402
from economics.mcp.schemas import ToolName, field_schema, tools  # noqa: E402
from economics.schema.scenario import FIELDS  # noqa: E402
from economics.schema.validation import InputError  # noqa: E402
from economics.store.database import URL_VARIABLE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example.csv"
TOOLS = {"evaluate", "explain", "compare", "plan", "retrofit", "fields", "catalog", "list_scenarios", "get_scenario",
         "save_scenario"}
TOKEN = "a-test-token-long-enough-1234567890"


class Session:
    """A connected client, called from the test's thread through a portal (the client lives in its event loop)."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal, self.client = portal, client

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """(is_error, text) of a tool call."""
        result = self.portal.call(lambda: self.client.call_tool(name, arguments))
        assert len(result.content) == 1 and result.content[0].type == "text"
        return bool(result.is_error), result.content[0].text

    def json(self, name: str, arguments: dict[str, Any]) -> Any:
        """The JSON of a successful call."""
        error, text = self.call(name, arguments)
        assert not error, text
        return json.loads(text)


@contextlib.contextmanager
def _session(server: Any) -> Iterator[Session]:
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(Client(server)) as client:
        yield Session(portal, client)


@pytest.fixture(scope="module")
def stdio() -> Iterator[Session]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "economics", "mcp"], cwd=str(ROOT), env=env)
    with _session(params) as session:
        yield session


def _example_rows() -> list[dict[str, str]]:
    with EXAMPLE.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _doc_json_blocks() -> list[Any]:
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.DOTALL)]


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_tools_are_listed_with_the_schema_s_descriptions_units_and_bounds(stdio: Session) -> None:
    listed = {t.name: t for t in stdio.portal.call(stdio.client.list_tools).tools}
    assert set(listed) == TOOLS
    scenario = listed["evaluate"].input_schema["properties"]["scenarios"]["items"]["properties"]
    assert set(scenario) == set(FIELDS)
    # pue: "must be >= 1 and <= 5" in the scenario schema, its unit "-" (a ratio: no unit added)
    assert scenario["pue"]["minimum"] == 1 and scenario["pue"]["maximum"] == 5
    assert scenario["pue"]["type"] == ["number", "null"]
    assert scenario["electricity_usd_per_kwh"]["description"].endswith("[USD/kWh]")
    assert listed["plan"].input_schema["properties"]["scenario"]["properties"]["ttft_percentile"][
        "exclusiveMaximum"] == 1
    writes = {name for name, t in listed.items() if t.annotations is None or not t.annotations.read_only_hint}
    assert writes == {"save_scenario"}
    saved_fields = listed["save_scenario"].input_schema["properties"]["fields"]["properties"]
    assert saved_fields["pue"]["minimum"] == 1 and set(saved_fields) == set(FIELDS)


def test_evaluate_gives_the_cli_s_figures_for_the_docs_example(stdio: Session,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # the rows as the CSV reader reads them (text cells), sent as JSON: the same reader's figures as the CLI's
    got = stdio.json("evaluate", {"scenarios": _example_rows()})
    want = _cli_json(capsys, "evaluate", str(EXAMPLE), "--format", "json")
    assert got == want
    (row,) = got
    assert row["name"] == "worked-example" and row["valid"] is True
    # capital: 64 x 30,000 = 1,920,000 USD as a 5-year annuity at 8 %: x 0.08 / (1 - 1.08^-5) = 0.250456455
    # -> 480,876.39 USD/y / 8,760 h = 54.894565 USD/h
    assert row["capital_usd_per_hour"] == pytest.approx(1_920_000 * 0.08 / (1 - 1.08**-5) / 8760, rel=1e-12)
    # tokens: 3,000 M output/day and 4 x as many input (2,000 in, 500 out a request) = 15,000 M/day served;
    # cost per M tokens = cost per day / 15,000
    assert row["served_input_tokens_per_day"] == 12e9
    assert row["cost_usd_per_m_tokens"] == pytest.approx(row["cost_usd_per_day"] / 15_000, rel=1e-12)


def test_a_bad_field_is_refused_naming_the_field_the_row_and_the_value(stdio: Session) -> None:
    rows = _example_rows()
    bad = [rows[0], {**rows[0], "name": "hot-site", "pue": 0.5}]
    error, text = stdio.call("evaluate", {"scenarios": bad})
    assert error
    doc = json.loads(text)
    assert doc["error"]["code"] == "invalid_rows"
    assert doc["error"]["problems"] == [{"row": 2, "name": "hot-site", "field": "pue", "value": 0.5,
                                         "message": "pue: must be >= 1 and <= 5, got 0.5"}]
    assert [r["name"] for r in doc["results"]] == ["worked-example"]  # the valid row evaluated beside it
    assert doc["error"] == _doc_json_blocks()[2]["error"]  # docs/mcp.md shows this very answer
    error, text = stdio.call("explain", {"scenario": {**rows[0], "pue": 0.5}})
    assert error and json.loads(text)["error"]["problems"][0]["field"] == "pue"
    assert "Traceback" not in text


def test_an_unknown_field_or_argument_is_named(stdio: Session) -> None:
    error, text = stdio.call("evaluate", {"scenarios": [{"name": "a", "pu": 1.2}]})
    assert error and "'pu' (did you mean 'pue'?)" in json.loads(text)["error"]["message"]
    error, text = stdio.call("compare", {"scenario": {}, "accelerator": ["h100-sxm"]})
    doc = json.loads(text)["error"]
    assert error and doc["problems"][0]["field"] == "accelerator" and "did you mean 'accelerators'?" in doc["message"]


def test_explain_and_compare_are_the_http_api_s_answers(stdio: Session) -> None:
    (row,) = _example_rows()
    explained = stdio.json("explain", {"scenario": row})
    assert explained["name"] == "worked-example" and "cost_usd_per_m_tokens" in explained["derivation"]
    compared = stdio.json("compare", {"scenario": row, "accelerators": ["h100-sxm", "h200-sxm"]})
    assert sorted(r["accelerator"] for r in compared["results"]) == ["h100-sxm", "h200-sxm"]


def test_fields_and_catalog(stdio: Session) -> None:
    assert stdio.json("fields", {}) == json.loads(json.dumps(fields_document()))
    names = stdio.json("catalog", {})["catalogs"]
    assert "accelerators" in names
    assert stdio.json("catalog", {"name": "accelerators"}) == catalog_document("accelerators")
    error, text = stdio.call("catalog", {"name": "accelerator"})
    assert error and "did you mean 'accelerators'?" in json.loads(text)["error"]["message"]


def _wait_for_http(proc: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S  # a bound on a hang, as the API server's: never a measure
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the MCP server exited before it answered"
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(url, timeout=2)  # any answer (405, 406, 401): the server is up
            return
        time.sleep(0.2)
    raise AssertionError(f"the MCP server did not answer within {START_TIMEOUT_S:g} s")


def test_streamable_http_on_loopback_with_the_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKEN_ECONOMICS_API_TOKEN": TOKEN}
    with (tmp_path / "server.log").open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "economics", "mcp", "--http", str(port)], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_for_http(proc, url)
            refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=120)
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                      timeout=httpx2.Timeout(30, read=300))
            with _session(streamable_http_client(url, http_client=http)) as session:
                assert {t.name for t in session.portal.call(session.client.list_tools).tools} == TOOLS
                got = session.json("evaluate", {"scenarios": _example_rows()})
                assert got == _cli_json(capsys, "evaluate", str(EXAMPLE), "--format", "json")
                assert session.json("fields", {}) == json.loads(json.dumps(fields_document()))
        finally:
            stop_server(proc)


def test_the_docs_configurations_and_tool_table() -> None:
    stdio_config, http_config, _ = _doc_json_blocks()
    assert stdio_config["mcpServers"]["token-economics"]["args"] == ["mcp"]
    assert http_config["mcpServers"]["token-economics"]["url"].endswith("/mcp")
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE)) == {t.value for t in ToolName} == TOOLS


# ---------------------------------------------------------------- in process: the schemas and the arguments


def test_every_field_s_bounds_and_choices_are_the_spec_s() -> None:
    for spec in FIELDS.values():
        schema = field_schema(spec)
        assert (schema.get("minimum"), schema.get("exclusiveMinimum"), schema.get("maximum"),
                schema.get("exclusiveMaximum")) == (spec.ge, spec.gt, spec.le, spec.lt), spec.name
        assert [c for c in schema.get("enum", []) if c is not None] == list(spec.choices), spec.name
        assert schema["description"].startswith(spec.description), spec.name
        json.dumps(schema, allow_nan=False)  # a client reads it as JSON: no NaN, no enum object


def _tool(name: ToolName) -> Any:
    return next(t for t in tools(Settings()) if t.name is name)


@pytest.mark.parametrize(("name", "arguments", "field", "says"), [
    (ToolName.EVALUATE, {}, "scenarios", "scenarios: required"),
    (ToolName.EVALUATE, {"scenarios": {"name": "a"}}, "scenarios", "scenarios: must be an array"),
    (ToolName.COMPARE, {"scenario": {}, "accelerators": "h100-sxm"}, "accelerators", "must be an array"),
    (ToolName.COMPARE, {"scenario": {}, "accelerators": ["h100"]}, "accelerators[1]", "did you mean 'h100-sxm'?"),
    (ToolName.PLAN, {"scenario": {}, "frontier": "cost"}, "frontier", "is not one of the choices"),
    (ToolName.RETROFIT, {"scenario": {}, "explain": "yes"}, "explain", "must be a boolean"),
    (ToolName.FIELDS, {"format": "markdown"}, "format", "fields takes none"),
    (ToolName.LIST_SCENARIOS, {"limit": 0}, "limit", "limit: must be >= 1 and <= 10,000, got 0"),
    (ToolName.LIST_SCENARIOS, {"serch": "q"}, "serch", "(did you mean 'search'?)"),
    (ToolName.GET_SCENARIO, {"version": 1}, "name", "name: required"),
    (ToolName.GET_SCENARIO, {"name": "q3", "version": True}, "version", "version: must be an integer"),
    (ToolName.SAVE_SCENARIO, {"name": "q" * 201, "fields": {}}, "name", "201 characters, more than the 200"),
    (ToolName.SAVE_SCENARIO, {"name": "q3", "fields": {}, "base_version": -1}, "base_version", "must be >= 0"),
])
def test_a_bad_argument_is_refused_naming_it(name: ToolName, arguments: dict[str, Any], field: str,
                                             says: str) -> None:
    with pytest.raises(ApiError) as caught:
        checked_arguments(_tool(name), arguments)
    assert caught.value.problems[0]["field"] == field and says in caught.value.message


def test_a_call_is_the_http_api_s_request() -> None:
    req = request_for(_tool(ToolName.PLAN), {"scenario": {"name": "p"}, "frontier": "speed",
                                             "candidates": [{"name": "c", "ownership": "own"}]}, Settings())
    assert req.task == "plan" and req.params["frontier"] == "speed" and req.params["input_format"] == "json"
    assert json.loads(req.parts["scenarios"][0][1]) == [{"name": "p"}]
    assert json.loads(req.parts["candidates"][0][1]) == [{"name": "c", "ownership": "own"}]
    small = Settings(max_body_mb=1)
    with pytest.raises(ApiError, match="over the server's 1,048,576-byte limit"):
        request_for(_tool(ToolName.EVALUATE), {"scenarios": [{"name": "x" * 200}] * 6000}, small)


@pytest.mark.parametrize(("text", "want"), [("8765", ("127.0.0.1", 8765)), ("0.0.0.0:80", ("0.0.0.0", 80)),
                                            ("[::1]:8765", ("::1", 8765))])
def test_the_http_address(text: str, want: tuple[str, int]) -> None:
    assert address(text) == want


@pytest.mark.parametrize("text", ["", "host:", "127.0.0.1:0", "127.0.0.1:70000", "::1:80", "x:y"])
def test_a_bad_http_address_is_refused_naming_the_option(text: str) -> None:
    with pytest.raises(InputError, match="^--http: "):
        address(text)


# ---------------------------------------------------------------- the store's tools, on a store of the test's own

RENTED = {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8, "rent_usd_per_accelerator_hour": 2,
          "output_tokens_per_s_per_accelerator": 1000}


@pytest.fixture(scope="module")
def store_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Session, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('mcp-store') / 'store.sqlite'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), URL_VARIABLE: url}
    params = StdioServerParameters(command=sys.executable, args=["-m", "economics", "mcp"], cwd=str(ROOT), env=env)
    with _session(params) as session:
        yield session, url


def _error(session: Session, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    error, text = session.call(name, arguments)
    assert error and "Traceback" not in text, text
    return dict(json.loads(text)["error"])


def test_the_store_tools_save_version_list_and_read(store_stdio: tuple[Session, str],
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    session, url = store_stdio
    first = session.json("save_scenario", {"name": "q3", "fields": RENTED, "saved_by": "ana", "project": "fy26"})
    assert first["scenario"]["version"] == 1 and first["scenario"]["saved_by"] == "ana"
    second = session.json("save_scenario", {"name": "q3", "fields": {**RENTED, "accelerator_count": 16},
                                            "base_version": 1, "note": "16 GPUs"})
    assert second["scenario"]["version"] == 2 and second["scenario"]["saved_by"] == "mcp"
    assert second["scenario"]["changes"] == [{"field": "accelerator_count", "before": 8, "after": 16}]
    # a save based on version 1 after version 2: refused naming the newer version (409 conflict), nothing lost
    stale = _error(session, "save_scenario", {"name": "q3", "fields": {**RENTED, "accelerator_count": 4},
                                              "base_version": 1})
    assert (stale["status"], stale["code"]) == (409, "conflict") and "version 2 (saved by mcp" in stale["message"]
    listed = session.json("list_scenarios", {"search": "Q"})
    assert listed["total"] == 1 and listed["scenarios"][0]["latest_version"] == 2
    assert listed["scenarios"][0]["project"] == "fy26"
    one = session.json("get_scenario", {"name": "q3", "version": 1})["scenario"]
    assert one["fields"] == RENTED and one["version"] == 1
    missing = _error(session, "get_scenario", {"name": "q3", "version": 9})
    assert (missing["status"], missing["code"]) == (404, "not_found") and "no version 9" in missing["message"]
    # the stored version evaluates to what the CLI's --scenario q3@2 gives: 16 x 2 USD/h = 32 USD/h
    newest = session.json("get_scenario", {"name": "q3"})["scenario"]
    got = session.json("evaluate", {"scenarios": [{"name": "q3@2", **newest["fields"]}]})
    monkeypatch.setenv(URL_VARIABLE, url)
    assert got == _cli_json(capsys, "evaluate", "--scenario", "q3@2", "--format", "json")
    assert got[0]["cost_usd_per_hour"] == pytest.approx(32.0)


def test_a_bad_field_in_a_save_is_named_and_nothing_saved(store_stdio: tuple[Session, str]) -> None:
    session, _ = store_stdio
    bad = _error(session, "save_scenario", {"name": "hot", "fields": {**RENTED, "pue": 0.5}})
    assert (bad["status"], bad["code"]) == (422, "unusable_input")
    assert bad["problems"][0]["field"] == "pue" and "pue: must be >= 1 and <= 5, got 0.5" in bad["message"]
    unknown = _error(session, "save_scenario", {"name": "hot", "fields": RENTED, "base": 1})
    assert unknown["problems"][0]["field"] == "base" and "did you mean 'base_version'?" in unknown["message"]
    assert session.json("list_scenarios", {"search": "hot"})["total"] == 0
