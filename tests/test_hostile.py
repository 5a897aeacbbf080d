"""Hostile and odd input: files and links people send around. Each case gets a clear message or is read correctly;
nothing raises an unexpected exception; every valid row gives finite outputs."""

from __future__ import annotations

import enum
import functools
import io
import json
import math
import re
import tomllib
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from bench.fuzz_common import computed_rows, derivation_gaps
from economics.io.scenario_files import read_scenarios_json, to_csv_text
from economics.io.tables import read_table
from economics.schema import values
from economics.schema.outputs import NUMERIC_OUTPUTS
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError, known_ids
from economics.schema.values import FieldKind
from economics.studies import uncertainty

ROOT = Path(__file__).resolve().parents[1]


def test_semicolon_export_with_decimal_commas_is_read() -> None:
    df = read_table(b"name;accelerator_count;output_tokens_per_s_per_accelerator;electricity_usd_per_kwh\n"
                            b"eu export;8;1000;0,12\n", fmt="csv")
    out = economics.evaluate(df)
    assert bool(out["valid"].iloc[0]) and float(out["electricity_usd_per_kwh"].iloc[0]) == pytest.approx(0.12)


def test_tab_separated_file_is_read() -> None:
    df = read_table(b"name\taccelerator_count\toutput_tokens_per_s_per_accelerator\nt\t8\t1000\n", fmt="csv")
    assert bool(economics.evaluate(df)["valid"].iloc[0])


def test_a_million_rows_are_evaluated() -> None:
    body = "accelerator_count,output_tokens_per_s_per_accelerator\n" + "8,1000\n" * 1_000_000
    out = economics.evaluate(read_table(body.encode(), fmt="csv"))
    assert len(out) == 1_000_000 and bool(out["valid"].all())
    assert np.isfinite(out["cost_usd_per_m_tokens"].to_numpy(dtype=float)).all()


def test_formula_cells_come_back_neutralised_and_script_tags_stay_text() -> None:
    df = read_table(b'name,accelerator_count,output_tokens_per_s_per_accelerator\n'
                            b'"=cmd|\' /C calc\'!A0",8,1000\n"@SUM(1,2)",8,1000\n'
                            b'"<script>alert(1)</script>",8,1000\n', fmt="csv")
    names = pd.read_csv(io.StringIO(to_csv_text(economics.evaluate(df))), dtype=str)["name"].tolist()
    assert names[0].startswith("'=cmd|") and names[1].startswith("'@SUM")
    assert names[2] == "<script>alert(1)</script>"  # data, not markup; the app never renders raw HTML


def test_streamlit_server_is_hardened() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] <= 50 and config["server"]["enableXsrfProtection"] is True
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"
    for path in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]:
        assert "unsafe_allow_html" not in path.read_text(encoding="utf-8"), path


# --- fuzzing: the CSV reader and the evaluation on arbitrary input -----------------------------------------

CELLS = st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(str),
                  st.integers(-10**6, 10**9).map(str), st.sampled_from(["", "nan", "inf", "-1", "1e400", "h100-sxm",
                                                                         "own", "rent", "=1+1", "0,5"]))
COLUMNS = st.lists(st.sampled_from(["name", "accelerator", "ownership", "accelerator_count", "pue",
                                    "output_tokens_per_s_per_accelerator", "electricity_usd_per_kwh",
                                    "demand_output_tokens_per_day", "model", "decode_accelerator", "bogus",
                                    "pue_low", "pue_high"]), min_size=1, max_size=6, unique=True)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COLUMNS, st.lists(st.lists(CELLS, min_size=6, max_size=6), min_size=0, max_size=5),
       st.sampled_from([",", ";"]))
def test_fuzz_csv_never_raises_and_valid_rows_are_finite(columns: list[str], rows: list[list[str]],
                                                         sep: str) -> None:
    lines = [sep.join(columns)] + [sep.join(c.replace(sep, " ").replace("\n", " ").replace('"', "")
                                            for c in r[:len(columns)]) for r in rows]
    try:
        df = read_table(("\n".join(lines) + "\n").encode(), fmt="csv")
    except InputError as exc:
        assert str(exc)  # a reason, not an empty message
        return
    result, report = economics.evaluate_with_report(df)
    assert len(result) == len(df)  # nothing dropped
    assert_messages_and_finite(result, report)


