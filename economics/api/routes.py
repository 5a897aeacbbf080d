"""The HTTP API's endpoints under ``/v1``: one per CLI command, each reading its body as the CLI reads a file
(:mod:`economics.api.bodies`) and computing in a worker process (:mod:`economics.api.tasks`).

Parameters are named as the CLI's options (``row``, ``format``, ``accelerators``, ...); a bad one is answered 422 in
the error shape, naming it.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from economics.api import openapi
from economics.api.bodies import request_parts
from economics.api.errors import ApiError, Code
from economics.api.tasks import MEDIA, catalog_document, catalog_names, catalog_text, fields_document
from economics.api.tasks import Request as Task
from economics.catalog import closest
from economics.io.benchmark_formats import BenchmarkFormat
from economics.io.documents import fields_markdown
from economics.io.output_paths import ExplainFormat, FieldsFormat, OutputFormat, RecordFormat, TableFormat
from economics.io.session_traces import TraceFormat
from economics.report.build import ReportKind
from economics.report.figures import checked_app_url
from economics.schema.scenario import Scenario
from economics.schema.values import shown
from economics.studies.plan_odds import DEFAULT_SAMPLES as DEFAULT_PLAN_SAMPLES
from economics.studies.plan_odds import MAX_PLAN_SAMPLES
from economics.studies.planner.inputs import FrontierChoice
from economics.studies.retrofit_odds import MAX_SAMPLES
from economics.studies.uncertainty import Distribution
from economics.version import __version__


async def _known_query(request: Request) -> None:
    """Refuse, by name, a query parameter the endpoint does not take (a typo would otherwise be ignored and the
    default used) and one given more than once (which of them counts would be a guess).
    """
    route = request.scope.get("route")
    known = [p.alias for p in getattr(getattr(route, "dependant", None), "query_params", [])]
    counts = Counter(name for name, _ in request.query_params.multi_items())
    problems: list[dict[str, Any]] = []
    for name, times in counts.items():
        if name not in known:
            guess = closest(name, known) if len(name) <= 100 and known else None
            takes = f"; this endpoint takes {', '.join(known)}" if known else "; this endpoint takes none"
            message = (f"{shown(name)}: unknown query parameter" + (f" (did you mean '{guess}'?)" if guess else "")
                       + takes)
        elif times > 1:
            message = f"{name}: given {times} times; give it once"
        else:
            continue
        problems.append({"row": None, "field": name, "value": request.query_params.get(name), "message": message})
    if problems:
        listed = "; ".join(p["message"] for p in problems[:10])
        raise ApiError(Code.UNUSABLE_INPUT, listed + (f" and {len(problems) - 10:,} more" if len(problems) > 10
                                                      else ""), problems)


router = APIRouter(prefix="/v1", responses=openapi.ERROR_RESPONSES, dependencies=[Depends(_known_query)])

Row = Annotated[str, Query(max_length=1000, description="the row's name, or its 1-based number; name:X or number:N "
                           "says which (default: the table's only row)")]
Accelerators = Annotated[str, Query(max_length=10_000, description="catalog accelerator ids, comma-separated "
                                    "(default: every one)")]


def _accelerators(text: str) -> list[str]:
    return [a.strip() for a in text.split(",") if a.strip()]


async def _compute(request: Request, pool: str, task: str, params: dict[str, Any]) -> Response:
    parts, fmt = await request_parts(request)
    answer = await request.app.state.pools[pool].run(Task(task, {**params, "input_format": fmt}, parts))
    return Response(answer.body, status_code=answer.status, media_type=answer.media_type)


class Health(BaseModel):
    """The server is up."""

    version: str = Field(description="the server's version")
    status: Literal["ok"]


@router.get("/health", summary="the server is up", tags=["reference"])
async def health() -> Health:
    """The server is up, its version; needs no token (for a load balancer)."""
    return Health(version=__version__, status="ok")


@router.head("/health", summary="the server is up (no body)", tags=["reference"],
             responses={200: {"description": "the server is up", "content": {"application/json": {}}}})
async def health_head() -> Response:
    """200 with no body: a load balancer's check that reads only the status; needs no token."""
    return Response(status_code=200, media_type="application/json")


@router.post("/evaluate", summary="evaluate a table of scenarios", tags=["compute"],
             openapi_extra=openapi.table_body(),
             responses={200: {"description": "every row evaluated", "model": list[openapi.ResultRow],
                              "content": {"text/csv": {}, "application/vnd.apache.parquet": {}}}})
