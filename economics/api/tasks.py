"""What each HTTP endpoint computes, as the CLI's commands compute it: a function of the request's parts (the bytes
of its table, candidates, curves or benchmark files) and its parameters, answering bytes and a media type.

They run inside the worker processes (:mod:`economics.api.workers`), one request at a time, so a computation past
its time limit can be stopped by ending its process. Every failure is an :class:`~economics.api.errors.ApiError`
(:func:`run` turns the library's own exceptions into one), never a trace.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from economics import store
from economics.api.errors import ApiError, Code, json_bytes, problem
from economics.catalog import accelerator_ids, closest, data_dir, unknown_id_message
from economics.engine.batch import ScenarioError, as_scenario, evaluate_scenario, explain_row
from economics.engine.provenance import provenance_text
from economics.io import benchmarks, one_row, session_traces, tables
from economics.io.one_row import InvalidRow
from economics.io.output_paths import OutputFormat
from economics.io.plan_files import (
    PLAN_TABLE,
    InvalidPlanRow,
    plan_csv_text,
    plan_from_files,
    solver_chatter_silenced,
)
from economics.io.reading import SCENARIO_COLUMNS, Columns
from economics.io.scenario_files import to_csv_text, to_json_text
from economics.report import figures
from economics.report import files as report_files
from economics.report.build import ReportKind
from economics.schema import user_curves
from economics.schema.outputs import NUMERIC_OUTPUTS, OUTPUTS
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError
from economics.schema.values import escape_for_terminal, shown
from economics.studies import retrofit_odds
from economics.studies.compare import compare_accelerators
from economics.studies.compare_odds import compare_odds
from economics.studies.kv_memory import kv_memory_study, study_json
from economics.studies.planner.inputs import FrontierChoice
from economics.studies.retrofit import analyse, break_even_decode_price_usd
from economics.studies.retrofit_decode import decode_table
from economics.studies.retrofit_explain import shortfall_notes, study_text
from economics.studies.retrofit_life import best_year, refresh
from economics.studies.uncertainty import Distribution, default_ranges, monte_carlo, ranges_from_row, tornado
from economics.version import __version__

MEDIA: dict[OutputFormat, str] = {
    OutputFormat.JSON: "application/json", OutputFormat.CSV: "text/csv; charset=utf-8",
    OutputFormat.PARQUET: "application/vnd.apache.parquet", OutputFormat.TEXT: "text/plain; charset=utf-8",
    OutputFormat.MARKDOWN: "text/markdown; charset=utf-8", OutputFormat.PDF: "application/pdf"}
"""The media type of each answer format (every :class:`~economics.io.output_paths.OutputFormat` has one)."""


@dataclass
class Request:
    """One computation: the task's name, its parameters (JSON values) and its parts (name -> list of (file name,
    bytes)): ``scenarios``, ``candidates``, ``curves``, ``files``.
    """

    task: str
    params: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)

    def one(self, name: str) -> bytes | None:
        """The bytes of the single part ``name``, or None."""
        got = self.parts.get(name) or []
        return got[0][1] if got else None


@dataclass
class Answer:
    """A computation's answer: HTTP status, media type and body."""

    status: int
    media_type: str
    body: bytes


def _json(doc: dict[str, Any]) -> Answer:
    return Answer(200, MEDIA[OutputFormat.JSON], json_bytes({"version": __version__, **doc}))


def _table(req: Request) -> bytes:
    data = req.one("scenarios")
    if data is None:
        raise ApiError(Code.UNUSABLE_INPUT, "no scenarios: send a table (JSON, CSV or Parquet) as the body, or as "
                       "the form field 'scenarios'")
    return data


def _curves(req: Request) -> str:
    """The curve file sent with the request (form field ``curves``) loaded in this worker; its hash, or ''."""
    data = req.one("curves")
    if data is None:
        return ""
    name = (req.parts.get("curves") or [("curves.csv", b"")])[0][0]
    try:
        return user_curves.load(data, name or "curves.csv").sha256
    except user_curves.CurveFileError as exc:
        raise ApiError(Code.UNUSABLE_INPUT, f"curves: {exc}") from None


