"""From resolved scenario columns to every output, column-wise: the stages in order, and the warnings.

One code path for one scenario and for a million: :func:`compute` takes a dict of equal-length arrays (already
validated, catalog defaults filled, NaN where an optional field is empty) and returns a dict of output arrays.
Given a :class:`~economics.domain.explain.Trace` it also records each applied formula for one row, with that row's
numbers (see :mod:`economics.engine.stages`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from economics.domain.explain import Trace
from economics.domain.explain import format_number as fmt
from economics.engine import stages
from economics.engine.resolve import resolve
from economics.outputs import NUMERIC_OUTPUTS, OUTPUTS, RANGE_OUTPUTS, RANGED_INPUTS, ratio_column

Array = NDArray[Any]

# Warnings are bit flags: the per-row text is looked up per distinct combination, which keeps a million rows fast.
WARNINGS: tuple[str, ...] = (
    "average demand exceeds the fleet's capacity: served tokens are capped at capacity",
    "peak demand (peak_to_average x average) exceeds the fleet's capacity",
    "no demand given: the fleet is assumed busy all the time (utilization 1)",
    "no prefill throughput given: the output throughput is taken to include prefill, so the cost cannot be split "
    "between input and output tokens (cost_usd_per_m_tokens covers both)",
    "break-even utilization is not reachable at these prices (above 1, or above what the binding decode pool or "
    "KV link allows)",
    "no selling price given: revenue and margins are not computed",
    "throughput estimated by the roofline model, calibrated on measured points of this accelerator family "
    "(throughput_basis gives the points, the held-out error and the range; *_low and *_high carry it)",
    "throughput interpolated on a measured curve (see throughput_curve)",
    "the target is outside the measured range of a matching curve: no extrapolation, the roofline estimate is used",
    "the KV-cache link between the prefill and decode pools is the bottleneck (see kv_transfer_gb_per_s)",
    "token demand inferred from the request shape (input_tokens_per_request, output_tokens_per_request)",
    "no input price given: input tokens are priced at 0",
    "no output price given: output tokens are priced at 0",
    "throughput estimated by the roofline model on an accelerator family with no measured point: the factors are "
    "other families' (throughput_basis gives the range to expect; *_low and *_high carry it)",
    "the family's factors were fitted mostly on the other model class (dense vs mixture-of-experts): see "
    "throughput_basis",
)

OUTPUT_UNITS: dict[str, str] = {name: OUTPUTS[name].unit for name in NUMERIC_OUTPUTS}
"""Numeric outputs in the order they are reported, with their units (from :mod:`economics.outputs`)."""
INTEGER_OUTPUTS = frozenset(name for name in NUMERIC_OUTPUTS if OUTPUTS[name].integer)
OPTIONAL_OUTPUTS = frozenset(name for name in NUMERIC_OUTPUTS if OUTPUTS[name].optional)
ONE_POOL_EMPTY = ("decode_accelerators", "decode_utilization", "prefill_pool_cost_usd_per_hour",
                  "decode_pool_cost_usd_per_hour", "kv_transfer_gb_per_s", "kv_transfer_mb_per_request")
"""Outputs of the decode pool: empty on rows without one."""




def compute(c: dict[str, Array], trace: Trace | None = None) -> dict[str, Array]:
    """All outputs for resolved scenario columns ``c``; see the module docstring."""
    x = _run(c, trace)
    out = _outputs(x, c)
    _ranges(c, out, x.n)
    return out


def _run(c: dict[str, Array], trace: Trace | None = None) -> stages.Columns:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = resolve(c, trace)
        for stage in (stages.request_time, stages.demand, stages.work, stages.sizing, stages.serving,
                      stages.facility, stages.costs, stages.unit_costs, stages.revenue_and_break_even, stages.energy):
            stage(x)
    return x


def _take(column: Any, rows: Array, n: int) -> Any:
    """``column``'s values at ``rows`` of an ``n``-row table (a one-row column is repeated; a scalar is kept)."""
    if isinstance(column, (str, bytes)) or not hasattr(column, "__len__"):
        return column
    size = len(column)
    if size not in (1, n):
        return column
    if isinstance(column, pd.api.extensions.ExtensionArray | pd.Categorical):
        return column.take(np.zeros(rows.size, dtype=int) if size == 1 else rows)
    values = np.asarray(column, dtype=object if isinstance(column, list) else None)
    return values[np.zeros(rows.size, dtype=int)] if size == 1 else values[rows]