def assert_messages_and_finite(result: pd.DataFrame, report: pd.DataFrame) -> None:
    """Each refusal names its field, and every number the result shows is finite (the result's last guard: an
    output computed infinite is emptied before this sees it, which :func:`assert_derivation_shown` catches)."""
    for _, bad in report.iterrows():
        assert re.match(r"^[a-z][a-z0-9_]*: ", bad["message"]), bad["message"]  # names the field (bf16, fp8: digits)
    numeric = result.select_dtypes(include=["Float64", "Int64"])
    # every cell that is not missing (isna: what each column's dropna leaves out) is finite, all columns at once
    # (a dropna per column was about 40 % of the test's time)
    present = ~numeric.isna().to_numpy()
    nonfinite = present & ~np.isfinite(numeric.to_numpy(dtype=float, na_value=np.nan))
    assert not nonfinite.any(), list(numeric.columns[nonfinite.any(axis=0)])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_bytes_are_refused_with_a_reason_or_read(data: bytes) -> None:
    try:
        df = read_table(data, fmt="csv")
    except InputError as exc:
        assert str(exc)
        return
    out = economics.evaluate(df)
    assert len(out) == len(df)


# --- fuzzing: files of computable rows, changed a little: what the engine computes is finite and shown ------------

SEED_CHANGES: tuple[tuple[int, dict[str, object]], ...] = (
    (1, {"rent_tier": "spot"}), (4, {"rent_tier": "reserved"}),
    (0, {"grid_region": "us-egrid-average", "embodied_kgco2e_per_accelerator": 1500, "carbon_usd_per_tonne": 50}),
    (2, {"electricity_tariff": "de-lu-day-ahead-2024"}), (6, {"input_tokens_per_request": 50000}),
    (0, {"measured_output_tokens_per_s_per_user": 30, "concurrent_users_per_replica": 16,
         "measured_speed_context_tokens": 1000, "long_context_tokens": 100000,
         "long_context_output_tokens_per_s_per_user": 15}))
"""Presets (by position) changed to bring the outputs no preset has: spot and reserved rent, carbon, a tariff, the
per-user speed read at a context."""
SEED_FILES = ("example-sessions.csv", "example-kv-memory.csv")
"""docs/ examples of session rows and of KV memory tiers."""


def _cell(value: object) -> str:
    """A scenario's value as a file's cell: empty for None, true/false, numbers and text as Python writes them."""
    if value is None:
        return ""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def seed_rows() -> list[dict[str, str]]:
    """Rows that between them compute every numeric output (test_seed_rows_compute_every_output): the presets,
    some changed, and the docs' session examples, as cells."""
    presets = [s.model_dump(mode="json") for s, _ in economics.preset_scenarios().values()]
    rows = [{k: _cell(v) for k, v in row.items()}
            for row in (*presets, *({**presets[i], **changes} for i, changes in SEED_CHANGES))]
    for name in SEED_FILES:
        table = read_table((ROOT / "docs" / name).read_bytes(), fmt="csv")
        rows += [{k: "" if pd.isna(v) else str(v) for k, v in rec.items()} for rec in table.to_dict("records")]
    return rows


SEEDS = seed_rows()
HEADER = list(dict.fromkeys(k for row in SEEDS for k in row))
RANGED_FIELDS = tuple(name for name in FIELDS if FIELDS[name].kind is FieldKind.FLOAT)
PLAIN_NUMBERS = (0.05, 0.5, 1, 2, 8, 64, 1000, 3e5)
"""Plain values tried for a number field, those within its bounds (besides its default and any value in them)."""


def bounds(name: str) -> tuple[float, float, bool, bool]:
    """Field ``name``'s lowest and highest value and whether each is excluded, from the scenario schema."""
    spec = FIELDS[name]
    low, open_low = (spec.ge, False) if spec.ge is not None else (spec.gt, spec.gt is not None)
    high, open_high = (spec.le, False) if spec.le is not None else (spec.lt, spec.lt is not None)
    return -1e18 if low is None else low, 1e18 if high is None else high, open_low, open_high


