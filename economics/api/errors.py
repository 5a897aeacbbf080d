"""The HTTP API's one error shape, and the status each kind of failure answers.

Every answer that is not a success is JSON of this shape, whatever format was asked for::

    {"version": "0.1.0",
     "error": {"status": 422, "code": "invalid_rows", "message": "1 of 2 rows invalid; the valid rows were evaluated",
               "problems": [{"row": 2, "name": "b", "field": "pue", "value": "0.5",
                             "message": "pue: must be >= 1 and <= 3 [ratio], got 0.5"}]}}

``problems`` lists each bad cell (row 1-based, the row's name, the field, the value as given, the reason); it is
empty where the failure is not about a row. An evaluate answer with invalid rows also carries ``results``: the
valid rows, evaluated. Messages are the CLI's, with control characters escaped and long values shortened; no
answer ever holds a stack trace.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Any

from economics.schema.values import escape_controls, shown
from economics.version import __version__

MAX_PROBLEMS = 1000
"""Problems listed in one answer; the message counts the rest."""
MAX_MESSAGE_CHARS = 2000


class Code(Enum):
    """Each failure's code in the error shape, with its HTTP status and what it means (the API docs' table)."""

    INVALID_ROWS = (422, "a row has a bad value: each problem names the row, field and value")
    UNUSABLE_INPUT = (422, "the body is not a usable table or request (unknown column, no rows, bad option)")
    UNAUTHORIZED = (401, "a bearer token is set on the server and the request's is missing or wrong")
    NOT_FOUND = (404, "no such endpoint or catalog")
    METHOD_NOT_ALLOWED = (405, "the endpoint does not take this method")
    CONFLICT = (409, "a store save based on a version that is no longer the newest (the message names the newer "
                     "one), or a name already taken")
    REQUEST_TIMEOUT = (408, "the request's headers, or a pause in its body, took longer than the server's header or "
                            "body timeout: the connection is closed")
    TOO_LARGE = (413, "the body or its rows exceed the server's limits")
    UNSUPPORTED_MEDIA_TYPE = (415, "the body's Content-Type is not JSON, CSV, Parquet or multipart form data")
    BUSY = (503, "every worker is busy past the queue's time limit: try again")
    STORE_UNAVAILABLE = (503, "the store's database cannot be opened, reached or migrated (the message names it)")
    TIMEOUT = (504, "the computation ran past the request time limit and was stopped")
    OUT_OF_MEMORY = (507, "the computation needed more memory than a worker may take")
    INTERNAL = (500, "a bug: the message names it, never a trace")

    @property
    def status(self) -> int:
        """The HTTP status it is answered with."""
        return int(self.value[0])

    @property
    def meaning(self) -> str:
        """What it means, for the docs."""
        return str(self.value[1])


class ApiError(Exception):
    """A failure answered in the error shape: its :class:`Code`, message and problems (and, for evaluate, the
    results of the valid rows).
    """

    def __init__(self, code: Code, message: str, problems: list[dict[str, Any]] | None = None,
                 results: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.problems, self.results = code, message, problems or [], results


def _plain(value: Any) -> Any:
    """A problem's value as JSON holds it: text shortened and escaped, a non-finite number as text."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return shown(str(value), 200)


def _text(message: str) -> str:
    text = escape_controls(str(message))
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + f"… ({len(text):,} characters)"


def problem(row: Any, name: Any, field: Any, value: Any, message: str) -> dict[str, Any]:
    """One problem record of the error shape, its text escaped."""
    return {"row": None if row is None else int(row), "name": shown(str(name or ""), 200),
            "field": None if field is None else shown(str(field), 200), "value": _plain(value),
            "message": _text(message)}


def body(error: ApiError) -> dict[str, Any]:
    """The JSON document of ``error`` (the shape above)."""
    problems = error.problems[:MAX_PROBLEMS]
    message = error.message
    if len(error.problems) > MAX_PROBLEMS:
        message += f" (the first {MAX_PROBLEMS:,} of {len(error.problems):,} problems are listed)"
    doc: dict[str, Any] = {"version": __version__, "error": {
        "status": error.code.status, "code": error.code.name.lower(), "message": _text(message),
        "problems": [problem(p.get("row"), p.get("name"), p.get("field"), p.get("value"), p.get("message", ""))
                     for p in problems]}}
    if error.results is not None:
        doc["results"] = error.results
    return doc


def json_bytes(doc: Any) -> bytes:
    r"""A JSON answer as UTF-8 whatever text it holds: a lone surrogate (a valid JSON string, ``"\ud800"``, that no
    UTF-8 can hold) is written as its JSON escape, so the client reads back the string it sent.

    >>> json_bytes({"name": "\ud800 \xe9"})
    b'{"name": "\\ud800 \xc3\xa9"}'
    """
    return json.dumps(doc, allow_nan=False, ensure_ascii=False).encode("utf-8", "backslashreplace")


def body_bytes(error: ApiError) -> bytes:
    """:func:`body` as UTF-8 JSON."""
    return json_bytes(body(error))


def from_text(code: Code, message: str) -> bytes:
    """The error shape's bytes for a failure with no problems."""
    return body_bytes(ApiError(code, message))
