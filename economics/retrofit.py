"""What is it worth to add decode accelerators to an existing GPU fleet, against the alternatives?

For an existing fleet (``existing_accelerators`` of ``accelerator``, bought long ago: its purchase is sunk; it still
pays power, hosting and maintenance) and a demand that may grow each year, four options are evaluated year by year
over ``horizon_years`` with the ordinary engine (:func:`economics.evaluate`), at the interactivity target:

1. ``status quo``: the fleet as it is, aggregated serving;
2. ``add decode``: the GPUs move to prefill and a decode pool of ``decode_accelerator`` is added (balanced to them
   unless ``decode_accelerator_count`` is given);
3. ``more of the same``: enough additional ``accelerator`` to serve the last year's demand;
4. ``new generation``: the fleet replaced by ``new_accelerator`` sized for the last year's demand, with the liquid
   retrofit where the facility is air-cooled and the hardware needs it;

plus any option the caller defines. Cash flows per year t: revenue - opex (energy, hosting, maintenance, software,
rent: the engine's cost without its capital charges), and the purchases and retrofit at t = 0. Each option is
compared with the status quo on the difference of cash flows: NPV at ``cost_of_capital`` (numpy-financial), IRR
and payback. The levelized cost per M tokens is PV(capex + opex) / PV(tokens served) x 10^6. The decode
accelerator's break-even price is the price at which option 2's NPV equals the best alternative's (NPV is linear
in that price).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .batch import (
    MAX_COUNT,
    ScenarioError,
    _scalar,
    as_scenario,
    evaluate,
    evaluate_scenario,
    resolve_scenario,
)
from .compare import scenario_frame
from .estimate import THROUGHPUT_OUTPUTS
from .finance import HOURS_PER_YEAR, capital_recovery_factor, irr, npv_usd, payback_years
from .pipeline import INTEGER_OUTPUTS, OPTIONAL_OUTPUTS, OUTPUT_UNITS, compute
from .scenario import FIELDS, Scenario, with_changes

DAYS_PER_YEAR = 365.0


@dataclass
class Option:
    """An option: the scenario changes that describe its fleet, and what it buys at t = 0 besides retrofits."""

    name: str
    description: str
    changes: dict[str, Any]
    purchases: list[tuple[str, str]] = field(default_factory=list)  # (count output column, price input column)


@dataclass
class RetrofitResult:
    """The options and cash flows, as rows (``rows``, ``flows``: read them, never change them) and as tables
    (:attr:`options`, :attr:`cashflows`, built when first read), and the engine's results per option and year
    (:attr:`years`)."""

    rows: list[dict[str, Any]]
    flows: list[dict[str, Any]]
    break_even_decode_price_usd: float | None
    option_years: list[tuple[str, _Years]] = field(repr=False)

    @cached_property
    def options(self) -> pd.DataFrame:
        """One row per option, in option order, columns :data:`OPTION_COLUMNS`."""
        return pd.DataFrame(self.rows, columns=list(OPTION_COLUMNS))

    @cached_property
    def cashflows(self) -> pd.DataFrame:
        """Each option's cash flows, year 0 to the horizon (see :func:`_flows`)."""
        return pd.DataFrame(self.flows)

    @cached_property
    def years(self) -> pd.DataFrame:
        """Every option's year rows as :func:`economics.evaluate` gives them, with ``option`` and ``year`` (1 to the
        horizon): built when first read (a page that shows only the options table never builds it)."""
        out = pd.concat([part.frame for _, part in self.option_years], ignore_index=True)
        out["option"] = [name for name, part in self.option_years for _ in range(len(part.frame))]
        out["year"] = [t for _, part in self.option_years for t in range(1, len(part.frame) + 1)]
        return out

    def row(self, option: str) -> dict[str, Any] | None:
        """The options-table row of ``option`` (None when it is not studied)."""
        return next((r for r in self.rows if r["option"] == option), None)


OPTION_COLUMNS = ("option", "description", "feasible", "reason", "capex_usd", "opex_usd_per_year",
                  "revenue_usd_per_year", "capacity_output_tokens_per_year", "served_tokens_per_year",
                  "output_tokens_per_s_per_user", "levelized_cost_usd_per_m_tokens", "npv_vs_status_quo_usd",
                  "irr_vs_status_quo", "payback_months", "accelerators", "decode_accelerators", "facility_mw", "racks")
