"""What it is worth to add decode accelerators to an existing GPU fleet, against the alternatives.

For an existing fleet (``existing_accelerators`` of ``accelerator``, bought long ago: its purchase is sunk; it still
pays power, hosting and maintenance) and a demand that may grow each year, four options are evaluated year by year
over ``horizon_years`` with the ordinary engine (:func:`economics.evaluate`), at the interactivity target:

1. ``status quo``: the fleet as it is, aggregated serving;
2. ``add decode``: the GPUs move to prefill and a decode pool of ``decode_accelerator`` is added (balanced to them
   unless ``decode_accelerator_count`` is given);
3. ``more of the same``: enough additional ``accelerator`` to serve the last year's demand, bought at once;
4. ``more of the same, as demand grows``: the same GPUs bought year by year, each year's fleet sized for that year's
   demand (an expansion schedule);
5. ``new generation``: the fleet replaced by ``new_accelerator`` sized for the last year's demand, with the liquid
   retrofit where the facility is air-cooled and the hardware needs it; and 6. ``new generation, as demand grows``;

plus any option the caller defines. Every option faces the same demand path; a fleet of fixed size (the status quo,
the decode pool balanced to the existing GPUs) serves what it can, and each year's share served and the revenue it
turns away are reported (:mod:`economics.studies.retrofit_cash`). Cash flows per year t: revenue - opex (energy,
hosting, maintenance, software, rent: the engine's cost without its capital charges), the purchases and retrofit when
they are made (t = 0, or the start of the year that needs them), and at the horizon the resale of what was bought
(``residual_value_fraction`` of its price). Each option is compared with the status quo on the
difference of cash flows: NPV at ``cost_of_capital`` (numpy-financial), IRR and payback. The levelized cost per M
tokens is PV(capex + opex) / PV(tokens served) x 10^6. The decode accelerator's break-even price is the price at
which option 2's NPV equals the best alternative's (NPV is linear in that price).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from economics.domain.finance import growth_factors, irr, npv_usd, payback_years
from economics.domain.formula import DAYS_PER_YEAR
from economics.engine.batch import as_scenario
from economics.schema.scenario import Scenario, with_changes
from economics.schema.validation import CONTEXT_CURVE
from economics.studies.retrofit_cash import (
    flow_rows,
    forgone_revenue_y_usd,
    lease_t_usd,
    levelized_usd_per_m_tokens,
    net_t_usd,
    opex_y_usd,
    purchases_t_usd,
    residual_t_usd,
    retrofit_t_usd,
    revenue_y_usd,
)
from economics.studies.retrofit_decode import decode_options
from economics.studies.retrofit_years import (  # noqa: F401  (DEMAND_FIELDS and _forget: part of the study's interface)
    DEMAND_FIELDS,
    YEAR_NUMBERS,
    _evaluate_all,
    _exact,
    _float,
    _forget,
    _grown,
    _Years,
)


class OptionKind(StrEnum):
    """The standard options of the study (the module docstring's), by kind. The value is the option's name in the
    options and cash-flow tables (``option``); code tells the options apart by member, never by the text.
    """

    STATUS_QUO = "status quo"
    ADD_DECODE = "add decode"
    MORE_OF_THE_SAME = "more of the same"
    MORE_OF_THE_SAME_AS_DEMAND_GROWS = "more of the same, as demand grows"
    NEW_GENERATION = "new generation"
    NEW_GENERATION_AS_DEMAND_GROWS = "new generation, as demand grows"


@dataclass
class Option:
    """An option: the scenario changes that describe its fleet, and what it buys at t = 0 besides retrofits."""

    name: str
    """The option's name: an :class:`OptionKind` for a standard option, any other text for a caller's own."""
    description: str
    changes: dict[str, Any]
    purchases: list[tuple[str, str]] = field(default_factory=list)  # (count output column, price input column)
    sizing: str = ""
    """How the option's fleet is sized, in words (shown beside its figures)."""
    schedule: bool = False
    """Sized year by year for each year's demand and bought when needed, instead of once for the last year."""


@dataclass
class RetrofitResult:
    """The options and cash flows, as rows (``rows``, ``flows``: read them, never change them) and as tables
    (:attr:`options`, :attr:`cashflows`, built when first read), and the engine's results per option and year
    (:attr:`years`).
    """

    rows: list[dict[str, Any]]
    flows: list[dict[str, Any]]
    break_even_decode_price_usd: float | None
    option_years: list[tuple[str, _Years]] = field(repr=False)
    studied: list[Option] = field(default_factory=list, repr=False)
    """The options as evaluated (their changes with the fleet sizes found), in order."""

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
        horizon): built when first read (a page that shows only the options table never builds it).
        """
        out = pd.concat([part.frame for _, part in self.option_years], ignore_index=True)
        labels = pd.DataFrame({  # joined whole: inserted one by one into a frame of ~250 columns pandas warns
            "option": [name for name, part in self.option_years for _ in range(len(part.frame))],
            "year": [t for _, part in self.option_years for t in range(1, len(part.frame) + 1)]})
        return pd.concat([out, labels], axis=1)

    @cached_property
    def shortfall(self) -> pd.DataFrame:
        """The years in which an option cannot serve the whole demand, in option order: ``option``, ``year``,
        ``served_share`` and ``forgone_revenue_usd`` (the revenue the rest would have brought); every year of such
        an option, so that its path reads whole. Empty when every option serves every year.
        """
        flows = self.cashflows[self.cashflows["year"] > 0]
        short = set(flows.loc[flows["served_share"].fillna(1.0) < 1.0 - 1e-9, "option"])
        order = [r["option"] for r in self.rows if r["option"] in short]
        out = flows[flows["option"].isin(short)][["option", "year", "served_share", "forgone_revenue_usd"]]
        return out.assign(_k=out["option"].map(order.index)).sort_values(["_k", "year"]).drop(columns="_k")

    def row(self, option: str) -> dict[str, Any] | None:
        """The options-table row of ``option`` (None when it is not studied)."""
        return next((r for r in self.rows if r["option"] == option), None)


OPTION_COLUMNS = ("option", "description", "sizing", "feasible", "reason", "capex_usd", "retrofit_capex_usd",
                  "residual_value_usd", "opex_usd_per_year", "revenue_usd_per_year", "capacity_output_tokens_per_year",
                  "served_tokens_per_year", "lowest_served_share", "forgone_revenue_usd",
                  "output_tokens_per_s_per_user", "levelized_cost_usd_per_m_tokens", "npv_vs_status_quo_usd",
                  "npv_leased_vs_status_quo_usd", "npv_at_cost_of_capital_minus_2pt_usd",
                  "npv_at_cost_of_capital_plus_2pt_usd", "irr_vs_status_quo", "payback_months", "accelerators",
                  "decode_accelerators", "facility_mw", "racks")
"""Columns of the options table, in order."""


def standard_options(s: Scenario) -> list[Option]:
    """The options of the module docstring, from the scenario's fields, each with its sizing rule in words."""
    e = s.existing_accelerators
    if e is None:
        raise ValueError("existing_accelerators: give the size of the existing fleet for a retrofit study")
    # a speed-against-context curve of the decode pool goes with it (on the main pool it stays)
    common = {"decode_accelerator": None, "decode_accelerator_count": None,
              **(dict.fromkeys(CONTEXT_CURVE) if s.decode_accelerator else {})}
    # the existing fleet's purchase is sunk: cash flows leave out every capital charge, and its maintenance is
    # figured on the accelerator's price in every option (never on its book value)
    existing = {"accelerator_count": e}
    last = f"the last year's demand (year {s.horizon_years})"
    options = [Option(OptionKind.STATUS_QUO, f"{e:,} x {s.accelerator}, as they are", {**common, **existing},
                      sizing=f"fixed: the existing {e:,} GPUs; each year they serve what they can")]
    if s.decode_accelerator:
        pool = (f"{s.decode_accelerator_count} decode accelerators (given)" if s.decode_accelerator_count else
                "a decode pool balanced to their prefill")
        options.append(Option(
            OptionKind.ADD_DECODE,
            f"{e:,} x {s.accelerator} do prefill; a decode pool of {s.decode_accelerator} is added",
            {"accelerator_count": e, "decode_accelerator": s.decode_accelerator,
             "decode_accelerator_count": s.decode_accelerator_count},
            [("decode_accelerators", "decode_accelerator_price_usd")],
            sizing=f"fixed: the existing {e:,} GPUs prefill, {pool}, bought in year 0; each year they serve what "
                   "they can"))
    grow = {**common, "accelerator_count": None, "existing": e}
    options.append(Option(
        OptionKind.MORE_OF_THE_SAME, f"more {s.accelerator} for the last year's demand", grow,
        [("added_accelerators", "accelerator_price_usd")],
        sizing=f"the existing {e:,} GPUs and more {s.accelerator}, all bought in year 0, sized for {last}"))
    options.append(Option(
        OptionKind.MORE_OF_THE_SAME_AS_DEMAND_GROWS, f"more {s.accelerator}, bought as demand grows", dict(grow),
        [("added_accelerators", "accelerator_price_usd")],
        sizing=f"the existing {e:,} GPUs and more {s.accelerator} bought at the start of each year, sized for "
               "that year's demand", schedule=True))
    if s.new_accelerator:
        new = {**common, "accelerator": s.new_accelerator, "accelerator_count": None, "allow_liquid_retrofit": True,
               "output_tokens_per_s_per_accelerator": None, "input_tokens_per_s_per_accelerator": None,
               "accelerators_per_replica": None}
        cooling = "; a liquid-cooling retrofit where the hall is air-cooled and the hardware needs it"
        options.append(Option(
            OptionKind.NEW_GENERATION, f"the fleet replaced by {s.new_accelerator} (liquid retrofit where needed)", new,
            [("accelerators", "accelerator_price_usd")],
            sizing=f"the existing GPUs retired; {s.new_accelerator} bought in year 0 for {last}{cooling}"))
        options.append(Option(
            OptionKind.NEW_GENERATION_AS_DEMAND_GROWS,
            f"the fleet replaced by {s.new_accelerator}, bought as demand grows",
            dict(new), [("accelerators", "accelerator_price_usd")],
            sizing=f"the existing GPUs retired; {s.new_accelerator} bought at the start of each year for that "
                   f"year's demand{cooling}", schedule=True))
    return options


