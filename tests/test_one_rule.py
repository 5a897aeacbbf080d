"""Each rule is written once and every step that needs it reads that one definition: checked on the numbers the steps
report for one scenario, and on the source (no second table of the same thing)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import economics
from economics.engine.resolve import kv_bytes_per_token
from economics.engine.roofline import Roofline
from economics.schema.validation import validate
from economics.studies import planner
from economics.studies.planner.build import build_model, hourly_models
from economics.studies.planner.inputs import hour_types
from economics.studies.planner.model import ALL_DAY
from tests.test_planner_proof import page_problem, page_scenario

ROOT = Path(__file__).resolve().parent.parent
FP4_70B = {"name": "kv", "accelerator": "b200", "model": "llama-3.1-70b", "precision": "fp4",
           "decode_accelerator": "b200", "input_tokens_per_request": 5000, "output_tokens_per_request": 500,
           "demand_output_tokens_per_day": 1e9, "target_output_tokens_per_s_per_user": 20}
# Llama 3.1 70B: 80 layers, all of full attention, 8 KV heads of dimension 128. FP4 weights with no KV precision
# keep an FP8 cache (1 byte a value): 2 (K and V) x 80 x 8 x 128 x 1 = 163,840 bytes per token.
KV_FP8 = 2 * 80 * 8 * 128 * 1.0


def test_one_scenario_has_one_kv_size_everywhere() -> None:
    # the engine's KV transfer per request: 5,000 prompt tokens x 163,840 B = 819.2 MB
    out = economics.evaluate_scenario(economics.Scenario(**FP4_70B))
    assert out["kv_transfer_mb_per_request"] == pytest.approx(5000 * KV_FP8 / 1e6)
    # the roofline's cache per token of context: bytes per layer x full-attention layers
    cols, _ = validate(pd.DataFrame([FP4_70B]))
    rl = Roofline(cols)
    assert float(rl.per_layer[0]) * 80 == pytest.approx(KV_FP8)
    # the planner's KV link: the same bytes per token
    wl = planner.workload(economics.Scenario(**FP4_70B), planner.PlanSettings())
    assert wl.kv_bytes_per_token == pytest.approx(KV_FP8)
    # and the function they read, at each precision written out: BF16 2 bytes, FP8 1, FP4 0.5
    got = kv_bytes_per_token(np.array(["llama-3.1-70b"] * 3, dtype=object), np.array(["bf16"] * 3, dtype=object),
                             np.array(["bf16", "fp8", "fp4"], dtype=object))
    assert got.tolist() == [2 * KV_FP8, KV_FP8, KV_FP8 / 2]


def test_bytes_per_value_is_one_table() -> None:
    # a second table of precision -> bytes anywhere in the package would let two steps disagree
    table = re.compile(r"[\"']fp8[\"']\s*:\s*[0-9]")
    holders = [str(p.relative_to(ROOT)) for p in (ROOT / "economics").rglob("*.py")
               if table.search(p.read_text(encoding="utf-8"))]
    assert holders == ["economics/domain/precision.py"]


def test_time_constants_are_defined_once() -> None:
    # 86,400 s a day, 24 h a day, 8,760 h and 365 days a year: named in economics/domain/formula.py, and no other
    # module's code writes them as numbers (docstrings and their examples may)
    found = []
    for path in (ROOT / "economics").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(
            n, ast.Module | ast.FunctionDef | ast.ClassDef) and n.body and isinstance(n.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) not in docs and not isinstance(node.value, bool) and (
                    node.value in (86_400, 8_760, 365) or (isinstance(node.value, float) and node.value == 24.0)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert [f for f in found if not f.startswith("economics/domain/formula.py")] == []


def test_a_change_against_the_baseline_is_worded_once() -> None:
    # the sign, the percentage points and "vs baseline" live in ui/format.py (signed, points, versus); a page that
    # wrote its own would drift (one once said "+0.0 pp vs baseline" where the others said "same as baseline")
    pages = [p for p in (ROOT / "ui").glob("*.py") if p.name != "format.py"]
    own = [str(p.relative_to(ROOT)) for p in pages if re.search(r"vs baseline|same as baseline|'-' if \w+ < 0|"
                                                                 r"\"-\" if \w+ < 0", p.read_text(encoding="utf-8"))]
    assert own == []


def _code_strings(path: Path) -> list[tuple[int, str, bool]]:
    """Every string constant in the code of ``path`` (docstrings left out): line, text, and whether it is an operand
    of a comparison (``==``, ``!=``, ``in``, ``not in``, or a member of a tuple, list or set so compared).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(
        n, ast.Module | ast.FunctionDef | ast.ClassDef) and n.body and isinstance(n.body[0], ast.Expr)}
    compared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                items = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
                compared |= {id(item) for item in items}
    return [(n.lineno, n.value, id(n) in compared) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_retrofit_options_are_told_apart_by_kind_not_by_name() -> None:
    # an option's name written out in the code (compared, looked up or passed on) would break the logic when the
    # option is renamed: only OptionKind holds the names, and code names its members
    from economics.studies.retrofit import OptionKind
    names = {kind.value for kind in OptionKind}
    found = [f"{path.relative_to(ROOT)}:{line} {text!r}" for folder in ("economics", "ui")
             for path in (ROOT / folder).rglob("*.py") for line, text, _ in _code_strings(path) if text in names]
    holder = "economics/studies/retrofit.py"
    assert [f for f in found if not f.startswith(holder)] == []
    assert len([f for f in found if f.startswith(holder)]) == len(OptionKind)  # the enum's own values, once each


def test_catalog_booleans_are_read_once() -> None:
    # a catalog's yes/no column is parsed to bool by economics/catalog/__init__.py (is_yes); a comparison with the word
    # anywhere else is a second reading of it
    found = [f"{path.relative_to(ROOT)}:{line} {text!r}" for folder in ("economics", "ui")
             for path in (ROOT / folder).rglob("*.py") for line, text, cmp in _code_strings(path)
             if cmp and text.strip().lower() == "yes"]
    assert [f for f in found if not f.startswith("economics/catalog/__init__.py")] == []


ROOFLINE_ROW: dict[str, object] = {
    "name": "roofline", "accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 1, "precision": "bf16",
    "bandwidth_utilization": 1.0, "prefill_compute_utilization": 1.0, "step_overhead_us_per_layer": 0.0,
    "accelerators_per_replica": 1, "input_tokens_per_request": 0, "output_tokens_per_request": 2}


@pytest.mark.parametrize(("changes", "bound"), [
    # Llama 3.1 8B at batch 1: 16.06 GB of weights read in 4.79 ms, far above its 16 GFLOP in 0.016 ms: memory
    ({"model": "llama-3.1-8b", "max_batch_size": 1, "compute_utilization": 1.0}, "memory"),
    # Llama 3.2 1B at batch 256 and 1 % of peak: 64.2 ms of compute against 0.743 ms of memory: compute
    ({"model": "llama-3.2-1b", "max_batch_size": 256, "compute_utilization": 0.01}, "compute"),
])
def test_the_interactivity_curve_reads_the_engines_rates_and_bound(changes: dict[str, object], bound: str) -> None:
    # the curve's point at the engine's batch and replica is the engine's estimate: the same decode bound (one
    # Roofline.decode_bound), output rate and per-user speed (throughput.OUTPUT_RATE and USER_SPEED)
    from economics.studies.interactivity import curve_table
    row = {**ROOFLINE_ROW, **changes}
    out = economics.evaluate_scenario(economics.Scenario(**row))
    table = curve_table(pd.DataFrame([row]))
    point = table[(table["batch_size"] == out["batch_size"])
                  & (table["accelerators_per_replica"] == out["accelerators_per_replica"])].iloc[0]
    assert out["decode_bound"] == point["decode_bound"] == bound
    assert point["output_tokens_per_s_per_accelerator"] == pytest.approx(out["output_tokens_per_s_per_accelerator"],
                                                                         rel=1e-12)
    assert point["output_tokens_per_s_per_user"] == pytest.approx(out["output_tokens_per_s_per_user"], rel=1e-12)


def test_horizon_rules_and_unit_costs_are_written_once() -> None:
    # the decode bound's labels, a year's demand growth, its discount factor and the cost of a million tokens each
    # live in one place (engine/roofline.py; domain/finance.py; domain/revenue.py): a study writing its own would
    # drift from the engine (the planner's rack count once did)
    patterns = {r"[\"']memory[\"'],\s*[\"']compute[\"']": "economics/engine/roofline.py",
                r"demand_growth_per_year\)*\s*\)?\s*\*\*": "economics/domain/finance.py",
                r"\(1(\.0)?\s*\+\s*[\w.()\[\]:, ]*(rate|cost_of_capital)[\w.()\[\]:, ]*\)\s*\*\*\s*-":
                    "economics/domain/finance.py",
                r"/\s*\w*tokens\w*\s*\*\s*1e6": ""}
    for pattern, home in patterns.items():
        holders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "economics").rglob("*.py")
                         if re.search(pattern, p.read_text(encoding="utf-8")))
        assert holders == ([home] if home else []), pattern


