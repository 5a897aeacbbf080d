"""A solved model as tables: the plan's pools, the hours, the limits with their shadow prices, the candidates
and why any was left out, and the summary (cost per day and per M tokens, site power, racks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from economics.domain import availability, finance, queueing, rent
from economics.domain import sessions as ses
from economics.domain.formula import DAYS_PER_YEAR, HOURS_PER_DAY, SECONDS_PER_DAY
from economics.domain.revenue import usd_per_m_tokens
from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import Candidate, racks_for
from economics.studies.planner.footprint import footprint_summary, pool_kgco2e_per_day
from economics.studies.planner.inputs import (
    HOURS,
    ROLES,
    Day,
    Ownership,
    PlanSettings,
    RentTier,
    Workload,
    hour_types,
    type_day,
)
from economics.studies.planner.milp import MIP_REL_GAP, PROOF_GAP, PROVEN, TIME_LIMIT_S, Solution, row_duals
from economics.studies.planner.model import PlanModel, Row, utilization_cap
from economics.studies.planner.pools import Costs, Pool, Problem
from economics.studies.planner.solve import pool_counts

SETTING_COST_COLUMNS = ("setting", "value", "unit", "cost_usd_per_day", "without_usd_per_day", "costs_usd_per_day",
                        "pools_without", "meaning")


@dataclass
class PlanResult:
    """What :func:`plan` returns: a plan, or the reason there is none, always as data."""

    feasible: bool
    reason: str
    summary: dict[str, Any]
    plan: pd.DataFrame
    hours: pd.DataFrame
    constraints: pd.DataFrame
    candidates: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    setting_costs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SETTING_COST_COLUMNS)))
    """What each operations setting costs (:func:`setting_costs`)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: plain numbers, None for missing, never NaN."""
        return {"feasible": self.feasible, "infeasible_reason": self.reason, "summary": _plain(self.summary),
                "plan": records(self.plan), "constraints": records(self.constraints),
                "hours": records(self.hours), "candidates": records(self.candidates),
                "setting_costs": records(self.setting_costs), "notes": self.notes}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if value is pd.NA or value is None:
        return None
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as JSON-ready records: plain numbers, None for missing, never NaN."""
    return [_plain(r) for r in df.to_dict(orient="records")]




PLAN_COLUMNS = ("name", "accelerator", "ownership", "tier", "cooling", "role", "systems", "accelerators", "racks",
                "it_mw", "facility_mw", "hours_per_day", "system_hours_per_day", "capex_usd", "cost_usd_per_day",
                "kgco2e_per_day", "peak_utilization", "ttft_s", "availability", "spares", "p_enough_systems_up")


CONSTRAINT_COLUMNS = ("constraint", "limit", "used", "unit", "slack", "binding", "shadow_price_usd", "meaning")


def candidate_table(cands: list[Candidate], pools: list[Pool], excluded: list[tuple[str, str]],
                     s: Scenario) -> pd.DataFrame:
    """Every candidate considered: its figures per system, its roles, and why a role or it was left out."""
    rows = []
    for k, c in enumerate(cands):
        roles = [p.role for p in pools if p.cand == k]
        why = "; ".join(f"{n.split(' / ')[-1]}: {r}" for n, r in excluded if n.startswith(c.name + " / "))
        rows.append({"name": c.name, "accelerator": c.accelerator, "ownership": c.ownership,
                     "tier": c.rent_tier or None, "cooling": c.cooling_mode,
                     "accelerators_per_system": c.accelerators_per_system, "system_power_kw": c.system_power_kw,
                     "price_usd_per_system": c.price_usd_per_system if c.ownership != Ownership.RENT else None,
                     "rent_usd_per_system_hour": c.rent_usd_per_system_hour if c.ownership == Ownership.RENT else None,
                     "input_tokens_per_s_per_system": c.input_tokens_per_s_per_system,
                     "output_tokens_per_s_per_system": c.output_tokens_per_s_per_system,
                     "output_tokens_per_s_per_user": c.output_tokens_per_s_per_user,
                     "throughput": c.throughput or "given (candidates file)",
                     **({"kv_hit_rate": c.kv_hit_rate} if math.isfinite(c.kv_hit_rate) else {}),
                     "roles": ";".join(roles), "left_out": why, "note": c.note})
    names = {c.name for c in cands}
    for n, r in excluded:
        if " / " not in n and n not in names:
            rows.append({"name": n, "roles": "", "left_out": r})
    return pd.DataFrame(rows)


