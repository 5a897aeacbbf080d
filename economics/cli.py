"""Command line: evaluate, explain, compare, retrofit, kv-memory, uncertainty, plan, report, calibrate, template,
fields, schema, serve (the HTTP API), mcp (the MCP server for AI assistants).

Exit codes (every command):
  0  every row valid, output written
  1  some rows invalid (evaluate still writes the valid rows, with the error report), or the chosen row is invalid,
     or ``plan`` or ``report --kind plan`` found no feasible plan (the best partial plan, its diagnosis, written)
  2  unusable input or arguments (not a CSV/JSON of scenarios, unknown or duplicate columns, no rows, unknown or
     ambiguous row name, bad option values, a file that cannot be read or written)
  3  internal error or out of memory: one line on stderr, never a traceback
  130, 143  interrupted (Ctrl-C) or terminated (SIGTERM): one line, the partial output file removed
Messages escape control characters and shorten long names and values; long lists end with a count.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TextIO

import pandas as pd

from economics import store
from economics.catalog import accelerator_ids, closest, unknown_id_message
from economics.domain.explain import format_number as fmt
from economics.engine.batch import ScenarioError, as_scenario, evaluate_scenario, explain_row
from economics.engine.provenance import provenance_text
from economics.io import interrupts, one_row, output_paths, tables, terminal
from economics.io.documents import fields_markdown, schema_text, template_text
from economics.io.one_row import InvalidRow
from economics.io.output_paths import RecordFormat, TableFormat
from economics.io.output_paths import write_text as write_output
from economics.io.plan_files import (
    MAX_PLAN_FILE_BYTES,
    InvalidPlanRow,
    plan_csv_text,
    plan_from_files,
    solver_chatter_silenced,
)
from economics.io.scenario_files import read_input_bytes, to_csv_text, to_json_text
from economics.lazy import LazyModule
from economics.schema import user_curves, values
from economics.schema.outputs import NUMERIC_OUTPUTS
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError
from economics.schema.values import choice_words, escape_controls, escape_for_terminal, shown
from economics.store import commands as store_commands
from economics.studies.planner.inputs import DEFAULT_PLAN_SAMPLES, MAX_PLAN_SAMPLES, FrontierChoice

TYPE_CHECKING = False  # typing.TYPE_CHECKING; the modules as mypy and lint-imports see them. The parser is built for
# the command run alone (build_parser), so `plan` never imports the report's, the retrofit's, the calibration's or
# the benchmark importers' modules (issue #43: about a quarter of the command's imports)
if TYPE_CHECKING:
    from economics.api import serve
    from economics.io import benchmarks, session_traces
    from economics.mcp import command as mcp_command
    from economics.report import build as report_build
    from economics.report import files as report_files
    from economics.studies import (
        calibration,
        calibration_points,
        compare,
        compare_odds,
        kv_memory,
        leave_out,
        retrofit,
        retrofit_decode,
        retrofit_explain,
        retrofit_life,
        retrofit_odds,
        sweep,
        uncertainty,
    )
else:  # at run time each is imported on first use
    serve, mcp_command = LazyModule("economics.api.serve"), LazyModule("economics.mcp.command")
    benchmarks, session_traces = LazyModule("economics.io.benchmarks"), LazyModule("economics.io.session_traces")
    report_build, report_files = LazyModule("economics.report.build"), LazyModule("economics.report.files")
    calibration, calibration_points = LazyModule("economics.studies.calibration"), LazyModule(
        "economics.studies.calibration_points")
    compare, compare_odds = LazyModule("economics.studies.compare"), LazyModule("economics.studies.compare_odds")
    kv_memory, leave_out = LazyModule("economics.studies.kv_memory"), LazyModule("economics.studies.leave_out")
    retrofit, retrofit_decode = LazyModule("economics.studies.retrofit"), LazyModule(
        "economics.studies.retrofit_decode")
    retrofit_explain = LazyModule("economics.studies.retrofit_explain")
    retrofit_life, retrofit_odds = LazyModule("economics.studies.retrofit_life"), LazyModule(
        "economics.studies.retrofit_odds")
    sweep, uncertainty = LazyModule("economics.studies.sweep"), LazyModule("economics.studies.uncertainty")

EXIT_OK, EXIT_INVALID_ROWS, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 1, 2, 3
MAX_REPORT_LINES = 50
"""Problems printed on stderr before the rest are counted (``--errors FILE`` writes them all)."""
MAX_MESSAGE_CHARS = 500
MAX_SAMPLES = 1_000_000


def _read(path: str | bytes, max_bytes: int) -> bytes:
    """A command's input read whole (:func:`read_input_bytes`), or the table ``--scenario`` put in its place."""
    return path if isinstance(path, bytes) else read_input_bytes(path, max_bytes)


def say(message: str, out: TextIO | None = None) -> None:
    """One line of user-facing text on stderr: control characters escaped, at most MAX_MESSAGE_CHARS."""
    text = escape_controls(message)
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS] + f"… ({len(text):,} characters)"
    (out or sys.stderr).write(text + "\n")


def _report(report_rows: list[tuple[int, str, str, object, str]]) -> None:
    """``row N (name): message`` per problem on stderr, the first MAX_REPORT_LINES, then a count."""
    for row, name, _field, _value, message in report_rows[:MAX_REPORT_LINES]:
        say(f"row {row} ({shown(str(name))}): {message}")
    if len(report_rows) > MAX_REPORT_LINES:
        say(f"… and {len(report_rows) - MAX_REPORT_LINES:,} more problems (--errors FILE writes them all)")