def test_the_per_accelerator_cost_functions_are_the_engines_pool_formulas() -> None:
    # domain/cost.py's functions (what the planner calls) evaluate the pool formulas the engine evaluates and
    # `explain` renders, for one accelerator: a pool of n accelerators costs n times the function, and the function
    # bodies hold no arithmetic of their own (each is one call of the formula)
    from economics.domain import cost
    from economics.domain.finance import capital_recovery_factor
    n, price, r, years = 8.0, 30_000.0, 0.08, 5.0
    crf = float(capital_recovery_factor(r, years))
    pool = float(cost.CAPITAL.evaluate({"accelerators": n, "accelerator_price_usd": price, "crf": crf}))
    # by hand: 30,000 x 0.250456 / 8,760 = 0.85773 USD/h per accelerator, x 8 = 6.8619 USD/h
    assert pool == pytest.approx(6.8619, abs=1e-4) and pool == n * float(cost.capital_usd_per_hour(price, r, years))
    tree = ast.parse((ROOT / "economics/domain/cost.py").read_text(encoding="utf-8"))
    functions = {"average_power_kw", "energy_usd_per_hour", "facility_usd_per_hour", "operations_usd_per_hour",
                 "capital_usd_per_hour"}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            assert len(body) == 1 and isinstance(body[0], ast.Return), node.name
            call = body[0].value
            assert isinstance(call, ast.Call) and getattr(call.func, "id", "") == "_per_accelerator", node.name
            functions.discard(node.name)
    assert not functions  # every one of them was found