def hours_frame(wl: Workload, per_hour: dict[str, np.ndarray] | None) -> pd.DataFrame:
    """One row per hour of the day: the demand (requests/s and output tokens/s) and each column of ``per_hour``."""
    columns: dict[str, Any] = {"hour": np.arange(HOURS), "requests_per_s": wl.hourly_requests_per_s,
                               "output_tokens_per_s": wl.hourly_requests_per_s * wl.output_tokens}
    if wl.sessions:  # the hour's turns a second over its 3,600 s, in sessions
        columns["sessions_per_hour"] = sessions_per(wl.hourly_requests_per_s * SECONDS_PER_DAY / HOURS_PER_DAY, wl)
    columns.update(per_hour or {})
    return pd.DataFrame(columns)  # made once from its columns (a column set on a table inserts it, one by one)


def _pool_row(m: PlanModel, x: np.ndarray, p: int, pool: Pool, c: Candidate, k: Costs, s: Scenario,
              settings: PlanSettings, wl: Workload, weights: np.ndarray, inverse: np.ndarray,
              day: Day | None) -> dict[str, Any]:
    """One line of the plan: a pool's systems, hours, power, cost, emissions, utilization, TTFT and spares
    (``weights``, ``inverse``: the plan's hour types, :func:`hour_types`; ``day``: their prices, :func:`type_day`).
    """
    hours = len(weights)
    n = pool_counts(m, x, p, hours)
    f = np.array([float(x[m.flow_col[(p, h)]]) for h in range(hours)]) * pool.unit
    on_site = c.on_site
    systems = float(n.max())
    ratio = day.ratio(k.pays_energy) if day is not None else np.ones(hours)  # each hour's energy over the mean
    rent = k.rent_usd_per_hour + k.idle_energy_usd_per_hour * (ratio - 1.0) if not on_site else np.zeros(hours)
    cost_day = (HOURS_PER_DAY * k.fixed_usd_per_hour * systems if on_site else 0.0) + float(np.sum(
        weights * (n * rent + f * pool.energy_usd_per_flow_hour * ratio * wl.energy_scale)))
    operational, embodied = pool_kgco2e_per_day(n, f, inverse, pool, k, wl)
    busy = np.divide(f, pool.raw_capacity * n, out=np.zeros(hours), where=n > 0)
    ttft, needed = 0.0, 0.0
    for h in range(hours):
        if n[h] <= 0:
            continue
        need = f[h] / (pool.raw_capacity / (1.0 + float(s.headroom)))
        if pool.prefill_weight > 0 and math.isfinite(pool.service_s) and math.isfinite(pool.prefill_capacity):
            rho = pool.prefill_weight * f[h] / (pool.prefill_capacity * n[h])
            servers = int(n[h]) * pool.servers_per_system
            if settings.ttft_target_s is not None:
                cap = utilization_cap(pool, servers, settings)
                need = max(need, pool.prefill_weight * f[h] / (cap * pool.prefill_capacity / pool.availability))
            rho = 1.0 if rho > 1.0 - 1e-9 else rho  # full load to rounding: no steady state, no finite TTFT
            ttft = max(ttft, queueing.ttft_percentile_s(servers, rho, pool.service_s,
                                                        settings.ttft_percentile, settings.prefill_service_cv2))
        needed = max(needed, need)
    required = min(systems, math.ceil(needed * (1.0 - 1e-9))) if on_site else systems
    return {"name": c.name, "accelerator": c.accelerator, "ownership": c.ownership, "tier": c.rent_tier or None,
            "cooling": c.cooling_mode, "role": pool.role, "systems": int(systems),
            "accelerators": int(systems) * c.accelerators_per_system,
            "racks": int(racks_for(c, s, systems)) if on_site else None,
            "it_mw": systems * c.system_power_kw / 1000.0 if on_site else None,
            "facility_mw": systems * k.facility_kw / 1000.0 if on_site else None,
            "hours_per_day": HOURS_PER_DAY if on_site else float(np.sum(weights * (n > 0))),
            "system_hours_per_day": float(np.sum(weights * n)), "capex_usd": systems * k.capex_usd,
            "cost_usd_per_day": cost_day,
            "kgco2e_per_day": None if math.isnan(operational) else embodied + operational,
            "operational": operational, "embodied": embodied, "reserved_idle": _reserved_idle(c, n, f, pool, weights),
            "peak_utilization": float(busy.max()),
            "ttft_s": ttft if ttft > 0 else None, "availability": pool.availability,
            "spares": int(systems - required) if on_site else None,
            "p_enough_systems_up": availability.probability_enough_up(int(systems), int(required), pool.availability)
            if on_site else None}