async def evaluate(request: Request, format: TableFormat = TableFormat.JSON) -> Response:
    """Every scenario of the table evaluated, in the format asked for: what ``token-economics evaluate`` writes.
    A table with invalid rows is answered 422: every problem, and the valid rows' results beside them.
    """
    return await _compute(request, "evaluate", "evaluate", {"format": format.value})


@router.post("/explain", summary="the derivation of one row", tags=["compute"], openapi_extra=openapi.table_body(),
             responses=openapi.answers("the row's derivation", *ExplainFormat))
async def explain(request: Request, row: Row = "", format: ExplainFormat = ExplainFormat.JSON) -> Response:
    """Where each input of the row comes from, then every output's formula with the numbers substituted."""
    return await _compute(request, "evaluate", "explain", {"row": row, "format": format.value})


@router.post("/compare", summary="one row across accelerators", tags=["compute"], openapi_extra=openapi.table_body(),
             responses=openapi.answers("the row on each accelerator, ranked", *RecordFormat))
async def compare(request: Request, row: Row = "", accelerators: Accelerators = "",
                  format: RecordFormat = RecordFormat.JSON, uncertainty: bool = False,
                  samples: Annotated[int, Query(ge=1, le=MAX_SAMPLES, description="draws with uncertainty=true")]
                  = 10_000,
                  seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="seed of the draws")] = 0) -> Response:
    """The row's demand served by each accelerator, ranked by cost per million tokens; ``uncertainty=true`` the
    odds instead (each accelerator's estimated throughput and price, electricity and the cost of capital drawn
    ``samples`` times with ``seed``, the same draws for every accelerator: how often each is the cheapest per M
    tokens and its cost at P10/P50/P90, and the drivers).
    """
    return await _compute(request, "study" if uncertainty else "evaluate", "compare", {
        "row": row, "format": format.value, "accelerators": _accelerators(accelerators), "uncertainty": uncertainty,
        "samples": samples, "seed": seed})


@router.post("/session-profile", summary="a session row's speed across its turns", tags=["compute"],
             openapi_extra=openapi.table_body(),
             responses=openapi.answers("each turn", *RecordFormat))
async def session_profile(request: Request, row: Row = "", format: RecordFormat = RecordFormat.JSON) -> Response:
    """Each turn of the row's session (``workload=sessions``): the context it reads, its per-user decode speed and
    its time to first token; a request row is answered 422 naming ``workload``.
    """
    return await _compute(request, "evaluate", "session_profile", {"row": row, "format": format.value})


@router.post("/retrofit", summary="an existing fleet's retrofit options", tags=["studies"],
             openapi_extra=openapi.table_body(),
             responses=openapi.answers("the options (explain: the derivation as text)", *RecordFormat,
                                       OutputFormat.TEXT))
async def retrofit(request: Request, row: Row = "", format: RecordFormat = RecordFormat.JSON,
                   explain: bool = False, uncertainty: bool = False, refresh: bool = False,
                   samples: Annotated[int, Query(ge=1, le=MAX_SAMPLES, description="draws with uncertainty=true")]
                   = 10_000,
                   seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="seed of the draws")] = 0) -> Response:
    """Status quo, add decode accelerators, more of the same, a new generation: NPV, IRR, payback, cash flows and
    the break-even decode accelerator price; ``explain=true`` gives the study's derivation as text;
    ``uncertainty=true`` the odds instead (every ranged input drawn ``samples`` times with ``seed``: per option NPV,
    IRR and payback at P10/P50/P90 and how often it is the best, each pair's odds, the tornado, the drivers);
    ``refresh=true`` the NPV of keeping the existing fleet N years then replacing it by the new generation, per N,
    and the best year.
    """
    return await _compute(request, "study", "retrofit", {"row": row, "format": format.value, "explain": explain,
                                                         "uncertainty": uncertainty, "refresh": refresh,
                                                         "samples": samples,
                                                         "seed": seed})


@router.post("/kv-memory", summary="more memory or more accelerators for a target of agents", tags=["studies"],
             openapi_extra=openapi.table_body(),
             responses=openapi.answers("the options, ranked", *RecordFormat))
async def kv_memory(request: Request, agents: Annotated[int, Query(ge=1, le=10**12, description="the target number "
                                                                   "of concurrent agents (sessions) at the SLO")],
                    row: Row = "", format: RecordFormat = RecordFormat.JSON) -> Response:
    """For a session row and a target of concurrent agents at its SLO: the smallest addition of host DRAM, SSD or a
    remote KV store to the current fleet, and the systems needed without one, each with its cost per session, cost
    per day and agents held, ranked by cost per session; the cheapest and why.
    """
    return await _compute(request, "study", "kv_memory", {"row": row, "agents": agents, "format": format.value})