def test_the_margin_functions_are_the_engines_margins() -> None:
    # domain/revenue.py's margin functions evaluate the engine's PROFIT and margin formulas with its rule for a base
    # that is not positive (empty): a preset priced, then with an input price of 0 and no output price (revenue 0)
    from economics.domain import revenue
    row = next(iter(economics.preset_scenarios().values()))[0].model_dump()
    unpriced = {**row, "price_usd_per_m_input_tokens": 0.0, "price_usd_per_m_output_tokens": None}
    result = economics.evaluate(pd.DataFrame([row, unpriced]))
    rev, cost = result["revenue_usd_per_day"].to_numpy(float), result["cost_usd_per_day"].to_numpy(float)
    assert rev[0] > 0 and rev[1] == 0.0  # the second row has no revenue, so its gross margin is empty
    np.testing.assert_array_equal(revenue.gross_margin(rev, cost), result["gross_margin"].to_numpy(float))
    np.testing.assert_array_equal(revenue.cost_profit_margin(rev, cost),
                                  result["cost_profit_margin"].to_numpy(float))
    # by hand, the second row: (0 - cost) / cost = -1, and (0 - cost) / 0 is no number
    assert float(revenue.cost_profit_margin(rev, cost)[1]) == -1.0 and np.isnan(revenue.gross_margin(rev, cost)[1])