@functools.cache
def valid_cell(name: str) -> st.SearchStrategy[str]:
    """A cell the reader accepts for field ``name``: a choice, an id the field may hold (the validation's own list:
    an accelerator, a model, a serving stack, a claim), a number within the field's bounds (its default, a plain one
    or any), or, for other text, empty (the default)."""
    spec = FIELDS[name]
    if spec.kind in (FieldKind.CHOICE, FieldKind.BOOL):
        return st.sampled_from(spec.choices or ("true", "false"))
    if name in values.ID_FIELDS:
        return st.sampled_from(known_ids(name))
    if spec.kind is FieldKind.STR:
        return st.text(max_size=8) if name == "name" else st.just("")
    plain = [spec.default] if isinstance(spec.default, (int, float)) and not isinstance(spec.default, bool) else []
    plain += [x for x in PLAIN_NUMBERS if spec.kind is FieldKind.FLOAT or x == int(x)]
    shown = [str(int(x)) if spec.kind is FieldKind.INT else repr(float(x)) for x in plain if spec.within(float(x))]
    low, high, open_low, open_high = bounds(name)
    anywhere = st.integers(int(low), int(high)).map(str) if spec.kind is FieldKind.INT else st.floats(
        low, high, exclude_min=open_low, exclude_max=open_high).map(repr)
    return st.one_of(st.sampled_from(shown), anywhere)


@st.composite
def range_cells(draw: st.DrawFn, name: str, base: str) -> tuple[str, str]:
    """``name``'s ``_low`` and ``_high`` cells around the row's ``base`` value, within the field's bounds (both
    empty, no range, where the row leaves the field empty)."""
    if not base:
        return "", ""
    low, high, open_low, open_high = bounds(name)
    return (repr(draw(st.floats(low, float(base), exclude_min=open_low))),
            repr(draw(st.floats(float(base), high, exclude_max=open_high))))


@st.composite
def seeded_tables(draw: st.DrawFn) -> tuple[list[str], list[dict[str, str]]]:
    """A header (the fields the rows give, perhaps one range) and one to four rows, each a seed row with up to
    three cells changed: to valid values (a clean row, mostly computed: valid rows with the outputs its seed brings)
    or to junk."""
    ranged = draw(st.lists(st.sampled_from(RANGED_FIELDS), max_size=1))
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        row, clean = dict(draw(st.sampled_from(SEEDS))), draw(st.booleans())
        for name in draw(st.lists(st.sampled_from(HEADER), max_size=3, unique=True)):
            row[name] = draw(valid_cell(name) if clean else CELLS)
        for name in ranged:
            ends = draw(range_cells(name, row.get(name, ""))) if clean else (draw(CELLS), draw(CELLS))
            row[f"{name}_low"], row[f"{name}_high"] = ends
        rows.append(row)
    given = [c for c in HEADER if any(row.get(c) for row in rows)]  # a column empty on every row is left out
    return given + [f"{name}{end}" for name in ranged for end in ("_low", "_high")], rows


class FileFormat(enum.Enum):
    """How a fuzzed table is written: CSV with either separator, or JSON."""

    COMMA = ","
    SEMICOLON = ";"
    JSON = "json"


