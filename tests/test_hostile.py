"""Hostile and odd input: files and links people send around. Each case gets a clear message or is read correctly;
nothing raises an unexpected exception; every valid row gives finite outputs."""

from __future__ import annotations

import io
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import economics
from economics.scenario_files import read_scenarios_csv, to_csv_text
from economics.validation import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_semicolon_export_with_decimal_commas_is_read() -> None:
    df = read_scenarios_csv(b"name;accelerator_count;output_tokens_per_s_per_accelerator;electricity_usd_per_kwh\n"
                            b"eu export;8;1000;0,12\n")
    out = economics.evaluate(df)
    assert bool(out["valid"].iloc[0]) and float(out["electricity_usd_per_kwh"].iloc[0]) == pytest.approx(0.12)


def test_tab_separated_file_is_read() -> None:
    df = read_scenarios_csv(b"name\taccelerator_count\toutput_tokens_per_s_per_accelerator\nt\t8\t1000\n")
    assert bool(economics.evaluate(df)["valid"].iloc[0])


def test_a_million_rows_are_evaluated() -> None:
    body = "accelerator_count,output_tokens_per_s_per_accelerator\n" + "8,1000\n" * 1_000_000
    out = economics.evaluate(read_scenarios_csv(body.encode()))
    assert len(out) == 1_000_000 and bool(out["valid"].all())
    assert np.isfinite(out["cost_usd_per_m_tokens"].to_numpy(dtype=float)).all()


def test_formula_cells_come_back_neutralised_and_script_tags_stay_text() -> None:
    df = read_scenarios_csv(b'name,accelerator_count,output_tokens_per_s_per_accelerator\n'
                            b'"=cmd|\' /C calc\'!A0",8,1000\n"@SUM(1,2)",8,1000\n'
                            b'"<script>alert(1)</script>",8,1000\n')
    names = pd.read_csv(io.StringIO(to_csv_text(economics.evaluate(df))), dtype=str)["name"].tolist()
    assert names[0].startswith("'=cmd|") and names[1].startswith("'@SUM")
    assert names[2] == "<script>alert(1)</script>"  # data, not markup; the app never renders raw HTML


def test_streamlit_server_is_hardened() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] <= 50 and config["server"]["enableXsrfProtection"] is True
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"
    for path in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]:
        assert "unsafe_allow_html" not in path.read_text(encoding="utf-8"), path


# --- fuzzing: the CSV reader and the evaluation on arbitrary input -----------------------------------------

CELLS = st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(str),
                  st.integers(-10**6, 10**9).map(str), st.sampled_from(["", "nan", "inf", "-1", "1e400", "h100-sxm",
                                                                         "own", "rent", "=1+1", "0,5"]))
COLUMNS = st.lists(st.sampled_from(["name", "accelerator", "ownership", "accelerator_count", "pue",
                                    "output_tokens_per_s_per_accelerator", "electricity_usd_per_kwh",
                                    "demand_output_tokens_per_day", "model", "decode_accelerator", "bogus",
                                    "pue_low", "pue_high"]), min_size=1, max_size=6, unique=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COLUMNS, st.lists(st.lists(CELLS, min_size=6, max_size=6), min_size=0, max_size=5),
       st.sampled_from([",", ";"]))
def test_fuzz_csv_never_raises_and_valid_rows_are_finite(columns: list[str], rows: list[list[str]],
                                                         sep: str) -> None:
    lines = [sep.join(columns)] + [sep.join(c.replace(sep, " ").replace("\n", " ").replace('"', "")
                                            for c in r[:len(columns)]) for r in rows]
    try:
        df = read_scenarios_csv(("\n".join(lines) + "\n").encode())
    except InputError as exc:
        assert str(exc)  # a reason, not an empty message
        return
    result, report = economics.evaluate_with_report(df)
    assert len(result) == len(df)  # nothing dropped
    for _, bad in report.iterrows():
        assert re.match(r"^[a-z_]+: ", bad["message"]), bad["message"]  # names the field
    numeric = result.select_dtypes(include=["Float64", "Int64"])
    for col in numeric.columns:
        values = numeric[col].dropna().to_numpy(dtype=float)
        assert np.isfinite(values).all(), col


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_bytes_are_refused_with_a_reason_or_read(data: bytes) -> None:
    try:
        df = read_scenarios_csv(data)
    except InputError as exc:
        assert str(exc)
        return
    out = economics.evaluate(df)
    assert len(out) == len(df)


def test_outputs_of_valid_rows_are_finite_for_the_presets() -> None:
    rows = [s.model_dump() for s, _ in economics.preset_scenarios().values()]
    out = economics.evaluate(pd.DataFrame(rows))
    for col in out.select_dtypes(include=["Float64"]).columns:
        assert all(math.isfinite(v) for v in out[col].dropna().astype(float)), col
