"""Uncertain inputs: one-at-a-time sensitivity (tornado) and Monte Carlo, through the ordinary vectorised engine.

Any numeric scenario field may be given as a range: low / base / high, the base being the scenario's own value (in
a CSV: columns ``<field>_low`` and ``<field>_high`` beside ``<field>``). The tornado moves one field at a time to
its low and its high and reports the output at each end, sorted by swing. The Monte Carlo draws every ranged field
at once (triangular with the base as mode, or uniform), seeded, evaluates all samples in one call of
:func:`economics.evaluate`, and summarises each output by its 10th, 50th and 90th percentiles. Two scenarios
sampled with the same seed share their draws (common random numbers), so "how often is A cheaper than B" compares
like with like.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from . import values as parse_values
from .batch import ScenarioError, as_scenario, evaluate, evaluate_scenario
from .compare import given_fields, scenario_frame
from .retrofit import analyse
from .scenario import FIELDS, Scenario
from .validation import RANGE_COLUMNS, Problem, range_values

RANGE_SUFFIXES = ("_low", "_high")
Distribution = Literal["triangular", "uniform"]


def ranged_fields() -> list[str]:
    """Fields that may carry a range: the numeric ones."""
    return [name for name, spec in FIELDS.items() if spec.kind in ("float", "int")]


def range_columns(columns: list[str]) -> dict[str, tuple[str, str]]:
    """``{field: (low column, high column)}`` for the ``<field>_low`` / ``<field>_high`` pairs among ``columns``."""
    present = set(columns)
    return {f: (f + "_low", f + "_high") for f in ranged_fields()
            if f + "_low" in present or f + "_high" in present}


def ranges_from_row(row: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Ranges given in one CSV row (both ends needed; a missing end is an error naming the column)."""
    out = {}
    for field, (lo_col, hi_col) in range_columns(list(row)).items():
        ends = []
        for col in (lo_col, hi_col):
            try:
                end = parse_values.number(row.get(col))
            except (parse_values.ValueProblem, parse_values.CellTypeError) as exc:
                raise ScenarioError([_problem(col, f"{col}: {exc}")]) from None
            if not isinstance(end, float):  # EMPTY
                raise ScenarioError([_problem(col, f"{col}: empty; give both {lo_col} and {hi_col}")])
            ends.append(end)
        out[field] = (ends[0], ends[1])
    return out


def with_range_columns(result: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """The evaluation result with the input's ``<field>_low``/``<field>_high`` columns kept (as numbers), each
    after its field's column."""
    ranges = range_values(df)
    if not ranges:
        return result
    out = result.copy()
    for col, vals in ranges.items():
        field = RANGE_COLUMNS[col][0]
        at = list(out.columns).index(field) + 1 if field in out.columns else len(FIELDS)
        while at < len(out.columns) and str(out.columns[at]).startswith(field + "_"):
            at += 1
        out.insert(min(at, len(out.columns)), col, pd.Series(np.where(np.isfinite(vals), vals, np.nan),
                                                             index=out.index, dtype="Float64"))
    return out


def _problem(field: str, message: str) -> Problem:
    return Problem(0, field, None, message)


def _checked(base: Scenario, ranges: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float, float]]:
    """(low, base, high) per field, each end a valid value of its field, low <= base <= high; the scenario itself
    must be valid (:class:`ScenarioError` naming every problem otherwise)."""
    out = {}
    resolved = evaluate_scenario(base)  # an invalid scenario fails here, loudly, naming every problem
    for field, (lo, hi) in ranges.items():
        if field not in FIELDS or FIELDS[field].kind not in ("float", "int"):
            raise ScenarioError([_problem(field, f"{field}: not a numeric scenario field, cannot take a range")])
        mid = getattr(base, field)
        if mid is None:  # a catalog figure or an estimate: the range goes around the value the engine uses
            mid = resolved.get(field)
            if mid is None:  # derived from other fields (the PUE follows the cooling): the value used
                mid = resolved.get(f"{field}_effective")
        if mid is None:
            raise ScenarioError([_problem(field, f"{field}: give a base value to put a range around")])
        if not lo <= mid <= hi:
            raise ScenarioError([_problem(field, f"{field}: range {lo:g}..{hi:g} must contain the base value {mid:g}")])
        for end in (lo, hi):
            as_scenario({**base.model_dump(), field: end})  # bounds, with the field's own message
        out[field] = (float(lo), float(mid), float(hi))
    return out