def _load_curves(args: argparse.Namespace) -> str:
    """``--curves FILE``: the file read, checked and kept (economics.schema.user_curves); its hash, or '' without
    one.
    """
    path = getattr(args, "curves", None)
    if not path:
        return ""
    try:
        data = user_curves.read_bounded(path) if path != "-" else _read(path, user_curves.MAX_BYTES)
        return user_curves.load(data, Path(path).name).sha256
    except user_curves.CurveFileError as exc:
        raise InputError(f"--curves: {exc}") from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Read, evaluate and write chunk by chunk (economics.io.tables), in CSV, Parquet or JSON."""
    source = sys.stdin.buffer if args.input == "-" else args.input  # standard input streams as a file does
    chunks = tables.read_chunks(source, args.input_format, progress=tables.terminal_progress(sys.stderr),
                                max_decompressed_bytes=args.max_decompressed_mb << 20)
    fmt = tables.output_format(args.output, args.format)
    sys.stdout.flush()
    sink = terminal.table_sink() if args.output == "-" else None  # escaped on a terminal, exact to a pipe
    spare = io.BytesIO() if args.output == "-" and sink is None else None
    curves = _load_curves(args)
    totals = tables.stream(chunks, functools.partial(one_row.evaluate_chunk, curves=curves),
                           tables.TableWriter(args.output, fmt, sink or spare))
    if spare is not None:
        terminal.data(spare.getvalue().decode("utf-8"))
    report, rows, invalid = totals.report, totals.rows, totals.invalid
    tables.end_progress(sys.stderr)
    if args.errors:
        write_output(args.errors, to_csv_text(report), "--errors")
    _report(list(report.itertuples(index=False, name=None)))
    if invalid:
        say(f"{invalid:,} of {rows:,} rows invalid; the valid rows were evaluated")
        return EXIT_INVALID_ROWS
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """The ``explain`` command: where each input of the chosen row comes from, then its derivation with the numbers
    substituted, on stdout; the exit code (an invalid row raises :class:`InvalidRow`).
    """
    one, position, raw = _chosen_row(args)
    try:
        trace = explain_row(one[[c for c in one.columns if str(c) in FIELDS]], 0)
    except ScenarioError as exc:
        raise one_row.invalid(one, position, exc.problems) from None
    terminal.report(provenance_text({k: v for k, v in raw.items() if k in FIELDS}) + "\n\n" + trace.text() + "\n")
    return EXIT_OK


def _chosen_row(args: argparse.Namespace) -> tuple[pd.DataFrame, int, dict[str, Any]]:
    """The row ``args.row`` names or numbers (:func:`economics.io.one_row.chosen_row`: standard input streams as a
    file does), its position and its non-empty cells; a note about the choice on stderr.
    """
    chosen = one_row.chosen_row(sys.stdin.buffer if args.input == "-" else args.input, args.row, _load_curves(args))
    if chosen.note:
        say(chosen.note)
    return chosen.frame, chosen.position, chosen.cells


def _without_ranges(raw: dict[str, Any], command: str) -> dict[str, Any]:
    """The row's scenario fields; range columns are accepted and set aside with a note (uncertainty uses them)."""
    note = one_row.ranges_note(raw, command)
    if note:
        say(note)
    return {k: v for k, v in raw.items() if k in FIELDS}


def cmd_compare(args: argparse.Namespace) -> int:
    """The ``compare`` command: the chosen row evaluated on each accelerator of ``--accelerators`` (default: every
    catalog accelerator), as CSV or JSON; the exit code.
    """
    _, _, raw = _chosen_row(args)
    ids = [a.strip().lower() for a in args.accelerators.split(",") if a.strip()] or accelerator_ids()
    unknown = [a for a in ids if a not in accelerator_ids()]
    if unknown:
        raise InputError(unknown_id_message("--accelerators", shown(unknown[0]), accelerator_ids()))
    if getattr(args, "uncertainty", False):
        return _compare_odds(args, _without_ranges(raw, "compare"), ids)
    try:
        table = compare.compare_accelerators(_without_ranges(raw, "compare"), ids)
    except ScenarioError as exc:
        raise InvalidRow([str(exc)]) from None
    write_output(args.output, to_json_text(table) if args.format == RecordFormat.JSON else to_csv_text(table))
    return EXIT_OK


def _compare_odds(args: argparse.Namespace, scenario: dict[str, Any], ids: list[str]) -> int:
    """``compare --uncertainty``: per accelerator how often it is the cheapest per M tokens and its cost at P10 /
    P50 / P90, then the drivers (CSV tables one after the other, or one JSON object); the headline and every range
    no source gives on stderr. The exit code.
    """
    try:
        found = compare_odds.compare_odds(scenario, ids, samples=args.samples, seed=args.seed)
    except ValueError as exc:  # ScenarioError (the row itself), or a bad range
        raise InvalidRow([str(exc)]) from None
    say(f"note: {found.headline()}")
    for line in found.assumptions():
        say(f"note: assumption: {line}")
    if args.format == RecordFormat.JSON:
        write_output(args.output, json.dumps({
            "samples": found.samples, "seed": found.seed, "headline": found.headline(),
            "odds": json.loads(to_json_text(found.table)), "drivers": json.loads(to_json_text(found.drivers))},
            indent=1, allow_nan=False) + "\n")
        return EXIT_OK
    write_output(args.output, to_csv_text(found.table) + "\n" + to_csv_text(found.drivers))
    return EXIT_OK


def cmd_session_profile(args: argparse.Namespace) -> int:
    """The ``session-profile`` command: a session row's per-turn context, per-user decode speed and TTFT (CSV or
    JSON); the exit code (a request row or an invalid one raises :class:`InvalidRow`).
    """
    chosen = one_row.chosen_row(sys.stdin.buffer if args.input == "-" else args.input, args.row, _load_curves(args))
    for note in (chosen.note, one_row.ranges_note(chosen.cells, "session-profile")):
        if note:
            say(note)
    table = one_row.profile(chosen)
    write_output(args.output, to_json_text(table) if args.format == RecordFormat.JSON else to_csv_text(table))
    return EXIT_OK


