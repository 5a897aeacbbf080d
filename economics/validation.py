"""Column-wise validation and catalog resolution of a table of scenarios.

Bounds, types, units and defaults come from the scenario's field metadata (:data:`economics.scenario.FIELDS`), so
a CSV row and a pydantic ``Scenario`` are held to the same rules with the same words. Every problem is reported
as (row, field, value, message); valid rows go on to be computed, invalid rows are listed, none is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import catalog
from .scenario import CATALOG_FIELDS, CATALOG_ID_FIELDS, FIELDS, FieldSpec, show_value

TRUE_WORDS = frozenset({"true", "yes", "y", "1", "t"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "f"})


class InputError(ValueError):
    """The table as a whole is unusable (unknown or duplicate columns, no rows): nothing can be evaluated."""


@dataclass(frozen=True)
class Problem:
    """One invalid cell or combination: ``row`` is the 0-based position in the table."""

    row: int
    field: str
    value: Any
    message: str


class _Problems:
    def __init__(self, n: int) -> None:
        self.n = n
        self.items: list[Problem] = []
        self.bad = np.zeros(n, dtype=bool)
        self._by_field: dict[str, np.ndarray] = {}

    def flagged(self, *fields: str) -> np.ndarray:
        """Rows already reported for any of ``fields`` (so a bad cell is not also reported as missing)."""
        out = np.zeros(self.n, dtype=bool)
        for f in fields:
            if f in self._by_field:
                out |= self._by_field[f]
        return out

    def add(self, mask: np.ndarray, field: str, values: Any, message: Any) -> None:
        """Record a problem for each row where ``mask``; ``message`` is a str or a callable(value) -> str."""
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return
        self.bad[rows] = True
        self._by_field.setdefault(field, np.zeros(self.n, dtype=bool))[rows] = True
        vals = np.asarray(values, dtype=object) if not np.isscalar(values) else None
        for r in rows:
            v = values if vals is None else vals[r]
            text = message(v) if callable(message) else message
            self.items.append(Problem(int(r), field, _plain(v), text))


def _plain(v: Any) -> Any:
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


def check_columns(columns: list[str]) -> None:
    """Refuse unknown and duplicate column names, naming them (with the closest known field)."""
    known = list(FIELDS)
    seen: set[str] = set()
    dupes = sorted({c for c in columns if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
    if dupes:
        raise InputError(f"duplicate columns: {', '.join(dupes)}")
    ranged = {f + suffix for f, spec in FIELDS.items() if spec.kind in ("float", "int") for suffix in ("_low", "_high")}
    unknown = [c for c in columns if c not in FIELDS and c not in ranged]
    if unknown:
        parts = []
        for c in unknown:
            guess = catalog.closest(c, known)
            parts.append(f"'{c}'" + (f" (did you mean '{guess}'?)" if guess else ""))
        raise InputError(f"unknown columns: {', '.join(parts)}; run `python -m economics template` for the fields")


def _distinct_text(series: pd.Series, lower: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(codes, texts): each row's index into the stripped distinct texts, the last of which is '' for missing.

    Work is done once per distinct value with vectorised string methods, which keeps a million rows fast.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts = pd.Series(uniques)
    texts = (texts if pd.api.types.is_string_dtype(texts.dtype) else texts.astype("string")).str.strip()
    if lower:
        texts = texts.str.lower()
    return codes, np.append(texts.fillna("").to_numpy(dtype=object), "")


def _text_column(series: pd.Series, lower: bool = False) -> np.ndarray:
    """Stripped text per row as an object array; '' for missing."""
    codes, texts = _distinct_text(series, lower)
    return texts[codes]


def _numeric(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    """Floats with NaN where empty; records non-numbers, non-finite numbers, non-integers and out-of-bounds."""
    if pd.api.types.is_bool_dtype(series.dtype):
        values = series.to_numpy(dtype=float)
        raw: Any = values
    elif pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        raw = values
    else:
        text = _text_column(series)
        values = pd.to_numeric(pd.Series(text, dtype=object).replace("", np.nan), errors="coerce").to_numpy(
            dtype=float, na_value=np.nan)
        # 'nan' parses to NaN: a word in the cell, not an empty cell
        problems.add((text != "") & np.isnan(values), spec.name, text,
                     lambda v: f"{spec.name}: '{v}' is not a number" + (f" [{spec.unit}]" if spec.unit else ""))
        values = np.where(text == "", np.nan, values)
        raw = text
    nonfinite = np.isinf(values)
    problems.add(nonfinite, spec.name, raw, lambda v: f"{spec.name}: {show_value(v)} is not a finite number")
    values = np.where(nonfinite, np.nan, values)
    present = ~np.isnan(values)
    if spec.kind == "int":
        problems.add(present & (values != np.floor(np.where(present, values, 0))), spec.name, raw,
                     lambda v: f"{spec.name}: must be a whole number, got {show_value(v)}")
    out = np.zeros(values.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if spec.gt is not None:
            out |= present & ~(values > spec.gt)
        if spec.ge is not None:
            out |= present & ~(values >= spec.ge)
        if spec.lt is not None:
            out |= present & ~(values < spec.lt)
        if spec.le is not None:
            out |= present & ~(values <= spec.le)
    unit = f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""
    problems.add(out, spec.name, raw, lambda v: f"{spec.name}: must be {spec.bounds_text()}{unit}, got {show_value(v)}")
    return values


def _choice(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    codes, texts = _distinct_text(series, lower=True)
    ok_text = np.array([t == "" or t in spec.choices for t in texts])
    bad = ~ok_text[codes]
    if bad.any():
        problems.add(bad, spec.name, _text_column(series),
                     lambda v: f"{spec.name}: '{v}' is not one of {', '.join(spec.choices)}")
    return np.where(ok_text, texts, "")[codes]


def _bool(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=bool)
    codes, texts = _distinct_text(series, lower=True)
    is_true = np.array([t in TRUE_WORDS for t in texts])
    known = is_true | np.array([t in FALSE_WORDS or t == "" for t in texts])
    bad = ~known[codes]
    if bad.any():
        problems.add(bad, spec.name, _text_column(series), lambda v: f"{spec.name}: '{v}' is not true or false")
    return np.where(texts == "", bool(spec.default), is_true)[codes]


def validate(df: pd.DataFrame) -> tuple[dict[str, np.ndarray], list[Problem]]:
    """Typed, resolved columns for every row, and the problems found.

    Returns ``(columns, problems)``: ``columns`` maps every scenario field to an array over all rows (numbers as
    float with NaN for empty optional fields; catalog fields filled from the accelerator's entry; defaults filled
    for absent or empty cells). Rows named in ``problems`` must not be computed.
    Raises :class:`InputError` when the table itself is unusable.
    """
    check_columns([str(c) for c in df.columns])
    n = len(df)
    problems = _Problems(n)
    cols: dict[str, np.ndarray] = {}
    for name, spec in FIELDS.items():
        if name not in df.columns:
            cols[name] = _default_column(spec, n)
            continue
        series = df[name]
        if spec.kind in ("float", "int"):
            values = _numeric(series, spec, problems)
            if not spec.optional:
                values = np.where(np.isnan(values), float(spec.default), values)
            cols[name] = values
        elif spec.kind == "choice":
            values = _choice(series, spec, problems)
            cols[name] = np.where(values == "", "" if spec.default is None else spec.default, values)
        elif spec.kind == "bool":
            cols[name] = _bool(series, spec, problems)
        else:
            cols[name] = _free_text(series, spec, problems)
    _resolve_catalog(cols, problems, {str(c) for c in df.columns})
    _check_combinations(cols, problems)
    problems.items.sort(key=lambda p: p.row)
    return cols, problems.items


def _free_text(series: pd.Series, spec: FieldSpec, problems: _Problems) -> Any:
    """Free text (names, ids) as a string array, stripped, default where empty; vectorised (names are often all
    distinct, so per-value Python work would dominate a million rows)."""
    text = series.astype("string").str.strip().fillna("")
    if spec.max_length:
        too_long = (text.str.len() > spec.max_length).to_numpy(dtype=bool)
        if too_long.any():
            problems.add(too_long, spec.name, text.to_numpy(dtype=object),
                         lambda v: f"{spec.name}: longer than {spec.max_length} characters ({len(v)})")
    return text.where(text != "", "" if spec.default is None else spec.default).array


WRITTEN_LATER = frozenset({"output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator",
                           "accelerators_per_replica", "decode_output_tokens_per_s_per_accelerator",
                           "accelerator_count"})
"""Numeric columns the throughput estimate fills in place, or the result repeats: always real arrays."""


def _default_column(spec: FieldSpec, n: int) -> Any:
    if spec.kind in ("float", "int"):
        value = np.nan if spec.default is None else float(spec.default)
        if spec.name in WRITTEN_LATER:
            return np.full(n, value)
        # a read-only view of one number: an absent field costs no memory however many rows there are
        return np.broadcast_to(np.float64(value), (n,))
    if spec.kind == "bool":
        return np.full(n, bool(spec.default))
    # one text for every row: a categorical costs a byte a row and compares as fast as numbers
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8),
                                     pd.Index(["" if spec.default is None else str(spec.default)]))


def _resolve_catalog(cols: dict[str, np.ndarray], problems: _Problems, present: set[str]) -> None:
    table = catalog.accelerators()
    ids = list(table.index)
    codes_of: dict[str, np.ndarray] = {}
    for id_field in CATALOG_ID_FIELDS:
        acc_codes, acc_texts = _distinct_text(pd.Series(cols[id_field], dtype=object), lower=True)
        acc = acc_texts[acc_codes]
        optional = FIELDS[id_field].optional
        known = np.array([t in ids or (optional and t == "") for t in acc_texts])[acc_codes]
        problems.add(~known, id_field, cols[id_field], lambda v, f=id_field: catalog.unknown_id_message(f, v, ids))
        cols[id_field] = np.where(known, acc, cols[id_field])
        codes_of[id_field] = pd.Index(ids).get_indexer(acc_texts)[acc_codes]  # -1 for unknown or empty ids
    new = cols["new_accelerator"]
    new_ok = np.array([str(t) == "" or str(t) in ids for t in pd.unique(np.asarray(new, dtype=object))])
    if not new_ok.all():
        bad_new = ~np.isin(np.asarray(new, dtype=object), [*ids, ""])
        problems.add(bad_new, "new_accelerator", new, lambda v: catalog.unknown_id_message("new_accelerator", v, ids))
    models = list(catalog.models().index)
    m_codes, m_texts = _distinct_text(pd.Series(cols["model"], dtype=object), lower=True)
    m_known = np.array([t == "" or t in models for t in m_texts])[m_codes]
    problems.add(~m_known, "model", cols["model"], lambda v: catalog.unknown_id_message("model", v, models))
    cols["model"] = np.where(m_known, m_texts[m_codes], "")
    for field, cat_field in CATALOG_FIELDS.items():
        if cat_field not in table.columns:
            continue
        codes = codes_of[FIELDS[field].catalog_id or "accelerator"]
        if not (codes >= 0).any():
            continue  # no row names this kind of accelerator (e.g. no decode pool anywhere): nothing to fill
        given = cols[field]
        column = table[cat_field]
        if FIELDS[field].kind in ("float", "int"):
            lookup = np.append(column.to_numpy(dtype=float, na_value=np.nan), np.nan)  # index -1 -> NaN
            cols[field] = lookup[codes] if field not in present else np.where(np.isnan(given), lookup[codes], given)
        else:
            lookup = np.append(column.fillna("").to_numpy(dtype=object), "")
            cols[field] = np.where(given == "", lookup[codes], given)


def _check_combinations(c: dict[str, np.ndarray], problems: _Problems) -> None:
    own = c["ownership"] == "own"
    rent = ~own
    acc = c["accelerator"]

    def missing_from_catalog(field: str, need: np.ndarray, why: str) -> None:
        problems.add(need & np.isnan(c[field]) & ~problems.flagged("accelerator", field), field, acc,
                     lambda a: f"{field}: not in the catalog for '{a}' (not published); give a value ({why})")

    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool)
    dacc = c["decode_accelerator"]
    for field, need, why in (
            ("decode_accelerator_price_usd", own & dis, "needed when ownership=own"),
            ("decode_accelerator_power_kw", dis & (own | ~c["rent_includes_energy"]), "needed for energy"),
            ("decode_rent_usd_per_accelerator_hour", rent & dis, "needed when ownership=rent")):
        problems.add(need & np.isnan(c[field]) & ~problems.flagged("decode_accelerator", field), field, dacc,
                     lambda a, field=field, why=why: f"{field}: not in the catalog for '{a}' (not published); give a "
                     f"value ({why})")
    problems.add(dis & np.isnan(c["decode_output_tokens_per_s_per_accelerator"]) & (c["model"] == "")
                 & ~problems.flagged("decode_output_tokens_per_s_per_accelerator", "model"),
                 "decode_output_tokens_per_s_per_accelerator", "",
                 "decode_output_tokens_per_s_per_accelerator: give the decode pool's measured throughput per "
                 "accelerator, or a model to estimate it from")
    problems.add(dis & np.isnan(c["input_tokens_per_s_per_accelerator"]) & (c["model"] == "")
                 & ~problems.flagged("input_tokens_per_s_per_accelerator", "model"),
                 "input_tokens_per_s_per_accelerator", "",
                 "input_tokens_per_s_per_accelerator: with a decode pool, give the prefill pool's measured prefill "
                 "throughput per accelerator, or a model to estimate it from")
    missing_from_catalog("accelerator_price_usd", own, "needed when ownership=own")
    missing_from_catalog("accelerator_power_kw", own | ~c["rent_includes_energy"],
                         "needed for energy when owned, or rented without energy")
    missing_from_catalog("rent_usd_per_accelerator_hour", rent, "needed when ownership=rent")
    problems.add(~dis & np.isnan(c["output_tokens_per_s_per_accelerator"]) & (c["model"] == "")
                 & ~problems.flagged("output_tokens_per_s_per_accelerator", "model"),
                 "output_tokens_per_s_per_accelerator", "",
                 "output_tokens_per_s_per_accelerator: give a measured throughput per accelerator, or a model "
                 "(with precision and target_output_tokens_per_s_per_user) to estimate it from")
    no_demand = (np.isnan(c["demand_input_tokens_per_day"]) & np.isnan(c["demand_output_tokens_per_day"])
                 & np.isnan(c["demand_requests_per_s"]))
    given_but_bad = problems.flagged("accelerator_count", "demand_input_tokens_per_day", "demand_output_tokens_per_day",
                                     "demand_requests_per_s")
    problems.add(no_demand & np.isnan(c["accelerator_count"]) & ~given_but_bad, "accelerator_count", "",
                 "accelerator_count: give a fixed fleet (accelerator_count) or a demand "
                 "(demand_input_tokens_per_day, demand_output_tokens_per_day or demand_requests_per_s) to size it "
                 "from")
    only_input = ~np.isnan(c["demand_input_tokens_per_day"]) & np.isnan(c["demand_output_tokens_per_day"])
    problems.add(only_input & (c["input_tokens_per_request"] == 0), "demand_output_tokens_per_day", "",
                 "demand_output_tokens_per_day: needed when input_tokens_per_request is 0 (the output demand cannot "
                 "be inferred from the input demand)")
