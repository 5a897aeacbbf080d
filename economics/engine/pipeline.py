"""From resolved scenario columns to every output, column-wise: the stages in order, and the warnings.

One code path for one scenario and for a million: :func:`compute` takes a dict of equal-length arrays (already
validated, catalog defaults filled, NaN where an optional field is empty) and returns a dict of output arrays.
Given a :class:`~economics.domain.explain.Trace` it also records each applied formula for one row, with that row's
numbers (see :mod:`economics.engine.stages`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from economics.domain.explain import Trace
from economics.domain.explain import format_number as fmt
from economics.domain.throughput import RANGE_ENDS
from economics.engine import sessions, stages
from economics.engine.resolve import resolve
from economics.schema.outputs import (
    NUMERIC_OUTPUTS,
    OUTPUTS,
    RANGE_OUTPUTS,
    RANGED_INPUTS,
    FleetProblem,
    RowWarning,
    ratio_column,
)

Array = NDArray[Any]

WARNINGS: tuple[str, ...] = tuple(w.text for w in RowWarning)
"""Every warning's text, in the order a ``warnings`` cell joins them (:class:`economics.schema.outputs.RowWarning`)."""

OUTPUT_UNITS: dict[str, str] = {name: OUTPUTS[name].unit for name in NUMERIC_OUTPUTS}
"""Numeric outputs in the order they are reported, with their units (from :mod:`economics.schema.outputs`)."""
INTEGER_OUTPUTS = frozenset(name for name in NUMERIC_OUTPUTS if OUTPUTS[name].integer)
OPTIONAL_OUTPUTS = frozenset(name for name in NUMERIC_OUTPUTS if OUTPUTS[name].optional)
ONE_POOL_EMPTY = ("decode_accelerators", "decode_utilization", "prefill_pool_cost_usd_per_hour",
                  "decode_pool_cost_usd_per_hour", "kv_transfer_gb_per_s", "kv_transfer_mb_per_request")
"""Outputs of the decode pool: empty on rows without one."""




def compute(c: dict[str, Array], trace: Trace | None = None, *, shared_empty: bool = False) -> dict[str, Array]:
    """All outputs for resolved scenario columns ``c``; see the module docstring.

    ``shared_empty``: an output the stages left out (a session's on a table without sessions, ...) is one read-only
    view of NaN rather than a column of its own (a table's slice, whose caller copies the outputs it keeps).
    """
    if trace is None:
        small = _small_ranged(c)
        if small is not None:
            return small
    x = _run(c, trace)
    out = _outputs(x, c, shared_empty)
    _ranges(c, out, x.n, trace)
    return out


SMALL_RANGED_ROWS = 1024
"""A table of at most this many rows with an estimate's range runs its rows and both ends in one pass of the stages
(:func:`_small_ranged`): below it the stages' cost per call outweighs their cost per row (one scenario, a decode
study's years); above it, two passes, each table as small as it can be."""


def _small_ranged(c: dict[str, Array]) -> dict[str, Array] | None:
    """A small table some of whose rows have an estimate's range (the app's one scenario, a study's handful of rows):
    its rows, then the ranged rows at their low ends, then at their high, as one table, so the stages run once
    instead of twice (each row's numbers are its own: the same outputs as the table and then :func:`_ranges`). None
    for any other table (more than :data:`SMALL_RANGED_ROWS` rows, none ranged, a column not of the table's length).
    """
    ranged = c.get("_ranged")
    if not (type(ranged) is np.ndarray and ranged.ndim == 1 and 0 < ranged.shape[0] <= SMALL_RANGED_ROWS
            and ranged.any()):
        return None
    n = ranged.shape[0]
    rows = np.flatnonzero(ranged)
    m = rows.size
    at = np.concatenate([np.arange(n), rows, rows])
    sub = {}
    for k, v in c.items():  # each column checked and taken in one pass (the usual one: a 1-D array, one fancy index)
        if type(v) is np.ndarray:
            if v.ndim >= 1 and v.shape[0] != n:
                return None
            sub[k] = v[at] if v.ndim == 1 else _take(v, at, n)
        elif hasattr(v, "__len__") and not isinstance(v, (str, bytes)) and np.ndim(v) == 1 and len(v) != n:
            return None
        else:
            sub[k] = _take(v, at, n)
    _at_ends(sub, n + 2 * m, slice(n, n + m), slice(n + m, n + 2 * m))  # the table's own rows times 1: unchanged
    x = _run(sub)
    head = np.arange(n)  # the table's own rows of each output, a copy by one fancy index (half a slice's np.array)
    out = {k: v[head] if type(v) is np.ndarray and v.ndim == 1 else np.array(v[:n])
           for k, v in _outputs(x, sub).items()}
    _ends(out, x.v, rows, n, slice(n, n + m), slice(n + m, n + 2 * m))
    return out