def file_of(header: list[str], rows: list[dict[str, str]], fmt: FileFormat) -> bytes:
    """The table as a file's bytes: a CSV cell's separators, line breaks, quotes and NUL (the reader refuses a file
    with one) made spaces, and in a ``;`` file a number's decimal point a comma, as such a file writes it (its
    reader refuses ``0.125``, 125 or 0.125, for the whole file)."""
    if fmt is FileFormat.JSON:
        return json.dumps([{c: row.get(c, "") for c in header} for row in rows]).encode()
    sep = fmt.value

    def cell(text: str) -> str:
        text = re.sub(f'[{sep}\\n\\r"\\x00]', " ", text)
        return text.replace(".", ",") if sep == ";" and values.NUMBER.fullmatch(text) else text

    lines = [sep.join(header)] + [sep.join(cell(row.get(c, "")) for c in header) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def read_file(data: bytes, fmt: FileFormat) -> pd.DataFrame:
    return read_scenarios_json(data) if fmt is FileFormat.JSON else read_table(data, fmt="csv")


def assert_derivation_shown(df: pd.DataFrame, row: int, shown: pd.Series) -> None:
    """Row ``row`` of ``df`` (valid and feasible), whose result in the table is ``shown``, as its derivation (the
    row alone) computes it: no step infinite, and every output a step computes (a finite value) shown in the result
    (:func:`bench.fuzz_common.derivation_gaps`, which the fuzz bench checks with too)."""
    assert derivation_gaps(df, row, shown) == []


def test_seed_rows_compute_every_output() -> None:
    """The fuzz's seeds reach every numeric output, each finite and shown as its derivation computes it."""
    df = read_table(file_of(HEADER, SEEDS, FileFormat.COMMA), fmt="csv")
    result = economics.evaluate(df)
    assert computed_rows(result).tolist() == list(range(len(SEEDS)))
    valid = result.loc[:, list(NUMERIC_OUTPUTS)]
    assert [c for c in NUMERIC_OUTPUTS if valid[c].isna().all()] == []  # a new output wants a seed that gives it
    assert np.isfinite(valid.to_numpy(dtype=float, na_value=0.0)).all()
    for row in range(len(SEEDS)):
        assert_derivation_shown(df, row, result.iloc[row])


def test_every_output_a_seed_row_shows_is_in_its_derivation() -> None:
    # an output with no step escapes the derivation check: the range ends, the rack power limit, systems per rack,
    # the carbon, retrofit and KV tiers' zero lines and the cost lines of the ownership a row does not have (set to
    # 0 before the engine's stages computed the others) had none. Each is the engine's own formula now, and the last
    # step of an output is the figure the row shows; a zero line is never followed by another step of its column
    # (the zero recorded for a row the engine then computes)
    df = read_table(file_of(HEADER, SEEDS, FileFormat.COMMA), fmt="csv")
    result = economics.evaluate(df)
    missing: dict[str, int] = {}
    differ: list[tuple[int, str, float, float]] = []
    zero_then_computed: list[tuple[int, str]] = []
    for row in range(len(SEEDS)):
        steps = economics.explain_row(df, row).steps
        last = {s.name: s.value for s in steps}
        for name in NUMERIC_OUTPUTS:
            shown = result.iloc[row][name]
            if pd.isna(shown):
                continue
            if name not in last:
                missing[name] = missing.get(name, 0) + 1
            elif not math.isclose(float(shown), last[name], rel_tol=1e-9, abs_tol=1e-12):
                differ.append((row, name, float(shown), last[name]))
        zero_then_computed += [(row, s.name) for i, s in enumerate(steps)
                               if s.symbolic == "0" and any(t.name == s.name for t in steps[i + 1:])]
    assert missing == {}
    assert differ == []
    assert zero_then_computed == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeded_tables(), st.sampled_from(FileFormat))
def test_fuzz_changed_seeds_give_finite_outputs_as_derived(table: tuple[list[str], list[dict[str, str]]],
                                                           fmt: FileFormat) -> None:
    try:
        df = read_file(file_of(*table, fmt), fmt)  # every cell is one the reader reads (no separator, no quote)
    except InputError as exc:  # a junk cell a ';' file's decimal rule cannot read (1.234): refused, named
        assert fmt is FileFormat.SEMICOLON and "in a ';'-separated file" in str(exc), str(exc)
        return
    result, report = economics.evaluate_with_report(df)
    assert_messages_and_finite(result, report)
    for row in computed_rows(result):  # every one: a break may spare a table's first row (or its only one)
        assert_derivation_shown(df, int(row), result.iloc[row])


# --- issue 13: nothing silent, nothing crashes --------------------------------------------------------------

API_BASE = {"accelerator_count": [8, 8], "output_tokens_per_s_per_accelerator": [1000, 1000]}


def test_a_column_mixing_numbers_and_text_reads_every_cell() -> None:
    # 0.5 and "0.5" are the same price; neither row may fall back to the default 0.0806 USD/kWh
    out = economics.evaluate(pd.DataFrame({**API_BASE, "electricity_usd_per_kwh": pd.Series([0.5, "0.5"],
                                                                                            dtype=object)}))
    assert out["electricity_usd_per_kwh"].tolist() == [0.5, 0.5]
    assert out["cost_usd_per_m_tokens"].iloc[0] == out["cost_usd_per_m_tokens"].iloc[1]
    mixed = economics.evaluate(pd.DataFrame({**API_BASE, "electricity_usd_per_kwh": pd.Series([0.5, "abc"],
                                                                                              dtype=object)}))
    assert mixed["valid"].tolist() == [True, False]
    assert "electricity_usd_per_kwh: 'abc' is not a number [USD/kWh]" in mixed.loc[1, "error"]


