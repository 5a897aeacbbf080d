"""Damaged or oversized input is the user's problem, said as such (exit 2 or 1, the reason named), never an
internal error (exit 3) and never rows silently lost: cut-short, corrupt or padded gzip, a decompressed size past
its bound, cells longer than Python's csv limit, JSON integers longer than Python converts.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from economics.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "docs" / "example.csv")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def gzipped_example() -> bytes:
    rows = [r for r in Path(EXAMPLE).read_text().splitlines() if r and not r.startswith("#")]
    return gzip.compress(("\n".join(rows) + "\n").encode())


@pytest.mark.parametrize(("name", "make", "words"), [
    ("cut short", lambda g: g[: len(g) // 2], "the gzip file is cut short"),
    ("bad CRC", lambda g: g[:-8] + bytes([g[-8] ^ 0xFF]) + g[-7:], "the gzip file is damaged (CRC check failed"),
    ("trailing garbage", lambda g: g + b"garbage", "the gzip file is damaged (Not a gzipped file"),
])
def test_a_damaged_gzip_is_refused_as_the_users_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                     make: Any, words: str) -> None:
    # a cut-short gzip used to be read as far as it went and evaluated (exit 0: rows silently lost); a bad CRC or
    # trailing bytes were "internal error" (exit 3)
    path = tmp_path / "in.csv.gz"
    path.write_bytes(make(gzipped_example()))
    code, err = cli(capsys, "evaluate", str(path), "-o", str(tmp_path / "out.csv"))
    assert code == 2 and words in err, err
    assert not (tmp_path / "out.csv").exists()


def test_decompressed_size_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 12 MB of rows in a 30 KB gzip, against a 5 MB bound: refused once 5 MB have come out, with the option to set
    path = tmp_path / "many.csv.gz"
    path.write_bytes(gzip.compress(b"name,pue\n" + b"a,1.2\n" * 2_000_000))
    code, err = cli(capsys, "evaluate", str(path), "--max-decompressed-mb", "5", "-o", str(tmp_path / "out.csv"))
    assert code == 2 and "decompresses to more than 5 MB (--max-decompressed-mb sets the bound)" in err, err
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize(("text", "words"), [
    ("name," + "a" * 140_000 + "\nx,1\n", "unknown columns: 'aaaa"),   # a header cell over csv's 131,072 limit
    ("name,pue\n" + "x" * 140_000 + ",1.2\n", "name: longer than 200 characters"),  # a first-row cell
])
def test_a_cell_longer_than_the_csv_modules_limit_is_the_users_problem(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str], text: str,
                                                                      words: str) -> None:
    path = tmp_path / "long.csv"
    path.write_text(text)
    code, err = cli(capsys, "evaluate", str(path), "-o", str(tmp_path / "out.csv"))
    assert code in (1, 2) and words in err and "internal error" not in err, err


def test_a_json_integer_of_5000_digits_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.json"
    path.write_text('[{"name": "a", "accelerator_count": ' + "9" * 5000 + "}]")
    code, err = cli(capsys, "evaluate", str(path))
    assert code == 2 and "not usable JSON: Exceeds the limit (4300 digits)" in err, err


def test_a_long_preamble_of_comment_lines_is_skipped_in_one_scan(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # 2 million '#' lines (a gzip of 20 KB) before the header: the layout sniffing used to walk them line by line in
    # Python once per doubling of what it read (13 s for 10 million here; memory grew with the lines)
    path = tmp_path / "comments.csv.gz"
    path.write_bytes(gzip.compress(b"#\n" * 2_000_000 + b"  # indented\r\n\r\n" + b"name,pue\na,1.2\n"))
    code, err = cli(capsys, "evaluate", str(path), "-o", str(tmp_path / "out.csv"))
    assert code == 1 and "row 1 (a):" in err, err  # the row is read (and is incomplete): the header was found