def _at_ends(sub: dict[str, Array], size: int, low: slice, high: slice) -> None:
    """In place: each estimated throughput column of the ``size``-row table ``sub`` scaled by its pool's P10 ratio
    on the rows ``low`` and by its P90 ratio on the rows ``high`` (1 elsewhere).
    """
    for name in RANGED_INPUTS:
        lo, hi = sub.get(ratio_column("low", name)), sub.get(ratio_column("high", name))
        if name in sub and (lo is not None or hi is not None):
            ratio = np.ones(size)
            if lo is not None:
                ratio[low] = _floats(lo, size)[low]
            if hi is not None:
                ratio[high] = _floats(hi, size)[high]
            sub[name] = _floats(sub[name], size) * ratio


def _floats(column: Any, size: int) -> Array:
    """``column`` as ``size`` floats: itself when it is already (the usual case: no broadcast's cost, ~3 us a call),
    else broadcast (a scalar, a one-row column of a variant table).
    """
    if type(column) is np.ndarray and column.dtype == np.float64 and column.shape == (size,):
        return column
    return np.broadcast_to(np.asarray(column, dtype=float), (size,))


def _ends(out: dict[str, Array], v: dict[str, Array], rows: Array, n: int, low: slice, high: slice,
          trace: Trace | None = None) -> None:
    """:data:`RANGE_OUTPUTS` ``_low`` and ``_high`` of an ``n``-row table's ``rows``, from the stages' values ``v`` of
    those rows at their low ends (rows ``low``) and at their high (rows ``high``): the smaller and the larger
    (:data:`economics.domain.throughput.RANGE_ENDS`, recorded in ``trace`` when its row is ranged).
    """
    size = max(low.stop, high.stop)
    traced = trace if trace is not None and bool(np.isin(trace.row, rows)) else None
    for name, formulas in RANGE_ENDS.items():
        both = _floats(v[name], size)
        ends = {f"{name}_at_p10": stages.nans(n), f"{name}_at_p90": stages.nans(n)}
        ends[f"{name}_at_p10"][rows], ends[f"{name}_at_p90"][rows] = both[low], both[high]
        for formula in formulas:
            out[formula.name] = np.asarray(formula.evaluate(ends), dtype=float)
            if traced is not None:
                traced.record(formula, ends, out[formula.name])


def working_columns(c: dict[str, Array]) -> stages.Columns:
    """The working record of resolved columns ``c`` after every stage: the intermediate quantities (the hourly
    columns, each pool's utilization) a study draws beside the outputs.
    """
    return _run(c)


def _run(c: dict[str, Array], trace: Trace | None = None) -> stages.Columns:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = resolve(_remote_systems(c), trace)
        for stage in (sessions.residency, stages.request_time, stages.demand, stages.work, stages.sizing,
                      stages.serving, stages.facility, stages.costs, stages.unit_costs, stages.per_session,
                      stages.revenue_and_break_even, stages.energy, sessions.speed, sessions.streams,
                      sessions.agents):
            stage(x)
    return x


def _remote_systems(c: dict[str, Array]) -> dict[str, Array]:
    """``c`` with the systems a remote KV store is shared by, on session rows with a store and a fleet sized from
    demand: the systems of that fleet sized without the store (its hits can only shrink it, so each system's share
    is at least the one assumed). A fixed fleet's systems are worked out in the stage.
    """
    if "workload" not in c:
        return c
    rows = sessions.session_rows(c) & (np.asarray(c["kv_remote_gb"], dtype=float) > 0) & np.isnan(
        np.asarray(c["accelerator_count"], dtype=float))
    if not rows.any():
        return c
    at = np.flatnonzero(rows)  # only those rows run again
    without = {k: _take(v, at, rows.size) for k, v in c.items()}
    without["kv_remote_gb"] = np.zeros(at.size)
    systems = np.full(rows.size, np.nan)
    systems[at] = _run(without).v["systems"]
    return dict(c, **{sessions.REMOTE_SYSTEMS: systems})