def _reserved_idle(c: Candidate, n: np.ndarray, f: np.ndarray, pool: Pool, weights: np.ndarray) -> float:
    """The reserved hours a reserved pool pays and leaves idle in a day [USD/day] (0 for any other pool), by
    :func:`economics.domain.rent.reserved_idle_usd_per_day` at the day's utilization of its systems.
    """
    held = float(np.sum(weights * n))
    if c.rent_tier != RentTier.RESERVED or held <= 0:
        return 0.0
    busy = float(np.sum(weights * f)) / pool.raw_capacity  # system-hours of full load
    return float(rent.reserved_idle_usd_per_day(float(n.max()) * c.rent_usd_per_system_hour, busy / held))


def _pool_rows(m: PlanModel, x: np.ndarray, pb: Problem) -> tuple[list[int], list[dict[str, Any]], pd.DataFrame]:
    """The pools a solution uses, each one's row (:func:`_pool_row`) and the plan's pools table."""
    pools, cands, costs, wl = pb.pools, pb.cands, pb.costs, pb.wl
    levels, inverse, weights = hour_types(wl)
    used = [p for p in range(len(pools)) if pool_counts(m, x, p, len(weights)).max() > 0]
    day = type_day(wl)
    rows = [_pool_row(m, x, p, pools[p], cands[pools[p].cand], costs[pools[p].cand], pb.s, pb.settings, wl, weights,
                      inverse, day) for p in used]
    return used, rows, pd.DataFrame(rows, columns=list(PLAN_COLUMNS))


def plan_cost(m: PlanModel, res: Any, pb: Problem) -> tuple[float, int, float]:
    """A solved model's cost per day, distinct pools and accelerators, as :func:`plan_result` gives them in its
    summary (``cost_usd_per_day``, ``distinct_pools``) and its plan (the ``accelerators`` column's sum), by the
    same steps without the rest (the hours, the limits and their shadow prices): what each operations setting costs
    reads only these of a plan solved without it.
    """
    _, _, plan_df = _pool_rows(m, res.x, pb)
    cost = float(plan_df["cost_usd_per_day"].sum())
    if pb.wl.sessions:  # session_summary's line: the remote KV store
        cost += pb.wl.kv_remote_usd_per_day
    return cost, len(plan_df), float(plan_df["accelerators"].sum())