"""Columns of the options table, in order."""


def standard_options(s: Scenario) -> list[Option]:
    """The four options of the module docstring, from the scenario's fields."""
    e = s.existing_accelerators
    if e is None:
        raise ValueError("existing_accelerators: give the size of the existing fleet for a retrofit study")
    common = {"decode_accelerator": None, "decode_accelerator_count": None}
    # the existing fleet's purchase is sunk: cash flows leave out every capital charge, and its maintenance is
    # figured on the accelerator's price in every option (never on its book value)
    existing = {"accelerator_count": e}
    options = [Option("status quo", f"{e} x {s.accelerator}, as they are", {**common, **existing})]
    if s.decode_accelerator:
        options.append(Option(
            "add decode", f"{e} x {s.accelerator} do prefill; a decode pool of {s.decode_accelerator} is added",
            {"accelerator_count": e, "decode_accelerator": s.decode_accelerator,
             "decode_accelerator_count": s.decode_accelerator_count},
            [("decode_accelerators", "decode_accelerator_price_usd")]))
    options.append(Option(
        "more of the same", f"more {s.accelerator} for the last year's demand",
        {**common, "accelerator_count": None, "existing": e}, [("added_accelerators", "accelerator_price_usd")]))
    if s.new_accelerator:
        options.append(Option(
            "new generation", f"the fleet replaced by {s.new_accelerator} (liquid retrofit where needed)",
            {**common, "accelerator": s.new_accelerator, "accelerator_count": None, "allow_liquid_retrofit": True,
             "output_tokens_per_s_per_accelerator": None, "input_tokens_per_s_per_accelerator": None,
             "accelerators_per_replica": None},
            [("accelerators", "accelerator_price_usd")]))
    return options


def _year_rows(s: Scenario, options: list[Option]) -> list[list[dict[str, Any]]]:
    """Per option, one scenario row per year; fleets sized from demand are sized for the last year."""
    out = []
    for opt in options:
        changes = {c: v for c, v in opt.changes.items() if c != "existing"}
        fleet = with_changes(s, **changes)
        out.append([_grown(fleet, (1.0 + s.demand_growth_per_year) ** (year - 1))
                    for year in range(1, s.horizon_years + 1)])
    return out


@dataclass
class _Years:
    """One option's year rows evaluated, and what the study reads of them, read once per rows (the options an
    edit does not change are not read again). Evaluated one of three ways: ``records``, the single-scenario
    results of every row; ``table``, the table path's (a row is invalid); or, for rows of one shape
    (:func:`_shape`), ``head`` (the first row's single-scenario result: inputs, outputs, throughput estimate) and
    ``known`` (:data:`YEAR_NUMBERS` of every row) from a vectorised pass (:func:`_by_demand`, :func:`_together`),
    whose table is built from ``rows`` only when read. Read it, never change it."""

    rows: list[dict[str, Any]]
    records: list[dict[str, Any]] | None = None
    table: pd.DataFrame | None = None
    head: dict[str, Any] | None = None
    known: dict[str, np.ndarray] | None = None

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
            head = self.head if self.head is not None else (self.records or [{}])[0]
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
    is invalid, which then names the problem in that row (``valid`` False, ``error``)."""
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
    then gives the rows, with their reasons and errors)."""
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


def _one_shape(rows: list[dict[str, Any]]) -> bool:
    """Whether the rows differ at most in the values of :data:`VARYING_FIELDS` (not in which are given)."""
    shape = _shape(rows[0])
    return all(_shape(r) == shape for r in rows[1:])


