"""The one value parser: its rules by example, and a differential property test feeding the same text through
every way in (CSV file, JSON file, link, DataFrame column as text, mixed DataFrame column, dict/Scenario) and
requiring the same verdict and the same value from each."""

from __future__ import annotations

import csv
import io
import json
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from economics.engine.batch import ScenarioError, as_scenario
from economics.io.scenario_files import read_scenarios_json
from economics.io.tables import read_table
from economics.schema import user_curves, values
from economics.schema.scenario import FIELDS
from economics.schema.validation import InputError, known_ids, validate
from economics.schema.values import FieldKind
from economics.studies.links import decode_query
from economics.studies.planner.inputs import PLAN_FIELDS


def test_every_field_kind_is_the_enum() -> None:
    # categories are enums: a kind given as a bare string ("float") would compare equal yet fail `is` and the
    # enum's properties; the scenario's, the planner's and the curve files' specs all hold FieldKind members
    specs = [*FIELDS.values(), *PLAN_FIELDS.values(), *user_curves.SPECS.values()]
    assert {type(spec.kind) for spec in specs} == {FieldKind}
    assert (FIELDS["pue"].kind, FIELDS["accelerator_count"].kind, FIELDS["rent_includes_energy"].kind,
            FIELDS["precision"].kind, FIELDS["name"].kind) == (FieldKind.FLOAT, FieldKind.INT, FieldKind.BOOL,
                                                              FieldKind.CHOICE, FieldKind.STR)
    assert [k for k in FieldKind if k.numeric] == [FieldKind.FLOAT, FieldKind.INT]
    assert [k.python_type for k in FieldKind] == [str, float, int, bool, str]


@pytest.mark.parametrize("text, expected", [
    ("12", 12.0), (" -0.5 ", -0.5), (".5", 0.5), ("5.", 5.0), ("1e6", 1e6), ("+1E-3", 1e-3), ("", values.EMPTY),
    ("   ", values.EMPTY),
])
def test_numbers_people_write_are_read(text: str, expected: Any) -> None:
    assert values.number(text) == expected


@pytest.mark.parametrize("text, words", [
    ("1_000", "'1_000' is not a number"), ("1,000", "'1,000' is not a number"),
    ("\u0663", "is not a number"),  # Arabic-Indic three
    ("\uff13", "is not a number"),  # full-width three
    ("0x10", "is not a number"), ("nan", "'nan' is not a number"), ("inf", "inf is not a finite number"),
    ("-Infinity", "-Infinity is not a finite number"), ("1e400", "1e400 is not a finite number"),
    ("1" * 101, "longer than 100 characters"),
])
def test_numbers_in_other_notations_are_refused_everywhere(text: str, words: str) -> None:
    with pytest.raises(values.ValueProblem, match=words):
        values.number(text)


def test_python_values_are_numbers_and_odd_types_are_type_errors() -> None:
    assert values.number(np.int64(3)) == 3.0 and values.number(Decimal("0.25")) == 0.25
    assert values.number(pd.NA) is values.EMPTY and values.number(None) is values.EMPTY
    assert values.number(float("nan")) is values.EMPTY
    with pytest.raises(values.ValueProblem, match="true is not a number"):
        values.number(True)
    with pytest.raises(values.ValueProblem, match="not a finite number"):
        values.number(10**400)
    for odd in ([1], {"a": 1}, b"1", (1,), pd.Timestamp("2024-01-01")):
        with pytest.raises(values.CellTypeError):
            values.number(odd)


@pytest.mark.parametrize("text, expected", [
    ("true", True), ("Yes", True), ("y", True), ("T", True), ("1", True),
    ("false", False), ("NO", False), ("n", False), ("f", False), ("0", False), (1, True), (0.0, False),
])
def test_booleans(text: Any, expected: bool) -> None:
    assert values.boolean(text) is expected


@pytest.mark.parametrize("text", ["on", "off", "2", "1.0", "maybe", 2])
def test_other_booleans_are_refused(text: Any) -> None:
    with pytest.raises(values.ValueProblem, match="is not true or false"):
        values.boolean(text)


def test_messages_escape_control_characters_and_shorten_long_values() -> None:
    assert values.shown("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert values.shown("\u202eevil") == "\\u202eevil"  # a right-to-left override cannot reorder the terminal
    assert values.shown("x" * 100_000) == "x" * 60 + "… (100,000 characters)"
    assert values.capped([str(i) for i in range(10_000)], "unknown columns") == (
        "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 9,990 more unknown columns")


# --- differential: one text, every way in, one meaning -------------------------------------------------------

DIFF_FIELDS = ["electricity_usd_per_kwh", "pue", "accelerator_count", "headroom", "max_batch_size",
               "rent_includes_energy", "ownership", "precision", "model", "serving_stack", "name"]
"""One field or more of each kind: float (with and without a default), int, bool, choice, catalog id, text."""
BASE_ROW = {"accelerator_count": "8", "output_tokens_per_s_per_accelerator": "1000", "model": "llama-3.1-8b",
            "demand_output_tokens_per_day": "1e9"}
NUMBER_LIKE = st.from_regex(r"\A[ +\-]?[0-9٣３]{0,4}[._,]?[0-9]{0,3}([eE][+\-]?[0-9]{1,3})? ?\Z")
WORDS = st.sampled_from(["", " ", "true", "FALSE", "y", "n", "t", "f", "yes", "on", "off", "1", "0", "2", "1.0",
                         "nan", "NaN", "inf", "-inf", "Infinity", "1e999", "1_000", "1,000", "0x1A", "own", " Rent",
                         "bf16", "FP8", "llama-3.1-8b", "Llama-3.1-8B ", "gpt-9", "h100-sxm", "\u0661\u0662",
                         "\uff11\uff12", "1\u00a0", "\u200b1", "x" * 101, "1" * 101, "0." + "0" * 98 + "1",
                         "\x1c1\x1c", "\t2\t", "#3", "=1+1"])
TEXTS = st.one_of(WORDS, NUMBER_LIKE, st.floats(allow_nan=False).map(repr), st.integers(-10, 10**8).map(str),
                  st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                          max_size=12))


