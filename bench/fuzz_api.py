"""The fuzz bench's ``api`` stage (a module of ``bench/fuzz.py``; running it on its own does nothing).

The HTTP API's encodings, against the app in-process (``fastapi.testclient.TestClient`` over
``economics.api.app.create_app``: its lifespan starts the real worker pools, one evaluate and one study worker, so
every request is answered by the code a server runs; one app per stage run): JSON bodies with a lone surrogate
(``\\ud800``, written as JSON's escape) in a name, a value or a key; unknown top-level keys beside ``scenarios``;
a second ``scenarios`` part in a form; typo'd and repeated query parameters; ``/v1/plan`` and ``/v1/explain``
without ``row`` on several rows; ``/v1/explain?format=text`` with escape sequences in the row's name; bodies with
bytes that are not UTF-8; JSON nested 100,000 deep; and the golden row with one field set to a generated value.

Checks: the status is 200 or 422 (or the documented 408, 413 and 503), never 500 (``status 500``; another status
is ``status other``); every answer's body is UTF-8, an error's is JSON of the one error shape (``version``, and
``error`` with ``status`` equal to the answer's, ``code``, ``message``, ``problems``) and a JSON answer's is JSON
(``bad body`` otherwise); a text answer (``text/plain``) holds no raw control character (``escape leak``); a 200
where the reference says the input must be refused (each hostile encoding above; a generated value the value
parser and the field's bounds refuse, :func:`fuzz_common.reference`) is a ``mismatch``.
"""

from __future__ import annotations

import json
import random
import time
import traceback
from pathlib import Path
from typing import Any

from fuzz_common import ESCAPES, Stage, generated_text, leaks, reference, stage_rng

from economics.schema.scenario import FIELDS

GOLDEN = {"name": "golden", "accelerator": "h100-sxm", "ownership": "own", "accelerator_count": 8,
          "accelerator_price_usd": 30000, "accelerator_power_kw": 1.25, "depreciation_years": 5,
          "electricity_usd_per_kwh": 0.1, "pue": 1, "input_tokens_per_request": 1000,
          "output_tokens_per_request": 250, "output_tokens_per_s_per_accelerator": 1000, "peak_to_average": 1}
"""G1 of tests/test_golden.py in part (tests/test_api.py's row): evaluated in milliseconds."""
ALLOWED = {200, 422, 408, 413, 503}
"""The statuses a request may get: success, refused by name, and the documented limits (timeouts, size, busy)."""
JSON = "application/json"
FIELD_NAMES = [n for n, s in FIELDS.items() if not s.catalog_field]


class Request:
    """One request: method, path with its query, body bytes, content type or form parts, and whether the
    reference says it must be refused (a 200 is then a mismatch)."""

    def __init__(self, path: str, body: bytes = b"", ctype: str = JSON, refuse: bool = False, what: str = "",
                 files: list[tuple[str, tuple[str, bytes]]] | None = None) -> None:
        self.path, self.body, self.ctype, self.refuse, self.what, self.files = path, body, ctype, refuse, what, files


def _rows(n: int = 1, **changes: Any) -> list[dict[str, Any]]:
    return [{**GOLDEN, "name": f"r{i}", **changes} for i in range(n)]


def _surrogate(rng: random.Random) -> Request:
    """A lone surrogate (JSON's ``\\ud800`` escape, as a browser's ``JSON.stringify`` of a cut string writes it)."""
    where = rng.choice(["name", "value", "key", "top key"])
    lone = rng.choice(["\\ud800", "\\udfff", "\\udc80x", "a\\ud83d"])
    text = json.dumps(_rows(rng.randint(1, 2)))
    if where == "name":
        text = text.replace('"r0"', f'"r{lone}"', 1)
    elif where == "value":
        text = text.replace('"h100-sxm"', f'"h100{lone}"', 1)
    elif where == "key":
        text = text.replace('"pue"', f'"pue{lone}"', 1)
    else:
        text = '{"scenarios": ' + text + f', "x{lone}": 1}}'
    return Request(_endpoint(rng), text.encode(), refuse=True, what=f"lone surrogate in a {where}")


def _endpoint(rng: random.Random, rows: int = 1) -> str:
    return rng.choice(["/v1/evaluate", "/v1/evaluate?format=csv", "/v1/explain?row=1", "/v1/explain?format=text"]
                      if rows == 1 else ["/v1/evaluate", "/v1/evaluate?format=csv"])


