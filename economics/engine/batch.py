"""Evaluate scenarios: a DataFrame column-wise, or one scenario through the very same path.

``evaluate(df)`` validates whole columns, computes the valid rows in one vectorised pass and returns one output
row per input row (nothing dropped): the inputs given (with the catalog figures and estimated throughput filled
in; absent fields that took their defaults are not repeated), the outputs, ``warnings``, ``valid`` and ``error``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy._core import multiarray as _multiarray
from pydantic import ValidationError

from economics import catalog
from economics.domain.explain import Trace
from economics.domain.revenue import PREFILL_ESTIMATE
from economics.domain.sessions import SLOWEST_CONTEXT
from economics.engine import estimate_range
from economics.engine.derivation import trace_throughput
from economics.engine.estimate import ESTIMATED_INPUTS, THROUGHPUT_OUTPUTS, fill_throughput
from economics.engine.measured import SOURCE_CURVE, SOURCE_ESTIMATE, SOURCE_GIVEN, SOURCE_USER
from economics.engine.pipeline import (
    INTEGER_OUTPUTS,
    OPTIONAL_OUTPUTS,
    OUTPUT_UNITS,
    WARNINGS,
    compute,
    fleet_reason_codes,
    fleet_reasons,
    warning_text,
    without_range_ends,
    working_columns,
)
from economics.engine.provenance import provenance_text
from economics.engine.resolve import per_user_throughput
from economics.engine.roofline import KV_FACTOR, stored_factors
from economics.engine.sessions import KV_READ_SHARE, PER_USER_SPEED, request_shape, session_rows, turn_profile
from economics.schema import known_values
from economics.schema.scenario import FIELDS, Scenario, show_value
from economics.schema.validation import Problem, validate, validate_one
from economics.schema.validation_sessions import SESSION_DEFAULTED, SESSION_ONLY, SESSION_SPREAD
from economics.schema.values import FieldKind, is_empty

_INT, _BOOL = FieldKind.INT, FieldKind.BOOL  # read per field: values._FLOAT says why

RESULT_COLUMNS = (*FIELDS, *OUTPUT_UNITS, *THROUGHPUT_OUTPUTS, "feasible", "infeasible_reason", "warnings", "valid",
                  "error")
"""Columns of an evaluation result, in order."""

REPORT_COLUMNS = ("row", "name", "field", "value", "message")


class ScenarioError(ValueError):
    """An invalid scenario; ``problems`` lists (field, value, message) and str() reads as one message."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


def evaluate(df: pd.DataFrame, *, range_ends: bool = True) -> pd.DataFrame:
    """Evaluate a table of scenarios column-wise (one row per scenario, columns = scenario fields).

    Invalid rows come back with ``valid=False``, an ``error`` naming each bad field and value, and empty outputs;
    valid rows are computed. Optional outputs that do not apply (no price given, ...) are empty (``<NA>``),
    never NaN or infinity. Raises :class:`~economics.schema.validation.InputError` for unknown or duplicate columns.
    ``range_ends``: as in :func:`evaluate_scenario`.

    >>> out = evaluate(pd.DataFrame({"accelerator_count": [8, 0], "output_tokens_per_s_per_accelerator": [1000, 1000]}))
    >>> out["valid"].tolist(), out.loc[1, "error"]
    ([True, False], 'accelerator_count: must be >= 1 and <= 10,000,000 [accelerator], got 0')
    """
    return evaluate_with_report(df, range_ends=range_ends)[0]