@router.post("/uncertainty", summary="tornado and Monte Carlo over a row's ranges", tags=["studies"],
             openapi_extra=openapi.table_body(),
             responses=openapi.answers("the tornado and the Monte Carlo summary", *RecordFormat))
async def uncertainty(request: Request, row: Row = "", output_field: str = "cost_usd_per_m_tokens",
                      samples: Annotated[int, Query(ge=1, le=1_000_000)] = 10_000,
                      seed: Annotated[int, Query(ge=0, le=2**32 - 1)] = 0,
                      distribution: Distribution = Distribution.TRIANGULAR, default_ranges: bool = False,
                      format: RecordFormat = RecordFormat.JSON) -> Response:
    """The tornado of ``output_field`` and the Monte Carlo summary over the row's ``<field>_low``/``<field>_high``
    columns (with ``default_ranges`` the Uncertainty page's ranges where it gives none).
    """
    most = request.app.state.settings.max_samples
    if samples > most:
        raise ApiError(Code.UNUSABLE_INPUT, f"samples: at most {most:,} on this server, got {samples:,}",
                       [{"row": None, "field": "samples", "value": samples,
                         "message": f"samples: must be <= {most:,} on this server"}])
    return await _compute(request, "study", "uncertainty", {
        "row": row, "output_field": output_field, "samples": samples, "seed": seed, "distribution": distribution.value,
        "default_ranges": default_ranges, "format": format.value})


@router.post("/plan", summary="the cheapest fleet for a row's demand", tags=["studies"],
             openapi_extra=openapi.table_body(),
             responses=openapi.answers("the plan, or feasible false and the diagnosis", *RecordFormat))
async def plan(request: Request, row: Row = "", accelerators: Accelerators = "",
               frontier: FrontierChoice = FrontierChoice.NONE,
               format: RecordFormat = RecordFormat.JSON, uncertainty: bool = False,
               samples: Annotated[int, Query(ge=1, le=MAX_PLAN_SAMPLES, description="draws with uncertainty=true "
                                             "(two solves each)")] = DEFAULT_PLAN_SAMPLES,
               seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="seed of the draws")] = 0) -> Response:
    """Prefill and decode pools, owned and rented, with the existing fleet, for the row's demand, targets and
    facility; 200 with ``feasible: false`` and the diagnosis when no plan serves it. ``uncertainty=true`` adds the
    plan's odds (``odds``, ``odds_mixes``, ``odds_drivers``): each candidate accelerator's estimated throughput drawn
    ``samples`` times, the plan solved again in each draw.
    """
    return await _compute(request, "study", "plan", {"row": row, "accelerators": _accelerators(accelerators),
                                                     "frontier": frontier.value, "format": format.value,
                                                     "uncertainty": uncertainty, "samples": samples, "seed": seed})


@router.post("/report", summary="a row's board report (PDF)", tags=["studies"],
             openapi_extra=openapi.table_body(), responses=openapi.answers("the report", OutputFormat.PDF))
async def report(request: Request, row: Row = "", kind: ReportKind = ReportKind.COST,
                 baseline: Row = "", accelerators: Accelerators = "",
                 frontier: FrontierChoice = FrontierChoice.NONE,
                 app_url: Annotated[str, Query(max_length=500)] = "") -> Response:
    """The board report of the row as ``token-economics report`` makes it: the page's KPIs (with changes against
    ``baseline``), its charts, the assumptions with their sources, the tornado, the derivation and the link that
    reproduces it; ``kind=plan`` plans the row first (its planner columns, the candidates). ``app_url`` must be an
    ``http://`` or ``https://`` address (422 otherwise).
    """
    if app_url:
        try:
            checked_app_url(app_url)
        except ValueError as exc:
            raise ApiError(Code.UNUSABLE_INPUT, f"app_url: {exc}", [{"row": None, "field": "app_url",
                                                                      "value": app_url,
                                                                      "message": f"app_url: {exc}"}]) from None
    return await _compute(request, "study", "report", {
        "row": row, "kind": kind.value, "baseline": baseline, "accelerators": _accelerators(accelerators),
        "frontier": frontier.value, "app_url": app_url})


@router.post("/import-benchmark", summary="benchmark results as a curve file", tags=["compute"],
             openapi_extra=openapi.files_body(), responses=openapi.answers("the curve file", *RecordFormat))