def _year_rows(s: Scenario, options: list[Option], schedules: dict[int, list[int]] | None = None
               ) -> list[list[dict[str, Any]]]:
    """Per option, one scenario row per year; fleets sized from demand are sized for the last year, or, on a
    schedule (``schedules``: the option's fleet size in each year), for each year's.
    """
    out = []
    for k, opt in enumerate(options):
        fleet = _fleet(s, opt)
        rows = [_grown(fleet, _growth(s, year)) for year in range(1, s.horizon_years + 1)]
        if schedules and k in schedules:
            rows = [{**row, "accelerator_count": n} for row, n in zip(rows, schedules[k], strict=True)]
        out.append(rows)
    return out


def _fleet(s: Scenario, opt: Option) -> dict[str, Any]:
    """The scenario row of an option's fleet: the scenario with the option's changes (``existing``, the fleet it
    keeps, is the study's, not a field).
    """
    return with_changes(s, **{c: v for c, v in opt.changes.items() if c != "existing"})


def _growth(s: Scenario, year: int) -> float:
    """Demand in ``year`` (1 = the first) over the first year's (:func:`economics.domain.finance.growth_factors`)."""
    return float(growth_factors(s.demand_growth_per_year, year))


def _schedule_counts(s: Scenario, options: list[Option], fresh: bool = False) -> dict[int, list[int]]:
    """Fleet sizes, year by year, of the options on a schedule: each year's fleet sized for that year's demand, never
    smaller than the year before nor than the existing fleet it keeps. An option whose fleet cannot be sized in
    some year (it does not fit) is left out: sized for the last year, it then says why. The rows of every option on
    a schedule are sized in one pass of the engine (each row remembered on its own, as one option's would be).
    """
    scheduled = [k for k, opt in enumerate(options) if opt.schedule]
    fleets = {k: _fleet(s, options[k]) for k in scheduled}  # once per option, not per year
    rows = {k: [_grown(fleets[k], _growth(s, year)) for year in range(1, s.horizon_years + 1)] for k in scheduled}
    if fresh:  # the reference path: each option's rows on their own
        found = {k: _fleet_sizes(rows[k], fresh) for k in scheduled}
    else:
        every = _fleet_sizes([row for k in scheduled for row in rows[k]], fresh)
        found = {k: every[i * s.horizon_years:(i + 1) * s.horizon_years] for i, k in enumerate(scheduled)}
    out = {}
    for k in scheduled:
        sizes = [_float(n) for n in found[k]]
        if all(math.isfinite(n) for n in sizes):
            existing = float(options[k].changes.get("existing", 0) or 0)
            out[k] = [int(n) for n in np.maximum.accumulate(np.maximum(existing, np.array(sizes)))]
    return out