def _ranges(c: dict[str, Array], out: dict[str, Array], n: int) -> None:
    """:data:`RANGE_OUTPUTS` at the low and the high throughput of each estimated row: the same stages run again on
    those rows with every estimated throughput column scaled by its pool's P10 (then P90) ratio; ``_low`` is the
    smaller result and ``_high`` the larger (a fixed fleet serves more at a higher throughput, a sized one needs
    fewer accelerators)."""
    for name in RANGE_OUTPUTS:
        out[f"{name}_low"] = np.full(n, np.nan)
        out[f"{name}_high"] = np.full(n, np.nan)
    # a variant table (evaluate_variants) holds one-row columns beside the n-row ones it changes
    ranged = np.broadcast_to(np.asarray(c.get("_ranged", False), dtype=bool), (n,))
    rows = np.flatnonzero(ranged)
    if not rows.size:
        return
    ends = []
    for end in ("low", "high"):
        sub = {k: _take(v, rows, n) for k, v in c.items()}
        for name in RANGED_INPUTS:
            ratio = sub.get(ratio_column(end, name))
            if ratio is not None and name in sub:
                sub[name] = np.asarray(sub[name], dtype=float) * ratio
        v = _run(sub).v
        ends.append({name: np.broadcast_to(np.asarray(v[name], dtype=float), rows.shape) for name in RANGE_OUTPUTS})
    for name in RANGE_OUTPUTS:
        out[f"{name}_low"][rows] = np.fmin(ends[0][name], ends[1][name])
        out[f"{name}_high"][rows] = np.fmax(ends[0][name], ends[1][name])


def _outputs(x: stages.Columns, c: dict[str, Array]) -> dict[str, Array]:
    v, n = x.v, x.n
    out: dict[str, Array] = {}
    for name in NUMERIC_OUTPUTS:
        col = v.get(name)
        out[name] = np.full(n, np.nan) if col is None else np.asarray(col, dtype=float)
    for name in ONE_POOL_EMPTY:
        out[name] = np.where(x.dis, out[name], np.nan)
    out["rack_power_kw_effective"] = v["rack_power_kw_effective"]
    flags = x.flags
    for bit, key in ((6, "_throughput_estimated"), (7, "_throughput_from_curve"), (8, "_outside_measured_range"),
                     (13, "_throughput_unseen"), (14, "_class_mismatch")):
        flags = flags | (np.asarray(c.get(key, False), dtype=np.int64) << bit)
    out["warning_flags"] = np.broadcast_to(flags, (n,)).copy()
    out["fleet_flags"] = x.fleet_flags
    for name in ("system_power_kw_effective", "decode_system_power_kw_effective", "decode_rack_power_kw_effective"):
        out[name] = v.get(name, np.full(n, np.nan))
    return out


def fleet_reasons(c: dict[str, Array], out: dict[str, Array], rows: Array) -> list[str]:
    """One sentence per infeasible fleet (rows of ``c``/``out``), naming the constraint and the numbers."""
    # rows without a site-power shortfall share a few distinct sentences: build each once
    key_cols = (out["fleet_flags"], c["accelerator"], c["decode_accelerator"], c["liquid_retrofit_usd_per_mw"],
                out["rack_power_kw_effective"], out["system_power_kw_effective"],
                out["decode_rack_power_kw_effective"], out["decode_system_power_kw_effective"])
    site = (out["fleet_flags"][rows] & 4) != 0
    if not site.any():
        codes, uniques = pd.MultiIndex.from_arrays([np.asarray(k)[rows] for k in key_cols]).factorize()
        first = np.full(len(uniques), -1)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        distinct = _fleet_sentences(c, out, rows[first])
        return [distinct[i] for i in codes]
    return _fleet_sentences(c, out, rows)


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
        parts = []
        if f & 1:
            parts.append(f"cooling: {acc[k]} requires liquid cooling and the facility is air-cooled; set "
                         f"allow_liquid_retrofit to add it at {fmt(retrofit[k])} USD/MW")
        if f & 2:
            parts.append(f"rack power: one {acc[k]} system draws {fmt(system_kw[k])} kW, over the "
                         f"{fmt(rack_kw[k])} kW rack limit")
        if f & 64:
            parts.append(f"cooling: decode accelerator {dacc[k]} requires liquid cooling and the facility is "
                         f"air-cooled; set allow_liquid_retrofit to add it at {fmt(retrofit[k])} USD/MW")
        if f & 32:
            parts.append(f"rack power: one {dacc[k]} system draws {fmt(system_kw_y[k])} kW, over the "
                         f"{fmt(rack_kw_y[k])} kW rack limit")
        if f & 8:
            parts.append("demand: input tokens per day are given but input_tokens_per_request is 0, so the output "
                         "demand cannot be inferred; give demand_output_tokens_per_day")
        if f & 16:
            parts.append("decode pool: with no demand given, the decode pool cannot be sized; give "
                         "decode_accelerator_count or a demand")
        if f & 4:
            parts.append(f"site power: the fleet needs {fmt(need[k])} MW (IT {fmt(it_mw[k])} MW x PUE {fmt(pue[k])}) "
                         f"but {fmt(have[k])} MW is available; short by {fmt(need[k] - have[k])} MW")
        texts.append("; ".join(parts))
    return texts


def split_warnings(text: str) -> list[str]:
    """The individual warnings in a ``warnings`` cell (each is one of :data:`WARNINGS`), in order.

    >>> split_warnings(warning_text(0b101))[1].startswith("no demand given")
    True
    """
    return [w for w in WARNINGS if w in text]


def warning_text(flags: int) -> str:
    """The warnings of one flag combination, joined with '; '."""
    return "; ".join(w for bit, w in enumerate(WARNINGS) if flags >> bit & 1)
