"""Streaming CSV/Parquet reader and writer (economics.io.tables): each real-export case, a differential test over
dialects, streaming identical to one pass, and the output formats."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

from economics.engine.batch import evaluate, evaluate_with_report
from economics.io.scenario_files import _neutralise, excel_export, to_json_text
from economics.io.tables import TableWriter, excel_bytes, neutralise, read_chunks, read_table, stream
from economics.schema.validation import InputError
from economics.schema.values import shown

HEADER = "name,accelerator_count,output_tokens_per_s_per_accelerator"


def cells(data: bytes, **kw: object) -> dict[Any, list[Any]]:
    """All rows of ``data`` as column -> values (chunks joined)."""
    chunks = list(read_chunks(data, **kw))  # type: ignore[arg-type]
    return pd.concat(chunks).to_dict("list")


# ------------------------------------------------------------------------------------------ each real-export case


def test_trailing_separator_on_every_data_row_adds_no_column() -> None:
    # the case: 'a,8,1000,' used to shift every column one place left and read as valid
    got = cells(f"{HEADER}\na,8,1000,\nb,9,1100,\n".encode())
    assert got == {"name": ["a", "b"], "accelerator_count": ["8", "9"],
                   "output_tokens_per_s_per_accelerator": ["1000", "1100"]}


def test_trailing_separator_on_header_and_rows() -> None:
    got = cells(f"{HEADER},\na,8,1000,\n".encode())
    assert got["name"] == ["a"] and got["output_tokens_per_s_per_accelerator"] == ["1000"]


def test_value_after_the_last_column_is_refused_naming_the_row() -> None:
    with pytest.raises(InputError, match=r"a value after the last column: data rows 2 \('7'\)"):
        cells(f"{HEADER}\na,8,1000,\nb,9,1100,7\n".encode())


def test_row_with_one_cell_too_many_is_refused_not_shifted() -> None:
    with pytest.raises(InputError, match=r"not the header's 3.*'b,9,1100,7' \(4 cells\)"):
        cells(f"{HEADER}\na,8,1000\nb,9,1100,7\n".encode())


def test_row_with_one_cell_too_few_is_refused_not_defaulted() -> None:
    with pytest.raises(InputError, match=r"'b,9' \(2 cells\)"):
        cells(f"{HEADER}\na,8,1000\nb,9\n".encode())


def test_row_named_with_a_hash_is_data_comments_only_before_the_header() -> None:
    data = f"# a comment\n\n  # another, indented\n{HEADER}\n#1 fleet,8,1000\n\"#2\nsecond line\",9,1100\n"
    got = cells(data.encode())
    assert got["name"] == ["#1 fleet", "#2\nsecond line"]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings(eol: str) -> None:
    data = eol.join(["# c", HEADER, "a,8,1000", '"x' + eol + 'y",9,1100', ""])
    got = cells(data.encode())
    assert got["name"] == ["a", "x" + eol + "y"] and got["accelerator_count"] == ["8", "9"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le-bom", "utf-16-be-bom"])
def test_encodings(encoding: str) -> None:
    text = f"{HEADER}\nküche-é,8,1000\n"
    if encoding == "utf-16-le-bom":
        data = b"\xff\xfe" + text.encode("utf-16-le")
    elif encoding == "utf-16-be-bom":
        data = b"\xfe\xff" + text.encode("utf-16-be")
    else:
        data = text.encode(encoding)
    assert cells(data)["name"] == ["küche-é"]


def test_utf16_without_bom_is_refused_as_binary() -> None:
    with pytest.raises(InputError, match="binary"):
        cells(f"{HEADER}\na,8,1000\n".encode("utf-16-le"))


def test_not_utf8_is_refused() -> None:
    with pytest.raises(InputError, match="not a UTF-8"):
        cells(f"{HEADER}\nk\xfcche,8,1000\n".encode("latin-1"))


def test_semicolon_thousands_dots_with_a_decimal_comma() -> None:
    # 1.024.000,5 = 1 024 000 + 0.5; 2.000, (a comma, no decimals) = 2000
    got = cells(b"name;output_tokens_per_s_per_accelerator;accelerator_count\na;1.024.000,5;2.000,\n")
    assert got["output_tokens_per_s_per_accelerator"] == ["1024000.5"] and got["accelerator_count"] == ["2000."]


def test_semicolon_decimal_comma_read_as_numbers() -> None:
    data = "name;accelerator_count;output_tokens_per_s_per_accelerator;pue;electricity_usd_per_kwh\n" \
           "a;1024;1.234,5;1,2;0,08\n"
    got = cells(data.encode())
    assert got == {"name": ["a"], "accelerator_count": ["1024"], "output_tokens_per_s_per_accelerator": ["1234.5"],
                   "pue": ["1.2"], "electricity_usd_per_kwh": ["0.08"]}
    out = evaluate(pd.DataFrame(got))
    assert out.loc[0, "valid"] and out.loc[0, "pue"] == 1.2 and out.loc[0, "output_tokens_per_s_per_accelerator"] \
        == 1234.5


def test_semicolon_thousands_dot_without_comma_is_refused_not_misread() -> None:
    # the case: '30.000' read as 30; it may mean 30 000 -> refused with the column, row and value
    data = "name;accelerator_count;output_tokens_per_s_per_accelerator\na;8;1000\nb;8;30.000\n"
    with pytest.raises(InputError, match=r"output_tokens_per_s_per_accelerator: .*'30.000'.*data rows 2"):
        cells(data.encode())
    # two dots or more can only be thousands separators: 3.000.000.000 is three billion (it was refused too)
    three = read_table(b"name;demand_output_tokens_per_day\na;3.000.000.000\n")
    assert three["demand_output_tokens_per_day"].tolist() == ["3000000000"]


SEMI = "name;accelerator_count;output_tokens_per_s_per_accelerator;electricity_tariff;grid_carbon_by_hour\n"


def test_semicolon_hourly_cells_read_with_the_files_decimal_comma() -> None:
    # 24 prices with a decimal comma, separated by spaces: 8 at 0,05 and 16 at 0,125; a grid's hours with thousands
    # dots (1.200,5 = 1200.5); a catalog id is left as it is
    prices = " ".join(["0,05"] * 8 + ["0,125"] * 16)
    grid = " ".join(["1.200,5"] * 24)
    got = cells(f'{SEMI}a;8;1000;"{prices}";"{grid}"\nb;8;1000;sce-tou-8-d-summer;\n'.encode())
    assert got["electricity_tariff"] == [" ".join(["0.05"] * 8 + ["0.125"] * 16), "sce-tou-8-d-summer"]
    assert got["grid_carbon_by_hour"] == [" ".join(["1200.5"] * 24), ""]
    out = evaluate(pd.DataFrame(got))
    assert out["valid"].all(), out["error"].tolist()


def test_semicolon_hourly_cell_of_12_decimal_comma_values_is_refused_naming_field_row_and_value() -> None:
    # the case: '0,05 0,05 ...' (12 values) split on its commas read as 24 prices alternating 0 and 5 USD/kWh
    twelve = " ".join(["0,05"] * 12)
    got = cells(f'{SEMI}ok;8;1000;;\nbad;8;1000;"{twelve}";\n'.encode())
    out, report = evaluate_with_report(pd.DataFrame(got))
    assert out["valid"].tolist() == [True, False]
    assert (report.loc[0, "row"], report.loc[0, "field"]) == (2, "electricity_tariff")
    assert report.loc[0, "message"] == (f"electricity_tariff: '{' '.join(['0.05'] * 12)}' is not 24 numbers (got 12 "
                                        "values)")


@pytest.mark.parametrize("cell, words", [
    (",".join(["0,05"] * 24), "a comma is the decimal mark, and '0,05,0,05,"),  # a comma is never a separator
    (",".join(["1"] * 24), "a comma is the decimal mark, and '1,1,1"),
    (" ".join(["30.000"] * 24), "'30.000' could be a number with a decimal point or one with a '.' thousands"),
])
def test_semicolon_hourly_cell_a_decimal_comma_cannot_read_is_refused(cell: str, words: str) -> None:
    with pytest.raises(InputError) as exc:
        cells(f'{SEMI}ok;8;1000;;\nbad;8;1000;;"{cell}"\n'.encode())
    assert str(exc.value).startswith("grid_carbon_by_hour: in a ';'-separated file ")
    assert words in str(exc.value) and str(exc.value).endswith(f": data rows 2 ('{shown(cell)}')")


def test_comma_file_hourly_cells_keep_commas_as_separators() -> None:
    prices = ",".join(["0.05"] * 24)
    got = cells(f'{HEADER},electricity_tariff\na,8,1000,"{prices}"\n'.encode())
    assert got["electricity_tariff"] == [prices] and evaluate(pd.DataFrame(got))["valid"].all()


def test_semicolon_text_cells_keep_their_commas_and_dots() -> None:
    got = cells(b"name;accelerator_count;output_tokens_per_s_per_accelerator\nv1.000,5;8;1000\n")
    assert got["name"] == ["v1.000,5"]


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_compressed_input(codec: str) -> None:
    text = f"{HEADER}\na,8,1000\n".encode()
    data = gzip.compress(text) if codec == "gzip" else _zstd(text)
    assert cells(data)["name"] == ["a"]


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def test_nul_after_the_first_block_is_refused_naming_the_row() -> None:
    data = (f"{HEADER}\n" + "a,8,1000\n" * 30_000 + "b\x00,8,1000\n").encode()
    with pytest.raises(InputError, match=r"binary data \(a NUL byte\) in name: data rows 30,001"):
        cells(data, chunk_bytes=4096)


def test_row_limit_is_enforced_while_reading() -> None:
    data = (f"{HEADER}\n" + "a,8,1000\n" * 5000).encode()
    seen = []
    with pytest.raises(InputError, match="more than 1,000 rows"):
        for chunk in read_chunks(data, chunk_bytes=2048, max_rows=1000):
            seen.append(len(chunk))
    assert sum(seen) <= 1000 + 300  # stopped at the first block past the limit, not after reading the file


# ------------------------------------------------------------------------------------------ differential dialects

NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00\r"), min_size=1, max_size=12).filter(
    lambda s: s.strip() == s and s != "")
ROWS = st.lists(st.tuples(NAMES, st.integers(1, 10_000), st.integers(1, 9_999_999), st.integers(100, 499)),
                min_size=1, max_size=6)
"""(name, accelerator count, output tokens/s, PUE in hundredths)."""


def quoted(cell: str, sep: str) -> str:
    """A cell as a spreadsheet writes it: quoted (quotes doubled) when it holds the separator, a quote or a line
    break."""
    return '"' + cell.replace('"', '""') + '"' if any(c in cell for c in (sep, '"', "\r", "\n")) else cell


def number_text(value: int, hundredths: bool, sep: str) -> str:
    """How a spreadsheet exports a number: in a ``;`` file with a decimal comma and dot thousands (12.345,67),
    else plain (12345.67)."""
    text = f"{value / 100:,.2f}" if hundredths else f"{value:,}"
    return text.translate(str.maketrans(",.", ".,")) if sep == ";" else text.replace(",", "")


def dialect_bytes(rows: list[tuple[str, int, int, int]], sep: str, eol: str, encoding: str, trailing: bool,
                  comments: bool) -> bytes:
    lines = ["# exported", ""] if comments else []
    lines.append(sep.join([*HEADER.split(","), "pue"]))
    for name, count, speed, pue in rows:
        # thousands dots without a decimal comma are refused as ambiguous; a ';' export writes decimals on speeds
        speed_text = number_text(speed * 100, True, sep) if sep == ";" else str(speed)
        cells = [quoted(name, sep), str(count), speed_text, number_text(pue, True, sep)]
        lines.append(sep.join(cells) + (sep if trailing else ""))
    text = eol.join(lines) + eol
    return text.encode("utf-16") if encoding == "utf-16" else text.encode(encoding)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=ROWS, sep=st.sampled_from([",", ";", "\t"]), eol=st.sampled_from(["\n", "\r\n", "\r"]),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]), trailing=st.booleans(), comments=st.booleans())
def test_same_table_in_every_dialect_reads_back_identically(rows: list[tuple[str, int, int, int]], sep: str,
                                                           eol: str, encoding: str, trailing: bool,
                                                           comments: bool) -> None:
    got = cells(dialect_bytes(rows, sep, eol, encoding, trailing, comments))
    # line breaks inside a quoted name come back as written (the eol of the dialect is part of the cell)
    assert got["name"] == [r[0] for r in rows]
    assert [float(v) for v in got["accelerator_count"]] == [float(r[1]) for r in rows]
    assert [float(v) for v in got["output_tokens_per_s_per_accelerator"]] == [float(r[2]) for r in rows]
    assert [float(v) for v in got["pue"]] == [r[3] / 100 for r in rows]


# ------------------------------------------------------------------------------------------ streaming and writing


def scenario_file(n: int) -> bytes:
    lines = [HEADER + ",pue,decode_accelerator,decode_output_tokens_per_s_per_accelerator,"
                      "input_tokens_per_s_per_accelerator"]
    for i in range(n):
        bad = "x" if i % 97 == 5 else str(8 + i % 5)  # a few invalid rows, reported with their file row
        decode = "b200,3000,20000" if i % 100 == 77 else ",,"  # a decode pool in a few rows, not the first chunk
        lines.append(f"=row{i},{bad},{1000 + i},{1.1 + (i % 3) / 10},{decode}")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_streaming_in_small_chunks_is_identical_to_one_pass(tmp_path: Path, fmt: str) -> None:
    data = scenario_file(3000)
    one, many = tmp_path / f"one.{fmt}", tmp_path / f"many.{fmt}"
    t1 = stream(read_chunks(data), evaluate_with_report, TableWriter(str(one), fmt))
    tn = stream(read_chunks(data, chunk_bytes=2000), evaluate_with_report, TableWriter(str(many), fmt))
    if fmt == "csv":
        assert one.read_bytes() == many.read_bytes()
    else:
        assert pq.read_table(one).equals(pq.read_table(many))
    assert (t1.rows, t1.invalid) == (tn.rows, tn.invalid) == (3000, 31)  # rows 6, 103, ..., 2916: 31 rows of 3000
    assert t1.report.to_dict("list") == tn.report.to_dict("list")
    assert t1.report["row"].tolist()[:2] == [6, 103]


def test_json_streamed_in_small_chunks_is_the_whole_document(tmp_path: Path) -> None:
    # 3,000 rows in chunks of about 2,000 bytes, a decode pool first appearing after the first chunk: the file is
    # byte for byte the document the whole table gives (one evaluation, one to_json_text), records in row order
    data = scenario_file(3000)
    many = tmp_path / "many.json"
    totals = stream(read_chunks(data, chunk_bytes=2000), evaluate_with_report, TableWriter(str(many), "json"))
    whole = to_json_text(evaluate(pd.concat(read_chunks(data)).reset_index(drop=True)))
    assert many.read_text(encoding="utf-8") == whole
    records = json.loads(whole)
    assert (totals.rows, len(records), records[5]["valid"], records[77]["decode_accelerator"]) == (3000, 3000, False,
                                                                                                   "b200")
    assert records[0]["decode_accelerator"] == "" and records[0]["decode_accelerator_count"] is None


def test_json_of_one_row(tmp_path: Path) -> None:
    out = tmp_path / "o.json"
    stream(read_chunks(f"{HEADER}\na,8,1000\n".encode()), evaluate_with_report, TableWriter(str(out), "json"))
    (record,) = json.loads(out.read_text(encoding="utf-8"))
    assert record["cost_usd_per_hour"] > 0 and record["error"] == ""


def test_streamed_values_equal_the_engine_on_the_whole_table(tmp_path: Path) -> None:
    data = scenario_file(700)
    out = tmp_path / "o.csv"
    stream(read_chunks(data, chunk_bytes=1500), evaluate_with_report, TableWriter(str(out)))
    written = pd.read_csv(out, keep_default_na=False)
    whole = evaluate(pd.concat(read_chunks(data)).reset_index(drop=True))
    assert list(written.columns) == list(whole.columns)
    for col in ("cost_usd_per_m_tokens", "accelerators", "facility_power_kw"):
        expect = whole[col].astype("Float64").to_numpy(dtype=float, na_value=float("nan"))
        got = pd.to_numeric(written[col].replace("", None)).to_numpy(dtype=float)
        assert got == pytest.approx(expect, rel=1e-15, nan_ok=True)
    assert written["name"].iloc[0] == "'=row0"  # formula neutralised on the way out
    assert written["valid"].iloc[0] in ("True", True)


def test_parquet_in_parquet_out_round_trip(tmp_path: Path) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"name": ["a", "b"], "accelerator_count": [8, 16],
                             "output_tokens_per_s_per_accelerator": [1000.0, None]}), src)
    out = tmp_path / "out.parquet"
    totals = stream(read_chunks(str(src)), evaluate_with_report, TableWriter(str(out), "parquet"))
    table = pq.read_table(out).to_pydict()
    assert totals.rows == 2 and table["name"] == ["a", "b"] and table["accelerator_count"] == [8, 16]
    # 8 accelerators x 1000 tok/s each = 8000 output tok/s, as the engine gives for the same row from a CSV
    from_csv = evaluate(pd.DataFrame({"name": ["a"], "accelerator_count": ["8"],
                                      "output_tokens_per_s_per_accelerator": ["1000"]}))
    assert table["cost_usd_per_m_tokens"][0] == from_csv.loc[0, "cost_usd_per_m_tokens"]


def test_failed_stream_leaves_no_output_file(tmp_path: Path) -> None:
    data = (f"{HEADER}\n" + "a,8,1000\n" * 3000 + "b,8,1000,9\n").encode()
    out = tmp_path / "o.csv"
    with pytest.raises(InputError):
        stream(read_chunks(data, chunk_bytes=2048), evaluate_with_report, TableWriter(str(out)))
    assert not out.exists() and not (tmp_path / "o.csv.partial").exists()


def test_gzip_output(tmp_path: Path) -> None:
    out = tmp_path / "o.csv.gz"
    stream(read_chunks(f"{HEADER}\na,8,1000\n".encode()), evaluate_with_report, TableWriter(str(out)))
    rows = list(csv.DictReader(io.StringIO(gzip.decompress(out.read_bytes()).decode())))
    assert rows[0]["name"] == "a" and rows[0]["valid"] == "True"


@given(st.lists(st.one_of(st.text(max_size=8), st.sampled_from(["=1", "-1", "+2e3", "-x", "@a", "\tz", "1"])),
                max_size=20))
def test_vectorised_neutralising_matches_the_cell_by_cell_rule(texts: list[str]) -> None:
    assert neutralise(pa.array(texts, pa.string())).to_pylist() == [_neutralise(t) for t in texts]


# ------------------------------------------------------------------------------------------ the command line

ROOT = Path(__file__).resolve().parent.parent


def evaluate_cli(*args: str, stderr_tty: bool = False) -> tuple[int, str]:
    """``python -m economics evaluate ...``; stderr through a pseudo-terminal when ``stderr_tty``."""
    command = [sys.executable, "-m", "economics", "evaluate", *args]
    if not stderr_tty:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        return proc.returncode, proc.stderr
    leader, follower = pty.openpty()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return child.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def test_cli_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text(f"{HEADER}\n" + "a,8,1000\n" * 2000, encoding="utf-8")
    code, err = evaluate_cli(str(src), "-o", str(tmp_path / "o.csv"), stderr_tty=True)
    assert code == 0 and "2,000 rows" in err and "rows/s" in err and "ETA" in err and "100%" in err
    code, err = evaluate_cli(str(src), "-o", str(tmp_path / "o.csv"))
    assert code == 0 and err == ""  # piped: quiet


def test_cli_formats_from_extensions_and_compression(tmp_path: Path) -> None:
    src = tmp_path / "in.csv.gz"
    src.write_bytes(gzip.compress(f"{HEADER}\na,8,1000\nb,x,1000\n".encode()))
    code, err = evaluate_cli(str(src), "-o", str(tmp_path / "out.parquet"))
    assert code == 1 and "row 2 (b): accelerator_count: 'x' is not a number" in err
    table = pq.read_table(tmp_path / "out.parquet").to_pydict()
    assert table["name"] == ["a", "b"] and table["valid"] == [True, False]
    code, err = evaluate_cli(str(tmp_path / "out.parquet"), "--input-format", "parquet", "--format", "csv", "-o",
                             str(tmp_path / "again.csv.zst"))
    assert code == 2 and "unknown columns" in err  # a result table is not a scenario table: refused, named
    code, _ = evaluate_cli(str(src), "-o", str(tmp_path / "out.csv.zst"))
    text = pa.CompressedInputStream(pa.OSFile(str(tmp_path / "out.csv.zst")), "zstd").read().decode()
    assert code == 1 and text.splitlines()[1].startswith('"a"')


def test_cli_refused_file_leaves_no_output(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text(f"{HEADER}\na,8,1000\nb,8,1000,5\n", encoding="utf-8")
    code, err = evaluate_cli(str(src), "-o", str(tmp_path / "o.csv"))
    assert code == 2 and "(4 cells)" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [src]


def test_constant_memory_excel_holds_what_the_pandas_export_holds() -> None:
    data = f"{HEADER}\n=1+1,8,1000\n\"bell\x07\",9,1100\nok,x,1000\n{'n' * 40_000},8,1000\n".encode()
    result = evaluate(pd.concat(read_chunks(data)).reset_index(drop=True))
    fast, fast_notes = excel_bytes(result)
    slow, slow_notes = excel_export(result)

    def cells_of(book: bytes) -> list[list[object]]:
        return [[c.value for c in row] for row in load_workbook(io.BytesIO(book)).active.iter_rows()]

    got, want = cells_of(fast), cells_of(slow)
    assert got == want and fast_notes == slow_notes and len(fast_notes) == 2  # control character, long name
    assert got[1][0] == "'=1+1" and got[2][0] == "bell\\x07" and len(str(got[4][0])) == 32_767


def test_an_unknown_input_format_is_refused_naming_the_field_and_every_table_format() -> None:
    # The reader's list of formats is TableFormat's values (one definition), so a new table format shows here.
    from economics.io.output_paths import TableFormat

    with pytest.raises(InputError) as err:
        list(read_chunks(b"name,pue\na,1.2\n", fmt="xml"))
    assert str(err.value) == "--format: 'xml' is not one of " + ", ".join(f.value for f in TableFormat)
    assert str(err.value) == "--format: 'xml' is not one of json, csv, parquet"