def evaluate_with_report(df: pd.DataFrame, *, range_ends: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`evaluate` plus the validation report (row, name, field, value, message), row 1-based."""
    with _PAGE_ADVICE.withheld(len(df) > CHUNK_ROWS):
        return _evaluate_table(df, range_ends)


class _Rows(NamedTuple):
    """A table's rows by what became of them in :func:`_evaluate_table`."""

    n: int
    bad: np.ndarray
    """Refused rows, a flag per row (validation's; the internal problems are added to it in place)."""
    ok: np.ndarray
    """The valid rows' indices."""
    feasible_ok: np.ndarray
    """Of the valid rows, those the estimate found feasible (a flag per valid row)."""
    run: np.ndarray
    """The rows computed, ``ok[feasible_ok]``."""


class _Run(NamedTuple):
    """What :func:`_run` made of a validated table: its rows, the valid rows' columns, the estimate's outputs
    (None without a valid row), whether every row gave its throughput, and the stages' outputs (None when no row
    was computed).
    """

    rows: _Rows
    sub: dict[str, Any]
    thr: dict[str, Any] | None
    all_given: bool
    outputs: dict[str, np.ndarray] | None


def _run(cols: dict[str, Any], bad: np.ndarray, range_ends: bool = True) -> _Run:
    """A validated table's rows but the refused ones (``bad``) estimated and computed: the work between the
    validation and the result's columns, in place on ``cols`` (a session's shape, the filled throughput); the
    estimate's range ends unless ``range_ends`` is False (:func:`evaluate_scenario`).
    """
    request_shape(cols)
    n = bad.size
    ok = np.flatnonzero(~bad)
    sub, thr, feasible_ok, all_given = _estimate_valid(cols, ok, n)
    if not range_ends:
        without_range_ends(sub)
    rows = _Rows(n, bad, ok, feasible_ok, ok[feasible_ok])
    outputs = _compute_feasible(sub, rows)
    if outputs is not None:
        _computed_hit_rate(cols, outputs, rows.run)
    return _Run(rows, sub, thr, all_given, outputs)


def _evaluate_table(df: pd.DataFrame, range_ends: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`evaluate_with_report`'s work: validate, estimate the throughput and compute the valid rows in one
    pass, then build the result's columns (inputs echoed, outputs, throughput, feasibility, warnings, errors) and the
    report.
    """
    cols, problems = validate(df)
    n = len(df)
    bad = np.zeros(n, dtype=bool)
    for p in problems:
        bad[p.row] = True
    rows, sub, thr, all_given, outputs = _run(cols, bad, range_ends)
    data: dict[str, Any] = {}
    empty = _EmptyColumns(df.index)
    _input_columns(data, df, cols, problems, empty)
    internal = _output_columns(data, outputs, rows, empty)
    _throughput_columns(data, thr, rows, all_given, empty)
    _feasibility_columns(data, sub, thr, outputs, rows)
    if internal:
        problems = sorted([*problems, *internal], key=lambda p: p.row)
        _refuse_internal(data, internal, bad)
    data["warnings"] = _warnings_column(outputs, rows)
    data["valid"] = ~bad
    data["error"] = _strings(n, {r: "; ".join(msgs) for r, msgs in _group(problems).items()})
    result = pd.DataFrame(data, index=df.index, copy=False)[[c for c in RESULT_COLUMNS if c in data]]
    report = pd.DataFrame(
        [(p.row + 1, cols["name"][p.row], p.field, p.value, p.message) for p in problems],
        columns=list(REPORT_COLUMNS),
    )
    return result, report


def _estimate_valid(cols: dict[str, Any], ok: np.ndarray,
                    n: int) -> tuple[dict[str, Any], dict[str, Any] | None, np.ndarray, bool]:
    """The valid rows ``ok``'s columns with their throughput filled (:func:`fill_throughput`), the throughput
    outputs (None without a valid row), which valid rows are feasible, and whether every row is valid and gives its
    throughput. The filled figures become the rows' resolved inputs in ``cols``.
    """
    sub = cols if ok.size == n else {k: v[ok] for k, v in cols.items()}
    if ok.size and per_user_throughput(sub) and ok.size != n:  # the filled figures become the rows' inputs
        for k in PER_USER_INPUTS:
            cols[k] = np.array(cols[k], dtype=float)
            cols[k][ok] = sub[k]
    if not ok.size:
        return sub, None, np.zeros(0, dtype=bool), False
    thr = fill_throughput(sub)
    if ok.size != n:  # estimated throughput becomes the row's resolved input
        for k in ESTIMATED_INPUTS:
            cols[k][ok] = sub[k]
    feasible_ok = thr["feasible"]
    _mark_throughput(sub, thr)
    all_given = ok.size == n and not (thr["throughput_source"] != SOURCE_GIVEN).any()
    if all_given:  # the estimate's other outputs are uniformly empty (_throughput_columns): free them
        thr = {k: thr[k] for k in ("output_tokens_per_s_per_user", "infeasible_reason")}
    return sub, thr, feasible_ok, all_given


def _compute_feasible(sub: dict[str, Any], rows: _Rows) -> dict[str, np.ndarray] | None:
    """The outputs of the rows computed (``rows.run``) from the valid rows' columns ``sub``; None when none is."""
    if not rows.run.size:
        return None
    if rows.run.size == rows.ok.size:
        return _compute_in_chunks(sub)
    return _compute_in_chunks({k: v[rows.feasible_ok] for k, v in sub.items()})


def _input_columns(data: dict[str, Any], df: pd.DataFrame, cols: dict[str, Any], problems: list[Problem],
                   empty: _EmptyColumns) -> None:
    """The input columns the result echoes (:func:`_echoed_inputs`), into ``data``: numbers as nullable columns,
    words as text.
    """
    echoed = _echoed_inputs(df, cols)
    refused = _refused_cells(problems)
    for name, spec in FIELDS.items():
        if name not in echoed:
            continue
        v = cols[name]
        if name in refused:  # a refused value is echoed as given (text), or empty (a number column cannot hold it)
            v = _as_given(v, spec.kind, refused[name], df[name] if name in df.columns else None)
        if spec.kind.numeric:
            data[name] = empty.or_numbers(v, spec.kind is _INT)
        else:
            data[name] = _text(v)


def _output_columns(data: dict[str, Any], outputs: dict[str, np.ndarray] | None, rows: _Rows,
                    empty: _EmptyColumns) -> list[Problem]:
    """Each numeric output as a nullable column on every row (empty where not computed), into ``data``; returns
    the internal problems: a required output not finite, a count beyond :data:`MAX_COUNT`.
    """
    internal: list[Problem] = []
    run, n = rows.run, rows.n
    too_large = _too_large(outputs, run.size)
    for name in OUTPUT_UNITS:
        if outputs is None:
            full = np.full(n, np.nan)
        else:
            vals = outputs[name]
            if name not in OPTIONAL_OUTPUTS:
                # defensive: a non-finite required output would be a bug; it is reported per row, never shown (a
                # fleet too large to count is said once, as too large, not again by every output it makes infinite)
                for r in run[~np.isfinite(vals) & ~too_large]:
                    internal.append(Problem(int(r), name, None, f"{name}: could not be computed for these inputs"))
            if name in INTEGER_OUTPUTS:
                for i in np.flatnonzero(vals > MAX_COUNT):
                    internal.append(Problem(int(run[i]), name, float(vals[i]), too_large_message(name, vals[i])))
            if run.size == n or _all_nan(vals):
                full = vals
            else:
                full = np.full(n, np.nan)
                full[run] = vals
        data[name] = empty.or_numbers(full, name in INTEGER_OUTPUTS)  # NaN or inf -> <NA>: empty in CSV and JSON
    return internal


def _throughput_columns(data: dict[str, Any], thr: dict[str, Any] | None, rows: _Rows, all_given: bool,
                        empty: _EmptyColumns) -> None:
    """The throughput step's outputs on every row (empty on the refused ones), into ``data``."""
    n = rows.n
    for name, unit in THROUGHPUT_OUTPUTS.items():
        text = unit == "text"
        if all_given and name != "output_tokens_per_s_per_user":
            # every throughput measured: the estimate's outputs are uniformly empty; build them without a full pass
            words = [SOURCE_GIVEN if name == "throughput_source" else ""]
            data[name] = (pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), pd.Index(words)) if text
                          else empty.column(integer=False))
            continue
        full = np.full(n, "" if text else np.nan, dtype=object if text else float)
        if thr is not None:
            full[rows.ok] = thr[name]
        data[name] = _text(full) if text else empty.or_numbers(full, integer=False)


def _feasibility_columns(data: dict[str, Any], sub: dict[str, Any], thr: dict[str, Any] | None,
                         outputs: dict[str, np.ndarray] | None, rows: _Rows) -> None:
    """``feasible`` (<NA> on a refused row; False where the estimate or the fleet found no way) and
    ``infeasible_reason`` (the estimate's sentence, else the fleet's), into ``data``.
    """
    n, run = rows.n, rows.run
    feasible = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    feasible[rows.ok] = rows.feasible_ok
    fleet_bad = np.flatnonzero(outputs["fleet_flags"] != 0) if outputs is not None else np.zeros(0, dtype=np.intp)
    estimate_bad = (np.flatnonzero(thr["infeasible_reason"] != "") if thr is not None
                    else np.zeros(0, dtype=np.intp))
    if not n or fleet_bad.size or estimate_bad.size:
        data["infeasible_reason"] = _reason_column(sub, thr, outputs, rows, estimate_bad, fleet_bad)
        if fleet_bad.size:
            feasible[run[fleet_bad]] = False
    else:  # every fleet feasible (the usual table): the empty reason of every row, as _text would give it
        data["infeasible_reason"] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), pd.Index([""], dtype=object))
    feasible[rows.bad] = pd.NA
    data["feasible"] = feasible


def _reason_column(sub: dict[str, Any], thr: dict[str, Any] | None, outputs: dict[str, np.ndarray] | None,
                   rows: _Rows, estimate_bad: np.ndarray, fleet_bad: np.ndarray) -> pd.Categorical:
    """``infeasible_reason`` where some row has one: the estimate's sentence on the valid rows ``estimate_bad``
    (indices into ``rows.ok``), the fleet's on the computed rows ``fleet_bad`` (indices into ``rows.run``).
    """
    # each row's index into the sentences, '' first: the column _text would make of the rows' texts
    reason, texts = np.zeros(rows.n, dtype=np.intp), [""]
    if estimate_bad.size:
        codes, uniques = pd.factorize(thr["infeasible_reason"][estimate_bad])  # type: ignore[index]
        reason[rows.ok[estimate_bad]] = codes + len(texts)
        texts += list(uniques)
    if fleet_bad.size:
        run_sub = sub if rows.run.size == rows.ok.size else {k: v[rows.feasible_ok] for k, v in sub.items()}
        codes, sentences = fleet_reason_codes(run_sub, outputs, fleet_bad)  # type: ignore[arg-type]
        reason[rows.run[fleet_bad]] = codes + len(texts)
        texts += sentences
    return _coded_text(reason, texts)


