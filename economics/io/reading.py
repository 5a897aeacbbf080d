"""Scenario tables read at the engine's speed: CSV, Parquet and JSON with Apache Arrow, chunk by chunk.

:func:`read_chunks` yields the scenarios of a file as DataFrames of text cells (CSV) or typed cells (Parquet), one
block at a time, so memory stays bounded whatever the file's size; :class:`TableWriter` writes result chunks as
CSV (optionally gzip or zstd compressed) or Parquet; :func:`stream` runs read -> evaluate -> write chunk by chunk.
The result is identical to one pass over the whole table (the engine is row-wise; the column set is fixed by the
header, see :func:`result_columns`).

What a CSV may be (each case has a test in ``tests/test_tables.py``):

- **encoding**: UTF-8, UTF-8 with a byte-order mark, UTF-16 (LE or BE) with a byte-order mark; gzip or zstd
  compressed (recognised by their magic bytes, whatever the extension). NUL bytes elsewhere mean binary: refused.
- **line endings**: LF, CRLF or CR alone; a quoted cell may hold line breaks.
- **comments**: whole lines starting with ``#`` (and blank lines) *before the header* only. After the header every
  line is data: a row whose name starts with ``#`` is a scenario.
- **separator**: ``,``, ``;`` or tab, whichever the header line holds most of.
- **trailing separators**: a separator at the end of every data row (and/or of the header) adds no column; a value
  after the last column is refused.
- **decimal comma**: in a ``;`` file a number cell may use ``,`` as the decimal mark and ``.`` between groups of
  three digits (``1.234,5`` = 1234.5). A cell such as ``30.000`` (no comma, dot groups of three) could mean 30 or
  30000: it is refused with a message naming the column, the row and the value, never guessed. A cell of 24 hourly
  values (``electricity_tariff``, ``grid_carbon_by_hour``, ``demand_profile``) is read by the same rule, value by
  value: they are separated by spaces (``0,05 0,05 ...``), and a comma that is not one number's decimal mark
  (``0,05,0,05``) is refused the same way, never taken as a separator.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from economics.io.output_paths import TableFormat
from economics.io.scenario_files import read_scenarios_json
from economics.io.streams import (
    MAX_BUFFERED_BYTES,
    PARQUET_MAGIC,
    UTF8_BOM,
    Chain,
    Source,
    decompressed,
    open_source,
    read_up_to,
    stream_of,
    utf8_stream,
)
from economics.lazy import LazyModule
from economics.schema.scenario import FIELDS
from economics.schema.validation import RANGE_COLUMNS, InputError, check_columns
from economics.schema.validation_hours import HOUR_LIST_FIELDS
from economics.schema.values import FieldKind, capped, shown

TYPE_CHECKING = False  # typing.TYPE_CHECKING
if TYPE_CHECKING:
    import pyarrow.parquet as pq
else:  # imported for a Parquet file only: with its file systems and ssl, 0.03-0.1 s of every CSV command's start
    pq = LazyModule("pyarrow.parquet")

FORMATS = tuple(f.value for f in TableFormat)
"""The input table formats ``--format`` and ``--input-format`` take: the values of ``TableFormat``."""


CHUNK_BYTES = 8 << 20
"""Bytes of CSV parsed per chunk (about 60,000 rows of a typical scenario file: peak memory under 1 GB)."""


CHUNK_ROWS = 100_000
"""Rows per chunk for Parquet and JSON."""


HEAD_BYTES = 1 << 16


TRAILING = "\x00trailing"
"""Name of the empty column a trailing separator makes (never a field; checked empty, then dropped)."""


FORMULA_REGEX = r"^[=+\-@\t\r]"


PLAIN_NUMBER_REGEX = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


DECIMAL_COMMA = r"^\s*[+-]?(\d{1,3}(\.\d{3})+|\d+)?,\d*([eE][+-]?\d+)?\s*$|^\s*[+-]?\d{1,3}(\.\d{3})+,?\s*$"
"""A number written with a decimal comma and optional dot thousands groups (``0,12``, ``1.234,5``, ``1.234,``)."""


AMBIGUOUS_DOTS = r"^\s*[+-]?\d{1,3}\.\d{3}\s*$"
"""``30.000``: 30 with a decimal point or 30000 with a thousands dot; refused in a ``;`` file. Two dots or more
(``3.000.000.000``) can only be thousands separators: read as such."""


LINE_BREAK = re.compile(r"\r\n|\r|\n")
EXCEL_SEPARATOR = re.compile(r"sep=([,;\t])")
"""The first line Excel writes when asked to name the CSV's separator (``sep=;``)."""
HEADER_LINE = re.compile(r"(?:^|(?<=\r))[^\S\r\n]*[^#\s]", re.MULTILINE)
"""The first line that is neither blank nor a comment (``#`` after white space): the header; lines end with LF,
CRLF or CR."""