def evaluate(req: Request, max_rows: int) -> Answer:
    """Every scenario evaluated, as ``evaluate`` writes them (the same writer: the CLI's bytes for CSV and Parquet,
    its records for JSON); 422 with the valid rows' results and every problem when a row is invalid.
    """
    fmt = OutputFormat(req.params.get("format") or OutputFormat.JSON)
    frames: list[pd.DataFrame] = []

    def kept(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        result, report = one_row.evaluate_chunk(df, curves)
        frames.append(result)
        return result, report

    curves = _curves(req)
    out = io.BytesIO()
    chunks = tables.read_chunks(_table(req), req.params.get("input_format"), max_rows=max_rows)
    totals = tables.stream(chunks, kept, tables.TableWriter("-", fmt, out))
    if not totals.invalid:
        return Answer(200, MEDIA[fmt], out.getvalue())
    whole = pd.concat(frames, ignore_index=True)
    valid = whole[whole["valid"].astype(bool)]
    results = (json.loads(to_json_text(valid)) if fmt is not OutputFormat.JSON
               else [r for r in json.loads(out.getvalue()) if r.get("valid")])
    raise ApiError(Code.INVALID_ROWS, f"{totals.invalid:,} of {totals.rows:,} rows invalid; the valid rows were "
                   "evaluated", [problem(*r) for r in totals.report.itertuples(index=False, name=None)], results)


def _row_named(req: Request, data: bytes, columns: Columns = SCENARIO_COLUMNS) -> str:
    """The ``row`` parameter; when none is given, ``number:1`` if the table holds exactly one row, else a refusal
    naming how many it holds (a row is never picked for the client).
    """
    row = str(req.params.get("row") or "")
    if row:
        return row
    rows = sum(len(chunk) for chunk in tables.read_chunks(data, req.params.get("input_format"), columns=columns))
    if rows != 1:
        message = f"row: the table has {rows:,} rows; give the row's name or number (row=NAME, row=number:N)"
        raise ApiError(Code.UNUSABLE_INPUT, message, [{"row": None, "field": "row", "value": "",
                                                       "message": message}])
    return "number:1"


def _row(req: Request) -> one_row.ChosenRow:
    """The row ``row`` names or numbers; with no ``row``, the table's only row."""
    data = _table(req)
    return one_row.chosen_row(data, _row_named(req, data), _curves(req))


def _accelerators(req: Request) -> list[str]:
    ids = [a.strip().lower() for a in req.params.get("accelerators") or [] if a.strip()]
    unknown = [a for a in ids if a not in accelerator_ids()]
    if unknown:
        raise ApiError(Code.UNUSABLE_INPUT, unknown_id_message("accelerators", shown(unknown[0]), accelerator_ids()))
    return ids


def explain(req: Request) -> Answer:
    """Where each input of the row comes from, and its derivation with the numbers substituted (``explain``)."""
    chosen = _row(req)
    one = chosen.frame
    try:
        trace = explain_row(one[[c for c in one.columns if str(c) in FIELDS]], 0)
    except ScenarioError as exc:
        raise one_row.invalid(one, chosen.position, exc.problems) from None
    provenance = provenance_text(chosen.fields)
    if req.params.get("format") == OutputFormat.TEXT:  # a report for people, escaped as the CLI's (no raw escapes)
        text = escape_for_terminal(provenance + "\n\n" + trace.text() + "\n")
        return Answer(200, MEDIA[OutputFormat.TEXT], text.encode())
    return _json({"name": str(chosen.cells.get("name", "")), "provenance": provenance, "derivation": trace.text()})


def _notes(chosen: one_row.ChosenRow, command: str) -> list[str]:
    return [n for n in (chosen.note, one_row.ranges_note(chosen.cells, command)) if n]


def compare(req: Request) -> Answer:
    """The row's demand on each accelerator asked for (default: every catalog accelerator), as ``compare``."""
    chosen = _row(req)
    ids = _accelerators(req) or accelerator_ids()
    if req.params.get("uncertainty"):
        return _compare_odds(req, chosen, ids)
    try:
        table = compare_accelerators(chosen.fields, ids)
    except ScenarioError as exc:
        raise InvalidRow([str(exc)]) from None
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], to_csv_text(table).encode())
    return _json({"notes": _notes(chosen, "compare"), "results": json.loads(to_json_text(table))})