@pytest.mark.parametrize("tariff", ["", "sce-tou-8-d-summer"])
def test_the_planner_s_hour_weights_are_the_hour_types_and_its_costs_read_them(tariff: str) -> None:
    # the hours each hour type stands for are hour_types' counts, once: the model keeps them (the separable search
    # splits the day's cost by them, where it once read them off the costs), and a rented count costs that many of
    # its hour's own model's hours (stage 2 prices a rental block by this ratio). On the Plan page's diurnal day (14
    # hour types, 24 hours), flat-priced and on a time-of-use tariff (each hour's energy at the day's mean kept)
    s = economics.Scenario(**{**page_scenario(5.1e9).model_dump(), "electricity_tariff": tariff or None})
    pb = page_problem(s)
    m, _, weights = build_model(pb, {})
    assert np.array_equal(m.hour_weights, hour_types(pb.wl)[2]) and m.hour_weights.sum() == 24
    ratios = [(h, m.c[cols[n]] / sub.c[n]) for h, (sub, cols) in enumerate(hourly_models(pb, {}, m))
              for (_, hh), n in sub.count_col.items() if hh is not ALL_DAY and sub.c[n] > 0]
    assert {h for h, _ in ratios} == set(range(len(weights)))  # priced rented counts in every hour type
    assert [r for _, r in ratios] == pytest.approx([float(weights[h]) for h, _ in ratios], rel=1e-12)


def test_every_frontier_choice_is_the_one_list() -> None:
    # the frontiers a plan draws were listed four times (plan's and report's --frontier, the API's two Literals, the
    # MCP tool's enum) and the report's list lacked carbon and all; each now reads FrontierChoice
    from economics.api.app import create_app
    from economics.api.settings import Settings
    from economics.mcp.schemas import ToolName, tools
    from economics.studies.planner.inputs import FrontierChoice

    one = ["none", "speed", "site", "both", "carbon", "all"]
    assert [c.value for c in FrontierChoice] == one
    for command in ("plan", "report"):
        assert _choices(command, "frontier") == one, command
    plan_tool = next(t for t in tools(Settings()) if t.name is ToolName.PLAN)
    assert plan_tool.properties["frontier"]["enum"] == one
    doc = create_app().openapi()  # the routes' parameters: tests/test_openapi.py
    assert doc["components"]["schemas"]["FrontierChoice"]["enum"] == one


def test_a_frontier_that_is_not_one_is_named() -> None:
    from economics.io.plan_files import frontier_choice
    from economics.schema.validation import InputError
    from economics.studies.planner.inputs import FrontierChoice

    assert frontier_choice("all") is FrontierChoice.ALL
    with pytest.raises(InputError, match=r"frontier: 'sped' is not one of none, speed, site, both, carbon, all"):
        frontier_choice("sped")


