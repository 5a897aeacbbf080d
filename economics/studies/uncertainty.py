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

from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from economics.engine.batch import (
    ESTIMATE_IGNORES,
    MAX_COUNT,
    ScenarioError,
    as_scenario,
    evaluate,
    evaluate_scenario,
    resolve_scenario,
)
from economics.engine.pipeline import INTEGER_OUTPUTS, OPTIONAL_OUTPUTS, OUTPUT_UNITS, compute, without_range_ends
from economics.schema import values as parse_values
from economics.schema.outputs import RANGE_OUTPUTS
from economics.schema.scenario import FIELDS, Ownership, Scenario
from economics.schema.validation import RANGE_COLUMNS, Problem, range_values
from economics.schema.values import FieldKind
from economics.studies.compare import given_fields, scenario_frame
from economics.studies.retrofit import OptionKind, analyse

RANGE_SUFFIXES = ("_low", "_high")
DEFAULT_RANGED_FIELDS = ("electricity_usd_per_kwh", "accelerator_price_usd", "output_tokens_per_s_per_accelerator",
                         "pue", "cost_of_capital")
"""The inputs people argue about: the fields the Uncertainty page and ``uncertainty --default-ranges`` range."""
DEFAULT_RANGE_FACTORS: dict[str, tuple[float, float]] = {
    "electricity_usd_per_kwh": (0.5, 2.5), "accelerator_price_usd": (0.7, 1.4),
    "output_tokens_per_s_per_accelerator": (0.7, 1.3), "pue": (0.85, 1.2), "cost_of_capital": (0.5, 1.5),
}
"""Default range of each of :data:`DEFAULT_RANGED_FIELDS` as factors of its base value (low, high); an estimated
throughput takes its own P10-P90 instead (:func:`default_range`)."""
CONDITIONAL_RANGE_FACTORS: dict[str, tuple[float, float]] = {
    "reserved_rent_usd_per_accelerator_hour": (0.8, 1.25), "reserved_discount": (0.6, 1.3),
    "spot_rent_usd_per_accelerator_hour": (0.6, 1.6), "spot_discount": (0.6, 1.3), "spot_mtbi_hours": (0.25, 4.0),
    "grid_carbon_g_per_kwh": (0.7, 1.3), "embodied_kgco2e_per_accelerator": (0.5, 2.0),
}
"""Default ranges of inputs that matter only in some scenarios (:func:`applies`), as factors of the base value:
assumptions, not data. A reserved rent from a 1-year to a 3-year commitment's discount (about -20 % / +25 %; the
discount itself x0.6 to x1.3 where the rent comes from it); a spot price that moves with the market (-40 % / +60 %;
its discount likewise); interruptions from four times as often to a quarter as often
as stated; a grid's annual intensity from year to year and between average and marginal accounting (+/-30 %); a
product carbon footprint, an estimate that the vendors' own summaries give to within about a factor of two."""
RANGED_FIELDS = (*DEFAULT_RANGED_FIELDS, *CONDITIONAL_RANGE_FACTORS)
"""Every field the Uncertainty page and ``--default-ranges`` may range: the first five always, the rest where they
apply (:func:`applies`)."""
ESTIMATED_RANGE_FIELD = "output_tokens_per_s_per_accelerator"
"""The ranged field an estimate gives its own range to (its P10 and P90, outputs ``<field>_p10`` / ``_p90``)."""


def applies(field: str, result: dict[str, Any]) -> bool:
    """Whether a ranged field can move the evaluated row ``result``: the five default ones always; a reserved or
    spot rent (and the interruptions) on a fleet rented in that tier; the grid's intensity and the embodied figure
    where carbon is priced.

    >>> applies("spot_mtbi_hours", {"ownership": "rent", "rent_tier": "spot"}), applies("spot_mtbi_hours", {})
    (True, False)
    """
    rented = result.get("ownership") == Ownership.RENT
    reserved, spot = rented and result.get("rent_tier") == "reserved", rented and result.get("rent_tier") == "spot"
    return {"reserved_rent_usd_per_accelerator_hour": reserved,
            "reserved_discount": reserved and result.get("reserved_rent_usd_per_accelerator_hour") is None,
            "spot_rent_usd_per_accelerator_hour": spot,
            "spot_discount": spot and result.get("spot_rent_usd_per_accelerator_hour") is None,
            "spot_mtbi_hours": spot,
            "grid_carbon_g_per_kwh": float(result.get("carbon_usd_per_tonne") or 0.0) > 0,
            "embodied_kgco2e_per_accelerator": float(result.get("carbon_usd_per_tonne") or 0.0) > 0,
            }.get(field, field in DEFAULT_RANGED_FIELDS)