def _compare_odds(req: Request, chosen: Any, ids: list[str]) -> Answer:
    """``compare`` with ``uncertainty``: the tables ``compare --uncertainty`` writes (CSV one after the other, or
    JSON with the headline and every range no source gives among the notes).
    """
    try:
        found = compare_odds(chosen.fields, ids, samples=int(req.params.get("samples", 10_000)),
                             seed=int(req.params.get("seed", 0)))
    except ValueError as exc:
        raise InvalidRow([str(exc)]) from None
    if req.params.get("format") == OutputFormat.CSV:
        text = to_csv_text(found.table) + "\n" + to_csv_text(found.drivers)
        return Answer(200, MEDIA[OutputFormat.CSV], text.encode())
    notes = [found.headline(), *(f"assumption: {line}" for line in found.assumptions())]
    return _json({"notes": _notes(chosen, "compare") + notes, "samples": found.samples, "seed": found.seed,
                  "odds": json.loads(to_json_text(found.table)), "drivers": json.loads(to_json_text(found.drivers))})


def session_profile(req: Request) -> Answer:
    """A session row's speed across its turns (context, per-user speed, TTFT), as ``session-profile``."""
    chosen = _row(req)
    table = one_row.profile(chosen)
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], to_csv_text(table).encode())
    return _json({"notes": _notes(chosen, "session-profile"), "turns": json.loads(to_json_text(table))})


def retrofit(req: Request) -> Answer:
    """The row's retrofit options, their cash flows and the break-even decode price, as ``retrofit``; with
    ``explain`` the study's derivation as text.
    """
    chosen = _row(req)
    try:
        result = analyse(chosen.fields)
        price = break_even_decode_price_usd(chosen.fields)
    except ValueError as exc:  # ScenarioError, or a field the study needs (the existing fleet's size)
        raise InvalidRow([str(exc)]) from None
    if req.params.get("uncertainty"):
        return _retrofit_odds(req, chosen, result)
    if req.params.get("refresh"):
        return _retrofit_refresh(req, chosen, result)
    if req.params.get("explain"):
        text = escape_for_terminal(study_text(result, as_scenario(chosen.fields)))
        return Answer(200, MEDIA[OutputFormat.TEXT], text.encode())
    if req.params.get("format") == OutputFormat.CSV:
        text = to_csv_text(result.options) + "\n" + to_csv_text(result.cashflows)
        text += f"\nbreak_even_decode_price_usd,{'' if price is None else round(price, 2)}\n"
        return Answer(200, MEDIA[OutputFormat.CSV], text.encode())
    return _json({"notes": _notes(chosen, "retrofit") + shortfall_notes(result),
                  "options": json.loads(to_json_text(result.options)),
                  "cashflows": json.loads(to_json_text(result.cashflows)), "break_even_decode_price_usd": price,
                  "decode_accelerators": json.loads(to_json_text(decode_table(as_scenario(chosen.fields))))})


def _retrofit_refresh(req: Request, chosen: Any, result: Any) -> Answer:
    """``retrofit`` with ``refresh``: the table ``retrofit --refresh`` writes (CSV, or JSON with the best year)."""
    table = refresh(result, as_scenario(chosen.fields))
    if table.empty:
        raise InvalidRow(["new_accelerator: the refresh replaces the fleet by the new generation; give a "
                          "new_accelerator whose 'new generation' option is feasible"])
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], to_csv_text(table).encode())
    return _json({"notes": _notes(chosen, "retrofit") + shortfall_notes(result), "best_kept_years": best_year(table),
                  "refresh": json.loads(to_json_text(table))})


def _retrofit_odds(req: Request, chosen: Any, result: Any) -> Answer:
    """``retrofit`` with ``uncertainty``: the tables ``retrofit --uncertainty`` writes (CSV one after the other, or
    JSON with the headline and every range no source gives among the notes).
    """
    try:
        found = retrofit_odds.odds(chosen.fields, samples=int(req.params.get("samples", 10_000)),
                                   seed=int(req.params.get("seed", 0)), point=result)
    except ValueError as exc:
        raise InvalidRow([str(exc)]) from None
    tables = found.tables()
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], "\n".join(to_csv_text(t) for t in tables.values()).encode())
    notes = [found.headline(), *(f"assumption: {line}" for line in found.assumptions())]
    return _json({"notes": _notes(chosen, "retrofit") + shortfall_notes(result) + notes, "samples": found.samples,
                  "seed": found.seed, "leading": list(found.leading or []),
                  **{name: json.loads(to_json_text(t)) for name, t in tables.items()}})


