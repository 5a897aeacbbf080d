"""Every command with bad arguments, bad paths, unusable files and invalid rows: never a traceback, always the
documented exit code (0 all valid, 1 some rows invalid, 2 unusable input or arguments, 3 internal error).

Most cases run ``main()`` in-process (fast, and an escaping exception would fail the test); a few run the real
``python -m economics`` in a subprocess to show what a user's terminal gets."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from economics.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("name,accelerator,existing_accelerators,accelerator_price_usd,output_tokens_per_s_per_accelerator,"
          "demand_requests_per_s,horizon_years,price_usd_per_m_input_tokens,price_usd_per_m_output_tokens,"
          "electricity_usd_per_kwh,electricity_usd_per_kwh_low,electricity_usd_per_kwh_high")
OK = "ok,h100-sxm,8,30000,1000,4,2,0.5,2.0,0.1,0.05,0.2"
ROWS = "\n".join([HEADER, OK, OK.replace("ok,", "bad,").replace(",1000,", ",fast,"), OK.replace("ok,", "dup,"),
                  OK.replace("ok,", "dup,"), OK.replace("ok,", "badrange,").replace("0.05,0.2", "abc,0.2")]) + "\n"
COMMANDS = ("evaluate", "explain", "template", "compare", "retrofit", "uncertainty", "calibrate", "fields", "schema",
            "plan", "kv-memory")


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    paths = {"all": ROWS, "valid": f"{HEADER}\n{OK}\n", "binary": "", "empty": "", "unknown": "pue,colour\n1,red\n",
             "json": '[{"name": "j", "accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000}]',
             "badjson": '[{"name": "j",', "nested": '[{"pue": [1.2]}]'}
    out = {}
    for key, text in paths.items():
        p = tmp_path / f"{key}.{'json' if 'json' in key or key == 'nested' else 'csv'}"
        p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" if key == "binary" else text.encode())
        out[key] = str(p)
    out["missing"] = str(tmp_path / "missing.csv")
    out["dir"] = str(tmp_path)
    out["bad_out"] = str(tmp_path / "no" / "such" / "dir" / "x.csv")
    return out


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


ROW_COMMANDS = ("explain", "compare", "retrofit", "uncertainty", "plan")
CASES: list[tuple[str, int, str]] = [
    # (arguments with {placeholders}, exit code, words on stderr)
    ("evaluate {valid}", 0, ""),
    ("evaluate {json}", 0, ""),
    ("evaluate {all}", 1, "row 2 (bad): output_tokens_per_s_per_accelerator: 'fast' is not a number"),
    ("evaluate {all}", 1, "row 5 (badrange): electricity_usd_per_kwh_low: 'abc' is not a number"),
    ("evaluate {missing}", 2, "cannot read"),
    ("evaluate {dir}", 2, "cannot read"),
    ("evaluate {binary}", 2, "binary"),
    ("evaluate {empty}", 2, "empty file"),
    ("evaluate {unknown}", 2, "unknown columns: 'colour'"),
    ("evaluate {badjson}", 2, "not well-formed JSON"),
    ("evaluate {nested}", 2, "pue, row 1: [1.2] (list) is not a number"),
    ("evaluate {valid} -o {bad_out}", 2, "cannot write"),
    ("evaluate {valid} --errors {dir}", 2, "cannot write"),
    ("evaluate {valid} --format xml", 2, "invalid choice: 'xml'"),
    ("evaluate", 2, "give an input file, or --scenario NAME[@VERSION]"),
    ("evaluate {valid} --bogus", 2, "unrecognized arguments: --bogus"),
    ("bogus", 2, "invalid choice: 'bogus'"),
    ("", 2, "required: command"),
    ("template extra", 2, "unrecognized arguments"),
    ("fields", 0, ""), ("schema", 0, ""), ("template", 0, ""),
    ("calibrate --bogus", 2, "unrecognized arguments"),
    ("uncertainty {valid} --row ok --samples -5", 2, "samples must be >= 1"),
    ("uncertainty {valid} --row ok --samples abc", 2, "samples must be a whole number, got 'abc'"),
    ("uncertainty {valid} --row ok --samples 100000000", 2, "samples must be >= 1 and <= 1,000,000"),
    ("uncertainty {valid} --row ok --seed -1", 2, "seed must be >= 0"),
    ("uncertainty {valid} --row ok --output-field bogus", 2, "--output-field: 'bogus' is not a numeric output"),
    ("uncertainty {valid} --row ok --output-field name", 2, "--output-field: 'name' is not a numeric output"),
    ("uncertainty {valid} --row ok --distribution normal", 2, "invalid choice: 'normal'"),
    ("uncertainty {all} --row ok --samples 200", 0, ""),
    ("uncertainty {all} --row bad", 1, "row 2 (bad): output_tokens_per_s_per_accelerator: 'fast' is not a number"),
    ("uncertainty {all} --row badrange", 1, "electricity_usd_per_kwh_low: 'abc' is not a number"),
    ("compare {all} --row ok --accelerators bogus", 2, "--accelerators: unknown id 'bogus'"),
    ("compare {all} --row ok", 0, "the ranges (electricity_usd_per_kwh_low, electricity_usd_per_kwh_high)"),
    ("retrofit {all} --row ok", 0, ""),
    ("plan {all} --row ok", 0, ""),
    ("plan {all} --row ok --format csv -o {bad_out}", 2, "cannot write"),
    ("compare {all} --row ok -o {bad_out}", 2, "cannot write"),
    ("retrofit {all} --row ok --format json -o {bad_out}", 2, "cannot write"),
    ("kv-memory {all} --row ok --agents 10", 1, "workload: the kv-memory study takes a session row"),
    ("kv-memory {all} --row ok", 2, "required: --agents"),
    ("kv-memory {all} --row ok --agents 0", 2, "--agents"),
    ("kv-memory {all} --row bad --agents 10", 1, "row 2 (bad): output_tokens_per_s_per_accelerator: 'fast'"),
]
for command in ROW_COMMANDS:
    CASES += [
        (f"{command} {{all}}", 2, "--row: required with an input file"),
        (f"{command} {{all}} --row nobody", 2, "--row: no row named 'nobody' and no row number 1..5"),
        (f"{command} {{all}} --row 99", 2, "no row number 1..5"),
        (f"{command} {{all}} --row dup", 2, "--row: 2 rows are named 'dup' (rows 3, 4); give the row number"),
        (f"{command} {{all}} --row bad", 1, "row 2 (bad): output_tokens_per_s_per_accelerator: 'fast'"),
        (f"{command} {{missing}} --row 1", 2, "cannot read"),
        (f"{command} {{binary}} --row 1", 2, "binary"),
    ]
CASES += [("explain {all} --row ok", 0, ""), ("explain {all} --row 4", 0, "")]


def all_commands() -> list[str]:
    """Every subcommand the CLI has now (a command added later gets the generic cases below automatically)."""
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(subparsers.choices or {})


for command in all_commands():  # generic: an unknown option, a missing file, a binary file
    CASES += [(f"{command} --bogus-option", 2, ""), (f"{command} {{missing}} --row 1", 2, ""),
              (f"{command} {{binary}} --row 1", 2, "")]


@pytest.mark.parametrize("args, code, words", CASES, ids=[f"{c[0]} -> {c[1]}" for c in CASES])
def test_every_command_gives_its_exit_code_and_no_traceback(capsys: pytest.CaptureFixture[str],
                                                            files: dict[str, str], args: str, code: int,
                                                            words: str) -> None:
    argv = [a.format(**files) for a in args.split()]
    got, _out, err = run(capsys, *argv)
    assert "Traceback" not in err
    assert got == code, err
    assert words in err
    if code in (1, 2) and "usage:" not in err:
        assert err.strip(), "a failing command says why"


def test_the_cases_cover_every_command() -> None:
    assert set(COMMANDS) <= set(all_commands())
    covered = {c[0].split()[0] for c in CASES if c[0]} - {"bogus"}
    assert covered == set(all_commands())
    specific = {c[0].split()[0] for c in CASES if c[0] and "--bogus-option" not in c[0] and "--row 1" not in c[0]}
    assert specific >= set(COMMANDS)  # the commands known here have their own cases too


def test_an_internal_failure_is_exit_3_with_one_line(capsys: pytest.CaptureFixture[str], files: dict[str, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(*_a: object, **_k: object) -> str:
        raise MemoryError

    monkeypatch.setattr(pd.DataFrame, "to_json", out_of_memory)  # the library fails, not our code
    code, _out, err = run(capsys, "evaluate", files["valid"], "--format", "json")
    assert (code, err) == (3, "error: out of memory; try a smaller file or fewer --samples\n")

    def broken(*_a: object, **_k: object) -> str:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(pd.DataFrame, "to_json", broken)
    code, _out, err = run(capsys, "evaluate", files["valid"], "--format", "json")
    assert code == 3 and err.count("\n") == 1 and "internal error: RuntimeError: disk on fire\\x0asecond line" in err


def test_stderr_escapes_control_characters_and_shortens_long_names(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    long_name = "n" * 100_000
    src = tmp_path / "hostile.csv"
    src.write_text("name,accelerator_count,output_tokens_per_s_per_accelerator\n"
                   f"\"red\x1b[31m\x07\",8,fast\n{long_name},8,1000\n", encoding="utf-8")
    code, _out, err = run(capsys, "evaluate", str(src))
    assert code == 1
    assert "\x1b" not in err and "\x07" not in err and "red\\x1b[31m\\x07" in err
    assert long_name not in err and "(100,000 characters)" in err and len(err) < 2_000


def test_a_message_about_10000_unknown_columns_is_capped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "wide.csv"
    src.write_text(",".join(f"col{i}" for i in range(10_000)) + "\n" + ",".join("1" * 10_000) + "\n",
                   encoding="utf-8")
    code, _out, err = run(capsys, "evaluate", str(src))
    assert code == 2 and "and 9,990 more unknown columns" in err and len(err) < 1_000


def test_thousands_of_invalid_rows_print_a_capped_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "many.csv"
    src.write_text("name,accelerator_count,output_tokens_per_s_per_accelerator\n" + "x,8,fast\n" * 5000,
                   encoding="utf-8")
    errors = tmp_path / "errors.csv"
    code, out, err = run(capsys, "evaluate", str(src), "--errors", str(errors))
    assert code == 1 and "… and 4,950 more problems (--errors FILE writes them all)" in err
    assert len(pd.read_csv(errors)) == 5000 and len(out.splitlines()) == 5001  # nothing dropped


@pytest.mark.parametrize("args, code", [(["evaluate", "{missing}"], 2), (["uncertainty", "{all}", "--row", "bad"], 1),
                                        (["explain", "{all}", "--row", "dup"], 2), (["evaluate", "{all}"], 1)])
def test_a_real_process_shows_no_traceback(files: dict[str, str], args: list[str], code: int) -> None:
    proc = subprocess.run([sys.executable, "-m", "economics", *[a.format(**files) for a in args]], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == code and "Traceback" not in proc.stderr and proc.stderr.strip()


def test_evaluate_keeps_the_range_columns_beside_their_field(capsys: pytest.CaptureFixture[str],
                                                            files: dict[str, str]) -> None:
    code, out, _err = run(capsys, "evaluate", files["valid"])
    assert code == 0
    header, row = list(csv.reader(io.StringIO(out)))[:2]
    at = header.index("electricity_usd_per_kwh")
    assert header[at + 1:at + 3] == ["electricity_usd_per_kwh_low", "electricity_usd_per_kwh_high"]
    first = dict(zip(header, row, strict=True))
    assert (first["electricity_usd_per_kwh_low"], first["electricity_usd_per_kwh_high"]) == ("0.05", "0.2")


def test_argument_errors_escape_control_characters_and_shorten(capsys: pytest.CaptureFixture[str],
                                                               files: dict[str, str]) -> None:
    code, _out, err = run(capsys, "evaluate", files["valid"], "\x1b[31mred", "x" * 10_000)
    assert code == 2 and "\x1b" not in err and "\\x1b[31mred" in err and "characters)" in err and len(err) < 2_000
