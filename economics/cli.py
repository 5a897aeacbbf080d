"""Command line: evaluate, explain, template, schema.

Exit codes: 0 every row valid; 1 some rows invalid (the valid ones are still written, with the error report);
2 unusable input (not a CSV, unknown or duplicate columns, no rows, unknown row name).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from .batch import evaluate_with_report, explain_row
from .catalog import closest
from .scenario import FIELDS, Scenario
from .scenario_files import read_scenarios_csv, to_csv_text, to_json_text
from .validation import InputError


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")


def template_text() -> str:
    """Comment lines with each field's unit, bounds and description, the header, and the default scenario."""
    from .presets import default_scenario

    lines = ["# Scenario CSV template: one scenario per row; empty cell = default (or catalog value).",
             "# field: [unit] bounds; description"]
    for spec in FIELDS.values():
        bits = [f"[{spec.unit}]" if spec.unit else "", spec.bounds_text()]
        if spec.choices:
            bits.append("one of " + "/".join(spec.choices))
        if spec.catalog_field:
            bits.append(f"empty = catalog {spec.catalog_field}")
        lines.append(f"# {spec.name}: {' '.join(b for b in bits if b)}; {spec.description}")
    default = default_scenario().model_dump()
    row = {k: ("" if v is None else v) for k, v in default.items()}
    import pandas as pd

    return "\n".join(lines) + "\n" + to_csv_text(pd.DataFrame([row], columns=list(FIELDS)))


def fields_markdown() -> str:
    """The scenario fields and the outputs as Markdown tables (the README's tables are this text)."""
    from .pipeline import OUTPUT_UNITS

    lines = ["| field | unit | bounds | default | description |", "|---|---|---|---|---|"]
    for spec in FIELDS.values():
        if spec.catalog_field:
            default = f"catalog `{spec.catalog_field}`"
        elif spec.default is None:
            default = "empty"
        else:
            default = f"{spec.default}" + (" (defaults.csv)" if spec.default_source else "")
        bounds = spec.bounds_text() or ("/".join(spec.choices) if spec.choices else "")
        lines.append(f"| `{spec.name}` | {spec.unit} | {bounds} | {default} | {spec.description} |")
    lines += ["", "| output | unit |", "|---|---|"]
    lines += [f"| `{name}` | {unit} |" for name, unit in OUTPUT_UNITS.items()]
    lines += ["| `warnings` | text |", "| `valid` | true/false |", "| `error` | text: every problem, naming field "
              "and value |"]
    return "\n".join(lines) + "\n"


def schema_text() -> str:
    return json.dumps(Scenario.model_json_schema(), indent=2)


def _report(report_rows: list[tuple[int, str, str, object, str]], out: TextIO) -> None:
    for row, name, _field, _value, message in report_rows:
        out.write(f"row {row} ({name}): {message}\n")


def cmd_evaluate(args: argparse.Namespace) -> int:
    df = read_scenarios_csv(_read(args.input))
    result, report = evaluate_with_report(df)
    text = to_json_text(result) if args.format == "json" else to_csv_text(result)
    _write(args.output, text)
    if args.errors:
        _write(args.errors, to_csv_text(report))
    invalid = int((~result["valid"]).sum())
    _report(list(report.itertuples(index=False, name=None)), sys.stderr)
    if invalid:
        sys.stderr.write(f"{invalid} of {len(result)} rows invalid; the valid rows were evaluated\n")
        return 1
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    df, position, raw = _chosen_row(args)
    from .batch import provenance_text

    sys.stdout.write(provenance_text(raw) + "\n\n" + explain_row(df, position).text() + "\n")
    return 0


def _row_position(df: Any, row: str) -> int:
    names = [str(n) for n in df["name"]] if "name" in df.columns else []
    if row in names:
        return names.index(row)
    if row.isdigit() and 1 <= int(row) <= len(df):
        return int(row) - 1
    guess = closest(row, names) if names else None
    hint = f"; did you mean '{guess}'?" if guess else ""
    raise InputError(f"--row: no row named '{row}' and no row number 1..{len(df)}{hint}")


def _chosen_row(args: argparse.Namespace) -> tuple[Any, int, dict[str, Any]]:
    """The CSV of ``args.input``, the position of the row ``args.row`` names, and that row's non-empty cells."""
    df = read_scenarios_csv(_read(args.input))
    position = _row_position(df, args.row)
    cells = {str(k): v for k, v in df.iloc[position].to_dict().items() if str(v).strip() != ""}
    return df, position, cells


def cmd_compare(args: argparse.Namespace) -> int:
    from .catalog import accelerator_ids, unknown_id_message
    from .compare import compare_accelerators

    _, _, raw = _chosen_row(args)
    ids = [a.strip() for a in args.accelerators.split(",") if a.strip()] or accelerator_ids()
    unknown = [a for a in ids if a not in accelerator_ids()]
    if unknown:
        raise InputError(unknown_id_message("--accelerators", unknown[0], accelerator_ids()))
    from .batch import ScenarioError

    try:
        table = compare_accelerators(raw, ids)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    _write(args.output, to_json_text(table) if args.format == "json" else to_csv_text(table))
    return 0