def _refuse_internal(data: dict[str, Any], internal: list[Problem], bad: np.ndarray) -> None:
    """Rows with an internal problem become refused (``bad``, in place) with every output empty."""
    for p in internal:
        bad[p.row] = True
        for name in OUTPUT_UNITS:
            if not isinstance(data[name], pd.Series):  # a shared empty column is empty on that row already
                data[name][p.row] = pd.NA


def _warnings_column(outputs: dict[str, np.ndarray] | None, rows: _Rows) -> pd.Categorical[str]:
    """Each computed row's warnings as one text (none on a refused row), from the flags the stages set."""
    flags = np.zeros(rows.n, dtype=np.int64)
    if outputs is not None:
        flags[rows.run] = outputs["warning_flags"]
    flags[rows.bad] = 0
    distinct, codes = _flag_sets(flags)
    return pd.Categorical.from_codes(codes, pd.Index([warning_text(int(f)) for f in distinct]))


FLAG_SORT_ROWS = 1 << 14
"""Up to this many rows, the distinct warning-flag sets are found by sorting the flags; beyond, through a lookup table
of every set (``1 << len(WARNINGS)`` entries, 16 MB: about 5 ms a call, most of a small table's time)."""


def _flag_sets(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct warning-flag sets of the rows, ascending, and each row's index into them.

    >>> [a.tolist() for a in _flag_sets(np.array([4, 0, 4, 1]))]
    [[0, 1, 4], [2, 0, 2, 1]]
    """
    if flags.size <= FLAG_SORT_ROWS:
        distinct, codes = np.unique(flags, return_inverse=True)
        return distinct, codes.reshape(flags.shape)
    return _flag_sets_by_lookup(flags)


def _flag_sets_by_lookup(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_flag_sets` for many rows: few distinct flag sets, so a lookup table beats sorting a million rows."""
    distinct = np.flatnonzero(np.bincount(flags, minlength=1 << len(WARNINGS)))
    lookup = np.zeros(1 << len(WARNINGS), dtype=np.int64)
    lookup[distinct] = np.arange(distinct.size)
    return distinct, lookup[flags]


ALWAYS_ECHOED = frozenset({"name", "accelerator", "ownership", "accelerator_count", "model", *ESTIMATED_INPUTS,
                           "decode_output_tokens_per_s_per_accelerator"})


def _refused_cells(problems: list[Problem]) -> dict[str, list[int]]:
    """The rows of each field whose value was refused (echoed as given, :func:`_as_given`)."""
    out: dict[str, list[int]] = {}
    for p in problems:
        if p.field in FIELDS:
            out.setdefault(p.field, []).append(p.row)
    return out


def _as_given(values: Any, kind: FieldKind, rows: list[int], given: pd.Series | None) -> np.ndarray:
    """``values`` with the refused ``rows`` as given: a text cell's text, a number or flag empty (the error says)."""
    numeric = kind.numeric
    out = np.array(values, dtype=float if numeric else object)
    for r in rows:
        cell = None if given is None else given.iloc[r]
        out[r] = np.nan if numeric else None if kind is _BOOL else ("" if is_empty(cell) else str(cell))
    return out


def _echoed_inputs(df: pd.DataFrame, cols: dict[str, Any]) -> set[str]:
    """Input columns repeated in the result: those given, the identity and throughput fields, and the catalog
    figures filled for the accelerators named. An absent field that took its default is not repeated (the template
    and ``python -m economics fields`` list the defaults; ``explain`` shows every input with its origin), which
    keeps a million-row result lean.
    """
    given = {str(c) for c in df.columns}
    any_decode = bool(np.asarray(cols["decode_accelerator"] != "", dtype=bool).any())
    out = set(given) | ALWAYS_ECHOED
    for name, spec in FIELDS.items():
        if spec.catalog_field and (spec.catalog_id != "decode_accelerator" or any_decode):
            out.add(name)
    if any_decode:
        out |= {"decode_accelerator", "decode_accelerator_count"}
    return out


MAX_COUNT = float(FIELDS["accelerator_count"].le or 1e7)
"""The most accelerators, systems or racks a result may hold: the schema's bound on a fleet."""


def too_large_message(name: str, value: float) -> str:
    """The error of a count beyond :data:`MAX_COUNT` (counts stay floats until here, so they never overflow; one
    past the largest float is said in words).

    >>> too_large_message("accelerators", 1.2e25)[:70]
    'accelerators: the demand needs 1.2e+25, more than the 10,000,000 a fle'
    >>> too_large_message("accelerators", float("inf"))[:45]
    'accelerators: the demand needs over 1.8e+308,'
    """
    needs = f"{value:.3g}" if np.isfinite(value) else f"over {np.finfo(float).max:.2g}"
    return (f"{name}: the demand needs {needs}, more than the {MAX_COUNT:,.0f} a fleet may hold; lower the demand "
            "or raise the throughput")


def _too_large(outputs: dict[str, np.ndarray] | None, rows: int) -> np.ndarray:
    """Which computed rows hold a count beyond :data:`MAX_COUNT` (refused as too large by name)."""
    out = np.zeros(rows, dtype=bool)
    for name in INTEGER_OUTPUTS if outputs is not None else ():
        with np.errstate(invalid="ignore"):
            out |= np.asarray(outputs[name], dtype=float) > MAX_COUNT  # type: ignore[index]
    return out


PER_USER_INPUTS = ("output_tokens_per_s_per_accelerator", "accelerators_per_replica",
                   "decode_output_tokens_per_s_per_accelerator", "decode_accelerators_per_replica")
"""Input columns :func:`economics.engine.resolve.per_user_throughput` may fill."""

CHUNK_ROWS = 1 << 14
"""Rows of one slice: its temporaries (128 kB a column) stay in memory the allocator reuses; on two threads a million
rows faulted in 137,000 pages at 16,384 rows a slice against 145,000 at 32,768 and 162,000 at 65,536, and peaked
at 1.23-1.28 GB against 1.34 GB (the stages' own CPU was within noise of each other; docs/speed.md). Those were
huge pages; on the small pages :class:`_PageAdvice` now gives them, 32,768 and 65,536 rows took 3-8 % less CPU for
50-145 MB more at the peak: 16,384 kept."""
THREADS = 2
"""Slices computed at once by :func:`_compute_in_chunks` (numpy releases the GIL in its loops and the kernel's page
faults on fresh output memory run on both cores: docs/speed.md measures 1 against 2); 1 computes them in turn."""


SMALL_PAGES = True
"""Whether :func:`evaluate` withholds numpy's huge-page advice while it evaluates a table of more than
:data:`CHUNK_ROWS` rows (:class:`_PageAdvice`); False leaves numpy's setting alone."""

_set_huge_page_advice: Callable[[bool], bool] | None = getattr(_multiarray, "_set_madvise_hugepage", None)
"""numpy's switch for ``madvise(MADV_HUGEPAGE)`` on arrays of 4 MB and more (``NUMPY_MADVISE_HUGEPAGE``), which
returns its previous setting; None on a numpy without it."""


class _PageAdvice:
    """numpy's advice to back each array of 4 MB or more with huge pages, withheld while a large table is evaluated.

    A million rows write about 700 MB of fresh columns once each. With the advice the kernel finds and zeroes 2 MB
    pages on the first write to each (compacting memory for them where it must); without it, 4 kB pages: twice the
    page faults, each far cheaper. On the 2-core development machine (a virtual machine) the million rows' system
    time fell from 1.0-1.6 s to 0.5-0.8 s and their CPU by a third (docs/speed.md). Concurrent evaluations are
    counted: numpy's own setting is put back when the last one ends. The numbers computed are the same either way.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.before = True

    @contextmanager
    def withheld(self, large: bool) -> Iterator[None]:
        """Within this block, no huge-page advice (when ``large``, :data:`SMALL_PAGES` and numpy has the switch)."""
        switch = _set_huge_page_advice if large and SMALL_PAGES else None
        if switch is None:
            yield
            return
        with self.lock:
            if self.users == 0:
                self.before = switch(False)
            self.users += 1
        try:
            yield
        finally:
            with self.lock:
                self.users -= 1
                if self.users == 0:
                    switch(self.before)


_PAGE_ADVICE = _PageAdvice()


def _compute_in_chunks(cols: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`compute` over slices of rows written into one output array per column: the same numbers, but the
    temporaries of each slice fit in memory the allocator reuses, which keeps a million rows fast. The slices run
    on :data:`THREADS` threads, each writing its rows of the output arrays (disjoint rows: no two threads write
    the same cell). An output empty (NaN) on every row (a session's outputs in a table without sessions, a decode
    pool's without one) takes no memory: it is one NaN seen as ``n`` rows (:func:`_nan_rows`), which the result
    holds as a shared empty column.
    """
    n = len(cols["accelerator"])
    if n <= CHUNK_ROWS:
        return {k: _nan_rows(n) if _all_nan(v) else v for k, v in compute(cols).items()}
    blocks = _Blocks(n)

    def run(start: int) -> None:
        stop = min(start + CHUNK_ROWS, n)
        blocks.write(start, compute({name: column[start:stop] for name, column in cols.items()}, shared_empty=True))

    starts = range(0, n, CHUNK_ROWS)
    if THREADS > 1:
        with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="evaluate") as pool:
            list(pool.map(run, starts))  # list(): a slice's exception is raised here
    else:
        for start in starts:
            run(start)
    return blocks.columns(starts)