def cmd_retrofit(args: argparse.Namespace) -> int:
    """The ``retrofit`` command: the chosen row's retrofit options and their cash flows, and the break-even decode
    accelerator price [USD] (CSV or JSON), or with ``--explain`` the study's derivation; notes on stderr. The exit
    code.
    """
    _, _, raw = _chosen_row(args)
    scenario = _without_ranges(raw, "retrofit")
    try:
        result = retrofit.analyse(scenario)
        price = retrofit.break_even_decode_price_usd(scenario)
    except ValueError as exc:  # ScenarioError, or a field the study needs (the existing fleet's size)
        raise InvalidRow([str(exc)]) from None
    for line in retrofit_explain.shortfall_notes(result):
        say(line)
    if getattr(args, "uncertainty", False):
        return _retrofit_odds(args, scenario, result)
    if getattr(args, "refresh", False):
        return _retrofit_refresh(args, scenario, result)
    if getattr(args, "explain", False):
        text = retrofit_explain.study_text(result, as_scenario(scenario))
        write_output(args.output, escape_for_terminal(text))  # a report: escaped
        return EXIT_OK
    if args.format == RecordFormat.JSON:
        write_output(args.output, json.dumps({
            "options": json.loads(to_json_text(result.options)),
            "cashflows": json.loads(to_json_text(result.cashflows)),
            "break_even_decode_price_usd": price,
            "decode_accelerators": json.loads(to_json_text(retrofit_decode.decode_table(as_scenario(scenario))))},
            indent=1, allow_nan=False) + "\n")
        return EXIT_OK
    text = to_csv_text(result.options) + "\n" + to_csv_text(result.cashflows)
    text += f"\nbreak_even_decode_price_usd,{'' if price is None else round(price, 2)}\n"
    write_output(args.output, text)
    return EXIT_OK


def _retrofit_refresh(args: argparse.Namespace, scenario: dict[str, Any], result: Any) -> int:
    """``retrofit --refresh``: the NPV of keeping the existing fleet N years then replacing it by the new generation,
    for each N (CSV, or JSON with the best year); the best year on stderr. The exit code.
    """
    table = retrofit_life.refresh(result, as_scenario(scenario))
    if table.empty:
        raise InvalidRow(["new_accelerator: the refresh replaces the fleet by the new generation; give a "
                          "new_accelerator whose 'new generation' option is feasible"])
    best = retrofit_life.best_year(table)
    say(f"note: the best year to replace the fleet: after {best} year(s) of {len(table) - 1}")
    if args.format == RecordFormat.JSON:
        write_output(args.output, json.dumps({"best_kept_years": best, "refresh": json.loads(to_json_text(table))},
                                             indent=1, allow_nan=False) + "\n")
        return EXIT_OK
    write_output(args.output, to_csv_text(table))
    return EXIT_OK


def _retrofit_odds(args: argparse.Namespace, scenario: dict[str, Any], result: Any) -> int:
    """``retrofit --uncertainty``: the odds table, the pairs, the tornado and the drivers (CSV tables one after the
    other, or one JSON object); the headline and every range no source gives on stderr. The exit code.
    """
    try:
        found = retrofit_odds.odds(scenario, samples=args.samples, seed=args.seed, point=result)
    except ValueError as exc:
        raise InvalidRow([str(exc)]) from None
    say(f"note: {found.headline()}")
    for line in found.assumptions():
        say(f"note: assumption: {line}")
    tables = found.tables()
    if args.format == RecordFormat.JSON:
        write_output(args.output, json.dumps({
            "samples": found.samples, "seed": found.seed, "headline": found.headline(),
            "leading": list(found.leading or []), **{name: json.loads(to_json_text(t)) for name, t in tables.items()}},
            indent=1, allow_nan=False) + "\n")
        return EXIT_OK
    write_output(args.output, "\n".join(to_csv_text(t) for t in tables.values()))
    return EXIT_OK


def cmd_kv_memory(args: argparse.Namespace) -> int:
    """The ``kv-memory`` command: for ``--agents`` concurrent agents at the chosen session row's SLO, each KV tier's
    smallest addition and the systems needed, ranked (CSV: the options table; JSON: with the current fleet and why);
    why the cheapest is cheapest on stderr. The exit code.
    """
    _, _, raw = _chosen_row(args)
    try:
        study = kv_memory.kv_memory_study(_without_ranges(raw, "kv-memory"), args.agents)
    except ValueError as exc:  # ScenarioError, or a row the study does not take (not sessions, no fleet)
        raise InvalidRow([str(exc)]) from None
    for line in study.why.splitlines():
        say(line)
    json_text = args.format == RecordFormat.JSON
    write_output(args.output, kv_memory.study_json(study) if json_text else to_csv_text(study.table))
    return EXIT_OK


