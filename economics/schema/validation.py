"""Column-wise validation and catalog resolution of a table of scenarios.

Bounds, types, units and defaults come from the scenario's field metadata (:data:`economics.schema.scenario.FIELDS`), so
a CSV row and a pydantic ``Scenario`` are held to the same rules with the same words. Every problem is reported
as (row, field, value, message); valid rows go on to be computed, invalid rows are listed, none is dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from economics import catalog
from economics.schema import read_memo, user_curves, validation_hours, validation_sessions, values
from economics.schema.scenario import (
    CATALOG_FIELDS,
    CATALOG_ID_FIELDS,
    FIELDS,
    FieldSpec,
    Ownership,
    pair_problem,
    show_value,
    split_precision,
)
from economics.schema.values import FALSE_WORDS, TRUE_WORDS, FieldKind, capped, shown

_INT, _CHOICE, _BOOL = FieldKind.INT, FieldKind.CHOICE, FieldKind.BOOL  # read per field: values._FLOAT says why

__all__ = ["FALSE_WORDS", "TRUE_WORDS", "InputError", "Problem", "check_columns", "validate", "validate_one"]


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
        if type(mask) is np.ndarray and mask.shape == (1,) and not mask[0]:  # one scenario: most checks find nothing
            return
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

    def add_one(self, row: int, field: str, value: Any, message: str) -> None:
        """Record one problem at ``row``."""
        mask = np.zeros(self.n, dtype=bool)
        mask[row] = True
        self.add(mask, field, value, message)


def _plain(v: Any) -> Any:
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


MAX_LISTED = 10
"""At most this many names are listed in one message; the rest are counted."""


def known_ids(field: str) -> list[str]:
    """The catalog ids an id field may hold (:data:`economics.schema.values.ID_FIELDS`), lower-case."""
    if field == "model":
        return list(catalog.models().index)
    if field == "serving_stack":
        return ["best", *catalog.serving_stack_ids()]
    if field == "throughput_claim":
        return list(claim_ids())
    return catalog.accelerator_ids()


def names_nothing_held(field: str, value: Any) -> bool:
    """Whether a parsed, non-empty value names what neither the catalogs nor the loaded curve files hold (an id
    field's unknown id, a ``curves_sha256`` not loaded): the check every path makes after parsing.
    """
    if field in values.ID_FIELDS:
        return value not in known_ids(field)
    if field == "curves_sha256":
        return not user_curves.SHA256.fullmatch(str(value)) or user_curves.loaded(str(value)) is None
    return False


@cache
def claim_ids() -> frozenset[str]:
    """The claims a scenario's ``throughput_claim`` may name: figures per accelerator (a per-user speed is not
    one; it goes in ``measured_output_tokens_per_s_per_user`` with its concurrency).
    """
    claims = catalog.throughput_claims()
    return frozenset(claims.index[claims["metric"] == "output_tokens_per_s_per_accelerator"])


def check_columns(columns: list[str], also: Collection[str] = ()) -> None:
    """Refuse unknown and duplicate column names, naming them (with the closest known field); long lists are
    capped with a count ("and 9,990 more unknown columns"). ``also``: more columns the table may hold.
    """
    known = [*FIELDS, *also]
    seen: set[str] = set()
    dupes = sorted({c for c in columns if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
    if dupes:
        raise InputError(f"duplicate columns: {capped([shown(d) for d in dupes], 'duplicate columns', MAX_LISTED)}")
    unknown = [c for c in columns if c not in FIELDS and c not in RANGE_COLUMNS and c not in also]
    if unknown:
        parts = []
        for c in unknown[:MAX_LISTED]:
            guess = catalog.closest(c, known) if len(c) <= 100 else None
            parts.append(f"'{shown(c)}'" + (f" (did you mean '{guess}'?)" if guess else ""))
        listed = capped(parts + [""] * (len(unknown) - len(parts)), "unknown columns", MAX_LISTED)
        raise InputError(f"unknown columns: {listed}; run `python -m economics template` for the fields")


RANGE_COLUMNS: dict[str, tuple[str, str]] = {
    f + suffix: (f, suffix) for f, spec in FIELDS.items() if spec.kind.numeric
    for suffix in ("_low", "_high")}
"""``<field>_low`` / ``<field>_high`` columns (a range around a numeric field) -> (field, suffix)."""


SMALL = 16
"""Up to this many rows, distinct texts are found with a dict rather than pandas (one scenario in the app)."""


def _distinct_text(column: Any, lower: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(codes, texts): each row's index into the stripped distinct texts, the last of which is '' for missing.

    Work is done once per distinct value with vectorised string methods, which keeps a million rows fast; a few
    rows take a plain loop with the same ``str.strip`` / ``str.lower``.

    >>> codes, texts = _distinct_text(np.array([" H100-SXM", None, "h100-sxm"], dtype=object), lower=True)
    >>> codes.tolist(), texts.tolist()
    ([0, -1, 0], ['h100-sxm', ''])
    """
    cells = column.array if isinstance(column, pd.Series) else column
    if isinstance(cells, pd.Categorical) and len(cells) > SMALL:  # an absent field's default column: its few texts
        texts = pd.Series(cells.categories, dtype=object).astype("string").str.strip()
        if lower:
            texts = texts.str.lower()
        return cells.codes, np.append(texts.fillna("").to_numpy(dtype=object), "")  # its codes, a byte a row
    if len(cells) <= SMALL:
        seen: dict[str, int] = {}
        codes = np.empty(len(cells), dtype=np.intp)
        for r, v in enumerate(cells):
            if v is None or v is pd.NA or (isinstance(v, float) and v != v):
                codes[r] = -1
                continue
            t = str(v).strip()
            codes[r] = seen.setdefault(t.lower() if lower else t, len(seen))
        return codes, np.array([*seen, ""], dtype=object)
    if isinstance(cells, pd.arrays.ArrowStringArray):  # a free-text column (:func:`_free_text`): its distinct
        series: Any = cells  # texts found in Arrow, without a Python string per row
    else:
        series = column if isinstance(column, pd.Series) else pd.Series(column, dtype=object)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts = pd.Series(uniques)
    texts = (texts if pd.api.types.is_string_dtype(texts.dtype) else texts.astype("string")).str.strip()
    if lower:
        texts = texts.str.lower()
    return codes, np.append(texts.fillna("").to_numpy(dtype=object), "")


