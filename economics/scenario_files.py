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

import pandas as pd

from .scenario import FIELDS
from .validation import InputError, check_columns

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_scenarios_csv(data: bytes | str) -> pd.DataFrame:
    """Parse a CSV of scenarios: header row of field names, one scenario per row, ``#`` comment lines skipped.

    Raises :class:`InputError` for input that is not a usable table.
    """
    if isinstance(data, bytes):
        if b"\x00" in data[:8192]:
            raise InputError("not a CSV file: it contains binary data (NUL bytes)")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not a UTF-8 text CSV: undecodable byte at position {exc.start}") from None
    else:
        text = data.removeprefix("\ufeff")
    lines = [line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#")]
    body = "".join(lines)
    if not body.strip():
        raise InputError("empty file: no header row of scenario fields (run `python -m economics template`)")
    first = body.splitlines()[0]
    # spreadsheet exports in many locales: ';' between fields and ',' as the decimal mark
    sep = ";" if first.count(";") > first.count(",") else ("\t" if first.count("\t") > first.count(",") else ",")
    header = next(csv.reader(io.StringIO(body), delimiter=sep))
    header = [h.strip() for h in header]
    check_columns(header)
    try:
        df = pd.read_csv(io.StringIO(body), dtype=object, keep_default_na=False, skipinitialspace=True, sep=sep)
    except (pd.errors.ParserError, csv.Error) as exc:
        raise InputError(f"not a well-formed CSV: {exc}") from None
    df.columns = header
    if df.empty:
        raise InputError("no scenario rows below the header")
    if sep == ";":  # decimal commas: '0,12' -> '0.12' in numeric fields (text fields are left alone)
        for col in df.columns:
            spec = FIELDS.get(str(col))
            if spec is not None and spec.kind in ("float", "int"):
                df[col] = df[col].str.replace(",", ".", regex=False)
    return df


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


def to_excel_bytes(df: pd.DataFrame, sheet: str = "results") -> bytes:
    """An .xlsx workbook of the table (formulas neutralised, missing values as empty cells)."""
    buffer = io.BytesIO()
    safe_for_spreadsheets(df).to_excel(buffer, sheet_name=sheet, index=False, engine="openpyxl")
    return buffer.getvalue()


def to_json_text(df: pd.DataFrame) -> str:
    """A JSON array of records; missing values are null (never NaN)."""
    records = json.loads(df.to_json(orient="records", double_precision=15))
    return json.dumps(records, indent=1, allow_nan=False)