DECODE_COLUMNS = frozenset({"decode_accelerator", "decode_accelerator_count", *(
    n for n, spec in FIELDS.items() if spec.catalog_field and spec.catalog_id == "decode_accelerator")})
"""Columns a result holds only when some row names a decode accelerator (fixed by the header when streaming)."""


def _number_columns(names: list[str]) -> list[str]:
    """The columns holding numbers: numeric fields and range columns."""
    return [n for n in names if n in RANGE_COLUMNS or (n in FIELDS and FIELDS[n].kind.numeric)]


@dataclass(frozen=True)
class Columns:
    """The columns a table may hold: ``check`` refuses any other (naming it, with the closest known one) and
    duplicates; ``numbers`` picks those holding numbers (read with a decimal comma in a ``;`` file). Scenario
    tables by default; the planner's files add their own columns.
    """

    check: Callable[[list[str]], None] = check_columns
    more_numbers: frozenset[str] = frozenset()

    def numbers(self, names: list[str]) -> list[str]:
        """The columns of ``names`` holding numbers: numeric fields, range columns and :attr:`more_numbers`."""
        return [n for n in names if n in self.more_numbers or n in _number_columns([n])]

    @staticmethod
    def hours(names: list[str]) -> list[str]:
        """The columns of ``names`` that may hold 24 hourly numbers (:data:`HOUR_LIST_FIELDS`, in a scenario and
        a plan row alike).
        """
        return [n for n in names if n in HOUR_LIST_FIELDS]


SCENARIO_COLUMNS = Columns()


def detect_format(source: str | Path | bytes, fmt: str | None = None) -> str:
    r"""``csv``, ``parquet`` or ``json``: ``fmt`` when given, else from the first bytes (Parquet magic, ``[``/``{``
    for JSON) and then the extension.

    >>> detect_format(b"PAR1...."), detect_format(b' [{"name": "a"}]'), detect_format(b"name,pue\n")
    ('parquet', 'json', 'csv')
    """
    if fmt:
        return fmt
    if isinstance(source, bytes):
        head = source[:1000]
    else:
        try:
            with open(source, "rb") as handle:
                head = handle.read(1000)
        except (OSError, ValueError):
            head = b""
    if head.startswith(PARQUET_MAGIC) or str(source).lower().endswith((".parquet", ".pq")):
        return "parquet"
    if head.removeprefix(UTF8_BOM).lstrip()[:1] in (b"[", b"{") or str(source).lower().endswith(".json"):
        return "json"
    return "csv"


@dataclass(frozen=True)
class Layout:
    """What the first lines of a CSV say: where the header starts (bytes of comments and blank lines before it),
    the separator, the header's names and whether data rows end with a separator.
    """

    skip_bytes: int
    sep: str
    names: tuple[str, ...]
    trailing: bool


class _NeedMore(Exception):
    """The first bytes do not yet hold the header and a data row."""


MAX_HEAD_BYTES = 256 << 20
"""The most bytes read to find the header and the first row (comments included)."""


def _head(text: Any, columns: Columns = SCENARIO_COLUMNS) -> tuple[bytes, Layout]:
    """The first bytes of ``text`` (read until they hold the header and a data row) and their layout."""
    first = text.read(HEAD_BYTES)
    while True:
        more = b"" if len(first) >= MAX_HEAD_BYTES else text.read(len(first))
        try:
            return first + more, sniff_layout(first + more, final=not more, columns=columns)
        except _NeedMore:
            first += more


def separator(header: str) -> str:
    r"""The separator a header line holds most of: ``;`` or tab over ``,`` (ties go to ``,``).

    >>> separator("name;pue;x"), separator("name\tpue"), separator("name,pue;x")
    (';', '\t', ',')
    """
    return ";" if header.count(";") > header.count(",") else ("\t" if header.count("\t") > header.count(",") else ",")