def cmd_uncertainty(args: argparse.Namespace) -> int:
    """The ``uncertainty`` command: for the chosen row's ranges (its ``<field>_low``/``<field>_high`` columns, with
    ``--default-ranges`` the Uncertainty page's defaults where it gives none), the tornado of ``--output-field``
    and the Monte Carlo summary, as CSV on stdout; the exit code.
    """
    if args.output_field not in NUMERIC_OUTPUTS:
        guess = closest(args.output_field, list(NUMERIC_OUTPUTS)) if len(args.output_field) <= 100 else None
        raise InputError(f"--output-field: '{shown(args.output_field)}' is not a numeric output"
                         + (f"; did you mean '{guess}'?" if guess else "")
                         + " (`python -m economics fields` lists the outputs)")
    _, _, row = _chosen_row(args)
    scenario = {k: v for k, v in row.items() if k in FIELDS}
    try:
        ranges = uncertainty.ranges_from_row(row)
        if args.default_ranges:  # the Uncertainty page's ranges: the row's own ends, else the default spread
            ranges = uncertainty.default_ranges(evaluate_scenario(as_scenario(scenario)), dict(ranges))
        if not ranges:
            raise InputError("no ranges: add <field>_low and <field>_high columns (e.g. electricity_usd_per_kwh_low), "
                             "or give --default-ranges")
        sens = uncertainty.tornado(scenario, ranges, args.output_field)
        mc = uncertainty.monte_carlo(scenario, ranges, args.samples, args.seed, args.distribution)
    except ScenarioError as exc:
        raise InvalidRow([str(exc)]) from None
    terminal.report(f"tornado ({args.output_field}, one field at a time):\n" + to_csv_text(sens) + "\n")
    terminal.report(f"Monte Carlo ({args.samples:,} samples, {args.distribution}, seed {args.seed}):\n"
                     + to_csv_text(mc.summary))
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    """A grid and/or Monte Carlo around one row, on Dask (economics.studies.sweep); quantiles, top-k and fronts on
    stdout.
    """
    _, _, row = _chosen_row(args)
    try:
        spec = sweep.sweep_from_args(args, row)
        bar = tables.terminal_progress(sys.stderr)
        show = (lambda done, total: bar(done * spec.partition_rows, done / total)) if bar else None
        result = (sweep.run_local(spec, args.top, show) if args.local else
                  sweep.run_dask(spec, args.top, args.workers, args.scheduler, show))
    except ScenarioError as exc:
        raise InvalidRow([str(exc)]) from None
    tables.end_progress(sys.stderr)
    terminal.report(sweep.result_text(result, spec, args.top))
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    """The cheapest fleet for one row: 0 with a plan (feasible or not, it is data), 1 when the row has a bad value,
    2 for unusable input (the same exit codes as the other row commands).
    """
    sha = _load_curves(args)
    with solver_chatter_silenced():
        out = plan_from_files(_read(args.input, MAX_PLAN_FILE_BYTES), args.row,
                              None if not args.candidates else _read(args.candidates, MAX_PLAN_FILE_BYTES),
                              [a.strip() for a in args.accelerators.split(",") if a.strip()], args.frontier, sha,
                              (args.samples, args.seed) if args.uncertainty else None)
    text = json.dumps(out, indent=1, allow_nan=False) + "\n" if args.format == RecordFormat.JSON else plan_csv_text(out)
    write_output(args.output, text)
    if not out["feasible"]:  # the plan (the best partial one and its diagnosis) is written; the exit code says so
        say(f"no feasible plan: {out['infeasible_reason']}")
        return EXIT_INVALID_ROWS
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    """The ``report`` command: the row's board report as PDF (economics.report.files); the exit code."""
    if args.baseline and args.input == "-":
        raise InputError("--baseline: standard input is read once; name the file the two rows are in")
    if args.kind == report_build.ReportKind.PLAN:
        return _plan_report(args)
    frame, position, raw = _chosen_row(args)
    scenario = _without_ranges(raw, "report")
    baseline = None if not args.baseline else _without_ranges(
        _chosen_row(argparse.Namespace(**{**vars(args), "row": args.baseline}))[2], "report")
    try:
        pdf = report_files.row_report(args.kind, scenario, baseline, args.app_url)
    except ScenarioError as exc:  # the row named, as every one-row command names it
        raise one_row.invalid(frame, position, exc.problems) from None
    except ValueError as exc:  # a field the study needs (the existing fleet's size)
        raise InvalidRow([str(exc)]) from None
    output_paths.write_bytes(args.output, pdf)
    return EXIT_OK


def _plan_report(args: argparse.Namespace) -> int:
    candidates = None if not args.candidates else _read(args.candidates, MAX_PLAN_FILE_BYTES)
    pdf, out = report_files.plan_report(_read(args.input, MAX_PLAN_FILE_BYTES), args.row, args.baseline, candidates,
                                        [a.strip() for a in args.accelerators.split(",") if a.strip()], args.frontier,
                                        _load_curves(args), args.app_url)
    output_paths.write_bytes(args.output, pdf)
    if not out["feasible"]:  # the report of the best partial plan is written; the exit code says so
        say(f"no feasible plan: {out['infeasible_reason']}")
        return EXIT_INVALID_ROWS
    return EXIT_OK


def cmd_import_benchmark(args: argparse.Namespace) -> int:
    """Benchmark files in, a curve file out (economics.io.benchmarks); what a file lacks comes from the flags."""
    skipped: list[str] | None = [] if args.skip_bad_rows else None
    try:
        table = benchmarks.import_benchmark(
            [(Path(p).name if p != "-" else "stdin", _read(p, benchmarks.MAX_FILE_BYTES)) for p in args.files],
            args.accelerator,
            args.accelerators, args.model, args.precision, args.format, args.curve_id, skipped, args.input_tokens,
            args.output_tokens)
    except benchmarks.BenchmarkError as exc:
        raise InputError(str(exc)) from None
    for note in (skipped or [])[:MAX_REPORT_LINES]:
        say(f"skipped: {note}")
    if skipped and len(skipped) > MAX_REPORT_LINES:
        say(f"… and {len(skipped) - MAX_REPORT_LINES:,} more rows skipped")
    write_output(args.output, benchmarks.curves_csv(table))
    curves, twice = table["curve_id"].nunique(), int(table.attrs.get("duplicates", 0))
    say(f"{len(table):,} point{'s' if len(table) != 1 else ''} in {curves:,} curve{'s' if curves != 1 else ''}"
        + (f"; {twice:,} points found in more than one file counted once" if twice else "")
        + (f"; {len(skipped):,} rows skipped" if skipped else ""))
    return EXIT_OK


def cmd_import_sessions(args: argparse.Namespace) -> int:
    """A session trace or a multi-turn benchmark's stats in, one workload=sessions scenario row out
    (economics.io.session_traces); its provenance on stderr and, with ``--provenance``, as JSON.
    """
    name = Path(args.file).name if args.file != "-" else "stdin"
    try:
        result = session_traces.import_sessions(
            (name, _read(args.file, session_traces.MAX_FILE_BYTES)), args.format, args.session_prefix_tokens,
            args.seconds_between_turns, args.block_tokens,
            session_traces.RunShape(args.num_rounds, args.request_length, args.output_length, args.run))
    except benchmarks.BenchmarkError as exc:
        raise InputError(str(exc)) from None
    as_json = args.output.lower().endswith(".json")
    write_output(args.output, to_json_text(result.row) if as_json else to_csv_text(result.row))
    if args.provenance:
        record = dict(result.provenance, measured_by_turn=json.loads(result.profile.to_json(orient="records")))
        write_output(args.provenance, json.dumps(record, indent=2) + "\n")
    for line in session_traces.provenance_lines(result):
        say(line)
    return EXIT_OK


