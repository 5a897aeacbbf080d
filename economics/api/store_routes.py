"""The store over HTTP, under ``/v1/store``: scenarios with every version, curve files and studies
(:mod:`economics.store`, the database of ``TOKEN_ECONOMICS_DATABASE_URL``). The same error shape, body limit and
bearer token as every other route; a save based on a stale version is answered 409 naming the newer version.

The routes are plain functions (FastAPI runs them in its thread pool): a store operation is one short transaction.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from economics import store
from economics.api import openapi
from economics.api.errors import ApiError, Code, json_bytes
from economics.api.routes import _known_query
from economics.schema.values import shown
from economics.store import comparison, records, repository  # at the server's start, not on a first request
from economics.version import __version__

router = APIRouter(prefix="/v1/store", responses=openapi.ERROR_RESPONSES, dependencies=[Depends(_known_query)],
                   tags=["store"])
CODES: tuple[tuple[type[store.StoreError], Code], ...] = (
    (store.NotFound, Code.NOT_FOUND), (store.StaleVersion, Code.CONFLICT), (store.Conflict, Code.CONFLICT),
    (store.TooLarge, Code.TOO_LARGE), (store.StoreUnavailable, Code.STORE_UNAVAILABLE),
    (store.StoreError, Code.UNUSABLE_INPUT))
"""Each refusal of the store and the status it is answered with (the first that matches)."""
Name = Annotated[str, Query(max_length=records.NAME_CHARS)]
Limit = Annotated[int, Query(ge=1, le=records.MAX_VERSIONS_LISTED)]
Offset = Annotated[int, Query(ge=0, le=10**9)]


def _api_error(exc: store.StoreError) -> ApiError:
    code = next(c for kind, c in CODES if isinstance(exc, kind))
    return ApiError(code, str(exc), exc.problems)


def _store() -> repository.Store:
    try:
        return store.open_store()
    except store.StoreError as exc:
        raise _api_error(exc) from None


def _answer(doc: Any, status: int = 200) -> Response:
    return Response(json_bytes({"version": __version__, **doc}), status_code=status, media_type="application/json")


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, strictly (NaN and Infinity refused), naming what is wrong."""
    data = await request.body()
    try:
        doc = json.loads(data.decode("utf-8-sig"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ApiError(Code.UNUSABLE_INPUT, f"not a usable JSON body: {shown(str(exc), 200)}") from None
    if not isinstance(doc, dict):
        raise ApiError(Code.UNUSABLE_INPUT, "the body must be a JSON object")
    return doc


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _run(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except store.StoreError as exc:
        raise _api_error(exc) from None


def scenarios_document(search: str = "", project: str | None = None, limit: int = 100,
                       offset: int = 0) -> dict[str, Any]:
    """The listing ``GET /v1/store/scenarios`` answers (and the MCP tool ``list_scenarios``): the total and a page."""
    s = _store()
    found = _run(s.list_scenarios, search, project, limit, offset)
    return {"total": _run(s.count_scenarios, search, project), "scenarios": [x.as_json() for x in found]}


def scenario_document(name: str, version: int | None = None) -> dict[str, Any]:
    """One stored version with its fields, as ``GET /v1/store/scenarios/{name}`` answers (and ``get_scenario``)."""
    return {"scenario": _run(_store().scenario, name, version).as_json()}


SAVE_KEYS = ("name", "fields", "base_version", "note", "saved_by", "project")


def saved_document(body: dict[str, Any], saved_by: str = "api") -> dict[str, Any]:
    """Save the version a save's body describes (``POST /v1/store/scenarios``, the MCP tool ``save_scenario``):
    an unknown key or a base version that is not a whole number >= 0 is refused naming it; the store checks the
    rest. ``saved_by`` is who saves when the body names no one.
    """
    unknown = sorted(set(body) - set(SAVE_KEYS))
    if unknown:
        raise ApiError(Code.UNUSABLE_INPUT, f"{shown(unknown[0])}: unknown key; a save takes {', '.join(SAVE_KEYS)}",
                       [{"row": None, "field": shown(unknown[0]), "value": None, "message": "unknown key"}])
    base = body.get("base_version")
    if base is not None and (not isinstance(base, int) or isinstance(base, bool) or base < 0):
        message = f"base_version: must be a whole number >= 0, got {shown(base)}"
        raise ApiError(Code.UNUSABLE_INPUT, message, [{"row": None, "field": "base_version", "value": shown(base),
                                                       "message": message}])
    saved = _run(_store().save_scenario, body.get("name"), body.get("fields"), base, body.get("note") or "",
                 body.get("saved_by") or saved_by, body.get("project"))
    return {"scenario": saved.as_json()}


@router.get("/scenarios", summary="stored scenarios: name, project, newest version")
def list_scenarios(search: Annotated[str, Query(max_length=200)] = "", project: Name | None = None,
                   limit: Limit = 100, offset: Offset = 0) -> Response:
    """The stored scenarios whose name or project holds ``search`` (any case), of ``project``, by name."""
    return _answer(scenarios_document(search, project, limit, offset))


@router.post("/scenarios", summary="save the next version of a scenario", status_code=201)
async def save_scenario(request: Request) -> Response:
    """Body ``{"name", "fields", "base_version", "note", "saved_by", "project"}``: ``fields`` the scenario's fields
    (as a JSON scenario), ``base_version`` the version the change was made from (none for a new scenario); 409
    names the newer version when another save came first.
    """
    return _answer(saved_document(await _json_body(request)), 201)


@router.get("/scenarios/{name}", summary="one version of a stored scenario, with its fields")
def get_scenario(name: str, version: Annotated[int | None, Query(ge=1)] = None) -> Response:
    """The scenario ``name`` at ``version`` (default: its newest), its fields checked by the scenario schema."""
    return _answer(scenario_document(name, version))


@router.get("/scenarios/{name}/versions", summary="every version of a scenario: who, when, what changed")
def versions(name: str) -> Response:
    """The scenario's versions, newest first (without their fields)."""
    return _answer({"versions": [v.as_json() for v in _run(_store().history, name)]})


@router.get("/scenarios/{name}/compare", summary="two versions side by side: fields and KPIs")
def compare(name: str, a: Annotated[int, Query(ge=1)], b: Annotated[int, Query(ge=1)]) -> Response:
    """Versions ``a`` and ``b``: the fields that differ and each KPI's values, difference and relative change."""
    s = _store()
    return _answer(_run(comparison.compare, _run(s.scenario, name, a), _run(s.scenario, name, b)).as_json())


@router.delete("/scenarios/{name}", summary="delete a scenario with every version")
def delete_scenario(name: str) -> Response:
    """Delete the scenario ``name`` and all its versions; answers how many versions went."""
    return _answer({"deleted": name, "versions": _run(_store().delete_scenario, name)})


@router.post("/curves", summary="store a curve file (import-benchmark's CSV) by its SHA-256", status_code=201,
             openapi_extra=openapi.table_body())
async def save_curve(request: Request, name: Name = "curves.csv", saved_by: Name = "api",
                     project: Annotated[str, Query(max_length=records.PROJECT_CHARS)] = "") -> Response:
    """The body is the curve file's bytes (text/csv); it is checked, kept under its SHA-256 and never replaced.
    A scenario's ``curves_sha256`` then resolves on every request, after a restart too.
    """
    data = await request.body()
    return _answer({"curve": _run(_store().save_curve, data, name, saved_by, project).as_json()}, 201)


@router.get("/curves", summary="stored curve files")
def list_curves(limit: Limit = 1000) -> Response:
    """The stored curve files' records (hash, name, points, provenance), newest first."""
    return _answer({"curves": [c.as_json() for c in _run(_store().list_curves, limit)]})


@router.get("/curves/{sha256}", summary="a stored curve file's CSV")
def get_curve(sha256: str) -> Response:
    """The curve file's bytes as stored (checked again against its hash)."""
    return Response(_run(_store().curve_file, sha256).data, media_type="text/csv")


@router.post("/studies", summary="store a study or plan (never replaced)", status_code=201)
async def save_study(request: Request) -> Response:
    """Body ``{"name", "kind", "inputs", "results", "scenario", "note", "saved_by", "project"}``."""
    b = await _json_body(request)
    saved = _run(_store().save_study, b.get("name"), str(b.get("kind")), b.get("inputs") or {}, b.get("results"),
                 str(b.get("scenario") or ""), str(b.get("note") or ""), b.get("saved_by") or "api",
                 str(b.get("project") or ""))
    return _answer({"study": saved.as_json()}, 201)


@router.get("/studies", summary="stored studies")
def list_studies(search: Annotated[str, Query(max_length=200)] = "", kind: Name | None = None,
                 project: Name | None = None, limit: Limit = 100, offset: Offset = 0) -> Response:
    """The stored studies (without their inputs and results), by name."""
    return _answer({"studies": [x.as_json(whole=False) for x in _run(_store().list_studies, search, kind, project,
                                                                      limit, offset)]})


@router.get("/studies/{name}", summary="a stored study with its inputs and results")
def get_study(name: str) -> Response:
    """The study ``name``."""
    return _answer({"study": _run(_store().study, name).as_json()})


@router.delete("/studies/{name}", summary="delete a study")
def delete_study(name: str) -> JSONResponse:
    """Delete the study ``name``."""
    _run(_store().delete_study, name)
    return JSONResponse({"version": __version__, "deleted": name})