def sniff_layout(head: bytes, final: bool = True, columns: Columns = SCENARIO_COLUMNS) -> Layout:
    r"""The :class:`Layout` of a CSV from its first bytes (UTF-8, no byte-order mark).

    >>> sniff_layout(b"# a comment\n\nname;pue;\nx;1,2;\n")
    Layout(skip_bytes=13, sep=';', names=('name', 'pue'), trailing=True)
    >>> sniff_layout(b"sep=;\r\nname;pue\r\nx;1,2\r\n")   # Excel's separator line
    Layout(skip_bytes=7, sep=';', names=('name', 'pue'), trailing=False)
    """
    if b"\x00" in head:
        raise InputError("not a CSV file: it contains binary data (NUL bytes)")
    text = head.decode("utf-8", errors="replace")
    found = HEADER_LINE.search(text)  # one scan in C, no list of the preamble's lines
    start = found.start() if found else len(text)
    body = text[start:]
    if not final and sum(1 for _ in itertools.islice(LINE_BREAK.finditer(body), 2)) < 2:
        raise _NeedMore
    if not body.strip():
        raise InputError("empty file: no header row of scenario fields (run `python -m economics template`)")
    first = LINE_BREAK.split(body, 1)[0]
    excel = EXCEL_SEPARATOR.fullmatch(first.strip())
    if excel:  # Excel's "sep=;" line names the separator: the header is the next line
        brk = LINE_BREAK.match(body, len(first))
        start += len(first) + (len(brk.group()) if brk else 0)
        body = text[start:]
        first = LINE_BREAK.split(body, 1)[0]
    sep = excel.group(1) if excel else separator(first)
    records = csv.reader(io.StringIO(body, newline=""), delimiter=sep)
    limit = csv.field_size_limit(max(len(body) + 1, csv.field_size_limit()))  # a cell as long as the head holds
    try:
        header = [h.strip() for h in next(records)]
        row = next(records, None)
    finally:
        csv.field_size_limit(limit)
    while len(header) > 1 and header[-1] == "":
        header.pop()
    columns.check(header)
    trailing = row is not None and len(row) == len(header) + 1 and row[-1].strip() == ""
    return Layout(len(text[:start].encode("utf-8")), sep, tuple(header), trailing)


def read_chunks(source: Source, fmt: str | None = None, chunk_bytes: int = CHUNK_BYTES,
                chunk_rows: int = CHUNK_ROWS, progress: Callable[[int, float | None], None] | None = None,
                max_rows: int | None = None, max_decompressed_bytes: int | None = None,
                columns: Columns = SCENARIO_COLUMNS) -> Generator[pd.DataFrame, None, None]:
    """The scenarios of ``source`` (a path, the file's bytes or a binary stream such as standard input) chunk by
    chunk, the index counting data rows from 0 across chunks. ``progress(rows read, fraction of the file read or
    None)`` is called after each chunk; more than ``max_rows`` rows raise :class:`InputError` as soon as they are
    read, a compressed file holding more than ``max_decompressed_bytes`` (default :data:`MAX_DECOMPRESSED_BYTES`)
    as soon as its output passes it. Raises :class:`InputError` for what is not a usable table (see the module
    docstring). A pipe or standard
    input is read once, from the start: a CSV streams as a file does, Parquet and JSON are read whole (at most
    :data:`MAX_BUFFERED_BYTES`).
    """
    stream = stream_of(source)
    try:
        chunks = _chunks(source if stream is None else _from_stream(stream, fmt), fmt, chunk_bytes, chunk_rows,
                         max_decompressed_bytes, columns)
        rows = 0
        for chunk, fraction in chunks:
            chunk.index = pd.RangeIndex(rows, rows + len(chunk))
            rows += len(chunk)
            if max_rows is not None and rows > max_rows:
                raise InputError(f"more than {max_rows:,} rows: split the file (the limit is checked while reading)")
            if progress:
                progress(rows, fraction)
            yield chunk
        if rows == 0:
            raise InputError("no scenario rows below the header")
    finally:
        if stream is not None and stream is not source:  # a pipe opened here by its path
            stream.close()