def plan_result(m: PlanModel, res: Any, pb: Problem, table: pd.DataFrame, notes: list[str]) -> PlanResult:
    """A solved model as a :class:`PlanResult`: its pools, hours, limits, summary and the candidates table."""
    pools, cands, s, settings, wl = pb.pools, pb.cands, pb.s, pb.settings, pb.wl
    levels, inverse, weights = hour_types(wl)
    x = res.x
    used, rows, plan_df = _pool_rows(m, x, pb)
    per_hour = _per_hour(m, x, pb, used, weights, inverse)
    racks = float(sum(_racks_of(m, x, pools, cands, s, i, len(weights)) for i in
                      {pools[p].cand for p in used if cands[pools[p].cand].on_site}))
    shadow = _shadow_prices(m, pools, used, weights)
    constraints = _constraints_table(m, x, shadow, s, settings, racks, weights, len(used))
    tokens_day = wl.requests_per_s * (wl.input_tokens + wl.output_tokens) * SECONDS_PER_DAY
    cost_day = float(plan_df["cost_usd_per_day"].sum())
    summary = {
        "feasible": True, "objective": settings.objective, "objective_usd": float(res.fun),
        "cost_usd_per_day": cost_day, "tokens_per_day": tokens_day,
        "cost_usd_per_m_tokens": cost_per_m_tokens(cost_day, tokens_day),
        "capex_usd": float(plan_df["capex_usd"].sum()), "it_mw": float(plan_df["it_mw"].fillna(0).sum()),
        "facility_mw": float(plan_df["facility_mw"].fillna(0).sum()), "racks": racks,
        "systems_on_site": int(plan_df.loc[plan_df["ownership"] != Ownership.RENT, "systems"].sum()),
        "distinct_pools": len(plan_df),
        "rented_system_hours_per_day": float(plan_df.loc[plan_df["ownership"] == Ownership.RENT,
                                                         "system_hours_per_day"].sum()),
        "binding": "; ".join(constraints.loc[constraints["binding"], "constraint"].astype(str)),
        "mip_gap": max(0.0, (float(res.fun) - res.bound) / float(res.fun)) if res.fun > 0 and math.isfinite(
            res.bound) else 0.0,
        "reserved_idle_usd_per_day": float(sum(r["reserved_idle"] for r in rows)),
        **footprint_summary([r["operational"] for r in rows], [r["embodied"] for r in rows], tokens_day,
                            float(s.carbon_usd_per_tonne)),
    }
    if wl.sessions:
        session_summary(summary, wl)
        notes.append(f"workload=sessions: {wl.turns_per_session:g} turns a session, each a request of the mean "
                     f"turn's {wl.input_tokens:,.6g} input tokens; each pool finds its own KV hit rate of them "
                     "(the candidates' kv_hit_rate, at full load)"
                     + (f"; the remote KV store, {wl.kv_remote_usd_per_day:,.2f} USD a day, is a line of the "
                        "fleet's cost, not of a pool" if wl.kv_remote_usd_per_day > 0 else ""))
    summary["solver_status"] = solver_status(res, float(summary["mip_gap"] or 0.0))
    if settings.objective == "npv":
        summary["npv_cost_usd"] = float(res.fun)
        summary["levelized_cost_usd_per_m_tokens"] = _levelized(float(res.fun), tokens_day, s)
    return PlanResult(True, "", summary, plan_df, hours_frame(wl, per_hour), constraints, table, notes)


def session_summary(summary: dict[str, Any], wl: Workload) -> None:
    """workload=sessions, in place: the remote KV store's line added to the plan's cost, the sessions served a day
    and the cost of one, by the engine's formulas (``sessions_served_per_day``, ``cost_usd_per_session``).
    """
    summary["kv_remote_usd_per_day"] = wl.kv_remote_usd_per_day
    summary["cost_usd_per_day"] = float(summary["cost_usd_per_day"]) + wl.kv_remote_usd_per_day
    tokens = float(summary["tokens_per_day"])
    summary["cost_usd_per_m_tokens"] = cost_per_m_tokens(summary["cost_usd_per_day"], tokens)
    summary["sessions_per_day"] = float(sessions_per(wl.requests_per_s * SECONDS_PER_DAY, wl))
    summary["cost_usd_per_session"] = per_session_cost(summary)