def _sized_counts(s: Scenario, options: list[Option], fresh: bool = False,
                  skip: set[int] | None = None) -> dict[int, float]:
    """Fleet sizes of the options sized from demand, for the last year's demand (whole systems); ``skip``: options
    sized otherwise (on a schedule).
    """
    last = _growth(s, s.horizon_years)
    rows, keys = [], []
    for k, opt in enumerate(options):
        if opt.changes.get("accelerator_count", "given") is None and k not in (skip or set()):
            rows.append(_grown(_fleet(s, opt), last))
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
    and feasible), or, ``fresh``, the rows together with nothing remembered.
    """
    if fresh:
        return _exact(rows).column("accelerators")
    return [part.first({"accelerators"})["accelerators"] for part in _evaluate_all([[row] for row in rows])]


def analyse(scenario: Scenario | dict[str, Any], extra_options: list[Option] | None = None,
            decode_price_override: float | None = None, *, fresh: bool = False,
            only: Collection[str] | None = None) -> RetrofitResult:
    """Evaluate the retrofit options of ``scenario`` (see the module docstring).

    Each option's years are remembered per their scenario rows, and the options not remembered are evaluated in
    one vectorised pass (:func:`_evaluate_all`); ``fresh``: every row evaluated on its own and nothing
    remembered, the reference the tests hold that path to (same numbers, slower). ``only``: the options of these
    names alone, with the status quo they are compared with (first, as always): each option's row and cash flows
    are those of the whole study, whose other options they do not read (the Decode page's first KPIs read 'add
    decode' alone, before the options sized from demand are evaluated).
    """
    return _studies(as_scenario(scenario), extra_options, [decode_price_override], fresh, only)[0]


def _studies(s: Scenario, extra_options: list[Option] | None, decode_prices: list[float | None],
             fresh: bool, only: Collection[str] | None = None) -> list[RetrofitResult]:
    """The study of ``s`` with 'add decode' at each of ``decode_prices`` (None: the scenario's own), as
    :func:`analyse` gives each (``only``: as there). The options are built once, and the years of every study
    that are not remembered go through one vectorised pass together (the break-even price needs two studies that
    differ in 'add decode' only: one pass of the engine, not two).
    """
    built = standard_options(s) + [Option(**spec) for spec in decode_options(s)] + list(extra_options or [])
    if only is not None:  # the status quo stays first: every option is compared with it
        built = [opt for k, opt in enumerate(built) if k == 0 or opt.name in only]
    plans = []
    for price in decode_prices:
        options = [replace(opt) for opt in built]  # each study sets its own fleet sizes (changes are replaced)
        if price is not None:
            for opt in options:
                if opt.name == OptionKind.ADD_DECODE:
                    opt.changes = {**opt.changes, "decode_accelerator_price_usd": price}
        schedules = _schedule_counts(s, options, fresh)
        sizes = _sized_counts(s, options, fresh, skip=set(schedules))
        for k, n in sizes.items():
            if np.isfinite(n):
                options[k].changes = {**options[k].changes, "accelerator_count": int(n)}
        plans.append((options, schedules, _year_rows(s, options, schedules)))
    groups = [rows for _, _, years in plans for rows in years]
    parts = [_exact(rows) for rows in groups] if fresh else _evaluate_all(groups)
    out, start = [], 0
    for options, schedules, years in plans:
        out.append(_result(s, options, schedules, parts[start:start + len(years)]))
        start += len(years)
    return out


def _result(s: Scenario, options: list[Option], schedules: dict[int, list[int]], parts: list[_Years]
            ) -> RetrofitResult:
    """The options table and cash flows of a study from its options' evaluated years (``parts``, in order)."""
    rows, flows = [], []
    status_quo_net: np.ndarray | None = None
    for k, (opt, part) in enumerate(zip(options, parts, strict=True)):
        y = part.numbers
        first = part.first({*FIRST_YEAR, *(c for pair in opt.purchases for c in pair)})
        buy_t, retrofit_t = _capex_t(opt, part, first, options[k].changes.get("existing", 0) or 0, s)
        revenue_y = revenue_y_usd(y, s)
        forgone_y = forgone_revenue_y_usd(revenue_y, y["served_fraction"])
        opex_y = opex_y_usd(y, s.rent_change_per_year)
        residual_t = residual_t_usd(buy_t, s.residual_value_fraction)
        net = net_t_usd(buy_t + retrofit_t, revenue_y, opex_y, residual_t)
        if status_quo_net is None:
            status_quo_net = net
        row = _option_row(opt, part, buy_t + retrofit_t, opex_y, net, net - status_quo_net, k > 0, s)
        row.update(_bought_or_leased(s, row["feasible"], net - status_quo_net, buy_t, retrofit_t, revenue_y, opex_y,
                                     status_quo_net))
        share = y["served_fraction"]
        rows.append({**row, "sizing": opt.sizing + _sizing_words(opt, first, schedules.get(k)),
                     "retrofit_capex_usd": float(np.sum(retrofit_t)), "residual_value_usd": float(residual_t[-1]),
                     "lowest_served_share": float(np.nanmin(share)) if np.isfinite(share).any() else float("nan"),
                     "forgone_revenue_usd": float(np.sum(forgone_y)), **_first_year_row(first, opex_y, revenue_y)})
        flows += flow_rows(opt.name, buy_t, retrofit_t, revenue_y, opex_y, net, net - status_quo_net, share,
                           forgone_y, residual_t)
    return RetrofitResult(rows, flows, None, [(opt.name, part) for opt, part in zip(options, parts, strict=True)],
                          options)


RATE_STEP = 0.02
"""The cost of capital's effect: each option's NPV also at the cost of capital less and more this (2 points)."""


def _bought_or_leased(s: Scenario, feasible: bool, incremental: np.ndarray, buy_t: np.ndarray,
                      retrofit_t: np.ndarray, revenue_y: np.ndarray, opex_y: np.ndarray,
                      status_quo_net: np.ndarray) -> dict[str, Any]:
    """The option's NPV against the status quo leased (``lease_rate_per_year`` of what it buys, each year, in place
    of the purchases and their resale; empty when no lease rate is given), and bought at the cost of capital less
    and more :data:`RATE_STEP` (the flows are the same: only their discounting moves).
    """
    if not feasible:
        return dict.fromkeys(("npv_leased_vs_status_quo_usd", "npv_at_cost_of_capital_minus_2pt_usd",
                              "npv_at_cost_of_capital_plus_2pt_usd"), float("nan"))
    r = s.cost_of_capital
    leased = None
    if s.lease_rate_per_year is not None:
        net = net_t_usd(retrofit_t + lease_t_usd(buy_t, s.lease_rate_per_year), revenue_y, opex_y)
        leased = npv_usd(r, net - status_quo_net)
    return {"npv_leased_vs_status_quo_usd": leased,
            "npv_at_cost_of_capital_minus_2pt_usd": npv_usd(r - RATE_STEP, incremental),
            "npv_at_cost_of_capital_plus_2pt_usd": npv_usd(r + RATE_STEP, incremental)}


def _sizing_words(opt: Option, first: dict[str, Any], schedule: list[int] | None) -> str:
    """What the sizing rule came to, as its text ends: a schedule's fleet in its first and last year, the decode
    pool's size, or the fleet bought at once.
    """
    if schedule is not None:
        return f"; {schedule[0]:,} in year 1 to {schedule[-1]:,} in year {len(schedule)}"
    if any(count == "decode_accelerators" for count, _ in opt.purchases):
        n = _float(first.get("decode_accelerators"))
        return f"; {n:,.0f} decode accelerators" if np.isfinite(n) else ""
    n = _float(first.get("accelerators"))
    return f"; {n:,.0f} in all" if opt.purchases and np.isfinite(n) else ""


FIRST_YEAR = ("accelerators", "decode_accelerators", "facility_power_kw", "racks", "capacity_output_tokens_per_day",
              "output_tokens_per_s_per_user", "cooling_retrofit_usd_per_hour")
"""Outputs of an option's first year that its row of the options table reads (with its purchases' columns)."""


def _first_year_row(first: dict[str, Any], opex_y: np.ndarray, revenue_y: np.ndarray) -> dict[str, Any]:
    """The first-year figures of an option's row of the options table."""
    return {"opex_usd_per_year": float(opex_y[0]), "revenue_usd_per_year": float(revenue_y[0]),
            "capacity_output_tokens_per_year": _float(first["capacity_output_tokens_per_day"]) * DAYS_PER_YEAR,
            "output_tokens_per_s_per_user": _float(first["output_tokens_per_s_per_user"]),
            "accelerators": _float(first["accelerators"]), "decode_accelerators": _float(first["decode_accelerators"]),
            "facility_mw": _float(first["facility_power_kw"]) / 1000.0, "racks": _float(first["racks"])}


def _option_row(opt: Option, part: _Years, capex_t: np.ndarray, opex_y: np.ndarray, net: np.ndarray,
                incremental: np.ndarray, compared: bool, s: Scenario) -> dict[str, Any]:
    """Feasibility, levelized cost, NPV, IRR and payback of one option against the status quo (``compared``:
    it is not the status quo itself); ``capex_t``: its purchases and retrofits at t = 0 .. T.
    """
    y, (feasible, reason) = part.numbers, part.status
    r = s.cost_of_capital
    tokens_y = (y["served_input_tokens_per_day"] + y["served_output_tokens_per_day"]) * DAYS_PER_YEAR
    levelized = levelized_usd_per_m_tokens(capex_t, opex_y, tokens_y, r) if feasible else float("nan")
    same = bool(np.all(np.abs(incremental) <= 1e-9 * max(1.0, float(np.max(np.abs(net))))))
    pb = payback_years(incremental) if feasible and compared and not same else None
    return {"option": opt.name, "description": opt.description, "feasible": feasible, "reason": reason,
            "capex_usd": float(np.sum(capex_t)), "served_tokens_per_year": float(np.mean(tokens_y)),
            "levelized_cost_usd_per_m_tokens": levelized,
            "npv_vs_status_quo_usd": npv_usd(r, incremental) if feasible else float("nan"),
            "irr_vs_status_quo": irr(incremental) if feasible and compared and not same else None,
            "payback_months": None if pb is None else pb * 12.0}


def _capex_t(opt: Option, part: _Years, first: dict[str, Any], existing: float,
             s: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Purchases and the liquid-cooling retrofit at t = 0 .. T: new accelerators at their price when a year first
    needs them (all at t = 0 unless the option is on a schedule), the retrofit when the retrofitted power grows.
    """
    y = part.numbers
    buy = np.zeros(s.horizon_years + 1)
    for count_col, price_col in opt.purchases:
        price = _float(first[price_col])
        if count_col == "added_accelerators":
            needed = np.maximum(0.0, y["accelerators"] - existing)
        elif count_col == "accelerators":
            needed = np.asarray(y["accelerators"], dtype=float)
        else:  # bought once, in year 0 (the decode pool)
            needed = np.full(s.horizon_years, _float(first[count_col]))
        buy = buy + purchases_t_usd(needed, price)
    return buy, retrofit_t_usd(y["cooling_retrofit_usd_per_hour"], s.cost_of_capital, s.facility_depreciation_years)


STEP_USD = 1000.0
"""The break-even price's second point on the line: 'add decode' again at its price plus this [USD]."""


def break_even_decode_price_usd(scenario: Scenario | dict[str, Any], *, fresh: bool = False,
                                study: RetrofitResult | None = None) -> float | None:
    """Most the decode accelerator can cost and still make 'add decode' as good as the best alternative
    (negative: even free it does not beat it).

    NPV of 'add decode' against the status quo is linear in the decode price p (purchase and maintenance scale
    with it): NPV(p) = a - b p. The break-even p* solves NPV(p*) = max(0, NPV of the other feasible options).
    None when 'add decode' is not feasible or not studied. ``fresh``: as :func:`analyse`'s. ``study``: the study
    of ``scenario`` at its own decode price, when the caller has it already (``analyse(scenario, fresh=fresh)``):
    then only the dearer study is computed (the reference tests hold the study from scratch already).
    """
    s = as_scenario(scenario)
    if not s.decode_accelerator:
        return None
    given = s.decode_accelerator_price_usd
    # a price given: both studies at once (their years in one pass of the engine); else the catalog's price, known
    # once the first study has read it
    dearer: RetrofitResult | None = None
    if study is not None:
        base = study
    elif given is not None:
        base, dearer = _studies(s, None, [None, given + STEP_USD], fresh)
    else:
        base = analyse(s, fresh=fresh)
    decode = base.row(OptionKind.ADD_DECODE)
    if decode is None or not decode["feasible"]:
        return None
    others = [r["npv_vs_status_quo_usd"] for r in base.rows if r["option"] != OptionKind.ADD_DECODE and r["feasible"]]
    best = float(np.nanmax(np.append(np.array(others, dtype=float), 0.0)))
    part = next(part for name, part in base.option_years if name == OptionKind.ADD_DECODE)
    p0 = _float(part.first({"decode_accelerator_price_usd"})["decode_accelerator_price_usd"])
    n0 = float(decode["npv_vs_status_quo_usd"])
    if dearer is None or p0 != given:
        dearer = analyse(s, decode_price_override=p0 + STEP_USD, fresh=fresh)
    row = dearer.row(OptionKind.ADD_DECODE)
    assert row is not None  # the same options as base
    n1 = float(row["npv_vs_status_quo_usd"])
    slope = (n0 - n1) / STEP_USD
    if slope <= 0:
        return None
    return p0 + (n0 - best) / slope