def _outcome(value: Any, bad: bool) -> tuple[str, Any]:
    """("bad", None) or ("ok", value) with every kind of empty as None and numbers as float."""
    if bad:
        return ("bad", None)
    if value is None or value is values.EMPTY or (isinstance(value, float) and math.isnan(value)) or value == "":
        return ("ok", None)
    if isinstance(value, (bool, np.bool_)):
        return ("ok", bool(value))
    if isinstance(value, (int, float, np.number)):
        return ("ok", float(value))
    return ("ok", str(value))


def _default(field: str) -> Any:
    return FIELDS[field].default


def _from_table(df: pd.DataFrame, field: str, row: int = 0) -> tuple[str, Any]:
    cols, problems = validate(df)
    bad = any(p.field == field and p.row == row for p in problems)
    return _outcome(cols[field][row], bad)


def via_csv(field: str, text: str) -> tuple[str, Any]:
    row = {**BASE_ROW, field: text}
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # quotes cells holding \r or \n, as any CSV writer must
    writer.writerow(list(row))
    writer.writerow(list(row.values()))
    try:
        df = read_table(buffer.getvalue().encode(), fmt="csv")
    except InputError:
        return ("refused", None)
    return _from_table(df, field)


def via_json(field: str, text: str) -> tuple[str, Any]:
    return _from_table(read_scenarios_json(json.dumps([{**BASE_ROW, field: text}])), field)


def via_dataframe_text(field: str, text: str) -> tuple[str, Any]:
    row = {**BASE_ROW, field: text}
    return _from_table(pd.DataFrame({k: pd.Series([v], dtype=object) for k, v in row.items()}), field)


def via_dataframe_mixed(field: str, text: str) -> tuple[str, Any]:
    """The text in the second row of an object column whose first row holds a Python number (or bool)."""
    first: Any = True if FIELDS[field].kind is FieldKind.BOOL else 8
    row = {k: pd.Series([v, v], dtype=object) for k, v in BASE_ROW.items()}
    row[field] = pd.Series([first, text], dtype=object)
    return _from_table(pd.DataFrame(row), field, row=1)


def via_link(field: str, text: str) -> tuple[str, Any]:
    found, warnings = decode_query({field: text})
    if field not in found:
        assert any(w.startswith(field) for w in warnings), warnings  # never silent: the parameter is named
        return ("bad", None)
    return _outcome(found[field], False)


def via_dict(field: str, text: str) -> tuple[str, Any]:
    try:
        scenario = as_scenario({field: text})
    except ScenarioError:
        return ("bad", None)
    return _outcome(getattr(scenario, field), False)


def _catalog_checked(field: str, outcome: tuple[str, Any]) -> tuple[str, Any]:
    """The dict/Scenario path checks ids against the catalog when evaluated; do that here."""
    if field in values.ID_FIELDS and outcome[0] == "ok" and outcome[1] is not None:
        return outcome if outcome[1] in known_ids(field) else ("bad", None)
    return outcome


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DIFF_FIELDS), TEXTS)
@example("accelerator_count", "1_000")
@example("accelerator_count", "\u0661\u0662")
@example("rent_includes_energy", "y")
@example("rent_includes_energy", "f")
@example("pue", "")
@example("electricity_usd_per_kwh", " ")
@example("model", "Llama-3.1-8B ")
@example("name", "#3")
@example("accelerator_count", "\x1c1\x1c")
@example("max_batch_size", "1.0")
@example("serving_stack", "bogus")
@example("serving_stack", " BEST ")
def test_the_same_text_means_the_same_value_everywhere(field: str, text: str) -> None:
    outcomes = {
        "csv": via_csv(field, text),
        "json": via_json(field, text),
        "dataframe": via_dataframe_text(field, text),
        "dataframe mixed": via_dataframe_mixed(field, text),
        "link": via_link(field, text),
        "dict": _catalog_checked(field, via_dict(field, text)),
    }
    # an empty text means the field's default: the table paths fill it in, the others leave it unset
    default = _outcome(_default(field), False)
    normal = {k: (default if v == ("ok", None) and k in ("link", "dict") and default[1] is not None else v)
              for k, v in outcomes.items()}
    assert len(set(normal.values())) == 1, normal


def test_the_parser_agrees_with_the_differential_on_known_cases() -> None:
    assert via_csv("accelerator_count", "1_000") == via_link("accelerator_count", "1_000") == ("bad", None)
    assert via_csv("rent_includes_energy", "y") == via_link("rent_includes_energy", "y") == ("ok", True)
    assert via_csv("electricity_usd_per_kwh", "0.5") == via_dataframe_mixed("electricity_usd_per_kwh", "0.5") == (
        "ok", 0.5)