class _Blocks:
    """The output columns of :func:`_compute_in_chunks`, written slice by slice in any order, with the same cells
    as writing the slices in turn: an output is allocated when a slice first holds a number in it (its dtype, one
    per output, is that slice's); a slice whose cells are all NaN is written at the end, as ``numpy.nan`` before
    the first slice with a number and as its own cells after it (the bits a one-thread run wrote).
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.out: dict[str, np.ndarray] = {}
        self.keys: dict[int, list[str]] = {}  # each slice's outputs, in the order compute gave them
        self.written: dict[str, set[int]] = {}  # the slices with a number in each output
        self.empty: dict[str, dict[int, np.ndarray]] = {}  # the all-NaN slices of each output
        self.lock = threading.Lock()

    def write(self, start: int, part: dict[str, np.ndarray]) -> None:
        """One slice's outputs (rows ``start`` on), each written into its output array outside the lock."""
        for k, v in part.items():
            with self.lock:
                if _all_nan(v):
                    self.empty.setdefault(k, {})[start] = v
                    continue
                if k not in self.out:
                    self.out[k] = np.empty(self.n, dtype=v.dtype)
                self.written.setdefault(k, set()).add(start)
                column = self.out[k]
            column[start:start + v.size] = v
        with self.lock:
            self.keys[start] = list(part)

    def columns(self, starts: range) -> dict[str, np.ndarray]:
        """Every output, in the order the first slice gave them: an all-NaN output as :func:`_nan_rows`, any other
        with its all-NaN slices filled in.
        """
        out: dict[str, np.ndarray] = {}
        for k in dict.fromkeys(k for start in starts for k in self.keys[start]):
            if k not in self.out:
                out[k] = _nan_rows(self.n)
                continue
            column, written, empty = self.out[k], self.written[k], self.empty.get(k, {})
            first = min(written)
            for start in starts:
                if start not in written:
                    stop = min(start + starts.step, self.n)
                    column[start:stop] = np.nan if start < first or start not in empty else empty[start]
            out[k] = column
        return out


def _nan_rows(n: int) -> np.ndarray:
    """NaN on ``n`` rows as a read-only view of one number (no memory, however many rows)."""
    return np.broadcast_to(np.float64(np.nan), (n,))


def _all_nan(values: Any) -> bool:
    """Whether ``values`` is a float array of NaN only (the first cell tested first: a column with a number there
    costs no pass).
    """
    return (type(values) is np.ndarray and values.dtype.kind == "f" and values.size > 0
            and bool(np.isnan(values.flat[0])) and (values.strides == (0,) or bool(np.isnan(values).all())))


class _EmptyColumns:
    """The empty numeric columns of one result: every column empty on all rows (the outputs of features a table
    does not use, fields it leaves empty) is a view of one column of each dtype, which pandas copies on the first
    write to it (copy-on-write), so a million rows hold one, not sixty, columns of ``<NA>``.
    """

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self._made: dict[bool, pd.Series] = {}

    def column(self, integer: bool) -> pd.Series:
        """The empty Int64 (``integer``) or Float64 column."""
        if integer not in self._made:
            n = len(self.index)
            array = (pd.arrays.IntegerArray(np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)) if integer
                     else pd.arrays.FloatingArray(np.full(n, np.nan), np.ones(n, dtype=bool)))
            self._made[integer] = pd.Series(array, index=self.index, copy=False)
        return self._made[integer]

    def or_numbers(self, values: Any, integer: bool) -> Any:
        """``values`` as a nullable column (:func:`_finite`; Int64 for ``integer``), or the shared empty column
        when every value is NaN.
        """
        if _all_nan(values):
            return self.column(integer)
        array, empty = _finite(values)
        if not integer:
            return pd.arrays.FloatingArray(array, empty)
        # what FloatingArray.astype("Int64") gives, without its copy of the mask: numpy's cast of the same floats
        # (NaN and infinity cast as numpy casts them, under the mask)
        with np.errstate(invalid="ignore"):
            return pd.arrays.IntegerArray(array.astype(np.int64), empty)


def _text(values: Any) -> Any:
    """Text column for the result: categorical when it is an object array (few distinct values, and much faster
    to build than a string array for a million rows), its categories in order of first appearance; a categorical
    (a table's text column as validation holds it) renumbered to that order from its codes, the same column as its
    texts' object array would give; string arrays pass through.
    """
    if isinstance(values, np.ndarray) and values.dtype == object:
        codes, uniques = pd.factorize(values)
        return pd.Categorical.from_codes(codes, pd.Index(uniques, dtype=object))
    if isinstance(values, pd.Categorical) and values.size and not (values.codes == -1).any():
        return _coded_text(values.codes, list(values.categories))  # validation's text column: from its codes
    return values


FEW_CATEGORIES = 16
"""Up to this many texts, :func:`_coded_text` finds their first rows by one comparison each."""