def _from_stream(stream: IO[bytes], fmt: str | None) -> bytes | IO[bytes]:
    """What the readers take from a stream: the stream itself for CSV (its first bytes put back), else its bytes."""
    head = read_up_to(stream, 1000)
    kind = detect_format(head, fmt)
    if kind == "csv":
        return Chain(head, stream)  # type: ignore[return-value]
    rest = read_up_to(stream, MAX_BUFFERED_BYTES + 1 - len(head))
    if len(head) + len(rest) > MAX_BUFFERED_BYTES:
        raise InputError(f"a {kind} table from a pipe or standard input is read whole, and this one is over "
                         f"{MAX_BUFFERED_BYTES >> 20:,} MB: pass the file by its path")
    return head + rest


def _chunks(source: Source, fmt: str | None, chunk_bytes: int, chunk_rows: int,
            max_decompressed_bytes: int | None,
            columns: Columns = SCENARIO_COLUMNS) -> Iterator[tuple[pd.DataFrame, float | None]]:
    """(chunk, fraction read) of ``source`` in its format."""
    kind = detect_format(source, fmt) if isinstance(source, str | Path | bytes) else "csv"
    if kind == "json":
        return _json_chunks(source, chunk_rows, columns)  # type: ignore[arg-type]
    if kind == "parquet":
        return _parquet_chunks(source, chunk_rows, columns)  # type: ignore[arg-type]
    if kind == "csv":
        return _csv_chunks(source, chunk_bytes, max_decompressed_bytes, columns)
    raise InputError(f"--format: '{shown(kind)}' is not one of {', '.join(FORMATS)}")


def _json_chunks(source: str | Path | bytes, chunk_rows: int,
                 columns: Columns) -> Iterator[tuple[pd.DataFrame, float | None]]:
    """JSON is one document: read whole (by the JSON reader of :mod:`economics.io.scenario_files`), then sliced."""
    if isinstance(source, bytes):
        data = source
    else:
        raw, _ = open_source(source)
        with raw:
            data = raw.read()
    df = read_scenarios_json(data, columns.check)
    for start in range(0, len(df), chunk_rows):
        yield df.iloc[start:start + chunk_rows].reset_index(drop=True), min(start + chunk_rows, len(df)) / len(df)


def _parquet_chunks(source: str | Path | bytes, chunk_rows: int,
                    columns: Columns) -> Iterator[tuple[pd.DataFrame, float | None]]:
    try:
        file = pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes) else str(source))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"not a readable Parquet file: {shown(str(exc), 200)}") from None
    names = [str(n) for n in file.schema_arrow.names]
    columns.check(names)
    total = max(file.metadata.num_rows, 1)
    done = 0
    for batch in file.iter_batches(batch_size=chunk_rows):
        done += batch.num_rows
        yield pd.DataFrame({n: _cells(batch.column(i), n) for i, n in enumerate(names)}), done / total


def _cells(column: pa.Array, name: str = "") -> np.ndarray:
    """A column as the values parser reads them: text as str, numbers as floats (NaN = empty), bools as objects;
    integers in a text field (a name stored as a number) as their own text, ``1`` not ``1.0``.
    """
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    text_field = name in FIELDS and FIELDS[name].kind not in (FieldKind.INT, FieldKind.FLOAT, FieldKind.BOOL)
    if pa.types.is_integer(column.type) and text_field:
        return np.array([None if v is None else str(v) for v in column.to_pylist()], dtype=object)
    if pa.types.is_floating(column.type) or pa.types.is_integer(column.type):
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=float)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)


def _csv_chunks(source: Source, chunk_bytes: int, max_decompressed_bytes: int | None = None,
                columns: Columns = SCENARIO_COLUMNS) -> Iterator[tuple[pd.DataFrame, float | None]]:
    raw, fraction = open_source(source)
    try:
        stream, head = decompressed(raw, max_decompressed_bytes)
        text = utf8_stream(stream, head)
        first, layout = _head(text, columns)
        reader, bad = _arrow_reader(Chain(first[layout.skip_bytes:], text), layout, chunk_bytes)
        rows = 0
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except pa.ArrowInvalid as exc:
                raise InputError(_arrow_message(str(exc))) from None
            _refuse_ragged(bad, layout, rows, batch.num_rows)
            yield _frame(batch, layout, rows, columns), fraction()
            rows += batch.num_rows
        _refuse_ragged(bad, layout, rows, 0)
    except pa.ArrowInvalid as exc:
        raise InputError(_arrow_message(str(exc))) from None
    finally:
        raw.close()