def _rows_of(codes: np.ndarray, texts: np.ndarray, like: Any) -> Any:
    """Each row's text, ``texts[codes]`` (codes of :func:`_distinct_text`): in a table of more than :data:`SMALL`
    rows (``like``, the column read, gives the rows) a categorical of the texts its rows use, a byte a row, rather
    than an object array of a million references (issue #43: the result's text column is then made from its codes,
    :func:`economics.engine.batch._text`, not by hashing a million strings); a smaller table's column (one scenario
    in the app) an object array. The engine reads either the same way (``==``, masks, ``numpy.asarray``).

    >>> column = pd.Categorical.from_codes(np.zeros(20, dtype=np.int8), pd.Index([""]))
    >>> codes, texts = _distinct_text(column)
    >>> rows = _rows_of(codes, np.where(texts == "", "best", texts), column)
    >>> type(rows).__name__, rows.categories.tolist(), rows[0]
    ('Categorical', ['best'], 'best')
    """
    if len(like) <= SMALL:
        return texts[codes]
    at, distinct = pd.factorize(texts)  # the texts may repeat (two cells alike once stripped or lower-cased)
    if len(texts) <= SMALL:
        return _few_texts(codes, at, distinct)
    used = np.bincount(at[codes], minlength=len(distinct)) > 0
    renumber = (np.cumsum(used) - 1).astype(np.int8 if len(distinct) < 127 else np.int32)
    return pd.Categorical.from_codes(renumber[at][codes], pd.Index(distinct[used], dtype=object))


def _few_texts(codes: np.ndarray, at: np.ndarray, distinct: np.ndarray) -> pd.Categorical:
    """:func:`_rows_of` past :data:`SMALL` rows for at most :data:`SMALL` texts (``at``: each text's index into
    ``distinct``): the same categorical, with the texts the rows use found by one comparison per text (a byte a
    row each where the codes are bytes) instead of taking every row's code twice, and the rows' codes copied as
    they are where they already number the texts used (an absent field's default: its zeros).
    """
    missing = bool((codes == -1).any())  # a missing cell's code, -1, reads the last text
    by_text = np.array([bool((codes == c).any()) for c in range(len(at))])
    by_text[-1] |= missing
    used = np.zeros(len(distinct), dtype=bool)
    used[at[by_text]] = True
    renumber = (np.cumsum(used) - 1).astype(np.int8 if len(distinct) < 127 else np.int32)
    table, read = renumber[at], np.flatnonzero(by_text)
    same = codes.dtype == table.dtype and not missing and np.array_equal(table[read], read)
    return pd.Categorical.from_codes(codes.copy() if same else table[codes], pd.Index(distinct[used], dtype=object))


def _text_column(series: pd.Series, lower: bool = False) -> np.ndarray:
    """Stripped text per row as an object array; '' for missing."""
    codes, texts = _distinct_text(series, lower)
    return texts[codes]


def _storage(series: pd.Series) -> str:
    """How a column's cells are held: 'bool', 'number', 'text' (strings and missing) or 'mixed' (anything else,
    parsed cell by cell with the scalar parser).
    """
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_complex_dtype(dtype):  # parsed cell by cell, so (1.5+2j) is refused, not read as 1.5
        return "mixed"
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        return "number"
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        return "text" if pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty") else "mixed"
    return "mixed"


def _plain_series(series: pd.Series) -> pd.Series:
    """A categorical column (an evaluation result fed back in) as its values, so the vectorised paths apply."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.astype(series.dtype.categories.dtype if len(series.dtype.categories) else object)
    return series


def _per_cell(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    """:func:`economics.schema.values.parse` on every cell (object array, EMPTY where empty or invalid). A cell of a
    type
    no field holds (a list, a dict, bytes) makes the table unusable: InputError naming field, row and value.
    """
    out = np.empty(len(series), dtype=object)
    unit = _unit(spec) if spec.kind.numeric else ""
    for r, v in enumerate(series.array):
        try:
            out[r] = values.parse(spec, v)
        except values.CellTypeError as exc:
            raise InputError(f"{spec.name}, row {r + 1}: {exc}") from None
        except values.ValueProblem as exc:
            word = "is not a number" in str(exc)
            problems.add_one(r, spec.name, v, f"{spec.name}: {exc}" + (unit if word else ""))
            out[r] = values.EMPTY
    return out


def _unit(spec: FieldSpec) -> str:
    return f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""


def _scalar_message(spec: FieldSpec, value: Any) -> str:
    """The scalar parser's own message for a value the vectorised path refused (the same words either way)."""
    try:
        values.parse(spec, value)
    except (values.ValueProblem, values.CellTypeError) as exc:
        text = str(exc)
        return f"{spec.name}: {text}" + (_unit(spec) if "is not a number" in text else "")
    return f"{spec.name}: {values.shown(value)} is not valid"  # pragma: no cover - the paths agree (tested)