def _coded_text(codes: np.ndarray, texts: list[str]) -> pd.Categorical:
    """``_text(np.array(texts, dtype=object)[codes])`` without the object array: the same categories (the texts
    in order of first appearance, each once) and codes, found from the integer codes (a million rows are hashed as
    integers, not as Python strings).

    >>> _coded_text(np.array([2, 0, 2, 1]), ["", "b", "a"]).categories.tolist()
    ['a', '', 'b']
    """
    at, distinct = pd.factorize(np.array(texts, dtype=object))  # texts alike become one
    # first appearance, as factorizing the rows' texts numbers them; for a few texts by one comparison a text (a
    # byte a row) rather than hashing every row
    few = len(texts) <= FEW_CATEGORIES and len(codes) > 0
    order = _first_appearance(codes, at, len(distinct)) if few else pd.unique(at[codes])
    categories = pd.Index(distinct[order], dtype=object)
    if np.array_equal(at, np.arange(len(texts))) and np.array_equal(order, np.arange(len(texts))):
        return pd.Categorical.from_codes(codes.copy(), categories)  # the codes number the texts in that order
    renumber = np.zeros(len(distinct), dtype=np.intp)
    renumber[order] = np.arange(len(order))
    return pd.Categorical.from_codes(renumber[at][codes], categories)


def _first_appearance(codes: np.ndarray, at: np.ndarray, k: int) -> np.ndarray:
    """The distinct texts (``at``: each code's) that ``codes`` use, in order of their first row."""
    first = np.full(k, len(codes), dtype=np.int64)
    for c in range(len(at)):
        rows = codes == c
        row = int(rows.argmax())
        if rows[row]:
            first[at[c]] = min(first[at[c]], row)
    used = np.flatnonzero(first < len(codes))
    return used[np.argsort(first[used], kind="stable")]


def _strings(n: int, texts: dict[int, str]) -> Any:
    """A text column of ``n`` rows, empty but for ``texts`` (row -> text), as the ``str`` column pandas makes of
    an object array of those texts, built from its Arrow buffers (an object array of a million empty texts took
    longer to convert than to write). No rows: the empty object array, which pandas keeps as it is.
    """
    if not n:
        return np.zeros(0, dtype=object)
    rows = sorted(texts)
    encoded = [texts[r].encode() for r in rows]
    lengths = np.zeros(n + 1, dtype=np.int64)
    lengths[np.array(rows, dtype=np.intp) + 1] = [len(b) for b in encoded]
    offsets = np.cumsum(lengths)
    array = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)))
    str_dtype = pd.StringDtype("pyarrow", na_value=np.nan)  # the dtype pandas gives an object array of texts
    return pd.arrays.ArrowStringArray(pa.chunked_array([array]), dtype=str_dtype)  # type: ignore[call-arg]  # stubs


def _finite(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values and mask of a Float64 column with <NA> where the value is NaN or infinite (never shown as a
    number), -0 as 0: ``values`` as floats (shared, changed in place), the mask True where empty.
    """
    array = np.asarray(values, dtype=float)
    if not array.flags.writeable:  # a broadcast default: the result gets its own, writable copy
        array = array.copy()
    np.add(array, 0.0, out=array)  # -0.0 + 0.0 is 0.0 (a given '-0' is not echoed, nor a cost written, as -0)
    empty = np.isfinite(array)
    return array, np.logical_not(empty, out=empty)  # one mask array, not two


def _group(problems: list[Problem]) -> dict[int, list[str]]:
    grouped: dict[int, list[str]] = {}
    for p in problems:
        grouped.setdefault(p.row, []).append(p.message)
    return grouped


def as_scenario(scenario: Scenario | dict[str, Any]) -> Scenario:
    """A validated Scenario; pydantic errors become a ScenarioError naming each field and value."""
    if isinstance(scenario, Scenario):
        return scenario
    plain = type(scenario) is dict
    if plain and (known := known_values.scenario_of(scenario)) is not None:
        return known  # every value read before: pydantic's model without its 134 validators again
    try:
        parsed = Scenario.model_validate(scenario)
    except ValidationError as exc:
        raise ScenarioError([_pydantic_problem(e) for e in exc.errors()]) from None
    if plain:
        known_values.remember(scenario, parsed)
    return parsed


def _pydantic_problem(e: Any) -> Problem:
    field = ".".join(str(x) for x in e.get("loc", ())) or "scenario"
    value = e.get("input")
    spec = FIELDS.get(field)
    if e.get("type") == "extra_forbidden":
        guess = catalog.closest(field, list(FIELDS))
        return Problem(0, field, value, f"{field}: unknown field" + (f"; did you mean '{guess}'?" if guess else ""))
    if spec is not None and spec.kind.numeric and e.get("type") in (
            "greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        unit = f" [{spec.unit}]" if spec.unit and spec.unit != "-" else ""
        return Problem(0, field, value, f"{field}: must be {spec.bounds_text()}{unit}, got {show_value(value)}")
    msg = str(e.get("msg", "invalid"))
    # the shared value parser's own messages already say what they got ('must be a whole number, got 1.5')
    return Problem(0, field, value, f"{field}: {msg}" if ", got " in msg else f"{field}: {msg}, got {value!r}")


def evaluate_scenario(scenario: Scenario | dict[str, Any], *, range_ends: bool = True) -> dict[str, Any]:
    """Evaluate one scenario (a Scenario or a dict of its fields): the same validation rules, throughput
    resolution and stages as :func:`evaluate`, on one-row columns without a table (about a millisecond, the parse
    and checks of values seen before remembered: ``python bench/batch.py`` prints it, docs/speed.md has the
    measurements).

    ``range_ends`` False: for a caller that reads none of an estimate's range ends (the ``_low`` and ``_high``
    outputs, then None as on a measured row; the planner's rates): the stages run on the scenario alone, not on it
    and both ends (:func:`economics.engine.pipeline.without_range_ends`). Every other output is the same, and the
    throughput's own range (``*_p10``, ``*_p90``, the basis) is still given. An end's count beyond
    :data:`MAX_COUNT` then refuses nothing.

    Returns the resolved inputs and outputs as a dict, keyed as :func:`evaluate`'s columns (missing optional
    outputs as None). Raises :class:`ScenarioError` with every problem when the scenario is invalid.

    >>> r = evaluate_scenario({"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000,
    ...                        "demand_output_tokens_per_day": 345.6e6})
    >>> r["accelerators"], round(r["utilization"], 3), r["valid"]
    (8, 0.5, True)
    """
    cols = _validated(as_scenario(scenario))
    thr = _throughput(cols)
    if not range_ends:
        without_range_ends(cols)
    outputs = compute(cols) if thr["feasible"][0] else None
    return _result_row(cols, thr, outputs)


def _validated(scenario: Scenario) -> dict[str, np.ndarray]:
    # the model's own field values: what model_dump() copies out (enums stored as their words, use_enum_values)
    cols, problems = validate_one(scenario.__dict__)
    if problems:
        raise ScenarioError(problems)
    request_shape(cols)
    return cols


def _scalar(value: Any, integer: bool) -> Any:
    """A number of a one-row result: None when empty or not finite, int for counts.

    >>> _scalar(float("inf"), False), _scalar(16.0, True), _scalar(2.5, False)
    (None, 16, 2.5)
    """
    x = float(value)
    if not math.isfinite(x):  # math, not numpy: the same test on a float, without an array per call
        return None
    return int(x) if integer else x


def _computed_hit_rate(cols: dict[str, Any], outputs: dict[str, np.ndarray], run: np.ndarray) -> None:
    """A session row's prefix cache hit rate is the computed ``kv_hit_rate``: it becomes the row's resolved input
    (as an estimated throughput does), in place, on the computed rows ``run``.
    """
    rows = session_rows(cols)  # compared where it is held (an absent workload: a categorical, no object copy)
    if rows.size != run.size:
        rows = rows[run]
    if rows.any():
        cols["prefix_cache_hit_rate"] = np.array(cols["prefix_cache_hit_rate"], dtype=float)
        cols["prefix_cache_hit_rate"][run[rows]] = outputs["kv_hit_rate"][rows]


_OUTPUT_KINDS = tuple((name, name in INTEGER_OUTPUTS, name in OPTIONAL_OUTPUTS) for name in OUTPUT_UNITS)
"""Each numeric output with whether it is a count and whether it may be empty, looked up once."""
_FIELD_KINDS: tuple[tuple[str, type], ...] = tuple(
    (name, spec.kind.python_type) for name, spec in FIELDS.items())
"""Each input field with the Python type of its result cell, looked up once."""
_NUMBER_INPUTS = tuple(name for name, kind in _FIELD_KINDS if kind is float or kind is int)
"""The numeric input fields, in :data:`_FIELD_KINDS`' order."""