def _shape(row: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A scenario row without the values of :data:`VARYING_FIELDS` (only which are given).

    >>> _shape({"accelerator": "h100-sxm", "demand_output_tokens_per_day": 2e10, "price_usd_per_m_output_tokens": None})
    (('accelerator', 'h100-sxm'), ('demand_output_tokens_per_day', True), ('price_usd_per_m_output_tokens', False))
    """
    return tuple((k, v is not None if k in VARYING_FIELDS else v) for k, v in row.items())


@lru_cache(maxsize=256)
def _seen(shape: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """What :func:`_by_demand` remembers of rows of this shape (empty until it has checked one)."""
    return {}


def _first_result(out: dict[str, np.ndarray], fixed: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The first row's single-scenario result (inputs, outputs, throughput estimate; not its feasibility or
    warnings) from the vectorised pass, the row's own varying fields and what its shape fixes (``fixed``: the
    inputs, empty varying fields included, and the throughput estimate), keyed and typed as
    :func:`economics.evaluate_scenario` gives it (None where empty, whole numbers as int)."""
    varying = {f: _scalar(row[f], FIELDS[f].kind == "int") for f in VARYING_FIELDS if row[f] is not None}
    return {**fixed, **varying, **{c: _scalar(out[c][0], c in INTEGER_OUTPUTS) for c in OUTPUT_UNITS}}


def _from_pass(rows: list[dict[str, Any]], out: dict[str, np.ndarray], fixed: dict[str, Any]) -> _Years | None:
    """An option's years from the outputs of a vectorised pass over its rows and what their shape fixes
    (:func:`_first_result`), or None when a row would be refused as the single-scenario path refuses it (an output
    that could not be computed, a count too large to be real) or a fleet does not fit (its reason is needed)."""
    if np.any(out["fleet_flags"] != 0):
        return None
    required = np.array([out[c] for c in REQUIRED_OUTPUTS], dtype=float)
    counts = np.array([out[c] for c in COUNT_OUTPUTS], dtype=float)
    if not np.all(np.isfinite(required)) or np.any(counts > MAX_COUNT):
        return None
    first = _first_result(out, fixed, rows[0])
    return _Years(rows, head=first, known=_year_numbers(out, first, len(rows)))


REQUIRED_OUTPUTS = tuple(c for c in OUTPUT_UNITS if c not in OPTIONAL_OUTPUTS)
COUNT_OUTPUTS = tuple(c for c in OUTPUT_UNITS if c in INTEGER_OUTPUTS)


def _year_numbers(out: dict[str, np.ndarray], head: dict[str, Any], n: int) -> dict[str, np.ndarray]:
    """:data:`YEAR_NUMBERS` of ``n`` rows from a vectorised pass, each number as the single-scenario result would
    hold it (NaN where it is empty, whole for a count; the per-user speed is the throughput estimate's, which does
    not depend on demand), read-only."""
    known = {}
    for c in YEAR_NUMBERS:
        if c in OUTPUT_UNITS:
            v = np.asarray(out[c], dtype=float)
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
_REMEMBERED: OrderedDict[tuple[tuple[tuple[str, Any], ...], ...], _Years] = OrderedDict()
_LOCK = threading.Lock()


def _evaluate_all(groups: list[list[dict[str, Any]]]) -> list[_Years]:
    """:func:`economics.evaluate` of each group of scenario rows, remembered per group (a pure function of its
    rows): a study re-run with one option changed (a new decode price) evaluates that option only. The groups not
    remembered whose shape is known go through one vectorised pass together (:func:`_together`), the others
    through :func:`_by_demand` or :func:`_exact`. The remembered results themselves: read them, never change
    them."""
    keys = [tuple(tuple(r.items()) for r in rows) for rows in groups]
    with _LOCK:
        found: list[_Years | None] = [_REMEMBERED.get(k) for k in keys]
        for k, years in zip(keys, found, strict=True):
            if years is not None:
                _REMEMBERED.move_to_end(k)
    todo = [i for i, years in enumerate(found) if years is None]
    seen = {i: _seen(_shape(groups[i][0])) for i in todo}
    known = [i for i in todo if "resolved" in seen[i] and _one_shape(groups[i])]  # set last: "fixed" is there
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
    :func:`economics.batch.evaluate_variants` does for one, the groups one after the other. A group whose rows
    would not all be valid and feasible without a reason comes back None; every group does when their resolved
    scenarios do not line up (other columns or types) or a demand is out of bounds."""
    if not groups:
        return []
    bases: list[dict[str, np.ndarray]] = [one["resolved"] for one in seen]
    names = list(bases[0])
    if any(list(b) != names or any(b[n].dtype != bases[0][n].dtype for n in names) for b in bases[1:]):
        return [None] * len(groups)
    sizes = [len(rows) for rows in groups]
    cols = {n: np.repeat(np.concatenate([b[n] for b in bases]), sizes) for n in names}
    for f in VARYING_FIELDS:  # the rows' values where given; else the resolved one (empty, or a catalog figure)
        given = np.array([r[f] is not None for rows in groups for r in rows])
        values = cols[f].astype(float)
        values[given] = [float(r[f]) for rows in groups for r in rows if r[f] is not None]
        if np.any(given & ~FIELDS[f].within(values)):
            return [None] * len(groups)
        cols[f] = values
    out = compute(cols)
    ends = np.cumsum(sizes)
    return [_from_pass(rows, {n: v[end - k:end] for n, v in out.items()}, one["fixed"])
            for rows, one, k, end in zip(groups, seen, sizes, ends, strict=True)]


DEMAND_FIELDS = ("demand_output_tokens_per_day", "demand_input_tokens_per_day", "demand_requests_per_s")
"""Every form the demand may take: growth scales whichever is given."""
VARYING_FIELDS = (*DEMAND_FIELDS, "accelerator_count", "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens",
                  "price_usd_per_m_cached_input_tokens", "decode_accelerator_price_usd")
"""What rows of one shape may differ in (:func:`_shape`), given or not alike: the demand (an option's years; an
edit), the fleet size (sized from the last year's demand), the selling prices and the decode price (edits). A
given value of these changes nothing in how a scenario resolves (catalog figures, throughput estimate): the
vectorised pass takes them per row, as :func:`economics.batch.evaluate_variants` does its
:data:`~economics.batch.VARIANT_FIELDS` (all but the decode price, whose given value is likewise only checked
against its bounds)."""


def _grown(row: dict[str, Any], scale: float) -> dict[str, Any]:
    """``row`` with its demand, in whatever form it is given, times ``scale``."""
    return {**row, **{d: None if row.get(d) is None else row[d] * scale for d in DEMAND_FIELDS}}


def _sized_counts(s: Scenario, options: list[Option], fresh: bool = False) -> dict[int, float]:
    """Fleet sizes of the options sized from demand, for the last year's demand (whole systems)."""
    last = (1.0 + s.demand_growth_per_year) ** (s.horizon_years - 1)
    rows, keys = [], []
    for k, opt in enumerate(options):
        if opt.changes.get("accelerator_count", "given") is None:
            rows.append(_grown(with_changes(s, **{c: v for c, v in opt.changes.items() if c != "existing"}), last))
            keys.append(k)
    if not rows:
        return {}
    sizes = {}
    for k, n in zip(keys, _fleet_sizes(rows, fresh), strict=True):
        existing = options[k].changes.get("existing", 0) or 0
        unsized = n is None or n is pd.NA or not math.isfinite(float(n))  # NaN: max() below would drop it
        sizes[k] = float("nan") if unsized else float(max(existing, n))
    return sizes


def _fleet_sizes(rows: list[dict[str, Any]], fresh: bool) -> list[Any]:
    """The ``accelerators`` each row's fleet comes to (a count; None, NaN or <NA> where it has none): each row
    remembered on its own (a demand edit then evaluates each again, in a vectorised pass of one when it is valid
    and feasible), or, ``fresh``, the rows together with nothing remembered."""
    if fresh:
        return _exact(rows).column("accelerators")
    return [part.first({"accelerators"})["accelerators"] for part in _evaluate_all([[row] for row in rows])]


def analyse(scenario: Scenario | dict[str, Any], extra_options: list[Option] | None = None,
            decode_price_override: float | None = None, *, fresh: bool = False) -> RetrofitResult:
    """Evaluate the retrofit options of ``scenario`` (see the module docstring).

    Each option's years are remembered per their scenario rows, and the options not remembered are evaluated in
    one vectorised pass (:func:`_evaluate_all`); ``fresh``: every row evaluated on its own and nothing
    remembered, the reference the tests hold that path to (same numbers, slower)."""
    s = as_scenario(scenario)
    options = standard_options(s) + list(extra_options or [])
    if decode_price_override is not None:
        for opt in options:
            if opt.name == "add decode":
                opt.changes = {**opt.changes, "decode_accelerator_price_usd": decode_price_override}
    sizes = _sized_counts(s, options, fresh)
    for k, n in sizes.items():
        if np.isfinite(n):
            options[k].changes = {**options[k].changes, "accelerator_count": int(n)}
    years = _year_rows(s, options)
    parts = [_exact(rows) for rows in years] if fresh else _evaluate_all(years)
    rows, flows = [], []
    status_quo_net: np.ndarray | None = None
    for k, (opt, part) in enumerate(zip(options, parts, strict=True)):
        y = part.numbers
        first = part.first({*FIRST_YEAR, *(c for pair in opt.purchases for c in pair)})
        capex = _capex(opt, first, options[k].changes.get("existing", 0) or 0, s)
        revenue_y = _revenue_per_year(y, s)
        opex_y = y["cost_usd_per_year"] - (y["capital_usd_per_hour"] + y["cooling_retrofit_usd_per_hour"]) \
            * HOURS_PER_YEAR
        net = np.concatenate([[-capex], revenue_y - opex_y])
        if status_quo_net is None:
            status_quo_net = net
        row = _option_row(opt, part, capex, opex_y, net, net - status_quo_net, k > 0, s)
        rows.append({**row, **_first_year_row(first, opex_y, revenue_y)})
        flows += _flows(opt.name, capex, revenue_y, opex_y, net, net - status_quo_net)
    return RetrofitResult(rows, flows, None, [(opt.name, part) for opt, part in zip(options, parts, strict=True)])


FIRST_YEAR = ("accelerators", "decode_accelerators", "facility_power_kw", "racks", "capacity_output_tokens_per_day",
              "output_tokens_per_s_per_user", "cooling_retrofit_usd_per_hour")
"""Outputs of an option's first year that its row of the options table reads (with its purchases' columns)."""
YEAR_NUMBERS = ("capital_usd_per_hour", "cooling_retrofit_usd_per_hour", "cost_usd_per_year", "revenue_usd_per_day",
                "served_input_tokens_per_day", "served_output_tokens_per_day", "output_tokens_per_s_per_user")
"""Outputs of an option's years that its cash flows read, as float arrays (NaN where empty)."""


def _first_year_row(first: dict[str, Any], opex_y: np.ndarray, revenue_y: np.ndarray) -> dict[str, Any]:
    """The first-year figures of an option's row of the options table."""
    return {"opex_usd_per_year": float(opex_y[0]), "revenue_usd_per_year": float(revenue_y[0]),
            "capacity_output_tokens_per_year": _float(first["capacity_output_tokens_per_day"]) * DAYS_PER_YEAR,
            "output_tokens_per_s_per_user": _float(first["output_tokens_per_s_per_user"]),
            "accelerators": _float(first["accelerators"]), "decode_accelerators": _float(first["decode_accelerators"]),
            "facility_mw": _float(first["facility_power_kw"]) / 1000.0, "racks": _float(first["racks"])}


def _flows(name: str, capex: float, revenue_y: np.ndarray, opex_y: np.ndarray, net: np.ndarray,
           incremental: np.ndarray) -> list[dict[str, Any]]:
    """An option's cash flows, year 0 (the purchases) to the horizon, and their difference from the status quo."""
    return [{"option": name, "year": t, "capex_usd": capex if t == 0 else 0.0,
             "revenue_usd": 0.0 if t == 0 else float(revenue_y[t - 1]),
             "opex_usd": 0.0 if t == 0 else float(opex_y[t - 1]), "net_usd": float(value),
             "vs_status_quo_usd": float(inc)} for t, (value, inc) in enumerate(zip(net, incremental, strict=True))]


def _option_row(opt: Option, part: _Years, capex: float, opex_y: np.ndarray, net: np.ndarray,
                incremental: np.ndarray, compared: bool, s: Scenario) -> dict[str, Any]:
    """Feasibility, levelized cost, NPV, IRR and payback of one option against the status quo (``compared``:
    it is not the status quo itself)."""
    y, (feasible, reason) = part.numbers, part.status
    r = s.cost_of_capital
    tokens_y = (y["served_input_tokens_per_day"] + y["served_output_tokens_per_day"]) * DAYS_PER_YEAR
    disc = (1.0 + r) ** -np.arange(1, s.horizon_years + 1)
    levelized = (capex + float(np.sum(opex_y * disc))) / float(np.sum(tokens_y * disc)) * 1e6 \
        if feasible else float("nan")
    same = bool(np.all(np.abs(incremental) <= 1e-9 * max(1.0, float(np.max(np.abs(net))))))
    pb = payback_years(incremental) if feasible and compared and not same else None
    return {"option": opt.name, "description": opt.description, "feasible": feasible, "reason": reason,
            "capex_usd": capex, "served_tokens_per_year": float(np.mean(tokens_y)),
            "levelized_cost_usd_per_m_tokens": levelized,
            "npv_vs_status_quo_usd": npv_usd(r, incremental) if feasible else float("nan"),
            "irr_vs_status_quo": irr(incremental) if feasible and compared and not same else None,
            "payback_months": None if pb is None else pb * 12.0}


def _float(v: Any) -> float:
    return float("nan") if v is None or v is pd.NA else float(v)


def _capex(opt: Option, first: dict[str, Any], existing: float, s: Scenario) -> float:
    """Purchases at t = 0 (new accelerators at their price) and the liquid-cooling retrofit, if any."""
    total = 0.0
    for count_col, price_col in opt.purchases:
        price = _float(first[price_col])
        if count_col == "added_accelerators":
            count = max(0.0, _float(first["accelerators"]) - existing)
        else:
            count = _float(first[count_col])
        total += count * price
    if _float(first["cooling_retrofit_usd_per_hour"]) > 0:
        # the engine charges the retrofit as an annuity; the cash flow is its capex, recovered from that annuity
        crf = float(capital_recovery_factor(s.cost_of_capital, s.facility_depreciation_years))
        total += _float(first["cooling_retrofit_usd_per_hour"]) * HOURS_PER_YEAR / crf
    return total


def _revenue_per_year(y: dict[str, np.ndarray], s: Scenario) -> np.ndarray:
    """Revenue per year; output tokens sell at the fast-tier price when the option's users see that speed."""
    rev = np.nan_to_num(y["revenue_usd_per_day"], nan=0.0) * DAYS_PER_YEAR
    threshold = s.fast_tier_min_tokens_per_s_per_user
    if threshold is None or s.fast_tier_price_multiplier == 1.0 or s.price_usd_per_m_output_tokens is None:
        return rev
    # the per-user speed: estimated, or the target at which the measured throughput was given
    target = s.target_output_tokens_per_s_per_user
    speed = np.nan_to_num(y["output_tokens_per_s_per_user"], nan=0.0 if target is None else float(target))
    extra = (y["served_output_tokens_per_day"] * DAYS_PER_YEAR / 1e6
             * s.price_usd_per_m_output_tokens * (s.fast_tier_price_multiplier - 1.0))
    return rev + np.where(speed >= threshold, extra, 0.0)


def break_even_decode_price_usd(scenario: Scenario | dict[str, Any], *, fresh: bool = False) -> float | None:
    """Most the decode accelerator can cost and still make 'add decode' as good as the best alternative
    (negative: even free it does not beat it).

    NPV of 'add decode' against the status quo is linear in the decode price p (purchase and maintenance scale
    with it): NPV(p) = a - b p. The break-even p* solves NPV(p*) = max(0, NPV of the other feasible options).
    None when 'add decode' is not feasible or not studied. ``fresh``: as :func:`analyse`'s.
    """
    s = as_scenario(scenario)
    if not s.decode_accelerator:
        return None
    base = analyse(s, fresh=fresh)
    decode = base.row("add decode")
    if decode is None or not decode["feasible"]:
        return None
    others = [r["npv_vs_status_quo_usd"] for r in base.rows if r["option"] != "add decode" and r["feasible"]]
    best = float(np.nanmax(np.append(np.array(others, dtype=float), 0.0)))
    part = next(part for name, part in base.option_years if name == "add decode")
    p0 = _float(part.first({"decode_accelerator_price_usd"})["decode_accelerator_price_usd"])
    n0 = float(decode["npv_vs_status_quo_usd"])
    dearer = analyse(s, decode_price_override=p0 + 1000.0, fresh=fresh).row("add decode")
    assert dearer is not None  # the same options as base
    n1 = float(dearer["npv_vs_status_quo_usd"])
    slope = (n0 - n1) / 1000.0
    if slope <= 0:
        return None
    return p0 + (n0 - best) / slope