def _calibrate_ranges(write: bool) -> int:
    """``calibrate --ranges``: the spread of the estimate's error per family and for unseen families (one refit per
    family and one per published table, a few minutes); with ``--write`` stored in data/estimate_ranges.csv.
    """
    table = leave_out.leave_out("family", progress=lambda g: say(f"refitting without family {g}"))
    sources = leave_out.leave_out("source", progress=lambda g: say(f"refitting without table {g}"))
    date = dt.date.today().strftime("%Y-%m")
    ranges = leave_out.range_table(table, date, sources)
    for r in ranges.to_dict("records"):
        sys.stdout.write(f"  {str(r['scope']):24} {int(r['points']):4d} points of {int(r['sources']):2d} sources  P10 "
                         f"{r['ratio_p10']:.3f}  median "
                         f"{r['ratio_p50']:.3f}  P90 {r['ratio_p90']:.3f} (measured / estimated)  median error "
                         f"{r['median_abs_error_pct']:.1f} %  [{r['basis']}]\n")
    sys.stdout.write(leave_out.source_out_text(ranges))
    if write:
        path = calibration.catalog.DATA_DIR / "estimate_ranges.csv"
        ranges.to_csv(path, index=False, lineterminator="\n")
        calibration.catalog.estimate_ranges.cache_clear()
        sys.stdout.write(f"wrote {path}\n")
        models = leave_out.leave_out("model", progress=lambda g: say(f"refitting without {g}"))
        errors = leave_out.errors_table({"family": table, "model": models, "source": sources}, date)
        path = calibration.catalog.DATA_DIR / "leave_out_errors.csv"
        errors.to_csv(path, index=False, lineterminator="\n")
        calibration.catalog.leave_out_errors.cache_clear()
        sys.stdout.write(f"wrote {path}\n")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """The ``calibrate`` command: with ``--write`` the factors refitted into data/calibration.csv; ``--ranges``,
    ``--holdout`` and ``--leave-out`` report the estimate's error; otherwise the stored factors and predicted
    against measured throughput per point, on stdout. The exit code.
    """
    if args.write:
        table = calibration.fit()
        path = calibration.catalog.DATA_DIR / "calibration.csv"
        table.to_csv(path, index=False, lineterminator="\n")
        calibration.catalog.calibration.cache_clear()
        sys.stdout.write(f"wrote {path}\n")
    if getattr(args, "ranges", False):
        return _calibrate_ranges(args.write)
    if getattr(args, "holdout", False):
        sys.stdout.write(calibration.holdout_text())
        sys.stdout.write(leave_out.stored_errors_text())
        sys.stdout.write(leave_out.source_out_text(calibration.catalog.estimate_ranges()))
        sys.stdout.write(leave_out.validation_text(leave_out.validation(), leave_out.validation_refused()))
        return 0
    if getattr(args, "leave_out", None):
        table = leave_out.leave_out(args.leave_out, progress=lambda g: say(f"refitting without {g}"))
        sys.stdout.write(leave_out.summary_text(args.leave_out, table))
        return 0
    factors = calibration.catalog.calibration()
    sys.stdout.write("factors (data/calibration.csv):\n")
    for scope, row in factors.iterrows():
        overhead = float(row["step_overhead_us_per_layer"])
        sys.stdout.write(f"  {scope:18} bandwidth {float(row['bandwidth_utilization']):.2f}  decode compute "
                         f"{float(row['compute_utilization']):.2f}  prefill compute "
                         f"{float(row['prefill_compute_utilization']):.2f}  overhead {overhead:g} us/layer  "
                         f"({row['points']} points; {row['accelerators']})\n")
    pts, summary = calibration.report()
    sys.stdout.write("\npredicted vs measured output tokens/s per accelerator:\n")
    for r in pts.itertuples():
        measured = fmt(float(r.measured))  # type: ignore[arg-type]
        if isinstance(r.predicted, float) and r.predicted == r.predicted:
            line = f"predicted {fmt(r.predicted):>8}  measured {measured:>8}  error {r.error_pct:+7.1f} %"
        else:
            line = f"predicted {'-':>8}  measured {measured:>8}  ({r.metric})"
        tag = "" if r.fitted == calibration_points.FITTED_CELL else f"  [{r.fitted}]"
        sys.stdout.write(f"  {r.point:48} {line}{tag}\n")
    sys.stdout.write(f"\nsummary over {int(summary['fitted_points'])} fitted points of {int(summary['points'])}: "
                     f"median absolute error {summary['median_abs_error_pct']:.1f} %, worst "
                     f"{summary['worst_abs_error_pct']:.1f} %\n")
    return 0


def _count(low: int, high: int, what: str) -> Any:
    """An argparse type: a whole number in [low, high], with a message naming the option's meaning."""
    return values.whole_number_option(what, low, high)


def _add_row_command(sub: Any, name: str, help_text: str, outputs: bool = False) -> argparse.ArgumentParser:
    """A subcommand that works on one row of a CSV (``input``, ``--row``), optionally writing a table."""
    cmd: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    cmd.add_argument("input", nargs="?", default=None,
                     help="CSV (or gzip/zstd CSV), Parquet or JSON file, or - for standard input")
    cmd.add_argument("--row", default=None,
                     help="the row's name, or its 1-based number; name:X or number:N says which (required with an "
                     "input file)")
    store_commands.add_scenario_argument(cmd)
    if outputs:
        cmd.add_argument("-o", "--output", default="-")
        cmd.add_argument("--format", choices=choice_words(RecordFormat), default=RecordFormat.CSV.value)
    add_curves_argument(cmd)
    return cmd