def base_value(result: dict[str, Any], field: str) -> float | None:
    """The value the engine used for a field: the scenario's, else the one it resolved (``<field>_effective``, e.g.
    the catalog's price); None where it has none.
    """
    value = result.get(field)
    if value is None:
        value = result.get(f"{field}_effective")
    return None if value is None else float(value)


def estimate_range(result: dict[str, Any], field: str) -> tuple[float, float] | None:
    """An estimated throughput's P10-P90, the default range of its field; None where it was measured."""
    ends = [result.get(f"{field}_{p}") for p in ("p10", "p90")] if field == ESTIMATED_RANGE_FIELD else [None]
    return None if None in ends else (float(ends[0]), float(ends[1]))  # type: ignore[arg-type]


def default_range(field: str, value: float, result: dict[str, Any]) -> tuple[float, float]:
    """The default range of ``field`` around ``value``: the estimate's own P10-P90, else the default factors, kept
    inside the field's bounds.

    >>> default_range("electricity_usd_per_kwh", 0.08, {})   # 0.5 x and 2.5 x 0.08
    (0.04, 0.2)
    """
    estimated = estimate_range(result, field)
    if estimated is not None:
        return estimated
    lo_factor, hi_factor = {**DEFAULT_RANGE_FACTORS, **CONDITIONAL_RANGE_FACTORS}[field]
    spec = FIELDS[field]
    lo = max(value * lo_factor, float(spec.ge) if spec.ge is not None else 0.0)
    hi = value * hi_factor if spec.le is None else min(value * hi_factor, float(spec.le))
    return lo, hi


def default_ranges(result: dict[str, Any], given: dict[str, tuple[float | None, float | None]] | None = None
                   ) -> dict[str, tuple[float, float]]:
    """The range of each of :data:`RANGED_FIELDS` that applies to the evaluated row ``result`` (:func:`applies`)
    and has a value: the ends ``given`` (either may be None), else the default range, widened to contain the value
    (what the Uncertainty page uses, and ``python -m economics uncertainty --default-ranges``).
    """
    ranges: dict[str, tuple[float, float]] = {}
    for field in RANGED_FIELDS:
        value = base_value(result, field)
        if value is None or not applies(field, result):
            continue
        default = default_range(field, value, result)
        lo, hi = (given or {}).get(field, (None, None))
        lo, hi = default[0] if lo is None else lo, default[1] if hi is None else hi
        ranges[field] = (min(lo, value), max(hi, value))
    return ranges
class Distribution(StrEnum):
    """How the Monte Carlo and a sweep's draws spread a field over its range: triangular, peaked at the base value,
    or uniform (``uncertainty``'s and ``sweep``'s ``--distribution``, the API's ``distribution``). The retrofit
    odds take these and one more (:class:`economics.studies.retrofit_odds.OddsDistribution`).

    >>> [d.value for d in Distribution]
    ['triangular', 'uniform']
    """

    TRIANGULAR = "triangular"
    UNIFORM = "uniform"