def _result_row(cols: dict[str, Any], thr: dict[str, Any], outputs: dict[str, np.ndarray] | None) -> dict[str, Any]:
    """One scenario's result as :func:`evaluate` would give its row (an internal problem raises)."""
    if outputs is not None:
        _computed_hit_rate(cols, outputs, np.array([0]))
    row: dict[str, Any] = {}
    # the numeric inputs' cells as Python floats in one pass (float() of each cell, as below it was read one by one)
    numbers = iter(np.concatenate([cols[name] for name in _NUMBER_INPUTS], dtype=float).tolist())
    for name, kind in _FIELD_KINDS:  # :func:`_scalar` inlined for the numbers
        if kind is float or kind is int:
            x = next(numbers)
            row[name] = None if not math.isfinite(x) else int(x) if kind is int else x
        else:
            row[name] = kind(cols[name][0])
    internal: list[Problem] = []
    # every output's one number as a Python float, read in one pass (float() of each cell, as the table reads them)
    numbers = [math.nan] * len(_OUTPUT_KINDS) if outputs is None else np.concatenate(
        [outputs[name] for name, _, _ in _OUTPUT_KINDS], dtype=float).tolist()
    if len(numbers) != len(_OUTPUT_KINDS):  # an output not of one row: impossible, said rather than misread
        raise ValueError(f"one scenario gave {len(numbers)} output cells for {len(_OUTPUT_KINDS)} outputs")
    too_large = any(integer and v > MAX_COUNT for (_, integer, _), v in zip(_OUTPUT_KINDS, numbers, strict=True))
    for (name, integer, optional), v in zip(_OUTPUT_KINDS, numbers, strict=True):  # a finite number, else None
        finite = math.isfinite(v)
        if not finite and outputs is not None and not optional and not too_large:
            internal.append(Problem(0, name, None, f"{name}: could not be computed for these inputs"))
        if integer and v > MAX_COUNT:
            internal.append(Problem(0, name, v, too_large_message(name, v)))
        row[name] = None if not finite else int(v) if integer else v
    if internal:
        raise ScenarioError(internal)
    for name, unit in THROUGHPUT_OUTPUTS.items():
        row[name] = str(thr[name][0]) if unit == "text" else _scalar(thr[name][0], False)
    feasible, reason = bool(thr["feasible"][0]), str(thr["infeasible_reason"][0])
    if outputs is not None and outputs["fleet_flags"][0] != 0:
        feasible, reason = False, fleet_reasons(cols, outputs, np.array([0]))[0]
    row["feasible"], row["infeasible_reason"] = feasible, reason
    row["warnings"] = warning_text(int(outputs["warning_flags"][0]) if outputs is not None else 0)
    row["valid"], row["error"] = True, ""
    return row


def explain_scenario(scenario: Scenario | dict[str, Any]) -> Trace:
    """The derivation of every output of one scenario, recorded by the computation itself."""
    cols = _validated(as_scenario(scenario))
    trace = Trace(0)
    _resolve_one(cols, trace)
    compute(cols, trace)
    return trace


def explain_row(df: pd.DataFrame, row: int) -> Trace:
    """The derivation of row ``row`` (0-based position) of a table of scenarios."""
    one = df.iloc[[row]].reset_index(drop=True)
    cols, problems = validate(one)
    if problems:
        raise ScenarioError(problems)
    request_shape(cols)
    trace = Trace(0)
    _resolve_one(cols, trace)
    compute(cols, trace)
    return trace


def _resolve_one(cols: dict[str, Any], trace: Trace | None = None) -> None:
    """A validated one-row table's throughput, in place (:func:`_throughput`); an infeasible estimate is a
    :class:`ScenarioError`.
    """
    thr = _throughput(cols, trace)
    if not thr["feasible"][0]:
        raise ScenarioError([Problem(0, "feasible", False, str(thr["infeasible_reason"][0]))])


def _throughput(cols: dict[str, Any], trace: Trace | None = None) -> dict[str, Any]:
    """A validated one-row table's throughput, in place: from a per-user speed, a measured curve or the roofline
    (recorded in ``trace``, else remembered per value of what the estimate reads); returns the estimate's outputs.
    """
    per_user_throughput(cols, trace)
    thr = fill_throughput(cols) if trace is not None else _throughput_one(cols)
    if trace is not None:
        trace_throughput(cols, thr, trace)
    _mark_throughput(cols, thr, ranged=trace is None)  # the remembered estimate holds its range
    if trace is not None:
        _trace_range(cols, thr, trace)
    return thr


def _trace_range(cols: dict[str, Any], thr: dict[str, Any], trace: Trace) -> None:
    """The estimate's range in ``explain``: each end the estimate times its stored ratio, with the basis."""
    if not bool(np.asarray(cols.get("_ranged", [False]))[trace.row]):
        return
    name = "decode_output_tokens_per_s_per_accelerator" if str(cols["decode_accelerator"][trace.row]) else (
        "output_tokens_per_s_per_accelerator")
    median = float(np.asarray(cols["_range_median"])[trace.row])
    high_low = "high" if median < 1.0 else "low"
    # how the range is made (the sources' spread and the spread within one), with its numbers
    step = str(np.asarray(cols.get("_range_step", [""]), dtype=object)[trace.row])
    trace.add("output_tokens_per_s_per_accelerator_p50", cols[name] * median, "token/s", "{estimate} x {ratio}",
              note=f"the held-out median of measured / estimated: on sources the fit never saw the estimate was "
                   f"{abs(1.0 / median - 1.0) * 100:.0f} % {high_low} at the median; the range below is shifted by "
                   "it (P10 and P90 are of the same ratios), the estimate itself stays the roofline's",
              estimate=(cols[name], "token/s"), ratio=(cols["_range_median"], ""))
    for end, pct in (("low", "p10"), ("high", "p90")):
        trace.add(f"output_tokens_per_s_per_accelerator_{pct}", thr[f"output_tokens_per_s_per_accelerator_{pct}"],
                  "token/s", "{estimate} x {ratio}", note=str(thr["throughput_basis"][trace.row]) if end == "low"
                  else step or "measured / estimated at the P90 of the same points",
                  estimate=(cols[name], "token/s"), ratio=(cols[estimate_range.RANGE_COLUMNS[name][end == "high"]], ""))