def cmd_retrofit(args: argparse.Namespace) -> int:
    from .batch import ScenarioError
    from .retrofit import analyse, break_even_decode_price_usd

    _, _, raw = _chosen_row(args)
    try:
        result = analyse(raw)
        price = break_even_decode_price_usd(raw)
    except (ScenarioError, ValueError) as exc:
        raise InputError(str(exc)) from None
    if args.format == "json":
        _write(args.output, json.dumps({
            "options": json.loads(to_json_text(result.options)),
            "cashflows": json.loads(to_json_text(result.cashflows)),
            "break_even_decode_price_usd": price}, indent=1, allow_nan=False) + "\n")
        return 0
    text = to_csv_text(result.options) + "\n" + to_csv_text(result.cashflows)
    text += f"\nbreak_even_decode_price_usd,{'' if price is None else round(price, 2)}\n"
    _write(args.output, text)
    return 0


def cmd_uncertainty(args: argparse.Namespace) -> int:
    from .batch import ScenarioError
    from .uncertainty import monte_carlo, ranges_from_row, tornado

    _, _, row = _chosen_row(args)
    scenario = {k: v for k, v in row.items() if k in FIELDS}
    try:
        ranges = ranges_from_row(row)
        if not ranges:
            raise InputError("no ranges: add <field>_low and <field>_high columns (e.g. electricity_usd_per_kwh_low)")
        sens = tornado(scenario, ranges, args.output_field)
        mc = monte_carlo(scenario, ranges, args.samples, args.seed, args.distribution)
    except ScenarioError as exc:
        raise InputError(str(exc)) from None
    sys.stdout.write(f"tornado ({args.output_field}, one field at a time):\n" + to_csv_text(sens) + "\n")
    sys.stdout.write(f"Monte Carlo ({args.samples:,} samples, {args.distribution}, seed {args.seed}):\n"
                     + to_csv_text(mc.summary))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from . import calibration
    from .explain import format_number as fmt

    if args.write:
        table = calibration.fit()
        path = calibration.catalog.DATA_DIR / "calibration.csv"
        table.to_csv(path, index=False, lineterminator="\n")
        calibration.catalog.calibration.cache_clear()
        sys.stdout.write(f"wrote {path}\n")
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
        tag = "" if r.fitted == "yes" else f"  [{r.fitted}]"
        sys.stdout.write(f"  {r.point:48} {line}{tag}\n")
    sys.stdout.write(f"\nsummary over {int(summary['fitted_points'])} fitted points of {int(summary['points'])}: "
                     f"median absolute error {summary['median_abs_error_pct']:.1f} %, worst "
                     f"{summary['worst_abs_error_pct']:.1f} %\n")
    return 0


def _add_row_command(sub: Any, name: str, help_text: str, outputs: bool = False) -> argparse.ArgumentParser:
    """A subcommand that works on one row of a CSV (``input``, ``--row``), optionally writing a table."""
    cmd: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    cmd.add_argument("input", help="CSV file, or - for standard input")
    cmd.add_argument("--row", required=True, help="the row's name, or its 1-based number")
    if outputs:
        cmd.add_argument("-o", "--output", default="-")
        cmd.add_argument("--format", choices=("csv", "json"), default="csv")
    return cmd


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m economics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="evaluate a CSV of scenarios")
    ev.add_argument("input", help="CSV file, or - for standard input")
    ev.add_argument("-o", "--output", default="-", help="output file, or - for standard output (default)")
    ev.add_argument("--format", choices=("csv", "json"), default="csv")
    ev.add_argument("--errors", help="also write the validation report (row, name, field, value, message) as CSV")
    ev.set_defaults(func=cmd_evaluate)
    _add_row_command(sub, "explain", "print the derivation of one row with its numbers substituted").set_defaults(
        func=cmd_explain)
    sub.add_parser("template", help="CSV template: field comments, header, default scenario").set_defaults(
        func=lambda a: (sys.stdout.write(template_text()), 0)[1])
    cmp = _add_row_command(sub, "compare", "one scenario's demand across accelerators, ranked by cost per M tokens",
                           outputs=True)
    cmp.add_argument("--accelerators", default="", help="comma-separated catalog ids (default: all)")
    cmp.set_defaults(func=cmd_compare)
    _add_row_command(sub, "retrofit", "an existing fleet: status quo vs add decode accelerators vs more of the same "
                     "vs a new generation (NPV, IRR, payback, break-even decode price)", outputs=True).set_defaults(
        func=cmd_retrofit)
    unc = _add_row_command(sub, "uncertainty", "tornado and Monte Carlo over the <field>_low/<field>_high ranges of a "
                           "row")
    unc.add_argument("--samples", type=int, default=10_000)
    unc.add_argument("--seed", type=int, default=0)
    unc.add_argument("--distribution", choices=("triangular", "uniform"), default="triangular")
    unc.add_argument("--output-field", default="cost_usd_per_m_tokens", help="output for the tornado")
    unc.set_defaults(func=cmd_uncertainty)
    cal = sub.add_parser("calibrate", help="roofline efficiency factors: predicted vs measured for every point")
    cal.add_argument("--write", action="store_true", help="refit and write data/calibration.csv first")
    cal.set_defaults(func=cmd_calibrate)
    sub.add_parser("fields", help="the input fields and outputs as Markdown tables").set_defaults(
        func=lambda a: (sys.stdout.write(fields_markdown()), 0)[1])
    sub.add_parser("schema", help="JSON schema of a scenario").set_defaults(
        func=lambda a: (sys.stdout.write(schema_text() + "\n"), 0)[1])
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