def tornado(scenario: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]],
            output: str = "cost_usd_per_m_tokens") -> pd.DataFrame:
    """One-at-a-time sensitivity of ``output``: each field at its low and high, the others at base.

    Returns columns ``field``, ``low``, ``high``, ``output_at_low``, ``output_at_high``, ``base_output`` and
    ``swing`` (|high end - low end|), largest swing first.
    """
    base = as_scenario(scenario)
    checked = _checked(base, ranges)
    raw = given_fields(base.model_dump(), keep=checked)
    rows = [raw]
    for field, (lo, _mid, hi) in checked.items():
        rows += [{**raw, field: lo}, {**raw, field: hi}]
    out = evaluate(scenario_frame(rows))[output].astype(float).to_numpy()
    table = pd.DataFrame([
        {"field": f, "low": lo, "high": hi, "output_at_low": out[1 + 2 * k], "output_at_high": out[2 + 2 * k],
         "base_output": out[0], "swing": abs(out[2 + 2 * k] - out[1 + 2 * k])}
        for k, (f, (lo, _mid, hi)) in enumerate(checked.items())])
    return table.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)


def draw(ranges: dict[str, tuple[float, float, float]], samples: int, seed: int,
         distribution: Distribution = "triangular") -> dict[str, np.ndarray]:
    """Seeded draws per field: triangular(low, mode=base, high) or uniform(low, high). Fields are drawn in
    declaration order so the same seed gives the same draws to every scenario sampled with it."""
    rng = np.random.default_rng(seed)
    out = {}
    for field in [f for f in FIELDS if f in ranges]:
        lo, mid, hi = ranges[field]
        if hi == lo:
            values = np.full(samples, lo)
        elif distribution == "uniform":
            values = rng.uniform(lo, hi, samples)
        else:
            values = rng.triangular(lo, mid, hi, samples)
        if FIELDS[field].kind == "int":
            values = np.round(values)
        out[field] = values
    return out


@dataclass
class MonteCarlo:
    samples: pd.DataFrame  # the drawn inputs and every output, one row per sample
    summary: pd.DataFrame  # output, p10, p50, p90, mean


def monte_carlo(scenario: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]], samples: int = 10_000,
                seed: int = 0, distribution: Distribution = "triangular",
                outputs: tuple[str, ...] = ("cost_usd_per_m_tokens", "cost_usd_per_day", "gross_margin")) -> MonteCarlo:
    """Every ranged field drawn at once, ``samples`` times, evaluated in one vectorised pass."""
    base = as_scenario(scenario)
    checked = _checked(base, ranges)
    drawn = draw(checked, samples, seed, distribution)
    # only the inputs that differ from the defaults as columns: the same outputs, fewer columns to validate
    result = evaluate(scenario_frame([given_fields(base.model_dump(), keep=drawn)], varying=drawn, repeat=samples))
    if not result[outputs[0]].notna().any():
        reason = next((str(e) for e in result["error"] if e), "") or next(
            (str(r) for r in result["infeasible_reason"] if r), "no sample could be computed")
        raise ScenarioError([_problem(outputs[0], f"{outputs[0]}: none of the {samples:,} samples could be "
                                                  f"computed: {reason}")])
    table = pd.concat([pd.DataFrame(drawn), result[list(outputs)].astype("Float64").reset_index(drop=True)], axis=1)
    summary = []
    for name in outputs:
        values = result[name].astype(float).dropna().to_numpy()
        p10, p50, p90 = np.percentile(values, [10, 50, 90]) if values.size else (np.nan,) * 3
        summary.append({"output": name, "p10": p10, "p50": p50, "p90": p90,
                        "mean": float(values.mean()) if values.size else np.nan, "samples": int(values.size)})
    return MonteCarlo(table, pd.DataFrame(summary))


