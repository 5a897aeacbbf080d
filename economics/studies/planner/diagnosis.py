"""Why there is no plan, as data: the limit that cannot be met with its numbers, what each limit would have to
be, and the best partial plan.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from economics.engine.batch import MAX_COUNT
from economics.schema.scenario import Scenario
from economics.studies.planner.candidates import Candidate
from economics.studies.planner.inputs import PlanSettings, PoolRole, Workload
from economics.studies.planner.model import STRETCHABLE, Row
from economics.studies.planner.pools import Pool, Problem
from economics.studies.planner.report import (
    CONSTRAINT_COLUMNS,
    PLAN_COLUMNS,
    PlanResult,
    cost_per_m_tokens,
    hours_frame,
    per_session_cost,
    plan_result,
)
from economics.studies.planner.solve import solve_built

LIMIT_WORDS: dict[str, tuple[str, str, Any]] = {
    Row.RACKS: ("racks", "{:,.0f}", lambda s, st: st.max_racks),
    Row.SITE_POWER: ("MW", "{:,.2f}", lambda s, st: s.site_power_mw),
    Row.CAPEX_BUDGET: ("M USD", "{:,.2f}", lambda s, st: None if st.capex_budget_usd is None
                       else st.capex_budget_usd / 1e6),
    Row.KV_LINK: ("GB/s", "{:,.1f}", lambda s, st: s.kv_link_gb_per_s),
}
"""Each limit an infeasible plan may need more of: its unit, its format and where its value is."""


def need_sentence(group: str, over: float, s: Scenario, settings: PlanSettings) -> str:
    """'site power: serving the demand needs at least 1.00 MW; 0.40 MW available': a limit and by how much it had to
    stretch (``over``, in its unit).
    """
    unit, form, value = LIMIT_WORDS[group]
    limit = value(s, settings)
    assert limit is not None  # only a limit the scenario sets can stretch
    return (f"{group}: serving the demand needs at least {form.format(limit + over)} {unit}; "
            f"{form.format(limit)} {unit} available")


def rule_text(name: str, value: Any) -> str:
    """'at most 3 pools', 'rentals of at least 8 h', 'pools of at least 2 systems'."""
    s = "" if value == 1 else "s"
    return {"max_pools": f"at most {value} pool{s}", "min_rental_hours": f"rentals of at least {value:g} h",
            "min_pool_systems": f"pools of at least {value} system{s}"}[name]


def partial_plan(why: str, fixes: list[str], pb: Problem, rho: dict[int, float], table: pd.DataFrame) -> PlanResult:
    """The infeasible plan as data: the reason, the least of each limit that would make it feasible, and the best
    partial plan within every limit (the demand is what stretches: the plan serves as much of it as it can, at the
    least cost), with the share of the day's demand it serves and of its busiest hour.
    """
    demand = frozenset({Row.DEMAND_INPUT, Row.DEMAND_OUTPUT})
    m, levels, weights, res = solve_built(pb, rho, elastic=demand)
    if res.x is None:
        return infeasible_result(why, table, pb.wl, pb.s)
    short = np.zeros(len(levels))
    for group in demand:
        for h, col in enumerate(m.slack_col.get(group, [])):
            short[h] = max(short[h], float(res.x[col]))
    served = 1.0 - np.clip(short, 0.0, 1.0)
    day = float(np.sum(weights * levels * served) / np.sum(weights * levels)) if np.sum(weights * levels) > 0 else 0.0
    best = plan_result(m, res, pb, table, [])
    # the limits that had to stretch together say why; what the candidates can serve is the partial plan's share
    # (the all-limits-stretch model's unserved demand is not a share of anything a user can act on)
    limits = [x for x in why.split("; ") if x and not x.startswith("demand")]
    reason = "; ".join(limits or [f"within every limit the candidates serve at most {day:.1%} of the day's demand "
                                  f"({float(served[int(np.argmax(levels))]):.1%} of its busiest hour)"])
    summary = {**best.summary, "feasible": False, "infeasible_reason": reason, "served_share": day,
               "busiest_hour_served_share": float(served[int(np.argmax(levels))]),
               "relaxations": "; ".join(fixes), "tokens_per_day": best.summary["tokens_per_day"] * day}
    summary["cost_usd_per_m_tokens"] = cost_per_m_tokens(summary["cost_usd_per_day"], summary["tokens_per_day"])
    if "sessions_per_day" in summary:  # workload=sessions: the sessions the partial plan serves
        summary["sessions_per_day"] = float(summary["sessions_per_day"]) * day
        summary["cost_usd_per_session"] = per_session_cost(summary)
    return PlanResult(False, reason, summary, best.plan, best.hours, best.constraints, table,
                      [f"best partial plan: serves {day:.1%} of the day's demand within every limit"])


def precheck(pools: list[Pool], cands: list[Candidate], wl: Workload, s: Scenario, settings: PlanSettings,
             excluded: list[tuple[str, str]]) -> str:
    """A reason when no combination of pools can serve the demand at all, naming the targets and the best offer
    (the fastest candidate's per-user speed, read from the candidates).
    """
    out_ok = any(p.role in (PoolRole.AGGREGATED, PoolRole.DECODE) for p in pools)
    in_ok = wl.uncached_input_tokens <= 0 or any(p.role in (PoolRole.AGGREGATED, PoolRole.PREFILL) for p in pools)
    both = any(p.role == PoolRole.AGGREGATED for p in pools) or (any(p.role == PoolRole.PREFILL for p in pools) and any(
        p.role == PoolRole.DECODE for p in pools)) or (wl.uncached_input_tokens <= 0 and out_ok)
    if out_ok and in_ok and both:
        return fleet_bound(pools, cands, wl)
    speed = [r for n, r in excluded if r.startswith("per-user speed")]
    unreachable = [f"{n}: {r}" for n, r in excluded if r.startswith("interactivity")]
    if not out_ok and unreachable and not speed:
        return (f"per-user speed: no candidate reaches the target {s.target_output_tokens_per_s_per_user:g} token/s "
                f"per user ({'; '.join(unreachable[:3])})")
    ttft = [r for n, r in excluded if r.startswith("time to first token")]
    if not out_ok and speed:
        target = s.target_output_tokens_per_s_per_user
        known = [c.output_tokens_per_s_per_user for c in cands if math.isfinite(c.output_tokens_per_s_per_user)]
        fastest = (f"the fastest: {max(known):,.1f} token/s per user, below the target {target:g}" if known
                   else "no candidate gives its per-user speed")
        return f"per-user speed: no candidate decodes at the target {target:g} token/s per user ({fastest})"
    if not in_ok and ttft:
        return f"time to first token: no candidate can prefill within {settings.ttft_target_s:g} s ({ttft[0]})"
    listed = "; ".join(f"{n}: {r}" for n, r in excluded[:6])
    return f"no candidate can serve this demand ({listed or 'no candidates'})"


def fleet_bound(pools: list[Pool], cands: list[Candidate], wl: Workload) -> str:
    r"""A reason when even the candidates' fastest pools would need more accelerators than a fleet may hold
    (:data:`~economics.engine.batch.MAX_COUNT`, the bound ``evaluate`` puts on a fleet); '' otherwise.

    Each side of the busiest hour (output tokens, and uncached input tokens) needs at least

    .. math:: A \ge \lambda_{peak} \, t / \max_p (C_p / a_p)

    accelerators, with :math:`t` the tokens per request of that side, :math:`C_p` what one system of a pool serving
    it counts on [token/s] and :math:`a_p` its accelerators per system; the plan needs at least the larger side.

    >>> wl = Workload(0.0, 0.0, 250.0, 1e9, np.full(24, 1e9), 1.0, 0.0)
    >>> box = Candidate("box", "own", accelerators_per_system=8, output_tokens_per_s_per_system=8000.0)
    >>> why = fleet_bound([Pool(0, "decode", 8000.0, 8000.0, 0.0, 1.0, 1, 1.0, 1.0, 0.0)], [box], wl)
    >>> why.split(": ")[1]  # 1e9 request/s x 250 token / (8,000 token/s / 8 accelerators) = 2.5e8 accelerators
    'the fastest candidate per accelerator, box (decode'
    >>> why.split(", ")[-1].split(";")[0]
    'needs at least 2.5e+08 accelerators'
    """
    peak = float(np.max(wl.hourly_requests_per_s))
    need, best = 0.0, ""
    for side, tokens in ((PoolRole.DECODE, wl.output_tokens), (PoolRole.PREFILL, wl.uncached_input_tokens)):
        rates = [(p.capacity * (tokens if p.role == PoolRole.AGGREGATED else 1.0)
                  / cands[p.cand].accelerators_per_system, cands[p.cand].name)
                 for p in pools if p.role in (PoolRole.AGGREGATED, side)]
        if tokens > 0 and rates and peak * tokens / max(rates)[0] > need:
            need, best = peak * tokens / max(rates)[0], f"{max(rates)[1]} ({side}: {max(rates)[0]:,.4g} token/s)"
    if need <= MAX_COUNT:
        return ""
    return (f"a fleet of at most {MAX_COUNT:,.0f} accelerators cannot serve {peak:.3g} requests/s: the fastest "
            f"candidate per accelerator, {best}, needs at least {need:.3g} accelerators; lower the demand or "
            "plan a share of it")


def infeasible_result(reason: str, table: pd.DataFrame, wl: Workload, s: Scenario) -> PlanResult:
    """The result when there is no plan: ``reason``, an empty plan and constraints table, the workload's hours, and the
    candidates ``table``.
    """
    return PlanResult(False, reason, {"feasible": False, "infeasible_reason": reason},
                      pd.DataFrame(columns=list(PLAN_COLUMNS)), hours_frame(wl, None),
                      pd.DataFrame(columns=list(CONSTRAINT_COLUMNS)), table)


def diagnose(pb: Problem, rho: dict[int, float]) -> str:
    """Name the constraints that cannot be met: solve again with each limit allowed to stretch at a steep price
    (unserved demand at a steeper one) and report by how much each had to stretch.
    """
    res = None
    for stretch in (STRETCHABLE - {Row.DEMAND_INPUT, Row.DEMAND_OUTPUT}, STRETCHABLE):
        # the limits first, together: the demand is left unserved only when no amount of them serves it
        m, levels, _, res = solve_built(pb, rho, elastic=stretch)
        if res.x is not None:
            break
    if res is None or res.x is None:
        return f"no plan: {res.message if res is not None else 'no model'}"
    sentences = []
    for group, cols in m.slack_col.items():
        over = max(float(res.x[c]) for c in cols)
        if over <= 1e-6:
            continue
        if group.startswith("demand"):
            h = int(np.argmax([float(res.x[c]) for c in cols]))
            per = pb.wl.uncached_input_tokens if group == Row.DEMAND_INPUT else pb.wl.output_tokens
            need = float(levels[h]) * per
            sentences.append(f"{group}: the candidates can serve at most {1.0 - over:.1%} of the busiest "
                             f"hour's {need:,.0f} {'uncached input' if 'input' in group else 'output'} tokens/s "
                             "(existing fleet size, rent not allowed, or every other limit)")
            continue
        sentences.append(need_sentence(group, over, pb.s, pb.settings))
    return "; ".join(sentences) or "no plan meets every constraint"
