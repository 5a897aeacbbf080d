"""An option's years through the engine, fast: each year one scenario row, evaluated once and remembered.

A decode study evaluates every option in every year of its horizon, and an edit on the page (a price, the demand)
runs it again. The rows of one option differ only in a few fields (:data:`VARYING_FIELDS`: the demand, the fleet
size, the prices), so after one row of a shape has been checked against the single-scenario path, the others go
through one vectorised pass of the stages (:func:`_together`); groups of rows already evaluated are remembered
(:func:`evaluate_all`). :mod:`economics.studies.retrofit` builds the rows and reads the results.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd

from economics.engine.batch import MAX_COUNT, ScenarioError, _scalar, evaluate, evaluate_scenario, resolve_scenario
from economics.engine.estimate import THROUGHPUT_OUTPUTS
from economics.engine.pipeline import INTEGER_OUTPUTS, OPTIONAL_OUTPUTS, OUTPUT_UNITS, compute
from economics.schema.scenario import FIELDS
from economics.schema.values import FieldKind
from economics.studies.compare import scenario_frame

YEAR_NUMBERS = ("capital_usd_per_hour", "cooling_retrofit_usd_per_hour", "cost_usd_per_year", "revenue_usd_per_day",
                "served_input_tokens_per_day", "served_output_tokens_per_day", "output_tokens_per_s_per_user",
                "served_fraction", "accelerators", "rent_usd_per_hour")
"""Outputs of an option's years that its cash flows read, as float arrays (NaN where empty)."""


def _float(v: Any) -> float:
    return float("nan") if v is None or v is pd.NA else float(v)


@dataclass
class _Years:
    """One option's year rows evaluated, and what the study reads of them, read once per rows (the options an
    edit does not change are not read again). Evaluated one of three ways: ``records``, the single-scenario
    results of every row; ``table``, the table path's (a row is invalid); or, for rows of one shape
    (:func:`_shape`), ``passed`` (the pass's outputs, shared by the groups of one pass, where these rows start in
    them, and what their shape fixes: the first row's single-scenario result is read from them, :attr:`head`, as
    much of it as is asked for) and ``known``
    (:data:`YEAR_NUMBERS` of every row) from a vectorised pass (:func:`_by_demand`, :func:`_together`), whose table
    is built from ``rows`` only when read. Read it, never change it.
    """

    rows: list[dict[str, Any]]
    records: list[dict[str, Any]] | None = None
    table: pd.DataFrame | None = None
    passed: tuple[dict[str, np.ndarray], int, dict[str, Any]] | None = None
    known: dict[str, np.ndarray] | None = None

    @cached_property
    def head(self) -> dict[str, Any] | None:
        """The first row's single-scenario result (inputs, outputs, throughput estimate) from the vectorised pass,
        whole (:func:`_first_result`); None when the rows were evaluated otherwise.
        """
        return None if self.passed is None else _first_result(*self.passed, self.rows[0])  # out, at, fixed

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The years' table, as :func:`economics.evaluate` gives it."""
        if self.table is not None:
            return self.table
        return pd.DataFrame(self.records if self.records is not None else _exact(self.rows).frame)

    @cached_property
    def numbers(self) -> dict[str, np.ndarray]:
        """:data:`YEAR_NUMBERS` as float arrays (NaN where empty), read-only."""
        if self.known is not None:
            return self.known
        out = {c: _floats(self.records, c) if self.table is None else
               self.table[c].to_numpy(dtype=float, na_value=np.nan) for c in YEAR_NUMBERS}
        for a in out.values():
            a.setflags(write=False)
        return out

    @cached_property
    def status(self) -> tuple[bool, str]:
        """Whether every year is valid and feasible, and every reason why not (sorted, joined with '; ')."""
        f = self.table
        if self.known is not None:
            return True, ""  # every year valid and feasible, without a reason (checked by _by_demand)
        if f is None:
            records = self.records or []
            ok = all(r["valid"] for r in records) and all(r["feasible"] for r in records)
            texts = [(r["infeasible_reason"], r["error"]) for r in records]
        else:
            ok = bool(f["valid"].all()) and bool(f["feasible"].fillna(False).astype(bool).all())
            texts = list(zip(f["infeasible_reason"], f["error"], strict=True))
        return ok, "; ".join(sorted({str(x) for pair in texts for x in pair if str(x)}))

    def first(self, columns: set[str]) -> dict[str, Any]:
        """The first year's values of those ``columns`` the results have."""
        if self.table is None:
            if self.passed is not None:  # only the columns asked for (a study reads a handful of some 300)
                return _first_result(*self.passed, self.rows[0], columns)
            head = (self.records or [{}])[0]
            return {c: head[c] for c in columns if c in head}
        return {c: self.table[c].iloc[0] for c in columns if c in self.table.columns}

    def column(self, name: str) -> list[Any]:
        """One column of the years' table as a list (as :attr:`frame` has it, without building the whole table)."""
        if self.records is not None:
            return pd.Series([r[name] for r in self.records]).tolist()
        return self.frame[name].tolist()