def _format_words(path: Path, words: set[str]) -> list[str]:
    """Display formats written as words in the code of ``path``: a table column's ``(title, "usd")`` pair, an
    ``fmt="usd"`` argument, or a comparison with a spec's ``.fmt``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2:
            words_in = [node.elts[1]]
        elif isinstance(node, ast.keyword) and node.arg == "fmt":
            words_in = [node.value]
        elif isinstance(node, ast.Compare) and any(isinstance(o, ast.Attribute) and o.attr == "fmt"
                                                   for o in (node.left, *node.comparators)):
            words_in = [node.left, *node.comparators]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{w.lineno} {w.value!r}" for w in words_in
                  if isinstance(w, ast.Constant) and w.value in words]
    return found


def test_every_display_format_is_one_member_with_a_formatter_in_each_layer() -> None:
    # the formats were words in the output schema, the report's formatter table, the KPIs' tables and each page's
    # column tables ("money" beside "usd" in some); DisplayFormat is the one list, and each layer's table is keyed by it
    from economics.report import format as report_format
    from economics.report import kpis
    from economics.schema.outputs import OUTPUTS, DisplayFormat
    from ui import common

    assert [f.value for f in DisplayFormat] == ["usd", "usd_rate", "count", "number", "percent", "months", "text",
                                                "bool"]
    assert set(report_format.FORMATTERS) == set(DisplayFormat)  # the text of a value, for the report and the pages
    assert set(common.COLUMN_FORMATS) == set(DisplayFormat)  # the app's column formats
    used = [s.fmt for s in (*OUTPUTS.values(), report_format.SPEED)]
    used += [kind for _, kind in kpis.PLAN_COLUMNS.values()] + [kind for _, _, kind in kpis.PLAN_KPIS]
    assert all(type(kind) is DisplayFormat for kind in used)
    assert {*used} >= {DisplayFormat.USD, DisplayFormat.USD_RATE, DisplayFormat.PERCENT, DisplayFormat.BOOL}
    words = {f.value for f in DisplayFormat} | {"money"}
    paths = [*sorted((ROOT / "ui").glob("*.py")), *sorted((ROOT / "economics/report").glob("*.py")),
             ROOT / "economics/schema/outputs.py", ROOT / "app.py"]
    assert [w for path in paths for w in _format_words(path, words)] == []


def test_the_display_formats_write_a_value_and_a_change_as_the_golden_texts() -> None:
    from economics.report.format import FORMATTERS, change, magnitude_format
    from economics.schema.outputs import DisplayFormat as Show

    value = 1234.5
    assert [FORMATTERS[kind](value) for kind in Show] == [
        "$1,234", "$1,234.50", "1,234", "1,234", "123,450.0 %", "1,234.5 months", "1234.5", "✓"]
    # a change of a percentage is in points: 0.05 x 100 = 5.0 pp; of months as months (one decimal)
    assert change(0.05, Show.PERCENT) == "+5.0 pp" and change(-1.25, Show.MONTHS) == "-1.2 months"
    # a column's number format by its largest magnitude: 0.5 < 1, so a price keeps four decimals, a count none
    assert [magnitude_format(kind, [0.5]) for kind in (Show.USD_RATE, Show.USD, Show.COUNT, Show.NUMBER)] == [
        "%.4f", "%,.2f", "%,d", "%.3f"]


def _cli_options(parser: Any = None, path: str = "") -> list[tuple[str, Any]]:
    """Every option of every command (subcommands' too, as ``store show``'s) with its command's path."""
    import argparse

    from economics.cli import build_parser

    found = []
    for action in (parser or build_parser())._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _cli_options(sub, f"{path} {name}".strip())
        else:
            found.append((path, action))
    return found


def _format_options() -> dict[str, list[str]]:
    """Every command's ``--format``/``--input-format`` that names an answer's format, as 'command dest': its choices
    (import-benchmark's and import-sessions' --format name a benchmark's format: auto, ...)."""
    found: dict[str, list[str]] = {}
    for path, action in _cli_options():
        if action.dest in ("format", "input_format") and "auto" not in (action.choices or ()):
            assert all(type(c) is str for c in action.choices or ()), path  # words in argparse's message
            found[f"{path} {action.dest}"] = list(action.choices or ())
    return found