def sessions_per(turns: Any, wl: Workload) -> Any:
    """Sessions in ``turns`` turns (of a day or an hour): the engine's ``sessions_served_per_day``, the output
    served over a session's output tokens.
    """
    per_session = ses.OUTPUT_PER_SESSION.evaluate({"turns_per_session": wl.turns_per_session,
                                                   "output_tokens_per_turn": wl.output_tokens})
    return ses.SESSIONS_SERVED.evaluate({"served_output_tokens_per_day": np.asarray(turns) * wl.output_tokens,
                                         "output_tokens_per_session": per_session})


def per_session_cost(summary: dict[str, Any]) -> float | None:
    """The engine's ``cost_usd_per_session`` of a plan's summary (None: no session served)."""
    served = float(summary["sessions_per_day"])
    return float(ses.COST_PER_SESSION.evaluate({"cost_usd_per_day": float(summary["cost_usd_per_day"]),
                                                "sessions_served_per_day": served})) if served > 0 else None


def _per_hour(m: PlanModel, x: np.ndarray, pb: Problem, used: list[int], weights: np.ndarray,
              inverse: np.ndarray) -> dict[str, np.ndarray]:
    """The hours table's columns: each role's systems and accelerators on site and rented in each clock hour, each
    rent tier's when the plan weighs more than on demand, and the hours' prices and intensity when they vary.
    """
    pools, cands, wl = pb.pools, pb.cands, pb.wl
    per_hour: dict[str, np.ndarray] = {}
    tiered = any(cands[pools[p].cand].rent_tier not in (None, RentTier.ON_DEMAND) for p in range(len(pools)))
    groups = ["on site", "rented", *((RentTier.RESERVED, RentTier.ON_DEMAND, RentTier.SPOT) if tiered else ())]

    def member(c: Candidate, group: str) -> bool:
        return c.on_site if group == "on site" else not c.on_site if group == "rented" else c.rent_tier == group

    for role in ROLES:
        for own in groups:
            cols = [p for p in used if pools[p].role == role and member(cands[pools[p].cand], own)]
            if cols:
                where = own.replace(' ', '_')
                per_hour[f"{role}_systems_{where}"] = sum(
                    (pool_counts(m, x, p, len(weights)) for p in cols), np.zeros(len(weights)))[inverse]
                # accelerators as well: a 72-GPU rack is not one 8-GPU server
                per_hour[f"{role}_accelerators_{where}"] = sum(
                    (pool_counts(m, x, p, len(weights)) * cands[pools[p].cand].accelerators_per_system for p in cols),
                    np.zeros(len(weights)))[inverse]
    if wl.day is not None and not bool(np.all(wl.day.usd_per_kwh == wl.day.usd_per_kwh[0])):
        per_hour["usd_per_kwh"] = wl.day.usd_per_kwh
    if wl.day is not None and not np.isnan(wl.day.g_per_kwh).any():
        per_hour["g_per_kwh"] = wl.day.g_per_kwh
    return per_hour


_HOW = {"two stages": "two stages: the owned base, then each hour's rented systems",
        "two stages, then its pools": "the pools chosen in two stages, then solved together on their own",
        "two stages, then pools added": "the pools chosen in two stages with rented pools added one at a time, then "
                                        "solved together on their own"}
"""How a plan was found, by its result's message (a plan :data:`PROVEN` found says so itself)."""