def _floats(records: list[dict[str, Any]] | None, column: str) -> np.ndarray:
    """One result column of single-scenario results as floats, NaN where empty (None)."""
    return np.array([np.nan if r[column] is None else float(r[column]) for r in records or []], dtype=float)


def _exact(rows: list[dict[str, Any]]) -> _Years:
    """The rows through the single-scenario path (the same results as :func:`economics.evaluate`, without a table
    per call, and the throughput estimate remembered across rows and calls), or through the table path when a row
    is invalid, which then names the problem in that row (``valid`` False, ``error``).
    """
    try:
        return _Years(rows, records=[evaluate_scenario(one) for one in rows])
    except ScenarioError:
        return _Years(rows, table=evaluate(scenario_frame(rows)))


def _by_demand(rows: list[dict[str, Any]]) -> _Years | None:
    """Rows of one shape (:func:`_shape`: an option's years), the first time rows of that shape come: one
    vectorised pass of the stages over the rows (:func:`_together`, as the shape's later rows take it), and the
    first row evaluated on its own, with which everything the study reads of the pass must agree. Then the
    validated, resolved scenario and the first row's inputs and throughput estimate (the same for every row of the
    shape but for :data:`VARYING_FIELDS`) are remembered for that shape, and rows of that shape go through
    :func:`_together`, validating and estimating nothing again. None when the rows are not of one shape, or would
    not all be valid and feasible without a reason, or a grown demand is out of bounds (the single-scenario path
    then gives the rows, with their reasons and errors).
    """
    if not _one_shape(rows):
        return None
    try:
        head = evaluate_scenario(rows[0])
    except ScenarioError:  # an invalid row: the table path names the problem in each row
        return None
    if not (head["valid"] and head["feasible"] and head["infeasible_reason"] == ""):
        return None
    # the pass the shape's later rows take, so the check below holds that pass to the first row on its own
    shape = {"fixed": {c: head[c] for c in (*FIELDS, *THROUGHPUT_OUTPUTS)}, "resolved": resolve_scenario(rows[0])}
    years = _together([rows], [shape])[0]
    if years is None or years.head is None or years.head != {c: head[c] for c in years.head} or not all(
            _same(years.numbers[c][0], _float(head[c])) for c in YEAR_NUMBERS):
        return None
    _seen(_shape(rows[0])).update(shape)  # "resolved" set last
    return years


def _one_shape(rows: list[dict[str, Any]], shape: tuple[tuple[str, ...], tuple[Any, ...]] | None = None) -> bool:
    """Whether the rows differ at most in the values of :data:`VARYING_FIELDS` (not in which are given); ``shape``:
    the first row's, when known.
    """
    first = _shape(rows[0]) if shape is None else shape
    return all(_shape(r) == first for r in rows[1:])


