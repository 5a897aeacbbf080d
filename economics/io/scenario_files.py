"""The file boundary's small parts: an input read whole within its bound, JSON scenarios parsed (the reader,
:mod:`economics.io.reading`, streams CSV and Parquet and calls this for JSON), and tables written as CSV, Excel
and JSON text with spreadsheet formulas neutralised, never a NaN or an infinity.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from economics.schema.validation import InputError, check_columns
from economics.schema.values import LONE_SURROGATE, capped, escape_controls, shown, shown_path, unique_keys

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_input_bytes(path: str, max_bytes: int) -> bytes:
    """The bytes of a command's input file, or of standard input for ``-``, read whole: at most ``max_bytes`` (a
    larger input is refused after reading one byte more, so memory is bounded before it is read); an unreadable
    path is an :class:`InputError` naming it (never a traceback).
    """
    try:
        if path == "-":
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {shown_path(path)}: {exc.strerror or type(exc).__name__}") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise InputError(f"cannot read {shown_path(path)}: {exc}") from None
    if len(data) > max_bytes:
        where = "standard input" if path == "-" else shown_path(path)
        raise InputError(f"{where}: more than the {max_bytes:,} bytes this input may have")
    return data


MAX_JSON_BYTES = 200_000_000


def read_scenarios_json(data: bytes | str,
                        check: Callable[[list[str]], None] = check_columns) -> pd.DataFrame:
    """Parse JSON scenarios: an array of objects (one per scenario), one object, or ``{"scenarios": [...]}``.

    Values are read as they come (numbers, true/false, null = empty, text) and go through the same value parser
    as CSV cells, so ``"0.5"`` and ``0.5`` are the same value and ``NaN``/``Infinity`` literals are refused as
    they are in a CSV. ``check`` refuses unknown and duplicate keys (the scenario fields' check by default).
    Raises :class:`InputError` for input that is not a usable table, naming the row.

    >>> read_scenarios_json('[{"name": "a", "pue": 1.2}, {"name": "b"}]')["pue"].tolist()
    [1.2, None]
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 JSON: undecodable byte at position {exc.start}") from None
    try:
        parsed = json.loads(data.removeprefix("\ufeff"), parse_constant=str, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"not well-formed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError("not usable JSON: nested too deeply") from None
    except ValueError as exc:  # a repeated key (values.unique_keys); an integer of more digits than Python converts
        raise InputError(f"not usable JSON: {shown(str(exc).split(';')[0], 200)}") from None
    if isinstance(parsed, dict) and "scenarios" in parsed and len(parsed) > 1:
        others = [f"'{shown(k)}'" for k in parsed if k != "scenarios"]
        raise InputError(f"unknown JSON keys beside 'scenarios': {capped(others, 'keys')} (a document "
                         "{\"scenarios\": [...]} holds the scenarios only)")
    rows = parsed.get("scenarios", parsed) if isinstance(parsed, dict) else parsed
    rows = [rows] if isinstance(rows, dict) else rows
    if not isinstance(rows, list):
        raise InputError("JSON scenarios must be an array of objects (one per scenario) or one object")
    if not rows:
        raise InputError("no scenarios in the JSON array")
    columns: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(f"row {i + 1}: a scenario must be a JSON object of field names and values, got "
                             f"{shown(json.dumps(row)[:80])}")
        columns.update(dict.fromkeys(row))
    check(list(columns))
    if LONE_SURROGATE_ESCAPE.search(data):  # the only way JSON text holds one: a \\udXXX escape left unpaired
        _refuse_lone_surrogates(rows)
    return pd.DataFrame({c: pd.Series([row.get(c) for row in rows], dtype=object) for c in columns})


LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of half a UTF-16 pair (``\\ud83d``): a pair makes one character, a lone half none."""


def _refuse_lone_surrogates(rows: list[dict[str, Any]]) -> None:
    """Refuse a text value holding half a UTF-16 pair on its own (no UTF-8 answer or file could hold it), naming the
    row, the field and the value; the rest of the JSON is not guessed at.
    """
    for i, row in enumerate(rows):
        for field, value in row.items():
            if isinstance(value, str) and LONE_SURROGATE.search(value):
                raise InputError(f"row {i + 1}: {shown(field)}: '{shown(value)}' holds half of a UTF-16 surrogate "
                                 "pair on its own, which is no character; send whole characters")


def _neutralise(value: object) -> object:
    """Prefix a quote to text a spreadsheet would evaluate; plain numbers such as -1 stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def safe_for_spreadsheets(df: pd.DataFrame) -> pd.DataFrame:
    """Copy with text cells that a spreadsheet would run as formulas prefixed by a quote (OWASP CSV injection)."""
    out = df.copy()
    for col in out.columns:
        if not pd.api.types.is_numeric_dtype(out[col].dtype) and not pd.api.types.is_bool_dtype(out[col].dtype):
            out[col] = out[col].map(_neutralise)
    return out


def to_csv_text(df: pd.DataFrame) -> str:
    """CSV text; empty cells for missing values, formulas neutralised."""
    return safe_for_spreadsheets(df).to_csv(index=False, lineterminator="\n")


EXCEL_MAX_CELL_CHARS = 32_767
"""The most characters an Excel cell holds."""
EXCEL_ILLEGAL = r"[\x00-\x08\x0b\x0c\x0e-\x1f]"
"""Control characters an .xlsx file cannot hold (openpyxl refuses them)."""


def to_excel_bytes(df: pd.DataFrame, sheet: str = "results") -> bytes:
    """An .xlsx workbook of the table (formulas neutralised, missing values as empty cells); see
    :func:`excel_export` for what had to change to fit Excel.
    """
    return excel_export(df, sheet)[0]


def excel_export(df: pd.DataFrame, sheet: str = "results") -> tuple[bytes, list[str]]:
    r"""(.xlsx bytes, notes): control characters Excel cannot hold are written as ``\xNN`` and text longer than a
    cell holds (32,767 characters) is cut; each note names the column, the rows and what was done.
    """
    out, notes = excel_safe(safe_for_spreadsheets(df))
    buffer = io.BytesIO()
    out.to_excel(buffer, sheet_name=sheet, index=False, engine="openpyxl")
    return buffer.getvalue(), notes


def excel_safe(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Copy of ``df`` whose text cells fit Excel, and a note per column changed (rows 1-based, listed up to 10)."""
    out = df.copy()
    notes: list[str] = []
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col].dtype) or pd.api.types.is_bool_dtype(out[col].dtype):
            continue
        text = out[col].astype("string")
        illegal = text.str.contains(EXCEL_ILLEGAL, regex=True).fillna(False).to_numpy(dtype=bool)
        long = (text.str.len() > EXCEL_MAX_CELL_CHARS).fillna(False).to_numpy(dtype=bool)
        if not illegal.any() and not long.any():
            continue
        column = out[col].astype(object)
        for r in np.flatnonzero(illegal | long):
            value = escape_controls(str(column.iloc[r])) if illegal[r] else str(column.iloc[r])
            column.iloc[int(r)] = value[:EXCEL_MAX_CELL_CHARS]
        out[col] = column
        name = shown(str(col))
        if illegal.any():
            rows = capped([str(r + 1) for r in np.flatnonzero(illegal)], "rows")
            notes.append(f"Excel: control characters in {name} (rows {rows}) written as \\xNN")
        if long.any():
            rows = capped([f"{r + 1} ({len(str(df[col].iloc[r])):,} characters)" for r in np.flatnonzero(long)],
                          "rows")
            notes.append(f"Excel: {name} longer than a cell holds ({EXCEL_MAX_CELL_CHARS:,} characters) in rows "
                         f"{rows}: cut in the Excel file; the CSV and JSON hold the full text")
    return out, notes


def to_json_text(df: pd.DataFrame) -> str:
    """A JSON array of records, one record per line; missing values (and NaN or infinity) are null.

    >>> print(to_json_text(pd.DataFrame({"name": ["a", "b"], "pue": [1.2, float("nan")]})))
    [
    {"name":"a","pue":1.2},
    {"name":"b","pue":null}
    ]
    """
    lines = ",\n".join(json_record_lines(df))
    return f"[\n{lines}\n]" if lines else "[]"


JSON_SLICE_ROWS = 4096
"""Rows turned into JSON text at a time: the text of one slice is all a writer holds."""


def json_record_lines(df: pd.DataFrame) -> Iterator[str]:
    r"""The records of :func:`to_json_text` without the brackets, a slice of rows at a time: one JSON object a line,
    lines separated by ``,\n`` within a slice (the caller joins slices the same way). Numbers are written as the
    shortest text that reads back to the same float64; NaN and infinity never appear (null).
    """
    for start in range(0, len(df), JSON_SLICE_ROWS):
        # pandas writes NaN and infinity as null and every float exactly (to 15 decimals); reading that back and
        # writing it with json gives the shortest text for each number ("37169.69", not "37169.690000000002328")
        records = json.loads(df.iloc[start:start + JSON_SLICE_ROWS].to_json(orient="records", double_precision=15))
        yield ",\n".join(json.dumps(r, allow_nan=False, separators=(",", ":")) for r in records)
