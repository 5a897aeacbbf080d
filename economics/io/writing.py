"""Result tables written chunk by chunk: CSV (optionally gzip or zstd compressed), Parquet or JSON records, with
a column set fixed by the header (:func:`result_columns`), spreadsheet formulas in text cells neutralised
(vectorised) and missing values as empty cells; :func:`stream` runs read -> evaluate -> write.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from economics.io.output_paths import check_output, discard_partial, finish_partial, start_partial
from economics.io.reading import DECODE_COLUMNS, FORMULA_REGEX, PLAIN_NUMBER_REGEX
from economics.io.scenario_files import json_record_lines
from economics.lazy import LazyModule
from economics.schema.scenario import FIELDS
from economics.schema.validation import RANGE_COLUMNS, InputError
from economics.schema.values import FieldKind, shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING
if TYPE_CHECKING:
    import pyarrow.parquet as pq
else:  # imported for a Parquet file only: with its file systems and ssl, 0.03-0.1 s of every CSV command's start
    pq = LazyModule("pyarrow.parquet")


def result_columns(first: list[str], header: list[str]) -> list[str]:
    """The columns every chunk's result is written with, whatever the chunk: the first chunk's, plus the decode
    accelerator's columns when the header has ``decode_accelerator`` (a chunk without a decode pool omits them);
    inputs in field order (each range column after its field), then the outputs in the engine's order.

    >>> result_columns(["name", "pue_low", "pue", "cost_usd_per_hour"], ["pue", "pue_low", "name"])
    ['name', 'pue', 'pue_low', 'cost_usd_per_hour']
    """
    cols = list(first)
    if "decode_accelerator" in header:
        cols += [c for c in FIELDS if c in DECODE_COLUMNS and c not in cols]
    order = {f: i for i, f in enumerate(FIELDS)}

    def key(c: str) -> tuple[int, int, int]:
        if c in RANGE_COLUMNS:
            return order[RANGE_COLUMNS[c][0]], 1, cols.index(c)
        return order[c], 0, 0

    inputs = [c for c in cols if c in FIELDS or c in RANGE_COLUMNS]
    return sorted(inputs, key=key) + [c for c in cols if c not in inputs]


def _arrow_type(series: pd.Series) -> pa.DataType:
    kind = str(series.dtype)
    if kind in ("Float64", "float64", "float32"):
        return pa.float64()
    if kind in ("Int64", "int64", "int32"):
        return pa.int64()
    if kind in ("bool", "boolean"):
        return pa.bool_()
    return pa.string()


def schema_of(df: pd.DataFrame, columns: list[str]) -> pa.Schema:
    """Arrow schema of a result: numbers as float64/int64, flags as bool, everything else as text; a column the
    chunk lacks (a decode field) takes its field's type.
    """
    kinds = {FieldKind.FLOAT: pa.float64(), FieldKind.INT: pa.int64(), FieldKind.BOOL: pa.bool_()}
    return pa.schema([(c, _arrow_type(df[c]) if c in df.columns else kinds.get(FIELDS[c].kind, pa.string()))
                      for c in columns])


def to_arrow(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """A result chunk as an Arrow table of ``schema`` (absent columns empty); NaN, infinity and empty text become
    nulls (empty cells).
    """
    arrays = []
    for f in schema:
        if f.name not in df.columns:
            arrays.append(pa.nulls(len(df), f.type))
            continue
        col = pa.array(df[f.name], from_pandas=True)
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        col = col.cast(f.type)
        if pa.types.is_floating(f.type):
            col = pc.if_else(pc.is_finite(col), col, pa.scalar(None, f.type))
        elif pa.types.is_string(f.type):  # empty text is a missing value, whichever way the chunk spelt it
            col = pc.if_else(pc.equal(col, ""), pa.scalar(None, f.type), col)
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=schema)


def neutralise(column: pa.Array) -> pa.Array:
    """Text cells a spreadsheet would run as formulas (``=``, ``+``, ``-``, ``@``, tab, CR first) with a quote
    prefixed, plain numbers such as ``-1`` left alone (OWASP CSV injection), over a whole column at once.

    >>> neutralise(pa.array(["=1+1", "-1", "-x", "ok", None])).to_pylist()
    ["'=1+1", '-1', "'-x", 'ok', None]
    """
    risky = pc.and_(pc.match_substring_regex(column, FORMULA_REGEX),
                    pc.invert(pc.match_substring_regex(column, PLAIN_NUMBER_REGEX)))
    return pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)


def for_csv(table: pa.Table) -> pa.Table:
    """Text columns neutralised, flags written ``True``/``False`` (as the pandas writer did)."""
    arrays = []
    for col in table.columns:
        chunk = col.combine_chunks()
        if pa.types.is_string(chunk.type):
            chunk = neutralise(chunk)
        elif pa.types.is_boolean(chunk.type):
            chunk = pc.if_else(chunk, "True", "False")
        arrays.append(chunk)
    return pa.Table.from_arrays(arrays, names=table.column_names)


def output_format(path: str, fmt: str | None) -> str:
    """``fmt`` when given, else from the extension (``.parquet``/``.pq``, ``.json``), else ``csv``.

    >>> output_format("out.parquet", None), output_format("-", None), output_format("out.csv.gz", "json")
    ('parquet', 'csv', 'json')
    """
    if fmt:
        return fmt
    lower = path.lower()
    return "parquet" if lower.endswith((".parquet", ".pq")) else ("json" if lower.endswith(".json") else "csv")


class TableWriter:
    """Write result chunks to ``path`` (``-`` = standard output) as CSV (gzip/zstd by the ``.gz``/``.zst``
    extension), Parquet or JSON (one array of records, written record by record: the same text
    :func:`~economics.io.scenario_files.to_json_text` gives for the whole table). A regular file appears only when
    :meth:`close` succeeds (written beside it, then renamed); a pipe or a device is written in place
    (:mod:`economics.io.output_paths`: the path is checked here, before any row is read).
    """

    def __init__(self, path: str, fmt: str = "csv", sink: IO[bytes] | None = None) -> None:
        self.path, self.fmt, self.sink = path, fmt, sink
        self.target = None if path == "-" or sink is not None else check_output(path)
        self.partial: str | None = None
        self.writer: Any = None
        self.schema: pa.Schema | None = None
        self.file: Any = None
        self.own: IO[bytes] | None = None

    def _start(self, schema: pa.Schema) -> None:
        self.schema = schema
        try:
            if self.target is not None and self.target.in_place:
                self.own = open(self.target.path, "wb")  # noqa: SIM115 (closed in close())
                self.file = pa.PythonFile(self.own, mode="w")
            elif self.target is not None:
                self.partial = start_partial(self.target)
                self.file = pa.OSFile(self.partial, "wb")
            else:
                self.file = pa.PythonFile(self.sink, mode="w")
        except OSError as exc:
            raise InputError(f"cannot write {shown_path(self.path)}: {exc.strerror or exc}") from None
        codec = "gzip" if self.path.endswith(".gz") else ("zstd" if self.path.endswith(".zst") else None)
        out = pa.CompressedOutputStream(self.file, codec) if codec and self.fmt == "csv" else self.file
        self.stream = out
        if self.fmt == "json":
            self.writer = _JsonRecords(out)
        elif self.fmt == "parquet":
            # dictionaries for text only and no statistics: 3x faster than the defaults on result tables
            text = [f.name for f in schema if pa.types.is_string(f.type)]
            self.writer = pq.ParquetWriter(out, schema, compression="zstd", compression_level=1, use_dictionary=text,
                                           write_statistics=False)
        else:
            header = io.StringIO()
            csv.writer(header, lineterminator="\n").writerow(schema.names)
            out.write(header.getvalue().encode("utf-8"))
            self.writer = pacsv.CSVWriter(out, for_csv(schema.empty_table()).schema, write_options=pacsv.WriteOptions(
                include_header=False, quoting_style="needed"))

    def write(self, table: pa.Table | pd.DataFrame) -> None:
        """Write one chunk: an Arrow table of the result schema (CSV, Parquet) or the result frame (JSON)."""
        if self.writer is None:
            self._start(pa.schema([]) if isinstance(table, pd.DataFrame) else table.schema)
        self.writer.write_table(for_csv(table) if self.fmt == "csv" else table)


    def close(self, ok: bool = True) -> None:
        """Finish the file (or remove the partial one when ``ok`` is false)."""
        if self.writer is not None:
            self.writer.close()
            if self.stream is not self.file:
                self.stream.close()
            if self.partial is not None:
                self.file.close()
            elif self.sink is not None:
                self.sink.flush()
        if self.own is not None:
            self.own.close()
        if self.partial is None or self.target is None:
            return
        if ok and self.writer is not None:
            finish_partial(self.target, self.partial)
        else:
            discard_partial(self.partial)


def json_chunk(result: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """A result chunk with the columns every chunk is written with: a text field the chunk lacks (a decode pool's
    id where no row of the chunk has one) is empty text, as in a table that holds it, a number empty (null).

    >>> chunk = json_chunk(pd.DataFrame({"name": ["a"]}), ["name", "decode_accelerator", "decode_accelerator_count"])
    >>> chunk.to_dict("records")
    [{'name': 'a', 'decode_accelerator': '', 'decode_accelerator_count': nan}]
    """
    out = result.reindex(columns=columns)
    for c in columns:
        if c not in result.columns and c in FIELDS and FIELDS[c].kind in (FieldKind.STR, FieldKind.CHOICE):
            out[c] = ""
    return out


class _JsonRecords:
    """A JSON array written chunk by chunk: ``[``, each chunk's records one a line, ``]`` (as ``to_json_text``)."""

    def __init__(self, out: Any) -> None:
        self.out, self.slices = out, 0
        out.write(b"[")

    def write_table(self, frame: pd.DataFrame) -> None:
        if not len(frame):
            return
        for body in json_record_lines(frame):
            self.out.write((",\n" if self.slices else "\n").encode("utf-8") + body.encode("utf-8"))
            self.slices += 1  # the next slice starts with a comma

    def close(self) -> None:
        self.out.write(b"\n]" if self.slices else b"]")


Evaluator = Callable[[pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]]
"""A chunk of scenarios -> (result rows, problem report with 1-based ``row``)."""


@dataclass
class Totals:
    """What a streamed evaluation did: rows, invalid rows, and every problem (row numbers across the file)."""

    rows: int = 0
    invalid: int = 0
    reports: list[pd.DataFrame] = field(default_factory=list)

    @property
    def report(self) -> pd.DataFrame:
        """Every chunk's problems in one table (row, name, field, value, message), empty when there were none."""
        return pd.concat(self.reports, ignore_index=True) if self.reports else pd.DataFrame(
            columns=["row", "name", "field", "value", "message"])


def stream(chunks: Iterator[pd.DataFrame], evaluate: Evaluator, writer: TableWriter) -> Totals:
    """Evaluate each chunk and write it: read -> validate -> evaluate -> write, one chunk in memory at a time.
    Report rows are renumbered across the file. The output file is only kept when every chunk succeeded.
    """
    totals = Totals()
    schema: pa.Schema | None = None
    ok = False
    pending: Future[None] | None = None
    with ThreadPoolExecutor(max_workers=1) as background:  # Arrow writes chunk i while chunk i + 1 is evaluated
        try:
            for chunk in chunks:
                result, report = evaluate(chunk.reset_index(drop=True))
                if schema is None:
                    schema = schema_of(result, result_columns(list(result.columns), list(chunk.columns)))
                table = json_chunk(result, schema.names) if writer.fmt == "json" else to_arrow(result, schema)
                if pending is not None:
                    pending.result()
                pending = background.submit(writer.write, table)
                if len(report):
                    totals.reports.append(report.assign(row=report["row"] + totals.rows))
                totals.invalid += int((~result["valid"].astype(bool)).sum())
                totals.rows += len(chunk)
            if pending is not None:
                pending.result()
            ok = True
        finally:
            if pending is not None and not ok:
                pending.exception()
            writer.close(ok)
    return totals
