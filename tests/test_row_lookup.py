"""The one-row commands find their row chunk by chunk (memory: one chunk), with the same answers as reading the
whole table: a row in a later chunk, a name shared across chunks, a name that is also a number, standard input.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from economics.io.row_lookup import find_row
from economics.schema.validation import InputError

ROOT = Path(__file__).resolve().parent.parent
HEADER = "name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator,demand_output_tokens_per_day"


def table(names: list[str]) -> bytes:
    rows = [f"{n},h100-sxm,{8 + i},1000,1e9" for i, n in enumerate(names)]
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def test_a_row_in_a_later_chunk_is_found_with_its_position() -> None:
    # 3,000 rows of about 40 bytes in chunks of 4 KB: row 2,500 lies well past the first chunk
    data = table([f"r{i}" for i in range(3000)])
    one, position, note = find_row(data, "r2499", chunk_bytes=4096)
    assert (position, note, one["accelerator_count"].tolist()) == (2499, "", [str(8 + 2499)])
    by_number, position, _ = find_row(data, "2500", chunk_bytes=4096)
    assert position == 2499 and by_number.equals(one)


def test_a_name_shared_across_chunks_is_refused_naming_both_rows() -> None:
    names = [f"r{i}" for i in range(3000)]
    names[10] = names[2900] = "twice"
    with pytest.raises(InputError, match=r"--row: 2 rows are named 'twice' \(rows 11, 2901\)"):
        find_row(table(names), "twice", chunk_bytes=4096)


def test_a_name_that_is_a_number_wins_and_says_so() -> None:
    # rows named r0, 3, r2: --row 3 is the row named '3' (row 2), and the note says row number 3 is another
    one, position, note = find_row(table(["r0", "3", "r2"]), "3")
    assert (position, one["name"].tolist()) == (1, ["3"])
    assert note == "note: --row 3 is the row named '3' (row 2); --row number:3 is row number 3"
    with pytest.raises(InputError, match=r"no row named 'r9' and no row number 1..3; did you mean 'r[02]'\?"):
        find_row(table(["r0", "3", "r2"]), "r9")


def test_name_and_number_prefixes_say_which_row_is_meant() -> None:
    # rows named r0, 3, r2: name:3 is row 2 (no note: nothing to disambiguate), number:3 is the third row (r2)
    data = table(["r0", "3", "r2"])
    assert find_row(data, "name:3")[1:] == (1, "")
    assert find_row(data, "number:3")[0]["name"].tolist() == ["r2"]
    with pytest.raises(InputError, match=r"--row: no row number 4: the table has rows 1..3"):
        find_row(data, "number:4")
    with pytest.raises(InputError, match=r"give a row number after 'number:'"):
        find_row(data, "number:r2")
    with pytest.raises(InputError, match=r"no row named '1'"):  # name:1 never falls back to the first row
        find_row(data, "name:1")


def test_explain_reads_its_row_from_standard_input() -> None:
    data = table([f"r{i}" for i in range(50)])
    by_stdin = subprocess.run([sys.executable, "-m", "economics", "explain", "-", "--row", "r42"], input=data,
                              capture_output=True, cwd=ROOT, timeout=300)
    assert by_stdin.returncode == 0, by_stdin.stderr
    assert b"accelerator_count = 50 accelerator" in by_stdin.stdout


def test_a_row_number_stops_the_scan_once_found() -> None:
    # row 3,000 is ragged (a cell too many): a name is looked for in every row, so the scan meets it and refuses
    # the file; number:1 is found in the first 4 KB chunk and the scan ends there, never reading the bad row
    data = table([f"r{i}" for i in range(3000)]) + b"late,h100-sxm,8,1000,1e9,extra\n"
    with pytest.raises(InputError, match="not the header's 5 .*'late,h100-sxm,8,1000,1e9,extra' \\(6 cells\\)"):
        find_row(data, "r0", chunk_bytes=4096)
    one, position, note = find_row(data, "number:1", chunk_bytes=4096)
    assert (position, note, one["name"].tolist()) == (0, "", ["r0"])


def test_a_name_shared_by_more_rows_than_listed_ends_the_scan() -> None:
    # 150 rows named "same" across chunks, then a ragged row: the scan stops at the 100th match ('100+ rows'), so
    # the ragged row is never reached and the error is the shared name, not the ragged row
    data = table(["same"] * 150 + [f"r{i}" for i in range(3000)]) + b"late,h100-sxm,8,1000,1e9,extra\n"
    with pytest.raises(InputError, match=r"--row: 100\+ rows are named 'same' \(rows 1, 2, .* and 90 more rows\)"):
        find_row(data, "same", chunk_bytes=4096)


@pytest.mark.parametrize(("rows", "at"), [(b'[{"name": "alpha"}, {"pue": 1.2}]', 0),
                                          (b'[{"pue": 1.2}, {"name": "alpha"}]', 1)])
def test_a_row_without_a_name_is_passed_over_and_the_closest_name_suggested(rows: bytes, at: int) -> None:
    # found by Schemathesis on /v1/session-profile: a JSON row without the key "name" was read as NaN and the
    # suggestion crashed on it (AttributeError: 'float' object has no attribute 'lower', a 500 and the CLI's
    # "internal error"); the nameless row is now named "" and the others are searched as before
    with pytest.raises(InputError, match=r"--row: no row named 'alph' and no row number 1..2; did you mean 'alpha'\?"):
        find_row(rows, "alph", fmt="json")
    one, position, _ = find_row(rows, "alpha", fmt="json")
    assert one["name"].tolist() == ["alpha"] and position == at
