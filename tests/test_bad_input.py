"""Bad input: every problem gets a message naming the field (and row) and the value; valid rows still compute."""

from __future__ import annotations

import io
import re
import sys
from typing import Any

import pandas as pd
import pytest

import economics
from economics.io.scenario_files import read_input_bytes
from economics.io.tables import read_table
from economics.schema.validation import InputError

GOOD = "name,accelerator_count,output_tokens_per_s_per_accelerator\nok,8,1000\n"


def table(csv_text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    return economics.evaluate_with_report(read_table(csv_text.encode(), fmt="csv"))


@pytest.mark.parametrize("data, words", [
    (b"", "empty file"),
    (b"\n\n  \n", "empty file"),
    (b"# only a comment\n", "empty file"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"name,accelerator\n\xff\xfe\xfa,h100-sxm\n", "not a UTF-8"),
    (b"name,accelerator_count\n", "no scenario rows"),
])
def test_unusable_files_are_refused_with_the_reason(data: bytes, words: str) -> None:
    with pytest.raises(InputError, match=words):
        read_table(data, fmt="csv")


def test_unknown_column_is_named_with_a_suggestion() -> None:
    with pytest.raises(InputError) as exc:
        read_table(b"name,electricity_usd_per_kw,colour\nx,0.1,red\n", fmt="csv")
    assert "'electricity_usd_per_kw' (did you mean 'electricity_usd_per_kwh'?)" in str(exc.value)
    assert "'colour'" in str(exc.value)


def test_duplicate_column_is_named() -> None:
    with pytest.raises(InputError, match="duplicate columns: pue"):
        read_table(b"name,pue,pue\nx,1.2,1.3\n", fmt="csv")


def test_utf8_bom_is_accepted() -> None:
    df = read_table(b"\xef\xbb\xbf" + GOOD.encode(), fmt="csv")
    assert list(df.columns)[0] == "name"


@pytest.mark.parametrize("column, value, message", [
    ("accelerator_count", "0", "accelerator_count: must be >= 1 and <= 10,000,000 [accelerator], got 0"),
    ("accelerator_count", "2.5", "accelerator_count: must be a whole number, got 2.5"),
    ("output_tokens_per_s_per_accelerator", "-5", "output_tokens_per_s_per_accelerator: must be > 0"),
    ("output_tokens_per_s_per_accelerator", "0", "output_tokens_per_s_per_accelerator: must be > 0"),
    ("electricity_usd_per_kwh", "-0.1", "electricity_usd_per_kwh: must be >= 0 and <= 10 [USD/kWh], got -0.1"),
    ("pue", "0.9", "pue: must be >= 1 and <= 5, got 0.9"),
    ("prefix_cache_hit_rate", "1.5", "prefix_cache_hit_rate: must be >= 0 and <= 1, got 1.5"),
    ("electricity_usd_per_kwh", "NaN", "electricity_usd_per_kwh: 'NaN' is not a number [USD/kWh]"),
    ("electricity_usd_per_kwh", "inf", "electricity_usd_per_kwh: inf is not a finite number"),
    ("electricity_usd_per_kwh", "-Infinity", "electricity_usd_per_kwh: -Infinity is not a finite number"),
    ("electricity_usd_per_kwh", "ten cents", "electricity_usd_per_kwh: 'ten cents' is not a number [USD/kWh]"),
    ("ownership", "lease", "ownership: 'lease' is not one of own, rent"),
    ("rent_includes_energy", "maybe", "rent_includes_energy: 'maybe' is not true or false"),
    ("accelerator", "h100-sx", "accelerator: unknown id 'h100-sx'; did you mean 'h100-sxm'?"),
    ("accelerator", "H200", "accelerator: unknown id 'H200'; did you mean 'h200-sxm'?"),
])
def test_bad_cell_names_row_field_and_value_and_the_other_rows_still_compute(
        column: str, value: str, message: str) -> None:
    base = {"name": "", "accelerator_count": "8", "output_tokens_per_s_per_accelerator": "1000"}
    base.setdefault(column, "")
    header = ",".join(base)
    good = ",".join({**base, "name": "good"}.values())
    bad = ",".join({**base, "name": "bad", column: value}.values())
    result, report = table(f"{header}\n{good}\n{bad}\n{good}\n")
    assert result["valid"].tolist() == [True, False, True]
    assert message in result.loc[1, "error"]
    first = report.iloc[0]
    assert (first["row"], first["name"], first["field"]) == (2, "bad", column)
    assert str(first["value"]) == value
    assert result.loc[[0, 2], "cost_usd_per_m_tokens"].notna().all()
    assert result.loc[1, ["cost_usd_per_m_tokens", "utilization"]].isna().all()


def test_combinations_are_checked() -> None:
    result, _ = table(
        "name,accelerator,ownership,accelerator_count,output_tokens_per_s_per_accelerator,demand_input_tokens_per_day,"
        "input_tokens_per_request\n"
        "no-price,sn40l,own,16,500,,\n"          # SambaNova publishes no price
        "no-fleet,h100-sxm,own,,1000,,\n"        # neither a fleet nor a demand
        "no-throughput,h100-sxm,own,8,,,\n"
        "no-rent,sn40l,rent,16,500,,\n"
        "cannot-infer,h100-sxm,own,,1000,1e9,0\n")
    errors = result["error"].tolist()
    assert "accelerator_price_usd: not in the catalog for 'sn40l' (not published); give a value" in errors[0]
    assert "accelerator_count: give a fixed fleet (accelerator_count) or a demand" in errors[1]
    assert "output_tokens_per_s_per_accelerator: give a measured throughput per accelerator, or a model" in errors[2]
    assert "rent_usd_per_accelerator_hour: not in the catalog for 'sn40l'" in errors[3]
    assert "demand_output_tokens_per_day: needed when input_tokens_per_request is 0" in errors[4]
    assert not result["valid"].any()


def test_a_bad_cell_is_not_also_reported_as_missing() -> None:
    result, report = table("name,accelerator_count,output_tokens_per_s_per_accelerator\nx,8,fast\n")
    assert report["message"].tolist() == ["output_tokens_per_s_per_accelerator: 'fast' is not a number [token/s]"]


def test_single_scenario_errors_name_field_and_value() -> None:
    with pytest.raises(economics.ScenarioError) as exc:
        economics.evaluate_scenario({"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000, "pue": 0.5})
    assert str(exc.value) == "pue: must be >= 1 and <= 5, got 0.5"
    with pytest.raises(economics.ScenarioError, match="electricty_usd_per_kwh: unknown field; did you mean "
                                                       "'electricity_usd_per_kwh'"):
        economics.evaluate_scenario({"electricty_usd_per_kwh": 0.1})
    with pytest.raises(economics.ScenarioError, match="accelerator: unknown id 'b2000'; did you mean 'b200'"):
        economics.evaluate_scenario({"accelerator": "b2000", "accelerator_count": 8,
                                     "output_tokens_per_s_per_accelerator": 1000})


def test_outputs_never_hold_nan_or_infinity() -> None:
    result, _ = table("name,accelerator_count,output_tokens_per_s_per_accelerator,input_tokens_per_request,"
                      "price_usd_per_m_output_tokens\nno-input,8,1000,0,0\n")
    # no input tokens: per-M-input cost does not apply; zero prices: gross margin does not apply -> empty, not NaN
    row = result.iloc[0]
    assert row["valid"]
    assert row["cost_usd_per_m_input_tokens"] is pd.NA
    assert row["gross_margin"] is pd.NA
    text = economics.io.scenario_files.to_csv_text(result) + economics.io.scenario_files.to_json_text(result)
    assert not re.search(r"\b(nan|inf|infinity)\b", text, flags=re.IGNORECASE)


def test_inputs_read_whole_are_bounded_before_they_are_read(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # plan, CANDIDATES, benchmark files and --curves - are read whole: one byte past the limit is refused, named,
    # and only limit + 1 bytes are ever read (a 2 GB pipe is not buffered to find out)
    path = tmp_path / "eleven.csv"
    path.write_bytes(b"x" * 11)
    assert read_input_bytes(str(path), 11) == b"x" * 11
    with pytest.raises(InputError, match=r"^/.*/eleven\.csv: more than the 10 bytes this input may have$"):
        read_input_bytes(str(path), 10)
    stdin = io.BytesIO(b"y" * 100)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
    with pytest.raises(InputError, match="standard input: more than the 10 bytes"):
        read_input_bytes("-", 10)
    assert stdin.tell() == 11
    with pytest.raises(InputError, match="cannot read .*missing"):
        read_input_bytes(str(tmp_path / "missing"), 10)


@pytest.mark.parametrize("text, words", [
    ('[{"name": "\\ud800", "pue": 1.2}]', "row 1: name: '\\ud800' holds half of a UTF-16 surrogate pair on its own"),
    ('[{"name": "a"}, {"name": "b", "model": "x\\udfffy"}]', "row 2: model: 'x\\udfffy' holds half"),
    ('{"scenarios": [{"name": "a"}], "colour": 1, "size": 2}', "unknown JSON keys beside 'scenarios': 'colour', "
                                                               "'size'"),
])
def test_json_no_file_can_hold_or_that_would_be_ignored_is_refused_by_name(text: str, words: str) -> None:
    # issue #44: a lone surrogate is a valid JSON string but no character (every writer failed on it); a key beside
    # "scenarios" was ignored
    with pytest.raises(InputError) as exc:
        read_table(text.encode(), fmt="json")
    assert words in str(exc.value)
    str(exc.value).encode("utf-8")  # the message itself can be written


def test_a_whole_surrogate_pair_is_one_character() -> None:
    assert read_table(b'[{"name": "\\ud83d\\ude00"}]', fmt="json")["name"].tolist() == ["\U0001f600"]