def histogram(values: np.ndarray, max_bins: int = 40) -> pd.DataFrame:
    """Counts of ``values`` (NaN left out) in equal bins of a "nice" width, the smallest 1, 2 or 5 x 10^k at least
    (max - min) / ``max_bins``, from a multiple of the width (as a chart's automatic binning does; one bin more
    than ``max_bins`` when the range straddles a multiple), so a chart draws a few dozen bars instead of binning
    every sample itself.

    Returns ``bin_start``, ``bin_end`` and ``count`` (empty bins included; a value on an inner edge counts in the
    bin it starts, the largest value in the last bin).

    >>> histogram(np.array([0.1, 0.25, 0.26, 0.9]), max_bins=4).to_dict("list")
    {'bin_start': [0.0, 0.2, 0.4, 0.6, 0.8], 'bin_end': [0.2, 0.4, 0.6, 0.8, 1.0], 'count': [1, 2, 0, 0, 1]}
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if not x.size:
        return pd.DataFrame({"bin_start": [], "bin_end": [], "count": []})
    lo, hi = float(x.min()), float(x.max())
    span = hi - lo if hi > lo else max(abs(lo), 1.0)
    step = _nice_step(span / max_bins)
    start = np.floor(lo / step) * step
    n = max(1, int(np.ceil((hi - start) / step - 1e-9)))
    while start + n * step <= hi:  # the largest value inside the last bin
        n += 1
    edges = np.round(start + step * np.arange(n + 1), max(0, 1 - int(np.floor(np.log10(step)))) + 12)
    counts, _ = np.histogram(x, bins=edges)
    return pd.DataFrame({"bin_start": edges[:-1], "bin_end": edges[1:], "count": counts.astype(int)})


def _nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at least ``raw`` (> 0).

    >>> _nice_step(0.0013), _nice_step(3.0), _nice_step(7.0)
    (0.002, 5.0, 10.0)
    """
    power = 10.0 ** np.floor(np.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * power >= raw * (1 - 1e-12):
            return float(round(m * power, 15))
    return float(10.0 * power)


def probability_lower(a: MonteCarlo, b: MonteCarlo, output: str = "cost_usd_per_m_tokens") -> float:
    """Share of samples in which ``a`` has the lower ``output`` than ``b`` (same seed: paired draws)."""
    x = a.samples[output].astype(float).to_numpy()
    y = b.samples[output].astype(float).to_numpy()
    ok = ~np.isnan(x) & ~np.isnan(y)
    return float(np.mean(x[ok] < y[ok])) if ok.any() else float("nan")


def tornado_npv(study: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]],
                option: str = "add decode") -> pd.DataFrame:
    """One-at-a-time sensitivity of an option's NPV against the status quo in the retrofit study."""
    base = as_scenario(study)
    checked = _checked(base, ranges)

    def npv(s: dict[str, Any]) -> float:
        options = analyse(s).options
        hit = options.loc[options["option"] == option, "npv_vs_status_quo_usd"]
        return float(hit.iloc[0]) if len(hit) else float("nan")

    at_base = npv(base.model_dump())
    rows = []
    for field, (lo, _mid, hi) in checked.items():
        low, high = npv({**base.model_dump(), field: lo}), npv({**base.model_dump(), field: hi})
        rows.append({"field": field, "low": lo, "high": hi, "output_at_low": low, "output_at_high": high,
                     "base_output": at_base, "swing": abs(high - low)})
    return pd.DataFrame(rows).sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)