def _arrow_reader(stream: Any, layout: Layout, chunk_bytes: int) -> tuple[Any, list[tuple[int, str]]]:
    names = [*layout.names, *([TRAILING] if layout.trailing else [])]
    bad: list[tuple[int, str]] = []

    def invalid(row: Any) -> str:  # a row with another number of cells: kept to be reported, never shifted
        bad.append((row.actual_columns, row.text))
        return "skip"

    reader = pacsv.open_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=names, skip_rows_after_names=1, block_size=chunk_bytes),
        parse_options=pacsv.ParseOptions(delimiter=layout.sep, newlines_in_values=True, invalid_row_handler=invalid),
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                             strings_can_be_null=False, quoted_strings_can_be_null=False))
    return reader, bad


def _arrow_message(message: str) -> str:
    if "UTF8" in message or "UTF-8" in message or "utf-16" in message.lower():
        return "not a UTF-8 (or UTF-16 with a byte-order mark) text CSV: undecodable bytes"
    return f"not a well-formed CSV: {shown(message, 200)}"


def _refuse_ragged(bad: list[tuple[int, str]], layout: Layout, rows: int, batch_rows: int) -> None:
    if not bad:
        return
    width = len(layout.names) + layout.trailing
    listed = capped([f"'{shown(text, 80)}' ({cells} cells)" for cells, text in bad], "rows")
    raise InputError(f"rows whose number of cells is not the header's {width} (a missing or extra separator would "
                     f"shift or default values), among data rows {rows + 1:,}-{rows + batch_rows + len(bad):,}: "
                     f"{listed}")


def _frame(batch: pa.RecordBatch, layout: Layout, start: int, columns: Columns = SCENARIO_COLUMNS) -> pd.DataFrame:
    """A parsed block as a DataFrame of text cells: NUL and values after the last column refused, decimal commas
    of a ``;`` file read.
    """
    cells = dict(zip(batch.schema.names, batch.columns, strict=True))
    if layout.trailing:
        extra = cells.pop(TRAILING)
        _refuse_where(extra, pc.not_equal(pc.utf8_trim_whitespace(extra), ""), start, "a value after the last column",
                      TRAILING)
    for name, column in cells.items():
        _refuse_where(column, pc.match_substring(column, "\x00"), start, "binary data (a NUL byte)", name)
    if layout.sep == ";":
        for name in columns.numbers(list(cells)):
            cells[name] = decimal_comma(cells[name], name, start)
        for name in columns.hours(list(cells)):
            cells[name] = hour_lists(cells[name], name, start)
    return pd.DataFrame({n: np.asarray(c.to_numpy(zero_copy_only=False), dtype=object) for n, c in cells.items()})


def _refuse_where(column: pa.Array, mask: pa.Array, start: int, what: str, name: str) -> None:
    hits = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
    if hits.size:
        values = column.take(pa.array(hits[:10])).to_pylist()
        listed = capped([f"{start + int(r) + 1:,} ('{shown(v)}')" for r, v in zip(hits, values, strict=False)],
                        "rows")
        where = "" if name == TRAILING else f" in {shown(name)}"
        raise InputError(f"{what}{where}: data rows {listed}" + (f" and {hits.size - 10:,} more rows"
                                                                  if hits.size > 10 else ""))


def decimal_comma(column: pa.Array, name: str, start: int = 0) -> pa.Array:
    """Number cells of a ``;`` file with ``,`` as the decimal mark and ``.`` between thousands, as the values parser
    reads them (``1.234,5`` -> ``1234.5``); ``30.000`` (30 or 30000?) is refused naming the column, the row and
    the value. Other cells pass unchanged (the parser judges them).

    >>> decimal_comma(pa.array(["0,12", "1.234,5", "7", "1.5", "", "3.000.000.000"]), "pue").to_pylist()
    ['0.12', '1234.5', '7', '1.5', '', '3000000000']
    """
    ambiguous = pc.match_substring_regex(column, AMBIGUOUS_DOTS)
    hits = np.flatnonzero(ambiguous.to_numpy(zero_copy_only=False))
    if hits.size:
        values = column.take(pa.array(hits[:10])).to_pylist()
        raise _ambiguous_cells(name, f"'{shown(values[0])}' {AMBIGUOUS_WORDS}", values, hits, start)
    comma = pc.match_substring_regex(column, DECIMAL_COMMA)
    fixed = pc.replace_substring(pc.replace_substring(column, ".", ""), ",", ".")
    return pc.if_else(comma, fixed, column)