def test_every_output_format_choice_is_a_subset_of_the_one_list() -> None:
    # the formats were Literals on each route, tuples in each command's --format and words in the MCP's calls;
    # OutputFormat is the one list, each option or parameter takes one of its subsets, MEDIA gives each a media type
    from economics.api.tasks import MEDIA
    from economics.io.output_paths import FORMAT_CHOICES, OutputFormat, RecordFormat, TableFormat

    assert [f.value for f in OutputFormat] == ["json", "csv", "parquet", "text", "markdown", "pdf"]
    assert set(MEDIA) == set(OutputFormat)
    for subset in FORMAT_CHOICES:  # each member spelled as the one list's member of its name
        assert [OutputFormat[m.name].value for m in subset] == [m.value for m in subset], subset
    table, record = [m.value for m in TableFormat], [m.value for m in RecordFormat]
    assert _format_options() == {
        "evaluate format": table, "evaluate input_format": table, "compare format": record,
        "session-profile format": record, "retrofit format": record, "kv-memory format": record,
        "plan format": record, "store show format": record}


@pytest.mark.parametrize(("argv", "words"), [
    (["evaluate", "--format", "xml"], "'json', 'csv', 'parquet'"),
    (["compare", "--format", "xml"], "'json', 'csv'"),
    (["plan", "--frontier", "x"], "'none', 'speed', 'site', 'both', 'carbon', 'all'"),
    (["report", "-o", "r.pdf", "--kind", "x"], "'cost', 'fleet', 'sessions', 'decode', 'plan'"),
])
def test_a_choice_that_is_not_one_is_answered_with_the_enum_s_words(argv: list[str], words: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # choices given as an enum's members made argparse list their reprs ("<TableFormat.JSON: 'json'>")
    from economics.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser(argv[0]).parse_args(argv)
    assert f"invalid choice: '{argv[-1]}' (choose from {words})" in capsys.readouterr().err


def test_every_option_offering_choices_defaults_to_one_of_them() -> None:
    # a default spelled again beside its enum ("auto", "none", "cost") would drift from it unseen: argparse does not
    # check a default against the choices
    import argparse

    listed = [(f"{path} {a.dest}", a.default, [str(c) for c in a.choices]) for path, a in _cli_options()
              if a.choices is not None and a.default not in (None, argparse.SUPPRESS)]
    assert len(listed) >= 10  # --format, --frontier, --kind, --distribution and the rest
    assert [(where, default) for where, default, choices in listed if str(default) not in choices] == []


def _choices(command: str, dest: str) -> list[str]:
    """The choices ``command``'s option ``dest`` offers on the command line."""
    from economics.cli import build_parser

    sub = next(a for a in build_parser(command)._actions if a.choices and command in a.choices).choices[command]
    return [str(c) for c in next(a for a in sub._actions if a.dest == dest).choices]


def test_every_draw_and_file_format_option_is_its_one_enum() -> None:
    # the Monte Carlo's distributions, the session traces' and the benchmarks' formats were listed again as the CLI's
    # choices and the API's Literals (the benchmark's format a free string there, refused only by the reader); the
    # routes' parameters: tests/test_openapi.py
    from economics.io.benchmark_formats import FORMATS as BENCHMARK_FORMATS
    from economics.io.benchmark_formats import BenchmarkFormat
    from economics.io.session_traces import FORMATS as TRACE_FORMATS
    from economics.io.session_traces import TraceFormat
    from economics.studies.retrofit_odds import OddsDistribution
    from economics.studies.uncertainty import Distribution

    assert [d.value for d in Distribution] == ["triangular", "uniform"]
    assert [d.value for d in OddsDistribution] == ["triangular", "uniform", "normal"]  # the study's two and one more
    for command, dest, kind in (("uncertainty", "distribution", Distribution), ("sweep", "distribution", Distribution),
                                ("import-sessions", "format", TraceFormat),
                                ("import-benchmark", "format", BenchmarkFormat)):
        assert _choices(command, dest) == [k.value for k in kind], command
    assert ("auto", *TRACE_FORMATS) == tuple(TraceFormat) and ("auto", *BENCHMARK_FORMATS) == tuple(BenchmarkFormat)
