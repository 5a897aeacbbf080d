"""Scenario tables at the engine's speed, by family: reading (:mod:`economics.io.reading`: CSV, Parquet and JSON
with Apache Arrow, chunk by chunk, every accepted layout listed there), writing and streaming
(:mod:`economics.io.writing`), the terminal progress line (:mod:`economics.io.progress`) and the Excel export
(:mod:`economics.io.excel`). The names are re-exported here, where the CLI and the app find them.
"""

from __future__ import annotations

from economics.io.excel import excel_bytes
from economics.io.progress import end_progress, progress_text, terminal_progress
from economics.io.reading import (
    CHUNK_BYTES,
    CHUNK_ROWS,
    FORMATS,
    Layout,
    decimal_comma,
    detect_format,
    read_chunks,
    read_table,
    sniff_layout,
)
from economics.io.streams import MAX_DECOMPRESSED_BYTES
from economics.io.writing import (
    Evaluator,
    TableWriter,
    Totals,
    for_csv,
    json_chunk,
    neutralise,
    output_format,
    result_columns,
    schema_of,
    stream,
    to_arrow,
)

__all__ = [
    "CHUNK_BYTES", "CHUNK_ROWS", "FORMATS", "MAX_DECOMPRESSED_BYTES", "Evaluator", "Layout", "TableWriter", "Totals",
    "decimal_comma",
    "detect_format", "end_progress", "excel_bytes", "for_csv", "json_chunk", "neutralise", "output_format",
    "progress_text", "read_chunks", "read_table", "result_columns", "schema_of", "sniff_layout", "stream",
    "terminal_progress", "to_arrow",
]