def test_missing_and_decimal_cells_are_read_and_lists_are_refused_by_name() -> None:
    from decimal import Decimal

    out = economics.evaluate(pd.DataFrame({**API_BASE, "electricity_usd_per_kwh": pd.Series(
        [pd.NA, Decimal("0.5")], dtype=object)}))
    assert out["electricity_usd_per_kwh"].tolist() == [0.0806, 0.5]  # pd.NA is empty: the sourced default
    for odd, words in (([0.5], "[0.5] (list)"), ({"a": 1}, "{'a': 1} (dict)"), (b"0.5", "b'0.5' (bytes)")):
        with pytest.raises(InputError, match=re.escape(f"electricity_usd_per_kwh, row 2: {words} is not a number")):
            economics.evaluate(pd.DataFrame({**API_BASE, "electricity_usd_per_kwh": pd.Series([0.1, odd],
                                                                                               dtype=object)}))
    with pytest.raises(InputError, match=r"ownership, row 1: \['own'\] \(list\) is not text"):
        economics.evaluate(pd.DataFrame({**API_BASE, "ownership": pd.Series([["own"], "rent"], dtype=object)}))


def test_decimal_comma_ranges_in_semicolon_files_are_read() -> None:
    df = read_table(b"name;accelerator_count;output_tokens_per_s_per_accelerator;electricity_usd_per_kwh;"
                    b"electricity_usd_per_kwh_low;electricity_usd_per_kwh_high\neu;8;1000;0,12;0,08;0,2\n", fmt="csv")
    result, report = economics.evaluate_with_report(df)
    assert report.empty and bool(result["valid"].iloc[0])
    assert uncertainty.ranges_from_row(df.iloc[0].to_dict()) == {"electricity_usd_per_kwh": (0.08, 0.2)}


@pytest.mark.parametrize("low, high, message", [
    ("abc", "0.2", "electricity_usd_per_kwh_low: 'abc' is not a number [USD/kWh]"),
    ("0.05", "", "electricity_usd_per_kwh_high: empty; give both"),
    ("0.3", "0.2", "electricity_usd_per_kwh_low: range 0.3..0.2 is inverted"),
    ("0.15", "0.2", "electricity_usd_per_kwh: range 0.15..0.2 must contain the base value 0.1"),
    ("-1", "0.2", "electricity_usd_per_kwh_low: must be >= 0 and <= 10 [USD/kWh], got -1"),
])
def test_bad_range_values_make_the_row_invalid_by_name(low: str, high: str, message: str) -> None:
    df = read_table(f"accelerator_count,output_tokens_per_s_per_accelerator,electricity_usd_per_kwh,"
                            f"electricity_usd_per_kwh_low,electricity_usd_per_kwh_high\n8,1000,0.1,{low},{high}\n"
                            f"8,1000,0.1,0.05,0.2\n".encode(), fmt="csv")
    result = economics.evaluate(df)
    assert result["valid"].tolist() == [False, True]
    assert message in result.loc[0, "error"]


def test_uncertainty_of_an_invalid_scenario_fails_loudly() -> None:
    bad = {"accelerator": "sn40l", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 500}  # no price
    with pytest.raises(economics.ScenarioError, match="accelerator_price_usd: not in the catalog for 'sn40l'"):
        uncertainty.monte_carlo(bad, {"electricity_usd_per_kwh": (0.05, 0.2)}, samples=10)
    with pytest.raises(economics.ScenarioError, match="accelerator_price_usd"):
        uncertainty.tornado(bad, {"electricity_usd_per_kwh": (0.05, 0.2)})


def test_a_first_cell_starting_with_hash_is_a_row_not_a_comment() -> None:
    df = read_table(b"# comment\nname,accelerator_count,output_tokens_per_s_per_accelerator\n"
                            b"#1 fleet,8,1000\nsecond,8,\x1c1000\n", fmt="csv")
    assert df["name"].tolist() == ["#1 fleet", "second"]  # \x1c inside a cell does not split the row
    out = economics.evaluate(df)  # \x1c is white space to the parser (str.strip), as everywhere
    assert out["valid"].tolist() == [True, True] and out["output_tokens_per_s_per_accelerator"].tolist() == [1000] * 2