def kv_memory(req: Request) -> Answer:
    """For ``agents`` concurrent agents at the row's SLO, each KV tier's smallest addition and the systems needed,
    ranked, as ``kv-memory``: JSON (the current fleet, the options, the cheapest and why) or the options table as CSV.
    """
    chosen = _row(req)
    try:
        study = kv_memory_study(chosen.fields, float(req.params["agents"]))
    except ValueError as exc:  # ScenarioError, or a row the study does not take (not sessions, no fleet)
        raise InvalidRow([str(exc)]) from None
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], to_csv_text(study.table).encode())
    doc = json.loads(study_json(study))
    return _json({"notes": _notes(chosen, "kv-memory"), **doc})


def uncertainty(req: Request) -> Answer:
    """The tornado of ``output_field`` and the Monte Carlo summary over the row's ranges, as ``uncertainty``."""
    output = str(req.params.get("output_field") or "cost_usd_per_m_tokens")
    if output not in NUMERIC_OUTPUTS:
        guess = closest(output, list(NUMERIC_OUTPUTS)) if len(output) <= 100 else None
        raise ApiError(Code.UNUSABLE_INPUT, f"output_field: '{shown(output)}' is not a numeric output"
                       + (f"; did you mean '{guess}'?" if guess else "") + " (GET /v1/fields lists the outputs)")
    chosen = _row(req)
    samples, seed = int(req.params.get("samples", 10_000)), int(req.params.get("seed", 0))
    distribution = Distribution(req.params.get("distribution") or Distribution.TRIANGULAR)  # the route took a member
    try:
        ranges = ranges_from_row(chosen.cells)
        if req.params.get("default_ranges"):
            ranges = default_ranges(evaluate_scenario(as_scenario(chosen.fields)), dict(ranges))
        if not ranges:
            raise ApiError(Code.UNUSABLE_INPUT, "no ranges: add <field>_low and <field>_high columns (e.g. "
                           "electricity_usd_per_kwh_low), or set default_ranges=true")
        sens = tornado(chosen.fields, ranges, output)
        mc = monte_carlo(chosen.fields, ranges, samples, seed, distribution)
    except ScenarioError as exc:
        raise InvalidRow([str(exc)]) from None
    if req.params.get("format") == OutputFormat.CSV:
        text = (f"tornado ({output}, one field at a time):\n" + to_csv_text(sens) + "\n"
                f"Monte Carlo ({samples:,} samples, {distribution}, seed {seed}):\n" + to_csv_text(mc.summary))
        return Answer(200, MEDIA[OutputFormat.CSV], text.encode())
    return _json({"output_field": output, "samples": samples, "seed": seed, "distribution": distribution,
                  "tornado": json.loads(to_json_text(sens)), "monte_carlo": json.loads(to_json_text(mc.summary))})


def _plan_parts(req: Request) -> tuple[bytes, bytes | None]:
    """The plan row's table and the candidates: form fields, or one JSON body ``{"scenarios": [...],
    "candidates": [...]}``.
    """
    data, candidates = _table(req), req.one("candidates")
    if candidates is None and data.lstrip()[:1] == b"{":
        try:
            doc = json.loads(data)
        except ValueError:
            return data, None  # the reader names what is wrong with it
        if isinstance(doc, dict) and "candidates" in doc:
            candidates = json.dumps(doc.pop("candidates")).encode()
            data = json.dumps(doc).encode()
    return data, candidates


def plan(req: Request) -> Answer:
    """The cheapest fleet for the row's demand (and its frontiers), as ``plan``: 200 with ``feasible`` false and
    the diagnosis when no plan serves the demand (a plan is data).
    """
    data, candidates = _plan_parts(req)
    row = _row_named(req, data, PLAN_TABLE)
    try:
        with solver_chatter_silenced():
            odds = (int(req.params.get("samples", 100)), int(req.params.get("seed", 0)))
            frontier = str(req.params.get("frontier") or FrontierChoice.NONE)
            out = plan_from_files(data, row, candidates, _accelerators(req), frontier, _curves(req),
                                  odds if req.params.get("uncertainty") else None)
    except InvalidPlanRow as exc:
        raise InvalidRow(str(exc).splitlines()) from None
    if req.params.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], plan_csv_text(out).encode())
    return _json(out)