def hostile_request(rng: random.Random) -> Request:
    """One request of the families the module docstring lists."""
    kind = rng.randrange(10)
    if kind == 0:
        return _surrogate(rng)
    if kind == 1:
        key = rng.choice(["scenario", "rows", "Scenarios", "candidates", "", "x\x1b[31m"])
        body = json.dumps({"scenarios": _rows(), key: rng.choice([1, [], "x", None])}).encode()
        return Request(_endpoint(rng), body, refuse=True, what=f"unknown top-level key {key!r}")
    if kind == 2:
        part = ("scenarios", ("a.json", json.dumps(_rows()).encode()))
        return Request(_endpoint(rng), files=[part, ("scenarios", ("b.json", json.dumps(_rows(2)).encode()))],
                       refuse=True, what="two scenarios parts")
    if kind == 3:
        path, bad = rng.choice([("/v1/evaluate", "formt=csv"), ("/v1/evaluate", "format=csv&format=json"),
                                ("/v1/explain", "row=1&row=1"), ("/v1/explain", "rows=1"),
                                ("/v1/uncertainty", "sample=100"), ("/v1/uncertainty", "samples=100&samples=200"),
                                ("/v1/evaluate", "Format=csv"), ("/v1/explain", "row=1&fromat=text")])
        return Request(f"{path}?{bad}", json.dumps(_rows()).encode(), refuse=True, what=f"query {bad}")
    if kind == 4:
        path = rng.choice(["/v1/plan", "/v1/explain", "/v1/explain?format=text", "/v1/compare", "/v1/retrofit"])
        return Request(path, json.dumps(_rows(rng.randint(2, 4))).encode(), refuse=True,
                       what="several rows without row")
    if kind in (5, 6):
        name = "".join(rng.choice(["a", " ", *ESCAPES]) for _ in range(rng.randint(1, 6)))
        row = {**GOLDEN, "name": name}
        return Request(rng.choice(["/v1/explain?format=text", "/v1/explain", "/v1/retrofit?explain=true"]),
                       json.dumps([row]).encode(), what="escapes in the name")
    if kind == 7:
        body = rng.choice([b"[{\"name\": \"\xff\xfe\"}]", b"\xef\xbb\xbf" + json.dumps(_rows()).encode(),
                           json.dumps(_rows()).encode().replace(b'"r0"', b'"r\xc3\x28"'),
                           json.dumps(_rows()).encode().replace(b'"r0"', b'"r\xed\xa0\x80"')])
        must = b"\xef\xbb\xbf" not in body
        return Request("/v1/evaluate", body, refuse=must, what="bytes that are not UTF-8" if must else "a BOM")
    if kind == 8:
        depth = rng.choice([1000, 100_000])
        body = rng.choice([b"[" * depth + b"]" * depth, (b'{"a":' * depth) + b"1" + b"}" * depth,
                           json.dumps([{**GOLDEN, "pue": 1}]).encode().replace(b"1}", b"[" * depth + b"]" * depth
                                                                              + b"}", 1)])
        return Request("/v1/evaluate", body, refuse=True, what=f"nested {depth:,} deep")
    name = rng.choice(FIELD_NAMES)
    text = generated_text(rng)
    refuse = reference(name, text)[0] == "bad"
    return Request(_endpoint(rng), json.dumps([{**GOLDEN, name: text}]).encode("utf-8", "surrogatepass"),
                   refuse=refuse, what=f"{name}={text[:80]!r}")


def check_answer(status: int, ctype: str, body: bytes, request: Request) -> list[tuple[str, str]]:
    """The failures one answer shows (module docstring)."""
    found: list[tuple[str, str]] = []
    if status == 500:
        found.append(("status 500", body.decode("utf-8", "replace")[:300]))
    elif status not in ALLOWED:
        found.append(("status other", f"{status}: {body.decode('utf-8', 'replace')[:300]}"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [*found, ("bad body", f"not UTF-8: {exc}")]
    if status >= 400 or ctype.startswith(JSON):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            return [*found, ("bad body", f"not JSON: {exc}; {text[:200]!r}")]
        if status >= 400:
            error = doc.get("error") if isinstance(doc, dict) else None
            if not (isinstance(doc, dict) and set(doc) >= {"version", "error"} and isinstance(error, dict)
                    and set(error) == {"status", "code", "message", "problems"} and error["status"] == status):
                found.append(("bad body", f"not the error shape: {text[:300]!r}"))
    if ctype.startswith("text/plain") and leaks(text):
        found.append(("escape leak", f"raw {', '.join(leaks(text))} in a text answer"))
    if status == 200 and request.refuse:
        found.append(("mismatch", f"200 for input the reference refuses ({request.what})"))
    return found


def api_case(stage: Stage, client: Any, rng: random.Random) -> None:
    """One generated request sent and its answer checked; its outcomes counted."""
    request = hostile_request(rng)
    start = time.perf_counter()
    try:
        if request.files is not None:
            r = client.post(request.path, files=request.files)
        else:
            r = client.post(request.path, content=request.body, headers={"content-type": request.ctype})
        found = [(f"status {r.status_code}", "")] + check_answer(r.status_code, r.headers.get("content-type", ""),
                                                                  r.content, request)
    except Exception as exc:  # noqa: BLE001 - the app must answer every request: what it raised is the finding
        found = [("traceback", "".join(traceback.format_exception(exc))[-1500:])]
    seconds = time.perf_counter() - start
    stage.cases += 1
    stage.slowest = max(stage.slowest, seconds)
    if seconds > 10:
        found.append(("slow >10 s", f"{seconds:.1f} s"))
    for outcome, detail in found:
        stage.counts[outcome] += 1
        if detail:
            stage.keep(outcome, [], {}, f"POST {request.path} ({request.what}): {detail}\n      body: "
                                        f"{request.body[:300]!r}")


def api_stage(cases: int, seed: int, tmp: Path, quick: bool = False) -> Stage:
    """The api stage: ``cases`` requests to one app in-process (``tmp`` and ``quick`` unused)."""
    from fastapi.testclient import TestClient  # noqa: PLC0415 - the api extra, only for this stage

    from economics.api import settings  # noqa: PLC0415
    from economics.api.app import create_app  # noqa: PLC0415

    rng, stage = stage_rng(seed, "api"), Stage("api")
    config = settings.Settings(max_body_mb=2, evaluate_workers=1, study_workers=1)
    with TestClient(create_app(config), raise_server_exceptions=False) as client:
        while stage.cases < cases:
            api_case(stage, client, rng)
    return stage