ESTIMATE_IGNORES = frozenset({
    "name", "ownership", "accelerator_count", "decode_accelerator_count", "existing_accelerators", "new_accelerator",
    "accelerator_price_usd", "decode_accelerator_price_usd", "rent_usd_per_accelerator_hour",
    "decode_rent_usd_per_accelerator_hour", "rent_includes_energy", "accelerator_power_kw",
    "decode_accelerator_power_kw", "system_power_kw", "decode_system_power_kw", "idle_power_fraction",
    "electricity_usd_per_kwh", "pue", "colocation_usd_per_kw_month", "facility_capex_usd_per_kw",
    "facility_depreciation_years", "facility_cooling", "accelerator_cooling", "decode_accelerator_cooling",
    "liquid_cooling_share", "liquid_retrofit_usd_per_mw", "allow_liquid_retrofit", "rack_power_kw",
    "rack_units_per_rack", "system_rack_units", "system_form", "round_to_whole_systems", "site_power_mw",
    "kv_link_gb_per_s", "depreciation_years", "cost_of_capital", "maintenance_fraction_per_year",
    "software_usd_per_accelerator_year", "existing_book_value_usd", "horizon_years", "demand_growth_per_year",
    "residual_value_fraction", "rent_change_per_year", "token_price_change_per_year", "lease_rate_per_year",
    "demand_input_tokens_per_day", "demand_output_tokens_per_day", "demand_requests_per_s", "peak_to_average",
    "headroom", "price_usd_per_m_input_tokens", "price_usd_per_m_cached_input_tokens",
    "price_usd_per_m_output_tokens", "fast_tier_min_tokens_per_s_per_user", "fast_tier_price_multiplier",
    # a session's shape reaches the estimate as its mean turn (input_tokens_per_request) and its last turn's context
    # (economics.domain.sessions.SLOWEST_CONTEXT), set before it runs
    "workload", *SESSION_ONLY, *SESSION_SPREAD, *SESSION_DEFAULTED, "kv_host_memory_gb_per_system",
    "kv_ssd_gb_per_system", "kv_remote_gb"})
"""Fields the throughput estimate never reads (prices, finance, facility, power, demand volumes, fleet size):
:func:`_throughput_one` hands the estimate every other field only, so a read of one of these fails loudly."""

ESTIMATE_READS = tuple(f for f in FIELDS if f not in ESTIMATE_IGNORES)


