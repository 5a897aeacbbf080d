"""A result table as an Excel workbook (openpyxl): numbers as numbers, text cells that a spreadsheet would read
as formulas kept as text, and the columns it had to neutralise named.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pandas as pd

from economics.io.scenario_files import excel_safe, safe_for_spreadsheets


def excel_bytes(df: pd.DataFrame, sheet: str = "results") -> tuple[bytes, list[str]]:
    r"""(.xlsx bytes, notes) written row by row with openpyxl's write-only workbook, so memory does not grow with
    the cells' objects (about twice as fast as ``DataFrame.to_excel`` on result tables). Formulas are neutralised,
    control characters and over-long text made to fit Excel as :func:`economics.io.scenario_files.excel_export`
    does (same notes); missing values, NaN and infinity are empty cells.

    >>> data, notes = excel_bytes(pd.DataFrame({"name": ["=1+1", "ok"], "cost": [1.5, float("nan")]}))
    >>> from openpyxl import load_workbook
    >>> sheet = load_workbook(io.BytesIO(data)).active
    >>> [[c.value for c in row] for row in sheet.iter_rows()], notes
    ([['name', 'cost'], ["'=1+1", 1.5], ['ok', None]], [])
    """
    # imported on first use (issue #43): openpyxl, with PIL and an XML parser, is only needed to write a workbook, and
    # the `plan` command and the Plan page read io.tables for everything else
    from openpyxl import Workbook

    out, notes = excel_safe(safe_for_spreadsheets(df))
    book = Workbook(write_only=True)
    ws = book.create_sheet(sheet)
    ws.append([str(c) for c in out.columns])
    columns = [_excel_cells(out[c]) for c in out.columns]
    for row in zip(*columns, strict=True):
        ws.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue(), notes


def _excel_cells(series: pd.Series) -> list[Any]:
    """A column as Excel cell values: numbers as floats/ints, flags as bools, text as str, missing as None."""
    values = series.astype(object).to_numpy()
    missing = series.isna().to_numpy(dtype=bool)
    cells: list[Any] = []
    for value, gone in zip(values, missing, strict=True):
        if gone or (isinstance(value, float) and not math.isfinite(value)):
            cells.append(None)
        elif isinstance(value, np.generic):
            cells.append(value.item())
        else:
            cells.append(value)
    return cells