def solver_status(res: Solution, gap: float) -> str:
    """What the solver proved, in its own terms: ``proven optimal`` only at no gap; else how far from the lower bound
    the plan may be, how the plan was found and why the search stopped (the gap it was asked for, a node or time
    limit, the two stages; a bound proven on the whole MILP says so: the message ends in :data:`PROVEN`).

    >>> solver_status(Solution(None, 100.0, 100.0, 0, "Optimal"), 0.0)
    'proven optimal'
    >>> solver_status(Solution(None, 100.0, 99.95, 0, "Optimal"), 0.0005)
    'within 0.05 % of the lower bound (the search stops within 0.1 %)'
    >>> solver_status(Solution(None, 100.0, 99.2, 0, f"two stages; {PROVEN}"), 0.008)
    "within 0.80 % of the lower bound (two stages: the owned base, then each hour's rented systems; the bound \
proven by HiGHS on the whole MILP, started from the plan, which stops within 1 %)"
    >>> solver_status(Solution(None, 100.0, 99.4, 0, PROVEN), 0.006)
    'within 0.60 % of the lower bound (found and proven by HiGHS on the whole MILP, started from the plan of two \
stages, which stops within 1 %)'
    >>> solver_status(Solution(None, 100.0, 90.0, 1, "Time limit reached. (HiGHS Status 13: Time limit reached)"), 0.1)
    'within 10.00 % of the lower bound after 30 s (the time limit of a solve)'
    """
    within = f"within {100 * gap:.2f} % of the lower bound"
    how = res.message.removesuffix(f"; {PROVEN}")
    if res.message.endswith(PROVEN):
        proof = ("found and proven by HiGHS on the whole MILP, started from the plan of two stages" if how == PROVEN
                 else f"{_HOW[how]}; the bound proven by HiGHS on the whole MILP, started from the plan")
        return "proven optimal" if gap <= 1e-9 else f"{within} ({proof}, which stops within {100 * PROOF_GAP:g} %)"
    if how in _HOW:
        return f"{within} ({_HOW[how]})"
    if res.status == 0:
        return "proven optimal" if gap <= 1e-9 else f"{within} (the search stops within {100 * MIP_REL_GAP:.1f} %)"
    if "Time limit" in res.message:
        return f"{within} after {TIME_LIMIT_S:g} s (the time limit of a solve)"
    return f"{within} (the search stopped: {res.message})"


def _racks_of(m: PlanModel, x: np.ndarray, pools: list[Pool], cands: list[Candidate], s: Scenario, i: int,
              hours: int) -> float:
    """Racks of one on-site candidate: its systems (all roles) over the systems a rack holds, rounded up."""
    systems = sum(float(pool_counts(m, x, p, hours).max()) for p, pool in enumerate(pools) if pool.cand == i)
    return racks_for(cands[i], s, systems)


def _levelized(pv_cost: float, tokens_day_design: float, s: Scenario) -> float:
    """PV(cost) / PV(tokens) x 10^6 (:func:`economics.domain.finance.levelized_usd_per_m_tokens`, as the retrofit
    study's), the tokens of each year following its demand (the design year's the largest) [USD/M token].
    """
    years = np.arange(1, int(s.horizon_years) + 1)
    growth = finance.growth_factors(float(s.demand_growth_per_year), years)
    disc = finance.discount_factors(float(s.cost_of_capital), years)
    tokens = float((tokens_day_design * growth / growth.max() * DAYS_PER_YEAR * disc).sum())
    return finance.levelized_usd_per_m_tokens(pv_cost, tokens)


def cost_per_m_tokens(cost_usd_per_day: float, tokens_per_day: float) -> float | None:
    """A plan's cost of a million tokens, the engine's ``cost_usd_per_m_tokens``
    (:func:`economics.domain.revenue.usd_per_m_tokens`); None when it serves no tokens.

    >>> round(cost_per_m_tokens(120.0, 300e6) or 0.0, 12), cost_per_m_tokens(120.0, 0.0) is None
    (0.4, True)
    """
    if not tokens_per_day > 0:
        return None
    return float(usd_per_m_tokens(cost_usd_per_day, tokens_per_day))


