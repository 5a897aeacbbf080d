"""One row of a table, found by reading it chunk by chunk: memory is one chunk and the matches, whatever the file's
size (the one-row commands: explain, compare, retrofit, uncertainty, sweep).

A name is looked for in every row (two rows sharing it is an error naming them, so the whole file is read); a number
is the row's position below the header, counted as every reader counts, and a name that equals the number wins, as
it always did, with a note that the row of that number is another.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from economics.catalog import closest
from economics.io.reading import CHUNK_BYTES, SCENARIO_COLUMNS, Columns, Source, read_chunks
from economics.schema.validation import InputError
from economics.schema.values import capped, shown

MAX_SHARED = 100
"""A name shared by this many rows ends the scan: the error lists them as '100+ rows' (time and memory bounded)."""
MAX_GUESS_NAMES = 100_000
"""Names kept to suggest the closest when none matches (a larger file gets no suggestion, not a larger memory)."""


@dataclass
class _Search:
    """What a scan of the chunks has found so far."""

    row: str | None  # None: look for the number only
    number: int | None
    rows: int = 0
    named: list[int] = field(default_factory=list)
    first_named: pd.DataFrame | None = None
    numbered: pd.DataFrame | None = None
    names: list[str] = field(default_factory=list)

    def add(self, chunk: pd.DataFrame) -> None:
        """Fold one chunk (its index: row positions from 0) into the search."""
        start = int(chunk.index[0]) if len(chunk) else self.rows
        self.rows = start + len(chunk)
        if "name" in chunk.columns:
            # a row with no name (a JSON object without the key) is read as missing: it is named "", never NaN
            names = chunk["name"].fillna("").astype(str).str.strip().to_numpy(dtype=object)
            hits = np.flatnonzero(names == self.row.strip()) if self.row is not None else np.array([], dtype=int)
            if hits.size and self.first_named is None:
                self.first_named = chunk.iloc[[hits[0]]]
            self.named += [start + int(h) for h in hits[:MAX_SHARED - len(self.named)]]
            if len(self.names) < MAX_GUESS_NAMES:
                self.names += list(names[: MAX_GUESS_NAMES - len(self.names)])
        if self.number is not None and start < self.number <= self.rows:
            self.numbered = chunk.iloc[[self.number - 1 - start]]


def _row_number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None


def find_row(source: Source, row: str, fmt: str | None = None, chunk_bytes: int = CHUNK_BYTES,
             columns: Columns = SCENARIO_COLUMNS) -> tuple[pd.DataFrame, int, str]:
    """(the row as a one-row frame, its 0-based position, a note or '') of the row ``row`` names or numbers
    (1-based); ``name:X`` is always the row named X and ``number:N`` always the N-th row. :class:`InputError` for
    a name several rows share or a row that does not exist.
    """
    text = row.strip()
    kind, _, rest = text.partition(":")
    if kind in ("name", "number") and rest:  # --row name:7 / number:7 say which, whatever the file holds
        text = rest.strip()
        if kind == "number" and not _row_number(text):
            raise InputError(f"--row: '{shown(row)}': give a row number after 'number:'")
        row = rest
    by_name, by_number = kind != "number" or not rest, kind != "name" or not rest
    search = _Search(row if by_name else None, _row_number(text) if by_number else None)
    with contextlib.closing(read_chunks(source, fmt, chunk_bytes=chunk_bytes, columns=columns)) as chunks:
        for chunk in chunks:
            search.add(chunk)
            if len(search.named) >= MAX_SHARED or (not by_name and search.numbered is not None):
                break  # the answer cannot change: number:N found, or a name shared beyond listing
    if len(search.named) > 1:
        raise InputError(f"--row: {len(search.named)}{'+' if len(search.named) == MAX_SHARED else ''} rows are named "
                         f"'{shown(row)}' (rows {capped([str(i + 1) for i in search.named], 'rows')}); give the row "
                         "number (--row number:N)")
    if search.first_named is not None:
        note = "" if search.numbered is None or search.named[0] + 1 == search.number else (
            f"note: --row {shown(text)} is the row named '{shown(text)}' (row {search.named[0] + 1}); "
            f"--row number:{text} is row number {text}")
        return search.first_named.reset_index(drop=True), search.named[0], note
    if search.numbered is not None and search.number is not None:
        return search.numbered.reset_index(drop=True), search.number - 1, ""
    if not by_name:
        raise InputError(f"--row: no row number {shown(text)}: the table has rows 1..{search.rows:,}")
    guess = closest(row, search.names) if search.names and len(row) <= 200 else None
    hint = f"; did you mean '{shown(guess)}'?" if guess else ""
    raise InputError(f"--row: no row named '{shown(row)}' and no row number 1..{search.rows:,}{hint}")