def ranged_fields() -> list[str]:
    """Fields that may carry a range: the numeric ones."""
    return [name for name, spec in FIELDS.items() if spec.kind.numeric]


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
    after its field's column.
    """
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


def _checked(base: Scenario, ranges: dict[str, tuple[float, float]],
             result: dict[str, Any] | None = None) -> dict[str, tuple[float, float, float]]:
    """(low, base, high) per field, each end a valid value of its field, low <= base <= high; the scenario itself
    must be valid (:class:`ScenarioError` naming every problem otherwise). ``result`` is
    :func:`economics.evaluate_scenario` of ``base`` when the caller has it (it is not evaluated again).
    """
    out = {}
    # an invalid scenario fails here (or in the caller's evaluation), loudly, naming every problem
    resolved = evaluate_scenario(base) if result is None else result
    for field, (lo, hi) in ranges.items():
        if field not in FIELDS or not FIELDS[field].kind.numeric:
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
            if not valid_number(field, end):
                as_scenario({**base.model_dump(), field: end})  # bounds, with the field's own message
        out[field] = (float(lo), float(mid), float(hi))
    return out


def valid_number(field: str, value: Any) -> bool:
    """Whether ``value`` is a valid number for the numeric ``field``: a finite float (or int, not a bool) within the
    field's bounds, whole for a count. What the scenario's parser accepts for such a value, without building a
    scenario (a value this refuses goes to the parser, for its message).

    >>> valid_number("pue", 1.2), valid_number("pue", 0.9), valid_number("accelerator_count", 8.5)
    (True, False, False)
    """
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(_valid(field, value))


def _valid(field: str, values: Any) -> np.ndarray:
    """Element-wise: a valid value of the numeric ``field`` (finite, within its bounds, whole for a count)."""
    v = np.asarray(values, dtype=float)
    return FIELDS[field].within(v) & ((FIELDS[field].kind is not FieldKind.INT) | (v == np.round(v)))


def tornado(scenario: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]],
            output: str = "cost_usd_per_m_tokens", result: dict[str, Any] | None = None) -> pd.DataFrame:
    """One-at-a-time sensitivity of ``output``: each field at its low and high, the others at base.

    Returns columns ``field``, ``low``, ``high``, ``output_at_low``, ``output_at_high``, ``base_output`` and
    ``swing`` (|high end - low end|), largest swing first. ``result`` is :func:`economics.evaluate_scenario` of the
    scenario when the caller has it (not evaluated again).
    """
    base = as_scenario(scenario)
    checked = _checked(base, ranges, result)
    out = _shared_tornado(base, checked, output)
    if out is None:
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
         distribution: Distribution = Distribution.TRIANGULAR) -> dict[str, np.ndarray]:
    """Seeded draws per field: triangular(low, mode=base, high) or uniform(low, high). Fields are drawn in
    declaration order so the same seed gives the same draws to every scenario sampled with it.
    """
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
        if FIELDS[field].kind is FieldKind.INT:
            values = np.round(values)
        out[field] = values
    return out


@lru_cache(maxsize=8)
def _drawn(checked: tuple[tuple[str, tuple[float, float, float]], ...], samples: int, seed: int,
           distribution: Distribution) -> dict[str, np.ndarray]:
    """:func:`draw`, remembered (read-only arrays): an edit of a field without a range, the same scenario rented
    for the paired comparison and the baseline draw the same numbers again.
    """
    drawn = draw(dict(checked), samples, seed, distribution)
    for values in drawn.values():
        values.setflags(write=False)
    return drawn


class MonteCarlo:
    """The draws and the outputs of a Monte Carlo.

    Its tables are built when first read, so a caller that needs one output's percentiles first (the app's KPIs)
    gets them without the rest:

    * ``samples``: the drawn inputs and every output, one row per sample (outputs Float64, <NA> where empty);
    * ``summary``: per output, ``p10``, ``p50``, ``p90`` (numpy's linear rule), ``mean`` and the ``samples``
      computed (:meth:`figures`);
    * one column of ``samples`` without the table: :meth:`column`.
    """

    def __init__(self, drawn: dict[str, np.ndarray], values: dict[str, ExtensionArray], samples: int) -> None:
        self.drawn, self.values, self.size = drawn, values, samples
        self._figures: dict[str, dict[str, Any]] = {}

    def column(self, name: str) -> np.ndarray:
        """Column ``name`` of :attr:`samples` (an output or a drawn input) as floats, NaN where a sample could not
        be computed; its own copy.
        """
        if name in self.values:
            return self.values[name].to_numpy(dtype=float, na_value=np.nan, copy=True)
        return self.drawn[name].copy()

    def figures(self, output: str) -> dict[str, Any]:
        """``output``'s row of :attr:`summary`: its percentiles and mean over the samples computed (NaN if none)."""
        if output not in self._figures:
            finite = self.column(output)
            finite = finite[~np.isnan(finite)]
            p10, p50, p90 = np.percentile(finite, [10, 50, 90]) if finite.size else (np.nan,) * 3
            self._figures[output] = {"output": output, "p10": p10, "p50": p50, "p90": p90,
                                     "mean": float(finite.mean()) if finite.size else np.nan,
                                     "samples": int(finite.size)}
        return self._figures[output]

    @cached_property
    def samples(self) -> pd.DataFrame:
        """The drawn inputs and every output, one row per sample."""
        return pd.DataFrame({**self.drawn, **self.values}, index=pd.RangeIndex(self.size))

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per output: its :meth:`figures` (p10, p50, p90, mean, samples computed)."""
        return pd.DataFrame([self.figures(name) for name in self.values])


def monte_carlo(scenario: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]], samples: int = 10_000,
                seed: int = 0, distribution: Distribution = Distribution.TRIANGULAR,
                outputs: tuple[str, ...] = ("cost_usd_per_m_tokens", "cost_usd_per_day", "gross_margin"),
                result: dict[str, Any] | None = None) -> MonteCarlo:
    """Every ranged field drawn at once, ``samples`` times, evaluated in one vectorised pass. ``result`` is
    :func:`economics.evaluate_scenario` of the scenario when the caller has it (the ranges' base values are read
    from it instead of evaluating the scenario again).

    The samples are the rows of ``evaluate(scenario_frame([scenario], varying=draws, repeat=samples))``; when the
    drawn fields cannot change how a row resolves (:func:`shared_resolution`) the scenario is resolved once and only
    the stages run over the draws (the same numbers, without validating 10,000 copies of the constant fields).
    """
    base = as_scenario(scenario)
    checked = _checked(base, ranges, result)
    drawn = _drawn(tuple(checked.items()), samples, seed, distribution)
    values = _shared_outputs(base, checked, drawn, samples, outputs)
    if values is None:
        values = _evaluated_outputs(base, drawn, samples, outputs)
    return MonteCarlo(drawn, values, samples)


def _evaluated_outputs(base: Scenario, drawn: dict[str, np.ndarray], samples: int,
                       outputs: tuple[str, ...]) -> dict[str, ExtensionArray]:
    """``outputs`` of every sample through :func:`economics.evaluate` on the repeated scenario (Float64, <NA> where
    a sample could not be computed); none computed is a :class:`ScenarioError` with the first reason.
    """
    # only the inputs that differ from the defaults as columns: the same outputs, fewer columns to validate
    result = evaluate(scenario_frame([given_fields(base.model_dump(), keep=drawn)], varying=drawn, repeat=samples))
    if not result[outputs[0]].notna().any():
        reason = next((str(e) for e in result["error"] if e), "") or next(
            (str(r) for r in result["infeasible_reason"] if r), "no sample could be computed")
        raise ScenarioError([_problem(outputs[0], f"{outputs[0]}: none of the {samples:,} samples could be "
                                                  f"computed: {reason}")])
    return {name: result[name].astype("Float64").array for name in outputs}


RANGE_ENDS = frozenset(f"{name}_{end}" for name in RANGE_OUTPUTS for end in ("low", "high"))
"""The estimate's P10/P90 outputs (``_low``, ``_high``): computed by the stages run twice more, only when asked for."""
SHARED_RESOLUTION = frozenset({*ESTIMATE_IGNORES, "output_tokens_per_s_per_accelerator"})
"""Fields whose value (any valid number) does not change how a scenario resolves: validation reads them only for
being given (a draw always is), the throughput estimate never reads them
(:data:`economics.engine.batch.ESTIMATE_IGNORES`),
and a given throughput per accelerator is used as it is, whatever its value."""


def shared_resolution(drawn: dict[str, np.ndarray]) -> bool:
    """Whether every sample resolves as any one of them does: only :data:`SHARED_RESOLUTION` fields drawn, each
    draw a valid value of its field (finite, within bounds, whole for a count).

    >>> shared_resolution({"pue": np.array([1.2, 1.5])}), shared_resolution({"pue": np.array([0.9])})
    (True, False)
    >>> shared_resolution({"input_tokens_per_request": np.array([1000.0])})  # the estimate reads it
    False
    """
    return all(f in SHARED_RESOLUTION and bool(_valid(f, v).all()) for f, v in drawn.items())


def _shared_outputs(base: Scenario, checked: dict[str, tuple[float, float, float]], drawn: dict[str, np.ndarray],
                    samples: int, outputs: tuple[str, ...]) -> dict[str, ExtensionArray] | None:
    """``outputs`` of every sample with the scenario resolved once (validation, catalog figures, throughput: each
    drawn field at its low end, :func:`shared_resolution`) and the stages run over the draws; None when that cannot
    give what :func:`_evaluated_outputs` gives (another field drawn, another output asked for, the scenario refused
    with its low ends, a sample the evaluation would leave empty, no sample of the first output computed), so the
    caller evaluates the table instead.
    """
    if not shared_resolution(drawn) or not set(outputs) <= set(OUTPUT_UNITS):
        return None
    try:
        resolved = _resolved_at(base, {f: lo for f, (lo, _mid, _hi) in checked.items()})
    except ScenarioError:
        return None
    out = _stages(resolved, drawn, samples, outputs)
    if out is None or not np.isfinite(out[outputs[0]]).any():  # none computed: the table evaluation says why
        return None
    return {name: _result_column(out[name], name in INTEGER_OUTPUTS) for name in outputs}


def _resolved_at(base: Scenario, ends: dict[str, float]) -> dict[str, np.ndarray]:
    """:func:`economics.engine.batch.resolve_scenario` of ``base`` with these range ends given (a count as an int): the
    ends were checked (:func:`_checked`), so the scenario with them needs no second validation by the schema.
    """
    return resolve_scenario(base.model_copy(update={f: int(v) if FIELDS[f].kind is FieldKind.INT else v
                                                    for f, v in ends.items()}))


def _stages(resolved: dict[str, np.ndarray], varying: dict[str, np.ndarray], rows: int,
            outputs: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """Every output of ``rows`` copies of a resolved one-row scenario with the ``varying`` columns (``rows`` long)
    in place of its own (the estimate's P10/P90 outputs only when ``outputs`` asks for one of them); None when a
    row is one :func:`economics.evaluate` reports as a problem and leaves empty (a required output not finite, a
    count beyond :data:`economics.engine.batch.MAX_COUNT`).
    """
    # the constant fields as their one value, broadcast by numpy against the varying ones: what depends on them
    # alone is computed once (the row count is read from ownership, held at full length)
    cols = {**resolved, "ownership": np.broadcast_to(resolved["ownership"], (rows,)), **varying}
    if not set(outputs) & RANGE_ENDS:  # the estimate's ends run the stages twice more, for outputs not read here
        without_range_ends(cols)
    out = {name: np.broadcast_to(v, (rows,)) for name, v in compute(cols).items()}
    if not all(np.isfinite(out[name]).all() for name in OUTPUT_UNITS if name not in OPTIONAL_OUTPUTS) or any(
            (out[name] > MAX_COUNT).any() for name in INTEGER_OUTPUTS):
        return None
    return out


def _shared_tornado(base: Scenario, checked: dict[str, tuple[float, float, float]], output: str) -> np.ndarray | None:
    """The tornado's ``output`` at the base, then at the low and the high end of each field (NaN where empty), with
    a resolution per pattern of given fields (:func:`shared_resolution`): the scenario as it is serves the base
    and the ends of the fields it gives; a field it leaves empty (a catalog figure, an estimate, the PUE of its
    cooling) is resolved given, at its low end. None when that cannot give what the table evaluation gives (see
    :func:`_shared_outputs`).
    """
    ends = {f: np.array([lo, hi]) for f, (lo, _mid, hi) in checked.items()}
    if output not in OUTPUT_UNITS or not shared_resolution(ends):
        return None
    given = [f for f in checked if getattr(base, f) is not None]
    try:
        groups = [(resolve_scenario(base), given)] + [
            (_resolved_at(base, {f: checked[f][0]}), [f]) for f in checked if f not in given]
    except ScenarioError:
        return None
    at: dict[str, np.ndarray] = {}
    for k, (resolved, fields) in enumerate(groups):
        first = 1 if k == 0 else 0  # the base row leads the scenario's own group
        varying = {f: np.full(first + 2 * len(fields), resolved[f][0]) for f in fields}
        for i, f in enumerate(fields):
            varying[f][first + 2 * i:first + 2 * i + 2] = ends[f]
        out = _stages(resolved, varying, first + 2 * len(fields), (output,))
        if out is None:
            return None
        values = np.where(np.isfinite(out[output]), out[output], np.nan)
        at.update({"": values[:1]} if first else {})
        at.update({f: values[first + 2 * i:first + 2 * i + 2] for i, f in enumerate(fields)})
    return np.concatenate([at[""], *(at[f] for f in checked)])


def _result_column(values: np.ndarray, count: bool) -> ExtensionArray:
    """An output as :func:`economics.evaluate` returns it, read as Float64: NaN or infinite as <NA>, a count through
    Int64; its own writable copy of ``values``.
    """
    own = np.array(values, dtype=float)
    column = pd.arrays.FloatingArray(own, ~np.isfinite(own))
    return pd.Series(column).astype("Int64").astype("Float64").array if count else column


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
    x, y = a.column(output), b.column(output)
    ok = ~np.isnan(x) & ~np.isnan(y)
    return float(np.mean(x[ok] < y[ok])) if ok.any() else float("nan")


def tornado_npv(study: Scenario | dict[str, Any], ranges: dict[str, tuple[float, float]],
                option: str = OptionKind.ADD_DECODE) -> pd.DataFrame:
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