LIMIT_UNITS: dict[str, str] = {Row.SITE_POWER: "MW", Row.RACKS: "rack", Row.CAPEX_BUDGET: "M USD", Row.KV_LINK: "GB/s",
               Row.DISTINCT_POOLS: "pool"}


def _shadow_prices(m: PlanModel, pools: list[Pool], used: list[int], weights: np.ndarray) -> dict[str, float] | None:
    """Dual values of the limits from the LP with the integer choices fixed: the pools the plan uses stay open,
    every other pool is closed (count bound 0), counts and racks become continuous. A dual is the change of the
    objective per unit more of the limit; the saving is its negative. Summed over the hours of a per-hour limit.
    None when HiGHS returns no duals.
    """
    ub = np.asarray(m.ub, dtype=float).copy()
    open_pools = set(used)
    for (p, _h), col in m.count_col.items():
        if p not in open_pools:
            ub[col] = 0.0
    duals = row_duals(m, ub)
    if duals is None:
        return None
    savings: dict[str, float] = {}
    for i, group in enumerate(m.row_group):
        savings[group] = savings.get(group, 0.0) - float(duals[i])
    return savings


def _constraints_table(m: PlanModel, x: np.ndarray, shadow: dict[str, float] | None, s: Scenario,
                       settings: PlanSettings, racks: float, weights: np.ndarray, pools_used: int) -> pd.DataFrame:
    """The limits of the plan: limit, use, slack, binding, and what one more unit of each would save."""
    lhs = m.matrix() @ x
    period = "a day" if settings.objective == "cost_per_day" else "in present value over the horizon"
    rows = []
    # the distinct pools are counted on the plan (a model of the chosen pools alone has no such row)
    groups = [g for g in dict.fromkeys(m.row_group)
              if (g in LIMIT_UNITS and g != Row.DISTINCT_POOLS) or g.startswith(Row.EXISTING_FLEET)]
    for group in groups:
        idx = [i for i, g in enumerate(m.row_group) if g == group]
        used = max(float(lhs[i]) for i in idx)
        limit = float(m.b[idx[0]])
        unit = LIMIT_UNITS.get(group, "system")
        slack = limit - used
        # binding means no slack in the plan itself; only a binding limit has a shadow price (the LP's dual can be
        # non-zero for a limit the whole-system plan leaves slack on, and then it says nothing about the plan)
        binding = slack <= 1e-6 * max(1.0, abs(limit))
        saving = None if shadow is None or not binding else max(0.0, shadow.get(group, 0.0))
        shown_unit = {"M USD": "M USD of budget", "GB/s": "GB/s of KV link", "system": "existing system"}.get(
            unit, unit)
        meaning = (f"one more {shown_unit} saves {saving:,.0f} USD {period}" if saving is not None and saving > 1e-6
                   else "binding, but one more unit saves nothing at the margin" if binding
                   else f"not limiting: {slack:,.4g} {unit} to spare")
        rows.append({"constraint": group, "limit": limit, "used": used, "unit": unit, "slack": slack,
                     "binding": bool(binding), "shadow_price_usd": saving, "meaning": meaning})
    if settings.max_pools is not None:
        rows.append(_pool_limit_row(pools_used, int(settings.max_pools)))
    return pd.DataFrame(rows, columns=list(CONSTRAINT_COLUMNS))


def _pool_limit_row(used: int, limit: int) -> dict[str, Any]:
    """The limits table's line for the distinct pools. A count of pools has no meaningful dual: what the limit costs
    is the plan solved without it (:func:`limits_with_costs` writes it in).
    """
    binding = used >= limit
    return {"constraint": Row.DISTINCT_POOLS.value, "limit": float(limit), "used": float(used), "unit": "pool",
            "slack": float(limit - used), "binding": binding, "shadow_price_usd": None,
            "meaning": "binding: what it costs is the plan without it (what the operations settings cost)" if binding
            else f"not limiting: {limit - used} pool{'' if limit - used == 1 else 's'} to spare"}