def report(req: Request) -> Answer:
    """The board report of a row as a PDF, as ``report``: ``kind`` cost, fleet, sessions, decode or plan (the row's
    planner columns and the candidates, planned as ``plan`` plans them), ``baseline`` another row of the same table.
    """
    kind, baseline_row = ReportKind(str(req.params.get("kind") or ReportKind.COST)), req.params.get("baseline") or None
    app_url = str(req.params.get("app_url") or figures.DEFAULT_APP_URL)
    if kind is ReportKind.PLAN:
        data, candidates = _plan_parts(req)
        try:
            pdf, _ = report_files.plan_report(data, _row_named(req, data, PLAN_TABLE), baseline_row,
                                              candidates, _accelerators(req),
                                              str(req.params.get("frontier") or FrontierChoice.NONE), _curves(req),
                                              app_url)
        except InvalidPlanRow as exc:
            raise InvalidRow(str(exc).splitlines()) from None
        return Answer(200, MEDIA[OutputFormat.PDF], pdf)
    chosen = _row(req)
    baseline = None if baseline_row is None else one_row.chosen_row(_table(req), str(baseline_row), _curves(req))
    try:
        pdf = report_files.row_report(kind, chosen.fields, None if baseline is None else baseline.fields, app_url)
    except ScenarioError as exc:  # the row named, as every one-row endpoint names it
        raise one_row.invalid(chosen.frame, chosen.position, exc.problems) from None
    except ValueError as exc:  # ScenarioError, or a field the study needs (the existing fleet's size)
        raise InvalidRow([str(exc)]) from None
    return Answer(200, MEDIA[OutputFormat.PDF], pdf)


def import_benchmark(req: Request) -> Answer:
    """Benchmark files (form field ``files``) as a curve file, as ``import-benchmark``: CSV, or JSON with notes."""
    files = req.parts.get("files") or []
    if not files:
        raise ApiError(Code.UNUSABLE_INPUT, "files: send one or more benchmark result files as the form field 'files'")
    p = req.params
    skipped: list[str] | None = [] if p.get("skip_bad_rows") else None
    try:
        table = benchmarks.import_benchmark([(name or f"file {i + 1}", data) for i, (name, data) in enumerate(files)],
                                            p.get("accelerator") or "", p.get("accelerators"), p.get("model") or "",
                                            p.get("precision") or "",
                                            p.get("benchmark_format") or benchmarks.BenchmarkFormat.AUTO,
                                            p.get("curve_id") or "", skipped, p.get("input_tokens"),
                                            p.get("output_tokens"))
    except benchmarks.BenchmarkError as exc:
        raise ApiError(Code.UNUSABLE_INPUT, str(exc)) from None
    text = benchmarks.curves_csv(table)
    if p.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], text.encode())
    return _json({"points": len(table), "curves": int(table["curve_id"].nunique()), "skipped": skipped or [],
                  "curves_csv": text})


def import_sessions(req: Request) -> Answer:
    """A session trace or multi-turn benchmark stats (form field ``files``, one file) as a scenario row, as
    ``import-sessions``: CSV, or JSON with the provenance and the measured profile by turn.
    """
    files = req.parts.get("files") or []
    if len(files) != 1:
        raise ApiError(Code.UNUSABLE_INPUT, f"files: send one trace or stats file as the form field 'files' "
                                            f"({len(files)} sent)")
    name, data = files[0]
    p = req.params
    try:
        result = session_traces.import_sessions((name or "file 1", data),
                                                p.get("trace_format") or session_traces.TraceFormat.AUTO,
                                                p.get("session_prefix_tokens"), p.get("seconds_between_turns"),
                                                p.get("block_tokens") or session_traces.MOONCAKE_BLOCK_TOKENS,
                                                session_traces.RunShape(p.get("num_rounds"), p.get("request_length"),
                                                                        p.get("output_length"), p.get("run")))
    except benchmarks.BenchmarkError as exc:
        raise ApiError(Code.UNUSABLE_INPUT, str(exc)) from None
    if p.get("format") == OutputFormat.CSV:
        return Answer(200, MEDIA[OutputFormat.CSV], to_csv_text(result.row).encode())
    return _json({"scenarios": json.loads(to_json_text(result.row)), "provenance": result.provenance,
                  "measured_by_turn": json.loads(result.profile.to_json(orient="records"))})


