"""An invalid row's refused values are echoed empty, never as a default or a wrapped integer (the error column and
the report say what was given); a name a Parquet file stores as an integer is echoed as that integer's text.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from economics import evaluate
from economics.io.tables import read_table

ROW = {"accelerator": "h100-sxm", "output_tokens_per_s_per_accelerator": "1000",
       "demand_output_tokens_per_day": "1e9", "accelerator_price_usd": "30000"}


def test_refused_values_are_echoed_empty_and_the_error_says_what_was_given() -> None:
    df = pd.DataFrame([
        {**ROW, "name": "a", "ownership": "lease", "accelerator_count": "1e19", "electricity_usd_per_kwh": "1e400"},
        {**ROW, "name": "b", "ownership": "own", "accelerator_count": "64.5", "electricity_usd_per_kwh": "inf"},
        {**ROW, "name": "c", "ownership": "own", "accelerator_count": "8", "electricity_usd_per_kwh": "0.1"}])
    out = evaluate(df)
    # before: 'own' (the default) for 'lease', -9223372036854775808 for 1e19, 64 for 64.5, 0.0806 for 1e400
    assert out["ownership"].tolist()[:2] == ["lease", "own"]  # text: as given
    assert out["accelerator_count"].isna().tolist() == [True, True, False]
    assert out["electricity_usd_per_kwh"].isna().tolist() == [True, True, False]
    assert out.loc[2, "accelerator_count"] == 8 and out.loc[2, "electricity_usd_per_kwh"] == 0.1
    assert "'lease'" in out.loc[0, "error"] and "1e19" in out.loc[0, "error"] and "1e400" in out.loc[0, "error"]
    assert "64.5" in out.loc[1, "error"] and out["valid"].tolist() == [False, False, True]


def test_a_parquet_integer_name_is_echoed_as_its_text(tmp_path: Path) -> None:
    path = tmp_path / "names.parquet"
    pd.DataFrame({"name": [1, 22], "accelerator": ["h100-sxm"] * 2, "accelerator_count": [8, 8],
                  "output_tokens_per_s_per_accelerator": [1000.0, 1000.0],
                  "demand_output_tokens_per_day": [1e9, 1e9]}).to_parquet(path)
    assert evaluate(read_table(str(path)))["name"].tolist() == ["1", "22"]  # was "1.0", "22.0"


def test_a_complex_number_is_refused_not_read_as_its_real_part() -> None:
    df = pd.DataFrame({"name": ["a"], "accelerator": ["h100-sxm"], "accelerator_count": [8],
                       "output_tokens_per_s_per_accelerator": [1000.0], "pue": [complex(1.5, 2)]})
    out = evaluate(df)  # was valid with pue 1.5
    assert out["valid"].tolist() == [False] and out.loc[0, "error"] == "pue: (1.5+2j) is not a real number"


def test_a_json_key_given_twice_is_refused_as_a_repeated_csv_column_is() -> None:
    import pytest

    from economics.io.scenario_files import read_scenarios_json
    from economics.schema.validation import InputError

    with pytest.raises(InputError, match="not usable JSON: the key 'pue' appears twice in one object"):
        read_scenarios_json('[{"name": "a", "pue": 1.2, "pue": 1.9}]')  # the last won: pue 1.9


def test_minus_zero_is_echoed_and_computed_as_zero() -> None:
    import math

    out = evaluate(pd.DataFrame([{**ROW, "name": "z", "ownership": "own", "accelerator_count": "8",
                                  "electricity_usd_per_kwh": "-0"}]))
    assert math.copysign(1.0, out.loc[0, "electricity_usd_per_kwh"]) == 1.0
    assert math.copysign(1.0, out.loc[0, "energy_usd_per_hour"]) == 1.0


def test_invisible_characters_are_escaped_in_messages() -> None:
    from economics.schema.values import escape_controls, shown

    assert escape_controls("a\u200bb\u200dc\u2060d\ufeffe") == "a\\u200bb\\u200dc\\u2060d\\ufeffe"
    assert shown("r\u200b1") == "r\\u200b1"  # a name that looks like 'r1' is told apart in a message


def test_a_refused_flag_is_echoed_empty_in_every_format(tmp_path: Path) -> None:
    # a text in a true/false column made the Arrow writer fail (internal error) once refused cells were echoed
    from economics.cli import main

    path = tmp_path / "flags.csv"
    path.write_text("name,accelerator,accelerator_count,output_tokens_per_s_per_accelerator,rent_includes_energy\n"
                    "a,h100-sxm,8,1000,Llama\nb,h100-sxm,8,1000,true\n")
    for out in ("out.csv", "out.parquet", "out.json"):
        assert main(["evaluate", str(path), "-o", str(tmp_path / out)]) == 1
    back = pd.read_parquet(tmp_path / "out.parquet")
    assert back["rent_includes_energy"].isna().tolist() == [True, False]
