"""The planner's entry points: :func:`plan` (a scenario and its settings to a :class:`PlanResult`),
:func:`solve_plan` (the same from candidates already built), what each operations setting costs
(:func:`setting_costs`) and the relaxation a plan the settings forbid needs.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from economics.domain.formula import KG_PER_TONNE
from economics.engine.batch import MAX_COUNT, as_scenario
from economics.schema.scenario import Scenario
from economics.studies.planner.build import objective_factors
from economics.studies.planner.candidates import (
    Candidate,
    catalog_candidates,
    check_candidate_count,
    hosting_variants,
)
from economics.studies.planner.diagnosis import (
    LIMIT_WORDS,
    diagnose,
    infeasible_result,
    need_sentence,
    partial_plan,
    precheck,
    rule_text,
)
from economics.studies.planner.inputs import PLAN_FIELDS, PlanSettings, Workload, workload
from economics.studies.planner.milp import TIME_LIMIT_S
from economics.studies.planner.model import Row
from economics.studies.planner.pools import Costs, Pool, Problem, build_pools, candidate_costs
from economics.studies.planner.report import (
    SETTING_COST_COLUMNS,
    PlanResult,
    candidate_table,
    cost_per_m_tokens,
    per_session_cost,
    plan_cost,
    plan_result,
)
from economics.studies.planner.rules import RULE_OFF, rules_active
from economics.studies.planner.solve import Stages, prove_stages, solve_built, solve_stages
from economics.studies.planner.tiers import tier_variants

SettingPlans = dict[str, tuple[float, int] | str]
"""Per operations setting that can change the plan, the plan without it: its cost per day and distinct pools, or
why there is none (:func:`plans_without`)."""


def plan(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
         candidates: list[Candidate] | None = None, accelerators: list[str] | None = None,
         costed: bool = True, proof: bool = True) -> PlanResult:
    """The cheapest plan for the scenario's demand, targets and facility (see the module docstring).

    ``candidates`` (e.g. from :func:`read_candidates_csv`) replace the catalog; else the catalog's accelerators
    (``accelerators``, default all) are used with their estimated or measured rates, plus the existing fleet.
    ``costed``: with what each operations setting costs (``setting_costs``; :func:`costs_of_settings` adds it to a
    plan made without). ``proof``: a plan of the operations settings' pools is proven within 1 % by HiGHS on the
    whole model (:func:`~economics.studies.planner.solve.prove_stages`; :func:`plan_stages` then :func:`prove_plan`
    are the same two steps); False keeps stage 1's bound. Never raises
    for a plan that cannot be met: the result says why, with the numbers.

    One request/s of 100 output tokens on a system serving 100 tokens/s bought for 3,650 USD over one year at 0 %
    (3,650 / 365 = 10 USD a day, nothing else charged):

    >>> s = Scenario(name="d", input_tokens_per_request=0, output_tokens_per_request=100,
    ...              demand_output_tokens_per_day=8_640_000, cost_of_capital=0, depreciation_years=1,
    ...              maintenance_fraction_per_year=0, electricity_usd_per_kwh=0, colocation_usd_per_kw_month=0)
    >>> box = Candidate("box", "own", accelerators_per_system=1, system_power_kw=1.0, price_usd_per_system=3650.0,
    ...                 output_tokens_per_s_per_system=100.0, accelerators_per_replica=1, roles=("aggregated",))
    >>> r = plan(s, PlanSettings(demand_profile="flat", spares=False), [box])
    >>> r.plan[["name", "role", "systems"]].values.tolist(), round(r.summary["cost_usd_per_day"], 2)
    ([['box', 'aggregated', 1]], 10.0)
    """
    return solve_plan(*_inputs(scenario, settings, candidates, accelerators), costed, proof)


def _inputs(scenario: Scenario | dict[str, Any], settings: PlanSettings | None, candidates: list[Candidate] | None,
            accelerators: list[str] | None) -> tuple[Scenario, PlanSettings, list[Candidate], list[tuple[str, str]]]:
    """:func:`plan`'s arguments as :func:`solve_plan` takes them: the scenario, the settings, the candidates in
    their hosting variants and what was left out.
    """
    s = as_scenario(scenario)
    excluded: list[tuple[str, str]] = []
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    check_candidate_count(len(candidates))
    cands, more = hosting_variants(candidates, s)
    return s, settings or PlanSettings(), cands, excluded + more


def plan_stages(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                candidates: list[Candidate] | None = None, accelerators: list[str] | None = None) -> Staged:
    """:func:`plan` up to its proof: ``plan_stages(...).result()`` is the plan ``plan(..., costed=False,
    proof=False)`` returns, and :func:`prove_plan` of it the plan ``plan(..., costed=False)`` returns, by the same
    steps (``plan`` runs these two). The Plan page draws the first and then the second.
    """
    s, chosen, cands, excluded = _inputs(scenario, settings, candidates, accelerators)
    if chosen.carbon_cap_tco2e_per_year is not None:  # the cap's search proves its plans itself: run again
        return Staged(s, chosen, cands, excluded, capped=solve_under_cap(s, chosen, cands, excluded, False, False))
    return _stages(s, chosen, cands, excluded)


def plan_problem(scenario: Scenario | dict[str, Any], settings: PlanSettings | None = None,
                 candidates: list[Candidate] | None = None, accelerators: list[str] | None = None) -> Staged:
    """:func:`plan_stages` before its solve: the inputs, the rules that can bind and the problem ``pb`` the stages
    solve (``found`` None; ``pb`` None and ``done`` set when the pre-check refused the plan), for a caller that
    reads the models of the problem (:func:`~economics.studies.planner.build.build_model`) and not the stages' plan.
    Raises ValueError under a carbon cap (its search builds problems of its own).
    """
    s, chosen, cands, excluded = _inputs(scenario, settings, candidates, accelerators)
    if chosen.carbon_cap_tco2e_per_year is not None:
        raise ValueError("a carbon cap's search builds problems of its own: no one problem to return")
    return _problem(s, chosen, cands, excluded)


def prove_plan(staged: Staged) -> PlanResult:
    """The plan :func:`plan` returns (``costed=False``) from its stages (:func:`plan_stages`): the stages' plan
    proven on the whole MILP when :attr:`Staged.proves`, else the stages' plan itself.
    """
    if staged.capped is not None:
        return solve_under_cap(staged.s, staged.settings, staged.cands, staged.excluded, False, True)
    return _proved(staged)


def costs_of_settings(summary: dict[str, Any], scenario: Scenario | dict[str, Any], settings: PlanSettings,
                      candidates: list[Candidate] | None = None, accelerators: list[str] | None = None,
                      staged: Staged | None = None, plans: SettingPlans | None = None) -> pd.DataFrame:
    """What each operations setting costs (:func:`setting_costs`) for a plan made by :func:`plan` with
    ``costed=False`` from the same inputs (its ``summary``): the Plan page draws the plan first and this after.
    ``staged``: the plan's stages (:func:`plan_stages` of the same inputs), whose candidates, workload and pools are
    used rather than made again (the same figures either way); ``plans``: with it, the plans without each setting
    made already (:func:`settings_plans` of it: the Plan page makes them beside the proof).
    """
    if staged is not None and staged.prepared is not None:
        return setting_costs(summary, staged.s, staged.settings, staged.cands, staged.excluded, staged.active,
                             staged.prepared, plans)
    s = as_scenario(scenario)
    excluded: list[tuple[str, str]] = []
    if candidates is None:
        candidates, excluded = catalog_candidates(s, accelerators)
    cands, more = hosting_variants(candidates, s)
    if settings.carbon_cap_tco2e_per_year is None:
        ready = _prepare(s, settings, cands, excluded + more)
        active = rules_active(settings, ready.pools, ready.cands)
        return setting_costs(summary, s, settings, ready.cands, excluded + more, active, ready)
    cands = tier_variants(cands, s, settings)
    _, growth = objective_factors(s, settings)
    pools, _ = build_pools(cands, s, settings, workload(s, settings, growth))
    return setting_costs(summary, s, settings, cands, excluded + more, rules_active(settings, pools, cands))


def solve_plan(s: Scenario, settings: PlanSettings, cands: list[Candidate],
               excluded: list[tuple[str, str]], costed: bool = True, proof: bool = True) -> PlanResult:
    """:func:`plan` for hosting variants already made; ``costed``: with what each operations setting costs
    (:func:`setting_costs`, one more plan per setting that can change the answer); ``proof``: as :func:`plan`'s. A
    carbon cap is met by :func:`solve_under_cap`.
    """
    if settings.carbon_cap_tco2e_per_year is not None:
        return solve_under_cap(s, settings, cands, excluded, costed, proof)
    return _solve_plan(s, settings, cands, excluded, costed, proof)


CAP_STEPS = 10
"""Halvings of the carbon price that meets a cap (after doubling up to it): the price found is within
1/2^10 of the least that does, a dozen plans in all."""
MAX_CARBON_USD_PER_TONNE = 1e5
"""The dearest carbon price tried for a cap (the scenario field's bound): a cap no plan meets at it is refused."""


def solve_under_cap(s: Scenario, settings: PlanSettings, cands: list[Candidate], excluded: list[tuple[str, str]],
                    costed: bool = True, proof: bool = True) -> PlanResult:
    """The plan under ``carbon_cap_tco2e_per_year``: the cheapest plan when it is under the cap, else the plan made
    with the least extra carbon price (found by halving) that brings it under. That extra price is the cap's shadow
    price; the costs shown are at the scenario's own carbon price (the plan's emissions at the extra price taken off
    again, as every carbon cost is the price times the emissions). The search's plans keep stage 1's bound; the
    plans returned are proven as ``proof`` says.
    """
    cap = float(settings.carbon_cap_tco2e_per_year or 0.0)
    free = replace(settings, carbon_cap_tco2e_per_year=None)
    price = float(s.carbon_usd_per_tonne)

    def at(extra: float, with_costs: bool = False, proven: bool = False) -> PlanResult:
        return _solve_plan(s.model_copy(update={"carbon_usd_per_tonne": price + extra}), free, cands, excluded,
                           with_costs, proven)

    first = at(0.0, costed, proof)
    if first.feasible and first.summary.get("tco2e_per_year") is None:
        return infeasible_result("carbon_cap_tco2e_per_year: a cap needs the grid's intensity to count the plan's "
                                 "emissions; give grid_region, grid_carbon_g_per_kwh or grid_carbon_by_hour",
                                 first.candidates, workload(s, settings), s)
    if not first.feasible or float(first.summary["tco2e_per_year"]) <= cap:
        if first.feasible:
            first.notes.append(f"carbon cap: {cap:,.6g} tCO2e a year, not binding (the plan emits "
                               f"{first.summary['tco2e_per_year']:,.6g})")
        return first
    lo, hi = 0.0, max(1.0, price)
    at_hi = at(hi)
    while _tonnes(at_hi) > cap:
        if hi >= MAX_CARBON_USD_PER_TONNE:
            return infeasible_result(
                f"carbon_cap_tco2e_per_year: no plan emits under {cap:,.6g} tCO2e a year; at a carbon price "
                f"{MAX_CARBON_USD_PER_TONNE:,.0f} USD/t above the scenario's the cheapest still emits "
                f"{_tonnes(at_hi):,.6g}", first.candidates, workload(s, settings), s)
        lo, hi = hi, min(MAX_CARBON_USD_PER_TONNE, hi * 4.0)
        at_hi = at(hi)
    for _ in range(CAP_STEPS):
        mid = (lo + hi) / 2.0
        at_mid = at(mid)
        if _tonnes(at_mid) <= cap:
            hi, at_hi = mid, at_mid
        else:
            lo = mid
    # the plan at the price found is solved again to cost its operations settings or to prove it; a proof's cheaper
    # plan may emit more: then the search's plan (the cap is a limit, the proof only a better plan within it)
    final = at(hi, costed, proof) if costed or proof else at_hi
    if _tonnes(final) > cap:
        final = at(hi, True) if costed else at_hi
    return _at_own_price(final, hi, cap)


def _tonnes(result: PlanResult) -> float:
    """A plan's tCO2e a year; infinite for no plan."""
    return float(result.summary.get("tco2e_per_year") or math.inf) if result.feasible else math.inf


def _at_own_price(result: PlanResult, extra: float, cap: float) -> PlanResult:
    """A plan made at ``extra`` USD/t more than the scenario's carbon price, its costs shown at the scenario's."""
    off = extra / KG_PER_TONNE
    result.plan["cost_usd_per_day"] = result.plan["cost_usd_per_day"] - off * result.plan["kgco2e_per_day"]
    summary = result.summary
    summary["cost_usd_per_day"] = float(result.plan["cost_usd_per_day"].sum()) + float(
        summary.get("kv_remote_usd_per_day", 0.0))  # workload=sessions: the remote KV store's line
    summary["carbon_usd_per_day"] = float(summary["carbon_usd_per_day"]) - off * float(summary["kgco2e_per_day"])
    tokens = float(summary["tokens_per_day"])
    summary["cost_usd_per_m_tokens"] = cost_per_m_tokens(summary["cost_usd_per_day"], tokens)
    summary["carbon_cap_usd_per_tonne"] = extra
    if "sessions_per_day" in summary:
        summary["cost_usd_per_session"] = per_session_cost(summary)
    result.notes.append(f"carbon cap: {cap:,.6g} tCO2e a year binds; the plan is the cheapest with carbon priced "
                        f"{extra:,.2f} USD/t above the scenario's (the cap's shadow price; it emits "
                        f"{summary['tco2e_per_year']:,.6g}). Its costs are at the scenario's own carbon price; the "
                        "objective and what the operations settings cost are at the shadow price")
    return result


def _solve_plan(s: Scenario, settings: PlanSettings, cands: list[Candidate],
                excluded: list[tuple[str, str]], costed: bool = True, proof: bool = True) -> PlanResult:
    """:func:`solve_plan` without a carbon cap: its stages (:func:`_stages`), its proof (:func:`_proved`) and what
    each operations setting costs (beside the proof when both run: :func:`_proved_and_costed`).
    """
    staged = _stages(s, settings, cands, excluded)
    if costed and proof and staged.proves:
        return _proved_and_costed(staged)
    result = _proved(staged) if proof else staged.result()
    if costed and result.feasible:
        result.setting_costs = _costs(staged, result.summary)
        result.constraints = limits_with_costs(result.constraints, result.setting_costs)
    return result


def settings_plans(staged: Staged) -> SettingPlans:
    """The plans without each operations setting (:func:`plans_without`) from the stages' inputs (``staged``, or
    its :meth:`Staged.inputs`): what :func:`setting_costs` compares a plan of them with. They read nothing of the
    stages' plan or its proof, so they can be made beside the proof; inside
    :func:`~economics.studies.planner.milp.cancellable` they stop when no longer wanted (raising ``Cancelled``).
    """
    return plans_without(staged.s, staged.settings, staged.cands, staged.excluded, staged.active, staged.prepared)


def _costs(staged: Staged, summary: dict[str, Any], plans: SettingPlans | None = None) -> pd.DataFrame:
    """:func:`setting_costs` of a plan of ``staged`` (its ``summary``) from the stages' inputs (``plans``: the
    plans without each setting made already, :func:`plans_without`).
    """
    return setting_costs(summary, staged.s, staged.settings, staged.cands, staged.excluded, staged.active,
                         staged.prepared, plans)


def _proved_and_costed(staged: Staged) -> PlanResult:
    """The stages' plan proven (:func:`_proved`) with what each operations setting costs (:func:`setting_costs`):
    the plans without each setting (:func:`plans_without`, which read nothing of the plan) are solved on a second
    thread while HiGHS proves the plan, and the table is made once, against the proven plan. The same result as one
    after the other: HiGHS lets go of the GIL while it solves, so on two cores a fresh ``plan`` waits for the longer
    of the two rather than for both (docs/speed.md, "Planner speed").
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="setting-costs") as background:
        early = background.submit(settings_plans, staged)
        result = _proved(staged)
        plans = early.result()  # raises what the settings' plans raised
    if not result.feasible:
        return result
    table = _costs(staged, result.summary, plans)
    result.setting_costs = table
    result.constraints = limits_with_costs(result.constraints, table)
    return result


@dataclass
class Staged:
    """A plan of the stages, before its proof (:func:`plan_stages`): the inputs (``cands`` in their tier variants,
    ``excluded`` as given), the rules that can bind (``active``), the candidates ``table``, the problem ``pb`` and
    the stages' plan ``found`` (``None``: no solve, ``done`` says why), or, under a carbon cap, the plan of the
    cap's search (``capped``).
    """

    s: Scenario
    settings: PlanSettings
    cands: list[Candidate]
    excluded: list[tuple[str, str]]
    active: dict[str, bool] = field(default_factory=dict)
    table: pd.DataFrame | None = None
    pb: Problem | None = None
    found: Stages | None = None
    done: PlanResult | None = None
    capped: PlanResult | None = None
    prepared: Prepared | None = None
    """What the stages started from that no operations setting changes (None under a carbon cap)."""
    _result: PlanResult | None = field(default=None, repr=False)

    @property
    def proves(self) -> bool:
        """Whether :func:`prove_plan` runs HiGHS on the whole MILP (under a cap: the cap's search again)."""
        return self.capped is not None or (self.found is not None and self.found.proves)

    def result(self) -> PlanResult:
        """The stages' plan (made once; ``plan(..., costed=False, proof=False)``)."""
        if self._result is None:
            self._result = self.capped or self.done or _result_of(self, self._found())
        return self._result

    def inputs(self) -> Staged:
        """The stages' inputs without their models and plans: what :func:`costs_of_settings` reads of them (the
        Plan page keeps this for a state once its proof has let the models go).
        """
        return replace(self, pb=None, found=None, done=None, _result=None)

    def _found(self) -> Stages:
        assert self.found is not None
        return self.found


@dataclass
class Prepared:
    """What a plan's stages start from that no operations setting changes (:func:`_prepare`): the candidates in
    their tier variants, the workload (no rental block), the pools and the roles left out, the candidates table,
    and each candidate's costs per system (made on first use: a plan refused by the pre-check needs none). The plan
    solved again without a setting (:func:`setting_costs`) starts from the plan's.
    """

    cands: list[Candidate]
    wl: Workload
    pools: list[Pool]
    role_excluded: list[tuple[str, str]]
    table: pd.DataFrame
    s: Scenario
    _costs: list[Costs] | None = field(default=None, repr=False)

    def costs(self) -> list[Costs]:
        """Each candidate's costs per system (:func:`candidate_costs` over the day's prices), made once."""
        if self._costs is None:
            self._costs = [candidate_costs(c, self.s, self.wl.day) for c in self.cands]
        return self._costs


def _prepare(s: Scenario, settings: PlanSettings, cands: list[Candidate],
             excluded: list[tuple[str, str]]) -> Prepared:
    """The tier variants, the workload, the pools and the candidates table of a plan. Made from the settings with
    every operations setting off (:data:`RULE_OFF`), so the plan and each plan without one of them start from the
    same by construction (none of these reads them: the plans are the same as when each made its own).
    """
    free = replace(settings, **RULE_OFF)
    cands = tier_variants(cands, s, free)  # rented options once per tier weighed (once: kept when made again)
    _, growth = objective_factors(s, free)
    wl = workload(s, free, growth)
    pools, role_excluded = build_pools(cands, s, free, wl)
    return Prepared(cands, wl, pools, role_excluded, candidate_table(cands, pools, excluded + role_excluded, s), s)


def _stages(s: Scenario, settings: PlanSettings, cands: list[Candidate],
            excluded: list[tuple[str, str]], ready: Prepared | None = None) -> Staged:
    """The plan of the stages (no carbon cap): :func:`_problem`, then
    :func:`~economics.studies.planner.solve.solve_stages` of the problem when the pre-check let one be made.
    """
    staged = _problem(s, settings, cands, excluded, ready)
    if staged.pb is not None:
        staged.found = solve_stages(staged.pb)
    return staged


def _problem(s: Scenario, settings: PlanSettings, cands: list[Candidate],
             excluded: list[tuple[str, str]], ready: Prepared | None = None) -> Staged:
    """The stages before their solve (no carbon cap): the candidates in their tier variants, the pools (``ready``:
    made already, by :func:`_prepare`), the pre-check (``done`` when it refuses the plan), then the problem ``pb``.
    """
    ready = ready or _prepare(s, settings, cands, excluded)
    wl, pools = ready.wl, ready.pools
    active = rules_active(settings, pools, ready.cands)  # of every pool (the plan's model may narrow them)
    if active["min_rental_hours"]:
        wl = replace(wl, block_hours=float(settings.min_rental_hours))
    # a plan made again makes its role exclusions again: the staged plan keeps the excluded as given
    staged = Staged(s, settings, ready.cands, excluded, active, prepared=ready)
    staged.table = ready.table
    reason = precheck(pools, ready.cands, wl, s, settings, excluded + ready.role_excluded)
    if reason:
        staged.done = infeasible_result(reason, staged.table, wl, s)
        return staged
    staged.pb = Problem(s, settings, wl, ready.cands, pools, ready.costs())
    return staged


def _proved(staged: Staged) -> PlanResult:
    """The staged plan proven (:func:`~economics.studies.planner.solve.prove_stages`), or itself when no proof
    runs.
    """
    if not staged.proves or staged.pb is None:
        return staged.result()
    return _result_of(staged, prove_stages(staged.pb, staged._found()))


def _result_of(staged: Staged, found: Stages) -> PlanResult:
    """A plan of the stages (proven or not) as a :class:`PlanResult`: the plan, or why there is none."""
    assert staged.pb is not None and staged.table is not None
    s, table, given = staged.s, staged.table, staged.excluded
    m, res, rho, pb = found.best
    notes = list(found.notes)  # each result its own (a sessions plan adds its note)
    wl = pb.wl
    if res.x is None:
        if res.status != 2:  # not proven infeasible: the solver stopped (a time limit) or failed
            why = (f"no plan found within the {TIME_LIMIT_S:g} s time limit of a solve; fewer candidates or hour "
                   "types make the problem smaller" if "Time limit" in res.message else f"solver: {res.message}")
            return infeasible_result(why, table, wl, s)
        needs, fixes = _relaxations(pb, rho, given)
        # each limit that alone would make a plan, with the least of it; else the limits stretched together
        why = "; or ".join(needs) if needs else diagnose(pb, rho)
        return partial_plan(why, fixes, pb, rho, table)
    result = plan_result(m, res, pb, table, notes)
    if float(result.plan["accelerators"].sum()) > MAX_COUNT:  # the pre-check's bound is a floor: the plan says
        return infeasible_result(f"the plan needs {result.plan['accelerators'].sum():,.0f} accelerators, more "
                                 f"than the {MAX_COUNT:,.0f} a fleet may hold; lower the demand", table, wl, s)
    return result


def setting_costs(summary: dict[str, Any], s: Scenario, settings: PlanSettings, cands: list[Candidate],
                  excluded: list[tuple[str, str]], active: dict[str, bool], ready: Prepared | None = None,
                  plans: SettingPlans | None = None) -> pd.DataFrame:
    """What each operations setting costs: the plan solved again with that one setting off (the others kept), and
    the difference of the cost per day. A setting that cannot change the plan (a pool limit above the pools there
    are, a rental block with nothing to rent) costs nothing and is not solved again. Taking a setting off only allows
    more plans, and the plan with it is one of them, so the cheapest plan without it costs at most as much: when the
    solve without it stops at a dearer plan (the two-stage search's gap), the plan with it is the cheapest found
    without it too, and that is what the row says. ``ready``: what the plan's stages started from
    (:class:`Prepared`; made here when not given), where each plan without a setting starts too. ``plans``: those
    plans made already (:func:`plans_without` of the same inputs; they do not read the plan, only the rows do).
    """
    rows = []
    if plans is None:
        plans = plans_without(s, settings, cands, excluded, active, ready)
    cost = float(summary["cost_usd_per_day"])
    for name in RULE_OFF:
        value, spec = getattr(settings, name), PLAN_FIELDS[name]
        row = {"setting": name, "value": value, "unit": spec.unit, "cost_usd_per_day": cost}
        if not active[name]:
            rows.append({**row, "without_usd_per_day": cost, "costs_usd_per_day": 0.0,
                         "pools_without": summary["distinct_pools"],
                         "meaning": "cannot change this plan (nothing it limits)"})
            continue
        found = plans[name]
        if isinstance(found, str):  # cannot happen (a setting off only allows more), said rather than hidden
            rows.append({**row, "without_usd_per_day": None, "costs_usd_per_day": None, "pools_without": None,
                         "meaning": f"the plan without it could not be solved: {found}"})
            continue
        without, pools = found
        if without > cost:  # a relaxation cannot be dearer: the plan with the setting is a plan without it
            without, pools = cost, summary["distinct_pools"]
        extra = cost - without
        rows.append({**row, "without_usd_per_day": without, "costs_usd_per_day": extra,
                     "pools_without": pools,
                     "meaning": (f"adds {extra:,.0f} USD a day ({extra / without:.1%}): without it the plan costs "
                                 f"{without:,.0f} USD a day with {pools} pools"
                                 if extra > 0.5e-3 * max(without, 1.0) else
                                 f"costs nothing: without it the plan is no cheaper ({without:,.0f} USD a day)")})
    frame = pd.DataFrame(rows, columns=list(SETTING_COST_COLUMNS))
    frame["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # 3 pools, 8.0 h: each as it was set
    return frame


def plans_without(s: Scenario, settings: PlanSettings, cands: list[Candidate], excluded: list[tuple[str, str]],
                  active: dict[str, bool], ready: Prepared | None = None) -> SettingPlans:
    """For each operations setting that can change the plan (``active``), the plan solved again with it off
    (:func:`_plan_without`): what :func:`setting_costs` compares the plan with. None of them reads the plan itself,
    so they may be made before it is proven (``ready``: as :func:`setting_costs`'s).
    """
    if ready is None and settings.carbon_cap_tco2e_per_year is None:
        ready = _prepare(s, settings, cands, excluded)
    return {name: _plan_without(s, replace(settings, **{name: off}), cands, excluded, ready)
            for name, off in RULE_OFF.items() if active[name]}


def _plan_without(s: Scenario, settings: PlanSettings, cands: list[Candidate], excluded: list[tuple[str, str]],
                  ready: Prepared | None) -> tuple[float, int] | str:
    """The cost per day and distinct pools of the plan ``solve_plan(..., costed=False, proof=False)`` makes of
    these inputs, or why there is none. Without a carbon cap from ``ready`` (the plan's :class:`Prepared`), read
    off the stages' solution by :func:`~economics.studies.planner.report.plan_cost` (the whole result, with its
    hours, limits and shadow prices, is made only when there is no plan, for its reason).
    """
    if settings.carbon_cap_tco2e_per_year is not None or ready is None:
        other = solve_plan(s, settings, cands, excluded, costed=False, proof=False)
    else:
        staged = _stages(s, settings, cands, excluded, ready)
        if staged.found is not None and staged.found.best[1].x is not None:
            m, res, _, pb = staged.found.best
            cost, pools, accelerators = plan_cost(m, res, pb)
            if accelerators <= MAX_COUNT:  # else the result says the fleet is too large (:func:`_result_of`)
                return cost, pools
        other = staged.result()
    if not other.feasible:
        return other.reason
    return float(other.summary["cost_usd_per_day"]), int(other.summary["distinct_pools"])


def limits_with_costs(constraints: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """The limits table with its line for the distinct pools saying what that limit costs, from the plan solved
    without it (an LP's dual says nothing about a count of pools).
    """
    table = constraints.copy()
    at = table.index[table["constraint"] == Row.DISTINCT_POOLS]
    row = costs.loc[costs["setting"] == "max_pools"]
    if len(at) and len(row) and bool(table.loc[at[0], "binding"]):
        table.loc[at[0], "meaning"] = f"binding: {row['meaning'].iloc[0]}"
    return table


def _relaxations(pb: Problem, rho: dict[int, float], excluded: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """For each limit on its own (the others kept), the least of it that makes the plan feasible: the model with
    only that limit allowed to stretch, at a price that dwarfs any plan, so that it stretches as little as it can;
    and, when rent is off, whether allowing rent alone makes a plan. Returns (the reason's sentences, one per limit
    that alone suffices; every limit's finding, for the summary).
    """
    s, settings, cands = pb.s, pb.settings, pb.cands
    out, needs = [], []
    for group, (unit, form, value) in LIMIT_WORDS.items():
        limit = value(s, settings)
        if limit is None:
            continue
        stretch = frozenset({group})
        m, _, _, res = solve_built(pb, rho, elastic=stretch)
        if res.x is None:
            out.append(f"{group}: no amount is enough on its own (another limit binds too)")
            continue
        over = max(float(res.x[c]) for c in m.slack_col.get(group, [])) if m.slack_col.get(group) else 0.0
        out.append(f"{group}: at least {form.format(limit + over)} {unit} ({form.format(limit)} {unit} now)")
        if over > 1e-9:
            needs.append(need_sentence(group, over, s, settings))
    if not settings.allow_rent:
        rented = solve_plan(s, replace(settings, allow_rent=True), cands, excluded, costed=False, proof=False)
        out.append(f"rent: allowing rented systems gives a plan at {rented.summary['cost_usd_per_day']:,.0f} USD a "
                   "day" if rented.feasible else "rent: allowing rented systems is not enough on its own")
    active = rules_active(settings, pb.pools, cands)
    for name, off in RULE_OFF.items():
        if not active[name]:
            continue
        other = solve_plan(s, replace(settings, **{name: off}), cands, excluded, costed=False, proof=False)
        said = rule_text(name, getattr(settings, name))
        if other.feasible:
            found = (f"{name}: without it ({said}) a plan exists at {other.summary['cost_usd_per_day']:,.0f} USD a "
                     f"day with {other.summary['distinct_pools']} pools")
            out.append(found)
            needs.append(found)
        else:
            out.append(f"{name}: lifting it ({said}) is not enough on its own")
    return needs, out