def _take(column: Any, rows: Array, n: int) -> Any:
    """``column``'s values at ``rows`` of an ``n``-row table (a one-row column is repeated; a scalar is kept)."""
    if type(column) is np.ndarray and column.ndim == 1 and column.size == n:  # the usual column: one fancy index
        return column[rows]
    if isinstance(column, (str, bytes)) or not hasattr(column, "__len__"):
        return column
    size = len(column)
    if size not in (1, n):
        return column
    if isinstance(column, pd.api.extensions.ExtensionArray | pd.Categorical):
        return column.take(np.zeros(rows.size, dtype=int) if size == 1 else rows)
    values = np.asarray(column, dtype=object if isinstance(column, list) else None)
    return values[np.zeros(rows.size, dtype=int)] if size == 1 else values[rows]


def without_range_ends(c: dict[str, Array]) -> None:
    """In place: no row of the resolved columns ``c`` is at its estimate's range, so :func:`compute` leaves every
    :data:`RANGE_OUTPUTS` ``_low`` and ``_high`` empty (as on a measured row) and runs the stages on the rows alone,
    not on them and both ends: for a caller that reads no end. A row is then refused for its own counts only (an
    end's beyond the largest fleet is not looked at).

    >>> c = {"_ranged": np.array([True, False])}
    >>> without_range_ends(c)
    >>> c["_ranged"].tolist()
    [False, False]
    """
    c["_ranged"] = np.zeros(np.shape(c.get("_ranged", False)), dtype=bool)


def _ranges(c: dict[str, Array], out: dict[str, Array], n: int, trace: Trace | None = None) -> None:
    """:data:`RANGE_OUTPUTS` at the low and the high throughput of each estimated row: the same stages run again on
    those rows with every estimated throughput column scaled by its pool's P10 (then P90) ratio; ``_low`` is the
    smaller result and ``_high`` the larger (a fixed fleet serves more at a higher throughput, a sized one needs
    fewer accelerators).
    """
    # a variant table (evaluate_variants) holds one-row columns beside the n-row ones it changes
    ranged = np.broadcast_to(np.asarray(c.get("_ranged", False), dtype=bool), (n,))
    rows = np.flatnonzero(ranged)
    if not rows.size:
        for name in RANGE_OUTPUTS:
            out[f"{name}_low"] = stages.nans(n)
            out[f"{name}_high"] = stages.nans(n)
        return
    # both ends in one pass: the rows at their low throughput, then the same rows at their high (each row's numbers
    # are its own, so two halves of one table give what two tables would, for half the per-stage overhead)
    m, twice = rows.size, np.concatenate([rows, rows])
    sub = {k: _take(v, twice, n) for k, v in c.items()}
    _at_ends(sub, 2 * m, slice(0, m), slice(m, 2 * m))
    _ends(out, _run(sub).v, rows, n, slice(0, m), slice(m, 2 * m), trace)


def _outputs(x: stages.Columns, c: dict[str, Array], shared_empty: bool = False) -> dict[str, Array]:
    v, n = x.v, x.n
    out: dict[str, Array] = {}
    # an output the stages left out: a copy of this (each output its own array), or a view of one NaN (compute)
    blank = np.broadcast_to(np.float64(np.nan), (n,)) if shared_empty else np.full(n, np.nan)
    for name in NUMERIC_OUTPUTS:
        col = v.get(name)
        out[name] = (blank if shared_empty else blank.copy()) if col is None else np.asarray(col, dtype=float)
    for name in ONE_POOL_EMPTY:  # no decode pool on any row: each is the blank column, as the mask would give
        out[name] = (np.where(x.dis, out[name], np.nan) if x.any_dis else blank if shared_empty
                     else blank.copy())
    out["rack_power_kw_effective"] = v["rack_power_kw_effective"]
    flags = x.flags
    for warning, key in _ESTIMATE_FLAGS:
        flags = flags | np.asarray(c.get(key, False), dtype=np.int64) * warning
    out["warning_flags"] = np.broadcast_to(flags, (n,)).copy()
    out["fleet_flags"] = x.fleet_flags
    for name in ("system_power_kw_effective", "decode_system_power_kw_effective", "decode_rack_power_kw_effective"):
        out[name] = stages.column_or_nans(v, name, n)
    return out


_ESTIMATE_FLAGS = tuple((int(w), key) for w, key in (
    (RowWarning.ROOFLINE_CALIBRATED, "_throughput_estimated"), (RowWarning.FROM_CURVE, "_throughput_from_curve"),
    (RowWarning.OUTSIDE_MEASURED_RANGE, "_outside_measured_range"),
    (RowWarning.ROOFLINE_UNSEEN_FAMILY, "_throughput_unseen"), (RowWarning.CLASS_MISMATCH, "_class_mismatch")))
