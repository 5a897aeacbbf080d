"""Every endpoint of the OpenAPI document called as the document says, by Schemathesis, against a real server
(``token-economics serve`` on 127.0.0.1): no answer is a 5xx, and every answer's status, Content-Type, headers and
body are those the document declares. The draws are derandomised (the same cases each run) and bounded (a few
examples an operation), so the run is repeatable and short.

What it found is fixed and held by a test of its own (``tests/test_row_lookup.py``: a JSON row without a name).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from bench.api_server import running_api
from economics.api.app import create_app
from economics.api.settings import Settings

pytestmark = pytest.mark.slow  # over 20 s: drawing scenarios of 130 fields is most of it

EXAMPLES_PER_OPERATION = 6
"""Generated cases per operation (a request each), beside the document's own examples."""

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]
"""No 5xx, and each answer as the document declares it. Not ``negative_data_rejection``: the API takes a number
given as text ("0.5"), as a CSV cell holds it, where the scenario's JSON schema says number."""

CONFIG = SchemathesisConfig.from_dict({
    "generation": {"deterministic": True, "max-examples": EXAMPLES_PER_OPERATION, "database": "none"},
    # the coverage phase draws every bound of every one of the scenario's 130 fields: thousands of requests
    "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
})


DOCUMENT = create_app(Settings()).openapi()
"""The document the server serves (the fixture holds the two equal): the operations are known at collection."""

schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with (tmp_path_factory.mktemp("schemathesis") / "server.log").open("wb") as log, running_api(log) as url:
        assert httpx.get(url + "/openapi.json", timeout=120).json() == DOCUMENT
        yield url


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_every_endpoint_answers_as_its_document_says(case: schemathesis.Case, api_url: str) -> None:
    case.call_and_validate(base_url=api_url, checks=CHECKS, timeout=120)