async def import_benchmark(request: Request, accelerator: Annotated[str, Query(max_length=200)] = "",
                           accelerators: Annotated[int | None, Query(ge=1, le=100_000)] = None,
                           model: Annotated[str, Query(max_length=200)] = "",
                           precision: Annotated[str, Query(max_length=20)] = "",
                           benchmark_format: BenchmarkFormat = BenchmarkFormat.AUTO,
                           curve_id: Annotated[str, Query(max_length=200)] = "",
                           skip_bad_rows: bool = False,
                           input_tokens: Annotated[float | None, Query(gt=0, le=1e7)] = None,
                           output_tokens: Annotated[float | None, Query(gt=0, le=1e7)] = None,
                           format: RecordFormat = RecordFormat.CSV) -> Response:
    """vLLM, SGLang, GenAI-Perf, AIPerf, GuideLLM, InferenceX or MLPerf results (form field ``files``) as the curve
    file the other endpoints take as ``curves``.
    """
    return await _compute(request, "study", "import_benchmark", {
        "accelerator": accelerator, "accelerators": accelerators, "model": model, "precision": precision,
        "benchmark_format": benchmark_format.value, "curve_id": curve_id, "skip_bad_rows": skip_bad_rows,
        "input_tokens": input_tokens, "output_tokens": output_tokens, "format": format.value})


@router.post("/import-sessions", summary="a session trace or multi-turn benchmark as a sessions row",
             tags=["compute"], openapi_extra=openapi.files_body(),
             responses=openapi.answers("the scenario row", *RecordFormat))
async def import_sessions(request: Request,
                          trace_format: TraceFormat = TraceFormat.AUTO,
                          session_prefix_tokens: Annotated[float | None, Query(ge=0, le=1e8)] = None,
                          seconds_between_turns: Annotated[float | None, Query(gt=0, le=1e7)] = None,
                          block_tokens: Annotated[float, Query(gt=0, le=1e6)] = 512,
                          num_rounds: Annotated[int | None, Query(ge=1, le=100_000)] = None,
                          request_length: Annotated[float | None, Query(gt=0, le=1e8)] = None,
                          output_length: Annotated[float | None, Query(gt=0, le=1e8)] = None,
                          run: Annotated[int | None, Query(ge=1)] = None,
                          format: RecordFormat = RecordFormat.JSON) -> Response:
    """A Mooncake session trace (JSONL), vLLM's multi-turn benchmark ``--stats-json-output`` or SGLang's
    ``bench_multiturn.py`` log (form field ``files``, one file) as one ``workload=sessions`` scenario row, with its
    provenance, as ``import-sessions`` (SGLang's log: ``num_rounds``, ``request_length``, ``output_length`` as the
    run used them, ``run`` the line where it holds several).
    """
    return await _compute(request, "study", "import_sessions", {
        "trace_format": trace_format.value, "session_prefix_tokens": session_prefix_tokens,
        "seconds_between_turns": seconds_between_turns, "block_tokens": block_tokens, "num_rounds": num_rounds,
        "request_length": request_length, "output_length": output_length, "run": run, "format": format.value})


@router.get("/fields", summary="the input fields and outputs", tags=["reference"],
            responses=openapi.answers("the fields and outputs", *FieldsFormat))
async def fields(format: FieldsFormat = FieldsFormat.JSON) -> Response:
    """Every scenario field (type, unit, default, bounds, description) and every output (unit, label,
    description): the tables ``token-economics fields`` prints.
    """
    if format is FieldsFormat.MARKDOWN:
        return Response(fields_markdown(), media_type=MEDIA[OutputFormat.MARKDOWN])
    return JSONResponse(fields_document())


@router.get("/schema", summary="the JSON schema of a scenario", tags=["reference"])
async def schema() -> dict[str, Any]:
    """The JSON schema of a scenario, as ``token-economics schema`` prints it."""
    return Scenario.model_json_schema()


@router.get("/catalogs", summary="the catalogs", tags=["reference"])
async def catalogs() -> dict[str, Any]:
    """The catalogs the engine reads (accelerators, models, throughput curves and claims, prices, defaults...);
    every row of each carries its source URL, the date it was read and a confidence tag.
    """
    return {"version": __version__, "catalogs": catalog_names()}


@router.get("/catalogs/{name}", summary="one catalog with its sources", tags=["reference"],
            responses=openapi.answers("the catalog's rows", *RecordFormat))
async def catalog(name: str, format: RecordFormat = RecordFormat.JSON) -> Response:
    """Every row of the catalog ``name`` as stored (each cell as text), its sources included."""
    if format is RecordFormat.CSV:
        return Response(catalog_text(name), media_type=MEDIA[OutputFormat.CSV])
    return JSONResponse(catalog_document(name))