def _numeric(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    """Floats with NaN where empty; records non-numbers, non-finite numbers, non-integers and out-of-bounds."""
    storage = _storage(series)
    if storage == "number":
        vals = series.to_numpy(dtype=float, na_value=np.nan)
        raw: Any = vals
        nonfinite = np.isinf(vals)
        problems.add(nonfinite, spec.name, raw, lambda v: f"{spec.name}: {show_value(v)} is not a finite number")
        vals = vals.copy()  # the column's own array (the frame's may be a view), emptied where not finite
        if nonfinite.any():
            vals[nonfinite] = np.nan
    elif storage == "text":
        codes, texts = _distinct_text(series)
        parsed, not_number, nonfinite = values.numbers_from_text(texts)
        raw = texts[codes]
        problems.add((not_number | nonfinite)[codes], spec.name, raw, lambda v: _scalar_message(spec, v))
        vals = parsed[codes]
    else:  # booleans and mixed cells: one by one, so a number beside a text is read as a number
        cells = _per_cell(series, spec, problems)
        raw = series.to_numpy(dtype=object)
        vals = np.array([np.nan if c is values.EMPTY else c for c in cells], dtype=float)
    present = ~np.isnan(vals)
    if spec.kind is _INT:
        problems.add(present & (vals != np.floor(np.where(present, vals, 0))), spec.name, raw,
                     lambda v: f"{spec.name}: must be a whole number, got {show_value(v)}")
    out = np.zeros(vals.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if spec.gt is not None:
            out |= present & ~(vals > spec.gt)
        if spec.ge is not None:
            out |= present & ~(vals >= spec.ge)
        if spec.lt is not None:
            out |= present & ~(vals < spec.lt)
        if spec.le is not None:
            out |= present & ~(vals <= spec.le)
    problems.add(out & ~problems.flagged(spec.name), spec.name, raw,
                 lambda v: f"{spec.name}: must be {spec.bounds_text()}{_unit(spec)}, got {show_value(v)}")
    return vals


def _by_distinct(series: pd.Series, spec: FieldSpec, problems: _Problems, empty: Any) -> np.ndarray:
    """:func:`economics.schema.values.parse` once per distinct value (choices, booleans: few distinct values), ``empty``
    where empty or invalid; mixed object columns cell by cell.
    """
    coded = _parsed_distinct(series, spec, problems, empty)
    if coded is None:
        cells = _per_cell(series, spec, problems)
        return np.array([empty if c is values.EMPTY else c for c in cells], dtype=object)
    codes, parsed = coded
    return parsed[codes]


def _parsed_distinct(series: pd.Series, spec: FieldSpec, problems: _Problems,
                     empty: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes, parsed): each row's index into its column's distinct values parsed once each (the last, ``empty``,
    for a missing cell; ``empty`` too where invalid, which is reported); None for a mixed object column (read cell
    by cell).
    """
    if _storage(series) == "mixed":
        return None
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    parsed = np.empty(len(uniques) + 1, dtype=object)
    parsed[-1] = empty
    bad = np.zeros(len(uniques) + 1, dtype=bool)
    for k, u in enumerate(uniques):
        try:
            value = values.parse(spec, u)
        except (values.ValueProblem, values.CellTypeError):
            value, bad[k] = values.EMPTY, True
        parsed[k] = empty if value is values.EMPTY else value
    if bad.any():
        problems.add(bad[codes], spec.name, series.to_numpy(dtype=object), lambda v: _scalar_message(spec, v))
    return codes, parsed


def _choice(series: pd.Series, spec: FieldSpec, problems: _Problems) -> Any:
    """A choice column, its default where empty: held as :func:`_rows_of` holds texts (a table's as a
    categorical), mixed cells read one by one.
    """
    default = "" if spec.default is None else spec.default
    coded = _parsed_distinct(series, spec, problems, "")
    if coded is None:
        chosen = _by_distinct(series, spec, problems, "")
        return np.where(chosen == "", default, chosen)
    codes, parsed = coded
    return _rows_of(codes, np.where(parsed == "", default, parsed), series)


def _bool(series: pd.Series, spec: FieldSpec, problems: _Problems) -> np.ndarray:
    if pd.api.types.is_bool_dtype(series.dtype) and not series.hasnans:
        return series.to_numpy(dtype=bool)
    return _by_distinct(series, spec, problems, bool(spec.default)).astype(bool)


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
        series = _plain_series(df[name])
        if spec.kind.numeric:
            values = _numeric(series, spec, problems)
            if not spec.optional:  # in place: _numeric's array is this column's own
                values[np.isnan(values)] = float(spec.default)
            cols[name] = values
        elif spec.kind is _CHOICE:
            cols[name] = _choice(series, spec, problems)
        elif spec.kind is _BOOL:
            cols[name] = _bool(series, spec, problems)
        else:
            cols[name] = _free_text(series, spec, problems)
    _resolve_catalog(cols, problems, {str(c) for c in df.columns})
    validation_hours.check(cols, problems.add, _distinct_text, _rows_of)
    validation_sessions.check(cols, problems)
    _check_combinations(cols, problems)
    _check_ranges(df, cols, problems)
    problems.items.sort(key=lambda p: p.row)
    return cols, problems.items


_NUMBER_FIELDS = tuple(name for name, spec in FIELDS.items() if spec.kind.numeric)


def validate_one(parsed: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], list[Problem]]:
    """:func:`validate` for one scenario whose every field is already parsed and within its bounds (a
    ``Scenario.model_dump()``: the same parser, the same bounds): one-row typed columns, catalog figures filled,
    ids and combinations checked by the same rules, without a table's per-column parsing. The checks are remembered
    per value of the fields they read (:data:`_ONE_SEEN`): a scenario alike in those takes their columns back.

    >>> from economics.schema.scenario import Scenario
    >>> cols, problems = validate_one(Scenario(accelerator_count=8).model_dump())
    >>> cols["accelerator"].tolist(), cols["accelerator_power_kw"].tolist(), [p.field for p in problems]
    (['h100-sxm'], [1.275], ['output_tokens_per_s_per_accelerator'])
    """
    cols = _one_row(parsed)
    written = _ONE_SEEN.find(parsed)
    if written is not None:  # a scenario alike in every field the checks read: their writes, and no problem
        cols.update(written)
        return cols, []
    recording, problems = _checked_one(cols)
    # a loaded curve file may come and go: a run that names one is not remembered
    if not problems and not str(dict.__getitem__(recording, "curves_sha256")[0]):
        _ONE_SEEN.keep(parsed, cols, recording)
    return dict(dict.items(recording)), problems


def _checked_one(cols: dict[str, np.ndarray]) -> tuple[read_memo.Recording, list[Problem]]:
    """The checks of one scenario's columns (:func:`_one_row`), run on a recording of them: the checked columns,
    the fields the checks read, and the problems found.
    """
    recording = read_memo.Recording(cols)
    problems = _Problems(1)
    _resolve_catalog(recording, problems, set(FIELDS))
    validation_hours.check(recording, problems.add, _distinct_text, _rows_of)
    validation_sessions.check(recording, problems)
    _check_combinations(recording, problems)
    return recording, problems.items


_ONE_SEEN = read_memo.ReadMemo()
"""The checks of :func:`validate_one` remembered per value of the fields they read (the catalogs are fixed for the
process): a price edit, which no check reads, takes the last scenario's catalog figures and canonical ids back."""


def _one_row(parsed: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """One scenario's fields as one-row typed columns, before the checks: empty texts as their defaults."""
    cols: dict[str, np.ndarray] = {}
    # the numbers in one array, each field a one-cell view of its own cell (one array instead of a hundred)
    numbers = np.array([np.nan if (x := parsed.get(name)) is None else float(x) for name in _NUMBER_FIELDS])
    at = 0
    for name, spec in FIELDS.items():
        v = parsed.get(name)
        if spec.kind.numeric:
            cols[name] = numbers[at:at + 1]
            at += 1
        elif spec.kind is _BOOL:
            cols[name] = np.array([bool(spec.default if v is None else v)])
        else:
            text = "" if v is None else str(v).strip()
            cols[name] = np.array([text or ("" if spec.default is None else str(spec.default))], dtype=object)
    return cols


def range_values(df: pd.DataFrame, problems: _Problems | None = None) -> dict[str, np.ndarray]:
    """The ``<field>_low`` / ``<field>_high`` columns of ``df`` read as numbers (NaN where empty or invalid; the
    problems are reported by :func:`validate`), in column order.
    """
    problems = problems if problems is not None else _Problems(len(df))
    return {str(c): _numeric(_plain_series(df[c]), replace(FIELDS[RANGE_COLUMNS[str(c)][0]], name=str(c)),
                             problems) for c in df.columns if str(c) in RANGE_COLUMNS}


def range_end(column: str, value: Any) -> float | None:
    """One ``<field>_low`` / ``<field>_high`` value read as a table's range cell is (the one value parser, the
    field's bounds): the number, None when empty, or :class:`economics.schema.values.ValueProblem` whose message names
    the column and the value.

    >>> range_end("pue_high", " 1.5 "), range_end("pue_low", "")
    (1.5, None)
    >>> range_end("electricity_usd_per_kwh_high", "0,5")
    Traceback (most recent call last):
    economics.schema.values.ValueProblem: electricity_usd_per_kwh_high: '0,5' is not a number [USD/kWh]
    """
    if column not in RANGE_COLUMNS:
        raise KeyError(column)
    problems = _Problems(1)
    x = float(range_values(pd.DataFrame({column: pd.Series([value], dtype=object)}), problems)[column][0])
    if problems.items:
        raise values.ValueProblem(problems.items[0].message)
    return None if np.isnan(x) else x


def _check_ranges(df: pd.DataFrame, cols: dict[str, Any], problems: _Problems) -> None:
    """Each range end a valid value of its field (same parser, same bounds), both ends given, low <= base <= high."""
    parsed = range_values(df, problems)
    nan = np.full(len(df), np.nan)
    for field in dict.fromkeys(RANGE_COLUMNS[c][0] for c in parsed):
        lo_c, hi_c = field + "_low", field + "_high"
        lo, hi = parsed.get(lo_c, nan), parsed.get(hi_c, nan)
        bad_cell = problems.flagged(lo_c, hi_c)
        for missing, other in ((lo_c, hi), (hi_c, lo)):
            gap = np.isnan(parsed.get(missing, nan)) & ~np.isnan(other) & ~bad_cell
            problems.add(gap, missing, "", f"{missing}: empty; give both {lo_c} and {hi_c} (or neither)")
        both = ~np.isnan(lo) & ~np.isnan(hi) & ~bad_cell
        base = np.asarray(cols[field], dtype=float)
        with np.errstate(invalid="ignore"):
            inverted = both & (lo > hi)
            outside = both & ~inverted & ~np.isnan(base) & ((base < lo) | (base > hi)) & ~problems.flagged(field)
        for r in np.flatnonzero(inverted):
            problems.add_one(int(r), lo_c, lo[r], f"{lo_c}: range {show_value(lo[r])}..{show_value(hi[r])} is inverted "
                             f"({lo_c} above {hi_c})")
        for r in np.flatnonzero(outside):
            problems.add_one(int(r), field, base[r], f"{field}: range {show_value(lo[r])}..{show_value(hi[r])} must "
                             f"contain the base value {show_value(base[r])}")


PLAIN_TEXT_ROWS = 1024
"""Up to this many rows, a free-text column is read with a plain loop when its cells allow (:func:`_plain_texts`):
each pandas string operation costs about a millisecond whatever the rows, the loop well under one for these."""


def _plain_texts(series: pd.Series, spec: FieldSpec) -> list[str] | None:
    """:func:`_free_text`'s texts for a table of at most :data:`PLAIN_TEXT_ROWS` rows read with a plain loop, or
    None where the vectorised path must decide: a cell that is not text or missing, a non-ASCII text, a text with
    whitespace at either end (pandas strips through Arrow, whose idea of whitespace this loop does not copy) or one
    longer than the field allows (the vectorised path reports it). Every text left is the same after either strip,
    so both paths give the same cells; the vectorised path's five string operations cost about 5 ms a column on a
    page's table, a dozen columns a table (the Throughput page validates four small tables on arrival; issue #43).
    The cells are read as Python objects in one call (``to_numpy``): iterating a column of Arrow strings makes a
    Python string of each cell, one call each (0.8 ms for 1,000 rows, the loop's own checks 0.4 ms; 0.03 ms in one
    call), and a table of a Monte Carlo's samples repeats some 24 such columns; a float column's cells come as Python
    floats, so an empty one (NaN) is the default here as the vectorised path makes it.
    """
    if len(series) > PLAIN_TEXT_ROWS:
        return None
    default = "" if spec.default is None else spec.default
    texts: list[str] = []
    for v in series.to_numpy(dtype=object):
        if v is None or v is pd.NA or (type(v) is float and v != v):
            texts.append(default)
        elif type(v) is str and v.isascii() and not (v[:1].isspace() or v[-1:].isspace()) and not (
                spec.max_length and len(v) > spec.max_length):
            texts.append(v or default)
        else:
            return None
    return texts


def _free_text(series: pd.Series, spec: FieldSpec, problems: _Problems) -> Any:
    """Free text (names, ids) as a string array, stripped, default where empty; vectorised (names are often all
    distinct, so per-value Python work would dominate a million rows), a few plain texts read with a loop
    (:func:`_plain_texts`, the same cells).
    """
    texts = _plain_texts(series, spec)
    if texts is not None:
        return pd.array(texts, dtype="string")
    if _storage(series) in ("mixed", "bool"):
        cells = _per_cell(series, spec, problems)
        series = pd.Series(["" if c is values.EMPTY else c for c in cells], dtype="string")
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
    if spec.kind.numeric:
        value = np.nan if spec.default is None else float(spec.default)
        if spec.name in WRITTEN_LATER:
            return np.full(n, value)
        # a read-only view of one number: an absent field costs no memory however many rows there are
        return np.broadcast_to(np.float64(value), (n,))
    if spec.kind is _BOOL:
        return np.full(n, bool(spec.default))
    # one text for every row: a categorical costs a byte a row and compares as fast as numbers
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8),
                                     dtype=_one_text("" if spec.default is None else str(spec.default)))


@cache
def _one_text(text: str) -> pd.CategoricalDtype:
    """The type of a column of one text (an absent field's default), made once per text: building its categories
    (an index checked for unique values) cost about 0.13 ms a column, some 3 ms of a one-row table's 25 ms.
    """
    return pd.CategoricalDtype(pd.Index([text]))


@dataclass(frozen=True)
class _Lookups:
    """The catalogs as validation reads them, built once per process (the catalogs are read once and cached)."""

    accelerators: dict[str, int]  # id -> position; position -1 (appended last) is "no such id"
    numbers: dict[str, np.ndarray]  # catalog field -> figure per position, NaN last
    texts: dict[str, np.ndarray]  # catalog field -> text per position, '' last
    models: frozenset[str]
    stacks: frozenset[str]


@cache
def _lookups() -> _Lookups:
    table = catalog.accelerators()
    numbers: dict[str, np.ndarray] = {}
    texts: dict[str, np.ndarray] = {}
    for field, cat_field in CATALOG_FIELDS.items():
        if cat_field not in table.columns:
            continue
        column = table[cat_field]
        if FIELDS[field].kind.numeric:
            numbers[cat_field] = np.append(column.to_numpy(dtype=float, na_value=np.nan), np.nan)
        else:
            texts[cat_field] = np.append(column.fillna("").to_numpy(dtype=object), "")
    return _Lookups({a: i for i, a in enumerate(table.index)}, numbers, texts, frozenset(catalog.models().index),
                    frozenset(catalog.serving_stack_ids()))


def _known(cols: dict[str, Any], field: str, known: Any, problems: _Problems, empty: str | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Check the ids in ``cols[field]`` against ``known`` (stripped, lower-case; '' allowed when ``empty`` is not
    None and replaced by it); unknown ids are reported naming the field and value, and the column is left holding
    the canonical id (the raw text where unknown). Returns (codes, ids): each row's index into the distinct ids,
    ('' where unknown, and the last for a missing cell), so callers look each distinct id up once.
    """
    codes, texts = _distinct_text(cols[field], lower=True)
    texts = np.where(texts == "", "" if empty is None else empty, texts)
    ok = np.array([t in known or (empty is not None and t == empty) for t in texts])
    problems.add(~ok[codes], field, cols[field], lambda v: catalog.unknown_id_message(field, v, known_ids(field)))
    ids = np.where(ok, texts, "")
    # every id known (the usual table): the canonical ids alone, without reading the column's cells again; a given
    # column's rows are tested (the missing cell's '' may be unknown with no row missing: texts[codes] either way)
    if ok.all() or (not isinstance(cols[field], pd.Categorical) and ok[codes].all()):
        cols[field] = _rows_of(codes, texts, cols[field])
    else:
        cols[field] = np.where(ok[codes], texts[codes], cols[field])
    return codes, ids


def _resolve_catalog(cols: dict[str, np.ndarray], problems: _Problems, present: set[str]) -> None:
    """Check every catalog id (accelerators, model, serving stack) and fill the accelerators' catalog figures where
    a row leaves them empty (a column absent from the table is filled everywhere).
    """
    look = _lookups()
    codes_of: dict[str, np.ndarray] = {}
    for id_field in CATALOG_ID_FIELDS:
        codes, ids = _known(cols, id_field, look.accelerators, problems, "" if FIELDS[id_field].optional else None)
        codes_of[id_field] = np.array([look.accelerators.get(t, -1) for t in ids], dtype=np.intp)[codes]
    _known(cols, "new_accelerator", look.accelerators, problems, "")
    given = cols["model"]
    codes, ids = _known(cols, "model", look.models, problems, "")
    cols["model"] = _rows_of(codes, ids, given)
    given = cols["serving_stack"]
    codes, ids = _known(cols, "serving_stack", look.stacks, problems, "best")
    cols["serving_stack"] = _rows_of(codes, np.where(ids == "", "best", ids), given)  # an unknown stack is
    # reported; 'best' meanwhile
    _known(cols, "throughput_claim", claim_ids(), problems, "")
    for field in ("throughput_measured_for", "curves_sha256"):  # read lower-cased, as the one value parser reads them
        codes, texts = _distinct_text(cols[field], lower=True)
        cols[field] = _rows_of(codes, texts, cols[field])
    absent = np.array([t != "" and user_curves.loaded(t) is None for t in texts])  # the hashes, each looked up once
    problems.add(absent[codes], "curves_sha256", cols["curves_sha256"], lambda v: user_curves.missing_message(str(v)))
    named = {id_field: bool((codes >= 0).any()) for id_field, codes in codes_of.items()}  # once per id field
    for field, cat_field in CATALOG_FIELDS.items():
        id_field = FIELDS[field].catalog_id or "accelerator"
        if not named[id_field]:
            continue  # no row names this kind of accelerator (e.g. no decode pool anywhere): nothing to fill
        codes = codes_of[id_field]
        given = cols[field]
        if cat_field in look.numbers:
            lookup = look.numbers[cat_field][codes]
            cols[field] = lookup if field not in present else np.where(np.isnan(given), lookup, given)
        elif cat_field in look.texts:
            empty = given == ""
            if isinstance(given, pd.Categorical) and empty.all():  # absent or all empty: the catalog's on every row
                cols[field] = _rows_of(codes, look.texts[cat_field], given)  # from the accelerators' codes
            else:
                cols[field] = np.where(empty, look.texts[cat_field][codes], given)


def _check_precisions(c: dict[str, np.ndarray], problems: _Problems) -> None:
    """Weights and compute given apart (``weight_precision``, ``compute_precision``) must be a pair the accelerator
    (and the decode accelerator) runs: data/accelerators.csv ``weight_compute_pairs``; equal ones are ``precision``'s
    case (its peak is checked by the estimate).
    """
    w_given, k_given = np.asarray(c["weight_precision"] != ""), np.asarray(c["compute_precision"] != "")
    if not (w_given | k_given).any():
        return
    w, k = split_precision(c["precision"], c["weight_precision"], c["compute_precision"])
    field = np.where(w_given, "weight_precision", "compute_precision")
    for acc_field in ("accelerator", "decode_accelerator"):
        acc = np.asarray(c[acc_field], dtype=object)
        rows = (w_given | k_given) & (w != k) & (acc != "") & ~problems.flagged(acc_field)
        for r in np.flatnonzero(rows):
            f = str(field[r])
            message = pair_problem(f, str(acc[r]), acc_field, str(w[r]), str(k[r]))
            if message:
                problems.add_one(int(r), f, c[f][r], message)


def _check_speculation(c: dict[str, np.ndarray], problems: _Problems) -> None:
    """Speculative decoding given by the scenario needs both its draft length and its acceptance: either field may
    come from the serving stack (data/serving_stacks.csv), but an acceptance without draft tokens, or draft tokens
    without an acceptance, would be silently ignored or guessed.
    """
    k, a = c["speculative_draft_tokens"], c["speculative_acceptance_rate"]
    if np.isnan(k).all() and np.isnan(a).all():
        return
    stacks = catalog.serving_stacks()
    stack = pd.Series(np.asarray(c["serving_stack"], dtype=object))
    stack_k = pd.to_numeric(stack.map(stacks["draft_tokens"]), errors="coerce").fillna(0.0).to_numpy(dtype=float)
    stack_a = pd.to_numeric(stack.map(stacks["acceptance_rate"]), errors="coerce").to_numpy(dtype=float)
    drafts = np.where(np.isnan(k), stack_k, k)
    problems.add(~np.isnan(a) & (drafts == 0) & ~problems.flagged("speculative_draft_tokens"),
                 "speculative_acceptance_rate", a,
                 "speculative_acceptance_rate: no draft tokens to accept (speculative_draft_tokens is empty or 0 and "
                 "the serving stack speculates none); give speculative_draft_tokens")
    problems.add((k > 0) & np.isnan(a) & np.isnan(stack_a) & ~problems.flagged("speculative_acceptance_rate"),
                 "speculative_acceptance_rate", "",
                 "speculative_acceptance_rate: needed with speculative_draft_tokens (the serving stack gives no "
                 "acceptance rate)")


CONTEXT_CURVE = ("measured_speed_context_tokens", "long_context_tokens", "long_context_output_tokens_per_s_per_user")
"""The fields of a measured speed-against-context curve (:data:`economics.domain.capacity.CONTEXT_STEP`): all three
or none."""


def _check_context_curve(c: dict[str, np.ndarray], problems: _Problems) -> None:
    """A speed-against-context curve is three fields together, on a measured per-user speed that becomes the
    throughput (the decode pool's with a decode_accelerator), with a second point that is longer and slower, and a
    line through the two points whose step stays positive down to no context (C_2 v_2 > C_1 v_1).
    """
    given = {f: ~np.isnan(c[f]) for f in CONTEXT_CURVE}
    if not np.logical_or.reduce(list(given.values())).any():
        return
    some = np.logical_or.reduce(list(given.values())) & ~problems.flagged(*CONTEXT_CURVE)
    for f in CONTEXT_CURVE:
        problems.add(some & ~given[f], f, "",
                     f"{f}: a speed falling with context needs all of {', '.join(CONTEXT_CURVE)}")
    whole = np.logical_and.reduce(list(given.values())) & ~problems.flagged(*CONTEXT_CURVE)
    pre = np.where(c["decode_accelerator"] != "", "decode_", "")
    speed = np.where(pre == "", c["measured_output_tokens_per_s_per_user"],
                     c["decode_measured_output_tokens_per_s_per_user"])
    converted = ~np.isnan(speed) & np.isnan(np.where(pre == "", c["output_tokens_per_s_per_accelerator"],
                                                     c["decode_output_tokens_per_s_per_accelerator"]))
    problems.add(whole & ~converted, "long_context_tokens", c["long_context_tokens"],
                 "long_context_tokens: applies to a measured per-user speed that gives the throughput "
                 "((decode_)measured_output_tokens_per_s_per_user with its users per replica, the "
                 "(decode_)output_tokens_per_s_per_accelerator empty); give one, or leave the long_context_* empty")
    c1, c2 = c["measured_speed_context_tokens"], c["long_context_tokens"]
    v2 = c["long_context_output_tokens_per_s_per_user"]
    ok = whole & converted
    problems.add(ok & (c2 <= c1), "long_context_tokens", c2,
                 "long_context_tokens: must be longer than measured_speed_context_tokens (the curve's two points)")
    with np.errstate(invalid="ignore"):
        problems.add(ok & (c2 > c1) & (v2 > speed), "long_context_output_tokens_per_s_per_user", v2,
                     "long_context_output_tokens_per_s_per_user: above the speed measured at the shorter context; a "
                     "longer context reads more KV a token, so its speed is at most that")
        problems.add(ok & (c2 > c1) & (v2 <= speed) & (c2 * v2 <= c1 * speed),
                     "long_context_output_tokens_per_s_per_user", v2,
                     "long_context_output_tokens_per_s_per_user: the line through the two points reaches a zero "
                     "decode step before no context (long context x its speed must exceed the shorter context x "
                     "its speed)")


def _check_combinations(c: dict[str, np.ndarray], problems: _Problems) -> None:
    """Fields valid alone but not together: each check in turn, in the order their messages are listed on a row
    (a check reads :meth:`_Problems.flagged` for the rows an earlier one reported).
    """
    _check_precisions(c, problems)
    _check_speculation(c, problems)
    _check_context_curve(c, problems)
    own = c["ownership"] == Ownership.OWN
    dis = np.asarray(c["decode_accelerator"] != "", dtype=bool)
    _check_decode_catalog(c, problems, own, dis)
    users = _check_per_user_speeds(c, problems)
    _check_pool_throughputs(c, problems, dis, users["decode_"])
    _check_catalog_prices(c, problems, own)
    problems.add(~dis & np.isnan(c["output_tokens_per_s_per_accelerator"]) & (c["model"] == "") & ~users[""]
                 & ~problems.flagged("output_tokens_per_s_per_accelerator", "model"),
                 "output_tokens_per_s_per_accelerator", "",
                 "output_tokens_per_s_per_accelerator: give a measured throughput per accelerator, or a model "
                 "(with precision and target_output_tokens_per_s_per_user) to estimate it from")
    _check_demand(c, problems)


def _check_decode_catalog(c: dict[str, np.ndarray], problems: _Problems, own: np.ndarray, dis: np.ndarray) -> None:
    """A decode pool's price, power and rent where the catalog publishes none for its accelerator."""
    dacc = c["decode_accelerator"]
    for field, need, why in (
            ("decode_accelerator_price_usd", own & dis, "needed when ownership=own"),
            ("decode_accelerator_power_kw", dis & (own | ~c["rent_includes_energy"]), "needed for energy"),
            ("decode_rent_usd_per_accelerator_hour", ~own & dis, "needed when ownership=rent")):
        problems.add(need & np.isnan(c[field]) & ~problems.flagged("decode_accelerator", field), field, dacc,
                     lambda a, field=field, why=why: f"{field}: not in the catalog for '{a}' (not published); give a "
                     f"value ({why})")


def _check_per_user_speeds(c: dict[str, np.ndarray], problems: _Problems) -> dict[str, np.ndarray]:
    """A measured per-user speed without the users one replica serves at it (each pool, prefix '' and 'decode_');
    returns the rows of each pool whose speed and users are both given (they give its throughput).
    """
    for pre in ("", "decode_"):  # a per-user speed is not a per-accelerator throughput without its concurrency
        problems.add(~np.isnan(c[f"{pre}measured_output_tokens_per_s_per_user"])
                     & np.isnan(c[f"{pre}concurrent_users_per_replica"])
                     & np.isnan(c[f"{pre}output_tokens_per_s_per_accelerator"]),
                     f"{pre}concurrent_users_per_replica", "",
                     f"{pre}concurrent_users_per_replica: a per-user speed ({pre}measured_output_tokens_per_s_per_user)"
                     " is not a throughput per accelerator; give the users one replica serves at that speed")
    return {pre: ~np.isnan(c[f"{pre}measured_output_tokens_per_s_per_user"])
            & ~np.isnan(c[f"{pre}concurrent_users_per_replica"]) for pre in ("", "decode_")}


def _check_pool_throughputs(c: dict[str, np.ndarray], problems: _Problems, dis: np.ndarray,
                            decode_users: np.ndarray) -> None:
    """With a decode pool, each pool's throughput (decode, prefill) given or a model to estimate it from."""
    problems.add(dis & np.isnan(c["decode_output_tokens_per_s_per_accelerator"]) & (c["model"] == "")
                 & ~decode_users
                 & ~problems.flagged("decode_output_tokens_per_s_per_accelerator", "model"),
                 "decode_output_tokens_per_s_per_accelerator", "",
                 "decode_output_tokens_per_s_per_accelerator: give the decode pool's measured throughput per "
                 "accelerator, or a model to estimate it from")
    problems.add(dis & np.isnan(c["input_tokens_per_s_per_accelerator"]) & (c["model"] == "")
                 & ~problems.flagged("input_tokens_per_s_per_accelerator", "model"),
                 "input_tokens_per_s_per_accelerator", "",
                 "input_tokens_per_s_per_accelerator: with a decode pool, give the prefill pool's measured prefill "
                 "throughput per accelerator, or a model to estimate it from")


def _check_catalog_prices(c: dict[str, np.ndarray], problems: _Problems, own: np.ndarray) -> None:
    """The accelerator's price, power and rent where the cost needs them and the catalog publishes none."""
    acc = c["accelerator"]

    def missing_from_catalog(field: str, need: np.ndarray, why: str) -> None:
        problems.add(need & np.isnan(c[field]) & ~problems.flagged("accelerator", field), field, acc,
                     lambda a: f"{field}: not in the catalog for '{a}' (not published); give a value ({why})")

    missing_from_catalog("accelerator_price_usd", own, "needed when ownership=own")
    missing_from_catalog("accelerator_power_kw", own | ~c["rent_includes_energy"],
                         "needed for energy when owned, or rented without energy")
    missing_from_catalog("rent_usd_per_accelerator_hour", ~own, "needed when ownership=rent")


def _check_demand(c: dict[str, np.ndarray], problems: _Problems) -> None:
    """A fleet size or a demand to size it from; an output demand where it cannot be inferred from the input's."""
    no_demand = (np.isnan(c["demand_input_tokens_per_day"]) & np.isnan(c["demand_output_tokens_per_day"])
                 & np.isnan(c["demand_requests_per_s"]) & (c["workload"] != "sessions"))  # sessions: their own check
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