def _plain(value: Any) -> Any:
    """A one-row cell as a hashable Python value (NaN as None, so equal inputs give equal keys)."""
    if type(value) is np.float64:  # nearly every cell: NaN is the one value unequal to itself
        return None if value != value else float(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return None if np.isnan(value) else float(value)
    return str(value)


def _cell(value: Any) -> np.ndarray:
    if value is None:
        return np.array([np.nan])
    return np.array([value], dtype=object if isinstance(value, str) else None)


class _EstimateColumns(dict[str, Any]):
    """The columns the estimate is handed: looking up or testing for a field of :data:`ESTIMATE_IGNORES` is an
    error, never a silent fallback (the estimate falls back to defaults for absent optional columns).
    """

    def _check(self, name: object) -> None:
        if name in ESTIMATE_IGNORES:
            raise LookupError(f"the throughput estimate reads '{name}', which ESTIMATE_IGNORES says it never reads")

    def __getitem__(self, name: str) -> Any:
        self._check(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        self._check(name)
        return super().__contains__(name)

    def get(self, name: str, default: Any = None) -> Any:
        self._check(name)
        return super().get(name, default)


@lru_cache(maxsize=1024)
def _estimated(key: tuple[tuple[str, Any], ...]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    cols = _EstimateColumns((name, _cell(v)) for name, v in key)
    given = {k: v.copy() for k, v in cols.items()}  # copies: the estimate writes some columns in place
    thr = fill_throughput(cols)  # fills cols: take them after
    # the estimate's range reads only what the estimate reads (the columns above refuse any other field), so it is
    # remembered with it
    estimate_range.attach(cols, thr, thr["throughput_source"] == SOURCE_ESTIMATE)
    # only the columns the estimate and its range wrote (a row's cells it read and kept are in the row already)
    return {k: v for k, v in cols.items() if not _same_cell(given.get(k), v)}, thr


def _same_cell(before: Any, after: Any) -> bool:
    """Whether a one-row column is the cell it was: the same dtype and the same bytes (texts: the same texts). A
    NaN written anew may differ in its bytes; it is then copied back, as every column was before.
    """
    if before is None or before.dtype != after.dtype or before.shape != after.shape:
        return False
    return bool(before.tolist() == after.tolist()) if before.dtype.kind == "O" else before.tobytes() == after.tobytes()


def _throughput_one(cols: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`fill_throughput` for one validated row, remembered per distinct value of the fields it reads: a
    change of price, cost, demand or fleet size (the app's usual edit) reuses the estimate (tens of milliseconds
    for a model's roofline) and its range (:func:`economics.engine.estimate_range.attach`) instead of repeating
    them. Writes the filled fields and the range's columns into ``cols``.
    """
    reads = (*ESTIMATE_READS, SLOWEST_CONTEXT) if SLOWEST_CONTEXT in cols else ESTIMATE_READS
    filled, thr = _estimated(tuple((f, _plain(cols[f][0])) for f in reads))
    for name, column in filled.items():
        cols[name] = column.copy()
    return {k: v.copy() for k, v in thr.items()}


def _mark_throughput(cols: dict[str, Any], thr: dict[str, Any], ranged: bool = False) -> None:
    """The flags the warnings read: where the throughput was estimated (on a fitted family or not), interpolated or
    outside a curve; and each estimate's range (:func:`economics.engine.estimate_range.attach`, unless ``ranged``:
    attached already, as :func:`_throughput_one` does).
    """
    estimated = thr["throughput_source"] == SOURCE_ESTIMATE
    if not ranged:
        estimate_range.attach(cols, thr, estimated)
    cols["_throughput_estimated"] = estimated & ~cols["_throughput_unseen"]
    cols["_throughput_from_curve"] = (thr["throughput_source"] == SOURCE_CURVE) | (
        thr["throughput_source"] == SOURCE_USER)
    cols["_outside_measured_range"] = thr["outside_measured_range"]
    cols[PREFILL_ESTIMATE] = thr[PREFILL_ESTIMATE]
    cols[PER_USER_SPEED] = thr["output_tokens_per_s_per_user"]
    rows = session_rows(cols)
    if rows.any():  # the KV read share the per-turn speed of a session uses (economics.engine.sessions.speed)
        stored = stored_factors(np.asarray(cols["accelerator"], dtype=object), np.asarray(cols["model"], dtype=object))
        kv = stored.get(KV_FACTOR, np.zeros(rows.size))
        cols[KV_READ_SHARE] = np.where(rows, np.where(np.isfinite(kv) & (kv > 0), kv, stored.get(
            "bandwidth_utilization", np.full(rows.size, np.nan))), np.nan)


def explain_text(scenario: Scenario | dict[str, Any]) -> str:
    """The derivation of one scenario as plain text, inputs with their provenance first."""
    s = as_scenario(scenario)
    trace = explain_scenario(s)
    return provenance_text(s.model_dump()) + "\n\n" + trace.text()


VARIANT_FIELDS = frozenset({
    "accelerator_count", "demand_input_tokens_per_day", "demand_output_tokens_per_day", "demand_requests_per_s",
    "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "price_usd_per_m_cached_input_tokens",
})
"""Fields a variant of a resolved scenario may change: none of them changes how the inputs resolve (catalog
figures, throughput), so the variants skip validation and the throughput estimate."""


def resolve_scenario(scenario: Scenario | dict[str, Any]) -> dict[str, np.ndarray]:
    """One scenario validated and resolved (catalog figures, per-user speed, throughput): the columns
    :func:`evaluate_variants` starts from. Raises :class:`ScenarioError` like :func:`evaluate_scenario`.
    """
    cols = _validated(as_scenario(scenario))
    _resolve_one(cols)
    return cols


def evaluate_variants(resolved: dict[str, np.ndarray], **changes: Any) -> dict[str, np.ndarray]:
    """The outputs of a resolved one-row scenario repeated once per value in ``changes`` (each a sequence of
    equal length; ``None`` = empty), through the same stages as :func:`evaluate` without validating again.

    Only :data:`VARIANT_FIELDS` may change, and each value must lie within its field's bounds (checked here,
    naming field and value). Returns the numeric outputs as arrays (NaN where an optional output is empty).

    >>> base = resolve_scenario({"accelerator_count": 8, "output_tokens_per_s_per_accelerator": 1000})
    >>> out = evaluate_variants(base, demand_output_tokens_per_day=[172.8e6, 345.6e6])
    >>> [round(float(u), 3) for u in out["utilization"]]
    [0.25, 0.5]
    """
    lengths = {len(v) for v in changes.values()}
    if len(lengths) > 1:
        raise ValueError("evaluate_variants: every change needs the same number of values")
    k = lengths.pop() if lengths else 1
    cols = {name: np.repeat(v, k) for name, v in resolved.items()}
    for name, values in changes.items():
        if name not in VARIANT_FIELDS:
            raise ValueError(f"{name}: not a field a variant may change ({', '.join(sorted(VARIANT_FIELDS))})")
        arr = np.array([np.nan if v is None else float(v) for v in values])
        bad = ~np.isnan(arr) & ~FIELDS[name].within(arr)
        if bad.any():
            raise ValueError(f"{name}: {show_value(float(arr[bad][0]))} is out of bounds "
                             f"({FIELDS[name].bounds_text()})")
        cols[name] = arr
    return compute(cols)


RATE_FIELDS = ("output_tokens_per_s_per_accelerator", "input_tokens_per_s_per_accelerator")
"""The throughput figures :func:`evaluate_at_rates` varies: validation reads each only as a number within its
bounds or empty (whether it is given decides which other fields a scenario needs, never its value)."""


def evaluate_at_rates(scenario: Mapping[str, Any], rates: dict[str, np.ndarray],
                      outputs: Sequence[str]) -> pd.DataFrame:
    """The numeric ``outputs`` :func:`evaluate` gives for one scenario (a ``Scenario.model_dump()``) repeated once
    per value in ``rates`` (each a float array of equal length for a field of :data:`RATE_FIELDS`; NaN = empty),
    without validating the repeated table: the same columns, dtypes and numbers.

    The scenario is validated once per pattern of empty and given rates (:func:`validate_one`, with the rates of one
    of its rows that lies within the bounds), and every rate checked against its field's bounds as the validation
    checks a cell; the rows are then estimated and computed as :func:`evaluate` does. A curve's hundreds of points
    cost one small validation instead of a table's (:func:`economics.studies.interactivity.interactivity_curve`).
    """
    if not set(rates) <= set(RATE_FIELDS) or not rates:
        raise ValueError(f"evaluate_at_rates: rates for some of {', '.join(RATE_FIELDS)}")
    given = {name: np.asarray(v, dtype=float) for name, v in rates.items()}
    if len({v.size for v in given.values()}) != 1:
        raise ValueError("evaluate_at_rates: every field needs the same number of rates")
    present = {name: ~np.isnan(v) for name, v in given.items()}
    fits = np.logical_and.reduce([~present[name] | FIELDS[name].within(v) for name, v in given.items()])
    kinds, which = np.unique(np.sum([p << i for i, p in enumerate(present.values())], axis=0), return_inverse=True)
    checked, refused = [], np.zeros(kinds.size, dtype=bool)
    for k in range(kinds.size):  # each pattern's row: one whose rates lie within bounds, if any
        at = int((np.flatnonzero((which == k) & fits)[:1].tolist() or np.flatnonzero(which == k)[:1].tolist())[0])
        cols, problems = validate_one({**scenario, **{name: _number(v[at]) for name, v in given.items()}})
        checked.append(cols)
        refused[k] = bool(problems)
    cols = {name: _rows_of_pattern([c[name] for c in checked], which) for name in checked[0]}
    for name, v in given.items():  # the row's own rate where it is a number within bounds; else the pattern's
        cols[name] = np.where(present[name] & fits, v, cols[name])
    bad = refused[which] | ~fits
    run = _run(cols, bad)
    data: dict[str, Any] = {}
    index = pd.RangeIndex(bad.size)
    internal = _output_columns(data, run.outputs, run.rows, _EmptyColumns(index))
    if internal:
        _refuse_internal(data, internal, bad)
    return pd.DataFrame({name: data[name] for name in outputs}, index=index)


def _number(value: float) -> float | None:
    """A rate as a scenario holds it: None when empty."""
    return None if math.isnan(value) else float(value)


def _rows_of_pattern(columns: list[np.ndarray], which: np.ndarray) -> np.ndarray:
    """One field's one-row columns, a pattern's each, as the column of every row (``which``: each row's pattern):
    a copy, as the estimate writes some columns in place and the one-row columns may be remembered ones.
    """
    return np.concatenate(columns)[which] if len(columns) > 1 else np.repeat(columns[0], which.size)


def session_profile(scenario: Scenario | dict[str, Any]) -> pd.DataFrame:
    """The speed across one session scenario (``workload=sessions``): per turn its context, per-user speed and TTFT
    (:data:`economics.engine.sessions.PROFILE_COLUMNS`), by the formulas of ``min_output_tokens_per_s_per_user``
    and ``ttft_last_turn_s``, whose values are its last row. Raises :class:`ScenarioError` like
    :func:`evaluate_scenario`, naming ``workload`` for a request scenario (a single request has no turns).
    """
    cols = resolve_scenario(scenario)
    if not session_rows(cols).all():
        raise ScenarioError([Problem(0, "workload", "requests", "workload: the per-turn profile is of "
                                     "workload=sessions; this scenario is requests")])
    return turn_profile(working_columns(cols).v)