def fields_document() -> dict[str, Any]:
    """Every scenario field (type, unit, default, bounds, description) and every output (unit, label, description):
    ``GET /v1/fields`` and the MCP tool ``fields``.
    """
    inputs = [{"name": f.name, "kind": f.kind.value, "unit": f.unit, "default": f.default, "optional": f.optional,
               "choices": list(f.choices), "ge": f.ge, "gt": f.gt, "le": f.le, "lt": f.lt, "group": f.group,
               "label": f.label, "description": f.description} for f in FIELDS.values()]
    outputs = [{"name": o.name, "unit": o.unit, "label": o.label, "description": o.description,
                "optional": o.optional, "integer": o.integer, "numeric": o.numeric} for o in OUTPUTS.values()]
    return {"version": __version__, "fields": inputs, "outputs": outputs}


def catalog_names() -> list[str]:
    """The catalogs the engine reads, by name (``accelerators``, ``models``, ...)."""
    return sorted(p.stem for p in data_dir().glob("*.csv"))


def catalog_text(name: str) -> str:
    """The catalog ``name`` as stored (CSV); :class:`ApiError` NOT_FOUND naming it when there is none."""
    if name not in catalog_names():
        raise ApiError(Code.NOT_FOUND, f"no catalog '{shown(name, 100)}': GET /v1/catalogs (or the MCP tool catalog "
                       "with no name) lists them")
    return (data_dir() / f"{name}.csv").read_text(encoding="utf-8")


def catalog_document(name: str) -> dict[str, Any]:
    """Every row of the catalog ``name`` as stored (each cell as text), its sources included."""
    rows = list(csv.DictReader(io.StringIO(catalog_text(name))))
    return {"version": __version__, "name": name, "rows": rows}


TASKS: dict[str, Callable[..., Answer]] = {"evaluate": evaluate, "explain": explain, "compare": compare,
                                           "session_profile": session_profile,
                                           "retrofit": retrofit, "kv_memory": kv_memory,
                                           "uncertainty": uncertainty, "plan": plan,
                                           "report": report, "import_benchmark": import_benchmark,
                                           "import_sessions": import_sessions}
"""Each endpoint's computation, by the name the app sends."""


def _failure(exc: BaseException) -> ApiError:
    """The error-shape failure of an exception the library raised."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, InvalidRow):
        return ApiError(Code.INVALID_ROWS, exc.lines[0] if len(exc.lines) == 1 else
                        f"the row is invalid ({len(exc.lines)} problems): " + "; ".join(exc.lines), exc.problems)
    if isinstance(exc, InputError | user_curves.CurveFileError | benchmarks.BenchmarkError):
        return ApiError(Code.UNUSABLE_INPUT, str(exc))
    if isinstance(exc, RecursionError):
        return ApiError(Code.UNUSABLE_INPUT, "input nested too deeply")
    if isinstance(exc, MemoryError):
        return ApiError(Code.OUT_OF_MEMORY, "out of memory: send fewer rows or ask for fewer samples")
    return ApiError(Code.INTERNAL, f"internal error: {type(exc).__name__}: {exc} (please report this with the input "
                    "that caused it)")


def run(req: Request, max_rows: int) -> Answer | ApiError:
    """The answer of ``req``, or the failure to answer in the error shape; never raises."""
    store.use_stored_curves()  # a curves_sha256 not sent with the request is looked for in the store
    task = TASKS.get(req.task)
    if task is None:
        return ApiError(Code.NOT_FOUND, f"no task '{shown(req.task)}'")
    try:
        call = functools.partial(task, req, max_rows) if task is evaluate else functools.partial(task, req)
        return call()
    except Exception as exc:  # the last line of defence: the error shape, never a trace
        return _failure(exc)
