"""The planner's files are read by the rules every other file follows: row numbers count the rows below the
header (a row whose name starts with ``#`` is a row, comments only precede the header), and CANDIDATES' numbers go
through the shared value parser (what it refuses everywhere it refuses here).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from economics.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "docs" / "plan-example.csv"
CANDIDATES = ROOT / "docs" / "plan-candidates.csv"


def lines(path: Path) -> tuple[list[str], list[str]]:
    """(comment lines before the header, the header and rows) of a docs CSV."""
    text = [ln for ln in path.read_text().splitlines() if ln.strip()]
    cut = next(i for i, ln in enumerate(text) if not ln.startswith("#"))
    return text[:cut], text[cut:]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


def test_a_row_named_with_a_hash_is_a_row_and_numbers_count_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # rows: worked-plan, then '#second' (a copy named with a '#'), then the file's second row; --row 3 is the third
    # row below the header, as evaluate counts (it used to drop '#second' and plan the fourth line)
    comments, (header, first, second, *_) = lines(PLAN)
    hashed = "#second" + first[first.index(","):]
    path = tmp_path / "plan.csv"
    path.write_text("\n".join([*comments, header, first, hashed, second]) + "\n")
    name_of_second = second.split(",")[0]
    code, out, err = run(capsys, "plan", str(path), "--row", "3", "--candidates", str(CANDIDATES), "--format",
                         "json")
    code_by_name, out_by_name, _ = run(capsys, "plan", str(path), "--row", name_of_second, "--candidates",
                                       str(CANDIDATES), "--format", "json")
    assert (code, out) == (code_by_name, out_by_name), err
    code, out_hashed, err = run(capsys, "plan", str(path), "--row", "#second", "--candidates", str(CANDIDATES),
                                "--format", "json")
    assert code in (0, 1) and out_hashed, err


@pytest.mark.parametrize("value", ["2_5000", "\u0662\u0665\u0660\u0660", "\uff12\uff15\uff10\uff10", "0x9c4"])
def test_candidate_numbers_go_through_the_shared_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        value: str) -> None:
    # float() took 2_5000 as 25000 and Arabic-Indic or full-width digits as numbers; the value parser refuses them
    _, (header, *rows) = lines(CANDIDATES)
    columns = header.split(",")
    cells = rows[0].split(",")
    cells[columns.index("accelerator_price_usd")] = value
    path = tmp_path / "candidates.csv"
    path.write_text("\n".join([header, ",".join(cells), *rows[1:]]) + "\n")
    code, _, err = run(capsys, "plan", str(PLAN), "--row", "1", "--candidates", str(path))
    assert code == 2, err
    assert "CANDIDATES row 1" in err and "accelerator_price_usd" in err and "is not a number" in err, err


def test_a_candidate_named_with_a_hash_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, (header, first, *rows) = lines(CANDIDATES)
    path = tmp_path / "candidates.csv"
    path.write_text("\n".join([header, "#g" + first[first.index(","):], *rows]) + "\n")
    code, out, err = run(capsys, "plan", str(PLAN), "--row", "1", "--candidates", str(path), "--format", "json")
    assert code in (0, 1), err
    assert '"#g"' in out


def test_a_demand_profile_near_the_float_limit_is_relative_load() -> None:
    # 24 values of 1e308 and 5e307 overflowed their sum: the plan failed with "HiGHS Status 2: Model error"
    from economics.studies.planner.inputs import demand_profile

    x = demand_profile(" ".join(["1e308"] * 12 + ["5e307"] * 12), 2.0)
    assert x[0] == pytest.approx(4 / 3) and x[23] == pytest.approx(2 / 3) and x.mean() == pytest.approx(1.0)
    for bad in ("2_5 " + "1 " * 23, " ".join(["1"] * 23 + ["\u0661"])):
        with pytest.raises(ValueError, match="demand_profile: .* is not a number"):
            demand_profile(bad, 2.0)


def test_plan_reads_a_gzip_and_excels_separator_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # plan refused a .csv.gz as binary, and read Excel's "sep=;" line as a column named 'sep='
    import gzip

    comments, body = lines(PLAN)
    plain = run(capsys, "plan", str(PLAN), "--row", "1", "--candidates", str(CANDIDATES), "--format", "json")
    packed = tmp_path / "plan.csv.gz"
    packed.write_bytes(gzip.compress(("\n".join(body) + "\n").encode()))
    semicolons = tmp_path / "candidates.csv"
    _, cands = lines(CANDIDATES)
    semicolons.write_text("sep=;\r\n" + "\r\n".join(r.replace(",", ";") for r in cands) + "\r\n")
    again = run(capsys, "plan", str(packed), "--row", "1", "--candidates", str(semicolons), "--format", "json")
    assert again == plain and plain[0] == 0


def test_every_reader_takes_excels_separator_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "excel.csv"
    path.write_text("sep=;\r\nname;accelerator;accelerator_count;output_tokens_per_s_per_accelerator\r\n"
                    "x;h100-sxm;8;1000,5\r\n")
    code, out, err = run(capsys, "evaluate", str(path))
    assert code == 0, err
    assert out.splitlines()[1].startswith('"x","h100-sxm"') and ",1000.5," in out.splitlines()[1]


def test_plan_and_candidates_read_json_and_parquet_as_every_command_does(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # one reader: the plan row and the candidates as JSON and Parquet give the plan the CSV files give
    import pandas as pd

    plain = run(capsys, "plan", str(PLAN), "--row", "2", "--candidates", str(CANDIDATES), "--format", "json")
    assert plain[0] == 0, plain[2]
    _, body = lines(PLAN)
    table = pd.read_csv(PLAN, comment=None, dtype=str, keep_default_na=False, skiprows=len(lines(PLAN)[0]))
    assert list(table.columns) == body[0].split(",")
    table.to_json(tmp_path / "plan.json", orient="records")
    cands = pd.read_csv(CANDIDATES, dtype=str, keep_default_na=False, skiprows=len(lines(CANDIDATES)[0]))
    cands.to_parquet(tmp_path / "candidates.parquet")
    again = run(capsys, "plan", str(tmp_path / "plan.json"), "--row", "2", "--candidates",
                str(tmp_path / "candidates.parquet"), "--format", "json")
    assert again == plain


@pytest.mark.parametrize(("column", "value", "message"), [
    ("ttft_target_s", "2_5", "ttft_target_s: '2_5' is not a number"),
    ("ttft_target_s", "\u0662", "ttft_target_s: '\u0662' is not a number"),
    ("spares", "maybe", "spares: 'maybe' is not true or false"),
    ("ttft_percentile", "1", "ttft_percentile: must be"),
])
def test_plan_settings_go_through_the_shared_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str,
                                                    value: str, message: str) -> None:
    # float() took 2_5 as 25 and Arabic-Indic digits as numbers: a planner setting is parsed as any field is
    comments, (header, first, *_) = lines(PLAN)
    names = header.split(",")
    cells = first.split(",")
    if column not in names:
        names.append(column)
        cells.append("")
    cells[names.index(column)] = value
    path = tmp_path / "plan.csv"
    path.write_text("\n".join([",".join(names), ",".join(cells)]) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "plan", str(path), "--row", "1", "--candidates", str(CANDIDATES))
    assert code == 1 and f"row 1 (worked-plan): {message}" in err, err


def test_a_row_named_as_a_number_is_planned_by_name_with_a_note(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _, (header, first, second, *_) = lines(PLAN)
    path = tmp_path / "plan.csv"
    path.write_text("\n".join([header, first, "1" + second[second.index(","):]]) + "\n", encoding="utf-8")
    code, by_name, err = run(capsys, "plan", str(path), "--row", "1", "--candidates", str(CANDIDATES))
    assert code == 0 and "note: --row 1 is the row named '1' (row 2); --row number:1 is row number 1" in err
    assert run(capsys, "plan", str(path), "--row", "name:1", "--candidates", str(CANDIDATES))[1] == by_name
    code, first_row, _ = run(capsys, "plan", str(path), "--row", "number:1", "--candidates", str(CANDIDATES))
    assert code == 0 and first_row != by_name


def test_a_ttft_target_and_percentile_in_a_request_plan_row_are_the_plans(tmp_path: Path) -> None:
    # ttft_target_s and ttft_percentile are planner settings and also session fields; on a request row they are the
    # plan's (before: the row was refused as if they were session fields, and no candidate could be planned)
    from economics.io.plan_files import read_plan_row

    text = ("name,input_tokens_per_request,output_tokens_per_request,demand_requests_per_s,ttft_target_s,"
            "ttft_percentile,model,precision\nx,2000,250,20,2,0.9,llama-3.1-70b,fp8\n")
    cells, settings = read_plan_row(text, "x")
    assert (settings.ttft_target_s, settings.ttft_percentile) == (2.0, 0.9)
    assert "ttft_target_s" not in cells and "ttft_percentile" not in cells
    path = tmp_path / "plan.csv"
    path.write_text(text, encoding="utf-8")
    assert main(["plan", str(path), "--row", "x", "--accelerators", "h100-sxm"]) == 0