def add_curves_argument(cmd: argparse.ArgumentParser) -> None:
    """``--curves FILE``: your own measured curves (import-benchmark output) for every row that names none."""
    cmd.add_argument("--curves", metavar="FILE", help="your measured curves (a CSV from import-benchmark): they "
                     "outrank the catalog's for their accelerator, model, precision and request shape")


class _Parser(argparse.ArgumentParser):
    """argparse with its error line made safe: control characters escaped, long arguments shortened."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        text = escape_controls(message)
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + f"… ({len(text):,} characters)"
        self.exit(EXIT_UNUSABLE, f"{self.prog}: error: {text}\n")


def _add_evaluate(sub: Any) -> None:
    ev = sub.add_parser("evaluate", help="evaluate a CSV of scenarios")
    ev.add_argument("input", nargs="?", default=None,
                    help="CSV (or gzip/zstd CSV), Parquet or JSON file, or - for standard input")
    store_commands.add_scenario_argument(ev)
    ev.add_argument("-o", "--output", default="-", help="output file, or - for standard output (default)")
    ev.add_argument("--format", choices=choice_words(TableFormat), default=None,
                    help="output format (default: from the output's extension, else csv; .gz/.zst compress a CSV)")
    ev.add_argument("--input-format", choices=choice_words(TableFormat), default=None,
                    help="input format (default: from the file's first bytes and extension)")
    ev.add_argument("--errors", help="also write the validation report (row, name, field, value, message) as CSV")
    ev.add_argument("--max-decompressed-mb", type=_count(1, 10**8, "--max-decompressed-mb"),
                    default=tables.MAX_DECOMPRESSED_BYTES >> 20,
                    help="refuse a gzip/zstd input larger than this once decompressed (default %(default)s MB)")
    add_curves_argument(ev)
    ev.set_defaults(func=cmd_evaluate)


def _add_explain(sub: Any) -> None:
    _add_row_command(sub, "explain", "print the derivation of one row with its numbers substituted").set_defaults(
        func=cmd_explain)


def _add_template(sub: Any) -> None:
    sub.add_parser("template", help="CSV template: field comments, header, default scenario").set_defaults(
        func=lambda a: (sys.stdout.write(template_text()), 0)[1])


def _add_compare(sub: Any) -> None:
    cmp = _add_row_command(sub, "compare", "one scenario's demand across accelerators, ranked by cost per M tokens",
                           outputs=True)
    cmp.add_argument("--accelerators", default="", help="comma-separated catalog ids (default: all)")
    cmp.add_argument("--uncertainty", action="store_true", help="the odds instead: every ranged input (each "
                     "accelerator's estimated throughput and estimated price, electricity, cost of capital) drawn "
                     "--samples times, the same draws for every accelerator; per accelerator how often it is the "
                     "cheapest per M tokens and its cost at P10/P50/P90")
    cmp.add_argument("--samples", type=_count(1, retrofit_odds.MAX_SAMPLES, "--samples"), default=10_000,
                     help="draws for --uncertainty (default 10,000)")
    cmp.add_argument("--seed", type=_count(0, 2**32 - 1, "--seed"), default=0, help="seed of the draws (default 0)")
    cmp.set_defaults(func=cmd_compare)


def _add_session_profile(sub: Any) -> None:
    _add_row_command(sub, "session-profile", "a session row's speed across its turns: each turn's context, per-user "
                     "decode speed and time to first token", outputs=True).set_defaults(func=cmd_session_profile)


def _add_retrofit(sub: Any) -> None:
    ret = _add_row_command(sub, "retrofit", "an existing fleet: status quo vs add decode accelerators vs more of the "
                           "same vs a new generation (NPV, IRR, payback, break-even decode price)", outputs=True)
    ret.add_argument("--explain", action="store_true", help="print how each option is computed (fleet, capex, opex, "
                     "revenue, cash flows, NPV, IRR, payback) with its numbers, instead of the tables")
    ret.add_argument("--uncertainty", action="store_true", help="the odds instead of the point figures: every "
                     "ranged input drawn --samples times (same draws for every option); per option NPV, IRR and "
                     "payback at P10/P50/P90 and how often it is the best, each pair's odds, the tornado of the two "
                     "leading options' NPV difference")
    ret.add_argument("--refresh", action="store_true", help="the refresh instead of the tables: keep the existing "
                     "fleet N years, then replace it by the new generation (new_accelerator), the NPV against the "
                     "status quo for each N and the best year")
    ret.add_argument("--samples", type=_count(1, retrofit_odds.MAX_SAMPLES, "--samples"), default=10_000,
                     help="draws for --uncertainty (default 10,000)")
    ret.add_argument("--seed", type=_count(0, 2**32 - 1, "--seed"), default=0, help="seed of the draws (default 0)")
    ret.set_defaults(func=cmd_retrofit)


def _add_kv_memory(sub: Any) -> None:
    kvm = _add_row_command(sub, "kv-memory", "more memory or more accelerators: for --agents concurrent agents at a "
                           "session row's SLO, the cheapest of adding host DRAM, SSD or a remote KV store against "
                           "adding systems", outputs=True)
    kvm.add_argument("--agents", type=_count(1, 10**12, "--agents"), required=True,
                     help="the target number of concurrent agents (sessions) at the SLO")
    kvm.set_defaults(func=cmd_kv_memory)


def _add_uncertainty(sub: Any) -> None:
    unc = _add_row_command(sub, "uncertainty", "tornado and Monte Carlo over the <field>_low/<field>_high ranges of a "
                           "row")
    unc.add_argument("--samples", type=_count(1, MAX_SAMPLES, "samples"), default=10_000)
    unc.add_argument("--seed", type=_count(0, 2**32 - 1, "seed"), default=0)
    unc.add_argument("--distribution", choices=choice_words(uncertainty.Distribution),
                     default=uncertainty.Distribution.TRIANGULAR.value)
    unc.add_argument("--output-field", default="cost_usd_per_m_tokens", help="output for the tornado")
    unc.add_argument("--default-ranges", action="store_true", help="range every field the Uncertainty page ranges "
                     "(electricity, accelerator price, throughput, PUE, cost of capital): the row's own ends where it "
                     "gives them, else the page's default spread around the value the engine uses (an estimated "
                     "throughput: its P10-P90)")
    unc.set_defaults(func=cmd_uncertainty)


def _add_import_benchmark(sub: Any) -> None:
    imp = sub.add_parser("import-benchmark", help="benchmark results (vLLM, SGLang, GenAI-Perf, AIPerf, GuideLLM, "
                         "InferenceX, MLPerf) as a curve file for --curves")
    imp.add_argument("files", nargs="+", metavar="FILE", help="benchmark result files, or - for standard input")
    imp.add_argument("-o", "--output", default="-", help="curve file to write (CSV), or - for standard output")
    imp.add_argument("--format", choices=choice_words(benchmarks.BenchmarkFormat),
                     default=benchmarks.BenchmarkFormat.AUTO.value)
    imp.add_argument("--accelerator", default="", help="catalog id of the accelerator the runs used (vLLM, SGLang, "
                     "GenAI-Perf, AIPerf and GuideLLM files do not record it)")
    imp.add_argument("--accelerators", type=_count(1, 100_000, "accelerators"), default=None,
                     help="accelerators serving each run (every GPU of the deployment)")
    imp.add_argument("--model", default="", help="catalog model id (default: the file's model name through the "
                     "aliases of data/models.csv)")
    imp.add_argument("--precision", default="", help="weight precision: bf16, fp8 or fp4 (where the file omits it)")
    imp.add_argument("--input-tokens", type=float, default=None, help="mean input tokens per request, where the file "
                     "records none (MLPerf logs)")
    imp.add_argument("--output-tokens", type=float, default=None, help="mean output tokens per request, where the "
                     "file records none")
    imp.add_argument("--curve-id", default="", help="the curves' id (default: built from tool, hardware, model, "
                     "precision and lengths)")
    imp.add_argument("--skip-bad-rows", action="store_true", help="published rows that cannot be read are named "
                     "on stderr and left out instead of refusing the file")
    imp.set_defaults(func=cmd_import_benchmark)


def _add_import_sessions(sub: Any) -> None:
    ses = sub.add_parser("import-sessions", help="a session trace (Mooncake JSONL), vLLM's multi-turn benchmark "
                         "stats or SGLang's bench_multiturn.py log as a workload=sessions scenario row")
    ses.add_argument("file", metavar="FILE", help="the trace or stats file, or - for standard input")
    ses.add_argument("-o", "--output", default="-", help="scenario row to write (CSV, or JSON for a .json name), or "
                     "- for standard output")
    ses.add_argument("--format", choices=choice_words(session_traces.TraceFormat),
                     default=session_traces.TraceFormat.AUTO.value)
    ses.add_argument("--session-prefix-tokens", type=float, default=None, help="the shared prefix, where the file "
                     "records no shared blocks (vLLM's stats; a trace without hash_ids)")
    ses.add_argument("--seconds-between-turns", type=float, default=None, help="the mean idle gap, where no "
                     "session in the file has two turns")
    ses.add_argument("--block-tokens", type=float, default=session_traces.MOONCAKE_BLOCK_TOKENS,
                     help="tokens per hash_ids block (Mooncake: 512)")
    for flag, kind, what in (("--num-rounds", int, "rounds per client"), ("--request-length", float, "tokens each "
                             "round adds"), ("--output-length", float, "output tokens per round")):
        ses.add_argument(flag, type=kind, default=None, help=f"SGLang's log: the run's {what} (its {flag}; the log "
                         "does not record it)")
    ses.add_argument("--run", type=int, default=None, metavar="LINE", help="SGLang's log: the line of the run to "
                     "read, where the log holds several")
    ses.add_argument("--provenance", default="", metavar="FILE", help="write the provenance (file, SHA-256, tool, "
                     "how each field was read, the measured TTFT and speed by turn) as JSON")
    ses.set_defaults(func=cmd_import_sessions)


def _add_calibrate(sub: Any) -> None:
    cal = sub.add_parser("calibrate", help="roofline efficiency factors: predicted vs measured for every point")
    cal.add_argument("--write", action="store_true", help="refit and write data/calibration.csv first")
    cal.add_argument("--holdout", action="store_true", help="per scope: training and held-out median and worst error")
    cal.add_argument("--leave-out", choices=("family", "model", "source"), default=None,
                     help="refit without each accelerator family (or model, or published table) and predict its "
                     "points: the error where nothing was measured (one refit each, about 25 s)")
    cal.add_argument("--ranges", action="store_true", help="the range of an estimate (P10-P90 of measured / "
                     "estimated) per fitted family and for families with no measured point, from the "
                     "leave-one-table-out and leave-one-family-out errors; with --write stored in "
                     "data/estimate_ranges.csv, and the leave-one-family-out, -model-out and -table-out errors in "
                     "data/leave_out_errors.csv (about 15 minutes)")
    cal.set_defaults(func=cmd_calibrate)


def _add_fields(sub: Any) -> None:
    sub.add_parser("fields", help="the input fields and outputs as Markdown tables").set_defaults(
        func=lambda a: (sys.stdout.write(fields_markdown()), 0)[1])


def _add_schema(sub: Any) -> None:
    sub.add_parser("schema", help="JSON schema of a scenario").set_defaults(
        func=lambda a: (sys.stdout.write(schema_text() + "\n"), 0)[1])


def _add_plan(sub: Any) -> None:
    pl = _add_row_command(sub, "plan", "the cheapest fleet (prefill/decode pools, own/rent, the existing fleet) for "
                          "a row's demand, targets and facility")
    pl.add_argument("--candidates", help="CSV of hardware options with their own measured rates and prices "
                    "(default: the catalog)")
    pl.add_argument("--accelerators", default="", help="catalog ids to consider, comma-separated (default: all)")
    pl.add_argument("--frontier", choices=choice_words(FrontierChoice), default=FrontierChoice.NONE.value,
                    help="also compute cost frontiers: speed and site (20 points each; both), cost against "
                    "emissions (carbon: 8 carbon prices), or all three")
    pl.add_argument("--uncertainty", action="store_true", help="the plan's odds too: each candidate accelerator's "
                    "estimated throughput drawn --samples times over the estimator's P10-P90, the plan solved again "
                    "in each draw; the cost a day of the chosen plan's candidates at P10/P50/P90 and how often a mix "
                    "of other candidates is cheaper")
    pl.add_argument("--samples", type=_count(1, MAX_PLAN_SAMPLES, "--samples"), default=DEFAULT_PLAN_SAMPLES,
                    help=f"draws for --uncertainty (default {DEFAULT_PLAN_SAMPLES}; two solves each, about a second)")
    pl.add_argument("--seed", type=_count(0, 2**32 - 1, "--seed"), default=0, help="seed of the draws (default 0)")
    pl.add_argument("--format", choices=choice_words(RecordFormat), default=RecordFormat.JSON.value)
    pl.add_argument("-o", "--output", default="-", help="output file, or - for standard output (default)")
    pl.set_defaults(func=cmd_plan)


def _add_report(sub: Any) -> None:
    rep = _add_row_command(sub, "report", "a board report of one row as PDF: KPIs (with changes against "
                           "--baseline), charts, sourced assumptions, tornado, derivation, the app link")
    report_files.add_report_arguments(rep)
    rep.set_defaults(func=cmd_report)


def _add_sweep(sub: Any) -> None:
    sw = _add_row_command(sub, "sweep", "a grid and/or Monte Carlo around one row on Dask (local processes, or "
                          "--scheduler): quantiles, the cheapest, Pareto fronts")
    sweep.add_sweep_arguments(sw)
    sw.set_defaults(func=cmd_sweep)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: one subcommand per command, each with its ``func``. ``command`` (one of
    :data:`COMMANDS`): that subcommand alone, so that only its modules are imported (the others' arguments read the
    report's, the retrofit's and the importers' modules); None: every command (the whole usage and help).
    """
    parser = _Parser(prog="python -m economics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, add in COMMANDS.items():
        if command is None or name == command:
            add(sub)
    return parser


COMMANDS: dict[str, Callable[[Any], object]] = {
    "evaluate": _add_evaluate, "explain": _add_explain, "template": _add_template, "compare": _add_compare,
    "session-profile": _add_session_profile, "retrofit": _add_retrofit, "kv-memory": _add_kv_memory,
    "uncertainty": _add_uncertainty, "import-benchmark": _add_import_benchmark, "import-sessions": _add_import_sessions,
    "calibrate": _add_calibrate, "fields": _add_fields, "schema": _add_schema, "plan": _add_plan, "report": _add_report,
    "sweep": _add_sweep, "serve": lambda sub: serve.add_serve_command(sub),
    "mcp": lambda sub: mcp_command.add_mcp_command(sub),
    "store": lambda sub: store_commands.add_store_command(sub, lambda a: store_commands.run_store(a, say)),
}
"""Each command's name and what adds it to the parser's subcommands, in the order the usage lists them."""


def _command(argv: list[str] | None) -> str | None:
    """The command ``argv`` (default: the process's arguments) names first, when it is one of :data:`COMMANDS`; else
    None (help, or a word that is no command: the whole parser says so as before).
    """
    words = sys.argv[1:] if argv is None else argv
    return words[0] if words and words[0] in COMMANDS else None


INPUT_OPTIONS = {"input": "input", "files": "benchmark", "candidates": "--candidates", "curves": "--curves"}
"""Every argument that names a file a command reads (argparse's name -> the name a message gives it): no output
may be one of them."""


def _inputs(args: argparse.Namespace) -> dict[str, object]:
    """The files the command reads, by the option that names them (:data:`INPUT_OPTIONS`)."""
    return {shown_as: getattr(args, name) for name, shown_as in INPUT_OPTIONS.items() if getattr(args, name, None)}


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (0, 1, 2 or 3, see the module docstring). Never raises."""
    store.use_stored_curves()  # a scenario naming a curve file not loaded finds it in the store, if there is one
    try:
        args = build_parser(_command(argv)).parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage and the reason
        return exc.code if isinstance(exc.code, int) else EXIT_UNUSABLE
    except (KeyboardInterrupt, interrupts.Terminated) as exc:  # before the command starts: one line, as in it
        return interrupts.unwound(exc, say)
    try:
        with interrupts.interruptible(say), interrupts.libraries_quiet():
            output_paths.check_all({"-o": getattr(args, "output", None), "--errors": getattr(args, "errors", None)},
                                   _inputs(args))
            if hasattr(args, "scenario"):
                store_commands.stored_input(args, store.existing_store, say)
            return int(args.func(args))
    except (KeyboardInterrupt, interrupts.Terminated) as exc:
        return interrupts.unwound(exc, say)
    except InvalidRow as exc:
        for line in exc.lines[:MAX_REPORT_LINES]:
            say(line)
        return EXIT_INVALID_ROWS
    except InvalidPlanRow as exc:  # a plan row's bad value (plan, report --kind plan): as for any row
        for line in str(exc).splitlines()[:MAX_REPORT_LINES]:
            say(line)
        return EXIT_INVALID_ROWS
    except InputError as exc:
        say(f"error: {exc}")
        return EXIT_UNUSABLE
    except BrokenPipeError:
        return EXIT_OK
    except MemoryError:
        say("error: out of memory; try a smaller file or fewer --samples")
        return EXIT_INTERNAL
    except RecursionError:
        say("error: input nested too deeply")
        return EXIT_UNUSABLE
    except Exception as exc:  # the last line of defence: one line, never a traceback
        say(f"internal error: {type(exc).__name__}: {exc} (please report this with the input that caused it)")
        return EXIT_INTERNAL