"""The warnings set from the throughput's flags in ``c``, as ints (numpy probes an enum member slowly)."""


def fleet_reasons(c: dict[str, Array], out: dict[str, Array], rows: Array) -> list[str]:
    """One sentence per infeasible fleet (rows of ``c``/``out``), naming the constraint and the numbers."""
    codes, distinct = fleet_reason_codes(c, out, rows)
    return [distinct[i] for i in codes]


def fleet_reason_codes(c: dict[str, Array], out: dict[str, Array], rows: Array) -> tuple[Array, list[str]]:
    """:func:`fleet_reasons` as (codes, sentences): each row's index into the sentences, which a table turns into
    its column without a Python string per row.
    """
    # rows without a site-power shortfall share a few distinct sentences: build each once
    key_cols = (out["fleet_flags"], c["accelerator"], c["decode_accelerator"], c["liquid_retrofit_usd_per_mw"],
                out["rack_power_kw_effective"], out["system_power_kw_effective"],
                out["decode_rack_power_kw_effective"], out["decode_system_power_kw_effective"])
    site = (out["fleet_flags"][rows] & FleetProblem.SITE_POWER) != 0
    if not site.any():
        codes, count = _group_codes([np.asarray(k)[rows] for k in key_cols])
        first = np.full(count, -1)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        return codes, _fleet_sentences(c, out, rows[first])
    return np.arange(len(rows)), _fleet_sentences(c, out, rows)


def _group_codes(keys: list[Array]) -> tuple[Array, int]:
    """Each row's group among the distinct combinations of ``keys`` (equal-length columns; NaN equal to NaN), and
    the number of groups: each column factorized on its own (numbers and texts hashed as they are, not as a
    million Python tuples), the codes combined as digits of one number, then numbered in order of first appearance.
    """
    combined = np.zeros(len(keys[0]), dtype=np.int64)
    for column in keys:
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        combined = combined * max(len(uniques), 1) + codes  # the distinct rows so far times this column's
        combined = pd.factorize(combined)[0].astype(np.int64)  # renumbered: the digits never overflow
    codes, uniques = pd.factorize(combined)
    return codes, len(uniques)


def _fleet_sentences(c: dict[str, Array], out: dict[str, Array], rows: Array) -> list[str]:
    def col(values: Array) -> list[Any]:
        return np.asarray(values)[rows].tolist()

    flags, acc, dacc = col(out["fleet_flags"]), col(c["accelerator"]), col(c["decode_accelerator"])
    retrofit, rack_kw = col(c["liquid_retrofit_usd_per_mw"]), col(out["rack_power_kw_effective"])
    system_kw, rack_kw_y = col(out["system_power_kw_effective"]), col(out["decode_rack_power_kw_effective"])
    system_kw_y = col(out["decode_system_power_kw_effective"])
    need, it_mw = col(out["facility_power_kw"] / 1000.0), col(out["it_power_kw"] / 1000.0)
    pue, have = col(out["pue_effective"]), col(c["site_power_mw"])
    texts = []
    for k, f in enumerate(flags):
        figures = {"accelerator": acc[k], "decode_accelerator": dacc[k], "retrofit_usd_per_mw": fmt(retrofit[k]),
                   "system_kw": fmt(system_kw[k]), "rack_kw": fmt(rack_kw[k]), "decode_system_kw": fmt(system_kw_y[k]),
                   "decode_rack_kw": fmt(rack_kw_y[k]), "need_mw": fmt(need[k]), "it_mw": fmt(it_mw[k]),
                   "pue": fmt(pue[k]), "have_mw": fmt(have[k]), "short_mw": fmt(need[k] - have[k])}
        texts.append("; ".join(p.text.format(**figures) for p in FleetProblem if f & p))
    return texts


def split_warnings(text: str) -> list[str]:
    """The individual warnings in a ``warnings`` cell (each is one of :data:`WARNINGS`), in order.

    >>> both = warning_text(RowWarning.OVER_CAPACITY | RowWarning.NO_DEMAND)
    >>> split_warnings(both)[1].startswith("no demand given")
    True
    """
    return [w for w in WARNINGS if w in text]


@lru_cache(maxsize=256)
def warning_text(flags: int) -> str:
    """The warnings of one flag combination, joined with '; ' (remembered per combination: a scenario's result
    reads it on every call, and each test of an enum flag costs more than the rest of the row's warnings).
    """
    return "; ".join(w.text for w in RowWarning if flags & w)