AMBIGUOUS_WORDS = ("could be a number with a decimal point or one with a '.' thousands separator; write it without "
                   "the separator (30000) or with a decimal comma (30,5)")
HOUR_LIST_SEPARATOR = re.compile(r"[\s;]+")
"""What separates the values of an hourly cell in a ``;`` file (a ``;`` inside a quoted cell too); never a comma."""
NUMBER_LIKE = re.compile(r"[0-9.,eE+-]+")


def _ambiguous_cells(name: str, what: str, values: list[Any], rows: np.ndarray, start: int) -> InputError:
    """The refusal of cells a ``;`` file's decimal rule cannot read: ``what`` is wrong, then the rows and values."""
    listed = capped([f"{start + int(r) + 1:,} ('{shown(v)}')" for r, v in zip(rows, values, strict=False)], "rows")
    return InputError(f"{shown(name)}: in a ';'-separated file {what}: data rows {listed}")


def _hour_list_text(text: str) -> tuple[str, str | None]:
    """An hourly cell of a ``;`` file with each value's decimal comma read: (its text, or what is ambiguous)."""
    parts = [p for p in HOUR_LIST_SEPARATOR.split(text.strip()) if p]
    out = []
    for part in parts:
        if re.fullmatch(AMBIGUOUS_DOTS, part, re.ASCII):
            return text, f"'{part}' {AMBIGUOUS_WORDS}"
        if re.fullmatch(DECIMAL_COMMA, part, re.ASCII):
            part = part.replace(".", "").replace(",", ".")
        elif "," in part and NUMBER_LIKE.fullmatch(part):
            return text, (f"a comma is the decimal mark, and '{shown(part, 40)}' is not one number; separate the 24 "
                          "values with spaces (0,05 0,12 ...)")
        out.append(part)
    return (" ".join(out) if out != parts else text), None


def hour_lists(column: pa.Array, name: str, start: int = 0) -> pa.Array:
    """Hourly cells of a ``;`` file (24 values, or a word or catalog id) read with the file's decimal rule, value by
    value, as :func:`decimal_comma` reads a number cell: a comma is a decimal mark, never a separator between hours;
    one that cannot be (``0,05,0,05``) and ``30.000`` are refused naming the column, the rows and the value.
    Each distinct text is read once.

    >>> hour_lists(pa.array(["0,05 0,12", "flat", "sce-tou-8-d-summer", "1 2"]), "electricity_tariff").to_pylist()
    ['0.05 0.12', 'flat', 'sce-tou-8-d-summer', '1 2']
    """
    encoded = column.dictionary_encode()
    found = [_hour_list_text(t) for t in encoded.dictionary.to_pylist()]
    bad = [k for k, (_, problem) in enumerate(found) if problem is not None]
    if bad:
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(np.isin(codes, bad))
        raise _ambiguous_cells(name, str(found[bad[0]][1]), column.take(pa.array(rows[:10])).to_pylist(), rows,
                               start)
    return pa.DictionaryArray.from_arrays(encoded.indices, pa.array([t for t, _ in found], pa.string())
                                          ).dictionary_decode()


def read_table(source: str | Path | bytes, fmt: str | None = None, max_rows: int | None = None,
               progress: Callable[[int, float | None], None] | None = None,
               columns: Columns = SCENARIO_COLUMNS) -> pd.DataFrame:
    r"""The whole table of ``source`` (as :func:`read_chunks` reads it, same checks), the row limit enforced while
    reading: a file over ``max_rows`` is refused before the rest of it is parsed.

    >>> read_table(b"name,pue\n#1,1.2\n").to_dict("list")
    {'name': ['#1'], 'pue': ['1.2']}
    """
    return pd.concat(list(read_chunks(source, fmt, max_rows=max_rows, progress=progress, columns=columns)),
                     ignore_index=True)
