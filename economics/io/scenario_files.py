"""Reading and writing scenario tables (CSV, JSON): the file boundary of the CLI and the app.

Reading refuses what is not a CSV of scenarios with a message that says why (empty, binary, not UTF-8, duplicate
or unknown columns, no rows); cell-level problems are left to column-wise validation so valid rows still compute.
Writing neutralises spreadsheet formulas in text cells and never writes NaN or infinity.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from economics.scenario import FIELDS
from economics.validation import RANGE_COLUMNS, InputError, check_columns
from economics.values import capped, escape_controls, shown, shown_path

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_scenarios_csv(data: bytes | str) -> pd.DataFrame:
    """Parse a CSV of scenarios: header row of field names, one scenario per row, ``#`` comment lines skipped.

    Raises :class:`InputError` for input that is not a usable table.
    """
    if isinstance(data, bytes):
        if b"\x00" in data:
            raise InputError("not a CSV file: it contains binary data (NUL bytes)")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not a UTF-8 text CSV: undecodable byte at position {exc.start}") from None
    else:
        if "\x00" in data:
            raise InputError("not a CSV file: it contains binary data (NUL characters)")
        text = data.removeprefix("\ufeff")
    body = _without_leading_comments(text)
    if not body.strip():
        raise InputError("empty file: no header row of scenario fields (run `python -m economics template`)")
    first = body.splitlines()[0]
    # spreadsheet exports in many locales: ';' between fields and ',' as the decimal mark
    sep = ";" if first.count(";") > first.count(",") else ("\t" if first.count("\t") > first.count(",") else ",")
    try:
        header = [h.strip() for h in next(csv.reader(io.StringIO(body, newline=""), delimiter=sep))]
        check_columns(header)
        ragged = _ragged_rows(body, sep, len(header))
        if ragged:
            lines = text[:len(text) - len(body)].count("\n")  # comment lines above the header
            listed = capped([f"{n + lines} ({cells})" for n, cells in ragged], "lines")
            raise InputError(f"rows whose number of cells is not the header's {len(header)} (a missing or extra "
                             f"separator would shift or default values): line (cells) {listed}")
        df = pd.read_csv(io.StringIO(body), dtype=object, keep_default_na=False, skipinitialspace=True, sep=sep,
                         index_col=False)
        df.columns = header
    except (pd.errors.ParserError, csv.Error, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"not a well-formed CSV: {shown(str(exc), 200)}") from None
    if df.empty:
        raise InputError("no scenario rows below the header")
    if sep == ";":  # decimal commas: '0,12' -> '0.12' in numeric fields and ranges (text fields are left alone)
        for col in df.columns:
            spec = FIELDS.get(str(col))
            if str(col) in RANGE_COLUMNS or (spec is not None and spec.kind in ("float", "int")):
                df[col] = df[col].str.replace(",", ".", regex=False)
    return df



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


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different (a repeated key, of which the last would silently win, is
    refused as a CSV's repeated column is).
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputError(f"the key '{shown(key)}' appears twice in one object")
        out[key] = value
    return out


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
        parsed = json.loads(data.removeprefix("\ufeff"), parse_constant=str, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"not well-formed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError("not usable JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise InputError(f"not usable JSON: {shown(str(exc).split(';')[0], 200)}") from None
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
    return pd.DataFrame({c: pd.Series([row.get(c) for row in rows], dtype=object) for c in columns})


def read_scenarios(data: bytes | str) -> pd.DataFrame:
    """A CSV or a JSON file of scenarios (JSON when it starts with ``[`` or ``{``)."""
    head = data[:1000].lstrip() if isinstance(data, str) else data[:1000].removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] in ("[", "{", b"[", b"{"):
        return read_scenarios_json(data)
    return read_scenarios_csv(data)


def _ragged_rows(body: str, sep: str, width: int) -> list[tuple[int, int]]:
    """(1-based line number from the header, cells) of non-blank rows whose number of cells is not the header's:
    the CSV parser would pad a short row with empty cells, or shift a long one, without a word.
    """
    if '"' not in body:  # no quoting: separators per line, counted over the bytes (a million rows in ~0.1 s)
        lines = body.replace("\r\n", "\n").replace("\r", "\n") if "\r" in body else body  # as the parser splits
        raw = np.frombuffer(lines.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        ends = np.flatnonzero(raw == 10)
        if raw.size and raw[-1] != 10:
            ends = np.append(ends, raw.size)
        starts = np.concatenate([[0], ends[:-1] + 1])
        seps = np.concatenate([[0], np.cumsum(raw == ord(sep))])
        visible = np.concatenate([[0], np.cumsum(raw > 32)])
        cells = seps[ends] - seps[starts] + 1
        nonblank = visible[ends] - visible[starts] > 0
        return [(int(i) + 1, int(cells[i])) for i in np.flatnonzero(nonblank & (cells != width)) if i > 0]
    reader = csv.reader(io.StringIO(body, newline=""), delimiter=sep, skipinitialspace=True)
    next(reader, None)
    return [(reader.line_num, len(record)) for record in reader
            if record and any(c.strip() for c in record) and len(record) != width]


def _without_leading_comments(text: str) -> str:
    r"""The text from the header on: ``#`` comment lines and blank lines before the header are skipped (a data
    row whose first cell starts with ``#`` is data, never dropped). Lines end at ``\n`` only, as for the CSV
    parser, so control characters such as ``\x1c`` inside a cell never split a row.
    """
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        line = text[start:end].strip()
        if line and not line.startswith("#"):
            break
        start = end
    return text[start:]


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