def test_json_scenarios_read_like_csv_rows() -> None:
    df = read_scenarios_json('[{"name": "a", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": "1000",'
                             ' "rent_includes_energy": "y", "pue": NaN}]')
    out = economics.evaluate(df)
    assert not bool(out["valid"].iloc[0]) and "pue: 'NaN' is not a number" in out["error"].iloc[0]
    for text, words in (("[1, 2]", "row 1: a scenario must be a JSON object"), ("{", "not well-formed JSON"),
                        ("[]", "no scenarios"), ('"x"', "array of objects"), ("[" * 100_000, "JSON")):
        with pytest.raises(InputError, match=words):
            read_scenarios_json(text)


def test_excel_export_escapes_control_characters_and_reports_cut_cells() -> None:
    import openpyxl

    from economics.io.scenario_files import EXCEL_MAX_CELL_CHARS, excel_export, to_excel_bytes

    names = ["bell\x01\x07\x0b\x1b[31m", "n" * 40_000, "plain"]
    df = read_table(("name,accelerator_count,output_tokens_per_s_per_accelerator\n"
                             + "".join(f'"{n}",8,1000\n' for n in names)).encode(), fmt="csv")
    result = economics.evaluate(df)
    data, notes = excel_export(result)
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    assert sheet["A2"].value == "bell\\x01\\x07\\x0b\\x1b[31m"
    assert len(sheet["A3"].value) == EXCEL_MAX_CELL_CHARS and sheet["A4"].value == "plain"
    assert any("control characters in name (rows 1)" in n for n in notes)
    assert any("name longer than a cell holds (32,767 characters) in rows 2 (40,000 characters)" in n for n in notes)
    assert to_excel_bytes(result)[:2] == b"PK"  # the plain function still gives the workbook
    assert "\x1b" in to_csv_text(result)  # CSV and JSON keep the exact text


@pytest.mark.parametrize("data, words", [
    (b"name,accelerator_count,output_tokens_per_s_per_accelerator\na,8,1000\nb,8\n",
     "rows whose number of cells is not the header's 3 (a missing or extra separator would shift or default "
     "values), among data rows 1-2: 'b,8' (2 cells)"),
    (b"name,accelerator_count\na,8,1000\n", "'a,8,1000' (3 cells)"),  # pandas would make 'a' the index: shifted
    (b"name,accelerator_count\ra,8\rb\r", "among data rows 1-2: 'b' (1 cells)"),  # old Mac line ends
    (b"# note\nname,accelerator_count,output_tokens_per_s_per_accelerator\n\"two\nlines\",8,1000\nb\n",
     "among data rows 1-2: 'b' (1 cells)"),  # a quoted line break is inside its row
    (b"name,accelerator_count\n" + b"a,8\n" * 10_000 + b"b,\x008\n", "binary data"),  # a NUL anywhere
])
def test_ragged_rows_and_late_nul_bytes_are_refused_not_padded_or_shifted(data: bytes, words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)):
        read_table(data, fmt="csv")


def test_blank_lines_and_rows_of_empty_cells_are_not_short_rows() -> None:
    df = read_table(b"name,accelerator_count,output_tokens_per_s_per_accelerator\na,8,1000\n\n\n,,\n", fmt="csv")
    assert len(df) == 2  # the blank lines are skipped; ',,' is a row of empty cells (the default scenario)
    # a line of spaces is a row of one cell, not a blank line: refused as short, never padded
    with pytest.raises(InputError, match=r"among data rows 1-3: '  ' \(1 cells\)"):
        read_table(b"name,accelerator_count,output_tokens_per_s_per_accelerator\na,8,1000\n\n  \n,,\n", fmt="csv")


@pytest.mark.parametrize("data", [b"name\r,pue\nx,1\n", b"a\rb,c\n", b'na"me\r,pue\n', b"name,pue\nx\r,1\n",
                                  b'name,pue\n"x,1\n'])
def test_bare_carriage_returns_and_open_quotes_are_refused_with_a_reason(data: bytes) -> None:
    # found by bench/fuzz.py: the header reader raised csv.Error on a bare \r
    with pytest.raises(InputError) as exc:
        read_table(data, fmt="csv")
    assert str(exc.value)