def _shape(row: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A scenario row without the values of :data:`VARYING_FIELDS` (only which are given): its fields, and their
    values (one tuple each: a few allocations per row, not one per field).

    >>> _shape({"accelerator": "h100-sxm", "demand_output_tokens_per_day": 2e10, "price_usd_per_m_output_tokens": None})
    (('accelerator', 'demand_output_tokens_per_day', 'price_usd_per_m_output_tokens'), ('h100-sxm', True, False))
    """
    return tuple(row), tuple(v is not None if k in _VARYING else v for k, v in row.items())


@lru_cache(maxsize=256)
def _seen(shape: tuple[tuple[str, ...], tuple[Any, ...]]) -> dict[str, Any]:
    """What :func:`_by_demand` remembers of rows of this shape (empty until it has checked one)."""
    return {}


def _first_result(out: dict[str, np.ndarray], at: int, fixed: dict[str, Any], row: dict[str, Any],
                  columns: Iterable[str] | None = None) -> dict[str, Any]:
    """The first row's single-scenario result (inputs, outputs, throughput estimate; not its feasibility or
    warnings) from the vectorised pass (its outputs ``out``, row ``at``), the row's own varying fields and what its
    shape fixes (``fixed``: the
    inputs, empty varying fields included, and the throughput estimate), keyed and typed as
    :func:`economics.evaluate_scenario` gives it (None where empty, whole numbers as int); ``columns``: only those
    of them (in that order) the result has.
    """
    if columns is None:
        varying = {f: _scalar(row[f], FIELDS[f].kind is FieldKind.INT) for f in VARYING_FIELDS if row[f] is not None}
        return {**fixed, **varying, **{c: _scalar(out[c][at], c in INTEGER_OUTPUTS) for c in OUTPUT_UNITS}}
    found = {}
    for c in columns:  # an output, else a varying field the row gives, else what the shape fixes: as above
        if c in OUTPUT_UNITS:
            found[c] = _scalar(out[c][at], c in INTEGER_OUTPUTS)
        elif c in _VARYING and row[c] is not None:
            found[c] = _scalar(row[c], FIELDS[c].kind is FieldKind.INT)
        elif c in fixed:
            found[c] = fixed[c]
    return found


def _from_pass(rows: list[dict[str, Any]], out: dict[str, np.ndarray], at: int, fixed: dict[str, Any],
               ok: np.ndarray) -> _Years | None:
    """An option's years from the outputs ``out`` of a vectorised pass, in which its rows start at row ``at``, and
    what their shape fixes (:func:`_first_result`), or None when a row would be refused as the single-scenario path
    refuses it or a fleet does not fit (``ok``: :func:`_acceptable` of the pass's rows).
    """
    if not ok[at:at + len(rows)].all():
        return None
    first = _first_result(out, at, fixed, rows[0], (c for c in YEAR_NUMBERS if c not in OUTPUT_UNITS))
    return _Years(rows, passed=(out, at, fixed), known=_year_numbers(out, at, first, len(rows)))


def _acceptable(out: dict[str, np.ndarray]) -> np.ndarray:
    """Per row of a vectorised pass's outputs: its fleet fits (else its reason is needed), every required output
    could be computed and no count is too large to be real (else the single-scenario path refuses the row).
    """
    required = np.array([out[c] for c in REQUIRED_OUTPUTS], dtype=float)
    counts = np.array([out[c] for c in COUNT_OUTPUTS], dtype=float)
    return np.asarray((out["fleet_flags"] == 0) & np.isfinite(required).all(axis=0) & ~(counts > MAX_COUNT).any(axis=0))


REQUIRED_OUTPUTS = tuple(c for c in OUTPUT_UNITS if c not in OPTIONAL_OUTPUTS)
COUNT_OUTPUTS = tuple(c for c in OUTPUT_UNITS if c in INTEGER_OUTPUTS)


def _year_numbers(out: dict[str, np.ndarray], at: int, head: dict[str, Any], n: int) -> dict[str, np.ndarray]:
    """:data:`YEAR_NUMBERS` of the ``n`` rows from row ``at`` of a vectorised pass's outputs, each number as the
    single-scenario result would hold it (NaN where it is empty, whole for a count; the per-user speed is the
    throughput estimate's, which does not depend on demand), read-only.
    """
    known = {}
    for c in YEAR_NUMBERS:
        if c in OUTPUT_UNITS:
            v = np.asarray(out[c][at:at + n], dtype=float)
            known[c] = np.where(np.isfinite(v), np.trunc(v) if c in INTEGER_OUTPUTS else v, np.nan)
        else:
            known[c] = np.full(n, _float(head[c]))
        known[c].setflags(write=False)
    return known


def _same(a: float, b: float) -> bool:
    """Equal, or both empty (NaN)."""
    return a == b or (a != a and b != b)


REMEMBERED_ROWS = 256
"""How many groups of rows (an option's years) :func:`_evaluate_all` remembers (the least recently used go)."""
_REMEMBERED: OrderedDict[tuple[tuple[tuple[str, ...], tuple[Any, ...]], ...], _Years] = OrderedDict()
_LOCK = threading.Lock()


def _evaluate_all(groups: list[list[dict[str, Any]]]) -> list[_Years]:
    """:func:`economics.evaluate` of each group of scenario rows, remembered per group (a pure function of its
    rows): a study re-run with one option changed (a new decode price) evaluates that option only. The groups not
    remembered whose shape is known go through one vectorised pass together (:func:`_together`), the others
    through :func:`_by_demand` or :func:`_exact`. The remembered results themselves: read them, never change
    them.
    """
    keys = [tuple((tuple(r), tuple(r.values())) for r in rows) for rows in groups]  # the rows' items, exactly
    with _LOCK:
        found: list[_Years | None] = [_REMEMBERED.get(k) for k in keys]
        for k, years in zip(keys, found, strict=True):
            if years is not None:
                _REMEMBERED.move_to_end(k)
    todo = [i for i, years in enumerate(found) if years is None]
    shapes = {i: _shape(groups[i][0]) for i in todo}
    seen = {i: _seen(shapes[i]) for i in todo}
    known = [i for i in todo if "resolved" in seen[i] and _one_shape(groups[i], shapes[i])]  # "resolved": set last
    together = dict(zip(known, _together([groups[i] for i in known], [seen[i] for i in known]), strict=True))
    for i in todo:
        years = together.get(i) or _by_demand(groups[i]) or _exact(groups[i])
        found[i] = years
        with _LOCK:
            _REMEMBERED[keys[i]] = years
            while len(_REMEMBERED) > REMEMBERED_ROWS:
                _REMEMBERED.popitem(last=False)
    return [years for years in found if years is not None]


def _forget() -> None:
    """Forget every remembered evaluation (the next study evaluates every option, first sights included)."""
    with _LOCK:
        _REMEMBERED.clear()
    _seen.cache_clear()


def _together(groups: list[list[dict[str, Any]]], seen: list[dict[str, Any]]) -> list[_Years | None]:
    """Groups of rows of known shapes (``seen``, :func:`_by_demand`) in one vectorised pass of the stages: each
    group's remembered resolved scenario repeated once per row with the rows' demands, as
    :func:`economics.engine.batch.evaluate_variants` does for one, the groups one after the other. A group whose rows
    would not all be valid and feasible without a reason comes back None; every group does when their resolved
    scenarios do not line up (other columns or types) or a demand is out of bounds.
    """
    if not groups:
        return []
    sizes = [len(rows) for rows in groups]
    runs: list[tuple[dict[str, np.ndarray], int]] = []  # groups in a row of one shape share its resolved scenario
    for one, k in zip(seen, sizes, strict=True):
        if runs and runs[-1][0] is one["resolved"]:
            runs[-1] = (one["resolved"], runs[-1][1] + k)
        else:
            runs.append((one["resolved"], k))
    bases = [b for b, _ in runs]
    names = list(bases[0])
    if any(list(b) != names or any(b[n].dtype != bases[0][n].dtype for n in names) for b in bases[1:]):
        return [None] * len(groups)
    repeats = [k for _, k in runs]
    cols = {n: np.repeat(np.concatenate([b[n] for b in bases]), repeats) for n in names}
    for f in VARYING_FIELDS:  # the rows' values where given; else the resolved one (empty, or a catalog figure)
        given = np.array([r[f] is not None for rows in groups for r in rows])
        values = cols[f].astype(float)
        values[given] = [float(r[f]) for rows in groups for r in rows if r[f] is not None]
        if np.any(given & ~FIELDS[f].within(values)):
            return [None] * len(groups)
        cols[f] = values
    out = compute(cols)
    ok = _acceptable(out)
    starts = np.cumsum([0, *sizes[:-1]])
    return [_from_pass(rows, out, int(at), one["fixed"], ok)
            for rows, one, at in zip(groups, seen, starts, strict=True)]


DEMAND_FIELDS = ("demand_output_tokens_per_day", "demand_input_tokens_per_day", "demand_requests_per_s")
"""Every form the demand may take: growth scales whichever is given."""
VARYING_FIELDS = (*DEMAND_FIELDS, "accelerator_count", "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens",
                  "price_usd_per_m_cached_input_tokens", "decode_accelerator_price_usd")
"""What rows of one shape may differ in (:func:`_shape`), given or not alike: the demand (an option's years; an
edit), the fleet size (sized from the last year's demand), the selling prices and the decode price (edits). A
given value of these changes nothing in how a scenario resolves (catalog figures, throughput estimate): the
vectorised pass takes them per row, as :func:`economics.engine.batch.evaluate_variants` does its
:data:`~economics.engine.batch.VARIANT_FIELDS` (all but the decode price, whose given value is likewise only checked
against its bounds)."""
_VARYING = frozenset(VARYING_FIELDS)  # looked up once per field of every row (:func:`_shape`)


def _grown(row: dict[str, Any], scale: float) -> dict[str, Any]:
    """``row`` with its demand, in whatever form it is given, times ``scale``."""
    return {**row, **{d: None if row.get(d) is None else row[d] * scale for d in DEMAND_FIELDS}}