def test_a_disaggregated_rows_prefill_rate_is_its_own_beside_a_roofline_row() -> None:
    # found by the seeded fuzz: a table's roofline estimate (here a session row's) wrote its own prefill rate over
    # the disaggregated row's estimated one (NaN there: 8 prefill accelerators idle, not 136)
    disaggregated = {"model": "llama-3.1-70b", "target_output_tokens_per_s_per_user": "20",
                     "demand_output_tokens_per_day": "5e9", "decode_accelerator": "a100-sxm"}
    session = read_table((ROOT / "docs" / "example-sessions.csv").read_bytes(), fmt="csv").iloc[[0]]
    alone = economics.evaluate(pd.DataFrame([disaggregated]))
    both = economics.evaluate(pd.concat([pd.DataFrame([disaggregated]), session], ignore_index=True))
    assert int(alone["accelerators"].iloc[0]) == 136
    pd.testing.assert_series_equal(both.iloc[0][alone.columns], alone.iloc[0], check_names=False)


def test_a_disaggregated_rows_infeasible_pool_stays_infeasible_beside_an_infeasible_roofline_row() -> None:
    # llama-3.1-405b in bf16 is 810 GB of weights; 8 x h100-sxm hold 8 x 80 GB x 0.9 = 576 GB, so the decode pool
    # on h100-sxm (and a one-pool row on it) cannot hold a replica. The one-pool row's roofline judged every row of
    # the table: the disaggregated row came out feasible, without its reason, and its fleet "needs over 1.8e+308"
    base = {"model": "llama-3.1-405b", "precision": "bf16", "target_output_tokens_per_s_per_user": "20",
            "demand_output_tokens_per_day": "5e9"}
    disaggregated = {**base, "accelerator": "b200", "decode_accelerator": "h100-sxm"}
    alone, report = economics.evaluate_with_report(pd.DataFrame([disaggregated]))
    assert report.empty and not alone["feasible"].iloc[0]
    assert str(alone["infeasible_reason"].iloc[0]).startswith("decode pool: memory: llama-3.1-405b does not fit")
    both, report = economics.evaluate_with_report(pd.DataFrame([disaggregated, {**base, "accelerator": "h100-sxm"}]))
    assert report.empty and both["feasible"].tolist() == [False, False]
    pd.testing.assert_series_equal(both.iloc[0][alone.columns], alone.iloc[0], check_names=False)


def test_a_margin_of_no_revenue_is_empty_and_its_derivation_has_no_infinite_step() -> None:
    # found by the seeded fuzz: an input price of 0 and no output price bring revenue 0 USD/day, and the gross
    # margin (revenue - cost) / revenue = -cost / 0 was a step of -inf in the derivation (the result emptied it)
    row = {**next(iter(economics.preset_scenarios().values()))[0].model_dump(), "price_usd_per_m_input_tokens": 0.0,
           "price_usd_per_m_output_tokens": None}
    df = pd.DataFrame([row])
    result = economics.evaluate(df)
    assert float(result["revenue_usd_per_day"].iloc[0]) == 0.0 and pd.isna(result["gross_margin"].iloc[0])
    assert float(result["cost_profit_margin"].iloc[0]) == -1.0  # (0 - cost) / cost
    assert [s.name for s in economics.explain_row(df, 0).steps if not math.isfinite(s.value)] == []
    # the KPI says why it is empty: prices were given, so not "no price given"
    from economics.report import kpis
    assert kpis.stated("gross_margin", economics.evaluate_scenario(row)) == "no revenue"
    assert kpis.stated("gross_margin", economics.evaluate_scenario(
        {**row, "price_usd_per_m_input_tokens": None})) == "no price given"


def _not_json(constant: str) -> float:
    raise AssertionError(f"{constant} is not JSON: a number that is not finite reached the API's answer")


@pytest.mark.parametrize("fmt", [FileFormat.COMMA, FileFormat.JSON])
def test_the_api_answers_every_output_of_the_seeds_as_python_does(api: httpx.Client, fmt: FileFormat) -> None:
    # the seeds bring every numeric output (test_seed_rows_compute_every_output): each one through the API's path
    data = file_of(HEADER, SEEDS, fmt)
    want = economics.evaluate(read_file(data, fmt))
    kind = "application/json" if fmt is FileFormat.JSON else "text/csv"
    r = api.post("/v1/evaluate", content=data, headers={"content-type": kind})
    assert r.status_code == 200, r.text
    rows = json.loads(r.text, parse_constant=_not_json)  # NaN and Infinity are not JSON
    assert len(rows) == len(want)
    for row, (_, expected) in zip(rows, want.iterrows(), strict=True):
        for name in NUMERIC_OUTPUTS:
            assert (row[name] is None) == pd.isna(expected[name]), name
            assert row[name] is None or row[name] == pytest.approx(float(expected[name]), rel=1e-12), name
